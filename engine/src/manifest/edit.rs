//! The kinds of change the manifest records, each described once.
//!
//! A kind is a struct holding its fields and, right below it, its
//! [`EditKind`] impl: the tag that starts its frame payload, its bytes (the
//! encoder and the decoder side by side, in the same field order), when it
//! fits the catalog, and what applying it does. [`Edit`], the one type the
//! rest of the engine records, and the three dispatches over it (encode,
//! decode, apply) are generated from the list in `edit_kinds!` at the end
//! of this file, so adding a kind is one struct, one impl and one line there
//! (`docs/architecture.md`, "Adding a manifest edit"). The bytes of each
//! kind are specified in `docs/format.md`, "Edits"; `tests.rs` pins them
//! with golden bytes.

use std::fmt;

use super::state::{
    LoadedFile, ManifestState, RegionRecord, SnapshotRecord, StoreFile, TableRecord,
    user_namespace_of,
};
use super::wire::{
    decode_descriptor, decode_family_ids, decode_file_meta, decode_list, decode_region,
    decode_u128, encode_descriptor, encode_family_ids, encode_file_meta, encode_list,
    encode_region, encode_u128, number_ranges,
};
use crate::codec::{DecodeError, Decoder, Encode};
use crate::file_meta::{BulkSource, FileMeta};
use crate::options::TableDescriptor;

/// Longest run of file numbers one history entry may hold when read back
/// (a bound on what a damaged but checksummed length can make us allocate).
const MAX_HISTORY_RUN: u32 = 1 << 20;

/// Why an edit cannot follow the catalog it would change: applied, it
/// would be lost or would lose something (a split of a region the table
/// does not have, a table id handed out twice). Read from disk it is
/// corruption (an edit before it was lost, or edits were reordered);
/// recorded, it is a bug, refused before anything is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Misfit(pub(crate) String);

impl fmt::Display for Misfit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One kind of change to the catalog.
///
/// Edits of a table the catalog no longer holds fit and change nothing:
/// a flush or compaction that was running when its table was dropped still
/// records its edit (the drop does not wait for it).
pub(crate) trait EditKind: Sized {
    /// The byte that starts the edit's frame payload; never reused.
    const TAG: u8;

    /// Appends the edit's fields (everything after the tag).
    fn encode(&self, out: &mut Vec<u8>);

    /// Reads the fields [`EditKind::encode`] wrote, refusing impossible
    /// values (ids beyond any the database hands out, unknown codes).
    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError>;

    /// `Err` when the edit cannot follow `state` (see [`Misfit`]). Checked
    /// before an edit is recorded and before one read back is applied; only
    /// what holds of every manifest strata ever wrote is checked.
    fn fits(&self, state: &ManifestState) -> Result<(), Misfit> {
        let _ = state;
        Ok(())
    }

    /// Applies the edit, keeping the id high-water marks and the last
    /// sequence above every id and sequence it holds. Never fails: an edit
    /// that does not fit changes less (as [`EditKind::fits`] describes).
    fn apply(&self, state: &mut ManifestState);
}

/// Tag 1: a table was created, with its regions (and, in a snapshot, its
/// files).
impl EditKind for TableRecord {
    const TAG: u8 = 1;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.id);
        encode_descriptor(out, &self.descriptor);
        encode_family_ids(out, &self.family_ids);
        encode_list(out, &self.regions, encode_region);
        out.put_u8(u8::from(self.enabled));
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(TableRecord {
            id: d.id64("table id")?,
            descriptor: decode_descriptor(d)?,
            family_ids: decode_family_ids(d)?,
            regions: decode_list(d, decode_region)?,
            enabled: d.bool()?,
        })
    }

    fn fits(&self, state: &ManifestState) -> Result<(), Misfit> {
        match state.tables.get(&self.id) {
            Some(existing) => Err(Misfit(format!(
                "table {} ('{}') is created while table '{}' holds its id",
                self.id,
                self.descriptor.name(),
                existing.descriptor.name()
            ))),
            None => Ok(()),
        }
    }

    fn apply(&self, state: &mut ManifestState) {
        state.next_table_id = state.next_table_id.max(self.id.saturating_add(1));
        for region in &self.regions {
            state.note_region(region);
        }
        state.note_families(&self.family_ids);
        if let Some(namespace) = user_namespace_of(self.descriptor.name()) {
            state.namespaces.insert(namespace.to_owned());
        }
        state.tables.insert(self.id, self.clone());
    }
}

