//! A region: the rows `[start, end)` of one table, one store per family,
//! the region's counters, and its scheduling state ([`RegionSchedule`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::RwLock;

use crate::hfile::reader::HFileReader;
use crate::store::{Store, StoreVersion};
pub(crate) use schedule::{CompactionSlot, RegionSchedule};

mod schedule;

/// A region's counters since the database opened (or since the split or
/// merge that created the region): cheap to read (a few relaxed atomic
/// loads per region), so a monitor can sample them every second. Take two
/// snapshots and subtract to see an interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegionActivity {
    /// Rows returned by gets and scans (a get of an absent row returns none).
    pub rows_read: u64,
    /// Single-row reads of the region: gets, each row of a `get_many`, and
    /// the reads of increments, appends and check-and-mutate.
    pub gets: u64,
    /// Scans that read the region (a scan across several regions counts
    /// once in each).
    pub scans: u64,
    /// Rows mutated: one per row of a put, delete, increment or batch.
    pub rows_written: u64,
    /// Memstore bytes those mutations added.
    pub bytes_written: u64,
    /// Flushes of the region.
    pub flushes: u64,
    /// Compactions of the region's stores.
    pub compactions: u64,
    /// Microseconds writers to the region spent stalled (slowed down or
    /// blocked by its L0 files or memstore size, or by global memory).
    pub stall_micros: u64,
    /// Bulk loads that brought the region files.
    pub bulk_loads: u64,
    /// Files bulk loads installed into the region.
    pub bulk_loaded_files: u64,
    /// Bytes of those files.
    pub bulk_loaded_bytes: u64,
}

impl std::iter::Sum for RegionActivity {
    /// The counters of many regions added up (a table's, from its regions).
    fn sum<I: Iterator<Item = RegionActivity>>(regions: I) -> RegionActivity {
        regions.fold(RegionActivity::default(), |a, b| RegionActivity {
            rows_read: a.rows_read + b.rows_read,
            gets: a.gets + b.gets,
            scans: a.scans + b.scans,
            rows_written: a.rows_written + b.rows_written,
            bytes_written: a.bytes_written + b.bytes_written,
            flushes: a.flushes + b.flushes,
            compactions: a.compactions + b.compactions,
            stall_micros: a.stall_micros + b.stall_micros,
            bulk_loads: a.bulk_loads + b.bulk_loads,
            bulk_loaded_files: a.bulk_loaded_files + b.bulk_loaded_files,
            bulk_loaded_bytes: a.bulk_loaded_bytes + b.bulk_loaded_bytes,
        })
    }
}

/// What a region has served and undergone since the database opened,
/// updated by the threads that do the work (relaxed atomics: a snapshot
/// may be a few operations behind, never wrong by more).
#[derive(Default)]
pub(crate) struct ActivityCounters {
    /// Rows returned by gets and scans.
    pub(crate) rows_read: AtomicU64,
    /// Single-row reads (next to `rows_read`: a get that finds its row
    /// adds to both, one cache line).
    pub(crate) gets: AtomicU64,
    /// Scans that opened a scanner on the region.
    pub(crate) scans: AtomicU64,
    /// Rows mutated (one per row of a put, delete or batch).
    pub(crate) rows_written: AtomicU64,
    /// Memstore bytes those mutations added.
    pub(crate) bytes_written: AtomicU64,
    /// Flushes of the region completed.
    pub(crate) flushes: AtomicU64,
    /// Compactions of the region's stores completed.
    pub(crate) compactions: AtomicU64,
    /// Microseconds writers to the region spent stalled.
    pub(crate) stall_micros: AtomicU64,
    /// Bulk loads that brought the region files.
    pub(crate) bulk_loads: AtomicU64,
    /// Files bulk loads installed.
    pub(crate) bulk_loaded_files: AtomicU64,
    /// Bytes of those files.
    pub(crate) bulk_loaded_bytes: AtomicU64,
}

/// A key range of a table with its stores.
pub(crate) struct Region {
    id: u64,
    table_id: u64,
    start: Vec<u8>,
    /// Exclusive end; empty means "to the end of the table".
    end: Vec<u8>,
    /// Stores sorted by family name.
    stores: RwLock<Vec<Arc<Store>>>,
    /// Every mutation of the region with a sequence <= this is in its files.
    flushed_sequence: AtomicU64,
    /// Bytes of memory held by the region's memstores.
    memstore_bytes: AtomicU64,
    /// Of `memstore_bytes`, those of the memstores a running flush froze
    /// (0 when no flush runs): they are on their way to a file, so they do
    /// not call for another flush.
    flushing_bytes: AtomicU64,
    /// Most L0 files any store of the region has (drives write stalls).
    l0_files: AtomicUsize,
    /// Which jobs are queued or running for the region, and the locks
    /// that keep them apart.
    pub(crate) schedule: RegionSchedule,
    /// Shared with the region's scanners, which add their rows when done.
    pub(crate) activity: Arc<ActivityCounters>,
    /// When this region object was made (the database opened, or a split
    /// or merge created the region): the normalizer leaves young regions.
    created: std::time::Instant,
}

