//! The scalar reference evaluator: HBase 2.x's cell-by-cell filter protocol.
//!
//! [`FilterEvaluator`] is a stateful object built from a [`Filter`]. Its methods mirror
//! HBase's `Filter` interface one to one (`reset`, `filter_all_remaining`, `filter_row_key`,
//! `filter_cell`, `transform_cell`, `filter_row_cells`, `has_filter_row`, `filter_row`,
//! `next_cell_hint`) with each filter's exact HBase behaviour, quirks included (see
//! `docs/filters.md`). [`FilterEvaluator::evaluate_row`] drives one whole row the way HBase's
//! region scanner, store scanner and `UserScanQueryMatcher` do.
//!
//! One evaluator serves one scan: its state (page counts, "done" flags) spans rows.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashSet;

use crate::compare::CompiledComparator;
use crate::fuzzy::FuzzySet;
use crate::model::{
    ColumnOffset, ColumnValueTest, CompareOp, Filter, ListOperator, ModelError, RowMask,
};
use crate::ranges::{KeyInterval, KeyRanges, RangePosition};

/// A cell as the engine hands it to the evaluator: borrowed parts of a visible cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellRef<'a> {
    /// Row key.
    pub row: &'a [u8],
    /// Column family.
    pub family: &'a [u8],
    /// Column qualifier.
    pub qualifier: &'a [u8],
    /// Timestamp (milliseconds).
    pub timestamp: i64,
    /// Value.
    pub value: &'a [u8],
}

/// A cell the filter lets through, possibly transformed (KeyOnlyFilter rewrites the value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputCell<'a> {
    /// Row key.
    pub row: &'a [u8],
    /// Column family.
    pub family: &'a [u8],
    /// Column qualifier.
    pub qualifier: &'a [u8],
    /// Timestamp (milliseconds).
    pub timestamp: i64,
    /// Value, borrowed unless a transform replaced it.
    pub value: Cow<'a, [u8]>,
}

impl<'a> From<CellRef<'a>> for OutputCell<'a> {
    fn from(cell: CellRef<'a>) -> Self {
        OutputCell {
            row: cell.row,
            family: cell.family,
            qualifier: cell.qualifier,
            timestamp: cell.timestamp,
            value: Cow::Borrowed(cell.value),
        }
    }
}

/// HBase's `Filter.ReturnCode`: what to do with a cell and where to go next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReturnCode {
    /// Include the cell.
    Include,
    /// Include the cell and skip the column's other versions.
    IncludeAndNextCol,
    /// Include the cell and skip the rest of the row (in this family).
    IncludeAndSeekNextRow,
    /// Skip the cell.
    Skip,
    /// Skip the cell and the column's other versions.
    NextCol,
    /// Skip the rest of the row (in this family: HBase's store scanners stop per family).
    NextRow,
    /// Skip to [`FilterEvaluator::next_cell_hint`].
    SeekNextUsingHint,
}

impl ReturnCode {
    /// True for the three INCLUDE codes.
    pub fn is_include(self) -> bool {
        matches!(
            self,
            ReturnCode::Include | ReturnCode::IncludeAndNextCol | ReturnCode::IncludeAndSeekNextRow
        )
    }
}

/// A seek target: the position just before every cell of `(row, family, qualifier)`. An empty
/// family (and qualifier) means the start of the row (HBase's `createFirstOnRow`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CellHint {
    /// Row to seek to.
    pub row: Vec<u8>,
    /// Family (empty: the start of the row).
    pub family: Vec<u8>,
    /// Qualifier.
    pub qualifier: Vec<u8>,
}

impl CellHint {
    /// The start of `row`.
    pub fn row_start(row: Vec<u8>) -> Self {
        CellHint {
            row,
            family: Vec::new(),
            qualifier: Vec::new(),
        }
    }

    /// Position of the hint relative to `cell` in forward store order: `Greater` means the
    /// hint lies after the cell (seeking to it skips the cell).
    pub fn cmp_cell(&self, cell: &CellRef<'_>) -> Ordering {
        (
            self.row.as_slice(),
            self.family.as_slice(),
            self.qualifier.as_slice(),
        )
            .cmp(&(cell.row, cell.family, cell.qualifier))
            .then(Ordering::Less)
    }

    fn cmp_hint(&self, other: &CellHint) -> Ordering {
        (&self.row, &self.family, &self.qualifier).cmp(&(
            &other.row,
            &other.family,
            &other.qualifier,
        ))
    }
}

/// What [`FilterEvaluator::evaluate_row`] decided for one row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowOutcome<'a> {
    /// The cells returned (empty when the row is excluded).
    pub cells: Vec<OutputCell<'a>>,
    /// True when the row is not returned.
    pub excluded: bool,
    /// True when the scan must end after this row (WHILE, PageFilter, InclusiveStopFilter,
    /// PrefixFilter past its prefix, ...). The row's own cells are still returned.
    pub stop_scan: bool,
    /// When every family present in the row was sent by the filter to a later row (HBase
    /// seeks each of those stores there), the smallest such row. The engine may skip those
    /// families' cells before it; ignoring it is always correct for hint-safe plans.
    pub next_row_hint: Option<Vec<u8>>,
}

/// The stateful scalar evaluator of one filter for one scan.
#[derive(Clone, Debug)]
pub struct FilterEvaluator {
    root: Node,
    reversed: bool,
    /// Families whose store HBase would have closed (see [`FilterEvaluator::evaluate_row`]):
    /// their cells are ignored for the rest of the scan.
    closed_families: Vec<Vec<u8>>,
    /// The families the scan reads, when the caller said which
    /// ([`FilterEvaluator::with_scan_families`]).
    scan_families: Option<Vec<Vec<u8>>>,
}

impl FilterEvaluator {
    /// Builds an evaluator for a forward scan. Validates the filter first.
    pub fn new(filter: &Filter) -> Result<Self, ModelError> {
        Self::with_direction(filter, false)
    }

    /// Builds an evaluator for a forward or reversed scan. In a reversed scan PrefixFilter
    /// and InclusiveStopFilter stop below their key, as in HBase; FuzzyRowFilter and
    /// MultiRowRangeFilter give no seek hints and never end the scan early.
    pub fn with_direction(filter: &Filter, reversed: bool) -> Result<Self, ModelError> {
        filter.validate()?;
        Ok(FilterEvaluator {
            root: Node::build(filter)?,
            reversed,
            closed_families: Vec::new(),
            scan_families: None,
        })
    }

