//! Kernels: predicates evaluated over a whole [`Batch`] into a selection [`Bitmap`].
//!
//! Every kernel implements [`Kernel`]: `eval` runs the fastest path the CPU supports
//! (detected once at run time: AVX-512, AVX2, or the portable loop), `eval_with` runs a chosen
//! path, and `eval_scalar` is the scalar twin, a deliberately naive byte-by-byte
//! implementation written independently of the fast paths. The property tests check that
//! every path agrees with the twin on every input. Results follow the model's semantics:
//! [`MaskedCompare`] is exactly `RowMaskFilter`, [`ComparatorKernel`] is exactly HBase's
//! comparator under a compare filter.

mod segment;

use std::cmp::Ordering;
use std::sync::OnceLock;

use memchr::memmem;
use regex::bytes::Regex;

use crate::batch::{Batch, Bitmap};
use crate::compare::{bit_matches, compile_regex, contains_ignore_case};
use crate::model::{BitOp, Comparator, CompareOp, ModelError, RowMask};
use segment::{Combine, SegmentPlan};

/// An implementation level of the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Plain Rust: a per-key loop reading 8-byte big-endian words. Runs everywhere.
    Portable,
    /// x86-64 AVX2 (64-bit gathers, 4 keys per step).
    Avx2,
    /// x86-64 AVX-512 F + BW + VBMI (byte permutes or gathers, 8 keys per step).
    Avx512,
}

/// Environment variable that caps the ISA [`Isa::best`] picks (`portable`, `avx2`,
/// `avx512`), for measurements and for testing every path on one machine.
pub const ISA_ENV: &str = "STRATA_FILTERS_ISA";

impl Isa {
    /// True when this CPU can run the level.
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512vbmi")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Every level this CPU supports, lowest first.
    pub fn supported() -> Vec<Isa> {
        [Isa::Portable, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .filter(|isa| isa.is_supported())
            .collect()
    }

    /// The best supported level, capped by [`ISA_ENV`] when set (detected once).
    pub fn best() -> Isa {
        static BEST: OnceLock<Isa> = OnceLock::new();
        *BEST.get_or_init(|| {
            let cap = match std::env::var(ISA_ENV).ok().as_deref() {
                Some("portable") => Isa::Portable,
                Some("avx2") => Isa::Avx2,
                _ => Isa::Avx512,
            };
            Isa::supported()
                .into_iter()
                .filter(|isa| *isa <= cap)
                .max()
                .unwrap_or(Isa::Portable)
        })
    }
}

/// A predicate over batch entries.
pub trait Kernel {
    /// Runs the predicate with the given implementation level (unsupported levels fall back
    /// to the best supported lower one). `out` is resized to the batch length.
    fn eval_with(&self, isa: Isa, batch: &Batch<'_>, out: &mut Bitmap);

    /// The scalar twin: the reference every other path must agree with.
    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap);

    /// The predicate on one entry (scalar semantics).
    fn matches(&self, entry: &[u8]) -> bool;

    /// Runs the predicate with the best level this CPU supports.
    fn eval(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        self.eval_with(Isa::best(), batch, out);
    }

