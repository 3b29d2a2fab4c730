//! Micro-benchmarks (`cargo bench -p strata-bench`):
//! - memstore insert: strata's arena skiplist against crossbeam-skiplist
//!   with an equivalent owned key, the same cells in the same order;
//! - checksum: xxh3-64 (what strata's WAL and blocks use) over 4 and 64 KiB;
//! - block encode and decode: a 16 KiB data block of 16-byte rows with
//!   100-byte values into strata's columnar layout and back, plus a point
//!   lookup inside a decoded block;
//! - bloom probe: hash and probe of a present and an absent row in a
//!   1,000,000-key split-block filter (10 bits per key);
//! - checksum: xxh3-64 (what strata's WAL and blocks use) over 4 and 64 KiB;
//! - WAL group commit: N threads doing SyncWal puts through the public API;
//! - multi-row mutations: N rows (2, 5, 10) written by one `mutate_rows`
//!   (atomic, one WAL record) against N single-row `put`s and one
//!   `put_many`, with SyncWal and AsyncWal; throughput in rows.
#![expect(
    clippy::expect_used,
    reason = "a micro-benchmark whose setup fails has nothing to measure; it stops with the reason"
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use crossbeam_skiplist::SkipMap;
use strata::internals::{BlockCell, DecodedBlock, MemstoreHandle, RowBloom, encode_data_block};
use strata::{Db, Durability, FamilyDescriptor, Mutation, Put, TableDescriptor};
use strata_bench::keys::{ValuePool, permutation};
use strata_bench::memory::CellKey;
use strata_bench::random::Rng;

/// Cells per memstore-insert iteration.
const MEMSTORE_CELLS: u64 = 10_000;
/// Timestamp of the inserted cells.
const TIMESTAMP_MS: i64 = 1_700_000_000_000;

fn rows(count: u64) -> Vec<Vec<u8>> {
    permutation(count, &mut Rng::new(42))
        .into_iter()
        .map(|i| {
            let mut row = i.to_be_bytes().to_vec();
            row.resize(16, b'0');
            row
        })
        .collect()
}

fn memstore_insert(c: &mut Criterion) {
    let rows = rows(MEMSTORE_CELLS);
    let values = ValuePool::new(100, 7);
    let cell_values: Vec<&[u8]> = {
        let mut rng = Rng::new(3);
        rows.iter().map(|_| values.value(&mut rng)).collect()
    };
    let mut group = c.benchmark_group("memstore_insert_16B_rows_100B_values");
    group.throughput(Throughput::Elements(MEMSTORE_CELLS));
    group.bench_function("strata_arena_skiplist", |b| {
        b.iter_batched(
            MemstoreHandle::new,
            |memstore| {
                for (sequence, (row, value)) in (1..).zip(rows.iter().zip(&cell_values)) {
                    memstore.insert_put(row, b"", TIMESTAMP_MS, sequence, value);
                }
                memstore
            },
            BatchSize::LargeInput,
        );
    });
    group.bench_function("crossbeam_skiplist", |b| {
        b.iter_batched(
            SkipMap::<CellKey, Box<[u8]>>::new,
            |map| {
                for (sequence, (row, value)) in (1..).zip(rows.iter().zip(&cell_values)) {
                    map.insert(
                        CellKey::put(row, b"", TIMESTAMP_MS, sequence),
                        (*value).into(),
                    );
                }
                map
            },
            BatchSize::LargeInput,
        );
    });
    group.finish();
}

/// Cells of one 16 KiB block: 16-byte row, empty qualifier, 100-byte
/// value, about 140 bytes a cell encoded.
const BLOCK_CELLS: usize = 16 * 1024 / 140;

fn block_encode_decode(c: &mut Criterion) {
    let mut rows = rows(BLOCK_CELLS as u64);
    rows.sort();
    let values = ValuePool::new(100, 5);
    let mut rng = Rng::new(8);
    let cell_values: Vec<&[u8]> = rows.iter().map(|_| values.value(&mut rng)).collect();
    let cells: Vec<BlockCell<'_>> = (1..)
        .zip(rows.iter().zip(&cell_values))
        .map(|(sequence, (row, value))| BlockCell {
            row,
            qualifier: b"",
            timestamp: TIMESTAMP_MS,
            sequence,
            value,
        })
        .collect();
    let payload = encode_data_block(&cells);
    let mut group = c.benchmark_group("data_block_16KiB");
    group.throughput(Throughput::Elements(BLOCK_CELLS as u64));
    group.bench_function("encode", |b| {
        b.iter(|| encode_data_block(black_box(&cells)));
    });
    group.bench_function("decode", |b| {
        b.iter_batched(
            || payload.clone(),
            |p| DecodedBlock::decode(p).expect("the block decodes"),
            BatchSize::SmallInput,
        );
    });
    let block = DecodedBlock::decode(payload.clone()).expect("the block decodes");
    assert_eq!(block.cells(), BLOCK_CELLS);
    group.throughput(Throughput::Elements(1));
    let mut probe = 0;
    group.bench_function("get_one_row", |b| {
        b.iter(|| {
            probe = (probe + 37) % rows.len();
            block.get(black_box(&rows[probe]))
        });
    });
    group.finish();
}

/// Keys in the bloom of the bloom-probe benchmark.
const BLOOM_KEYS: u64 = 1_000_000;

