//! Row-key design helpers: what HBase users otherwise write by hand.
//!
//! * Salting: `format!("{:03}|{}", hash(key) % buckets, key)` spreads
//!   sequential keys (dates, counters) over pre-split regions; [`Salter`]
//!   builds such keys, the split points, and the per-bucket sub-ranges a
//!   logical range scan fans out into.
//! * Hash prefixes, reversed timestamps (`i64::MAX - ts`, newest first),
//!   order-preserving fixed-width integer encodings (signed ones with the sign
//!   bit flipped so that byte order equals numeric order), composite key
//!   builders and parsers, reversed keys, zero-padded decimal ids.
//!
//! Hashes are xxh3-64, which is stable across versions and platforms, so keys
//! built today can be rebuilt tomorrow.

use xxhash_rust::xxh3::xxh3_64;

/// A stable 64-bit hash of `key` (xxh3).
pub fn stable_hash(key: &[u8]) -> u64 {
    xxh3_64(key)
}

/// Builds salted row keys `NNN|logical` for a table pre-split into `buckets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Salter {
    buckets: u32,
    width: usize,
}

impl Salter {
    /// A salter for `buckets` buckets (at least 1). Salts are zero-padded
    /// decimals at least 3 digits wide (`000` ... `999` for 1000 buckets).
    pub fn new(buckets: u32) -> Salter {
        let buckets = buckets.max(1);
        let digits = (buckets - 1).checked_ilog10().map_or(1, |d| d as usize + 1);
        Salter {
            buckets,
            width: digits.max(3),
        }
    }

    /// Number of buckets.
    pub fn buckets(&self) -> u32 {
        self.buckets
    }

    /// Width of the decimal salt in bytes (without the `|`).
    pub fn width(&self) -> usize {
        self.width
    }

    /// The bucket `logical_key` hashes to.
    pub fn bucket_of(&self, logical_key: &[u8]) -> u32 {
        // The remainder is < buckets <= u32::MAX, so the cast is lossless.
        (stable_hash(logical_key) % u64::from(self.buckets)) as u32
    }

    /// The prefix of every key in `bucket`: `NNN|`.
    pub fn prefix(&self, bucket: u32) -> Vec<u8> {
        format!("{:0width$}|", bucket, width = self.width).into_bytes()
    }

    /// `NNN|logical_key` where `NNN` is the key's bucket.
    pub fn salt(&self, logical_key: &[u8]) -> Vec<u8> {
        let mut key = self.prefix(self.bucket_of(logical_key));
        key.extend_from_slice(logical_key);
        key
    }

    /// Strips the salt from a salted key, if it has one of the right shape.
    pub fn unsalt<'a>(&self, salted_key: &'a [u8]) -> Option<&'a [u8]> {
        let salt = salted_key.get(..self.width)?;
        if !salt.iter().all(u8::is_ascii_digit) || salted_key.get(self.width) != Some(&b'|') {
            return None;
        }
        salted_key.get(self.width + 1..)
    }

    /// Split keys that give every bucket its own region: `001`, `002`, ...
    pub fn split_keys(&self) -> Vec<Vec<u8>> {
        (1..self.buckets)
            .map(|b| format!("{:0width$}", b, width = self.width).into_bytes())
            .collect()
    }

    /// The per-bucket sub-ranges `[NNN|start, NNN|stop)` that together cover
    /// the logical range `[start, stop)`; an empty `stop` means "to the end of
    /// the bucket".
    pub fn ranges(&self, start: &[u8], stop: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        (0..self.buckets)
            .map(|bucket| {
                let prefix = self.prefix(bucket);
                let mut lo = prefix.clone();
                lo.extend_from_slice(start);
                let hi = if stop.is_empty() {
                    // "NNN}" is the first key after every "NNN|..." key ('}' = '|' + 1).
                    let mut hi = prefix;
                    if let Some(last) = hi.last_mut() {
                        *last = b'|' + 1;
                    }
                    hi
                } else {
                    let mut hi = prefix;
                    hi.extend_from_slice(stop);
                    hi
                };
                (lo, hi)
            })
            .collect()
    }
}

/// `hash(key)` truncated to `prefix_len` bytes (big-endian, at most 8),
/// followed by `key`: spreads keys while keeping a key's rows together.
pub fn hash_prefixed(key: &[u8], prefix_len: usize) -> Vec<u8> {
    let hash = stable_hash(key).to_be_bytes();
    let n = prefix_len.min(hash.len());
    let mut out = Vec::with_capacity(n + key.len());
    out.extend_from_slice(hash.get(..n).unwrap_or_default());
    out.extend_from_slice(key);
    out
}

