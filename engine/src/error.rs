//! Errors: one enum whose variants say exactly what went wrong.
//!
//! Bad input is rejected before anything is written, so an `Err` from a
//! mutation always means nothing of that mutation was applied.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Result alias used throughout strata.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in strata.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// A row key was empty; HBase row keys are 1..=32767 bytes.
    EmptyRowKey,
    /// A row key was longer than the limit.
    RowKeyTooLong {
        /// Length of the offending key in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// A column qualifier was longer than the limit.
    QualifierTooLong {
        /// Length of the offending qualifier in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// A table name does not follow the rules (`[A-Za-z0-9_.-]`, optional `namespace:`).
    InvalidTableName {
        /// The rejected name, rendered lossily.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A column family name does not follow the rules (printable, no `:`, 1..=127 bytes).
    InvalidFamilyName {
        /// The rejected name, rendered lossily.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A table descriptor names the same family twice.
    DuplicateFamily {
        /// The repeated family.
        family: String,
    },
    /// A table must have at least one column family.
    NoFamilies {
        /// The table being created or altered.
        table: String,
    },
    /// An operation named a family the table does not have.
    UnknownFamily {
        /// The table.
        table: String,
        /// The family that does not exist in it.
        family: String,
    },
    /// A write named a family that an `alter_table` running at the same
    /// time dropped (the write had found it in the table's descriptor).
    /// Nothing of the write was applied.
    FamilyDropped {
        /// The dropped family's id (its name is gone with it).
        family_id: u32,
    },
    /// A timestamp was negative; timestamps are milliseconds `>= 0`.
    NegativeTimestamp {
        /// The rejected timestamp.
        timestamp: i64,
    },
    /// A write gave a cell or a marker the timestamp `i64::MAX`, HBase's
    /// `LATEST_TIMESTAMP`, which no time range includes; write timestamps are
    /// `0..=MAX_TIMESTAMP` (`i64::MAX - 1`).
    ReservedTimestamp {
        /// The rejected timestamp.
        timestamp: i64,
    },
    /// A time range with `min > max` or a negative bound.
    InvalidTimeRange {
        /// Inclusive lower bound.
        min: i64,
        /// Exclusive upper bound.
        max: i64,
    },
    /// A value was larger than the table's limit.
    ValueTooLarge {
        /// Length of the value in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// A single mutation was larger than one WAL record may be.
    MutationTooLarge {
        /// Encoded size in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// A mutation carried no cells.
    EmptyMutation,
    /// A row mutation mixed cells of different rows.
    RowMismatch {
        /// Row of the enclosing operation.
        expected: Vec<u8>,
        /// Row found in a nested mutation.
        found: Vec<u8>,
    },
    /// A multi-row mutation ([`crate::Table::mutate_rows`]) named rows of
    /// more than one region; it is atomic only within one region (HBase's
    /// `MultiRowMutationEndpoint` refuses such a call the same way). Nothing
    /// of it was applied.
    RowsSpanRegions {
        /// The table.
        table: String,
        /// The first row of the mutation.
        first_row: Vec<u8>,
        /// A row in another region than `first_row`.
        other_row: Vec<u8>,
        /// Where the region holding `first_row` ends (exclusive; empty: the
        /// table's end).
        region_end: Vec<u8>,
    },
    /// A read was given a [`crate::ReadSnapshot`] that was released.
    SnapshotReleased {
        /// The read point the snapshot held.
        sequence: u64,
    },
    /// A read was given a [`crate::ReadSnapshot`] of another database (or
    /// of an earlier opening of this one).
    SnapshotOfAnotherDatabase,
    /// An increment found a value that is not an 8-byte big-endian counter.
    NotACounter {
        /// Family of the column.
        family: String,
        /// Qualifier of the column.
        qualifier: Vec<u8>,
        /// Length of the stored value.
        len: usize,
    },
    /// An increment would overflow the i64 counter.
    CounterOverflow {
        /// Family of the column.
        family: String,
        /// Qualifier of the column.
        qualifier: Vec<u8>,
    },
    /// An option has a value outside its allowed range.
    InvalidOption {
        /// Name of the option.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A filter is malformed or invalid (the message shows where).
    InvalidFilter {
        /// What is wrong, with the position for a parse error.
        reason: String,
    },
    /// No table with this name exists.
    TableNotFound {
        /// The table name.
        table: String,
    },
    /// The table is disabled: it takes no reads or writes until enabled.
    TableDisabled {
        /// The table name.
        table: String,
    },
    /// A table with this name already exists.
    TableExists {
        /// The table name.
        table: String,
    },
    /// No namespace with this name exists (HBase's `NamespaceNotFoundException`); a table
    /// `ns:t` needs its namespace.
    NamespaceNotFound {
        /// The namespace name.
        namespace: String,
    },
    /// A namespace with this name already exists (HBase's `NamespaceExistException`).
    NamespaceExists {
        /// The namespace name.
        namespace: String,
    },
    /// Only empty namespaces can be dropped.
    NamespaceNotEmpty {
        /// The namespace name.
        namespace: String,
        /// How many tables it holds.
        tables: usize,
    },
    /// `default` and `hbase` always exist: they cannot be dropped (nor created), and `hbase`
    /// takes no tables (HBase keeps its system tables there; strata has none).
    ReservedNamespace {
        /// The namespace name.
        namespace: String,
        /// What was refused.
        reason: &'static str,
    },
    /// A namespace name does not follow the rules (`[A-Za-z0-9_]`, 1..=255 bytes).
    InvalidNamespaceName {
        /// The rejected name.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// The database (or a handle into it) was used after it was closed.
    Closed,
    /// The database was opened read-only (`DbOptions::read_only`) and the
    /// operation would change it.
    ReadOnly,
    /// Another process (or another open handle) holds the database directory.
    DatabaseLocked {
        /// The database directory.
        path: PathBuf,
    },
    /// `STRATA_IO=uring` (or the option) demanded io_uring but a ring cannot be set up.
    IoUringUnavailable {
        /// What the kernel said.
        reason: String,
    },
    /// The WAL commit thread failed earlier; writes are refused until reopen.
    WalFailed {
        /// The failure that stopped the commit thread (an I/O error).
        cause: Box<Error>,
    },
    /// A flush or compaction failed and writes cannot proceed until it succeeds.
    BackgroundFailed {
        /// The failure, as the job met it.
        source: Box<Error>,
    },
    /// The table has no region with this id (a split replaces a region by
    /// its daughters, which get new ids).
    RegionNotFound {
        /// The table.
        table: String,
        /// The region id asked for.
        region_id: u64,
    },
    /// A split key that is not strictly inside the region it would split
    /// (at or before its start, at or after its end).
    SplitKeyOutsideRegion {
        /// The split key.
        key: Vec<u8>,
        /// The region's inclusive start key (empty: the table's start).
        start: Vec<u8>,
        /// The region's exclusive end key (empty: the table's end).
        end: Vec<u8>,
    },
    /// A cell given to a bulk writer is not after the one before it in the
    /// bulk writer's order (row, family, qualifier ascending, timestamp
    /// descending; no two cells with the same row, column and timestamp).
    BulkCellOutOfOrder {
        /// Position of the cell among those given to the writer (0-based).
        index: u64,
        /// The cell.
        cell: Box<CellKey>,
        /// The cell before it.
        previous: Box<CellKey>,
    },
    /// A cell given to a bulk writer breaks a limit or names an unknown
    /// family; `source` is the error a put of it would have met.
    BulkCellInvalid {
        /// Position of the cell among those given to the writer (0-based).
        index: u64,
        /// The cell.
        cell: Box<CellKey>,
        /// The rule it breaks.
        source: Box<Error>,
    },
    /// A file given to a bulk load was not written by a bulk writer (an
    /// HFile of a flush or compaction carries sequences of its own database).
    NotABulkFile {
        /// The file.
        file: PathBuf,
    },
    /// A file given to a bulk load was written for another table.
    BulkFileOfAnotherTable {
        /// The file.
        file: PathBuf,
        /// The table it was written for.
        written_for: String,
        /// The table it was to be loaded into.
        table: String,
    },
    /// A file given to a bulk load holds a family the table does not have.
    BulkFileUnknownFamily {
        /// The file.
        file: PathBuf,
        /// The table.
        table: String,
        /// The family of the file.
        family: String,
    },
    /// A file given to a bulk load was loaded into the table before (or is
    /// given twice): its bulk writer and number match a loaded file's.
    BulkFileAlreadyLoaded {
        /// The file.
        file: PathBuf,
        /// Its writer's id (hex in messages).
        writer_id: u128,
        /// Its number among the writer's files.
        file_number: u32,
    },
    /// A back-fill load (sequence zero) must go below every file its rows
    /// overlap, and the store's bottom level already holds one it overlaps.
    BackfillOverlapsBottomLevel {
        /// The file.
        file: PathBuf,
        /// The region.
        region_id: u64,
        /// The family.
        family: String,
    },
    /// A merge of regions that are not next to each other (the first's end
    /// must be the second's start).
    RegionsNotAdjacent {
        /// The table.
        table: String,
        /// The regions asked for.
        first: u64,
        /// The regions asked for.
        second: u64,
    },
    /// A snapshot with this name already exists (HBase's `SnapshotExistsException`);
    /// names are unique across tables.
    SnapshotExists {
        /// The snapshot name.
        name: String,
    },
    /// No snapshot with this name exists (HBase's `SnapshotDoesNotExistException`).
    SnapshotNotFound {
        /// The snapshot name.
        name: String,
    },
    /// A snapshot name does not follow HBase's rules for them (`[A-Za-z0-9_.-]`, not
    /// starting with `.` or `-`, 1..=255 bytes).
    InvalidSnapshotName {
        /// The rejected name.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A restore of a snapshot onto a table that is enabled: HBase restores only into a
    /// disabled table (`disable` it first).
    TableNotDisabled {
        /// The table.
        table: String,
    },
    /// A checkpoint's directory must not exist yet: the checkpoint creates it, whole, in one
    /// rename.
    CheckpointTargetExists {
        /// The directory asked for.
        path: PathBuf,
    },
    /// A checkpoint's directory cannot be inside the database it copies (its files would
    /// be copied into themselves, and the database's open would find them).
    CheckpointInsideDatabase {
        /// The directory asked for.
        path: PathBuf,
        /// The database directory.
        database: PathBuf,
    },
    /// A file's content failed a checksum or does not parse.
    Corruption {
        /// The damaged file.
        file: PathBuf,
        /// Byte offset of the damaged record or block.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// Reading a file failed at a known place (the operating system
    /// reported an error, or the file ended early). Nothing read is kept:
    /// the block cache holds only blocks that were read whole and checked.
    ReadFailed {
        /// The file.
        file: PathBuf,
        /// Byte offset of the read that failed.
        offset: u64,
        /// What the operating system said.
        source: Arc<std::io::Error>,
    },
    /// An earlier storage failure (a failed WAL write or sync, a flush,
    /// compaction or split that could not write, a manifest edit that may
    /// not have reached the disk) stopped every change to the database:
    /// writes, flushes, compactions, splits and catalog changes fail with
    /// this until it is reopened; reads keep working (`docs/reliability.md`).
    WritesStopped {
        /// The failure that stopped them.
        cause: Box<Error>,
    },
    /// One of the engine's own rules would have been broken: a bug, not bad
    /// input and not damage on disk. The change was refused before anything
    /// was written.
    InvariantBroken {
        /// The rule, and what would have broken it.
        what: String,
    },
    /// An operating system I/O error.
    Io {
        /// What strata was doing (usually names the file).
        context: String,
        /// The underlying error (shared so that errors can be cloned).
        source: Arc<std::io::Error>,
    },
}

impl Error {
    /// Wraps an I/O error with what strata was doing when it happened.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source: Arc::new(source),
        }
    }

    /// A corruption error naming `file` and `offset`.
    pub(crate) fn corruption(
        file: impl Into<PathBuf>,
        offset: u64,
        reason: impl Into<String>,
    ) -> Self {
        Error::Corruption {
            file: file.into(),
            offset,
            reason: reason.into(),
        }
    }

    /// A read failure naming the file and offset.
    pub(crate) fn read_failed(
        file: impl Into<PathBuf>,
        offset: u64,
        source: std::io::Error,
    ) -> Self {
        Error::ReadFailed {
            file: file.into(),
            offset,
            source: Arc::new(source),
        }
    }

    /// True when the storage refused the write for lack of space (`ENOSPC`),
    /// here or in the failure that stopped writes.
    pub fn is_out_of_space(&self) -> bool {
        match self {
            Error::Io { source, .. } | Error::ReadFailed { source, .. } => {
                source.raw_os_error() == Some(libc::ENOSPC)
                    || source.kind() == std::io::ErrorKind::StorageFull
            }
            Error::WritesStopped { cause }
            | Error::WalFailed { cause }
            | Error::BackgroundFailed { source: cause } => cause.is_out_of_space(),
            _ => false,
        }
    }

    /// True for a failure of the storage (I/O errors and damage found on
    /// disk), as opposed to bad input, a closed database or a missing table.
    pub fn is_storage_failure(&self) -> bool {
        matches!(
            self,
            Error::Io { .. }
                | Error::ReadFailed { .. }
                | Error::Corruption { .. }
                | Error::WalFailed { .. }
        )
    }

    /// True when the error is about the caller's input rather than storage.
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            Error::EmptyRowKey
                | Error::RowKeyTooLong { .. }
                | Error::QualifierTooLong { .. }
                | Error::InvalidTableName { .. }
                | Error::InvalidNamespaceName { .. }
                | Error::InvalidFamilyName { .. }
                | Error::DuplicateFamily { .. }
                | Error::NoFamilies { .. }
                | Error::UnknownFamily { .. }
                | Error::FamilyDropped { .. }
                | Error::NegativeTimestamp { .. }
                | Error::ReservedTimestamp { .. }
                | Error::InvalidTimeRange { .. }
                | Error::ValueTooLarge { .. }
                | Error::MutationTooLarge { .. }
                | Error::EmptyMutation
                | Error::RowMismatch { .. }
                | Error::RowsSpanRegions { .. }
                | Error::SnapshotReleased { .. }
                | Error::SnapshotOfAnotherDatabase
                | Error::NotACounter { .. }
                | Error::CounterOverflow { .. }
                | Error::InvalidOption { .. }
                | Error::InvalidFilter { .. }
                | Error::SplitKeyOutsideRegion { .. }
                | Error::BulkCellOutOfOrder { .. }
                | Error::BulkCellInvalid { .. }
                | Error::NotABulkFile { .. }
                | Error::BulkFileOfAnotherTable { .. }
                | Error::BulkFileUnknownFamily { .. }
                | Error::BulkFileAlreadyLoaded { .. }
                | Error::BackfillOverlapsBottomLevel { .. }
                | Error::RegionsNotAdjacent { .. }
                | Error::InvalidSnapshotName { .. }
                | Error::CheckpointTargetExists { .. }
                | Error::CheckpointInsideDatabase { .. }
        )
    }
}

/// A cell's key as bulk-writer errors name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellKey {
    /// Row key.
    pub row: Vec<u8>,
    /// Family name.
    pub family: Vec<u8>,
    /// Qualifier.
    pub qualifier: Vec<u8>,
    /// Timestamp in milliseconds.
    pub timestamp: i64,
}

impl fmt::Display for CellKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "row '{}', column '{}:{}', timestamp {}",
            printable(&self.row),
            printable(&self.family),
            printable(&self.qualifier),
            self.timestamp
        )
    }
}

/// Renders bytes the way HBase's `Bytes.toStringBinary` does, for messages.
pub(crate) fn printable(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if (0x20..0x7f).contains(&b) && b != b'\\' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::EmptyRowKey => write!(f, "row key is empty (must be 1..=32767 bytes)"),
            Error::RowKeyTooLong { len, max } => {
                write!(f, "row key is {len} bytes, longer than the limit of {max}")
            }
            Error::QualifierTooLong { len, max } => {
                write!(
                    f,
                    "qualifier is {len} bytes, longer than the limit of {max}"
                )
            }
            Error::InvalidTableName { name, reason } => {
                write!(f, "invalid table name '{name}': {reason}")
            }
            Error::InvalidFamilyName { name, reason } => {
                write!(f, "invalid column family name '{name}': {reason}")
            }
            Error::DuplicateFamily { family } => {
                write!(f, "column family '{family}' is declared twice")
            }
            Error::NoFamilies { table } => {
                write!(f, "table '{table}' must have at least one column family")
            }
            Error::UnknownFamily { table, family } => {
                write!(
                    f,
                    "column family '{family}' does not exist in table '{table}'"
                )
            }
            Error::FamilyDropped { family_id } => write!(
                f,
                "column family {family_id} (by id) was dropped by an alter while this write was \
                 prepared; nothing was written"
            ),
            Error::NegativeTimestamp { timestamp } => {
                write!(f, "timestamp {timestamp} is negative (must be >= 0)")
            }
            Error::ReservedTimestamp { timestamp } => {
                write!(
                    f,
                    "timestamp {timestamp} is reserved (HBase's LATEST_TIMESTAMP): write \
                     timestamps are 0..={}; leave it out to write at the current time",
                    // `cell::MAX_TIMESTAMP`; errors sit below cells and name no cell item.
                    i64::MAX - 1
                )
            }
            Error::InvalidTimeRange { min, max } => {
                write!(
                    f,
                    "invalid time range [{min}, {max}): bounds must be >= 0 and min <= max"
                )
            }
            Error::ValueTooLarge { len, max } => {
                write!(f, "value is {len} bytes, larger than the limit of {max}")
            }
            Error::MutationTooLarge { len, max } => {
                write!(
                    f,
                    "mutation encodes to {len} bytes, larger than the limit of {max}"
                )
            }
            Error::EmptyMutation => write!(f, "mutation has no cells"),
            Error::RowMismatch { expected, found } => write!(
                f,
                "mutation for row '{}' found inside an operation on row '{}'",
                printable(found),
                printable(expected)
            ),
            Error::RowsSpanRegions {
                table,
                first_row,
                other_row,
                region_end,
            } => write!(
                f,
                "a multi-row mutation of table '{table}' is atomic within one region only: row \
                 '{}' is in another region than row '{}' (whose region ends at '{}')",
                printable(other_row),
                printable(first_row),
                printable(region_end)
            ),
            Error::SnapshotReleased { sequence } => write!(
                f,
                "the read snapshot at sequence {sequence} was released; take a new one"
            ),
            Error::SnapshotOfAnotherDatabase => write!(
                f,
                "the read snapshot belongs to another database (or an earlier opening of this one)"
            ),
            Error::NotACounter {
                family,
                qualifier,
                len,
            } => write!(
                f,
                "column {family}:{} holds {len} bytes, not an 8-byte counter",
                printable(qualifier)
            ),
            Error::CounterOverflow { family, qualifier } => {
                write!(
                    f,
                    "increment of {family}:{} overflows i64",
                    printable(qualifier)
                )
            }
            Error::InvalidOption { name, reason } => write!(f, "invalid option {name}: {reason}"),
            Error::InvalidFilter { reason } => write!(f, "invalid filter: {reason}"),
            Error::TableNotFound { table } => write!(f, "table '{table}' does not exist"),
            Error::TableExists { table } => write!(f, "table '{table}' already exists"),
            Error::NamespaceNotFound { namespace } => {
                write!(f, "namespace '{namespace}' does not exist")
            }
            Error::NamespaceExists { namespace } => {
                write!(f, "namespace '{namespace}' already exists")
            }
            Error::NamespaceNotEmpty { namespace, tables } => write!(
                f,
                "namespace '{namespace}' holds {tables} table(s); only empty namespaces can be \
                 dropped"
            ),
            Error::ReservedNamespace { namespace, reason } => {
                write!(f, "namespace '{namespace}' is reserved: {reason}")
            }
            Error::InvalidNamespaceName { name, reason } => {
                write!(f, "invalid namespace name '{name}': {reason}")
            }
            Error::TableDisabled { table } => write!(f, "table '{table}' is disabled"),
            Error::Closed => write!(f, "the database is closed"),
            Error::ReadOnly => write!(f, "the database is open read-only: nothing may change it"),
            Error::DatabaseLocked { path } => write!(
                f,
                "database {} is already open (its LOCK is held)",
                path.display()
            ),
            Error::IoUringUnavailable { reason } => {
                write!(f, "io_uring was requested but is unavailable: {reason}")
            }
            Error::WalFailed { cause } => {
                write!(
                    f,
                    "the write-ahead log failed earlier ({cause}); reopen the database"
                )
            }
            Error::BackgroundFailed { source } => {
                write!(f, "a background flush or compaction failed: {source}")
            }
            Error::RegionNotFound { table, region_id } => {
                write!(f, "table '{table}' has no region {region_id}")
            }
            Error::SplitKeyOutsideRegion { key, start, end } => write!(
                f,
                "split key '{}' is not strictly inside the region ['{}', '{}')",
                printable(key),
                printable(start),
                printable(end)
            ),
            Error::BulkCellOutOfOrder {
                index,
                cell,
                previous,
            } => write!(
                f,
                "bulk cell {index} ({cell}) does not come after the cell before it ({previous}): \
                 cells must be sorted by row, family and qualifier, newest timestamp first, \
                 each column and timestamp once"
            ),
            Error::BulkCellInvalid {
                index,
                cell,
                source,
            } => write!(f, "bulk cell {index} ({cell}): {source}"),
            Error::NotABulkFile { file } => write!(
                f,
                "{} was not written by a bulk writer (only a bulk writer's files can be loaded)",
                file.display()
            ),
            Error::BulkFileOfAnotherTable {
                file,
                written_for,
                table,
            } => write!(
                f,
                "{} was written for table '{written_for}', not '{table}'",
                file.display()
            ),
            Error::BulkFileUnknownFamily {
                file,
                table,
                family,
            } => write!(
                f,
                "{} holds family '{family}', which table '{table}' does not have",
                file.display()
            ),
            Error::BulkFileAlreadyLoaded {
                file,
                writer_id,
                file_number,
            } => write!(
                f,
                "{} (file {file_number} of bulk writer {writer_id:032x}) was loaded into the \
                 table already, or is given twice",
                file.display()
            ),
            Error::BackfillOverlapsBottomLevel {
                file,
                region_id,
                family,
            } => write!(
                f,
                "{}: a back-fill must go below every file it overlaps, and the bottom level \
                 of family '{family}' in region {region_id} holds such a file; load it with a \
                 fresh sequence instead",
                file.display()
            ),
            Error::RegionsNotAdjacent {
                table,
                first,
                second,
            } => write!(
                f,
                "regions {first} and {second} of table '{table}' are not adjacent: the first \
                 must end where the second starts"
            ),
            Error::SnapshotExists { name } => write!(f, "snapshot '{name}' already exists"),
            Error::SnapshotNotFound { name } => write!(f, "snapshot '{name}' does not exist"),
            Error::InvalidSnapshotName { name, reason } => {
                write!(f, "invalid snapshot name '{name}': {reason}")
            }
            Error::TableNotDisabled { table } => write!(
                f,
                "table '{table}' must be disabled before a snapshot is restored into it"
            ),
            Error::CheckpointTargetExists { path } => write!(
                f,
                "{} already exists: a checkpoint makes a new directory",
                path.display()
            ),
            Error::CheckpointInsideDatabase { path, database } => write!(
                f,
                "{} is inside the database directory {}: a checkpoint goes elsewhere",
                path.display(),
                database.display()
            ),
            Error::Corruption {
                file,
                offset,
                reason,
            } => write!(
                f,
                "corruption in {} at offset {offset}: {reason}",
                file.display()
            ),
            Error::ReadFailed {
                file,
                offset,
                source,
            } => write!(
                f,
                "reading {} at offset {offset} failed: {source}",
                file.display()
            ),
            Error::WritesStopped { cause } => write!(
                f,
                "the database takes no changes after a storage failure ({cause}); reads still \
                 work; reopen it once the cause is fixed"
            ),
            Error::InvariantBroken { what } => write!(
                f,
                "an internal rule of strata would have been broken ({what}); nothing was \
                 changed; this is a bug"
            ),
            Error::Io { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl From<strata_filters::ParseError> for Error {
    fn from(e: strata_filters::ParseError) -> Self {
        Error::InvalidFilter {
            reason: e.to_string(),
        }
    }
}

impl From<strata_filters::ModelError> for Error {
    fn from(e: strata_filters::ModelError) -> Self {
        Error::InvalidFilter {
            reason: e.to_string(),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::ReadFailed { source, .. } => Some(source.as_ref()),
            Error::BackgroundFailed { source } => Some(source.as_ref()),
            Error::BulkCellInvalid { source, .. } => Some(source.as_ref()),
            Error::WritesStopped { cause } | Error::WalFailed { cause } => Some(cause.as_ref()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_escapes_like_hbase() {
        assert_eq!(printable(b"abc"), "abc");
        assert_eq!(printable(b"a\x00\xffz"), "a\\x00\\xFFz");
        assert_eq!(printable(b"a\\b"), "a\\x5Cb");
    }

    #[test]
    fn a_family_dropped_during_a_write_is_bad_input_named_by_its_id() {
        let error = Error::FamilyDropped { family_id: 7 };
        assert!(error.is_invalid_input() && !error.is_storage_failure());
        assert!(error.to_string().contains("column family 7"), "{error}");
    }

    #[test]
    fn corruption_message_names_file_and_offset() {
        let e = Error::corruption("/d/wal/000001.log", 4096, "checksum mismatch");
        assert_eq!(
            e.to_string(),
            "corruption in /d/wal/000001.log at offset 4096: checksum mismatch"
        );
    }
}
