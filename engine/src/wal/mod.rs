//! The write-ahead log: one shared log for every region of the database.
//!
//! Writers encode their frames outside any lock, then [`Wal::append`] copies
//! them into the *filling* group and returns a [`Ticket`]. One commit thread
//! takes the filling group, writes it at the end of the current segment and,
//! when any writer of the group asked for it, syncs it; on io_uring the write
//! and the `fdatasync` are linked SQEs in one submission. While that group's
//! I/O is in flight the next group fills, so under load each sync covers
//! every writer that arrived during the previous one (pipelined group
//! commit). `SyncWal` writers wait for their group's sync ([`Wal::wait`]);
//! `AsyncWal` writers return at once and the commit thread syncs their data
//! within `async_wal_sync_interval_ms`.
//!
//! Segments are files of up to `wal_segment_bytes`, preallocated
//! [`PREALLOCATE_STEP_BYTES`] ahead of the writes; a group that does not fit
//! starts a new segment after the old one is synced. [`Wal::roll`] starts a
//! new segment on request, so that a segment whose records are all flushed
//! can be deleted (RocksDB switches its WAL at each memtable switch alike). Frames are
//! self-checking (`format.rs`), so replay ([`replay`]) can tell a torn tail
//! from corruption. Bounds: the filling group holds at most
//! [`MAX_PENDING_BYTES`]; writers wait for the commit thread beyond that.

pub(crate) mod format;
pub(crate) mod replay;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::error::{Error, Result};
use crate::io::{Io, IoFile, SyncKind};
use crate::metrics::{LatencyHistogram, LatencySnapshot};
use crate::names::{CREATING_SUFFIX, segment_file_name};
use crate::watermark::Watermark;
use format::{SEGMENT_HEADER_BYTES, segment_header};

/// Bytes the filling group may hold before writers wait for the commit thread.
pub(crate) const MAX_PENDING_BYTES: usize = 64 * 1024 * 1024;
/// Async-only data is written once this much is pending...
const ASYNC_WRITE_BATCH_BYTES: usize = 1024 * 1024;
/// Unsynced bytes of a segment after which the commit thread asks the disk
/// to start writing them (RocksDB's `wal_bytes_per_sync`; HFile writers do
/// the same per chunk).
const WRITEBACK_STEP_BYTES: u64 = 1024 * 1024;
/// Capacity a group buffer keeps between groups, in bytes. A burst can grow
/// a group to [`MAX_PENDING_BYTES`]; without the bound the two buffers the
/// commit thread alternates kept that capacity (up to 128 MiB of resident
/// memory) for the life of the database.
const KEPT_GROUP_CAPACITY_BYTES: usize = 2 * ASYNC_WRITE_BATCH_BYTES;
/// ...or once the oldest pending async byte is this old.
const ASYNC_WRITE_DELAY: Duration = Duration::from_millis(2);
/// A segment's file is preallocated this far ahead of its writes (up to
/// `wal_segment_bytes`), so an idle database does not hold a whole
/// segment's worth of empty disk space.
const PREALLOCATE_STEP_BYTES: u64 = 4 * 1024 * 1024;
/// An unsealed segment's length is always a whole number of these units,
/// and its writes always stop at least [`TAIL_RESERVE_BYTES`] before its
/// end: replay relies on both to tell a truncated segment from a crashed one
/// (`docs/format.md`, "Reading the log back").
pub(crate) const ALLOCATION_UNIT_BYTES: u64 = 4096;
/// Preallocated bytes a segment keeps after its last group: room for the
/// seal record, and at least one byte that no write ever reaches.
const TAIL_RESERVE_BYTES: u64 = format::SEAL_FRAME_BYTES as u64 + 1;

/// The allocation an unsealed segment needs to hold writes up to `end`.
fn allocation_for(end: u64) -> u64 {
    round_to_units(end + TAIL_RESERVE_BYTES)
}

/// `bytes` rounded up to whole allocation units.
fn round_to_units(bytes: u64) -> u64 {
    bytes.div_ceil(ALLOCATION_UNIT_BYTES) * ALLOCATION_UNIT_BYTES
}

/// Deletes the files of segments whose creation a crash interrupted (they
/// never held a record: a segment gets its final name only once its header
/// is durable).
pub(crate) fn remove_unfinished_segments(io: &Io, dir: &Path) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
    let mut removed = false;
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.ends_with(CREATING_SUFFIX))
        {
            io.remove_file(&entry.path())
                .map_err(|e| Error::io(format!("removing {}", entry.path().display()), e))?;
            removed = true;
        }
    }
    if removed {
        io.sync_dir(dir)?;
    }
    Ok(())
}

/// What a writer sees once the commit thread failed.
fn wal_failed(failure: &Error) -> Error {
    Error::WalFailed {
        cause: Box::new(failure.clone()),
    }
}

/// Identifies the group a writer's frames went into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Ticket(u64);

/// Counters for group commit, readable at any time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Groups written.
    pub groups_written: u64,
    /// Frames (row mutations) written.
    pub frames_written: u64,
    /// Bytes written, frames only.
    pub bytes_written: u64,
    /// Syncs performed.
    pub syncs: u64,
    /// Total time spent in write+sync submissions that included a sync, in microseconds.
    pub sync_micros_total: u64,
    /// Segments created since open.
    pub segments_created: u64,
    /// Times the commit thread asked the disk to start writing unsynced
    /// async bytes (every [`WRITEBACK_STEP_BYTES`] of them).
    pub writebacks_started: u64,
}

/// A sealed or current segment and the highest sequence it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SegmentInfo {
    pub(crate) id: u64,
    pub(crate) max_sequence: u64,
}

/// What the commit thread is doing, for writers deciding whether to wake it.
#[derive(Debug, Clone, Copy)]
enum CommitThread {
    /// Running: it looks at the filling group before it sleeps again.
    Working,
    /// Waiting for work, until `until` (`None`: until woken).
    Sleeping { until: Option<Instant> },
}

