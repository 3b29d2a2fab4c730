//! One test per rule of docs/semantics.md (`rNN_` = rule NN).
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::time::Duration;

use strata::{
    Append, BatchOp, BatchResult, CellKind, CheckAndMutate, CompareOp, Delete, Durability, Error,
    FamilyDescriptor, Get, Increment, KeepDeletedCells, PreSplit, Put, RowMutations, RowResult,
    Scan, Table, TableDescriptor,
};
use strata_tests::{TestDb, cells, scan_rows};

fn table(t: &TestDb, versions: u32) -> Table {
    t.db.create_table(
        TableDescriptor::new("t")
            .family(FamilyDescriptor::new("f").max_versions(versions))
            .family(FamilyDescriptor::new("g").max_versions(versions)),
    )
    .unwrap()
}

fn all(row: &str) -> Get {
    Get::new(row).all_versions()
}

fn c(f: &str, q: &str, ts: i64, v: &str) -> (String, String, i64, String) {
    (f.into(), q.into(), ts, v.into())
}

#[test]
fn r01_cells_are_addressed_by_row_column_and_timestamp() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    tbl.put(&Put::new("r").add_at("f", "", 5, "empty qualifier"))
        .unwrap();
    tbl.put(&Put::new(vec![0u8, 255]).add_at("f", "q", 5, "binary row"))
        .unwrap();
    assert_eq!(
        cells(&tbl.get(&all("r")).unwrap()),
        [c("f", "", 5, "empty qualifier")]
    );
    assert_eq!(tbl.get(&Get::new([0u8, 255])).unwrap().cells.len(), 1);
    assert!(matches!(
        tbl.put(&Put::new("").add("f", "q", "x")),
        Err(Error::EmptyRowKey)
    ));
    assert!(matches!(
        tbl.put(&Put::new("r").add("nope", "q", "x")),
        Err(Error::UnknownFamily { .. })
    ));
    assert!(matches!(
        tbl.put(&Put::new("r").add_at("f", "q", -1, "x")),
        Err(Error::NegativeTimestamp { .. })
    ));
    // HBase's LATEST_TIMESTAMP; the other write paths are in tests/tests/timestamps.rs.
    assert!(matches!(
        tbl.put(&Put::new("r").add_at("f", "q", i64::MAX, "x")),
        Err(Error::ReservedTimestamp { .. })
    ));
    let long = vec![b'k'; strata::MAX_ROW_KEY_BYTES + 1];
    assert!(matches!(
        tbl.put(&Put::new(&long).add("f", "q", "x")),
        Err(Error::RowKeyTooLong { .. })
    ));
    let longest = vec![b'k'; strata::MAX_ROW_KEY_BYTES];
    tbl.put(&Put::new(&longest).add("f", "q", "x")).unwrap();
    assert!(!tbl.get(&Get::new(&longest)).unwrap().is_empty());
}

#[test]
fn r02_results_are_ordered_by_family_qualifier_and_newest_first() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    tbl.put(&Put::new("r").add_at("g", "x", 1, "1")).unwrap();
    tbl.put(&Put::new("r").add_at("f", "y", 1, "2")).unwrap();
    tbl.put(&Put::new("r").add_at("f", "x", 1, "3")).unwrap();
    tbl.put(&Put::new("r").add_at("f", "x", 2, "4")).unwrap();
    assert_eq!(
        cells(&tbl.get(&all("r")).unwrap()),
        [
            c("f", "x", 2, "4"),
            c("f", "x", 1, "3"),
            c("f", "y", 1, "2"),
            c("g", "x", 1, "1")
        ]
    );
    for row in ["b", "c", "a"] {
        tbl.put(&Put::new(row).add("f", "q", "v")).unwrap();
    }
    assert_eq!(scan_rows(&tbl, &Scan::new()), ["a", "b", "c", "r"]);
    assert_eq!(
        scan_rows(&tbl, &Scan::new().reversed(true)),
        ["r", "c", "b", "a"]
    );
}

#[test]
fn r03_default_timestamp_is_the_server_clock_once_per_mutation() {
    let t = TestDb::new(123_456);
    let tbl = table(&t, 3);
    tbl.put(&Put::new("r").add("f", "a", "1").add("g", "b", "2"))
        .unwrap();
    let got = tbl.get(&Get::new("r")).unwrap();
    assert!(got.cells.iter().all(|c| c.timestamp == 123_456));
    t.clock.advance(10);
    tbl.put(&Put::new("r").add("f", "a", "3")).unwrap();
    assert_eq!(tbl.get(&Get::new("r")).unwrap().cells[0].timestamp, 123_466);
}

#[test]
fn r04_at_one_timestamp_the_newest_write_wins() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    tbl.put(&Put::new("r").add_at("f", "q", 7, "a")).unwrap();
    tbl.put(&Put::new("r").add_at("f", "q", 7, "b")).unwrap();
    assert_eq!(cells(&tbl.get(&all("r")).unwrap()), [c("f", "q", 7, "b")]);
    // Within one put, the last cell for a key wins too.
    tbl.put(
        &Put::new("r")
            .add_at("f", "z", 1, "x")
            .add_at("f", "z", 1, "y"),
    )
    .unwrap();
    assert_eq!(
        tbl.get(&Get::new("r").column("f", "z"))
            .unwrap()
            .value("f", "z"),
        Some(&b"y"[..])
    );
}

#[test]
fn r05_the_family_keeps_a_window_of_versions() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 2);
    for (ts, v) in [(1, "a"), (2, "b"), (3, "c")] {
        tbl.put(&Put::new("r").add_at("f", "q", ts, v)).unwrap();
    }
    assert_eq!(
        cells(&tbl.get(&all("r")).unwrap()),
        [c("f", "q", 3, "c"), c("f", "q", 2, "b")]
    );
    // Rewriting the same timestamps does not widen the window.
    tbl.put(&Put::new("r").add_at("f", "q", 3, "c2")).unwrap();
    assert_eq!(
        cells(&tbl.get(&all("r")).unwrap()),
        [c("f", "q", 3, "c2"), c("f", "q", 2, "b")]
    );
}

#[test]
fn r06_a_query_returns_at_most_its_max_versions() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    for (ts, v) in [(1, "a"), (2, "b"), (3, "c")] {
        tbl.put(&Put::new("r").add_at("f", "q", ts, v)).unwrap();
    }
    assert_eq!(
        cells(&tbl.get(&Get::new("r")).unwrap()),
        [c("f", "q", 3, "c")]
    );
    assert_eq!(
        cells(&tbl.get(&Get::new("r").max_versions(2)).unwrap()),
        [c("f", "q", 3, "c"), c("f", "q", 2, "b")]
    );
    assert!(matches!(
        tbl.get(&Get::new("r").max_versions(0)),
        Err(Error::InvalidOption { .. })
    ));
}

