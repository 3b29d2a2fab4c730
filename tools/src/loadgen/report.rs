//! What a run reports: one record per interval, per-phase and whole-run
//! summaries, the per-region table, JSON, and the HdrHistogram log.

use std::io::{self, Write};
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer, V2Serializer};
use serde::Serialize;
use strata::RegionActivity;

use super::spec::{RateSpec, Slo};
use super::target::RegionSpan;
use super::{IntervalSlot, LoadSpec, Phase};

/// An interval whose corrected p99 is this many times its service p99 (and
/// at least [`STALL_MIN_NS`]) is flagged as a stall: operations waited for
/// the engine far longer than the engine took to serve them.
pub const STALL_RATIO: u64 = 10;
/// The smallest corrected p99 that can be a stall, ns.
pub const STALL_MIN_NS: u64 = 1_000_000;

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Percentiles {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Largest.
    pub max_us: f64,
}

impl Percentiles {
    /// The percentiles of a histogram of ns values.
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Percentiles::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Percentiles {
            p50_us: us(h.value_at_quantile(0.50)),
            p99_us: us(h.value_at_quantile(0.99)),
            p999_us: us(h.value_at_quantile(0.999)),
            max_us: us(h.max()),
        }
    }
}

/// One reporting interval.
#[derive(Debug, Clone, Serialize)]
pub struct IntervalRecord {
    /// End of the interval, seconds since the run's start.
    pub t_s: f64,
    /// Its length, seconds.
    pub length_s: f64,
    /// The phase's target rate (`None`: closed loop).
    pub target_rate: Option<f64>,
    /// Part of the warm-up.
    pub warmup: bool,
    /// Operations completed.
    pub ops: u64,
    /// Operations per second achieved.
    pub rate: f64,
    /// Operations that failed.
    pub errors: u64,
    /// Operations dropped for lag.
    pub dropped: u64,
    /// Schedule lag p99, microseconds.
    pub lag_p99_us: f64,
    /// Corrected latency p99, microseconds.
    pub corrected_p99_us: f64,
    /// Service latency p99, microseconds.
    pub service_p99_us: f64,
    /// Corrected latency percentiles.
    pub corrected: Percentiles,
    /// Service latency percentiles.
    pub service: Percentiles,
    /// Microseconds the engine stalled writers in this interval.
    pub engine_stall_us: u64,
    /// Flagged as a stall (see [`STALL_RATIO`]) or the engine stalled.
    pub stall: bool,
    /// The first error of the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// The interval's corrected and service histograms for the HdrHistogram
    /// log, V2-encoded: a full histogram (1 ns to 1 h at 3 digits) is about
    /// 256 KiB of counters, its encoding a few hundred bytes, so an hour of
    /// 1 s intervals stays in megabytes.
    #[serde(skip)]
    encoded: EncodedHistograms,
    #[serde(skip)]
    start_ns: u64,
}

/// One interval's corrected and service histograms, V2-encoded (no
/// compression: the log compresses them when it is written).
#[derive(Debug, Clone, Default)]
struct EncodedHistograms {
    corrected: Vec<u8>,
    service: Vec<u8>,
}

impl EncodedHistograms {
    /// The corrected and service histograms back.
    fn decode(&self) -> io::Result<(Histogram<u64>, Histogram<u64>)> {
        let mut deserializer = Deserializer::new();
        let mut decode = |bytes: &[u8]| -> io::Result<Histogram<u64>> {
            deserializer
                .deserialize(&mut &bytes[..])
                .map_err(|e| io::Error::other(format!("interval histogram: {e:?}")))
        };
        Ok((decode(&self.corrected)?, decode(&self.service)?))
    }

    fn of(corrected: &Histogram<u64>, service: &Histogram<u64>) -> Self {
        let mut serializer = V2Serializer::new();
        let mut encode = |h: &Histogram<u64>| {
            let mut out = Vec::new();
            // Writing into a Vec cannot fail, and a histogram with these
            // bounds always encodes; an empty buffer would only leave the
            // interval out of the log.
            match serializer.serialize(h, &mut out) {
                Ok(_) => out,
                Err(_) => Vec::new(),
            }
        };
        EncodedHistograms {
            corrected: encode(corrected),
            service: encode(service),
        }
    }
}

