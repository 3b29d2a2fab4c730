//! The reads and writes: `put`, `get`, `scan`, `count`, `delete`, `deleteall`, `incr`,
//! `get_counter`, `append`.

use super::policy;
use crate::shell::args::{Context, Options, mutation_column, read_columns, split_column};
use crate::shell::ast::{Value, ValueKind};
use crate::shell::bytes::Formatter;
use crate::shell::command::{
    Append, CellColumn, ColumnSpec, Count, DEFAULT_COUNT_INTERVAL_ROWS, Delete, DeleteAll,
    DeleteColumn, Get, GetCounter, Incr, Put, RowSelector, Scan, ScanSpec, TimeFilter,
};
use crate::shell::error::{ArgumentErrorKind, Arity, ShellError};

/// Keys of read options (`get`, `scan`, `count`) that only tune caching, RPCs or metrics.
const READ_IGNORED: &[&str] = &[
    "CACHE_BLOCKS",
    "CACHE",
    "CONSISTENCY",
    "REGION_REPLICA_ID",
    "ISOLATION_LEVEL",
    "READ_TYPE",
    "ALLOW_PARTIAL_RESULTS",
    "MAX_RESULT_SIZE",
    "ATTRIBUTES",
    "ALL_METRICS",
    "METRICS",
];

/// Keys of read options that strata cannot honour.
const READ_UNSUPPORTED: &[&str] = &["AUTHORIZATIONS"];

/// Keys of the trailing options of mutations.
const MUTATION_IGNORED: &[&str] = &["ATTRIBUTES"];
const MUTATION_UNSUPPORTED: &[&str] = &["VISIBILITY", "TTL"];

/// A timestamp argument of a mutation: an integer, or `nil`/a hash (HBase then uses the
/// current time and reads the hash as options).
fn mutation_timestamp<'a>(
    context: &Context<'_>,
    value: Option<&'a Value>,
) -> Result<(Option<i64>, Option<&'a Value>), ShellError> {
    match value {
        None
        | Some(Value {
            kind: ValueKind::Nil,
            ..
        }) => Ok((None, None)),
        Some(
            hash @ Value {
                kind: ValueKind::Hash(_),
                ..
            },
        ) => Ok((None, Some(hash))),
        Some(value) => Ok((Some(context.timestamp(value, "timestamp")?), None)),
    }
}

/// The trailing options hash of a mutation: attributes are ignored, visibility labels and
/// per-cell TTLs are refused.
fn mutation_options(context: &mut Context<'_>, value: Option<&Value>) -> Result<(), ShellError> {
    let Some(value) = value.filter(|value| value.kind != ValueKind::Nil) else {
        return Ok(());
    };
    if !matches!(value.kind, ValueKind::Hash(_)) {
        return Err(context.wrong_type(value, "options", "a Hash", &value.kind));
    }
    let hash = context.options(value)?;
    context.finish(hash, &policy(MUTATION_IGNORED, MUTATION_UNSUPPORTED))
}

pub(super) fn put(context: &mut Context<'_>) -> Result<Put, ShellError> {
    context.arity(Arity::Between(4, 6))?;
    let table = context.table(context.arg(0))?;
    let row = context.row(context.arg(1))?;
    let column = mutation_column(context, context.arg(2))?;
    let value = context.scalar_bytes(context.arg(3), "value")?;
    let (timestamp, options) = mutation_timestamp(context, context.args().get(4))?;
    mutation_options(context, options)?;
    mutation_options(context, context.args().get(5))?;
    Ok(Put {
        table,
        row,
        column,
        value,
        timestamp,
    })
}

pub(super) fn get(context: &mut Context<'_>) -> Result<Get, ShellError> {
    context.arity(Arity::AtLeast(2))?;
    let table = context.table(context.arg(0))?;
    let row = context.row(context.arg(1))?;
    let extra = context.args().get(2..).unwrap_or(&[]);
    let mut get = Get {
        table,
        row,
        columns: Vec::new(),
        time: None,
        versions: None,
        filter: None,
        formatter: None,
        max_length: None,
    };
    match extra {
        [] => {}
        [
            options @ Value {
                kind: ValueKind::Hash(_),
                ..
            },
        ] => {
            let columns_error = ArgumentErrorKind::GetColumnsType {
                options: get_options_inspect(options),
            };
            let mut hash = context.options(options)?;
            let read = read_options(context, &mut hash, columns_error)?;
            get.columns = read.columns;
            get.time = read.time;
            get.versions = read.versions;
            get.filter = read.filter;
            get.formatter = read.formatter;
            get.max_length = read.max_length;
            context.finish(hash, &policy(READ_IGNORED, READ_UNSUPPORTED))?;
        }
        [
            Value {
                kind: ValueKind::Hash(_),
                ..
            },
            more,
            ..,
        ] => {
            return Err(context.error(
                ArgumentErrorKind::WrongNumberOfArguments {
                    given: context.args().len(),
                    expected: Arity::Between(2, 3),
                },
                more.span,
            ));
        }
        columns => {
            for column in columns {
                get.columns.extend(read_columns(context, column, "column")?);
            }
        }
    }
    Ok(get)
}

