//! Resolving rows lent from cached blocks: a row that one file alone holds
//! wholly inside its cached block (a scan's row lent by
//! [`MergedRows`](crate::iter::rows::MergedRows), a row of a block run, a
//! direct get's row of a lone file) is resolved from the block's cells into
//! a sink, with the cell gate's selection of the block where the plan has
//! a gate. The selections are computed once per block and kept for the
//! last few blocks a store read.

use smallvec::SmallVec;
use strata_filters::Bitmap;

use super::cell_gate::{BlockSelection, CellGate, RowVerdict};
use super::resolve::{QueryRules, Resolver};
use super::sink::RowSink;
use crate::iter::block_row::{BlockRef, BlockRow, HeldBlock};
use crate::schema::FamilyPlan;

/// Blocks a store scan keeps the cell gate's selections of: one per file
/// cursor a row can come from in the usual overlapping-levels states
/// (memstore flushes aside, up to about four levels hold a row's range).
/// The blocks stay pinned in the cache while held.
const HELD_SELECTIONS: usize = 4;

/// The cell gate's selections of the blocks a store scan read last, newest
/// last (each block is held, so its identity is stable). Several, because
/// rows of overlapping files (two levels after random writes) alternate
/// between their cursors' blocks: with one entry, every alternation ran the
/// kernels over a whole block again, once per row.
pub(super) type HeldSelections = SmallVec<[(HeldBlock, BlockSelection); HELD_SELECTIONS]>;

/// What the plan's cell gate computes over `block` (`None` without a gate),
/// once per block, held in `held`.
pub(super) fn gate_selection<'h>(
    gate: Option<&CellGate>,
    family: &[u8],
    held: &'h mut HeldSelections,
    block: BlockRef<'_>,
) -> Option<&'h BlockSelection> {
    let gate = gate?;
    let at = match held.iter().position(|(block_held, _)| block_held.is(block)) {
        Some(at) => at,
        None => {
            if held.len() == HELD_SELECTIONS {
                held.remove(0);
            }
            held.push((block.hold(), gate.block_selection(family, block)));
            held.len() - 1
        }
    };
    held.get(at).map(|(_, selection)| selection)
}

/// True when no cell of `row` is in the gate's selection `bits`: the row
/// returns nothing, whatever its versions and markers. Also the first
/// selected cell after the row (`None`: none in the block).
pub(super) fn none_selected(bits: &Bitmap, row: &BlockRow<'_>) -> Option<Option<usize>> {
    let cells = row.cell_indexes();
    let next = bits.next_one(cells.start);
    next.is_none_or(|i| i >= cells.end).then_some(next)
}

/// The first cell of `block` at or after cell `from` that a row needs to
/// return anything ([`BlockSelection::rows_need`]; `None`: none);
/// `Some(from)` without such a bound.
pub(super) fn next_passing_cell(
    gate: Option<&CellGate>,
    family: &[u8],
    held: &mut HeldSelections,
    block: BlockRef<'_>,
    from: usize,
) -> Option<usize> {
    match gate_selection(gate, family, held, block).and_then(BlockSelection::rows_need) {
        Some(bits) => bits.next_one(from),
        None => Some(from),
    }
}

/// The cell gate, its selection of the row's block, and the row's verdict
/// of its column tests, for [`resolve_block_row`].
pub(super) type GateOnBlock<'g> = (&'g CellGate, &'g BlockSelection, &'g mut RowVerdict);

/// Resolves a block row's cells of `family` into `sink`: those visible at
/// `read_point` that version resolution returns and the cell gate's
/// selection (if any) passes; the gate's column tests note each of them. A
/// row of one cell (every row of a compacted store with one version per
/// column), or of a block without markers and with one version per column,
/// is resolved without building a resolver.
#[inline]
pub(super) fn resolve_block_row<S: RowSink>(
    row: &BlockRow<'_>,
    read_point: u64,
    family: &FamilyPlan,
    query: QueryRules,
    qualifier_buffer: &mut Vec<u8>,
    mut gate: Option<GateOnBlock<'_>>,
    sink: &mut S,
) {
    // A row whose block holds no marker and one version per column needs
    // no resolver either: no cell hides or outnumbers another.
    let lone = (row.cell_count() == 1 || row.one_version_per_column()) && !query.raw;
    let mut resolver = (!lone).then(|| {
        Resolver::new(
            family.columns.as_ref(),
            family.rules,
            query,
            std::mem::take(qualifier_buffer),
        )
    });
    // A lone cell of a column the read does not select is never returned:
    // its qualifier alone decides, before the rest of the cell is decoded
    // (a projection of a few columns of wide rows skips most cells here).
    let skip_unselected = lone.then_some(family.columns.as_ref()).flatten();
    for index in row.cell_indexes() {
        if skip_unselected.is_some_and(|set| !set.contains(row.block().qualifier(index))) {
            continue;
        }
        let block_cell = row.cell(index);
        let cell = block_cell.cell();
        let returned = cell.sequence <= read_point
            && match resolver.as_mut() {
                Some(resolver) => resolver.push(cell),
                None => {
                    Resolver::lone_cell_returned(family.columns.as_ref(), family.rules, query, cell)
                }
            };
        if !returned {
            continue;
        }
        if let Some((gate, selection, verdict)) = gate.as_mut() {
            let index = block_cell.index();
            gate.note_block_cell(&family.name, selection, index, cell, verdict);
            if selection
                .cells
                .as_ref()
                .is_some_and(|bits| !bits.get(index))
            {
                continue;
            }
        }
        sink.push_block_cell(&family.name, &block_cell);
    }
    if let Some(resolver) = resolver {
        *qualifier_buffer = resolver.into_buffer();
    }
}
