//! The filter language: valid strings and their model, invalid strings and their error
//! positions, printing, and the parse(print(f)) == f property.

use proptest::prelude::*;
use strata_filters::model::{MAX_INT_ARGUMENT, MAX_LONG_ARGUMENT};
use strata_filters::{
    BitOp, ColumnOffset, ColumnValueTest, Comparator, CompareOp, DependentColumn, Filter,
    FilterList, FuzzyRule, ListOperator, RowMask, RowRange, parse, parse_bytes,
};

fn list(operator: ListOperator, filters: Vec<Filter>) -> Filter {
    Filter::List(FilterList { operator, filters })
}
fn and(filters: Vec<Filter>) -> Filter {
    list(ListOperator::MustPassAll, filters)
}
fn or(filters: Vec<Filter>) -> Filter {
    list(ListOperator::MustPassOne, filters)
}
fn prefix(p: &[u8]) -> Filter {
    Filter::Prefix { prefix: p.to_vec() }
}
fn page(n: u64) -> Filter {
    Filter::Page { page_size: n }
}
fn value(op: CompareOp, comparator: Comparator) -> Filter {
    Filter::Value { op, comparator }
}
fn binary(v: &[u8]) -> Comparator {
    Comparator::Binary(v.to_vec())
}

#[test]
fn valid_strings_and_their_model() {
    let mut scvf = ColumnValueTest::new(b"f", b"q", CompareOp::GreaterOrEqual, binary(b"5"));
    scvf.filter_if_missing = true;
    scvf.latest_version_only = false;
    let cases: Vec<(&str, Filter)> = vec![
        (
            "KeyOnlyFilter()",
            Filter::KeyOnly {
                len_as_value: false,
            },
        ),
        (
            "KeyOnlyFilter(TRUE)",
            Filter::KeyOnly { len_as_value: true },
        ),
        ("FirstKeyOnlyFilter ( )", Filter::FirstKeyOnly),
        ("PrefixFilter ('Row')", prefix(b"Row")),
        ("PrefixFilter('it''s')", prefix(b"it's")),
        ("PrefixFilter('''')", prefix(b"'")),
        (r"PrefixFilter('\x00')", prefix(br"\x00")),
        (r"PrefixFilter(b'\x00\xff''')", prefix(b"\x00\xff'")),
        ("PrefixFilter('é')", prefix("é".as_bytes())),
        (
            "(PrefixFilter ('Row') AND PageFilter (1)) OR KeyOnlyFilter ()",
            or(vec![
                and(vec![prefix(b"Row"), page(1)]),
                Filter::KeyOnly {
                    len_as_value: false,
                },
            ]),
        ),
        (
            "PrefixFilter('a') AND PageFilter(1) AND KeyOnlyFilter()",
            and(vec![
                prefix(b"a"),
                page(1),
                Filter::KeyOnly {
                    len_as_value: false,
                },
            ]),
        ),
        (
            "(PrefixFilter('a') AND PageFilter(1)) AND KeyOnlyFilter()",
            and(vec![
                and(vec![prefix(b"a"), page(1)]),
                Filter::KeyOnly {
                    len_as_value: false,
                },
            ]),
        ),
        (
            "PrefixFilter('a') OR PageFilter(1) AND PageFilter(2)",
            or(vec![prefix(b"a"), and(vec![page(1), page(2)])]),
        ),
        (
            "PrefixFilter('a')AND(PageFilter(1))",
            and(vec![prefix(b"a"), page(1)]),
        ),
        (
            "\tPrefixFilter('a')\n OR\r\nPageFilter(1) ",
            or(vec![prefix(b"a"), page(1)]),
        ),
        (
            "SKIP ValueFilter(!=, 'binary:0')",
            Filter::Skip(Box::new(value(CompareOp::NotEqual, binary(b"0")))),
        ),
        (
            "WHILE SKIP RowFilter(=, 'binary:a')",
            Filter::While(Box::new(Filter::Skip(Box::new(Filter::Row {
                op: CompareOp::Equal,
                comparator: binary(b"a"),
            })))),
        ),
        (
            "SKIP PageFilter(1) AND PageFilter(2)",
            and(vec![Filter::Skip(Box::new(page(1))), page(2)]),
        ),
        (
            "SKIP (PageFilter(1) AND PageFilter(2))",
            Filter::Skip(Box::new(and(vec![page(1), page(2)]))),
        ),
        (
            "TimestampsFilter(5985489, 48895495, 58489845945)",
            Filter::Timestamps {
                timestamps: vec![5985489, 48895495, 58489845945],
            },
        ),
        (
            "TimestampsFilter()",
            Filter::Timestamps { timestamps: vec![] },
        ),
        (
            "ColumnPaginationFilter(4, 0)",
            Filter::ColumnPagination {
                limit: 4,
                offset: ColumnOffset::Index(0),
            },
        ),
        (
            "ColumnPaginationFilter(4, 'col')",
            Filter::ColumnPagination {
                limit: 4,
                offset: ColumnOffset::Qualifier(b"col".to_vec()),
            },
        ),
        (
            "ColumnCountGetFilter(2147483647)",
            Filter::ColumnCountGet {
                limit: MAX_INT_ARGUMENT,
            },
        ),
        ("PageFilter(9223372036854775807)", page(MAX_LONG_ARGUMENT)),
        (
            "SingleColumnValueFilter('f','q',>=,'binary:5',true,FALSE)",
            Filter::SingleColumnValue(scvf.clone()),
        ),
        (
            "SingleColumnValueExcludeFilter('f', 'q', <, 'binaryprefix:x')",
            Filter::SingleColumnValueExclude(ColumnValueTest::new(
                b"f",
                b"q",
                CompareOp::Less,
                Comparator::BinaryPrefix(b"x".to_vec()),
            )),
        ),
        (
            "ColumnRangeFilter('a', true, '', false)",
            Filter::ColumnRange {
                min: b"a".to_vec(),
                min_inclusive: true,
                max: vec![],
                max_inclusive: false,
            },
        ),
        (
            "MultipleColumnPrefixFilter('a', 'b')",
            Filter::MultipleColumnPrefix {
                prefixes: vec![b"a".to_vec(), b"b".to_vec()],
            },
        ),
        (
            "InclusiveStopFilter('row9')",
            Filter::InclusiveStop {
                stop_row: b"row9".to_vec(),
            },
        ),
        (
            "FamilyFilter(=, 'substring:Fa')",
            Filter::Family {
                op: CompareOp::Equal,
                comparator: Comparator::Substring("Fa".into()),
            },
        ),
        (
            "QualifierFilter(!=, 'regexstring:^a.*b$')",
            Filter::Qualifier {
                op: CompareOp::NotEqual,
                comparator: Comparator::RegexString("^a.*b$".into()),
            },
        ),
        (
            "RowFilter(NO_OP, 'binary:a')",
            Filter::Row {
                op: CompareOp::NoOp,
                comparator: binary(b"a"),
            },
        ),
        (
            "ValueFilter(=, 'binary:a:b')",
            value(CompareOp::Equal, binary(b"a:b")),
        ),
        (
            "ValueFilter(=, 'long:-42')",
            value(CompareOp::Equal, Comparator::Long(-42)),
        ),
        (
            "ValueFilter(!=, 'null:')",
            value(CompareOp::NotEqual, Comparator::Null),
        ),
        (
            r"ValueFilter(=, b'bitxor:\x0F')",
            value(CompareOp::Equal, Comparator::Bit(BitOp::Xor, vec![0x0f])),
        ),
        (
            r"FuzzyRowFilter('\x00\x00ab', '\x01\x01\x00\x00', 'x', '\x00')",
            Filter::FuzzyRow {
                rules: vec![
                    FuzzyRule {
                        key: b"\x00\x00ab".to_vec(),
                        mask: vec![1, 1, 0, 0],
                    },
                    FuzzyRule {
                        key: b"x".to_vec(),
                        mask: vec![0],
                    },
                ],
            },
        ),
        (
            "MultiRowRangeFilter('a', true, 'c', false, '', false, '', true)",
            Filter::MultiRowRange {
                ranges: vec![
                    RowRange {
                        start: b"a".to_vec(),
                        start_inclusive: true,
                        stop: b"c".to_vec(),
                        stop_inclusive: false,
                    },
                    RowRange {
                        start: vec![],
                        start_inclusive: false,
                        stop: vec![],
                        stop_inclusive: true,
                    },
                ],
            },
        ),
        (
            r"RowMaskFilter(4, '\xFF\xFF\xFF\xFF', >=, '\x00\x00\x07\xDF')",
            Filter::RowMask(RowMask {
                offset: 4,
                mask: vec![0xff; 4],
                op: CompareOp::GreaterOrEqual,
                value: vec![0, 0, 7, 0xdf],
            }),
        ),
        // HBase's TestParseFilter strings.
        (
            "ColumnValueFilter ('family', 'qualifier', <, 'binaryprefix:value')",
            Filter::ColumnValue {
                family: b"family".to_vec(),
                qualifier: b"qualifier".to_vec(),
                op: CompareOp::Less,
                comparator: Comparator::BinaryPrefix(b"value".to_vec()),
            },
        ),
        (
            "DependentColumnFilter('family', 'qualifier', true, =, 'binary:abc')",
            Filter::DependentColumn(DependentColumn {
                family: b"family".to_vec(),
                qualifier: b"qualifier".to_vec(),
                drop_dependent_column: true,
                value_test: Some((CompareOp::Equal, binary(b"abc"))),
            }),
        ),
        (
            "DependentColumnFilter('f', 'q')",
            Filter::DependentColumn(DependentColumn::new(b"f", b"q")),
        ),
        (
            "DependentColumnFilter('f', 'q', false)",
            Filter::DependentColumn(DependentColumn::new(b"f", b"q")),
        ),
        (
            "DependentColumnFilter('f', 'q', TRUE)",
            Filter::DependentColumn(DependentColumn {
                drop_dependent_column: true,
                ..DependentColumn::new(b"f", b"q")
            }),
        ),
        // HBase's DependentColumnFilter takes any operator with substring (it does not check).
        (
            "DependentColumnFilter('f', 'q', false, <, 'substring:x')",
            Filter::DependentColumn(DependentColumn {
                value_test: Some((CompareOp::Less, Comparator::Substring("x".into()))),
                ..DependentColumn::new(b"f", b"q")
            }),
        ),
        // HBase's parser closes the parentheses left open at the end.
        ("(PrefixFilter('a')", prefix(b"a")),
        ("((PrefixFilter('a')  ", prefix(b"a")),
        (
            "(PrefixFilter('a') AND (PageFilter(1)",
            and(vec![prefix(b"a"), page(1)]),
        ),
        (
            "PrefixFilter('a') OR (PageFilter(1) AND PageFilter(2)",
            or(vec![prefix(b"a"), and(vec![page(1), page(2)])]),
        ),
    ];
    for (text, expected) in cases {
        match parse(text) {
            Ok(filter) => assert_eq!(filter, expected, "{text}"),
            Err(error) => panic!("{text}: {error}"),
        }
    }
}

