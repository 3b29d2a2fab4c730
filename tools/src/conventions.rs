//! HBase's conventions that more than one of strata's front ends follows: the shell, the
//! Thrift gateway, and the disk and bulk load tools. How bytes are shown and read back
//! (`Bytes.toStringBinary`), what the names of a column family's options (`BLOOMFILTER`,
//! `COMPRESSION`) choose in the engine, and HBase's `FOREVER`. Each front end parses its own
//! syntax and words its own errors; what a name means is decided here, once.

use strata::{BloomType, Compression};

/// The zstd level a family gets when it asks for `ZSTD` by name (the shell's
/// `COMPRESSION => 'ZSTD'`, a Thrift `ColumnDescriptor`): zstd's own default.
pub const ZSTD_LEVEL: i32 = 3;

/// HBase's `HConstants.FOREVER`: a family's time to live, in seconds, when its cells never
/// expire (`Integer.MAX_VALUE`).
pub const TTL_FOREVER_SECONDS: i32 = i32::MAX;

/// The `BLOOMFILTER` types strata builds, by HBase's names ([`BloomType::name`]).
pub const BLOOM_FILTER_NAMES: &[&str] = &["NONE", "ROW", "ROWCOL"];

/// The bloom filter type HBase calls `name` (any case), if strata builds it.
pub fn bloom_type(name: &str) -> Option<BloomType> {
    BloomType::from_name(name)
}

/// A `COMPRESSION` algorithm strata implements, by HBase's name. The name carries no level:
/// [`CompressionName::compression`] picks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionName {
    /// `GZ`.
    Gz,
    /// `NONE`.
    None,
    /// `SNAPPY`.
    Snappy,
    /// `LZ4`.
    Lz4,
    /// `ZSTD`.
    Zstd,
}

impl CompressionName {
    /// Every algorithm, in the order HBase's `Compression.Algorithm` lists them (its `LZO` and
    /// `BZIP2` are not implemented).
    pub const ALL: [CompressionName; 5] = [
        CompressionName::Gz,
        CompressionName::None,
        CompressionName::Snappy,
        CompressionName::Lz4,
        CompressionName::Zstd,
    ];
    /// The names of [`CompressionName::ALL`].
    pub const NAMES: &[&str] = &["GZ", "NONE", "SNAPPY", "LZ4", "ZSTD"];

    /// The HBase name.
    pub fn name(self) -> &'static str {
        match self {
            CompressionName::Gz => "GZ",
            CompressionName::None => "NONE",
            CompressionName::Snappy => "SNAPPY",
            CompressionName::Lz4 => "LZ4",
            CompressionName::Zstd => "ZSTD",
        }
    }

    /// The algorithm HBase calls `name` (any case), if strata implements it.
    pub fn from_name(name: &str) -> Option<CompressionName> {
        Self::ALL
            .into_iter()
            .find(|algorithm| algorithm.name().eq_ignore_ascii_case(name))
    }

    /// What a family whose compression is `current` gets when this algorithm is asked for by
    /// name: zstd keeps a level chosen through the library, and otherwise gets [`ZSTD_LEVEL`].
    pub fn compression(self, current: Compression) -> Compression {
        match (self, current) {
            (CompressionName::Gz, _) => Compression::Gz,
            (CompressionName::None, _) => Compression::None,
            (CompressionName::Snappy, _) => Compression::Snappy,
            (CompressionName::Lz4, _) => Compression::Lz4,
            (CompressionName::Zstd, Compression::Zstd { level }) => Compression::Zstd { level },
            (CompressionName::Zstd, _) => Compression::Zstd { level: ZSTD_LEVEL },
        }
    }
}

/// Renders bytes as HBase's `Bytes.toStringBinary` does: bytes 0x20..=0x7E except `\` stay
/// as they are, every other byte becomes `\xNN` with uppercase hex digits.
pub fn to_string_binary(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &byte in bytes {
        if (b' '..=b'~').contains(&byte) && byte != b'\\' {
            out.push(char::from(byte));
        } else {
            out.push_str("\\x");
            out.push(hex_digit_upper(byte >> 4));
            out.push(hex_digit_upper(byte & 0x0F));
        }
    }
    out
}

