//! Read-path micro-benchmarks (`cargo bench -p strata-bench --bench read_path`):
//! a table of 200,000 rows (16-byte keys, one 100-byte value each) flushed
//! and major-compacted into one sorted run, every block cached, then
//! - `full_scan`: every row, through the owned-row iterator (`Table::scan`)
//!   and through the borrowing cursor (`Table::scan_cursor`); the reported
//!   time per element is the cached scan's CPU time per row;
//! - `short_scan`: 100 rows from a random start (YCSB E's median scan), both
//!   ways;
//! - `full_scan_with_memstore`: the full scan with every 100th row written
//!   again, so two sources merge;
//! - `full_scan_three_files`: the full scan of the rows written in three
//!   flushes, row `i` in flush `i % 3`, not compacted: three overlapping
//!   files whose rows alternate (a table filled in random order before its
//!   files compact), read as merged block runs;
//! - `short_scan_three_files`: 200 rows between a random start and its stop
//!   row in three such files of 1,000,000 rows (`filterscan-prefix` at
//!   1,000,000 records: every query seeks three files, each with a
//!   two-level index, and merges their rows);
//! - `uncached_scan`: the full scan with a 1 MiB block cache, so every pass
//!   reads, checks and decodes its blocks again (from the page cache);
//! - `value_filter_scan`: the full scan through `ValueFilter(=,
//!   'binaryprefix:...')` matching 0.1% of the rows (each value starts with
//!   its row number modulo 1000), which runs as a kernel over each block's
//!   values; time per element is per row examined.
//!
//! - `mask_filter_scan`: strata-bench's `filterscan-mask` query (`code = 404
//!   AND sdate = D` as two `RowMaskFilter`s, which fuse into one kernel over
//!   each block's key matrix) over 200,000 of its records (40-byte keys of
//!   ten 4-byte fields, 100-byte values) in one compacted file, every block
//!   cached; time per element is per row examined.
//!
//! - `parallel_scan_4_regions`: the full scan of the table split into four
//!   regions, through `Table::scan_parallel` (rows as ready) on one thread
//!   and on two.
//!
//! Run with `-- --profile-time 10` to hold one of them under `perf record`.
#![expect(
    clippy::expect_used,
    reason = "a micro-benchmark whose setup fails has nothing to measure; it stops with the reason"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use strata::{
    Db, DbOptions, Durability, FamilyDescriptor, Put, Scan, ScanOrder, Table, TableDescriptor,
};
use strata_bench::pages;
use strata_bench::random::Rng;

/// Rows of the benchmark table.
const ROWS: u64 = 200_000;
/// Rows of a short scan.
const SHORT_SCAN_ROWS: u64 = 100;
/// Rows of a short scan of the three-file table (a `filterscan-prefix`
/// query's rows).
const PREFIX_SCAN_ROWS: u64 = 200;

fn row_key(i: u64) -> Vec<u8> {
    format!("user{i:012}").into_bytes()
}

/// A 100-byte value starting with `i` modulo 1000 in 8 digits.
fn value(i: u64) -> Vec<u8> {
    let mut value = format!("{:08}", i % 1000).into_bytes();
    value.resize(100, b'v');
    value
}

/// The benchmark table (family `f`, no WAL), empty, in a database opened
/// with `options`.
fn empty_table(dir: &std::path::Path, options: DbOptions) -> (Db, Table) {
    let db = Db::open(dir, options).expect("open");
    let table = db
        .create_table(
            TableDescriptor::new("bench")
                .family(FamilyDescriptor::new("f"))
                .durability(Durability::SkipWal),
        )
        .expect("create table");
    (db, table)
}

/// A compacted, fully cached table; with `rewrite_every`, every such row is
/// written again afterwards (it stays in the memstore).
fn table(dir: &std::path::Path, rewrite_every: Option<u64>) -> (Db, Table) {
    table_with_regions(dir, rewrite_every, 1)
}

/// [`table`], split into `regions` regions at evenly spaced rows first.
fn table_with_regions(
    dir: &std::path::Path,
    rewrite_every: Option<u64>,
    regions: u64,
) -> (Db, Table) {
    table_with_options(dir, rewrite_every, regions, DbOptions::default())
}

