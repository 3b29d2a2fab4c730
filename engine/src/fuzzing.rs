//! Entry points for the fuzz targets under `fuzz/` (`docs/reliability.md`,
//! "Fuzzing"), behind the `fuzzing` cargo feature. Not part of the stable
//! API: without the feature this module does not exist, and it exposes no
//! engine type, only functions over bytes.
//!
//! Each function feeds bytes the engine did not write to one of its
//! decoders, exactly as reading a file would, then checks what the decoder
//! promises about what it accepted (a round trip through its encoder
//! reproduces it, searches agree with a linear scan, ...). It answers with
//! an [`Outcome`]: the decoder's typed rejection, an acceptance, or a broken
//! promise, which the fuzz target turns into a crash. A panic inside a
//! decoder is a crash by itself.

use std::cmp::Ordering;
use std::path::Path;

use xxhash_rust::xxh3::xxh3_64;

use crate::cell::{
    CellKind, CellRef, OwnedCellFields, SeekKey, borrowed_fields, compare_keys, owned_fields,
};
use crate::codec::Encode;
use crate::file_meta::FileMeta;
use crate::hfile::FileInfo;
use crate::hfile::block::{BlockHandle, frame_block, unframe_block};
use crate::hfile::bloom;
use crate::hfile::data_block::{DataBlock, DataBlockBuilder, Position};
use crate::hfile::index::{IndexBlock, IndexEntry, encode_index};
use crate::hfile::{Trailer, decode_meta, encode_meta};
use crate::manifest::{Edit, edit};
use crate::manifest::{ManifestState, decode_edit, encode_edit, parse_manifest};
use crate::options::Compression;
use crate::options::{BloomType, FamilyDescriptor, TableDescriptor};
use crate::wal::format::{
    CellParts, FrameAt, GroupCommit, LEGACY_VERSION, LoggedMutation, SEGMENT_VERSION, Seal,
    WalRecord, append_frame, append_group_commit, decode_mutation, decode_mutations, decode_record,
    encode_multi_row, encode_mutation, frame_at, parse_segment_header, seal_frame, segment_header,
};
use crate::wal::replay::{SegmentEnd, check_segment, payload_at};

/// What a decoder made of fuzzed bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The decoder refused the bytes with a typed error (its message).
    Rejected(String),
    /// The decoder accepted the bytes and kept every promise checked.
    Accepted,
    /// The decoder accepted the bytes but broke a promise: a bug.
    Broken(String),
}

impl Outcome {
    fn check(ok: bool, broken: impl FnOnce() -> String) -> Outcome {
        if ok {
            Outcome::Accepted
        } else {
            Outcome::Broken(broken())
        }
    }
}

/// Returns early from a checking function with [`Outcome::Broken`].
macro_rules! ensure {
    ($ok:expr, $($why:tt)+) => {
        if !$ok {
            return Outcome::Broken(format!($($why)+));
        }
    };
}

/// One WAL record payload (the bytes inside a frame, after its checksum
/// held). An accepted record re-encodes to exactly the same bytes.
pub fn wal_record(payload: &[u8]) -> Outcome {
    let record = match decode_record(payload) {
        Ok(record) => record,
        Err(e) => return Outcome::Rejected(e.0),
    };
    let encoded = match &record {
        WalRecord::Mutation(m) => {
            ensure!(
                decode_mutation(payload).as_ref() == Ok(m),
                "decode_record and decode_mutation disagree"
            );
            let mut out = Vec::new();
            encode_mutation(&mut out, m.region_id, m.sequence, m.row, cell_parts(m));
            out
        }
        WalRecord::MultiRow(rows) => {
            ensure!(
                decode_mutations(payload).as_ref() == Ok(rows),
                "decode_record and decode_mutations disagree"
            );
            let (region_id, sequence) = rows.first().map_or((0, 0), |m| (m.region_id, m.sequence));
            let mut out = Vec::new();
            encode_multi_row(
                &mut out,
                region_id,
                sequence,
                rows.iter().map(|m| (m.row, cell_parts(m))),
            );
            out
        }
        WalRecord::GroupCommit(GroupCommit { frames, bytes }) => {
            let mut frame = Vec::new();
            append_group_commit(&mut frame, *frames, *bytes);
            frame_payload(&frame)
        }
        WalRecord::Seal(seal) => frame_payload(&seal_frame(*seal)),
    };
    Outcome::check(encoded == payload, || {
        format!("record {record:?} re-encodes to other bytes")
    })
}

