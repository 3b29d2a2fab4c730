//! Filter pushdown: SQL predicates compiled into what strata's scans evaluate themselves —
//! key ranges (the scan's bounds and the partitions it touches, a `MultiRowRangeFilter` for
//! several), row-key filters run as block kernels (`RowFilter`, `RowMaskFilter` on composite
//! key parts), value tests (`SingleColumnValueFilter` on mapped columns, `ValueFilter` on the
//! cells view) and, for the cells view, the families, columns and time range a scan reads.
//!
//! Each predicate DataFusion offers is compiled on its own ([`compile`]); the answer says how
//! much of it the engine decides:
//!
//! - `Exact`: the engine keeps exactly the rows that pass (for rows whose bytes decode under
//!   the mapping; see `docs/sql.md` on undecodable rows), so DataFusion does not test it again;
//! - `Inexact`: the engine keeps a superset (it narrows the scan), DataFusion tests again;
//! - `Unsupported`: nothing of it can be pushed.
//!
//! The rules per predicate kind, and why, are in `docs/sql.md` ("What is pushed down").

use std::collections::BTreeSet;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::{
    Between, BinaryExpr, Expr, Like, Operator, TableProviderFilterPushDown,
};
use strata::Filter;
use strata::filters::model::{ColumnValueTest, Comparator, CompareOp, RowMask};

use crate::codec::{Value, encode, scalar_value};
use crate::mapping::{
    BadValues, ColumnSource, ColumnType, Encoding, KeyPart, MappedColumn, Mapping, order_preserving,
};
use crate::ranges::{KeyRange, KeyRanges, MAX_KEY_RANGES, prefix_successor};
use crate::view::{CELLS_FAMILY, CELLS_QUALIFIER, CELLS_ROW, CELLS_TIMESTAMP, CELLS_VALUE, View};

/// A constraint on one part of a composite key, used to derive key ranges from several
/// predicates together (equal leading parts make a prefix, a range on the next part bounds it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PartConstraint {
    /// The part (index among the key parts) is one of these encoded values.
    Equal { part: usize, values: Vec<Vec<u8>> },
    /// The part lies between these encoded bounds (`true`: inclusive).
    Range {
        part: usize,
        low: Option<(Vec<u8>, bool)>,
        high: Option<(Vec<u8>, bool)>,
    },
}

/// What a scan of the cells view reads besides key ranges and filters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CellNarrowing {
    /// Only these families (`None`: all).
    pub families: Option<BTreeSet<Vec<u8>>>,
    /// Only these qualifiers, a hint that becomes the scan's columns when the families are
    /// known too (`None`: all).
    pub qualifiers: Option<BTreeSet<Vec<u8>>>,
    /// Only timestamps in `[min, max)` (`None`: all).
    pub time: Option<(i64, i64)>,
}

impl CellNarrowing {
    fn is_empty(&self) -> bool {
        self.families.is_none() && self.qualifiers.is_none() && self.time.is_none()
    }

    fn and(self, other: CellNarrowing) -> CellNarrowing {
        fn both<T: Ord + Clone>(
            a: Option<BTreeSet<T>>,
            b: Option<BTreeSet<T>>,
        ) -> Option<BTreeSet<T>> {
            match (a, b) {
                (None, x) | (x, None) => x,
                (Some(a), Some(b)) => Some(a.intersection(&b).cloned().collect()),
            }
        }
        CellNarrowing {
            families: both(self.families, other.families),
            qualifiers: both(self.qualifiers, other.qualifiers),
            time: match (self.time, other.time) {
                (None, x) | (x, None) => x,
                (Some((a0, a1)), Some((b0, b1))) => Some((a0.max(b0), a1.min(b1))),
            },
        }
    }
}

/// A predicate (or a conjunction of them) compiled for the engine.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pushed {
    /// True when the engine decides the predicate exactly.
    pub exact: bool,
    /// Rows outside these key ranges cannot pass.
    pub ranges: KeyRanges,
    /// A filter the passing rows (cells, in the cells view) pass.
    pub filter: Option<Filter>,
    /// Whether `filter` holds cell-level filters (value, qualifier), which decide cells
    /// rather than rows.
    pub cell_level: bool,
    /// Cells-view scan narrowing.
    pub cells: CellNarrowing,
    /// Composite key part constraints, for range derivation only.
    pub parts: Vec<PartConstraint>,
}

impl Pushed {
    fn ranges(ranges: KeyRanges) -> Pushed {
        Pushed {
            exact: true,
            ranges,
            filter: None,
            cell_level: false,
            cells: CellNarrowing::default(),
            parts: Vec::new(),
        }
    }

    fn filter(filter: Filter, exact: bool) -> Pushed {
        Pushed {
            exact,
            filter: Some(filter),
            ..Pushed::ranges(KeyRanges::all())
        }
    }

    /// Nothing narrowed, nothing decided: every row passes as far as the engine knows.
    pub(crate) fn everything() -> Pushed {
        Pushed::ranges(KeyRanges::all())
    }

    fn inexact(mut self) -> Pushed {
        self.exact = false;
        self
    }

    fn with_part(mut self, constraint: PartConstraint) -> Pushed {
        self.parts.push(constraint);
        self
    }

