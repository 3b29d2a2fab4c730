//! The operations a table accepts, as small builder values.
//!
//! Builders never fail; every check (row key length, families, timestamps,
//! time ranges, value sizes) happens when the operation runs, before
//! anything is written, so a rejected operation changes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::Arc;

use smallvec::SmallVec;

pub use strata_filters::CompareOp;
use strata_filters::Filter;

use crate::cell::{RowResult, bytes_equal};
use crate::error::Result;
use crate::options::Durability;
use crate::read_snapshot::{ReadSnapshot, SnapshotRef};

/// Which columns a get or scan returns. Empty means every family.
///
/// As in HBase, [`ColumnSelection::family`] selects a whole family and
/// [`ColumnSelection::column`] narrows a family to named qualifiers; a later
/// `family` call widens it back to the whole family.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnSelection {
    families: BTreeMap<Vec<u8>, Option<BTreeSet<Vec<u8>>>>,
}

impl ColumnSelection {
    /// Selects all of `family`.
    pub fn family(&mut self, family: impl AsRef<[u8]>) {
        self.families.insert(family.as_ref().to_vec(), None);
    }

    /// Selects `family:qualifier`.
    pub fn column(&mut self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) {
        let entry = self
            .families
            .entry(family.as_ref().to_vec())
            .or_insert_with(|| Some(BTreeSet::new()));
        match entry {
            Some(set) => {
                set.insert(qualifier.as_ref().to_vec());
            }
            None => {
                *entry = Some(BTreeSet::from([qualifier.as_ref().to_vec()]));
            }
        }
    }

    /// True when nothing was selected (which means everything).
    pub fn is_all(&self) -> bool {
        self.families.is_empty()
    }

    /// The selected families with their qualifier sets (`None` = whole family).
    pub fn families(&self) -> impl Iterator<Item = (&[u8], Option<&BTreeSet<Vec<u8>>>)> {
        self.families
            .iter()
            .map(|(f, q)| (f.as_slice(), q.as_ref()))
    }
}

/// The qualifiers a read selects in one family: sorted, each once.
///
/// Reads test every cell's qualifier against it, so membership is tuned for the few
/// qualifiers a read names: up to [`ColumnSet::LINEAR_MAX`] of them are compared one by one
/// for equality, which rejects a qualifier of another length without comparing bytes (the
/// ordered comparisons of a `BTreeSet` compared bytes every time: 8% of a scan of rows of four
/// columns selecting two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ColumnSet {
    /// Sorted and without duplicates.
    qualifiers: Vec<Vec<u8>>,
}

impl ColumnSet {
    /// Most qualifiers tested one by one; more are binary searched.
    const LINEAR_MAX: usize = 8;

    /// Whether `qualifier` is selected.
    #[inline]
    pub(crate) fn contains(&self, qualifier: &[u8]) -> bool {
        if self.qualifiers.len() <= Self::LINEAR_MAX {
            self.qualifiers.iter().any(|q| bytes_equal(q, qualifier))
        } else {
            self.qualifiers
                .binary_search_by(|q| q.as_slice().cmp(qualifier))
                .is_ok()
        }
    }

    /// The qualifiers, in order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> {
        self.qualifiers.iter().map(Vec::as_slice)
    }

    /// How many qualifiers are selected.
    pub(crate) fn len(&self) -> usize {
        self.qualifiers.len()
    }
}

impl From<&BTreeSet<Vec<u8>>> for ColumnSet {
    fn from(set: &BTreeSet<Vec<u8>>) -> Self {
        // A BTreeSet iterates in order and holds each qualifier once.
        ColumnSet {
            qualifiers: set.iter().cloned().collect(),
        }
    }
}

/// One cell of a [`Put`]: where its parts lie in the put's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PutCell {
    family: Range<usize>,
    qualifier: Range<usize>,
    value: Range<usize>,
    pub(crate) timestamp: Option<i64>,
}

/// The borrowed parts of one cell of a [`Put`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct PutCellRef<'a> {
    pub(crate) family: &'a [u8],
    pub(crate) qualifier: &'a [u8],
    pub(crate) timestamp: Option<i64>,
    pub(crate) value: &'a [u8],
}