/// A logged mutation's cells as the encoders take them.
fn cell_parts<'a>(
    m: &LoggedMutation<'a>,
) -> impl ExactSizeIterator<Item = (u32, impl ExactSizeIterator<Item = CellParts<'a>>)> {
    m.families.iter().map(|(family, cells)| {
        (
            *family,
            cells
                .iter()
                .map(|c| (c.kind, c.timestamp, c.qualifier, c.value)),
        )
    })
}

fn frame_payload(frame: &[u8]) -> Vec<u8> {
    match frame_at(frame) {
        FrameAt::Valid { payload, .. } => payload.to_vec(),
        FrameAt::Invalid => Vec::new(),
    }
}

/// A WAL segment file, checked as replay checks it.
///
/// The first byte chooses how the rest is read. Bit 0: the segment is the
/// newest of the log. Bit 1: the rest is the whole file, as is. Otherwise
/// the rest is a script that builds a segment from well-formed parts, so the
/// fuzzer reaches the rules behind the checksums: a header (bit 2: of the
/// legacy version 1), then steps of `kind u8, length u8, bytes`: 0 frames
/// the bytes as a record, 1 appends the group commit record of the records
/// since the last one, 2 appends the segment's seal record, 3 appends the
/// bytes unframed, 4 flips the bits of the second byte at the offset in the
/// first (scaled to the file); bit 3 of the first byte pads the file with
/// zeros to the next 4 KiB unit, as preallocation leaves it.
///
/// Promises checked: everything the check keeps lies inside the file and
/// in order; every row mutation it hands to replay decodes; a segment that
/// ends sealed or clean (version 2) has no uncommitted record; and in a
/// segment built only from whole parts, each record it keeps is one that
/// was written at that offset.
pub fn wal_segment(input: &[u8]) -> Outcome {
    let Some((&flags, rest)) = input.split_first() else {
        return Outcome::Rejected("empty input".into());
    };
    let newest = flags & 1 != 0;
    let (bytes, written) = if flags & 2 != 0 {
        (rest.to_vec(), None)
    } else {
        let (bytes, written, tampered) = build_segment(flags, rest);
        (bytes, (!tampered).then_some(written))
    };
    let header = match parse_segment_header(&bytes) {
        Ok(header) => header,
        Err(e) => return Outcome::Rejected(e.0),
    };
    let check = check_segment(&bytes, header.version, newest);
    let len = bytes.len() as u64;
    ensure!(
        check.keep_end <= len && check.dirty_end <= len,
        "kept end {} or dirty end {} past the file's {len} bytes",
        check.keep_end,
        check.dirty_end
    );
    let mut previous_end = 0u64;
    for &(offset, frame_bytes) in &check.mutations {
        ensure!(
            offset >= previous_end && offset + frame_bytes as u64 <= check.keep_end.max(len),
            "mutation at {offset} out of order or outside the file"
        );
        previous_end = offset + frame_bytes as u64;
        let payload = payload_at(&bytes, offset, frame_bytes);
        if header.version == SEGMENT_VERSION {
            ensure!(
                decode_mutations(payload).is_ok(),
                "the check keeps an undecodable mutation at {offset}"
            );
        }
        if let Some(written) = &written {
            // Version 2 keeps row mutations; version 1 keeps every frame
            // (replay decodes them and refuses an undecodable one).
            let kept_kind = if header.version == SEGMENT_VERSION {
                &written.mutations
            } else {
                &written.frames
            };
            ensure!(
                kept_kind
                    .iter()
                    .any(|(at, p)| *at == offset && p == payload),
                "the check keeps a record at {offset} that was never written there"
            );
        }
    }
    if header.version == SEGMENT_VERSION
        && matches!(check.end, SegmentEnd::Sealed | SegmentEnd::Clean)
    {
        ensure!(
            check.uncommitted == (0, 0),
            "a segment ending {:?} with uncommitted records",
            check.end
        );
    }
    match check.end {
        SegmentEnd::Corrupt { reason, .. } => Outcome::Rejected(reason),
        _ => Outcome::Accepted,
    }
}

