//! A source of cells in store order: a memstore today, an HFile later.

use std::sync::Arc;

use crate::cell::CellRef;
use crate::error::Result;
use crate::memstore::{Cursor, Memstore, SeekKey};

/// A positioned, forward-iterable run of cells in store order
/// (row ASC, qualifier ASC, timestamp DESC, kind DESC, sequence DESC).
pub(crate) trait CellSource: Send {
    /// Positions at the first cell with key >= `key`.
    fn seek(&mut self, key: &SeekKey<'_>) -> Result<()>;
    /// Positions at the last cell with key < `key`.
    fn seek_before(&mut self, key: &SeekKey<'_>) -> Result<()>;
    /// Positions at the last cell.
    fn seek_to_last(&mut self) -> Result<()>;
    /// Moves to the next cell.
    fn advance(&mut self) -> Result<()>;
    /// The cell at the position, or `None` when exhausted.
    fn current(&self) -> Option<CellRef<'_>>;
}

/// A memstore as a [`CellSource`].
pub(crate) struct MemstoreSource {
    cursor: Cursor,
}

impl MemstoreSource {
    pub(crate) fn new(memstore: Arc<Memstore>) -> Self {
        MemstoreSource {
            cursor: Cursor::new(memstore),
        }
    }
}

impl CellSource for MemstoreSource {
    fn seek(&mut self, key: &SeekKey<'_>) -> Result<()> {
        self.cursor.seek(key);
        Ok(())
    }

    fn seek_before(&mut self, key: &SeekKey<'_>) -> Result<()> {
        self.cursor.seek_before(key);
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.cursor.seek_to_last();
        Ok(())
    }

    fn advance(&mut self) -> Result<()> {
        self.cursor.next();
        Ok(())
    }

    fn current(&self) -> Option<CellRef<'_>> {
        self.cursor.current()
    }
}
