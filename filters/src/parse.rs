//! The filter language: HBase's `ParseFilter` syntax plus the strata extensions.
//!
//! ```text
//! filter    := or_expr
//! or_expr   := and_expr { "OR" and_expr }          lowest precedence
//! and_expr  := unary { "AND" unary }
//! unary     := "SKIP" unary | "WHILE" unary | primary
//! primary   := "(" or_expr ")" | Name "(" [ arg { sep arg } ] ")"
//!              ("(" or_expr still open at the end of the string is closed there)
//! arg       := 'quoted' | b'binary' | bare          bare: integer, boolean or operator
//! sep       := any run of spaces and commas         (as lenient as HBase)
//! ```
//!
//! `A AND B AND C` is one list of three (HBase flattens a run of the same operator);
//! parentheses keep nesting: `(A AND B) AND C` is a list inside a list. Quoted strings double
//! a single quote (`'it''s'`). Arguments of HBase's filters are literal bytes; the strata
//! extensions read `\xNN` escapes in theirs; `b'...'` reads escapes anywhere. Errors carry the
//! byte position, what was expected and what was found.
//!
//! A filter string is bytes, as in HBase ([`parse_bytes`]): quoted arguments may hold any
//! byte, UTF-8 or not (`'binary:\x82'` written with the raw byte 0x82). [`parse`] takes text.
//! As HBase's parser does, parentheses still open at the end of the string are closed there:
//! `(PrefixFilter('a')` is `PrefixFilter('a')`.

use std::fmt;

use crate::escape::from_bytes_binary;
use crate::model::{
    BitOp, ColumnOffset, ColumnValueTest, Comparator, CompareOp, DependentColumn, Filter,
    FilterList, FuzzyRule, ListOperator, MAX_INT_ARGUMENT, MAX_LONG_ARGUMENT, ModelError, RowMask,
    RowRange, validate_comparison,
};

/// Longest input the parser accepts, in bytes (a bound on work and nesting).
pub const MAX_FILTER_STRING_BYTES: usize = 1 << 20;

/// Deepest nesting of parentheses and unary operators the parser accepts.
pub const MAX_NESTING_DEPTH: usize = 256;

/// A malformed filter string: where, what the parser expected there, and what it found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset into the input.
    pub position: usize,
    /// What would have been accepted at `position`.
    pub expected: String,
    /// What is at `position` instead.
    pub found: String,
    /// The whole input, for the caret display.
    pub input: Vec<u8>,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "expected {}, found {} at byte {}",
            self.expected, self.found, self.position
        )?;
        let (shown, column) = shown_with_column(&self.input, self.position);
        writeln!(f, "  {shown}")?;
        write!(f, "  {}^", " ".repeat(column))
    }
}

/// The input as the caret display shows it (UTF-8 as text with control characters as spaces,
/// other bytes as `\xNN`), and the display column of byte `position`.
fn shown_with_column(input: &[u8], position: usize) -> (String, usize) {
    let mut shown = String::with_capacity(input.len());
    let mut column = None;
    let mut columns = 0;
    let mut index = 0;
    for chunk in input.utf8_chunks() {
        for c in chunk.valid().chars() {
            if index >= position && column.is_none() {
                column = Some(columns);
            }
            shown.push(if c.is_control() { ' ' } else { c });
            columns += 1;
            index += c.len_utf8();
        }
        for byte in chunk.invalid() {
            if index >= position && column.is_none() {
                column = Some(columns);
            }
            shown.push_str(&format!("\\x{byte:02X}"));
            columns += 4;
            index += 1;
        }
    }
    (shown, column.unwrap_or(columns))
}

impl std::error::Error for ParseError {}

/// Parses a filter string into a validated [`Filter`].
pub fn parse(input: &str) -> Result<Filter, ParseError> {
    parse_bytes(input.as_bytes())
}

