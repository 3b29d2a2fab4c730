//! Filters in the read path, in the order `strata_filters::reference`
//! states as the contract (`docs/filters.md`, "Plan"):
//!
//! 1. the plan's key ranges and fuzzy rules: skip to the next candidate row
//!    (and, at the sources, skip whole blocks whose key span cannot match);
//! 2. the stop predicate (WHILE over a row-key test) on every visible row;
//! 3. the row-key predicate: at the sources, as a vectorized kernel over the
//!    row keys of each block before any cell is decoded (a row that fails
//!    fails in every source); this pushdown is used only when the plan has
//!    no stop predicate, which must see every visible row;
//! 4. column value predicates on the merged visible cells;
//! 5. the scalar evaluator (HBase's cell-by-cell protocol) when the plan
//!    needs it, or the plan's exact cell output;
//! 6. the row limit (PageFilter).
//!
//! Rows reach this stage with deletes, TTL, time range and the family's
//! version window applied but not the query's max versions: HBase applies
//! the filter before it counts versions.

use std::sync::Arc;

use smallvec::SmallVec;
use strata_filters::kernels::Kernel;
use strata_filters::plan::Seek;
use strata_filters::{CellRef as FilterCell, Filter, FilterEvaluator, OutputCell, Plan, ScanRange};

use super::sink::{RowBuffer, RowSink};
use crate::cell::{CellKind, CellRef};
use crate::error::Result;

/// The compiled filter of one read.
#[derive(Clone, Debug)]
pub(crate) struct FilterSetup {
    pub(crate) filter: Arc<Filter>,
    pub(crate) plan: Arc<Plan>,
}

impl FilterSetup {
    pub(crate) fn compile(filter: &Arc<Filter>, range: &ScanRange) -> Result<FilterSetup> {
        Ok(FilterSetup {
            filter: filter.clone(),
            plan: Arc::new(Plan::compile(Some(filter), range)?),
        })
    }
}

/// What the stage decided about a row.
pub(crate) enum Verdict {
    /// Return the row (its cells, possibly transformed, are in the output
    /// sink); `stop` ends the scan after it.
    Return { stop: bool },
    /// Skip the row.
    Skip,
    /// Skip to a later row (or, for reversed scans, an earlier one).
    SeekTo(Seek),
    /// End the scan (without this row).
    Stop,
}

/// The per-scan state of the filter: the plan, one evaluator for the whole
/// scan (across regions), and the rows returned so far.
pub(crate) struct FilterStage {
    setup: FilterSetup,
    evaluator: Option<FilterEvaluator>,
    returned: u64,
    max_versions: u32,
}

impl FilterStage {
    /// The stage of a read of `families` (their names): the evaluator ends
    /// the scan once the filter has closed every one of them, as HBase's
    /// store scanners close on `DONE_SCAN` (`ColumnCountGetFilter`).
    pub(crate) fn new<'f>(
        setup: &FilterSetup,
        reversed: bool,
        max_versions: u32,
        families: impl IntoIterator<Item = &'f [u8]>,
    ) -> Result<FilterStage> {
        let evaluator = if setup.plan.needs_evaluator {
            Some(
                FilterEvaluator::with_direction(&setup.filter, reversed)?
                    .with_scan_families(families),
            )
        } else {
            None
        };
        Ok(FilterStage {
            setup: setup.clone(),
            evaluator,
            returned: 0,
            max_versions,
        })
    }

    /// True when the row limit was reached (check before reading a row).
    pub(crate) fn exhausted(&self) -> bool {
        self.setup
            .plan
            .limits
            .max_rows
            .is_some_and(|max| self.returned >= max)
    }

    /// Runs steps 1-5 on one row with at least one visible cell: `input`
    /// holds the row's visible cells; what the scan returns of it goes to
    /// `output` (started afresh for this row).
    pub(crate) fn process<S: RowSink>(&mut self, input: &RowBuffer, output: &mut S) -> Verdict {
        let plan = &self.setup.plan;
        let row = input.row();
        match plan.seek(row) {
            Seek::Here => {}
            Seek::Done => return Verdict::Stop,
            other => return Verdict::SeekTo(other),
        }
        if plan.stop_filter.as_ref().is_some_and(|p| !p.matches(row)) {
            return Verdict::Stop;
        }
        if plan.row_filter.as_ref().is_some_and(|p| !p.matches(row)) {
            return Verdict::Skip;
        }
        // A row's few cells stay on the stack (every returned row comes here).
        let cells: SmallVec<[FilterCell<'_>; 4]> = input
            .cells(0..input.len())
            .map(|c| FilterCell {
                row,
                family: c.family,
                qualifier: c.qualifier,
                timestamp: c.timestamp,
                value: c.value,
            })
            .collect();
        if !plan
            .column_filters
            .iter()
            .all(|c| c.row_passes_cells(&cells))
        {
            return Verdict::Skip;
        }
        let (returned, stop) = match &mut self.evaluator {
            Some(evaluator) => {
                let outcome = evaluator.evaluate_row(&cells, self.max_versions);
                if outcome.excluded {
                    return if outcome.stop_scan {
                        Verdict::Stop
                    } else {
                        Verdict::Skip
                    };
                }
                for (index, cell) in outcome.cells.iter().enumerate() {
                    emit(output, row, index, cell);
                }
                (outcome.cells.len(), outcome.stop_scan)
            }
            // Every cell is returned as it was read (the usual row of a
            // scan filtered on its key): the output takes the row whole,
            // sharing the blocks it lends from, so no value is copied.
            None if plan.returns_row_unchanged(&cells, self.max_versions) => {
                output.copy_row(input);
                (input.len(), false)
            }
            // The plan's cells go straight into the output, without a vector.
            None => {
                let mut index = 0;
                plan.for_each_output_cell(&cells, self.max_versions, |cell| {
                    emit(output, row, index, &cell);
                    index += 1;
                });
                (index, false)
            }
        };
        if returned == 0 {
            return if stop { Verdict::Stop } else { Verdict::Skip };
        }
        self.returned += 1;
        Verdict::Return { stop }
    }
}

/// Writes returned cell `index` of `row` into `output`, starting the row
/// with its first cell (a row without cells is not started).
fn emit<S: RowSink>(output: &mut S, row: &[u8], index: usize, cell: &OutputCell<'_>) {
    if index == 0 {
        output.begin_row(row);
    }
    output.push_cell(
        cell.family,
        &CellRef {
            row,
            qualifier: cell.qualifier,
            timestamp: cell.timestamp,
            kind: CellKind::Put,
            sequence: 0,
            value: &cell.value,
        },
    );
}
