//! Checkpoints ([`Db::checkpoint`]): a consistent, openable copy of a live
//! database, made while writes go on (RocksDB's `Checkpoint` contract).
//!
//! The copy holds exactly the writes with a sequence at most its sequence
//! `S`, and none after:
//!
//! 1. Hold the WAL's segments (no segment is deleted until step 4 ends).
//! 2. Under the manifest lock (no flush, compaction, split or catalog change
//!    commits meanwhile): take the catalog, take `S` = the read point (every
//!    write <= `S` finished, so it is in the WAL), and link every HFile the
//!    catalog names into `DIR.tmp/data` (a hard link; a copy where the file
//!    system refuses one). `S` is at least every sequence the catalog
//!    records (a flush's, a bulk load's); when a bulk load's is not visible
//!    yet, the lock is let go, its sequence waited for, and step 2 redone.
//! 3. Roll the WAL: every write <= `S` now lies in a sealed segment.
//! 4. Copy, from the sealed segments, the row mutations with a sequence in
//!    `(flushed sequence of their region, S]` of the regions the catalog
//!    names into a new log in `DIR.tmp/wal`.
//! 5. Write a manifest holding the catalog taken in step 2 (a region's files
//!    hold its writes up to its flushed sequence, which is at most `S`).
//! 6. Sync everything, rename `DIR.tmp` to `DIR` (refusing to replace
//!    anything), sync the parent directory.
//!
//! A failure, or a crash, before the rename leaves no `DIR`; a failure
//! removes `DIR.tmp` (a crash leaves it, and the next checkpoint to `DIR`
//! refuses until it is removed). Writes with `Durability::SkipWal` that no
//! flush has written yet are not in the copy: they are not in the log.

use std::collections::HashMap;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::Db;
use crate::error::{Error, Result};
use crate::io::{Io, parent_of};
use crate::manifest::{Manifest, ManifestState};
use crate::names::{DATA_DIR, WAL_DIR, hfile_name};
use crate::wal::Wal;
use crate::wal::replay::copy_mutations;

/// Attempts at step 2 (see the module documentation) before giving up: each
/// failed one waited for a bulk load that recorded its files before its
/// sequence became visible, which happens once per such load.
const MAX_CATALOG_ATTEMPTS: usize = 64;

/// What [`Db::checkpoint`] made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointReport {
    /// The directory holding the copy.
    pub path: PathBuf,
    /// Every write with a sequence at most this is in the copy, none after.
    pub sequence: u64,
    /// HFiles hard-linked into the copy.
    pub hfiles_linked: u64,
    /// HFiles copied (the file system refused a hard link).
    pub hfiles_copied: u64,
    /// Bytes of the HFiles copied.
    pub bytes_copied: u64,
    /// Row mutations copied from the WAL (written after their region's last flush).
    pub wal_mutations: u64,
}

impl Db {
    /// Makes a consistent copy of the database in `dir`, which must not
    /// exist (its parent is created when missing), while writes go on: the
    /// copy opens with [`Db::open`] and holds exactly the writes whose
    /// sequence is at most [`CheckpointReport::sequence`]. HFiles are
    /// hard-linked where the file system allows it (they never change), else
    /// copied; the WAL's records not yet flushed, up to that sequence, are
    /// copied into a new log. The directory appears whole, in one rename, or
    /// not at all. Restoring is opening the copy (or moving it in place of
    /// the database while no one has that open).
    ///
    /// Errors: [`Error::CheckpointTargetExists`] when `dir` (or the `dir.tmp`
    /// an interrupted checkpoint left) exists, [`Error::CheckpointInsideDatabase`]
    /// when it lies inside this database's directory, [`Error::ReadOnly`] for a
    /// read-only open, [`Error::Io`] when the directory cannot be made or
    /// written (a full disk); nothing is left behind then. Writes with
    /// `Durability::SkipWal` that no flush has written yet are not copied.
    /// While a file is copied rather than linked, flushes and compactions wait
    /// to commit.
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<CheckpointReport> {
        self.check_open()?;
        let services = &self.inner.services;
        let wal = services.wal()?;
        let target = absolute(dir.as_ref())?;
        let staging = staging_path(&target);
        let database = std::fs::canonicalize(services.dir())
            .map_err(|e| Error::io(format!("resolving {}", services.dir().display()), e))?;
        if resolved(&target)?.starts_with(&database) {
            return Err(Error::CheckpointInsideDatabase {
                path: target,
                database,
            });
        }
        for path in [&target, &staging] {
            if std::fs::symlink_metadata(path).is_ok() {
                return Err(Error::CheckpointTargetExists { path: path.clone() });
            }
        }
        let io = &services.io;
        // From here on a failure removes the staging directory: it did not exist before.
        let made = io
            .create_dir_all(&staging)
            .and_then(|()| self.fill(wal, &staging))
            .and_then(|report| install(io, &staging, &target).map(|()| report));
        match made {
            Ok(report) => Ok(CheckpointReport {
                path: target,
                ..report
            }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                Err(e)
            }
        }
    }

