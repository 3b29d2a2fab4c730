//! The manifest: the durable record of tables, their families and regions,
//! and the id high-water marks (ids are never reused, because WAL records
//! name regions and families by id).
//!
//! Files (`docs/format.md`, "Manifest"):
//! * `MANIFEST-NNNNNN`: the 32-byte file header (magic `STRATAMF`), then
//!   frames exactly like WAL frames, each holding one [`Edit`]. Every edit is
//!   synced before the change it records takes effect.
//! * `CURRENT`: the name of the live manifest and a newline. It is replaced
//!   atomically: write `CURRENT.tmp`, fsync it, rename it over `CURRENT`,
//!   fsync the directory.
//!
//! Every open starts a new manifest holding a snapshot of the state (a
//! `NextIds` edit and one `CreateTable` per table, with every region's files
//! and flushed sequence), switches `CURRENT` to it and deletes the old one;
//! so does an append that finds the manifest larger than
//! [`MAX_MANIFEST_BYTES`]. Manifests therefore stay small. A crash before the
//! rename leaves the old manifest live; a crash after it leaves an unused
//! old file that the next open deletes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::codec::{DecodeError, Decoder, Encode};
use crate::error::{Error, Result};
use crate::hfile::FileMeta;
use crate::io::{Io, IoFile, SyncKind, sync_dir};
use crate::options::{
    BloomType, Compression, Durability, FamilyDescriptor, PreSplit, TableDescriptor,
};
use crate::wal::format::{append_frame, file_header, parse_file_header};
use crate::wal::replay::{SegmentEnd, scan_segment};

/// Magic of manifest files.
const MANIFEST_MAGIC: &[u8; 8] = b"STRATAMF";
const CURRENT: &str = "CURRENT";

const EDIT_CREATE_TABLE: u8 = 1;
const EDIT_ALTER_TABLE: u8 = 2;
const EDIT_DROP_TABLE: u8 = 3;
const EDIT_NEXT_IDS: u8 = 4;
const EDIT_FLUSH: u8 = 5;
const EDIT_COMPACTION: u8 = 6;
const EDIT_SET_ENABLED: u8 = 7;
const EDIT_SPLIT_REGION: u8 = 8;

/// A manifest larger than this is rewritten as a snapshot on the next append.
pub(crate) const MAX_MANIFEST_BYTES: u64 = 8 * 1024 * 1024;

/// A file of a store, as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoreFile {
    pub(crate) family_id: u32,
    pub(crate) level: u8,
    pub(crate) meta: FileMeta,
}

/// A region as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RegionRecord {
    pub(crate) id: u64,
    pub(crate) start: Vec<u8>,
    pub(crate) end: Vec<u8>,
    /// Every mutation of the region with a sequence <= this is in its files.
    pub(crate) flushed_sequence: u64,
    pub(crate) files: Vec<StoreFile>,
}

/// A table as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableRecord {
    pub(crate) id: u64,
    pub(crate) descriptor: TableDescriptor,
    /// Id of each family, in the descriptor's order.
    pub(crate) family_ids: Vec<u32>,
    pub(crate) regions: Vec<RegionRecord>,
    /// False while the table is disabled.
    pub(crate) enabled: bool,
}

/// One change to the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Edit {
    CreateTable(TableRecord),
    AlterTable {
        table_id: u64,
        descriptor: TableDescriptor,
        family_ids: Vec<u32>,
    },
    DropTable {
        table_id: u64,
    },
    NextIds {
        table: u64,
        region: u64,
        family: u32,
        file: u64,
        last_sequence: u64,
    },
    /// A flush wrote `files` (to L0) holding the region's mutations up to
    /// `flushed_sequence`.
    Flush {
        table_id: u64,
        region_id: u64,
        flushed_sequence: u64,
        files: Vec<(u32, FileMeta)>,
    },
    /// A table was enabled or disabled.
    SetEnabled {
        table_id: u64,
        enabled: bool,
    },
    /// A region was replaced by its daughters, which reference the
    /// parent's files until compaction rewrites them.
    SplitRegion {
        table_id: u64,
        parent_id: u64,
        daughters: Vec<RegionRecord>,
    },
    /// A compaction of one store replaced `removed` files with `added` ones.
    Compaction {
        table_id: u64,
        region_id: u64,
        family_id: u32,
        removed: Vec<u64>,
        added: Vec<(u8, FileMeta)>,
    },
}

