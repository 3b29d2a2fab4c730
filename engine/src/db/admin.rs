//! The database's catalog operations: create, open, alter, enable and
//! disable, drop tables; create, list and drop namespaces; flush everything;
//! wait for background work. Each change is recorded in the manifest before
//! it takes effect.
//!
//! Namespaces are HBase's: `default` (tables named without a namespace) and
//! `hbase` always exist; others are created with [`Db::create_namespace`],
//! and a table `ns:t` can only be created in an existing namespace. They
//! live in the manifest, next to the tables they hold, so they survive
//! reopening and a table and its namespace change under the same lock.

use std::sync::atomic::Ordering;

use super::Db;
use super::open::build_table;
use crate::catalog::TableState;
use crate::error::{Error, Result};
use crate::manifest::{Edit, ManifestState, RegionRecord, TableRecord, edit};
use crate::options::{
    DEFAULT_NAMESPACE, SYSTEM_NAMESPACE, TableDescriptor, is_builtin_namespace, namespace_of,
    validate_namespace_name, validate_table_name,
};
use crate::table::Table;

/// Fails unless a new table named `table` may be created in its namespace: it
/// exists and is not `hbase`.
pub(super) fn check_namespace_takes(state: &ManifestState, table: &str) -> Result<()> {
    let namespace = namespace_of(table);
    if namespace == SYSTEM_NAMESPACE {
        return Err(Error::ReservedNamespace {
            namespace: namespace.to_owned(),
            reason: "it holds HBase's system tables, and strata keeps none; \
                     it takes no tables",
        });
    }
    if !is_builtin_namespace(namespace) && !state.namespaces.contains(namespace) {
        return Err(Error::NamespaceNotFound {
            namespace: namespace.to_owned(),
        });
    }
    Ok(())
}

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
        check_namespace_takes(manifest.state(), descriptor.name())?;
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
        self.inner
            .services
            .record_locked(&mut manifest, &Edit::CreateTable(record.clone()))?;
        let inner = build_table(
            &self.inner.services.io,
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
        self.inner.services.record_locked(
            &mut manifest,
            &Edit::AlterTable(edit::AlterTable {
                table_id: table.id,
                descriptor: descriptor.clone(),
                family_ids: family_ids.clone(),
            }),
        )?;
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
        table.state.replace(|_| {
            TableState::new(descriptor, family_ids, old.regions.clone())
                .retiring(old.retired_activity, [])
        });
        // A snapshot or a clone may still name them.
        for store in removed {
            let version = store.version();
            self.inner
                .services
                .delete_unreferenced(version.files().map(|(_, file)| file));
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
        self.inner.services.record_locked(
            &mut manifest,
            &Edit::SetEnabled(edit::SetEnabled {
                table_id: table.inner.id,
                enabled,
            }),
        )?;
        table.inner.enabled.store(enabled, Ordering::Release);
        Ok(())
    }

    /// Deletes a table and all its data (enabled or not; the shell, like
    /// HBase's, asks for `disable` first).
    pub fn drop_table(&self, name: &str) -> Result<()> {
        self.check_open()?;
        let mut manifest = self.inner.services.manifest();
        let table = self.inner.catalog.require(name)?;
        self.inner.services.record_locked(
            &mut manifest,
            &Edit::DropTable(edit::DropTable { table_id: table.id }),
        )?;
        drop(manifest);
        table.dropped.store(true, Ordering::Release);
        self.inner.catalog.remove(name);
        for region in table.state.read().regions.iter() {
            // A running flush finishes first; its files are removed below.
            let _flushing = region.schedule.lock_flushes();
            self.inner
                .services
                .release_memstore_bytes(region.memstore_bytes());
            // A snapshot or a clone may still name them.
            for store in region.stores() {
                let version = store.version();
                self.inner
                    .services
                    .delete_unreferenced(version.files().map(|(_, file)| file));
            }
        }
        Ok(())
    }

    /// Creates a namespace (HBase's `create_namespace`): tables named `name:t` can then be
    /// created. `default` and `hbase` always exist.
    pub fn create_namespace(&self, name: &str) -> Result<()> {
        self.check_open()?;
        validate_namespace_name(name)?;
        let mut manifest = self.inner.services.manifest();
        if is_builtin_namespace(name) || manifest.state().namespaces.contains(name) {
            return Err(Error::NamespaceExists {
                namespace: name.to_owned(),
            });
        }
        self.inner.services.record_locked(
            &mut manifest,
            &Edit::CreateNamespace(edit::CreateNamespace {
                name: name.to_owned(),
            }),
        )
    }

    /// Drops an empty namespace (HBase's `drop_namespace`). `default` and `hbase` cannot be
    /// dropped; a namespace holding tables is [`Error::NamespaceNotEmpty`].
    pub fn drop_namespace(&self, name: &str) -> Result<()> {
        self.check_open()?;
        let mut manifest = self.inner.services.manifest();
        if is_builtin_namespace(name) {
            return Err(Error::ReservedNamespace {
                namespace: name.to_owned(),
                reason: "it cannot be removed",
            });
        }
        if !manifest.state().namespaces.contains(name) {
            return Err(Error::NamespaceNotFound {
                namespace: name.to_owned(),
            });
        }
        let tables = self
            .inner
            .catalog
            .names()
            .iter()
            .filter(|table| namespace_of(table) == name)
            .count();
        if tables > 0 {
            return Err(Error::NamespaceNotEmpty {
                namespace: name.to_owned(),
                tables,
            });
        }
        self.inner.services.record_locked(
            &mut manifest,
            &Edit::DropNamespace(edit::DropNamespace {
                name: name.to_owned(),
            }),
        )
    }

    /// True when the namespace exists (`default` and `hbase` always do).
    pub fn namespace_exists(&self, name: &str) -> bool {
        is_builtin_namespace(name)
            || self
                .inner
                .services
                .manifest()
                .state()
                .namespaces
                .contains(name)
    }

    /// Every namespace, `default` and `hbase` included, in ascending order.
    pub fn list_namespaces(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .inner
            .services
            .manifest()
            .state()
            .namespaces
            .iter()
            .cloned()
            .collect();
        names.push(DEFAULT_NAMESPACE.to_owned());
        names.push(SYSTEM_NAMESPACE.to_owned());
        names.sort();
        names
    }

    /// The tables of a namespace, by their name inside it (`t` for `ns:t`), in ascending
    /// order; [`Error::NamespaceNotFound`] when it does not exist.
    pub fn list_namespace_tables(&self, name: &str) -> Result<Vec<String>> {
        self.check_open()?;
        if !self.namespace_exists(name) {
            return Err(Error::NamespaceNotFound {
                namespace: name.to_owned(),
            });
        }
        Ok(self
            .inner
            .catalog
            .names()
            .into_iter()
            .filter(|table| namespace_of(table) == name)
            .map(|table| match table.split_once(':') {
                Some((_, qualifier)) => qualifier.to_owned(),
                None => table,
            })
            .collect())
    }

    /// Flushes every region of every table and waits for it.
    pub fn flush(&self) -> Result<()> {
        self.check_open()?;
        for (table, region) in self.inner.catalog.all_regions() {
            self.inner.supervisor.flush(&table, &region)?;
        }
        Ok(())
    }

    /// Turns the region normalizer on or off (HBase's `normalizer_switch`);
    /// returns whether it was on. While on, a table's small adjacent regions
    /// merge after its flushes (see [`crate::DbOptions::region_normalizer`]).
    pub fn set_normalizer(&self, on: bool) -> bool {
        self.inner.supervisor.set_normalizer(on)
    }

    /// True while the region normalizer is on.
    pub fn normalizer_enabled(&self) -> bool {
        self.inner.supervisor.normalizer_enabled()
    }

    /// Runs the region normalizer over every table now, on or off (HBase's
    /// `normalize`); returns the merges it made.
    pub fn normalize(&self) -> Result<usize> {
        self.check_open()?;
        let mut merges = 0;
        for name in self.inner.catalog.names() {
            if let Some(table) = self.inner.catalog.get(&name) {
                merges += self.inner.supervisor.normalize(&table)?;
            }
        }
        Ok(merges)
    }

    /// Waits until no flush or compaction is queued or running.
    pub fn wait_for_background_work(&self) -> Result<()> {
        self.check_open()?;
        self.inner.supervisor.wait_idle();
        Ok(())
    }
}
