//! The bytes of what edits carry: table descriptors, regions, file metas,
//! id lists (`docs/format.md`, "Edits": *descriptor*, *region*, *file
//! meta*, *family ids*). Each encoder has its decoder right after it; every
//! integer is little-endian, every list a `u32` count and its items.

use super::state::{RegionRecord, StoreFile};
use crate::codec::{DecodeError, Decoder, Encode};
use crate::file_meta::FileMeta;
use crate::options::{
    BloomType, Compression, Durability, FamilyDescriptor, KeepDeletedCells,
    MajorCompactionSchedule, PreSplit, Retention, TableDescriptor,
};

/// Appends `items` as a list: their count (`u32`), then each as `item` writes it.
pub(super) fn encode_list<T>(
    out: &mut Vec<u8>,
    items: &[T],
    mut item: impl FnMut(&mut Vec<u8>, &T),
) {
    // Every list is bounded far below u32::MAX by what the catalog holds.
    out.put_u32(u32::try_from(items.len()).unwrap_or(u32::MAX));
    for each in items {
        item(out, each);
    }
}

/// Reads a list [`encode_list`] wrote. The vector grows as items decode:
/// a damaged count cannot make it allocate more than the input holds.
pub(super) fn decode_list<'a, T>(
    d: &mut Decoder<'a>,
    mut item: impl FnMut(&mut Decoder<'a>) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    let count = d.u32()?;
    let mut items = Vec::new();
    for _ in 0..count {
        items.push(item(d)?);
    }
    Ok(items)
}