#[test]
fn r07_time_ranges_select_inside_the_window() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 2);
    for ts in 1..=3 {
        tbl.put(&Put::new("r").add_at("f", "q", ts, format!("v{ts}")))
            .unwrap();
    }
    let got = tbl.get(&all("r").time_range(1, 3)).unwrap();
    assert_eq!(
        cells(&got),
        [c("f", "q", 2, "v2")],
        "ts 1 is outside the window"
    );
    assert_eq!(
        cells(&tbl.get(&Get::new("r").timestamp(3)).unwrap()),
        [c("f", "q", 3, "v3")]
    );
    assert!(tbl.get(&Get::new("r").timestamp(1)).unwrap().is_empty());
    assert!(matches!(
        tbl.get(&Get::new("r").time_range(5, 2)),
        Err(Error::InvalidTimeRange { .. })
    ));
    assert!(matches!(
        tbl.get(&Get::new("r").time_range(-1, 2)),
        Err(Error::InvalidTimeRange { .. })
    ));
}

#[test]
fn r08_cells_older_than_the_ttl_are_not_returned() {
    let t = TestDb::new(100_000);
    let tbl =
        t.db.create_table(
            TableDescriptor::new("ttl").family(
                FamilyDescriptor::new("f")
                    .max_versions(2)
                    .ttl(Duration::from_secs(10)),
            ),
        )
        .unwrap();
    tbl.put(&Put::new("old").add_at("f", "q", 85_000, "x"))
        .unwrap();
    tbl.put(&Put::new("new").add_at("f", "q", 95_000, "y"))
        .unwrap();
    assert!(tbl.get(&Get::new("old")).unwrap().is_empty());
    assert!(!tbl.get(&Get::new("new")).unwrap().is_empty());
    t.clock.set(105_001);
    assert!(
        tbl.get(&Get::new("new")).unwrap().is_empty(),
        "expired as the clock moved"
    );
    // Expired versions still occupy window places: window {106_000, 85_000}.
    tbl.put(&Put::new("w").add_at("f", "q", 85_000, "expired"))
        .unwrap();
    tbl.put(&Put::new("w").add_at("f", "q", 80_000, "older"))
        .unwrap();
    tbl.put(&Put::new("w").add_at("f", "q", 106_000, "fresh"))
        .unwrap();
    assert_eq!(
        cells(&tbl.get(&all("w")).unwrap()),
        [c("f", "q", 106_000, "fresh")]
    );
}

/// Runs `check` on the table as written (memstore), after a flush, after a
/// major compaction and after a reopen: the rules hold at every stage.
fn at_every_stage(t: &mut TestDb, name: &str, check: impl Fn(&Table, &str)) {
    let tbl = t.db.table(name).unwrap();
    check(&tbl, "in the memstore");
    tbl.flush().unwrap();
    check(&tbl, "after a flush");
    tbl.major_compact().unwrap();
    check(&tbl, "after a major compaction");
    t.reopen();
    check(&t.db.table(name).unwrap(), "after a reopen");
}

/// R08b, HBase's `MIN_VERSIONS` (`ScanWildcardColumnTracker.checkVersion`:
/// "keep the KV if required by minversions or it is not expired"; HBase
/// book, "Minimum Number of Versions"): expired versions among the newest
/// `MIN_VERSIONS` of their column are returned and kept by compaction.
#[test]
fn r08b_min_versions_outlive_the_ttl() {
    let mut t = TestDb::new(100_000);
    let ttl = Duration::from_secs(10);
    t.db.create_table(
        TableDescriptor::new("mv")
            .family(
                FamilyDescriptor::new("f")
                    .max_versions(3)
                    .min_versions(2)
                    .ttl(ttl),
            )
            .family(FamilyDescriptor::new("g").max_versions(3).ttl(ttl)),
    )
    .unwrap();
    let tbl = t.db.table("mv").unwrap();
    for family in ["f", "g"] {
        let mut put = Put::new("r");
        // Now - TTL = 90_000: q is wholly expired; p has one fresh version.
        for (q, ts) in [("q", 70_000), ("q", 80_000), ("q", 85_000)] {
            put = put.add_at(family, q, ts, format!("{q}{ts}"));
        }
        for (q, ts) in [("p", 50_000), ("p", 60_000), ("p", 95_000)] {
            put = put.add_at(family, q, ts, format!("{q}{ts}"));
        }
        tbl.put(&put).unwrap();
    }
    let expected = [
        c("f", "p", 95_000, "p95000"),
        c("f", "p", 60_000, "p60000"),
        c("f", "q", 85_000, "q85000"),
        c("f", "q", 80_000, "q80000"),
        c("g", "p", 95_000, "p95000"),
    ];
    at_every_stage(&mut t, "mv", |tbl, stage| {
        assert_eq!(cells(&tbl.get(&all("r")).unwrap()), expected, "{stage}");
        assert_eq!(
            cells(
                &tbl.get(&Get::new("r").time_range(0, 82_000).all_versions())
                    .unwrap()
            ),
            [c("f", "p", 60_000, "p60000"), c("f", "q", 80_000, "q80000")],
            "{stage}: the time range selects among the kept versions"
        );
    });
    // Much later every version is expired: MIN_VERSIONS still holds two.
    t.clock.set(1_000_000);
    let tbl = t.db.table("mv").unwrap();
    tbl.major_compact().unwrap();
    assert_eq!(
        cells(&tbl.get(&all("r")).unwrap()),
        [
            c("f", "p", 95_000, "p95000"),
            c("f", "p", 60_000, "p60000"),
            c("f", "q", 85_000, "q85000"),
            c("f", "q", 80_000, "q80000"),
        ]
    );
    // A newer version pushes the oldest kept one out.
    tbl.put(&Put::new("r").add_at("f", "q", 999_000, "fresh"))
        .unwrap();
    assert_eq!(
        cells(
            &tbl.get(&Get::new("r").column("f", "q").all_versions())
                .unwrap()
        ),
        [c("f", "q", 999_000, "fresh"), c("f", "q", 85_000, "q85000")]
    );
    // Without a TTL MIN_VERSIONS changes nothing; above VERSIONS it is refused.
    let refused = t.db.create_table(
        TableDescriptor::new("bad")
            .family(FamilyDescriptor::new("f").max_versions(1).min_versions(2)),
    );
    assert!(
        matches!(
            refused,
            Err(Error::InvalidOption {
                name: "MIN_VERSIONS",
                ..
            })
        ),
        "{refused:?}"
    );
    assert!(t.db.table("bad").is_err(), "nothing was created");
}

