//! Latency histograms: fixed log-linear buckets of relaxed atomics, cheap
//! enough to leave on.
//!
//! A [`LatencyHistogram`] has one bucket below 128 ns, four buckets per
//! power of two from 128 ns to 2^37 ns (about 137 s: each bucket's width is
//! a quarter of its octave, so a quantile read from the buckets is within
//! 25% of the truth) and one overflow bucket. Recording is two relaxed
//! `fetch_add`s: no lock, no allocation.
//!
//! Puts and gets cost one to a few microseconds, so reading the clock twice
//! for every one (~20-25 ns each) and moving a shared bucket's cache line
//! between cores for every one would cost several percent. They are
//! therefore sampled: each thread times one operation in
//! [`SAMPLE_PERIOD`] of each kind (its first, then every
//! [`SAMPLE_PERIOD`]th) and records it [`SAMPLE_PERIOD`] times over, so a
//! histogram's count and sum estimate every operation's (to within
//! [`SAMPLE_PERIOD`] per thread) and its quantiles are those of the
//! sampled operations. Scans (long) and WAL syncs (timed anyway) are timed
//! every time.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One put or get in this many, per thread and kind, is timed.
pub const SAMPLE_PERIOD: u32 = 16;

/// Values below `2^FIRST_OCTAVE` ns (128 ns) share bucket 0.
const FIRST_OCTAVE: u32 = 7;
/// Values from `2^END_OCTAVE` ns (about 137 s) on share the overflow bucket.
const END_OCTAVE: u32 = 37;
/// Buckets per power of two: 4, so two bits below the leading one pick it.
const SUB_BUCKET_BITS: u32 = 2;
const SUB_BUCKETS: usize = 1 << SUB_BUCKET_BITS;
/// Bucket 0, the log-linear buckets, the overflow bucket.
const BUCKETS: usize = 1 + (END_OCTAVE - FIRST_OCTAVE) as usize * SUB_BUCKETS + 1;

/// A latency histogram of atomics (see the module documentation).
pub(crate) struct LatencyHistogram {
    buckets: [AtomicU64; BUCKETS],
    /// Nanoseconds of every recorded operation (weights included).
    sum_nanos: AtomicU64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_nanos: AtomicU64::new(0),
        }
    }
}

/// The bucket that holds `nanos`.
fn bucket_of(nanos: u64) -> usize {
    if nanos < 1 << FIRST_OCTAVE {
        return 0;
    }
    let octave = u64::BITS - 1 - nanos.leading_zeros();
    if octave >= END_OCTAVE {
        return BUCKETS - 1;
    }
    let sub = (nanos >> (octave - SUB_BUCKET_BITS)) as usize & (SUB_BUCKETS - 1);
    1 + (octave - FIRST_OCTAVE) as usize * SUB_BUCKETS + sub
}

/// The values bucket `index` holds, in nanoseconds: `[lower, upper)`;
/// the overflow bucket's upper bound is `u64::MAX`.
fn bucket_bounds(index: usize) -> (u64, u64) {
    if index == 0 {
        return (0, 1 << FIRST_OCTAVE);
    }
    if index >= BUCKETS - 1 {
        return (1 << END_OCTAVE, u64::MAX);
    }
    let octave = FIRST_OCTAVE + ((index - 1) / SUB_BUCKETS) as u32;
    let sub = ((index - 1) % SUB_BUCKETS) as u64;
    let step = 1u64 << (octave - SUB_BUCKET_BITS);
    let lower = (SUB_BUCKETS as u64 + sub) * step;
    (lower, lower + step)
}

fn nanos_of(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
}

impl LatencyHistogram {
    /// Records `weight` operations that each took `elapsed`.
    pub(crate) fn record(&self, elapsed: Duration, weight: u64) {
        let nanos = nanos_of(elapsed);
        if let Some(bucket) = self.buckets.get(bucket_of(nanos)) {
            bucket.fetch_add(weight, Ordering::Relaxed);
        }
        self.sum_nanos
            .fetch_add(nanos.saturating_mul(weight), Ordering::Relaxed);
    }

    /// What the histogram holds now (relaxed loads: a snapshot taken while
    /// operations run may miss the last few).
    pub(crate) fn snapshot(&self) -> LatencySnapshot {
        let buckets: Vec<u64> = self
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        LatencySnapshot {
            count: buckets.iter().sum(),
            sum: Duration::from_nanos(self.sum_nanos.load(Ordering::Relaxed)),
            buckets,
        }
    }
}

