//! Opening and closing a database directory; the catalog of tables; the
//! glue between writes and background work (flush triggers, write stalls).
//!
//! Directory layout (`docs/format.md`):
//! ```text
//! DIR/LOCK                   flock'ed while open: one process, one handle
//! DIR/CURRENT                names the live manifest
//! DIR/MANIFEST-NNNNNN        tables, families, regions, files, id high-water marks
//! DIR/wal/NNNNNNNNNNNN.wal   WAL segments
//! DIR/data/NNNNNNNNNNNN.hfile HFiles
//! ```
//!
//! Open: lock the directory, read the manifest, open every store's files,
//! delete files the manifest does not know (left by a crash during a flush
//! or compaction), replay the WAL above each region's flushed sequence
//! (cutting a torn tail), start a new WAL segment and the background
//! workers. Catalog changes (create, alter, drop) are recorded durably in
//! the manifest before they take effect.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};

use crate::cache::{BlockCache, CacheStats};
use crate::catalog::{TableInner, TableState};
use crate::compaction;
use crate::error::{Error, Result};
use crate::hfile::reader::HFileReader;
use crate::io::{Backend, Io};
use crate::maintenance::flush;
use crate::maintenance::pool::Background;
use crate::manifest::{Edit, Manifest, RegionRecord, TableRecord};
use crate::memstore::NewCell;
use crate::mvcc::{Mvcc, RowLocks};
use crate::names::{DATA_DIR, LOCK_FILE, WAL_DIR, hfile_name, parse_hfile_name};
use crate::options::{DbOptions, TableDescriptor, validate_table_name};
use crate::region::Region;
use crate::store::{LEVELS, Store};
use crate::table::Table;
use crate::wal::replay::{ReplayMode, ReplaySummary, replay};
use crate::wal::{Wal, WalStats};

/// How often a stalled writer rechecks its condition.
const STALL_POLL: Duration = Duration::from_millis(10);
/// Writes to a region wait while its memstores hold this many times the flush size.
const MEMSTORE_BLOCK_MULTIPLIER: u64 = 4;
/// After a flush, a WAL segment holding at least this many bytes, all of
/// them flushed, is sealed and deleted (smaller ones wait until they fill
/// or another flush), in bytes.
const WAL_ROLL_MIN_BYTES: u64 = 1024 * 1024;

/// Counters describing a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DbStats {
    /// Bytes of memory held by all memstores.
    pub memstore_bytes: u64,
    /// The highest sequence number handed out.
    pub last_sequence: u64,
    /// Group commit counters of the WAL.
    pub wal: WalStats,
    /// The I/O back end in use.
    pub io_backend: Backend,
    /// Block cache counters.
    pub cache: CacheStats,
    /// Flushes completed since open.
    pub flushes: u64,
    /// Compactions completed since open.
    pub compactions: u64,
    /// Bytes of HFiles written by flushes and compactions since open.
    pub hfile_bytes_written: u64,
    /// HFiles in the database and their total size in bytes.
    pub files: u64,
    /// Total size of the HFiles in bytes.
    pub file_bytes: u64,
    /// Microseconds writers spent stalled (slowed down or waiting).
    pub stall_micros: u64,
}

/// What replay found on open.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecoveryReport {
    /// Row mutations replayed from the WAL.
    pub records_replayed: u64,
    /// Records skipped: already flushed, or their table or family dropped.
    pub records_skipped: u64,
    /// Where a torn WAL tail was cut, if one was.
    pub torn_tail: Option<(PathBuf, u64)>,
    /// Files deleted because no manifest entry referenced them.
    pub orphan_files_deleted: u64,
    /// An edit appended to the manifest after its last commit that did not
    /// read back whole: a crash cut its append short, and nothing acted on
    /// it. The manifest file and the edit's offset.
    pub manifest_torn_tail: Option<(PathBuf, u64)>,
    /// With [`crate::WalRecovery::PointInTime`]: the damaged WAL segment and
    /// the offset where replay stopped. Every record after it was discarded.
    pub wal_damage: Option<(PathBuf, u64)>,
    /// Copies, under `wal/damaged/`, of the segments point-in-time recovery
    /// cut or set aside, as they were before.
    pub wal_set_aside: Vec<PathBuf>,
}

/// What [`Db::verify`] found.
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    /// HFiles checked.
    pub files: u64,
    /// Data blocks checked.
    pub blocks: u64,
    /// Every problem found, each naming its file and offset.
    pub problems: Vec<Error>,
}

/// Counters updated by the engine's threads.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) flushes: AtomicU64,
    pub(crate) compactions: AtomicU64,
    pub(crate) bytes_flushed_or_compacted: AtomicU64,
    pub(crate) stall_micros: AtomicU64,
}

pub(crate) struct DbInner {
    pub(crate) dir: PathBuf,
    pub(crate) options: DbOptions,
    pub(crate) io: Io,
    /// `None` when the database is open read-only.
    wal: Option<Wal>,
    pub(crate) mvcc: Mvcc,
    pub(crate) row_locks: RowLocks,
    pub(crate) memstore_bytes: AtomicU64,
    pub(crate) cache: Arc<BlockCache>,
    pub(crate) background: Arc<Background>,
    pub(crate) stats: Counters,
    manifest: Mutex<Manifest>,
    tables: RwLock<BTreeMap<String, Arc<TableInner>>>,
    /// A flush for memory pressure is queued (avoids rescanning regions on every write).
    memory_flush_pending: AtomicBool,
    closed: AtomicBool,
    lock_file: Mutex<Option<File>>,
    recovery: RecoveryReport,
}

