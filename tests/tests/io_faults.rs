//! What strata does when the disk fails (`docs/reliability.md`, "Failure
//! semantics"), on the fault-injecting back end: a failed WAL sync is never
//! retried and stops every change until reopen while reads go on; an HFile
//! read error names the file and offset and leaves the block cache clean;
//! ENOSPC during a flush or compaction removes the failed output, keeps the
//! inputs and stops writes; ENOSPC on the WAL acknowledges none of the writes
//! it affects; after the cause is gone a reopen works with nothing
//! acknowledged lost. Each test is also the regression test of the engine
//! fix that made it hold.
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::path::{Path, PathBuf};

use strata::fault::{FaultInjector, FaultRule, FileKind, InjectedError, IoOp, PowerLoss};
use strata::{Db, DbOptions, Durability, Error, FamilyDescriptor, Get, Put, Scan, TableDescriptor};

fn options() -> DbOptions {
    DbOptions {
        // Compactions only when a test asks for one.
        l0_compaction_trigger: 8,
        l0_slowdown_files: 16,
        l0_stop_files: 24,
        ..DbOptions::default()
    }
}

fn table_descriptor() -> TableDescriptor {
    TableDescriptor::new("t")
        .family(FamilyDescriptor::new("a"))
        .family(FamilyDescriptor::new("b"))
}

fn row(i: usize) -> String {
    format!("row{i:04}")
}

fn put(i: usize) -> Put {
    let value = format!("value{i}");
    Put::new(row(i))
        .add("a", "q", &value)
        .add("b", "q", &value)
        .durability(Durability::SyncWal)
}

/// Every row in `rows` reads back whole (both families), and none of
/// `absent` holds half a mutation.
fn assert_rows(db: &Db, rows: impl IntoIterator<Item = usize>) {
    let t = db.table("t").unwrap();
    for i in rows {
        let got = t.get(&Get::new(row(i))).unwrap();
        let value = format!("value{i}");
        assert_eq!(
            got.value("a", "q"),
            Some(value.as_bytes()),
            "{} lost",
            row(i)
        );
        assert_eq!(
            got.value("b", "q"),
            Some(value.as_bytes()),
            "{} half",
            row(i)
        );
    }
    for r in t.scan(&Scan::new()).unwrap() {
        let r = r.unwrap();
        assert_eq!(
            r.value("a", "q"),
            r.value("b", "q"),
            "half-applied {:?}",
            r.row
        );
    }
}

fn hfiles(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hfile"))
        .collect();
    files.sort();
    files
}

fn stopped_by(error: &Error) -> &Error {
    match error {
        Error::WritesStopped { cause } => cause,
        other => panic!("expected WritesStopped, got {other:?}"),
    }
}

/// Reopens `dir` on the real back end once the faults are gone and checks
/// that `acked` survived and the directory is clean.
fn reopen_and_check(dir: &Path, acked: impl IntoIterator<Item = usize> + Clone) {
    let db = Db::open(dir, options()).expect("reopen after the fault");
    assert_rows(&db, acked.clone());
    // Writes work again.
    db.table("t").unwrap().put(&put(9999)).unwrap();
    db.close().unwrap();
    assert_eq!(strata_tests::leftovers(dir), Vec::<String>::new());
}

#[test]
fn a_failed_wal_sync_stops_writes_until_reopen_and_reads_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::new(1);
    let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
    let t = db.create_table(table_descriptor()).unwrap();
    for i in 0..10 {
        t.put(&put(i)).unwrap();
    }
    faults.add_rule(
        FaultRule::new(IoOp::Sync, InjectedError::Eio)
            .on(FileKind::Wal)
            .times(1),
    );
    let failed = t.put(&put(10)).unwrap_err();
    assert!(
        matches!(stopped_by(&failed), Error::Io { .. }),
        "{failed:?}"
    );
    // The fault fired once, yet nothing is retried: the page cache may have
    // dropped what the failed sync was to make durable.
    let again = t.put(&put(11)).unwrap_err();
    assert!(matches!(again, Error::WritesStopped { .. }), "{again:?}");
    assert!(matches!(
        db.flush().unwrap_err(),
        Error::WritesStopped { .. }
    ));
    assert!(db.storage_failure().is_some());
    // Reads go on.
    assert_rows(&db, 0..10);
    assert!(db.close().is_err(), "the close could not flush");
    reopen_and_check(dir.path(), 0..10);
}

