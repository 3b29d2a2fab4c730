//! Bulk loads: the writer's checks, both sequence modes, loads after the
//! table split, and bad input that must change nothing.
#![cfg(test)]

use std::path::{Path, PathBuf};

use strata::{
    BulkLoadOptions, BulkWriter, Db, Delete, Error, FamilyDescriptor, Get, PreSplit, Put, Scan,
    Table, TableDescriptor,
};
use strata_tests::TestDb;

fn descriptor(name: &str) -> TableDescriptor {
    TableDescriptor::new(name)
        .family(FamilyDescriptor::new("a").max_versions(3))
        .family(FamilyDescriptor::new("b"))
        .pre_split(PreSplit::Keys(vec![b"m".to_vec()]))
}

/// A cell as the tests compare it: family, qualifier, timestamp, value.
type TestCell = (String, Vec<u8>, i64, Vec<u8>);

fn rows(table: &Table) -> Vec<(Vec<u8>, Vec<TestCell>)> {
    table
        .scan(&Scan::new().max_versions(10))
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            let cells = r
                .cells
                .iter()
                .map(|c| {
                    (
                        String::from_utf8_lossy(&c.family).into_owned(),
                        c.qualifier.clone(),
                        c.timestamp,
                        c.value.clone(),
                    )
                })
                .collect();
            (r.row, cells)
        })
        .collect()
}

/// Writes `cells` (row, family, qualifier, ts, value; sorted) with the table's writer.
fn write(table: &Table, dir: &Path, cells: &[(&str, &str, &str, i64, &str)]) -> Vec<PathBuf> {
    let mut writer = table.bulk_writer(dir).unwrap();
    for (row, family, qualifier, ts, value) in cells {
        writer
            .add(
                row.as_bytes(),
                family.as_bytes(),
                qualifier.as_bytes(),
                *ts,
                value.as_bytes(),
            )
            .unwrap();
    }
    writer.finish().unwrap().paths()
}

#[test]
fn loaded_cells_read_like_puts_and_survive_reopen() {
    let mut t = TestDb::new(1_000_000);
    let table = t.db.create_table(descriptor("t")).unwrap();
    let load = t.dir.path().join("load");
    let cells = [
        ("a1", "a", "q", 20, "x2"),
        ("a1", "a", "q", 10, "x1"),
        ("a1", "b", "", 10, "y"),
        ("z9", "a", "q", 10, "z"),
    ];
    let mut writer = table.bulk_writer(&load).unwrap();
    for (row, family, qualifier, ts, value) in cells {
        writer
            .add(
                row.as_bytes(),
                family.as_bytes(),
                qualifier.as_bytes(),
                ts,
                value.as_bytes(),
            )
            .unwrap();
    }
    let files = writer.finish().unwrap();
    assert_eq!(
        files.files.len(),
        3,
        "two families in the first region, one in the second"
    );
    assert_eq!(files.cells, 4);
    let report = table
        .bulk_load(&files.paths(), &BulkLoadOptions::default())
        .unwrap();
    assert_eq!(report.files_installed, 3);
    assert_eq!(report.files_split, 0);
    assert_eq!(report.cells, 4);
    assert_eq!(report.regions, 2);
    assert_eq!(report.bytes_written, 0, "moved by a link, nothing copied");
    for file in files.paths() {
        assert!(!file.exists(), "moved away");
    }
    let expected = rows(&table);
    assert_eq!(expected.len(), 2);
    assert_eq!(
        table
            .get(&Get::new("a1").max_versions(3))
            .unwrap()
            .cells
            .len(),
        3
    );
    // The same cells as puts give the same reads.
    let puts = t.db.create_table(descriptor("p")).unwrap();
    for (row, family, qualifier, ts, value) in cells {
        puts.put(&Put::new(row).add_at(family, qualifier, ts, value))
            .unwrap();
    }
    assert_eq!(rows(&puts), expected);
    t.reopen();
    let table = t.db.table("t").unwrap();
    assert_eq!(rows(&table), expected, "after reopen");
    let stats = t.db.stats();
    assert!(stats.last_sequence >= report.sequence);
    table.major_compact().unwrap();
    assert_eq!(rows(&table), expected, "after a major compaction");
}

