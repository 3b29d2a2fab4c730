//! The catalog: every open table, each with its schema and regions at one
//! moment ([`TableState`], replaced as a whole by alter and split).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::{RwLock, RwLockReadGuard};

use crate::error::{Error, Result};
use crate::hfile::reader::HFileReader;
use crate::options::{FamilyDescriptor, TableDescriptor, canonical_table_name};
use crate::region::{Region, RegionActivity};
use crate::schema::{FamilyPlan, all_family_plans};
use crate::store::Store;

/// A table's schema and regions at one moment; replaced as a whole on alter.
pub(crate) struct TableState {
    pub(crate) descriptor: TableDescriptor,
    /// Id of each family, in the descriptor's order.
    pub(crate) family_ids: Vec<u32>,
    /// Regions sorted by start key; the first starts at the empty key and
    /// each ends where the next starts.
    pub(crate) regions: Vec<Arc<Region>>,
    /// The plan of every family, sorted by name: what a read of all columns
    /// shares instead of building its own.
    pub(crate) all_families: Arc<[FamilyPlan]>,
    /// Each region's stores (as `regions`), as they were when the state was
    /// made: a region's stores change only by an alter, which replaces the
    /// state afterwards, so a read finds a store here without taking the
    /// region's store lock.
    region_stores: Vec<Vec<Arc<Store>>>,
    /// The counters of the regions this table had and no longer has (split or merged away,
    /// replaced by a restore) since the database opened, so that the table's totals,
    /// `retired_activity` plus its regions', never go down.
    pub(crate) retired_activity: RegionActivity,
}

impl TableState {
    /// The state of a table with `descriptor`, whose families have
    /// `family_ids` (in the descriptor's order), cut into `regions`.
    pub(crate) fn new(
        descriptor: TableDescriptor,
        family_ids: Vec<u32>,
        regions: Vec<Arc<Region>>,
    ) -> TableState {
        let all_families = all_family_plans(&descriptor, &family_ids);
        let region_stores = regions.iter().map(|region| region.stores()).collect();
        TableState {
            descriptor,
            family_ids,
            regions,
            all_families,
            region_stores,
            retired_activity: RegionActivity::default(),
        }
    }

    /// This state, counting `retired` (an earlier state's retired counters) and the counters
    /// of `gone` (the regions leaving the table with this state) as retired.
    pub(crate) fn retiring<'a>(
        mut self,
        retired: RegionActivity,
        gone: impl IntoIterator<Item = &'a Arc<Region>>,
    ) -> TableState {
        self.retired_activity = std::iter::once(retired)
            .chain(gone.into_iter().map(|region| region.activity_snapshot()))
            .sum();
        self
    }

    /// The table's counters since the database opened, given its current regions' counters
    /// (`regions`, as the caller read them): theirs plus the retired ones.
    pub(crate) fn total_activity(
        &self,
        regions: impl IntoIterator<Item = RegionActivity>,
    ) -> RegionActivity {
        std::iter::once(self.retired_activity).chain(regions).sum()
    }

    /// Whether any family expires cells (reads then need the clock).
    pub(crate) fn has_ttl(&self) -> bool {
        self.all_families.iter().any(|f| f.rules.ttl_ms.is_some())
    }

    /// The family named `name`, with its id.
    pub(crate) fn family(&self, name: &[u8]) -> Option<(u32, &FamilyDescriptor)> {
        self.family_ids
            .iter()
            .zip(self.descriptor.families())
            .find(|(_, f)| f.name().as_bytes() == name)
            .map(|(id, f)| (*id, f))
    }

    /// The family with id `id`.
    pub(crate) fn family_by_id(&self, id: u32) -> Option<(u32, &FamilyDescriptor)> {
        self.family_ids
            .iter()
            .zip(self.descriptor.families())
            .find(|(fid, _)| **fid == id)
            .map(|(id, f)| (*id, f))
    }

    /// Index of the region holding `row`.
    pub(crate) fn region_index_for(&self, row: &[u8]) -> usize {
        if self.regions.len() == 1 {
            // Every table starts as one region: no key comparison needed.
            return 0;
        }
        self.regions
            .partition_point(|r| r.start() <= row)
            .saturating_sub(1)
    }

    /// The region holding `row`, with its stores.
    pub(crate) fn region_with_stores(&self, row: &[u8]) -> Option<(&Arc<Region>, &[Arc<Store>])> {
        let index = self.region_index_for(row);
        Some((self.regions.get(index)?, self.region_stores.get(index)?))
    }
}

