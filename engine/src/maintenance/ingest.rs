//! Ingesting bulk-written files into a table's stores, atomically across
//! every region and family (HBase's `BulkLoadHFiles`, RocksDB's
//! `IngestExternalFile`).
//!
//! 1. **Verify** every file before anything changes: written by a bulk
//!    writer for this table, a family the table has, not loaded before;
//!    trailer, meta, index and bloom checksums; with
//!    [`BulkLoadOptions::verify_blocks`] (the default) every data block's
//!    checksum and every cell's order, kind and sequence too.
//! 2. **Place** the files in the data directory under new file ids: a file
//!    whose rows lie in one region is hard-linked (or copied, by option, or
//!    when the link fails: another file system); a file that crosses region
//!    boundaries (the table split since it was written) is rewritten into
//!    one file per region. Files and the directory are synced. Until step 4
//!    they are orphans that the next open deletes, and the caller's files
//!    are untouched.
//! 3. **Flush** the regions whose memstores hold rows the files hold, so
//!    that older writes of those rows sit in files below the loaded ones.
//! 4. **Commit**: holding the target regions' compaction slots (levels stay
//!    put), take the load's sequences (one per given file, in the order
//!    given; none for a back-fill, whose cells keep sequence 0), choose each
//!    file's level, and record one `BulkLoad` manifest edit naming every
//!    file of every region and family. The load is durable and whole from
//!    here; before it, a crash leaves nothing of it.
//! 5. **Install** every file into its store, then make the sequences
//!    visible at once: a reader sees all of the load or none of it.
//! 6. **Remove** the caller's files (unless copying).
//!
//! The table's split gate is held shared throughout, so no region splits
//! or merges meanwhile; writes go on, except for the moments between taking
//! the sequences and making them visible (one manifest append), when
//! writers of the whole database wait for the read point.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::catalog::{TableInner, TableState};
use crate::cell::{CellKind, compare_keys};
use crate::core::Services;
use crate::error::{Error, Result};
use crate::hfile::BulkOrigin;
use crate::hfile::cache::BlockCache;
use crate::hfile::reader::{FileCursor, HFileReader};
use crate::hfile::writer::HFileWriter;
use crate::manifest::{Edit, LoadedFile, edit};
use crate::names::hfile_name;
use crate::options::FamilyDescriptor;
use crate::region::Region;
use crate::store::output::writer_options;

use super::Supervisor;

/// Bytes of the private block cache verification reads index leaves
/// through (the database's cache is left to the table's readers).
const VERIFY_CACHE_BYTES: u64 = 4 << 20;

/// The steps of a bulk load, reported to [`BulkLoadOptions::on_step`] as
/// each one ends (see the module documentation of the ingest for what
/// each does and what a crash after it leaves).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BulkLoadStep {
    /// Every file checked; nothing changed yet.
    Verified,
    /// The files are in the data directory (linked, copied or split),
    /// synced; not yet part of the table.
    Placed,
    /// Regions whose memstores overlapped the files are flushed.
    Flushed,
    /// The manifest edit is durable: the load will be visible after a crash.
    Committed,
    /// Every file is in its store and the load is visible.
    Installed,
    /// The given files are removed (moves only).
    SourcesRemoved,
}

/// Called as each step of a load ends.
pub type StepObserver = Arc<dyn Fn(BulkLoadStep) + Send + Sync>;

/// How [`crate::Table::bulk_load`] loads files.
#[derive(Clone, Default)]
pub struct BulkLoadOptions {
    copy: bool,
    backfill: bool,
    metadata_only: bool,
    on_step: Option<StepObserver>,
}

impl std::fmt::Debug for BulkLoadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BulkLoadOptions")
            .field("copy", &self.copy)
            .field("backfill", &self.backfill)
            .field("verify_blocks", &!self.metadata_only)
            .field("on_step", &self.on_step.is_some())
            .finish()
    }
}

impl BulkLoadOptions {
    /// Copy the files instead of moving them (the default moves: the files
    /// are hard-linked into the database and removed from where they were
    /// once the load committed; across file systems they are copied).
    pub fn copy(mut self, copy: bool) -> Self {
        self.copy = copy;
        self
    }

