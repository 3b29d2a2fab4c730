//! The fault-injecting back end: a simulated disk for power-loss and I/O
//! error tests (`docs/reliability.md`).
//!
//! It performs every call on the real files (with `pread`/`pwrite`, as the
//! sync back end does) and keeps, beside them, what a power loss would leave:
//!
//! * per file, its *durable image*: the length it had at its last successful
//!   sync and the original bytes of every 512-byte sector written since
//!   (an undo log), plus the writes since that sync in order;
//! * the *namespace operations* (create, mkdir, rename, remove) whose
//!   directory was not synced since: a file created or renamed into a
//!   directory that was not synced afterwards is not durable, nor is a
//!   removal.
//!
//! [`FaultInjector::power_loss`] then rewrites the directory tree into what
//! survives: every namespace operation not made durable is undone (newest
//! first) and every file is cut back to its durable image, or, with
//! [`PowerLoss::torn`], keeps an in-order prefix of its unsynced writes cut
//! at a sector boundary and a prefix of the unsynced namespace operations.
//!
//! Syncs are simulated, not performed: durability is what this model says,
//! and the tests run without waiting for the disk.
//!
//! Faults come from [`FaultRule`]s (an operation, optionally a file kind, an
//! error, and when it fires: after a countdown of matching calls, a number of
//! times, or with a seeded probability) and from the crash countdown
//! ([`FaultInjector::crash_at_call`]): the power goes out at that mutating
//! call, which fails like every call after it, so nothing more reaches the
//! disk ("stop the world"). A failed sync loses the file's unsynced writes
//! at once, as the page cache may drop them after a failed `fdatasync`.
//!
//! The back end exists only in builds with the `fault-injection` feature
//! (and the engine's own tests): a database uses it only when
//! `DbOptions::fault_injector` hands it an injector, so no production
//! build can pick it by accident.
#![cfg_attr(
    not(feature = "fault-injection"),
    expect(
        dead_code,
        reason = "without the feature only the engine's own tests use it, and not all of it"
    )
)]

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{SyncKind, sync as plain};
use crate::names::{CREATING_SUFFIX, CURRENT_FILE, HFILE_SUFFIX, SEGMENT_SUFFIX};

/// The unit a torn write is cut at, and the unit of the undo log, in bytes.
pub const SECTOR_BYTES: u64 = 512;

/// What kind of file an I/O call touches (from its name, `docs/format.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileKind {
    /// A WAL segment (`*.wal`, `*.wal.creating`, copies in `wal/damaged/`).
    Wal,
    /// An HFile (`*.hfile`).
    HFile,
    /// A manifest (`MANIFEST-*`) or the file naming it (`CURRENT`, `CURRENT.tmp`).
    Manifest,
    /// A directory (created, or synced to make its entries durable).
    Directory,
    /// Anything else.
    Other,
}

impl FileKind {
    /// The kind of the file at `path`, by its name.
    pub fn of(path: &Path) -> FileKind {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let in_damaged_wal = path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d == crate::names::DAMAGED_WAL_DIR);
        if name.ends_with(SEGMENT_SUFFIX)
            || name.ends_with(&format!("{SEGMENT_SUFFIX}{CREATING_SUFFIX}"))
            || in_damaged_wal
        {
            FileKind::Wal
        } else if name.ends_with(HFILE_SUFFIX) {
            FileKind::HFile
        } else if name.starts_with("MANIFEST-") || name.starts_with(CURRENT_FILE) {
            FileKind::Manifest
        } else {
            FileKind::Other
        }
    }

    /// Lowercase name, for reports.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Wal => "wal",
            FileKind::HFile => "hfile",
            FileKind::Manifest => "manifest",
            FileKind::Directory => "directory",
            FileKind::Other => "other",
        }
    }
}

/// What an I/O call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IoOp {
    /// Reading a file.
    Read,
    /// Writing, appending, preallocating or truncating a file.
    Write,
    /// `fdatasync`/`fsync` of a file, or of a directory (kind [`FileKind::Directory`]).
    Sync,
    /// Creating a file or a directory.
    Create,
    /// Renaming a file.
    Rename,
    /// Removing a file.
    Remove,
}

impl IoOp {
    /// Whether the call can change what is on disk (the crash countdown
    /// counts these).
    pub fn is_mutating(self) -> bool {
        self != IoOp::Read
    }

    /// Lowercase name, for reports.
    pub fn name(self) -> &'static str {
        match self {
            IoOp::Read => "read",
            IoOp::Write => "write",
            IoOp::Sync => "sync",
            IoOp::Create => "create",
            IoOp::Rename => "rename",
            IoOp::Remove => "remove",
        }
    }
}

/// The error a rule injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InjectedError {
    /// `EIO`: the call fails and changes nothing (a failed sync also loses
    /// the file's unsynced writes).
    Eio,
    /// `ENOSPC`: the call fails and changes nothing.
    Enospc,
    /// A short write: the first half of the buffer (rounded down to whole
    /// sectors) reaches the file, then the call fails with `ENOSPC`, as a
    /// write that fills the disk ends. On calls other than writes, `ENOSPC`.
    ShortWrite,
}

impl InjectedError {
    /// The error's name, for reports.
    pub fn name(self) -> &'static str {
        match self {
            InjectedError::Eio => "EIO",
            InjectedError::Enospc => "ENOSPC",
            InjectedError::ShortWrite => "short write",
        }
    }

    fn to_io_error(self, op: IoOp, path: &Path) -> io::Error {
        let errno = match self {
            InjectedError::Eio => libc::EIO,
            InjectedError::Enospc | InjectedError::ShortWrite => libc::ENOSPC,
        };
        let os = io::Error::from_raw_os_error(errno);
        io::Error::new(
            os.kind(),
            format!(
                "injected {} on {} of {}: {os}",
                self.name(),
                op.name(),
                path.display()
            ),
        )
    }
}

