//! Crash test: a child writes with SyncWal and records every acknowledged
//! write; it is killed with SIGKILL at a random moment, or (power-loss
//! rounds) runs on the fault-injecting back end until the power goes out at
//! a random I/O call and everything not durable is dropped; the parent
//! reopens the directory and checks that every acknowledged write is there,
//! that no mutation is half-applied and that no file is left over. Repeated
//! on the same directory, so each round also recovers from the previous
//! rounds' crashes.
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use strata::{FamilyDescriptor, Get, Scan, TableDescriptor};

/// Rows of each multi-row mutation of the crash writer.
const MULTI_ROWS: usize = 3;

/// A small deterministic generator (no dependency needed for a few numbers).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn verify(dir: &Path, ack_file: &Path, busy: bool) -> (usize, usize) {
    let db = strata_tests::open_crash_db(dir, busy).expect("reopen after SIGKILL");
    // Files left by an interrupted flush or compaction are gone (compared
    // once the compactions open schedules have finished writing theirs).
    db.wait_for_background_work().unwrap();
    let on_disk = std::fs::read_dir(dir.join("data"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "hfile"))
        })
        .count() as u64;
    assert_eq!(
        on_disk,
        db.stats().files,
        "every HFile on disk is referenced"
    );
    let table = db.table("crash").unwrap();
    let acks = std::fs::read_to_string(ack_file).unwrap_or_default();
    let mut counters: HashMap<String, i64> = HashMap::new();
    let mut puts = 0;
    for line in acks.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        match parts.as_slice() {
            ["P", row, value] => {
                let got = table.get(&Get::new(row)).unwrap();
                assert_eq!(
                    got.value("a", "v"),
                    Some(value.as_bytes()),
                    "acknowledged put of {row} lost"
                );
                assert_eq!(
                    got.value("b", "v"),
                    Some(value.as_bytes()),
                    "acknowledged put of {row} half-applied"
                );
                puts += 1;
            }
            ["M", stem, value] => {
                for k in 0..MULTI_ROWS {
                    let got = table.get(&Get::new(format!("{stem}-m{k}"))).unwrap();
                    assert_eq!(
                        got.value("a", "v"),
                        Some(value.as_bytes()),
                        "row {k} of acknowledged multi-row mutation {stem} lost"
                    );
                }
                puts += 1;
            }
            ["C", row, count] => {
                let count: i64 = count.parse().unwrap();
                let entry = counters.entry(row.to_string()).or_insert(0);
                *entry = (*entry).max(count);
            }
            // The last line may itself be torn by the kill.
            _ => {}
        }
    }
    for (row, acked) in &counters {
        let got = table.get(&Get::new(row)).unwrap();
        let value = i64::from_be_bytes(got.value("a", "n").unwrap().try_into().unwrap());
        assert!(
            (*acked..=*acked + 1).contains(&value),
            "counter {row}: acknowledged {acked}, found {value}"
        );
    }
    // Nothing unacknowledged is half-applied: every put row has both
    // families, every multi-row mutation all its rows.
    let mut rows = 0;
    let mut multi_rows: HashMap<Vec<u8>, usize> = HashMap::new();
    for row in table.scan(&Scan::new()).unwrap() {
        let row = row.unwrap();
        if row.row.windows(8).any(|w| w == b"counter-") {
            continue;
        }
        if let Some(stem) = row.row.len().checked_sub(3).and_then(|cut| {
            (row.row.get(cut..cut + 2) == Some(b"-m")).then(|| row.row[..cut].to_vec())
        }) {
            *multi_rows.entry(stem).or_insert(0) += 1;
        }
        assert_eq!(
            row.value("a", "v"),
            row.value("b", "v"),
            "half-applied mutation in {:?}",
            row.row
        );
        rows += 1;
    }
    for (stem, found) in &multi_rows {
        assert_eq!(
            *found,
            MULTI_ROWS,
            "multi-row mutation {} half-applied",
            String::from_utf8_lossy(stem)
        );
    }
    db.close().unwrap();
    let leftovers = strata_tests::leftovers(dir);
    assert!(leftovers.is_empty(), "{leftovers:?}");
    (puts, rows)
}

/// A new directory holding the crash test's table.
fn crash_directory(busy: bool) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db");
    {
        let db = strata_tests::open_crash_db(&db_dir, busy).unwrap();
        let flush_size = if busy { 64 * 1024 } else { 128 * 1024 * 1024 };
        db.create_table(
            TableDescriptor::new("crash")
                .family(FamilyDescriptor::new("a"))
                .family(FamilyDescriptor::new("b"))
                .memstore_flush_size_bytes(flush_size),
        )
        .unwrap();
        db.close().unwrap();
    }
    (dir, db_dir)
}

/// Rounds on one directory before the next starts afresh (each round adds
/// rows, and every check scans them all).
const ROUNDS_PER_DIRECTORY: u64 = 100;

