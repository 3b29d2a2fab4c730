//! The memstore: recently written cells of one store, sorted, in memory.
//!
//! A skiplist whose nodes live in an arena of large chunks (LevelDB's and
//! RocksDB's design). Compared with a skiplist of individually allocated
//! nodes it needs one bump allocation per cell instead of three, keeps a
//! cell's key, value and links together in one cache-friendly run of bytes,
//! and makes size accounting exact: the memstore's size *is* the bytes of its
//! chunks and of its row filter (`docs/benchmarks.md` has the comparison with
//! crossbeam-skiplist).
//!
//! A bloom filter of the rows inserted ([`RowFilter`]) lets a get of a row
//! the memstore does not hold skip the descent.
//!
//! Concurrency contract:
//! * Inserts require the writer lock ([`Memstore::insert`] takes it); there
//!   is one writer at a time.
//! * Readers take no lock. A node is fully written before it is published by
//!   a `Release` store of its address into its predecessors' links; readers
//!   load links with `Acquire`. After publication the only bytes of a node
//!   that ever change are its links, which are atomics.
//! * Nodes are never removed or moved; chunks are freed only when the
//!   memstore is dropped, which cannot happen while a cursor holds its `Arc`.
//!
//! Node layout in the arena (8-byte aligned), see [`NodeHeader`]:
//! `header (32 bytes) | links: [AtomicPtr; height] | row | qualifier | value`.

use std::cmp::Ordering as CmpOrdering;
use std::mem::{MaybeUninit, size_of};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use crate::cell::{CellKind, CellRef, SeekKey, bytes_equal, compare_keys};
use crate::prefetch;

mod chunk_pool;

/// Tallest tower; with p = 1/4 this serves ~16M cells without degrading.
const MAX_HEIGHT: usize = 12;
/// Cache lines of the node after the next that a cursor's step loads
/// ahead: a small cell's node (32-byte header, link, 16-byte row, 100-byte
/// value) spans three.
const CURSOR_PREFETCH_LINES: usize = 3;
/// First arena chunk: small, so thousands of idle regions cost little.
const FIRST_CHUNK_BYTES: usize = 4 * 1024;
/// Chunks double in size up to this.
const MAX_CHUNK_BYTES: usize = 2 * 1024 * 1024;
/// Cache lines after its last node the arena loads ahead for the next one:
/// a small cell's node (header, links, a 16-byte row and a 100-byte value)
/// takes about three.
const NEXT_NODE_PREFETCH_LINES: usize = 4;
/// Nodes larger than this get a chunk of their own instead of wasting the
/// rest of a shared one.
const DEDICATED_CHUNK_THRESHOLD_BYTES: usize = MAX_CHUNK_BYTES / 4;

/// Fixed part of every node. `repr(C)` so the layout is what this comment
/// says: 32 bytes, 8-aligned, links directly after it.
#[repr(C)]
struct NodeHeader {
    timestamp: i64,
    sequence: u64,
    qualifier_len: u32,
    value_len: u32,
    row_len: u16,
    kind: u8,
    height: u8,
    _padding: u32,
}

const HEADER_BYTES: usize = size_of::<NodeHeader>();
const LINK_BYTES: usize = size_of::<AtomicPtr<NodeHeader>>();

/// A published node. Valid for as long as the memstore it came from; every
/// accessor takes that memstore as the anchor of the borrow it returns.
#[derive(Clone, Copy, PartialEq, Eq)]
struct NodePtr(NonNull<NodeHeader>);

impl NodePtr {
    fn header<'m>(&self, _owner: &'m Memstore) -> &'m NodeHeader {
        // SAFETY: a NodePtr is only made from addresses of fully initialized
        // nodes (see `Memstore::alloc_node`) obtained through Acquire loads or
        // by the writer that initialized them; headers never change
        // afterwards, and the arena lives as long as its memstore `_owner`.
        unsafe { self.0.as_ref() }
    }

    fn link<'m>(&self, owner: &'m Memstore, level: usize) -> &'m AtomicPtr<NodeHeader> {
        debug_assert!(level < usize::from(self.header(owner).height));
        // SAFETY: links start right after the 32-byte header, are 8-aligned
        // (the node is 8-aligned and the header is 32 bytes), there are
        // `height` of them, all initialized before publication, callers pass
        // `level < height`, and the arena lives as long as `owner`.
        unsafe {
            &*self
                .0
                .as_ptr()
                .cast::<u8>()
                .add(HEADER_BYTES + level * LINK_BYTES)
                .cast::<AtomicPtr<NodeHeader>>()
        }
    }

    fn bytes<'m>(&self, _owner: &'m Memstore, start: usize, len: usize) -> &'m [u8] {
        // SAFETY: `start..start+len` lies inside the node's payload, which the
        // writer filled before publication and never changes; the arena lives
        // as long as `_owner`.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<u8>().add(start), len) }
    }

    fn view<'m>(&self, owner: &'m Memstore) -> CellRef<'m> {
        let h = self.header(owner);
        let payload = HEADER_BYTES + usize::from(h.height) * LINK_BYTES;
        let row_len = usize::from(h.row_len);
        let qualifier_len = h.qualifier_len as usize;
        CellRef {
            row: self.bytes(owner, payload, row_len),
            qualifier: self.bytes(owner, payload + row_len, qualifier_len),
            timestamp: h.timestamp,
            kind: CellKind::from_code(h.kind).unwrap_or(CellKind::Put),
            sequence: h.sequence,
            value: self.bytes(
                owner,
                payload + row_len + qualifier_len,
                h.value_len as usize,
            ),
        }
    }
}

/// One chunk of an arena: a smaller one of its own, or a full-size one
/// from (and, when the memstore is dropped, back to) the chunk pool.
enum ArenaChunk {
    Own(Box<[MaybeUninit<u64>]>),
    Pooled(chunk_pool::Chunk),
}

impl ArenaChunk {
    fn words(&mut self) -> &mut [MaybeUninit<u64>] {
        match self {
            ArenaChunk::Own(words) => words,
            ArenaChunk::Pooled(chunk) => chunk.words(),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            ArenaChunk::Own(words) => words.len() * 8,
            ArenaChunk::Pooled(_) => chunk_pool::CHUNK_BYTES,
        }
    }
}

/// Bump allocator over chunks that never move.
struct Arena {
    /// Chunks shared by small nodes; the last one is being filled.
    shared: Vec<ArenaChunk>,
    /// Chunks holding one large node each.
    dedicated: Vec<ArenaChunk>,
    /// Bytes used in the last shared chunk.
    used_in_last: usize,
    next_chunk_bytes: usize,
}

