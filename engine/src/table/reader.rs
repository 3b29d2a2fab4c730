//! Point reads that lend their rows: [`RowReader`].
//!
//! [`Table::get`] hands back an owned [`RowResult`](crate::RowResult): the
//! row key, a cell list and each cell's family, qualifier and value are
//! allocations of their own, and for a get of a cached row they cost more
//! than finding the row. A `RowReader` resolves the row into one reused
//! buffer instead and lends a [`RowView`] of it, as a
//! [`ScanCursor`](crate::ScanCursor) lends scanned rows (RocksDB's
//! `get_pinned` is the same idea): cells read from a cached block point
//! into the block, which the reader holds, and once the buffer has grown to
//! the widest row read a get allocates nothing.

use std::sync::Arc;

use crate::catalog::TableState;
use crate::error::Result;
use crate::ops::Get;
use crate::read::cursor::RowView;
use crate::read::direct::GetScratch;
use crate::read::sink::RowBuffer;

use super::Table;

/// Reads single rows of a table into a reused buffer and lends each until
/// the next read: the allocation-free form of [`Table::get`], for programs
/// that read many rows one at a time. Create one with
/// [`Table::row_reader`]; keep it as long as reads go on (it is cheap to
/// keep, and its buffer is what makes later reads free of allocations).
///
/// A reader sees exactly what [`Table::get`] sees for the same [`Get`]:
/// every write acknowledged before the read starts, the same versions,
/// deletes, time range, column selection and filter. Between reads it
/// holds the cached blocks its last rows were lent from (at most a few),
/// and the table's regions as its last read found them: after a split or
/// a merge, the retired regions stay in memory until the reader's next read
/// or its drop.
#[derive(Debug)]
pub struct RowReader {
    table: Table,
    /// The get [`RowReader::get_row`] reads, its row replaced each time
    /// (its key buffer reused).
    plain_get: Get,
    kept: Kept,
}

/// What a [`RowReader`] keeps from one read to the next.
#[derive(Default)]
struct Kept {
    /// The table's state as the last read found it, with its generation
    /// ([`Table::state_kept`]).
    state: Option<(u64, Arc<TableState>)>,
    buffer: RowBuffer,
    scratch: GetScratch,
}

impl Table {
    /// A reader of single rows that lends them instead of returning owned
    /// copies (see [`RowReader`]).
    pub fn row_reader(&self) -> RowReader {
        RowReader {
            table: self.clone(),
            plain_get: Get::new([]),
            kept: Kept::default(),
        }
    }
}

impl RowReader {
    /// Reads the row `get` asks for: `None` when the get returns no cell
    /// (where [`Table::get`] returns an empty result). The view lives until
    /// the next read; copy what must outlive it
    /// ([`RowView::to_row_result`]).
    pub fn get(&mut self, get: &Get) -> Result<Option<RowView<'_>>> {
        self.kept.read(&self.table, get)
    }

    /// Reads the newest version of every column of `row` (what
    /// `get(&Get::new(row))` reads) without building a [`Get`]: `None` when
    /// the row has no live cell.
    pub fn get_row(&mut self, row: &[u8]) -> Result<Option<RowView<'_>>> {
        self.plain_get.set_row(row);
        self.kept.read(&self.table, &self.plain_get)
    }

    /// The table the reader reads.
    pub fn table(&self) -> &Table {
        &self.table
    }
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept")
            .field("state_generation", &self.state.as_ref().map(|(g, _)| *g))
            .field("buffer", &self.buffer)
            .field("scratch", &self.scratch)
            .finish()
    }
}

impl Kept {
    /// Reads `get` from `table` into the buffer and lends the row.
    fn read(&mut self, table: &Table, get: &Get) -> Result<Option<RowView<'_>>> {
        let state = table.state_kept(&mut self.state)?;
        let now_ms = table.read_now_ms(state);
        if !table.get_into(state, get, now_ms, &mut self.buffer, &mut self.scratch)? {
            return Ok(None);
        }
        let buffer = &self.buffer;
        Ok(Some(RowView::new(
            buffer.row(),
            buffer.spans(),
            buffer.bytes(),
            buffer.blocks(),
        )))
    }
}
