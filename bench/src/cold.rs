//! Cold reads (`--cold`): before every timed operation the harness evicts
//! the OS page cache of every file under the engine's database directory,
//! so that a read which misses the engine's own (deliberately small) block
//! cache goes to the device.
//!
//! Eviction is `posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)` on each
//! regular file: it needs no privilege (unlike writing
//! `/proc/sys/vm/drop_caches`) and touches only this directory, not the
//! harness binary or other processes' files. DONTNEED drops clean pages
//! only, so each file is `fdatasync`ed once, when the evictor first sees it
//! (after the load and settle, so nothing is being written by then).
//!
//! Listing the directory tree before every operation would cost more than
//! the operation, so the evictor keeps every file open and lists the tree
//! again only when it may have changed: when the modification time (or
//! inode) of one of its directories changed (a file was created, deleted or
//! renamed in it, as flushes and compactions do), or when a directory was
//! modified so shortly before the last listing that a later change within
//! the same timestamp tick could go unnoticed. Files that vanish between the
//! listing and the open (compaction deletes its inputs) are skipped.

use std::collections::HashMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use crate::error::{BenchError, Result};
use crate::measure::MAX_DIRECTORY_DEPTH;

/// A directory modified less than this before a listing may be modified
/// again within the same file-system timestamp tick (coarse clocks tick
/// every 1-10 ms; some file systems store whole seconds), which would leave
/// its modification time unchanged: the listing is then redone before the
/// next eviction. One second covers every Linux file system a database
/// directory is likely to live on; the cost is re-listing during the first
/// second after a change only.
const RACY_WINDOW: Duration = Duration::from_secs(1);

/// What identifies a directory's contents at one moment: a file created,
/// deleted or renamed in it changes its modification time; a directory
/// replaced by another changes its inode.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DirStamp {
    path: PathBuf,
    dev: u64,
    ino: u64,
    /// `None` where the file system keeps no modification time.
    modified: Option<SystemTime>,
}

impl DirStamp {
    fn of(path: &Path, metadata: &std::fs::Metadata) -> DirStamp {
        DirStamp {
            path: path.to_path_buf(),
            dev: metadata.dev(),
            ino: metadata.ino(),
            modified: metadata.modified().ok(),
        }
    }

    /// True when the directory was modified within `window` before `now`
    /// (or after it: clocks disagree), so its timestamp cannot vouch for
    /// what happens next.
    fn is_racy(&self, now: SystemTime, window: Duration) -> bool {
        match self.modified.map(|modified| now.duration_since(modified)) {
            None => false,
            Some(Ok(age)) => age < window,
            Some(Err(_)) => true,
        }
    }
}

/// Cold reads' page-cache evictions during one timed phase (`--cold`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvictionReport {
    /// Evictions: one before every timed operation.
    pub evictions: u64,
    /// Regular files under the database directory each eviction covered
    /// (at the last listing).
    pub files: u64,
    /// Listings of the directory tree (the first, plus one per change seen).
    pub listings: u64,
    /// Seconds the evictions took; in no latency and not in `seconds`.
    pub seconds: f64,
}

/// One regular file kept open for eviction.
#[derive(Debug)]
struct OpenFile {
    path: PathBuf,
    /// (device, inode): the file's identity across listings.
    id: (u64, u64),
    file: File,
}

/// Evicts the page cache of every regular file under one directory tree.
#[derive(Debug)]
pub struct PageCacheEvictor {
    root: PathBuf,
    racy_window: Duration,
    dirs: Vec<DirStamp>,
    files: Vec<OpenFile>,
    /// The last listing may have missed a change (see `RACY_WINDOW`).
    racy: bool,
    evictions: u64,
    listings: u64,
    evict_time: Duration,
}

impl PageCacheEvictor {
    /// Lists the tree under `root`, opens every regular file read-only and
    /// `fdatasync`s it so that its pages are clean and can be dropped. Call
    /// it once the engine has stopped writing (after load and settle).
    pub fn new(root: &Path) -> Result<PageCacheEvictor> {
        PageCacheEvictor::with_racy_window(root, RACY_WINDOW)
    }

