//! Data blocks, laid out for vectorized filtering (`docs/format.md`,
//! "HFile: data blocks").
//!
//! A block holds whole cells of consecutive rows (a wide row may continue in
//! the next block). Each row key is stored once; when all row keys of the
//! block have the same length they form a dense `rows x width` matrix, so a
//! row-key kernel can test every row of the block without decoding a cell.
//! Cell fields are separate columns:
//!
//! ```text
//! row count u32 | cell count u32 | flags u32
//! row keys            bytes column (rows)
//! row cell starts     int column (rows + 1)    absent when every row has one cell
//! qualifiers          bytes column (cells)
//! timestamps          int column (cells)
//! kinds               int column (cells)
//! sequences           int column (cells)
//! values              bytes column (cells)
//! ```

use std::cmp::Ordering;

use super::block::{BytesColumn, IntColumn, encode_ints_in_range, width_for};
use super::partition_point;
use crate::cell::SeekKey;
use crate::cell::{CellKind, CellRef, bytes_equal, compare_bytes, compare_keys};
use crate::codec::{DecodeError, Decoder, Encode};

/// Flag: every row has exactly one cell (the row-starts column is absent).
const FLAG_ONE_CELL_PER_ROW: u32 = 1;
/// Flag: the block's last row has no cells in the next block of its file
/// (set by the writer, which knows the next cell when it cuts a block).
/// Without it a reader must assume the last row may go on.
const FLAG_LAST_ROW_ENDS: u32 = 2;

/// Collects cells (in store order) into one block's payload.
#[derive(Default)]
pub(crate) struct DataBlockBuilder {
    row_keys: Vec<u8>,
    row_key_ends: Vec<usize>,
    /// Index of each row's first cell.
    row_starts: Vec<u64>,
    qualifiers: Vec<u8>,
    qualifier_ends: Vec<usize>,
    timestamps: Vec<u64>,
    kinds: Vec<u64>,
    sequences: Vec<u64>,
    values: Vec<u8>,
    value_ends: Vec<usize>,
    /// Value ranges of the integer columns, for the payload size.
    ranges: ColumnRanges,
}

/// The smallest and largest value of each integer column of a block
/// (`None` while the column is empty).
#[derive(Debug, Clone, Copy, Default)]
struct ColumnRanges {
    row_len: Option<(u64, u64)>,
    qualifier_len: Option<(u64, u64)>,
    timestamp: Option<(u64, u64)>,
    kind: Option<(u64, u64)>,
    sequence: Option<(u64, u64)>,
    value_len: Option<(u64, u64)>,
}

fn widen(range: &mut Option<(u64, u64)>, value: u64) {
    *range = Some(match *range {
        Some((lo, hi)) => (lo.min(value), hi.max(value)),
        None => (value, value),
    });
}

impl ColumnRanges {
    fn include(&mut self, cell: &CellRef<'_>, new_row: bool) {
        if new_row {
            widen(&mut self.row_len, cell.row.len() as u64);
        }
        widen(&mut self.qualifier_len, cell.qualifier.len() as u64);
        // Timestamps are >= 0 (validated on write), so the cast is lossless.
        widen(&mut self.timestamp, cell.timestamp as u64);
        widen(&mut self.kind, u64::from(cell.kind.code()));
        widen(&mut self.sequence, cell.sequence);
        widen(&mut self.value_len, cell.value.len() as u64);
    }
}

impl DataBlockBuilder {
    /// True when no cell was added since the last `finish`.
    pub(crate) fn is_empty(&self) -> bool {
        self.timestamps.is_empty()
    }

    /// The last row key added.
    pub(crate) fn last_row(&self) -> &[u8] {
        let end = self.row_key_ends.last().copied().unwrap_or(0);
        let start = self
            .row_key_ends
            .len()
            .checked_sub(2)
            .map_or(0, |i| self.row_key_ends[i]);
        self.row_keys.get(start..end).unwrap_or_default()
    }

    /// The first row key added.
    pub(crate) fn first_row(&self) -> &[u8] {
        let end = self.row_key_ends.first().copied().unwrap_or(0);
        self.row_keys.get(..end).unwrap_or_default()
    }

    /// Bytes the payload will take (exact: the integer columns' widths
    /// follow from the ranges of their values).
    pub(crate) fn estimated_bytes(&self) -> usize {
        self.payload_bytes(
            &self.ranges,
            self.row_key_ends.len(),
            self.timestamps.len(),
            0,
        )
    }

    /// Bytes the payload would take with `cell` added. `new_row` says the
    /// cell starts a row of the block ([`DataBlockBuilder::starts_row`]).
    pub(crate) fn estimated_bytes_with(&self, cell: &CellRef<'_>, new_row: bool) -> usize {
        let mut ranges = self.ranges;
        ranges.include(cell, new_row);
        let rows = self.row_key_ends.len() + usize::from(new_row);
        let added =
            cell.qualifier.len() + cell.value.len() + if new_row { cell.row.len() } else { 0 };
        self.payload_bytes(&ranges, rows, self.timestamps.len() + 1, added)
    }

