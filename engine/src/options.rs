//! Configuration as small typed values: database options, table and column
//! family descriptors, durability.

use std::sync::Arc;
use std::time::Duration;

use crate::cell::{DEFAULT_MAX_VALUE_BYTES, validate_family_name};
use crate::clock::{Clock, SystemClock};
use crate::codec::{DecodeError, Decoder, Encode};
use crate::error::{Error, Result};
use crate::keys::Salter;

/// How far a mutation must reach before the call returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Durability {
    /// Not written to the WAL at all: lost on a crash until flushed.
    SkipWal,
    /// Written to the WAL by the commit thread and synced within
    /// [`DbOptions::async_wal_sync_interval_ms`]; the call does not wait.
    AsyncWal,
    /// The call returns only after the WAL record is on disk (`fdatasync`).
    #[default]
    SyncWal,
    /// Like `SyncWal` but with `fsync` (file metadata too).
    FsyncWal,
}

impl Durability {
    /// HBase's name for the mode.
    pub fn name(self) -> &'static str {
        match self {
            Durability::SkipWal => "SKIP_WAL",
            Durability::AsyncWal => "ASYNC_WAL",
            Durability::SyncWal => "SYNC_WAL",
            Durability::FsyncWal => "FSYNC_WAL",
        }
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            Durability::SkipWal => 0,
            Durability::AsyncWal => 1,
            Durability::SyncWal => 2,
            Durability::FsyncWal => 3,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<Durability> {
        match code {
            0 => Some(Durability::SkipWal),
            1 => Some(Durability::AsyncWal),
            2 => Some(Durability::SyncWal),
            3 => Some(Durability::FsyncWal),
            _ => None,
        }
    }
}

/// Which I/O back end to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoMode {
    /// io_uring when the kernel allows it, otherwise the sync back end
    /// (said once on stderr). The environment variable `STRATA_IO=sync|uring`
    /// overrides this choice.
    #[default]
    Auto,
    /// io_uring or an error at open.
    Uring,
    /// Plain `pread`/`pwrite`/`fdatasync`.
    Sync,
}

/// What replay does when it finds damage in the WAL (`DbOptions::wal_recovery`).
///
/// The names follow RocksDB's WAL recovery modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WalRecovery {
    /// Refuse to open on any damage (a damaged record, a truncated or
    /// missing segment, a damaged header), with [`Error::Corruption`] naming
    /// the file and offset. Only an incomplete last group of the newest
    /// segment, which a crash during its write leaves and whose writers were
    /// never acknowledged, is cut. The default.
    #[default]
    Strict,
    /// Replay every record before the first damage and discard the rest: the
    /// damaged segment is cut at the damage and sealed, it and every later
    /// segment are first copied to `wal/damaged/` (nothing is deleted), and
    /// [`crate::RecoveryReport`] says what was discarded. Acknowledged writes
    /// after the damage are lost: this is the operator's way to open a
    /// database whose log cannot be repaired, as RocksDB's
    /// `kPointInTimeRecovery`.
    PointInTime,
}

