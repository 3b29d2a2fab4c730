//! Scans of salted tables (scenario 3): a logical key range read as one
//! sub-range per salt bucket, the buckets on a few threads, merged back
//! into logical-key order (or handed back as they come).
//!
//! Unordered, it is a parallel scan whose parts are the buckets' sub-ranges
//! (`super::parallel`). In logical order every bucket must advance at once
//! (the next row may come from any of them), so a worker does not run a
//! bucket to its end: it produces one batch of a bucket that has room, parks
//! the bucket's stream and takes the next. Each bucket may hold
//! [`BATCHES_AHEAD`] batches the reader has not taken; the reader takes a
//! bucket's next batch when it has used the last, which gives the bucket
//! room again, so a bucket the reader waits for is always queued or
//! running. Memory is bounded by buckets x batches ahead x batch bytes, the
//! batch bytes shrinking as buckets grow ([`batch_bytes`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::cursor::RowView;
use super::parallel::{ParallelScan, Parts, take_one, thread_count};
use super::plan::ScanPlan;
use super::sink::RowBatch;
use super::stream::RowStream;
use crate::catalog::TableState;
use crate::cell::RowResult;
use crate::error::{Error, Result};

/// Batches a bucket may have ready that the reader has not taken.
const BATCHES_AHEAD: usize = 2;
/// Rows in one batch, at most.
const ROWS_PER_BATCH: usize = 512;
/// All buckets' batches together hold about this many bytes at most.
const TOTAL_BATCH_BYTES: usize = 16 << 20;
/// Bounds of one batch's bytes, whatever the bucket count.
const MIN_BATCH_BYTES: usize = 8 << 10;
const MAX_BATCH_BYTES: usize = 256 << 10;
/// How often an idle worker looks whether the scan was dropped.
const IDLE_RECHECK: Duration = Duration::from_millis(50);

type Batch = Result<RowBatch>;

/// The bytes one batch of a scan over `buckets` buckets may hold.
fn batch_bytes(buckets: usize) -> usize {
    (TOTAL_BATCH_BYTES / (buckets.max(1) * BATCHES_AHEAD)).clamp(MIN_BATCH_BYTES, MAX_BATCH_BYTES)
}

/// The rows of a salted scan ([`crate::Table::scan_salted`]): lent by
/// [`SaltedScan::next_row`] or, as an iterator, copied into owned rows.
/// Dropping it stops its threads.
pub struct SaltedScan {
    inner: Inner,
}

enum Inner {
    AsReady(ParallelScan),
    Merged(MergedScan),
}

impl std::fmt::Debug for SaltedScan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match self.inner {
            Inner::AsReady(_) => "as ready",
            Inner::Merged(_) => "logical order",
        };
        f.debug_struct("SaltedScan").field("order", &mode).finish()
    }
}

impl SaltedScan {
    /// Starts the scan of `parts` (one per bucket, in bucket order). In
    /// logical order, rows compare by their key after the first
    /// `salt_bytes` bytes (the salt and its separator).
    pub(crate) fn start(
        parts: Parts,
        threads: usize,
        logical_order: bool,
        salt_bytes: usize,
        limit: Option<u64>,
    ) -> Result<SaltedScan> {
        let inner = if logical_order {
            Inner::Merged(MergedScan::start(parts, threads, salt_bytes, limit)?)
        } else {
            Inner::AsReady(ParallelScan::start(parts, threads, false, limit, None)?)
        };
        Ok(SaltedScan { inner })
    }

    /// The next row; `None` at the end of the scan. After an error the scan
    /// is finished.
    pub fn next_row(&mut self) -> Result<Option<RowView<'_>>> {
        match &mut self.inner {
            Inner::AsReady(scan) => scan.next_row(),
            Inner::Merged(scan) => scan.next_row(),
        }
    }
}

impl Iterator for SaltedScan {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row()
            .map(|row| row.map(|view| view.to_row_result()))
            .transpose()
    }
}

/// What a bucket's stream is between batches.
enum Stream {
    /// Not started yet.
    Planned(ScanPlan),
    /// Parked between batches (boxed: a stream is large, and a thousand
    /// buckets' slots would otherwise all be that size).
    Open(Box<RowStream>),
}

