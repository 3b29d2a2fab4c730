//! The shared core of the row-key kernels: compare a (masked) segment of every key with a
//! value, as unsigned big-endian bytes, and turn the orderings into a selection bitmap.
//!
//! A segment is cut into chunks of at most 8 bytes. Each chunk of a key is read as a
//! big-endian `u64` with the segment's bytes at the top, ANDed with the chunk's mask and
//! compared with the chunk's value the same way, so one integer comparison orders 8 bytes at
//! once. Chunks combine lexicographically: `less = less | (equal & chunk_less)`,
//! `equal = equal & chunk_equal`. Bytes whose mask and value are both zero compare equal in
//! every key, so no chunk starts on one: a fused `code = C AND sdate = D` over two 4-byte
//! fields is one chunk, and the gaps between fields cost nothing.
//!
//! In a fixed-width batch every key holds a chunk at the same place, so each chunk becomes a
//! [`Window`]: the 8 bytes loaded from every key, with the chunk's mask and value moved to
//! where its bytes sit in them. A comparison that only asks "equal or not" (`=`, `!=`) does
//! not need big-endian order and compares the little-endian words as loaded.
//!
//! Three implementations share that definition: a portable per-key loop (any batch, any
//! CPU), an AVX2 path (4 keys per 64-bit gather, keys of at least 8 bytes) and AVX-512 paths
//! (8 keys per step: one `vpermt2b` per chunk for keys of at most 16 bytes, which hold 8 keys
//! in two registers; one 8-lane gather per chunk for wider keys). The scalar twins in
//! `kernels/mod.rs` do not use this module at all.

use std::cmp::Ordering;

use smallvec::SmallVec;

use crate::batch::{Bitmap, FixedBatch, VarBatch};
use crate::kernels::Isa;
use crate::model::CompareOp;

/// Bytes compared per chunk.
const CHUNK_BYTES: usize = 8;

/// The top bit of a word: flipped to order two's-complement numbers as unsigned ones.
const SIGN_BIT: u64 = 1 << 63;

/// One chunk of the segment: key bytes `[start, start + len)`.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    start: usize,
    len: usize,
    /// The mask bytes, big-endian, at the top of the word; zero below.
    mask: u64,
    /// The value bytes, big-endian, at the top of the word, with `flip` applied; zero below.
    value: u64,
    /// XORed into the key's masked word before comparing: [`SIGN_BIT`] for the chunk that
    /// starts a signed segment (two's-complement order for 8-byte longs), zero otherwise.
    flip: u64,
}

/// How segment orderings become result bits: the operator, and how a key whose segment
/// equals the value finally compares (`tie`: used by whole-key comparisons whose keys are
/// longer or shorter than the value).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Combine {
    pub(crate) op: CompareOp,
    pub(crate) tie: Ordering,
}

impl Combine {
    /// The segment equals the value (prefixes, masked equalities, fuzzy rules).
    pub(crate) const EQUAL: Combine = Combine {
        op: CompareOp::Equal,
        tie: Ordering::Equal,
    };

    /// The result for one key from its segment ordering.
    #[inline(always)]
    pub(crate) fn holds(self, ordering: Ordering) -> bool {
        self.op.holds(ordering.then(self.tie))
    }

    /// The operator as a truth table over the three outcomes (all-ones or zero masks for
    /// less, equal, greater), so result bits are computed without branches.
    pub(crate) fn truth(self) -> Truth {
        let mask = |ordering| if self.holds(ordering) { u64::MAX } else { 0 };
        Truth {
            less: mask(Ordering::Less),
            equal: mask(Ordering::Equal),
            greater: mask(Ordering::Greater),
        }
    }

    /// Whether the "less" bits matter: they do not when the result only depends on whether
    /// the segment is equal (`=`, `!=`, NO_OP with an equal or greater tie, where less and
    /// greater give the same answer).
    fn needs_less(self) -> bool {
        let truth = self.truth();
        truth.less != truth.greater
    }
}

