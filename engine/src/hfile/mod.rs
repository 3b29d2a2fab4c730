//! HFiles: the immutable sorted files a store's data lives in
//! (`docs/format.md`, "HFile").
//!
//! ```text
//! data block 0 | data block 1 | ... | bloom block | leaf index blocks | top index block | meta block | trailer (64 bytes)
//! ```
//!
//! [`writer::HFileWriter`] writes one from cells in store order;
//! [`reader::HFileReader`] opens one, keeps its meta, top index and bloom
//! resident, and reads data and leaf index blocks through the block cache.

pub(crate) mod block;
pub(crate) mod bloom;
pub(crate) mod cache;
pub(crate) mod column_rows;
pub(crate) mod compress;
pub(crate) mod data_block;
pub(crate) mod index;
pub(crate) mod reader;
pub(crate) mod writer;

#[cfg(test)]
mod file_tests;

use xxhash_rust::xxh3::xxh3_64;

use crate::codec::{DecodeError, Decoder, Encode};
use crate::file_meta::BulkSource;
pub(crate) use crate::file_meta::FileMeta;
use crate::options::{BloomType, Compression};
use block::BlockHandle;

/// First bytes of the trailer.
pub(crate) const HFILE_MAGIC: &[u8; 8] = b"STRATAHF";
/// Format version written by this code.
pub(crate) const HFILE_VERSION: u32 = 1;
/// Size of the fixed trailer at the end of every HFile.
pub(crate) const TRAILER_BYTES: usize = 64;
/// Most entries in one index block; more make a two-level index.
pub(crate) const MAX_INDEX_ENTRIES: usize = 1024;

/// The file-level facts of the meta block besides [`FileMeta`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileInfo {
    pub(crate) family: Vec<u8>,
    pub(crate) bloom: BloomType,
    pub(crate) bloom_keys: u64,
    pub(crate) compression: Compression,
    pub(crate) block_size: u32,
    pub(crate) data_blocks: u32,
    pub(crate) index_levels: u8,
    /// Set for a file a bulk writer made: its cells carry sequence 0, and
    /// the sequence they read with is the one the load assigned (kept in
    /// the manifest's record of the file). `None` for flush and compaction
    /// outputs, whose cells carry their own sequences.
    pub(crate) bulk: Option<BulkOrigin>,
    /// Rows holding each qualifier, sorted by qualifier (a row counts once
    /// per qualifier, whatever its versions); `None` for a file written
    /// before these counts existed or with more than
    /// [`column_rows::MAX_COUNTED_COLUMNS`] qualifiers.
    pub(crate) column_rows: Option<Vec<(Vec<u8>, u64)>>,
}

/// Where a bulk-written file comes from (`docs/format.md`, "Meta block").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BulkOrigin {
    /// The table the file was written for (its name when written).
    pub(crate) table: String,
    /// The file's identity: its writer and its number there.
    pub(crate) source: BulkSource,
}

/// The first index of `lo..hi` for which `before` is false, where `before`
/// holds for a prefix of the range and not after it: a binary search, as
/// `slice::partition_point`, over the columns of blocks and indexes, which
/// are not slices (`hi` when `before` holds throughout). Every search of a
/// block or index goes through here.
#[inline]
pub(crate) fn partition_point(
    mut lo: usize,
    mut hi: usize,
    mut before: impl FnMut(usize) -> bool,
) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Tag of the optional bulk-origin section at the end of the meta block.
const META_BULK_ORIGIN: u8 = 1;
/// Tag of the optional rows-per-column section, after the bulk origin.
const META_COLUMN_ROWS: u8 = 2;

/// Encodes the meta block payload.
pub(crate) fn encode_meta(meta: &FileMeta, info: &FileInfo) -> Vec<u8> {
    let mut out = Vec::new();
    out.put_bytes16(&info.family);
    out.put_bytes16(&meta.first_row);
    out.put_bytes16(&meta.last_row);
    out.put_i64(meta.min_timestamp);
    out.put_i64(meta.max_timestamp);
    out.put_u64(meta.min_sequence);
    out.put_u64(meta.max_sequence);
    out.put_u64(meta.cells);
    out.put_u64(meta.rows);
    out.put_u64(meta.markers);
    out.put_u8(info.bloom.code());
    out.put_u64(info.bloom_keys);
    info.compression.encode(&mut out);
    out.put_u32(info.block_size);
    out.put_u32(info.data_blocks);
    out.put_u8(info.index_levels);
    if let Some(bulk) = &info.bulk {
        out.put_u8(META_BULK_ORIGIN);
        out.put_bytes16(bulk.table.as_bytes());
        out.extend_from_slice(&bulk.source.writer_id.to_le_bytes());
        out.put_u32(bulk.source.file_number);
    }
    if let Some(columns) = &info.column_rows {
        out.put_u8(META_COLUMN_ROWS);
        out.put_u16(columns.len() as u16);
        for (qualifier, rows) in columns {
            out.put_bytes16(qualifier);
            out.put_u64(*rows);
        }
    }
    out
}

