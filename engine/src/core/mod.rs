//! The services core: everything a database's jobs share, built once at
//! open, and nothing above the store layer. Flush, compaction, split and the
//! write path take it as an argument; the table and database handles sit on
//! top of it.
//!
//! It holds the directory (and its lock), the options, the I/O back end and
//! the block cache, the manifest log with the id allocation it does, MVCC,
//! the WAL, the row locks, the memory budget of the memstores, the counters,
//! the closed flag, and the storage failure that stopped writes, if one did
//! (`docs/reliability.md`: after a failed WAL sync, a flush, compaction or
//! split that could not write, or a manifest edit that failed, the database
//! takes no more changes until it is reopened; reads go on).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::{Mutex, MutexGuard};

use crate::error::{Error, Result};
use crate::hfile::cache::BlockCache;
use crate::hfile::reader::HFileReader;
use crate::io::Io;
use crate::manifest::{Edit, Manifest};
use crate::metrics::Latencies;
use crate::mvcc::{Mvcc, RowLocks};
use crate::names::DATA_DIR;
use crate::options::DbOptions;
use crate::read_snapshot::LiveSnapshots;
use crate::wal::Wal;

/// Counters the engine's threads update, read by `Db::stats`.
#[derive(Default)]
pub(crate) struct Counters {
    /// Flushes completed since open.
    pub(crate) flushes: AtomicU64,
    /// Compactions completed since open.
    pub(crate) compactions: AtomicU64,
    /// Bytes of HFiles written by flushes and compactions, since open.
    pub(crate) bytes_flushed_or_compacted: AtomicU64,
    /// Microseconds writers spent stalled.
    pub(crate) stall_micros: AtomicU64,
    /// Region splits completed since open.
    pub(crate) splits: AtomicU64,
    /// Background jobs that failed since open.
    pub(crate) background_failures: AtomicU64,
    /// Bulk loads completed since open.
    pub(crate) bulk_loads: AtomicU64,
    /// Bytes of the files bulk loads installed, since open.
    pub(crate) bytes_bulk_loaded: AtomicU64,
    /// Region merges completed since open.
    pub(crate) merges: AtomicU64,
}

/// The services of one open database.
pub(crate) struct Services {
    dir: PathBuf,
    pub(crate) options: DbOptions,
    pub(crate) io: Io,
    pub(crate) cache: Arc<BlockCache>,
    pub(crate) mvcc: Mvcc,
    pub(crate) row_locks: RowLocks,
    /// The read points live read snapshots hold (compaction keeps what
    /// they can read).
    pub(crate) snapshots: Arc<LiveSnapshots>,
    /// Bytes of memory held by every memstore together (the memory budget
    /// `DbOptions::global_memstore_limit_bytes` bounds).
    pub(crate) memstore_bytes: AtomicU64,
    pub(crate) counters: Counters,
    /// Latency histograms of writes, gets and scans.
    pub(crate) latencies: Latencies,
    manifest: Mutex<Manifest>,
    /// `None` when the database is open read-only.
    wal: Option<Wal>,
    closed: AtomicBool,
    /// Set once a storage failure stopped every change ([`Services::stop_writes`]).
    writes_stopped: AtomicBool,
    /// The failure that stopped them (the first one).
    stop_cause: Mutex<Option<Error>>,
    /// The directory lock, held until close (`None` for a read-only open
    /// of a directory without a `LOCK` file).
    lock_file: Mutex<Option<File>>,
}