/// The options hash as HBase's `get` shows it in its column error: after it took out the
/// keys it handles before looking at the columns.
fn get_options_inspect(options: &Value) -> String {
    const TAKEN_OUT: &[&str] = &["MAXLENGTH", "FILTER", "CONSISTENCY", "REGION_REPLICA_ID"];
    match &options.kind {
        ValueKind::Hash(pairs) => ValueKind::Hash(
            pairs
                .iter()
                .filter(|(key, _)| !TAKEN_OUT.contains(&crate::shell::args::key_name(key).as_str()))
                .cloned()
                .collect(),
        )
        .inspect(),
        other => other.inspect(),
    }
}

/// The options `get` and `scan` share.
struct ReadOptions {
    columns: Vec<ColumnSpec>,
    time: Option<TimeFilter>,
    versions: Option<u32>,
    filter: Option<Vec<u8>>,
    formatter: Option<Formatter>,
    max_length: Option<usize>,
}

/// `columns_error` is what a `COLUMN(S)` value that is neither a String nor an Array is:
/// HBase's `get` and `scan` word it differently.
fn read_options(
    context: &mut Context<'_>,
    hash: &mut Options<'_>,
    columns_error: ArgumentErrorKind,
) -> Result<ReadOptions, ShellError> {
    let column = hash.take_entry("COLUMN");
    let columns = hash.take_entry("COLUMNS");
    let column_value = match (column, columns) {
        (Some(_), Some((_, both))) => {
            return Err(context.error(
                ArgumentErrorKind::Conflict {
                    first: "COLUMN",
                    second: "COLUMNS",
                },
                both.span,
            ));
        }
        (Some((_, value)), None) | (None, Some((_, value))) => Some(value),
        (None, None) => None,
    };
    let columns = match column_value {
        Some(
            value @ Value {
                kind: ValueKind::Str(_) | ValueKind::Const(_) | ValueKind::Array(_),
                ..
            },
        ) => read_columns(context, value, "COLUMNS")?,
        Some(value) => return Err(context.error(columns_error, value.span)),
        None => Vec::new(),
    };
    let timestamp = hash.take("TIMESTAMP");
    let range = hash.take("TIMERANGE");
    let time = match (timestamp, range) {
        (Some(_), Some(range)) => {
            return Err(context.error(
                ArgumentErrorKind::Conflict {
                    first: "TIMESTAMP",
                    second: "TIMERANGE",
                },
                range.span,
            ));
        }
        (Some(timestamp), None) => Some(TimeFilter::At(context.timestamp(timestamp, "TIMESTAMP")?)),
        (None, Some(range)) => Some(time_range(context, range)?),
        (None, None) => None,
    };
    let versions = match hash.take("VERSIONS") {
        Some(value) => Some(context.lenient_u32(value, "VERSIONS", 1)?),
        None => None,
    };
    let filter = match hash.take("FILTER") {
        Some(
            value @ Value {
                kind: ValueKind::Str(bytes),
                ..
            },
        ) => {
            if bytes.iter().all(u8::is_ascii_whitespace) {
                return Err(context.error(ArgumentErrorKind::Empty { what: "FILTER" }, value.span));
            }
            Some(bytes.clone())
        }
        Some(value) => {
            return Err(context.wrong_type(value, "FILTER", "a filter String", &value.kind));
        }
        None => None,
    };
    let formatter = match hash.take("FORMATTER") {
        Some(value) => {
            let name = context.utf8(value, "FORMATTER")?;
            Some(Formatter::parse(&name).ok_or_else(|| {
                context.error(
                    ArgumentErrorKind::UnknownFormatter { formatter: name },
                    value.span,
                )
            })?)
        }
        None => None,
    };
    if let Some(value) = hash.take("FORMATTER_CLASS") {
        let class = context.utf8(value, "FORMATTER_CLASS")?;
        if class != "org.apache.hadoop.hbase.util.Bytes" {
            return Err(context.error(
                ArgumentErrorKind::UnknownFormatter { formatter: class },
                value.span,
            ));
        }
    }
    let max_length = match hash.take("MAXLENGTH") {
        Some(value) => {
            Some(usize::try_from(context.positive_u64(value, "MAXLENGTH")?).unwrap_or(usize::MAX))
        }
        None => None,
    };
    Ok(ReadOptions {
        columns,
        time,
        versions,
        filter,
        formatter,
        max_length,
    })
}