/// Tag 2: a table's descriptor changed; files of families it no longer
/// has leave its regions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AlterTable {
    pub(crate) table_id: u64,
    pub(crate) descriptor: TableDescriptor,
    /// Id of each family of the new descriptor, in its order.
    pub(crate) family_ids: Vec<u32>,
}

impl EditKind for AlterTable {
    const TAG: u8 = 2;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.table_id);
        encode_descriptor(out, &self.descriptor);
        encode_family_ids(out, &self.family_ids);
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(AlterTable {
            table_id: d.u64()?,
            descriptor: decode_descriptor(d)?,
            family_ids: decode_family_ids(d)?,
        })
    }

    fn apply(&self, state: &mut ManifestState) {
        state.note_families(&self.family_ids);
        if let Some(table) = state.tables.get_mut(&self.table_id) {
            table.descriptor = self.descriptor.clone();
            table.family_ids = self.family_ids.clone();
            for region in &mut table.regions {
                region
                    .files
                    .retain(|f| self.family_ids.contains(&f.family_id));
            }
        }
    }
}

/// Tag 3: a table was dropped, with its remembered bulk loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DropTable {
    pub(crate) table_id: u64,
}

impl EditKind for DropTable {
    const TAG: u8 = 3;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.table_id);
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(DropTable { table_id: d.u64()? })
    }

    fn apply(&self, state: &mut ManifestState) {
        state.forget_table(self.table_id);
    }
}

/// Tag 4: the id high-water marks and the last sequence (the first edit of
/// every snapshot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NextIds {
    pub(crate) table: u64,
    pub(crate) region: u64,
    pub(crate) family: u32,
    pub(crate) file: u64,
    pub(crate) last_sequence: u64,
}

impl EditKind for NextIds {
    const TAG: u8 = 4;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.table);
        out.put_u64(self.region);
        out.put_u32(self.family);
        out.put_u64(self.file);
        out.put_u64(self.last_sequence);
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(NextIds {
            table: d.next_id64("next table id")?,
            region: d.next_id64("next region id")?,
            family: d.next_id32("next family id")?,
            file: d.next_id64("next file id")?,
            last_sequence: d.id64("last sequence")?,
        })
    }

    fn apply(&self, state: &mut ManifestState) {
        state.next_table_id = state.next_table_id.max(self.table);
        state.next_region_id = state.next_region_id.max(self.region);
        state.next_family_id = state.next_family_id.max(self.family);
        state.next_file_id = state.next_file_id.max(self.file);
        state.last_sequence = state.last_sequence.max(self.last_sequence);
    }
}

/// Tag 5: a flush wrote `files` (to L0) holding the region's mutations up
/// to `flushed_sequence`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Flush {
    pub(crate) table_id: u64,
    pub(crate) region_id: u64,
    pub(crate) flushed_sequence: u64,
    /// (family id, file) of each store that had cells.
    pub(crate) files: Vec<(u32, FileMeta)>,
}