/// The catalog the manifest describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ManifestState {
    pub(crate) tables: BTreeMap<u64, TableRecord>,
    pub(crate) next_table_id: u64,
    pub(crate) next_region_id: u64,
    pub(crate) next_family_id: u32,
    pub(crate) next_file_id: u64,
    /// The highest sequence any flushed file ever held.
    pub(crate) last_sequence: u64,
}

impl Default for ManifestState {
    fn default() -> Self {
        ManifestState {
            tables: BTreeMap::new(),
            next_table_id: 1,
            next_region_id: 1,
            next_family_id: 1,
            next_file_id: 1,
            last_sequence: 0,
        }
    }
}

impl ManifestState {
    /// Applies an edit, keeping the id high-water marks above every id seen.
    pub(crate) fn apply(&mut self, edit: &Edit) {
        match edit {
            Edit::CreateTable(table) => {
                self.next_table_id = self.next_table_id.max(table.id + 1);
                for region in &table.regions {
                    self.next_region_id = self.next_region_id.max(region.id + 1);
                    self.last_sequence = self.last_sequence.max(region.flushed_sequence);
                    for file in &region.files {
                        self.note_file(&file.meta);
                    }
                }
                for &family in &table.family_ids {
                    self.next_family_id = self.next_family_id.max(family + 1);
                }
                self.tables.insert(table.id, table.clone());
            }
            Edit::AlterTable {
                table_id,
                descriptor,
                family_ids,
            } => {
                for &family in family_ids {
                    self.next_family_id = self.next_family_id.max(family + 1);
                }
                if let Some(table) = self.tables.get_mut(table_id) {
                    table.descriptor = descriptor.clone();
                    table.family_ids = family_ids.clone();
                    // Files of deleted families are no longer part of the table.
                    for region in &mut table.regions {
                        region.files.retain(|f| family_ids.contains(&f.family_id));
                    }
                }
            }
            Edit::DropTable { table_id } => {
                self.tables.remove(table_id);
            }
            Edit::SetEnabled { table_id, enabled } => {
                if let Some(table) = self.tables.get_mut(table_id) {
                    table.enabled = *enabled;
                }
            }
            Edit::SplitRegion {
                table_id,
                parent_id,
                daughters,
            } => {
                for d in daughters {
                    self.next_region_id = self.next_region_id.max(d.id + 1);
                }
                if let Some(table) = self.tables.get_mut(table_id)
                    && let Some(at) = table.regions.iter().position(|r| r.id == *parent_id)
                {
                    table.regions.splice(at..=at, daughters.iter().cloned());
                }
            }
            Edit::NextIds {
                table,
                region,
                family,
                file,
                last_sequence,
            } => {
                self.next_table_id = self.next_table_id.max(*table);
                self.next_region_id = self.next_region_id.max(*region);
                self.next_family_id = self.next_family_id.max(*family);
                self.next_file_id = self.next_file_id.max(*file);
                self.last_sequence = self.last_sequence.max(*last_sequence);
            }
            Edit::Flush {
                table_id,
                region_id,
                flushed_sequence,
                files,
            } => {
                self.last_sequence = self.last_sequence.max(*flushed_sequence);
                for (_, meta) in files {
                    self.note_file(meta);
                }
                if let Some(region) = self.region_mut(*table_id, *region_id) {
                    region.flushed_sequence = region.flushed_sequence.max(*flushed_sequence);
                    for (family_id, meta) in files {
                        region.files.push(StoreFile {
                            family_id: *family_id,
                            level: 0,
                            meta: meta.clone(),
                        });
                    }
                }
            }
            Edit::Compaction {
                table_id,
                region_id,
                family_id,
                removed,
                added,
            } => {
                for (_, meta) in added {
                    self.note_file(meta);
                }
                if let Some(region) = self.region_mut(*table_id, *region_id) {
                    region
                        .files
                        .retain(|f| f.family_id != *family_id || !removed.contains(&f.meta.id));
                    for (level, meta) in added {
                        region.files.push(StoreFile {
                            family_id: *family_id,
                            level: *level,
                            meta: meta.clone(),
                        });
                    }
                }
            }
        }
    }