/// [`Combine`] as masks: result bit = (less & less-mask) | (equal & equal-mask) |
/// (greater & greater-mask).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Truth {
    less: u64,
    equal: u64,
    greater: u64,
}

impl Truth {
    #[inline(always)]
    fn apply(self, less: u64, equal: u64) -> u64 {
        (less & self.less) | (equal & self.equal) | (!(less | equal) & self.greater)
    }
}

/// A chunk's place in keys of one width (at least 8 bytes): the 8 bytes loaded from every
/// key, and the chunk's mask, value and flip moved to where the chunk's bytes sit in them,
/// read big-endian. Bytes of the window outside the chunk are masked to zero on both sides,
/// so they compare equal and the window orders keys exactly as the chunk does.
#[derive(Clone, Copy, Debug)]
struct Window {
    /// Where the 8 loaded bytes start in each key: the chunk's start, or `width - 8` for a
    /// chunk in the key's last 8 bytes.
    at: usize,
    mask: u64,
    value: u64,
    flip: u64,
}

impl Window {
    /// `chunk`'s window in keys of `width` bytes. Preconditions: `width >= 8` and
    /// `chunk.start + chunk.len <= width`.
    fn new(chunk: &Chunk, width: usize) -> Window {
        let at = chunk.start.min(width.saturating_sub(CHUNK_BYTES));
        // The chunk starts `chunk.start - at` (at most 7) bytes into the window.
        let shift = 8 * (chunk.start - at) as u32;
        Window {
            at,
            mask: chunk.mask >> shift,
            value: chunk.value >> shift,
            flip: chunk.flip >> shift,
        }
    }

    /// The mask and the wanted word for an equality test on the window read little-endian,
    /// as loaded: `(word & mask) ^ flip == value` exactly when `word & mask == value ^ flip`.
    fn little_endian_equality(self) -> (u64, u64) {
        (
            self.mask.swap_bytes(),
            (self.value ^ self.flip).swap_bytes(),
        )
    }
}

/// A plan's chunks placed in keys of one width (at least 8 bytes), in the form the
/// fixed-batch paths compare them. For a test that only asks whether the segment is equal
/// (`ordered` false: `=`, `!=`), each window's mask and value are little-endian and its flip
/// is folded into the value, so the loaded words are compared as they are; otherwise the
/// words are read big-endian and ordered. Plans of up to four chunks, the usual ones, stay
/// on the stack.
struct Placed {
    windows: SmallVec<[Window; 4]>,
    ordered: bool,
}

impl Placed {
    fn new(plan: &SegmentPlan, width: usize, combine: Combine) -> Placed {
        let ordered = combine.needs_less();
        let windows = plan
            .chunks
            .iter()
            .map(|chunk| {
                let window = Window::new(chunk, width);
                if ordered {
                    return window;
                }
                let (mask, value) = window.little_endian_equality();
                Window {
                    mask,
                    value,
                    flip: 0,
                    ..window
                }
            })
            .collect();
        Placed { windows, ordered }
    }
}

/// A compiled segment comparison: `(key[offset..offset + len] & mask) cmp value`.
#[derive(Clone, Debug)]
pub(crate) struct SegmentPlan {
    /// In key order; bytes covered by no chunk compare equal in every key.
    chunks: Vec<Chunk>,
    /// `offset + len`: keys shorter than this have no segment.
    end: usize,
}