    /// Convenience: a fresh bitmap from [`Kernel::eval`].
    fn select(&self, batch: &Batch<'_>) -> Bitmap {
        let mut out = Bitmap::zeros(0);
        self.eval(batch, &mut out);
        out
    }
}

/// Fills `out` by testing entries one at a time.
fn per_entry(batch: &Batch<'_>, out: &mut Bitmap, mut test: impl FnMut(&[u8]) -> bool) {
    match batch {
        Batch::Fixed(fixed) => out.fill(fixed.count(), |index| test(fixed.get(index))),
        Batch::Var(var) => out.fill(var.count(), |index| test(var.get(index))),
    }
}

/// Runs a segment plan over any batch.
fn eval_segment(
    plan: &SegmentPlan,
    isa: Isa,
    batch: &Batch<'_>,
    combine: Combine,
    out: &mut Bitmap,
) {
    match batch {
        Batch::Fixed(fixed) => plan.eval_fixed(isa, fixed, combine, out),
        Batch::Var(var) => plan.eval_var(var, combine, out),
    }
}

/// Byte-by-byte lexicographic order of `(segment & mask)` against `value` (twin helper).
fn naive_masked_order(key: &[u8], offset: usize, mask: &[u8], value: &[u8]) -> Option<Ordering> {
    if key.len() < offset + mask.len() {
        return None;
    }
    for index in 0..mask.len() {
        let byte = key[offset + index] & mask[index];
        if byte < value[index] {
            return Some(Ordering::Less);
        }
        if byte > value[index] {
            return Some(Ordering::Greater);
        }
    }
    Some(Ordering::Equal)
}

/// Byte-by-byte lexicographic order of `key[offset..offset + value.len()]` against `value`
/// (twin helper).
fn naive_order(key: &[u8], offset: usize, value: &[u8]) -> Option<Ordering> {
    if key.len() < offset + value.len() {
        return None;
    }
    for index in 0..value.len() {
        if key[offset + index] != value[index] {
            return Some(key[offset + index].cmp(&value[index]));
        }
    }
    Some(Ordering::Equal)
}

/// Keys starting with a prefix (PrefixFilter's row test).
#[derive(Clone, Debug)]
pub struct PrefixKernel {
    prefix: Vec<u8>,
    plan: SegmentPlan,
}

impl PrefixKernel {
    /// Keys that start with `prefix`.
    pub fn new(prefix: &[u8]) -> Self {
        PrefixKernel {
            prefix: prefix.to_vec(),
            plan: SegmentPlan::new(0, &vec![0xff; prefix.len()], prefix, false),
        }
    }

    /// The prefix keys must start with.
    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }
}

impl Kernel for PrefixKernel {
    fn eval_with(&self, isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        match batch {
            Batch::Var(_) => per_entry(batch, out, |key| key.starts_with(&self.prefix)),
            Batch::Fixed(_) => eval_segment(&self.plan, isa, batch, Combine::EQUAL, out),
        }
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |key| self.matches(key));
    }

    fn matches(&self, key: &[u8]) -> bool {
        key.len() >= self.prefix.len() && (0..self.prefix.len()).all(|i| key[i] == self.prefix[i])
    }
}

/// `RowMaskFilter`: `(key[offset..offset + len] & mask) op value`, unsigned big-endian; keys
/// shorter than `offset + len` never match.
#[derive(Clone, Debug)]
pub struct MaskedCompare {
    mask: RowMask,
    plan: SegmentPlan,
}

impl MaskedCompare {
    /// Compiles a RowMaskFilter (validated: same-length non-empty mask and value, no NO_OP).
    pub fn new(mask: &RowMask) -> Result<Self, ModelError> {
        crate::model::Filter::RowMask(mask.clone()).validate()?;
        Ok(MaskedCompare {
            plan: SegmentPlan::new(mask.offset as usize, &mask.mask, &mask.value, false),
            mask: mask.clone(),
        })
    }

    /// The RowMaskFilter this kernel tests.
    pub fn row_mask(&self) -> &RowMask {
        &self.mask
    }
}

impl Kernel for MaskedCompare {
    fn eval_with(&self, isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        eval_segment(
            &self.plan,
            isa,
            batch,
            Combine {
                op: self.mask.op,
                tie: Ordering::Equal,
            },
            out,
        );
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |key| self.matches(key));
    }

    fn matches(&self, key: &[u8]) -> bool {
        naive_masked_order(
            key,
            self.mask.offset as usize,
            &self.mask.mask,
            &self.mask.value,
        )
        .is_some_and(|ordering| self.mask.op.holds(ordering))
    }
}

/// An AND of `RowMaskFilter`s with `=` (and `PrefixFilter`s, which are one with a full mask at
/// offset 0) fused into one segment test: the keys whose masked bytes equal the wanted bytes
/// at every place at once. Two 4-byte fields side by side (`code = C AND sdate = D`) become
/// one 8-byte comparison per key instead of two kernels and an AND of their bitmaps.
///
/// The parts' constraints are merged byte by byte: a byte two parts both mask must be wanted
/// alike by both, and a part that wants a bit its mask clears can never match; either way no
/// key matches. Keys shorter than any part's field never match.
#[derive(Clone, Debug)]
pub struct MaskedEquals {
    parts: Vec<RowMask>,
    /// `None` when the parts contradict each other.
    plan: Option<SegmentPlan>,
}

