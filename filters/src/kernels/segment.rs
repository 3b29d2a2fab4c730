//! The shared core of the row-key kernels: compare a (masked) segment of every key with a
//! value, as unsigned big-endian bytes, and turn the orderings into a selection bitmap.
//!
//! A segment is cut into chunks of at most 8 bytes. Each chunk of a key is read as a
//! big-endian `u64` with the segment's bytes at the top, ANDed with the chunk's mask and
//! compared with the chunk's value the same way, so one integer comparison orders 8 bytes at
//! once. Chunks combine lexicographically: `less = less | (equal & chunk_less)`,
//! `equal = equal & chunk_equal`.
//!
//! Three implementations share that definition: a portable per-key loop (any batch, any
//! CPU), an AVX2 path (4 keys per 64-bit gather, keys of at least 8 bytes) and an AVX-512
//! path (8 keys per `vpermt2b`, keys of at most 16 bytes; wider keys use the AVX2 gather,
//! which measured faster than a 512-bit gather). The scalar twins in `kernels/mod.rs` do not
//! use this module at all.

use std::cmp::Ordering;

use crate::batch::{Bitmap, FixedBatch, VarBatch};
use crate::kernels::Isa;
use crate::model::CompareOp;

/// Bytes compared per chunk.
const CHUNK_BYTES: usize = 8;

