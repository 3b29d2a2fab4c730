//! Several engines' runs of the same schedule side by side (`--engine strata,rocksdb,fjall`,
//! `--thrift`, `--repeat`): per engine the highest step that met the SLO, every step's
//! latency, and the step every engine held, where their latency spectra are compared.
//!
//! Every run of a comparison has the same phases (one spec), so steps are matched by
//! position. With `--repeat`, an engine's steps merge the histograms of all its runs (the
//! percentiles are those of every operation at that step), a step counts as held or as
//! meeting the SLO only when it did in every run, and the highest rate meeting the SLO is
//! the median of the runs' (the lower middle one for an even count; a run that met it at no
//! step counts as below every rate).

use std::io;
use std::time::SystemTime;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::report::{Percentiles, RunSummary, micros};
use super::spec::Slo;

/// One run of one engine.
#[derive(Debug, Clone, Serialize)]
pub struct EngineRun {
    /// The engine (the target's name).
    pub engine: String,
    /// 1-based repetition.
    pub run: u32,
    /// When it started.
    #[serde(skip)]
    pub started: SystemTime,
    /// What it measured.
    pub summary: RunSummary,
}

impl EngineRun {
    /// Its tags' prefix in an HdrHistogram log: `ENGINE.RUN.`, with the characters a tag
    /// cannot hold (white space, commas) as `-`.
    pub fn hdr_tag_prefix(&self) -> String {
        let engine: String = self
            .engine
            .chars()
            .map(|c| {
                if c.is_whitespace() || c == ',' {
                    '-'
                } else {
                    c
                }
            })
            .collect();
        format!("{engine}.{}.", self.run)
    }
}

/// One engine at one step, over all its runs.
#[derive(Debug, Clone, Serialize)]
pub struct EngineStep {
    /// The step's target rate (`None`: closed loop).
    pub target_rate: Option<f64>,
    /// Achieved ops/s, the mean of the runs'.
    pub achieved_rate: f64,
    /// Runs in which the step held its rate.
    pub held_runs: u32,
    /// Runs in which the step met the SLO (`None` without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met_slo_runs: Option<u32>,
    /// Operations dropped for lag, all runs.
    pub dropped: u64,
    /// Operations that failed, all runs.
    pub errors: u64,
    /// Corrected latency at the comparison's percentile (the SLO's, else
    /// p99), microseconds.
    pub corrected_at_percentile_us: f64,
    /// Corrected latency of every run's operations at the step.
    pub corrected: Percentiles,
    /// Service latency of every run's operations at the step.
    pub service: Percentiles,
    /// The merged corrected histogram, ns.
    #[serde(skip)]
    pub corrected_histogram: Histogram<u64>,
    /// The merged service histogram, ns.
    #[serde(skip)]
    pub service_histogram: Histogram<u64>,
}

impl EngineStep {
    /// The step's row in a table of latencies: achieved ops/s, errors,
    /// dropped, corrected p50/p99/p99.9/max, service p50/p99/p99.9.
    pub fn cells(&self) -> [String; 10] {
        [
            format!("{:.0}", self.achieved_rate),
            self.errors.to_string(),
            self.dropped.to_string(),
            micros(self.corrected.p50_us),
            micros(self.corrected.p99_us),
            micros(self.corrected.p999_us),
            micros(self.corrected.max_us),
            micros(self.service.p50_us),
            micros(self.service.p99_us),
            micros(self.service.p999_us),
        ]
    }
}

/// One engine over the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct EngineSummary {
    /// The engine.
    pub engine: String,
    /// Its runs.
    pub runs: u32,
    /// The median over runs of the highest step rate that met the SLO; `None` when that
    /// median run met it at no step, or without an SLO.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub highest_rate_meeting_slo: Option<f64>,
    /// Each run's highest rate meeting the SLO, in run order.
    pub highest_rate_meeting_slo_each_run: Vec<Option<f64>>,
    /// Its measured steps (warm-up excluded), in order.
    pub steps: Vec<EngineStep>,
}

impl EngineSummary {
    /// How a step of this engine is marked in the tables: `!` when it did not
    /// hold its rate in every run, `*` when it met the SLO in every run,
    /// nothing otherwise.
    pub fn mark(&self, step: &EngineStep) -> &'static str {
        if step.held_runs < self.runs {
            "!"
        } else if step.met_slo_runs == Some(self.runs) {
            "*"
        } else {
            ""
        }
    }
}

/// The engines side by side.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The engines, in the order they ran.
    pub engines: Vec<EngineSummary>,
    /// Runs per engine.
    pub repeat: u32,
    /// The SLO the steps were judged by, as given (`p99<2ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo: Option<String>,
    /// The percentile steps are compared at: the SLO's, else 99.
    pub percentile: f64,
    /// The SLO's bound, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo_bound_us: Option<f64>,
    /// Closed loop (`--rate max`): one measured phase, no target rate.
    pub closed_loop: bool,
    /// The step every engine held in every run, the highest such (index into each engine's
    /// `steps`); `None` when no step was held by all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_step: Option<usize>,
    /// The step whose spectra are compared: `shared_step`, or the first step when no step
    /// was held by all (said so in the text).
    pub spectrum_step: usize,
}

