//! The row gate: what a read lets its sources (memstore cursors, HFile
//! cursors) skip on their own, from the compiled filter plan: whole blocks
//! whose key span the plan cannot match, rows before the plan's next
//! candidate, and rows that fail the plan's row-key predicate (evaluated as a
//! kernel over a block's row keys). It sits below the sources and the read
//! path so that both can use it.

use std::sync::Arc;

use strata_filters::kernels::Kernel;
use strata_filters::plan::Seek;
use strata_filters::{Bitmap, Plan};

/// What the sources may skip on their own.
pub(crate) struct RowGate {
    pub(crate) plan: Arc<Plan>,
    /// The plan's row-key predicate may run at the sources.
    pub(crate) row_filter: bool,
}

impl RowGate {
    /// The gate for a plan, or `None` when sources can skip nothing.
    pub(crate) fn for_plan(plan: &Arc<Plan>) -> RowGate {
        RowGate {
            plan: plan.clone(),
            row_filter: plan.stop_filter.is_none() && plan.row_filter.is_some(),
        }
    }

    /// True when a block spanning `[first, last]` may hold a returned row.
    pub(crate) fn block_wanted(&self, first: &[u8], last: &[u8]) -> bool {
        self.plan.may_contain(first, last)
    }

    /// For a cursor moving forward past `row`, which no returned row equals:
    /// `Seek::Forward(next candidate)` or `Seek::Done`; `None` when the plan
    /// cannot say (a reversed plan, or `row` itself may match).
    pub(crate) fn forward_jump(&self, row: &[u8]) -> Option<Seek> {
        if self.plan.reversed() {
            return None;
        }
        match self.plan.seek(row) {
            jump @ (Seek::Forward(_) | Seek::Done) => Some(jump),
            Seek::Here | Seek::Backward { .. } => None,
        }
    }

    /// For a cursor moving backward past `row`, which no returned row
    /// equals: `Seek::Backward` to the previous candidate or `Seek::Done`;
    /// `None` when the plan cannot say (a forward plan, or `row` may match).
    pub(crate) fn backward_jump(&self, row: &[u8]) -> Option<Seek> {
        if !self.plan.reversed() {
            return None;
        }
        match self.plan.seek(row) {
            jump @ (Seek::Backward { .. } | Seek::Done) => Some(jump),
            Seek::Here | Seek::Forward(_) => None,
        }
    }

    /// True when `row` passes the pushed-down row predicate.
    pub(crate) fn row_passes(&self, row: &[u8]) -> bool {
        !self.row_filter || self.plan.row_filter.as_ref().is_none_or(|p| p.matches(row))
    }

    /// Evaluates the row predicate over a block's row keys into `out` (one
    /// bit per row, its allocation reused from block to block); false, with
    /// `out` left as it was, when every row passes or the keys do not form
    /// a batch (the rows are then tested one by one).
    pub(crate) fn block_rows_into(
        &self,
        rows: Option<strata_filters::Batch<'_>>,
        out: &mut Bitmap,
    ) -> bool {
        let (true, Some(predicate), Some(batch)) =
            (self.row_filter, self.plan.row_filter.as_ref(), rows)
        else {
            return false;
        };
        predicate.eval(&batch, out);
        true
    }
}