impl Arena {
    fn new() -> Self {
        Arena {
            shared: Vec::new(),
            dedicated: Vec::new(),
            used_in_last: 0,
            next_chunk_bytes: FIRST_CHUNK_BYTES,
        }
    }

    /// A chunk of `bytes`; a full-size one on huge pages when the inserts
    /// come in no order (see [`chunk_pool`]).
    fn new_chunk(bytes: usize, random_inserts: bool) -> ArenaChunk {
        if bytes == chunk_pool::CHUNK_BYTES {
            return ArenaChunk::Pooled(chunk_pool::take(random_inserts));
        }
        ArenaChunk::Own(uninit_words(bytes.div_ceil(8)))
    }

    /// Bytes of every chunk the arena holds (walks the chunks: for checks
    /// when the arena grows, not for every cell).
    fn held_bytes(&self) -> usize {
        self.shared
            .iter()
            .chain(&self.dedicated)
            .map(ArenaChunk::bytes)
            .sum()
    }

    /// Full-size chunks on huge pages (for tests).
    #[cfg(test)]
    fn huge_chunks(&self) -> usize {
        self.shared
            .iter()
            .filter(|chunk| matches!(chunk, ArenaChunk::Pooled(c) if c.is_huge()))
            .count()
    }

    fn base(chunk: &mut ArenaChunk) -> NonNull<u8> {
        NonNull::new(chunk.words().as_mut_ptr().cast::<u8>()).unwrap_or(NonNull::dangling())
    }

    /// Returns 8-aligned space for `bytes` (> 0) bytes and how many bytes of
    /// new chunk capacity were allocated for it.
    fn alloc(&mut self, bytes: usize, random_inserts: bool) -> (NonNull<u8>, usize) {
        let bytes = bytes.next_multiple_of(8);
        if bytes > DEDICATED_CHUNK_THRESHOLD_BYTES {
            let mut chunk = Self::new_chunk(bytes, random_inserts);
            let grown = chunk.bytes();
            let base = Self::base(&mut chunk);
            self.dedicated.push(chunk);
            return (base, grown);
        }
        let mut grown = 0;
        let fits = self
            .shared
            .last()
            .is_some_and(|c| c.bytes() - self.used_in_last >= bytes);
        if !fits {
            let size = self.next_chunk_bytes.max(bytes);
            self.next_chunk_bytes = (self.next_chunk_bytes * 2).min(MAX_CHUNK_BYTES);
            let chunk = Self::new_chunk(size, random_inserts);
            grown = chunk.bytes();
            self.shared.push(chunk);
            self.used_in_last = 0;
        }
        let offset = self.used_in_last;
        self.used_in_last += bytes;
        let base = self
            .shared
            .last_mut()
            .map_or(NonNull::dangling(), Self::base);
        // The next node goes right after this one: its lines are loaded now,
        // while this insert and the caller's next write run, so that the
        // next node's stores do not wait for them (they did, at the writer
        // lock's release, which waits for every earlier store: the largest
        // item of a sequential insert). A hint: past the chunk's end it
        // loads nothing.
        let next = base.as_ptr().wrapping_add(self.used_in_last);
        for line in 0..NEXT_NODE_PREFETCH_LINES {
            prefetch::line(next.wrapping_add(line * prefetch::CACHE_LINE_BYTES));
        }
        // SAFETY: offset + bytes <= the last shared chunk's length in bytes
        // (checked or freshly allocated above), so the result stays inside it.
        (unsafe { base.add(offset) }, grown)
    }
}

/// `words` 8-byte words of fresh, unwritten memory: an arena chunk.
fn uninit_words(words: usize) -> Box<[MaybeUninit<u64>]> {
    std::iter::repeat_with(MaybeUninit::uninit)
        .take(words)
        .collect::<Vec<_>>()
        .into_boxed_slice()
}

impl Drop for Arena {
    /// Gives the full-size shared chunks, their pages in memory, to the
    /// next memstores ([`chunk_pool`]).
    fn drop(&mut self) {
        for chunk in self.shared.drain(..).chain(self.dedicated.drain(..)) {
            if let ArenaChunk::Pooled(chunk) = chunk {
                chunk_pool::give_back(chunk);
            }
        }
    }
}

/// Adds `n` to a memstore counter that only its writer changes, under the
/// writer lock. Readers load these counters without the lock, so they stay
/// atomics; but a plain load and store suffice to change them, and a locked
/// read-modify-write would not: it waits until the stores before it (the
/// node just written, on lines that often miss) have drained, and this
/// counter and its neighbours were ~4% of a sequential put's samples.
fn add_as_writer(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
}

/// Rows the row filter's first segment is sized for. Small, so that the
/// memstores of thousands of idle regions cost little.
const ROW_FILTER_FIRST_ROWS: usize = 1024;
/// Each further segment is sized for this many times the rows of the one
/// before, so a memstore of a million rows needs six segments (a probe of an
/// absent row reads one cache line of each; the small ones stay cached) and
/// the newest segment is at most four times larger than it needs to be.
const ROW_FILTER_GROWTH: usize = 4;
/// Filter bits per row a segment is sized for: about 1% false positives
/// while a segment is within its size (the HFile blooms' default).
const ROW_FILTER_BITS_PER_ROW: usize = 10;
/// Segments at most; the last keeps taking rows once it is full (more false
/// positives, never a false negative).
const ROW_FILTER_SEGMENTS: usize = 10;

/// One cache line of a row filter segment: a row sets one bit in each word
/// (`crate::split_block`'s mapping, the same as the HFile blooms').
#[repr(C, align(64))]
struct FilterBlock([AtomicU64; 8]);

/// A bloom filter of the rows a memstore holds, so that a get of a row the
/// memstore does not hold skips the skiplist descent (one cache line probed
/// per segment instead of a dozen or more nodes visited; RocksDB's
/// `memtable_whole_key_filtering` does the same for memtables).
///
/// The memstore does not know how many rows it will take, so the filter
/// grows by segments, each sized for [`ROW_FILTER_GROWTH`] times the rows of
/// the one before; a row goes into the newest segment unless some segment
/// already answers "may" for it, and a probe asks every segment.
///
/// Concurrency: bits are only ever set, by the writer under the memstore's
/// writer lock, before the cell's node is published (Release); a reader that
/// can see the cell (through the node or through the read point that covers
/// its sequence) therefore sees its bits, and a probe has no false
/// negatives. Segments are published through `OnceLock` and then the
/// `published` count (Release/Acquire).
struct RowFilter {
    segments: [OnceLock<Box<[FilterBlock]>>; ROW_FILTER_SEGMENTS],
    /// Segments set so far; segment `published - 1` takes new rows.
    published: AtomicUsize,
}

