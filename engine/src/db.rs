//! Opening and closing a database directory; the catalog of tables.
//!
//! Directory layout (`docs/format.md`):
//! ```text
//! DIR/LOCK                 flock'ed while open: one process, one handle
//! DIR/CURRENT              names the live manifest
//! DIR/MANIFEST-NNNNNN      tables, families, regions, id high-water marks
//! DIR/wal/NNNNNNNNNNNN.wal WAL segments
//! ```
//!
//! Open: lock the directory, read the manifest, rebuild tables and regions,
//! replay the WAL into the memstores (cutting a torn tail), then start a new
//! WAL segment. Catalog changes (create, alter, drop) are serialized by one
//! mutex and recorded durably in the manifest before they take effect.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::{Mutex, RwLock};

use crate::error::{Error, Result};
use crate::io::{Backend, Io};
use crate::manifest::{Edit, Manifest, ManifestState, RegionRecord, TableRecord};
use crate::memstore::NewCell;
use crate::mvcc::{Mvcc, RowLocks};
use crate::options::{DbOptions, TableDescriptor, validate_table_name};
use crate::region::Region;
use crate::table::{Table, TableInner, TableState};
use crate::wal::{Wal, WalStats};

/// Name of the WAL directory inside the database directory.
const WAL_DIR: &str = "wal";

/// Counters describing a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DbStats {
    /// Bytes of memory held by all memstores.
    pub memstore_bytes: u64,
    /// The highest sequence number handed out.
    pub last_sequence: u64,
    /// Group commit counters of the WAL.
    pub wal: WalStats,
    /// The I/O back end in use.
    pub io_backend: Backend,
}

/// What replay found on open.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecoveryReport {
    /// Row mutations replayed from the WAL.
    pub records_replayed: u64,
    /// Records skipped because their table or family was dropped.
    pub records_skipped: u64,
    /// Where a torn WAL tail was cut, if one was.
    pub torn_tail: Option<(PathBuf, u64)>,
}

pub(crate) struct Catalog {
    manifest: Manifest,
    state: ManifestState,
}

pub(crate) struct DbInner {
    pub(crate) dir: PathBuf,
    pub(crate) options: DbOptions,
    pub(crate) io: Io,
    pub(crate) wal: Wal,
    pub(crate) mvcc: Mvcc,
    pub(crate) row_locks: RowLocks,
    pub(crate) memstore_bytes: AtomicU64,
    catalog: Mutex<Catalog>,
    tables: RwLock<BTreeMap<String, Arc<TableInner>>>,
    closed: AtomicBool,
    lock_file: Mutex<Option<File>>,
    recovery: RecoveryReport,
}

impl DbInner {
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub(crate) fn now_ms(&self) -> i64 {
        self.options.clock.now_ms()
    }
}

/// An open database. Cheap to clone; the database closes when [`Db::close`]
/// is called or the last handle (including [`Table`] handles) is dropped.
#[derive(Clone)]
pub struct Db {
    inner: Arc<DbInner>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("dir", &self.inner.dir).finish()
    }
}

fn lock_directory(dir: &Path) -> Result<File> {
    let path = dir.join("LOCK");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
    // SAFETY: flock only reads its integer arguments; the fd is valid while `file` lives.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
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
    Ok(file)
}

fn build_table(record: &TableRecord) -> Arc<TableInner> {
    let families: Vec<(u32, &[u8])> = record
        .family_ids
        .iter()
        .zip(record.descriptor.families())
        .map(|(id, f)| (*id, f.name().as_bytes()))
        .collect();
    let regions = record
        .regions
        .iter()
        .map(|r| Arc::new(Region::new(r.id, r.start.clone(), r.end.clone(), &families)))
        .collect();
    Arc::new(TableInner {
        id: record.id,
        name: record.descriptor.name().to_owned(),
        state: RwLock::new(Arc::new(TableState {
            descriptor: record.descriptor.clone(),
            family_ids: record.family_ids.clone(),
            regions,
        })),
        dropped: AtomicBool::new(false),
    })
}