/// When and where a fault fires: built with [`FaultRule::new`] and its
/// refinements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRule {
    op: IoOp,
    kind: Option<FileKind>,
    error: InjectedError,
    /// Matching calls let through before the rule may fire.
    skip_calls: u64,
    /// Times the rule may still fire (`None`: no limit).
    remaining: Option<u64>,
    /// Each eligible call fails with probability 1 / this (1: always).
    one_in: u32,
}

impl FaultRule {
    /// Every call doing `op` fails with `error`, on any file, until the
    /// rule is cleared (a full disk stays full).
    pub fn new(op: IoOp, error: InjectedError) -> FaultRule {
        FaultRule {
            op,
            kind: None,
            error,
            skip_calls: 0,
            remaining: None,
            one_in: 1,
        }
    }

    /// Only calls on files of `kind`.
    pub fn on(mut self, kind: FileKind) -> FaultRule {
        self.kind = Some(kind);
        self
    }

    /// Lets `calls` matching calls succeed before the rule fires (a countdown).
    pub fn after(mut self, calls: u64) -> FaultRule {
        self.skip_calls = calls;
        self
    }

    /// Fires at most `times` times.
    pub fn times(mut self, times: u64) -> FaultRule {
        self.remaining = Some(times);
        self
    }

    /// Fires on each eligible call with probability `1 / n` (the injector's
    /// seed decides which), instead of on every one.
    pub fn one_in(mut self, n: u32) -> FaultRule {
        self.one_in = n.max(1);
        self
    }

    fn matches(&self, op: IoOp, kind: FileKind) -> bool {
        self.op == op && self.kind.is_none_or(|k| k == kind)
    }
}

/// Where the power went out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashPoint {
    /// The number of the mutating call that found the power gone (`0`:
    /// [`FaultInjector::crash_now`] or a power loss without a countdown).
    pub call: u64,
    /// What that call was doing (`None` for [`FaultInjector::crash_now`]).
    pub op: Option<IoOp>,
    /// The kind of file it touched.
    pub kind: Option<FileKind>,
    /// The file it touched.
    pub path: Option<PathBuf>,
}

/// What a power loss keeps of what was not durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PowerLoss {
    torn_seed: Option<u64>,
}

impl PowerLoss {
    /// Everything not durable is lost: unsynced writes, and namespace
    /// operations whose directory was not synced (the strictest disk).
    pub fn drop_unsynced() -> PowerLoss {
        PowerLoss { torn_seed: None }
    }

    /// Each file keeps an in-order prefix of its unsynced writes, cut at a
    /// 512-byte sector boundary (inside a write or between two), and an
    /// in-order prefix of the unsynced namespace operations survives; `seed`
    /// picks the cuts. This is a disk that writes back in order and loses
    /// power part way.
    pub fn torn(seed: u64) -> PowerLoss {
        PowerLoss {
            torn_seed: Some(seed),
        }
    }
}

/// What a power loss changed on disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PowerLossReport {
    /// Namespace operations undone (created files and directories
    /// removed, renames and removals reverted).
    pub names_undone: u64,
    /// Unsynced namespace operations that survived (torn mode only).
    pub names_kept: u64,
    /// Files whose content or length changed.
    pub files_reverted: u64,
    /// Unsynced bytes that did not survive.
    pub bytes_lost: u64,
    /// Unsynced bytes that survived (torn mode only).
    pub bytes_kept: u64,
}

/// A handle to one simulated disk. Cheap to clone; every clone drives the
/// same state. Pass it to a database through `DbOptions::fault_injector`.
#[derive(Clone)]
pub struct FaultInjector {
    shared: Arc<Mutex<State>>,
    /// For the handle a database holds: the boot it was opened in. After a
    /// power loss every call through it fails, so a database (or a worker
    /// thread of one) that outlived the power loss can never touch the
    /// restored disk. `None` for the test's own handle.
    boot: Option<u64>,
}

impl std::fmt::Debug for FaultInjector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("FaultInjector")
            .field("mutating_calls", &state.mutating_calls)
            .field("crashed", &state.crashed)
            .field("rules", &state.rules.len())
            .finish()
    }
}

/// A write or truncation not yet synced, kept so that a torn power loss can
/// replay a prefix of them.
#[derive(Debug, Clone)]
enum DataOp {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
}

/// The durability bookkeeping of one file.
#[derive(Debug)]
struct FileState {
    /// Where the file is now.
    path: PathBuf,
    /// The file's length as of its last sync.
    durable_len: u64,
    /// Original bytes (up to `durable_len`) of every sector changed since
    /// the last sync, by sector number.
    undo: BTreeMap<u64, Vec<u8>>,
    /// Changes since the last sync, oldest first.
    unsynced: Vec<DataOp>,
}

/// A file's durable content, kept for a removal or a rename over it that a
/// power loss may undo.
#[derive(Debug, Clone)]
struct Saved {
    /// Bytes, without trailing zeros.
    bytes: Vec<u8>,
    len: u64,
}

/// A namespace operation whose directory was not synced since.
#[derive(Debug)]
enum NameOp {
    CreateFile {
        path: PathBuf,
        file: u64,
    },
    CreateDir {
        path: PathBuf,
    },
    Rename {
        from: PathBuf,
        to: PathBuf,
        file: u64,
        replaced: Option<Saved>,
    },
    Remove {
        path: PathBuf,
        saved: Saved,
    },
}

impl NameOp {
    /// The directory whose sync makes the operation durable.
    fn dir(&self) -> PathBuf {
        let path = match self {
            NameOp::CreateFile { path, .. }
            | NameOp::CreateDir { path }
            | NameOp::Remove { path, .. } => path,
            NameOp::Rename { to, .. } => to,
        };
        super::parent_of(path)
    }
}

