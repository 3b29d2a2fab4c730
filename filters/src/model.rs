//! The filter model: HBase's filters and comparators as plain values.
//!
//! A [`Filter`] is data: it can be compared, cloned, printed in the filter language
//! (`Display`) and parsed back ([`crate::parse()`]). Behaviour lives elsewhere: the scalar
//! evaluator ([`crate::eval`]) runs a filter cell by cell exactly as HBase 2.x does, and the
//! planner ([`crate::plan`]) compiles it into kernels. Both call [`Filter::validate`] first, so
//! every rule about what a well-formed filter is lives in this module.

use std::fmt;

/// The largest value HBase accepts for an `int` filter argument (Java `Integer.MAX_VALUE`).
pub const MAX_INT_ARGUMENT: u32 = i32::MAX as u32;

/// The largest value HBase accepts for a `long` filter argument (Java `Long.MAX_VALUE`).
pub const MAX_LONG_ARGUMENT: u64 = i64::MAX as u64;

/// HBase's `CompareOperator`: how a compare filter relates a cell part to its comparator.
///
/// The natural reading holds for the ordered comparators: `RowFilter(<, 'binary:m')` keeps rows
/// that sort before `m`. `NoOp` keeps nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `<`
    Less,
    /// `<=`
    LessOrEqual,
    /// `=`
    Equal,
    /// `!=`
    NotEqual,
    /// `>=`
    GreaterOrEqual,
    /// `>`
    Greater,
    /// `NO_OP`: HBase's operator that filters out everything.
    NoOp,
}

impl CompareOp {
    /// Every operator, in declaration order.
    pub const ALL: [CompareOp; 7] = [
        CompareOp::Less,
        CompareOp::LessOrEqual,
        CompareOp::Equal,
        CompareOp::NotEqual,
        CompareOp::GreaterOrEqual,
        CompareOp::Greater,
        CompareOp::NoOp,
    ];

    /// The operator's spelling in the filter language.
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Less => "<",
            CompareOp::LessOrEqual => "<=",
            CompareOp::Equal => "=",
            CompareOp::NotEqual => "!=",
            CompareOp::GreaterOrEqual => ">=",
            CompareOp::Greater => ">",
            CompareOp::NoOp => "NO_OP",
        }
    }

    /// Parses an operator spelled as in the filter language.
    pub fn from_symbol(symbol: &str) -> Option<CompareOp> {
        CompareOp::ALL.into_iter().find(|op| op.symbol() == symbol)
    }

    /// HBase's `CompareFilter.compare`: given `comparator.compareTo(cell_part)` (the comparator
    /// on the left), returns true when the cell part is filtered OUT.
    pub fn filters_out(self, comparator_vs_cell: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            CompareOp::Less => comparator_vs_cell != Greater,
            CompareOp::LessOrEqual => comparator_vs_cell == Less,
            CompareOp::Equal => comparator_vs_cell != Equal,
            CompareOp::NotEqual => comparator_vs_cell == Equal,
            CompareOp::GreaterOrEqual => comparator_vs_cell == Greater,
            CompareOp::Greater => comparator_vs_cell != Less,
            CompareOp::NoOp => true,
        }
    }

    /// True when `lhs op rhs` holds for `ordering = lhs.cmp(rhs)` (the natural reading used by
    /// RowMaskFilter and the kernels). `NoOp` never holds.
    pub fn holds(self, ordering: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            CompareOp::Less => ordering == Less,
            CompareOp::LessOrEqual => ordering != Greater,
            CompareOp::Equal => ordering == Equal,
            CompareOp::NotEqual => ordering != Equal,
            CompareOp::GreaterOrEqual => ordering != Less,
            CompareOp::Greater => ordering == Greater,
            CompareOp::NoOp => false,
        }
    }
}

/// The bitwise operation of HBase's `BitComparator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitOp {
    /// Matches when `value & operand` has a non-zero byte.
    And,
    /// Matches when `value | operand` has a non-zero byte.
    Or,
    /// Matches when `value ^ operand` has a non-zero byte.
    Xor,
}

