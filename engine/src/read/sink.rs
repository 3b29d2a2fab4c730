//! Where a read puts the cells it returns.
//!
//! The region scanner resolves a row's cells as the sources stream them and
//! hands each returned cell to a [`RowSink`]: an owned `Vec<Cell>` for the
//! owned-row API, a reused [`RowBuffer`] for the borrowing cursor (no
//! allocation per row or cell once the buffer has grown to the widest row;
//! cells read straight from a cached block are not even copied: the buffer
//! holds the block and points into it), or a [`CellCount`] when only
//! whether a row has cells matters.

use std::ops::Range;

use crate::cell::{Cell, CellKind, CellRef, bytes_equal};
use crate::iter::block_row::{BlockCell, BlockRef, BlockRow, HeldBlock};

/// Receives the returned cells of one row, in order.
pub(crate) trait RowSink {
    /// Starts a row: drops the cells of the previous one.
    fn begin_row(&mut self, row: &[u8]);
    /// Starts `row`, a row lent from a cached block. Sinks that can lend
    /// from the block point the key into it instead of copying it; the
    /// others copy.
    #[inline]
    fn begin_block_row(&mut self, row: &BlockRow<'_>) {
        self.begin_row(row.key());
    }
    /// Starts `row`, a row of one cell (`cell`) lent from a cached block,
    /// and appends that cell when `returned`: what
    /// [`RowSink::begin_block_row`] and [`RowSink::push_block_cell`] do,
    /// in one call for the rows of a compacted store.
    #[inline]
    fn lone_cell_block_row(
        &mut self,
        family: &[u8],
        row: &BlockRow<'_>,
        cell: &BlockCell<'_>,
        returned: bool,
    ) {
        self.begin_block_row(row);
        if returned {
            self.push_block_cell(family, cell);
        }
    }
    /// Appends one returned cell of family `family`.
    fn push_cell(&mut self, family: &[u8], cell: &CellRef<'_>);
    /// Cells since the last [`RowSink::begin_row`].
    fn cell_count(&self) -> usize;
    /// Appends one returned cell of family `family` that lies in a cached
    /// block. Sinks that can lend from the block keep a reference to it
    /// instead of copying the cell's bytes; the others copy.
    #[inline]
    fn push_block_cell(&mut self, family: &[u8], cell: &BlockCell<'_>) {
        self.push_cell(family, cell.cell());
    }
    /// Starts a row that is `row` whole: its key and every cell, in order
    /// (a filtered scan returning a row as it was read). A [`RowBuffer`]
    /// shares the blocks `row` lends from instead of copying the cells.
    fn copy_row(&mut self, row: &RowBuffer) {
        self.begin_row(row.row());
        for cell in row.cells(0..row.len()) {
            self.push_cell(
                cell.family,
                &CellRef {
                    row: row.row(),
                    qualifier: cell.qualifier,
                    timestamp: cell.timestamp,
                    kind: cell.kind,
                    sequence: 0,
                    value: cell.value,
                },
            );
        }
    }
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

/// One buffered cell: where its bytes lie. The family is in the buffer's
/// own bytes; the qualifier and value are in the buffer's own bytes too
/// (`source` 0) or in the data of the `source`-th block the buffer holds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CellSpan {
    family: (usize, usize),
    qualifier: (usize, usize),
    value: (usize, usize),
    source: usize,
    timestamp: i64,
    kind: CellKind,
}

impl CellSpan {
    /// The cell's fields, from the bytes and blocks the span points into.
    #[inline]
    pub(crate) fn read<'a>(&self, bytes: &'a [u8], blocks: &'a [HeldBlock]) -> BufferedCell<'a> {
        let slice = |data: &'a [u8], (lo, hi): (usize, usize)| data.get(lo..hi).unwrap_or_default();
        let data = match self.source.checked_sub(1) {
            None => bytes,
            Some(block) => blocks.get(block).map_or(&[][..], |b| b.bytes()),
        };
        BufferedCell {
            family: slice(bytes, self.family),
            qualifier: slice(data, self.qualifier),
            timestamp: self.timestamp,
            kind: self.kind,
            value: slice(data, self.value),
        }
    }
}

/// Blocks a [`RowBuffer`] holds at most while it fills a row; a cell of a
/// further block is copied. (A row's block cells come from one block per
/// family, so this is only reached by rows of many families.)
const MAX_HELD_BLOCKS: usize = 4;

/// A row's key and cells in reused buffers: the key, and each cell's
/// qualifier and value, are copied into the buffer unless they lie in a
/// cached block, which the buffer then holds (the cursor API lends slices of
/// both); family names are copied into `bytes` once and kept from row to
/// row. Clearing keeps the capacity, so a scan allocates only while its
/// rows grow wider than any before; the blocks stay held from row to row
/// (a scan reads many rows of one block) until a row needs room for others.
#[derive(Debug, Default)]
pub(crate) struct RowBuffer {
    /// The row key, when it is not in a held block.
    row: Vec<u8>,
    /// The row key's block (its source index, see [`CellSpan`]) and span in
    /// it, when it lies in one.
    row_in_block: Option<(usize, (usize, usize))>,
    /// Family names kept from row to row (`bytes[..families_end]`), then the
    /// row's copied bytes.
    bytes: Vec<u8>,
    /// The end of the kept family names in `bytes`.
    families_end: usize,
    /// Where each kept family name lies in `bytes`.
    families: smallvec::SmallVec<[(usize, usize); MAX_KEPT_FAMILIES]>,
    cells: Vec<CellSpan>,
    blocks: Vec<HeldBlock>,
}

/// Family names a [`RowBuffer`] keeps from row to row; a row of further
/// families copies their names for that row only.
const MAX_KEPT_FAMILIES: usize = 8;

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
    #[inline]
    pub(crate) fn row(&self) -> &[u8] {
        match self.row_in_block {
            None => &self.row,
            Some((source, (lo, hi))) => self
                .blocks
                .get(source - 1)
                .and_then(|block| block.bytes().get(lo..hi))
                .unwrap_or_default(),
        }
    }