impl Region {
    /// A region with the given stores (sorted here by family name).
    pub(crate) fn new(
        id: u64,
        table_id: u64,
        start: Vec<u8>,
        end: Vec<u8>,
        mut stores: Vec<Arc<Store>>,
        flushed_sequence: u64,
    ) -> Self {
        stores.sort_by(|a, b| a.family_name().cmp(b.family_name()));
        let l0 = stores
            .iter()
            .map(|s| s.version().levels.first().map_or(0, Vec::len))
            .max()
            .unwrap_or(0);
        Region {
            id,
            table_id,
            start,
            end,
            stores: RwLock::new(stores),
            flushed_sequence: AtomicU64::new(flushed_sequence),
            memstore_bytes: AtomicU64::new(0),
            flushing_bytes: AtomicU64::new(0),
            l0_files: AtomicUsize::new(l0),
            schedule: RegionSchedule::default(),
            activity: Arc::default(),
            created: std::time::Instant::now(),
        }
    }

    /// How long ago this region object was made (at open, split or merge).
    pub(crate) fn age(&self) -> std::time::Duration {
        self.created.elapsed()
    }

    /// A snapshot of the region's activity counters.
    pub(crate) fn activity_snapshot(&self) -> RegionActivity {
        let a = &self.activity;
        RegionActivity {
            rows_read: a.rows_read.load(Ordering::Relaxed),
            gets: a.gets.load(Ordering::Relaxed),
            scans: a.scans.load(Ordering::Relaxed),
            rows_written: a.rows_written.load(Ordering::Relaxed),
            bytes_written: a.bytes_written.load(Ordering::Relaxed),
            flushes: a.flushes.load(Ordering::Relaxed),
            compactions: a.compactions.load(Ordering::Relaxed),
            stall_micros: a.stall_micros.load(Ordering::Relaxed),
            bulk_loads: a.bulk_loads.load(Ordering::Relaxed),
            bulk_loaded_files: a.bulk_loaded_files.load(Ordering::Relaxed),
            bulk_loaded_bytes: a.bulk_loaded_bytes.load(Ordering::Relaxed),
        }
    }

    /// The region's id (unique in the database, never reused).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The id of the table the region belongs to.
    pub(crate) fn table_id(&self) -> u64 {
        self.table_id
    }

    /// Inclusive start key (empty for the first region).
    pub(crate) fn start(&self) -> &[u8] {
        &self.start
    }

    /// Exclusive end key (empty for the last region).
    pub(crate) fn end(&self) -> &[u8] {
        &self.end
    }

    /// True when `row` falls in `[start, end)`.
    pub(crate) fn contains(&self, row: &[u8]) -> bool {
        row >= self.start.as_slice() && (self.end.is_empty() || row < self.end.as_slice())
    }

    /// The store of `family_id`.
    pub(crate) fn store(&self, family_id: u32) -> Option<Arc<Store>> {
        self.with_store(family_id, Arc::clone)
    }

    /// The current version of the store of `family_id` (without cloning the
    /// store's handle: one read per get).
    pub(crate) fn store_version(&self, family_id: u32) -> Option<Arc<StoreVersion>> {
        self.with_store(family_id, |s| s.version())
    }

    /// `f` applied to the store of `family_id`, under the stores' read lock.
    fn with_store<R>(&self, family_id: u32, f: impl FnOnce(&Arc<Store>) -> R) -> Option<R> {
        self.stores
            .read()
            .iter()
            .find(|s| s.family_id() == family_id)
            .map(f)
    }

    /// Every store, sorted by family name.
    pub(crate) fn stores(&self) -> Vec<Arc<Store>> {
        self.stores.read().clone()
    }

    /// The largest file (in bytes) of any of the region's stores: the one whose block index
    /// best shows where the region's data lies (split points, cut keys).
    pub(crate) fn largest_file(&self) -> Option<Arc<HFileReader>> {
        self.stores
            .read()
            .iter()
            .flat_map(|s| {
                s.version()
                    .files()
                    .map(|(_, f)| f.clone())
                    .collect::<Vec<_>>()
            })
            .max_by_key(|f| f.meta().size)
    }

    /// Adds an empty store for a new family.
    pub(crate) fn add_store(&self, family_id: u32, family_name: &[u8]) {
        let mut stores = self.stores.write();
        if stores.iter().any(|s| s.family_id() == family_id) {
            return;
        }
        let after = self.flushed_sequence();
        stores.push(Arc::new(Store::new(
            family_id,
            family_name,
            after,
            Vec::new(),
        )));
        stores.sort_by(|a, b| a.family_name().cmp(b.family_name()));
    }

