//! The bulk writer: sorted cells of one table written straight into HFiles,
//! one file per region per family, ready for `Table::bulk_load` (HBase's
//! `HFileOutputFormat2`, RocksDB's `SstFileWriter`).
//!
//! Cells come in the writer's order: row ascending, then family name,
//! qualifier ascending, timestamp descending, each (row, column, timestamp)
//! once. Every cell is checked before anything of it is written: the order,
//! the limits a put checks (row, qualifier, timestamp, value size) and the
//! family; the first cell that fails stops the writer with an error naming
//! it. Files are cut at the region boundaries the writer was given (the
//! table's current ones, or a descriptor's split keys for a job that runs
//! without the database) and written with each family's block size,
//! compression and bloom. Every cell is a put carrying sequence 0; the load
//! assigns the sequence it reads with (`docs/semantics.md`, "Bulk loads").

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cell::{
    CellKind, CellRef, bytes_equal, compare_bytes, validate_qualifier, validate_row,
    validate_timestamp,
};
use crate::error::{CellKey, Error, Result};
use crate::file_meta::BulkSource;
use crate::hfile::BulkOrigin;
use crate::hfile::writer::{HFileWriter, WriterOptions};
use crate::io::Io;
use crate::options::{DbOptions, FamilyDescriptor, TableDescriptor};

use super::output::writer_options;

/// Suffix of the files a bulk writer makes.
pub const BULK_FILE_SUFFIX: &str = ".hfile";

/// A file a bulk writer made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkFile {
    /// Where it is.
    pub path: PathBuf,
    /// The family it holds.
    pub family: String,
    /// The region it was cut for: inclusive start (empty: the table's start).
    pub region_start: Vec<u8>,
    /// The region it was cut for: exclusive end (empty: the table's end).
    pub region_end: Vec<u8>,
    /// Its first and last row.
    pub first_row: Vec<u8>,
    /// Its last row.
    pub last_row: Vec<u8>,
    /// Cells in it.
    pub cells: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

/// What a bulk writer made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkFiles {
    /// The files, in key order (per region, families by name).
    pub files: Vec<BulkFile>,
    /// Cells written.
    pub cells: u64,
    /// Bytes of the cells as given (row, family, qualifier and value bytes
    /// plus 8 per timestamp): the input a throughput is measured against.
    pub input_bytes: u64,
}

impl BulkFiles {
    /// Bytes of every file.
    pub fn file_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }

    /// Every file's path, for [`crate::Table::bulk_load`].
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files.iter().map(|f| f.path.clone()).collect()
    }
}

/// Writes sorted cells of one table into HFiles for a bulk load. See the
/// module documentation for the order and the checks.
///
/// ```
/// use strata::{BulkLoadOptions, BulkWriter, Db, FamilyDescriptor, Get, TableDescriptor};
/// # fn main() -> strata::Result<()> {
/// let dir = tempfile::tempdir().unwrap();
/// let db = Db::open_default(dir.path().join("db"))?;
/// let table = db.create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))?;
/// let mut writer = table.bulk_writer(dir.path().join("load"))?;
/// writer.add(b"row1", b"f", b"q", 1000, b"one")?;
/// writer.add(b"row2", b"f", b"q", 1000, b"two")?;
/// let files = writer.finish()?;
/// table.bulk_load(&files.paths(), &BulkLoadOptions::default())?;
/// assert_eq!(table.get(&Get::new("row2"))?.value("f", "q"), Some(&b"two"[..]));
/// # Ok(())
/// # }
/// ```
pub struct BulkWriter {
    io: Io,
    dir: PathBuf,
    table: String,
    /// Families sorted by name, with the options their files are written with.
    families: Vec<(FamilyDescriptor, WriterOptions)>,
    /// Region boundaries: region `i` is `[splits[i-1], splits[i])`.
    splits: Vec<Vec<u8>>,
    max_value_bytes: usize,
    writer_id: u128,
    /// The region the current row falls in.
    region: usize,
    /// One open file per family of the current region (by family index).
    open: Vec<Option<OpenFile>>,
    done: BulkFiles,
    previous: Option<Box<CellKey>>,
    /// The family index of the previous cell (a cheap first guess).
    previous_family: usize,
    next_file_number: u32,
    /// The error that stopped the writer: it takes no cell after one.
    failed: Option<Error>,
}

