//! The background I/O budget: a byte rate shared by every flush and
//! compaction write (`DbOptions::background_write_bytes_per_sec`), so that
//! rewriting files does not take the disk from foreground reads and WAL
//! writes, which are never limited.
//!
//! The model is RocksDB's `GenericRateLimiter`: a bucket refilled with one
//! period's bytes every [`REFILL_PERIOD`] (never more than one period's
//! worth, so an idle spell does not save up a burst); requests wait in one
//! queue per priority, and each refill grants the queues in order, flush
//! first (a slow flush holds memstore memory, and beyond the global limit
//! it stalls writers), except every [`FAIRNESS`]th refill, which serves
//! compaction first so that a stream of flushes cannot starve it. A request
//! larger than one period's bytes is split into period-sized pieces; the
//! queue head may be granted part of its piece, so nothing waits behind a
//! request that no single refill could cover. HBase's compaction throughput
//! controller limits each compaction by sleeping in proportion to its own
//! bytes; a shared bucket bounds the sum over every job instead, which is
//! what the disk sees.
//!
//! No crate fitted: `governor` (GCRA) has no priorities or queue order, and
//! `leaky-bucket` needs an async runtime, which the engine's background
//! threads are not.
//!
//! [`Bucket`] is the accounting alone, driven by times its caller passes in
//! (the tests use made-up ones); [`IoBudget`] wraps it in a mutex and a
//! condition variable and reads the monotonic clock.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// How often the bucket is refilled (RocksDB's default `refill_period_us`).
pub(crate) const REFILL_PERIOD: Duration = Duration::from_millis(100);

/// Every this many refills compaction is served before flush
/// (RocksDB's default fairness).
pub(crate) const FAIRNESS: u64 = 10;

/// Whose write asks for bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IoPriority {
    /// A memstore flush: served first.
    Flush,
    /// A compaction.
    Compaction,
}

impl IoPriority {
    fn index(self) -> usize {
        match self {
            IoPriority::Flush => 0,
            IoPriority::Compaction => 1,
        }
    }
}

/// A queued request: its ticket and the bytes not yet granted.
#[derive(Debug)]
struct Waiting {
    ticket: u64,
    remaining: u64,
}

/// Token accounting of the budget. Times are offsets from an origin the
/// caller chooses; they must not go backwards.
#[derive(Debug)]
pub(crate) struct Bucket {
    /// Bytes added per refill; also the largest piece one request takes.
    refill_bytes: u64,
    period: Duration,
    /// Bytes that may be taken now without waiting (at most `refill_bytes`).
    available: u64,
    /// When the next refill is due.
    next_refill: Duration,
    refills: u64,
    /// Waiting requests, flush's queue first, each in arrival order.
    queues: [VecDeque<Waiting>; 2],
    next_ticket: u64,
}

impl Bucket {
    /// A bucket for `bytes_per_sec` (at least 1) refilled every `period`;
    /// the first refill is due at time zero.
    pub(crate) fn new(bytes_per_sec: u64, period: Duration) -> Bucket {
        let per_period = u128::from(bytes_per_sec) * period.as_nanos() / 1_000_000_000;
        Bucket {
            refill_bytes: u64::try_from(per_period).unwrap_or(u64::MAX).max(1),
            period,
            available: 0,
            next_refill: Duration::ZERO,
            refills: 0,
            queues: [VecDeque::new(), VecDeque::new()],
            next_ticket: 0,
        }
    }

    /// The largest piece one request may ask for.
    pub(crate) fn refill_bytes(&self) -> u64 {
        self.refill_bytes
    }

    /// When the next refill is due.
    pub(crate) fn next_refill(&self) -> Duration {
        self.next_refill
    }