/// HBase's comparators (`ByteArrayComparable` subclasses).
///
/// The first four have HBase's own spelling in the filter language (`binary:`,
/// `binaryprefix:`, `substring:`, `regexstring:`); the others are strata extensions
/// (`bitand:`, `bitor:`, `bitxor:`, `long:`, `null:`), see `docs/filters.md`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Comparator {
    /// Lexicographic unsigned comparison with the bytes.
    Binary(Vec<u8>),
    /// Lexicographic comparison of the cell part's first `len` bytes with the bytes.
    BinaryPrefix(Vec<u8>),
    /// Matches when the cell part, as text, contains the string, ignoring case.
    Substring(String),
    /// Matches when the regular expression finds a match anywhere in the cell part.
    RegexString(String),
    /// Bitwise test of a cell part of exactly the operand's length.
    Bit(BitOp, Vec<u8>),
    /// Numeric comparison with an 8-byte big-endian signed integer cell part.
    Long(i64),
    /// HBase's `NullComparator`: every stored cell part is non-null, so it never compares equal.
    Null,
}

impl Comparator {
    /// The comparator's type name as written before the `:` in the language.
    pub fn type_name(&self) -> &'static str {
        match self {
            Comparator::Binary(_) => "binary",
            Comparator::BinaryPrefix(_) => "binaryprefix",
            Comparator::Substring(_) => "substring",
            Comparator::RegexString(_) => "regexstring",
            Comparator::Bit(BitOp::And, _) => "bitand",
            Comparator::Bit(BitOp::Or, _) => "bitor",
            Comparator::Bit(BitOp::Xor, _) => "bitxor",
            Comparator::Long(_) => "long",
            Comparator::Null => "null",
        }
    }

    /// True for comparators whose `compareTo` only says "match" or "no match" (substring and
    /// regexstring); HBase's language only accepts `=` and `!=` with those.
    pub fn is_match_only(&self) -> bool {
        matches!(self, Comparator::Substring(_) | Comparator::RegexString(_))
    }
}

/// How a [`FilterList`] combines its members.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListOperator {
    /// `MUST_PASS_ALL`, written `AND`.
    MustPassAll,
    /// `MUST_PASS_ONE`, written `OR`.
    MustPassOne,
}

/// HBase's `FilterList`: at least two filters combined by AND or OR, evaluated in order.
///
/// A list of fewer than two filters has no form in the filter language; build such lists
/// with [`Filter::all`] and [`Filter::any`], which return the single member itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FilterList {
    /// AND or OR.
    pub operator: ListOperator,
    /// The members, in evaluation order.
    pub filters: Vec<Filter>,
}

/// The test of `SingleColumnValueFilter` and `SingleColumnValueExcludeFilter`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ColumnValueTest {
    /// The tested column's family.
    pub family: Vec<u8>,
    /// The tested column's qualifier.
    pub qualifier: Vec<u8>,
    /// How the value relates to the comparator.
    pub op: CompareOp,
    /// What the value is compared with.
    pub comparator: Comparator,
    /// Drop rows that lack the column (HBase default: false, such rows pass).
    pub filter_if_missing: bool,
    /// Test only the newest version (HBase default: true); otherwise any version may match.
    pub latest_version_only: bool,
}

impl ColumnValueTest {
    /// A test with HBase's defaults: rows without the column pass, only the latest version
    /// is tested.
    pub fn new(family: &[u8], qualifier: &[u8], op: CompareOp, comparator: Comparator) -> Self {
        ColumnValueTest {
            family: family.to_vec(),
            qualifier: qualifier.to_vec(),
            op,
            comparator,
            filter_if_missing: false,
            latest_version_only: true,
        }
    }
}

/// `DependentColumnFilter`: the reference column whose timestamps decide which cells of a row
/// are kept.
///
/// HBase's semantics: the filter includes every cell of other columns for the moment and
/// collects the timestamps of the reference column's cells that pass the optional value test;
/// at the end of the row (`filterRowCells`) it keeps only the cells whose timestamp is one of
/// them. With `drop_dependent_column` the reference column's own cells are not returned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DependentColumn {
    /// The reference column's family.
    pub family: Vec<u8>,
    /// The reference column's qualifier.
    pub qualifier: Vec<u8>,
    /// Leave the reference column's cells out of the result.
    pub drop_dependent_column: bool,
    /// The reference cells' value test; `None` (HBase's `NO_OP` with a null comparator, the
    /// 2- and 3-argument forms) lets every reference cell count.
    pub value_test: Option<(CompareOp, Comparator)>,
}

