//! The io_uring back end: one ring per thread.
//!
//! Contract: every function here submits its SQEs and then waits for *all*
//! of their completions before it returns, so the buffers the SQEs point at
//! (borrowed from the caller) are never touched by the kernel after return.
//! A thread whose ring cannot be created falls back to the sync back end
//! (each function then returns `None`).

use std::cell::RefCell;
use std::io;
use std::sync::OnceLock;

use io_uring::{IoUring, Probe, opcode, squeue, types};

use super::{FailedRead, MAX_IO_BYTES, ReadOp, SyncKind};

/// Submission queue entries per ring; batches larger than this are split.
const RING_ENTRIES: u32 = 256;

/// How many times a busy or interrupted `io_uring_enter` is retried before
/// giving up on a submission that has nothing in flight.
const MAX_ENTER_RETRIES: u32 = 10_000;

enum RingSlot {
    Untried,
    Ready(Box<IoUring>),
    Unavailable,
}

thread_local! {
    static RING: RefCell<RingSlot> = const { RefCell::new(RingSlot::Untried) };
}

/// Why io_uring could not be used, the first time a ring failed to set up
/// in this process (`IoMode::Auto` then falls back to the sync back end).
static FALLBACK_REASON: OnceLock<String> = OnceLock::new();

/// Records, once per process, that io_uring is not usable and the sync back
/// end is used instead. The library prints nothing: [`fallback_reason`]
/// tells whoever asks (the binaries print it).
pub(super) fn note_fallback(error: &io::Error) {
    let _ = FALLBACK_REASON.set(error.to_string());
}

/// Why this process uses the sync back end where io_uring was wanted, if it
/// does.
pub(super) fn fallback_reason() -> Option<&'static str> {
    FALLBACK_REASON.get().map(String::as_str)
}

/// Checks that a ring can be created and supports the opcodes strata uses.
pub(super) fn probe() -> io::Result<()> {
    let ring = IoUring::new(8)?;
    let mut probe = Probe::new();
    ring.submitter().register_probe(&mut probe)?;
    for (code, name) in [
        (opcode::Read::CODE, "READ"),
        (opcode::Write::CODE, "WRITE"),
        (opcode::Fsync::CODE, "FSYNC"),
    ] {
        if !probe.is_supported(code) {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("the kernel's io_uring lacks IORING_OP_{name}"),
            ));
        }
    }
    Ok(())
}

/// Runs `f` with this thread's ring; `None` when the thread has no ring.
fn with_ring<R>(f: impl FnOnce(&mut IoUring) -> io::Result<R>) -> Option<io::Result<R>> {
    RING.try_with(|slot| {
        let mut slot = slot.try_borrow_mut().ok()?;
        if matches!(*slot, RingSlot::Untried) {
            *slot = match IoUring::new(RING_ENTRIES) {
                Ok(ring) => RingSlot::Ready(Box::new(ring)),
                Err(e) => {
                    note_fallback(&e);
                    RingSlot::Unavailable
                }
            };
        }
        let RingSlot::Ready(ring) = &mut *slot else {
            return None;
        };
        let result = f(ring);
        if matches!(&result, Err(e) if e.kind() == io::ErrorKind::BrokenPipe) {
            // The ring itself failed (see `run`); start afresh next time.
            *slot = RingSlot::Untried;
        }
        Some(result)
    })
    .ok()
    .flatten()
}

fn retryable(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY)
    )
}

/// Submits `entries` (chunked by ring size, never splitting a linked pair
/// because callers link at most two entries and the ring size is even) and
/// returns each entry's result, waiting for every completion.
///
/// Safety: every buffer an entry points at must stay valid and unaliased
/// until this function returns.
unsafe fn run(ring: &mut IoUring, entries: &[squeue::Entry]) -> io::Result<Vec<i32>> {
    // SAFETY: passed on from the caller.
    unsafe { run_overlapping(ring, entries, None) }
}