impl RowFilter {
    fn new() -> Self {
        RowFilter {
            segments: std::array::from_fn(|_| OnceLock::new()),
            published: AtomicUsize::new(0),
        }
    }

    /// Rows segment `index` is sized for.
    fn segment_rows(index: usize) -> usize {
        ROW_FILTER_FIRST_ROWS * ROW_FILTER_GROWTH.pow(index as u32)
    }

    fn segment(&self, index: usize) -> Option<&[FilterBlock]> {
        self.segments.get(index)?.get().map(|s| &s[..])
    }

    fn block_of(segment: &[FilterBlock], hash: u64) -> Option<&FilterBlock> {
        segment.get(crate::split_block::block_index(hash, segment.len()))
    }

    /// Starts loading the filter line that inserting a new row hashing to
    /// `hash` sets (in the newest segment; a segment added meanwhile makes
    /// it a wasted hint). The line is as good as never cached once the
    /// filter outgrows L2, and setting its bits waited for it.
    fn prefetch_insert(&self, hash: u64) {
        let published = self.published.load(Ordering::Acquire);
        if let Some(block) = published
            .checked_sub(1)
            .and_then(|newest| self.segment(newest))
            .and_then(|segment| Self::block_of(segment, hash))
        {
            prefetch::line(std::ptr::from_ref(block).cast::<u8>());
        }
    }

    /// False when no row with `hash` was ever inserted.
    fn may_contain(&self, hash: u64) -> bool {
        let published = self.published.load(Ordering::Acquire);
        if published == 0 {
            // Empty (the usual state of a memstore just flushed).
            return false;
        }
        let bits = crate::split_block::bits(hash);
        (0..published).any(|index| {
            self.segment(index)
                .and_then(|segment| Self::block_of(segment, hash))
                // A segment that cannot be read answers "may".
                .is_none_or(|block| {
                    block
                        .0
                        .iter()
                        .zip(bits)
                        .all(|(word, bit)| word.load(Ordering::Relaxed) & bit != 0)
                })
        })
    }

    /// Bytes of the segments published so far.
    fn held_bytes(&self) -> usize {
        (0..self.published.load(Ordering::Relaxed))
            .filter_map(|index| self.segment(index))
            .map(std::mem::size_of_val)
            .sum()
    }

    /// Adds a row with `hash` that the memstore does not hold yet (the
    /// caller knows: see [`Memstore::insert_locked`]); `rows_in_newest`
    /// counts the rows the newest segment took. Requires the memstore's
    /// writer lock (one writer at a time). Returns the bytes of memory a new
    /// segment took (0 without).
    fn insert_new_row(&self, hash: u64, rows_in_newest: &mut usize) -> usize {
        let published = self.published.load(Ordering::Relaxed);
        let mut grown = 0;
        if published == 0
            || (*rows_in_newest >= Self::segment_rows(published - 1)
                && published < ROW_FILTER_SEGMENTS)
        {
            let blocks = (Self::segment_rows(published) * ROW_FILTER_BITS_PER_ROW).div_ceil(512);
            let segment: Box<[FilterBlock]> = (0..blocks)
                .map(|_| FilterBlock(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect();
            grown = blocks * size_of::<FilterBlock>();
            // Only the writer sets segments, so the slot is empty.
            let _ = self.segments[published].set(segment);
            self.published.store(published + 1, Ordering::Release);
            *rows_in_newest = 0;
        }
        let newest = self.published.load(Ordering::Relaxed) - 1;
        if let Some(block) = self
            .segment(newest)
            .and_then(|segment| Self::block_of(segment, hash))
        {
            for (word, bit) in block.0.iter().zip(crate::split_block::bits(hash)) {
                // One writer: a plain read-modify-write loses no bit.
                word.store(word.load(Ordering::Relaxed) | bit, Ordering::Relaxed);
            }
        }
        *rows_in_newest += 1;
        grown
    }
}

struct WriterState {
    arena: Arena,
    rng: u64,
    /// Rows the row filter's newest segment took.
    filter_rows: usize,
    /// Where the last insert went, so that the next key after it (a
    /// sequential load, or the next cell of the same row) is inserted
    /// without a search.
    splice: Splice,
}

/// The nodes before the last inserted key at every level (RocksDB's
/// skiplist keeps the same `Splice`). Invariant, kept by the writer under
/// its lock: at each level `l`, `prev[l]` is the last node at that level
/// whose key is <= the last inserted key (`None`: the head; always `None` at
/// and above the memstore's height). The node after it at that level is
/// read when needed: only the writer links nodes. Since the nodes of level
/// `l + 1` are some of those of level `l`, each level's interval between
/// `prev[l]` and its successor contains the one below it; so a key that
/// falls inside the bottom level's interval falls inside every level's, and
/// `prev` is exactly what a search from the head would find for it.
struct Splice {
    prev: [Option<NodePtr>; MAX_HEIGHT],
    /// Whether the last try's key fell inside the splice. While keys come
    /// in no order, the splice is tried only on every
    /// [`SPLICE_RETRY_INTERVAL`]th insert, so that random inserts rarely pay
    /// for its comparisons and a sequential run is still found soon.
    last_hit: bool,
    /// Inserts since the last try, while resting after a miss.
    misses: u32,
}

/// See [`Splice::last_hit`].
const SPLICE_RETRY_INTERVAL: u32 = 16;

/// Sorted in-memory cells of one store.
pub(crate) struct Memstore {
    head: [AtomicPtr<NodeHeader>; MAX_HEIGHT],
    max_height: AtomicUsize,
    writer: Mutex<WriterState>,
    /// The rows inserted, for gets of rows the memstore does not hold.
    rows: RowFilter,
    /// Bytes of arena chunks and row filter segments: the memory this
    /// memstore holds.
    allocated_bytes: AtomicU64,
    cell_count: AtomicU64,
    max_sequence: AtomicU64,
    min_timestamp: AtomicI64,
    max_timestamp: AtomicI64,
    /// Family delete markers inserted (they decide whether a read may skip
    /// the rest of the empty qualifier, where they live).
    family_markers: AtomicU64,
}

// SAFETY: the raw pointers inside point into the arena owned by this value;
// shared access follows the module's concurrency contract (single writer
// under `writer`, Release/Acquire publication, immutable published nodes).
unsafe impl Send for Memstore {}
// SAFETY: as above.
unsafe impl Sync for Memstore {}

impl std::fmt::Debug for Memstore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memstore")
            .field("cells", &self.cell_count())
            .field("allocated_bytes", &self.allocated_bytes())
            .finish()
    }
}