#[test]
fn eio_on_an_hfile_read_names_file_and_offset_and_does_not_poison_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        // Small blocks: a scan reads ahead several at once.
        let t = db
            .create_table(
                TableDescriptor::new("t")
                    .family(FamilyDescriptor::new("a").block_size_bytes(1024))
                    .family(FamilyDescriptor::new("b").block_size_bytes(1024)),
            )
            .unwrap();
        for i in 0..200 {
            t.put(&put(i)).unwrap();
        }
        db.close().unwrap();
    }
    let faults = FaultInjector::new(2);
    let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
    let t = db.table("t").unwrap();
    faults.add_rule(
        FaultRule::new(IoOp::Read, InjectedError::Eio)
            .on(FileKind::HFile)
            .times(1),
    );
    match t.get(&Get::new(row(7))).unwrap_err() {
        Error::ReadFailed { file, offset, .. } => {
            assert!(file.starts_with(dir.path().join("data")), "{file:?}");
            assert_eq!(file.extension().unwrap(), "hfile");
            assert_eq!(offset, 0, "the first data block");
        }
        other => panic!("expected ReadFailed, got {other:?}"),
    }
    // The failed read left nothing in the cache: the same read now returns
    // the right cells.
    let got = t.get(&Get::new(row(7))).unwrap();
    assert_eq!(got.value("a", "q"), Some(&b"value7"[..]));
    assert_eq!(got.value("b", "q"), Some(&b"value7"[..]));
    // A scan whose read-ahead fails (several blocks in one batch) names the
    // block too, and the scan after it reads everything.
    faults.add_rule(
        FaultRule::new(IoOp::Read, InjectedError::Eio)
            .on(FileKind::HFile)
            .times(1),
    );
    let scanned: strata::Result<Vec<_>> = t.scan(&Scan::new()).unwrap().collect();
    match scanned {
        Err(Error::ReadFailed { file, offset, .. }) => {
            assert_eq!(file.extension().unwrap(), "hfile");
            assert!(offset > 0, "a later block");
        }
        Err(other) => panic!("expected ReadFailed, got {other:?}"),
        Ok(rows) => panic!("the scan read {} rows without the failing read", rows.len()),
    }
    assert_eq!(t.scan(&Scan::new()).unwrap().count(), 200);
    // A read error is not a storage failure of a change: writes go on.
    assert!(db.storage_failure().is_none());
    t.put(&put(500)).unwrap();
    db.close().unwrap();
    reopen_and_check(dir.path(), (0..200).chain([500]));
}

/// ENOSPC while a flush writes its HFile: the partial file is removed, the
/// memstore keeps the rows (reads see them), writes stop with a typed error.
#[test]
fn enospc_during_a_flush_removes_the_output_keeps_the_data_and_stops_writes() {
    for rule in [
        FaultRule::new(IoOp::Write, InjectedError::Enospc).on(FileKind::HFile),
        FaultRule::new(IoOp::Write, InjectedError::ShortWrite).on(FileKind::HFile),
        FaultRule::new(IoOp::Create, InjectedError::Enospc).on(FileKind::HFile),
        // The finishing sync fails: before the fix the file stayed behind.
        FaultRule::new(IoOp::Sync, InjectedError::Enospc).on(FileKind::HFile),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let faults = FaultInjector::new(3);
        let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
        let t = db.create_table(table_descriptor()).unwrap();
        for i in 0..50 {
            t.put(&put(i)).unwrap();
        }
        t.flush().unwrap();
        for i in 50..100 {
            t.put(&put(i)).unwrap();
        }
        let before = hfiles(dir.path());
        faults.add_rule(rule.clone());
        let error = t.flush().unwrap_err();
        assert!(stopped_by(&error).is_out_of_space(), "{rule:?}: {error:?}");
        assert!(error.is_out_of_space());
        assert_eq!(
            hfiles(dir.path()),
            before,
            "{rule:?}: the failed output is removed"
        );
        assert_rows(&db, 0..100);
        assert!(matches!(
            t.put(&put(100)).unwrap_err(),
            Error::WritesStopped { .. }
        ));
        // Space is freed; the next open flushes what the WAL holds.
        faults.clear_rules();
        let _ = db.close();
        reopen_and_check(dir.path(), 0..100);
    }
}

