//! Typed errors of the shell's syntax layer, and warnings that do not stop a command.
//!
//! Three kinds of error, as the HBase shell (a JRuby IRB) reports them:
//!
//! * [`SyntaxError`]: the line is not valid shell syntax (unbalanced quotes, unclosed
//!   braces, unexpected tokens, bad escapes). Rendered like Ruby's `SyntaxError`, with the
//!   offending line and a caret under the position.
//! * [`NameError`]: an unknown command, or an unquoted name that Ruby would take for a
//!   variable (`create scores, grade`).
//! * [`ArgumentError`]: a known command got arguments it does not accept (wrong count, wrong
//!   type, invalid option value). Rendered as HBase prints them: `ERROR: ...`.
//!
//! Every error carries the byte [`Span`] it is about and the [`Position`] (line and column)
//! of the span's start.

use std::fmt;

use super::span::{Position, Span, line_text};

/// Any error the syntax layer reports for one statement.
#[derive(Debug, Clone, PartialEq)]
pub enum ShellError {
    /// The statement is not valid shell syntax.
    Syntax(Box<SyntaxError>),
    /// An unknown command or an unquoted name.
    Name(Box<NameError>),
    /// A known command with arguments it does not accept.
    Argument(Box<ArgumentError>),
}

impl ShellError {
    /// Where the error is.
    pub fn position(&self) -> Position {
        match self {
            ShellError::Syntax(error) => error.position,
            ShellError::Name(error) => error.position,
            ShellError::Argument(error) => error.position,
        }
    }

    /// The byte span the error is about.
    pub fn span(&self) -> Span {
        match self {
            ShellError::Syntax(error) => error.span,
            ShellError::Name(error) => error.span,
            ShellError::Argument(error) => error.span,
        }
    }

    /// The command the error belongs to, when it is known (its help text is worth showing).
    pub fn command(&self) -> Option<&'static str> {
        match self {
            ShellError::Argument(error) => Some(error.command),
            ShellError::Syntax(_) | ShellError::Name(_) => None,
        }
    }

    /// The error as the shell prints it. Syntax errors show the offending line of `source`
    /// (the text the statement was parsed from) with a caret under the position:
    ///
    /// ```text
    /// SyntaxError: (hbase):1: syntax error, unexpected ',', expecting a value
    /// put 't', , 'v'
    ///          ^
    /// ```
    ///
    /// Argument errors print as `ERROR: wrong number of arguments (given 1, expected 2+)`.
    pub fn render(&self, source: &str) -> String {
        match self {
            ShellError::Syntax(error) => {
                let line = line_text(source, error.span.start);
                let caret = caret_line(line, error.position.column);
                format!(
                    "SyntaxError: (hbase):{}: {}\n{}\n{}",
                    error.position.line, error.kind, line, caret
                )
            }
            ShellError::Name(error) => error.to_string(),
            ShellError::Argument(error) => format!("ERROR: {}", error.kind),
        }
    }
}

impl fmt::Display for ShellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShellError::Syntax(error) => error.fmt(f),
            ShellError::Name(error) => error.fmt(f),
            ShellError::Argument(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ShellError {}

impl From<SyntaxError> for ShellError {
    fn from(error: SyntaxError) -> ShellError {
        ShellError::Syntax(Box::new(error))
    }
}

impl From<NameError> for ShellError {
    fn from(error: NameError) -> ShellError {
        ShellError::Name(Box::new(error))
    }
}

impl From<ArgumentError> for ShellError {
    fn from(error: ArgumentError) -> ShellError {
        ShellError::Argument(Box::new(error))
    }
}

/// The spaces (tabs kept, so the caret lines up) and caret under 1-based `column` of `line`.
fn caret_line(line: &str, column: usize) -> String {
    let mut caret: String = line
        .chars()
        .take(column.saturating_sub(1))
        .map(|character| if character == '\t' { '\t' } else { ' ' })
        .collect();
    let missing = column
        .saturating_sub(1)
        .saturating_sub(caret.chars().count());
    caret.extend(std::iter::repeat_n(' ', missing));
    caret.push('^');
    caret
}

/// The input is not valid shell syntax.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    /// What is wrong.
    pub kind: SyntaxErrorKind,
    /// The bytes it is about.
    pub span: Span,
    /// Line and column of `span.start`.
    pub position: Position,
}

