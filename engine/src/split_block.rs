//! The hash-to-bits mapping of split-block bloom filters, shared by the
//! HFile blooms (bytes on disk, `hfile::bloom`) and the memstore's row
//! filter (atomics in memory, `memstore`).
//!
//! A key's 64-bit xxh3 hash picks one 64-byte block (upper 32 bits, by
//! multiply-shift) and sets one bit in each of the block's eight 64-bit
//! words (the lower 32 bits multiplied by eight odd constants; the top 6 bits
//! of each product choose the bit). A probe therefore touches one cache
//! line. The mapping is part of the HFile format (`docs/format.md`, "HFile:
//! bloom"): changing it makes every stored bloom answer wrongly.

use xxhash_rust::xxh3::xxh3_64;

const SALTS: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// The hash of a row: the key of ROW blooms, the seed of ROWCOL hashes and
/// the key of the memstore's row filter. Worked out once per get and handed
/// to every filter the get probes.
pub(crate) fn row_hash(row: &[u8]) -> u64 {
    xxh3_64(row)
}

/// The bit `hash` sets in each of its block's eight words.
#[inline]
pub(crate) fn bits(hash: u64) -> [u64; 8] {
    let low = hash as u32;
    let mut words = [0u64; 8];
    for (word, salt) in words.iter_mut().zip(SALTS) {
        *word = 1u64 << (low.wrapping_mul(salt) >> 26);
    }
    words
}

/// The block `hash` maps to among `blocks` (which must be at least 1).
#[inline]
pub(crate) fn block_index(hash: u64, blocks: usize) -> usize {
    (((hash >> 32) * blocks as u64) >> 32) as usize
}
