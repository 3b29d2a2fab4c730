//! `strata-loadgen`: drives a strata table at a target rate, open loop,
//! and reports honest latency per interval and the load per region.
//!
//! * [`spec`]: options parsed and checked (rates, ramps, mix, distributions,
//!   key patterns, SLOs).
//! * [`schedule`]: intended start times and the dispatch rule (wait, run,
//!   or drop when more than `--max-lag` behind).
//! * [`keys`]: record numbers to row keys, records chosen by distribution,
//!   split keys for a pre-split table.
//! * [`report`]: interval lines, the summary and region table, JSON, the
//!   HdrHistogram interval log, the per-region timeline.
//! * [`live`]: the live terminal view.
//! * [`plots`]: `--report`, the run as plots (HTML or SVG).
//! * [`target`]: what the run drives (strata, RocksDB or fjall in process, an
//!   HBase Thrift1 server) and each operation as the target expresses it.
//! * [`compare`]: several engines' runs of the same schedule side by side.
//!
//! The run itself ([`run`]) spawns `threads` workers; each follows its own
//! share of the schedule and records into its own interval slot, which the
//! reporting thread swaps out once per interval.

pub mod compare;
pub mod keys;
pub mod live;
pub mod plots;
pub mod report;
pub mod schedule;
pub mod spec;
pub mod target;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use strata::{Put, Table};

use keys::{Chooser, KeySpace};
use report::{
    IntervalRecord, PhaseSummary, RegionLoad, RegionTimeline, RunSummary, TIMELINE_MAX_CELLS,
};
use schedule::{Arrival, Dispatch, Schedule, dispatch, latencies};
use spec::{Mix, OpKind, RateSpec, Slo};
pub use target::Target;
use target::{Operation, RegionSpan, Session};

/// The family every operation uses.
pub const FAMILY: &[u8] = b"f";
/// The qualifier of a record's value.
pub const QUALIFIER: &[u8] = b"v";
/// The qualifier increments add to.
pub const COUNTER: &[u8] = b"n";

/// Highest latency the histograms hold (1 hour, in ns); longer values are
/// clamped to it.
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;
/// How a thread waits for a point in time: it sleeps until [`SPIN_NS`]
/// before it, then spins. A sleep wakes late (by the kernel's timer slack,
/// 50 us by default on Linux, plus the wake-up), so the last stretch is spun
/// to start operations on time; a thread that mostly sleeps leaves the CPU
/// to the engine's threads and is favoured by the scheduler when it wakes,
/// where one that spins for whole gaps is preempted for milliseconds on a
/// busy machine (the schedule lag the run would then report is the
/// generator's, not the engine's).
///
/// With a 1 us timer slack ([`tighten_timer_slack`], Linux) a 20 us sleep
/// measured 16 us late at the median and 21 us at p99 on the 2-core
/// development machine: spinning the last 40 us covers that.
#[cfg(target_os = "linux")]
const SPIN_NS: u64 = 40_000;
/// Elsewhere sleeps overshoot by up to about 100 us.
#[cfg(not(target_os = "linux"))]
const SPIN_NS: u64 = 200_000;

/// Everything a run needs to know.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    /// Target rate(s), or closed loop.
    pub rate: RateSpec,
    /// Length of each step of a ramp.
    pub step_every: Duration,
    /// Warm-up (at the first rate), measured and reported apart.
    pub warmup: Duration,
    /// Length of a fixed-rate (or closed-loop) run after warm-up.
    pub duration: Duration,
    /// Worker threads.
    pub threads: usize,
    /// Spacing of intended starts.
    pub arrival: Arrival,
    /// Operations later than this are dropped (counted, not run).
    pub max_lag: Duration,
    /// The operation mix.
    pub mix: Mix,
    /// How existing records are chosen.
    pub chooser: Chooser,
    /// Row keys.
    pub keys: KeySpace,
    /// Value size in bytes.
    pub value_bytes: usize,
    /// Rows per scan.
    pub scan_rows: u64,
    /// Keys per get_many.
    pub batch: usize,
    /// Records present when the run starts (preloaded or existing).
    pub records: u64,
    /// Reporting interval.
    pub interval: Duration,
    /// The latency objective a ramp is judged by.
    pub slo: Option<Slo>,
    /// Seed of every random choice.
    pub seed: u64,
    /// Test hook: stall every operation from `.0` after the start (warm-up
    /// included) for `.1`, as an engine pause would.
    pub pause: Option<(Duration, Duration)>,
}

