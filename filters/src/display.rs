//! Printing filters in the filter language. `parse(&filter.to_string()) == Ok(filter)` holds for
//! every valid filter (see `tests/language.rs`).
//!
//! Quoting rules (the parser's mirror image, documented in `docs/filters.md`):
//! - arguments of HBase's own filters are literal: `'it''s'`; bytes that are not printable
//!   UTF-8 use the strata binary form `b'\x00\xFF'`;
//! - arguments of the strata extensions (`FuzzyRowFilter`, `MultiRowRangeFilter`,
//!   `RowMaskFilter`) are always binary strings written without the `b`: `'\x00\x01abc'`.

use std::fmt::{self, Display, Formatter, Write};

use crate::escape::to_string_binary;
use crate::model::{
    ColumnOffset, ColumnValueTest, Comparator, CompareOp, DependentColumn, Filter, FilterList,
    ListOperator,
};

/// Writes `'...'` with single quotes doubled.
fn write_quoted(out: &mut Formatter<'_>, prefix: &str, text: &str) -> fmt::Result {
    out.write_str(prefix)?;
    out.write_char('\'')?;
    for c in text.chars() {
        if c == '\'' {
            out.write_str("''")?;
        } else {
            out.write_char(c)?;
        }
    }
    out.write_char('\'')
}

/// A literal argument of an HBase filter: plain quotes when the bytes are printable UTF-8,
/// the binary form `b'...'` otherwise.
pub(crate) fn write_literal(out: &mut Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.chars().any(char::is_control) => write_quoted(out, "", text),
        _ => write_quoted(out, "b", &to_string_binary(bytes)),
    }
}

/// A binary argument of a strata extension: always `toStringBinary` inside plain quotes.
pub(crate) fn write_binary(out: &mut Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    write_quoted(out, "", &to_string_binary(bytes))
}

/// The comparator as the bytes of its language string, e.g. `binary:abc`.
pub(crate) fn comparator_bytes(comparator: &Comparator) -> Vec<u8> {
    let mut bytes = comparator.type_name().as_bytes().to_vec();
    bytes.push(b':');
    match comparator {
        Comparator::Binary(value) | Comparator::BinaryPrefix(value) | Comparator::Bit(_, value) => {
            bytes.extend_from_slice(value)
        }
        Comparator::Substring(text) | Comparator::RegexString(text) => {
            bytes.extend_from_slice(text.as_bytes())
        }
        Comparator::Long(value) => bytes.extend_from_slice(value.to_string().as_bytes()),
        Comparator::Null => {}
    }
    bytes
}

impl Display for Comparator {
    fn fmt(&self, out: &mut Formatter<'_>) -> fmt::Result {
        write_literal(out, &comparator_bytes(self))
    }
}

impl Display for CompareOp {
    fn fmt(&self, out: &mut Formatter<'_>) -> fmt::Result {
        out.write_str(self.symbol())
    }
}

/// Writes a member of a list or the operand of SKIP/WHILE, parenthesizing nested lists.
fn write_operand(out: &mut Formatter<'_>, filter: &Filter) -> fmt::Result {
    if matches!(filter, Filter::List(_)) {
        write!(out, "({filter})")
    } else {
        write!(out, "{filter}")
    }
}

fn write_list(out: &mut Formatter<'_>, list: &FilterList) -> fmt::Result {
    let separator = match list.operator {
        ListOperator::MustPassAll => " AND ",
        ListOperator::MustPassOne => " OR ",
    };
    for (index, member) in list.filters.iter().enumerate() {
        if index > 0 {
            out.write_str(separator)?;
        }
        write_operand(out, member)?;
    }
    Ok(())
}

fn write_column_value(out: &mut Formatter<'_>, name: &str, test: &ColumnValueTest) -> fmt::Result {
    write!(out, "{name}(")?;
    write_literal(out, &test.family)?;
    out.write_str(", ")?;
    write_literal(out, &test.qualifier)?;
    write!(out, ", {}, {}", test.op, test.comparator)?;
    if test.filter_if_missing || !test.latest_version_only {
        write!(
            out,
            ", {}, {}",
            test.filter_if_missing, test.latest_version_only
        )?;
    }
    out.write_char(')')
}

