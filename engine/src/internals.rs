//! Internal structures exposed for micro-benchmarks (`strata-bench`), behind
//! the `internals` cargo feature. Not part of the stable API.

use std::sync::Arc;

use crate::cell::CellKind;
use crate::memstore::{Cursor, Memstore, NewCell, SeekKey};

/// The memstore (arena skiplist) of one store.
pub struct MemstoreHandle {
    memstore: Arc<Memstore>,
}

impl Default for MemstoreHandle {
    fn default() -> Self {
        MemstoreHandle::new()
    }
}

impl MemstoreHandle {
    /// An empty memstore.
    pub fn new() -> Self {
        MemstoreHandle {
            memstore: Arc::new(Memstore::new()),
        }
    }

    /// Inserts one put cell.
    pub fn insert_put(
        &self,
        row: &[u8],
        qualifier: &[u8],
        timestamp: i64,
        sequence: u64,
        value: &[u8],
    ) {
        self.memstore.insert_all(&[NewCell {
            row,
            qualifier,
            timestamp,
            kind: CellKind::Put,
            sequence,
            value,
        }]);
    }

    /// Bytes of arena memory held (the memstore's accounted size).
    pub fn allocated_bytes(&self) -> u64 {
        self.memstore.allocated_bytes()
    }

    /// Cells inserted.
    pub fn cell_count(&self) -> u64 {
        self.memstore.cell_count()
    }

    /// Value of the newest cell of `row` at or below `read_point`, if any.
    pub fn get_latest(&self, row: &[u8], read_point: u64) -> Option<Vec<u8>> {
        let mut cursor = Cursor::new(self.memstore.clone());
        cursor.seek(&SeekKey::row_start(row));
        while let Some(cell) = cursor.current() {
            if cell.row != row {
                return None;
            }
            if cell.sequence <= read_point {
                return Some(cell.value.to_vec());
            }
            cursor.next();
        }
        None
    }

    /// Iterates every cell; returns how many there were.
    pub fn scan_count(&self) -> u64 {
        let mut cursor = Cursor::new(self.memstore.clone());
        cursor.seek(&SeekKey::row_start(b""));
        let mut n = 0;
        while cursor.current().is_some() {
            n += 1;
            cursor.next();
        }
        n
    }
}
