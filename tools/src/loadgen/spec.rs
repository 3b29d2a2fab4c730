//! What a load run does, parsed and checked: rates and phases, the
//! operation mix, key distributions and patterns. Every bad value is a
//! [`SpecError`] naming the option, never a panic.

use std::fmt;
use std::time::Duration;

/// A bad option value: the option and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

fn bad(option: &str, value: &str, why: impl fmt::Display) -> SpecError {
    SpecError(format!("{option} {value:?}: {why}"))
}

/// The target rate of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum RateSpec {
    /// Closed loop: every worker issues its next operation as soon as the
    /// last one finishes. Reported as such; latency is service time only.
    Max,
    /// Open loop at these rates (operations per second, whole process),
    /// one step after the other; one element for a fixed rate.
    Steps(Vec<f64>),
}

/// Parses a count with an optional `k` or `m` suffix (`50k`, `1.5m`).
pub fn parse_count(option: &str, text: &str) -> Result<f64, SpecError> {
    let t = text.trim();
    let (digits, scale) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        _ => (t, 1.0),
    };
    let n: f64 = digits
        .parse()
        .map_err(|_| bad(option, text, "not a number (examples: 5000, 50k, 1.5m)"))?;
    if !n.is_finite() || n <= 0.0 {
        return Err(bad(option, text, "must be above zero"));
    }
    Ok(n * scale)
}

/// Parses `--rate`: `max`, a rate (`50000`, `50k`), or a ramp `FROM..TO`
/// stepped by `step` (required with a ramp).
pub fn parse_rate(text: &str, step: Option<&str>) -> Result<RateSpec, SpecError> {
    if text.eq_ignore_ascii_case("max") {
        if step.is_some() {
            return Err(bad(
                "--step",
                step.unwrap_or_default(),
                "needs a ramp --rate FROM..TO",
            ));
        }
        return Ok(RateSpec::Max);
    }
    if let Some((from, to)) = text.split_once("..") {
        let from = parse_count("--rate", from)?;
        let to = parse_count("--rate", to)?;
        let Some(step_text) = step else {
            return Err(bad(
                "--rate",
                text,
                "a ramp needs --step (for example --step 10k)",
            ));
        };
        let step = parse_count("--step", step_text)?;
        if to < from {
            return Err(bad(
                "--rate",
                text,
                "a ramp goes up: FROM must not exceed TO",
            ));
        }
        let count = ((to - from) / step).floor() as usize + 1;
        if count > 1000 {
            return Err(bad(
                "--step",
                step_text,
                format!("makes {count} steps; at most 1000"),
            ));
        }
        return Ok(RateSpec::Steps(
            (0..count).map(|i| from + step * i as f64).collect(),
        ));
    }
    if step.is_some() {
        return Err(bad(
            "--step",
            step.unwrap_or_default(),
            "needs a ramp --rate FROM..TO",
        ));
    }
    Ok(RateSpec::Steps(vec![parse_count("--rate", text)?]))
}

/// Parses a duration: `30`, `30s`, `500ms`, `2m`, `1h` (plain numbers are
/// seconds).
pub fn parse_duration(option: &str, text: &str) -> Result<Duration, SpecError> {
    let t = text.trim();
    let (digits, unit) = if let Some(d) = t.strip_suffix("ms") {
        (d, 1e-3)
    } else if let Some(d) = t.strip_suffix("us") {
        (d, 1e-6)
    } else if let Some(d) = t.strip_suffix('s') {
        (d, 1.0)
    } else if let Some(d) = t.strip_suffix('m') {
        (d, 60.0)
    } else if let Some(d) = t.strip_suffix('h') {
        (d, 3600.0)
    } else {
        (t, 1.0)
    };
    let n: f64 = digits.parse().map_err(|_| {
        bad(
            option,
            text,
            "not a duration (examples: 30, 30s, 500ms, 2m)",
        )
    })?;
    if !n.is_finite() || n < 0.0 || n * unit > 1e7 {
        return Err(bad(option, text, "out of range"));
    }
    Ok(Duration::from_secs_f64(n * unit))
}