/// Writes values into one row.
///
/// The row and every cell's family, qualifier and value are kept in one buffer, and a
/// put of one cell keeps that cell inline: a one-cell put allocates twice (the buffer for
/// its row, grown once for its cell) where a vector per part took five allocations. (The
/// write benchmarks could not tell the two apart; it spares the allocator.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Put {
    /// The row (`..row_len`), then each cell's family, qualifier and value.
    bytes: Vec<u8>,
    row_len: usize,
    cells: SmallVec<[PutCell; 1]>,
    pub(crate) timestamp: Option<i64>,
    pub(crate) durability: Option<Durability>,
}

impl Put {
    /// A put into `row` with no cells yet.
    pub fn new(row: impl AsRef<[u8]>) -> Self {
        let row = row.as_ref();
        Put {
            bytes: row.to_vec(),
            row_len: row.len(),
            cells: SmallVec::new(),
            timestamp: None,
            durability: None,
        }
    }

    /// Appends `part` to the put's bytes; where it lies.
    fn push_bytes(&mut self, part: &[u8]) -> Range<usize> {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(part);
        start..self.bytes.len()
    }

    fn push_cell(&mut self, family: &[u8], qualifier: &[u8], timestamp: Option<i64>, value: &[u8]) {
        self.bytes
            .reserve(family.len() + qualifier.len() + value.len());
        let family = self.push_bytes(family);
        let qualifier = self.push_bytes(qualifier);
        let value = self.push_bytes(value);
        self.cells.push(PutCell {
            family,
            qualifier,
            value,
            timestamp,
        });
    }

    /// The cells, in the order they were added.
    pub(crate) fn cells(&self) -> impl ExactSizeIterator<Item = PutCellRef<'_>> {
        self.cells.iter().map(|cell| PutCellRef {
            family: &self.bytes[cell.family.clone()],
            qualifier: &self.bytes[cell.qualifier.clone()],
            timestamp: cell.timestamp,
            value: &self.bytes[cell.value.clone()],
        })
    }

    /// Adds `family:qualifier = value` at the put's timestamp (default: now).
    pub fn add(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Self {
        self.push_cell(family.as_ref(), qualifier.as_ref(), None, value.as_ref());
        self
    }

    /// Adds `family:qualifier = value` at an explicit timestamp.
    pub fn add_at(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        timestamp: i64,
        value: impl AsRef<[u8]>,
    ) -> Self {
        self.push_cell(
            family.as_ref(),
            qualifier.as_ref(),
            Some(timestamp),
            value.as_ref(),
        );
        self
    }

    /// Timestamp for cells added without one (instead of the server clock).
    pub fn timestamp(mut self, timestamp: i64) -> Self {
        self.timestamp = Some(timestamp);
        self
    }

    /// Durability of this put (instead of the table's default).
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = Some(durability);
        self
    }

    /// The row.
    pub fn row(&self) -> &[u8] {
        &self.bytes[..self.row_len]
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// True when no cell was added.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }
}

/// One entry of a [`Delete`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DeleteEntry {
    /// Every column of the family at or below the timestamp.
    Family {
        family: Vec<u8>,
        timestamp: Option<i64>,
    },
    /// Every column of the family at exactly the timestamp.
    FamilyVersion { family: Vec<u8>, timestamp: i64 },
    /// Every version of the column at or below the timestamp.
    ColumnAllVersions {
        family: Vec<u8>,
        qualifier: Vec<u8>,
        timestamp: Option<i64>,
    },
    /// One version of the column: at the timestamp, or the latest one.
    ColumnVersion {
        family: Vec<u8>,
        qualifier: Vec<u8>,
        timestamp: Option<i64>,
    },
}

/// Deletes from one row by writing delete markers.
///
/// With no entries it deletes the whole row: every family, every version at
/// or below the delete's timestamp (default: now).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delete {
    pub(crate) row: Vec<u8>,
    pub(crate) entries: Vec<DeleteEntry>,
    pub(crate) timestamp: Option<i64>,
    pub(crate) durability: Option<Durability>,
}

impl Delete {
    /// A delete of `row` (the whole row unless entries are added).
    pub fn new(row: impl AsRef<[u8]>) -> Self {
        Delete {
            row: row.as_ref().to_vec(),
            entries: Vec::new(),
            timestamp: None,
            durability: None,
        }
    }

