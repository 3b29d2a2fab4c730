//! Reading a manifest back, changing nothing: the file `CURRENT` names, by
//! the rules of `docs/format.md`, "Manifest" (what was committed must read
//! back whole; at most one uncommitted edit may follow), edit by edit into
//! a catalog, each edit checked to fit the catalog before it.

use std::path::{Path, PathBuf};

use super::edit::decode_edit;
use super::format::{
    COMMIT_SLOT_BYTES, COMMIT_SLOTS_OFFSET, CommitSlot, FIRST_EDIT_OFFSET, MANIFEST_MAGIC,
};
use super::state::ManifestState;
use crate::error::{Error, Result};
use crate::io::Io;
use crate::names::{
    CURRENT_FILE, DATA_DIR, HFILE_SUFFIX, SEGMENT_SUFFIX, WAL_DIR, parse_manifest_name,
};
use crate::wal::format::{LEGACY_VERSION, SEGMENT_HEADER_BYTES, parse_file_header};
use crate::wal::replay::{Tail, payload_at, scan_frames};

/// What reading the manifest found besides the state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ManifestRead {
    /// The live manifest file.
    pub(crate) path: PathBuf,
    /// An edit appended after the last commit that did not read back whole:
    /// its append was cut short by a crash, and nothing acted on it.
    pub(crate) torn_tail: Option<u64>,
}

/// Reads the catalog of the database in `dir` without changing anything:
/// the manifest `CURRENT` names, by the rules of [`read_manifest`].
/// A directory without `CURRENT` holds no database yet, unless it holds
/// what only a database's manifest could have made (data or log files, or a
/// manifest with tables): then `CURRENT` was lost and that is corruption.
pub(crate) fn read_current(
    dir: &Path,
    io: &Io,
) -> Result<Option<(u64, ManifestState, ManifestRead)>> {
    let current_path = dir.join(CURRENT_FILE);
    let text = match std::fs::read(&current_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            check_no_orphaned_database(dir, io)?;
            return Ok(None);
        }
        Err(e) => return Err(Error::io(format!("reading {}", current_path.display()), e)),
    };
    let name = std::str::from_utf8(&text)
        .ok()
        .and_then(|text| text.strip_suffix('\n'))
        .filter(|name| parse_manifest_name(name).is_some())
        .ok_or_else(|| {
            Error::corruption(
                &current_path,
                0,
                format!(
                    "CURRENT holds '{}', not the name of a manifest and a newline",
                    String::from_utf8_lossy(&text).escape_debug()
                ),
            )
        })?;
    let id = parse_manifest_name(name).unwrap_or_default();
    let path = dir.join(name);
    if !path.exists() {
        return Err(Error::corruption(
            &current_path,
            0,
            format!("CURRENT names {name}, which does not exist"),
        ));
    }
    let (state, read) = read_manifest(io, &path)?;
    Ok(Some((id, state, read)))
}

/// Without `CURRENT`, the directory must not hold anything a manifest
/// would have described: no HFile, no WAL segment, and no manifest beyond
/// the empty one a first open that crashed before installing `CURRENT`
/// leaves behind.
fn check_no_orphaned_database(dir: &Path, io: &Io) -> Result<()> {
    let lost = |what: String| {
        Error::corruption(
            dir.join(CURRENT_FILE),
            0,
            format!(
                "CURRENT is missing, but the directory holds {what}: the catalog that described it is lost"
            ),
        )
    };
    let has_files = |sub: &str, suffix: &str| {
        std::fs::read_dir(dir.join(sub)).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_str().is_some_and(|n| n.ends_with(suffix)))
        })
    };
    if has_files(DATA_DIR, HFILE_SUFFIX) {
        return Err(lost("HFiles in data/".into()));
    }
    if has_files(WAL_DIR, SEGMENT_SUFFIX) {
        return Err(lost("WAL segments in wal/".into()));
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if parse_manifest_name(name).is_none() {
                continue;
            }
            let empty = read_manifest(io, &entry.path()).is_ok_and(|(state, _)| {
                state.tables.is_empty() && state == ManifestState::default()
            });
            if !empty {
                return Err(lost(name.to_owned()));
            }
        }
    }
    Ok(())
}