impl DependentColumn {
    /// A filter on the reference column `family:qualifier`, keeping its cells, with no value
    /// test (HBase's 2-argument form).
    pub fn new(family: &[u8], qualifier: &[u8]) -> Self {
        DependentColumn {
            family: family.to_vec(),
            qualifier: qualifier.to_vec(),
            drop_dependent_column: false,
            value_test: None,
        }
    }
}

/// Where `ColumnPaginationFilter` starts a row's page.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ColumnOffset {
    /// Skip this many columns (HBase `offset`).
    Index(u32),
    /// Start at the first column whose qualifier is at least this (HBase `columnOffset`).
    Qualifier(Vec<u8>),
}

/// One rule of `FuzzyRowFilter`: a key and a mask of the same length.
///
/// Mask byte `0` means the row byte at that position must equal the key byte; `1` means any
/// byte. As in HBase, a row shorter than the key is tested on its own length only.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FuzzyRule {
    /// Key bytes; bytes under a `1` mask byte are ignored.
    pub key: Vec<u8>,
    /// One byte per key byte: `0` fixed, `1` any.
    pub mask: Vec<u8>,
}

/// One range of `MultiRowRangeFilter`. An empty start or stop means unbounded on that side.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RowRange {
    /// First row (empty: from the beginning).
    pub start: Vec<u8>,
    /// Whether `start` itself is in the range.
    pub start_inclusive: bool,
    /// Last row (empty: to the end).
    pub stop: Vec<u8>,
    /// Whether `stop` itself is in the range.
    pub stop_inclusive: bool,
}

impl RowRange {
    /// True when `row` lies in the range.
    pub fn contains(&self, row: &[u8]) -> bool {
        self.start_admits(row) && self.stop_admits(row)
    }

    /// True when `row` is not before the range's start.
    pub fn start_admits(&self, row: &[u8]) -> bool {
        self.start.is_empty()
            || match row.cmp(self.start.as_slice()) {
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Equal => self.start_inclusive,
                std::cmp::Ordering::Less => false,
            }
    }

    /// True when `row` is not after the range's stop.
    pub fn stop_admits(&self, row: &[u8]) -> bool {
        self.stop.is_empty()
            || match row.cmp(self.stop.as_slice()) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Equal => self.stop_inclusive,
                std::cmp::Ordering::Greater => false,
            }
    }
}

/// The strata extension `RowMaskFilter`: keeps rows where
/// `(row[offset..offset + mask.len()] & mask) op value`, compared as unsigned big-endian
/// (lexicographic) bytes. Rows shorter than `offset + mask.len()` never pass, whatever the
/// operator (the field does not exist, so no comparison holds; `!=` included).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RowMask {
    /// Byte offset of the field in the row key.
    pub offset: u32,
    /// AND-mask applied to the field; its length is the field length.
    pub mask: Vec<u8>,
    /// One of `=, !=, <, <=, >, >=`.
    pub op: CompareOp,
    /// The value the masked field is compared with (same length as `mask`, not masked).
    pub value: Vec<u8>,
}

impl RowMask {
    /// True when the row passes the mask test.
    pub fn matches(&self, row: &[u8]) -> bool {
        let start = self.offset as usize;
        let Some(field) = row.get(start..start.saturating_add(self.mask.len())) else {
            return false;
        };
        let mut ordering = std::cmp::Ordering::Equal;
        for ((byte, mask), value) in field.iter().zip(&self.mask).zip(&self.value) {
            ordering = (byte & mask).cmp(value);
            if ordering != std::cmp::Ordering::Equal {
                break;
            }
        }
        self.op.holds(ordering)
    }
}