/// Reads up to 8 bytes as a big-endian word with the bytes at the top.
#[inline(always)]
fn top_aligned(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    let n = bytes.len().min(8);
    word[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(word)
}

#[inline(always)]
fn load_be(bytes: &[u8]) -> u64 {
    match <[u8; 8]>::try_from(bytes) {
        Ok(word) => u64::from_be_bytes(word),
        Err(_) => top_aligned(bytes),
    }
}

/// 8 bytes as loaded on a little-endian machine (0 when `bytes` is not 8 long).
#[inline(always)]
fn load_le(bytes: &[u8]) -> u64 {
    <[u8; 8]>::try_from(bytes).map_or(0, u64::from_le_bytes)
}

impl SegmentPlan {
    /// `mask` and `value` have the segment's length (possibly 0: every key long enough
    /// compares equal). `signed` orders the segment's first 8 bytes as a two's-complement
    /// number (8-byte longs).
    pub(crate) fn new(offset: usize, mask: &[u8], value: &[u8], signed: bool) -> SegmentPlan {
        let len = mask.len().min(value.len());
        let mut chunks = Vec::new();
        let mut from = 0;
        while from < len {
            // A byte with a zero mask and a zero value is equal in every key (and a signed
            // segment's sign bit in it is masked on both sides): no chunk needs to start there.
            if !signed && mask[from] == 0 && value[from] == 0 {
                from += 1;
                continue;
            }
            let to = (from + CHUNK_BYTES).min(len);
            let flip = if signed && from == 0 { SIGN_BIT } else { 0 };
            chunks.push(Chunk {
                start: offset + from,
                len: to - from,
                mask: top_aligned(&mask[from..to]),
                value: top_aligned(&value[from..to]) ^ flip,
                flip,
            });
            from = to;
        }
        SegmentPlan {
            chunks,
            end: offset + len,
        }
    }

    /// The chunk of `key` as a top-aligned word. Precondition: `chunk.start + chunk.len <=
    /// key.len()`.
    #[inline(always)]
    fn chunk_word(key: &[u8], chunk: &Chunk) -> u64 {
        if let Some(window) = key.get(chunk.start..chunk.start + CHUNK_BYTES) {
            return load_be(window);
        }
        let n = key.len();
        if n >= CHUNK_BYTES {
            // The last 8 bytes of the key hold the chunk; shift it to the top.
            load_be(&key[n - CHUNK_BYTES..]) << (8 * (chunk.start + CHUNK_BYTES - n))
        } else {
            top_aligned(key.get(chunk.start..).unwrap_or(&[]))
        }
    }

    /// The segment's ordering against the value, `None` when the key is too short.
    #[inline(always)]
    pub(crate) fn order(&self, key: &[u8]) -> Option<Ordering> {
        if key.len() < self.end {
            return None;
        }
        for chunk in &self.chunks {
            let word = (Self::chunk_word(key, chunk) & chunk.mask) ^ chunk.flip;
            if word != chunk.value {
                return Some(word.cmp(&chunk.value));
            }
        }
        Some(Ordering::Equal)
    }

    /// Fills `out` for a fixed-width batch with the best path `isa` allows. Keys shorter than
    /// the segment give `false`.
    pub(crate) fn eval_fixed(
        &self,
        isa: Isa,
        batch: &FixedBatch<'_>,
        combine: Combine,
        out: &mut Bitmap,
    ) {
        out.reset_zeros(batch.count());
        let width = batch.width();
        if width < self.end || batch.count() == 0 || simd_permute(self, isa, batch, combine, out) {
            return;
        }
        if width < CHUNK_BYTES {
            self.portable_narrow(batch, combine, out);
            return;
        }
        let placed = Placed::new(self, width, combine);
        let done = simd_gather(&placed, isa, batch, combine, out);
        portable_placed(&placed, batch, combine, done, out);
    }

    /// Portable path for keys narrower than 8 bytes (no window fits), key by key.
    fn portable_narrow(&self, batch: &FixedBatch<'_>, combine: Combine, out: &mut Bitmap) {
        let count = batch.count();
        let width = batch.width();
        let words = out.words_mut();
        if width == 0 {
            let hit = self
                .order(&[])
                .is_some_and(|ordering| combine.holds(ordering));
            fill_keys(words, 0, (0..count).map(|_| &[][..]), |_| hit);
            return;
        }
        fill_keys(words, 0, batch.data().chunks_exact(width), |key| {
            self.order(key)
                .is_some_and(|ordering| combine.holds(ordering))
        });
    }

    /// Fills `out` for a variable-length batch (portable path).
    pub(crate) fn eval_var(&self, batch: &VarBatch<'_>, combine: Combine, out: &mut Bitmap) {
        out.fill(batch.count(), |index| {
            self.order(batch.get(index))
                .is_some_and(|ordering| combine.holds(ordering))
        });
    }
}

/// ORs `hit(key)` for keys numbered `from..` into `words`, one register per word.
#[inline(always)]
fn fill_keys<'k>(
    words: &mut [u64],
    from: usize,
    keys: impl Iterator<Item = &'k [u8]>,
    hit: impl Fn(&[u8]) -> bool,
) {
    let mut bits = 0u64;
    let mut position = from;
    for key in keys {
        bits |= u64::from(hit(key)) << (position % 64);
        position += 1;
        if position.is_multiple_of(64) {
            if let Some(word) = words.get_mut(position / 64 - 1) {
                *word |= bits;
            }
            bits = 0;
        }
    }
    if !position.is_multiple_of(64)
        && let Some(word) = words.get_mut(position / 64)
    {
        *word |= bits;
    }
}

