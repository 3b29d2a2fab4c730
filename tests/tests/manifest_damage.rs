//! A damaged manifest is corruption, never a silent rollback that then deletes
//! the files of live tables as orphans (issue 12, item 1); a read-only open
//! changes nothing on disk.
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::path::{Path, PathBuf};

use strata::{Db, DbOptions, Error, FamilyDescriptor, Get, Put, TableDescriptor};
use strata_tests::files_with_bytes;

fn manifest_path(dir: &Path) -> PathBuf {
    let current = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    dir.join(current.trim_end())
}

/// Tables `a` and `b`, each with one flushed row, closed, reopened once (the
/// manifest is rewritten as a snapshot whose last edit describes `b`), closed.
fn two_tables(dir: &Path) {
    let db = Db::open_default(dir).unwrap();
    for name in ["a", "b"] {
        let table = db
            .create_table(TableDescriptor::new(name).family(FamilyDescriptor::new("f")))
            .unwrap();
        table.put(&Put::new("r").add("f", "q", name)).unwrap();
    }
    db.close().unwrap();
    Db::open_default(dir).unwrap().close().unwrap();
}

#[test]
fn a_flipped_last_manifest_byte_refuses_to_open_and_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    two_tables(dir.path());
    let path = manifest_path(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let before = files_with_bytes(dir.path());
    match Db::open_default(dir.path()) {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, path),
        other => panic!("expected corruption of the manifest, got {other:?}"),
    }
    assert_eq!(
        files_with_bytes(dir.path()),
        before,
        "a refused open leaves every file, the HFiles of b too"
    );
    // Repaired, both tables are there.
    bytes[last] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    for name in ["a", "b"] {
        let row = db.table(name).unwrap().get(&Get::new("r")).unwrap();
        assert_eq!(row.value("f", "q"), Some(name.as_bytes()));
    }
}

#[test]
fn a_manifest_truncated_anywhere_after_its_header_refuses_to_open() {
    let dir = tempfile::tempdir().unwrap();
    two_tables(dir.path());
    let path = manifest_path(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    let before = files_with_bytes(dir.path());
    for len in (32..bytes.len()).step_by(7).chain([bytes.len() - 1]) {
        std::fs::write(&path, &bytes[..len]).unwrap();
        assert!(
            matches!(Db::open_default(dir.path()), Err(Error::Corruption { .. })),
            "truncated to {len} of {} bytes",
            bytes.len()
        );
    }
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(files_with_bytes(dir.path()), before);
}

#[test]
fn a_lost_current_refuses_to_open() {
    let dir = tempfile::tempdir().unwrap();
    two_tables(dir.path());
    std::fs::remove_file(dir.path().join("CURRENT")).unwrap();
    let before = files_with_bytes(dir.path());
    assert!(matches!(
        Db::open_default(dir.path()),
        Err(Error::Corruption { .. })
    ));
    assert_eq!(
        files_with_bytes(dir.path()),
        before,
        "no HFile was taken for an orphan"
    );
}

#[test]
fn a_read_only_open_changes_nothing_and_refuses_changes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        DbOptions {
            flush_on_close: false,
            ..DbOptions::default()
        },
    )
    .unwrap();
    let table = db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap();
    table.put(&Put::new("flushed").add("f", "q", "1")).unwrap();
    table.flush().unwrap();
    table.put(&Put::new("logged").add("f", "q", "2")).unwrap();
    db.close().unwrap();
    // Something for an orphan clean-up to delete, were it to run.
    let stray = dir.path().join("data").join("000000009999.hfile");
    std::fs::write(&stray, b"left by a crashed flush").unwrap();

    let before = files_with_bytes(dir.path());
    let read_only = DbOptions {
        read_only: true,
        ..DbOptions::default()
    };
    let db = Db::open(dir.path(), read_only.clone()).unwrap();
    // A second read-only handle may share the directory.
    let other = Db::open(dir.path(), read_only).unwrap();
    let table = db.table("t").unwrap();
    for (row, value) in [("flushed", "1"), ("logged", "2")] {
        let got = table.get(&Get::new(row)).unwrap();
        assert_eq!(got.value("f", "q"), Some(value.as_bytes()), "{row}");
    }
    assert!(matches!(
        table.put(&Put::new("x").add("f", "q", "v")),
        Err(Error::ReadOnly)
    ));
    assert!(matches!(table.flush(), Err(Error::ReadOnly)));
    assert!(matches!(table.compact(), Err(Error::ReadOnly)));
    assert!(matches!(
        db.create_table(TableDescriptor::new("u").family(FamilyDescriptor::new("f"))),
        Err(Error::ReadOnly)
    ));
    assert!(matches!(db.drop_table("t"), Err(Error::ReadOnly)));
    assert!(matches!(db.sync_wal(), Err(Error::ReadOnly)));
    db.close().unwrap();
    other.close().unwrap();
    assert_eq!(
        files_with_bytes(dir.path()),
        before,
        "nothing on disk changed"
    );
    // A writer excludes readers and the other way round.
    let writer = Db::open_default(dir.path()).unwrap();
    assert!(matches!(
        Db::open(
            dir.path(),
            DbOptions {
                read_only: true,
                ..DbOptions::default()
            }
        ),
        Err(Error::DatabaseLocked { .. })
    ));
    assert!(!stray.exists(), "a writable open deletes the orphan");
    writer.close().unwrap();
}