#[test]
fn r09_delete_version_hides_exactly_one_timestamp() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    tbl.put(
        &Put::new("r")
            .add_at("f", "q", 1, "a")
            .add_at("f", "q", 2, "b"),
    )
    .unwrap();
    tbl.delete(&Delete::new("r").column_version("f", "q", 2))
        .unwrap();
    assert_eq!(cells(&tbl.get(&all("r")).unwrap()), [c("f", "q", 1, "a")]);
}

#[test]
fn r10_delete_latest_version_hides_the_newest_visible_one() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    tbl.put(&Put::new("r").add_at("f", "q", 1, "a")).unwrap();
    tbl.put(&Put::new("r").add_at("f", "q", 2, "b")).unwrap();
    tbl.delete(&Delete::new("r").column_latest_version("f", "q"))
        .unwrap();
    assert_eq!(cells(&tbl.get(&all("r")).unwrap()), [c("f", "q", 1, "a")]);
    tbl.delete(&Delete::new("r").column_latest_version("f", "q"))
        .unwrap();
    assert!(tbl.get(&all("r")).unwrap().is_empty());
    // With nothing to delete the marker lands at "now" and hides nothing older.
    tbl.delete(&Delete::new("r").column_latest_version("f", "q"))
        .unwrap();
    tbl.put(&Put::new("r").add_at("f", "q", 999, "z")).unwrap();
    assert_eq!(cells(&tbl.get(&all("r")).unwrap()), [c("f", "q", 999, "z")]);
}

#[test]
fn r11_delete_column_hides_every_version_up_to_its_timestamp() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    for ts in 1..=3 {
        tbl.put(&Put::new("r").add_at("f", "q", ts, format!("v{ts}")))
            .unwrap();
    }
    tbl.delete(&Delete::new("r").column_all_versions_up_to("f", "q", 2))
        .unwrap();
    assert_eq!(cells(&tbl.get(&all("r")).unwrap()), [c("f", "q", 3, "v3")]);
    tbl.delete(&Delete::new("r").column_all_versions("f", "q"))
        .unwrap();
    assert!(tbl.get(&all("r")).unwrap().is_empty());
}

#[test]
fn r12_delete_family_hides_every_column_up_to_its_timestamp() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    tbl.put(
        &Put::new("r")
            .add_at("f", "a", 1, "a1")
            .add_at("f", "b", 5, "b5")
            .add_at("f", "", 2, "e2"),
    )
    .unwrap();
    tbl.put(&Put::new("r").add_at("g", "a", 1, "other family"))
        .unwrap();
    tbl.delete(&Delete::new("r").family_up_to("f", 3)).unwrap();
    assert_eq!(
        cells(&tbl.get(&all("r")).unwrap()),
        [c("f", "b", 5, "b5"), c("g", "a", 1, "other family")]
    );
}

#[test]
fn r13_delete_family_version_hides_one_timestamp_in_every_column() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    tbl.put(
        &Put::new("r")
            .add_at("f", "a", 3, "a3")
            .add_at("f", "b", 3, "b3")
            .add_at("f", "b", 4, "b4"),
    )
    .unwrap();
    tbl.delete(&Delete::new("r").family_version("f", 3))
        .unwrap();
    assert_eq!(cells(&tbl.get(&all("r")).unwrap()), [c("f", "b", 4, "b4")]);
}

#[test]
fn r14_deleting_a_row_deletes_every_family() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    tbl.put(
        &Put::new("r")
            .add_at("f", "a", 1, "x")
            .add_at("g", "b", 2, "y"),
    )
    .unwrap();
    tbl.put(&Put::new("r").add_at("g", "c", 2000, "future"))
        .unwrap();
    tbl.delete(&Delete::new("r")).unwrap();
    assert_eq!(
        cells(&tbl.get(&all("r")).unwrap()),
        [c("g", "c", 2000, "future")],
        "now = 1000"
    );
    tbl.delete(&Delete::new("r").timestamp(5000)).unwrap();
    assert!(tbl.get(&all("r")).unwrap().is_empty());
    // Raw view: one DeleteFamily marker per family.
    let raw = tbl
        .scan(&Scan::new().raw(true).all_versions())
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let markers = raw
        .cells
        .iter()
        .filter(|c| c.kind == CellKind::DeleteFamily)
        .count();
    assert_eq!(markers, 4);
}

#[test]
fn r15_a_put_after_a_delete_is_visible_even_with_an_older_timestamp() {
    let t = TestDb::new(100);
    let tbl = table(&t, 3);
    tbl.put(&Put::new("r").add_at("f", "q", 10, "a")).unwrap();
    tbl.delete(&Delete::new("r").column_all_versions("f", "q"))
        .unwrap();
    tbl.put(&Put::new("r").add_at("f", "q", 5, "late but older"))
        .unwrap();
    assert_eq!(
        cells(&tbl.get(&all("r")).unwrap()),
        [c("f", "q", 5, "late but older")]
    );
    tbl.delete(&Delete::new("r")).unwrap();
    tbl.put(&Put::new("r").add_at("g", "q", 1, "after row delete"))
        .unwrap();
    assert_eq!(
        cells(&tbl.get(&all("r")).unwrap()),
        [c("g", "q", 1, "after row delete")]
    );
}

#[test]
fn r16_a_hidden_version_keeps_its_place_in_the_window() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 2);
    for ts in 1..=3 {
        tbl.put(&Put::new("r").add_at("f", "q", ts, format!("v{ts}")))
            .unwrap();
    }
    tbl.delete(&Delete::new("r").column_version("f", "q", 3))
        .unwrap();
    assert_eq!(cells(&tbl.get(&all("r")).unwrap()), [c("f", "q", 2, "v2")]);
}

