//! The live view: a block of lines at the bottom of the terminal, redrawn
//! each interval, showing where the run is (phase, time left), the rate it
//! achieved against its target, schedule lag, corrected and service latency,
//! errors, and the regions that took the largest share of the interval's
//! operations. The interval lines scroll above it, as they would in a pipe.
//!
//! [`LiveView`] holds the state and renders it into plain lines for a given
//! size, so it is testable without a terminal; [`LiveScreen`] draws it on
//! one with the `console` crate (cursor movement and line clearing).

use std::io;

use console::{Term, style};

use super::report::{IntervalRecord, escape_key, micros, named_target};
use super::{Phase, RunLayout};

/// Regions listed under "hottest regions".
pub const HOTTEST_REGIONS: usize = 5;
/// Width of the progress bar, characters.
const PROGRESS_BAR_WIDTH: usize = 20;
/// Width of a region's share bar at 100%, characters.
const SHARE_BAR_WIDTH: usize = 12;
/// Longest region key shown; longer keys are cut with `~`.
const KEY_WIDTH: usize = 14;

/// What the view shows: the run's layout and its latest interval.
#[derive(Debug, Clone)]
pub struct LiveView {
    layout: RunLayout,
    latest: Option<(IntervalRecord, Vec<u64>)>,
    /// Operations, errors and drops after warm-up so far.
    measured_ops: u64,
    errors: u64,
    dropped: u64,
    /// End times (s) of the intervals flagged as stalls.
    stalls_at_s: Vec<f64>,
}

impl LiveView {
    /// A view of a run that has not had an interval yet.
    pub fn new(layout: &RunLayout) -> Self {
        LiveView {
            layout: layout.clone(),
            latest: None,
            measured_ops: 0,
            errors: 0,
            dropped: 0,
            stalls_at_s: Vec::new(),
        }
    }

    /// Takes in an interval that closed.
    pub fn observe(&mut self, record: &IntervalRecord, region_ops: &[u64]) {
        if !record.warmup {
            self.measured_ops += record.ops;
        }
        self.errors += record.errors;
        self.dropped += record.dropped;
        if record.stall {
            self.stalls_at_s.push(record.t_s);
        }
        self.latest = Some((record.clone(), region_ops.to_vec()));
    }

    /// The view as at most `height` lines of at most `width` characters,
    /// without colour (see [`LiveView::render_styled`]).
    pub fn render(&self, width: usize, height: usize) -> Vec<String> {
        fit(self.lines(false), width, height)
    }

    /// As [`LiveView::render`], with bold headings and stalls in red where
    /// the terminal takes colour.
    pub fn render_styled(&self, width: usize, height: usize) -> Vec<String> {
        fit(self.lines(true), width, height)
    }

