//! A table handle: the data operations, routing rows to regions.
//!
//! Every operation validates its input completely before it takes the row
//! lock, and a mutation is committed as one unit, so a failed call leaves the
//! table unchanged. Read-modify-write operations (increment, append,
//! check-and-mutate, deletes of the latest version) read and write under the
//! row lock; every mutation takes it, so they serialize with plain writes of
//! the same row.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::catalog::{TableInner, TableState};
use crate::cell::RowResult;
use crate::core::Services;
use crate::error::{Error, Result};
use crate::maintenance::Supervisor;
use crate::metrics::{Latencies, Sampled};
use crate::ops::{Delete, Get, Put, ReadOptions, Scan};
use crate::options::TableDescriptor;
use crate::read::cursor::ScanCursor;
use crate::read::direct::GetScratch;
use crate::read::get::{Routed, get_row, get_row_into};
use crate::read::parallel::{ParallelScan, Parts};
use crate::read::plan::{ScanPlan, plan_parts, plan_scan};
use crate::read::sink::RowSink;
use crate::read::stream::{RowStream, Scanner};
use crate::read_snapshot::HeldReadPoint;
use crate::region::Region;
use crate::region::RegionActivity;
use crate::store::active_memstore_limit;
use crate::write::{PreparedRow, commit};

/// A region of a table as reported by [`Table::regions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionInfo {
    /// Region id, unique in the database.
    pub id: u64,
    /// Inclusive start key (empty for the first region).
    pub start_key: Vec<u8>,
    /// Exclusive end key (empty for the last region).
    pub end_key: Vec<u8>,
    /// Bytes of memory held by the region's memstores.
    pub memstore_bytes: u64,
    /// Cells in the region's memstores.
    pub memstore_cells: u64,
    /// HFiles per level (L0 first), all families together.
    pub files_per_level: Vec<usize>,
    /// Bytes of the region's HFiles.
    pub file_bytes: u64,
    /// Cells in the region's HFiles (a file a split left shared with the
    /// sibling counts whole in both until compaction rewrites it).
    pub file_cells: u64,
    /// What the region has served and undergone since the database opened
    /// (or since the split or merge that made it).
    pub activity: RegionActivity,
}

impl RegionInfo {
    /// The region's size: its files and memstores, in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.file_bytes + self.memstore_bytes
    }

    /// Cells in the region's files and memstores.
    pub fn cells(&self) -> u64 {
        self.file_cells + self.memstore_cells
    }
}

/// The order in which [`Table::scan_parallel`] hands back rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanOrder {
    /// The scan's order (row key ascending, or descending when reversed).
    KeyOrder,
    /// As the region parts produce them: rows of different parts mix.
    AsReady,
}

/// A handle to one table. Cheap to clone; every clone sees the same table.
#[derive(Clone)]
pub struct Table {
    pub(crate) services: Arc<Services>,
    pub(crate) supervisor: Arc<Supervisor>,
    pub(crate) inner: Arc<TableInner>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("name", &self.inner.name)
            .finish()
    }
}

impl Table {
    /// The table's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The table's state for metadata reads (works while disabled).
    pub(super) fn metadata(&self) -> Result<Arc<TableState>> {
        self.check_open()?;
        Ok(self.inner.state.read().clone())
    }

    /// Fails once the database is closed or the table dropped.
    fn check_open(&self) -> Result<()> {
        if self.services.is_closed() {
            return Err(Error::Closed);
        }
        if self.inner.dropped.load(Ordering::Acquire) {
            return Err(Error::TableNotFound {
                table: self.inner.name.clone(),
            });
        }
        Ok(())
    }

    /// Fails where [`Table::state`] would: the database closed, the table
    /// dropped or disabled.
    fn check_usable(&self) -> Result<()> {
        self.check_open()?;
        self.check_enabled()
    }

    /// The table's state for reads and writes (fails while disabled).
    pub(crate) fn state(&self) -> Result<Arc<TableState>> {
        let state = self.metadata()?;
        self.check_enabled()?;
        Ok(state)
    }

    /// [`Table::state`] with a generation no newer than it (see
    /// [`StateCell::snapshot`](crate::catalog::StateCell::snapshot)).
    fn state_and_generation(&self) -> Result<(u64, Arc<TableState>)> {
        self.check_open()?;
        let snapshot = self.inner.state.snapshot();
        self.check_enabled()?;
        Ok(snapshot)
    }

    /// Fails while the table is disabled.
    fn check_enabled(&self) -> Result<()> {
        if !self.inner.enabled.load(Ordering::Acquire) {
            return Err(Error::TableDisabled {
                table: self.inner.name.clone(),
            });
        }
        Ok(())
    }