impl Comparison {
    /// Compares `runs` (every run of every engine, in any order; engines in the order of
    /// their first run). `slo` is the spec's SLO and `slo_text` how it was given.
    pub fn new(runs: &[EngineRun], slo: Option<Slo>, slo_text: Option<&str>) -> io::Result<Self> {
        let mut names: Vec<&str> = Vec::new();
        for run in runs {
            if !names.contains(&run.engine.as_str()) {
                names.push(&run.engine);
            }
        }
        let mut engines = Vec::new();
        for name in names {
            let mine: Vec<&EngineRun> = runs.iter().filter(|r| r.engine == name).collect();
            engines.push(engine_summary(name, &mine, slo)?);
        }
        let steps = engines.iter().map(|e| e.steps.len()).min().unwrap_or(0);
        let shared_step = (0..steps).rev().find(|&step| {
            engines
                .iter()
                .all(|e| e.steps.get(step).is_some_and(|s| s.held_runs == e.runs))
        });
        Ok(Comparison {
            repeat: engines.iter().map(|e| e.runs).max().unwrap_or(0),
            closed_loop: runs.first().is_some_and(|r| r.summary.closed_loop),
            slo: slo_text.map(str::to_owned),
            percentile: slo.map_or(99.0, |s| s.percentile),
            slo_bound_us: slo.map(|s| s.bound.as_secs_f64() * 1e6),
            shared_step,
            spectrum_step: shared_step.unwrap_or(0),
            engines,
        })
    }

    /// The compared percentile's name: `p99`, `p99.9`.
    pub fn percentile_name(&self) -> String {
        format!("p{}", self.percentile)
    }

    /// The target rate of step `step` (`None` for a closed loop or no such step).
    pub fn step_rate(&self, step: usize) -> Option<f64> {
        self.engines
            .first()
            .and_then(|e| e.steps.get(step))
            .and_then(|s| s.target_rate)
    }

    /// What the spectra are of: `120000 ops/s, the highest rate every engine held`.
    pub fn spectrum_label(&self) -> String {
        let rate = match self.step_rate(self.spectrum_step) {
            Some(r) => format!("{r:.0} ops/s"),
            None => "the closed-loop phase".to_owned(),
        };
        match self.shared_step {
            Some(_) if self.closed_loop => rate,
            Some(_) => format!("{rate}, the highest rate every engine held"),
            None => format!("{rate} (no step was held by every engine)"),
        }
    }

    /// The comparison as text: the highest rate meeting the SLO per engine, every step's
    /// corrected p99 side by side, and the latency at the step of the spectra.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let names: Vec<&str> = self.engines.iter().map(|e| e.engine.as_str()).collect();
        let mode = if self.closed_loop {
            "closed loop: latency is service time"
        } else {
            "open loop: corrected latency"
        };
        let runs = if self.repeat > 1 {
            format!(
                "{} runs each, interleaved; latencies over every run's operations",
                self.repeat
            )
        } else {
            "one run each".to_owned()
        };
        out.push_str(&format!(
            "\n== comparison: {} ({mode}; {runs}{})\n",
            names.join(", "),
            self.slo
                .as_deref()
                .map(|s| format!("; SLO {s}"))
                .unwrap_or_default()
        ));
        let width = names.iter().map(|n| n.len()).max().unwrap_or(0).max(12);
        if self.slo.is_some() && !self.closed_loop {
            out.push_str(&format!(
                "{:<width$} highest rate meeting the SLO\n",
                "engine"
            ));
            for e in &self.engines {
                let rate = e
                    .highest_rate_meeting_slo
                    .map_or("none".to_owned(), |r| format!("{r:.0} ops/s"));
                let each = if e.runs > 1 {
                    let each: Vec<String> = e
                        .highest_rate_meeting_slo_each_run
                        .iter()
                        .map(|r| r.map_or("none".to_owned(), |r| format!("{r:.0}")))
                        .collect();
                    format!(" (median; runs: {})", each.join(", "))
                } else {
                    String::new()
                };
                out.push_str(&format!("{:<width$} {rate}{each}\n", e.engine));
            }
        }
        if !self.closed_loop {
            out.push_str(&format!(
                "\ncorrected {} by step ({}! did not hold its rate in every run):\n",
                self.percentile_name(),
                if self.slo.is_some() {
                    "* met the SLO in every run; "
                } else {
                    ""
                }
            ));
            out.push_str(&format!("{:>10}", "target"));
            for name in &names {
                out.push_str(&format!(" {name:>width$}"));
            }
            out.push('\n');
            let steps = self.engines.first().map_or(0, |e| e.steps.len());
            for step in 0..steps {
                let rate = self
                    .step_rate(step)
                    .map_or("max".to_owned(), |r| format!("{r:.0}"));
                out.push_str(&format!("{rate:>10}"));
                for e in &self.engines {
                    let cell = e.steps.get(step).map_or("-".to_owned(), |s| {
                        format!("{} {:1}", micros(s.corrected_at_percentile_us), e.mark(s))
                    });
                    out.push_str(&format!(" {cell:>width$}"));
                }
                out.push('\n');
            }
        }
        out.push_str(&format!("\nat {}:\n", self.spectrum_label()));
        out.push_str(&format!(
            "{:<width$} {:>10} {:>8} {:>8} | {:>9} {:>9} {:>9} {:>9} | {:>8} {:>8} {:>8}\n",
            "engine",
            "achieved",
            "errors",
            "dropped",
            "c.p50",
            "c.p99",
            "c.p999",
            "c.max",
            "s.p50",
            "s.p99",
            "s.p999"
        ));
        for e in &self.engines {
            let Some(s) = e.steps.get(self.spectrum_step) else {
                continue;
            };
            let [
                achieved,
                errors,
                dropped,
                c50,
                c99,
                c999,
                cmax,
                s50,
                s99,
                s999,
            ] = s.cells();
            out.push_str(&format!(
                "{:<width$} {achieved:>10} {errors:>8} {dropped:>8} | {c50:>9} {c99:>9} {c999:>9} \
                 {cmax:>9} | {s50:>8} {s99:>8} {s999:>8}\n",
                e.engine,
            ));
        }
        out
    }
}

