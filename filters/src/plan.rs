//! The planner: a filter compiled into what the engine can do without the cell-by-cell
//! evaluator, and a flag saying whether the evaluator must still run.
//!
//! A [`Plan`] has five parts (rules and proofs in `docs/filters.md`, "Plan"):
//!
//! - (a) **key ranges and seek hints**: rows outside [`Plan::ranges`] or matching none of the
//!   fuzzy rules are never returned; [`Plan::seek`] and [`Plan::may_contain`] let the index skip
//!   rows and blocks;
//! - (b) **row-key kernels**: [`Plan::row_filter`] rejects rows exactly as HBase would, before
//!   any cell is read; [`Plan::stop_filter`] (from a top-level `WHILE` over a row predicate)
//!   ends the scan at the first visible row that fails it;
//! - (c) **cell kernels**: [`Plan::column_filters`] reject whole rows from one column's value
//!   (SingleColumnValueFilter), [`Plan::cell_filter`] drops cells (value, qualifier, family,
//!   timestamp predicates);
//! - (d) **limits**: [`Plan::limits`], upper bounds the engine may enforce early;
//! - (e) [`Plan::needs_evaluator`]: when false, [`Plan::output_cells`] produces exactly the
//!   evaluator's output, so the engine never runs the scalar evaluator.
//!
//! Everything a plan does is exact: skipping what it says may be skipped, then running the
//! evaluator (when needed) on what is left, returns exactly the rows the evaluator returns on
//! every row. [`crate::reference::scan_with_plan`] is the executable statement of that
//! contract and the property tests check it.

use std::ops::Bound;

use crate::batch::{Batch, Bitmap, VarBatch};
use crate::eval::{CellRef, OutputCell};
use crate::fuzzy::FuzzySet;
use crate::kernels::{
    BinaryCompare, ComparatorKernel, FuzzyKernel, Isa, Kernel, MaskedCompare, MaskedEquals,
    PrefixKernel, RangesKernel, SegmentBound, SegmentRange,
};
use crate::model::{Comparator, CompareOp, Filter, FuzzyRule, ListOperator, ModelError, RowMask};
use crate::ranges::{KeyInterval, KeyRanges, RangePosition, prefix_successor};

/// Most steps [`Plan::seek`] takes alternating between ranges and fuzzy rules before it
/// settles for a partial answer (still a valid seek target).
pub const MAX_SEEK_STEPS: usize = 64;

/// The scan's own bounds and direction. Bounds are in key order whatever the direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanRange {
    /// Lowest row key of the scan.
    pub start: Bound<Vec<u8>>,
    /// Highest row key of the scan.
    pub end: Bound<Vec<u8>>,
    /// Rows are visited from high to low keys.
    pub reversed: bool,
}

impl ScanRange {
    /// A forward scan over every row.
    pub fn all() -> Self {
        ScanRange {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
            reversed: false,
        }
    }

    fn ranges(&self) -> KeyRanges {
        KeyRanges::from_intervals(vec![KeyInterval {
            start: self.start.clone(),
            end: self.end.clone(),
        }])
    }
}

/// A predicate over row keys, evaluated into one bitmap per batch.
#[derive(Clone, Debug)]
pub enum RowPredicate {
    /// Every member passes.
    All(Vec<RowPredicate>),
    /// Some member passes.
    Any(Vec<RowPredicate>),
    /// PrefixFilter.
    Prefix(PrefixKernel),
    /// RowMaskFilter.
    Masked(MaskedCompare),
    /// Two RowMaskFilters on the same field fused into one range test.
    SegmentRange(SegmentRange),
    /// RowMaskFilters with `=` (and PrefixFilters beside them) fused into one masked
    /// equality.
    MaskedEquals(MaskedEquals),
    /// RowFilter with any comparator.
    Compare(ComparatorKernel),
    /// FuzzyRowFilter.
    Fuzzy(FuzzyKernel),
    /// MultiRowRangeFilter, InclusiveStopFilter.
    Ranges(RangesKernel),
}

impl RowPredicate {
    fn kernel(&self) -> Option<&dyn Kernel> {
        match self {
            RowPredicate::All(_) | RowPredicate::Any(_) => None,
            RowPredicate::Prefix(kernel) => Some(kernel),
            RowPredicate::Masked(kernel) => Some(kernel),
            RowPredicate::SegmentRange(kernel) => Some(kernel),
            RowPredicate::MaskedEquals(kernel) => Some(kernel),
            RowPredicate::Compare(kernel) => Some(kernel),
            RowPredicate::Fuzzy(kernel) => Some(kernel),
            RowPredicate::Ranges(kernel) => Some(kernel),
        }
    }

    fn combine(
        &self,
        batch: &Batch<'_>,
        out: &mut Bitmap,
        mut member: impl FnMut(&RowPredicate, &mut Bitmap),
    ) {
        let (members, all) = match self {
            RowPredicate::All(members) => (members, true),
            RowPredicate::Any(members) => (members, false),
            _ => return,
        };
        *out = if all {
            Bitmap::ones(batch.len())
        } else {
            Bitmap::zeros(batch.len())
        };
        let mut scratch = Bitmap::zeros(0);
        for predicate in members {
            member(predicate, &mut scratch);
            if all {
                out.and_assign(&scratch);
            } else {
                out.or_assign(&scratch);
            }
        }
    }
}

impl Kernel for RowPredicate {
    fn eval_with(&self, isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        match self.kernel() {
            Some(kernel) => kernel.eval_with(isa, batch, out),
            None => self.combine(batch, out, |member, scratch| {
                member.eval_with(isa, batch, scratch)
            }),
        }
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        match self.kernel() {
            Some(kernel) => kernel.eval_scalar(batch, out),
            None => self.combine(batch, out, |member, scratch| {
                member.eval_scalar(batch, scratch)
            }),
        }
    }

    fn matches(&self, row: &[u8]) -> bool {
        match self {
            RowPredicate::All(members) => members.iter().all(|m| m.matches(row)),
            RowPredicate::Any(members) => members.iter().any(|m| m.matches(row)),
            _ => self.kernel().is_some_and(|kernel| kernel.matches(row)),
        }
    }
}