    /// Both predicates.
    pub(crate) fn and(self, other: Pushed) -> Pushed {
        let filter = match (self.filter, other.filter) {
            (None, f) | (f, None) => f,
            (Some(a), Some(b)) => Filter::all(vec![a, b]).ok(),
        };
        Pushed {
            exact: self.exact && other.exact,
            ranges: self.ranges.intersect(&other.ranges),
            filter,
            cell_level: self.cell_level || other.cell_level,
            cells: self.cells.and(other.cells),
            parts: self.parts.into_iter().chain(other.parts).collect(),
        }
    }

    /// The predicate as one filter that can sit in an OR list (its ranges as `RowFilter`s),
    /// `None` when it has narrowing a filter cannot say (cells-view families or time) or no
    /// narrowing at all.
    fn as_filter(&self) -> Option<Filter> {
        if !self.cells.is_empty() {
            return None;
        }
        let ranges = if self.ranges.is_all() {
            None
        } else {
            Some(row_filter_of_ranges(&self.ranges)?)
        };
        match (ranges, &self.filter) {
            (None, None) => None,
            (Some(r), None) => Some(r),
            (None, Some(f)) => Some(f.clone()),
            (Some(r), Some(f)) => Filter::all(vec![r, f.clone()]).ok(),
        }
    }

    /// Either predicate; `None` when one of them cannot be said as a filter, or when they mix
    /// row-level and cell-level filters (whose OR the engine decides cell by cell).
    fn or(self, other: Pushed) -> Option<Pushed> {
        if self.ranges.is_none() {
            return Some(other);
        }
        if other.ranges.is_none() {
            return Some(self);
        }
        let pure_ranges =
            |p: &Pushed| p.filter.is_none() && p.cells.is_empty() && !p.ranges.is_all();
        if pure_ranges(&self) && pure_ranges(&other) {
            return Some(Pushed {
                exact: self.exact && other.exact,
                ..Pushed::ranges(self.ranges.union(&other.ranges))
            });
        }
        let row_level = |p: &Pushed| !p.cell_level || !p.ranges.is_all();
        if (self.cell_level || other.cell_level) && (row_level(&self) || row_level(&other)) {
            return None;
        }
        let filter = Filter::any(vec![self.as_filter()?, other.as_filter()?]).ok()?;
        Some(Pushed {
            exact: self.exact && other.exact,
            ranges: self.ranges.union(&other.ranges),
            cell_level: self.cell_level || other.cell_level,
            ..Pushed::filter(filter, true)
        })
    }

    /// The pushdown answer for DataFusion.
    pub(crate) fn decision(&self) -> TableProviderFilterPushDown {
        if self.exact {
            TableProviderFilterPushDown::Exact
        } else {
            TableProviderFilterPushDown::Inexact
        }
    }
}

/// A `MultiRowRangeFilter` over `ranges` (a filter that keeps nothing for an empty set).
pub(crate) fn ranges_filter(ranges: &KeyRanges) -> Filter {
    if ranges.is_none() {
        // No key is below the empty key: a row filter no row passes.
        return Filter::Row {
            op: CompareOp::Less,
            comparator: Comparator::Binary(Vec::new()),
        };
    }
    Filter::MultiRowRange {
        ranges: ranges.ranges().iter().map(KeyRange::to_row_range).collect(),
    }
}

/// `ranges` as `RowFilter` comparisons. Unlike a `MultiRowRangeFilter`, which excludes rows
/// only at HBase's row-key stage (so in an OR list, where another member lets the key stage
/// pass, it excludes nothing), a `RowFilter` also fails the whole row, so it keeps its meaning
/// inside OR lists.
fn row_filter_of_ranges(ranges: &KeyRanges) -> Option<Filter> {
    let row = |op, key: &[u8]| Filter::Row {
        op,
        comparator: Comparator::Binary(key.to_vec()),
    };
    if ranges.is_none() {
        return Some(row(CompareOp::Less, b""));
    }
    let each: Vec<Filter> = ranges
        .ranges()
        .iter()
        .map(|range| {
            if range.end.as_deref() == Some(crate::ranges::successor(&range.start).as_slice()) {
                return Some(row(CompareOp::Equal, &range.start));
            }
            let mut bounds = Vec::new();
            if !range.start.is_empty() {
                bounds.push(row(CompareOp::GreaterOrEqual, &range.start));
            }
            if let Some(end) = &range.end {
                bounds.push(row(CompareOp::Less, end));
            }
            Filter::all(bounds).ok()
        })
        .collect::<Option<_>>()?;
    Filter::any(each).ok()
}

/// Compiles one predicate over `view`; `None` when nothing of it can be pushed.
pub(crate) fn compile(expr: &Expr, view: &View) -> Option<Pushed> {
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And => match (compile(left, view), compile(right, view)) {
                (Some(a), Some(b)) => Some(a.and(b)),
                // One side alone is a superset of the conjunction.
                (Some(one), None) | (None, Some(one)) => Some(one.inexact()),
                (None, None) => None,
            },
            Operator::Or => compile(left, view)?.or(compile(right, view)?),
            _ => {
                let op = compare_op(*op)?;
                if let (Some(column), Some(literal)) = (column_of(left, view), literal(right)) {
                    compare(view, column, op, literal)
                } else if let (Some(literal), Some(column)) =
                    (literal(left), column_of(right, view))
                {
                    compare(view, column, flip(op), literal)
                } else {
                    None
                }
            }
        },
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) => {
            let column = column_of(expr, view)?;
            let low = compare(view, column, CompareOp::GreaterOrEqual, literal(low)?);
            let high = compare(view, column, CompareOp::LessOrEqual, literal(high)?);
            match (low, high) {
                (Some(a), Some(b)) => Some(a.and(b)),
                (Some(one), None) | (None, Some(one)) => Some(one.inexact()),
                (None, None) => None,
            }
        }
        Expr::InList(InList {
            expr,
            list,
            negated: false,
        }) => {
            let column = column_of(expr, view)?;
            if list.is_empty() || list.len() > MAX_KEY_RANGES {
                return None;
            }
            let literals: Vec<&ScalarValue> = list.iter().map(literal).collect::<Option<_>>()?;
            in_list(view, column, &literals)
        }
        Expr::Like(Like {
            negated: false,
            expr,
            pattern,
            escape_char,
            case_insensitive: false,
        }) => {
            let column = column_of(expr, view)?;
            let prefix = like_prefix(literal(pattern)?, *escape_char)?;
            like(view, column, prefix.as_bytes())
        }
        _ => None,
    }
}

