//! Typed shell commands: what a statement asks for, with validated arguments.
//!
//! Names follow HBase. Byte strings (rows, qualifiers, values, split keys) are `Vec<u8>`;
//! table and family names are UTF-8 `String`s. Options that a command leaves unset are
//! `None`, so the engine applies its defaults (for `create`) or keeps the current setting
//! (for `alter`).

use super::ast::Call;
use super::bytes::Formatter;
use super::span::Span;

/// One shell command with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `create 't', 'f1', {NAME => 'f2', VERSIONS => 3}, SPLITS => [...]`.
    Create(CreateTable),
    /// `list ['regex']`: table names matching the regular expression (all by default).
    List {
        /// The regular expression, as given.
        pattern: Option<String>,
    },
    /// `exists 't'`.
    Exists {
        /// The table.
        table: String,
    },
    /// `describe 't'` (alias `desc`).
    Describe {
        /// The table.
        table: String,
    },
    /// `put 't', 'r', 'f:q', 'v' [, ts]`.
    Put(Put),
    /// `get 't', 'r' [, columns | {options}]`.
    Get(Get),
    /// `scan 't' [, {options}]`.
    Scan(Scan),
    /// `count 't' [, INTERVAL => n, <scan options>]`.
    Count(Count),
    /// `delete 't', 'r', 'f:q' [, ts]`.
    Delete(Delete),
    /// `deleteall 't', 'r' [, 'f:q' [, ts]]` or `deleteall 't', {ROWPREFIXFILTER => 'p'}, ...`.
    DeleteAll(DeleteAll),
    /// `incr 't', 'r', 'f:q' [, n]`.
    Incr(Incr),
    /// `get_counter 't', 'r', 'f:q'`.
    GetCounter(GetCounter),
    /// `append 't', 'r', 'f:q', 'v'`.
    Append(Append),
    /// `truncate 't'`: drop and recreate, with a single region.
    Truncate {
        /// The table.
        table: String,
    },
    /// `truncate_preserve 't'`: drop and recreate, keeping the region boundaries.
    TruncatePreserve {
        /// The table.
        table: String,
    },
    /// `disable 't'`.
    Disable {
        /// The table.
        table: String,
    },
    /// `enable 't'`.
    Enable {
        /// The table.
        table: String,
    },
    /// `is_enabled 't'`.
    IsEnabled {
        /// The table.
        table: String,
    },
    /// `is_disabled 't'`.
    IsDisabled {
        /// The table.
        table: String,
    },
    /// `drop 't'`.
    Drop {
        /// The table.
        table: String,
    },
    /// `alter 't', ...`.
    Alter(Alter),
    /// `flush 't_or_region' [, 'family']`.
    Flush(Maintenance),
    /// `compact 't_or_region' [, 'family']`.
    Compact(Maintenance),
    /// `major_compact 't_or_region' [, 'family']`.
    MajorCompact(Maintenance),
    /// `split 't_or_region' [, 'split_key']`.
    Split(Split),
    /// `list_regions 't' [, server, ['COLUMN', ...]]`.
    ListRegions(ListRegions),
    /// `merge_region 'REGION', 'REGION' [, force]` or `merge_region ['REGION', 'REGION', ...]`.
    MergeRegion {
        /// The regions (names or ids), at least two, adjacent in key order.
        regions: Vec<String>,
    },
    /// `normalize`: runs the region normalizer over every table now.
    Normalize,
    /// `normalizer_switch true|false`: turns the normalizer on or off.
    NormalizerSwitch {
        /// The new state.
        on: bool,
    },
    /// `normalizer_enabled`.
    NormalizerEnabled,
    /// `status ['summary' | 'simple' | 'detailed']`.
    Status {
        /// How much to show.
        format: StatusFormat,
    },
    /// `get_splits 't'`: the table's split keys (the start keys of its regions but the first).
    GetSplits {
        /// The table.
        table: String,
    },
    /// `get_table 't'`: a reference to the table, HBase's `Hbase::Table` (assign it:
    /// `t = get_table 't'`, then `t.put ...`).
    GetTable {
        /// The table.
        table: String,
    },
    /// `whoami`: the user running the shell, and its groups.
    Whoami,
    /// `list_namespace ['regex']`.
    ListNamespace {
        /// The regular expression, as given.
        pattern: Option<String>,
    },
    /// `create_namespace 'ns'`.
    CreateNamespace {
        /// The namespace.
        namespace: String,
    },
    /// `describe_namespace 'ns'`.
    DescribeNamespace {
        /// The namespace.
        namespace: String,
    },
    /// `drop_namespace 'ns'`: only an empty namespace.
    DropNamespace {
        /// The namespace.
        namespace: String,
    },
    /// `list_namespace_tables 'ns'`.
    ListNamespaceTables {
        /// The namespace.
        namespace: String,
    },
    /// `t.put 'r', 'f:q', 'v'`: a command called on the table reference held by a variable
    /// ([`Call::receiver`]). The session resolves the variable when the statement runs (an
    /// earlier statement of the same input may assign it) and converts the call with the
    /// table as its first argument.
    TableMethod(Box<Call>),
    /// A bare name that is no command: a variable, whose value IRB echoes, or (when no such
    /// variable is defined when it runs) an undefined method.
    Variable {
        /// The name.
        name: String,
        /// Its bytes.
        span: Span,
    },
    /// `snapshot 't', 'name'[, {SKIP_FLUSH => true}]`: a snapshot of the table (flushed
    /// first when enabled, unless `SKIP_FLUSH`).
    Snapshot {
        /// The table.
        table: String,
        /// The snapshot's name.
        name: String,
        /// `SKIP_FLUSH => true`: only what the table's regions hold in files.
        skip_flush: bool,
    },
    /// `list_snapshots ['regex']`: snapshots whose name matches (all by default).
    ListSnapshots {
        /// The regular expression, as given.
        pattern: Option<String>,
    },
    /// `list_table_snapshots 'tableRegex'[, 'snapshotRegex']`: snapshots of the tables whose
    /// name matches, with names that match (all by default).
    ListTableSnapshots {
        /// The tables' regular expression, as given.
        table_pattern: String,
        /// The snapshots' regular expression, as given.
        pattern: Option<String>,
    },
    /// `clone_snapshot 'name', 't'`: a new table from the snapshot.
    CloneSnapshot {
        /// The snapshot.
        name: String,
        /// The table to create.
        table: String,
    },
    /// `restore_snapshot 'name'`: the snapshot's table (disabled) back as the snapshot held it.
    RestoreSnapshot {
        /// The snapshot.
        name: String,
    },
    /// `delete_snapshot 'name'`.
    DeleteSnapshot {
        /// The snapshot.
        name: String,
    },
    /// `backup 'DIR'` (strata's own; HBase has no shell command for it): a consistent copy
    /// of the whole database in the new directory `DIR`, on the machine the database is on
    /// (`strata::Db::checkpoint`).
    Backup {
        /// The directory to create, as given.
        dir: String,
    },
    /// `version`.
    Version,
    /// `help ['command' | 'group']`.
    Help {
        /// The command or command group to explain; the overview when `None`.
        topic: Option<String>,
    },
    /// `exit` or `quit`.
    Exit,
}

