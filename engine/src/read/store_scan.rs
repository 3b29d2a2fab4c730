//! One store of a region scan: its sources merged row by row
//! ([`MergedRows`]), and how a row of it reaches the sink. Three ways, the
//! cheapest first:
//!
//! - the next row of a block run whose rows hold one cell each (a
//!   compacted store with one version per column, or overlapping files of
//!   such rows): its lone cell resolved without a resolver, handed to the
//!   sink with its row key in one call ([`StoreScan::next_lone_cell_row`]);
//! - the next row of any other block run ([`StoreScan::next_run_row`]);
//! - a row the merge stands on ([`StoreScan::collect_row`]): lent from a
//!   block when one file alone holds it there (after which the rows that
//!   follow may go on as a run), else resolved cell by cell from the merge.

use std::ops::Bound;

use super::block_rows::{
    HeldSelections, gate_selection, next_passing_cell, none_selected, resolve_block_row,
};
use super::cell_gate::{BlockSelection, CellGate, RowVerdict};
use super::plan::ScanPlan;
use super::resolve::{QueryRules, Resolver};
use super::sink::RowSink;
use crate::error::Result;
use crate::iter::rows::{MergedRows, RowCells, RowOutcome};
use crate::iter::source::Source;
use crate::schema::FamilyPlan;

/// One store of a region scan.
pub(super) struct StoreScan {
    /// The store's family: its index in the plan's families.
    family: usize,
    rows: MergedRows,
    /// The resolver's qualifier buffer, handed from row to row.
    qualifier_buffer: Vec<u8>,
    /// What the plan's cell gate computed over the blocks last read
    /// straight from.
    block_cells: HeldSelections,
}

impl StoreScan {
    /// The store of family `family` (its index in the plan's families),
    /// reading `sources` at `read_point`.
    pub(super) fn new(family: usize, sources: Vec<Source>, read_point: u64) -> Self {
        StoreScan {
            family,
            rows: MergedRows::new(sources, read_point),
            qualifier_buffer: Vec::new(),
            block_cells: HeldSelections::new(),
        }
    }

    /// The store's rows, for positioning.
    pub(super) fn rows(&mut self) -> &mut MergedRows {
        &mut self.rows
    }

    /// The store's rows, for what they read.
    pub(super) fn rows_ref(&self) -> &MergedRows {
        &self.rows
    }

    /// The next row of a block run whose blocks hold one cell per row,
    /// into `sink`, when one is under way and has a row before `upper`:
    /// `Some(true)` when the row's cell is returned, `Some(false)` when it
    /// is not (its row returns nothing), `None` when the general path must
    /// go on. For plans without a cell gate and not raw (the caller checks).
    /// Always inlined into the region scanner's `next_row`: the usual
    /// scanned row (see `iter::run::BlockRun::next_lone_cell`).
    #[inline(always)]
    pub(super) fn next_lone_cell_row<S: RowSink>(
        &mut self,
        plan: &ScanPlan,
        upper: &Bound<Vec<u8>>,
        sink: &mut S,
    ) -> Option<bool> {
        let family = plan.families.get(self.family)?;
        let read_point = self.rows.read_point();
        let (row, cell) = self.rows.next_lone_cell(upper)?;
        let returned = cell.cell().sequence <= read_point
            && Resolver::lone_cell_returned(
                family.columns.as_ref(),
                family.rules,
                plan.query,
                cell.cell(),
            );
        sink.lone_cell_block_row(&family.name, &row, &cell, returned);
        Some(returned)
    }