/// The column an expression reads: a plain column, or the cells view's binary columns read
/// as text (`CAST(row AS VARCHAR)`: the cast changes no byte).
fn column_of(expr: &Expr, view: &View) -> Option<usize> {
    match expr {
        Expr::Column(column) => view.schema().index_of(&column.name).ok(),
        Expr::Cast(cast)
            if matches!(view, View::Cells { .. })
                && matches!(
                    cast.field.data_type(),
                    DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
                ) =>
        {
            let index = column_of(&cast.expr, view)?;
            matches!(index, CELLS_ROW | CELLS_QUALIFIER | CELLS_VALUE).then_some(index)
        }
        _ => None,
    }
}

fn literal(expr: &Expr) -> Option<&ScalarValue> {
    match expr {
        Expr::Literal(value, _) if !value.is_null() => Some(value),
        _ => None,
    }
}

fn compare_op(op: Operator) -> Option<CompareOp> {
    Some(match op {
        Operator::Eq => CompareOp::Equal,
        Operator::NotEq => CompareOp::NotEqual,
        Operator::Lt => CompareOp::Less,
        Operator::LtEq => CompareOp::LessOrEqual,
        Operator::Gt => CompareOp::Greater,
        Operator::GtEq => CompareOp::GreaterOrEqual,
        _ => return None,
    })
}

/// `literal OP column` as `column OP' literal`.
fn flip(op: CompareOp) -> CompareOp {
    match op {
        CompareOp::Less => CompareOp::Greater,
        CompareOp::LessOrEqual => CompareOp::GreaterOrEqual,
        CompareOp::Greater => CompareOp::Less,
        CompareOp::GreaterOrEqual => CompareOp::LessOrEqual,
        other => other,
    }
}

/// The prefix of a `LIKE 'prefix%'` pattern; `None` for any other pattern.
fn like_prefix(pattern: &ScalarValue, escape: Option<char>) -> Option<String> {
    let text = match pattern {
        ScalarValue::Utf8(Some(t))
        | ScalarValue::Utf8View(Some(t))
        | ScalarValue::LargeUtf8(Some(t)) => t,
        _ => return None,
    };
    let prefix = text.strip_suffix('%')?;
    let special = |c: char| c == '%' || c == '_' || c == '\\' || Some(c) == escape;
    (!prefix.chars().any(special)).then(|| prefix.to_owned())
}

/// Key ranges of `column OP value` on the whole key (or a composite key's first part,
/// whose ordering is the key's).
fn leading_ranges(op: CompareOp, value: &[u8], ordered: bool) -> Option<KeyRanges> {
    let range = match op {
        CompareOp::Equal => return Some(KeyRanges::from_ranges(vec![KeyRange::point(value)])),
        CompareOp::Less if ordered => KeyRange {
            start: Vec::new(),
            end: Some(value.to_vec()),
        },
        CompareOp::LessOrEqual if ordered => KeyRange {
            start: Vec::new(),
            end: Some(crate::ranges::successor(value)),
        },
        CompareOp::Greater if ordered => KeyRange {
            start: crate::ranges::successor(value),
            end: None,
        },
        CompareOp::GreaterOrEqual if ordered => KeyRange {
            start: value.to_vec(),
            end: None,
        },
        _ => return None,
    };
    Some(KeyRanges::from_ranges(vec![range]))
}

/// Key ranges of `part OP value` for a fixed-width first part: as [`leading_ranges`] with the
/// part's keys (every key starting with the value) in place of single keys.
fn leading_part_ranges(op: CompareOp, value: &[u8]) -> Option<KeyRanges> {
    let range = match op {
        CompareOp::Equal => KeyRange::prefix(value),
        CompareOp::Less => KeyRange {
            start: Vec::new(),
            end: Some(value.to_vec()),
        },
        CompareOp::LessOrEqual => KeyRange {
            start: Vec::new(),
            end: prefix_successor(value),
        },
        CompareOp::Greater => KeyRange {
            start: prefix_successor(value)?,
            end: None,
        },
        CompareOp::GreaterOrEqual => KeyRange {
            start: value.to_vec(),
            end: None,
        },
        _ => return None,
    };
    Some(KeyRanges::from_ranges(vec![range]))
}

/// True when equal values have equal bytes (one encoding per value), so that byte
/// equality is value equality.
fn canonical(column_type: ColumnType, encoding: Encoding) -> bool {
    match column_type {
        ColumnType::Utf8 | ColumnType::Binary => true,
        ColumnType::Int32
        | ColumnType::Int64
        | ColumnType::UInt8
        | ColumnType::UInt32
        | ColumnType::UInt64 => encoding != Encoding::String,
        ColumnType::Boolean | ColumnType::Float64 => false,
    }
}

