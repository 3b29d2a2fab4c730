//! `strata-bench`: see `strata_bench::cli` for the command line and
//! docs/benchmarks.md for what it measures.

use std::process::ExitCode;

use clap::Parser;
use strata_bench::cli::{Cli, Command};
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
    let config = cli.run_config()?;
    let engines: Vec<_> = config.engines.iter().map(|e| e.name()).collect();
    eprintln!(
        "strata-bench: {} workload(s) x {} engine(s) [{}] x {} run(s), num {}, threads {}, durability {:?}",
        config.workloads.len(),
        engines.len(),
        engines.join(","),
        config.repeat,
        config.num,
        config.threads,
        config.settings.durability,
    );
    let results = runner::run_all(&config, |r| {
        eprintln!(
            "  {:<18} {:<8} run {}: {:>12.0} ops/s",
            r.workload, r.engine, r.run, r.ops_per_sec
        );
    })?;
    print!("{}", report::render_table(&results));
    if let Some(path) = &cli.json {
        report::write_json(path, &results)?;
    }
    Ok(())
}
