//! Keys and values, and the permutation that orders a random load.
//!
//! Every engine sees exactly the same sequence of keys and values for a
//! given `--seed`, workload and thread: they are drawn from the seeded
//! generators of [`crate::random`] and do not depend on the engine.

use crate::random::Rng;
use crate::settings::ValueKind;

/// A random permutation of `0..n` (Fisher-Yates): fillrandom writes each key
/// exactly once, in random order, so reads of loaded keys always find them.
pub fn permutation(n: u64, rng: &mut Rng) -> Vec<u64> {
    let mut indices: Vec<u64> = (0..n).collect();
    for i in (1..indices.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        indices.swap(i, j);
    }
    indices
}

/// Shortest key of the db_bench shape: an 8-byte big-endian index.
pub const MIN_DB_BENCH_KEY_BYTES: usize = 8;
/// Key width of HBase PerformanceEvaluation: 26 zero-padded decimal digits.
pub const PE_KEY_BYTES: usize = 26;
/// Value size of HBase PerformanceEvaluation.
pub const PE_VALUE_BYTES: usize = 1000;

/// Byte that pads db_bench keys after the index.
const KEY_PAD_BYTE: u8 = b'0';
/// Byte that marks a key as absent: it sorts just below the padding, so an
/// absent key falls between two present keys (like db_bench's `key.`).
const MISSING_KEY_BYTE: u8 = b'.';

/// How a key index becomes key bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyShape {
    /// db_bench: the index as 8 big-endian bytes, then `0` bytes up to the
    /// key size. Keys sort in index order.
    DbBench {
        /// Total key size in bytes (>= 8).
        key_bytes: usize,
    },
    /// HBase PerformanceEvaluation: `format!("{:026}", index)`.
    Pe,
    /// Scenario 4's web-page records: ten 4-byte big-endian fields
    /// (`crate::pages`). Keys do not sort in index order.
    Pages,
}

impl KeyShape {
    /// Size of a present key in bytes.
    pub fn key_bytes(self) -> usize {
        match self {
            KeyShape::DbBench { key_bytes } => key_bytes,
            KeyShape::Pe => PE_KEY_BYTES,
            KeyShape::Pages => crate::pages::PAGES_KEY_BYTES,
        }
    }

    /// Writes the key of `index` into `out` (replacing its contents).
    pub fn write_key(self, index: u64, out: &mut Vec<u8>) {
        out.clear();
        match self {
            KeyShape::Pages => crate::pages::write_key(index, out),
            KeyShape::DbBench { key_bytes } => {
                out.extend_from_slice(&index.to_be_bytes());
                out.resize(key_bytes.max(MIN_DB_BENCH_KEY_BYTES), KEY_PAD_BYTE);
            }
            KeyShape::Pe => {
                use std::io::Write as _;
                // Writing into a Vec cannot fail.
                let _ = write!(out, "{index:026}");
            }
        }
    }

    /// Writes a key that is never written but sorts right next to the key
    /// of `index`: its last byte is `.` instead of `0`, or `.` is appended
    /// when the key has no padding.
    pub fn write_missing_key(self, index: u64, out: &mut Vec<u8>) {
        self.write_key(index, out);
        match (self, out.last_mut()) {
            (KeyShape::DbBench { key_bytes }, Some(last)) if key_bytes > MIN_DB_BENCH_KEY_BYTES => {
                *last = MISSING_KEY_BYTE;
            }
            _ => out.push(MISSING_KEY_BYTE),
        }
    }
}

/// Size of the buffer values are cut from.
const VALUE_POOL_BYTES: usize = 1 << 20;
/// Values are built from pieces of this size, each half random and half a
/// copy of that half: db_bench's default compression ratio of 0.5.
const VALUE_PIECE_BYTES: usize = 100;

/// The vocabulary of [`ValuePool::text`], most common first.
const TEXT_WORDS: [&str; 64] = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "had",
    "they",
    "you",
    "were",
    "their",
    "one",
    "all",
    "we",
    "can",
    "her",
    "has",
    "there",
    "been",
    "if",
    "more",
    "when",
    "will",
    "would",
    "who",
    "so",
    "no",
    "request",
    "server",
    "region",
    "table",
    "family",
    "column",
    "latency",
    "compaction",
    "flush",
    "timeout",
    "user",
    "session",
    "error",
    "warning",
    "status",
];

/// Values: slices of a pool of half-compressible bytes, as db_bench's
/// `RandomGenerator` makes them. Shared read-only by all threads.
#[derive(Debug)]
pub struct ValuePool {
    pool: Vec<u8>,
    value_bytes: usize,
}

