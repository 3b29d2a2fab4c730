//! Cells, their kinds and their order, and the limits on their parts.
//!
//! A cell is addressed by `(row, family:qualifier, timestamp)`. Inside one
//! store (one family of one region) cells are ordered by
//! row ASC, qualifier ASC, timestamp DESC, kind DESC, sequence DESC
//! (`docs/semantics.md`, "Order").

use std::cmp::Ordering;

use crate::error::{Error, Result};

/// Longest row key in bytes (HBase's `Short.MAX_VALUE`).
pub const MAX_ROW_KEY_BYTES: usize = 32_767;
/// Longest column family name in bytes.
pub const MAX_FAMILY_NAME_BYTES: usize = 127;
/// Longest column qualifier in bytes.
pub const MAX_QUALIFIER_BYTES: usize = 65_535;
/// Default limit on one value: 10 MiB (a table option can change it).
pub const DEFAULT_MAX_VALUE_BYTES: usize = 10 * 1024 * 1024;
/// Largest timestamp a write may give a cell: `i64::MAX - 1`. `i64::MAX` is HBase's
/// `LATEST_TIMESTAMP` and the exclusive upper bound of every time range (even
/// [`TimeRange::ALL`]), so a cell stored there could never be read; writes refuse it with
/// [`Error::ReservedTimestamp`].
pub const MAX_TIMESTAMP: i64 = i64::MAX - 1;

/// What a cell is: a value or one of the four delete markers.
///
/// The discriminants are HBase's `KeyValue.Type` codes and are stored on disk.
/// Their order is the order of kinds in a store (larger sorts first at equal
/// row, qualifier and timestamp), so a marker is seen before the puts it hides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum CellKind {
    /// A value.
    Put = 4,
    /// Hides the version of one column at exactly the marker's timestamp.
    Delete = 8,
    /// Hides every column of the family at exactly the marker's timestamp.
    DeleteFamilyVersion = 10,
    /// Hides every version of one column at or below the marker's timestamp.
    DeleteColumn = 12,
    /// Hides every column of the family at or below the marker's timestamp.
    DeleteFamily = 14,
}

impl CellKind {
    /// Decodes a stored kind byte.
    pub fn from_code(code: u8) -> Option<CellKind> {
        match code {
            4 => Some(CellKind::Put),
            8 => Some(CellKind::Delete),
            10 => Some(CellKind::DeleteFamilyVersion),
            12 => Some(CellKind::DeleteColumn),
            14 => Some(CellKind::DeleteFamily),
            _ => None,
        }
    }

    /// The stored kind byte.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// True for the four delete markers.
    pub fn is_delete(self) -> bool {
        self != CellKind::Put
    }

    /// True for markers that apply to every column of a family.
    pub fn is_family_marker(self) -> bool {
        matches!(self, CellKind::DeleteFamily | CellKind::DeleteFamilyVersion)
    }

    /// HBase's name for the kind, as the shell prints it (`type=DeleteColumn`).
    pub fn name(self) -> &'static str {
        match self {
            CellKind::Put => "Put",
            CellKind::Delete => "Delete",
            CellKind::DeleteFamilyVersion => "DeleteFamilyVersion",
            CellKind::DeleteColumn => "DeleteColumn",
            CellKind::DeleteFamily => "DeleteFamily",
        }
    }
}

/// One cell as returned to callers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// Column family name.
    pub family: Vec<u8>,
    /// Column qualifier (may be empty).
    pub qualifier: Vec<u8>,
    /// Timestamp in milliseconds.
    pub timestamp: i64,
    /// Put, or a delete marker (markers appear only in raw scans).
    pub kind: CellKind,
    /// The value (empty for markers).
    pub value: Vec<u8>,
}

/// The cells of one row that a get or scan returned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RowResult {
    /// The row key.
    pub row: Vec<u8>,
    /// Cells in order: family ASC, qualifier ASC, timestamp DESC.
    pub cells: Vec<Cell>,
}

impl RowResult {
    /// True when the row has no cells (a get of a missing row).
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The newest value of `family:qualifier`, if the result holds one.
    pub fn value(&self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Option<&[u8]> {
        let (family, qualifier) = (family.as_ref(), qualifier.as_ref());
        self.cells
            .iter()
            .find(|c| c.kind == CellKind::Put && c.family == family && c.qualifier == qualifier)
            .map(|c| c.value.as_slice())
    }

    /// Every returned cell of `family:qualifier`, newest first.
    pub fn versions<'a>(
        &'a self,
        family: &'a [u8],
        qualifier: &'a [u8],
    ) -> impl Iterator<Item = &'a Cell> + 'a {
        self.cells
            .iter()
            .filter(move |c| c.family == family && c.qualifier == qualifier)
    }
}