    /// Tells the evaluator which families the scan reads, so that it can end the scan once
    /// the filter has closed every one of them (see [`FilterEvaluator::evaluate_row`]).
    /// Without it, rows keep coming and the closed families' cells are ignored: the same
    /// results, read to the end.
    pub fn with_scan_families<F: AsRef<[u8]>>(
        mut self,
        families: impl IntoIterator<Item = F>,
    ) -> Self {
        let mut families: Vec<Vec<u8>> = families
            .into_iter()
            .map(|family| family.as_ref().to_vec())
            .collect();
        families.sort();
        families.dedup();
        self.scan_families = Some(families);
        self
    }

    /// The families closed so far: HBase's store scanner of such a family met a finished
    /// filter (`DONE_SCAN`) and returns nothing more in this scan.
    pub fn closed_families(&self) -> &[Vec<u8>] {
        &self.closed_families
    }

    /// True when the scan's families are known and the filter closed every one of them.
    fn every_scan_family_closed(&self) -> bool {
        self.scan_families.as_ref().is_some_and(|families| {
            !families.is_empty()
                && families
                    .iter()
                    .all(|family| self.closed_families.contains(family))
        })
    }

    fn is_closed(&self, family: &[u8]) -> bool {
        self.closed_families
            .iter()
            .any(|closed| closed.as_slice() == family)
    }

    /// Clears the per-row state; called between rows.
    pub fn reset(&mut self) {
        self.root.reset();
    }

    /// True when no further row can pass: the scan may end.
    pub fn filter_all_remaining(&self) -> bool {
        self.root.all_remaining()
    }

    /// Row-key test before any cell of the row is read; true excludes the row.
    pub fn filter_row_key(&mut self, row: &[u8]) -> bool {
        self.root.filter_row_key(row, self.reversed)
    }

    /// The cell-level decision.
    pub fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        self.root.filter_cell(cell, self.reversed)
    }

    /// Rewrites an included cell (KeyOnlyFilter).
    pub fn transform_cell<'a>(&self, cell: OutputCell<'a>) -> OutputCell<'a> {
        self.root.transform(cell)
    }

    /// Last chance to edit a row's included cells (SingleColumnValueExcludeFilter drops the
    /// tested column here).
    pub fn filter_row_cells(&mut self, cells: &mut Vec<OutputCell<'_>>) {
        self.root.filter_row_cells(cells);
    }

    /// True when the filter decides on whole rows through `filter_row_cells`/`filter_row`.
    pub fn has_filter_row(&self) -> bool {
        self.root.has_filter_row()
    }

    /// Row-level decision after the row's cells; true excludes the row.
    pub fn filter_row(&mut self) -> bool {
        self.root.filter_row()
    }

    /// Where to seek after [`ReturnCode::SeekNextUsingHint`].
    pub fn next_cell_hint(&mut self, cell: &CellRef<'_>) -> Option<CellHint> {
        self.root.next_cell_hint(cell, self.reversed)
    }

    /// Runs one row the way HBase's region scanner and `UserScanQueryMatcher` do.
    ///
    /// `cells` are the row's visible cells in store order (family ASC, qualifier ASC,
    /// timestamp DESC): deleted, expired and out-of-time-range cells already removed, only the
    /// scan's selected columns, at most the family's VERSIONS per column. `max_versions` is the
    /// scan's version limit; as in HBase it counts cells the filter included, so a filter can
    /// reach past rejected newer versions. An empty `cells` is a row that does not exist.
    ///
    /// Families close as HBase's store scanners do: when the filter reports
    /// `filter_all_remaining` at the end of a family's cells in a row (or in the middle of
    /// them), that family's store scanner meets `DONE_SCAN` at its next cell and closes, so
    /// the family returns nothing more in this scan, while the other families go on. This is
    /// what `ColumnCountGetFilter` does when a row has more columns than its limit: its count
    /// is reset between rows, so the scan continues, without the families that saw it.
    /// Cells of closed families are ignored; a row with nothing else does not exist. The
    /// scan ends (`stop_scan`) when the filter is still done after the row's reset, or when
    /// every family of the scan ([`FilterEvaluator::with_scan_families`]) is closed.
    pub fn evaluate_row<'a>(&mut self, cells: &[CellRef<'a>], max_versions: u32) -> RowOutcome<'a> {
        let open: Cow<'_, [CellRef<'a>]> = if self.closed_families.is_empty() {
            Cow::Borrowed(cells)
        } else {
            Cow::Owned(
                cells
                    .iter()
                    .filter(|cell| !self.is_closed(cell.family))
                    .copied()
                    .collect(),
            )
        };
        let cells: &[CellRef<'a>] = &open;
        let excluded = |stop_scan| RowOutcome {
            cells: Vec::new(),
            excluded: true,
            stop_scan,
            next_row_hint: None,
        };
        let Some(first) = cells.first() else {
            return excluded(self.filter_all_remaining() || self.every_scan_family_closed());
        };
        // HBase's FilterWrapper: a finished filter excludes the row and the scan ends.
        if self.filter_all_remaining() {
            return excluded(true);
        }
        if self.filter_row_key(first.row) {
            let stop_scan = self.filter_all_remaining();
            self.reset();
            return excluded(stop_scan);
        }
        let mut out = Vec::new();
        let mut scan = RowScan {
            done_scan: false,
            row_hint: None,
            every_family_sought: true,
        };
        let mut start = 0;
        while start < cells.len() {
            let family = cells[start].family;
            let length = cells[start..]
                .iter()
                .take_while(|cell| cell.family == family)
                .count();
            self.scan_family(
                &cells[start..start + length],
                max_versions,
                &mut out,
                &mut scan,
            );
            // The family's store scanner matches its next cell (in a later row) right after
            // this row's last one: a finished filter answers DONE_SCAN there, which closes it.
            if self.filter_all_remaining() {
                self.closed_families.push(family.to_vec());
            }
            start += length;
        }
        let was_empty = out.is_empty();
        let has_filter_row = self.has_filter_row();
        let mut excluded_by_filter_row = false;
        if has_filter_row {
            self.filter_row_cells(&mut out);
            if !out.is_empty() && self.filter_row() {
                excluded_by_filter_row = true;
            }
        }
        let excluded_row = was_empty
            || excluded_by_filter_row
            || (!has_filter_row && self.filter_row())
            || out.is_empty();
        if excluded_row {
            out.clear();
        }
        self.reset();
        let stop_scan = self.filter_all_remaining() || self.every_scan_family_closed();
        let next_row_hint = if scan.every_family_sought && !scan.done_scan {
            scan.row_hint
        } else {
            None
        };
        RowOutcome {
            cells: out,
            excluded: excluded_row,
            stop_scan,
            next_row_hint,
        }
    }

    /// One family's cells: HBase's StoreScanner loop with UserScanQueryMatcher's merge of the
    /// filter's code and the version count.
    fn scan_family<'a>(
        &mut self,
        cells: &[CellRef<'a>],
        max_versions: u32,
        out: &mut Vec<OutputCell<'a>>,
        scan: &mut RowScan,
    ) {
        let mut skip_column: Option<&[u8]> = None;
        let mut seek: Option<CellHint> = None;
        let mut row_seek: Option<Vec<u8>> = None;
        let mut version_column: Option<&[u8]> = None;
        let mut versions = 0u32;
        for cell in cells {
            // UserScanQueryMatcher.match: a finished filter ends the scan (DONE_SCAN).
            if self.filter_all_remaining() {
                scan.done_scan = true;
                return;
            }
            if let Some(column) = skip_column {
                if cell.qualifier == column {
                    continue;
                }
                skip_column = None;
            }
            if let Some(hint) = &seek {
                if hint.cmp_cell(cell) == Ordering::Greater {
                    continue;
                }
                seek = None;
            }
            let code = self.filter_cell(cell);
            let seek_next_row_after_include = match code {
                ReturnCode::Skip => continue,
                ReturnCode::NextCol => {
                    skip_column = Some(cell.qualifier);
                    continue;
                }
                ReturnCode::NextRow => break,
                ReturnCode::SeekNextUsingHint => {
                    match self.next_cell_hint(cell) {
                        Some(hint)
                            if !self.reversed && hint.cmp_cell(cell) == Ordering::Greater =>
                        {
                            if hint.row.as_slice() > cell.row {
                                row_seek = Some(hint.row);
                                break;
                            }
                            seek = Some(hint);
                        }
                        _ => {}
                    }
                    continue;
                }
                ReturnCode::Include => None,
                ReturnCode::IncludeAndNextCol => Some(false),
                ReturnCode::IncludeAndSeekNextRow => Some(true),
            };
            if version_column != Some(cell.qualifier) {
                version_column = Some(cell.qualifier);
                versions = 0;
            }
            versions = versions.saturating_add(1);
            if versions > max_versions {
                if seek_next_row_after_include == Some(true) {
                    break;
                }
                skip_column = Some(cell.qualifier);
                continue;
            }
            out.push(self.transform_cell(OutputCell::from(*cell)));
            match seek_next_row_after_include {
                Some(true) => break,
                Some(false) => skip_column = Some(cell.qualifier),
                None => {}
            }
        }
        match row_seek {
            Some(row) => {
                if scan.row_hint.as_ref().is_none_or(|current| row < *current) {
                    scan.row_hint = Some(row);
                }
            }
            None => scan.every_family_sought = false,
        }
    }
}

