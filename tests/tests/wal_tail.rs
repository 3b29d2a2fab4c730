//! What replay does with a damaged WAL (`docs/format.md`, "Reading the log
//! back"): an incomplete last group of the newest segment, which only a crash
//! during its write leaves, is cut; any other damage (a damaged record, a
//! truncated segment, a damaged header) is a corruption error naming the file
//! and offset, never a silent loss of acknowledged writes. Point-in-time
//! recovery is the operator's way to open anyway.
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::os::unix::fs::FileExt;
use std::path::Path;

use strata::inspect::{WalSegmentEnd, wal_segments};
use strata::{
    Db, DbOptions, Error, FamilyDescriptor, Get, Put, Scan, TableDescriptor, WalRecovery,
};
use strata_tests::crashed_copy;

/// Options that leave data in the WAL at close (as a crash would), which is
/// what these tests damage.
fn no_flush() -> DbOptions {
    DbOptions {
        flush_on_close: false,
        ..DbOptions::default()
    }
}

fn point_in_time() -> DbOptions {
    DbOptions {
        wal_recovery: WalRecovery::PointInTime,
        ..no_flush()
    }
}

fn table(db: &Db) -> strata::Table {
    match db.table("t") {
        Ok(t) => t,
        Err(_) => db
            .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
            .unwrap(),
    }
}

/// Writes `rows` acknowledged rows (one WAL record each, SyncWal).
fn put_rows(db: &Db, first: usize, rows: usize) {
    let table = table(db);
    for i in first..first + rows {
        table
            .put(&Put::new(format!("row{i:03}")).add("f", "q", format!("value{i}")))
            .unwrap();
    }
}

/// Writes `rows` rows and closes the database cleanly (its segment sealed).
fn write_rows(dir: &Path, first: usize, rows: usize) {
    let db = Db::open(dir, no_flush()).unwrap();
    put_rows(&db, first, rows);
    db.close().unwrap();
}

fn rows_in(db: &Db) -> Vec<String> {
    db.table("t")
        .unwrap()
        .scan(&Scan::new())
        .unwrap()
        .map(|r| String::from_utf8(r.unwrap().row).unwrap())
        .collect()
}

fn rw(path: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap()
}

fn expect_corruption(dir: &Path, file: &Path) -> u64 {
    match Db::open(dir, no_flush()) {
        Err(Error::Corruption {
            file: damaged,
            offset,
            ..
        }) => {
            assert_eq!(damaged, file);
            offset
        }
        other => panic!("expected corruption of {}, got {other:?}", file.display()),
    }
}

#[test]
fn an_incomplete_last_group_left_by_a_crash_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), no_flush()).unwrap();
    put_rows(&db, 0, 10);
    let crashed = crashed_copy(db, dir.path());
    let segment = wal_segments(crashed.path()).unwrap().remove(0);
    assert_eq!(
        segment.end,
        WalSegmentEnd::Clean,
        "unsealed, every group whole"
    );
    // A crash while a group was being written: part of its first frame
    // reached the preallocated space after the last complete group.
    let last = segment.records.last().unwrap();
    let group_end = last.offset + last.frame_bytes + 25;
    let torn: Vec<u8> = (0..200u32)
        .map(|i| (i.wrapping_mul(97) % 251) as u8 | 1)
        .collect();
    rw(&segment.path).write_all_at(&torn, group_end).unwrap();
    assert_eq!(
        wal_segments(crashed.path()).unwrap()[0].end,
        WalSegmentEnd::TornTail { offset: group_end }
    );
    let db = Db::open(crashed.path(), no_flush()).unwrap();
    assert_eq!(
        db.recovery_report().torn_tail,
        Some((segment.path.clone(), group_end))
    );
    assert_eq!(rows_in(&db).len(), 10, "every acknowledged row is there");
    // Writing on continues normally and survives the next reopen; the cut
    // segment was sealed.
    put_rows(&db, 10, 1);
    db.close().unwrap();
    assert_eq!(
        wal_segments(crashed.path()).unwrap()[0].end,
        WalSegmentEnd::Sealed
    );
    let db = Db::open(crashed.path(), no_flush()).unwrap();
    assert_eq!(rows_in(&db).len(), 11);
    assert_eq!(db.recovery_report().torn_tail, None);
}