/// ENOSPC on a later megabyte of a large flush: those are written by the
/// HFile writer's write-behind thread while the next is built, and its
/// failure must come back the same way as an inline write's.
#[test]
fn enospc_on_a_later_chunk_of_a_large_flush_removes_the_output_and_stops_writes() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::new(6);
    let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
    let t = db.create_table(table_descriptor()).unwrap();
    // 3,000 rows of 2 KB in each family: about 6 MB a file, six write-buffers.
    let large = |i: usize| {
        let value = vec![b'x'; 2000];
        Put::new(row(i))
            .add("a", "big", &value)
            .add("b", "big", &value)
    };
    for i in 0..3000 {
        t.put(&large(i)).unwrap();
    }
    let before = hfiles(dir.path());
    faults.add_rule(
        FaultRule::new(IoOp::Write, InjectedError::Enospc)
            .on(FileKind::HFile)
            .after(2),
    );
    let error = t.flush().unwrap_err();
    assert!(stopped_by(&error).is_out_of_space(), "{error:?}");
    assert_eq!(hfiles(dir.path()), before, "the failed outputs are removed");
    let got = t.get(&Get::new(row(2999))).unwrap();
    assert_eq!(got.value("a", "big").map(<[u8]>::len), Some(2000));
    assert!(matches!(
        t.put(&put(3000)).unwrap_err(),
        Error::WritesStopped { .. }
    ));
    faults.clear_rules();
    let _ = db.close();
    let db = Db::open(dir.path(), options()).unwrap();
    let t = db.table("t").unwrap();
    for i in [0, 1500, 2999] {
        let got = t.get(&Get::new(row(i))).unwrap();
        assert_eq!(got.value("b", "big").map(<[u8]>::len), Some(2000), "{i}");
    }
}

#[test]
fn enospc_during_a_compaction_keeps_the_inputs_and_stops_writes() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::new(4);
    let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
    let t = db.create_table(table_descriptor()).unwrap();
    for batch in 0..3 {
        for i in batch * 40..(batch + 1) * 40 {
            t.put(&put(i)).unwrap();
        }
        t.flush().unwrap();
    }
    let inputs = hfiles(dir.path());
    assert_eq!(inputs.len(), 6, "three flushes of two families");
    faults.add_rule(FaultRule::new(IoOp::Write, InjectedError::Enospc).on(FileKind::HFile));
    let error = t.major_compact().unwrap_err();
    assert!(stopped_by(&error).is_out_of_space(), "{error:?}");
    assert_eq!(hfiles(dir.path()), inputs, "inputs kept, outputs removed");
    assert_rows(&db, 0..120);
    assert!(matches!(
        t.put(&put(120)).unwrap_err(),
        Error::WritesStopped { .. }
    ));
    faults.clear_rules();
    assert!(db.close().is_err(), "the close could not flush");
    reopen_and_check(dir.path(), 0..120);
}