impl EditKind for Flush {
    const TAG: u8 = 5;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.table_id);
        out.put_u64(self.region_id);
        out.put_u64(self.flushed_sequence);
        encode_list(out, &self.files, |out, (family_id, meta)| {
            out.put_u32(*family_id);
            encode_file_meta(out, meta);
        });
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(Flush {
            table_id: d.u64()?,
            region_id: d.u64()?,
            flushed_sequence: d.id64("flushed sequence")?,
            files: decode_list(d, |d| Ok((d.id32("family id")?, decode_file_meta(d)?)))?,
        })
    }

    /// A flush holds its region's flush lock, and a split or merge flushes
    /// the region under that lock before it records its edit, with writes
    /// held back: a flush never follows the edit that retired its region.
    fn fits(&self, state: &ManifestState) -> Result<(), Misfit> {
        region_of_live_table(state, self.table_id, self.region_id, "flush")
    }

    fn apply(&self, state: &mut ManifestState) {
        state.last_sequence = state.last_sequence.max(self.flushed_sequence);
        for (_, meta) in &self.files {
            state.note_file(meta);
        }
        if let Some(region) = state.region_mut(self.table_id, self.region_id) {
            region.flushed_sequence = region.flushed_sequence.max(self.flushed_sequence);
            for (family_id, meta) in &self.files {
                region.files.push(StoreFile {
                    family_id: *family_id,
                    level: 0,
                    meta: meta.clone(),
                });
            }
        }
    }
}

/// Tag 6: a compaction of one store replaced `removed` files with `added`
/// ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Compaction {
    pub(crate) table_id: u64,
    pub(crate) region_id: u64,
    pub(crate) family_id: u32,
    /// Ids of the input files.
    pub(crate) removed: Vec<u64>,
    /// (level, file) of each output.
    pub(crate) added: Vec<(u8, FileMeta)>,
}

impl EditKind for Compaction {
    const TAG: u8 = 6;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.table_id);
        out.put_u64(self.region_id);
        out.put_u32(self.family_id);
        encode_list(out, &self.removed, |out, id| out.put_u64(*id));
        encode_list(out, &self.added, |out, (level, meta)| {
            out.put_u8(*level);
            encode_file_meta(out, meta);
        });
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(Compaction {
            table_id: d.u64()?,
            region_id: d.u64()?,
            family_id: d.u32()?,
            removed: decode_list(d, Decoder::u64)?,
            added: decode_list(d, |d| Ok((d.u8()?, decode_file_meta(d)?)))?,
        })
    }

    /// A compaction holds its region's compaction slot, which a split and a
    /// merge wait for, so its region and inputs are still there; only an
    /// alter may have dropped the family meanwhile (with its files).
    fn fits(&self, state: &ManifestState) -> Result<(), Misfit> {
        region_of_live_table(state, self.table_id, self.region_id, "compaction")?;
        let family_dropped = state
            .tables
            .get(&self.table_id)
            .is_some_and(|table| !table.family_ids.contains(&self.family_id));
        let Some(region) = state.region(self.table_id, self.region_id) else {
            return Ok(());
        };
        if family_dropped {
            return Ok(());
        }
        let missing = self.removed.iter().find(|&&id| {
            !region
                .files
                .iter()
                .any(|f| f.family_id == self.family_id && f.meta.id == id)
        });
        match missing {
            Some(id) => Err(Misfit(format!(
                "compaction of family {} in region {} removes file {id}, which the store does not hold",
                self.family_id, self.region_id
            ))),
            None => Ok(()),
        }
    }

    fn apply(&self, state: &mut ManifestState) {
        for (_, meta) in &self.added {
            state.note_file(meta);
        }
        if let Some(region) = state.region_mut(self.table_id, self.region_id) {
            region
                .files
                .retain(|f| f.family_id != self.family_id || !self.removed.contains(&f.meta.id));
            for (level, meta) in &self.added {
                region.files.push(StoreFile {
                    family_id: self.family_id,
                    level: *level,
                    meta: meta.clone(),
                });
            }
        }
    }
}

/// Tag 7: a table was enabled or disabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SetEnabled {
    pub(crate) table_id: u64,
    pub(crate) enabled: bool,
}

impl EditKind for SetEnabled {
    const TAG: u8 = 7;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.table_id);
        out.put_u8(u8::from(self.enabled));
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(SetEnabled {
            table_id: d.u64()?,
            enabled: d.bool()?,
        })
    }

    fn apply(&self, state: &mut ManifestState) {
        if let Some(table) = state.tables.get_mut(&self.table_id) {
            table.enabled = self.enabled;
        }
    }
}

/// Tag 8: a region was replaced by its daughters, which reference the
/// parent's files until compaction rewrites them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SplitRegion {
    pub(crate) table_id: u64,
    pub(crate) parent_id: u64,
    pub(crate) daughters: Vec<RegionRecord>,
}