impl Db {
    /// Opens (or creates) the database in `dir`.
    pub fn open(dir: impl AsRef<Path>, options: DbOptions) -> Result<Db> {
        options.validate()?;
        let dir = dir.as_ref().to_path_buf();
        if !dir.exists() {
            if !options.create_if_missing {
                return Err(Error::io(
                    format!("opening {}", dir.display()),
                    std::io::Error::from(std::io::ErrorKind::NotFound),
                ));
            }
            std::fs::create_dir_all(&dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        let lock_file = lock_directory(&dir)?;
        let io = Io::resolve(options.io)?;
        let (manifest, state) = Manifest::open(&dir, io)?;
        let tables: BTreeMap<String, Arc<TableInner>> = state
            .tables
            .values()
            .map(|record| (record.descriptor.name().to_owned(), build_table(record)))
            .collect();

        // Replay the WAL into the memstores.
        let wal_dir = dir.join(WAL_DIR);
        std::fs::create_dir_all(&wal_dir)
            .map_err(|e| Error::io(format!("creating {}", wal_dir.display()), e))?;
        let regions: HashMap<u64, Arc<Region>> = tables
            .values()
            .flat_map(|t| t.state.read().regions.clone())
            .map(|r| (r.id(), r))
            .collect();
        let mut recovery = RecoveryReport::default();
        let mut memstore_bytes = 0u64;
        let summary = crate::wal::replay::replay(&wal_dir, io, |mutation| {
            let Some(region) = regions.get(&mutation.region_id) else {
                recovery.records_skipped += 1;
                return Ok(());
            };
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
                memstore_bytes += store.insert(&cells);
                applied = true;
            }
            region.note_sequence(mutation.sequence);
            if applied {
                recovery.records_replayed += 1;
            } else {
                recovery.records_skipped += 1;
            }
            Ok(())
        })?;
        recovery.torn_tail = summary.torn_tail.clone();

        let wal = Wal::start(
            &wal_dir,
            io,
            options.wal_segment_bytes,
            options.async_wal_sync_interval_ms,
            summary.next_segment_id,
            summary.segments.clone(),
        )?;
        let inner = DbInner {
            dir,
            io,
            wal,
            mvcc: Mvcc::new(summary.max_sequence),
            row_locks: RowLocks::new(),
            memstore_bytes: AtomicU64::new(memstore_bytes),
            catalog: Mutex::new(Catalog { manifest, state }),
            tables: RwLock::new(tables),
            closed: AtomicBool::new(false),
            lock_file: Mutex::new(Some(lock_file)),
            recovery,
            options,
        };
        Ok(Db {
            inner: Arc::new(inner),
        })
    }

    /// Opens `dir` with default options.
    pub fn open_default(dir: impl AsRef<Path>) -> Result<Db> {
        Db::open(dir, DbOptions::default())
    }

    fn check_open(&self) -> Result<()> {
        if self.inner.is_closed() {
            return Err(Error::Closed);
        }
        Ok(())
    }

    /// Creates a table; its regions come from the descriptor's pre-split.
    pub fn create_table(&self, descriptor: TableDescriptor) -> Result<Table> {
        self.check_open()?;
        descriptor.validate()?;
        let split_keys = descriptor.get_pre_split().split_keys()?;
        let mut catalog = self.inner.catalog.lock();
        if self.inner.tables.read().contains_key(descriptor.name()) {
            return Err(Error::TableExists {
                table: descriptor.name().to_owned(),
            });
        }
        let state = &catalog.state;
        let table_id = state.next_table_id;
        let family_ids: Vec<u32> = (0..descriptor.families().len() as u32)
            .map(|i| state.next_family_id + i)
            .collect();
        let mut boundaries = vec![Vec::new()];
        boundaries.extend(split_keys);
        let regions: Vec<RegionRecord> = boundaries
            .iter()
            .enumerate()
            .map(|(i, start)| RegionRecord {
                id: state.next_region_id + i as u64,
                start: start.clone(),
                end: boundaries.get(i + 1).cloned().unwrap_or_default(),
            })
            .collect();
        let record = TableRecord {
            id: table_id,
            descriptor,
            family_ids,
            regions,
        };
        let edit = Edit::CreateTable(record.clone());
        catalog.manifest.append(&edit)?;
        catalog.state.apply(&edit);
        let inner = build_table(&record);
        self.inner
            .tables
            .write()
            .insert(record.descriptor.name().to_owned(), inner.clone());
        Ok(Table {
            db: self.inner.clone(),
            inner,
        })
    }

    /// A handle to an existing table.
    pub fn table(&self, name: &str) -> Result<Table> {
        self.check_open()?;
        let inner =
            self.inner
                .tables
                .read()
                .get(name)
                .cloned()
                .ok_or_else(|| Error::TableNotFound {
                    table: name.to_owned(),
                })?;
        Ok(Table {
            db: self.inner.clone(),
            inner,
        })
    }

    /// True when a table with this name exists.
    pub fn table_exists(&self, name: &str) -> bool {
        self.inner.tables.read().contains_key(name)
    }

    /// Table names in ascending order.
    pub fn list_tables(&self) -> Vec<String> {
        self.inner.tables.read().keys().cloned().collect()
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
        let mut catalog = self.inner.catalog.lock();
        let table = self
            .inner
            .tables
            .read()
            .get(descriptor.name())
            .cloned()
            .ok_or_else(|| Error::TableNotFound {
                table: descriptor.name().to_owned(),
            })?;
        let old = table.state.read().clone();
        let descriptor = descriptor.pre_split(old.descriptor.get_pre_split().clone());
        descriptor.validate()?;
        let mut next_family_id = catalog.state.next_family_id;
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
        let edit = Edit::AlterTable {
            table_id: table.id,
            descriptor: descriptor.clone(),
            family_ids: family_ids.clone(),
        };
        catalog.manifest.append(&edit)?;
        catalog.state.apply(&edit);
        for region in &old.regions {
            for (id, family) in family_ids.iter().zip(descriptor.families()) {
                region.add_store(*id, family.name().as_bytes());
            }
            for id in &old.family_ids {
                if !family_ids.contains(id) {
                    region.remove_store(*id);
                }
            }
        }
        *table.state.write() = Arc::new(TableState {
            descriptor,
            family_ids,
            regions: old.regions.clone(),
        });
        Ok(())
    }

    /// Deletes a table and all its data.
    pub fn drop_table(&self, name: &str) -> Result<()> {
        self.check_open()?;
        let mut catalog = self.inner.catalog.lock();
        let table =
            self.inner
                .tables
                .read()
                .get(name)
                .cloned()
                .ok_or_else(|| Error::TableNotFound {
                    table: name.to_owned(),
                })?;
        let edit = Edit::DropTable { table_id: table.id };
        catalog.manifest.append(&edit)?;
        catalog.state.apply(&edit);
        table.dropped.store(true, Ordering::Release);
        let freed: u64 = table
            .state
            .read()
            .regions
            .iter()
            .map(|r| r.memstore_bytes())
            .sum();
        self.inner.memstore_bytes.fetch_sub(
            freed.min(self.inner.memstore_bytes.load(Ordering::Relaxed)),
            Ordering::Relaxed,
        );
        self.inner.tables.write().remove(name);
        Ok(())
    }

    /// Counters describing the database.
    pub fn stats(&self) -> DbStats {
        DbStats {
            memstore_bytes: self.inner.memstore_bytes.load(Ordering::Relaxed),
            last_sequence: self.inner.mvcc.last_sequence(),
            wal: self.inner.wal.stats(),
            io_backend: self.inner.io.backend(),
        }
    }

    /// What replay found when this database was opened.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.inner.recovery
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner.dir
    }

    /// Makes every write so far durable, whatever its durability asked for
    /// (except `SkipWal` writes, which never reach the WAL).
    pub fn sync_wal(&self) -> Result<()> {
        self.check_open()?;
        self.inner.wal.sync_all()
    }

    /// Syncs the WAL, stops background work and releases the directory.
    /// Every handle of this database fails with [`Error::Closed`] afterwards.
    pub fn close(&self) -> Result<()> {
        if self.inner.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let result = self.inner.wal.shutdown();
        self.inner.lock_file.lock().take();
        result
    }
}

impl Drop for DbInner {
    fn drop(&mut self) {
        self.closed.store(true, Ordering::Release);
        let _ = self.wal.shutdown();
    }
}
