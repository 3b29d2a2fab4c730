//! The block codecs: one function compresses a block payload with a family's
//! [`Compression`], one restores a payload from the code its trailer records
//! (`docs/format.md`, "HFile: blocks").
//!
//! Crates, all pure Rust so a build needs no C toolchain for them: `zstd`
//! (the reference library, already the engine's), `lz4_flex` (LZ4's block
//! format; its unsafe fast paths with `checked-decode`, which bounds-checks
//! every copy so a corrupt block is an error, never a wild read), `snap`
//! (Snappy's raw format, the Rust port by the author of ripgrep), and
//! `miniz_oxide` (DEFLATE for `GZ`; the engine of `flate2`, used directly
//! because a block needs no gzip header: the trailer holds its length and
//! checksum).
//!
//! Contexts are kept per thread, not made per block: a zstd context costs
//! allocations and table setup on every creation (strata's uncached zstd
//! reads cost 23 µs of CPU against RocksDB's 13.5 µs while it made one per
//! block, docs/benchmarks.md), and DEFLATE's decompressor state is 10 KiB.
//! A thread only ever uses its context for one block at a time, and a
//! context left in any state by a failed call is reset by the next one.

use std::cell::RefCell;

use miniz_oxide::inflate::TINFLStatus;
use miniz_oxide::inflate::core::{DecompressorOxide, inflate_flags};

use crate::codec::DecodeError;
use crate::options::{Compression, GZ_LEVEL};

thread_local! {
    /// This thread's zstd compression context and the level it is set to.
    static ZSTD_COMPRESSOR: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
    /// This thread's zstd decompression context.
    static ZSTD_DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
    /// This thread's DEFLATE decompressor state (boxed: about 10 KiB).
    static INFLATER: RefCell<Option<Box<DecompressorOxide>>> = const { RefCell::new(None) };
}

/// The trailer code of a block stored raw.
pub(crate) const CODE_NONE: u8 = 0;

/// `payload` compressed with `compression`, or `None` when the codec is
/// [`Compression::None`], fails, or does not make the payload smaller (the
/// block is then stored raw).
pub(crate) fn compress(compression: Compression, payload: &[u8]) -> Option<Vec<u8>> {
    let compressed = match compression {
        Compression::None => return None,
        Compression::Zstd { level } => zstd_compress(payload, level).ok()?,
        Compression::Lz4 => lz4_flex::block::compress(payload),
        Compression::Snappy => snap::raw::Encoder::new().compress_vec(payload).ok()?,
        Compression::Gz => miniz_oxide::deflate::compress_to_vec(payload, GZ_LEVEL),
    };
    (compressed.len() < payload.len()).then_some(compressed)
}

/// Restores a payload of `uncompressed_len` bytes that was compressed with
/// the codec whose trailer code is `code`. Never allocates more than
/// `uncompressed_len` (which the caller has bounded) for the result, and
/// refuses a payload that decompresses to any other length.
pub(crate) fn decompress(
    code: u8,
    payload: &[u8],
    uncompressed_len: usize,
) -> Result<Vec<u8>, DecodeError> {
    let out = match code {
        1 => zstd_decompress(payload, uncompressed_len)
            .map_err(|e| DecodeError(format!("zstd: {e}")))?,
        2 => lz4_flex::block::decompress(payload, uncompressed_len)
            .map_err(|e| DecodeError(format!("lz4: {e}")))?,
        3 => {
            let claimed = snap::raw::decompress_len(payload)
                .map_err(|e| DecodeError(format!("snappy: {e}")))?;
            if claimed != uncompressed_len {
                return Err(DecodeError(format!(
                    "snappy block claims {claimed} bytes, its trailer {uncompressed_len}"
                )));
            }
            snap::raw::Decoder::new()
                .decompress_vec(payload)
                .map_err(|e| DecodeError(format!("snappy: {e}")))?
        }
        4 => inflate(payload, uncompressed_len)?,
        other => return Err(DecodeError(format!("unknown block compression {other}"))),
    };
    if out.len() != uncompressed_len {
        return Err(DecodeError(
            "decompressed length does not match the trailer".into(),
        ));
    }
    Ok(out)
}

