//! Table mappings: how the columns of a SQL table lie in a strata table's rows.
//!
//! A mapping is written as Hive's HBase storage handler writes `hbase.columns.mapping`: one
//! entry per SQL column, in column order, separated by commas.
//!
//! ```text
//! mapping  := entry ("," entry)*
//! entry    := key | column
//! key      := ":key" [ "[" width "]" | "[.." separator "]" ] [ "#" encoding ]
//! column   := family ":" qualifier [ "#" encoding ]
//! encoding := "s" | "string" | "b" | "binary" | "o" | "ordered"
//! ```
//!
//! `:key` alone maps the whole row key. A composite key is several `:key` entries, read front
//! to back: `[4]` is the next 4 bytes, `[..|]` the bytes up to the next `|` (which is
//! consumed), and a plain `:key` after other key parts is the rest of the key (it must be the
//! last key part). A fixed-width binary or ordered number needs no width: an `INT` with `#b`
//! is 4 bytes. A byte that has a meaning in the syntax (`,` `#` `:` `[` `]` `\`) is written
//! `\xHH` in a qualifier or a separator.
//!
//! Encodings are Hive's: `s` (the default) stores text (`42`, `true`, `1.5`), `b` stores
//! HBase's `Bytes.toBytes` (big-endian two's complement integers, IEEE doubles, a boolean as
//! one byte), and strata adds `o`, the order-preserving encodings of `strata::keys` (signed
//! integers big-endian with the sign bit flipped), for key parts that must sort by value.
//! Strings and binary columns are stored as they are under every encoding.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use strata::filters::escape::{from_string_binary, to_string_binary};

/// The most entries (SQL columns) a mapping may have.
pub const MAX_MAPPED_COLUMNS: usize = 1024;

/// The SQL types a mapped column can have, with the Arrow type each becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// `VARCHAR` / `TEXT`: UTF-8 text (Arrow `Utf8`).
    Utf8,
    /// `BYTEA` / `BINARY`: raw bytes (Arrow `Binary`).
    Binary,
    /// `BOOLEAN`.
    Boolean,
    /// `INT`: a signed 32-bit integer.
    Int32,
    /// `BIGINT`: a signed 64-bit integer.
    Int64,
    /// `TINYINT UNSIGNED`: an unsigned byte (a kind or separator byte of a composite key).
    UInt8,
    /// `INT UNSIGNED`: an unsigned 32-bit integer.
    UInt32,
    /// `BIGINT UNSIGNED`: an unsigned 64-bit integer.
    UInt64,
    /// `DOUBLE`: a 64-bit float.
    Float64,
}

impl ColumnType {
    /// The type of an Arrow field, if a mapping can hold it.
    pub fn from_arrow(data_type: &DataType) -> Option<ColumnType> {
        Some(match data_type {
            DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => ColumnType::Utf8,
            DataType::Binary | DataType::BinaryView | DataType::LargeBinary => ColumnType::Binary,
            DataType::Boolean => ColumnType::Boolean,
            DataType::Int32 => ColumnType::Int32,
            DataType::Int64 => ColumnType::Int64,
            DataType::UInt8 => ColumnType::UInt8,
            DataType::UInt32 => ColumnType::UInt32,
            DataType::UInt64 => ColumnType::UInt64,
            DataType::Float64 => ColumnType::Float64,
            _ => return None,
        })
    }

    /// The Arrow type of the column.
    pub fn arrow(self) -> DataType {
        match self {
            ColumnType::Utf8 => DataType::Utf8,
            ColumnType::Binary => DataType::Binary,
            ColumnType::Boolean => DataType::Boolean,
            ColumnType::Int32 => DataType::Int32,
            ColumnType::Int64 => DataType::Int64,
            ColumnType::UInt8 => DataType::UInt8,
            ColumnType::UInt32 => DataType::UInt32,
            ColumnType::UInt64 => DataType::UInt64,
            ColumnType::Float64 => DataType::Float64,
        }
    }

