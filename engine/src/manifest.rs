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
//! `NextIds` edit, one `CreateNamespace` per user namespace and one
//! `CreateTable` per table, with every region's files and flushed
//! sequence), switches `CURRENT` to it and deletes the old one;
//! so does an append that finds the manifest larger than
//! [`MAX_MANIFEST_BYTES`]. Manifests therefore stay small. A crash before the
//! rename leaves the old manifest live; a crash after it leaves an unused
//! old file that the next open deletes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::codec::{DecodeError, Decoder, Encode};
use crate::error::{Error, Result};
use crate::file_meta::FileMeta;
use crate::io::{Io, IoFile, SyncKind};
use crate::names::{
    CURRENT_FILE, DATA_DIR, HFILE_SUFFIX, SEGMENT_SUFFIX, WAL_DIR, manifest_name,
    parse_manifest_name,
};
use crate::options::{
    BloomType, Compression, Durability, FamilyDescriptor, PreSplit, TableDescriptor,
};
use crate::wal::format::{
    LEGACY_VERSION, SEGMENT_HEADER_BYTES, append_frame, file_header, parse_file_header,
};
use crate::wal::replay::{Tail, payload_at, scan_frames};

/// Magic of manifest files.
const MANIFEST_MAGIC: &[u8; 8] = b"STRATAMF";

const EDIT_CREATE_TABLE: u8 = 1;
const EDIT_ALTER_TABLE: u8 = 2;
const EDIT_DROP_TABLE: u8 = 3;
const EDIT_NEXT_IDS: u8 = 4;
const EDIT_FLUSH: u8 = 5;
const EDIT_COMPACTION: u8 = 6;
const EDIT_SET_ENABLED: u8 = 7;
const EDIT_SPLIT_REGION: u8 = 8;
const EDIT_CREATE_NAMESPACE: u8 = 9;
const EDIT_DROP_NAMESPACE: u8 = 10;
const EDIT_BULK_LOAD: u8 = 11;
const EDIT_MERGE_REGIONS: u8 = 12;
const EDIT_BULK_LOAD_HISTORY: u8 = 13;

/// Most (table, bulk writer) pairs whose loaded files the catalog
/// remembers, to refuse loading a file twice; the oldest are forgotten
/// first. A writer usually makes one load's files, so this is about the
/// last 4096 loads; at ~30 bytes each the snapshot grows by at most ~120 KiB.
pub(crate) const MAX_REMEMBERED_BULK_WRITERS: usize = 4096;

/// Longest run of file numbers one history entry may hold when read back
/// (a bound on what a damaged but checksummed length can make us allocate).
const MAX_HISTORY_RUN: u32 = 1 << 20;

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

/// A file a bulk load installed into one store of one region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoadedFile {
    pub(crate) region_id: u64,
    pub(crate) family_id: u32,
    pub(crate) level: u8,
    /// Its sequences are the load's (`min_sequence == max_sequence`).
    pub(crate) meta: FileMeta,
}

/// The identity of a bulk-written file (its writer and its number there),
/// as its meta block records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct BulkSource {
    pub(crate) writer_id: u128,
    pub(crate) file_number: u32,
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
    /// A namespace was created (never `default` or `hbase`, which always exist).
    CreateNamespace {
        name: String,
    },
    /// An empty namespace was dropped.
    DropNamespace {
        name: String,
    },
    /// A bulk load installed `files` into stores of one table's regions,
    /// all at once; `sources` are the bulk-written files they came from.
    BulkLoad {
        table_id: u64,
        /// The sequence every loaded cell reads with (0: a back-fill).
        sequence: u64,
        files: Vec<LoadedFile>,
        sources: Vec<BulkSource>,
    },
    /// Two adjacent regions were replaced by one holding the files of both.
    MergeRegions {
        table_id: u64,
        /// The lower region (its start is the merged region's).
        first_id: u64,
        /// The upper region (its end is the merged region's).
        second_id: u64,
        merged: RegionRecord,
    },
    /// Snapshot only: the bulk-written files loaded into each table, oldest
    /// writer first (see [`MAX_REMEMBERED_BULK_WRITERS`]).
    BulkLoadHistory {
        entries: Vec<(u64, u128, Vec<u32>)>,
    },
}