/// ENOSPC on the WAL: every writer of the failed group gets an error and
/// none of them is in the database after a reopen.
#[test]
fn enospc_on_the_wal_acknowledges_none_of_the_writes_it_affects() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::new(5);
    let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
    let t = db.create_table(table_descriptor()).unwrap();
    for i in 0..20 {
        t.put(&put(i)).unwrap();
    }
    faults.add_rule(FaultRule::new(IoOp::Write, InjectedError::Enospc).on(FileKind::Wal));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let t = t.clone();
            std::thread::spawn(move || {
                (0..10)
                    .filter(|k| t.put(&put(1000 + w * 100 + k)).is_ok())
                    .count()
            })
        })
        .collect();
    let acknowledged: usize = writers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(
        acknowledged, 0,
        "no write acknowledged once the WAL is full"
    );
    let cause = db.storage_failure().unwrap();
    assert!(cause.is_out_of_space(), "{cause:?}");
    assert_rows(&db, 0..20);
    faults.clear_rules();
    let _ = db.close();
    reopen_and_check(dir.path(), 0..20);
    let db = Db::open(dir.path(), options()).unwrap();
    let t = db.table("t").unwrap();
    for w in 0..4 {
        for k in 0..10 {
            let got = t.get(&Get::new(row(1000 + w * 100 + k))).unwrap();
            assert!(got.is_empty(), "an unacknowledged write appeared");
        }
    }
    db.close().unwrap();
}

/// A short write of a WAL group (part of it reaches the file, then ENOSPC)
/// leaves a torn tail that the next open cuts, whatever the power does.
#[test]
fn a_short_wal_write_is_cut_at_reopen_even_after_a_power_loss() {
    for power_loss in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let faults = FaultInjector::new(6);
        let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
        let t = db.create_table(table_descriptor()).unwrap();
        for i in 0..20 {
            t.put(&put(i)).unwrap();
        }
        faults.add_rule(FaultRule::new(IoOp::Write, InjectedError::ShortWrite).on(FileKind::Wal));
        let big = Put::new(row(20))
            .add("a", "q", vec![7u8; 5000])
            .add("b", "q", vec![7u8; 5000]);
        assert!(t.put(&big).is_err());
        drop(t);
        let _ = db.close();
        drop(db);
        if power_loss {
            faults.power_loss(PowerLoss::drop_unsynced()).unwrap();
        }
        faults.clear_rules();
        reopen_and_check(dir.path(), 0..20);
    }
}

/// A manifest edit that fails (the flush's files are written and synced,
/// the edit may or may not be on disk): writes stop; after a reopen either
/// the edit applies or its files are orphans, deleted; nothing is lost.
#[test]
fn a_failed_manifest_edit_stops_writes_and_the_reopen_resolves_it() {
    for error in [
        InjectedError::Eio,
        InjectedError::Enospc,
        InjectedError::ShortWrite,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let faults = FaultInjector::new(7);
        let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
        let t = db.create_table(table_descriptor()).unwrap();
        for i in 0..30 {
            t.put(&put(i)).unwrap();
        }
        faults.add_rule(FaultRule::new(IoOp::Write, error).on(FileKind::Manifest));
        let failed = t.flush().unwrap_err();
        assert!(matches!(failed, Error::WritesStopped { .. }), "{failed:?}");
        assert!(matches!(
            db.create_table(TableDescriptor::new("u").family(FamilyDescriptor::new("a"))),
            Err(Error::WritesStopped { .. })
        ));
        assert_rows(&db, 0..30);
        faults.clear_rules();
        let _ = db.close();
        reopen_and_check(dir.path(), 0..30);
    }
}

/// The first open creates the directory, `data/` and `wal/`; before the fix
/// their entries were never synced into their parents, so a power loss
/// right after acknowledged writes could take the whole WAL directory.
#[test]
fn acknowledged_writes_survive_a_power_loss_right_after_the_first_open() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("new").join("db");
    let faults = FaultInjector::new(8);
    {
        let db = Db::open_with_faults(&dir, options(), &faults).unwrap();
        let t = db.create_table(table_descriptor()).unwrap();
        for i in 0..5 {
            t.put(&put(i)).unwrap();
        }
        faults.crash_now();
    }
    faults.power_loss(PowerLoss::drop_unsynced()).unwrap();
    reopen_and_check(&dir, 0..5);
}

/// One cell of the I/O error matrix: a call kind on a file kind fails with
/// an error, from the moment the rule is armed until it is cleared.
#[derive(Debug, Clone, Copy)]
struct MatrixCell {
    op: IoOp,
    kind: FileKind,
    error: InjectedError,
}

