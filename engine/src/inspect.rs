//! Read-only views of what is on disk, for tools and tests.
//!
//! Nothing here modifies files: a torn WAL tail is reported, not cut, and
//! [`verify_directory`] checks a whole database without opening it.

use std::path::{Path, PathBuf};

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::hfile::reader::HFileReader;
use crate::io::Io;
use crate::manifest::{ManifestState, read_current};
use crate::names::{CREATING_SUFFIX, DATA_DIR, WAL_DIR, hfile_name, parse_hfile_name};
use crate::options::IoMode;
use crate::wal::format::decode_mutations;
use crate::wal::replay::{SegmentEnd, check_log, payload_at};

/// One row mutation record of a WAL segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalRecordSummary {
    /// Byte offset of the record's frame in the segment.
    pub offset: u64,
    /// Bytes of the whole frame (header and payload).
    pub frame_bytes: u64,
    /// Sequence number of the mutation.
    pub sequence: u64,
    /// Region the mutation belongs to.
    pub region_id: u64,
    /// The mutated row.
    pub row: Vec<u8>,
    /// Number of cells in the mutation.
    pub cells: usize,
}

/// How the records of a segment end (`docs/format.md`, "Reading the log back").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalSegmentEnd {
    /// The segment ends with its seal record: it is complete.
    Sealed,
    /// Every group is complete and only preallocated space follows (the
    /// newest segment of a database that was not closed cleanly).
    Clean,
    /// The last group of the newest segment is incomplete from `offset` on:
    /// a crash during its write, whose writers were never acknowledged. A
    /// writable open cuts it and seals the segment.
    TornTail {
        /// Offset of the first byte that is not a valid record.
        offset: u64,
    },
    /// Damage (a damaged record, header or seal; a truncated or missing
    /// segment): opening refuses with [`Error::Corruption`].
    Corrupt {
        /// Offset of the damage.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
}

impl WalSegmentEnd {
    /// True for damage.
    pub fn is_damage(&self) -> bool {
        matches!(self, WalSegmentEnd::Corrupt { .. })
    }
}

/// One WAL segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalSegmentReport {
    /// The segment file.
    pub path: PathBuf,
    /// Segment id (from the file name).
    pub id: u64,
    /// File size in bytes (including preallocated space).
    pub file_bytes: u64,
    /// The row mutation records, in order (with damage, those before it); a
    /// multi-row mutation gives one per row, all at its frame's offset.
    pub records: Vec<WalRecordSummary>,
    /// How the records end.
    pub end: WalSegmentEnd,
}

/// Lists the WAL segments of the database in `db_dir` with their records,
/// checked by the rules replay applies. Changes nothing.
pub fn wal_segments(db_dir: impl AsRef<Path>) -> Result<Vec<WalSegmentReport>> {
    let wal_dir = db_dir.as_ref().join(WAL_DIR);
    let io = Io::resolve(IoMode::Auto)?;
    let mut reports = Vec::new();
    for segment in check_log(&wal_dir, &io)? {
        let mut end = match segment.check.end {
            SegmentEnd::Sealed => WalSegmentEnd::Sealed,
            SegmentEnd::Clean => WalSegmentEnd::Clean,
            SegmentEnd::Torn { offset } => WalSegmentEnd::TornTail { offset },
            SegmentEnd::Corrupt { offset, reason } => WalSegmentEnd::Corrupt { offset, reason },
        };
        let mut records = Vec::with_capacity(segment.check.mutations.len());
        for &(offset, frame_bytes) in &segment.check.mutations {
            match decode_mutations(payload_at(&segment.bytes, offset, frame_bytes)) {
                // A multi-row mutation: one summary per row, at one offset.
                Ok(rows) => records.extend(rows.iter().map(|m| WalRecordSummary {
                    offset,
                    frame_bytes: frame_bytes as u64,
                    sequence: m.sequence,
                    region_id: m.region_id,
                    row: m.row.to_vec(),
                    cells: m.families.iter().map(|(_, cells)| cells.len()).sum(),
                })),
                Err(e) => {
                    end = WalSegmentEnd::Corrupt {
                        offset,
                        reason: e.to_string(),
                    };
                    break;
                }
            }
        }
        reports.push(WalSegmentReport {
            path: segment.path,
            id: segment.id,
            file_bytes: segment.bytes.len() as u64,
            records,
            end,
        });
    }
    Ok(reports)
}

