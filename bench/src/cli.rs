//! The command line. Issue 6 fixes the contract; options may be added,
//! never changed:
//!
//! `strata-bench [--engines strata,rocksdb,fjall|all] [--workloads LIST]
//! [--num N] [--key-size B] [--value-size B] [--threads T] [--dir DIR]
//! [--json FILE] [--io uring|sync] [--durability skip|async|sync]
//! [--block-size B] [--compression none|zstd] [--cache-mb M]
//! [--bloom-bits K] [--repeat R] [--seed S]`
//!
//! Added since: `--ops N`, `--no-progress`, `--cold`, `--io` taking
//! both back ends (`--io uring,sync`), and `--isolate`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::{COLD_CACHE_MB, ChildCommand, DEFAULT_CACHE_MB, DEFAULT_SEED, RunConfig};
use crate::error::{BenchError, Result};
use crate::settings::{
    BACKGROUND_THREADS, CompressionChoice, DurabilityChoice, EngineKind, EngineSettings, IoChoice,
    ValueKind,
};
use crate::workload::Workload;

/// Records of each workload when `--num` is not given.
pub const DEFAULT_NUM: u64 = 1_000_000;
/// Records of each workload of the quick suite (run when `--workloads` is
/// not given), sized so the suite takes about a minute against strata.
pub const QUICK_SUITE_NUM: u64 = 200_000;

/// db_bench, HBase PerformanceEvaluation and YCSB workloads against strata
/// and, built with `--features peers`, RocksDB and fjall side by side.
///
/// Without --workloads it runs the quick suite (every workload at 200,000
/// records, about a minute for strata alone). Results go to a table on
/// stdout and, with --json, to a file.
#[derive(Debug, Parser)]
#[command(name = "strata-bench", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// A separate measurement instead of workloads.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Engines: a comma-separated list of strata, rocksdb, fjall; or `all`
    /// (every engine in this build).
    #[arg(long, default_value = "strata")]
    pub engines: String,

    /// Workloads, comma-separated, or `all`. Default: the quick suite.
    #[arg(long)]
    pub workloads: Option<String>,

    /// Records loaded or written per workload [default: 1000000, or 200000
    /// for the quick suite].
    #[arg(long)]
    pub num: Option<u64>,

    /// Operations of each timed read/mixed phase [default: --num; for
    /// multiget --num/64 batches]. Fills always write --num records; scan
    /// reads them all, in --ops/--num passes (at least one).
    #[arg(long)]
    pub ops: Option<u64>,

    /// Key size in bytes (PerformanceEvaluation workloads use 26).
    #[arg(long, default_value_t = 16)]
    pub key_size: usize,

    /// Value size in bytes (PerformanceEvaluation workloads use 1000).
    #[arg(long, default_value_t = 100)]
    pub value_size: usize,

    /// Client threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,

    /// Split strata's table into this many regions (at evenly spaced
    /// records) before each load, so that scans by several --threads read
    /// separate regions. RocksDB and fjall have no regions and ignore it.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub regions: u64,

    /// Parent directory of the per-run database directories [default: the
    /// system temp dir]. Each run gets a fresh directory, removed after it.
    #[arg(long)]
    pub dir: Option<PathBuf>,

    /// Also write the results as a JSON array to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,

    /// strata's I/O back end [default: io_uring when available, or
    /// STRATA_IO]. `uring,sync` runs strata once with each, interleaved
    /// with the other engines in every repetition, and adds a uring/sync
    /// column to the ratios. STRATA_IO, if set, must agree.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub io: Vec<IoChoice>,

    /// Durability of timed writes.
    #[arg(long, value_enum, default_value = "async")]
    pub durability: DurabilityChoice,

    /// Data block size in bytes [default: strata's default block size].
    #[arg(long)]
    pub block_size: Option<u32>,

    /// Block compression.
    #[arg(long, value_enum, default_value = "none")]
    pub compression: CompressionChoice,

    /// What values are made of: db_bench's half-random bytes, or text.
    #[arg(long, value_enum, default_value = "random")]
    pub values: ValueKind,

    /// Block cache size in MiB [default: 512; 8 with --cold].
    #[arg(long)]
    pub cache_mb: Option<u64>,

    /// Bloom filter bits per key (0: no blooms).
    #[arg(long, default_value_t = 10)]
    pub bloom_bits: u32,

    /// strata only: split each 128 MiB flush size into this many memstores
    /// (`DbOptions::memstore_parts`; faster random writes, slower reads of
    /// rows written since the last flush).
    #[arg(long, default_value_t = 1)]
    pub memstore_parts: u32,

    /// Repetitions; engines run interleaved and the table shows medians and
    /// the min-max of ops/s.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,

    /// Seed of every random choice (the same for every engine).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,

    /// Never draw progress bars.
    #[arg(long)]
    pub no_progress: bool,

    /// Cold reads: before every timed operation (for multiget, every batch
    /// of 64 keys; for full-table filter scans, every pass; for scan, once
    /// per thread before its scan) evict the OS
    /// page cache of every file under the engine's database directory
    /// (posix_fadvise DONTNEED, no root needed), so reads that miss the
    /// engine's block cache go to the device. Eviction is in no latency and
    /// not in the phase's seconds or ops/s. The block cache defaults to 8
    /// MiB so it cannot hold the data. Read-only workloads only (readrandom,
    /// readmissing, multiget, seekrandom, scan, ycsb-c, pe-randomread,
    /// pe-scan100, filterscan-*), with --threads 1. Results are marked
    /// [cold] in the table and `"cold": true` in the JSON.
    #[arg(long)]
    pub cold: bool,

    /// Warm reads: before the timed phase of a workload that reads loaded
    /// data, one untimed pass reads every record in key order (a full scan)
    /// on every engine alike, so the timed phase finds its blocks in the
    /// engine's block cache (when it holds them: --cache-mb) instead of
    /// reading each for the first time. The issue targets "blocks cached"
    /// are measured this way. Results are marked [warm] in the table and
    /// `"warm": true` in the JSON. Not with --cold.
    #[arg(long, conflicts_with = "cold")]
    pub warm: bool,

    /// bulkload: strata checks every data block's checksum and every cell's
    /// order before loading (`BulkLoadOptions::verify_blocks`). By default it
    /// checks the files' trailers, meta and index, as RocksDB's ingest does
    /// by default (`verify_checksums_before_ingest = false`).
    #[arg(long)]
    pub bulk_verify_blocks: bool,

    /// Each run in a process of its own: strata-bench starts itself once
    /// per workload, repetition and engine, in the same interleaved order
    /// and with the same options, and reads the run's result back. No run
    /// then inherits what an engine before it left in the process (its
    /// threads, allocator state, memory peak).
    #[arg(long)]
    pub isolate: bool,

    /// The repetition number of a child's single run (set by --isolate).
    #[arg(long, hide = true, default_value_t = 0)]
    pub run_number: u32,
}

