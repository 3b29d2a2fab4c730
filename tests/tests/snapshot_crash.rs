//! Checkpoints, snapshots, clones, deletes and restores killed (SIGKILL) at
//! seeded points are all or nothing: a checkpoint directory is whole (it
//! opens, with the round's rows) or absent (a `.tmp` left beside it), a
//! snapshot is listed whole or not at all, and every step the child said it
//! finished is there after reopening.
#![cfg(test)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use strata::{Db, DbOptions, FamilyDescriptor, Scan, TableDescriptor};
use strata_tests::{Rng, open_crash_db};

/// Child runs, each killed at a seeded point.
const RUNS: u64 = 12;
/// A run is killed after at most this many finished steps.
const MAX_STEPS_BEFORE_KILL: u64 = 30;
/// Rounds of run `k` are numbered from `k * ROUND_STRIDE`.
const ROUND_STRIDE: u64 = 1000;
/// Rows the child writes per round (its `ROWS_PER_ROUND`).
const ROWS_PER_ROUND: u64 = 50;

fn rows(db: &Db, table: &str) -> Vec<Vec<u8>> {
    db.table(table)
        .unwrap()
        .scan(&Scan::new())
        .unwrap()
        .map(|r| r.unwrap().row)
        .collect()
}

/// What a run printed: (step, round) pairs.
fn finished(lines: &[String]) -> BTreeSet<(String, u64)> {
    lines
        .iter()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("DONE")).then_some(())?;
            Some((words.next()?.to_owned(), words.next()?.parse().ok()?))
        })
        .collect()
}

/// Checks the database and the checkpoints after run `run`.
fn check(dir: &Path, checkpoints: &Path, run: u64, done: &BTreeSet<(String, u64)>) {
    let db = open_crash_db(dir.join("db"), true).unwrap();
    if !db.is_table_enabled("t").unwrap() {
        // Killed between disable and enable around a restore.
        db.enable_table("t").unwrap();
    }
    let live = rows(&db, "t");
    let snapshots: BTreeSet<String> = db.list_snapshots().into_iter().map(|s| s.name).collect();
    let first = run * ROUND_STRIDE;
    for round in first..first + ROUND_STRIDE {
        let name = format!("ckpt-{round}");
        let path = checkpoints.join(&name);
        let printed = |step: &str| done.contains(&(step.to_owned(), round));
        if !path.exists() {
            assert!(!printed("checkpoint"), "{name} was reported made");
            if !printed("put") {
                break;
            }
            continue;
        }
        assert!(
            !checkpoints.join(format!("{name}.tmp")).exists(),
            "{name} and its staging directory both exist"
        );
        // Whole: it opens and holds the round's rows, and they are the
        // snapshot's and the clone's of the same round.
        let copy = Db::open(&path, DbOptions::default()).unwrap();
        let held = rows(&copy, "t");
        copy.close().unwrap();
        let round_rows: Vec<Vec<u8>> = (round * ROWS_PER_ROUND..(round + 1) * ROWS_PER_ROUND)
            .map(|i| format!("row{i:08}").into_bytes())
            .collect();
        assert!(
            round_rows.iter().all(|r| held.binary_search(r).is_ok()),
            "{name} lacks rows of its round"
        );
        assert!(
            held.iter().all(|r| live.binary_search(r).is_ok()),
            "the database lost rows {name} holds"
        );
        let snapshot = format!("s-{round}");
        if snapshots.contains(&snapshot) {
            let probe = format!("probe-{round}");
            db.clone_snapshot(&snapshot, &probe).unwrap();
            assert_eq!(rows(&db, &probe), held, "{snapshot}");
            db.disable_table(&probe).unwrap();
            db.drop_table(&probe).unwrap();
        } else {
            // The next round deletes it once its clone is made.
            assert!(
                !printed("snapshot") || done.contains(&("clone".to_owned(), round + 1)),
                "{snapshot} was reported taken"
            );
        }
        let clone = format!("c-{round}");
        if db.table_exists(&clone) {
            assert_eq!(rows(&db, &clone), held, "{clone}");
        } else {
            assert!(!printed("clone"), "{clone} was reported made");
        }
    }
    // A killed checkpoint leaves only its staging directory, never a part of itself.
    for entry in std::fs::read_dir(checkpoints).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name.starts_with("ckpt-"),
            "unexpected {name} among the checkpoints"
        );
    }
    // Every file a table names reads back whole.
    let report = db.verify().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    db.close().unwrap();
}

#[test]
fn checkpoints_and_snapshot_commands_killed_anywhere_are_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoints = dir.path().join("checkpoints");
    std::fs::create_dir(&checkpoints).unwrap();
    {
        let db = open_crash_db(dir.path().join("db"), true).unwrap();
        db.create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("f"))
                .memstore_flush_size_bytes(64 * 1024),
        )
        .unwrap();
        db.close().unwrap();
    }
    let mut rng = Rng(0x5eed_0031);
    for run in 0..RUNS {
        let kill_after = 1 + rng.below(MAX_STEPS_BEFORE_KILL);
        let pause = Duration::from_millis(rng.below(15));
        let mut child = Command::new(env!("CARGO_BIN_EXE_snapshot_crash"))
            .arg(dir.path().join("db"))
            .arg(&checkpoints)
            .arg((run * ROUND_STRIDE).to_string())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start snapshot_crash");
        let stdout = child.stdout.take().unwrap();
        let mut reader = BufReader::new(stdout);
        let mut lines = Vec::new();
        for _ in 0..kill_after {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 {
                break;
            }
            lines.push(line);
        }
        std::thread::sleep(pause);
        child.kill().expect("SIGKILL");
        child.wait().unwrap();
        // What it printed between the last read and the kill counts too.
        let mut rest = String::new();
        while reader.read_line(&mut rest).unwrap() > 0 {
            lines.push(std::mem::take(&mut rest));
        }
        assert!(!lines.is_empty(), "run {run}: the child finished no step");
        check(dir.path(), &checkpoints, run, &finished(&lines));
    }
}