/// Options for opening a database directory.
#[derive(Debug, Clone)]
pub struct DbOptions {
    /// Create the directory and an empty database when missing (default true).
    pub create_if_missing: bool,
    /// I/O back end choice.
    pub io: IoMode,
    /// Size each WAL segment is preallocated to, in bytes.
    pub wal_segment_bytes: u64,
    /// Longest time an `AsyncWal` write stays unsynced, in milliseconds.
    pub async_wal_sync_interval_ms: u64,
    /// More WAL segments than this make the regions pinning the oldest one flush.
    pub max_wal_segments: usize,
    /// Source of "now" for default timestamps and TTL.
    pub clock: Arc<dyn Clock>,
    /// Block cache capacity in bytes (decoded data and leaf index blocks).
    pub block_cache_bytes: u64,
    /// All memstores together may hold this much before the largest regions
    /// flush; writers wait beyond one and a half times this.
    pub global_memstore_limit_bytes: u64,
    /// Threads running flushes and compactions.
    pub background_threads: usize,
    /// L0 files in a store that trigger a compaction into L1.
    pub l0_compaction_trigger: usize,
    /// L0 files at which writes to the region start slowing down.
    pub l0_slowdown_files: usize,
    /// L0 files at which writes to the region wait for compaction.
    pub l0_stop_files: usize,
    /// Size of the files compaction writes, in bytes.
    pub target_file_bytes: u64,
    /// Target size of L1 in bytes; each deeper level is `level_multiplier` times larger.
    pub level_base_bytes: u64,
    /// Size ratio between adjacent levels.
    pub level_multiplier: u64,
    /// Bloom filter bits per key.
    pub bloom_bits_per_key: u32,
    /// Flush every memstore when the database closes (default true), so
    /// that reopening replays nothing and `SkipWal` data survives a clean
    /// close.
    pub flush_on_close: bool,
    /// Open without changing anything on disk (default false): the manifest
    /// is read, not rewritten; the WAL is replayed into memory, never cut,
    /// sealed or extended; no orphan file is deleted; nothing is flushed or
    /// compacted. Every write, flush, compaction, split and catalog change
    /// fails with [`crate::Error::ReadOnly`]. Any number of read-only
    /// handles may share a directory, none while a writer holds it. The
    /// disk tools (`strata verify`, `strata regions`) open this way.
    pub read_only: bool,
    /// What opening does when it finds damage in the WAL (default
    /// [`WalRecovery::Strict`]: refuse with [`crate::Error::Corruption`]).
    pub wal_recovery: WalRecovery,
    /// The region normalizer (HBase's `normalizer_switch`, default off):
    /// after flushes, adjacent small regions of a table merge (see
    /// `normalizer_merge_below_bytes`). [`crate::Db::set_normalizer`] turns
    /// it on and off while the database runs.
    pub region_normalizer: bool,
    /// Adjacent regions whose sizes (files and memstores) add up to less
    /// than this merge when the normalizer runs; 0 (the default) uses the
    /// table's average region size, as HBase's normalizer does, so a table
    /// whose regions are all empty (just pre-split) merges nothing.
    pub normalizer_merge_below_bytes: u64,
    /// The normalizer leaves tables with fewer regions than this (default
    /// 3, HBase's `hbase.normalizer.min.region.count`) and never merges a
    /// table below it.
    pub normalizer_min_regions: usize,
    /// The normalizer leaves regions younger than this (since the database
    /// opened, or the split or merge that made them; default 0).
    pub normalizer_min_region_age: std::time::Duration,
    /// How often the compaction checker looks at every store for work that
    /// time alone makes due (default 10 s; HBase's `CompactionChecker` chore):
    /// files whose every cell has outlived the family's TTL are dropped
    /// whole, and a store whose periodic major compaction is due gets one.
    /// Zero turns the checker off.
    pub compaction_check_interval: std::time::Duration,
    /// HBase's `hbase.hregion.majorcompaction` (default 7 days): a store whose
    /// oldest file was written longer ago than this (give or take the jitter)
    /// is major-compacted, so deletes and expired cells stop taking space even
    /// where no write triggers a compaction. A file's age is the clock's now
    /// minus its modification time. Zero turns periodic major compaction off.
    pub major_compaction_period: std::time::Duration,
    /// HBase's `hbase.hregion.majorcompaction.jitter` (default 0.5): each
    /// store's period is `major_compaction_period` times a factor in
    /// `[1 - jitter, 1 + jitter]`, fixed per store (drawn from its region and
    /// family ids), so the stores of a database do not all rewrite at once.
    pub major_compaction_jitter: f64,
    /// The background I/O budget: bytes per second that flushes and
    /// compactions together may write to HFiles (default 0: unlimited), as
    /// RocksDB's `RateLimiter`. Refilled every 100 ms; flushes are served
    /// before compactions (compaction goes first every tenth refill, so it
    /// is never starved). Foreground work (WAL appends, reads) and bulk
    /// loads are never limited. A limit below the rate writes arrive at
    /// makes L0 files pile up until writers slow down and stop
    /// (`l0_slowdown_files`, `l0_stop_files`), and a close that flushes
    /// large memstores takes their size over this rate. At least 64 KiB/s
    /// when set. See docs/operations.md, "Background I/O budget".
    pub background_write_bytes_per_sec: u64,
    /// How many memstores a store's flush size is split into (default 1:
    /// one). With `n > 1` a writer that finds a store's active memstore at
    /// `flush size / n` bytes freezes it and starts a new one, and the
    /// region's flush (still at the flush size) writes every frozen one into
    /// one file, as RocksDB keeps several write buffers. Random inserts then
    /// descend smaller skiplists whose upper levels stay in cache (random
    /// puts at 1,000,000 records and a 128 MiB flush size: 1.29x at 2, 1.52x
    /// at 4), but a read of a row written since the last flush probes every
    /// memstore: ycsb-f 1.00x / 0.79x, readwhilewriting 0.81x / 0.63x
    /// (docs/benchmarks.md, "Write workloads", memstore parts). At most 16.
    pub memstore_parts: u32,
}

/// HBase's default `hbase.hregion.majorcompaction`: 7 days.
pub const DEFAULT_MAJOR_COMPACTION_PERIOD: std::time::Duration =
    std::time::Duration::from_secs(7 * 24 * 3600);

impl Default for DbOptions {
    fn default() -> Self {
        DbOptions {
            create_if_missing: true,
            io: IoMode::Auto,
            wal_segment_bytes: 64 * 1024 * 1024,
            async_wal_sync_interval_ms: 100,
            max_wal_segments: 32,
            memstore_parts: 1,
            clock: Arc::new(SystemClock),
            block_cache_bytes: 256 * 1024 * 1024,
            global_memstore_limit_bytes: 1024 * 1024 * 1024,
            background_threads: 2,
            l0_compaction_trigger: 4,
            l0_slowdown_files: 20,
            l0_stop_files: 36,
            target_file_bytes: 64 * 1024 * 1024,
            level_base_bytes: 256 * 1024 * 1024,
            level_multiplier: 10,
            bloom_bits_per_key: 10,
            flush_on_close: true,
            read_only: false,
            wal_recovery: WalRecovery::Strict,
            region_normalizer: false,
            normalizer_merge_below_bytes: 0,
            normalizer_min_regions: 3,
            normalizer_min_region_age: std::time::Duration::ZERO,
            compaction_check_interval: std::time::Duration::from_secs(10),
            major_compaction_period: DEFAULT_MAJOR_COMPACTION_PERIOD,
            major_compaction_jitter: 0.5,
            background_write_bytes_per_sec: 0,
        }
    }
}

/// The smallest background I/O budget accepted (when one is set).
pub const MIN_BACKGROUND_WRITE_BYTES_PER_SEC: u64 = 64 * 1024;

