//! Maintenance: the jobs that keep regions in shape, and the supervisor that
//! decides what runs next.
//!
//! * [`flush`]: a region's memstores become L0 files;
//! * [`split`]: a region becomes two daughters;
//! * compaction jobs and picking live in `crate::compaction`;
//! * [`stall`]: what a write waits for before it may go on;
//! * [`pool`]: the worker threads and their queue.
//!
//! The [`Supervisor`] owns the pool. Jobs take the services core and return
//! what they did; the supervisor decides the follow-ups: after a flush,
//! compact if the region's stores score high enough, split if the region grew
//! past its size, and release the WAL segments no region needs any more.
//! Workers hold a weak reference to the supervisor, never to the database.
//! A job's failure is kept, typed, for [`Supervisor::last_error`] (which
//! `Db::stats` counts and stalled writers return), never printed. A job that
//! fails on storage (an I/O error, damage, a failed WAL or manifest edit)
//! stops every change to the database until it is reopened
//! (`Services::fail_change`, `docs/reliability.md`).

pub(crate) mod flush;
pub(crate) mod ingest;
pub(crate) mod merge;
pub(crate) mod pool;
pub(crate) mod split;
pub(crate) mod stall;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::catalog::{Catalog, TableInner};
use crate::compaction;
use crate::core::Services;
use crate::error::Result;
use crate::region::Region;
use pool::Pool;

/// After a flush, a WAL segment holding at least this many bytes, all of
/// them flushed, is sealed and deleted (smaller ones wait until they fill
/// or another flush), in bytes.
const WAL_ROLL_MIN_BYTES: u64 = 1024 * 1024;

/// Decides and schedules the maintenance of every region of a database.
pub(crate) struct Supervisor {
    services: Arc<Services>,
    catalog: Arc<Catalog>,
    pool: Arc<Pool>,
    /// A flush for memory pressure is queued (avoids rescanning regions on
    /// every write).
    memory_flush_pending: AtomicBool,
    /// The region normalizer runs after flushes (`DbOptions::region_normalizer`,
    /// switched by `Db::set_normalizer`).
    normalizer: AtomicBool,
    /// Writers waiting at a hard limit now, and since when some have been
    /// (see [`stall::StalledWriter`]).
    stalled: parking_lot::Mutex<stall::Stalls>,
}

impl Supervisor {
    /// A supervisor of the regions of `catalog`, whose workers are started
    /// by [`Supervisor::start`].
    pub(crate) fn new(services: Arc<Services>, catalog: Arc<Catalog>) -> Supervisor {
        Supervisor {
            pool: Arc::new(Pool::new(services.options.clone())),
            normalizer: AtomicBool::new(services.options.region_normalizer),
            services,
            catalog,
            memory_flush_pending: AtomicBool::new(false),
            stalled: parking_lot::Mutex::default(),
        }
    }

    /// Starts the workers (they hold the supervisor weakly).
    pub(crate) fn start(self: &Arc<Self>) -> Result<()> {
        self.pool
            .start(
                Arc::downgrade(self),
                self.services.options.background_threads,
            )
            .map_err(|e| crate::error::Error::io("starting background workers", e))
    }

    /// The worker pool's queue lengths and running jobs (`Pool::backlog`).
    pub(crate) fn backlog(&self) -> (usize, usize, usize, usize, usize) {
        self.pool.backlog()
    }

    /// The services the jobs run with.
    pub(crate) fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// Schedules the work a region may need after open (replay filled its
    /// memstores, its stores may need compaction).
    pub(crate) fn schedule_after_open(&self) {
        for (table, region) in self.catalog.all_regions() {
            let flush_size = table
                .state
                .read()
                .descriptor
                .get_memstore_flush_size_bytes();
            if region.memstore_bytes() >= flush_size {
                self.pool.schedule_flush(&table, &region);
            }
            if compaction::region_score(&region, &self.services.options) >= 1.0 {
                self.pool.schedule_compaction(&table, &region);
            }
        }
    }

