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

use crate::codec::DecodeError;
use crate::options::{Compression, GZ_LEVEL};

/// The trailer code of a block stored raw.
pub(crate) const CODE_NONE: u8 = 0;

/// `payload` compressed with `compression`, or `None` when the codec is
/// [`Compression::None`], fails, or does not make the payload smaller (the
/// block is then stored raw).
pub(crate) fn compress(compression: Compression, payload: &[u8]) -> Option<Vec<u8>> {
    let compressed = match compression {
        Compression::None => return None,
        Compression::Zstd { level } => zstd::bulk::compress(payload, level).ok()?,
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
        1 => zstd::bulk::decompress(payload, uncompressed_len)
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
        4 => miniz_oxide::inflate::decompress_to_vec_with_limit(payload, uncompressed_len)
            .map_err(|e| DecodeError(format!("gz: {:?}", e.status)))?,
        other => return Err(DecodeError(format!("unknown block compression {other}"))),
    };
    if out.len() != uncompressed_len {
        return Err(DecodeError(
            "decompressed length does not match the trailer".into(),
        ));
    }
    Ok(out)
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
