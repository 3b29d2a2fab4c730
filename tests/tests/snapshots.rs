//! HBase's table snapshots through the Rust API: a snapshot pins its files
//! through compaction and drops, clones and restores read exactly what it
//! held, names are unique, restore wants a disabled table, and all of it
//! survives reopening.
#![cfg(test)]

use std::path::Path;

use strata::{
    Db, DbOptions, Delete, Error, FamilyDescriptor, PreSplit, Put, Scan, SnapshotOptions, Table,
    TableDescriptor,
};

fn descriptor(name: &str) -> TableDescriptor {
    TableDescriptor::new(name)
        .family(FamilyDescriptor::new("a").max_versions(3))
        .family(FamilyDescriptor::new("b"))
        .pre_split(PreSplit::Keys(vec![b"m".to_vec()]))
}

/// Every cell: (row, family, qualifier, timestamp, value).
fn cells(table: &Table) -> Vec<(String, String, String, i64, String)> {
    table
        .scan(&Scan::new().max_versions(10))
        .unwrap()
        .flat_map(|row| {
            let row = row.unwrap();
            row.cells
                .iter()
                .map(|c| {
                    (
                        String::from_utf8_lossy(&row.row).into_owned(),
                        String::from_utf8_lossy(&c.family).into_owned(),
                        String::from_utf8_lossy(&c.qualifier).into_owned(),
                        c.timestamp,
                        String::from_utf8_lossy(&c.value).into_owned(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

fn put(table: &Table, row: &str, family: &str, value: &str, ts: i64) {
    table
        .put(&Put::new(row).add_at(family, "q", ts, value))
        .unwrap();
}

fn hfile_count(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("data"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "hfile")
        })
        .count()
}

/// A table with cells in both regions, in files and in the memstore.
fn filled(db: &Db) -> Table {
    let t = db.create_table(descriptor("t")).unwrap();
    put(&t, "a1", "a", "x1", 10);
    put(&t, "z1", "b", "y1", 10);
    db.flush().unwrap();
    put(&t, "a1", "a", "x2", 20);
    put(&t, "n5", "a", "w", 10);
    t
}

#[test]
fn snapshot_compact_then_clone_gives_the_snapshots_cells() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    let t = filled(&db);
    let before = cells(&t);
    db.snapshot("t", "s1").unwrap();
    // Writes and deletes after it, then a major compaction that rewrites every file.
    put(&t, "a1", "a", "x3", 30);
    put(&t, "b2", "b", "new", 10);
    t.delete(&Delete::new("z1")).unwrap();
    t.major_compact().unwrap();
    db.wait_for_background_work().unwrap();
    let after = cells(&t);
    assert_ne!(after, before);

    let clone = db.clone_snapshot("s1", "c").unwrap();
    assert_eq!(cells(&clone), before);
    assert_eq!(
        clone.descriptor().unwrap().families(),
        t.descriptor().unwrap().families()
    );
    assert_eq!(clone.regions().unwrap().len(), 2);
    // The clone is a table of its own: writes to it reach neither the original nor the snapshot.
    put(&clone, "c1", "a", "mine", 10);
    clone.major_compact().unwrap();
    db.wait_for_background_work().unwrap();
    assert_eq!(cells(&t), after);
    let again = db.clone_snapshot("s1", "c2").unwrap();
    assert_eq!(cells(&again), before);

    // Reopened: the snapshot, the clones and the original are all as they were.
    db.close().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    assert_eq!(
        db.list_snapshots()
            .iter()
            .map(|s| (s.name.as_str(), s.table.as_str()))
            .collect::<Vec<_>>(),
        [("s1", "t")]
    );
    assert_eq!(cells(&db.table("t").unwrap()), after);
    assert_eq!(cells(&db.table("c2").unwrap()), before);
    assert_eq!(cells(&db.clone_snapshot("s1", "c3").unwrap()), before);
}

/// HBase's `SKIP_FLUSH => true`: the snapshot is taken without flushing, so it holds what
/// the regions had in files and not what only their memstores held; the table keeps those
/// writes, and a normal snapshot taken next holds them.
#[test]
fn a_snapshot_that_skips_the_flush_holds_only_the_flushed_cells() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    let t = filled(&db);
    let files = hfile_count(dir.path());
    db.snapshot_with("t", "quick", SnapshotOptions { skip_flush: true })
        .unwrap();
    assert_eq!(hfile_count(dir.path()), files, "nothing was flushed");
    let flushed = vec![
        ("a1".into(), "a".into(), "q".into(), 10, "x1".into()),
        ("z1".into(), "b".into(), "q".into(), 10, "y1".into()),
    ];
    assert_eq!(cells(&db.clone_snapshot("quick", "c1").unwrap()), flushed);
    let all = cells(&t);
    assert_eq!(all.len(), 4, "the table keeps its unflushed writes");
    db.snapshot("t", "full").unwrap();
    assert_eq!(cells(&db.clone_snapshot("full", "c2").unwrap()), all);
}

#[test]
fn a_snapshot_pins_its_files_until_it_is_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    let t = filled(&db);
    db.snapshot("t", "s1").unwrap();
    let pinned = hfile_count(dir.path());
    t.major_compact().unwrap();
    db.wait_for_background_work().unwrap();
    // Compaction replaced the table's files; the snapshot kept the old ones.
    assert!(
        hfile_count(dir.path()) > pinned,
        "{}",
        hfile_count(dir.path())
    );
    // Dropping the table keeps them too.
    db.disable_table("t").unwrap();
    db.drop_table("t").unwrap();
    assert_eq!(hfile_count(dir.path()), pinned);
    // And reopening (whose orphan sweep deletes files nothing names).
    db.close().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    assert_eq!(hfile_count(dir.path()), pinned);
    // Restoring a dropped table creates it again.
    db.restore_snapshot("s1").unwrap();
    let restored = db.table("t").unwrap();
    assert!(restored.is_enabled());
    assert_eq!(cells(&restored).len(), 4);
    db.disable_table("t").unwrap();
    db.drop_table("t").unwrap();
    db.delete_snapshot("s1").unwrap();
    assert_eq!(hfile_count(dir.path()), 0);
    assert!(db.list_snapshots().is_empty());
}

#[test]
fn restore_wants_a_disabled_table_and_brings_back_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    let t = filled(&db);
    let before = cells(&t);
    db.snapshot("t", "s1").unwrap();
    put(&t, "a1", "a", "x3", 30);
    db.alter_table(descriptor("t").family(FamilyDescriptor::new("c")))
        .unwrap();
    put(&t, "q", "c", "v", 10);
    let err = db.restore_snapshot("s1").unwrap_err();
    assert!(matches!(err, Error::TableNotDisabled { .. }), "{err}");
    assert_eq!(cells(&t).len(), before.len() + 2);

    db.disable_table("t").unwrap();
    db.restore_snapshot("s1").unwrap();
    assert!(!db.is_table_enabled("t").unwrap());
    db.enable_table("t").unwrap();
    assert_eq!(cells(&t), before);
    // The schema is the snapshot's: family c is gone.
    assert_eq!(t.descriptor().unwrap().families().len(), 2);
    // It takes writes and survives reopening without its WAL's old records coming back.
    put(&t, "k", "b", "after", 10);
    db.close().unwrap();
    let db = Db::open(
        dir.path(),
        DbOptions {
            flush_on_close: false,
            ..DbOptions::default()
        },
    )
    .unwrap();
    let t = db.table("t").unwrap();
    let mut expected = before.clone();
    expected.insert(2, ("k".into(), "b".into(), "q".into(), 10, "after".into()));
    assert_eq!(cells(&t), expected);
}

#[test]
fn snapshot_names_are_unique_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    filled(&db);
    db.create_table(descriptor("other")).unwrap();
    db.snapshot("t", "s1").unwrap();
    let err = db.snapshot("other", "s1").unwrap_err();
    assert!(matches!(err, Error::SnapshotExists { .. }), "{err}");
    assert_eq!(err.to_string(), "snapshot 's1' already exists");
    for bad in ["", ".x", "-x", "a b", "ns:s"] {
        let err = db.snapshot("t", bad).unwrap_err();
        assert!(
            matches!(err, Error::InvalidSnapshotName { .. }),
            "{bad}: {err}"
        );
        assert!(err.is_invalid_input());
    }
    let err = db.snapshot("nope", "s2").unwrap_err();
    assert!(matches!(err, Error::TableNotFound { .. }), "{err}");
    for err in [
        db.delete_snapshot("s9").unwrap_err(),
        db.restore_snapshot("s9").unwrap_err(),
        db.clone_snapshot("s9", "c").map(drop).unwrap_err(),
    ] {
        assert!(matches!(err, Error::SnapshotNotFound { .. }), "{err}");
    }
    let err = db.clone_snapshot("s1", "other").map(drop).unwrap_err();
    assert!(matches!(err, Error::TableExists { .. }), "{err}");
    let err = db.clone_snapshot("s1", "ns9:c").map(drop).unwrap_err();
    assert!(matches!(err, Error::NamespaceNotFound { .. }), "{err}");
    // None of it changed anything.
    assert_eq!(db.list_snapshots().len(), 1);
    assert_eq!(db.list_tables(), ["other", "t"]);
}

#[test]
fn a_checkpoint_keeps_the_snapshots_and_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    let t = filled(&db);
    let before = cells(&t);
    db.snapshot("t", "s1").unwrap();
    t.major_compact().unwrap();
    db.wait_for_background_work().unwrap();
    let out = tempfile::tempdir().unwrap();
    db.checkpoint(out.path().join("c")).unwrap();
    db.close().unwrap();
    let copy = Db::open(out.path().join("c"), DbOptions::default()).unwrap();
    assert_eq!(cells(&copy.clone_snapshot("s1", "c").unwrap()), before);
}
