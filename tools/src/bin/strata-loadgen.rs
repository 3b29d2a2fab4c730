//! `strata-loadgen`: open-loop load at a target rate against a strata
//! table, with corrected and service latency per interval and the load per
//! region. `docs/loadgen.md` explains the options and the output.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use clap::{Parser, ValueEnum};
use strata::{Db, DbOptions, Durability, FamilyDescriptor, TableDescriptor};
use strata_tools::loadgen::keys::{Chooser, KeySpace};
use strata_tools::loadgen::live::LiveScreen;
use strata_tools::loadgen::plots::{self, ReportFormat};
use strata_tools::loadgen::report::IntervalRecord;
use strata_tools::loadgen::schedule::Arrival;
use strata_tools::loadgen::spec::{
    Distribution, KeyPattern, Mix, Slo, SpecError, parse_count, parse_duration, parse_rate,
};
use strata_tools::loadgen::{self, FAMILY, LoadSpec, Progress, Target};

#[derive(Parser)]
#[command(
    name = "strata-loadgen",
    version,
    about = "Open-loop load at a target rate against a strata table: corrected and service \
             latency per interval, and the load per region"
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
    /// Records loaded before the run (untimed by the run, reported).
    #[arg(long, default_value = "100k")]
    records: String,
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
    /// Durability of the fresh table's writes.
    #[arg(long, value_enum, default_value_t = DurabilityArg::Async)]
    durability: DurabilityArg,
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
    /// With --data: create --table if it does not exist (family f, pre-split
    /// by --regions, --records preloaded). Without it a missing table is an
    /// error, so that a mistyped name does not start a run on a new table.
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
    /// the latency spectrum, load per region over time. `FILE.html` (with
    /// the summary and region tables) or `FILE.svg`.
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

fn spec_of(args: &Args) -> Result<LoadSpec, SpecError> {
    // With --data the default preload is none: an existing table is used
    // as it is. `0` preloads nothing.
    let records = if (args.data.is_some() && args.records == "100k") || args.records == "0" {
        0.0
    } else {
        parse_count("--records", &args.records)?
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

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut spec = spec_of(args)?;
    let report_format = args
        .report
        .as_deref()
        .map(ReportFormat::of_path)
        .transpose()?;
    let mut json_out = args
        .json
        .as_ref()
        .map(|p| create("--json", p))
        .transpose()?;
    let mut hdr_out = args
        .hdr_log
        .as_ref()
        .map(|p| create("--hdr-log", p))
        .transpose()?;
    let mut report_out = args
        .report
        .as_ref()
        .map(|p| create("--report", p))
        .transpose()?;
    let mut temp = None;
    let mut db = None;
    let target = if args.dry_run {
        Target::DryRun
    } else {
        let dir = match &args.data {
            Some(d) => d.clone(),
            None => {
                let t = tempfile::tempdir()?;
                let p = t.path().to_path_buf();
                temp = Some(t);
                p
            }
        };
        let opened = Db::open(&dir, DbOptions::default())?;
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
                    spec.records = count_rows(&t)?;
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
                let durability = match args.durability {
                    DurabilityArg::Skip => Durability::SkipWal,
                    DurabilityArg::Async => Durability::AsyncWal,
                    DurabilityArg::Sync => Durability::SyncWal,
                    DurabilityArg::Fsync => Durability::FsyncWal,
                };
                let t = opened.create_table(
                    TableDescriptor::new(&args.table)
                        .family(FamilyDescriptor::new(String::from_utf8_lossy(FAMILY)))
                        .durability(durability),
                )?;
                for key in spec.keys.split_keys(args.regions, spec.records)? {
                    t.split(Some(&key))?;
                }
                let took = loadgen::preload(&t, &spec)?;
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
        db = Some(opened);
        Target::Table(table)
    };
    if spec.records == 0 && spec.mix.reads_existing() {
        return Err("the mix reads existing records but there are none: give --records".into());
    }
    let started = SystemTime::now();
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
    if let Some(f) = &mut json_out {
        serde_json::to_writer_pretty(&mut *f, &summary)?;
        f.flush()?;
    }
    if let Some(f) = &mut hdr_out {
        summary.write_hdr_log(started, f)?;
        f.flush()?;
    }
    if let (Some(f), Some(format)) = (&mut report_out, report_format) {
        let command: Vec<String> = std::env::args().collect();
        plots::write_report(&summary, format, &command.join(" "), f)
            .map_err(|e| format!("--report: {e}"))?;
        f.flush()?;
    }
    if let Some(db) = db {
        db.close()?;
    }
    drop(temp);
    Ok(())
}

fn count_rows(table: &strata::Table) -> Result<u64, strata::Error> {
    table.count(&strata::Scan::new())
}
