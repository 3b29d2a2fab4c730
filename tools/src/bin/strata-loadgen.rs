//! `strata-loadgen`: open-loop load at a target rate against a strata
//! table, RocksDB or fjall (`--engine`, with the `peers` feature) or any
//! HBase Thrift1 server (`--thrift`), with corrected and service latency per
//! interval and the load per region; several engines run the same schedule
//! in turn and are compared side by side. `docs/loadgen.md` explains the
//! options and the output.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use clap::{Parser, ValueEnum};
use strata::{Db, DbOptions, Durability, FamilyDescriptor, TableDescriptor};
use strata_tools::loadgen::compare::{Comparison, EngineRun};
use strata_tools::loadgen::keys::{Chooser, KeySpace};
use strata_tools::loadgen::live::LiveScreen;
use strata_tools::loadgen::plots::{self, ReportFormat};
use strata_tools::loadgen::report::{self, HdrLogRun, IntervalRecord, RunSummary};
use strata_tools::loadgen::schedule::Arrival;
use strata_tools::loadgen::spec::{
    Distribution, KeyPattern, Mix, Slo, SpecError, parse_count, parse_duration, parse_rate,
};
use strata_tools::loadgen::target::{self, EngineName, ThriftTarget};
use strata_tools::loadgen::{self, FAMILY, LoadSpec, Progress, Target};
use strata_tools::thrift::codec::Protocol;
use strata_tools::thrift::transport::{Transport, WireFormat};

/// Records preloaded into a fresh table when `--records` is not given.
const DEFAULT_RECORDS: u64 = 100_000;

