//! Round trips and damage detection for whole HFiles.

use std::cmp::Ordering;
use std::sync::Arc;

use proptest::prelude::*;

use super::bloom::row_hash;
use super::reader::{FileCursor, HFileReader, ReadAheadStop};
use super::writer::{HFileWriter, WriterOptions};
use crate::cell::SeekKey;
use crate::cell::{CellKind, compare_keys};
use crate::error::Error;
use crate::hfile::cache::BlockCache;
use crate::io::{Backend, Io};
use crate::options::{BloomType, Compression};

use crate::cell::{OwnedCellFields as Owned, borrowed_fields as r, owned_fields};
/// A seek key's fields: row, qualifier, timestamp, kind, sequence.
type OwnedKey = (Vec<u8>, Vec<u8>, i64, CellKind, u64);

fn cells_strategy(max: usize) -> impl Strategy<Value = Vec<Owned>> {
    proptest::collection::vec(
        (
            proptest::collection::vec(0u8..8, 1..5),
            proptest::collection::vec(0u8..4, 0..3),
            0i64..1_000_000,
            prop_oneof![4 => Just(CellKind::Put), 1 => Just(CellKind::DeleteColumn), 1 => Just(CellKind::DeleteFamily)],
            0u64..1_000_000,
            proptest::collection::vec(any::<u8>(), 0..40),
        ),
        1..max,
    )
    .prop_map(|mut cells| {
        cells.sort_by(|a, b| compare_keys(r(a).tuple(), r(b).tuple()));
        cells.dedup_by(|a, b| compare_keys(r(a).tuple(), r(b).tuple()) == Ordering::Equal);
        cells
    })
}

fn write(
    dir: &std::path::Path,
    cells: &[Owned],
    block_size: usize,
    compression: Compression,
    bloom: BloomType,
) -> Arc<HFileReader> {
    let io = Io::with_backend(Backend::Sync);
    let path = dir.join("f.hfile");
    let _ = std::fs::remove_file(&path);
    let mut w = HFileWriter::create(
        io.clone(),
        &path,
        writer_options(block_size, compression, bloom),
    )
    .unwrap();
    for c in cells {
        w.add(&r(c)).unwrap();
    }
    let meta = w.finish(7).unwrap();
    assert_eq!(meta.cells, cells.len() as u64);
    open(&io, dir, Arc::new(BlockCache::new(1 << 20)))
}

/// A writer of family `f` with 10 bloom bits a key, no bulk-load role and
/// no I/O budget.
fn writer_options(block_size: usize, compression: Compression, bloom: BloomType) -> WriterOptions {
    WriterOptions {
        family: b"f".to_vec(),
        block_size,
        compression,
        bloom,
        bloom_bits_per_key: 10,
        bulk: None,
        budget: None,
    }
}

/// The file [`write`] wrote in `dir` (id 7), opened through `cache`.
fn open(io: &Io, dir: &std::path::Path, cache: Arc<BlockCache>) -> Arc<HFileReader> {
    Arc::new(HFileReader::open(io.clone(), &dir.join("f.hfile"), 7, cache, true).unwrap())
}

/// `count` puts of column `q` at timestamp 1, one per row `row{i}` (`i`
/// zero-padded to `digits`, so rows sort by number), each with sequence
/// `i` and value `value`.
fn numbered_cells(count: u32, digits: usize, value: &[u8]) -> Vec<Owned> {
    (0..count)
        .map(|i| {
            (
                format!("row{i:0digits$}").into_bytes(),
                b"q".to_vec(),
                1,
                CellKind::Put,
                u64::from(i),
                value.to_vec(),
            )
        })
        .collect()
}

/// Every cell of the file through `cursor`, first to last.
fn read_all(cursor: &mut FileCursor) -> Vec<Owned> {
    let mut out = Vec::new();
    cursor.seek_to_first().unwrap();
    while let Some(c) = cursor.current() {
        out.push(owned_fields(&c));
        cursor.advance().unwrap();
    }
    out
}