#[test]
fn invalid_strings_and_their_error_positions() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 0, "a filter name"),
        ("   ", 3, "a filter name"),
        ("PrefixFilter('abc'", 18, "an argument or `)`"),
        ("PrefixFilter('abc) AND PageFilter(1)", 13, "a closing `'`"),
        ("PrefixFilter('a') AND", 21, "a filter name"),
        (
            "PrefixFilter('a') XOR PageFilter(1)",
            18,
            "AND, OR or the end",
        ),
        ("PrefxFilter('a')", 0, "a filter name"),
        ("PrefixFilter'a')", 12, "`(` after PrefixFilter"),
        ("PrefixFilter('a'))", 17, "AND, OR or the end"),
        ("(PrefixFilter('a') PageFilter(1)", 19, "`)`, AND or OR"),
        ("(PrefixFilter('a'))) ", 19, "AND, OR or the end"),
        ("ColumnValueFilter('f', 'q', =)", 29, "4 arguments"),
        (
            "ColumnValueFilter('f', 'q', <, 'substring:a')",
            31,
            "only = and !=",
        ),
        ("DependentColumnFilter('f')", 25, "2, 3 or 5 arguments"),
        (
            "DependentColumnFilter('f', 'q', true, =)",
            39,
            "2, 3 or 5 arguments",
        ),
        (
            "DependentColumnFilter('f', 'q', yes)",
            32,
            "`true` or `false`",
        ),
        (
            "DependentColumnFilter('f', 'q', false, =, 'regexstring:(')",
            42,
            "invalid regular expression",
        ),
        (
            "DependentColumnFilter('f', 'q', false, ~, 'binary:a')",
            39,
            "a compare operator",
        ),
        ("PrefixFilter('a') AND (", 23, "a filter name"),
        ("SKIP", 4, "a filter name"),
        ("PageFilter(-1)", 11, "an integer from 0"),
        ("PageFilter(9223372036854775808)", 11, "an integer from 0"),
        (
            "ColumnCountGetFilter(2147483648)",
            21,
            "an integer from 0 to 2147483647",
        ),
        ("PageFilter(1, 2)", 14, "1 argument"),
        ("PageFilter()", 11, "1 argument"),
        ("PageFilter('1')", 11, "an integer"),
        ("KeyOnlyFilter(maybe)", 14, "`true` or `false`"),
        ("RowFilter(<, 'substring:a')", 13, "only = and !="),
        ("RowFilter(=>, 'binary:a')", 10, "a compare operator"),
        ("RowFilter(=, 'foo:a')", 13, "a comparator type"),
        ("RowFilter(=, 'binary')", 13, "a comparator `type:value`"),
        (
            "RowFilter(=, 'regexstring:(')",
            13,
            "invalid regular expression",
        ),
        (
            "ValueFilter(=, 'long:12x')",
            15,
            "`long:` followed by a decimal integer",
        ),
        ("ValueFilter(=, 'null:x')", 15, "nothing after `null:`"),
        ("ColumnRangeFilter('a', true, 'b')", 32, "4 arguments"),
        (
            "SingleColumnValueFilter('f', 'q', =, 'binary:x', true)",
            53,
            "4 or 6 arguments",
        ),
        (
            r"RowMaskFilter(0, '\xFF', =, '\x01\x02')",
            28,
            "mask has 1 bytes but value has 2",
        ),
        (
            r"RowMaskFilter(0, '\xFF', NO_OP, '\x01')",
            25,
            "operator NO_OP is not allowed",
        ),
        (r"RowMaskFilter(0, '', =, '')", 17, "at least one byte"),
        (
            "FuzzyRowFilter('ab', '\\x00')",
            21,
            "a mask as long as its key",
        ),
        ("FuzzyRowFilter('ab', '\\x00\\x02')", 21, "a mask of"),
        ("FuzzyRowFilter('ab')", 19, "a mask after the last key"),
        (
            "MultiRowRangeFilter('b', true, 'a', true)",
            31,
            "a stop row not before the start row",
        ),
        (
            "MultiRowRangeFilter('a', true, 'b')",
            34,
            "ranges of 4 arguments",
        ),
        (
            "MultipleColumnPrefixFilter('a', 'a')",
            32,
            "a prefix not given before",
        ),
        ("PrefixFilter(('a'))", 13, "an argument or `)`"),
    ];
    for (text, position, expected) in cases {
        match parse(text) {
            Ok(filter) => panic!("{text:?} parsed as {filter:?}"),
            Err(error) => {
                assert_eq!(error.position, *position, "{text:?}: {error}");
                assert!(
                    error.expected.contains(expected),
                    "{text:?}: expected {expected:?} in {error}"
                );
            }
        }
    }
}

