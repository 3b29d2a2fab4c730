//! A bulk load killed (SIGKILL) at each of its steps leaves all of the load
//! or none of it, across every region and family, and no stray file.
#![cfg(test)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use strata::{BulkLoadOptions, Error, FamilyDescriptor, PreSplit, Scan, TableDescriptor};

/// Rows the load brings, over three regions and two families.
const LOADED_ROWS: u32 = 600;

fn prepare(dir: &Path) {
    let db = strata_tests::open_crash_db(dir.join("db"), false).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("f"))
                .family(FamilyDescriptor::new("g"))
                .pre_split(PreSplit::Keys(vec![
                    b"row000200".to_vec(),
                    b"row000400".to_vec(),
                ])),
        )
        .unwrap();
    let mut writer = table.bulk_writer(dir.join("files")).unwrap();
    for i in 0..LOADED_ROWS {
        let row = format!("row{i:06}");
        writer
            .add(row.as_bytes(), b"f", b"q", 5, b"loaded")
            .unwrap();
        writer
            .add(row.as_bytes(), b"g", b"q", 5, b"loaded")
            .unwrap();
    }
    assert_eq!(writer.finish().unwrap().files.len(), 6);
    db.close().unwrap();
}

/// Loaded rows visible after reopening, with every cell present.
fn loaded_rows(dir: &Path) -> (u32, strata::Db) {
    let db = strata_tests::open_crash_db(dir.join("db"), false).expect("reopen after SIGKILL");
    db.wait_for_background_work().unwrap();
    let table = db.table("t").unwrap();
    let mut rows = 0;
    for row in table.scan(&Scan::new()).unwrap() {
        let row = row.unwrap();
        if row.row.ends_with(b"-live") {
            continue;
        }
        assert_eq!(row.value("f", "q"), Some(&b"loaded"[..]), "{:?}", row.row);
        assert_eq!(row.value("g", "q"), Some(&b"loaded"[..]), "{:?}", row.row);
        rows += 1;
    }
    let on_disk = std::fs::read_dir(dir.join("db/data"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "hfile"))
        .count() as u64;
    assert_eq!(
        on_disk,
        db.stats().files,
        "every HFile on disk is referenced"
    );
    (rows, db)
}

fn crash_at(step: &str, mode: &str) {
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_bulk_crash"))
        .arg(dir.path().join("db"))
        .arg(dir.path().join("files"))
        .arg(step)
        .arg(mode)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start bulk_crash");
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    assert_eq!(
        line.trim(),
        format!("REACHED {step}"),
        "the child got there"
    );
    let committed = matches!(step, "Committed" | "Installed" | "SourcesRemoved");
    let (rows, db) = loaded_rows(dir.path());
    let sources: Vec<_> = std::fs::read_dir(dir.path().join("files"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    if committed {
        assert_eq!(rows, LOADED_ROWS, "killed after {step}: all of the load");
    } else {
        assert_eq!(rows, 0, "killed after {step}: none of the load");
        assert_eq!(sources.len(), 6, "the caller's files are untouched");
    }
    let live = db.table("t").unwrap();
    if !sources.is_empty() {
        // Loading the files again: refused once loaded, done otherwise.
        let again = live.bulk_load(&sources, &BulkLoadOptions::default());
        if committed {
            assert!(
                matches!(again, Err(Error::BulkFileAlreadyLoaded { .. })),
                "{again:?}"
            );
        } else {
            again.unwrap();
        }
    }
    db.close().unwrap();
    let (rows, db) = loaded_rows(dir.path());
    assert_eq!(rows, LOADED_ROWS, "exactly once");
    db.close().unwrap();
}

#[test]
fn a_load_killed_at_any_step_is_all_or_nothing() {
    for step in [
        "Verified",
        "Placed",
        "Flushed",
        "Committed",
        "Installed",
        "SourcesRemoved",
    ] {
        crash_at(step, "move");
    }
    for step in ["Placed", "Committed"] {
        crash_at(step, "copy");
    }
}