#[test]
fn read_ahead_returns_the_same_cells_and_whole_file_passes_leave_the_cache_alone() {
    let cells = numbered_cells(3000, 6, &[7u8; 30]);
    let dir = tempfile::tempdir().unwrap();
    // Write once, then open with a cache we can watch.
    write(dir.path(), &cells, 256, Compression::None, BloomType::Row);
    // The back end the suite runs under (CI runs it under both).
    let io = Io::resolve(crate::options::IoMode::Auto).unwrap();
    let cache = Arc::new(BlockCache::new(8 << 20));
    let reader = open(&io, dir.path(), cache.clone());
    assert!(reader.block_count() > 100);
    assert!(reader.info().index_levels == 1);
    // A compaction-style pass: batches of blocks, none of them cached.
    assert_eq!(
        read_all(&mut FileCursor::for_whole_file(reader.clone())),
        cells
    );
    assert_eq!(cache.stats().bytes, 0);
    // A scan: reads ahead after two sequential misses, caching what it reads.
    assert_eq!(read_all(&mut FileCursor::new(reader.clone())), cells);
    assert!(cache.stats().bytes > 0);
    // Backward after forward: the read-ahead queue is dropped, cells stay right.
    let mut cursor = FileCursor::new(reader.clone());
    cursor.seek_to_last().unwrap();
    assert_eq!(
        cursor.current().map(|c| c.row.to_vec()),
        Some(cells[2999].0.clone())
    );
    cursor
        .seek_before(&SeekKey::row_start(b"row001500"))
        .unwrap();
    assert_eq!(
        cursor.current().map(|c| c.row.to_vec()),
        Some(cells[1499].0.clone())
    );
}

#[test]
fn read_ahead_stops_at_the_reads_last_row() {
    let cells = numbered_cells(3000, 6, &[7u8; 30]);
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &cells, 256, Compression::None, BloomType::Row);
    let io = Io::resolve(crate::options::IoMode::Auto).unwrap();
    // Rows 0..200 of a pass that stops there: cached blocks, with and
    // without the stop, each on a fresh cache.
    let cached_after_pass = |stop: Option<ReadAheadStop>| {
        let cache = Arc::new(BlockCache::new(8 << 20));
        let reader = open(&io, dir.path(), cache.clone());
        let mut cursor = FileCursor::new(reader).with_read_ahead_stop(stop.map(Arc::new));
        cursor.seek_to_first().unwrap();
        for cell in &cells[..200] {
            assert_eq!(
                cursor.current().map(|c| c.row.to_vec()),
                Some(cell.0.clone())
            );
            cursor.advance().unwrap();
        }
        cache.stats().bytes
    };
    let unbounded = cached_after_pass(None);
    let excluded = cached_after_pass(Some(ReadAheadStop {
        row: b"row000200".to_vec(),
        excluded: true,
    }));
    let included = cached_after_pass(Some(ReadAheadStop {
        row: b"row000199".to_vec(),
        excluded: false,
    }));
    // 200 rows of ~50 bytes are ~40 blocks of 256 bytes; an unbounded
    // pass has read 64 and 128 KiB batches ahead by then.
    assert!(unbounded > 3 * excluded, "{unbounded} vs {excluded}");
    assert_eq!(excluded, included);
}