struct State {
    /// Power losses so far.
    boot: u64,
    rules: Vec<(FaultRule, u64)>,
    rng: u64,
    mutating_calls: u64,
    crash_at_call: Option<u64>,
    /// The power goes out at the n-th mutating call on a file of this kind.
    crash_at_kind_call: Option<(FileKind, u64)>,
    crashed: Option<CrashPoint>,
    injected: u64,
    next_file: u64,
    files: HashMap<u64, FileState>,
    /// File number by inode, for the files that have a name.
    by_inode: HashMap<u64, u64>,
    pending: Vec<NameOp>,
}

/// A small deterministic generator (SplitMix64): the injector's
/// probabilities and torn cuts repeat for a seed.
fn next_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn power_is_off(path: &Path) -> io::Error {
    let os = io::Error::from_raw_os_error(libc::EIO);
    io::Error::new(
        os.kind(),
        format!(
            "simulated power loss before I/O on {}: {os}",
            path.display()
        ),
    )
}

fn inode_of(file: &File) -> io::Result<u64> {
    Ok(file.metadata()?.ino())
}

impl State {
    /// Fails once the power is out.
    fn check_power(&self, path: &Path) -> io::Result<()> {
        match self.crashed {
            Some(_) => Err(power_is_off(path)),
            None => Ok(()),
        }
    }

    /// Decides the fate of one call: `Err` when the power is off (or goes
    /// off now), `Some(error)` when a rule fires.
    fn admit(
        &mut self,
        op: IoOp,
        kind: FileKind,
        path: &Path,
    ) -> io::Result<Option<InjectedError>> {
        self.check_power(path)?;
        if op.is_mutating() {
            self.mutating_calls += 1;
            let kind_due = match &mut self.crash_at_kind_call {
                Some((k, n)) if *k == kind => {
                    *n = n.saturating_sub(1);
                    *n == 0
                }
                _ => false,
            };
            if kind_due || self.crash_at_call == Some(self.mutating_calls) {
                self.crashed = Some(CrashPoint {
                    call: self.mutating_calls,
                    op: Some(op),
                    kind: Some(kind),
                    path: Some(path.to_path_buf()),
                });
                return Err(power_is_off(path));
            }
        }
        for i in 0..self.rules.len() {
            let Some((rule, seen)) = self.rules.get_mut(i) else {
                continue;
            };
            if !rule.matches(op, kind) || rule.remaining == Some(0) {
                continue;
            }
            *seen += 1;
            if *seen <= rule.skip_calls {
                continue;
            }
            let (one_in, error) = (rule.one_in, rule.error);
            if one_in > 1 && !next_random(&mut self.rng).is_multiple_of(u64::from(one_in)) {
                continue;
            }
            if let Some((rule, _)) = self.rules.get_mut(i)
                && let Some(remaining) = rule.remaining.as_mut()
            {
                *remaining -= 1;
            }
            self.injected += 1;
            return Ok(Some(error));
        }
        Ok(None)
    }

    /// Starts tracking a file that existed before this boot (its bytes on
    /// disk are durable), or returns its number if tracked already.
    fn track_existing(&mut self, file: &File, path: &Path) -> io::Result<u64> {
        let meta = file.metadata()?;
        if let Some(&number) = self.by_inode.get(&meta.ino()) {
            return Ok(number);
        }
        Ok(self.track(meta.ino(), path, meta.len()))
    }

    fn track(&mut self, inode: u64, path: &Path, durable_len: u64) -> u64 {
        let number = self.next_file;
        self.next_file += 1;
        self.files.insert(
            number,
            FileState {
                path: path.to_path_buf(),
                durable_len,
                undo: BTreeMap::new(),
                unsynced: Vec::new(),
            },
        );
        self.by_inode.insert(inode, number);
        number
    }

    /// Forgets a file that lost its name.
    fn untrack_path(&mut self, path: &Path) -> Option<FileState> {
        let number = self
            .files
            .iter()
            .find(|(_, f)| f.path == path)
            .map(|(n, _)| *n)?;
        self.by_inode.retain(|_, n| *n != number);
        self.files.remove(&number)
    }

    /// Saves the original bytes of the sectors `[start, end)` touches that
    /// lie inside the durable length and were not saved since the last sync.
    fn save_undo(&mut self, number: u64, file: &File, start: u64, end: u64) -> io::Result<()> {
        let Some(state) = self.files.get_mut(&number) else {
            return Ok(());
        };
        let end = end.min(state.durable_len);
        if start >= end {
            return Ok(());
        }
        for sector in start / SECTOR_BYTES..end.div_ceil(SECTOR_BYTES) {
            if state.undo.contains_key(&sector) {
                continue;
            }
            let at = sector * SECTOR_BYTES;
            let len = SECTOR_BYTES.min(state.durable_len - at);
            let mut original = vec![0u8; len as usize];
            let read = plain::read_at(file, at, &mut original)?;
            // Bytes past the current end were cut by a truncation, which
            // saved them first; what is missing here reads as zeros.
            original.truncate(read);
            original.resize(len as usize, 0);
            state.undo.insert(sector, original);
        }
        Ok(())
    }

    /// A write that reaches the file (not yet durable).
    fn write(&mut self, number: u64, file: &File, offset: u64, data: &[u8]) -> io::Result<()> {
        self.save_undo(number, file, offset, offset + data.len() as u64)?;
        if let Some(state) = self.files.get_mut(&number) {
            state.unsynced.push(DataOp::Write {
                offset,
                data: data.to_vec(),
            });
        }
        plain::write_at(file, offset, data)
    }

    /// A length change that reaches the file (not yet durable).
    fn set_len(&mut self, number: u64, file: &File, len: u64) -> io::Result<()> {
        let current = file.metadata()?.len();
        if len < current {
            self.save_undo(number, file, len, current)?;
        }
        if let Some(state) = self.files.get_mut(&number) {
            state.unsynced.push(DataOp::SetLen(len));
        }
        file.set_len(len)
    }

    /// A successful sync: what the file holds now is durable.
    fn synced(&mut self, number: u64, file: &File) -> io::Result<()> {
        let len = file.metadata()?.len();
        if let Some(state) = self.files.get_mut(&number) {
            state.durable_len = len;
            state.undo.clear();
            state.unsynced.clear();
        }
        Ok(())
    }

