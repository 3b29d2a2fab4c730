//! The database's catalog operations: create, open, alter, enable and
//! disable, drop tables; flush everything; wait for background work. Each
//! change is recorded in the manifest before it takes effect.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Db;
use super::open::build_table;
use crate::catalog::TableState;
use crate::error::{Error, Result};
use crate::manifest::{Edit, RegionRecord, TableRecord};
use crate::options::{TableDescriptor, validate_table_name};
use crate::table::Table;

impl Db {
    /// Creates a table; its regions come from the descriptor's pre-split.
    pub fn create_table(&self, descriptor: TableDescriptor) -> Result<Table> {
        self.check_open()?;
        descriptor.validate()?;
        let split_keys = descriptor.get_pre_split().split_keys()?;
        let mut manifest = self.inner.services.manifest();
        if self.inner.catalog.contains(descriptor.name()) {
            return Err(Error::TableExists {
                table: descriptor.name().to_owned(),
            });
        }
        let state = manifest.state();
        let table_id = state.next_table_id;
        let family_ids: Vec<u32> = (0..descriptor.families().len() as u32)
            .map(|i| state.next_family_id + i)
            .collect();
        let mut boundaries = vec![Vec::new()];
        boundaries.extend(split_keys);
        // Sequences handed out before this table existed can never be its
        // own, so its regions start as flushed through the current sequence.
        let flushed = self.inner.services.mvcc.last_sequence();
        let regions: Vec<RegionRecord> = boundaries
            .iter()
            .enumerate()
            .map(|(i, start)| RegionRecord {
                id: state.next_region_id + i as u64,
                start: start.clone(),
                end: boundaries.get(i + 1).cloned().unwrap_or_default(),
                flushed_sequence: flushed,
                files: Vec::new(),
            })
            .collect();
        let record = TableRecord {
            id: table_id,
            descriptor,
            family_ids,
            regions,
            enabled: true,
        };
        manifest.record(&Edit::CreateTable(record.clone()))?;
        let inner = build_table(
            self.inner.services.io,
            &self.inner.services.data_dir(),
            &self.inner.services.cache,
            &record,
        )?;
        self.inner.catalog.insert(inner.clone());
        Ok(self.inner.handle(inner))
    }

    /// A handle to an existing table.
    pub fn table(&self, name: &str) -> Result<Table> {
        self.check_open()?;
        let inner = self.inner.catalog.require(name)?;
        Ok(self.inner.handle(inner))
    }

    /// True when a table with this name exists.
    pub fn table_exists(&self, name: &str) -> bool {
        self.inner.catalog.contains(name)
    }

    /// Table names in ascending order.
    pub fn list_tables(&self) -> Vec<String> {
        self.inner.catalog.names()
    }

    /// The descriptor of a table.
    pub fn describe_table(&self, name: &str) -> Result<TableDescriptor> {
        self.table(name)?.descriptor()
    }

    /// Changes a table to match `descriptor` (same name): families are
    /// matched by name; new ones are added (empty), missing ones are deleted
    /// with their data, and options of kept families and of the table take
    /// the new values. The pre-split choice of the table is kept as created.
    pub fn alter_table(&self, descriptor: TableDescriptor) -> Result<()> {
        self.check_open()?;
        validate_table_name(descriptor.name())?;
        let mut manifest = self.inner.services.manifest();
        let table = self.inner.catalog.require(descriptor.name())?;
        let old = table.state.read().clone();
        let descriptor = descriptor.pre_split(old.descriptor.get_pre_split().clone());
        descriptor.validate()?;
        let mut next_family_id = manifest.state().next_family_id;
        let family_ids: Vec<u32> = descriptor
            .families()
            .iter()
            .map(|f| match old.family(f.name().as_bytes()) {
                Some((id, _)) => id,
                None => {
                    next_family_id += 1;
                    next_family_id - 1
                }
            })
            .collect();
        manifest.record(&Edit::AlterTable {
            table_id: table.id,
            descriptor: descriptor.clone(),
            family_ids: family_ids.clone(),
        })?;
        drop(manifest);
        let mut removed = Vec::new();
        for region in &old.regions {
            for (id, family) in family_ids.iter().zip(descriptor.families()) {
                region.add_store(*id, family.name().as_bytes());
            }
            for id in &old.family_ids {
                if !family_ids.contains(id)
                    && let Some(store) = region.remove_store(*id)
                {
                    let bytes = store.memstore_bytes();
                    region.add_memstore_bytes(-(bytes as i64));
                    self.inner.services.release_memstore_bytes(bytes);
                    removed.push(store);
                }
            }
        }
        *table.state.write() =
            Arc::new(TableState::new(descriptor, family_ids, old.regions.clone()));
        for store in removed {
            for (_, file) in store.version().files() {
                let _ = std::fs::remove_file(file.path());
            }
        }
        Ok(())
    }

    /// Disables a table (HBase `disable`): its memstores are flushed and it
    /// takes no reads or writes ([`Error::TableDisabled`]) until enabled.
    /// Its descriptor and regions stay readable.
    pub fn disable_table(&self, name: &str) -> Result<()> {
        self.set_enabled(name, false)
    }

    /// Enables a disabled table.
    pub fn enable_table(&self, name: &str) -> Result<()> {
        self.set_enabled(name, true)
    }

    /// False while the table is disabled.
    pub fn is_table_enabled(&self, name: &str) -> Result<bool> {
        Ok(self.table(name)?.is_enabled())
    }

    fn set_enabled(&self, name: &str, enabled: bool) -> Result<()> {
        let table = self.table(name)?;
        if !enabled && table.is_enabled() {
            table.flush()?;
        }
        let mut manifest = self.inner.services.manifest();
        manifest.record(&Edit::SetEnabled {
            table_id: table.inner.id,
            enabled,
        })?;
        table.inner.enabled.store(enabled, Ordering::Release);
        Ok(())
    }

    /// Deletes a table and all its data (enabled or not; the shell, like
    /// HBase's, asks for `disable` first).
    pub fn drop_table(&self, name: &str) -> Result<()> {
        self.check_open()?;
        let mut manifest = self.inner.services.manifest();
        let table = self.inner.catalog.require(name)?;
        manifest.record(&Edit::DropTable { table_id: table.id })?;
        drop(manifest);
        table.dropped.store(true, Ordering::Release);
        self.inner.catalog.remove(name);
        for region in table.state.read().regions.iter() {
            // A running flush finishes first; its files are removed below.
            let _flushing = region.schedule.lock_flushes();
            self.inner
                .services
                .release_memstore_bytes(region.memstore_bytes());
            for store in region.stores() {
                for (_, file) in store.version().files() {
                    let _ = std::fs::remove_file(file.path());
                }
            }
        }
        Ok(())
    }

    /// Flushes every region of every table and waits for it.
    pub fn flush(&self) -> Result<()> {
        self.check_open()?;
        for (table, region) in self.inner.catalog.all_regions() {
            self.inner.supervisor.flush(&table, &region)?;
        }
        Ok(())
    }

    /// Waits until no flush or compaction is queued or running.
    pub fn wait_for_background_work(&self) -> Result<()> {
        self.check_open()?;
        self.inner.supervisor.wait_idle();
        Ok(())
    }
}