impl SyntaxError {
    pub(crate) fn new(kind: SyntaxErrorKind, span: Span, source: &str) -> SyntaxError {
        SyntaxError {
            kind,
            span,
            position: Position::locate(source, span.start),
        }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at {})", self.kind, self.position)
    }
}

impl std::error::Error for SyntaxError {}

/// The kinds of syntax error.
#[derive(Debug, Clone, PartialEq)]
pub enum SyntaxErrorKind {
    /// A quoted string has no closing quote before the end of the input. The position is the
    /// opening quote.
    UnterminatedString {
        /// `'` or `"`.
        quote: char,
    },
    /// A `(`, `[` or `{` is still open at the end of the input. The position is the opening
    /// bracket.
    UnclosedBracket {
        /// The opening bracket.
        open: char,
    },
    /// A token that cannot appear here.
    Unexpected {
        /// What was found, as Ruby names it (`','`, `end-of-input`, `string literal`...).
        found: String,
        /// What would have been valid.
        expected: Expected,
    },
    /// A backslash escape in a double-quoted string that Ruby rejects.
    InvalidEscape {
        /// The escape as written, for instance `\x` or `\u{110000}`.
        escape: String,
        /// Why it is invalid.
        reason: &'static str,
    },
    /// A malformed numeric literal.
    InvalidNumber {
        /// The literal as written.
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An integer literal that does not fit in a signed 64-bit integer (Java's `long`).
    IntegerOutOfRange {
        /// The literal as written.
        text: String,
    },
    /// Arrays, hashes and method calls nested deeper than the parser allows.
    TooDeep {
        /// The deepest nesting accepted.
        limit: usize,
    },
    /// Input bytes that are not UTF-8 (Ruby's "invalid multibyte char"). The position is
    /// the replacement character that stands for them.
    InvalidUtf8,
    /// A character that starts no token.
    UnexpectedCharacter {
        /// The character.
        character: char,
    },
    /// Valid Ruby that this shell deliberately does not evaluate.
    Unsupported(UnsupportedSyntax),
}

impl fmt::Display for SyntaxErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyntaxErrorKind::UnterminatedString { .. } => {
                f.write_str("unterminated string meets end of file")
            }
            SyntaxErrorKind::UnclosedBracket { open } => write!(
                f,
                "syntax error, unexpected end-of-input, expecting '{}' (to close the '{}' here)",
                closing_bracket(*open),
                open
            ),
            SyntaxErrorKind::Unexpected { found, expected } => {
                write!(f, "syntax error, unexpected {found}, expecting {expected}")
            }
            SyntaxErrorKind::InvalidEscape { escape, reason } => write!(f, "{reason}: {escape}"),
            SyntaxErrorKind::InvalidNumber { text, reason } => write!(f, "{reason}: {text}"),
            SyntaxErrorKind::IntegerOutOfRange { text } => write!(
                f,
                "integer {text} is out of range (integers are 64-bit signed, as Java's long)"
            ),
            SyntaxErrorKind::TooDeep { limit } => {
                write!(
                    f,
                    "arrays, hashes and method calls nest deeper than {limit} levels"
                )
            }
            SyntaxErrorKind::InvalidUtf8 => write!(
                f,
                "invalid multibyte char (UTF-8): write bytes that are not UTF-8 as \\xNN \
                 escapes in a double-quoted string, such as \"caf\\xE9\""
            ),
            SyntaxErrorKind::UnexpectedCharacter { character } => {
                write!(
                    f,
                    "syntax error, unexpected character {}",
                    describe_char(*character)
                )
            }
            SyntaxErrorKind::Unsupported(construct) => construct.fmt(f),
        }
    }
}

/// The closing bracket for an opening one.
pub(crate) fn closing_bracket(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        _ => '}',
    }
}

fn describe_char(character: char) -> String {
    if character.is_control() {
        format!("'\\x{:02X}'", u32::from(character))
    } else {
        format!("'{character}'")
    }
}