/// What a cell showed.
struct MatrixRow {
    cell: MatrixCell,
    /// The first operation that failed at runtime, and how.
    runtime: String,
    /// Reads and writes after that failure.
    then: String,
    /// Opening the database with the fault armed.
    open: String,
    /// Acknowledged writes lost after the fault cleared and a reopen.
    lost: usize,
}

/// A short name for what the caller saw.
fn describe(error: &Error) -> String {
    let errno = |source: &std::io::Error| {
        if source.kind() == std::io::ErrorKind::StorageFull {
            "ENOSPC"
        } else {
            "EIO"
        }
    };
    match error {
        Error::WritesStopped { cause } => format!("WritesStopped({})", describe(cause)),
        Error::ReadFailed { offset, source, .. } => {
            format!("ReadFailed(file, offset {offset}, {})", errno(source))
        }
        Error::Io { source, .. } => format!("Io({})", errno(source)),
        Error::WalFailed { .. } => "WalFailed".into(),
        Error::Corruption { .. } => "Corruption(file, offset)".into(),
        other => format!("{other:?}"),
    }
}

fn matrix_cells() -> Vec<MatrixCell> {
    use FileKind::{Directory, HFile, Manifest, Wal};
    use InjectedError::{Eio, Enospc, ShortWrite};
    let mut cells = Vec::new();
    let mut add = |op, kinds: &[FileKind], errors: &[InjectedError]| {
        for &kind in kinds {
            for &error in errors {
                cells.push(MatrixCell { op, kind, error });
            }
        }
    };
    add(IoOp::Read, &[Wal, HFile, Manifest], &[Eio]);
    add(
        IoOp::Write,
        &[Wal, HFile, Manifest],
        &[Eio, Enospc, ShortWrite],
    );
    add(
        IoOp::Sync,
        &[Wal, HFile, Manifest, Directory],
        &[Eio, Enospc],
    );
    add(IoOp::Create, &[Wal, HFile, Manifest], &[Enospc]);
    add(IoOp::Rename, &[Wal, Manifest], &[Eio]);
    add(IoOp::Remove, &[Wal, HFile, Manifest], &[Eio]);
    cells
}

/// One operation of a matrix cell; it records the rows it acknowledged.
type Step<'a> = dyn Fn(&mut Vec<usize>) -> strata::Result<()> + 'a;