/// A file being written.
struct OpenFile {
    writer: HFileWriter,
    path: PathBuf,
    number: u32,
}

impl std::fmt::Debug for BulkWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BulkWriter")
            .field("table", &self.table)
            .field("dir", &self.dir)
            .field("cells", &self.done.cells)
            .finish()
    }
}

/// A fresh random writer id: two writers never share one (it names their
/// files and lets a load refuse a file it loaded before).
fn new_writer_id() -> u128 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut seed = Vec::with_capacity(48);
    seed.extend_from_slice(&now.to_le_bytes());
    seed.extend_from_slice(&std::process::id().to_le_bytes());
    seed.extend_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let local = 0u8;
    seed.extend_from_slice(&(std::ptr::addr_of!(local) as usize).to_le_bytes());
    xxhash_rust::xxh3::xxh3_128(&seed)
}

impl BulkWriter {
    /// A writer for the table `descriptor` describes, cut into regions at
    /// `split_keys` (what the table's regions are: see
    /// [`crate::Table::bulk_writer`] for an open table's, or
    /// [`crate::PreSplit::split_keys`] for a descriptor's pre-split), writing
    /// into `dir` (created when missing). Runs without a database: the job
    /// that prepares a load may run on another machine.
    pub fn new(
        descriptor: &TableDescriptor,
        split_keys: Vec<Vec<u8>>,
        dir: impl AsRef<Path>,
    ) -> Result<BulkWriter> {
        // Whole-megabyte sequential writes: the plain back end does as well
        // (unless STRATA_IO asks for another).
        Self::with_io(
            Io::resolve(crate::options::IoMode::Sync)?,
            descriptor,
            split_keys,
            dir.as_ref(),
            DbOptions::default().bloom_bits_per_key,
        )
    }

