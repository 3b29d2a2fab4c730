//! The one way flush and compaction write a new HFile for a store: an id from
//! the manifest's allocation, the file named for it in the data directory,
//! the family's block size, compression and bloom, and on finish the file
//! opened for reading through the block cache and counted in the stats.
//!
//! A file written here is not part of the database until the manifest edit
//! that adds it is durable; a crash before that leaves it an orphan, which
//! the next open deletes. A job that fails before it appends its edit
//! removes its files at once (including one whose finishing write, sync or
//! read-back failed); one whose append fails leaves them, because the edit
//! may have reached the disk anyway, and the next open then applies it (or
//! deletes the orphans).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::cell::CellRef;
use crate::core::Services;
use crate::error::Result;
use crate::hfile::reader::HFileReader;
use crate::hfile::writer::{HFileWriter, WriteBudget, WriterOptions};
use crate::io::budget::IoPriority;
use crate::names::hfile_name;
use crate::options::FamilyDescriptor;

/// How a family's files are written.
pub(crate) fn writer_options(family: &FamilyDescriptor, bloom_bits_per_key: u32) -> WriterOptions {
    WriterOptions {
        family: family.name().as_bytes().to_vec(),
        block_size: family.get_block_size_bytes() as usize,
        compression: family.get_compression(),
        bloom: family.get_bloom(),
        bloom_bits_per_key,
        bulk: None,
        budget: None,
    }
}

/// An HFile being written.
pub(crate) struct OutputFile {
    writer: HFileWriter,
    path: PathBuf,
    id: u64,
    block_cache: bool,
    /// The family is `IN_MEMORY`: the file's blocks cache at priority.
    in_memory: bool,
}

/// A file written and opened, not yet installed in any store.
pub(crate) struct NewFile {
    pub(crate) path: PathBuf,
    pub(crate) reader: Arc<HFileReader>,
}

impl OutputFile {
    /// Starts a new file of `family`, written for `priority` (a flush or a
    /// compaction) through the database's background I/O budget.
    pub(crate) fn create(
        services: &Services,
        family: &FamilyDescriptor,
        priority: IoPriority,
    ) -> Result<OutputFile> {
        let id = services.allocate_file_id();
        let path = services.data_dir().join(hfile_name(id));
        let options = WriterOptions {
            budget: services
                .io_budget
                .clone()
                .map(|budget| WriteBudget { budget, priority }),
            ..writer_options(family, services.options.bloom_bits_per_key)
        };
        let writer = HFileWriter::create(services.io.clone(), &path, options)?;
        Ok(OutputFile {
            writer,
            path,
            id,
            block_cache: family.is_block_cache_enabled(),
            in_memory: family.is_in_memory(),
        })
    }

    /// Tells the writer how many cells are coming, at most (a capacity
    /// hint: see [`HFileWriter::expect_cells`]).
    pub(crate) fn expect_cells(&mut self, cells: u64) {
        self.writer.expect_cells(cells);
    }

    /// Appends a cell (cells come in store order; the writer checks it).
    pub(crate) fn add(&mut self, cell: &CellRef<'_>) -> Result<()> {
        self.writer.add(cell)
    }

    /// Bytes the file will take if finished now (an estimate).
    pub(crate) fn estimated_bytes(&self) -> u64 {
        self.writer.estimated_bytes()
    }

    /// The row of the last cell added.
    pub(crate) fn last_row(&self) -> &[u8] {
        self.writer.last_row()
    }

    /// Finishes the file (synced), opens it for reading and counts its
    /// bytes. On failure the file is removed.
    pub(crate) fn finish(self, services: &Services) -> Result<NewFile> {
        let meta = self.writer.finish(self.id)?;
        let reader = HFileReader::open(
            services.io.clone(),
            &self.path,
            self.id,
            services.cache.clone(),
            self.block_cache,
        )
        .map(|reader| reader.cache_in_memory(self.in_memory))
        .inspect_err(|_| {
            let _ = services.io.remove_file(&self.path);
        })?;
        services
            .counters
            .bytes_flushed_or_compacted
            .fetch_add(meta.size, Ordering::Relaxed);
        Ok(NewFile {
            path: self.path,
            reader: Arc::new(reader),
        })
    }

    /// Gives up on the file and removes it.
    pub(crate) fn abandon(self) {
        self.writer.abandon();
    }
}

/// Removes files written by a job that failed before its manifest edit.
pub(crate) fn remove_new_files<'a>(
    services: &Services,
    files: impl IntoIterator<Item = &'a NewFile>,
) {
    for file in files {
        let _ = services.io.remove_file(&file.path);
    }
}
