//! What each call of HBase's Thrift1 interface does to a strata database.
//!
//! The mapping follows HBase 2.x's gateway (`ThriftHBaseServiceHandler`) call by call, onto
//! strata's public API (`strata::{Get, Scan, Put, Delete, Increment, Append,
//! CheckAndMutate}` and the table and database handles). The rules it carries over:
//!
//! * A column is `family:qualifier` split at the first colon; `family` alone (no colon)
//!   means the whole family (a read of every column, a delete of every column), and
//!   `family:` is the empty qualifier (HBase 2's `CellUtil.parseColumn`).
//! * `*Ts` reads take versions with timestamps in `[0, ts)`: the timestamp is an exclusive
//!   upper bound. `*Ts` writes put cells at `ts` and delete what is at or before `ts`.
//!   `i64::MAX` (HBase's `LATEST_TIMESTAMP`) means "now".
//! * `mutateRow(s)` applies a row's puts, then its deletes (HBase's order), so a delete in
//!   the same call hides a put of the same call at or before its timestamp.
//! * `Mutation.writeToWAL = false` skips the WAL; otherwise the gateway's durability
//!   applies (see [`crate::thrift::ServerOptions::durability`]).
//! * Scanners belong to the connection that opened them ([`Session`]); they close with it,
//!   when they have not been used for the idle timeout, or on `scannerClose`.
//!
//! Errors become HBase's exceptions: `IOError` with the Java exception's name and message
//! for what HBase reports that way (`org.apache.hadoop.hbase.TableNotFoundException: t`),
//! `IllegalArgument` for invalid input where the method declares it, `AlreadyExists` for a
//! table that exists. `docs/thrift.md` lists every call and every difference from HBase.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use strata::{
    CheckAndMutate, Compression, Db, Durability, FamilyDescriptor, RowResult, Table,
    TableDescriptor,
};

use super::codec::ThriftMap;
use super::hbase::{
    self, Bytes, Call, ColumnDescriptor, Failure, Mutation, Outcome, TCell, TColumn,
    THRIFT_SERVER_TYPE_ONE, TIncrement, TRegionInfo, TRowResult, TScan,
};
use crate::conventions::{
    BLOOM_FILTER_NAMES, CompressionName, TTL_FOREVER_SECONDS, bloom_type, to_string_binary,
};

/// HBase's `LATEST_TIMESTAMP`: "now" for a write, "everything" as a read's upper bound.
const LATEST_TIMESTAMP: i64 = i64::MAX;

/// The `version` of every `TRegionInfo` (HBase's `HREGION_VERSION`).
const REGION_INFO_VERSION: i8 = 1;

/// The host name a `TRegionInfo` names: every region of an embedded database is served here.
const SERVER_NAME: &str = "localhost";

/// The defaults of a `ColumnDescriptor` field that is not sent (HBase's IDL).
const DEFAULT_MAX_VERSIONS: i32 = 3;

/// Rough bytes a cell adds to a reply beyond its family, qualifier and value (field headers,
/// lengths, timestamp); used to keep `scannerGetList` replies under their byte budget.
const REPLY_BYTES_PER_CELL: usize = 32;

/// Counters shared by every connection of a server.
#[derive(Debug, Default)]
pub struct Counters {
    /// Connections being served now.
    pub open_connections: AtomicUsize,
    /// Scanners open on all connections now.
    pub open_scanners: AtomicUsize,
    /// Connections accepted since the server started.
    pub connections_accepted: AtomicU64,
    /// Connections closed at once because `max_connections` were open.
    pub connections_refused: AtomicU64,
    /// Calls answered.
    pub calls: AtomicU64,
    /// Connections closed because of a malformed or oversized message.
    pub malformed_messages: AtomicU64,
    /// Scanners closed because they were idle too long.
    pub scanners_expired: AtomicU64,
}

/// The part of the gateway every connection shares: the database and the settings of the
/// mapping.
pub struct Gateway {
    db: Db,
    durability: Option<Durability>,
    scanner_idle_timeout: Duration,
    max_scanners_per_connection: usize,
    max_reply_bytes: usize,
    next_scanner_id: AtomicI32,
    counters: Arc<Counters>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("db", &self.db.path())
            .field("durability", &self.durability)
            .finish()
    }
}

/// One scanner a connection opened.
struct OpenScanner {
    scanner: strata::Scanner,
    sort_columns: bool,
    last_used: Instant,
    /// Counts the scanner in [`Counters::open_scanners`] while it lives.
    _counted: ScannerCount,
}

/// Keeps [`Counters::open_scanners`] equal to the scanners alive.
struct ScannerCount(Arc<Counters>);

impl ScannerCount {
    fn new(counters: &Arc<Counters>) -> ScannerCount {
        counters.open_scanners.fetch_add(1, Ordering::Relaxed);
        ScannerCount(counters.clone())
    }
}