/// [`table_with_regions`] with the database opened with `options`.
fn table_with_options(
    dir: &std::path::Path,
    rewrite_every: Option<u64>,
    regions: u64,
    options: DbOptions,
) -> (Db, Table) {
    let (db, table) = empty_table(dir, options);
    for i in 1..regions {
        table
            .split(Some(&row_key(ROWS * i / regions)))
            .expect("split");
    }
    for chunk in (0..ROWS).collect::<Vec<_>>().chunks(10_000) {
        let puts: Vec<Put> = chunk
            .iter()
            .map(|&i| Put::new(row_key(i)).add("f", "", value(i)))
            .collect();
        table.put_many(&puts).expect("put");
    }
    table.flush().expect("flush");
    table.major_compact().expect("compact");
    if let Some(every) = rewrite_every {
        let puts: Vec<Put> = (0..ROWS)
            .step_by(every as usize)
            .map(|i| Put::new(row_key(i)).add("f", "", value(i)))
            .collect();
        table.put_many(&puts).expect("put");
    }
    // Warm the block cache.
    let rows = table.scan(&Scan::new()).expect("scan").count() as u64;
    assert_eq!(rows, ROWS);
    (db, table)
}

fn owned_scan(table: &Table, scan: &Scan) -> u64 {
    let mut bytes = 0u64;
    for row in table.scan(scan).expect("scan") {
        let row = row.expect("row");
        bytes += row.cells.iter().map(|c| c.value.len() as u64).sum::<u64>();
    }
    bytes
}

fn cursor_scan(table: &Table, scan: &Scan) -> u64 {
    let mut bytes = 0u64;
    let mut cursor = table.scan_cursor(scan).expect("scan");
    while let Some(row) = cursor.next_row().expect("row") {
        bytes += row.cells().map(|c| c.value().len() as u64).sum::<u64>();
    }
    bytes
}

fn full_scan(c: &mut Criterion) {
    for (name, rewrite) in [("full_scan", None), ("full_scan_with_memstore", Some(100))] {
        let dir = tempfile::tempdir().expect("temp dir");
        let (_db, table) = table(dir.path(), rewrite);
        let mut group = c.benchmark_group(name);
        group.sample_size(20);
        group.throughput(Throughput::Elements(ROWS));
        let scan = Scan::new();
        group.bench_function("owned_rows", |b| {
            b.iter(|| black_box(owned_scan(&table, &scan)))
        });
        group.bench_function("cursor", |b| {
            b.iter(|| black_box(cursor_scan(&table, &scan)))
        });
        group.finish();
    }
}

/// A table whose `rows` rows lie in three overlapping files: row `i` is
/// written in flush `i % 3`; the files are not compacted.
fn three_file_table(dir: &std::path::Path, rows: u64) -> (Db, Table) {
    let (db, table) = empty_table(dir, DbOptions::default());
    for file in 0..3 {
        let puts: Vec<Put> = (file..rows)
            .step_by(3)
            .map(|i| Put::new(row_key(i)).add("f", "", value(i)))
            .collect();
        table.put_many(&puts).expect("put");
        table.flush().expect("flush");
    }
    db.wait_for_background_work().expect("settle");
    assert_eq!(db.stats().files, 3, "the three flushes stay three files");
    let scanned = table.scan(&Scan::new()).expect("scan").count() as u64;
    assert_eq!(scanned, rows);
    (db, table)
}

fn three_file_scan(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (db, table) = three_file_table(dir.path(), ROWS);
    let mut group = c.benchmark_group("full_scan_three_files");
    group.sample_size(20);
    group.throughput(Throughput::Elements(ROWS));
    let scan = Scan::new();
    group.bench_function("cursor", |b| {
        b.iter(|| black_box(cursor_scan(&table, &scan)))
    });
    group.finish();
    drop((db, table));

    let rows = 5 * ROWS;
    let dir = tempfile::tempdir().expect("temp dir");
    let (_db, table) = three_file_table(dir.path(), rows);
    let mut group = c.benchmark_group("short_scan_three_files");
    group.throughput(Throughput::Elements(1));
    let mut rng = Rng::new(11);
    let mut next_scan = move || {
        let start = rng.below(rows - PREFIX_SCAN_ROWS);
        Scan::new()
            .start(row_key(start))
            .stop(row_key(start + PREFIX_SCAN_ROWS))
    };
    group.bench_function("cursor_200_rows", |b| {
        b.iter(|| black_box(cursor_scan(&table, &next_scan())))
    });
    group.finish();
}