struct RowScan {
    done_scan: bool,
    row_hint: Option<Vec<u8>>,
    every_family_sought: bool,
}

/// The previous cell an OR member saw and what it answered (HBase's prevCellList and
/// prevFilterRCList), kept only for codes that let the list answer without asking again.
#[derive(Clone, Debug)]
struct PrevCell {
    code: ReturnCode,
    row: Vec<u8>,
    family: Vec<u8>,
    qualifier: Vec<u8>,
    timestamp: i64,
}

/// A row-key test with RowFilter's protocol (RowFilter and RowMaskFilter).
#[derive(Clone, Debug)]
enum RowTest {
    Compare {
        op: CompareOp,
        comparator: CompiledComparator,
    },
    Mask(RowMask),
}

impl RowTest {
    fn passes(&self, row: &[u8]) -> bool {
        match self {
            RowTest::Compare { op, comparator } => comparator.passes(*op, row),
            RowTest::Mask(mask) => mask.matches(row),
        }
    }
}

#[derive(Clone, Debug)]
enum Node {
    KeyOnly {
        len_as_value: bool,
    },
    FirstKeyOnly {
        found: bool,
    },
    Prefix {
        prefix: Vec<u8>,
        passed: bool,
        filter_row: bool,
    },
    ColumnPrefix {
        prefix: Vec<u8>,
    },
    MultipleColumnPrefix {
        sorted: Vec<Vec<u8>>,
        hint: Option<Vec<u8>>,
    },
    ColumnCountGet {
        limit: u64,
        count: u64,
    },
    Page {
        page_size: u64,
        accepted: u64,
    },
    ColumnPagination {
        limit: u64,
        offset: ColumnOffset,
        count: u64,
    },
    InclusiveStop {
        stop_row: Vec<u8>,
        done: bool,
    },
    Timestamps {
        sorted: Vec<i64>,
    },
    RowTest {
        test: RowTest,
        filter_out: bool,
    },
    Family {
        op: CompareOp,
        comparator: CompiledComparator,
    },
    Qualifier {
        op: CompareOp,
        comparator: CompiledComparator,
    },
    Value {
        op: CompareOp,
        comparator: CompiledComparator,
    },
    ColumnRange {
        min: Vec<u8>,
        min_inclusive: bool,
        max: Vec<u8>,
        max_inclusive: bool,
    },
    ColumnValue {
        test: ColumnValueTest,
        comparator: CompiledComparator,
        exclude: bool,
        found: bool,
        matched: bool,
    },
    /// ColumnValueFilter: `found` once the row's tested column was seen.
    ColumnValueCells {
        family: Vec<u8>,
        qualifier: Vec<u8>,
        op: CompareOp,
        comparator: CompiledComparator,
        found: bool,
    },
    /// DependentColumnFilter: `stamps` holds the timestamps of the row's reference cells that
    /// passed the value test.
    DependentColumn {
        family: Vec<u8>,
        qualifier: Vec<u8>,
        drop_dependent_column: bool,
        value_test: Option<(CompareOp, CompiledComparator)>,
        stamps: HashSet<i64>,
    },
    Skip {
        inner: Box<Node>,
        filter_row: bool,
    },
    While {
        inner: Box<Node>,
        done: bool,
    },
    And {
        children: Vec<Node>,
        hinting: Vec<usize>,
    },
    Or {
        children: Vec<Node>,
        prev: Vec<Option<PrevCell>>,
        included: Vec<bool>,
    },
    Fuzzy {
        rules: FuzzySet,
        done: bool,
    },
    MultiRowRange {
        ranges: KeyRanges,
        done: bool,
        code: ReturnCode,
        hint: Option<Vec<u8>>,
    },
}