fn encoded(column: &MappedColumn, literal: &ScalarValue) -> Option<Vec<u8>> {
    let value = scalar_value(literal)?;
    let mut bytes = Vec::new();
    encode(value, column.column_type, column.encoding, &mut bytes).ok()?;
    Some(bytes)
}

fn full_mask(len: usize) -> Vec<u8> {
    vec![0xFF; len]
}

fn compare(view: &View, column: usize, op: CompareOp, literal: &ScalarValue) -> Option<Pushed> {
    match view {
        View::Mapped(mapping) => {
            let mapped = mapping.columns().get(column)?;
            match &mapped.source {
                ColumnSource::Key { index, part } => {
                    key_compare(mapping, mapped, *index, *part, op, literal)
                }
                ColumnSource::Cell { family, qualifier } => {
                    cell_compare(mapping.bad_values(), mapped, family, qualifier, op, literal)
                }
            }
        }
        View::Cells { single_version } => cells_compare(*single_version, column, op, literal),
    }
}

fn key_compare(
    mapping: &Mapping,
    column: &MappedColumn,
    index: usize,
    part: KeyPart,
    op: CompareOp,
    literal: &ScalarValue,
) -> Option<Pushed> {
    if !canonical(column.column_type, column.encoding) {
        return None;
    }
    let value = encoded(column, literal)?;
    let ordered = order_preserving(column.column_type, column.encoding);
    if !ordered && !matches!(op, CompareOp::Equal | CompareOp::NotEqual) {
        return None;
    }
    if mapping.key_columns().len() == 1 {
        // The whole key.
        if op == CompareOp::NotEqual {
            return Some(Pushed::filter(
                Filter::Row {
                    op,
                    comparator: Comparator::Binary(value),
                },
                true,
            ));
        }
        return leading_ranges(op, &value, ordered).map(Pushed::ranges);
    }
    let offset = mapping.key_part_offset(index);
    match (part, offset) {
        (KeyPart::Fixed(width), Some(offset)) => {
            if value.len() != width {
                // A value of another width is no value of this part.
                return match op {
                    CompareOp::Equal => Some(Pushed::ranges(KeyRanges::none())),
                    CompareOp::NotEqual => Some(Pushed::everything()),
                    _ => None,
                };
            }
            let mask = Filter::RowMask(RowMask {
                offset: u32::try_from(offset).ok()?,
                mask: full_mask(width),
                op,
                value: value.clone(),
            });
            let mut pushed = Pushed::filter(mask, true);
            if offset == 0
                && let Some(ranges) = leading_part_ranges(op, &value)
            {
                pushed.ranges = ranges;
            }
            Some(match op {
                CompareOp::Equal => pushed.with_part(PartConstraint::Equal {
                    part: index,
                    values: vec![value],
                }),
                CompareOp::NotEqual => pushed,
                _ => pushed.with_part(range_constraint(index, op, value)),
            })
        }
        (KeyPart::UntilSeparator(separator), Some(offset)) => {
            if op != CompareOp::Equal {
                return None;
            }
            if value.contains(&separator) {
                return Some(Pushed::ranges(KeyRanges::none()));
            }
            let mut with_separator = value.clone();
            with_separator.push(separator);
            let pushed = if offset == 0 {
                Pushed::ranges(KeyRanges::from_ranges(vec![KeyRange::prefix(
                    &with_separator,
                )]))
            } else {
                Pushed::filter(
                    Filter::RowMask(RowMask {
                        offset: u32::try_from(offset).ok()?,
                        mask: full_mask(with_separator.len()),
                        op,
                        value: with_separator,
                    }),
                    true,
                )
            };
            Some(pushed.with_part(PartConstraint::Equal {
                part: index,
                values: vec![value],
            }))
        }
        // A part after a separated one (no fixed offset), or the rest of the key after
        // other parts: only its equality narrows the scan, with the parts before it.
        _ if op == CompareOp::Equal => Some(Pushed::everything().inexact().with_part(
            PartConstraint::Equal {
                part: index,
                values: vec![value],
            },
        )),
        _ => None,
    }
}

fn range_constraint(part: usize, op: CompareOp, value: Vec<u8>) -> PartConstraint {
    let (low, high) = match op {
        CompareOp::Greater => (Some((value, false)), None),
        CompareOp::GreaterOrEqual => (Some((value, true)), None),
        CompareOp::Less => (None, Some((value, false))),
        _ => (None, Some((value, true))),
    };
    PartConstraint::Range { part, low, high }
}