    /// The name stored with a mapping (and shown in errors).
    pub fn name(self) -> &'static str {
        match self {
            ColumnType::Utf8 => "utf8",
            ColumnType::Binary => "binary",
            ColumnType::Boolean => "bool",
            ColumnType::Int32 => "int32",
            ColumnType::Int64 => "int64",
            ColumnType::UInt8 => "uint8",
            ColumnType::UInt32 => "uint32",
            ColumnType::UInt64 => "uint64",
            ColumnType::Float64 => "double",
        }
    }

    /// The type of a stored name ([`ColumnType::name`]).
    pub fn from_name(name: &str) -> Option<ColumnType> {
        [
            ColumnType::Utf8,
            ColumnType::Binary,
            ColumnType::Boolean,
            ColumnType::Int32,
            ColumnType::Int64,
            ColumnType::UInt8,
            ColumnType::UInt32,
            ColumnType::UInt64,
            ColumnType::Float64,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }

    /// Bytes of the binary and ordered encodings of a number or boolean; `None` for text and
    /// bytes, whose length varies.
    pub fn binary_width(self) -> Option<usize> {
        match self {
            ColumnType::Utf8 | ColumnType::Binary => None,
            ColumnType::Boolean | ColumnType::UInt8 => Some(1),
            ColumnType::Int32 | ColumnType::UInt32 => Some(4),
            ColumnType::Int64 | ColumnType::UInt64 | ColumnType::Float64 => Some(8),
        }
    }
}

/// How a value is stored in its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Hive's `#s`: text (`42`, `-7`, `true`, `1.5`); strings and bytes as they are.
    String,
    /// Hive's `#b`: HBase's `Bytes.toBytes` (big-endian two's complement, IEEE 754 doubles,
    /// a boolean as `0xFF`/`0x00`).
    Binary,
    /// strata's order-preserving encodings (`strata::keys::encode_i64`): big-endian with the
    /// sign bit of signed integers flipped, so that the bytes sort as the numbers do.
    Ordered,
}

impl Encoding {
    /// The letter written after `#`.
    pub fn letter(self) -> char {
        match self {
            Encoding::String => 's',
            Encoding::Binary => 'b',
            Encoding::Ordered => 'o',
        }
    }
}

/// Where a key column's bytes lie in the row key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyPart {
    /// The next `width` bytes.
    Fixed(usize),
    /// The bytes up to the next occurrence of this byte, which is consumed.
    UntilSeparator(u8),
    /// Every remaining byte (the whole key when it is the only part).
    Rest,
}

/// Where a mapped column's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ColumnSource {
    /// Part `index` of the row key (0 = the first part).
    Key {
        /// Position among the key parts.
        index: usize,
        /// How the part is cut from the key.
        part: KeyPart,
    },
    /// The newest version of `family:qualifier`.
    Cell {
        /// The column family.
        family: Vec<u8>,
        /// The qualifier.
        qualifier: Vec<u8>,
    },
}

/// One SQL column of a mapped table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MappedColumn {
    /// The SQL column name.
    pub name: String,
    /// Its SQL type.
    pub column_type: ColumnType,
    /// Whether it may be NULL. A NOT NULL cell column is one every row has: the scans of a
    /// projection without it still read it to find the rows (a missing one is an error).
    pub nullable: bool,
    /// How its bytes encode the value.
    pub encoding: Encoding,
    /// Where its bytes are.
    pub source: ColumnSource,
}

/// What a scan does with a stored value that does not decode as its column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BadValues {
    /// The query fails, naming the row and the column (the default).
    #[default]
    Error,
    /// The value reads as NULL. Row keys that do not fit the key layout are errors even so.
    Null,
}

impl BadValues {
    /// The option's spelling (`error` or `null`).
    pub fn name(self) -> &'static str {
        match self {
            BadValues::Error => "error",
            BadValues::Null => "null",
        }
    }

    /// Parses `error` or `null`.
    pub fn parse(text: &str) -> Result<BadValues, MappingError> {
        match text.to_ascii_lowercase().as_str() {
            "error" => Ok(BadValues::Error),
            "null" => Ok(BadValues::Null),
            _ => Err(MappingError::BadValuesOption {
                value: text.to_owned(),
            }),
        }
    }
}