impl Node {
    fn build(filter: &Filter) -> Result<Node, ModelError> {
        Ok(match filter {
            Filter::KeyOnly { len_as_value } => Node::KeyOnly {
                len_as_value: *len_as_value,
            },
            Filter::FirstKeyOnly => Node::FirstKeyOnly { found: false },
            Filter::Prefix { prefix } => Node::Prefix {
                prefix: prefix.clone(),
                passed: false,
                filter_row: true,
            },
            Filter::ColumnPrefix { prefix } => Node::ColumnPrefix {
                prefix: prefix.clone(),
            },
            Filter::MultipleColumnPrefix { prefixes } => {
                let mut sorted = prefixes.clone();
                sorted.sort();
                Node::MultipleColumnPrefix { sorted, hint: None }
            }
            Filter::ColumnCountGet { limit } => Node::ColumnCountGet {
                limit: u64::from(*limit),
                count: 0,
            },
            Filter::Page { page_size } => Node::Page {
                page_size: *page_size,
                accepted: 0,
            },
            Filter::ColumnPagination { limit, offset } => Node::ColumnPagination {
                limit: u64::from(*limit),
                offset: offset.clone(),
                count: 0,
            },
            Filter::InclusiveStop { stop_row } => Node::InclusiveStop {
                stop_row: stop_row.clone(),
                done: false,
            },
            Filter::Timestamps { timestamps } => {
                let mut sorted = timestamps.clone();
                sorted.sort_unstable();
                sorted.dedup();
                Node::Timestamps { sorted }
            }
            Filter::Row { op, comparator } => Node::RowTest {
                test: RowTest::Compare {
                    op: *op,
                    comparator: CompiledComparator::compile(comparator)?,
                },
                filter_out: false,
            },
            Filter::RowMask(mask) => Node::RowTest {
                test: RowTest::Mask(mask.clone()),
                filter_out: false,
            },
            Filter::Family { op, comparator } => Node::Family {
                op: *op,
                comparator: CompiledComparator::compile(comparator)?,
            },
            Filter::Qualifier { op, comparator } => Node::Qualifier {
                op: *op,
                comparator: CompiledComparator::compile(comparator)?,
            },
            Filter::Value { op, comparator } => Node::Value {
                op: *op,
                comparator: CompiledComparator::compile(comparator)?,
            },
            Filter::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => Node::ColumnRange {
                min: min.clone(),
                min_inclusive: *min_inclusive,
                max: max.clone(),
                max_inclusive: *max_inclusive,
            },
            Filter::SingleColumnValue(test) | Filter::SingleColumnValueExclude(test) => {
                Node::ColumnValue {
                    comparator: CompiledComparator::compile(&test.comparator)?,
                    test: test.clone(),
                    exclude: matches!(filter, Filter::SingleColumnValueExclude(_)),
                    found: false,
                    matched: false,
                }
            }
            Filter::ColumnValue {
                family,
                qualifier,
                op,
                comparator,
            } => Node::ColumnValueCells {
                family: family.clone(),
                qualifier: qualifier.clone(),
                op: *op,
                comparator: CompiledComparator::compile(comparator)?,
                found: false,
            },
            Filter::DependentColumn(dependent) => Node::DependentColumn {
                family: dependent.family.clone(),
                qualifier: dependent.qualifier.clone(),
                drop_dependent_column: dependent.drop_dependent_column,
                value_test: match &dependent.value_test {
                    Some((op, comparator)) => Some((*op, CompiledComparator::compile(comparator)?)),
                    None => None,
                },
                stamps: HashSet::new(),
            },
            Filter::Skip(inner) => Node::Skip {
                inner: Box::new(Node::build(inner)?),
                filter_row: false,
            },
            Filter::While(inner) => Node::While {
                inner: Box::new(Node::build(inner)?),
                done: false,
            },
            Filter::List(list) => {
                let children = list
                    .filters
                    .iter()
                    .map(Node::build)
                    .collect::<Result<Vec<_>, _>>()?;
                match list.operator {
                    ListOperator::MustPassAll => Node::And {
                        children,
                        hinting: Vec::new(),
                    },
                    ListOperator::MustPassOne => {
                        let count = children.len();
                        Node::Or {
                            children,
                            prev: vec![None; count],
                            included: vec![false; count],
                        }
                    }
                }
            }
            Filter::FuzzyRow { rules } => Node::Fuzzy {
                rules: FuzzySet::new(rules),
                done: false,
            },
            Filter::MultiRowRange { ranges } => Node::MultiRowRange {
                ranges: KeyRanges::from_intervals(
                    ranges.iter().map(KeyInterval::from_row_range).collect(),
                ),
                done: false,
                code: ReturnCode::Include,
                hint: None,
            },
        })
    }

    fn reset(&mut self) {
        match self {
            Node::FirstKeyOnly { found } => *found = false,
            Node::Prefix { filter_row, .. } => *filter_row = true,
            Node::ColumnCountGet { count, .. } | Node::ColumnPagination { count, .. } => *count = 0,
            Node::RowTest { filter_out, .. } => *filter_out = false,
            Node::ColumnValue { found, matched, .. } => {
                *found = false;
                *matched = false;
            }
            Node::ColumnValueCells { found, .. } => *found = false,
            Node::DependentColumn { stamps, .. } => stamps.clear(),
            Node::Skip { inner, filter_row } => {
                inner.reset();
                *filter_row = false;
            }
            Node::While { inner, .. } => inner.reset(),
            Node::And { children, hinting } => {
                children.iter_mut().for_each(Node::reset);
                hinting.clear();
            }
            Node::Or {
                children,
                prev,
                included,
            } => {
                children.iter_mut().for_each(Node::reset);
                prev.iter_mut().for_each(|p| *p = None);
                included.iter_mut().for_each(|i| *i = false);
            }
            _ => {}
        }
    }

