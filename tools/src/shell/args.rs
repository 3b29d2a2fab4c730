//! Reading argument values: the checks every command shares (arity, names, integers,
//! booleans, column specifications, option hashes).

use super::ast::{Call, Value, ValueKind, ruby_float_to_s};
use super::bytes::Formatter;
use super::command::{CellColumn, ColumnSpec};
use super::error::{ArgumentError, ArgumentErrorKind, ArgumentScope, Arity, ShellError, Warning};
use super::span::{Position, Span};

/// What a command does with the option keys it does not read itself.
pub(crate) struct OptionPolicy {
    /// HBase keys without effect in strata: a warning.
    pub ignored: &'static [&'static str],
    /// HBase keys strata cannot honour: an error.
    pub unsupported: &'static [&'static str],
    /// Where unknown keys appear (selects the warning's wording).
    pub scope: ArgumentScope,
}

/// The conversion state of one statement.
pub(crate) struct Context<'a> {
    pub call: &'a Call,
    pub command: &'static str,
    source: &'a str,
    warnings: Vec<Warning>,
}

/// Stands in for a missing argument (only reachable if a caller skipped the arity check).
static MISSING: Value = Value {
    kind: ValueKind::Nil,
    span: Span { start: 0, end: 0 },
};

impl<'a> Context<'a> {
    pub fn new(call: &'a Call, source: &'a str, command: &'static str) -> Context<'a> {
        Context {
            call,
            command,
            source,
            warnings: Vec::new(),
        }
    }

    pub fn into_warnings(self) -> Vec<Warning> {
        self.warnings
    }

    pub fn warn(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    pub fn args(&self) -> &'a [Value] {
        &self.call.args
    }

    /// The argument at `index`; call [`Context::arity`] first.
    pub fn arg(&self, index: usize) -> &'a Value {
        self.call.args.get(index).unwrap_or(&MISSING)
    }

    /// Just past the end of the statement: where a missing argument would go.
    pub fn end_span(&self) -> Span {
        Span::at(self.call.span.end)
    }

    pub fn error(&self, kind: ArgumentErrorKind, span: Span) -> ShellError {
        ShellError::from(ArgumentError {
            command: self.command,
            kind,
            span,
            position: Position::locate(self.source, span.start),
        })
    }

    pub fn wrong_type(
        &self,
        value: &Value,
        what: &str,
        expected: &'static str,
        kind: &ValueKind,
    ) -> ShellError {
        self.error(
            ArgumentErrorKind::WrongType {
                what: what.to_owned(),
                expected,
                found: kind.ruby_class(),
                value: kind.inspect(),
            },
            value.span,
        )
    }

    /// Ruby's argument count check. Too many arguments point at the first extra one, too few
    /// at the end of the statement.
    pub fn arity(&self, expected: Arity) -> Result<(), ShellError> {
        let given = self.call.args.len();
        let (min, max) = match expected {
            Arity::Exactly(count) => (count, Some(count)),
            Arity::Between(min, max) => (min, Some(max)),
            Arity::AtLeast(min) => (min, None),
        };
        let span = if given < min {
            self.end_span()
        } else if let Some(extra) = max.and_then(|max| self.call.args.get(max)) {
            extra.span
        } else {
            return Ok(());
        };
        Err(self.error(
            ArgumentErrorKind::WrongNumberOfArguments { given, expected },
            span,
        ))
    }

    /// The bytes of a string argument (a constant counts as its own name).
    pub fn string_bytes(&self, value: &Value, what: &str) -> Result<Vec<u8>, ShellError> {
        match &value.kind {
            ValueKind::Str(bytes) => Ok(bytes.clone()),
            ValueKind::Const(name) => Ok(name.as_bytes().to_vec()),
            other => Err(self.wrong_type(value, what, "a String", other)),
        }
    }

    /// A string argument that must be UTF-8.
    pub fn utf8(&self, value: &Value, what: &'static str) -> Result<String, ShellError> {
        let bytes = self.string_bytes(value, what)?;
        String::from_utf8(bytes)
            .map_err(|_| self.error(ArgumentErrorKind::NotUtf8 { what }, value.span))
    }

