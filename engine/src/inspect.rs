//! Read-only views of what is on disk, for tools and tests.
//!
//! Nothing here modifies files: a torn WAL tail is reported, not cut.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::io::Io;
use crate::options::IoMode;
use crate::wal::format::{FRAME_HEADER_BYTES, decode_mutation, parse_segment_header};
use crate::wal::replay::{SegmentEnd, list_segments, read_segment, scan_segment};
use crate::wal::segment_file_name;

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

/// How the records of a segment end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalSegmentEnd {
    /// Only zeros (preallocated space) follow the last record.
    Clean,
    /// Bytes that hold no valid record follow the last record (a torn write;
    /// replay cuts it if this is the newest segment).
    TornTail {
        /// Offset where the damage starts.
        offset: u64,
    },
    /// A damaged record is followed by valid ones: replay refuses to open.
    Corrupt {
        /// Offset of the damaged record.
        offset: u64,
    },
    /// The segment header itself is damaged.
    BadHeader,
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
    /// The records, in order.
    pub records: Vec<WalRecordSummary>,
    /// How the records end.
    pub end: WalSegmentEnd,
}

/// Lists the WAL segments of the database in `db_dir` with their records.
pub fn wal_segments(db_dir: impl AsRef<Path>) -> Result<Vec<WalSegmentReport>> {
    let wal_dir = db_dir.as_ref().join("wal");
    let io = Io::resolve(IoMode::Auto)?;
    let mut reports = Vec::new();
    for id in list_segments(&wal_dir)? {
        let path = wal_dir.join(segment_file_name(id));
        let bytes = read_segment(io, &path)?;
        let file_bytes = bytes.len() as u64;
        if parse_segment_header(&bytes).is_err() {
            reports.push(WalSegmentReport {
                path,
                id,
                file_bytes,
                records: Vec::new(),
                end: WalSegmentEnd::BadHeader,
            });
            continue;
        }
        let scan = scan_segment(&bytes);
        let mut records = Vec::with_capacity(scan.frames.len());
        for &(offset, frame_bytes) in &scan.frames {
            let start = offset as usize + FRAME_HEADER_BYTES;
            let payload = bytes
                .get(start..offset as usize + frame_bytes)
                .unwrap_or_default();
            let m = decode_mutation(payload)
                .map_err(|e| Error::corruption(&path, offset, e.to_string()))?;
            records.push(WalRecordSummary {
                offset,
                frame_bytes: frame_bytes as u64,
                sequence: m.sequence,
                region_id: m.region_id,
                row: m.row.to_vec(),
                cells: m.families.iter().map(|(_, cells)| cells.len()).sum(),
            });
        }
        let end = match scan.end {
            SegmentEnd::Clean => WalSegmentEnd::Clean,
            SegmentEnd::Torn { offset } => WalSegmentEnd::TornTail { offset },
            SegmentEnd::Corrupt { offset } => WalSegmentEnd::Corrupt { offset },
        };
        reports.push(WalSegmentReport {
            path,
            id,
            file_bytes,
            records,
            end,
        });
    }
    Ok(reports)
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
    use crate::hfile::reader::{FileCursor, HFileReader};
    let path = path.as_ref();
    let io = Io::resolve(IoMode::Auto)?;
    let cache = std::sync::Arc::new(crate::cache::BlockCache::new(0));
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