/// An error of a run: what went wrong.
#[derive(Debug)]
pub struct RunError(pub String);

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RunError {}

impl From<strata::Error> for RunError {
    fn from(e: strata::Error) -> Self {
        RunError(e.to_string())
    }
}

/// An empty latency histogram: 3 significant digits from 1 ns to an hour.
fn histogram() -> Result<Histogram<u64>, RunError> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
        .map_err(|e| RunError(format!("latency histogram: {e:?}")))
}

/// One worker's measurements since the reporter last took them.
#[derive(Clone)]
pub struct IntervalSlot {
    /// Latency from the intended start, ns.
    pub corrected: Histogram<u64>,
    /// Latency from the actual start, ns.
    pub service: Histogram<u64>,
    /// Schedule lag of operations that ran, ns.
    pub lag: Histogram<u64>,
    /// Operations completed (with or without error).
    pub ops: u64,
    /// Operations that returned an error.
    pub errors: u64,
    /// Operations dropped for being more than `--max-lag` late.
    pub dropped: u64,
    /// Operations per region (index into the run's region list).
    pub per_region: Vec<u64>,
    /// The first error's message, if any.
    pub first_error: Option<String>,
}

impl IntervalSlot {
    /// An empty slot for `regions` regions, its histograms shaped like
    /// `empty`.
    pub fn new(regions: usize, empty: &Histogram<u64>) -> Self {
        IntervalSlot {
            corrected: empty.clone(),
            service: empty.clone(),
            lag: empty.clone(),
            ops: 0,
            errors: 0,
            dropped: 0,
            per_region: vec![0; regions],
            first_error: None,
        }
    }

    /// Adds `other` into this slot.
    pub fn merge(&mut self, other: &IntervalSlot) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.corrected.add(&other.corrected);
        let _ = self.service.add(&other.service);
        let _ = self.lag.add(&other.lag);
        self.ops += other.ops;
        self.errors += other.errors;
        self.dropped += other.dropped;
        for (a, b) in self.per_region.iter_mut().zip(&other.per_region) {
            *a += b;
        }
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
    }
}

/// A phase of the run: warm-up or one rate step.
#[derive(Debug, Clone, Copy)]
pub struct Phase {
    /// Rate (ops/s), `None` closed loop.
    pub rate: Option<f64>,
    /// Start, ns since the run's start.
    pub start_ns: u64,
    /// End, ns since the run's start.
    pub end_ns: u64,
    /// Whether this is the warm-up.
    pub warmup: bool,
}

/// The phases of `spec`, back to back from 0.
pub fn phases(spec: &LoadSpec) -> Vec<Phase> {
    let mut out = Vec::new();
    let mut at = 0u64;
    let mut push = |rate: Option<f64>, length: Duration, warmup: bool| {
        let end = at + length.as_nanos() as u64;
        if end > at {
            out.push(Phase {
                rate,
                start_ns: at,
                end_ns: end,
                warmup,
            });
        }
        at = end;
    };
    match &spec.rate {
        RateSpec::Max => {
            push(None, spec.warmup, true);
            push(None, spec.duration, false);
        }
        RateSpec::Steps(rates) if rates.len() == 1 => {
            push(rates.first().copied(), spec.warmup, true);
            push(rates.first().copied(), spec.duration, false);
        }
        RateSpec::Steps(rates) => {
            push(rates.first().copied(), spec.warmup, true);
            for r in rates {
                push(Some(*r), spec.step_every, false);
            }
        }
    }
    out
}

/// What a run looks like before it starts: its phases and the regions it
/// counts operations by.
#[derive(Debug, Clone)]
pub struct RunLayout {
    /// Warm-up and rate steps, back to back.
    pub phases: Vec<Phase>,
    /// Region start keys in order, as the table was split at the start
    /// (the first is empty); none for a target without regions (RocksDB,
    /// fjall).
    pub region_starts: Vec<Vec<u8>>,
    /// Region end keys (exclusive; empty for the last).
    pub region_ends: Vec<Vec<u8>>,
    /// Worker threads.
    pub threads: usize,
    /// `--rate max`.
    pub closed_loop: bool,
    /// What the run drives ([`Target::name`]).
    pub target: String,
}