impl Drop for ScannerCount {
    fn drop(&mut self) {
        self.0.open_scanners.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What one connection owns: its scanners. Dropping it closes them.
#[derive(Default)]
pub struct Session {
    scanners: HashMap<i32, OpenScanner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("scanners", &self.scanners.len())
            .finish()
    }
}

impl Session {
    /// A connection's empty session.
    pub fn new() -> Session {
        Session::default()
    }
}

/// A column named in a call, split at its first colon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColumnName<'a> {
    /// `family` without a colon: the whole family.
    Family(&'a [u8]),
    /// `family:qualifier` (`family:` is the empty qualifier).
    Column(&'a [u8], &'a [u8]),
}

impl<'a> ColumnName<'a> {
    fn parse(column: &'a [u8]) -> ColumnName<'a> {
        match column.iter().position(|&byte| byte == b':') {
            None => ColumnName::Family(column),
            Some(colon) => {
                let (family, rest) = column.split_at(colon);
                ColumnName::Column(family, rest.get(1..).unwrap_or_default())
            }
        }
    }

    /// The family and qualifier of a column that must name one cell: `family` alone is the
    /// empty qualifier (HBase's `atomicIncrement` does the same).
    fn cell(self) -> (&'a [u8], &'a [u8]) {
        match self {
            ColumnName::Family(family) => (family, b""),
            ColumnName::Column(family, qualifier) => (family, qualifier),
        }
    }
}

/// `family:qualifier`, the name of a column in replies.
fn column_key(family: &[u8], qualifier: &[u8]) -> Bytes {
    let mut key = Vec::with_capacity(family.len() + 1 + qualifier.len());
    key.extend_from_slice(family);
    key.push(b':');
    key.extend_from_slice(qualifier);
    key
}

/// A required argument, or an `IllegalArgument` naming it.
fn required<T>(value: Option<T>, name: &str) -> Result<T, Failure> {
    value.ok_or_else(|| Failure::IllegalArgument(format!("the argument {name} is missing")))
}

/// A table name as text (strata's names are ASCII).
fn table_name_text(name: &[u8]) -> Result<&str, Failure> {
    std::str::from_utf8(name).map_err(|_| {
        Failure::Io(format!(
            "org.apache.hadoop.hbase.TableNotFoundException: {} (table names are ASCII)",
            String::from_utf8_lossy(name)
        ))
    })
}

/// A timestamp argument of a write: `LATEST_TIMESTAMP` is "now" (`None`).
fn write_timestamp(timestamp: i64) -> Option<i64> {
    (timestamp != LATEST_TIMESTAMP).then_some(timestamp)
}

/// An engine error as HBase's gateway reports it.
fn engine_failure(error: strata::Error) -> Failure {
    match error {
        strata::Error::TableNotFound { table } => Failure::Io(format!(
            "org.apache.hadoop.hbase.TableNotFoundException: {table}"
        )),
        strata::Error::TableDisabled { table } => Failure::Io(format!(
            "org.apache.hadoop.hbase.TableNotEnabledException: {table} is disabled"
        )),
        strata::Error::TableExists { table } => Failure::AlreadyExists(format!(
            "org.apache.hadoop.hbase.TableExistsException: {table}"
        )),
        strata::Error::UnknownFamily { table, family } => Failure::Io(format!(
            "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: column family \
             {family} does not exist in table {table}"
        )),
        strata::Error::FamilyDropped { family_id } => Failure::Io(format!(
            "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: column family \
             {family_id} (by id) was dropped while the write was prepared"
        )),
        strata::Error::NotACounter { len, .. } => Failure::Io(format!(
            "org.apache.hadoop.hbase.DoNotRetryIOException: Field is not a long, it's {len} \
             bytes wide"
        )),
        strata::Error::InvalidFilter { reason } => Failure::Io(format!(
            "org.apache.hadoop.hbase.filter.IllegalArgumentException: bad filter string: {reason}"
        )),
        other if other.is_invalid_input() => Failure::IllegalArgument(other.to_string()),
        other => Failure::Io(other.to_string()),
    }
}

/// The family and qualifier selection of a read, from the call's column names.
trait SelectColumns: Sized {
    fn family(self, family: &[u8]) -> Self;
    fn column(self, family: &[u8], qualifier: &[u8]) -> Self;

    fn columns(self, columns: Option<&[Bytes]>) -> Self {
        let mut read = self;
        for column in columns.unwrap_or_default() {
            read = match ColumnName::parse(column) {
                ColumnName::Family(family) => read.family(family),
                ColumnName::Column(family, qualifier) => read.column(family, qualifier),
            };
        }
        read
    }
}

impl SelectColumns for strata::Get {
    fn family(self, family: &[u8]) -> Self {
        strata::Get::family(self, family)
    }
    fn column(self, family: &[u8], qualifier: &[u8]) -> Self {
        strata::Get::column(self, family, qualifier)
    }
}

impl SelectColumns for strata::Scan {
    fn family(self, family: &[u8]) -> Self {
        strata::Scan::family(self, family)
    }
    fn column(self, family: &[u8], qualifier: &[u8]) -> Self {
        strata::Scan::column(self, family, qualifier)
    }
}

/// The cells of a result as `TCell`s.
fn cells_of(result: &RowResult) -> Vec<TCell> {
    result
        .cells
        .iter()
        .map(|cell| TCell {
            value: Some(cell.value.clone()),
            timestamp: Some(cell.timestamp),
        })
        .collect()
}

/// A result as a `TRowResult` (`None` for an empty one, which HBase leaves out): its columns
/// as a map, or with `sorted` as a list in column order.
fn row_result(result: RowResult, sorted: bool) -> Option<TRowResult> {
    if result.is_empty() {
        return None;
    }
    let columns = result.cells.into_iter().map(|cell| {
        (
            column_key(&cell.family, &cell.qualifier),
            TCell {
                value: Some(cell.value),
                timestamp: Some(cell.timestamp),
            },
        )
    });
    Some(if sorted {
        TRowResult {
            row: Some(result.row),
            columns: None,
            sorted_columns: Some(
                columns
                    .map(|(column_name, cell)| TColumn {
                        column_name: Some(column_name),
                        cell: Some(cell),
                    })
                    .collect(),
            ),
        }
    } else {
        TRowResult {
            row: Some(result.row),
            columns: Some(ThriftMap(columns.collect())),
            sorted_columns: None,
        }
    })
}

/// Roughly the bytes a row adds to a reply.
fn reply_bytes(result: &RowResult) -> usize {
    result.row.len()
        + result
            .cells
            .iter()
            .map(|cell| {
                cell.family.len() + cell.qualifier.len() + cell.value.len() + REPLY_BYTES_PER_CELL
            })
            .sum::<usize>()
}

/// The puts and deletes of one row's mutations.
struct RowWrites {
    put: Option<strata::Put>,
    delete: Option<strata::Delete>,
}

/// A table's region as HBase names it: `table,start key,region id` (the start key's bytes
/// as they are).
fn region_name(table: &str, start_key: &[u8], id: u64) -> Bytes {
    let mut name = Vec::with_capacity(table.len() + start_key.len() + 24);
    name.extend_from_slice(table.as_bytes());
    name.push(b',');
    name.extend_from_slice(start_key);
    name.push(b',');
    name.extend_from_slice(id.to_string().as_bytes());
    name
}

/// The table and region id of a region name (`t,start,7` or HBase's `t,start,7.encoded.`).
fn parse_region_name(name: &[u8]) -> Option<(&str, u64)> {
    let first = name.iter().position(|&byte| byte == b',')?;
    let last = name.iter().rposition(|&byte| byte == b',')?;
    if last <= first {
        return None;
    }
    let table = std::str::from_utf8(name.get(..first)?).ok()?;
    let id_text = std::str::from_utf8(name.get(last + 1..)?).ok()?;
    let id_text = id_text.split('.').next().unwrap_or(id_text);
    Some((table, id_text.parse().ok()?))
}

impl Gateway {
    /// A gateway over `db`.
    ///
    /// `durability` is the durability of every mutation that asks for the WAL (`None`: the
    /// table's own); `max_reply_bytes` bounds the rows one `scannerGetList` returns.
    pub fn new(
        db: Db,
        durability: Option<Durability>,
        scanner_idle_timeout: Duration,
        max_scanners_per_connection: usize,
        max_reply_bytes: usize,
        counters: Arc<Counters>,
    ) -> Gateway {
        Gateway {
            db,
            durability,
            scanner_idle_timeout,
            max_scanners_per_connection,
            max_reply_bytes,
            next_scanner_id: AtomicI32::new(1),
            counters,
        }
    }

    /// Closes the scanners of `session` that were not used for the idle timeout.
    pub fn expire_idle_scanners(&self, session: &mut Session, now: Instant) {
        let timeout = self.scanner_idle_timeout;
        let before = session.scanners.len();
        session
            .scanners
            .retain(|_, open| now.saturating_duration_since(open.last_used) < timeout);
        let expired = before - session.scanners.len();
        if expired > 0 {
            self.counters
                .scanners_expired
                .fetch_add(expired as u64, Ordering::Relaxed);
        }
    }