/// HBase's shortest form: 2 arguments without a value test and with the reference column
/// kept, 3 with it dropped, 5 with a value test.
fn write_dependent_column(
    out: &mut Formatter<'_>,
    name: &str,
    dependent: &DependentColumn,
) -> fmt::Result {
    write!(out, "{name}(")?;
    write_literal(out, &dependent.family)?;
    out.write_str(", ")?;
    write_literal(out, &dependent.qualifier)?;
    match &dependent.value_test {
        Some((op, comparator)) => write!(
            out,
            ", {}, {op}, {comparator}",
            dependent.drop_dependent_column
        )?,
        None if dependent.drop_dependent_column => out.write_str(", true")?,
        None => {}
    }
    out.write_char(')')
}

/// Writes `Name(arg, arg, ...)` where each argument is produced by `write_arg`.
fn write_call<T>(
    out: &mut Formatter<'_>,
    name: &str,
    args: &[T],
    mut write_arg: impl FnMut(&mut Formatter<'_>, &T) -> fmt::Result,
) -> fmt::Result {
    write!(out, "{name}(")?;
    for (index, arg) in args.iter().enumerate() {
        if index > 0 {
            out.write_str(", ")?;
        }
        write_arg(out, arg)?;
    }
    out.write_char(')')
}

impl Display for Filter {
    fn fmt(&self, out: &mut Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match self {
            Filter::KeyOnly {
                len_as_value: false,
            } => write!(out, "{name}()"),
            Filter::KeyOnly { len_as_value: true } => write!(out, "{name}(true)"),
            Filter::FirstKeyOnly => write!(out, "{name}()"),
            Filter::Prefix { prefix } | Filter::ColumnPrefix { prefix } => {
                write_call(out, name, &[prefix], |out, bytes| write_literal(out, bytes))
            }
            Filter::InclusiveStop { stop_row } => {
                write_call(out, name, &[stop_row], |out, bytes| {
                    write_literal(out, bytes)
                })
            }
            Filter::MultipleColumnPrefix { prefixes } => {
                write_call(out, name, prefixes, |out, bytes| write_literal(out, bytes))
            }
            Filter::ColumnCountGet { limit } => write!(out, "{name}({limit})"),
            Filter::Page { page_size } => write!(out, "{name}({page_size})"),
            Filter::ColumnPagination {
                limit,
                offset: ColumnOffset::Index(offset),
            } => {
                write!(out, "{name}({limit}, {offset})")
            }
            Filter::ColumnPagination {
                limit,
                offset: ColumnOffset::Qualifier(qualifier),
            } => {
                write!(out, "{name}({limit}, ")?;
                write_literal(out, qualifier)?;
                out.write_char(')')
            }
            Filter::Timestamps { timestamps } => {
                write_call(out, name, timestamps, |out, ts| write!(out, "{ts}"))
            }
            Filter::Row { op, comparator }
            | Filter::Family { op, comparator }
            | Filter::Qualifier { op, comparator }
            | Filter::Value { op, comparator } => write!(out, "{name}({op}, {comparator})"),
            Filter::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => {
                write!(out, "{name}(")?;
                write_literal(out, min)?;
                write!(out, ", {min_inclusive}, ")?;
                write_literal(out, max)?;
                write!(out, ", {max_inclusive})")
            }
            Filter::SingleColumnValue(test) | Filter::SingleColumnValueExclude(test) => {
                write_column_value(out, name, test)
            }
            Filter::ColumnValue {
                family,
                qualifier,
                op,
                comparator,
            } => {
                write!(out, "{name}(")?;
                write_literal(out, family)?;
                out.write_str(", ")?;
                write_literal(out, qualifier)?;
                write!(out, ", {op}, {comparator})")
            }
            Filter::DependentColumn(dependent) => write_dependent_column(out, name, dependent),
            Filter::Skip(inner) => {
                out.write_str("SKIP ")?;
                write_operand(out, inner)
            }
            Filter::While(inner) => {
                out.write_str("WHILE ")?;
                write_operand(out, inner)
            }
            Filter::List(list) => write_list(out, list),
            Filter::FuzzyRow { rules } => write_call(out, name, rules, |out, rule| {
                write_binary(out, &rule.key)?;
                out.write_str(", ")?;
                write_binary(out, &rule.mask)
            }),
            Filter::MultiRowRange { ranges } => write_call(out, name, ranges, |out, range| {
                write_binary(out, &range.start)?;
                write!(out, ", {}, ", range.start_inclusive)?;
                write_binary(out, &range.stop)?;
                write!(out, ", {}", range.stop_inclusive)
            }),
            Filter::RowMask(mask) => {
                write!(out, "{name}({}, ", mask.offset)?;
                write_binary(out, &mask.mask)?;
                write!(out, ", {}, ", mask.op)?;
                write_binary(out, &mask.value)?;
                out.write_char(')')
            }
        }
    }
}
