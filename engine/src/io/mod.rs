//! File I/O behind one interface with two back ends (and a third for tests).
//!
//! * io_uring ([`uring`]): one ring per thread, created lazily. `read_many`
//!   submits every read of a batch at once, and the WAL's write and
//!   `fdatasync` go in as linked SQEs.
//! * sync ([`sync`]): `pread`/`pwrite`/`fdatasync`, for kernels or sandboxes
//!   where a ring cannot be set up.
//! * fault ([`fault`], only with the `fault-injection` feature): a simulated
//!   disk that injects errors and power losses, for the reliability tests.
//!
//! The back end is chosen once per database ([`Io::resolve`]): the
//! `STRATA_IO=sync|uring` environment variable wins over [`IoMode`]; in
//! `Auto` mode a failure to set up a ring is reported once on stderr and the
//! sync back end is used. Every call finishes all the I/O it started before
//! it returns, so no buffer is ever left in the kernel's hands.
//!
//! Every change to the directory tree goes through here too (creating
//! directories, renaming and removing files, syncing a directory), so that
//! the fault back end sees what a power loss could undo.

#[cfg(any(test, feature = "fault-injection"))]
pub mod fault;
mod sync;
mod uring;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::options::IoMode;

/// The environment variable that forces a back end.
pub const IO_ENV_VAR: &str = "STRATA_IO";

/// Largest byte count handed to the kernel in one request (io_uring takes a
/// u32 length; larger transfers are split).
const MAX_IO_BYTES: usize = 1 << 30;

/// Which back end performs I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// io_uring, one ring per thread.
    Uring,
    /// `pread`/`pwrite`/`fdatasync`.
    Sync,
    /// The fault-injecting simulated disk of the reliability tests
    /// (`DbOptions::fault_injector`).
    #[cfg(any(test, feature = "fault-injection"))]
    Fault,
}

impl Backend {
    /// Lowercase name, as `STRATA_IO` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Uring => "uring",
            Backend::Sync => "sync",
            #[cfg(any(test, feature = "fault-injection"))]
            Backend::Fault => "fault",
        }
    }
}

/// What a sync must make durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SyncKind {
    /// `fdatasync`: the data and the metadata needed to read it back.
    Data,
    /// `fsync`: data and all metadata.
    All,
}

/// The chosen back end; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Io {
    backend: Backend,
    /// The simulated disk every call goes through, when the database was
    /// given one (the `backend` is then [`Backend::Fault`]).
    #[cfg(any(test, feature = "fault-injection"))]
    faults: Option<fault::FaultInjector>,
    /// Files opened through this `Io` (and its clones) and not yet closed.
    open_files: Arc<AtomicU64>,
}

/// The read of a `read_many` batch that failed, and why.
#[derive(Debug)]
pub(crate) struct FailedRead {
    /// Index of the read in the batch.
    pub(crate) index: usize,
    pub(crate) source: io::Error,
}

/// One read of a `read_many` batch: fill all of `buf` from `offset` of `file`.
pub(crate) struct ReadOp<'a> {
    pub(crate) file: &'a IoFile,
    pub(crate) offset: u64,
    pub(crate) buf: &'a mut [u8],
}

/// Why this process uses the sync I/O back end although io_uring was wanted
/// (`IoMode::Auto` found that a ring cannot be set up: ENOSYS, EPERM, a
/// sysctl or seccomp), or `None` when it did not fall back. strata prints
/// nothing itself; a program that wants to tell its user, as the `strata`
/// binaries do, prints this once after opening a database.
pub fn io_fallback_reason() -> Option<&'static str> {
    uring::fallback_reason()
}

