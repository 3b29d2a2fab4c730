//! The worker pool that runs flushes, splits and compactions.
//!
//! Flushes run before splits and compactions (they free memory and unblock
//! writers); among queued compactions the region whose stores score highest
//! runs first. A region has at most one compaction queued or running at a
//! time (its compaction slot, see `RegionSchedule`). Queues are bounded by
//! the regions: each region is queued at most once per kind of job.
//!
//! Workers share the pool and hold the supervisor weakly, upgrading it only
//! while they run a job, so dropping the last database handle drops the
//! supervisor, whose drop shuts the pool down and ends them.
//!
//! One more thread, the compaction checker, wakes every
//! `DbOptions::compaction_check_interval` and asks the supervisor to queue
//! compactions for the regions whose work time made due (expired files,
//! periodic major compactions); it holds the supervisor the same way.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::Supervisor;
use crate::catalog::TableInner;
use crate::error::Error;
use crate::options::DbOptions;
use crate::region::Region;

/// A job a worker runs.
pub(crate) enum Job {
    Flush(Arc<TableInner>, Arc<Region>),
    Compact(Arc<TableInner>, Arc<Region>),
    Split(Arc<TableInner>, Arc<Region>),
    /// A normalizer run over one table (merges small adjacent regions).
    Normalize(Arc<TableInner>),
}

impl Job {
    /// What the job is, its table's name and its region's id (none for a
    /// normalizer run), for an event about it.
    fn describe(&self) -> (&'static str, String, Option<u64>) {
        match self {
            Job::Flush(table, region) => ("flush", table.name.clone(), Some(region.id())),
            Job::Compact(table, region) => ("compaction", table.name.clone(), Some(region.id())),
            Job::Split(table, region) => ("split", table.name.clone(), Some(region.id())),
            Job::Normalize(table) => ("normalize", table.name.clone(), None),
        }
    }
}

#[derive(Default)]
struct Queue {
    flushes: VecDeque<(Arc<TableInner>, Arc<Region>)>,
    splits: VecDeque<(Arc<TableInner>, Arc<Region>)>,
    /// Tables whose normalizer run is queued (each at most once).
    normalizations: VecDeque<Arc<TableInner>>,
    compactions: Vec<(Arc<TableInner>, Arc<Region>)>,
    running: usize,
    shutdown: bool,
    /// The last failure of a background job.
    last_error: Option<Error>,
}

impl Queue {
    fn is_idle(&self) -> bool {
        self.running == 0
            && self.flushes.is_empty()
            && self.splits.is_empty()
            && self.normalizations.is_empty()
            && self.compactions.is_empty()
    }
}

