//! Reading the WAL back: on open (replay) and for inspection tools.
//!
//! How a segment ends (`docs/format.md`, "Reading the log back"): frames are
//! read from the header on. At the first offset `p` that does not hold a
//! valid frame:
//! 1. if every byte from `p` to the end is zero, the segment simply ends
//!    there (preallocated space never written);
//! 2. else, if a valid frame starts anywhere after `p`, the bytes at `p` are
//!    damaged in the middle of the log: corruption, reported with file and
//!    offset;
//! 3. else the segment ends in a torn write. In the newest segment that is
//!    the expected result of a crash during a group write, and replay cuts
//!    the file at `p`; in an older segment it cannot happen (a segment is
//!    synced before the next one is created), so it is corruption.

use std::path::{Path, PathBuf};

use super::format::{
    FrameAt, LoggedMutation, SEGMENT_HEADER_BYTES, decode_mutation, frame_at, parse_segment_header,
};
use super::{SegmentInfo, parse_segment_file_name};
use crate::error::{Error, Result};
use crate::io::{Io, SyncKind};

/// How a segment's frames end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SegmentEnd {
    /// Zeros (or nothing) after the last frame.
    Clean,
    /// Non-zero bytes after the last frame that hold no valid frame.
    Torn {
        /// Offset of the first invalid byte.
        offset: u64,
    },
    /// A damaged frame followed by valid ones.
    Corrupt {
        /// Offset of the damaged frame.
        offset: u64,
    },
}

/// The frames of one segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SegmentScan {
    /// `(offset, frame length)` of each valid frame, in order.
    pub(crate) frames: Vec<(u64, usize)>,
    /// How the frames end.
    pub(crate) end: SegmentEnd,
    /// Offset just after the last valid frame.
    pub(crate) frames_end: u64,
}

/// Finds the frames of a segment's bytes (header already checked).
pub(crate) fn scan_segment(bytes: &[u8]) -> SegmentScan {
    let mut frames = Vec::new();
    let mut p = SEGMENT_HEADER_BYTES;
    loop {
        match frame_at(bytes.get(p..).unwrap_or_default()) {
            FrameAt::Valid { frame_bytes, .. } => {
                frames.push((p as u64, frame_bytes));
                p += frame_bytes;
            }
            FrameAt::Invalid => {
                let rest = bytes.get(p..).unwrap_or_default();
                let end = if rest.iter().all(|&b| b == 0) {
                    SegmentEnd::Clean
                } else if any_valid_frame_after(bytes, p) {
                    SegmentEnd::Corrupt { offset: p as u64 }
                } else {
                    SegmentEnd::Torn { offset: p as u64 }
                };
                return SegmentScan {
                    frames,
                    end,
                    frames_end: p as u64,
                };
            }
        }
    }
}

/// True when a valid frame starts at some offset after `p`.
fn any_valid_frame_after(bytes: &[u8], p: usize) -> bool {
    let mut q = p + 1;
    while q < bytes.len() {
        // Skip runs of zeros quickly: a frame never starts with a zero length.
        match bytes
            .get(q..)
            .and_then(|rest| rest.iter().position(|&b| b != 0))
        {
            None => return false,
            Some(skip) => q += skip,
        }
        // The first non-zero byte may be inside a frame's length field.
        for start in q.saturating_sub(3).max(p + 1)..=q {
            if matches!(
                frame_at(bytes.get(start..).unwrap_or_default()),
                FrameAt::Valid { .. }
            ) {
                return true;
            }
        }
        q += 1;
    }
    false
}

/// What replay found.
#[derive(Debug, Default)]
pub(crate) struct ReplaySummary {
    /// Segments with their highest sequence, oldest first.
    pub(crate) segments: Vec<SegmentInfo>,
    /// Highest sequence in the log (0 when empty).
    pub(crate) max_sequence: u64,
    /// Id for the next segment.
    pub(crate) next_segment_id: u64,
    /// Row mutations read.
    pub(crate) records: u64,
    /// Where a torn tail was cut, if one was.
    pub(crate) torn_tail: Option<(PathBuf, u64)>,
}

