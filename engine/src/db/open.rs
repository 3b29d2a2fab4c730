//! Opening a database directory, step by step: lock the directory, read
//! the manifest (and, unless read-only, rewrite it as a snapshot), delete
//! the HFiles no committed manifest edit references, open every store's
//! files, replay the WAL above each region's flushed sequence, start a new
//! WAL segment, then assemble the services core, the catalog and the
//! supervisor and start its workers. With `DbOptions::read_only` nothing on
//! disk changes. Damage to the manifest or the WAL is an
//! `Error::Corruption` naming the file and offset.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use parking_lot::RwLock;

use super::{Db, DbInner, RecoveryReport};
use crate::catalog::{Catalog, StateCell, TableInner, TableState};
use crate::core::Services;
use crate::error::{Error, Result};
use crate::hfile::cache::BlockCache;
use crate::hfile::reader::HFileReader;
use crate::io::Io;
use crate::maintenance::Supervisor;
use crate::manifest::{Manifest, RegionRecord, TableRecord};
use crate::memstore::NewCell;
use crate::names::{DATA_DIR, LOCK_FILE, WAL_DIR, hfile_name, parse_hfile_name};
use crate::options::DbOptions;
use crate::region::Region;
use crate::store::{LEVELS, Store};
use crate::wal::Wal;
use crate::wal::replay::{ReplayMode, ReplaySummary, replay};

impl Db {
    /// Opens (or creates) the database in `dir`.
    ///
    /// Steps: lock the directory, read the manifest (and, unless read-only,
    /// rewrite it as a snapshot), delete HFiles no committed manifest edit
    /// references, open every store's files, replay the WAL above each
    /// region's flushed sequence, start a new WAL segment and the background
    /// workers. With [`DbOptions::read_only`] nothing on disk changes.
    /// Damage to the manifest or the WAL is an [`Error::Corruption`] naming
    /// the file and offset (see [`DbOptions::wal_recovery`] for the WAL's
    /// way out).
    pub fn open(dir: impl AsRef<Path>, options: DbOptions) -> Result<Db> {
        options.validate()?;
        let io = Io::resolve(options.io)?;
        Db::open_on(dir.as_ref(), options, io)
    }

    /// Opens (or creates) the database in `dir` as [`Db::open`] does, with
    /// every file operation going through the simulated disk `faults`
    /// instead of the real back end (`options.io` and `STRATA_IO` are
    /// ignored): the test hook of the reliability tests and crash tools
    /// (`docs/reliability.md`). Only in builds with the `fault-injection`
    /// feature, so that production cannot open a database this way by
    /// accident.
    #[cfg(feature = "fault-injection")]
    pub fn open_with_faults(
        dir: impl AsRef<Path>,
        options: DbOptions,
        faults: &crate::io::fault::FaultInjector,
    ) -> Result<Db> {
        options.validate()?;
        Db::open_on(dir.as_ref(), options, Io::with_faults(faults))
    }

    fn open_on(dir: &Path, options: DbOptions, io: Io) -> Result<Db> {
        let started = std::time::Instant::now();
        let dir = dir.to_path_buf();
        let read_only = options.read_only;
        ensure_directory(&dir, &options, &io)?;
        let lock_file = lock_directory(&dir, read_only)?;
        let manifest = if read_only {
            Manifest::open_read_only(&dir, io.clone())?
        } else {
            Manifest::open(&dir, io.clone())?
        };
        let data_dir = dir.join(DATA_DIR);
        let wal_dir = dir.join(WAL_DIR);
        let mut recovery = RecoveryReport {
            manifest_torn_tail: manifest
                .read_report()
                .torn_tail
                .map(|offset| (manifest.read_report().path.clone(), offset)),
            ..RecoveryReport::default()
        };
        if !read_only {
            recovery.orphan_files_deleted =
                prepare_directories(&io, &data_dir, &wal_dir, &manifest)?;
        }
        let cache = Arc::new(BlockCache::new(options.block_cache_bytes));
        let tables = build_tables(&io, &data_dir, &cache, &manifest)?;
        let (summary, memstore_bytes) =
            replay_wal(&wal_dir, &io, &options, &manifest, &tables, &mut recovery)?;
        let wal = if read_only {
            None
        } else {
            Some(Wal::start(
                &wal_dir,
                io.clone(),
                options.wal_segment_bytes,
                options.async_wal_sync_interval_ms,
                summary.next_segment_id,
                summary.segments.clone(),
            )?)
        };
        let last_sequence = summary.max_sequence.max(manifest.state().last_sequence);
        let services = Arc::new(Services::new(
            dir,
            options,
            io,
            cache,
            manifest,
            wal,
            last_sequence,
            memstore_bytes,
            lock_file,
        ));
        recovery.log_open(services.dir(), read_only, tables.len(), started.elapsed());
        let catalog = Arc::new(Catalog::new(tables));
        let supervisor = Arc::new(Supervisor::new(services.clone(), catalog.clone()));
        if !read_only {
            supervisor.start()?;
            supervisor.schedule_after_open();
        }
        Ok(Db {
            inner: Arc::new(DbInner {
                services,
                catalog,
                supervisor,
                recovery,
            }),
        })
    }
}