#[test]
fn a_fresh_load_wins_ties_and_a_backfill_loses_them() {
    let t = TestDb::new(1_000_000);
    let table = t.db.create_table(descriptor("t")).unwrap();
    table
        .put(&Put::new("r").add_at("a", "q", 100, "live"))
        .unwrap();
    // A delete marker written before the load hides cells it covers only
    // when the load counts as older (back-fill).
    table
        .delete(&Delete::new("s").column_all_versions_up_to("a", "q", 100))
        .unwrap();
    let dir = t.dir.path();
    let fresh = write(
        &table,
        &dir.join("fresh"),
        &[
            ("r", "a", "q", 100, "fresh"),
            ("s", "a", "q", 50, "s-fresh"),
        ],
    );
    table
        .bulk_load(&fresh, &BulkLoadOptions::default())
        .unwrap();
    let got = table.get(&Get::new("r")).unwrap();
    assert_eq!(
        got.value("a", "q"),
        Some(&b"fresh"[..]),
        "a fresh load is newest"
    );
    assert_eq!(
        table.get(&Get::new("s")).unwrap().value("a", "q"),
        Some(&b"s-fresh"[..]),
        "the older marker does not hide a fresh load"
    );
    // A put after the load wins over it.
    table
        .put(&Put::new("r").add_at("a", "q", 100, "later"))
        .unwrap();
    assert_eq!(
        table.get(&Get::new("r")).unwrap().value("a", "q"),
        Some(&b"later"[..])
    );
    let backfill = write(
        &table,
        &dir.join("backfill"),
        &[
            ("r", "a", "q", 100, "old"),
            ("r", "a", "q", 40, "older"),
            ("s", "a", "q", 60, "s-old"),
            ("t", "a", "q", 5, "t-old"),
        ],
    );
    let report = table
        .bulk_load(&backfill, &BulkLoadOptions::default().backfill(true))
        .unwrap();
    assert_eq!(report.sequence, 0);
    let got = table.get(&Get::new("r").max_versions(3)).unwrap();
    let versions: Vec<(i64, &[u8])> = got
        .cells
        .iter()
        .map(|c| (c.timestamp, c.value.as_slice()))
        .collect();
    assert_eq!(
        versions,
        [(100, &b"later"[..]), (40, &b"older"[..])],
        "a live cell of the same timestamp wins over a back-fill; older versions join"
    );
    assert_eq!(
        table.get(&Get::new("s")).unwrap().value("a", "q"),
        Some(&b"s-fresh"[..]),
        "the marker (ts <= 100) hides the back-filled ts 60 cell, not the fresh one"
    );
    assert_eq!(
        table.get(&Get::new("t")).unwrap().value("a", "q"),
        Some(&b"t-old"[..])
    );
    let before = rows(&table);
    table.flush().unwrap();
    table.major_compact().unwrap();
    assert_eq!(rows(&table), before, "compaction changes no read");
}

#[test]
fn a_load_after_the_table_split_cuts_files_at_the_new_boundaries() {
    let t = TestDb::new(1_000_000);
    let table =
        t.db.create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
            .unwrap();
    let mut writer = table.bulk_writer(t.dir.path().join("load")).unwrap();
    let mut expected = Vec::new();
    for i in 0..2000u32 {
        let row = format!("row{i:05}");
        writer
            .add(row.as_bytes(), b"f", b"q", 7, &i.to_be_bytes())
            .unwrap();
        expected.push(row.into_bytes());
    }
    let files = writer.finish().unwrap();
    assert_eq!(files.files.len(), 1);
    // The table splits twice after the files were written.
    table.split(Some(b"row00500")).unwrap();
    table.split(Some(b"row01500")).unwrap();
    assert_eq!(table.regions().unwrap().len(), 3);
    let report = table
        .bulk_load(&files.paths(), &BulkLoadOptions::default())
        .unwrap();
    assert_eq!(report.files_split, 1);
    assert_eq!(report.files_installed, 3);
    assert_eq!(report.regions, 3);
    let got: Vec<Vec<u8>> = table
        .scan(&Scan::new())
        .unwrap()
        .map(|r| r.unwrap().row)
        .collect();
    assert_eq!(got, expected);
    for region in table.regions().unwrap() {
        assert_eq!(region.activity.bulk_loaded_files, 1, "{region:?}");
    }
}

#[test]
fn the_writer_names_the_first_bad_cell() {
    let t = TestDb::new(1_000_000);
    let table = t.db.create_table(descriptor("t")).unwrap();
    let mut writer = table.bulk_writer(t.dir.path().join("w")).unwrap();
    writer.add(b"b", b"a", b"q", 10, b"v").unwrap();
    match writer.add(b"a", b"a", b"q", 10, b"v") {
        Err(Error::BulkCellOutOfOrder {
            index,
            cell,
            previous,
        }) => {
            assert_eq!(index, 1);
            assert_eq!(cell.row, b"a");
            assert_eq!(previous.row, b"b");
        }
        other => panic!("{other:?}"),
    }
    assert!(writer.add(b"c", b"a", b"q", 10, b"v").is_err(), "stopped");
    writer.abandon();
    type Case<'a> = (&'a [u8], &'a [u8], i64, fn(&Error) -> bool);
    let cases: Vec<Case<'_>> = vec![
        (b"", b"a", 1, |e| matches!(e, Error::EmptyRowKey)),
        (b"r", b"nope", 1, |e| {
            matches!(e, Error::UnknownFamily { .. })
        }),
        (b"r", b"a", -1, |e| {
            matches!(e, Error::NegativeTimestamp { .. })
        }),
    ];
    for (row, family, ts, expected) in cases {
        let mut writer = table.bulk_writer(t.dir.path().join("w2")).unwrap();
        match writer.add(row, family, b"q", ts, b"v") {
            Err(Error::BulkCellInvalid { index, source, .. }) => {
                assert_eq!(index, 0);
                assert!(expected(&source), "{source:?}");
            }
            other => panic!("{other:?}"),
        }
        writer.abandon();
    }
    // Same column and timestamp twice, and timestamps ascending.
    for (dir, second_timestamp) in [("w3", 10), ("w4", 11)] {
        let mut writer = table.bulk_writer(t.dir.path().join(dir)).unwrap();
        writer.add(b"r", b"a", b"q", 10, b"v").unwrap();
        assert!(matches!(
            writer.add(b"r", b"a", b"q", second_timestamp, b"w"),
            Err(Error::BulkCellOutOfOrder { .. })
        ));
        writer.abandon();
    }
}