/// An operation of the mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpKind {
    /// Get one existing row.
    Get,
    /// Insert a new row (the next record; with `sequential` keys, the
    /// table's end).
    Put,
    /// Overwrite an existing row.
    Update,
    /// Scan `--scan-length` rows from an existing row.
    Scan,
    /// Increment a counter column of an existing row.
    Increment,
    /// Delete an existing row.
    Delete,
    /// Get `--batch` existing rows in one call.
    GetMany,
    /// Check an existing row's value and put when it matches.
    CheckAndMutate,
}

impl OpKind {
    /// Every kind, in report order.
    pub const ALL: [OpKind; 8] = [
        OpKind::Get,
        OpKind::Put,
        OpKind::Update,
        OpKind::Scan,
        OpKind::Increment,
        OpKind::Delete,
        OpKind::GetMany,
        OpKind::CheckAndMutate,
    ];

    /// The name `--mix` uses.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Get => "get",
            OpKind::Put => "put",
            OpKind::Update => "update",
            OpKind::Scan => "scan",
            OpKind::Increment => "increment",
            OpKind::Delete => "delete",
            OpKind::GetMany => "get_many",
            OpKind::CheckAndMutate => "check_and_mutate",
        }
    }

    /// Whether the operation writes.
    pub fn writes(self) -> bool {
        !matches!(self, OpKind::Get | OpKind::Scan | OpKind::GetMany)
    }
}

/// The operation mix: cumulative weights for drawing an operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    /// (kind, share); the shares sum to 1.
    pub parts: Vec<(OpKind, f64)>,
}

impl Mix {
    /// Parses `get=0.5,put=0.45,scan=0.05`; the shares must sum to 1
    /// (within 0.001).
    pub fn parse(text: &str) -> Result<Mix, SpecError> {
        let mut parts: Vec<(OpKind, f64)> = Vec::new();
        for item in text.split(',').filter(|s| !s.trim().is_empty()) {
            let (name, share) = item
                .split_once('=')
                .ok_or_else(|| bad("--mix", text, format!("{item:?} is not NAME=SHARE")))?;
            let kind = OpKind::ALL
                .into_iter()
                .find(|k| k.name() == name.trim())
                .ok_or_else(|| {
                    let names: Vec<&str> = OpKind::ALL.iter().map(|k| k.name()).collect();
                    bad(
                        "--mix",
                        text,
                        format!("unknown operation {name:?}; one of {}", names.join(", ")),
                    )
                })?;
            let share: f64 = share
                .trim()
                .parse()
                .map_err(|_| bad("--mix", text, format!("share {share:?} is not a number")))?;
            if !(0.0..=1.0).contains(&share) {
                return Err(bad("--mix", text, format!("share {share} is outside 0..1")));
            }
            if parts.iter().any(|(k, _)| *k == kind) {
                return Err(bad("--mix", text, format!("{} appears twice", kind.name())));
            }
            if share > 0.0 {
                parts.push((kind, share));
            }
        }
        let sum: f64 = parts.iter().map(|(_, s)| s).sum();
        if (sum - 1.0).abs() > 1e-3 {
            return Err(bad("--mix", text, format!("shares sum to {sum}, not 1")));
        }
        Ok(Mix { parts })
    }

    /// The operation for a uniform draw `u` in [0, 1).
    pub fn pick(&self, u: f64) -> OpKind {
        let mut acc = 0.0;
        for (kind, share) in &self.parts {
            acc += share;
            if u < acc {
                return *kind;
            }
        }
        self.parts.last().map_or(OpKind::Get, |(k, _)| *k)
    }

    /// Whether any operation reads existing records.
    pub fn reads_existing(&self) -> bool {
        self.parts.iter().any(|(k, _)| *k != OpKind::Put)
    }
}

