//! Bulk loading on a table: a bulk writer cut at the table's regions, and
//! the atomic ingest of the files it made (`maintenance/ingest.rs`).

use std::path::{Path, PathBuf};

use super::Table;
use crate::error::Result;
use crate::maintenance::ingest::{BulkLoadOptions, BulkLoadReport, bulk_load};
use crate::store::bulk::BulkWriter;

impl Table {
    /// The table's split keys: the start key of every region but the first,
    /// in key order (what a [`BulkWriter`] cuts files at).
    pub fn split_keys(&self) -> Result<Vec<Vec<u8>>> {
        Ok(self
            .metadata()?
            .regions
            .iter()
            .skip(1)
            .map(|r| r.start().to_vec())
            .collect())
    }

    /// A bulk writer for this table, writing into `dir`: cut at the
    /// table's current region boundaries, each family's files with its block
    /// size, compression and bloom. The table may split or merge before the
    /// files are loaded; [`Table::bulk_load`] then splits the files that
    /// cross the new boundaries.
    pub fn bulk_writer(&self, dir: impl AsRef<Path>) -> Result<BulkWriter> {
        let state = self.state()?;
        let split_keys = state
            .regions
            .iter()
            .skip(1)
            .map(|r| r.start().to_vec())
            .collect();
        // Whole-megabyte sequential writes: plain `pwrite` does as well as
        // io_uring, whose buffered writes go through a kernel worker thread
        // each (STRATA_IO still decides when set).
        BulkWriter::with_io(
            crate::io::Io::resolve(crate::options::IoMode::Sync)?,
            &state.descriptor,
            split_keys,
            dir.as_ref(),
            self.services.options.bloom_bits_per_key,
        )
    }

    /// Loads files a [`BulkWriter`] made into the table, all at once: every
    /// file of every region and family becomes visible together, and after a
    /// crash at any step either all of the load is there or none of it.
    /// Files are checked first (a bad file, a file of another table or
    /// family, or one loaded before is refused with a typed error and
    /// nothing changes), split when they cross region boundaries, then moved
    /// (or copied, by option) into the stores. Regions whose memstores hold
    /// rows of the files flush first; other writes go on meanwhile. Loaded
    /// cells behave as puts made now, or, with
    /// [`BulkLoadOptions::backfill`], as written before everything in the
    /// table (`docs/semantics.md`, "Bulk loads").
    pub fn bulk_load<P: AsRef<Path>>(
        &self,
        files: &[P],
        options: &BulkLoadOptions,
    ) -> Result<BulkLoadReport> {
        self.state()?;
        let files: Vec<PathBuf> = files.iter().map(|p| p.as_ref().to_path_buf()).collect();
        bulk_load(&self.supervisor, &self.inner, &files, options)
    }
}