/// A filter: HBase's filters, the unary operators SKIP and WHILE, filter lists, and the strata
/// extensions. Each variant documents the HBase class it models.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    /// `KeyOnlyFilter`: returns cells with an empty value, or with the value's length as a
    /// 4-byte big-endian integer when `len_as_value`.
    KeyOnly {
        /// Replace the value by its length instead of emptying it.
        len_as_value: bool,
    },
    /// `FirstKeyOnlyFilter`: returns only the first cell of each row.
    FirstKeyOnly,
    /// `PrefixFilter`: rows whose key starts with the prefix; ends the scan once past it.
    Prefix {
        /// Required row-key prefix.
        prefix: Vec<u8>,
    },
    /// `ColumnPrefixFilter`: cells whose qualifier starts with the prefix.
    ColumnPrefix {
        /// Required qualifier prefix.
        prefix: Vec<u8>,
    },
    /// `MultipleColumnPrefixFilter`: cells whose qualifier starts with one of the prefixes.
    MultipleColumnPrefix {
        /// Distinct qualifier prefixes, in the order written.
        prefixes: Vec<Vec<u8>>,
    },
    /// `ColumnCountGetFilter`: the first `limit` columns of a row, then ends the scan.
    ColumnCountGet {
        /// Columns to return.
        limit: u32,
    },
    /// `PageFilter`: at most `page_size` rows; strata counts across the whole scan.
    Page {
        /// Rows to return.
        page_size: u64,
    },
    /// `ColumnPaginationFilter`: a page of `limit` columns per row, starting at `offset`.
    ColumnPagination {
        /// Columns per row.
        limit: u32,
        /// Where each row's page starts.
        offset: ColumnOffset,
    },
    /// `InclusiveStopFilter`: rows up to and including `stop_row`, then ends the scan.
    InclusiveStop {
        /// Last row returned.
        stop_row: Vec<u8>,
    },
    /// `TimestampsFilter`: cells whose timestamp is in the list.
    Timestamps {
        /// Wanted timestamps (>= 0), in the order written.
        timestamps: Vec<i64>,
    },
    /// `RowFilter`: rows whose key passes the comparison.
    Row {
        /// Operator.
        op: CompareOp,
        /// Comparator.
        comparator: Comparator,
    },
    /// `FamilyFilter`: cells whose family passes the comparison.
    Family {
        /// Operator.
        op: CompareOp,
        /// Comparator.
        comparator: Comparator,
    },
    /// `QualifierFilter`: cells whose qualifier passes the comparison (an empty qualifier
    /// always passes, as in HBase).
    Qualifier {
        /// Operator.
        op: CompareOp,
        /// Comparator.
        comparator: Comparator,
    },
    /// `ValueFilter`: cells whose value passes the comparison.
    Value {
        /// Operator.
        op: CompareOp,
        /// Comparator.
        comparator: Comparator,
    },
    /// `ColumnRangeFilter`: cells whose qualifier lies between `min` and `max`; an empty
    /// bound is unbounded.
    ColumnRange {
        /// Lower bound (empty: none).
        min: Vec<u8>,
        /// Whether `min` itself passes.
        min_inclusive: bool,
        /// Upper bound (empty: none).
        max: Vec<u8>,
        /// Whether `max` itself passes.
        max_inclusive: bool,
    },
    /// `SingleColumnValueFilter`: whole rows, kept or dropped by one column's value.
    SingleColumnValue(ColumnValueTest),
    /// `SingleColumnValueExcludeFilter`: as `SingleColumnValue`, without the tested column.
    SingleColumnValueExclude(ColumnValueTest),
    /// `ColumnValueFilter` (HBase 2.1+): only the cells of one column whose value passes the
    /// comparison, unlike `SingleColumnValueFilter`, which keeps or drops whole rows.
    ColumnValue {
        /// The column's family.
        family: Vec<u8>,
        /// The column's qualifier.
        qualifier: Vec<u8>,
        /// Operator.
        op: CompareOp,
        /// Comparator.
        comparator: Comparator,
    },
    /// `DependentColumnFilter`: cells whose timestamp is one of the reference column's
    /// (passing) timestamps in the row.
    DependentColumn(DependentColumn),
    /// `SkipFilter` (`SKIP`): drops the whole row when the wrapped filter rejects any cell.
    Skip(Box<Filter>),
    /// `WhileMatchFilter` (`WHILE`): ends the scan at the first rejection.
    While(Box<Filter>),
    /// `FilterList` (`AND` / `OR`).
    List(FilterList),
    /// `FuzzyRowFilter` (strata language extension): rows matching one of the rules.
    FuzzyRow {
        /// The rules; a row passes when it matches any of them.
        rules: Vec<FuzzyRule>,
    },
    /// `MultiRowRangeFilter` (strata language extension): rows in any of the ranges.
    MultiRowRange {
        /// The ranges, in the order written (overlaps are merged when evaluated).
        ranges: Vec<RowRange>,
    },
    /// `RowMaskFilter` (strata extension): a masked big-endian comparison on a row-key field.
    RowMask(RowMask),
}

