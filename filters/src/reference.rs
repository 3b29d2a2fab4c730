//! Reference scans over rows held in memory: the executable statement of how the engine
//! must use the evaluator and the plan. The engine works on blocks and batches; these
//! functions do the same steps one row at a time and define the expected results.

use std::ops::Bound;

use crate::eval::{CellRef, FilterEvaluator, OutputCell};
use crate::kernels::Kernel;
use crate::model::{Filter, ModelError};
use crate::plan::{Plan, ScanRange, Seek};

/// One returned row: its key and its cells.
pub type ReturnedRow<'a> = (Vec<u8>, Vec<OutputCell<'a>>);

/// True when `row` lies in the scan's bounds.
fn in_scan(scan: &ScanRange, row: &[u8]) -> bool {
    let above = match &scan.start {
        Bound::Unbounded => true,
        Bound::Included(start) => row >= start.as_slice(),
        Bound::Excluded(start) => row > start.as_slice(),
    };
    let below = match &scan.end {
        Bound::Unbounded => true,
        Bound::Included(end) => row <= end.as_slice(),
        Bound::Excluded(end) => row < end.as_slice(),
    };
    above && below
}

/// The reference: every row of the scan (in scan order; each row's visible cells in store
/// order) through one [`FilterEvaluator`], until it ends the scan.
pub fn scan_with_evaluator<'a>(
    filter: Option<&Filter>,
    rows: &[Vec<CellRef<'a>>],
    scan: &ScanRange,
    max_versions: u32,
) -> Result<Vec<ReturnedRow<'a>>, ModelError> {
    let mut evaluator = filter
        .map(|f| FilterEvaluator::with_direction(f, scan.reversed))
        .transpose()?;
    let unfiltered = Plan::compile(None, scan)?;
    let mut returned = Vec::new();
    for cells in rows {
        let Some(first) = cells.first() else { continue };
        if !in_scan(scan, first.row) {
            continue;
        }
        match &mut evaluator {
            Some(evaluator) => {
                let outcome = evaluator.evaluate_row(cells, max_versions);
                if !outcome.excluded {
                    returned.push((first.row.to_vec(), outcome.cells));
                }
                if outcome.stop_scan {
                    break;
                }
            }
            None => {
                let out = unfiltered.output_cells(cells, max_versions);
                if !out.is_empty() {
                    returned.push((first.row.to_vec(), out));
                }
            }
        }
    }
    Ok(returned)
}

/// The planned scan, step by step as the engine runs it:
///
/// 1. (a) ask [`Plan::seek`] whether the row may match; skip to the next candidate if not;
/// 2. (b) test the stop predicate on every visible row, in scan order: the first failure
///    ends the scan (that row excluded);
/// 3. (b) drop rows failing the row-key predicate (blocks: one bitmap per batch);
/// 4. (c) drop rows failing a column value predicate (on merged, visible cells);
/// 5. (e) run the evaluator on what is left, or take [`Plan::output_cells`] when the plan
///    does not need it;
/// 6. (d) stop once `max_rows` rows were returned (checked before reading a row).
///
/// Returns exactly what [`scan_with_evaluator`] returns (the property tests check this).
pub fn scan_with_plan<'a>(
    plan: &Plan,
    filter: Option<&Filter>,
    rows: &[Vec<CellRef<'a>>],
    scan: &ScanRange,
    max_versions: u32,
) -> Result<Vec<ReturnedRow<'a>>, ModelError> {
    let mut evaluator = match filter {
        Some(filter) if plan.needs_evaluator => {
            Some(FilterEvaluator::with_direction(filter, scan.reversed)?)
        }
        _ => None,
    };
    let mut returned = Vec::new();
    let mut target: Option<Seek> = None;
    for cells in rows {
        if plan
            .limits
            .max_rows
            .is_some_and(|max| returned.len() as u64 >= max)
        {
            break;
        }
        let Some(first) = cells.first() else { continue };
        let row = first.row;
        if !in_scan(scan, row) {
            continue;
        }
        // Honour a pending seek: rows before the target are skipped without being read.
        match &target {
            Some(Seek::Forward(key)) if row < key.as_slice() => continue,
            Some(Seek::Backward { key, inclusive })
                if row > key.as_slice() || (!inclusive && row == key.as_slice()) =>
            {
                continue;
            }
            _ => target = None,
        }
        match plan.seek(row) {
            Seek::Here => {}
            Seek::Done => break,
            other => {
                target = Some(other);
                continue;
            }
        }
        if let Some(stop) = &plan.stop_filter
            && !stop.matches(row)
        {
            break;
        }
        if plan.row_filter.as_ref().is_some_and(|p| !p.matches(row))
            || !plan
                .column_filters
                .iter()
                .all(|c| c.row_passes_cells(cells))
        {
            continue;
        }
        match &mut evaluator {
            Some(evaluator) => {
                let outcome = evaluator.evaluate_row(cells, max_versions);
                if !outcome.excluded {
                    returned.push((row.to_vec(), outcome.cells));
                }
                if outcome.stop_scan {
                    break;
                }
            }
            None => {
                let out = plan.output_cells(cells, max_versions);
                if !out.is_empty() {
                    returned.push((row.to_vec(), out));
                }
            }
        }
    }
    Ok(returned)
}