    /// A non-empty UTF-8 name.
    fn name(&self, value: &Value, what: &'static str) -> Result<String, ShellError> {
        let name = self.utf8(value, what)?;
        if name.is_empty() {
            return Err(self.error(ArgumentErrorKind::Empty { what }, value.span));
        }
        Ok(name)
    }

    pub fn table(&self, value: &Value) -> Result<String, ShellError> {
        self.name(value, "table name")
    }

    pub fn namespace(&self, value: &Value) -> Result<String, ShellError> {
        self.name(value, "namespace name")
    }

    pub fn table_or_region(&self, value: &Value) -> Result<String, ShellError> {
        self.name(value, "table or region name")
    }

    /// A column family name, checked as HBase checks it in a table schema.
    pub fn family_name(&self, value: &Value) -> Result<String, ShellError> {
        let name = self.name(value, "column family name")?;
        if name.starts_with('.') || name.chars().any(|c| c == ':' || c.is_control()) {
            return Err(self.error(ArgumentErrorKind::IllegalFamilyName { name }, value.span));
        }
        Ok(name)
    }

    /// A row key, value or split point: HBase calls `to_s` on it, so numbers are accepted
    /// and become their decimal text.
    pub fn scalar_bytes(&self, value: &Value, what: &str) -> Result<Vec<u8>, ShellError> {
        match &value.kind {
            ValueKind::Str(bytes) => Ok(bytes.clone()),
            ValueKind::Const(name) => Ok(name.as_bytes().to_vec()),
            ValueKind::Int(number) => Ok(number.to_string().into_bytes()),
            ValueKind::Float(number) => Ok(ruby_float_to_s(*number).into_bytes()),
            other => Err(self.wrong_type(value, what, "a String", other)),
        }
    }

    /// A row key: not empty.
    pub fn row(&self, value: &Value) -> Result<Vec<u8>, ShellError> {
        let row = self.scalar_bytes(value, "row key")?;
        if row.is_empty() {
            return Err(self.error(ArgumentErrorKind::Empty { what: "row key" }, value.span));
        }
        Ok(row)
    }

    /// A row range bound or prefix (may be empty).
    pub fn row_bound(&self, value: &Value, what: &str) -> Result<Vec<u8>, ShellError> {
        self.scalar_bytes(value, what)
    }

    /// A cell timestamp: an integer >= 0 (milliseconds).
    pub fn timestamp(&self, value: &Value, what: &str) -> Result<i64, ShellError> {
        match value.kind {
            ValueKind::Int(timestamp) if timestamp >= 0 => Ok(timestamp),
            ValueKind::Int(timestamp) => Err(self.error(
                ArgumentErrorKind::OutOfRange {
                    what: what.to_owned(),
                    expected: "an Integer >= 0 (milliseconds since the epoch)",
                    value: timestamp.to_string(),
                },
                value.span,
            )),
            ref other => Err(self.wrong_type(value, what, "an Integer", other)),
        }
    }

    /// An integer >= 0 given as a number or as a decimal string (HBase's descriptors accept
    /// `VERSIONS => '3'`).
    pub fn lenient_u64(&self, value: &Value, what: &str) -> Result<u64, ShellError> {
        let number = match &value.kind {
            ValueKind::Int(number) => Some(i128::from(*number)),
            ValueKind::Str(bytes) => std::str::from_utf8(bytes)
                .ok()
                .and_then(|text| text.trim().parse::<i128>().ok()),
            other => return Err(self.wrong_type(value, what, "an Integer", other)),
        };
        match number.map(u64::try_from) {
            Some(Ok(number)) => Ok(number),
            Some(Err(_)) => Err(self.error(
                ArgumentErrorKind::OutOfRange {
                    what: what.to_owned(),
                    expected: "an Integer >= 0",
                    value: value.kind.inspect(),
                },
                value.span,
            )),
            None => Err(self.wrong_type(value, what, "an Integer", &value.kind)),
        }
    }

    /// An integer >= 1.
    pub fn positive_u64(&self, value: &Value, what: &str) -> Result<u64, ShellError> {
        match self.lenient_u64(value, what)? {
            0 => Err(self.error(
                ArgumentErrorKind::OutOfRange {
                    what: what.to_owned(),
                    expected: "a positive Integer",
                    value: "0".to_owned(),
                },
                value.span,
            )),
            number => Ok(number),
        }
    }

