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

/// One cell of a [`RowBuffer`]: where its bytes lie in the buffer.
#[derive(Debug, Clone, Copy)]
struct CellSpan {
    /// Family, qualifier and value lie back to back from here.
    start: usize,
    family_len: usize,
    qualifier_len: usize,
    value_len: usize,
    timestamp: i64,
    kind: CellKind,
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

    /// Cell `i`.
    pub(crate) fn cell(&self, i: usize) -> Option<BufferedCell<'_>> {
        let span = self.cells.get(i)?;
        let family_end = span.start + span.family_len;
        let qualifier_end = family_end + span.qualifier_len;
        let value_end = qualifier_end + span.value_len;
        Some(BufferedCell {
            family: self.bytes.get(span.start..family_end)?,
            qualifier: self.bytes.get(family_end..qualifier_end)?,
            timestamp: span.timestamp,
            kind: span.kind,
            value: self.bytes.get(qualifier_end..value_end)?,
        })
    }

    /// The cells in `range`, in order.
    pub(crate) fn cells(&self, range: Range<usize>) -> impl Iterator<Item = BufferedCell<'_>> {
        range.filter_map(move |i| self.cell(i))
    }
}

impl RowSink for RowBuffer {
    fn begin_row(&mut self, row: &[u8]) {
        self.row.clear();
        self.row.extend_from_slice(row);
        self.bytes.clear();
        self.cells.clear();
    }

    fn push_cell(&mut self, family: &[u8], cell: &CellRef<'_>) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(family);
        self.bytes.extend_from_slice(cell.qualifier);
        self.bytes.extend_from_slice(cell.value);
        self.cells.push(CellSpan {
            start,
            family_len: family.len(),
            qualifier_len: cell.qualifier.len(),
            value_len: cell.value.len(),
            timestamp: cell.timestamp,
            kind: cell.kind,
        });
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