/// `payload` compressed by this thread's zstd context at `level`.
fn zstd_compress(payload: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
    ZSTD_COMPRESSOR.with_borrow_mut(|slot| {
        match slot {
            Some((current, compressor)) if *current != level => {
                compressor.set_compression_level(level)?;
                *current = level;
            }
            Some(_) => {}
            None => *slot = Some((level, zstd::bulk::Compressor::new(level)?)),
        }
        match slot {
            Some((_, compressor)) => compressor.compress(payload),
            None => zstd::bulk::compress(payload, level),
        }
    })
}

/// A zstd payload restored by this thread's context, at most `capacity` bytes.
fn zstd_decompress(payload: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    ZSTD_DECOMPRESSOR.with_borrow_mut(|slot| {
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new()?);
        }
        match slot {
            Some(decompressor) => decompressor.decompress(payload, capacity),
            None => zstd::bulk::decompress(payload, capacity),
        }
    })
}

/// A raw DEFLATE payload inflated into one buffer of exactly
/// `uncompressed_len` bytes (miniz_oxide's `decompress_to_vec_with_limit`
/// starts at twice the input, grows by doubling and boxes a fresh state
/// per call). A payload that needs more room, or ends early, is an error.
fn inflate(payload: &[u8], uncompressed_len: usize) -> Result<Vec<u8>, DecodeError> {
    let mut out = vec![0u8; uncompressed_len];
    let (status, written) = INFLATER.with_borrow_mut(|slot| {
        let state = slot.get_or_insert_with(Box::default);
        state.init();
        let (status, _read, written) = miniz_oxide::inflate::core::decompress(
            state,
            payload,
            &mut out,
            0,
            inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
        );
        (status, written)
    });
    match status {
        TINFLStatus::Done if written == uncompressed_len => Ok(out),
        TINFLStatus::Done => Err(DecodeError(
            "decompressed length does not match the trailer".into(),
        )),
        other => Err(DecodeError(format!("gz: {other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips_and_records_its_code() {
        let payload: Vec<u8> = b"row-0001 family:qualifier value value value "
            .iter()
            .cycle()
            .take(8000)
            .copied()
            .collect();
        for compression in Compression::ALL {
            let Some(compressed) = compress(compression, &payload) else {
                assert_eq!(compression, Compression::None);
                continue;
            };
            assert!(compressed.len() < payload.len() / 4, "{compression:?}");
            let restored = decompress(compression.code(), &compressed, payload.len()).unwrap();
            assert_eq!(restored, payload, "{compression:?}");
            // A wrong length in the trailer is refused, not trusted.
            assert!(decompress(compression.code(), &compressed, payload.len() - 1).is_err());
        }
    }

    #[test]
    fn garbage_is_an_error_for_every_codec() {
        let garbage: Vec<u8> = (0..300u32).map(|i| (i * 7919 % 256) as u8).collect();
        for code in 1..=4 {
            assert!(decompress(code, &garbage, 4096).is_err(), "code {code}");
        }
        assert!(decompress(5, &garbage, 300).is_err());
    }

    #[test]
    fn a_thread_reuses_its_contexts_across_levels_and_after_errors() {
        let payload: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8 ^ b'a').collect();
        let garbage: Vec<u8> = (0..300u32).map(|i| (i * 7919 % 256) as u8).collect();
        for compression in [
            Compression::Zstd { level: 1 },
            Compression::Zstd { level: 19 },
            Compression::Zstd { level: 3 },
            Compression::Gz,
            Compression::Zstd { level: 3 },
            Compression::Gz,
        ] {
            let compressed = compress(compression, &payload).unwrap();
            // A failed call leaves the context in whatever state; the next
            // block on this thread still decodes.
            assert!(decompress(compression.code(), &garbage, payload.len()).is_err());
            let restored = decompress(compression.code(), &compressed, payload.len()).unwrap();
            assert_eq!(restored, payload, "{compression:?}");
        }
        // A different level really compresses differently (the level is
        // applied to the reused context, not ignored).
        let fast = compress(Compression::Zstd { level: 1 }, &payload).unwrap();
        let strong = compress(Compression::Zstd { level: 19 }, &payload).unwrap();
        assert!(strong.len() <= fast.len());
    }

    #[test]
    fn descriptors_record_every_codec() {
        use crate::codec::Decoder;
        for compression in Compression::ALL {
            let mut out = Vec::new();
            compression.encode(&mut out);
            let decoded = Compression::decode(&mut Decoder::new(&out)).unwrap();
            assert_eq!(decoded, compression);
        }
        let unknown = [5u8, 0, 0, 0, 0];
        assert!(Compression::decode(&mut Decoder::new(&unknown)).is_err());
    }
}