    /// Back-fill: the loaded cells keep sequence zero, so they count as
    /// written before everything in the table (a live cell with the same
    /// row, column and timestamp wins, and every delete marker hides the
    /// cells it covers). The default gives the load fresh sequences: the
    /// cells behave as puts made at the moment of the load.
    pub fn backfill(mut self, backfill: bool) -> Self {
        self.backfill = backfill;
        self
    }

    /// With `true` (the default) every data block's checksum and every
    /// cell's order is checked before the load; with `false` only the
    /// files' trailers, meta, index and bloom are (data blocks are then
    /// checked when first read, as every file's are).
    pub fn verify_blocks(mut self, verify: bool) -> Self {
        self.metadata_only = !verify;
        self
    }

    /// Calls `observer` as each step of the load ends (progress reports;
    /// the crash tests stop a load at each step with it).
    pub fn on_step(mut self, observer: StepObserver) -> Self {
        self.on_step = Some(observer);
        self
    }

    /// True when copying instead of moving.
    pub fn is_copy(&self) -> bool {
        self.copy
    }

    /// True for a back-fill (sequence zero).
    pub fn is_backfill(&self) -> bool {
        self.backfill
    }

    fn step(&self, step: BulkLoadStep) {
        if let Some(observer) = &self.on_step {
            observer(step);
        }
    }
}

/// What a bulk load did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkLoadReport {
    /// Files given.
    pub files_given: usize,
    /// Files installed into stores (one per region a given file reached).
    pub files_installed: usize,
    /// Given files that crossed region boundaries and were rewritten.
    pub files_split: usize,
    /// Given files copied (by option, or because a link was not possible).
    pub files_copied: usize,
    /// Cells loaded.
    pub cells: u64,
    /// Bytes of the installed files.
    pub bytes_installed: u64,
    /// Bytes the load wrote (copies and rewritten parts; links write none).
    pub bytes_written: u64,
    /// Regions that received files.
    pub regions: usize,
    /// Regions flushed first because their memstores held rows of the files.
    pub regions_flushed: usize,
    /// Installed files per level (L0 first).
    pub files_per_level: Vec<usize>,
    /// The highest sequence the load's cells read with (0: a back-fill).
    pub sequence: u64,
}

/// A given file, verified.
struct Source {
    path: PathBuf,
    reader: Arc<HFileReader>,
    family_id: u32,
    family: FamilyDescriptor,
    origin: BulkOrigin,
}

/// A file placed in the data directory for one store of one region.
struct Placed {
    path: PathBuf,
    reader: HFileReader,
    region: Arc<Region>,
    family_id: u32,
    /// Index of the given file it came from (its sequence offset).
    source: usize,
}

/// Completes the load's sequences when dropped: the read point never
/// waits for a load that failed.
struct SequenceGuard<'a> {
    services: &'a Services,
    first: u64,
    count: u64,
}

impl Drop for SequenceGuard<'_> {
    fn drop(&mut self) {
        if self.count > 0 {
            self.services.mvcc.complete(self.first, self.count);
        }
    }
}

/// Loads `files` into `table` (see the module documentation).
pub(crate) fn bulk_load(
    supervisor: &Supervisor,
    table: &Arc<TableInner>,
    files: &[PathBuf],
    options: &BulkLoadOptions,
) -> Result<BulkLoadReport> {
    let services = supervisor.services().as_ref();
    services.check_writable()?;
    let _gate = table.split_gate.read_recursive();
    let state = table.state.read().clone();
    let sources = verify_all(services, table, &state, files, options)?;
    options.step(BulkLoadStep::Verified);
    let mut report = BulkLoadReport {
        files_given: files.len(),
        files_per_level: vec![0; crate::store::LEVELS],
        ..BulkLoadReport::default()
    };
    let placed = place_all(services, &state, &sources, options, &mut report)?;
    options.step(BulkLoadStep::Placed);
    let installed = commit_and_install(supervisor, table, &sources, placed, options, &mut report)?;
    options.step(BulkLoadStep::Installed);
    for region in &installed {
        supervisor.after_bulk_load(table, region);
    }
    if !options.copy {
        for source in &sources {
            let _ = std::fs::remove_file(&source.path);
        }
        options.step(BulkLoadStep::SourcesRemoved);
    }
    Ok(report)
}