/// Why a filter is not well formed. The parser reports the same problems as
/// [`crate::parse::ParseError`]s with a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// A filter list needs at least two members.
    ListTooShort {
        /// Members found.
        members: usize,
    },
    /// An integer argument is outside what HBase accepts.
    IntegerOutOfRange {
        /// Which argument.
        what: &'static str,
        /// The value given.
        value: i128,
        /// The largest value allowed.
        max: i128,
    },
    /// A timestamp is negative.
    NegativeTimestamp {
        /// The value given.
        value: i64,
    },
    /// A regular expression does not compile.
    InvalidRegex {
        /// The pattern.
        pattern: String,
        /// The regex engine's message.
        message: String,
    },
    /// The operator cannot be used with this comparator or filter.
    OperatorNotAllowed {
        /// The filter or comparator concerned.
        context: &'static str,
        /// The operator given.
        op: CompareOp,
    },
    /// A fuzzy rule's key and mask have different lengths.
    FuzzyLengthMismatch {
        /// Rule index.
        rule: usize,
        /// Key length.
        key_len: usize,
        /// Mask length.
        mask_len: usize,
    },
    /// A fuzzy mask byte is neither 0 nor 1.
    FuzzyMaskByte {
        /// Rule index.
        rule: usize,
        /// Byte position.
        position: usize,
        /// The byte found.
        byte: u8,
    },
    /// A `MultiRowRangeFilter` has no ranges.
    NoRowRanges,
    /// A row range's start is after its stop (or equal with an exclusive stop).
    InvalidRowRange {
        /// Range index.
        range: usize,
    },
    /// `MultipleColumnPrefixFilter` prefixes must be distinct.
    DuplicatePrefix {
        /// The repeated prefix.
        prefix: Vec<u8>,
    },
    /// A `RowMaskFilter` mask is empty.
    EmptyMask,
    /// A segment range kernel was given no non-empty bound.
    NoSegmentBound,
    /// A `RowMaskFilter` mask and value differ in length.
    MaskValueLength {
        /// Mask length.
        mask_len: usize,
        /// Value length.
        value_len: usize,
    },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::ListTooShort { members } => {
                write!(f, "a filter list needs at least 2 filters, found {members}")
            }
            ModelError::IntegerOutOfRange { what, value, max } => {
                write!(f, "{what} must be between 0 and {max}, found {value}")
            }
            ModelError::NegativeTimestamp { value } => {
                write!(f, "timestamps must be >= 0, found {value}")
            }
            ModelError::InvalidRegex { pattern, message } => {
                write!(f, "invalid regular expression {pattern:?}: {message}")
            }
            ModelError::OperatorNotAllowed { context, op } => {
                write!(f, "operator {} is not allowed with {context}", op.symbol())
            }
            ModelError::FuzzyLengthMismatch {
                rule,
                key_len,
                mask_len,
            } => write!(
                f,
                "fuzzy rule {rule}: key has {key_len} bytes but mask has {mask_len}"
            ),
            ModelError::FuzzyMaskByte {
                rule,
                position,
                byte,
            } => write!(
                f,
                "fuzzy rule {rule}: mask byte {position} is {byte}, expected 0 (fixed) or 1 (any)"
            ),
            ModelError::NoRowRanges => write!(f, "MultiRowRangeFilter needs at least one range"),
            ModelError::InvalidRowRange { range } => {
                write!(f, "row range {range}: start is after stop")
            }
            ModelError::DuplicatePrefix { prefix } => {
                write!(f, "column prefix {prefix:?} appears twice")
            }
            ModelError::EmptyMask => write!(f, "RowMaskFilter needs a mask of at least one byte"),
            ModelError::NoSegmentBound => {
                write!(f, "a segment range needs at least one non-empty bound")
            }
            ModelError::MaskValueLength {
                mask_len,
                value_len,
            } => write!(
                f,
                "RowMaskFilter mask has {mask_len} bytes but value has {value_len}"
            ),
        }
    }
}

impl std::error::Error for ModelError {}