impl Command {
    /// The canonical command name (`describe` for `desc`, `exit` for `quit`).
    pub fn name(&self) -> &'static str {
        match self {
            Command::Create(_) => "create",
            Command::List { .. } => "list",
            Command::Exists { .. } => "exists",
            Command::Describe { .. } => "describe",
            Command::Put(_) => "put",
            Command::Get(_) => "get",
            Command::Scan(_) => "scan",
            Command::Count(_) => "count",
            Command::Delete(_) => "delete",
            Command::DeleteAll(_) => "deleteall",
            Command::Incr(_) => "incr",
            Command::GetCounter(_) => "get_counter",
            Command::Append(_) => "append",
            Command::Truncate { .. } => "truncate",
            Command::TruncatePreserve { .. } => "truncate_preserve",
            Command::Disable { .. } => "disable",
            Command::Enable { .. } => "enable",
            Command::IsEnabled { .. } => "is_enabled",
            Command::IsDisabled { .. } => "is_disabled",
            Command::Drop { .. } => "drop",
            Command::Alter(_) => "alter",
            Command::Flush(_) => "flush",
            Command::Compact(_) => "compact",
            Command::MajorCompact(_) => "major_compact",
            Command::Split(_) => "split",
            Command::ListRegions(_) => "list_regions",
            Command::MergeRegion { .. } => "merge_region",
            Command::Normalize => "normalize",
            Command::NormalizerSwitch { .. } => "normalizer_switch",
            Command::NormalizerEnabled => "normalizer_enabled",
            Command::Status { .. } => "status",
            Command::GetSplits { .. } => "get_splits",
            Command::GetTable { .. } | Command::TableMethod(_) | Command::Variable { .. } => {
                "get_table"
            }
            Command::Whoami => "whoami",
            Command::ListNamespace { .. } => "list_namespace",
            Command::CreateNamespace { .. } => "create_namespace",
            Command::DescribeNamespace { .. } => "describe_namespace",
            Command::DropNamespace { .. } => "drop_namespace",
            Command::ListNamespaceTables { .. } => "list_namespace_tables",
            Command::Snapshot { .. } => "snapshot",
            Command::ListSnapshots { .. } => "list_snapshots",
            Command::ListTableSnapshots { .. } => "list_table_snapshots",
            Command::CloneSnapshot { .. } => "clone_snapshot",
            Command::RestoreSnapshot { .. } => "restore_snapshot",
            Command::DeleteSnapshot { .. } => "delete_snapshot",
            Command::Backup { .. } => "backup",
            Command::Version => "version",
            Command::Help { .. } => "help",
            Command::Exit => "exit",
        }
    }
}

