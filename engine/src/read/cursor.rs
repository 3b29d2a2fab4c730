//! The borrowing scan API: a cursor that lends each row instead of handing
//! over an owned [`RowResult`].
//!
//! The cursor resolves a row's cells straight from the sources into one
//! reused buffer and lends a [`RowView`] of it until the next call. A cell
//! read straight from a cached block is not copied: the buffer holds the
//! block and the view's cell points into it; a cell from the memstore or the
//! merge is copied once. Once the buffer has grown to the widest row, a scan
//! allocates nothing per row or per cell; [`Scanner`](super::Scanner), the
//! owned-row iterator, is the same stream with a copy into owned cells at
//! the edge.

use std::ops::Range;

use super::sink::{BufferedCell, CellSpan, RowBuffer};
use super::stream::RowStream;
use crate::cell::{Cell, CellKind, RowResult};
use crate::error::Result;
use crate::iter::block_row::HeldBlock;

/// A scan that lends its rows: call [`ScanCursor::next_row`] until it gives
/// `None`. Each [`RowView`] borrows the cursor, so it lives until the next
/// call; copy what must outlive it ([`RowView::to_row_result`]).
///
/// It returns exactly what [`Table::scan`](crate::Table::scan) returns for
/// the same [`Scan`](crate::Scan): the same rows and cells in the same
/// order, the limit, and with a batch size the same parts of wide rows.
pub struct ScanCursor {
    stream: RowStream,
    buffer: RowBuffer,
    /// Cells of the buffered row not yet lent (batched scans), from here.
    next_cell: usize,
}

impl std::fmt::Debug for ScanCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanCursor")
            .field("table", &self.stream.table_name())
            .field("rows_returned", &self.stream.rows_returned())
            .finish()
    }
}

impl ScanCursor {
    pub(crate) fn new(stream: RowStream) -> ScanCursor {
        ScanCursor {
            stream,
            buffer: RowBuffer::default(),
            next_cell: 0,
        }
    }

    /// The next row (or, with a batch size, the next part of a row); `None`
    /// at the end of the scan. After an error the cursor is finished.
    pub fn next_row(&mut self) -> Result<Option<RowView<'_>>> {
        let batch = self.stream.plan().batch.unwrap_or(usize::MAX);
        if self.next_cell >= self.buffer.len() {
            if !self.stream.next_row(&mut self.buffer)? {
                return Ok(None);
            }
            self.next_cell = 0;
        }
        let start = self.next_cell;
        let end = start.saturating_add(batch).min(self.buffer.len());
        self.next_cell = end;
        Ok(Some(RowView::new(
            self.buffer.row(),
            self.buffer.spans().get(start..end).unwrap_or_default(),
            self.buffer.bytes(),
            self.buffer.blocks(),
        )))
    }
}

/// One row (or part of one) that a [`ScanCursor`] or a
/// [`ParallelScan`](crate::ParallelScan) lends.
#[derive(Debug, Clone, Copy)]
pub struct RowView<'a> {
    row: &'a [u8],
    cells: &'a [CellSpan],
    bytes: &'a [u8],
    /// Cached blocks some cells point into (they stay held while the view
    /// lives).
    blocks: &'a [HeldBlock],
}

impl<'a> RowView<'a> {
    pub(crate) fn new(
        row: &'a [u8],
        cells: &'a [CellSpan],
        bytes: &'a [u8],
        blocks: &'a [HeldBlock],
    ) -> RowView<'a> {
        RowView {
            row,
            cells,
            bytes,
            blocks,
        }
    }

    /// The row key.
    pub fn row(&self) -> &'a [u8] {
        self.row
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// True when the view has no cells (a scan never lends such a row).
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Cell `i` of the view.
    pub fn cell(&self, i: usize) -> Option<CellView<'a>> {
        let cell = self.cells.get(i)?.read(self.bytes, self.blocks);
        Some(CellView { cell })
    }

    /// The cells in order: family ASC, qualifier ASC, timestamp DESC.
    pub fn cells(&self) -> impl ExactSizeIterator<Item = CellView<'a>> + 'a {
        let (bytes, blocks) = (self.bytes, self.blocks);
        self.cells.iter().map(move |span| CellView {
            cell: span.read(bytes, blocks),
        })
    }

    /// The view of cells `range` only (a part of a row, for batching).
    pub(crate) fn part(&self, range: Range<usize>) -> RowView<'a> {
        RowView {
            cells: self.cells.get(range).unwrap_or_default(),
            ..*self
        }
    }

    /// An owned copy, as [`Table::scan`](crate::Table::scan) returns it.
    pub fn to_row_result(&self) -> RowResult {
        RowResult {
            row: self.row.to_vec(),
            cells: self.cells().map(|c| c.to_cell()).collect(),
        }
    }
}

/// One cell of a [`RowView`].
#[derive(Debug, Clone, Copy)]
pub struct CellView<'a> {
    cell: BufferedCell<'a>,
}

impl<'a> CellView<'a> {
    /// Column family name.
    pub fn family(&self) -> &'a [u8] {
        self.cell.family
    }

    /// Column qualifier (may be empty).
    pub fn qualifier(&self) -> &'a [u8] {
        self.cell.qualifier
    }

    /// Timestamp in milliseconds.
    pub fn timestamp(&self) -> i64 {
        self.cell.timestamp
    }

    /// Put, or a delete marker (markers appear only in raw scans).
    pub fn kind(&self) -> CellKind {
        self.cell.kind
    }

    /// The value (empty for markers).
    pub fn value(&self) -> &'a [u8] {
        self.cell.value
    }

    /// An owned copy.
    pub fn to_cell(&self) -> Cell {
        Cell {
            family: self.cell.family.to_vec(),
            qualifier: self.cell.qualifier.to_vec(),
            timestamp: self.cell.timestamp,
            kind: self.cell.kind,
            value: self.cell.value.to_vec(),
        }
    }
}
