//! Scenario 6 of SCENARIOS.md: the row-key design helpers of `strata::keys`,
//! used the way HBase users otherwise hand-write them.
//!
//! A sensor table keyed `hash32(sensor) sensor reversed(ts)` keeps each
//! sensor's readings together (and spread across regions by the hash), newest
//! first, so "the latest N readings of sensor S" is a prefix scan with a
//! limit. Signed readings are stored order-preserving so that a value range
//! is a byte range.
//!
//! Run: `cargo run --release --example row_keys`.

use strata::keys::{self, KeyBuilder, KeyParser};
use strata::{Db, Durability, FamilyDescriptor, Put, Result, Scan, Table, TableDescriptor};

/// Width of a sensor name in the key, zero-padded on the left.
pub const SENSOR_WIDTH: usize = 6;

/// The row key of a reading of `sensor` taken at `timestamp_ms`.
pub fn reading_key(sensor: u64, timestamp_ms: i64) -> Vec<u8> {
    let name = keys::zero_padded(sensor, SENSOR_WIDTH);
    KeyBuilder::new()
        .hash32(name.as_bytes())
        .bytes(name.as_bytes())
        .reversed_timestamp(timestamp_ms)
        .build()
}

/// The key prefix shared by all readings of `sensor`.
pub fn sensor_prefix(sensor: u64) -> Vec<u8> {
    let name = keys::zero_padded(sensor, SENSOR_WIDTH);
    KeyBuilder::new()
        .hash32(name.as_bytes())
        .bytes(name.as_bytes())
        .build()
}

/// Splits a reading key back into `(sensor, timestamp_ms)`.
pub fn parse_reading_key(key: &[u8]) -> Option<(u64, i64)> {
    let mut parser = KeyParser::new(key);
    parser.u32()?; // the hash prefix
    let sensor = parser.zero_padded(SENSOR_WIDTH)?;
    let timestamp = parser.reversed_timestamp()?;
    parser.rest().is_empty().then_some((sensor, timestamp))
}

/// Creates the `readings` table.
pub fn create(db: &Db) -> Result<Table> {
    if db.table_exists("readings") {
        db.drop_table("readings")?;
    }
    db.create_table(
        TableDescriptor::new("readings")
            .family(FamilyDescriptor::new("r"))
            .durability(Durability::AsyncWal),
    )
}

/// Writes `per_sensor` readings for each of `sensors` sensors, one a second
/// from `start_ms`; reading `i` of sensor `s` has the signed value
/// `i - per_sensor / 2` (so half are negative).
pub fn load(table: &Table, sensors: u64, per_sensor: i64, start_ms: i64) -> Result<()> {
    let mut puts = Vec::new();
    for sensor in 0..sensors {
        for i in 0..per_sensor {
            let value = i - per_sensor / 2;
            puts.push(Put::new(reading_key(sensor, start_ms + i * 1000)).add(
                "r",
                "v",
                keys::encode_i64(value),
            ));
        }
    }
    table.put_many(&puts)
}

/// The `limit` newest readings of `sensor`, newest first, as
/// `(timestamp_ms, value)`.
pub fn latest(table: &Table, sensor: u64, limit: usize) -> Result<Vec<(i64, i64)>> {
    let mut out = Vec::new();
    for row in table.scan(
        &Scan::new()
            .prefix(sensor_prefix(sensor))
            .limit(limit as u64),
    )? {
        let row = row?;
        // Rows under the prefix were written by `reading_key`; skip any other.
        let Some((_, timestamp)) = parse_reading_key(&row.row) else {
            continue;
        };
        let value = row
            .value("r", "v")
            .and_then(|bytes| <[u8; 8]>::try_from(bytes).ok())
            .map(keys::decode_i64)
            .unwrap_or_default();
        out.push((timestamp, value));
    }
    Ok(out)
}

#[cfg_attr(
    test,
    expect(
        dead_code,
        reason = "tests/tests/scenarios.rs compiles this file as a module and runs its functions, not main"
    )
)]
fn main() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("strata-row-keys-{}", std::process::id()));
    let db = Db::open_default(&dir)?;
    let table = create(&db)?;
    let start_ms = 1_700_000_000_000;
    load(&table, 100, 1000, start_ms)?;

    for (timestamp, value) in latest(&table, 42, 5)? {
        println!("sensor 000042 at {timestamp}: {value}");
    }

    // Order-preserving encodings: byte order equals numeric order.
    let mut encoded: Vec<[u8; 8]> = [-5i64, 3, -1, 0, i64::MIN, i64::MAX]
        .map(keys::encode_i64)
        .to_vec();
    encoded.sort();
    let decoded: Vec<i64> = encoded.into_iter().map(keys::decode_i64).collect();
    println!("sorted by bytes: {decoded:?}");
    println!(
        "reversed key of \"abc\": {:?}",
        String::from_utf8_lossy(&keys::reversed(b"abc"))
    );

    db.close()?;
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}