/// Why a mapping was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappingError {
    /// The mapping text does not follow the grammar.
    Syntax {
        /// Byte offset of the offending entry in the mapping text.
        position: usize,
        /// What is wrong there.
        message: String,
    },
    /// The mapping has a different number of entries than the table has columns.
    ColumnCount {
        /// Entries in the mapping.
        entries: usize,
        /// Columns of the table.
        columns: usize,
    },
    /// A column's SQL type cannot be mapped.
    UnsupportedType {
        /// The column.
        column: String,
        /// Its type.
        data_type: String,
    },
    /// No entry maps the row key (or a part of it).
    NoKey,
    /// A key part that takes the rest of the key is not the last key part.
    RestNotLast {
        /// The column mapped to it.
        column: String,
    },
    /// A fixed width that does not suit the column's type and encoding.
    Width {
        /// The column.
        column: String,
        /// What is wrong with it.
        message: String,
    },
    /// An encoding the column's type does not have.
    Encoding {
        /// The column.
        column: String,
        /// Why.
        message: String,
    },
    /// Two columns map the same cell.
    DuplicateCell {
        /// The second column mapped to it.
        column: String,
        /// The cell, `family:qualifier`.
        cell: String,
    },
    /// A column names a family the strata table does not have.
    UnknownFamily {
        /// The column.
        column: String,
        /// The family.
        family: String,
        /// The strata table.
        table: String,
    },
    /// A value of the `bad_values` option other than `error` and `null`.
    BadValuesOption {
        /// The value given.
        value: String,
    },
    /// A stored mapping that cannot be read back.
    Stored {
        /// The SQL table name.
        table: String,
        /// What is wrong.
        message: String,
    },
}

impl fmt::Display for MappingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MappingError::Syntax { position, message } => {
                write!(f, "mapping syntax error at byte {position}: {message}")
            }
            MappingError::ColumnCount { entries, columns } => write!(
                f,
                "the mapping has {entries} entries but the table has {columns} columns (one entry per column, in order)"
            ),
            MappingError::UnsupportedType { column, data_type } => write!(
                f,
                "column {column}: type {data_type} cannot be mapped (use VARCHAR, BYTEA, BOOLEAN, INT, BIGINT, TINYINT UNSIGNED, INT UNSIGNED, BIGINT UNSIGNED or DOUBLE)"
            ),
            MappingError::NoKey => write!(f, "the mapping has no :key entry"),
            MappingError::RestNotLast { column } => write!(
                f,
                "column {column}: a :key part without a width or separator takes the rest of the key, so it must be the last key part"
            ),
            MappingError::Width { column, message } => write!(f, "column {column}: {message}"),
            MappingError::Encoding { column, message } => write!(f, "column {column}: {message}"),
            MappingError::DuplicateCell { column, cell } => {
                write!(f, "column {column}: cell {cell} is already mapped")
            }
            MappingError::UnknownFamily {
                column,
                family,
                table,
            } => write!(
                f,
                "column {column}: table {table} has no column family {family}"
            ),
            MappingError::BadValuesOption { value } => {
                write!(f, "bad_values must be 'error' or 'null', not '{value}'")
            }
            MappingError::Stored { table, message } => {
                write!(f, "the stored mapping of {table} cannot be read: {message}")
            }
        }
    }
}

impl std::error::Error for MappingError {}

/// A SQL table laid over a strata table: its columns and where each one's bytes lie.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Mapping {
    spec: String,
    columns: Vec<MappedColumn>,
    key_parts: Vec<usize>,
    bad_values: BadValues,
}

/// A column declared for a mapping: name, Arrow type, nullability.
pub type ColumnDeclaration = (String, DataType, bool);

