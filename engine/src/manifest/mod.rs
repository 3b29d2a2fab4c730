//! The manifest: the durable record of tables, their families and regions,
//! and the id high-water marks (ids are never reused, because WAL records
//! name regions and families by id).
//!
//! Files (`docs/format.md`, "Manifest"):
//! * `MANIFEST-NNNNNN`: the 32-byte file header (magic `STRATAMF`), two
//!   commit slots, then frames exactly like WAL frames, each holding one
//!   [`Edit`]. Every edit is synced and committed before the change it
//!   records takes effect.
//! * `CURRENT`: the name of the live manifest and a newline. It is replaced
//!   atomically: write `CURRENT.tmp`, fsync it, rename it over `CURRENT`,
//!   fsync the directory.
//!
//! Every open starts a new manifest holding a snapshot of the state (a
//! `NextIds` edit, one `CreateNamespace` per user namespace, one
//! `CreateTable` per table, with every region's files and flushed
//! sequence, and one `CreateSnapshot` per snapshot), switches `CURRENT` to it and deletes the old one;
//! so does an append that finds the manifest larger than
//! `MAX_MANIFEST_BYTES` (`log.rs`). Manifests therefore stay small. A crash before the
//! rename leaves the old manifest live; a crash after it leaves an unused
//! old file that the next open deletes.
//!
//! The rooms, each with one job:
//! * `state.rs`: the catalog ([`ManifestState`]) and the records it holds.
//! * `edit.rs`: the kinds of change ([`Edit`]), each described once: its
//!   fields, its tag and bytes, when it fits the catalog, what it does.
//! * `wire.rs`: the bytes of what edits carry (descriptors, regions, file
//!   metas, lists).
//! * `format.rs`: the file's layout: commit slots, a snapshot's bytes.
//! * `log.rs`: the live manifest ([`Manifest`]): recording edits, snapshots.
//! * `reader.rs`: reading `CURRENT` and a manifest back, changing nothing.

pub(crate) mod edit;
mod format;
mod log;
mod reader;
mod state;
mod wire;

#[cfg(test)]
mod tests;

pub(crate) use edit::Edit;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use edit::{decode_edit, encode_edit};
pub(crate) use log::Manifest;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use reader::parse_manifest;
pub(crate) use reader::read_current;
pub(crate) use state::{
    LoadedFile, ManifestState, RegionRecord, SnapshotRecord, StoreFile, TableRecord,
};
