//! Scenario 3 of SCENARIOS.md: daily loads with `date|id` keys, salted so
//! that they spread over a table pre-split at every salt boundary, loaded
//! both ways users load them (bulk load of sorted files per region, and
//! ordinary puts), and a logical date range read in one call that fans out
//! into one sub-range per salt, in parallel, merged back into logical order.
//!
//! Run: `cargo run --release --example salted [BUCKETS] [ROWS]` (default 1000
//! buckets and 10,000,000 rows over 30 days). It prints both load timings,
//! the spread over the regions, and the time of a one-day scan before and
//! after the table doubles with 30 more days (the day's rows stay the same).

use std::time::Instant;

use strata::keys::Salter;
use strata::{
    BulkFiles, BulkLoadOptions, BulkLoadReport, Db, DbOptions, Durability, FamilyDescriptor,
    PreSplit, Put, Result, Scan, ScanOrder, Table, TableDescriptor,
};

/// Days one load spans.
pub const DAYS: u64 = 30;

/// The logical key of row `i` of `rows`, spread over 30 days starting at
/// `first_day` days after 2015-04-26 (day numbers past May 31 roll into
/// June, July, ...).
pub fn logical_key_from(i: u64, rows: u64, first_day: u64) -> String {
    let day = first_day + i * DAYS / rows.max(1);
    let (month, day_of_month) = month_day(day);
    format!("2015-{month:02}-{day_of_month:02}|{i:010}")
}

/// The logical key of row `i` of `rows` spread over 30 days of April-May 2015.
pub fn logical_key(i: u64, rows: u64) -> String {
    logical_key_from(i, rows, 0)
}

/// Month and day of the `day`th day after 2015-04-25 (day 0 is April 26).
fn month_day(day: u64) -> (u64, u64) {
    let month_lengths = [(4, 30), (5, 31), (6, 30), (7, 31), (8, 31), (9, 30)];
    let mut day_of_year = day + 26;
    for (month, length) in month_lengths {
        if day_of_year <= length {
            return (month, day_of_year);
        }
        day_of_year -= length;
    }
    (10, day_of_year)
}

/// The salted table's descriptor: one region per bucket.
pub fn descriptor(name: &str, buckets: u32) -> TableDescriptor {
    TableDescriptor::new(name)
        .family(FamilyDescriptor::new("e"))
        .pre_split(PreSplit::SaltBuckets { buckets })
        .durability(Durability::AsyncWal)
}

/// Creates the salted table `events`, pre-split into one region per bucket.
pub fn create(db: &Db, buckets: u32) -> Result<Table> {
    create_named(db, "events", buckets)
}

/// Creates the salted table `name` (dropping an older one).
pub fn create_named(db: &Db, name: &str, buckets: u32) -> Result<Table> {
    if db.table_exists(name) {
        db.drop_table(name)?;
    }
    db.create_table(descriptor(name, buckets))
}

/// Loads `rows` rows through ordinary puts, salting each key.
pub fn load(table: &Table, salter: &Salter, rows: u64) -> Result<()> {
    let mut batch = Vec::with_capacity(1000);
    for i in 0..rows {
        let key = salter.salt(logical_key(i, rows).as_bytes());
        batch.push(Put::new(key).add("e", "", i.to_be_bytes()));
        if batch.len() == 1000 {
            table.put_many(&batch)?;
            batch.clear();
        }
    }
    table.put_many(&batch)
}

/// Writes `rows` rows (30 days from `first_day`) into sorted files, one per
/// bucket's region, under `dir`: each bucket's keys in logical order, which
/// is the salted key order too.
pub fn write_files(
    table: &Table,
    salter: &Salter,
    rows: u64,
    first_day: u64,
    dir: &std::path::Path,
) -> Result<BulkFiles> {
    // Row indexes per bucket, ascending: a bucket's salted keys sort like
    // its logical keys, which sort like the indexes.
    let mut per_bucket: Vec<Vec<u32>> = vec![Vec::new(); salter.buckets() as usize];
    for i in 0..rows {
        let key = logical_key_from(i, rows, first_day);
        if let Some(bucket) = per_bucket.get_mut(salter.bucket_of(key.as_bytes()) as usize) {
            bucket.push(i as u32);
        }
    }
    let mut writer = table.bulk_writer(dir)?;
    let mut key = Vec::with_capacity(64);
    for (bucket, indexes) in per_bucket.iter().enumerate() {
        let prefix = salter.prefix(bucket as u32);
        for &i in indexes {
            key.clear();
            key.extend_from_slice(&prefix);
            key.extend_from_slice(logical_key_from(u64::from(i), rows, first_day).as_bytes());
            writer.add(&key, b"e", b"", 1, &u64::from(i).to_be_bytes())?;
        }
    }
    writer.finish()
}