impl MaskedEquals {
    /// Fuses `parts` (each validated, each with the `=` operator).
    pub fn new(parts: &[RowMask]) -> Result<Self, ModelError> {
        for part in parts {
            crate::model::Filter::RowMask(part.clone()).validate()?;
            if part.op != CompareOp::Equal {
                return Err(ModelError::OperatorNotAllowed {
                    context: "MaskedEquals (only = fuses)",
                    op: part.op,
                });
            }
        }
        let start = parts.iter().map(|part| part.offset as usize).min();
        let end = parts
            .iter()
            .map(|part| part.offset as usize + part.mask.len())
            .max();
        let (Some(start), Some(end)) = (start, end) else {
            return Ok(MaskedEquals {
                parts: Vec::new(),
                plan: Some(SegmentPlan::new(0, &[], &[], false)),
            });
        };
        let mut mask = vec![0u8; end - start];
        let mut value = vec![0u8; end - start];
        let mut possible = true;
        for part in parts {
            let at = part.offset as usize - start;
            for (index, (part_mask, part_value)) in part.mask.iter().zip(&part.value).enumerate() {
                let (merged_mask, merged_value) = (&mut mask[at + index], &mut value[at + index]);
                let shared = *merged_mask & part_mask;
                possible &=
                    part_value & !part_mask == 0 && *merged_value & shared == part_value & shared;
                *merged_mask |= part_mask;
                *merged_value |= part_value & part_mask;
            }
        }
        Ok(MaskedEquals {
            parts: parts.to_vec(),
            plan: possible.then(|| SegmentPlan::new(start, &mask, &value, false)),
        })
    }

    /// The fused `RowMaskFilter`s.
    pub fn parts(&self) -> &[RowMask] {
        &self.parts
    }
}

impl Kernel for MaskedEquals {
    fn eval_with(&self, isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        match &self.plan {
            Some(plan) => eval_segment(plan, isa, batch, Combine::EQUAL, out),
            None => out.reset_zeros(batch.len()),
        }
    }

    /// The twin tests every part byte by byte, one key at a time.
    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |key| {
            self.parts.iter().all(|part| {
                naive_masked_order(key, part.offset as usize, &part.mask, &part.value)
                    == Some(Ordering::Equal)
            })
        });
    }

    /// One key through the fused segment (the engine asks this of single rows).
    fn matches(&self, key: &[u8]) -> bool {
        self.plan
            .as_ref()
            .is_some_and(|plan| plan.order(key) == Some(Ordering::Equal))
    }
}

/// One side of a [`SegmentRange`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentBound {
    /// The bound's bytes (its length is the segment length on that side).
    pub value: Vec<u8>,
    /// Whether the bound itself is in the range.
    pub inclusive: bool,
}

/// `lo < key[offset..offset + len] < hi` (each side optional, inclusive or not), unsigned
/// big-endian: the `D1 < sdate < D2` test on a fixed field. Keys shorter than a bound's
/// segment never match.
#[derive(Clone, Debug)]
pub struct SegmentRange {
    offset: usize,
    low: Option<SegmentBound>,
    high: Option<SegmentBound>,
    plans: Vec<(SegmentPlan, Combine)>,
}

impl SegmentRange {
    /// A range on the field at `offset`; at least one bound must be given.
    pub fn new(
        offset: usize,
        low: Option<SegmentBound>,
        high: Option<SegmentBound>,
    ) -> Result<Self, ModelError> {
        if low.as_ref().is_none_or(|b| b.value.is_empty())
            && high.as_ref().is_none_or(|b| b.value.is_empty())
        {
            return Err(ModelError::NoSegmentBound);
        }
        let mut plans = Vec::new();
        if let Some(bound) = &low {
            let op = if bound.inclusive {
                CompareOp::GreaterOrEqual
            } else {
                CompareOp::Greater
            };
            plans.push((
                SegmentPlan::new(offset, &vec![0xff; bound.value.len()], &bound.value, false),
                Combine {
                    op,
                    tie: Ordering::Equal,
                },
            ));
        }
        if let Some(bound) = &high {
            let op = if bound.inclusive {
                CompareOp::LessOrEqual
            } else {
                CompareOp::Less
            };
            plans.push((
                SegmentPlan::new(offset, &vec![0xff; bound.value.len()], &bound.value, false),
                Combine {
                    op,
                    tie: Ordering::Equal,
                },
            ));
        }
        Ok(SegmentRange {
            offset,
            low,
            high,
            plans,
        })
    }
}