/// What [`build_segment`] framed, each with its offset.
struct Written {
    /// Every payload framed.
    frames: Vec<(u64, Vec<u8>)>,
    /// The framed payloads that are row mutations.
    mutations: Vec<(u64, Vec<u8>)>,
}

/// Builds a segment from the script [`wal_segment`] describes; returns the
/// bytes, what was framed, and whether a step wrote raw bytes or flipped
/// bits.
fn build_segment(flags: u8, script: &[u8]) -> (Vec<u8>, Written, bool) {
    let mut bytes = if flags & 4 != 0 {
        legacy_header(7).to_vec()
    } else {
        segment_header(7).to_vec()
    };
    let mut written = Written {
        frames: Vec::new(),
        mutations: Vec::new(),
    };
    let mut tampered = false;
    let (mut group_frames, mut group_start, mut all_frames, mut max_sequence) =
        (0u32, bytes.len() as u64, 0u64, 0u64);
    let mut steps = script;
    while let [kind, len, rest @ ..] = steps {
        let (part, after) = rest.split_at(usize::from(*len).min(rest.len()));
        steps = after;
        match kind % 5 {
            0 => {
                let offset = bytes.len() as u64;
                append_frame(&mut bytes, part);
                written.frames.push((offset, part.to_vec()));
                if let Ok(rows) = decode_mutations(part) {
                    written.mutations.push((offset, part.to_vec()));
                    let sequence = rows.iter().map(|m| m.sequence).max().unwrap_or(0);
                    max_sequence = max_sequence.max(sequence);
                    group_frames += 1;
                    all_frames += 1;
                }
            }
            1 => {
                let end = bytes.len() as u64;
                append_group_commit(&mut bytes, group_frames, end - group_start);
                written.frames.push((
                    end,
                    frame_payload(bytes.get(end as usize..).unwrap_or_default()),
                ));
                group_frames = 0;
                group_start = bytes.len() as u64;
            }
            2 => {
                let data_end = bytes.len() as u64;
                let seal = seal_frame(Seal {
                    frames: all_frames,
                    max_sequence,
                    data_end,
                });
                written.frames.push((data_end, frame_payload(&seal)));
                bytes.extend_from_slice(&seal);
            }
            3 => {
                bytes.extend_from_slice(part);
                tampered |= !part.is_empty();
            }
            _ => {
                if let [at, mask, ..] = part
                    && *mask != 0
                {
                    let index = usize::from(*at) * bytes.len() / 256;
                    if let Some(byte) = bytes.get_mut(index) {
                        *byte ^= mask;
                        tampered = true;
                    }
                }
            }
        }
    }
    if flags & 8 != 0 {
        bytes.resize(bytes.len().div_ceil(4096) * 4096 + 4096, 0);
    }
    (bytes, written, tampered)
}

/// A version-1 segment header (the layout of [`segment_header`] with the
/// legacy version).
fn legacy_header(id: u64) -> [u8; 32] {
    let mut h = Vec::with_capacity(32);
    h.extend_from_slice(b"STRATAWL");
    h.put_u32(LEGACY_VERSION);
    h.put_u32(0);
    h.put_u64(id);
    let checksum = xxh3_64(&h);
    h.put_u64(checksum);
    let mut out = [0u8; 32];
    out.copy_from_slice(&h);
    out
}