    /// Queues a compaction of every region whose stores have work that time
    /// alone made due (`compaction::timed`): what the compaction checker
    /// runs every `DbOptions::compaction_check_interval`.
    pub(crate) fn schedule_timed_compactions(&self) {
        if self.services.is_closed() || self.services.options.read_only {
            return;
        }
        for (table, region) in self.catalog.all_regions() {
            if table.dropped.load(Ordering::Acquire)
                || !table.enabled.load(Ordering::Acquire)
                || region.schedule.is_retired()
            {
                continue;
            }
            let due = compaction::timed_work_due(&self.services, &table.state.read(), &region);
            if due {
                self.pool.schedule_compaction(&table, &region);
            }
        }
    }

    /// Flushes `region` now (in the caller's thread) and schedules what the
    /// flush makes necessary.
    pub(crate) fn flush(&self, table: &Arc<TableInner>, region: &Arc<Region>) -> Result<()> {
        if table.dropped.load(Ordering::Acquire) || region.schedule.is_retired() {
            return Ok(());
        }
        let flushed = flush::flush_region(&self.services, table, region);
        self.memory_flush_pending.store(false, Ordering::Release);
        if flushed.map_err(|e| self.services.fail_change(e))? {
            self.after_flush(table, region)
                .map_err(|e| self.services.fail_change(e))?;
        }
        Ok(())
    }

    /// After a flush of `region`: compact if its stores score high enough,
    /// split if it grew past the table's region size, and release the WAL
    /// segments every region has flushed past.
    fn after_flush(&self, table: &Arc<TableInner>, region: &Arc<Region>) -> Result<()> {
        if compaction::region_score(region, &self.services.options) >= 1.0 {
            self.pool.schedule_compaction(table, region);
        }
        let max_region_size = table.state.read().descriptor.get_max_region_size_bytes();
        if !region.has_shared_files() && region.own_file_bytes() > max_region_size {
            self.pool.schedule_split(table, region);
        }
        if self.normalizer.load(Ordering::Relaxed) {
            self.pool.schedule_normalize(table);
        }
        self.release_wal()
    }

    /// Turns the region normalizer on or off; returns whether it was on.
    pub(crate) fn set_normalizer(&self, on: bool) -> bool {
        self.normalizer.swap(on, Ordering::AcqRel)
    }

    /// True while the region normalizer runs after flushes.
    pub(crate) fn normalizer_enabled(&self) -> bool {
        self.normalizer.load(Ordering::Acquire)
    }

    /// Merges the pairs of small adjacent regions of `table` the normalizer
    /// picks ([`merge::normalizer_plan`]); returns the merges done.
    pub(crate) fn normalize(&self, table: &Arc<TableInner>) -> Result<usize> {
        if table.dropped.load(Ordering::Acquire) || !table.enabled.load(Ordering::Acquire) {
            return Ok(0);
        }
        let options = &self.services.options;
        let regions = table.state.read().regions.clone();
        let plan = merge::normalizer_plan(
            &regions,
            options.normalizer_merge_below_bytes,
            options.normalizer_min_regions,
            options.normalizer_min_region_age,
        );
        let mut merged = 0;
        for (first, second) in plan {
            if self.merge(table, &first, &second)?.is_some() {
                merged += 1;
            }
        }
        Ok(merged)
    }