impl IntervalRecord {
    /// The record of `slot`, measured over `start_ns..end_ns`.
    pub fn new(
        slot: &IntervalSlot,
        start_ns: u64,
        end_ns: u64,
        target_rate: Option<f64>,
        warmup: bool,
        engine_stall_us: u64,
    ) -> Self {
        let length_s = end_ns.saturating_sub(start_ns) as f64 / 1e9;
        let corrected = Percentiles::of(&slot.corrected);
        let service = Percentiles::of(&slot.service);
        let corrected_p99 = slot.corrected.value_at_quantile(0.99);
        let service_p99 = slot.service.value_at_quantile(0.99).max(1);
        let stall = (corrected_p99 >= STALL_MIN_NS && corrected_p99 / service_p99 >= STALL_RATIO)
            || engine_stall_us > 0;
        IntervalRecord {
            t_s: end_ns as f64 / 1e9,
            length_s,
            target_rate,
            warmup,
            ops: slot.ops,
            rate: if length_s > 0.0 {
                slot.ops as f64 / length_s
            } else {
                0.0
            },
            errors: slot.errors,
            dropped: slot.dropped,
            lag_p99_us: if slot.lag.is_empty() {
                0.0
            } else {
                slot.lag.value_at_quantile(0.99) as f64 / 1000.0
            },
            corrected_p99_us: corrected.p99_us,
            service_p99_us: service.p99_us,
            corrected,
            service,
            engine_stall_us,
            stall,
            first_error: slot.first_error.clone(),
            encoded: EncodedHistograms::of(&slot.corrected, &slot.service),
            start_ns,
        }
    }

    /// The header of [`IntervalRecord::line`]'s columns.
    pub fn header() -> String {
        format!(
            "{:>7} {:>9} {:>10} {:>9} | {:>9} {:>9} {:>9} {:>9} | {:>8} {:>8} {:>8} | {:>6} {:>7}",
            "t(s)",
            "target",
            "rate",
            "lag99",
            "c.p50",
            "c.p99",
            "c.p999",
            "c.max",
            "s.p50",
            "s.p99",
            "s.p999",
            "errors",
            "dropped"
        )
    }

    /// One line for the terminal: times in ms or us as they fit.
    pub fn line(&self) -> String {
        let target = match self.target_rate {
            Some(r) => format!("{r:.0}"),
            None => "max".to_string(),
        };
        let mut line = format!(
            "{:>7.1} {:>9} {:>10.0} {:>9} | {:>9} {:>9} {:>9} {:>9} | {:>8} {:>8} {:>8} | {:>6} {:>7}",
            self.t_s,
            target,
            self.rate,
            micros(self.lag_p99_us),
            micros(self.corrected.p50_us),
            micros(self.corrected.p99_us),
            micros(self.corrected.p999_us),
            micros(self.corrected.max_us),
            micros(self.service.p50_us),
            micros(self.service.p99_us),
            micros(self.service.p999_us),
            self.errors,
            self.dropped
        );
        if self.warmup {
            line.push_str("  warm-up");
        }
        if self.stall {
            line.push_str("  STALL");
            if self.engine_stall_us > 0 {
                line.push_str(&format!(
                    " (engine stalled writers {} ms)",
                    self.engine_stall_us / 1000
                ));
            }
        }
        line
    }
}

/// The target a run's views name: `None` for strata in this process and a
/// dry run, which the views have always meant without naming them.
pub fn named_target(target: &str) -> Option<&str> {
    match target {
        "strata" | "dry run" => None,
        other => Some(other),
    }
}