/// A stored HFile block (payload, compression byte, length, checksum). An
/// accepted block's payload frames and unframes back to itself, raw and
/// compressed.
pub fn hfile_block(stored: &[u8]) -> Outcome {
    let payload = match unframe_block(stored.to_vec()) {
        Ok(payload) => payload,
        Err(e) => return Outcome::Rejected(e.0),
    };
    for compression in Compression::ALL {
        let mut framed = Vec::new();
        frame_block(&payload, compression, &mut framed);
        ensure!(
            unframe_block(framed).as_ref() == Ok(&payload),
            "a payload does not survive framing with {compression:?}"
        );
    }
    Outcome::Accepted
}

/// A data block payload (after unframing). An accepted block's cells are in
/// strictly ascending order, walk the same forwards and backwards, re-encode
/// to a block holding the same cells, and its seeks agree with a linear
/// scan, for every row of the block and for keys between them.
pub fn data_block(payload: &[u8]) -> Outcome {
    let block = match DataBlock::decode(payload.to_vec()) {
        Ok(block) => block,
        Err(e) => return Outcome::Rejected(e.0),
    };
    let mut cells: Vec<OwnedCellFields> = Vec::new();
    let mut positions = Vec::new();
    let mut p = (block.cells() > 0).then_some(Position { row: 0, cell: 0 });
    while let Some(at) = p {
        ensure!(
            positions.len() < block.cells(),
            "the walk yields more cells than the block's {}",
            block.cells()
        );
        let cell = block.cell(at);
        ensure!(
            block.row_of_cell(at.cell) == at.row && cell.row == block.row(at.row),
            "cell {} is not in the row it is walked in",
            at.cell
        );
        if let Some(last) = cells.last() {
            ensure!(
                compare_keys(borrowed_fields(last).tuple(), cell.tuple()) == Ordering::Less,
                "cells out of order at {}",
                at.cell
            );
        }
        cells.push(owned_fields(&cell));
        positions.push(at);
        p = block.next(at);
    }
    ensure!(
        cells.len() == block.cells(),
        "the walk yields {} of {} cells",
        cells.len(),
        block.cells()
    );
    for (i, &at) in positions.iter().enumerate().rev() {
        let previous = block.previous(at);
        ensure!(
            previous == i.checked_sub(1).and_then(|j| positions.get(j).copied()),
            "previous of cell {i} is {previous:?}"
        );
    }
    let _ = (
        block.row_key_batch(),
        block.qualifier_batch(),
        block.value_batch(),
    );
    let mut builder = DataBlockBuilder::default();
    for c in &cells {
        builder.add(&borrowed_fields(c));
    }
    let reencoded = if builder.is_empty() {
        None
    } else {
        Some(builder.finish_block(false))
    };
    if let Some(reencoded) = reencoded {
        let again = match DataBlock::decode(reencoded) {
            Ok(block) => block,
            Err(e) => return Outcome::Broken(format!("re-encoded block does not decode: {e}")),
        };
        ensure!(
            again.cells() == cells.len(),
            "re-encoded block has another cell count"
        );
        let mut p = again.last();
        for c in cells.iter().rev() {
            let Some(at) = p else {
                return Outcome::Broken("re-encoded block ends early".into());
            };
            ensure!(
                owned_fields(&again.cell(at)) == *c,
                "re-encoded cell differs"
            );
            p = again.previous(at);
        }
    }
    // At most 64 rows probed (and the keys just after them): a linear scan
    // per probe makes the check quadratic in the block's cells.
    let step = cells.len().div_ceil(64).max(1);
    let sampled = || cells.iter().step_by(step);
    let mut probes: Vec<Vec<u8>> = sampled().map(|c| c.0.clone()).collect();
    probes.extend(sampled().map(|c| [c.0.as_slice(), &[0]].concat()));
    probes.push(Vec::new());
    probes.push(vec![0xFF; 4]);
    for probe in &probes {
        let key = SeekKey::row_start(probe);
        let want = cells
            .iter()
            .position(|c| c.0.as_slice() >= probe.as_slice());
        let got = block.seek(&key);
        ensure!(
            got.map(|at| owned_fields(&block.cell(at))) == want.map(|i| cells[i].clone()),
            "seek to {probe:?} finds {got:?}, a scan finds cell {want:?}"
        );
        let from = Position { row: 0, cell: 0 };
        if block.cells() > 0
            && cells
                .first()
                .is_some_and(|c| c.0.as_slice() <= probe.as_slice())
        {
            let galloped = block.seek_from(&key, from);
            ensure!(
                galloped.map(|at| owned_fields(&block.cell(at))) == want.map(|i| cells[i].clone()),
                "seek_from to {probe:?} finds {galloped:?}, a scan finds cell {want:?}"
            );
        }
        let want_before = cells
            .iter()
            .rposition(|c| c.0.as_slice() < probe.as_slice());
        let before = block.seek_before(&key);
        ensure!(
            before.map(|at| owned_fields(&block.cell(at))) == want_before.map(|i| cells[i].clone()),
            "seek_before {probe:?} finds {before:?}, a scan finds cell {want_before:?}"
        );
    }
    Outcome::Accepted
}