/// A column of a read (`get`, `scan`): a whole family, or one qualifier of it, optionally
/// with a formatter for its values (`'f:q:toLong'`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// The family.
    pub family: String,
    /// The qualifier (possibly empty: `'f:'` names the empty qualifier); `None` for the whole
    /// family (`'f'`).
    pub qualifier: Option<Vec<u8>>,
    /// How to print this column's values, when not `toStringBinary`.
    pub formatter: Option<Formatter>,
}

impl ColumnSpec {
    /// A whole family.
    pub fn family(family: &str) -> ColumnSpec {
        ColumnSpec {
            family: family.to_owned(),
            qualifier: None,
            formatter: None,
        }
    }

    /// One column.
    pub fn column(family: &str, qualifier: &[u8]) -> ColumnSpec {
        ColumnSpec {
            family: family.to_owned(),
            qualifier: Some(qualifier.to_vec()),
            formatter: None,
        }
    }
}

/// The column a mutation writes: a family and a qualifier (which may be empty). As in HBase,
/// `'f'` without a colon writes the empty qualifier, like `'f:'`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellColumn {
    /// The family.
    pub family: String,
    /// The qualifier.
    pub qualifier: Vec<u8>,
}

impl CellColumn {
    /// A column from its parts.
    pub fn new(family: &str, qualifier: &[u8]) -> CellColumn {
        CellColumn {
            family: family.to_owned(),
            qualifier: qualifier.to_vec(),
        }
    }
}

/// Which timestamps a read returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFilter {
    /// `TIMESTAMP => ts`: exactly this timestamp.
    At(i64),
    /// `TIMERANGE => [min, max]`: `min <= ts < max`.
    Range {
        /// Inclusive lower bound.
        min: i64,
        /// Exclusive upper bound.
        max: i64,
    },
}

/// `put`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Put {
    /// The table.
    pub table: String,
    /// The row key.
    pub row: Vec<u8>,
    /// The column.
    pub column: CellColumn,
    /// The value.
    pub value: Vec<u8>,
    /// The cell timestamp; the server's clock when `None`.
    pub timestamp: Option<i64>,
}

/// `get`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Get {
    /// The table.
    pub table: String,
    /// The row key.
    pub row: Vec<u8>,
    /// The columns to read; every column when empty.
    pub columns: Vec<ColumnSpec>,
    /// Which timestamps to read.
    pub time: Option<TimeFilter>,
    /// How many versions per column (1 when `None`).
    pub versions: Option<u32>,
    /// A filter in HBase's filter language, unparsed.
    pub filter: Option<Vec<u8>>,
    /// `FORMATTER`: how to print row keys, qualifiers and values.
    pub formatter: Option<Formatter>,
    /// `MAXLENGTH`: cut each printed cell to this many characters.
    pub max_length: Option<usize>,
}