    /// A failed sync: the unsynced writes are gone (the page cache may have
    /// dropped them), so the file reads back as its durable image.
    fn sync_failed(&mut self, number: u64, file: &File) -> io::Result<()> {
        if let Some(state) = self.files.get_mut(&number) {
            restore_durable(file, state)?;
            state.undo.clear();
            state.unsynced.clear();
        }
        Ok(())
    }

    /// The durable content of the file at `path` (its whole content when
    /// it is not tracked: untouched since boot).
    fn durable_content(&self, path: &Path) -> io::Result<Saved> {
        let mut bytes = std::fs::read(path)?;
        let state = self.files.values().find(|f| f.path == path);
        if let Some(state) = state {
            bytes.resize(state.durable_len as usize, 0);
            for (&sector, original) in &state.undo {
                let at = (sector * SECTOR_BYTES) as usize;
                if let Some(target) = bytes.get_mut(at..at + original.len()) {
                    target.copy_from_slice(original);
                }
            }
        }
        let len = bytes.len() as u64;
        let kept = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        bytes.truncate(kept);
        Ok(Saved { bytes, len })
    }
}

/// Writes `saved` as the whole content of `path`.
fn write_saved(path: &Path, saved: &Saved) -> io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    plain::write_at(&file, 0, &saved.bytes)?;
    file.set_len(saved.len)
}

/// Puts the file back to its durable image: its durable length, and the
/// original bytes of every sector changed since the last sync.
fn restore_durable(file: &File, state: &FileState) -> io::Result<()> {
    file.set_len(state.durable_len)?;
    for (&sector, original) in &state.undo {
        plain::write_at(file, sector * SECTOR_BYTES, original)?;
    }
    Ok(())
}

/// Bytes of the sector-aligned cut points inside (and at the end of) a
/// write: the lengths of the prefixes a torn write may keep.
fn cut_points(offset: u64, len: u64) -> Vec<u64> {
    let end = offset + len;
    let mut cuts: Vec<u64> = (offset / SECTOR_BYTES + 1..)
        .map(|s| s * SECTOR_BYTES)
        .take_while(|&b| b < end)
        .map(|b| b - offset)
        .collect();
    cuts.push(len);
    cuts
}

impl Default for FaultInjector {
    fn default() -> Self {
        FaultInjector::new(0)
    }
}

impl FaultInjector {
    /// A simulated disk with no faults armed; `seed` drives the rules'
    /// probabilities.
    pub fn new(seed: u64) -> FaultInjector {
        FaultInjector {
            boot: None,
            shared: Arc::new(Mutex::new(State {
                boot: 0,
                rules: Vec::new(),
                rng: seed,
                mutating_calls: 0,
                crash_at_call: None,
                crash_at_kind_call: None,
                crashed: None,
                injected: 0,
                next_file: 0,
                files: HashMap::new(),
                by_inode: HashMap::new(),
                pending: Vec::new(),
            })),
        }
    }

    /// Arms a rule (rules are checked in the order they were added; the
    /// first that fires decides).
    pub fn add_rule(&self, rule: FaultRule) {
        self.shared.lock().rules.push((rule, 0));
    }

    /// Disarms every rule (for ENOSPC: space was freed).
    pub fn clear_rules(&self) {
        self.shared.lock().rules.clear();
    }

    /// The power goes out at mutating call number `call` (counted from 1
    /// since the injector was made or last lost power; see
    /// [`FaultInjector::mutating_calls`]): that call and every later one
    /// fail with `EIO` and change nothing.
    pub fn crash_at_call(&self, call: u64) {
        self.shared.lock().crash_at_call = Some(call);
    }

    /// The power goes out at the `call`-th mutating call (from 1, counted
    /// from now) on a file of `kind`: a way to land a power loss inside a
    /// flush or compaction (`HFile`), a manifest edit or rewrite
    /// (`Manifest`), or a directory change (`Directory`) of a busy writer.
    pub fn crash_at_call_on(&self, kind: FileKind, call: u64) {
        self.shared.lock().crash_at_kind_call = Some((kind, call.max(1)));
    }

    /// The power goes out now: every later call fails.
    pub fn crash_now(&self) {
        let mut state = self.shared.lock();
        if state.crashed.is_none() {
            state.crashed = Some(CrashPoint {
                call: 0,
                op: None,
                kind: None,
                path: None,
            });
        }
    }

    /// Whether the power is out.
    pub fn has_crashed(&self) -> bool {
        self.shared.lock().crashed.is_some()
    }

    /// Where the power went out, if it did.
    pub fn crash_point(&self) -> Option<CrashPoint> {
        self.shared.lock().crashed.clone()
    }

    /// Mutating calls (writes, syncs, creations, renames, removals) so far.
    pub fn mutating_calls(&self) -> u64 {
        self.shared.lock().mutating_calls
    }

    /// Faults the rules injected so far.
    pub fn faults_injected(&self) -> u64 {
        self.shared.lock().injected
    }