#[test]
fn r17_raw_scans_return_markers_and_hidden_cells() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 1);
    tbl.put(&Put::new("r").add_at("f", "q", 1, "old")).unwrap();
    tbl.put(&Put::new("r").add_at("f", "q", 2, "new")).unwrap();
    tbl.delete(&Delete::new("r").column_version("f", "q", 2))
        .unwrap();
    tbl.delete(&Delete::new("r").family_up_to("g", 7)).unwrap();
    assert!(
        tbl.get(&all("r")).unwrap().is_empty(),
        "window of 1 holds only the hidden ts 2"
    );
    let raw = tbl
        .scan(&Scan::new().raw(true).all_versions())
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let got: Vec<_> = raw
        .cells
        .iter()
        .map(|c| {
            (
                String::from_utf8_lossy(&c.family).into_owned(),
                c.timestamp,
                c.kind,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("f".into(), 2, CellKind::Delete),
            ("f".into(), 2, CellKind::Put),
            ("f".into(), 1, CellKind::Put),
            ("g".into(), 7, CellKind::DeleteFamily)
        ]
    );
    let limited = tbl
        .scan(&Scan::new().raw(true).max_versions(1))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(
        limited
            .cells
            .iter()
            .filter(|c| c.kind == CellKind::Put)
            .count(),
        1
    );
}

/// Families, timestamps, kinds and values of a raw scan's cells of the
/// first row.
fn raw_cells(tbl: &Table) -> Vec<(String, i64, CellKind, String)> {
    let raw: Option<RowResult> = tbl
        .scan(&Scan::new().raw(true).all_versions())
        .unwrap()
        .next()
        .map(|r| r.unwrap());
    raw.map(|row| {
        row.cells
            .iter()
            .map(|c| {
                (
                    String::from_utf8_lossy(&c.family).into_owned(),
                    c.timestamp,
                    c.kind,
                    String::from_utf8_lossy(&c.value).into_owned(),
                )
            })
            .collect()
    })
    .unwrap_or_default()
}

/// R17a, HBase's `KEEP_DELETED_CELLS` (HBase book, "Keeping Deleted Cells",
/// HBASE-9005; `NormalUserScanQueryMatcher` tracks a marker only inside the
/// time range when deleted cells are kept, and
/// `CompactionScanQueryMatcher.trackDelete` does not track markers at all
/// under `TRUE`): deleted cells stay readable by time ranges that end
/// before the delete's timestamp, by raw scans and by read snapshots taken
/// before the delete, through flushes and major compactions; normal reads
/// still honour the delete; versions beyond `VERSIONS` still go.
#[test]
fn r17a_keep_deleted_cells_keeps_deleted_cells_for_time_range_and_raw_reads() {
    let mut t = TestDb::new(1000);
    t.db.create_table(
        TableDescriptor::new("kd")
            .family(
                FamilyDescriptor::new("f")
                    .max_versions(2)
                    .keep_deleted_cells(KeepDeletedCells::True),
            )
            .family(FamilyDescriptor::new("g").max_versions(2)),
    )
    .unwrap();
    let tbl = t.db.table("kd").unwrap();
    for family in ["f", "g"] {
        tbl.put(&Put::new("r").add_at(family, "q", 10, "v10"))
            .unwrap();
        tbl.put(&Put::new("r").add_at(family, "q", 20, "v20"))
            .unwrap();
    }
    for family in ["f", "g"] {
        tbl.delete(&Delete::new("r").column_all_versions_up_to(family, "q", 30))
            .unwrap();
    }
    at_every_stage(&mut t, "kd", |tbl, stage| {
        assert!(tbl.get(&all("r")).unwrap().is_empty(), "{stage}: deleted");
        assert_eq!(
            cells(&tbl.get(&all("r").time_range(0, 30)).unwrap()),
            [c("f", "q", 20, "v20"), c("f", "q", 10, "v10")],
            "{stage}: a range ending before the marker (ts 30) sees f's deleted cells, not g's"
        );
        assert!(
            tbl.get(&all("r").time_range(0, 31)).unwrap().is_empty(),
            "{stage}: a range holding the marker honours it"
        );
    });
    let tbl = t.db.table("kd").unwrap();
    assert_eq!(
        raw_cells(&tbl),
        [
            ("f".into(), 30, CellKind::DeleteColumn, "".into()),
            ("f".into(), 20, CellKind::Put, "v20".into()),
            ("f".into(), 10, CellKind::Put, "v10".into()),
            ("g".into(), 30, CellKind::DeleteColumn, "".into()),
            ("g".into(), 20, CellKind::Put, "".into()),
            ("g".into(), 10, CellKind::Put, "".into()),
        ],
        "raw: f's deleted cells keep their values; g's are value-less ghosts (R16)"
    );
    // Versions beyond VERSIONS still go.
    tbl.put(&Put::new("r").add_at("f", "q", 25, "v25")).unwrap();
    tbl.flush().unwrap();
    tbl.major_compact().unwrap();
    assert_eq!(
        cells(&tbl.get(&all("r").time_range(0, 30)).unwrap()),
        [c("f", "q", 25, "v25"), c("f", "q", 20, "v20")]
    );
    // A read snapshot taken before a delete reads the deleted cells.
    let snapshot = t.db.read_snapshot().unwrap();
    tbl.delete(&Delete::new("r").family_up_to("f", 40)).unwrap();
    tbl.flush().unwrap();
    tbl.major_compact().unwrap();
    assert_eq!(
        cells(&tbl.get(&Get::new("r").snapshot(&snapshot)).unwrap()),
        [c("f", "q", 25, "v25")]
    );
    drop(snapshot);
    tbl.major_compact().unwrap();
    assert_eq!(
        cells(&tbl.get(&all("r").time_range(0, 30)).unwrap()),
        [c("f", "q", 25, "v25"), c("f", "q", 20, "v20")],
        "kept without a snapshot too"
    );
}

/// R17b, `KEEP_DELETED_CELLS => 'TTL'` (HBase's `KeepDeletedCells.TTL`:
/// "deleted cells are retained until the delete marker expires due to
/// TTL"): deleted cells read as under `TRUE` while their marker lives;
/// once it expires it acts as under `FALSE`, even for the versions
/// `MIN_VERSIONS` keeps.
#[test]
fn r17b_keep_deleted_cells_ttl_keeps_them_until_the_marker_expires() {
    let mut t = TestDb::new(100_000);
    t.db.create_table(
        TableDescriptor::new("kt").family(
            FamilyDescriptor::new("f")
                .max_versions(3)
                .min_versions(1)
                .ttl(Duration::from_secs(10))
                .keep_deleted_cells(KeepDeletedCells::Ttl),
        ),
    )
    .unwrap();
    let tbl = t.db.table("kt").unwrap();
    tbl.put(&Put::new("r").add_at("f", "q", 95_000, "v"))
        .unwrap();
    tbl.delete(&Delete::new("r").column_all_versions_up_to("f", "q", 96_000))
        .unwrap();
    at_every_stage(&mut t, "kt", |tbl, stage| {
        assert!(tbl.get(&all("r")).unwrap().is_empty(), "{stage}");
        assert_eq!(
            cells(&tbl.get(&all("r").time_range(0, 96_000)).unwrap()),
            [c("f", "q", 95_000, "v")],
            "{stage}: the marker is alive, the deleted cell readable"
        );
    });
    // The marker (96_000) expires at 106_001; the put stays by MIN_VERSIONS
    // but the expired marker now hides it from every read.
    t.clock.set(106_001);
    at_every_stage(&mut t, "kt", |tbl, stage| {
        assert!(
            tbl.get(&all("r").time_range(0, 96_000)).unwrap().is_empty(),
            "{stage}: the expired marker hides the cell"
        );
    });
    // Unknown names are refused by name.
    assert_eq!(
        KeepDeletedCells::from_name("ttl"),
        Some(KeepDeletedCells::Ttl)
    );
    assert_eq!(KeepDeletedCells::from_name("MAYBE"), None);
}