    fn all_remaining(&self) -> bool {
        match self {
            Node::Prefix { passed, .. } => *passed,
            Node::ColumnCountGet { limit, count } => count > limit,
            Node::Page {
                page_size,
                accepted,
            } => accepted >= page_size,
            Node::InclusiveStop { done, .. }
            | Node::Fuzzy { done, .. }
            | Node::MultiRowRange { done, .. } => *done,
            Node::While { inner, done } => *done || inner.all_remaining(),
            Node::And { children, .. } => children.iter().any(Node::all_remaining),
            Node::Or { children, .. } => children.iter().all(Node::all_remaining),
            _ => false,
        }
    }

    fn filter_row_key(&mut self, row: &[u8], reversed: bool) -> bool {
        match self {
            Node::Prefix {
                prefix,
                passed,
                filter_row,
            } => {
                if *passed {
                    return true;
                }
                let Some(head) = row.get(..prefix.len()) else {
                    return true;
                };
                let ordering = head.cmp(prefix.as_slice());
                if (!reversed && ordering == Ordering::Greater)
                    || (reversed && ordering == Ordering::Less)
                {
                    *passed = true;
                }
                *filter_row = ordering != Ordering::Equal;
                *filter_row
            }
            Node::ColumnCountGet { .. } | Node::Page { .. } | Node::Fuzzy { .. } => {
                self.all_remaining()
            }
            Node::InclusiveStop { stop_row, done } => {
                if *done {
                    return true;
                }
                let ordering = row.cmp(stop_row.as_slice());
                *done = if reversed {
                    ordering == Ordering::Less
                } else {
                    ordering == Ordering::Greater
                };
                *done
            }
            Node::RowTest { test, filter_out } => {
                if !test.passes(row) {
                    *filter_out = true;
                }
                *filter_out
            }
            Node::While { inner, done } => {
                if *done || inner.all_remaining() {
                    return true;
                }
                let value = inner.filter_row_key(row, reversed);
                *done |= value;
                value
            }
            Node::MultiRowRange {
                ranges,
                done,
                code,
                hint,
            } => {
                if *done {
                    return true;
                }
                *hint = None;
                match (ranges.position(row), reversed) {
                    (RangePosition::Inside(_), _) => *code = ReturnCode::Include,
                    (RangePosition::After, false) | (RangePosition::Before(0), true) => {
                        *done = true;
                        *code = ReturnCode::NextRow;
                    }
                    (RangePosition::Before(index), false) => {
                        let interval = &ranges.intervals()[index];
                        if interval.start == std::ops::Bound::Excluded(row.to_vec()) {
                            // HBase answers NEXT_ROW on the excluded start row itself.
                            *code = ReturnCode::NextRow;
                        } else {
                            *code = ReturnCode::SeekNextUsingHint;
                            *hint = interval.first_row();
                        }
                    }
                    (_, true) => *code = ReturnCode::SeekNextUsingHint,
                }
                false
            }
            Node::And { children, .. } => {
                let mut excluded = false;
                for child in children {
                    if child.all_remaining() || child.filter_row_key(row, reversed) {
                        excluded = true;
                    }
                }
                excluded
            }
            Node::Or { children, .. } => {
                let mut excluded = true;
                for child in children {
                    if !child.all_remaining() && !child.filter_row_key(row, reversed) {
                        excluded = false;
                    }
                }
                excluded
            }
            _ => false,
        }
    }