    fn note_file(&mut self, meta: &FileMeta) {
        self.next_file_id = self.next_file_id.max(meta.id + 1);
        self.last_sequence = self.last_sequence.max(meta.max_sequence);
    }

    fn region_mut(&mut self, table_id: u64, region_id: u64) -> Option<&mut RegionRecord> {
        self.tables
            .get_mut(&table_id)?
            .regions
            .iter_mut()
            .find(|r| r.id == region_id)
    }

    /// Ids of every file the catalog references.
    pub(crate) fn live_files(&self) -> std::collections::HashSet<u64> {
        self.tables
            .values()
            .flat_map(|t| t.regions.iter())
            .flat_map(|r| r.files.iter().map(|f| f.meta.id))
            .collect()
    }

    /// The edits that rebuild this state from nothing.
    fn snapshot(&self) -> Vec<Edit> {
        let mut edits = vec![Edit::NextIds {
            table: self.next_table_id,
            region: self.next_region_id,
            family: self.next_family_id,
            file: self.next_file_id,
            last_sequence: self.last_sequence,
        }];
        edits.extend(self.tables.values().cloned().map(Edit::CreateTable));
        edits
    }
}

fn encode_descriptor(out: &mut Vec<u8>, d: &TableDescriptor) {
    out.put_bytes32(d.name().as_bytes());
    out.put_u32(d.families().len() as u32);
    for family in d.families() {
        let (name, versions, ttl_ms, bloom, block_size, compression, in_memory, block_cache) =
            family.parts();
        out.put_bytes32(name.as_bytes());
        out.put_u32(versions);
        out.put_u8(u8::from(ttl_ms.is_some()));
        out.put_u64(ttl_ms.unwrap_or(0));
        out.put_u8(bloom.code());
        out.put_u32(block_size);
        match compression {
            Compression::None => {
                out.put_u8(0);
                out.put_u32(0);
            }
            Compression::Zstd { level } => {
                out.put_u8(1);
                out.put_u32(level as u32);
            }
        }
        out.put_u8(u8::from(in_memory));
        out.put_u8(u8::from(block_cache));
    }
    match d.get_pre_split() {
        PreSplit::None => out.put_u8(0),
        PreSplit::Keys(keys) => {
            out.put_u8(1);
            out.put_u32(keys.len() as u32);
            for key in keys {
                out.put_bytes32(key);
            }
        }
        PreSplit::HexString { regions } => {
            out.put_u8(2);
            out.put_u32(*regions);
        }
        PreSplit::Uniform { regions } => {
            out.put_u8(3);
            out.put_u32(*regions);
        }
        PreSplit::SaltBuckets { buckets } => {
            out.put_u8(4);
            out.put_u32(*buckets);
        }
    }
    out.put_u64(d.get_max_region_size_bytes());
    out.put_u64(d.get_memstore_flush_size_bytes());
    out.put_u8(d.get_durability().code());
    out.put_u64(d.get_max_value_bytes() as u64);
}