impl EditKind for SplitRegion {
    const TAG: u8 = 8;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.table_id);
        out.put_u64(self.parent_id);
        encode_list(out, &self.daughters, encode_region);
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(SplitRegion {
            table_id: d.u64()?,
            parent_id: d.id64("region id")?,
            daughters: decode_list(d, decode_region)?,
        })
    }

    /// A split holds its table's split gate and its region's compaction
    /// slot: no other split, merge or compaction of the parent ran since.
    fn fits(&self, state: &ManifestState) -> Result<(), Misfit> {
        region_of_live_table(state, self.table_id, self.parent_id, "split")?;
        let Some(table) = state.tables.get(&self.table_id) else {
            return Ok(());
        };
        let taken = self.daughters.iter().find(|daughter| {
            daughter.id != self.parent_id && table.regions.iter().any(|r| r.id == daughter.id)
        });
        match taken {
            Some(daughter) => Err(Misfit(format!(
                "split of region {} makes daughter {}, an id the table already has",
                self.parent_id, daughter.id
            ))),
            None => Ok(()),
        }
    }

    fn apply(&self, state: &mut ManifestState) {
        for daughter in &self.daughters {
            state.next_region_id = state.next_region_id.max(daughter.id.saturating_add(1));
        }
        if let Some(table) = state.tables.get_mut(&self.table_id)
            && let Some(at) = table.regions.iter().position(|r| r.id == self.parent_id)
        {
            table
                .regions
                .splice(at..=at, self.daughters.iter().cloned());
        }
    }
}

/// Tag 9: a namespace was created (never `default` or `hbase`, which always
/// exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CreateNamespace {
    pub(crate) name: String,
}

impl EditKind for CreateNamespace {
    const TAG: u8 = 9;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_bytes32(self.name.as_bytes());
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(CreateNamespace {
            name: d.string32()?,
        })
    }

    fn apply(&self, state: &mut ManifestState) {
        state.namespaces.insert(self.name.clone());
    }
}

/// Tag 10: an empty namespace was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DropNamespace {
    pub(crate) name: String,
}

impl EditKind for DropNamespace {
    const TAG: u8 = 10;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_bytes32(self.name.as_bytes());
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(DropNamespace {
            name: d.string32()?,
        })
    }

    fn apply(&self, state: &mut ManifestState) {
        state.namespaces.remove(&self.name);
    }
}

/// Tag 11: a bulk load installed `files` into stores of one table's
/// regions, all at once; `sources` are the bulk-written files they came
/// from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BulkLoad {
    pub(crate) table_id: u64,
    /// The sequence every loaded cell reads with (0: a back-fill).
    pub(crate) sequence: u64,
    pub(crate) files: Vec<LoadedFile>,
    pub(crate) sources: Vec<BulkSource>,
}

impl EditKind for BulkLoad {
    const TAG: u8 = 11;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.table_id);
        out.put_u64(self.sequence);
        encode_list(out, &self.files, |out, file| {
            out.put_u64(file.region_id);
            out.put_u32(file.family_id);
            out.put_u8(file.level);
            encode_file_meta(out, &file.meta);
        });
        encode_list(out, &self.sources, |out, source| {
            encode_u128(out, source.writer_id);
            out.put_u32(source.file_number);
        });
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(BulkLoad {
            table_id: d.u64()?,
            sequence: d.u64()?,
            files: decode_list(d, |d| {
                Ok(LoadedFile {
                    region_id: d.u64()?,
                    family_id: d.u32()?,
                    level: d.u8()?,
                    meta: decode_file_meta(d)?,
                })
            })?,
            sources: decode_list(d, |d| {
                Ok(BulkSource {
                    writer_id: decode_u128(d)?,
                    file_number: d.u32()?,
                })
            })?,
        })
    }

    /// A bulk load holds its table's split gate: the regions it placed its
    /// files in are the table's until its edit is recorded.
    fn fits(&self, state: &ManifestState) -> Result<(), Misfit> {
        self.files.iter().try_for_each(|file| {
            region_of_live_table(state, self.table_id, file.region_id, "bulk load")
        })
    }

    fn apply(&self, state: &mut ManifestState) {
        state.last_sequence = state.last_sequence.max(self.sequence);
        for file in &self.files {
            state.note_file(&file.meta);
            if let Some(region) = state.region_mut(self.table_id, file.region_id) {
                region.files.push(StoreFile {
                    family_id: file.family_id,
                    level: file.level,
                    meta: file.meta.clone(),
                });
            }
        }
        for source in &self.sources {
            state.remember_bulk_file(self.table_id, source.writer_id, source.file_number);
        }
    }
}