impl RunLayout {
    /// End of the last phase, ns since the run's start.
    pub fn end_ns(&self) -> u64 {
        self.phases.last().map_or(0, |p| p.end_ns)
    }
}

/// What [`run`] tells its caller as it goes (on the reporting thread, so a
/// slow handler delays the next interval's cut, not the workers).
pub enum Progress<'a> {
    /// The workers are about to start.
    Started(&'a RunLayout),
    /// An interval closed.
    Interval {
        /// Its measurements.
        record: &'a IntervalRecord,
        /// Its operations per region (index into the layout's regions).
        region_ops: &'a [u64],
        /// The run's layout.
        layout: &'a RunLayout,
    },
}

/// Shared by the workers and the reporter.
struct Shared {
    spec: LoadSpec,
    target: Target,
    phases: Vec<Phase>,
    /// Region start keys in order (the first is empty).
    region_starts: Vec<Vec<u8>>,
    slots: Vec<Mutex<IntervalSlot>>,
    /// Records that exist: preloaded plus inserted by `put`.
    records: AtomicU64,
    /// Operations take it shared; the pause hook takes it exclusively.
    pause_gate: RwLock<()>,
    started: Instant,
    stop: AtomicBool,
}

impl Shared {
    fn now_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    fn region_of(&self, key: &[u8]) -> usize {
        self.region_starts
            .partition_point(|s| s.as_slice() <= key)
            .saturating_sub(1)
    }
}