fn decode_descriptor(d: &mut Decoder<'_>) -> Result<TableDescriptor, DecodeError> {
    let name = d.string32()?;
    let family_count = d.u32()?;
    let mut descriptor = TableDescriptor::new(name);
    for _ in 0..family_count {
        let name = d.string32()?;
        let versions = d.u32()?;
        let has_ttl = d.bool()?;
        let ttl = d.u64()?;
        let bloom_code = d.u8()?;
        let bloom = BloomType::from_code(bloom_code)
            .ok_or_else(|| DecodeError(format!("unknown bloom type {bloom_code}")))?;
        let block_size = d.u32()?;
        let compression = match (d.u8()?, d.u32()?) {
            (0, _) => Compression::None,
            (1, level) => Compression::Zstd {
                level: level as i32,
            },
            (other, _) => return Err(DecodeError(format!("unknown compression {other}"))),
        };
        let in_memory = d.bool()?;
        let block_cache = d.bool()?;
        descriptor = descriptor.family(FamilyDescriptor::from_parts(
            name,
            versions,
            has_ttl.then_some(ttl),
            bloom,
            block_size,
            compression,
            in_memory,
            block_cache,
        ));
    }
    let pre_split = match d.u8()? {
        0 => PreSplit::None,
        1 => {
            let n = d.u32()?;
            let mut keys = Vec::new();
            for _ in 0..n {
                keys.push(d.bytes32()?.to_vec());
            }
            PreSplit::Keys(keys)
        }
        2 => PreSplit::HexString { regions: d.u32()? },
        3 => PreSplit::Uniform { regions: d.u32()? },
        4 => PreSplit::SaltBuckets { buckets: d.u32()? },
        other => return Err(DecodeError(format!("unknown pre-split kind {other}"))),
    };
    let max_region = d.u64()?;
    let flush_size = d.u64()?;
    let durability_code = d.u8()?;
    let durability = Durability::from_code(durability_code)
        .ok_or_else(|| DecodeError(format!("unknown durability {durability_code}")))?;
    let max_value =
        usize::try_from(d.u64()?).map_err(|_| DecodeError("max value size too large".into()))?;
    Ok(descriptor
        .pre_split(pre_split)
        .max_region_size_bytes(max_region)
        .memstore_flush_size_bytes(flush_size)
        .durability(durability)
        .max_value_bytes(max_value))
}

fn encode_file_meta(out: &mut Vec<u8>, m: &FileMeta) {
    out.put_u64(m.id);
    out.put_u64(m.size);
    out.put_bytes32(&m.first_row);
    out.put_bytes32(&m.last_row);
    out.put_i64(m.min_timestamp);
    out.put_i64(m.max_timestamp);
    out.put_u64(m.min_sequence);
    out.put_u64(m.max_sequence);
    out.put_u64(m.cells);
    out.put_u64(m.rows);
    out.put_u64(m.markers);
}

fn decode_file_meta(d: &mut Decoder<'_>) -> Result<FileMeta, DecodeError> {
    Ok(FileMeta {
        id: d.u64()?,
        size: d.u64()?,
        first_row: d.bytes32()?.to_vec(),
        last_row: d.bytes32()?.to_vec(),
        min_timestamp: d.i64()?,
        max_timestamp: d.i64()?,
        min_sequence: d.u64()?,
        max_sequence: d.u64()?,
        cells: d.u64()?,
        rows: d.u64()?,
        markers: d.u64()?,
    })
}

fn encode_region(out: &mut Vec<u8>, r: &RegionRecord) {
    out.put_u64(r.id);
    out.put_bytes32(&r.start);
    out.put_bytes32(&r.end);
    out.put_u64(r.flushed_sequence);
    out.put_u32(r.files.len() as u32);
    for f in &r.files {
        out.put_u32(f.family_id);
        out.put_u8(f.level);
        encode_file_meta(out, &f.meta);
    }
}

fn decode_region(d: &mut Decoder<'_>) -> Result<RegionRecord, DecodeError> {
    let id = d.u64()?;
    let start = d.bytes32()?.to_vec();
    let end = d.bytes32()?.to_vec();
    let flushed_sequence = d.u64()?;
    let file_count = d.u32()?;
    let mut files = Vec::new();
    for _ in 0..file_count {
        files.push(StoreFile {
            family_id: d.u32()?,
            level: d.u8()?,
            meta: decode_file_meta(d)?,
        });
    }
    Ok(RegionRecord {
        id,
        start,
        end,
        flushed_sequence,
        files,
    })
}