    /// Drops the previous row's key and cells, keeping the family names
    /// and (while there is room for more) the held blocks.
    #[inline]
    fn clear_row(&mut self) {
        self.row_in_block = None;
        self.bytes.truncate(self.families_end);
        self.cells.clear();
    }

    /// Number of cells.
    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }

    /// The cells' spans (into [`RowBuffer::bytes`] and
    /// [`RowBuffer::blocks`]).
    pub(crate) fn spans(&self) -> &[CellSpan] {
        &self.cells
    }

    /// The bytes the spans point into.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The blocks the spans point into.
    pub(crate) fn blocks(&self) -> &[HeldBlock] {
        &self.blocks
    }

    /// Cell `i`.
    pub(crate) fn cell(&self, i: usize) -> Option<BufferedCell<'_>> {
        Some(self.cells.get(i)?.read(&self.bytes, &self.blocks))
    }

    /// The cells in `range`, in order.
    pub(crate) fn cells(&self, range: Range<usize>) -> impl Iterator<Item = BufferedCell<'_>> {
        range.filter_map(move |i| self.cell(i))
    }

    /// Where `family` lies in the buffer's bytes: the previous cell's family
    /// when it is the same (a row's cells come family by family), else a
    /// kept name, else a fresh copy (kept when no row bytes follow the kept
    /// names yet and there is room).
    #[inline]
    fn family_span(&mut self, family: &[u8]) -> (usize, usize) {
        let last = match self.cells.last() {
            Some(cell) => cell.family,
            // A row's first cell: usually of the first kept family.
            None => self.families.first().copied().unwrap_or_default(),
        };
        if self
            .bytes
            .get(last.0..last.1)
            .is_some_and(|kept| bytes_equal(kept, family))
        {
            return last;
        }
        self.other_family_span(family)
    }

    /// [`RowBuffer::family_span`] for a family other than the previous
    /// cell's (or the first kept one).
    #[inline(never)]
    fn other_family_span(&mut self, family: &[u8]) -> (usize, usize) {
        if let Some(&kept) = self
            .families
            .iter()
            .find(|&&(lo, hi)| self.bytes.get(lo..hi) == Some(family))
        {
            return kept;
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(family);
        let span = (start, self.bytes.len());
        if start == self.families_end && self.families.len() < MAX_KEPT_FAMILIES {
            self.families_end = span.1;
            self.families.push(span);
        }
        span
    }

    /// The source index of `block` (see [`CellSpan`]), holding it if it is
    /// not yet held; `None` when the buffer holds as many as it may.
    #[inline]
    fn block_source(&mut self, block: BlockRef<'_>) -> Option<usize> {
        // Usually the block held last (a scan reads a block's rows in turn).
        if let Some(last) = self.blocks.last()
            && last.is(block)
        {
            return Some(self.blocks.len());
        }
        self.other_block_source(block)
    }

    /// [`RowBuffer::block_source`] for a block other than the one held last.
    #[inline(never)]
    fn other_block_source(&mut self, block: BlockRef<'_>) -> Option<usize> {
        if let Some(i) = self.blocks.iter().position(|b| b.is(block)) {
            return Some(i + 1);
        }
        if self.blocks.len() >= MAX_HELD_BLOCKS {
            return None;
        }
        self.blocks.push(block.hold());
        Some(self.blocks.len())
    }

    /// Appends `cell`, which lies in the block held as source `source`,
    /// pointing into the block.
    #[inline]
    fn push_lent_cell(&mut self, family: &[u8], cell: &BlockCell<'_>, source: usize) {
        let family = self.family_span(family);
        let fields = cell.cell();
        self.cells.push(CellSpan {
            family,
            qualifier: cell.qualifier_span(),
            value: cell.value_span(),
            source,
            timestamp: fields.timestamp,
            kind: fields.kind,
        });
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
    let mut copy = |field: &[u8]| {
        let start = bytes.len();
        bytes.extend_from_slice(field);
        (start, bytes.len())
    };
    let family = copy(family);
    let qualifier = copy(cell.qualifier);
    let value = copy(cell.value);
    cells.push(CellSpan {
        family,
        qualifier,
        value,
        source: 0,
        timestamp: cell.timestamp,
        kind: cell.kind,
    });
}

impl RowSink for RowBuffer {
    fn begin_row(&mut self, row: &[u8]) {
        self.clear_row();
        self.row.clear();
        self.row.extend_from_slice(row);
        if self.blocks.len() >= MAX_HELD_BLOCKS {
            // Nothing points into them any more: make room.
            self.blocks.clear();
        }
    }

    #[inline]
    fn begin_block_row(&mut self, row: &BlockRow<'_>) {
        self.clear_row();
        let block = row.block();
        if self.blocks.len() >= MAX_HELD_BLOCKS
            && !self.blocks.last().is_some_and(|last| last.is(block))
        {
            // Nothing points into them any more: make room.
            self.blocks.clear();
        }
        match self.block_source(block) {
            Some(source) => self.row_in_block = Some((source, row.key_span())),
            None => {
                self.row.clear();
                self.row.extend_from_slice(row.key());
            }
        }
    }

    fn copy_row(&mut self, row: &RowBuffer) {
        // The spans stay valid: they index the copied bytes and the shared
        // blocks, in the same order. A block this buffer already holds at
        // the same place (the usual case: consecutive rows of one block) is
        // kept without touching its count.
        self.row_in_block = row.row_in_block;
        if row.row_in_block.is_none() {
            self.row.clone_from(&row.row);
        }
        self.bytes.clone_from(&row.bytes);
        self.families_end = row.families_end;
        self.families.clone_from(&row.families);
        self.cells.clone_from(&row.cells);
        self.blocks.truncate(row.blocks.len());
        for (i, block) in row.blocks.iter().enumerate() {
            match self.blocks.get_mut(i) {
                Some(held) if held.same_as(block) => {}
                Some(held) => *held = block.clone(),
                None => self.blocks.push(block.clone()),
            }
        }
    }

    fn push_cell(&mut self, family: &[u8], cell: &CellRef<'_>) {
        let family = self.family_span(family);
        let start = self.bytes.len();
        self.bytes.extend_from_slice(cell.qualifier);
        let qualifier = (start, self.bytes.len());
        self.bytes.extend_from_slice(cell.value);
        let value = (qualifier.1, self.bytes.len());
        self.cells.push(CellSpan {
            family,
            qualifier,
            value,
            source: 0,
            timestamp: cell.timestamp,
            kind: cell.kind,
        });
    }

    #[inline]
    fn push_block_cell(&mut self, family: &[u8], cell: &BlockCell<'_>) {
        let Some(source) = self.block_source(cell.block()) else {
            self.push_cell(family, cell.cell());
            return;
        };
        self.push_lent_cell(family, cell, source);
    }

    #[inline]
    fn lone_cell_block_row(
        &mut self,
        family: &[u8],
        row: &BlockRow<'_>,
        cell: &BlockCell<'_>,
        returned: bool,
    ) {
        self.clear_row();
        // Any held block, not only the last: a run over several files
        // takes its rows from each file's block in turn (at most
        // MAX_HELD_BLOCKS pointers to compare).
        let block = row.block();
        let source = match self.blocks.iter().rposition(|b| b.is(block)) {
            Some(i) => i + 1,
            None => {
                self.begin_block_row(row);
                if returned {
                    self.push_block_cell(family, cell);
                }
                return;
            }
        };
        self.row_in_block = Some((source, cell.row_span()));
        if returned {
            self.push_lent_cell(family, cell, source);
        }
    }

    fn cell_count(&self) -> usize {
        self.cells.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::hfile::data_block::DataBlock;
    use std::sync::Arc;

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

    /// A block of `cells` cells of row "r", qualifier `q<i>`, value `v<i>`
    /// followed by `tag`.
    fn block(tag: u8, cells: u8) -> Arc<DataBlock> {
        let mut builder = crate::hfile::data_block::DataBlockBuilder::default();
        for i in 0..cells {
            builder.add(&CellRef {
                row: b"r",
                qualifier: &[b'q', i],
                timestamp: 1,
                kind: CellKind::Put,
                sequence: 1,
                value: &[b'v', i, tag],
            });
        }
        Arc::new(DataBlock::decode(builder.finish_block(false)).unwrap())
    }

    /// A block of `rows` rows `r<i>` of one cell each (qualifier `q<i>`,
    /// value `v<i>`).
    fn rows_block(rows: u8) -> Arc<DataBlock> {
        let mut builder = crate::hfile::data_block::DataBlockBuilder::default();
        for i in 0..rows {
            builder.add(&CellRef {
                row: &[b'r', i],
                qualifier: &[b'q', i],
                timestamp: 1,
                kind: CellKind::Put,
                sequence: 1,
                value: &[b'v', i],
            });
        }
        Arc::new(DataBlock::decode(builder.finish_block(false)).unwrap())
    }

    fn lone_row_from(
        buffer: &mut RowBuffer,
        family: &[u8],
        block: &Arc<DataBlock>,
        row: usize,
        returned: bool,
    ) {
        let row = BlockRow::whole(block, row);
        let cell = row.cells().next().unwrap();
        buffer.lone_cell_block_row(family, &row, &cell, returned);
    }

    #[test]
    fn row_keys_are_lent_from_blocks_and_family_names_kept_from_row_to_row() {
        let mut buffer = RowBuffer::default();
        let first = rows_block(3);
        let second = rows_block(2);
        for (row, returned) in [(0, true), (1, true), (2, false)] {
            lone_row_from(&mut buffer, b"fam", &first, row, returned);
            assert_eq!(buffer.row(), [b'r', row as u8]);
            assert_eq!(buffer.len(), usize::from(returned));
            if returned {
                let cell = buffer.cell(0).unwrap();
                assert_eq!(
                    (cell.family, cell.qualifier, cell.value),
                    (&b"fam"[..], &[b'q', row as u8][..], &[b'v', row as u8][..])
                );
            }
            // Nothing copied but the family name, once.
            assert_eq!(buffer.bytes(), b"fam");
            assert_eq!(buffer.blocks().len(), 1);
        }
        // Another block's row, then a row with a copied key and a second
        // family, which is kept too.
        lone_row_from(&mut buffer, b"fam", &second, 1, true);
        assert_eq!(buffer.row(), b"r\x01");
        assert_eq!(buffer.blocks().len(), 2);
        buffer.begin_row(b"owned");
        buffer.push_cell(
            b"g",
            &CellRef {
                row: b"owned",
                qualifier: b"q",
                timestamp: 1,
                kind: CellKind::Put,
                sequence: 1,
                value: b"v",
            },
        );
        assert_eq!(buffer.row(), b"owned");
        assert_eq!(buffer.bytes(), b"famgqv");
        buffer.begin_row(b"next");
        assert_eq!(buffer.bytes(), b"famg");
        // Families past the kept ones are copied for their row only.
        for family in 0..MAX_KEPT_FAMILIES as u8 + 2 {
            push_from(&mut buffer, &[b'x', family], &first, 0);
        }
        assert_eq!(buffer.cell(0).unwrap().family, b"x\x00");
        assert_eq!(buffer.cell(9).unwrap().family, b"x\x09");
        buffer.begin_row(b"last");
        assert_eq!(buffer.bytes().len(), 4 + 2 * (MAX_KEPT_FAMILIES - 2));
    }

    /// A run over three files takes its rows from their blocks in turn:
    /// each row is lent from the block it is in, whichever block was held
    /// last, and no block is held twice.
    #[test]
    fn rows_alternating_between_held_blocks_are_lent_from_each() {
        let mut buffer = RowBuffer::default();
        let blocks = [rows_block(4), rows_block(4), rows_block(4)];
        for row in 0..4 {
            for (b, block) in blocks.iter().enumerate() {
                lone_row_from(&mut buffer, b"fam", block, row, true);
                assert_eq!(buffer.row(), [b'r', row as u8]);
                let spans = buffer.spans();
                assert_eq!(spans.len(), 1);
                assert!(buffer.blocks()[spans[0].source - 1].is(BlockRef::new(block)));
                assert_eq!(buffer.cell(0).unwrap().value, [b'v', row as u8]);
                assert_eq!(buffer.blocks().len(), if row == 0 { b + 1 } else { 3 });
                assert_eq!(buffer.bytes(), b"fam");
            }
        }
    }

    /// A row copied whole shares the blocks its cells are lent from (no
    /// value is copied) and reads back the same, key, cells and all; the
    /// copy keeps the blocks it already holds from row to row, and a sink
    /// that cannot lend gets the same cells as copies.
    #[test]
    fn a_row_copied_whole_shares_its_blocks() {
        let first = rows_block(3);
        let second = block(7, 2);
        let mut input = RowBuffer::default();
        let mut output = RowBuffer::default();
        lone_row_from(&mut input, b"fam", &first, 0, true);
        output.copy_row(&input);
        assert_eq!(output.row(), b"r\x00");
        assert_eq!(output.blocks().len(), 1);
        assert!(output.blocks()[0].same_as(&input.blocks()[0]));
        assert_eq!(output.bytes(), b"fam", "nothing but the family copied");
        let cell = output.cell(0).unwrap();
        assert_eq!((cell.qualifier, cell.value), (&b"q\x00"[..], &b"v\x00"[..]));
        let held = Arc::strong_count(&first);
        lone_row_from(&mut input, b"fam", &first, 1, true);
        output.copy_row(&input);
        assert_eq!(Arc::strong_count(&first), held, "the same block, kept");
        assert_eq!(output.row(), b"r\x01");

        // A row with a copied key, a lent cell of another block and a
        // copied cell.
        input.begin_row(b"owned");
        push_from(&mut input, b"fam", &second, 1);
        input.push_cell(
            b"g",
            &CellRef {
                row: b"owned",
                qualifier: b"q",
                timestamp: 5,
                kind: CellKind::Put,
                sequence: 1,
                value: b"copied",
            },
        );
        output.copy_row(&input);
        let read = |buffer: &RowBuffer| {
            buffer
                .cells(0..buffer.len())
                .map(|c| {
                    (
                        c.family.to_vec(),
                        c.qualifier.to_vec(),
                        c.timestamp,
                        c.value.to_vec(),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(output.row(), b"owned");
        assert_eq!(read(&output), read(&input));
        assert_eq!(read(&output)[0].3, b"v\x01\x07");
        let mut owned: Vec<Cell> = Vec::new();
        owned.copy_row(&input);
        let owned: Vec<_> = owned
            .iter()
            .map(|c| {
                (
                    c.family.clone(),
                    c.qualifier.clone(),
                    c.timestamp,
                    c.value.clone(),
                )
            })
            .collect();
        assert_eq!(owned, read(&input));
    }

    fn push_from(buffer: &mut RowBuffer, family: &[u8], block: &Arc<DataBlock>, i: usize) {
        let cell = BlockRow::whole(block, 0).cell(i);
        buffer.push_block_cell(family, &cell);
    }

    #[test]
    fn block_cells_point_into_the_held_block_and_copy_beyond_the_bound() {
        let mut buffer = RowBuffer::default();
        let blocks: Vec<_> = (0..MAX_HELD_BLOCKS as u8 + 2)
            .map(|t| block(t, 3))
            .collect();
        buffer.begin_row(b"r");
        // Cells of one family from one block: no copy of qualifier or
        // value, one copy of the family.
        for i in 0..3 {
            push_from(&mut buffer, b"fam", &blocks[0], i);
        }
        assert_eq!(buffer.bytes(), b"fam");
        assert_eq!(buffer.blocks().len(), 1);
        // One cell from each further block: held up to the bound, copied
        // beyond it.
        for (b, block) in blocks.iter().enumerate().skip(1) {
            push_from(&mut buffer, format!("f{b}").as_bytes(), block, 1);
        }
        assert_eq!(buffer.blocks().len(), MAX_HELD_BLOCKS);
        let cells: Vec<_> = buffer.cells(0..buffer.len()).collect();
        assert_eq!(cells.len(), 3 + blocks.len() - 1);
        for (i, cell) in cells.iter().take(3).enumerate() {
            assert_eq!(cell.family, b"fam");
            assert_eq!(cell.qualifier, [b'q', i as u8]);
            assert_eq!(cell.value, [b'v', i as u8, 0]);
        }
        for (b, cell) in cells.iter().skip(3).enumerate() {
            let b = b + 1;
            assert_eq!(cell.family, format!("f{b}").as_bytes());
            assert_eq!(cell.qualifier, [b'q', 1]);
            assert_eq!(cell.value, [b'v', 1, b as u8]);
        }
        // The next row starts with room for new blocks; a block held from
        // row to row is found again, not held twice.
        buffer.begin_row(b"s");
        assert!(buffer.blocks().is_empty());
        push_from(&mut buffer, b"fam", &blocks[0], 2);
        buffer.begin_row(b"t");
        push_from(&mut buffer, b"fam", &blocks[0], 0);
        assert_eq!(buffer.blocks().len(), 1);
        let cell = buffer.cell(0).unwrap();
        assert_eq!(
            (cell.qualifier, cell.value),
            (&b"q\x00"[..], &b"v\x00\x00"[..])
        );
    }
}