    /// Upper timestamp for the whole-row delete and for entries given without
    /// one (HBase's `new Delete(row, ts)`).
    pub fn timestamp(mut self, timestamp: i64) -> Self {
        self.timestamp = Some(timestamp);
        self
    }

    /// Deletes every version of every column of `family` (HBase `addFamily`).
    pub fn family(mut self, family: impl AsRef<[u8]>) -> Self {
        self.entries.push(DeleteEntry::Family {
            family: family.as_ref().to_vec(),
            timestamp: None,
        });
        self
    }

    /// Deletes every column of `family` at or below `timestamp`.
    pub fn family_up_to(mut self, family: impl AsRef<[u8]>, timestamp: i64) -> Self {
        self.entries.push(DeleteEntry::Family {
            family: family.as_ref().to_vec(),
            timestamp: Some(timestamp),
        });
        self
    }

    /// Deletes every column of `family` at exactly `timestamp`
    /// (HBase `addFamilyVersion`).
    pub fn family_version(mut self, family: impl AsRef<[u8]>, timestamp: i64) -> Self {
        self.entries.push(DeleteEntry::FamilyVersion {
            family: family.as_ref().to_vec(),
            timestamp,
        });
        self
    }

    /// Deletes every version of `family:qualifier` (HBase `addColumns`).
    pub fn column_all_versions(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
    ) -> Self {
        self.entries.push(DeleteEntry::ColumnAllVersions {
            family: family.as_ref().to_vec(),
            qualifier: qualifier.as_ref().to_vec(),
            timestamp: None,
        });
        self
    }

    /// Deletes every version of `family:qualifier` at or below `timestamp`.
    pub fn column_all_versions_up_to(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        timestamp: i64,
    ) -> Self {
        self.entries.push(DeleteEntry::ColumnAllVersions {
            family: family.as_ref().to_vec(),
            qualifier: qualifier.as_ref().to_vec(),
            timestamp: Some(timestamp),
        });
        self
    }

    /// Deletes the newest visible version of `family:qualifier`
    /// (HBase `addColumn` without a timestamp).
    pub fn column_latest_version(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
    ) -> Self {
        self.entries.push(DeleteEntry::ColumnVersion {
            family: family.as_ref().to_vec(),
            qualifier: qualifier.as_ref().to_vec(),
            timestamp: None,
        });
        self
    }

    /// Deletes the version of `family:qualifier` at exactly `timestamp`
    /// (HBase `addColumn(f, q, ts)`).
    pub fn column_version(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        timestamp: i64,
    ) -> Self {
        self.entries.push(DeleteEntry::ColumnVersion {
            family: family.as_ref().to_vec(),
            qualifier: qualifier.as_ref().to_vec(),
            timestamp: Some(timestamp),
        });
        self
    }

    /// Durability of this delete (instead of the table's default).
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = Some(durability);
        self
    }

    /// The row.
    pub fn row(&self) -> &[u8] {
        &self.row
    }
}

/// What a [`Get`] and a [`Scan`] both say about the cells they read: the
/// columns, the time range, the versions per column and the filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadOptions {
    pub(crate) columns: ColumnSelection,
    /// Versions with timestamps in `time_min..time_max` are read.
    pub(crate) time_min: i64,
    pub(crate) time_max: i64,
    pub(crate) max_versions: u32,
    pub(crate) filter: Option<Arc<Filter>>,
    /// The read snapshot to read at (default: the current read point).
    pub(crate) snapshot: Option<SnapshotRef>,
}

impl Default for ReadOptions {
    /// Every family, every timestamp, the newest version of each column,
    /// no filter.
    fn default() -> Self {
        ReadOptions {
            columns: ColumnSelection::default(),
            time_min: 0,
            time_max: i64::MAX,
            max_versions: 1,
            filter: None,
            snapshot: None,
        }
    }
}

