//! strata: an embeddable HBase-style wide-column store.
//!
//! Tables hold rows of cells addressed by `(row, family:qualifier,
//! timestamp)`. Each table is cut into regions by row-key range; inside a
//! region each column family is a store with its own memstore, and every
//! mutation goes through one shared write-ahead log with group commit. All
//! file I/O goes through io_uring, with a `pread`/`pwrite` fallback.
//!
//! ```
//! use strata::{Db, FamilyDescriptor, Get, Put, Scan, TableDescriptor};
//!
//! # fn main() -> strata::Result<()> {
//! let dir = tempfile::tempdir().unwrap();
//! let db = Db::open_default(dir.path())?;
//! let scores = db.create_table(
//!     TableDescriptor::new("scores")
//!         .family(FamilyDescriptor::new("grade"))
//!         .family(FamilyDescriptor::new("course").max_versions(3)),
//! )?;
//! scores.put(&Put::new("Tom").add("grade", "", "1").add("course", "math", "87"))?;
//! let tom = scores.get(&Get::new("Tom"))?;
//! assert_eq!(tom.value("course", "math"), Some(&b"87"[..]));
//! for row in scores.scan(&Scan::new().family("course"))? {
//!     let row = row?;
//!     println!("{} has {} course cells", String::from_utf8_lossy(&row.row), row.cells.len());
//! }
//! db.close()?;
//! # Ok(())
//! # }
//! ```
//!
//! The rules reads follow (versions, deletes, TTL, time ranges) are in
//! `docs/semantics.md`; the bytes on disk in `docs/format.md`.
//!
//! # Layers
//!
//! The engine's modules form layers that point one way: a module imports
//! its own layer and the layers below it, never one above, and modules of
//! one layer form no import cycle (`engine/tests/layers.rs` checks both;
//! `docs/architecture.md` draws the data flows through them). Top first:
//!
//! | layer | modules | job |
//! |---|---|---|
//! | facade | `inspect`, `internals`, `fuzzing` | read-only views for tools, benchmarks and fuzz targets |
//! | db | `db` | the database handle: open, catalog operations, reports, close |
//! | table | `table` | the table handle: routing rows to regions, every data operation |
//! | operations | `read`, `write`, `maintenance` | the read path (salted scans too); the write path; flush, split, merge, bulk load ingest, stalls and the supervisor of background work |
//! | regions | `catalog`, `compaction`, `region` | the tables and their states; compaction picking and jobs; a key range and its scheduling state |
//! | schema | `schema` | what a descriptor means for reads and jobs: family rules and plans |
//! | store | `store` | one family of one region: its versions and their transitions, the output file writer, and the bulk writer |
//! | core | `core` | the services every job shares, built once at open |
//! | parts | `iter`, `memstore`, `hfile` | cell sources and their merge (read by row: rows lent from cached blocks, block runs); the memstore; HFiles and their block cache |
//! | services | `wal`, `manifest`, `mvcc`, `io` | the log, the catalog's durable record, sequences and the read point, I/O |
//! | foundation | `cell`, `error`, `codec`, `clock`, `options`, `ops`, `keys`, `prefetch`, `read_snapshot`, `watermark`, `names`, `gate`, `file_meta`, `metrics` | values, errors and helpers every layer may use |
#![warn(missing_docs)]

// facade
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod inspect;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals;
// db
mod db;
// table
mod table;
// operations
mod maintenance;
mod read;
mod write;
// regions
mod catalog;
mod compaction;
mod region;
// schema
mod schema;
// store
mod store;
// core
mod core;
// parts
mod hfile;
mod iter;
mod memstore;
// services
mod io;
mod manifest;
mod mvcc;
mod wal;
// foundation
mod cell;
mod clock;
mod codec;
mod error;
mod file_meta;
mod gate;
pub mod keys;
mod metrics;
mod names;
mod ops;
mod options;
mod prefetch;
mod read_snapshot;
mod split_block;
mod watermark;

pub use cell::{
    Cell, CellKind, DEFAULT_MAX_VALUE_BYTES, MAX_FAMILY_NAME_BYTES, MAX_QUALIFIER_BYTES,
    MAX_ROW_KEY_BYTES, MAX_TIMESTAMP, RowResult, TimeRange,
};
pub use clock::{Clock, ManualClock, SystemClock};
pub use db::{
    BackgroundWork, CheckpointReport, Db, DbMetrics, DbStats, RecoveryReport, SnapshotInfo,
    SnapshotOptions, TableMetrics, VerifyReport,
};
pub use error::{CellKey, Error, Result};
pub use hfile::cache::CacheStats;
pub use io::budget::IoBudgetStats;
#[cfg(feature = "fault-injection")]
pub use io::fault;
pub use io::{Backend as IoBackend, IO_ENV_VAR, io_fallback_reason};
pub use maintenance::ingest::{BulkLoadOptions, BulkLoadReport, BulkLoadStep, StepObserver};
pub use metrics::{LatencyBucket, LatencySnapshot, SAMPLE_PERIOD as LATENCY_SAMPLE_PERIOD};
pub use ops::{
    Append, BatchOp, BatchResult, CheckAction, CheckAndMutate, CheckAndMutateBuilder,
    CheckAndMutateResult, ColumnSelection, CompareOp, Condition, Delete, Get, Increment, Mutation,
    Put, RowMutations, Scan,
};
pub use options::{
    BloomType, Compression, DEFAULT_BLOCK_SIZE_BYTES, DEFAULT_MAJOR_COMPACTION_PERIOD,
    DEFAULT_MAX_REGION_SIZE_BYTES, DEFAULT_MEMSTORE_FLUSH_SIZE_BYTES, DEFAULT_NAMESPACE, DbOptions,
    Durability, FamilyDescriptor, GZ_LEVEL, IoMode, KeepDeletedCells, MAX_PRESPLIT_REGIONS,
    MIN_BACKGROUND_WRITE_BYTES_PER_SEC, PreSplit, SYSTEM_NAMESPACE, TableDescriptor, WalRecovery,
};
pub use read::Scanner;
pub use read::cursor::{CellView, RowView, ScanCursor};
pub use read::parallel::ParallelScan;
pub use read::salted::SaltedScan;
pub use read_snapshot::ReadSnapshot;
pub use region::RegionActivity;
pub use store::bulk::{BULK_FILE_SUFFIX, BulkFile, BulkFiles, BulkWriter};
pub use table::ScanOrder;
pub use table::{RegionInfo, RowReader, Table};
pub use wal::WalStats;

/// The filter model, language, kernels and plans (crate `strata-filters`).
pub use strata_filters as filters;
pub use strata_filters::Filter;
