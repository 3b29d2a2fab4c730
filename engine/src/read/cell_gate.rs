//! Cell and column predicates pushed below the filter stage.
//!
//! When a filter's plan decides a row only through cell predicates
//! (`ValueFilter`, `QualifierFilter`, `FamilyFilter`, `ColumnPrefixFilter`,
//! `TimestampsFilter`, column ranges, in any AND) and needs neither the
//! scalar evaluator nor a column-value test on the row's unfiltered cells,
//! a cell failing a predicate can never be returned and nothing else looks
//! at it: `Plan::output_cells` drops such cells before it counts versions.
//! The region scanner then leaves those cells out of the row as it
//! resolves it, so a row none of whose visible cells pass ends there,
//! without reaching the filter stage. For a row read straight from a cached
//! block, the predicates run once per block as kernels over the block's
//! value, qualifier and timestamp columns into a selection bitmap
//! ([`CellGate::block_selection`]); [`CellGate::block_cells_scalar`], a test
//! per cell, is its twin.
//!
//! When the plan's rows are decided by column value tests
//! (`SingleColumnValueFilter`: the newest visible version of one column, or
//! any version, and whether a row without the column passes), the gate
//! tracks each test while the row resolves ([`RowVerdict`]) and drops a row
//! that fails before it reaches the filter stage, which decides the rows
//! that pass exactly as before. Over a cached block the value comparisons
//! run once per block as kernels into one bitmap per test; the row then
//! looks up the bit of the column's first visible cell. Such a plan keeps
//! its cell predicates in the filter stage: a column test must see every
//! visible cell, including those a cell predicate would drop.

use smallvec::SmallVec;
use strata_filters::kernels::{BinaryCompare, Kernel, PrefixKernel, TimestampsKernel};
use strata_filters::model::CompareOp;
use strata_filters::plan::{CellPredicate, ColumnValuePredicate};
use strata_filters::{Bitmap, CellRef as FilterCell, Plan};

use crate::cell::{CellRef, bytes_equal};
use crate::iter::block_row::BlockRef;

/// The cell predicates or column value tests of a plan that may be applied
/// before the filter stage.
#[derive(Debug)]
pub(crate) struct CellGate {
    /// Cell predicates that drop cells (only when `columns` is empty).
    predicates: Vec<CellPredicate>,
    /// Each predicate's block kernel, where one applies beyond the value
    /// and qualifier comparators the predicate holds itself.
    kernels: Vec<Option<BlockKernel>>,
    /// Column value tests that reject rows.
    columns: Vec<ColumnValuePredicate>,
}

/// A kernel a cell predicate runs over a block's columns.
#[derive(Debug)]
enum BlockKernel {
    /// `ColumnPrefixFilter` over the qualifiers.
    QualifierPrefix(PrefixKernel),
    /// `ColumnRangeFilter` over the qualifiers: lower and upper bound tests.
    QualifierRange(Option<BinaryCompare>, Option<BinaryCompare>),
    /// `TimestampsFilter` over the timestamps.
    Timestamps(TimestampsKernel),
}

impl BlockKernel {
    fn for_predicate(predicate: &CellPredicate) -> Option<BlockKernel> {
        match predicate {
            CellPredicate::ColumnPrefix(prefix) => {
                Some(BlockKernel::QualifierPrefix(PrefixKernel::new(prefix)))
            }
            CellPredicate::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => {
                let bound = |value: &Vec<u8>, op: CompareOp| {
                    (!value.is_empty()).then(|| BinaryCompare::new(op, value))
                };
                let low = bound(
                    min,
                    if *min_inclusive {
                        CompareOp::GreaterOrEqual
                    } else {
                        CompareOp::Greater
                    },
                );
                let high = bound(
                    max,
                    if *max_inclusive {
                        CompareOp::LessOrEqual
                    } else {
                        CompareOp::Less
                    },
                );
                Some(BlockKernel::QualifierRange(low, high))
            }
            CellPredicate::Timestamps(wanted) => {
                Some(BlockKernel::Timestamps(TimestampsKernel::new(wanted)))
            }
            _ => None,
        }
    }
}

