//! Parallel scans: a scan's region parts read on a bounded set of threads.
//!
//! The parts are the scan cut at the region boundaries of one table state
//! and planned at one read point, so together they read one snapshot, as the
//! serial scan does. Workers take parts in scan order; each sends its rows
//! in batches over its own bounded channel, so a consumer that reads in
//! order never waits for a part that no worker has taken, and a worker that
//! runs ahead stops after [`BATCHES_AHEAD`] batches. Dropping the scan stops
//! the workers (their next send fails) and joins them.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::sink::CellCount;
use super::{RowStream, ScanPlan, Scanner};
use crate::catalog::TableState;
use crate::cell::RowResult;
use crate::error::{Error, Result};

/// Rows a worker sends at once.
const ROWS_PER_BATCH: usize = 256;
/// Batches a part's channel holds before its worker waits.
const BATCHES_AHEAD: usize = 4;

type Batch = Result<Vec<RowResult>>;

/// The parts of one scan: plans over one table state, in scan order.
pub(crate) struct Parts {
    pub(crate) state: Arc<TableState>,
    pub(crate) plans: Vec<ScanPlan>,
}

/// Threads a parallel read of `parts` parts uses: `threads` (at least one)
/// or, when zero, the machine's parallelism; never more than the parts.
pub(crate) fn thread_count(threads: usize, parts: usize) -> usize {
    let wanted = if threads == 0 {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        threads
    };
    wanted.clamp(1, parts.max(1))
}

/// Runs `each` on every part on `threads` scoped threads; the results in
/// part order. The first error wins; the other parts still finish.
pub(crate) fn for_each_part<T: Send>(
    parts: Parts,
    threads: usize,
    each: impl Fn(RowStream) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let count = parts.plans.len();
    let next = AtomicUsize::new(0);
    let plans: Vec<Mutex<Option<ScanPlan>>> = parts
        .plans
        .into_iter()
        .map(|p| Mutex::new(Some(p)))
        .collect();
    let results: Vec<Mutex<Option<Result<T>>>> = (0..count).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..thread_count(threads, count) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(slot) = plans.get(index) else {
                        return;
                    };
                    let plan = slot.lock().ok().and_then(|mut p| p.take());
                    let Some(plan) = plan else { continue };
                    let outcome = RowStream::new(parts.state.clone(), plan).and_then(&each);
                    if let Some(Ok(mut result)) = results.get(index).map(Mutex::lock) {
                        *result = Some(outcome);
                    }
                }
            });
        }
    });
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner().ok().flatten().unwrap_or_else(|| {
                Err(Error::io(
                    "reading a scan part",
                    std::io::Error::other("the part's worker stopped without a result"),
                ))
            })
        })
        .collect()
}

/// Counts the rows of every part in parallel.
pub(crate) fn count_rows(parts: Parts, threads: usize) -> Result<u64> {
    let counts = for_each_part(parts, threads, |mut stream| {
        let mut cells = CellCount::default();
        let mut rows = 0u64;
        while stream.next_row(&mut cells)? {
            rows += 1;
        }
        Ok(rows)
    })?;
    Ok(counts.into_iter().sum())
}

/// The rows of a scan read in parallel, region parts on worker threads:
/// in scan order ([`ParallelScan::ordered`]) or as they come. Each item is a
/// row (or, with a batch size, a part of one) with owned cells.
pub struct ParallelScan {
    /// In order: one per part, in scan order; as they come: one.
    receivers: Vec<Receiver<Batch>>,
    ordered: bool,
    current: std::vec::IntoIter<RowResult>,
    /// Rows still allowed by the scan's limit (`None`: no limit).
    remaining: Option<u64>,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<()>>,
    failed: bool,
}

impl std::fmt::Debug for ParallelScan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParallelScan")
            .field("channels", &self.receivers.len())
            .field("ordered", &self.ordered)
            .finish()
    }
}

