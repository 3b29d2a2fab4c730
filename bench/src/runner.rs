//! Runs workloads against engines: a fresh directory per engine, workload
//! and repetition; the untimed load; the timed phase with its measurements
//! (with `--cold`, the page cache evicted before every operation, untimed);
//! settling; the result record. With `--isolate`, each run in a child
//! process of its own.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use parking_lot::Mutex;

use crate::cold::PageCacheEvictor;
use crate::config::{ChildCommand, RunConfig};
use crate::engine::{self, Engine, WalCounters};
use crate::error::{BenchError, Result};
use crate::keys::{ValuePool, permutation};
use crate::measure::{self, ProcessSnapshot};
use crate::pages::Census;
use crate::random::Rng;
use crate::report::{LoadResult, RunResult, WalReport};
use crate::settings::{DurabilityChoice, EngineKind, IoChoice};
use crate::workload::{LoadOrder, PhaseContext, ThreadOutcome, Workload, load_thread, run_thread};
use crate::ycsb::InsertCounter;

/// A phase shows its progress bar only once it has run this long.
const PROGRESS_BAR_DELAY: Duration = Duration::from_secs(2);
/// How often the progress bar is redrawn.
const PROGRESS_REFRESH: Duration = Duration::from_millis(100);

/// Runs every workload of `config`; within each workload and repetition
/// the engines run one after the other (A B A B ... across repetitions),
/// strata once per I/O back end of `--io uring,sync`.
/// `on_result` sees each result as soon as it exists.
pub fn run_all(
    config: &RunConfig,
    mut on_result: impl FnMut(&RunResult),
) -> Result<Vec<RunResult>> {
    config.validate()?;
    let mut results = Vec::new();
    for &workload in &config.workloads {
        for run in config.first_run..config.first_run.saturating_add(config.repeat) {
            for &engine in &config.engines {
                let io_variants = match engine {
                    EngineKind::Strata => config.strata_io_variants(),
                    // The peers have no choice of back end.
                    EngineKind::RocksDb | EngineKind::Fjall => vec![None],
                };
                for io in io_variants {
                    let result = match &config.isolate {
                        Some(child) => run_isolated(config, child, engine, io, workload, run)?,
                        None => run_one(config, engine, io, workload, run)?,
                    };
                    on_result(&result);
                    results.push(result);
                }
            }
        }
    }
    Ok(results)
}

/// Runs `workload` once against `engine_kind` in a child process started by
/// `child` (`--isolate`), which runs [`run_one`] with the same settings and
/// hands its result back as JSON; the child's failure is this run's, with
/// what it printed.
pub fn run_isolated(
    config: &RunConfig,
    child: &ChildCommand,
    engine_kind: EngineKind,
    io: Option<IoChoice>,
    workload: Workload,
    run: u32,
) -> Result<RunResult> {
    let output_file = tempfile::NamedTempFile::new()
        .map_err(|e| BenchError::io("creating a child run's result file", e))?;
    let mut command = Command::new(&child.program);
    command
        .args(&child.args)
        .args(["--engines", engine_kind.name()])
        .args(["--workloads", workload.name()])
        .args(["--num", &config.num.to_string()])
        .args(["--repeat", "1", "--run-number", &run.to_string()])
        .arg("--no-progress")
        .arg("--json")
        .arg(output_file.path());
    if let Some(io) = io {
        command.args(["--io", io.name()]);
    }
    let label = format!("{} {} run {run}", engine_kind.name(), workload.name());
    let output = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| BenchError::io(format!("starting the child process of {label}"), e))?;
    if !output.status.success() {
        let printed = String::from_utf8_lossy(&output.stderr);
        return Err(BenchError::Child(format!(
            "the child process of {label} failed ({}): {}",
            output.status,
            printed.trim()
        )));
    }
    let text = std::fs::read_to_string(output_file.path())
        .map_err(|e| BenchError::io(format!("reading the result of {label}"), e))?;
    let mut results: Vec<RunResult> = serde_json::from_str(&text)?;
    match (results.pop(), results.is_empty()) {
        (Some(result), true) => Ok(result),
        _ => Err(BenchError::Child(format!(
            "the child process of {label} returned {} results instead of one",
            results.len() + 1
        ))),
    }
}