    /// As [`BulkWriter::new`], with the database's I/O back end and bloom
    /// density.
    pub(crate) fn with_io(
        io: Io,
        descriptor: &TableDescriptor,
        split_keys: Vec<Vec<u8>>,
        dir: &Path,
        bloom_bits_per_key: u32,
    ) -> Result<BulkWriter> {
        descriptor.validate()?;
        if split_keys.iter().any(Vec::is_empty) || split_keys.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::InvalidOption {
                name: "split_keys",
                reason: "split keys must be non-empty and strictly ascending".into(),
            });
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        let writer_id = new_writer_id();
        let table = crate::options::canonical_table_name(descriptor.name()).to_owned();
        let mut families: Vec<(FamilyDescriptor, WriterOptions)> = descriptor
            .families()
            .iter()
            .map(|family| {
                let mut options = writer_options(family, bloom_bits_per_key);
                options.bulk = Some(BulkOrigin {
                    table: table.clone(),
                    source: BulkSource {
                        writer_id,
                        file_number: 0,
                    },
                });
                (family.clone(), options)
            })
            .collect();
        families.sort_by(|a, b| a.0.name().cmp(b.0.name()));
        let open = families.iter().map(|_| None).collect();
        Ok(BulkWriter {
            io,
            dir: dir.to_path_buf(),
            table,
            families,
            splits: split_keys,
            max_value_bytes: descriptor.get_max_value_bytes(),
            writer_id,
            region: 0,
            open,
            done: BulkFiles::default(),
            previous: None,
            previous_family: 0,
            next_file_number: 0,
            failed: None,
        })
    }

    /// The writer's id, recorded in every file it makes.
    pub fn writer_id(&self) -> u128 {
        self.writer_id
    }

    /// Cells added so far.
    pub fn cells(&self) -> u64 {
        self.done.cells
    }

    fn key(row: &[u8], family: &[u8], qualifier: &[u8], timestamp: i64) -> Box<CellKey> {
        Box::new(CellKey {
            row: row.to_vec(),
            family: family.to_vec(),
            qualifier: qualifier.to_vec(),
            timestamp,
        })
    }

    /// Adds one put. Cells must come in the writer's order (module
    /// documentation); the first cell out of order, past a limit or in an
    /// unknown family fails with [`Error::BulkCellOutOfOrder`] or
    /// [`Error::BulkCellInvalid`] naming it, and the writer takes no more
    /// cells after that (the files it wrote stay; [`BulkWriter::abandon`]
    /// removes them).
    pub fn add(
        &mut self,
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        timestamp: i64,
        value: &[u8],
    ) -> Result<()> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let outcome = self.add_checked(row, family, qualifier, timestamp, value);
        if let Err(error) = &outcome {
            self.failed = Some(error.clone());
        }
        outcome
    }

    fn add_checked(
        &mut self,
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        timestamp: i64,
        value: &[u8],
    ) -> Result<()> {
        let index = self.done.cells;
        let invalid = |source: Error| Error::BulkCellInvalid {
            index,
            cell: Self::key(row, family, qualifier, timestamp),
            source: Box::new(source),
        };
        validate_row(row).map_err(invalid)?;
        validate_qualifier(qualifier).map_err(invalid)?;
        validate_timestamp(timestamp).map_err(invalid)?;
        if value.len() > self.max_value_bytes {
            return Err(invalid(Error::ValueTooLarge {
                len: value.len(),
                max: self.max_value_bytes,
            }));
        }
        let family_index = self.family_index(family).ok_or_else(|| {
            invalid(Error::UnknownFamily {
                table: self.table.clone(),
                family: String::from_utf8_lossy(family).into_owned(),
            })
        })?;
        let new_row = self.check_order(index, row, family, qualifier, timestamp)?;
        if new_row && !self.in_current_region(row) {
            self.finish_region()?;
            self.region = self.splits.partition_point(|split| split.as_slice() <= row);
        }
        let cell = CellRef {
            row,
            qualifier,
            timestamp,
            kind: CellKind::Put,
            sequence: 0,
            value,
        };
        let file = match self.open.get_mut(family_index) {
            Some(Some(file)) => file,
            _ => self.open_file(family_index)?,
        };
        // The order was checked above (strictly, with the family).
        file.writer.add_ordered(&cell)?;
        self.done.cells += 1;
        self.done.input_bytes +=
            (row.len() + family.len() + qualifier.len() + value.len()) as u64 + 8;
        self.previous_family = family_index;
        Ok(())
    }

    fn family_index(&self, family: &[u8]) -> Option<usize> {
        match self.families.get(self.previous_family) {
            Some((f, _)) if bytes_equal(f.name().as_bytes(), family) => Some(self.previous_family),
            _ => self
                .families
                .iter()
                .position(|(f, _)| f.name().as_bytes() == family),
        }
    }

    /// The cell must come strictly after the previous one. Returns whether
    /// it starts a new row (the first cell does).
    fn check_order(
        &mut self,
        index: u64,
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        timestamp: i64,
    ) -> Result<bool> {
        let Some(previous) = &mut self.previous else {
            self.previous = Some(Self::key(row, family, qualifier, timestamp));
            return Ok(true);
        };
        // `compare_bytes`, not slices' `cmp`: a library call per field of
        // every cell was a fifth of a bulk build's time.
        let row_order = compare_bytes(&previous.row, row);
        let order = row_order
            .then_with(|| compare_bytes(&previous.family, family))
            .then_with(|| compare_bytes(&previous.qualifier, qualifier))
            .then_with(|| timestamp.cmp(&previous.timestamp));
        if order != std::cmp::Ordering::Less {
            return Err(Error::BulkCellOutOfOrder {
                index,
                cell: Self::key(row, family, qualifier, timestamp),
                previous: previous.clone(),
            });
        }
        // Reuse the buffers: this runs for every cell.
        let new_row = row_order != std::cmp::Ordering::Equal;
        if new_row {
            previous.row.clear();
            previous.row.extend_from_slice(row);
        }
        if new_row || !bytes_equal(&previous.family, family) {
            previous.family.clear();
            previous.family.extend_from_slice(family);
        }
        previous.qualifier.clear();
        previous.qualifier.extend_from_slice(qualifier);
        previous.timestamp = timestamp;
        Ok(new_row)
    }

    /// True when `row`, which follows the previous cell's row, lies in the
    /// previous cell's region (false for the first cell, whose region is set
    /// by the caller). Rows only grow, so only the region's end matters.
    fn in_current_region(&self, row: &[u8]) -> bool {
        if self.done.cells == 0 && self.open.iter().all(Option::is_none) {
            return false;
        }
        self.splits
            .get(self.region)
            .is_none_or(|end| row < end.as_slice())
    }

    fn open_file(&mut self, family_index: usize) -> Result<&mut OpenFile> {
        let number = self.next_file_number;
        self.next_file_number += 1;
        let (_, options) = self
            .families
            .get(family_index)
            .ok_or_else(|| Error::InvalidOption {
                name: "family",
                reason: format!("no family at index {family_index}"),
            })?;
        let mut options = options.clone();
        if let Some(bulk) = &mut options.bulk {
            bulk.source.file_number = number;
        }
        let path = self.dir.join(format!(
            "{:016x}-{number:06}{BULK_FILE_SUFFIX}",
            self.writer_id as u64
        ));
        let writer = HFileWriter::create(self.io.clone(), &path, options)?;
        let slot = self
            .open
            .get_mut(family_index)
            .ok_or_else(|| Error::InvalidOption {
                name: "family",
                reason: format!("no family at index {family_index}"),
            })?;
        Ok(slot.insert(OpenFile {
            writer,
            path,
            number,
        }))
    }

    /// Finishes every open file of the current region.
    fn finish_region(&mut self) -> Result<()> {
        let region_start = self
            .region
            .checked_sub(1)
            .and_then(|i| self.splits.get(i))
            .cloned()
            .unwrap_or_default();
        let region_end = self.splits.get(self.region).cloned().unwrap_or_default();
        for (index, slot) in self.open.iter_mut().enumerate() {
            let Some(file) = slot.take() else { continue };
            let meta = file.writer.finish(u64::from(file.number))?;
            let family = self
                .families
                .get(index)
                .map(|(f, _)| f.name().to_owned())
                .unwrap_or_default();
            self.done.files.push(BulkFile {
                path: file.path,
                family,
                region_start: region_start.clone(),
                region_end: region_end.clone(),
                first_row: meta.first_row,
                last_row: meta.last_row,
                cells: meta.cells,
                bytes: meta.size,
            });
        }
        Ok(())
    }

    /// Finishes the last files and returns what the writer made. Every file
    /// is synced (`fsync`) before this returns.
    pub fn finish(mut self) -> Result<BulkFiles> {
        if let Some(error) = self.failed.take() {
            return Err(error);
        }
        self.finish_region()?;
        self.io.sync_dir(&self.dir)?;
        Ok(std::mem::take(&mut self.done))
    }

    /// Gives up: removes every file the writer made.
    pub fn abandon(mut self) {
        for slot in &mut self.open {
            if let Some(file) = slot.take() {
                file.writer.abandon();
            }
        }
        for file in &self.done.files {
            let _ = std::fs::remove_file(&file.path);
        }
    }
}
