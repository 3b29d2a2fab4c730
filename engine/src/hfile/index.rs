//! Block indexes (`docs/format.md`, "HFile: index").
//!
//! An index block lists blocks with their first and last row keys and
//! handles, in key order, as columns:
//!
//! ```text
//! entry count u32 | first rows (bytes) | last rows (bytes)
//! offsets (ints) | stored lengths (ints) | ordinal bases (ints)
//! ```
//!
//! A small file has one index block listing its data blocks (ordinal bases
//! all 0, which the integer encoding stores in 9 bytes). A large file has a
//! two-level index: leaf index blocks list the data blocks, and the top
//! index lists the leaves, each with the ordinal of its first data block so
//! that "data block number k" can be found without reading every leaf.

use std::cmp::Ordering;

use super::block::{BlockHandle, BytesColumn, IntColumn, encode_bytes, encode_ints};
use super::partition_point;
use crate::cell::compare_bytes;
use crate::codec::{DecodeError, Decoder, Encode};

/// One entry of an index block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    pub(crate) first_row: Vec<u8>,
    pub(crate) last_row: Vec<u8>,
    pub(crate) handle: BlockHandle,
    /// For top-level entries of a two-level index: ordinal of the leaf's
    /// first data block. Zero elsewhere.
    pub(crate) ordinal_base: u64,
}

/// Encodes an index block payload.
pub(crate) fn encode_index(entries: &[IndexEntry]) -> Vec<u8> {
    let mut out = Vec::new();
    out.put_u32(entries.len() as u32);
    encode_bytes(entries.iter().map(|e| e.first_row.as_slice()), &mut out);
    encode_bytes(entries.iter().map(|e| e.last_row.as_slice()), &mut out);
    let offsets: Vec<u64> = entries.iter().map(|e| e.handle.offset).collect();
    let lens: Vec<u64> = entries.iter().map(|e| u64::from(e.handle.len)).collect();
    let bases: Vec<u64> = entries.iter().map(|e| e.ordinal_base).collect();
    encode_ints(&offsets, &mut out);
    encode_ints(&lens, &mut out);
    encode_ints(&bases, &mut out);
    out
}

/// A decoded index block.
#[derive(Debug)]
pub(crate) struct IndexBlock {
    data: Box<[u8]>,
    count: usize,
    first_rows: BytesColumn,
    last_rows: BytesColumn,
    offsets: IntColumn,
    lens: IntColumn,
    ordinal_bases: IntColumn,
}

