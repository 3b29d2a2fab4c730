//! `Db::metrics`: one snapshot of the database's counters, latency
//! histograms, compaction debt, open files and per-table and per-region
//! activity, as operations move them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use strata::{
    Db, DbOptions, FamilyDescriptor, Get, LATENCY_SAMPLE_PERIOD, LatencySnapshot, PreSplit, Put,
    RegionActivity, Scan, TableDescriptor,
};

fn table_descriptor(name: &str) -> TableDescriptor {
    TableDescriptor::new(name).family(FamilyDescriptor::new("f"))
}

/// A sampled histogram counts each timed operation `LATENCY_SAMPLE_PERIOD`
/// times: one thread's count is within a period of the operations it ran.
fn assert_sampled_count(histogram: &LatencySnapshot, operations: u64, what: &str) {
    let period = u64::from(LATENCY_SAMPLE_PERIOD);
    assert!(
        histogram.count.abs_diff(operations) < period,
        "{what}: counted {} for {operations} operations",
        histogram.count
    );
    assert_eq!(histogram.count % period, 0, "{what}: whole samples");
}

#[test]
fn operations_move_the_histograms_and_the_region_and_table_counters() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    let table = db.create_table(table_descriptor("m")).unwrap();
    let empty = db.metrics();
    assert_eq!(empty.writes.count, 0);
    assert_eq!(empty.gets.quantile(0.5), None);
    assert_eq!(empty.tables.len(), 1);
    assert_eq!(empty.tables[0].activity, strata::RegionActivity::default());

    // One thread: its first operation of each kind is timed, then one in
    // the period.
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..100u32 {
                table
                    .put(&Put::new(format!("row{i:03}")).add("f", "q", "v"))
                    .unwrap();
            }
            for i in 0..40u32 {
                table.get(&Get::new(format!("row{i:03}"))).unwrap();
            }
            let mut reader = table.row_reader();
            for i in 0..10u32 {
                assert!(
                    reader
                        .get_row(format!("row{i:03}").as_bytes())
                        .unwrap()
                        .is_some()
                );
            }
        });
    });
    let rows = table.scan(&Scan::new()).unwrap().count();
    assert_eq!(rows, 100);
    let mut cursor = table.scan_cursor(&Scan::new().limit(5)).unwrap();
    while cursor.next_row().unwrap().is_some() {}
    drop(cursor);

    let metrics = db.metrics();
    assert_sampled_count(&metrics.writes, 100, "writes");
    assert_sampled_count(&metrics.gets, 50, "gets");
    assert_eq!(metrics.scans.count, 2, "every scan is timed once dropped");
    // Default durability syncs every put.
    assert!(metrics.wal_syncs.count >= 1, "{:?}", metrics.wal_syncs);
    assert_eq!(metrics.wal_syncs.count, metrics.stats.wal.syncs);
    for (what, histogram) in [
        ("writes", &metrics.writes),
        ("gets", &metrics.gets),
        ("scans", &metrics.scans),
        ("wal syncs", &metrics.wal_syncs),
    ] {
        let median = histogram.quantile(0.5).unwrap();
        let p99 = histogram.quantile(0.99).unwrap();
        assert!(
            median > Duration::ZERO && median <= p99,
            "{what}: {median:?} {p99:?}"
        );
        assert!(p99 < Duration::from_secs(10), "{what}: {p99:?}");
        assert!(histogram.sum > Duration::ZERO, "{what}");
        let in_buckets: u64 = histogram.buckets().map(|b| b.count).sum();
        assert_eq!(in_buckets, histogram.count, "{what}");
    }

    let [table_metrics] = metrics.tables.as_slice() else {
        panic!("one table: {:?}", metrics.tables);
    };
    assert_eq!(table_metrics.name, "m");
    let activity = table_metrics.activity;
    assert_eq!(activity.rows_written, 100);
    assert_eq!(activity.gets, 50);
    assert_eq!(activity.scans, 2);
    assert_eq!(activity.rows_read, 50 + 100 + 5);
    let [(region_id, region_activity)] = table_metrics.regions.as_slice() else {
        panic!("one region: {:?}", table_metrics.regions);
    };
    assert_eq!(*region_activity, activity);
    assert_eq!(table.regions().unwrap()[0].id, *region_id);
    assert_eq!(table.regions().unwrap()[0].activity, activity);
    assert_eq!(metrics.stats.last_sequence, 100);
    db.close().unwrap();
}