/// `i64::MAX - timestamp`: newer timestamps sort first.
pub fn reversed_timestamp(timestamp: i64) -> i64 {
    i64::MAX - timestamp.max(0)
}

/// Order-preserving big-endian encoding of a u32.
pub fn encode_u32(v: u32) -> [u8; 4] {
    v.to_be_bytes()
}

/// Order-preserving big-endian encoding of a u64.
pub fn encode_u64(v: u64) -> [u8; 8] {
    v.to_be_bytes()
}

/// Order-preserving encoding of an i32: big-endian with the sign bit flipped.
pub fn encode_i32(v: i32) -> [u8; 4] {
    ((v as u32) ^ 0x8000_0000).to_be_bytes()
}

/// Order-preserving encoding of an i64: big-endian with the sign bit flipped.
pub fn encode_i64(v: i64) -> [u8; 8] {
    ((v as u64) ^ 0x8000_0000_0000_0000).to_be_bytes()
}

/// Inverse of [`encode_i32`].
pub fn decode_i32(bytes: [u8; 4]) -> i32 {
    (u32::from_be_bytes(bytes) ^ 0x8000_0000) as i32
}

/// Inverse of [`encode_i64`].
pub fn decode_i64(bytes: [u8; 8]) -> i64 {
    (u64::from_be_bytes(bytes) ^ 0x8000_0000_0000_0000) as i64
}

/// Zero-padded decimal id: `zero_padded(42, 6) == "000042"`.
pub fn zero_padded(id: u64, width: usize) -> String {
    format!("{id:0width$}")
}

/// The key with its bytes in reverse order (e.g. to spread sequential ids).
pub fn reversed(key: &[u8]) -> Vec<u8> {
    key.iter().rev().copied().collect()
}

/// Builds a composite row key from fixed-width, order-preserving parts.
#[derive(Debug, Default, Clone)]
pub struct KeyBuilder {
    key: Vec<u8>,
}

impl KeyBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        KeyBuilder::default()
    }
    /// Appends a 4-byte big-endian u32.
    pub fn u32(mut self, v: u32) -> Self {
        self.key.extend_from_slice(&encode_u32(v));
        self
    }
    /// Appends an 8-byte big-endian u64.
    pub fn u64(mut self, v: u64) -> Self {
        self.key.extend_from_slice(&encode_u64(v));
        self
    }
    /// Appends an order-preserving 4-byte i32.
    pub fn i32(mut self, v: i32) -> Self {
        self.key.extend_from_slice(&encode_i32(v));
        self
    }
    /// Appends an order-preserving 8-byte i64.
    pub fn i64(mut self, v: i64) -> Self {
        self.key.extend_from_slice(&encode_i64(v));
        self
    }
    /// Appends a reversed timestamp (newest first) as an 8-byte i64.
    pub fn reversed_timestamp(self, timestamp: i64) -> Self {
        self.i64(reversed_timestamp(timestamp))
    }
    /// Appends the 4-byte hash of a string field (for fixed-width composite keys).
    pub fn hash32(mut self, field: &[u8]) -> Self {
        // Keeping the upper half of the 64-bit hash is lossless as u32 by construction.
        self.key
            .extend_from_slice(&((stable_hash(field) >> 32) as u32).to_be_bytes());
        self
    }
    /// Appends raw bytes.
    pub fn bytes(mut self, bytes: &[u8]) -> Self {
        self.key.extend_from_slice(bytes);
        self
    }
    /// Appends a zero-padded decimal.
    pub fn zero_padded(mut self, id: u64, width: usize) -> Self {
        self.key
            .extend_from_slice(zero_padded(id, width).as_bytes());
        self
    }
    /// Appends a separator byte.
    pub fn separator(mut self, byte: u8) -> Self {
        self.key.push(byte);
        self
    }
    /// The finished key.
    pub fn build(self) -> Vec<u8> {
        self.key
    }
}

/// Reads the parts of a composite key back, front to back.
#[derive(Debug, Clone)]
pub struct KeyParser<'a> {
    rest: &'a [u8],
}