/// What the gate computed for one cached block: the cells passing every
/// cell predicate, and per column test the cells in its column whose value
/// passes its comparator (`None`: a block of another family).
#[derive(Debug, Default)]
pub(crate) struct BlockSelection {
    pub(crate) cells: Option<Bitmap>,
    columns: SmallVec<[Option<Bitmap>; 2]>,
    /// For a gate of column tests: the cells of one test's column (of a
    /// test that rejects rows missing the column) whose value passes it.
    /// A row holding none of them fails that test whatever its versions
    /// (its newest visible version of the column fails, or it has none),
    /// so a scan skips such rows without resolving them.
    tested_cells: Option<Bitmap>,
}

impl BlockSelection {
    /// The cells a row of the block needs one of to return anything (`None`:
    /// no such bound, every row is resolved): the cells passing every cell
    /// predicate, or the passing cells of a column test's column.
    #[inline]
    pub(crate) fn rows_need(&self) -> Option<&Bitmap> {
        self.cells.as_ref().or(self.tested_cells.as_ref())
    }
}

/// The state of each column test in the row being resolved.
#[derive(Debug, Default)]
pub(crate) struct RowVerdict {
    tests: SmallVec<[ColumnState; 2]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColumnState {
    /// No visible cell of the column yet.
    Unseen,
    /// The test's outcome on the column's newest visible version.
    Seen(bool),
}

impl CellGate {
    /// The gate for `plan`, when its rows are decided by cell predicates
    /// alone or by column value tests (and no evaluator).
    pub(crate) fn for_plan(plan: &Plan) -> Option<CellGate> {
        // A stop filter must see every visible row, even one the gate
        // would end early.
        if plan.needs_evaluator || plan.stop_filter.is_some() {
            return None;
        }
        if plan.column_filters.is_empty() {
            (!plan.cell_filter.is_empty()).then(|| CellGate {
                kernels: plan
                    .cell_filter
                    .iter()
                    .map(BlockKernel::for_predicate)
                    .collect(),
                predicates: plan.cell_filter.clone(),
                columns: Vec::new(),
            })
        } else {
            Some(CellGate {
                predicates: Vec::new(),
                kernels: Vec::new(),
                columns: plan.column_filters.clone(),
            })
        }
    }

    /// True when the gate tests rows by column values.
    pub(crate) fn has_column_tests(&self) -> bool {
        !self.columns.is_empty()
    }

    /// True when `cell` of `family` passes every cell predicate.
    #[inline]
    pub(crate) fn matches(&self, family: &[u8], cell: &CellRef<'_>) -> bool {
        if self.predicates.is_empty() {
            return true;
        }
        let cell = FilterCell {
            row: cell.row,
            family,
            qualifier: cell.qualifier,
            timestamp: cell.timestamp,
            value: cell.value,
        };
        self.predicates.iter().all(|p| p.matches(&cell))
    }

    /// Starts a row: no column seen.
    pub(crate) fn begin_row(&self, verdict: &mut RowVerdict) {
        verdict.tests.clear();
        verdict
            .tests
            .resize(self.columns.len(), ColumnState::Unseen);
    }

    /// Notes a visible cell of `family` (one the resolver returns, in store
    /// order: a column's newest version first), with `passes(k)` telling
    /// whether its value passes column test `k` (asked only for the first
    /// cell of the test's column).
    #[inline]
    fn note(
        &self,
        family: &[u8],
        qualifier: &[u8],
        verdict: &mut RowVerdict,
        mut passes: impl FnMut(usize) -> bool,
    ) {
        for (k, (test, state)) in self
            .columns
            .iter()
            .zip(verdict.tests.iter_mut())
            .enumerate()
        {
            if test.family.as_slice() != family || test.qualifier.as_slice() != qualifier {
                continue;
            }
            // The newest visible version decides (the plan gives the gate
            // latest-version tests only; any-version ones go to the evaluator).
            if *state == ColumnState::Unseen {
                *state = ColumnState::Seen(passes(k));
            }
        }
    }

