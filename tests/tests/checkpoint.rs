//! Checkpoints (`Db::checkpoint`): a copy made under concurrent writers opens
//! and holds exactly the writes up to its sequence; bad targets are refused
//! with nothing left behind.
#![cfg(test)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use strata::{
    Db, DbOptions, Delete, Durability, Error, FamilyDescriptor, Get, Mutation, PreSplit, Put, Scan,
    TableDescriptor,
};

/// Writers that run during the checkpoint.
const WRITERS: u64 = 4;
/// Each writer stops after this many puts, or after `WRITE_TIME`.
const MAX_PUTS_PER_WRITER: u64 = 200_000;
const WRITE_TIME: Duration = Duration::from_secs(20);

fn row(writer: u64, i: u64) -> String {
    format!("{writer}-{i:08}")
}

fn busy_options() -> DbOptions {
    DbOptions {
        l0_compaction_trigger: 2,
        level_base_bytes: 256 * 1024,
        target_file_bytes: 128 * 1024,
        wal_segment_bytes: 256 * 1024,
        ..DbOptions::default()
    }
}

fn table(name: &str) -> TableDescriptor {
    TableDescriptor::new(name)
        .family(FamilyDescriptor::new("f"))
        .pre_split(PreSplit::Keys(vec![b"2".to_vec()]))
        .memstore_flush_size_bytes(64 * 1024)
}

/// The row keys of table `name`, in order.
fn row_keys(db: &Db, name: &str) -> Vec<Vec<u8>> {
    db.table(name)
        .unwrap()
        .scan(&Scan::new())
        .unwrap()
        .map(|r| r.unwrap().row)
        .collect()
}

/// Rows of writer `w` in the copy: must be `0..n` for some n (a prefix).
fn prefix_len(db: &Db, writer: u64) -> u64 {
    let table = db.table("t").unwrap();
    let start = format!("{writer}-");
    let stop = format!("{writer}.");
    let rows: Vec<Vec<u8>> = table
        .scan(&Scan::new().start(start.as_bytes()).stop(stop.as_bytes()))
        .unwrap()
        .map(|r| r.unwrap().row)
        .collect();
    for (i, got) in rows.iter().enumerate() {
        assert_eq!(
            got,
            row(writer, i as u64).as_bytes(),
            "writer {writer}'s rows in the copy have a hole before row {i}"
        );
    }
    rows.len() as u64
}

#[test]
fn a_checkpoint_under_writers_holds_exactly_the_writes_up_to_its_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), busy_options()).unwrap();
    db.create_table(table("t")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // Per writer: puts acknowledged so far.
    let acknowledged: Arc<Vec<AtomicU64>> =
        Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (db, stop, acknowledged) = (db.clone(), stop.clone(), acknowledged.clone());
            std::thread::spawn(move || {
                let table = db.table("t").unwrap();
                let durability = if w % 2 == 0 {
                    Durability::SyncWal
                } else {
                    Durability::AsyncWal
                };
                let deadline = Instant::now() + WRITE_TIME;
                for i in 0..MAX_PUTS_PER_WRITER {
                    if stop.load(Ordering::Acquire) || Instant::now() > deadline {
                        break;
                    }
                    let put = Put::new(row(w, i))
                        .add("f", "q", vec![b'v'; 200])
                        .durability(durability);
                    table.put(&put).unwrap();
                    acknowledged[w as usize].store(i + 1, Ordering::Release);
                }
            })
        })
        .collect();
    // Let the writers flush and compact for a while first.
    let deadline = Instant::now() + Duration::from_secs(10);
    while db.stats().flushes < 4 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let before: Vec<u64> = acknowledged
        .iter()
        .map(|a| a.load(Ordering::Acquire))
        .collect();
    let copy_dir = tempfile::tempdir().unwrap();
    let target = copy_dir.path().join("copy");
    let report = db.checkpoint(&target).unwrap();
    let after: Vec<u64> = acknowledged
        .iter()
        .map(|a| a.load(Ordering::Acquire))
        .collect();
    stop.store(true, Ordering::Release);
    for w in writers {
        w.join().unwrap();
    }
    assert!(report.hfiles_linked > 0, "{report:?}");
    assert!(!copy_dir.path().join("copy.tmp").exists());

    let copy = Db::open(&target, DbOptions::default()).unwrap();
    let mut total = 0;
    for w in 0..WRITERS {
        let n = prefix_len(&copy, w);
        // Every write acknowledged before the call is in; a write begun after
        // it returned (the one after the last acknowledged then, +1 in flight) is not.
        assert!(
            n >= before[w as usize],
            "writer {w}: {n} < {}",
            before[w as usize]
        );
        assert!(
            n <= after[w as usize] + 1,
            "writer {w}: {n} > {} + 1",
            after[w as usize]
        );
        total += n;
    }
    // Every sequence is one put of its own row: the copy holds exactly
    // sequences 1..=S.
    assert_eq!(total, report.sequence, "{report:?}");
    // The copy's sequences go on from the checkpoint's: it takes writes.
    let table = copy.table("t").unwrap();
    table.put(&Put::new("after").add("f", "q", "x")).unwrap();
    copy.close().unwrap();
    let copy = Db::open(&target, DbOptions::default()).unwrap();
    let table = copy.table("t").unwrap();
    assert_eq!(table.scan(&Scan::new()).unwrap().count() as u64, total + 1);
    assert!(!table.get(&Get::new("after")).unwrap().cells.is_empty());
    // The source is unchanged by it, and its own writes were all kept.
    drop(copy);
    db.close().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    for w in 0..WRITERS {
        assert!(prefix_len(&db, w) >= after[w as usize]);
    }
}