/// The options of a scan (shared by `scan` and `count`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanSpec {
    /// The columns to read; every column when empty.
    pub columns: Vec<ColumnSpec>,
    /// `STARTROW` (inclusive).
    pub start_row: Option<Vec<u8>>,
    /// `STOPROW` (exclusive).
    pub stop_row: Option<Vec<u8>>,
    /// `ROWPREFIXFILTER`: only rows starting with these bytes.
    pub row_prefix: Option<Vec<u8>>,
    /// `LIMIT`: at most this many rows.
    pub limit: Option<u64>,
    /// `BATCH`: at most this many cells per returned row part.
    pub batch: Option<u32>,
    /// `FILTER`: a filter in HBase's filter language, unparsed.
    pub filter: Option<Vec<u8>>,
    /// `VERSIONS`: how many versions per column (1 when `None`).
    pub versions: Option<u32>,
    /// `TIMESTAMP` or `TIMERANGE`.
    pub time: Option<TimeFilter>,
    /// `REVERSED => true`: rows in descending order.
    pub reversed: bool,
    /// `RAW => true`: also return delete markers and deleted cells.
    pub raw: bool,
    /// `FORMATTER`: how to print row keys, qualifiers and values.
    pub formatter: Option<Formatter>,
    /// `MAXLENGTH`: cut each printed cell to this many characters.
    pub max_length: Option<usize>,
}

/// `scan`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// The table.
    pub table: String,
    /// What to scan.
    pub spec: ScanSpec,
}

/// How often `count` reports progress when not told.
pub const DEFAULT_COUNT_INTERVAL_ROWS: u64 = 1000;

/// `count`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// The table.
    pub table: String,
    /// Print `Current count: N, row: R` every this many rows.
    pub interval_rows: u64,
    /// Which rows to count (HBase's count accepts the scan options).
    pub spec: ScanSpec,
}

/// A column, or a whole family, for deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteColumn {
    /// The family.
    pub family: String,
    /// The qualifier; `None` for the whole family (`'f'`).
    pub qualifier: Option<Vec<u8>>,
}

/// `delete`: a version-specific delete, as HBase's shell issues it. With a qualifier it
/// deletes one version of the column (the latest, or exactly `timestamp`); with a family only
/// it deletes the version at `timestamp` in every column of the family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delete {
    /// The table.
    pub table: String,
    /// The row key.
    pub row: Vec<u8>,
    /// The column or family.
    pub column: DeleteColumn,
    /// The version to delete; the latest when `None`.
    pub timestamp: Option<i64>,
}

/// The rows a `deleteall` applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowSelector {
    /// One row.
    Row(Vec<u8>),
    /// `{ROWPREFIXFILTER => 'p'}`: every row starting with the prefix (done inside the
    /// engine, in one call).
    Prefix(Vec<u8>),
}

/// `deleteall`: deletes every version at or before `timestamp` (now when `None`) of the
/// whole row, of one family, or of one column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteAll {
    /// The table.
    pub table: String,
    /// The row or rows.
    pub rows: RowSelector,
    /// Restrict to this column or family; the whole row when `None`.
    pub column: Option<DeleteColumn>,
    /// Delete versions with a timestamp at or before this one.
    pub timestamp: Option<i64>,
}

/// `incr`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incr {
    /// The table.
    pub table: String,
    /// The row key.
    pub row: Vec<u8>,
    /// The counter column.
    pub column: CellColumn,
    /// The amount to add (1 by default; may be negative).
    pub amount: i64,
}

/// `get_counter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetCounter {
    /// The table.
    pub table: String,
    /// The row key.
    pub row: Vec<u8>,
    /// The counter column.
    pub column: CellColumn,
}

/// `append`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Append {
    /// The table.
    pub table: String,
    /// The row key.
    pub row: Vec<u8>,
    /// The column.
    pub column: CellColumn,
    /// The bytes to append.
    pub value: Vec<u8>,
}

/// `create`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateTable {
    /// The table.
    pub table: String,
    /// The column families, in the order given (at least one).
    pub families: Vec<FamilySpec>,
    /// How to pre-split the table.
    pub pre_split: PreSplit,
    /// Table options.
    pub options: TableOptions,
}