impl Kernel for SegmentRange {
    fn eval_with(&self, isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        let mut side = Bitmap::zeros(0);
        for (index, (plan, combine)) in self.plans.iter().enumerate() {
            if index == 0 {
                eval_segment(plan, isa, batch, *combine, out);
            } else {
                eval_segment(plan, isa, batch, *combine, &mut side);
                out.and_assign(&side);
            }
        }
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |key| self.matches(key));
    }

    fn matches(&self, key: &[u8]) -> bool {
        let side = |bound: &SegmentBound, below: bool| {
            naive_order(key, self.offset, &bound.value).is_some_and(|ordering| match ordering {
                Ordering::Equal => bound.inclusive,
                Ordering::Less => below,
                Ordering::Greater => !below,
            })
        };
        self.low.as_ref().is_none_or(|bound| side(bound, false))
            && self.high.as_ref().is_none_or(|bound| side(bound, true))
    }
}

/// Whole-key comparison `key op value` (binary comparator), or with `prefix_mode` only the
/// key's first `value.len()` bytes (binaryprefix comparator).
#[derive(Clone, Debug)]
pub struct BinaryCompare {
    op: CompareOp,
    value: Vec<u8>,
    prefix_mode: bool,
    /// The value's bytes as a segment at offset 0: the comparison of fixed batches at least
    /// as wide as the value, compiled once (narrower batches compile theirs when they come).
    plan: SegmentPlan,
}

impl BinaryCompare {
    /// `key op value` over the whole key.
    pub fn new(op: CompareOp, value: &[u8]) -> Self {
        Self::with_mode(op, value, false)
    }

    /// `key[..value.len()] op value` (keys shorter than the value compare whole).
    pub fn prefix(op: CompareOp, value: &[u8]) -> Self {
        Self::with_mode(op, value, true)
    }

    fn with_mode(op: CompareOp, value: &[u8], prefix_mode: bool) -> Self {
        BinaryCompare {
            op,
            value: value.to_vec(),
            prefix_mode,
            plan: SegmentPlan::new(0, &vec![0xff; value.len()], value, false),
        }
    }

    fn head<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        if self.prefix_mode {
            &key[..key.len().min(self.value.len())]
        } else {
            key
        }
    }
}

/// Above this many compared bytes a fixed batch is compared entry by entry, first on its
/// leading 8 bytes as one big-endian word (almost always decisive for values such as scores or
/// timestamps), then whole: the segment plan compares every word of every entry, which for
/// 100-byte values cost more than the byte loop of the twin.
const WIDE_COMPARE_BYTES: usize = 16;

impl Kernel for BinaryCompare {
    fn eval_with(&self, isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        match batch {
            Batch::Fixed(fixed) if fixed.width().min(self.value.len()) > WIDE_COMPARE_BYTES => {
                let word = |bytes: &[u8]| {
                    bytes
                        .get(..8)
                        .and_then(|head| <[u8; 8]>::try_from(head).ok())
                        .map(u64::from_be_bytes)
                };
                let wanted = word(&self.value);
                out.fill(fixed.count(), |index| {
                    let key = self.head(fixed.get(index));
                    let ordering = match (word(key), wanted) {
                        (Some(have), Some(want)) if have != want => have.cmp(&want),
                        _ => key.cmp(&self.value),
                    };
                    self.op.holds(ordering)
                });
            }
            Batch::Fixed(fixed) => {
                let width = fixed.width();
                let tie = if self.prefix_mode && width >= self.value.len() {
                    Ordering::Equal
                } else {
                    width.cmp(&self.value.len())
                };
                let combine = Combine { op: self.op, tie };
                if width >= self.value.len() {
                    self.plan.eval_fixed(isa, fixed, combine, out);
                } else {
                    // Keys shorter than the value: their whole key against its head.
                    let head = &self.value[..width];
                    SegmentPlan::new(0, &vec![0xff; width], head, false)
                        .eval_fixed(isa, fixed, combine, out);
                }
            }
            Batch::Var(_) => per_entry(batch, out, |key| {
                self.op.holds(self.head(key).cmp(&self.value))
            }),
        }
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |key| self.matches(key));
    }

    fn matches(&self, key: &[u8]) -> bool {
        let head = self.head(key);
        let mut ordering = head.len().cmp(&self.value.len());
        for (byte, wanted) in head.iter().zip(&self.value) {
            if byte != wanted {
                ordering = byte.cmp(wanted);
                break;
            }
        }
        self.op.holds(ordering)
    }
}