#[test]
fn r18_a_mutation_is_atomic_across_families() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 1);
    let writer = {
        let tbl = tbl.clone();
        std::thread::spawn(move || {
            for i in 0..2000u32 {
                let v = i.to_string();
                tbl.put(
                    &Put::new("r")
                        .add("f", "a", &v)
                        .add("g", "b", &v)
                        .durability(Durability::SkipWal),
                )
                .unwrap();
            }
        })
    };
    while !writer.is_finished() {
        let row = tbl.get(&Get::new("r")).unwrap();
        if !row.is_empty() {
            assert_eq!(row.cells.len(), 2, "both families or none");
            assert_eq!(
                row.value("f", "a"),
                row.value("g", "b"),
                "never half of a mutation"
            );
        }
    }
    writer.join().unwrap();
}

#[test]
fn r19_a_returned_write_is_visible_to_every_later_read() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 1);
    let threads: Vec<_> = (0..4)
        .map(|w| {
            let tbl = tbl.clone();
            std::thread::spawn(move || {
                for i in 0..200 {
                    let row = format!("w{w}-{i}");
                    tbl.put(
                        &Put::new(&row)
                            .add("f", "q", "v")
                            .durability(Durability::AsyncWal),
                    )
                    .unwrap();
                    assert!(tbl.exists(&Get::new(&row)).unwrap());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(tbl.scan(&Scan::new()).unwrap().count(), 800);
}

#[test]
fn r20_increments_are_atomic_big_endian_counters() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 1);
    let r = tbl
        .increment(&Increment::new("c").add("f", "n", 5).add("f", "n", 2))
        .unwrap();
    assert_eq!(r.value("f", "n"), Some(&7i64.to_be_bytes()[..]));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let tbl = tbl.clone();
            std::thread::spawn(move || {
                for _ in 0..100 {
                    tbl.increment(
                        &Increment::new("c")
                            .add("f", "n", 1)
                            .durability(Durability::SkipWal),
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let v = tbl.get(&Get::new("c")).unwrap();
    assert_eq!(v.value("f", "n"), Some(&407i64.to_be_bytes()[..]));
    tbl.put(&Put::new("s").add("f", "n", "abc")).unwrap();
    assert!(matches!(
        tbl.increment(&Increment::new("s").add("f", "n", 1)),
        Err(Error::NotACounter { len: 3, .. })
    ));
    tbl.put(&Put::new("m").add("f", "n", i64::MAX.to_be_bytes()))
        .unwrap();
    let before = tbl.get(&Get::new("m")).unwrap();
    assert!(matches!(
        tbl.increment(&Increment::new("m").add("g", "other", 1).add("f", "n", 1)),
        Err(Error::CounterOverflow { .. })
    ));
    assert_eq!(
        tbl.get(&Get::new("m")).unwrap(),
        before,
        "nothing written, not even g:other"
    );
    // The new version's timestamp never goes below the previous one.
    tbl.put(&Put::new("fut").add_at("f", "n", 5000, 1i64.to_be_bytes()))
        .unwrap();
    let r = tbl
        .increment(&Increment::new("fut").add("f", "n", 1))
        .unwrap();
    assert_eq!(r.cells[0].timestamp, 5000);
    assert_eq!(
        tbl.get(&Get::new("fut")).unwrap().value("f", "n"),
        Some(&2i64.to_be_bytes()[..])
    );
}

#[test]
fn r21_appends_concatenate_atomically() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 1);
    let r = tbl.append(&Append::new("r").add("f", "q", "ab")).unwrap();
    assert_eq!(r.value("f", "q"), Some(&b"ab"[..]));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let tbl = tbl.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    tbl.append(&Append::new("r").add("f", "q", "x")).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        tbl.get(&Get::new("r"))
            .unwrap()
            .value("f", "q")
            .unwrap()
            .len(),
        202
    );
}

#[test]
fn r22_check_and_mutate_compares_operand_with_stored_value() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 1);
    let claim = |op: CompareOp, operand: &str, value: &str| {
        tbl.check_and_mutate(
            &CheckAndMutate::builder("r")
                .if_matches("f", "q", op, operand)
                .then_put(Put::new("r").add("f", "q", value)),
        )
        .unwrap()
        .success
    };
    let created = tbl
        .check_and_mutate(
            &CheckAndMutate::builder("r")
                .if_not_exists("f", "q")
                .then_put(Put::new("r").add("f", "q", "5")),
        )
        .unwrap();
    assert!(created.success);
    assert!(!claim(CompareOp::Greater, "3", "x"), "3 > 5 is false");
    assert!(claim(CompareOp::Greater, "7", "6"), "7 > 5");
    assert!(claim(CompareOp::Equal, "6", "8"));
    assert!(!claim(CompareOp::Equal, "6", "9"));
    assert!(
        claim(CompareOp::NotEqual, "", "9"),
        "NotEqual with empty operand: exists"
    );
    assert_eq!(
        tbl.get(&Get::new("r")).unwrap().value("f", "q"),
        Some(&b"9"[..])
    );
    let missing = tbl
        .check_and_mutate(
            &CheckAndMutate::builder("x")
                .if_equals("f", "q", "1")
                .then_put(Put::new("x").add("f", "q", "2")),
        )
        .unwrap();
    assert!(
        !missing.success,
        "a non-empty operand never matches a missing column"
    );
    let inc = tbl
        .check_and_mutate(&CheckAndMutate::builder("r").if_equals("f", "q", "9").then(
            strata::CheckAction::Increment(Increment::new("r").add("g", "n", 3)),
        ))
        .unwrap();
    assert_eq!(
        inc.result.unwrap().value("g", "n"),
        Some(&3i64.to_be_bytes()[..])
    );
    let wrong_row = CheckAndMutate::builder("r")
        .if_not_exists("f", "z")
        .then_put(Put::new("other").add("f", "q", "v"));
    assert!(matches!(
        tbl.check_and_mutate(&wrong_row),
        Err(Error::RowMismatch { .. })
    ));
}

/// HBase 2.4 `CheckAndMutate.Builder.ifMatches(Filter)`: the check holds
/// when a get of the row with the filter returns a cell (HRegion
/// `checkAndMutateInternal`: `matches = !result.isEmpty()` with a filter);
/// and the row-presence checks.
#[test]
fn r22a_check_and_mutate_with_a_filter_or_on_the_row() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 1);
    tbl.put(&Put::new("r").add("f", "status", "open").add("g", "n", "1"))
        .unwrap();
    let by_filter = |filter: &str, value: &str| {
        tbl.check_and_mutate(
            &CheckAndMutate::builder("r")
                .if_filter_matches(strata::filters::parse(filter).unwrap())
                .then_put(Put::new("r").add("f", "seen", value)),
        )
        .unwrap()
        .success
    };
    assert!(by_filter(
        "SingleColumnValueFilter('f', 'status', =, 'binary:open')",
        "1"
    ));
    assert!(!by_filter(
        "SingleColumnValueFilter('f', 'status', =, 'binary:closed', true, true)",
        "2"
    ));
    // The filter sees every family of the row.
    assert!(by_filter("QualifierFilter(=, 'binary:n')", "3"));
    assert!(!by_filter("ValueFilter(=, 'binary:nothing')", "4"));
    assert_eq!(
        tbl.get(&Get::new("r")).unwrap().value("f", "seen"),
        Some(&b"3"[..])
    );
    // Within the check's time range only: the cells are at 1000.
    let outside = tbl
        .check_and_mutate(
            &CheckAndMutate::builder("r")
                .if_filter_matches(
                    strata::filters::parse("QualifierFilter(=, 'binary:n')").unwrap(),
                )
                .time_range(0, 1000)
                .then_put(Put::new("r").add("f", "seen", "5")),
        )
        .unwrap();
    assert!(!outside.success);
    // Row presence: a new row is created once; a deleted row counts as absent.
    let create = |row: &str, value: &str| {
        tbl.check_and_mutate(
            &CheckAndMutate::builder(row)
                .if_row_not_exists()
                .then_put(Put::new(row).add("f", "q", value)),
        )
        .unwrap()
        .success
    };
    assert!(create("new", "a"));
    assert!(!create("new", "b"), "the row exists now");
    assert!(!create("r", "c"));
    tbl.delete(&Delete::new("r")).unwrap();
    t.clock.advance(1);
    assert!(create("r", "d"), "every cell of the row deleted: absent");
    let touched = tbl
        .check_and_mutate(
            &CheckAndMutate::builder("gone")
                .if_row_exists()
                .then_delete(Delete::new("gone")),
        )
        .unwrap();
    assert!(!touched.success);
    assert!(
        tbl.check_and_mutate(
            &CheckAndMutate::builder("new")
                .if_row_exists()
                .then_put(Put::new("new").add("g", "n", "2")),
        )
        .unwrap()
        .success
    );
    // A bad action is refused before the check runs: nothing written.
    let bad = CheckAndMutate::builder("new")
        .if_row_exists()
        .then_put(Put::new("new").add("nope", "q", "never"));
    assert!(matches!(
        tbl.check_and_mutate(&bad),
        Err(Error::UnknownFamily { .. })
    ));
}

