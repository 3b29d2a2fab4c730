//! HBase's table snapshots: [`Db::snapshot`], [`Db::list_snapshots`],
//! [`Db::clone_snapshot`], [`Db::restore_snapshot`], [`Db::delete_snapshot`].
//!
//! A snapshot is one manifest edit naming a table's files as they were
//! (`CreateSnapshot`, `docs/format.md`); no data is copied. Its files are
//! *pinned*: [`ManifestState::live_files`] counts them, so neither a
//! compaction, nor a drop, nor an alter that removes a family, nor open's
//! orphan sweep deletes them; `delete_snapshot` releases them (and deletes
//! the ones nothing else names). A clone is a new table whose regions name
//! the snapshot's files (shared, like a daughter region's after a split); a
//! restore replaces a disabled table's regions with such regions
//! (`RestoreTable`). Each operation is one manifest edit, so a crash leaves it
//! done or not done; files a crash kept after their last reference went are
//! deleted by the next open's orphan sweep.

use std::collections::HashMap;

use super::Db;
use super::admin::check_namespace_takes;
use super::open::{build_region, build_table};
use crate::catalog::TableState;
use crate::error::{Error, Result};
use crate::manifest::edit::{DeleteSnapshot, RestoreTable};
use crate::manifest::{Edit, ManifestState, RegionRecord, SnapshotRecord, StoreFile, TableRecord};
use crate::options::{validate_snapshot_name, validate_table_name};
use crate::table::Table;

/// A snapshot, as [`Db::list_snapshots`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// The snapshot's name.
    pub name: String,
    /// The table it was taken of (its name then).
    pub table: String,
    /// When it was taken, in milliseconds since the epoch (the database's clock).
    pub created_ms: i64,
    /// Every write of the table with a sequence at most this is in it.
    pub sequence: u64,
}

/// How [`Db::snapshot_with`] takes a snapshot (HBase's `snapshot` options).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnapshotOptions {
    /// Do not flush the table first (HBase's `SKIP_FLUSH => true`): the snapshot holds only
    /// what its regions had flushed to files, which makes it immediate and leaves the
    /// memstores alone; writes not flushed yet are not in it.
    pub skip_flush: bool,
}

impl Db {
    /// Takes a snapshot of `table` named `name` (HBase's `snapshot 't', 'name'`). An enabled
    /// table is flushed first (HBase's online snapshot): the snapshot holds what the table
    /// held when its regions were flushed. Nothing is copied; the snapshot's files stay on
    /// disk until [`Db::delete_snapshot`].
    ///
    /// Errors: [`Error::InvalidSnapshotName`], [`Error::SnapshotExists`] (names are unique
    /// across tables), [`Error::TableNotFound`].
    pub fn snapshot(&self, table: &str, name: &str) -> Result<()> {
        self.snapshot_with(table, name, SnapshotOptions::default())
    }

    /// [`Db::snapshot`] with options: with [`SnapshotOptions::skip_flush`] the table is not
    /// flushed, and the snapshot holds each region's cells up to its last flush.
    pub fn snapshot_with(&self, table: &str, name: &str, options: SnapshotOptions) -> Result<()> {
        self.check_open()?;
        validate_snapshot_name(name)?;
        self.refuse_taken_name(self.inner.services.manifest().state(), name)?;
        let handle = self.table(table)?;
        if handle.is_enabled() && !options.skip_flush {
            handle.flush()?;
        }
        let services = &self.inner.services;
        let mut manifest = services.manifest();
        let state = manifest.state();
        self.refuse_taken_name(state, name)?;
        let record =
            state
                .tables
                .get(&handle.inner.id)
                .cloned()
                .ok_or_else(|| Error::TableNotFound {
                    table: table.to_owned(),
                })?;
        let sequence = record
            .regions
            .iter()
            .map(|r| r.flushed_sequence)
            .min()
            .unwrap_or_default();
        services.record_locked(
            &mut manifest,
            &Edit::CreateSnapshot(SnapshotRecord {
                name: name.to_owned(),
                created_ms: services.now_ms(),
                sequence,
                table: record,
            }),
        )
    }