/// The builder methods of the [`ReadOptions`] a get and a scan share,
/// written once for both (`$options` is the field holding them).
macro_rules! read_option_builders {
    ($options:ident) => {
        /// Applies an HBase filter (see `docs/filters.md`). Row-key parts
        /// of the filter run as vectorized kernels over whole blocks; the
        /// rest runs on each row's visible cells with HBase's semantics.
        pub fn filter(mut self, filter: Filter) -> Self {
            self.$options.filter = Some(Arc::new(filter));
            self
        }

        /// Applies a filter written in HBase's filter language.
        pub fn filter_string(self, filter: &str) -> Result<Self> {
            Ok(self.filter(strata_filters::parse(filter)?))
        }

        /// Applies a filter written in HBase's filter language, given as bytes: quoted
        /// arguments may hold any byte, UTF-8 or not (`'binary:\x82'` with the raw byte), as
        /// HBase's `ParseFilter.parseFilterString(byte[])` reads them.
        pub fn filter_bytes(self, filter: &[u8]) -> Result<Self> {
            Ok(self.filter(strata_filters::parse_bytes(filter)?))
        }

        /// Returns all of `family`.
        pub fn family(mut self, family: impl AsRef<[u8]>) -> Self {
            self.$options.columns.family(family);
            self
        }

        /// Returns `family:qualifier`.
        pub fn column(mut self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Self {
            self.$options.columns.column(family, qualifier);
            self
        }

        /// Only versions with timestamps in `[min, max)`.
        pub fn time_range(mut self, min: i64, max: i64) -> Self {
            self.$options.time_min = min;
            self.$options.time_max = max;
            self
        }

        /// Only versions with exactly this timestamp.
        pub fn timestamp(mut self, timestamp: i64) -> Self {
            self.$options.time_min = timestamp;
            self.$options.time_max = timestamp.saturating_add(1);
            self
        }

        /// Up to `versions` versions per column (default 1).
        pub fn max_versions(mut self, versions: u32) -> Self {
            self.$options.max_versions = versions;
            self
        }

        /// Every version the family keeps.
        pub fn all_versions(mut self) -> Self {
            self.$options.max_versions = u32::MAX;
            self
        }

        /// Reads at `snapshot`'s read point: exactly the data visible when
        /// it was taken ([`crate::Db::read_snapshot`]). A read after the
        /// snapshot was released fails with [`crate::Error::SnapshotReleased`].
        pub fn snapshot(mut self, snapshot: &ReadSnapshot) -> Self {
            self.$options.snapshot = Some(snapshot.reference());
            self
        }
    };
}

/// Reads one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Get {
    pub(crate) row: Vec<u8>,
    pub(crate) read: ReadOptions,
}

impl Get {
    /// A get of `row`: every family, newest version of each column.
    pub fn new(row: impl AsRef<[u8]>) -> Self {
        Get {
            row: row.as_ref().to_vec(),
            read: ReadOptions::default(),
        }
    }

    read_option_builders!(read);

    /// The row.
    pub fn row(&self) -> &[u8] {
        &self.row
    }

    /// Makes this a get of `row` instead, reusing the key's buffer.
    pub(crate) fn set_row(&mut self, row: &[u8]) {
        self.row.clear();
        self.row.extend_from_slice(row);
    }
}

/// Reads a range of rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    pub(crate) start: Option<(Vec<u8>, bool)>,
    pub(crate) stop: Option<(Vec<u8>, bool)>,
    pub(crate) prefix: Option<Vec<u8>>,
    pub(crate) reversed: bool,
    pub(crate) read: ReadOptions,
    pub(crate) limit: Option<u64>,
    pub(crate) batch: Option<usize>,
    pub(crate) raw: bool,
    pub(crate) vectorized: bool,
}

impl Default for Scan {
    fn default() -> Self {
        Scan::new()
    }
}

impl Scan {
    /// A scan of every row, every family, newest version of each column.
    pub fn new() -> Self {
        Scan {
            start: None,
            stop: None,
            prefix: None,
            reversed: false,
            read: ReadOptions::default(),
            limit: None,
            batch: None,
            raw: false,
            vectorized: true,
        }
    }

    read_option_builders!(read);

    /// With `false`, filters run row by row on decoded cells only (no block
    /// kernels, no block skipping): the cell-by-cell baseline benchmarks
    /// compare the vectorized path with. Results are identical.
    pub fn vectorized(mut self, vectorized: bool) -> Self {
        self.vectorized = vectorized;
        self
    }