/// *descriptor*: the table's name, families with their options, pre-split
/// and table options.
pub(super) fn encode_descriptor(out: &mut Vec<u8>, d: &TableDescriptor) {
    out.put_bytes32(d.name().as_bytes());
    out.put_u32(d.families().len() as u32);
    for family in d.families() {
        let (
            name,
            versions,
            ttl_ms,
            bloom,
            block_size,
            compression,
            in_memory,
            block_cache,
            retention,
        ) = family.parts();
        let has_retention = retention != Retention::default();
        let schedule = family.major_compaction_schedule();
        out.put_bytes32(name.as_bytes());
        out.put_u32(versions);
        // Bit 0: has TTL; bit 1: retention follows the family; bit 2: the
        // family's major compaction schedule follows (a byte that was 0/1
        // before MIN_VERSIONS existed, so older manifests read back and a
        // family without either encodes as it always did).
        out.put_u8(
            u8::from(ttl_ms.is_some())
                | (u8::from(has_retention) << 1)
                | (u8::from(schedule.is_set()) << 2),
        );
        out.put_u64(ttl_ms.unwrap_or(0));
        out.put_u8(bloom.code());
        out.put_u32(block_size);
        compression.encode(out);
        out.put_u8(u8::from(in_memory));
        out.put_u8(u8::from(block_cache));
        if has_retention {
            out.put_u32(retention.min_versions);
            out.put_u8(retention.keep_deleted_cells.code());
        }
        if schedule.is_set() {
            // Bit 0: a period follows; bit 1: a jitter follows. Both values
            // are written either way, zero where absent.
            out.put_u8(
                u8::from(schedule.period_ms.is_some())
                    | (u8::from(schedule.jitter_bits.is_some()) << 1),
            );
            out.put_u64(schedule.period_ms.unwrap_or(0));
            out.put_u64(schedule.jitter_bits.unwrap_or(0));
        }
    }
    match d.get_pre_split() {
        PreSplit::None => out.put_u8(0),
        PreSplit::Keys(keys) => {
            out.put_u8(1);
            encode_list(out, keys, |out, key| out.put_bytes32(key));
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

/// Reads what [`encode_descriptor`] wrote; unknown codes are refused.
pub(super) fn decode_descriptor(d: &mut Decoder<'_>) -> Result<TableDescriptor, DecodeError> {
    let name = d.string32()?;
    let family_count = d.u32()?;
    let mut descriptor = TableDescriptor::new(name);
    for _ in 0..family_count {
        let name = d.string32()?;
        let versions = d.u32()?;
        let flags = d.u8()?;
        if flags > 0b111 {
            return Err(DecodeError(format!("family flags byte is {flags}")));
        }
        let has_ttl = flags & 1 != 0;
        let ttl = d.u64()?;
        let bloom = BloomType::decode(d)?;
        let block_size = d.u32()?;
        let compression = Compression::decode(d)?;
        let in_memory = d.bool()?;
        let block_cache = d.bool()?;
        let retention = if flags & 0b10 != 0 {
            Retention {
                min_versions: d.u32()?,
                keep_deleted_cells: KeepDeletedCells::decode(d)?,
            }
        } else {
            Retention::default()
        };
        let schedule = if flags & 0b100 != 0 {
            let present = d.u8()?;
            if present > 0b11 {
                return Err(DecodeError(format!(
                    "major compaction presence byte is {present}"
                )));
            }
            let period_ms = d.u64()?;
            let jitter_bits = d.u64()?;
            MajorCompactionSchedule {
                period_ms: (present & 1 != 0).then_some(period_ms),
                jitter_bits: (present & 0b10 != 0).then_some(jitter_bits),
            }
        } else {
            MajorCompactionSchedule::default()
        };
        descriptor = descriptor.family(
            FamilyDescriptor::from_parts(
                name,
                versions,
                has_ttl.then_some(ttl),
                bloom,
                block_size,
                compression,
                in_memory,
                block_cache,
                retention,
            )
            .with_major_compaction_schedule(schedule),
        );
    }
    let pre_split = match d.u8()? {
        0 => PreSplit::None,
        1 => PreSplit::Keys(decode_list(d, |d| Ok(d.bytes32()?.to_vec()))?),
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

/// *file meta*: what the catalog knows of an HFile without opening it.
pub(super) fn encode_file_meta(out: &mut Vec<u8>, m: &FileMeta) {
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

/// Reads what [`encode_file_meta`] wrote.
pub(super) fn decode_file_meta(d: &mut Decoder<'_>) -> Result<FileMeta, DecodeError> {
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

/// *region*: its id, key range, flushed sequence and files.
pub(super) fn encode_region(out: &mut Vec<u8>, r: &RegionRecord) {
    out.put_u64(r.id);
    out.put_bytes32(&r.start);
    out.put_bytes32(&r.end);
    out.put_u64(r.flushed_sequence);
    encode_list(out, &r.files, |out, file| {
        out.put_u32(file.family_id);
        out.put_u8(file.level);
        encode_file_meta(out, &file.meta);
    });
}

/// Reads what [`encode_region`] wrote.
pub(super) fn decode_region(d: &mut Decoder<'_>) -> Result<RegionRecord, DecodeError> {
    Ok(RegionRecord {
        id: d.id64("region id")?,
        start: d.bytes32()?.to_vec(),
        end: d.bytes32()?.to_vec(),
        flushed_sequence: d.id64("flushed sequence")?,
        files: decode_list(d, |d| {
            Ok(StoreFile {
                family_id: d.id32("family id")?,
                level: d.u8()?,
                meta: decode_file_meta(d)?,
            })
        })?,
    })
}

/// *family ids*: one `u32` per family, in the descriptor's order.
pub(super) fn encode_family_ids(out: &mut Vec<u8>, ids: &[u32]) {
    encode_list(out, ids, |out, &id| out.put_u32(id));
}

/// Reads what [`encode_family_ids`] wrote.
pub(super) fn decode_family_ids(d: &mut Decoder<'_>) -> Result<Vec<u32>, DecodeError> {
    decode_list(d, |d| d.id32("family id"))
}

/// A bulk writer id: 16 bytes, little-endian.
pub(super) fn encode_u128(out: &mut Vec<u8>, value: u128) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// Reads what [`encode_u128`] wrote.
pub(super) fn decode_u128(d: &mut Decoder<'_>) -> Result<u128, DecodeError> {
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(d.take(16)?);
    Ok(u128::from_le_bytes(bytes))
}

/// `numbers` (ascending) as inclusive runs of consecutive numbers.
pub(super) fn number_ranges(numbers: &[u32]) -> Vec<(u32, u32)> {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &n in numbers {
        match ranges.last_mut() {
            Some((_, last)) if last.checked_add(1) == Some(n) => *last = n,
            _ => ranges.push((n, n)),
        }
    }
    ranges
}