impl DbOptions {
    /// These options with a background I/O budget of `bytes_per_sec` for
    /// flush and compaction writes (0: unlimited); see
    /// [`DbOptions::background_write_bytes_per_sec`].
    pub fn with_background_write_limit(mut self, bytes_per_sec: u64) -> DbOptions {
        self.background_write_bytes_per_sec = bytes_per_sec;
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let check = |name: &'static str, ok: bool, value: String| {
            if ok {
                Ok(())
            } else {
                Err(Error::InvalidOption {
                    name,
                    reason: value,
                })
            }
        };
        check(
            "wal_segment_bytes",
            (64 * 1024..=4 * 1024 * 1024 * 1024).contains(&self.wal_segment_bytes),
            format!("{} is outside 64 KiB..=4 GiB", self.wal_segment_bytes),
        )?;
        check(
            "async_wal_sync_interval_ms",
            (1..=60_000).contains(&self.async_wal_sync_interval_ms),
            format!("{} is outside 1..=60000", self.async_wal_sync_interval_ms),
        )?;
        check(
            "max_wal_segments",
            self.max_wal_segments >= 2,
            "must be at least 2".into(),
        )?;
        check(
            "memstore_parts",
            (1..=16).contains(&self.memstore_parts),
            format!("{} is outside 1..=16", self.memstore_parts),
        )?;
        check(
            "background_threads",
            (1..=64).contains(&self.background_threads),
            "must be 1..=64".into(),
        )?;
        check(
            "l0 thresholds",
            1 <= self.l0_compaction_trigger
                && self.l0_compaction_trigger < self.l0_slowdown_files
                && self.l0_slowdown_files < self.l0_stop_files,
            "need 1 <= l0_compaction_trigger < l0_slowdown_files < l0_stop_files".into(),
        )?;
        check(
            "target_file_bytes",
            self.target_file_bytes >= 64 * 1024,
            "must be at least 64 KiB".into(),
        )?;
        check(
            "level_base_bytes",
            self.level_base_bytes >= 64 * 1024,
            "must be at least 64 KiB".into(),
        )?;
        check(
            "level_multiplier",
            (2..=100).contains(&self.level_multiplier),
            "must be 2..=100".into(),
        )?;
        check(
            "bloom_bits_per_key",
            (1..=64).contains(&self.bloom_bits_per_key),
            "must be 1..=64".into(),
        )?;
        check(
            "global_memstore_limit_bytes",
            self.global_memstore_limit_bytes >= 1024 * 1024,
            "must be at least 1 MiB".into(),
        )?;
        check(
            "background_write_bytes_per_sec",
            self.background_write_bytes_per_sec == 0
                || self.background_write_bytes_per_sec >= MIN_BACKGROUND_WRITE_BYTES_PER_SEC,
            format!(
                "{} is below 64 KiB/s (0 turns the limit off)",
                self.background_write_bytes_per_sec
            ),
        )?;
        check(
            "major_compaction_jitter",
            (0.0..=1.0).contains(&self.major_compaction_jitter),
            format!("{} is outside 0.0..=1.0", self.major_compaction_jitter),
        )?;
        Ok(())
    }
}

/// Which bloom filter an HFile keeps for a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BloomType {
    /// No bloom filter.
    None,
    /// Keyed by row: answers "may this row be in the file?".
    #[default]
    Row,
    /// Keyed by row and column: answers "may this cell be in the file?".
    RowCol,
}

impl BloomType {
    /// Every bloom filter type, in the order HBase lists them.
    pub const ALL: [BloomType; 3] = [BloomType::None, BloomType::Row, BloomType::RowCol];

    /// HBase's name (`NONE`, `ROW`, `ROWCOL`).
    pub fn name(self) -> &'static str {
        match self {
            BloomType::None => "NONE",
            BloomType::Row => "ROW",
            BloomType::RowCol => "ROWCOL",
        }
    }

    /// The type HBase names `name`, in any case (`row` is [`BloomType::Row`]);
    /// `None` for a name strata does not build (`ROWPREFIX_FIXED_LENGTH`).
    pub fn from_name(name: &str) -> Option<BloomType> {
        Self::ALL
            .into_iter()
            .find(|bloom| bloom.name().eq_ignore_ascii_case(name))
    }
    pub(crate) fn code(self) -> u8 {
        match self {
            BloomType::None => 0,
            BloomType::Row => 1,
            BloomType::RowCol => 2,
        }
    }
    pub(crate) fn from_code(code: u8) -> Option<BloomType> {
        match code {
            0 => Some(BloomType::None),
            1 => Some(BloomType::Row),
            2 => Some(BloomType::RowCol),
            _ => None,
        }
    }

    /// Reads a bloom type's code `u8`; an unknown code is refused.
    pub(crate) fn decode(d: &mut Decoder<'_>) -> Result<BloomType, DecodeError> {
        let code = d.u8()?;
        Self::from_code(code).ok_or_else(|| DecodeError(format!("unknown bloom type {code}")))
    }
}

/// Block compression for a family's HFiles, by HBase's algorithm names.
///
/// Every stored block records the codec it was compressed with
/// (`docs/format.md`, "HFile: blocks"), so a family whose codec is changed
/// keeps reading its older files, and a file may hold blocks of several
/// codecs. All codecs are pure Rust.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// Blocks stored as is.
    #[default]
    None,
    /// zstd at the given level (1..=22).
    Zstd {
        /// zstd compression level.
        level: i32,
    },
    /// LZ4's block format (HBase `LZ4`): fast to compress and very fast to
    /// decompress, a smaller saving than zstd.
    Lz4,
    /// Snappy's raw format (HBase `SNAPPY`): about LZ4's speed and saving.
    Snappy,
    /// DEFLATE, the algorithm of gzip, at level [`GZ_LEVEL`] (HBase `GZ`):
    /// slower than zstd for a similar saving; there for schemas that name it.
    Gz,
}

/// The DEFLATE level of [`Compression::Gz`]: zlib's and HBase's default (6).
pub const GZ_LEVEL: u8 = 6;

