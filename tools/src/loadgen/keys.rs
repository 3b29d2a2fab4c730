//! Row keys: record numbers to keys by pattern, records chosen by
//! distribution, and the split keys that pre-split a table for a pattern.

use rand::RngExt;
use rand::rngs::SmallRng;
use rand_distr::{Distribution as _, Zipf};

use super::spec::{Distribution, KeyPattern, SpecError};

/// The shortest key the patterns accept: room for a 16-digit hash or a
/// salt and a 10-digit record number.
pub const MIN_KEY_BYTES: usize = 16;

/// Row keys of `key_bytes` bytes (printable, so the shell shows them) by
/// a pattern.
#[derive(Debug, Clone, Copy)]
pub struct KeySpace {
    pattern: KeyPattern,
    key_bytes: usize,
}

/// A 64-bit mix (splitmix64's finalizer): a bijection, so hashed keys of
/// different records never collide.
pub fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl KeySpace {
    /// Keys of `key_bytes` bytes (at least [`MIN_KEY_BYTES`], at most
    /// 1024) by `pattern`.
    pub fn new(pattern: KeyPattern, key_bytes: usize) -> Result<KeySpace, SpecError> {
        if !(MIN_KEY_BYTES..=1024).contains(&key_bytes) {
            return Err(SpecError(format!(
                "--key-size {key_bytes}: must be in {MIN_KEY_BYTES}..=1024"
            )));
        }
        Ok(KeySpace { pattern, key_bytes })
    }

    fn salt_digits(buckets: u32) -> usize {
        (buckets - 1).to_string().len()
    }

    /// Writes the key of `record` into `out` (replacing it).
    pub fn write_key(&self, record: u64, out: &mut Vec<u8>) {
        use std::io::Write;
        out.clear();
        // Writes into a Vec cannot fail.
        let _ = match self.pattern {
            KeyPattern::Sequential => {
                write!(out, "{record:0width$}", width = self.key_bytes.min(20))
            }
            KeyPattern::Hashed => write!(out, "{:016x}{record}", mix64(record)),
            KeyPattern::Salted { buckets } => {
                let salt = Self::salt_digits(buckets);
                write!(
                    out,
                    "{:0salt$}{record:0width$}",
                    record % u64::from(buckets),
                    width = (self.key_bytes - salt).min(20)
                )
            }
        };
        // Pad (or cut a hashed key's record suffix) to the key size; the
        // padding is the same for every key, so it does not change order.
        out.resize(self.key_bytes, b'0');
    }

    /// Split keys that cut the table into `regions` regions for this
    /// pattern: evenly over the first `records` records (sequential), over
    /// the hash space (hashed), or at bucket boundaries (salted, at most
    /// one region per bucket).
    pub fn split_keys(&self, regions: usize, records: u64) -> Result<Vec<Vec<u8>>, SpecError> {
        if regions == 0 || regions > 4096 {
            return Err(SpecError(format!(
                "--regions {regions}: must be in 1..=4096"
            )));
        }
        let n = regions as u64;
        let keys = match self.pattern {
            KeyPattern::Sequential => (1..n)
                .map(|i| {
                    let mut k = Vec::new();
                    self.write_key((records as u128 * i as u128 / n as u128) as u64, &mut k);
                    k
                })
                .collect(),
            KeyPattern::Hashed => (1..n)
                .map(|i| {
                    let at = ((u128::from(u64::MAX) + 1) * i as u128 / n as u128) as u64;
                    format!("{at:016x}").into_bytes()
                })
                .collect(),
            KeyPattern::Salted { buckets } => {
                if n > u64::from(buckets) {
                    return Err(SpecError(format!(
                        "--regions {regions}: more regions than salt buckets ({buckets})"
                    )));
                }
                let salt = Self::salt_digits(buckets);
                (1..n)
                    .map(|i| format!("{:0salt$}", u64::from(buckets) * i / n).into_bytes())
                    .collect()
            }
        };
        let mut keys: Vec<Vec<u8>> = keys;
        keys.dedup();
        Ok(keys)
    }
}

/// Chooses existing records by a distribution.
#[derive(Debug, Clone, Copy)]
pub struct Chooser {
    distribution: Distribution,
}

impl Chooser {
    /// A chooser by `distribution`.
    pub fn new(distribution: Distribution) -> Self {
        Chooser { distribution }
    }