    /// Removes the store of a deleted family; returns it.
    pub(crate) fn remove_store(&self, family_id: u32) -> Option<Arc<Store>> {
        let mut stores = self.stores.write();
        let index = stores.iter().position(|s| s.family_id() == family_id)?;
        Some(stores.remove(index))
    }

    /// Every mutation with a sequence <= this is in the region's files.
    pub(crate) fn flushed_sequence(&self) -> u64 {
        self.flushed_sequence.load(Ordering::Acquire)
    }

    /// True when every row of a file with this meta lies in the region
    /// (false for files a split left shared with the sibling).
    pub(crate) fn owns(&self, meta: &crate::hfile::FileMeta) -> bool {
        meta.first_row.as_slice() >= self.start.as_slice()
            && (self.end.is_empty() || meta.last_row.as_slice() < self.end.as_slice())
    }

    /// True when some store still reads files shared with a sibling.
    pub(crate) fn has_shared_files(&self) -> bool {
        self.stores
            .read()
            .iter()
            .any(|s| s.version().files().any(|(_, f)| !self.owns(f.meta())))
    }

    /// Bytes of the files that are the region's own.
    pub(crate) fn own_file_bytes(&self) -> u64 {
        self.stores
            .read()
            .iter()
            .map(|s| {
                s.version()
                    .files()
                    .filter(|(_, f)| self.owns(f.meta()))
                    .map(|(_, f)| f.meta().size)
                    .sum::<u64>()
            })
            .sum()
    }

    /// Records a completed flush.
    pub(crate) fn set_flushed_sequence(&self, sequence: u64) {
        self.flushed_sequence.fetch_max(sequence, Ordering::AcqRel);
    }

    /// Bytes held by the region's memstores.
    pub(crate) fn memstore_bytes(&self) -> u64 {
        self.memstore_bytes.load(Ordering::Relaxed)
    }

    /// Bytes of the memstores no running flush is writing out: what a
    /// region's flush size is compared with. A writer that counted the
    /// frozen memstores too would ask for a flush on every write during a
    /// flush, and the queued flush would then write whatever little came in
    /// meanwhile as one more small L0 file (HBase's `flushRequested` flag
    /// keeps the same rule).
    pub(crate) fn unflushed_memstore_bytes(&self) -> u64 {
        self.memstore_bytes()
            .saturating_sub(self.flushing_bytes.load(Ordering::Relaxed))
    }

    /// Records the bytes of the memstores a flush froze (0 when it ends,
    /// installed or failed).
    pub(crate) fn set_flushing_bytes(&self, bytes: u64) {
        self.flushing_bytes.store(bytes, Ordering::Relaxed);
    }

    /// Counts memstore growth (positive) or a flush freeing memory (negative).
    pub(crate) fn add_memstore_bytes(&self, delta: i64) {
        if delta >= 0 {
            self.memstore_bytes
                .fetch_add(delta as u64, Ordering::Relaxed);
        } else {
            let _ = self
                .memstore_bytes
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                    Some(v.saturating_sub(delta.unsigned_abs()))
                });
        }
    }

    /// Cells held by the region's memstores.
    pub(crate) fn memstore_cells(&self) -> u64 {
        self.stores.read().iter().map(|s| s.memstore_cells()).sum()
    }

    /// Most L0 files of any store.
    pub(crate) fn l0_files(&self) -> usize {
        self.l0_files.load(Ordering::Relaxed)
    }

    /// Recomputes the L0 high-water mark after a flush or compaction.
    pub(crate) fn refresh_l0_files(&self) {
        let n = self
            .stores
            .read()
            .iter()
            .map(|s| s.version().levels.first().map_or(0, Vec::len))
            .max()
            .unwrap_or(0);
        self.l0_files.store(n, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(id: u32, name: &[u8]) -> Arc<Store> {
        Arc::new(Store::new(id, name, 0, Vec::new()))
    }

    #[test]
    fn ranges_and_stores() {
        let r = Region::new(
            1,
            9,
            b"b".to_vec(),
            b"d".to_vec(),
            vec![store(2, b"z"), store(1, b"a")],
            0,
        );
        assert!(r.contains(b"b") && r.contains(b"c\xff") && !r.contains(b"d") && !r.contains(b"a"));
        assert_eq!(r.stores()[0].family_name(), b"a");
        r.add_store(3, b"m");
        assert_eq!(r.stores()[1].family_name(), b"m");
        assert!(r.remove_store(1).is_some());
        assert!(r.store(1).is_none());
        let last = Region::new(2, 9, b"x".to_vec(), Vec::new(), Vec::new(), 7);
        assert!(last.contains(b"\xff\xff"));
        assert_eq!(last.flushed_sequence(), 7);
        last.add_memstore_bytes(100);
        last.add_memstore_bytes(-150);
        assert_eq!(last.memstore_bytes(), 0);
    }
}
