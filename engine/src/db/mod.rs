//! The database handle: opening ([`open`]), the catalog operations
//! ([`admin`]), what it reports ([`report`]), and closing.
//!
//! Directory layout (`docs/format.md`):
//! ```text
//! DIR/LOCK                   flock'ed while open: one writer, or readers
//! DIR/CURRENT                names the live manifest
//! DIR/MANIFEST-NNNNNN        tables, families, regions, files, id high-water marks
//! DIR/wal/NNNNNNNNNNNN.wal   WAL segments
//! DIR/data/NNNNNNNNNNNN.hfile HFiles
//! ```
//!
//! A database is the services core, the catalog of its tables and the
//! supervisor of their maintenance. `Db` and [`Table`] handles share them;
//! the database closes at [`Db::close`], or when the last handle is dropped
//! (the supervisor's drop stops the workers, the services' drop syncs the
//! WAL).

mod admin;
mod checkpoint;
mod open;
mod report;
mod snapshot;

use std::path::Path;
use std::sync::Arc;

pub use checkpoint::CheckpointReport;
pub use report::{BackgroundWork, DbMetrics, DbStats, RecoveryReport, TableMetrics, VerifyReport};
pub use snapshot::{SnapshotInfo, SnapshotOptions};

use crate::catalog::{Catalog, TableInner};
use crate::core::Services;
use crate::error::Result;
use crate::maintenance::Supervisor;
use crate::table::Table;

/// What every `Db` handle shares.
pub(crate) struct DbInner {
    services: Arc<Services>,
    catalog: Arc<Catalog>,
    supervisor: Arc<Supervisor>,
    recovery: RecoveryReport,
}

impl DbInner {
    /// A handle to `table`.
    fn handle(&self, table: Arc<TableInner>) -> Table {
        Table {
            services: self.services.clone(),
            supervisor: self.supervisor.clone(),
            inner: table,
        }
    }
}

/// An open database. Cheap to clone; the database closes when [`Db::close`]
/// is called or the last handle (including [`Table`] handles) is dropped.
#[derive(Clone)]
pub struct Db {
    inner: Arc<DbInner>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("dir", &self.inner.services.dir())
            .finish()
    }
}

impl Db {
    /// Opens `dir` with default options.
    pub fn open_default(dir: impl AsRef<Path>) -> Result<Db> {
        Db::open(dir, crate::options::DbOptions::default())
    }

    fn check_open(&self) -> Result<()> {
        self.inner.services.check_open()
    }

    /// What replay found when this database was opened.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.inner.recovery
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        self.inner.services.dir()
    }

    /// Makes every write so far durable, whatever its durability asked for
    /// (except `SkipWal` writes, which never reach the WAL).
    pub fn sync_wal(&self) -> Result<()> {
        self.check_open()?;
        self.inner.services.wal()?.sync_all()
    }

    /// Takes a read snapshot: the current read point, held until the
    /// returned handle is dropped. Gets, `get_many` and scans given it
    /// ([`crate::Get::snapshot`], [`crate::Scan::snapshot`]) on any table of
    /// this database read exactly the data visible now, while writes,
    /// flushes, compactions and splits go on (RocksDB's `GetSnapshot`
    /// contract). Compaction keeps every version a live snapshot can read,
    /// so a snapshot held for long keeps overwritten and deleted data on
    /// disk. Not an HBase table snapshot: it lives in memory and ends with
    /// the database.
    pub fn read_snapshot(&self) -> Result<crate::ReadSnapshot> {
        self.check_open()?;
        let services = &self.inner.services;
        Ok(services.snapshots.take(|| services.mvcc.read_point()))
    }

    /// Flushes memstores (unless `flush_on_close` is off), syncs the WAL,
    /// stops background work and releases the directory. Every handle of
    /// this database fails with [`crate::Error::Closed`] afterwards.
    pub fn close(&self) -> Result<()> {
        let services = &self.inner.services;
        if services.is_closed() {
            return Ok(());
        }
        let flushed = if services.options.flush_on_close && !services.options.read_only {
            self.inner.supervisor.wait_idle();
            self.flush()
        } else {
            Ok(())
        };
        services.mark_closed();
        self.inner.supervisor.shutdown();
        let synced = services.shutdown_wal();
        services.release_lock();
        flushed.and(synced)
    }
}