/// Microseconds as a short text: `850us`, `12.3ms`, `1.20s`.
pub fn micros(us: f64) -> String {
    if us < 10.0 {
        format!("{us:.1}us")
    } else if us < 1000.0 {
        format!("{us:.0}us")
    } else if us < 1_000_000.0 {
        format!("{:.1}ms", us / 1000.0)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// The warm-up or one rate step, summed.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseSummary {
    /// Target rate (`None`: closed loop).
    pub target_rate: Option<f64>,
    /// Whether this is the warm-up.
    pub warmup: bool,
    /// Length, seconds.
    pub duration_s: f64,
    /// Operations completed.
    pub ops: u64,
    /// Operations per second achieved.
    pub achieved_rate: f64,
    /// Operations that failed.
    pub errors: u64,
    /// Operations dropped for lag.
    pub dropped: u64,
    /// Corrected latency.
    pub corrected: Percentiles,
    /// Service latency.
    pub service: Percentiles,
    /// Whether the phase met the SLO (corrected latency at its percentile
    /// within its bound, and the phase held its rate: see
    /// [`PhaseSummary::held_rate`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met_slo: Option<bool>,
    /// The phase's corrected and service histograms, V2-encoded (for a
    /// comparison's spectra).
    #[serde(skip)]
    encoded: EncodedHistograms,
}

/// The share of its target rate a phase must achieve to have held it.
pub const HELD_RATE_SHARE: f64 = 0.95;

impl PhaseSummary {
    /// The summary of `phase` from its merged measurements.
    pub fn new(phase: &Phase, total: &IntervalSlot, slo: Option<Slo>) -> Self {
        let duration_s = (phase.end_ns - phase.start_ns) as f64 / 1e9;
        let mut summary = PhaseSummary {
            target_rate: phase.rate,
            warmup: phase.warmup,
            duration_s,
            ops: total.ops,
            achieved_rate: total.ops as f64 / duration_s.max(1e-9),
            errors: total.errors,
            dropped: total.dropped,
            corrected: Percentiles::of(&total.corrected),
            service: Percentiles::of(&total.service),
            met_slo: None,
            encoded: EncodedHistograms::of(&total.corrected, &total.service),
        };
        summary.met_slo = slo.filter(|_| !phase.warmup).map(|slo| {
            let at = total.corrected.value_at_quantile(slo.percentile / 100.0);
            summary.held_rate() && at <= slo.bound.as_nanos() as u64
        });
        summary
    }

    /// Whether the phase held its rate: it completed operations, dropped
    /// none, and achieved at least [`HELD_RATE_SHARE`] of its target.
    pub fn held_rate(&self) -> bool {
        self.ops > 0
            && self.dropped == 0
            && self
                .target_rate
                .is_none_or(|r| self.achieved_rate >= HELD_RATE_SHARE * r)
    }

    /// The phase's corrected and service latency histograms, ns.
    pub fn histograms(&self) -> io::Result<(Histogram<u64>, Histogram<u64>)> {
        self.encoded.decode()
    }
}

/// One region's share of the run.
#[derive(Debug, Clone, Serialize)]
pub struct RegionLoad {
    /// Position in the table (0 = first region).
    pub region: usize,
    /// Start key (inclusive), escaped as the shell prints keys.
    pub start_key: String,
    /// End key (exclusive; empty = the table's end), escaped.
    pub end_key: String,
    /// Operations the load generator sent to the region (after warm-up).
    pub ops: u64,
    /// `ops` over all operations.
    pub share: f64,
    /// The engine's counters of the region over the run; `None` when the
    /// target does not report them (a Thrift server).
    #[serde(flatten)]
    pub counters: Option<RegionCounters>,
}

/// A region's engine counters over a run (strata's `RegionActivity`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct RegionCounters {
    /// Rows the engine read from the region during the run.
    pub rows_read: u64,
    /// Rows the engine wrote to the region during the run.
    pub rows_written: u64,
    /// Flushes of the region during the run.
    pub flushes: u64,
    /// Compactions in the region during the run.
    pub compactions: u64,
    /// Microseconds writers to the region stalled during the run.
    pub stall_us: u64,
}

impl RegionCounters {
    /// What `after` counted beyond `before`.
    fn since(after: RegionActivity, before: RegionActivity) -> Self {
        RegionCounters {
            rows_read: after.rows_read.saturating_sub(before.rows_read),
            rows_written: after.rows_written.saturating_sub(before.rows_written),
            flushes: after.flushes.saturating_sub(before.flushes),
            compactions: after.compactions.saturating_sub(before.compactions),
            stall_us: after.stall_micros.saturating_sub(before.stall_micros),
        }
    }

    /// The counters as table cells: rows read, rows written, flushes,
    /// compactions, stall ms; `-` for each when unknown.
    pub fn cells(counters: Option<RegionCounters>) -> [String; 5] {
        match counters {
            Some(c) => [
                c.rows_read.to_string(),
                c.rows_written.to_string(),
                c.flushes.to_string(),
                c.compactions.to_string(),
                (c.stall_us / 1000).to_string(),
            ],
            None => std::array::from_fn(|_| "-".to_owned()),
        }
    }
}