/// The buckets' scheduling state, shared by the workers and the reader.
struct Schedule {
    /// Buckets with room and rows left, not being worked on, in turn.
    ready: VecDeque<usize>,
    /// Per bucket: its parked stream (`None` while a worker holds it or once
    /// it ended).
    streams: Vec<Option<Stream>>,
    /// Per bucket: batches it may still send before the reader takes one.
    room: Vec<usize>,
    /// Per bucket: a worker holds it, or it is in `ready`.
    scheduled: Vec<bool>,
    /// Per bucket: the channel its batches go to (`None` once it ended:
    /// dropping the last sender tells the reader).
    senders: Vec<Option<SyncSender<Batch>>>,
    /// Emptied batches for reuse.
    spare: Vec<RowBatch>,
    /// Buckets whose stream has not ended.
    live: usize,
}

struct Shared {
    schedule: Mutex<Schedule>,
    work: Condvar,
    stop: AtomicBool,
    state: Arc<TableState>,
    batch_bytes: usize,
}

/// One bucket as the reader sees it.
struct Bucket {
    receiver: Option<Receiver<Batch>>,
    batch: Option<RowBatch>,
    next_row: usize,
}

/// The logical-order merge of the buckets.
struct MergedScan {
    shared: Arc<Shared>,
    buckets: Vec<Bucket>,
    /// Bytes of each key before its logical part.
    salt_bytes: usize,
    reversed: bool,
    /// Buckets with a current row, as a binary min-heap by that row's
    /// logical key (max-heap when reversed); `None` before the first row.
    heap: Option<Vec<usize>>,
    /// The bucket whose current row was lent last: it moves on first.
    lent: Option<usize>,
    remaining: Option<u64>,
    workers: Vec<JoinHandle<()>>,
    failed: bool,
}

impl MergedScan {
    fn start(
        parts: Parts,
        threads: usize,
        salt_bytes: usize,
        limit: Option<u64>,
    ) -> Result<MergedScan> {
        let count = parts.plans.len();
        let reversed = parts.plans.first().is_some_and(|p| p.reversed);
        let mut senders = Vec::with_capacity(count);
        let mut buckets = Vec::with_capacity(count);
        for _ in 0..count {
            let (tx, rx) = sync_channel(BATCHES_AHEAD);
            senders.push(Some(tx));
            buckets.push(Bucket {
                receiver: Some(rx),
                batch: None,
                next_row: 0,
            });
        }
        let shared = Arc::new(Shared {
            schedule: Mutex::new(Schedule {
                ready: (0..count).collect(),
                streams: parts
                    .plans
                    .into_iter()
                    .map(|p| Some(Stream::Planned(p)))
                    .collect(),
                room: vec![BATCHES_AHEAD; count],
                scheduled: vec![true; count],
                senders,
                spare: Vec::new(),
                live: count,
            }),
            work: Condvar::new(),
            stop: AtomicBool::new(false),
            state: parts.state,
            batch_bytes: batch_bytes(count),
        });
        let mut workers = Vec::new();
        for i in 0..thread_count(threads, count) {
            let worker_shared = shared.clone();
            match std::thread::Builder::new()
                .name(format!("strata-salted-{i}"))
                .spawn(move || worker(&worker_shared))
            {
                Ok(handle) => workers.push(handle),
                Err(e) if workers.is_empty() => {
                    shared.stop.store(true, Ordering::Relaxed);
                    return Err(Error::io("starting a scan worker thread", e));
                }
                Err(_) => break,
            }
        }
        Ok(MergedScan {
            shared,
            buckets,
            salt_bytes,
            reversed,
            heap: None,
            lent: None,
            remaining: limit,
            workers,
            failed: false,
        })
    }

    /// The logical key of bucket `b`'s current row.
    fn key(&self, b: usize) -> &[u8] {
        self.buckets
            .get(b)
            .and_then(|bucket| bucket.batch.as_ref()?.row(bucket.next_row))
            .map_or(&[][..], |(key, _, _)| {
                key.get(self.salt_bytes..).unwrap_or(key)
            })
    }

