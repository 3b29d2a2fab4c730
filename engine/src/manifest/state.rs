//! The catalog the manifest describes ([`ManifestState`]) and the records it
//! holds: tables, regions, their files, and the id high-water marks. Edits
//! change it (`edit.rs`); nothing here knows their bytes.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::path::Path;

use crate::error::Error;
use crate::file_meta::FileMeta;
use crate::options::TableDescriptor;

/// Most (table, bulk writer) pairs whose loaded files the catalog
/// remembers, to refuse loading a file twice; the oldest are forgotten
/// first. A writer usually makes one load's files, so this is about the
/// last 4096 loads; at ~30 bytes each the snapshot grows by at most ~120 KiB.
pub(crate) const MAX_REMEMBERED_BULK_WRITERS: usize = 4096;

/// A file of a store, as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoreFile {
    pub(crate) family_id: u32,
    pub(crate) level: u8,
    pub(crate) meta: FileMeta,
}

/// A region as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RegionRecord {
    pub(crate) id: u64,
    pub(crate) start: Vec<u8>,
    pub(crate) end: Vec<u8>,
    /// Every mutation of the region with a sequence <= this is in its files.
    pub(crate) flushed_sequence: u64,
    pub(crate) files: Vec<StoreFile>,
}

/// A file a bulk load installed into one store of one region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoadedFile {
    pub(crate) region_id: u64,
    pub(crate) family_id: u32,
    pub(crate) level: u8,
    /// Its sequences are the load's (`min_sequence == max_sequence`).
    pub(crate) meta: FileMeta,
}

/// A table as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableRecord {
    pub(crate) id: u64,
    pub(crate) descriptor: TableDescriptor,
    /// Id of each family, in the descriptor's order.
    pub(crate) family_ids: Vec<u32>,
    pub(crate) regions: Vec<RegionRecord>,
    /// False while the table is disabled.
    pub(crate) enabled: bool,
}

/// A snapshot of a table (HBase's `snapshot 't', 'name'`): the table as it was at one
/// sequence, naming its files, which stay on disk (pinned) until the snapshot is deleted
/// and nothing else references them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SnapshotRecord {
    /// The snapshot's name, unique in the database.
    pub(crate) name: String,
    /// When it was taken, in milliseconds since the epoch (the database's clock).
    pub(crate) created_ms: i64,
    /// Every write of the table with a sequence <= this, and none after, is in its files.
    pub(crate) sequence: u64,
    /// The table as it was: its id and name then, descriptor, family ids, regions with
    /// their files (each region's flushed sequence is `sequence`), whether it was enabled.
    pub(crate) table: TableRecord,
}

/// The catalog the manifest describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ManifestState {
    pub(crate) tables: BTreeMap<u64, TableRecord>,
    /// Namespaces created by users; `default` and `hbase` always exist and are not listed.
    /// A table named `ns:t` always has its namespace here (a manifest written before
    /// namespaces existed gets the namespaces of its tables).
    pub(crate) namespaces: BTreeSet<String>,
    pub(crate) next_table_id: u64,
    pub(crate) next_region_id: u64,
    pub(crate) next_family_id: u32,
    pub(crate) next_file_id: u64,
    /// The highest sequence any flushed file ever held.
    pub(crate) last_sequence: u64,
    /// Per (table id, bulk writer id): the numbers of that writer's files
    /// loaded into the table. Bounded by [`MAX_REMEMBERED_BULK_WRITERS`].
    pub(crate) bulk_loaded: BTreeMap<(u64, u128), BTreeSet<u32>>,
    /// The keys of `bulk_loaded`, oldest first (the next to forget).
    pub(crate) bulk_loaded_order: VecDeque<(u64, u128)>,
    /// The snapshots, by name. Dropping a table keeps its snapshots.
    pub(crate) snapshots: BTreeMap<String, SnapshotRecord>,
}

impl Default for ManifestState {
    fn default() -> Self {
        ManifestState {
            tables: BTreeMap::new(),
            namespaces: BTreeSet::new(),
            next_table_id: 1,
            next_region_id: 1,
            next_family_id: 1,
            next_file_id: 1,
            last_sequence: 0,
            bulk_loaded: BTreeMap::new(),
            bulk_loaded_order: VecDeque::new(),
            snapshots: BTreeMap::new(),
        }
    }
}

impl ManifestState {
    /// True when file `number` of bulk writer `writer` was loaded into
    /// table `table` (as far as the bounded history remembers).
    pub(crate) fn bulk_file_loaded(&self, table: u64, writer: u128, number: u32) -> bool {
        self.bulk_loaded
            .get(&(table, writer))
            .is_some_and(|numbers| numbers.contains(&number))
    }