    /// Runs one call for the connection owning `session`.
    pub fn handle(&self, session: &mut Session, call: Call) -> Result<Outcome, Failure> {
        self.counters.calls.fetch_add(1, Ordering::Relaxed);
        match call {
            Call::EnableTable(args) => self.enable_table(&required(args.table_name, "tableName")?),
            Call::DisableTable(args) => {
                self.disable_table(&required(args.table_name, "tableName")?)
            }
            Call::IsTableEnabled(args) => {
                let table = self.table(&required(args.table_name, "tableName")?)?;
                Ok(Outcome::Bool(table.is_enabled()))
            }
            Call::Compact(args) => self.compact(
                &required(args.table_name_or_region_name, "tableNameOrRegionName")?,
                false,
            ),
            Call::MajorCompact(args) => self.compact(
                &required(args.table_name_or_region_name, "tableNameOrRegionName")?,
                true,
            ),
            Call::GetTableNames(_) => Ok(Outcome::Names(
                self.table_names()
                    .into_iter()
                    .map(String::into_bytes)
                    .collect(),
            )),
            Call::GetTableNamesWithIsTableEnabled(_) => self.table_names_with_flags(),
            Call::GetColumnDescriptors(args) => {
                self.column_descriptors(&required(args.table_name, "tableName")?)
            }
            Call::GetTableRegions(args) => {
                self.table_regions(&required(args.table_name, "tableName")?)
            }
            Call::CreateTable(args) => self.create_table(
                &required(args.table_name, "tableName")?,
                args.column_families.unwrap_or_default(),
            ),
            Call::DeleteTable(args) => self.delete_table(&required(args.table_name, "tableName")?),
            Call::Get(args) => self.get_cells(
                &required(args.table_name, "tableName")?,
                required(args.row, "row")?,
                &required(args.column, "column")?,
                1,
                LATEST_TIMESTAMP,
            ),
            Call::GetVer(args) => self.get_cells(
                &required(args.table_name, "tableName")?,
                required(args.row, "row")?,
                &required(args.column, "column")?,
                required(args.num_versions, "numVersions")?,
                LATEST_TIMESTAMP,
            ),
            Call::GetVerTs(args) => self.get_cells(
                &required(args.table_name, "tableName")?,
                required(args.row, "row")?,
                &required(args.column, "column")?,
                required(args.num_versions, "numVersions")?,
                required(args.timestamp, "timestamp")?,
            ),
            Call::GetRow(args) => self.get_rows(
                &required(args.table_name, "tableName")?,
                vec![required(args.row, "row")?],
                None,
                LATEST_TIMESTAMP,
            ),
            Call::GetRowWithColumns(args) => self.get_rows(
                &required(args.table_name, "tableName")?,
                vec![required(args.row, "row")?],
                args.columns.as_deref(),
                LATEST_TIMESTAMP,
            ),
            Call::GetRowTs(args) => self.get_rows(
                &required(args.table_name, "tableName")?,
                vec![required(args.row, "row")?],
                None,
                required(args.timestamp, "timestamp")?,
            ),
            Call::GetRowWithColumnsTs(args) => self.get_rows(
                &required(args.table_name, "tableName")?,
                vec![required(args.row, "row")?],
                args.columns.as_deref(),
                required(args.timestamp, "timestamp")?,
            ),
            Call::GetRows(args) => self.get_rows(
                &required(args.table_name, "tableName")?,
                args.rows.unwrap_or_default(),
                None,
                LATEST_TIMESTAMP,
            ),
            Call::GetRowsWithColumns(args) => self.get_rows(
                &required(args.table_name, "tableName")?,
                args.rows.unwrap_or_default(),
                args.columns.as_deref(),
                LATEST_TIMESTAMP,
            ),
            Call::GetRowsTs(args) => self.get_rows(
                &required(args.table_name, "tableName")?,
                args.rows.unwrap_or_default(),
                None,
                required(args.timestamp, "timestamp")?,
            ),
            Call::GetRowsWithColumnsTs(args) => self.get_rows(
                &required(args.table_name, "tableName")?,
                args.rows.unwrap_or_default(),
                args.columns.as_deref(),
                required(args.timestamp, "timestamp")?,
            ),
            Call::MutateRow(args) => self.mutate_rows(
                &required(args.table_name, "tableName")?,
                vec![(
                    required(args.row, "row")?,
                    args.mutations.unwrap_or_default(),
                )],
                LATEST_TIMESTAMP,
            ),
            Call::MutateRowTs(args) => self.mutate_rows(
                &required(args.table_name, "tableName")?,
                vec![(
                    required(args.row, "row")?,
                    args.mutations.unwrap_or_default(),
                )],
                required(args.timestamp, "timestamp")?,
            ),
            Call::MutateRows(args) => self.mutate_batches(
                &required(args.table_name, "tableName")?,
                args.row_batches.unwrap_or_default(),
                LATEST_TIMESTAMP,
            ),
            Call::MutateRowsTs(args) => self.mutate_batches(
                &required(args.table_name, "tableName")?,
                args.row_batches.unwrap_or_default(),
                required(args.timestamp, "timestamp")?,
            ),
            Call::AtomicIncrement(args) => {
                let value = self.increment(
                    &required(args.table_name, "tableName")?,
                    &required(args.row, "row")?,
                    &required(args.column, "column")?,
                    required(args.value, "value")?,
                )?;
                Ok(Outcome::I64(value))
            }
            Call::DeleteAll(args) => self.delete_column(
                &required(args.table_name, "tableName")?,
                required(args.row, "row")?,
                &required(args.column, "column")?,
                LATEST_TIMESTAMP,
            ),
            Call::DeleteAllTs(args) => self.delete_column(
                &required(args.table_name, "tableName")?,
                required(args.row, "row")?,
                &required(args.column, "column")?,
                required(args.timestamp, "timestamp")?,
            ),
            Call::DeleteAllRow(args) => self.delete_row(
                &required(args.table_name, "tableName")?,
                required(args.row, "row")?,
                LATEST_TIMESTAMP,
            ),
            Call::DeleteAllRowTs(args) => self.delete_row(
                &required(args.table_name, "tableName")?,
                required(args.row, "row")?,
                required(args.timestamp, "timestamp")?,
            ),
            Call::Increment(args) => {
                self.increment_struct(required(args.increment, "increment")?)?;
                Ok(Outcome::Void)
            }
            Call::IncrementRows(args) => {
                for increment in args.increments.unwrap_or_default() {
                    self.increment_struct(increment)?;
                }
                Ok(Outcome::Void)
            }
            Call::ScannerOpenWithScan(args) => self.open_scanner(
                session,
                &required(args.table_name, "tableName")?,
                args.scan.unwrap_or_default(),
            ),
            Call::ScannerOpen(args) => self.open_scanner(
                session,
                &required(args.table_name, "tableName")?,
                TScan {
                    start_row: args.start_row,
                    columns: args.columns,
                    ..TScan::default()
                },
            ),
            Call::ScannerOpenWithStop(args) => self.open_scanner(
                session,
                &required(args.table_name, "tableName")?,
                TScan {
                    start_row: args.start_row,
                    stop_row: args.stop_row,
                    columns: args.columns,
                    ..TScan::default()
                },
            ),
            Call::ScannerOpenWithPrefix(args) => self.open_prefix_scanner(
                session,
                &required(args.table_name, "tableName")?,
                &required(args.start_and_prefix, "startAndPrefix")?,
                args.columns.as_deref(),
            ),
            Call::ScannerOpenTs(args) => self.open_scanner(
                session,
                &required(args.table_name, "tableName")?,
                TScan {
                    start_row: args.start_row,
                    columns: args.columns,
                    timestamp: Some(required(args.timestamp, "timestamp")?),
                    ..TScan::default()
                },
            ),
            Call::ScannerOpenWithStopTs(args) => self.open_scanner(
                session,
                &required(args.table_name, "tableName")?,
                TScan {
                    start_row: args.start_row,
                    stop_row: args.stop_row,
                    columns: args.columns,
                    timestamp: Some(required(args.timestamp, "timestamp")?),
                    ..TScan::default()
                },
            ),
            Call::ScannerGet(args) => self.scanner_rows(session, required(args.id, "id")?, 1),
            Call::ScannerGetList(args) => self.scanner_rows(
                session,
                required(args.id, "id")?,
                required(args.nb_rows, "nbRows")?,
            ),
            Call::ScannerClose(args) => {
                let id = required(args.id, "id")?;
                match session.scanners.remove(&id) {
                    Some(_) => Ok(Outcome::Void),
                    None => Err(unknown_scanner(id, self.scanner_idle_timeout)),
                }
            }
            Call::GetRowOrBefore(args) => self.row_or_before(
                &required(args.table_name, "tableName")?,
                required(args.row, "row")?,
                &required(args.family, "family")?,
            ),
            Call::GetRegionInfo(args) => self.region_info(&required(args.row, "row")?),
            Call::Append(args) => self.append(required(args.append, "append")?),
            Call::CheckAndPut(args) => self.check_and_put(
                &required(args.table_name, "tableName")?,
                required(args.row, "row")?,
                &required(args.column, "column")?,
                args.value,
                required(args.mput, "mput")?,
            ),
            Call::GetThriftServerType(_) => Ok(Outcome::I32(THRIFT_SERVER_TYPE_ONE)),
            Call::GetClusterId(_) => Ok(Outcome::Text(format!(
                "strata:{}",
                self.db.path().display()
            ))),
            Call::Grant(_) | Call::Revoke(_) => Err(Failure::Io(
                "grant and revoke are not supported by strata's Thrift gateway: an embedded \
                 strata database has no users or permissions"
                    .to_owned(),
            )),
        }
    }

