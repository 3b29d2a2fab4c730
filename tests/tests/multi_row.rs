//! Atomic multi-row mutations (`Table::mutate_rows`), with HBase's
//! `MultiRowMutationEndpoint` semantics: puts and deletes on several rows of
//! one region apply all or nothing and become visible together; rows of
//! different regions are refused whole.
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use strata::{Delete, Error, FamilyDescriptor, Get, Mutation, Put, Scan, Table, TableDescriptor};
use strata_tests::TestDb;

fn table(db: &TestDb) -> Table {
    db.db
        .create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("f"))
                .family(FamilyDescriptor::new("g").max_versions(3)),
        )
        .unwrap()
}

fn put(row: &str, value: &str) -> Mutation {
    Mutation::Put(Put::new(row).add("f", "q", value))
}

fn value(table: &Table, row: &str) -> Option<String> {
    table
        .get(&Get::new(row))
        .unwrap()
        .value("f", "q")
        .map(|v| String::from_utf8(v.to_vec()).unwrap())
}

#[test]
fn puts_and_deletes_on_several_rows_apply_together() {
    let db = TestDb::new(1_000);
    let t = table(&db);
    t.put(&Put::new("old").add("f", "q", "x")).unwrap();
    t.mutate_rows(&[
        put("post", "body"),
        put("index", "post"),
        Mutation::Delete(Delete::new("old")),
        // A later mutation of the same row applies after the earlier one,
        // and a delete in the call never hides a put of the call (one
        // sequence, as in `mutate_row`).
        Mutation::Delete(Delete::new("post").column_all_versions("f", "q")),
        put("post", "body2"),
    ])
    .unwrap();
    assert_eq!(value(&t, "post").as_deref(), Some("body2"));
    assert_eq!(value(&t, "index").as_deref(), Some("post"));
    assert_eq!(value(&t, "old"), None);
}

#[test]
fn bad_input_is_refused_whole() {
    let db = TestDb::new(1_000);
    let t = table(&db);
    t.split(Some(b"m")).unwrap();
    assert!(matches!(t.mutate_rows(&[]), Err(Error::EmptyMutation)));
    // Rows in two regions: refused with both rows named, nothing applied.
    let err = t
        .mutate_rows(&[put("a", "1"), put("b", "1"), put("z", "1")])
        .unwrap_err();
    match &err {
        Error::RowsSpanRegions {
            first_row,
            other_row,
            region_end,
            ..
        } => {
            assert_eq!(
                (first_row.as_slice(), other_row.as_slice()),
                (&b"a"[..], &b"z"[..])
            );
            assert_eq!(region_end, b"m");
        }
        other => panic!("expected RowsSpanRegions, got {other:?}"),
    }
    assert!(err.is_invalid_input());
    assert!(err.to_string().contains("within one region"), "{err}");
    // An unknown family in the last row: nothing of the earlier rows applied.
    let err = t
        .mutate_rows(&[
            put("a", "1"),
            Mutation::Put(Put::new("b").add("nope", "q", "1")),
        ])
        .unwrap_err();
    assert!(matches!(err, Error::UnknownFamily { .. }), "{err:?}");
    // An empty put and an empty row key.
    assert!(matches!(
        t.mutate_rows(&[put("a", "1"), Mutation::Put(Put::new("b"))]),
        Err(Error::EmptyMutation)
    ));
    assert!(matches!(
        t.mutate_rows(&[put("a", "1"), put("", "1")]),
        Err(Error::EmptyRowKey)
    ));
    for row in ["a", "b", "z"] {
        assert_eq!(value(&t, row), None, "row {row} written by a refused call");
    }
    // Rows of the second region alone are fine.
    t.mutate_rows(&[put("x", "1"), put("y", "2")]).unwrap();
    assert_eq!(value(&t, "y").as_deref(), Some("2"));
}

#[test]
fn replay_after_a_crash_applies_the_whole_mutation() {
    let mut db = TestDb::new(1_000);
    let t = table(&db);
    t.mutate_rows(&[put("r1", "a"), put("r2", "b"), put("r3", "c")])
        .unwrap();
    // One WAL frame holds the three rows, at one sequence.
    let logged: Vec<_> = strata::inspect::wal_segments(db.dir.path())
        .unwrap()
        .into_iter()
        .flat_map(|segment| segment.records)
        .collect();
    assert_eq!(logged.len(), 3, "{logged:?}");
    assert!(
        logged
            .windows(2)
            .all(|w| (w[0].offset, w[0].sequence) == (w[1].offset, w[1].sequence)),
        "{logged:?}"
    );
    // Closed without flushing: the rows come back from the WAL record alone.
    db.reopen_with(TestDb::no_flush_on_close(&db.clock));
    db.reopen();
    let t = db.db.table("t").unwrap();
    assert_eq!(
        ["r1", "r2", "r3"].map(|r| value(&t, r)),
        [Some("a".into()), Some("b".into()), Some("c".into())]
    );
}

/// A reader racing `mutate_rows` never sees part of one: every call sets
/// all rows to the same value, so any read showing two values saw half.
#[test]
fn a_reader_racing_mutate_rows_never_sees_part_of_one() {
    const ROWS: usize = 6;
    let db = TestDb::new(1_000);
    let t = table(&db);
    let rows: Vec<String> = (0..ROWS).map(|i| format!("row{i}")).collect();
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (t, rows, done) = (t.clone(), rows.clone(), done.clone());
        std::thread::spawn(move || {
            for round in 0..2_000u32 {
                let value = round.to_string();
                let mutations: Vec<Mutation> = rows.iter().map(|r| put(r, &value)).collect();
                t.mutate_rows(&mutations).unwrap();
                if round % 500 == 499 {
                    t.flush().unwrap();
                }
            }
            done.store(true, Ordering::Release);
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut reads = 0u64;
    while !done.load(Ordering::Acquire) && Instant::now() < deadline {
        let gets: Vec<Get> = rows.iter().map(Get::new).collect();
        let by_get_many: Vec<Option<Vec<u8>>> = t
            .get_many(&gets)
            .unwrap()
            .iter()
            .map(|r| r.value("f", "q").map(<[u8]>::to_vec))
            .collect();
        assert!(
            by_get_many.windows(2).all(|w| w[0] == w[1]),
            "get_many saw part of a multi-row mutation: {by_get_many:?}"
        );
        let by_scan: Vec<Option<Vec<u8>>> = t
            .scan(&Scan::new())
            .unwrap()
            .map(|r| r.unwrap().value("f", "q").map(<[u8]>::to_vec))
            .collect();
        assert!(
            by_scan.is_empty()
                || (by_scan.len() == ROWS && by_scan.windows(2).all(|w| w[0] == w[1])),
            "a scan saw part of a multi-row mutation: {by_scan:?}"
        );
        reads += 1;
    }
    writer.join().unwrap();
    assert!(reads > 0);
    assert_eq!(value(&t, "row0").as_deref(), Some("1999"));
}