/// Runs one cell: a database with 40 flushed rows and 20 more in the WAL
/// and memstore; the rule is armed; the operations below run until one
/// fails; then reads and writes are tried, an open with the rule armed,
/// and finally, with the rule cleared, a reopen on the real back end that
/// must find every acknowledged write and a clean directory.
fn run_matrix_cell(cell: MatrixCell) -> MatrixRow {
    let dir = tempfile::tempdir().unwrap();
    let mut acked: Vec<usize> = Vec::new();
    let faults = FaultInjector::new(11);
    {
        // On the simulated disk, which syncs nothing for real: quick.
        let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
        let t = db.create_table(table_descriptor()).unwrap();
        for i in 0..60 {
            t.put(&put(i)).unwrap();
            acked.push(i);
            if i == 39 {
                t.flush().unwrap();
            }
        }
        db.close().unwrap();
    }
    let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
    let t = db.table("t").unwrap();
    // Two more flushed files, so a compaction has inputs in L0.
    for i in 60..80 {
        t.put(&put(i)).unwrap();
        acked.push(i);
    }
    t.flush().unwrap();
    let rule = FaultRule::new(cell.op, cell.error).on(cell.kind);
    faults.add_rule(rule.clone());
    let mut runtime = "nothing failed".to_string();
    let steps: Vec<(&str, Box<Step<'_>>)> = vec![
        (
            "get",
            Box::new(|_| {
                for i in 0..80 {
                    t.get(&Get::new(row(i)))?;
                }
                Ok(())
            }),
        ),
        (
            "put",
            Box::new(|acked| {
                for i in 100..110 {
                    t.put(&put(i))?;
                    acked.push(i);
                }
                Ok(())
            }),
        ),
        ("flush", Box::new(|_| t.flush())),
        ("compact", Box::new(|_| t.major_compact())),
        (
            "create table",
            Box::new(|_| {
                db.create_table(TableDescriptor::new("u").family(FamilyDescriptor::new("a")))
                    .map(|_| ())
            }),
        ),
    ];
    for (name, step) in &steps {
        if let Err(e) = step(&mut acked) {
            runtime = format!("{name}: {}", describe(&e));
            break;
        }
    }
    drop(steps);
    let reads = (0..80)
        .filter(|&i| t.get(&Get::new(row(i))).is_ok_and(|r| !r.is_empty()))
        .count();
    let write = match t.put(&put(200)) {
        Ok(()) => {
            acked.push(200);
            "writes work".to_string()
        }
        Err(e) => format!("writes: {}", describe(&e)),
    };
    let then = format!("{reads}/80 rows read; {write}");
    drop(t);
    let _ = db.close();
    drop(db);
    // The same fault while opening.
    faults.clear_rules();
    faults.add_rule(rule);
    let open = match Db::open_with_faults(dir.path(), options(), &faults) {
        Ok(db) => {
            let _ = db.close();
            "opens".to_string()
        }
        Err(e) => format!("open: {}", describe(&e)),
    };
    faults.clear_rules();
    let db = strata_tests::open_when_unlocked(dir.path(), options).unwrap();
    let t = db.table("t").unwrap();
    let lost = acked
        .iter()
        .filter(|&&i| {
            let got = t.get(&Get::new(row(i))).unwrap();
            let value = format!("value{i}");
            got.value("a", "q") != Some(value.as_bytes())
                || got.value("b", "q") != Some(value.as_bytes())
        })
        .count();
    t.put(&put(300)).unwrap();
    drop(t);
    db.close().unwrap();
    let leftovers = strata_tests::leftovers(dir.path());
    assert!(leftovers.is_empty(), "{cell:?}: {leftovers:?}");
    MatrixRow {
        cell,
        runtime,
        then,
        open,
        lost,
    }
}

/// Runs `cells` on two threads, in order.
fn run_matrix(cells: Vec<MatrixCell>) -> Vec<MatrixRow> {
    let (even, odd): (Vec<_>, Vec<_>) =
        cells.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
    let run = |cells: Vec<(usize, MatrixCell)>| {
        cells
            .into_iter()
            .map(|(i, c)| (i, run_matrix_cell(c)))
            .collect::<Vec<_>>()
    };
    let mut rows = std::thread::scope(|scope| {
        let other = scope.spawn(|| run(odd));
        let mut rows = run(even);
        rows.extend(other.join().unwrap());
        rows
    });
    rows.sort_by_key(|(i, _)| *i);
    rows.into_iter().map(|(_, r)| r).collect()
}

/// What every cell must show: nothing acknowledged lost, and a failed
/// change stops writes while a failed read does not.
fn check_matrix(rows: &[MatrixRow]) {
    for r in rows {
        assert_eq!(r.lost, 0, "{:?} lost acknowledged writes", r.cell);
        let stopped = r.then.contains("WritesStopped");
        if r.cell.op == IoOp::Read {
            assert!(!stopped, "{:?}: {}", r.cell, r.then);
        } else if r.runtime.contains("WritesStopped") {
            assert!(stopped, "{:?}: {}", r.cell, r.then);
        }
    }
}

/// Every fourth cell of the matrix, in `cargo test`.
#[test]
fn io_error_matrix_sample() {
    let rows = run_matrix(matrix_cells().into_iter().step_by(4).collect());
    check_matrix(&rows);
}

/// The I/O error matrix of `docs/reliability.md`: every call kind x file
/// kind x error, what the caller sees and what survives. Print it with
/// `cargo test -p strata-tests --test io_faults io_error_matrix -- --ignored --nocapture`.
#[test]
#[ignore = "the whole matrix, printed: cargo test -p strata-tests --test io_faults io_error_matrix -- --ignored --nocapture"]
fn io_error_matrix() {
    let rows = run_matrix(matrix_cells());
    println!(
        "| call | file | error | first failure at runtime | then | open with the fault | acknowledged writes lost after reopen |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.cell.op.name(),
            r.cell.kind.name(),
            r.cell.error.name(),
            r.runtime,
            r.then,
            r.open,
            r.lost
        );
    }
    check_matrix(&rows);
}

