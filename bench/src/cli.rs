//! The command line. Issue 6 fixes the contract; options may be added,
//! never changed:
//!
//! `strata-bench [--engines strata,rocksdb,fjall|all] [--workloads LIST]
//! [--num N] [--key-size B] [--value-size B] [--threads T] [--dir DIR]
//! [--json FILE] [--io uring|sync] [--durability skip|async|sync]
//! [--block-size B] [--compression none|zstd] [--cache-mb M]
//! [--bloom-bits K] [--repeat R] [--seed S]`

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::{
    BACKGROUND_THREADS, CompressionChoice, DEFAULT_SEED, DurabilityChoice, EngineKind,
    EngineSettings, IoChoice, RunConfig,
};
use crate::error::Result;
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
    /// multiget --num/64 batches]. Fills always write --num records and
    /// scan always reads them all.
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

    /// Parent directory of the per-run database directories [default: the
    /// system temp dir]. Each run gets a fresh directory, removed after it.
    #[arg(long)]
    pub dir: Option<PathBuf>,

    /// Also write the results as a JSON array to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,

    /// strata's I/O back end [default: io_uring when available, or
    /// STRATA_IO].
    #[arg(long, value_enum)]
    pub io: Option<IoChoice>,

    /// Durability of timed writes.
    #[arg(long, value_enum, default_value = "async")]
    pub durability: DurabilityChoice,

    /// Data block size in bytes [default: strata's default block size].
    #[arg(long)]
    pub block_size: Option<u32>,

    /// Block compression.
    #[arg(long, value_enum, default_value = "none")]
    pub compression: CompressionChoice,

    /// Block cache size in MiB.
    #[arg(long, default_value_t = 512)]
    pub cache_mb: u64,

    /// Bloom filter bits per key (0: no blooms).
    #[arg(long, default_value_t = 10)]
    pub bloom_bits: u32,

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
        let config = RunConfig {
            engines: EngineKind::parse_list(&self.engines)?,
            workloads,
            num,
            ops: self.ops,
            key_bytes: self.key_size,
            value_bytes: self.value_size,
            threads: self.threads,
            dir: self.dir.clone(),
            repeat: self.repeat,
            seed: self.seed,
            settings: EngineSettings {
                block_size_bytes: self.block_size.unwrap_or(strata::DEFAULT_BLOCK_SIZE_BYTES),
                cache_bytes: self.cache_mb * 1024 * 1024,
                bloom_bits_per_key: self.bloom_bits,
                compression: self.compression,
                durability: self.durability,
                io: self.io,
                memtable_bytes: strata::DEFAULT_MEMSTORE_FLUSH_SIZE_BYTES,
                background_threads: BACKGROUND_THREADS,
            },
            progress: !self.no_progress,
        };
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn unknown_names_are_usage_errors() {
        let cli = Cli::try_parse_from(["strata-bench", "--engines", "leveldb"]).unwrap();
        assert!(cli.run_config().is_err());
        let cli = Cli::try_parse_from(["strata-bench", "--workloads", "nope"]).unwrap();
        assert!(cli.run_config().is_err());
    }
}