#[test]
fn r23_row_mutations_share_one_sequence() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    tbl.put(&Put::new("r").add("f", "old", "x").add("g", "old", "y"))
        .unwrap();
    tbl.mutate_row(
        &RowMutations::new("r")
            .delete(Delete::new("r"))
            .put(Put::new("r").add("f", "q", "new")),
    )
    .unwrap();
    assert_eq!(
        cells(&tbl.get(&Get::new("r")).unwrap()),
        [c("f", "q", 1000, "new")]
    );
    let bad = RowMutations::new("r").put(Put::new("s").add("f", "q", "v"));
    assert!(matches!(
        tbl.mutate_row(&bad),
        Err(Error::RowMismatch { .. })
    ));
}

#[test]
fn r24_batches_run_each_operation_on_its_own() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 1);
    let results = tbl.batch(&[
        BatchOp::Put(Put::new("a").add("f", "q", "1")),
        BatchOp::Put(Put::new("b").add("nope", "q", "1")),
        BatchOp::Put(Put::new("c").add("f", "q", "3")),
        BatchOp::Get(Get::new("a")),
        BatchOp::Increment(Increment::new("n").add("f", "c", 2)),
        BatchOp::Delete(Delete::new("c")),
    ]);
    assert!(matches!(results[0], Ok(BatchResult::Done)));
    assert!(matches!(results[1], Err(Error::UnknownFamily { .. })));
    assert!(matches!(results[2], Ok(BatchResult::Done)));
    match &results[3] {
        Ok(BatchResult::Row(r)) => assert_eq!(r.value("f", "q"), Some(&b"1"[..])),
        other => panic!("{other:?}"),
    }
    assert!(matches!(results[4], Ok(BatchResult::Row(_))));
    assert!(matches!(results[5], Ok(BatchResult::Done)));
    assert_eq!(scan_rows(&tbl, &Scan::new()), ["a", "n"]);
}

