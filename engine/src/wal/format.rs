//! WAL bytes: segment header, record frames and the row-mutation payload.
//! `docs/format.md`, "Write-ahead log", is the specification; the constants
//! here are the ones it names.

use xxhash_rust::xxh3::xxh3_64;

use crate::cell::CellKind;
use crate::codec::{DecodeError, Decoder, Encode};

/// First 8 bytes of every segment.
pub(crate) const SEGMENT_MAGIC: &[u8; 8] = b"STRATAWL";
/// Format version of WAL segments and manifests written by this code.
/// Version 1 (no group commit or seal records in segments, no commit slots
/// in manifests) is still read, with the weaker rules it had
/// (`docs/format.md`, "Reading the log back" and "Manifest").
pub(crate) const SEGMENT_VERSION: u32 = 2;
/// The first format version: still read, never written.
pub(crate) const LEGACY_VERSION: u32 = 1;
/// Segment header: magic, version u32, reserved u32, segment id u64, xxh3 u64.
pub(crate) const SEGMENT_HEADER_BYTES: usize = 32;
/// Frame header: payload length u32, xxh3-64 of (length bytes ++ payload).
pub(crate) const FRAME_HEADER_BYTES: usize = 12;
/// Largest payload of one frame (one row mutation).
pub(crate) const MAX_RECORD_BYTES: usize = 512 * 1024 * 1024;
/// Payload kind of a row mutation.
const RECORD_ROW_MUTATION: u8 = 1;
/// Payload kind of a group commit record: the last frame of every group the
/// commit thread writes, so that damage to any row mutation is followed by a
/// valid frame and cannot pass for a torn write.
const RECORD_GROUP_COMMIT: u8 = 2;
/// Payload kind of a seal record: the last frame of a sealed segment.
const RECORD_SEAL: u8 = 3;
/// Payload kind of a multi-row mutation: several rows of one region under
/// one sequence, in one frame, so that replay applies all of them or none.
const RECORD_MULTI_ROW_MUTATION: u8 = 4;
/// Bytes of a group commit frame: header, kind u8, frames u32, bytes u64.
pub(crate) const GROUP_COMMIT_FRAME_BYTES: usize = FRAME_HEADER_BYTES + 1 + 4 + 8;
/// Bytes of a seal frame: header, kind u8, frames u64, max sequence u64,
/// data end u64.
pub(crate) const SEAL_FRAME_BYTES: usize = FRAME_HEADER_BYTES + 1 + 8 + 8 + 8;

/// Encodes the 32-byte header shared by WAL segments and manifests:
/// magic, version u32, reserved u32, file id u64, xxh3-64 of the first 24 bytes.
/// Always written with [`SEGMENT_VERSION`].
pub(crate) fn file_header(magic: &[u8; 8], file_id: u64) -> [u8; SEGMENT_HEADER_BYTES] {
    let mut h = Vec::with_capacity(SEGMENT_HEADER_BYTES);
    h.extend_from_slice(magic);
    h.put_u32(SEGMENT_VERSION);
    h.put_u32(0);
    h.put_u64(file_id);
    let checksum = xxh3_64(&h);
    h.put_u64(checksum);
    let mut out = [0u8; SEGMENT_HEADER_BYTES];
    out.copy_from_slice(&h);
    out
}

/// A checked file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileHeader {
    /// [`SEGMENT_VERSION`] or [`LEGACY_VERSION`].
    pub(crate) version: u32,
    /// Segment id or manifest number.
    pub(crate) id: u64,
}

/// Checks a header written by [`file_header`] (or by the legacy version).
pub(crate) fn parse_file_header(bytes: &[u8], magic: &[u8; 8]) -> Result<FileHeader, DecodeError> {
    let header = bytes.get(..SEGMENT_HEADER_BYTES).ok_or_else(|| {
        DecodeError(format!(
            "file shorter than its {SEGMENT_HEADER_BYTES}-byte header"
        ))
    })?;
    let mut d = Decoder::new(header);
    if d.take(8)? != magic {
        return Err(DecodeError("bad magic".into()));
    }
    let version = d.u32()?;
    let _reserved = d.u32()?;
    let id = d.u64()?;
    let stored = d.u64()?;
    if stored != xxh3_64(header.get(..24).unwrap_or_default()) {
        return Err(DecodeError("header checksum mismatch".into()));
    }
    if version != SEGMENT_VERSION && version != LEGACY_VERSION {
        return Err(DecodeError(format!("unsupported format version {version}")));
    }
    Ok(FileHeader { version, id })
}