/// The catalog the manifest describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ManifestState {
    pub(crate) tables: BTreeMap<u64, TableRecord>,
    /// Namespaces created by users; `default` and `hbase` always exist and are not listed.
    /// A table named `ns:t` always has its namespace here (a manifest written before
    /// namespaces existed gets the namespaces of its tables).
    pub(crate) namespaces: BTreeSet<String>,
    pub(crate) next_table_id: u64,
    pub(crate) next_region_id: u64,
    pub(crate) next_family_id: u32,
    pub(crate) next_file_id: u64,
    /// The highest sequence any flushed file ever held.
    pub(crate) last_sequence: u64,
    /// Per (table id, bulk writer id): the numbers of that writer's files
    /// loaded into the table. Bounded by [`MAX_REMEMBERED_BULK_WRITERS`].
    pub(crate) bulk_loaded: BTreeMap<(u64, u128), BTreeSet<u32>>,
    /// The keys of `bulk_loaded`, oldest first (the next to forget).
    pub(crate) bulk_loaded_order: std::collections::VecDeque<(u64, u128)>,
}

impl Default for ManifestState {
    fn default() -> Self {
        ManifestState {
            tables: BTreeMap::new(),
            namespaces: BTreeSet::new(),
            next_table_id: 1,
            next_region_id: 1,
            next_family_id: 1,
            next_file_id: 1,
            last_sequence: 0,
            bulk_loaded: BTreeMap::new(),
            bulk_loaded_order: std::collections::VecDeque::new(),
        }
    }
}