    /// Asks for `bytes` (at most [`Bucket::refill_bytes`]; more is clamped)
    /// at `now`: `None` when they are granted at once, otherwise the ticket
    /// to wait on with [`Bucket::is_waiting`]. Nobody jumps a queue: a
    /// request takes bytes at once only when no one waits, and then takes
    /// what there is and waits for the rest (so no byte of a period is left
    /// unused while a request waits).
    pub(crate) fn request(
        &mut self,
        now: Duration,
        bytes: u64,
        priority: IoPriority,
    ) -> Option<u64> {
        let bytes = bytes.min(self.refill_bytes);
        self.refill_if_due(now);
        let mut remaining = bytes;
        if self.queues.iter().all(VecDeque::is_empty) {
            // Nobody waits: take what there is; only the rest waits.
            let taken = remaining.min(self.available);
            self.available -= taken;
            remaining -= taken;
            if remaining == 0 {
                return None;
            }
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        if let Some(queue) = self.queues.get_mut(priority.index()) {
            queue.push_back(Waiting { ticket, remaining });
        }
        Some(ticket)
    }

    /// Whether the request of `ticket` still waits for bytes.
    pub(crate) fn is_waiting(&self, ticket: u64) -> bool {
        self.queues
            .iter()
            .flatten()
            .any(|waiting| waiting.ticket == ticket)
    }

    /// Refills once if a refill is due at `now` and grants waiting requests
    /// from it; returns whether it refilled. Time that passed beyond one
    /// period adds nothing: the budget is a rate, not a saving.
    pub(crate) fn refill_if_due(&mut self, now: Duration) -> bool {
        if now < self.next_refill {
            return false;
        }
        self.refills += 1;
        self.next_refill = now + self.period;
        self.available = self
            .available
            .saturating_add(self.refill_bytes)
            .min(self.refill_bytes);
        let order = if self.refills.is_multiple_of(FAIRNESS) {
            [IoPriority::Compaction, IoPriority::Flush]
        } else {
            [IoPriority::Flush, IoPriority::Compaction]
        };
        for priority in order {
            let Some(queue) = self.queues.get_mut(priority.index()) else {
                continue;
            };
            while let Some(head) = queue.front_mut() {
                if self.available >= head.remaining {
                    self.available -= head.remaining;
                    queue.pop_front();
                } else {
                    head.remaining -= self.available;
                    self.available = 0;
                    return true;
                }
            }
        }
        true
    }
}

/// What the budget has done since the database opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoBudgetStats {
    /// The limit, in bytes per second.
    pub bytes_per_sec: u64,
    /// Bytes flushes have written through the budget.
    pub flush_bytes: u64,
    /// Time flush writes spent waiting for the budget.
    pub flush_waited: Duration,
    /// Bytes compactions have written through the budget.
    pub compaction_bytes: u64,
    /// Time compaction writes spent waiting for the budget.
    pub compaction_waited: Duration,
}

/// The budget every flush and compaction writer of a database shares.
#[derive(Debug)]
pub(crate) struct IoBudget {
    bytes_per_sec: u64,
    origin: Instant,
    bucket: Mutex<Bucket>,
    /// Woken on every refill.
    refilled: Condvar,
    /// Bytes through the budget, by [`IoPriority::index`].
    bytes: [AtomicU64; 2],
    /// Nanoseconds spent waiting, by [`IoPriority::index`].
    waited_ns: [AtomicU64; 2],
}

impl IoBudget {
    /// A budget of `bytes_per_sec` (at least 1).
    pub(crate) fn new(bytes_per_sec: u64) -> IoBudget {
        IoBudget {
            bytes_per_sec,
            origin: Instant::now(),
            bucket: Mutex::new(Bucket::new(bytes_per_sec, REFILL_PERIOD)),
            refilled: Condvar::new(),
            bytes: [AtomicU64::new(0), AtomicU64::new(0)],
            waited_ns: [AtomicU64::new(0), AtomicU64::new(0)],
        }
    }

    /// Waits until `bytes` may be written at `priority`, in pieces of at
    /// most one period's bytes. Every waiter sleeps until the next refill is
    /// due; the first to wake refills and wakes the rest.
    pub(crate) fn acquire(&self, bytes: u64, priority: IoPriority) {
        let started = Instant::now();
        let mut bucket = self.bucket.lock();
        let mut left = bytes;
        while left > 0 {
            let piece = left.min(bucket.refill_bytes());
            left -= piece;
            let Some(ticket) = bucket.request(self.origin.elapsed(), piece, priority) else {
                continue;
            };
            while bucket.is_waiting(ticket) {
                let now = self.origin.elapsed();
                if bucket.refill_if_due(now) {
                    self.refilled.notify_all();
                } else {
                    let due = bucket.next_refill().saturating_sub(now);
                    self.refilled.wait_for(&mut bucket, due);
                }
            }
        }
        drop(bucket);
        let index = priority.index();
        if let Some(counter) = self.bytes.get(index) {
            counter.fetch_add(bytes, Ordering::Relaxed);
        }
        if let Some(counter) = self.waited_ns.get(index) {
            let waited = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
            counter.fetch_add(waited, Ordering::Relaxed);
        }
    }