/// Creates the directory when it is missing and the options allow it (its
/// entry made durable in its parent).
fn ensure_directory(dir: &Path, options: &DbOptions, io: &Io) -> Result<()> {
    if dir.exists() {
        return Ok(());
    }
    if !options.create_if_missing || options.read_only {
        return Err(Error::io(
            format!("opening {}", dir.display()),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    io.create_dir_all(dir)
}

/// Creates the data and WAL directories (durably: a power loss must not
/// take the directory holding synced files), deletes orphan HFiles and WAL
/// segments whose creation a crash interrupted; returns the orphans deleted.
fn prepare_directories(
    io: &Io,
    data_dir: &Path,
    wal_dir: &Path,
    manifest: &Manifest,
) -> Result<u64> {
    for sub in [data_dir, wal_dir] {
        io.create_dir_all(sub)?;
    }
    // The manifest read back with every committed edit intact, so an HFile
    // it does not reference was written by a flush or compaction whose edit
    // never committed: nothing refers to it.
    let deleted = delete_orphans(io, data_dir, &manifest.state().live_files())?;
    crate::wal::remove_unfinished_segments(io, wal_dir)?;
    Ok(deleted)
}

/// Every table of the manifest, with its regions' files open.
fn build_tables(
    io: &Io,
    data_dir: &Path,
    cache: &Arc<BlockCache>,
    manifest: &Manifest,
) -> Result<BTreeMap<String, Arc<TableInner>>> {
    manifest
        .state()
        .tables
        .values()
        .map(|record| {
            Ok((
                record.descriptor.name().to_owned(),
                build_table(io, data_dir, cache, record)?,
            ))
        })
        .collect()
}

/// Locks the directory: exclusively for a writer (creating `LOCK`), shared
/// for a read-only open (which creates nothing: without a `LOCK` file there
/// is no lock to take, and `None` is returned).
fn lock_directory(dir: &Path, read_only: bool) -> Result<Option<File>> {
    let path = dir.join(LOCK_FILE);
    let opened = if read_only {
        std::fs::File::open(&path)
    } else {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
    };
    let file = match opened {
        Ok(file) => file,
        Err(e) if read_only && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("opening {}", path.display()), e)),
    };
    let mode = if read_only {
        libc::LOCK_SH
    } else {
        libc::LOCK_EX
    };
    // SAFETY: flock only reads its integer arguments; the fd is valid while `file` lives.
    let rc = unsafe { libc::flock(file.as_raw_fd(), mode | libc::LOCK_NB) };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        return Err(if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Error::DatabaseLocked {
                path: dir.to_path_buf(),
            }
        } else {
            Error::io(format!("locking {}", path.display()), err)
        });
    }
    Ok(Some(file))
}

/// Opens the files of one region and builds it.
pub(super) fn build_region(
    io: &Io,
    data_dir: &Path,
    cache: &Arc<BlockCache>,
    record: &TableRecord,
    region: &RegionRecord,
) -> Result<Arc<Region>> {
    let mut stores = Vec::with_capacity(record.family_ids.len());
    for (family_id, family) in record.family_ids.iter().zip(record.descriptor.families()) {
        let mut levels: Vec<Vec<Arc<HFileReader>>> = vec![Vec::new(); LEVELS];
        for file in region.files.iter().filter(|f| f.family_id == *family_id) {
            let path = data_dir.join(hfile_name(file.meta.id));
            let mut reader = HFileReader::open(
                io.clone(),
                &path,
                file.meta.id,
                cache.clone(),
                family.is_block_cache_enabled(),
            )?
            .cache_in_memory(family.is_in_memory());
            // A bulk-loaded file's cells read with the sequence its load
            // assigned, which only the manifest records.
            if reader.info().bulk.is_some() {
                reader.assign_sequence(file.meta.max_sequence);
            }
            if let Some(level) = levels.get_mut(usize::from(file.level)) {
                level.push(Arc::new(reader));
            }
        }
        // L0 newest first; deeper levels by key.
        if let Some(l0) = levels.first_mut() {
            l0.sort_by_key(|f| std::cmp::Reverse(f.meta().max_sequence));
        }
        for level in levels.iter_mut().skip(1) {
            level.sort_by(|a, b| a.meta().first_row.cmp(&b.meta().first_row));
        }
        stores.push(Arc::new(Store::new(
            *family_id,
            family.name().as_bytes(),
            region.flushed_sequence,
            levels,
        )));
    }
    Ok(Arc::new(Region::new(
        region.id,
        record.id,
        region.start.clone(),
        region.end.clone(),
        stores,
        region.flushed_sequence,
    )))
}