impl Io {
    /// Picks the back end: `STRATA_IO` first, then `mode`.
    pub(crate) fn resolve(mode: IoMode) -> Result<Io> {
        let mode = match std::env::var(IO_ENV_VAR) {
            Ok(value) => match value.trim().to_ascii_lowercase().as_str() {
                "sync" => IoMode::Sync,
                "uring" | "io_uring" => IoMode::Uring,
                "" | "auto" => mode,
                other => {
                    return Err(Error::InvalidOption {
                        name: "STRATA_IO",
                        reason: format!("'{other}' is not one of sync, uring, auto"),
                    });
                }
            },
            Err(_) => mode,
        };
        let backend = match mode {
            IoMode::Sync => Backend::Sync,
            IoMode::Uring => match uring::probe() {
                Ok(()) => Backend::Uring,
                Err(e) => {
                    return Err(Error::IoUringUnavailable {
                        reason: e.to_string(),
                    });
                }
            },
            IoMode::Auto => match uring::probe() {
                Ok(()) => Backend::Uring,
                Err(e) => {
                    uring::note_fallback(&e);
                    Backend::Sync
                }
            },
        };
        Ok(Io {
            backend,
            #[cfg(any(test, feature = "fault-injection"))]
            faults: None,
            open_files: Arc::default(),
        })
    }

    /// An `Io` on the given back end, without probing (tests and tools).
    #[cfg(test)]
    pub(crate) fn with_backend(backend: Backend) -> Io {
        Io {
            backend,
            faults: None,
            open_files: Arc::default(),
        }
    }

    /// An `Io` whose every call goes through the simulated disk `faults`,
    /// until its next power loss (then every call fails).
    #[cfg(any(test, feature = "fault-injection"))]
    pub(crate) fn with_faults(faults: &fault::FaultInjector) -> Io {
        Io {
            backend: Backend::Fault,
            faults: Some(faults.for_this_boot()),
            open_files: Arc::default(),
        }
    }

    /// The back end in use.
    pub(crate) fn backend(&self) -> Backend {
        self.backend
    }

    /// Files opened through this `Io` or a clone of it and still open
    /// (HFiles, WAL segments, the manifest).
    pub(crate) fn open_files(&self) -> u64 {
        self.open_files.load(Ordering::Relaxed)
    }

    /// Opens an existing file for reading.
    pub(crate) fn open_read(&self, path: &Path) -> Result<IoFile> {
        let context = || format!("opening {}", path.display());
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(faults) = &self.faults {
            let (file, handle) = faults
                .open_read(path)
                .map_err(|e| Error::io(context(), e))?;
            return self.wrap(file, path, Some(handle));
        }
        let file = File::open(path).map_err(|e| Error::io(context(), e))?;
        self.wrap(file, path, None)
    }

    /// Opens an existing file for reading and writing.
    pub(crate) fn open_rw(&self, path: &Path) -> Result<IoFile> {
        let context = || format!("opening {}", path.display());
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(faults) = &self.faults {
            let (file, handle) = faults.open_rw(path).map_err(|e| Error::io(context(), e))?;
            return self.wrap(file, path, Some(handle));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| Error::io(context(), e))?;
        self.wrap(file, path, None)
    }

    /// Creates a new file (failing if it exists) for reading and writing.
    /// Its name is durable once its directory is synced ([`Io::sync_dir`]).
    pub(crate) fn create_new(&self, path: &Path) -> Result<IoFile> {
        let context = || format!("creating {}", path.display());
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(faults) = &self.faults {
            let (file, handle) = faults
                .create_new(path)
                .map_err(|e| Error::io(context(), e))?;
            return self.wrap(file, path, Some(handle));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| Error::io(context(), e))?;
        self.wrap(file, path, None)
    }

    fn wrap(&self, file: File, path: &Path, fault: Option<FaultHandle>) -> Result<IoFile> {
        let len = file
            .metadata()
            .map_err(|e| Error::io(format!("reading metadata of {}", path.display()), e))?
            .len();
        #[cfg(not(any(test, feature = "fault-injection")))]
        let _: Option<FaultHandle> = fault;
        self.open_files.fetch_add(1, Ordering::Relaxed);
        Ok(IoFile {
            open_files: Arc::clone(&self.open_files),
            file,
            path: path.to_path_buf(),
            backend: self.backend,
            append_offset: AtomicU64::new(len),
            #[cfg(any(test, feature = "fault-injection"))]
            fault,
        })
    }