/// Filter strings are bytes: HBase's shell test scans with
/// `SingleColumnValueFilter('x', 'a', >=, 'binary:\x82', true, true)` written with the raw
/// byte 0x82, which is not UTF-8.
#[test]
fn filter_strings_are_bytes() {
    let mut input = b"SingleColumnValueFilter('x', 'a', >=, 'binary:".to_vec();
    input.push(0x82);
    input.extend_from_slice(b"', true, true)");
    let mut expected = ColumnValueTest::new(
        b"x",
        b"a",
        CompareOp::GreaterOrEqual,
        Comparator::Binary(vec![0x82]),
    );
    expected.filter_if_missing = true;
    let filter = parse_bytes(&input).unwrap();
    assert_eq!(filter, Filter::SingleColumnValue(expected));
    // Printed with the binary form, and read back the same.
    assert_eq!(
        filter.to_string(),
        r"SingleColumnValueFilter('x', 'a', >=, b'binary:\x82', true, true)"
    );
    assert_eq!(parse(&filter.to_string()).unwrap(), filter);
    // Any byte in any quoted argument, ColumnValueFilter and DependentColumnFilter included.
    let filter = parse_bytes(b"ColumnValueFilter('f\xff', 'q', =, 'binary:\x00\x01')").unwrap();
    assert_eq!(
        filter,
        Filter::ColumnValue {
            family: b"f\xff".to_vec(),
            qualifier: b"q".to_vec(),
            op: CompareOp::Equal,
            comparator: binary(b"\x00\x01"),
        }
    );
    // Errors point at the byte and show invalid bytes escaped, the caret under them.
    let error = parse_bytes(b"PrefixFilter('a') \xfe").unwrap_err();
    assert_eq!(error.position, 18);
    assert_eq!(
        error.to_string(),
        "expected AND, OR or the end of the filter, found `\\xFE` at byte 18\n  PrefixFilter('a') \\xFE\n                    ^"
    );
}