/// A half-open time range `[min, max)` in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeRange {
    min: i64,
    max: i64,
}

impl TimeRange {
    /// Every timestamp.
    pub const ALL: TimeRange = TimeRange {
        min: 0,
        max: i64::MAX,
    };

    /// `[min, max)`; fails unless `0 <= min <= max`.
    pub fn new(min: i64, max: i64) -> Result<TimeRange> {
        if min < 0 || max < 0 || min > max {
            return Err(Error::InvalidTimeRange { min, max });
        }
        Ok(TimeRange { min, max })
    }

    /// Exactly one timestamp.
    pub fn at(timestamp: i64) -> Result<TimeRange> {
        if timestamp < 0 {
            return Err(Error::NegativeTimestamp { timestamp });
        }
        Ok(TimeRange {
            min: timestamp,
            max: timestamp.saturating_add(1),
        })
    }

    /// Inclusive lower bound.
    pub fn min(&self) -> i64 {
        self.min
    }

    /// Exclusive upper bound.
    pub fn max(&self) -> i64 {
        self.max
    }

    /// True when `timestamp` lies in the range.
    pub fn contains(&self, timestamp: i64) -> bool {
        self.min <= timestamp && timestamp < self.max
    }

    /// True when the range admits every timestamp.
    pub fn is_all(&self) -> bool {
        self.min == 0 && self.max == i64::MAX
    }
}

impl Default for TimeRange {
    fn default() -> Self {
        TimeRange::ALL
    }
}

/// A cell borrowed from where it is stored (a memstore node or a block),
/// or from the mutation that is about to store it
/// ([`NewCell`](crate::memstore::NewCell)), with its sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CellRef<'a> {
    pub(crate) row: &'a [u8],
    pub(crate) qualifier: &'a [u8],
    pub(crate) timestamp: i64,
    pub(crate) kind: CellKind,
    pub(crate) sequence: u64,
    pub(crate) value: &'a [u8],
}

impl<'a> CellRef<'a> {
    /// The key as a tuple for [`compare_keys`].
    pub(crate) fn tuple(&self) -> (&'a [u8], &'a [u8], i64, CellKind, u64) {
        (
            self.row,
            self.qualifier,
            self.timestamp,
            self.kind,
            self.sequence,
        )
    }
}

/// Lexicographic byte order, exactly as `<[u8]>::cmp`, without a call to
/// `memcmp`: eight bytes at a time as big-endian words, then bytes, then
/// lengths. Keys are short (rows of 8 to 64 bytes, qualifiers shorter), and
/// a library call per comparison was a fifth of the time of memstore
/// descents under a steady writer.
#[inline]
pub(crate) fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let common = a.len().min(b.len());
    let (a_head, b_head) = (&a[..common], &b[..common]);
    let mut a_words = a_head.chunks_exact(8);
    let mut b_words = b_head.chunks_exact(8);
    for (x, y) in a_words.by_ref().zip(b_words.by_ref()) {
        let x = <[u8; 8]>::try_from(x).map_or(0, u64::from_be_bytes);
        let y = <[u8; 8]>::try_from(y).map_or(0, u64::from_be_bytes);
        if x != y {
            return x.cmp(&y);
        }
    }
    for (x, y) in a_words.remainder().iter().zip(b_words.remainder()) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// `a == b` for the short slices of keys, without a library call per
/// comparison (see [`compare_bytes`]).
#[inline]
pub(crate) fn bytes_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && compare_bytes(a, b) == Ordering::Equal
}

/// Compares two cell keys in store order:
/// row ASC, qualifier ASC, timestamp DESC, kind DESC, sequence DESC.
#[inline]
pub(crate) fn compare_keys(
    a: (&[u8], &[u8], i64, CellKind, u64),
    b: (&[u8], &[u8], i64, CellKind, u64),
) -> Ordering {
    compare_bytes(a.0, b.0)
        .then_with(|| compare_bytes(a.1, b.1))
        .then_with(|| b.2.cmp(&a.2))
        .then_with(|| b.3.cmp(&a.3))
        .then_with(|| b.4.cmp(&a.4))
}