impl Mapping {
    /// Parses `spec` for the declared `columns` (one mapping entry per column, in order).
    pub fn parse(
        spec: &str,
        columns: &[ColumnDeclaration],
        bad_values: BadValues,
    ) -> Result<Mapping, MappingError> {
        let entries = split_entries(spec)?;
        if entries.len() != columns.len() {
            return Err(MappingError::ColumnCount {
                entries: entries.len(),
                columns: columns.len(),
            });
        }
        if entries.len() > MAX_MAPPED_COLUMNS {
            return Err(MappingError::Syntax {
                position: 0,
                message: format!("more than {MAX_MAPPED_COLUMNS} entries"),
            });
        }
        let mut mapped = Vec::with_capacity(columns.len());
        let mut key_parts = Vec::new();
        for ((position, entry), (name, data_type, nullable)) in entries.into_iter().zip(columns) {
            let column_type =
                ColumnType::from_arrow(data_type).ok_or_else(|| MappingError::UnsupportedType {
                    column: name.clone(),
                    data_type: data_type.to_string(),
                })?;
            let parsed = parse_entry(entry, position)?;
            let encoding = parsed.encoding.unwrap_or(Encoding::String);
            check_encoding(name, column_type, encoding)?;
            let source = match parsed.target {
                Target::Key(part) => {
                    let part = resolve_key_part(name, column_type, encoding, part)?;
                    key_parts.push(mapped.len());
                    ColumnSource::Key {
                        index: key_parts.len() - 1,
                        part,
                    }
                }
                Target::Cell { family, qualifier } => ColumnSource::Cell { family, qualifier },
            };
            mapped.push(MappedColumn {
                name: name.clone(),
                column_type,
                nullable: *nullable,
                encoding,
                source,
            });
        }
        if key_parts.is_empty() {
            return Err(MappingError::NoKey);
        }
        let mapping = Mapping {
            spec: spec.to_owned(),
            columns: mapped,
            key_parts,
            bad_values,
        };
        mapping.check_key_layout()?;
        mapping.check_duplicate_cells()?;
        Ok(mapping)
    }

    /// The mapping text it was parsed from.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The columns, in SQL order.
    pub fn columns(&self) -> &[MappedColumn] {
        &self.columns
    }

    /// What a scan does with values that do not decode.
    pub fn bad_values(&self) -> BadValues {
        self.bad_values
    }

    /// Indexes (into [`Mapping::columns`]) of the key columns, in key order.
    pub fn key_columns(&self) -> &[usize] {
        &self.key_parts
    }