impl<'a> KeyParser<'a> {
    /// A parser over `key`.
    pub fn new(key: &'a [u8]) -> Self {
        KeyParser { rest: key }
    }
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, tail) = self.rest.split_first_chunk::<N>()?;
        self.rest = tail;
        Some(*head)
    }
    /// Reads a 4-byte big-endian u32.
    pub fn u32(&mut self) -> Option<u32> {
        self.take::<4>().map(u32::from_be_bytes)
    }
    /// Reads an 8-byte big-endian u64.
    pub fn u64(&mut self) -> Option<u64> {
        self.take::<8>().map(u64::from_be_bytes)
    }
    /// Reads an order-preserving i32.
    pub fn i32(&mut self) -> Option<i32> {
        self.take::<4>().map(decode_i32)
    }
    /// Reads an order-preserving i64.
    pub fn i64(&mut self) -> Option<i64> {
        self.take::<8>().map(decode_i64)
    }
    /// Reads a reversed timestamp back into the timestamp.
    pub fn reversed_timestamp(&mut self) -> Option<i64> {
        self.i64().map(|r| i64::MAX - r)
    }
    /// Reads `len` raw bytes.
    pub fn bytes(&mut self, len: usize) -> Option<&'a [u8]> {
        if self.rest.len() < len {
            return None;
        }
        let (head, tail) = self.rest.split_at(len);
        self.rest = tail;
        Some(head)
    }
    /// Reads a zero-padded decimal of `width` digits.
    pub fn zero_padded(&mut self, width: usize) -> Option<u64> {
        std::str::from_utf8(self.bytes(width)?).ok()?.parse().ok()
    }
    /// Reads a separator byte, which must equal `byte`.
    pub fn separator(&mut self, byte: u8) -> Option<()> {
        let (&first, tail) = self.rest.split_first()?;
        if first != byte {
            return None;
        }
        self.rest = tail;
        Some(())
    }
    /// Bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn salter_matches_the_hand_written_format() {
        let s = Salter::new(1000);
        assert_eq!(s.width(), 3);
        let key = s.salt(b"2015-04-26|42");
        let bucket = s.bucket_of(b"2015-04-26|42");
        assert_eq!(key, format!("{:03}|2015-04-26|42", bucket).into_bytes());
        assert_eq!(s.unsalt(&key), Some(&b"2015-04-26|42"[..]));
        let splits = s.split_keys();
        assert_eq!(splits.len(), 999);
        assert_eq!(splits[0], b"001");
        assert_eq!(splits[998], b"999");
        assert_eq!(Salter::new(10).prefix(7), b"007|");
        assert_eq!(Salter::new(5000).prefix(7), b"0007|");
    }

    #[test]
    fn salted_ranges_cover_each_bucket() {
        let s = Salter::new(4);
        let ranges = s.ranges(b"2015-04-26", b"2015-04-27");
        assert_eq!(ranges.len(), 4);
        assert_eq!(
            ranges[2],
            (b"002|2015-04-26".to_vec(), b"002|2015-04-27".to_vec())
        );
        let open = s.ranges(b"", b"");
        assert_eq!(open[1], (b"001|".to_vec(), b"001}".to_vec()));
        assert!(b"001|zzzz".as_slice() < open[1].1.as_slice());
    }

    #[test]
    fn composite_keys_round_trip() {
        let key = KeyBuilder::new()
            .u32(7)
            .i64(-3)
            .reversed_timestamp(1_000)
            .zero_padded(42, 6)
            .separator(b'|')
            .bytes(b"tail")
            .build();
        let mut p = KeyParser::new(&key);
        assert_eq!(p.u32(), Some(7));
        assert_eq!(p.i64(), Some(-3));
        assert_eq!(p.reversed_timestamp(), Some(1_000));
        assert_eq!(p.zero_padded(6), Some(42));
        assert_eq!(p.separator(b'|'), Some(()));
        assert_eq!(p.rest(), b"tail");
        assert_eq!(p.u32(), Some(u32::from_be_bytes(*b"tail")));
        assert_eq!(p.u32(), None);
    }

    #[test]
    fn helpers() {
        assert_eq!(zero_padded(42, 6), "000042");
        assert_eq!(reversed(b"abc"), b"cba");
        assert_eq!(hash_prefixed(b"k", 2).len(), 3);
        assert_eq!(&hash_prefixed(b"k", 2)[2..], b"k");
        assert!(reversed_timestamp(10) > reversed_timestamp(11));
    }

    proptest! {
        #[test]
        fn signed_encodings_preserve_order(a: i64, b: i64, c: i32, d: i32) {
            prop_assert_eq!(a.cmp(&b), encode_i64(a).cmp(&encode_i64(b)));
            prop_assert_eq!(c.cmp(&d), encode_i32(c).cmp(&encode_i32(d)));
            prop_assert_eq!(decode_i64(encode_i64(a)), a);
            prop_assert_eq!(decode_i32(encode_i32(c)), c);
        }

        #[test]
        fn salted_keys_land_in_their_bucket_range(key in proptest::collection::vec(any::<u8>(), 1..20)) {
            let s = Salter::new(16);
            let salted = s.salt(&key);
            let (lo, hi) = &s.ranges(b"", b"")[s.bucket_of(&key) as usize];
            prop_assert!(lo.as_slice() <= salted.as_slice() && salted.as_slice() < hi.as_slice());
        }
    }
}
