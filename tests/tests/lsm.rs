//! HFiles, flushes and compactions seen from the outside: what lands on
//! disk, what compaction drops, how damage is reported.

// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use strata::{
    CellKind, Db, DbOptions, Delete, Error, FamilyDescriptor, Get, Put, Scan, Table,
    TableDescriptor,
};
use strata_tests::TestDb;

fn hfiles(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("data"))
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "hfile"));
    files.sort();
    files
}

/// A cell as (family, qualifier, timestamp, kind, value).
type Flat = (Vec<u8>, Vec<u8>, i64, CellKind, Vec<u8>);

fn rows(table: &Table, scan: &Scan) -> Vec<(Vec<u8>, Vec<Flat>)> {
    table
        .scan(scan)
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            let cells = r
                .cells
                .into_iter()
                .map(|c| (c.family, c.qualifier, c.timestamp, c.kind, c.value))
                .collect();
            (r.row, cells)
        })
        .collect()
}

fn fill(table: &Table, n: usize, value_len: usize) {
    let puts: Vec<Put> = (0..n)
        .map(|i| Put::new(format!("row{i:06}")).add("f", "q", vec![(i % 251) as u8; value_len]))
        .collect();
    for chunk in puts.chunks(500) {
        table.put_many(chunk).unwrap();
    }
}

#[test]
fn flush_moves_memstores_into_files_and_releases_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        wal_segment_bytes: 64 * 1024,
        ..DbOptions::default()
    };
    let db = Db::open(dir.path(), options.clone()).unwrap();
    let table = db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap();
    fill(&table, 3000, 100);
    let before = rows(&table, &Scan::new());
    let segments_before = strata::inspect::wal_segments(dir.path()).unwrap().len();
    assert!(
        segments_before > 3,
        "small segments roll over: {segments_before}"
    );
    table.flush().unwrap();
    let stats = db.stats();
    assert_eq!(stats.memstore_bytes, 0);
    assert_eq!(stats.files, 1);
    assert_eq!(hfiles(dir.path()).len(), 1);
    assert_eq!(
        strata::inspect::wal_segments(dir.path()).unwrap().len(),
        1,
        "flushed segments are deleted"
    );
    assert_eq!(rows(&table, &Scan::new()), before);
    assert_eq!(rows(&table, &Scan::new().reversed(true)).len(), 3000);
    // The file survives reopening, with nothing to replay.
    db.close().unwrap();
    let db = Db::open(dir.path(), options).unwrap();
    assert_eq!(db.recovery_report().records_replayed, 0);
    assert_eq!(rows(&db.table("t").unwrap(), &Scan::new()), before);
}

#[test]
fn a_flush_of_everything_leaves_no_dead_log_on_disk() {
    // Default segments (64 MiB): before rolling after flushes, the segment
    // being written kept up to 64 MiB of flushed log (and preallocated all
    // of it up front).
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        flush_on_close: false,
        ..DbOptions::default()
    };
    let db = Db::open(dir.path(), options.clone()).unwrap();
    let table = db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap();
    let fresh = strata::inspect::wal_segments(dir.path()).unwrap();
    assert_eq!(fresh.len(), 1);
    assert!(fresh[0].file_bytes <= 4 << 20, "{}", fresh[0].file_bytes);
    fill(&table, 20_000, 200);
    let written = strata::inspect::wal_segments(dir.path()).unwrap();
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].records.len(), 20_000);
    table.flush().unwrap();
    let after = strata::inspect::wal_segments(dir.path()).unwrap();
    assert_eq!(after.len(), 1, "the flushed segment is deleted");
    assert!(after[0].id > written[0].id);
    assert!(after[0].records.is_empty());
    // New writes go to the new segment and survive a reopen.
    table
        .put(
            &Put::new("late")
                .add("f", "q", "v")
                .durability(strata::Durability::SyncWal),
        )
        .unwrap();
    drop(table);
    db.close().unwrap();
    let db = Db::open(dir.path(), options).unwrap();
    assert_eq!(db.recovery_report().records_replayed, 1);
    let table = db.table("t").unwrap();
    assert_eq!(rows(&table, &Scan::new()).len(), 20_001);
}

/// A database at `dir` with table `t` of one family `f` whose memstores
/// flush at `flush_bytes`.
fn open_with_flush_size(dir: &Path, options: DbOptions, flush_bytes: u64) -> (Db, Table) {
    let db = Db::open(dir, options).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("f"))
                .memstore_flush_size_bytes(flush_bytes),
        )
        .unwrap();
    (db, table)
}