/// Before the fix a flush of one region made its `AsyncWal` writes durable
/// (in its files) while earlier `AsyncWal` writes of another region stayed
/// only in the unsynced log: a power loss kept the later write and lost
/// the earlier one. A flush now syncs the WAL through its boundary first,
/// so what survives is always a point in time.
#[test]
fn a_flush_keeps_recovery_a_point_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::new(12);
    let options = || DbOptions {
        // Nothing syncs the async writes but the flush.
        async_wal_sync_interval_ms: 60_000,
        ..options()
    };
    {
        let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
        let t = db
            .create_table(table_descriptor().pre_split(strata::PreSplit::Keys(vec![b"m".to_vec()])))
            .unwrap();
        let async_put = |row: &str| {
            Put::new(row)
                .add("a", "q", "v")
                .add("b", "q", "v")
                .durability(Durability::AsyncWal)
        };
        t.put(&async_put("zebra")).unwrap();
        t.put(&async_put("aardvark")).unwrap();
        let first_region = t.regions().unwrap()[0].id;
        t.flush_region(first_region).unwrap();
        faults.crash_now();
    }
    faults.power_loss(PowerLoss::drop_unsynced()).unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let t = db.table("t").unwrap();
    assert!(!t.get(&Get::new("aardvark")).unwrap().is_empty(), "flushed");
    assert!(
        !t.get(&Get::new("zebra")).unwrap().is_empty(),
        "written before a durable write, so durable too"
    );
    db.close().unwrap();
}

/// Where a checkpoint of the database in `dir` goes: beside it, never inside.
fn checkpoint_target(root: &Path) -> PathBuf {
    root.join("copy")
}

/// A full disk during a checkpoint (issue 31, "a full disk during checkpoint or snapshot"):
/// each call kind a checkpoint makes fails in turn, at each of its calls, with ENOSPC. Each
/// time the checkpoint fails with an out-of-space error and leaves neither its directory
/// nor its staging directory; the database serves every acknowledged row; unless the fault
/// hit the database's own WAL (its roll, which stops writes as any full WAL does) writes go
/// on; and once space is back (after a reopen where writes stopped) a checkpoint opens with
/// every row.
#[test]
fn a_full_disk_during_a_checkpoint_leaves_no_copy_and_the_database_serves_on() {
    let mut failures_seen = 0;
    for op in [IoOp::Create, IoOp::Write, IoOp::Sync, IoOp::Rename] {
        // The n-th call of this kind fails; once a checkpoint makes fewer, every call has had
        // its turn. Bounded: a checkpoint of this database makes a few dozen calls.
        for n in 0..200 {
            let root = tempfile::tempdir().unwrap();
            let dir = root.path().join("db");
            let target = checkpoint_target(root.path());
            let faults = FaultInjector::new(9);
            let db = Db::open_with_faults(&dir, options(), &faults).unwrap();
            let t = db.create_table(table_descriptor()).unwrap();
            for i in 0..40 {
                t.put(&put(i)).unwrap();
            }
            t.flush().unwrap();
            // Unflushed rows: the checkpoint copies them from the WAL.
            for i in 40..60 {
                t.put(&put(i)).unwrap();
            }
            faults.add_rule(FaultRule::new(op, InjectedError::Enospc).after(n).times(1));
            let made = db.checkpoint(&target);
            faults.clear_rules();
            let Err(error) = made else {
                // Fewer than n + 1 calls of this kind: every one has been tried. A checkpoint
                // that succeeds saw no fault (before the fix a failed seal of its log copy
                // went unreported).
                assert_eq!(
                    faults.faults_injected(),
                    0,
                    "{op:?} #{n}: a fault went unreported"
                );
                drop(t);
                db.close().unwrap();
                let copy = Db::open(&target, options()).unwrap();
                assert_rows(&copy, 0..60);
                copy.close().unwrap();
                break;
            };
            failures_seen += 1;
            assert!(error.is_out_of_space(), "{op:?} #{n}: {error:?}");
            assert!(
                !target.exists(),
                "{op:?} #{n}: a failed checkpoint left its copy"
            );
            assert!(
                !root.path().join("copy.tmp").exists(),
                "{op:?} #{n}: a failed checkpoint left its staging directory"
            );
            assert_rows(&db, 0..60);
            let acked = match t.put(&put(60)) {
                Ok(()) => 0..61,
                Err(Error::WritesStopped { cause }) => {
                    assert!(cause.is_out_of_space(), "{op:?} #{n}: {cause:?}");
                    0..60
                }
                Err(other) => panic!("{op:?} #{n}: a write after the failed checkpoint: {other:?}"),
            };
            drop(t);
            let _ = db.close();
            let db = Db::open(&dir, options()).unwrap();
            assert_rows(&db, acked.clone());
            db.checkpoint(&target).unwrap();
            db.close().unwrap();
            let copy = Db::open(&target, options()).unwrap();
            assert_rows(&copy, acked);
            copy.close().unwrap();
            assert_eq!(strata_tests::leftovers(&dir), Vec::<String>::new());
        }
    }
    assert!(failures_seen > 10, "only {failures_seen} calls were failed");
}