/// A SingleColumnValueFilter conjunct as an exact row test on one column's visible versions.
#[derive(Clone, Debug)]
pub struct ColumnValuePredicate {
    /// Tested family.
    pub family: Vec<u8>,
    /// Tested qualifier.
    pub qualifier: Vec<u8>,
    /// The operator and comparator as a kernel over values.
    pub kernel: ComparatorKernel,
    /// Only the newest visible version decides (otherwise any version may match).
    pub latest_version_only: bool,
    /// Rows without the column fail (otherwise they pass).
    pub filter_if_missing: bool,
}

impl ColumnValuePredicate {
    /// The row's fate from the column's visible values, newest first.
    pub fn row_passes<'v>(&self, mut versions: impl Iterator<Item = &'v [u8]>) -> bool {
        let Some(newest) = versions.next() else {
            return !self.filter_if_missing;
        };
        if self.latest_version_only {
            self.kernel.matches(newest)
        } else {
            self.kernel.matches(newest) || versions.any(|value| self.kernel.matches(value))
        }
    }

    /// The row's fate from its visible cells (store order).
    pub fn row_passes_cells(&self, cells: &[CellRef<'_>]) -> bool {
        self.row_passes(
            cells
                .iter()
                .filter(|cell| {
                    cell.family == self.family.as_slice()
                        && cell.qualifier == self.qualifier.as_slice()
                })
                .map(|cell| cell.value),
        )
    }

    /// Batch form for `latest_version_only`: `latest` holds each row's newest value of the
    /// column (anything for rows where `present` is clear). Fills `out` with passing rows.
    pub fn eval_latest(&self, latest: &VarBatch<'_>, present: &Bitmap, out: &mut Bitmap) {
        self.kernel.eval(&Batch::Var(*latest), out);
        out.and_assign(present);
        if !self.filter_if_missing {
            out.or_assign(&present.not());
        }
    }
}

/// A stateless cell test; a cell failing any of a plan's cell predicates is never returned.
#[derive(Clone, Debug)]
pub enum CellPredicate {
    /// ValueFilter.
    Value(ComparatorKernel),
    /// QualifierFilter (an empty qualifier always passes).
    Qualifier(ComparatorKernel),
    /// FamilyFilter.
    Family(ComparatorKernel),
    /// TimestampsFilter (sorted, deduplicated).
    Timestamps(Vec<i64>),
    /// ColumnPrefixFilter.
    ColumnPrefix(Vec<u8>),
    /// MultipleColumnPrefixFilter (sorted): passes when the qualifier starts with the largest
    /// prefix not above it, HBase's exact rule.
    MultipleColumnPrefix(Vec<Vec<u8>>),
    /// ColumnValueFilter: the cell is in the column and its value passes the kernel.
    ColumnValue {
        /// The column's family.
        family: Vec<u8>,
        /// The column's qualifier.
        qualifier: Vec<u8>,
        /// The operator and comparator as a kernel over values.
        kernel: ComparatorKernel,
    },
    /// ColumnRangeFilter (empty bound: none).
    ColumnRange {
        /// Lower bound.
        min: Vec<u8>,
        /// Lower bound inclusive.
        min_inclusive: bool,
        /// Upper bound.
        max: Vec<u8>,
        /// Upper bound inclusive.
        max_inclusive: bool,
    },
}

/// A batch of cells of one family: the separate arrays strata's blocks store.
#[derive(Clone, Copy, Debug)]
pub struct CellBatch<'a> {
    /// The family of every cell.
    pub family: &'a [u8],
    /// Qualifiers.
    pub qualifiers: VarBatch<'a>,
    /// Timestamps, one per cell.
    pub timestamps: &'a [i64],
    /// Values.
    pub values: VarBatch<'a>,
}

impl CellPredicate {
    /// The test on one cell.
    pub fn matches(&self, cell: &CellRef<'_>) -> bool {
        match self {
            CellPredicate::Value(kernel) => kernel.matches(cell.value),
            CellPredicate::Qualifier(kernel) => {
                cell.qualifier.is_empty() || kernel.matches(cell.qualifier)
            }
            CellPredicate::Family(kernel) => cell.family.is_empty() || kernel.matches(cell.family),
            CellPredicate::Timestamps(sorted) => sorted.binary_search(&cell.timestamp).is_ok(),
            CellPredicate::ColumnValue {
                family,
                qualifier,
                kernel,
            } => {
                cell.family == family.as_slice()
                    && cell.qualifier == qualifier.as_slice()
                    && kernel.matches(cell.value)
            }
            CellPredicate::ColumnPrefix(prefix) => cell.qualifier.starts_with(prefix),
            CellPredicate::MultipleColumnPrefix(sorted) => {
                let at_most = sorted.partition_point(|prefix| prefix.as_slice() <= cell.qualifier);
                sorted.is_empty()
                    || (at_most > 0 && cell.qualifier.starts_with(&sorted[at_most - 1]))
            }
            CellPredicate::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => {
                let above_min = min.is_empty()
                    || cell.qualifier > min.as_slice()
                    || (*min_inclusive && cell.qualifier == min.as_slice());
                let below_max = max.is_empty()
                    || cell.qualifier < max.as_slice()
                    || (*max_inclusive && cell.qualifier == max.as_slice());
                above_min && below_max
            }
        }
    }

    /// The test over a batch of cells (value and qualifier tests run as kernels).
    pub fn eval(&self, cells: &CellBatch<'_>, out: &mut Bitmap) {
        match self {
            CellPredicate::Value(kernel) => kernel.eval(&Batch::Var(cells.values), out),
            CellPredicate::ColumnValue {
                family,
                qualifier,
                kernel,
            } => {
                if cells.family != family.as_slice() {
                    // A batch holds one family: none of its cells is in the column.
                    *out = Bitmap::zeros(cells.qualifiers.count());
                    return;
                }
                kernel.eval(&Batch::Var(cells.values), out);
                let in_column = Bitmap::from_bools(
                    cells
                        .qualifiers
                        .iter()
                        .map(|candidate| candidate == qualifier.as_slice()),
                );
                out.and_assign(&in_column);
            }
            CellPredicate::Qualifier(kernel) => {
                kernel.eval(&Batch::Var(cells.qualifiers), out);
                let empty = Bitmap::from_bools(cells.qualifiers.iter().map(<[u8]>::is_empty));
                out.or_assign(&empty);
            }
            _ => {
                *out = Bitmap::from_bools((0..cells.qualifiers.count()).map(|index| {
                    self.matches(&CellRef {
                        row: &[],
                        family: cells.family,
                        qualifier: cells.qualifiers.get(index),
                        timestamp: cells.timestamps.get(index).copied().unwrap_or(i64::MIN),
                        value: cells.values.get(index),
                    })
                }));
            }
        }
    }
}

