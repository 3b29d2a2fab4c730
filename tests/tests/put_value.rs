//! `Table::put_value` writes what `Table::put` of the same one-cell `Put`
//! writes, and refuses what it refuses with the same error: it is the same
//! write without the `Put`'s copy of the bytes.
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::sync::Arc;

use strata::{
    Db, DbOptions, FamilyDescriptor, Get, MAX_QUALIFIER_BYTES, MAX_ROW_KEY_BYTES, ManualClock, Put,
    Table, TableDescriptor,
};

const NOW_MS: i64 = 1_700_000_000_000;

/// Row, family, qualifier and value of a one-cell put.
type Cell<'a> = (&'a [u8], &'a [u8], &'a [u8], &'a [u8]);

fn open(dir: &std::path::Path) -> (Db, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(NOW_MS));
    let db = Db::open(
        dir,
        DbOptions {
            clock: clock.clone(),
            ..DbOptions::default()
        },
    )
    .unwrap();
    (db, clock)
}

fn table(db: &Db) -> Table {
    db.create_table(
        TableDescriptor::new("t")
            .family(FamilyDescriptor::new("f").max_versions(3))
            .max_value_bytes(64),
    )
    .unwrap()
}

#[test]
fn a_value_put_is_read_back_as_the_same_put_with_a_put() {
    let dir = tempfile::tempdir().unwrap();
    let (db, clock) = open(dir.path());
    let table = table(&db);
    table.put_value(b"r1", b"f", b"q", b"one").unwrap();
    table.put(&Put::new("r2").add("f", "q", "one")).unwrap();
    clock.advance(5);
    table.put_value(b"r1", b"f", b"q", b"two").unwrap();
    table.put(&Put::new("r2").add("f", "q", "two")).unwrap();

    let versions = |row: &str| {
        let result = table.get(&Get::new(row).max_versions(3)).unwrap();
        result
            .cells
            .iter()
            .map(|c| {
                (
                    c.family.clone(),
                    c.qualifier.clone(),
                    c.timestamp,
                    c.value.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let expected = vec![
        (b"f".to_vec(), b"q".to_vec(), NOW_MS + 5, b"two".to_vec()),
        (b"f".to_vec(), b"q".to_vec(), NOW_MS, b"one".to_vec()),
    ];
    assert_eq!(versions("r1"), expected, "the clock's time, newest first");
    assert_eq!(versions("r2"), expected);

    // Logged like any put: read back after a restart without a flush.
    drop(table);
    db.close().unwrap();
    let (db, _clock) = open(dir.path());
    let table = db.table("t").unwrap();
    let result = table.get(&Get::new("r1").max_versions(3)).unwrap();
    assert_eq!(result.cells.len(), 2);
    assert_eq!(result.cells[0].value, b"two");
}

#[test]
fn a_value_put_refuses_what_a_put_refuses_with_the_same_error() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _clock) = open(dir.path());
    let table = table(&db);
    let long_row = vec![b'r'; MAX_ROW_KEY_BYTES + 1];
    let long_qualifier = vec![b'q'; MAX_QUALIFIER_BYTES + 1];
    let large_value = [b'v'; 65];
    let cases: [(&str, Cell); 5] = [
        ("empty row", (b"", b"f", b"q", b"v")),
        ("row too long", (&long_row, b"f", b"q", b"v")),
        ("unknown family", (b"r", b"nope", b"q", b"v")),
        ("qualifier too long", (b"r", b"f", &long_qualifier, b"v")),
        (
            "value over the table's limit",
            (b"r", b"f", b"q", &large_value),
        ),
    ];
    for (case, (row, family, qualifier, value)) in cases {
        let by_value = table
            .put_value(row, family, qualifier, value)
            .expect_err(case);
        let by_put = table
            .put(&Put::new(row).add(family, qualifier, value))
            .expect_err(case);
        assert_eq!(by_value.to_string(), by_put.to_string(), "{case}");
    }
    assert_eq!(
        table.get(&Get::new("r")).unwrap().cells.len(),
        0,
        "nothing of a refused put was written"
    );
}