    /// True when `cell` would start a row of the block: the block is empty
    /// or its last row is another. A writer that knows this already (it
    /// compares each cell with the file's last row) passes that on instead.
    pub(crate) fn starts_row(&self, cell: &CellRef<'_>) -> bool {
        self.row_key_ends.is_empty() || !bytes_equal(self.last_row(), cell.row)
    }

    /// The payload size of `rows` rows and `cells` cells whose integer
    /// columns span `ranges`, with `extra` more key, qualifier and value
    /// bytes than the builder holds. Mirrors `finish`.
    fn payload_bytes(
        &self,
        ranges: &ColumnRanges,
        rows: usize,
        cells: usize,
        extra: usize,
    ) -> usize {
        // An integer column: base u64 and width u8, then the values.
        let ints = |count: usize, range: Option<(u64, u64)>| {
            9 + count * usize::from(range.map_or(0, |(lo, hi)| width_for(hi - lo)))
        };
        let row_starts = if rows == cells {
            0
        } else {
            ints(rows + 1, Some((0, cells as u64)))
        };
        12 + ints(rows, ranges.row_len)
            + row_starts
            + ints(cells, ranges.qualifier_len)
            + ints(cells, ranges.timestamp)
            + ints(cells, ranges.kind)
            + ints(cells, ranges.sequence)
            + ints(cells, ranges.value_len)
            + self.row_keys.len()
            + self.qualifiers.len()
            + self.values.len()
            + extra
    }

    /// Adds a cell; cells must come in store order. (The file writer adds
    /// cells with [`DataBlockBuilder::add_known`]; this is for tests and
    /// the block builders of the fuzz targets and micro-benchmarks.)
    #[cfg(any(test, feature = "fuzzing", feature = "internals"))]
    pub(crate) fn add(&mut self, cell: &CellRef<'_>) {
        let new_row = self.starts_row(cell);
        self.add_known(cell, new_row);
    }

    /// Adds a cell that starts a row of the block exactly when `new_row`
    /// (as [`DataBlockBuilder::starts_row`] would say); cells must come in
    /// store order.
    pub(crate) fn add_known(&mut self, cell: &CellRef<'_>, new_row: bool) {
        debug_assert_eq!(new_row, self.starts_row(cell));
        self.ranges.include(cell, new_row);
        if new_row {
            self.row_keys.extend_from_slice(cell.row);
            self.row_key_ends.push(self.row_keys.len());
            self.row_starts.push(self.timestamps.len() as u64);
        }
        self.qualifiers.extend_from_slice(cell.qualifier);
        self.qualifier_ends.push(self.qualifiers.len());
        // Timestamps are >= 0 (validated on write), so the cast is lossless.
        self.timestamps.push(cell.timestamp as u64);
        self.kinds.push(u64::from(cell.kind.code()));
        self.sequences.push(cell.sequence);
        self.values.extend_from_slice(cell.value);
        self.value_ends.push(self.values.len());
    }

    /// Encodes the block payload and resets the builder. `last_row_ends`
    /// says the block's last row has no cells in the next block of the file
    /// (readers may then treat it like any other row: a scan's block run
    /// reads it without the merge); false when that is not known.
    #[cfg(any(test, feature = "fuzzing", feature = "internals"))]
    pub(crate) fn finish_block(&mut self, last_row_ends: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.estimated_bytes() + 64);
        self.finish_block_into(last_row_ends, &mut out);
        out
    }

    /// As [`DataBlockBuilder::finish_block`], appending the payload to
    /// `out` (a writer's file buffer, where it is then framed in place).
    /// The builder keeps its buffers' capacity for the next block: a
    /// fresh builder per block regrew eleven vectors every 14 KiB.
    pub(crate) fn finish_block_into(&mut self, last_row_ends: bool, out: &mut Vec<u8>) {
        let rows = self.row_key_ends.len();
        let cells = self.timestamps.len();
        let one_cell_per_row = rows == cells;
        out.reserve(self.estimated_bytes());
        out.put_u32(rows as u32);
        out.put_u32(cells as u32);
        let mut flags = 0;
        if one_cell_per_row {
            flags |= FLAG_ONE_CELL_PER_ROW;
        }
        if last_row_ends {
            flags |= FLAG_LAST_ROW_ENDS;
        }
        out.put_u32(flags);
        let ranges = self.ranges;
        encode_concatenated(&self.row_keys, &self.row_key_ends, ranges.row_len, out);
        if !one_cell_per_row {
            let starts = self.row_starts.iter().copied().chain([cells as u64]);
            encode_ints_in_range(starts, rows + 1, Some((0, cells as u64)), out);
        }
        encode_concatenated(
            &self.qualifiers,
            &self.qualifier_ends,
            ranges.qualifier_len,
            out,
        );
        encode_ints_in_range(
            self.timestamps.iter().copied(),
            cells,
            ranges.timestamp,
            out,
        );
        encode_ints_in_range(self.kinds.iter().copied(), cells, ranges.kind, out);
        encode_ints_in_range(self.sequences.iter().copied(), cells, ranges.sequence, out);
        encode_concatenated(&self.values, &self.value_ends, ranges.value_len, out);
        self.clear();
    }

    /// Empties the builder, keeping its buffers.
    fn clear(&mut self) {
        self.row_keys.clear();
        self.row_key_ends.clear();
        self.row_starts.clear();
        self.qualifiers.clear();
        self.qualifier_ends.clear();
        self.timestamps.clear();
        self.kinds.clear();
        self.sequences.clear();
        self.values.clear();
        self.value_ends.clear();
        self.ranges = ColumnRanges::default();
    }
}