    /// Steps 1 to 5 (module documentation), into `staging`.
    fn fill(&self, wal: &Wal, staging: &Path) -> Result<CheckpointReport> {
        let services = &self.inner.services;
        let io = &services.io;
        let data = staging.join(DATA_DIR);
        let wal_dir = staging.join(WAL_DIR);
        io.create_dir_all(&data)?;
        io.create_dir_all(&wal_dir)?;
        let held = wal.hold_segments();
        let mut report = CheckpointReport {
            path: staging.to_path_buf(),
            sequence: 0,
            hfiles_linked: 0,
            hfiles_copied: 0,
            bytes_copied: 0,
            wal_mutations: 0,
        };
        let mut taken = None;
        for _ in 0..MAX_CATALOG_ATTEMPTS {
            let manifest = services.manifest();
            let state = manifest.state();
            let needed = highest_recorded_sequence(state);
            let sequence = services.mvcc.read_point();
            if sequence < needed {
                drop(manifest);
                services.mvcc.wait_visible(needed);
                continue;
            }
            link_files(io, &services.data_dir(), &data, state, &mut report)?;
            taken = Some((state.clone(), sequence));
            break;
        }
        let Some((state, sequence)) = taken else {
            return Err(Error::InvariantBroken {
                what: format!(
                    "a checkpoint found the catalog's sequences not yet visible \
                     {MAX_CATALOG_ATTEMPTS} times in a row"
                ),
            });
        };
        report.sequence = sequence;
        io.sync_dir(&data)?;

        wal.roll()?;
        let flushed: HashMap<u64, u64> = state
            .tables
            .values()
            .flat_map(|t| t.regions.iter())
            .map(|r| (r.id, r.flushed_sequence))
            .collect();
        let oldest_needed = flushed.values().copied().min().unwrap_or(sequence);
        let segments = wal.segments();
        let sealed: Vec<u64> = segments
            .iter()
            .take(segments.len().saturating_sub(1))
            .filter(|s| s.max_sequence > oldest_needed)
            .map(|s| s.id)
            .collect();
        if !sealed.is_empty() {
            let options = &services.options;
            let copy = Wal::start(
                &wal_dir,
                io.clone(),
                options.wal_segment_bytes,
                options.async_wal_sync_interval_ms,
                1,
                Vec::new(),
            )?;
            let keep = |m: &crate::wal::format::LoggedMutation<'_>| {
                m.sequence <= sequence
                    && flushed
                        .get(&m.region_id)
                        .is_some_and(|&flushed| m.sequence > flushed)
            };
            report.wal_mutations =
                copy_mutations(io, &services.dir().join(WAL_DIR), &sealed, keep, &copy)?;
            copy.shutdown()?;
        }
        drop(held);
        io.sync_dir(&wal_dir)?;
        Manifest::write_new(staging, io.clone(), state)?;
        Ok(report)
    }
}