    fn table(&self, name: &[u8]) -> Result<Table, Failure> {
        self.db
            .table(table_name_text(name)?)
            .map_err(engine_failure)
    }

    fn table_names(&self) -> Vec<String> {
        let mut names = self.db.list_tables();
        names.sort();
        names
    }

    fn table_names_with_flags(&self) -> Result<Outcome, Failure> {
        let mut flags = Vec::new();
        for name in self.table_names() {
            // A table dropped since the listing is left out.
            if let Ok(table) = self.db.table(&name) {
                flags.push((name.into_bytes(), table.is_enabled()));
            }
        }
        Ok(Outcome::EnabledFlags(ThriftMap(flags)))
    }

    fn enable_table(&self, name: &[u8]) -> Result<Outcome, Failure> {
        let table = self.table(name)?;
        if table.is_enabled() {
            return Err(Failure::Io(format!(
                "org.apache.hadoop.hbase.TableNotDisabledException: {}",
                table.name()
            )));
        }
        self.db.enable_table(table.name()).map_err(engine_failure)?;
        Ok(Outcome::Void)
    }

    fn disable_table(&self, name: &[u8]) -> Result<Outcome, Failure> {
        let table = self.table(name)?;
        if !table.is_enabled() {
            return Err(Failure::Io(format!(
                "org.apache.hadoop.hbase.TableNotEnabledException: {}",
                table.name()
            )));
        }
        self.db
            .disable_table(table.name())
            .map_err(engine_failure)?;
        Ok(Outcome::Void)
    }

    fn delete_table(&self, name: &[u8]) -> Result<Outcome, Failure> {
        let table = self.table(name)?;
        if table.is_enabled() {
            return Err(Failure::Io(format!(
                "org.apache.hadoop.hbase.TableNotDisabledException: {}",
                table.name()
            )));
        }
        self.db.drop_table(table.name()).map_err(engine_failure)?;
        Ok(Outcome::Void)
    }

    /// `compact` and `majorCompact` of a table or of one region (by its region name).
    fn compact(&self, name: &[u8], major: bool) -> Result<Outcome, Failure> {
        let as_table = std::str::from_utf8(name)
            .ok()
            .filter(|text| self.db.table_exists(text));
        if let Some(text) = as_table {
            let table = self.db.table(text).map_err(engine_failure)?;
            let done = if major {
                table.major_compact()
            } else {
                table.compact()
            };
            done.map_err(engine_failure)?;
            return Ok(Outcome::Void);
        }
        let Some((table, region_id)) = parse_region_name(name) else {
            return Err(Failure::Io(format!(
                "org.apache.hadoop.hbase.TableNotFoundException: {}",
                String::from_utf8_lossy(name)
            )));
        };
        self.db
            .table(table)
            .and_then(|table| table.compact_region(region_id, major))
            .map_err(engine_failure)?;
        Ok(Outcome::Void)
    }

    fn column_descriptors(&self, name: &[u8]) -> Result<Outcome, Failure> {
        let table = self.table(name)?;
        let descriptor = table.descriptor().map_err(engine_failure)?;
        let mut families: Vec<(Bytes, ColumnDescriptor)> = descriptor
            .families()
            .iter()
            .map(|family| {
                let name = column_key(family.name().as_bytes(), b"");
                (name, column_descriptor(family))
            })
            .collect();
        families.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Outcome::Descriptors(ThriftMap(families)))
    }

    /// `getTableRegions`: the regions, or none for a table that does not exist (as HBase).
    fn table_regions(&self, name: &[u8]) -> Result<Outcome, Failure> {
        let Ok(table) = self.table(name) else {
            return Ok(Outcome::Regions(Vec::new()));
        };
        let regions = table.regions().map_err(engine_failure)?;
        Ok(Outcome::Regions(
            regions
                .iter()
                .map(|region| region_info(table.name(), region))
                .collect(),
        ))
    }