    /// An integer between `min` and `u32::MAX`.
    pub fn lenient_u32(&self, value: &Value, what: &str, min: u32) -> Result<u32, ShellError> {
        let number = self.lenient_u64(value, what)?;
        match u32::try_from(number) {
            Ok(number) if number >= min => Ok(number),
            _ => Err(self.error(
                ArgumentErrorKind::OutOfRange {
                    what: what.to_owned(),
                    expected: if min >= 1 {
                        "a positive Integer below 2^32"
                    } else {
                        "an Integer below 2^32"
                    },
                    value: number.to_string(),
                },
                value.span,
            )),
        }
    }

    /// `true`/`false`, or the strings `'true'`/`'false'` in any case (as Java's
    /// `Boolean.valueOf`, but other strings are an error instead of `false`).
    pub fn lenient_bool(&self, value: &Value, what: &str) -> Result<bool, ShellError> {
        match &value.kind {
            ValueKind::Bool(flag) => Ok(*flag),
            ValueKind::Str(bytes) if bytes.eq_ignore_ascii_case(b"true") => Ok(true),
            ValueKind::Str(bytes) if bytes.eq_ignore_ascii_case(b"false") => Ok(false),
            other => Err(self.wrong_type(value, what, "true or false", other)),
        }
    }

    /// The pairs of a hash argument. A key given twice keeps its last value, with a
    /// warning, as in Ruby.
    pub fn options<'v>(&mut self, value: &'v Value) -> Result<Options<'v>, ShellError> {
        let ValueKind::Hash(pairs) = &value.kind else {
            return Err(self.wrong_type(value, "options", "a Hash", &value.kind));
        };
        let mut options = Options::default();
        for (key, item) in pairs {
            let name = key_name(key);
            if let Some(entry) = options.entries.iter_mut().find(|entry| entry.key == name) {
                self.warnings.push(Warning::DuplicateKey { key: name });
                entry.value = item;
                entry.key_span = key.span;
            } else {
                options.entries.push(Entry {
                    key: name,
                    value: item,
                    key_span: key.span,
                    taken: false,
                });
            }
        }
        Ok(options)
    }

    /// Applies `policy` to the keys nobody took: warnings for ignored and unknown keys, an
    /// error for unsupported ones.
    pub fn finish(
        &mut self,
        options: Options<'_>,
        policy: &OptionPolicy,
    ) -> Result<(), ShellError> {
        for entry in options.entries.into_iter().filter(|entry| !entry.taken) {
            if policy.unsupported.contains(&entry.key.as_str()) {
                return Err(self.error(
                    ArgumentErrorKind::UnsupportedOption { key: entry.key },
                    entry.key_span,
                ));
            }
            if policy.ignored.contains(&entry.key.as_str()) {
                self.warnings
                    .push(Warning::IgnoredArgument { key: entry.key });
            } else {
                self.warnings.push(Warning::UnknownArgument {
                    key: entry.key,
                    scope: policy.scope.clone(),
                });
            }
        }
        Ok(())
    }
}

/// A hash key as a string: a constant's name, a string's text.
pub(crate) fn key_name(key: &Value) -> String {
    match &key.kind {
        ValueKind::Const(name) => name.clone(),
        ValueKind::Str(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        other => other.inspect(),
    }
}

/// The pairs of a hash argument, taken one key at a time.
#[derive(Default)]
pub(crate) struct Options<'a> {
    entries: Vec<Entry<'a>>,
}

struct Entry<'a> {
    key: String,
    value: &'a Value,
    key_span: Span,
    taken: bool,
}

impl<'a> Options<'a> {
    /// Whether `key` is present and not taken yet.
    pub fn contains(&self, key: &str) -> bool {
        self.entries
            .iter()
            .any(|entry| !entry.taken && entry.key == key)
    }

    /// The value of `key`, marking it as read.
    pub fn take(&mut self, key: &str) -> Option<&'a Value> {
        let entry = self
            .entries
            .iter_mut()
            .find(|entry| !entry.taken && entry.key == key)?;
        entry.taken = true;
        Some(entry.value)
    }

    /// Like [`Options::take`], keeping the key with the value.
    pub fn take_entry(&mut self, key: &'static str) -> Option<(&'static str, &'a Value)> {
        self.take(key).map(|value| (key, value))
    }

    /// The keys not taken yet.
    pub fn remaining_keys(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter(|entry| !entry.taken)
            .map(|entry| entry.key.clone())
            .collect()
    }
}