/// An index block payload; the first 8 bytes of `input` are the limit
/// (little-endian) its handles must stay below. An accepted index re-encodes
/// to the same entries, and its searches agree with linear scans.
pub fn index_block(input: &[u8]) -> Outcome {
    let Some((limit, payload)) = input.split_first_chunk::<8>() else {
        return Outcome::Rejected("no limit".into());
    };
    let limit = u64::from_le_bytes(*limit);
    let index = match IndexBlock::decode(payload.to_vec(), limit) {
        Ok(index) => index,
        Err(e) => return Outcome::Rejected(e.0),
    };
    let entries: Vec<IndexEntry> = (0..index.len())
        .map(|i| IndexEntry {
            first_row: index.first_row(i).to_vec(),
            last_row: index.last_row(i).to_vec(),
            handle: index.handle(i),
            ordinal_base: index.ordinal_base(i),
        })
        .collect();
    for e in &entries {
        ensure!(
            e.handle.offset.saturating_add(u64::from(e.handle.len)) <= limit,
            "an accepted handle {:?} passes the limit {limit}",
            e.handle
        );
    }
    let again = match IndexBlock::decode(encode_index(&entries), limit) {
        Ok(again) => again,
        Err(e) => return Outcome::Broken(format!("re-encoded index does not decode: {e}")),
    };
    ensure!(
        (0..again.len()).all(|i| again.handle(i) == entries[i].handle
            && again.first_row(i) == entries[i].first_row
            && again.last_row(i) == entries[i].last_row
            && again.ordinal_base(i) == entries[i].ordinal_base)
            && again.len() == entries.len(),
        "re-encoded index differs"
    );
    let step = entries.len().div_ceil(64).max(1);
    let mut probes: Vec<&[u8]> = entries
        .iter()
        .step_by(step)
        .flat_map(|e| [e.first_row.as_slice(), e.last_row.as_slice()])
        .collect();
    probes.push(b"");
    probes.push(&[0xFF; 4]);
    for probe in probes {
        let ending = entries
            .iter()
            .position(|e| e.last_row.as_slice() >= probe)
            .unwrap_or(entries.len());
        ensure!(
            index.first_ending_at_or_after(probe) == ending,
            "first_ending_at_or_after({probe:?}) disagrees with a scan"
        );
        let starting = entries
            .iter()
            .rposition(|e| e.first_row.as_slice() <= probe);
        ensure!(
            index.last_starting_at_or_before(probe) == starting,
            "last_starting_at_or_before({probe:?}) disagrees with a scan"
        );
        let before = entries.iter().rposition(|e| e.first_row.as_slice() < probe);
        ensure!(
            index.last_starting_before(probe) == before,
            "last_starting_before({probe:?}) disagrees with a scan"
        );
    }
    Outcome::Accepted
}