/// A table's current [`TableState`], replaced whole, and a count of the
/// replacements: a reader that keeps a state from one read to the next
/// (a [`RowReader`](crate::RowReader)) knows with one atomic load whether
/// it is still current, instead of taking the lock and a reference count
/// for every read.
///
/// The generation is raised inside the write lock, after the new state is
/// in place. So a write that reads the new state (under the read lock)
/// happens after the raise, and a reader that learns of that write (it was
/// acknowledged) sees the raised generation and takes the new state.
pub(crate) struct StateCell {
    current: RwLock<Arc<TableState>>,
    generation: AtomicU64,
}

impl StateCell {
    /// A cell holding `state`, at generation 0.
    pub(crate) fn new(state: TableState) -> StateCell {
        StateCell {
            current: RwLock::new(Arc::new(state)),
            generation: AtomicU64::new(0),
        }
    }

    /// The current state, under the read lock.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Arc<TableState>> {
        self.current.read()
    }

    /// Replaces the state by what `next` makes of it (under the write lock,
    /// so replacements do not interleave).
    pub(crate) fn replace(&self, next: impl FnOnce(&TableState) -> TableState) {
        let mut current = self.current.write();
        *current = Arc::new(next(&current));
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// How many times the state was replaced.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The current state and a generation no newer than it: when
    /// [`StateCell::generation`] still returns that generation later, the
    /// state is still current.
    pub(crate) fn snapshot(&self) -> (u64, Arc<TableState>) {
        let generation = self.generation();
        (generation, self.current.read().clone())
    }
}

/// The shared part of a table, behind every [`Table`] handle.
pub(crate) struct TableInner {
    pub(crate) id: u64,
    pub(crate) name: String,
    pub(crate) state: StateCell,
    pub(crate) dropped: AtomicBool,
    pub(crate) enabled: AtomicBool,
    /// Mutations hold it shared from reading the state to committing; a
    /// region split holds it exclusively while it retires the parent.
    pub(crate) split_gate: RwLock<()>,
    /// A normalizer run of the table is queued (at most one at a time).
    pub(crate) normalize_queued: AtomicBool,
}

/// Every open table, by name.
#[derive(Default)]
pub(crate) struct Catalog {
    tables: RwLock<BTreeMap<String, Arc<TableInner>>>,
}

impl Catalog {
    /// A catalog of `tables`.
    pub(crate) fn new(tables: BTreeMap<String, Arc<TableInner>>) -> Catalog {
        Catalog {
            tables: RwLock::new(tables),
        }
    }

    /// The table named `name` (`default:t` is `t`).
    pub(crate) fn get(&self, name: &str) -> Option<Arc<TableInner>> {
        self.tables.read().get(canonical_table_name(name)).cloned()
    }

    /// The table named `name`, or [`Error::TableNotFound`].
    pub(crate) fn require(&self, name: &str) -> Result<Arc<TableInner>> {
        self.get(name).ok_or_else(|| Error::TableNotFound {
            table: name.to_owned(),
        })
    }

    /// True when a table named `name` exists.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.tables.read().contains_key(canonical_table_name(name))
    }

    /// Table names in ascending order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.tables.read().keys().cloned().collect()
    }

    /// Adds a table.
    pub(crate) fn insert(&self, table: Arc<TableInner>) {
        self.tables.write().insert(table.name.clone(), table);
    }

    /// Removes the table named `name`.
    pub(crate) fn remove(&self, name: &str) -> Option<Arc<TableInner>> {
        self.tables.write().remove(canonical_table_name(name))
    }

    /// Every table, by name.
    pub(crate) fn tables(&self) -> Vec<Arc<TableInner>> {
        self.tables.read().values().cloned().collect()
    }

    /// Every region of every table, with its table.
    pub(crate) fn all_regions(&self) -> Vec<(Arc<TableInner>, Arc<Region>)> {
        self.tables
            .read()
            .values()
            .flat_map(|t| {
                let regions = t.state.read().regions.clone();
                regions.into_iter().map(move |r| (t.clone(), r))
            })
            .collect()
    }

    /// Every HFile of every store of every region, each once (after a
    /// split, sibling regions share their parent's files until compaction
    /// rewrites them).
    pub(crate) fn distinct_files(&self) -> Vec<Arc<HFileReader>> {
        let mut seen = HashSet::new();
        let mut files = Vec::new();
        for (_, region) in self.all_regions() {
            for store in region.stores() {
                for (_, file) in store.version().files() {
                    if seen.insert(file.meta().id) {
                        files.push(file.clone());
                    }
                }
            }
        }
        files
    }
}
