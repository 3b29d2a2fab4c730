//! Where a read puts the cells it returns.
//!
//! The region scanner resolves a row's cells as the sources stream them and
//! hands each returned cell to a [`RowSink`]: an owned `Vec<Cell>` for the
//! owned-row API, a reused [`RowBuffer`] for the borrowing cursor (no
//! allocation per row or cell once the buffer has grown to the widest row),
//! or a [`CellCount`] when only whether a row has cells matters.

use std::ops::Range;

use crate::cell::{Cell, CellKind, CellRef};

/// Receives the returned cells of one row, in order.
pub(crate) trait RowSink {
    /// Starts a row: drops the cells of the previous one.
    fn begin_row(&mut self, row: &[u8]);
    /// Appends one returned cell of family `family`.
    fn push_cell(&mut self, family: &[u8], cell: &CellRef<'_>);
    /// Cells since the last [`RowSink::begin_row`].
    fn cell_count(&self) -> usize;
}

impl RowSink for Vec<Cell> {
    fn begin_row(&mut self, _row: &[u8]) {
        self.clear();
    }

    fn push_cell(&mut self, family: &[u8], cell: &CellRef<'_>) {
        self.push(Cell {
            family: family.to_vec(),
            qualifier: cell.qualifier.to_vec(),
            timestamp: cell.timestamp,
            kind: cell.kind,
            value: cell.value.to_vec(),
        });
    }

    fn cell_count(&self) -> usize {
        self.len()
    }
}

/// Counts cells without copying them (`Table::count`).
#[derive(Debug, Default)]
pub(crate) struct CellCount(pub(crate) usize);

impl RowSink for CellCount {
    fn begin_row(&mut self, _row: &[u8]) {
        self.0 = 0;
    }

    fn push_cell(&mut self, _family: &[u8], _cell: &CellRef<'_>) {
        self.0 += 1;
    }

    fn cell_count(&self) -> usize {
        self.0
    }
}

/// One buffered cell: where its bytes lie in the buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CellSpan {
    /// Family, qualifier and value lie back to back from here.
    start: usize,
    family_len: usize,
    qualifier_len: usize,
    value_len: usize,
    timestamp: i64,
    kind: CellKind,
}

impl CellSpan {
    /// The cell's fields, from the bytes the span points into.
    #[inline]
    pub(crate) fn read<'a>(&self, bytes: &'a [u8]) -> BufferedCell<'a> {
        let family_end = self.start + self.family_len;
        let qualifier_end = family_end + self.qualifier_len;
        let value_end = qualifier_end + self.value_len;
        BufferedCell {
            family: bytes.get(self.start..family_end).unwrap_or_default(),
            qualifier: bytes.get(family_end..qualifier_end).unwrap_or_default(),
            timestamp: self.timestamp,
            kind: self.kind,
            value: bytes.get(qualifier_end..value_end).unwrap_or_default(),
        }
    }
}

/// A row's key and cells in two reused buffers: each cell's family,
/// qualifier and value are copied once into `bytes` (the cursor API lends
/// slices of it). Clearing keeps the capacity, so a scan allocates only
/// while its rows grow wider than any before.
#[derive(Debug, Default)]
pub(crate) struct RowBuffer {
    row: Vec<u8>,
    bytes: Vec<u8>,
    cells: Vec<CellSpan>,
}

/// The fields of one buffered cell, borrowed from the buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BufferedCell<'a> {
    pub(crate) family: &'a [u8],
    pub(crate) qualifier: &'a [u8],
    pub(crate) timestamp: i64,
    pub(crate) kind: CellKind,
    pub(crate) value: &'a [u8],
}

impl RowBuffer {
    /// The row key.
    pub(crate) fn row(&self) -> &[u8] {
        &self.row
    }

    /// Number of cells.
    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }

    /// The cells' spans (into [`RowBuffer::bytes`]).
    pub(crate) fn spans(&self) -> &[CellSpan] {
        &self.cells
    }

    /// The bytes the spans point into.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Cell `i`.
    pub(crate) fn cell(&self, i: usize) -> Option<BufferedCell<'_>> {
        Some(self.cells.get(i)?.read(&self.bytes))
    }

    /// The cells in `range`, in order.
    pub(crate) fn cells(&self, range: Range<usize>) -> impl Iterator<Item = BufferedCell<'_>> {
        range.filter_map(move |i| self.cell(i))
    }
}