/// Portable path over keys `from..` of a fixed batch of keys at least 8 bytes wide (`from`
/// is where a SIMD path stopped; bits before it are kept).
fn portable_placed(
    placed: &Placed,
    batch: &FixedBatch<'_>,
    combine: Combine,
    from: usize,
    out: &mut Bitmap,
) {
    let width = batch.width();
    if from >= batch.count() {
        return;
    }
    let truth = combine.truth();
    let words = out.words_mut();
    let keys = batch
        .data()
        .get(from * width..)
        .unwrap_or(&[])
        .chunks_exact(width);
    match (placed.windows.as_slice(), placed.ordered) {
        ([window], false) => {
            let end = window.at + CHUNK_BYTES;
            let (if_equal, otherwise) = (truth.equal & 1 == 1, truth.greater & 1 == 1);
            fill_keys(words, from, keys, |key| {
                if key.get(window.at..end).map_or(0, load_le) & window.mask == window.value {
                    if_equal
                } else {
                    otherwise
                }
            });
        }
        ([window], true) => {
            let end = window.at + CHUNK_BYTES;
            fill_keys(words, from, keys, |key| {
                let loaded = key.get(window.at..end).map_or(0, load_be);
                let word = (loaded & window.mask) ^ window.flip;
                truth.apply(
                    u64::from(word < window.value).wrapping_neg(),
                    u64::from(word == window.value).wrapping_neg(),
                ) & 1
                    == 1
            });
        }
        (windows, ordered) => {
            let load = if ordered { load_be } else { load_le };
            fill_keys(words, from, keys, |key| {
                let mut less = 0u64;
                let mut equal = 1u64;
                for window in windows {
                    let loaded = key.get(window.at..window.at + CHUNK_BYTES).map_or(0, load);
                    let word = (loaded & window.mask) ^ window.flip;
                    less |= equal & u64::from(word < window.value);
                    equal &= u64::from(word == window.value);
                }
                truth.apply(less.wrapping_neg(), equal.wrapping_neg()) & 1 == 1
            });
        }
    }
}

/// Keys at most this wide go through the AVX-512 byte permute: 8 of them fit the 128 bytes
/// of the two registers one `vpermt2b` reads.
const PERMUTE_MAX_WIDTH: usize = 16;

/// Fills the whole batch through the AVX-512 byte permute when `isa` allows it and the keys
/// are at most [`PERMUTE_MAX_WIDTH`] bytes wide; false when it did not run.
fn simd_permute(
    plan: &SegmentPlan,
    isa: Isa,
    batch: &FixedBatch<'_>,
    combine: Combine,
    out: &mut Bitmap,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 && batch.width() <= PERMUTE_MAX_WIDTH && Isa::Avx512.is_supported() {
        // SAFETY: the AVX-512 F/BW/VBMI features were detected at run time.
        unsafe { x86::fixed_avx512_permute(plan, batch, combine, out) };
        return true;
    }
    let _ = (plan, isa, batch, combine, out);
    false
}