/// Decodes the meta block payload; `id` and `size` come from the caller.
pub(crate) fn decode_meta(
    payload: &[u8],
    id: u64,
    size: u64,
) -> Result<(FileMeta, FileInfo), DecodeError> {
    let mut d = Decoder::new(payload);
    let family = d.bytes16()?.to_vec();
    let meta = FileMeta {
        id,
        size,
        first_row: d.bytes16()?.to_vec(),
        last_row: d.bytes16()?.to_vec(),
        min_timestamp: d.i64()?,
        max_timestamp: d.i64()?,
        min_sequence: d.id64("sequence")?,
        max_sequence: d.id64("sequence")?,
        cells: d.u64()?,
        rows: d.u64()?,
        markers: d.u64()?,
    };
    let bloom = BloomType::decode(&mut d)?;
    let bloom_keys = d.u64()?;
    let compression = Compression::decode(&mut d)?;
    let info = FileInfo {
        family,
        bloom,
        bloom_keys,
        compression,
        block_size: d.u32()?,
        data_blocks: d.u32()?,
        index_levels: d.u8()?,
        bulk: None,
        column_rows: None,
    };
    let mut info = info;
    // Files written before bulk loading existed end here; a bulk writer's
    // files carry one more section, and files written since rows were
    // counted per column carry that section last.
    let mut last_tag = 0;
    while !d.is_empty() {
        let tag = d.u8()?;
        if tag <= last_tag {
            return Err(DecodeError(format!("meta section {tag} out of order")));
        }
        last_tag = tag;
        match tag {
            META_BULK_ORIGIN => {
                let table = String::from_utf8(d.bytes16()?.to_vec())
                    .map_err(|_| DecodeError("bulk origin table name is not UTF-8".into()))?;
                let mut id = [0u8; 16];
                id.copy_from_slice(d.take(16)?);
                info.bulk = Some(BulkOrigin {
                    table,
                    source: BulkSource {
                        writer_id: u128::from_le_bytes(id),
                        file_number: d.u32()?,
                    },
                });
            }
            META_COLUMN_ROWS => {
                let count = usize::from(d.u16()?);
                if count > column_rows::MAX_COUNTED_COLUMNS {
                    return Err(DecodeError(format!(
                        "{count} columns counted, at most {} are",
                        column_rows::MAX_COUNTED_COLUMNS
                    )));
                }
                let mut columns: Vec<(Vec<u8>, u64)> = Vec::with_capacity(count);
                for _ in 0..count {
                    let qualifier = d.bytes16()?.to_vec();
                    let rows = d.u64()?;
                    if rows == 0
                        || rows > meta.rows
                        || columns.last().is_some_and(|(q, _)| *q >= qualifier)
                    {
                        return Err(DecodeError("inconsistent rows per column".into()));
                    }
                    columns.push((qualifier, rows));
                }
                info.column_rows = Some(columns);
            }
            _ => return Err(DecodeError(format!("unknown meta section {tag}"))),
        }
    }
    if !d.is_empty() || !matches!(info.index_levels, 1 | 2) || meta.first_row > meta.last_row {
        return Err(DecodeError("inconsistent meta block".into()));
    }
    Ok((meta, info))
}

/// The fixed trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trailer {
    pub(crate) meta: BlockHandle,
    pub(crate) index: BlockHandle,
    /// `len == 0` when the file has no bloom.
    pub(crate) bloom: BlockHandle,
    pub(crate) data_blocks: u32,
}