#[test]
fn errors_show_the_input_with_a_caret() {
    let Err(error) = parse("PrefixFilter('a') XOR PageFilter(1)") else {
        panic!("parsed")
    };
    assert_eq!(
        error.to_string(),
        "expected AND, OR or the end of the filter, found `XOR` at byte 18\n  PrefixFilter('a') XOR PageFilter(1)\n                    ^"
    );
    let Err(error) = parse("PrefixFilter('é') AND Nope()") else {
        panic!("parsed")
    };
    assert!(
        error.to_string().ends_with("\n                        ^"),
        "{error}"
    );
}

#[test]
fn printing_uses_the_language() {
    assert_eq!(prefix(b"it's").to_string(), "PrefixFilter('it''s')");
    assert_eq!(
        prefix(b"a\x00\xff\\").to_string(),
        r"PrefixFilter(b'a\x00\xFF\x5C')"
    );
    assert_eq!(
        Filter::SingleColumnValue(ColumnValueTest::new(
            b"f",
            b"q",
            CompareOp::Equal,
            binary(b"1")
        ))
        .to_string(),
        "SingleColumnValueFilter('f', 'q', =, 'binary:1')"
    );
    assert_eq!(
        or(vec![
            and(vec![prefix(b"a"), page(1)]),
            Filter::Skip(Box::new(and(vec![page(2), page(3)])))
        ])
        .to_string(),
        "(PrefixFilter('a') AND PageFilter(1)) OR SKIP (PageFilter(2) AND PageFilter(3))"
    );
    assert_eq!(
        Filter::RowMask(RowMask {
            offset: 4,
            mask: vec![0xff; 4],
            op: CompareOp::Greater,
            value: vec![0, 0, 7, 0xdf]
        })
        .to_string(),
        r"RowMaskFilter(4, '\xFF\xFF\xFF\xFF', >, '\x00\x00\x07\xDF')"
    );
    // DependentColumnFilter in HBase's shortest form: 2, 3 or 5 arguments.
    let dependent = DependentColumn::new(b"f", b"q");
    assert_eq!(
        Filter::DependentColumn(dependent.clone()).to_string(),
        "DependentColumnFilter('f', 'q')"
    );
    assert_eq!(
        Filter::DependentColumn(DependentColumn {
            drop_dependent_column: true,
            ..dependent.clone()
        })
        .to_string(),
        "DependentColumnFilter('f', 'q', true)"
    );
    assert_eq!(
        Filter::DependentColumn(DependentColumn {
            value_test: Some((CompareOp::NotEqual, binary(b"x"))),
            ..dependent
        })
        .to_string(),
        "DependentColumnFilter('f', 'q', false, !=, 'binary:x')"
    );
    assert_eq!(
        Filter::ColumnValue {
            family: b"f".to_vec(),
            qualifier: b"q".to_vec(),
            op: CompareOp::Less,
            comparator: Comparator::BinaryPrefix(b"v".to_vec()),
        }
        .to_string(),
        "ColumnValueFilter('f', 'q', <, 'binaryprefix:v')"
    );
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..6),
        "[a-z' \\\\é]{0,6}".prop_map(String::into_bytes),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z' \\\\é]{0,6}",
        any::<String>().prop_map(|s| s.chars().take(6).collect())
    ]
}

