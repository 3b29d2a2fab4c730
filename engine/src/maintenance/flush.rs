//! Flushing a region: memstores become L0 HFiles.
//!
//! 1. Under the MVCC lock (no sequence can be handed out meanwhile) every
//!    store freezes its active memstore at the boundary `S`, the highest
//!    sequence handed out. Mutations with sequences <= `S` belong to the
//!    frozen memstores, later ones to the new active ones.
//! 2. Wait until every mutation <= `S` has finished inserting.
//! 3. Write one file per store holding its frozen memstores (reads go on
//!    meanwhile: the frozen memstores stay readable).
//! 4. Sync the files and the directory, then record the files and `S` as
//!    the region's flushed sequence in the manifest (synced).
//! 5. Swap the files in for the frozen memstores, free the memory, and
//!    delete the WAL segments no region needs any more.
//!
//! A crash before step 4 leaves unreferenced files (deleted at the next
//! open) and the WAL still holding the mutations; after it, replay skips
//! the region's mutations <= `S`, which are all in the files.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::catalog::TableInner;
use crate::cell::SeekKey;
use crate::db::DbInner;
use crate::error::{Error, Result};
use crate::hfile::reader::HFileReader;
use crate::hfile::writer::{HFileWriter, WriterOptions};
use crate::io::sync_dir;
use crate::iter::merge::MergedSources;
use crate::iter::source::{CellSource, MemstoreSource};
use crate::manifest::Edit;
use crate::names::hfile_name;
use crate::options::FamilyDescriptor;
use crate::region::Region;
use crate::store::Store;

/// How a family's files are written.
pub(crate) fn writer_options(family: &FamilyDescriptor, bloom_bits_per_key: u32) -> WriterOptions {
    WriterOptions {
        family: family.name().as_bytes().to_vec(),
        block_size: family.get_block_size_bytes() as usize,
        compression: family.get_compression(),
        bloom: family.get_bloom(),
        bloom_bits_per_key,
    }
}

/// A file written but not yet installed.
pub(crate) struct NewFile {
    pub(crate) path: PathBuf,
    pub(crate) reader: Arc<HFileReader>,
}

/// Writes the cells of `sources` (merged, all visible) into a new file;
/// `None` when there are no cells.
pub(crate) fn write_file(
    db: &DbInner,
    family: &FamilyDescriptor,
    sources: Vec<Box<dyn CellSource>>,
) -> Result<Option<NewFile>> {
    let mut merged = MergedSources::new(sources, u64::MAX);
    merged.seek(&SeekKey::row_start(b""))?;
    if merged.current().is_none() {
        return Ok(None);
    }
    let id = db.allocate_file_id();
    let path = db.data_dir().join(hfile_name(id));
    let mut writer = HFileWriter::create(
        db.io,
        &path,
        writer_options(family, db.options.bloom_bits_per_key),
    )?;
    let written = (|| -> Result<()> {
        while let Some(cell) = merged.current() {
            writer.add(&cell)?;
            merged.advance()?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        writer.abandon();
        return Err(e);
    }
    let meta = writer.finish(id)?;
    let reader = HFileReader::open(
        db.io,
        &path,
        meta.id,
        db.cache.clone(),
        family.is_block_cache_enabled(),
    )?;
    db.stats
        .bytes_flushed_or_compacted
        .fetch_add(meta.size, Ordering::Relaxed);
    Ok(Some(NewFile {
        path,
        reader: Arc::new(reader),
    }))
}

/// Flushes every memstore of `region`. Returns false when there was nothing
/// to flush.
pub(crate) fn flush_region(db: &DbInner, table: &TableInner, region: &Arc<Region>) -> Result<bool> {
    db.check_writable()?;
    let _flushing = region.flush_lock.lock();
    region.flush_queued.store(false, Ordering::Release);
    let stores = region.stores();
    if stores.iter().all(|s| s.memstore_cells() == 0) {
        return Ok(false);
    }
    let state = table.state.read().clone();
    let boundary = db.mvcc.at_sequence_boundary(|boundary| {
        for store in &stores {
            store.freeze(boundary);
        }
        boundary
    });
    db.mvcc.wait_visible(boundary);

    // Write one file per store from its frozen memstores.
    let mut written: Vec<(Arc<Store>, Option<NewFile>)> = Vec::new();
    let outcome = (|| -> Result<()> {
        for store in &stores {
            let Some((_, family)) = state.family_by_id(store.family_id()) else {
                continue;
            };
            let version = store.version();
            let sources: Vec<Box<dyn CellSource>> = version
                .frozen
                .iter()
                .filter(|f| f.up_to <= boundary)
                .map(|f| Box::new(MemstoreSource::new(f.memstore.clone())) as Box<dyn CellSource>)
                .collect();
            written.push((store.clone(), write_file(db, family, sources)?));
        }
        Ok(())
    })();
    if let Err(e) = outcome {
        for (_, file) in written.into_iter().filter_map(|(s, f)| f.map(|f| (s, f))) {
            let _ = std::fs::remove_file(&file.path);
        }
        return Err(e);
    }
    sync_dir(&db.data_dir())?;

    let files: Vec<(u32, crate::hfile::FileMeta)> = written
        .iter()
        .filter_map(|(store, file)| {
            file.as_ref()
                .map(|f| (store.family_id(), f.reader.meta().clone()))
        })
        .collect();
    db.record(&Edit::Flush {
        table_id: region.table_id(),
        region_id: region.id(),
        flushed_sequence: boundary,
        files,
    })?;

    // Install: files in, frozen memstores out.
    let mut freed = 0u64;
    for (store, file) in written {
        store.update(|version| {
            version.frozen.retain(|f| {
                let flushed = f.up_to <= boundary;
                if flushed {
                    freed += f.memstore.allocated_bytes();
                }
                !flushed
            });
            if let Some(file) = file
                && let Some(l0) = version.levels.first_mut()
            {
                l0.insert(0, file.reader);
            }
        });
    }
    region.set_flushed_sequence(boundary);
    region.add_memstore_bytes(-(freed as i64));
    db.release_memstore_bytes(freed);
    region.refresh_l0_files();
    db.stats.flushes.fetch_add(1, Ordering::Relaxed);
    if table.dropped.load(Ordering::Acquire) {
        return Err(Error::TableNotFound {
            table: table.name.clone(),
        });
    }
    Ok(true)
}
