//! The syntax layer of `strata shell`: HBase shell command lines to typed [`Command`]s, and
//! the output helpers that need no engine.
//!
//! # Reading input
//!
//! * [`parse_script`] parses a whole input (a line typed, a `-e` argument, a script read
//!   from stdin) into one result per statement. An error in one statement does not stop the
//!   others. [`parse_source`] does the same for input read as bytes ([`SourceText`]): a
//!   statement holding bytes that are not UTF-8 fails, the others run.
//! * [`needs_more_input`] tells an interactive shell that the text typed so far is an
//!   unfinished statement (open quote or bracket, trailing `,`, `=>` or `\`), so it should
//!   read another line before parsing.
//! * [`parse_calls`] and [`Command::from_call`] are the two halves of [`parse_script`], for
//!   tools that want the untyped form.
//!
//! # Supported syntax
//!
//! The HBase shell is JRuby's IRB with HBase commands defined as methods. This shell accepts
//! the part of Ruby people type at it:
//!
//! * **Statements**: `command arg, arg, ...` or `command(arg, ...)`. Statements end at a
//!   newline or `;`. A statement continues on the next line while a `(`, `[` or `{` is open,
//!   after a trailing `,`, `=>` or `.`, and after a `\` at the end of a line. `#` starts a
//!   comment (outside strings).
//! * **Strings**: `'...'` is literal except `\'` and `\\`. `"..."` has Ruby's escapes: `\n`
//!   `\t` `\r` `\0` `\a` `\b` `\e` `\s` `\v` `\f` `\\` `\"`, `\xH`/`\xHH`, octal `\NNN`,
//!   `\uXXXX` and `\u{X ...}` (UTF-8), backslash-newline (removed); an unknown escape keeps
//!   the character (`\q` is `q`). Double-quoted strings yield bytes, not necessarily UTF-8:
//!   `"\xff"` is the byte 0xFF. Strings may span lines. Adjacent literals concatenate.
//!   The input itself is UTF-8: a statement with other bytes anywhere in it, even in a
//!   comment, is a syntax error (Ruby's `invalid multibyte char (UTF-8)`).
//! * **Numbers**: integers with `_` separators, a sign, and `0x`/`0b`/`0o`/`0d` or
//!   leading-zero octal prefixes, within Java's `long`; floats like `1.5`, `-2e3`.
//! * **Other values**: `true`, `false`, `nil`; constants (`VERSIONS`, `NAME`, any name
//!   starting with an uppercase letter) which, as in HBase, stand for their own name as a
//!   string; `[a, b]` arrays; `{KEY => value}` hashes whose keys are constants or strings.
//!   Trailing bare `KEY => value` arguments form one hash, as in Ruby
//!   (`alter 't', NAME => 'f', VERSIONS => 5`).
//! * **Method calls**: only `Bytes.toBytes(x)` (string: its bytes; integer: 8 bytes
//!   big-endian; float: 8-byte IEEE 754; boolean: one byte) and `Bytes.toBytesBinary('\x00a')`,
//!   also with the `org.apache.hadoop.hbase.util.` prefix. They evaluate to byte strings.
//!   Values may also be followed by `.to_java_bytes` or `.to_s` (no change, except that
//!   `5.to_s` is the string `"5"`).
//! * **Nesting**: arrays, hashes and method calls nest at most [`MAX_NESTING_DEPTH`] (32)
//!   levels deep, counted together; deeper input is a syntax error, not a stack overflow.
//!
//! * **Table references**: `t = get_table 't'` or `t = create 't', 'f'` assigns a table
//!   reference; `t.put 'r', 'f:q', 'v'` runs a command on it ([`TABLE_METHODS`]); `t` alone
//!   echoes it. The call is kept as [`Command::TableMethod`] (or [`Command::Variable`]) and
//!   resolved when it runs ([`resolve_table_method`]), since an earlier statement of the same
//!   input may assign the variable.
//!
//! Not supported, each with a specific error: other variables (`x = list`), symbols
//! (`:name`), `KEY: value` hash labels, string interpolation (`"#{...}"`), other method calls
//! (`Time.now`, `[1].pack('N')`, Java filter objects such as `PrefixFilter.new(...)`) and
//! operators.
//!
//! # Commands
//!
//! create, list, exists, describe (desc), put, get, scan, count, delete, deleteall, incr,
//! get_counter, append, truncate, truncate_preserve, disable, enable, is_enabled,
//! is_disabled, drop, alter, flush, compact, major_compact, split, list_regions, get_splits,
//! get_table, list_namespace, create_namespace, describe_namespace, drop_namespace,
//! list_namespace_tables, snapshot, list_snapshots, clone_snapshot, restore_snapshot,
//! delete_snapshot, backup (strata's own), whoami, status, version, help, exit (quit), with HBase 2.x's
//! argument forms; see [`Command`] and
//! [`help_text`]. Argument errors use HBase's messages where it has one
//! (`wrong number of arguments (given 1, expected 2+)`, `Table must have at least one column
//! family`, `BloomFilter type FOO is not supported. Use one of NONE ROW ROWCOL`).
//!
//! # Deliberate differences from HBase
//!
//! * Option keys are checked: keys HBase knows that make no difference to strata (caching
//!   hints, replication, encodings...) and unknown keys give a [`Warning`] (HBase prints
//!   similar warnings for some and silently ignores others); keys that would change results
//!   in ways strata does not implement (`IS_MOB`, `ENCRYPTION`, `VISIBILITY`,
//!   `AUTHORIZATIONS`, per-cell `TTL`, `READONLY`) are errors.
//! * Options HBase would silently let override each other are errors: `TIMESTAMP` with
//!   `TIMERANGE`, `ROWPREFIXFILTER` with `STARTROW`/`STOPROW`, `COLUMN` with `COLUMNS`,
//!   `SPLITS` with `NUMREGIONS` or `SALT_BUCKETS`.
//! * `get 't', 'r', {VERSIONS => 3}` (options without columns or time range) is accepted;
//!   HBase rejects it.
//! * Every constant evaluates to its name; HBase raises `NameError` for undefined ones.
//! * `Bytes.toBytes(...)` values are used as bytes. (In HBase, `put` would store the Java
//!   array's `toString`.)
//! * In `'f:q:X'` columns of `get`/`scan`, `X` is a formatter only when it names one;
//!   otherwise it stays in the qualifier (HBase always cuts it off).
//! * `SALT_BUCKETS => n` in `create` is a strata extension.
//! * `create_namespace` takes no properties (strata keeps no namespace configuration).