impl ManifestState {
    /// Applies an edit, keeping the id high-water marks above every id seen.
    pub(crate) fn apply(&mut self, edit: &Edit) {
        match edit {
            Edit::CreateTable(table) => {
                // Decoding keeps ids far below their type's maximum; the
                // saturating adds only keep a state built otherwise from
                // panicking.
                self.next_table_id = self.next_table_id.max(table.id.saturating_add(1));
                for region in &table.regions {
                    self.next_region_id = self.next_region_id.max(region.id.saturating_add(1));
                    self.last_sequence = self.last_sequence.max(region.flushed_sequence);
                    for file in &region.files {
                        self.note_file(&file.meta);
                    }
                }
                for &family in &table.family_ids {
                    self.next_family_id = self.next_family_id.max(family.saturating_add(1));
                }
                if let Some(namespace) = user_namespace_of(table.descriptor.name()) {
                    self.namespaces.insert(namespace.to_owned());
                }
                self.tables.insert(table.id, table.clone());
            }
            Edit::CreateNamespace { name } => {
                self.namespaces.insert(name.clone());
            }
            Edit::DropNamespace { name } => {
                self.namespaces.remove(name);
            }
            Edit::AlterTable {
                table_id,
                descriptor,
                family_ids,
            } => {
                for &family in family_ids {
                    self.next_family_id = self.next_family_id.max(family.saturating_add(1));
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
                self.bulk_loaded.retain(|(table, _), _| table != table_id);
                self.bulk_loaded_order
                    .retain(|(table, _)| table != table_id);
            }
            Edit::BulkLoad {
                table_id,
                sequence,
                files,
                sources,
            } => {
                self.last_sequence = self.last_sequence.max(*sequence);
                for file in files {
                    self.note_file(&file.meta);
                    if let Some(region) = self.region_mut(*table_id, file.region_id) {
                        region.files.push(StoreFile {
                            family_id: file.family_id,
                            level: file.level,
                            meta: file.meta.clone(),
                        });
                    }
                }
                for source in sources {
                    self.remember_bulk_file(*table_id, source.writer_id, source.file_number);
                }
            }
            Edit::MergeRegions {
                table_id,
                first_id,
                second_id,
                merged,
            } => {
                self.next_region_id = self.next_region_id.max(merged.id + 1);
                if let Some(table) = self.tables.get_mut(table_id)
                    && let Some(at) = table.regions.iter().position(|r| r.id == *first_id)
                    && table
                        .regions
                        .get(at + 1)
                        .is_some_and(|r| r.id == *second_id)
                {
                    table.regions.splice(at..=at + 1, [merged.clone()]);
                }
            }
            Edit::BulkLoadHistory { entries } => {
                for (table, writer, numbers) in entries {
                    for &number in numbers {
                        self.remember_bulk_file(*table, *writer, number);
                    }
                }
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
                    self.next_region_id = self.next_region_id.max(d.id.saturating_add(1));
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

    /// Remembers that file `number` of bulk writer `writer` was loaded
    /// into table `table`, forgetting the oldest writer past the bound.
    fn remember_bulk_file(&mut self, table: u64, writer: u128, number: u32) {
        let key = (table, writer);
        let numbers = self.bulk_loaded.entry(key).or_insert_with(|| {
            self.bulk_loaded_order.push_back(key);
            BTreeSet::new()
        });
        numbers.insert(number);
        while self.bulk_loaded_order.len() > MAX_REMEMBERED_BULK_WRITERS {
            if let Some(oldest) = self.bulk_loaded_order.pop_front() {
                self.bulk_loaded.remove(&oldest);
            }
        }
    }

    /// True when file `number` of bulk writer `writer` was loaded into
    /// table `table` (as far as the bounded history remembers).
    pub(crate) fn bulk_file_loaded(&self, table: u64, writer: u128, number: u32) -> bool {
        self.bulk_loaded
            .get(&(table, writer))
            .is_some_and(|numbers| numbers.contains(&number))
    }

    fn note_file(&mut self, meta: &FileMeta) {
        self.next_file_id = self.next_file_id.max(meta.id.saturating_add(1));
        self.last_sequence = self.last_sequence.max(meta.max_sequence);
    }

    fn region_mut(&mut self, table_id: u64, region_id: u64) -> Option<&mut RegionRecord> {
        self.tables
            .get_mut(&table_id)?
            .regions
            .iter_mut()
            .find(|r| r.id == region_id)
    }

    /// The error a WAL record of `region_id` (in `file` at `offset`) is when
    /// the catalog never recorded that region: ids are handed out from a
    /// high-water mark that only grows and every known region's id is below
    /// it, so an id at or above it names a region whose creating edit the
    /// manifest lost. `None` for a known region or one dropped or split away.
    pub(crate) fn lost_region(&self, region_id: u64, file: &Path, offset: u64) -> Option<Error> {
        (region_id >= self.next_region_id).then(|| {
            Error::corruption(
                file,
                offset,
                format!(
                    "record of region {region_id}, which the manifest never recorded: \
                     the manifest lost the edit that created it"
                ),
            )
        })
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
        edits.extend(
            self.namespaces
                .iter()
                .map(|name| Edit::CreateNamespace { name: name.clone() }),
        );
        edits.extend(self.tables.values().cloned().map(Edit::CreateTable));
        if !self.bulk_loaded_order.is_empty() {
            edits.push(Edit::BulkLoadHistory {
                entries: self
                    .bulk_loaded_order
                    .iter()
                    .filter_map(|key| {
                        let numbers = self.bulk_loaded.get(key)?;
                        Some((key.0, key.1, numbers.iter().copied().collect()))
                    })
                    .collect(),
            });
        }
        edits
    }
}

/// The namespace of a table name `ns:t` when it is a user namespace (not `default` or
/// `hbase`, which always exist).
fn user_namespace_of(table: &str) -> Option<&str> {
    let (namespace, _) = table.split_once(':')?;
    (!crate::options::is_builtin_namespace(namespace)).then_some(namespace)
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
        id: d.id64("file id")?,
        size: d.u64()?,
        first_row: d.bytes32()?.to_vec(),
        last_row: d.bytes32()?.to_vec(),
        min_timestamp: d.i64()?,
        max_timestamp: d.i64()?,
        min_sequence: d.id64("sequence")?,
        max_sequence: d.id64("sequence")?,
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
    let id = d.id64("region id")?;
    let start = d.bytes32()?.to_vec();
    let end = d.bytes32()?.to_vec();
    let flushed_sequence = d.id64("flushed sequence")?;
    let file_count = d.u32()?;
    let mut files = Vec::new();
    for _ in 0..file_count {
        files.push(StoreFile {
            family_id: d.id32("family id")?,
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
    (0..n).map(|_| d.id32("family id")).collect()
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
        Edit::CreateNamespace { name } => {
            out.put_u8(EDIT_CREATE_NAMESPACE);
            out.put_bytes32(name.as_bytes());
        }
        Edit::DropNamespace { name } => {
            out.put_u8(EDIT_DROP_NAMESPACE);
            out.put_bytes32(name.as_bytes());
        }
        Edit::BulkLoad {
            table_id,
            sequence,
            files,
            sources,
        } => {
            out.put_u8(EDIT_BULK_LOAD);
            out.put_u64(*table_id);
            out.put_u64(*sequence);
            out.put_u32(files.len() as u32);
            for file in files {
                out.put_u64(file.region_id);
                out.put_u32(file.family_id);
                out.put_u8(file.level);
                encode_file_meta(&mut out, &file.meta);
            }
            out.put_u32(sources.len() as u32);
            for source in sources {
                out.extend_from_slice(&source.writer_id.to_le_bytes());
                out.put_u32(source.file_number);
            }
        }
        Edit::MergeRegions {
            table_id,
            first_id,
            second_id,
            merged,
        } => {
            out.put_u8(EDIT_MERGE_REGIONS);
            out.put_u64(*table_id);
            out.put_u64(*first_id);
            out.put_u64(*second_id);
            encode_region(&mut out, merged);
        }
        Edit::BulkLoadHistory { entries } => {
            out.put_u8(EDIT_BULK_LOAD_HISTORY);
            out.put_u32(entries.len() as u32);
            for (table, writer, numbers) in entries {
                out.put_u64(*table);
                out.extend_from_slice(&writer.to_le_bytes());
                let ranges = number_ranges(numbers);
                out.put_u32(ranges.len() as u32);
                for (first, last) in ranges {
                    out.put_u32(first);
                    out.put_u32(last);
                }
            }
        }
    }
    out
}

/// `numbers` (ascending) as inclusive runs of consecutive numbers.
fn number_ranges(numbers: &[u32]) -> Vec<(u32, u32)> {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &n in numbers {
        match ranges.last_mut() {
            Some((_, last)) if last.checked_add(1) == Some(n) => *last = n,
            _ => ranges.push((n, n)),
        }
    }
    ranges
}

fn decode_u128(d: &mut Decoder<'_>) -> Result<u128, DecodeError> {
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(d.take(16)?);
    Ok(u128::from_le_bytes(bytes))
}

/// Decodes a frame payload into an edit.
pub(crate) fn decode_edit(payload: &[u8]) -> Result<Edit, DecodeError> {
    let mut d = Decoder::new(payload);
    let edit = match d.u8()? {
        EDIT_CREATE_TABLE => {
            let id = d.id64("table id")?;
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
            let parent_id = d.id64("region id")?;
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
            table: d.next_id64("next table id")?,
            region: d.next_id64("next region id")?,
            family: d.next_id32("next family id")?,
            file: d.next_id64("next file id")?,
            last_sequence: d.id64("last sequence")?,
        },
        EDIT_FLUSH => {
            let table_id = d.u64()?;
            let region_id = d.u64()?;
            let flushed_sequence = d.id64("flushed sequence")?;
            let n = d.u32()?;
            let mut files = Vec::new();
            for _ in 0..n {
                files.push((d.id32("family id")?, decode_file_meta(&mut d)?));
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
        EDIT_CREATE_NAMESPACE => Edit::CreateNamespace {
            name: d.string32()?,
        },
        EDIT_DROP_NAMESPACE => Edit::DropNamespace {
            name: d.string32()?,
        },
        EDIT_BULK_LOAD => {
            let table_id = d.u64()?;
            let sequence = d.u64()?;
            let n = d.u32()?;
            let mut files = Vec::new();
            for _ in 0..n {
                files.push(LoadedFile {
                    region_id: d.u64()?,
                    family_id: d.u32()?,
                    level: d.u8()?,
                    meta: decode_file_meta(&mut d)?,
                });
            }
            let n = d.u32()?;
            let mut sources = Vec::new();
            for _ in 0..n {
                sources.push(BulkSource {
                    writer_id: decode_u128(&mut d)?,
                    file_number: d.u32()?,
                });
            }
            Edit::BulkLoad {
                table_id,
                sequence,
                files,
                sources,
            }
        }
        EDIT_MERGE_REGIONS => Edit::MergeRegions {
            table_id: d.u64()?,
            first_id: d.u64()?,
            second_id: d.u64()?,
            merged: decode_region(&mut d)?,
        },
        EDIT_BULK_LOAD_HISTORY => {
            let n = d.u32()?;
            let mut entries = Vec::new();
            for _ in 0..n {
                let table = d.u64()?;
                let writer = decode_u128(&mut d)?;
                let runs = d.u32()?;
                let mut numbers = Vec::new();
                for _ in 0..runs {
                    let (first, last) = (d.u32()?, d.u32()?);
                    if first > last || last - first >= MAX_HISTORY_RUN {
                        return Err(DecodeError(format!(
                            "bulk load history run {first}..={last}"
                        )));
                    }
                    numbers.extend(first..=last);
                }
                entries.push((table, writer, numbers));
            }
            Edit::BulkLoadHistory { entries }
        }
        other => return Err(DecodeError(format!("unknown manifest edit {other}"))),
    };
    if !d.is_empty() {
        return Err(DecodeError("trailing bytes after a manifest edit".into()));
    }
    Ok(edit)
}

/// Offset of the first commit slot (right after the file header).
const COMMIT_SLOTS_OFFSET: u64 = SEGMENT_HEADER_BYTES as u64;
/// Bytes of one commit slot: generation u64, committed end u64, reserved
/// u64, xxh3-64 of the first 24 bytes.
const COMMIT_SLOT_BYTES: u64 = 32;
/// Offset of the first edit of a version-2 manifest.
const FIRST_EDIT_OFFSET: u64 = COMMIT_SLOTS_OFFSET + 2 * COMMIT_SLOT_BYTES;

/// One of the two commit slots of a version-2 manifest: every edit before
/// `committed_end` was synced before anything acted on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CommitSlot {
    /// Grows by one with every commit; the slot with the higher one is current.
    generation: u64,
    /// Offset just after the last committed edit.
    committed_end: u64,
}

impl CommitSlot {
    fn encode(self) -> [u8; COMMIT_SLOT_BYTES as usize] {
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

    fn decode(bytes: &[u8]) -> Option<CommitSlot> {
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
    fn offset(self) -> u64 {
        COMMIT_SLOTS_OFFSET + (self.generation % 2) * COMMIT_SLOT_BYTES
    }
}

/// What reading the manifest found besides the state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ManifestRead {
    /// The live manifest file.
    pub(crate) path: PathBuf,
    /// An edit appended after the last commit that did not read back whole:
    /// its append was cut short by a crash, and nothing acted on it.
    pub(crate) torn_tail: Option<u64>,
}

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

/// The bytes of a new manifest numbered `id` holding `state`: the header,
/// the commit slots (the first commit covering everything), the snapshot's
/// edits.
fn snapshot_bytes(id: u64, state: &ManifestState) -> (Vec<u8>, CommitSlot) {
    let mut bytes = file_header(MANIFEST_MAGIC, id).to_vec();
    bytes.resize(FIRST_EDIT_OFFSET as usize, 0);
    for edit in state.snapshot() {
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

/// Reads a manifest file into a state, changing nothing.
///
/// Version 2: every edit before the current commit slot's end was synced
/// before anything acted on it, so any damage there, or a file shorter than
/// that end, is corruption naming the offset. After the end at most one
/// edit can follow (an append whose commit a crash cut short): it is
/// applied if it reads back whole, and ignored if torn (reported). A
/// damaged slot is passed over for the other one, which is one edit older.
/// Version 1 (no slots): a torn last edit is ignored, damage before the end
/// is corruption.
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
        state.apply(&edit);
    }
    Ok((state, read))
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
            Edit::CreateNamespace {
                name: "ns1".to_owned(),
            },
            Edit::DropNamespace {
                name: "ns_2".to_owned(),
            },
            Edit::BulkLoad {
                table_id: 1,
                sequence: 77,
                files: vec![LoadedFile {
                    region_id: 100,
                    family_id: 10,
                    level: 6,
                    meta: file_meta(81),
                }],
                sources: vec![BulkSource {
                    writer_id: u128::MAX - 5,
                    file_number: 3,
                }],
            },
            Edit::MergeRegions {
                table_id: 1,
                first_id: 100,
                second_id: 101,
                merged: table(4).regions[1].clone(),
            },
            Edit::BulkLoadHistory {
                entries: vec![(1, 7, vec![0, 1, 2, 5]), (2, u128::MAX, vec![9])],
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
            let mut m = Manifest::open(dir.path(), io.clone()).unwrap();
            assert!(m.state().tables.is_empty());
            m.record(&Edit::CreateTable(table(1))).unwrap();
            m.record(&Edit::CreateTable(table(2))).unwrap();
            m.record(&Edit::DropTable { table_id: 2 }).unwrap();
        }
        let m = Manifest::open(dir.path(), io.clone()).unwrap();
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
        let m = Manifest::open(dir.path(), io.clone()).unwrap();
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
    fn bulk_loads_merges_and_their_history_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        let mut loaded = file_meta(500);
        loaded.min_sequence = 90;
        loaded.max_sequence = 90;
        {
            let mut m = Manifest::open(dir.path(), io.clone()).unwrap();
            m.record(&Edit::CreateTable(table(1))).unwrap();
            m.record(&Edit::BulkLoad {
                table_id: 1,
                sequence: 90,
                files: vec![LoadedFile {
                    region_id: 100,
                    family_id: 10,
                    level: 6,
                    meta: loaded.clone(),
                }],
                sources: (0..3)
                    .map(|n| BulkSource {
                        writer_id: 42,
                        file_number: n,
                    })
                    .collect(),
            })
            .unwrap();
            let mut merged = table(1).regions[0].clone();
            merged.id = 300;
            merged.end = Vec::new();
            merged.files = vec![StoreFile {
                family_id: 10,
                level: 6,
                meta: loaded.clone(),
            }];
            m.record(&Edit::MergeRegions {
                table_id: 1,
                first_id: 100,
                second_id: 101,
                merged,
            })
            .unwrap();
        }
        for _ in 0..2 {
            let m = Manifest::open(dir.path(), io.clone()).unwrap();
            let state = m.state();
            let regions = &state.tables[&1].regions;
            assert_eq!(regions.len(), 1, "merged");
            assert_eq!((regions[0].id, regions[0].end.is_empty()), (300, true));
            assert_eq!(regions[0].files[0].meta, loaded);
            assert_eq!(state.last_sequence, 90);
            assert_eq!(state.next_region_id, 301);
            assert!(state.bulk_file_loaded(1, 42, 2));
            assert!(!state.bulk_file_loaded(1, 42, 3));
            assert!(!state.bulk_file_loaded(2, 42, 0), "per table");
        }
        let mut m = Manifest::open(dir.path(), io).unwrap();
        m.record(&Edit::DropTable { table_id: 1 }).unwrap();
        assert!(
            !m.state().bulk_file_loaded(1, 42, 0),
            "forgotten with its table"
        );
    }

    #[test]
    fn the_bulk_load_history_is_bounded() {
        let mut state = ManifestState::default();
        for writer in 0..(MAX_REMEMBERED_BULK_WRITERS as u128 + 10) {
            state.apply(&Edit::BulkLoad {
                table_id: 1,
                sequence: 0,
                files: Vec::new(),
                sources: vec![BulkSource {
                    writer_id: writer,
                    file_number: 0,
                }],
            });
        }
        assert_eq!(state.bulk_loaded.len(), MAX_REMEMBERED_BULK_WRITERS);
        assert!(!state.bulk_file_loaded(1, 9, 0), "the oldest are forgotten");
        assert!(state.bulk_file_loaded(1, 10, 0));
    }

    #[test]
    fn namespaces_survive_reopen_and_tables_bring_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        {
            let mut m = Manifest::open(dir.path(), io.clone()).unwrap();
            m.record(&Edit::CreateNamespace {
                name: "ns1".to_owned(),
            })
            .unwrap();
            m.record(&Edit::CreateNamespace {
                name: "gone".to_owned(),
            })
            .unwrap();
            m.record(&Edit::DropNamespace {
                name: "gone".to_owned(),
            })
            .unwrap();
            // A table recorded without its namespace edit (as a manifest written before
            // namespaces existed holds it) brings its namespace along.
            let mut old = table(1);
            old.descriptor =
                TableDescriptor::new("legacy:t").family(crate::options::FamilyDescriptor::new("f"));
            m.record(&Edit::CreateTable(old)).unwrap();
        }
        // Twice: the snapshot written at the first reopen must keep them too.
        for _ in 0..2 {
            let m = Manifest::open(dir.path(), io.clone()).unwrap();
            let names: Vec<&str> = m.state().namespaces.iter().map(String::as_str).collect();
            assert_eq!(names, ["legacy", "ns1"]);
        }
    }

    /// A manifest with two committed CreateTable edits after its snapshot.
    fn two_tables(dir: &Path, io: Io) -> PathBuf {
        let mut m = Manifest::open(dir, io.clone()).unwrap();
        m.record(&Edit::CreateTable(table(1))).unwrap();
        m.record(&Edit::CreateTable(table(2))).unwrap();
        dir.join("MANIFEST-000001")
    }

    #[test]
    fn an_uncommitted_edit_is_applied_whole_and_ignored_torn() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        let path = two_tables(dir.path(), io.clone());
        let committed = std::fs::read(&path).unwrap();
        // An append whose commit a crash cut short: the edit reads back
        // whole, so it counts (its files were durable before it).
        let mut frame = Vec::new();
        append_frame(&mut frame, &encode_edit(&Edit::CreateTable(table(3))));
        let mut bytes = committed.clone();
        bytes.extend_from_slice(&frame);
        std::fs::write(&path, &bytes).unwrap();
        let (state, read) = read_manifest(&io, &path).unwrap();
        assert_eq!(state.tables.len(), 3);
        assert_eq!(read.torn_tail, None);
        // The same append torn: ignored, and reported.
        for cut in [1, 5, 12, frame.len() - 1] {
            let mut bytes = committed.clone();
            bytes.extend_from_slice(&frame[..cut]);
            std::fs::write(&path, &bytes).unwrap();
            let (state, read) = read_manifest(&io, &path).unwrap();
            assert_eq!(state.tables.len(), 2, "cut {cut}");
            assert_eq!(read.torn_tail, Some(committed.len() as u64));
        }
    }

    #[test]
    fn every_flip_and_truncation_of_committed_edits_is_detected_or_harmless() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        let path = two_tables(dir.path(), io.clone());
        let bytes = std::fs::read(&path).unwrap();
        let (expected, _) = read_manifest(&io, &path).unwrap();
        assert_eq!(expected.tables.len(), 2);
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x10;
            std::fs::write(&path, &damaged).unwrap();
            match read_manifest(&io, &path) {
                // Only a flip in the current commit slot can pass: the other
                // slot is one edit older, and that edit reads back whole.
                Ok((state, _)) => {
                    assert_eq!(state, expected, "flip at {at}");
                    assert!(
                        (COMMIT_SLOTS_OFFSET..FIRST_EDIT_OFFSET).contains(&(at as u64)),
                        "flip at {at} passed outside the commit slots"
                    );
                }
                Err(Error::Corruption { file, .. }) => assert_eq!(file, path),
                Err(other) => panic!("flip at {at}: {other:?}"),
            }
        }
        for len in 0..bytes.len() {
            std::fs::write(&path, &bytes[..len]).unwrap();
            assert!(
                matches!(read_manifest(&io, &path), Err(Error::Corruption { .. })),
                "truncation to {len} bytes passed"
            );
        }
    }

    #[test]
    fn legacy_manifests_are_read_and_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        // A version-1 manifest: header, then the edits (no commit slots).
        let mut bytes = file_header(MANIFEST_MAGIC, 7).to_vec();
        bytes[8..12].copy_from_slice(&LEGACY_VERSION.to_le_bytes());
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[..24]);
        bytes[24..32].copy_from_slice(&checksum.to_le_bytes());
        append_frame(&mut bytes, &encode_edit(&Edit::CreateTable(table(1))));
        std::fs::write(dir.path().join("MANIFEST-000007"), &bytes).unwrap();
        std::fs::write(dir.path().join(CURRENT_FILE), "MANIFEST-000007\n").unwrap();
        let m = Manifest::open(dir.path(), io.clone()).unwrap();
        assert_eq!(m.state().tables[&1], table(1));
        drop(m);
        let rewritten = std::fs::read(dir.path().join("MANIFEST-000008")).unwrap();
        assert_eq!(
            parse_file_header(&rewritten, MANIFEST_MAGIC)
                .unwrap()
                .version,
            crate::wal::format::SEGMENT_VERSION
        );
    }

    #[test]
    fn a_lost_current_is_corruption_when_the_directory_holds_a_database() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        let _ = two_tables(dir.path(), io.clone());
        std::fs::remove_file(dir.path().join(CURRENT_FILE)).unwrap();
        assert!(matches!(
            Manifest::open(dir.path(), io.clone()),
            Err(Error::Corruption { .. })
        ));
        // A first open that crashed before installing CURRENT left only an
        // empty manifest: that is a new database.
        let fresh = tempfile::tempdir().unwrap();
        drop(Manifest::open(fresh.path(), io.clone()).unwrap());
        std::fs::remove_file(fresh.path().join(CURRENT_FILE)).unwrap();
        assert!(Manifest::open(fresh.path(), io.clone()).is_ok());
        // CURRENT naming a manifest that is gone.
        std::fs::write(dir.path().join(CURRENT_FILE), "MANIFEST-000042\n").unwrap();
        assert!(matches!(
            Manifest::open(dir.path(), io.clone()),
            Err(Error::Corruption { .. })
        ));
    }

