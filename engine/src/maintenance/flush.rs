//! Flushing a region: memstores become L0 HFiles.
//!
//! 1. Under the MVCC lock (no sequence can be handed out meanwhile) every
//!    store freezes its active memstore at the boundary `S`, the highest
//!    sequence handed out. Mutations with sequences <= `S` belong to the
//!    frozen memstores, later ones to the new active ones.
//! 2. Wait until every mutation <= `S` has finished inserting.
//! 3. Write one file per store holding its frozen memstores (reads go on
//!    meanwhile: the frozen memstores stay readable).
//! 4. Sync the files and the directory, and the WAL through `S`, then
//!    record the files and `S` as the region's flushed sequence in the
//!    manifest (synced).
//! 5. Swap the files in for the frozen memstores and free the memory. (The
//!    supervisor then deletes the WAL segments no region needs any more.)
//!
//! A crash before step 4 leaves unreferenced files (deleted at the next
//! open) and the WAL still holding the mutations; after it, replay skips
//! the region's mutations <= `S`, which are all in the files.
//!
//! Syncing the WAL first keeps recovery a point in time: the files make
//! this region's mutations <= `S` durable, `AsyncWal` ones included, so
//! every earlier mutation of the other regions must be durable too, or a
//! power loss could keep a later write and lose an earlier one (RocksDB
//! syncs its closed logs before a flush commits, for the same reason).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::catalog::{TableInner, TableState};
use crate::cell::SeekKey;
use crate::core::Services;
use crate::error::{Error, Result};
use crate::file_meta::FileMeta;
use crate::io::budget::IoPriority;
use crate::iter::merge::MergedSources;
use crate::iter::source::{MemstoreSource, Source};
use crate::manifest::{Edit, edit};
use crate::options::FamilyDescriptor;
use crate::region::Region;
use crate::store::Store;
use crate::store::output::{NewFile, OutputFile, remove_new_files};

/// Flushes every memstore of `region`. Returns false when there was
/// nothing to flush.
pub(crate) fn flush_region(
    services: &Services,
    table: &TableInner,
    region: &Arc<Region>,
) -> Result<bool> {
    services.check_writable()?;
    let _flushing = region.schedule.lock_flushes();
    let stores = region.stores();
    if stores.iter().all(|s| s.memstore_cells() == 0) {
        region.schedule.flush_dequeued();
        return Ok(false);
    }
    let started = std::time::Instant::now();
    let state = table.state.read().clone();
    let boundary = freeze(services, &stores);
    // Writes from here on fill the active memstores; only they count
    // towards the next flush until this one ends, however it ends.
    region.set_flushing_bytes(stores.iter().map(|s| s.frozen_bytes(boundary)).sum());
    // Only now may writes queue the next flush: one that came before the
    // freeze saw the whole memstore unflushed, and (with the flush no
    // longer queued) queued another, which wrote the cells that arrived
    // meanwhile as a small file of their own.
    region.schedule.flush_dequeued();
    let _flushing_bytes = ResetFlushingBytes(region);
    let written = write_stores(services, &state, &stores, boundary)?;
    if let Err(e) = services.io.sync_dir(&services.data_dir()) {
        remove_new_files(services, written.iter().filter_map(|(_, f)| f.as_ref()));
        return Err(e);
    }
    if let Some(wal) = services.wal_if_writable()
        && let Err(e) = wal.sync_all()
    {
        remove_new_files(services, written.iter().filter_map(|(_, f)| f.as_ref()));
        return Err(e);
    }
    // From here on the files stay even if the edit fails: a failed append
    // may still have reached the disk, and the next open would apply it.
    let files: Vec<(u32, FileMeta)> = written
        .iter()
        .filter_map(|(store, file)| {
            file.as_ref()
                .map(|f| (store.family_id(), f.reader.meta().clone()))
        })
        .collect();
    let (file_count, bytes, cells) = files.iter().fold((0u64, 0u64, 0u64), |(n, b, c), (_, f)| {
        (n + 1, b + f.size, c + f.cells)
    });
    services.record(&Edit::Flush(edit::Flush {
        table_id: region.table_id(),
        region_id: region.id(),
        flushed_sequence: boundary,
        files,
    }))?;
    install(services, region, written, boundary);
    tracing::info!(
        table = %table.name,
        region = region.id(),
        flushed_sequence = boundary,
        files = file_count,
        bytes,
        cells,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "flushed a region"
    );
    if table.dropped.load(Ordering::Acquire) {
        return Err(Error::TableNotFound {
            table: table.name.clone(),
        });
    }
    Ok(true)
}