fn encode_family_ids(out: &mut Vec<u8>, ids: &[u32]) {
    out.put_u32(ids.len() as u32);
    for &id in ids {
        out.put_u32(id);
    }
}

fn decode_family_ids(d: &mut Decoder<'_>) -> Result<Vec<u32>, DecodeError> {
    let n = d.u32()?;
    (0..n).map(|_| d.u32()).collect()
}

/// Encodes an edit as a frame payload.
pub(crate) fn encode_edit(edit: &Edit) -> Vec<u8> {
    let mut out = Vec::new();
    match edit {
        Edit::CreateTable(t) => {
            out.put_u8(EDIT_CREATE_TABLE);
            out.put_u64(t.id);
            encode_descriptor(&mut out, &t.descriptor);
            encode_family_ids(&mut out, &t.family_ids);
            out.put_u32(t.regions.len() as u32);
            for r in &t.regions {
                encode_region(&mut out, r);
            }
            out.put_u8(u8::from(t.enabled));
        }
        Edit::AlterTable {
            table_id,
            descriptor,
            family_ids,
        } => {
            out.put_u8(EDIT_ALTER_TABLE);
            out.put_u64(*table_id);
            encode_descriptor(&mut out, descriptor);
            encode_family_ids(&mut out, family_ids);
        }
        Edit::DropTable { table_id } => {
            out.put_u8(EDIT_DROP_TABLE);
            out.put_u64(*table_id);
        }
        Edit::SetEnabled { table_id, enabled } => {
            out.put_u8(EDIT_SET_ENABLED);
            out.put_u64(*table_id);
            out.put_u8(u8::from(*enabled));
        }
        Edit::SplitRegion {
            table_id,
            parent_id,
            daughters,
        } => {
            out.put_u8(EDIT_SPLIT_REGION);
            out.put_u64(*table_id);
            out.put_u64(*parent_id);
            out.put_u32(daughters.len() as u32);
            for r in daughters {
                encode_region(&mut out, r);
            }
        }
        Edit::NextIds {
            table,
            region,
            family,
            file,
            last_sequence,
        } => {
            out.put_u8(EDIT_NEXT_IDS);
            out.put_u64(*table);
            out.put_u64(*region);
            out.put_u32(*family);
            out.put_u64(*file);
            out.put_u64(*last_sequence);
        }
        Edit::Flush {
            table_id,
            region_id,
            flushed_sequence,
            files,
        } => {
            out.put_u8(EDIT_FLUSH);
            out.put_u64(*table_id);
            out.put_u64(*region_id);
            out.put_u64(*flushed_sequence);
            out.put_u32(files.len() as u32);
            for (family_id, meta) in files {
                out.put_u32(*family_id);
                encode_file_meta(&mut out, meta);
            }
        }
        Edit::Compaction {
            table_id,
            region_id,
            family_id,
            removed,
            added,
        } => {
            out.put_u8(EDIT_COMPACTION);
            out.put_u64(*table_id);
            out.put_u64(*region_id);
            out.put_u32(*family_id);
            out.put_u32(removed.len() as u32);
            for id in removed {
                out.put_u64(*id);
            }
            out.put_u32(added.len() as u32);
            for (level, meta) in added {
                out.put_u8(*level);
                encode_file_meta(&mut out, meta);
            }
        }
    }
    out
}