/// Options under which no store compacts (nor stalls its writers on L0
/// files): every flushed file stays as it was written.
fn no_compaction() -> DbOptions {
    DbOptions {
        l0_compaction_trigger: 1000,
        l0_slowdown_files: 2000,
        l0_stop_files: 3000,
        ..DbOptions::default()
    }
}

#[test]
fn memstores_flush_and_stores_compact_on_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        l0_compaction_trigger: 2,
        level_base_bytes: 256 * 1024,
        target_file_bytes: 128 * 1024,
        ..DbOptions::default()
    };
    let (db, table) = open_with_flush_size(dir.path(), options, 64 * 1024);
    // Overwrite the same keys several times: compaction keeps one version each.
    for _ in 0..4 {
        fill(&table, 4000, 100);
    }
    db.wait_for_background_work().unwrap();
    let stats = db.stats();
    assert!(stats.flushes >= 4, "{stats:?}");
    assert!(stats.compactions >= 1, "{stats:?}");
    let region = &table.regions().unwrap()[0];
    assert!(
        region.files_per_level[0] < 2,
        "L0 was compacted: {region:?}"
    );
    assert!(region.files_per_level[1..].iter().sum::<usize>() >= 1);
    let got = rows(&table, &Scan::new());
    assert_eq!(got.len(), 4000);
    assert!(got.iter().all(|(_, cells)| cells.len() == 1));
    assert_eq!(
        db.stats().files as usize,
        hfiles(dir.path()).len(),
        "no file left behind"
    );
}

/// Writes that arrive while a flush runs go to the active memstore and
/// count towards the next flush only: they never make the flush that
/// follows write the few cells that came meanwhile as one more small file.
/// (The region once counted the frozen memstores too, so every write
/// during a flush queued another, and a paced writer left a file of a few
/// dozen rows after each flush.)
#[test]
fn writes_during_a_flush_do_not_queue_a_flush_of_their_own() {
    const FLUSH_BYTES: u64 = 64 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let (db, table) = open_with_flush_size(dir.path(), no_compaction(), FLUSH_BYTES);
    // A paced writer: a flush of 64 KiB (file, directory and WAL syncs)
    // takes a few of its puts' intervals, so puts keep arriving while one
    // runs.
    for i in 0..4000 {
        table
            .put(&Put::new(format!("row{i:06}")).add("f", "q", vec![7u8; 100]))
            .unwrap();
        std::thread::sleep(Duration::from_micros(50));
    }
    db.wait_for_background_work().unwrap();
    let background_flushes = db.stats().flushes;
    db.flush().unwrap();
    let files = hfiles(dir.path());
    assert!(background_flushes >= 4, "{:?}", db.stats());
    // Every file but the last (the explicit flush's) holds a memstore that
    // reached the flush size on its own.
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .collect();
    let (_, background) = sizes.split_last().unwrap();
    assert!(
        background.iter().all(|&size| size >= FLUSH_BYTES / 4),
        "file sizes {sizes:?}"
    );
    assert_eq!(rows(&table, &Scan::new()).len(), 4000);
}

/// A flush takes its region off the flush queue only once it has frozen
/// the memstore: a write that came between the two still saw the full
/// memstore and no flush queued, and queued a second flush, which then
/// wrote the few cells that arrived meanwhile as a file of their own (an
/// unpaced 1,000,000-row load ended with two or three L0 files from run to
/// run).
#[test]
fn a_flush_starting_does_not_let_writes_queue_another() {
    const FLUSH_BYTES: u64 = 64 * 1024;
    const ROWS: usize = 10_000;
    let dir = tempfile::tempdir().unwrap();
    let (db, table) = open_with_flush_size(dir.path(), no_compaction(), FLUSH_BYTES);
    // Unpaced: writes keep arriving while each flush starts.
    for i in 0..ROWS {
        table
            .put(&Put::new(format!("row{i:06}")).add("f", "q", vec![7u8; 100]))
            .unwrap();
    }
    db.wait_for_background_work().unwrap();
    db.flush().unwrap();
    let sizes: Vec<u64> = hfiles(dir.path())
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .collect();
    let (_, background) = sizes.split_last().unwrap();
    assert!(background.len() >= 20, "file sizes {sizes:?}");
    let small = background
        .iter()
        .filter(|&&size| size < FLUSH_BYTES / 4)
        .count();
    assert_eq!(small, 0, "file sizes {sizes:?}");
    assert_eq!(rows(&table, &Scan::new()).len(), ROWS);
}

