//! [`FileMeta`]: the summary of an HFile that its meta block holds and the
//! manifest records for every file of every store, and [`BulkSource`], the
//! identity of a bulk-written file, which both record too. It sits below
//! both.

use std::cmp::Ordering;

use crate::cell::compare_bytes;

/// What a file holds, as its meta block and the manifest record it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileMeta {
    pub(crate) id: u64,
    /// Size of the file in bytes.
    pub(crate) size: u64,
    pub(crate) first_row: Vec<u8>,
    pub(crate) last_row: Vec<u8>,
    pub(crate) min_timestamp: i64,
    pub(crate) max_timestamp: i64,
    pub(crate) min_sequence: u64,
    pub(crate) max_sequence: u64,
    pub(crate) cells: u64,
    pub(crate) rows: u64,
    /// Delete markers among the cells.
    pub(crate) markers: u64,
}

/// The identity of a bulk-written file: its writer and its number there.
/// The HFile meta block records it in the file's bulk origin
/// (`hfile::BulkOrigin`); the manifest records it for every loaded file, so
/// that the same file is never loaded twice into a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct BulkSource {
    /// The writer that made the file: random, so files of different writers
    /// never share an identity.
    pub(crate) writer_id: u128,
    /// The file's number among its writer's files (0, 1, ...).
    pub(crate) file_number: u32,
}

impl FileMeta {
    /// True when the file's rows may intersect `[lo, hi]` (inclusive; `None` = unbounded).
    pub(crate) fn overlaps(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> bool {
        lo.is_none_or(|lo| compare_bytes(&self.last_row, lo) != Ordering::Less)
            && hi.is_none_or(|hi| compare_bytes(&self.first_row, hi) != Ordering::Greater)
    }
}
