//! Parallel scans: a scan's region parts read on a bounded set of threads.
//!
//! The parts are the scan cut at the region boundaries of one table state
//! and planned at one read point, so together they read one snapshot, as the
//! serial scan does. Workers take parts in scan order; each sends its rows
//! in batches (reused row buffers, so neither side allocates per row) over
//! its own bounded channel, so a consumer that reads in order never waits
//! for a part that no worker has taken, and a worker that runs ahead stops
//! after [`BATCHES_AHEAD`] batches. Dropping the scan stops the workers
//! (their next send fails) and joins them.

use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::cursor::RowView;
use super::plan::ScanPlan;
use super::sink::{CellCount, RowBatch};
use super::stream::RowStream;
use crate::catalog::TableState;
use crate::cell::{RowResult, TimeRange};
use crate::error::{Error, Result};
use crate::iter::run::{above_lower, below_upper};
use crate::metrics::ScanTimer;

/// Rows a worker sends at once, at most.
const ROWS_PER_BATCH: usize = 1024;
/// Bytes of keys and cells a worker sends at once, about.
const BYTES_PER_BATCH: usize = 256 << 10;
/// Emptied batches kept for reuse.
const SPARE_BATCHES: usize = 16;
/// Batches a part's channel holds before its worker waits.
const BATCHES_AHEAD: usize = 4;

type Batch = Result<RowBatch>;

/// The parts of one scan: plans over one table state, in scan order.
pub(crate) struct Parts {
    pub(crate) state: Arc<TableState>,
    pub(crate) plans: Vec<ScanPlan>,
}