/// Bad input to a load: a typed error, and the table is unchanged.
#[test]
fn bad_files_change_nothing() {
    let t = TestDb::new(1_000_000);
    let table = t.db.create_table(descriptor("t")).unwrap();
    table.put(&Put::new("k").add("a", "q", "v")).unwrap();
    let dir = t.dir.path();
    let unchanged = |table: &Table| {
        let before = rows(table);
        let files = t.db.stats().files;
        (before, files)
    };
    let baseline = unchanged(&table);

    // A file of another table.
    let other = t.db.create_table(descriptor("other")).unwrap();
    let foreign = write(&other, &dir.join("foreign"), &[("x", "a", "q", 1, "v")]);
    assert!(matches!(
        table.bulk_load(&foreign, &BulkLoadOptions::default()),
        Err(Error::BulkFileOfAnotherTable { .. })
    ));
    assert!(foreign[0].exists(), "the caller's file is untouched");

    // A family the table does not have (written for a table of the same
    // name with another family).
    let offline = BulkWriter::new(
        &TableDescriptor::new("t").family(FamilyDescriptor::new("c")),
        vec![b"m".to_vec()],
        dir.join("family"),
    )
    .unwrap();
    let mut offline = offline;
    offline.add(b"x", b"c", b"q", 1, b"v").unwrap();
    let family = offline.finish().unwrap().paths();
    assert!(matches!(
        table.bulk_load(&family, &BulkLoadOptions::default()),
        Err(Error::BulkFileUnknownFamily { .. })
    ));

    // A corrupt file: one byte of a data block flipped.
    let good = write(&table, &dir.join("corrupt"), &[("x", "a", "q", 1, "value")]);
    let mut bytes = std::fs::read(&good[0]).unwrap();
    bytes[20] ^= 0x40;
    std::fs::write(&good[0], &bytes).unwrap();
    assert!(matches!(
        table.bulk_load(&good, &BulkLoadOptions::default()),
        Err(Error::Corruption { .. })
    ));

    // A file a flush wrote (not a bulk file).
    table.flush().unwrap();
    let flushed = std::fs::read_dir(dir.join("data"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "hfile"))
        .expect("the flush wrote a file");
    let copy = dir.join("flushed.hfile");
    std::fs::copy(&flushed, &copy).unwrap();
    assert!(matches!(
        table.bulk_load(&[copy], &BulkLoadOptions::default()),
        Err(Error::NotABulkFile { .. })
    ));
    let baseline = (baseline.0, t.db.stats().files);
    assert_eq!(unchanged(&table), baseline);

    // A duplicate: the same file given twice, then loaded again (copied).
    let once = write(&table, &dir.join("dup"), &[("y", "a", "q", 1, "v")]);
    let twice = vec![once[0].clone(), once[0].clone()];
    assert!(matches!(
        table.bulk_load(&twice, &BulkLoadOptions::default()),
        Err(Error::BulkFileAlreadyLoaded { .. })
    ));
    assert_eq!(unchanged(&table), baseline);
    table
        .bulk_load(&once, &BulkLoadOptions::default().copy(true))
        .unwrap();
    assert!(once[0].exists(), "copied, not moved");
    let loaded = unchanged(&table);
    assert!(matches!(
        table.bulk_load(&once, &BulkLoadOptions::default().copy(true)),
        Err(Error::BulkFileAlreadyLoaded { .. })
    ));
    assert_eq!(unchanged(&table), loaded);
}

#[test]
fn an_offline_writer_uses_a_descriptors_split_keys() {
    let dir = tempfile::tempdir().unwrap();
    let descriptor = TableDescriptor::new("events")
        .family(FamilyDescriptor::new("e"))
        .pre_split(PreSplit::SaltBuckets { buckets: 4 });
    let splits = descriptor.get_pre_split().split_keys().unwrap();
    let mut writer = BulkWriter::new(&descriptor, splits, dir.path().join("out")).unwrap();
    for bucket in 0..4 {
        for i in 0..10 {
            let row = format!("{bucket:03}|{i:04}");
            writer.add(row.as_bytes(), b"e", b"", 1, b"v").unwrap();
        }
    }
    let files = writer.finish().unwrap();
    assert_eq!(files.files.len(), 4, "one per region");
    let db = Db::open_default(dir.path().join("db")).unwrap();
    let table = db.create_table(descriptor).unwrap();
    let report = table
        .bulk_load(&files.paths(), &BulkLoadOptions::default())
        .unwrap();
    assert_eq!((report.files_split, report.regions), (0, 4));
    assert_eq!(table.count(&Scan::new()).unwrap(), 40);
}