fn hex_digit_upper(nibble: u8) -> char {
    char::from(
        b"0123456789ABCDEF"
            .get(usize::from(nibble))
            .copied()
            .unwrap_or(b'0'),
    )
}

/// The inverse of [`to_string_binary`], as HBase's `Bytes.toBytesBinary`: `\xNN` becomes
/// the byte `0xNN`, every other byte is kept.
///
/// Like HBase, other backslashes are kept (`\q` stays `\q`), and a `\x` not followed by two
/// hex digits loses its backslash (`\xZZ` gives `xZZ`). Unlike HBase, lowercase hex digits
/// are accepted, and a `\x` too close to the end of the input to hold two digits is treated
/// as such an invalid escape (HBase throws an index exception).
pub fn to_bytes_binary(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut index = 0;
    while let Some(&byte) = input.get(index) {
        if byte == b'\\' && input.get(index + 1) == Some(&b'x') {
            let high = input
                .get(index + 2)
                .and_then(|digit| (*digit as char).to_digit(16));
            let low = input
                .get(index + 3)
                .and_then(|digit| (*digit as char).to_digit(16));
            if let (Some(high), Some(low)) = (high, low) {
                out.push((high * 16 + low) as u8);
                index += 4;
            } else {
                index += 1;
            }
        } else {
            out.push(byte);
            index += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn to_string_binary_escapes_like_hbase() {
        assert_eq!(to_string_binary(b"Tom"), "Tom");
        assert_eq!(to_string_binary(b"a b~"), "a b~");
        assert_eq!(to_string_binary(b"a\\b"), "a\\x5Cb");
        assert_eq!(
            to_string_binary(&[0, 0x1F, 0x7F, 0x80, 0xFF]),
            "\\x00\\x1F\\x7F\\x80\\xFF"
        );
        assert_eq!(to_string_binary("é".as_bytes()), "\\xC3\\xA9");
        assert_eq!(to_string_binary(&[]), "");
    }

    #[test]
    fn to_bytes_binary_reverses_and_drops_bogus_backslashes() {
        assert_eq!(to_bytes_binary(b"key\\x03\\x3F\\xcd"), b"key\x03\x3f\xcd");
        assert_eq!(to_bytes_binary(b"\\x5C"), b"\\");
        assert_eq!(to_bytes_binary(b"a\\qb"), b"a\\qb");
        assert_eq!(to_bytes_binary(b"a\\xZZ"), b"axZZ");
        assert_eq!(to_bytes_binary(b"end\\x4"), b"endx4");
        assert_eq!(to_bytes_binary(b"end\\"), b"end\\");
    }

    proptest! {
        #[test]
        fn binary_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let text = to_string_binary(&bytes);
            prop_assert!(text.bytes().all(|byte| (b' '..=b'~').contains(&byte)));
            prop_assert_eq!(to_bytes_binary(text.as_bytes()), bytes);
        }
    }

    #[test]
    fn option_names_choose_what_the_engine_names_them() {
        for name in BLOOM_FILTER_NAMES {
            let bloom = bloom_type(&name.to_ascii_lowercase()).unwrap();
            assert_eq!(bloom.name(), *name);
        }
        assert_eq!(bloom_type("ROWPREFIX_FIXED_LENGTH"), None);
        let names: Vec<&str> = CompressionName::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names, CompressionName::NAMES);
        assert_eq!(
            CompressionName::from_name("zstd"),
            Some(CompressionName::Zstd)
        );
        assert_eq!(
            CompressionName::from_name("snappy"),
            Some(CompressionName::Snappy)
        );
        assert_eq!(CompressionName::from_name("LZO"), None);
        assert_eq!(CompressionName::from_name("BZIP2"), None);
        assert_eq!(
            CompressionName::Zstd.compression(Compression::None),
            Compression::Zstd { level: ZSTD_LEVEL }
        );
        assert_eq!(
            CompressionName::Zstd.compression(Compression::Zstd { level: 9 }),
            Compression::Zstd { level: 9 },
            "a level chosen through the library is kept"
        );
        for algorithm in CompressionName::ALL {
            assert_eq!(
                algorithm.compression(Compression::None).name(),
                algorithm.name()
            );
        }
    }
}
