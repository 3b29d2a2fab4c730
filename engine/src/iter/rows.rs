//! One store's sources merged row by row, for the read path.
//!
//! [`MergedRows`] owns a store's [`MergedSources`] (the merge's ranking and
//! the cursors it ranks) and hands out rows in one of two ways:
//!
//! - a row the winning file's cursor alone holds, wholly inside its cached
//!   block, is lent as a [`BlockRow`] ([`MergedRows::lend_block_row`]): its
//!   cells come straight from the block's columns, without the merge. This
//!   is every row of a compacted store without a memstore. When the reader
//!   says how it went ([`MergedRows::row_read`]), the rows after it may go
//!   on as a [`BlockRun`] ([`MergedRows::next_run_row`],
//!   [`MergedRows::next_lone_cell`]);
//! - any other row is read cell by cell through the merge
//!   ([`MergedRows::row_cells`]).
//!
//! While a row is lent or a run is under way the cursors stand where they
//! were when it began, out of step with the rows read. Every method that
//! reads or moves the merge first puts them back (moves the cursors past
//! what was read and ranks the merge again), so the merge's invariant holds
//! whenever anything outside this module can look at it.

use std::ops::Bound;
use std::sync::Arc;

use super::block_row::{BlockCell, BlockRef, BlockRow};
use super::merge::MergedSources;
use super::run::{BlockRun, LeadRow};
use super::source::Source;
use crate::cell::{CellRef, SeekKey, compare_keys};
use crate::error::Result;
use crate::hfile::reader::HFileReader;

/// Steps [`RowCells::skip_column`] takes before it seeks instead.
pub(super) const COLUMN_SKIP_STEPS: usize = 4;

/// A store's sources merged at a read point, read row by row (see the
/// module's description).
pub(crate) struct MergedRows {
    merge: MergedSources,
    lent: Lent,
}

/// What the merge's cursors are out of step with.
enum Lent {
    /// Nothing: the cursors stand where the ranking says.
    Nothing,
    /// A row the winner alone holds, lent from its block; the winner's
    /// cursor still stands on it.
    Row(LentRow),
    /// A block run under way; its cursors stand where it began.
    Run(BlockRun),
}

/// Where the row [`MergedRows::lend_block_row`] lent lies.
#[derive(Debug, Clone, Copy)]
struct LentRow {
    /// The winning source, whose cursor stands on the row.
    source: usize,
    /// The row's index in the cursor's block.
    row: usize,
    /// The block cell the cursor stands at (the first lent).
    first_cell: usize,
    /// Cells lent, to the row's end.
    cells: usize,
}

/// What the reader made of the row [`MergedRows::lend_block_row`] lent from a
/// block, which says where the merge goes on. `run_within`: the scan's
/// upper bound when the rows after this one may be read as a block run
/// (a forward scan of one store), `None` otherwise.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RowOutcome<'u> {
    /// The row was read.
    Read {
        run_within: Option<&'u Bound<Vec<u8>>>,
    },
    /// No cell of the row can be returned; `next_passing_cell` is the first
    /// cell of the block after the row's that can (`None`: none). The rows
    /// before its row are skipped too (no other source holds them).
    NothingPasses {
        next_passing_cell: Option<usize>,
        run_within: Option<&'u Bound<Vec<u8>>>,
    },
}

impl MergedRows {
    /// `sources` merged at `read_point`; nothing is read until a seek.
    pub(crate) fn new(sources: Vec<Source>, read_point: u64) -> Self {
        MergedRows {
            merge: MergedSources::new(sources, read_point),
            lent: Lent::Nothing,
        }
    }

    /// The read point: cells with a larger sequence are not visible.
    #[inline]
    pub(crate) fn read_point(&self) -> u64 {
        self.merge.read_point()
    }

    /// The files the sources read (each file source's file; not levels).
    pub(crate) fn files(&self) -> impl Iterator<Item = &Arc<HFileReader>> {
        self.merge.files()
    }

    /// Puts back what is lent: the cursors move past the rows read and the
    /// merge is ranked again.
    #[inline]
    fn settle(&mut self) -> Result<()> {
        if matches!(self.lent, Lent::Nothing) {
            return Ok(());
        }
        self.settle_lent()
    }

    #[inline(never)]
    fn settle_lent(&mut self) -> Result<()> {
        match std::mem::replace(&mut self.lent, Lent::Nothing) {
            Lent::Nothing => Ok(()),
            Lent::Row(lent) => step_past(&mut self.merge, lent),
            Lent::Run(run) => run.end(&mut self.merge),
        }
    }

    /// Positions at the first visible cell with key >= `key`.
    pub(crate) fn seek(&mut self, key: &SeekKey<'_>) -> Result<()> {
        self.settle()?;
        self.merge.seek(key)
    }

    /// The row the merge stands on (the smallest row with a visible cell
    /// at or after the position); `None` past the last.
    pub(crate) fn next_row_key(&mut self) -> Result<Option<&[u8]>> {
        self.settle()?;
        Ok(self.merge.current().map(|cell| cell.row))
    }