    /// Notes a visible cell from the merge (its value tested here).
    #[inline]
    pub(crate) fn note_cell(&self, family: &[u8], cell: &CellRef<'_>, verdict: &mut RowVerdict) {
        if self.columns.is_empty() {
            return;
        }
        self.note(family, cell.qualifier, verdict, |k| {
            self.columns
                .get(k)
                .is_some_and(|test| test.kernel.matches(cell.value))
        });
    }

    /// Notes visible cell `index` of a cached block, whose value tests ran
    /// over the block into `selection`.
    #[inline]
    pub(crate) fn note_block_cell(
        &self,
        family: &[u8],
        selection: &BlockSelection,
        index: usize,
        cell: &CellRef<'_>,
        verdict: &mut RowVerdict,
    ) {
        if self.columns.is_empty() {
            return;
        }
        self.note(family, cell.qualifier, verdict, |k| {
            selection
                .columns
                .get(k)
                .and_then(Option::as_ref)
                .is_some_and(|bits| bits.get(index))
        });
    }

    /// True when the row passes every column test (a row without a visible
    /// cell of a column passes unless its test filters rows missing it).
    pub(crate) fn row_passes(&self, verdict: &RowVerdict) -> bool {
        self.columns
            .iter()
            .zip(&verdict.tests)
            .all(|(test, state)| match state {
                ColumnState::Unseen => !test.filter_if_missing,
                ColumnState::Seen(passed) => *passed,
            })
    }

    /// What the gate computes once per cached block of `family`.
    pub(crate) fn block_selection(&self, family: &[u8], block: BlockRef<'_>) -> BlockSelection {
        let columns: SmallVec<[Option<Bitmap>; 2]> = self
            .columns
            .iter()
            .map(|test| {
                (test.family.as_slice() == family).then(|| {
                    let mut bits = Bitmap::zeros(0);
                    match block.value_batch() {
                        Some(values) => test.kernel.eval(&values, &mut bits),
                        None => {
                            bits = Bitmap::from_bools(
                                block.cells().map(|cell| test.kernel.matches(cell.value)),
                            )
                        }
                    }
                    bits
                })
            })
            .collect();
        // One test that rejects rows missing its column bounds the rows that
        // can pass: those holding a passing cell of the column.
        let tested_cells = self
            .columns
            .iter()
            .zip(&columns)
            .find_map(|(test, bits)| match bits {
                Some(bits) if test.filter_if_missing => Some((test, bits)),
                _ => None,
            })
            .map(|(test, passing)| {
                // Only the passing cells' qualifiers are compared: a selective
                // test passes few cells, and the others are clear already.
                let mut in_column = passing.clone();
                for cell in passing.iter_ones() {
                    if !bytes_equal(block.qualifier(cell), &test.qualifier) {
                        in_column.set(cell, false);
                    }
                }
                in_column
            });
        BlockSelection {
            cells: (!self.predicates.is_empty()).then(|| self.block_cells(family, block)),
            columns,
            tested_cells,
        }
    }