#[derive(Parser)]
#[command(
    name = "strata-loadgen",
    version,
    about = "Open-loop load at a target rate against strata, RocksDB, fjall or an HBase Thrift1 \
             server: corrected and service latency per interval, the load per region, and \
             engines compared side by side"
)]
struct Args {
    /// Operations per second for the whole process (`50000`, `50k`), a ramp
    /// `FROM..TO` with --step, or `max` for a closed loop.
    #[arg(long, default_value = "10k")]
    rate: String,
    /// Step of a ramp (`10k`).
    #[arg(long)]
    step: Option<String>,
    /// Length of each ramp step (`30s`).
    #[arg(long, default_value = "30s")]
    step_every: String,
    /// Worker threads sharing the rate.
    #[arg(long, default_value_t = 4)]
    threads: usize,
    /// Spacing of intended starts.
    #[arg(long, value_enum, default_value_t = ArrivalArg::Uniform)]
    arrival: ArrivalArg,
    /// Operations more than this late are dropped and counted, not run.
    #[arg(long, default_value = "1s")]
    max_lag: String,
    /// Warm-up at the first rate, measured and reported apart.
    #[arg(long, default_value = "5s")]
    warmup: String,
    /// Measured time of a fixed-rate or closed-loop run.
    #[arg(long, default_value = "30s")]
    duration: String,
    /// A latency objective on corrected latency (`p99<5ms`); a ramp reports
    /// the highest rate that met it.
    #[arg(long)]
    slo: Option<String>,
    /// Operation mix; shares sum to 1. Operations: get, put (insert a new
    /// record), update, scan, increment, delete, get_many, check_and_mutate.
    #[arg(long, default_value = "get=0.5,update=0.45,scan=0.05")]
    mix: String,
    /// How existing records are chosen: uniform, zipfian[:THETA], latest,
    /// hotspot[:FRACTION:OPS].
    #[arg(long, default_value = "zipfian")]
    distribution: String,
    /// Row key pattern: sequential, hashed, salted:BUCKETS.
    #[arg(long, default_value = "hashed")]
    keys: String,
    /// Records loaded before the run (untimed by the run, reported)
    /// [default: 100k; with an existing table, the rows it has].
    #[arg(long)]
    records: Option<String>,
    /// Key size in bytes (at least 16).
    #[arg(long, default_value_t = 16)]
    key_size: usize,
    /// Value size in bytes.
    #[arg(long, default_value_t = 100)]
    value_size: usize,
    /// Rows per scan.
    #[arg(long, default_value_t = 50)]
    scan_length: u64,
    /// Keys per get_many.
    #[arg(long, default_value_t = 16)]
    batch: usize,
    /// Durability of the fresh table's writes (of every engine in this
    /// process; a Thrift server's writes have the server's) [default: async].
    #[arg(long, value_enum)]
    durability: Option<DurabilityArg>,
    /// Engines to drive, in order: strata, rocksdb, fjall (the last two in a
    /// build with the `peers` feature), or `all`; a comma-separated list or
    /// the option repeated. More than one runs the same schedule against
    /// each in turn and compares them [default: strata].
    #[arg(long, value_name = "ENGINE[,ENGINE...]")]
    engine: Vec<String>,
    /// Drive the table --table on an HBase Thrift1 server instead (`strata
    /// thrift`, or a real HBase's Thrift gateway); with --engine, the server
    /// is compared with the engines.
    #[arg(long, value_name = "HOST:PORT")]
    thrift: Option<String>,
    /// The Thrift transport the server speaks.
    #[arg(long, value_enum, default_value_t = TransportArg::Buffered)]
    thrift_transport: TransportArg,
    /// The Thrift protocol the server speaks.
    #[arg(long, value_enum, default_value_t = ProtocolArg::Binary)]
    thrift_protocol: ProtocolArg,
    /// Runs of each engine; with several engines the runs are interleaved
    /// (each engine once, then each again). More than one compares them.
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Block cache of every engine in this process, MiB [default: strata's
    /// default block cache, 256].
    #[arg(long)]
    cache_mb: Option<u64>,
    /// strata's background I/O budget, MiB per second that flushes and
    /// compactions may write together (`DbOptions::background_write_bytes_per_sec`)
    /// [default: unlimited].
    #[arg(long)]
    background_write_mib_per_sec: Option<u64>,
    /// strata's memstore flush size, MiB (small values make a compaction-heavy
    /// run): a fresh table's, or an existing table's changed to it (as an
    /// `alter`) [default: strata's, 128, or the existing table's own].
    #[arg(long)]
    memstore_flush_mb: Option<u64>,
    /// Pre-split a fresh table into this many regions (by the key pattern).
    #[arg(long, default_value_t = 1)]
    regions: usize,
    /// Database directory. Without it, a fresh database in a temporary
    /// directory, removed at the end. With it and --table naming an
    /// existing table, that table is used as it is (nothing preloaded).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Table name.
    #[arg(long, default_value = "loadgen")]
    table: String,
    /// With --data or --thrift: create --table if it does not exist (family
    /// f, pre-split by --regions, --records preloaded). Without it a missing
    /// table is an error, so that a mistyped name does not start a run on a
    /// new table.
    #[arg(long)]
    create: bool,
    /// Reporting interval.
    #[arg(long, default_value = "1s")]
    interval: String,
    /// Write the summary, intervals and regions as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write an HdrHistogram interval log (corrected and service latency).
    #[arg(long)]
    hdr_log: Option<PathBuf>,
    /// Write plots of the run: throughput and latency percentiles over time,
    /// the latency spectrum, load per region over time (of a comparison: the
    /// engines side by side). `FILE.html` (with the tables) or `FILE.svg`.
    #[arg(long, value_name = "FILE.html|FILE.svg")]
    report: Option<PathBuf>,
    /// How progress is shown: `auto` is a live view redrawn each interval
    /// when standard output is a terminal, plain interval lines otherwise.
    #[arg(long, value_enum, default_value_t = ViewArg::Auto)]
    view: ViewArg,
    /// Run the schedule against no engine: measures the dispatcher.
    #[arg(long)]
    dry_run: bool,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Test hook: block every operation from AT for LENGTH (`10s:1s`), as
    /// an engine pause would.
    #[arg(long, value_name = "AT:LENGTH")]
    pause: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ArrivalArg {
    Uniform,
    Poisson,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ViewArg {
    Auto,
    Live,
    Lines,
}

#[derive(Clone, Copy, ValueEnum)]
enum DurabilityArg {
    Skip,
    Async,
    Sync,
    Fsync,
}

#[derive(Clone, Copy, ValueEnum)]
enum TransportArg {
    /// Messages back to back (`hbase thrift start`'s default).
    Buffered,
    /// Every message after its length (`hbase thrift start -f`).
    Framed,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProtocolArg {
    /// TBinaryProtocol (`hbase thrift start`'s default).
    Binary,
    /// TCompactProtocol (`hbase thrift start -c`).
    Compact,
}

/// One thing a run drives.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Choice {
    /// An engine in this process.
    Engine(EngineName),
    /// The `--thrift` server.
    Thrift(String),
}

impl Choice {
    fn label(&self) -> String {
        match self {
            Choice::Engine(engine) => engine.name().to_owned(),
            Choice::Thrift(address) => format!("thrift {address}"),
        }
    }
}

fn spec_of(args: &Args) -> Result<LoadSpec, SpecError> {
    // With --data (or --thrift) the default preload is none: an existing
    // table is used as it is (a table that --create makes gets the
    // default). `0` preloads nothing.
    let records = match args.records.as_deref() {
        None if args.data.is_some() => 0.0,
        None => DEFAULT_RECORDS as f64,
        Some("0") => 0.0,
        Some(text) => parse_count("--records", text)?,
    };
    let pause = match &args.pause {
        None => None,
        Some(text) => {
            let (at, length) = text
                .split_once(':')
                .ok_or_else(|| SpecError(format!("--pause {text:?}: expected AT:LENGTH")))?;
            Some((
                parse_duration("--pause", at)?,
                parse_duration("--pause", length)?,
            ))
        }
    };
    let interval = parse_duration("--interval", &args.interval)?;
    if interval.as_millis() < 10 {
        return Err(SpecError(format!(
            "--interval {:?}: at least 10ms",
            args.interval
        )));
    }
    if args.batch == 0 || args.batch > 10_000 {
        return Err(SpecError(format!(
            "--batch {}: must be in 1..=10000",
            args.batch
        )));
    }
    if args.value_size == 0 || args.value_size > 1 << 20 {
        return Err(SpecError(format!(
            "--value-size {}: must be in 1..=1048576",
            args.value_size
        )));
    }
    let mix = Mix::parse(&args.mix)?;
    Ok(LoadSpec {
        rate: parse_rate(&args.rate, args.step.as_deref())?,
        step_every: parse_duration("--step-every", &args.step_every)?,
        warmup: parse_duration("--warmup", &args.warmup)?,
        duration: parse_duration("--duration", &args.duration)?,
        threads: args.threads,
        arrival: match args.arrival {
            ArrivalArg::Uniform => Arrival::Uniform,
            ArrivalArg::Poisson => Arrival::Poisson,
        },
        max_lag: parse_duration("--max-lag", &args.max_lag)?,
        mix,
        chooser: Chooser::new(Distribution::parse(&args.distribution)?),
        keys: KeySpace::new(KeyPattern::parse(&args.keys)?, args.key_size)?,
        value_bytes: args.value_size,
        scan_rows: args.scan_length.max(1),
        batch: args.batch,
        records: records as u64,
        interval,
        slo: args.slo.as_deref().map(Slo::parse).transpose()?,
        seed: args.seed,
        pause,
    })
}

/// What the run drives, in order, checked against the other options.
fn choices_of(args: &Args, spec: &LoadSpec) -> Result<Vec<Choice>, Box<dyn std::error::Error>> {
    let mut choices: Vec<Choice> = EngineName::parse_list(&args.engine)?
        .into_iter()
        .map(Choice::Engine)
        .collect();
    if let Some(address) = &args.thrift {
        choices.push(Choice::Thrift(address.clone()));
    }
    if args.dry_run {
        if !choices.is_empty() {
            return Err("--dry-run drives no engine: leave out --engine and --thrift".into());
        }
        return Ok(Vec::new());
    }
    if choices.is_empty() {
        choices.push(Choice::Engine(EngineName::Strata));
    }
    if args.repeat == 0 || args.repeat > 100 {
        return Err(format!("--repeat {}: must be in 1..=100", args.repeat).into());
    }
    let in_process = choices.iter().any(|c| matches!(c, Choice::Engine(_)));
    if args.data.is_some() && choices != [Choice::Engine(EngineName::Strata)] {
        return Err(
            "--data opens one strata database; RocksDB, fjall and a comparison's runs \
                    use fresh temporary directories (leave out --data)"
                .into(),
        );
    }
    if args.data.is_some() && args.repeat > 1 {
        return Err("--repeat runs each engine on a fresh database: leave out --data".into());
    }
    if args.thrift.is_some() {
        if args.regions > 1 {
            return Err(
                "--regions: Thrift1's createTable cannot pre-split a table; split it on \
                        the server (the strata shell's split) or leave out --regions"
                    .into(),
            );
        }
        if args.cache_mb.is_some() && !in_process {
            return Err("--cache-mb: a Thrift server's block cache is the server's own".into());
        }
        if (args.background_write_mib_per_sec.is_some() || args.memstore_flush_mb.is_some())
            && !in_process
        {
            return Err(
                "--background-write-mib-per-sec, --memstore-flush-mb: a Thrift server's \
                 options are the server's own (strata server --background-write-mib-per-sec)"
                    .into(),
            );
        }
        if args.durability.is_some() && !in_process {
            return Err(
                "--durability: a Thrift server's writes have the server's durability (strata \
                 thrift --durability)"
                    .into(),
            );
        }
    }
    for choice in &choices {
        if let Choice::Engine(engine) = choice {
            target::check_mix(engine.name(), engine.unsupported(), &spec.mix)?;
            if *engine != EngineName::Strata
                && matches!(args.durability, Some(DurabilityArg::Fsync))
            {
                return Err(format!(
                    "--durability fsync: {} is driven with skip, async or sync (its sync is an \
                     fdatasync, as strata's is)",
                    engine.name()
                )
                .into());
            }
        }
    }
    Ok(choices)
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("strata-loadgen: {e}");
            ExitCode::from(2)
        }
    }
}

/// Creates an output file before the run, so that a bad path is an error
/// at once rather than after a long run.
fn create(option: &str, path: &PathBuf) -> Result<BufWriter<File>, String> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| format!("{option} {}: {e}", path.display()))
}