/// Appends a byte-string column (as [`super::block::encode_bytes`] would)
/// of the items `data` holds back to back, item `i` ending at `ends[i]`;
/// `lengths` is the smallest and largest item length.
fn encode_concatenated(
    data: &[u8],
    ends: &[usize],
    lengths: Option<(u64, u64)>,
    out: &mut Vec<u8>,
) {
    let item_lengths = ends.iter().scan(0, |previous_end, &end| {
        let len = end - *previous_end;
        *previous_end = end;
        Some(len as u64)
    });
    encode_ints_in_range(item_lengths, ends.len(), lengths, out);
    out.extend_from_slice(data);
}

/// A decoded data block, as the block cache holds it.
#[derive(Debug)]
pub(crate) struct DataBlock {
    /// The payload, in the buffer it was read into: its capacity may exceed
    /// its length by the frame's trailer, kept rather than shrunk (a shrink
    /// can move the block).
    data: Vec<u8>,
    rows: usize,
    cells: usize,
    row_keys: BytesColumn,
    /// `None` when every row has exactly one cell.
    row_starts: Option<IntColumn>,
    /// The last row has no cells in the file's next block
    /// ([`FLAG_LAST_ROW_ENDS`]).
    last_row_ends: bool,
    qualifiers: BytesColumn,
    timestamps: IntColumn,
    kinds: IntColumn,
    sequences: IntColumn,
    values: BytesColumn,
    /// No cell is a delete marker and no two cells of a row share a
    /// qualifier: every column of every row has one version here, so each
    /// cell's fate in a read is its own (found while checking the order).
    one_version_per_column: bool,
}

/// A cell of a block with its fields decoded: byte spans of the slices
/// and the integers. A cursor decodes its cell once per move and reads it
/// many times (the merge, the resolver and the row loop each look).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DecodedCell {
    row: (usize, usize),
    qualifier: (usize, usize),
    value: (usize, usize),
    timestamp: i64,
    kind: CellKind,
    sequence: u64,
}

impl DecodedCell {
    /// Where the row key lies in the block's bytes ([`DataBlock::bytes`]).
    #[inline]
    pub(crate) fn row_span(&self) -> (usize, usize) {
        self.row
    }

    /// Where the qualifier lies in the block's bytes ([`DataBlock::bytes`]).
    #[inline]
    pub(crate) fn qualifier_span(&self) -> (usize, usize) {
        self.qualifier
    }

    /// Where the value lies in the block's bytes.
    #[inline]
    pub(crate) fn value_span(&self) -> (usize, usize) {
        self.value
    }
}

/// A cell position inside a block: row index and cell index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) row: usize,
    pub(crate) cell: usize,
}