    /// Writes `bytes` as the whole content of a new file at `path`
    /// (replacing one left there) and syncs it; the name is durable once
    /// the directory is synced.
    pub(crate) fn write_file(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        match self.remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(format!("removing {}", path.display()), e)),
        }
        let file = self.create_new(path)?;
        file.write_at_then_sync(0, bytes, Some(SyncKind::All), &mut || {})
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))
    }

    /// Creates `path` and its missing parents, and makes each new entry
    /// durable by syncing the directory that holds it (a directory whose
    /// creation was not synced may vanish in a power loss, with everything
    /// in it).
    pub(crate) fn create_dir_all(&self, path: &Path) -> Result<()> {
        let missing: Vec<&Path> = path.ancestors().take_while(|p| !p.exists()).collect();
        if missing.is_empty() {
            return Ok(());
        }
        let created = || -> io::Result<()> {
            #[cfg(any(test, feature = "fault-injection"))]
            if let Some(faults) = &self.faults {
                return faults.create_dir_all(path);
            }
            std::fs::create_dir_all(path)
        };
        created().map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
        // Top first: each parent exists durably before its child's entry is synced.
        for dir in missing.iter().rev() {
            self.sync_dir(&parent_of(dir))?;
        }
        Ok(())
    }

    /// Renames `from` to `to` within one directory, replacing `to`; durable
    /// once the directory is synced.
    pub(crate) fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(faults) = &self.faults {
            return faults.rename(from, to);
        }
        std::fs::rename(from, to)
    }

    /// Removes the file at `path` (`NotFound` if there is none); durable
    /// once the directory is synced.
    pub(crate) fn remove_file(&self, path: &Path) -> io::Result<()> {
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(faults) = &self.faults {
            return faults.remove_file(path);
        }
        std::fs::remove_file(path)
    }

    /// Makes a directory's entries (creations, renames, removals) durable.
    pub(crate) fn sync_dir(&self, path: &Path) -> Result<()> {
        let context = || format!("syncing directory {}", path.display());
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(faults) = &self.faults {
            return faults.sync_dir(path).map_err(|e| Error::io(context(), e));
        }
        File::open(path)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(context(), e))
    }

    /// Fills every op's buffer; on io_uring all reads go in one submission
    /// (chunked by ring size). Fails if any read fails or hits end of file,
    /// saying which.
    #[allow(
        dead_code,
        reason = "called by the HFile read path (multi-get, read-ahead); tested here"
    )]
    pub(crate) fn read_many(&self, ops: &mut [ReadOp<'_>]) -> Result<(), FailedRead> {
        match self.backend {
            Backend::Uring => match uring::read_many(ops) {
                Some(result) => result,
                None => sync::read_many(ops),
            },
            Backend::Sync => sync::read_many(ops),
            #[cfg(any(test, feature = "fault-injection"))]
            Backend::Fault => {
                for (index, op) in ops.iter_mut().enumerate() {
                    op.file
                        .read_exact_at(op.offset, op.buf)
                        .map_err(|source| FailedRead { index, source })?;
                }
                Ok(())
            }
        }
    }
}

/// The directory holding `path` (`.` for a bare name).
pub(crate) fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The fault back end's side of an open file (nothing in builds without it).
#[cfg(any(test, feature = "fault-injection"))]
type FaultHandle = fault::FaultFile;
/// The fault back end's side of an open file (nothing in builds without it).
#[cfg(not(any(test, feature = "fault-injection")))]
type FaultHandle = std::convert::Infallible;

/// An open file bound to a back end.
#[derive(Debug)]
pub(crate) struct IoFile {
    file: File,
    path: PathBuf,
    backend: Backend,
    /// Where the next [`IoFile::append`] writes; starts at the file's length.
    append_offset: AtomicU64,
    /// The simulated disk's view of the file (fault back end only).
    #[cfg(any(test, feature = "fault-injection"))]
    fault: Option<FaultHandle>,
    /// The count of open files of the `Io` that opened this one.
    open_files: Arc<AtomicU64>,
}

impl Drop for IoFile {
    fn drop(&mut self) {
        self.open_files.fetch_sub(1, Ordering::Relaxed);
    }
}