    fn lines(&self, styled: bool) -> Vec<String> {
        let bold = |s: String| {
            if styled {
                style(s).bold().to_string()
            } else {
                s
            }
        };
        let red = |s: String| {
            if styled {
                style(s).red().bold().to_string()
            } else {
                s
            }
        };
        let mut out = Vec::new();
        let end_s = self.layout.end_ns() as f64 / 1e9;
        let now_s = self.latest.as_ref().map_or(0.0, |(r, _)| r.t_s);
        let done = if end_s > 0.0 {
            (now_s / end_s).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let filled = (done * PROGRESS_BAR_WIDTH as f64).round() as usize;
        let mode = if self.layout.closed_loop {
            "closed loop (--rate max)"
        } else {
            "open loop"
        };
        let against = named_target(&self.layout.target)
            .map(|target| format!(" against {target}"))
            .unwrap_or_default();
        out.push(bold(format!(
            "strata-loadgen {mode}{against}, {} workers [{}{}] {:.1}/{:.1} s {:.0}%",
            self.layout.threads,
            "#".repeat(filled),
            "-".repeat(PROGRESS_BAR_WIDTH - filled),
            now_s,
            end_s,
            done * 100.0
        )));
        out.push(self.phase_line(now_s));
        let Some((record, region_ops)) = &self.latest else {
            out.push("waiting for the first interval...".to_string());
            return out;
        };
        let rate = match record.target_rate {
            Some(target) => format!(
                "rate {:>10.0} ops/s of {:.0} ({:+.2}%)",
                record.rate,
                target,
                (record.rate / target - 1.0) * 100.0
            ),
            None => format!("rate {:>10.0} ops/s (closed loop)", record.rate),
        };
        out.push(format!("{rate}   lag p99 {}", micros(record.lag_p99_us)));
        out.push(format!(
            "measured ops {}   errors {}   dropped {} (so far)",
            self.measured_ops, self.errors, self.dropped
        ));
        out.push(format!(
            "{:<11} {:>9} {:>9} {:>9} {:>9}",
            "latency", "p50", "p99", "p99.9", "max"
        ));
        for (name, p) in [
            ("corrected", &record.corrected),
            ("service", &record.service),
        ] {
            out.push(format!(
                "{:<11} {:>9} {:>9} {:>9} {:>9}",
                name,
                micros(p.p50_us),
                micros(p.p99_us),
                micros(p.p999_us),
                micros(p.max_us)
            ));
        }
        if self.layout.region_starts.is_empty() {
            out.push(format!(
                "regions: none ({} has no regions)",
                self.layout.target
            ));
        } else {
            self.region_lines(region_ops, &bold, &mut out);
        }
        let stalls = match self.stalls_at_s.as_slice() {
            [] => "stalls: none".to_string(),
            many => {
                let last: Vec<String> = many
                    .iter()
                    .rev()
                    .take(5)
                    .rev()
                    .map(|t| format!("{t:.1} s"))
                    .collect();
                red(format!(
                    "stalls: {} interval(s), latest ending at {}",
                    many.len(),
                    last.join(", ")
                ))
            }
        };
        out.push(stalls);
        if record.stall {
            out.push(red(format!(
                "STALL in this interval: corrected p99 {} vs service p99 {}{}",
                micros(record.corrected_p99_us),
                micros(record.service_p99_us),
                if record.engine_stall_us > 0 {
                    format!(
                        ", engine stalled writers {} ms",
                        record.engine_stall_us / 1000
                    )
                } else {
                    String::new()
                }
            )));
        }
        out
    }

    /// The hottest regions of the interval: at most [`HOTTEST_REGIONS`], with
    /// their key ranges and shares.
    fn region_lines(
        &self,
        region_ops: &[u64],
        bold: &dyn Fn(String) -> String,
        out: &mut Vec<String>,
    ) {
        let total: u64 = region_ops.iter().sum();
        out.push(bold(format!(
            "hottest regions ({} ops in the interval over {} region(s))",
            total,
            region_ops.len()
        )));
        let mut ranked: Vec<(usize, u64)> = region_ops
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, n)| *n > 0)
            .collect();
        // Largest share first; ties in table order.
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        if ranked.is_empty() {
            out.push("  (no operations)".to_string());
        }
        for (region, ops) in ranked.into_iter().take(HOTTEST_REGIONS) {
            let share = ops as f64 / total.max(1) as f64;
            let bar = (share * SHARE_BAR_WIDTH as f64).round() as usize;
            out.push(format!(
                "  #{:<4} {:<w$} .. {:<w$} {:>6.1}% {:>9} ops {}",
                region,
                short_key(self.layout.region_starts.get(region), "(start)"),
                short_key(self.layout.region_ends.get(region), "(end)"),
                share * 100.0,
                ops,
                "#".repeat(bar),
                w = KEY_WIDTH
            ));
        }
    }

    /// Which phase the run is in at `now_s` and how far into it.
    fn phase_line(&self, now_s: f64) -> String {
        let phases = &self.layout.phases;
        let steps = phases.iter().filter(|p| !p.warmup).count();
        // The phase the clock is in; at a boundary, the one that just ended
        // (the latest interval belongs to it).
        let at_ns = (now_s * 1e9).round() as u64;
        let Some((index, phase)) = phases
            .iter()
            .enumerate()
            .find(|(_, p)| at_ns <= p.end_ns)
            .or_else(|| phases.iter().enumerate().next_back())
        else {
            return "no phases".to_string();
        };
        let into_s = (at_ns.saturating_sub(phase.start_ns)) as f64 / 1e9;
        let length_s = (phase.end_ns - phase.start_ns) as f64 / 1e9;
        let what = describe(phase);
        if phase.warmup {
            format!("warm-up at {what}: {into_s:.1} s of {length_s:.1} s")
        } else {
            let step = phases.iter().take(index + 1).filter(|p| !p.warmup).count();
            format!("step {step} of {steps} at {what}: {into_s:.1} s of {length_s:.1} s")
        }
    }
}

/// The first `height` lines, each cut to `width` columns (escape codes
/// take none).
fn fit(lines: Vec<String>, width: usize, height: usize) -> Vec<String> {
    lines
        .into_iter()
        .take(height)
        .map(|l| console::truncate_str(&l, width, "").into_owned())
        .collect()
}

fn describe(phase: &Phase) -> String {
    match phase.rate {
        Some(r) => format!("{r:.0} ops/s"),
        None => "max rate".to_string(),
    }
}