/// A column family and the attributes given for it. `None` means "not given": the engine's
/// default in `create`, the current setting in `alter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilySpec {
    /// `NAME`.
    pub name: String,
    /// `VERSIONS`: how many versions to keep.
    pub versions: Option<u32>,
    /// `TTL`.
    pub ttl: Option<Ttl>,
    /// `BLOOMFILTER`.
    pub bloom_filter: Option<BloomFilter>,
    /// `BLOCKSIZE`, in bytes.
    pub block_size_bytes: Option<u32>,
    /// `COMPRESSION`.
    pub compression: Option<Compression>,
    /// `IN_MEMORY`: cache this family's blocks with priority.
    pub in_memory: Option<bool>,
    /// `BLOCKCACHE`: cache this family's data blocks on read.
    pub block_cache: Option<bool>,
    /// `MIN_VERSIONS`: versions kept past the TTL.
    pub min_versions: Option<u32>,
    /// `KEEP_DELETED_CELLS`.
    pub keep_deleted_cells: Option<KeepDeletedCells>,
    /// `CONFIGURATION => {'hbase.hregion.majorcompaction' => MS}`: the family's own
    /// periodic major compaction period in milliseconds (0: off for the family).
    pub major_compaction_period_ms: Option<FamilySetting<u64>>,
    /// `CONFIGURATION => {'hbase.hregion.majorcompaction.jitter' => J}`: the family's own
    /// jitter, in millionths (0 to 1,000,000).
    pub major_compaction_jitter_millionths: Option<FamilySetting<u32>>,
}

/// HBase's family configuration key for the periodic major compaction period (milliseconds).
pub const MAJOR_COMPACTION_KEY: &str = "hbase.hregion.majorcompaction";
/// HBase's family configuration key for the period's jitter (a fraction, 0.0 to 1.0).
pub const MAJOR_COMPACTION_JITTER_KEY: &str = "hbase.hregion.majorcompaction.jitter";

/// A family `CONFIGURATION` entry given to `create` or `alter`: a value of the family's own,
/// or `nil`, which removes it (the database's setting applies again), as HBase's
/// `setConfiguration(key, null)` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilySetting<T> {
    /// The family's own value.
    Value(T),
    /// Removed: the database's setting applies.
    Database,
}

impl<T> FamilySetting<T> {
    /// The family's own value, `None` where the database's applies (the engine's form).
    pub fn family_value(self) -> Option<T> {
        match self {
            FamilySetting::Value(value) => Some(value),
            FamilySetting::Database => None,
        }
    }
}

impl FamilySpec {
    /// A family with no attributes given.
    pub fn named(name: &str) -> FamilySpec {
        FamilySpec {
            name: name.to_owned(),
            versions: None,
            ttl: None,
            bloom_filter: None,
            block_size_bytes: None,
            compression: None,
            in_memory: None,
            block_cache: None,
            min_versions: None,
            keep_deleted_cells: None,
            major_compaction_period_ms: None,
            major_compaction_jitter_millionths: None,
        }
    }
}

/// A family's time to live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ttl {
    /// `FOREVER` (HBase stores it as `Integer.MAX_VALUE` seconds).
    Forever,
    /// Cells expire this many seconds after their timestamp.
    Seconds(u32),
}

/// `BLOOMFILTER` types strata builds: the engine's, named as HBase names them
/// ([`crate::conventions::bloom_type`]).
pub use strata::BloomType as BloomFilter;

/// `KEEP_DELETED_CELLS` modes: the engine's, by HBase's names (`FALSE`, `TRUE`, `TTL`).
pub use strata::KeepDeletedCells;

/// `COMPRESSION` algorithms strata implements, by HBase's names
/// ([`crate::conventions::CompressionName`]).
pub use crate::conventions::CompressionName as Compression;

/// Most regions a pre-split may ask for (`NUMREGIONS`, `SALT_BUCKETS`, `SPLITS`).
pub const MAX_PRESPLIT_REGIONS: u32 = 65_536;

/// How `create` pre-splits a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreSplit {
    /// One region.
    None,
    /// `SPLITS => [...]`: these split keys, sorted and distinct (each string went through
    /// `Bytes.toBytesBinary`, as in HBase).
    Keys(Vec<Vec<u8>>),
    /// `SPLITS_FILE => 'path'`: split keys read from a file, one per line (see
    /// [`split_keys_from_file`]).
    KeysFile(String),
    /// `NUMREGIONS => n, SPLITALGO => '...'`.
    Algorithm {
        /// The algorithm.
        algorithm: SplitAlgorithm,
        /// How many regions (at least 2).
        regions: u32,
    },
    /// `SALT_BUCKETS => n` (a strata extension): one region per salt bucket, split at each
    /// salt prefix the engine's `keys` module produces.
    SaltBuckets(u32),
}