/// A cell to insert: borrowed from the mutation (or the WAL record) that
/// carries it, with the sequence of its commit. The same fields as a cell
/// read back ([`CellRef`]), so it is that type.
pub(crate) type NewCell<'a> = CellRef<'a>;

impl Memstore {
    pub(crate) fn new() -> Self {
        Memstore {
            head: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            max_height: AtomicUsize::new(1),
            writer: Mutex::new(WriterState {
                arena: Arena::new(),
                rng: 0x2545_F491_4F6C_DD1D,
                filter_rows: 0,
                splice: Splice {
                    prev: [None; MAX_HEIGHT],
                    last_hit: true,
                    misses: 0,
                },
            }),
            rows: RowFilter::new(),
            allocated_bytes: AtomicU64::new(0),
            cell_count: AtomicU64::new(0),
            max_sequence: AtomicU64::new(0),
            min_timestamp: AtomicI64::new(i64::MAX),
            max_timestamp: AtomicI64::new(i64::MIN),
            family_markers: AtomicU64::new(0),
        }
    }

    /// True when a family delete marker (`DeleteFamily`,
    /// `DeleteFamilyVersion`) was ever inserted. A reader whose read point
    /// covers a marker sees it counted: the insert happens before the
    /// marker's sequence becomes visible.
    pub(crate) fn holds_family_markers(&self) -> bool {
        self.family_markers.load(Ordering::Relaxed) > 0
    }

    /// False when the memstore certainly holds no cell of the row whose
    /// `split_block::row_hash` is `row_hash` (a bloom filter: "true" means
    /// "may"). Seeing every cell a read can see requires no more than that
    /// read's read point or a published node: the bits are set first.
    pub(crate) fn may_hold_row(&self, row_hash: u64) -> bool {
        self.rows.may_contain(row_hash)
    }

    /// Bytes of memory this memstore holds (arena chunks and the row
    /// filter).
    pub(crate) fn allocated_bytes(&self) -> u64 {
        self.allocated_bytes.load(Ordering::Relaxed)
    }

    /// Number of cells inserted.
    pub(crate) fn cell_count(&self) -> u64 {
        self.cell_count.load(Ordering::Relaxed)
    }

    /// Highest sequence number inserted (0 when empty). Only this module's
    /// tests read it: a flush takes its file's sequences from the cells it
    /// writes.
    #[cfg(test)]
    pub(crate) fn max_sequence(&self) -> u64 {
        self.max_sequence.load(Ordering::Acquire)
    }

    /// Smallest and largest timestamp inserted, if any. Only this module's
    /// tests read it, as [`Memstore::max_sequence`].
    #[cfg(test)]
    pub(crate) fn timestamp_range(&self) -> Option<(i64, i64)> {
        let (lo, hi) = (
            self.min_timestamp.load(Ordering::Relaxed),
            self.max_timestamp.load(Ordering::Relaxed),
        );
        (lo <= hi).then_some((lo, hi))
    }

    fn slot(&self, node: Option<NodePtr>, level: usize) -> &AtomicPtr<NodeHeader> {
        match node {
            None => &self.head[level],
            Some(n) => n.link(self, level),
        }
    }

    fn load(&self, node: Option<NodePtr>, level: usize) -> Option<NodePtr> {
        NonNull::new(self.slot(node, level).load(Ordering::Acquire)).map(NodePtr)
    }

    /// First node with key >= `key`; fills `prev[level]` with the last node
    /// before it at each level (None = head).
    fn find_greater_or_equal(
        &self,
        key: &SeekKey<'_>,
        mut prev: Option<&mut [Option<NodePtr>; MAX_HEIGHT]>,
    ) -> Option<NodePtr> {
        let mut x: Option<NodePtr> = None;
        let mut level = self.max_height.load(Ordering::Relaxed).clamp(1, MAX_HEIGHT) - 1;
        // The last node found not before the key: descending from `x`, the
        // next level often leads to it again, and it needs no second
        // comparison (RocksDB's skiplist keeps the same `last_bigger`).
        let mut not_before: Option<NodePtr> = None;
        loop {
            let next = self.load(x, level);
            if let Some(n) = next {
                // If `n` is before the key the descent moves to it and
                // compares the node after it next: start loading that node
                // now, behind `n`'s own miss (RocksDB's skiplist does the
                // same). A relaxed load is enough for a hint.
                // Both of its first two lines: a node's row starts after its
                // header and links, on the second line for most nodes.
                let after = n.link(self, level).load(Ordering::Relaxed).cast::<u8>();
                prefetch::line(after);
                prefetch::line(after.wrapping_add(prefetch::CACHE_LINE_BYTES));
                // If `n` is not before the key the descent goes down a level
                // at `x` and compares `x`'s next node there, usually another
                // node (about three nodes of the lower level lie between `x`
                // and `n`): load it too, so that its miss overlaps `n`'s
                // instead of following it. `x` itself is cached by now.
                if level > 0 && not_before != Some(n) {
                    let below = self.slot(x, level - 1).load(Ordering::Relaxed);
                    if below != n.0.as_ptr() {
                        let below = below.cast::<u8>();
                        prefetch::line(below);
                        prefetch::line(below.wrapping_add(prefetch::CACHE_LINE_BYTES));
                    }
                }
            }
            let next_is_before_key = next.is_some_and(|n| {
                not_before != Some(n)
                    && compare_keys(n.view(self).tuple(), key.tuple()) == CmpOrdering::Less
            });
            if next_is_before_key {
                x = next;
            } else {
                not_before = next;
                if let Some(prev) = prev.as_deref_mut() {
                    prev[level] = x;
                }
                if level == 0 {
                    return next;
                }
                level -= 1;
            }
        }
    }

    /// Last node with key < `key` (None = none, i.e. the head).
    fn find_less_than(&self, key: &SeekKey<'_>) -> Option<NodePtr> {
        let mut x: Option<NodePtr> = None;
        let mut level = self.max_height.load(Ordering::Relaxed).clamp(1, MAX_HEIGHT) - 1;
        loop {
            let next = self.load(x, level);
            match next {
                Some(n) if compare_keys(n.view(self).tuple(), key.tuple()) == CmpOrdering::Less => {
                    x = next;
                }
                _ => {
                    if level == 0 {
                        return x;
                    }
                    level -= 1;
                }
            }
        }
    }

