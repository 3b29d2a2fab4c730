//! What a run is configured with: the engines, the shared engine settings
//! and the workload sizes. The command line (`cli`) resolves into these.
//! The engine settings are defined in `settings`, below the engines that
//! read them (this module names the workloads, which drive the engines), and
//! re-exported here for programs that configure a run through this module.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::error::{BenchError, Result};
pub use crate::settings::{
    CompressionChoice, DurabilityChoice, EngineKind, EngineSettings, IoChoice, ValueKind,
};
use crate::workload::Workload;

/// Default seed of every random choice.
pub const DEFAULT_SEED: u64 = 0x5eed_5eed;

/// Block cache of every engine in MiB when `--cache-mb` is not given.
pub const DEFAULT_CACHE_MB: u64 = 512;
/// Block cache of every engine in MiB with `--cold` when `--cache-mb` is not
/// given: small against the data of a cold run (about 120 MB at 1,000,000
/// records of 16 + 100 bytes), so a random read seldom finds its block in
/// the engine's cache and goes to the file; what every read uses (strata's
/// leaf index blocks, which share its block cache) still stays cached.
/// The price, for strata's multiget only: `get_many` reads a batch's blocks
/// into the block cache and then looks them up there, and new entries wait
/// in a probation section of about 3% of the capacity, so at 8 MiB many are
/// evicted before the batch uses them and are read again, from the page
/// cache the batch has just filled (CPU, not device reads; the table's cold
/// lines show the misses). From about 64 MiB on that stops, but then the
/// data must be about ten times larger (`--num 10000000`) to stay cold.
pub const COLD_CACHE_MB: u64 = 8;

/// Everything one invocation runs.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Engines, in the order they run within one repetition.
    pub engines: Vec<EngineKind>,
    /// Workloads, in order.
    pub workloads: Vec<Workload>,
    /// Records loaded or written (`--num`).
    pub num: u64,
    /// Operations of each timed phase; `None` means `num` (db_bench's
    /// `--reads`).
    pub ops: Option<u64>,
    /// Key size in bytes for db_bench and YCSB workloads.
    pub key_bytes: usize,
    /// Value size in bytes for db_bench and YCSB workloads.
    pub value_bytes: usize,
    /// What values are made of (`--values`).
    pub values: ValueKind,
    /// Client threads.
    pub threads: usize,
    /// Regions strata's table is split into before the load (1: none).
    pub regions: usize,
    /// Parent of the per-run directories; `None` is the system temp dir.
    pub dir: Option<PathBuf>,
    /// Repetitions; engines run interleaved within each.
    pub repeat: u32,
    /// Seed of every random choice.
    pub seed: u64,
    /// Engine settings.
    pub settings: EngineSettings,
    /// Show progress bars on stderr (when it is a terminal).
    pub progress: bool,
    /// strata's I/O back ends when more than one is compared (`--io
    /// uring,sync`): strata then runs once per back end, interleaved with
    /// the other engines. Empty: strata runs once with `settings.io`.
    pub strata_io: Vec<IoChoice>,
    /// Cold reads (`--cold`): evict the page cache of the database
    /// directory before every timed operation (see `cold`).
    pub cold: bool,
    /// Warm reads (`--warm`): one untimed full pass over the loaded data
    /// before the timed phase.
    pub warm: bool,
    /// Each run in a process of its own (`--isolate`): the program and the
    /// arguments that start a child for one run, to which the run's engine,
    /// workload, back end and number are added (see `runner::run_isolated`).
    /// `None`: every run in this process.
    pub isolate: Option<ChildCommand>,
    /// The number of the first repetition (a child started for repetition
    /// `n` runs only that one; 0 otherwise).
    pub first_run: u32,
}

/// How to start a child `strata-bench` for one run of an isolated suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildCommand {
    /// The program (this executable).
    pub program: PathBuf,
    /// The parent's arguments without the ones each child is given anew
    /// (engines, workloads, repetitions, back ends, JSON output, progress
    /// and isolation).
    pub args: Vec<OsString>,
}

impl RunConfig {
    /// Checks sizes that would make a workload meaningless.
    pub fn validate(&self) -> Result<()> {
        let usage = |m: String| Err(BenchError::Usage(m));
        if self.num == 0 {
            return usage("--num must be at least 1".into());
        }
        if self.threads == 0 {
            return usage("--threads must be at least 1".into());
        }
        if self.key_bytes < crate::keys::MIN_DB_BENCH_KEY_BYTES {
            return usage(format!(
                "--key-size must be at least {} bytes (keys start with an 8-byte index)",
                crate::keys::MIN_DB_BENCH_KEY_BYTES
            ));
        }
        if self.value_bytes == 0 {
            return usage("--value-size must be at least 1 byte".into());
        }
        if self.repeat == 0 {
            return usage("--repeat must be at least 1".into());
        }
        if self.ops == Some(0) {
            return usage("--ops must be at least 1".into());
        }
        if !(1024..=1024 * 1024).contains(&self.settings.block_size_bytes) {
            return usage("--block-size must be within 1 KiB..=1 MiB (fjall's range)".into());
        }
        if self.workloads.is_empty() {
            return usage("--workloads lists no workload".into());
        }
        if self.cold {
            // Eviction time is taken out of the phase's seconds, which is
            // exact only when no other client thread runs meanwhile.
            if self.threads != 1 {
                return usage("--cold needs --threads 1".into());
            }
            // DONTNEED leaves dirty pages alone, and a write workload is not
            // what a cold read measures.
            let writing: Vec<&str> = self
                .workloads
                .iter()
                .filter(|w| !w.reads_only())
                .map(|w| w.name())
                .collect();
            if !writing.is_empty() {
                let readers: Vec<&str> = Workload::ALL
                    .iter()
                    .filter(|w| w.reads_only())
                    .map(|w| w.name())
                    .collect();
                return usage(format!(
                    "--cold applies to read-only workloads ({}); {} write in their timed phase",
                    readers.join(", "),
                    writing.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// strata's I/O back ends to run, one run each per workload and
    /// repetition: every `strata_io` choice, or `settings.io` alone.
    pub fn strata_io_variants(&self) -> Vec<Option<IoChoice>> {
        if self.strata_io.is_empty() {
            vec![self.settings.io]
        } else {
            self.strata_io.iter().copied().map(Some).collect()
        }
    }
}