#[test]
fn major_compaction_drops_exactly_what_reads_cannot_see() {
    let t = TestDb::new(1_000_000);
    let table =
        t.db.create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("f").max_versions(2))
                .family(
                    FamilyDescriptor::new("e")
                        .max_versions(5)
                        .ttl(Duration::from_secs(10)),
                ),
        )
        .unwrap();
    // a: five versions, two survive.
    for ts in 1..=5 {
        table
            .put(&Put::new("r").add_at("f", "a", ts, format!("a{ts}")))
            .unwrap();
    }
    // b: deleted entirely; its hidden version is inside the window, so it
    // stays as a value-less ghost with the marker that hides it (two later
    // puts below ts 1 must not both become visible).
    table.put(&Put::new("r").add_at("f", "b", 1, "b1")).unwrap();
    table
        .delete(&Delete::new("r").column_all_versions("f", "b"))
        .unwrap();
    // c: the newest version hidden; it keeps its window place as a ghost,
    // with the marker that hides it, and the version below stays visible.
    table.put(&Put::new("r").add_at("f", "c", 3, "c3")).unwrap();
    table.put(&Put::new("r").add_at("f", "c", 1, "c1")).unwrap();
    table
        .delete(&Delete::new("r").column_version("f", "c", 3))
        .unwrap();
    // e: expired by TTL (now = 1_000_000, ttl = 10 s).
    table
        .put(&Put::new("r").add_at("e", "x", 900_000, "old"))
        .unwrap();
    table
        .put(&Put::new("r").add_at("e", "x", 995_000, "fresh"))
        .unwrap();
    let visible_before = rows(&table, &Scan::new().all_versions());
    table.flush().unwrap();
    table.major_compact().unwrap();
    assert_eq!(
        rows(&table, &Scan::new().all_versions()),
        visible_before,
        "reads are unchanged"
    );
    let raw = rows(&table, &Scan::new().raw(true).all_versions());
    let got: Vec<(String, String, i64, CellKind, String)> = raw[0]
        .1
        .iter()
        .map(|(f, q, ts, kind, v)| {
            (
                String::from_utf8_lossy(f).into_owned(),
                String::from_utf8_lossy(q).into_owned(),
                *ts,
                *kind,
                String::from_utf8_lossy(v).into_owned(),
            )
        })
        .collect();
    let c = |f: &str, q: &str, ts: i64, kind: CellKind, v: &str| {
        (f.to_string(), q.to_string(), ts, kind, v.to_string())
    };
    assert_eq!(
        got,
        [
            c("e", "x", 995_000, CellKind::Put, "fresh"),
            c("f", "a", 5, CellKind::Put, "a5"),
            c("f", "a", 4, CellKind::Put, "a4"),
            c("f", "b", 1_000_000, CellKind::DeleteColumn, ""),
            c("f", "b", 1, CellKind::Put, ""),
            c("f", "c", 3, CellKind::Delete, ""),
            c("f", "c", 3, CellKind::Put, ""),
            c("f", "c", 1, CellKind::Put, "c1"),
        ]
    );
    // The ghost still holds its place: a put at ts 2 pushes c1 out of the window.
    table.put(&Put::new("r").add_at("f", "c", 2, "c2")).unwrap();
    let c_versions: Vec<i64> = table
        .get(&Get::new("r").column("f", "c").all_versions())
        .unwrap()
        .cells
        .iter()
        .map(|c| c.timestamp)
        .collect();
    assert_eq!(c_versions, [2]);
}

#[test]
fn orphan_files_are_deleted_at_open() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open_default(dir.path()).unwrap();
        let table = db
            .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
            .unwrap();
        fill(&table, 100, 10);
        db.close().unwrap();
    }
    let orphan = dir.path().join("data").join("000000099999.hfile");
    std::fs::write(&orphan, b"left behind by a crash during a flush").unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    assert!(!orphan.exists());
    assert_eq!(db.recovery_report().orphan_files_deleted, 1);
    assert_eq!(
        db.table("t").unwrap().scan(&Scan::new()).unwrap().count(),
        100
    );
}