/// HBase's `RegionSplitter` algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitAlgorithm {
    /// Row keys are 8 lowercase hex digits (`00000000`..`ffffffff`).
    HexStringSplit,
    /// Row keys are 8 decimal digits (`00000000`..`99999999`).
    DecimalStringSplit,
    /// Row keys are arbitrary bytes, split uniformly over 8-byte prefixes.
    UniformSplit,
}

impl SplitAlgorithm {
    /// The HBase class name.
    pub fn name(self) -> &'static str {
        match self {
            SplitAlgorithm::HexStringSplit => "HexStringSplit",
            SplitAlgorithm::DecimalStringSplit => "DecimalStringSplit",
            SplitAlgorithm::UniformSplit => "UniformSplit",
        }
    }

    /// The `regions - 1` split keys HBase's `RegionSplitter` computes for `regions` regions.
    /// `regions` below 2 gives no keys.
    pub fn split_keys(self, regions: u32) -> Vec<Vec<u8>> {
        let regions = u128::from(regions.max(1));
        let (range, radix): (u128, u32) = match self {
            SplitAlgorithm::HexStringSplit => (1 << 32, 16),
            SplitAlgorithm::DecimalStringSplit => (100_000_000, 10),
            SplitAlgorithm::UniformSplit => (1 << 64, 0),
        };
        let step = range / regions;
        (1..regions)
            .map(|index| {
                let point = step * index;
                if radix == 0 {
                    u64::try_from(point)
                        .unwrap_or(u64::MAX)
                        .to_be_bytes()
                        .to_vec()
                } else {
                    format_padded(point, radix).into_bytes()
                }
            })
            .collect()
    }
}

/// `point` in `radix` (10 or 16, lowercase), left-padded with zeros to 8 digits.
fn format_padded(point: u128, radix: u32) -> String {
    if radix == 16 {
        format!("{point:08x}")
    } else {
        format!("{point:08}")
    }
}

/// Split keys from the contents of a `SPLITS_FILE`: one key per line (line terminator
/// removed, empty lines skipped), each through `Bytes.toBytesBinary`, as HBase reads it.
pub fn split_keys_from_file(contents: &str) -> Vec<Vec<u8>> {
    contents
        .lines()
        .filter(|line| !line.is_empty())
        .map(|line| super::bytes::to_bytes_binary(line.as_bytes()))
        .collect()
}

/// Write durability, as HBase's `DURABILITY` table option names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `USE_DEFAULT`: the engine's default (`SYNC_WAL`).
    UseDefault,
    /// `SKIP_WAL`: no write-ahead log.
    SkipWal,
    /// `ASYNC_WAL`: logged, synced within a bounded interval.
    AsyncWal,
    /// `SYNC_WAL`: fdatasync before acknowledging.
    SyncWal,
    /// `FSYNC_WAL`: fsync before acknowledging.
    FsyncWal,
}

impl Durability {
    /// The HBase name.
    pub fn name(self) -> &'static str {
        match self {
            Durability::UseDefault => "USE_DEFAULT",
            Durability::SkipWal => "SKIP_WAL",
            Durability::AsyncWal => "ASYNC_WAL",
            Durability::SyncWal => "SYNC_WAL",
            Durability::FsyncWal => "FSYNC_WAL",
        }
    }
}

/// Table-level options of `create` and `alter`; `None` means not given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// `MAX_FILESIZE`: split a region once it grows past this many bytes.
    pub max_region_size_bytes: Option<u64>,
    /// `MEMSTORE_FLUSHSIZE`: flush a region's memstores past this many bytes.
    pub memstore_flush_size_bytes: Option<u64>,
    /// `DURABILITY`.
    pub durability: Option<Durability>,
}

impl TableOptions {
    /// Whether no option is given.
    pub fn is_empty(&self) -> bool {
        *self == TableOptions::default()
    }
}

/// A table option `alter ..., METHOD => 'table_att_unset'` can reset to its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableOptionKey {
    /// `MAX_FILESIZE`.
    MaxFileSize,
    /// `MEMSTORE_FLUSHSIZE`.
    MemstoreFlushSize,
    /// `DURABILITY`.
    Durability,
}

/// `alter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alter {
    /// The table.
    pub table: String,
    /// The changes, in the order given.
    pub changes: Vec<AlterChange>,
}

