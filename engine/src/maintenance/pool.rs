//! The shared worker pool that runs flushes and compactions.
//!
//! Flushes run before compactions (they free memory and unblock writers);
//! among queued compactions the region whose stores score highest runs
//! first. A region has at most one compaction queued or running at a time;
//! a flush may run alongside it (flushes only add L0 files, compactions
//! only replace the files they picked).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::catalog::TableInner;
use crate::db::DbInner;
use crate::options::DbOptions;
use crate::region::Region;

enum Job {
    Flush(Arc<TableInner>, Arc<Region>),
    Compact(Arc<TableInner>, Arc<Region>),
    Split(Arc<TableInner>, Arc<Region>),
}

#[derive(Default)]
struct Queue {
    flushes: VecDeque<(Arc<TableInner>, Arc<Region>)>,
    splits: VecDeque<(Arc<TableInner>, Arc<Region>)>,
    compactions: Vec<(Arc<TableInner>, Arc<Region>)>,
    running: usize,
    shutdown: bool,
    /// The last failure of a background job, for stats and stalled writers.
    last_error: Option<String>,
}

/// The worker pool. Workers hold the pool, not the database: they upgrade
/// their weak database handle only while running a job, so dropping the
/// last `Db` handle ends them.
pub(crate) struct Background {
    options: DbOptions,
    queue: Mutex<Queue>,
    /// Workers wait here for jobs.
    work: Condvar,
    /// Writers and `wait_idle` wait here for jobs to finish.
    progress: Condvar,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Background {
    pub(crate) fn new(options: DbOptions) -> Self {
        Background {
            options,
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            progress: Condvar::new(),
            threads: Mutex::new(Vec::new()),
        }
    }

    /// Starts `threads` workers for `db`.
    pub(crate) fn start(
        self: &Arc<Self>,
        db: Weak<DbInner>,
        threads: usize,
    ) -> std::io::Result<()> {
        let mut handles = self.threads.lock();
        for i in 0..threads {
            let db = db.clone();
            let pool = self.clone();
            handles.push(
                std::thread::Builder::new()
                    .name(format!("strata-bg-{i}"))
                    .spawn(move || worker(&pool, &db))?,
            );
        }
        Ok(())
    }

    /// Queues a flush of `region` unless one is queued already.
    pub(crate) fn schedule_flush(&self, table: &Arc<TableInner>, region: &Arc<Region>) {
        if region.flush_queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut q = self.queue.lock();
        if q.shutdown {
            return;
        }
        q.flushes.push_back((table.clone(), region.clone()));
        self.work.notify_one();
    }

    /// Queues a compaction check of `region` unless one is queued or running.
    pub(crate) fn schedule_compaction(&self, table: &Arc<TableInner>, region: &Arc<Region>) {
        if region.compaction_queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut q = self.queue.lock();
        if q.shutdown {
            region.compaction_queued.store(false, Ordering::Release);
            return;
        }
        q.compactions.push((table.clone(), region.clone()));
        self.work.notify_one();
    }

    /// Queues a split of `region` at its middle key unless one is queued.
    pub(crate) fn schedule_split(&self, table: &Arc<TableInner>, region: &Arc<Region>) {
        if region.split_queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut q = self.queue.lock();
        if q.shutdown {
            return;
        }
        q.splits.push_back((table.clone(), region.clone()));
        self.work.notify_one();
    }

    /// Waits until no job is queued or running.
    pub(crate) fn wait_idle(&self) {
        let mut q = self.queue.lock();
        while !q.shutdown
            && (q.running > 0
                || !q.flushes.is_empty()
                || !q.splits.is_empty()
                || !q.compactions.is_empty())
        {
            self.progress.wait(&mut q);
        }
    }

    /// Waits up to `timeout` for a job to finish (writers stalled on
    /// background work poll their condition around this).
    pub(crate) fn wait_progress(&self, timeout: Duration) {
        let mut q = self.queue.lock();
        let _ = self.progress.wait_for(&mut q, timeout);
    }

    /// The last failure of a background job, if any.
    pub(crate) fn last_error(&self) -> Option<String> {
        self.queue.lock().last_error.clone()
    }

    /// True when nothing is queued or running.
    pub(crate) fn is_idle(&self) -> bool {
        let q = self.queue.lock();
        q.running == 0 && q.flushes.is_empty() && q.splits.is_empty() && q.compactions.is_empty()
    }

    /// Stops taking jobs, lets running ones finish, joins the workers.
    pub(crate) fn shutdown(&self) {
        {
            let mut q = self.queue.lock();
            q.shutdown = true;
            for (_, region) in q.compactions.drain(..) {
                region.compaction_queued.store(false, Ordering::Release);
            }
            for (_, region) in q.flushes.drain(..) {
                region.flush_queued.store(false, Ordering::Release);
            }
            for (_, region) in q.splits.drain(..) {
                region.split_queued.store(false, Ordering::Release);
            }
            self.work.notify_all();
            self.progress.notify_all();
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

    fn finished(&self, error: Option<String>) {
        let mut q = self.queue.lock();
        q.running -= 1;
        if let Some(e) = error {
            q.last_error = Some(e);
        }
        self.progress.notify_all();
    }
}

fn worker(pool: &Background, db: &Weak<DbInner>) {
    while let Some(job) = pool.next_job() {
        let Some(db) = db.upgrade() else {
            pool.finished(None);
            return;
        };
        let error = match job {
            Job::Flush(table, region) => db.run_flush(&table, &region).err(),
            Job::Split(table, region) => {
                let outcome = db.split_region(&table, &region, None);
                region.split_queued.store(false, Ordering::Release);
                outcome.err()
            }
            Job::Compact(table, region) => {
                let outcome = db.run_compaction(&table, &region);
                region.compaction_queued.store(false, Ordering::Release);
                match outcome {
                    // More to do: look again (the score is recomputed then).
                    Ok(true) => {
                        pool.schedule_compaction(&table, &region);
                        None
                    }
                    Ok(false) => None,
                    Err(e) => Some(e),
                }
            }
        };
        drop(db);
        let message = error.map(|e| {
            eprintln!("strata: background job failed: {e}");
            e.to_string()
        });
        pool.finished(message);
    }
}