    fn filter_cell(&mut self, cell: &CellRef<'_>, reversed: bool) -> ReturnCode {
        match self {
            Node::KeyOnly { .. } | Node::Page { .. } => ReturnCode::Include,
            Node::FirstKeyOnly { found } => {
                if *found {
                    ReturnCode::NextRow
                } else {
                    *found = true;
                    ReturnCode::Include
                }
            }
            Node::Prefix { filter_row, .. } => {
                if *filter_row {
                    ReturnCode::NextRow
                } else {
                    ReturnCode::Include
                }
            }
            Node::ColumnPrefix { prefix } => column_prefix_code(cell.qualifier, prefix),
            Node::MultipleColumnPrefix { sorted, hint } => {
                if sorted.is_empty() {
                    return ReturnCode::Include;
                }
                let at_most = sorted.partition_point(|prefix| prefix.as_slice() <= cell.qualifier);
                if at_most > 0 {
                    let largest = &sorted[at_most - 1];
                    if cell.qualifier.starts_with(largest) {
                        return ReturnCode::Include;
                    }
                    if at_most == sorted.len() {
                        return ReturnCode::NextRow;
                    }
                }
                *hint = sorted.get(at_most).cloned();
                ReturnCode::SeekNextUsingHint
            }
            Node::ColumnCountGet { limit, count } => {
                *count += 1;
                if *count > *limit {
                    ReturnCode::NextCol
                } else {
                    ReturnCode::IncludeAndNextCol
                }
            }
            Node::ColumnPagination {
                limit,
                offset,
                count,
            } => match offset {
                ColumnOffset::Qualifier(start) => {
                    if *count >= *limit {
                        return ReturnCode::NextRow;
                    }
                    if *count == 0 && cell.qualifier < start.as_slice() {
                        return ReturnCode::SeekNextUsingHint;
                    }
                    *count += 1;
                    ReturnCode::IncludeAndNextCol
                }
                ColumnOffset::Index(skip) => {
                    let skip = u64::from(*skip);
                    if *count >= skip + *limit {
                        return ReturnCode::NextRow;
                    }
                    let code = if *count < skip {
                        ReturnCode::NextCol
                    } else {
                        ReturnCode::IncludeAndNextCol
                    };
                    *count += 1;
                    code
                }
            },
            Node::InclusiveStop { done, .. } => {
                if *done {
                    ReturnCode::NextRow
                } else {
                    ReturnCode::Include
                }
            }
            Node::Timestamps { sorted } => {
                if sorted.binary_search(&cell.timestamp).is_ok() {
                    ReturnCode::Include
                } else if cell.timestamp < sorted.first().copied().unwrap_or(i64::MAX) {
                    ReturnCode::NextCol
                } else {
                    ReturnCode::Skip
                }
            }
            Node::RowTest { filter_out, .. } => {
                if *filter_out {
                    ReturnCode::NextRow
                } else {
                    ReturnCode::Include
                }
            }
            Node::Family { op, comparator } => {
                if !cell.family.is_empty() && !comparator.passes(*op, cell.family) {
                    ReturnCode::NextRow
                } else {
                    ReturnCode::Include
                }
            }
            Node::Qualifier { op, comparator } => {
                if !cell.qualifier.is_empty() && !comparator.passes(*op, cell.qualifier) {
                    ReturnCode::Skip
                } else {
                    ReturnCode::Include
                }
            }
            Node::Value { op, comparator } => {
                if comparator.passes(*op, cell.value) {
                    ReturnCode::Include
                } else {
                    ReturnCode::Skip
                }
            }
            Node::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => {
                let to_min = if min.is_empty() {
                    Ordering::Greater
                } else {
                    cell.qualifier.cmp(min.as_slice())
                };
                if to_min == Ordering::Less {
                    return ReturnCode::SeekNextUsingHint;
                }
                if !*min_inclusive && to_min == Ordering::Equal {
                    return ReturnCode::NextCol;
                }
                if max.is_empty() {
                    return ReturnCode::Include;
                }
                let to_max = cell.qualifier.cmp(max.as_slice());
                if to_max == Ordering::Less || (*max_inclusive && to_max == Ordering::Equal) {
                    ReturnCode::Include
                } else {
                    ReturnCode::NextRow
                }
            }
            Node::ColumnValue {
                test,
                comparator,
                found,
                matched,
                ..
            } => {
                if *matched {
                    return ReturnCode::Include;
                }
                if test.latest_version_only && *found {
                    return ReturnCode::NextRow;
                }
                if cell.family != test.family.as_slice()
                    || cell.qualifier != test.qualifier.as_slice()
                {
                    return ReturnCode::Include;
                }
                *found = true;
                if !comparator.passes(test.op, cell.value) {
                    return if test.latest_version_only {
                        ReturnCode::NextRow
                    } else {
                        ReturnCode::Include
                    };
                }
                *matched = true;
                ReturnCode::Include
            }
            Node::ColumnValueCells {
                family,
                qualifier,
                op,
                comparator,
                found,
            } => {
                if cell.family != family.as_slice() || cell.qualifier != qualifier.as_slice() {
                    // Once the column was seen, nothing after it in the row can match.
                    return if *found {
                        ReturnCode::NextRow
                    } else {
                        ReturnCode::NextCol
                    };
                }
                *found = true;
                if comparator.passes(*op, cell.value) {
                    ReturnCode::Include
                } else {
                    ReturnCode::Skip
                }
            }
            Node::DependentColumn {
                family,
                qualifier,
                drop_dependent_column,
                value_test,
                stamps,
            } => {
                // Other columns are included for now; filter_row_cells keeps those whose
                // timestamp a reference cell has.
                if cell.family != family.as_slice() || cell.qualifier != qualifier.as_slice() {
                    return ReturnCode::Include;
                }
                if let Some((op, comparator)) = value_test
                    && !comparator.passes(*op, cell.value)
                {
                    return ReturnCode::Skip;
                }
                stamps.insert(cell.timestamp);
                if *drop_dependent_column {
                    ReturnCode::Skip
                } else {
                    ReturnCode::Include
                }
            }
            Node::Skip { inner, filter_row } => {
                let code = inner.filter_cell(cell, reversed);
                *filter_row |= code != ReturnCode::Include;
                code
            }
            Node::While { inner, done } => {
                let code = inner.filter_cell(cell, reversed);
                *done |= code != ReturnCode::Include;
                code
            }
            Node::And { children, hinting } => {
                let mut code = ReturnCode::Include;
                hinting.clear();
                for (index, child) in children.iter_mut().enumerate() {
                    if child.all_remaining() {
                        return ReturnCode::NextRow;
                    }
                    let local = child.filter_cell(cell, reversed);
                    if local == ReturnCode::SeekNextUsingHint {
                        hinting.push(index);
                    }
                    code = merge_and(code, local);
                    // HBASE-20565: later members must not see cells the list already rejects.
                    if !code.is_include() {
                        return code;
                    }
                }
                if hinting.is_empty() {
                    code
                } else {
                    ReturnCode::SeekNextUsingHint
                }
            }
            Node::Or {
                children,
                prev,
                included,
            } => {
                let mut code: Option<ReturnCode> = None;
                for (index, child) in children.iter_mut().enumerate() {
                    included[index] = false;
                    if child.all_remaining() {
                        continue;
                    }
                    let local =
                        match code_from_previous(child, prev[index].as_ref(), cell, reversed) {
                            Some(local) => local,
                            None => child.filter_cell(cell, reversed),
                        };
                    prev[index] = if matches!(local, ReturnCode::Include | ReturnCode::Skip) {
                        None
                    } else {
                        Some(PrevCell {
                            code: local,
                            row: cell.row.to_vec(),
                            family: cell.family.to_vec(),
                            qualifier: cell.qualifier.to_vec(),
                            timestamp: cell.timestamp,
                        })
                    };
                    code = Some(merge_or(code, local));
                    included[index] = local.is_include();
                }
                code.unwrap_or(ReturnCode::Skip)
            }
            Node::Fuzzy { rules, .. } => {
                if rules.satisfies(cell.row) {
                    ReturnCode::Include
                } else {
                    ReturnCode::SeekNextUsingHint
                }
            }
            Node::MultiRowRange { code, .. } => *code,
        }
    }