fn bloom_probe(c: &mut Criterion) {
    let present = rows(BLOOM_KEYS);
    let bloom = RowBloom::build(present.iter().map(Vec::as_slice), 10);
    let absent: Vec<Vec<u8>> = present
        .iter()
        .map(|row| {
            let mut row = row.clone();
            row[15] = b'.';
            row
        })
        .collect();
    let false_positives = absent.iter().filter(|r| bloom.may_contain(r)).count();
    println!(
        "bloom: {} bytes for {BLOOM_KEYS} keys, false positive rate {:.3}%",
        bloom.bytes(),
        false_positives as f64 * 100.0 / BLOOM_KEYS as f64
    );
    let mut group = c.benchmark_group("bloom_probe_1M_keys_10_bits");
    group.throughput(Throughput::Elements(1));
    for (name, keys) in [("present", &present), ("absent", &absent)] {
        let mut i = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                i = (i + 7919) % keys.len();
                bloom.may_contain(black_box(&keys[i]))
            });
        });
    }
    group.finish();
}

fn checksum(c: &mut Criterion) {
    let mut group = c.benchmark_group("checksum_xxh3_64");
    for size in [4 * 1024, 64 * 1024] {
        let data = ValuePool::new(size, 11).value(&mut Rng::new(1)).to_vec();
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_function(format!("{}KiB", size / 1024), |b| {
            b.iter(|| xxhash_rust::xxh3::xxh3_64(black_box(&data)));
        });
    }
    group.finish();
}

/// SyncWal puts per measured iteration, split over the writer threads.
const GROUP_COMMIT_PUTS: u64 = 256;

fn wal_group_commit(c: &mut Criterion) {
    let mut group = c.benchmark_group("wal_group_commit_syncwal_puts");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(GROUP_COMMIT_PUTS));
    let values = ValuePool::new(100, 5);
    for threads in [1u64, 4, 32] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let db = Db::open_default(dir.path()).expect("opening strata");
        let table = db
            .create_table(
                TableDescriptor::new("wal")
                    .family(FamilyDescriptor::new("f"))
                    .durability(Durability::SyncWal),
            )
            .expect("creating the table");
        let mut next_row = 0u64;
        group.bench_function(format!("{threads}_threads"), |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let first_row = next_row;
                    next_row += GROUP_COMMIT_PUTS;
                    let start = Instant::now();
                    std::thread::scope(|scope| {
                        for t in 0..threads {
                            let (table, values) = (&table, &values);
                            scope.spawn(move || {
                                let mut rng = Rng::new(t);
                                let share = GROUP_COMMIT_PUTS / threads;
                                for i in 0..share {
                                    let row = (first_row + t * share + i).to_be_bytes();
                                    table
                                        .put(&Put::new(row).add("f", "", values.value(&mut rng)))
                                        .expect("a SyncWal put");
                                }
                            });
                        }
                    });
                    total += start.elapsed();
                }
                total
            });
        });
        db.close().expect("closing strata");
    }
    group.finish();
}

/// How a multi-row write is made.
#[derive(Clone, Copy)]
enum RowsWrite {
    /// One `put` per row: each row atomic on its own, a WAL wait each.
    SinglePuts,
    /// One `put_many`: each row atomic on its own, one WAL wait.
    PutMany,
    /// One `mutate_rows`: all rows atomic together, one WAL record.
    MutateRows,
}

fn multi_row_mutations(c: &mut Criterion) {
    let values = ValuePool::new(100, 11);
    for durability in [Durability::SyncWal, Durability::AsyncWal] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let db = Db::open_default(dir.path()).expect("opening strata");
        let table = db
            .create_table(
                TableDescriptor::new("rows")
                    .family(FamilyDescriptor::new("f"))
                    .durability(durability),
            )
            .expect("creating the table");
        let mut group = c.benchmark_group(format!("multi_row_{}", durability.name()));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(3));
        let mut rng = Rng::new(9);
        let mut next_row = 0u64;
        for rows in [2u64, 5, 10] {
            group.throughput(Throughput::Elements(rows));
            for (name, how) in [
                ("single_puts", RowsWrite::SinglePuts),
                ("put_many", RowsWrite::PutMany),
                ("mutate_rows", RowsWrite::MutateRows),
            ] {
                group.bench_function(format!("{rows}_rows_{name}"), |b| {
                    b.iter_batched(
                        || {
                            let puts: Vec<Put> = (0..rows)
                                .map(|_| {
                                    next_row += 1;
                                    let mut row = next_row.to_be_bytes().to_vec();
                                    row.resize(16, b'0');
                                    Put::new(row).add("f", "", values.value(&mut rng))
                                })
                                .collect();
                            puts
                        },
                        |puts| match how {
                            RowsWrite::SinglePuts => {
                                for put in &puts {
                                    table.put(put).expect("a put");
                                }
                            }
                            RowsWrite::PutMany => table.put_many(&puts).expect("a put_many"),
                            RowsWrite::MutateRows => {
                                let mutations: Vec<Mutation> =
                                    puts.into_iter().map(Mutation::Put).collect();
                                table.mutate_rows(&mutations).expect("a mutate_rows");
                            }
                        },
                        BatchSize::SmallInput,
                    );
                });
            }
        }
        group.finish();
        db.close().expect("closing strata");
    }
}

criterion_group!(
    benches,
    memstore_insert,
    block_encode_decode,
    bloom_probe,
    checksum,
    wal_group_commit,
    multi_row_mutations
);
criterion_main!(benches);