impl DbInner {
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Fails with [`Error::Closed`] or [`Error::ReadOnly`] unless the
    /// database may change.
    pub(crate) fn check_writable(&self) -> Result<()> {
        if self.is_closed() {
            return Err(Error::Closed);
        }
        if self.options.read_only {
            return Err(Error::ReadOnly);
        }
        Ok(())
    }

    /// The WAL, or [`Error::ReadOnly`].
    pub(crate) fn wal(&self) -> Result<&Wal> {
        self.wal.as_ref().ok_or(Error::ReadOnly)
    }

    pub(crate) fn now_ms(&self) -> i64 {
        self.options.clock.now_ms()
    }

    /// Where HFiles live.
    pub(crate) fn data_dir(&self) -> PathBuf {
        self.dir.join(DATA_DIR)
    }

    /// Reserves an HFile id.
    pub(crate) fn allocate_file_id(&self) -> u64 {
        self.manifest.lock().allocate_file_id()
    }

    /// Records a catalog change durably.
    pub(crate) fn record(&self, edit: &Edit) -> Result<()> {
        self.manifest.lock().record(edit)
    }

    /// Memory freed by a flush.
    pub(crate) fn release_memstore_bytes(&self, bytes: u64) {
        let _ = self
            .memstore_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(bytes))
            });
    }

    fn all_regions(&self) -> Vec<(Arc<TableInner>, Arc<Region>)> {
        self.tables
            .read()
            .values()
            .flat_map(|t| {
                let regions = t.state.read().regions.clone();
                regions.into_iter().map(move |r| (t.clone(), r))
            })
            .collect()
    }

    /// Deletes the WAL segments every region has flushed past.
    fn release_wal(&self) -> Result<()> {
        // Mutations still being applied have sequences above the read point.
        let mut bound = self.mvcc.read_point();
        for (_, region) in self.all_regions() {
            if region.memstore_cells() > 0 {
                bound = bound.min(region.flushed_sequence());
            }
        }
        // Everything in the segment being written is flushed: start a new
        // one so this one can go too, instead of holding up to a segment of
        // dead log on disk until it fills.
        let wal = self.wal()?;
        let (current_bytes, current_max_sequence) = wal.current_segment();
        if current_bytes >= WAL_ROLL_MIN_BYTES && current_max_sequence <= bound {
            wal.roll()?;
        }
        wal.release_through(bound)
    }

    /// Deletes the files of `files` that no region references any more
    /// (after a split, two regions share their parent's files).
    pub(crate) fn delete_unreferenced<'a>(
        &self,
        files: impl Iterator<Item = &'a Arc<HFileReader>>,
    ) {
        let live = self.manifest.lock().state().live_files();
        for file in files {
            if !live.contains(&file.meta().id) {
                let _ = std::fs::remove_file(file.path());
            }
        }
    }

    /// Runs a flush job.
    pub(crate) fn run_flush(&self, table: &Arc<TableInner>, region: &Arc<Region>) -> Result<()> {
        if table.dropped.load(Ordering::Acquire) || region.retired.load(Ordering::Acquire) {
            return Ok(());
        }
        let flushed = flush::flush_region(self, table, region);
        self.memory_flush_pending.store(false, Ordering::Release);
        if flushed? {
            if compaction::region_score(region, &self.options) >= 1.0 {
                self.background.schedule_compaction(table, region);
            }
            let max_region_size = table.state.read().descriptor.get_max_region_size_bytes();
            if !region.has_shared_files() && region.own_file_bytes() > max_region_size {
                self.background.schedule_split(table, region);
            }
            self.release_wal()?;
        }
        Ok(())
    }

    /// A key near the middle of `region`'s data: the middle row of the
    /// middle block (within the region) of its largest file, always above
    /// the region's first row there so that neither daughter starts empty;
    /// `None` when the data cannot be cut (empty, or a single row).
    fn middle_key(region: &Region) -> Result<Option<Vec<u8>>> {
        let Some(file) = region
            .stores()
            .iter()
            .flat_map(|s| {
                s.version()
                    .files()
                    .map(|(_, f)| f.clone())
                    .collect::<Vec<_>>()
            })
            .max_by_key(|f| f.meta().size)
        else {
            return Ok(None);
        };
        let count = file.block_count();
        let lo = if region.start().is_empty() {
            0
        } else {
            file.seek_block(region.start())?.unwrap_or(count)
        };
        let hi = if region.end().is_empty() {
            count
        } else {
            file.seek_block(region.end())?
                .map_or(count, |o| o + 1)
                .min(count)
        };
        // The region's first row in this file: a split key must be above it,
        // or the lower daughter would be empty (HBase refuses such a
        // midkey too).
        let mut first_row = None;
        'find_first: for ordinal in lo..hi {
            let block = file.data_block(ordinal)?;
            for r in 0..block.rows() {
                if block.row(r) >= region.start() {
                    first_row = Some(block.row(r).to_vec());
                    break 'find_first;
                }
            }
        }
        let Some(first_row) = first_row else {
            return Ok(None);
        };
        // The middle row of the middle block, or the next row above the
        // region's first one after it.
        let middle = lo + (hi - lo) / 2;
        for ordinal in middle..hi {
            let block = file.data_block(ordinal)?;
            // In the middle block, start at the middle of the rows inside
            // the region (a shared parent file also holds rows outside it).
            let from = if ordinal == middle {
                let inside = (0..block.rows())
                    .filter(|&r| {
                        let row = block.row(r);
                        row >= region.start() && (region.end().is_empty() || row < region.end())
                    })
                    .collect::<Vec<_>>();
                inside.get(inside.len() / 2).copied().unwrap_or(0)
            } else {
                0
            };
            for r in from..block.rows() {
                let key = block.row(r);
                if !region.end().is_empty() && key >= region.end() {
                    return Ok(None);
                }
                if key > first_row.as_slice() {
                    return Ok(Some(key.to_vec()));
                }
            }
        }
        Ok(None)
    }

    /// Splits `region` at `key` (default: its middle key) into two daughters
    /// that share the parent's files until compaction rewrites them.
    /// Writes wait on the table's split gate meanwhile; the parent is
    /// flushed first, so its memstores are empty and the daughters start
    /// from its flushed sequence. Returns false when there was nothing to
    /// split (no data, a single row, or the region is already gone).
    pub(crate) fn split_region(
        &self,
        table: &Arc<TableInner>,
        region: &Arc<Region>,
        key: Option<Vec<u8>>,
    ) -> Result<bool> {
        self.check_writable()?;
        let _gate = table.split_gate.write();
        let present = table
            .state
            .read()
            .regions
            .iter()
            .any(|r| Arc::ptr_eq(r, region));
        if !present || region.retired.load(Ordering::Acquire) {
            return Ok(false);
        }
        while region.compaction_queued.swap(true, Ordering::AcqRel) {
            if self.is_closed() {
                return Err(Error::Closed);
            }
            self.background.wait_progress(STALL_POLL);
        }
        let result = self.split_locked(table, region, key);
        region.compaction_queued.store(false, Ordering::Release);
        result
    }

    fn split_locked(
        &self,
        table: &Arc<TableInner>,
        region: &Arc<Region>,
        key: Option<Vec<u8>>,
    ) -> Result<bool> {
        flush::flush_region(self, table, region)?;
        let key = match key {
            Some(key) => key,
            None => match Self::middle_key(region)? {
                Some(key) => key,
                None => return Ok(false),
            },
        };
        if key.as_slice() <= region.start()
            || (!region.end().is_empty() && key.as_slice() >= region.end())
        {
            return Err(Error::InvalidOption {
                name: "split key",
                reason: format!(
                    "'{}' is not strictly inside the region ['{}', '{}')",
                    crate::error::printable(&key),
                    crate::error::printable(region.start()),
                    crate::error::printable(region.end())
                ),
            });
        }
        let stores = region.stores();
        let files: Vec<crate::manifest::StoreFile> = stores
            .iter()
            .flat_map(|s| {
                let version = s.version();
                version
                    .files()
                    .map(|(level, f)| crate::manifest::StoreFile {
                        family_id: s.family_id(),
                        level: level as u8,
                        meta: f.meta().clone(),
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let flushed = region.flushed_sequence();
        let first_id = self.manifest.lock().allocate_region_ids(2);
        let bounds = [
            (region.start().to_vec(), key.clone()),
            (key, region.end().to_vec()),
        ];
        let records: Vec<RegionRecord> = bounds
            .iter()
            .enumerate()
            .map(|(i, (start, end))| RegionRecord {
                id: first_id + i as u64,
                start: start.clone(),
                end: end.clone(),
                flushed_sequence: flushed,
                files: files.clone(),
            })
            .collect();
        self.record(&Edit::SplitRegion {
            table_id: table.id,
            parent_id: region.id(),
            daughters: records.clone(),
        })?;
        let daughters: Vec<Arc<Region>> = records
            .iter()
            .map(|r| {
                let stores = stores
                    .iter()
                    .map(|s| {
                        Arc::new(Store::new(
                            s.family_id(),
                            s.family_name(),
                            flushed,
                            s.version().levels.clone(),
                        ))
                    })
                    .collect();
                Arc::new(Region::new(
                    r.id,
                    table.id,
                    r.start.clone(),
                    r.end.clone(),
                    stores,
                    flushed,
                ))
            })
            .collect();
        {
            let mut state = table.state.write();
            let mut regions = state.regions.clone();
            if let Some(at) = regions.iter().position(|r| Arc::ptr_eq(r, region)) {
                regions.splice(at..=at, daughters.iter().cloned());
            }
            *state = Arc::new(TableState::new(
                state.descriptor.clone(),
                state.family_ids.clone(),
                regions,
            ));
        }
        region.retired.store(true, Ordering::Release);
        // Compaction rewrites the shared files into each daughter's own.
        for daughter in &daughters {
            self.background.schedule_compaction(table, daughter);
        }
        Ok(true)
    }

    /// Runs one compaction of the most urgent store of `region`; returns
    /// whether the region has more to compact.
    pub(crate) fn run_compaction(
        &self,
        table: &Arc<TableInner>,
        region: &Arc<Region>,
    ) -> Result<bool> {
        if table.dropped.load(Ordering::Acquire)
            || self.is_closed()
            || self.options.read_only
            || region.retired.load(Ordering::Acquire)
        {
            return Ok(false);
        }
        let state = table.state.read().clone();
        // Files shared with a sibling since a split: rewrite this region's
        // part of them first, one store at a time.
        if let Some(store) = region
            .stores()
            .into_iter()
            .find(|s| s.version().files().any(|(_, f)| !region.owns(f.meta())))
        {
            if let (Some((_, family)), Some(pick)) = (
                state.family_by_id(store.family_id()),
                compaction::pick_major(&store.version()),
            ) {
                compaction::run(self, region, &store, family, &pick)?;
            }
            return Ok(true);
        }
        let best = region
            .stores()
            .into_iter()
            .map(|s| {
                let score = compaction::score(&s.version(), &self.options).1;
                (s, score)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((store, score)) = best else {
            return Ok(false);
        };
        if score < 1.0 {
            return Ok(false);
        }
        let Some((_, family)) = state.family_by_id(store.family_id()) else {
            return Ok(false);
        };
        let pointer = store.compact_pointers();
        let Some(pick) = compaction::pick(&store.version(), &self.options, &pointer) else {
            return Ok(false);
        };
        compaction::run(self, region, &store, family, &pick)?;
        if let Some(last) = pick.upper.iter().map(|f| f.meta().last_row.clone()).max() {
            store.set_compact_pointer(pick.level, last);
        }
        Ok(compaction::region_score(region, &self.options) >= 1.0)
    }

    /// Compacts `region` now, in the caller's thread, waiting for a
    /// background compaction of it to finish first. A minor compaction
    /// moves L0 into L1 and then follows the scores; a major one rewrites
    /// each store into one sorted run at its deepest level.
    pub(crate) fn compact_now(
        &self,
        table: &Arc<TableInner>,
        region: &Arc<Region>,
        major: bool,
    ) -> Result<()> {
        self.check_writable()?;
        while region.compaction_queued.swap(true, Ordering::AcqRel) {
            if self.is_closed() {
                return Err(Error::Closed);
            }
            self.background.wait_progress(STALL_POLL);
        }
        let result = (|| -> Result<()> {
            let state = table.state.read().clone();
            for store in region.stores() {
                let Some((_, family)) = state.family_by_id(store.family_id()) else {
                    continue;
                };
                let first = if major {
                    compaction::pick_major(&store.version())
                } else {
                    compaction::pick_level0(&store.version())
                };
                if let Some(pick) = first {
                    compaction::run(self, region, &store, family, &pick)?;
                }
                if !major {
                    while let Some(pick) =
                        compaction::pick(&store.version(), &self.options, &store.compact_pointers())
                    {
                        compaction::run(self, region, &store, family, &pick)?;
                        if let Some(last) =
                            pick.upper.iter().map(|f| f.meta().last_row.clone()).max()
                        {
                            store.set_compact_pointer(pick.level, last);
                        }
                    }
                }
            }
            Ok(())
        })();
        region.compaction_queued.store(false, Ordering::Release);
        result
    }

    /// Called before a write to `region`: schedules flushes the memory
    /// limits ask for, slows the writer down while L0 is deep, and makes it
    /// wait while L0 or memory are at their hard limits.
    pub(crate) fn before_write(
        &self,
        table: &Arc<TableInner>,
        region: &Arc<Region>,
        flush_size: u64,
    ) -> Result<()> {
        let started = std::time::Instant::now();
        let o = &self.options;
        loop {
            let l0 = region.l0_files();
            let region_blocked =
                region.memstore_bytes() >= flush_size.saturating_mul(MEMSTORE_BLOCK_MULTIPLIER);
            let global = self.memstore_bytes.load(Ordering::Relaxed);
            let global_blocked = global
                >= o.global_memstore_limit_bytes
                    .saturating_add(o.global_memstore_limit_bytes / 2);
            if region_blocked {
                self.background.schedule_flush(table, region);
            }
            if global >= o.global_memstore_limit_bytes {
                self.flush_largest_region();
            }
            if l0 >= o.l0_stop_files {
                self.background.schedule_compaction(table, region);
            }
            if !(region_blocked || global_blocked || l0 >= o.l0_stop_files) {
                if l0 >= o.l0_slowdown_files {
                    // Gradual: each L0 file past the slowdown mark adds half a millisecond.
                    let extra = (l0 - o.l0_slowdown_files + 1) as u64;
                    std::thread::sleep(Duration::from_micros(500 * extra));
                }
                break;
            }
            if self.is_closed() {
                return Err(Error::Closed);
            }
            if let Some(reason) = self.background.last_error()
                && self.background.is_idle()
            {
                return Err(Error::BackgroundFailed { reason });
            }
            self.background.wait_progress(STALL_POLL);
        }
        let waited = started.elapsed().as_micros();
        if waited > 0 {
            self.stats
                .stall_micros
                .fetch_add(u64::try_from(waited).unwrap_or(u64::MAX), Ordering::Relaxed);
        }
        Ok(())
    }

    /// Called after a write grew `region`'s memstores.
    pub(crate) fn after_write(
        &self,
        table: &Arc<TableInner>,
        region: &Arc<Region>,
        flush_size: u64,
    ) {
        if region.memstore_bytes() >= flush_size {
            self.background.schedule_flush(table, region);
        }
        if self
            .wal
            .as_ref()
            .is_some_and(|wal| wal.segment_count() > self.options.max_wal_segments)
        {
            self.flush_regions_pinning_the_wal();
        }
    }

    fn flush_largest_region(&self) {
        if self.memory_flush_pending.swap(true, Ordering::AcqRel) {
            return;
        }
        let largest = self
            .all_regions()
            .into_iter()
            .max_by_key(|(_, r)| r.memstore_bytes());
        match largest {
            Some((table, region)) if region.memstore_bytes() > 0 => {
                self.background.schedule_flush(&table, &region)
            }
            _ => self.memory_flush_pending.store(false, Ordering::Release),
        }
    }

    fn flush_regions_pinning_the_wal(&self) {
        let Some(oldest) = self.wal.as_ref().and_then(Wal::oldest_segment_max_sequence) else {
            return;
        };
        for (table, region) in self.all_regions() {
            if region.memstore_cells() > 0 && region.flushed_sequence() < oldest {
                self.background.schedule_flush(&table, &region);
            }
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
        f.debug_struct("Db").field("dir", &self.inner.dir).finish()
    }
}

/// Locks the directory: exclusively for a writer (creating `LOCK`), shared
/// for a read-only open (which creates nothing: without a `LOCK` file there
/// is no lock to take, and `None` is returned).
fn lock_directory(dir: &Path, read_only: bool) -> Result<Option<File>> {
    let path = dir.join(LOCK_FILE);
    let opened = if read_only {
        std::fs::File::open(&path)
    } else {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
    };
    let file = match opened {
        Ok(file) => file,
        Err(e) if read_only && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("opening {}", path.display()), e)),
    };
    let mode = if read_only {
        libc::LOCK_SH
    } else {
        libc::LOCK_EX
    };
    // SAFETY: flock only reads its integer arguments; the fd is valid while `file` lives.
    let rc = unsafe { libc::flock(file.as_raw_fd(), mode | libc::LOCK_NB) };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        return Err(if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Error::DatabaseLocked {
                path: dir.to_path_buf(),
            }
        } else {
            Error::io(format!("locking {}", path.display()), err)
        });
    }
    Ok(Some(file))
}

/// Opens the files of one region and builds it.
fn build_region(
    io: Io,
    data_dir: &Path,
    cache: &Arc<BlockCache>,
    record: &TableRecord,
    region: &RegionRecord,
) -> Result<Arc<Region>> {
    let mut stores = Vec::with_capacity(record.family_ids.len());
    for (family_id, family) in record.family_ids.iter().zip(record.descriptor.families()) {
        let mut levels: Vec<Vec<Arc<HFileReader>>> = vec![Vec::new(); LEVELS];
        for file in region.files.iter().filter(|f| f.family_id == *family_id) {
            let path = data_dir.join(hfile_name(file.meta.id));
            let reader = HFileReader::open(
                io,
                &path,
                file.meta.id,
                cache.clone(),
                family.is_block_cache_enabled(),
            )?;
            if let Some(level) = levels.get_mut(usize::from(file.level)) {
                level.push(Arc::new(reader));
            }
        }
        // L0 newest first; deeper levels by key.
        if let Some(l0) = levels.first_mut() {
            l0.sort_by_key(|f| std::cmp::Reverse(f.meta().max_sequence));
        }
        for level in levels.iter_mut().skip(1) {
            level.sort_by(|a, b| a.meta().first_row.cmp(&b.meta().first_row));
        }
        stores.push(Arc::new(Store::new(
            *family_id,
            family.name().as_bytes(),
            region.flushed_sequence,
            levels,
        )));
    }
    Ok(Arc::new(Region::new(
        region.id,
        record.id,
        region.start.clone(),
        region.end.clone(),
        stores,
        region.flushed_sequence,
    )))
}

fn build_table(
    io: Io,
    data_dir: &Path,
    cache: &Arc<BlockCache>,
    record: &TableRecord,
) -> Result<Arc<TableInner>> {
    let regions = record
        .regions
        .iter()
        .map(|r| build_region(io, data_dir, cache, record, r))
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(TableInner {
        id: record.id,
        name: record.descriptor.name().to_owned(),
        state: RwLock::new(Arc::new(TableState::new(
            record.descriptor.clone(),
            record.family_ids.clone(),
            regions,
        ))),
        dropped: AtomicBool::new(false),
        enabled: AtomicBool::new(record.enabled),
        split_gate: RwLock::new(()),
    }))
}

/// Deletes HFiles in `data_dir` that the manifest does not reference.
fn delete_orphans(data_dir: &Path, live: &std::collections::HashSet<u64>) -> Result<u64> {
    let mut deleted = 0;
    let entries = std::fs::read_dir(data_dir)
        .map_err(|e| Error::io(format!("listing {}", data_dir.display()), e))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if parse_hfile_name(name).is_some_and(|id| !live.contains(&id)) {
            std::fs::remove_file(entry.path())
                .map_err(|e| Error::io(format!("removing orphan {}", entry.path().display()), e))?;
            deleted += 1;
        }
    }
    if deleted > 0 {
        crate::io::sync_dir(data_dir)?;
    }
    Ok(deleted)
}