struct State {
    /// Frames of the filling group.
    filling: Vec<u8>,
    filling_frames: u64,
    filling_max_sequence: u64,
    /// Strongest sync any writer of the filling group asked for.
    filling_sync: Option<SyncKind>,
    /// When the first byte entered the filling group.
    filling_since: Option<Instant>,
    /// Number of the filling group; groups are numbered from 1.
    filling_group: u64,
    /// Every group <= this was written (to the page cache at least).
    written_group: u64,
    /// Every group <= this is durable.
    synced_group: u64,
    /// The first failure of the commit thread; the WAL refuses work after
    /// it (a failed write or sync is never retried: the page cache may have
    /// dropped the data, so a later sync could not make it durable).
    failed: Option<Error>,
    shutdown: bool,
    /// The commit thread has exited: nothing will be written or synced again.
    stopped: bool,
    /// What the commit thread is doing. A writer that starts a group wakes
    /// it unless it wakes within [`ASYNC_WRITE_DELAY`] anyway. (Waking it only
    /// from a sleep without a deadline left a group started while it slept
    /// towards the next timed sync, up to the sync interval, 100 ms by
    /// default, unwritten: bytes a killed process would lose.)
    commit_thread: CommitThread,
    stats: WalStats,
    segments: VecDeque<SegmentInfo>,
    /// The next group starts a new segment (see [`Wal::roll`]).
    roll_requested: bool,
    /// Bytes written to the current segment, header included.
    current_segment_bytes: u64,
}

struct Shared {
    dir: PathBuf,
    io: Io,
    segment_bytes: u64,
    async_sync_interval: Duration,
    state: Mutex<State>,
    /// The commit thread waits here for work.
    work: Condvar,
    /// Writers wait here for room in the filling group.
    room: Condvar,
    /// The highest durable group, mirroring `State::synced_group`; writers
    /// wait on it for their group's sync without the state lock, and a sync
    /// wakes exactly the writers it made durable, all at once (see
    /// `watermark.rs` for what the condvar it replaced cost). Halted when
    /// the commit thread fails or stops.
    synced: Watermark,
    /// Mirrors `State::failed.is_some()`, read without the lock on every write.
    has_failed: AtomicBool,
    /// Mirrors `State::segments.len()` (set under the lock wherever the list
    /// changes), read without the lock after every write to decide whether
    /// old segments need flushes: a second lock a put, taken while the commit
    /// thread held it, was where a writer most often slept.
    segment_count: AtomicUsize,
    /// Held by [`Wal::release_through`] while it deletes segments, and by a
    /// checkpoint while it reads them ([`Wal::hold_segments`]).
    release: Mutex<()>,
    /// How long each write that included a sync took (HBase's WAL
    /// `SyncTime`); recorded by the commit thread, which times them anyway.
    sync_latency: LatencyHistogram,
}

impl Shared {
    /// Wakes every waiter, whatever it waits for, for good (failure, stop).
    fn wake_everyone(&self) {
        self.room.notify_all();
        self.synced.halt();
    }
}

/// The shared write-ahead log.
pub(crate) struct Wal {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<Result<()>>>>,
}