    fn create_table(
        &self,
        name: &[u8],
        families: Vec<ColumnDescriptor>,
    ) -> Result<Outcome, Failure> {
        let name = std::str::from_utf8(name).map_err(|_| {
            Failure::IllegalArgument(format!(
                "table name {} is not ASCII",
                String::from_utf8_lossy(name)
            ))
        })?;
        if self.db.table_exists(name) {
            return Err(Failure::AlreadyExists(format!(
                "table name already in use: {name}"
            )));
        }
        let mut descriptor = TableDescriptor::new(name);
        for family in families {
            descriptor = descriptor.family(family_descriptor(family)?);
        }
        self.db.create_table(descriptor).map_err(engine_failure)?;
        Ok(Outcome::Void)
    }

    /// `get`, `getVer`, `getVerTs`: the versions of one column, or of every column of a
    /// family, with timestamps below `max_timestamp`.
    fn get_cells(
        &self,
        table: &[u8],
        row: Bytes,
        column: &[u8],
        versions: i32,
        max_timestamp: i64,
    ) -> Result<Outcome, Failure> {
        let table = self.table(table)?;
        let versions = u32::try_from(versions)
            .ok()
            .filter(|&versions| versions > 0)
            .ok_or_else(|| Failure::Io(format!("numVersions must be positive, not {versions}")))?;
        let get = strata::Get::new(row)
            .columns(Some(&[column.to_vec()]))
            .max_versions(versions)
            .time_range(0, max_timestamp);
        let result = table.get(&get).map_err(engine_failure)?;
        Ok(Outcome::Cells(cells_of(&result)))
    }

    /// The `getRow*` calls: each row's newest cells below `max_timestamp`, in the columns
    /// named (all when none are); rows without cells are left out.
    fn get_rows(
        &self,
        table: &[u8],
        rows: Vec<Bytes>,
        columns: Option<&[Bytes]>,
        max_timestamp: i64,
    ) -> Result<Outcome, Failure> {
        let table = self.table(table)?;
        let gets: Vec<strata::Get> = rows
            .into_iter()
            .map(|row| {
                strata::Get::new(row)
                    .columns(columns)
                    .time_range(0, max_timestamp)
            })
            .collect();
        let results = match gets.as_slice() {
            [one] => vec![table.get(one).map_err(engine_failure)?],
            many => table.get_many(many).map_err(engine_failure)?,
        };
        Ok(Outcome::Rows(
            results
                .into_iter()
                .filter_map(|result| row_result(result, false))
                .collect(),
        ))
    }

    /// The writes of one row's mutations at `timestamp` (`LATEST_TIMESTAMP`: now), with
    /// `durability` unless every mutation of a kind says `writeToWAL = false`.
    fn row_writes(
        row: &[u8],
        mutations: Vec<Mutation>,
        timestamp: i64,
        durability: Durability,
    ) -> Result<RowWrites, Failure> {
        let at = write_timestamp(timestamp);
        let mut put = strata::Put::new(row);
        if let Some(at) = at {
            put = put.timestamp(at);
        }
        let mut delete = strata::Delete::new(row);
        let (mut puts_want_wal, mut deletes_want_wal) = (false, false);
        let (mut has_put, mut has_delete) = (false, false);
        for mutation in mutations {
            let column = mutation.column.unwrap_or_default();
            let wants_wal = mutation.write_to_wal.unwrap_or(true);
            if mutation.is_delete.unwrap_or(false) {
                has_delete = true;
                deletes_want_wal |= wants_wal;
                delete = match (ColumnName::parse(&column), at) {
                    (ColumnName::Family(family), None) => delete.family(family),
                    (ColumnName::Family(family), Some(at)) => delete.family_up_to(family, at),
                    (ColumnName::Column(family, qualifier), None) => {
                        delete.column_all_versions(family, qualifier)
                    }
                    (ColumnName::Column(family, qualifier), Some(at)) => {
                        delete.column_all_versions_up_to(family, qualifier, at)
                    }
                };
            } else {
                let ColumnName::Column(family, qualifier) = ColumnName::parse(&column) else {
                    return Err(Failure::IllegalArgument(format!(
                        "a put of column {} has no qualifier: puts name family:qualifier \
                         (a family alone is only for deletes)",
                        String::from_utf8_lossy(&column)
                    )));
                };
                has_put = true;
                puts_want_wal |= wants_wal;
                put = put.add(family, qualifier, mutation.value.unwrap_or_default());
            }
        }
        let durability_of = |wants_wal: bool| {
            if wants_wal {
                durability
            } else {
                Durability::SkipWal
            }
        };
        Ok(RowWrites {
            put: has_put.then(|| put.durability(durability_of(puts_want_wal))),
            delete: has_delete.then(|| delete.durability(durability_of(deletes_want_wal))),
        })
    }

    /// The durability of a mutation that asks for the WAL: the gateway's, or the table's
    /// when the gateway follows the tables.
    fn table_durability(&self, table: &Table) -> Result<Durability, Failure> {
        match self.durability {
            Some(durability) => Ok(durability),
            None => Ok(table.descriptor().map_err(engine_failure)?.get_durability()),
        }
    }

    fn mutate_batches(
        &self,
        table: &[u8],
        batches: Vec<hbase::BatchMutation>,
        timestamp: i64,
    ) -> Result<Outcome, Failure> {
        let rows = batches
            .into_iter()
            .map(|batch| {
                (
                    batch.row.unwrap_or_default(),
                    batch.mutations.unwrap_or_default(),
                )
            })
            .collect();
        self.mutate_rows(table, rows, timestamp)
    }

    /// `mutateRow(s)(Ts)`: every row's puts (in one commit), then every row's deletes.
    ///
    /// Several rows of one region, none both put and deleted, are applied as one
    /// multi-row mutation (`Table::mutate_rows`): all or nothing, visible together. HBase's
    /// Thrift1 `mutateRows` promises nothing across rows, so this only strengthens it, and
    /// the result is the same as HBase's order (puts, then deletes) gives, since a delete
    /// hides only cells of its own row. Rows of several regions, or a row with both, take
    /// HBase's path: per row, puts first.
    fn mutate_rows(
        &self,
        table: &[u8],
        rows: Vec<(Bytes, Vec<Mutation>)>,
        timestamp: i64,
    ) -> Result<Outcome, Failure> {
        let table = self.table(table)?;
        let durability = self.table_durability(&table)?;
        let mut puts = Vec::with_capacity(rows.len());
        let mut deletes = Vec::new();
        let mut together = Vec::with_capacity(rows.len());
        let mut put_and_deleted = false;
        for (row, mutations) in rows {
            let writes = Self::row_writes(&row, mutations, timestamp, durability)?;
            put_and_deleted |= writes.put.is_some() && writes.delete.is_some();
            together.extend(writes.put.iter().cloned().map(strata::Mutation::Put));
            together.extend(writes.delete.iter().cloned().map(strata::Mutation::Delete));
            puts.extend(writes.put);
            deletes.extend(writes.delete);
        }
        if together.len() > 1 && !put_and_deleted {
            match table.mutate_rows(&together) {
                Ok(()) => return Ok(Outcome::Void),
                // Refused whole: nothing was written, HBase's path follows.
                Err(strata::Error::RowsSpanRegions { .. }) => {}
                Err(e) => return Err(engine_failure(e)),
            }
        }
        match puts.as_slice() {
            [] => {}
            [one] => table.put(one).map_err(engine_failure)?,
            many => table.put_many(many).map_err(engine_failure)?,
        }
        for delete in &deletes {
            table.delete(delete).map_err(engine_failure)?;
        }
        Ok(Outcome::Void)
    }