/// Encodes a WAL segment header.
pub(crate) fn segment_header(segment_id: u64) -> [u8; SEGMENT_HEADER_BYTES] {
    file_header(SEGMENT_MAGIC, segment_id)
}

/// Checks a WAL segment header.
pub(crate) fn parse_segment_header(bytes: &[u8]) -> Result<FileHeader, DecodeError> {
    parse_file_header(bytes, SEGMENT_MAGIC)
}

/// The checksum a frame's header stores: xxh3 of the length field, then
/// the payload.
fn frame_checksum(len_bytes: [u8; 4], payload: &[u8]) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&len_bytes);
    hasher.update(payload);
    hasher.digest()
}

/// The header of a frame holding `payload`: its length, then its checksum.
fn frame_header(payload: &[u8]) -> [u8; FRAME_HEADER_BYTES] {
    let len_bytes = (payload.len() as u32).to_le_bytes();
    let mut header = [0u8; FRAME_HEADER_BYTES];
    header[..4].copy_from_slice(&len_bytes);
    header[4..].copy_from_slice(&frame_checksum(len_bytes, payload).to_le_bytes());
    header
}

/// Appends one frame holding `payload` to `out`.
pub(crate) fn append_frame(out: &mut Vec<u8>, payload: &[u8]) {
    out.extend_from_slice(&frame_header(payload));
    out.extend_from_slice(payload);
}

/// Starts a frame at the end of `out` whose payload the caller then
/// appends; [`finish_frame`] fills in its header. Encoding a payload in
/// place spares the copy (and the payload buffer) of [`append_frame`].
/// Returns where the frame starts.
pub(crate) fn begin_frame(out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0u8; FRAME_HEADER_BYTES]);
    start
}

/// Writes the header of the frame [`begin_frame`] started at `start`: its
/// payload is everything after the header. The bytes are exactly what
/// [`append_frame`] writes for that payload.
pub(crate) fn finish_frame(out: &mut [u8], start: usize) {
    const LEN_BYTES: usize = 4;
    let Some(frame) = out.get_mut(start..) else {
        return;
    };
    let Some(payload_len) = frame.len().checked_sub(FRAME_HEADER_BYTES) else {
        return;
    };
    let len_bytes = (payload_len as u32).to_le_bytes();
    // The checksum covers the length field, then the payload. Written for a
    // moment just before the payload, in the checksum's own place, the
    // length makes one run of bytes with it, hashed in one call: the same
    // value as `frame_checksum`'s streaming hasher, which copies its input
    // into a buffer first (that copy and the hasher's setup were ~4% of a
    // small put on the writing thread).
    let checksummed_from = FRAME_HEADER_BYTES - LEN_BYTES;
    frame[checksummed_from..FRAME_HEADER_BYTES].copy_from_slice(&len_bytes);
    let checksum = xxhash_rust::xxh3::xxh3_64(&frame[checksummed_from..]);
    frame[..LEN_BYTES].copy_from_slice(&len_bytes);
    frame[LEN_BYTES..FRAME_HEADER_BYTES].copy_from_slice(&checksum.to_le_bytes());
}

/// What sits at an offset of a segment.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FrameAt<'a> {
    /// A valid frame: its payload and total size in bytes.
    Valid {
        payload: &'a [u8],
        frame_bytes: usize,
    },
    /// Not a valid frame (torn, corrupt, or zeros).
    Invalid,
}

/// Reads the frame starting at the beginning of `bytes`.
pub(crate) fn frame_at(bytes: &[u8]) -> FrameAt<'_> {
    let Some(header) = bytes.get(..FRAME_HEADER_BYTES) else {
        return FrameAt::Invalid;
    };
    let len_bytes: [u8; 4] = [header[0], header[1], header[2], header[3]];
    let len = u32::from_le_bytes(len_bytes) as usize;
    if len == 0 || len > MAX_RECORD_BYTES {
        return FrameAt::Invalid;
    }
    let Some(payload) = bytes.get(FRAME_HEADER_BYTES..FRAME_HEADER_BYTES + len) else {
        return FrameAt::Invalid;
    };
    let mut stored = [0u8; 8];
    stored.copy_from_slice(&header[4..12]);
    if frame_checksum(len_bytes, payload) != u64::from_le_bytes(stored) {
        return FrameAt::Invalid;
    }
    FrameAt::Valid {
        payload,
        frame_bytes: FRAME_HEADER_BYTES + len,
    }
}