/// Upper bounds the engine may enforce early without changing results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// At most this many rows are returned (PageFilter). The scan may stop once it has
    /// returned this many.
    pub max_rows: Option<u64>,
    /// At most this many cells are returned per row (ColumnPaginationFilter,
    /// ColumnCountGetFilter, FirstKeyOnlyFilter).
    pub max_cells_per_row: Option<u64>,
}

/// Where the engine should continue from a row, per [`Plan::seek`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seek {
    /// This row may match: read it.
    Here,
    /// No row before this key can match (forward scans): seek to the first row `>=` it.
    Forward(Vec<u8>),
    /// No row above this key can match (reversed scans): seek to the last row below it
    /// (`inclusive`: at or below it).
    Backward {
        /// The key.
        key: Vec<u8>,
        /// Whether the key itself may match.
        inclusive: bool,
    },
    /// No further row can match: end the scan.
    Done,
}

/// A compiled filter (see the module documentation).
#[derive(Clone, Debug)]
pub struct Plan {
    /// (a) Rows outside these ranges are never returned.
    pub ranges: KeyRanges,
    fuzzy: Option<FuzzySet>,
    fuzzy_rules: Vec<FuzzyRule>,
    reversed: bool,
    /// (b) Rows failing this are excluded, exactly; they need not reach the evaluator.
    pub row_filter: Option<RowPredicate>,
    /// (b) The scan ends at the first visible row (in scan order) failing this; that row is
    /// excluded. Apply it to every visible row before anything else may drop the row.
    pub stop_filter: Option<RowPredicate>,
    /// (c) Rows failing any of these are excluded, exactly (tested on merged, visible cells).
    pub column_filters: Vec<ColumnValuePredicate>,
    /// (c) Cells failing any of these are never returned.
    pub cell_filter: Vec<CellPredicate>,
    /// Columns removed from rows that pass (SingleColumnValueExcludeFilter), for
    /// [`Plan::output_cells`].
    pub dropped_columns: Vec<(Vec<u8>, Vec<u8>)>,
    /// KeyOnlyFilter's transform for [`Plan::output_cells`]: `Some(len_as_value)`.
    pub key_only: Option<bool>,
    /// FirstKeyOnlyFilter for [`Plan::output_cells`]: keep only a row's first cell.
    pub first_cell_only: bool,
    /// (d) Limits.
    pub limits: Limits,
    /// (e) When true, rows that survive (a)-(c) must still go through the scalar evaluator;
    /// when false, [`Plan::output_cells`] gives the exact output.
    pub needs_evaluator: bool,
}

/// How one top-level conjunct was classified.
enum Part {
    /// A stateless row-key test; `cell_level` when HBase rejects at the cell stage
    /// (FuzzyRowFilter, MultiRowRangeFilter), not at `filterRowKey`.
    RowKey {
        predicate: RowPredicate,
        ranges: KeyRanges,
        cell_level: bool,
        fuzzy: Option<Vec<FuzzyRule>>,
    },
    /// A top-level WHILE over a row-key test.
    Stop {
        predicate: RowPredicate,
        ranges: KeyRanges,
    },
    ColumnValue {
        predicate: ColumnValuePredicate,
        exclude: bool,
    },
    /// A stateless cell test; `skips_only` when its only non-include code is SKIP (ValueFilter,
    /// QualifierFilter), `next_col` when it may also skip older versions (TimestampsFilter).
    Cell {
        predicate: CellPredicate,
        skips_only: bool,
        next_col: bool,
    },
    KeyOnly(bool),
    FirstKeyOnly,
    Page(u64),
    CellLimit(u64),
    Opaque,
}