    /// Last node of the list.
    fn find_last(&self) -> Option<NodePtr> {
        let mut x: Option<NodePtr> = None;
        let mut level = self.max_height.load(Ordering::Relaxed).clamp(1, MAX_HEIGHT) - 1;
        loop {
            match self.load(x, level) {
                Some(n) => x = Some(n),
                None if level == 0 => return x,
                None => level -= 1,
            }
        }
    }

    /// The nodes before `key` at every level and the first node at or after
    /// it, taken from the splice of the last insert when `key` falls between
    /// that insert's neighbours at the bottom level (then, by the splice's
    /// invariant, at every level): a sequential load's next key, or the next
    /// cell of the row just inserted, costs one or two comparisons instead
    /// of a search. `None` when it does not fall there, or when the splice
    /// is resting after a miss (see [`Splice::last_hit`]).
    fn within_splice(
        &self,
        splice: &mut Splice,
        key: &SeekKey<'_>,
    ) -> Option<([Option<NodePtr>; MAX_HEIGHT], Option<NodePtr>)> {
        if !splice.last_hit {
            splice.misses += 1;
            if splice.misses < SPLICE_RETRY_INTERVAL {
                return None;
            }
        }
        splice.misses = 0;
        let before = splice.prev[0];
        let after = self.load(before, 0);
        let inside = before.is_none_or(|before| {
            compare_keys(before.view(self).tuple(), key.tuple()) == CmpOrdering::Less
        }) && after.is_none_or(|after| {
            compare_keys(key.tuple(), after.view(self).tuple()) != CmpOrdering::Greater
        });
        splice.last_hit = inside;
        inside.then_some((splice.prev, after))
    }

    /// Inserts cells (one mutation's cells for this store) under the writer
    /// lock. A cell whose full key (including sequence) is already present
    /// is skipped: keys are unique within a memstore.
    ///
    /// Returns the bytes of arena memory these inserts allocated. Worked out
    /// under the lock: two [`Memstore::allocated_bytes`] readings around the
    /// call would also count what concurrent writers allocated in between,
    /// and the region's accounting would then hold bytes no memstore holds
    /// (a flush frees only what was allocated), blocking its writers for good.
    pub(crate) fn insert_all(&self, cells: &[NewCell<'_>]) -> u64 {
        // The cells of one mutation share a row: it is hashed once, before
        // the lock, so that the row filter's line loads meanwhile.
        let mut hashed: Option<(&[u8], u64)> = cells.first().map(|cell| {
            let hash = crate::split_block::row_hash(cell.row);
            self.rows.prefetch_insert(hash);
            (cell.row, hash)
        });
        let mut writer = self.writer.lock();
        cells
            .iter()
            .map(|cell| {
                let row_hash = match hashed {
                    Some((row, hash)) if bytes_equal(row, cell.row) => hash,
                    _ => {
                        let hash = crate::split_block::row_hash(cell.row);
                        hashed = Some((cell.row, hash));
                        hash
                    }
                };
                self.insert_locked(&mut writer, cell, row_hash)
            })
            .sum()
    }

    fn random_height(rng: &mut u64) -> usize {
        // xorshift64*: cheap and good enough for tower heights.
        let mut height = 1;
        loop {
            *rng ^= *rng >> 12;
            *rng ^= *rng << 25;
            *rng ^= *rng >> 27;
            let r = rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
            // Each further level with probability 1/4.
            if height < MAX_HEIGHT && (r >> 32) & 3 == 0 {
                height += 1;
            } else {
                return height;
            }
        }
    }

    /// Inserts one cell whose row's `split_block::row_hash` is `row_hash`;
    /// returns the bytes of arena memory it allocated.
    fn insert_locked(&self, writer: &mut WriterState, cell: &NewCell<'_>, row_hash: u64) -> u64 {
        let key = SeekKey {
            row: cell.row,
            qualifier: cell.qualifier,
            timestamp: cell.timestamp,
            kind: cell.kind,
            sequence: cell.sequence,
        };
        let (prev, existing) = match self.within_splice(&mut writer.splice, &key) {
            Some(found) => found,
            None => {
                let mut prev = [None; MAX_HEIGHT];
                let existing = self.find_greater_or_equal(&key, Some(&mut prev));
                (prev, existing)
            }
        };
        if existing.is_some_and(|n| compare_keys(n.view(self).tuple(), key.tuple()).is_eq()) {
            return 0;
        }
        let height = Self::random_height(&mut writer.rng);
        let max_height = self.max_height.load(Ordering::Relaxed);
        if height > max_height {
            // prev[max_height..height] are already None (the head).
            // Readers seeing the new height before the links find null heads
            // at the new levels and simply descend.
            self.max_height.store(height, Ordering::Relaxed);
        }
        // Inserts that keep missing the splice come in no order.
        let random_inserts = !writer.splice.last_hit;
        let (node, mut grown) = Self::alloc_node(&mut writer.arena, cell, height, random_inserts);
        // The row's filter bits are set before the node is published below,
        // once per row. Keys sort by row first, so the row is already here
        // exactly when a neighbour of the new key holds it; those two nodes
        // were just compared, so this costs no miss, where probing every
        // filter segment did (up to six lines, in segments that outgrow L2).
        let row_is_new = prev[0].is_none_or(|n| !bytes_equal(n.view(self).row, cell.row))
            && existing.is_none_or(|n| !bytes_equal(n.view(self).row, cell.row));
        if row_is_new {
            grown += self.rows.insert_new_row(row_hash, &mut writer.filter_rows);
        }
        if grown > 0 {
            add_as_writer(&self.allocated_bytes, grown as u64);
            // Only the writer changes the count, under the lock held here.
            debug_assert_eq!(
                self.allocated_bytes() as usize,
                writer.arena.held_bytes() + self.rows.held_bytes(),
                "a memstore's size is the bytes of its chunks and filter segments"
            );
        }
        debug_assert!(
            prev[0].is_none_or(|before| {
                compare_keys(before.view(self).tuple(), key.tuple()) == CmpOrdering::Less
            }) && existing.is_none_or(|after| {
                compare_keys(key.tuple(), after.view(self).tuple()) == CmpOrdering::Less
            }),
            "a node goes between the keys below and above its own"
        );
        for (level, prev) in prev.iter().enumerate().take(height) {
            let slot = self.slot(*prev, level);
            // The node is not yet reachable, so a relaxed store suffices; the
            // Release store below publishes it together with this link.
            node.link(self, level)
                .store(slot.load(Ordering::Relaxed), Ordering::Relaxed);
            slot.store(node.0.as_ptr(), Ordering::Release);
        }
        // The new node is now the last one <= its key at the levels it
        // stands on; above them the nodes before the key stay the last.
        writer.splice.prev = prev;
        writer.splice.prev[..height].fill(Some(node));
        add_as_writer(&self.cell_count, 1);
        if cell.kind.is_family_marker() {
            add_as_writer(&self.family_markers, 1);
        }
        if cell.sequence > self.max_sequence.load(Ordering::Relaxed) {
            self.max_sequence.store(cell.sequence, Ordering::Release);
        }
        if cell.timestamp < self.min_timestamp.load(Ordering::Relaxed) {
            self.min_timestamp.store(cell.timestamp, Ordering::Relaxed);
        }
        if cell.timestamp > self.max_timestamp.load(Ordering::Relaxed) {
            self.max_timestamp.store(cell.timestamp, Ordering::Relaxed);
        }
        grown as u64
    }

    /// Writes a complete, unlinked node into the arena.
    fn alloc_node(
        arena: &mut Arena,
        cell: &NewCell<'_>,
        height: usize,
        random_inserts: bool,
    ) -> (NodePtr, usize) {
        let payload = HEADER_BYTES + height * LINK_BYTES;
        let total = payload + cell.row.len() + cell.qualifier.len() + cell.value.len();
        let (base, grown) = arena.alloc(total, random_inserts);
        let header = NodeHeader {
            timestamp: cell.timestamp,
            sequence: cell.sequence,
            // Lengths were validated by the caller against MAX_* limits that
            // fit these widths (row <= 32767, qualifier <= 65535, value <= 256 MiB).
            qualifier_len: cell.qualifier.len() as u32,
            value_len: cell.value.len() as u32,
            row_len: cell.row.len() as u16,
            kind: cell.kind.code(),
            height: height as u8,
            _padding: 0,
        };
        let raw = base.as_ptr();
        // SAFETY: `base` points at `total` freshly allocated, 8-aligned bytes
        // that no one else can see yet; each write stays inside them.
        unsafe {
            ptr::write(raw.cast::<NodeHeader>(), header);
            for level in 0..height {
                ptr::write(
                    raw.add(HEADER_BYTES + level * LINK_BYTES)
                        .cast::<AtomicPtr<NodeHeader>>(),
                    AtomicPtr::new(ptr::null_mut()),
                );
            }
            let mut at = raw.add(payload);
            for part in [cell.row, cell.qualifier, cell.value] {
                ptr::copy_nonoverlapping(part.as_ptr(), at, part.len());
                at = at.add(part.len());
            }
        }
        (NodePtr(base.cast::<NodeHeader>()), grown)
    }
}

/// A position in a memstore; holds the memstore alive.
pub(crate) struct Cursor {
    memstore: Arc<Memstore>,
    node: Option<NodePtr>,
}

// SAFETY: the node pointer points into the arena of `memstore`, which this
// cursor keeps alive; published nodes are immutable apart from atomics.
unsafe impl Send for Cursor {}

impl Cursor {
    /// An unpositioned cursor.
    pub(crate) fn new(memstore: Arc<Memstore>) -> Self {
        Cursor {
            memstore,
            node: None,
        }
    }