/// Tag 12: two adjacent regions were replaced by one holding the files of
/// both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MergeRegions {
    pub(crate) table_id: u64,
    /// The lower region (its start is the merged region's).
    pub(crate) first_id: u64,
    /// The upper region (its end is the merged region's).
    pub(crate) second_id: u64,
    pub(crate) merged: RegionRecord,
}

impl EditKind for MergeRegions {
    const TAG: u8 = 12;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.table_id);
        out.put_u64(self.first_id);
        out.put_u64(self.second_id);
        encode_region(out, &self.merged);
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(MergeRegions {
            table_id: d.u64()?,
            first_id: d.u64()?,
            second_id: d.u64()?,
            merged: decode_region(d)?,
        })
    }

    /// A merge holds its table's split gate exclusively and both regions'
    /// compaction slots: the two are still there, side by side.
    fn fits(&self, state: &ManifestState) -> Result<(), Misfit> {
        let Some(table) = state.tables.get(&self.table_id) else {
            return Ok(());
        };
        let first = table.regions.iter().position(|r| r.id == self.first_id);
        let second = first.and_then(|at| table.regions.get(at + 1));
        if second.is_some_and(|r| r.id == self.second_id) {
            Ok(())
        } else {
            Err(Misfit(format!(
                "merge of regions {} and {}, which table {} does not hold side by side",
                self.first_id, self.second_id, self.table_id
            )))
        }
    }

    fn apply(&self, state: &mut ManifestState) {
        state.next_region_id = state.next_region_id.max(self.merged.id.saturating_add(1));
        if let Some(table) = state.tables.get_mut(&self.table_id)
            && let Some(at) = table.regions.iter().position(|r| r.id == self.first_id)
            && table
                .regions
                .get(at + 1)
                .is_some_and(|r| r.id == self.second_id)
        {
            table.regions.splice(at..=at + 1, [self.merged.clone()]);
        }
    }
}

/// Tag 13, snapshot only: the bulk-written files loaded into each table,
/// oldest writer first (see `MAX_REMEMBERED_BULK_WRITERS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BulkLoadHistory {
    /// (table id, writer id, the writer's file numbers loaded, ascending).
    pub(crate) entries: Vec<(u64, u128, Vec<u32>)>,
}

impl EditKind for BulkLoadHistory {
    const TAG: u8 = 13;

    fn encode(&self, out: &mut Vec<u8>) {
        encode_list(out, &self.entries, |out, (table, writer, numbers)| {
            out.put_u64(*table);
            encode_u128(out, *writer);
            encode_list(out, &number_ranges(numbers), |out, (first, last)| {
                out.put_u32(*first);
                out.put_u32(*last);
            });
        });
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let entries = decode_list(d, |d| {
            let table = d.u64()?;
            let writer = decode_u128(d)?;
            let runs = decode_list(d, |d| {
                let (first, last) = (d.u32()?, d.u32()?);
                if first > last || last - first >= MAX_HISTORY_RUN {
                    return Err(DecodeError(format!(
                        "bulk load history run {first}..={last}"
                    )));
                }
                Ok(first..=last)
            })?;
            Ok((table, writer, runs.into_iter().flatten().collect()))
        })?;
        Ok(BulkLoadHistory { entries })
    }

    fn apply(&self, state: &mut ManifestState) {
        for (table, writer, numbers) in &self.entries {
            for &number in numbers {
                state.remember_bulk_file(*table, *writer, number);
            }
        }
    }
}