/// Options an isolated suite's child is given anew for its one run (their
/// values, too, are not passed on).
const PER_CHILD_OPTIONS: [&str; 7] = [
    "--engines",
    "--workloads",
    "--num",
    "--repeat",
    "--io",
    "--json",
    "--run-number",
];

/// Flags an isolated suite's child is given anew or not at all.
const PER_CHILD_FLAGS: [&str; 2] = ["--isolate", "--no-progress"];

/// The command that starts a child for one run of an isolated suite, from
/// this process's arguments (`args`, without the program's name).
pub fn child_command(args: impl IntoIterator<Item = OsString>) -> Result<ChildCommand> {
    let program = std::env::current_exe()
        .map_err(|e| BenchError::io("finding strata-bench's own executable", e))?;
    Ok(ChildCommand {
        program,
        args: child_args(args),
    })
}

/// `args` without the options and flags each child is given anew.
fn child_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut kept = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // An argument that is not UTF-8 is a value (a path), never ours.
        let text = arg.to_str().unwrap_or_default();
        let name = text.split_once('=').map_or(text, |(name, _)| name);
        if PER_CHILD_OPTIONS.contains(&name) {
            if !text.contains('=') {
                // The value is the next argument.
                args.next();
            }
        } else if !PER_CHILD_FLAGS.contains(&name) {
            kept.push(arg);
        }
    }
    kept
}