impl Wal {
    /// Starts a WAL in `dir` whose first new segment is `first_segment_id`;
    /// `existing` lists the segments replay found (oldest first).
    pub(crate) fn start(
        dir: &Path,
        io: Io,
        segment_bytes: u64,
        async_sync_interval_ms: u64,
        first_segment_id: u64,
        existing: Vec<SegmentInfo>,
    ) -> Result<Wal> {
        let segment = Segment::create(dir, &io, first_segment_id, segment_bytes, 0)?;
        let mut segments: VecDeque<SegmentInfo> = existing.into();
        segments.push_back(SegmentInfo {
            id: first_segment_id,
            max_sequence: 0,
        });
        let segment_count = AtomicUsize::new(segments.len());
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            io,
            segment_bytes,
            async_sync_interval: Duration::from_millis(async_sync_interval_ms),
            sync_latency: LatencyHistogram::default(),
            state: Mutex::new(State {
                // Both group buffers start at the capacity they keep: a
                // buffer grown from empty by doubling copied the group made
                // so far at every step while the writer held the lock
                // (unwritten capacity costs address space, not memory).
                filling: Vec::with_capacity(KEPT_GROUP_CAPACITY_BYTES),
                filling_frames: 0,
                filling_max_sequence: 0,
                filling_sync: None,
                filling_since: None,
                filling_group: 1,
                written_group: 0,
                synced_group: 0,
                failed: None,
                shutdown: false,
                stopped: false,
                commit_thread: CommitThread::Working,
                stats: WalStats {
                    segments_created: 1,
                    ..WalStats::default()
                },
                segments,
                roll_requested: false,
                current_segment_bytes: SEGMENT_HEADER_BYTES as u64,
            }),
            work: Condvar::new(),
            room: Condvar::new(),
            synced: Watermark::new(0),
            has_failed: AtomicBool::new(false),
            segment_count,
            release: Mutex::new(()),
        });
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("strata-wal".into())
            .spawn(move || commit_loop(&thread_shared, segment))
            .map_err(|e| Error::io("starting the WAL commit thread", e))?;
        Ok(Wal {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Adds `frames` (whole frames, `frame_count` of them, highest sequence
    /// `max_sequence`) to the filling group. With `sync`, the group will be
    /// synced and the caller should [`Wal::wait`] on the ticket.
    pub(crate) fn append(
        &self,
        frames: &[u8],
        frame_count: u64,
        max_sequence: u64,
        sync: Option<SyncKind>,
    ) -> Result<Ticket> {
        debug_assert!(
            frame_count > 0
                && frames.len() as u64 >= frame_count * format::FRAME_HEADER_BYTES as u64,
            "an append holds at least one whole frame"
        );
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        loop {
            if let Some(failure) = &state.failed {
                return Err(wal_failed(failure));
            }
            if state.shutdown {
                return Err(Error::Closed);
            }
            // A frame larger than the bound is admitted into an empty group.
            if state.filling.is_empty() || state.filling.len() + frames.len() <= MAX_PENDING_BYTES {
                break;
            }
            shared.room.wait(&mut state);
        }
        let was_empty = state.filling.is_empty();
        state.filling.extend_from_slice(frames);
        state.filling_frames += frame_count;
        state.filling_max_sequence = state.filling_max_sequence.max(max_sequence);
        let mut wakes_too_late = false;
        if was_empty {
            let now = Instant::now();
            state.filling_since = Some(now);
            wakes_too_late = match state.commit_thread {
                CommitThread::Working => false,
                CommitThread::Sleeping { until: None } => true,
                CommitThread::Sleeping {
                    until: Some(deadline),
                } => deadline > now + ASYNC_WRITE_DELAY,
            };
        }
        if let Some(kind) = sync {
            state.filling_sync = Some(match (state.filling_sync, kind) {
                (Some(SyncKind::All), _) | (_, SyncKind::All) => SyncKind::All,
                _ => SyncKind::Data,
            });
        }
        let urgent = sync.is_some() || state.filling.len() >= ASYNC_WRITE_BATCH_BYTES;
        if urgent || wakes_too_late {
            shared.work.notify_one();
        }
        Ok(Ticket(state.filling_group))
    }

    /// Waits until the group of `ticket` is durable.
    pub(crate) fn wait(&self, ticket: Ticket) -> Result<()> {
        if self.shared.synced.wait_for(ticket.0) {
            return Ok(());
        }
        // Halted: the commit thread failed or stopped (it records which
        // before it halts the watermark).
        let state = self.shared.state.lock();
        if state.synced_group >= ticket.0 {
            return Ok(());
        }
        match &state.failed {
            Some(failure) => Err(wal_failed(failure)),
            None => Err(Error::Closed),
        }
    }

    /// Makes everything appended so far durable (used by flush and close).
    pub(crate) fn sync_all(&self) -> Result<()> {
        let ticket = {
            let mut state = self.shared.state.lock();
            if state.filling.is_empty() {
                // Force a sync even with no new frames, if anything is
                // unsynced: every group taken so far (the last one may still
                // be in flight, not yet counted as written) must be synced.
                if state.synced_group + 1 >= state.filling_group && state.filling_frames == 0 {
                    return match &state.failed {
                        Some(failure) => Err(wal_failed(failure)),
                        None => Ok(()),
                    };
                }
            }
            self.request_synced_group(&mut state)
        };
        self.wait(ticket)
    }

    /// Asks the commit thread to write and sync the filling group (empty
    /// or not) now; returns its ticket.
    fn request_synced_group(&self, state: &mut State) -> Ticket {
        state.filling_sync = Some(state.filling_sync.unwrap_or(SyncKind::Data));
        if state.filling_since.is_none() {
            state.filling_since = Some(Instant::now());
        }
        self.shared.work.notify_one();
        Ticket(state.filling_group)
    }

    /// Seals the current segment (after syncing it) and starts a new one,
    /// unless the current one holds no frames. Afterwards every record
    /// appended before the call lies in a sealed segment, which
    /// [`Wal::release_through`] deletes once its sequences are flushed.
    pub(crate) fn roll(&self) -> Result<()> {
        let ticket = {
            let mut state = self.shared.state.lock();
            if let Some(failure) = &state.failed {
                return Err(wal_failed(failure));
            }
            if state.shutdown {
                return Err(Error::Closed);
            }
            state.roll_requested = true;
            self.request_synced_group(&mut state)
        };
        self.wait(ticket)
    }

    /// Bytes written to the segment being written, and the highest
    /// sequence in it.
    pub(crate) fn current_segment(&self) -> (u64, u64) {
        let state = self.shared.state.lock();
        let max_sequence = state.segments.back().map_or(0, |s| s.max_sequence);
        (state.current_segment_bytes, max_sequence)
    }

    /// The failure that stopped the commit thread, if one did.
    pub(crate) fn failure(&self) -> Option<Error> {
        if !self.shared.has_failed.load(Ordering::Acquire) {
            return None;
        }
        self.shared.state.lock().failed.clone()
    }

    /// Group commit counters.
    pub(crate) fn stats(&self) -> WalStats {
        self.shared.state.lock().stats
    }

    /// The latency of the log's syncs since open.
    pub(crate) fn sync_latency(&self) -> LatencySnapshot {
        self.shared.sync_latency.snapshot()
    }

    /// The segments the log holds, oldest first, with their highest sequence;
    /// the last is the one being written.
    pub(crate) fn segments(&self) -> Vec<SegmentInfo> {
        self.shared.state.lock().segments.iter().copied().collect()
    }

    /// Number of segments the log holds.
    pub(crate) fn segment_count(&self) -> usize {
        self.shared.segment_count.load(Ordering::Relaxed)
    }

    /// Highest sequence of the oldest segment, if there is an older one
    /// than the segment being written.
    pub(crate) fn oldest_segment_max_sequence(&self) -> Option<u64> {
        let state = self.shared.state.lock();
        (state.segments.len() > 1)
            .then(|| state.segments.front().map(|s| s.max_sequence))
            .flatten()
    }

    /// Deletes every segment, except the one being written, whose records
    /// all have sequences <= `bound` (all flushed).
    pub(crate) fn release_through(&self, bound: u64) -> Result<()> {
        let _release = self.shared.release.lock();
        let releasable: Vec<u64> = {
            let mut state = self.shared.state.lock();
            let mut ids = Vec::new();
            while state.segments.len() > 1
                && state
                    .segments
                    .front()
                    .is_some_and(|s| s.max_sequence <= bound)
            {
                if let Some(s) = state.segments.pop_front() {
                    ids.push(s.id);
                }
            }
            self.shared
                .segment_count
                .store(state.segments.len(), Ordering::Relaxed);
            ids
        };
        if releasable.is_empty() {
            return Ok(());
        }
        // Oldest first, each removal durable before the next: replay treats
        // a gap between segments as a lost segment, so a crash must never
        // leave a newer one removed and an older one in place.
        for id in &releasable {
            let path = self.shared.dir.join(segment_file_name(*id));
            match self.shared.io.remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(format!("removing {}", path.display()), e)),
            }
            self.shared.io.sync_dir(&self.shared.dir)?;
        }
        Ok(())
    }

    /// Keeps every segment file on disk while the guard lives:
    /// [`Wal::release_through`] waits for it before deleting any. A checkpoint
    /// holds it from before it reads the catalog until it has read the
    /// segments, so that no segment holding a record the catalog it read
    /// has not flushed goes away under it.
    pub(crate) fn hold_segments(&self) -> MutexGuard<'_, ()> {
        self.shared.release.lock()
    }

    /// Writes and syncs what is pending, then stops the commit thread, which
    /// seals the last segment; an error of either is returned. Calling it
    /// again does nothing.
    pub(crate) fn shutdown(&self) -> Result<()> {
        let mut thread = self.thread.lock();
        let Some(handle) = thread.take() else {
            return Ok(());
        };
        let synced = self.sync_all();
        {
            let mut state = self.shared.state.lock();
            state.shutdown = true;
            self.shared.work.notify_one();
        }
        // A seal that failed is reported: a checkpoint's copy of the log, or a close, must
        // not claim success over a write the disk refused.
        let sealed = handle.join().unwrap_or_else(|_| {
            Err(Error::InvariantBroken {
                what: "the WAL commit thread panicked".into(),
            })
        });
        synced.and(sealed)
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// The segment the commit thread appends to.
struct Segment {
    file: IoFile,
    id: u64,
    /// Where the next group goes.
    write_offset: u64,
    /// Bytes the segment may grow to before the next one starts.
    capacity: u64,
    /// Bytes of the file allocated so far (<= `capacity` unless sealed).
    allocated: u64,
    /// Data was written since the last sync.
    unsynced: bool,
    /// Where the bytes written and not yet handed to
    /// [`IoFile::start_writeback`] (nor synced) begin.
    writeback_from: u64,
    /// Row mutation frames written to the segment (for its seal record).
    frames: u64,
    /// Highest sequence written to the segment (for its seal record).
    max_sequence: u64,
}

impl Segment {
    /// After a group's write: asks the disk to start writing the segment's
    /// unsynced bytes once there are [`WRITEBACK_STEP_BYTES`] of them (or
    /// notes that the group's own sync covered them). Async writes are
    /// otherwise left in the page cache until the next timed sync or a
    /// flush: a flush's HFile sync then waited on the whole log's dirty pages
    /// as well (ext4 writes a file's data before the journal commit that
    /// marks its preallocated extents written), so a load's final flush
    /// waited on the disk for the log of the whole load.
    /// Returns whether it asked.
    fn start_writeback_of_unsynced(&mut self, synced: bool) -> bool {
        if synced {
            self.writeback_from = self.write_offset;
            return false;
        }
        let pending = self.write_offset.saturating_sub(self.writeback_from);
        if pending < WRITEBACK_STEP_BYTES {
            return false;
        }
        self.file.start_writeback(self.writeback_from, pending);
        self.writeback_from = self.write_offset;
        true
    }

    fn create(
        dir: &Path,
        io: &Io,
        id: u64,
        segment_bytes: u64,
        first_group_bytes: u64,
    ) -> Result<Segment> {
        // Created under a temporary name and renamed once its header is
        // durable: a file with a segment's name always has a valid header,
        // so replay can call a damaged or missing one corruption.
        let path = dir.join(segment_file_name(id));
        let creating = dir.join(format!("{}{CREATING_SUFFIX}", segment_file_name(id)));
        if creating.exists() {
            io.remove_file(&creating)
                .map_err(|e| Error::io(format!("removing {}", creating.display()), e))?;
        }
        let file = io.create_new(&creating)?;
        let needed = SEGMENT_HEADER_BYTES as u64 + first_group_bytes;
        let capacity = segment_bytes.max(needed);
        let allocated =
            allocation_for(needed).max(PREALLOCATE_STEP_BYTES.min(round_to_units(capacity)));
        let context = |what: &str| format!("{what} WAL segment {}", path.display());
        file.preallocate(allocated)
            .map_err(|e| Error::io(context("preallocating"), e))?;
        file.write_at_then_sync(0, &segment_header(id), Some(SyncKind::Data), &mut || {})
            .map_err(|e| Error::io(context("writing the header of"), e))?;
        io.rename(&creating, &path)
            .map_err(|e| Error::io(context("naming"), e))?;
        io.sync_dir(dir)?;
        let file = io.open_rw(&path)?;
        Ok(Segment {
            file,
            id,
            write_offset: SEGMENT_HEADER_BYTES as u64,
            capacity,
            allocated,
            unsynced: false,
            writeback_from: SEGMENT_HEADER_BYTES as u64,
            frames: 0,
            max_sequence: 0,
        })
    }

    /// Makes sure the file is allocated for writes up to `end` (with its
    /// tail reserve), a step ahead.
    fn allocate_through(&mut self, end: u64) -> Result<()> {
        let needed = allocation_for(end);
        if needed <= self.allocated {
            return Ok(());
        }
        let target = needed
            .max(self.allocated + PREALLOCATE_STEP_BYTES)
            .min(round_to_units(self.capacity).max(needed));
        self.file.preallocate(target).map_err(|e| {
            Error::io(
                format!("preallocating WAL segment {}", self.file.path().display()),
                e,
            )
        })?;
        self.allocated = target;
        Ok(())
    }
}

impl Segment {
    /// Writes the seal record after the last group and syncs it, then cuts
    /// the file after it (so that replay does not read preallocated zeros)
    /// and syncs the size; a segment without frames is removed. The seal is
    /// durable before the cut, so a crash in between leaves a sealed
    /// segment followed by zeros, which reads back the same.
    fn seal(&mut self, io: &Io, dir: &Path) -> Result<()> {
        let path = self.file.path().to_path_buf();
        if self.write_offset == SEGMENT_HEADER_BYTES as u64 {
            io.remove_file(&path)
                .map_err(|e| Error::io(format!("removing {}", path.display()), e))?;
            return io.sync_dir(dir);
        }
        let seal = format::seal_frame(format::Seal {
            frames: self.frames,
            max_sequence: self.max_sequence,
            data_end: self.write_offset,
        });
        let sealed_len = self.write_offset + seal.len() as u64;
        self.file
            .write_at(self.write_offset, &seal)
            .and_then(|()| self.file.sync(SyncKind::Data))
            .and_then(|()| self.file.set_len(sealed_len))
            .and_then(|()| self.file.sync(SyncKind::All))
            .map_err(|e| Error::io(format!("sealing {}", path.display()), e))?;
        self.write_offset = sealed_len;
        self.unsynced = false;
        self.capacity = sealed_len;
        self.allocated = sealed_len;
        Ok(())
    }
}

/// What the commit thread took from the filling group.
struct Group {
    number: u64,
    /// The frames, then the group commit record (none for a pure sync).
    bytes: Vec<u8>,
    /// Bytes of the frames, without the commit record.
    frame_bytes: u64,
    frames: u64,
    max_sequence: u64,
    sync: Option<SyncKind>,
    /// Start a new segment before writing (see [`Wal::roll`]).
    roll: bool,
}

/// The commit thread. Returns how sealing the last segment at shutdown went (`Ok` when the
/// log failed before: that failure was reported to the writers and to [`Wal::sync_all`]).
fn commit_loop(shared: &Shared, segment: Segment) -> Result<()> {
    let sealed = run_commit_loop(shared, segment);
    let mut state = shared.state.lock();
    state.stopped = true;
    shared.wake_everyone();
    sealed
}

fn run_commit_loop(shared: &Shared, mut segment: Segment) -> Result<()> {
    let mut spare = Vec::with_capacity(KEPT_GROUP_CAPACITY_BYTES);
    // When the oldest unsynced async write happened, if any.
    let mut unsynced_since: Option<Instant> = None;
    // A durable group whose writers are not woken yet. They are woken with
    // the state lock released, while the next group's I/O is in flight or
    // before the thread goes idle, so that waking them holds up neither
    // the writers filling the next group nor the disk.
    let mut wake_through: Option<u64> = None;
    // Held except while writing and syncing: after a sync the thread takes
    // the next group before it lets go of the lock, instead of queueing for
    // it behind every writer the sync just woke (on a small machine that
    // queue left the disk idle between groups).
    let mut state = shared.state.lock();
    loop {
        let group = {
            loop {
                let now = Instant::now();
                let sync_due =
                    unsynced_since.is_some_and(|t| now >= t + shared.async_sync_interval);
                let write_due = state.filling_sync.is_some()
                    || state.filling.len() >= ASYNC_WRITE_BATCH_BYTES
                    || state
                        .filling_since
                        .is_some_and(|t| now >= t + ASYNC_WRITE_DELAY)
                    || (state.shutdown && !state.filling.is_empty());
                if write_due || sync_due {
                    break;
                }
                if let Some(group) = wake_through.take() {
                    MutexGuard::unlocked(&mut state, || shared.synced.advance_to(group));
                    continue;
                }
                if state.shutdown {
                    drop(state);
                    // Nothing pending: make the segment durable and trim its
                    // preallocated tail (or remove it if it holds nothing).
                    return segment.seal(&shared.io, &shared.dir);
                }
                let deadline = [
                    state.filling_since.map(|t| t + ASYNC_WRITE_DELAY),
                    unsynced_since.map(|t| t + shared.async_sync_interval),
                ]
                .into_iter()
                .flatten()
                .min();
                state.commit_thread = CommitThread::Sleeping { until: deadline };
                match deadline {
                    Some(deadline) => {
                        shared.work.wait_until(&mut state, deadline);
                    }
                    None => {
                        shared.work.wait(&mut state);
                    }
                }
                state.commit_thread = CommitThread::Working;
            }
            let mut bytes = std::mem::replace(&mut state.filling, std::mem::take(&mut spare));
            let frame_bytes = bytes.len() as u64;
            if frame_bytes > 0 {
                // Every group ends with its commit record (see `replay.rs`).
                // A group holds at most MAX_PENDING_BYTES plus one frame, far
                // fewer than u32::MAX frames.
                let frames = u32::try_from(state.filling_frames).unwrap_or(u32::MAX);
                format::append_group_commit(&mut bytes, frames, frame_bytes);
            }
            let group = Group {
                number: state.filling_group,
                frame_bytes,
                bytes,
                frames: state.filling_frames,
                max_sequence: state.filling_max_sequence,
                sync: state.filling_sync.take(),
                roll: std::mem::take(&mut state.roll_requested),
            };
            state.filling_group += 1;
            state.filling_frames = 0;
            state.filling_max_sequence = 0;
            state.filling_since = None;
            // Writers waiting for room may proceed.
            shared.room.notify_all();
            group
        };

        // A group with no bytes is a pure sync request (or a due async sync).
        let now = Instant::now();
        let sync = group.sync.or_else(|| {
            let due = unsynced_since.is_some_and(|t| now >= t + shared.async_sync_interval);
            let had_unsynced = segment.unsynced || !group.bytes.is_empty();
            (due && had_unsynced).then_some(SyncKind::Data)
        });
        let started = Instant::now();
        let outcome = MutexGuard::unlocked(&mut state, || {
            let waking = wake_through.take();
            let mut wake = || {
                if let Some(durable) = waking {
                    shared.synced.advance_to(durable);
                }
            };
            let outcome = write_group(shared, &mut segment, &group, sync, &mut wake);
            // Done already unless the write failed before its submission;
            // waking twice is harmless.
            wake();
            outcome
        });
        let elapsed = started.elapsed();
        let elapsed_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);

        match outcome {
            Ok(segments_started) => {
                state.stats.segments_created +=
                    record_segments(&mut state.segments, segments_started, group.max_sequence);
                shared
                    .segment_count
                    .store(state.segments.len(), Ordering::Relaxed);
                debug_assert!(
                    group.number > state.written_group && group.number > state.synced_group,
                    "groups are written and synced in the order they filled"
                );
                state.current_segment_bytes = segment.write_offset;
                state.written_group = group.number;
                state.stats.groups_written += u64::from(!group.bytes.is_empty());
                state.stats.frames_written += group.frames;
                state.stats.writebacks_started += u64::from(segments_started.writeback);
                state.stats.bytes_written += group.frame_bytes;
                if sync.is_some() {
                    state.synced_group = group.number;
                    state.stats.syncs += 1;
                    state.stats.sync_micros_total += elapsed_us;
                    shared.sync_latency.record(elapsed, 1);
                    unsynced_since = None;
                } else if !group.bytes.is_empty() && unsynced_since.is_none() {
                    unsynced_since = Some(started);
                }
            }
            Err(e) => {
                state.failed = Some(e);
                shared.has_failed.store(true, Ordering::Release);
            }
        }
        let failed = state.failed.is_some();
        if failed {
            shared.wake_everyone();
        } else if state.synced_group > shared.synced.get() {
            wake_through = Some(state.synced_group);
        }
        spare = group.bytes;
        spare.clear();
        spare.shrink_to(KEPT_GROUP_CAPACITY_BYTES);
        if failed {
            return Ok(());
        }
    }
}