mod args;
mod ast;
mod bytes;
mod command;
mod convert;
mod error;
mod help;
mod lexer;
mod parser;
mod render;
mod source;
mod span;

pub use ast::{Call, Value, ValueKind, inspect_bytes, ruby_float_to_s};
pub use bytes::{
    FormatError, Formatter, java_double_to_string, java_float_to_string, to_bytes_binary,
    to_bytes_double, to_bytes_long, to_string_binary,
};
pub use command::{
    Alter, AlterChange, Append, BloomFilter, CellColumn, ColumnSpec, Command, Compression, Count,
    CreateTable, DEFAULT_COUNT_INTERVAL_ROWS, Delete, DeleteAll, DeleteColumn, Durability,
    FamilySetting, FamilySpec, Get, GetCounter, Incr, KeepDeletedCells, ListRegions,
    MAJOR_COMPACTION_JITTER_KEY, MAJOR_COMPACTION_KEY, MAX_PRESPLIT_REGIONS, Maintenance, PreSplit,
    Put, RegionColumn, RowSelector, Scan, ScanSpec, Split, SplitAlgorithm, StatusFormat,
    TableOptionKey, TableOptions, TimeFilter, Ttl, split_keys_from_file,
};
pub use error::{
    ArgumentError, ArgumentErrorKind, ArgumentScope, Arity, Expected, NameError, NameErrorKind,
    ShellError, SyntaxError, SyntaxErrorKind, UnsupportedSyntax, Warning,
};
pub use help::{COMMAND_GROUPS, group_help, help_overview, help_text};
pub use parser::{MAX_NESTING_DEPTH, needs_more_input, parse_calls};
pub use render::{
    CellKind, TableLayout, TimestampFormat, cell_text, column_text, counter_line, descriptor_text,
    format_timestamp, format_ttl, list_result_line, region_table, row_count_line, ruby_time_text,
    took_line,
};
pub use source::SourceText;
pub use span::{Position, Span};

/// The commands a table reference takes (`t.put ...`): HBase's `Hbase::Table` shell commands
/// and admin utilities that strata has.
pub const TABLE_METHODS: &[&str] = &[
    "put",
    "get",
    "scan",
    "count",
    "delete",
    "deleteall",
    "incr",
    "get_counter",
    "append",
    "get_splits",
    "describe",
    "disable",
    "enable",
    "drop",
    "flush",
];