/// Reads a manifest file into a state, changing nothing.
///
/// Version 2: every edit before the current commit slot's end was synced
/// before anything acted on it, so any damage there, or a file shorter than
/// that end, is corruption naming the offset. After the end at most one
/// edit can follow (an append whose commit a crash cut short): it is
/// applied if it reads back whole, and ignored if torn (reported). A
/// damaged slot is passed over for the other one, which is one edit older.
/// Version 1 (no slots): a torn last edit is ignored, damage before the end
/// is corruption. Either way each edit must fit the catalog the edits before
/// it built (`Edit::fits`); one that does not is corruption at its offset.
pub(crate) fn read_manifest(io: &Io, path: &Path) -> Result<(ManifestState, ManifestRead)> {
    let bytes = crate::wal::replay::read_segment(io, path)?;
    parse_manifest(&bytes, path)
}

/// [`read_manifest`] on the bytes of the manifest file at `path` (named in
/// errors): every rule, no I/O.
pub(crate) fn parse_manifest(bytes: &[u8], path: &Path) -> Result<(ManifestState, ManifestRead)> {
    let header = parse_file_header(bytes, MANIFEST_MAGIC)
        .map_err(|e| Error::corruption(path, 0, e.to_string()))?;
    let mut read = ManifestRead {
        path: path.to_path_buf(),
        torn_tail: None,
    };
    let (start, committed_end) = if header.version == LEGACY_VERSION {
        (SEGMENT_HEADER_BYTES as u64, SEGMENT_HEADER_BYTES as u64)
    } else {
        let slot = |index: u64| {
            let at = (COMMIT_SLOTS_OFFSET + index * COMMIT_SLOT_BYTES) as usize;
            bytes.get(at..).and_then(CommitSlot::decode)
        };
        let commit = [slot(0), slot(1)]
            .into_iter()
            .flatten()
            .max_by_key(|slot| slot.generation)
            .ok_or_else(|| {
                Error::corruption(path, COMMIT_SLOTS_OFFSET, "both commit slots are damaged")
            })?;
        if commit.committed_end > bytes.len() as u64 {
            return Err(Error::corruption(
                path,
                bytes.len() as u64,
                format!(
                    "the manifest ends at {} bytes, before its last committed edit ends at {}: truncated",
                    bytes.len(),
                    commit.committed_end
                ),
            ));
        }
        (FIRST_EDIT_OFFSET, commit.committed_end)
    };
    let scan = scan_frames(bytes, start as usize);
    let committed_frames = scan
        .frames
        .iter()
        .take_while(|&&(offset, _)| offset < committed_end)
        .count();
    let frames_at_commit = scan
        .frames
        .get(..committed_frames)
        .and_then(<[_]>::last)
        .map_or(start, |&(offset, len)| offset + len as u64);
    if frames_at_commit != committed_end {
        // The committed edits do not read back whole.
        let offset = if scan.frames_end < committed_end {
            scan.frames_end
        } else {
            committed_end
        };
        return Err(Error::corruption(
            path,
            offset,
            "damaged manifest edit (it was committed before anything acted on it)",
        ));
    }
    match scan.tail {
        Tail::DamageBeforeValidFrames => {
            return Err(Error::corruption(
                path,
                scan.frames_end,
                "damaged manifest edit followed by valid edits",
            ));
        }
        Tail::Garbage => read.torn_tail = Some(scan.frames_end),
        Tail::Zeros if scan.frames_end < bytes.len() as u64 => {
            read.torn_tail = Some(scan.frames_end);
        }
        Tail::Zeros => {}
    }
    if header.version != LEGACY_VERSION && scan.frames.len() > committed_frames + 1 {
        return Err(Error::corruption(
            path,
            scan.frames.get(committed_frames + 1).map_or(0, |f| f.0),
            "more than one edit after the last commit",
        ));
    }
    let mut state = ManifestState::default();
    for &(offset, frame_bytes) in &scan.frames {
        let payload = payload_at(bytes, offset, frame_bytes);
        let edit =
            decode_edit(payload).map_err(|e| Error::corruption(path, offset, e.to_string()))?;
        edit.fits(&state).map_err(|misfit| {
            Error::corruption(
                path,
                offset,
                format!(
                    "manifest edit does not fit the catalog the edits before it built: {misfit}"
                ),
            )
        })?;
        state.apply(&edit);
    }
    Ok((state, read))
}