#[test]
fn damaged_hfiles_are_reported_with_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open_default(dir.path()).unwrap();
        let table = db
            .create_table(
                TableDescriptor::new("t").family(FamilyDescriptor::new("f").block_size_bytes(1024)),
            )
            .unwrap();
        fill(&table, 500, 100);
        db.close().unwrap();
    }
    let file = hfiles(dir.path()).remove(0);
    let original = std::fs::read(&file).unwrap();
    let flip = |at: u64| {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&file)
            .unwrap();
        let mut b = [0u8];
        f.read_exact_at(&mut b, at).unwrap();
        f.write_all_at(&[b[0] ^ 0x10], at).unwrap();
    };
    // A data block: opening works, reading the block fails, verify names it.
    flip(100);
    let db = Db::open_default(dir.path()).unwrap();
    let table = db.table("t").unwrap();
    match table.get(&Get::new("row000000")) {
        Err(Error::Corruption {
            file: f, offset, ..
        }) => {
            assert_eq!(f, file);
            assert_eq!(offset, 0, "the first data block starts at 0");
        }
        other => panic!("expected corruption, got {other:?}"),
    }
    let report = db.verify().unwrap();
    assert_eq!(report.files, 1);
    assert_eq!(report.problems.len(), 1);
    assert!(
        matches!(&report.problems[0], Error::Corruption { file: f, offset: 0, .. } if *f == file)
    );
    assert!(
        !table.get(&Get::new("row000499")).unwrap().is_empty(),
        "other blocks still read"
    );
    db.close().unwrap();
    // The trailer, index and bloom are checked at open.
    for at in [original.len() as u64 - 10, original.len() as u64 - 200] {
        std::fs::write(&file, &original).unwrap();
        flip(at);
        match Db::open_default(dir.path()) {
            Err(Error::Corruption { file: f, .. }) => assert_eq!(f, file),
            other => panic!("flip at {at}: expected corruption, got {other:?}"),
        }
    }
    std::fs::write(&file, &original).unwrap();
    assert!(
        Db::open_default(dir.path())
            .unwrap()
            .verify()
            .unwrap()
            .problems
            .is_empty()
    );
}

#[test]
fn get_many_matches_single_gets() {
    let t = TestDb::new(1000);
    let table =
        t.db.create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("f"))
                .family(FamilyDescriptor::new("g")),
        )
        .unwrap();
    fill(&table, 2000, 50);
    table.flush().unwrap();
    for i in (0..2000).step_by(3) {
        table
            .put(&Put::new(format!("row{i:06}")).add("g", "x", "in memstore"))
            .unwrap();
    }
    let gets: Vec<Get> = (0..300)
        .map(|i| Get::new(format!("row{:06}", (i * 7919) % 2600)))
        .chain([Get::new("row000003").column("g", "x")])
        .collect();
    let many = table.get_many(&gets).unwrap();
    let singles: Vec<_> = gets.iter().map(|g| table.get(g).unwrap()).collect();
    assert_eq!(many, singles);
    assert!(
        many.iter().filter(|r| r.is_empty()).count() > 0,
        "some keys are missing"
    );
}

#[test]
fn reads_continue_during_flushes_and_compactions() {
    let t = TestDb::new(1000);
    let table =
        t.db.create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
            .unwrap();
    fill(&table, 2000, 100);
    let expected = rows(&table, &Scan::new());
    let reader = {
        let table = table.clone();
        let expected = expected.clone();
        std::thread::spawn(move || {
            for _ in 0..30 {
                assert_eq!(rows(&table, &Scan::new()), expected);
                assert_eq!(table.get(&Get::new("row001234")).unwrap().cells.len(), 1);
            }
        })
    };
    for _ in 0..5 {
        table.flush().unwrap();
        table.compact().unwrap();
        table.major_compact().unwrap();
    }
    reader.join().unwrap();
}

#[test]
fn dropping_a_table_or_family_deletes_its_files() {
    let t = TestDb::new(1000);
    let table =
        t.db.create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("f"))
                .family(FamilyDescriptor::new("g")),
        )
        .unwrap();
    table
        .put(&Put::new("r").add("f", "q", "1").add("g", "q", "2"))
        .unwrap();
    table.flush().unwrap();
    assert_eq!(hfiles(t.dir.path()).len(), 2);
    t.db.alter_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap();
    assert_eq!(hfiles(t.dir.path()).len(), 1);
    t.db.drop_table("t").unwrap();
    assert!(hfiles(t.dir.path()).is_empty());
}