/// `TIMERANGE => [min, max]`, checked as HBase's `TimeRange` checks it.
fn time_range(context: &Context<'_>, value: &Value) -> Result<TimeFilter, ShellError> {
    let bounds = match &value.kind {
        ValueKind::Array(items) => match items.as_slice() {
            [
                Value {
                    kind: ValueKind::Int(min),
                    ..
                },
                Value {
                    kind: ValueKind::Int(max),
                    ..
                },
            ] => Some((*min, *max)),
            _ => None,
        },
        _ => None,
    };
    let Some((min, max)) = bounds else {
        return Err(context.wrong_type(
            value,
            "TIMERANGE",
            "an Array of two Integers [min, max]",
            &value.kind,
        ));
    };
    if min < 0 || max < 0 {
        return Err(context.error(
            ArgumentErrorKind::NegativeTimeRange { min, max },
            value.span,
        ));
    }
    if max < min {
        return Err(context.error(
            ArgumentErrorKind::InvertedTimeRange { min, max },
            value.span,
        ));
    }
    Ok(TimeFilter::Range { min, max })
}

fn scan_spec(context: &mut Context<'_>, hash: &mut Options<'_>) -> Result<ScanSpec, ShellError> {
    let read = read_options(context, hash, ArgumentErrorKind::ScanColumnsType)?;
    let mut spec = ScanSpec {
        columns: read.columns,
        time: read.time,
        versions: read.versions,
        filter: read.filter,
        formatter: read.formatter,
        max_length: read.max_length,
        ..ScanSpec::default()
    };
    let start = hash.take_entry("STARTROW");
    let stop = hash.take_entry("STOPROW");
    if let Some((_, value)) = hash.take_entry("ROWPREFIXFILTER") {
        if let Some((key, _)) = start.or(stop) {
            let first = if key == "STARTROW" {
                "STARTROW"
            } else {
                "STOPROW"
            };
            return Err(context.error(
                ArgumentErrorKind::Conflict {
                    first: "ROWPREFIXFILTER",
                    second: first,
                },
                value.span,
            ));
        }
        spec.row_prefix = Some(context.row_bound(value, "ROWPREFIXFILTER")?);
    }
    if let Some((_, value)) = start {
        spec.start_row = Some(context.row_bound(value, "STARTROW")?);
    }
    if let Some((_, value)) = stop {
        spec.stop_row = Some(context.row_bound(value, "STOPROW")?);
    }
    if let Some(value) = hash.take("LIMIT") {
        // HBase applies a limit only when it is above zero (`limit > 0 && count >= limit`):
        // `LIMIT => 0`, or a negative limit, returns every row.
        spec.limit = match value.kind {
            ValueKind::Int(limit) if limit <= 0 => None,
            _ => Some(context.positive_u64(value, "LIMIT")?),
        };
    }
    if let Some(value) = hash.take("BATCH") {
        spec.batch = Some(context.lenient_u32(value, "BATCH", 1)?);
    }
    if let Some(value) = hash.take("REVERSED") {
        spec.reversed = context.lenient_bool(value, "REVERSED")?;
    }
    if let Some(value) = hash.take("RAW") {
        spec.raw = context.lenient_bool(value, "RAW")?;
    }
    Ok(spec)
}

pub(super) fn scan(context: &mut Context<'_>) -> Result<Scan, ShellError> {
    context.arity(Arity::Between(1, 2))?;
    let table = context.table(context.arg(0))?;
    let spec = match context.args().get(1) {
        None => ScanSpec::default(),
        Some(
            value @ Value {
                kind: ValueKind::Hash(_),
                ..
            },
        ) => {
            let mut hash = context.options(value)?;
            let spec = scan_spec(context, &mut hash)?;
            context.finish(hash, &policy(READ_IGNORED, READ_UNSUPPORTED))?;
            spec
        }
        Some(value) => {
            return Err(context.wrong_type(value, "scan options", "a Hash", &value.kind));
        }
    };
    Ok(Scan { table, spec })
}

pub(super) fn count(context: &mut Context<'_>) -> Result<Count, ShellError> {
    context.arity(Arity::Between(1, 2))?;
    let table = context.table(context.arg(0))?;
    let mut count = Count {
        table,
        interval_rows: DEFAULT_COUNT_INTERVAL_ROWS,
        spec: ScanSpec::default(),
    };
    match context.args().get(1) {
        None => {}
        // The old form: `count 't', 10000` is the interval.
        Some(
            value @ Value {
                kind: ValueKind::Int(_),
                ..
            },
        ) => {
            count.interval_rows = context.positive_u64(value, "INTERVAL")?;
        }
        Some(
            value @ Value {
                kind: ValueKind::Hash(_),
                ..
            },
        ) => {
            let mut hash = context.options(value)?;
            if let Some(interval) = hash.take("INTERVAL") {
                count.interval_rows = context.positive_u64(interval, "INTERVAL")?;
            }
            count.spec = scan_spec(context, &mut hash)?;
            context.finish(hash, &policy(READ_IGNORED, READ_UNSUPPORTED))?;
        }
        Some(value) => {
            return Err(context.wrong_type(
                value,
                "count options",
                "a Hash or an Integer interval",
                &value.kind,
            ));
        }
    }
    Ok(count)
}