impl IoFile {
    /// The file's path (for error messages).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn raw_fd(&self) -> i32 {
        self.file.as_raw_fd()
    }

    /// The file's current length according to the file system.
    pub(crate) fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    /// When the file was last modified, in milliseconds since the Unix epoch
    /// (0 for a time before it).
    pub(crate) fn modified_ms(&self) -> io::Result<i64> {
        let modified = self.file.metadata()?.modified()?;
        let since_epoch = modified
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Ok(i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX))
    }

    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read
    /// (fewer only at end of file).
    pub(crate) fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(fault) = &self.fault {
            return fault.read_at(&self.file, offset, buf);
        }
        if self.backend == Backend::Uring
            && let Some(result) = uring::read_at(self.raw_fd(), offset, buf)
        {
            return result;
        }
        sync::read_at(&self.file, offset, buf)
    }

    /// Reads exactly `buf.len()` bytes at `offset`.
    pub(crate) fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let n = self.read_at(offset, buf)?;
        if n < buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "wanted {} bytes at {offset}, file ends after {n}",
                    buf.len()
                ),
            ));
        }
        Ok(())
    }

    /// Writes all of `buf` at `offset`.
    pub(crate) fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.write_at_then_sync(offset, buf, None, &mut || {})
    }

    /// Writes all of `buf` at `offset`, then syncs if asked. On io_uring the
    /// write and the sync are linked SQEs submitted together.
    ///
    /// `in_flight` is for work that should overlap the I/O: io_uring calls
    /// it once the write is submitted, the sync back end before writing.
    /// It may be called again (a short write resubmits) or, when the call
    /// fails, not at all, so it should be idempotent and its caller should
    /// finish the work itself afterwards. It must not panic: the kernel may
    /// be reading `buf` while it runs.
    pub(crate) fn write_at_then_sync(
        &self,
        offset: u64,
        buf: &[u8],
        sync: Option<SyncKind>,
        in_flight: &mut dyn FnMut(),
    ) -> io::Result<()> {
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(fault) = &self.fault {
            return fault.write_at_then_sync(&self.file, offset, buf, sync, in_flight);
        }
        if self.backend == Backend::Uring
            && let Some(result) =
                uring::write_at_then_sync(self.raw_fd(), offset, buf, sync, in_flight)
        {
            return result;
        }
        in_flight();
        sync::write_at(&self.file, offset, buf)?;
        match sync {
            Some(kind) => sync::sync(&self.file, kind),
            None => Ok(()),
        }
    }

    /// Appends `buf` after everything appended before; returns its offset.
    pub(crate) fn append(&self, buf: &[u8]) -> io::Result<u64> {
        let offset = self
            .append_offset
            .fetch_add(buf.len() as u64, Ordering::AcqRel);
        self.write_at(offset, buf)?;
        Ok(offset)
    }

    /// Makes written data durable.
    pub(crate) fn sync(&self, kind: SyncKind) -> io::Result<()> {
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(fault) = &self.fault {
            return fault.sync(&self.file, kind);
        }
        if self.backend == Backend::Uring
            && let Some(result) = uring::sync(self.raw_fd(), kind)
        {
            return result;
        }
        sync::sync(&self.file, kind)
    }

    /// Asks the kernel to start writing `len` bytes at `offset` to disk now,
    /// without waiting (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`,
    /// RocksDB's `bytes_per_sync`). A hint: it makes nothing durable, so it
    /// reports nothing (a failing disk shows at the [`IoFile::sync`] that
    /// must follow). A writer of a large file calls it after each chunk so
    /// the disk writes while the writer builds the next one and the final
    /// sync has little left to do: 116 MB written in 1 MiB chunks then
    /// synced here took 44 ms in the sync alone, about 2 ms with the hint.
    pub(crate) fn start_writeback(&self, offset: u64, len: u64) {
        #[cfg(any(test, feature = "fault-injection"))]
        if self.fault.is_some() {
            // The simulated disk has no cache to write back.
            return;
        }
        let (Ok(offset), Ok(len)) = (
            libc::off64_t::try_from(offset),
            libc::off64_t::try_from(len),
        ) else {
            return;
        };
        // SAFETY: sync_file_range only reads its integer arguments; the fd
        // is open for as long as `self.file` lives.
        let _ = unsafe {
            libc::sync_file_range(self.raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
        };
    }

    /// Reserves `len` bytes of disk for the file (extending its size), so
    /// that later writes inside it do not allocate.
    pub(crate) fn preallocate(&self, len: u64) -> io::Result<()> {
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(fault) = &self.fault {
            return fault.preallocate(&self.file, len);
        }
        let len_signed = libc::off_t::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "length too large"))?;
        // SAFETY: fallocate only reads its integer arguments; the fd is open
        // for writing for as long as `self.file` lives.
        let rc = unsafe { libc::fallocate(self.raw_fd(), 0, 0, len_signed) };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            // File systems without fallocate: extending the size is enough.
            Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => self.file.set_len(len),
            _ => Err(err),
        }
    }

    /// Truncates or extends the file to `len` bytes.
    pub(crate) fn set_len(&self, len: u64) -> io::Result<()> {
        #[cfg(any(test, feature = "fault-injection"))]
        if let Some(fault) = &self.fault {
            fault.set_len(&self.file, len)?;
            self.append_offset.store(len, Ordering::Release);
            return Ok(());
        }
        self.file.set_len(len)?;
        self.append_offset.store(len, Ordering::Release);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backends() -> Vec<Io> {
        let mut v = vec![Io::with_backend(Backend::Sync)];
        if uring::probe().is_ok() {
            v.push(Io::with_backend(Backend::Uring));
        }
        v
    }

    #[test]
    fn write_read_append_sync_on_every_backend() {
        for io in backends() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f");
            let f = io.create_new(&path).unwrap();
            f.write_at(0, b"hello world").unwrap();
            f.write_at_then_sync(5, b"_", Some(SyncKind::Data), &mut || {})
                .unwrap();
            let mut buf = [0u8; 11];
            f.read_exact_at(0, &mut buf).unwrap();
            assert_eq!(&buf, b"hello_world", "{:?}", io.backend());
            // A writeback hint leaves the bytes as they are, also past the
            // end of the file.
            f.start_writeback(0, 64);
            f.read_exact_at(0, &mut buf).unwrap();
            assert_eq!(&buf, b"hello_world");
            f.sync(SyncKind::All).unwrap();
            let mut short = [0u8; 20];
            assert_eq!(f.read_at(0, &mut short).unwrap(), 11);
            assert!(f.read_exact_at(10, &mut [0u8; 10]).is_err());
            // Appends start at the length the file had when opened.
            let g = io.open_rw(&path).unwrap();
            assert_eq!(g.append(b"!!").unwrap(), 11);
            assert_eq!(g.append(b"?").unwrap(), 13);
            let mut all = [0u8; 14];
            g.read_exact_at(0, &mut all).unwrap();
            assert_eq!(&all, b"hello_world!!?");
        }
    }

    #[test]
    fn read_many_fills_every_buffer_across_files() {
        for io in backends() {
            let dir = tempfile::tempdir().unwrap();
            let a = io.create_new(&dir.path().join("a")).unwrap();
            let b = io.create_new(&dir.path().join("b")).unwrap();
            let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
            a.write_at(0, &data).unwrap();
            b.write_at(0, &data[..5000]).unwrap();
            // More reads than one ring holds, to exercise chunking.
            let mut bufs: Vec<Vec<u8>> = (0..600).map(|_| vec![0u8; 97]).collect();
            let mut ops: Vec<ReadOp<'_>> = bufs
                .iter_mut()
                .enumerate()
                .map(|(i, buf)| ReadOp {
                    file: if i % 2 == 0 { &a } else { &b },
                    offset: (i as u64 * 7) % 4000,
                    buf: buf.as_mut_slice(),
                })
                .collect();
            io.read_many(&mut ops).unwrap();
            for (i, buf) in bufs.iter().enumerate() {
                let off = ((i as u64 * 7) % 4000) as usize;
                assert_eq!(buf.as_slice(), &data[off..off + 97]);
            }
            let mut past_end = vec![0u8; 10];
            let mut ops = [ReadOp {
                file: &b,
                offset: 4995,
                buf: &mut past_end,
            }];
            assert!(io.read_many(&mut ops).is_err());
        }
    }

    #[test]
    fn preallocate_extends_with_zeros() {
        for io in backends() {
            let dir = tempfile::tempdir().unwrap();
            let f = io.create_new(&dir.path().join("p")).unwrap();
            f.preallocate(1 << 20).unwrap();
            assert_eq!(f.len().unwrap(), 1 << 20);
            let mut buf = vec![1u8; 4096];
            f.read_exact_at(4096, &mut buf).unwrap();
            assert!(buf.iter().all(|&b| b == 0));
            f.set_len(100).unwrap();
            assert_eq!(f.len().unwrap(), 100);
        }
    }
}