/// Tag 14: a snapshot was taken: the table as it was at one sequence, whose files it
/// pins. In a snapshot of the catalog, one per snapshot after the tables.
impl EditKind for SnapshotRecord {
    const TAG: u8 = 14;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_bytes32(self.name.as_bytes());
        out.put_i64(self.created_ms);
        out.put_u64(self.sequence);
        self.table.encode(out);
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(SnapshotRecord {
            name: d.string32()?,
            created_ms: d.i64()?,
            sequence: d.id64("snapshot sequence")?,
            table: TableRecord::decode(d)?,
        })
    }

    /// Snapshots are taken holding the manifest's lock, which checks the name first.
    fn fits(&self, state: &ManifestState) -> Result<(), Misfit> {
        if state.snapshots.contains_key(&self.name) {
            return Err(Misfit(format!(
                "snapshot '{}' is taken while a snapshot holds its name",
                self.name
            )));
        }
        Ok(())
    }

    fn apply(&self, state: &mut ManifestState) {
        state.last_sequence = state.last_sequence.max(self.sequence);
        for region in &self.table.regions {
            state.note_region(region);
        }
        state.note_families(&self.table.family_ids);
        state.snapshots.insert(self.name.clone(), self.clone());
    }
}

/// Tag 15: a snapshot was deleted; the files only it named may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeleteSnapshot {
    pub(crate) name: String,
}

impl EditKind for DeleteSnapshot {
    const TAG: u8 = 15;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_bytes32(self.name.as_bytes());
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(DeleteSnapshot {
            name: d.string32()?,
        })
    }

    /// Deletes hold the manifest's lock, which checks the snapshot exists.
    fn fits(&self, state: &ManifestState) -> Result<(), Misfit> {
        if !state.snapshots.contains_key(&self.name) {
            return Err(Misfit(format!(
                "snapshot '{}' is deleted, but there is no such snapshot",
                self.name
            )));
        }
        Ok(())
    }

    fn apply(&self, state: &mut ManifestState) {
        state.snapshots.remove(&self.name);
    }
}

/// Tag 16: a disabled table's content was replaced by a snapshot's (HBase's
/// `restore_snapshot`): its descriptor, family ids and regions (new region ids, the
/// snapshot's files) are the ones given; it stays disabled. Its remembered bulk loads are
/// kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RestoreTable {
    pub(crate) table_id: u64,
    pub(crate) descriptor: TableDescriptor,
    /// Id of each family of `descriptor`, in its order.
    pub(crate) family_ids: Vec<u32>,
    pub(crate) regions: Vec<RegionRecord>,
}

impl EditKind for RestoreTable {
    const TAG: u8 = 16;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.table_id);
        encode_descriptor(out, &self.descriptor);
        encode_family_ids(out, &self.family_ids);
        encode_list(out, &self.regions, encode_region);
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(RestoreTable {
            table_id: d.u64()?,
            descriptor: decode_descriptor(d)?,
            family_ids: decode_family_ids(d)?,
            regions: decode_list(d, decode_region)?,
        })
    }

    /// A restore holds the manifest's lock, which checks the table is disabled.
    fn fits(&self, state: &ManifestState) -> Result<(), Misfit> {
        match state.tables.get(&self.table_id) {
            Some(table) if table.enabled => Err(Misfit(format!(
                "table {} ('{}') is restored while it is enabled",
                self.table_id,
                table.descriptor.name()
            ))),
            _ => Ok(()),
        }
    }

    fn apply(&self, state: &mut ManifestState) {
        for region in &self.regions {
            state.note_region(region);
        }
        state.note_families(&self.family_ids);
        if let Some(table) = state.tables.get_mut(&self.table_id) {
            table.descriptor = self.descriptor.clone();
            table.family_ids = self.family_ids.clone();
            table.regions = self.regions.clone();
        }
    }
}