/// `long:` comparator: entries of exactly 8 bytes read as big-endian `i64`, `entry op value`;
/// other lengths never match.
#[derive(Clone, Debug)]
pub struct LongCompare {
    op: CompareOp,
    value: i64,
    plan: SegmentPlan,
}

impl LongCompare {
    /// `entry op value` on 8-byte big-endian signed integers.
    pub fn new(op: CompareOp, value: i64) -> Self {
        LongCompare {
            op,
            value,
            plan: SegmentPlan::new(0, &[0xff; 8], &value.to_be_bytes(), true),
        }
    }
}

impl Kernel for LongCompare {
    fn eval_with(&self, isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        match batch {
            Batch::Fixed(fixed) if fixed.width() == 8 => self.plan.eval_fixed(
                isa,
                fixed,
                Combine {
                    op: self.op,
                    tie: Ordering::Equal,
                },
                out,
            ),
            Batch::Fixed(fixed) => out.reset_zeros(fixed.count()),
            Batch::Var(_) => per_entry(batch, out, |entry| match <[u8; 8]>::try_from(entry) {
                Ok(bytes) => self.op.holds(i64::from_be_bytes(bytes).cmp(&self.value)),
                Err(_) => false,
            }),
        }
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |entry| self.matches(entry));
    }

    fn matches(&self, entry: &[u8]) -> bool {
        if entry.len() != 8 {
            return false;
        }
        let mut number: i64 = 0;
        for byte in entry {
            number = (number << 8) | i64::from(*byte);
        }
        self.op.holds(number.cmp(&self.value))
    }
}

/// The outcome of a match-only comparator (substring, regexstring, bit, null) under an
/// operator: HBase's `compareTo` answers 0 for a match and 1 otherwise.
fn match_passes(op: CompareOp, matched: bool) -> bool {
    !op.filters_out(if matched {
        Ordering::Equal
    } else {
        Ordering::Greater
    })
}

/// `substring:` comparator under `=` / `!=`: case-insensitive containment (HBase lowercases
/// both sides). The fast path searches an ASCII-lowercased copy with `memchr::memmem`.
#[derive(Clone, Debug)]
pub struct SubstringKernel {
    op: CompareOp,
    needle: String,
    finder: memmem::Finder<'static>,
}

impl SubstringKernel {
    /// Entries containing `needle`, ignoring case (or not containing it for `!=`).
    pub fn new(op: CompareOp, needle: &str) -> Self {
        let needle = needle.to_lowercase();
        let finder = memmem::Finder::new(needle.as_bytes()).into_owned();
        SubstringKernel { op, needle, finder }
    }
}

impl Kernel for SubstringKernel {
    fn eval_with(&self, _isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        let mut lowered = Vec::new();
        per_entry(batch, out, |entry| {
            let matched = if entry.is_ascii() {
                lowered.clear();
                lowered.extend(entry.iter().map(u8::to_ascii_lowercase));
                self.finder.find(&lowered).is_some()
            } else {
                contains_ignore_case(entry, &self.needle)
            };
            match_passes(self.op, matched)
        });
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |entry| self.matches(entry));
    }

    fn matches(&self, entry: &[u8]) -> bool {
        let haystack = String::from_utf8_lossy(entry).to_lowercase();
        let (haystack, needle) = (haystack.as_bytes(), self.needle.as_bytes());
        let matched = needle.is_empty()
            || (0..haystack.len()).any(|start| haystack[start..].starts_with(needle));
        match_passes(self.op, matched)
    }
}

/// `regexstring:` comparator under `=` / `!=`: a match anywhere, `.` matching newlines. Both
/// paths use the `regex` crate (its own engine is the reference); the batch path reuses one
/// compiled automaton, the twin goes through `find`.
#[derive(Clone, Debug)]
pub struct RegexKernel {
    op: CompareOp,
    regex: Regex,
}

impl RegexKernel {
    /// Compiles the pattern as HBase's `RegexStringComparator` would (DOTALL).
    pub fn new(op: CompareOp, pattern: &str) -> Result<Self, ModelError> {
        Ok(RegexKernel {
            op,
            regex: compile_regex(pattern)?,
        })
    }
}