#[test]
fn r25_scan_ranges_prefixes_reversal_limits_and_batches_cross_regions() {
    let t = TestDb::new(1000);
    let tbl =
        t.db.create_table(
            TableDescriptor::new("ranges")
                .family(FamilyDescriptor::new("f"))
                .pre_split(PreSplit::Keys(vec![b"b".to_vec(), b"d".to_vec()])),
        )
        .unwrap();
    assert_eq!(tbl.regions().unwrap().len(), 3);
    for row in ["a", "aa", "b", "ba", "bb", "c", "d", "e"] {
        tbl.put(
            &Put::new(row)
                .add("f", "q1", "1")
                .add("f", "q2", "2")
                .add("f", "q3", "3"),
        )
        .unwrap();
    }
    let rows = |s: Scan| scan_rows(&tbl, &s);
    assert_eq!(
        rows(Scan::new()),
        ["a", "aa", "b", "ba", "bb", "c", "d", "e"]
    );
    assert_eq!(
        rows(Scan::new().start("aa").stop("c")),
        ["aa", "b", "ba", "bb"]
    );
    assert_eq!(
        rows(Scan::new().start_with("aa", false).stop_with("c", true)),
        ["b", "ba", "bb", "c"]
    );
    assert_eq!(rows(Scan::new().prefix("b")), ["b", "ba", "bb"]);
    assert_eq!(rows(Scan::new().prefix("b").start("ba")), ["ba", "bb"]);
    assert_eq!(
        rows(Scan::new().reversed(true)),
        ["e", "d", "c", "bb", "ba", "b", "aa", "a"]
    );
    assert_eq!(
        rows(Scan::new().reversed(true).start("d").stop("aa")),
        ["d", "c", "bb", "ba", "b"]
    );
    assert_eq!(
        rows(
            Scan::new()
                .reversed(true)
                .start_with("d", false)
                .stop_with("aa", true)
        ),
        ["c", "bb", "ba", "b", "aa"]
    );
    assert_eq!(
        rows(Scan::new().reversed(true).prefix("b")),
        ["bb", "ba", "b"]
    );
    assert_eq!(rows(Scan::new().limit(3)), ["a", "aa", "b"]);
    assert_eq!(rows(Scan::new().reversed(true).limit(2)), ["e", "d"]);
    assert_eq!(
        rows(Scan::new().start("").stop("")),
        rows(Scan::new()),
        "empty keys are unbounded"
    );
    let parts: Vec<_> = tbl
        .scan(&Scan::new().prefix("c").batch(2))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(parts.len(), 2);
    assert_eq!((parts[0].cells.len(), parts[1].cells.len()), (2, 1));
    assert!(parts.iter().all(|p| p.row == b"c"));
    let limited: Vec<_> = tbl
        .scan(&Scan::new().batch(2).limit(2))
        .unwrap()
        .map(|r| r.unwrap().row)
        .collect();
    assert_eq!(
        limited,
        [b"a".to_vec(), b"a".to_vec(), b"aa".to_vec(), b"aa".to_vec()],
        "limit counts rows"
    );
}

#[test]
fn r26_column_selection() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 1);
    tbl.put(
        &Put::new("r")
            .add("f", "a", "1")
            .add("f", "b", "2")
            .add("g", "a", "3"),
    )
    .unwrap();
    let get = |g: Get| {
        cells(&tbl.get(&g).unwrap())
            .into_iter()
            .map(|c| format!("{}:{}", c.0, c.1))
            .collect::<Vec<_>>()
    };
    assert_eq!(get(Get::new("r")), ["f:a", "f:b", "g:a"]);
    assert_eq!(get(Get::new("r").family("g")), ["g:a"]);
    assert_eq!(get(Get::new("r").column("f", "b")), ["f:b"]);
    assert_eq!(
        get(Get::new("r").column("f", "b").family("f")),
        ["f:a", "f:b"]
    );
    assert_eq!(
        get(Get::new("r").column("f", "b").column("g", "a")),
        ["f:b", "g:a"]
    );
    assert!(matches!(
        tbl.get(&Get::new("r").family("x")),
        Err(Error::UnknownFamily { .. })
    ));
    assert!(tbl.get(&Get::new("missing")).unwrap().is_empty());
    assert!(!tbl.exists(&Get::new("missing")).unwrap());
    assert!(tbl.exists(&Get::new("r").column("g", "a")).unwrap());
    assert!(!tbl.exists(&Get::new("r").column("g", "zz")).unwrap());
}

#[test]
fn r27_durability_modes() {
    let mut t = TestDb::new(1000);
    t.reopen_with(TestDb::no_flush_on_close(&t.clock));
    let tbl = table(&t, 1);
    tbl.put(&Put::new("sync").add("f", "q", "1")).unwrap();
    tbl.put(
        &Put::new("fsync")
            .add("f", "q", "1")
            .durability(Durability::FsyncWal),
    )
    .unwrap();
    tbl.put(
        &Put::new("async")
            .add("f", "q", "1")
            .durability(Durability::AsyncWal),
    )
    .unwrap();
    tbl.put(
        &Put::new("skip")
            .add("f", "q", "1")
            .durability(Durability::SkipWal),
    )
    .unwrap();
    let stats = t.db.stats();
    assert!(stats.wal.syncs >= 2, "{stats:?}");
    t.db.sync_wal().unwrap();
    assert_eq!(
        t.db.stats().wal.frames_written,
        3,
        "SkipWal writes are not logged"
    );
    // Reopening without a flush at close is what a crash looks like.
    t.reopen_with(TestDb::no_flush_on_close(&t.clock));
    let tbl = t.db.table("t").unwrap();
    assert_eq!(
        scan_rows(&tbl, &Scan::new()),
        ["async", "fsync", "sync"],
        "SkipWal writes died with the memstore"
    );
    // A table-level default applies to mutations that do not choose; a
    // clean close flushes, so SkipWal data survives it.
    t.reopen();
    let skip =
        t.db.create_table(
            TableDescriptor::new("s")
                .family(FamilyDescriptor::new("f"))
                .durability(Durability::SkipWal),
        )
        .unwrap();
    skip.put(&Put::new("r").add("f", "q", "v")).unwrap();
    t.reopen();
    assert!(
        !t.db
            .table("s")
            .unwrap()
            .get(&Get::new("r"))
            .unwrap()
            .is_empty()
    );
    assert_eq!(t.db.stats().wal.frames_written, 0);
}

#[test]
fn r28_reopening_gives_identical_reads() {
    let mut t = TestDb::new(1000);
    t.reopen_with(TestDb::no_flush_on_close(&t.clock));
    let tbl = table(&t, 3);
    for i in 0..50 {
        tbl.put(
            &Put::new(format!("r{i:02}"))
                .add_at("f", "q", i % 5, format!("v{i}"))
                .add("g", "x", "y"),
        )
        .unwrap();
        if i % 7 == 0 {
            tbl.delete(&Delete::new(format!("r{:02}", i / 2)).family("g"))
                .unwrap();
        }
    }
    tbl.increment(&Increment::new("n").add("f", "c", 9))
        .unwrap();
    let read = |tbl: &Table| {
        tbl.scan(&Scan::new().all_versions())
            .unwrap()
            .map(|r| r.unwrap())
            .collect::<Vec<_>>()
    };
    let before = read(&tbl);
    // Once replaying the WAL (as after a crash), once from flushed files.
    t.reopen_with(TestDb::no_flush_on_close(&t.clock));
    assert_eq!(t.db.recovery_report().records_replayed, 59);
    assert_eq!(read(&t.db.table("t").unwrap()), before);
    // This database flushes when it closes: the next open replays nothing.
    t.reopen();
    t.reopen();
    assert_eq!(
        t.db.recovery_report().records_replayed,
        0,
        "close flushed everything"
    );
    assert_eq!(read(&t.db.table("t").unwrap()), before);
}