    /// Any id or sequence a database can hand out, the largest included.
    fn id() -> impl proptest::strategy::Strategy<Value = u64> {
        proptest::prop_oneof![
            0..crate::codec::MAX_STORED_ID,
            proptest::strategy::Just(crate::codec::MAX_STORED_ID - 1)
        ]
    }

    fn family_id() -> impl proptest::strategy::Strategy<Value = u32> {
        proptest::prop_oneof![
            0..crate::codec::MAX_STORED_FAMILY_ID,
            proptest::strategy::Just(crate::codec::MAX_STORED_FAMILY_ID - 1)
        ]
    }

    #[test]
    fn edits_with_ids_beyond_any_handed_out_are_refused() {
        // Regression (fuzz targets manifest_edit and manifest_file): a table
        // id of u64::MAX overflowed `id + 1` when the edit was applied.
        let mut table = table(1);
        table.id = u64::MAX;
        assert!(decode_edit(&encode_edit(&Edit::CreateTable(table))).is_err());
        let mut table = self::table(1);
        table.family_ids = vec![u32::MAX];
        assert!(decode_edit(&encode_edit(&Edit::CreateTable(table))).is_err());
        let next = Edit::NextIds {
            table: 1,
            region: 1,
            family: 1,
            file: 1,
            last_sequence: u64::MAX,
        };
        assert!(decode_edit(&encode_edit(&next)).is_err());
    }