/// Runs `spec` against `target`; tells `on_progress` when it starts and
/// each interval as it closes (for the interval lines and the live view)
/// and returns the summary.
pub fn run(
    spec: LoadSpec,
    target: Target,
    mut on_progress: impl FnMut(Progress<'_>),
) -> Result<RunSummary, RunError> {
    if spec.threads == 0 || spec.threads > 1024 {
        return Err(RunError(format!(
            "--threads {}: must be in 1..=1024",
            spec.threads
        )));
    }
    target.check_mix(&spec.mix)?;
    let regions_before = target.regions()?;
    let layout = RunLayout {
        phases: phases(&spec),
        region_starts: regions_before.iter().map(|r| r.start_key.clone()).collect(),
        region_ends: regions_before.iter().map(|r| r.end_key.clone()).collect(),
        threads: spec.threads,
        closed_loop: spec.rate == RateSpec::Max,
        target: target.name(),
    };
    // Connections are opened before the clock starts: a server that cannot be reached is
    // an error now, and connecting is not in the first operations' latency.
    let sessions = (0..spec.threads)
        .map(|_| target.session())
        .collect::<Result<Vec<Session>, RunError>>()?;
    let regions = layout.region_starts.len();
    let end_ns = layout.end_ns();
    let mut timeline = RegionTimeline::new(regions, TIMELINE_MAX_CELLS);
    let empty = histogram()?;
    // Before the clock starts, so that a slow handler does not make the
    // first operations late.
    on_progress(Progress::Started(&layout));
    let shared = Arc::new(Shared {
        slots: (0..spec.threads)
            .map(|_| Mutex::new(IntervalSlot::new(regions, &empty)))
            .collect(),
        records: AtomicU64::new(spec.records),
        phases: layout.phases.clone(),
        region_starts: layout.region_starts.clone(),
        pause_gate: RwLock::new(()),
        started: Instant::now(),
        stop: AtomicBool::new(false),
        spec,
        target,
    });
    let mut workers = Vec::new();
    for (worker, mut session) in sessions.into_iter().enumerate() {
        let s = shared.clone();
        workers.push(std::thread::spawn(move || work(&s, worker, &mut session)));
    }
    let pauser = shared.spec.pause.map(|(at, length)| {
        let s = shared.clone();
        std::thread::spawn(move || {
            sleep_until(&s, at.as_nanos() as u64);
            if s.stop.load(Ordering::Relaxed) {
                return;
            }
            let _held = s.pause_gate.write();
            std::thread::sleep(length);
        })
    });
    // The reporter: one record per interval; phases are cut at interval
    // boundaries that fall inside them.
    let interval_ns = shared.spec.interval.as_nanos().max(1) as u64;
    let mut intervals = Vec::new();
    let mut phase_totals: Vec<IntervalSlot> = shared
        .phases
        .iter()
        .map(|_| IntervalSlot::new(regions, &empty))
        .collect();
    let mut run_total = IntervalSlot::new(regions, &empty);
    let mut interval_start = 0u64;
    let mut last_stall_micros = shared.target.stall_micros();
    while interval_start < end_ns {
        let phase_index = shared
            .phases
            .iter()
            .position(|p| interval_start < p.end_ns)
            .unwrap_or(0);
        let phase = shared.phases[phase_index];
        let interval_end = (interval_start + interval_ns).min(phase.end_ns);
        sleep_until(&shared, interval_end);
        let mut slot = IntervalSlot::new(regions, &empty);
        for s in &shared.slots {
            let taken = {
                let mut guard = s.lock().map_err(|_| RunError("a worker panicked".into()))?;
                std::mem::replace(&mut *guard, IntervalSlot::new(regions, &empty))
            };
            slot.merge(&taken);
        }
        let stalls_now = shared.target.stall_micros();
        let engine_stall_us = stalls_now.saturating_sub(last_stall_micros);
        last_stall_micros = stalls_now;
        let record = IntervalRecord::new(
            &slot,
            interval_start,
            interval_end,
            phase.rate,
            phase.warmup,
            engine_stall_us,
        );
        on_progress(Progress::Interval {
            record: &record,
            region_ops: &slot.per_region,
            layout: &layout,
        });
        timeline.push(
            interval_start as f64 / 1e9,
            interval_end as f64 / 1e9,
            &slot.per_region,
        );
        intervals.push(record);
        if !phase.warmup {
            run_total.merge(&slot);
        }
        if let Some(t) = phase_totals.get_mut(phase_index) {
            t.merge(&slot);
        }
        interval_start = interval_end;
    }
    shared.stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().map_err(|_| RunError("a worker panicked".into()))?;
    }
    if let Some(p) = pauser {
        p.join()
            .map_err(|_| RunError("the pause hook panicked".into()))?;
    }
    // Operations still in flight at the end went into the slots after the
    // last interval closed: count them into the last phase.
    for s in &shared.slots {
        if let Ok(guard) = s.lock() {
            run_total.merge(&guard);
            if let Some(t) = phase_totals.last_mut() {
                t.merge(&guard);
            }
        }
    }
    let regions_after: Vec<RegionSpan> = match &shared.target {
        // A dry run's one region never splits and has no counters to read again.
        Target::DryRun => Vec::new(),
        target => target.regions()?,
    };
    // Each split adds one region.
    let splits = regions_after.len().saturating_sub(regions);
    let region_loads = RegionLoad::table(&regions_before, &run_total.per_region, &regions_after);
    let phase_summaries: Vec<PhaseSummary> = shared
        .phases
        .iter()
        .zip(&phase_totals)
        .map(|(p, t)| PhaseSummary::new(p, t, shared.spec.slo))
        .collect();
    Ok(RunSummary::new(
        &shared.spec,
        layout.target.clone(),
        &run_total,
        phase_summaries,
        intervals,
        region_loads,
        timeline,
        splits,
        shared.records.load(Ordering::Relaxed),
    ))
}

/// Sleeps (then spins) until `at_ns` after the run's start, or until the
/// run stops.
fn sleep_until(shared: &Shared, at_ns: u64) {
    loop {
        let now = shared.now_ns();
        if now >= at_ns || shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let left = at_ns - now;
        if left > SPIN_NS {
            std::thread::sleep(Duration::from_nanos(left - SPIN_NS));
        } else {
            std::hint::spin_loop();
            std::thread::yield_now();
        }
    }
}

/// Asks the kernel to wake this thread's sleeps within 1 us of their time
/// instead of the default 50 us slack, so that workers can sleep through
/// most of a gap (see [`SPIN_NS`]). Best effort: if the call fails, sleeps
/// are only later and the spin absorbs part of it.
#[cfg(target_os = "linux")]
fn tighten_timer_slack() {
    /// Timer slack, ns.
    const SLACK_NS: libc::c_ulong = 1_000;
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and only changes
    // the calling thread's timer slack; no memory is passed.
    let _ = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, SLACK_NS, 0, 0, 0) };
}

#[cfg(not(target_os = "linux"))]
fn tighten_timer_slack() {}