#[test]
fn a_checkpoint_holds_unflushed_writes_and_the_copy_is_independent() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    let t = db.create_table(table("t")).unwrap();
    t.put(&Put::new("0-flushed").add("f", "q", "1")).unwrap();
    db.flush().unwrap();
    t.put(&Put::new("0-logged").add("f", "q", "2")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let report = db.checkpoint(out.path().join("c")).unwrap();
    assert_eq!(
        (report.hfiles_linked, report.wal_mutations),
        (1, 1),
        "{report:?}"
    );
    t.put(&Put::new("0-later").add("f", "q", "3")).unwrap();
    // A compaction and drop on the source do not reach the copy's files.
    db.drop_table("t").unwrap();
    db.close().unwrap();
    let copy = Db::open(out.path().join("c"), DbOptions::default()).unwrap();
    let rows = row_keys(&copy, "t");
    assert_eq!(rows, vec![b"0-flushed".to_vec(), b"0-logged".to_vec()]);
}

#[test]
fn a_checkpoint_copies_a_logged_multi_row_mutation_whole() {
    // A multi-row mutation is one WAL record holding several rows; the
    // checkpoint's log copy keeps or leaves that record whole.
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    let t = db.create_table(table("t")).unwrap();
    t.put(&Put::new("0-gone").add("f", "q", "0")).unwrap();
    t.mutate_rows(&[
        Mutation::Put(Put::new("0-a").add("f", "q", "1")),
        Mutation::Put(Put::new("0-b").add("f", "q", "2")),
        Mutation::Delete(Delete::new("0-gone")),
    ])
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let report = db.checkpoint(out.path().join("c")).unwrap();
    assert_eq!(report.wal_mutations, 2, "{report:?}");
    db.close().unwrap();
    let copy = Db::open(out.path().join("c"), DbOptions::default()).unwrap();
    let rows = row_keys(&copy, "t");
    assert_eq!(rows, vec![b"0-a".to_vec(), b"0-b".to_vec()]);
}

#[test]
fn a_checkpoint_on_another_file_system_copies_the_files() {
    use std::os::unix::fs::MetadataExt;
    let shm = std::path::Path::new("/dev/shm");
    let dir = tempfile::tempdir().unwrap();
    let other_device = shm
        .metadata()
        .is_ok_and(|m| m.dev() != dir.path().metadata().unwrap().dev());
    if !other_device {
        // Nothing to test here: hard links work between the two.
        return;
    }
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    let t = db.create_table(table("t")).unwrap();
    t.put(&Put::new("0-a").add("f", "q", "1")).unwrap();
    db.flush().unwrap();
    let out = tempfile::tempdir_in(shm).unwrap();
    let report = db.checkpoint(out.path().join("c")).unwrap();
    assert_eq!(
        (report.hfiles_linked, report.hfiles_copied),
        (0, 1),
        "{report:?}"
    );
    assert!(report.bytes_copied > 0);
    db.close().unwrap();
    let copy = Db::open(out.path().join("c"), DbOptions::default()).unwrap();
    let got = copy.table("t").unwrap().get(&Get::new("0-a")).unwrap();
    assert_eq!(got.cells.len(), 1);
}

#[test]
fn a_checkpoint_refuses_an_existing_target_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    db.create_table(table("t")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let existing = out.path().join("there");
    std::fs::create_dir(&existing).unwrap();
    let err = db.checkpoint(&existing).unwrap_err();
    assert!(matches!(err, Error::CheckpointTargetExists { .. }), "{err}");
    assert!(err.is_invalid_input());
    assert!(err.to_string().contains("already exists"), "{err}");
    assert_eq!(std::fs::read_dir(&existing).unwrap().count(), 0);

    // A staging directory an interrupted checkpoint left is refused too.
    std::fs::create_dir(out.path().join("next.tmp")).unwrap();
    let err = db.checkpoint(out.path().join("next")).unwrap_err();
    assert!(matches!(err, Error::CheckpointTargetExists { .. }), "{err}");
    assert!(!out.path().join("next").exists());

    // Inside the database: refused before anything is made.
    let err = db
        .checkpoint(dir.path().join("data").join("x"))
        .unwrap_err();
    assert!(
        matches!(err, Error::CheckpointInsideDatabase { .. }),
        "{err}"
    );
    assert!(!dir.path().join("data").join("x").exists());
}

#[test]
fn a_checkpoint_that_cannot_create_its_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    db.create_table(table("t")).unwrap();
    let out = tempfile::tempdir().unwrap();
    // A file where the parent directory should be.
    let file = out.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let err = db.checkpoint(file.join("c")).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 1);
    // The database goes on.
    db.table("t")
        .unwrap()
        .put(&Put::new("r").add("f", "q", "v"))
        .unwrap();
}