/// Many rows in three buffers, as a parallel scan's worker hands them to
/// the reading thread; cleared and reused batch after batch.
#[derive(Debug, Default)]
pub(crate) struct RowBatch {
    keys: Vec<u8>,
    bytes: Vec<u8>,
    cells: Vec<CellSpan>,
    /// Per row: its key's end in `keys` and its cells' end in `cells` (each
    /// starts where the previous row's ends).
    rows: Vec<(usize, usize)>,
    /// As a [`RowSink`]: the lengths of `keys`, `bytes` and `cells` before
    /// the row being filled, which [`RowBatch::commit_row`] keeps and the
    /// next [`RowSink::begin_row`] drops.
    open: Option<(usize, usize, usize)>,
}

impl RowBatch {
    /// Keeps the row filled since the last [`RowSink::begin_row`].
    pub(crate) fn commit_row(&mut self) {
        if self.open.take().is_some() {
            self.rows.push((self.keys.len(), self.cells.len()));
        }
    }

    /// Number of rows.
    pub(crate) fn rows(&self) -> usize {
        self.rows.len()
    }

    /// Bytes of keys and cells held.
    pub(crate) fn bytes_held(&self) -> usize {
        self.keys.len() + self.bytes.len()
    }

    /// Row `i`: its key, its cells' spans and the bytes they point into.
    pub(crate) fn row(&self, i: usize) -> Option<(&[u8], &[CellSpan], &[u8])> {
        let (key_end, cells_end) = *self.rows.get(i)?;
        let (key_start, cells_start) = match i.checked_sub(1) {
            Some(previous) => *self.rows.get(previous)?,
            None => (0, 0),
        };
        Some((
            self.keys.get(key_start..key_end)?,
            self.cells.get(cells_start..cells_end)?,
            &self.bytes,
        ))
    }

    /// Empties the batch, keeping its capacity.
    pub(crate) fn clear(&mut self) {
        self.keys.clear();
        self.bytes.clear();
        self.cells.clear();
        self.rows.clear();
        self.open = None;
    }
}

impl RowSink for RowBatch {
    fn begin_row(&mut self, row: &[u8]) {
        if let Some((keys, bytes, cells)) = self.open {
            // The row being filled was not kept: it had no returned cells.
            self.keys.truncate(keys);
            self.bytes.truncate(bytes);
            self.cells.truncate(cells);
        }
        self.open = Some((self.keys.len(), self.bytes.len(), self.cells.len()));
        self.keys.extend_from_slice(row);
    }

    fn push_cell(&mut self, family: &[u8], cell: &CellRef<'_>) {
        push_span(&mut self.bytes, &mut self.cells, family, cell);
    }

    fn cell_count(&self) -> usize {
        let open_from = self.open.map_or(self.cells.len(), |(_, _, cells)| cells);
        self.cells.len() - open_from
    }
}

/// Copies a cell's family, qualifier and value to the end of `bytes` and
/// records where they lie.
fn push_span(bytes: &mut Vec<u8>, cells: &mut Vec<CellSpan>, family: &[u8], cell: &CellRef<'_>) {
    let start = bytes.len();
    bytes.extend_from_slice(family);
    bytes.extend_from_slice(cell.qualifier);
    bytes.extend_from_slice(cell.value);
    cells.push(CellSpan {
        start,
        family_len: family.len(),
        qualifier_len: cell.qualifier.len(),
        value_len: cell.value.len(),
        timestamp: cell.timestamp,
        kind: cell.kind,
    });
}

impl RowSink for RowBuffer {
    fn begin_row(&mut self, row: &[u8]) {
        self.row.clear();
        self.row.extend_from_slice(row);
        self.bytes.clear();
        self.cells.clear();
    }

    fn push_cell(&mut self, family: &[u8], cell: &CellRef<'_>) {
        push_span(&mut self.bytes, &mut self.cells, family, cell);
    }

    fn cell_count(&self) -> usize {
        self.cells.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_hands_back_what_it_was_given_and_reuses_its_space() {
        let mut buffer = RowBuffer::default();
        for round in 0..3u8 {
            buffer.begin_row(b"row");
            for i in 0..4u8 {
                let qualifier = [b'q', i];
                let value = vec![round; usize::from(i)];
                buffer.push_cell(
                    b"f",
                    &CellRef {
                        row: b"row",
                        qualifier: &qualifier,
                        timestamp: i64::from(i),
                        kind: CellKind::Put,
                        sequence: 1,
                        value: &value,
                    },
                );
            }
            assert_eq!(buffer.row(), b"row");
            assert_eq!(buffer.len(), 4);
            let cells: Vec<_> = buffer.cells(0..4).collect();
            for (i, cell) in cells.iter().enumerate() {
                assert_eq!(cell.family, b"f");
                assert_eq!(cell.qualifier, [b'q', i as u8]);
                assert_eq!(cell.timestamp, i as i64);
                assert_eq!(cell.value, vec![round; i]);
            }
            assert!(buffer.cell(4).is_none());
        }
    }
}