/// One chunk of the segment: key bytes `[start, start + len)`.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    start: usize,
    len: usize,
    /// The mask bytes, big-endian, at the top of the word; zero below.
    mask: u64,
    /// The value bytes, big-endian, at the top of the word; zero below.
    value: u64,
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

    /// Whether the "less" bits matter (Eq/Ne with an equal tie only need "equal").
    fn needs_less(self) -> bool {
        !matches!(
            self.op,
            CompareOp::Equal | CompareOp::NotEqual | CompareOp::NoOp
        ) || self.tie == Ordering::Less
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

/// A chunk's fixed position in keys of one width (portable path).
struct Window {
    /// Start of the 8 bytes loaded.
    at: usize,
    /// Left shift bringing the chunk to the top of the word.
    shift: u32,
    mask: u64,
    value: u64,
    /// Top-bit flip for two's-complement order.
    flip: u64,
}

/// A compiled segment comparison: `(key[offset..offset + len] & mask) cmp value`.
#[derive(Clone, Debug)]
pub(crate) struct SegmentPlan {
    chunks: Vec<Chunk>,
    /// `offset + len`: keys shorter than this have no segment.
    end: usize,
    /// Flip the top bit of the first chunk (two's-complement order for 8-byte longs).
    signed: bool,
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

impl SegmentPlan {
    /// `mask` and `value` have the segment's length (possibly 0: every key compares equal).
    pub(crate) fn new(offset: usize, mask: &[u8], value: &[u8], signed: bool) -> SegmentPlan {
        let len = mask.len().min(value.len());
        let chunks = (0..len.div_ceil(CHUNK_BYTES))
            .map(|index| {
                let from = index * CHUNK_BYTES;
                let to = (from + CHUNK_BYTES).min(len);
                let mut chunk_value = top_aligned(&value[from..to]);
                if signed && index == 0 {
                    chunk_value ^= 1 << 63;
                }
                Chunk {
                    start: offset + from,
                    len: to - from,
                    mask: top_aligned(&mask[from..to]),
                    value: chunk_value,
                }
            })
            .collect();
        SegmentPlan {
            chunks,
            end: offset + len,
            signed,
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
        for (index, chunk) in self.chunks.iter().enumerate() {
            let mut word = Self::chunk_word(key, chunk) & chunk.mask;
            if self.signed && index == 0 {
                word ^= 1 << 63;
            }
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
        if batch.width() < self.end || batch.count() == 0 {
            return;
        }
        let done = simd_fixed(self, isa, batch, combine, out);
        self.portable_fixed_range(batch, combine, done, out);
    }

    /// Portable path over keys `from..` of a fixed batch (`from` is a multiple of 64 or the
    /// SIMD tail start; bits before it are kept).
    fn portable_fixed_range(
        &self,
        batch: &FixedBatch<'_>,
        combine: Combine,
        from: usize,
        out: &mut Bitmap,
    ) {
        let width = batch.width();
        let count = batch.count();
        if from >= count {
            return;
        }
        let truth = combine.truth();
        // Every key has the same width: each chunk's 8-byte window and shift are fixed.
        let windows: Vec<Window> = self
            .chunks
            .iter()
            .enumerate()
            .map(|(index, chunk)| {
                let at = chunk.start.min(width.saturating_sub(CHUNK_BYTES));
                Window {
                    at,
                    shift: (8 * (chunk.start - at)) as u32,
                    mask: chunk.mask,
                    value: chunk.value,
                    flip: if self.signed && index == 0 {
                        1 << 63
                    } else {
                        0
                    },
                }
            })
            .collect();
        let words = out.words_mut();
        if width == 0 {
            let hit = self
                .order(&[])
                .is_some_and(|ordering| combine.holds(ordering));
            fill_keys(words, from, (from..count).map(|_| &[][..]), |_| hit);
            return;
        }
        let keys = batch
            .data()
            .get(from * width..)
            .unwrap_or(&[])
            .chunks_exact(width);
        if width < CHUNK_BYTES {
            fill_keys(words, from, keys, |key| {
                self.order(key)
                    .is_some_and(|ordering| combine.holds(ordering))
            });
        } else if let [window] = windows.as_slice() {
            let end = window.at + CHUNK_BYTES;
            fill_keys(words, from, keys, |key| {
                let loaded = key.get(window.at..end).map_or(0, load_be);
                let word = ((loaded << window.shift) & window.mask) ^ window.flip;
                truth.apply(
                    u64::from(word < window.value).wrapping_neg(),
                    u64::from(word == window.value).wrapping_neg(),
                ) & 1
                    == 1
            });
        } else {
            fill_keys(words, from, keys, |key| {
                let mut less = 0u64;
                let mut equal = 1u64;
                for window in &windows {
                    let loaded = key
                        .get(window.at..window.at + CHUNK_BYTES)
                        .map_or(0, load_be);
                    let word = ((loaded << window.shift) & window.mask) ^ window.flip;
                    less |= equal & u64::from(word < window.value);
                    equal &= u64::from(word == window.value);
                }
                truth.apply(less.wrapping_neg(), equal.wrapping_neg()) & 1 == 1
            });
        }
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

/// Runs the widest SIMD path available for the batch; returns how many leading keys it
/// filled (the rest go through the portable loop).
fn simd_fixed(
    plan: &SegmentPlan,
    isa: Isa,
    batch: &FixedBatch<'_>,
    combine: Combine,
    out: &mut Bitmap,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if plan.chunks.is_empty() {
            return 0;
        }
        let width = batch.width();
        if isa == Isa::Avx512 && Isa::Avx512.is_supported() && width <= 16 {
            // SAFETY: the AVX-512 F/BW/VBMI features were detected at run time.
            unsafe { x86::fixed_avx512_permute(plan, batch, combine, out) };
            return batch.count();
        }
        // Wider keys: 64-bit gathers. The 256-bit AVX2 gather measured faster than the
        // 512-bit one on the reference machine (AMD Zen 4), so AVX-512 machines use it too.
        if isa >= Isa::Avx2 && Isa::Avx2.is_supported() && width >= 8 {
            // SAFETY: AVX2 was detected at run time and every key has at least 8 bytes.
            return unsafe { x86::fixed_avx2_gather(plan, batch, combine, out) };
        }
        0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (plan, isa, batch, combine, out);
        0
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{CHUNK_BYTES, Combine, SegmentPlan, Truth};
    use crate::batch::{Bitmap, FixedBatch};

    /// Byte-reversal control for `pshufb`: reverses each 8-byte lane (little-endian load to
    /// big-endian value).
    const BSWAP_64: [u8; 32] = [
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, //
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,
    ];

    /// Where each chunk's 8-byte window starts in a key of `width >= 8` bytes, and how far to
    /// shift the loaded word to bring the chunk to the top.
    fn windows(plan: &SegmentPlan, width: usize) -> Vec<(usize, u64)> {
        plan.chunks
            .iter()
            .map(|chunk| {
                if chunk.start + CHUNK_BYTES <= width {
                    (chunk.start, 0)
                } else {
                    let at = width - CHUNK_BYTES;
                    (at, (8 * (chunk.start - at)) as u64)
                }
            })
            .collect()
    }

    fn low_bits(n: usize) -> u64 {
        if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
    }

    /// One chunk's constants for the permute path: the `vpermt2b` control, mask and value.
    struct PermuteChunk {
        control: __m512i,
        mask: __m512i,
        value: __m512i,
    }

    /// Compares 8 keys held in `low`/`high` (128 bytes) chunk by chunk; returns the result
    /// bits (one per key, low 8 bits).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    #[inline]
    fn permute_group(
        low: __m512i,
        high: __m512i,
        chunks: &[PermuteChunk],
        signed: bool,
        needs_less: bool,
        truth: Truth,
    ) -> u64 {
        let sign = _mm512_set1_epi64(i64::MIN);
        if let [chunk] = chunks {
            let mut lanes = _mm512_and_si512(
                _mm512_permutex2var_epi8(low, chunk.control, high),
                chunk.mask,
            );
            if signed {
                lanes = _mm512_xor_si512(lanes, sign);
            }
            let equal = _mm512_cmpeq_epu64_mask(lanes, chunk.value);
            let less = if needs_less {
                _mm512_cmplt_epu64_mask(lanes, chunk.value)
            } else {
                0
            };
            return truth.apply(u64::from(less), u64::from(equal)) & 0xff;
        }
        let mut less: u8 = 0;
        let mut equal: u8 = 0xff;
        for (index, chunk) in chunks.iter().enumerate() {
            let mut lanes = _mm512_and_si512(
                _mm512_permutex2var_epi8(low, chunk.control, high),
                chunk.mask,
            );
            if signed && index == 0 {
                lanes = _mm512_xor_si512(lanes, sign);
            }
            if needs_less {
                less |= equal & _mm512_cmplt_epu64_mask(lanes, chunk.value);
            }
            equal &= _mm512_cmpeq_epu64_mask(lanes, chunk.value);
        }
        truth.apply(u64::from(less), u64::from(equal)) & 0xff
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
        let chunks: Vec<PermuteChunk> = plan
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
                }
            })
            .collect();
        let step_bytes = 8 * width;
        let words = out.words_mut();
        // Words whose 8 steps all read 128 in-bounds bytes: no checks, no masks.
        let fast_words = (0..=count / 64)
            .take_while(|word| *word < count / 64 && (word * 64 + 56) * width + 128 <= data.len())
            .count();
        for (word_index, word) in words.iter_mut().enumerate().take(fast_words) {
            let mut bits = 0u64;
            for group in 0..8 {
                let base = (word_index * 64 + group * 8) * width;
                // SAFETY: base + 128 <= (word_index * 64 + 56) * width + 128 <= data.len().
                let (low, high) = unsafe {
                    let pointer = data.as_ptr().add(base);
                    (
                        _mm512_loadu_si512(pointer.cast()),
                        _mm512_loadu_si512(pointer.add(64).cast()),
                    )
                };
                bits |= permute_group(low, high, &chunks, plan.signed, needs_less, truth)
                    << (group * 8);
            }
            *word = bits;
        }
        for (word_index, word) in words.iter_mut().enumerate().skip(fast_words) {
            let mut bits = 0u64;
            for group in 0..8 {
                let first_key = word_index * 64 + group * 8;
                if first_key >= count {
                    break;
                }
                let base = first_key * width;
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
                let keys_here = (count - first_key).min(8);
                bits |= (permute_group(low, high, &chunks, plan.signed, needs_less, truth)
                    & low_bits(keys_here))
                    << (group * 8);
            }
            *word = bits;
        }
    }

    /// AVX2 gather path for keys of at least 8 bytes: 4 keys per step. Returns the number of
    /// keys filled (a multiple of 4).
    #[target_feature(enable = "avx2")]
    pub(super) fn fixed_avx2_gather(
        plan: &SegmentPlan,
        batch: &FixedBatch<'_>,
        combine: Combine,
        out: &mut Bitmap,
    ) -> usize {
        let width = batch.width();
        let data = batch.data();
        let full = batch.count() / 4 * 4;
        let needs_less = combine.needs_less();
        // SAFETY: BSWAP_64 is 32 readable bytes.
        let bswap = unsafe { _mm256_loadu_si256(BSWAP_64.as_ptr().cast()) };
        let w = width as i64;
        let lanes = _mm256_set_epi64x(3 * w, 2 * w, w, 0);
        let flip = _mm256_set1_epi64x(i64::MIN);
        let chunks: Vec<(__m256i, __m256i, __m256i, __m256i)> = plan
            .chunks
            .iter()
            .zip(windows(plan, width))
            .map(|(chunk, (at, shift))| {
                (
                    _mm256_add_epi64(lanes, _mm256_set1_epi64x(at as i64)),
                    _mm256_set1_epi64x(shift as i64),
                    _mm256_set1_epi64x(chunk.mask as i64),
                    // Values are compared signed after flipping the top bit (no unsigned
                    // 64-bit compare in AVX2).
                    _mm256_set1_epi64x((chunk.value ^ (1 << 63)) as i64),
                )
            })
            .collect();
        let truth = combine.truth();
        let groups = full / 4;
        let words = out.words_mut();
        for (word_index, slot) in words.iter_mut().enumerate().take(groups.div_ceil(16)) {
            let mut bits = 0u64;
            for group in word_index * 16..(word_index * 16 + 16).min(groups) {
                let base = _mm256_set1_epi64x((group * 4 * width) as i64);
                let mut less: u32 = 0;
                let mut equal: u32 = 0xf;
                for (index, (offsets, shift, mask, value)) in chunks.iter().enumerate() {
                    // SAFETY: lane i reads 8 bytes at (group * 4 + i) * width + at with
                    // at + 8 <= width, inside key (group * 4 + i) < count.
                    let loaded = unsafe {
                        _mm256_i64gather_epi64::<1>(
                            data.as_ptr().cast(),
                            _mm256_add_epi64(base, *offsets),
                        )
                    };
                    let mut word = _mm256_and_si256(
                        _mm256_sllv_epi64(_mm256_shuffle_epi8(loaded, bswap), *shift),
                        *mask,
                    );
                    // Unsigned order as signed order: flip the top bit (a second flip undoes
                    // the sign flip of 8-byte longs).
                    word = _mm256_xor_si256(word, flip);
                    if plan.signed && index == 0 {
                        word = _mm256_xor_si256(word, flip);
                    }
                    if needs_less {
                        let lower = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(
                            *value, word,
                        ))) as u32;
                        less |= equal & lower;
                    }
                    equal &=
                        _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(word, *value)))
                            as u32;
                }
                bits |=
                    (truth.apply(u64::from(less), u64::from(equal)) & 0xf) << ((group % 16) * 4);
            }
            *slot = bits;
        }
        full
    }
}