/// The outputs asked for, opened before the run.
struct Outputs {
    json: Option<BufWriter<File>>,
    hdr_log: Option<BufWriter<File>>,
    report: Option<(BufWriter<File>, ReportFormat)>,
}

impl Outputs {
    fn open(args: &Args) -> Result<Outputs, Box<dyn std::error::Error>> {
        let report_format = args
            .report
            .as_deref()
            .map(ReportFormat::of_path)
            .transpose()?;
        Ok(Outputs {
            json: args
                .json
                .as_ref()
                .map(|p| create("--json", p))
                .transpose()?,
            hdr_log: args
                .hdr_log
                .as_ref()
                .map(|p| create("--hdr-log", p))
                .transpose()?,
            report: match (&args.report, report_format) {
                (Some(path), Some(format)) => Some((create("--report", path)?, format)),
                _ => None,
            },
        })
    }
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let spec = spec_of(args)?;
    let choices = choices_of(args, &spec)?;
    let mut outputs = Outputs::open(args)?;
    if choices.is_empty() {
        let started = SystemTime::now();
        let summary = drive(args, spec, Target::DryRun)?;
        return write_single(&mut outputs, &summary, started);
    }
    if let [only] = choices.as_slice()
        && args.repeat == 1
    {
        let mut spec = spec;
        let (target, held) = prepare(args, only, &mut spec)?;
        let started = SystemTime::now();
        let summary = drive(args, spec, target)?;
        held.close()?;
        return write_single(&mut outputs, &summary, started);
    }
    compare(args, &spec, &choices, &mut outputs)
}

