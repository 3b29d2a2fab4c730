//! Scenario 3 of SCENARIOS.md: daily loads with `date|id` keys, salted so
//! that they spread over a table pre-split at every salt boundary, and a
//! logical date range read as one sub-range per salt, in parallel.
//!
//! Run: `cargo run --release --example salted [BUCKETS] [ROWS]` (default 1000
//! buckets and 10,000,000 rows over 30 days).
//!
//! Not built: bulk loading sorted files per region (the loads here are
//! ordinary puts, grouped per commit).

use std::sync::Arc;

use strata::keys::Salter;
use strata::{
    Db, Durability, FamilyDescriptor, PreSplit, Put, Result, Scan, Table, TableDescriptor,
};

/// The logical key of row `i` of `rows` spread over 30 days of April-May 2015.
pub fn logical_key(i: u64, rows: u64) -> String {
    let day = i * 30 / rows.max(1);
    let (month, day) = if day < 5 { (4, 26 + day) } else { (5, day - 4) };
    format!("2015-{month:02}-{day:02}|{i:010}")
}

/// Creates the salted table, pre-split into one region per bucket.
pub fn create(db: &Db, buckets: u32) -> Result<Table> {
    if db.table_exists("events") {
        db.drop_table("events")?;
    }
    db.create_table(
        TableDescriptor::new("events")
            .family(FamilyDescriptor::new("e"))
            .pre_split(PreSplit::SaltBuckets { buckets })
            .durability(Durability::AsyncWal),
    )
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

/// Reads the logical range `[start, stop)` as one scan per salt bucket, on
/// `threads` threads; returns the logical keys found, sorted.
pub fn read_range(
    table: &Table,
    salter: &Salter,
    start: &str,
    stop: &str,
    threads: usize,
) -> Result<Vec<String>> {
    let ranges = Arc::new(salter.ranges(start.as_bytes(), stop.as_bytes()));
    let mut handles = Vec::new();
    for t in 0..threads.max(1) {
        let (table, ranges, salter) = (table.clone(), ranges.clone(), *salter);
        handles.push(std::thread::spawn(move || -> Result<Vec<String>> {
            let mut keys = Vec::new();
            for (lo, hi) in ranges.iter().skip(t).step_by(threads.max(1)) {
                let mut cursor = table.scan_cursor(&Scan::new().start(lo).stop(hi))?;
                while let Some(row) = cursor.next_row()? {
                    if let Some(logical) = salter.unsalt(row.row()) {
                        keys.push(String::from_utf8_lossy(logical).into_owned());
                    }
                }
            }
            Ok(keys)
        }));
    }
    let mut keys = Vec::new();
    for h in handles {
        keys.extend(h.join().map_err(|_| strata::Error::Closed)??);
    }
    keys.sort();
    Ok(keys)
}

#[cfg_attr(test, allow(dead_code))]
fn main() -> Result<()> {
    let arg = |n: usize, default: u64| {
        std::env::args()
            .nth(n)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let (buckets, rows) = (arg(1, 1000) as u32, arg(2, 10_000_000));
    let dir = tempfile::tempdir().map_err(|e| strata::Error::Io {
        context: "creating a temporary directory".into(),
        source: std::sync::Arc::new(e),
    })?;
    let db = Db::open_default(dir.path())?;
    let table = create(&db, buckets)?;
    let salter = Salter::new(buckets);
    let started = std::time::Instant::now();
    load(&table, &salter, rows)?;
    println!(
        "loaded {rows} rows into {buckets} regions in {:.2?}",
        started.elapsed()
    );
    let cells: Vec<u64> = table.regions()?.iter().map(|r| r.memstore_cells).collect();
    let (min, max) = (
        cells.iter().min().copied().unwrap_or(0),
        cells.iter().max().copied().unwrap_or(0),
    );
    println!("rows per region: min {min}, max {max} (even spread)");
    let started = std::time::Instant::now();
    let day = read_range(&table, &salter, "2015-04-26", "2015-04-27", 2)?;
    println!(
        "2015-04-26: {} rows via {buckets} sub-ranges in {:.2?}",
        day.len(),
        started.elapsed()
    );
    db.close()
}
