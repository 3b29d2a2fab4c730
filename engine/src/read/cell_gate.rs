//! Cell predicates pushed below the filter stage.
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
//! value and qualifier columns into a selection bitmap
//! ([`CellGate::block_cells`]); [`CellGate::block_cells_scalar`], a test per
//! cell, is its twin.

use strata_filters::kernels::Kernel;
use strata_filters::plan::CellPredicate;
use strata_filters::{Bitmap, CellRef as FilterCell, Plan};

use crate::cell::CellRef;
use crate::hfile::data_block::{DataBlock, Position};

/// The cell predicates of a plan that may be applied before the filter stage.
#[derive(Debug)]
pub(crate) struct CellGate {
    predicates: Vec<CellPredicate>,
}

impl CellGate {
    /// The gate for `plan`, when its rows are decided by cell predicates alone.
    pub(crate) fn for_plan(plan: &Plan) -> Option<CellGate> {
        // A stop filter must see every visible row, even one the gate
        // would end early.
        let applies = !plan.needs_evaluator
            && plan.column_filters.is_empty()
            && plan.stop_filter.is_none()
            && !plan.cell_filter.is_empty();
        applies.then(|| CellGate {
            predicates: plan.cell_filter.clone(),
        })
    }

    /// True when `cell` of `family` passes every predicate.
    #[inline]
    pub(crate) fn matches(&self, family: &[u8], cell: &CellRef<'_>) -> bool {
        let cell = FilterCell {
            row: cell.row,
            family,
            qualifier: cell.qualifier,
            timestamp: cell.timestamp,
            value: cell.value,
        };
        self.predicates.iter().all(|p| p.matches(&cell))
    }

    /// The cells of `block` (of `family`) that pass every predicate, one bit
    /// per cell: value and qualifier comparisons run as kernels over the
    /// block's columns; the others test each cell.
    pub(crate) fn block_cells(&self, family: &[u8], block: &DataBlock) -> Bitmap {
        let mut selected = Bitmap::ones(block.cells());
        let mut scratch = Bitmap::zeros(0);
        for predicate in &self.predicates {
            let evaluated = match predicate {
                CellPredicate::Value(kernel) => block.value_batch().map(|values| {
                    kernel.eval(&values, &mut scratch);
                }),
                // ColumnValueFilter: a block of another family has none of the column's
                // cells; otherwise the value kernel, then the qualifier.
                CellPredicate::ColumnValue {
                    family: wanted,
                    qualifier,
                    kernel,
                } => {
                    if wanted.as_slice() != family {
                        scratch = Bitmap::zeros(block.cells());
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
                CellPredicate::Qualifier(kernel) => block.qualifier_batch().map(|qualifiers| {
                    kernel.eval(&qualifiers, &mut scratch);
                    // HBase's QualifierFilter passes the empty qualifier.
                    for i in 0..qualifiers.len() {
                        if qualifiers.get(i).is_empty() {
                            scratch.set(i, true);
                        }
                    }
                }),
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
    pub(crate) fn block_cells_scalar(&self, family: &[u8], block: &DataBlock) -> Bitmap {
        Bitmap::from_bools(positions(block).map(|p| self.matches(family, &block.cell(p))))
    }

    fn one_predicate_per_cell(
        &self,
        predicate: &CellPredicate,
        family: &[u8],
        block: &DataBlock,
    ) -> Bitmap {
        Bitmap::from_bools(positions(block).map(|p| {
            let cell = block.cell(p);
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

/// Every cell position of `block`, in order.
fn positions(block: &DataBlock) -> impl Iterator<Item = Position> + '_ {
    (0..block.rows())
        .flat_map(move |row| block.row_cells(row).map(move |cell| Position { row, cell }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::CellKind;
    use crate::hfile::data_block::DataBlockBuilder;
    use proptest::prelude::*;
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

    fn block_of(cells: &[Owned]) -> Option<DataBlock> {
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
        Some(DataBlock::decode(builder.finish()).unwrap())
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
                let fast = gate.block_cells("f".as_bytes(), &block);
                let twin = gate.block_cells_scalar(b"f", &block);
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
                    gate.block_cells(b"f", &block),
                    gate.block_cells_scalar(b"f", &block),
                    "{filter}"
                );
            }
        }
    }

    #[test]
    fn plans_that_need_the_row_do_not_get_a_gate() {
        let range = ScanRange {
            start: std::ops::Bound::Unbounded,
            end: std::ops::Bound::Unbounded,
            reversed: false,
        };
        for filter in [
            "SingleColumnValueFilter('f', 'q', =, 'binary:1')",
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