/// Writes a single run's outputs, as before comparisons existed.
fn write_single(
    outputs: &mut Outputs,
    summary: &RunSummary,
    started: SystemTime,
) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(f) = &mut outputs.json {
        serde_json::to_writer_pretty(&mut *f, summary)?;
        f.flush()?;
    }
    if let Some(f) = &mut outputs.hdr_log {
        summary.write_hdr_log(started, f)?;
        f.flush()?;
    }
    if let Some((f, format)) = &mut outputs.report {
        plots::write_report(summary, *format, &command_line(), f)
            .map_err(|e| format!("--report: {e}"))?;
        f.flush()?;
    }
    Ok(())
}

/// Runs the same schedule against every choice, `--repeat` times
/// interleaved, and writes the comparison.
fn compare(
    args: &Args,
    spec: &LoadSpec,
    choices: &[Choice],
    outputs: &mut Outputs,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut runs: Vec<EngineRun> = Vec::new();
    for number in 1..=args.repeat {
        for choice in choices {
            println!("== {}, run {number} of {}", choice.label(), args.repeat);
            let mut spec = spec.clone();
            let (target, held) = prepare(args, choice, &mut spec)?;
            let started = SystemTime::now();
            let summary = drive(args, spec, target)?;
            held.close()?;
            runs.push(EngineRun {
                engine: choice.label(),
                run: number,
                started,
                summary,
            });
            println!();
        }
    }
    let comparison = Comparison::new(&runs, spec.slo, args.slo.as_deref())?;
    print!("{}", comparison.text());
    if let Some(f) = &mut outputs.json {
        serde_json::to_writer_pretty(
            &mut *f,
            &serde_json::json!({ "comparison": comparison, "runs": runs }),
        )?;
        f.flush()?;
    }
    if let Some(f) = &mut outputs.hdr_log {
        let prefixes: Vec<String> = runs.iter().map(EngineRun::hdr_tag_prefix).collect();
        let logged: Vec<HdrLogRun<'_>> = runs
            .iter()
            .zip(&prefixes)
            .map(|(run, prefix)| HdrLogRun {
                tag_prefix: prefix,
                started: run.started,
                summary: &run.summary,
            })
            .collect();
        report::write_hdr_log_of_runs(&logged, f)?;
        f.flush()?;
    }
    if let Some((f, format)) = &mut outputs.report {
        plots::write_comparison_report(&comparison, &runs, *format, &command_line(), f)
            .map_err(|e| format!("--report: {e}"))?;
        f.flush()?;
    }
    Ok(())
}