    /// Simulates a power loss: the power goes out (if it has not), then the
    /// directory tree is rewritten into what survives (see [`PowerLoss`]),
    /// then the disk "reboots": everything on it is durable, nothing is
    /// tracked, no rule is armed, and calls work again. Close (drop) every
    /// database using the injector first: their files are rewritten under
    /// them. Fails only if the real files cannot be rewritten.
    pub fn power_loss(&self, mode: PowerLoss) -> io::Result<PowerLossReport> {
        let mut state = self.shared.lock();
        let mut report = PowerLossReport::default();
        let mut rng = mode.torn_seed.unwrap_or(0);
        let pending = std::mem::take(&mut state.pending);
        let kept = match mode.torn_seed {
            Some(_) => (next_random(&mut rng) % (pending.len() as u64 + 1)) as usize,
            None => 0,
        };
        report.names_kept = kept as u64;
        let mut undone: Vec<NameOp> = pending.into_iter().skip(kept).collect();
        while let Some(op) = undone.pop() {
            report.names_undone += 1;
            undo(&mut state, op)?;
        }
        let files = std::mem::take(&mut state.files);
        for file in files.into_values() {
            let Ok(real) = OpenOptions::new().read(true).write(true).open(&file.path) else {
                // Its directory's creation was undone.
                continue;
            };
            if file.unsynced.is_empty() && file.undo.is_empty() {
                let len = real.metadata()?.len();
                if len == file.durable_len {
                    continue;
                }
            }
            report.files_reverted += 1;
            let mut ops = Vec::new();
            if mode.torn_seed.is_some() {
                // Every cut point of every unsynced change, in order: the
                // file keeps the changes before a random one of them.
                let mut points: Vec<(usize, u64)> = vec![(0, 0)];
                for (i, op) in file.unsynced.iter().enumerate() {
                    match op {
                        DataOp::SetLen(_) => points.push((i + 1, 0)),
                        DataOp::Write { offset, data } => points.extend(
                            cut_points(*offset, data.len() as u64)
                                .into_iter()
                                .map(|cut| (i, cut)),
                        ),
                    }
                }
                let pick = (next_random(&mut rng) % points.len() as u64) as usize;
                let (whole, part) = points.get(pick).copied().unwrap_or((0, 0));
                ops = file.unsynced.iter().take(whole).cloned().collect();
                if part > 0
                    && let Some(DataOp::Write { offset, data }) = file.unsynced.get(whole)
                {
                    ops.push(DataOp::Write {
                        offset: *offset,
                        data: data.get(..part as usize).unwrap_or_default().to_vec(),
                    });
                }
            }
            let total: u64 = file
                .unsynced
                .iter()
                .map(|op| match op {
                    DataOp::Write { data, .. } => data.len() as u64,
                    DataOp::SetLen(_) => 0,
                })
                .sum();
            restore_durable(&real, &file)?;
            let mut kept_bytes = 0;
            for op in &ops {
                match op {
                    DataOp::Write { offset, data } => {
                        plain::write_at(&real, *offset, data)?;
                        kept_bytes += data.len() as u64;
                    }
                    DataOp::SetLen(len) => real.set_len(*len)?,
                }
            }
            report.bytes_kept += kept_bytes;
            report.bytes_lost += total - kept_bytes;
        }
        state.by_inode.clear();
        state.rules.clear();
        state.crashed = None;
        state.crash_at_call = None;
        state.crash_at_kind_call = None;
        state.mutating_calls = 0;
        state.boot += 1;
        Ok(report)
    }

    // ---- calls from the io layer ----

    /// A handle for a database opened now: it stops working at the next
    /// power loss.
    pub(crate) fn for_this_boot(&self) -> FaultInjector {
        let boot = self.shared.lock().boot;
        FaultInjector {
            shared: self.shared.clone(),
            boot: Some(boot),
        }
    }

    /// The state, locked, unless this handle belongs to an earlier boot.
    fn state(&self, path: &Path) -> io::Result<parking_lot::MutexGuard<'_, State>> {
        let state = self.shared.lock();
        match self.boot {
            Some(boot) if boot != state.boot => Err(power_is_off(path)),
            _ => Ok(state),
        }
    }

    fn admit(&self, op: IoOp, kind: FileKind, path: &Path) -> io::Result<()> {
        match self.state(path)?.admit(op, kind, path)? {
            Some(error) => Err(error.to_io_error(op, path)),
            None => Ok(()),
        }
    }

    /// Opens an existing file for reading (opening is not a counted call:
    /// it only fails once the power is out).
    pub(crate) fn open_read(&self, path: &Path) -> io::Result<(File, FaultFile)> {
        self.state(path)?.check_power(path)?;
        let file = File::open(path)?;
        Ok((file, self.handle(path, None)))
    }

    /// Opens an existing file for reading and writing.
    pub(crate) fn open_rw(&self, path: &Path) -> io::Result<(File, FaultFile)> {
        let mut state = self.state(path)?;
        state.check_power(path)?;
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let number = state.track_existing(&file, path)?;
        drop(state);
        Ok((file, self.handle(path, Some(number))))
    }

    /// Creates a new file (failing if it exists); its name is durable once
    /// its directory is synced.
    pub(crate) fn create_new(&self, path: &Path) -> io::Result<(File, FaultFile)> {
        let mut state = self.state(path)?;
        if let Some(error) = state.admit(IoOp::Create, FileKind::of(path), path)? {
            return Err(error.to_io_error(IoOp::Create, path));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        let number = state.track(inode_of(&file)?, path, 0);
        state.pending.push(NameOp::CreateFile {
            path: path.to_path_buf(),
            file: number,
        });
        drop(state);
        Ok((file, self.handle(path, Some(number))))
    }

    fn handle(&self, path: &Path, number: Option<u64>) -> FaultFile {
        FaultFile {
            injector: self.clone(),
            number,
            kind: FileKind::of(path),
            path: path.to_path_buf(),
        }
    }

    /// Creates `path` and its missing parents; each is durable once its
    /// parent is synced.
    pub(crate) fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let mut missing: Vec<&Path> = path.ancestors().take_while(|p| !p.exists()).collect();
        if missing.is_empty() {
            return Ok(());
        }
        let mut state = self.state(path)?;
        if let Some(error) = state.admit(IoOp::Create, FileKind::Directory, path)? {
            return Err(error.to_io_error(IoOp::Create, path));
        }
        while let Some(dir) = missing.pop() {
            match std::fs::create_dir(dir) {
                Ok(()) => state.pending.push(NameOp::CreateDir {
                    path: dir.to_path_buf(),
                }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Renames `from` to `to` (same directory), replacing `to`.
    pub(crate) fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut state = self.state(to)?;
        if let Some(error) = state.admit(IoOp::Rename, FileKind::of(to), to)? {
            return Err(error.to_io_error(IoOp::Rename, to));
        }
        if from.parent() != to.parent() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the fault back end renames within one directory only",
            ));
        }
        let source = File::open(from)?;
        let number = state.track_existing(&source, from)?;
        let replaced = match state.durable_content(to) {
            Ok(saved) => Some(saved),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        std::fs::rename(from, to)?;
        if replaced.is_some() {
            state.untrack_path(to);
        }
        if let Some(file) = state.files.get_mut(&number) {
            file.path = to.to_path_buf();
        }
        state.pending.push(NameOp::Rename {
            from: from.to_path_buf(),
            to: to.to_path_buf(),
            file: number,
            replaced,
        });
        Ok(())
    }

    /// Removes the file at `path`; the removal is durable once its
    /// directory is synced.
    pub(crate) fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut state = self.state(path)?;
        if let Some(error) = state.admit(IoOp::Remove, FileKind::of(path), path)? {
            return Err(error.to_io_error(IoOp::Remove, path));
        }
        let saved = state.durable_content(path)?;
        std::fs::remove_file(path)?;
        state.untrack_path(path);
        state.pending.push(NameOp::Remove {
            path: path.to_path_buf(),
            saved,
        });
        Ok(())
    }

    /// Makes the namespace operations in `dir` durable.
    pub(crate) fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.state(dir)?;
        if let Some(error) = state.admit(IoOp::Sync, FileKind::Directory, dir)? {
            return Err(error.to_io_error(IoOp::Sync, dir));
        }
        state.pending.retain(|op| op.dir() != dir);
        // A directory is durable with its parent's sync, but what it holds
        // needs its own: nothing else changes.
        Ok(())
    }
}