impl Compression {
    /// Every algorithm with its default settings (zstd at level 3), in the
    /// order of their codes.
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Zstd { level: 3 },
        Compression::Lz4,
        Compression::Snappy,
        Compression::Gz,
    ];

    /// HBase's name (`NONE`, `ZSTD`, `LZ4`, `SNAPPY`, `GZ`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "NONE",
            Compression::Zstd { .. } => "ZSTD",
            Compression::Lz4 => "LZ4",
            Compression::Snappy => "SNAPPY",
            Compression::Gz => "GZ",
        }
    }

    /// The code that names the algorithm in a block trailer, the HFile meta
    /// block and the manifest (`docs/format.md`): 0 none, 1 zstd, 2 lz4,
    /// 3 snappy, 4 gz.
    pub(crate) fn code(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Zstd { .. } => 1,
            Compression::Lz4 => 2,
            Compression::Snappy => 3,
            Compression::Gz => 4,
        }
    }

    /// Appends the compression as the HFile meta block and the manifest's
    /// descriptors store it (`docs/format.md`): code `u8` ([`Self::code`]),
    /// then the zstd level `u32` (0 for every other algorithm).
    pub(crate) fn encode(self, out: &mut Vec<u8>) {
        let level = match self {
            Compression::Zstd { level } => level as u32,
            _ => 0,
        };
        out.put_u8(self.code());
        out.put_u32(level);
    }

    /// Reads what [`Compression::encode`] wrote; an unknown code is refused.
    pub(crate) fn decode(d: &mut Decoder<'_>) -> Result<Compression, DecodeError> {
        match (d.u8()?, d.u32()?) {
            (0, _) => Ok(Compression::None),
            (1, level) => Ok(Compression::Zstd {
                level: level as i32,
            }),
            (2, _) => Ok(Compression::Lz4),
            (3, _) => Ok(Compression::Snappy),
            (4, _) => Ok(Compression::Gz),
            (other, _) => Err(DecodeError(format!("unknown compression {other}"))),
        }
    }
}

/// Whether delete markers and the cells they hide are kept (HBase's
/// `KEEP_DELETED_CELLS`, `org.apache.hadoop.hbase.KeepDeletedCells`;
/// docs/semantics.md, "Keeping deleted cells").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeepDeletedCells {
    /// Compaction drops hidden cells and the markers hiding them once
    /// nothing needs them; a marker hides what it covers from every read.
    #[default]
    False,
    /// Hidden cells and markers are kept (versions beyond `VERSIONS` and
    /// cells expired by TTL still go); a marker hides a cell only from reads
    /// whose time range holds the marker's timestamp.
    True,
    /// As `True` until a marker expires by the family's TTL; from then on it
    /// acts as under `False`.
    Ttl,
}

impl KeepDeletedCells {
    /// Every mode, in HBase's order.
    pub const ALL: [KeepDeletedCells; 3] = [
        KeepDeletedCells::False,
        KeepDeletedCells::True,
        KeepDeletedCells::Ttl,
    ];

    /// HBase's name (`FALSE`, `TRUE`, `TTL`).
    pub fn name(self) -> &'static str {
        match self {
            KeepDeletedCells::False => "FALSE",
            KeepDeletedCells::True => "TRUE",
            KeepDeletedCells::Ttl => "TTL",
        }
    }

    /// The mode HBase names `name`, in any case; `None` for another name.
    pub fn from_name(name: &str) -> Option<KeepDeletedCells> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.name().eq_ignore_ascii_case(name))
    }

    /// The code the manifest stores (`docs/format.md`, *descriptor*).
    pub(crate) fn code(self) -> u8 {
        match self {
            KeepDeletedCells::False => 0,
            KeepDeletedCells::True => 1,
            KeepDeletedCells::Ttl => 2,
        }
    }

    /// Reads a mode's code `u8`; an unknown code is refused.
    pub(crate) fn decode(d: &mut Decoder<'_>) -> Result<KeepDeletedCells, DecodeError> {
        match d.u8()? {
            0 => Ok(KeepDeletedCells::False),
            1 => Ok(KeepDeletedCells::True),
            2 => Ok(KeepDeletedCells::Ttl),
            other => Err(DecodeError(format!("unknown KEEP_DELETED_CELLS {other}"))),
        }
    }
}

/// What a family keeps beyond its version window and TTL: `MIN_VERSIONS`
/// and `KEEP_DELETED_CELLS` (the manifest stores them only when either
/// differs from its default, so older manifests read back unchanged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Retention {
    pub(crate) min_versions: u32,
    pub(crate) keep_deleted_cells: KeepDeletedCells,
}

/// A column family: its name and how its cells are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyDescriptor {
    name: String,
    max_versions: u32,
    ttl_ms: Option<u64>,
    retention: Retention,
    bloom: BloomType,
    block_size_bytes: u32,
    compression: Compression,
    in_memory: bool,
    block_cache: bool,
    major_compaction: MajorCompactionSchedule,
}

/// A family's own periodic major compaction, HBase's family `CONFIGURATION`
/// keys `hbase.hregion.majorcompaction` and
/// `hbase.hregion.majorcompaction.jitter`: what is `None` follows the
/// database's [`DbOptions::major_compaction_period`] and
/// [`DbOptions::major_compaction_jitter`]. The manifest stores it only when
/// either is set, so older manifests read back unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct MajorCompactionSchedule {
    /// The period in milliseconds; `Some(0)` turns it off for the family.
    pub(crate) period_ms: Option<u64>,
    /// The jitter's `f64` bits (bits, so that descriptors compare with `Eq`);
    /// [`FamilyDescriptor::validate`] keeps it within `0.0..=1.0`.
    pub(crate) jitter_bits: Option<u64>,
}

impl MajorCompactionSchedule {
    /// Whether either setting is given (the manifest then stores them).
    pub(crate) fn is_set(&self) -> bool {
        self.period_ms.is_some() || self.jitter_bits.is_some()
    }
}

/// Default HFile data block size in bytes: 14 KiB, the largest size
/// jemalloc serves from a slab. A cached block's payload is one allocation
/// of at most the block size; at 16 KiB it would be a "large" allocation,
/// which jemalloc (cache-oblivious, its default) pads with a page, so a full
/// cache held 20 KiB per 16 KiB block. docs/benchmarks.md has the
/// measurements that chose the size.
pub const DEFAULT_BLOCK_SIZE_BYTES: u32 = 14 * 1024;

