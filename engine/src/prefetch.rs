//! Software prefetch hints.
//!
//! A point read over a large cache touches memory no CPU cache holds: the
//! bloom line of every candidate file, then the row keys a block's binary
//! search probes. Each of those waits for DRAM (about 100 ns), and when the
//! next address depends on the last load they wait one after another. A
//! prefetch names the lines a read is about to touch so their loads overlap.
//! Hints only: they never change a result and never fault, whatever the
//! address; off x86-64 they do nothing.

/// Bytes per cache line on the CPUs strata targets.
pub(crate) const CACHE_LINE_BYTES: usize = 64;

/// Starts loading the cache line holding `ptr` into every cache level.
#[inline(always)]
pub(crate) fn line(ptr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: SSE is part of the x86-64 baseline, so the instruction
        // exists on every CPU this code runs on; a prefetch reads no memory
        // the program can observe and cannot fault, even for an address
        // outside any mapping.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// Starts loading every cache line of `items`, at most `max_lines` of them
/// (the first ones).
#[inline]
pub(crate) fn lines<T>(items: &[T], max_lines: usize) {
    let base = items.as_ptr().cast::<u8>();
    // The first line may start before `base`: step from its line boundary.
    let misalignment = base as usize % CACHE_LINE_BYTES;
    let span = std::mem::size_of_val(items) + misalignment;
    let count = span.div_ceil(CACHE_LINE_BYTES).min(max_lines);
    for i in 0..count {
        line(
            base.wrapping_add(i * CACHE_LINE_BYTES)
                .wrapping_sub(misalignment),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_accept_any_slice() {
        // Nothing to observe but that they run: empty, unaligned, huge.
        lines::<u8>(&[], 8);
        lines(&[1u32, 2, 3], 8);
        let data = vec![7u8; 10_000];
        lines(&data[3..], 4);
        lines(&data, usize::MAX);
        line(std::ptr::null());
        assert_eq!(data[9_999], 7);
    }
}