/// Decodes a frame payload into an edit.
pub(crate) fn decode_edit(payload: &[u8]) -> Result<Edit, DecodeError> {
    let mut d = Decoder::new(payload);
    let edit = match d.u8()? {
        EDIT_CREATE_TABLE => {
            let id = d.u64()?;
            let descriptor = decode_descriptor(&mut d)?;
            let family_ids = decode_family_ids(&mut d)?;
            let n = d.u32()?;
            let mut regions = Vec::new();
            for _ in 0..n {
                regions.push(decode_region(&mut d)?);
            }
            let enabled = d.bool()?;
            Edit::CreateTable(TableRecord {
                id,
                descriptor,
                family_ids,
                regions,
                enabled,
            })
        }
        EDIT_ALTER_TABLE => Edit::AlterTable {
            table_id: d.u64()?,
            descriptor: decode_descriptor(&mut d)?,
            family_ids: decode_family_ids(&mut d)?,
        },
        EDIT_DROP_TABLE => Edit::DropTable { table_id: d.u64()? },
        EDIT_SPLIT_REGION => {
            let table_id = d.u64()?;
            let parent_id = d.u64()?;
            let n = d.u32()?;
            let mut daughters = Vec::new();
            for _ in 0..n {
                daughters.push(decode_region(&mut d)?);
            }
            Edit::SplitRegion {
                table_id,
                parent_id,
                daughters,
            }
        }
        EDIT_SET_ENABLED => Edit::SetEnabled {
            table_id: d.u64()?,
            enabled: d.bool()?,
        },
        EDIT_NEXT_IDS => Edit::NextIds {
            table: d.u64()?,
            region: d.u64()?,
            family: d.u32()?,
            file: d.u64()?,
            last_sequence: d.u64()?,
        },
        EDIT_FLUSH => {
            let table_id = d.u64()?;
            let region_id = d.u64()?;
            let flushed_sequence = d.u64()?;
            let n = d.u32()?;
            let mut files = Vec::new();
            for _ in 0..n {
                files.push((d.u32()?, decode_file_meta(&mut d)?));
            }
            Edit::Flush {
                table_id,
                region_id,
                flushed_sequence,
                files,
            }
        }
        EDIT_COMPACTION => {
            let table_id = d.u64()?;
            let region_id = d.u64()?;
            let family_id = d.u32()?;
            let n = d.u32()?;
            let mut removed = Vec::new();
            for _ in 0..n {
                removed.push(d.u64()?);
            }
            let n = d.u32()?;
            let mut added = Vec::new();
            for _ in 0..n {
                added.push((d.u8()?, decode_file_meta(&mut d)?));
            }
            Edit::Compaction {
                table_id,
                region_id,
                family_id,
                removed,
                added,
            }
        }
        other => return Err(DecodeError(format!("unknown manifest edit {other}"))),
    };
    if !d.is_empty() {
        return Err(DecodeError("trailing bytes after a manifest edit".into()));
    }
    Ok(edit)
}

fn manifest_name(id: u64) -> String {
    format!("MANIFEST-{id:06}")
}

fn parse_manifest_name(name: &str) -> Option<u64> {
    name.strip_prefix("MANIFEST-")?.parse().ok()
}

/// The live manifest file and the state it describes.
pub(crate) struct Manifest {
    dir: PathBuf,
    io: Io,
    file: IoFile,
    id: u64,
    /// Bytes in the live manifest file.
    size: u64,
    state: ManifestState,
}