/// Replays the WAL in `wal_dir` into the regions' memstores (above each
/// region's flushed sequence); returns what replay found and the memstore
/// bytes it filled. A record of a region the manifest never recorded (an id
/// at or above its high-water mark) means the manifest lost the edit that
/// created the region: corruption, never a record to skip.
fn replay_wal(
    wal_dir: &Path,
    io: Io,
    options: &DbOptions,
    manifest: &Manifest,
    tables: &BTreeMap<String, Arc<TableInner>>,
    recovery: &mut RecoveryReport,
) -> Result<(ReplaySummary, u64)> {
    if options.read_only && !wal_dir.exists() {
        return Ok((ReplaySummary::default(), 0));
    }
    let regions: HashMap<u64, Arc<Region>> = tables
        .values()
        .flat_map(|t| t.state.read().regions.clone())
        .map(|r| (r.id(), r))
        .collect();
    let next_region_id = manifest.state().next_region_id;
    let manifest_path = manifest.read_report().path.clone();
    let mode = if options.read_only {
        ReplayMode::ReadOnly
    } else {
        ReplayMode::Repair(options.wal_recovery)
    };
    let mut memstore_bytes = 0u64;
    let summary = replay(wal_dir, io, mode, |mutation, path, offset| {
        let Some(region) = regions.get(&mutation.region_id) else {
            if mutation.region_id >= next_region_id {
                return Err(Error::corruption(
                    path,
                    offset,
                    format!(
                        "record of region {}, which the manifest {} never recorded: \
                         the manifest lost the edit that created it",
                        mutation.region_id,
                        manifest_path.display()
                    ),
                ));
            }
            // A region of a dropped table, or one replaced by a split.
            recovery.records_skipped += 1;
            return Ok(());
        };
        if mutation.sequence <= region.flushed_sequence() {
            recovery.records_skipped += 1;
            return Ok(());
        }
        let mut applied = false;
        for (family_id, cells) in &mutation.families {
            // A dropped family's cells are skipped; ids are never reused.
            let Some(store) = region.store(*family_id) else {
                continue;
            };
            let cells: Vec<NewCell<'_>> = cells
                .iter()
                .map(|c| NewCell {
                    row: mutation.row,
                    qualifier: c.qualifier,
                    timestamp: c.timestamp,
                    kind: c.kind,
                    sequence: mutation.sequence,
                    value: c.value,
                })
                .collect();
            let grown = store.insert(mutation.sequence, &cells);
            region.add_memstore_bytes(grown as i64);
            memstore_bytes += grown;
            applied = true;
        }
        if applied {
            recovery.records_replayed += 1;
        } else {
            recovery.records_skipped += 1;
        }
        Ok(())
    })?;
    recovery.torn_tail = summary.torn_tail.clone();
    if let Some((path, offset, copies)) = &summary.discarded {
        recovery.wal_damage = Some((path.clone(), *offset));
        recovery.wal_set_aside = copies.clone();
    }
    Ok((summary, memstore_bytes))
}