#[test]
fn blocks_stay_within_the_block_size() {
    // 16-byte rows with 100-byte values, as the benchmarks write them: a
    // block's whole frame (payload and trailer) must not cross the block
    // size, since a raw block is cached in the buffer its frame was read
    // into (the allocator would round 16.1 KiB up to 20 KiB).
    let cells: Vec<Owned> = (0..5000u32)
        .map(|i| {
            let row = format!("{i:016}").into_bytes();
            (
                row,
                Vec::new(),
                1,
                CellKind::Put,
                u64::from(i),
                vec![5u8; 100],
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let reader = write(
        dir.path(),
        &cells,
        16 * 1024,
        Compression::None,
        BloomType::Row,
    );
    assert!(reader.block_count() > 30);
    for ordinal in 0..reader.block_count() {
        let stored = reader.block_len(ordinal).unwrap();
        assert!(
            stored <= 16 * 1024,
            "block {ordinal}: {stored} bytes stored"
        );
        if ordinal + 1 < reader.block_count() {
            assert!(stored > 15 * 1024, "block {ordinal} is filled: {stored}");
        }
    }
}

/// Rows of a few small cells (a wide table's row, as a bulk load or a
/// compaction writes it) lie whole in one block: a block ends before a row
/// the row before says will not fit, so a scan's block runs go on across
/// blocks. The blocks stay within the block size and nearly full.
#[test]
fn small_rows_lie_whole_in_one_block() {
    let qualifiers: [&[u8]; 4] = [b"amount", b"cat", b"note", b"qty"];
    let cells: Vec<Owned> = (0..20_000u64)
        .flat_map(|i| {
            qualifiers.iter().map(move |q| {
                let value = if q.len() == 3 {
                    b"cat3".to_vec()
                } else {
                    i.to_be_bytes().to_vec()
                };
                (
                    i.to_be_bytes().to_vec(),
                    q.to_vec(),
                    1,
                    CellKind::Put,
                    0,
                    value,
                )
            })
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let block_size = 14 * 1024;
    let reader = write(
        dir.path(),
        &cells,
        block_size,
        Compression::None,
        BloomType::Row,
    );
    assert!(reader.block_count() > 50);
    for ordinal in 0..reader.block_count() {
        let block = reader.data_block(ordinal).unwrap();
        assert_eq!(
            block.whole_rows(),
            block.rows(),
            "block {ordinal}'s last row goes on"
        );
        let stored = reader.block_len(ordinal).unwrap() as usize;
        assert!(
            stored <= block_size,
            "block {ordinal}: {stored} bytes stored"
        );
        if ordinal + 1 < reader.block_count() {
            assert!(
                stored > block_size - 200,
                "block {ordinal} is filled: {stored}"
            );
        }
    }
}

#[test]
fn a_cell_count_hint_changes_no_byte_of_the_file() {
    let cells = numbered_cells(3_000, 5, b"value");
    let dir = tempfile::tempdir().unwrap();
    let io = Io::with_backend(Backend::Sync);
    let file_bytes = |hint: Option<u64>, bloom: BloomType| {
        let path = dir.path().join("hinted.hfile");
        let _ = std::fs::remove_file(&path);
        let options = writer_options(1024, Compression::None, bloom);
        let mut w = HFileWriter::create(io.clone(), &path, options).unwrap();
        if let Some(hint) = hint {
            w.expect_cells(hint);
        }
        for c in &cells {
            w.add(&r(c)).unwrap();
        }
        w.finish(7).unwrap();
        std::fs::read(&path).unwrap()
    };
    for bloom in [BloomType::Row, BloomType::RowCol, BloomType::None] {
        let unhinted = file_bytes(None, bloom);
        // Exact, too few, none and far too many: the same file.
        for hint in [3_000, 10, 0, 1 << 20] {
            assert!(
                file_bytes(Some(hint), bloom) == unhinted,
                "hint {hint}, {bloom:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn forward_seeks_agree_with_the_sorted_list(cells in cells_strategy(400),
                                                block_size in prop_oneof![Just(64usize), Just(256), Just(4096)],
                                                picks in proptest::collection::vec((any::<proptest::sample::Index>(), 0u8..3), 1..40)) {
        // Ascending keys, each an existing cell's key, the key just after it
        // in its row (a skip to the next column), or its row's start: every
        // seek but the first starts from the cell under the cursor.
        let dir = tempfile::tempdir().unwrap();
        let reader = write(dir.path(), &cells, block_size, Compression::None, BloomType::Row);
        let mut keys: Vec<OwnedKey> = picks
            .iter()
            .map(|(i, how)| {
                let c = &cells[i.index(cells.len())];
                match how {
                    0 => (c.0.clone(), c.1.clone(), c.2, c.3, c.4),
                    1 => {
                        let mut q = c.1.clone();
                        q.push(0);
                        (c.0.clone(), q, i64::MAX, CellKind::DeleteFamily, u64::MAX)
                    }
                    _ => (c.0.clone(), Vec::new(), i64::MAX, CellKind::DeleteFamily, u64::MAX),
                }
            })
            .collect();
        keys.sort_by(|a, b| {
            compare_keys((&a.0, &a.1, a.2, a.3, a.4), (&b.0, &b.1, b.2, b.3, b.4))
        });
        let mut cursor = FileCursor::new(reader);
        cursor.seek_to_first().unwrap();
        for k in &keys {
            let key = SeekKey { row: &k.0, qualifier: &k.1, timestamp: k.2, kind: k.3, sequence: k.4 };
            cursor.seek(&key).unwrap();
            let want = cells
                .iter()
                .find(|c| compare_keys(r(c).tuple(), key.tuple()) != Ordering::Less);
            prop_assert_eq!(cursor.current(), want.map(r));
        }
    }

    #[test]
    fn hfiles_round_trip(cells in cells_strategy(400), block_size in prop_oneof![Just(64usize), Just(256), Just(4096)],
                         zstd in any::<bool>(), probe in proptest::collection::vec(0u8..8, 1..5)) {
        let dir = tempfile::tempdir().unwrap();
        let compression = if zstd { Compression::Zstd { level: 1 } } else { Compression::None };
        let reader = write(dir.path(), &cells, block_size, compression, BloomType::Row);
        let mut cursor = FileCursor::new(reader.clone());
        cursor.seek_to_first().unwrap();
        for c in &cells {
            prop_assert_eq!(cursor.current(), Some(r(c)));
            cursor.advance().unwrap();
        }
        prop_assert!(cursor.current().is_none());
        // Seeks agree with the sorted list.
        let key = SeekKey::row_start(&probe);
        cursor.seek(&key).unwrap();
        let want = cells.iter().find(|c| c.0.as_slice() >= probe.as_slice());
        prop_assert_eq!(cursor.current(), want.map(r));
        cursor.seek_before(&key).unwrap();
        let want = cells.iter().rev().find(|c| c.0.as_slice() < probe.as_slice());
        prop_assert_eq!(cursor.current(), want.map(r));
        cursor.seek_to_last().unwrap();
        prop_assert_eq!(cursor.current(), cells.last().map(r));
        // The bloom never denies a present row.
        for c in &cells {
            prop_assert!(reader.may_contain_hashed_row(&c.0, row_hash(&c.0)));
        }
        prop_assert!(reader.verify().is_empty());
    }
}

#[test]
fn large_files_get_a_two_level_index() {
    let cells = numbered_cells(5000, 8, &[1u8; 20]);
    let dir = tempfile::tempdir().unwrap();
    let reader = write(dir.path(), &cells, 64, Compression::None, BloomType::RowCol);
    assert_eq!(reader.info().index_levels, 2);
    assert!(reader.block_count() > super::MAX_INDEX_ENTRIES);
    let mut cursor = FileCursor::new(reader.clone());
    for i in [0u32, 1, 1023, 1024, 2500, 4999] {
        let row = format!("row{i:08}");
        cursor.seek(&SeekKey::row_start(row.as_bytes())).unwrap();
        assert_eq!(cursor.current().unwrap().row, row.as_bytes());
        cursor
            .seek_before(&SeekKey::row_start(row.as_bytes()))
            .unwrap();
        if i > 0 {
            assert_eq!(
                cursor.current().unwrap().row,
                format!("row{:08}", i - 1).as_bytes()
            );
        }
    }
    assert!(reader.may_contain_column(b"row00000042", row_hash(b"row00000042"), b"q"));
    let absent = (0..1000)
        .filter(|i| {
            let row = format!("row{i:08}");
            reader.may_contain_column(row.as_bytes(), row_hash(row.as_bytes()), b"zz")
        })
        .count();
    assert!(
        absent < 60,
        "ROWCOL bloom rejects absent columns: {absent} false positives"
    );
    let mut count = 0;
    cursor.seek_to_first().unwrap();
    while cursor.current().is_some() {
        count += 1;
        cursor.advance().unwrap();
    }
    assert_eq!(count, 5000);
}

/// Handles and bounds of data blocks come from one walk of the index: every
/// block's agree with the block itself, at either index depth, and a block
/// past the last is corruption, not a panic or another block's bounds.
#[test]
fn block_handles_and_bounds_come_from_the_index_at_either_depth() {
    let dir = tempfile::tempdir().unwrap();
    for (count, levels) in [(300, 1), (5000, 2)] {
        let cells = numbered_cells(count, 8, &[1u8; 20]);
        let reader = write(dir.path(), &cells, 64, Compression::None, BloomType::None);
        assert_eq!(reader.info().index_levels, levels);
        let blocks = reader.block_count();
        for ordinal in [0, 1, blocks / 2, blocks - 1] {
            let block = reader
                .data_block_at(reader.handle_of(ordinal).unwrap())
                .unwrap();
            let (first, last) = reader.block_bounds(ordinal).unwrap();
            assert_eq!(first, block.row(0), "block {ordinal} of {levels} levels");
            assert_eq!(last, block.row(block.rows() - 1));
        }
        for past in [blocks, blocks + 1, usize::MAX] {
            assert!(matches!(
                reader.handle_of(past),
                Err(Error::Corruption { .. })
            ));
            assert!(matches!(
                reader.block_bounds(past),
                Err(Error::Corruption { .. })
            ));
        }
    }
}

/// A seek walks a leaf of the two-level index; the open file holds its
/// leaves, so the block cache sees only the data block: one lookup per
/// seek (a leaf through the cache took a second lookup and could be
/// evicted by data blocks).
#[test]
fn leaf_index_blocks_are_held_by_the_open_file_not_the_block_cache() {
    let cells = numbered_cells(5000, 8, &[1u8; 20]);
    let dir = tempfile::tempdir().unwrap();
    drop(write(
        dir.path(),
        &cells,
        64,
        Compression::None,
        BloomType::None,
    ));
    let cache = Arc::new(BlockCache::new(1 << 20));
    let reader = HFileReader::open(
        Io::with_backend(Backend::Sync),
        &dir.path().join("f.hfile"),
        8,
        cache.clone(),
        true,
    )
    .unwrap();
    assert_eq!(reader.info().index_levels, 2);
    for round in 1..=2u64 {
        for row in ["row00000007", "row00004321"] {
            let (_, handle) = reader.seek_block_handle(row.as_bytes()).unwrap().unwrap();
            let block = reader.data_block_at(handle).unwrap();
            assert!(block.seek(&SeekKey::row_start(row.as_bytes())).is_some());
        }
        let stats = cache.stats();
        assert_eq!(
            (stats.hits, stats.misses),
            (2 * (round - 1), 2),
            "round {round}: one lookup per data block, none for leaves"
        );
    }
}

/// A flipped byte anywhere in a file is reported as corruption of that
/// file (by open, by a read, or by verify), never as a panic or wrong data.
#[test]
fn flipped_bytes_are_detected_everywhere() {
    let cells: Vec<Owned> = (0..300u32)
        .map(|i| {
            (
                format!("row{i:05}").into_bytes(),
                b"q".to_vec(),
                5,
                CellKind::Put,
                u64::from(i),
                format!("v{i}").into_bytes(),
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let reader = write(dir.path(), &cells, 512, Compression::None, BloomType::Row);
    let path = reader.path().to_path_buf();
    drop(reader);
    let original = std::fs::read(&path).unwrap();
    let io = Io::with_backend(Backend::Sync);
    for at in (0..original.len()).step_by(7) {
        let mut damaged = original.clone();
        damaged[at] ^= 0x08;
        std::fs::write(&path, &damaged).unwrap();
        let outcome = HFileReader::open(io.clone(), &path, 7, Arc::new(BlockCache::new(0)), false)
            .map(|reader| {
                let damage = reader.verify();
                // Reading every cell either fails or returns exactly the original cells.
                let mut cursor = FileCursor::new(Arc::new(reader));
                let mut seen = Vec::new();
                let read = (|| -> Result<(), Error> {
                    cursor.seek_to_first()?;
                    while let Some(c) = cursor.current() {
                        seen.push((c.row.to_vec(), c.value.to_vec()));
                        cursor.advance()?;
                    }
                    Ok(())
                })();
                (damage, read, seen)
            });
        match outcome {
            Err(Error::Corruption { file, .. }) => assert_eq!(file, path),
            Err(other) => panic!("flip at {at}: unexpected {other:?}"),
            Ok((damage, read, seen)) => {
                let intact = seen.len() == cells.len()
                    && seen
                        .iter()
                        .zip(&cells)
                        .all(|(s, c)| s.0 == c.0 && s.1 == c.5);
                // The bloom block is not read by a scan; verify() covers data blocks.
                assert!(
                    !damage.is_empty() || read.is_err() || intact,
                    "flip at {at} went unnoticed and changed data"
                );
                if let Err(Error::Corruption { file, .. }) = read {
                    assert_eq!(file, path);
                }
            }
        }
    }
}

/// Rows spanning several blocks: seeking before a row must step back past
/// every block that starts with that row.
#[test]
fn seek_before_crosses_blocks_of_a_wide_row() {
    let mut cells: Vec<Owned> = Vec::new();
    let mut x: u64 = 12345;
    for _ in 0..200 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        let row = vec![(x >> 60) as u8 % 8, (x >> 50) as u8 % 3];
        let q = vec![(x >> 40) as u8 % 4];
        cells.push((
            row,
            q,
            (x >> 20) as i64 % 1000,
            CellKind::Put,
            x % 1000,
            vec![1; (x % 30) as usize],
        ));
    }
    cells.sort_by(|a, b| compare_keys(r(a).tuple(), r(b).tuple()));
    cells.dedup_by(|a, b| compare_keys(r(a).tuple(), r(b).tuple()) == Ordering::Equal);
    let dir = tempfile::tempdir().unwrap();
    let reader = write(dir.path(), &cells, 64, Compression::None, BloomType::Row);
    let mut cursor = FileCursor::new(reader);
    for a in 0u8..9 {
        for b in 0u8..4 {
            let probe = vec![a, b];
            cursor.seek_before(&SeekKey::row_start(&probe)).unwrap();
            let want = cells
                .iter()
                .rev()
                .find(|c| c.0.as_slice() < probe.as_slice());
            assert_eq!(cursor.current(), want.map(r), "probe {probe:?}");
        }
    }
}

proptest! {
    /// A block's flag and the index agree with the cells: a block's last
    /// row is whole in it exactly when the next block starts another row
    /// (or there is no next block).
    #[test]
    fn blocks_and_the_index_say_whether_a_last_row_goes_on(
        cells in cells_strategy(300),
        block_size in 48usize..400,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let reader = write(dir.path(), &cells, block_size, Compression::None, BloomType::Row);
        let blocks: Vec<_> = (0..reader.block_count())
            .map(|k| reader.data_block(k).unwrap())
            .collect();
        for (k, block) in blocks.iter().enumerate() {
            let last = block.row(block.rows() - 1);
            let goes_on = blocks.get(k + 1).is_some_and(|next| next.row(0) == last);
            let want = if goes_on { block.rows() - 1 } else { block.rows() };
            prop_assert_eq!(block.whole_rows(), want, "block {}", k);
            // The index tells a get the same (the block it finds for the
            // row is the first holding it).
            if block.rows() > 1 || k == 0 || blocks[k - 1].row(blocks[k - 1].rows() - 1) != last {
                let (_, index_goes_on) = reader.seek_row_block(last).unwrap().unwrap();
                prop_assert_eq!(index_goes_on, goes_on, "block {} index", k);
            }
        }
    }
}

/// The writer refuses a cell that does not come strictly after the last
/// one, whether its row, qualifier, timestamp or sequence puts it back.
#[test]
fn cells_out_of_order_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cell = |row: &[u8], qualifier: &[u8], timestamp: i64, sequence: u64| -> Owned {
        (
            row.to_vec(),
            qualifier.to_vec(),
            timestamp,
            CellKind::Put,
            sequence,
            b"v".to_vec(),
        )
    };
    let first = cell(b"r2", b"q2", 10, 5);
    let behind = [
        cell(b"r2", b"q2", 10, 5),
        cell(b"r1", b"q9", 10, 5),
        cell(b"r2", b"q1", 10, 5),
        cell(b"r2", b"q2", 11, 5),
        cell(b"r2", b"q2", 10, 6),
    ];
    for (i, later) in behind.iter().enumerate() {
        let path = dir.path().join(format!("{i}.hfile"));
        let mut w = HFileWriter::create(
            Io::with_backend(Backend::Sync),
            &path,
            writer_options(4096, Compression::None, BloomType::Row),
        )
        .unwrap();
        w.add(&r(&first)).unwrap();
        assert!(w.add(&r(later)).is_err(), "{later:?} after {first:?}");
        // A cell after it is taken.
        w.add(&r(&cell(b"r2", b"q3", 10, 5))).unwrap();
        w.abandon();
    }
}