    /// Starts at `row` (inclusive). For a reversed scan the start is the
    /// larger key, as in HBase.
    pub fn start(self, row: impl AsRef<[u8]>) -> Self {
        self.start_with(row, true)
    }

    /// Starts at `row`, including it or not.
    pub fn start_with(mut self, row: impl AsRef<[u8]>, inclusive: bool) -> Self {
        self.start = Some((row.as_ref().to_vec(), inclusive));
        self
    }

    /// Stops before `row` (exclusive). For a reversed scan the stop is the
    /// smaller key.
    pub fn stop(self, row: impl AsRef<[u8]>) -> Self {
        self.stop_with(row, false)
    }

    /// Stops at `row`, including it or not.
    pub fn stop_with(mut self, row: impl AsRef<[u8]>, inclusive: bool) -> Self {
        self.stop = Some((row.as_ref().to_vec(), inclusive));
        self
    }

    /// Only rows starting with `prefix` (combined with start/stop).
    pub fn prefix(mut self, prefix: impl AsRef<[u8]>) -> Self {
        self.prefix = Some(prefix.as_ref().to_vec());
        self
    }

    /// Rows in descending order (cells within a row keep their order).
    pub fn reversed(mut self, reversed: bool) -> Self {
        self.reversed = reversed;
        self
    }

    /// At most `rows` rows.
    pub fn limit(mut self, rows: u64) -> Self {
        self.limit = Some(rows);
        self
    }

    /// At most `cells` cells per returned result; wider rows come back as
    /// several results with the same row key (HBase `setBatch`).
    pub fn batch(mut self, cells: usize) -> Self {
        self.batch = Some(cells);
        self
    }

    /// Returns delete markers and hidden cells too (HBase `setRaw`).
    pub fn raw(mut self, raw: bool) -> Self {
        self.raw = raw;
        self
    }

    /// This scan narrowed to the rows in `[low, high)` (an empty `high` has
    /// no upper bound), or `None` when none of the scan's rows can lie there.
    /// Everything else (prefix, filter, columns, limit) is kept.
    pub(crate) fn within(&self, low: &[u8], high: &[u8]) -> Option<Scan> {
        type Bound = Option<(Vec<u8>, bool)>;
        // The larger lower bound; on equal keys, exclusive wins.
        fn lower(a: Bound, b: Bound) -> Bound {
            match (a, b) {
                (None, x) | (x, None) => x,
                (Some(a), Some(b)) if a.0 == b.0 => Some((a.0, a.1 && b.1)),
                (Some(a), Some(b)) => Some(if a.0 > b.0 { a } else { b }),
            }
        }
        // The smaller upper bound; on equal keys, exclusive wins.
        fn upper(a: Bound, b: Bound) -> Bound {
            match (a, b) {
                (None, x) | (x, None) => x,
                (Some(a), Some(b)) if a.0 == b.0 => Some((a.0, a.1 && b.1)),
                (Some(a), Some(b)) => Some(if a.0 < b.0 { a } else { b }),
            }
        }
        // The scan's own bounds in key order (a reversed scan starts at the
        // larger key).
        let (own_low, own_high) = if self.reversed {
            (self.stop.clone(), self.start.clone())
        } else {
            (self.start.clone(), self.stop.clone())
        };
        // An empty key bounds nothing (HBase's empty start and stop rows).
        let own_high = own_high.filter(|(key, _)| !key.is_empty());
        let low = lower(own_low, (!low.is_empty()).then(|| (low.to_vec(), true)));
        let high = upper(own_high, (!high.is_empty()).then(|| (high.to_vec(), false)));
        // The prefix narrows the range too (only for the emptiness test: the
        // prefix itself stays on the scan).
        let (test_low, test_high) = match &self.prefix {
            Some(prefix) => (
                lower(low.clone(), Some((prefix.clone(), true))),
                upper(
                    high.clone(),
                    crate::cell::prefix_successor(prefix).map(|s| (s, false)),
                ),
            ),
            None => (low.clone(), high.clone()),
        };
        if let (Some((l, l_inclusive)), Some((h, h_inclusive))) = (&test_low, &test_high)
            && (l > h || (l == h && !(*l_inclusive && *h_inclusive)))
        {
            return None;
        }
        let mut part = self.clone();
        if self.reversed {
            part.start = high;
            part.stop = low;
        } else {
            part.start = low;
            part.stop = high;
        }
        Some(part)
    }
}

