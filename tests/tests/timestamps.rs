//! The range of write timestamps: `0..=MAX_TIMESTAMP`. `i64::MAX` is HBase's
//! `LATEST_TIMESTAMP` and the exclusive end of every time range, so a cell written there
//! could never be read: every write path refuses it with `Error::ReservedTimestamp` and
//! writes nothing, while reads with `max = i64::MAX` keep meaning "no upper bound".
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use strata::{
    Append, BatchOp, BatchResult, CheckAndMutate, Delete, Error, FamilyDescriptor, Get, Increment,
    MAX_TIMESTAMP, Put, Result, RowMutations, Scan, Table, TableDescriptor,
};
use strata_tests::{TestDb, cells};

const RESERVED: i64 = i64::MAX;

fn table(t: &TestDb) -> Table {
    t.db.create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f").max_versions(5)))
        .unwrap()
}

fn c(q: &str, ts: i64, v: &str) -> (String, String, i64, String) {
    ("f".into(), q.into(), ts, v.into())
}

/// Every cell and marker of the table, as a raw scan of all versions sees them.
fn everything(tbl: &Table) -> Vec<(Vec<u8>, Vec<u8>, i64, strata::CellKind)> {
    tbl.scan(&Scan::new().raw(true).all_versions())
        .unwrap()
        .flat_map(|row| {
            let row = row.unwrap();
            row.cells
                .into_iter()
                .map(move |cell| (row.row.clone(), cell.qualifier, cell.timestamp, cell.kind))
        })
        .collect()
}

fn assert_reserved<T: std::fmt::Debug>(what: &str, result: Result<T>) {
    match result {
        Err(
            error @ Error::ReservedTimestamp {
                timestamp: RESERVED,
            },
        ) => {
            assert!(error.is_invalid_input(), "{what}");
        }
        other => panic!("{what}: expected ReservedTimestamp, got {other:?}"),
    }
}

fn latest_put() -> Put {
    Put::new("r").add_at("f", "q", RESERVED, "never readable")
}

fn latest_delete() -> Delete {
    Delete::new("r").column_version("f", "q", RESERVED)
}

#[test]
fn every_write_path_refuses_the_reserved_timestamp_and_writes_nothing() {
    let t = TestDb::new(1000);
    let tbl = table(&t);
    tbl.put(&Put::new("r").add_at("f", "q", 5, "kept")).unwrap();
    let before = everything(&tbl);
    let sequence = t.db.stats().last_sequence;

    // Puts: the cell's timestamp, the put's default timestamp, one bad cell among good ones.
    assert_reserved("put add_at", tbl.put(&latest_put()));
    assert_reserved(
        "put timestamp",
        tbl.put(&Put::new("r").timestamp(RESERVED).add("f", "q", "x")),
    );
    assert_reserved(
        "put with one bad cell",
        tbl.put(
            &Put::new("r")
                .add("f", "ok", "1")
                .add_at("f", "q", RESERVED, "x"),
        ),
    );
    assert_reserved(
        "put_many",
        tbl.put_many(&[Put::new("a").add("f", "q", "1"), latest_put()]),
    );

    // Deletes: every entry kind, and the delete's default timestamp.
    let deletes = [
        Delete::new("r").timestamp(RESERVED),
        Delete::new("r").timestamp(RESERVED).family("f"),
        Delete::new("r").family_up_to("f", RESERVED),
        Delete::new("r").family_version("f", RESERVED),
        Delete::new("r").column_all_versions_up_to("f", "q", RESERVED),
        Delete::new("r")
            .timestamp(RESERVED)
            .column_latest_version("f", "q"),
        latest_delete(),
    ];
    for delete in &deletes {
        assert_reserved(&format!("{delete:?}"), tbl.delete(delete));
    }
    assert_reserved(
        "delete_where",
        tbl.delete_where(&Scan::new(), Some(RESERVED)),
    );

    // Row mutations, check-and-mutate (whose check holds), and batches.
    assert_reserved(
        "mutate_row put",
        tbl.mutate_row(
            &RowMutations::new("r")
                .put(Put::new("r").add("f", "ok", "1"))
                .put(latest_put()),
        ),
    );
    assert_reserved(
        "mutate_row delete",
        tbl.mutate_row(&RowMutations::new("r").delete(latest_delete())),
    );
    let holds = || CheckAndMutate::builder("r").if_equals("f", "q", "kept");
    assert_reserved(
        "check_and_mutate put",
        tbl.check_and_mutate(&holds().then_put(latest_put())),
    );
    assert_reserved(
        "check_and_mutate delete",
        tbl.check_and_mutate(&holds().then_delete(latest_delete())),
    );
    assert_reserved(
        "check_and_mutate row mutations",
        tbl.check_and_mutate(&holds().then_mutate(RowMutations::new("r").put(latest_put()))),
    );
    let ops = [
        BatchOp::Put(latest_put()),
        BatchOp::Delete(latest_delete()),
        BatchOp::RowMutations(RowMutations::new("r").put(latest_put())),
        BatchOp::CheckAndMutate(holds().then_put(latest_put())),
    ];
    for (op, result) in ops.iter().zip(tbl.batch(&ops)) {
        assert_reserved(&format!("batch {op:?}"), result);
    }

    assert_eq!(everything(&tbl), before, "no cell or marker was written");
    assert_eq!(
        t.db.stats().last_sequence,
        sequence,
        "nothing reached the WAL"
    );
}