    /// True when positioned at a cell.
    #[cfg(test)]
    pub(crate) fn valid(&self) -> bool {
        self.node.is_some()
    }

    /// The cell at the position.
    pub(crate) fn current(&self) -> Option<CellRef<'_>> {
        self.node.as_ref().map(|n| n.view(&self.memstore))
    }

    /// A cursor at the first cell of `row`, with one descent; `None` when
    /// the memstore has no cell of the row (then the memstore's handle is
    /// not even cloned).
    pub(crate) fn at_row(memstore: &Arc<Memstore>, row: &[u8]) -> Option<Cursor> {
        if memstore.cell_count() == 0 {
            return None;
        }
        let node = memstore.find_greater_or_equal(&SeekKey::row_start(row), None)?;
        if !bytes_equal(node.view(memstore).row, row) {
            return None;
        }
        Some(Cursor {
            memstore: memstore.clone(),
            node: Some(node),
        })
    }

    /// Moves to the first cell with key >= `key`.
    pub(crate) fn seek(&mut self, key: &SeekKey<'_>) {
        self.node = self.memstore.find_greater_or_equal(key, None);
    }

    /// Moves to the last cell with key < `key`.
    pub(crate) fn seek_before(&mut self, key: &SeekKey<'_>) {
        self.node = self.memstore.find_less_than(key);
    }

    /// Moves to the first cell.
    #[cfg(test)]
    pub(crate) fn seek_to_first(&mut self) {
        self.node = self.memstore.load(None, 0);
    }

    /// Moves to the last cell.
    pub(crate) fn seek_to_last(&mut self) {
        self.node = self.memstore.find_last();
    }