impl Filter {
    /// AND of the filters; a single filter is returned as is. Errors on an empty list.
    pub fn all(mut filters: Vec<Filter>) -> Result<Filter, ModelError> {
        match filters.len() {
            0 => Err(ModelError::ListTooShort { members: 0 }),
            1 => Ok(filters.remove(0)),
            _ => Ok(Filter::List(FilterList {
                operator: ListOperator::MustPassAll,
                filters,
            })),
        }
    }

    /// OR of the filters; a single filter is returned as is. Errors on an empty list.
    pub fn any(mut filters: Vec<Filter>) -> Result<Filter, ModelError> {
        match filters.len() {
            0 => Err(ModelError::ListTooShort { members: 0 }),
            1 => Ok(filters.remove(0)),
            _ => Ok(Filter::List(FilterList {
                operator: ListOperator::MustPassOne,
                filters,
            })),
        }
    }

    /// The filter's name in the language (`"List"` for lists, `"SKIP"` / `"WHILE"`).
    pub fn name(&self) -> &'static str {
        match self {
            Filter::KeyOnly { .. } => "KeyOnlyFilter",
            Filter::FirstKeyOnly => "FirstKeyOnlyFilter",
            Filter::Prefix { .. } => "PrefixFilter",
            Filter::ColumnPrefix { .. } => "ColumnPrefixFilter",
            Filter::MultipleColumnPrefix { .. } => "MultipleColumnPrefixFilter",
            Filter::ColumnCountGet { .. } => "ColumnCountGetFilter",
            Filter::Page { .. } => "PageFilter",
            Filter::ColumnPagination { .. } => "ColumnPaginationFilter",
            Filter::InclusiveStop { .. } => "InclusiveStopFilter",
            Filter::Timestamps { .. } => "TimestampsFilter",
            Filter::Row { .. } => "RowFilter",
            Filter::Family { .. } => "FamilyFilter",
            Filter::Qualifier { .. } => "QualifierFilter",
            Filter::Value { .. } => "ValueFilter",
            Filter::ColumnRange { .. } => "ColumnRangeFilter",
            Filter::SingleColumnValue(_) => "SingleColumnValueFilter",
            Filter::SingleColumnValueExclude(_) => "SingleColumnValueExcludeFilter",
            Filter::ColumnValue { .. } => "ColumnValueFilter",
            Filter::DependentColumn(_) => "DependentColumnFilter",
            Filter::Skip(_) => "SKIP",
            Filter::While(_) => "WHILE",
            Filter::List(_) => "List",
            Filter::FuzzyRow { .. } => "FuzzyRowFilter",
            Filter::MultiRowRange { .. } => "MultiRowRangeFilter",
            Filter::RowMask(_) => "RowMaskFilter",
        }
    }

    /// Checks every rule a well-formed filter obeys (argument ranges, comparator/operator
    /// pairs, regex syntax, fuzzy masks, row ranges, list sizes), recursively.
    pub fn validate(&self) -> Result<(), ModelError> {
        match self {
            Filter::KeyOnly { .. }
            | Filter::FirstKeyOnly
            | Filter::Prefix { .. }
            | Filter::ColumnPrefix { .. }
            | Filter::InclusiveStop { .. }
            | Filter::ColumnRange { .. } => Ok(()),
            Filter::MultipleColumnPrefix { prefixes } => {
                let mut sorted: Vec<&Vec<u8>> = prefixes.iter().collect();
                sorted.sort();
                match sorted.windows(2).find(|pair| pair[0] == pair[1]) {
                    Some(pair) => Err(ModelError::DuplicatePrefix {
                        prefix: pair[0].clone(),
                    }),
                    None => Ok(()),
                }
            }
            Filter::ColumnCountGet { limit } => check_int("ColumnCountGetFilter limit", *limit),
            Filter::Page { page_size } => {
                if *page_size > MAX_LONG_ARGUMENT {
                    Err(ModelError::IntegerOutOfRange {
                        what: "PageFilter page size",
                        value: i128::from(*page_size),
                        max: i128::from(MAX_LONG_ARGUMENT),
                    })
                } else {
                    Ok(())
                }
            }
            Filter::ColumnPagination { limit, offset } => {
                check_int("ColumnPaginationFilter limit", *limit)?;
                match offset {
                    ColumnOffset::Index(index) => {
                        check_int("ColumnPaginationFilter offset", *index)
                    }
                    ColumnOffset::Qualifier(_) => Ok(()),
                }
            }
            Filter::Timestamps { timestamps } => match timestamps.iter().find(|ts| **ts < 0) {
                Some(value) => Err(ModelError::NegativeTimestamp { value: *value }),
                None => Ok(()),
            },
            Filter::Row { op, comparator }
            | Filter::Family { op, comparator }
            | Filter::Qualifier { op, comparator }
            | Filter::Value { op, comparator } => validate_comparison(*op, comparator),
            Filter::SingleColumnValue(test) | Filter::SingleColumnValueExclude(test) => {
                validate_comparison(test.op, &test.comparator)
            }
            Filter::ColumnValue { op, comparator, .. } => validate_comparison(*op, comparator),
            // HBase's DependentColumnFilter takes any operator with any comparator (it does
            // not restrict substring and regexstring to = and !=); only the regex must compile.
            Filter::DependentColumn(dependent) => match &dependent.value_test {
                Some((_, Comparator::RegexString(pattern))) => {
                    crate::compare::compile_regex(pattern).map(|_| ())
                }
                _ => Ok(()),
            },
            Filter::Skip(inner) | Filter::While(inner) => inner.validate(),
            Filter::List(list) => {
                if list.filters.len() < 2 {
                    return Err(ModelError::ListTooShort {
                        members: list.filters.len(),
                    });
                }
                list.filters.iter().try_for_each(Filter::validate)
            }
            Filter::FuzzyRow { rules } => rules.iter().enumerate().try_for_each(|(index, rule)| {
                if rule.key.len() != rule.mask.len() {
                    return Err(ModelError::FuzzyLengthMismatch {
                        rule: index,
                        key_len: rule.key.len(),
                        mask_len: rule.mask.len(),
                    });
                }
                match rule.mask.iter().position(|byte| *byte > 1) {
                    Some(position) => Err(ModelError::FuzzyMaskByte {
                        rule: index,
                        position,
                        byte: rule.mask[position],
                    }),
                    None => Ok(()),
                }
            }),
            Filter::MultiRowRange { ranges } => {
                if ranges.is_empty() {
                    return Err(ModelError::NoRowRanges);
                }
                ranges.iter().enumerate().try_for_each(|(index, range)| {
                    if range_is_valid(range) {
                        Ok(())
                    } else {
                        Err(ModelError::InvalidRowRange { range: index })
                    }
                })
            }
            Filter::RowMask(mask) => {
                if mask.mask.is_empty() {
                    return Err(ModelError::EmptyMask);
                }
                if mask.mask.len() != mask.value.len() {
                    return Err(ModelError::MaskValueLength {
                        mask_len: mask.mask.len(),
                        value_len: mask.value.len(),
                    });
                }
                if mask.op == CompareOp::NoOp {
                    return Err(ModelError::OperatorNotAllowed {
                        context: "RowMaskFilter",
                        op: mask.op,
                    });
                }
                Ok(())
            }
        }
    }
}