/// One cell of a logged mutation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoggedCell<'a> {
    pub(crate) kind: CellKind,
    pub(crate) timestamp: i64,
    pub(crate) qualifier: &'a [u8],
    pub(crate) value: &'a [u8],
}

/// A decoded row mutation record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoggedMutation<'a> {
    pub(crate) region_id: u64,
    pub(crate) sequence: u64,
    pub(crate) row: &'a [u8],
    /// Cells grouped by family id.
    pub(crate) families: Vec<(u32, Vec<LoggedCell<'a>>)>,
}

/// A cell as the encoders take it: kind, timestamp, qualifier, value.
pub(crate) type CellParts<'a> = (CellKind, i64, &'a [u8], &'a [u8]);

/// Bytes of a row mutation payload before its row and families: kind u8,
/// region id u64, sequence u64, row length u16, family count u16.
const MUTATION_FIXED_BYTES: usize = 1 + 8 + 8 + 2 + 2;
/// Bytes of a family's header in a row mutation: family id u32, cell count u32.
const FAMILY_FIXED_BYTES: usize = 4 + 4;
/// Bytes of a cell in a row mutation besides its qualifier and value: kind
/// u8, timestamp i64, qualifier length u32, value length u32.
const CELL_FIXED_BYTES: usize = 1 + 8 + 4 + 4;

/// The exact size of the payload [`encode_mutation`] writes for a row of
/// `row_bytes` whose families hold cells of `(qualifier bytes, value
/// bytes)`, so that writers can size buffers and check limits before they
/// encode.
pub(crate) fn mutation_payload_bytes<F, C>(row_bytes: usize, families: F) -> usize
where
    F: Iterator<Item = C>,
    C: Iterator<Item = (usize, usize)>,
{
    MUTATION_FIXED_BYTES
        + row_bytes
        + families
            .map(|cells| {
                FAMILY_FIXED_BYTES
                    + cells
                        .map(|(qualifier, value)| CELL_FIXED_BYTES + qualifier + value)
                        .sum::<usize>()
            })
            .sum::<usize>()
}

/// Encodes the payload of a row mutation; `families` yields
/// `(family_id, cells)` with cells as `(kind, timestamp, qualifier, value)`.
pub(crate) fn encode_mutation<'a, F, C>(
    out: &mut Vec<u8>,
    region_id: u64,
    sequence: u64,
    row: &[u8],
    families: F,
) where
    F: ExactSizeIterator<Item = (u32, C)>,
    C: ExactSizeIterator<Item = (CellKind, i64, &'a [u8], &'a [u8])>,
{
    out.put_u8(RECORD_ROW_MUTATION);
    out.put_u64(region_id);
    out.put_u64(sequence);
    encode_row_body(out, row, families);
}

/// Bytes of a multi-row mutation payload besides its rows: kind u8, region
/// id u64, sequence u64, row count u32.
const MULTI_ROW_FIXED_BYTES: usize = 1 + 8 + 8 + 4;

/// The exact size of the payload [`encode_multi_row`] writes for rows
/// whose row mutation payloads ([`mutation_payload_bytes`]) take
/// `row_payloads` bytes each: every row's body is a row mutation without
/// its kind, region id and sequence.
pub(crate) fn multi_row_payload_bytes(row_payloads: impl Iterator<Item = usize>) -> usize {
    MULTI_ROW_FIXED_BYTES
        + row_payloads
            .map(|bytes| bytes - (MUTATION_FIXED_BYTES - 4))
            .sum::<usize>()
}