/// Step 1 for every file; the first failure is returned.
fn verify_all(
    services: &Services,
    table: &TableInner,
    state: &TableState,
    files: &[PathBuf],
    options: &BulkLoadOptions,
) -> Result<Vec<Source>> {
    let cache = Arc::new(BlockCache::new(VERIFY_CACHE_BYTES));
    let mut sources: Vec<Source> = files
        .iter()
        .map(|path| open_source(services, table, state, path, &cache))
        .collect::<Result<_>>()?;
    let mut seen = HashSet::new();
    {
        let manifest = services.manifest();
        for source in &sources {
            let identity = source.origin.source;
            if !seen.insert(identity)
                || manifest.state().bulk_file_loaded(
                    table.id,
                    identity.writer_id,
                    identity.file_number,
                )
            {
                return Err(Error::BulkFileAlreadyLoaded {
                    file: source.path.clone(),
                    writer_id: identity.writer_id,
                    file_number: identity.file_number,
                });
            }
        }
    }
    // Checking blocks reads every byte: the files are checked on a few
    // threads at once.
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let checked: Vec<Result<()>> = std::thread::scope(|scope| {
        let chunks: Vec<_> = sources
            .chunks(sources.len().div_ceil(threads).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|s| check_contents(s, !options.metadata_only))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks
            .into_iter()
            .flat_map(|h| {
                h.join().unwrap_or_else(|_| {
                    vec![Err(Error::io(
                        "verifying bulk files",
                        std::io::Error::other("a verifying thread panicked"),
                    ))]
                })
            })
            .collect()
    });
    for outcome in checked {
        outcome?;
    }
    sources.shrink_to_fit();
    Ok(sources)
}

/// Opens a given file and checks what its meta says.
fn open_source(
    services: &Services,
    table: &TableInner,
    state: &TableState,
    path: &Path,
    cache: &Arc<BlockCache>,
) -> Result<Source> {
    let reader = HFileReader::open(services.io.clone(), path, 0, cache.clone(), false)?;
    let origin = reader
        .info()
        .bulk
        .clone()
        .ok_or_else(|| Error::NotABulkFile {
            file: path.to_path_buf(),
        })?;
    if origin.table != table.name {
        return Err(Error::BulkFileOfAnotherTable {
            file: path.to_path_buf(),
            written_for: origin.table,
            table: table.name.clone(),
        });
    }
    let family_name = reader.info().family.clone();
    let (family_id, family) =
        state
            .family(&family_name)
            .ok_or_else(|| Error::BulkFileUnknownFamily {
                file: path.to_path_buf(),
                table: table.name.clone(),
                family: String::from_utf8_lossy(&family_name).into_owned(),
            })?;
    let meta = reader.meta();
    if meta.max_sequence != 0 || meta.markers != 0 {
        return Err(Error::corruption(
            path,
            0,
            "a bulk-written file holds only puts of sequence 0, its meta says otherwise",
        ));
    }
    Ok(Source {
        path: path.to_path_buf(),
        reader: Arc::new(reader),
        family_id,
        family: family.clone(),
        origin,
    })
}

/// The index (and, with `blocks`, every cell) of a given file is in order
/// and agrees with its meta.
fn check_contents(source: &Source, blocks: bool) -> Result<()> {
    let reader = &source.reader;
    let meta = reader.meta();
    let bad = |reason: String| Error::corruption(&source.path, 0, reason);
    let mut previous_last: Option<Vec<u8>> = None;
    for ordinal in 0..reader.block_count() {
        let (first, last) = reader.block_bounds(ordinal)?;
        let in_order = first <= last && previous_last.as_ref().is_none_or(|p| *p <= first);
        if !in_order || first < meta.first_row || last > meta.last_row {
            return Err(bad(format!("index entry {ordinal} is out of order")));
        }
        previous_last = Some(last);
    }
    if !blocks {
        return Ok(());
    }
    let mut cursor = FileCursor::for_whole_file(reader.clone());
    cursor.seek_to_first()?;
    let mut previous: Option<(Vec<u8>, Vec<u8>, i64)> = None;
    let mut cells = 0u64;
    while let Some(cell) = cursor.current() {
        if cell.kind != CellKind::Put || cell.sequence != 0 {
            return Err(bad(format!(
                "cell {cells} is a {} of sequence {}; a bulk file holds puts of sequence 0",
                cell.kind.name(),
                cell.sequence
            )));
        }
        if let Some((row, qualifier, timestamp)) = &previous
            && compare_keys((row, qualifier, *timestamp, CellKind::Put, 0), cell.tuple())
                != std::cmp::Ordering::Less
        {
            return Err(bad(format!("cell {cells} is out of order")));
        }
        if cell.row < meta.first_row.as_slice() || cell.row > meta.last_row.as_slice() {
            return Err(bad(format!("cell {cells} lies outside the file's rows")));
        }
        match &mut previous {
            Some(p) => {
                p.0.clear();
                p.0.extend_from_slice(cell.row);
                p.1.clear();
                p.1.extend_from_slice(cell.qualifier);
                p.2 = cell.timestamp;
            }
            None => previous = Some((cell.row.to_vec(), cell.qualifier.to_vec(), cell.timestamp)),
        }
        cells += 1;
        cursor.advance()?;
    }
    if cells != meta.cells {
        return Err(bad(format!(
            "the file holds {cells} cells, its meta says {}",
            meta.cells
        )));
    }
    Ok(())
}