    fn refuse_taken_name(&self, state: &ManifestState, name: &str) -> Result<()> {
        if state.snapshots.contains_key(name) {
            return Err(Error::SnapshotExists {
                name: name.to_owned(),
            });
        }
        Ok(())
    }

    /// Every snapshot, by name.
    pub fn list_snapshots(&self) -> Vec<SnapshotInfo> {
        self.inner
            .services
            .manifest()
            .state()
            .snapshots
            .values()
            .map(|s| SnapshotInfo {
                name: s.name.clone(),
                table: s.table.descriptor.name().to_owned(),
                created_ms: s.created_ms,
                sequence: s.sequence,
            })
            .collect()
    }

    /// Deletes a snapshot (HBase's `delete_snapshot`): its files that no table and no other
    /// snapshot names are deleted. [`Error::SnapshotNotFound`] when there is none.
    pub fn delete_snapshot(&self, name: &str) -> Result<()> {
        self.check_open()?;
        let services = &self.inner.services;
        let mut manifest = services.manifest();
        let snapshot = snapshot_named(manifest.state(), name)?;
        services.record_locked(
            &mut manifest,
            &Edit::DeleteSnapshot(DeleteSnapshot {
                name: name.to_owned(),
            }),
        )?;
        drop(manifest);
        services.delete_unreferenced_ids(file_ids(&snapshot.table));
        Ok(())
    }

    /// Creates the table `table` from a snapshot (HBase's `clone_snapshot 'name', 't'`):
    /// the snapshot's schema, regions and cells, sharing its files (nothing is copied);
    /// the clone is enabled, and changes to it touch neither the snapshot nor the table it
    /// was taken of.
    ///
    /// Errors: [`Error::SnapshotNotFound`], [`Error::TableExists`], an invalid name or a
    /// missing namespace as for [`Db::create_table`].
    pub fn clone_snapshot(&self, name: &str, table: &str) -> Result<Table> {
        self.check_open()?;
        validate_table_name(table)?;
        let services = &self.inner.services;
        let mut manifest = services.manifest();
        let state = manifest.state();
        let snapshot = snapshot_named(state, name)?;
        let descriptor = snapshot.table.descriptor.clone().renamed(table);
        if self.inner.catalog.contains(descriptor.name()) {
            return Err(Error::TableExists {
                table: descriptor.name().to_owned(),
            });
        }
        check_namespace_takes(state, descriptor.name())?;
        let (family_ids, regions) = self.fresh_regions(state, &snapshot);
        let record = TableRecord {
            id: state.next_table_id,
            descriptor,
            family_ids,
            regions,
            enabled: true,
        };
        // Opened before the edit: once it is recorded, the table must be served.
        let inner = build_table(&services.io, &services.data_dir(), &services.cache, &record)?;
        services.record_locked(&mut manifest, &Edit::CreateTable(record))?;
        self.inner.catalog.insert(inner.clone());
        Ok(self.inner.handle(inner))
    }

