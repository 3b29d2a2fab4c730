//! Block framing and the column encodings blocks are built from
//! (`docs/format.md`, "HFile: blocks" and "Columns").
//!
//! A stored block is `payload | compression u8 | uncompressed length u32 |
//! xxh3-64 u64`, the checksum covering everything before it. The payload is
//! compressed with the family's codec (`compress`) when that saves space,
//! and the compression byte records which codec, so blocks of one file may
//! differ; otherwise it is stored raw.
//!
//! Integer columns use frame-of-reference encoding: a base and a byte width
//! (0, 1, 2, 4 or 8) for every value minus the base, so a column of equal
//! values costs 9 bytes in total. Byte-string columns are a lengths column
//! followed by the concatenated bytes; equal lengths cost nothing per item.

use xxhash_rust::xxh3::xxh3_64;

use crate::codec::{DecodeError, Decoder, Encode};
use crate::hfile::compress::{self, CODE_NONE};
use crate::options::Compression;
use crate::prefetch;

/// Bytes of the trailer that follows every block payload.
pub(crate) const BLOCK_TRAILER_BYTES: usize = 13;
/// Largest uncompressed block payload accepted when reading.
pub(crate) const MAX_BLOCK_PAYLOAD_BYTES: usize = 64 * 1024 * 1024;

/// The largest allocation jemalloc serves from a slab (its size classes
/// above it are page-padded extents): the default block size.
const SLAB_LIMIT_BYTES: usize = crate::options::DEFAULT_BLOCK_SIZE_BYTES as usize;

/// Where a block lies in its file: offset and stored length (payload plus trailer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct BlockHandle {
    pub(crate) offset: u64,
    pub(crate) len: u32,
}

/// Appends `payload`, framed (and compressed when that helps), to `out`.
pub(crate) fn frame_block(payload: &[u8], compression: Compression, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(payload);
    frame_in_place(out, start, compression);
}

/// Frames the payload that `out` holds from `start` on, in place: compresses
/// it when the family asks and that saves space, then appends the trailer.
/// A writer that encodes a block straight into its file buffer frames it
/// here instead of copying it through [`frame_block`].
pub(crate) fn frame_in_place(out: &mut Vec<u8>, start: usize, compression: Compression) {
    let payload_len = out.len().saturating_sub(start);
    let mut code = CODE_NONE;
    if let Some(compressed) = compress::compress(compression, out.get(start..).unwrap_or_default())
    {
        out.truncate(start);
        out.extend_from_slice(&compressed);
        code = compression.code();
    }
    out.put_u8(code);
    // Payloads are bounded by the block size options, far below u32::MAX.
    out.put_u32(payload_len as u32);
    let checksum = xxh3_64(out.get(start..).unwrap_or_default());
    out.put_u64(checksum);
}

/// Verifies a stored block and returns its payload (decompressed).
///
/// Takes the buffer the block was read into: a raw payload is its prefix,
/// so it is returned in place (truncated) rather than copied. On the first
/// read of a block that copy cost as much as the read (a fresh allocation,
/// faulted in page by page).
pub(crate) fn unframe_block(mut stored: Vec<u8>) -> Result<Vec<u8>, DecodeError> {
    let body_len = stored
        .len()
        .checked_sub(8)
        .filter(|&n| n >= 5)
        .ok_or_else(|| {
            DecodeError(format!(
                "block of {} bytes is shorter than its trailer",
                stored.len()
            ))
        })?;
    let (body, checksum) = stored.split_at(body_len);
    let mut stored_sum = [0u8; 8];
    stored_sum.copy_from_slice(checksum);
    if xxh3_64(body) != u64::from_le_bytes(stored_sum) {
        return Err(DecodeError("block checksum mismatch".into()));
    }
    let (payload, trailer) = body.split_at(body.len() - 5);
    let code = trailer.first().copied().unwrap_or(u8::MAX);
    let mut len_bytes = [0u8; 4];
    len_bytes.copy_from_slice(trailer.get(1..5).unwrap_or(&[0; 4]));
    let uncompressed_len = u32::from_le_bytes(len_bytes) as usize;
    if uncompressed_len > MAX_BLOCK_PAYLOAD_BYTES {
        return Err(DecodeError(format!(
            "block claims {uncompressed_len} uncompressed bytes"
        )));
    }
    match code {
        // In place, unless the trailer alone takes the buffer past the
        // allocator's slab sizes (a block written before frames were cut to
        // the block size): a copy is then smaller than the buffer it leaves.
        CODE_NONE
            if payload.len() == uncompressed_len
                && stored.len() > SLAB_LIMIT_BYTES
                && uncompressed_len <= SLAB_LIMIT_BYTES =>
        {
            Ok(payload.to_vec())
        }
        CODE_NONE if payload.len() == uncompressed_len => {
            stored.truncate(uncompressed_len);
            Ok(stored)
        }
        CODE_NONE => Err(DecodeError(
            "raw block length does not match its trailer".into(),
        )),
        code => compress::decompress(code, payload, uncompressed_len),
    }
}