/// What a prepared target holds open besides itself: closed after its run.
struct Held {
    db: Option<Db>,
    temp: Option<tempfile::TempDir>,
}

impl Held {
    fn close(self) -> Result<(), Box<dyn std::error::Error>> {
        if let Some(db) = self.db {
            if let Some(budget) = db.metrics().io_budget {
                let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
                eprintln!(
                    "strata-loadgen: background I/O budget {:.1} MiB/s: flushes wrote {:.1} MiB \
                     (waited {:.1} s), compactions {:.1} MiB (waited {:.1} s)",
                    mib(budget.bytes_per_sec),
                    mib(budget.flush_bytes),
                    budget.flush_waited.as_secs_f64(),
                    mib(budget.compaction_bytes),
                    budget.compaction_waited.as_secs_f64()
                );
            }
            db.close()?;
        }
        drop(self.temp);
        Ok(())
    }
}

fn durability(args: &Args) -> Durability {
    match args.durability.unwrap_or(DurabilityArg::Async) {
        DurabilityArg::Skip => Durability::SkipWal,
        DurabilityArg::Async => Durability::AsyncWal,
        DurabilityArg::Sync => Durability::SyncWal,
        DurabilityArg::Fsync => Durability::FsyncWal,
    }
}

fn cache_bytes(args: &Args) -> u64 {
    args.cache_mb
        .map_or(DbOptions::default().block_cache_bytes, |mb| {
            mb.saturating_mul(1024 * 1024)
        })
}

