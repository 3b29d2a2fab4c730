//! The live manifest ([`Manifest`]): the catalog in memory and the file
//! that makes each change durable. Every change is appended as one frame,
//! synced, then committed through the other commit slot, synced, before the
//! catalog in memory takes it and anything acts on it. Every open, and an
//! append that finds the file larger than [`MAX_MANIFEST_BYTES`], writes a
//! new manifest holding a snapshot and switches `CURRENT` to it.

use std::path::{Path, PathBuf};

use super::edit::{Edit, encode_edit};
use super::format::{CommitSlot, snapshot_bytes};
use super::reader::{ManifestRead, read_current};
use super::state::ManifestState;
use crate::error::{Error, Result};
use crate::io::{Io, IoFile, SyncKind};
use crate::names::{CURRENT_FILE, manifest_name, parse_manifest_name};
use crate::wal::format::append_frame;

/// A manifest larger than this is rewritten as a snapshot on the next append.
pub(crate) const MAX_MANIFEST_BYTES: u64 = 8 * 1024 * 1024;

/// The live manifest file and the state it describes.
pub(crate) struct Manifest {
    dir: PathBuf,
    io: Io,
    /// `None` when the database is open read-only.
    file: Option<IoFile>,
    id: u64,
    /// Bytes in the live manifest file.
    size: u64,
    /// The current commit slot.
    commit: CommitSlot,
    /// An append or commit failed: the file's tail is unknown, so nothing
    /// more is appended until the database is reopened.
    failed: bool,
    state: ManifestState,
    read: ManifestRead,
}

impl Manifest {
    /// Opens the database's manifest (or starts one in an empty directory)
    /// and rewrites it as a snapshot.
    pub(crate) fn open(dir: &Path, io: Io) -> Result<Manifest> {
        let (state, old_id, read) = match read_current(dir, &io)? {
            Some((id, state, read)) => (state, Some(id), read),
            None => (ManifestState::default(), None, ManifestRead::default()),
        };
        let mut manifest = Manifest::write_snapshot(dir, io, old_id.map_or(1, |id| id + 1), state)?;
        manifest.read = read;
        Ok(manifest)
    }

    /// Writes a first manifest holding `state` into `dir` (a new database
    /// directory: a checkpoint's), durably, and makes it current.
    pub(crate) fn write_new(dir: &Path, io: Io, state: ManifestState) -> Result<()> {
        Manifest::write_snapshot(dir, io, 1, state).map(drop)
    }

    /// Reads the database's manifest without writing anything; every
    /// [`Manifest::record`] then fails with [`Error::ReadOnly`].
    pub(crate) fn open_read_only(dir: &Path, io: Io) -> Result<Manifest> {
        let (id, state, read) = read_current(dir, &io)?.ok_or_else(|| {
            Error::io(
                format!("reading {}", dir.join(CURRENT_FILE).display()),
                std::io::Error::from(std::io::ErrorKind::NotFound),
            )
        })?;
        Ok(Manifest {
            dir: dir.to_path_buf(),
            io,
            file: None,
            id,
            size: 0,
            commit: CommitSlot {
                generation: 0,
                committed_end: 0,
            },
            failed: false,
            state,
            read,
        })
    }

    /// The catalog as of the last edit.
    pub(crate) fn state(&self) -> &ManifestState {
        &self.state
    }

    /// What reading the manifest at open found.
    pub(crate) fn read_report(&self) -> &ManifestRead {
        &self.read
    }

    /// Reserves `count` consecutive region ids (made durable by the edit
    /// that uses them); returns the first.
    pub(crate) fn allocate_region_ids(&mut self, count: u64) -> u64 {
        let first = self.state.next_region_id;
        self.state.next_region_id += count;
        first
    }

    /// Reserves a file id (made durable by the edit that adds the file; a
    /// file left behind by a crash before that edit is deleted at open).
    pub(crate) fn allocate_file_id(&mut self) -> u64 {
        let id = self.state.next_file_id;
        self.state.next_file_id += 1;
        id
    }

    /// Writes a new manifest holding `state`, makes it current and deletes
    /// every other manifest.
    fn write_snapshot(dir: &Path, io: Io, id: u64, state: ManifestState) -> Result<Manifest> {
        let path = dir.join(manifest_name(id));
        if path.exists() {
            io.remove_file(&path)
                .map_err(|e| Error::io(format!("removing {}", path.display()), e))?;
        }
        let file = io.create_new(&path)?;
        let (bytes, commit) = snapshot_bytes(id, &state);
        file.append(&bytes)
            .and_then(|_| file.sync(SyncKind::All))
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
        let tmp = dir.join("CURRENT.tmp");
        io.write_file(&tmp, format!("{}\n", manifest_name(id)).as_bytes())?;
        io.rename(&tmp, &dir.join(CURRENT_FILE)).map_err(|e| {
            Error::io(
                format!("installing {}", dir.join(CURRENT_FILE).display()),
                e,
            )
        })?;
        io.sync_dir(dir)?;
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                if let Some(other) = name.to_str().and_then(parse_manifest_name)
                    && other != id
                {
                    let _ = io.remove_file(&entry.path());
                }
            }
        }
        Ok(Manifest {
            dir: dir.to_path_buf(),
            io,
            file: Some(file),
            id,
            size: bytes.len() as u64,
            commit,
            failed: false,
            state,
            read: ManifestRead {
                path,
                torn_tail: None,
            },
        })
    }

    /// Appends an edit and makes it durable, then commits it (the other
    /// commit slot takes the new end, synced), then applies it to the
    /// state. Only after this returns may anything act on the edit.
    ///
    /// An edit that does not fit the catalog ([`Edit::fits`]) is refused
    /// with [`Error::InvariantBroken`] before anything is written: reading
    /// the manifest back would refuse it as corruption.
    pub(crate) fn record(&mut self, edit: &Edit) -> Result<()> {
        let Some(file) = &self.file else {
            return Err(Error::ReadOnly);
        };
        let path = self.dir.join(manifest_name(self.id));
        if self.failed {
            return Err(Error::corruption(
                &path,
                self.size,
                "an earlier append to the manifest failed; reopen the database",
            ));
        }
        edit.fits(&self.state)
            .map_err(|misfit| Error::InvariantBroken {
                what: format!("a manifest edit must fit the catalog: {misfit}"),
            })?;
        let mut frame = Vec::new();
        append_frame(&mut frame, &encode_edit(edit));
        let commit = CommitSlot {
            generation: self.commit.generation + 1,
            committed_end: self.size + frame.len() as u64,
        };
        let written = file
            .write_at(self.size, &frame)
            .and_then(|()| file.sync(SyncKind::Data))
            .and_then(|()| file.write_at(commit.offset(), &commit.encode()))
            .and_then(|()| file.sync(SyncKind::Data));
        if let Err(e) = written {
            self.failed = true;
            return Err(Error::io(format!("appending to {}", path.display()), e));
        }
        debug_assert!(
            commit.committed_end > self.size && commit.offset() != self.commit.offset(),
            "a commit moves the end forward, in the slot the last commit did not use"
        );
        self.size = commit.committed_end;
        self.commit = commit;
        self.state.apply(edit);
        if self.size > MAX_MANIFEST_BYTES {
            let state = std::mem::take(&mut self.state);
            *self = Manifest::write_snapshot(&self.dir, self.io.clone(), self.id + 1, state)?;
        }
        Ok(())
    }
}