/// A latency histogram's contents at one moment: operations counted, their
/// total time, and the count of each bucket.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LatencySnapshot {
    /// Operations recorded (for sampled kinds, an estimate: see
    /// [`SAMPLE_PERIOD`]).
    pub count: u64,
    /// Their total time.
    pub sum: Duration,
    /// Operations per bucket, bucket 0 first; [`LatencySnapshot::buckets`]
    /// gives each one's bounds.
    buckets: Vec<u64>,
}

/// One bucket of a [`LatencySnapshot`]: the operations that took at least
/// `lower` and less than `upper`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatencyBucket {
    /// Inclusive lower bound.
    pub lower: Duration,
    /// Exclusive upper bound; `None` for the last bucket, which has none.
    pub upper: Option<Duration>,
    /// Operations in the bucket.
    pub count: u64,
}

impl LatencySnapshot {
    /// Every bucket in order of latency, empty ones included (the bounds are
    /// the same in every snapshot).
    pub fn buckets(&self) -> impl ExactSizeIterator<Item = LatencyBucket> + '_ {
        self.buckets.iter().enumerate().map(|(index, &count)| {
            let (lower, upper) = bucket_bounds(index);
            LatencyBucket {
                lower: Duration::from_nanos(lower),
                upper: (upper != u64::MAX).then(|| Duration::from_nanos(upper)),
                count,
            }
        })
    }

    /// Operations that took less than `bound`, counting a bucket only when
    /// `bound` is at or above its upper end (exact at a power of two of
    /// nanoseconds, which is a bucket boundary).
    pub fn count_below(&self, bound: Duration) -> u64 {
        self.buckets()
            .take_while(|b| b.upper.is_some_and(|upper| upper <= bound))
            .map(|b| b.count)
            .sum()
    }

    /// The mean latency; `None` when nothing was recorded.
    pub fn mean(&self) -> Option<Duration> {
        (self.count > 0).then(|| {
            Duration::from_nanos(
                u64::try_from(self.sum.as_nanos() / u128::from(self.count)).unwrap_or(u64::MAX),
            )
        })
    }

    /// The latency below which a fraction `q` (0 to 1) of the operations
    /// fall, interpolated inside its bucket (within a quarter of the true
    /// value up to about 137 s; the overflow bucket answers its lower
    /// bound); `None` when nothing was recorded.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        if self.count == 0 {
            return None;
        }
        let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 1.0) };
        // The rank of the operation asked for, 1-based.
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut below = 0u64;
        for bucket in self.buckets() {
            if below + bucket.count >= rank {
                let Some(upper) = bucket.upper else {
                    return Some(bucket.lower);
                };
                let into = (rank - below) as f64 / bucket.count as f64;
                return Some(bucket.lower + (upper - bucket.lower).mul_f64(into));
            }
            below += bucket.count;
        }
        None
    }
}

/// The operation kinds a thread samples (each has its own countdown, so a
/// thread that alternates kinds samples every kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sampled {
    /// A commit of one or more row mutations.
    Write = 0,
    /// A single-row get.
    Get = 1,
}

thread_local! {
    /// Per kind: operations left before the thread times the next one.
    static UNTIMED: [Cell<u32>; 2] = const { [Cell::new(0), Cell::new(0)] };
}

/// The database's operation latency histograms (what HBase's RegionServer
/// reports as `Put`/`Get`/`ScanTime`; the WAL keeps its sync latency, its
/// `SyncTime`).
#[derive(Default)]
pub(crate) struct Latencies {
    /// Commits of row mutations (put, delete, increment, append,
    /// check-and-mutate, batch): from the WAL append to visibility (and
    /// durability when a sync was asked for). Sampled.
    pub(crate) write: LatencyHistogram,
    /// Single-row gets. Sampled.
    pub(crate) get: LatencyHistogram,
    /// Scans, from the start to the end of the scan or the scanner's drop.
    pub(crate) scan: Arc<LatencyHistogram>,
}

/// When a sampled operation started, if this one is timed.
#[derive(Debug, Clone, Copy)]
#[must_use]
pub(crate) struct SampleStart(Option<Instant>);

impl Latencies {
    /// Starts an operation of `kind`: reads the clock for one in
    /// [`SAMPLE_PERIOD`] of the thread's operations of the kind.
    #[inline]
    pub(crate) fn start(kind: Sampled) -> SampleStart {
        let timed = UNTIMED
            .try_with(|untimed| {
                let left = untimed.get(kind as usize)?;
                match left.get() {
                    0 => {
                        left.set(SAMPLE_PERIOD - 1);
                        Some(Instant::now())
                    }
                    n => {
                        left.set(n - 1);
                        None
                    }
                }
            })
            .ok()
            .flatten();
        SampleStart(timed)
    }