    fn transform<'a>(&self, mut cell: OutputCell<'a>) -> OutputCell<'a> {
        match self {
            Node::KeyOnly { len_as_value } => {
                cell.value = if *len_as_value {
                    let length = i32::try_from(cell.value.len()).unwrap_or(i32::MAX);
                    Cow::Owned(length.to_be_bytes().to_vec())
                } else {
                    Cow::Owned(Vec::new())
                };
                cell
            }
            Node::Skip { inner, .. } | Node::While { inner, .. } => inner.transform(cell),
            Node::And { children, .. } => children
                .iter()
                .fold(cell, |cell, child| child.transform(cell)),
            Node::Or {
                children, included, ..
            } => children
                .iter()
                .zip(included)
                .filter(|(_, included)| **included)
                .fold(cell, |cell, (child, _)| child.transform(cell)),
            _ => cell,
        }
    }

    fn filter_row_cells(&mut self, cells: &mut Vec<OutputCell<'_>>) {
        match self {
            Node::ColumnValue {
                test,
                exclude: true,
                ..
            } => {
                cells.retain(|cell| {
                    cell.family != test.family.as_slice()
                        || cell.qualifier != test.qualifier.as_slice()
                });
            }
            Node::DependentColumn { stamps, .. } => {
                cells.retain(|cell| stamps.contains(&cell.timestamp));
            }
            Node::And { children, .. } | Node::Or { children, .. } => {
                children
                    .iter_mut()
                    .for_each(|child| child.filter_row_cells(cells));
            }
            _ => {}
        }
    }

    fn has_filter_row(&self) -> bool {
        match self {
            Node::Page { .. }
            | Node::Skip { .. }
            | Node::While { .. }
            | Node::ColumnValue { .. }
            | Node::DependentColumn { .. } => true,
            Node::And { children, .. } | Node::Or { children, .. } => {
                children.iter().any(Node::has_filter_row)
            }
            _ => false,
        }
    }

    fn filter_row(&mut self) -> bool {
        match self {
            Node::Prefix { filter_row, .. } | Node::Skip { filter_row, .. } => *filter_row,
            Node::RowTest { filter_out, .. } => *filter_out,
            Node::Page {
                page_size,
                accepted,
            } => {
                *accepted += 1;
                *accepted > *page_size
            }
            Node::ColumnValue {
                test,
                found,
                matched,
                ..
            } => {
                if *found {
                    !*matched
                } else {
                    test.filter_if_missing
                }
            }
            Node::While { inner, done } => {
                let value = inner.filter_row();
                *done |= value;
                value
            }
            Node::And { children, .. } => children.iter_mut().any(Node::filter_row),
            Node::Or { children, .. } => children.iter_mut().all(Node::filter_row),
            _ => false,
        }
    }

    fn next_cell_hint(&mut self, cell: &CellRef<'_>, reversed: bool) -> Option<CellHint> {
        let column_hint = |qualifier: &[u8]| CellHint {
            row: cell.row.to_vec(),
            family: cell.family.to_vec(),
            qualifier: qualifier.to_vec(),
        };
        match self {
            Node::ColumnPrefix { prefix } => Some(column_hint(prefix)),
            Node::MultipleColumnPrefix { hint, .. } => hint.as_deref().map(column_hint),
            Node::ColumnPagination {
                offset: ColumnOffset::Qualifier(start),
                ..
            } => Some(column_hint(start)),
            Node::ColumnRange { min, .. } => Some(column_hint(min)),
            Node::Fuzzy { rules, done } => {
                if reversed {
                    return None;
                }
                let next = rules.next_row_after(cell.row);
                if next.is_none() {
                    *done = true;
                }
                next.map(CellHint::row_start)
            }
            Node::MultiRowRange {
                hint,
                code: ReturnCode::SeekNextUsingHint,
                ..
            } if !reversed => hint.clone().map(CellHint::row_start),
            Node::And { children, hinting } => {
                let mut best: Option<CellHint> = None;
                for index in hinting.iter().copied() {
                    let Some(child) = children.get_mut(index) else {
                        continue;
                    };
                    if child.all_remaining() {
                        continue;
                    }
                    if let Some(hint) = child.next_cell_hint(cell, reversed)
                        && best
                            .as_ref()
                            .is_none_or(|b| directed(b.cmp_hint(&hint), reversed) == Ordering::Less)
                    {
                        best = Some(hint);
                    }
                }
                best
            }
            Node::Or { children, .. } => {
                let mut best: Option<CellHint> = None;
                for child in children.iter_mut() {
                    if child.all_remaining() {
                        continue;
                    }
                    let hint = child.next_cell_hint(cell, reversed)?;
                    if best
                        .as_ref()
                        .is_none_or(|b| directed(b.cmp_hint(&hint), reversed) == Ordering::Greater)
                    {
                        best = Some(hint);
                    }
                }
                best
            }
            _ => None,
        }
    }
}

/// HBase's FilterListBase.compareCell: forward order, flipped for reversed scans.
fn directed(ordering: Ordering, reversed: bool) -> Ordering {
    if reversed {
        ordering.reverse()
    } else {
        ordering
    }
}

/// ColumnPrefixFilter's decision.
fn column_prefix_code(qualifier: &[u8], prefix: &[u8]) -> ReturnCode {
    if qualifier.len() < prefix.len() {
        if qualifier <= &prefix[..qualifier.len()] {
            ReturnCode::SeekNextUsingHint
        } else {
            ReturnCode::NextRow
        }
    } else {
        match qualifier[..prefix.len()].cmp(prefix) {
            Ordering::Less => ReturnCode::SeekNextUsingHint,
            Ordering::Greater => ReturnCode::NextRow,
            Ordering::Equal => ReturnCode::Include,
        }
    }
}

/// FilterListWithOR.calculateReturnCodeByPrevCellAndRC: answers for a member from what it
/// said about the previous cell, without asking it again (`None`: ask).
fn code_from_previous(
    child: &mut Node,
    prev: Option<&PrevCell>,
    cell: &CellRef<'_>,
    reversed: bool,
) -> Option<ReturnCode> {
    let prev = prev?;
    match prev.code {
        ReturnCode::Include | ReturnCode::Skip => None,
        ReturnCode::SeekNextUsingHint => {
            let previous = CellRef {
                row: &prev.row,
                family: &prev.family,
                qualifier: &prev.qualifier,
                timestamp: prev.timestamp,
                value: &[],
            };
            let hint = child.next_cell_hint(&previous, reversed)?;
            // compareCell(currentCell, hint) < 0: the cell is still before the hint.
            let hint_vs_cell = directed(hint.cmp_cell(cell), reversed);
            (hint_vs_cell == Ordering::Greater).then_some(ReturnCode::SeekNextUsingHint)
        }
        ReturnCode::NextCol | ReturnCode::IncludeAndNextCol => (prev.family == cell.family
            && prev.qualifier == cell.qualifier)
            .then_some(ReturnCode::NextCol),
        ReturnCode::NextRow | ReturnCode::IncludeAndSeekNextRow => {
            (prev.family == cell.family).then_some(ReturnCode::NextRow)
        }
    }
}