fn op() -> impl Strategy<Value = CompareOp> {
    proptest::sample::select(CompareOp::ALL.to_vec())
}

fn comparison() -> impl Strategy<Value = (CompareOp, Comparator)> {
    prop_oneof![
        (op(), bytes()).prop_map(|(op, v)| (op, Comparator::Binary(v))),
        (op(), bytes()).prop_map(|(op, v)| (op, Comparator::BinaryPrefix(v))),
        (
            op(),
            proptest::sample::select(vec![BitOp::And, BitOp::Or, BitOp::Xor]),
            bytes()
        )
            .prop_map(|(op, bit, v)| (op, Comparator::Bit(bit, v))),
        (op(), any::<i64>()).prop_map(|(op, v)| (op, Comparator::Long(v))),
        op().prop_map(|op| (op, Comparator::Null)),
        (any::<bool>(), text()).prop_map(|(eq, s)| (
            if eq {
                CompareOp::Equal
            } else {
                CompareOp::NotEqual
            },
            Comparator::Substring(s)
        )),
        (any::<bool>(), text()).prop_map(|(eq, s)| {
            (
                if eq {
                    CompareOp::Equal
                } else {
                    CompareOp::NotEqual
                },
                Comparator::RegexString(regex::escape(&s)),
            )
        }),
    ]
}