/// Encodes the payload of a multi-row mutation: `rows` yields `(row,
/// families)` as [`encode_mutation`] takes them, all of region `region_id`
/// and all at `sequence`.
pub(crate) fn encode_multi_row<'a, R, F, C>(
    out: &mut Vec<u8>,
    region_id: u64,
    sequence: u64,
    rows: R,
) where
    R: ExactSizeIterator<Item = (&'a [u8], F)>,
    F: ExactSizeIterator<Item = (u32, C)>,
    C: ExactSizeIterator<Item = (CellKind, i64, &'a [u8], &'a [u8])>,
{
    out.put_u8(RECORD_MULTI_ROW_MUTATION);
    out.put_u64(region_id);
    out.put_u64(sequence);
    out.put_u32(rows.len() as u32);
    for (row, families) in rows {
        encode_row_body(out, row, families);
    }
}

/// A row and its families' cells: the part of a row mutation after its
/// sequence, repeated per row in a multi-row mutation.
fn encode_row_body<'a, F, C>(out: &mut Vec<u8>, row: &[u8], families: F)
where
    F: ExactSizeIterator<Item = (u32, C)>,
    C: ExactSizeIterator<Item = (CellKind, i64, &'a [u8], &'a [u8])>,
{
    out.put_bytes16(row);
    out.put_u16(families.len() as u16);
    for (family_id, cells) in families {
        out.put_u32(family_id);
        out.put_u32(cells.len() as u32);
        for (kind, timestamp, qualifier, value) in cells {
            out.put_u8(kind.code());
            out.put_i64(timestamp);
            out.put_bytes32(qualifier);
            out.put_bytes32(value);
        }
    }
}

/// A group commit record: the `frames` row mutations in the `bytes` just
/// before it were written by one group write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GroupCommit {
    pub(crate) frames: u32,
    pub(crate) bytes: u64,
}

/// A seal record: the segment is complete; nothing but preallocated zeros
/// may follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seal {
    /// Row mutation frames in the segment.
    pub(crate) frames: u64,
    /// Highest sequence of the segment's row mutations (0 if none).
    pub(crate) max_sequence: u64,
    /// Offset of the seal frame itself (the end of the groups).
    pub(crate) data_end: u64,
}

/// One decoded WAL record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WalRecord<'a> {
    Mutation(LoggedMutation<'a>),
    /// The rows of one multi-row mutation, in the order they were logged.
    MultiRow(Vec<LoggedMutation<'a>>),
    GroupCommit(GroupCommit),
    Seal(Seal),
}

/// Appends the group commit frame of a group of `frames` row mutation
/// frames taking `bytes` bytes.
pub(crate) fn append_group_commit(out: &mut Vec<u8>, frames: u32, bytes: u64) {
    let start = begin_frame(out);
    out.put_u8(RECORD_GROUP_COMMIT);
    out.put_u32(frames);
    out.put_u64(bytes);
    finish_frame(out, start);
}

/// Encodes the seal frame of a segment.
pub(crate) fn seal_frame(seal: Seal) -> Vec<u8> {
    let mut p = Vec::with_capacity(SEAL_FRAME_BYTES - FRAME_HEADER_BYTES);
    p.put_u8(RECORD_SEAL);
    p.put_u64(seal.frames);
    p.put_u64(seal.max_sequence);
    p.put_u64(seal.data_end);
    let mut out = Vec::with_capacity(SEAL_FRAME_BYTES);
    append_frame(&mut out, &p);
    out
}

/// Decodes any WAL record payload.
pub(crate) fn decode_record(payload: &[u8]) -> Result<WalRecord<'_>, DecodeError> {
    let mut d = Decoder::new(payload);
    let record = match d.u8()? {
        RECORD_ROW_MUTATION => return decode_mutation(payload).map(WalRecord::Mutation),
        RECORD_MULTI_ROW_MUTATION => return decode_mutations(payload).map(WalRecord::MultiRow),
        RECORD_GROUP_COMMIT => WalRecord::GroupCommit(GroupCommit {
            frames: d.u32()?,
            bytes: d.u64()?,
        }),
        RECORD_SEAL => WalRecord::Seal(Seal {
            frames: d.u64()?,
            max_sequence: d.u64()?,
            data_end: d.u64()?,
        }),
        kind => return Err(DecodeError(format!("unknown WAL record kind {kind}"))),
    };
    if !d.is_empty() {
        return Err(DecodeError(format!(
            "{} trailing bytes after the record",
            payload.len() - d.position()
        )));
    }
    Ok(record)
}

/// Decodes a row mutation payload.
pub(crate) fn decode_mutation(payload: &[u8]) -> Result<LoggedMutation<'_>, DecodeError> {
    let mut d = Decoder::new(payload);
    let kind = d.u8()?;
    if kind != RECORD_ROW_MUTATION {
        return Err(DecodeError(format!("unknown WAL record kind {kind}")));
    }
    let region_id = d.u64()?;
    let sequence = d.id64("sequence")?;
    let mutation = decode_row_body(&mut d, payload.len(), region_id, sequence)?;
    finish_record(&d, payload)?;
    Ok(mutation)
}