    /// The error a WAL record of `region_id` (in `file` at `offset`) is when
    /// the catalog never recorded that region: ids are handed out from a
    /// high-water mark that only grows and every known region's id is below
    /// it, so an id at or above it names a region whose creating edit the
    /// manifest lost. `None` for a known region or one dropped or split away.
    pub(crate) fn lost_region(&self, region_id: u64, file: &Path, offset: u64) -> Option<Error> {
        (region_id >= self.next_region_id).then(|| {
            Error::corruption(
                file,
                offset,
                format!(
                    "record of region {region_id}, which the manifest never recorded: \
                     the manifest lost the edit that created it"
                ),
            )
        })
    }

    /// Every file the catalog references, once per reference: the files of every region
    /// of every table, then those of every snapshot (which pin them).
    pub(crate) fn referenced_files(&self) -> impl Iterator<Item = &FileMeta> {
        self.tables
            .values()
            .chain(self.snapshots.values().map(|s| &s.table))
            .flat_map(|t| t.regions.iter())
            .flat_map(|r| r.files.iter().map(|f| &f.meta))
    }

    /// Ids of every file the catalog references, a table's or a snapshot's: the files
    /// that compaction, drops and open must leave on disk.
    pub(crate) fn live_files(&self) -> HashSet<u64> {
        self.referenced_files().map(|meta| meta.id).collect()
    }

    /// Remembers that file `number` of bulk writer `writer` was loaded
    /// into table `table`, forgetting the oldest writer past the bound.
    pub(super) fn remember_bulk_file(&mut self, table: u64, writer: u128, number: u32) {
        let key = (table, writer);
        let numbers = self.bulk_loaded.entry(key).or_insert_with(|| {
            self.bulk_loaded_order.push_back(key);
            BTreeSet::new()
        });
        numbers.insert(number);
        while self.bulk_loaded_order.len() > MAX_REMEMBERED_BULK_WRITERS {
            if let Some(oldest) = self.bulk_loaded_order.pop_front() {
                self.bulk_loaded.remove(&oldest);
            }
        }
        debug_assert_eq!(
            self.bulk_loaded.len(),
            self.bulk_loaded_order.len(),
            "the history's order lists each remembered (table, writer) once"
        );
    }

    /// Forgets everything the catalog held of table `table_id`.
    pub(super) fn forget_table(&mut self, table_id: u64) {
        self.tables.remove(&table_id);
        self.bulk_loaded.retain(|(table, _), _| *table != table_id);
        self.bulk_loaded_order
            .retain(|(table, _)| *table != table_id);
    }

    /// Raises the id high-water marks and the last sequence above what the
    /// file holds. Decoding keeps ids far below their type's maximum
    /// (`codec::MAX_STORED_ID`); the saturating adds here and below only
    /// keep a state built otherwise from overflowing.
    pub(super) fn note_file(&mut self, meta: &FileMeta) {
        self.next_file_id = self.next_file_id.max(meta.id.saturating_add(1));
        self.last_sequence = self.last_sequence.max(meta.max_sequence);
    }

    /// Raises the marks above a region's id, flushed sequence and files.
    pub(super) fn note_region(&mut self, region: &RegionRecord) {
        self.next_region_id = self.next_region_id.max(region.id.saturating_add(1));
        self.last_sequence = self.last_sequence.max(region.flushed_sequence);
        for file in &region.files {
            self.note_file(&file.meta);
        }
    }

    /// Raises the next family id above every id of `family_ids`.
    pub(super) fn note_families(&mut self, family_ids: &[u32]) {
        for &family in family_ids {
            self.next_family_id = self.next_family_id.max(family.saturating_add(1));
        }
    }

    /// Region `region_id` of table `table_id`, if the catalog holds both.
    pub(super) fn region(&self, table_id: u64, region_id: u64) -> Option<&RegionRecord> {
        self.tables
            .get(&table_id)?
            .regions
            .iter()
            .find(|r| r.id == region_id)
    }

    pub(super) fn region_mut(
        &mut self,
        table_id: u64,
        region_id: u64,
    ) -> Option<&mut RegionRecord> {
        self.tables
            .get_mut(&table_id)?
            .regions
            .iter_mut()
            .find(|r| r.id == region_id)
    }
}

/// The namespace of a table name `ns:t` when it is a user namespace (not `default` or
/// `hbase`, which always exist).
pub(super) fn user_namespace_of(table: &str) -> Option<&str> {
    let (namespace, _) = table.split_once(':')?;
    (!crate::options::is_builtin_namespace(namespace)).then_some(namespace)
}