impl DataBlock {
    /// Decodes and validates a payload, so that later accessors never see an
    /// inconsistent block.
    pub(crate) fn decode(payload: Vec<u8>) -> Result<DataBlock, DecodeError> {
        let data = payload;
        let mut d = Decoder::new(&data);
        let rows = d.u32()? as usize;
        let cells = d.u32()? as usize;
        let flags = d.u32()?;
        if rows > cells || (rows == 0) != (cells == 0) {
            return Err(DecodeError(format!(
                "block has {rows} rows and {cells} cells"
            )));
        }
        let row_keys = BytesColumn::parse(&mut d, rows, &data)?;
        let row_starts = if flags & FLAG_ONE_CELL_PER_ROW != 0 {
            if rows != cells {
                return Err(DecodeError(
                    "one-cell-per-row block with more cells than rows".into(),
                ));
            }
            None
        } else {
            let starts = IntColumn::parse(&mut d, rows + 1)?;
            let mut previous = 0;
            for i in 0..=rows {
                let s = starts.get(&data, i);
                let valid = if i == 0 {
                    s == 0
                } else {
                    s > previous && s <= cells as u64
                };
                if !valid {
                    return Err(DecodeError(format!("row start {i} is {s}")));
                }
                previous = s;
            }
            if previous != cells as u64 {
                return Err(DecodeError(
                    "row starts do not end at the cell count".into(),
                ));
            }
            Some(starts)
        };
        let qualifiers = BytesColumn::parse(&mut d, cells, &data)?;
        let timestamps = IntColumn::parse(&mut d, cells)?;
        let kinds = IntColumn::parse(&mut d, cells)?;
        // A constant column costs no bytes per cell, so the cell count is not
        // bounded by the payload: check a constant column once, not once per
        // cell (check_order then refuses the equal keys at the second cell).
        let checked_cells = |column: &IntColumn| {
            if column.is_constant() {
                cells.min(1)
            } else {
                cells
            }
        };
        for i in 0..checked_cells(&kinds) {
            let code = kinds.get(&data, i);
            if u8::try_from(code)
                .ok()
                .and_then(CellKind::from_code)
                .is_none()
            {
                return Err(DecodeError(format!("cell {i} has kind {code}")));
            }
        }
        for i in 0..checked_cells(&timestamps) {
            if i64::try_from(timestamps.get(&data, i)).is_err() {
                return Err(DecodeError(format!("cell {i} has a negative timestamp")));
            }
        }
        let sequences = IntColumn::parse(&mut d, cells)?;
        let values = BytesColumn::parse(&mut d, cells, &data)?;
        if !d.is_empty() {
            return Err(DecodeError(
                "trailing bytes after the block's columns".into(),
            ));
        }
        let mut block = DataBlock {
            rows,
            cells,
            row_keys,
            row_starts,
            last_row_ends: flags & FLAG_LAST_ROW_ENDS != 0,
            qualifiers,
            timestamps,
            kinds,
            sequences,
            values,
            data,
            one_version_per_column: false,
        };
        block.one_version_per_column = block.check_order()?;
        Ok(block)
    }

    /// Gives every cell the sequence `sequence`: a bulk-loaded file's cells
    /// are written with sequence 0 and read with the one its load assigned.
    pub(crate) fn assign_sequence(&mut self, sequence: u64) {
        self.sequences = IntColumn::constant(sequence, self.cells);
    }

    /// Cells must be in strictly ascending store order: row keys strictly
    /// ascending from row to row (each is stored once per block), and within
    /// a row qualifier ascending, then timestamp, kind and sequence
    /// descending. Adjacent row keys are compared directly, without
    /// decoding cells, and a block of one cell per row has nothing more to
    /// check (a block's first read costs this; it was most of that cost).
    ///
    /// Returns whether every column of every row has one version here and
    /// no cell is a marker ([`DataBlock::one_version_per_column`]).
    fn check_order(&self) -> Result<bool, DecodeError> {
        for row in 1..self.rows {
            if compare_bytes(self.row(row - 1), self.row(row)) != Ordering::Less {
                return Err(DecodeError(format!("rows out of order at row {row}")));
            }
        }
        let data = &self.data;
        let put = u64::from(CellKind::Put.code());
        let all_puts = if self.kinds.is_constant() {
            self.cells == 0 || self.kinds.get(data, 0) == put
        } else {
            (0..self.cells).all(|cell| self.kinds.get(data, cell) == put)
        };
        if self.row_starts.is_none() {
            return Ok(all_puts);
        }
        let mut distinct_qualifiers = true;
        // After the qualifier: timestamp, kind and sequence, each descending.
        // Read only for cells sharing a qualifier (a version of the same
        // column), not for every cell: this check runs on every block read.
        let version = |cell: usize| {
            (
                std::cmp::Reverse(self.timestamps.get(data, cell) as i64),
                std::cmp::Reverse(self.kinds.get(data, cell)),
                std::cmp::Reverse(self.sequences.get(data, cell)),
            )
        };
        for row in 0..self.rows {
            let cells = self.row_cells(row);
            let mut before = self.qualifiers.get(data, cells.start);
            for cell in cells.start + 1..cells.end {
                let this = self.qualifiers.get(data, cell);
                let ordered = match compare_bytes(before, this) {
                    Ordering::Less => true,
                    Ordering::Greater => false,
                    Ordering::Equal => {
                        distinct_qualifiers = false;
                        version(cell - 1) < version(cell)
                    }
                };
                if !ordered {
                    return Err(DecodeError(format!("cells out of order at cell {cell}")));
                }
                before = this;
            }
        }
        Ok(all_puts && distinct_qualifiers)
    }

    /// No cell is a delete marker and no two cells of a row share a
    /// qualifier: a read decides each cell of a row here by itself.
    #[inline]
    pub(crate) fn one_version_per_column(&self) -> bool {
        self.one_version_per_column
    }