/// Runs `workload` once against `engine_kind` in a fresh directory; `io` is
/// strata's I/O back end (`None`: strata chooses; the peers ignore it).
pub fn run_one(
    config: &RunConfig,
    engine_kind: EngineKind,
    io: Option<IoChoice>,
    workload: Workload,
    run: u32,
) -> Result<RunResult> {
    measure::release_free_memory();
    let dir = run_directory(config, engine_kind, workload, run)?;
    let mut settings = config.settings.clone();
    settings.io = io;
    let engine = engine::open(engine_kind, dir.path(), &settings)?;
    let result = measure_run(
        config,
        engine_kind,
        engine.as_ref(),
        workload,
        run,
        dir.path(),
    );
    let closed = engine.close();
    let result = result?;
    closed?;
    drop(dir);
    Ok(result)
}

fn run_directory(
    config: &RunConfig,
    engine: EngineKind,
    workload: Workload,
    run: u32,
) -> Result<tempfile::TempDir> {
    let prefix = format!("strata-bench-{}-{}-{run}-", engine.name(), workload.name());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    match &config.dir {
        Some(parent) => {
            std::fs::create_dir_all(parent)
                .map_err(|e| BenchError::io(format!("creating {}", parent.display()), e))?;
            builder.tempdir_in(parent)
        }
        None => builder.tempdir(),
    }
    .map_err(|e| BenchError::io("creating a run directory", e))
}