/// Adds to 8-byte big-endian counters, atomically per row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Increment {
    pub(crate) row: Vec<u8>,
    pub(crate) columns: Vec<(Vec<u8>, Vec<u8>, i64)>,
    pub(crate) durability: Option<Durability>,
}

impl Increment {
    /// An increment of `row` with no columns yet.
    pub fn new(row: impl AsRef<[u8]>) -> Self {
        Increment {
            row: row.as_ref().to_vec(),
            columns: Vec::new(),
            durability: None,
        }
    }

    /// Adds `delta` to `family:qualifier` (a missing column counts as 0).
    pub fn add(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        delta: i64,
    ) -> Self {
        self.columns
            .push((family.as_ref().to_vec(), qualifier.as_ref().to_vec(), delta));
        self
    }

    /// Durability of this increment.
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = Some(durability);
        self
    }

    /// The row.
    pub fn row(&self) -> &[u8] {
        &self.row
    }
}

/// Appends bytes to values, atomically per row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Append {
    pub(crate) row: Vec<u8>,
    pub(crate) columns: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>,
    pub(crate) durability: Option<Durability>,
}

impl Append {
    /// An append to `row` with no columns yet.
    pub fn new(row: impl AsRef<[u8]>) -> Self {
        Append {
            row: row.as_ref().to_vec(),
            columns: Vec::new(),
            durability: None,
        }
    }

    /// Appends `suffix` to `family:qualifier` (a missing column counts as empty).
    pub fn add(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        suffix: impl AsRef<[u8]>,
    ) -> Self {
        self.columns.push((
            family.as_ref().to_vec(),
            qualifier.as_ref().to_vec(),
            suffix.as_ref().to_vec(),
        ));
        self
    }

    /// Durability of this append.
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = Some(durability);
        self
    }

    /// The row.
    pub fn row(&self) -> &[u8] {
        &self.row
    }
}

/// A put or a delete inside a [`RowMutations`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// A put.
    Put(Put),
    /// A delete.
    Delete(Delete),
}

impl Mutation {
    /// The row the put or delete changes.
    pub fn row(&self) -> &[u8] {
        match self {
            Mutation::Put(put) => put.row(),
            Mutation::Delete(delete) => &delete.row,
        }
    }

    /// The durability the put or delete asks for, if it names one.
    pub(crate) fn durability(&self) -> Option<Durability> {
        match self {
            Mutation::Put(put) => put.durability,
            Mutation::Delete(delete) => delete.durability,
        }
    }
}

/// Puts and deletes on one row applied atomically, in order, with one
/// sequence number: a delete in the list never hides a put of the same list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowMutations {
    pub(crate) row: Vec<u8>,
    pub(crate) mutations: Vec<Mutation>,
    pub(crate) durability: Option<Durability>,
}

impl RowMutations {
    /// An empty list for `row`.
    pub fn new(row: impl AsRef<[u8]>) -> Self {
        RowMutations {
            row: row.as_ref().to_vec(),
            mutations: Vec::new(),
            durability: None,
        }
    }

    /// Adds a put (its row must be this row).
    pub fn put(mut self, put: Put) -> Self {
        self.mutations.push(Mutation::Put(put));
        self
    }

    /// Adds a delete (its row must be this row).
    pub fn delete(mut self, delete: Delete) -> Self {
        self.mutations.push(Mutation::Delete(delete));
        self
    }

    /// Durability of the whole list.
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = Some(durability);
        self
    }

    /// The row.
    pub fn row(&self) -> &[u8] {
        &self.row
    }
}