/// A read jumps over the versions of a column it cannot return (HBase's seek
/// to the next column); what it returns must not change, whether the
/// versions sit in the memstore, in files or both, and whatever delete
/// markers lie among them.
#[test]
fn reads_skip_surplus_versions_of_a_column_without_changing_results() {
    let t = TestDb::new(1_000_000);
    let table =
        t.db.create_table(
            TableDescriptor::new("hot")
                .family(FamilyDescriptor::new("f").max_versions(3))
                .family(FamilyDescriptor::new("g")),
        )
        .unwrap();
    let value = |q: &str, ts: i64| format!("{q}@{ts}");
    // 400 versions of f:hot, half flushed; neighbours on both sides.
    for ts in 1..=400i64 {
        table
            .put(&Put::new("r").add_at("f", "hot", ts, value("hot", ts)))
            .unwrap();
        if ts == 200 {
            table.flush().unwrap();
        }
    }
    table
        .put(
            &Put::new("r")
                .add_at("f", "a", 7, value("a", 7))
                .add_at("f", "hot2", 9, value("hot2", 9))
                .add_at("g", "x", 11, value("x", 11)),
        )
        .unwrap();
    // Hides 400 exactly and everything at or below 150.
    table
        .delete(&Delete::new("r").column_version("f", "hot", 400))
        .unwrap();
    table
        .delete(&Delete::new("r").column_all_versions_up_to("f", "hot", 150))
        .unwrap();
    let read = |get: Get| -> Vec<(String, String, i64, String)> {
        strata_tests::cells(&table.get(&get).unwrap())
    };
    let cell = |f: &str, q: &str, ts: i64| (f.to_owned(), q.to_owned(), ts, value(q, ts));
    let check = || {
        // The window is the newest three timestamps (400 hidden keeps its place).
        assert_eq!(
            read(Get::new("r").all_versions()),
            [
                cell("f", "a", 7),
                cell("f", "hot", 399),
                cell("f", "hot", 398),
                cell("f", "hot2", 9),
                cell("g", "x", 11),
            ]
        );
        assert_eq!(
            read(Get::new("r")),
            [
                cell("f", "a", 7),
                cell("f", "hot", 399),
                cell("f", "hot2", 9),
                cell("g", "x", 11)
            ]
        );
        // A time range inside the surplus versions finds nothing of f:hot.
        assert_eq!(
            read(
                Get::new("r")
                    .family("f")
                    .time_range(100, 300)
                    .all_versions()
            ),
            Vec::<(String, String, i64, String)>::new()
        );
        assert_eq!(
            read(Get::new("r").column("f", "hot2")),
            [cell("f", "hot2", 9)]
        );
        let scanned: Vec<usize> = table
            .scan(&Scan::new().all_versions())
            .unwrap()
            .map(|r| r.unwrap().cells.len())
            .collect();
        assert_eq!(scanned, [5]);
    };
    check();
    table.flush().unwrap();
    check();
    table.major_compact().unwrap();
    check();
}

/// The empty qualifier holds a family's delete markers, so a read skips
/// its surplus versions only when no source holds such a marker: a
/// `DeleteFamily` older than the newest versions must still hide the other
/// columns' older cells.
#[test]
fn reads_skip_versions_of_the_empty_qualifier_only_without_family_markers() {
    let t = TestDb::new(1_000_000);
    let table =
        t.db.create_table(TableDescriptor::new("hot").family(FamilyDescriptor::new("f")))
            .unwrap();
    for ts in 1..=300i64 {
        table
            .put(&Put::new("r").add_at("f", "", ts, format!("v{ts}")))
            .unwrap();
    }
    table.put(&Put::new("r").add_at("f", "x", 5, "x5")).unwrap();
    let read = || strata_tests::cells(&table.get(&Get::new("r")).unwrap());
    let newest = ("f".to_owned(), String::new(), 300, "v300".to_owned());
    let x = ("f".to_owned(), "x".to_owned(), 5, "x5".to_owned());
    // No markers: the 299 surplus versions are skipped, x is still found.
    assert_eq!(read(), [newest.clone(), x]);
    // A family delete at 100 sorts after the newer versions of the empty
    // qualifier and hides x@5.
    table
        .delete(&Delete::new("r").family_up_to("f", 100))
        .unwrap();
    let only_newest = [newest];
    assert_eq!(read(), only_newest);
    table.flush().unwrap();
    assert_eq!(read(), only_newest);
    table.major_compact().unwrap();
    assert_eq!(read(), only_newest);
}