impl Plan {
    /// Compiles a filter (or no filter) for a scan. Validates the filter.
    pub fn compile(filter: Option<&Filter>, scan: &ScanRange) -> Result<Plan, ModelError> {
        let mut plan = Plan {
            ranges: scan.ranges(),
            fuzzy: None,
            fuzzy_rules: Vec::new(),
            reversed: scan.reversed,
            row_filter: None,
            stop_filter: None,
            column_filters: Vec::new(),
            cell_filter: Vec::new(),
            dropped_columns: Vec::new(),
            key_only: None,
            first_cell_only: false,
            limits: Limits::default(),
            needs_evaluator: false,
        };
        let Some(filter) = filter else {
            return Ok(plan);
        };
        filter.validate()?;
        let mut conjuncts = Vec::new();
        flatten_and(filter, &mut conjuncts);
        let parts = conjuncts
            .iter()
            .map(|c| classify(c, scan.reversed))
            .collect::<Result<Vec<_>, _>>()?;
        let stop_whiles = parts
            .iter()
            .filter(|p| matches!(p, Part::Stop { .. }))
            .count();
        let other_whiles = count_whiles(filter) > stop_whiles;
        let column_count_get = contains(filter, &|f| matches!(f, Filter::ColumnCountGet { .. }));
        // Row rejections may hide rows from other filters' row-key state only when no other
        // WHILE watches row keys; cell-stage rejections also need no cross-row cell state.
        let row_kernels_ok = !other_whiles;
        let cell_stage_ok = row_kernels_ok && !column_count_get;
        let lower_skips_ok = row_kernels_ok && stop_whiles == 0;

        let mut row_predicates = Vec::new();
        let mut stop_predicates = Vec::new();
        let mut ranges = KeyRanges::full();
        let mut used = vec![false; parts.len()];
        for (index, part) in parts.iter().enumerate() {
            match part {
                Part::RowKey {
                    predicate,
                    ranges: part_ranges,
                    cell_level,
                    fuzzy,
                } => {
                    if !(if *cell_level {
                        cell_stage_ok
                    } else {
                        row_kernels_ok
                    }) {
                        continue;
                    }
                    row_predicates.push(predicate.clone());
                    ranges = ranges.intersect(part_ranges);
                    if let Some(rules) = fuzzy
                        && lower_skips_ok
                        && !scan.reversed
                        && plan.fuzzy.is_none()
                    {
                        plan.fuzzy = Some(FuzzySet::new(rules));
                        plan.fuzzy_rules = rules.clone();
                    }
                    used[index] = true;
                }
                Part::Stop {
                    predicate,
                    ranges: part_ranges,
                } => {
                    stop_predicates.push(predicate.clone());
                    ranges = ranges.intersect(part_ranges);
                    used[index] = true;
                }
                _ => {}
            }
        }
        let mut ranges = ranges.intersect(&plan.ranges);
        if !lower_skips_ok {
            // Only the end of the ranges (in scan order) may be applied: every row before it
            // must still be seen by the WHILE filters.
            ranges = if scan.reversed {
                ranges.hull_to(scan.end.clone())
            } else {
                ranges.hull_from(scan.start.clone())
            };
        }
        plan.ranges = ranges;
        plan.row_filter = fuse(row_predicates);
        plan.stop_filter = fuse(stop_predicates);

        // (c) column value predicates: exact only when what precedes them is transparent and
        // what follows cannot hide the column from them.
        let page_anywhere = contains(filter, &|f| matches!(f, Filter::Page { .. }));
        for (index, part) in parts.iter().enumerate() {
            let Part::ColumnValue { predicate, exclude } = part else {
                continue;
            };
            let before_ok = parts[..index]
                .iter()
                .zip(&used)
                .all(|(p, used)| transparent(p, *used));
            let after_ok = parts[index + 1..]
                .iter()
                .zip(&used[index + 1..])
                .all(|(p, used)| {
                    transparent(p, *used)
                        || matches!(p, Part::Page(_))
                        || matches!(
                            p,
                            Part::Cell {
                                skips_only: true,
                                ..
                            }
                        )
                        || matches!(p, Part::Cell { next_col: true, .. })
                });
            let page_ok = !page_anywhere
                || parts[index + 1..]
                    .iter()
                    .any(|p| matches!(p, Part::Page(_)));
            let pages_before = parts[..index].iter().any(|p| matches!(p, Part::Page(_)));
            // With latestVersionOnly = false the filter sees versions only until the
            // matcher's version count is exceeded (it counts included cells), so which
            // versions it tests depends on max_versions and the other filters: left to the
            // evaluator.
            if predicate.latest_version_only
                && cell_stage_ok
                && before_ok
                && after_ok
                && page_ok
                && !pages_before
            {
                plan.column_filters.push(predicate.clone());
                if *exclude {
                    plan.dropped_columns
                        .push((predicate.family.clone(), predicate.qualifier.clone()));
                }
                used[index] = true;
            }
        }

        // (c), (d) and (e).
        let mut needs_evaluator = false;
        let mut last_column_value = None;
        for (index, part) in parts.iter().enumerate() {
            match part {
                Part::ColumnValue { .. } if used[index] => last_column_value = Some(index),
                Part::Cell { predicate, .. } => plan.cell_filter.push(predicate.clone()),
                Part::Page(size) => {
                    plan.limits.max_rows =
                        Some(plan.limits.max_rows.map_or(*size, |m| m.min(*size)));
                }
                Part::CellLimit(limit) => cap(&mut plan.limits.max_cells_per_row, *limit),
                Part::FirstKeyOnly => cap(&mut plan.limits.max_cells_per_row, 1),
                _ => {}
            }
        }
        let key_only_count = parts
            .iter()
            .filter(|p| matches!(p, Part::KeyOnly(_)))
            .count();
        let first_key_only_count = parts
            .iter()
            .filter(|p| matches!(p, Part::FirstKeyOnly))
            .count();
        for (index, part) in parts.iter().enumerate() {
            let absorbed = match part {
                Part::RowKey { .. } | Part::Stop { .. } | Part::ColumnValue { .. } => used[index],
                Part::Cell { .. } => true,
                Part::KeyOnly(len_as_value) => {
                    plan.key_only = Some(*len_as_value);
                    key_only_count == 1
                }
                Part::FirstKeyOnly => {
                    plan.first_cell_only = true;
                    first_key_only_count == 1
                        && !parts[index..]
                            .iter()
                            .any(|p| matches!(p, Part::Cell { .. }))
                }
                // A page counts rows at filterRow time: exact only after every row-level
                // filterRow decision.
                Part::Page(_) => last_column_value.is_none_or(|last| last < index),
                Part::CellLimit(_) | Part::Opaque => false,
            };
            needs_evaluator |= !absorbed;
        }
        plan.needs_evaluator = needs_evaluator;
        if needs_evaluator {
            plan.key_only = None;
            plan.first_cell_only = false;
            plan.dropped_columns.clear();
        }
        Ok(plan)
    }

    /// The one interval of row keys this plan keeps, when keeping the rows
    /// of that interval is all it does (a `PrefixFilter`, a `RowFilter` on
    /// a binary comparison, a `MultiRowRangeFilter` of one range, or an AND
    /// of them): every row inside is returned whole and unchanged, so the
    /// engine may scan just that interval without the filter.
    pub fn as_key_interval(&self) -> Option<&KeyInterval> {
        // A PrefixFilter's or a range filter's row test keeps exactly the
        // rows of its ranges, which `ranges` already intersects.
        fn exactly_ranges(predicate: &RowPredicate) -> bool {
            match predicate {
                RowPredicate::Prefix(_) | RowPredicate::Ranges(_) => true,
                RowPredicate::All(members) => members.iter().all(exactly_ranges),
                _ => false,
            }
        }
        let only_ranges = !self.needs_evaluator
            && self.fuzzy.is_none()
            && self.row_filter.as_ref().is_none_or(exactly_ranges)
            && self.stop_filter.is_none()
            && self.column_filters.is_empty()
            && self.cell_filter.is_empty()
            && self.dropped_columns.is_empty()
            && self.key_only.is_none()
            && !self.first_cell_only
            && self.limits == Limits::default();
        match self.ranges.intervals() {
            [interval] if only_ranges => Some(interval),
            _ => None,
        }
    }