    /// The cells of `block` (of `family`) that pass every cell predicate,
    /// one bit per cell: value, qualifier and timestamp tests run as
    /// kernels over the block's columns; the others test each cell.
    pub(crate) fn block_cells(&self, family: &[u8], block: BlockRef<'_>) -> Bitmap {
        let mut selected = Bitmap::ones(block.cell_count());
        let mut scratch = Bitmap::zeros(0);
        let mut timestamps = Vec::new();
        for (predicate, kernel) in self.predicates.iter().zip(&self.kernels) {
            let evaluated = match (predicate, kernel) {
                (_, Some(BlockKernel::QualifierPrefix(prefix))) => {
                    block.qualifier_batch().map(|qualifiers| {
                        prefix.eval(&qualifiers, &mut scratch);
                    })
                }
                (_, Some(BlockKernel::QualifierRange(low, high))) => {
                    block.qualifier_batch().map(|qualifiers| {
                        scratch = Bitmap::ones(qualifiers.len());
                        let mut bound = Bitmap::zeros(0);
                        for test in [low, high].into_iter().flatten() {
                            test.eval(&qualifiers, &mut bound);
                            scratch.and_assign(&bound);
                        }
                    })
                }
                (_, Some(BlockKernel::Timestamps(kernel))) => {
                    block.timestamps_into(&mut timestamps);
                    kernel.eval(&timestamps, &mut scratch);
                    Some(())
                }
                (CellPredicate::Value(kernel), None) => block.value_batch().map(|values| {
                    kernel.eval(&values, &mut scratch);
                }),
                // ColumnValueFilter: a block of another family has none of the column's
                // cells; otherwise the value kernel, then the qualifier.
                (
                    CellPredicate::ColumnValue {
                        family: wanted,
                        qualifier,
                        kernel,
                    },
                    None,
                ) => {
                    if wanted.as_slice() != family {
                        scratch = Bitmap::zeros(block.cell_count());
                        Some(())
                    } else {
                        block.value_batch().zip(block.qualifier_batch()).map(
                            |(values, qualifiers)| {
                                kernel.eval(&values, &mut scratch);
                                for i in 0..qualifiers.len() {
                                    if qualifiers.get(i) != qualifier.as_slice() {
                                        scratch.set(i, false);
                                    }
                                }
                            },
                        )
                    }
                }
                (CellPredicate::Qualifier(kernel), None) => {
                    block.qualifier_batch().map(|qualifiers| {
                        kernel.eval(&qualifiers, &mut scratch);
                        // HBase's QualifierFilter passes the empty qualifier.
                        for i in 0..qualifiers.len() {
                            if qualifiers.get(i).is_empty() {
                                scratch.set(i, true);
                            }
                        }
                    })
                }
                _ => None,
            };
            if evaluated.is_none() || scratch.len() != selected.len() {
                scratch = self.one_predicate_per_cell(predicate, family, block);
            }
            selected.and_assign(&scratch);
        }
        selected
    }

    /// [`CellGate::block_cells`]'s scalar twin: every predicate on every cell.
    #[cfg(test)]
    pub(crate) fn block_cells_scalar(&self, family: &[u8], block: BlockRef<'_>) -> Bitmap {
        Bitmap::from_bools(block.cells().map(|cell| self.matches(family, &cell)))
    }