/// Decodes the rows of a row mutation or of a multi-row mutation payload:
/// what replay applies for one frame.
pub(crate) fn decode_mutations(payload: &[u8]) -> Result<Vec<LoggedMutation<'_>>, DecodeError> {
    let mut d = Decoder::new(payload);
    match d.u8()? {
        RECORD_ROW_MUTATION => return decode_mutation(payload).map(|m| vec![m]),
        RECORD_MULTI_ROW_MUTATION => {}
        kind => return Err(DecodeError(format!("unknown WAL record kind {kind}"))),
    }
    let region_id = d.u64()?;
    let sequence = d.id64("sequence")?;
    let row_count = d.u32()? as usize;
    // Each row takes at least 4 bytes (row length, family count); reject
    // counts the payload cannot hold before allocating for them.
    if row_count == 0 || row_count > payload.len() / 4 {
        return Err(DecodeError(format!(
            "row count {row_count} does not fit the record"
        )));
    }
    let mut rows = Vec::with_capacity(row_count);
    for _ in 0..row_count {
        rows.push(decode_row_body(&mut d, payload.len(), region_id, sequence)?);
    }
    finish_record(&d, payload)?;
    Ok(rows)
}

/// Refuses bytes after a record's last field.
fn finish_record(d: &Decoder<'_>, payload: &[u8]) -> Result<(), DecodeError> {
    if !d.is_empty() {
        return Err(DecodeError(format!(
            "{} trailing bytes after the record",
            payload.len() - d.position()
        )));
    }
    Ok(())
}