impl Services {
    /// Assembles the services of a database whose parts `Db::open` built.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        dir: PathBuf,
        options: DbOptions,
        io: Io,
        cache: Arc<BlockCache>,
        manifest: Manifest,
        wal: Option<Wal>,
        last_sequence: u64,
        memstore_bytes: u64,
        lock_file: Option<File>,
    ) -> Services {
        Services {
            dir,
            options,
            io,
            cache,
            mvcc: Mvcc::new(last_sequence),
            row_locks: RowLocks::new(),
            snapshots: Arc::new(LiveSnapshots::default()),
            memstore_bytes: AtomicU64::new(memstore_bytes),
            counters: Counters::default(),
            latencies: Latencies::default(),
            manifest: Mutex::new(manifest),
            wal,
            closed: AtomicBool::new(false),
            writes_stopped: AtomicBool::new(false),
            stop_cause: Mutex::new(None),
            lock_file: Mutex::new(lock_file),
        }
    }

    /// True once the database was closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Marks the database closed: every handle fails from now on.
    pub(crate) fn mark_closed(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Fails with [`Error::Closed`] once the database is closed.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.is_closed() {
            return Err(Error::Closed);
        }
        Ok(())
    }

    /// Fails with [`Error::Closed`], [`Error::ReadOnly`] or
    /// [`Error::WritesStopped`] unless the database may change.
    pub(crate) fn check_writable(&self) -> Result<()> {
        self.check_open()?;
        self.check_changes_allowed()
    }

    /// Fails with [`Error::ReadOnly`] or [`Error::WritesStopped`] unless the
    /// database may change; unlike [`Services::check_writable`] it lets a
    /// job that is finishing while the database closes record its edit.
    fn check_changes_allowed(&self) -> Result<()> {
        if self.options.read_only {
            return Err(Error::ReadOnly);
        }
        if let Some(failure) = self.wal.as_ref().and_then(Wal::failure) {
            // The commit thread failed (nobody may have been waiting on it).
            self.stop_writes(failure);
        }
        match self.write_stop() {
            Some(cause) => Err(Error::WritesStopped {
                cause: Box::new(cause),
            }),
            None => Ok(()),
        }
    }

    /// The storage failure that stopped every change, if one did.
    pub(crate) fn write_stop(&self) -> Option<Error> {
        if !self.writes_stopped.load(Ordering::Acquire) {
            return None;
        }
        self.stop_cause.lock().clone()
    }

    /// Stops every change to the database until it is reopened, because of
    /// `cause` (the first cause is kept).
    pub(crate) fn stop_writes(&self, cause: Error) {
        let mut kept = self.stop_cause.lock();
        if kept.is_none() {
            tracing::error!(
                dir = %self.dir.display(),
                error = %cause,
                "a storage failure stopped every change (reads go on; reopen once fixed)"
            );
            *kept = Some(cause);
            self.writes_stopped.store(true, Ordering::Release);
        }
    }

    /// Turns the failure of a change into what its caller sees: a storage
    /// failure (I/O error, damage found on disk, a failed WAL) stops every
    /// change and becomes [`Error::WritesStopped`]; other errors (bad input,
    /// closed, a dropped table) pass unchanged.
    pub(crate) fn fail_change(&self, error: Error) -> Error {
        match error {
            Error::WalFailed { .. } => {
                let cause = self.wal.as_ref().and_then(Wal::failure).unwrap_or(error);
                self.stop_writes(cause);
            }
            e if e.is_storage_failure() => self.stop_writes(e),
            other => return other,
        }
        match self.write_stop() {
            Some(cause) => Error::WritesStopped {
                cause: Box::new(cause),
            },
            None => Error::Closed,
        }
    }

    /// The WAL, or [`Error::ReadOnly`].
    pub(crate) fn wal(&self) -> Result<&Wal> {
        self.wal.as_ref().ok_or(Error::ReadOnly)
    }

    /// The WAL when the database is writable.
    pub(crate) fn wal_if_writable(&self) -> Option<&Wal> {
        self.wal.as_ref()
    }

    /// "Now" in milliseconds, from the database's clock.
    pub(crate) fn now_ms(&self) -> i64 {
        self.options.clock.now_ms()
    }

    /// Where HFiles live.
    pub(crate) fn data_dir(&self) -> PathBuf {
        self.dir.join(DATA_DIR)
    }

    /// The database directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest, locked: catalog changes that must see and change the
    /// catalog atomically (create, alter, drop) hold it across both.
    pub(crate) fn manifest(&self) -> MutexGuard<'_, Manifest> {
        self.manifest.lock()
    }

    /// Reserves an HFile id (made durable by the edit that adds the file).
    pub(crate) fn allocate_file_id(&self) -> u64 {
        self.manifest.lock().allocate_file_id()
    }

    /// Records a catalog change durably.
    pub(crate) fn record(&self, edit: &Edit) -> Result<()> {
        self.record_locked(&mut self.manifest.lock(), edit)
    }

    /// Records a catalog change durably in the manifest the caller holds
    /// locked. Refused once writes stopped; a failed append stops them (the
    /// edit may or may not have reached the disk, so the catalog in memory
    /// can no longer be trusted to match it).
    pub(crate) fn record_locked(&self, manifest: &mut Manifest, edit: &Edit) -> Result<()> {
        self.check_changes_allowed()?;
        manifest.record(edit).map_err(|e| self.fail_change(e))
    }

    /// Counts memory freed by a flush or a dropped store.
    pub(crate) fn release_memstore_bytes(&self, bytes: u64) {
        let _ = self
            .memstore_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(bytes))
            });
    }

    /// Deletes the files of `files` that no region references any more
    /// (after a split, two regions share their parent's files).
    pub(crate) fn delete_unreferenced<'a>(
        &self,
        files: impl Iterator<Item = &'a Arc<HFileReader>>,
    ) {
        self.delete_unreferenced_ids(files.map(|file| file.meta().id));
    }

    /// Deletes the HFiles of `ids` that neither a region nor a snapshot
    /// references any more (a table's file may be shared with its clones,
    /// its daughters after a split, and the snapshots that pin it).
    pub(crate) fn delete_unreferenced_ids(&self, ids: impl Iterator<Item = u64>) {
        let live = self.manifest.lock().state().live_files();
        let data_dir = self.data_dir();
        for id in ids {
            if !live.contains(&id) {
                let _ = self
                    .io
                    .remove_file(&data_dir.join(crate::names::hfile_name(id)));
            }
        }
    }

    /// Syncs and stops the WAL (close).
    pub(crate) fn shutdown_wal(&self) -> Result<()> {
        self.wal.as_ref().map_or(Ok(()), Wal::shutdown)
    }

    /// Releases the directory lock (close).
    pub(crate) fn release_lock(&self) {
        self.lock_file.lock().take();
    }
}

impl Drop for Services {
    /// The last handle of the database is gone: nothing is written after
    /// this, and what the WAL holds is synced.
    fn drop(&mut self) {
        self.mark_closed();
        if let Some(wal) = &self.wal {
            let _ = wal.shutdown();
        }
    }
}