/// Step 2 for every file. On failure the files placed so far are removed.
fn place_all(
    services: &Services,
    state: &TableState,
    sources: &[Source],
    options: &BulkLoadOptions,
    report: &mut BulkLoadReport,
) -> Result<Vec<Placed>> {
    let mut placed: Vec<Placed> = Vec::new();
    let outcome = (|| -> Result<()> {
        for (index, source) in sources.iter().enumerate() {
            let meta = source.reader.meta();
            let first = state.region_index_for(&meta.first_row);
            let last = state.region_index_for(&meta.last_row);
            if first == last {
                let region =
                    state
                        .regions
                        .get(first)
                        .cloned()
                        .ok_or_else(|| Error::TableNotFound {
                            table: state.descriptor.name().to_owned(),
                        })?;
                placed.push(place_whole(
                    services, source, index, region, options, report,
                )?);
            } else {
                report.files_split += 1;
                let regions = state.regions.get(first..=last).unwrap_or_default();
                split_into(services, source, index, regions, &mut placed, report)?;
            }
        }
        for file in &placed {
            std::fs::File::open(&file.path)
                .and_then(|f| f.sync_all())
                .map_err(|e| Error::io(format!("syncing {}", file.path.display()), e))?;
        }
        services.io.sync_dir(&services.data_dir())
    })();
    if let Err(e) = outcome {
        for file in &placed {
            let _ = services.io.remove_file(&file.path);
        }
        return Err(e);
    }
    Ok(placed)
}

/// A file whose rows lie in one region: linked (or copied) in whole.
fn place_whole(
    services: &Services,
    source: &Source,
    index: usize,
    region: Arc<Region>,
    options: &BulkLoadOptions,
    report: &mut BulkLoadReport,
) -> Result<Placed> {
    let id = services.allocate_file_id();
    let path = services.data_dir().join(hfile_name(id));
    let linked = !options.copy && std::fs::hard_link(&source.path, &path).is_ok();
    if !linked {
        let bytes = std::fs::copy(&source.path, &path).map_err(|e| {
            Error::io(
                format!("copying {} to {}", source.path.display(), path.display()),
                e,
            )
        })?;
        report.files_copied += 1;
        report.bytes_written += bytes;
    }
    let reader = open_placed(services, source, &path, id)?;
    Ok(Placed {
        path,
        reader,
        region,
        family_id: source.family_id,
        source: index,
    })
}

