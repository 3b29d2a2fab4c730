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
//! `READY_CHUNKS` chunks (8 MiB) that no memstore counts; a chunk handed to
//! a memstore is counted in that memstore's size as any other.
//!
//! A memstore written in random order asks for chunks on transparent huge
//! pages (`MADV_HUGEPAGE`; chunks are 2 MiB and aligned to it): its inserts
//! descend the skiplist through nodes spread over the whole arena, and with
//! 4 KiB pages nearly every node a descent visits also missed the TLB, a
//! page walk that a virtual machine makes twice (fillrandom and overwrite
//! 1.16x and 1.14x at 200,000 records, 1.38x and 1.22x at 1,000,000). A
//! memstore written in order does not: its inserts touch the last few nodes
//! only, and a huge page costs the filler more to fault in (where the
//! host backs guest memory on first touch, 2 MiB at a time is slow), time
//! the sequential writer's log and flush needed on a 2-core machine
//! (fillseq 0.91x with huge pages for every chunk). Where the system has
//! no huge pages for the process (THP `never`), the advice does nothing.

use std::alloc::Layout;
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{Condvar, Mutex};

/// A full-size chunk: [`CHUNK_BYTES`] bytes of 8-byte words, aligned to
/// [`CHUNK_BYTES`] so that the kernel can back it with one huge page.
pub(super) struct Chunk {
    start: NonNull<MaybeUninit<u64>>,
    /// Advised onto huge pages.
    huge: bool,
}

// SAFETY: a chunk owns its allocation; nothing else points into it until
// the arena that owns the chunk hands out nodes, which that arena governs.
unsafe impl Send for Chunk {}

/// The layout of every full-size chunk.
const CHUNK_LAYOUT: Layout = match Layout::from_size_align(CHUNK_BYTES, CHUNK_BYTES) {
    Ok(layout) => layout,
    Err(_) => panic!("CHUNK_BYTES is a power of two"),
};

impl Chunk {
    /// A fresh chunk, advised onto huge pages when `huge`; its pages are not
    /// in memory yet.
    fn allocate(huge: bool) -> Chunk {
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(CHUNK_LAYOUT) };
        let Some(start) = NonNull::new(raw.cast::<MaybeUninit<u64>>()) else {
            std::alloc::handle_alloc_error(CHUNK_LAYOUT)
        };
        // Advised either way: the allocator reuses freed memory, and advice
        // stays with the range, so a plain chunk could otherwise land on
        // an earlier huge one's pages and pay their faults (in a process
        // that ran random loads first, sequential ones slowed down).
        let advice = if huge {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        // SAFETY: the range is this chunk's own allocation, aligned to the
        // page size. Advice only: a failure (no THP here) leaves the pages
        // as they are, which is correct too.
        let _ = unsafe { libc::madvise(raw.cast(), CHUNK_BYTES, advice) };
        Chunk { start, huge }
    }

    /// Whether the chunk was advised onto huge pages.
    #[cfg(test)]
    pub(super) fn is_huge(&self) -> bool {
        self.huge
    }

    /// The chunk's words.
    pub(super) fn words(&mut self) -> &mut [MaybeUninit<u64>] {
        // SAFETY: `start` points at CHUNK_BYTES / 8 words this chunk owns;
        // `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), CHUNK_BYTES / 8) }
    }

    /// Where the chunk starts.
    #[cfg(test)]
    pub(super) fn as_ptr(&self) -> *const u8 {
        self.start.as_ptr().cast()
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: allocated in `Chunk::allocate` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.start.as_ptr().cast(), CHUNK_LAYOUT) }
    }
}

/// Size of the chunks the pool holds, in bytes: the arena's largest shared
/// chunk, which is what a memstore past its first megabyte allocates.
pub(super) const CHUNK_BYTES: usize = super::MAX_CHUNK_BYTES;

/// Chunks the pool keeps ready at most (8 MiB): a sequential writer fills
/// one in about 14,000 small cells, several milliseconds, and the filler
/// touches one in well under one.
const READY_CHUNKS: usize = 4;

/// Bytes between the writes that fault a chunk's pages in: the smallest
/// page size Linux uses (larger pages are faulted by fewer of the writes).
const PAGE_BYTES: usize = 4096;

static READY: Mutex<Vec<Chunk>> = parking_lot::const_mutex(Vec::new());
/// The kind of chunk the last writer asked for: the kind the filler makes.
static WANT_HUGE: AtomicBool = AtomicBool::new(false);
/// Signalled when a chunk is taken, so that the filler makes another.
static TAKEN: Condvar = Condvar::new();
static FILLER: Once = Once::new();

/// A full-size chunk, on huge pages when `huge`: one whose pages are in
/// memory if the pool has one of the kind, otherwise a fresh allocation.
pub(super) fn take(huge: bool) -> Chunk {
    FILLER.call_once(start_filler);
    WANT_HUGE.store(huge, Ordering::Relaxed);
    let pooled = {
        let mut ready = READY.lock();
        ready
            .iter()
            .rposition(|chunk| chunk.huge == huge)
            .map(|at| ready.swap_remove(at))
    };
    TAKEN.notify_one();
    pooled.unwrap_or_else(|| Chunk::allocate(huge))
}

/// Takes back a full-size chunk of a dropped memstore; frees it when the
/// pool is full.
pub(super) fn give_back(chunk: Chunk) {
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

/// A fresh chunk with a write on every page, so that the writer that takes
/// it faults none of them.
fn touched(huge: bool) -> Chunk {
    let mut chunk = Chunk::allocate(huge);
    for word in chunk.words().iter_mut().step_by(PAGE_BYTES / 8) {
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

/// The filler's loop: waits until the pool is short of chunks of the kind
/// writers last asked for, then makes one outside the lock (dropping a
/// chunk of the other kind when that makes the room).
fn fill() {
    loop {
        let huge = {
            let mut ready = READY.lock();
            loop {
                let huge = WANT_HUGE.load(Ordering::Relaxed);
                if ready.iter().filter(|chunk| chunk.huge == huge).count() < READY_CHUNKS {
                    break huge;
                }
                TAKEN.wait(&mut ready);
            }
        };
        let chunk = touched(huge);
        let unwanted = {
            let mut ready = READY.lock();
            let unwanted = if ready.len() >= READY_CHUNKS {
                ready
                    .iter()
                    .position(|pooled| pooled.huge != huge)
                    .map(|at| ready.swap_remove(at))
            } else {
                None
            };
            if ready.len() < READY_CHUNKS {
                ready.push(chunk);
            }
            unwanted
        };
        // Freed outside the lock.
        drop(unwanted);
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
        let first = take(false);
        assert_eq!(first.as_ptr() as usize % CHUNK_BYTES, 0);
        // A try fails only if other tests emptied the pool between the wait
        // and the take (the writer then allocated a fresh chunk).
        let mut seen = Vec::new();
        let all_in_memory = (0..5).any(|_| {
            assert!(wait_until_full(), "the filler refilled the pool");
            let pooled = take(false);
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

    /// A chunk asked for on huge pages is advised so and aligned to a huge
    /// page (2 MiB on x86-64), so the kernel can back it with one; the
    /// kernel's choice is the system's (THP may be off), so only the
    /// request is checked here.
    #[test]
    fn a_chunk_asked_for_on_huge_pages_is_aligned_to_one() {
        let huge = take(true);
        assert!(huge.is_huge());
        assert_eq!(huge.as_ptr() as usize % (2 << 20), 0);
        let plain = take(false);
        assert!(!plain.is_huge());
        give_back(huge);
        give_back(plain);
        assert!(ready_count() <= READY_CHUNKS);
    }
}