/// Parses a filter string given as bytes (HBase's `parseFilterString(byte[])`): quoted
/// arguments may hold bytes that are not UTF-8.
pub fn parse_bytes(input: &[u8]) -> Result<Filter, ParseError> {
    let mut parser = Parser {
        bytes: input,
        position: 0,
        depth: 0,
    };
    if input.len() > MAX_FILTER_STRING_BYTES {
        return Err(parser.error_at(
            MAX_FILTER_STRING_BYTES,
            format!("at most {MAX_FILTER_STRING_BYTES} bytes"),
            format!("{} bytes", input.len()),
        ));
    }
    let filter = parser.or_expr()?;
    parser.skip_whitespace();
    if parser.position < parser.bytes.len() {
        return Err(parser.error_here("AND, OR or the end of the filter"));
    }
    Ok(filter)
}

/// How the quoted strings of a filter's arguments are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quoting {
    /// HBase filters: literal bytes (`b'...'` still reads escapes).
    Literal,
    /// strata extensions: `\xNN` escapes always.
    Binary,
}

#[derive(Debug)]
enum ArgKind {
    Quoted { text: Vec<u8>, binary: bool },
    Bare(String),
}

#[derive(Debug)]
struct Arg {
    kind: ArgKind,
    position: usize,
}

impl Arg {
    fn describe(&self) -> String {
        match &self.kind {
            ArgKind::Quoted {
                text,
                binary: false,
            } => format!("'{}'", shorten(&String::from_utf8_lossy(text))),
            ArgKind::Quoted { text, binary: true } => {
                format!("b'{}'", shorten(&String::from_utf8_lossy(text)))
            }
            ArgKind::Bare(text) => format!("`{}`", shorten(text)),
        }
    }
}

