//! Shared helpers for strata's integration tests.
#![allow(
    clippy::expect_used,
    reason = "test helpers fail loudly when setup fails"
)]

use std::sync::Arc;

use strata::{Db, DbOptions, ManualClock, RowResult, Scan, Table};

/// A database in a temporary directory with a manual clock.
pub struct TestDb {
    /// The open database (dropped before its directory).
    pub db: Db,
    /// The clock the database reads.
    pub clock: Arc<ManualClock>,
    /// The directory (deleted on drop).
    pub dir: tempfile::TempDir,
}

impl TestDb {
    /// Opens a fresh database whose clock reads `now_ms`.
    pub fn new(now_ms: i64) -> TestDb {
        let dir = tempfile::tempdir().expect("temporary directory");
        let clock = Arc::new(ManualClock::new(now_ms));
        let db = Db::open(dir.path(), TestDb::options(&clock)).expect("open");
        TestDb { dir, clock, db }
    }

    /// Options using `clock`.
    pub fn options(clock: &Arc<ManualClock>) -> DbOptions {
        DbOptions {
            clock: clock.clone(),
            ..DbOptions::default()
        }
    }

    /// Closes and reopens the database.
    pub fn reopen(&mut self) {
        self.reopen_with(TestDb::options(&self.clock));
    }

    /// Closes and reopens the database with `options`.
    pub fn reopen_with(&mut self, options: DbOptions) {
        self.db.close().expect("close");
        self.db = Db::open(self.dir.path(), options).expect("reopen");
    }

    /// Options that leave memstores unflushed at close, so that the next
    /// open replays the WAL as it would after a crash.
    pub fn no_flush_on_close(clock: &Arc<ManualClock>) -> DbOptions {
        DbOptions {
            flush_on_close: false,
            ..TestDb::options(clock)
        }
    }
}

/// Opens the crash test's database with [`crash_options`], retrying a
/// locked open for up to two seconds. The crash tests run at once in one
/// process; while one forks a child, the child briefly holds copies of the
/// parent's file descriptors, the lock file of a database the parent just
/// closed among them (flock locks follow the open file until exec closes
/// it), so either side may find the database locked for a moment.
pub fn open_crash_db(dir: impl AsRef<std::path::Path>, busy_lsm: bool) -> strata::Result<Db> {
    retry_while_locked(|| Db::open(dir.as_ref(), crash_options(busy_lsm)))
}

/// Runs `open` until it opens or fails with anything but a locked
/// database, for up to two seconds (see [`open_crash_db`] for why a crash
/// test's database can be locked for a moment).
pub fn retry_while_locked(mut open: impl FnMut() -> strata::Result<Db>) -> strata::Result<Db> {
    let mut attempts = 0;
    loop {
        match open() {
            Err(strata::Error::DatabaseLocked { .. }) if attempts < 200 => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// Opens `dir` with `options()`, retrying for up to five seconds while the
/// directory is locked: after a simulated power loss the dropped database's
/// last worker thread may still be finishing its (failing) job, and its
/// lock goes with it.
pub fn open_when_unlocked(
    dir: &std::path::Path,
    options: impl Fn() -> DbOptions,
) -> strata::Result<Db> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match Db::open(dir, options()) {
            Err(strata::Error::DatabaseLocked { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            other => return other,
        }
    }
}

/// Options of the crash test's child and parent. With `busy_lsm`, memstores
/// flush every 64 KiB (set on the table) and two L0 files trigger a
/// compaction, so a kill often lands inside a flush or a compaction.
pub fn crash_options(busy_lsm: bool) -> DbOptions {
    if busy_lsm {
        DbOptions {
            l0_compaction_trigger: 2,
            level_base_bytes: 256 * 1024,
            target_file_bytes: 128 * 1024,
            ..DbOptions::default()
        }
    } else {
        DbOptions::default()
    }
}

/// `(family, qualifier, timestamp, value)` of every cell, as strings.
pub fn cells(row: &RowResult) -> Vec<(String, String, i64, String)> {
    row.cells
        .iter()
        .map(|c| {
            (
                String::from_utf8_lossy(&c.family).into_owned(),
                String::from_utf8_lossy(&c.qualifier).into_owned(),
                c.timestamp,
                String::from_utf8_lossy(&c.value).into_owned(),
            )
        })
        .collect()
}

/// Row keys a scan returns, as strings.
pub fn scan_rows(table: &Table, scan: &Scan) -> Vec<String> {
    table
        .scan(scan)
        .expect("scan")
        .map(|r| String::from_utf8_lossy(&r.expect("row").row).into_owned())
        .collect()
}

/// What a crash of `db` leaves on disk, as a copy the test can open: `db` is
/// leaked (never closed, so nothing is flushed, sealed or trimmed), and the
/// files of `dir` are copied byte for byte into a new temporary directory.
/// Whatever `db` acknowledged is in the page cache, hence in the copy, as
/// after a SIGKILL. The leaked handle keeps `dir` locked until the process
/// ends.
pub fn crashed_copy(db: Db, dir: &std::path::Path) -> tempfile::TempDir {
    std::mem::forget(db);
    let copy = tempfile::tempdir().expect("temporary directory");
    copy_tree(dir, copy.path());
    copy
}

/// Copies every file under `from` into `to` (created as needed).
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("create the copy's directory");
    for entry in std::fs::read_dir(from).expect("list the directory") {
        let entry = entry.expect("directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a file");
        }
    }
}

/// Every file under `dir` (recursively) with its bytes: compare two of these
/// to show that something changed no file.
pub fn files_with_bytes(
    dir: &std::path::Path,
) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("list the directory") {
            let entry = entry.expect("directory entry");
            if entry.file_type().expect("file type").is_dir() {
                stack.push(entry.path());
            } else {
                files.insert(
                    entry.path(),
                    std::fs::read(entry.path()).expect("read a file"),
                );
            }
        }
    }
    files
}

/// What a crash may leave in a database directory that a writable open
/// followed by a clean close must have cleaned up, and any damage: the
/// problems and notes of [`strata::inspect::verify_directory`] (damage,
/// unreferenced HFiles, torn tails, interrupted segment creations), a
/// leftover `CURRENT.tmp`, and manifests beside the live one. Empty for a
/// clean directory. Call it on a closed database.
pub fn leftovers(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    match strata::inspect::verify_directory(dir) {
        Ok(report) => {
            found.extend(report.problems.iter().map(|e| format!("problem: {e}")));
            found.extend(report.notes.iter().map(|n| format!("note: {n}")));
        }
        Err(e) => found.push(format!("verify_directory: {e}")),
    }
    let manifests = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("MANIFEST-"))
                .count()
        })
        .unwrap_or(0);
    if manifests != 1 {
        found.push(format!("{manifests} manifests"));
    }
    if dir.join("CURRENT.tmp").exists() {
        found.push("CURRENT.tmp left".into());
    }
    found
}

/// A small deterministic generator (splitmix64) for the seeded campaigns
/// (corruption, metamorphic): reproducible from one `u64`, and no more is
/// needed.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// An index below `n` (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    /// One of `items` (which must not be empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }
}