    /// True when bucket `a`'s current row comes before bucket `b`'s.
    fn before(&self, a: usize, b: usize) -> bool {
        let order = self.key(a).cmp(self.key(b)).then(a.cmp(&b));
        if self.reversed {
            order == std::cmp::Ordering::Greater
        } else {
            order == std::cmp::Ordering::Less
        }
    }

    fn sift_down(&self, heap: &mut [usize], mut at: usize) {
        loop {
            let (left, right) = (2 * at + 1, 2 * at + 2);
            let mut best = at;
            for child in [left, right] {
                if let (Some(&c), Some(&b)) = (heap.get(child), heap.get(best))
                    && self.before(c, b)
                {
                    best = child;
                }
            }
            if best == at {
                return;
            }
            heap.swap(at, best);
            at = best;
        }
    }

    fn sift_up(&self, heap: &mut [usize], mut at: usize) {
        while at > 0 {
            let parent = (at - 1) / 2;
            match (heap.get(at), heap.get(parent)) {
                (Some(&a), Some(&p)) if self.before(a, p) => {
                    heap.swap(at, parent);
                    at = parent;
                }
                _ => return,
            }
        }
    }

    /// Gives bucket `b` its next row: the next of its batch, or the first
    /// of its next batch. False when the bucket has ended.
    fn step(&mut self, b: usize, first: bool) -> Result<bool> {
        let Some(bucket) = self.buckets.get_mut(b) else {
            return Ok(false);
        };
        if !first {
            bucket.next_row += 1;
        }
        loop {
            if bucket
                .batch
                .as_ref()
                .is_some_and(|batch| bucket.next_row < batch.rows())
            {
                return Ok(true);
            }
            if let Some(mut used) = bucket.batch.take()
                && let Ok(mut schedule) = self.shared.schedule.lock()
            {
                used.clear();
                if schedule.spare.len() < 2 * BATCHES_AHEAD {
                    schedule.spare.push(used);
                }
            }
            bucket.next_row = 0;
            let Some(receiver) = &bucket.receiver else {
                return Ok(false);
            };
            match receiver.recv() {
                Ok(Ok(batch)) => {
                    bucket.batch = Some(batch);
                    give_room(&self.shared, b);
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    bucket.receiver = None;
                    return Ok(false);
                }
            }
        }
    }

    fn next_row(&mut self) -> Result<Option<RowView<'_>>> {
        match self.advance() {
            Ok(Some(b)) => {
                let row = self
                    .buckets
                    .get(b)
                    .and_then(|bucket| bucket.batch.as_ref()?.row(bucket.next_row));
                Ok(row.map(|(key, spans, bytes)| RowView::new(key, spans, bytes, &[])))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.failed = true;
                self.stop();
                Err(e)
            }
        }
    }

    /// The bucket holding the next row in logical order.
    fn advance(&mut self) -> Result<Option<usize>> {
        if self.failed {
            return Ok(None);
        }
        let mut heap = match self.heap.take() {
            Some(heap) => heap,
            None => {
                let mut heap = Vec::with_capacity(self.buckets.len());
                for b in 0..self.buckets.len() {
                    if self.step(b, true)? {
                        heap.push(b);
                        let at = heap.len() - 1;
                        self.sift_up(&mut heap, at);
                    }
                }
                heap
            }
        };
        if let Some(b) = self.lent.take() {
            if self.step(b, false)? {
                self.sift_down(&mut heap, 0);
            } else if let Some(last) = heap.pop()
                && !heap.is_empty()
            {
                heap[0] = last;
                self.sift_down(&mut heap, 0);
            }
        }
        let next = heap.first().copied();
        self.heap = Some(heap);
        let Some(b) = next else {
            self.stop();
            return Ok(None);
        };
        if !take_one(&mut self.remaining) {
            self.stop();
            return Ok(None);
        }
        self.lent = Some(b);
        Ok(Some(b))
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.work.notify_all();
        for bucket in &mut self.buckets {
            bucket.receiver = None;
        }
    }
}