fn measure_run(
    config: &RunConfig,
    engine_kind: EngineKind,
    engine: &dyn Engine,
    workload: Workload,
    run: u32,
    dir: &std::path::Path,
) -> Result<RunResult> {
    let shape = workload.key_shape(config.key_bytes);
    let value_bytes = workload.value_bytes(config.value_bytes);
    let values = ValuePool::of(config.values, value_bytes, config.seed);
    let ops = workload.ops(config.num, config.ops);
    let label = format!("{} {}", engine_kind.name(), workload.name());

    // Record order: fillrandom's permutation, also the order of random loads.
    let needs_order =
        workload == Workload::FillRandom || workload.load_order() == Some(LoadOrder::Random);
    let order = needs_order.then(|| permutation(config.num, &mut Rng::new(config.seed)));
    let census = workload.is_filter_scan().then(|| Census::new(config.num));
    let inserts = InsertCounter::new(config.num);
    let bulk_dir = dir.join("bulk-input");
    let progress = AtomicU64::new(0);
    let readers_finished = AtomicUsize::new(0);
    let ctx = PhaseContext {
        engine,
        workload,
        shape,
        values: &values,
        num: config.num,
        ops,
        threads: config.threads,
        seed: config.seed,
        order: order.as_deref(),
        inserts: &inserts,
        progress: &progress,
        readers_finished: &readers_finished,
        census: census.as_ref(),
        evictor: None,
        bulk_dir: Some(&bulk_dir),
    };

    let load = match workload.load_order() {
        Some(load_order) => Some(load_phase(config, &ctx, load_order, &label)?),
        None => None,
    };

    let warmed = load.is_some() && config.warm;
    if warmed {
        // Warm reads: one untimed pass over every record, so the timed phase
        // finds the blocks its engine caches.
        let pass = engine.scan(&[], None, u64::MAX)?;
        if pass.entries == 0 {
            return Err(BenchError::Check(format!(
                "{label}: the warm-up pass read no record"
            )));
        }
    }
    if load.is_some() {
        // What the load freed (flushed memtables) but the allocator still
        // holds goes back to the kernel first, for every engine alike, so
        // peak RSS measures the timed phase and not the load's leftovers.
        measure::release_free_memory();
    }

    // Cold reads: the files are listed, opened and synced once, before the
    // clock starts (the load and settle above have written them); the
    // threads then evict their pages before every operation, untimed.
    let evictor = if config.cold {
        Some(Mutex::new(PageCacheEvictor::new(dir)?))
    } else {
        None
    };
    let ctx = PhaseContext {
        evictor: evictor.as_ref(),
        ..ctx
    };

    // The timed phase.
    progress.store(0, std::sync::atomic::Ordering::Relaxed);
    let wal_before = engine.wal_counters();
    measure::reset_peak_rss();
    let counters_before = engine.counters();
    let before = ProcessSnapshot::take()?;
    let start = Instant::now();
    let worker_threads = if workload == Workload::ReadWhileWriting {
        config.threads + 1
    } else {
        config.threads
    };
    let outcomes = parallel(
        worker_threads,
        &label,
        ops,
        config.progress,
        &progress,
        |t| run_thread(&ctx, t),
    )?;
    let ops_done = start.elapsed();
    if workload.ends_with_flush() {
        engine.load_finished()?;
    }
    let elapsed = start.elapsed();
    let timed_counters = counter_changes(&counters_before, &engine.counters());
    let wal_after = engine.wal_counters();
    // Closes the evictor's handles before settling and measuring disk use.
    let eviction = evictor.map(|e| e.into_inner().report());
    engine.settle()?;
    let after = ProcessSnapshot::take()?;
    let peak_rss_bytes = measure::peak_rss_bytes()?;
    let disk = measure::disk_usage(dir)?;
    let engine_counters = engine
        .counters()
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect();

    let (mut total, writer) = merge_outcomes(outcomes, workload, config.threads)?;
    if let Some(writer) = writer {
        // readwhilewriting: the writer's records count as writes, not ops.
        total.writes += writer.writes;
    }
    // Cold runs have one client thread (`RunConfig::validate`), so its
    // untimed evictions are exactly wall-clock time to take out; warm runs
    // have none.
    let seconds = elapsed.saturating_sub(total.untimed);
    if total.ops != ops {
        return Err(BenchError::Check(format!(
            "{label}: {} operations counted, {ops} requested",
            total.ops
        )));
    }
    let record_bytes = (shape.key_bytes() + value_bytes) as u64;
    let live_records = match workload {
        Workload::Ycsb(_) => inserts.count(),
        _ => config.num,
    };
    let bytes_written = after
        .disk_write_bytes
        .saturating_sub(before.disk_write_bytes);
    let secs = seconds.as_secs_f64().max(f64::MIN_POSITIVE);
    let has_latency = total.latencies.count() > 0;
    let latency = |q: f64| has_latency.then(|| total.latencies.quantile_us(q));
    Ok(RunResult {
        engine: engine_kind.name().into(),
        workload: workload.name().into(),
        run,
        num: config.num,
        threads: config.threads,
        key_size: shape.key_bytes(),
        value_size: value_bytes,
        durability: durability_name(config.settings.durability).into(),
        ops: total.ops,
        seconds: seconds.as_secs_f64(),
        finish_seconds: elapsed.saturating_sub(ops_done).as_secs_f64(),
        ops_per_sec: total.ops as f64 / secs,
        mb_per_sec: total.bytes as f64 / secs / 1e6,
        p50_us: latency(0.5),
        p99_us: latency(0.99),
        p999_us: latency(0.999),
        max_us: has_latency.then(|| total.latencies.max_us()),
        cpu_seconds: after.cpu.saturating_sub(before.cpu).as_secs_f64(),
        bytes_written,
        write_amp: (total.writes > 0)
            .then(|| bytes_written as f64 / (total.writes * record_bytes) as f64),
        disk_bytes: disk.allocated_bytes,
        disk_bytes_apparent: disk.apparent_bytes,
        space_amp: (live_records > 0)
            .then(|| disk.allocated_bytes as f64 / (live_records * record_bytes) as f64),
        live_records,
        peak_rss_bytes,
        reads: total.reads,
        found: total.found,
        writes: total.writes,
        scanned: total.scanned,
        engine_counters,
        timed_counters,
        io_backend: engine.io_backend().map(str::to_string),
        multiget_method: (workload == Workload::MultiGet)
            .then(|| engine.multi_get_method().to_string()),
        load,
        wal: match (wal_before, wal_after) {
            (Some(b), Some(a)) => Some(wal_report(a.since(b))),
            _ => None,
        },
        cold: config.cold,
        warm: warmed,
        block_cache_bytes: config.settings.cache_bytes,
        eviction,
        bulk: total.bulk,
    })
}