/// Runs the widest gather path `isa` allows over a batch of keys at least 8 bytes wide;
/// returns how many leading keys it filled (the rest go through the portable loop).
fn simd_gather(
    placed: &Placed,
    isa: Isa,
    batch: &FixedBatch<'_>,
    combine: Combine,
    out: &mut Bitmap,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if isa == Isa::Avx512 && Isa::Avx512.is_supported() {
            // SAFETY: AVX-512 F/BW was detected at run time; `placed` holds windows for keys
            // of this batch's width (at least 8 bytes).
            return unsafe { x86::fixed_avx512_gather(placed, batch, combine, out) };
        }
        if isa >= Isa::Avx2 && Isa::Avx2.is_supported() {
            // SAFETY: AVX2 was detected at run time; `placed` holds windows for keys of this
            // batch's width (at least 8 bytes).
            return unsafe { x86::fixed_avx2_gather(placed, batch, combine, out) };
        }
        0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (placed, isa, batch, combine, out);
        0
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use smallvec::SmallVec;

    use super::{Combine, Placed, SegmentPlan, Truth, Window};
    use crate::batch::{Bitmap, FixedBatch};

    /// Byte-reversal control for `pshufb`: reverses each 8-byte lane (little-endian load to
    /// big-endian value); repeated for every 128-bit lane of a 512-bit register.
    const BSWAP_64: [u8; 64] = [
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, //
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, //
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, //
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,
    ];

    fn low_bits(n: usize) -> u64 {
        if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
    }

    /// [`fill_words`] over a plan's windows (or chunks): `step(windows, index, keys_here)`.
    /// A plan of one window, the usual one, gets a loop of its own in which the window's
    /// constants stay in registers. A macro rather than a function: the closures it builds
    /// must be defined inside the calling SIMD function, whose target features they then
    /// inherit; built in a plain function they lack those features, `step` cannot be
    /// inlined into them, and every step of 4 or 8 keys became a call (the 16-byte AVX-512
    /// prefix kernel ran 1.7x slower that way).
    macro_rules! fill_steps {
        ($words:expr, $count:expr, $keys_per_step:expr, $truth:expr, $windows:expr, $step:expr) => {{
            let step = $step;
            match $windows {
                [one] => fill_words($words, $count, $keys_per_step, $truth, |index, keys| {
                    step(std::slice::from_ref(one), index, keys)
                }),
                all => fill_words($words, $count, $keys_per_step, $truth, |index, keys| {
                    step(all, index, keys)
                }),
            }
        }};
    }

    /// Fills `words` (one bit per key of `count`) from steps of `keys_per_step` keys:
    /// `step(index, keys_here)` gives step `index`'s less and equal bits, `keys_here` being
    /// how many of its keys are in the batch. The bits are collected a word (64 keys) at a
    /// time, the operator is applied once per word, and bits past the batch are cleared.
    /// Inlined into each SIMD path, whose `step` then runs with that path's features.
    #[inline(always)]
    fn fill_words(
        words: &mut [u64],
        count: usize,
        keys_per_step: usize,
        truth: Truth,
        mut step: impl FnMut(usize, usize) -> (u64, u64),
    ) {
        let steps_per_word = 64 / keys_per_step;
        let steps = count.div_ceil(keys_per_step);
        for (word_index, slot) in words.iter_mut().enumerate() {
            let (mut less, mut equal) = (0u64, 0u64);
            let first = word_index * steps_per_word;
            for index in first..(first + steps_per_word).min(steps) {
                let keys_here = (count - index * keys_per_step).min(keys_per_step);
                let (step_less, step_equal) = step(index, keys_here);
                let shift = (index - first) * keys_per_step;
                less |= step_less << shift;
                equal |= step_equal << shift;
            }
            *slot = truth.apply(less, equal) & low_bits(count - word_index * 64);
        }
    }

    /// One chunk's constants for the permute path: the `vpermt2b` control, mask, value and
    /// flip.
    struct PermuteChunk {
        control: __m512i,
        mask: __m512i,
        value: __m512i,
        flip: __m512i,
    }

    /// Compares 8 keys held in `low`/`high` (128 bytes) chunk by chunk; returns their less
    /// and equal bits (one per key, low 8 bits).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    #[inline]
    fn permute_group(
        low: __m512i,
        high: __m512i,
        chunks: &[PermuteChunk],
        needs_less: bool,
    ) -> (u64, u64) {
        let mut less: u8 = 0;
        let mut equal: u8 = 0xff;
        for chunk in chunks {
            let lanes = _mm512_xor_si512(
                _mm512_and_si512(
                    _mm512_permutex2var_epi8(low, chunk.control, high),
                    chunk.mask,
                ),
                chunk.flip,
            );
            if needs_less {
                less |= equal & _mm512_cmplt_epu64_mask(lanes, chunk.value);
            }
            equal &= _mm512_cmpeq_epu64_mask(lanes, chunk.value);
        }
        (u64::from(less), u64::from(equal))
    }

    /// AVX-512 for keys of at most 16 bytes: 8 keys (at most 128 bytes) per step; one
    /// `vpermt2b` per chunk gathers and byte-reverses every key's chunk into a 64-bit lane.
    /// Steps whose 128 bytes lie inside the batch use plain loads, the last ones masked loads.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) fn fixed_avx512_permute(
        plan: &SegmentPlan,
        batch: &FixedBatch<'_>,
        combine: Combine,
        out: &mut Bitmap,
    ) {
        let width = batch.width();
        let data = batch.data();
        let count = batch.count();
        let needs_less = combine.needs_less();
        let truth = combine.truth();
        let chunks: SmallVec<[PermuteChunk; 2]> = plan
            .chunks
            .iter()
            .map(|chunk| {
                let mut control = [0u8; 64];
                for lane in 0..8 {
                    for t in 0..8 {
                        let source = lane * width + chunk.start + t.min(chunk.len - 1);
                        control[lane * 8 + (7 - t)] = source as u8;
                    }
                }
                // SAFETY: `control` is 64 readable bytes; unaligned loads are allowed.
                let control = unsafe { _mm512_loadu_si512(control.as_ptr().cast()) };
                PermuteChunk {
                    control,
                    mask: _mm512_set1_epi64(chunk.mask as i64),
                    value: _mm512_set1_epi64(chunk.value as i64),
                    flip: _mm512_set1_epi64(chunk.flip as i64),
                }
            })
            .collect();
        let step_bytes = 8 * width;
        let step = |chunks: &[PermuteChunk], index: usize, _keys_here: usize| {
            let base = index * step_bytes;
            let (low, high) = if base + 128 <= data.len() {
                // SAFETY: bytes base..base + 128 are inside `data`.
                unsafe {
                    let pointer = data.as_ptr().add(base);
                    (
                        _mm512_loadu_si512(pointer.cast()),
                        _mm512_loadu_si512(pointer.add(64).cast()),
                    )
                }
            } else {
                // The batch's last steps: keys past it load as zeros (their bits are
                // cleared).
                let n = step_bytes.min(data.len() - base);
                // SAFETY: the masked loads touch only bytes base..base + n, all inside
                // `data` (n <= data.len() - base); the second load is issued only when
                // n > 64, so its start base + 64 is inside `data` too.
                unsafe {
                    let pointer = data.as_ptr().add(base);
                    let low = _mm512_maskz_loadu_epi8(low_bits(n.min(64)), pointer.cast());
                    let high = if n > 64 {
                        _mm512_maskz_loadu_epi8(low_bits(n - 64), pointer.add(64).cast())
                    } else {
                        _mm512_setzero_si512()
                    };
                    (low, high)
                }
            };
            permute_group(low, high, chunks, needs_less)
        };
        fill_steps!(out.words_mut(), count, 8, truth, chunks.as_slice(), step);
    }

    /// AVX-512 for keys wider than 16 bytes: 8 keys per step, one 8-lane 64-bit gather per
    /// window; the last step's missing keys are masked out of the gather (nothing past the
    /// batch is read). Equality windows compare the words as loaded; ordered ones byte-reverse
    /// them first and compare unsigned. Returns the number of keys filled: all of them.
    ///
    /// # Safety
    /// `placed` must hold windows for keys of `batch`'s width (so `at + 8 <= width`), and the
    /// CPU must have AVX-512 F and BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn fixed_avx512_gather(
        placed: &Placed,
        batch: &FixedBatch<'_>,
        combine: Combine,
        out: &mut Bitmap,
    ) -> usize {
        let width = batch.width();
        let data = batch.data();
        let count = batch.count();
        let truth = combine.truth();
        let w = width as i64;
        let lanes = _mm512_set_epi64(7 * w, 6 * w, 5 * w, 4 * w, 3 * w, 2 * w, w, 0);
        // SAFETY: BSWAP_64 is 64 readable bytes.
        let bswap = unsafe { _mm512_loadu_si512(BSWAP_64.as_ptr().cast()) };
        // Each window's lane offsets, built once (the mask, value and flip are broadcast from
        // memory as operands).
        let mut windows: SmallVec<[(Window, __m512i); 4]> = SmallVec::new();
        for window in &placed.windows {
            let offsets = _mm512_add_epi64(lanes, _mm512_set1_epi64(window.at as i64));
            windows.push((*window, offsets));
        }
        let step_bytes = (8 * width) as i64;
        let ordered = placed.ordered;
        // One step's less and equal bits (8 keys, `keys_here` of them in the batch).
        let step = |windows: &[(Window, __m512i)], index: usize, keys_here: usize| {
            let present = low_bits(keys_here) as __mmask8;
            let base = _mm512_set1_epi64(index as i64 * step_bytes);
            let mut less: u8 = 0;
            let mut equal: u8 = 0xff;
            for (window, window_offsets) in windows {
                let offsets = _mm512_add_epi64(base, *window_offsets);
                // SAFETY: lane i reads 8 bytes at (index * 8 + i) * width + at, inside key
                // index * 8 + i (at + 8 <= width), and only for the keys present (index * 8 +
                // i < count); the other lanes are masked off and not read.
                let loaded = unsafe {
                    if keys_here == 8 {
                        _mm512_i64gather_epi64::<1>(offsets, data.as_ptr().cast())
                    } else {
                        _mm512_mask_i64gather_epi64::<1>(
                            _mm512_setzero_si512(),
                            present,
                            offsets,
                            data.as_ptr().cast(),
                        )
                    }
                };
                let mask = _mm512_set1_epi64(window.mask as i64);
                let value = _mm512_set1_epi64(window.value as i64);
                if ordered {
                    let word = _mm512_xor_si512(
                        _mm512_and_si512(_mm512_shuffle_epi8(loaded, bswap), mask),
                        _mm512_set1_epi64(window.flip as i64),
                    );
                    less |= equal & _mm512_cmplt_epu64_mask(word, value);
                    equal &= _mm512_cmpeq_epu64_mask(word, value);
                } else {
                    equal &= _mm512_cmpeq_epu64_mask(_mm512_and_si512(loaded, mask), value);
                }
            }
            (u64::from(less), u64::from(equal))
        };
        fill_steps!(out.words_mut(), count, 8, truth, windows.as_slice(), step);
        count
    }

    /// One window's vectors for the 4-lane gather: the lanes' offsets in a step (key `i` at
    /// `i * width + at`), the mask, and for ordered tests the value and flip with one more
    /// flip of the top bit (unsigned order as AVX2's signed order).
    struct WindowVectors256 {
        offsets: __m256i,
        mask: __m256i,
        value: __m256i,
        flip: __m256i,
    }

    /// AVX2 for keys of at least 8 bytes: 4 keys per step, one 4-lane 64-bit gather per
    /// window; the last step's missing keys are masked out of the gather. Equality windows
    /// compare the words as loaded; ordered ones byte-reverse them and compare them signed
    /// with their top bits flipped (AVX2 has no unsigned 64-bit compare). Returns the number
    /// of keys filled: all of them.
    ///
    /// # Safety
    /// `placed` must hold windows for keys of `batch`'s width (so `at + 8 <= width`), and the
    /// CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn fixed_avx2_gather(
        placed: &Placed,
        batch: &FixedBatch<'_>,
        combine: Combine,
        out: &mut Bitmap,
    ) -> usize {
        let width = batch.width();
        let data = batch.data();
        let count = batch.count();
        let truth = combine.truth();
        // SAFETY: BSWAP_64 has at least 32 readable bytes.
        let bswap = unsafe { _mm256_loadu_si256(BSWAP_64.as_ptr().cast()) };
        let w = width as i64;
        let lanes = _mm256_set_epi64x(3 * w, 2 * w, w, 0);
        // Each window's vectors, built once (in place: a SmallVec returned by value would be
        // copied) and read from memory as operands in the loop.
        let mut windows: SmallVec<[WindowVectors256; 4]> = SmallVec::new();
        for window in &placed.windows {
            let value = if placed.ordered {
                window.value ^ super::SIGN_BIT
            } else {
                window.value
            };
            windows.push(WindowVectors256 {
                offsets: _mm256_add_epi64(lanes, _mm256_set1_epi64x(window.at as i64)),
                mask: _mm256_set1_epi64x(window.mask as i64),
                value: _mm256_set1_epi64x(value as i64),
                flip: _mm256_set1_epi64x((window.flip ^ super::SIGN_BIT) as i64),
            });
        }
        let step_bytes = (4 * width) as i64;
        let ordered = placed.ordered;
        // One step's less and equal bits (4 keys, `keys_here` of them in the batch).
        let step = |windows: &[WindowVectors256], index: usize, keys_here: usize| -> (u64, u64) {
            let base = _mm256_set1_epi64x(index as i64 * step_bytes);
            let mut less: u32 = 0;
            let mut equal: u32 = 0xf;
            for window in windows {
                let offsets = _mm256_add_epi64(base, window.offsets);
                // SAFETY: lane i reads 8 bytes at (index * 4 + i) * width + at, inside key
                // index * 4 + i (at + 8 <= width), and only for the keys present; the other
                // lanes' mask sign bits are clear, so they are not read.
                let loaded = unsafe {
                    if keys_here == 4 {
                        _mm256_i64gather_epi64::<1>(data.as_ptr().cast(), offsets)
                    } else {
                        let lanes_present = _mm256_set_epi64x(
                            -i64::from(keys_here > 3),
                            -i64::from(keys_here > 2),
                            -i64::from(keys_here > 1),
                            -1,
                        );
                        _mm256_mask_i64gather_epi64::<1>(
                            _mm256_setzero_si256(),
                            data.as_ptr().cast(),
                            offsets,
                            lanes_present,
                        )
                    }
                };
                let equal_lanes = if ordered {
                    let word = _mm256_xor_si256(
                        _mm256_and_si256(_mm256_shuffle_epi8(loaded, bswap), window.mask),
                        window.flip,
                    );
                    let lower = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(
                        window.value,
                        word,
                    ))) as u32;
                    less |= equal & lower;
                    _mm256_cmpeq_epi64(word, window.value)
                } else {
                    _mm256_cmpeq_epi64(_mm256_and_si256(loaded, window.mask), window.value)
                };
                equal &= _mm256_movemask_pd(_mm256_castsi256_pd(equal_lanes)) as u32;
            }
            (u64::from(less), u64::from(equal))
        };
        fill_steps!(out.words_mut(), count, 4, truth, windows.as_slice(), step);
        count
    }
}