/// HBase's `RowRange.isValid`: unbounded on either side, or start before stop, or equal
/// with an inclusive stop.
fn range_is_valid(range: &RowRange) -> bool {
    range.start.is_empty()
        || range.stop.is_empty()
        || match range.start.cmp(&range.stop) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Equal => range.stop_inclusive,
            std::cmp::Ordering::Greater => false,
        }
}

fn check_int(what: &'static str, value: u32) -> Result<(), ModelError> {
    if value > MAX_INT_ARGUMENT {
        Err(ModelError::IntegerOutOfRange {
            what,
            value: i128::from(value),
            max: i128::from(MAX_INT_ARGUMENT),
        })
    } else {
        Ok(())
    }
}

/// Comparator/operator pairing rules shared by every compare filter.
pub(crate) fn validate_comparison(
    op: CompareOp,
    comparator: &Comparator,
) -> Result<(), ModelError> {
    if comparator.is_match_only() && !matches!(op, CompareOp::Equal | CompareOp::NotEqual) {
        return Err(ModelError::OperatorNotAllowed {
            context: if matches!(comparator, Comparator::Substring(_)) {
                "a substring comparator (only = and !=)"
            } else {
                "a regexstring comparator (only = and !=)"
            },
            op,
        });
    }
    if let Comparator::RegexString(pattern) = comparator {
        crate::compare::compile_regex(pattern)?;
    }
    Ok(())
}