/// Issue 12, item 2: damage at the end of the newest segment, on an
/// acknowledged put, refuses to open instead of dropping the put.
#[test]
fn damage_to_the_last_acknowledged_record_is_corruption() {
    for crash in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), no_flush()).unwrap();
        put_rows(&db, 0, 10);
        let copy;
        let root = if crash {
            copy = crashed_copy(db, dir.path());
            copy.path()
        } else {
            db.close().unwrap();
            dir.path()
        };
        let segment = wal_segments(root).unwrap().remove(0);
        let last = segment.records.last().unwrap().clone();
        let file = rw(&segment.path);
        let original = std::fs::read(&segment.path).unwrap();
        // Zeroing the record's first bytes, flipping one of its bytes, and
        // cutting the file at its start or inside it.
        let damages: Vec<Box<dyn Fn()>> = vec![
            Box::new(|| file.write_all_at(&[0u8; 16], last.offset).unwrap()),
            Box::new(|| file.write_all_at(&[0x5A], last.offset + 20).unwrap()),
            Box::new(|| file.set_len(last.offset).unwrap()),
            Box::new(|| file.set_len(last.offset + 7).unwrap()),
        ];
        for (index, damage) in damages.iter().enumerate() {
            damage();
            let offset = expect_corruption(root, &segment.path);
            assert!(
                offset >= last.offset,
                "crash {crash}, damage {index}: offset {offset}"
            );
            assert!(
                wal_segments(root).unwrap()[0].end.is_damage(),
                "crash {crash}, damage {index}: inspection says damaged too"
            );
            file.set_len(0).unwrap();
            file.write_all_at(&original, 0).unwrap();
        }
        let db = Db::open(root, no_flush()).unwrap();
        assert_eq!(rows_in(&db).len(), 10, "undamaged, every row is there");
    }
}

#[test]
fn a_flipped_bit_in_a_middle_record_is_reported_with_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), 0, 10);
    let segment = wal_segments(dir.path()).unwrap().remove(0);
    let middle = segment.records[5].clone();
    for byte_in_record in [1, 9, 30] {
        let file = rw(&segment.path);
        let at = middle.offset + byte_in_record;
        let mut b = [0u8];
        file.read_exact_at(&mut b, at).unwrap();
        file.write_all_at(&[b[0] ^ 0x20], at).unwrap();
        assert_eq!(expect_corruption(dir.path(), &segment.path), middle.offset);
        // Undo, and the database opens with every row.
        file.write_all_at(&b, at).unwrap();
    }
    let db = Db::open(dir.path(), no_flush()).unwrap();
    assert_eq!(rows_in(&db).len(), 10);
}

/// Issue 12, item 3: an older segment cut exactly at a record boundary.
#[test]
fn a_truncated_older_segment_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), 0, 5);
    write_rows(dir.path(), 5, 5);
    let segments = wal_segments(dir.path()).unwrap();
    assert_eq!(segments.len(), 2, "one segment per session");
    let older = &segments[0];
    let last = older.records.last().unwrap();
    // At the start of its last record, just after it (before its group
    // commit record), inside it, and just before the seal.
    for cut in [
        last.offset,
        last.offset + last.frame_bytes,
        last.offset + last.frame_bytes - 1,
        older.file_bytes - 37,
    ] {
        let original = std::fs::read(&older.path).unwrap();
        rw(&older.path).set_len(cut).unwrap();
        expect_corruption(dir.path(), &older.path);
        std::fs::write(&older.path, original).unwrap();
    }
    let db = Db::open(dir.path(), no_flush()).unwrap();
    assert_eq!(rows_in(&db).len(), 10);
}