fn crash_rounds(rounds: u64, seed: u64, busy: bool) {
    let (mut dir, mut db_dir) = crash_directory(busy);
    let mut rng = Lcg(seed);
    let mut total_puts = 0;
    for round in 0..rounds {
        if round > 0 && round % ROUNDS_PER_DIRECTORY == 0 {
            (dir, db_dir) = crash_directory(busy);
        }
        let ack_file = dir.path().join(format!("acks-{round}"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_crash_writer"))
            .arg(&db_dir)
            .arg(&ack_file)
            .arg(format!("round{round:04}"))
            .arg("4")
            .args(busy.then_some("busy"))
            .spawn()
            .expect("start crash_writer");
        // Most rounds kill while writes are flowing: wait for the first
        // acknowledgement (open and replay can be slow on a busy disk), then
        // a random delay. Every fifth round kills at any moment, which can
        // land during open, replay or segment creation.
        if round % 5 != 4 {
            let deadline = Instant::now() + Duration::from_secs(60);
            while std::fs::metadata(&ack_file).map_or(true, |m| m.len() == 0)
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        std::thread::sleep(Duration::from_millis(rng.next() % 200));
        child.kill().expect("SIGKILL");
        child.wait().unwrap();
        let (puts, _) = verify(&db_dir, &ack_file, busy);
        total_puts += puts;
    }
    assert!(total_puts > 0, "the children acknowledged writes");
    println!(
        "{rounds} SIGKILL rounds{}: {total_puts} acknowledged puts found whole",
        if busy { " (busy)" } else { "" }
    );
    if busy {
        let db = strata_tests::open_crash_db(&db_dir, true).unwrap();
        let regions = db.table("crash").unwrap().regions().unwrap();
        assert!(db.stats().files > 1, "the children flushed");
        assert!(
            regions[0].files_per_level[1..].iter().sum::<usize>() > 0,
            "and compacted"
        );
    }
}

/// Where the busy power-loss rounds cut the power, round robin: at
/// mutating I/O call `1..calls` of any kind (the first tens are the
/// child's open: replay, manifest rewrite, new segment), or at call `1..n`
/// on one kind of file (an HFile: inside a flush or compaction; the
/// manifest: an edit or a rewrite; a directory: a creation, rename or
/// removal made durable). Most calls of a writing child are WAL writes and
/// syncs, so aiming at the other kinds is what lands power losses inside
/// flushes and compactions. Rounds without flushes aim at any call only.
const AIMS: [Option<(&str, u64)>; 4] = [
    None,
    Some(("hfile", 60)),
    Some(("manifest", 30)),
    Some(("directory", 20)),
];

/// Power-loss rounds: the child loses power at a random call (see
/// [`AIMS`], round robin); every other round tears the unsynced writes at a
/// sector instead of dropping them. Returns how many rounds lost power in
/// which kind of call.
fn power_loss_rounds(rounds: u64, seed: u64, busy: bool, calls: u64) -> BTreeMap<String, u64> {
    let (mut dir, mut db_dir) = crash_directory(busy);
    let mut rng = Lcg(seed);
    let mut total_puts = 0;
    let mut places = BTreeMap::new();
    for round in 0..rounds {
        if round > 0 && round % ROUNDS_PER_DIRECTORY == 0 {
            (dir, db_dir) = crash_directory(busy);
        }
        let ack_file = dir.path().join(format!("acks-{round}"));
        let aim = if busy {
            AIMS[(round % AIMS.len() as u64) as usize]
        } else {
            None
        };
        let crash_at = 1 + rng.next() % aim.map_or(calls, |(_, n)| n);
        let output = Command::new(env!("CARGO_BIN_EXE_crash_writer"))
            .arg(&db_dir)
            .arg(&ack_file)
            .arg(format!("round{round:04}"))
            .arg("4")
            .args(busy.then_some("busy"))
            .args(["power-loss", &crash_at.to_string(), &rng.next().to_string()])
            .args((round % 2 == 1).then_some("torn"))
            .args(aim.map(|(kind, _)| ["on", kind]).into_iter().flatten())
            .output()
            .expect("run crash_writer");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "crash_writer failed: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let place = stdout
            .lines()
            .find_map(|l| l.strip_prefix("crash: "))
            .unwrap_or("?")
            .to_string();
        *places.entry(place).or_default() += 1;
        let (puts, _) = verify(&db_dir, &ack_file, busy);
        total_puts += puts;
    }
    assert!(total_puts > 0, "the children acknowledged writes");
    println!(
        "{rounds} power-loss rounds{}: {total_puts} acknowledged puts found whole",
        if busy { " (busy)" } else { "" }
    );
    places
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    crash_rounds(20, 0x5EED, false);
}

/// A power loss at a random I/O call of a writing child (flushes and
/// compactions running): every acknowledged write survives, whole.
#[test]
fn acknowledged_writes_survive_power_loss_during_flush_and_compaction() {
    let places = power_loss_rounds(10, 0x9A11, true, 1500);
    assert!(places.len() > 1, "{places:?}");
}

/// Kills land during flushes and compactions: no acknowledged write is lost
/// and no file is left behind.
#[test]
fn acknowledged_writes_survive_sigkill_during_flush_and_compaction() {
    crash_rounds(20, 0xF1A5, true);
}

/// The measured SIGKILL loop of `docs/reliability.md`: 1000 rounds.
#[test]
#[ignore = "long crash loop: cargo test -p strata-tests --test crash -- --ignored --nocapture"]
fn acknowledged_writes_survive_many_sigkills() {
    crash_rounds(500, 0xC0FFEE, false);
    crash_rounds(500, 0xBEEF, true);
}

/// The measured power-loss loop of `docs/reliability.md`: 1000 rounds,
/// and where the power went out.
#[test]
#[ignore = "long power-loss loop: cargo test -p strata-tests --test crash -- --ignored --nocapture"]
fn acknowledged_writes_survive_many_power_losses() {
    let mut places = power_loss_rounds(500, 0xD1CE, false, 400);
    for (place, count) in power_loss_rounds(500, 0xFACE, true, 3000) {
        *places.entry(place).or_default() += count;
    }
    println!("1000 power-loss rounds, 0 failures\n| the power went out at | rounds |\n|---|---|");
    for (place, count) in places {
        println!("| {place} | {count} |");
    }
}