impl IndexBlock {
    /// Decodes and validates an index block: entries in key order, handles
    /// inside `[0, limit)`.
    pub(crate) fn decode(payload: Vec<u8>, limit: u64) -> Result<IndexBlock, DecodeError> {
        let data = payload.into_boxed_slice();
        let mut d = Decoder::new(&data);
        let count = d.u32()? as usize;
        let first_rows = BytesColumn::parse(&mut d, count, &data)?;
        let last_rows = BytesColumn::parse(&mut d, count, &data)?;
        let offsets = IntColumn::parse(&mut d, count)?;
        let lens = IntColumn::parse(&mut d, count)?;
        let ordinal_bases = IntColumn::parse(&mut d, count)?;
        if !d.is_empty() {
            return Err(DecodeError("trailing bytes after the index".into()));
        }
        let block = IndexBlock {
            data,
            count,
            first_rows,
            last_rows,
            offsets,
            lens,
            ordinal_bases,
        };
        let mut previous_end = 0u64;
        for i in 0..count {
            let h = block.handle(i);
            // Blocks are written one after another: entries that overlap
            // are damage. This also bounds the entry count by the payload's
            // size: equal handles cost no bytes in the columns, so a few
            // bytes could otherwise claim billions of entries (found by
            // fuzzing, as a decode running for seconds).
            if h.offset < previous_end {
                return Err(DecodeError(format!(
                    "index entry {i} overlaps the block before it"
                )));
            }
            previous_end = h.offset.saturating_add(u64::from(h.len));
            // Checked: an offset near u64::MAX would wrap past the limit
            // check (found by fuzzing).
            let end = h.offset.checked_add(u64::from(h.len));
            if u64::from(h.len) < super::block::BLOCK_TRAILER_BYTES as u64
                || end.is_none_or(|end| end > limit)
            {
                return Err(DecodeError(format!(
                    "index entry {i} points outside the data"
                )));
            }
            if block.first_row(i) > block.last_row(i)
                || (i > 0 && block.last_row(i - 1) > block.first_row(i))
            {
                return Err(DecodeError(format!("index entry {i} is out of order")));
            }
        }
        Ok(block)
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// First row key of entry `i`.
    pub(crate) fn first_row(&self, i: usize) -> &[u8] {
        self.first_rows.get(&self.data, i)
    }

    /// Last row key of entry `i`.
    pub(crate) fn last_row(&self, i: usize) -> &[u8] {
        self.last_rows.get(&self.data, i)
    }

    /// Handle of entry `i`.
    pub(crate) fn handle(&self, i: usize) -> BlockHandle {
        BlockHandle {
            offset: self.offsets.get(&self.data, i),
            len: self.lens.get(&self.data, i) as u32,
        }
    }

    /// Ordinal base of entry `i` (top level of a two-level index).
    pub(crate) fn ordinal_base(&self, i: usize) -> u64 {
        self.ordinal_bases.get(&self.data, i)
    }

    /// First entry whose last row is >= `row` (`len()` if none): the first
    /// block that can hold `row` or anything after it.
    pub(crate) fn first_ending_at_or_after(&self, row: &[u8]) -> usize {
        partition_point(0, self.count, |mid| {
            compare_bytes(self.last_row(mid), row) == Ordering::Less
        })
    }

    /// Last entry whose first row is <= `row`, if any: the last block that
    /// can hold `row` or anything before it.
    pub(crate) fn last_starting_at_or_before(&self, row: &[u8]) -> Option<usize> {
        partition_point(0, self.count, |mid| {
            compare_bytes(self.first_row(mid), row) != Ordering::Greater
        })
        .checked_sub(1)
    }

    /// Last entry whose first row is < `row`, if any.
    pub(crate) fn last_starting_before(&self, row: &[u8]) -> Option<usize> {
        partition_point(0, self.count, |mid| {
            compare_bytes(self.first_row(mid), row) == Ordering::Less
        })
        .checked_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> Vec<IndexEntry> {
        (0..50u64)
            .map(|i| IndexEntry {
                first_row: format!("row{:03}", i * 2).into_bytes(),
                // Rows may span blocks: block i ends where block i+1 starts.
                last_row: format!("row{:03}", i * 2 + 2).into_bytes(),
                handle: BlockHandle {
                    offset: i * 100,
                    len: 100,
                },
                ordinal_base: 0,
            })
            .collect()
    }

    #[test]
    fn index_round_trip_and_search() {
        let index = IndexBlock::decode(encode_index(&entries()), 5000).unwrap();
        assert_eq!(index.len(), 50);
        assert_eq!(
            index.handle(7),
            BlockHandle {
                offset: 700,
                len: 100
            }
        );
        assert_eq!(
            index.first_ending_at_or_after(b"row010"),
            4,
            "block 4 ends at row010"
        );
        assert_eq!(index.first_ending_at_or_after(b"row011"), 5);
        assert_eq!(index.first_ending_at_or_after(b"zzz"), 50);
        assert_eq!(index.last_starting_at_or_before(b"row010"), Some(5));
        assert_eq!(index.last_starting_at_or_before(b"a"), None);
    }

    #[test]
    fn overlapping_entries_are_rejected() {
        // Regression (fuzz target index_block, a timeout): 49 bytes of
        // constant columns claimed thousands of identical entries.
        let mut same = entries();
        for e in &mut same {
            e.first_row = Vec::new();
            e.last_row = Vec::new();
            e.handle = BlockHandle {
                offset: 0,
                len: 100,
            };
        }
        let payload = encode_index(&same);
        assert!(payload.len() < 64, "{}", payload.len());
        assert!(IndexBlock::decode(payload, 5000).is_err());
        let mut count_only = encode_index(&same[..1]);
        count_only[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        let started = std::time::Instant::now();
        assert!(IndexBlock::decode(count_only, 5000).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn handles_whose_end_overflows_are_rejected() {
        // Regression (fuzz target index_block): offset + length overflowed.
        let mut far = entries();
        far[49].handle.offset = u64::MAX - 10;
        assert!(IndexBlock::decode(encode_index(&far), 5000).is_err());
    }

    #[test]
    fn handles_outside_the_file_are_rejected() {
        assert!(IndexBlock::decode(encode_index(&entries()), 4999).is_err());
        let mut bad = entries();
        bad.swap(3, 4);
        assert!(IndexBlock::decode(encode_index(&bad), 5000).is_err());
    }

    proptest::proptest! {
        /// Any index of sorted entries decodes to the same entries, and
        /// its searches agree with linear scans.
        #[test]
        fn any_sorted_index_round_trips(
            mut rows in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..5), 1..80),
            lens in proptest::collection::vec(13u32..5000, 80),
            bases in proptest::collection::vec(proptest::prelude::any::<u64>(), 80),
            probe in proptest::collection::vec(0u8..4, 0..5),
        ) {
            rows.sort();
            let mut offset = 0u64;
            let entries: Vec<IndexEntry> = rows
                .windows(2)
                .map(|pair| (pair[0].clone(), pair[1].clone()))
                .chain(std::iter::once((rows[rows.len() - 1].clone(), rows[rows.len() - 1].clone())))
                .enumerate()
                .map(|(i, (first_row, last_row))| {
                    let handle = BlockHandle { offset, len: lens[i] };
                    offset += u64::from(lens[i]);
                    IndexEntry { first_row, last_row, handle, ordinal_base: bases[i] }
                })
                .collect();
            let index = IndexBlock::decode(encode_index(&entries), offset).unwrap();
            proptest::prop_assert_eq!(index.len(), entries.len());
            for (i, e) in entries.iter().enumerate() {
                proptest::prop_assert_eq!(index.first_row(i), e.first_row.as_slice());
                proptest::prop_assert_eq!(index.last_row(i), e.last_row.as_slice());
                proptest::prop_assert_eq!(index.handle(i), e.handle);
                proptest::prop_assert_eq!(index.ordinal_base(i), e.ordinal_base);
            }
            let probe = probe.as_slice();
            proptest::prop_assert_eq!(
                index.first_ending_at_or_after(probe),
                entries.iter().position(|e| e.last_row.as_slice() >= probe).unwrap_or(entries.len())
            );
            proptest::prop_assert_eq!(
                index.last_starting_at_or_before(probe),
                entries.iter().rposition(|e| e.first_row.as_slice() <= probe)
            );
            proptest::prop_assert!(IndexBlock::decode(encode_index(&entries), offset - 1).is_err());
        }
    }
}