/// The ids of the segments a group started: before its bytes (they did not
/// fit) and after them (a requested roll). A group may start both.
#[derive(Debug, Clone, Copy, Default)]
struct SegmentsStarted {
    before: Option<u64>,
    after: Option<u64>,
    /// The group's write also started the writeback of the segment's
    /// unsynced bytes.
    writeback: bool,
}

/// Records in `segments` (oldest first, the last being written) what a
/// written group did: the segment it started before its bytes, its highest
/// sequence in the segment its bytes went to, the segment it started after
/// them. Returns how many segments it started.
///
/// Each started segment is recorded under its own id. (It once recorded the
/// id of the segment being written when the group ended, so a group that
/// both overflowed its segment and carried a roll listed the newest segment
/// twice and the one between not at all: a checkpoint then read the
/// unsealed newest segment as an older one and failed, and releasing the
/// first entry could have deleted the segment being written.)
fn record_segments(
    segments: &mut VecDeque<SegmentInfo>,
    started: SegmentsStarted,
    group_max_sequence: u64,
) -> u64 {
    let mut count = 0;
    let mut push = |segments: &mut VecDeque<SegmentInfo>, id| {
        count += 1;
        segments.push_back(SegmentInfo {
            id,
            max_sequence: 0,
        });
    };
    if let Some(id) = started.before {
        push(segments, id);
    }
    if let Some(last) = segments.back_mut() {
        last.max_sequence = last.max_sequence.max(group_max_sequence);
    }
    if let Some(id) = started.after {
        push(segments, id);
    }
    count
}