#[test]
fn a_missing_segment_between_two_others_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    for session in 0..3 {
        write_rows(dir.path(), session * 3, 3);
    }
    let segments = wal_segments(dir.path()).unwrap();
    assert_eq!(segments.len(), 3);
    std::fs::remove_file(&segments[1].path).unwrap();
    expect_corruption(dir.path(), &segments[2].path);
}

/// Issue 12, item 4: the newest segment cut into its header is not deleted
/// and the database does not open without it.
#[test]
fn a_damaged_segment_header_is_corruption_and_the_segment_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), 0, 3);
    let segment = wal_segments(dir.path()).unwrap().remove(0);
    let original = std::fs::read(&segment.path).unwrap();
    for len in [0, 10, 31] {
        rw(&segment.path).set_len(len).unwrap();
        assert_eq!(expect_corruption(dir.path(), &segment.path), 0);
        assert!(segment.path.exists(), "the damaged segment is kept");
        std::fs::write(&segment.path, &original).unwrap();
    }
    rw(&segment.path).write_all_at(b"X", 0).unwrap();
    assert_eq!(expect_corruption(dir.path(), &segment.path), 0);
    std::fs::write(&segment.path, &original).unwrap();
    // A segment whose creation a crash interrupted never got its name; the
    // next writable open removes it.
    let creating = segment.path.with_file_name("000000000002.wal.creating");
    std::fs::write(&creating, vec![0u8; 4096]).unwrap();
    let db = Db::open(dir.path(), no_flush()).unwrap();
    assert_eq!(rows_in(&db).len(), 3);
    assert!(!creating.exists());
}

/// The operator's way out: point-in-time recovery replays what precedes the
/// damage, keeps copies of what it cuts or sets aside, and says so.
#[test]
fn point_in_time_recovery_keeps_what_precedes_the_damage() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), 0, 5);
    write_rows(dir.path(), 5, 5);
    write_rows(dir.path(), 10, 5);
    let segments = wal_segments(dir.path()).unwrap();
    let damaged = &segments[1];
    let at = damaged.records[2].offset;
    rw(&damaged.path).write_all_at(&[0xFF; 4], at + 3).unwrap();
    expect_corruption(dir.path(), &damaged.path);

    let db = Db::open(dir.path(), point_in_time()).unwrap();
    let report = db.recovery_report().clone();
    assert_eq!(report.wal_damage, Some((damaged.path.clone(), at)));
    assert_eq!(report.wal_set_aside.len(), 2, "{report:?}");
    for copy in &report.wal_set_aside {
        assert!(copy.starts_with(dir.path().join("wal").join("damaged")));
        assert!(copy.exists());
    }
    assert_eq!(
        rows_in(&db),
        (0..7).map(|i| format!("row{i:03}")).collect::<Vec<_>>(),
        "the rows before the damaged record, nothing after it"
    );
    put_rows(&db, 20, 1);
    db.close().unwrap();
    // The log is whole again: a strict open works.
    let db = Db::open(dir.path(), no_flush()).unwrap();
    assert_eq!(rows_in(&db).len(), 8);
    assert!(
        db.table("t")
            .unwrap()
            .get(&Get::new("row020"))
            .unwrap()
            .value("f", "q")
            .is_some()
    );
}

#[test]
fn segments_are_sealed_at_close_and_empty_ones_removed() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), 0, 3);
    for _ in 0..3 {
        // Sessions that write nothing leave no segment behind.
        Db::open(dir.path(), no_flush()).unwrap().close().unwrap();
    }
    let segments = wal_segments(dir.path()).unwrap();
    assert_eq!(segments.len(), 1);
    let last = segments[0].records.last().unwrap();
    assert_eq!(
        segments[0].file_bytes,
        last.offset + last.frame_bytes + 25 + 37,
        "the last group's commit record, the seal, no preallocated tail"
    );
    assert_eq!(segments[0].end, WalSegmentEnd::Sealed);
}