/// How each counter of `after` changed since `before` (counters missing
/// from `before` count from 0).
fn counter_changes(
    before: &[(&'static str, u64)],
    after: &[(&'static str, u64)],
) -> std::collections::BTreeMap<String, i64> {
    let signed = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    after
        .iter()
        .map(|&(name, value)| {
            let earlier = before
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(0, |&(_, v)| v);
            (
                name.to_string(),
                signed(value).saturating_sub(signed(earlier)),
            )
        })
        .collect()
}

fn durability_name(d: DurabilityChoice) -> &'static str {
    match d {
        DurabilityChoice::Skip => "skip",
        DurabilityChoice::Async => "async",
        DurabilityChoice::Sync => "sync",
    }
}

fn wal_report(c: WalCounters) -> WalReport {
    WalReport {
        groups: c.groups,
        frames: c.frames,
        avg_group_size: if c.groups == 0 {
            0.0
        } else {
            c.frames as f64 / c.groups as f64
        },
        syncs: c.syncs,
        avg_sync_us: if c.syncs == 0 {
            0.0
        } else {
            c.sync_micros as f64 / c.syncs as f64
        },
    }
}

/// Sums the client threads' outcomes; the extra writer thread of
/// `readwhilewriting` is returned apart.
fn merge_outcomes(
    outcomes: Vec<ThreadOutcome>,
    workload: Workload,
    threads: usize,
) -> Result<(ThreadOutcome, Option<ThreadOutcome>)> {
    let mut outcomes = outcomes.into_iter();
    let mut total = outcomes
        .next()
        .ok_or_else(|| BenchError::Check("a phase ran no thread".into()))?;
    let mut writer = None;
    for (i, outcome) in outcomes.enumerate() {
        if workload == Workload::ReadWhileWriting && i + 1 == threads {
            writer = Some(outcome);
        } else {
            total.merge(&outcome);
        }
    }
    Ok((total, writer))
}

/// The untimed load: records written in `order`, then `load_finished`
/// (timed as part of the load) and `settle` (not timed).
fn load_phase(
    config: &RunConfig,
    ctx: &PhaseContext<'_>,
    load_order: LoadOrder,
    label: &str,
) -> Result<LoadResult> {
    let load_ctx = PhaseContext {
        order: match load_order {
            LoadOrder::Random => ctx.order,
            LoadOrder::Ycsb => None,
        },
        progress: ctx.progress,
        ..*ctx
    };
    if config.regions > 1 {
        let num = config.num.max(1);
        let regions = config.regions as u64;
        let split_keys: Vec<Vec<u8>> = (1..regions)
            .map(|i| {
                let mut key = Vec::new();
                ctx.workload
                    .record_key(ctx.shape, num * i / regions, &mut key);
                key
            })
            .collect();
        ctx.engine.presplit(&split_keys)?;
    }
    let before = ProcessSnapshot::take()?;
    let start = Instant::now();
    let written = parallel(
        config.threads,
        &format!("{label} (load)"),
        config.num,
        config.progress,
        ctx.progress,
        |t| load_thread(&load_ctx, t),
    )?
    .into_iter()
    .sum::<u64>();
    ctx.engine.load_finished()?;
    let seconds = start.elapsed().as_secs_f64();
    ctx.engine.settle()?;
    let after = ProcessSnapshot::take()?;
    Ok(LoadResult {
        ops: written,
        seconds,
        ops_per_sec: written as f64 / seconds.max(f64::MIN_POSITIVE),
        bytes_written: after
            .disk_write_bytes
            .saturating_sub(before.disk_write_bytes),
    })
}

/// Runs `work(0..threads)` on scoped threads and returns their results in
/// thread order. The calling thread draws a progress bar on stderr once the
/// phase has run for `PROGRESS_BAR_DELAY`, and notices the end of the last
/// worker at once (workers report over a channel), so timing stays exact.
fn parallel<T: Send>(
    threads: usize,
    label: &str,
    total: u64,
    show_progress: bool,
    progress: &AtomicU64,
    work: impl Fn(usize) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let started = Instant::now();
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let work = &work;
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let done = done_tx.clone();
                scope.spawn(move || {
                    let result = work(t);
                    // The receiver outlives every worker inside the scope.
                    let _ = done.send(());
                    result
                })
            })
            .collect();
        drop(done_tx);
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let mut finished = 0;
        while finished < threads {
            match done_rx.recv_timeout(PROGRESS_REFRESH) {
                Ok(()) => finished += 1,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if show_progress && bar.is_hidden() && started.elapsed() >= PROGRESS_BAR_DELAY {
                bar.set_style(
                    ProgressStyle::with_template(
                        "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} ({per_sec}, eta {eta})",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                bar.set_prefix(label.to_string());
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.set_position(progress.load(std::sync::atomic::Ordering::Relaxed));
        }
        bar.finish_and_clear();
        handles
            .into_iter()
            .map(|h| {
                h.join().map_err(|_| {
                    BenchError::Check(format!("a worker thread of {label} panicked"))
                })?
            })
            .collect()
    })
}