    /// The Arrow schema of the table. Key columns are never NULL.
    pub fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(
            self.columns
                .iter()
                .map(|c| {
                    let nullable = match c.source {
                        ColumnSource::Key { .. } => false,
                        ColumnSource::Cell { .. } => {
                            c.nullable || self.bad_values == BadValues::Null
                        }
                    };
                    Field::new(&c.name, c.column_type.arrow(), nullable)
                })
                .collect::<Vec<_>>(),
        ))
    }

    /// The families the mapping reads, each once, in mapping order.
    pub fn families(&self) -> Vec<&[u8]> {
        let mut families: Vec<&[u8]> = Vec::new();
        for column in &self.columns {
            if let ColumnSource::Cell { family, .. } = &column.source
                && !families.contains(&family.as_slice())
            {
                families.push(family);
            }
        }
        families
    }

    /// Checks that every mapped family exists in the strata table `table`.
    pub fn check_families(&self, table: &str, families: &[String]) -> Result<(), MappingError> {
        for column in &self.columns {
            if let ColumnSource::Cell { family, .. } = &column.source
                && !families.iter().any(|f| f.as_bytes() == family.as_slice())
            {
                return Err(MappingError::UnknownFamily {
                    column: column.name.clone(),
                    family: String::from_utf8_lossy(family).into_owned(),
                    table: table.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// The byte offset of key part `index` when every part before it has a fixed width.
    pub fn key_part_offset(&self, index: usize) -> Option<usize> {
        let mut offset = 0;
        for &column in self.key_parts.get(..index)? {
            match self.key_part(column)? {
                KeyPart::Fixed(width) => offset += width,
                KeyPart::UntilSeparator(_) | KeyPart::Rest => return None,
            }
        }
        Some(offset)
    }

    /// How the key column `column` (an index into the columns) is cut from the key.
    pub fn key_part(&self, column: usize) -> Option<KeyPart> {
        match self.columns.get(column)?.source {
            ColumnSource::Key { part, .. } => Some(part),
            ColumnSource::Cell { .. } => None,
        }
    }

    /// Cuts `key` into its parts' byte ranges, in key order, into `parts` (cleared first).
    /// `Err` names the first part that does not fit.
    pub fn split_key(&self, key: &[u8], parts: &mut Vec<Range<usize>>) -> Result<(), String> {
        parts.clear();
        let mut at = 0;
        for &column in &self.key_parts {
            let Some(part) = self.key_part(column) else {
                continue;
            };
            let rest = key.get(at..).unwrap_or_default();
            match part {
                KeyPart::Fixed(width) => {
                    if rest.len() < width {
                        return Err(format!(
                            "the key has {} bytes, too short for its {width}-byte part {}",
                            key.len(),
                            self.column_name(column)
                        ));
                    }
                    parts.push(at..at + width);
                    at += width;
                }
                KeyPart::UntilSeparator(separator) => {
                    let Some(len) = rest.iter().position(|&b| b == separator) else {
                        return Err(format!(
                            "no separator {} after part {}",
                            to_string_binary(&[separator]),
                            self.column_name(column)
                        ));
                    };
                    parts.push(at..at + len);
                    at += len + 1;
                }
                KeyPart::Rest => {
                    parts.push(at..key.len());
                    at = key.len();
                }
            }
        }
        if at != key.len() {
            return Err(format!(
                "{} bytes are left over after the last key part",
                key.len() - at
            ));
        }
        Ok(())
    }

    fn column_name(&self, column: usize) -> &str {
        self.columns.get(column).map_or("?", |c| c.name.as_str())
    }

    /// The text stored for the declared columns: `name type nullable` per line (names may
    /// hold any character but a newline, which SQL identifiers in strata may not).
    pub fn columns_text(&self) -> String {
        self.columns
            .iter()
            .map(|c| {
                format!(
                    "{}\t{}\t{}",
                    c.column_type.name(),
                    if c.nullable { "null" } else { "not_null" },
                    c.name
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The declared columns back from [`Mapping::columns_text`].
    pub fn parse_columns_text(text: &str) -> Result<Vec<ColumnDeclaration>, String> {
        text.lines()
            .map(|line| {
                let mut fields = line.splitn(3, '\t');
                let (Some(ty), Some(nullable), Some(name)) =
                    (fields.next(), fields.next(), fields.next())
                else {
                    return Err(format!("malformed column line {line:?}"));
                };
                let ty =
                    ColumnType::from_name(ty).ok_or_else(|| format!("unknown column type {ty}"))?;
                Ok((name.to_owned(), ty.arrow(), nullable == "null"))
            })
            .collect()
    }

    fn check_key_layout(&self) -> Result<(), MappingError> {
        let last = self.key_parts.len() - 1;
        for (index, &column) in self.key_parts.iter().enumerate() {
            if self.key_part(column) == Some(KeyPart::Rest) && index != last {
                return Err(MappingError::RestNotLast {
                    column: self.column_name(column).to_owned(),
                });
            }
        }
        Ok(())
    }

    fn check_duplicate_cells(&self) -> Result<(), MappingError> {
        for (i, column) in self.columns.iter().enumerate() {
            if let ColumnSource::Cell { family, qualifier } = &column.source {
                let earlier = self.columns.get(..i).unwrap_or_default();
                if earlier.iter().any(|c| c.source == column.source) {
                    return Err(MappingError::DuplicateCell {
                        column: column.name.clone(),
                        cell: format!(
                            "{}:{}",
                            String::from_utf8_lossy(family),
                            to_string_binary(qualifier)
                        ),
                    });
                }
            }
        }
        Ok(())
    }
}

/// An entry as written, before the column's type is known.
struct ParsedEntry {
    target: Target,
    encoding: Option<Encoding>,
}

enum Target {
    Key(Option<KeyPart>),
    Cell { family: Vec<u8>, qualifier: Vec<u8> },
}

/// The entries of a mapping with their byte offsets; commas inside `[...]` do not split.
fn split_entries(spec: &str) -> Result<Vec<(usize, &str)>, MappingError> {
    let mut entries = Vec::new();
    let mut start = 0;
    let mut depth = 0usize;
    for (i, c) in spec.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                entries.push((start, spec.get(start..i).unwrap_or_default()));
                start = i + 1;
            }
            _ => {}
        }
    }
    entries.push((start, spec.get(start..).unwrap_or_default()));
    for (position, entry) in &entries {
        if entry.trim().is_empty() {
            return Err(MappingError::Syntax {
                position: *position,
                message: "empty entry".to_owned(),
            });
        }
    }
    Ok(entries)
}

fn parse_entry(entry: &str, position: usize) -> Result<ParsedEntry, MappingError> {
    let syntax = |message: String| MappingError::Syntax { position, message };
    let entry = entry.trim();
    // The encoding follows the last '#' (a '#' in a qualifier is written \x23).
    let (body, encoding) = match entry.rsplit_once('#') {
        Some((body, letter)) => (body, Some(parse_encoding(letter).map_err(syntax)?)),
        None => (entry, None),
    };
    if let Some(rest) = body.strip_prefix(":key") {
        let part = if rest.is_empty() {
            None
        } else {
            let inner = rest
                .strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .ok_or_else(|| {
                    syntax(format!(
                        "expected :key, :key[WIDTH] or :key[..SEPARATOR], found {body:?}"
                    ))
                })?;
            Some(parse_key_part(inner).map_err(syntax)?)
        };
        return Ok(ParsedEntry {
            target: Target::Key(part),
            encoding,
        });
    }
    let Some((family, qualifier)) = body.split_once(':') else {
        return Err(syntax(format!(
            "expected :key or family:qualifier, found {body:?}"
        )));
    };
    if family.is_empty() {
        return Err(syntax(format!("{body:?} has an empty family")));
    }
    if family.bytes().any(|b| b.is_ascii_control() || b == b'\\') {
        return Err(syntax(format!("family {family:?} is not printable")));
    }
    Ok(ParsedEntry {
        target: Target::Cell {
            family: family.as_bytes().to_vec(),
            qualifier: from_string_binary(qualifier),
        },
        encoding,
    })
}

fn parse_encoding(letter: &str) -> Result<Encoding, String> {
    match letter.to_ascii_lowercase().as_str() {
        "s" | "string" => Ok(Encoding::String),
        "b" | "binary" => Ok(Encoding::Binary),
        "o" | "ordered" => Ok(Encoding::Ordered),
        other => Err(format!(
            "unknown encoding #{other} (use #s, #b or #o: string, binary, ordered)"
        )),
    }
}

fn parse_key_part(inner: &str) -> Result<KeyPart, String> {
    if let Some(separator) = inner.strip_prefix("..") {
        let bytes = from_string_binary(separator);
        let [byte] = bytes.as_slice() else {
            return Err(format!(
                "a key separator is one byte (write others as \\xHH), found {separator:?}"
            ));
        };
        return Ok(KeyPart::UntilSeparator(*byte));
    }
    let width: usize = inner
        .parse()
        .map_err(|_| format!("key part width {inner:?} is not a number"))?;
    if width == 0 || width > strata::MAX_ROW_KEY_BYTES {
        return Err(format!(
            "key part width {width} is outside 1..={}",
            strata::MAX_ROW_KEY_BYTES
        ));
    }
    Ok(KeyPart::Fixed(width))
}

fn check_encoding(
    column: &str,
    column_type: ColumnType,
    encoding: Encoding,
) -> Result<(), MappingError> {
    if encoding == Encoding::Ordered
        && matches!(column_type, ColumnType::Float64 | ColumnType::Boolean)
    {
        return Err(MappingError::Encoding {
            column: column.to_owned(),
            message: format!(
                "{} has no ordered encoding (#o is for integers, text and bytes)",
                column_type.name()
            ),
        });
    }
    Ok(())
}

/// The key part of a column: the width given, implied by a binary number, or the rest.
fn resolve_key_part(
    column: &str,
    column_type: ColumnType,
    encoding: Encoding,
    written: Option<KeyPart>,
) -> Result<KeyPart, MappingError> {
    let binary_width = match encoding {
        Encoding::String => None,
        Encoding::Binary | Encoding::Ordered => column_type.binary_width(),
    };
    match (written, binary_width) {
        (None, Some(width)) => Ok(KeyPart::Fixed(width)),
        (None, None) => Ok(KeyPart::Rest),
        (Some(KeyPart::Fixed(width)), Some(expected)) if width != expected => {
            Err(MappingError::Width {
                column: column.to_owned(),
                message: format!(
                    "a {} in encoding #{} is {expected} bytes, not {width}",
                    column_type.name(),
                    encoding.letter()
                ),
            })
        }
        (Some(KeyPart::UntilSeparator(_)), Some(_)) => Err(MappingError::Width {
            column: column.to_owned(),
            message: format!(
                "a {} in encoding #{} has a fixed width; it cannot end at a separator",
                column_type.name(),
                encoding.letter()
            ),
        }),
        (Some(part), _) => Ok(part),
    }
}

/// True when the bytes of values of this type and encoding sort as the values do (unsigned
/// byte order), so that key ranges and ordering follow the values.
pub fn order_preserving(column_type: ColumnType, encoding: Encoding) -> bool {
    match column_type {
        ColumnType::Utf8 | ColumnType::Binary => true,
        ColumnType::UInt8 | ColumnType::UInt32 | ColumnType::UInt64 => encoding != Encoding::String,
        ColumnType::Int32 | ColumnType::Int64 => encoding == Encoding::Ordered,
        ColumnType::Boolean | ColumnType::Float64 => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(types: &[(&str, DataType)]) -> Vec<ColumnDeclaration> {
        types
            .iter()
            .map(|(n, t)| ((*n).to_owned(), t.clone(), true))
            .collect()
    }

    #[test]
    fn hive_style_mapping_parses() {
        let m = Mapping::parse(
            ":key,info:name,info:age#b",
            &columns(&[
                ("id", DataType::Utf8),
                ("name", DataType::Utf8),
                ("age", DataType::Int64),
            ]),
            BadValues::Error,
        )
        .unwrap();
        assert_eq!(m.key_columns(), &[0]);
        assert_eq!(m.key_part(0), Some(KeyPart::Rest));
        assert_eq!(m.columns()[2].encoding, Encoding::Binary);
        assert_eq!(
            m.columns()[1].source,
            ColumnSource::Cell {
                family: b"info".to_vec(),
                qualifier: b"name".to_vec()
            }
        );
        assert_eq!(m.columns()[1].encoding, Encoding::String);
        assert!(!m.schema().field(0).is_nullable());
    }

    #[test]
    fn composite_keys_take_widths_from_binary_numbers() {
        let m = Mapping::parse(
            ":key#b,:key#b,:key[1]#b,:key#o,:key[..|],:key",
            &columns(&[
                ("hash", DataType::UInt32),
                ("user", DataType::UInt64),
                ("kind", DataType::UInt8),
                ("rts", DataType::Int64),
                ("word", DataType::Utf8),
                ("rest", DataType::Binary),
            ]),
            BadValues::Error,
        )
        .unwrap();
        let parts: Vec<_> = (0..6).map(|c| m.key_part(c).unwrap()).collect();
        assert_eq!(
            parts,
            vec![
                KeyPart::Fixed(4),
                KeyPart::Fixed(8),
                KeyPart::Fixed(1),
                KeyPart::Fixed(8),
                KeyPart::UntilSeparator(b'|'),
                KeyPart::Rest
            ]
        );
        assert_eq!(m.key_part_offset(3), Some(13));
        assert_eq!(m.key_part_offset(5), None);
        let mut key = vec![0u8; 21];
        key.extend_from_slice(b"abc|xyz");
        let mut ranges = Vec::new();
        m.split_key(&key, &mut ranges).unwrap();
        assert_eq!(ranges, vec![0..4, 4..12, 12..13, 13..21, 21..24, 25..28]);
        let err = m.split_key(&key[..10], &mut ranges).unwrap_err();
        assert!(err.contains("too short"), "{err}");
        let err = m.split_key(&key[..24], &mut ranges).unwrap_err();
        assert!(err.contains("no separator"), "{err}");
    }

    #[test]
    fn fixed_layout_refuses_left_over_bytes() {
        let m = Mapping::parse(
            ":key[2],:key[2]",
            &columns(&[("a", DataType::Utf8), ("b", DataType::Utf8)]),
            BadValues::Error,
        )
        .unwrap();
        let mut ranges = Vec::new();
        m.split_key(b"abcd", &mut ranges).unwrap();
        let err = m.split_key(b"abcde", &mut ranges).unwrap_err();
        assert!(err.contains("left over"), "{err}");
    }

    #[test]
    fn bad_mappings_say_what_is_wrong() {
        let two = columns(&[("a", DataType::Utf8), ("b", DataType::Int64)]);
        let cases: Vec<(&str, Vec<ColumnDeclaration>, &str)> = vec![
            (":key", two.clone(), "1 entries but the table has 2"),
            (":key,,", two.clone(), "empty entry"),
            (":key,f:q#x", two.clone(), "unknown encoding #x"),
            (":key,fq", two.clone(), "expected :key or family:qualifier"),
            (":key[abc],f:q", two.clone(), "not a number"),
            (":key[0],f:q", two.clone(), "outside 1..="),
            (":key[..ab],f:q", two.clone(), "one byte"),
            ("f:a,f:q", two.clone(), "no :key entry"),
            (
                ":key,f:q",
                columns(&[("a", DataType::Utf8), ("b", DataType::Date32)]),
                "cannot be mapped",
            ),
            (
                ":key,:key[2]",
                columns(&[("a", DataType::Utf8), ("b", DataType::Utf8)]),
                "must be the last key part",
            ),
            (
                ":key[4],:key",
                columns(&[("a", DataType::Int64), ("b", DataType::Utf8)]),
                "ok",
            ),
            (
                ":key[4]#b,:key",
                columns(&[("a", DataType::Int64), ("b", DataType::Utf8)]),
                "is 8 bytes, not 4",
            ),
            (
                ":key,f:q,f:q",
                columns(&[
                    ("a", DataType::Utf8),
                    ("b", DataType::Utf8),
                    ("c", DataType::Utf8),
                ]),
                "already mapped",
            ),
            (
                ":key,f:q#o",
                columns(&[("a", DataType::Utf8), ("b", DataType::Float64)]),
                "no ordered encoding",
            ),
        ];
        for (spec, columns, expected) in cases {
            match Mapping::parse(spec, &columns, BadValues::Error) {
                Ok(_) => assert_eq!(expected, "ok", "{spec} parsed"),
                Err(e) => assert!(e.to_string().contains(expected), "{spec}: {e}"),
            }
        }
    }

    #[test]
    fn escaped_qualifiers_and_separators() {
        let m = Mapping::parse(
            ":key[..\\x20],:key,f:a\\x2Cb\\x23c#b",
            &columns(&[
                ("t", DataType::Utf8),
                ("w", DataType::Utf8),
                ("n", DataType::Int64),
            ]),
            BadValues::Null,
        )
        .unwrap();
        assert_eq!(m.key_part(0), Some(KeyPart::UntilSeparator(b' ')));
        assert_eq!(
            m.columns()[2].source,
            ColumnSource::Cell {
                family: b"f".to_vec(),
                qualifier: b"a,b#c".to_vec()
            }
        );
        assert!(m.schema().field(2).is_nullable());
    }

    #[test]
    fn columns_text_round_trips() {
        let declared = vec![
            ("id".to_owned(), DataType::Utf8, false),
            ("n x".to_owned(), DataType::Int64, true),
        ];
        let m = Mapping::parse(":key,f:n#b", &declared, BadValues::Error).unwrap();
        assert_eq!(
            Mapping::parse_columns_text(&m.columns_text()).unwrap(),
            declared
        );
    }

    #[test]
    fn order_preservation_by_type_and_encoding() {
        assert!(order_preserving(ColumnType::UInt32, Encoding::Binary));
        assert!(!order_preserving(ColumnType::Int32, Encoding::Binary));
        assert!(order_preserving(ColumnType::Int64, Encoding::Ordered));
        assert!(!order_preserving(ColumnType::UInt64, Encoding::String));
        assert!(order_preserving(ColumnType::Utf8, Encoding::String));
    }
}