/// Opens `choice` and loads it (or finds its existing table, setting
/// `spec.records` to its rows) for a run.
fn prepare(
    args: &Args,
    choice: &Choice,
    spec: &mut LoadSpec,
) -> Result<(Target, Held), Box<dyn std::error::Error>> {
    match choice {
        Choice::Engine(EngineName::Strata) => prepare_strata(args, spec),
        Choice::Engine(engine) => {
            let temp = tempfile::tempdir()?;
            let (target, took) = target::open_peer(
                *engine,
                temp.path(),
                cache_bytes(args),
                durability(args),
                spec,
            )?;
            eprintln!(
                "strata-loadgen: preloaded {} records into {} in {:.1} s (untimed)",
                spec.records,
                engine.name(),
                took.as_secs_f64()
            );
            Ok((
                target,
                Held {
                    db: None,
                    temp: Some(temp),
                },
            ))
        }
        Choice::Thrift(address) => prepare_thrift(args, address, spec),
    }
}

fn prepare_strata(
    args: &Args,
    spec: &mut LoadSpec,
) -> Result<(Target, Held), Box<dyn std::error::Error>> {
    let mut temp = None;
    let dir = match &args.data {
        Some(d) => d.clone(),
        None => {
            let t = tempfile::tempdir()?;
            let p = t.path().to_path_buf();
            temp = Some(t);
            p
        }
    };
    let opened = Db::open(
        &dir,
        DbOptions {
            block_cache_bytes: cache_bytes(args),
            background_write_bytes_per_sec: args
                .background_write_mib_per_sec
                .map_or(0, |mib| mib.saturating_mul(1024 * 1024)),
            ..DbOptions::default()
        },
    )?;
    if args.data.is_some() && !args.create && !opened.table_exists(&args.table) {
        return Err(format!(
            "--table {}: no such table in {}; give --create to create it (family f, \
             --regions, --records, --durability)",
            args.table,
            dir.display()
        )
        .into());
    }
    let table = match opened.table(&args.table) {
        Ok(t) if args.data.is_some() => {
            if spec.records == 0 {
                // An existing table: choose among the rows it has.
                spec.records = t.count(&strata::Scan::new())?;
            }
            if let Some(mb) = args.memstore_flush_mb {
                // The table keeps its own flush size; the flag changes it (an alter, as
                // `alter 't', MEMSTORE_FLUSHSIZE => ...`), so that it is never silently ignored.
                let descriptor = t
                    .descriptor()?
                    .memstore_flush_size_bytes(mb.saturating_mul(1024 * 1024));
                opened.alter_table(descriptor)?;
            }
            eprintln!(
                "strata-loadgen: using table {} in {} ({} rows)",
                args.table,
                dir.display(),
                spec.records
            );
            t
        }
        _ => {
            if args.data.is_some() && args.records.is_none() {
                spec.records = DEFAULT_RECORDS;
            }
            let mut descriptor = TableDescriptor::new(&args.table)
                .family(FamilyDescriptor::new(String::from_utf8_lossy(FAMILY)))
                .durability(durability(args));
            if let Some(mb) = args.memstore_flush_mb {
                descriptor = descriptor.memstore_flush_size_bytes(mb.saturating_mul(1024 * 1024));
            }
            let t = opened.create_table(descriptor)?;
            for key in spec.keys.split_keys(args.regions, spec.records)? {
                t.split(Some(&key))?;
            }
            let took = loadgen::preload(&t, spec)?;
            opened.flush()?;
            eprintln!(
                "strata-loadgen: preloaded {} records into {} region(s) in {:.1} s (untimed)",
                spec.records,
                args.regions,
                took.as_secs_f64()
            );
            t
        }
    };
    Ok((
        Target::Table(table),
        Held {
            db: Some(opened),
            temp,
        },
    ))
}