/// Takes one row of a row limit's `remaining` rows (`None`: no limit):
/// false when none remain.
pub(crate) fn take_one(remaining: &mut Option<u64>) -> bool {
    match remaining {
        Some(0) => false,
        Some(left) => {
            *left -= 1;
            true
        }
        None => true,
    }
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

/// Counts the rows of every part: from the files' meta blocks where they
/// tell the exact count ([`known_rows`]), the other parts read in parallel.
pub(crate) fn count_rows(parts: Parts, threads: usize) -> Result<u64> {
    let Parts { state, plans } = parts;
    let mut known = 0u64;
    let mut unknown = Vec::new();
    for plan in plans {
        match known_rows(&state, &plan) {
            Some(rows) => known += rows,
            None => unknown.push(plan),
        }
    }
    if unknown.is_empty() {
        return Ok(known);
    }
    let parts = Parts {
        state,
        plans: unknown,
    };
    let counts = for_each_part(parts, threads, |mut stream| {
        let mut cells = CellCount::default();
        let mut rows = 0u64;
        while stream.next_row(&mut cells)? {
            rows += 1;
        }
        Ok(rows)
    })?;
    Ok(known + counts.into_iter().sum::<u64>())
}

/// The rows every part returns, counted without reading them, when each
/// part's count is known ([`known_rows`]).
pub(crate) fn known_count(parts: &Parts) -> Option<u64> {
    parts
        .plans
        .iter()
        .map(|plan| known_rows(&parts.state, plan))
        .sum()
}

/// The rows `plan` returns, counted without reading them, when every region
/// it reaches can tell exactly ([`StoreVersion::known_row_count`](crate::store::version::StoreVersion::known_row_count)):
/// the plan has no filter, time range, limit, read snapshot or raw mode, it
/// asks for at least one version, no file holds a cell newer than its read
/// point, and
/// in each region at most one family in the plan holds rows (a row in two
/// families would count twice). `None` otherwise.
fn known_rows(state: &TableState, plan: &ScanPlan) -> Option<u64> {
    let every_timestamp = plan.query.time_range == TimeRange::ALL;
    if plan.filter.is_some()
        || plan.cell_gate.is_some()
        || plan.query.raw
        || plan.snapshot.is_some()
        || plan.limit.is_some()
        || plan.query.max_versions == 0
        || !every_timestamp
    {
        return None;
    }
    let first = match &plan.lower {
        Bound::Unbounded => 0,
        Bound::Included(row) | Bound::Excluded(row) => state.region_index_for(row),
    };
    let mut total = 0u64;
    for region in state.regions.get(first..).unwrap_or_default() {
        if !below_upper(region.start(), &plan.upper) {
            break;
        }
        // The plan's bounds narrowed to the region's rows.
        let lower = if !region.start().is_empty() && above_lower(region.start(), &plan.lower) {
            Bound::Included(region.start().to_vec())
        } else {
            plan.lower.clone()
        };
        let upper = if !region.end().is_empty() && below_upper(region.end(), &plan.upper) {
            Bound::Excluded(region.end().to_vec())
        } else {
            plan.upper.clone()
        };
        let mut families_holding_rows = 0;
        for family in plan.families.iter() {
            let Some(version) = region.store_version(family.id) else {
                continue;
            };
            let oldest_unexpired_ms = family.rules.oldest_unexpired_ms(plan.query.now_ms);
            let rows = version.known_row_count(
                &lower,
                &upper,
                family.columns.as_ref(),
                oldest_unexpired_ms,
                plan.read_point,
            )?;
            if rows > 0 {
                families_holding_rows += 1;
                total += rows;
            }
        }
        if families_holding_rows > 1 {
            return None;
        }
    }
    Some(total)
}

/// The rows of a scan read in parallel, region parts on worker threads:
/// in scan order or as they come ([`ScanOrder`](crate::ScanOrder)). Rows
/// are lent by [`ParallelScan::next_row`] (no allocation per row: workers
/// fill reused row batches) or, as an iterator, copied into owned rows.
pub struct ParallelScan {
    /// In order: one per part, in scan order; as they come: one.
    receivers: Vec<Receiver<Batch>>,
    /// The batch rows are lent from, the index of its next row, and the
    /// next cell of that row (batched scans lend a wide row in parts).
    batch: Option<RowBatch>,
    next_row: usize,
    next_cell: usize,
    /// Cells per lent part (the scan's batch size; `usize::MAX`: whole rows).
    cells_per_part: usize,
    /// Rows still allowed by the scan's limit (`None`: no limit).
    remaining: Option<u64>,
    /// Emptied batches, for the workers to fill again.
    spare: Arc<Mutex<Vec<RowBatch>>>,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<()>>,
    failed: bool,
    /// Times the scan until it is dropped.
    timer: Option<ScanTimer>,
}

impl std::fmt::Debug for ParallelScan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParallelScan")
            .field("channels", &self.receivers.len())
            .finish()
    }
}