impl FamilyDescriptor {
    /// A family with HBase's defaults (1 version, no TTL, ROW bloom, no
    /// compression, block cache on) and 14 KiB blocks
    /// ([`DEFAULT_BLOCK_SIZE_BYTES`]).
    pub fn new(name: impl Into<String>) -> Self {
        FamilyDescriptor {
            name: name.into(),
            max_versions: 1,
            ttl_ms: None,
            retention: Retention::default(),
            bloom: BloomType::Row,
            block_size_bytes: DEFAULT_BLOCK_SIZE_BYTES,
            compression: Compression::None,
            in_memory: false,
            block_cache: true,
            major_compaction: MajorCompactionSchedule::default(),
        }
    }

    /// Number of newest timestamps per column that are kept (`VERSIONS`).
    pub fn max_versions(mut self, versions: u32) -> Self {
        self.max_versions = versions;
        self
    }

    /// Cells older than `ttl` (by their timestamp) are no longer returned.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl_ms = Some(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        self
    }

    /// Removes the TTL (cells live forever).
    pub fn no_ttl(mut self) -> Self {
        self.ttl_ms = None;
        self
    }

    /// `MIN_VERSIONS`: with a TTL, the newest `versions` versions of each
    /// column are kept and returned even once expired (HBase's
    /// `ColumnTracker`); no effect without a TTL. At most `VERSIONS`
    /// ([`Error::InvalidOption`] otherwise, when the table is created or
    /// altered).
    pub fn min_versions(mut self, versions: u32) -> Self {
        self.retention.min_versions = versions;
        self
    }

    /// `KEEP_DELETED_CELLS`: whether deleted cells stay readable by
    /// time-range and raw reads ([`KeepDeletedCells`]).
    pub fn keep_deleted_cells(mut self, mode: KeepDeletedCells) -> Self {
        self.retention.keep_deleted_cells = mode;
        self
    }

    /// Bloom filter kind.
    pub fn bloom(mut self, bloom: BloomType) -> Self {
        self.bloom = bloom;
        self
    }

    /// HFile data block size in bytes.
    pub fn block_size_bytes(mut self, bytes: u32) -> Self {
        self.block_size_bytes = bytes;
        self
    }

    /// Block compression.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Prefer keeping this family's blocks in the cache.
    pub fn in_memory(mut self, in_memory: bool) -> Self {
        self.in_memory = in_memory;
        self
    }

    /// Whether data blocks of this family go through the block cache.
    pub fn block_cache(mut self, enabled: bool) -> Self {
        self.block_cache = enabled;
        self
    }

    /// This family's own periodic major compaction period, HBase's family
    /// `CONFIGURATION => {'hbase.hregion.majorcompaction' => MS}`, in place of
    /// [`DbOptions::major_compaction_period`]; zero turns periodic major
    /// compaction off for this family alone. `None` follows the database.
    pub fn major_compaction_period(mut self, period: Option<Duration>) -> Self {
        self.major_compaction.period_ms =
            period.map(|period| u64::try_from(period.as_millis()).unwrap_or(u64::MAX));
        self
    }

    /// This family's own `hbase.hregion.majorcompaction.jitter` (0.0 to 1.0;
    /// others are refused when the table is created or altered), in place of
    /// [`DbOptions::major_compaction_jitter`]. `None` follows the database.
    pub fn major_compaction_jitter(mut self, jitter: Option<f64>) -> Self {
        self.major_compaction.jitter_bits = jitter.map(f64::to_bits);
        self
    }

    /// The family's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// `VERSIONS`.
    pub fn get_max_versions(&self) -> u32 {
        self.max_versions
    }
    /// `MIN_VERSIONS`.
    pub fn get_min_versions(&self) -> u32 {
        self.retention.min_versions
    }
    /// `KEEP_DELETED_CELLS`.
    pub fn get_keep_deleted_cells(&self) -> KeepDeletedCells {
        self.retention.keep_deleted_cells
    }
    /// `MIN_VERSIONS` and `KEEP_DELETED_CELLS` together.
    pub(crate) fn retention(&self) -> Retention {
        self.retention
    }
    /// The TTL, if any.
    pub fn get_ttl(&self) -> Option<Duration> {
        self.ttl_ms.map(Duration::from_millis)
    }
    /// The TTL in milliseconds, if any.
    pub(crate) fn ttl_ms(&self) -> Option<u64> {
        self.ttl_ms
    }
    /// At `now_ms`, cells with a timestamp below this are expired
    /// (`i64::MIN` without a TTL: none is).
    pub(crate) fn oldest_unexpired_ms(&self, now_ms: i64) -> i64 {
        oldest_unexpired_ms(self.ttl_ms, now_ms)
    }
    /// Bloom filter kind.
    pub fn get_bloom(&self) -> BloomType {
        self.bloom
    }
    /// Block size in bytes.
    pub fn get_block_size_bytes(&self) -> u32 {
        self.block_size_bytes
    }
    /// Compression.
    pub fn get_compression(&self) -> Compression {
        self.compression
    }
    /// `IN_MEMORY`.
    pub fn is_in_memory(&self) -> bool {
        self.in_memory
    }
    /// `BLOCKCACHE`.
    pub fn is_block_cache_enabled(&self) -> bool {
        self.block_cache
    }
    /// The family's own periodic major compaction period, if it has one.
    pub fn get_major_compaction_period(&self) -> Option<Duration> {
        self.major_compaction.period_ms.map(Duration::from_millis)
    }
    /// The family's own major compaction jitter, if it has one.
    pub fn get_major_compaction_jitter(&self) -> Option<f64> {
        self.major_compaction.jitter_bits.map(f64::from_bits)
    }
    /// Both major compaction settings (the manifest's form).
    pub(crate) fn major_compaction_schedule(&self) -> MajorCompactionSchedule {
        self.major_compaction
    }
    /// This family with `schedule` (as the manifest stored it).
    pub(crate) fn with_major_compaction_schedule(
        mut self,
        schedule: MajorCompactionSchedule,
    ) -> Self {
        self.major_compaction = schedule;
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        validate_family_name(self.name.as_bytes())?;
        if self.max_versions == 0 {
            return Err(Error::InvalidOption {
                name: "VERSIONS",
                reason: format!("family '{}' must keep at least 1 version", self.name),
            });
        }
        if self.retention.min_versions > self.max_versions {
            // HBase's TableDescriptorChecker refuses the same.
            return Err(Error::InvalidOption {
                name: "MIN_VERSIONS",
                reason: format!(
                    "family '{}' has MIN_VERSIONS {} above VERSIONS {}",
                    self.name, self.retention.min_versions, self.max_versions
                ),
            });
        }
        if self.ttl_ms == Some(0) {
            return Err(Error::InvalidOption {
                name: "TTL",
                reason: format!("family '{}' has a TTL of 0", self.name),
            });
        }
        if !(1024..=16 * 1024 * 1024).contains(&self.block_size_bytes) {
            return Err(Error::InvalidOption {
                name: "BLOCKSIZE",
                reason: format!("{} is outside 1 KiB..=16 MiB", self.block_size_bytes),
            });
        }
        if let Compression::Zstd { level } = self.compression
            && !(1..=22).contains(&level)
        {
            return Err(Error::InvalidOption {
                name: "COMPRESSION",
                reason: format!("zstd level {level} is outside 1..=22"),
            });
        }
        if let Some(jitter) = self.get_major_compaction_jitter()
            && !(0.0..=1.0).contains(&jitter)
        {
            return Err(Error::InvalidOption {
                name: "hbase.hregion.majorcompaction.jitter",
                reason: format!(
                    "family '{}' has a major compaction jitter of {jitter}, outside 0.0..=1.0",
                    self.name
                ),
            });
        }
        Ok(())
    }

    /// Decomposes into raw parts for the manifest encoding.
    #[allow(clippy::type_complexity)]
    pub(crate) fn parts(
        &self,
    ) -> (
        &str,
        u32,
        Option<u64>,
        BloomType,
        u32,
        Compression,
        bool,
        bool,
        Retention,
    ) {
        (
            &self.name,
            self.max_versions,
            self.ttl_ms,
            self.bloom,
            self.block_size_bytes,
            self.compression,
            self.in_memory,
            self.block_cache,
            self.retention,
        )
    }

    /// Rebuilds from the parts the manifest stored.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        name: String,
        max_versions: u32,
        ttl_ms: Option<u64>,
        bloom: BloomType,
        block_size_bytes: u32,
        compression: Compression,
        in_memory: bool,
        block_cache: bool,
        retention: Retention,
    ) -> Self {
        FamilyDescriptor {
            name,
            max_versions,
            ttl_ms,
            retention,
            bloom,
            block_size_bytes,
            compression,
            in_memory,
            block_cache,
            major_compaction: MajorCompactionSchedule::default(),
        }
    }
}

