//! Split-block bloom filters over xxh3 (`docs/format.md`, "HFile: bloom").
//!
//! The filter is an array of 64-byte blocks (one cache line each); which
//! block and which bits a key's hash sets is `crate::split_block`'s mapping,
//! shared with the memstore's row filter. A probe therefore touches one
//! cache line. The filter is probed in place in the bytes the reader keeps
//! resident; nothing is decoded.
//!
//! The hash does not depend on `std::hash::Hash`, so the bytes mean the same
//! thing on every platform and Rust version.

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Bytes per filter block.
const BLOCK_BYTES: usize = 64;

/// The hash of a row, for ROW blooms and as the seed of ROWCOL hashes.
pub(crate) use crate::split_block::row_hash;
use crate::split_block::{bits, block_index};

/// The hash of a (row, qualifier) pair, for ROWCOL blooms.
pub(crate) fn cell_hash(row: &[u8], qualifier: &[u8]) -> u64 {
    xxh3_64_with_seed(qualifier, row_hash(row))
}

/// Builds the filter bytes for `hashes` at `bits_per_key`.
pub(crate) fn build(hashes: &[u64], bits_per_key: u32) -> Vec<u8> {
    let total_bits = hashes.len().max(1) * bits_per_key.max(1) as usize;
    let blocks = total_bits.div_ceil(BLOCK_BYTES * 8).max(1);
    let mut filter = vec![0u8; blocks * BLOCK_BYTES];
    for &hash in hashes {
        let base = block_index(hash, blocks) * BLOCK_BYTES;
        for (i, bit) in bits(hash).into_iter().enumerate() {
            let at = base + i * 8;
            if let Some(word) = filter.get_mut(at..at + 8) {
                let mut w = [0u8; 8];
                w.copy_from_slice(word);
                word.copy_from_slice(&(u64::from_le_bytes(w) | bit).to_le_bytes());
            }
        }
    }
    filter
}

/// Starts loading the one cache line [`may_contain`] reads for `hash`, so
/// that the probes of several files wait for memory together.
#[inline]
pub(crate) fn prefetch(filter: &[u8], hash: u64) {
    if let Some(base) = block_base(filter, hash) {
        crate::prefetch::line(filter.as_ptr().wrapping_add(base));
    }
}

/// Offset of the block `hash` maps to; `None` for a filter that is not a
/// whole, non-zero number of blocks.
fn block_base(filter: &[u8], hash: u64) -> Option<usize> {
    let blocks = filter.len() / BLOCK_BYTES;
    (blocks > 0 && filter.len().is_multiple_of(BLOCK_BYTES))
        .then(|| block_index(hash, blocks) * BLOCK_BYTES)
}

/// True when `hash` may be in the filter; false means certainly absent.
/// A filter whose length is not a whole number of blocks answers "may".
pub(crate) fn may_contain(filter: &[u8], hash: u64) -> bool {
    let Some(base) = block_base(filter, hash) else {
        return true;
    };
    let Some(block) = filter.get(base..base + BLOCK_BYTES) else {
        return true;
    };
    bits(hash).into_iter().enumerate().all(|(i, bit)| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&block[i * 8..i * 8 + 8]);
        u64::from_le_bytes(w) & bit != 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_false_negatives_and_about_one_percent_false_positives() {
        let keys: Vec<u64> = (0..100_000u64)
            .map(|i| row_hash(format!("key{i}").as_bytes()))
            .collect();
        let filter = build(&keys, 10);
        assert_eq!(filter.len(), 100_000 * 10 / 512 * 64 + 64);
        assert!(keys.iter().all(|&h| may_contain(&filter, h)));
        let false_positives = (0..100_000u64)
            .filter(|i| may_contain(&filter, row_hash(format!("absent{i}").as_bytes())))
            .count();
        assert!(
            false_positives < 1_600,
            "{false_positives} false positives in 100000"
        );
    }

    #[test]
    fn row_and_cell_hashes_differ() {
        assert_ne!(cell_hash(b"r", b"q"), cell_hash(b"rq", b""));
        assert_ne!(cell_hash(b"r", b""), row_hash(b"r"));
    }

    #[test]
    fn malformed_filters_answer_may() {
        assert!(may_contain(&[], 42));
        assert!(may_contain(&[0u8; 65], 42));
    }

    proptest::proptest! {
        /// A filter built from any keys contains every one of them, at any
        /// bits per key; probes of any bytes never panic.
        #[test]
        fn built_filters_have_no_false_negatives(
            keys in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..16), 0..300),
            bits_per_key in 0u32..24,
            noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
        ) {
            let rows: Vec<u64> = keys.iter().map(|k| row_hash(k)).collect();
            let cells: Vec<u64> = keys.iter().map(|k| cell_hash(k, b"q")).collect();
            for hashes in [rows, cells] {
                let filter = build(&hashes, bits_per_key);
                proptest::prop_assert!(filter.len().is_multiple_of(BLOCK_BYTES) && !filter.is_empty());
                proptest::prop_assert!(hashes.iter().all(|&h| may_contain(&filter, h)));
                for &h in &hashes {
                    let _ = may_contain(&noise, h);
                }
            }
        }
    }
}