fn prepare_thrift(
    args: &Args,
    address: &str,
    spec: &mut LoadSpec,
) -> Result<(Target, Held), Box<dyn std::error::Error>> {
    let format = WireFormat {
        transport: match args.thrift_transport {
            TransportArg::Buffered => Transport::Buffered,
            TransportArg::Framed => Transport::Framed,
        },
        protocol: match args.thrift_protocol {
            ProtocolArg::Binary => Protocol::Binary,
            ProtocolArg::Compact => Protocol::Compact,
        },
    };
    let thrift = ThriftTarget::new(address, format, &args.table)?;
    if thrift.table_exists()? {
        if args.records.is_none() {
            // An existing table: choose among the rows it has.
            spec.records = thrift.count_rows()?;
        }
        eprintln!(
            "strata-loadgen: using table {} on the Thrift server at {address} ({} rows)",
            args.table, spec.records
        );
    } else if args.create {
        thrift.create_table()?;
        let mut client = thrift.connect()?;
        let took = loadgen::preload_with(spec, |records| thrift.load(&mut client, records))?;
        eprintln!(
            "strata-loadgen: created table {} on the Thrift server at {address} and preloaded \
             {} records in {:.1} s (untimed)",
            args.table,
            spec.records,
            took.as_secs_f64()
        );
    } else {
        return Err(format!(
            "--table {}: no such table on the Thrift server at {address}; give --create to \
             create it (family f, --records preloaded)",
            args.table
        )
        .into());
    }
    Ok((
        Target::Thrift(thrift),
        Held {
            db: None,
            temp: None,
        },
    ))
}

/// Runs `spec` against `target`, printing the interval lines (or the live
/// view) and the summary as it goes.
fn drive(
    args: &Args,
    spec: LoadSpec,
    target: Target,
) -> Result<RunSummary, Box<dyn std::error::Error>> {
    if spec.records == 0 && spec.mix.reads_existing() {
        return Err("the mix reads existing records but there are none: give --records".into());
    }
    let terminal = std::io::stdout().is_terminal();
    let live = match args.view {
        // A dumb terminal (TERM=dumb, an editor's shell buffer) cannot move
        // the cursor: it gets the lines.
        ViewArg::Auto => terminal && !console::is_dumb(),
        ViewArg::Live => true,
        ViewArg::Lines => false,
    };
    println!("{}", IntervalRecord::header());
    let mut screen: Option<LiveScreen> = None;
    let mut screen_error: Option<std::io::Error> = None;
    let summary = loadgen::run(spec, target, |progress| match progress {
        Progress::Started(layout) if live => match LiveScreen::start(layout) {
            Ok(s) => screen = Some(s),
            Err(e) => screen_error = Some(e),
        },
        Progress::Started(_) => {}
        Progress::Interval {
            record, region_ops, ..
        } => {
            if let Some(s) = &mut screen {
                if let Err(e) = s.interval(&record.line(), record, region_ops) {
                    // The terminal went away: carry on with plain lines.
                    screen_error = Some(e);
                    screen = None;
                }
                return;
            }
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", record.line());
            if terminal {
                let _ = out.flush();
            }
        }
    })?;
    if let Some(mut s) = screen {
        s.finish()?;
    }
    if let Some(e) = screen_error {
        eprintln!("strata-loadgen: live view: {e}");
    }
    print!("{}", summary.text());
    Ok(summary)
}