/// `'f:q'` to (`f`, `Some(q)`), `'f'` to (`f`, `None`). The qualifier is everything after
/// the first `:` and may be empty or contain more colons.
pub(crate) fn split_column(
    context: &Context<'_>,
    value: &Value,
) -> Result<(String, Option<Vec<u8>>), ShellError> {
    let bytes = context.string_bytes(value, "column")?;
    let (family, qualifier) = match bytes.iter().position(|byte| *byte == b':') {
        Some(colon) => (
            bytes.get(..colon).unwrap_or(&[]),
            Some(bytes.get(colon + 1..).unwrap_or(&[]).to_vec()),
        ),
        None => (bytes.as_slice(), None),
    };
    let family = String::from_utf8(family.to_vec()).map_err(|_| {
        context.error(
            ArgumentErrorKind::NotUtf8 {
                what: "column family name",
            },
            value.span,
        )
    })?;
    if family.is_empty() {
        return Err(context.error(
            ArgumentErrorKind::Empty {
                what: "column family name",
            },
            value.span,
        ));
    }
    Ok((family, qualifier))
}

/// The column a mutation writes (`'f'` is the empty qualifier, as in HBase).
pub(crate) fn mutation_column(
    context: &Context<'_>,
    value: &Value,
) -> Result<CellColumn, ShellError> {
    let (family, qualifier) = split_column(context, value)?;
    Ok(CellColumn {
        family,
        qualifier: qualifier.unwrap_or_default(),
    })
}

/// The columns of a read: a string, or an array of strings (nested arrays are flattened).
pub(crate) fn read_columns(
    context: &Context<'_>,
    value: &Value,
    what: &str,
) -> Result<Vec<ColumnSpec>, ShellError> {
    match &value.kind {
        ValueKind::Str(_) | ValueKind::Const(_) => Ok(vec![read_column(context, value)?]),
        ValueKind::Array(items) => {
            let mut columns = Vec::new();
            for item in items {
                columns.extend(read_columns(context, item, what)?);
            }
            Ok(columns)
        }
        other => Err(context.wrong_type(value, what, "a String or an Array of Strings", other)),
    }
}

/// One read column: `'f'`, `'f:q'`, or `'f:q:FORMATTER'` where the formatter is a `Bytes`
/// method (`toLong`) or `c(org.apache.hadoop.hbase.util.Bytes).toLong`. A third part that
/// does not look like a formatter stays in the qualifier (`'f:a:b'` is qualifier `a:b`).
fn read_column(context: &Context<'_>, value: &Value) -> Result<ColumnSpec, ShellError> {
    let (family, qualifier) = split_column(context, value)?;
    let Some(qualifier) = qualifier else {
        return Ok(ColumnSpec {
            family,
            qualifier: None,
            formatter: None,
        });
    };
    if let Some(colon) = qualifier.iter().position(|byte| *byte == b':') {
        let suffix =
            String::from_utf8_lossy(qualifier.get(colon + 1..).unwrap_or(&[])).into_owned();
        if let Some(formatter) = Formatter::parse(&suffix) {
            let qualifier = qualifier.get(..colon).unwrap_or(&[]).to_vec();
            return Ok(ColumnSpec {
                family,
                qualifier: Some(qualifier),
                formatter: Some(formatter),
            });
        }
        if looks_like_formatter(&suffix) {
            return Err(context.error(
                ArgumentErrorKind::UnknownFormatter { formatter: suffix },
                value.span,
            ));
        }
    }
    Ok(ColumnSpec {
        family,
        qualifier: Some(qualifier),
        formatter: None,
    })
}

/// `toSomething` or `c(Class).method`: meant as a formatter.
fn looks_like_formatter(text: &str) -> bool {
    let method = text.strip_prefix("to").and_then(|rest| rest.chars().next());
    text.starts_with("c(") || method.is_some_and(|first| first.is_ascii_uppercase())
}
