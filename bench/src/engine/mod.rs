//! The engines under test behind one interface.
//!
//! Each engine holds one table / column family / keyspace of plain
//! key-value records. The steps a workload calls (`load_finished`,
//! `settle`) are where an LSM's background work is made visible: every
//! engine flushes its memtables in `load_finished` and waits for flushes and
//! compactions to finish in `settle`.

mod strata;
pub use self::strata::StrataEngine;

#[cfg(feature = "peers")]
mod fjall;
#[cfg(feature = "peers")]
mod rocks;
#[cfg(feature = "peers")]
pub use self::{fjall::FjallEngine, rocks::RocksDbEngine};

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::error::{BenchError, Result};
use crate::pages::FilterQuery;
use crate::settings::{EngineKind, EngineSettings};

/// Entries and bytes (keys plus values) a scan returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanCount {
    /// Entries returned.
    pub entries: u64,
    /// Bytes of keys and values returned.
    pub bytes: u64,
}

/// Group-commit counters of a WAL, where the engine exposes them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WalCounters {
    /// Groups written.
    pub groups: u64,
    /// Frames (row mutations) written.
    pub frames: u64,
    /// Syncs performed.
    pub syncs: u64,
    /// Total time of the write+sync submissions that synced, microseconds.
    pub sync_micros: u64,
}

impl WalCounters {
    /// Counters accumulated since `earlier`.
    pub fn since(self, earlier: WalCounters) -> WalCounters {
        WalCounters {
            groups: self.groups.saturating_sub(earlier.groups),
            frames: self.frames.saturating_sub(earlier.frames),
            syncs: self.syncs.saturating_sub(earlier.syncs),
            sync_micros: self.sync_micros.saturating_sub(earlier.sync_micros),
        }
    }
}

/// Longest wait for an engine's background work to finish in `settle`.
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(600);
/// How often `settle` polls an engine for pending background work.
pub const SETTLE_POLL_INTERVAL: Duration = Duration::from_millis(50);

/// A bulk load in progress: records in key order written into the engine's
/// external file format, then ingested (strata's `BulkWriter` and
/// `Table::bulk_load`, RocksDB's `SstFileWriter` and
/// `ingest_external_file`, fjall's `Keyspace::start_ingestion`).
pub trait BulkLoader {
    /// Adds the next record (keys strictly ascending).
    fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()>;

    /// Finishes writing the files (synced); returns their bytes.
    fn finish_files(&mut self) -> Result<u64>;

    /// Makes the files part of the database.
    fn ingest(self: Box<Self>) -> Result<()>;
}

/// One engine, opened on one directory with one table of records.
pub trait Engine: Send + Sync {
    /// Starts a bulk load whose files go to `dir` (on the database's file
    /// system, so that they can be moved in).
    fn bulk_loader(&self, _dir: &Path) -> Result<Box<dyn BulkLoader + '_>> {
        Err(BenchError::Usage(
            "this engine has no bulk load of external files".into(),
        ))
    }

    /// Writes a record with the configured durability.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()>;

    /// Writes a record for an untimed load: WAL on (unless durability is
    /// `skip`) but never synced per write. `load_finished` makes it durable.
    fn put_for_load(&self, key: &[u8], value: &[u8]) -> Result<()>;

    /// Reads a record; the size of its value if present.
    fn get(&self, key: &[u8]) -> Result<Option<usize>>;

    /// Deletes a record (absent or not) with the configured durability.
    fn delete(&self, key: &[u8]) -> Result<()>;

    /// Reads a batch of records; how many were present.
    fn multi_get(&self, keys: &[Vec<u8>]) -> Result<u64>;

    /// How `multi_get` is carried out, for the report.
    fn multi_get_method(&self) -> &'static str;

    /// Reads up to `limit` records in key order from `start` (inclusive),
    /// stopping before `end` when given.
    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u64) -> Result<ScanCount>;

    /// Runs a filtered scan; counts the entries that match `query` and
    /// their bytes. strata evaluates the filter inside the engine; RocksDB
    /// and fjall iterate `query.key_range()` and apply `query.matches` in
    /// Rust, as their users do.
    fn filter_scan(&self, query: &FilterQuery) -> Result<ScanCount>;

    /// Splits the (empty) table at these keys before a load, for engines
    /// with regions (strata); the others have nothing to split.
    fn presplit(&self, _split_keys: &[Vec<u8>]) -> Result<()> {
        Ok(())
    }

    /// Called once the writes of a phase are done and timed with them:
    /// makes them durable and moves them out of memory the way the engine
    /// does at the end of a bulk load (flush of memtables).
    fn load_finished(&self) -> Result<()>;

    /// Waits (untimed) until background work triggered by earlier writes
    /// (flushes, compactions) has finished, so disk usage is settled.
    fn settle(&self) -> Result<()>;

    /// The WAL's group-commit counters, if the engine exposes them.
    fn wal_counters(&self) -> Option<WalCounters> {
        None
    }

    /// Engine counters worth reporting (cumulative since open), by name.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// The I/O back end the engine ended up with, where it has a choice.
    fn io_backend(&self) -> Option<&'static str> {
        None
    }

    /// Closes the engine, releasing its directory.
    fn close(self: Box<Self>) -> Result<()>;
}

/// Opens `kind` on an empty directory `dir` with `settings`.
pub fn open(kind: EngineKind, dir: &Path, settings: &EngineSettings) -> Result<Box<dyn Engine>> {
    match kind {
        EngineKind::Strata => Ok(Box::new(StrataEngine::open(dir, settings)?)),
        #[cfg(feature = "peers")]
        EngineKind::RocksDb => Ok(Box::new(RocksDbEngine::open(dir, settings)?)),
        #[cfg(feature = "peers")]
        EngineKind::Fjall => Ok(Box::new(FjallEngine::open(dir, settings)?)),
        #[cfg(not(feature = "peers"))]
        EngineKind::RocksDb | EngineKind::Fjall => Err(BenchError::Usage(format!(
            "engine '{}' needs a build with `--features peers`",
            kind.name()
        ))),
    }
}

/// Polls `busy` until it reports no pending work `IDLE_POLLS_REQUIRED`
/// times in a row (work is sometimes scheduled just after a flush ends), or
/// until `SETTLE_TIMEOUT`.
pub fn wait_until_idle(engine: &str, mut busy: impl FnMut() -> Result<bool>) -> Result<()> {
    const IDLE_POLLS_REQUIRED: u32 = 4;
    let start = std::time::Instant::now();
    let mut idle_polls = 0;
    while idle_polls < IDLE_POLLS_REQUIRED {
        if start.elapsed() > SETTLE_TIMEOUT {
            return Err(BenchError::Check(format!(
                "{engine} still had background work after {} s",
                SETTLE_TIMEOUT.as_secs()
            )));
        }
        if busy()? {
            idle_polls = 0;
        } else {
            idle_polls += 1;
        }
        std::thread::sleep(SETTLE_POLL_INTERVAL);
    }
    Ok(())
}