/// The check of a [`CheckAndMutate`], with HBase's semantics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// `operand OP stored`, where `stored` is the newest visible value of the
    /// column. The operand comes first, as in HBase: `Greater` holds when
    /// the operand is greater than the stored value. An empty operand
    /// matches a missing column (for every op but `NotEqual`) and an empty
    /// stored value.
    Compare {
        /// Family of the checked column.
        family: Vec<u8>,
        /// Qualifier of the checked column.
        qualifier: Vec<u8>,
        /// Operator.
        op: CompareOp,
        /// Operand.
        operand: Vec<u8>,
    },
    /// HBase 2.4's `CheckAndMutate.Builder.ifMatches(Filter)`: holds when a
    /// get of the row with this filter (and the check's time range; newest
    /// version of each column, every family) returns at least one cell.
    Filter(Filter),
    /// Holds when a get of the whole row (within the check's time range)
    /// returns at least one cell (`exists: true`) or none (`false`).
    Row {
        /// Whether the row must have a visible cell or must have none.
        exists: bool,
    },
}

/// What a [`CheckAndMutate`] does when its condition holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckAction {
    /// Apply a put.
    Put(Put),
    /// Apply a delete.
    Delete(Delete),
    /// Apply puts and deletes atomically.
    RowMutations(RowMutations),
    /// Apply an increment.
    Increment(Increment),
    /// Apply an append.
    Append(Append),
}

/// Checks one column of a row, the row through a filter, or whether the row
/// exists, and, if the check holds, mutates the row;
/// atomically under the row's lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckAndMutate {
    pub(crate) row: Vec<u8>,
    pub(crate) condition: Condition,
    pub(crate) time_min: i64,
    pub(crate) time_max: i64,
    pub(crate) action: CheckAction,
}

/// Builds a [`CheckAndMutate`].
#[derive(Debug, Clone)]
pub struct CheckAndMutateBuilder {
    row: Vec<u8>,
    condition: Option<Condition>,
    time_min: i64,
    time_max: i64,
}

impl CheckAndMutate {
    /// Starts a check on `row`.
    pub fn builder(row: impl AsRef<[u8]>) -> CheckAndMutateBuilder {
        CheckAndMutateBuilder {
            row: row.as_ref().to_vec(),
            condition: None,
            time_min: 0,
            time_max: i64::MAX,
        }
    }
}

impl CheckAndMutateBuilder {
    /// Holds when the column's newest value equals `value`.
    pub fn if_equals(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Self {
        self.if_matches(family, qualifier, CompareOp::Equal, value)
    }

    /// Holds when `operand OP stored` (HBase's operand order).
    pub fn if_matches(
        mut self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        op: CompareOp,
        operand: impl AsRef<[u8]>,
    ) -> Self {
        self.condition = Some(Condition::Compare {
            family: family.as_ref().to_vec(),
            qualifier: qualifier.as_ref().to_vec(),
            op,
            operand: operand.as_ref().to_vec(),
        });
        self
    }

    /// Holds when the column has no visible value (HBase `ifNotExists`,
    /// which also accepts an empty stored value).
    pub fn if_not_exists(self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Self {
        self.if_matches(family, qualifier, CompareOp::Equal, [])
    }

    /// Holds when the row, read with `filter`, has at least one cell
    /// (HBase 2.4 `CheckAndMutate.Builder.ifMatches(Filter)`): the filter
    /// sees the newest version of every column of the row, as a get with
    /// the filter would.
    pub fn if_filter_matches(mut self, filter: Filter) -> Self {
        self.condition = Some(Condition::Filter(filter));
        self
    }

    /// Holds when the row has at least one visible cell.
    pub fn if_row_exists(mut self) -> Self {
        self.condition = Some(Condition::Row { exists: true });
        self
    }

    /// Holds when the row has no visible cell (never written, or every
    /// cell deleted or expired).
    pub fn if_row_not_exists(mut self) -> Self {
        self.condition = Some(Condition::Row { exists: false });
        self
    }

    /// Only versions with timestamps in `[min, max)` are checked.
    pub fn time_range(mut self, min: i64, max: i64) -> Self {
        self.time_min = min;
        self.time_max = max;
        self
    }

    /// Finishes with the action to take when the condition holds. Without a
    /// condition the check is `if_not_exists` on an empty family name, which
    /// fails as an unknown family when run.
    pub fn then(self, action: CheckAction) -> CheckAndMutate {
        CheckAndMutate {
            condition: self.condition.unwrap_or(Condition::Compare {
                family: Vec::new(),
                qualifier: Vec::new(),
                op: CompareOp::Equal,
                operand: Vec::new(),
            }),
            row: self.row,
            time_min: self.time_min,
            time_max: self.time_max,
            action,
        }
    }

    /// Finishes with a put.
    pub fn then_put(self, put: Put) -> CheckAndMutate {
        self.then(CheckAction::Put(put))
    }

    /// Finishes with a delete.
    pub fn then_delete(self, delete: Delete) -> CheckAndMutate {
        self.then(CheckAction::Delete(delete))
    }

    /// Finishes with a list of row mutations.
    pub fn then_mutate(self, mutations: RowMutations) -> CheckAndMutate {
        self.then(CheckAction::RowMutations(mutations))
    }
}

/// What a [`CheckAndMutate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckAndMutateResult {
    /// Whether the condition held (and the action was applied).
    pub success: bool,
    /// New values, for increment and append actions that ran.
    pub result: Option<RowResult>,
}

/// One operation of a [`crate::Table::batch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchOp {
    /// A put.
    Put(Put),
    /// A delete.
    Delete(Delete),
    /// A get.
    Get(Get),
    /// An increment.
    Increment(Increment),
    /// An append.
    Append(Append),
    /// Atomic puts and deletes on one row.
    RowMutations(RowMutations),
    /// A check-and-mutate.
    CheckAndMutate(CheckAndMutate),
}