/// Resolves `t.method args` once the variable's table is known: `method table, args`, checked
/// like any statement. Errors: the method is no table method.
pub fn resolve_table_method(
    call: &Call,
    table: &str,
    source: &str,
) -> Result<Statement, ShellError> {
    if !TABLE_METHODS.contains(&call.name.as_str()) {
        return Err(NameError::new(
            &call.name,
            NameErrorKind::UndefinedTableMethod,
            call.name_span,
            source,
        )
        .into());
    }
    let table_span = call
        .receiver
        .as_ref()
        .map_or(call.name_span, |(_, span)| *span);
    let mut args = vec![Value {
        kind: ValueKind::Str(table.as_bytes().to_vec()),
        span: table_span,
    }];
    args.extend(call.args.iter().cloned());
    let resolved = Call {
        name: call.name.clone(),
        name_span: call.name_span,
        args,
        span: call.span,
        receiver: None,
        assign_to: None,
    };
    Command::from_call(&resolved, source)
}

/// One parsed statement: its command, the warnings its arguments raised (print them before
/// running it), and where it is in the input.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// The command.
    pub command: Command,
    /// Non-fatal remarks about the arguments, in HBase's wording.
    pub warnings: Vec<Warning>,
    /// The statement's bytes in the input.
    pub span: Span,
    /// `t = get_table 't'` (or `t = create ...`): the variable that holds the table reference
    /// once the command succeeded.
    pub assign_to: Option<String>,
}

impl Command {
    /// Validates a parsed statement against its command's signature. `source` is the text
    /// `call` was parsed from (for error positions).
    ///
    /// A call on a table reference (`t.put ...`) becomes [`Command::TableMethod`], resolved
    /// when it runs. Only commands that return a table reference (`get_table`, `create`) can
    /// be assigned to a variable.
    pub fn from_call(call: &Call, source: &str) -> Result<Statement, ShellError> {
        let unsupported_assignment = |span: Span| {
            ShellError::from(SyntaxError::new(
                SyntaxErrorKind::Unsupported(UnsupportedSyntax::Assignment),
                span,
                source,
            ))
        };
        if call.receiver.is_some() {
            if let Some((_, span)) = &call.assign_to {
                return Err(unsupported_assignment(*span));
            }
            return Ok(Statement {
                command: Command::TableMethod(Box::new(call.clone())),
                warnings: Vec::new(),
                span: call.span,
                assign_to: None,
            });
        }
        let (command, warnings) = convert::convert(call, source)?;
        let assign_to = match (&call.assign_to, &command) {
            (None, _) => None,
            (Some((name, _)), Command::GetTable { .. } | Command::Create(_)) => Some(name.clone()),
            (Some((_, span)), _) => return Err(unsupported_assignment(*span)),
        };
        Ok(Statement {
            command,
            warnings,
            span: call.span,
            assign_to,
        })
    }
}

/// Parses every statement of `source` (one line, a `-e` argument or a whole script) into a
/// typed command or the error that stops it. Blank lines and comments yield nothing.
pub fn parse_script(source: &str) -> Vec<Result<Statement, ShellError>> {
    parse_calls(source)
        .into_iter()
        .map(|call| call.and_then(|call| Command::from_call(&call, source)))
        .collect()
}

/// [`parse_script`] for input read as bytes: a statement holding bytes that were not UTF-8
/// is a [`SyntaxErrorKind::InvalidUtf8`] error at their line and column; the others parse as
/// usual. Spans refer to [`SourceText::text`].
pub fn parse_source(source: &SourceText) -> Vec<Result<Statement, ShellError>> {
    let text = source.text();
    parser::parse_calls_marked(text, source.invalid_utf8())
        .into_iter()
        .map(|call| call.and_then(|call| Command::from_call(&call, text)))
        .collect()
}

/// Parses `source`, which must hold exactly one statement.
pub fn parse_command(source: &str) -> Result<Statement, ShellError> {
    let mut statements = parse_script(source);
    match statements.len() {
        1 => statements.pop().unwrap_or_else(|| Err(empty_input(source))),
        0 => Err(empty_input(source)),
        _ => {
            let second = statements
                .get(1)
                .map_or(Span::at(source.len()), |statement| match statement {
                    Ok(statement) => statement.span,
                    Err(error) => error.span(),
                });
            Err(ShellError::from(SyntaxError::new(
                SyntaxErrorKind::Unexpected {
                    found: "another statement".to_owned(),
                    expected: Expected::EndOfInput,
                },
                second,
                source,
            )))
        }
    }
}

fn empty_input(source: &str) -> ShellError {
    ShellError::from(SyntaxError::new(
        SyntaxErrorKind::Unexpected {
            found: "end-of-input".to_owned(),
            expected: Expected::CommandName,
        },
        Span::at(source.len()),
        source,
    ))
}