/// One change of an `alter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlterChange {
    /// Add the family, or change the given attributes of an existing one.
    Family(FamilySpec),
    /// `'delete' => 'f'` or `{NAME => 'f', METHOD => 'delete'}`.
    DeleteFamily(String),
    /// Set table options.
    SetOptions(TableOptions),
    /// `METHOD => 'table_att_unset', NAME => ...`: reset options to their defaults.
    UnsetOptions(Vec<TableOptionKey>),
}

/// `flush`, `compact`, `major_compact`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Maintenance {
    /// A table name or a region name (the engine resolves which).
    pub target: String,
    /// Only this family.
    pub family: Option<String>,
}

/// `split`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// A table name or a region name.
    pub target: String,
    /// Where to split; the middle key of each region when `None`.
    pub split_key: Option<Vec<u8>>,
}

/// The columns `list_regions` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionColumn {
    /// `SERVER_NAME`.
    ServerName,
    /// `REGION_NAME`.
    RegionName,
    /// `START_KEY`.
    StartKey,
    /// `END_KEY`.
    EndKey,
    /// `SIZE` (MB of store files).
    Size,
    /// `REQ` (request count).
    Requests,
    /// `LOCALITY`.
    Locality,
}

impl RegionColumn {
    /// Every column, in HBase's order.
    pub const ALL: [RegionColumn; 7] = [
        RegionColumn::ServerName,
        RegionColumn::RegionName,
        RegionColumn::StartKey,
        RegionColumn::EndKey,
        RegionColumn::Size,
        RegionColumn::Requests,
        RegionColumn::Locality,
    ];

    /// The header HBase prints.
    pub fn name(self) -> &'static str {
        match self {
            RegionColumn::ServerName => "SERVER_NAME",
            RegionColumn::RegionName => "REGION_NAME",
            RegionColumn::StartKey => "START_KEY",
            RegionColumn::EndKey => "END_KEY",
            RegionColumn::Size => "SIZE",
            RegionColumn::Requests => "REQ",
            RegionColumn::Locality => "LOCALITY",
        }
    }

    /// The minimum column width HBase uses.
    pub fn min_width(self) -> usize {
        match self {
            RegionColumn::ServerName | RegionColumn::RegionName => 12,
            RegionColumn::StartKey | RegionColumn::EndKey | RegionColumn::Locality => 10,
            RegionColumn::Size | RegionColumn::Requests => 5,
        }
    }
}

/// `list_regions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRegions {
    /// The table.
    pub table: String,
    /// The columns to print, in order (all by default).
    pub columns: Vec<RegionColumn>,
}

/// What `status` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFormat {
    /// `summary` (the default): one line.
    Summary,
    /// `simple`: per-server load.
    Simple,
    /// `detailed`: per-region load.
    Detailed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_string_split_matches_region_splitter() {
        let keys = SplitAlgorithm::HexStringSplit.split_keys(4);
        assert_eq!(
            keys,
            vec![
                b"40000000".to_vec(),
                b"80000000".to_vec(),
                b"c0000000".to_vec()
            ]
        );
        let keys = SplitAlgorithm::HexStringSplit.split_keys(3);
        assert_eq!(keys, vec![b"55555555".to_vec(), b"aaaaaaaa".to_vec()]);
    }

    #[test]
    fn decimal_and_uniform_splits() {
        assert_eq!(
            SplitAlgorithm::DecimalStringSplit.split_keys(4),
            vec![
                b"25000000".to_vec(),
                b"50000000".to_vec(),
                b"75000000".to_vec()
            ]
        );
        assert_eq!(
            SplitAlgorithm::UniformSplit.split_keys(2),
            vec![vec![0x80, 0, 0, 0, 0, 0, 0, 0]]
        );
        let keys = SplitAlgorithm::UniformSplit.split_keys(3);
        assert_eq!(
            keys.first(),
            Some(&vec![0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55])
        );
        assert_eq!(
            keys.get(1),
            Some(&vec![0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA])
        );
        assert!(SplitAlgorithm::UniformSplit.split_keys(1).is_empty());
    }

    #[test]
    fn splits_file_lines_are_binary_strings() {
        assert_eq!(
            split_keys_from_file("a\n\\x00b\r\n\nc"),
            vec![b"a".to_vec(), b"\x00b".to_vec(), b"c".to_vec()]
        );
    }
}