/// A region key escaped as the shell prints it, cut to [`KEY_WIDTH`].
fn short_key(key: Option<&Vec<u8>>, empty: &str) -> String {
    let text = match key {
        Some(k) if !k.is_empty() => escape_key(k),
        _ => empty.to_string(),
    };
    if text.chars().count() > KEY_WIDTH {
        let cut: String = text.chars().take(KEY_WIDTH - 1).collect();
        format!("{cut}~")
    } else {
        text
    }
}

/// A [`LiveView`] drawn at the bottom of a terminal: each interval's line
/// is printed above it, then the view is drawn again in place.
pub struct LiveScreen {
    term: Term,
    view: LiveView,
    /// Lines of the view now on screen (to clear before the next draw).
    drawn: usize,
}

impl LiveScreen {
    /// A screen on standard output, for `layout`, drawn at once.
    pub fn start(layout: &RunLayout) -> io::Result<Self> {
        let mut screen = LiveScreen {
            term: Term::buffered_stdout(),
            view: LiveView::new(layout),
            drawn: 0,
        };
        screen.redraw(None)?;
        Ok(screen)
    }

    /// Prints `line` above the view and redraws it with `record`.
    pub fn interval(
        &mut self,
        line: &str,
        record: &IntervalRecord,
        region_ops: &[u64],
    ) -> io::Result<()> {
        self.view.observe(record, region_ops);
        self.redraw(Some(line))
    }

    /// Removes the view, leaving the interval lines.
    pub fn finish(&mut self) -> io::Result<()> {
        self.clear()?;
        self.term.flush()
    }

    fn clear(&mut self) -> io::Result<()> {
        if self.drawn > 0 {
            self.term.clear_last_lines(self.drawn)?;
            self.drawn = 0;
        }
        Ok(())
    }