impl Kernel for RegexKernel {
    fn eval_with(&self, _isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |entry| {
            match_passes(self.op, self.regex.is_match(entry))
        });
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |entry| self.matches(entry));
    }

    fn matches(&self, entry: &[u8]) -> bool {
        match_passes(self.op, self.regex.find(entry).is_some())
    }
}

/// `bitand:` / `bitor:` / `bitxor:` comparators: entries of the operand's length with a
/// non-zero byte in `operand op entry`.
#[derive(Clone, Debug)]
pub struct BitKernel {
    op: CompareOp,
    bit_op: BitOp,
    operand: Vec<u8>,
}

impl BitKernel {
    /// HBase's `BitComparator` under `op`.
    pub fn new(op: CompareOp, bit_op: BitOp, operand: &[u8]) -> Self {
        BitKernel {
            op,
            bit_op,
            operand: operand.to_vec(),
        }
    }
}

impl Kernel for BitKernel {
    fn eval_with(&self, _isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |entry| {
            match_passes(self.op, bit_matches(self.bit_op, &self.operand, entry))
        });
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |entry| self.matches(entry));
    }

    fn matches(&self, entry: &[u8]) -> bool {
        let mut nonzero = false;
        if entry.len() == self.operand.len() {
            for (operand, byte) in self.operand.iter().zip(entry) {
                let combined = match self.bit_op {
                    BitOp::And => operand & byte,
                    BitOp::Or => operand | byte,
                    BitOp::Xor => operand ^ byte,
                };
                nonzero |= combined != 0;
            }
        }
        match_passes(self.op, nonzero)
    }
}

/// Any of HBase's comparators under a compare operator, as a kernel: passes exactly when
/// a compare filter (`RowFilter`, `ValueFilter`, ...) with that operator and comparator would
/// let the entry through.
#[derive(Clone, Debug)]
pub enum ComparatorKernel {
    /// binary and binaryprefix.
    Binary(BinaryCompare),
    /// long.
    Long(LongCompare),
    /// substring.
    Substring(Box<SubstringKernel>),
    /// regexstring.
    Regex(Box<RegexKernel>),
    /// bitand, bitor, bitxor.
    Bit(BitKernel),
    /// A constant answer (null comparator, NO_OP).
    Constant(bool),
}

impl ComparatorKernel {
    /// Compiles `op` and `comparator` (validated together).
    pub fn new(op: CompareOp, comparator: &Comparator) -> Result<Self, ModelError> {
        crate::model::validate_comparison(op, comparator)?;
        if op == CompareOp::NoOp {
            return Ok(ComparatorKernel::Constant(false));
        }
        Ok(match comparator {
            Comparator::Binary(value) => ComparatorKernel::Binary(BinaryCompare::new(op, value)),
            Comparator::BinaryPrefix(value) => {
                ComparatorKernel::Binary(BinaryCompare::prefix(op, value))
            }
            Comparator::Long(value) => ComparatorKernel::Long(LongCompare::new(op, *value)),
            Comparator::Substring(needle) => {
                ComparatorKernel::Substring(Box::new(SubstringKernel::new(op, needle)))
            }
            Comparator::RegexString(pattern) => {
                ComparatorKernel::Regex(Box::new(RegexKernel::new(op, pattern)?))
            }
            Comparator::Bit(bit_op, operand) => {
                ComparatorKernel::Bit(BitKernel::new(op, *bit_op, operand))
            }
            Comparator::Null => ComparatorKernel::Constant(match_passes(op, false)),
        })
    }

    fn inner(&self) -> Option<&dyn Kernel> {
        match self {
            ComparatorKernel::Binary(kernel) => Some(kernel),
            ComparatorKernel::Long(kernel) => Some(kernel),
            ComparatorKernel::Substring(kernel) => Some(kernel.as_ref()),
            ComparatorKernel::Regex(kernel) => Some(kernel.as_ref()),
            ComparatorKernel::Bit(kernel) => Some(kernel),
            ComparatorKernel::Constant(_) => None,
        }
    }
}

impl Kernel for ComparatorKernel {
    fn eval_with(&self, isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        match (self.inner(), self) {
            (Some(kernel), _) => kernel.eval_with(isa, batch, out),
            (None, ComparatorKernel::Constant(true)) => *out = Bitmap::ones(batch.len()),
            (None, _) => out.reset_zeros(batch.len()),
        }
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        match self.inner() {
            Some(kernel) => kernel.eval_scalar(batch, out),
            None => per_entry(batch, out, |entry| self.matches(entry)),
        }
    }