/// [`run`], calling `in_flight` (if any) once the first entries are
/// submitted and before waiting for them, so that the caller's work
/// overlaps the I/O. Without it, submitting and waiting stay one
/// `io_uring_enter`.
///
/// Safety: as for [`run`], and `in_flight` must not unwind: the kernel
/// still reads the buffers while it runs.
unsafe fn run_overlapping(
    ring: &mut IoUring,
    entries: &[squeue::Entry],
    mut in_flight: Option<&mut dyn FnMut()>,
) -> io::Result<Vec<i32>> {
    let mut results = vec![0i32; entries.len()];
    for (chunk_index, chunk) in entries.chunks(RING_ENTRIES as usize).enumerate() {
        let base = chunk_index * RING_ENTRIES as usize;
        {
            let mut sq = ring.submission();
            for (i, entry) in chunk.iter().enumerate() {
                let entry = entry.clone().user_data((base + i) as u64);
                // SAFETY: the caller keeps the buffers alive until we return,
                // and we return only after every submitted entry completed.
                unsafe { sq.push(&entry) }
                    .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
        }
        let mut submitted = 0usize;
        let mut completed = 0usize;
        let mut retries = 0u32;
        if let Some(in_flight) = in_flight.take() {
            // A failed submit consumed no entry; the loop below submits
            // them again and handles the error.
            if let Ok(n) = ring.submit() {
                submitted += n;
            }
            in_flight();
        }
        while completed < chunk.len() {
            match ring.submit_and_wait(chunk.len() - completed) {
                Ok(n) => submitted += n,
                Err(e) if retryable(&e) && retries < MAX_ENTER_RETRIES => {
                    retries += 1;
                    if e.raw_os_error() != Some(libc::EINTR) {
                        std::thread::yield_now();
                    }
                }
                Err(e) => {
                    if submitted == completed {
                        // Nothing of ours is in flight: io_uring_enter reports
                        // an error only when it consumed no SQE, so dropping
                        // the ring (BrokenPipe) discards the unsubmitted ones.
                        return Err(io::Error::new(
                            io::ErrorKind::BrokenPipe,
                            format!("io_uring_enter failed: {e}"),
                        ));
                    }
                    // The kernel still holds buffers we borrowed; returning
                    // now would let it write into freed memory. The process
                    // ends here, so this one line on stderr is the only way
                    // left to say why (the one place the library prints).
                    eprintln!("strata: io_uring_enter failed with I/O in flight ({e}); aborting");
                    std::process::abort();
                }
            }
            for cqe in ring.completion() {
                if let Some(slot) = usize::try_from(cqe.user_data())
                    .ok()
                    .and_then(|i| i.checked_sub(base))
                    .and_then(|i| results.get_mut(base + i))
                {
                    *slot = cqe.result();
                    completed += 1;
                }
            }
        }
    }
    Ok(results)
}

fn os_error(result: i32) -> io::Error {
    io::Error::from_raw_os_error(-result)
}

/// Fills every buffer; short reads are continued, end of file is an error
/// (naming the read that failed).
pub(super) fn read_many(ops: &mut [ReadOp<'_>]) -> Option<Result<(), FailedRead>> {
    let mut failed: Option<FailedRead> = None;
    let outcome = with_ring(|ring| {
        // done[i]: bytes of op i already read.
        let mut done = vec![0usize; ops.len()];
        loop {
            let pending: Vec<usize> = (0..ops.len())
                .filter(|&i| {
                    done.get(i).copied().unwrap_or(0) < ops.get(i).map_or(0, |o| o.buf.len())
                })
                .collect();
            let Some(&first_pending) = pending.first() else {
                return Ok(());
            };
            let entries: Vec<squeue::Entry> = pending
                .iter()
                .filter_map(|&i| {
                    let op = ops.get_mut(i)?;
                    let start = *done.get(i)?;
                    let len = (op.buf.len() - start).min(MAX_IO_BYTES);
                    let ptr = op.buf.get_mut(start..)?.as_mut_ptr();
                    Some(
                        opcode::Read::new(types::Fd(op.file.raw_fd()), ptr, len as u32)
                            .offset(op.offset + start as u64)
                            .build(),
                    )
                })
                .collect();
            // SAFETY: the buffers are borrowed mutably from `ops` for the
            // whole call and `run` waits for every completion.
            let results = match unsafe { run(ring, &entries) } {
                Ok(results) => results,
                Err(e) => {
                    // The ring failed (BrokenPipe, see `run`): report it on
                    // the first read still wanted.
                    failed = Some(FailedRead {
                        index: first_pending,
                        source: io::Error::new(e.kind(), e.to_string()),
                    });
                    return Err(e);
                }
            };
            for (&i, &res) in pending.iter().zip(&results) {
                let Some(op) = ops.get(i) else { continue };
                if res < 0 {
                    if res == -libc::EINTR || res == -libc::EAGAIN {
                        continue;
                    }
                    failed = Some(FailedRead {
                        index: i,
                        source: os_error(res),
                    });
                    return Ok(());
                }
                if res == 0 {
                    failed = Some(FailedRead {
                        index: i,
                        source: io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!(
                                "wanted {} bytes, the file ends after {}",
                                op.buf.len(),
                                done.get(i).copied().unwrap_or(0)
                            ),
                        ),
                    });
                    return Ok(());
                }
                if let Some(d) = done.get_mut(i) {
                    *d += res as usize;
                }
            }
        }
    })?;
    Some(match (failed, outcome) {
        (Some(failed), _) => Err(failed),
        (None, Ok(())) => Ok(()),
        (None, Err(e)) => Err(FailedRead {
            index: 0,
            source: e,
        }),
    })
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
pub(super) fn read_at(fd: i32, offset: u64, buf: &mut [u8]) -> Option<io::Result<usize>> {
    with_ring(|ring| {
        let mut done = 0usize;
        while done < buf.len() {
            let len = (buf.len() - done).min(MAX_IO_BYTES);
            let ptr = buf.get_mut(done..).unwrap_or_default().as_mut_ptr();
            let entry = opcode::Read::new(types::Fd(fd), ptr, len as u32)
                .offset(offset + done as u64)
                .build();
            // SAFETY: `buf` is borrowed mutably for the whole call and `run`
            // waits for the completion.
            let res = unsafe { run(ring, std::slice::from_ref(&entry)) }?
                .first()
                .copied()
                .unwrap_or(0);
            match res {
                0 => break,
                r if r == -libc::EINTR || r == -libc::EAGAIN => continue,
                r if r < 0 => return Err(os_error(r)),
                r => done += r as usize,
            }
        }
        Ok(done)
    })
}

fn fsync_entry(fd: i32, kind: SyncKind) -> squeue::Entry {
    let flags = match kind {
        SyncKind::Data => types::FsyncFlags::DATASYNC,
        SyncKind::All => types::FsyncFlags::empty(),
    };
    opcode::Fsync::new(types::Fd(fd)).flags(flags).build()
}

/// Writes all of `buf` at `offset`; with `sync`, the last write and the
/// sync are linked SQEs in one submission.
pub(super) fn write_at_then_sync(
    fd: i32,
    offset: u64,
    buf: &[u8],
    sync: Option<SyncKind>,
    in_flight: &mut dyn FnMut(),
) -> Option<io::Result<()>> {
    with_ring(|ring| {
        let mut done = 0usize;
        let mut synced = false;
        while done < buf.len() || (sync.is_some() && !synced) {
            let len = (buf.len() - done).min(MAX_IO_BYTES);
            let last = done + len == buf.len();
            let mut entries = Vec::with_capacity(2);
            if len > 0 {
                let ptr = buf.get(done..).unwrap_or_default().as_ptr();
                let write = opcode::Write::new(types::Fd(fd), ptr, len as u32)
                    .offset(offset + done as u64)
                    .build();
                entries.push(match (last, sync) {
                    (true, Some(_)) => write.flags(squeue::Flags::IO_LINK),
                    _ => write,
                });
            }
            if let (true, Some(kind)) = (last, sync) {
                entries.push(fsync_entry(fd, kind));
            }
            // SAFETY: `buf` is borrowed for the whole call and
            // `run_overlapping` waits for every completion; the caller's
            // `in_flight` does not unwind (see `IoFile::write_at_then_sync`).
            let results = unsafe { run_overlapping(ring, &entries, Some(&mut *in_flight)) }?;
            let mut results = results.into_iter();
            if len > 0 {
                match results.next().unwrap_or(0) {
                    r if r == -libc::EINTR || r == -libc::EAGAIN => continue,
                    r if r < 0 => return Err(os_error(r)),
                    0 => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                    r => done += r as usize,
                }
            }
            if let Some(res) = results.next() {
                // A short write severs the link (-ECANCELED): loop again to
                // write the rest, then sync.
                match res {
                    0 => synced = true,
                    r if r == -libc::ECANCELED || r == -libc::EINTR => {}
                    r => return Err(os_error(r)),
                }
            }
        }
        Ok(())
    })
}

/// `fdatasync` or `fsync` through the ring.
pub(super) fn sync(fd: i32, kind: SyncKind) -> Option<io::Result<()>> {
    with_ring(|ring| {
        loop {
            let entry = fsync_entry(fd, kind);
            // SAFETY: an fsync entry points at no buffer.
            let res = unsafe { run(ring, std::slice::from_ref(&entry)) }?
                .first()
                .copied()
                .unwrap_or(0);
            match res {
                0 => return Ok(()),
                r if r == -libc::EINTR || r == -libc::EAGAIN => continue,
                r => return Err(os_error(r)),
            }
        }
    })
}