fn uncached_scan(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    // A block cache far smaller than the table (about 24 MiB of blocks):
    // every pass reads its blocks again, from the page cache.
    let options = DbOptions {
        block_cache_bytes: 1 << 20,
        ..DbOptions::default()
    };
    let (_db, table) = table_with_options(dir.path(), None, 1, options);
    let mut group = c.benchmark_group("uncached_scan");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ROWS));
    let scan = Scan::new();
    group.bench_function("cursor", |b| {
        b.iter(|| black_box(cursor_scan(&table, &scan)))
    });
    group.finish();
}

fn value_filter_scan(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_db, table) = table(dir.path(), None);
    let mut group = c.benchmark_group("value_filter_scan");
    group.sample_size(20);
    group.throughput(Throughput::Elements(ROWS));
    let scan = Scan::new()
        .filter_string("ValueFilter(=, 'binaryprefix:00000042')")
        .expect("filter");
    assert_eq!(cursor_scan(&table, &scan), ROWS / 1000 * 100);
    group.bench_function("cursor", |b| {
        b.iter(|| black_box(cursor_scan(&table, &scan)))
    });
    group.finish();
}

fn mask_filter_scan(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_db, table) = empty_table(dir.path(), DbOptions::default());
    let (mut key, mut value) = (Vec::new(), Vec::new());
    for chunk in (0..ROWS).collect::<Vec<_>>().chunks(10_000) {
        let puts: Vec<Put> = chunk
            .iter()
            .map(|&i| {
                pages::write_key(i, &mut key);
                pages::write_value(i, &[b'v'; 100], 100, &mut value);
                Put::new(key.clone()).add("f", "", value.clone())
            })
            .collect();
        table.put_many(&puts).expect("put");
    }
    table.flush().expect("flush");
    table.major_compact().expect("compact");
    let query = pages::FilterQuery {
        key_equals: vec![
            (pages::CODE_OFFSET, 404u32.to_be_bytes()),
            (pages::DATE_OFFSET, (pages::FIRST_DATE + 6).to_be_bytes()),
        ],
        ..pages::FilterQuery::default()
    };
    let scan = Scan::new()
        .filter_string(&query.hbase_filter().expect("a filter"))
        .expect("filter");
    let census = pages::Census::new(ROWS);
    let mut matched = 0u64;
    let mut cursor = table.scan_cursor(&scan).expect("scan");
    while cursor.next_row().expect("row").is_some() {
        matched += 1;
    }
    assert_eq!(
        matched,
        census.with_date_and_code(pages::FIRST_DATE + 6, 404)
    );
    let mut group = c.benchmark_group("mask_filter_scan");
    group.sample_size(20);
    group.throughput(Throughput::Elements(ROWS));
    group.bench_function("cursor", |b| {
        b.iter(|| black_box(cursor_scan(&table, &scan)))
    });
    group.finish();
}

fn parallel_scan(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_db, table) = table_with_regions(dir.path(), None, 4);
    let mut group = c.benchmark_group("parallel_scan_4_regions");
    group.sample_size(20);
    group.throughput(Throughput::Elements(ROWS));
    let scan = Scan::new();
    group.bench_function("serial_cursor", |b| {
        b.iter(|| black_box(cursor_scan(&table, &scan)))
    });
    for threads in [1, 2] {
        group.bench_function(format!("{threads}_threads"), |b| {
            b.iter(|| {
                let mut scan = table
                    .scan_parallel(&scan, threads, ScanOrder::AsReady)
                    .expect("scan");
                let mut bytes = 0u64;
                while let Some(row) = scan.next_row().expect("row") {
                    bytes += row.cells().map(|c| c.value().len() as u64).sum::<u64>();
                }
                black_box(bytes)
            })
        });
    }
    group.finish();
}

fn short_scan(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_db, table) = table(dir.path(), None);
    let mut group = c.benchmark_group("short_scan_100_rows");
    group.throughput(Throughput::Elements(1));
    let mut rng = Rng::new(7);
    let mut next_scan = move || {
        let start = rng.below(ROWS - SHORT_SCAN_ROWS);
        Scan::new().start(row_key(start)).limit(SHORT_SCAN_ROWS)
    };
    group.bench_function("owned_rows", |b| {
        b.iter(|| black_box(owned_scan(&table, &next_scan())))
    });
    group.bench_function("cursor", |b| {
        b.iter(|| black_box(cursor_scan(&table, &next_scan())))
    });
    group.finish();
}

criterion_group!(
    read_path,
    full_scan,
    three_file_scan,
    uncached_scan,
    value_filter_scan,
    mask_filter_scan,
    parallel_scan,
    short_scan
);
criterion_main!(read_path);