/// At `now_ms`, cells with a timestamp below this are expired under a TTL of
/// `ttl_ms` milliseconds (`i64::MIN` without a TTL: none is).
pub(crate) fn oldest_unexpired_ms(ttl_ms: Option<u64>, now_ms: i64) -> i64 {
    match ttl_ms {
        Some(ttl) => now_ms.saturating_sub(i64::try_from(ttl).unwrap_or(i64::MAX)),
        None => i64::MIN,
    }
}

/// How a new table is cut into regions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PreSplit {
    /// One region covering every row.
    #[default]
    None,
    /// Explicit split keys; region `i` covers `[keys[i-1], keys[i])`.
    Keys(Vec<Vec<u8>>),
    /// HBase's `HexStringSplit`: `regions` regions over 8-character lowercase
    /// hex keys `00000000`..`ffffffff`.
    HexString {
        /// Number of regions (>= 1).
        regions: u32,
    },
    /// HBase's `UniformSplit`: `regions` regions evenly over 8-byte keys.
    Uniform {
        /// Number of regions (>= 1).
        regions: u32,
    },
    /// One region per salt bucket of [`Salter`] (`000|`, `001|`, ...).
    SaltBuckets {
        /// Number of buckets (>= 1).
        buckets: u32,
    },
}

/// Most regions one pre-split may create.
pub const MAX_PRESPLIT_REGIONS: u32 = 100_000;

impl PreSplit {
    /// The split keys this choice produces, sorted and distinct.
    pub fn split_keys(&self) -> Result<Vec<Vec<u8>>> {
        let check_count = |n: u32| {
            if n == 0 || n > MAX_PRESPLIT_REGIONS {
                Err(Error::InvalidOption {
                    name: "NUMREGIONS",
                    reason: format!("{n} is outside 1..={MAX_PRESPLIT_REGIONS}"),
                })
            } else {
                Ok(n)
            }
        };
        let keys = match self {
            PreSplit::None => Vec::new(),
            PreSplit::Keys(keys) => {
                let mut keys = keys.clone();
                keys.sort();
                keys.dedup();
                if keys.iter().any(Vec::is_empty) {
                    return Err(Error::InvalidOption {
                        name: "SPLITS",
                        reason: "a split key is empty".into(),
                    });
                }
                if keys.len() >= MAX_PRESPLIT_REGIONS as usize {
                    return Err(Error::InvalidOption {
                        name: "SPLITS",
                        reason: format!("more than {MAX_PRESPLIT_REGIONS} regions"),
                    });
                }
                keys
            }
            PreSplit::HexString { regions } => {
                // HBase 2's HexStringSplit: the range 00000000..=ffffffff
                // holds 2^32 keys (the last row is inclusive) and each
                // region spans floor(2^32 / n) of them: `40000000`,
                // `80000000`, `c0000000` for 4 regions.
                let n = u64::from(check_count(*regions)?);
                let step = (1u64 << 32) / n;
                (1..n)
                    .map(|i| format!("{:08x}", step * i).into_bytes())
                    .collect()
            }
            PreSplit::Uniform { regions } => {
                let n = u128::from(check_count(*regions)?);
                (1..n)
                    .map(|i| {
                        // floor(2^64 * i / n) fits in u64 because i < n.
                        let point = ((1u128 << 64) * i / n) as u64;
                        point.to_be_bytes().to_vec()
                    })
                    .collect()
            }
            PreSplit::SaltBuckets { buckets } => Salter::new(check_count(*buckets)?).split_keys(),
        };
        Ok(keys)
    }
}

