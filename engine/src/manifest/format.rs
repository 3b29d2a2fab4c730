//! The manifest file's layout (`docs/format.md`, "Manifest"): the 32-byte
//! header shared with WAL segments (magic `STRATAMF`), two commit slots,
//! then edit frames exactly like WAL frames. A new manifest holds a
//! snapshot: the edits that rebuild the catalog from nothing.

use super::edit::{BulkLoadHistory, CreateNamespace, Edit, NextIds, encode_edit};
use super::state::ManifestState;
use crate::codec::{Decoder, Encode};
use crate::wal::format::{SEGMENT_HEADER_BYTES, append_frame, file_header};

/// Magic of manifest files.
pub(super) const MANIFEST_MAGIC: &[u8; 8] = b"STRATAMF";

/// Offset of the first commit slot (right after the file header).
pub(super) const COMMIT_SLOTS_OFFSET: u64 = SEGMENT_HEADER_BYTES as u64;
/// Bytes of one commit slot: generation u64, committed end u64, reserved
/// u64, xxh3-64 of the first 24 bytes.
pub(super) const COMMIT_SLOT_BYTES: u64 = 32;
/// Offset of the first edit of a version-2 manifest.
pub(super) const FIRST_EDIT_OFFSET: u64 = COMMIT_SLOTS_OFFSET + 2 * COMMIT_SLOT_BYTES;

/// One of the two commit slots of a version-2 manifest: every edit before
/// `committed_end` was synced before anything acted on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CommitSlot {
    /// Grows by one with every commit; the slot with the higher one is current.
    pub(super) generation: u64,
    /// Offset just after the last committed edit.
    pub(super) committed_end: u64,
}

impl CommitSlot {
    /// The slot's 32 bytes.
    pub(super) fn encode(self) -> [u8; COMMIT_SLOT_BYTES as usize] {
        let mut bytes = Vec::with_capacity(COMMIT_SLOT_BYTES as usize);
        bytes.put_u64(self.generation);
        bytes.put_u64(self.committed_end);
        bytes.put_u64(0);
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes);
        bytes.put_u64(checksum);
        let mut out = [0u8; COMMIT_SLOT_BYTES as usize];
        out.copy_from_slice(&bytes);
        out
    }

    /// The slot at the start of `bytes`; `None` when it is damaged or was
    /// never written (generation 0).
    pub(super) fn decode(bytes: &[u8]) -> Option<CommitSlot> {
        let mut d = Decoder::new(bytes.get(..COMMIT_SLOT_BYTES as usize)?);
        let generation = d.u64().ok()?;
        let committed_end = d.u64().ok()?;
        let _reserved = d.u64().ok()?;
        let stored = d.u64().ok()?;
        let body = bytes.get(..24)?;
        (generation > 0 && stored == xxhash_rust::xxh3::xxh3_64(body)).then_some(CommitSlot {
            generation,
            committed_end,
        })
    }

    /// Where this slot lives: generations alternate between the two slots,
    /// so a torn slot write leaves the other (previous) one intact.
    pub(super) fn offset(self) -> u64 {
        COMMIT_SLOTS_OFFSET + (self.generation % 2) * COMMIT_SLOT_BYTES
    }
}

/// The edits that rebuild `state` from nothing: the id marks, the user
/// namespaces, every table (with its regions and files), every snapshot, and
/// the bulk load history.
pub(super) fn snapshot_edits(state: &ManifestState) -> Vec<Edit> {
    let mut edits = vec![Edit::NextIds(NextIds {
        table: state.next_table_id,
        region: state.next_region_id,
        family: state.next_family_id,
        file: state.next_file_id,
        last_sequence: state.last_sequence,
    })];
    edits.extend(
        state
            .namespaces
            .iter()
            .map(|name| Edit::CreateNamespace(CreateNamespace { name: name.clone() })),
    );
    edits.extend(state.tables.values().cloned().map(Edit::CreateTable));
    edits.extend(state.snapshots.values().cloned().map(Edit::CreateSnapshot));
    if !state.bulk_loaded_order.is_empty() {
        edits.push(Edit::BulkLoadHistory(BulkLoadHistory {
            entries: state
                .bulk_loaded_order
                .iter()
                .filter_map(|key| {
                    let numbers = state.bulk_loaded.get(key)?;
                    Some((key.0, key.1, numbers.iter().copied().collect()))
                })
                .collect(),
        }));
    }
    edits
}

/// The bytes of a new manifest numbered `id` holding `state`: the header,
/// the commit slots (the first commit covering everything), the snapshot's
/// edits.
pub(super) fn snapshot_bytes(id: u64, state: &ManifestState) -> (Vec<u8>, CommitSlot) {
    let mut bytes = file_header(MANIFEST_MAGIC, id).to_vec();
    bytes.resize(FIRST_EDIT_OFFSET as usize, 0);
    for edit in snapshot_edits(state) {
        append_frame(&mut bytes, &encode_edit(&edit));
    }
    let commit = CommitSlot {
        generation: 1,
        committed_end: bytes.len() as u64,
    };
    let slot = commit.offset() as usize;
    if let Some(at) = bytes.get_mut(slot..slot + COMMIT_SLOT_BYTES as usize) {
        at.copy_from_slice(&commit.encode());
    }
    (bytes, commit)
}