/// The versions a read skips can span many blocks of a file: the seek past
/// the column must land after them, not on the first cell of the next
/// block (a read that did spun forever). Small blocks, many versions, for a
/// named column and for the empty qualifier, in files and in a memstore.
#[test]
fn skipping_a_column_that_spans_many_blocks_ends_and_returns_each_cell_once() {
    let t = TestDb::new(1_000_000);
    let table =
        t.db.create_table(
            TableDescriptor::new("wide").family(FamilyDescriptor::new("f").block_size_bytes(1024)),
        )
        .unwrap();
    let value = |q: &str, ts: i64| format!("{q}@{ts:04}{}", "v".repeat(100));
    for ts in 1..=400i64 {
        table
            .put(&Put::new("r").add_at("f", "", ts, value("", ts)).add_at(
                "f",
                "q",
                ts,
                value("q", ts),
            ))
            .unwrap();
    }
    table
        .put(
            &Put::new("r")
                .add_at("f", "a", 7, value("a", 7))
                .add_at("f", "z", 9, value("z", 9)),
        )
        .unwrap();
    table
        .put(&Put::new("s").add_at("f", "q", 1, "next row"))
        .unwrap();
    let cell = |q: &str, ts: i64| ("f".to_owned(), q.to_owned(), ts, value(q, ts));
    let expected = [cell("", 400), cell("a", 7), cell("q", 400), cell("z", 9)];
    let check = || {
        assert_eq!(
            strata_tests::cells(&table.get(&Get::new("r")).unwrap()),
            expected
        );
        assert_eq!(
            strata_tests::cells(&table.get(&Get::new("r").column("f", "q")).unwrap()),
            [cell("q", 400)]
        );
        for reversed in [false, true] {
            let rows: Vec<(Vec<u8>, usize)> = table
                .scan(&Scan::new().reversed(reversed))
                .unwrap()
                .map(|r| {
                    let r = r.unwrap();
                    (r.row, r.cells.len())
                })
                .collect();
            let mut want = vec![(b"r".to_vec(), 4), (b"s".to_vec(), 1)];
            if reversed {
                want.reverse();
            }
            assert_eq!(rows, want, "reversed {reversed}");
        }
    };
    check();
    table.flush().unwrap();
    check();
    // Half in a file, half in the memstore.
    for ts in 401..=600i64 {
        table
            .put(&Put::new("r").add_at("f", "q", ts, value("q", ts)))
            .unwrap();
    }
    assert_eq!(
        strata_tests::cells(&table.get(&Get::new("r").column("f", "q")).unwrap()),
        [cell("q", 600)]
    );
}