/// The byte width that holds `span` (the largest value minus the base).
pub(crate) fn width_for(span: u64) -> u8 {
    match span {
        0 => 0,
        1..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFFFF_FFFF => 4,
        _ => 8,
    }
}

/// Appends a frame-of-reference integer column: base u64, width u8, values.
pub(crate) fn encode_ints(values: &[u64], out: &mut Vec<u8>) {
    let range = values
        .iter()
        .fold(None, |range: Option<(u64, u64)>, &v| match range {
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
            None => Some((v, v)),
        });
    encode_ints_in_range(values.iter().copied(), values.len(), range, out);
}

/// Appends the integer column of `count` values whose smallest and largest
/// value are `range` (`None` for no values), as [`encode_ints`] would: a
/// builder that tracked the range as values came need not scan them again.
/// `values` must yield exactly `count` values inside `range`.
pub(crate) fn encode_ints_in_range(
    values: impl Iterator<Item = u64>,
    count: usize,
    range: Option<(u64, u64)>,
    out: &mut Vec<u8>,
) {
    let (base, max) = range.unwrap_or((0, 0));
    let width = width_for(max - base);
    out.put_u64(base);
    out.put_u8(width);
    // One resize, then the values written into it: a push per value
    // checked the capacity on every one.
    let start = out.len();
    let width_bytes = usize::from(width);
    out.resize(start + count * width_bytes, 0);
    let packed = out.get_mut(start..).unwrap_or_default();
    let deltas = values.map(|v| v - base);
    match width {
        0 => {}
        1 => pack(packed, deltas, |d| [d as u8]),
        2 => pack(packed, deltas, |d| (d as u16).to_le_bytes()),
        4 => pack(packed, deltas, |d| (d as u32).to_le_bytes()),
        _ => pack(packed, deltas, u64::to_le_bytes),
    }

    /// Writes each delta as `N` little-endian bytes (the width holds it).
    fn pack<const N: usize>(
        packed: &mut [u8],
        deltas: impl Iterator<Item = u64>,
        bytes: impl Fn(u64) -> [u8; N],
    ) {
        for (slot, delta) in packed.chunks_exact_mut(N).zip(deltas) {
            slot.copy_from_slice(&bytes(delta));
        }
    }
}

/// A decoded integer column: values live in the block's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IntColumn {
    base: u64,
    width: u8,
    /// Offset of the packed values in the block.
    start: usize,
    count: usize,
}

impl IntColumn {
    /// Parses a column of `count` values; the decoder ends after it.
    pub(crate) fn parse(d: &mut Decoder<'_>, count: usize) -> Result<IntColumn, DecodeError> {
        let base = d.u64()?;
        let width = d.u8()?;
        if !matches!(width, 0 | 1 | 2 | 4 | 8) {
            return Err(DecodeError(format!("integer column width {width}")));
        }
        let start = d.position();
        let bytes = count
            .checked_mul(usize::from(width))
            .ok_or_else(|| DecodeError("integer column too long".into()))?;
        d.take(bytes)?;
        Ok(IntColumn {
            base,
            width,
            start,
            count,
        })
    }

    /// Value `i`; `data` is the block the column was parsed from.
    #[inline]
    pub(crate) fn get(&self, data: &[u8], i: usize) -> u64 {
        let w = usize::from(self.width);
        let at = self.start + i * w;
        let delta = match self.width {
            0 => 0,
            1 => u64::from(data.get(at).copied().unwrap_or(0)),
            2 => data
                .get(at..at + 2)
                .map_or(0, |b| u64::from(u16::from_le_bytes([b[0], b[1]]))),
            4 => data.get(at..at + 4).map_or(0, |b| {
                u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }),
            _ => data.get(at..at + 8).map_or(0, |b| {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                u64::from_le_bytes(a)
            }),
        };
        self.base.wrapping_add(delta)
    }