    /// The largest row with a cell (visible or not) before `bound` (`None`
    /// = after every row). Leaves the sources positioned anywhere: seek
    /// before reading cells again.
    pub(crate) fn last_row_before(&mut self, bound: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        self.settle()?;
        self.merge.last_row_before(bound)
    }

    /// Lends `row`, the row the merge stands on
    /// ([`MergedRows::next_row_key`]), from a block, when the winning file
    /// alone holds it, wholly inside its cached block: read its cells, then
    /// say how it went ([`MergedRows::row_read`]). `None`: read the row's
    /// cells from the merge ([`MergedRows::row_cells`]).
    #[inline]
    pub(crate) fn lend_block_row(&mut self, row: &[u8]) -> Result<Option<BlockRow<'_>>> {
        self.settle()?;
        match sole_block_row(&self.merge, row) {
            Some((lent, block_row)) => {
                self.lent = Lent::Row(lent);
                Ok(Some(block_row))
            }
            None => Ok(None),
        }
    }

    /// The cells of `row`, the row the merge stands on, from the merge.
    #[inline]
    pub(crate) fn row_cells<'m>(&'m mut self, row: &'m [u8]) -> Result<RowCells<'m>> {
        self.settle()?;
        Ok(RowCells {
            merge: &mut self.merge,
            row,
        })
    }

    /// Goes on after the row [`MergedRows::lend_block_row`] lent from a block:
    /// past it, past the rows after it too when nothing in them passes, or
    /// into a block run. Without this call the next read steps past the
    /// row, which is always right but begins no run.
    pub(crate) fn row_read(&mut self, outcome: RowOutcome<'_>) -> Result<()> {
        let Lent::Row(lent) = self.lent else {
            return Ok(());
        };
        self.lent = Lent::Nothing;
        // The cursor stands on the lent row, in its block (else it was
        // not lent): the fallbacks only keep the merge right regardless.
        let Some(cursor) = self.merge.file_cursor(lent.source) else {
            return step_past(&mut self.merge, lent);
        };
        // A cursor that skips rows its gate rejects does not hold every
        // row of its block: no run over it.
        let may_run = !cursor.filters_rows();
        let Some((block, _, _)) = cursor.rest_of_row_in_block() else {
            return step_past(&mut self.merge, lent);
        };
        let lead = LeadRow {
            block,
            row: lent.row,
            from_cell: lent.first_cell,
        };
        match outcome {
            RowOutcome::Read { run_within } => {
                let run = run_within
                    .filter(|_| may_run)
                    .and_then(|upper| BlockRun::after_row(&self.merge, lead, upper));
                match run {
                    Some(run) => self.lent = Lent::Run(run),
                    None => step_past(&mut self.merge, lent)?,
                }
            }
            RowOutcome::NothingPasses {
                next_passing_cell,
                run_within,
            } => {
                // Jump to the next passing cell's row within the rows no
                // other source holds (or to the block's last row, which
                // may go on in the next block).
                let target =
                    next_passing_cell.map_or(block.rows() - 1, |cell| block.row_of_cell(cell));
                let next_row = self.merge.runner_up_row();
                let to_row = target
                    .min(super::run::run_end(block, lent.row + 1, next_row, &Bound::Unbounded).0)
                    .max(lent.row + 1);
                let run = run_within
                    .filter(|_| may_run && to_row == lent.row + 1)
                    .and_then(|upper| {
                        // The next row is another file's (overlapping
                        // files): merge their blocks' rows as a run, which
                        // skips rows without a passing cell in any.
                        BlockRun::merged_after_row(&self.merge, lead, upper)
                    });
                match run {
                    Some(run) => self.lent = Lent::Run(run),
                    None => jump_to(&mut self.merge, lent, to_row)?,
                }
            }
        }
        Ok(())
    }

    /// The next row of a block run whose blocks hold one cell per row, and
    /// its cell, when such a run is under way and has a next row before
    /// `upper`; `None` otherwise ([`MergedRows::next_run_row`] then ends
    /// or extends the run). The usual scanned row: kept small, and always
    /// inlined (see [`BlockRun::next_lone_cell`]).
    #[inline(always)]
    pub(crate) fn next_lone_cell(
        &mut self,
        upper: &Bound<Vec<u8>>,
    ) -> Option<(BlockRow<'_>, BlockCell<'_>)> {
        let Lent::Run(run) = &mut self.lent else {
            return None;
        };
        run.next_lone_cell(upper)
    }

    /// The next row of the block run under way, before `upper`; `None`
    /// when no run is under way or it is over (it is then ended here).
    pub(crate) fn next_run_row(&mut self, upper: &Bound<Vec<u8>>) -> Result<Option<BlockRow<'_>>> {
        let at = match &mut self.lent {
            Lent::Run(run) => run.next_side(&mut self.merge, upper)?,
            Lent::Nothing | Lent::Row(_) => return Ok(None),
        };
        let Some(at) = at else {
            self.settle()?;
            return Ok(None);
        };
        let Lent::Run(run) = &mut self.lent else {
            return Ok(None);
        };
        Ok(run.take_row(at))
    }

    /// After a row of the run under way without a cell that may be
    /// returned: skips the rows of the run that return nothing.
    /// `next_passing_cell(block, from)` is the first cell of `block` at or
    /// after cell `from` that may be returned (`None`: none; `Some(from)`
    /// when it cannot tell).
    pub(crate) fn skip_run_rows_returning_nothing(
        &mut self,
        next_passing_cell: impl FnMut(BlockRef<'_>, usize) -> Option<usize>,
    ) {
        if let Lent::Run(run) = &mut self.lent {
            run.skip_rows_returning_nothing(next_passing_cell);
        }
    }
}