/// A delete's column argument: `'f:q'` or `'f'`.
fn delete_column(context: &Context<'_>, value: &Value) -> Result<DeleteColumn, ShellError> {
    let (family, qualifier) = split_column(context, value)?;
    Ok(DeleteColumn { family, qualifier })
}

pub(super) fn delete(context: &mut Context<'_>) -> Result<Delete, ShellError> {
    context.arity(Arity::Between(3, 5))?;
    let table = context.table(context.arg(0))?;
    let row = context.row(context.arg(1))?;
    let column = delete_column(context, context.arg(2))?;
    let (timestamp, options) = mutation_timestamp(context, context.args().get(3))?;
    mutation_options(context, options)?;
    mutation_options(context, context.args().get(4))?;
    Ok(Delete {
        table,
        row,
        column,
        timestamp,
    })
}

pub(super) fn delete_all(context: &mut Context<'_>) -> Result<DeleteAll, ShellError> {
    context.arity(Arity::Between(2, 5))?;
    let table = context.table(context.arg(0))?;
    let selector = context.arg(1);
    let rows = match &selector.kind {
        ValueKind::Hash(_) => {
            let mut hash = context.options(selector)?;
            let Some(prefix) = hash.take("ROWPREFIXFILTER") else {
                return Err(context.error(
                    ArgumentErrorKind::MissingOption {
                        key: "ROWPREFIXFILTER",
                    },
                    selector.span,
                ));
            };
            let prefix = context.row_bound(prefix, "ROWPREFIXFILTER")?;
            context.finish(hash, &policy(&["CACHE"], &[]))?;
            RowSelector::Prefix(prefix)
        }
        _ => RowSelector::Row(context.row(selector)?),
    };
    // `nil` or '' as the column means the whole row (HBase: `if column != ""`).
    let column = match context.args().get(2) {
        None
        | Some(Value {
            kind: ValueKind::Nil,
            ..
        }) => None,
        Some(Value {
            kind: ValueKind::Str(bytes),
            ..
        }) if bytes.is_empty() => None,
        Some(value) => Some(delete_column(context, value)?),
    };
    let (timestamp, options) = mutation_timestamp(context, context.args().get(3))?;
    mutation_options(context, options)?;
    mutation_options(context, context.args().get(4))?;
    Ok(DeleteAll {
        table,
        rows,
        column,
        timestamp,
    })
}

pub(super) fn incr(context: &mut Context<'_>) -> Result<Incr, ShellError> {
    context.arity(Arity::Between(3, 5))?;
    let table = context.table(context.arg(0))?;
    let row = context.row(context.arg(1))?;
    let column = mutation_column(context, context.arg(2))?;
    let (amount, options) = match context.args().get(3) {
        None
        | Some(Value {
            kind: ValueKind::Nil,
            ..
        }) => (1, None),
        Some(
            hash @ Value {
                kind: ValueKind::Hash(_),
                ..
            },
        ) => (1, Some(hash)),
        Some(Value {
            kind: ValueKind::Int(amount),
            ..
        }) => (*amount, None),
        Some(value) => {
            return Err(context.wrong_type(value, "increment", "an Integer", &value.kind));
        }
    };
    mutation_options(context, options)?;
    mutation_options(context, context.args().get(4))?;
    Ok(Incr {
        table,
        row,
        column,
        amount,
    })
}

pub(super) fn get_counter(context: &mut Context<'_>) -> Result<GetCounter, ShellError> {
    context.arity(Arity::Exactly(3))?;
    let table = context.table(context.arg(0))?;
    let row = context.row(context.arg(1))?;
    let column: CellColumn = mutation_column(context, context.arg(2))?;
    Ok(GetCounter { table, row, column })
}

pub(super) fn append(context: &mut Context<'_>) -> Result<Append, ShellError> {
    context.arity(Arity::Between(4, 5))?;
    let table = context.table(context.arg(0))?;
    let row = context.row(context.arg(1))?;
    let column = mutation_column(context, context.arg(2))?;
    let value = context.scalar_bytes(context.arg(3), "value")?;
    mutation_options(context, context.args().get(4))?;
    Ok(Append {
        table,
        row,
        column,
        value,
    })
}