    /// Moves to the next cell, and starts loading the one after it: a
    /// memstore filled in random order keeps neighbours far apart in its
    /// arena, so a flush or scan walking it would otherwise wait for a miss
    /// per cell (a flush of 200,000 random 116-byte cells took 1.6-2x as
    /// long as one of the same cells written in order). The node reached
    /// here was itself loaded ahead by the previous step, so its link is
    /// at hand, and the next node's miss overlaps the caller's work on
    /// this one.
    pub(crate) fn next(&mut self) {
        if let Some(n) = self.node {
            self.node = self.memstore.load(Some(n), 0);
            if let Some(reached) = self.node {
                let after = reached
                    .link(&self.memstore, 0)
                    .load(Ordering::Relaxed)
                    .cast::<u8>();
                if !after.is_null() {
                    for line in 0..CURSOR_PREFETCH_LINES {
                        prefetch::line(after.wrapping_add(line * prefetch::CACHE_LINE_BYTES));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    type Key = (
        Vec<u8>,
        Vec<u8>,
        std::cmp::Reverse<i64>,
        std::cmp::Reverse<u8>,
        std::cmp::Reverse<u64>,
    );

    fn model_key(c: &CellRef<'_>) -> Key {
        use std::cmp::Reverse;
        (
            c.row.to_vec(),
            c.qualifier.to_vec(),
            Reverse(c.timestamp),
            Reverse(c.kind.code()),
            Reverse(c.sequence),
        )
    }

    fn put<'a>(row: &'a [u8], q: &'a [u8], ts: i64, seq: u64, v: &'a [u8]) -> NewCell<'a> {
        NewCell {
            row,
            qualifier: q,
            timestamp: ts,
            kind: CellKind::Put,
            sequence: seq,
            value: v,
        }
    }

    #[test]
    fn iterates_in_store_order() {
        let m = Arc::new(Memstore::new());
        m.insert_all(&[
            put(b"b", b"q", 1, 1, b"v1"),
            put(b"a", b"q", 1, 2, b"v2"),
            put(b"a", b"q", 5, 3, b"v3"),
            put(b"a", b"", 1, 4, b"v4"),
        ]);
        let mut c = Cursor::new(m.clone());
        c.seek_to_first();
        let mut seen = Vec::new();
        while let Some(cell) = c.current() {
            seen.push((
                cell.row.to_vec(),
                cell.qualifier.to_vec(),
                cell.timestamp,
                cell.value.to_vec(),
            ));
            c.next();
        }
        assert_eq!(
            seen,
            vec![
                (b"a".to_vec(), b"".to_vec(), 1, b"v4".to_vec()),
                (b"a".to_vec(), b"q".to_vec(), 5, b"v3".to_vec()),
                (b"a".to_vec(), b"q".to_vec(), 1, b"v2".to_vec()),
                (b"b".to_vec(), b"q".to_vec(), 1, b"v1".to_vec()),
            ]
        );
        c.seek(&SeekKey::row_start(b"b"));
        assert_eq!(c.current().unwrap().row, b"b");
        c.seek_before(&SeekKey::row_start(b"b"));
        assert_eq!(c.current().unwrap().value, b"v2");
        c.seek_before(&SeekKey::row_start(b"a"));
        assert!(!c.valid());
        c.seek_to_last();
        assert_eq!(c.current().unwrap().row, b"b");
        assert_eq!(m.cell_count(), 4);
        assert_eq!(m.max_sequence(), 4);
        assert_eq!(m.timestamp_range(), Some((1, 5)));
    }

    #[test]
    fn a_cursor_at_a_row_is_exact_about_rows() {
        let m = Arc::new(Memstore::new());
        let held =
            |row: &[u8]| Cursor::at_row(&m, row).map(|c| c.current().map(|c| c.qualifier.to_vec()));
        assert!(held(b"a").is_none());
        m.insert_all(&[put(b"ab", b"q", 1, 1, b"v"), put(b"b", b"", 1, 2, b"v")]);
        // At the row's first cell.
        assert_eq!(held(b"ab"), Some(Some(b"q".to_vec())));
        assert_eq!(held(b"b"), Some(Some(Vec::new())));
        // A prefix of a held row, a row between two held rows, and rows
        // before the first and after the last are all absent.
        assert!(held(b"a").is_none());
        assert!(held(b"abc").is_none());
        assert!(held(b"").is_none());
        assert!(held(b"c").is_none());
    }

    /// Full-size chunks are asked for on huge pages only while the inserts
    /// come in no order (see `chunk_pool`): 40,000 cells of 130 bytes fill
    /// the doubling small chunks (4 KiB .. 1 MiB) and then two full ones.
    #[test]
    fn only_a_memstore_written_in_random_order_asks_for_huge_pages() {
        let fill = |key_of: &dyn Fn(u64) -> u64| {
            let m = Memstore::new();
            for i in 0..40_000u64 {
                let row = key_of(i).to_be_bytes();
                m.insert_all(&[put(&row, b"q", 1, i + 1, &[b'v'; 100])]);
            }
            let writer = m.writer.lock();
            (writer.arena.huge_chunks(), writer.arena.shared.len())
        };
        let (huge, chunks) = fill(&|i| i);
        assert_eq!(huge, 0, "in order: {chunks} chunks");
        // A multiplicative hash: a permutation of the keys, in no order.
        let (huge, chunks) = fill(&|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        assert!(huge >= 2, "random: {huge} of {chunks} chunks huge");
    }

    #[test]
    fn duplicate_keys_are_skipped() {
        let m = Memstore::new();
        m.insert_all(&[put(b"a", b"q", 1, 1, b"x"), put(b"a", b"q", 1, 1, b"y")]);
        assert_eq!(m.cell_count(), 1);
    }

    #[test]
    fn large_values_get_dedicated_chunks_and_accounting_is_exact() {
        let m = Arc::new(Memstore::new());
        let big = vec![7u8; 3 * 1024 * 1024];
        m.insert_all(&[put(b"a", b"", 1, 1, b"small")]);
        m.insert_all(&[put(b"b", b"", 1, 2, &big)]);
        m.insert_all(&[put(b"c", b"", 1, 3, b"small")]);
        assert!(m.allocated_bytes() >= big.len() as u64);
        assert!(m.allocated_bytes() < big.len() as u64 + 64 * 1024);
        let mut c = Cursor::new(m);
        c.seek(&SeekKey::row_start(b"b"));
        assert_eq!(c.current().unwrap().value, big.as_slice());
        c.next();
        assert_eq!(c.current().unwrap().value, b"small");
    }

    #[test]
    fn concurrent_writers_account_exactly_the_memory_allocated() {
        // Regression (found by tests/tests/limits.rs): the growth of an
        // insert was read around the call, outside the writer lock, so
        // concurrent writers each counted the chunks the others allocated;
        // a region then kept bytes no memstore held and its writers stalled
        // for good.
        let m = Arc::new(Memstore::new());
        let writers: Vec<_> = (0..4u64)
            .map(|w| {
                let m = m.clone();
                std::thread::spawn(move || {
                    let value = vec![b'v'; 3000];
                    (0..2_000u64)
                        .map(|i| {
                            let row = (w * 1_000_000 + i).to_be_bytes();
                            m.insert_all(&[put(&row, b"q", 1, w * 10_000 + i + 1, &value)])
                        })
                        .sum::<u64>()
                })
            })
            .collect();
        let counted: u64 = writers.into_iter().map(|w| w.join().unwrap()).sum();
        assert_eq!(counted, m.allocated_bytes());
        assert_eq!(m.cell_count(), 8_000);
    }

    #[test]
    fn readers_run_concurrently_with_a_writer() {
        let m = Arc::new(Memstore::new());
        let writer = {
            let m = m.clone();
            std::thread::spawn(move || {
                for i in 0..20_000u64 {
                    let row = (i * 7919 % 20_000).to_be_bytes();
                    m.insert_all(&[put(&row, b"q", 1, i + 1, b"value")]);
                }
            })
        };
        for _ in 0..50 {
            // Every scan sees a sorted list, however far the writer got.
            let mut c = Cursor::new(m.clone());
            c.seek_to_first();
            let mut last: Option<Vec<u8>> = None;
            while let Some(cell) = c.current() {
                if let Some(l) = &last {
                    assert!(l.as_slice() < cell.row);
                }
                // A published cell's row is in the row filter, however the
                // filter grew meanwhile.
                assert!(m.may_hold_row(crate::split_block::row_hash(cell.row)));
                last = Some(cell.row.to_vec());
                c.next();
            }
        }
        writer.join().unwrap();
        assert_eq!(m.cell_count(), 20_000);
    }

    #[test]
    fn the_row_filter_holds_every_row_and_rules_out_most_others() {
        let m = Memstore::new();
        let hash = |i: u64| crate::split_block::row_hash(format!("row{i}").as_bytes());
        assert!(!m.may_hold_row(hash(0)), "an empty memstore holds no row");
        // 100,000 rows outgrow four segments (1,024, 4,096, 16,384 and
        // 65,536 rows) into a fifth; each row gets two cells, of one
        // mutation, and is filtered once.
        let rows = 100_000u64;
        let mut grown = 0;
        for i in 0..rows {
            let row = format!("row{i}");
            grown += m.insert_all(&[
                put(row.as_bytes(), b"a", 1, i + 1, b"v"),
                put(row.as_bytes(), b"b", 1, i + 1, b"v"),
            ]);
        }
        grown += m.insert_all(&[put(b"row7", b"c", 2, rows + 1, b"v")]);
        assert_eq!(grown, m.allocated_bytes(), "segments are accounted");
        assert_eq!(m.rows.published.load(Ordering::Relaxed), 5);
        assert!((0..rows).all(|i| m.may_hold_row(hash(i))));
        let false_positives = (rows..2 * rows)
            .filter(|&i| m.may_hold_row(hash(i)))
            .count();
        // Five segments probed, each within its size: under 1.5% each.
        assert!(
            false_positives < 5_000,
            "{false_positives} false positives in {rows}"
        );
        // Gets of absent rows find nothing, with or without the filter.
        assert!(Cursor::at_row(&Arc::new(m), b"absent").is_none());
    }

    /// The keys of every level's list, head to end.
    fn level_keys(m: &Memstore) -> Vec<Vec<Key>> {
        (0..m.max_height.load(Ordering::Relaxed))
            .map(|level| {
                let mut keys = Vec::new();
                let mut node = m.load(None, level);
                while let Some(n) = node {
                    keys.push(model_key(&n.view(m)));
                    node = m.load(Some(n), level);
                }
                keys
            })
            .collect()
    }

    #[test]
    fn inserts_after_the_last_key_and_jumps_back_keep_every_level_sorted() {
        // Ascending runs (which the splice places without a search), jumps
        // back into the middle and to the front, the next cell of the row
        // just written, and duplicates of the last key, of a key before it
        // and of the one right after it.
        let m = Memstore::new();
        let mut model = BTreeSet::new();
        let mut insert = |row: String, q: &[u8], seq: u64| {
            let cell = put(row.as_bytes(), q, 1, seq, b"v");
            m.insert_all(std::slice::from_ref(&cell));
            model.insert(model_key(&cell));
        };
        for i in 0..3_000u64 {
            insert(format!("row{:05}", i * 2), b"a", 1);
            if i % 7 == 0 {
                insert(format!("row{:05}", i * 2), b"b", 1);
            }
            if i % 97 == 0 {
                insert(format!("row{:05}", i), b"a", 1);
                insert(format!("row{:05}", i + 1), b"a", 1);
                insert(format!("row{:05}", i), b"a", 1);
            }
            if i % 500 == 0 {
                insert("a".to_owned(), b"a", i);
            }
        }
        let levels = level_keys(&m);
        let want: Vec<Key> = model.into_iter().collect();
        assert_eq!(
            levels[0], want,
            "the bottom level holds every key once, sorted"
        );
        assert_eq!(m.cell_count() as usize, want.len());
        for (level, keys) in levels.iter().enumerate().skip(1) {
            assert!(
                keys.windows(2).all(|pair| pair[0] < pair[1]),
                "level {level} is sorted"
            );
            assert!(
                keys.iter()
                    .all(|key| levels[level - 1].binary_search(key).is_ok()),
                "level {level} holds only keys of the level below"
            );
        }
    }

    proptest! {
        #[test]
        fn matches_a_sorted_set(cells in proptest::collection::vec(
            (proptest::collection::vec(0u8..4, 1..4), proptest::collection::vec(0u8..3, 0..3),
             0i64..5, prop_oneof![Just(CellKind::Put), Just(CellKind::Delete), Just(CellKind::DeleteColumn)],
             proptest::collection::vec(any::<u8>(), 0..20)), 0..200),
            probe_row in proptest::collection::vec(0u8..4, 1..4)) {
            let m = Arc::new(Memstore::new());
            let mut model = BTreeSet::new();
            for (seq, (row, q, ts, kind, value)) in cells.iter().enumerate() {
                let cell = NewCell { row, qualifier: q, timestamp: *ts, kind: *kind, sequence: seq as u64 + 1, value };
                m.insert_all(std::slice::from_ref(&cell));
                let view = CellRef { row, qualifier: q, timestamp: *ts, kind: *kind, sequence: seq as u64 + 1, value };
                model.insert((model_key(&view), value.clone()));
            }
            let mut c = Cursor::new(m.clone());
            c.seek_to_first();
            let mut got = Vec::new();
            while let Some(cell) = c.current() {
                got.push((model_key(&cell), cell.value.to_vec()));
                c.next();
            }
            let want: Vec<_> = model.iter().cloned().collect();
            prop_assert_eq!(&got, &want);
            // seek and seek_before agree with the model
            c.seek(&SeekKey::row_start(&probe_row));
            let first_at_or_after = want.iter().find(|(k, _)| k.0.as_slice() >= probe_row.as_slice());
            prop_assert_eq!(c.current().map(|v| model_key(&v)), first_at_or_after.map(|(k, _)| k.clone()));
            c.seek_before(&SeekKey::row_start(&probe_row));
            let last_before = want.iter().rev().find(|(k, _)| k.0.as_slice() < probe_row.as_slice());
            prop_assert_eq!(c.current().map(|v| model_key(&v)), last_before.map(|(k, _)| k.clone()));
        }
    }
}