    /// A record in `0..count` (`count` > 0: the records that exist now).
    pub fn pick(&self, count: u64, rng: &mut SmallRng) -> u64 {
        let count = count.max(1);
        let zipf_rank = |rng: &mut SmallRng, theta: f64| -> u64 {
            // Ranks 1..=count, rank 1 the most likely.
            match Zipf::new(count as f64, theta) {
                Ok(z) => (z.sample(rng) as u64).clamp(1, count),
                Err(_) => 1,
            }
        };
        match self.distribution {
            Distribution::Uniform => rng.random_range(0..count),
            Distribution::Zipfian { theta } => {
                // Scrambled, as YCSB does: the hot records are spread over
                // the key space rather than packed at its start.
                mix64(zipf_rank(rng, theta)) % count
            }
            Distribution::Latest => count - zipf_rank(rng, 0.99),
            Distribution::Hotspot { fraction, ops } => {
                let hot = ((count as f64 * fraction) as u64).clamp(1, count);
                if rng.random::<f64>() < ops || hot == count {
                    rng.random_range(0..hot)
                } else {
                    rng.random_range(hot..count)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn key(space: &KeySpace, record: u64) -> String {
        let mut k = Vec::new();
        space.write_key(record, &mut k);
        String::from_utf8(k).unwrap()
    }

    #[test]
    fn patterns_make_fixed_size_keys_in_the_expected_order() {
        let seq = KeySpace::new(KeyPattern::Sequential, 16).unwrap();
        assert_eq!(key(&seq, 42), "0000000000000042");
        assert!(key(&seq, 9) < key(&seq, 10));
        let salted = KeySpace::new(KeyPattern::Salted { buckets: 16 }, 16).unwrap();
        assert_eq!(key(&salted, 17), "0100000000000017");
        let hashed = KeySpace::new(KeyPattern::Hashed, 20).unwrap();
        assert_eq!(key(&hashed, 5).len(), 20);
        assert_ne!(key(&hashed, 5), key(&hashed, 6));
        assert!(KeySpace::new(KeyPattern::Hashed, 8).is_err());
    }

    #[test]
    fn split_keys_put_each_patterns_keys_where_expected() {
        let salted = KeySpace::new(KeyPattern::Salted { buckets: 16 }, 16).unwrap();
        let splits = salted.split_keys(4, 1000).unwrap();
        assert_eq!(splits, vec![b"04".to_vec(), b"08".to_vec(), b"12".to_vec()]);
        assert!(salted.split_keys(17, 1000).is_err());
        // Every region of a 16-bucket table split 16 ways gets 1/16 of the
        // records.
        let splits = salted.split_keys(16, 1000).unwrap();
        let mut per_region = [0u32; 16];
        for r in 0..16_000u64 {
            let mut k = Vec::new();
            salted.write_key(r, &mut k);
            per_region[splits.partition_point(|s| s.as_slice() <= k.as_slice())] += 1;
        }
        assert!(per_region.iter().all(|&n| n == 1000), "{per_region:?}");
        let seq = KeySpace::new(KeyPattern::Sequential, 16).unwrap();
        assert_eq!(
            seq.split_keys(2, 1000).unwrap(),
            vec![b"0000000000000500".to_vec()]
        );
        let hashed = KeySpace::new(KeyPattern::Hashed, 16).unwrap();
        assert_eq!(
            hashed.split_keys(2, 0).unwrap(),
            vec![b"8000000000000000".to_vec()]
        );
    }

    #[test]
    fn choosers_stay_in_range_and_skew_as_named() {
        let mut rng = SmallRng::seed_from_u64(3);
        for d in [
            Distribution::Uniform,
            Distribution::Zipfian { theta: 0.99 },
            Distribution::Latest,
            Distribution::Hotspot {
                fraction: 0.2,
                ops: 0.8,
            },
        ] {
            let c = Chooser::new(d);
            for count in [1u64, 2, 1000] {
                for _ in 0..2000 {
                    assert!(c.pick(count, &mut rng) < count, "{d:?}");
                }
            }
        }
        let latest = Chooser::new(Distribution::Latest);
        let recent = (0..10_000)
            .filter(|_| latest.pick(1_000_000, &mut rng) >= 999_000)
            .count();
        // Uniform choice would put 1% there; zipfian(0.99) about half.
        assert!(recent > 4_000, "latest favours new records: {recent}");
        let hot = Chooser::new(Distribution::Hotspot {
            fraction: 0.1,
            ops: 0.9,
        });
        let in_hot = (0..10_000)
            .filter(|_| hot.pick(1000, &mut rng) < 100)
            .count();
        assert!((8_800..9_200).contains(&in_hot), "{in_hot}");
    }
}