impl ParallelScan {
    /// Starts the workers. `limit` is the scan's row limit, applied to the
    /// whole scan; `batch` its cells per returned part.
    pub(crate) fn start(
        mut parts: Parts,
        threads: usize,
        ordered: bool,
        limit: Option<u64>,
        batch: Option<usize>,
    ) -> Result<ParallelScan> {
        // Workers send whole rows; the reading side cuts them into parts.
        for plan in &mut parts.plans {
            plan.batch = None;
        }
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
                    let capacity = if ordered {
                        BATCHES_AHEAD
                    } else {
                        BATCHES_AHEAD * count
                    };
                    let (tx, rx) = sync_channel(capacity);
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
        let spare = Arc::new(Mutex::new(Vec::new()));
        let mut workers = Vec::new();
        for i in 0..thread_count(threads, count) {
            let jobs = jobs.clone();
            let worker_stop = stop.clone();
            let worker_spare = spare.clone();
            let state = parts.state.clone();
            match std::thread::Builder::new()
                .name(format!("strata-scan-{i}"))
                .spawn(move || worker(&state, &jobs, &worker_stop, &worker_spare))
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
            batch: None,
            next_row: 0,
            next_cell: 0,
            cells_per_part: batch.unwrap_or(usize::MAX).max(1),
            remaining: limit,
            spare,
            stop,
            workers,
            failed: false,
            timer: None,
        })
    }

    /// The scan, timed by `timer` until dropped.
    pub(crate) fn timed(mut self, timer: ScanTimer) -> ParallelScan {
        self.timer = Some(timer);
        self
    }

    /// The next row (or, with a batch size, the next part of a row); `None`
    /// at the end of the scan. After an error the scan is finished.
    pub fn next_row(&mut self) -> Result<Option<RowView<'_>>> {
        let Some((index, cells)) = self.advance()? else {
            return Ok(None);
        };
        let Some((key, spans, bytes)) = self.batch.as_ref().and_then(|b| b.row(index)) else {
            return Ok(None);
        };
        Ok(Some(RowView::new(key, spans, bytes, &[]).part(cells)))
    }

    /// Moves to the next row or part to lend: its index in the batch and
    /// its cells.
    fn advance(&mut self) -> Result<Option<(usize, std::ops::Range<usize>)>> {
        loop {
            if self.failed {
                return Ok(None);
            }
            let row_cells = self
                .batch
                .as_ref()
                .and_then(|b| b.row(self.next_row))
                .map(|(_, cells, _)| cells.len());
            let Some(row_cells) = row_cells else {
                // The batch is used up: back to the workers, and the next.
                if let Some(mut used) = self.batch.take() {
                    used.clear();
                    if let Ok(mut spare) = self.spare.lock()
                        && spare.len() < SPARE_BATCHES
                    {
                        spare.push(used);
                    }
                }
                match self.next_batch() {
                    None => return Ok(None),
                    Some(Ok(batch)) => {
                        self.batch = Some(batch);
                        self.next_row = 0;
                        self.next_cell = 0;
                    }
                    Some(Err(e)) => {
                        self.failed = true;
                        self.stop_workers();
                        return Err(e);
                    }
                }
                continue;
            };
            let start = self.next_cell;
            if start == 0 && !take_one(&mut self.remaining) {
                self.stop_workers();
                return Ok(None);
            }
            let end = start.saturating_add(self.cells_per_part).min(row_cells);
            let index = self.next_row;
            if end >= row_cells {
                self.next_row += 1;
                self.next_cell = 0;
            } else {
                self.next_cell = end;
            }
            return Ok(Some((index, start..end)));
        }
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

    /// Tells the workers to stop; their next send fails.
    fn stop_workers(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.receivers.clear();
    }
}

impl Iterator for ParallelScan {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row()
            .map(|row| row.map(|view| view.to_row_result()))
            .transpose()
    }
}

impl Drop for ParallelScan {
    fn drop(&mut self) {
        self.stop_workers();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

/// A worker: takes parts in scan order and sends their rows in batches
/// until no part is left, the reader is gone, or it is told to stop.
fn worker(
    state: &Arc<TableState>,
    jobs: &Mutex<std::vec::IntoIter<(ScanPlan, SyncSender<Batch>)>>,
    stop: &AtomicBool,
    spare: &Mutex<Vec<RowBatch>>,
) {
    let take_spare = || {
        spare
            .lock()
            .ok()
            .and_then(|mut s| s.pop())
            .unwrap_or_default()
    };
    while !stop.load(Ordering::Relaxed) {
        let job = match jobs.lock() {
            Ok(mut jobs) => jobs.next(),
            Err(_) => return,
        };
        let Some((plan, tx)) = job else { return };
        let mut stream = match RowStream::new(state.clone(), plan) {
            Ok(stream) => stream,
            Err(e) => {
                let _ = tx.send(Err(e));
                continue;
            }
        };
        let mut batch = take_spare();
        loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            match stream.next_row(&mut batch) {
                Ok(true) => {
                    batch.commit_row();
                    if batch.rows() >= ROWS_PER_BATCH || batch.bytes_held() >= BYTES_PER_BATCH {
                        let full = std::mem::replace(&mut batch, take_spare());
                        if tx.send(Ok(full)).is_err() {
                            return;
                        }
                    }
                }
                Ok(false) => {
                    if batch.rows() > 0 {
                        let _ = tx.send(Ok(batch));
                    }
                    break;
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
        }
    }
}
