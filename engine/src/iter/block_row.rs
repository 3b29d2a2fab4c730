//! Rows of cached data blocks, as the read path sees them.
//!
//! A row that one source alone holds wholly inside a cached block is read
//! straight from the block's columns, without the merge: the merged rows of
//! a store ([`super::rows`], [`super::run`]) and a get's point sources
//! ([`super::point`]) find such rows and hand them out as [`BlockRow`]s,
//! whose cells ([`BlockCell`]) the read path resolves and lends from the
//! block ([`HeldBlock`]). Walking a block's rows and decoding its cells stay
//! here and in `hfile/`: the read path never names a data block
//! (`engine/tests/layers.rs` checks it).

use std::sync::Arc;

use crate::cell::CellRef;
use crate::hfile::data_block::{DataBlock, DecodedCell, Position};

/// A row whose cells (from some cell on) all lie in one cached block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockRow<'b> {
    block: &'b Arc<DataBlock>,
    /// The row's index in the block.
    row: usize,
    /// The row's cells read: block cell indexes `first_cell..end_cell`.
    first_cell: usize,
    end_cell: usize,
}

impl<'b> BlockRow<'b> {
    /// No cell of the row's block is a delete marker and no two cells of a
    /// row there share a qualifier: each cell of the row is resolved by
    /// itself, as a lone cell is.
    #[inline]
    pub(crate) fn one_version_per_column(&self) -> bool {
        self.block.one_version_per_column()
    }

    /// Row `row` of `block` from cell `first_cell` (a block cell index in
    /// that row) to the row's end.
    #[inline]
    pub(super) fn from_cell(block: &'b Arc<DataBlock>, row: usize, first_cell: usize) -> Self {
        BlockRow {
            block,
            row,
            first_cell,
            end_cell: block.row_cells(row).end,
        }
    }

    /// Every cell of row `row` of `block`. The read path's own tests build
    /// rows of the blocks they make with it.
    #[inline]
    pub(crate) fn whole(block: &'b Arc<DataBlock>, row: usize) -> Self {
        let cells = block.row_cells(row);
        BlockRow {
            block,
            row,
            first_cell: cells.start,
            end_cell: cells.end,
        }
    }

    /// Row `row` of a block that holds one cell per row (cell `row` is
    /// the row's).
    #[inline]
    pub(super) fn lone(block: &'b Arc<DataBlock>, row: usize) -> Self {
        BlockRow {
            block,
            row,
            first_cell: row,
            end_cell: row + 1,
        }
    }

    /// The row key.
    #[inline]
    pub(crate) fn key(&self) -> &'b [u8] {
        self.block.row(self.row)
    }

    /// Where the row key lies in the block's bytes ([`HeldBlock::bytes`]).
    #[inline]
    pub(crate) fn key_span(&self) -> (usize, usize) {
        self.block.row_span(self.row)
    }

    /// The block the row lies in.
    #[inline]
    pub(crate) fn block(&self) -> BlockRef<'b> {
        BlockRef(self.block)
    }

    /// The block cell indexes of the row's cells (what a
    /// [`BlockRef`]-wide selection bitmap is indexed by).
    #[inline]
    pub(crate) fn cell_indexes(&self) -> std::ops::Range<usize> {
        self.first_cell..self.end_cell
    }

    /// Number of cells.
    #[inline]
    pub(crate) fn cell_count(&self) -> usize {
        self.end_cell - self.first_cell
    }

    /// The cell at block cell index `index` (one of
    /// [`BlockRow::cell_indexes`]), decoded.
    #[inline]
    pub(crate) fn cell(&self, index: usize) -> BlockCell<'b> {
        let decoded = self.block.decode_cell(Position {
            row: self.row,
            cell: index,
        });
        BlockCell {
            block: self.block,
            index,
            cell: self.block.decoded(&decoded),
            decoded,
        }
    }

    /// The row's cells in store order, decoded one at a time (the read
    /// path walks [`BlockRow::cell_indexes`], to test a qualifier first).
    #[cfg(test)]
    pub(crate) fn cells(&self) -> impl Iterator<Item = BlockCell<'b>> + use<'b> {
        let row = *self;
        self.cell_indexes().map(move |index| row.cell(index))
    }
}