/// What [`verify_directory`] found.
#[derive(Debug, Clone, Default)]
pub struct DirectoryReport {
    /// The live manifest, when `CURRENT` names a readable one.
    pub manifest: Option<PathBuf>,
    /// Tables the manifest describes.
    pub tables: usize,
    /// WAL segments checked.
    pub wal_segments: usize,
    /// WAL row mutation records read.
    pub wal_records: u64,
    /// HFiles checked.
    pub hfiles: u64,
    /// HFile data blocks checked.
    pub blocks: u64,
    /// Every damage found, each naming its file and offset
    /// ([`Error::Corruption`], or [`Error::Io`] for a file that cannot be read).
    pub problems: Vec<Error>,
    /// What is worth knowing but is not damage: a torn WAL or manifest tail a
    /// crash left (a writable open cuts it), HFiles a crashed flush or
    /// compaction left (a writable open deletes them).
    pub notes: Vec<String>,
}

/// Checks everything on disk of the database in `db_dir`, changing nothing
/// (no lock taken, no file opened for writing): the manifest `CURRENT`
/// names, every WAL segment by the rules replay applies (and that each
/// record's region is one the manifest knows), and every block of every
/// HFile the manifest references, that each exists with the size the
/// manifest records. Returns an error only when `db_dir` cannot be read or
/// holds no database (no `CURRENT`, and nothing a lost one would explain).
pub fn verify_directory(db_dir: impl AsRef<Path>) -> Result<DirectoryReport> {
    let dir = db_dir.as_ref();
    if !dir.is_dir() {
        return Err(Error::io(
            format!("opening {}", dir.display()),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    let io = Io::resolve(IoMode::Auto)?;
    let mut report = DirectoryReport::default();
    let state = match read_current(dir, &io) {
        Ok(Some((_, state, read))) => {
            if let Some(offset) = read.torn_tail {
                report.notes.push(format!(
                    "{}: an edit appended after the last commit is torn at offset {offset} \
                     (a crash cut its append short; nothing acted on it)",
                    read.path.display()
                ));
            }
            report.manifest = Some(read.path);
            report.tables = state.tables.len();
            Some(state)
        }
        Ok(None) => {
            return Err(Error::io(
                format!("{} is not a strata database (no CURRENT)", dir.display()),
                std::io::Error::from(std::io::ErrorKind::NotFound),
            ));
        }
        Err(e) => {
            report.problems.push(e);
            None
        }
    };
    verify_wal(dir, &io, state.as_ref(), &mut report)?;
    verify_hfiles(dir, &io, state.as_ref(), &mut report)?;
    Ok(report)
}

fn verify_wal(
    dir: &Path,
    io: &Io,
    state: Option<&ManifestState>,
    report: &mut DirectoryReport,
) -> Result<()> {
    let wal_dir = dir.join(WAL_DIR);
    if !wal_dir.exists() {
        return Ok(());
    }
    for segment in check_log(&wal_dir, io)? {
        report.wal_segments += 1;
        let path = &segment.path;
        for &(offset, frame_bytes) in &segment.check.mutations {
            match decode_mutations(payload_at(&segment.bytes, offset, frame_bytes)) {
                Ok(rows) => {
                    report.wal_records += 1;
                    // The rows of a multi-row mutation share one region.
                    if let Some(lost) = rows
                        .first()
                        .and_then(|m| state.and_then(|s| s.lost_region(m.region_id, path, offset)))
                    {
                        report.problems.push(lost);
                    }
                }
                Err(e) => report
                    .problems
                    .push(Error::corruption(path, offset, e.to_string())),
            }
        }
        match segment.check.end {
            SegmentEnd::Corrupt { offset, reason } => report
                .problems
                .push(Error::corruption(path, offset, reason)),
            SegmentEnd::Torn { offset } => report.notes.push(format!(
                "{}: the last group is torn at offset {offset} (a crash during its write; \
                 none of its writers was acknowledged; a writable open cuts it)",
                path.display()
            )),
            SegmentEnd::Sealed | SegmentEnd::Clean => {}
        }
    }
    if let Ok(entries) = std::fs::read_dir(&wal_dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(CREATING_SUFFIX) {
                report.notes.push(format!(
                    "{}: a segment whose creation a crash interrupted (never held a record; \
                     a writable open deletes it)",
                    entry.path().display()
                ));
            }
        }
    }
    Ok(())
}

/// Opens one HFile (trailer, index, bloom) and checks every block, and its
/// size against the manifest's record when there is one.
fn check_hfile(
    io: &Io,
    cache: &std::sync::Arc<crate::hfile::cache::BlockCache>,
    path: &Path,
    id: u64,
    expected_size: Option<u64>,
    report: &mut DirectoryReport,
) {
    report.hfiles += 1;
    match HFileReader::open(io.clone(), path, id, cache.clone(), false) {
        Ok(reader) => {
            report.blocks += reader.block_count() as u64;
            if let Some(size) = expected_size
                && size != reader.meta().size
            {
                report.problems.push(Error::corruption(
                    path,
                    reader.meta().size,
                    format!(
                        "the file is {} bytes, the manifest records {size}",
                        reader.meta().size
                    ),
                ));
            }
            report.problems.extend(reader.verify());
        }
        Err(e) => report.problems.push(e),
    }
}

fn verify_hfiles(
    dir: &Path,
    io: &Io,
    state: Option<&ManifestState>,
    report: &mut DirectoryReport,
) -> Result<()> {
    let data = dir.join(DATA_DIR);
    let mut on_disk: Vec<(u64, PathBuf)> = match std::fs::read_dir(&data) {
        Ok(entries) => entries
            .flatten()
            .filter_map(|e| {
                let id = e.file_name().to_str().and_then(parse_hfile_name)?;
                Some((id, e.path()))
            })
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io(format!("listing {}", data.display()), e)),
    };
    on_disk.sort();
    let cache = std::sync::Arc::new(crate::hfile::cache::BlockCache::new(0));
    let Some(state) = state else {
        // Without a catalog, check each file on its own.
        for (id, path) in &on_disk {
            check_hfile(io, &cache, path, *id, None, report);
        }
        return Ok(());
    };
    // Tables' files and the files snapshots pin.
    let mut referenced: Vec<(u64, u64)> = state
        .referenced_files()
        .map(|meta| (meta.id, meta.size))
        .collect();
    referenced.sort_unstable();
    referenced.dedup_by_key(|(id, _)| *id);
    for &(id, size) in &referenced {
        let path = data.join(hfile_name(id));
        if path.exists() {
            check_hfile(io, &cache, &path, id, Some(size), report);
        } else {
            report.problems.push(Error::corruption(
                &path,
                0,
                "the manifest references this HFile, but it does not exist",
            ));
        }
    }
    let live: HashSet<u64> = referenced.iter().map(|&(id, _)| id).collect();
    for (id, path) in &on_disk {
        if !live.contains(id) {
            report.notes.push(format!(
                "{}: not referenced by the manifest (left by a flush or compaction a crash \
                 interrupted; a writable open deletes it)",
                path.display()
            ));
        }
    }
    Ok(())
}

/// What an HFile holds, from its trailer, meta, index and bloom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HFileReport {
    /// The file.
    pub path: PathBuf,
    /// File size in bytes.
    pub file_bytes: u64,
    /// Column family the file belongs to.
    pub family: Vec<u8>,
    /// First and last row keys.
    pub first_row: Vec<u8>,
    /// Last row key.
    pub last_row: Vec<u8>,
    /// Smallest and largest cell timestamp.
    pub timestamps: (i64, i64),
    /// Smallest and largest sequence number.
    pub sequences: (u64, u64),
    /// Cells, rows, and delete markers among the cells.
    pub cells: u64,
    /// Rows.
    pub rows: u64,
    /// Delete markers.
    pub markers: u64,
    /// Data blocks and index levels (1 or 2).
    pub data_blocks: u32,
    /// Index levels.
    pub index_levels: u8,
    /// Bloom kind (`NONE`, `ROW`, `ROWCOL`) and keys in it.
    pub bloom: &'static str,
    /// Keys in the bloom.
    pub bloom_keys: u64,
    /// Block compression (`NONE`, `ZSTD`).
    pub compression: &'static str,
    /// Target data block size in bytes.
    pub block_size: u32,
    /// Set for a file a bulk writer made (its cells carry sequence 0 until
    /// a load assigns them one, which only the manifest records).
    pub bulk: Option<BulkOriginReport>,
}