fn column_value() -> impl Strategy<Value = ColumnValueTest> {
    (bytes(), bytes(), comparison(), any::<bool>(), any::<bool>()).prop_map(
        |(family, qualifier, (op, comparator), missing, latest)| ColumnValueTest {
            family,
            qualifier,
            op,
            comparator,
            filter_if_missing: missing,
            latest_version_only: latest,
        },
    )
}

fn leaf() -> impl Strategy<Value = Filter> {
    prop_oneof![
        any::<bool>().prop_map(|len_as_value| Filter::KeyOnly { len_as_value }),
        Just(Filter::FirstKeyOnly),
        bytes().prop_map(|prefix| Filter::Prefix { prefix }),
        bytes().prop_map(|prefix| Filter::ColumnPrefix { prefix }),
        proptest::collection::btree_set(bytes(), 0..4).prop_map(|set| {
            Filter::MultipleColumnPrefix {
                prefixes: set.into_iter().collect(),
            }
        }),
        (0..=MAX_INT_ARGUMENT).prop_map(|limit| Filter::ColumnCountGet { limit }),
        (0..=MAX_LONG_ARGUMENT).prop_map(|page_size| Filter::Page { page_size }),
        (
            0..=MAX_INT_ARGUMENT,
            prop_oneof![
                (0..=MAX_INT_ARGUMENT).prop_map(ColumnOffset::Index),
                bytes().prop_map(ColumnOffset::Qualifier)
            ]
        )
            .prop_map(|(limit, offset)| Filter::ColumnPagination { limit, offset }),
        bytes().prop_map(|stop_row| Filter::InclusiveStop { stop_row }),
        proptest::collection::vec(0..=i64::MAX, 0..4)
            .prop_map(|timestamps| Filter::Timestamps { timestamps }),
        comparison().prop_map(|(op, comparator)| Filter::Row { op, comparator }),
        comparison().prop_map(|(op, comparator)| Filter::Family { op, comparator }),
        comparison().prop_map(|(op, comparator)| Filter::Qualifier { op, comparator }),
        comparison().prop_map(|(op, comparator)| Filter::Value { op, comparator }),
        (bytes(), any::<bool>(), bytes(), any::<bool>()).prop_map(
            |(min, min_inclusive, max, max_inclusive)| Filter::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive
            }
        ),
        column_value().prop_map(Filter::SingleColumnValue),
        column_value().prop_map(Filter::SingleColumnValueExclude),
        proptest::collection::vec(
            (1usize..6).prop_flat_map(|n| (
                proptest::collection::vec(any::<u8>(), n),
                proptest::collection::vec(0u8..2, n)
            )),
            0..3
        )
        .prop_map(|rules| Filter::FuzzyRow {
            rules: rules
                .into_iter()
                .map(|(key, mask)| FuzzyRule { key, mask })
                .collect()
        }),
        proptest::collection::vec((bytes(), any::<bool>(), bytes(), any::<bool>()), 1..3).prop_map(
            |ranges| Filter::MultiRowRange {
                ranges: ranges
                    .into_iter()
                    .map(|(a, start_inclusive, b, stop_inclusive)| {
                        let (start, stop) = if !a.is_empty() && !b.is_empty() && a > b {
                            (b, a)
                        } else {
                            (a, b)
                        };
                        let stop_inclusive = stop_inclusive || start == stop;
                        RowRange {
                            start,
                            start_inclusive,
                            stop,
                            stop_inclusive,
                        }
                    })
                    .collect(),
            }
        ),
        (
            any::<u32>(),
            (1usize..10).prop_flat_map(|n| (
                proptest::collection::vec(any::<u8>(), n),
                proptest::collection::vec(any::<u8>(), n)
            )),
            op()
        )
            .prop_filter("RowMaskFilter takes no NO_OP", |(_, _, op)| *op
                != CompareOp::NoOp)
            .prop_map(|(offset, (mask, value), op)| Filter::RowMask(RowMask {
                offset,
                mask,
                op,
                value
            })),
    ]
}