impl ValuePool {
    /// A pool for values of `value_bytes`, filled from `seed`.
    pub fn new(value_bytes: usize, seed: u64) -> ValuePool {
        let mut rng = Rng::new(seed);
        let len = VALUE_POOL_BYTES.max(value_bytes * 2);
        let mut pool = Vec::with_capacity(len + VALUE_PIECE_BYTES);
        while pool.len() < len {
            let half = VALUE_PIECE_BYTES / 2;
            let start = pool.len();
            // Printable ASCII, like db_bench's RandomString.
            pool.extend((0..half).map(|_| b' ' + rng.below(95) as u8));
            pool.extend_from_within(start..start + half);
        }
        ValuePool { pool, value_bytes }
    }

    /// A pool of `kind` values of `value_bytes`, filled from `seed`.
    pub fn of(kind: ValueKind, value_bytes: usize, seed: u64) -> ValuePool {
        match kind {
            ValueKind::Random => ValuePool::new(value_bytes, seed),
            ValueKind::Text => ValuePool::text(value_bytes, seed),
        }
    }

    /// A pool of text: words of [`TEXT_WORDS`] separated by spaces, a word's
    /// chance falling with its rank (the first words are the most common, as
    /// in prose), and a sentence of them ending every dozen words or so.
    pub fn text(value_bytes: usize, seed: u64) -> ValuePool {
        let mut rng = Rng::new(seed);
        let len = VALUE_POOL_BYTES.max(value_bytes * 2);
        let mut pool = Vec::with_capacity(len + 32);
        while pool.len() < len {
            // The smaller of two draws favours low ranks (roughly Zipf-like).
            let rank = rng
                .below(TEXT_WORDS.len() as u64)
                .min(rng.below(TEXT_WORDS.len() as u64));
            pool.extend_from_slice(TEXT_WORDS[rank as usize].as_bytes());
            pool.push(if rng.below(12) == 0 { b'.' } else { b' ' });
        }
        ValuePool { pool, value_bytes }
    }

    /// Size of every value in bytes.
    pub fn value_bytes(&self) -> usize {
        self.value_bytes
    }

    /// A value chosen by `rng`.
    pub fn value(&self, rng: &mut Rng) -> &[u8] {
        let span = (self.pool.len() - self.value_bytes) as u64;
        let start = rng.below(span.max(1)) as usize;
        self.pool
            .get(start..start + self.value_bytes)
            .unwrap_or(&self.pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_bench_keys_sort_in_index_order_and_missing_keys_sit_between() {
        let shape = KeyShape::DbBench { key_bytes: 16 };
        let (mut a, mut b, mut m) = (Vec::new(), Vec::new(), Vec::new());
        shape.write_key(5, &mut a);
        shape.write_key(6, &mut b);
        shape.write_missing_key(6, &mut m);
        assert_eq!(a.len(), 16);
        assert_eq!(m.len(), 16);
        assert!(a < m && m < b);
    }

    #[test]
    fn pe_keys_are_26_digits() {
        let mut k = Vec::new();
        KeyShape::Pe.write_key(42, &mut k);
        assert_eq!(k, b"00000000000000000000000042");
    }

    #[test]
    fn permutation_has_every_index_once() {
        let mut p = permutation(1000, &mut Rng::new(1));
        assert_ne!(p[..10], (0..10).collect::<Vec<_>>()[..]);
        p.sort_unstable();
        assert_eq!(p, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn text_values_are_words_and_compress_better_than_random_ones() {
        let text = ValuePool::of(ValueKind::Text, 1000, 3);
        let value = text.value(&mut Rng::new(1));
        assert_eq!(value.len(), 1000);
        assert!(
            value
                .iter()
                .all(|b| b.is_ascii_lowercase() || b" .".contains(b))
        );
        let random = ValuePool::of(ValueKind::Random, 1000, 3);
        let distinct = |pool: &ValuePool| {
            let mut seen = std::collections::HashSet::new();
            let bytes = pool.value(&mut Rng::new(1));
            for pair in bytes.windows(2) {
                seen.insert(pair.to_vec());
            }
            seen.len()
        };
        assert!(distinct(&text) < distinct(&random), "text repeats more");
    }

    #[test]
    fn values_have_the_requested_size() {
        let pool = ValuePool::new(100, 3);
        let mut rng = Rng::new(9);
        for _ in 0..1000 {
            assert_eq!(pool.value(&mut rng).len(), 100);
        }
        let big = ValuePool::new(3 << 20, 3);
        assert_eq!(big.value(&mut rng).len(), 3 << 20);
    }
}
