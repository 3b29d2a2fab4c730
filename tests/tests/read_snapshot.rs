//! Read snapshots (`Db::read_snapshot`), with RocksDB's `GetSnapshot`
//! contract: gets, `get_many` and scans given a snapshot read exactly the
//! data visible when it was taken, while writes, flushes and compactions go
//! on; compaction keeps what a live snapshot reads; dropping it releases it.
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use strata::{
    Delete, Error, FamilyDescriptor, Get, Mutation, Put, ReadSnapshot, RowResult, Scan, Table,
    TableDescriptor,
};
use strata_tests::{TestDb, cells};

fn table(db: &TestDb) -> Table {
    db.db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f").max_versions(1)))
        .unwrap()
}

fn rows_at(table: &Table, snapshot: &ReadSnapshot) -> Vec<RowResult> {
    table
        .scan(&Scan::new().all_versions().snapshot(snapshot))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn raw_cell_count(table: &Table) -> usize {
    table
        .scan(&Scan::new().raw(true).all_versions())
        .unwrap()
        .map(|r| r.unwrap().cells.len())
        .sum()
}

#[test]
fn a_snapshot_reads_the_data_of_its_moment_through_flushes_and_compactions() {
    let db = TestDb::new(1_000);
    let t = table(&db);
    t.put(&Put::new("a").add("f", "q", "a1")).unwrap();
    t.put(&Put::new("b").add("f", "q", "b1")).unwrap();
    t.flush().unwrap();
    let snapshot = db.db.read_snapshot().unwrap();
    t.put(&Put::new("a").add("f", "q", "a2")).unwrap();
    t.delete(&Delete::new("b")).unwrap();
    t.put(&Put::new("c").add("f", "q", "c1")).unwrap();
    let expected = vec![
        ("a".to_string(), "a1".to_string()),
        ("b".to_string(), "b1".to_string()),
    ];
    let check = |stage: &str| {
        let scanned: Vec<(String, String)> = rows_at(&t, &snapshot)
            .iter()
            .map(|r| {
                (
                    String::from_utf8(r.row.clone()).unwrap(),
                    String::from_utf8(r.value("f", "q").unwrap().to_vec()).unwrap(),
                )
            })
            .collect();
        assert_eq!(scanned, expected, "scan at the snapshot, {stage}");
        let got = t.get(&Get::new("a").snapshot(&snapshot)).unwrap();
        assert_eq!(got.value("f", "q"), Some(&b"a1"[..]), "get, {stage}");
        let many = t
            .get_many(&["a", "b", "c"].map(|r| Get::new(r).snapshot(&snapshot)))
            .unwrap();
        assert_eq!(
            many.iter().map(|r| r.value("f", "q")).collect::<Vec<_>>(),
            [Some(&b"a1"[..]), Some(&b"b1"[..]), None],
            "get_many, {stage}"
        );
        let mut reader = t.row_reader();
        let view = reader.get(&Get::new("b").snapshot(&snapshot)).unwrap();
        assert!(view.is_some(), "row reader, {stage}");
    };
    check("in the memstore");
    t.flush().unwrap();
    check("after a flush");
    t.major_compact().unwrap();
    check("after a major compaction");
    // The latest view moved on.
    assert_eq!(
        t.get(&Get::new("a")).unwrap().value("f", "q"),
        Some(&b"a2"[..])
    );
    assert!(t.get(&Get::new("b")).unwrap().is_empty());
    // Released: the next major compaction drops what only it read.
    let kept = raw_cell_count(&t);
    drop(snapshot);
    t.major_compact().unwrap();
    let after = raw_cell_count(&t);
    assert!(
        after < kept,
        "released snapshot's versions dropped: {kept} -> {after}"
    );
}

#[test]
fn released_and_foreign_snapshots_are_refused() {
    let db = TestDb::new(1_000);
    let t = table(&db);
    t.put(&Put::new("a").add("f", "q", "1")).unwrap();
    let snapshot = db.db.read_snapshot().unwrap();
    let sequence = snapshot.sequence();
    let get = Get::new("a").snapshot(&snapshot);
    let scan = Scan::new().snapshot(&snapshot);
    assert!(t.get(&get).is_ok());
    snapshot.release();
    for err in [
        t.get(&get).unwrap_err(),
        t.scan(&scan).err().unwrap(),
        t.get_many(std::slice::from_ref(&get)).unwrap_err(),
        t.count(&scan).unwrap_err(),
    ] {
        assert!(
            matches!(err, Error::SnapshotReleased { sequence: s } if s == sequence),
            "{err:?}"
        );
        assert!(err.is_invalid_input());
    }
    let other = TestDb::new(1_000);
    let foreign = other.db.read_snapshot().unwrap();
    assert!(matches!(
        t.get(&Get::new("a").snapshot(&foreign)),
        Err(Error::SnapshotOfAnotherDatabase)
    ));
    // One get_many reads at one point.
    let s1 = db.db.read_snapshot().unwrap();
    let err = t
        .get_many(&[Get::new("a").snapshot(&s1), Get::new("a")])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidOption {
                name: "snapshot",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_scan_keeps_its_snapshot_while_it_runs() {
    let db = TestDb::new(1_000);
    let t = table(&db);
    for i in 0..100 {
        t.put(&Put::new(format!("r{i:03}")).add("f", "q", "old"))
            .unwrap();
    }
    let snapshot = db.db.read_snapshot().unwrap();
    let mut scanner = t.scan(&Scan::new().snapshot(&snapshot)).unwrap();
    let first = scanner.next().unwrap().unwrap();
    assert_eq!(first.value("f", "q"), Some(&b"old"[..]));
    // Dropping the handle mid-scan: the running scan still holds the read
    // point, so the compaction below keeps the old versions it reads.
    drop(snapshot);
    for i in 0..100 {
        t.put(&Put::new(format!("r{i:03}")).add("f", "q", "new"))
            .unwrap();
    }
    t.flush().unwrap();
    t.major_compact().unwrap();
    let rest: Vec<RowResult> = scanner.map(Result::unwrap).collect();
    assert_eq!(rest.len(), 99);
    assert!(rest.iter().all(|r| r.value("f", "q") == Some(&b"old"[..])));
}

/// Snapshot reads while a writer overwrites and deletes rows (whole rounds
/// at once with `mutate_rows`) and flushes and major compactions run: every
/// read at the snapshot returns exactly what the first one did, and that
/// first read holds one whole round.
#[test]
fn snapshot_reads_under_concurrent_writes_and_compactions_are_exact() {
    const ROWS: usize = 20;
    let db = TestDb::new(1_000);
    let t = table(&db);
    let write_round = |t: &Table, round: usize| {
        let value = round.to_string();
        let mutations: Vec<Mutation> = (0..ROWS)
            .map(|i| {
                let row = format!("r{i:02}");
                // Every third row is deleted in odd rounds.
                if round % 2 == 1 && i % 3 == 0 {
                    Mutation::Delete(Delete::new(row))
                } else {
                    Mutation::Put(Put::new(row).add("f", "q", &value).add("f", "p", &value))
                }
            })
            .collect();
        t.mutate_rows(&mutations).unwrap();
    };
    for round in 0..10 {
        write_round(&t, round);
    }
    t.flush().unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (t, done) = (t.clone(), done.clone());
        std::thread::spawn(move || {
            for round in 10..400 {
                write_round(&t, round);
                if round % 50 == 0 {
                    t.flush().unwrap();
                }
                if round % 100 == 0 {
                    t.major_compact().unwrap();
                }
            }
            done.store(true, Ordering::Release);
        })
    };
    std::thread::sleep(Duration::from_millis(5));
    let snapshot = db.db.read_snapshot().unwrap();
    let first = rows_at(&t, &snapshot);
    let rounds: Vec<&[u8]> = first.iter().filter_map(|r| r.value("f", "q")).collect();
    assert!(
        rounds.windows(2).all(|w| w[0] == w[1]),
        "the snapshot holds one whole round"
    );
    let expected: Vec<_> = first.iter().map(cells).collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut reads = 0;
    while (!done.load(Ordering::Acquire) || reads < 3) && Instant::now() < deadline {
        let again: Vec<_> = rows_at(&t, &snapshot).iter().map(cells).collect();
        assert_eq!(again, expected, "read {reads} at the snapshot");
        let gets: Vec<Get> = first
            .iter()
            .map(|r| Get::new(&r.row).all_versions().snapshot(&snapshot))
            .collect();
        let many: Vec<_> = t.get_many(&gets).unwrap().iter().map(cells).collect();
        assert_eq!(many, expected, "get_many {reads} at the snapshot");
        reads += 1;
    }
    writer.join().unwrap();
    t.flush().unwrap();
    t.major_compact().unwrap();
    let last: Vec<_> = rows_at(&t, &snapshot).iter().map(cells).collect();
    assert_eq!(last, expected, "after the writer's last compaction");
    let latest = t.get(&Get::new("r01")).unwrap();
    assert_eq!(latest.value("f", "q"), Some(&b"399"[..]));
}