/// The outcome of one [`BatchOp`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchResult {
    /// A put, delete or row mutation was applied.
    Done,
    /// The row a get read, or the new values of an increment or append.
    Row(RowResult),
    /// What a check-and-mutate did.
    CheckAndMutate(CheckAndMutateResult),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_selection_follows_hbase() {
        let mut s = ColumnSelection::default();
        assert!(s.is_all());
        s.column("f", "a");
        s.column("f", "b");
        s.family("g");
        let got: Vec<_> = s
            .families()
            .map(|(f, q)| (f.to_vec(), q.map(|q| q.len())))
            .collect();
        assert_eq!(got, vec![(b"f".to_vec(), Some(2)), (b"g".to_vec(), None)]);
        s.family("f");
        assert_eq!(s.families().next().unwrap().1, None);
    }

    #[test]
    fn a_column_set_answers_as_the_set_it_was_made_from() {
        for size in [
            0usize,
            1,
            3,
            ColumnSet::LINEAR_MAX,
            ColumnSet::LINEAR_MAX + 1,
            40,
        ] {
            let set: BTreeSet<Vec<u8>> = (0..size)
                .map(|i| format!("q{}", "x".repeat(i % 5) + &i.to_string()).into_bytes())
                .collect();
            let columns = ColumnSet::from(&set);
            assert_eq!(columns.len(), set.len());
            assert!(columns.iter().eq(set.iter().map(Vec::as_slice)));
            for probe in set.iter().cloned().chain([
                b"".to_vec(),
                b"q".to_vec(),
                b"q0x".to_vec(),
                b"zzz".to_vec(),
            ]) {
                assert_eq!(columns.contains(&probe), set.contains(&probe), "{probe:?}");
            }
        }
    }

    #[test]
    fn a_put_keeps_its_row_and_cells_apart_in_one_buffer() {
        let long_value = vec![7u8; 1000];
        let put = Put::new("row-1")
            .add("f", "a", "1")
            .add_at("g", "", 42, &long_value)
            .add("f", "b", "");
        assert_eq!(put.row(), b"row-1");
        assert_eq!(put.len(), 3);
        let cells: Vec<_> = put
            .cells()
            .map(|c| (c.family, c.qualifier, c.timestamp, c.value))
            .collect();
        assert_eq!(
            cells,
            vec![
                (&b"f"[..], &b"a"[..], None, &b"1"[..]),
                (&b"g"[..], &b""[..], Some(42), &long_value[..]),
                (&b"f"[..], &b"b"[..], None, &b""[..]),
            ]
        );
        assert_eq!(put.clone(), put);
        assert_ne!(put, Put::new("row-1").add("f", "a", "1"));
        let empty = Put::new("");
        assert!(empty.is_empty());
        assert_eq!(empty.row(), b"");
        assert_eq!(empty.cells().count(), 0);
    }
}