/// One worker: its share of every phase's schedule.
fn work(shared: &Shared, worker: usize, session: &mut Session) {
    tighten_timer_slack();
    let spec = &shared.spec;
    let mut rng = SmallRng::seed_from_u64(spec.seed ^ keys::mix64(worker as u64 + 1));
    let mut buffers = Buffers::new(spec, &mut rng);
    let max_lag_ns = spec.max_lag.as_nanos() as u64;
    for phase in &shared.phases {
        let mut schedule = phase
            .rate
            .map(|r| Schedule::new(r, spec.threads, worker, phase.start_ns, spec.arrival));
        loop {
            let intended = match &mut schedule {
                Some(s) => s.next(&mut rng),
                None => shared.now_ns(),
            };
            if intended >= phase.end_ns {
                break;
            }
            let start = loop {
                if shared.stop.load(Ordering::Relaxed) {
                    break Start::Stopped;
                }
                let now = shared.now_ns();
                match dispatch(intended, now, max_lag_ns) {
                    Dispatch::Wait(ns) if ns > SPIN_NS => {
                        std::thread::sleep(Duration::from_nanos(ns - SPIN_NS));
                    }
                    Dispatch::Wait(_) => std::hint::spin_loop(),
                    Dispatch::Run { .. } => break Start::Run(now),
                    Dispatch::Drop => break Start::Dropped,
                }
            };
            let started = match start {
                Start::Run(now) => now,
                Start::Dropped => {
                    if let Ok(mut slot) = shared.slots[worker].lock() {
                        slot.dropped += 1;
                    }
                    continue;
                }
                Start::Stopped => {
                    count_unrun(
                        shared,
                        worker,
                        intended,
                        phase.end_ns,
                        schedule.as_mut(),
                        &mut rng,
                    );
                    return;
                }
            };
            let kind = spec.mix.pick(rng.random::<f64>());
            let outcome = {
                let _open = shared.pause_gate.read();
                execute(shared, session, kind, &mut rng, &mut buffers)
            };
            let finished = shared.now_ns();
            if phase.warmup && finished >= phase.end_ns {
                // A warm-up operation that ran late would land in the measured phase's
                // interval (intervals are closed by wall time): it is not counted.
                continue;
            }
            let (corrected, service) = latencies(intended, started, finished);
            if let Ok(mut slot) = shared.slots[worker].lock() {
                slot.ops += 1;
                let _ = slot.corrected.record(corrected.clamp(1, MAX_LATENCY_NS));
                let _ = slot.service.record(service.clamp(1, MAX_LATENCY_NS));
                let _ = slot
                    .lag
                    .record((started - intended).clamp(1, MAX_LATENCY_NS));
                match outcome {
                    Ok(region) => {
                        if let Some(n) = slot.per_region.get_mut(region) {
                            *n += 1;
                        }
                    }
                    Err(e) => {
                        slot.errors += 1;
                        if slot.first_error.is_none() {
                            slot.first_error = Some(format!("{}: {e}", kind.name()));
                        }
                    }
                }
            }
        }
    }
}

/// What became of an operation waiting for its intended time.
enum Start {
    /// It starts now (ns since the run's start).
    Run(u64),
    /// It was more than `--max-lag` late: counted, not run.
    Dropped,
    /// The run stopped first.
    Stopped,
}

/// At a stop, the operations of the current phase that were due (intended before the
/// phase's end and before now) but never started, beginning with `intended`, are counted as
/// dropped: every scheduled operation either ran or is counted, however far behind a busy
/// machine left the workers.
fn count_unrun(
    shared: &Shared,
    worker: usize,
    mut intended: u64,
    end_ns: u64,
    schedule: Option<&mut Schedule>,
    rng: &mut SmallRng,
) {
    let Some(schedule) = schedule else { return };
    let due_before = end_ns.min(shared.now_ns());
    let mut unrun = 0;
    while intended < due_before {
        unrun += 1;
        intended = schedule.next(rng);
    }
    if let Ok(mut slot) = shared.slots[worker].lock() {
        slot.dropped += unrun;
    }
}

/// A worker's reusable key and value buffers.
struct Buffers {
    key: Vec<u8>,
    /// The keys of a `get_many` (the first is `key`'s record).
    batch: Vec<Vec<u8>>,
    /// Random bytes; values are windows of it.
    noise: Vec<u8>,
}

