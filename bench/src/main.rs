//! `strata-bench`: see `strata_bench::cli` for the command line and
//! docs/benchmarks.md for what it measures.

use std::process::ExitCode;

use clap::Parser;
use strata_bench::cli::{self, Cli, Command};
use strata_bench::{memory, report, runner};

// jemalloc for every Rust allocation, strata's and fjall's alike (RocksDB's
// C++ allocates with glibc malloc). The memstore-memory measurement reads
// its statistics.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("strata-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> strata_bench::Result<()> {
    if let Some(Command::MemstoreMemory {
        cells,
        key_size,
        value_size,
        seed,
        json,
    }) = &cli.command
    {
        let report = memory::measure(*cells, *key_size, *value_size, *seed)?;
        print!("{}", memory::render(&report));
        if let Some(path) = json {
            let text = serde_json::to_string_pretty(&report)?;
            std::fs::write(path, text + "\n").map_err(|e| {
                strata_bench::BenchError::io(format!("writing {}", path.display()), e)
            })?;
        }
        return Ok(());
    }
    let mut config = cli.run_config()?;
    if cli.isolate {
        config.isolate = Some(cli::child_command(std::env::args_os().skip(1))?);
    }
    let engines: Vec<_> = config.engines.iter().map(|e| e.name()).collect();
    let strata_io: Vec<&str> = config
        .strata_io_variants()
        .iter()
        .map(|io| io.map_or("auto", |io| io.name()))
        .collect();
    eprintln!(
        "strata-bench: {} workload(s) x {} engine(s) [{}] x {} run(s), num {}, threads {}, durability {:?}, strata io {}, block cache {} MiB{}{}",
        config.workloads.len(),
        engines.len(),
        engines.join(","),
        config.repeat,
        config.num,
        config.threads,
        config.settings.durability,
        strata_io.join(","),
        config.settings.cache_bytes >> 20,
        if config.cold {
            ", cold (page cache evicted before every timed operation, untimed)"
        } else {
            ""
        },
        if config.isolate.is_some() {
            ", each run in a process of its own"
        } else {
            ""
        },
    );
    let results = runner::run_all(&config, |r| {
        let engine = report::engine_label(r, true);
        eprintln!(
            "  {:<18} {:<12} run {}: {:>12.0} ops/s{}",
            r.workload,
            engine,
            r.run,
            r.ops_per_sec,
            if r.cold { " [cold]" } else { "" }
        );
    })?;
    print!("{}", report::render_table(&results));
    if let Some(path) = &cli.json {
        report::write_json(path, &results)?;
    }
    Ok(())
}