/// Where a bulk-written file comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkOriginReport {
    /// The table it was written for.
    pub table: String,
    /// Its bulk writer's id.
    pub writer_id: u128,
    /// Its number among the writer's files.
    pub file_number: u32,
}

/// One cell of an HFile, for dumps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HFileCell {
    /// Row key.
    pub row: Vec<u8>,
    /// Qualifier.
    pub qualifier: Vec<u8>,
    /// Timestamp.
    pub timestamp: i64,
    /// Kind.
    pub kind: crate::CellKind,
    /// Sequence number.
    pub sequence: u64,
    /// Value.
    pub value: Vec<u8>,
}

/// Opens an HFile and describes it; with `with_cells`, also returns every
/// cell (reading every block, so damage anywhere is reported).
pub fn hfile(path: impl AsRef<Path>, with_cells: bool) -> Result<(HFileReport, Vec<HFileCell>)> {
    use crate::hfile::reader::FileCursor;
    let path = path.as_ref();
    let io = Io::resolve(IoMode::Auto)?;
    let cache = std::sync::Arc::new(crate::hfile::cache::BlockCache::new(0));
    let reader = std::sync::Arc::new(HFileReader::open(io, path, 0, cache, false)?);
    let (meta, info) = (reader.meta().clone(), reader.info().clone());
    let report = HFileReport {
        path: path.to_path_buf(),
        file_bytes: meta.size,
        family: info.family.clone(),
        first_row: meta.first_row.clone(),
        last_row: meta.last_row.clone(),
        timestamps: (meta.min_timestamp, meta.max_timestamp),
        sequences: (meta.min_sequence, meta.max_sequence),
        cells: meta.cells,
        rows: meta.rows,
        markers: meta.markers,
        data_blocks: info.data_blocks,
        index_levels: info.index_levels,
        bloom: info.bloom.name(),
        bloom_keys: info.bloom_keys,
        compression: info.compression.name(),
        block_size: info.block_size,
        bulk: info.bulk.as_ref().map(|b| BulkOriginReport {
            table: b.table.clone(),
            writer_id: b.source.writer_id,
            file_number: b.source.file_number,
        }),
    };
    let mut cells = Vec::new();
    if with_cells {
        let mut cursor = FileCursor::for_whole_file(reader);
        cursor.seek_to_first()?;
        while let Some(c) = cursor.current() {
            cells.push(HFileCell {
                row: c.row.to_vec(),
                qualifier: c.qualifier.to_vec(),
                timestamp: c.timestamp,
                kind: c.kind,
                sequence: c.sequence,
                value: c.value.to_vec(),
            });
            cursor.advance()?;
        }
    }
    Ok((report, cells))
}