    fn matches(&self, entry: &[u8]) -> bool {
        match (self.inner(), self) {
            (Some(kernel), _) => kernel.matches(entry),
            (None, ComparatorKernel::Constant(answer)) => *answer,
            (None, _) => false,
        }
    }
}

/// Keys starting with `prefix` (see [`PrefixKernel`]).
pub fn prefix(batch: &Batch<'_>, prefix: &[u8]) -> Bitmap {
    PrefixKernel::new(prefix).select(batch)
}

/// `RowMaskFilter`'s test over a batch (see [`MaskedCompare`]).
pub fn masked_compare(batch: &Batch<'_>, mask: &RowMask) -> Result<Bitmap, ModelError> {
    Ok(MaskedCompare::new(mask)?.select(batch))
}

/// A big-endian range test on a key field (see [`SegmentRange`]).
pub fn segment_range(
    batch: &Batch<'_>,
    offset: usize,
    low: Option<SegmentBound>,
    high: Option<SegmentBound>,
) -> Result<Bitmap, ModelError> {
    Ok(SegmentRange::new(offset, low, high)?.select(batch))
}

/// `entry op value`, lexicographic (see [`BinaryCompare`]).
pub fn binary_compare(batch: &Batch<'_>, op: CompareOp, value: &[u8]) -> Bitmap {
    BinaryCompare::new(op, value).select(batch)
}

/// Case-insensitive containment, HBase's substring comparator under `op` (see
/// [`SubstringKernel`]).
pub fn substring(batch: &Batch<'_>, op: CompareOp, needle: &str) -> Bitmap {
    SubstringKernel::new(op, needle).select(batch)
}

/// HBase's regexstring comparator under `op` (see [`RegexKernel`]).
pub fn regex(batch: &Batch<'_>, op: CompareOp, pattern: &str) -> Result<Bitmap, ModelError> {
    Ok(RegexKernel::new(op, pattern)?.select(batch))
}

/// `entry op value` on 8-byte big-endian signed integers (see [`LongCompare`]).
pub fn long_compare(batch: &Batch<'_>, op: CompareOp, value: i64) -> Bitmap {
    LongCompare::new(op, value).select(batch)
}

/// `TimestampsFilter`'s test over a column of timestamps: the cells whose timestamp is one of
/// `wanted`. A short list (up to [`TimestampsKernel::SHORT`], the usual case) is tested by
/// comparing each timestamp with every wanted one and OR-ing the results, a branch-free loop
/// over 64 timestamps at a time that the compiler vectorizes; a longer one by binary search.
#[derive(Clone, Debug)]
pub struct TimestampsKernel {
    /// Sorted, deduplicated.
    wanted: Vec<i64>,
}

impl TimestampsKernel {
    /// Lists up to this long are tested by comparison with every entry.
    pub const SHORT: usize = 16;

    /// The kernel for the timestamps `wanted` (any order, duplicates allowed).
    pub fn new(wanted: &[i64]) -> Self {
        let mut wanted = wanted.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        TimestampsKernel { wanted }
    }

    /// One bit per timestamp of `timestamps` into `out` (resized to their count).
    pub fn eval(&self, timestamps: &[i64], out: &mut Bitmap) {
        if self.wanted.len() > Self::SHORT {
            out.fill(timestamps.len(), |index| {
                timestamps
                    .get(index)
                    .is_some_and(|ts| self.wanted.binary_search(ts).is_ok())
            });
            return;
        }
        out.reset_zeros(timestamps.len());
        for (chunk_index, chunk) in timestamps.chunks(64).enumerate() {
            // One pass over the chunk per wanted timestamp: each pass is a compare and a
            // mask of 64 lanes, which the compiler turns into vector compares.
            let mut word = 0u64;
            for wanted in &self.wanted {
                for (bit, ts) in chunk.iter().enumerate() {
                    word |= u64::from(ts == wanted) << bit;
                }
            }
            if let Some(slot) = out.words_mut().get_mut(chunk_index) {
                *slot = word;
            }
        }
    }

    /// The scalar twin: each timestamp looked up in the list, one at a time.
    pub fn eval_scalar(&self, timestamps: &[i64], out: &mut Bitmap) {
        *out = Bitmap::from_bools(
            timestamps
                .iter()
                .map(|ts| self.wanted.iter().any(|wanted| wanted == ts)),
        );
    }