/// Undoes one namespace operation on disk.
fn undo(state: &mut State, op: NameOp) -> io::Result<()> {
    let ignore_missing = |result: io::Result<()>| match result {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    };
    match op {
        NameOp::CreateFile { path, file } => {
            state.files.remove(&file);
            ignore_missing(std::fs::remove_file(&path))
        }
        NameOp::CreateDir { path } => {
            state.files.retain(|_, f| !f.path.starts_with(&path));
            ignore_missing(std::fs::remove_dir_all(&path))
        }
        NameOp::Rename {
            from,
            to,
            file,
            replaced,
        } => {
            ignore_missing(std::fs::rename(&to, &from))?;
            if let Some(f) = state.files.get_mut(&file) {
                f.path = from;
            }
            match replaced {
                Some(saved) => write_saved(&to, &saved),
                None => Ok(()),
            }
        }
        NameOp::Remove { path, saved } => write_saved(&path, &saved),
    }
}

/// The fault back end's side of one open file.
#[derive(Debug)]
pub(crate) struct FaultFile {
    injector: FaultInjector,
    /// The file's number in the injector (`None` for read-only handles).
    number: Option<u64>,
    kind: FileKind,
    path: PathBuf,
}

impl FaultFile {
    /// Reads up to `buf.len()` bytes at `offset`.
    pub(crate) fn read_at(&self, file: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.injector.admit(IoOp::Read, self.kind, &self.path)?;
        plain::read_at(file, offset, buf)
    }

    /// Writes all of `buf` at `offset`, then syncs if asked.
    pub(crate) fn write_at_then_sync(
        &self,
        file: &File,
        offset: u64,
        buf: &[u8],
        sync: Option<SyncKind>,
        in_flight: &mut dyn FnMut(),
    ) -> io::Result<()> {
        in_flight();
        {
            let mut state = self.injector.state(&self.path)?;
            let number = self.number.unwrap_or(u64::MAX);
            match state.admit(IoOp::Write, self.kind, &self.path)? {
                None => state.write(number, file, offset, buf)?,
                Some(InjectedError::ShortWrite) => {
                    let half = (buf.len() as u64 / 2) / SECTOR_BYTES * SECTOR_BYTES;
                    let prefix = buf.get(..half as usize).unwrap_or_default();
                    state.write(number, file, offset, prefix)?;
                    return Err(InjectedError::ShortWrite.to_io_error(IoOp::Write, &self.path));
                }
                Some(error) => return Err(error.to_io_error(IoOp::Write, &self.path)),
            }
        }
        match sync {
            Some(kind) => self.sync(file, kind),
            None => Ok(()),
        }
    }

    /// Makes the file's writes durable (in the model).
    pub(crate) fn sync(&self, file: &File, _kind: SyncKind) -> io::Result<()> {
        let mut state = self.injector.state(&self.path)?;
        let number = self.number.unwrap_or(u64::MAX);
        match state.admit(IoOp::Sync, self.kind, &self.path)? {
            None => state.synced(number, file),
            Some(error) => {
                state.sync_failed(number, file)?;
                Err(error.to_io_error(IoOp::Sync, &self.path))
            }
        }
    }

    /// Sets the file's length (a write, in the model).
    pub(crate) fn set_len(&self, file: &File, len: u64) -> io::Result<()> {
        let mut state = self.injector.state(&self.path)?;
        if let Some(error) = state.admit(IoOp::Write, self.kind, &self.path)? {
            return Err(error.to_io_error(IoOp::Write, &self.path));
        }
        state.set_len(self.number.unwrap_or(u64::MAX), file, len)
    }

