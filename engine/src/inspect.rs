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