/// What the parser would have accepted where it found something else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// The start of a statement: a command name.
    CommandName,
    /// A value: string, number, `true`/`false`/`nil`, constant, `[array]` or `{hash}`.
    Value,
    /// A hash key (a string or a constant).
    HashKey,
    /// `=>` after a hash key.
    FatArrow,
    /// `,` between arguments, or the end of the statement (newline, `;`, end of input).
    ArgumentSeparator,
    /// `,` or the given closing bracket.
    CommaOrClose(char),
    /// Another `KEY => value` pair: once a bare `KEY => value` argument appears, all later
    /// arguments must be pairs too (Ruby collects them into one trailing hash).
    KeyValuePair,
    /// `(` opening the arguments of a method call.
    OpenParen,
    /// A method name after `.`.
    MethodName,
    /// Nothing more (the input was expected to hold a single statement).
    EndOfInput,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::CommandName => f.write_str("a command name"),
            Expected::Value => f.write_str("a value"),
            Expected::HashKey => f.write_str("a hash key"),
            Expected::FatArrow => f.write_str("'=>'"),
            Expected::ArgumentSeparator => f.write_str("',' or end of command"),
            Expected::CommaOrClose(close) => write!(f, "',' or '{close}'"),
            Expected::KeyValuePair => {
                f.write_str("KEY => value (bare KEY => value arguments must come last)")
            }
            Expected::OpenParen => f.write_str("'('"),
            Expected::MethodName => f.write_str("a method name"),
            Expected::EndOfInput => f.write_str("end-of-input"),
        }
    }
}

/// Ruby constructs that parse in IRB but that this shell does not evaluate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnsupportedSyntax {
    /// An assignment of anything but a table reference (`x = list`), or a chained one.
    Assignment,
    /// `:name`.
    Symbol,
    /// `{NAME: 'f'}`: Ruby 1.9 hash labels make symbol keys, which HBase does not read.
    LabelKey,
    /// `"row#{i}"`.
    Interpolation,
    /// A method call other than the supported `Bytes` conversions.
    MethodCall {
        /// The call as written, for instance `Time.now`.
        call: String,
    },
}

impl fmt::Display for UnsupportedSyntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnsupportedSyntax::Assignment => f.write_str(
                "assignment is only supported for table references: t = get_table 't' or \
                 t = create 't', 'f'",
            ),
            UnsupportedSyntax::Symbol => {
                f.write_str("symbols (:name) are not supported; quote names: 'name'")
            }
            UnsupportedSyntax::LabelKey => {
                f.write_str("`KEY: value` hash syntax is not supported; write KEY => value")
            }
            UnsupportedSyntax::Interpolation => {
                f.write_str("string interpolation #{...} is not supported")
            }
            UnsupportedSyntax::MethodCall { call } => write!(
                f,
                "method call {call} is not supported (only Bytes.toBytes(...), \
                 Bytes.toBytesBinary(...), .to_s and .to_java_bytes are evaluated)"
            ),
        }
    }
}

/// An unknown command, or a bare name where a value was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError {
    /// The name as written.
    pub name: String,
    /// What kind of name problem it is.
    pub kind: NameErrorKind,
    /// The bytes of the name.
    pub span: Span,
    /// Line and column of the name.
    pub position: Position,
}

impl NameError {
    pub(crate) fn new(name: &str, kind: NameErrorKind, span: Span, source: &str) -> NameError {
        NameError {
            name: name.to_owned(),
            kind,
            span,
            position: Position::locate(source, span.start),
        }
    }
}

/// The kinds of [`NameError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameErrorKind {
    /// A bare lowercase name in a value position (Ruby: a variable or method that does not
    /// exist). Usually a table or column name that lacks quotes.
    UndefinedVariable,
    /// A statement starts with a name that is no shell command.
    UndefinedCommand,
    /// An HBase shell command that strata shell does not provide.
    UnsupportedCommand,
    /// `t.frobnicate`: a method table references do not have.
    UndefinedTableMethod,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            NameErrorKind::UndefinedVariable => write!(
                f,
                "NameError: undefined local variable or method `{}' for main:Object \
                 (names must be quoted: '{}')",
                self.name, self.name
            ),
            NameErrorKind::UndefinedCommand => write!(
                f,
                "NoMethodError: undefined method `{}' for main:Object (type 'help' for the \
                 list of commands)",
                self.name
            ),
            NameErrorKind::UnsupportedCommand => write!(
                f,
                "ERROR: '{}' is an HBase shell command that strata shell does not support",
                self.name
            ),
            NameErrorKind::UndefinedTableMethod => write!(
                f,
                "NoMethodError: undefined method `{}' for Hbase::Table (table references take: \
                 {})",
                self.name,
                crate::shell::TABLE_METHODS.join(", ")
            ),
        }
    }
}