/// FilterListWithAND.mergeReturnCode: the larger step wins.
fn merge_and(current: ReturnCode, local: ReturnCode) -> ReturnCode {
    use ReturnCode::*;
    if current == SeekNextUsingHint {
        return SeekNextUsingHint;
    }
    match (local, current) {
        (SeekNextUsingHint, _) => SeekNextUsingHint,
        (Include, current) => current,
        (NextRow, _) => NextRow,
        (IncludeAndNextCol, Include | IncludeAndNextCol) => IncludeAndNextCol,
        (IncludeAndNextCol, IncludeAndSeekNextRow) => IncludeAndSeekNextRow,
        (IncludeAndNextCol, Skip | NextCol) => NextCol,
        (IncludeAndNextCol, _) => NextRow,
        (IncludeAndSeekNextRow, Include | IncludeAndNextCol | IncludeAndSeekNextRow) => {
            IncludeAndSeekNextRow
        }
        (IncludeAndSeekNextRow, _) => NextRow,
        (Skip, Include | Skip) => Skip,
        (Skip, IncludeAndNextCol | NextCol) => NextCol,
        (Skip, _) => NextRow,
        (NextCol, Include | IncludeAndNextCol | Skip | NextCol) => NextCol,
        (NextCol, _) => NextRow,
    }
}

/// FilterListWithOR.mergeReturnCode: the smaller step wins.
fn merge_or(current: Option<ReturnCode>, local: ReturnCode) -> ReturnCode {
    use ReturnCode::*;
    let Some(current) = current else {
        return local;
    };
    match (local, current) {
        (Include, _) => Include,
        (IncludeAndNextCol, Include | Skip | SeekNextUsingHint) => Include,
        (IncludeAndNextCol, _) => IncludeAndNextCol,
        (IncludeAndSeekNextRow, Include | Skip | SeekNextUsingHint) => Include,
        (IncludeAndSeekNextRow, IncludeAndNextCol | NextCol) => IncludeAndNextCol,
        (IncludeAndSeekNextRow, _) => IncludeAndSeekNextRow,
        (Skip, Include | IncludeAndNextCol | IncludeAndSeekNextRow) => Include,
        (Skip, _) => Skip,
        (NextCol, Include) => Include,
        (NextCol, NextCol | NextRow) => NextCol,
        (NextCol, IncludeAndNextCol | IncludeAndSeekNextRow) => IncludeAndNextCol,
        (NextCol, _) => Skip,
        (NextRow, Skip | SeekNextUsingHint) => Skip,
        (NextRow, current) => current,
        (SeekNextUsingHint, Include | IncludeAndNextCol | IncludeAndSeekNextRow) => Include,
        (SeekNextUsingHint, SeekNextUsingHint) => SeekNextUsingHint,
        (SeekNextUsingHint, _) => Skip,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ReturnCode::*;

    const ALL: [ReturnCode; 7] = [
        Include,
        IncludeAndNextCol,
        IncludeAndSeekNextRow,
        Skip,
        NextCol,
        NextRow,
        SeekNextUsingHint,
    ];

    /// The tables from FilterListWithAND / FilterListWithOR, rows = local code, columns =
    /// current code, both in the order of `ALL`.
    #[test]
    fn merge_tables_match_hbase() {
        let and_table = [
            [
                Include,
                IncludeAndNextCol,
                IncludeAndSeekNextRow,
                Skip,
                NextCol,
                NextRow,
            ],
            [
                IncludeAndNextCol,
                IncludeAndNextCol,
                IncludeAndSeekNextRow,
                NextCol,
                NextCol,
                NextRow,
            ],
            [
                IncludeAndSeekNextRow,
                IncludeAndSeekNextRow,
                IncludeAndSeekNextRow,
                NextRow,
                NextRow,
                NextRow,
            ],
            [Skip, NextCol, NextRow, Skip, NextCol, NextRow],
            [NextCol, NextCol, NextRow, NextCol, NextCol, NextRow],
            [NextRow, NextRow, NextRow, NextRow, NextRow, NextRow],
        ];
        for (l, row) in and_table.iter().enumerate() {
            for (c, expected) in row.iter().enumerate() {
                assert_eq!(
                    merge_and(ALL[c], ALL[l]),
                    *expected,
                    "AND local {:?} current {:?}",
                    ALL[l],
                    ALL[c]
                );
            }
            assert_eq!(merge_and(SeekNextUsingHint, ALL[l]), SeekNextUsingHint);
            assert_eq!(merge_and(ALL[l], SeekNextUsingHint), SeekNextUsingHint);
        }
        let or_table = [
            [
                Include, Include, Include, Include, Include, Include, Include,
            ],
            [
                Include,
                IncludeAndNextCol,
                IncludeAndNextCol,
                Include,
                IncludeAndNextCol,
                IncludeAndNextCol,
                Include,
            ],
            [
                Include,
                IncludeAndNextCol,
                IncludeAndSeekNextRow,
                Include,
                IncludeAndNextCol,
                IncludeAndSeekNextRow,
                Include,
            ],
            [Include, Include, Include, Skip, Skip, Skip, Skip],
            [
                Include,
                IncludeAndNextCol,
                IncludeAndNextCol,
                Skip,
                NextCol,
                NextCol,
                Skip,
            ],
            [
                Include,
                IncludeAndNextCol,
                IncludeAndSeekNextRow,
                Skip,
                NextCol,
                NextRow,
                Skip,
            ],
            [
                Include,
                Include,
                Include,
                Skip,
                Skip,
                Skip,
                SeekNextUsingHint,
            ],
        ];
        for (l, row) in or_table.iter().enumerate() {
            for (c, expected) in row.iter().enumerate() {
                assert_eq!(
                    merge_or(Some(ALL[c]), ALL[l]),
                    *expected,
                    "OR local {:?} current {:?}",
                    ALL[l],
                    ALL[c]
                );
            }
        }
    }
}