    fn redraw(&mut self, line_above: Option<&str>) -> io::Result<()> {
        let (rows, columns) = self.term.size_checked().unwrap_or((24, 80));
        self.clear()?;
        if let Some(line) = line_above {
            self.term.write_line(line)?;
        }
        // One column short of the width and one row short of the height, so
        // that no line wraps and the view never scrolls itself off screen:
        // the count of lines to clear next time must be exact.
        let lines = self.view.render_styled(
            usize::from(columns).saturating_sub(1).max(20),
            usize::from(rows).saturating_sub(1).max(3),
        );
        for l in &lines {
            self.term.write_line(l)?;
        }
        self.drawn = lines.len();
        self.term.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::{IntervalSlot, Phase};
    use hdrhistogram::Histogram;

    fn layout() -> RunLayout {
        RunLayout {
            phases: vec![
                Phase {
                    rate: Some(1000.0),
                    start_ns: 0,
                    end_ns: 2_000_000_000,
                    warmup: true,
                },
                Phase {
                    rate: Some(1000.0),
                    start_ns: 2_000_000_000,
                    end_ns: 6_000_000_000,
                    warmup: false,
                },
                Phase {
                    rate: Some(2000.0),
                    start_ns: 6_000_000_000,
                    end_ns: 10_000_000_000,
                    warmup: false,
                },
            ],
            region_starts: vec![b"".to_vec(), b"g".to_vec(), b"p".to_vec()],
            region_ends: vec![b"g".to_vec(), b"p".to_vec(), b"".to_vec()],
            threads: 2,
            closed_loop: false,
            target: "strata".to_owned(),
        }
    }

    /// An interval of `ops` operations, each with `service_us` of service
    /// time and `corrected_us` from its intended start.
    fn record(end_s: u64, ops: u64, corrected_us: u64, service_us: u64) -> IntervalRecord {
        let empty = Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        let mut slot = IntervalSlot::new(3, &empty);
        slot.ops = ops;
        slot.corrected.record_n(corrected_us * 1000, ops).unwrap();
        slot.service.record_n(service_us * 1000, ops).unwrap();
        slot.lag.record_n(2000, ops).unwrap();
        IntervalRecord::new(
            &slot,
            (end_s - 1) * 1_000_000_000,
            end_s * 1_000_000_000,
            Some(if end_s > 6 { 2000.0 } else { 1000.0 }),
            end_s <= 2,
            0,
        )
    }

    #[test]
    fn before_the_first_interval_the_view_says_it_is_waiting() {
        let view = LiveView::new(&layout());
        let lines = view.render(100, 40);
        assert!(lines[0].contains("open loop, 2 workers"), "{lines:?}");
        assert!(lines[0].contains("0.0/10.0 s"), "{lines:?}");
        assert_eq!(lines[1], "warm-up at 1000 ops/s: 0.0 s of 2.0 s");
        assert_eq!(lines[2], "waiting for the first interval...");
    }

    #[test]
    fn the_view_shows_phase_rate_latency_and_the_hottest_regions_by_share() {
        let mut view = LiveView::new(&layout());
        view.observe(&record(1, 1000, 10, 5), &[500, 300, 200]);
        view.observe(&record(2, 1000, 10, 5), &[500, 300, 200]);
        view.observe(&record(7, 1998, 20, 5), &[0, 1500, 498]);
        let lines = view.render(120, 40);
        let text = lines.join("\n");
        assert!(
            lines[0].contains("[##############------] 7.0/10.0 s 70%"),
            "{text}"
        );
        assert_eq!(lines[1], "step 2 of 2 at 2000 ops/s: 1.0 s of 4.0 s");
        assert!(
            lines[2].starts_with("rate       1998 ops/s of 2000 (-0.10%)"),
            "{text}"
        );
        assert!(lines[2].ends_with("lag p99 2.0us"), "{text}");
        // Warm-up operations are not measured ones.
        assert_eq!(
            lines[3],
            "measured ops 1998   errors 0   dropped 0 (so far)"
        );
        assert!(lines[5].starts_with("corrected"), "{text}");
        assert!(lines[5].contains("20us"), "{text}");
        assert!(lines[6].starts_with("service"), "{text}");
        assert!(lines[6].contains("5.0us"), "{text}");
        assert!(
            lines[7].contains("1998 ops in the interval over 3 region(s)"),
            "{text}"
        );
        // Largest share first; a region with no operations is not listed.
        assert!(lines[8].starts_with("  #1    g"), "{text}");
        assert!(lines[8].contains("75.1%"), "{text}");
        assert!(lines[9].starts_with("  #2    p"), "{text}");
        assert!(lines[9].contains("(end)"), "{text}");
        assert!(lines[9].contains("24.9%"), "{text}");
        assert_eq!(lines[10], "stalls: none");
        assert_eq!(lines.len(), 11);
    }

    #[test]
    fn a_stalled_interval_is_called_out_and_remembered() {
        let mut view = LiveView::new(&layout());
        view.observe(&record(3, 1000, 400_000, 5), &[1000, 0, 0]);
        let lines = view.render(120, 40);
        let text = lines.join("\n");
        assert!(
            text.contains("stalls: 1 interval(s), latest ending at 3.0 s"),
            "{text}"
        );
        assert!(
            text.contains("STALL in this interval: corrected p99 400.0ms vs service p99 5.0us"),
            "{text}"
        );
        view.observe(&record(4, 1000, 10, 5), &[1000, 0, 0]);
        let text = view.render(120, 40).join("\n");
        assert!(text.contains("stalls: 1 interval(s)"), "{text}");
        assert!(!text.contains("STALL in this interval"), "{text}");
    }

    #[test]
    fn a_target_without_regions_is_named_and_said_to_have_none() {
        let mut l = layout();
        l.region_starts.clear();
        l.region_ends.clear();
        l.target = "rocksdb".to_owned();
        let mut view = LiveView::new(&l);
        view.observe(&record(3, 1000, 10, 5), &[]);
        let lines = view.render(120, 40);
        let text = lines.join("\n");
        assert!(
            lines[0].starts_with("strata-loadgen open loop against rocksdb, 2 workers"),
            "{text}"
        );
        assert!(
            lines.contains(&"regions: none (rocksdb has no regions)".to_owned()),
            "{text}"
        );
        assert!(!text.contains("hottest regions"), "{text}");
    }

    #[test]
    fn only_the_five_hottest_regions_are_listed() {
        let mut l = layout();
        l.region_starts = (0..8u8).map(|i| vec![b'a' + i]).collect();
        l.region_ends = (1..9u8).map(|i| vec![b'a' + i]).collect();
        let mut view = LiveView::new(&l);
        view.observe(&record(3, 360, 10, 5), &[10, 80, 20, 70, 30, 60, 40, 50]);
        let lines = view.render(120, 40);
        let listed: Vec<&str> = lines
            .iter()
            .filter(|l| l.starts_with("  #"))
            .map(|l| l.get(2..4).unwrap_or_default())
            .collect();
        assert_eq!(listed, ["#1", "#3", "#5", "#7", "#6"]);
    }

    #[test]
    fn the_view_fits_the_terminal() {
        let mut view = LiveView::new(&layout());
        view.observe(&record(3, 1000, 10, 5), &[400, 300, 300]);
        let lines = view.render(30, 5);
        assert_eq!(lines.len(), 5);
        assert!(lines.iter().all(|l| l.chars().count() <= 30), "{lines:?}");
        // Styled lines are cut by their visible width, escape codes aside.
        for l in view.render_styled(30, 40) {
            assert!(console::measure_text_width(&l) <= 30, "{l:?}");
        }
    }
}