impl ParallelScan {
    /// Starts the workers. `limit` is the scan's row limit, applied to the
    /// whole scan.
    pub(crate) fn start(
        parts: Parts,
        threads: usize,
        ordered: bool,
        limit: Option<u64>,
    ) -> Result<ParallelScan> {
        let count = parts.plans.len();
        // In order: one channel per part, read one after another. As they
        // come: one channel all parts send to.
        let mut receivers = Vec::new();
        let mut jobs = Vec::with_capacity(count);
        let mut shared: Option<SyncSender<Batch>> = None;
        for plan in parts.plans {
            let tx = match (&shared, ordered) {
                (Some(tx), false) => tx.clone(),
                _ => {
                    let (tx, rx) = sync_channel(BATCHES_AHEAD * if ordered { 1 } else { count });
                    receivers.push(rx);
                    if !ordered {
                        shared = Some(tx.clone());
                    }
                    tx
                }
            };
            jobs.push((plan, tx));
        }
        // Only the jobs hold senders: a channel closes when its parts end.
        drop(shared);
        let jobs = Arc::new(Mutex::new(jobs.into_iter()));
        let stop = Arc::new(AtomicBool::new(false));
        let mut workers = Vec::new();
        for i in 0..thread_count(threads, count) {
            let jobs = jobs.clone();
            let worker_stop = stop.clone();
            let state = parts.state.clone();
            match std::thread::Builder::new()
                .name(format!("strata-scan-{i}"))
                .spawn(move || worker(&state, &jobs, &worker_stop))
            {
                Ok(handle) => workers.push(handle),
                // Fewer workers only slow the scan; none would lose it.
                Err(e) if workers.is_empty() => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(Error::io("starting a scan worker thread", e));
                }
                Err(_) => break,
            }
        }
        Ok(ParallelScan {
            receivers,
            ordered,
            current: Vec::new().into_iter(),
            remaining: limit,
            stop,
            workers,
            failed: false,
        })
    }

    /// The next batch, from the first channel still open (in order: the
    /// first unfinished part; otherwise the one shared channel).
    fn next_batch(&mut self) -> Option<Batch> {
        while let Some(receiver) = self.receivers.first() {
            match receiver.recv() {
                Ok(batch) => return Some(batch),
                // Every sender of the channel is gone: its parts are done.
                Err(_) => {
                    self.receivers.remove(0);
                }
            }
        }
        None
    }

    fn shut_down(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Dropping the receivers fails the workers' next send.
        self.receivers.clear();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

impl Iterator for ParallelScan {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.remaining == Some(0) {
            return None;
        }
        loop {
            if let Some(row) = self.current.next() {
                if let Some(remaining) = &mut self.remaining {
                    *remaining -= 1;
                    if *remaining == 0 {
                        self.shut_down();
                    }
                }
                return Some(Ok(row));
            }
            match self.next_batch()? {
                Ok(rows) => self.current = rows.into_iter(),
                Err(e) => {
                    self.failed = true;
                    self.shut_down();
                    return Some(Err(e));
                }
            }
        }
    }
}

impl Drop for ParallelScan {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// A worker: takes parts in scan order and sends their rows until none is
/// left, the consumer is gone, or it is told to stop.
fn worker(
    state: &Arc<TableState>,
    jobs: &Mutex<std::vec::IntoIter<(ScanPlan, SyncSender<Batch>)>>,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::Relaxed) {
        let job = match jobs.lock() {
            Ok(mut jobs) => jobs.next(),
            Err(_) => return,
        };
        let Some((plan, tx)) = job else { return };
        let scanner = Scanner::new(state.clone(), plan);
        let mut scanner = match scanner {
            Ok(s) => s,
            Err(e) => {
                let _ = tx.send(Err(e));
                continue;
            }
        };
        let mut batch = Vec::with_capacity(ROWS_PER_BATCH);
        loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            match scanner.next() {
                Some(Ok(row)) => {
                    batch.push(row);
                    if batch.len() >= ROWS_PER_BATCH {
                        let full =
                            std::mem::replace(&mut batch, Vec::with_capacity(ROWS_PER_BATCH));
                        if tx.send(Ok(full)).is_err() {
                            return;
                        }
                    }
                }
                Some(Err(e)) => {
                    let _ = tx.send(Err(e));
                    break;
                }
                None => {
                    if !batch.is_empty() {
                        let _ = tx.send(Ok(batch));
                    }
                    break;
                }
            }
        }
    }
}
