//! Reading the WAL back: on open (replay) and for inspection tools.
//!
//! How strata tells a torn tail from damage (`docs/format.md`, "Reading the
//! log back", states the rules and why they hold):
//! * Every group the commit thread writes ends with a *group commit record*
//!   naming the frames and bytes before it, so damage to any acknowledged row
//!   mutation is followed by a valid frame: it is corruption, never a tail.
//! * Every segment but the newest is *sealed*: its last frame is a seal record
//!   counting its frames. An older segment without one was truncated.
//! * The newest segment is sealed after a clean close; after a crash it is
//!   not, and then its length is a whole number of allocation units of
//!   preallocated space that its writes never reach. A newest segment whose
//!   frames run to the end of the file, or whose length is not a whole number
//!   of units, or whose last frame claims bytes past the end, was truncated.
//! * Only the last group of the newest unsealed segment may be incomplete (a
//!   crash during its write; none of its writers was acknowledged).
//! * A segment file always has a valid header: new segments are created
//!   under a temporary name and renamed once their header is durable.
//!
//! Segments written by version 1 (no commit or seal records) are read with
//! the rules that version had: zeros after the last frame end it cleanly,
//! non-zero bytes without a valid frame after them are a torn tail (newest
//! segment only), and a damaged frame followed by a valid one is corruption.

use std::path::{Path, PathBuf};

use super::format::{
    FRAME_HEADER_BYTES, FrameAt, GROUP_COMMIT_FRAME_BYTES, LEGACY_VERSION, LoggedMutation,
    MAX_RECORD_BYTES, SEAL_FRAME_BYTES, SEGMENT_HEADER_BYTES, Seal, WalRecord, append_group_commit,
    decode_mutations, decode_record, frame_at, parse_segment_header, seal_frame,
};
use super::{ALLOCATION_UNIT_BYTES, SegmentInfo};
use crate::error::{Error, Result};
use crate::io::{Io, SyncKind};
use crate::names::{DAMAGED_WAL_DIR, parse_segment_file_name, segment_file_name};
use crate::options::WalRecovery;

/// How a segment's frames end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SegmentEnd {
    /// The segment ends with its seal record (version 2).
    Sealed,
    /// Every group is complete and preallocated zeros follow (an unsealed
    /// segment), or, in version 1, zeros or nothing follow the last frame.
    Clean,
    /// The newest segment's last group is incomplete from `offset` on: a
    /// crash during its write.
    Torn {
        /// Offset of the first byte that is not a valid frame.
        offset: u64,
    },
    /// Damage: replay refuses (or, in point-in-time recovery, stops here).
    Corrupt {
        /// Offset of the damage (for a truncation, where the file ends or
        /// the record that runs past it starts).
        offset: u64,
        /// What is wrong, in words.
        reason: String,
    },
}

/// The frames of one segment, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SegmentCheck {
    /// Format version of the segment.
    pub(crate) version: u32,
    /// `(offset, frame length)` of each row mutation to replay, in order.
    /// With a torn or damaged end, the valid mutations before it.
    pub(crate) mutations: Vec<(u64, usize)>,
    /// How the frames end.
    pub(crate) end: SegmentEnd,
    /// Offset just after the last frame replay keeps: where a torn or
    /// damaged tail is cut, or a seal record written.
    pub(crate) keep_end: u64,
    /// Row mutations before `keep_end` not followed by their group commit
    /// record (an incomplete last group); a repair commits them first.
    pub(crate) uncommitted: (u32, u64),
    /// Offset just after the last non-zero byte of the file.
    pub(crate) dirty_end: u64,
}

/// Frames found by a plain scan (the manifest's format: no group records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FrameScan {
    /// `(offset, frame length)` of each valid frame, in order.
    pub(crate) frames: Vec<(u64, usize)>,
    /// Offset of the first byte that is not a valid frame.
    pub(crate) frames_end: u64,
    /// What follows the frames.
    pub(crate) tail: Tail,
}