    /// Every cell's timestamp, in order, into `out` (cleared first).
    pub(crate) fn timestamps_into(&self, out: &mut Vec<i64>) {
        out.clear();
        // Timestamps were checked to fit an i64 when the block was decoded.
        out.extend((0..self.cells).map(|i| self.timestamps.get(&self.data, i) as i64));
    }

    /// The block's bytes, which [`DecodedCell`]'s spans index.
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// Number of cells.
    pub(crate) fn cells(&self) -> usize {
        self.cells
    }

    /// Memory the block holds, for cache weights.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.data.capacity()
            + self.row_keys.heap_bytes()
            + self.qualifiers.heap_bytes()
            + self.values.heap_bytes()
            + std::mem::size_of::<DataBlock>()
    }

    /// Number of rows.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The row keys as a filter batch: a dense matrix when they share a
    /// length, offsets into the concatenated keys otherwise.
    pub(crate) fn row_key_batch(&self) -> Option<strata_filters::Batch<'_>> {
        self.bytes_batch(&self.row_keys)
    }

    /// A byte-string column as a filter batch (dense when its items share
    /// a length).
    fn bytes_batch<'a>(&'a self, column: &'a BytesColumn) -> Option<strata_filters::Batch<'a>> {
        match column {
            BytesColumn::Fixed {
                width,
                start,
                count,
            } => {
                let data = self.data.get(*start..*start + width * count)?;
                strata_filters::Batch::fixed(*width, *count, data).ok()
            }
            BytesColumn::Variable { offsets, start } => {
                let data = self.data.get(*start..)?;
                strata_filters::Batch::variable(offsets, data).ok()
            }
        }
    }

    /// The cells' qualifiers as a filter batch.
    pub(crate) fn qualifier_batch(&self) -> Option<strata_filters::Batch<'_>> {
        self.bytes_batch(&self.qualifiers)
    }

    /// The cells' values as a filter batch.
    pub(crate) fn value_batch(&self) -> Option<strata_filters::Batch<'_>> {
        self.bytes_batch(&self.values)
    }

    /// The qualifier of cell `cell`.
    #[inline]
    pub(crate) fn qualifier(&self, cell: usize) -> &[u8] {
        self.qualifiers.get(&self.data, cell)
    }

    /// Row key `r`.
    #[inline]
    pub(crate) fn row(&self, r: usize) -> &[u8] {
        self.row_keys.get(&self.data, r)
    }

    /// Where row `r`'s key lies in [`DataBlock::bytes`].
    #[inline]
    pub(crate) fn row_span(&self, r: usize) -> (usize, usize) {
        self.row_keys.span(r)
    }

    /// True when every row holds exactly one cell (cell `i` is row `i`'s).
    #[inline]
    pub(crate) fn one_cell_per_row(&self) -> bool {
        self.row_starts.is_none()
    }

    /// Rows whose cells all lie in this block: every row, or all but the
    /// last when it may go on in the next block.
    #[inline]
    pub(crate) fn whole_rows(&self) -> usize {
        if self.last_row_ends {
            self.rows
        } else {
            self.rows.saturating_sub(1)
        }
    }

    /// The cell indexes of row `r`.
    #[inline]
    pub(crate) fn row_cells(&self, r: usize) -> std::ops::Range<usize> {
        match &self.row_starts {
            None => r..r + 1,
            Some(starts) => {
                starts.get(&self.data, r) as usize..starts.get(&self.data, r + 1) as usize
            }
        }
    }

    /// The cell at `p`.
    #[inline]
    pub(crate) fn cell(&self, p: Position) -> CellRef<'_> {
        self.decoded(&self.decode_cell(p))
    }

    /// Decodes the fields of the cell at `p`.
    #[inline]
    pub(crate) fn decode_cell(&self, p: Position) -> DecodedCell {
        let data = &self.data;
        DecodedCell {
            row: self.row_keys.span(p.row),
            qualifier: self.qualifiers.span(p.cell),
            value: self.values.span(p.cell),
            timestamp: self.timestamps.get(data, p.cell) as i64,
            kind: CellKind::from_code(self.kinds.get(data, p.cell) as u8).unwrap_or(CellKind::Put),
            sequence: self.sequences.get(data, p.cell),
        }
    }

    /// The cell `decoded` describes (decoded from this block).
    #[inline]
    pub(crate) fn decoded(&self, decoded: &DecodedCell) -> CellRef<'_> {
        let slice = |(lo, hi): (usize, usize)| self.data.get(lo..hi).unwrap_or_default();
        CellRef {
            row: slice(decoded.row),
            qualifier: slice(decoded.qualifier),
            timestamp: decoded.timestamp,
            kind: decoded.kind,
            sequence: decoded.sequence,
            value: slice(decoded.value),
        }
    }

    /// The index of the row holding cell `cell` (`cell` < the cell count).
    pub(crate) fn row_of_cell(&self, cell: usize) -> usize {
        let Some(starts) = &self.row_starts else {
            return cell;
        };
        // The last row starting at or before the cell.
        partition_point(0, self.rows, |mid| {
            starts.get(&self.data, mid) as usize <= cell
        })
        .saturating_sub(1)
    }

    /// The position of the first cell.
    #[cfg(test)]
    pub(crate) fn first(&self) -> Option<Position> {
        (self.cells > 0).then_some(Position { row: 0, cell: 0 })
    }

    /// The position of the last cell.
    pub(crate) fn last(&self) -> Option<Position> {
        (self.cells > 0).then(|| Position {
            row: self.rows - 1,
            cell: self.cells - 1,
        })
    }

    /// The position after `p`, if any.
    #[inline]
    pub(crate) fn next(&self, p: Position) -> Option<Position> {
        let cell = p.cell + 1;
        if cell >= self.cells {
            return None;
        }
        let row = if cell >= self.row_cells(p.row).end {
            p.row + 1
        } else {
            p.row
        };
        Some(Position { row, cell })
    }

    /// The position before `p`, if any.
    pub(crate) fn previous(&self, p: Position) -> Option<Position> {
        let cell = p.cell.checked_sub(1)?;
        let row = if cell < self.row_cells(p.row).start {
            p.row - 1
        } else {
            p.row
        };
        Some(Position { row, cell })
    }

    /// The first row at or after `from` whose key satisfies `past` (a
    /// predicate that, once true for a row, is true for every later row);
    /// the row count when none does. A binary search: a few key
    /// comparisons for the whole block.
    pub(crate) fn first_row_where(&self, from: usize, past: impl Fn(&[u8]) -> bool) -> usize {
        partition_point(from.min(self.rows), self.rows, |mid| !past(self.row(mid)))
    }

    /// First row index whose key is >= `row`.
    fn lower_bound_row(&self, row: &[u8]) -> usize {
        // A cached block is usually cold in the CPU caches: load the keys
        // the search will probe together rather than one miss per halving.
        self.row_keys.prefetch_search(&self.data);
        partition_point(0, self.rows, |mid| {
            compare_bytes(self.row(mid), row) == Ordering::Less
        })
    }

    /// Position of the first cell with key >= `key`, if the block has one,
    /// for a key after the cell at `from`: the search starts there and
    /// gallops forward (1, 2, 4, ... rows), so a seek to the next column or
    /// the next row costs a comparison or two, not a search of the block.
    pub(crate) fn seek_from(&self, key: &SeekKey<'_>, from: Position) -> Option<Position> {
        let r = from.row;
        if r >= self.rows {
            return None;
        }
        if bytes_equal(self.row(r), key.row) {
            return self.seek_in_row(key, r, from.cell);
        }
        // The key's row is after row r: gallop to a row at or past it, then
        // search the last step.
        let mut lo = r + 1;
        let mut step = 1;
        let mut hi = lo;
        while hi < self.rows && compare_bytes(self.row(hi), key.row) == Ordering::Less {
            lo = hi + 1;
            hi = hi.saturating_add(step);
            step = step.saturating_mul(2);
        }
        let r = partition_point(lo, hi.min(self.rows), |mid| {
            compare_bytes(self.row(mid), key.row) == Ordering::Less
        });
        self.seek_at_row(key, r)
    }

    /// Position of the first cell with key >= `key`, if the block has one.
    pub(crate) fn seek(&self, key: &SeekKey<'_>) -> Option<Position> {
        self.seek_at_row(key, self.lower_bound_row(key.row))
    }

    /// The first cell with key >= `key`, where row `r` is the block's first
    /// row not before `key.row` (`rows` if none is).
    fn seek_at_row(&self, key: &SeekKey<'_>, r: usize) -> Option<Position> {
        if r >= self.rows {
            return None;
        }
        if !bytes_equal(self.row(r), key.row) {
            // Every cell of row r is after the key.
            return Some(Position {
                row: r,
                cell: self.row_cells(r).start,
            });
        }
        self.seek_in_row(key, r, self.row_cells(r).start)
    }

    /// The first cell with key >= `key` among the cells of row `r` (whose
    /// key is `key.row`) from cell `start` on; past the row, the next
    /// row's first cell, if any.
    fn seek_in_row(&self, key: &SeekKey<'_>, r: usize, start: usize) -> Option<Position> {
        let cells = self.row_cells(r);
        let lo = partition_point(start, cells.end, |mid| {
            let c = self.cell(Position { row: r, cell: mid });
            compare_keys(c.tuple(), key.tuple()) == Ordering::Less
        });
        if lo < cells.end {
            Some(Position { row: r, cell: lo })
        } else {
            // Past this row: the next row's first cell, if any.
            (r + 1 < self.rows).then(|| Position {
                row: r + 1,
                cell: self.row_cells(r + 1).start,
            })
        }
    }

    /// Position of the last cell with key < `key`, if the block has one.
    pub(crate) fn seek_before(&self, key: &SeekKey<'_>) -> Option<Position> {
        match self.seek(key) {
            Some(p) => self.previous(p),
            None => self.last(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::cell::{OwnedCellFields as Owned, borrowed_fields as r};
    use crate::hfile::block::{encode_bytes, encode_ints};

    /// A block's payload built column by column with [`encode_ints`] and
    /// [`encode_bytes`]: the layout `docs/format.md` gives, spelled out.
    fn reference_payload(cells: &[Owned], last_row_ends: bool) -> Vec<u8> {
        let mut rows: Vec<&[u8]> = Vec::new();
        let mut starts = Vec::new();
        for (i, c) in cells.iter().enumerate() {
            if rows.last() != Some(&c.0.as_slice()) {
                rows.push(&c.0);
                starts.push(i as u64);
            }
        }
        starts.push(cells.len() as u64);
        let one_cell_per_row = rows.len() == cells.len();
        let mut out = Vec::new();
        out.put_u32(rows.len() as u32);
        out.put_u32(cells.len() as u32);
        out.put_u32(
            u32::from(one_cell_per_row) * FLAG_ONE_CELL_PER_ROW
                + u32::from(last_row_ends) * FLAG_LAST_ROW_ENDS,
        );
        encode_bytes(rows.iter().copied(), &mut out);
        if !one_cell_per_row {
            encode_ints(&starts, &mut out);
        }
        encode_bytes(cells.iter().map(|c| c.1.as_slice()), &mut out);
        let ints = |field: fn(&Owned) -> u64| cells.iter().map(field).collect::<Vec<u64>>();
        encode_ints(&ints(|c| c.2 as u64), &mut out);
        encode_ints(&ints(|c| u64::from(c.3.code())), &mut out);
        encode_ints(&ints(|c| c.4), &mut out);
        encode_bytes(cells.iter().map(|c| c.5.as_slice()), &mut out);
        out
    }

    fn sorted_cells() -> impl Strategy<Value = Vec<Owned>> {
        proptest::collection::vec(
            (
                proptest::collection::vec(0u8..4, 1..4),
                proptest::collection::vec(0u8..3, 0..3),
                0i64..1000,
                prop_oneof![
                    Just(CellKind::Put),
                    Just(CellKind::Delete),
                    Just(CellKind::DeleteFamily)
                ],
                0u64..100_000,
                proptest::collection::vec(any::<u8>(), 0..12),
            ),
            1..120,
        )
        .prop_map(|mut cells| {
            cells.sort_by(|a, b| compare_keys(r(a).tuple(), r(b).tuple()));
            cells.dedup_by(|a, b| compare_keys(r(a).tuple(), r(b).tuple()) == Ordering::Equal);
            cells
        })
    }

    proptest! {
        #[test]
        fn blocks_round_trip_and_seek_like_a_sorted_list(cells in sorted_cells(), probe in proptest::collection::vec(0u8..4, 1..4)) {
            let mut b = DataBlockBuilder::default();
            for c in &cells {
                // The size a cell would bring is the size it brings.
                let predicted = b.estimated_bytes_with(&r(c), b.starts_row(&r(c)));
                b.add(&r(c));
                prop_assert_eq!(b.estimated_bytes(), predicted);
            }
            let predicted = b.estimated_bytes();
            let payload = b.finish_block(false);
            prop_assert_eq!(payload.len(), predicted);
            let block = DataBlock::decode(payload).unwrap();
            prop_assert_eq!(block.cells(), cells.len());
            // One version per column: no marker, no (row, qualifier) twice.
            let one_version = cells.iter().all(|c| c.3 == CellKind::Put)
                && cells.windows(2).all(|w| (&w[0].0, &w[0].1) != (&w[1].0, &w[1].1));
            prop_assert_eq!(block.one_version_per_column(), one_version);
            let mut p = block.first();
            for c in &cells {
                let at = p.unwrap();
                prop_assert_eq!(block.cell(at), r(c));
                p = block.next(at);
            }
            prop_assert!(p.is_none());
            let key = SeekKey::row_start(&probe);
            let want = cells.iter().position(|c| c.0.as_slice() >= probe.as_slice());
            prop_assert_eq!(block.seek(&key).map(|p| block.cell(p)), want.map(|i| r(&cells[i])));
            let want_before = cells.iter().rposition(|c| c.0.as_slice() < probe.as_slice());
            prop_assert_eq!(block.seek_before(&key).map(|p| block.cell(p)), want_before.map(|i| r(&cells[i])));
        }

        /// The builder encodes from the value ranges it tracked, into a
        /// buffer that already holds bytes, with buffers kept from the
        /// block before; its twin encodes each column from scratch with the
        /// generic column encoders. The payloads are the same bytes.
        #[test]
        fn a_reused_builder_encodes_what_the_generic_encoders_do(
            earlier in sorted_cells(),
            cells in sorted_cells(),
            last_row_ends in any::<bool>(),
        ) {
            let mut b = DataBlockBuilder::default();
            for c in &earlier {
                b.add(&r(c));
            }
            b.finish_block(true);
            for c in &cells {
                b.add(&r(c));
            }
            let mut out = vec![0xEE; 5];
            b.finish_block_into(last_row_ends, &mut out);
            prop_assert!(b.is_empty());
            prop_assert_eq!(&out[..5], &[0xEE; 5][..]);
            let want = reference_payload(&cells, last_row_ends);
            prop_assert_eq!(&out[5..], want.as_slice());
        }

        /// The order check reads the columns directly; its twin compares
        /// every adjacent pair of whole cells. They agree on blocks built
        /// from cells in any order (the builder starts a row whenever the
        /// row key changes, so an unsorted input gives out-of-order rows or
        /// cells).
        #[test]
        fn the_order_check_agrees_with_comparing_whole_cells(
            mut cells in sorted_cells(),
            swaps in proptest::collection::vec((any::<usize>(), any::<usize>()), 0..3),
        ) {
            for (a, b) in swaps {
                let (a, b) = (a % cells.len(), b % cells.len());
                cells.swap(a, b);
            }
            let mut b = DataBlockBuilder::default();
            for c in &cells {
                b.add(&r(c));
            }
            // A row key repeated after another row is a second row of the
            // same key: out of order, as a key lower than its predecessor is.
            let mut rows: Vec<&[u8]> = Vec::new();
            for c in &cells {
                if rows.last() != Some(&c.0.as_slice()) {
                    rows.push(&c.0);
                }
            }
            let want_ok = rows.windows(2).all(|w| w[0] < w[1])
                && cells
                    .windows(2)
                    .all(|w| w[0].0 != w[1].0 || compare_keys(r(&w[0]).tuple(), r(&w[1]).tuple()) == Ordering::Less);
            prop_assert_eq!(DataBlock::decode(b.finish_block(false)).is_ok(), want_ok);
        }

        #[test]
        fn damaged_payloads_never_panic(cells in sorted_cells(), at in any::<usize>(), byte in any::<u8>()) {
            let mut b = DataBlockBuilder::default();
            for c in &cells {
                b.add(&r(c));
            }
            let mut payload = b.finish_block(false);
            let at = at % payload.len();
            payload[at] = byte;
            // Either an error or a consistent block; never a panic.
            if let Ok(block) = DataBlock::decode(payload.clone()) {
                let mut p = block.first();
                while let Some(at) = p {
                    let _ = block.cell(at);
                    p = block.next(at);
                }
            }
            payload.truncate(at);
            prop_assert!(DataBlock::decode(payload).is_err(), "a truncated block never decodes");
        }
    }

    #[test]
    fn billions_of_cells_in_constant_columns_are_refused_quickly() {
        // A constant column costs no bytes per cell: 66 bytes can claim
        // u32::MAX cells. Decoding must refuse them without visiting each
        // (found by fuzzing the index block, which had the same shape).
        let mut payload = Vec::new();
        payload.put_u32(u32::MAX);
        payload.put_u32(u32::MAX);
        payload.put_u32(FLAG_ONE_CELL_PER_ROW);
        for base in [0, 0, 1, u64::from(CellKind::Put.code()), 1, 0] {
            encode_ints(&[base], &mut payload);
        }
        let started = std::time::Instant::now();
        assert!(DataBlock::decode(payload).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn equal_length_keys_and_values_form_fixed_columns() {
        let mut b = DataBlockBuilder::default();
        for i in 0..100u32 {
            let row = format!("key{i:013}");
            b.add(&CellRef {
                row: row.as_bytes(),
                qualifier: b"",
                timestamp: 1_700_000_000_000 + i64::from(i),
                kind: CellKind::Put,
                sequence: 5000 + u64::from(i),
                value: &[7u8; 100],
            });
        }
        let payload = b.finish_block(false);
        // 16-byte keys + 100-byte values + 1 byte each of timestamp and sequence delta.
        assert!(
            payload.len() < 100 * (16 + 100 + 2) + 100,
            "{}",
            payload.len()
        );
        let block = DataBlock::decode(payload).unwrap();
        assert!(matches!(
            block.row_keys,
            BytesColumn::Fixed { width: 16, .. }
        ));
        assert!(block.row_starts.is_none());
    }
}