    fn increment(
        &self,
        table: &[u8],
        row: &[u8],
        column: &[u8],
        amount: i64,
    ) -> Result<i64, Failure> {
        let table = self.table(table)?;
        let (family, qualifier) = ColumnName::parse(column).cell();
        let durability = self.table_durability(&table)?;
        let result = table
            .increment(
                &strata::Increment::new(row)
                    .add(family, qualifier, amount)
                    .durability(durability),
            )
            .map_err(engine_failure)?;
        let value = result.value(family, qualifier).ok_or_else(|| {
            Failure::Io("the increment returned no value for its column".to_owned())
        })?;
        let bytes: [u8; 8] = value.try_into().map_err(|_| {
            Failure::Io(format!(
                "org.apache.hadoop.hbase.DoNotRetryIOException: Field is not a long, it's {} \
                 bytes wide",
                value.len()
            ))
        })?;
        Ok(i64::from_be_bytes(bytes))
    }

    fn increment_struct(&self, increment: TIncrement) -> Result<(), Failure> {
        let table = required(increment.table, "increment.table")?;
        let row = required(increment.row, "increment.row")?;
        if table.is_empty() || row.is_empty() {
            return Err(Failure::Io(
                "Must supply a table and a row key; can't increment".to_owned(),
            ));
        }
        self.increment(
            &table,
            &row,
            &required(increment.column, "increment.column")?,
            increment.ammount.unwrap_or(0),
        )?;
        Ok(())
    }

    /// `deleteAll(Ts)`: every version of a column (or of every column of a family) at or
    /// before the timestamp.
    fn delete_column(
        &self,
        table: &[u8],
        row: Bytes,
        column: &[u8],
        timestamp: i64,
    ) -> Result<Outcome, Failure> {
        let table = self.table(table)?;
        let delete = strata::Delete::new(row);
        let delete = match (ColumnName::parse(column), write_timestamp(timestamp)) {
            (ColumnName::Family(family), None) => delete.family(family),
            (ColumnName::Family(family), Some(at)) => delete.family_up_to(family, at),
            (ColumnName::Column(family, qualifier), None) => {
                delete.column_all_versions(family, qualifier)
            }
            (ColumnName::Column(family, qualifier), Some(at)) => {
                delete.column_all_versions_up_to(family, qualifier, at)
            }
        };
        let delete = delete.durability(self.table_durability(&table)?);
        table.delete(&delete).map_err(engine_failure)?;
        Ok(Outcome::Void)
    }

    /// `deleteAllRow(Ts)`: every cell of the row at or before the timestamp.
    fn delete_row(&self, table: &[u8], row: Bytes, timestamp: i64) -> Result<Outcome, Failure> {
        let table = self.table(table)?;
        let mut delete = strata::Delete::new(row);
        if let Some(at) = write_timestamp(timestamp) {
            delete = delete.timestamp(at);
        }
        let delete = delete.durability(self.table_durability(&table)?);
        table.delete(&delete).map_err(engine_failure)?;
        Ok(Outcome::Void)
    }

    fn append(&self, append: hbase::TAppend) -> Result<Outcome, Failure> {
        let table_name = required(append.table, "append.table")?;
        let row = required(append.row, "append.row")?;
        if table_name.is_empty() || row.is_empty() {
            return Err(Failure::Io(
                "Must supply a table and a row key; can't append".to_owned(),
            ));
        }
        let columns = append.columns.unwrap_or_default();
        let values = append.values.unwrap_or_default();
        if columns.len() != values.len() {
            return Err(Failure::IllegalArgument(format!(
                "Sizes of columns and values in tappend object are not matching ({} columns, \
                 {} values)",
                columns.len(),
                values.len()
            )));
        }
        let table = self.table(&table_name)?;
        let mut operation = strata::Append::new(&row).durability(self.table_durability(&table)?);
        for (column, value) in columns.iter().zip(values) {
            let (family, qualifier) = ColumnName::parse(column).cell();
            operation = operation.add(family, qualifier, value);
        }
        let result = table.append(&operation).map_err(engine_failure)?;
        Ok(Outcome::Cells(cells_of(&result)))
    }

    fn check_and_put(
        &self,
        table: &[u8],
        row: Bytes,
        column: &[u8],
        value: Option<Bytes>,
        mput: Mutation,
    ) -> Result<Outcome, Failure> {
        let table = self.table(table)?;
        let put_column = mput.column.unwrap_or_default();
        let ColumnName::Column(put_family, put_qualifier) = ColumnName::parse(&put_column) else {
            return Err(Failure::IllegalArgument(format!(
                "the put of checkAndPut names column {} without a qualifier",
                String::from_utf8_lossy(&put_column)
            )));
        };
        let wants_wal = mput.write_to_wal.unwrap_or(true);
        let durability = if wants_wal {
            self.table_durability(&table)?
        } else {
            Durability::SkipWal
        };
        let put = strata::Put::new(&row)
            .add(put_family, put_qualifier, mput.value.unwrap_or_default())
            .durability(durability);
        let (family, qualifier) = ColumnName::parse(column).cell();
        let check = CheckAndMutate::builder(&row);
        let check = match value {
            Some(value) => check.if_equals(family, qualifier, value),
            None => check.if_not_exists(family, qualifier),
        };
        let outcome = table
            .check_and_mutate(&check.then_put(put))
            .map_err(engine_failure)?;
        Ok(Outcome::Bool(outcome.success))
    }