/// The highest sequence the catalog names: a region's flushed sequence, a
/// bulk-loaded file's assigned one, the manifest's high-water mark.
fn highest_recorded_sequence(state: &ManifestState) -> u64 {
    let flushed = state
        .tables
        .values()
        .flat_map(|t| t.regions.iter())
        .map(|r| r.flushed_sequence);
    let files = state.referenced_files().map(|meta| meta.max_sequence);
    flushed.chain(files).fold(state.last_sequence, u64::max)
}

/// Hard-links (or copies) every HFile `state` names from `from` into `to`.
fn link_files(
    io: &Io,
    from: &Path,
    to: &Path,
    state: &ManifestState,
    report: &mut CheckpointReport,
) -> Result<()> {
    let mut ids: Vec<u64> = state.referenced_files().map(|meta| meta.id).collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let name = hfile_name(id);
        let (source, copy) = (from.join(&name), to.join(&name));
        match std::fs::hard_link(&source, &copy) {
            Ok(()) => report.hfiles_linked += 1,
            Err(e) if link_refused(&e) => {
                report.bytes_copied += copy_file(io, &source, &copy)?;
                report.hfiles_copied += 1;
            }
            Err(e) => {
                return Err(Error::io(
                    format!("linking {} to {}", source.display(), copy.display()),
                    e,
                ));
            }
        }
    }
    Ok(())
}

/// True when a hard link failed because the file system cannot make this
/// one (another device, or no hard links at all), so a copy will do.
fn link_refused(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EXDEV | libc::EPERM | libc::EOPNOTSUPP | libc::EMLINK)
    )
}

/// Copies `from` to the new file `to` and syncs it; returns its bytes.
fn copy_file(io: &Io, from: &Path, to: &Path) -> Result<u64> {
    let context = || format!("copying {} to {}", from.display(), to.display());
    let bytes = std::fs::copy(from, to).map_err(|e| Error::io(context(), e))?;
    io.open_rw(to)?
        .sync(crate::io::SyncKind::All)
        .map_err(|e| Error::io(context(), e))?;
    Ok(bytes)
}

/// Step 6: makes `staging` durable and renames it to `target`, which must
/// still not exist. When the rename cannot be made durable the copy is
/// removed again: the caller gets an error, so nothing may be left.
fn install(io: &Io, staging: &Path, target: &Path) -> Result<()> {
    io.sync_dir(staging)?;
    rename_no_replace(staging, target)?;
    io.sync_dir(&parent_of(target)).inspect_err(|_| {
        let _ = std::fs::remove_dir_all(target);
    })
}

/// Renames a directory, failing with [`Error::CheckpointTargetExists`] when
/// the target exists (plain rename would replace an empty directory).
fn rename_no_replace(from: &Path, to: &Path) -> Result<()> {
    let c_path = |p: &Path| {
        CString::new(p.as_os_str().as_bytes()).map_err(|_| Error::CheckpointTargetExists {
            path: p.to_path_buf(),
        })
    };
    let (c_from, c_to) = (c_path(from)?, c_path(to)?);
    // SAFETY: both pointers are valid NUL-terminated strings for the call.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            c_from.as_ptr(),
            libc::AT_FDCWD,
            c_to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EEXIST) {
        return Err(Error::CheckpointTargetExists {
            path: to.to_path_buf(),
        });
    }
    Err(Error::io(
        format!("renaming {} to {}", from.display(), to.display()),
        err,
    ))
}

/// `DIR.tmp` beside `DIR`: where the checkpoint is built.
fn staging_path(target: &Path) -> PathBuf {
    let mut name: OsString = target.file_name().unwrap_or_default().to_owned();
    name.push(".tmp");
    target.with_file_name(name)
}

/// `path` made absolute against the current directory.
fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| Error::io(format!("resolving {}", path.display()), e))
}

/// `path` with symbolic links and `..` resolved as far as it exists: its
/// longest existing ancestor canonicalized, then the rest.
fn resolved(path: &Path) -> Result<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(existing).is_err() {
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
            break;
        };
        rest.push(name);
        existing = parent;
    }
    let mut out = std::fs::canonicalize(existing)
        .map_err(|e| Error::io(format!("resolving {}", existing.display()), e))?;
    out.extend(rest.iter().rev());
    Ok(out)
}
