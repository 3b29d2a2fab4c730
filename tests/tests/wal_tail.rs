//! What replay does with a damaged WAL: a torn tail of the newest segment is
//! cut cleanly; damage anywhere else is a corruption error naming the file
//! and the offset of the damaged record.
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::os::unix::fs::FileExt;
use std::path::Path;

use strata::inspect::{WalSegmentEnd, wal_segments};
use strata::{Db, DbOptions, Error, FamilyDescriptor, Get, Put, Scan, TableDescriptor};

/// Options that leave data in the WAL at close (as a crash would), which is
/// what these tests damage.
fn no_flush() -> DbOptions {
    DbOptions {
        flush_on_close: false,
        ..DbOptions::default()
    }
}

/// Writes `rows` rows (one WAL record each) and closes the database.
fn write_rows(dir: &Path, first: usize, rows: usize) {
    let db = Db::open(dir, no_flush()).unwrap();
    let table = match db.table("t") {
        Ok(t) => t,
        Err(_) => db
            .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
            .unwrap(),
    };
    for i in first..first + rows {
        table
            .put(&Put::new(format!("row{i:03}")).add("f", "q", format!("value{i}")))
            .unwrap();
    }
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

#[test]
fn a_truncated_last_record_is_cut_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), 0, 10);
    let segments = wal_segments(dir.path()).unwrap();
    assert_eq!(segments.len(), 1);
    let last = segments[0].records.last().unwrap().clone();
    assert_eq!(segments[0].records.len(), 10);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&segments[0].path)
        .unwrap();
    file.set_len(last.offset + last.frame_bytes - 3).unwrap();
    assert_eq!(
        wal_segments(dir.path()).unwrap()[0].end,
        WalSegmentEnd::TornTail {
            offset: last.offset
        }
    );

    let db = Db::open(dir.path(), no_flush()).unwrap();
    assert_eq!(
        db.recovery_report().torn_tail,
        Some((segments[0].path.clone(), last.offset))
    );
    assert_eq!(
        rows_in(&db).len(),
        9,
        "the torn record is gone, the rest is there"
    );
    assert!(
        db.table("t")
            .unwrap()
            .get(&Get::new("row009"))
            .unwrap()
            .is_empty()
    );
    // Writing on continues normally and survives the next reopen.
    db.table("t")
        .unwrap()
        .put(&Put::new("row009").add("f", "q", "again"))
        .unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), no_flush()).unwrap();
    assert_eq!(rows_in(&db).len(), 10);
    assert_eq!(db.recovery_report().torn_tail, None);
}

#[test]
fn garbage_after_the_tail_is_cut_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), 0, 10);
    let segment = wal_segments(dir.path()).unwrap().remove(0);
    let end = segment.file_bytes;
    let garbage: Vec<u8> = (0..200u32)
        .map(|i| (i.wrapping_mul(97) % 251) as u8 | 1)
        .collect();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&segment.path)
        .unwrap();
    file.write_all_at(&garbage, end).unwrap();
    let db = Db::open(dir.path(), no_flush()).unwrap();
    assert_eq!(
        db.recovery_report().torn_tail,
        Some((segment.path.clone(), end))
    );
    assert_eq!(rows_in(&db).len(), 10);
}

#[test]
fn a_flipped_bit_in_a_middle_record_is_reported_with_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), 0, 10);
    let segment = wal_segments(dir.path()).unwrap().remove(0);
    let middle = segment.records[5].clone();
    for byte_in_record in [1, 9, 30] {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&segment.path)
            .unwrap();
        let at = middle.offset + byte_in_record;
        let mut b = [0u8];
        file.read_exact_at(&mut b, at).unwrap();
        file.write_all_at(&[b[0] ^ 0x20], at).unwrap();
        match Db::open(dir.path(), no_flush()) {
            Err(Error::Corruption {
                file,
                offset,
                reason,
            }) => {
                assert_eq!(file, segment.path);
                assert_eq!(offset, middle.offset, "{reason}");
            }
            other => panic!("expected corruption, got {other:?}"),
        }
        // Undo, and the database opens with every row.
        file.write_all_at(&b, at).unwrap();
    }
    let db = Db::open(dir.path(), no_flush()).unwrap();
    assert_eq!(rows_in(&db).len(), 10);
}

#[test]
fn damage_at_the_end_of_an_older_segment_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), 0, 5);
    write_rows(dir.path(), 5, 5);
    let segments = wal_segments(dir.path()).unwrap();
    assert_eq!(segments.len(), 2, "one segment per session");
    let older = &segments[0];
    let last = older.records.last().unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&older.path)
        .unwrap();
    file.set_len(last.offset + last.frame_bytes - 1).unwrap();
    match Db::open(dir.path(), no_flush()) {
        Err(Error::Corruption { file, offset, .. }) => {
            assert_eq!(file, older.path);
            assert_eq!(offset, last.offset);
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn a_damaged_segment_header_is_corruption_unless_the_segment_never_held_a_record() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), 0, 3);
    let segment = wal_segments(dir.path()).unwrap().remove(0);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&segment.path)
        .unwrap();
    file.write_all_at(b"X", 0).unwrap();
    assert!(matches!(
        Db::open(dir.path(), no_flush()),
        Err(Error::Corruption { offset: 0, .. })
    ));
    file.write_all_at(b"S", 0).unwrap();
    // A newest segment whose creation was cut short (no header, only zeros)
    // is dropped: it never held a record.
    let empty = segment.path.with_file_name("000000000099.wal");
    std::fs::write(&empty, vec![0u8; 4096]).unwrap();
    let db = Db::open(dir.path(), no_flush()).unwrap();
    assert_eq!(rows_in(&db).len(), 3);
    assert!(!empty.exists());
}

#[test]
fn segments_are_trimmed_and_empty_ones_removed() {
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
        last.offset + last.frame_bytes,
        "no preallocated tail after close"
    );
    assert_eq!(segments[0].end, WalSegmentEnd::Clean);
}