    fn any_file_meta() -> impl proptest::strategy::Strategy<Value = FileMeta> {
        use proptest::prelude::*;
        (
            (id(), any::<u64>()),
            proptest::collection::vec(any::<u8>(), 0..12),
            proptest::collection::vec(any::<u8>(), 0..12),
            (any::<(i64, i64)>(), id(), id(), any::<(u64, u64, u64)>()),
        )
            .prop_map(|((id, size), first_row, last_row, n)| FileMeta {
                id,
                size,
                first_row,
                last_row,
                min_timestamp: n.0.0,
                max_timestamp: n.0.1,
                min_sequence: n.1,
                max_sequence: n.2,
                cells: n.3.0,
                rows: n.3.1,
                markers: n.3.2,
            })
    }

    fn any_region() -> impl proptest::strategy::Strategy<Value = RegionRecord> {
        use proptest::prelude::*;
        (
            (id(), id()),
            proptest::collection::vec(any::<u8>(), 0..8),
            proptest::collection::vec(any::<u8>(), 0..8),
            proptest::collection::vec(((family_id(), any::<u8>()), any_file_meta()), 0..4),
        )
            .prop_map(|((id, flushed_sequence), start, end, files)| RegionRecord {
                id,
                start,
                end,
                flushed_sequence,
                files: files
                    .into_iter()
                    .map(|((family_id, level), meta)| StoreFile {
                        family_id,
                        level,
                        meta,
                    })
                    .collect(),
            })
    }