impl Drop for MergedScan {
    fn drop(&mut self) {
        self.stop();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

/// The reader took a batch of bucket `b`: it has room for one more.
fn give_room(shared: &Shared, b: usize) {
    let Ok(mut schedule) = shared.schedule.lock() else {
        return;
    };
    if let Some(room) = schedule.room.get_mut(b) {
        *room += 1;
    }
    let parked = schedule.streams.get(b).is_some_and(Option::is_some);
    if parked && !schedule.scheduled.get(b).copied().unwrap_or(true) {
        if let Some(s) = schedule.scheduled.get_mut(b) {
            *s = true;
        }
        schedule.ready.push_back(b);
        shared.work.notify_one();
    }
}

/// A worker: takes a ready bucket, sends one batch of it, parks it.
fn worker(shared: &Shared) {
    while let Some((b, stream, sender, batch)) = take_ready(shared) {
        let (stream, batch, ended) = fill(shared, stream, batch);
        let failed = batch.is_err();
        let send = match batch {
            Ok(batch) if batch.rows() == 0 => {
                recycle(shared, batch);
                Ok(())
            }
            other => sender.send(other).map_err(|_| ()),
        };
        let Ok(mut schedule) = shared.schedule.lock() else {
            return;
        };
        let ended = ended || failed || send.is_err();
        if ended {
            // Dropping the bucket's last sender tells the reader it ended.
            if let Some(slot) = schedule.senders.get_mut(b) {
                *slot = None;
            }
            schedule.live = schedule.live.saturating_sub(1);
            if let Some(s) = schedule.scheduled.get_mut(b) {
                *s = false;
            }
            if schedule.live == 0 {
                shared.work.notify_all();
            }
        } else {
            if let (Some(slot), Some(stream)) = (schedule.streams.get_mut(b), stream) {
                *slot = Some(Stream::Open(Box::new(stream)));
            }
            let room = schedule.room.get(b).copied().unwrap_or(0);
            if room > 0 {
                schedule.ready.push_back(b);
                shared.work.notify_one();
            } else if let Some(s) = schedule.scheduled.get_mut(b) {
                // Parked until the reader takes a batch (`give_room`).
                *s = false;
            }
        }
    }
}

/// The next ready bucket, with its stream, sender and a batch to fill;
/// `None` when the scan stopped or every bucket ended.
fn take_ready(shared: &Shared) -> Option<(usize, Stream, SyncSender<Batch>, RowBatch)> {
    let mut schedule = shared.schedule.lock().ok()?;
    loop {
        if shared.stop.load(Ordering::Relaxed) || schedule.live == 0 {
            return None;
        }
        if let Some(b) = schedule.ready.pop_front() {
            let stream = schedule.streams.get_mut(b).and_then(Option::take);
            let sender = schedule.senders.get(b).cloned().flatten();
            if let (Some(stream), Some(sender)) = (stream, sender) {
                if let Some(room) = schedule.room.get_mut(b) {
                    *room = room.saturating_sub(1);
                }
                let batch = schedule.spare.pop().unwrap_or_default();
                return Some((b, stream, sender, batch));
            }
            continue;
        }
        schedule = shared.work.wait_timeout(schedule, IDLE_RECHECK).ok()?.0;
    }
}

/// Reads rows of `stream` into `batch` until the batch is full or the
/// stream ends (then `true`).
fn fill(shared: &Shared, stream: Stream, mut batch: RowBatch) -> (Option<RowStream>, Batch, bool) {
    let mut stream = match stream {
        Stream::Open(stream) => *stream,
        Stream::Planned(plan) => match RowStream::new(shared.state.clone(), plan) {
            Ok(stream) => stream,
            Err(e) => return (None, Err(e), true),
        },
    };
    loop {
        match stream.next_row(&mut batch) {
            Ok(true) => {
                batch.commit_row();
                if batch.rows() >= ROWS_PER_BATCH || batch.bytes_held() >= shared.batch_bytes {
                    return (Some(stream), Ok(batch), false);
                }
            }
            Ok(false) => return (None, Ok(batch), true),
            Err(e) => return (None, Err(e), true),
        }
    }
}

fn recycle(shared: &Shared, mut batch: RowBatch) {
    batch.clear();
    if let Ok(mut schedule) = shared.schedule.lock()
        && schedule.spare.len() < 2 * BATCHES_AHEAD
    {
        schedule.spare.push(batch);
    }
}