    fn one_predicate_per_cell(
        &self,
        predicate: &CellPredicate,
        family: &[u8],
        block: BlockRef<'_>,
    ) -> Bitmap {
        Bitmap::from_bools(block.cells().map(|cell| {
            predicate.matches(&FilterCell {
                row: cell.row,
                family,
                qualifier: cell.qualifier,
                timestamp: cell.timestamp,
                value: cell.value,
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::CellKind;
    use crate::hfile::data_block::{DataBlock, DataBlockBuilder};
    use proptest::prelude::*;
    use std::sync::Arc;
    use strata_filters::ScanRange;

    type Owned = (Vec<u8>, Vec<u8>, i64, Vec<u8>);

    /// Cells in store order: rows of one or more cells (a row may have
    /// several qualifiers and versions), values of one length or many.
    fn block_cells() -> impl Strategy<Value = Vec<Owned>> {
        proptest::collection::vec(
            (
                proptest::collection::vec(b'a'..b'e', 1..3),
                prop_oneof![
                    Just(Vec::new()),
                    proptest::collection::vec(b'p'..b's', 1..3)
                ],
                0i64..6,
                prop_oneof![
                    proptest::collection::vec(b'0'..=b'9', 4..5),
                    proptest::collection::vec(b'0'..=b'9', 0..7)
                ],
            ),
            0..60,
        )
        .prop_map(|mut cells| {
            cells.sort_by(|a, b| {
                (&a.0, &a.1, std::cmp::Reverse(a.2)).cmp(&(&b.0, &b.1, std::cmp::Reverse(b.2)))
            });
            cells.dedup_by(|a, b| (&a.0, &a.1, a.2) == (&b.0, &b.1, b.2));
            cells
        })
    }

    fn block_of(cells: &[Owned]) -> Option<Arc<DataBlock>> {
        if cells.is_empty() {
            return None;
        }
        let mut builder = DataBlockBuilder::default();
        for (row, qualifier, timestamp, value) in cells {
            builder.add(&CellRef {
                row,
                qualifier,
                timestamp: *timestamp,
                kind: CellKind::Put,
                sequence: 1,
                value,
            });
        }
        Some(Arc::new(
            DataBlock::decode(builder.finish_block(false)).unwrap(),
        ))
    }

    fn gate(filter: &str) -> CellGate {
        let filter = strata_filters::parse(filter).unwrap();
        let range = ScanRange {
            start: std::ops::Bound::Unbounded,
            end: std::ops::Bound::Unbounded,
            reversed: false,
        };
        let plan = Plan::compile(Some(&filter), &range).unwrap();
        CellGate::for_plan(&plan).unwrap()
    }

    const FILTERS: &[&str] = &[
        "ValueFilter(=, 'binary:1234')",
        "ValueFilter(>=, 'binary:5')",
        "ValueFilter(=, 'binaryprefix:12')",
        "ValueFilter(!=, 'substring:3')",
        "ValueFilter(=, 'regexstring:^[0-4]+$')",
        "QualifierFilter(=, 'binary:q')",
        "QualifierFilter(<, 'binary:qr')",
        "ColumnPrefixFilter('q')",
        "TimestampsFilter(1, 3, 5)",
        "ValueFilter(=, 'binaryprefix:1') AND QualifierFilter(>=, 'binary:q') AND TimestampsFilter(0, 2, 4)",
        "FamilyFilter(=, 'binary:f') AND ColumnPrefixFilter('r')",
        "ColumnValueFilter('f', 'q', >=, 'binary:5')",
        "ColumnValueFilter('f', 'p', =, 'binaryprefix:12')",
        "ColumnValueFilter('g', 'q', !=, 'binary:1234')",
    ];

    proptest! {
        #[test]
        fn block_kernels_agree_with_their_scalar_twin(cells in block_cells(), which in 0..FILTERS.len()) {
            let gate = gate(FILTERS[which]);
            if let Some(block) = block_of(&cells) {
                let fast = gate.block_cells("f".as_bytes(), BlockRef::new(&block));
                let twin = gate.block_cells_scalar(b"f", BlockRef::new(&block));
                prop_assert_eq!(fast.len(), block.cells());
                prop_assert_eq!(&fast, &twin, "{}", FILTERS[which]);
            }
        }
    }

    #[test]
    fn a_single_row_block_and_a_block_of_one_wide_row() {
        let one = vec![(b"r".to_vec(), b"q".to_vec(), 1, b"1234".to_vec())];
        let wide: Vec<Owned> = (0..50)
            .map(|i| {
                (
                    b"r".to_vec(),
                    format!("q{i:02}").into_bytes(),
                    1,
                    format!("{i}").into_bytes(),
                )
            })
            .collect();
        for cells in [one, wide] {
            let block = block_of(&cells).unwrap();
            for filter in FILTERS {
                let gate = gate(filter);
                assert_eq!(
                    gate.block_cells(b"f", BlockRef::new(&block)),
                    gate.block_cells_scalar(b"f", BlockRef::new(&block)),
                    "{filter}"
                );
            }
        }
    }

    const COLUMN_FILTERS: &[&str] = &[
        "SingleColumnValueFilter('f', 'q', =, 'binary:1234')",
        "SingleColumnValueFilter('f', 'p', >=, 'binaryprefix:5', true, true)",
        "SingleColumnValueFilter('f', 'q', !=, 'substring:3', false, true)",
        "SingleColumnValueFilter('g', 'q', =, 'regexstring:^[0-4]+$', true, true)",
        "SingleColumnValueFilter('f', 'q', <, 'binary:5') AND ValueFilter(=, 'substring:1')",
    ];

    proptest! {
        /// A column test's bits over a block are its comparator on each
        /// cell's value (for a block of its family; none otherwise): the
        /// kernel path agrees with testing every cell's value.
        #[test]
        fn column_tests_over_a_block_agree_with_each_value(cells in block_cells(), which in 0..COLUMN_FILTERS.len()) {
            let filter = strata_filters::parse(COLUMN_FILTERS[which]).unwrap();
            let range = ScanRange {
                start: std::ops::Bound::Unbounded,
                end: std::ops::Bound::Unbounded,
                reversed: false,
            };
            let plan = Plan::compile(Some(&filter), &range).unwrap();
            let gate = CellGate::for_plan(&plan).unwrap();
            prop_assert!(gate.has_column_tests());
            if let Some(block) = block_of(&cells) {
                let selection = gate.block_selection(b"f", BlockRef::new(&block));
                prop_assert!(selection.cells.is_none(), "cell predicates stay in the stage");
                for (test, bits) in gate.columns.iter().zip(&selection.columns) {
                    match bits {
                        None => prop_assert_ne!(test.family.as_slice(), b"f"),
                        Some(bits) => {
                            let twin = Bitmap::from_bools(
                                BlockRef::new(&block).cells().map(|cell| test.kernel.matches(cell.value)),
                            );
                            prop_assert_eq!(bits, &twin);
                        }
                    }
                }
                // The cells a row needs: the first test that rejects rows missing its
                // column, of this family: its column's cells whose value passes.
                let bounding = gate
                    .columns
                    .iter()
                    .find(|test| test.filter_if_missing && test.family.as_slice() == b"f");
                let want = bounding.map(|test| {
                    Bitmap::from_bools(BlockRef::new(&block).cells().map(|cell| {
                        cell.qualifier == test.qualifier.as_slice() && test.kernel.matches(cell.value)
                    }))
                });
                prop_assert_eq!(selection.rows_need(), want.as_ref());
            }
        }
    }

    /// The newest visible version decides; a row without the column passes
    /// unless the test filters rows missing it.
    #[test]
    fn row_verdicts_follow_hbase_s_single_column_value_rules() {
        let range = ScanRange {
            start: std::ops::Bound::Unbounded,
            end: std::ops::Bound::Unbounded,
            reversed: false,
        };
        let gate = |filter: &str| {
            let filter = strata_filters::parse(filter).unwrap();
            CellGate::for_plan(&Plan::compile(Some(&filter), &range).unwrap()).unwrap()
        };
        let cell = |qualifier: &'static [u8], value: &'static [u8]| CellRef {
            row: b"r",
            qualifier,
            timestamp: 1,
            kind: CellKind::Put,
            sequence: 1,
            value,
        };
        let verdict_of = |gate: &CellGate, cells: &[CellRef<'_>]| {
            let mut verdict = RowVerdict::default();
            gate.begin_row(&mut verdict);
            for c in cells {
                gate.note_cell(b"f", c, &mut verdict);
            }
            gate.row_passes(&verdict)
        };
        let latest = gate("SingleColumnValueFilter('f', 'q', =, 'binary:new')");
        assert!(verdict_of(
            &latest,
            &[cell(b"q", b"new"), cell(b"q", b"old")]
        ));
        assert!(!verdict_of(
            &latest,
            &[cell(b"q", b"old"), cell(b"q", b"new")]
        ));
        assert!(
            verdict_of(&latest, &[cell(b"p", b"x")]),
            "missing column passes"
        );
        // (A test of any version is left to the evaluator: the plan never
        // gives the gate one.)
        let required = gate("SingleColumnValueFilter('f', 'q', =, 'binary:new', true, true)");
        assert!(
            !verdict_of(&required, &[cell(b"p", b"new")]),
            "missing column fails"
        );
        assert!(verdict_of(
            &required,
            &[cell(b"p", b"x"), cell(b"q", b"new")]
        ));
        let other_family = gate("SingleColumnValueFilter('g', 'q', =, 'binary:new', true, true)");
        assert!(!verdict_of(&other_family, &[cell(b"q", b"new")]));
    }

    #[test]
    fn plans_that_need_the_row_do_not_get_a_gate() {
        let range = ScanRange {
            start: std::ops::Bound::Unbounded,
            end: std::ops::Bound::Unbounded,
            reversed: false,
        };
        for filter in [
            "ValueFilter(=, 'binary:1') OR QualifierFilter(=, 'binary:q')",
            "PrefixFilter('a')",
            "WHILE ValueFilter(=, 'binary:1')",
            "WHILE PrefixFilter('a') AND ValueFilter(=, 'binary:1')",
        ] {
            let filter = strata_filters::parse(filter).unwrap();
            let plan = Plan::compile(Some(&filter), &range).unwrap();
            assert!(CellGate::for_plan(&plan).is_none(), "{filter:?}");
        }
    }
}