/// Decodes what [`encode_row_body`] wrote.
fn decode_row_body<'a>(
    d: &mut Decoder<'a>,
    payload_len: usize,
    region_id: u64,
    sequence: u64,
) -> Result<LoggedMutation<'a>, DecodeError> {
    let row = d.bytes16()?;
    let family_count = d.u16()?;
    let mut families = Vec::with_capacity(usize::from(family_count).min(1024));
    for _ in 0..family_count {
        let family_id = d.u32()?;
        let cell_count = d.u32()? as usize;
        // Each cell takes at least 17 bytes; reject counts the payload cannot hold
        // before allocating for them.
        if cell_count > payload_len / 17 + 1 {
            return Err(DecodeError(format!(
                "cell count {cell_count} exceeds the record"
            )));
        }
        let mut cells = Vec::with_capacity(cell_count);
        for _ in 0..cell_count {
            let code = d.u8()?;
            let kind = CellKind::from_code(code)
                .ok_or_else(|| DecodeError(format!("unknown cell kind {code}")))?;
            let timestamp = d.i64()?;
            let qualifier = d.bytes32()?;
            let value = d.bytes32()?;
            cells.push(LoggedCell {
                kind,
                timestamp,
                qualifier,
                value,
            });
        }
        families.push((family_id, cells));
    }
    Ok(LoggedMutation {
        region_id,
        sequence,
        row,
        families,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_finished_in_place_equals_an_appended_one() {
        // Lengths across xxh3's size classes (0, 1-3, 4-8, 9-16, 17-128,
        // 129-240 and longer, counting the 4 length bytes hashed first).
        for len in [0, 1, 3, 5, 12, 100, 125, 150, 236, 237, 241, 1000, 5000] {
            let payload: Vec<u8> = (0..len).map(|i| (i * 31 + len) as u8).collect();
            let payload = payload.as_slice();
            let mut appended = b"before".to_vec();
            append_frame(&mut appended, payload);
            let mut in_place = b"before".to_vec();
            let start = begin_frame(&mut in_place);
            in_place.extend_from_slice(payload);
            finish_frame(&mut in_place, start);
            assert_eq!(in_place, appended);
        }
    }

    #[test]
    fn mutation_round_trip() {
        let mut payload = Vec::new();
        let cells_a = vec![(CellKind::Put, 5i64, &b"q"[..], &b"v"[..])];
        let cells_b = vec![
            (CellKind::DeleteFamily, 9i64, &b""[..], &b""[..]),
            (CellKind::Put, 1i64, &b"x"[..], &b"yy"[..]),
        ];
        encode_mutation(
            &mut payload,
            7,
            42,
            b"row",
            vec![(1u32, cells_a.into_iter()), (3u32, cells_b.into_iter())].into_iter(),
        );
        assert_eq!(
            payload.len(),
            mutation_payload_bytes(
                3,
                [vec![(1, 1)], vec![(0, 0), (1, 2)]]
                    .into_iter()
                    .map(|cells| cells.into_iter())
            ),
            "the size is worked out exactly"
        );
        let m = decode_mutation(&payload).unwrap();
        assert_eq!(m.region_id, 7);
        assert_eq!(m.sequence, 42);
        assert_eq!(m.row, b"row");
        assert_eq!(m.families.len(), 2);
        assert_eq!(m.families[1].0, 3);
        assert_eq!(m.families[1].1[0].kind, CellKind::DeleteFamily);
        assert_eq!(m.families[1].1[1].value, b"yy");
        // Every truncation fails cleanly.
        for cut in 0..payload.len() {
            assert!(decode_mutation(&payload[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn multi_row_round_trip() {
        type Families<'a> = Vec<(u32, Vec<CellParts<'a>>)>;
        let rows: Vec<(&[u8], Families<'_>)> = vec![
            (b"a", vec![(1, vec![(CellKind::Put, 5, b"q", b"v")])]),
            (
                b"bb",
                vec![
                    (1, vec![(CellKind::Delete, 6, b"q", b"")]),
                    (2, vec![(CellKind::Put, 7, b"x", b"yy")]),
                ],
            ),
        ];
        let as_iter = || {
            rows.iter().map(|(row, families)| {
                (
                    *row,
                    families
                        .iter()
                        .map(|(id, cells)| (*id, cells.iter().copied())),
                )
            })
        };
        let mut payload = Vec::new();
        encode_multi_row(&mut payload, 9, 77, as_iter());
        let single = |row: &[u8], families: &Families<'_>| {
            let mut p = Vec::new();
            encode_mutation(
                &mut p,
                9,
                77,
                row,
                families
                    .iter()
                    .map(|(id, cells)| (*id, cells.iter().copied())),
            );
            p.len()
        };
        assert_eq!(
            payload.len(),
            multi_row_payload_bytes(rows.iter().map(|(row, f)| single(row, f))),
            "the size is worked out exactly"
        );
        let decoded = decode_mutations(&payload).unwrap();
        assert_eq!(decoded.len(), 2);
        assert!(decoded.iter().all(|m| (m.region_id, m.sequence) == (9, 77)));
        assert_eq!((decoded[0].row, decoded[1].row), (&b"a"[..], &b"bb"[..]));
        assert_eq!(decoded[1].families[1].1[0].value, b"yy");
        assert_eq!(
            decode_record(&payload).unwrap(),
            WalRecord::MultiRow(decoded.clone())
        );
        assert!(
            decode_mutation(&payload).is_err(),
            "not a single-row record"
        );
        // Every truncation fails cleanly: replay never applies part of it.
        for cut in 0..payload.len() {
            assert!(decode_mutations(&payload[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn frames_detect_damage() {
        let mut buf = Vec::new();
        append_frame(&mut buf, b"hello");
        assert_eq!(
            frame_at(&buf),
            FrameAt::Valid {
                payload: b"hello",
                frame_bytes: 17
            }
        );
        for i in 0..buf.len() {
            let mut damaged = buf.clone();
            damaged[i] ^= 0x10;
            assert_eq!(frame_at(&damaged), FrameAt::Invalid, "flip at {i}");
        }
        assert_eq!(frame_at(&buf[..16]), FrameAt::Invalid);
        assert_eq!(frame_at(&[0u8; 64]), FrameAt::Invalid);
    }

    #[test]
    fn commit_and_seal_records_round_trip() {
        let mut out = Vec::new();
        append_group_commit(&mut out, 3, 999);
        assert_eq!(out.len(), GROUP_COMMIT_FRAME_BYTES);
        let FrameAt::Valid { payload, .. } = frame_at(&out) else {
            panic!("invalid frame")
        };
        assert_eq!(
            decode_record(payload).unwrap(),
            WalRecord::GroupCommit(GroupCommit {
                frames: 3,
                bytes: 999
            })
        );
        let seal = Seal {
            frames: 7,
            max_sequence: 42,
            data_end: 4096,
        };
        let frame = seal_frame(seal);
        assert_eq!(frame.len(), SEAL_FRAME_BYTES);
        let FrameAt::Valid { payload, .. } = frame_at(&frame) else {
            panic!("invalid frame")
        };
        assert_eq!(decode_record(payload).unwrap(), WalRecord::Seal(seal));
        for cut in 0..payload.len() {
            assert!(decode_record(&payload[..cut]).is_err());
        }
        assert!(decode_record(&[9]).is_err());
    }

    #[test]
    fn segment_header_round_trip() {
        let h = segment_header(99);
        assert_eq!(
            parse_segment_header(&h).unwrap(),
            FileHeader {
                version: SEGMENT_VERSION,
                id: 99
            }
        );
        let mut bad = h;
        bad[17] ^= 1;
        assert!(parse_segment_header(&bad).is_err());
        assert!(parse_segment_header(&h[..10]).is_err());
    }

    fn cell_kind() -> impl proptest::strategy::Strategy<Value = CellKind> {
        proptest::sample::select(vec![
            CellKind::Put,
            CellKind::Delete,
            CellKind::DeleteFamilyVersion,
            CellKind::DeleteColumn,
            CellKind::DeleteFamily,
        ])
    }

    type Families = Vec<(u32, Vec<(CellKind, i64, Vec<u8>, Vec<u8>)>)>;

    proptest::proptest! {
        /// Every row mutation decodes to what was encoded, and its size is
        /// what `mutation_payload_bytes` says.
        #[test]
        fn any_mutation_round_trips(
            region_id in proptest::prelude::any::<u64>(),
            sequence in 0..crate::codec::MAX_STORED_ID,
            row in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
            families in proptest::collection::vec(
                (
                    proptest::prelude::any::<u32>(),
                    proptest::collection::vec(
                        (
                            cell_kind(),
                            proptest::prelude::any::<i64>(),
                            proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20),
                            proptest::collection::vec(proptest::prelude::any::<u8>(), 0..60),
                        ),
                        0..6,
                    ),
                ),
                0..4,
            ),
        ) {
            let families: Families = families;
            let mut payload = Vec::new();
            encode_mutation(
                &mut payload,
                region_id,
                sequence,
                &row,
                families.iter().map(|(id, cells)| {
                    (*id, cells.iter().map(|(k, t, q, v)| (*k, *t, q.as_slice(), v.as_slice())))
                }),
            );
            proptest::prop_assert_eq!(
                payload.len(),
                mutation_payload_bytes(
                    row.len(),
                    families.iter().map(|(_, cells)| cells.iter().map(|c| (c.2.len(), c.3.len())))
                )
            );
            let decoded = decode_mutation(&payload).unwrap();
            proptest::prop_assert_eq!(decoded.region_id, region_id);
            proptest::prop_assert_eq!(decoded.sequence, sequence);
            proptest::prop_assert_eq!(decoded.row, row.as_slice());
            let back: Families = decoded
                .families
                .iter()
                .map(|(id, cells)| {
                    (*id, cells.iter().map(|c| (c.kind, c.timestamp, c.qualifier.to_vec(), c.value.to_vec())).collect())
                })
                .collect();
            proptest::prop_assert_eq!(back, families);
            proptest::prop_assert_eq!(decode_record(&payload).unwrap(), WalRecord::Mutation(decoded));
        }

        /// Group commit and seal records decode to what was encoded, framed.
        #[test]
        fn any_commit_and_seal_record_round_trips(
            frames in proptest::prelude::any::<u32>(),
            bytes in proptest::prelude::any::<u64>(),
            seal in proptest::prelude::any::<(u64, u64, u64)>(),
        ) {
            let mut out = Vec::new();
            append_group_commit(&mut out, frames, bytes);
            let FrameAt::Valid { payload, frame_bytes } = frame_at(&out) else {
                return Err(proptest::test_runner::TestCaseError::fail("invalid frame"));
            };
            proptest::prop_assert_eq!(frame_bytes, GROUP_COMMIT_FRAME_BYTES);
            proptest::prop_assert_eq!(decode_record(payload).unwrap(), WalRecord::GroupCommit(GroupCommit { frames, bytes }));
            let seal = Seal { frames: seal.0, max_sequence: seal.1, data_end: seal.2 };
            let frame = seal_frame(seal);
            let FrameAt::Valid { payload, .. } = frame_at(&frame) else {
                return Err(proptest::test_runner::TestCaseError::fail("invalid frame"));
            };
            proptest::prop_assert_eq!(decode_record(payload).unwrap(), WalRecord::Seal(seal));
        }
    }
}