impl Trailer {
    pub(crate) fn encode(&self) -> [u8; TRAILER_BYTES] {
        let mut out = Vec::with_capacity(TRAILER_BYTES);
        out.extend_from_slice(HFILE_MAGIC);
        out.put_u32(HFILE_VERSION);
        out.put_u32(0);
        for h in [self.meta, self.index, self.bloom] {
            out.put_u64(h.offset);
            out.put_u32(h.len);
        }
        out.put_u32(self.data_blocks);
        let checksum = xxh3_64(&out);
        out.put_u64(checksum);
        let mut t = [0u8; TRAILER_BYTES];
        t.copy_from_slice(&out);
        t
    }

    pub(crate) fn decode(bytes: &[u8], file_size: u64) -> Result<Trailer, DecodeError> {
        if bytes.len() != TRAILER_BYTES {
            return Err(DecodeError("file shorter than its trailer".into()));
        }
        let mut d = Decoder::new(bytes);
        if d.take(8)? != HFILE_MAGIC {
            return Err(DecodeError("bad HFile magic".into()));
        }
        let version = d.u32()?;
        let _flags = d.u32()?;
        let mut handle = || -> Result<BlockHandle, DecodeError> {
            Ok(BlockHandle {
                offset: d.u64()?,
                len: d.u32()?,
            })
        };
        let meta = handle()?;
        let index = handle()?;
        let bloom = handle()?;
        let data_blocks = d.u32()?;
        let stored = d.u64()?;
        if stored != xxh3_64(bytes.get(..56).unwrap_or_default()) {
            return Err(DecodeError("trailer checksum mismatch".into()));
        }
        if version != HFILE_VERSION {
            return Err(DecodeError(format!("unsupported HFile version {version}")));
        }
        let body = file_size.saturating_sub(TRAILER_BYTES as u64);
        for (name, h) in [("meta", meta), ("index", index), ("bloom", bloom)] {
            // Checked, as in the index: a wrapped end would pass.
            if h.offset
                .checked_add(u64::from(h.len))
                .is_none_or(|end| end > body)
            {
                return Err(DecodeError(format!("{name} block lies outside the file")));
            }
        }
        Ok(Trailer {
            meta,
            index,
            bloom,
            data_blocks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailer_and_meta_round_trip() {
        let t = Trailer {
            meta: BlockHandle {
                offset: 10,
                len: 20,
            },
            index: BlockHandle {
                offset: 30,
                len: 40,
            },
            bloom: BlockHandle { offset: 0, len: 0 },
            data_blocks: 3,
        };
        let bytes = t.encode();
        assert_eq!(Trailer::decode(&bytes, 1000).unwrap(), t);
        assert!(
            Trailer::decode(&bytes, 100).is_err(),
            "blocks outside a small file"
        );
        let mut bad = bytes;
        bad[20] ^= 1;
        assert!(Trailer::decode(&bad, 1000).is_err());
        // A block whose end overflows lies outside any file.
        let far = Trailer {
            meta: BlockHandle {
                offset: u64::MAX - 5,
                len: 20,
            },
            ..t
        };
        assert!(Trailer::decode(&far.encode(), 1000).is_err());
        let meta = FileMeta {
            id: 9,
            size: 1000,
            first_row: b"a".to_vec(),
            last_row: b"z".to_vec(),
            min_timestamp: 1,
            max_timestamp: 2,
            min_sequence: 3,
            max_sequence: 4,
            cells: 5,
            rows: 6,
            markers: 7,
        };
        let info = FileInfo {
            family: b"f".to_vec(),
            bloom: BloomType::RowCol,
            bloom_keys: 8,
            compression: Compression::Zstd { level: 3 },
            block_size: 4096,
            data_blocks: 3,
            index_levels: 2,
            bulk: None,
            column_rows: None,
        };
        let encoded = encode_meta(&meta, &info);
        assert_eq!(
            decode_meta(&encoded, 9, 1000).unwrap(),
            (meta.clone(), info.clone())
        );
        let bulk = FileInfo {
            bulk: Some(BulkOrigin {
                table: "ns:t".to_owned(),
                source: BulkSource {
                    writer_id: 0x0123_4567_89ab_cdef_0011_2233_4455_6677,
                    file_number: 42,
                },
            }),
            ..info
        };
        let encoded = encode_meta(&meta, &bulk);
        assert_eq!(
            decode_meta(&encoded, 9, 1000).unwrap(),
            (meta.clone(), bulk.clone())
        );
        for cut in 1..=22 {
            assert!(decode_meta(&encoded[..encoded.len() - cut], 9, 1000).is_err());
        }
        // Rows per column follow the bulk origin, or stand alone.
        let counted = FileInfo {
            column_rows: Some(vec![(b"a".to_vec(), 6), (b"b".to_vec(), 2)]),
            ..bulk
        };
        let encoded = encode_meta(&meta, &counted);
        assert_eq!(
            decode_meta(&encoded, 9, 1000).unwrap(),
            (meta.clone(), counted.clone())
        );
        // (Cutting the whole section leaves a valid file without it.)
        for cut in 1..(1 + 2 + 2 * (2 + 1 + 8)) {
            assert!(decode_meta(&encoded[..encoded.len() - cut], 9, 1000).is_err());
        }
        let alone = FileInfo {
            bulk: None,
            ..counted.clone()
        };
        let encoded = encode_meta(&meta, &alone);
        assert_eq!(
            decode_meta(&encoded, 9, 1000).unwrap(),
            (meta.clone(), alone)
        );
        // More rows in a column than in the file, unsorted qualifiers, a
        // column without rows: each is refused.
        for columns in [
            vec![(b"a".to_vec(), 7)],
            vec![(b"b".to_vec(), 1), (b"a".to_vec(), 1)],
            vec![(b"a".to_vec(), 0)],
        ] {
            let bad = FileInfo {
                column_rows: Some(columns),
                ..counted.clone()
            };
            assert!(decode_meta(&encode_meta(&meta, &bad), 9, 1000).is_err());
        }
    }

    proptest::proptest! {
        /// Any trailer whose blocks lie in the file, and any meta block,
        /// decode to what was encoded.
        #[test]
        fn any_trailer_and_meta_round_trip(
            handles in proptest::prelude::any::<[(u32, u32); 3]>(),
            data_blocks in proptest::prelude::any::<u32>(),
            rows in proptest::prelude::any::<(Vec<u8>, Vec<u8>)>(),
            numbers in proptest::strategy::Strategy::prop_map((proptest::prelude::any::<(i64, i64)>(), 0..crate::codec::MAX_STORED_ID, 0..crate::codec::MAX_STORED_ID, proptest::prelude::any::<(u64, u64, u64)>()), |((a, b), c, d, (e, f, g))| (a, b, c, d, e, f, g)),
            bloom_code in 0u8..3,
            bloom_keys in proptest::prelude::any::<u64>(),
            zstd_level in proptest::option::of(-5i32..22),
            block_size in proptest::prelude::any::<u32>(),
            two_levels in proptest::prelude::any::<bool>(),
        ) {
            let [meta, index, bloom] = handles.map(|(offset, len)| BlockHandle { offset: u64::from(offset), len });
            let trailer = Trailer { meta, index, bloom, data_blocks };
            let size = [meta, index, bloom].iter().map(|h| h.offset + u64::from(h.len)).max().unwrap_or(0)
                + TRAILER_BYTES as u64;
            proptest::prop_assert_eq!(Trailer::decode(&trailer.encode(), size).unwrap(), trailer);
            let (mut first_row, mut last_row) = rows;
            first_row.truncate(1000);
            last_row.truncate(1000);
            if first_row > last_row {
                std::mem::swap(&mut first_row, &mut last_row);
            }
            let meta = FileMeta {
                id: 3,
                size,
                first_row,
                last_row,
                min_timestamp: numbers.0,
                max_timestamp: numbers.1,
                min_sequence: numbers.2,
                max_sequence: numbers.3,
                cells: numbers.4,
                rows: numbers.5,
                markers: numbers.6,
            };
            let info = FileInfo {
                family: b"family".to_vec(),
                bloom: BloomType::from_code(bloom_code).unwrap(),
                bloom_keys,
                compression: zstd_level.map_or(Compression::None, |level| Compression::Zstd { level }),
                block_size,
                data_blocks,
                index_levels: if two_levels { 2 } else { 1 },
                bulk: None,
                column_rows: None,
            };
            let encoded = encode_meta(&meta, &info);
            proptest::prop_assert_eq!(decode_meta(&encoded, 3, size).unwrap(), (meta, info));
            for cut in 0..encoded.len() {
                proptest::prop_assert!(decode_meta(&encoded[..cut], 3, size).is_err());
            }
        }
    }
}