/// Polls `done` every 10 ms for at most 10 s (the compaction checker runs in
/// the background); returns whether it became true.
fn eventually(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..1000 {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    done()
}

/// Options for the time-driven compaction tests: the checker every 10 ms, and
/// no compaction by file count (so only the checker's work changes files).
fn checked_often(clock: &std::sync::Arc<strata::ManualClock>) -> DbOptions {
    DbOptions {
        compaction_check_interval: Duration::from_millis(10),
        l0_compaction_trigger: 30,
        l0_slowdown_files: 40,
        l0_stop_files: 50,
        ..TestDb::options(clock)
    }
}

/// A database at 1_000_000 ms whose compaction checker runs often, with table
/// `t` of `family` under a 10 s TTL.
fn checked_ttl_table(family: FamilyDescriptor) -> (TestDb, Table) {
    let mut t = TestDb::new(1_000_000);
    t.reopen_with(checked_often(&t.clock));
    let table =
        t.db.create_table(TableDescriptor::new("t").family(family.ttl(Duration::from_secs(10))))
            .unwrap();
    (t, table)
}

/// A file whose newest cell outlived the family's TTL is dropped whole by
/// the compaction checker, without rewriting anything (RocksDB's FIFO/TTL
/// compaction, HBase's `hbase.store.delete.expired.storefile`); the other
/// files stay byte for byte, reads are unchanged, and the drop survives a
/// reopen.
#[test]
fn wholly_expired_files_are_dropped_whole_by_the_checker() {
    let (mut t, table) = checked_ttl_table(FamilyDescriptor::new("f").max_versions(3));
    // File A: puts and a delete marker, all at or before 1_000_000.
    for i in 0..50 {
        table
            .put(&Put::new(format!("a{i:02}")).add("f", "q", "old"))
            .unwrap();
    }
    table
        .delete(&Delete::new("a00").column_all_versions("f", "q"))
        .unwrap();
    table.flush().unwrap();
    let file_a = hfiles(t.dir.path());
    assert_eq!(file_a.len(), 1);
    // File B, 5 s later: one row with versions in both files.
    t.clock.advance(5_000);
    for i in 0..50 {
        table
            .put(&Put::new(format!("b{i:02}")).add("f", "q", "new"))
            .unwrap();
    }
    table.put(&Put::new("a01").add("f", "q", "newer")).unwrap();
    table.flush().unwrap();
    // File C, newer still, whose rows sort after B's: dropping A must leave
    // L0 newest first (C, B), not sorted by row.
    t.clock.advance(1_000);
    table.put(&Put::new("c00").add("f", "q", "newest")).unwrap();
    table.flush().unwrap();
    let before = strata_tests::files_with_bytes(&t.dir.path().join("data"));
    let file_b: Vec<PathBuf> = hfiles(t.dir.path())
        .into_iter()
        .filter(|p| !file_a.contains(p))
        .collect();
    // Nothing is expired yet: both files stay through several checks.
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(hfiles(t.dir.path()).len(), 3);
    // A's newest cell (1_000_000) is now older than now - TTL; B's is not.
    t.clock.set(1_010_001);
    let visible = rows(&table, &Scan::new().all_versions());
    assert!(
        eventually(|| hfiles(t.dir.path()) == file_b),
        "A is dropped"
    );
    assert_eq!(rows(&table, &Scan::new().all_versions()), visible);
    assert_eq!(visible.len(), 52, "a01, the b rows and c00");
    let after = strata_tests::files_with_bytes(&t.dir.path().join("data"));
    for kept in &file_b {
        assert_eq!(
            after.get(kept),
            before.get(kept),
            "B and C are not rewritten"
        );
    }
    // The newest version of a row still wins across the remaining files.
    table
        .put(&Put::new("c00").add("f", "q", "memstore"))
        .unwrap();
    table.flush().unwrap();
    assert_eq!(t.db.stats().compactions, 0, "nothing was rewritten");
    let visible = rows(&table, &Scan::new().all_versions());
    t.reopen_with(checked_often(&t.clock));
    let table = t.db.table("t").unwrap();
    assert_eq!(hfiles(t.dir.path()).len(), 3);
    assert!(
        file_b
            .iter()
            .all(|kept| hfiles(t.dir.path()).contains(kept))
    );
    assert_eq!(rows(&table, &Scan::new().all_versions()), visible);
}

/// A family with `MIN_VERSIONS` keeps its wholly expired files: an expired
/// cell may still be among the newest versions of its column, which reads
/// return (HBase's `HStore` skips expired-file removal when
/// `minVersions > 0`).
#[test]
fn wholly_expired_files_stay_in_a_family_with_min_versions() {
    let (t, table) = checked_ttl_table(FamilyDescriptor::new("f").max_versions(2).min_versions(1));
    table.put(&Put::new("a").add("f", "q", "old")).unwrap();
    table.flush().unwrap();
    t.clock.advance(5_000);
    table.put(&Put::new("b").add("f", "q", "new")).unwrap();
    table.flush().unwrap();
    let files = hfiles(t.dir.path());
    assert_eq!(files.len(), 2);
    // The first file's newest cell is expired; the checker runs every 10 ms.
    t.clock.set(1_010_001);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(hfiles(t.dir.path()), files, "no file was dropped");
    let got = table.get(&Get::new("a")).unwrap();
    assert_eq!(got.cells.len(), 1, "the expired newest version is returned");
    assert_eq!(&got.cells[0].value[..], b"old");
}

/// The wall clock in milliseconds: the periodic major compaction tests start
/// their manual clock there, because a file's age is measured from its
/// modification time, which the file system sets from the real clock.
fn real_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// HBase's `hbase.hregion.majorcompaction`: a store whose oldest file is older
/// than the period (within the jitter) is major-compacted by the checker; the
/// lone file that results is not rewritten again; a zero period turns it off.
#[test]
fn stores_are_major_compacted_once_their_period_passes() {
    let mut t = TestDb::new(real_now_ms());
    let hour = Duration::from_secs(3600);
    let clock = t.clock.clone();
    let options = |period: Duration| DbOptions {
        major_compaction_period: period,
        major_compaction_jitter: 0.5,
        ..checked_often(&clock)
    };
    t.reopen_with(options(hour));
    let table =
        t.db.create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
            .unwrap();
    for round in 0..3 {
        table
            .put(&Put::new(format!("r{round}")).add("f", "q", "v"))
            .unwrap();
        table
            .put(&Put::new("shared").add("f", "q", format!("v{round}")))
            .unwrap();
        table.flush().unwrap();
    }
    let visible = rows(&table, &Scan::new().all_versions());
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(hfiles(t.dir.path()).len(), 3, "not due yet");
    // 25 minutes: below the shortest jittered period (half an hour).
    t.clock.advance(25 * 60 * 1000);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(hfiles(t.dir.path()).len(), 3, "still within the period");

    // With the period off nothing happens, however old the files are.
    t.reopen_with(options(Duration::ZERO));
    t.clock.advance(10 * 3600 * 1000);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        hfiles(t.dir.path()).len(),
        3,
        "periodic major compaction is off"
    );

    // Past the longest jittered period (1.5 h): one major compaction.
    t.reopen_with(options(hour));
    let table = t.db.table("t").unwrap();
    assert!(eventually(|| hfiles(t.dir.path()).len() == 1));
    assert_eq!(t.db.stats().compactions, 1);
    assert_eq!(rows(&table, &Scan::new().all_versions()), visible);
    // The clock still says the store is old (its new file's modification time
    // is the real one), but a lone compacted file with nothing expired is not
    // rewritten again.
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(t.db.stats().compactions, 1);
}