    /// The interval of row keys `filter` keeps, when keeping them is all it
    /// does and that is plain without compiling a plan: a lone
    /// `PrefixFilter`, HBase's usual prefix scan. `None` says nothing (the
    /// compiled plan's [`Plan::as_key_interval`] may still find one); a
    /// `Some` is the interval that method would give for the filter alone.
    pub fn plain_key_interval(filter: &Filter) -> Option<KeyInterval> {
        match filter {
            Filter::Prefix { prefix } => Some(KeyInterval::prefix(prefix)),
            _ => None,
        }
    }

    /// The fuzzy rules used as seek hints (empty when none).
    pub fn fuzzy_rules(&self) -> &[FuzzyRule] {
        &self.fuzzy_rules
    }

    /// True when the plan was compiled for a reversed scan ([`Plan::seek`]
    /// then answers with [`Seek::Backward`]).
    pub fn reversed(&self) -> bool {
        self.reversed
    }

    /// True when some row key in `[first, last]` may be returned: a block spanning those keys
    /// can be skipped when false.
    pub fn may_contain(&self, first: &[u8], last: &[u8]) -> bool {
        self.ranges.overlaps(first, last)
            && self.fuzzy.as_ref().is_none_or(|fuzzy| {
                fuzzy
                    .first_at_or_after(first)
                    .is_some_and(|next| next.as_slice() <= last)
            })
    }

    /// Whether `row` may be returned and, if not, where the next candidate row is.
    pub fn seek(&self, row: &[u8]) -> Seek {
        if self.reversed {
            return self.seek_backward(row);
        }
        if self.fuzzy.is_none() && self.ranges.contains(row) {
            // What the loop below answers for a row inside the ranges, without copying it
            // (every row a filtered scan returns asks this).
            return Seek::Here;
        }
        let mut key = row.to_vec();
        for _ in 0..MAX_SEEK_STEPS {
            match self.ranges.position(&key) {
                RangePosition::After => return Seek::Done,
                RangePosition::Before(index) => match self
                    .ranges
                    .intervals()
                    .get(index)
                    .and_then(KeyInterval::first_row)
                {
                    Some(start) => key = start,
                    None => return Seek::Done,
                },
                RangePosition::Inside(_) => {}
            }
            let next = match &self.fuzzy {
                None => Some(key.clone()),
                Some(fuzzy) => fuzzy.first_at_or_after(&key),
            };
            match next {
                None => return Seek::Done,
                Some(next) if next == key && self.ranges.contains(&key) => {
                    return if key == row {
                        Seek::Here
                    } else {
                        Seek::Forward(key)
                    };
                }
                Some(next) => key = next,
            }
        }
        Seek::Forward(key)
    }

    fn seek_backward(&self, row: &[u8]) -> Seek {
        let previous = match self.ranges.position(row) {
            RangePosition::Inside(_) => return Seek::Here,
            RangePosition::Before(0) => return Seek::Done,
            RangePosition::Before(index) => self.ranges.intervals().get(index - 1),
            RangePosition::After => self.ranges.intervals().last(),
        };
        match previous.map(|interval| &interval.end) {
            Some(Bound::Included(key)) => Seek::Backward {
                key: key.clone(),
                inclusive: true,
            },
            Some(Bound::Excluded(key)) => Seek::Backward {
                key: key.clone(),
                inclusive: false,
            },
            Some(Bound::Unbounded) => Seek::Here,
            None => Seek::Done,
        }
    }

    /// True when a row passes the plan's row-level tests, in the order the engine applies
    /// them after the stop test: ranges and fuzzy rules, row filter, column filters.
    pub fn row_passes(&self, cells: &[CellRef<'_>]) -> bool {
        let Some(first) = cells.first() else {
            return false;
        };
        self.ranges.contains(first.row)
            && self
                .fuzzy
                .as_ref()
                .is_none_or(|fuzzy| fuzzy.satisfies(first.row))
            && self
                .row_filter
                .as_ref()
                .is_none_or(|p| p.matches(first.row))
            && self
                .column_filters
                .iter()
                .all(|c| c.row_passes_cells(cells))
    }

    /// The row's returned cells when `needs_evaluator` is false (for a row that passed the
    /// row-level tests): cells passing every cell predicate, at most `max_versions` per
    /// column, then FirstKeyOnly, dropped columns and KeyOnly. An empty result means the row
    /// is not returned.
    pub fn output_cells<'a>(
        &self,
        cells: &[CellRef<'a>],
        max_versions: u32,
    ) -> Vec<OutputCell<'a>> {
        let mut out = Vec::new();
        self.for_each_output_cell(cells, max_versions, |cell| out.push(cell));
        out
    }

