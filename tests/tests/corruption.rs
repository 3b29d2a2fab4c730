//! The corruption campaign: one damage at a time (a flipped byte, or a file
//! cut short at a random offset or at a record boundary) to a copy of a
//! database holding every kind of file (CURRENT, a manifest with committed
//! edits after its snapshot, a sealed WAL segment, the newest WAL segment as a
//! crash leaves it, HFiles), then:
//!
//! * `inspect::verify_directory` and a read-only open change no byte of any
//!   file;
//! * a writable open either refuses with an error naming a file of the
//!   database, or opens, and then every acknowledged write reads back with
//!   its value or the read fails with a corruption error naming the file
//!   (HFile data blocks are checked when read): zero acknowledged writes
//!   silently lost or wrong;
//! * an open that refuses is matched by `verify` reporting damage.
//!
//! `cargo test` runs a few dozen trials; `cargo test --release -p
//! strata-tests --test corruption -- --ignored` runs thousands and prints the
//! tally (`CORRUPTION_TRIALS` overrides the count, `CORRUPTION_SEED` the seed).
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use strata::inspect::{verify_directory, wal_segments};
use strata::{Db, DbOptions, Error, FamilyDescriptor, Get, Put, TableDescriptor};
use strata_tests::{Rng, copy_tree, crashed_copy, files_with_bytes};

/// The acknowledged writes: table -> row -> value.
type Model = BTreeMap<&'static str, BTreeMap<String, String>>;

fn no_flush() -> DbOptions {
    DbOptions {
        flush_on_close: false,
        ..DbOptions::default()
    }
}

fn put(db: &Db, model: &mut Model, table: &'static str, rows: std::ops::Range<usize>) {
    let handle = db.table(table).unwrap();
    for i in rows {
        let (row, value) = (format!("row{i:04}"), format!("{table}-value-{i}"));
        handle
            .put(&Put::new(row.clone()).add("f", "q", value.clone()))
            .unwrap();
        model.entry(table).or_default().insert(row, value);
    }
}

/// Builds the fixture in `dir`, returning the crashed copy to damage and the
/// model of what was acknowledged.
fn fixture(dir: &Path) -> (tempfile::TempDir, Model) {
    let mut model = Model::new();
    let db = Db::open(dir, no_flush()).unwrap();
    db.create_table(
        TableDescriptor::new("t").family(FamilyDescriptor::new("f").block_size_bytes(1024)),
    )
    .unwrap();
    put(&db, &mut model, "t", 0..60);
    db.table("t").unwrap().flush().unwrap();
    put(&db, &mut model, "t", 60..120);
    db.table("t").unwrap().flush().unwrap();
    put(&db, &mut model, "t", 120..150);
    db.close().unwrap(); // the WAL segment is sealed; rows 120.. only in it

    let db = Db::open(dir, no_flush()).unwrap();
    db.create_table(TableDescriptor::new("u").family(FamilyDescriptor::new("f")))
        .unwrap(); // a committed manifest edit after the snapshot
    put(&db, &mut model, "u", 0..20);
    put(&db, &mut model, "t", 150..170);
    (crashed_copy(db, dir), model)
}

/// Where a damage can go: each file with its record boundaries.
struct Target {
    path: PathBuf,
    len: u64,
    boundaries: Vec<u64>,
}