/// A bloom filter block probed in place: the first byte of `input` says
/// where the filter's bytes end (scaled), the rest are keys separated by
/// zero bytes. Probes of any bytes never panic; a filter built from the
/// keys contains every one of them (no false negatives).
pub fn bloom(input: &[u8]) -> Outcome {
    let Some((&cut, rest)) = input.split_first() else {
        return Outcome::Rejected("empty input".into());
    };
    let split = usize::from(cut) * rest.len() / 256;
    let (filter, keys) = rest.split_at(split);
    let keys: Vec<&[u8]> = keys.split(|&b| b == 0).collect();
    for key in &keys {
        let hash = bloom::row_hash(key);
        bloom::prefetch(filter, hash);
        let _ = bloom::may_contain(filter, hash);
        let _ = bloom::may_contain(filter, bloom::cell_hash(key, b"q"));
    }
    let hashes: Vec<u64> = keys.iter().map(|k| bloom::row_hash(k)).collect();
    let bits_per_key = u32::from(cut % 24);
    let built = bloom::build(&hashes, bits_per_key);
    Outcome::check(
        hashes.iter().all(|&h| bloom::may_contain(&built, h)),
        || "a built filter misses one of its keys".into(),
    )
}

/// An HFile's 64-byte trailer followed by a meta block payload; the file's
/// size is the trailer's end plus the first 4 bytes of `input` (little-
/// endian). An accepted trailer or meta re-encodes to what decodes the same.
pub fn hfile_trailer(input: &[u8]) -> Outcome {
    let Some((extra, rest)) = input.split_first_chunk::<4>() else {
        return Outcome::Rejected("no size".into());
    };
    let (trailer_bytes, meta) = rest.split_at(rest.len().min(crate::hfile::TRAILER_BYTES));
    let file_size = u64::from(u32::from_le_bytes(*extra)) + 64;
    match Trailer::decode(trailer_bytes, file_size) {
        Ok(trailer) => {
            let again = Trailer::decode(&trailer.encode(), file_size);
            ensure!(
                again.as_ref() == Ok(&trailer),
                "re-encoded trailer decodes to {again:?}"
            );
            for h in [trailer.meta, trailer.index, trailer.bloom] {
                ensure!(
                    h.offset.saturating_add(u64::from(h.len)) <= file_size,
                    "an accepted trailer points past the file: {h:?}"
                );
            }
        }
        Err(e) => {
            if meta.is_empty() {
                return Outcome::Rejected(e.0);
            }
        }
    }
    match decode_meta(meta, 1, file_size) {
        Ok((file_meta, info)) => {
            let again = decode_meta(&encode_meta(&file_meta, &info), 1, file_size);
            Outcome::check(again == Ok((file_meta, info)), || {
                "re-encoded meta differs".into()
            })
        }
        Err(e) => Outcome::Rejected(e.0),
    }
}

/// One manifest edit payload. An accepted edit re-encodes to bytes that
/// decode to the same edit, and applies to a catalog without failing.
pub fn manifest_edit(payload: &[u8]) -> Outcome {
    let edit = match decode_edit(payload) {
        Ok(edit) => edit,
        Err(e) => return Outcome::Rejected(e.0),
    };
    let again = decode_edit(&encode_edit(&edit));
    ensure!(
        again.as_ref() == Ok(&edit),
        "edit {edit:?} re-encodes to {again:?}"
    );
    let mut state = ManifestState::default();
    state.apply(&edit);
    state.apply(&edit);
    let _ = state.live_files();
    Outcome::Accepted
}

/// A whole manifest file (header, commit slots, edit frames), read as
/// opening a database reads it. Bit 0 of the first byte: the rest is the
/// file as is; otherwise the rest is edit payloads (`length u8, bytes`),
/// framed behind a valid header and a commit slot covering all of them,
/// so the fuzzer reaches the edits.
pub fn manifest_file(input: &[u8]) -> Outcome {
    let Some((&flags, rest)) = input.split_first() else {
        return Outcome::Rejected("empty input".into());
    };
    let bytes = if flags & 1 != 0 {
        rest.to_vec()
    } else {
        let mut bytes = crate::wal::format::file_header(b"STRATAMF", 3).to_vec();
        bytes.resize(96, 0);
        let mut steps = rest;
        while let [len, tail @ ..] = steps {
            let (part, after) = tail.split_at(usize::from(*len).min(tail.len()));
            steps = after;
            if !part.is_empty() {
                append_frame(&mut bytes, part);
            }
        }
        let mut slot = Vec::new();
        slot.put_u64(1);
        slot.put_u64(bytes.len() as u64);
        slot.put_u64(0);
        let checksum = xxh3_64(&slot);
        slot.put_u64(checksum);
        // Generation 1 lives in the second slot.
        if let Some(at) = bytes.get_mut(64..96) {
            at.copy_from_slice(&slot);
        }
        bytes
    };
    match parse_manifest(&bytes, Path::new("MANIFEST-000003")) {
        Ok((state, _)) => Outcome::check(
            state.next_table_id > state.tables.keys().copied().max().unwrap_or(0),
            || "a table id at or above the next table id".into(),
        ),
        Err(e) => Outcome::Rejected(e.to_string()),
    }
}