    /// True when [`Plan::for_each_output_cell`] would return every one of `cells` (a row
    /// that passed the row-level tests) unchanged and in order: the plan has no cell
    /// predicates, dropped columns, KeyOnly or FirstKeyOnly, and no column of the row has
    /// more than `max_versions` versions. A scan then returns the row as it was read,
    /// without building its cells anew.
    pub fn returns_row_unchanged(&self, cells: &[CellRef<'_>], max_versions: u32) -> bool {
        let mut versions = VersionCount::default();
        self.cell_filter.is_empty()
            && self.dropped_columns.is_empty()
            && self.key_only.is_none()
            && !self.first_cell_only
            && cells.iter().all(|cell| versions.of(cell) <= max_versions)
    }

    /// [`Plan::output_cells`] without collecting them: `emit` gets each returned cell, in
    /// order (a scan writes them straight into its row). Returns how many there were.
    pub fn for_each_output_cell<'a>(
        &self,
        cells: &[CellRef<'a>],
        max_versions: u32,
        mut emit: impl FnMut(OutputCell<'a>),
    ) -> usize {
        let mut emitted = 0;
        let mut versions = VersionCount::default();
        for cell in cells {
            if !self
                .cell_filter
                .iter()
                .all(|predicate| predicate.matches(cell))
            {
                continue;
            }
            if versions.of(cell) > max_versions {
                continue;
            }
            // A dropped column's cells count their versions, and FirstKeyOnly's first cell
            // ends the row even when its column is dropped.
            let dropped = self.dropped_columns.iter().any(|(family, qualifier)| {
                cell.family == family.as_slice() && cell.qualifier == qualifier.as_slice()
            });
            if !dropped {
                let mut out = OutputCell::from(*cell);
                if let Some(len_as_value) = self.key_only {
                    out.value = if len_as_value {
                        let length = i32::try_from(cell.value.len()).unwrap_or(i32::MAX);
                        std::borrow::Cow::Owned(length.to_be_bytes().to_vec())
                    } else {
                        std::borrow::Cow::Owned(Vec::new())
                    };
                }
                emit(out);
                emitted += 1;
            }
            if self.first_cell_only {
                break;
            }
        }
        emitted
    }
}

/// Numbers the versions of each column as a row's cells go by (column by column, newest
/// version first).
#[derive(Default)]
struct VersionCount<'a> {
    column: Option<(&'a [u8], &'a [u8])>,
    versions: u32,
}

impl<'a> VersionCount<'a> {
    /// `cell`'s version in its column: 1 for the first cell of a column.
    fn of(&mut self, cell: &CellRef<'a>) -> u32 {
        if self.column != Some((cell.family, cell.qualifier)) {
            self.column = Some((cell.family, cell.qualifier));
            self.versions = 0;
        }
        self.versions = self.versions.saturating_add(1);
        self.versions
    }
}

fn cap(limit: &mut Option<u64>, value: u64) {
    *limit = Some(limit.map_or(value, |current| current.min(value)));
}

/// True when a conjunct lets every cell of a row that passes the plan through unchanged in
/// the filter protocol (it answers INCLUDE), so a later SingleColumnValueFilter sees them all.
fn transparent(part: &Part, used: bool) -> bool {
    match part {
        Part::RowKey { .. } | Part::Stop { .. } | Part::ColumnValue { .. } => used,
        Part::KeyOnly(_) => true,
        _ => false,
    }
}

/// Collects the members of top-level AND lists (nested ANDs behave as one flat AND).
fn flatten_and<'f>(filter: &'f Filter, out: &mut Vec<&'f Filter>) {
    match filter {
        Filter::List(list) if list.operator == ListOperator::MustPassAll => {
            list.filters
                .iter()
                .for_each(|member| flatten_and(member, out));
        }
        _ => out.push(filter),
    }
}

fn contains(filter: &Filter, test: &dyn Fn(&Filter) -> bool) -> bool {
    test(filter)
        || match filter {
            Filter::Skip(inner) | Filter::While(inner) => contains(inner, test),
            Filter::List(list) => list.filters.iter().any(|member| contains(member, test)),
            _ => false,
        }
}

fn count_whiles(filter: &Filter) -> usize {
    match filter {
        Filter::While(inner) => 1 + count_whiles(inner),
        Filter::Skip(inner) => count_whiles(inner),
        Filter::List(list) => list.filters.iter().map(count_whiles).sum(),
        _ => 0,
    }
}

fn fuse(mut predicates: Vec<RowPredicate>) -> Option<RowPredicate> {
    fuse_segment_ranges(&mut predicates);
    fuse_masked_equalities(&mut predicates);
    match predicates.len() {
        0 => None,
        1 => predicates.pop(),
        _ => Some(RowPredicate::All(predicates)),
    }
}

/// Pairs `RowMaskFilter(o, full mask, > or >=, a)` with `RowMaskFilter(o, full mask, < or <=, b)`
/// on the same field into one [`SegmentRange`] (the `D1 < sdate < D2` pattern).
fn fuse_segment_ranges(predicates: &mut Vec<RowPredicate>) {
    let bound_of = |predicate: &RowPredicate| -> Option<(usize, usize, bool, SegmentBound)> {
        let RowPredicate::Masked(kernel) = predicate else {
            return None;
        };
        let mask = kernel_mask(kernel);
        if !mask.mask.iter().all(|b| *b == 0xff) {
            return None;
        }
        let (low, inclusive) = match mask.op {
            CompareOp::Greater => (true, false),
            CompareOp::GreaterOrEqual => (true, true),
            CompareOp::Less => (false, false),
            CompareOp::LessOrEqual => (false, true),
            _ => return None,
        };
        Some((
            mask.offset as usize,
            mask.mask.len(),
            low,
            SegmentBound {
                value: mask.value.clone(),
                inclusive,
            },
        ))
    };
    let mut index = 0;
    while index < predicates.len() {
        let Some((offset, len, low, bound)) = bound_of(&predicates[index]) else {
            index += 1;
            continue;
        };
        let partner = (index + 1..predicates.len()).find(|other| {
            bound_of(&predicates[*other])
                .is_some_and(|(o, l, other_low, _)| o == offset && l == len && other_low != low)
        });
        if let Some(other) = partner
            && let Some((_, _, _, other_bound)) = bound_of(&predicates[other])
        {
            let (lower, upper) = if low {
                (bound, other_bound)
            } else {
                (other_bound, bound)
            };
            if let Ok(range) = SegmentRange::new(offset, Some(lower), Some(upper)) {
                predicates[index] = RowPredicate::SegmentRange(range);
                predicates.remove(other);
            }
        }
        index += 1;
    }
}

