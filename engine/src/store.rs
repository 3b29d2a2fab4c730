//! A store: one column family of one region.
//!
//! It owns the family's memstore; the read path asks it for the sources to
//! merge (today the memstore; HFiles join them with the HFile work).

use std::sync::Arc;

use parking_lot::RwLock;

use crate::memstore::{Memstore, NewCell};
use crate::scan::source::{CellSource, MemstoreSource};

/// One family of one region.
pub(crate) struct Store {
    family_id: u32,
    family_name: Vec<u8>,
    /// The memstore new cells go into.
    active: RwLock<Arc<Memstore>>,
}

impl Store {
    pub(crate) fn new(family_id: u32, family_name: &[u8]) -> Self {
        Store {
            family_id,
            family_name: family_name.to_vec(),
            active: RwLock::new(Arc::new(Memstore::new())),
        }
    }

    /// The family's id (stable across renames of nothing: ids are never reused).
    pub(crate) fn family_id(&self) -> u32 {
        self.family_id
    }

    /// The family's name.
    pub(crate) fn family_name(&self) -> &[u8] {
        &self.family_name
    }

    /// Inserts one mutation's cells; returns the bytes of memory the
    /// memstore grew by.
    pub(crate) fn insert(&self, cells: &[NewCell<'_>]) -> u64 {
        let active = self.active.read();
        let before = active.allocated_bytes();
        active.insert_all(cells);
        active.allocated_bytes() - before
    }

    /// Bytes of memory held by memstores.
    pub(crate) fn memstore_bytes(&self) -> u64 {
        self.active.read().allocated_bytes()
    }

    /// Number of cells in memstores.
    pub(crate) fn memstore_cells(&self) -> u64 {
        self.active.read().cell_count()
    }

    /// The sources a read merges, newest first.
    pub(crate) fn sources(&self) -> Vec<Box<dyn CellSource>> {
        let active = self.active.read().clone();
        vec![Box::new(MemstoreSource::new(active))]
    }
}