    /// Replaces the content of the table a snapshot was taken of with the snapshot's
    /// (HBase's `restore_snapshot`): its schema, regions and cells as they were. The table
    /// must be disabled ([`Error::TableNotDisabled`]) and stays disabled; a table dropped
    /// since is created again from the snapshot (enabled), as a clone under its old name.
    /// Writes made to it after the snapshot are gone.
    pub fn restore_snapshot(&self, name: &str) -> Result<()> {
        self.check_open()?;
        let services = &self.inner.services;
        let snapshot = snapshot_named(services.manifest().state(), name)?;
        let table_name = snapshot.table.descriptor.name().to_owned();
        let Some(table) = self.inner.catalog.get(&table_name) else {
            return self.clone_snapshot(name, &table_name).map(drop);
        };
        if table.enabled.load(std::sync::atomic::Ordering::Acquire) {
            return Err(Error::TableNotDisabled { table: table_name });
        }
        // A compaction still running on the table would record an edit of a region the
        // restore removes.
        self.inner.supervisor.wait_idle();
        let mut manifest = services.manifest();
        let state = manifest.state();
        if table.enabled.load(std::sync::atomic::Ordering::Acquire)
            || !self.inner.catalog.contains(&table_name)
        {
            return Err(Error::TableNotDisabled { table: table_name });
        }
        let (family_ids, regions) = self.fresh_regions(state, &snapshot);
        let record = TableRecord {
            id: table.id,
            descriptor: snapshot.table.descriptor.clone(),
            family_ids,
            regions,
            enabled: false,
        };
        let data_dir = services.data_dir();
        let built = record
            .regions
            .iter()
            .map(|r| build_region(&services.io, &data_dir, &services.cache, &record, r))
            .collect::<Result<Vec<_>>>()?;
        services.record_locked(
            &mut manifest,
            &Edit::RestoreTable(RestoreTable {
                table_id: record.id,
                descriptor: record.descriptor.clone(),
                family_ids: record.family_ids.clone(),
                regions: record.regions.clone(),
            }),
        )?;
        drop(manifest);
        let old = table.state.read().clone();
        table.state.replace(|_| {
            TableState::new(record.descriptor, record.family_ids, built)
                .retiring(old.retired_activity, &old.regions)
        });
        let mut old_files = Vec::new();
        for region in &old.regions {
            region.schedule.retire();
            let _flushing = region.schedule.lock_flushes();
            services.release_memstore_bytes(region.memstore_bytes());
            for store in region.stores() {
                old_files.extend(store.version().files().map(|(_, f)| f.meta().id));
            }
        }
        services.delete_unreferenced_ids(old_files.into_iter());
        Ok(())
    }

    /// Family ids and regions for a table made from `snapshot` now: fresh ids (never
    /// reused), the snapshot's boundaries and files, each region flushed through every
    /// sequence handed out so far (none of them can be the new regions').
    fn fresh_regions(
        &self,
        state: &ManifestState,
        snapshot: &SnapshotRecord,
    ) -> (Vec<u32>, Vec<RegionRecord>) {
        let old_ids = &snapshot.table.family_ids;
        let family_ids: Vec<u32> = (0..old_ids.len() as u32)
            .map(|i| state.next_family_id + i)
            .collect();
        let new_family: HashMap<u32, u32> = old_ids
            .iter()
            .copied()
            .zip(family_ids.iter().copied())
            .collect();
        let flushed = self.inner.services.mvcc.last_sequence();
        let regions = snapshot
            .table
            .regions
            .iter()
            .enumerate()
            .map(|(i, region)| RegionRecord {
                id: state.next_region_id + i as u64,
                start: region.start.clone(),
                end: region.end.clone(),
                flushed_sequence: flushed,
                files: region
                    .files
                    .iter()
                    .filter_map(|f| {
                        Some(StoreFile {
                            family_id: *new_family.get(&f.family_id)?,
                            ..f.clone()
                        })
                    })
                    .collect(),
            })
            .collect();
        (family_ids, regions)
    }
}

/// The snapshot named `name`, or [`Error::SnapshotNotFound`].
fn snapshot_named(state: &ManifestState, name: &str) -> Result<SnapshotRecord> {
    state
        .snapshots
        .get(name)
        .cloned()
        .ok_or_else(|| Error::SnapshotNotFound {
            name: name.to_owned(),
        })
}

/// Ids of the files a table record names.
fn file_ids(table: &TableRecord) -> impl Iterator<Item = u64> + '_ {
    table
        .regions
        .iter()
        .flat_map(|r| r.files.iter().map(|f| f.meta.id))
}