/// Fuses the `RowMaskFilter(=)`s of an AND, with the non-empty `PrefixFilter`s beside them,
/// into one [`MaskedEquals`] (the `sdate = D AND code = C` pattern), in place of the first of
/// them. An AND without a mask test is left alone: prefixes alone are exactly key ranges,
/// which [`Plan::as_key_interval`] recognizes.
fn fuse_masked_equalities(predicates: &mut Vec<RowPredicate>) {
    let part_of = |predicate: &RowPredicate| -> Option<(RowMask, bool)> {
        match predicate {
            RowPredicate::Masked(kernel) if kernel_mask(kernel).op == CompareOp::Equal => {
                Some((kernel_mask(kernel).clone(), true))
            }
            RowPredicate::Prefix(kernel) if !kernel.prefix().is_empty() => Some((
                RowMask {
                    offset: 0,
                    mask: vec![0xff; kernel.prefix().len()],
                    op: CompareOp::Equal,
                    value: kernel.prefix().to_vec(),
                },
                false,
            )),
            _ => None,
        }
    };
    let parts: Vec<(usize, RowMask, bool)> = predicates
        .iter()
        .enumerate()
        .filter_map(|(index, predicate)| {
            part_of(predicate).map(|(mask, masked)| (index, mask, masked))
        })
        .collect();
    if parts.len() < 2 || !parts.iter().any(|(_, _, masked)| *masked) {
        return;
    }
    let masks: Vec<RowMask> = parts.iter().map(|(_, mask, _)| mask.clone()).collect();
    let Ok(fused) = MaskedEquals::new(&masks) else {
        return;
    };
    let first = parts[0].0;
    for (index, _, _) in parts.iter().skip(1).rev() {
        predicates.remove(*index);
    }
    predicates[first] = RowPredicate::MaskedEquals(fused);
}

fn kernel_mask(kernel: &MaskedCompare) -> &RowMask {
    kernel.row_mask()
}

/// Key ranges implied by a row comparison `row op comparator`.
fn comparator_ranges(op: CompareOp, comparator: &Comparator) -> KeyRanges {
    let interval = |start, end| KeyRanges::from_intervals(vec![KeyInterval { start, end }]);
    match comparator {
        Comparator::Binary(value) => match op {
            CompareOp::Less => interval(Bound::Unbounded, Bound::Excluded(value.clone())),
            CompareOp::LessOrEqual => interval(Bound::Unbounded, Bound::Included(value.clone())),
            CompareOp::Equal => interval(
                Bound::Included(value.clone()),
                Bound::Included(value.clone()),
            ),
            CompareOp::GreaterOrEqual => interval(Bound::Included(value.clone()), Bound::Unbounded),
            CompareOp::Greater => interval(Bound::Excluded(value.clone()), Bound::Unbounded),
            CompareOp::NotEqual => KeyRanges::full(),
            CompareOp::NoOp => KeyRanges::empty(),
        },
        Comparator::BinaryPrefix(value) => prefix_op_ranges(op, value),
        _ if op == CompareOp::NoOp => KeyRanges::empty(),
        _ => KeyRanges::full(),
    }
}

/// Key ranges of `row[..len] op value` (rows shorter than `value` compare whole).
fn prefix_op_ranges(op: CompareOp, value: &[u8]) -> KeyRanges {
    let interval = |start, end| KeyRanges::from_intervals(vec![KeyInterval { start, end }]);
    let after_prefix = || match prefix_successor(value) {
        Some(successor) => Bound::Excluded(successor),
        None => Bound::Unbounded,
    };
    match op {
        CompareOp::Equal => KeyRanges::from_intervals(vec![KeyInterval::prefix(value)]),
        CompareOp::Less => interval(Bound::Unbounded, Bound::Excluded(value.to_vec())),
        CompareOp::LessOrEqual => interval(Bound::Unbounded, after_prefix()),
        CompareOp::GreaterOrEqual => interval(Bound::Included(value.to_vec()), Bound::Unbounded),
        CompareOp::Greater => match prefix_successor(value) {
            Some(successor) => interval(Bound::Included(successor), Bound::Unbounded),
            None => KeyRanges::empty(),
        },
        CompareOp::NotEqual => KeyRanges::full(),
        CompareOp::NoOp => KeyRanges::empty(),
    }
}

/// Key ranges implied by a RowMaskFilter: only a mask starting at offset 0 narrows the keys.
fn mask_ranges(mask: &RowMask) -> KeyRanges {
    if mask.offset != 0 {
        return KeyRanges::full();
    }
    let full_run = mask.mask.iter().take_while(|b| **b == 0xff).count();
    if full_run == mask.mask.len() {
        // Rows shorter than the field never pass, so prefix ranges are supersets.
        prefix_op_ranges(mask.op, &mask.value)
    } else if mask.op == CompareOp::Equal && full_run > 0 {
        KeyRanges::from_intervals(vec![KeyInterval::prefix(&mask.value[..full_run])])
    } else {
        KeyRanges::full()
    }
}

/// Key ranges a fuzzy rule's leading fixed bytes imply. Rows shorter than the fixed run can
/// match on their own length (HBase compares `min(row, key)` bytes), so the range starts at
/// the first fixed byte alone.
fn fuzzy_ranges(rules: &[FuzzyRule]) -> KeyRanges {
    let intervals = rules
        .iter()
        .map(|rule| {
            let run = rule.mask.iter().take_while(|m| **m == 0).count();
            if run == 0 {
                return KeyInterval::full();
            }
            let end = match prefix_successor(&rule.key[..run]) {
                Some(successor) => Bound::Excluded(successor),
                None => Bound::Unbounded,
            };
            KeyInterval {
                start: Bound::Included(rule.key[..1].to_vec()),
                end,
            }
        })
        .collect();
    KeyRanges::from_intervals(intervals)
}

