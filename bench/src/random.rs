//! The random numbers that choose keys and values: a seeded generator per
//! thread and workload, and the mixing function YCSB's hashed keys use.
//! Deterministic for a given `--seed`, so every engine sees the same keys.

/// SplitMix64: a small, fast generator that passes BigCrush. Good enough to
/// pick keys; not for anything secret.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// A generator for one thread of one workload, derived from the run seed.
    pub fn for_thread(seed: u64, stream: &str, thread: usize) -> Rng {
        let mut state = seed ^ 0x5bd1_e995_u64.wrapping_mul(thread as u64 + 1);
        for byte in stream.bytes() {
            state = mix64(state ^ u64::from(byte));
        }
        Rng::new(mix64(state))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.state)
    }

    /// A uniform integer in `0..bound` (`bound` > 0), by Lemire's
    /// multiply-shift (the bias is below 2^-32 for the bounds used here).
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// A uniform float in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// SplitMix64's finalizer: a bijection on `u64` that scatters its input.
/// YCSB keys are `key(mix64(record index))` (YCSB's "hashed" insert order).
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
