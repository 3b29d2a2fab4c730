//! The cells of one row from the few sources that may hold it, for a get
//! that reads them without the merge heap (the read path's direct gets).
//!
//! A file's part is found by the row's block handle (from the file's index)
//! and read from that block ([`row_in_block`]); a memstore's by one descent
//! of its skiplist. With one source the read path resolves the row inside
//! the block; with a few, [`PointMerge`] gives their cells in store order,
//! picking the smallest current cell of at most four sources each time (no
//! heap for so few).

use std::sync::Arc;

use smallvec::SmallVec;

use super::block_row::BlockRow;
use super::rows::COLUMN_SKIP_STEPS;
use crate::cell::{CellRef, SeekKey, compare_keys};
use crate::error::Result;
use crate::hfile::block::BlockHandle;
use crate::hfile::data_block::{DataBlock, DecodedCell, Position};
use crate::hfile::reader::HFileReader;
use crate::memstore::{Cursor, Memstore};

/// Sources [`PointMerge`] merges without allocating.
const INLINE_POINT_SOURCES: usize = 4;

/// What the block a file's index names for a row holds of it.
pub(crate) enum RowInBlock {
    /// The row's cells, every one of them in the block.
    Found(FoundRow),
    /// The block does not hold the row.
    Absent,
    /// The row may go on in the file's next block: the merge reads it.
    GoesOn,
}

/// A row found in a block by [`row_in_block`]; holds the block.
pub(crate) struct FoundRow {
    block: Arc<DataBlock>,
    /// The row's index in the block and its first cell.
    at: Position,
}

impl FoundRow {
    /// The row.
    #[inline]
    pub(crate) fn row(&self) -> BlockRow<'_> {
        BlockRow::from_cell(&self.block, self.at.row, self.at.cell)
    }
}

/// Reads the block `handle` of `file` (from the cache, or from disk) and
/// finds `row` in it; `goes_on`: the file's index says the next block may
/// start with more of the block's last row.
pub(crate) fn row_in_block(
    file: &HFileReader,
    handle: BlockHandle,
    goes_on: bool,
    row: &[u8],
) -> Result<RowInBlock> {
    let block = file.data_block_at(handle)?;
    let Some(at) = block.seek(&SeekKey::row_start(row)) else {
        return Ok(RowInBlock::Absent);
    };
    if block.row(at.row) != row {
        return Ok(RowInBlock::Absent);
    }
    if goes_on && at.row + 1 >= block.rows() {
        return Ok(RowInBlock::GoesOn);
    }
    Ok(RowInBlock::Found(FoundRow { block, at }))
}

/// The cells of the row one source holds, one at a time in store order.
enum PointCells<'r> {
    Block {
        block: Arc<DataBlock>,
        /// The row's index in the block.
        row: usize,
        /// The cell under the cursor, decoded; `None` past the row.
        current: Option<DecodedCell>,
        /// The next cell's index and the end of the row's cells.
        next: usize,
        end: usize,
    },
    Memstore {
        cursor: Cursor,
        row: &'r [u8],
    },
}

impl PointCells<'_> {
    fn current(&self) -> Option<CellRef<'_>> {
        match self {
            PointCells::Block { block, current, .. } => {
                current.as_ref().map(|decoded| block.decoded(decoded))
            }
            PointCells::Memstore { cursor, row } => cursor.current().filter(|c| c.row == *row),
        }
    }

    fn advance(&mut self) {
        match self {
            PointCells::Block {
                block,
                row,
                current,
                next,
                end,
            } => {
                *current = (*next < *end).then(|| {
                    block.decode_cell(Position {
                        row: *row,
                        cell: *next,
                    })
                });
                *next += 1;
            }
            PointCells::Memstore { cursor, .. } => cursor.next(),
        }
    }

    /// Moves past the rest of column `qualifier` of the row (older
    /// versions a resolver that has what it needs of the column would only
    /// drop: a hot row's memstore can hold thousands). A memstore steps a
    /// few cells, then seeks to the next column's first key (`qualifier`
    /// + 0x00), built in `seek_key`.
    fn skip_column(&mut self, qualifier: &[u8], seek_key: &mut Vec<u8>) {
        for _ in 0..COLUMN_SKIP_STEPS {
            match self.current() {
                Some(cell) if cell.qualifier == qualifier => self.advance(),
                _ => return,
            }
        }
        match self {
            PointCells::Memstore { cursor, row } => {
                seek_key.clear();
                seek_key.extend_from_slice(qualifier);
                seek_key.push(0);
                cursor.seek(&SeekKey {
                    qualifier: seek_key,
                    ..SeekKey::row_start(row)
                });
            }
            PointCells::Block { .. } => {
                while self
                    .current()
                    .is_some_and(|cell| cell.qualifier == qualifier)
                {
                    self.advance();
                }
            }
        }
    }
}

/// The cells of one row from a few sources, merged in store order.
#[derive(Default)]
pub(crate) struct PointMerge<'r> {
    sources: SmallVec<[PointCells<'r>; INLINE_POINT_SOURCES]>,
}

impl<'r> PointMerge<'r> {
    /// Adds the row's cells in a block.
    pub(crate) fn add_block_row(&mut self, found: FoundRow) {
        let FoundRow { block, at } = found;
        let end = block.row_cells(at.row).end;
        let current = Some(block.decode_cell(at));
        self.sources.push(PointCells::Block {
            block,
            row: at.row,
            current,
            next: at.cell + 1,
            end,
        });
    }

    /// Adds the row's cells in `memstore`, if it holds any.
    pub(crate) fn add_memstore(&mut self, memstore: &Arc<Memstore>, row: &'r [u8]) {
        if let Some(cursor) = Cursor::at_row(memstore, row) {
            self.sources.push(PointCells::Memstore { cursor, row });
        }
    }

    /// True when no source was added.
    pub(crate) fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The smallest current cell and the index of its source; `None` past
    /// the row's last cell. Keys are unique across sources (sequences
    /// differ), so it is the next cell in store order.
    pub(crate) fn current(&self) -> Option<(usize, CellRef<'_>)> {
        let mut smallest: Option<(usize, CellRef<'_>)> = None;
        for (i, source) in self.sources.iter().enumerate() {
            if let Some(cell) = source.current()
                && smallest.as_ref().is_none_or(|(_, best)| {
                    compare_keys(cell.tuple(), best.tuple()) == std::cmp::Ordering::Less
                })
            {
                smallest = Some((i, cell));
            }
        }
        smallest
    }

    /// Moves source `source` (the one [`PointMerge::current`] named) past
    /// its current cell.
    pub(crate) fn advance(&mut self, source: usize) {
        if let Some(source) = self.sources.get_mut(source) {
            source.advance();
        }
    }

    /// Moves every source past the rest of column `qualifier` (see
    /// [`PointCells::skip_column`]); `seek_key` is scratch for a memstore's
    /// seek key.
    pub(crate) fn skip_column(&mut self, qualifier: &[u8], seek_key: &mut Vec<u8>) {
        for source in &mut self.sources {
            source.skip_column(qualifier, seek_key);
        }
    }
}