/// Escapes a key as the HBase shell does: printable ASCII as is, other
/// bytes as `\xNN`.
pub fn escape_key(key: &[u8]) -> String {
    let mut out = String::new();
    for &b in key {
        if (0x20..0x7f).contains(&b) && b != b'\\' {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

impl RegionLoad {
    /// The table of regions as they were at the start (`before`), with the
    /// engine's counters over the run where the target reports them (`after`
    /// by start key; a region split during the run keeps the counters of the
    /// daughter that kept its start key).
    pub fn table(before: &[RegionSpan], ops: &[u64], after: &[RegionSpan]) -> Vec<RegionLoad> {
        let total: u64 = ops.iter().sum();
        before
            .iter()
            .enumerate()
            .map(|(i, region)| {
                let counters = region.activity.map(|b| {
                    let a = after
                        .iter()
                        .find(|r| r.start_key == region.start_key)
                        .and_then(|r| r.activity)
                        .unwrap_or(b);
                    RegionCounters::since(a, b)
                });
                let n = ops.get(i).copied().unwrap_or(0);
                RegionLoad {
                    region: i,
                    start_key: escape_key(&region.start_key),
                    end_key: escape_key(&region.end_key),
                    ops: n,
                    share: if total > 0 {
                        n as f64 / total as f64
                    } else {
                        0.0
                    },
                    counters,
                }
            })
            .collect()
    }
}

/// Cells ([regions] x [columns]) a [`RegionTimeline`] holds at most:
/// 8 MiB of counters, 17 hours of 1 s intervals on 16 regions.
pub const TIMELINE_MAX_CELLS: usize = 1 << 20;

/// Operations per region over time, for the heat map: one column per
/// reporting interval until `regions x columns` would pass its cap; then
/// adjacent columns are merged in pairs (each column covers twice as many
/// intervals, the time resolution halves, counts are kept whole), so memory
/// stays bounded however long the run.
#[derive(Debug, Clone, Serialize)]
pub struct RegionTimeline {
    /// Reporting intervals one full column covers (a power of two).
    pub intervals_per_column: usize,
    /// Columns in time order, warm-up included.
    pub columns: Vec<TimelineColumn>,
    #[serde(skip)]
    regions: usize,
    #[serde(skip)]
    max_cells: usize,
}

/// One column of a [`RegionTimeline`].
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TimelineColumn {
    /// Start, seconds since the run's start.
    pub start_s: f64,
    /// End, seconds since the run's start.
    pub end_s: f64,
    /// Reporting intervals merged into it.
    pub intervals: usize,
    /// Operations per region (the regions as they were at the start).
    pub ops: Vec<u64>,
}

impl RegionTimeline {
    /// An empty timeline of `regions` regions holding at most `max_cells`
    /// counters (but always at least one column).
    pub fn new(regions: usize, max_cells: usize) -> Self {
        RegionTimeline {
            intervals_per_column: 1,
            columns: Vec::new(),
            regions,
            max_cells,
        }
    }

    /// Regions per column.
    pub fn regions(&self) -> usize {
        self.regions
    }

    /// Adds one interval's operations per region.
    pub fn push(&mut self, start_s: f64, end_s: f64, ops: &[u64]) {
        let per_column = self.intervals_per_column;
        match self.columns.last_mut() {
            Some(last) if last.intervals < per_column => {
                last.end_s = end_s;
                last.intervals += 1;
                for (a, b) in last.ops.iter_mut().zip(ops) {
                    *a += b;
                }
            }
            _ => {
                let mut column = vec![0; self.regions];
                for (a, b) in column.iter_mut().zip(ops) {
                    *a = *b;
                }
                self.columns.push(TimelineColumn {
                    start_s,
                    end_s,
                    intervals: 1,
                    ops: column,
                });
            }
        }
        // A timeline without regions still keeps its columns few (each costs
        // its times even with no counters).
        while self.columns.len() > 1 && self.columns.len() * self.regions.max(1) > self.max_cells {
            self.halve();
        }
    }

    /// Merges adjacent columns in pairs.
    fn halve(&mut self) {
        let old = std::mem::take(&mut self.columns);
        let mut pairs = old.into_iter();
        while let Some(mut first) = pairs.next() {
            if let Some(second) = pairs.next() {
                first.end_s = second.end_s;
                first.intervals += second.intervals;
                for (a, b) in first.ops.iter_mut().zip(&second.ops) {
                    *a += b;
                }
            }
            self.columns.push(first);
        }
        self.intervals_per_column *= 2;
    }
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// What the run drove: `strata`, `rocksdb`, `fjall`, `thrift HOST:PORT`,
    /// `dry run`.
    pub target: String,
    /// Target rate of a fixed-rate run; of a ramp, its last step; `None`
    /// for a closed-loop run.
    pub target_rate: Option<f64>,
    /// Closed loop (`--rate max`): latency is service time only, since no
    /// operation had an intended start.
    pub closed_loop: bool,
    /// Operations per second over the measured phases (warm-up excluded).
    pub achieved_rate: f64,
    /// Measured seconds (warm-up excluded).
    pub duration_s: f64,
    /// Operations completed after warm-up.
    pub ops: u64,
    /// Of which failed.
    pub errors: u64,
    /// Operations dropped for lag after warm-up.
    pub dropped: u64,
    /// Corrected latency after warm-up.
    pub corrected: Percentiles,
    /// Service latency after warm-up.
    pub service: Percentiles,
    /// Warm-up and each rate step.
    pub phases: Vec<PhaseSummary>,
    /// The highest step rate that met `--slo`, if any did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub highest_rate_meeting_slo: Option<f64>,
    /// Every interval, warm-up included.
    pub intervals: Vec<IntervalRecord>,
    /// Per region, as the table was split when the run started.
    pub regions: Vec<RegionLoad>,
    /// Busiest region's operations over the mean per region.
    pub max_mean_imbalance: f64,
    /// Regions added by splits during the run.
    pub splits: usize,
    /// Records in the table at the end (preloaded plus inserted).
    pub records_at_end: u64,
    /// The first error of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// Operations per region over time (warm-up included).
    pub region_timeline: RegionTimeline,
    /// Corrected latency after warm-up, ns (for the latency spectrum).
    #[serde(skip)]
    pub corrected_histogram: Histogram<u64>,
    /// Service latency after warm-up, ns.
    #[serde(skip)]
    pub service_histogram: Histogram<u64>,
}

impl RunSummary {
    /// Assembles the summary.
    #[expect(
        clippy::too_many_arguments,
        reason = "called once, by the run, with each part it measured"
    )]
    pub fn new(
        spec: &LoadSpec,
        target: String,
        total: &IntervalSlot,
        phases: Vec<PhaseSummary>,
        intervals: Vec<IntervalRecord>,
        regions: Vec<RegionLoad>,
        region_timeline: RegionTimeline,
        splits: usize,
        records_at_end: u64,
    ) -> Self {
        let duration_s: f64 = phases
            .iter()
            .filter(|p| !p.warmup)
            .map(|p| p.duration_s)
            .sum();
        let max = regions.iter().map(|r| r.ops).max().unwrap_or(0);
        let mean = regions.iter().map(|r| r.ops).sum::<u64>() as f64 / regions.len().max(1) as f64;
        let highest_rate_meeting_slo = phases
            .iter()
            .filter(|p| p.met_slo == Some(true))
            .filter_map(|p| p.target_rate)
            .fold(None, |best: Option<f64>, r| {
                Some(best.map_or(r, |b| b.max(r)))
            });
        RunSummary {
            target,
            target_rate: match &spec.rate {
                RateSpec::Max => None,
                RateSpec::Steps(rates) => rates.last().copied(),
            },
            closed_loop: spec.rate == RateSpec::Max,
            achieved_rate: total.ops as f64 / duration_s.max(1e-9),
            duration_s,
            ops: total.ops,
            errors: total.errors,
            dropped: total.dropped,
            corrected: Percentiles::of(&total.corrected),
            service: Percentiles::of(&total.service),
            phases,
            highest_rate_meeting_slo,
            intervals,
            max_mean_imbalance: if mean > 0.0 { max as f64 / mean } else { 0.0 },
            regions,
            splits,
            records_at_end,
            first_error: total.first_error.clone(),
            region_timeline,
            corrected_histogram: total.corrected.clone(),
            service_histogram: total.service.clone(),
        }
    }

    /// The end-of-run text: phases, totals and the region table.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mode = if self.closed_loop {
            "closed loop (--rate max): latency is service time; corrected equals service"
        } else {
            "open loop: corrected latency is from each operation's intended start"
        };
        out.push_str(&format!("\n== summary ({mode})\n"));
        out.push_str(&format!(
            "{:>10} {:>8} {:>10} {:>10} {:>8} {:>8} | {:>9} {:>9} {:>9} | {:>8} {:>8} | {}\n",
            "phase",
            "secs",
            "target",
            "achieved",
            "errors",
            "dropped",
            "c.p50",
            "c.p99",
            "c.p999",
            "s.p50",
            "s.p99",
            "slo"
        ));
        for p in &self.phases {
            out.push_str(&format!(
                "{:>10} {:>8.1} {:>10} {:>10.0} {:>8} {:>8} | {:>9} {:>9} {:>9} | {:>8} {:>8} | {}\n",
                if p.warmup { "warm-up" } else { "measured" },
                p.duration_s,
                p.target_rate.map_or("max".to_string(), |r| format!("{r:.0}")),
                p.achieved_rate,
                p.errors,
                p.dropped,
                micros(p.corrected.p50_us),
                micros(p.corrected.p99_us),
                micros(p.corrected.p999_us),
                micros(p.service.p50_us),
                micros(p.service.p99_us),
                match p.met_slo {
                    Some(true) => "met",
                    Some(false) => "missed",
                    None => "-",
                }
            ));
        }
        out.push_str(&format!(
            "total: {} ops in {:.1} s = {:.0} ops/s; {} errors, {} dropped; corrected p50 {} p99 {} p99.9 {} max {}; service p99 {}\n",
            self.ops,
            self.duration_s,
            self.achieved_rate,
            self.errors,
            self.dropped,
            micros(self.corrected.p50_us),
            micros(self.corrected.p99_us),
            micros(self.corrected.p999_us),
            micros(self.corrected.max_us),
            micros(self.service.p99_us),
        ));
        if let Some(r) = self.highest_rate_meeting_slo {
            out.push_str(&format!("highest rate meeting the SLO: {r:.0} ops/s\n"));
        }
        let stalls: Vec<String> = self
            .intervals
            .iter()
            .filter(|i| i.stall)
            .map(|i| format!("{:.1}s", i.t_s))
            .collect();
        if !stalls.is_empty() {
            out.push_str(&format!(
                "stalls in the intervals ending at: {}\n",
                stalls.join(", ")
            ));
        }
        if let Some(e) = &self.first_error {
            out.push_str(&format!("first error: {e}\n"));
        }
        if self.regions.is_empty() {
            out.push_str(&format!(
                "\n== regions: none ({} has no regions; operations are not broken down by key range)\n",
                self.target
            ));
            return out;
        }
        out.push_str(&format!(
            "\n== regions (max/mean imbalance {:.2}; {} split(s) during the run)\n",
            self.max_mean_imbalance, self.splits
        ));
        out.push_str(&format!(
            "{:>4} {:>20} {:>20} {:>10} {:>7} {:>10} {:>10} {:>7} {:>7} {:>9}\n",
            "#",
            "start",
            "end",
            "ops",
            "share",
            "rows_read",
            "rows_wrtn",
            "flushes",
            "compact",
            "stall_ms"
        ));
        for r in &self.regions {
            let [rows_read, rows_written, flushes, compactions, stall_ms] =
                RegionCounters::cells(r.counters);
            out.push_str(&format!(
                "{:>4} {:>20} {:>20} {:>10} {:>6.1}% {:>10} {:>10} {:>7} {:>7} {:>9}\n",
                r.region,
                r.start_key,
                r.end_key,
                r.ops,
                r.share * 100.0,
                rows_read,
                rows_written,
                flushes,
                compactions,
                stall_ms
            ));
        }
        if self.regions.iter().any(|r| r.counters.is_none()) {
            out.push_str(&format!(
                "({} does not report its regions' counters: `-`)\n",
                self.target
            ));
        }
        out
    }

    /// Writes the HdrHistogram interval log (V2 compressed histograms,
    /// values in nanoseconds, max column in milliseconds): each interval's
    /// corrected latency tagged `corrected` and service latency tagged
    /// `service`.
    pub fn write_hdr_log<W: Write>(&self, started: SystemTime, out: &mut W) -> io::Result<()> {
        write_hdr_log_of_runs(
            &[HdrLogRun {
                tag_prefix: "",
                started,
                summary: self,
            }],
            out,
        )
    }
}