/// What follows the valid frames of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tail {
    /// Nothing, or only zeros.
    Zeros,
    /// Non-zero bytes, none of them starting a valid frame.
    Garbage,
    /// Non-zero bytes, and a valid frame starts somewhere after them: the
    /// bytes at `frames_end` are damaged in the middle of the file.
    DamageBeforeValidFrames,
}

/// Reads frames from `start` on until the first offset that does not hold
/// a valid frame, and says what follows.
pub(crate) fn scan_frames(bytes: &[u8], start: usize) -> FrameScan {
    let mut frames = Vec::new();
    let mut p = start;
    while let FrameAt::Valid { frame_bytes, .. } = frame_at(bytes.get(p..).unwrap_or_default()) {
        frames.push((p as u64, frame_bytes));
        p += frame_bytes;
    }
    FrameScan {
        frames,
        frames_end: p as u64,
        tail: tail_after(bytes, p),
    }
}

fn tail_after(bytes: &[u8], p: usize) -> Tail {
    let rest = bytes.get(p..).unwrap_or_default();
    if rest.iter().all(|&b| b == 0) {
        Tail::Zeros
    } else if any_valid_frame_after(bytes, p) {
        Tail::DamageBeforeValidFrames
    } else {
        Tail::Garbage
    }
}

/// True when a valid frame starts at some offset after `p`.
fn any_valid_frame_after(bytes: &[u8], p: usize) -> bool {
    let mut q = p + 1;
    while q < bytes.len() {
        // Skip runs of zeros quickly: a frame's length is never zero, so its
        // first non-zero byte is at most three bytes into the frame.
        match bytes
            .get(q..)
            .and_then(|rest| rest.iter().position(|&b| b != 0))
        {
            None => return false,
            Some(skip) => q += skip,
        }
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

/// The payload of the valid frame at `offset` of `bytes`.
pub(crate) fn payload_at(bytes: &[u8], offset: u64, frame_bytes: usize) -> &[u8] {
    let start = offset as usize + FRAME_HEADER_BYTES;
    bytes
        .get(start..offset as usize + frame_bytes)
        .unwrap_or_default()
}

fn corrupt(offset: u64, reason: impl Into<String>) -> SegmentEnd {
    SegmentEnd::Corrupt {
        offset,
        reason: reason.into(),
    }
}

/// Offset just after the last non-zero byte of `bytes` (0 when all are zero).
fn last_non_zero_end(bytes: &[u8]) -> u64 {
    bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1) as u64
}

/// Checks a segment's bytes (header already checked) by the rules of its
/// `version`; `newest` says whether it is the last segment of the log.
pub(crate) fn check_segment(bytes: &[u8], version: u32, newest: bool) -> SegmentCheck {
    let dirty_end = last_non_zero_end(bytes);
    if version == LEGACY_VERSION {
        return check_legacy_segment(bytes, newest, dirty_end);
    }
    let mut check = SegmentCheck {
        version,
        mutations: Vec::new(),
        end: SegmentEnd::Clean,
        keep_end: SEGMENT_HEADER_BYTES as u64,
        uncommitted: (0, 0),
        dirty_end,
    };
    // Row mutations of the group being read (not yet followed by its commit
    // record) and where that group started.
    let mut pending: Vec<(u64, usize)> = Vec::new();
    let mut group_start = SEGMENT_HEADER_BYTES as u64;
    // Highest sequence of the row mutations read so far: what the seal
    // record, written from the same groups, must name.
    let mut max_sequence = 0u64;
    let mut p = SEGMENT_HEADER_BYTES;
    while let FrameAt::Valid {
        payload,
        frame_bytes,
    } = frame_at(bytes.get(p..).unwrap_or_default())
    {
        let offset = p as u64;
        match decode_record(payload) {
            Err(e) => {
                // A frame whose checksum holds was written whole: its payload
                // cannot be torn.
                check.end = corrupt(offset, format!("undecodable WAL record: {e}"));
                return finish_damaged(check, pending);
            }
            Ok(WalRecord::Mutation(mutation)) => {
                max_sequence = max_sequence.max(mutation.sequence);
                pending.push((offset, frame_bytes));
            }
            Ok(WalRecord::MultiRow(rows)) => {
                // Every row of it carries the one sequence.
                let sequence = rows.first().map_or(0, |m| m.sequence);
                max_sequence = max_sequence.max(sequence);
                pending.push((offset, frame_bytes));
            }
            Ok(WalRecord::GroupCommit(commit)) => {
                let frames_match =
                    commit.frames as usize == pending.len() && commit.bytes == offset - group_start;
                if !frames_match {
                    check.end = corrupt(
                        offset,
                        "group commit record does not match the records before it",
                    );
                    return finish_damaged(check, pending);
                }
                check.mutations.append(&mut pending);
                group_start = offset + frame_bytes as u64;
                check.keep_end = group_start;
            }
            Ok(WalRecord::Seal(seal)) => {
                let seal_matches = pending.is_empty()
                    && seal.data_end == offset
                    && seal.frames == check.mutations.len() as u64;
                if !seal_matches {
                    check.end = corrupt(offset, "seal record does not match the segment");
                    return finish_damaged(check, pending);
                }
                if seal.max_sequence != max_sequence {
                    check.end = corrupt(
                        offset,
                        format!(
                            "seal record names sequence {} as the segment's highest, its \
                             records hold {max_sequence}",
                            seal.max_sequence
                        ),
                    );
                    return finish_damaged(check, pending);
                }
                let after = offset + frame_bytes as u64;
                check.end = if dirty_end <= after {
                    SegmentEnd::Sealed
                } else {
                    corrupt(after, "bytes after the seal record")
                };
                return check;
            }
        }
        p += frame_bytes;
    }
    let p = p as u64;
    let len = bytes.len() as u64;
    // Only zeros after `p` is what `dirty_end` already says (the preallocated
    // tail, up to 4 MiB, is not scanned a second time).
    let tail = if dirty_end <= p {
        Tail::Zeros
    } else {
        tail_after(bytes, p as usize)
    };
    if tail == Tail::DamageBeforeValidFrames {
        check.end = corrupt(p, "damaged WAL record followed by valid records");
        return finish_damaged(check, pending);
    }
    if !newest {
        check.end = corrupt(
            p,
            "an older segment ends without its seal record (truncated or damaged)",
        );
        return finish_damaged(check, pending);
    }
    // The newest segment, unsealed: its writes never reach the end of its
    // preallocated space, which is a whole number of allocation units.
    if !len.is_multiple_of(ALLOCATION_UNIT_BYTES) {
        check.end = corrupt(
            len,
            format!(
                "unsealed segment of {len} bytes, not a whole number of \
                 {ALLOCATION_UNIT_BYTES}-byte allocation units: truncated"
            ),
        );
        return finish_damaged(check, pending);
    }
    if p >= len {
        check.end = corrupt(
            p,
            "unsealed segment ends exactly after a record, without the \
             preallocated space after its writes: truncated",
        );
        return finish_damaged(check, pending);
    }
    if tail == Tail::Garbage && declared_frame_end(bytes, p as usize).is_some_and(|end| end >= len)
    {
        check.end = corrupt(
            p,
            "the last WAL record runs past the end of the segment: truncated",
        );
        return finish_damaged(check, pending);
    }
    if tail == Tail::Zeros && pending.is_empty() {
        check.end = SegmentEnd::Clean;
        return check;
    }
    // An incomplete last group: its valid records are kept (each is a whole
    // mutation), the rest is cut.
    check.end = SegmentEnd::Torn { offset: p };
    check.uncommitted = pending_totals(&pending);
    check.mutations.append(&mut pending);
    check.keep_end = p;
    check
}

/// Where the frame whose header starts at `p` would end, if its length field
/// is whole and plausible.
fn declared_frame_end(bytes: &[u8], p: usize) -> Option<u64> {
    let len_bytes: [u8; 4] = bytes.get(p..p + 4)?.try_into().ok()?;
    let len = u32::from_le_bytes(len_bytes) as usize;
    (len > 0 && len <= MAX_RECORD_BYTES).then_some((p + FRAME_HEADER_BYTES + len) as u64)
}

fn pending_totals(pending: &[(u64, usize)]) -> (u32, u64) {
    (
        pending.len() as u32,
        pending.iter().map(|&(_, len)| len as u64).sum(),
    )
}

/// Keeps the valid mutations before the damage, for point-in-time recovery.
fn finish_damaged(mut check: SegmentCheck, mut pending: Vec<(u64, usize)>) -> SegmentCheck {
    if let Some(&(offset, len)) = pending.last() {
        check.keep_end = offset + len as u64;
    }
    check.uncommitted = pending_totals(&pending);
    check.mutations.append(&mut pending);
    check
}

fn check_legacy_segment(bytes: &[u8], newest: bool, dirty_end: u64) -> SegmentCheck {
    let scan = scan_frames(bytes, SEGMENT_HEADER_BYTES);
    let end = match scan.tail {
        Tail::Zeros => SegmentEnd::Clean,
        Tail::DamageBeforeValidFrames => corrupt(
            scan.frames_end,
            "damaged WAL record followed by valid records",
        ),
        Tail::Garbage if newest => SegmentEnd::Torn {
            offset: scan.frames_end,
        },
        Tail::Garbage => corrupt(
            scan.frames_end,
            "damaged WAL record at the end of an older segment",
        ),
    };
    SegmentCheck {
        version: LEGACY_VERSION,
        mutations: scan.frames,
        end,
        keep_end: scan.frames_end,
        uncommitted: (0, 0),
        dirty_end,
    }
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
    /// Point-in-time recovery: where the damage was, and the copies of the
    /// damaged and discarded segments under `wal/damaged/`.
    pub(crate) discarded: Option<(PathBuf, u64, Vec<PathBuf>)>,
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
pub(crate) fn read_segment(io: &Io, path: &Path) -> Result<Vec<u8>> {
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

/// How replay may touch the files it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplayMode {
    /// Open for writing: cut a torn tail, seal the newest segment, delete a
    /// newest segment that never held a record.
    Repair(WalRecovery),
    /// Change nothing (a read-only open); damage is an error as in
    /// [`WalRecovery::Strict`].
    ReadOnly,
}

/// One checked segment of the log.
pub(crate) struct CheckedSegment {
    pub(crate) id: u64,
    pub(crate) path: PathBuf,
    pub(crate) bytes: Vec<u8>,
    pub(crate) check: SegmentCheck,
}

/// Reads and checks every segment of `dir`, oldest first; a damaged header,
/// a missing segment between two others, and a file the log cannot hold
/// are reported as [`SegmentEnd::Corrupt`] of that segment.
pub(crate) fn check_log(dir: &Path, io: &Io) -> Result<Vec<CheckedSegment>> {
    let ids = list_segments(dir)?;
    let mut segments = Vec::with_capacity(ids.len());
    let mut previous: Option<(u64, u32)> = None;
    for (index, &id) in ids.iter().enumerate() {
        let newest = index + 1 == ids.len();
        let path = dir.join(segment_file_name(id));
        let bytes = read_segment(io, &path)?;
        let bad = |reason: String| SegmentCheck {
            version: 0,
            mutations: Vec::new(),
            end: corrupt(0, reason),
            keep_end: 0,
            uncommitted: (0, 0),
            dirty_end: last_non_zero_end(&bytes),
        };
        let check = match parse_segment_header(&bytes) {
            Ok(header) if header.id != id => bad(format!(
                "header names segment {}, file name says {id}",
                header.id
            )),
            Ok(header) => match previous {
                // Segments are numbered consecutively and deleted oldest
                // first, so a gap means a segment went missing.
                Some((before, before_version))
                    if before + 1 != id && before_version != LEGACY_VERSION =>
                {
                    bad(format!(
                        "segment {} is missing between {before} and {id}",
                        before + 1
                    ))
                }
                _ => check_segment(&bytes, header.version, newest),
            },
            Err(e) => bad(format!("damaged segment header: {e}")),
        };
        previous = Some((id, check.version));
        segments.push(CheckedSegment {
            id,
            path,
            bytes,
            check,
        });
    }
    Ok(segments)
}

/// Seals a segment at `keep_end` during a repair: commits its incomplete last
/// group (if any), writes the seal record and zeros over whatever was after
/// it, syncs, then cuts the file after the seal. A crash at any point leaves
/// a segment that reads back the same: the seal is durable before the cut.
fn seal_at(io: &Io, segment: &CheckedSegment, max_sequence: u64) -> Result<()> {
    let check = &segment.check;
    let path = &segment.path;
    let mut tail = Vec::with_capacity(GROUP_COMMIT_FRAME_BYTES + SEAL_FRAME_BYTES);
    let (frames, bytes) = check.uncommitted;
    if frames > 0 {
        append_group_commit(&mut tail, frames, bytes);
    }
    let data_end = check.keep_end + tail.len() as u64;
    tail.extend_from_slice(&seal_frame(Seal {
        frames: check.mutations.len() as u64,
        max_sequence,
        data_end,
    }));
    let sealed_len = check.keep_end + tail.len() as u64;
    let zeros = check.dirty_end.saturating_sub(sealed_len);
    tail.extend(std::iter::repeat_n(0u8, zeros as usize));
    let file = io.open_rw(path)?;
    file.write_at(check.keep_end, &tail)
        .and_then(|()| file.sync(SyncKind::Data))
        .and_then(|()| file.set_len(sealed_len))
        .and_then(|()| file.sync(SyncKind::All))
        .map_err(|e| Error::io(format!("sealing {}", path.display()), e))
}

/// Copies a segment into `wal/damaged/` before point-in-time recovery
/// changes or drops it; returns the copy's path.
fn keep_copy(io: &Io, dir: &Path, segment: &CheckedSegment) -> Result<PathBuf> {
    let damaged = dir.join(DAMAGED_WAL_DIR);
    io.create_dir_all(&damaged)?;
    let copy = damaged.join(segment_file_name(segment.id));
    io.write_file(&copy, &segment.bytes)?;
    io.sync_dir(&damaged)?;
    Ok(copy)
}

/// Replays every segment of `dir` in order, calling `apply` for each row
/// mutation. In [`ReplayMode::Repair`] the last segment kept (the newest,
/// or in point-in-time recovery the damaged one) is left sealed, its torn or
/// damaged tail cut, so that the log can go on in a new segment.
pub(crate) fn replay(
    dir: &Path,
    io: &Io,
    mode: ReplayMode,
    mut apply: impl FnMut(&LoggedMutation<'_>, &Path, u64) -> Result<()>,
) -> Result<ReplaySummary> {
    let segments = check_log(dir, io)?;
    let mut summary = ReplaySummary {
        next_segment_id: segments.last().map_or(1, |s| s.id + 1),
        ..ReplaySummary::default()
    };
    for (index, segment) in segments.iter().enumerate() {
        let path = &segment.path;
        let check = &segment.check;
        let damage = match &check.end {
            SegmentEnd::Corrupt { offset, reason } => {
                if mode != ReplayMode::Repair(WalRecovery::PointInTime) {
                    return Err(Error::corruption(path, *offset, reason.clone()));
                }
                Some(*offset)
            }
            _ => None,
        };
        let mut segment_max = 0u64;
        for &(offset, frame_bytes) in &check.mutations {
            // A multi-row mutation is one frame: all its rows are here.
            let rows = decode_mutations(payload_at(&segment.bytes, offset, frame_bytes))
                .map_err(|e| Error::corruption(path, offset, e.to_string()))?;
            for mutation in &rows {
                segment_max = segment_max.max(mutation.sequence);
                apply(mutation, path, offset)?;
                summary.records += 1;
            }
        }
        summary.max_sequence = summary.max_sequence.max(segment_max);
        if let SegmentEnd::Torn { offset } = check.end {
            summary.torn_tail = Some((path.clone(), offset));
        }
        let last_kept = damage.is_some() || index + 1 == segments.len();
        if last_kept && mode != ReplayMode::ReadOnly {
            if let Some(offset) = damage {
                summary.discarded =
                    Some((path.clone(), offset, vec![keep_copy(io, dir, segment)?]));
            }
            if !repair_last(dir, io, segment, segment_max)? {
                // It held no record (before the damage): removed; its id is free.
                summary.next_segment_id = segment.id;
            } else {
                summary.next_segment_id = segment.id + 1;
                summary.segments.push(SegmentInfo {
                    id: segment.id,
                    max_sequence: segment_max,
                });
            }
        } else {
            summary.segments.push(SegmentInfo {
                id: segment.id,
                max_sequence: segment_max,
            });
        }
        if damage.is_some() {
            set_aside(
                io,
                dir,
                segments.get(index + 1..).unwrap_or_default(),
                &mut summary,
            )?;
            break;
        }
    }
    Ok(summary)
}

/// Bytes of frames a copy hands to the destination log at a time.
const COPY_BATCH_BYTES: usize = 4 * 1024 * 1024;

/// Appends to `to` every row mutation of the sealed segments `ids` of `dir`
/// that `keep` accepts, in log order; returns how many it copied. The
/// frames are copied as they are (a frame does not depend on where it
/// lies). A segment that is not sealed, or damaged, is
/// [`Error::Corruption`]: only sealed segments are ever copied.
pub(crate) fn copy_mutations(
    io: &Io,
    dir: &Path,
    ids: &[u64],
    mut keep: impl FnMut(&LoggedMutation<'_>) -> bool,
    to: &super::Wal,
) -> Result<u64> {
    let mut batch: Vec<u8> = Vec::new();
    let (mut batch_frames, mut batch_max, mut copied) = (0u64, 0u64, 0u64);
    for &id in ids {
        let path = dir.join(segment_file_name(id));
        let bytes = read_segment(io, &path)?;
        let header = parse_segment_header(&bytes)
            .map_err(|e| Error::corruption(&path, 0, format!("damaged segment header: {e}")))?;
        let check = check_segment(&bytes, header.version, false);
        if let SegmentEnd::Corrupt { offset, reason } = &check.end {
            return Err(Error::corruption(&path, *offset, reason.clone()));
        }
        for &(offset, frame_bytes) in &check.mutations {
            // A multi-row mutation's rows share one region and one
            // sequence: the frame is kept or left whole, on its first row.
            let mutations = decode_mutations(payload_at(&bytes, offset, frame_bytes))
                .map_err(|e| Error::corruption(&path, offset, e.to_string()))?;
            let Some(mutation) = mutations.first() else {
                continue;
            };
            if !keep(mutation) {
                continue;
            }
            let frame = bytes
                .get(offset as usize..offset as usize + frame_bytes)
                .unwrap_or_default();
            batch.extend_from_slice(frame);
            batch_frames += 1;
            batch_max = batch_max.max(mutation.sequence);
            copied += 1;
            if batch.len() >= COPY_BATCH_BYTES {
                to.append(&batch, batch_frames, batch_max, None)?;
                batch.clear();
                batch_frames = 0;
            }
        }
    }
    if batch_frames > 0 {
        to.append(&batch, batch_frames, batch_max, None)?;
    }
    Ok(copied)
}

/// Leaves the last segment replay keeps ready for the log to go on after
/// it: removed when it holds no record (returns false), else sealed (a
/// version-1 segment is cut after its last frame instead).
fn repair_last(dir: &Path, io: &Io, segment: &CheckedSegment, max_sequence: u64) -> Result<bool> {
    let check = &segment.check;
    let path = &segment.path;
    if check.mutations.is_empty() {
        io.remove_file(path)
            .map_err(|e| Error::io(format!("removing {}", path.display()), e))?;
        io.sync_dir(dir)?;
        return Ok(false);
    }
    if check.version == LEGACY_VERSION {
        if check.keep_end < segment.bytes.len() as u64 {
            let file = io.open_rw(path)?;
            file.set_len(check.keep_end)
                .and_then(|()| file.sync(SyncKind::All))
                .map_err(|e| Error::io(format!("truncating {}", path.display()), e))?;
        }
    } else if check.end != SegmentEnd::Sealed {
        seal_at(io, segment, max_sequence)?;
    }
    Ok(true)
}

/// Point-in-time recovery: copies every segment after the damaged one into
/// `wal/damaged/` and removes it.
fn set_aside(
    io: &Io,
    dir: &Path,
    later: &[CheckedSegment],
    summary: &mut ReplaySummary,
) -> Result<()> {
    for segment in later {
        let copy = keep_copy(io, dir, segment)?;
        io.remove_file(&segment.path)
            .map_err(|e| Error::io(format!("removing {}", segment.path.display()), e))?;
        if let Some((_, _, copies)) = &mut summary.discarded {
            copies.push(copy);
        }
    }
    io.sync_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::super::format::{append_frame, encode_mutation, segment_header};
    use super::*;
    use crate::cell::CellKind;

    /// A row mutation frame.
    fn mutation(sequence: u64) -> Vec<u8> {
        let mut payload = Vec::new();
        let cells = vec![(CellKind::Put, 1i64, &b"q"[..], &b"value"[..])];
        encode_mutation(
            &mut payload,
            1,
            sequence,
            b"row",
            vec![(1u32, cells.into_iter())].into_iter(),
        );
        let mut frame = Vec::new();
        append_frame(&mut frame, &payload);
        frame
    }

    /// A version-2 segment holding `groups` (sequences per group), unsealed
    /// with one allocation unit of zeros, or sealed.
    fn segment(groups: &[&[u64]], sealed: bool) -> Vec<u8> {
        let mut bytes = segment_header(1).to_vec();
        let (mut frames, mut max) = (0u64, 0u64);
        for group in groups {
            let start = bytes.len();
            for &sequence in *group {
                bytes.extend_from_slice(&mutation(sequence));
                max = max.max(sequence);
            }
            let len = (bytes.len() - start) as u64;
            append_group_commit(&mut bytes, group.len() as u32, len);
            frames += group.len() as u64;
        }
        if sealed {
            let data_end = bytes.len() as u64;
            bytes.extend_from_slice(&seal_frame(Seal {
                frames,
                max_sequence: max,
                data_end,
            }));
        } else {
            let len = (bytes.len() as u64).div_ceil(ALLOCATION_UNIT_BYTES) * ALLOCATION_UNIT_BYTES;
            bytes.resize(len as usize + ALLOCATION_UNIT_BYTES as usize, 0);
        }
        bytes
    }

    fn offsets(bytes: &[u8]) -> Vec<u64> {
        scan_frames(bytes, SEGMENT_HEADER_BYTES)
            .frames
            .iter()
            .map(|&(offset, _)| offset)
            .collect()
    }

    #[test]
    fn complete_groups_and_seals_read_back() {
        let unsealed = segment(&[&[1, 2], &[3]], false);
        let check = check_segment(&unsealed, 2, true);
        assert_eq!(check.end, SegmentEnd::Clean);
        assert_eq!(check.mutations.len(), 3);
        let sealed = segment(&[&[1, 2], &[3]], true);
        for newest in [false, true] {
            let check = check_segment(&sealed, 2, newest);
            assert_eq!(check.end, SegmentEnd::Sealed);
            assert_eq!(check.mutations.len(), 3);
        }
        // An older segment must be sealed.
        assert!(matches!(
            check_segment(&unsealed, 2, false).end,
            SegmentEnd::Corrupt { .. }
        ));
    }

    #[test]
    fn a_seal_must_name_the_highest_sequence_of_its_segment() {
        let sealed = segment(&[&[1, 3], &[2]], true);
        let seal_at = *offsets(&sealed).last().unwrap();
        for wrong in [2, 4] {
            let mut bytes = sealed[..seal_at as usize].to_vec();
            bytes.extend_from_slice(&seal_frame(Seal {
                frames: 3,
                max_sequence: wrong,
                data_end: seal_at,
            }));
            match check_segment(&bytes, 2, false).end {
                SegmentEnd::Corrupt { offset, reason } => {
                    assert_eq!(offset, seal_at);
                    assert!(reason.contains(&format!("sequence {wrong}")), "{reason}");
                }
                other => panic!("a seal naming {wrong} read back as {other:?}"),
            }
        }
    }

    #[test]
    fn an_incomplete_last_group_is_a_torn_tail() {
        let full = segment(&[&[1], &[2, 3]], false);
        let frames = offsets(&full);
        // A crash while writing the last group: the last commit record and
        // part of the last mutation never reached the disk (zeros instead).
        let commit = frames[4] as usize;
        let mut torn = full.clone();
        torn[commit - 10..commit + GROUP_COMMIT_FRAME_BYTES].fill(0);
        let check = check_segment(&torn, 2, true);
        assert_eq!(check.end, SegmentEnd::Torn { offset: frames[3] });
        assert_eq!(
            check.mutations.len(),
            2,
            "the group's whole first record stays"
        );
        // Its commit record alone missing: every mutation stays.
        let mut no_commit = full.clone();
        no_commit[commit..commit + GROUP_COMMIT_FRAME_BYTES].fill(0);
        let check = check_segment(&no_commit, 2, true);
        assert_eq!(
            check.end,
            SegmentEnd::Torn {
                offset: commit as u64
            }
        );
        assert_eq!(check.mutations.len(), 3);
        assert_eq!(check.uncommitted.0, 2);
    }

    #[test]
    fn damage_to_the_last_acknowledged_record_is_corruption() {
        let full = segment(&[&[1], &[2]], false);
        let frames = offsets(&full);
        let last_mutation = frames[2] as usize;
        for byte in [0, 3, 5, 13, 30] {
            let mut damaged = full.clone();
            damaged[last_mutation + byte] ^= 0x40;
            assert_eq!(
                check_segment(&damaged, 2, true).end,
                SegmentEnd::Corrupt {
                    offset: last_mutation as u64,
                    reason: "damaged WAL record followed by valid records".into()
                },
                "flip at {byte}"
            );
        }
    }

    #[test]
    fn truncations_are_corruption() {
        let full = segment(&[&[1], &[2]], false);
        let frames = offsets(&full);
        let data_end = frames
            .last()
            .map(|&o| o as usize + GROUP_COMMIT_FRAME_BYTES);
        let data_end = data_end.unwrap();
        // At every record boundary and inside every record.
        for cut in SEGMENT_HEADER_BYTES..=data_end {
            let end = check_segment(&full[..cut], 2, true).end;
            assert!(
                matches!(end, SegmentEnd::Corrupt { .. }),
                "cut at {cut}: {end:?}"
            );
        }
        // Sealed segments likewise, newest or not.
        let sealed = segment(&[&[1], &[2]], true);
        for cut in SEGMENT_HEADER_BYTES..sealed.len() {
            for newest in [false, true] {
                let end = check_segment(&sealed[..cut], 2, newest).end;
                assert!(
                    matches!(end, SegmentEnd::Corrupt { .. }),
                    "cut at {cut}: {end:?}"
                );
            }
        }
    }

    #[test]
    fn legacy_segments_keep_their_rules() {
        let mut bytes = segment_header(1).to_vec();
        bytes.extend_from_slice(&mutation(1));
        bytes.extend_from_slice(&mutation(2));
        let end = bytes.len() as u64;
        bytes.extend_from_slice(&[0xAB; 37]);
        let check = check_segment(&bytes, LEGACY_VERSION, true);
        assert_eq!(check.end, SegmentEnd::Torn { offset: end });
        assert_eq!(check.mutations.len(), 2);
        assert!(matches!(
            check_segment(&bytes, LEGACY_VERSION, false).end,
            SegmentEnd::Corrupt { .. }
        ));
    }

    #[test]
    fn a_flipped_bit_in_a_middle_frame_is_corruption() {
        let s = segment(&[&[1], &[2], &[3]], true);
        let second = offsets(&s)[2] as usize;
        for byte in [second, second + 2, second + 5, second + 13] {
            let mut damaged = s.clone();
            damaged[byte] ^= 0x04;
            assert!(
                matches!(
                    check_segment(&damaged, 2, false).end,
                    SegmentEnd::Corrupt { offset, .. } if offset == second as u64
                ),
                "flip at {byte}"
            );
        }
    }
}