fn shorten(text: &str) -> String {
    const LIMIT: usize = 40;
    if text.chars().count() <= LIMIT {
        text.to_string()
    } else {
        let head: String = text.chars().take(LIMIT).collect();
        format!("{head}...")
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    position: usize,
    depth: usize,
}

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

impl<'a> Parser<'a> {
    fn error_at(
        &self,
        position: usize,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> ParseError {
        ParseError {
            position,
            expected: expected.into(),
            found: found.into(),
            input: self.bytes.to_vec(),
        }
    }

    /// An error at the current position describing the token found there.
    fn error_here(&self, expected: &str) -> ParseError {
        self.error_at(self.position, expected, self.describe_here())
    }

    fn describe_here(&self) -> String {
        let rest = self.bytes.get(self.position..).unwrap_or(&[]);
        let Some(chunk) = rest.utf8_chunks().next() else {
            return "end of input".to_string();
        };
        match chunk.valid().chars().next() {
            None => match chunk.invalid().first() {
                Some(byte) => format!("`\\x{byte:02X}`"),
                None => "end of input".to_string(),
            },
            Some(c) if c.is_alphanumeric() || c == '_' => {
                let word: String = chunk
                    .valid()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                format!("`{}`", shorten(&word))
            }
            Some(c) => format!("`{c}`"),
        }
    }

    fn skip_whitespace(&mut self) {
        while self
            .bytes
            .get(self.position)
            .is_some_and(|b| is_whitespace(*b))
        {
            self.position += 1;
        }
    }

    /// True when `keyword` starts at the current position and ends at whitespace, `(` or the
    /// end of input (HBase's rule for AND, OR, SKIP and WHILE).
    fn at_keyword(&self, keyword: &str) -> bool {
        let end = self.position + keyword.len();
        self.bytes.get(self.position..end) == Some(keyword.as_bytes())
            && self
                .bytes
                .get(end)
                .is_none_or(|b| is_whitespace(*b) || *b == b'(')
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING_DEPTH {
            return Err(self.error_at(
                self.position,
                format!("at most {MAX_NESTING_DEPTH} levels of nesting"),
                "deeper nesting",
            ));
        }
        Ok(())
    }

    fn or_expr(&mut self) -> Result<Filter, ParseError> {
        self.list_expr(ListOperator::MustPassOne)
    }

    /// A run of operands joined by one operator: OR of ANDs, AND of unaries.
    fn list_expr(&mut self, operator: ListOperator) -> Result<Filter, ParseError> {
        let keyword = match operator {
            ListOperator::MustPassOne => "OR",
            ListOperator::MustPassAll => "AND",
        };
        let mut members = vec![self.operand(operator)?];
        loop {
            self.skip_whitespace();
            if !self.at_keyword(keyword) {
                break;
            }
            self.position += keyword.len();
            members.push(self.operand(operator)?);
        }
        if members.len() == 1 {
            Ok(members.remove(0))
        } else {
            Ok(Filter::List(FilterList {
                operator,
                filters: members,
            }))
        }
    }

    fn operand(&mut self, operator: ListOperator) -> Result<Filter, ParseError> {
        match operator {
            ListOperator::MustPassOne => self.list_expr(ListOperator::MustPassAll),
            ListOperator::MustPassAll => self.unary(),
        }
    }

    fn unary(&mut self) -> Result<Filter, ParseError> {
        self.skip_whitespace();
        for (keyword, wrap) in [
            ("SKIP", Filter::Skip as fn(Box<Filter>) -> Filter),
            ("WHILE", Filter::While as fn(Box<Filter>) -> Filter),
        ] {
            if self.at_keyword(keyword) {
                self.position += keyword.len();
                self.enter()?;
                let inner = self.unary()?;
                self.depth -= 1;
                return Ok(wrap(Box::new(inner)));
            }
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Filter, ParseError> {
        self.skip_whitespace();
        if self.bytes.get(self.position) == Some(&b'(') {
            self.position += 1;
            self.enter()?;
            let inner = self.or_expr()?;
            self.depth -= 1;
            self.skip_whitespace();
            match self.bytes.get(self.position) {
                Some(b')') => self.position += 1,
                // HBase's parser closes the parentheses still open at the end of the string.
                None => {}
                Some(_) => return Err(self.error_here("`)`, AND or OR")),
            }
            return Ok(inner);
        }
        self.call()
    }

    fn call(&mut self) -> Result<Filter, ParseError> {
        let name_start = self.position;
        while self
            .bytes
            .get(self.position)
            .is_some_and(|b| is_name_byte(*b))
        {
            self.position += 1;
        }
        let bytes = self.bytes;
        // Name bytes are ASCII, so the slice is UTF-8.
        let name = std::str::from_utf8(&bytes[name_start..self.position]).unwrap_or_default();
        if name.is_empty() {
            return Err(self.error_here("a filter name, SKIP, WHILE or `(`"));
        }
        if !FILTER_NAMES.contains(&name) {
            return Err(self.error_at(
                name_start,
                "a filter name",
                format!("unknown filter `{}`", shorten(name)),
            ));
        }
        self.skip_whitespace();
        if self.bytes.get(self.position) != Some(&b'(') {
            return Err(self.error_here(&format!("`(` after {name}")));
        }
        self.position += 1;
        let args = self.arguments()?;
        let close = self.position - 1;
        build_filter(self, name, &args, close)
    }

    /// Reads arguments up to and including the closing parenthesis.
    fn arguments(&mut self) -> Result<Vec<Arg>, ParseError> {
        let mut args = Vec::new();
        loop {
            while self
                .bytes
                .get(self.position)
                .is_some_and(|b| is_whitespace(*b) || *b == b',')
            {
                self.position += 1;
            }
            let start = self.position;
            match self.bytes.get(start) {
                None => return Err(self.error_here("an argument or `)`")),
                Some(b')') => {
                    self.position += 1;
                    return Ok(args);
                }
                Some(b'\'') => {
                    let text = self.quoted(start)?;
                    args.push(Arg {
                        kind: ArgKind::Quoted {
                            text,
                            binary: false,
                        },
                        position: start,
                    });
                }
                Some(b'b') if self.bytes.get(start + 1) == Some(&b'\'') => {
                    let text = self.quoted(start + 1)?;
                    args.push(Arg {
                        kind: ArgKind::Quoted { text, binary: true },
                        position: start,
                    });
                }
                Some(b'(') => return Err(self.error_here("an argument or `)`")),
                Some(_) => {
                    while self.bytes.get(self.position).is_some_and(|b| {
                        !is_whitespace(*b) && !matches!(*b, b',' | b'(' | b')' | b'\'')
                    }) {
                        self.position += 1;
                    }
                    let text =
                        String::from_utf8_lossy(&self.bytes[start..self.position]).into_owned();
                    args.push(Arg {
                        kind: ArgKind::Bare(text),
                        position: start,
                    });
                }
            }
        }
    }

    /// Reads a quoted string whose opening quote is at `open`; `''` stands for one quote.
    /// Every other byte, UTF-8 or not, stands for itself.
    fn quoted(&mut self, open: usize) -> Result<Vec<u8>, ParseError> {
        let mut text = Vec::new();
        let mut index = open + 1;
        loop {
            let rest = self.bytes.get(index..).unwrap_or(&[]);
            let Some(quote) = memchr::memchr(b'\'', rest) else {
                return Err(self.error_at(open, "a closing `'` for this string", "end of input"));
            };
            text.extend_from_slice(&rest[..quote]);
            index += quote + 1;
            if self.bytes.get(index) == Some(&b'\'') {
                text.push(b'\'');
                index += 1;
            } else {
                self.position = index;
                return Ok(text);
            }
        }
    }
}

/// Every filter name the language knows, HBase's and the strata extensions.
pub const FILTER_NAMES: &[&str] = &[
    "KeyOnlyFilter",
    "FirstKeyOnlyFilter",
    "PrefixFilter",
    "ColumnPrefixFilter",
    "MultipleColumnPrefixFilter",
    "ColumnCountGetFilter",
    "PageFilter",
    "ColumnPaginationFilter",
    "InclusiveStopFilter",
    "TimestampsFilter",
    "RowFilter",
    "FamilyFilter",
    "QualifierFilter",
    "ValueFilter",
    "ColumnRangeFilter",
    "SingleColumnValueFilter",
    "SingleColumnValueExcludeFilter",
    "ColumnValueFilter",
    "DependentColumnFilter",
    "FuzzyRowFilter",
    "MultiRowRangeFilter",
    "RowMaskFilter",
];

/// Reads typed values out of a filter's argument list, reporting errors at the argument.
struct Args<'p, 'a> {
    parser: &'p Parser<'a>,
    name: &'static str,
    args: &'p [Arg],
    close: usize,
    quoting: Quoting,
}

impl Args<'_, '_> {
    fn error(&self, index: usize, expected: impl Into<String>) -> ParseError {
        match self.args.get(index) {
            Some(arg) => self.parser.error_at(arg.position, expected, arg.describe()),
            None => self.parser.error_at(self.close, expected, "`)`"),
        }
    }

    /// Checks the argument count against the accepted counts.
    fn expect_count(&self, accepted: &[usize], description: &str) -> Result<(), ParseError> {
        if accepted.contains(&self.args.len()) {
            return Ok(());
        }
        let expected = format!("{} for {}", description, self.name);
        let max = accepted.iter().copied().max().unwrap_or(0);
        if self.args.len() > max {
            Err(self.error(max, expected))
        } else {
            Err(self.parser.error_at(
                self.close,
                expected,
                format!("{} argument(s)", self.args.len()),
            ))
        }
    }

    fn bytes(&self, index: usize) -> Result<Vec<u8>, ParseError> {
        match self.args.get(index).map(|arg| &arg.kind) {
            Some(ArgKind::Quoted { text, binary }) => {
                if *binary || self.quoting == Quoting::Binary {
                    Ok(from_bytes_binary(text))
                } else {
                    Ok(text.clone())
                }
            }
            _ => Err(self.error(index, "a quoted string")),
        }
    }

    fn bare(&self, index: usize) -> Option<&str> {
        match self.args.get(index).map(|arg| &arg.kind) {
            Some(ArgKind::Bare(text)) => Some(text),
            _ => None,
        }
    }

    fn boolean(&self, index: usize) -> Result<bool, ParseError> {
        match self.bare(index) {
            Some(text) if text.eq_ignore_ascii_case("true") => Ok(true),
            Some(text) if text.eq_ignore_ascii_case("false") => Ok(false),
            _ => Err(self.error(index, "`true` or `false`")),
        }
    }

    /// A non-negative decimal integer no larger than `max`.
    fn unsigned(&self, index: usize, max: u64) -> Result<u64, ParseError> {
        let expected = format!("an integer from 0 to {max}");
        let text = self
            .bare(index)
            .ok_or_else(|| self.error(index, expected.as_str()))?;
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.error(index, expected));
        }
        match text.parse::<u64>() {
            Ok(value) if value <= max => Ok(value),
            _ => Err(self.error(index, expected)),
        }
    }

    fn int(&self, index: usize) -> Result<u32, ParseError> {
        let value = self.unsigned(index, u64::from(MAX_INT_ARGUMENT))?;
        u32::try_from(value).map_err(|_| self.error(index, "an integer that fits in 32 bits"))
    }

    fn operator(&self, index: usize) -> Result<CompareOp, ParseError> {
        self.bare(index)
            .and_then(CompareOp::from_symbol)
            .ok_or_else(|| self.error(index, "a compare operator (<, <=, =, !=, >=, >)"))
    }

    fn comparator(&self, index: usize) -> Result<Comparator, ParseError> {
        let bytes = self.bytes(index)?;
        let colon = bytes.iter().position(|b| *b == b':').ok_or_else(|| {
            self.error(
                index,
                "a comparator `type:value` (binary, binaryprefix, substring, regexstring)",
            )
        })?;
        let (kind, value) = (&bytes[..colon], bytes[colon + 1..].to_vec());
        let text = || String::from_utf8_lossy(&value).into_owned();
        Ok(match kind {
            b"binary" => Comparator::Binary(value),
            b"binaryprefix" => Comparator::BinaryPrefix(value),
            b"substring" => Comparator::Substring(text()),
            b"regexstring" => Comparator::RegexString(text()),
            b"bitand" => Comparator::Bit(BitOp::And, value),
            b"bitor" => Comparator::Bit(BitOp::Or, value),
            b"bitxor" => Comparator::Bit(BitOp::Xor, value),
            b"long" => match text().parse::<i64>() {
                Ok(number) if !value.starts_with(b"+") => Comparator::Long(number),
                _ => {
                    return Err(
                        self.error(index, "a comparator `long:` followed by a decimal integer")
                    );
                }
            },
            b"null" if value.is_empty() => Comparator::Null,
            b"null" => return Err(self.error(index, "nothing after `null:`")),
            _ => {
                return Err(self.error(
                    index,
                    "a comparator type: binary, binaryprefix, substring, regexstring, \
                     bitand, bitor, bitxor, long or null",
                ));
            }
        })
    }

    /// Turns a model error found while checking argument `index` into a parse error there.
    fn check(&self, index: usize, result: Result<(), ModelError>) -> Result<(), ParseError> {
        result.map_err(|error| self.error(index, format!("a valid argument ({error})")))
    }

    fn compare_filter(&self) -> Result<(CompareOp, Comparator), ParseError> {
        self.expect_count(&[2], "2 arguments (operator, 'comparator')")?;
        let op = self.operator(0)?;
        let comparator = self.comparator(1)?;
        self.check(1, validate_comparison(op, &comparator))?;
        Ok((op, comparator))
    }

    fn column_value(&self) -> Result<ColumnValueTest, ParseError> {
        self.expect_count(
            &[4, 6],
            "4 or 6 arguments ('family', 'qualifier', operator, 'comparator' \
             [, filterIfMissing, latestVersionOnly])",
        )?;
        let mut test = ColumnValueTest::new(
            &self.bytes(0)?,
            &self.bytes(1)?,
            self.operator(2)?,
            self.comparator(3)?,
        );
        self.check(3, validate_comparison(test.op, &test.comparator))?;
        if self.args.len() == 6 {
            test.filter_if_missing = self.boolean(4)?;
            test.latest_version_only = self.boolean(5)?;
        }
        Ok(test)
    }
}

fn build_filter(
    parser: &Parser<'_>,
    name: &str,
    args: &[Arg],
    close: usize,
) -> Result<Filter, ParseError> {
    let quoting = match name {
        "FuzzyRowFilter" | "MultiRowRangeFilter" | "RowMaskFilter" => Quoting::Binary,
        _ => Quoting::Literal,
    };
    let a = Args {
        parser,
        name: name_static(name),
        args,
        close,
        quoting,
    };
    Ok(match name {
        "KeyOnlyFilter" => {
            a.expect_count(&[0, 1], "no argument or a boolean (lenAsVal)")?;
            Filter::KeyOnly {
                len_as_value: if args.is_empty() {
                    false
                } else {
                    a.boolean(0)?
                },
            }
        }
        "FirstKeyOnlyFilter" => {
            a.expect_count(&[0], "no arguments")?;
            Filter::FirstKeyOnly
        }
        "PrefixFilter" => {
            a.expect_count(&[1], "1 argument ('prefix')")?;
            Filter::Prefix {
                prefix: a.bytes(0)?,
            }
        }
        "ColumnPrefixFilter" => {
            a.expect_count(&[1], "1 argument ('prefix')")?;
            Filter::ColumnPrefix {
                prefix: a.bytes(0)?,
            }
        }
        "MultipleColumnPrefixFilter" => {
            let prefixes = (0..args.len())
                .map(|i| a.bytes(i))
                .collect::<Result<Vec<_>, _>>()?;
            for (index, prefix) in prefixes.iter().enumerate() {
                if prefixes[..index].contains(prefix) {
                    return Err(a.error(index, "a prefix not given before"));
                }
            }
            Filter::MultipleColumnPrefix { prefixes }
        }
        "ColumnCountGetFilter" => {
            a.expect_count(&[1], "1 argument (limit)")?;
            Filter::ColumnCountGet { limit: a.int(0)? }
        }
        "PageFilter" => {
            a.expect_count(&[1], "1 argument (page size)")?;
            Filter::Page {
                page_size: a.unsigned(0, MAX_LONG_ARGUMENT)?,
            }
        }
        "ColumnPaginationFilter" => {
            a.expect_count(&[2], "2 arguments (limit, offset or 'column offset')")?;
            let limit = a.int(0)?;
            let offset = match args.get(1).map(|arg| &arg.kind) {
                Some(ArgKind::Quoted { .. }) => ColumnOffset::Qualifier(a.bytes(1)?),
                _ => ColumnOffset::Index(a.int(1)?),
            };
            Filter::ColumnPagination { limit, offset }
        }
        "InclusiveStopFilter" => {
            a.expect_count(&[1], "1 argument ('stop row')")?;
            Filter::InclusiveStop {
                stop_row: a.bytes(0)?,
            }
        }
        "TimestampsFilter" => {
            let timestamps = (0..args.len())
                .map(|i| a.unsigned(i, MAX_LONG_ARGUMENT).map(|ts| ts as i64))
                .collect::<Result<Vec<_>, _>>()?;
            Filter::Timestamps { timestamps }
        }
        "RowFilter" => {
            let (op, comparator) = a.compare_filter()?;
            Filter::Row { op, comparator }
        }
        "FamilyFilter" => {
            let (op, comparator) = a.compare_filter()?;
            Filter::Family { op, comparator }
        }
        "QualifierFilter" => {
            let (op, comparator) = a.compare_filter()?;
            Filter::Qualifier { op, comparator }
        }
        "ValueFilter" => {
            let (op, comparator) = a.compare_filter()?;
            Filter::Value { op, comparator }
        }
        "ColumnRangeFilter" => {
            a.expect_count(
                &[4],
                "4 arguments ('min', minInclusive, 'max', maxInclusive)",
            )?;
            Filter::ColumnRange {
                min: a.bytes(0)?,
                min_inclusive: a.boolean(1)?,
                max: a.bytes(2)?,
                max_inclusive: a.boolean(3)?,
            }
        }
        "SingleColumnValueFilter" => Filter::SingleColumnValue(a.column_value()?),
        "SingleColumnValueExcludeFilter" => Filter::SingleColumnValueExclude(a.column_value()?),
        "ColumnValueFilter" => {
            a.expect_count(
                &[4],
                "4 arguments ('family', 'qualifier', operator, 'comparator')",
            )?;
            let family = a.bytes(0)?;
            let qualifier = a.bytes(1)?;
            let op = a.operator(2)?;
            let comparator = a.comparator(3)?;
            a.check(3, validate_comparison(op, &comparator))?;
            Filter::ColumnValue {
                family,
                qualifier,
                op,
                comparator,
            }
        }
        "DependentColumnFilter" => {
            a.expect_count(
                &[2, 3, 5],
                "2, 3 or 5 arguments ('family', 'qualifier' [, dropDependentColumn \
                 [, operator, 'comparator']])",
            )?;
            let mut dependent = DependentColumn::new(&a.bytes(0)?, &a.bytes(1)?);
            if args.len() >= 3 {
                dependent.drop_dependent_column = a.boolean(2)?;
            }
            if args.len() == 5 {
                dependent.value_test = Some((a.operator(3)?, a.comparator(4)?));
            }
            let filter = Filter::DependentColumn(dependent);
            a.check(4, filter.validate())?;
            filter
        }
        "FuzzyRowFilter" => {
            if !args.len().is_multiple_of(2) {
                return Err(a.error(
                    args.len(),
                    "a mask after the last key (arguments come in 'key', 'mask' pairs)",
                ));
            }
            let mut rules = Vec::with_capacity(args.len() / 2);
            for pair in 0..args.len() / 2 {
                let rule = FuzzyRule {
                    key: a.bytes(2 * pair)?,
                    mask: a.bytes(2 * pair + 1)?,
                };
                if rule.key.len() != rule.mask.len() {
                    return Err(a.error(
                        2 * pair + 1,
                        format!("a mask as long as its key ({} bytes)", rule.key.len()),
                    ));
                }
                if rule.mask.iter().any(|byte| *byte > 1) {
                    return Err(a.error(
                        2 * pair + 1,
                        "a mask of \\x00 (fixed) and \\x01 (any) bytes",
                    ));
                }
                rules.push(rule);
            }
            Filter::FuzzyRow { rules }
        }
        "MultiRowRangeFilter" => {
            if args.is_empty() || !args.len().is_multiple_of(4) {
                return Err(a.error(
                    args.len().max(1).div_ceil(4) * 4,
                    "ranges of 4 arguments ('start', startInclusive, 'stop', stopInclusive)",
                ));
            }
            let mut ranges = Vec::with_capacity(args.len() / 4);
            for quad in 0..args.len() / 4 {
                let base = 4 * quad;
                let range = RowRange {
                    start: a.bytes(base)?,
                    start_inclusive: a.boolean(base + 1)?,
                    stop: a.bytes(base + 2)?,
                    stop_inclusive: a.boolean(base + 3)?,
                };
                if (Filter::MultiRowRange {
                    ranges: vec![range.clone()],
                })
                .validate()
                .is_err()
                {
                    return Err(a.error(base + 2, "a stop row not before the start row"));
                }
                ranges.push(range);
            }
            Filter::MultiRowRange { ranges }
        }
        "RowMaskFilter" => {
            a.expect_count(&[4], "4 arguments (offset, 'mask', operator, 'value')")?;
            let offset = a.unsigned(0, u64::from(u32::MAX))?;
            let mask = RowMask {
                offset: u32::try_from(offset)
                    .map_err(|_| a.error(0, "an offset that fits in 32 bits"))?,
                mask: a.bytes(1)?,
                op: a.operator(2)?,
                value: a.bytes(3)?,
            };
            let filter = Filter::RowMask(mask);
            let failing = match filter.validate() {
                Err(ModelError::OperatorNotAllowed { .. }) => 2,
                Err(ModelError::EmptyMask) => 1,
                _ => 3,
            };
            a.check(failing, filter.validate())?;
            filter
        }
        _ => {
            return Err(parser.error_at(
                close,
                "a filter name",
                format!("unknown filter `{name}`"),
            ));
        }
    })
}

/// The static spelling of a known filter name (names are checked against [`FILTER_NAMES`]).
fn name_static(name: &str) -> &'static str {
    FILTER_NAMES
        .iter()
        .copied()
        .find(|known| *known == name)
        .unwrap_or("filter")
}