/// A split or merge starts the new regions' counters at zero; the table's totals keep the
/// old regions' counts (a Prometheus counter must not go down: a drop reads as a reset).
#[test]
fn a_tables_counters_never_go_down_across_splits_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    let table = db.create_table(table_descriptor("grow")).unwrap();
    for i in 0..100 {
        table
            .put(&Put::new(format!("row{i:03}")).add("f", "q", "v"))
            .unwrap();
    }
    for i in 0..10 {
        table.get(&Get::new(format!("row{i:03}"))).unwrap();
    }
    table.flush().unwrap();
    let activity = |db: &Db| db.metrics().tables[0].activity;
    let before = activity(&db);
    assert_eq!(
        (before.rows_written, before.gets, before.flushes),
        (100, 10, 1)
    );

    table.split(Some(b"row050")).unwrap();
    let split = db.metrics();
    assert_eq!(split.tables[0].regions.len(), 2);
    assert!(
        split.tables[0]
            .regions
            .iter()
            .all(|(_, region)| region.rows_written == 0),
        "the daughters start at zero"
    );
    // The parent's counts stay in the table's totals. A daughter may already have compacted
    // the parent's file it references (a background compaction, so its count races with this
    // read): compactions can only have grown.
    let after = split.tables[0].activity;
    assert_eq!(
        RegionActivity {
            compactions: before.compactions,
            ..after
        },
        before,
        "the parent's counts stay"
    );
    assert!(after.compactions >= before.compactions, "{after:?}");

    table.put(&Put::new("row070").add("f", "q", "w")).unwrap();
    table.get(&Get::new("row010")).unwrap();
    let after_split = activity(&db);
    assert_eq!((after_split.rows_written, after_split.gets), (101, 11));

    let ids: Vec<u64> = split.tables[0].regions.iter().map(|(id, _)| *id).collect();
    table.merge_regions(ids[0], ids[1]).unwrap();
    let merged = activity(&db);
    assert_eq!((merged.rows_written, merged.gets), (101, 11), "{merged:?}");
    assert!(merged.flushes >= after_split.flushes);
    db.close().unwrap();
}

#[test]
fn a_split_table_adds_up_its_regions_and_open_files_follow_the_hfiles() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    let table = db
        .create_table(table_descriptor("s").pre_split(PreSplit::Keys(vec![b"m".to_vec()])))
        .unwrap();
    let open_before = db.metrics().open_files;
    assert!(open_before >= 1, "the WAL segment is open");
    for row in ["a", "b", "x"] {
        table.put(&Put::new(row).add("f", "q", "v")).unwrap();
    }
    table.get(&Get::new("a")).unwrap();
    table.get(&Get::new("zz")).unwrap();
    table.flush().unwrap();
    let metrics = db.metrics();
    let table_metrics = &metrics.tables[0];
    let regions: Vec<_> = table_metrics.regions.iter().map(|(_, a)| *a).collect();
    assert_eq!(regions.len(), 2);
    assert_eq!(regions[0].rows_written, 2);
    assert_eq!(regions[1].rows_written, 1);
    assert_eq!(regions[0].gets, 1);
    assert_eq!(regions[1].gets, 1, "a get of an absent row is a get");
    assert_eq!(regions[1].rows_read, 0, "that returns no row");
    assert_eq!(table_metrics.activity.rows_written, 3);
    assert_eq!(table_metrics.activity.flushes, 2);
    assert_eq!(metrics.stats.files, 2);
    assert_eq!(
        metrics.open_files,
        open_before + 2,
        "each region's new HFile is open"
    );
    db.close().unwrap();
}

#[test]
fn l0_files_at_their_trigger_are_compaction_debt() {
    let dir = tempfile::tempdir().unwrap();
    let quiet = DbOptions {
        l0_compaction_trigger: 100,
        l0_slowdown_files: 200,
        l0_stop_files: 300,
        ..DbOptions::default()
    };
    {
        let db = Db::open(dir.path(), quiet.clone()).unwrap();
        let table = db.create_table(table_descriptor("d")).unwrap();
        for round in 0..3 {
            table
                .put(&Put::new(format!("row{round}")).add("f", "q", vec![1u8; 1000]))
                .unwrap();
            table.flush().unwrap();
        }
        let metrics = db.metrics();
        assert_eq!(metrics.compaction_debt_bytes, 0, "L0 is under its trigger");
        db.close().unwrap();
    }
    // Read-only: nothing compacts, and three L0 files are at a trigger of 3.
    let db = Db::open(
        dir.path(),
        DbOptions {
            l0_compaction_trigger: 3,
            read_only: true,
            ..quiet
        },
    )
    .unwrap();
    let metrics = db.metrics();
    assert_eq!(metrics.stats.files, 3);
    assert_eq!(metrics.compaction_debt_bytes, metrics.stats.file_bytes);
    assert_eq!(
        metrics.tables[0].compaction_debt_bytes,
        metrics.stats.file_bytes
    );
    assert_eq!(
        metrics.wal_syncs.count, 0,
        "a read-only database has no WAL"
    );
}