#[test]
fn the_largest_write_timestamp_is_stored_and_read_everywhere() {
    let mut t = TestDb::new(1000);
    let tbl = table(&t);
    assert_eq!(MAX_TIMESTAMP, i64::MAX - 1);
    tbl.put(&Put::new("r").add_at("f", "q", MAX_TIMESTAMP, "last"))
        .unwrap();
    tbl.put(&Put::new("r").add_at("f", "q", 7, "early"))
        .unwrap();
    let check = |tbl: &Table| {
        assert_eq!(
            cells(&tbl.get(&Get::new("r").all_versions()).unwrap()),
            [c("q", MAX_TIMESTAMP, "last"), c("q", 7, "early")]
        );
        let at = tbl.get(&Get::new("r").timestamp(MAX_TIMESTAMP)).unwrap();
        assert_eq!(cells(&at), [c("q", MAX_TIMESTAMP, "last")]);
        assert_eq!(tbl.count(&Scan::new()).unwrap(), 1);
        let scanned: Vec<_> = tbl
            .scan(&Scan::new())
            .unwrap()
            .map(|row| cells(&row.unwrap()))
            .collect();
        assert_eq!(scanned, [vec![c("q", MAX_TIMESTAMP, "last")]]);
    };
    check(&tbl);
    t.reopen();
    check(&t.db.table("t").unwrap());
    let tbl = t.db.table("t").unwrap();
    tbl.flush().unwrap();
    check(&tbl);

    // Increments and appends keep the newest timestamp when it is ahead of the clock.
    tbl.put(&Put::new("n").add_at("f", "c", MAX_TIMESTAMP, 1i64.to_be_bytes()))
        .unwrap();
    let counter = tbl
        .increment(&Increment::new("n").add("f", "c", 2))
        .unwrap();
    assert_eq!(
        counter.cells.first().map(|cell| cell.timestamp),
        Some(MAX_TIMESTAMP)
    );
    tbl.put(&Put::new("s").add_at("f", "a", MAX_TIMESTAMP, "x"))
        .unwrap();
    let appended = tbl.append(&Append::new("s").add("f", "a", "y")).unwrap();
    assert_eq!(cells(&appended), [c("a", MAX_TIMESTAMP, "xy")]);
    assert_eq!(
        cells(&tbl.get(&Get::new("s")).unwrap()),
        [c("a", MAX_TIMESTAMP, "xy")]
    );

    // A marker at the largest timestamp hides everything below it.
    tbl.delete(&Delete::new("r").column_all_versions_up_to("f", "q", MAX_TIMESTAMP))
        .unwrap();
    assert!(tbl.get(&Get::new("r")).unwrap().is_empty());
}

#[test]
fn reads_bounded_by_i64_max_are_unchanged() {
    let t = TestDb::new(1000);
    let tbl = table(&t);
    for ts in [0, 5, 1000, MAX_TIMESTAMP] {
        tbl.put(&Put::new("r").add_at("f", "q", ts, ts.to_string()))
            .unwrap();
    }
    let versions = |get: Get| -> Vec<i64> {
        tbl.get(&get.all_versions())
            .unwrap()
            .cells
            .iter()
            .map(|cell| cell.timestamp)
            .collect()
    };
    assert_eq!(
        versions(Get::new("r").time_range(0, i64::MAX)),
        [MAX_TIMESTAMP, 1000, 5, 0]
    );
    assert_eq!(
        versions(Get::new("r").time_range(5, i64::MAX)),
        [MAX_TIMESTAMP, 1000, 5]
    );
    assert_eq!(
        versions(Get::new("r").time_range(5, MAX_TIMESTAMP)),
        [1000, 5]
    );
    // A read at the reserved timestamp is valid and finds nothing.
    assert!(versions(Get::new("r").timestamp(RESERVED)).is_empty());
    let scanned = tbl
        .scan(&Scan::new().time_range(1, i64::MAX).all_versions())
        .unwrap()
        .map(|row| row.unwrap().cells.len())
        .sum::<usize>();
    assert_eq!(scanned, 3);
    assert_eq!(
        tbl.count(&Scan::new().time_range(MAX_TIMESTAMP, i64::MAX))
            .unwrap(),
        1
    );
    let check = CheckAndMutate::builder("r")
        .if_equals("f", "q", MAX_TIMESTAMP.to_string())
        .time_range(0, i64::MAX)
        .then_put(Put::new("r").add_at("f", "done", 1, "yes"));
    assert!(tbl.check_and_mutate(&check).unwrap().success);
    let found = tbl
        .batch(&[BatchOp::Get(Get::new("r").column("f", "done"))])
        .into_iter()
        .next();
    assert!(matches!(found, Some(Ok(BatchResult::Row(row))) if row.cells.len() == 1));
}