/// How operations on existing records choose the record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distribution {
    /// Every record equally likely.
    Uniform,
    /// Zipfian over the records with exponent `theta` (YCSB's default
    /// 0.99), ranks scattered over the key space as YCSB's scrambled
    /// zipfian does.
    Zipfian {
        /// The exponent (> 0).
        theta: f64,
    },
    /// Zipfian over recency: the newest records are the hottest.
    Latest,
    /// `ops` of the operations go to the first `fraction` of the records
    /// (in record order), the rest to the others.
    Hotspot {
        /// Share of the records that is hot.
        fraction: f64,
        /// Share of the operations that goes to them.
        ops: f64,
    },
}

impl Distribution {
    /// Parses `uniform`, `zipfian[:THETA]`, `latest`, `hotspot[:FRACTION:OPS]`.
    pub fn parse(text: &str) -> Result<Distribution, SpecError> {
        let mut parts = text.split(':');
        let name = parts.next().unwrap_or_default();
        let numbers: Vec<&str> = parts.collect();
        let number = |s: &str| -> Result<f64, SpecError> {
            s.parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .ok_or_else(|| bad("--distribution", text, format!("{s:?} is not a number")))
        };
        match (name, numbers.as_slice()) {
            ("uniform", []) => Ok(Distribution::Uniform),
            ("latest", []) => Ok(Distribution::Latest),
            ("zipfian", []) => Ok(Distribution::Zipfian { theta: 0.99 }),
            ("zipfian", [t]) => {
                let theta = number(t)?;
                if theta <= 0.0 || theta > 10.0 {
                    return Err(bad("--distribution", text, "THETA must be in (0, 10]"));
                }
                Ok(Distribution::Zipfian { theta })
            }
            ("hotspot", []) => Ok(Distribution::Hotspot {
                fraction: 0.2,
                ops: 0.8,
            }),
            ("hotspot", [f, o]) => {
                let (fraction, ops) = (number(f)?, number(o)?);
                if !(fraction > 0.0 && fraction < 1.0 && (0.0..=1.0).contains(&ops)) {
                    return Err(bad(
                        "--distribution",
                        text,
                        "FRACTION must be in (0, 1) and OPS in [0, 1]",
                    ));
                }
                Ok(Distribution::Hotspot { fraction, ops })
            }
            _ => Err(bad(
                "--distribution",
                text,
                "one of uniform, zipfian[:THETA], latest, hotspot[:FRACTION:OPS]",
            )),
        }
    }
}

/// How a record number becomes a row key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyPattern {
    /// The record number, zero-padded decimal: new records go to the end
    /// of the table (the hotspot HBase users meet with time-ordered keys).
    Sequential,
    /// A hash of the record number in hex: records spread evenly.
    Hashed,
    /// A bucket prefix (`record % buckets`) then the record number: the
    /// usual cure for sequential keys.
    Salted {
        /// Number of buckets (2..=10000).
        buckets: u32,
    },
}

impl KeyPattern {
    /// Parses `sequential`, `hashed`, `salted:BUCKETS`.
    pub fn parse(text: &str) -> Result<KeyPattern, SpecError> {
        match text.split_once(':') {
            None if text == "sequential" => Ok(KeyPattern::Sequential),
            None if text == "hashed" => Ok(KeyPattern::Hashed),
            Some(("salted", n)) => {
                let buckets: u32 = n
                    .parse()
                    .map_err(|_| bad("--keys", text, "BUCKETS is not a whole number"))?;
                if !(2..=10_000).contains(&buckets) {
                    return Err(bad("--keys", text, "BUCKETS must be in 2..=10000"));
                }
                Ok(KeyPattern::Salted { buckets })
            }
            _ => Err(bad(
                "--keys",
                text,
                "one of sequential, hashed, salted:BUCKETS",
            )),
        }
    }
}

/// A latency objective: `p99<5ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slo {
    /// The percentile (0..100).
    pub percentile: f64,
    /// The bound on corrected latency.
    pub bound: Duration,
}