/// Where `row` lies when the winning source alone holds it and reads a
/// file whose cursor stands inside a cached block holding the rest of the
/// row: the row, lent from that block.
#[inline]
fn sole_block_row<'m>(merge: &'m MergedSources, row: &[u8]) -> Option<(LentRow, BlockRow<'m>)> {
    let source = merge.winner()?;
    if merge.runner_up_row() == Some(row) {
        return None;
    }
    let (block, block_row, cells) = merge.file_cursor(source)?.rest_of_row_in_block()?;
    if block.row(block_row) != row {
        return None;
    }
    let lent = LentRow {
        source,
        row: block_row,
        first_cell: cells.start,
        cells: cells.len(),
    };
    Some((lent, BlockRow::from_cell(block, block_row, cells.start)))
}

/// Moves the winner's cursor past the lent row and restores the ranking.
fn step_past(merge: &mut MergedSources, lent: LentRow) -> Result<()> {
    if let Some(cursor) = merge.file_cursor_at(lent.source) {
        cursor.step_past_row(lent.row)?;
    }
    merge.sole_source_moved(lent.cells)
}

/// Moves the winner's cursor from the lent row to row `to_row` of its
/// block (every row between is the winner's alone) and restores the
/// ranking.
fn jump_to(merge: &mut MergedSources, lent: LentRow, to_row: usize) -> Result<()> {
    let Some(cursor) = merge.file_cursor_at(lent.source) else {
        return Ok(());
    };
    let moved = match cursor.rest_of_row_in_block() {
        Some((block, _, _)) if to_row < block.rows() => {
            block.row_cells(to_row).start - lent.first_cell
        }
        Some((block, _, _)) => block.cells() - lent.first_cell,
        None => lent.cells,
    };
    cursor.jump_to_row(to_row)?;
    merge.sole_source_moved(moved)
}

/// The cells of one row, from the merge, in store order.
pub(crate) struct RowCells<'m> {
    merge: &'m mut MergedSources,
    row: &'m [u8],
}

impl RowCells<'_> {
    /// The next visible cell of the row; `None` past its last.
    #[inline]
    pub(crate) fn current(&self) -> Option<CellRef<'_>> {
        self.merge.current().filter(|cell| cell.row == self.row)
    }

    /// Moves past the current cell.
    #[inline]
    pub(crate) fn advance(&mut self) -> Result<()> {
        self.merge.advance()
    }

    /// False when no source holds a family delete marker.
    #[inline]
    pub(crate) fn may_hold_family_markers(&self) -> bool {
        self.merge.may_hold_family_markers()
    }

    /// Moves past every cell of column `qualifier` of the row. The next
    /// cell usually starts the next column already (one version per column
    /// is the common case), so it steps a few times first; a column with
    /// many more cells (a hot cell updated thousands of times since the
    /// last flush) is left with one seek, so a read costs the versions it
    /// returns rather than every version the memstore holds. This is
    /// HBase's "seek to next column".
    pub(crate) fn skip_column(&mut self, qualifier: &[u8]) -> Result<()> {
        let row = self.row;
        for _ in 0..COLUMN_SKIP_STEPS {
            self.merge.advance()?;
            match self.merge.current() {
                Some(c) if c.row == row && c.qualifier == qualifier => {}
                _ => return Ok(()),
            }
        }
        // The first key of the next possible qualifier (`qualifier` + 0x00).
        let mut next = Vec::with_capacity(qualifier.len() + 1);
        next.extend_from_slice(qualifier);
        next.push(0);
        let start = SeekKey {
            qualifier: &next,
            ..SeekKey::row_start(row)
        };
        self.merge.seek_forward(&start)?;
        // Every source's seek lands at or past the key; should one fall
        // short, step instead of re-reading the column (the read must make
        // progress and must not return a cell twice).
        while self
            .merge
            .current()
            .is_some_and(|c| compare_keys(c.tuple(), start.tuple()) == std::cmp::Ordering::Less)
        {
            self.merge.advance()?;
        }
        Ok(())
    }
}