    /// Ends a sampled operation begun with [`Latencies::start`]: records it
    /// into `histogram` if it was timed.
    #[inline]
    pub(crate) fn finish(histogram: &LatencyHistogram, start: SampleStart) {
        if let SampleStart(Some(started)) = start {
            histogram.record(started.elapsed(), u64::from(SAMPLE_PERIOD));
        }
    }

    /// A timer for one scan, recorded when dropped.
    pub(crate) fn scan_timer(&self) -> ScanTimer {
        ScanTimer {
            histogram: Arc::clone(&self.scan),
            started: Instant::now(),
        }
    }
}

/// Times one scan from its start until it is dropped (a scanner holds it).
pub(crate) struct ScanTimer {
    histogram: Arc<LatencyHistogram>,
    started: Instant,
}

impl Drop for ScanTimer {
    fn drop(&mut self) {
        self.histogram.record(self.started.elapsed(), 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_falls_in_the_bucket_whose_bounds_hold_it() {
        let mut values = vec![0, 1, 127, 128, 129, 159, 160, 255, 256, 1_000, 1_500_000];
        values.extend([(1 << 37) - 1, 1 << 37, u64::MAX]);
        for shift in 7..40 {
            values.extend([(1u64 << shift) - 1, 1 << shift, (1 << shift) + 1]);
        }
        for nanos in values {
            let index = bucket_of(nanos);
            let (lower, upper) = bucket_bounds(index);
            assert!(index < BUCKETS, "{nanos}");
            assert!(
                lower <= nanos,
                "{nanos} below bucket {index} [{lower}, {upper})"
            );
            assert!(
                nanos < upper || upper == u64::MAX,
                "{nanos} above bucket {index}"
            );
        }
    }

    #[test]
    fn buckets_are_contiguous_and_a_quarter_octave_wide() {
        for index in 1..BUCKETS - 1 {
            let (lower, upper) = bucket_bounds(index);
            assert_eq!(bucket_bounds(index - 1).1, lower);
            assert!((upper - lower) * 4 <= lower, "bucket {index} is too wide");
        }
    }

    #[test]
    fn quantiles_come_within_a_quarter_of_the_recorded_latencies() {
        let histogram = LatencyHistogram::default();
        // 1..=1000 microseconds, one operation each.
        for micros in 1..=1000u64 {
            histogram.record(Duration::from_micros(micros), 1);
        }
        let snapshot = histogram.snapshot();
        assert_eq!(snapshot.count, 1000);
        assert_eq!(snapshot.sum, Duration::from_micros(500_500));
        assert_eq!(snapshot.mean(), Some(Duration::from_nanos(500_500)));
        for (q, expected) in [(0.5, 500.0), (0.9, 900.0), (0.99, 990.0), (1.0, 1000.0)] {
            let got = snapshot.quantile(q).map(|d| d.as_secs_f64() * 1e6);
            let got = got.unwrap_or_default();
            assert!(
                (got - expected).abs() <= expected * 0.25,
                "p{q}: {got} us, expected about {expected}"
            );
        }
        assert_eq!(
            snapshot.buckets().map(|b| b.count).sum::<u64>(),
            snapshot.count
        );
        assert_eq!(
            snapshot.count_below(Duration::from_nanos(1 << 10)),
            1,
            "only 1 us is below 1,024 ns"
        );
        assert_eq!(
            snapshot.count_below(Duration::from_nanos(1 << 20)),
            1000,
            "every value is below 1.05 ms"
        );
    }

    #[test]
    fn an_empty_histogram_has_no_quantile_and_an_overflow_answers_its_lower_bound() {
        let histogram = LatencyHistogram::default();
        assert_eq!(histogram.snapshot().quantile(0.5), None);
        assert_eq!(histogram.snapshot().mean(), None);
        histogram.record(Duration::from_secs(1_000), 3);
        let snapshot = histogram.snapshot();
        assert_eq!(snapshot.count, 3);
        assert_eq!(
            snapshot.quantile(0.99),
            Some(Duration::from_nanos(1 << END_OCTAVE))
        );
        assert_eq!(snapshot.buckets().last().map(|b| b.upper), Some(None));
    }

    #[test]
    fn a_thread_times_its_first_operation_of_each_kind_then_one_in_the_period() {
        // A fresh thread: the countdowns start at zero.
        let timed = std::thread::spawn(|| {
            (0..SAMPLE_PERIOD * 3)
                .flat_map(|_| [Sampled::Write, Sampled::Get])
                .map(|kind| Latencies::start(kind).0.is_some())
                .collect::<Vec<bool>>()
        })
        .join()
        .unwrap();
        let period = SAMPLE_PERIOD as usize;
        let expected: Vec<bool> = (0..period * 3)
            .flat_map(|i| [i % period == 0, i % period == 0])
            .collect();
        assert_eq!(timed, expected);
    }
}