/// Valid inputs for the fuzz target named `target` (the function of this
/// module of that name), to start its corpus from: the fuzzer then mutates
/// well-formed bytes instead of discovering the format from nothing.
pub fn seed_inputs(target: &str) -> Vec<Vec<u8>> {
    match target {
        "wal_record" => wal_record_seeds(),
        "wal_segment" => wal_record_seeds()
            .into_iter()
            .filter(|p| decode_mutation(p).is_ok())
            .map(|p| {
                let mut script = vec![0u8, 0, p.len() as u8];
                script.extend_from_slice(&p);
                script.extend_from_slice(&[1, 0, 0, 0, p.len() as u8]);
                script.extend_from_slice(&p);
                script.extend_from_slice(&[1, 0, 2, 0]);
                script
            })
            .chain([vec![9, 0, 0], vec![11]])
            .collect(),
        "hfile_block" => {
            let payload = sample_block();
            Compression::ALL
                .into_iter()
                .map(|compression| {
                    let mut out = Vec::new();
                    frame_block(&payload, compression, &mut out);
                    out
                })
                .collect()
        }
        "data_block" => vec![sample_block(), one_cell_per_row_block()],
        "index_block" => {
            let entries: Vec<IndexEntry> = (0..6u64)
                .map(|i| IndexEntry {
                    first_row: format!("row{:02}", i * 2).into_bytes(),
                    last_row: format!("row{:02}", i * 2 + 1).into_bytes(),
                    handle: BlockHandle {
                        offset: i * 100,
                        len: 100,
                    },
                    ordinal_base: i * 3,
                })
                .collect();
            let mut input = 1000u64.to_le_bytes().to_vec();
            input.extend_from_slice(&encode_index(&entries));
            vec![input]
        }
        "bloom" => {
            let hashes: Vec<u64> = (0..20)
                .map(|i: u32| bloom::row_hash(&i.to_le_bytes()))
                .collect();
            let filter = bloom::build(&hashes, 10);
            let mut input = vec![200u8];
            input.extend_from_slice(&filter);
            input.extend_from_slice(b"row1\0row2\0row3");
            vec![input]
        }
        "hfile_trailer" => {
            let trailer = Trailer {
                meta: BlockHandle {
                    offset: 0,
                    len: 100,
                },
                index: BlockHandle {
                    offset: 100,
                    len: 50,
                },
                bloom: BlockHandle { offset: 0, len: 0 },
                data_blocks: 1,
            };
            let mut input = 200u32.to_le_bytes().to_vec();
            input.extend_from_slice(&trailer.encode());
            input.extend_from_slice(&encode_meta(&sample_file_meta(), &sample_file_info()));
            vec![input]
        }
        "manifest_edit" => manifest_seeds(),
        "manifest_file" => {
            let mut input = vec![0u8];
            for edit in manifest_seeds() {
                if edit.len() < 256 {
                    input.push(edit.len() as u8);
                    input.extend_from_slice(&edit);
                }
            }
            vec![input]
        }
        _ => Vec::new(),
    }
}