#[test]
fn r29_bad_input_changes_nothing() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 1);
    let huge = vec![0u8; strata::DEFAULT_MAX_VALUE_BYTES + 1];
    let bad_puts = [
        Put::new("r").add("f", "ok", "1").add("nope", "q", "2"),
        Put::new("r").add("f", "ok", "1").add_at("f", "q", -5, "2"),
        Put::new("r").add("f", "ok", "1").add("f", "q", &huge),
        Put::new("r")
            .add("f", "ok", "1")
            .add("f", vec![b'q'; 70_000], "v"),
        Put::new("r"),
    ];
    let expected = [
        "UnknownFamily",
        "NegativeTimestamp",
        "ValueTooLarge",
        "QualifierTooLong",
        "EmptyMutation",
    ];
    for (put, name) in bad_puts.iter().zip(expected) {
        let err = tbl.put(put).unwrap_err();
        assert!(format!("{err:?}").starts_with(name), "{err:?}");
        assert!(err.is_invalid_input());
    }
    assert!(
        tbl.get(&Get::new("r")).unwrap().is_empty(),
        "no partial write"
    );
    let many = [
        Put::new("a").add("f", "q", "1"),
        Put::new("b").add("zz", "q", "1"),
    ];
    assert!(tbl.put_many(&many).is_err());
    assert!(
        tbl.get(&Get::new("a")).unwrap().is_empty(),
        "put_many validates all first"
    );
    assert!(matches!(
        tbl.delete(&Delete::new("r").family("zz")),
        Err(Error::UnknownFamily { .. })
    ));
    assert!(matches!(
        t.db.create_table(TableDescriptor::new("bad name").family(FamilyDescriptor::new("f"))),
        Err(Error::InvalidTableName { .. })
    ));
    assert!(matches!(
        t.db.create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f"))),
        Err(Error::TableExists { .. })
    ));
    assert!(matches!(
        t.db.table("missing"),
        Err(Error::TableNotFound { .. })
    ));
}

#[test]
fn r30_filters_see_visible_cells_before_the_version_count() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    tbl.put(&Put::new("r").add_at("f", "q", 1, "x")).unwrap();
    tbl.put(&Put::new("r").add_at("f", "q", 2, "y")).unwrap();
    let filter = "ValueFilter(=, 'binary:x')";
    let got = tbl
        .get(&Get::new("r").filter_string(filter).unwrap())
        .unwrap();
    assert_eq!(
        cells(&got),
        [c("f", "q", 1, "x")],
        "the older matching version, as in HBase"
    );
    // A hidden version is not visible to the filter.
    tbl.delete(&Delete::new("r").column_version("f", "q", 1))
        .unwrap();
    assert!(
        tbl.get(&Get::new("r").filter_string(filter).unwrap())
            .unwrap()
            .is_empty()
    );
    // PageFilter counts across regions.
    let split =
        t.db.create_table(
            TableDescriptor::new("split")
                .family(FamilyDescriptor::new("f"))
                .pre_split(PreSplit::Keys(vec![b"m".to_vec()])),
        )
        .unwrap();
    for row in ["a", "b", "n", "o"] {
        split.put(&Put::new(row).add("f", "q", "v")).unwrap();
    }
    assert_eq!(
        scan_rows(&split, &Scan::new().filter_string("PageFilter(3)").unwrap()),
        ["a", "b", "n"]
    );
}

/// A filter that returns every cell of a row as it was read (here a
/// row-key filter) still leaves the count of versions to the query: the
/// row goes out whole only when no column holds more versions than the
/// query asks for. From the memstore and from files, through the owned
/// iterator and the borrowing cursor.
#[test]
fn r30b_a_row_key_filter_returns_the_querys_versions_only() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 3);
    for ts in 1..=3 {
        tbl.put(
            &Put::new("r")
                .add_at("f", "q", ts, format!("v{ts}"))
                .add_at("g", "q", ts, "g"),
        )
        .unwrap();
    }
    tbl.put(&Put::new("s").add_at("f", "q", 1, "s")).unwrap();
    let filter = "RowFilter(=, 'binary:r')";
    let expected = |versions: i64| -> Vec<_> {
        let mut want: Vec<_> = (0..versions)
            .map(|i| c("f", "q", 3 - i, &format!("v{}", 3 - i)))
            .collect();
        want.extend((0..versions).map(|i| c("g", "q", 3 - i, "g")));
        want
    };
    for stage in ["memstore", "files"] {
        if stage == "files" {
            tbl.flush().unwrap();
        }
        for versions in 1..=3u32 {
            let scan = Scan::new()
                .max_versions(versions)
                .filter_string(filter)
                .unwrap();
            let owned: Vec<RowResult> = tbl.scan(&scan).unwrap().map(Result::unwrap).collect();
            let mut cursor = tbl.scan_cursor(&scan).unwrap();
            let mut lent = Vec::new();
            while let Some(view) = cursor.next_row().unwrap() {
                lent.push(view.to_row_result());
            }
            for (how, rows) in [("owned", owned), ("lent", lent)] {
                assert_eq!(rows.len(), 1, "{stage}, {how}, {versions} versions");
                assert_eq!(
                    cells(&rows[0]),
                    expected(i64::from(versions)),
                    "{stage}, {how}, {versions} versions"
                );
            }
        }
    }
}

#[test]
fn r31_count_and_delete_where_run_inside_the_engine() {
    let t = TestDb::new(1000);
    let tbl = table(&t, 1);
    for i in 0..10 {
        tbl.put(
            &Put::new(format!("a{i}"))
                .add_at("f", "q", 100, "old")
                .add_at("g", "q", 100, "keep"),
        )
        .unwrap();
    }
    assert_eq!(tbl.count(&Scan::new().prefix("a")).unwrap(), 10);
    // A new job writes after the clear's timestamp was taken: its writes stay.
    let clear_at = 150;
    tbl.put(&Put::new("a3").add_at("f", "q", 200, "new"))
        .unwrap();
    assert_eq!(
        tbl.delete_where(&Scan::new().prefix("a").family("f"), Some(clear_at))
            .unwrap(),
        10
    );
    assert_eq!(tbl.count(&Scan::new().family("f")).unwrap(), 1);
    assert_eq!(
        tbl.get(&Get::new("a3").family("f"))
            .unwrap()
            .value("f", "q"),
        Some(&b"new"[..])
    );
    assert_eq!(
        tbl.count(&Scan::new().family("g")).unwrap(),
        10,
        "other families untouched"
    );
}
