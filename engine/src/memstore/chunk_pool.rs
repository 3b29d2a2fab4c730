//! Full-size arena chunks whose pages are already in memory, for memstore
//! writers (HBase keeps its MSLAB chunks in a `MemStoreChunkPool` for the
//! same reason).
//!
//! A chunk fresh from the allocator has no pages yet: the writer that fills
//! it takes a page fault on every 4 KiB, and the kernel zeroes each page
//! first. At 1 MiB chunks and ~140-byte cells that was about a sixth of a
//! sequential put's time on the writing thread (perf, fillseq at 1,000,000
//! records: `clear_page_erms` 9% of all samples, plus the faults and the
//! memory cgroup's charge). The pool moves that work off the write path:
//!
//! * a filler thread (`strata-chunks`, one a process, started by the first
//!   writer that needs a full-size chunk) keeps up to [`READY_CHUNKS`] chunks
//!   with every page touched;
//! * a memstore dropped after its flush gives its full-size chunks back, still
//!   in memory, up to the same bound (the rest are freed).
//!
//! A writer never waits for the pool: when it is empty, the writer allocates
//! a chunk itself as it would without one. The pool holds at most
//! `READY_CHUNKS` chunks (4 MiB) that no memstore counts; a chunk handed to
//! a memstore is counted in that memstore's size as any other.

use std::mem::MaybeUninit;
use std::sync::Once;

use parking_lot::{Condvar, Mutex};

/// A full-size chunk: [`CHUNK_BYTES`] bytes as 8-byte words.
pub(super) type Chunk = Box<[MaybeUninit<u64>]>;

/// Size of the chunks the pool holds, in bytes: the arena's largest shared
/// chunk, which is what a memstore past its first megabyte allocates.
pub(super) const CHUNK_BYTES: usize = super::MAX_CHUNK_BYTES;

/// Chunks the pool keeps ready at most (4 MiB): a sequential writer fills
/// one in about 7,000 small cells, several milliseconds, and the filler
/// touches one in well under one.
const READY_CHUNKS: usize = 4;

/// Bytes between the writes that fault a chunk's pages in: the smallest
/// page size Linux uses (larger pages are faulted by fewer of the writes).
const PAGE_BYTES: usize = 4096;

static READY: Mutex<Vec<Chunk>> = parking_lot::const_mutex(Vec::new());
/// Signalled when a chunk is taken, so that the filler makes another.
static TAKEN: Condvar = Condvar::new();
static FILLER: Once = Once::new();

/// A full-size chunk: one whose pages are in memory if the pool has one,
/// otherwise a fresh allocation.
pub(super) fn take() -> Chunk {
    FILLER.call_once(start_filler);
    let pooled = READY.lock().pop();
    TAKEN.notify_one();
    pooled.unwrap_or_else(allocate)
}

/// Takes back a full-size chunk of a dropped memstore; frees it when the
/// pool is full.
pub(super) fn give_back(chunk: Chunk) {
    debug_assert_eq!(chunk.len() * 8, CHUNK_BYTES);
    let mut ready = READY.lock();
    if ready.len() < READY_CHUNKS {
        ready.push(chunk);
        return;
    }
    drop(ready);
    drop(chunk);
}

/// Chunks the pool holds now (for tests).
#[cfg(test)]
pub(super) fn ready_count() -> usize {
    READY.lock().len()
}

fn allocate() -> Chunk {
    super::uninit_words(CHUNK_BYTES / 8)
}

/// A fresh chunk with a write on every page, so that the writer that takes
/// it faults none of them.
fn touched() -> Chunk {
    let mut chunk = allocate();
    for word in chunk.iter_mut().step_by(PAGE_BYTES / 8) {
        *word = MaybeUninit::new(0);
    }
    chunk
}

/// Starts the filler thread. Without one (the thread could not be started)
/// the pool still serves the chunks dropped memstores give back.
fn start_filler() {
    // The thread runs for the rest of the process, as an allocator's would:
    // it holds no database's state, only the pool's few chunks.
    let _ = std::thread::Builder::new()
        .name("strata-chunks".into())
        .spawn(fill);
}

/// The filler's loop: waits until the pool is short of chunks, then makes
/// one outside the lock.
fn fill() {
    loop {
        {
            let mut ready = READY.lock();
            while ready.len() >= READY_CHUNKS {
                TAKEN.wait(&mut ready);
            }
        }
        give_back(touched());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Waits up to 10 s for the filler to fill the pool. Other tests'
    /// memstores take and give back chunks meanwhile, so a full pool is
    /// awaited rather than assumed.
    fn wait_until_full() -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if ready_count() == READY_CHUNKS {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    /// Pages of `chunk` that are in memory, of the whole pages it spans.
    fn resident_pages(chunk: &Chunk) -> (usize, usize) {
        // SAFETY: sysconf reads a constant.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap();
        let start = (chunk.as_ptr() as usize).next_multiple_of(page);
        let end = (chunk.as_ptr() as usize + CHUNK_BYTES) / page * page;
        let pages = (end - start) / page;
        let mut flags = vec![0u8; pages];
        // SAFETY: [start, end) is page-aligned and inside the chunk's live
        // allocation; `flags` has one byte a page.
        let rc = unsafe {
            libc::mincore(
                start as *mut libc::c_void,
                end - start,
                flags.as_mut_ptr().cast(),
            )
        };
        assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
        (flags.iter().filter(|f| **f & 1 == 1).count(), pages)
    }

    #[test]
    fn the_filler_keeps_chunks_ready_with_their_pages_in_memory() {
        let first = take();
        assert_eq!(first.len() * 8, CHUNK_BYTES);
        // A try fails only if other tests emptied the pool between the wait
        // and the take (the writer then allocated a fresh chunk).
        let mut seen = Vec::new();
        let all_in_memory = (0..5).any(|_| {
            assert!(wait_until_full(), "the filler refilled the pool");
            let pooled = take();
            let (resident, pages) = resident_pages(&pooled);
            seen.push((resident, pages));
            give_back(pooled);
            resident == pages
        });
        assert!(
            all_in_memory,
            "a ready chunk's pages are in memory: {seen:?}"
        );
        give_back(first);
        assert!(
            ready_count() <= READY_CHUNKS,
            "a full pool frees what comes back"
        );
    }
}