impl Buffers {
    fn new(spec: &LoadSpec, rng: &mut SmallRng) -> Self {
        Buffers {
            key: Vec::with_capacity(64),
            batch: Vec::new(),
            noise: (0..spec.value_bytes * 2 + 64)
                .map(|_| rng.random::<u8>())
                .collect(),
        }
    }

    fn value(&self, rng: &mut SmallRng, len: usize) -> &[u8] {
        let at = rng.random_range(0..self.noise.len() - len);
        &self.noise[at..at + len]
    }
}

/// Draws one operation's records, keys and values (the same draws whatever the target,
/// so every engine gets the same operations) and runs it; returns the region of its
/// (first) key.
fn execute(
    shared: &Shared,
    session: &mut Session,
    kind: OpKind,
    rng: &mut SmallRng,
    buffers: &mut Buffers,
) -> Result<usize, String> {
    let spec = &shared.spec;
    let record = if kind == OpKind::Put {
        shared.records.fetch_add(1, Ordering::Relaxed)
    } else {
        spec.chooser
            .pick(shared.records.load(Ordering::Relaxed), rng)
    };
    spec.keys.write_key(record, &mut buffers.key);
    let region = shared.region_of(&buffers.key);
    if let Target::DryRun = shared.target {
        return Ok(region);
    }
    if kind == OpKind::GetMany {
        let count = shared.records.load(Ordering::Relaxed);
        buffers.batch.resize_with(spec.batch, Vec::new);
        for (i, key) in buffers.batch.iter_mut().enumerate() {
            if i == 0 {
                key.clone_from(&buffers.key);
            } else {
                spec.keys.write_key(spec.chooser.pick(count, rng), key);
            }
        }
    }
    let row = buffers.key.as_slice();
    let operation = match kind {
        OpKind::Get => Operation::Get { row },
        OpKind::Put | OpKind::Update => Operation::Put {
            row,
            value: buffers.value(rng, spec.value_bytes),
        },
        OpKind::Scan => Operation::Scan {
            start: row,
            rows: spec.scan_rows,
        },
        OpKind::Increment => Operation::Increment { row },
        OpKind::Delete => Operation::Delete { row },
        OpKind::GetMany => Operation::GetMany {
            rows: &buffers.batch,
        },
        OpKind::CheckAndMutate => Operation::CheckAndPut {
            row,
            expected: buffers.value(rng, spec.value_bytes),
            value: buffers.value(rng, spec.value_bytes),
        },
    };
    shared.target.execute(session, operation)?;
    Ok(region)
}

/// Records a preload writes per batch.
pub const PRELOAD_BATCH_RECORDS: usize = 1000;

/// Loads `records` records (keys 0..records by the spec's pattern) into a
/// strata table with `put_many` batches; untimed by the run, timed here for
/// the report.
pub fn preload(table: &Table, spec: &LoadSpec) -> Result<Duration, RunError> {
    preload_with(spec, |records| {
        let puts: Vec<Put> = records
            .iter()
            .map(|(key, value)| Put::new(key).add(FAMILY, QUALIFIER, value))
            .collect();
        table.put_many(&puts).map_err(|e| e.to_string())
    })
}

/// Hands `write` the records of a preload in batches of
/// [`PRELOAD_BATCH_RECORDS`] `(key, value)` pairs: keys 0..records by the
/// spec's pattern, values drawn from the spec's seed, so every target is
/// loaded with the same records. Returns how long it took.
pub fn preload_with(
    spec: &LoadSpec,
    mut write: impl FnMut(&[(Vec<u8>, Vec<u8>)]) -> Result<(), String>,
) -> Result<Duration, RunError> {
    let started = Instant::now();
    let mut rng = SmallRng::seed_from_u64(spec.seed);
    let buffers = Buffers::new(spec, &mut rng);
    let mut batch = Vec::with_capacity(PRELOAD_BATCH_RECORDS);
    for record in 0..spec.records {
        let mut key = Vec::new();
        spec.keys.write_key(record, &mut key);
        batch.push((key, buffers.value(&mut rng, spec.value_bytes).to_vec()));
        if batch.len() == PRELOAD_BATCH_RECORDS {
            write(&batch).map_err(|e| RunError(format!("preloading: {e}")))?;
            batch.clear();
        }
    }
    if !batch.is_empty() {
        write(&batch).map_err(|e| RunError(format!("preloading: {e}")))?;
    }
    Ok(started.elapsed())
}