    /// Extends the file to `len` bytes (preallocation never shrinks it).
    pub(crate) fn preallocate(&self, file: &File, len: u64) -> io::Result<()> {
        let mut state = self.injector.state(&self.path)?;
        if let Some(error) = state.admit(IoOp::Write, self.kind, &self.path)? {
            return Err(error.to_io_error(IoOp::Write, &self.path));
        }
        if file.metadata()?.len() >= len {
            return Ok(());
        }
        state.set_len(self.number.unwrap_or(u64::MAX), file, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(path: &Path) -> Vec<u8> {
        std::fs::read(path).unwrap()
    }

    #[test]
    fn unsynced_writes_and_unsynced_names_are_lost() {
        let root = tempfile::tempdir().unwrap();
        let disk = FaultInjector::new(1);
        let dir = root.path().join("d");
        disk.create_dir_all(&dir).unwrap();
        disk.sync_dir(root.path()).unwrap();
        // A durable file: written, synced, its name synced.
        let a = dir.join("a");
        let (file, handle) = disk.create_new(&a).unwrap();
        handle
            .write_at_then_sync(&file, 0, b"durable", Some(SyncKind::Data), &mut || {})
            .unwrap();
        disk.sync_dir(&dir).unwrap();
        // Then overwritten and extended without a sync.
        handle
            .write_at_then_sync(&file, 0, b"CHANGED and longer", None, &mut || {})
            .unwrap();
        // A synced file whose name was never synced.
        let b = dir.join("b");
        let (file_b, handle_b) = disk.create_new(&b).unwrap();
        handle_b
            .write_at_then_sync(&file_b, 0, b"lost", Some(SyncKind::All), &mut || {})
            .unwrap();
        assert_eq!(bytes(&a), b"CHANGED and longer");
        let report = disk.power_loss(PowerLoss::drop_unsynced()).unwrap();
        assert_eq!(bytes(&a), b"durable");
        assert!(!b.exists(), "a name whose directory was not synced is gone");
        assert_eq!(report.names_undone, 1);
        assert_eq!(report.bytes_lost, 18, "the unsynced overwrite of a");
        // After the loss the disk works again and all of it is durable.
        assert!(!disk.has_crashed());
        disk.power_loss(PowerLoss::drop_unsynced()).unwrap();
        assert_eq!(bytes(&a), b"durable");
    }

    #[test]
    fn renames_and_removals_are_undone_until_the_directory_is_synced() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        std::fs::write(dir.join("CURRENT"), b"old\n").unwrap();
        std::fs::write(dir.join("victim"), b"still here").unwrap();
        let disk = FaultInjector::new(2);
        let tmp = dir.join("CURRENT.tmp");
        // Installs a new CURRENT (written and synced, then renamed) and
        // removes the victim; the directory is not synced.
        let replace_current = || {
            let (file, handle) = disk.create_new(&tmp).unwrap();
            handle
                .write_at_then_sync(&file, 0, b"new\n", Some(SyncKind::All), &mut || {})
                .unwrap();
            disk.rename(&tmp, &dir.join("CURRENT")).unwrap();
            disk.remove_file(&dir.join("victim")).unwrap();
        };
        replace_current();
        assert_eq!(bytes(&dir.join("CURRENT")), b"new\n");
        disk.power_loss(PowerLoss::drop_unsynced()).unwrap();
        assert_eq!(bytes(&dir.join("CURRENT")), b"old\n");
        assert_eq!(bytes(&dir.join("victim")), b"still here");
        assert!(!tmp.exists());
        // The same steps with the directory synced survive.
        replace_current();
        disk.sync_dir(dir).unwrap();
        disk.power_loss(PowerLoss::drop_unsynced()).unwrap();
        assert_eq!(bytes(&dir.join("CURRENT")), b"new\n");
        assert!(!dir.join("victim").exists());
    }

    #[test]
    fn truncation_and_preallocation_revert_to_the_durable_length() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("000000000001.wal");
        let content: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8 + 1).collect();
        std::fs::write(&path, &content).unwrap();
        let disk = FaultInjector::new(3);
        let (file, handle) = disk.open_rw(&path).unwrap();
        handle.set_len(&file, 700).unwrap();
        handle.preallocate(&file, 8192).unwrap();
        handle
            .write_at_then_sync(&file, 1000, b"xyz", None, &mut || {})
            .unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 8192);
        disk.power_loss(PowerLoss::drop_unsynced()).unwrap();
        assert_eq!(bytes(&path), content);
    }

    #[test]
    fn a_torn_power_loss_keeps_an_in_order_prefix_cut_at_a_sector() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("f");
        std::fs::write(&path, vec![0u8; 4096]).unwrap();
        let data: Vec<u8> = (0..3000u32).map(|i| (i % 200) as u8 + 1).collect();
        let mut lengths = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let disk = FaultInjector::new(seed);
            let (file, handle) = disk.open_rw(&path).unwrap();
            handle
                .write_at_then_sync(&file, 100, &data, None, &mut || {})
                .unwrap();
            drop((file, handle));
            disk.power_loss(PowerLoss::torn(seed)).unwrap();
            let after = bytes(&path);
            assert_eq!(after.len(), 4096);
            let kept = after
                .get(100..3100)
                .unwrap()
                .iter()
                .zip(&data)
                .take_while(|(a, b)| a == b)
                .count();
            // What survives is a prefix of the write ending at a sector
            // boundary (or the whole write), and nothing after it.
            assert!(
                kept == 0 || kept == 3000 || (100 + kept as u64).is_multiple_of(SECTOR_BYTES),
                "kept {kept}"
            );
            assert!(after.get(100 + kept..3100).unwrap().iter().all(|&b| b == 0));
            lengths.insert(kept);
            std::fs::write(&path, vec![0u8; 4096]).unwrap();
        }
        assert!(lengths.len() > 3, "cuts vary with the seed: {lengths:?}");
    }

    #[test]
    fn rules_fire_by_countdown_kind_and_times_and_the_crash_stops_everything() {
        let root = tempfile::tempdir().unwrap();
        let disk = FaultInjector::new(4);
        disk.add_rule(
            FaultRule::new(IoOp::Write, InjectedError::Enospc)
                .on(FileKind::HFile)
                .after(1)
                .times(1),
        );
        let (file, handle) = disk
            .create_new(&root.path().join("000000000001.hfile"))
            .unwrap();
        let (other, other_handle) = disk.create_new(&root.path().join("x")).unwrap();
        let write = |h: &FaultFile, f: &File| h.write_at_then_sync(f, 0, b"abc", None, &mut || {});
        assert!(
            write(&handle, &file).is_ok(),
            "the countdown lets one through"
        );
        assert!(write(&other_handle, &other).is_ok(), "other kinds pass");
        let err = write(&handle, &file).unwrap_err();
        assert_eq!(err.raw_os_error(), None);
        assert_eq!(
            err.kind(),
            io::Error::from_raw_os_error(libc::ENOSPC).kind()
        );
        assert!(write(&handle, &file).is_ok(), "it fired its one time");
        assert_eq!(disk.faults_injected(), 1);
        let calls = disk.mutating_calls();
        disk.crash_at_call_on(FileKind::Other, 1);
        assert!(
            write(&handle, &file).is_ok(),
            "not a call on an `Other` file"
        );
        disk.crash_at_call(calls + 3);
        assert!(write(&handle, &file).is_ok());
        assert!(write(&handle, &file).is_err(), "the power goes out here");
        let mut buf = [0u8; 3];
        assert!(
            handle.read_at(&file, 0, &mut buf).is_err(),
            "reads stop too"
        );
        let point = disk.crash_point().unwrap();
        assert_eq!(
            (point.call, point.op, point.kind),
            (calls + 3, Some(IoOp::Write), Some(FileKind::HFile))
        );
    }

    #[test]
    fn a_short_write_lands_half_and_a_failed_sync_loses_the_unsynced_writes() {
        let root = tempfile::tempdir().unwrap();
        let disk = FaultInjector::new(5);
        let path = root.path().join("000000000007.wal");
        let (file, handle) = disk.create_new(&path).unwrap();
        handle
            .write_at_then_sync(&file, 0, b"synced", Some(SyncKind::Data), &mut || {})
            .unwrap();
        disk.add_rule(FaultRule::new(IoOp::Write, InjectedError::ShortWrite).times(1));
        let data = vec![7u8; 2048];
        assert!(
            handle
                .write_at_then_sync(&file, 6, &data, None, &mut || {})
                .is_err()
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 6 + 1024);
        disk.add_rule(FaultRule::new(IoOp::Sync, InjectedError::Eio).times(1));
        assert!(handle.sync(&file, SyncKind::Data).is_err());
        assert_eq!(bytes(&path), b"synced", "the failed sync dropped them");
        // A later successful sync does not bring them back.
        handle.sync(&file, SyncKind::Data).unwrap();
        assert_eq!(bytes(&path), b"synced");
    }

    #[test]
    fn probabilistic_rules_repeat_for_a_seed() {
        let outcomes = |seed| {
            let root = tempfile::tempdir().unwrap();
            let disk = FaultInjector::new(seed);
            disk.add_rule(FaultRule::new(IoOp::Read, InjectedError::Eio).one_in(3));
            let path = root.path().join("r");
            std::fs::write(&path, b"abc").unwrap();
            let (file, handle) = disk.open_read(&path).unwrap();
            (0..60)
                .map(|_| handle.read_at(&file, 0, &mut [0u8; 3]).is_ok())
                .collect::<Vec<bool>>()
        };
        let first = outcomes(9);
        assert_eq!(first, outcomes(9));
        let failures = first.iter().filter(|ok| !**ok).count();
        assert!((5..40).contains(&failures), "{failures} of 60");
    }

    #[test]
    fn a_handle_from_before_a_power_loss_never_touches_the_disk_again() {
        let root = tempfile::tempdir().unwrap();
        let disk = FaultInjector::new(10);
        let old = disk.for_this_boot();
        let path = root.path().join("f");
        let (file, handle) = old.create_new(&path).unwrap();
        handle
            .write_at_then_sync(&file, 0, b"synced", Some(SyncKind::All), &mut || {})
            .unwrap();
        old.sync_dir(root.path()).unwrap();
        disk.power_loss(PowerLoss::drop_unsynced()).unwrap();
        // A worker of the old database wakes up after the power loss.
        assert!(
            handle
                .write_at_then_sync(&file, 0, b"LATE!!", None, &mut || {})
                .is_err()
        );
        assert!(old.remove_file(&path).is_err());
        assert_eq!(bytes(&path), b"synced");
        // A database opened now works.
        let new = disk.for_this_boot();
        let (file, handle) = new.open_rw(&path).unwrap();
        handle
            .write_at_then_sync(&file, 0, b"again!", None, &mut || {})
            .unwrap();
        assert_eq!(bytes(&path), b"again!");
    }

    #[test]
    fn a_crash_can_wait_for_the_nth_call_on_one_kind_of_file() {
        let root = tempfile::tempdir().unwrap();
        let disk = FaultInjector::new(13);
        let (wal, wal_handle) = disk
            .create_new(&root.path().join("000000000001.wal"))
            .unwrap();
        let (sst, sst_handle) = disk
            .create_new(&root.path().join("000000000001.hfile"))
            .unwrap();
        disk.crash_at_call_on(FileKind::HFile, 2);
        let write = |h: &FaultFile, f: &File| h.write_at_then_sync(f, 0, b"abc", None, &mut || {});
        for _ in 0..5 {
            assert!(write(&wal_handle, &wal).is_ok());
        }
        assert!(write(&sst_handle, &sst).is_ok());
        assert!(write(&wal_handle, &wal).is_ok());
        assert!(write(&sst_handle, &sst).is_err(), "the second HFile call");
        assert_eq!(disk.crash_point().unwrap().kind, Some(FileKind::HFile));
    }

    #[test]
    fn file_kinds_come_from_names() {
        let kind = |p: &str| FileKind::of(Path::new(p));
        assert_eq!(kind("/d/wal/000000000001.wal"), FileKind::Wal);
        assert_eq!(kind("/d/wal/000000000001.wal.creating"), FileKind::Wal);
        assert_eq!(kind("/d/wal/damaged/000000000001.wal.1"), FileKind::Wal);
        assert_eq!(kind("/d/data/000000000001.hfile"), FileKind::HFile);
        assert_eq!(kind("/d/MANIFEST-000003"), FileKind::Manifest);
        assert_eq!(kind("/d/CURRENT.tmp"), FileKind::Manifest);
        assert_eq!(kind("/d/LOCK"), FileKind::Other);
    }
}