/// Measurements that are not workloads.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Memory honesty and overhead of strata's memstore (issue 2): insert
    /// cells of 16-byte rows and 100-byte values into a memstore and compare
    /// its accounted bytes with what jemalloc allocated; the same for a
    /// crossbeam-skiplist holding equivalent entries.
    MemstoreMemory {
        /// Cells to insert.
        #[arg(long, default_value_t = 1_000_000)]
        cells: u64,
        /// Row key size in bytes.
        #[arg(long, default_value_t = 16)]
        key_size: usize,
        /// Value size in bytes.
        #[arg(long, default_value_t = 100)]
        value_size: usize,
        /// Seed of the row order.
        #[arg(long, default_value_t = DEFAULT_SEED)]
        seed: u64,
        /// Also write the report as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

impl Cli {
    /// Resolves the options into a run configuration.
    pub fn run_config(&self) -> Result<RunConfig> {
        let quick = self.workloads.is_none();
        let workloads = match &self.workloads {
            Some(list) => Workload::parse_list(list)?,
            None => Workload::ALL.to_vec(),
        };
        let num = self
            .num
            .unwrap_or(if quick { QUICK_SUITE_NUM } else { DEFAULT_NUM });
        let cache_mb = self.cache_mb.unwrap_or(if self.cold {
            COLD_CACHE_MB
        } else {
            DEFAULT_CACHE_MB
        });
        // Each back end once, in the order given.
        let mut io: Vec<IoChoice> = Vec::new();
        for &choice in &self.io {
            if !io.contains(&choice) {
                io.push(choice);
            }
        }
        let config = RunConfig {
            engines: EngineKind::parse_list(&self.engines)?,
            workloads,
            num,
            ops: self.ops,
            key_bytes: self.key_size,
            value_bytes: self.value_size,
            values: self.values,
            threads: self.threads,
            regions: self.regions as usize,
            dir: self.dir.clone(),
            repeat: self.repeat,
            seed: self.seed,
            settings: EngineSettings {
                block_size_bytes: self.block_size.unwrap_or(strata::DEFAULT_BLOCK_SIZE_BYTES),
                cache_bytes: cache_mb * 1024 * 1024,
                bloom_bits_per_key: self.bloom_bits,
                compression: self.compression,
                durability: self.durability,
                io: match io.as_slice() {
                    [one] => Some(*one),
                    _ => None,
                },
                memtable_bytes: strata::DEFAULT_MEMSTORE_FLUSH_SIZE_BYTES,
                background_threads: BACKGROUND_THREADS,
                memstore_parts: self.memstore_parts,
                bulk_verify_blocks: self.bulk_verify_blocks,
            },
            progress: !self.no_progress,
            strata_io: if io.len() > 1 { io } else { Vec::new() },
            cold: self.cold,
            warm: self.warm,
            isolate: None,
            first_run: self.run_number,
        };
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_keeps_every_option_but_the_ones_it_is_given_anew() {
        let args = [
            "--isolate",
            "--engines",
            "all",
            "--workloads=fillseq,readrandom",
            "--num",
            "5000",
            "--cache-mb",
            "64",
            "--repeat",
            "3",
            "--io=uring,sync",
            "--json",
            "out.json",
            "--no-progress",
            "--warm",
            "--dir",
            "/tmp/b",
            "--run-number",
            "2",
        ];
        let kept = child_args(args.iter().map(OsString::from));
        assert_eq!(kept, ["--cache-mb", "64", "--warm", "--dir", "/tmp/b"]);
        // What is kept still parses, with the child's own options added.
        let mut child: Vec<OsString> = vec!["strata-bench".into()];
        child.extend(kept);
        child.extend(["--engines", "strata", "--run-number", "2"].map(OsString::from));
        let cli = Cli::try_parse_from(child).unwrap();
        assert_eq!(cli.run_config().unwrap().first_run, 2);
        assert!(cli.warm);
    }

    #[test]
    fn no_arguments_is_the_quick_suite() {
        let cli = Cli::try_parse_from(["strata-bench"]).unwrap();
        let config = cli.run_config().unwrap();
        assert_eq!(config.num, QUICK_SUITE_NUM);
        assert_eq!(config.workloads.len(), Workload::ALL.len());
        assert_eq!(config.engines, vec![EngineKind::Strata]);
        assert_eq!(config.settings.cache_bytes, 512 << 20);
        assert_eq!(config.settings.bloom_bits_per_key, 10);
        assert_eq!(config.settings.durability, DurabilityChoice::Async);
        assert_eq!(config.settings.compression, CompressionChoice::None);
    }

    #[test]
    fn the_contract_options_parse() {
        let cli = Cli::try_parse_from([
            "strata-bench",
            "--engines",
            "strata",
            "--workloads",
            "fillrandom,readrandom",
            "--num",
            "1000",
            "--key-size",
            "20",
            "--value-size",
            "50",
            "--threads",
            "2",
            "--dir",
            "/tmp",
            "--json",
            "out.json",
            "--io",
            "sync",
            "--durability",
            "sync",
            "--block-size",
            "4096",
            "--compression",
            "zstd",
            "--cache-mb",
            "64",
            "--bloom-bits",
            "0",
            "--repeat",
            "3",
            "--seed",
            "7",
        ])
        .unwrap();
        let config = cli.run_config().unwrap();
        assert_eq!(config.num, 1000);
        assert_eq!(config.workloads.len(), 2);
        assert_eq!(config.settings.block_size_bytes, 4096);
        assert_eq!(config.settings.io, Some(IoChoice::Sync));
        assert_eq!(config.repeat, 3);
    }

    #[test]
    fn explicit_workloads_default_to_a_million_records() {
        let cli = Cli::try_parse_from(["strata-bench", "--workloads", "fillseq"]).unwrap();
        assert_eq!(cli.run_config().unwrap().num, DEFAULT_NUM);
    }

    #[test]
    fn cold_reads_default_to_a_small_block_cache() {
        let cli = Cli::try_parse_from([
            "strata-bench",
            "--workloads",
            "multiget,readrandom,readmissing",
            "--cold",
        ])
        .unwrap();
        let config = cli.run_config().unwrap();
        assert!(config.cold);
        assert_eq!(config.settings.cache_bytes, COLD_CACHE_MB << 20);
        // An explicit --cache-mb wins.
        let cli = Cli::try_parse_from([
            "strata-bench",
            "--workloads",
            "multiget",
            "--cold",
            "--cache-mb",
            "64",
        ])
        .unwrap();
        assert_eq!(cli.run_config().unwrap().settings.cache_bytes, 64 << 20);
        let cli = Cli::try_parse_from(["strata-bench", "--workloads", "multiget"]).unwrap();
        let config = cli.run_config().unwrap();
        assert!(!config.cold);
        assert_eq!(config.settings.cache_bytes, DEFAULT_CACHE_MB << 20);
    }

    #[test]
    fn cold_reads_refuse_writes_and_several_threads() {
        for args in [
            &["strata-bench", "--cold"][..],
            &[
                "strata-bench",
                "--cold",
                "--workloads",
                "readrandom,fillrandom",
            ],
            &["strata-bench", "--cold", "--workloads", "readwhilewriting"],
            &[
                "strata-bench",
                "--cold",
                "--workloads",
                "multiget",
                "--threads",
                "2",
            ],
        ] {
            let cli = Cli::try_parse_from(args).unwrap();
            assert!(cli.run_config().is_err(), "{args:?}");
        }
    }

    #[test]
    fn io_takes_one_back_end_or_both() {
        let cli = Cli::try_parse_from(["strata-bench", "--io", "sync"]).unwrap();
        let config = cli.run_config().unwrap();
        assert_eq!(config.settings.io, Some(IoChoice::Sync));
        assert_eq!(config.strata_io_variants(), vec![Some(IoChoice::Sync)]);
        let cli = Cli::try_parse_from(["strata-bench", "--io", "uring,sync,uring"]).unwrap();
        let config = cli.run_config().unwrap();
        assert_eq!(config.settings.io, None);
        assert_eq!(
            config.strata_io_variants(),
            vec![Some(IoChoice::Uring), Some(IoChoice::Sync)]
        );
        let cli = Cli::try_parse_from(["strata-bench"]).unwrap();
        assert_eq!(cli.run_config().unwrap().strata_io_variants(), vec![None]);
    }

    #[test]
    fn unknown_names_are_usage_errors() {
        let cli = Cli::try_parse_from(["strata-bench", "--engines", "leveldb"]).unwrap();
        assert!(cli.run_config().is_err());
        let cli = Cli::try_parse_from(["strata-bench", "--workloads", "nope"]).unwrap();
        assert!(cli.run_config().is_err());
    }
}