fn wal_record_seeds() -> Vec<Vec<u8>> {
    let mut mutation = Vec::new();
    let cells = [
        (CellKind::Put, 5i64, &b"q"[..], &b"v"[..]),
        (CellKind::DeleteColumn, 4, b"r", b""),
    ];
    encode_mutation(
        &mut mutation,
        3,
        42,
        b"row",
        [
            (1u32, cells.iter().copied()),
            (2, cells[..1].iter().copied()),
        ]
        .into_iter(),
    );
    let mut group = Vec::new();
    append_group_commit(&mut group, 2, 300);
    let seal = seal_frame(Seal {
        frames: 4,
        max_sequence: 42,
        data_end: 4000,
    });
    vec![mutation, frame_payload(&group), frame_payload(&seal)]
}

fn sample_block() -> Vec<u8> {
    let mut builder = DataBlockBuilder::default();
    for row in 0..4u8 {
        for (q, kind) in [(&b"a"[..], CellKind::Put), (b"bb", CellKind::Delete)] {
            builder.add(&CellRef {
                row: &[b'r', row],
                qualifier: q,
                timestamp: 1000 + i64::from(row),
                kind,
                sequence: 10 + u64::from(row),
                value: if kind == CellKind::Put { b"value" } else { b"" },
            });
        }
    }
    builder.finish_block(false)
}

fn one_cell_per_row_block() -> Vec<u8> {
    let mut builder = DataBlockBuilder::default();
    for row in 0..8u8 {
        builder.add(&CellRef {
            row: &[b'k', row, row],
            qualifier: b"",
            timestamp: 7,
            kind: CellKind::Put,
            sequence: 1,
            value: &[row; 3],
        });
    }
    builder.finish_block(false)
}

fn sample_file_meta() -> FileMeta {
    FileMeta {
        id: 1,
        size: 264,
        first_row: b"a".to_vec(),
        last_row: b"z".to_vec(),
        min_timestamp: 1,
        max_timestamp: 9,
        min_sequence: 2,
        max_sequence: 8,
        cells: 10,
        rows: 3,
        markers: 1,
    }
}

fn sample_file_info() -> FileInfo {
    FileInfo {
        family: b"f".to_vec(),
        bloom: BloomType::Row,
        bloom_keys: 3,
        compression: Compression::Zstd { level: 3 },
        block_size: 4096,
        data_blocks: 1,
        index_levels: 1,
        bulk: None,
        column_rows: None,
    }
}

fn manifest_seeds() -> Vec<Vec<u8>> {
    let descriptor = TableDescriptor::new("ns:t")
        .family(FamilyDescriptor::new("f").max_versions(3))
        .family(FamilyDescriptor::new("g"));
    let region = crate::manifest::RegionRecord {
        id: 4,
        start: b"".to_vec(),
        end: b"m".to_vec(),
        flushed_sequence: 9,
        files: vec![crate::manifest::StoreFile {
            family_id: 1,
            level: 0,
            meta: sample_file_meta(),
        }],
    };
    let edits = [
        Edit::NextIds(edit::NextIds {
            table: 2,
            region: 5,
            family: 3,
            file: 2,
            last_sequence: 9,
        }),
        Edit::CreateNamespace(edit::CreateNamespace { name: "ns".into() }),
        Edit::CreateTable(crate::manifest::TableRecord {
            id: 1,
            descriptor,
            family_ids: vec![1, 2],
            regions: vec![region.clone()],
            enabled: true,
        }),
        Edit::Flush(edit::Flush {
            table_id: 1,
            region_id: 4,
            flushed_sequence: 12,
            files: vec![(2, sample_file_meta())],
        }),
        Edit::Compaction(edit::Compaction {
            table_id: 1,
            region_id: 4,
            family_id: 1,
            removed: vec![1],
            added: vec![(1, sample_file_meta())],
        }),
        Edit::SplitRegion(edit::SplitRegion {
            table_id: 1,
            parent_id: 4,
            daughters: vec![region],
        }),
        Edit::SetEnabled(edit::SetEnabled {
            table_id: 1,
            enabled: false,
        }),
        Edit::DropTable(edit::DropTable { table_id: 1 }),
    ];
    edits.iter().map(encode_edit).collect()
}