    /// Merges `first` and the region right after it, `second`, now; see
    /// [`merge::merge_regions`]. `None` when either is gone meanwhile (split,
    /// merged or dropped).
    pub(crate) fn merge(
        &self,
        table: &Arc<TableInner>,
        first: &Arc<Region>,
        second: &Arc<Region>,
    ) -> Result<Option<Arc<Region>>> {
        self.services.check_writable()?;
        let _gate = table.split_gate.write();
        let present = {
            let state = table.state.read();
            state
                .regions
                .iter()
                .position(|r| Arc::ptr_eq(r, first))
                .is_some_and(|at| {
                    state
                        .regions
                        .get(at + 1)
                        .is_some_and(|r| Arc::ptr_eq(r, second))
                })
        };
        if !present || first.schedule.is_retired() || second.schedule.is_retired() {
            if first.end() != second.start() || first.end().is_empty() {
                return Err(crate::error::Error::RegionsNotAdjacent {
                    table: table.name.clone(),
                    first: first.id(),
                    second: second.id(),
                });
            }
            return Ok(None);
        }
        let _first_slot = self.compaction_slot(first)?;
        let _second_slot = self.compaction_slot(second)?;
        let merged = merge::merge_regions(&self.services, table, first, second)?;
        if compaction::region_score(&merged, &self.services.options) >= 1.0 {
            self.pool.schedule_compaction(table, &merged);
        }
        Ok(Some(merged))
    }

    /// Deletes the WAL segments every region has flushed past.
    fn release_wal(&self) -> Result<()> {
        // Mutations still being applied have sequences above the read point.
        let mut bound = self.services.mvcc.read_point();
        for (_, region) in self.catalog.all_regions() {
            if region.memstore_cells() > 0 {
                bound = bound.min(region.flushed_sequence());
            }
        }
        // Everything in the segment being written is flushed: start a new
        // one so this one can go too, instead of holding up to a segment of
        // dead log on disk until it fills.
        let wal = self.services.wal()?;
        let (current_bytes, current_max_sequence) = wal.current_segment();
        if current_bytes >= WAL_ROLL_MIN_BYTES && current_max_sequence <= bound {
            wal.roll()?;
        }
        wal.release_through(bound)
    }

    /// Splits `region` at `key` (default: its middle key) now, holding its
    /// compaction slot; see [`split::split_region`]. Returns false when
    /// there was nothing to split.
    pub(crate) fn split(
        &self,
        table: &Arc<TableInner>,
        region: &Arc<Region>,
        key: Option<Vec<u8>>,
    ) -> Result<bool> {
        self.services.check_writable()?;
        let _gate = table.split_gate.write();
        let present = table
            .state
            .read()
            .regions
            .iter()
            .any(|r| Arc::ptr_eq(r, region));
        if !present || region.schedule.is_retired() {
            return Ok(false);
        }
        let slot = self.compaction_slot(region)?;
        let Some(daughters) = split::split_region(&self.services, table, region, key)
            .map_err(|e| self.services.fail_change(e))?
        else {
            drop(slot);
            self.compact_if_wanted(table, region);
            return Ok(false);
        };
        // Compaction rewrites the shared files into each daughter's own.
        for daughter in &daughters {
            self.pool.schedule_compaction(table, daughter);
        }
        Ok(true)
    }

    /// After a bulk load brought `region` files: compact if its stores score
    /// high enough, split if it grew past the table's region size.
    pub(crate) fn after_bulk_load(&self, table: &Arc<TableInner>, region: &Arc<Region>) {
        region.activity.bulk_loads.fetch_add(1, Ordering::Relaxed);
        if compaction::region_score(region, &self.services.options) >= 1.0 {
            self.pool.schedule_compaction(table, region);
        }
        let max_region_size = table.state.read().descriptor.get_max_region_size_bytes();
        if !region.has_shared_files() && region.own_file_bytes() > max_region_size {
            self.pool.schedule_split(table, region);
        }
    }

    /// Runs one background compaction of the most urgent store of `region`
    /// (the caller holds its slot); returns whether the region has more to
    /// compact.
    pub(crate) fn compact_once(
        &self,
        table: &Arc<TableInner>,
        region: &Arc<Region>,
    ) -> Result<bool> {
        if table.dropped.load(Ordering::Acquire)
            || self.services.is_closed()
            || self.services.options.read_only
            || region.schedule.is_retired()
        {
            return Ok(false);
        }
        self.services.check_writable()?;
        let state = table.state.read().clone();
        compaction::compact_most_urgent(&self.services, &state, region)
            .map_err(|e| self.services.fail_change(e))
    }