/// A table: its name, families and table-level options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDescriptor {
    name: String,
    families: Vec<FamilyDescriptor>,
    pre_split: PreSplit,
    max_region_size_bytes: u64,
    memstore_flush_size_bytes: u64,
    durability: Durability,
    max_value_bytes: usize,
}

/// Default size past which a region splits: 10 GiB (HBase's default).
pub const DEFAULT_MAX_REGION_SIZE_BYTES: u64 = 10 * 1024 * 1024 * 1024;
/// Default memstore size at which a region flushes: 128 MiB.
pub const DEFAULT_MEMSTORE_FLUSH_SIZE_BYTES: u64 = 128 * 1024 * 1024;

impl TableDescriptor {
    /// A table with no families yet and default options.
    /// `default:t` names the table `t`, as in HBase.
    pub fn new(name: impl Into<String>) -> Self {
        let name: String = name.into();
        TableDescriptor {
            name: canonical_table_name(&name).to_owned(),
            families: Vec::new(),
            pre_split: PreSplit::None,
            max_region_size_bytes: DEFAULT_MAX_REGION_SIZE_BYTES,
            memstore_flush_size_bytes: DEFAULT_MEMSTORE_FLUSH_SIZE_BYTES,
            durability: Durability::SyncWal,
            max_value_bytes: DEFAULT_MAX_VALUE_BYTES,
        }
    }

    /// Adds a column family.
    pub fn family(mut self, family: FamilyDescriptor) -> Self {
        self.families.push(family);
        self
    }

    /// How the table is cut into regions at creation.
    pub fn pre_split(mut self, pre_split: PreSplit) -> Self {
        self.pre_split = pre_split;
        self
    }

    /// Size past which a region splits, in bytes.
    pub fn max_region_size_bytes(mut self, bytes: u64) -> Self {
        self.max_region_size_bytes = bytes;
        self
    }

    /// Memstore size at which a region flushes, in bytes.
    pub fn memstore_flush_size_bytes(mut self, bytes: u64) -> Self {
        self.memstore_flush_size_bytes = bytes;
        self
    }

