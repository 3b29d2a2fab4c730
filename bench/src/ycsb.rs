//! YCSB's core workloads A..F and the generators they use, ported from
//! YCSB's `CoreWorkload`, `ZipfianGenerator`, `ScrambledZipfianGenerator`
//! and `SkewedLatestGenerator` so the access patterns match the original.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::random::Rng;

/// YCSB's default zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// Item count of the zipfian generator behind the scrambled one (YCSB's
/// `ScrambledZipfianGenerator.ITEM_COUNT`).
const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000;
/// zeta(10^10, 0.99), precomputed by YCSB (`ScrambledZipfianGenerator.ZETAN`).
const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;
/// Longest scan of workload E (YCSB's `maxscanlength` default).
pub const MAX_SCAN_LENGTH: u64 = 100;

/// One of YCSB's core workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YcsbKind {
    /// 50% reads, 50% updates, zipfian.
    A,
    /// 95% reads, 5% updates, zipfian.
    B,
    /// 100% reads, zipfian.
    C,
    /// 95% reads, 5% inserts, latest.
    D,
    /// 95% scans (length uniform 1..=100), 5% inserts, zipfian.
    E,
    /// 50% reads, 50% read-modify-writes, zipfian.
    F,
}

/// What one YCSB operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YcsbOp {
    /// Read one record.
    Read,
    /// Overwrite one record.
    Update,
    /// Insert a new record.
    Insert,
    /// Scan from a record.
    Scan,
    /// Read a record, then write it back.
    ReadModifyWrite,
}

impl YcsbKind {
    /// Lower-case letter used in workload names (`ycsb-a`).
    pub fn letter(self) -> char {
        match self {
            YcsbKind::A => 'a',
            YcsbKind::B => 'b',
            YcsbKind::C => 'c',
            YcsbKind::D => 'd',
            YcsbKind::E => 'e',
            YcsbKind::F => 'f',
        }
    }

    /// The operation mix as (operation, proportion), as YCSB's workload files
    /// define it.
    pub fn mix(self) -> &'static [(YcsbOp, f64)] {
        match self {
            YcsbKind::A => &[(YcsbOp::Read, 0.5), (YcsbOp::Update, 0.5)],
            YcsbKind::B => &[(YcsbOp::Read, 0.95), (YcsbOp::Update, 0.05)],
            YcsbKind::C => &[(YcsbOp::Read, 1.0)],
            YcsbKind::D => &[(YcsbOp::Read, 0.95), (YcsbOp::Insert, 0.05)],
            YcsbKind::E => &[(YcsbOp::Scan, 0.95), (YcsbOp::Insert, 0.05)],
            YcsbKind::F => &[(YcsbOp::Read, 0.5), (YcsbOp::ReadModifyWrite, 0.5)],
        }
    }

    /// Proportion of inserts (sizes the scrambled zipfian's key range, as
    /// YCSB's `expectednewkeys`).
    pub fn insert_proportion(self) -> f64 {
        self.mix()
            .iter()
            .filter(|(op, _)| *op == YcsbOp::Insert)
            .map(|(_, p)| p)
            .sum()
    }

    /// Picks the next operation (YCSB's `DiscreteGenerator`).
    pub fn next_op(self, rng: &mut Rng) -> YcsbOp {
        let mix = self.mix();
        let mut u = rng.next_f64();
        for (op, proportion) in mix {
            if u < *proportion {
                return *op;
            }
            u -= proportion;
        }
        mix.last().map_or(YcsbOp::Read, |(op, _)| *op)
    }

    /// Whether keys follow the "latest" distribution (D) instead of the
    /// scrambled zipfian.
    pub fn uses_latest(self) -> bool {
        self == YcsbKind::D
    }
}

/// `sum_{i=from+1..=to} 1 / i^theta`, added to `initial` (YCSB's `zeta`).
fn zeta(from: u64, to: u64, theta: f64, initial: f64) -> f64 {
    (from + 1..=to).fold(initial, |sum, i| sum + 1.0 / (i as f64).powf(theta))
}

/// YCSB's `ZipfianGenerator`: item `base` is the most popular, then
/// `base + 1`, and so on (Gray et al., "Quickly generating billion-record
/// synthetic databases").
#[derive(Debug, Clone)]
pub struct Zipfian {
    base: u64,
    items: u64,
    theta: f64,
    alpha: f64,
    zeta2theta: f64,
    zetan: f64,
    eta: f64,
}

impl Zipfian {
    /// Items `min..=max` with constant `theta`; computes zeta(n) (O(n)).
    pub fn new(min: u64, max: u64, theta: f64) -> Zipfian {
        let items = max - min + 1;
        Zipfian::with_zetan(min, max, theta, zeta(0, items, theta, 0.0))
    }

    /// Items `min..=max` with a precomputed zeta(n).
    pub fn with_zetan(min: u64, max: u64, theta: f64, zetan: f64) -> Zipfian {
        let items = max - min + 1;
        let zeta2theta = zeta(0, 2, theta, 0.0);
        let mut z = Zipfian {
            base: min,
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta2theta,
            zetan,
            eta: 0.0,
        };
        z.eta = z.eta_for(items);
        z
    }