/// Merges one engine's runs step by step.
fn engine_summary(name: &str, runs: &[&EngineRun], slo: Option<Slo>) -> io::Result<EngineSummary> {
    let run_count = runs.len() as u32;
    let with_slo = slo.is_some();
    let quantile = slo.map_or(0.99, |s| s.percentile / 100.0);
    let measured = |run: &EngineRun| {
        run.summary
            .phases
            .iter()
            .filter(|p| !p.warmup)
            .cloned()
            .collect::<Vec<_>>()
    };
    let per_run: Vec<_> = runs.iter().map(|r| measured(r)).collect();
    let steps = per_run.iter().map(Vec::len).min().unwrap_or(0);
    let mut merged = Vec::with_capacity(steps);
    for step in 0..steps {
        let phases: Vec<_> = per_run.iter().filter_map(|p| p.get(step)).collect();
        let mut corrected: Option<Histogram<u64>> = None;
        let mut service: Option<Histogram<u64>> = None;
        for phase in &phases {
            let (c, s) = phase.histograms()?;
            for (total, h) in [(&mut corrected, c), (&mut service, s)] {
                match total {
                    Some(t) => t
                        .add(&h)
                        .map_err(|e| io::Error::other(format!("merging histograms: {e:?}")))?,
                    None => *total = Some(h),
                }
            }
        }
        let (Some(corrected), Some(service)) = (corrected, service) else {
            continue;
        };
        merged.push(EngineStep {
            target_rate: phases.first().and_then(|p| p.target_rate),
            achieved_rate: phases.iter().map(|p| p.achieved_rate).sum::<f64>()
                / phases.len().max(1) as f64,
            held_runs: phases.iter().filter(|p| p.held_rate()).count() as u32,
            met_slo_runs: with_slo
                .then(|| phases.iter().filter(|p| p.met_slo == Some(true)).count() as u32),
            dropped: phases.iter().map(|p| p.dropped).sum(),
            errors: phases.iter().map(|p| p.errors).sum(),
            corrected_at_percentile_us: if corrected.is_empty() {
                0.0
            } else {
                corrected.value_at_quantile(quantile) as f64 / 1000.0
            },
            corrected: Percentiles::of(&corrected),
            service: Percentiles::of(&service),
            corrected_histogram: corrected,
            service_histogram: service,
        });
    }
    let each: Vec<Option<f64>> = runs
        .iter()
        .map(|r| r.summary.highest_rate_meeting_slo)
        .collect();
    Ok(EngineSummary {
        engine: name.to_owned(),
        runs: run_count,
        highest_rate_meeting_slo: if with_slo { lower_median(&each) } else { None },
        highest_rate_meeting_slo_each_run: each,
        steps: merged,
    })
}

/// The lower middle of `values`, `None` below every number.
fn lower_median(values: &[Option<f64>]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| match (a, b) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(a), Some(b)) => a.total_cmp(b),
    });
    sorted
        .get(sorted.len().saturating_sub(1) / 2)
        .copied()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_rate_counts_a_run_that_met_nothing_as_the_lowest() {
        assert_eq!(lower_median(&[Some(3.0), None, Some(2.0)]), Some(2.0));
        assert_eq!(lower_median(&[Some(3.0), None, None]), None);
        // The lower of the two middle runs.
        assert_eq!(
            lower_median(&[Some(4.0), Some(1.0), Some(3.0), Some(2.0)]),
            Some(2.0)
        );
        assert_eq!(lower_median(&[]), None);
    }
}