    /// The test on one timestamp.
    pub fn matches(&self, timestamp: i64) -> bool {
        self.wanted.binary_search(&timestamp).is_ok()
    }
}

/// `FuzzyRowFilter`'s row test: keys matching any rule (a key shorter than a rule is tested
/// on its own length, as in HBase). Fixed-width batches run one masked equality per rule.
#[derive(Clone, Debug)]
pub struct FuzzyKernel {
    rules: crate::fuzzy::FuzzySet,
}

impl FuzzyKernel {
    /// Compiles the rules (validated: masks of 0/1 bytes as long as their keys).
    pub fn new(rules: &[crate::model::FuzzyRule]) -> Result<Self, ModelError> {
        crate::model::Filter::FuzzyRow {
            rules: rules.to_vec(),
        }
        .validate()?;
        Ok(FuzzyKernel {
            rules: crate::fuzzy::FuzzySet::new(rules),
        })
    }
}

impl Kernel for FuzzyKernel {
    fn eval_with(&self, isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        let Batch::Fixed(fixed) = batch else {
            per_entry(batch, out, |key| self.rules.satisfies(key));
            return;
        };
        out.reset_zeros(fixed.count());
        let mut rule_hits = Bitmap::zeros(0);
        for matcher in &self.rules.matchers {
            let tested = fixed.width().min(matcher.key().len());
            let mask: Vec<u8> = matcher.fixed()[..tested]
                .iter()
                .map(|f| if *f { 0xff } else { 0 })
                .collect();
            let value: Vec<u8> = matcher.key()[..tested]
                .iter()
                .zip(&mask)
                .map(|(k, m)| k & m)
                .collect();
            let plan = SegmentPlan::new(0, &mask, &value, false);
            plan.eval_fixed(isa, fixed, Combine::EQUAL, &mut rule_hits);
            out.or_assign(&rule_hits);
        }
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |key| self.matches(key));
    }

    fn matches(&self, key: &[u8]) -> bool {
        self.rules.matchers.iter().any(|matcher| {
            (0..key.len().min(matcher.key().len()))
                .all(|i| !matcher.fixed()[i] || key[i] == matcher.key()[i])
        })
    }
}

/// Keys inside a set of key ranges (MultiRowRangeFilter, InclusiveStopFilter, scan bounds).
#[derive(Clone, Debug)]
pub struct RangesKernel {
    ranges: crate::ranges::KeyRanges,
    sides: Vec<(Option<BinaryCompare>, Option<BinaryCompare>)>,
}

impl RangesKernel {
    /// Keys in `ranges`.
    pub fn new(ranges: crate::ranges::KeyRanges) -> Self {
        use std::ops::Bound;
        let sides = ranges
            .intervals()
            .iter()
            .map(|interval| {
                let low = match &interval.start {
                    Bound::Unbounded => None,
                    Bound::Included(key) => {
                        Some(BinaryCompare::new(CompareOp::GreaterOrEqual, key))
                    }
                    Bound::Excluded(key) => Some(BinaryCompare::new(CompareOp::Greater, key)),
                };
                let high = match &interval.end {
                    Bound::Unbounded => None,
                    Bound::Included(key) => Some(BinaryCompare::new(CompareOp::LessOrEqual, key)),
                    Bound::Excluded(key) => Some(BinaryCompare::new(CompareOp::Less, key)),
                };
                (low, high)
            })
            .collect();
        RangesKernel { ranges, sides }
    }
}

impl Kernel for RangesKernel {
    fn eval_with(&self, isa: Isa, batch: &Batch<'_>, out: &mut Bitmap) {
        out.reset_zeros(batch.len());
        let mut side = Bitmap::zeros(0);
        for (low, high) in &self.sides {
            let mut interval = Bitmap::ones(batch.len());
            for kernel in [low, high].into_iter().flatten() {
                kernel.eval_with(isa, batch, &mut side);
                interval.and_assign(&side);
            }
            out.or_assign(&interval);
        }
    }

    fn eval_scalar(&self, batch: &Batch<'_>, out: &mut Bitmap) {
        per_entry(batch, out, |key| self.matches(key));
    }

    fn matches(&self, key: &[u8]) -> bool {
        self.ranges
            .intervals()
            .iter()
            .any(|interval| interval.contains(key))
    }
}