    /// [`Table::state`] through `kept`, a state a reader keeps from one
    /// read to the next with the generation it was taken at: it is taken
    /// afresh only when the table's state was replaced since (a split, a
    /// merge, an alter), so the usual read takes no lock and no reference
    /// count.
    pub(crate) fn state_kept<'k>(
        &self,
        kept: &'k mut Option<(u64, Arc<TableState>)>,
    ) -> Result<&'k TableState> {
        self.check_usable()?;
        let generation = self.inner.state.generation();
        if kept
            .as_ref()
            .is_some_and(|(kept_generation, _)| *kept_generation != generation)
        {
            // Replaced since: dropped here, taken afresh below.
            *kept = None;
        }
        let (_, state) = kept.get_or_insert_with(|| self.inner.state.snapshot());
        Ok(state)
    }

    /// True unless the table is disabled.
    pub fn is_enabled(&self) -> bool {
        self.inner.enabled.load(Ordering::Acquire)
    }

    /// The table's current descriptor.
    pub fn descriptor(&self) -> Result<TableDescriptor> {
        Ok(self.metadata()?.descriptor.clone())
    }

    /// What the table has served and undergone since the database opened: its regions'
    /// counters added up, plus those of the regions it had before splits, merges and
    /// restores, so that no total ever goes down (a region those make starts at zero).
    pub fn activity(&self) -> Result<RegionActivity> {
        let state = self.metadata()?;
        Ok(state.total_activity(state.regions.iter().map(|r| r.activity_snapshot())))
    }

    /// The table's regions in key order.
    pub fn regions(&self) -> Result<Vec<RegionInfo>> {
        Ok(self
            .metadata()?
            .regions
            .iter()
            .map(|r| {
                let mut files_per_level = vec![0; crate::store::LEVELS];
                let mut file_bytes = 0;
                let mut file_cells = 0;
                for store in r.stores() {
                    for (level, file) in store.version().files() {
                        if let Some(n) = files_per_level.get_mut(level) {
                            *n += 1;
                        }
                        file_bytes += file.meta().size;
                        file_cells += file.meta().cells;
                    }
                }
                RegionInfo {
                    id: r.id(),
                    start_key: r.start().to_vec(),
                    end_key: r.end().to_vec(),
                    memstore_bytes: r.memstore_bytes(),
                    memstore_cells: r.memstore_cells(),
                    files_per_level,
                    file_bytes,
                    file_cells,
                    activity: r.activity_snapshot(),
                }
            })
            .collect())
    }

    pub(super) fn region<'s>(state: &'s TableState, row: &[u8]) -> Result<&'s Arc<Region>> {
        Self::region_with_stores(state, row).map(|(region, _)| region)
    }

    /// [`Table::region`], with the region's stores as the state has them.
    pub(super) fn region_with_stores<'s>(state: &'s TableState, row: &[u8]) -> Result<Routed<'s>> {
        state
            .region_with_stores(row)
            .ok_or_else(|| Error::TableNotFound {
                table: state.descriptor.name().to_owned(),
            })
    }

    pub(super) fn lock_row(&self, row: &[u8]) -> crate::mvcc::RowLockGuard<'_> {
        self.services.row_locks.lock(self.inner.id, [row])
    }

    /// Throttles (holding no lock), then takes the split gate and the
    /// current state: the regions this state routes to cannot be split away
    /// until the returned guard is dropped.
    pub(super) fn writable(
        &self,
        row: &[u8],
    ) -> Result<(parking_lot::RwLockReadGuard<'_, ()>, Arc<TableState>)> {
        let (generation, state) = self.state_and_generation()?;
        self.throttle(&state, row)?;
        let gate = self.inner.split_gate.read_recursive();
        // The state is taken again only if a split, merge or alter replaced
        // it while the write waited (taking it twice was 3.5% of a small
        // put's CPU); the checks `state` makes are repeated either way.
        if self.inner.state.generation() == generation {
            self.check_usable()?;
            return Ok((gate, state));
        }
        Ok((gate, self.state()?))
    }

    /// Waits (before taking row locks) while the region of `row` must not
    /// take writes: L0 too deep, memstores full.
    pub(super) fn throttle(&self, state: &TableState, row: &[u8]) -> Result<()> {
        let region = Self::region(state, row)?;
        self.supervisor.before_write(
            &self.inner,
            region,
            state.descriptor.get_memstore_flush_size_bytes(),
        )
    }

    /// Commits `rows` (whose rows the caller locked) and schedules the
    /// flushes the written regions now need.
    pub(super) fn commit_and_notify(&self, state: &TableState, rows: &[PreparedRow]) -> Result<()> {
        commit(&self.services, rows, self.active_memstore_limit(state))?;
        self.notify_written(state, rows);
        Ok(())
    }

    /// The bytes at which a writer freezes a store's active memstore, for
    /// this table's flush size and the database's memstore parts.
    pub(super) fn active_memstore_limit(&self, state: &TableState) -> Option<u64> {
        active_memstore_limit(
            state.descriptor.get_memstore_flush_size_bytes(),
            self.services.options.memstore_parts,
        )
    }

    /// Schedules the flushes the regions of `rows`, just written, now need.
    pub(super) fn notify_written(&self, state: &TableState, rows: &[PreparedRow]) {
        let flush_size = state.descriptor.get_memstore_flush_size_bytes();
        let mut last = None;
        for row in rows {
            if last != Some(row.region.id()) {
                self.supervisor
                    .after_write(&self.inner, row.region, flush_size);
                last = Some(row.region.id());
            }
        }
    }

    /// Writes a put. Returns once it is visible (and, with `SyncWal`, durable).
    pub fn put(&self, put: &Put) -> Result<()> {
        let (_gate, state) = self.writable(put.row())?;
        let prepared = self.prepare_put(&state, put, self.services.now_ms())?;
        let _lock = self.lock_row(put.row());
        self.commit_and_notify(&state, std::slice::from_ref(&prepared))
    }

    /// Writes one cell, `family:qualifier` of `row`, at the current time
    /// with the table's durability: the same write as
    /// `put(&Put::new(row).add(family, qualifier, value))`, with the same
    /// errors, but the bytes are borrowed rather than copied into a [`Put`]
    /// first (RocksDB's `put(key, value)` shape; a `Put` costs an allocation
    /// and a copy of the value, ~6% of a small put's time).
    pub fn put_value(
        &self,
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        value: &[u8],
    ) -> Result<()> {
        let (_gate, state) = self.writable(row)?;
        let prepared = self.prepare_value(
            &state,
            row,
            family,
            qualifier,
            value,
            self.services.now_ms(),
        )?;
        let _lock = self.lock_row(row);
        self.commit_and_notify(&state, std::slice::from_ref(&prepared))
    }

    /// Writes delete markers.
    pub fn delete(&self, delete: &Delete) -> Result<()> {
        let (_gate, state) = self.writable(&delete.row)?;
        Self::validate_delete(&state, delete)?;
        let _lock = self.lock_row(&delete.row);
        let prepared = self.prepare_delete(&state, delete, self.services.now_ms())?;
        self.commit_and_notify(&state, std::slice::from_ref(&prepared))
    }

    /// Reads the row of `get` at the current read point (see
    /// [`get_row`]).
    pub(super) fn get_in(&self, state: &TableState, get: &Get, now_ms: i64) -> Result<RowResult> {
        let routed = Self::region_with_stores(state, &get.row)?;
        let (read_point, _held) = self.read_point_of(&get.read)?;
        get_row(state, routed, get, read_point, now_ms)
    }

    /// The read point of a read with options `read`: its read snapshot's
    /// (held for as long as the returned hold lives, which the read keeps
    /// until it ends) or the current one.
    pub(crate) fn read_point_of(
        &self,
        read: &ReadOptions,
    ) -> Result<(u64, Option<Arc<HeldReadPoint>>)> {
        match &read.snapshot {
            None => Ok((self.services.mvcc.read_point(), None)),
            Some(snapshot) => {
                let held = snapshot.hold(&self.services.snapshots)?;
                Ok((held.sequence(), Some(Arc::new(held))))
            }
        }
    }

    /// Reads the row of `get` into `sink` (see [`get_row_into`]): what
    /// [`Table::get_in`] does, for sinks that lend.
    pub(super) fn get_into<S: RowSink>(
        &self,
        state: &TableState,
        get: &Get,
        now_ms: i64,
        sink: &mut S,
        scratch: &mut GetScratch,
    ) -> Result<bool> {
        let timing = Latencies::start(Sampled::Get);
        let routed = Self::region_with_stores(state, &get.row)?;
        let (read_point, _held) = self.read_point_of(&get.read)?;
        let found = get_row_into(state, routed, get, read_point, now_ms, sink, scratch)?;
        Latencies::finish(&self.services.latencies.get, timing);
        Ok(found)
    }

    /// Reads one row; an absent row gives an empty result.
    pub fn get(&self, get: &Get) -> Result<RowResult> {
        let timing = Latencies::start(Sampled::Get);
        let state = self.state()?;
        let row = self.get_in(&state, get, self.read_now_ms(&state))?;
        Latencies::finish(&self.services.latencies.get, timing);
        Ok(row)
    }

    /// The clock reading a read resolves TTLs against. Only TTL expiry
    /// looks at it, so for a table with no TTL family the clock is not read
    /// (it showed in profiles of gets of absent rows) and 0 stands in.
    pub(super) fn read_now_ms(&self, state: &TableState) -> i64 {
        if state.has_ttl() {
            self.services.now_ms()
        } else {
            0
        }
    }

    /// True when the get would return at least one cell.
    pub fn exists(&self, get: &Get) -> Result<bool> {
        Ok(!self.get(get)?.is_empty())
    }

    /// The scan cut at region boundaries: one scan per region that can hold
    /// its rows, in scan order, to run in parallel (what HBase's
    /// `TableInputFormat` splits are). Run one after another they return
    /// exactly the scan's rows, except that a `limit` (or `PageFilter`)
    /// applies to each part on its own. Parts still read correctly after the
    /// regions split again; they may then span more than one region.
    pub fn scan_splits(&self, scan: &Scan) -> Result<Vec<Scan>> {
        let state = self.state()?;
        let mut parts: Vec<Scan> = state
            .regions
            .iter()
            .filter_map(|region| scan.within(region.start(), region.end()))
            .collect();
        if scan.reversed {
            parts.reverse();
        }
        Ok(parts)
    }

    /// Starts a scan; rows come from the returned iterator.
    pub fn scan(&self, scan: &Scan) -> Result<Scanner> {
        let (state, plan) = self.plan_whole_scan(scan)?;
        let timer = self.services.latencies.scan_timer();
        Ok(Scanner::new(state, plan)?.timed(timer))
    }

    /// Starts a scan whose region parts are read on `threads` threads
    /// (0: the machine's parallelism; never more than the parts). Rows come
    /// in the scan's order with [`ScanOrder::KeyOrder`], exactly the rows
    /// [`Table::scan`] returns, or as the parts produce them with
    /// [`ScanOrder::AsReady`] (for aggregations). The parts read one
    /// snapshot of the table, as a serial scan does. The scan's `limit`
    /// applies to the whole scan (with `AsReady`, which rows it keeps is
    /// not defined). A filter whose result depends on reading rows in order
    /// (a `PageFilter`, or `WHILE`, which ends the whole scan) makes the
    /// scan one part on one thread. Dropping the scan stops its threads.
    pub fn scan_parallel(
        &self,
        scan: &Scan,
        threads: usize,
        order: ScanOrder,
    ) -> Result<ParallelScan> {
        let timer = self.services.latencies.scan_timer();
        let parts = self.scan_parts(scan)?;
        Ok(ParallelScan::start(
            parts,
            threads,
            order == ScanOrder::KeyOrder,
            scan.limit,
            scan.batch,
        )?
        .timed(timer))
    }

    /// The scan planned per region part, in scan order, at one read point
    /// over one table state; one part when the scan's filter depends on
    /// reading rows in order. The whole scan is planned first, so that a
    /// bad scan fails as [`Table::scan`] fails.
    pub(crate) fn scan_parts(&self, scan: &Scan) -> Result<Parts> {
        let state = self.state()?;
        let (read_point, held) = self.read_point_of(&scan.read)?;
        let now = self.read_now_ms(&state);
        let mut parts = plan_parts(state, scan, read_point, now)?;
        for plan in &mut parts.plans {
            plan.snapshot = held.clone();
        }
        Ok(parts)
    }

    /// The whole scan as one part.
    pub(crate) fn whole_scan_as_one_part(&self, scan: &Scan) -> Result<Parts> {
        let (state, whole) = self.plan_whole_scan(scan)?;
        Ok(Parts {
            state,
            plans: vec![whole],
        })
    }

    /// The table's current state and `scan` planned over it at the current
    /// read point.
    fn plan_whole_scan(&self, scan: &Scan) -> Result<(Arc<TableState>, ScanPlan)> {
        let state = self.state()?;
        let (read_point, held) = self.read_point_of(&scan.read)?;
        let mut plan = plan_scan(&state, scan, read_point, self.read_now_ms(&state))?;
        plan.snapshot = held;
        Ok((state, plan))
    }

    /// Starts a scan that lends its rows instead of returning owned ones:
    /// the same rows as [`Table::scan`], without an allocation per row or
    /// cell (see [`ScanCursor`]). The cheapest way to read many rows.
    pub fn scan_cursor(&self, scan: &Scan) -> Result<ScanCursor> {
        let timer = self.services.latencies.scan_timer();
        let (state, plan) = self.plan_whole_scan(scan)?;
        Ok(ScanCursor::new(RowStream::new(state, plan)?.timed(timer)))
    }
}

mod admin;
mod atomic;
mod bulk;
mod cut_keys;
mod ingest;
mod mutation;
mod reader;
mod salted;
pub use reader::RowReader;