impl Slo {
    /// Parses `pNN<DURATION` (`p99<5ms`, `p99.9<20ms`, `p50<500us`).
    pub fn parse(text: &str) -> Result<Slo, SpecError> {
        let (p, bound) = text
            .strip_prefix('p')
            .and_then(|rest| rest.split_once('<'))
            .ok_or_else(|| bad("--slo", text, "expected pNN<DURATION, for example p99<5ms"))?;
        let percentile: f64 = p
            .parse()
            .ok()
            .filter(|p| *p > 0.0 && *p < 100.0)
            .ok_or_else(|| bad("--slo", text, "the percentile must be in (0, 100)"))?;
        let bound = parse_duration("--slo", bound)?;
        if bound.is_zero() {
            return Err(bad("--slo", text, "the bound must be above zero"));
        }
        Ok(Slo { percentile, bound })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_with_suffixes_ramps_and_max() {
        assert_eq!(
            parse_rate("50k", None).unwrap(),
            RateSpec::Steps(vec![50_000.0])
        );
        assert_eq!(parse_rate("max", None).unwrap(), RateSpec::Max);
        assert_eq!(
            parse_rate("10k..30k", Some("10k")).unwrap(),
            RateSpec::Steps(vec![10_000.0, 20_000.0, 30_000.0])
        );
        for (rate, step, want) in [
            ("0", None, "must be above zero"),
            ("-5", None, "must be above zero"),
            ("fast", None, "not a number"),
            ("10k..5k", Some("1k"), "must not exceed"),
            ("10k..20k", None, "needs --step"),
            ("10k", Some("1k"), "needs a ramp"),
            ("1..1m", Some("1"), "at most 1000"),
        ] {
            let e = parse_rate(rate, step).unwrap_err().0;
            assert!(e.contains(want), "{rate}: {e}");
        }
    }

    #[test]
    fn durations_take_units() {
        assert_eq!(
            parse_duration("--d", "30").unwrap(),
            Duration::from_secs(30)
        );
        assert_eq!(
            parse_duration("--d", "500ms").unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(
            parse_duration("--d", "2m").unwrap(),
            Duration::from_secs(120)
        );
        assert!(parse_duration("--d", "soon").is_err());
        assert!(parse_duration("--d", "-1s").is_err());
    }

    #[test]
    fn mixes_must_name_known_operations_and_sum_to_one() {
        let m = Mix::parse("get=0.5,put=0.45,scan=0.05").unwrap();
        assert_eq!(m.pick(0.0), OpKind::Get);
        assert_eq!(m.pick(0.6), OpKind::Put);
        assert_eq!(m.pick(0.99), OpKind::Scan);
        for (text, want) in [
            ("get=0.5,put=0.4", "sum to 0.9"),
            ("get=0.5,fetch=0.5", "unknown operation \"fetch\""),
            ("get=1.5", "outside 0..1"),
            ("get", "is not NAME=SHARE"),
            ("get=0.5,get=0.5", "appears twice"),
        ] {
            let e = Mix::parse(text).unwrap_err().0;
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn distributions_patterns_and_slos_parse_or_explain() {
        assert_eq!(
            Distribution::parse("zipfian:0.8").unwrap(),
            Distribution::Zipfian { theta: 0.8 }
        );
        assert_eq!(
            Distribution::parse("hotspot").unwrap(),
            Distribution::Hotspot {
                fraction: 0.2,
                ops: 0.8
            }
        );
        assert!(
            Distribution::parse("gaussian")
                .unwrap_err()
                .0
                .contains("one of uniform")
        );
        assert!(Distribution::parse("zipfian:x").is_err());
        assert_eq!(
            KeyPattern::parse("salted:16").unwrap(),
            KeyPattern::Salted { buckets: 16 }
        );
        assert!(KeyPattern::parse("salted:1").is_err());
        assert!(KeyPattern::parse("random").is_err());
        let slo = Slo::parse("p99<5ms").unwrap();
        assert_eq!(slo.percentile, 99.0);
        assert_eq!(slo.bound, Duration::from_millis(5));
        assert!(Slo::parse("p100<5ms").is_err());
        assert!(Slo::parse("99<5ms").is_err());
    }
}