/// HBase's family `CONFIGURATION => {'hbase.hregion.majorcompaction' => MS}`:
/// a family's own period wins over the database's (here off), survives a
/// reopen, and compacts that family's store alone.
#[test]
fn a_familys_own_major_compaction_period_compacts_that_family_alone() {
    let mut t = TestDb::new(real_now_ms());
    let options = DbOptions {
        major_compaction_period: Duration::ZERO,
        ..checked_often(&t.clock)
    };
    t.reopen_with(options.clone());
    let hour = Duration::from_secs(3600);
    let table =
        t.db.create_table(
            TableDescriptor::new("t")
                .family(
                    FamilyDescriptor::new("daily")
                        .major_compaction_period(Some(hour))
                        .major_compaction_jitter(Some(0.0)),
                )
                .family(FamilyDescriptor::new("plain")),
        )
        .unwrap();
    for round in 0..3 {
        let row = format!("r{round}");
        table
            .put(&Put::new(row).add("daily", "q", "v").add("plain", "q", "v"))
            .unwrap();
        table.flush().unwrap();
    }
    let files = |table: &Table| -> usize {
        table
            .regions()
            .unwrap()
            .iter()
            .map(|region| region.files_per_level.iter().sum::<usize>())
            .sum()
    };
    assert_eq!(files(&table), 6);
    let visible = rows(&table, &Scan::new().all_versions());
    t.reopen_with(options);
    let table = t.db.table("t").unwrap();
    let descriptor = table.descriptor().unwrap();
    let daily = &descriptor.families()[0];
    assert_eq!(daily.get_major_compaction_period(), Some(hour));
    assert_eq!(daily.get_major_compaction_jitter(), Some(0.0));
    // 59 minutes: not yet due (no jitter).
    t.clock.advance(59 * 60 * 1000);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(files(&table), 6, "not due yet");
    t.clock.advance(2 * 60 * 1000);
    assert!(
        eventually(|| files(&table) == 4),
        "daily's three files became one"
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(files(&table), 4, "plain follows the database's period: off");
    assert_eq!(t.db.stats().compactions, 1);
    assert_eq!(rows(&table, &Scan::new().all_versions()), visible);
}

/// A family's jitter outside 0.0..=1.0 is refused when the table is created.
#[test]
fn a_familys_major_compaction_jitter_is_checked() {
    let t = TestDb::new(1_000_000);
    let err =
        t.db.create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("f").major_compaction_jitter(Some(-0.1))),
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOption { name, .. } if *name == "hbase.hregion.majorcompaction.jitter"),
        "{err:?}"
    );
    assert!(t.db.table("t").is_err(), "nothing was created");
}

#[test]
fn major_compaction_jitter_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        major_compaction_jitter: 1.5,
        ..DbOptions::default()
    };
    match Db::open(dir.path(), options) {
        Err(Error::InvalidOption { name, reason }) => {
            assert_eq!(name, "major_compaction_jitter");
            assert!(reason.contains("1.5"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!dir.path().join("CURRENT").exists(), "nothing was created");
}