/// Writes one group (and syncs it when asked); says which new segments it
/// started.
/// `in_flight` runs while the group's I/O is in flight (see
/// [`IoFile::write_at_then_sync`]).
fn write_group(
    shared: &Shared,
    segment: &mut Segment,
    group: &Group,
    sync: Option<SyncKind>,
    in_flight: &mut dyn FnMut(),
) -> Result<SegmentsStarted> {
    let len = group.bytes.len() as u64;
    let mut started = SegmentsStarted::default();
    let header = SEGMENT_HEADER_BYTES as u64;
    let switching = len > 0 && segment.write_offset + len > segment.capacity;
    if switching || segment.write_offset + len > segment.allocated || group.roll {
        // Segment work (syncs, fallocate) comes before the group's own I/O:
        // the durable writers should not wait through it.
        in_flight();
    }
    if switching && segment.write_offset > header {
        start_next_segment(shared, segment, len)?;
        started.before = Some(segment.id);
    }
    if len > 0 {
        segment.allocate_through(segment.write_offset + len)?;
        segment
            .file
            .write_at_then_sync(segment.write_offset, &group.bytes, sync, in_flight)
            .map_err(|e| Error::io(format!("writing {}", segment.file.path().display()), e))?;
        segment.write_offset += len;
        debug_assert!(
            segment.write_offset <= segment.allocated,
            "a group is written inside the segment's allocation"
        );
        segment.frames += group.frames;
        segment.max_sequence = segment.max_sequence.max(group.max_sequence);
        segment.unsynced = sync.is_none();
        started.writeback = segment.start_writeback_of_unsynced(sync.is_some());
    } else if let Some(kind) = sync
        && segment.unsynced
    {
        in_flight();
        segment
            .file
            .sync(kind)
            .map_err(|e| Error::io(format!("syncing {}", segment.file.path().display()), e))?;
        segment.unsynced = false;
        segment.writeback_from = segment.write_offset;
    }
    if group.roll && segment.write_offset > header {
        start_next_segment(shared, segment, 0)?;
        started.after = Some(segment.id);
    }
    Ok(started)
}