/// Bulk-loads `rows` rows (30 days from `first_day`): files written under
/// `dir`, then loaded at once. Returns the files and what the load did.
pub fn bulk_load(
    table: &Table,
    salter: &Salter,
    rows: u64,
    first_day: u64,
    dir: &std::path::Path,
) -> Result<(BulkFiles, BulkLoadReport)> {
    let files = write_files(table, salter, rows, first_day, dir)?;
    let report = table.bulk_load(&files.paths(), &BulkLoadOptions::default())?;
    Ok((files, report))
}

/// Reads the logical range `[start, stop)` in one call: one sub-range per
/// salt bucket on `threads` threads, merged in logical-key order. Returns
/// the logical keys found.
pub fn read_range(
    table: &Table,
    salter: &Salter,
    start: &str,
    stop: &str,
    threads: usize,
) -> Result<Vec<String>> {
    let mut scan = table.scan_salted(
        &Scan::new().start(start).stop(stop),
        salter,
        threads,
        ScanOrder::KeyOrder,
    )?;
    let mut keys = Vec::new();
    while let Some(row) = scan.next_row()? {
        if let Some(logical) = salter.unsalt(row.row()) {
            keys.push(String::from_utf8_lossy(logical).into_owned());
        }
    }
    Ok(keys)
}

/// Smallest, largest and mean cells per region.
pub fn spread(table: &Table) -> Result<(u64, u64, f64)> {
    let cells: Vec<u64> = table.regions()?.iter().map(|r| r.cells()).collect();
    let min = cells.iter().min().copied().unwrap_or(0);
    let max = cells.iter().max().copied().unwrap_or(0);
    let mean = cells.iter().sum::<u64>() as f64 / cells.len().max(1) as f64;
    Ok((min, max, mean))
}

#[cfg_attr(
    test,
    expect(
        dead_code,
        reason = "tests/tests/scenarios.rs compiles this file as a module and runs its functions, not main"
    )
)]
fn main() -> Result<()> {
    let arg = |n: usize, default: u64| {
        std::env::args()
            .nth(n)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let (buckets, rows) = (arg(1, 1000) as u32, arg(2, 10_000_000));
    let temporary = |e: std::io::Error| strata::Error::Io {
        context: "creating a temporary directory".into(),
        source: std::sync::Arc::new(e),
    };
    let dir = tempfile::tempdir().map_err(temporary)?;
    let db = Db::open(
        dir.path().join("db"),
        DbOptions {
            // A million rows per second into a thousand regions: the
            // memstores flush often, each into its own small file.
            global_memstore_limit_bytes: 2 << 30,
            ..DbOptions::default()
        },
    )?;
    let salter = Salter::new(buckets);

    let by_puts = create_named(&db, "events_puts", buckets)?;
    let started = Instant::now();
    load(&by_puts, &salter, rows)?;
    by_puts.flush()?;
    let puts_took = started.elapsed();
    println!(
        "puts:      {rows} rows into {buckets} regions in {puts_took:.2?} ({:.0} rows/s, flushed)",
        rows as f64 / puts_took.as_secs_f64()
    );
    db.drop_table("events_puts")?;

    let table = create(&db, buckets)?;
    let started = Instant::now();
    let (files, report) = bulk_load(&table, &salter, rows, 0, &dir.path().join("load-1"))?;
    let bulk_took = started.elapsed();
    println!(
        "bulk load: {rows} rows into {buckets} regions in {bulk_took:.2?} ({:.0} rows/s): \
         {} files, {:.1} MB, {} split at region boundaries, files per level {:?}",
        rows as f64 / bulk_took.as_secs_f64(),
        files.files.len(),
        files.file_bytes() as f64 / 1e6,
        report.files_split,
        report.files_per_level
    );
    println!(
        "bulk load is {:.1}x the puts",
        puts_took.as_secs_f64() / bulk_took.as_secs_f64()
    );
    let (min, max, mean) = spread(&table)?;
    println!(
        "cells per region: min {min}, max {max}, mean {mean:.0} ({:+.1}% .. {:+.1}% of the mean)",
        (min as f64 / mean - 1.0) * 100.0,
        (max as f64 / mean - 1.0) * 100.0
    );

    let day = |label: &str| -> Result<()> {
        let mut best = std::time::Duration::MAX;
        let mut found = 0;
        for _ in 0..5 {
            let started = Instant::now();
            found = read_range(&table, &salter, "2015-04-26", "2015-04-27", 2)?.len();
            best = best.min(started.elapsed());
        }
        println!(
            "2015-04-26 ({label}): {found} rows via {buckets} sub-ranges in one call, best of 5 \
             {best:.2?}"
        );
        Ok(())
    };
    day(&format!("table of {rows} rows"))?;
    // Thirty more days double the table; the day's rows stay the same.
    bulk_load(&table, &salter, rows, DAYS, &dir.path().join("load-2"))?;
    day(&format!("table of {} rows", 2 * rows))?;
    db.close()
}
