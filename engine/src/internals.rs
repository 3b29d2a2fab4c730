//! Internal structures exposed for micro-benchmarks (`strata-bench`), behind
//! the `internals` cargo feature. Not part of the stable API.

use std::sync::Arc;

use crate::cell::SeekKey;
use crate::cell::{CellKind, CellRef};
use crate::hfile::bloom;
use crate::hfile::data_block::{DataBlock, DataBlockBuilder};
use crate::memstore::{Cursor, Memstore, NewCell};

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

/// One row-key/value cell to encode into a data block.
pub struct BlockCell<'a> {
    /// Row key.
    pub row: &'a [u8],
    /// Column qualifier.
    pub qualifier: &'a [u8],
    /// Timestamp (milliseconds).
    pub timestamp: i64,
    /// Sequence number.
    pub sequence: u64,
    /// Value.
    pub value: &'a [u8],
}

/// Encodes put cells (sorted by row, then qualifier, newest first) into one
/// data block payload, in the columnar layout `docs/format.md` specifies.
pub fn encode_data_block(cells: &[BlockCell<'_>]) -> Vec<u8> {
    let mut builder = DataBlockBuilder::default();
    for c in cells {
        builder.add(&CellRef {
            row: c.row,
            qualifier: c.qualifier,
            timestamp: c.timestamp,
            kind: CellKind::Put,
            sequence: c.sequence,
            value: c.value,
        });
    }
    builder.finish_block(false)
}

/// A decoded data block.
pub struct DecodedBlock {
    block: DataBlock,
}

impl DecodedBlock {
    /// Decodes a payload made by [`encode_data_block`]; `None` if it is
    /// malformed.
    pub fn decode(payload: Vec<u8>) -> Option<DecodedBlock> {
        DataBlock::decode(payload)
            .ok()
            .map(|block| DecodedBlock { block })
    }

    /// Cells in the block.
    pub fn cells(&self) -> usize {
        self.block.cells()
    }

    /// Value of the newest cell of `row`, found by the block's binary
    /// search (the point-read path inside a cached block).
    pub fn get(&self, row: &[u8]) -> Option<&[u8]> {
        let position = self.block.seek(&SeekKey::row_start(row))?;
        let cell = self.block.cell(position);
        (cell.row == row).then_some(cell.value)
    }
}

/// A split-block bloom filter over row keys, as HFiles store it.
pub struct RowBloom {
    filter: Vec<u8>,
}

impl RowBloom {
    /// Builds the filter of `rows` with `bits_per_key` bits per key.
    pub fn build<'a>(rows: impl IntoIterator<Item = &'a [u8]>, bits_per_key: u32) -> RowBloom {
        let hashes: Vec<u64> = rows.into_iter().map(bloom::row_hash).collect();
        RowBloom {
            filter: bloom::build(&hashes, bits_per_key),
        }
    }

    /// False when `row` is certainly absent (hashes the row, then probes).
    pub fn may_contain(&self, row: &[u8]) -> bool {
        bloom::may_contain(&self.filter, bloom::row_hash(row))
    }

    /// Size of the filter in bytes.
    pub fn bytes(&self) -> usize {
        self.filter.len()
    }
}