fn targets(dir: &Path) -> Vec<Target> {
    let mut out = Vec::new();
    let mut wal_boundaries = BTreeMap::new();
    for segment in wal_segments(dir).unwrap() {
        let mut b: Vec<u64> = segment
            .records
            .iter()
            .flat_map(|r| [r.offset, r.offset + r.frame_bytes])
            .collect();
        b.push(segment.file_bytes);
        wal_boundaries.insert(segment.path, b);
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let boundaries = if let Some(b) = wal_boundaries.get(&path) {
                b.clone()
            } else if name.starts_with("MANIFEST-") {
                manifest_boundaries(&bytes)
            } else {
                Vec::new()
            };
            if !bytes.is_empty() {
                out.push(Target {
                    len: bytes.len() as u64,
                    path,
                    boundaries,
                });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Frame boundaries of a manifest: header and commit slots, then frames of a
/// u32 length, an 8-byte checksum and the payload.
fn manifest_boundaries(bytes: &[u8]) -> Vec<u64> {
    let mut out = vec![32, 64, 96];
    let mut p = 96usize;
    while let Some(len) = bytes.get(p..p + 4) {
        let len = u32::from_le_bytes(len.try_into().unwrap()) as usize;
        if len == 0 {
            break;
        }
        p += 12 + len;
        out.push(p as u64);
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Damage {
    Flip { at: u64, mask: u8 },
    Truncate { len: u64 },
}

fn apply(path: &Path, damage: Damage) {
    let mut bytes = std::fs::read(path).unwrap();
    match damage {
        Damage::Flip { at, mask } => bytes[at as usize] ^= mask,
        Damage::Truncate { len } => bytes.truncate(len as usize),
    }
    std::fs::write(path, bytes).unwrap();
}

#[derive(Debug, Default)]
struct Tally {
    trials: u64,
    refused_at_open: u64,
    detected_at_read: u64,
    harmless: u64,
    /// Trials that flipped one byte (the rest cut the file short).
    byte_flips: u64,
    /// Detected trials whose first error named the byte offset of the
    /// damaged record or block (`Error::Corruption`) ...
    named_file_and_offset: u64,
    /// ... and those whose error named the file only (an I/O error, such
    /// as a read past the end of a file cut short).
    named_file_only: u64,
    by_file_kind: BTreeMap<String, u64>,
}

/// Counts how precisely `error` (already known to name a file) places the
/// damage.
fn tally_precision(error: &Error, tally: &mut Tally) {
    match error {
        Error::Corruption { .. } => tally.named_file_and_offset += 1,
        _ => tally.named_file_only += 1,
    }
}

/// True when `error` names a file inside `dir`.
fn names_a_file_in(error: &Error, dir: &Path) -> bool {
    match error {
        Error::Corruption { file, .. } => file.starts_with(dir),
        Error::Io { context, .. } => context.contains(&*dir.to_string_lossy()),
        _ => false,
    }
}

fn file_kind(path: &Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy();
    if name.starts_with("MANIFEST-") {
        "manifest".into()
    } else if name.ends_with(".wal") {
        "wal".into()
    } else if name.ends_with(".hfile") {
        "hfile".into()
    } else {
        name.into_owned()
    }
}

/// One trial: damage a fresh copy of `pristine`, then check the rules.
fn trial(pristine: &Path, model: &Model, rng: &mut Rng, tally: &mut Tally) {
    let copy = tempfile::tempdir().unwrap();
    copy_tree(pristine, copy.path());
    let targets = targets(copy.path());
    let target = &targets[rng.below(targets.len() as u64) as usize];
    let damage = match rng.below(4) {
        0 | 1 => {
            // Flips land in the first bytes written (where records are) as
            // often as anywhere in the file (mostly preallocated zeros, for
            // the newest WAL segment).
            let dirty = target.boundaries.last().copied().unwrap_or(target.len);
            let span = if rng.below(2) == 0 {
                dirty.min(target.len)
            } else {
                target.len
            };
            Damage::Flip {
                at: rng.below(span.max(1)),
                mask: 1 << rng.below(8),
            }
        }
        2 if !target.boundaries.is_empty() => Damage::Truncate {
            len: target.boundaries[rng.below(target.boundaries.len() as u64) as usize]
                .min(target.len.saturating_sub(1)),
        },
        _ => Damage::Truncate {
            len: rng.below(target.len),
        },
    };
    let what = format!("{} {damage:?}", target.path.display());
    apply(&target.path, damage);
    tally.trials += 1;
    if matches!(damage, Damage::Flip { .. }) {
        tally.byte_flips += 1;
    }
    *tally
        .by_file_kind
        .entry(file_kind(&target.path))
        .or_default() += 1;

    // Looking changes nothing.
    let before = files_with_bytes(copy.path());
    let report = verify_directory(copy.path());
    if let Ok(db) = Db::open(
        copy.path(),
        DbOptions {
            read_only: true,
            ..DbOptions::default()
        },
    ) {
        for table in model.keys() {
            if let Ok(handle) = db.table(table) {
                for row in model[table].keys() {
                    let _ = handle.get(&Get::new(row.as_str()));
                }
            }
        }
        db.close().unwrap();
    }
    assert_eq!(
        files_with_bytes(copy.path()),
        before,
        "{what}: looking changed a file"
    );
    let damage_reported = match &report {
        Ok(report) => !report.problems.is_empty(),
        Err(_) => true,
    };

    let db = match Db::open(copy.path(), no_flush()) {
        Ok(db) => db,
        Err(error) => {
            assert!(
                names_a_file_in(&error, copy.path()),
                "{what}: open failed without naming a file: {error:?}"
            );
            assert!(
                damage_reported,
                "{what}: open refused ({error}) but verify found nothing"
            );
            tally_precision(&error, tally);
            tally.refused_at_open += 1;
            return;
        }
    };
    let mut detected: Option<Error> = None;
    for (table, rows) in model {
        let handle = db
            .table(table)
            .unwrap_or_else(|e| panic!("{what}: table {table} silently lost: {e}"));
        for (row, value) in rows {
            match handle.get(&Get::new(row.as_str())) {
                Ok(got) => assert_eq!(
                    got.value("f", "q"),
                    Some(value.as_bytes()),
                    "{what}: {table}/{row} silently lost or wrong"
                ),
                Err(error) => {
                    assert!(
                        names_a_file_in(&error, copy.path()),
                        "{what}: read failed without naming a file: {error:?}"
                    );
                    detected.get_or_insert(error);
                }
            }
        }
    }
    if let Some(error) = detected {
        tally_precision(&error, tally);
        assert!(
            damage_reported,
            "{what}: a read found damage that verify missed"
        );
        tally.detected_at_read += 1;
    } else {
        tally.harmless += 1;
    }
    db.close().unwrap();
}

fn campaign(trials: u64, seed: u64) -> Tally {
    let dir = tempfile::tempdir().unwrap();
    let (pristine, model) = fixture(dir.path());
    // The pristine copy itself is healthy and complete.
    let report = verify_directory(pristine.path()).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let mut rng = Rng(seed);
    let mut tally = Tally::default();
    for _ in 0..trials {
        trial(pristine.path(), &model, &mut rng, &mut tally);
    }
    tally
}

#[test]
fn single_damages_are_detected_or_harmless() {
    let tally = campaign(40, 12);
    assert_eq!(tally.trials, 40);
    assert!(tally.refused_at_open > 0, "{tally:?}");
}

#[test]
#[ignore = "thousands of trials: cargo test --release -p strata-tests --test corruption -- --ignored"]
fn corruption_campaign() {
    let trials = std::env::var("CORRUPTION_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let seed = std::env::var("CORRUPTION_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20261123);
    let tally = campaign(trials, seed);
    println!("corruption campaign, seed {seed}: {tally:#?}");
}
