//! A region: the rows `[start, end)` of one table, one store per family.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLock;

use crate::store::Store;

/// A key range of a table with its stores.
pub(crate) struct Region {
    id: u64,
    start: Vec<u8>,
    /// Exclusive end; empty means "to the end of the table".
    end: Vec<u8>,
    /// Stores sorted by family name.
    stores: RwLock<Vec<Arc<Store>>>,
    /// Highest sequence applied to this region.
    max_sequence: AtomicU64,
}

impl Region {
    /// A region with one empty store per `(family_id, family_name)`.
    pub(crate) fn new(id: u64, start: Vec<u8>, end: Vec<u8>, families: &[(u32, &[u8])]) -> Self {
        let mut stores: Vec<Arc<Store>> = families
            .iter()
            .map(|(id, name)| Arc::new(Store::new(*id, name)))
            .collect();
        stores.sort_by(|a, b| a.family_name().cmp(b.family_name()));
        Region {
            id,
            start,
            end,
            stores: RwLock::new(stores),
            max_sequence: AtomicU64::new(0),
        }
    }

    /// The region's id (unique in the database, never reused).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Inclusive start key (empty for the first region).
    pub(crate) fn start(&self) -> &[u8] {
        &self.start
    }

    /// Exclusive end key (empty for the last region).
    pub(crate) fn end(&self) -> &[u8] {
        &self.end
    }

    /// True when `row` falls in `[start, end)`.
    pub(crate) fn contains(&self, row: &[u8]) -> bool {
        row >= self.start.as_slice() && (self.end.is_empty() || row < self.end.as_slice())
    }

    /// The store of `family_id`.
    pub(crate) fn store(&self, family_id: u32) -> Option<Arc<Store>> {
        self.stores
            .read()
            .iter()
            .find(|s| s.family_id() == family_id)
            .cloned()
    }

    /// Adds an empty store for a new family.
    pub(crate) fn add_store(&self, family_id: u32, family_name: &[u8]) {
        let mut stores = self.stores.write();
        if stores.iter().any(|s| s.family_id() == family_id) {
            return;
        }
        stores.push(Arc::new(Store::new(family_id, family_name)));
        stores.sort_by(|a, b| a.family_name().cmp(b.family_name()));
    }

    /// Removes the store of a deleted family.
    pub(crate) fn remove_store(&self, family_id: u32) {
        self.stores.write().retain(|s| s.family_id() != family_id);
    }

    /// Records that `sequence` was applied.
    pub(crate) fn note_sequence(&self, sequence: u64) {
        self.max_sequence.fetch_max(sequence, Ordering::AcqRel);
    }

    /// Highest sequence applied.
    #[allow(dead_code, reason = "flush bookkeeping reads it; tested here")]
    pub(crate) fn max_sequence(&self) -> u64 {
        self.max_sequence.load(Ordering::Acquire)
    }

    /// Bytes held by the region's memstores.
    pub(crate) fn memstore_bytes(&self) -> u64 {
        self.stores.read().iter().map(|s| s.memstore_bytes()).sum()
    }

    /// Cells held by the region's memstores.
    pub(crate) fn memstore_cells(&self) -> u64 {
        self.stores.read().iter().map(|s| s.memstore_cells()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_stores() {
        let r = Region::new(1, b"b".to_vec(), b"d".to_vec(), &[(2, b"z"), (1, b"a")]);
        assert!(r.contains(b"b") && r.contains(b"c\xff") && !r.contains(b"d") && !r.contains(b"a"));
        assert_eq!(r.store(1).unwrap().family_name(), b"a");
        r.add_store(3, b"m");
        assert_eq!(r.store(3).unwrap().family_name(), b"m");
        r.remove_store(1);
        assert!(r.store(1).is_none());
        let last = Region::new(2, b"x".to_vec(), Vec::new(), &[]);
        assert!(last.contains(b"\xff\xff"));
    }
}