    fn any_edit() -> impl proptest::strategy::Strategy<Value = Edit> {
        use proptest::prelude::*;
        prop_oneof![
            (id(), id(), family_id(), id(), id()).prop_map(
                |(table, region, family, file, last_sequence)| {
                    Edit::NextIds {
                        table,
                        region,
                        family,
                        file,
                        last_sequence,
                    }
                }
            ),
            (
                (any::<u64>(), any::<u64>(), id()),
                proptest::collection::vec((family_id(), any_file_meta()), 0..4)
            )
                .prop_map(|((table_id, region_id, flushed_sequence), files)| {
                    Edit::Flush {
                        table_id,
                        region_id,
                        flushed_sequence,
                        files,
                    }
                }),
            (
                any::<(u64, u64, u32)>(),
                proptest::collection::vec(any::<u64>(), 0..5),
                proptest::collection::vec((any::<u8>(), any_file_meta()), 0..4),
            )
                .prop_map(|((table_id, region_id, family_id), removed, added)| {
                    Edit::Compaction {
                        table_id,
                        region_id,
                        family_id,
                        removed,
                        added,
                    }
                }),
            (
                (any::<u64>(), id()),
                proptest::collection::vec(any_region(), 0..3)
            )
                .prop_map(|((table_id, parent_id), daughters)| Edit::SplitRegion {
                    table_id,
                    parent_id,
                    daughters,
                }),
            (
                id(),
                "[a-z:_]{1,12}",
                proptest::collection::vec(family_id(), 0..4),
                proptest::collection::vec(any_region(), 0..3),
                any::<bool>()
            )
                .prop_map(|(id, name, family_ids, regions, enabled)| {
                    Edit::CreateTable(TableRecord {
                        id,
                        descriptor: TableDescriptor::new(name).family(FamilyDescriptor::new("f")),
                        family_ids,
                        regions,
                        enabled,
                    })
                }),
            "[a-z_]{0,12}".prop_map(|name| Edit::CreateNamespace { name }),
        ]
    }

    proptest::proptest! {
        /// A catalog built by any edits is written as a snapshot and read
        /// back to the same catalog.
        #[test]
        fn any_catalog_round_trips_through_a_snapshot(edits in proptest::collection::vec(any_edit(), 0..12)) {
            let mut state = ManifestState::default();
            for edit in &edits {
                state.apply(edit);
            }
            let (bytes, _) = snapshot_bytes(5, &state);
            let (read, report) = parse_manifest(&bytes, Path::new("MANIFEST-000005")).unwrap();
            proptest::prop_assert_eq!(read, state);
            proptest::prop_assert_eq!(report.torn_tail, None);
        }

        /// Any edit decodes to what was encoded, applying it to a catalog
        /// never fails whatever its ids, and every cut of it is refused.
        #[test]
        fn any_edit_round_trips_and_applies(edit in any_edit()) {
            let bytes = encode_edit(&edit);
            proptest::prop_assert_eq!(decode_edit(&bytes).unwrap(), edit.clone());
            for cut in 0..bytes.len() {
                proptest::prop_assert!(decode_edit(&bytes[..cut]).is_err());
            }
            let mut state = ManifestState::default();
            state.apply(&edit);
            state.apply(&edit);
        }
    }
}