/// Seals `segment` and replaces it with the next one, which has room for a
/// first group of `first_group_bytes`.
fn start_next_segment(
    shared: &Shared,
    segment: &mut Segment,
    first_group_bytes: u64,
) -> Result<()> {
    segment.seal(&shared.io, &shared.dir)?;
    *segment = Segment::create(
        &shared.dir,
        &shared.io,
        segment.id + 1,
        shared.segment_bytes,
        first_group_bytes,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Backend;

    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        format::append_frame(&mut out, payload);
        out
    }

    #[test]
    fn sync_writers_are_durable_and_async_writers_get_synced() {
        for backend in [Backend::Sync, Backend::Uring] {
            let dir = tempfile::tempdir().unwrap();
            let io = Io::with_backend(backend);
            let wal = Wal::start(dir.path(), io, 1 << 20, 20, 1, Vec::new()).unwrap();
            let t = wal
                .append(&frame(b"a"), 1, 1, Some(SyncKind::Data))
                .unwrap();
            wal.wait(t).unwrap();
            wal.append(&frame(b"b"), 1, 2, None).unwrap();
            // The async write is synced within the interval without anyone asking.
            let deadline = Instant::now() + Duration::from_secs(5);
            while wal.stats().syncs < 2 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            let stats = wal.stats();
            assert!(stats.syncs >= 2, "{stats:?}");
            assert_eq!(stats.frames_written, 2);
            assert_eq!(wal.segments()[0].max_sequence, 2);
            wal.shutdown().unwrap();
            assert!(matches!(
                wal.append(&frame(b"c"), 1, 3, None),
                Err(Error::Closed)
            ));
        }
    }

    /// An async group started while the commit thread sleeps towards a timed
    /// sync is written within about [`ASYNC_WRITE_DELAY`], not at that sync
    /// (until then a killed process would lose it).
    #[test]
    fn an_async_group_is_written_soon_while_a_timed_sync_is_far_off() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        let wal = Wal::start(dir.path(), io, 1 << 20, 60_000, 1, Vec::new()).unwrap();
        let written = |groups: u64| {
            let deadline = Instant::now() + Duration::from_secs(2);
            while wal.stats().groups_written < groups {
                if Instant::now() > deadline {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            true
        };
        wal.append(&frame(b"a"), 1, 1, None).unwrap();
        assert!(written(1), "{:?}", wal.stats());
        // The commit thread now sleeps until the sync 60 s after "a".
        wal.append(&frame(b"b"), 1, 2, None).unwrap();
        assert!(written(2), "{:?}", wal.stats());
        assert_eq!(wal.stats().syncs, 0);
        wal.shutdown().unwrap();
    }

    /// Async bytes are handed to the disk a step at a time as they are
    /// written, so the sync that follows (or a flush's) has little left to
    /// wait for; synced groups need no hint.
    #[test]
    fn async_groups_start_their_writeback_every_step_and_synced_groups_do_not() {
        const PAYLOAD: usize = 64 * 1024;
        let steps = 3;
        let appends = steps * (WRITEBACK_STEP_BYTES as usize) / PAYLOAD + 1;
        for backend in [Backend::Sync, Backend::Uring] {
            for synced in [false, true] {
                let dir = tempfile::tempdir().unwrap();
                let io = Io::with_backend(backend);
                let wal = Wal::start(dir.path(), io, 64 << 20, 60_000, 1, Vec::new()).unwrap();
                let payload = vec![7u8; PAYLOAD];
                for sequence in 1..=appends as u64 {
                    let sync = synced.then_some(SyncKind::Data);
                    wal.append(&frame(&payload), 1, sequence, sync).unwrap();
                    // One group per append, so each write is its own step.
                    let deadline = Instant::now() + Duration::from_secs(5);
                    while wal.stats().groups_written < sequence && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                let stats = wal.stats();
                if synced {
                    assert_eq!(stats.writebacks_started, 0, "{stats:?}");
                } else {
                    assert!(
                        stats.writebacks_started >= steps as u64
                            && stats.writebacks_started <= steps as u64 + 1,
                        "{backend:?}: {stats:?}"
                    );
                }
                wal.shutdown().unwrap();
            }
        }
    }

    #[test]
    fn a_failure_fails_the_parked_writers_and_keeps_earlier_syncs_good() {
        for backend in [Backend::Sync, Backend::Uring] {
            let root = tempfile::tempdir().unwrap();
            let dir = root.path().join("wal");
            std::fs::create_dir(&dir).unwrap();
            let io = Io::with_backend(backend);
            let wal = Wal::start(&dir, io, 64 * 1024, 20, 1, Vec::new()).unwrap();
            let big = frame(&vec![7u8; 40 * 1024]);
            let durable = wal.append(&big, 1, 1, Some(SyncKind::Data)).unwrap();
            wal.wait(durable).unwrap();
            // The next group does not fit the segment, and starting the next
            // segment fails without its directory.
            std::fs::remove_dir_all(&dir).unwrap();
            // Each writer reports whether its append was taken and what its
            // wait (if it got that far) returned.
            let results: Vec<(bool, Result<()>)> = std::thread::scope(|scope| {
                let writers: Vec<_> = (2..6)
                    .map(|sequence| {
                        let (wal, big) = (&wal, &big);
                        scope.spawn(move || {
                            match wal.append(big, 1, sequence, Some(SyncKind::Data)) {
                                Ok(ticket) => (true, wal.wait(ticket)),
                                Err(e) => (false, Err(e)),
                            }
                        })
                    })
                    .collect();
                writers.into_iter().map(|w| w.join().unwrap()).collect()
            });
            // The first append always lands (nothing has failed yet), so at
            // least one writer waits on a group that fails.
            assert!(results.iter().any(|(appended, _)| *appended), "{backend:?}");
            for (_, result) in results {
                assert!(
                    matches!(result, Err(Error::WalFailed { .. })),
                    "{backend:?}: {result:?}"
                );
            }
            assert!(
                wal.wait(durable).is_ok(),
                "a group synced before stays durable"
            );
        }
    }

    #[test]
    fn a_failed_log_keeps_its_cause_typed() {
        let cause = Error::io(
            "syncing wal/000001.log",
            std::io::Error::from_raw_os_error(libc::EIO),
        );
        let failed = wal_failed(&cause);
        let Error::WalFailed { cause: kept } = &failed else {
            panic!("{failed:?}");
        };
        assert!(matches!(**kept, Error::Io { .. }));
        assert!(failed.to_string().contains("syncing wal/000001.log"));
        let source = std::error::Error::source(&failed).map(ToString::to_string);
        assert_eq!(source, Some(cause.to_string()));
    }

    #[test]
    fn a_failed_sync_is_never_retried_and_a_power_loss_keeps_only_the_synced_groups() {
        use crate::io::fault::{
            FaultInjector, FaultRule, FileKind, InjectedError, IoOp, PowerLoss,
        };
        let dir = tempfile::tempdir().unwrap();
        let mutation = |sequence: u64| {
            let mut payload = Vec::new();
            let cells = [(crate::cell::CellKind::Put, 1i64, &b"q"[..], &b"v"[..])];
            format::encode_mutation(
                &mut payload,
                1,
                sequence,
                b"row",
                [(1u32, cells.into_iter())].into_iter(),
            );
            frame(&payload)
        };
        let faults = FaultInjector::new(1);
        let wal = Wal::start(
            dir.path(),
            Io::with_faults(&faults),
            1 << 20,
            20,
            1,
            Vec::new(),
        )
        .unwrap();
        let durable = wal
            .append(&mutation(1), 1, 1, Some(SyncKind::Data))
            .unwrap();
        wal.wait(durable).unwrap();
        faults.add_rule(
            FaultRule::new(IoOp::Sync, InjectedError::Eio)
                .on(FileKind::Wal)
                .times(1),
        );
        let failed = wal
            .append(&mutation(2), 1, 2, Some(SyncKind::Data))
            .unwrap();
        assert!(matches!(wal.wait(failed), Err(Error::WalFailed { .. })));
        assert!(matches!(wal.failure(), Some(Error::Io { .. })));
        // The rule fired once; the WAL still refuses: the data the failed
        // sync covered may be gone from the page cache.
        assert!(matches!(
            wal.append(&mutation(3), 1, 3, Some(SyncKind::Data)),
            Err(Error::WalFailed { .. })
        ));
        drop(wal);
        faults.power_loss(PowerLoss::drop_unsynced()).unwrap();
        let mut sequences = Vec::new();
        let summary = replay::replay(
            dir.path(),
            &Io::with_backend(Backend::Sync),
            replay::ReplayMode::Repair(crate::options::WalRecovery::Strict),
            |m, _, _| {
                sequences.push(m.sequence);
                Ok(())
            },
        );
        assert!(summary.is_ok(), "{summary:?}");
        assert_eq!(sequences, [1], "only the synced group survives");
    }

    #[test]
    fn groups_roll_over_into_new_segments() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        let wal = Wal::start(dir.path(), io, 64 * 1024, 20, 1, Vec::new()).unwrap();
        let big = frame(&vec![7u8; 40 * 1024]);
        for seq in 1..=3 {
            let t = wal.append(&big, 1, seq, Some(SyncKind::Data)).unwrap();
            wal.wait(t).unwrap();
        }
        let segments = wal.segments();
        assert_eq!(segments.len(), 3);
        assert_eq!(
            segments.iter().map(|s| s.max_sequence).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        // A frame bigger than a segment gets a segment of its own size.
        let huge = frame(&vec![1u8; 100 * 1024]);
        let t = wal.append(&huge, 1, 4, Some(SyncKind::Data)).unwrap();
        wal.wait(t).unwrap();
        assert_eq!(wal.segments().len(), 4);
        assert_eq!(wal.segment_count(), 4);
        wal.shutdown().unwrap();
    }

    #[test]
    fn segments_grow_their_allocation_in_steps() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        let segment_bytes = 64 << 20;
        let wal = Wal::start(dir.path(), io, segment_bytes, 20, 1, Vec::new()).unwrap();
        let path = dir.path().join(segment_file_name(1));
        let len = || std::fs::metadata(&path).unwrap().len();
        assert_eq!(len(), PREALLOCATE_STEP_BYTES);
        // 6 MiB of frames: one more step is allocated, not the whole segment.
        let chunk = frame(&vec![3u8; 1 << 20]);
        for seq in 1..=6 {
            let t = wal.append(&chunk, 1, seq, Some(SyncKind::Data)).unwrap();
            wal.wait(t).unwrap();
        }
        assert_eq!(wal.segments().len(), 1);
        assert_eq!(len(), 2 * PREALLOCATE_STEP_BYTES);
        wal.shutdown().unwrap();
        // Every frame reads back from the sealed segment: six frames, each
        // in a group of its own with its commit record, then the seal.
        let scan = replay::scan_frames(&std::fs::read(&path).unwrap(), SEGMENT_HEADER_BYTES);
        assert_eq!(scan.frames.len(), 6 * 2 + 1);
        assert_eq!(scan.tail, replay::Tail::Zeros);
    }

    #[test]
    fn a_burst_does_not_keep_its_group_buffers() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        let wal = Wal::start(dir.path(), io, 64 << 20, 20, 1, Vec::new()).unwrap();
        // One 16 MiB group, then small ones: the buffers the commit thread
        // alternates come back to at most the kept capacity.
        let t = wal
            .append(&frame(&vec![1u8; 16 << 20]), 1, 1, Some(SyncKind::Data))
            .unwrap();
        wal.wait(t).unwrap();
        for seq in 2..=4 {
            let t = wal
                .append(&frame(b"v"), 1, seq, Some(SyncKind::Data))
                .unwrap();
            wal.wait(t).unwrap();
        }
        let capacity = wal.shared.state.lock().filling.capacity();
        assert!(
            capacity <= KEPT_GROUP_CAPACITY_BYTES,
            "filling buffer kept {capacity} bytes"
        );
        wal.shutdown().unwrap();
    }

    /// A group of `frames` as the commit thread makes it, with its commit
    /// record.
    fn group(number: u64, frames: &[Vec<u8>], max_sequence: u64, roll: bool) -> Group {
        let mut bytes: Vec<u8> = frames.concat();
        let frame_bytes = bytes.len() as u64;
        format::append_group_commit(&mut bytes, frames.len() as u32, frame_bytes);
        Group {
            number,
            bytes,
            frame_bytes,
            frames: frames.len() as u64,
            max_sequence,
            sync: Some(SyncKind::Data),
            roll,
        }
    }

    #[test]
    fn a_group_that_overflows_its_segment_and_rolls_records_both_new_segments() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        // The log's own commit thread writes segment 1; this test writes
        // segments from 100 on beside it, through the same shared state.
        let wal = Wal::start(dir.path(), io.clone(), 64 * 1024, 20, 1, Vec::new()).unwrap();
        let mut segment = Segment::create(dir.path(), &io, 100, 64 * 1024, 0).unwrap();
        let mut segments = VecDeque::from([SegmentInfo {
            id: 100,
            max_sequence: 0,
        }]);
        let big = frame(&vec![7u8; 40 * 1024]);
        let mut write = |segment: &mut Segment, group: &Group| {
            let started = write_group(&wal.shared, segment, group, group.sync, &mut || {}).unwrap();
            record_segments(&mut segments, started, group.max_sequence)
        };
        assert_eq!(
            write(
                &mut segment,
                &group(1, std::slice::from_ref(&big), 1, false)
            ),
            0
        );
        // 40 KiB more do not fit: segment 101 takes them, and the roll then
        // seals it and starts 102.
        assert_eq!(
            write(&mut segment, &group(2, std::slice::from_ref(&big), 2, true)),
            2
        );
        assert_eq!(segment.id, 102);
        assert_eq!(
            segments
                .iter()
                .map(|s| (s.id, s.max_sequence))
                .collect::<Vec<_>>(),
            [(100, 1), (101, 2), (102, 0)]
        );
        // Each sealed: its frame, its group's commit record, the seal.
        for id in [100, 101] {
            let bytes = std::fs::read(dir.path().join(segment_file_name(id))).unwrap();
            let scan = replay::scan_frames(&bytes, SEGMENT_HEADER_BYTES);
            assert_eq!(scan.frames.len(), 3, "segment {id}");
            assert_eq!(scan.tail, replay::Tail::Zeros, "segment {id}");
        }
        drop(segment);
        wal.shutdown().unwrap();
    }

    #[test]
    fn roll_seals_the_segment_so_release_can_delete_it() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::with_backend(Backend::Sync);
        let wal = Wal::start(dir.path(), io, 1 << 20, 20, 1, Vec::new()).unwrap();
        // Rolling an empty segment does nothing.
        wal.roll().unwrap();
        assert_eq!(wal.segments().len(), 1);
        let t = wal.append(&frame(b"a"), 1, 5, None).unwrap();
        let _ = t;
        wal.roll().unwrap();
        let segments = wal.segments();
        assert_eq!(
            segments
                .iter()
                .map(|s| (s.id, s.max_sequence))
                .collect::<Vec<_>>(),
            [(1, 5), (2, 0)]
        );
        assert!(
            wal.current_segment().0 < 64,
            "the new segment holds only its header"
        );
        // The sealed segment is cut to its frames and deleted once flushed.
        let sealed = dir.path().join(segment_file_name(1));
        assert_eq!(
            std::fs::metadata(&sealed).unwrap().len(),
            (SEGMENT_HEADER_BYTES
                + frame(b"a").len()
                + format::GROUP_COMMIT_FRAME_BYTES
                + format::SEAL_FRAME_BYTES) as u64
        );
        assert_eq!(wal.segment_count(), 2);
        wal.release_through(4).unwrap();
        assert!(sealed.exists());
        assert_eq!(wal.segment_count(), 2);
        wal.release_through(5).unwrap();
        assert!(!sealed.exists());
        // The count read without the lock follows the list.
        assert_eq!(wal.segment_count(), 1);
        assert_eq!(wal.segments().len(), 1);
        // Frames appended after the roll go to the new segment.
        let t = wal
            .append(&frame(b"b"), 1, 6, Some(SyncKind::Data))
            .unwrap();
        wal.wait(t).unwrap();
        assert_eq!(wal.current_segment().1, 6);
        wal.shutdown().unwrap();
    }

    #[test]
    fn concurrent_sync_writers_share_syncs() {
        let dir = tempfile::tempdir().unwrap();
        let io = Io::resolve(crate::options::IoMode::Auto).unwrap();
        let wal = Arc::new(Wal::start(dir.path(), io, 1 << 24, 100, 1, Vec::new()).unwrap());
        let writers: Vec<_> = (0..16u64)
            .map(|w| {
                let wal = wal.clone();
                std::thread::spawn(move || {
                    for i in 0..50u64 {
                        let t = wal
                            .append(
                                &frame(&[w as u8; 100]),
                                1,
                                w * 1000 + i,
                                Some(SyncKind::Data),
                            )
                            .unwrap();
                        wal.wait(t).unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        let stats = wal.stats();
        assert_eq!(stats.frames_written, 800);
        assert!(stats.syncs < 800, "group commit merged syncs: {stats:?}");
    }
}