impl Manifest {
    /// Opens the database's manifest (or starts one in an empty directory)
    /// and rewrites it as a snapshot.
    pub(crate) fn open(dir: &Path, io: Io) -> Result<Manifest> {
        let current_path = dir.join(CURRENT);
        let (state, old_id) = match std::fs::read_to_string(&current_path) {
            Ok(text) => {
                let name = text.trim_end_matches('\n');
                let id = parse_manifest_name(name).ok_or_else(|| {
                    Error::corruption(
                        &current_path,
                        0,
                        format!("CURRENT names '{name}', not a manifest"),
                    )
                })?;
                (read_manifest(io, &dir.join(name))?, Some(id))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (ManifestState::default(), None),
            Err(e) => return Err(Error::io(format!("reading {}", current_path.display()), e)),
        };
        Manifest::write_snapshot(dir, io, old_id.map_or(1, |id| id + 1), state)
    }

    /// The catalog as of the last edit.
    pub(crate) fn state(&self) -> &ManifestState {
        &self.state
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
            std::fs::remove_file(&path)
                .map_err(|e| Error::io(format!("removing {}", path.display()), e))?;
        }
        let file = io.create_new(&path)?;
        let mut bytes = file_header(MANIFEST_MAGIC, id).to_vec();
        for edit in state.snapshot() {
            append_frame(&mut bytes, &encode_edit(&edit));
        }
        file.append(&bytes)
            .and_then(|_| file.sync(SyncKind::All))
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
        let tmp = dir.join("CURRENT.tmp");
        std::fs::write(&tmp, format!("{}\n", manifest_name(id)))
            .and_then(|()| std::fs::File::open(&tmp)?.sync_all())
            .map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
        std::fs::rename(&tmp, dir.join(CURRENT))
            .map_err(|e| Error::io(format!("installing {}", dir.join(CURRENT).display()), e))?;
        sync_dir(dir)?;
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                if let Some(other) = name.to_str().and_then(parse_manifest_name)
                    && other != id
                {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        Ok(Manifest {
            dir: dir.to_path_buf(),
            io,
            file,
            id,
            size: bytes.len() as u64,
            state,
        })
    }

    /// Appends an edit, makes it durable, and applies it to the state.
    pub(crate) fn record(&mut self, edit: &Edit) -> Result<()> {
        let mut frame = Vec::new();
        append_frame(&mut frame, &encode_edit(edit));
        self.file
            .append(&frame)
            .and_then(|_| self.file.sync(SyncKind::Data))
            .map_err(|e| {
                Error::io(
                    format!(
                        "appending to {}",
                        self.dir.join(manifest_name(self.id)).display()
                    ),
                    e,
                )
            })?;
        self.size += frame.len() as u64;
        self.state.apply(edit);
        if self.size > MAX_MANIFEST_BYTES {
            let state = std::mem::take(&mut self.state);
            *self = Manifest::write_snapshot(&self.dir, self.io, self.id + 1, state)?;
        }
        Ok(())
    }
}

/// Reads a manifest file into a state; a torn last edit is ignored (it was
/// never acknowledged), damage before the end is corruption.
fn read_manifest(io: Io, path: &Path) -> Result<ManifestState> {
    let bytes = crate::wal::replay::read_segment(io, path)?;
    parse_file_header(&bytes, MANIFEST_MAGIC)
        .map_err(|e| Error::corruption(path, 0, e.to_string()))?;
    let scan = scan_segment(&bytes);
    if let SegmentEnd::Corrupt { offset } = scan.end {
        return Err(Error::corruption(
            path,
            offset,
            "damaged manifest edit followed by valid edits",
        ));
    }
    let mut state = ManifestState::default();
    for (offset, frame_bytes) in scan.frames {
        let start = offset as usize + crate::wal::format::FRAME_HEADER_BYTES;
        let payload = bytes
            .get(start..offset as usize + frame_bytes)
            .unwrap_or_default();
        let edit =
            decode_edit(payload).map_err(|e| Error::corruption(path, offset, e.to_string()))?;
        state.apply(&edit);
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Backend;
    use std::time::Duration;

    fn file_meta(id: u64) -> FileMeta {
        FileMeta {
            id,
            size: 4096,
            first_row: b"a".to_vec(),
            last_row: b"q".to_vec(),
            min_timestamp: 1,
            max_timestamp: 9,
            min_sequence: 3,
            max_sequence: 30,
            cells: 100,
            rows: 10,
            markers: 2,
        }
    }

    fn table(id: u64) -> TableRecord {
        TableRecord {
            id,
            descriptor: TableDescriptor::new(format!("t{id}"))
                .family(
                    FamilyDescriptor::new("a")
                        .max_versions(3)
                        .ttl(Duration::from_secs(60)),
                )
                .family(
                    FamilyDescriptor::new("b")
                        .bloom(BloomType::RowCol)
                        .compression(Compression::Zstd { level: 3 })
                        .block_cache(false),
                )
                .pre_split(PreSplit::Keys(vec![b"m".to_vec()]))
                .durability(Durability::AsyncWal),
            family_ids: vec![id as u32 * 10, id as u32 * 10 + 1],
            enabled: id % 2 == 1,
            regions: vec![
                RegionRecord {
                    id: id * 100,
                    start: Vec::new(),
                    end: b"m".to_vec(),
                    flushed_sequence: 0,
                    files: Vec::new(),
                },
                RegionRecord {
                    id: id * 100 + 1,
                    start: b"m".to_vec(),
                    end: Vec::new(),
                    flushed_sequence: 40,
                    files: vec![StoreFile {
                        family_id: id as u32 * 10,
                        level: 2,
                        meta: file_meta(id * 1000),
                    }],
                },
            ],
        }
    }

    #[test]
    fn edits_round_trip() {
        for edit in [
            Edit::CreateTable(table(1)),
            Edit::AlterTable {
                table_id: 1,
                descriptor: table(2).descriptor,
                family_ids: vec![5],
            },
            Edit::DropTable { table_id: 9 },
            Edit::SetEnabled {
                table_id: 9,
                enabled: false,
            },
            Edit::SplitRegion {
                table_id: 1,
                parent_id: 100,
                daughters: table(3).regions,
            },
            Edit::NextIds {
                table: 3,
                region: 4,
                family: 5,
                file: 6,
                last_sequence: 7,
            },
            Edit::Flush {
                table_id: 1,
                region_id: 100,
                flushed_sequence: 9,
                files: vec![(10, file_meta(77))],
            },
            Edit::Compaction {
                table_id: 1,
                region_id: 100,
                family_id: 10,
                removed: vec![77, 78],
                added: vec![(1, file_meta(79)), (1, file_meta(80))],
            },
        ] {
            let bytes = encode_edit(&edit);
            assert_eq!(decode_edit(&bytes).unwrap(), edit);
            for cut in 0..bytes.len() {
                assert!(decode_edit(&bytes[..cut]).is_err());
            }
        }
    }

    #[test]
    fn state_survives_reopen_and_ids_are_never_reused() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        {
            let mut m = Manifest::open(dir.path(), io).unwrap();
            assert!(m.state().tables.is_empty());
            m.record(&Edit::CreateTable(table(1))).unwrap();
            m.record(&Edit::CreateTable(table(2))).unwrap();
            m.record(&Edit::DropTable { table_id: 2 }).unwrap();
        }
        let m = Manifest::open(dir.path(), io).unwrap();
        let state = m.state().clone();
        assert_eq!(state.tables.len(), 1);
        assert_eq!(state.tables[&1], table(1));
        assert_eq!(state.next_table_id, 3);
        assert_eq!(state.next_region_id, 202);
        assert_eq!(state.next_family_id, 22);
        assert_eq!(
            state.next_file_id, 2001,
            "file ids stay above every file seen, dropped ones too"
        );
        assert_eq!(state.last_sequence, 40);
        // After the snapshot rewrite the dropped table's ids stay reserved.
        drop(m);
        let m = Manifest::open(dir.path(), io).unwrap();
        assert_eq!(m.state().next_region_id, 202);
        drop(m);
        let manifests: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("MANIFEST-"))
            .collect();
        assert_eq!(manifests, ["MANIFEST-000003"]);
    }

    #[test]
    fn a_torn_last_edit_is_ignored_and_damage_before_it_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        {
            let mut m = Manifest::open(dir.path(), io).unwrap();
            m.record(&Edit::CreateTable(table(1))).unwrap();
            m.record(&Edit::CreateTable(table(2))).unwrap();
        }
        let path = dir.path().join("MANIFEST-000001");
        let mut bytes = std::fs::read(&path).unwrap();
        let len = bytes.len();
        std::fs::write(&path, &bytes[..len - 3]).unwrap();
        let state = read_manifest(io, &path).unwrap();
        assert_eq!(state.tables.len(), 1, "the torn CreateTable(2) is dropped");
        bytes[40] ^= 0xFF; // inside the first edit (NextIds of the snapshot)
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(
            read_manifest(io, &path),
            Err(Error::Corruption { .. })
        ));
    }
}