    /// Reads the next row of the block run under way into `sink`:
    /// `Some(true)` when the row returns cells, `Some(false)` when it
    /// returns none, `None` when no run is under way (one that reached its
    /// end is ended).
    pub(super) fn next_run_row<S: RowSink>(
        &mut self,
        plan: &ScanPlan,
        upper: &Bound<Vec<u8>>,
        verdict: &mut RowVerdict,
        sink: &mut S,
    ) -> Result<Option<bool>> {
        let Some(family) = plan.families.get(self.family) else {
            return Ok(None);
        };
        let read_point = self.rows.read_point();
        let Some(row) = self.rows.next_run_row(upper)? else {
            return Ok(None);
        };
        sink.begin_block_row(&row);
        let gate = plan.cell_gate.as_deref();
        if let Some(gate) = gate {
            gate.begin_row(verdict);
        }
        let selection = gate_selection(gate, &family.name, &mut self.block_cells, row.block());
        if let Some(bits) = selection.and_then(BlockSelection::rows_need)
            && none_selected(bits, &row).is_some()
        {
            // On to the next row with a passing cell, within the run, on
            // every side of it.
            let held = &mut self.block_cells;
            self.rows.skip_run_rows_returning_nothing(|block, from| {
                next_passing_cell(gate, &family.name, held, block, from)
            });
            return Ok(Some(false));
        }
        resolve_block_row(
            &row,
            read_point,
            family,
            plan.query,
            &mut self.qualifier_buffer,
            gate.zip(selection)
                .map(|(gate, selection)| (gate, selection, &mut *verdict)),
            sink,
        );
        if let Some(gate) = gate
            && gate.has_column_tests()
            && sink.cell_count() > 0
            && !gate.row_passes(verdict)
        {
            sink.begin_block_row(&row);
        }
        Ok(Some(sink.cell_count() > 0))
    }

    /// Resolves the store's cells of `row` (the smallest row of every store
    /// of the region) into `sink`, which the caller began. A row the
    /// store's winning file alone holds wholly inside its cached block (the
    /// usual state after a compaction) comes straight from the block's
    /// columns, without the merge; with `run_within` (the scan's upper
    /// bound, for a forward scan of one store) the rows after it may go on
    /// as a block run.
    pub(super) fn collect_row<S: RowSink>(
        &mut self,
        plan: &ScanPlan,
        row: &[u8],
        run_within: Option<&Bound<Vec<u8>>>,
        verdict: &mut RowVerdict,
        sink: &mut S,
    ) -> Result<()> {
        let Some(family) = plan.families.get(self.family) else {
            return Ok(());
        };
        let gate = plan.cell_gate.as_deref();
        let read_point = self.rows.read_point();
        if let Some(block_row) = self.rows.lend_block_row(row)? {
            let selection =
                gate_selection(gate, &family.name, &mut self.block_cells, block_row.block());
            if let Some(bits) = selection.and_then(BlockSelection::rows_need)
                && let Some(next_passing_cell) = none_selected(bits, &block_row)
            {
                // No cell of the row passes: it returns nothing. No other
                // source holds the rows before the runner-up's: they are
                // skipped up to the next passing cell's row.
                return self.rows.row_read(RowOutcome::NothingPasses {
                    next_passing_cell,
                    run_within,
                });
            }
            resolve_block_row(
                &block_row,
                read_point,
                family,
                plan.query,
                &mut self.qualifier_buffer,
                gate.zip(selection)
                    .map(|(gate, selection)| (gate, selection, verdict)),
                sink,
            );
            return self.rows.row_read(RowOutcome::Read { run_within });
        }
        let mut cells = self.rows.row_cells(row)?;
        let resolve = MergedRow {
            family,
            query: plan.query,
            gate,
        };
        resolve.resolve_into(&mut cells, verdict, &mut self.qualifier_buffer, sink)
    }
}

/// A row's cells of one family from the merge, for resolving.
struct MergedRow<'p> {
    family: &'p FamilyPlan,
    query: QueryRules,
    gate: Option<&'p CellGate>,
}

impl MergedRow<'_> {
    /// Resolves `cells` into `sink`: the versions, deletes, TTL and time
    /// range, then the cell gate's predicates (its column tests note every
    /// returned cell); a finished column's older cells are skipped over.
    fn resolve_into<S: RowSink>(
        &self,
        cells: &mut RowCells<'_>,
        verdict: &mut RowVerdict,
        qualifier_buffer: &mut Vec<u8>,
        sink: &mut S,
    ) -> Result<()> {
        let family = self.family;
        let mut resolver = Resolver::new(
            family.columns.as_ref(),
            family.rules,
            self.query,
            std::mem::take(qualifier_buffer),
        );
        while let Some(cell) = cells.current() {
            if resolver.push(&cell) {
                match self.gate {
                    None => sink.push_cell(&family.name, &cell),
                    Some(gate) => {
                        gate.note_cell(&family.name, &cell, verdict);
                        if gate.matches(&family.name, &cell) {
                            sink.push_cell(&family.name, &cell);
                        }
                    }
                }
            }
            if resolver.column_done(cells.may_hold_family_markers()) {
                cells.skip_column(resolver.column_qualifier())?;
            } else {
                cells.advance()?;
            }
        }
        *qualifier_buffer = resolver.into_buffer();
        Ok(())
    }
}