/// Clears the region's flushing bytes when a flush ends.
struct ResetFlushingBytes<'a>(&'a Region);

impl Drop for ResetFlushingBytes<'_> {
    fn drop(&mut self) {
        self.0.set_flushing_bytes(0);
    }
}

/// Step 1 and 2: freezes every store's active memstore at the highest
/// sequence handed out, and waits until every mutation up to it inserted.
fn freeze(services: &Services, stores: &[Arc<Store>]) -> u64 {
    let boundary = services.mvcc.at_sequence_boundary(|boundary| {
        for store in stores {
            store.freeze(boundary);
        }
        boundary
    });
    services.mvcc.wait_visible(boundary);
    boundary
}

/// Step 3: one file per store from its frozen memstores up to `boundary`
/// (none for a store without cells). On failure the files written so far
/// are removed.
fn write_stores(
    services: &Services,
    state: &TableState,
    stores: &[Arc<Store>],
    boundary: u64,
) -> Result<Vec<(Arc<Store>, Option<NewFile>)>> {
    let mut written: Vec<(Arc<Store>, Option<NewFile>)> = Vec::new();
    for store in stores {
        let Some((_, family)) = state.family_by_id(store.family_id()) else {
            continue;
        };
        let version = store.version();
        let flushed = || version.frozen.iter().filter(|f| f.up_to <= boundary);
        let cells = flushed().map(|f| f.memstore.cell_count()).sum();
        let sources: Vec<Source> = flushed()
            .map(|f| Source::from(MemstoreSource::new(f.memstore.clone())))
            .collect();
        match write_file(services, family, sources, cells) {
            Ok(file) => written.push((store.clone(), file)),
            Err(e) => {
                remove_new_files(services, written.iter().filter_map(|(_, f)| f.as_ref()));
                return Err(e);
            }
        }
    }
    Ok(written)
}

/// Writes the cells of `sources` (merged, all visible; `cells` of them at
/// most) into a new file; `None` when there are no cells.
fn write_file(
    services: &Services,
    family: &FamilyDescriptor,
    sources: Vec<Source>,
    cells: u64,
) -> Result<Option<NewFile>> {
    let mut merged = MergedSources::new(sources, u64::MAX);
    merged.seek(&SeekKey::row_start(b""))?;
    if merged.current().is_none() {
        return Ok(None);
    }
    let mut output = OutputFile::create(services, family, IoPriority::Flush)?;
    output.expect_cells(cells);
    let written = (|| -> Result<()> {
        while let Some(cell) = merged.current() {
            output.add(&cell)?;
            merged.advance()?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        output.abandon();
        return Err(e);
    }
    output.finish(services).map(Some)
}

/// Step 5: the files replace the frozen memstores in each store's version,
/// and the memory they held is released.
fn install(
    services: &Services,
    region: &Region,
    written: Vec<(Arc<Store>, Option<NewFile>)>,
    boundary: u64,
) {
    let mut freed = 0u64;
    for (store, file) in written {
        freed += store.transition(|version| version.with_flushed(boundary, file.map(|f| f.reader)));
    }
    region.set_flushed_sequence(boundary);
    region.add_memstore_bytes(-(freed as i64));
    services.release_memstore_bytes(freed);
    region.refresh_l0_files();
    services.counters.flushes.fetch_add(1, Ordering::Relaxed);
    region.activity.flushes.fetch_add(1, Ordering::Relaxed);
}