impl Db {
    /// Opens (or creates) the database in `dir`.
    ///
    /// Steps: lock the directory, read the manifest (and, unless read-only,
    /// rewrite it as a snapshot), delete HFiles no committed manifest edit
    /// references, open every store's files, replay the WAL above each
    /// region's flushed sequence, start a new WAL segment and the
    /// background workers. With [`DbOptions::read_only`] nothing on disk
    /// changes. Damage to the manifest or the WAL is an
    /// [`Error::Corruption`] naming the file and offset (see
    /// [`DbOptions::wal_recovery`] for the WAL's way out).
    pub fn open(dir: impl AsRef<Path>, options: DbOptions) -> Result<Db> {
        options.validate()?;
        let dir = dir.as_ref().to_path_buf();
        let read_only = options.read_only;
        if !dir.exists() {
            if !options.create_if_missing || read_only {
                return Err(Error::io(
                    format!("opening {}", dir.display()),
                    std::io::Error::from(std::io::ErrorKind::NotFound),
                ));
            }
            std::fs::create_dir_all(&dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        let lock_file = lock_directory(&dir, read_only)?;
        let io = Io::resolve(options.io)?;
        let manifest = if read_only {
            Manifest::open_read_only(&dir, io)?
        } else {
            Manifest::open(&dir, io)?
        };
        let data_dir = dir.join(DATA_DIR);
        let wal_dir = dir.join(WAL_DIR);
        let mut recovery = RecoveryReport {
            manifest_torn_tail: manifest
                .read_report()
                .torn_tail
                .map(|offset| (manifest.read_report().path.clone(), offset)),
            ..RecoveryReport::default()
        };
        if !read_only {
            for sub in [&data_dir, &wal_dir] {
                std::fs::create_dir_all(sub)
                    .map_err(|e| Error::io(format!("creating {}", sub.display()), e))?;
            }
            // The manifest read back with every committed edit intact, so an
            // HFile it does not reference was written by a flush or
            // compaction whose edit never committed: nothing refers to it.
            recovery.orphan_files_deleted =
                delete_orphans(&data_dir, &manifest.state().live_files())?;
            crate::wal::remove_unfinished_segments(&wal_dir)?;
        }
        let cache = Arc::new(BlockCache::new(options.block_cache_bytes));
        let tables: BTreeMap<String, Arc<TableInner>> = manifest
            .state()
            .tables
            .values()
            .map(|record| {
                Ok((
                    record.descriptor.name().to_owned(),
                    build_table(io, &data_dir, &cache, record)?,
                ))
            })
            .collect::<Result<_>>()?;

        let (summary, memstore_bytes) =
            replay_wal(&wal_dir, io, &options, &manifest, &tables, &mut recovery)?;
        let wal = if read_only {
            None
        } else {
            Some(Wal::start(
                &wal_dir,
                io,
                options.wal_segment_bytes,
                options.async_wal_sync_interval_ms,
                summary.next_segment_id,
                summary.segments.clone(),
            )?)
        };
        let last_sequence = summary.max_sequence.max(manifest.state().last_sequence);
        let background = Arc::new(Background::new(options.clone()));
        let inner = Arc::new(DbInner {
            dir,
            io,
            wal,
            mvcc: Mvcc::new(last_sequence),
            row_locks: RowLocks::new(),
            memstore_bytes: AtomicU64::new(memstore_bytes),
            cache,
            background: background.clone(),
            stats: Counters::default(),
            manifest: Mutex::new(manifest),
            tables: RwLock::new(tables),
            memory_flush_pending: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            lock_file: Mutex::new(lock_file),
            recovery,
            options,
        });
        if read_only {
            return Ok(Db { inner });
        }
        background
            .start(Arc::downgrade(&inner), inner.options.background_threads)
            .map_err(|e| Error::io("starting background workers", e))?;
        // Replay may have filled memstores, and stores may need compaction.
        for (table, region) in inner.all_regions() {
            let flush_size = table
                .state
                .read()
                .descriptor
                .get_memstore_flush_size_bytes();
            if region.memstore_bytes() >= flush_size {
                background.schedule_flush(&table, &region);
            }
            if compaction::region_score(&region, &inner.options) >= 1.0 {
                background.schedule_compaction(&table, &region);
            }
        }
        Ok(Db { inner })
    }

    /// Opens `dir` with default options.
    pub fn open_default(dir: impl AsRef<Path>) -> Result<Db> {
        Db::open(dir, DbOptions::default())
    }

    fn check_open(&self) -> Result<()> {
        if self.inner.is_closed() {
            return Err(Error::Closed);
        }
        Ok(())
    }

    /// Creates a table; its regions come from the descriptor's pre-split.
    pub fn create_table(&self, descriptor: TableDescriptor) -> Result<Table> {
        self.check_open()?;
        descriptor.validate()?;
        let split_keys = descriptor.get_pre_split().split_keys()?;
        let mut manifest = self.inner.manifest.lock();
        if self.inner.tables.read().contains_key(descriptor.name()) {
            return Err(Error::TableExists {
                table: descriptor.name().to_owned(),
            });
        }
        let state = manifest.state();
        let table_id = state.next_table_id;
        let family_ids: Vec<u32> = (0..descriptor.families().len() as u32)
            .map(|i| state.next_family_id + i)
            .collect();
        let mut boundaries = vec![Vec::new()];
        boundaries.extend(split_keys);
        // Sequences handed out before this table existed can never be its
        // own, so its regions start as flushed through the current sequence.
        let flushed = self.inner.mvcc.last_sequence();
        let regions: Vec<RegionRecord> = boundaries
            .iter()
            .enumerate()
            .map(|(i, start)| RegionRecord {
                id: state.next_region_id + i as u64,
                start: start.clone(),
                end: boundaries.get(i + 1).cloned().unwrap_or_default(),
                flushed_sequence: flushed,
                files: Vec::new(),
            })
            .collect();
        let record = TableRecord {
            id: table_id,
            descriptor,
            family_ids,
            regions,
            enabled: true,
        };
        manifest.record(&Edit::CreateTable(record.clone()))?;
        let inner = build_table(
            self.inner.io,
            &self.inner.data_dir(),
            &self.inner.cache,
            &record,
        )?;
        self.inner
            .tables
            .write()
            .insert(record.descriptor.name().to_owned(), inner.clone());
        Ok(Table {
            db: self.inner.clone(),
            inner,
        })
    }

    /// A handle to an existing table.
    pub fn table(&self, name: &str) -> Result<Table> {
        self.check_open()?;
        let inner =
            self.inner
                .tables
                .read()
                .get(name)
                .cloned()
                .ok_or_else(|| Error::TableNotFound {
                    table: name.to_owned(),
                })?;
        Ok(Table {
            db: self.inner.clone(),
            inner,
        })
    }

    /// True when a table with this name exists.
    pub fn table_exists(&self, name: &str) -> bool {
        self.inner.tables.read().contains_key(name)
    }

    /// Table names in ascending order.
    pub fn list_tables(&self) -> Vec<String> {
        self.inner.tables.read().keys().cloned().collect()
    }

    /// The descriptor of a table.
    pub fn describe_table(&self, name: &str) -> Result<TableDescriptor> {
        self.table(name)?.descriptor()
    }

    /// Changes a table to match `descriptor` (same name): families are
    /// matched by name; new ones are added (empty), missing ones are deleted
    /// with their data, and options of kept families and of the table take
    /// the new values. The pre-split choice of the table is kept as created.
    pub fn alter_table(&self, descriptor: TableDescriptor) -> Result<()> {
        self.check_open()?;
        validate_table_name(descriptor.name())?;
        let mut manifest = self.inner.manifest.lock();
        let table = self
            .inner
            .tables
            .read()
            .get(descriptor.name())
            .cloned()
            .ok_or_else(|| Error::TableNotFound {
                table: descriptor.name().to_owned(),
            })?;
        let old = table.state.read().clone();
        let descriptor = descriptor.pre_split(old.descriptor.get_pre_split().clone());
        descriptor.validate()?;
        let mut next_family_id = manifest.state().next_family_id;
        let family_ids: Vec<u32> = descriptor
            .families()
            .iter()
            .map(|f| match old.family(f.name().as_bytes()) {
                Some((id, _)) => id,
                None => {
                    next_family_id += 1;
                    next_family_id - 1
                }
            })
            .collect();
        manifest.record(&Edit::AlterTable {
            table_id: table.id,
            descriptor: descriptor.clone(),
            family_ids: family_ids.clone(),
        })?;
        drop(manifest);
        let mut removed = Vec::new();
        for region in &old.regions {
            for (id, family) in family_ids.iter().zip(descriptor.families()) {
                region.add_store(*id, family.name().as_bytes());
            }
            for id in &old.family_ids {
                if !family_ids.contains(id)
                    && let Some(store) = region.remove_store(*id)
                {
                    let bytes = store.memstore_bytes();
                    region.add_memstore_bytes(-(bytes as i64));
                    self.inner.release_memstore_bytes(bytes);
                    removed.push(store);
                }
            }
        }
        *table.state.write() =
            Arc::new(TableState::new(descriptor, family_ids, old.regions.clone()));
        for store in removed {
            for (_, file) in store.version().files() {
                let _ = std::fs::remove_file(file.path());
            }
        }
        Ok(())
    }

    /// Disables a table (HBase `disable`): its memstores are flushed and it
    /// takes no reads or writes ([`Error::TableDisabled`]) until enabled.
    /// Its descriptor and regions stay readable.
    pub fn disable_table(&self, name: &str) -> Result<()> {
        self.set_enabled(name, false)
    }

    /// Enables a disabled table.
    pub fn enable_table(&self, name: &str) -> Result<()> {
        self.set_enabled(name, true)
    }

    /// False while the table is disabled.
    pub fn is_table_enabled(&self, name: &str) -> Result<bool> {
        Ok(self.table(name)?.is_enabled())
    }

    fn set_enabled(&self, name: &str, enabled: bool) -> Result<()> {
        let table = self.table(name)?;
        if !enabled && table.is_enabled() {
            table.flush()?;
        }
        let mut manifest = self.inner.manifest.lock();
        manifest.record(&Edit::SetEnabled {
            table_id: table.inner.id,
            enabled,
        })?;
        table.inner.enabled.store(enabled, Ordering::Release);
        Ok(())
    }

    /// Deletes a table and all its data (enabled or not; the shell, like
    /// HBase's, asks for `disable` first).
    pub fn drop_table(&self, name: &str) -> Result<()> {
        self.check_open()?;
        let mut manifest = self.inner.manifest.lock();
        let table =
            self.inner
                .tables
                .read()
                .get(name)
                .cloned()
                .ok_or_else(|| Error::TableNotFound {
                    table: name.to_owned(),
                })?;
        manifest.record(&Edit::DropTable { table_id: table.id })?;
        drop(manifest);
        table.dropped.store(true, Ordering::Release);
        self.inner.tables.write().remove(name);
        for region in table.state.read().regions.iter() {
            // A running flush finishes first; its files are removed below.
            let _flushing = region.flush_lock.lock();
            self.inner.release_memstore_bytes(region.memstore_bytes());
            for store in region.stores() {
                for (_, file) in store.version().files() {
                    let _ = std::fs::remove_file(file.path());
                }
            }
        }
        Ok(())
    }

    /// Flushes every region of every table and waits for it.
    pub fn flush(&self) -> Result<()> {
        self.check_open()?;
        for (table, region) in self.inner.all_regions() {
            self.inner.run_flush(&table, &region)?;
        }
        Ok(())
    }

    /// Waits until no flush or compaction is queued or running.
    pub fn wait_for_background_work(&self) -> Result<()> {
        self.check_open()?;
        self.inner.background.wait_idle();
        Ok(())
    }

    /// Checks every block of every HFile of the database.
    pub fn verify(&self) -> Result<VerifyReport> {
        self.check_open()?;
        let mut report = VerifyReport::default();
        let mut seen = std::collections::HashSet::new();
        for (_, region) in self.inner.all_regions() {
            for store in region.stores() {
                for (_, file) in store.version().files() {
                    if !seen.insert(file.meta().id) {
                        continue;
                    }
                    report.files += 1;
                    report.blocks += file.block_count() as u64;
                    report.problems.extend(file.verify());
                }
            }
        }
        Ok(report)
    }

    /// Counters describing the database.
    pub fn stats(&self) -> DbStats {
        let (mut files, mut file_bytes) = (0, 0);
        let mut seen = std::collections::HashSet::new();
        for (_, region) in self.inner.all_regions() {
            for store in region.stores() {
                for (_, file) in store.version().files() {
                    // Regions share files after a split: count each once.
                    if seen.insert(file.meta().id) {
                        files += 1;
                        file_bytes += file.meta().size;
                    }
                }
            }
        }
        let s = &self.inner.stats;
        DbStats {
            memstore_bytes: self.inner.memstore_bytes.load(Ordering::Relaxed),
            last_sequence: self.inner.mvcc.last_sequence(),
            wal: self.inner.wal.as_ref().map(Wal::stats).unwrap_or_default(),
            io_backend: self.inner.io.backend(),
            cache: self.inner.cache.stats(),
            flushes: s.flushes.load(Ordering::Relaxed),
            compactions: s.compactions.load(Ordering::Relaxed),
            hfile_bytes_written: s.bytes_flushed_or_compacted.load(Ordering::Relaxed),
            files,
            file_bytes,
            stall_micros: s.stall_micros.load(Ordering::Relaxed),
        }
    }

    /// What replay found when this database was opened.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.inner.recovery
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner.dir
    }

    /// Makes every write so far durable, whatever its durability asked for
    /// (except `SkipWal` writes, which never reach the WAL).
    pub fn sync_wal(&self) -> Result<()> {
        self.check_open()?;
        self.inner.wal()?.sync_all()
    }

    /// Flushes memstores (unless `flush_on_close` is off), syncs the WAL,
    /// stops background work and releases the directory. Every handle of
    /// this database fails with [`Error::Closed`] afterwards.
    pub fn close(&self) -> Result<()> {
        if self.inner.is_closed() {
            return Ok(());
        }
        let flushed = if self.inner.options.flush_on_close && !self.inner.options.read_only {
            self.inner.background.wait_idle();
            self.flush()
        } else {
            Ok(())
        };
        self.inner.closed.store(true, Ordering::Release);
        self.inner.background.shutdown();
        let synced = self.inner.wal.as_ref().map_or(Ok(()), Wal::shutdown);
        self.inner.lock_file.lock().take();
        flushed.and(synced)
    }
}

impl Drop for DbInner {
    fn drop(&mut self) {
        self.closed.store(true, Ordering::Release);
        self.background.shutdown();
        if let Some(wal) = &self.wal {
            let _ = wal.shutdown();
        }
    }
}