/// One cell of a [`BlockRow`]: its fields, and where its slices lie in the
/// block (a sink that holds the block lends them instead of copying).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockCell<'b> {
    block: &'b Arc<DataBlock>,
    /// The cell's index in the block.
    index: usize,
    decoded: DecodedCell,
    cell: CellRef<'b>,
}

impl<'b> BlockCell<'b> {
    /// The cell.
    #[inline]
    pub(crate) fn cell(&self) -> &CellRef<'b> {
        &self.cell
    }

    /// The cell's index in its block.
    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// The block the cell lies in.
    #[inline]
    pub(crate) fn block(&self) -> BlockRef<'b> {
        BlockRef(self.block)
    }

    /// Where the row key lies in the block's bytes.
    #[inline]
    pub(crate) fn row_span(&self) -> (usize, usize) {
        self.decoded.row_span()
    }

    /// Where the qualifier lies in the block's bytes.
    #[inline]
    pub(crate) fn qualifier_span(&self) -> (usize, usize) {
        self.decoded.qualifier_span()
    }

    /// Where the value lies in the block's bytes.
    #[inline]
    pub(crate) fn value_span(&self) -> (usize, usize) {
        self.decoded.value_span()
    }
}

/// A cached block, borrowed: what the read path may ask of a block beyond
/// its rows. The cell gate runs its kernels over the block's columns, and a
/// sink holds the block ([`BlockRef::hold`]) to lend cells from it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockRef<'b>(&'b Arc<DataBlock>);

impl<'b> BlockRef<'b> {
    /// `block`, borrowed. The read path meets blocks only as iter/ hands
    /// them out; its tests make their own.
    #[inline]
    pub(crate) fn new(block: &'b Arc<DataBlock>) -> Self {
        BlockRef(block)
    }

    /// The block held (its reference count raised), for a sink that lends
    /// cells from it.
    #[inline]
    pub(crate) fn hold(self) -> HeldBlock {
        HeldBlock(self.0.clone())
    }

    /// Number of cells.
    #[inline]
    pub(crate) fn cell_count(self) -> usize {
        self.0.cells()
    }

    /// The qualifier of cell `index` (a block cell index).
    #[inline]
    pub(crate) fn qualifier(self, index: usize) -> &'b [u8] {
        self.0.qualifier(index)
    }

    /// The qualifier column, for a kernel.
    pub(crate) fn qualifier_batch(self) -> Option<strata_filters::Batch<'b>> {
        self.0.qualifier_batch()
    }

    /// The value column, for a kernel.
    pub(crate) fn value_batch(self) -> Option<strata_filters::Batch<'b>> {
        self.0.value_batch()
    }

    /// The timestamp column, into `out` (cleared first).
    pub(crate) fn timestamps_into(self, out: &mut Vec<i64>) {
        self.0.timestamps_into(out);
    }

    /// Every cell of the block in order (a test per cell, where no kernel
    /// applies).
    pub(crate) fn cells(self) -> impl Iterator<Item = CellRef<'b>> {
        let block = self.0;
        (0..block.rows()).flat_map(move |row| {
            block
                .row_cells(row)
                .map(move |cell| block.cell(Position { row, cell }))
        })
    }
}

/// A cached block a sink holds while it lends cells from it (the block
/// stays pinned while held).
#[derive(Debug, Clone)]
pub(crate) struct HeldBlock(Arc<DataBlock>);

impl HeldBlock {
    /// The block's bytes, which [`BlockCell`]'s and [`BlockRow`]'s spans
    /// point into.
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        self.0.bytes()
    }

    /// True when both hold the same cached block (not an equal one).
    #[inline]
    pub(crate) fn same_as(&self, other: &HeldBlock) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// True when this is `block` (the same cached block, not an equal one).
    #[inline]
    pub(crate) fn is(&self, block: BlockRef<'_>) -> bool {
        Arc::ptr_eq(&self.0, block.0)
    }
}