    fn with_racy_window(root: &Path, racy_window: Duration) -> Result<PageCacheEvictor> {
        let mut evictor = PageCacheEvictor {
            root: root.to_path_buf(),
            racy_window,
            dirs: Vec::new(),
            files: Vec::new(),
            racy: false,
            evictions: 0,
            listings: 0,
            evict_time: Duration::ZERO,
        };
        evictor.relist()?;
        Ok(evictor)
    }

    /// Drops every cached page of every file under the root, listing the
    /// tree again first if it may have changed.
    pub fn evict(&mut self) -> Result<()> {
        let started = Instant::now();
        if self.may_have_changed() {
            self.relist()?;
        }
        for open in &self.files {
            drop_cached_pages(&open.file)
                .map_err(|e| BenchError::io(format!("evicting {}", open.path.display()), e))?;
        }
        self.evictions += 1;
        self.evict_time += started.elapsed();
        Ok(())
    }

    /// What the evictor did so far.
    pub fn report(&self) -> EvictionReport {
        EvictionReport {
            evictions: self.evictions,
            files: self.files.len() as u64,
            listings: self.listings,
            seconds: self.evict_time.as_secs_f64(),
        }
    }

    /// True when a directory changed since the last listing (or vanished),
    /// or when that listing was racy.
    fn may_have_changed(&self) -> bool {
        self.racy
            || self
                .dirs
                .iter()
                .any(|stamp| match std::fs::metadata(&stamp.path) {
                    Ok(metadata) => DirStamp::of(&stamp.path, &metadata) != *stamp,
                    Err(_) => true,
                })
    }

    /// Lists the tree again; keeps the open handle of every file seen
    /// before (already synced), opens and syncs the new ones, and closes
    /// the handles of files that are gone.
    fn relist(&mut self) -> Result<()> {
        let listed_at = SystemTime::now();
        let mut dirs = Vec::new();
        let mut paths = Vec::new();
        list_tree(&self.root, 0, &mut dirs, &mut paths)?;
        let mut known: HashMap<(u64, u64), OpenFile> =
            self.files.drain(..).map(|open| (open.id, open)).collect();
        self.files = open_files(paths, &mut known)?;
        self.racy = dirs
            .iter()
            .any(|stamp| stamp.is_racy(listed_at, self.racy_window));
        self.dirs = dirs;
        self.listings += 1;
        Ok(())
    }
}

/// Whether an I/O error means "the entry is gone", which compaction and
/// WAL recycling cause between a listing and an open.
fn vanished(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound
}

/// Appends the stamp of `dir` and of every directory below it to `dirs`,
/// and the path of every regular file to `files`. Entries that vanish while
/// being listed are skipped; only a missing root is an error.
fn list_tree(
    dir: &Path,
    depth: usize,
    dirs: &mut Vec<DirStamp>,
    files: &mut Vec<PathBuf>,
) -> Result<()> {
    let context = || format!("listing {}", dir.display());
    // The stamp is taken before the entries are read, so a change made
    // while they are read shows as a changed stamp next time.
    let metadata = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if depth > 0 && vanished(&e) => return Ok(()),
        Err(e) => return Err(BenchError::io(context(), e)),
    };
    dirs.push(DirStamp::of(dir, &metadata));
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if depth > 0 && vanished(&e) => return Ok(()),
        Err(e) => return Err(BenchError::io(context(), e)),
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) if vanished(&e) => continue,
            Err(e) => return Err(BenchError::io(context(), e)),
        };
        // The type from the directory entry itself: symlinks are not
        // followed (engines write regular files; a link's target may lie
        // outside the directory).
        let file_type = match entry.file_type() {
            Ok(t) => t,
            Err(e) if vanished(&e) => continue,
            Err(e) => return Err(BenchError::io(context(), e)),
        };
        if file_type.is_dir() {
            if depth < MAX_DIRECTORY_DEPTH {
                list_tree(&entry.path(), depth + 1, dirs, files)?;
            }
        } else if file_type.is_file() {
            files.push(entry.path());
        }
    }
    Ok(())
}

