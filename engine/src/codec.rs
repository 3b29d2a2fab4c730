//! Little-endian encoding helpers for the WAL and manifest records.
//!
//! Every integer on disk has an explicit width and is little-endian
//! (`docs/format.md`, "Conventions"). The [`Decoder`] never panics: running
//! past the end of its input is a [`DecodeError`] that the caller turns into a
//! corruption error naming the file and offset.

use std::fmt;

/// A decoding failure: the input ended early or held an impossible value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecodeError(pub(crate) String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Appends little-endian values to a byte vector.
pub(crate) trait Encode {
    fn put_u8(&mut self, v: u8);
    fn put_u16(&mut self, v: u16);
    fn put_u32(&mut self, v: u32);
    fn put_u64(&mut self, v: u64);
    fn put_i64(&mut self, v: i64);
    /// A u32 length followed by the bytes.
    fn put_bytes32(&mut self, bytes: &[u8]);
    /// A u16 length followed by the bytes; the caller guarantees `len <= u16::MAX`.
    fn put_bytes16(&mut self, bytes: &[u8]);
}

impl Encode for Vec<u8> {
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_i64(&mut self, v: i64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_bytes32(&mut self, bytes: &[u8]) {
        // Lengths are validated against MAX_* limits far below u32::MAX before encoding.
        self.put_u32(u32::try_from(bytes.len()).unwrap_or(u32::MAX));
        self.extend_from_slice(bytes);
    }
    fn put_bytes16(&mut self, bytes: &[u8]) {
        self.put_u16(u16::try_from(bytes.len()).unwrap_or(u16::MAX));
        self.extend_from_slice(bytes);
    }
}

/// Bound on the ids and sequence numbers a stored record may hold: an id or
/// sequence number is below it, a "next id" at most equal to it. Ids and
/// sequence numbers count up from 1, one per object or write, so no
/// database reaches 2^62; a larger value is damage or a crafted file.
/// Refusing it when decoding keeps the `+ 1` that readers do on ids and
/// sequences from overflowing (found by fuzzing the manifest), and the next
/// id after any accepted id is itself accepted.
pub(crate) const MAX_STORED_ID: u64 = 1 << 62;
/// [`MAX_STORED_ID`] for the 32-bit family ids.
pub(crate) const MAX_STORED_FAMILY_ID: u32 = 1 << 30;

/// `id` when it is at most `max`; else an error naming it as `what`.
fn at_most<T: PartialOrd + fmt::Display>(what: &str, id: T, max: T) -> Result<T, DecodeError> {
    if id > max {
        return Err(DecodeError(format!(
            "{what} {id} is beyond any id a database hands out"
        )));
    }
    Ok(id)
}

/// Reads little-endian values from a byte slice, failing cleanly at its end.
pub(crate) struct Decoder<'a> {
    input: &'a [u8],
    position: usize,
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(input: &'a [u8]) -> Self {
        Decoder { input, position: 0 }
    }

    /// Bytes consumed so far.
    pub(crate) fn position(&self) -> usize {
        self.position
    }

    /// True when every byte has been consumed.
    pub(crate) fn is_empty(&self) -> bool {
        self.position >= self.input.len()
    }

    pub(crate) fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .position
            .checked_add(len)
            .filter(|&end| end <= self.input.len())
            .ok_or_else(|| {
                DecodeError(format!(
                    "record ends early: wanted {len} bytes at {}, {} left",
                    self.position,
                    self.input.len().saturating_sub(self.position)
                ))
            })?;
        let slice = self.input.get(self.position..end).unwrap_or_default();
        self.position = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let bytes = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub(crate) fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    pub(crate) fn bytes32(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.u32()? as usize;
        self.take(len)
    }
    pub(crate) fn bytes16(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = usize::from(self.u16()?);
        self.take(len)
    }
    /// A u8 boolean that must be 0 or 1.
    pub(crate) fn bool(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(DecodeError(format!("boolean byte is {other}, not 0 or 1"))),
        }
    }
    /// A u64 id or sequence number (`what` names it in the error): below
    /// [`MAX_STORED_ID`].
    pub(crate) fn id64(&mut self, what: &str) -> Result<u64, DecodeError> {
        at_most(what, self.u64()?, MAX_STORED_ID - 1)
    }
    /// A u64 next id (the id the next object gets): at most [`MAX_STORED_ID`].
    pub(crate) fn next_id64(&mut self, what: &str) -> Result<u64, DecodeError> {
        at_most(what, self.u64()?, MAX_STORED_ID)
    }
    /// A u32 family id: below [`MAX_STORED_FAMILY_ID`].
    pub(crate) fn id32(&mut self, what: &str) -> Result<u32, DecodeError> {
        at_most(what, self.u32()?, MAX_STORED_FAMILY_ID - 1)
    }
    /// A u32 next family id: at most [`MAX_STORED_FAMILY_ID`].
    pub(crate) fn next_id32(&mut self, what: &str) -> Result<u32, DecodeError> {
        at_most(what, self.u32()?, MAX_STORED_FAMILY_ID)
    }
    /// A u32-length UTF-8 string.
    pub(crate) fn string32(&mut self) -> Result<String, DecodeError> {
        let bytes = self.bytes32()?;
        String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError("string is not UTF-8".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_of_every_width() {
        let mut buf = Vec::new();
        buf.put_u8(7);
        buf.put_u16(0xBEEF);
        buf.put_u32(0xDEAD_BEEF);
        buf.put_u64(u64::MAX - 1);
        buf.put_i64(-5);
        buf.put_bytes32(b"hello");
        buf.put_bytes16(b"hi");
        let mut d = Decoder::new(&buf);
        assert_eq!(d.u8().unwrap(), 7);
        assert_eq!(d.u16().unwrap(), 0xBEEF);
        assert_eq!(d.u32().unwrap(), 0xDEAD_BEEF);
        assert_eq!(d.u64().unwrap(), u64::MAX - 1);
        assert_eq!(d.i64().unwrap(), -5);
        assert_eq!(d.bytes32().unwrap(), b"hello");
        assert_eq!(d.bytes16().unwrap(), b"hi");
        assert!(d.is_empty());
    }

    #[test]
    fn reading_past_the_end_is_an_error_not_a_panic() {
        let mut d = Decoder::new(&[1, 2, 3]);
        assert!(d.u32().is_err());
        let mut d = Decoder::new(&[255, 255, 255, 255, 0]);
        assert!(d.bytes32().is_err());
    }

    #[test]
    fn ids_beyond_the_stored_maximum_are_refused() {
        let mut buf = Vec::new();
        buf.put_u64(MAX_STORED_ID - 1);
        buf.put_u64(MAX_STORED_ID);
        buf.put_u64(MAX_STORED_ID);
        buf.put_u64(MAX_STORED_ID + 1);
        buf.put_u32(MAX_STORED_FAMILY_ID);
        buf.put_u32(MAX_STORED_FAMILY_ID);
        let mut d = Decoder::new(&buf);
        assert_eq!(d.id64("table id").unwrap(), MAX_STORED_ID - 1);
        assert!(d.id64("table id").is_err());
        assert_eq!(d.next_id64("next table id").unwrap(), MAX_STORED_ID);
        assert!(d.next_id64("next table id").is_err());
        assert!(d.id32("family id").is_err());
        assert_eq!(d.next_id32("next family id").unwrap(), MAX_STORED_FAMILY_ID);
    }

    #[test]
    fn integers_are_little_endian() {
        let mut buf = Vec::new();
        buf.put_u32(1);
        assert_eq!(buf, [1, 0, 0, 0]);
    }
}