    /// `scannerOpenWithScan` and the `scannerOpen*` calls (which build a `TScan`).
    fn open_scanner(
        &self,
        session: &mut Session,
        table: &[u8],
        tscan: TScan,
    ) -> Result<Outcome, Failure> {
        let table = self.table(table)?;
        let mut scan = strata::Scan::new().columns(tscan.columns.as_deref());
        // An empty start or stop row bounds nothing (HBase's EMPTY_START_ROW/EMPTY_END_ROW).
        if let Some(start) = tscan.start_row.filter(|row| !row.is_empty()) {
            scan = scan.start(start);
        }
        if let Some(stop) = tscan.stop_row.filter(|row| !row.is_empty()) {
            scan = scan.stop(stop);
        }
        if let Some(timestamp) = tscan.timestamp {
            scan = scan.time_range(0, timestamp);
        }
        // HBase's batch: at most this many cells per result; zero or less does not batch.
        if let Some(cells) = tscan
            .batch_size
            .and_then(|size| usize::try_from(size).ok())
            .filter(|&cells| cells > 0)
        {
            scan = scan.batch(cells);
        }
        if let Some(filter) = tscan.filter_string.filter(|filter| !filter.is_empty()) {
            // Filter strings are bytes, as in HBase: a comparator's value may hold any byte.
            scan = scan.filter_bytes(&filter).map_err(engine_failure)?;
        }
        scan = scan.reversed(tscan.reversed.unwrap_or(false));
        // `caching` and `cacheBlocks` tune how HBase moves rows between servers; a strata
        // scanner reads its snapshot lazily, so they change nothing.
        self.register_scanner(session, &table, &scan, tscan.sort_columns.unwrap_or(false))
    }

    /// `scannerOpenWithPrefix`: the rows starting with the prefix.
    fn open_prefix_scanner(
        &self,
        session: &mut Session,
        table: &[u8],
        prefix: &[u8],
        columns: Option<&[Bytes]>,
    ) -> Result<Outcome, Failure> {
        let table = self.table(table)?;
        let scan = strata::Scan::new().columns(columns).prefix(prefix);
        self.register_scanner(session, &table, &scan, false)
    }

    fn register_scanner(
        &self,
        session: &mut Session,
        table: &Table,
        scan: &strata::Scan,
        sort_columns: bool,
    ) -> Result<Outcome, Failure> {
        if session.scanners.len() >= self.max_scanners_per_connection {
            return Err(Failure::Io(format!(
                "this connection has {} scanners open, the most one connection may have; \
                 close some with scannerClose",
                session.scanners.len()
            )));
        }
        let scanner = table.scan(scan).map_err(engine_failure)?;
        let id = self.next_scanner_id();
        session.scanners.insert(
            id,
            OpenScanner {
                scanner,
                sort_columns,
                last_used: Instant::now(),
                _counted: ScannerCount::new(&self.counters),
            },
        );
        Ok(Outcome::I32(id))
    }

    /// A scanner id unique in the server (positive, wrapping after `i32::MAX`), so that an id
    /// taken to another connection is an error there rather than another scanner.
    fn next_scanner_id(&self) -> i32 {
        let id = self.next_scanner_id.fetch_add(1, Ordering::Relaxed);
        if id > 0 {
            id
        } else {
            self.next_scanner_id.store(2, Ordering::Relaxed);
            1
        }
    }

    /// `scannerGet(List)`: up to `rows` rows, fewer when the reply would pass its byte budget
    /// (always at least one); none at the end of the scan.
    fn scanner_rows(&self, session: &mut Session, id: i32, rows: i32) -> Result<Outcome, Failure> {
        let timeout = self.scanner_idle_timeout;
        let open = session
            .scanners
            .get_mut(&id)
            .ok_or_else(|| unknown_scanner(id, timeout))?;
        let wanted = usize::try_from(rows).map_err(|_| {
            Failure::IllegalArgument(format!("nbRows must not be negative, not {rows}"))
        })?;
        open.last_used = Instant::now();
        let mut results = Vec::with_capacity(wanted.min(1024));
        let mut bytes = 0usize;
        while results.len() < wanted && (results.is_empty() || bytes < self.max_reply_bytes) {
            match open.scanner.next() {
                None => break,
                Some(Ok(result)) => {
                    bytes += reply_bytes(&result);
                    results.extend(row_result(result, open.sort_columns));
                }
                Some(Err(error)) => {
                    session.scanners.remove(&id);
                    return Err(engine_failure(error));
                }
            }
        }
        Ok(Outcome::Rows(results))
    }

    /// `getRowOrBefore`: the family's cells in the row at `row`, or else the closest row
    /// before it.
    fn row_or_before(&self, table: &[u8], row: Bytes, family: &[u8]) -> Result<Outcome, Failure> {
        let table = self.table(table)?;
        let family = match ColumnName::parse(family) {
            ColumnName::Family(family) | ColumnName::Column(family, _) => family,
        };
        let scan = strata::Scan::new()
            .start(row)
            .reversed(true)
            .family(family)
            .limit(1);
        let mut scanner = table.scan(&scan).map_err(engine_failure)?;
        match scanner.next() {
            Some(Ok(result)) => Ok(Outcome::Cells(cells_of(&result))),
            Some(Err(error)) => Err(engine_failure(error)),
            None => Ok(Outcome::Cells(Vec::new())),
        }
    }