/// The queue and the workers.
pub(crate) struct Pool {
    options: DbOptions,
    queue: Mutex<Queue>,
    /// Workers wait here for jobs.
    work: Condvar,
    /// `wait_idle` and stalled writers wait here for jobs to finish.
    progress: Condvar,
    /// The compaction checker sleeps here between rounds (woken early only
    /// by shutdown).
    tick: Condvar,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Pool {
    pub(crate) fn new(options: DbOptions) -> Self {
        Pool {
            options,
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            progress: Condvar::new(),
            tick: Condvar::new(),
            threads: Mutex::new(Vec::new()),
        }
    }

    /// Starts `threads` workers for `supervisor`.
    pub(crate) fn start(
        self: &Arc<Self>,
        supervisor: Weak<Supervisor>,
        threads: usize,
    ) -> std::io::Result<()> {
        let mut handles = self.threads.lock();
        for i in 0..threads {
            let supervisor = supervisor.clone();
            let pool = self.clone();
            handles.push(
                std::thread::Builder::new()
                    .name(format!("strata-bg-{i}"))
                    .spawn(move || worker(&pool, &supervisor))?,
            );
        }
        let interval = self.options.compaction_check_interval;
        if !interval.is_zero() && !self.options.read_only {
            let pool = self.clone();
            handles.push(
                std::thread::Builder::new()
                    .name("strata-compaction-check".into())
                    .spawn(move || checker(&pool, &supervisor, interval))?,
            );
        }
        Ok(())
    }

    /// Queues a flush of `region` unless one is queued already.
    pub(crate) fn schedule_flush(&self, table: &Arc<TableInner>, region: &Arc<Region>) {
        if region.schedule.queue_flush() {
            self.push(|q| q.flushes.push_back((table.clone(), region.clone())));
        }
    }

    /// Queues a compaction check of `region` unless one is queued or
    /// running (it takes the region's compaction slot until it has run).
    pub(crate) fn schedule_compaction(&self, table: &Arc<TableInner>, region: &Arc<Region>) {
        if region.schedule.reserve_compaction_slot()
            && !self.push(|q| q.compactions.push((table.clone(), region.clone())))
        {
            region.schedule.give_back_compaction_slot();
        }
    }

    /// Adds a job to the queue (`add`) and wakes a worker, unless the pool
    /// is shutting down; false then.
    fn push(&self, add: impl FnOnce(&mut Queue)) -> bool {
        let mut q = self.queue.lock();
        if q.shutdown {
            return false;
        }
        add(&mut q);
        self.work.notify_one();
        true
    }

    /// Removes a queued (not yet running) compaction of `region`; true when
    /// there was one. Its hold on the region's compaction slot passes to the
    /// caller.
    pub(crate) fn cancel_queued_compaction(&self, region: &Arc<Region>) -> bool {
        let mut q = self.queue.lock();
        match q
            .compactions
            .iter()
            .position(|(_, r)| Arc::ptr_eq(r, region))
        {
            Some(at) => {
                q.compactions.swap_remove(at);
                self.progress.notify_all();
                true
            }
            None => false,
        }
    }

    /// Queues a split of `region` at its middle key unless one is queued.
    pub(crate) fn schedule_split(&self, table: &Arc<TableInner>, region: &Arc<Region>) {
        if region.schedule.queue_split() {
            self.push(|q| q.splits.push_back((table.clone(), region.clone())));
        }
    }

    /// Queues a normalizer run of `table` unless one is queued.
    pub(crate) fn schedule_normalize(&self, table: &Arc<TableInner>) {
        if table.normalize_queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut q = self.queue.lock();
        if q.shutdown {
            table.normalize_queued.store(false, Ordering::Release);
            return;
        }
        q.normalizations.push_back(table.clone());
        self.work.notify_one();
    }

    /// Waits until no job is queued or running.
    pub(crate) fn wait_idle(&self) {
        let mut q = self.queue.lock();
        while !q.shutdown && !q.is_idle() {
            self.progress.wait(&mut q);
        }
    }

    /// Waits up to `timeout` for a job to finish (stalled writers recheck
    /// their condition around this).
    pub(crate) fn wait_progress(&self, timeout: Duration) {
        let mut q = self.queue.lock();
        let _ = self.progress.wait_for(&mut q, timeout);
    }

    /// The last failure of a background job, if any.
    pub(crate) fn last_error(&self) -> Option<Error> {
        self.queue.lock().last_error.clone()
    }

    /// How many jobs of each kind are queued, and how many run: (flushes,
    /// compactions, splits, normalizer runs, running).
    pub(crate) fn backlog(&self) -> (usize, usize, usize, usize, usize) {
        let q = self.queue.lock();
        (
            q.flushes.len(),
            q.compactions.len(),
            q.splits.len(),
            q.normalizations.len(),
            q.running,
        )
    }

    /// True when nothing is queued or running.
    pub(crate) fn is_idle(&self) -> bool {
        self.queue.lock().is_idle()
    }

    /// Stops taking jobs, drops the queued ones (giving their regions'
    /// slots back), lets running ones finish, joins the workers.
    pub(crate) fn shutdown(&self) {
        let dropped = {
            let mut q = self.queue.lock();
            q.shutdown = true;
            for table in q.normalizations.drain(..) {
                table.normalize_queued.store(false, Ordering::Release);
            }
            let dropped = (
                q.compactions.drain(..).collect::<Vec<_>>(),
                q.flushes.drain(..).collect::<Vec<_>>(),
                q.splits.drain(..).collect::<Vec<_>>(),
            );
            self.work.notify_all();
            self.progress.notify_all();
            self.tick.notify_all();
            dropped
        };
        let (compactions, flushes, splits) = dropped;
        for (_, region) in compactions {
            region.schedule.give_back_compaction_slot();
        }
        for (_, region) in flushes {
            region.schedule.flush_dequeued();
        }
        for (_, region) in splits {
            region.schedule.split_dequeued();
        }
        let handles: Vec<JoinHandle<()>> = std::mem::take(&mut *self.threads.lock());
        let me = std::thread::current().id();
        for handle in handles {
            // The last database handle may be dropped by a worker itself.
            if handle.thread().id() != me {
                let _ = handle.join();
            }
        }
    }

    fn next_job(&self) -> Option<Job> {
        let mut q = self.queue.lock();
        loop {
            if q.shutdown {
                return None;
            }
            if let Some((table, region)) = q.flushes.pop_front() {
                q.running += 1;
                return Some(Job::Flush(table, region));
            }
            if let Some((table, region)) = q.splits.pop_front() {
                q.running += 1;
                return Some(Job::Split(table, region));
            }
            if let Some(table) = q.normalizations.pop_front() {
                q.running += 1;
                return Some(Job::Normalize(table));
            }
            if !q.compactions.is_empty() {
                // The most urgent region first.
                let best = q
                    .compactions
                    .iter()
                    .enumerate()
                    .map(|(i, (_, region))| {
                        (i, crate::compaction::region_score(region, &self.options))
                    })
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .map_or(0, |(i, _)| i);
                let (table, region) = q.compactions.swap_remove(best);
                q.running += 1;
                return Some(Job::Compact(table, region));
            }
            self.work.wait(&mut q);
        }
    }

    fn finished(&self, error: Option<Error>) {
        let mut q = self.queue.lock();
        q.running -= 1;
        if let Some(e) = error {
            q.last_error = Some(e);
        }
        self.progress.notify_all();
    }
}

/// The compaction checker: every `interval` until shutdown, the supervisor
/// queues the compactions time made due.
fn checker(pool: &Pool, supervisor: &Weak<Supervisor>, interval: Duration) {
    loop {
        {
            let mut q = pool.queue.lock();
            if q.shutdown {
                return;
            }
            let _ = pool.tick.wait_for(&mut q, interval);
            if q.shutdown {
                return;
            }
        }
        let Some(supervisor) = supervisor.upgrade() else {
            return;
        };
        supervisor.schedule_timed_compactions();
    }
}

fn worker(pool: &Pool, supervisor: &Weak<Supervisor>) {
    while let Some(job) = pool.next_job() {
        // The supervisor is kept alive only while a job runs.
        let Some(supervisor) = supervisor.upgrade() else {
            pool.finished(None);
            return;
        };
        let (kind, table, region) = job.describe();
        let outcome = supervisor.run(job);
        if let Err(error) = &outcome {
            supervisor
                .services()
                .counters
                .background_failures
                .fetch_add(1, Ordering::Relaxed);
            tracing::error!(job = kind, table, region, %error, "a background job failed");
        }
        drop(supervisor);
        pool.finished(outcome.err());
    }
}