    /// The limit and what has passed through it.
    pub(crate) fn stats(&self) -> IoBudgetStats {
        let load = |counters: &[AtomicU64; 2], priority: IoPriority| {
            counters
                .get(priority.index())
                .map_or(0, |counter| counter.load(Ordering::Relaxed))
        };
        IoBudgetStats {
            bytes_per_sec: self.bytes_per_sec,
            flush_bytes: load(&self.bytes, IoPriority::Flush),
            flush_waited: Duration::from_nanos(load(&self.waited_ns, IoPriority::Flush)),
            compaction_bytes: load(&self.bytes, IoPriority::Compaction),
            compaction_waited: Duration::from_nanos(load(&self.waited_ns, IoPriority::Compaction)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// 10,000 bytes a second, 1,000 per 100 ms refill.
    fn bucket() -> Bucket {
        Bucket::new(10_000, REFILL_PERIOD)
    }

    #[test]
    fn a_period_holds_a_tenth_of_a_second_of_bytes_and_idle_time_saves_nothing() {
        let mut b = bucket();
        assert_eq!(b.refill_bytes(), 1000);
        // The first refill is due at once.
        assert_eq!(b.request(Duration::ZERO, 600, IoPriority::Compaction), None);
        assert_eq!(b.request(10 * MS, 400, IoPriority::Compaction), None);
        let ticket = b.request(20 * MS, 1, IoPriority::Compaction).unwrap();
        assert!(b.is_waiting(ticket));
        // Not yet due: nothing changes.
        assert!(!b.refill_if_due(99 * MS));
        assert!(b.is_waiting(ticket));
        assert!(b.refill_if_due(100 * MS));
        assert!(!b.is_waiting(ticket));
        assert_eq!(b.next_refill(), 200 * MS);
        // A minute idle still gives one period's bytes, not 60 seconds' worth.
        assert_eq!(b.request(60_000 * MS, 1000, IoPriority::Compaction), None);
        assert!(b.request(60_000 * MS, 1, IoPriority::Compaction).is_some());
    }

    #[test]
    fn flush_is_served_first_and_compaction_every_tenth_refill() {
        let mut b = bucket();
        assert_eq!(b.request(Duration::ZERO, 1000, IoPriority::Flush), None);
        let compaction = b.request(MS, 1000, IoPriority::Compaction).unwrap();
        let flushes: Vec<u64> = (0..20)
            .map(|_| b.request(MS, 1000, IoPriority::Flush).unwrap())
            .collect();
        // Refills 2..=9 go to flushes, the 10th to the compaction that
        // waited since before them.
        let mut now = Duration::ZERO;
        for (served, flush) in flushes.iter().take(8).enumerate() {
            now += REFILL_PERIOD;
            assert!(b.refill_if_due(now));
            assert!(!b.is_waiting(*flush));
            assert!(b.is_waiting(compaction), "refill {}", served + 2);
        }
        now += REFILL_PERIOD;
        assert!(b.refill_if_due(now));
        assert!(!b.is_waiting(compaction));
        assert!(b.is_waiting(flushes[8]));
    }

    #[test]
    fn requests_take_what_is_there_wait_for_the_rest_and_nobody_jumps_the_queue() {
        let mut b = bucket();
        assert_eq!(b.request(Duration::ZERO, 700, IoPriority::Compaction), None);
        // 300 bytes are left: the next request takes them and waits for 700.
        let first = b.request(MS, 1000, IoPriority::Compaction).unwrap();
        let second = b.request(MS, 1000, IoPriority::Compaction).unwrap();
        assert!(b.refill_if_due(REFILL_PERIOD));
        // 1000 arrived: the head's 700, then 300 of the second's 1000.
        assert!(!b.is_waiting(first));
        assert!(b.is_waiting(second));
        // While someone waits, a request that would fit still queues.
        let third = b.request(REFILL_PERIOD, 1, IoPriority::Flush).unwrap();
        assert!(b.refill_if_due(2 * REFILL_PERIOD));
        // Flush first: the third's byte, then the second's remaining 700.
        assert!(!b.is_waiting(third));
        assert!(!b.is_waiting(second));
        // 299 bytes are left over, and kept.
        assert_eq!(
            b.request(2 * REFILL_PERIOD, 299, IoPriority::Compaction),
            None
        );
        assert!(
            b.request(2 * REFILL_PERIOD, 1, IoPriority::Compaction)
                .is_some()
        );
    }

    #[test]
    fn a_request_above_one_period_is_clamped_and_slow_rates_still_refill() {
        let mut b = bucket();
        let ticket = b.request(Duration::ZERO, 5000, IoPriority::Flush);
        // Clamped to 1000, which the first refill covers.
        assert_eq!(ticket, None);
        let tiny = Bucket::new(1, REFILL_PERIOD);
        assert_eq!(tiny.refill_bytes(), 1);
    }

    #[test]
    fn the_shared_budget_paces_bytes_and_counts_waiting() {
        // 1 MiB/s: 100 KiB per refill. 300 KiB take the first refill at
        // once and two more: at least 200 ms, bounded well under a second.
        let budget = IoBudget::new(1024 * 1024);
        let started = Instant::now();
        budget.acquire(300 * 1024, IoPriority::Compaction);
        let took = started.elapsed();
        assert!(took >= 190 * MS, "{took:?}");
        assert!(took < 2000 * MS, "{took:?}");
        let stats = budget.stats();
        assert_eq!(stats.compaction_bytes, 300 * 1024);
        assert_eq!(stats.flush_bytes, 0);
        assert!(stats.compaction_waited >= 190 * MS);
        assert_eq!(stats.bytes_per_sec, 1024 * 1024);
    }
}
