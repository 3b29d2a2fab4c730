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
#![warn(missing_docs)]

mod catalog;
mod cell;
mod clock;
mod codec;
mod compaction;
mod core;
mod db;
mod error;
mod file_meta;
mod gate;
mod hfile;
pub mod inspect;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals;
mod io;
mod iter;
pub mod keys;
mod maintenance;
mod manifest;
mod memstore;
mod mvcc;
mod names;
mod ops;
mod options;
mod prefetch;
mod read;
mod region;
mod schema;
mod store;
mod table;
mod wal;
mod watermark;
mod write;

pub use cell::{
    Cell, CellKind, DEFAULT_MAX_VALUE_BYTES, MAX_FAMILY_NAME_BYTES, MAX_QUALIFIER_BYTES,
    MAX_ROW_KEY_BYTES, MAX_TIMESTAMP, RowResult, TimeRange,
};
pub use clock::{Clock, ManualClock, SystemClock};
pub use db::{Db, DbStats, RecoveryReport, VerifyReport};
pub use error::{Error, Result};
pub use hfile::cache::CacheStats;
pub use io::{Backend as IoBackend, IO_ENV_VAR};
pub use ops::{
    Append, BatchOp, BatchResult, CheckAction, CheckAndMutate, CheckAndMutateBuilder,
    CheckAndMutateResult, ColumnSelection, CompareOp, Condition, Delete, Get, Increment, Mutation,
    Put, RowMutations, Scan,
};
pub use options::{
    BloomType, Compression, DEFAULT_BLOCK_SIZE_BYTES, DEFAULT_MAX_REGION_SIZE_BYTES,
    DEFAULT_MEMSTORE_FLUSH_SIZE_BYTES, DbOptions, Durability, FamilyDescriptor, IoMode,
    MAX_PRESPLIT_REGIONS, PreSplit, TableDescriptor, WalRecovery,
};
pub use read::Scanner;
pub use table::{RegionInfo, Table};
pub use wal::WalStats;

/// The filter model, language, kernels and plans (crate `strata-filters`).
pub use strata_filters as filters;
pub use strata_filters::Filter;