/// A file whose rows cross region boundaries: rewritten as one file per
/// region it reaches (the table split since it was written).
fn split_into(
    services: &Services,
    source: &Source,
    index: usize,
    regions: &[Arc<Region>],
    placed: &mut Vec<Placed>,
    report: &mut BulkLoadReport,
) -> Result<()> {
    let mut options = writer_options(&source.family, services.options.bloom_bits_per_key);
    options.bulk = Some(source.origin.clone());
    let mut cursor = FileCursor::for_whole_file(source.reader.clone());
    cursor.seek_to_first()?;
    let mut regions = regions.iter();
    let mut region = regions.next();
    let mut open: Option<(HFileWriter, u64, PathBuf)> = None;
    let finish = |open: Option<(HFileWriter, u64, PathBuf)>,
                  region: Option<&Arc<Region>>,
                  placed: &mut Vec<Placed>,
                  report: &mut BulkLoadReport|
     -> Result<()> {
        let (Some((writer, id, path)), Some(region)) = (open, region) else {
            return Ok(());
        };
        let meta = writer.finish(id)?;
        report.bytes_written += meta.size;
        let reader = open_placed(services, source, &path, id)?;
        placed.push(Placed {
            path,
            reader,
            region: region.clone(),
            family_id: source.family_id,
            source: index,
        });
        Ok(())
    };
    let written = (|| {
        while let Some(cell) = cursor.current() {
            while region.is_some_and(|r| !r.contains(cell.row)) {
                finish(open.take(), region, placed, report)?;
                region = regions.next();
            }
            if region.is_none() {
                return Err(Error::corruption(
                    &source.path,
                    0,
                    "a cell lies outside the regions its rows span",
                ));
            }
            if open.is_none() {
                let id = services.allocate_file_id();
                let path = services.data_dir().join(hfile_name(id));
                let writer = HFileWriter::create(services.io.clone(), &path, options.clone())?;
                open = Some((writer, id, path));
            }
            if let Some((writer, _, _)) = &mut open {
                writer.add(&cell)?;
            }
            cursor.advance()?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        // The files in `placed` are removed by the caller; the one being
        // written is not there yet.
        if let Some((writer, _, _)) = open {
            writer.abandon();
        }
        return Err(e);
    }
    finish(open, region, placed, report)
}

/// Opens a file placed in the data directory for a load; removes it when
/// it cannot be opened (nothing refers to it yet).
fn open_placed(services: &Services, source: &Source, path: &Path, id: u64) -> Result<HFileReader> {
    HFileReader::open(
        services.io.clone(),
        path,
        id,
        services.cache.clone(),
        source.family.is_block_cache_enabled(),
    )
    .map(|reader| reader.cache_in_memory(source.family.is_in_memory()))
    .inspect_err(|_| {
        let _ = services.io.remove_file(path);
    })
}

/// Steps 3 to 5. Returns the regions that received files.
fn commit_and_install(
    supervisor: &Supervisor,
    table: &Arc<TableInner>,
    sources: &[Source],
    mut placed: Vec<Placed>,
    options: &BulkLoadOptions,
    report: &mut BulkLoadReport,
) -> Result<Vec<Arc<Region>>> {
    let services = supervisor.services().as_ref();
    let remove_placed = |placed: &[Placed]| {
        for file in placed {
            let _ = services.io.remove_file(&file.path);
        }
    };
    // The regions receiving files, in key order, each once.
    let mut regions: Vec<Arc<Region>> = Vec::new();
    for file in &placed {
        if !regions.iter().any(|r| Arc::ptr_eq(r, &file.region)) {
            regions.push(file.region.clone());
        }
    }
    regions.sort_by(|a, b| a.start().cmp(b.start()));
    // Step 3.
    for region in &regions {
        let overlapping = placed.iter().any(|file| {
            Arc::ptr_eq(&file.region, region)
                && region.store(file.family_id).is_some_and(|store| {
                    let meta = file.reader.meta();
                    store.memstores_hold_rows(&meta.first_row, &meta.last_row)
                })
        });
        if overlapping {
            if let Err(e) = supervisor.flush(table, region) {
                remove_placed(&placed);
                return Err(e);
            }
            report.regions_flushed += 1;
        }
    }
    options.step(BulkLoadStep::Flushed);
    // Step 4.
    let slots = match regions
        .iter()
        .map(|region| supervisor.compaction_slot(region))
        .collect::<Result<Vec<_>>>()
    {
        Ok(slots) => slots,
        Err(e) => {
            remove_placed(&placed);
            return Err(e);
        }
    };
    let count = if options.backfill {
        0
    } else {
        sources.len() as u64
    };
    let first_sequence = if count > 0 {
        services.mvcc.begin(count)
    } else {
        0
    };
    let guard = SequenceGuard {
        services,
        first: first_sequence,
        count,
    };
    // Each store's levels as the load leaves them, file by file (files of
    // one store in the order given: a later file's cells are newer).
    placed.sort_by_key(|file| file.source);
    let mut versions: Vec<(u64, u32, crate::store::StoreVersion)> = Vec::new();
    let mut installs: Vec<(Arc<Region>, u32, usize, Arc<HFileReader>)> = Vec::new();
    let mut edit_files = Vec::new();
    for file in placed.iter_mut() {
        let sequence = if options.backfill {
            0
        } else {
            first_sequence + file.source as u64
        };
        file.reader.assign_sequence(sequence);
    }
    let mut pending = std::mem::take(&mut placed).into_iter();
    while let Some(file) = pending.next() {
        let Some(store) = file.region.store(file.family_id) else {
            // The family was dropped meanwhile: its file goes.
            let _ = services.io.remove_file(&file.path);
            continue;
        };
        let key = (file.region.id(), file.family_id);
        let at = match versions.iter().position(|(r, f, _)| (*r, *f) == key) {
            Some(at) => at,
            None => {
                versions.push((key.0, key.1, (*store.version()).clone()));
                versions.len() - 1
            }
        };
        let meta = file.reader.meta().clone();
        let level = versions.get(at).and_then(|(_, _, version)| {
            version.bulk_load_level(&meta.first_row, &meta.last_row, options.backfill)
        });
        let (Some(level), Some((_, _, version))) = (level, versions.get_mut(at)) else {
            let error = Error::BackfillOverlapsBottomLevel {
                file: sources
                    .get(file.source)
                    .map(|s| s.path.clone())
                    .unwrap_or_default(),
                region_id: file.region.id(),
                family: String::from_utf8_lossy(store.family_name()).into_owned(),
            };
            let _ = services.io.remove_file(&file.path);
            remove_placed(&pending.collect::<Vec<_>>());
            for (_, _, _, reader) in &installs {
                let _ = services.io.remove_file(reader.path());
            }
            return Err(error);
        };
        let reader = Arc::new(file.reader);
        *version = version.with_bulk_loaded(level, reader.clone());
        edit_files.push(LoadedFile {
            region_id: file.region.id(),
            family_id: file.family_id,
            level: level as u8,
            meta,
        });
        installs.push((file.region, file.family_id, level, reader));
    }
    let last_sequence = if count > 0 {
        first_sequence + count - 1
    } else {
        0
    };
    let edit = Edit::BulkLoad(edit::BulkLoad {
        table_id: table.id,
        sequence: last_sequence,
        files: edit_files,
        sources: sources.iter().map(|s| s.origin.source).collect(),
    });
    // A fresh load's sequences follow every write logged before it: the log
    // is synced through them first, so that after a power loss the load is
    // never there without an earlier `AsyncWal` write (recovery stays a
    // point in time, as a flush keeps it; docs/reliability.md).
    if count > 0
        && let Some(wal) = services.wal_if_writable()
        && let Err(e) = wal.sync_all()
    {
        for (_, _, _, reader) in &installs {
            let _ = services.io.remove_file(reader.path());
        }
        return Err(e);
    }
    // From here on the files stay even if the edit fails: a failed append
    // may still have reached the disk, and the next open would apply it.
    services.record(&edit)?;
    options.step(BulkLoadStep::Committed);
    // Step 5.
    for (region, family_id, level, reader) in installs {
        let meta = reader.meta().clone();
        if let Some(store) = region.store(family_id) {
            store.transition(|version| (version.with_bulk_loaded(level, reader), ()));
        }
        report.files_installed += 1;
        report.cells += meta.cells;
        report.bytes_installed += meta.size;
        if let Some(n) = report.files_per_level.get_mut(level) {
            *n += 1;
        }
        region
            .activity
            .bulk_loaded_bytes
            .fetch_add(meta.size, Ordering::Relaxed);
        region
            .activity
            .bulk_loaded_files
            .fetch_add(1, Ordering::Relaxed);
    }
    drop(guard);
    if count > 0 {
        services.mvcc.wait_visible(last_sequence);
    }
    for region in &regions {
        region.refresh_l0_files();
    }
    drop(slots);
    services.counters.bulk_loads.fetch_add(1, Ordering::Relaxed);
    services
        .counters
        .bytes_bulk_loaded
        .fetch_add(report.bytes_installed, Ordering::Relaxed);
    report.regions = regions.len();
    report.sequence = last_sequence;
    Ok(regions)
}