/// One run's share of an HdrHistogram interval log.
#[derive(Debug, Clone, Copy)]
pub struct HdrLogRun<'a> {
    /// Put before each tag (`rocksdb.2.`; empty for a single run).
    pub tag_prefix: &'a str,
    /// When the run started; its intervals are placed from there.
    pub started: SystemTime,
    /// The run.
    pub summary: &'a RunSummary,
}

/// Writes one HdrHistogram interval log of several runs (as
/// [`RunSummary::write_hdr_log`] does for one): the log's base time is the
/// earliest run's start, each run's intervals sit at their own time, and
/// their tags are `PREFIXcorrected` and `PREFIXservice`.
pub fn write_hdr_log_of_runs<W: Write>(runs: &[HdrLogRun<'_>], out: &mut W) -> io::Result<()> {
    let Some(base) = runs.iter().map(|r| r.started).min() else {
        return Ok(());
    };
    let comment = if runs.iter().all(|r| r.tag_prefix.is_empty()) {
        "strata-loadgen: latency in nanoseconds; tags corrected and service"
    } else {
        "strata-loadgen: latency in nanoseconds; tags ENGINE.RUN.corrected and ENGINE.RUN.service"
    };
    let mut serializer = V2DeflateSerializer::new();
    let mut builder = IntervalLogWriterBuilder::new();
    builder
        .add_comment(comment)
        .with_start_time(base)
        .with_base_time(base)
        .with_max_value_divisor(1e6);
    let mut writer = builder.begin_log_with(out, &mut serializer)?;
    for run in runs {
        let offset = run.started.duration_since(base).unwrap_or_default();
        for i in &run.summary.intervals {
            let start = offset + Duration::from_nanos(i.start_ns);
            let length = Duration::from_secs_f64(i.length_s);
            let (corrected, service) = i.encoded.decode()?;
            for (tag, h) in [("corrected", corrected), ("service", service)] {
                let tag = format!("{}{tag}", run.tag_prefix);
                writer
                    .write_histogram(&h, start, length, Tag::new(&tag))
                    .map_err(|e| io::Error::other(format!("{e:?}")))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeline_keeps_one_column_per_interval_under_its_cap() {
        let mut t = RegionTimeline::new(3, 100);
        for i in 0..5u64 {
            t.push(i as f64, i as f64 + 1.0, &[i, 1, 0]);
        }
        assert_eq!(t.intervals_per_column, 1);
        assert_eq!(t.columns.len(), 5);
        assert_eq!(t.columns[4].ops, vec![4, 1, 0]);
        assert_eq!((t.columns[4].start_s, t.columns[4].end_s), (4.0, 5.0));
    }

    #[test]
    fn past_its_cap_the_timeline_halves_its_time_resolution_and_keeps_every_count() {
        // 2 regions, at most 8 cells: 4 columns.
        let mut t = RegionTimeline::new(2, 8);
        for i in 0..11u64 {
            t.push(i as f64, i as f64 + 1.0, &[1, i]);
        }
        // 11 intervals: 4 per column after two halvings -> columns of 4, 4, 3.
        assert_eq!(t.intervals_per_column, 4);
        assert!(t.columns.len() * 2 <= 8);
        let intervals: Vec<usize> = t.columns.iter().map(|c| c.intervals).collect();
        assert_eq!(intervals, vec![4, 4, 3]);
        assert_eq!(t.columns[0].ops, vec![4, 1 + 2 + 3]);
        assert_eq!(t.columns[2].ops, vec![3, 8 + 9 + 10]);
        assert_eq!((t.columns[1].start_s, t.columns[1].end_s), (4.0, 8.0));
        let total: u64 = t.columns.iter().flat_map(|c| c.ops.iter()).sum();
        assert_eq!(total, 11 + (0..11).sum::<u64>());
        // Columns stay contiguous in time.
        for pair in t.columns.windows(2) {
            assert_eq!(pair[0].end_s, pair[1].start_s);
        }
    }

    #[test]
    fn a_timeline_wider_than_its_cap_keeps_one_column() {
        let mut t = RegionTimeline::new(10, 4);
        for i in 0..3u64 {
            t.push(i as f64, i as f64 + 1.0, &[1; 10]);
        }
        assert_eq!(t.columns.len(), 1);
        assert_eq!(t.columns[0].ops, vec![3; 10]);
        assert_eq!(t.columns[0].end_s, 3.0);
    }
}