impl std::error::Error for NameError {}

/// A known command received arguments it does not accept.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentError {
    /// The command, by its canonical name (`describe` for `desc`).
    pub command: &'static str,
    /// What is wrong.
    pub kind: ArgumentErrorKind,
    /// The argument (or, for missing arguments, the end of the statement) it is about.
    pub span: Span,
    /// Line and column of `span.start`.
    pub position: Position,
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)
    }
}

impl std::error::Error for ArgumentError {}

/// How many arguments a command takes, printed the way Ruby prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// Exactly this many.
    Exactly(usize),
    /// Between the two, inclusive.
    Between(usize, usize),
    /// At least this many.
    AtLeast(usize),
}

impl fmt::Display for Arity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arity::Exactly(count) => write!(f, "{count}"),
            Arity::Between(min, max) => write!(f, "{min}..{max}"),
            Arity::AtLeast(min) => write!(f, "{min}+"),
        }
    }
}

/// The kinds of [`ArgumentError`]. Messages follow HBase's where HBase has one.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgumentErrorKind {
    /// `wrong number of arguments (given 1, expected 2+)`.
    WrongNumberOfArguments {
        /// Arguments given (a trailing `KEY => value` list counts as one, as in Ruby).
        given: usize,
        /// Arguments accepted.
        expected: Arity,
    },
    /// An argument or option of the wrong type.
    WrongType {
        /// What the value is for (`table name`, `VERSIONS`...).
        what: String,
        /// The accepted type(s), in words.
        expected: &'static str,
        /// The Ruby class of the value given.
        found: &'static str,
        /// The value as Ruby's `inspect` shows it.
        value: String,
    },
    /// A value of the right type outside the accepted range.
    OutOfRange {
        /// What the value is for.
        what: String,
        /// The accepted range, in words.
        expected: &'static str,
        /// The value as given.
        value: String,
    },
    /// A choice that is not one of the supported ones (`BloomFilter type FOO is not supported.
    /// Use one of NONE ROW ROWCOL`).
    UnsupportedChoice {
        /// What is being chosen, as HBase names it.
        what: &'static str,
        /// The value given.
        value: String,
        /// The supported choices.
        choices: &'static [&'static str],
    },
    /// An option HBase knows that would change results in a way strata cannot honour.
    UnsupportedOption {
        /// The option key.
        key: String,
    },
    /// Two options that cannot be combined.
    Conflict {
        /// The first option.
        first: &'static str,
        /// The second option.
        second: &'static str,
    },
    /// A name that must not be empty (table, family, split key...).
    Empty {
        /// What must not be empty.
        what: &'static str,
    },
    /// A name that must be valid UTF-8.
    NotUtf8 {
        /// What must be UTF-8.
        what: &'static str,
    },
    /// `create` without any column family.
    NoColumnFamily,
    /// A column family name HBase rejects (starts with `.`, contains `:` or a control
    /// character).
    IllegalFamilyName {
        /// The name given.
        name: String,
    },
    /// A required option is missing (`ROWPREFIXFILTER` in `deleteall 't', {...}`).
    MissingOption {
        /// The option key.
        key: &'static str,
    },
    /// A `{...}` column family specification without `NAME`.
    FamilyWithoutName {
        /// The hash as given.
        spec: String,
    },
    /// `NUMREGIONS` without `SPLITALGO`.
    MissingSplitAlgorithm,
    /// `SPLITALGO` without `NUMREGIONS`.
    MissingRegionCount,
    /// `alter` with the table name only.
    NothingToAlter,
    /// `METHOD => 'delete'` (or another method) without `NAME`.
    MethodWithoutName {
        /// The method.
        method: String,
    },
    /// An `alter` method HBase does not know.
    UnknownMethod {
        /// The method as given.
        method: String,
    },
    /// Two equal split keys.
    DuplicateSplitKey {
        /// The key, rendered with `Bytes.toStringBinary`.
        key: String,
    },
    /// A time range whose maximum is below its minimum.
    InvertedTimeRange {
        /// Minimum timestamp (inclusive).
        min: i64,
        /// Maximum timestamp (exclusive).
        max: i64,
    },
    /// A time range with a negative bound.
    NegativeTimeRange {
        /// Minimum timestamp.
        min: i64,
        /// Maximum timestamp.
        max: i64,
    },
    /// A TTL string that is neither a number, `FOREVER`, nor `N DAYS N HOURS...`.
    MalformedTtl {
        /// The string given.
        value: String,
    },
    /// A formatter (`'f:q:toLong'`, `FORMATTER => ...`) this shell does not provide.
    UnknownFormatter {
        /// The formatter as written.
        formatter: String,
    },
    /// A column name given to `list_regions` that it does not display.
    UnknownRegionColumn {
        /// The column as given.
        column: String,
    },
    /// `create_namespace 'ns', {'KEY' => 'value'}`: strata keeps no namespace properties.
    NamespaceProperty {
        /// The first property key.
        key: String,
    },
    /// `scan`/`count` with `COLUMNS` neither a String nor an Array (HBase's
    /// `_hash_to_scan`).
    ScanColumnsType,
    /// `get` with `COLUMN(S)` neither a String nor an Array (HBase's `_get_internal`).
    GetColumnsType {
        /// The options hash as Ruby's `inspect` shows it (without the keys `get` takes out
        /// before it looks at the columns: `MAXLENGTH`, `FILTER`, `CONSISTENCY`,
        /// `REGION_REPLICA_ID`).
        options: String,
    },
}