    fn eta_for(&self, items: u64) -> f64 {
        (1.0 - (2.0 / items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2theta / self.zetan)
    }

    /// Grows the item count to `items`, extending zeta incrementally (YCSB's
    /// `nextLong(itemcount)` for a growing count). A smaller count recomputes.
    fn resize(&mut self, items: u64) {
        if items == self.items {
            return;
        }
        self.zetan = if items > self.items {
            zeta(self.items, items, self.theta, self.zetan)
        } else {
            zeta(0, items, self.theta, 0.0)
        };
        self.items = items;
        self.eta = self.eta_for(items);
    }

    /// The next item.
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        let u = rng.next_f64();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        let offset = (self.items as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        self.base + offset.min(self.items - 1)
    }
}

/// YCSB's 64-bit FNV-1a over the 8 little-endian bytes of `value`, with
/// Java's `Math.abs` applied.
pub fn fnv_hash64(mut value: u64) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 1_099_511_628_211;
    let mut hash = OFFSET_BASIS;
    for _ in 0..8 {
        hash ^= value & 0xff;
        hash = hash.wrapping_mul(PRIME);
        value >>= 8;
    }
    (hash as i64).unsigned_abs()
}

/// YCSB's `ScrambledZipfianGenerator`: zipfian popularity, with the popular
/// items scattered over `min..=max` by hashing.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    zipfian: Zipfian,
    min: u64,
    items: u64,
}

impl ScrambledZipfian {
    /// Items `min..=max` at YCSB's default constant 0.99.
    pub fn new(min: u64, max: u64) -> ScrambledZipfian {
        ScrambledZipfian {
            zipfian: Zipfian::with_zetan(
                0,
                SCRAMBLED_ITEM_COUNT,
                ZIPFIAN_CONSTANT,
                SCRAMBLED_ZETAN,
            ),
            min,
            items: max - min + 1,
        }
    }

    /// The next item.
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        self.min + fnv_hash64(self.zipfian.next(rng)) % self.items
    }
}

/// YCSB's `SkewedLatestGenerator`: the most recently inserted records are
/// the most popular (zipfian over the distance from the newest).
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// A generator for a table that currently holds `count` records.
    pub fn new(count: u64) -> SkewedLatest {
        SkewedLatest {
            zipfian: Zipfian::new(0, count.max(1) - 1, ZIPFIAN_CONSTANT),
        }
    }

    /// A record index in `0..count`, where `count` records are inserted now.
    /// As in YCSB, `last - zipfian(last)`: the newest record is the most
    /// popular.
    pub fn next(&mut self, rng: &mut Rng, count: u64) -> u64 {
        let last = count.saturating_sub(1);
        if last == 0 {
            return 0;
        }
        self.zipfian.resize(last);
        last - self.zipfian.next(rng)
    }
}

/// Hands out the indices of inserted records and tracks how many are
/// acknowledged without gaps (YCSB's `AcknowledgedCounterGenerator`):
/// readers choose only among records known to be written.
#[derive(Debug)]
pub struct InsertCounter {
    next: AtomicU64,
    acknowledged: AtomicU64,
    out_of_order: Mutex<BTreeSet<u64>>,
}

impl InsertCounter {
    /// A counter for a table already holding `count` records.
    pub fn new(count: u64) -> InsertCounter {
        InsertCounter {
            next: AtomicU64::new(count),
            acknowledged: AtomicU64::new(count),
            out_of_order: Mutex::new(BTreeSet::new()),
        }
    }

    /// Reserves the next record index to insert.
    pub fn claim(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Marks record `index` as written.
    pub fn acknowledge(&self, index: u64) {
        let mut pending = self.out_of_order.lock();
        pending.insert(index);
        let mut count = self.acknowledged.load(Ordering::Relaxed);
        while pending.remove(&count) {
            count += 1;
        }
        self.acknowledged.store(count, Ordering::Release);
    }

    /// Records `0..count()` are all written.
    pub fn count(&self) -> u64 {
        self.acknowledged.load(Ordering::Acquire)
    }

    /// Records claimed so far (written or in flight).
    pub fn claimed(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipfian_prefers_small_items() {
        let mut z = Zipfian::new(0, 999, ZIPFIAN_CONSTANT);
        let mut rng = Rng::new(7);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            let v = z.next(&mut rng);
            counts[v as usize] += 1;
        }
        assert!(counts[0] > counts[1] && counts[1] > counts[10] && counts[10] > counts[500]);
        // Item 0 gets about 1/zeta(1000) ~ 13% of the draws at theta 0.99.
        assert!((10_000..16_000).contains(&counts[0]), "{}", counts[0]);
    }

    #[test]
    fn scrambled_zipfian_stays_in_range_and_is_skewed() {
        let mut z = ScrambledZipfian::new(0, 9_999);
        let mut rng = Rng::new(1);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..100_000 {
            let v = z.next(&mut rng);
            assert!(v < 10_000);
            *counts.entry(v).or_insert(0u32) += 1;
        }
        let max = counts.values().copied().max().unwrap_or(0);
        // A uniform draw would give about 10 per item.
        assert!(max > 1_000, "{max}");
    }

    #[test]
    fn skewed_latest_prefers_recent_records() {
        let mut latest = SkewedLatest::new(1000);
        let mut rng = Rng::new(3);
        let recent = (0..10_000)
            .filter(|_| latest.next(&mut rng, 1000) >= 900)
            .count();
        assert!(recent > 5_000, "{recent}");
        // The count can grow between calls.
        assert!(latest.next(&mut rng, 2000) < 2000);
    }

    #[test]
    fn insert_counter_acknowledges_without_gaps() {
        let c = InsertCounter::new(10);
        let (a, b) = (c.claim(), c.claim());
        c.acknowledge(b);
        assert_eq!(c.count(), 10);
        c.acknowledge(a);
        assert_eq!(c.count(), 12);
    }

    #[test]
    fn mixes_sum_to_one() {
        for kind in [
            YcsbKind::A,
            YcsbKind::B,
            YcsbKind::C,
            YcsbKind::D,
            YcsbKind::E,
            YcsbKind::F,
        ] {
            let sum: f64 = kind.mix().iter().map(|(_, p)| p).sum();
            assert!((sum - 1.0).abs() < 1e-9);
        }
    }
}