/// A full disk during a snapshot (issue 31): a snapshot is the flush of an enabled table
/// and then one manifest edit. ENOSPC at either fails it with an out-of-space error and
/// stops writes (a failed flush or manifest edit does, `docs/reliability.md`); no snapshot
/// is listed, before or after the reopen; every acknowledged row is there; and the same
/// name can be taken afterwards and clones to the table's cells.
#[test]
fn a_full_disk_during_a_snapshot_records_none_and_loses_nothing() {
    for rule in [
        FaultRule::new(IoOp::Write, InjectedError::Enospc).on(FileKind::HFile),
        FaultRule::new(IoOp::Sync, InjectedError::Enospc).on(FileKind::HFile),
        FaultRule::new(IoOp::Write, InjectedError::Enospc).on(FileKind::Manifest),
        FaultRule::new(IoOp::Write, InjectedError::ShortWrite).on(FileKind::Manifest),
        FaultRule::new(IoOp::Sync, InjectedError::Enospc).on(FileKind::Manifest),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let faults = FaultInjector::new(10);
        let db = Db::open_with_faults(dir.path(), options(), &faults).unwrap();
        let t = db.create_table(table_descriptor()).unwrap();
        for i in 0..30 {
            t.put(&put(i)).unwrap();
        }
        t.flush().unwrap();
        for i in 30..50 {
            t.put(&put(i)).unwrap();
        }
        faults.add_rule(rule.clone());
        let error = db.snapshot("t", "s1").unwrap_err();
        assert!(error.is_out_of_space(), "{rule:?}: {error:?}");
        assert!(
            db.list_snapshots().is_empty(),
            "{rule:?}: a failed snapshot is listed"
        );
        assert_rows(&db, 0..50);
        assert!(
            matches!(t.put(&put(50)), Err(Error::WritesStopped { .. })),
            "{rule:?}"
        );
        faults.clear_rules();
        drop(t);
        let _ = db.close();
        let db = Db::open(dir.path(), options()).unwrap();
        assert!(
            db.list_snapshots().is_empty(),
            "{rule:?}: the reopen found a snapshot"
        );
        assert_rows(&db, 0..50);
        db.snapshot("t", "s1").unwrap();
        let clone = db.clone_snapshot("s1", "c").unwrap();
        let rows = |table: &strata::Table| -> Vec<_> {
            table
                .scan(&Scan::new())
                .unwrap()
                .map(|r| r.unwrap())
                .collect()
        };
        assert_eq!(rows(&clone), rows(&db.table("t").unwrap()), "{rule:?}");
        drop(clone);
        db.close().unwrap();
        assert_eq!(strata_tests::leftovers(dir.path()), Vec::<String>::new());
    }
}