    /// Compacts `region` now, in the caller's thread, after waiting for its
    /// compaction slot (a queued or running background compaction gives it
    /// back when done). A minor compaction moves L0 into L1 and then follows
    /// the scores; a major one rewrites each store into one sorted run at
    /// its deepest level.
    pub(crate) fn compact_now(
        &self,
        table: &Arc<TableInner>,
        region: &Arc<Region>,
        major: bool,
    ) -> Result<()> {
        self.services.check_writable()?;
        let slot = self.compaction_slot(region)?;
        if region.schedule.is_retired() {
            // A split replaced the region meanwhile: its daughters compact.
            return Ok(());
        }
        let state = table.state.read().clone();
        let outcome = compaction::compact_region_now(&self.services, &state, region, major)
            .map_err(|e| self.services.fail_change(e));
        drop(slot);
        self.compact_if_wanted(table, region);
        outcome
    }

    /// Queues a compaction of `region` when one was asked for while its
    /// compaction slot was taken (the caller has just given it back).
    fn compact_if_wanted(&self, table: &Arc<TableInner>, region: &Arc<Region>) {
        if region.schedule.take_compaction_wanted() && !region.schedule.is_retired() {
            self.pool.schedule_compaction(table, region);
        }
    }

    /// The region's compaction slot, for a compaction or split the caller
    /// runs now: a queued background compaction is dropped and its slot
    /// taken over, a running one is waited for.
    pub(crate) fn compaction_slot<'r>(
        &self,
        region: &'r Arc<Region>,
    ) -> Result<crate::region::CompactionSlot<'r>> {
        region.schedule.wait_for_compaction_slot(
            || self.services.is_closed(),
            || self.pool.cancel_queued_compaction(region),
        )
    }

    /// Waits until no job is queued or running.
    pub(crate) fn wait_idle(&self) {
        self.pool.wait_idle();
    }

    /// The last failure of a background job, if any.
    pub(crate) fn last_error(&self) -> Option<crate::error::Error> {
        self.pool.last_error()
    }

    /// Stops taking jobs, lets running ones finish, joins the workers.
    pub(crate) fn shutdown(&self) {
        self.pool.shutdown();
    }

    /// Runs one job a worker took from the queue.
    fn run(&self, job: pool::Job) -> Result<()> {
        match job {
            pool::Job::Flush(table, region) => self.flush(&table, &region),
            pool::Job::Split(table, region) => {
                let outcome = self.split(&table, &region, None);
                region.schedule.split_dequeued();
                outcome.map(|_| ())
            }
            pool::Job::Normalize(table) => {
                table.normalize_queued.store(false, Ordering::Release);
                self.normalize(&table).map(|_| ())
            }
            pool::Job::Compact(table, region) => {
                let outcome = self.compact_once(&table, &region);
                region.schedule.give_back_compaction_slot();
                // More to do, or files came while this one ran (a flush
                // could not queue a compaction then): look again (the
                // score is recomputed then). A failed run is not retried
                // here; the next flush asks again.
                let wanted = region.schedule.take_compaction_wanted();
                if matches!(outcome, Ok(true)) || (outcome.is_ok() && wanted) {
                    self.pool.schedule_compaction(&table, &region);
                }
                outcome.map(|_| ())
            }
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.pool.shutdown();
    }
}

/// Every file of `region`'s stores as the manifest records it: what a split
/// hands to both daughters and a merge to the merged region.
fn region_files(region: &Region) -> Vec<crate::manifest::StoreFile> {
    region
        .stores()
        .iter()
        .flat_map(|store| {
            let version = store.version();
            version
                .files()
                .map(|(level, file)| crate::manifest::StoreFile {
                    family_id: store.family_id(),
                    level: level as u8,
                    meta: file.meta().clone(),
                })
                .collect::<Vec<_>>()
        })
        .collect()
}