/// The filters added for HBase 2.1's ColumnValueFilter and DependentColumnFilter.
fn column_filters() -> impl Strategy<Value = Filter> {
    prop_oneof![
        (bytes(), bytes(), comparison()).prop_map(|(family, qualifier, (op, comparator))| {
            Filter::ColumnValue {
                family,
                qualifier,
                op,
                comparator,
            }
        }),
        (
            bytes(),
            bytes(),
            any::<bool>(),
            proptest::option::of(prop_oneof![
                comparison(),
                (op(), text()).prop_map(|(op, s)| (op, Comparator::Substring(s))),
            ])
        )
            .prop_map(|(family, qualifier, drop_dependent_column, value_test)| {
                Filter::DependentColumn(DependentColumn {
                    family,
                    qualifier,
                    drop_dependent_column,
                    value_test,
                })
            }),
    ]
}

fn filter() -> impl Strategy<Value = Filter> {
    prop_oneof![4 => leaf(), 1 => column_filters()].prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|f| Filter::Skip(Box::new(f))),
            inner.clone().prop_map(|f| Filter::While(Box::new(f))),
            (any::<bool>(), proptest::collection::vec(inner, 2..4)).prop_map(|(all, filters)| {
                list(
                    if all {
                        ListOperator::MustPassAll
                    } else {
                        ListOperator::MustPassOne
                    },
                    filters,
                )
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_of_display_is_identity(filter in filter()) {
        prop_assert!(filter.validate().is_ok(), "generator made an invalid filter: {filter:?}");
        let text = filter.to_string();
        match parse(&text) {
            Ok(parsed) => prop_assert_eq!(parsed, filter, "text: {}", text),
            Err(error) => prop_assert!(false, "{}\nfilter: {:?}", error, filter),
        }
    }

    #[test]
    fn parser_never_panics(text in "[A-Za-z()',=<>!: \\\\0-9]{0,40}") {
        let _ = parse(&text);
    }
}