    /// Calls `f` with every value in order, stopping at its first error.
    /// The width is matched once for the column, not once per value (block
    /// decoding walks whole columns this way).
    #[inline]
    pub(crate) fn try_for_each<E>(
        &self,
        data: &[u8],
        mut f: impl FnMut(u64) -> Result<(), E>,
    ) -> Result<(), E> {
        let base = self.base;
        let packed = data
            .get(self.start..self.start + self.count * usize::from(self.width))
            .unwrap_or_default();
        match self.width {
            0 => (0..self.count).try_for_each(|_| f(base)),
            1 => packed
                .iter()
                .try_for_each(|&b| f(base.wrapping_add(u64::from(b)))),
            2 => packed.chunks_exact(2).try_for_each(|b| {
                f(base.wrapping_add(u64::from(u16::from_le_bytes([b[0], b[1]]))))
            }),
            4 => packed.chunks_exact(4).try_for_each(|b| {
                f(base.wrapping_add(u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))))
            }),
            _ => packed.chunks_exact(8).try_for_each(|b| {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                f(base.wrapping_add(u64::from_le_bytes(a)))
            }),
        }
    }

    /// A column of `count` values all equal to `value` (no bytes of its own).
    pub(crate) fn constant(value: u64, count: usize) -> IntColumn {
        IntColumn {
            base: value,
            width: 0,
            start: 0,
            count,
        }
    }

    /// True when every value equals the base (width 0).
    pub(crate) fn is_constant(&self) -> bool {
        self.width == 0
    }

    /// The base value (the minimum).
    pub(crate) fn base(&self) -> u64 {
        self.base
    }
}

/// Appends a byte-string column: a lengths column, then the bytes.
pub(crate) fn encode_bytes<'a>(items: impl Iterator<Item = &'a [u8]> + Clone, out: &mut Vec<u8>) {
    let lengths: Vec<u64> = items.clone().map(|i| i.len() as u64).collect();
    encode_ints(&lengths, out);
    for item in items {
        out.extend_from_slice(item);
    }
}

/// Most cache lines [`BytesColumn::prefetch_search`] asks for at once: 4 KiB,
/// the row keys of a 14 KiB block of 40-byte keys and 100-byte values
/// (about 95 rows; 16-byte keys take half as many lines). A seek's search
/// then waits for memory about once instead of once per late halving, and
/// a scan from the found row reads the rest of the keys it loaded anyway:
/// 64 lines rather than 32 made 1,000,000-record prefix scans of 40-byte
/// keys 12% faster (strata-bench filterscan-prefix, medians of six runs).
const SEARCH_PREFETCH_LINES: usize = 64;

/// A decoded byte-string column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BytesColumn {
    /// Every item has `width` bytes; item `i` starts at `start + i * width`.
    Fixed {
        width: usize,
        start: usize,
        count: usize,
    },
    /// Item `i` is `start + offsets[i] .. start + offsets[i + 1]`.
    Variable { offsets: Vec<u32>, start: usize },
}

impl BytesColumn {
    /// Parses a column of `count` items; the decoder ends after it.
    pub(crate) fn parse(
        d: &mut Decoder<'_>,
        count: usize,
        data: &[u8],
    ) -> Result<BytesColumn, DecodeError> {
        let lengths = IntColumn::parse(d, count)?;
        let start = d.position();
        if lengths.is_constant() {
            let width = usize::try_from(lengths.base())
                .map_err(|_| DecodeError("item width too large".into()))?;
            let total = width
                .checked_mul(count)
                .ok_or_else(|| DecodeError("byte column too long".into()))?;
            d.take(total)?;
            return Ok(BytesColumn::Fixed {
                width,
                start,
                count,
            });
        }
        let mut offsets = Vec::with_capacity(count + 1);
        let mut total: u64 = 0;
        offsets.push(0u32);
        // Saturating, so a length near u64::MAX cannot wrap the sum back
        // into range (found by fuzzing); the sums only grow, so a last one
        // within u32::MAX means every offset pushed was exact.
        lengths.try_for_each(data, |length| {
            total = total.saturating_add(length);
            offsets.push(total as u32);
            Ok::<(), DecodeError>(())
        })?;
        if total > u64::from(u32::MAX) {
            return Err(DecodeError("byte column too long".into()));
        }
        d.take(total as usize)?;
        Ok(BytesColumn::Variable { offsets, start })
    }