pub(super) fn build_table(
    io: &Io,
    data_dir: &Path,
    cache: &Arc<BlockCache>,
    record: &TableRecord,
) -> Result<Arc<TableInner>> {
    let regions = record
        .regions
        .iter()
        .map(|r| build_region(io, data_dir, cache, record, r))
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(TableInner {
        id: record.id,
        name: record.descriptor.name().to_owned(),
        state: StateCell::new(TableState::new(
            record.descriptor.clone(),
            record.family_ids.clone(),
            regions,
        )),
        dropped: AtomicBool::new(false),
        enabled: AtomicBool::new(record.enabled),
        split_gate: RwLock::new(()),
        normalize_queued: AtomicBool::new(false),
    }))
}

/// Deletes HFiles in `data_dir` that the manifest does not reference.
fn delete_orphans(io: &Io, data_dir: &Path, live: &std::collections::HashSet<u64>) -> Result<u64> {
    let mut deleted = 0;
    let entries = std::fs::read_dir(data_dir)
        .map_err(|e| Error::io(format!("listing {}", data_dir.display()), e))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if parse_hfile_name(name).is_some_and(|id| !live.contains(&id)) {
            io.remove_file(&entry.path())
                .map_err(|e| Error::io(format!("removing orphan {}", entry.path().display()), e))?;
            deleted += 1;
        }
    }
    if deleted > 0 {
        io.sync_dir(data_dir)?;
    }
    Ok(deleted)
}

/// Replays the WAL in `wal_dir` into the regions' memstores (above each
/// region's flushed sequence); returns what replay found and the memstore
/// bytes it filled. A record of a region the manifest never recorded (an id
/// at or above its high-water mark) means the manifest lost the edit that
/// created the region: corruption, never a record to skip.
fn replay_wal(
    wal_dir: &Path,
    io: &Io,
    options: &DbOptions,
    manifest: &Manifest,
    tables: &BTreeMap<String, Arc<TableInner>>,
    recovery: &mut RecoveryReport,
) -> Result<(ReplaySummary, u64)> {
    if options.read_only && !wal_dir.exists() {
        return Ok((ReplaySummary::default(), 0));
    }
    let regions: HashMap<u64, Arc<Region>> = tables
        .values()
        .flat_map(|t| t.state.read().regions.clone())
        .map(|r| (r.id(), r))
        .collect();
    let state = manifest.state();
    let mode = if options.read_only {
        ReplayMode::ReadOnly
    } else {
        ReplayMode::Repair(options.wal_recovery)
    };
    let mut memstore_bytes = 0u64;
    let summary = replay(wal_dir, io, mode, |mutation, path, offset| {
        let Some(region) = regions.get(&mutation.region_id) else {
            if let Some(lost) = state.lost_region(mutation.region_id, path, offset) {
                return Err(lost);
            }
            // A region of a dropped table, or one replaced by a split.
            recovery.records_skipped += 1;
            return Ok(());
        };
        if mutation.sequence <= region.flushed_sequence() {
            recovery.records_skipped += 1;
            return Ok(());
        }
        let mut applied = false;
        for (family_id, cells) in &mutation.families {
            // A dropped family's cells are skipped; ids are never reused.
            let Some(store) = region.store(*family_id) else {
                continue;
            };
            let cells: Vec<NewCell<'_>> = cells
                .iter()
                .map(|c| NewCell {
                    row: mutation.row,
                    qualifier: c.qualifier,
                    timestamp: c.timestamp,
                    kind: c.kind,
                    sequence: mutation.sequence,
                    value: c.value,
                })
                .collect();
            let grown = store.insert(mutation.sequence, &cells);
            region.add_memstore_bytes(grown as i64);
            memstore_bytes += grown;
            applied = true;
        }
        if applied {
            recovery.records_replayed += 1;
        } else {
            recovery.records_skipped += 1;
        }
        Ok(())
    })?;
    recovery.torn_tail = summary.torn_tail.clone();
    if let Some((path, offset, copies)) = &summary.discarded {
        recovery.wal_damage = Some((path.clone(), *offset));
        recovery.wal_set_aside = copies.clone();
    }
    Ok((summary, memstore_bytes))
}