/// Opens `paths` read-only, reusing the handles in `known` (files already
/// open and synced) by identity. A new file is `fdatasync`ed once, so its
/// pages are clean and DONTNEED can drop them. A path that no longer exists
/// is skipped.
fn open_files(
    paths: Vec<PathBuf>,
    known: &mut HashMap<(u64, u64), OpenFile>,
) -> Result<Vec<OpenFile>> {
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if vanished(&e) => continue,
            Err(e) => return Err(BenchError::io(format!("opening {}", path.display()), e)),
        };
        // The identity of what was opened (the path may name a new file by
        // now), from the open handle.
        let metadata = file
            .metadata()
            .map_err(|e| BenchError::io(format!("stat {}", path.display()), e))?;
        if !metadata.is_file() {
            continue;
        }
        let id = (metadata.dev(), metadata.ino());
        if let Some(mut open) = known.remove(&id) {
            // Already synced; it may have been renamed since.
            open.path = path;
            files.push(open);
            continue;
        }
        // Linux syncs through a read-only handle.
        file.sync_data()
            .map_err(|e| BenchError::io(format!("syncing {}", path.display()), e))?;
        files.push(OpenFile { path, id, file });
    }
    Ok(files)
}

/// Asks the kernel to drop every cached (clean) page of `file`.
fn drop_cached_pages(file: &File) -> std::io::Result<()> {
    // SAFETY: posix_fadvise only reads its integer arguments; the
    // descriptor belongs to `file`, which is open for the whole call.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    // posix_fadvise returns the error number instead of setting errno.
    match rc {
        0 => Ok(()),
        errno => Err(std::io::Error::from_raw_os_error(errno)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(evictor: &PageCacheEvictor) -> Vec<String> {
        let mut names: Vec<String> = evictor
            .files
            .iter()
            .map(|f| {
                f.path
                    .strip_prefix(&evictor.root)
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        names.sort();
        names
    }

    /// Moves the modification time of `dir` well away from "now", as a
    /// change in a later timestamp tick would.
    fn set_mtime(dir: &Path, secs_since_epoch: u64) {
        let handle = File::open(dir).unwrap();
        handle
            .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs_since_epoch))
            .unwrap();
    }

    #[test]
    fn every_regular_file_of_the_tree_is_opened_and_evicted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data/deep")).unwrap();
        std::fs::create_dir(dir.path().join("wal")).unwrap();
        std::fs::write(dir.path().join("CURRENT"), b"x").unwrap();
        std::fs::write(dir.path().join("data/000001.hfile"), vec![7u8; 10_000]).unwrap();
        std::fs::write(dir.path().join("data/deep/000002.hfile"), b"y").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("link")).unwrap();
        let mut evictor = PageCacheEvictor::new(dir.path()).unwrap();
        assert_eq!(
            names(&evictor),
            ["CURRENT", "data/000001.hfile", "data/deep/000002.hfile"]
        );
        assert_eq!(evictor.dirs.len(), 4);
        evictor.evict().unwrap();
        evictor.evict().unwrap();
        let report = evictor.report();
        assert_eq!(report.evictions, 2);
        assert_eq!(report.files, 3);
        assert!(report.listings >= 1);
    }

    #[test]
    fn a_file_that_vanished_after_the_listing_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let present = dir.path().join("present");
        std::fs::write(&present, b"x").unwrap();
        let gone = dir.path().join("gone");
        let files = open_files(vec![gone, present.clone()], &mut HashMap::new()).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, present);
        // A subdirectory that vanished is skipped too; a missing root is not.
        let (mut dirs, mut paths) = (Vec::new(), Vec::new());
        list_tree(&dir.path().join("no-such-dir"), 1, &mut dirs, &mut paths).unwrap();
        assert!(dirs.is_empty() && paths.is_empty());
        assert!(PageCacheEvictor::new(&dir.path().join("no-such-dir")).is_err());
    }

    #[test]
    fn the_tree_is_listed_again_only_when_a_directory_changed() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        std::fs::write(data.join("a"), b"a").unwrap();
        std::fs::write(data.join("b"), b"b").unwrap();
        set_mtime(&data, 1_000_000);
        set_mtime(dir.path(), 1_000_000);
        let mut evictor = PageCacheEvictor::with_racy_window(dir.path(), RACY_WINDOW).unwrap();
        assert!(!evictor.racy, "timestamps far in the past are not racy");
        evictor.evict().unwrap();
        evictor.evict().unwrap();
        assert_eq!(evictor.report().listings, 1, "nothing changed");

        // Compaction replaces `a` by `c`: the directory's mtime moves.
        let a_id = evictor
            .files
            .iter()
            .find(|f| f.path.ends_with("a"))
            .unwrap()
            .id;
        std::fs::write(data.join("c"), b"c").unwrap();
        std::fs::remove_file(data.join("a")).unwrap();
        set_mtime(&data, 1_000_001);
        evictor.evict().unwrap();
        assert_eq!(evictor.report().listings, 2);
        assert_eq!(names(&evictor), ["data/b", "data/c"]);
        assert!(evictor.files.iter().all(|f| f.id != a_id));
    }

    #[test]
    fn a_recently_modified_directory_makes_the_next_eviction_list_again() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), b"a").unwrap();
        // Just written: within the racy window (an hour here, so that a
        // stalled test machine cannot make the listing look old).
        let mut evictor =
            PageCacheEvictor::with_racy_window(dir.path(), Duration::from_secs(3600)).unwrap();
        assert!(evictor.racy);
        // A file added within the same timestamp tick is still found.
        std::fs::write(dir.path().join("b"), b"b").unwrap();
        evictor.evict().unwrap();
        assert_eq!(names(&evictor), ["a", "b"]);
        assert_eq!(evictor.report().listings, 2);
    }

    /// True when `path` lies on a file system whose page cache DONTNEED is
    /// known to drop (tmpfs pages, for one, are the file's only copy).
    fn evictable_file_system(path: &Path) -> bool {
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        let mut stat = std::mem::MaybeUninit::<libc::statfs>::zeroed();
        // SAFETY: `c_path` is NUL-terminated and outlives the call; statfs
        // writes one `statfs` into memory we own.
        let rc = unsafe { libc::statfs(c_path.as_ptr(), stat.as_mut_ptr()) };
        if rc != 0 {
            return false;
        }
        // glibc's `f_type` and these constants are both a C long.
        // SAFETY: statfs succeeded, so the struct is initialized (and zeroed
        // memory is a valid `statfs` of plain integers anyway).
        let kind = unsafe { stat.assume_init() }.f_type;
        [
            libc::EXT4_SUPER_MAGIC,
            libc::XFS_SUPER_MAGIC,
            libc::BTRFS_SUPER_MAGIC,
        ]
        .contains(&kind)
    }

    /// Reads the first 4 KiB only if they are in the page cache
    /// (`RWF_NOWAIT` fails with EAGAIN instead of reading the device).
    fn first_page_is_cached(file: &File) -> bool {
        let mut buf = vec![0u8; 4096];
        let iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: the one iovec points at `buf`, which is writable for its
        // whole length and outlives the call; the descriptor is open.
        let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, 0, libc::RWF_NOWAIT) };
        n > 0
    }

    #[test]
    fn evicted_pages_leave_the_page_cache() {
        let dir = tempfile::tempdir().unwrap();
        if !evictable_file_system(dir.path()) {
            eprintln!("skipped: the temp dir's file system is not ext4, xfs or btrfs");
            return;
        }
        let path = dir.path().join("blocks");
        std::fs::write(&path, vec![3u8; 1 << 20]).unwrap();
        let file = File::open(&path).unwrap();
        let mut evictor = PageCacheEvictor::new(dir.path()).unwrap();
        // Written and synced: the pages are cached and clean.
        assert!(first_page_is_cached(&file));
        evictor.evict().unwrap();
        assert!(!first_page_is_cached(&file));
    }
}