    /// Item `i`; `data` is the block the column was parsed from.
    #[inline]
    pub(crate) fn get<'d>(&self, data: &'d [u8], i: usize) -> &'d [u8] {
        let (lo, hi) = self.span(i);
        data.get(lo..hi).unwrap_or_default()
    }

    /// Where item `i` lies in the block: `(start, end)` byte offsets
    /// (`start <= end`; [`BytesColumn::parse`] checked they are in the block).
    #[inline]
    pub(crate) fn span(&self, i: usize) -> (usize, usize) {
        match self {
            BytesColumn::Fixed { width, start, .. } => (start + i * width, start + (i + 1) * width),
            BytesColumn::Variable { offsets, start } => {
                let lo = offsets.get(i).copied().unwrap_or(0) as usize;
                let hi = offsets.get(i + 1).copied().unwrap_or(0) as usize;
                (start + lo, start + hi.max(lo))
            }
        }
    }

    /// Starts loading the lines a binary search over the items reads
    /// first, so its probes do not each wait for DRAM in turn. Small
    /// columns (up to [`SEARCH_PREFETCH_LINES`] lines) are prefetched whole;
    /// larger ones at the items the first four halvings probe.
    #[inline]
    pub(crate) fn prefetch_search(&self, data: &[u8]) {
        match self {
            BytesColumn::Fixed {
                width,
                start,
                count,
            } => {
                let Some(items) = data.get(*start..*start + width * count) else {
                    return;
                };
                if items.len() <= SEARCH_PREFETCH_LINES * prefetch::CACHE_LINE_BYTES {
                    prefetch::lines(items, SEARCH_PREFETCH_LINES);
                } else {
                    for k in 1..16 {
                        prefetch::line(items.as_ptr().wrapping_add(count * k / 16 * width));
                    }
                }
            }
            BytesColumn::Variable { offsets, start } => {
                // The offsets come first (each probe reads two); the items'
                // bytes are spread about evenly, so probe-sized steps land
                // near the items the search reads.
                prefetch::lines(offsets, SEARCH_PREFETCH_LINES);
                let total = offsets.last().copied().unwrap_or(0) as usize;
                if let Some(items) = data.get(*start..*start + total) {
                    for k in 1..16 {
                        prefetch::line(items.as_ptr().wrapping_add(total * k / 16));
                    }
                }
            }
        }
    }

    /// Heap bytes of the decoded offsets (for cache weights).
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            BytesColumn::Fixed { .. } => 0,
            BytesColumn::Variable { offsets, .. } => offsets.len() * 4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Lengths whose sum passes u32::MAX, or would wrap a u64 back into
    /// range (a fuzzer's find), are refused, never turned into offsets.
    #[test]
    fn byte_columns_whose_lengths_overflow_are_refused() {
        for lengths in [
            vec![u64::MAX, 2, 3],
            vec![u64::from(u32::MAX), 1],
            vec![1, u64::MAX - 1, 5],
        ] {
            let mut payload = Vec::new();
            encode_ints(&lengths, &mut payload);
            payload.extend_from_slice(&[7u8; 64]);
            let parsed = BytesColumn::parse(&mut Decoder::new(&payload), lengths.len(), &payload);
            assert!(
                matches!(&parsed, Err(DecodeError(reason)) if reason == "byte column too long"),
                "{lengths:?}: {parsed:?}"
            );
        }
        let mut payload = Vec::new();
        encode_ints(&[3, 1, 4], &mut payload);
        payload.extend_from_slice(b"abcdefgh");
        let parsed = BytesColumn::parse(&mut Decoder::new(&payload), 3, &payload).unwrap();
        assert_eq!(parsed.get(&payload, 2), b"efgh");
    }

    #[test]
    fn raw_payloads_at_the_slab_limit_unframe_intact() {
        // In place below the limit; copied out when only the trailer
        // crosses it; in place again when the payload itself is larger.
        for len in [
            100,
            SLAB_LIMIT_BYTES - 13,
            SLAB_LIMIT_BYTES,
            SLAB_LIMIT_BYTES + 1,
        ] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut out = Vec::new();
            frame_block(&payload, Compression::None, &mut out);
            assert_eq!(unframe_block(out).unwrap(), payload, "length {len}");
        }
    }

    #[test]
    fn blocks_round_trip_raw_and_compressed() {
        let payload: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
        for compression in Compression::ALL {
            let mut out = Vec::new();
            frame_block(&payload, compression, &mut out);
            if compression != Compression::None {
                assert!(
                    out.len() < payload.len() / 4,
                    "compressible payload compressed"
                );
            }
            assert_eq!(unframe_block(out.clone()).unwrap(), payload);
            // Every single-bit flip is detected.
            for i in (0..out.len()).step_by(97) {
                let mut bad = out.clone();
                bad[i] ^= 0x40;
                assert!(unframe_block(bad).is_err(), "flip at {i}");
            }
            assert!(unframe_block(out[..out.len() - 1].to_vec()).is_err());
        }
        // Incompressible data is stored raw whatever codec is asked for.
        let noise: Vec<u8> = (0..256u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for compression in Compression::ALL {
            let mut out = Vec::new();
            frame_block(&noise, compression, &mut out);
            assert_eq!(
                out.len(),
                noise.len() + BLOCK_TRAILER_BYTES,
                "{compression:?}"
            );
        }
    }

    #[test]
    fn constant_columns_cost_nothing_per_item() {
        let mut out = Vec::new();
        encode_ints(&[7; 1000], &mut out);
        assert_eq!(out.len(), 9);
        let mut out = Vec::new();
        let items = vec![&b"abcd"[..]; 100];
        encode_bytes(items.iter().copied(), &mut out);
        assert_eq!(out.len(), 9 + 400);
        let mut d = Decoder::new(&out);
        let col = BytesColumn::parse(&mut d, 100, &out).unwrap();
        assert!(matches!(col, BytesColumn::Fixed { width: 4, .. }));
        assert_eq!(col.get(&out, 99), b"abcd");
    }

    #[test]
    fn byte_column_lengths_summing_past_u64_are_refused() {
        // Regression (fuzz target data_block): the lengths u64::MAX and 5
        // overflowed the running total.
        let mut out = Vec::new();
        encode_ints(&[u64::MAX, 5], &mut out);
        out.extend_from_slice(&[0; 16]);
        let mut d = Decoder::new(&out);
        assert!(BytesColumn::parse(&mut d, 2, &out).is_err());
    }

    proptest! {
        #[test]
        fn int_columns_round_trip(values in proptest::collection::vec(any::<u64>(), 0..200), small in proptest::collection::vec(0u64..300, 0..200)) {
            for vals in [&values, &small] {
                let mut out = vec![0xAA; 3];
                encode_ints(vals, &mut out);
                let mut d = Decoder::new(&out);
                d.take(3).unwrap();
                let col = IntColumn::parse(&mut d, vals.len()).unwrap();
                prop_assert!(d.is_empty());
                for (i, v) in vals.iter().enumerate() {
                    prop_assert_eq!(col.get(&out, i), *v);
                }
            }
        }

        #[test]
        fn bytes_columns_round_trip(items in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..20), 0..100)) {
            let mut out = Vec::new();
            encode_bytes(items.iter().map(Vec::as_slice), &mut out);
            let mut d = Decoder::new(&out);
            let col = BytesColumn::parse(&mut d, items.len(), &out).unwrap();
            prop_assert!(d.is_empty());
            for (i, item) in items.iter().enumerate() {
                prop_assert_eq!(col.get(&out, i), item.as_slice());
            }
        }

        #[test]
        fn truncated_columns_fail_cleanly(values in proptest::collection::vec(any::<u64>(), 1..50), cut in 0usize..100) {
            let mut out = Vec::new();
            encode_ints(&values, &mut out);
            let cut = cut.min(out.len() - 1);
            let mut d = Decoder::new(&out[..cut]);
            prop_assert!(IntColumn::parse(&mut d, values.len()).is_err() || values.iter().all(|v| *v == values[0]));
        }
    }

    proptest! {
        /// Any payload survives framing, raw or compressed, and any cut of
        /// the stored block is refused.
        #[test]
        fn any_block_frame_round_trips(
            payload in proptest::collection::vec(0u8..4, 0..3000),
            level in 1i32..6,
            cut in any::<usize>(),
        ) {
            let codecs = [Compression::None, Compression::Zstd { level }, Compression::Lz4, Compression::Snappy, Compression::Gz];
            for compression in codecs {
                let mut stored = Vec::new();
                frame_block(&payload, compression, &mut stored);
                prop_assert_eq!(unframe_block(stored.clone()).unwrap(), payload.clone());
                let cut = cut % stored.len();
                prop_assert!(unframe_block(stored[..cut].to_vec()).is_err());
            }
        }
    }
}