    /// `getRegionInfo`: the region of `table` holding `row`, from HBase's `hbase:meta` row
    /// key `table,row,timestamp` (clients send `table,row,99999999999999`).
    fn region_info(&self, meta_row: &[u8]) -> Result<Outcome, Failure> {
        let not_found = || {
            Failure::Io(format!(
                "Cannot find row in hbase:meta, row={}",
                to_string_binary(meta_row)
            ))
        };
        let first = meta_row
            .iter()
            .position(|&byte| byte == b',')
            .ok_or_else(not_found)?;
        let last = meta_row
            .iter()
            .rposition(|&byte| byte == b',')
            .filter(|&last| last > first)
            .ok_or_else(not_found)?;
        let table_name = meta_row.get(..first).ok_or_else(not_found)?;
        let row = meta_row.get(first + 1..last).ok_or_else(not_found)?;
        let table = self.table(table_name).map_err(|_| not_found())?;
        let regions = table.regions().map_err(engine_failure)?;
        let region = regions
            .iter()
            .find(|region| {
                region.start_key.as_slice() <= row
                    && (region.end_key.is_empty() || row < region.end_key.as_slice())
            })
            .ok_or_else(not_found)?;
        Ok(Outcome::Region(region_info(table.name(), region)))
    }
}

/// The failure for a scanner id this connection does not have.
fn unknown_scanner(id: i32, idle_timeout: Duration) -> Failure {
    Failure::IllegalArgument(format!(
        "scanner ID is invalid: scanner {id} is not open on this connection (never opened \
         here, closed, or closed after {} s without use)",
        idle_timeout.as_secs()
    ))
}

fn region_info(table: &str, region: &strata::RegionInfo) -> TRegionInfo {
    TRegionInfo {
        start_key: Some(region.start_key.clone()),
        end_key: Some(region.end_key.clone()),
        id: Some(region.id as i64),
        name: Some(region_name(table, &region.start_key, region.id)),
        version: Some(REGION_INFO_VERSION),
        server_name: Some(SERVER_NAME.as_bytes().to_vec()),
        port: Some(0),
    }
}

/// A family's `ColumnDescriptor` (name with its colon, as HBase sends it).
fn column_descriptor(family: &FamilyDescriptor) -> ColumnDescriptor {
    let time_to_live = family.get_ttl().map_or(TTL_FOREVER_SECONDS, |ttl| {
        i32::try_from(ttl.as_secs()).unwrap_or(TTL_FOREVER_SECONDS)
    });
    ColumnDescriptor {
        name: Some(column_key(family.name().as_bytes(), b"")),
        max_versions: Some(i32::try_from(family.get_max_versions()).unwrap_or(i32::MAX)),
        compression: Some(family.get_compression().name().to_owned()),
        in_memory: Some(family.is_in_memory()),
        bloom_filter_type: Some(family.get_bloom().name().to_owned()),
        bloom_filter_vector_size: Some(0),
        bloom_filter_nb_hashes: Some(0),
        block_cache_enabled: Some(family.is_block_cache_enabled()),
        time_to_live: Some(time_to_live),
    }
}

/// A family from a `ColumnDescriptor`, with the IDL's defaults for what is not sent (as HBase's
/// `ThriftUtilities.colDescFromThrift`: three versions, no compression, no bloom filter, no
/// block cache, no TTL).
fn family_descriptor(column: ColumnDescriptor) -> Result<FamilyDescriptor, Failure> {
    let name = column.name.unwrap_or_default();
    let family = match ColumnName::parse(&name) {
        ColumnName::Family(family) | ColumnName::Column(family, _) => family,
    };
    if family.is_empty() {
        return Err(Failure::IllegalArgument("column name is empty".to_owned()));
    }
    let family = std::str::from_utf8(family).map_err(|_| {
        Failure::IllegalArgument(format!(
            "family name {} is not UTF-8",
            String::from_utf8_lossy(family)
        ))
    })?;
    let versions = column.max_versions.unwrap_or(DEFAULT_MAX_VERSIONS);
    let versions = u32::try_from(versions)
        .ok()
        .filter(|&versions| versions > 0)
        .ok_or_else(|| {
            Failure::IllegalArgument(format!(
                "Maximum versions must be positive: {versions} for family {family}"
            ))
        })?;
    let compression = column.compression.unwrap_or_else(|| "NONE".to_owned());
    let compression = CompressionName::from_name(&compression).ok_or_else(|| {
        Failure::IllegalArgument(format!(
            "compression {} is not available in strata ({})",
            compression.to_ascii_uppercase(),
            one_of(CompressionName::NAMES)
        ))
    })?;
    let bloom = column
        .bloom_filter_type
        .unwrap_or_else(|| "NONE".to_owned());
    let bloom = bloom_type(&bloom).ok_or_else(|| {
        Failure::IllegalArgument(format!(
            "bloom filter type {} is not available in strata ({})",
            bloom.to_ascii_uppercase(),
            one_of(BLOOM_FILTER_NAMES)
        ))
    })?;
    let ttl_seconds = column.time_to_live.unwrap_or(TTL_FOREVER_SECONDS);
    let mut descriptor = FamilyDescriptor::new(family)
        .max_versions(versions)
        .compression(compression.compression(Compression::None))
        .bloom(bloom)
        .in_memory(column.in_memory.unwrap_or(false))
        .block_cache(column.block_cache_enabled.unwrap_or(false));
    descriptor = if ttl_seconds > 0 && ttl_seconds != TTL_FOREVER_SECONDS {
        descriptor.ttl(Duration::from_secs(ttl_seconds as u64))
    } else {
        descriptor.no_ttl()
    };
    Ok(descriptor)
}

/// `A, B or C`: the choices an `IllegalArgument` message lists.
fn one_of(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata::BloomType;

    #[test]
    fn columns_split_at_the_first_colon() {
        assert_eq!(ColumnName::parse(b"cf"), ColumnName::Family(b"cf"));
        assert_eq!(ColumnName::parse(b"cf:"), ColumnName::Column(b"cf", b""));
        assert_eq!(
            ColumnName::parse(b"cf:a:b"),
            ColumnName::Column(b"cf", b"a:b")
        );
        assert_eq!(ColumnName::parse(b""), ColumnName::Family(b""));
        assert_eq!(ColumnName::Family(b"cf").cell(), (&b"cf"[..], &b""[..]));
    }

    #[test]
    fn region_names_parse_back() {
        let name = region_name("t", b"a,b", 42);
        assert_eq!(name, b"t,a,b,42");
        assert_eq!(parse_region_name(&name), Some(("t", 42)));
        assert_eq!(parse_region_name(b"t,,7.abcdef."), Some(("t", 7)));
        assert_eq!(parse_region_name(b"t"), None);
        assert_eq!(parse_region_name(b"t,x"), None);
    }

    #[test]
    fn column_descriptors_take_the_idl_defaults() {
        let family = family_descriptor(ColumnDescriptor {
            name: Some(b"cf:".to_vec()),
            ..ColumnDescriptor::default()
        })
        .unwrap();
        assert_eq!(family.name(), "cf");
        assert_eq!(family.get_max_versions(), 3);
        assert_eq!(family.get_compression(), Compression::None);
        assert_eq!(family.get_bloom(), BloomType::None);
        assert!(!family.is_block_cache_enabled());
        assert_eq!(family.get_ttl(), None);
        let back = column_descriptor(&family);
        assert_eq!(back.name.as_deref(), Some(&b"cf:"[..]));
        assert_eq!(back.time_to_live, Some(TTL_FOREVER_SECONDS));
        let with_ttl = family_descriptor(ColumnDescriptor {
            name: Some(b"f".to_vec()),
            time_to_live: Some(60),
            compression: Some("zstd".into()),
            ..ColumnDescriptor::default()
        })
        .unwrap();
        assert_eq!(with_ttl.get_ttl(), Some(Duration::from_secs(60)));
        assert_eq!(column_descriptor(&with_ttl).time_to_live, Some(60));
        for (name, compression) in [
            ("snappy", Compression::Snappy),
            ("LZ4", Compression::Lz4),
            ("GZ", Compression::Gz),
        ] {
            let family = family_descriptor(ColumnDescriptor {
                name: Some(b"f".to_vec()),
                compression: Some(name.into()),
                ..ColumnDescriptor::default()
            })
            .unwrap();
            assert_eq!(family.get_compression(), compression);
            assert_eq!(
                column_descriptor(&family).compression.as_deref(),
                Some(compression.name())
            );
        }
        assert!(matches!(
            family_descriptor(ColumnDescriptor {
                name: Some(b"f".to_vec()),
                compression: Some("LZO".into()),
                ..ColumnDescriptor::default()
            }),
            Err(Failure::IllegalArgument(message)) if message.contains("LZO")
        ));
        assert!(matches!(
            family_descriptor(ColumnDescriptor {
                name: Some(b"f".to_vec()),
                max_versions: Some(0),
                ..ColumnDescriptor::default()
            }),
            Err(Failure::IllegalArgument(_))
        ));
        assert!(matches!(
            family_descriptor(ColumnDescriptor::default()),
            Err(Failure::IllegalArgument(_))
        ));
    }
}