    /// Default durability of mutations on this table.
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Largest value accepted, in bytes.
    pub fn max_value_bytes(mut self, bytes: usize) -> Self {
        self.max_value_bytes = bytes;
        self
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same table under another name (a snapshot's clone).
    pub(crate) fn renamed(mut self, name: &str) -> Self {
        self.name = canonical_table_name(name).to_owned();
        self
    }
    /// The families, in declaration order.
    pub fn families(&self) -> &[FamilyDescriptor] {
        &self.families
    }
    /// The family named `name`.
    pub fn family_named(&self, name: &[u8]) -> Option<&FamilyDescriptor> {
        self.families.iter().find(|f| f.name.as_bytes() == name)
    }
    /// The pre-split choice.
    pub fn get_pre_split(&self) -> &PreSplit {
        &self.pre_split
    }
    /// Region split threshold in bytes.
    pub fn get_max_region_size_bytes(&self) -> u64 {
        self.max_region_size_bytes
    }
    /// Memstore flush threshold in bytes.
    pub fn get_memstore_flush_size_bytes(&self) -> u64 {
        self.memstore_flush_size_bytes
    }
    /// Default durability.
    pub fn get_durability(&self) -> Durability {
        self.durability
    }
    /// Value size limit in bytes.
    pub fn get_max_value_bytes(&self) -> usize {
        self.max_value_bytes
    }

    pub(crate) fn validate(&self) -> Result<()> {
        validate_table_name(&self.name)?;
        if self.families.is_empty() {
            return Err(Error::NoFamilies {
                table: self.name.clone(),
            });
        }
        for (i, family) in self.families.iter().enumerate() {
            family.validate()?;
            if self.families[..i].iter().any(|f| f.name == family.name) {
                return Err(Error::DuplicateFamily {
                    family: family.name.clone(),
                });
            }
        }
        if self.memstore_flush_size_bytes < 64 * 1024 {
            return Err(Error::InvalidOption {
                name: "MEMSTORE_FLUSHSIZE",
                reason: format!("{} is below 64 KiB", self.memstore_flush_size_bytes),
            });
        }
        if self.max_region_size_bytes < 1024 * 1024 {
            return Err(Error::InvalidOption {
                name: "MAX_FILESIZE",
                reason: format!("{} is below 1 MiB", self.max_region_size_bytes),
            });
        }
        if !(1..=256 * 1024 * 1024).contains(&self.max_value_bytes) {
            return Err(Error::InvalidOption {
                name: "max_value_bytes",
                reason: format!("{} is outside 1..=256 MiB", self.max_value_bytes),
            });
        }
        self.pre_split.split_keys()?;
        Ok(())
    }
}

/// The namespace of tables named without one.
pub const DEFAULT_NAMESPACE: &str = "default";

/// The namespace HBase keeps its system tables in; it always exists and takes no tables in
/// strata (which keeps its catalog in the manifest, not in system tables).
pub const SYSTEM_NAMESPACE: &str = "hbase";

/// True for `default` and `hbase`, the namespaces that always exist.
pub(crate) fn is_builtin_namespace(namespace: &str) -> bool {
    namespace == DEFAULT_NAMESPACE || namespace == SYSTEM_NAMESPACE
}

/// A table name as the catalog keys it: `default:t` is `t`, as in HBase (a table of the
/// default namespace is named without it).
pub(crate) fn canonical_table_name(name: &str) -> &str {
    name.strip_prefix("default:").unwrap_or(name)
}

/// The namespace of a table name (`default` when it has none).
pub(crate) fn namespace_of(table: &str) -> &str {
    match table.split_once(':') {
        Some((namespace, _)) => namespace,
        None => DEFAULT_NAMESPACE,
    }
}

/// Why a name that must be 1..=255 bytes is not: empty, or too long.
fn length_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.len() > 255 {
        Some("it is longer than 255 bytes")
    } else {
        None
    }
}

/// A table name's qualifier, or a namespace part, or a snapshot name by HBase's rule:
/// `[A-Za-z0-9_.-]`, not empty, not starting with `.` or `-`.
fn is_legal_qualifier(part: &str) -> bool {
    !part.is_empty()
        && !part.starts_with(['.', '-'])
        && part
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Checks a namespace name as HBase does (`TableName.isLegalNamespaceName`): letters, digits
/// and `_` (ASCII, as strata's table names are), 1..=255 bytes.
pub(crate) fn validate_namespace_name(name: &str) -> Result<()> {
    let fail = |reason| {
        Err(Error::InvalidNamespaceName {
            name: name.to_owned(),
            reason,
        })
    };
    if let Some(reason) = length_problem(name) {
        return fail(reason);
    }
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return fail("namespaces may only contain letters, digits and '_'");
    }
    Ok(())
}

/// Checks a table name: `[A-Za-z0-9_.-]`, at most 255 bytes, optionally
/// `namespace:` in front, not starting with `.` or `-`.
pub(crate) fn validate_table_name(name: &str) -> Result<()> {
    let fail = |reason| {
        Err(Error::InvalidTableName {
            name: name.to_owned(),
            reason,
        })
    };
    if let Some(reason) = length_problem(name) {
        return fail(reason);
    }
    let (namespace, qualifier) = match name.split_once(':') {
        Some((ns, q)) => (Some(ns), q),
        None => (None, name),
    };
    if namespace.is_some_and(|ns| !is_legal_qualifier(ns)) {
        return fail("the namespace must be [A-Za-z0-9_.-] and not start with '.' or '-'");
    }
    if !is_legal_qualifier(qualifier) {
        return fail("it must be [A-Za-z0-9_.-] and not start with '.' or '-'");
    }
    Ok(())
}

/// Checks a snapshot name by HBase's rules for them (a table qualifier's: `[A-Za-z0-9_.-]`,
/// not starting with `.` or `-`, 1..=255 bytes; no namespace part).
pub(crate) fn validate_snapshot_name(name: &str) -> Result<()> {
    let reason = length_problem(name).or_else(|| {
        (!is_legal_qualifier(name))
            .then_some("it must be [A-Za-z0-9_.-] and not start with '.' or '-'")
    });
    match reason {
        Some(reason) => Err(Error::InvalidSnapshotName {
            name: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bloom_types_are_found_by_their_hbase_names() {
        for bloom in BloomType::ALL {
            assert_eq!(BloomType::from_name(bloom.name()), Some(bloom));
            assert_eq!(
                BloomType::from_name(&bloom.name().to_lowercase()),
                Some(bloom)
            );
            assert_eq!(BloomType::from_code(bloom.code()), Some(bloom));
        }
        assert_eq!(BloomType::from_name("ROWPREFIX_FIXED_LENGTH"), None);
        assert_eq!(BloomType::from_name(""), None);
    }

    #[test]
    fn hex_string_split_matches_hbase() {
        let keys = PreSplit::HexString { regions: 4 }.split_keys().unwrap();
        assert_eq!(
            keys,
            [
                b"40000000".to_vec(),
                b"80000000".to_vec(),
                b"c0000000".to_vec()
            ]
        );
    }

    #[test]
    fn uniform_split_is_even() {
        let keys = PreSplit::Uniform { regions: 4 }.split_keys().unwrap();
        assert_eq!(keys[0], vec![0x40, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(keys[1], vec![0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(keys[2], vec![0xC0, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn explicit_splits_are_sorted_and_deduplicated() {
        let keys = PreSplit::Keys(vec![b"b".to_vec(), b"a".to_vec(), b"b".to_vec()])
            .split_keys()
            .unwrap();
        assert_eq!(keys, [b"a".to_vec(), b"b".to_vec()]);
        assert!(PreSplit::Keys(vec![Vec::new()]).split_keys().is_err());
        assert!(PreSplit::HexString { regions: 0 }.split_keys().is_err());
    }

    #[test]
    fn table_names() {
        assert!(validate_table_name("scores").is_ok());
        assert!(validate_table_name("ns:t_1.x-y").is_ok());
        assert!(validate_table_name("").is_err());
        assert!(validate_table_name("a b").is_err());
        assert!(validate_table_name(".meta").is_err());
        assert!(validate_table_name("ns:").is_err());
        assert!(validate_table_name("a:b:c").is_err());
    }

    #[test]
    fn descriptor_validation() {
        let t = TableDescriptor::new("t");
        assert!(matches!(t.validate(), Err(Error::NoFamilies { .. })));
        let t = TableDescriptor::new("t")
            .family(FamilyDescriptor::new("f"))
            .family(FamilyDescriptor::new("f"));
        assert!(matches!(t.validate(), Err(Error::DuplicateFamily { .. })));
        let t = TableDescriptor::new("t").family(FamilyDescriptor::new("f").max_versions(0));
        assert!(matches!(t.validate(), Err(Error::InvalidOption { .. })));
        let t = TableDescriptor::new("t").family(FamilyDescriptor::new("f:x"));
        assert!(matches!(t.validate(), Err(Error::InvalidFamilyName { .. })));
        let t = TableDescriptor::new("t").family(FamilyDescriptor::new("f"));
        assert!(t.validate().is_ok());
    }
}