/// Checks a row key's length.
pub(crate) fn validate_row(row: &[u8]) -> Result<()> {
    if row.is_empty() {
        return Err(Error::EmptyRowKey);
    }
    if row.len() > MAX_ROW_KEY_BYTES {
        return Err(Error::RowKeyTooLong {
            len: row.len(),
            max: MAX_ROW_KEY_BYTES,
        });
    }
    Ok(())
}

/// Checks a qualifier's length.
pub(crate) fn validate_qualifier(qualifier: &[u8]) -> Result<()> {
    if qualifier.len() > MAX_QUALIFIER_BYTES {
        return Err(Error::QualifierTooLong {
            len: qualifier.len(),
            max: MAX_QUALIFIER_BYTES,
        });
    }
    Ok(())
}

/// Checks a timestamp a write gives a cell or a marker: `0..=MAX_TIMESTAMP`.
pub(crate) fn validate_timestamp(timestamp: i64) -> Result<()> {
    if timestamp < 0 {
        return Err(Error::NegativeTimestamp { timestamp });
    }
    if timestamp > MAX_TIMESTAMP {
        return Err(Error::ReservedTimestamp { timestamp });
    }
    Ok(())
}

/// Checks a column family name as HBase does: 1..=127 printable ASCII bytes,
/// none of `:`, `\\` or `/`, not starting with `.`.
pub(crate) fn validate_family_name(name: &[u8]) -> Result<()> {
    let reason = if name.is_empty() {
        Some("it is empty")
    } else if name.len() > MAX_FAMILY_NAME_BYTES {
        Some("it is longer than 127 bytes")
    } else if name.contains(&b':') {
        Some("it contains ':'")
    } else if name.contains(&b'/') || name.contains(&b'\\') {
        Some("it contains '/' or '\\'")
    } else if name.iter().any(|b| !(0x20..0x7f).contains(b)) {
        Some("it contains a byte that is not printable ASCII")
    } else if name.first() == Some(&b'.') {
        Some("it starts with '.'")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(Error::InvalidFamilyName {
            name: String::from_utf8_lossy(name).into_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The smallest row key greater than every key that starts with `prefix`,
/// or `None` when no such key exists (the prefix is empty or all `0xFF`).
pub(crate) fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last != 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// The key of a cell, for searching.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SeekKey<'a> {
    pub(crate) row: &'a [u8],
    pub(crate) qualifier: &'a [u8],
    pub(crate) timestamp: i64,
    pub(crate) kind: CellKind,
    pub(crate) sequence: u64,
}

impl<'a> SeekKey<'a> {
    /// The smallest key of `row`: every cell of the row sorts at or after it.
    pub(crate) fn row_start(row: &'a [u8]) -> Self {
        SeekKey {
            row,
            qualifier: &[],
            timestamp: i64::MAX,
            kind: CellKind::DeleteFamily,
            sequence: u64::MAX,
        }
    }

    /// True when this is the smallest key of its row ([`SeekKey::row_start`]).
    pub(crate) fn is_row_start(&self) -> bool {
        self.qualifier.is_empty()
            && self.timestamp == i64::MAX
            && self.kind == CellKind::DeleteFamily
            && self.sequence == u64::MAX
    }

    /// The key as a tuple for [`compare_keys`].
    pub(crate) fn tuple(&self) -> (&'a [u8], &'a [u8], i64, CellKind, u64) {
        (
            self.row,
            self.qualifier,
            self.timestamp,
            self.kind,
            self.sequence,
        )
    }
}

/// A cell's fields held owned, in store order of importance: row, qualifier,
/// timestamp, kind, sequence, value. What tests and fuzz targets keep of
/// cells they compare with what a block or file returns.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) type OwnedCellFields = (Vec<u8>, Vec<u8>, i64, CellKind, u64, Vec<u8>);

/// The fields of `cell`, owned.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn owned_fields(cell: &CellRef<'_>) -> OwnedCellFields {
    (
        cell.row.to_vec(),
        cell.qualifier.to_vec(),
        cell.timestamp,
        cell.kind,
        cell.sequence,
        cell.value.to_vec(),
    )
}

/// `fields` as a cell.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn borrowed_fields(fields: &OwnedCellFields) -> CellRef<'_> {
    CellRef {
        row: &fields.0,
        qualifier: &fields.1,
        timestamp: fields.2,
        kind: fields.3,
        sequence: fields.4,
        value: &fields.5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_sort_family_markers_first() {
        let mut kinds = vec![
            CellKind::Put,
            CellKind::DeleteFamily,
            CellKind::Delete,
            CellKind::DeleteColumn,
            CellKind::DeleteFamilyVersion,
        ];
        kinds.sort_by(|a, b| b.cmp(a));
        assert_eq!(
            kinds,
            [
                CellKind::DeleteFamily,
                CellKind::DeleteColumn,
                CellKind::DeleteFamilyVersion,
                CellKind::Delete,
                CellKind::Put
            ]
        );
        for k in kinds {
            assert_eq!(CellKind::from_code(k.code()), Some(k));
        }
        assert_eq!(CellKind::from_code(5), None);
    }

    #[test]
    fn key_order_is_row_qualifier_then_newest_first() {
        let a = (&b"r1"[..], &b"a"[..], 10, CellKind::Put, 1);
        let b = (&b"r1"[..], &b"a"[..], 5, CellKind::Put, 9);
        assert_eq!(compare_keys(a, b), Ordering::Less, "newer timestamp first");
        let c = (&b"r1"[..], &b"a"[..], 10, CellKind::DeleteColumn, 1);
        assert_eq!(compare_keys(c, a), Ordering::Less, "marker before put");
        let d = (&b"r1"[..], &b"a"[..], 10, CellKind::Put, 2);
        assert_eq!(compare_keys(d, a), Ordering::Less, "higher sequence first");
        let e = (&b"r0"[..], &b"z"[..], 0, CellKind::Put, 0);
        assert_eq!(compare_keys(e, a), Ordering::Less, "row decides first");
    }

    #[test]
    fn time_range_validation() {
        assert!(TimeRange::new(5, 3).is_err());
        assert!(TimeRange::new(-1, 3).is_err());
        let r = TimeRange::new(3, 5).unwrap();
        assert!(r.contains(3) && r.contains(4) && !r.contains(5));
        assert!(TimeRange::at(7).unwrap().contains(7));
        assert!(matches!(
            TimeRange::at(-2),
            Err(Error::NegativeTimestamp { .. })
        ));
    }

    #[test]
    fn write_timestamps_stop_below_the_end_of_every_time_range() {
        assert!(validate_timestamp(0).is_ok());
        assert!(validate_timestamp(MAX_TIMESTAMP).is_ok());
        assert!(TimeRange::ALL.contains(MAX_TIMESTAMP));
        assert!(matches!(
            validate_timestamp(i64::MAX),
            Err(Error::ReservedTimestamp {
                timestamp: i64::MAX
            })
        ));
        assert!(!TimeRange::ALL.contains(i64::MAX));
        assert!(matches!(
            validate_timestamp(-1),
            Err(Error::NegativeTimestamp { timestamp: -1 })
        ));
    }

    #[test]
    fn family_names() {
        assert!(validate_family_name(b"cf").is_ok());
        assert!(validate_family_name(b"").is_err());
        assert!(validate_family_name(b"a:b").is_err());
        assert!(validate_family_name(b"a\tb").is_err());
        assert!(validate_family_name(b"a/b").is_err());
        assert!(validate_family_name(b".a").is_err());
        assert!(validate_family_name(&[b'a'; 128]).is_err());
        assert!(validate_family_name(&[b'a'; 127]).is_ok());
    }

    #[test]
    fn prefix_successors() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xff\xff"), None);
        assert_eq!(prefix_successor(b""), None);
    }

    proptest::proptest! {
        /// The word-at-a-time comparison is the slices' own order, for
        /// every length (prefixes, equal heads, tails of 0 to 7 bytes) and
        /// bytes biased towards ties.
        #[test]
        fn byte_comparison_is_slice_order(
            a in proptest::collection::vec(0u8..3, 0..40),
            b in proptest::collection::vec(0u8..3, 0..40),
            shared in proptest::collection::vec(proptest::num::u8::ANY, 0..24),
        ) {
            let a: Vec<u8> = shared.iter().chain(&a).copied().collect();
            let b: Vec<u8> = shared.iter().chain(&b).copied().collect();
            proptest::prop_assert_eq!(compare_bytes(&a, &b), a.as_slice().cmp(b.as_slice()));
            proptest::prop_assert_eq!(compare_bytes(&a, &a), Ordering::Equal);
            proptest::prop_assert_eq!(compare_bytes(&a[..a.len() / 2], &a), (a.len() / 2).cmp(&a.len()));
        }
    }
}