fn cell_compare(
    bad_values: BadValues,
    column: &MappedColumn,
    family: &[u8],
    qualifier: &[u8],
    op: CompareOp,
    literal: &ScalarValue,
) -> Option<Pushed> {
    // Exact needs: the engine's byte test agrees with SQL's value test on every value that
    // decodes, and (when bad values read as NULL, which no comparison passes) fails every
    // value that does not.
    let strict = bad_values == BadValues::Error;
    let (comparator, exact) = match (column.column_type, column.encoding) {
        (ColumnType::Binary, _) => (Comparator::Binary(encoded(column, literal)?), true),
        (ColumnType::Utf8, _) => (
            Comparator::Binary(encoded(column, literal)?),
            op == CompareOp::Equal || strict,
        ),
        // HBase's LongComparator reads 8-byte big-endian values and fails every operator on
        // any other length: what SQL does with an undecodable value read as NULL.
        (ColumnType::Int64, Encoding::Binary) => {
            let v = match scalar_value(literal)? {
                Value::Int(v) => v,
                Value::UInt(v) => i64::try_from(v).ok()?,
                _ => return None,
            };
            (Comparator::Long(v), true)
        }
        (ty, encoding) if canonical(ty, encoding) => {
            let value = encoded(column, literal)?;
            match op {
                CompareOp::Equal => (Comparator::Binary(value), true),
                CompareOp::NotEqual => (Comparator::Binary(value), strict),
                _ if order_preserving(ty, encoding) => (Comparator::Binary(value), strict),
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(Pushed::filter(
        Filter::SingleColumnValue(column_test(family, qualifier, op, comparator)),
        exact,
    ))
}

/// A `SingleColumnValueFilter` with SQL's meaning: rows without the column fail (NULL passes
/// no comparison), and only the newest version counts (the version the table shows).
fn column_test(
    family: &[u8],
    qualifier: &[u8],
    op: CompareOp,
    comparator: Comparator,
) -> ColumnValueTest {
    ColumnValueTest {
        filter_if_missing: true,
        latest_version_only: true,
        ..ColumnValueTest::new(family, qualifier, op, comparator)
    }
}

fn literal_bytes(literal: &ScalarValue) -> Option<Vec<u8>> {
    match scalar_value(literal)? {
        Value::Text(t) => Some(t.as_bytes().to_vec()),
        Value::Bytes(b) => Some(b.to_vec()),
        _ => None,
    }
}

fn literal_timestamp(literal: &ScalarValue) -> Option<i64> {
    match scalar_value(literal)? {
        Value::Int(v) => Some(v),
        Value::UInt(v) => i64::try_from(v).ok(),
        _ => None,
    }
}

fn cells_compare(
    single_version: bool,
    column: usize,
    op: CompareOp,
    literal: &ScalarValue,
) -> Option<Pushed> {
    match column {
        CELLS_ROW => {
            let value = literal_bytes(literal)?;
            if op == CompareOp::NotEqual {
                return Some(Pushed::filter(
                    Filter::Row {
                        op,
                        comparator: Comparator::Binary(value),
                    },
                    true,
                ));
            }
            leading_ranges(op, &value, true).map(Pushed::ranges)
        }
        CELLS_FAMILY if op == CompareOp::Equal => Some(Pushed {
            cells: CellNarrowing {
                families: Some(BTreeSet::from([literal_bytes(literal)?])),
                ..CellNarrowing::default()
            },
            ..Pushed::everything()
        }),
        CELLS_QUALIFIER => {
            let value = literal_bytes(literal)?;
            // QualifierFilter lets an empty qualifier through whatever the test (HBase's
            // rule), so the engine keeps a superset.
            let mut pushed = Pushed::filter(
                Filter::Qualifier {
                    op,
                    comparator: Comparator::Binary(value.clone()),
                },
                false,
            );
            pushed.cell_level = true;
            if op == CompareOp::Equal {
                pushed.cells.qualifiers = Some(BTreeSet::from([value]));
            }
            Some(pushed)
        }
        CELLS_TIMESTAMP if single_version => {
            let t = literal_timestamp(literal)?;
            let after = t.saturating_add(1);
            let (min, max) = match op {
                CompareOp::Equal => (t, after),
                CompareOp::Less => (0, t),
                CompareOp::LessOrEqual => (0, after),
                CompareOp::Greater => (after, i64::MAX),
                CompareOp::GreaterOrEqual => (t, i64::MAX),
                _ => return None,
            };
            Some(Pushed {
                cells: CellNarrowing {
                    time: Some((min.max(0), max.max(0))),
                    ..CellNarrowing::default()
                },
                ..Pushed::everything()
            })
        }
        CELLS_VALUE if single_version => {
            let mut pushed = Pushed::filter(
                Filter::Value {
                    op,
                    comparator: Comparator::Binary(literal_bytes(literal)?),
                },
                true,
            );
            pushed.cell_level = true;
            Some(pushed)
        }
        _ => None,
    }
}

fn in_list(view: &View, column: usize, literals: &[&ScalarValue]) -> Option<Pushed> {
    if let View::Mapped(mapping) = view {
        let mapped = mapping.columns().get(column)?;
        if let ColumnSource::Key { index, .. } = mapped.source
            && mapping.key_columns().len() > 1
        {
            // Equalities on one key part: each narrows by its own RowMask (or prefix) and
            // the whole list is one constraint for the composite range derivation.
            let mut values = Vec::with_capacity(literals.len());
            let mut ones = Vec::with_capacity(literals.len());
            for literal in literals {
                let mut one = compare(view, column, CompareOp::Equal, literal)?;
                one.parts.clear();
                ones.push(one);
                values.push(encoded(mapped, literal)?);
            }
            let constraint = PartConstraint::Equal {
                part: index,
                values,
            };
            // A part without a fixed offset narrows only through the derivation.
            if ones
                .iter()
                .all(|one| one.filter.is_none() && one.ranges.is_all())
            {
                return Some(Pushed::everything().inexact().with_part(constraint));
            }
            let mut combined: Option<Pushed> = None;
            for one in ones {
                combined = Some(match combined {
                    None => one,
                    Some(so_far) => so_far.or(one)?,
                });
            }
            return combined.map(|p| p.with_part(constraint));
        }
    }
    if let View::Cells { .. } = view
        && column == CELLS_FAMILY
    {
        let families = literals
            .iter()
            .map(|l| literal_bytes(l))
            .collect::<Option<_>>()?;
        return Some(Pushed {
            cells: CellNarrowing {
                families: Some(families),
                ..CellNarrowing::default()
            },
            ..Pushed::everything()
        });
    }
    let mut combined: Option<Pushed> = None;
    for literal in literals {
        let one = compare(view, column, CompareOp::Equal, literal)?;
        combined = Some(match combined {
            None => one,
            Some(so_far) => so_far.or(one)?,
        });
    }
    combined
}

fn like(view: &View, column: usize, prefix: &[u8]) -> Option<Pushed> {
    let prefix_ranges = || KeyRanges::from_ranges(vec![KeyRange::prefix(prefix)]);
    match view {
        View::Cells { single_version } => match column {
            CELLS_ROW => Some(Pushed::ranges(prefix_ranges())),
            CELLS_VALUE if *single_version => {
                let mut pushed = Pushed::filter(
                    Filter::Value {
                        op: CompareOp::Equal,
                        comparator: Comparator::BinaryPrefix(prefix.to_vec()),
                    },
                    true,
                );
                pushed.cell_level = true;
                Some(pushed)
            }
            _ => None,
        },
        View::Mapped(mapping) => {
            let mapped = mapping.columns().get(column)?;
            if !matches!(mapped.column_type, ColumnType::Utf8 | ColumnType::Binary) {
                return None;
            }
            match &mapped.source {
                ColumnSource::Key { index, part } => {
                    let offset = mapping.key_part_offset(*index)?;
                    let whole = mapping.key_columns().len() == 1;
                    match part {
                        _ if whole || offset == 0 && !prefix.is_empty() && fits(*part, prefix) => {
                            Some(Pushed::ranges(prefix_ranges()))
                        }
                        KeyPart::Fixed(width) if prefix.len() <= *width => {
                            if prefix.is_empty() {
                                return Some(Pushed::everything());
                            }
                            Some(Pushed::filter(
                                Filter::RowMask(RowMask {
                                    offset: u32::try_from(offset).ok()?,
                                    mask: full_mask(prefix.len()),
                                    op: CompareOp::Equal,
                                    value: prefix.to_vec(),
                                }),
                                true,
                            ))
                        }
                        _ => None,
                    }
                }
                ColumnSource::Cell { family, qualifier } => {
                    let exact = mapped.column_type == ColumnType::Binary
                        || mapping.bad_values() == BadValues::Error;
                    Some(Pushed::filter(
                        Filter::SingleColumnValue(column_test(
                            family,
                            qualifier,
                            CompareOp::Equal,
                            Comparator::BinaryPrefix(prefix.to_vec()),
                        )),
                        exact,
                    ))
                }
            }
        }
    }
}

/// True when keys starting with `prefix` are exactly the keys whose first part (of this
/// shape) starts with it.
fn fits(part: KeyPart, prefix: &[u8]) -> bool {
    match part {
        KeyPart::Fixed(width) => prefix.len() <= width,
        KeyPart::UntilSeparator(separator) => !prefix.contains(&separator),
        KeyPart::Rest => true,
    }
}

/// Key ranges that the composite-key constraints of a conjunction allow: equal leading parts
/// make prefixes (several with IN-lists: Phoenix's skip scan), and a range on the part after
/// them bounds each prefix.
pub(crate) fn derive_part_ranges(mapping: &Mapping, parts: &[PartConstraint]) -> KeyRanges {
    let mut prefixes: Vec<Vec<u8>> = vec![Vec::new()];
    for (index, &column) in mapping.key_columns().iter().enumerate() {
        let Some(part) = mapping.key_part(column) else {
            break;
        };
        let mut equal: Option<BTreeSet<&Vec<u8>>> = None;
        for constraint in parts {
            if let PartConstraint::Equal { part, values } = constraint
                && *part == index
            {
                let these: BTreeSet<&Vec<u8>> = values.iter().collect();
                equal = Some(match equal {
                    None => these,
                    Some(so_far) => so_far.intersection(&these).copied().collect(),
                });
            }
        }
        if let Some(values) = equal {
            if values.is_empty() {
                return KeyRanges::none();
            }
            if prefixes.len().saturating_mul(values.len()) > MAX_KEY_RANGES {
                break;
            }
            prefixes = prefixes
                .iter()
                .flat_map(|prefix| {
                    values.iter().map(move |value| {
                        let mut key = prefix.clone();
                        key.extend_from_slice(value);
                        if let KeyPart::UntilSeparator(separator) = part {
                            key.push(separator);
                        }
                        key
                    })
                })
                .collect();
            if part == KeyPart::Rest {
                return KeyRanges::from_ranges(
                    prefixes.iter().map(|k| KeyRange::point(k)).collect(),
                );
            }
            continue;
        }
        if let KeyPart::Fixed(_) = part {
            let (low, high) = part_bounds(parts, index);
            if low.is_some() || high.is_some() {
                return KeyRanges::from_ranges(
                    prefixes
                        .iter()
                        .filter_map(|prefix| bounded(prefix, low.as_ref(), high.as_ref()))
                        .collect(),
                );
            }
        }
        break;
    }
    KeyRanges::from_ranges(prefixes.iter().map(|p| KeyRange::prefix(p)).collect())
}

type Bound = Option<(Vec<u8>, bool)>;

/// The tightest bounds the range constraints put on part `index`.
fn part_bounds(parts: &[PartConstraint], index: usize) -> (Bound, Bound) {
    let mut low: Bound = None;
    let mut high: Bound = None;
    for constraint in parts {
        if let PartConstraint::Range {
            part,
            low: l,
            high: h,
        } = constraint
            && *part == index
        {
            if let Some((value, inclusive)) = l
                && low
                    .as_ref()
                    .is_none_or(|(v, i)| value > v || (value == v && *i && !inclusive))
            {
                low = Some((value.clone(), *inclusive));
            }
            if let Some((value, inclusive)) = h
                && high
                    .as_ref()
                    .is_none_or(|(v, i)| value < v || (value == v && *i && !inclusive))
            {
                high = Some((value.clone(), *inclusive));
            }
        }
    }
    (low, high)
}

/// Keys starting with `prefix` whose next fixed-width part lies within the bounds.
fn bounded(
    prefix: &[u8],
    low: Option<&(Vec<u8>, bool)>,
    high: Option<&(Vec<u8>, bool)>,
) -> Option<KeyRange> {
    let join = |value: &[u8]| {
        let mut key = prefix.to_vec();
        key.extend_from_slice(value);
        key
    };
    let start = match low {
        None => prefix.to_vec(),
        Some((value, true)) => join(value),
        // Past every key whose part is `value`.
        Some((value, false)) => prefix_successor(&join(value))?,
    };
    let end = match high {
        None => prefix_successor(prefix),
        Some((value, false)) => Some(join(value)),
        Some((value, true)) => prefix_successor(&join(value)),
    };
    Some(KeyRange { start, end })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::{col, lit};

    fn mapping(spec: &str, columns: &[(&str, DataType)], bad: BadValues) -> View {
        let declared: Vec<_> = columns
            .iter()
            .map(|(n, t)| ((*n).to_owned(), t.clone(), true))
            .collect();
        View::Mapped(Mapping::parse(spec, &declared, bad).unwrap())
    }

    fn users(bad: BadValues) -> View {
        mapping(
            ":key,info:name,info:age#b,info:score#b,info:flag#b",
            &[
                ("id", DataType::Utf8),
                ("name", DataType::Utf8),
                ("age", DataType::Int64),
                ("score", DataType::Float64),
                ("flag", DataType::Boolean),
            ],
            bad,
        )
    }

    fn decision(expr: Expr, view: &View) -> TableProviderFilterPushDown {
        compile(&expr, view).map_or(TableProviderFilterPushDown::Unsupported, |p| p.decision())
    }

    use TableProviderFilterPushDown::{Exact, Inexact, Unsupported};

    #[test]
    fn decisions_per_predicate_kind_on_a_mapped_table() {
        let strict = users(BadValues::Error);
        let lenient = users(BadValues::Null);
        let cases: Vec<(
            Expr,
            TableProviderFilterPushDown,
            TableProviderFilterPushDown,
        )> = vec![
            // key equality, ranges, prefixes and IN-lists are key ranges
            (col("id").eq(lit("u1")), Exact, Exact),
            (col("id").gt_eq(lit("u1")), Exact, Exact),
            (lit("u9").gt(col("id")), Exact, Exact),
            (col("id").not_eq(lit("u1")), Exact, Exact),
            (col("id").like(lit("u1%")), Exact, Exact),
            (col("id").like(lit("u_1%")), Unsupported, Unsupported),
            (
                col("id").in_list(vec![lit("a"), lit("b")], false),
                Exact,
                Exact,
            ),
            (
                col("id").in_list(vec![lit("a")], true),
                Unsupported,
                Unsupported,
            ),
            (col("id").between(lit("a"), lit("c")), Exact, Exact),
            // value comparisons
            (col("age").gt(lit(30i64)), Exact, Exact),
            (col("age").not_eq(lit(30i64)), Exact, Exact),
            (col("name").eq(lit("ann")), Exact, Exact),
            (col("name").lt(lit("b")), Exact, Inexact),
            (col("name").like(lit("an%")), Exact, Inexact),
            (col("score").gt(lit(1.5f64)), Unsupported, Unsupported),
            (col("flag").eq(lit(true)), Unsupported, Unsupported),
            (col("name").is_null(), Unsupported, Unsupported),
            // combinations
            (
                col("id").eq(lit("a")).or(col("age").eq(lit(3i64))),
                Exact,
                Exact,
            ),
            (
                col("id").eq(lit("a")).and(col("score").gt(lit(1.0f64))),
                Inexact,
                Inexact,
            ),
            (
                col("id").eq(lit("a")).or(col("score").gt(lit(1.0f64))),
                Unsupported,
                Unsupported,
            ),
            (
                col("name").in_list(vec![lit("a"), lit("b")], false),
                Exact,
                Exact,
            ),
        ];
        for (expr, on_strict, on_lenient) in cases {
            assert_eq!(
                decision(expr.clone(), &strict),
                on_strict,
                "{expr} (errors)"
            );
            assert_eq!(
                decision(expr.clone(), &lenient),
                on_lenient,
                "{expr} (nulls)"
            );
        }
    }

    #[test]
    fn decisions_per_predicate_kind_on_composite_keys() {
        let pages = mapping(
            ":key#b,:key#b,:key#o,:key[..|],:key",
            &[
                ("md5", DataType::UInt32),
                ("site", DataType::Int32),
                ("day", DataType::Int32),
                ("word", DataType::Utf8),
                ("rest", DataType::Utf8),
            ],
            BadValues::Error,
        );
        let cases = vec![
            (col("md5").eq(lit(7u32)), Exact),
            (col("md5").lt(lit(7u32)), Exact),
            (col("site").eq(lit(3i32)), Exact),
            // two's complement does not sort as the numbers
            (col("site").gt(lit(3i32)), Unsupported),
            (col("day").gt(lit(3i32)), Exact),
            (col("word").eq(lit("w")), Exact),
            (col("word").gt(lit("w")), Unsupported),
            (col("rest").eq(lit("r")), Inexact),
            (col("md5").in_list(vec![lit(1u32), lit(2u32)], false), Exact),
        ];
        for (expr, expected) in cases {
            assert_eq!(decision(expr.clone(), &pages), expected, "{expr}");
        }
    }

    #[test]
    fn decisions_on_the_cells_view() {
        let single = View::Cells {
            single_version: true,
        };
        let multi = View::Cells {
            single_version: false,
        };
        let cases = vec![
            (col("row").eq(lit("r1")), Exact, Exact),
            (col("row").like(lit("r%")), Exact, Exact),
            (col("family").eq(lit("f")), Exact, Exact),
            (
                col("family").in_list(vec![lit("f"), lit("g")], false),
                Exact,
                Exact,
            ),
            (col("qualifier").eq(lit("q")), Inexact, Inexact),
            (col("value").eq(lit("v")), Exact, Unsupported),
            (col("timestamp").gt(lit(5i64)), Exact, Unsupported),
            (
                col("value").eq(lit("v")).or(col("value").eq(lit("w"))),
                Exact,
                Unsupported,
            ),
            (
                col("row").eq(lit("r")).or(col("value").eq(lit("w"))),
                Unsupported,
                Unsupported,
            ),
        ];
        for (expr, on_single, on_multi) in cases {
            assert_eq!(
                decision(expr.clone(), &single),
                on_single,
                "{expr} (1 version)"
            );
            assert_eq!(
                decision(expr.clone(), &multi),
                on_multi,
                "{expr} (versions)"
            );
        }
    }

    #[test]
    fn key_predicates_become_ranges() {
        let view = users(BadValues::Error);
        let p = compile(&col("id").like(lit("u1%")), &view).unwrap();
        assert_eq!(p.ranges.ranges(), &[KeyRange::prefix(b"u1")]);
        let p = compile(&col("id").in_list(vec![lit("b"), lit("a")], false), &view).unwrap();
        assert_eq!(
            p.ranges.ranges(),
            &[KeyRange::point(b"a"), KeyRange::point(b"b")]
        );
        let p = compile(
            &col("id").gt(lit("a")).and(col("id").lt_eq(lit("c"))),
            &view,
        )
        .unwrap();
        assert_eq!(
            p.ranges.ranges(),
            &[KeyRange {
                start: b"a\0".to_vec(),
                end: Some(b"c\0".to_vec())
            }]
        );
    }

    #[test]
    fn composite_constraints_derive_prefix_and_range() {
        let View::Mapped(m) = mapping(
            ":key#b,:key#b,:key[..|],:key",
            &[
                ("a", DataType::UInt32),
                ("b", DataType::UInt32),
                ("w", DataType::Utf8),
                ("r", DataType::Utf8),
            ],
            BadValues::Error,
        ) else {
            unreachable!()
        };
        let eq = |part, values: Vec<Vec<u8>>| PartConstraint::Equal { part, values };
        // a IN (1, 2) AND 5 <= b < 9
        let ranges = derive_part_ranges(
            &m,
            &[
                eq(
                    0,
                    vec![1u32.to_be_bytes().to_vec(), 2u32.to_be_bytes().to_vec()],
                ),
                range_constraint(1, CompareOp::GreaterOrEqual, 5u32.to_be_bytes().to_vec()),
                range_constraint(1, CompareOp::Less, 9u32.to_be_bytes().to_vec()),
            ],
        );
        let key = |a: u32, b: u32| [a.to_be_bytes(), b.to_be_bytes()].concat();
        assert_eq!(
            ranges.ranges(),
            &[
                KeyRange {
                    start: key(1, 5),
                    end: Some(key(1, 9))
                },
                KeyRange {
                    start: key(2, 5),
                    end: Some(key(2, 9))
                },
            ]
        );
        // a = 1 AND b = 2 AND w = 'x' AND r = 'y': one key
        let ranges = derive_part_ranges(
            &m,
            &[
                eq(0, vec![1u32.to_be_bytes().to_vec()]),
                eq(1, vec![2u32.to_be_bytes().to_vec()]),
                eq(2, vec![b"x".to_vec()]),
                eq(3, vec![b"y".to_vec()]),
            ],
        );
        assert_eq!(
            ranges.ranges(),
            &[KeyRange::point(&[key(1, 2), b"x|y".to_vec()].concat())]
        );
        // contradictory equalities: nothing
        let ranges = derive_part_ranges(
            &m,
            &[eq(0, vec![vec![0, 0, 0, 1]]), eq(0, vec![vec![0, 0, 0, 2]])],
        );
        assert!(ranges.is_none());
        // no constraint on the first part: everything
        assert!(derive_part_ranges(&m, &[eq(1, vec![vec![0, 0, 0, 1]])]).is_all());
    }
}
