//! What every engine is set up with: which engine, how durable its writes
//! are, its compression, block size, cache and background threads. The
//! engines (`engine`) read these and nothing else of a run's configuration,
//! so that `config`, which also names the workloads, sits above them.

use serde::Serialize;

use crate::error::{BenchError, Result};

/// An engine the harness can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// strata, through its public API.
    Strata,
    /// RocksDB through the `rocksdb` crate (feature `peers`).
    RocksDb,
    /// fjall (feature `peers`).
    Fjall,
}

impl EngineKind {
    /// Every engine, in table order.
    pub const ALL: [EngineKind; 3] = [EngineKind::Strata, EngineKind::RocksDb, EngineKind::Fjall];

    /// Name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Strata => "strata",
            EngineKind::RocksDb => "rocksdb",
            EngineKind::Fjall => "fjall",
        }
    }

    /// Whether this build can run the engine.
    pub fn compiled_in(self) -> bool {
        match self {
            EngineKind::Strata => true,
            EngineKind::RocksDb | EngineKind::Fjall => cfg!(feature = "peers"),
        }
    }

    /// Parses `strata,rocksdb,fjall` or `all`. `all` means every engine this
    /// build has; naming a peer that is not compiled in is an error.
    pub fn parse_list(list: &str) -> Result<Vec<EngineKind>> {
        if list.trim() == "all" {
            return Ok(EngineKind::ALL
                .into_iter()
                .filter(|e| e.compiled_in())
                .collect());
        }
        let mut engines = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let engine = EngineKind::ALL
                .into_iter()
                .find(|e| e.name() == name)
                .ok_or_else(|| {
                    BenchError::Usage(format!(
                        "unknown engine '{name}' (expected strata, rocksdb, fjall or all)"
                    ))
                })?;
            if !engine.compiled_in() {
                return Err(BenchError::Usage(format!(
                    "engine '{name}' is not in this build: rebuild with `--features peers` \
                     (see docs/benchmarks.md)"
                )));
            }
            if !engines.contains(&engine) {
                engines.push(engine);
            }
        }
        if engines.is_empty() {
            return Err(BenchError::Usage("--engines lists no engine".into()));
        }
        Ok(engines)
    }
}

/// How far a write must reach before it is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DurabilityChoice {
    /// No WAL (strata SkipWal, RocksDB `disableWAL`; fjall cannot skip its
    /// journal and keeps writes in its in-process journal buffer instead).
    Skip,
    /// WAL written, not synced per write (the default).
    Async,
    /// WAL synced (fdatasync) before each write returns.
    Sync,
}

/// Block compression of data files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum CompressionChoice {
    /// No compression.
    None,
    /// zstd level 3 (fjall has no zstd and uses lz4).
    Zstd,
    /// LZ4 (strata and fjall; this build's RocksDB has only zstd compiled in).
    Lz4,
    /// Snappy (strata only).
    Snappy,
    /// GZ: DEFLATE at level 6 (strata only).
    Gz,
}

impl CompressionChoice {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            CompressionChoice::None => "none",
            CompressionChoice::Zstd => "zstd",
            CompressionChoice::Lz4 => "lz4",
            CompressionChoice::Snappy => "snappy",
            CompressionChoice::Gz => "gz",
        }
    }
}

/// What values are made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    /// db_bench's values: pieces half random printable bytes, half a copy
    /// of that half (compression ratio about 0.5).
    #[default]
    Random,
    /// Text: words of a small English-like vocabulary separated by spaces,
    /// as log lines and documents compress (ratio about 0.25-0.35).
    Text,
}

/// zstd level used when `--compression zstd`: RocksDB's default level.
pub const ZSTD_LEVEL: i32 = 3;

/// strata's I/O back end (the peers have their own and ignore this).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum IoChoice {
    /// io_uring.
    Uring,
    /// pread/pwrite.
    Sync,
}

impl IoChoice {
    /// Name on the command line, as strata reports its back end.
    pub fn name(self) -> &'static str {
        match self {
            IoChoice::Uring => "uring",
            IoChoice::Sync => "sync",
        }
    }
}

/// Settings applied to every engine as equally as its API allows
/// (docs/benchmarks.md lists how each engine maps them).
#[derive(Debug, Clone, Serialize)]
pub struct EngineSettings {
    /// Data block size in bytes.
    pub block_size_bytes: u32,
    /// Block cache capacity in bytes.
    pub cache_bytes: u64,
    /// Bloom filter bits per key; 0 disables blooms.
    pub bloom_bits_per_key: u32,
    /// Block compression.
    pub compression: CompressionChoice,
    /// Write durability.
    pub durability: DurabilityChoice,
    /// strata's I/O back end; `None` lets strata choose (`STRATA_IO` applies).
    pub io: Option<IoChoice>,
    /// Size at which a memtable / memstore is flushed, in bytes.
    pub memtable_bytes: u64,
    /// Threads for flushes and compactions.
    pub background_threads: usize,
    /// strata's `DbOptions::memstore_parts`: memstores a flush size is split
    /// into (1: one).
    pub memstore_parts: u32,
    /// `bulkload`: strata verifies every block before loading.
    pub bulk_verify_blocks: bool,
}

/// Flush and compaction threads of every engine: RocksDB's default
/// `max_background_jobs`, fjall's default on this 2-core machine, strata's
/// default.
pub const BACKGROUND_THREADS: usize = 2;