/// A row-key test that needs no state beyond the row: `(predicate, ranges, cell_level,
/// fuzzy rules)`.
fn row_key_test(filter: &Filter, reversed: bool) -> Result<Option<Part>, ModelError> {
    let part = |predicate, ranges, cell_level, fuzzy| {
        Some(Part::RowKey {
            predicate,
            ranges,
            cell_level,
            fuzzy,
        })
    };
    Ok(match filter {
        Filter::Row { op, comparator } => part(
            RowPredicate::Compare(ComparatorKernel::new(*op, comparator)?),
            comparator_ranges(*op, comparator),
            false,
            None,
        ),
        Filter::Prefix { prefix } => part(
            RowPredicate::Prefix(PrefixKernel::new(prefix)),
            KeyRanges::from_intervals(vec![KeyInterval::prefix(prefix)]),
            false,
            None,
        ),
        Filter::RowMask(mask) => part(
            RowPredicate::Masked(MaskedCompare::new(mask)?),
            mask_ranges(mask),
            false,
            None,
        ),
        Filter::InclusiveStop { stop_row } => {
            let (op, interval) = if reversed {
                (
                    CompareOp::GreaterOrEqual,
                    KeyInterval {
                        start: Bound::Included(stop_row.clone()),
                        end: Bound::Unbounded,
                    },
                )
            } else {
                (
                    CompareOp::LessOrEqual,
                    KeyInterval {
                        start: Bound::Unbounded,
                        end: Bound::Included(stop_row.clone()),
                    },
                )
            };
            part(
                RowPredicate::Compare(ComparatorKernel::Binary(BinaryCompare::new(op, stop_row))),
                KeyRanges::from_intervals(vec![interval]),
                false,
                None,
            )
        }
        Filter::MultiRowRange { ranges } => {
            let set =
                KeyRanges::from_intervals(ranges.iter().map(KeyInterval::from_row_range).collect());
            part(
                RowPredicate::Ranges(RangesKernel::new(set.clone())),
                set,
                true,
                None,
            )
        }
        Filter::FuzzyRow { rules } => part(
            RowPredicate::Fuzzy(FuzzyKernel::new(rules)?),
            fuzzy_ranges(rules),
            true,
            Some(rules.clone()),
        ),
        Filter::List(list) => {
            let mut members = Vec::with_capacity(list.filters.len());
            for member in &list.filters {
                match row_key_test(member, reversed)? {
                    Some(Part::RowKey {
                        predicate,
                        ranges,
                        cell_level,
                        ..
                    }) => members.push((predicate, ranges, cell_level)),
                    _ => return Ok(None),
                }
            }
            let cell_level = members.iter().any(|(_, _, cell_level)| *cell_level);
            let (predicates, ranges): (Vec<_>, Vec<_>) =
                members.into_iter().map(|(p, r, _)| (p, r)).unzip();
            match list.operator {
                ListOperator::MustPassAll => {
                    let ranges = ranges
                        .iter()
                        .fold(KeyRanges::full(), |all, r| all.intersect(r));
                    part(RowPredicate::All(predicates), ranges, cell_level, None)
                }
                ListOperator::MustPassOne => {
                    let ranges = ranges
                        .iter()
                        .fold(KeyRanges::empty(), |any, r| any.union(r));
                    part(RowPredicate::Any(predicates), ranges, cell_level, None)
                }
            }
        }
        _ => None,
    })
}

fn comparator_kernel(
    op: CompareOp,
    comparator: &Comparator,
) -> Result<ComparatorKernel, ModelError> {
    ComparatorKernel::new(op, comparator)
}

fn classify(filter: &Filter, reversed: bool) -> Result<Part, ModelError> {
    if let Some(part) = row_key_test(filter, reversed)? {
        return Ok(part);
    }
    Ok(match filter {
        Filter::While(inner) => match row_key_test(inner, reversed)? {
            Some(Part::RowKey {
                predicate,
                ranges,
                cell_level: false,
                ..
            }) => Part::Stop { predicate, ranges },
            _ => Part::Opaque,
        },
        Filter::SingleColumnValue(test) | Filter::SingleColumnValueExclude(test) => {
            Part::ColumnValue {
                predicate: ColumnValuePredicate {
                    family: test.family.clone(),
                    qualifier: test.qualifier.clone(),
                    kernel: comparator_kernel(test.op, &test.comparator)?,
                    latest_version_only: test.latest_version_only,
                    filter_if_missing: test.filter_if_missing,
                },
                exclude: matches!(filter, Filter::SingleColumnValueExclude(_)),
            }
        }
        Filter::Value { op, comparator } => Part::Cell {
            predicate: CellPredicate::Value(comparator_kernel(*op, comparator)?),
            skips_only: true,
            next_col: false,
        },
        // ColumnValueFilter's NEXT_COL and NEXT_ROW only skip cells it rejects anyway, but
        // they hide cells from filters that look at every cell (a SingleColumnValueFilter
        // after it): neither flag.
        Filter::ColumnValue {
            family,
            qualifier,
            op,
            comparator,
        } => Part::Cell {
            predicate: CellPredicate::ColumnValue {
                family: family.clone(),
                qualifier: qualifier.clone(),
                kernel: comparator_kernel(*op, comparator)?,
            },
            skips_only: false,
            next_col: false,
        },
        Filter::Qualifier { op, comparator } => Part::Cell {
            predicate: CellPredicate::Qualifier(comparator_kernel(*op, comparator)?),
            skips_only: true,
            next_col: false,
        },
        Filter::Family { op, comparator } => Part::Cell {
            predicate: CellPredicate::Family(comparator_kernel(*op, comparator)?),
            skips_only: false,
            next_col: false,
        },
        Filter::Timestamps { timestamps } => {
            let mut sorted = timestamps.clone();
            sorted.sort_unstable();
            sorted.dedup();
            Part::Cell {
                predicate: CellPredicate::Timestamps(sorted),
                skips_only: false,
                next_col: true,
            }
        }
        Filter::ColumnPrefix { prefix } => Part::Cell {
            predicate: CellPredicate::ColumnPrefix(prefix.clone()),
            skips_only: false,
            next_col: false,
        },
        Filter::MultipleColumnPrefix { prefixes } => {
            let mut sorted = prefixes.clone();
            sorted.sort();
            Part::Cell {
                predicate: CellPredicate::MultipleColumnPrefix(sorted),
                skips_only: false,
                next_col: false,
            }
        }
        Filter::ColumnRange {
            min,
            min_inclusive,
            max,
            max_inclusive,
        } => Part::Cell {
            predicate: CellPredicate::ColumnRange {
                min: min.clone(),
                min_inclusive: *min_inclusive,
                max: max.clone(),
                max_inclusive: *max_inclusive,
            },
            skips_only: false,
            next_col: false,
        },
        Filter::KeyOnly { len_as_value } => Part::KeyOnly(*len_as_value),
        Filter::FirstKeyOnly => Part::FirstKeyOnly,
        Filter::Page { page_size } => Part::Page(*page_size),
        Filter::ColumnPagination { limit, .. } => Part::CellLimit(u64::from(*limit)),
        Filter::ColumnCountGet { limit } => Part::CellLimit(u64::from(*limit)),
        _ => Part::Opaque,
    })
}