impl fmt::Display for ArgumentErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgumentErrorKind::WrongNumberOfArguments { given, expected } => {
                write!(
                    f,
                    "wrong number of arguments (given {given}, expected {expected})"
                )
            }
            ArgumentErrorKind::WrongType {
                what,
                expected,
                found,
                value,
            } => {
                write!(f, "{what} must be {expected}, got {found} {value}")
            }
            ArgumentErrorKind::OutOfRange {
                what,
                expected,
                value,
            } => {
                write!(f, "{what} must be {expected}, got {value}")
            }
            ArgumentErrorKind::UnsupportedChoice {
                what,
                value,
                choices,
            } => {
                write!(
                    f,
                    "{what} {value} is not supported. Use one of {}",
                    choices.join(" ")
                )
            }
            ArgumentErrorKind::UnsupportedOption { key } => {
                write!(f, "{key} is not supported by strata")
            }
            ArgumentErrorKind::Conflict { first, second } => {
                write!(f, "{first} and {second} cannot be used together")
            }
            ArgumentErrorKind::Empty { what } => write!(f, "{what} must not be empty"),
            ArgumentErrorKind::NotUtf8 { what } => write!(f, "{what} must be valid UTF-8"),
            ArgumentErrorKind::NoColumnFamily => {
                f.write_str("Table must have at least one column family")
            }
            ArgumentErrorKind::IllegalFamilyName { name } => {
                if name.starts_with('.') {
                    write!(f, "Column Family names cannot start with a period: {name}")
                } else {
                    write!(
                        f,
                        "Column Family names cannot contain control characters or colons: {name}"
                    )
                }
            }
            ArgumentErrorKind::MissingOption { key } => write!(f, "{key} must be specified"),
            ArgumentErrorKind::FamilyWithoutName { spec } => {
                write!(f, "Column family {spec} must have a name")
            }
            ArgumentErrorKind::MissingSplitAlgorithm => {
                f.write_str("Split algorithm must be specified")
            }
            ArgumentErrorKind::MissingRegionCount => {
                f.write_str("Number of regions must be specified")
            }
            ArgumentErrorKind::NothingToAlter => {
                f.write_str("There should be at least one argument but the table name")
            }
            ArgumentErrorKind::MethodWithoutName { method } => {
                write!(f, "NAME parameter missing for {method} method")
            }
            ArgumentErrorKind::UnknownMethod { method } => write!(f, "Unknown method: {method}"),
            ArgumentErrorKind::DuplicateSplitKey { key } => {
                write!(
                    f,
                    "All split keys must be unique, found duplicate: {key}, {key}"
                )
            }
            ArgumentErrorKind::InvertedTimeRange { .. } => {
                f.write_str("maxStamp is smaller than minStamp")
            }
            ArgumentErrorKind::NegativeTimeRange { min, max } => {
                write!(
                    f,
                    "Timestamp cannot be negative. minStamp:{min}, maxStamp:{max}"
                )
            }
            ArgumentErrorKind::MalformedTtl { value } => write!(
                f,
                "Malformed TTL string {value}: use seconds, FOREVER, or a duration like \
                 '1 DAY 2 HOURS 3 MINUTES 4 SECONDS'"
            ),
            ArgumentErrorKind::UnknownFormatter { formatter } => write!(
                f,
                "unknown formatter {formatter}: use one of toStringBinary toString toLong toInt \
                 toShort toDouble toFloat toBoolean toHex"
            ),
            ArgumentErrorKind::UnknownRegionColumn { column } => write!(
                f,
                "{column} is not a valid column. Possible values are SERVER_NAME, REGION_NAME, \
                 START_KEY, END_KEY, SIZE, REQ, LOCALITY."
            ),
            ArgumentErrorKind::NamespaceProperty { key } => write!(
                f,
                "namespace properties are not supported by strata (it keeps no namespace \
                 configuration): {key}"
            ),
            ArgumentErrorKind::ScanColumnsType => {
                f.write_str("COLUMNS must be specified as a String or an Array")
            }
            ArgumentErrorKind::GetColumnsType { options } => {
                write!(f, "Failed parse column argument type {options}, Hash")
            }
        }
    }
}