/// `Err` when the catalog holds table `table_id` but not its region
/// `region_id`, which `what` (an edit's job) changes. An edit of a dropped
/// table fits (see [`EditKind`]).
fn region_of_live_table(
    state: &ManifestState,
    table_id: u64,
    region_id: u64,
    what: &str,
) -> Result<(), Misfit> {
    match state.tables.get(&table_id) {
        Some(table) if !table.regions.iter().any(|r| r.id == region_id) => Err(Misfit(format!(
            "{what} of region {region_id}, which table {table_id} ('{}') does not have",
            table.descriptor.name()
        ))),
        _ => Ok(()),
    }
}

/// Declares [`Edit`] with one variant per kind, in tag order, and the
/// dispatches over it: each kind's [`EditKind`] impl is all there is to it.
macro_rules! edit_kinds {
    ($($(#[$doc:meta])* $variant:ident($kind:ty),)+) => {
        /// One change to the catalog: the payload of one manifest frame.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub(crate) enum Edit {
            $($(#[$doc])* $variant($kind),)+
        }

        // Every kind has a tag of its own (checked as the crate compiles).
        const _: () = {
            let tags = [$(<$kind as EditKind>::TAG),+];
            let mut i = 0;
            while i < tags.len() {
                let mut j = i + 1;
                while j < tags.len() {
                    assert!(tags[i] != tags[j], "two manifest edit kinds share a tag");
                    j += 1;
                }
                i += 1;
            }
        };

        impl Edit {
            /// The tag that starts the edit's payload.
            pub(crate) fn tag(&self) -> u8 {
                match self {
                    $(Edit::$variant(_) => <$kind as EditKind>::TAG,)+
                }
            }

            fn encode_fields(&self, out: &mut Vec<u8>) {
                match self {
                    $(Edit::$variant(edit) => edit.encode(out),)+
                }
            }

            fn decode_fields(tag: u8, d: &mut Decoder<'_>) -> Result<Edit, DecodeError> {
                $(if tag == <$kind as EditKind>::TAG {
                    return Ok(Edit::$variant(<$kind as EditKind>::decode(d)?));
                })+
                Err(DecodeError(format!("unknown manifest edit {tag}")))
            }

            /// `Err` when the edit cannot follow `state` ([`EditKind::fits`]).
            pub(crate) fn fits(&self, state: &ManifestState) -> Result<(), Misfit> {
                match self {
                    $(Edit::$variant(edit) => edit.fits(state),)+
                }
            }

            fn apply_to(&self, state: &mut ManifestState) {
                match self {
                    $(Edit::$variant(edit) => edit.apply(state),)+
                }
            }
        }
    };
}

edit_kinds! {
    CreateTable(TableRecord),
    AlterTable(AlterTable),
    DropTable(DropTable),
    NextIds(NextIds),
    Flush(Flush),
    Compaction(Compaction),
    SetEnabled(SetEnabled),
    SplitRegion(SplitRegion),
    CreateNamespace(CreateNamespace),
    DropNamespace(DropNamespace),
    BulkLoad(BulkLoad),
    MergeRegions(MergeRegions),
    BulkLoadHistory(BulkLoadHistory),
    CreateSnapshot(SnapshotRecord),
    DeleteSnapshot(DeleteSnapshot),
    RestoreTable(RestoreTable),
}

impl ManifestState {
    /// Applies an edit ([`EditKind::apply`]), whether it fits or not.
    pub(crate) fn apply(&mut self, edit: &Edit) {
        edit.apply_to(self);
    }
}

/// Encodes an edit as a frame payload: its tag, then its fields.
pub(crate) fn encode_edit(edit: &Edit) -> Vec<u8> {
    let mut out = vec![edit.tag()];
    edit.encode_fields(&mut out);
    out
}

/// Decodes a frame payload into an edit; bytes after its fields are an
/// error.
pub(crate) fn decode_edit(payload: &[u8]) -> Result<Edit, DecodeError> {
    let mut d = Decoder::new(payload);
    let tag = d.u8()?;
    let edit = Edit::decode_fields(tag, &mut d)?;
    if !d.is_empty() {
        return Err(DecodeError("trailing bytes after a manifest edit".into()));
    }
    Ok(edit)
}
