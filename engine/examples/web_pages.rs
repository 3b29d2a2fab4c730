//! Scenario 4 of SCENARIOS.md: web-page connectivity records keyed by ten
//! fixed-width 4-byte big-endian fields, queried by several fields at once
//! with `RowMaskFilter`s (masked compares on the key, run as vectorized
//! kernels over whole blocks).
//!
//! Run: `cargo run --release --example web_pages [RECORDS]` (default 10,000,000).

use strata::keys::{KeyBuilder, KeyParser};
use strata::{Db, Durability, FamilyDescriptor, Put, Result, Scan, Table, TableDescriptor};

/// Field names, in key order.
pub const FIELDS: [&str; 10] = [
    "md5url", "site", "status", "code", "sdate", "type", "free", "close", "queue", "scantype",
];

/// The fields of record `i`. Each field steps with a different divisor so
/// that the fields are not correlated with each other; 5,000 distinct urls.
pub fn record(i: u32) -> [u32; 10] {
    [
        i % 5_000,
        (i / 3) % 7,
        (i / 5) % 3,
        [200, 301, 404, 500][((i / 7) % 4) as usize],
        20150401 + (i / 11) % 30,
        (i / 13) % 4,
        (i / 17) % 2,
        (i / 19) % 2,
        (i / 23) % 5,
        (i / 29) % 6,
    ]
}

/// The row key of a record: every field as 4 big-endian bytes.
pub fn key(fields: &[u32; 10]) -> Vec<u8> {
    fields
        .iter()
        .fold(KeyBuilder::new(), |b, v| b.u32(*v))
        .build()
}

/// The fields back from a key.
pub fn fields(key: &[u8]) -> Option<[u32; 10]> {
    let mut p = KeyParser::new(key);
    let mut out = [0u32; 10];
    for f in &mut out {
        *f = p.u32()?;
    }
    Some(out)
}

/// `RowMaskFilter` on field `index`: `field OP value`.
pub fn field_filter(index: usize, op: &str, value: u32) -> String {
    let v: String = value
        .to_be_bytes()
        .iter()
        .map(|b| format!("\\x{b:02X}"))
        .collect();
    format!(
        "RowMaskFilter({}, '\\xFF\\xFF\\xFF\\xFF', {op}, '{v}')",
        index * 4
    )
}

/// Creates the table and loads `records` records.
pub fn load(db: &Db, records: u32) -> Result<Table> {
    if db.table_exists("pages") {
        db.drop_table("pages")?;
    }
    let table = db.create_table(
        TableDescriptor::new("pages")
            .family(FamilyDescriptor::new("d"))
            .durability(Durability::AsyncWal),
    )?;
    let mut batch = Vec::with_capacity(1000);
    for i in 0..records {
        batch.push(Put::new(key(&record(i))).add("d", "", i.to_be_bytes()));
        if batch.len() == 1000 {
            table.put_many(&batch)?;
            batch.clear();
        }
    }
    table.put_many(&batch)?;
    table.flush()?;
    Ok(table)
}

/// The queries of the scenario, as filter strings with a description.
pub fn queries() -> Vec<(&'static str, String)> {
    vec![
        (
            "md5url = 42 AND sdate = 2015-04-12",
            format!(
                "{} AND {}",
                field_filter(0, "=", 42),
                field_filter(4, "=", 20150412)
            ),
        ),
        (
            "sdate = 2015-04-07 AND code = 404",
            format!(
                "{} AND {}",
                field_filter(4, "=", 20150407),
                field_filter(3, "=", 404)
            ),
        ),
        (
            "md5url = 42 AND 2015-04-05 < sdate < 2015-04-20",
            format!(
                "{} AND {} AND {}",
                field_filter(0, "=", 42),
                field_filter(4, ">", 20150405),
                field_filter(4, "<", 20150420)
            ),
        ),
        (
            "status = 1 AND type = 3 AND free = 1",
            format!(
                "{} AND {} AND {}",
                field_filter(2, "=", 1),
                field_filter(5, "=", 3),
                field_filter(6, "=", 1)
            ),
        ),
    ]
}

#[cfg_attr(
    test,
    expect(
        dead_code,
        reason = "tests/tests/scenarios.rs compiles this file as a module and runs its functions, not main"
    )
)]
fn main() -> Result<()> {
    let records = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let dir = tempfile::tempdir().map_err(|e| strata::Error::Io {
        context: "creating a temporary directory".into(),
        source: std::sync::Arc::new(e),
    })?;
    let db = Db::open_default(dir.path())?;
    let started = std::time::Instant::now();
    let table = load(&db, records)?;
    println!("loaded {records} records in {:.2?}", started.elapsed());
    // Median of three runs per mode; the first query of each pair narrows
    // the scan to the leading field's key range, the others scan every key.
    let median_ms = |scan: &Scan| -> Result<(u64, f64)> {
        let mut times = Vec::new();
        let mut rows = 0;
        for _ in 0..3 {
            let started = std::time::Instant::now();
            rows = table.count(scan)?;
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        Ok((rows, times[1]))
    };
    println!(
        "{:<48} {:>8}  {:>11}  {:>12}  ratio",
        "query", "rows", "kernels ms", "cell-wise ms"
    );
    for (what, filter) in queries() {
        let scan = Scan::new().filter_string(&filter)?;
        let (rows, kernels) = median_ms(&scan.clone().vectorized(true))?;
        let (_, cell_wise) = median_ms(&scan.vectorized(false))?;
        println!(
            "{what:<48} {rows:>8}  {kernels:>11.2}  {cell_wise:>12.2}  {:.1}x",
            cell_wise / kernels.max(1e-6)
        );
    }
    db.close()
}