/// Something HBase's shell would print and carry on from: the command still runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// A key this command does not know; it is ignored (HBase ignores it too).
    UnknownArgument {
        /// The key.
        key: String,
        /// Where it appeared, which selects HBase's wording.
        scope: ArgumentScope,
    },
    /// A key HBase knows that has no effect in strata (caching hints, replication,
    /// coprocessors...). It is ignored.
    IgnoredArgument {
        /// The key.
        key: String,
    },
    /// `create` named the same family twice; the later specification wins.
    FamilyReplaced {
        /// The family.
        family: String,
    },
    /// A hash named the same key twice; the later value wins (as in Ruby).
    DuplicateKey {
        /// The key.
        key: String,
    },
}

/// Where an unknown argument appeared, for [`Warning::UnknownArgument`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentScope {
    /// Table options of `create`.
    CreateTable,
    /// A column family specification.
    Family(String),
    /// Table options of `alter`, or the options of any other command.
    Command,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::UnknownArgument {
                key,
                scope: ArgumentScope::CreateTable,
            } => {
                write!(f, "An argument ignored (unknown or overridden): {key}")
            }
            Warning::UnknownArgument {
                key,
                scope: ArgumentScope::Family(family),
            } => {
                write!(
                    f,
                    "Unknown argument ignored for column family {family}: {key}"
                )
            }
            Warning::UnknownArgument {
                key,
                scope: ArgumentScope::Command,
            } => {
                write!(f, "Unknown argument ignored: {key}")
            }
            Warning::IgnoredArgument { key } => {
                write!(f, "An argument ignored (no effect in strata): {key}")
            }
            Warning::FamilyReplaced { family } => {
                write!(
                    f,
                    "Family '{family}' already exists, the old one will be replaced"
                )
            }
            Warning::DuplicateKey { key } => {
                write!(f, "warning: key {key} is duplicated and overwritten")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_keeps_tabs_so_it_lines_up() {
        assert_eq!(caret_line("\tput 'x'", 3), "\t ^");
        assert_eq!(caret_line("ab", 5), "    ^");
    }

    #[test]
    fn arity_prints_like_ruby() {
        assert_eq!(Arity::Exactly(2).to_string(), "2");
        assert_eq!(Arity::Between(4, 6).to_string(), "4..6");
        assert_eq!(Arity::AtLeast(2).to_string(), "2+");
    }
}