/// Lists segment ids in `dir`, ascending.
pub(crate) fn list_segments(dir: &Path) -> Result<Vec<u64>> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
    let mut ids = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
        if let Some(id) = entry.file_name().to_str().and_then(parse_segment_file_name) {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

/// Reads a whole segment file.
pub(crate) fn read_segment(io: Io, path: &Path) -> Result<Vec<u8>> {
    let file = io.open_read(path)?;
    let len = file
        .len()
        .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    let len = usize::try_from(len).map_err(|_| Error::corruption(path, 0, "segment too large"))?;
    let mut bytes = vec![0u8; len];
    file.read_exact_at(0, &mut bytes)
        .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    Ok(bytes)
}

/// Truncates a segment to `len` bytes, durably.
fn cut(io: Io, path: &Path, len: u64) -> Result<()> {
    let file = io.open_rw(path)?;
    file.set_len(len)
        .and_then(|()| file.sync(SyncKind::All))
        .map_err(|e| Error::io(format!("truncating {} to {len} bytes", path.display()), e))
}

/// Replays every segment of `dir` in order, calling `apply` for each row
/// mutation, cutting a torn tail of the newest segment (rule 3).
pub(crate) fn replay(
    dir: &Path,
    io: Io,
    mut apply: impl FnMut(&LoggedMutation<'_>) -> Result<()>,
) -> Result<ReplaySummary> {
    let ids = list_segments(dir)?;
    let mut summary = ReplaySummary {
        next_segment_id: ids.last().map_or(1, |id| id + 1),
        ..ReplaySummary::default()
    };
    for (index, &id) in ids.iter().enumerate() {
        let newest = index + 1 == ids.len();
        let path = dir.join(super::segment_file_name(id));
        let bytes = read_segment(io, &path)?;
        match parse_segment_header(&bytes) {
            Ok(header_id) if header_id == id => {}
            Ok(header_id) => {
                return Err(Error::corruption(
                    &path,
                    0,
                    format!("header names segment {header_id}, file name says {id}"),
                ));
            }
            Err(_)
                if newest
                    && bytes
                        .get(SEGMENT_HEADER_BYTES..)
                        .is_none_or(|rest| rest.iter().all(|&b| b == 0)) =>
            {
                // Creation of the newest segment was interrupted before its
                // header was durable: it never held a frame.
                std::fs::remove_file(&path)
                    .map_err(|e| Error::io(format!("removing {}", path.display()), e))?;
                summary.torn_tail = Some((path, 0));
                continue;
            }
            Err(e) => return Err(Error::corruption(&path, 0, e.to_string())),
        }
        let scan = scan_segment(&bytes);
        if scan.frames.is_empty() && scan.end == SegmentEnd::Clean {
            // A segment that never received a frame carries nothing.
            std::fs::remove_file(&path)
                .map_err(|e| Error::io(format!("removing {}", path.display()), e))?;
            continue;
        }
        let mut segment_max = 0u64;
        for &(offset, frame_bytes) in &scan.frames {
            let start = offset as usize + super::format::FRAME_HEADER_BYTES;
            let payload = bytes
                .get(start..offset as usize + frame_bytes)
                .unwrap_or_default();
            let mutation = decode_mutation(payload)
                .map_err(|e| Error::corruption(&path, offset, e.to_string()))?;
            segment_max = segment_max.max(mutation.sequence);
            apply(&mutation)?;
            summary.records += 1;
        }
        match scan.end {
            SegmentEnd::Clean if scan.frames_end < bytes.len() as u64 => {
                // Preallocated zeros after the last frame: trim them so that
                // later opens do not read them again.
                cut(io, &path, scan.frames_end)?;
            }
            SegmentEnd::Clean => {}
            SegmentEnd::Corrupt { offset } => {
                return Err(Error::corruption(
                    &path,
                    offset,
                    "damaged WAL record followed by valid records",
                ));
            }
            SegmentEnd::Torn { offset } if !newest => {
                return Err(Error::corruption(
                    &path,
                    offset,
                    "damaged WAL record at the end of an older segment",
                ));
            }
            SegmentEnd::Torn { offset } => {
                cut(io, &path, offset)?;
                summary.torn_tail = Some((path, offset));
            }
        }
        summary.max_sequence = summary.max_sequence.max(segment_max);
        summary.segments.push(SegmentInfo {
            id,
            max_sequence: segment_max,
        });
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::super::format::{append_frame, segment_header};
    use super::*;

    fn segment(frames: &[&[u8]], zeros: usize) -> Vec<u8> {
        let mut bytes = segment_header(1).to_vec();
        for f in frames {
            append_frame(&mut bytes, f);
        }
        bytes.extend(std::iter::repeat_n(0u8, zeros));
        bytes
    }

    #[test]
    fn zeros_after_the_last_frame_are_a_clean_end() {
        let s = segment(&[b"one", b"two"], 4096);
        let scan = scan_segment(&s);
        assert_eq!(scan.frames.len(), 2);
        assert_eq!(scan.end, SegmentEnd::Clean);
    }

    #[test]
    fn a_truncated_last_frame_is_a_torn_tail() {
        let full = segment(&[b"one", b"two", b"three"], 0);
        let cut = full.len() - 2;
        let scan = scan_segment(&full[..cut]);
        assert_eq!(scan.frames.len(), 2);
        assert_eq!(
            scan.end,
            SegmentEnd::Torn {
                offset: scan.frames[1].0 + 15
            }
        );
    }

    #[test]
    fn garbage_after_the_tail_is_a_torn_tail() {
        let mut s = segment(&[b"one"], 0);
        let tail = s.len() as u64;
        s.extend_from_slice(&[0xAB; 37]);
        s.extend_from_slice(&[0; 100]);
        assert_eq!(scan_segment(&s).end, SegmentEnd::Torn { offset: tail });
    }

    #[test]
    fn a_flipped_bit_in_a_middle_frame_is_corruption() {
        let s = segment(&[b"one", b"two", b"three"], 64);
        let second = scan_segment(&s).frames[1].0 as usize;
        for byte in [second, second + 2, second + 5, second + 13] {
            let mut damaged = s.clone();
            damaged[byte] ^= 0x04;
            assert_eq!(
                scan_segment(&damaged).end,
                SegmentEnd::Corrupt {
                    offset: second as u64
                },
                "flip at {byte}"
            );
        }
    }
}
