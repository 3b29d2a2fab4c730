//! Plan correctness: skipping what the plan says may be skipped (ranges, seek hints, row
//! kernels, stop predicate, column value predicates) and producing output without the
//! evaluator when the plan says so gives exactly the evaluator's rows; hints never skip a row
//! that could match; batch evaluation of the row predicate agrees with the per-row test.

mod support;

use std::ops::Bound;

use proptest::prelude::*;
use strata_filters::kernels::{Isa, Kernel};
use strata_filters::plan::{Plan, ScanRange, Seek};
use strata_filters::{
    Batch, Bitmap, ColumnOffset, ColumnValueTest, Comparator, CompareOp, DependentColumn, Filter,
    FilterList, FuzzyRule, ListOperator, RowMask, RowRange, parse,
};
use support::{Cell, Table, run};

const ROW_BYTES: &[u8] = b"ab\x00\xff";

fn row_key() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(proptest::sample::select(ROW_BYTES.to_vec()), 1..5)
}

fn table() -> impl Strategy<Value = Table> {
    let cell = (
        row_key(),
        proptest::sample::select(vec![b"a".to_vec(), b"b".to_vec()]),
        proptest::sample::select(vec![
            b"".to_vec(),
            b"x".to_vec(),
            b"xy".to_vec(),
            b"y".to_vec(),
        ]),
        1i64..4,
        proptest::sample::select(vec![
            b"".to_vec(),
            b"1".to_vec(),
            b"x".to_vec(),
            b"X".to_vec(),
            7i64.to_be_bytes().to_vec(),
        ]),
    )
        .prop_map(|(row, family, qualifier, timestamp, value)| Cell {
            row,
            family,
            qualifier,
            timestamp,
            value,
        });
    proptest::collection::vec(cell, 0..40).prop_map(Table::from_cells)
}

fn op() -> impl Strategy<Value = CompareOp> {
    proptest::sample::select(CompareOp::ALL.to_vec())
}

fn short_bytes() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(proptest::sample::select(ROW_BYTES.to_vec()), 0..3)
}

fn value_comparator() -> impl Strategy<Value = (CompareOp, Comparator)> {
    prop_oneof![
        (
            op(),
            proptest::sample::select(vec![b"1".to_vec(), b"x".to_vec(), b"".to_vec()])
        )
            .prop_map(|(op, v)| (op, Comparator::Binary(v))),
        (op(), Just(7i64)).prop_map(|(op, v)| (op, Comparator::Long(v))),
        any::<bool>().prop_map(|eq| (
            if eq {
                CompareOp::Equal
            } else {
                CompareOp::NotEqual
            },
            Comparator::Substring("x".into())
        )),
    ]
}

fn row_leaf() -> impl Strategy<Value = Filter> {
    prop_oneof![
        short_bytes().prop_map(|prefix| Filter::Prefix { prefix }),
        (op(), row_key()).prop_map(|(op, v)| Filter::Row {
            op,
            comparator: Comparator::Binary(v)
        }),
        (op(), short_bytes()).prop_map(|(op, v)| Filter::Row {
            op,
            comparator: Comparator::BinaryPrefix(v)
        }),
        any::<bool>().prop_map(|eq| Filter::Row {
            op: if eq {
                CompareOp::Equal
            } else {
                CompareOp::NotEqual
            },
            comparator: Comparator::RegexString("a.b".into())
        }),
        (
            0u32..3,
            1usize..3,
            op().prop_filter("mask op", |o| *o != CompareOp::NoOp),
            row_key(),
            any::<bool>()
        )
            .prop_map(|(offset, len, op, value, full)| {
                let value: Vec<u8> = value.into_iter().cycle().take(len).collect();
                Filter::RowMask(RowMask {
                    offset,
                    mask: vec![if full { 0xff } else { 0xfe }; len],
                    op,
                    value,
                })
            }),
        row_key().prop_map(|stop_row| Filter::InclusiveStop { stop_row }),
        proptest::collection::vec(
            (1usize..4).prop_flat_map(|n| (
                proptest::collection::vec(proptest::sample::select(ROW_BYTES.to_vec()), n),
                proptest::collection::vec(0u8..2, n)
            )),
            1..3
        )
        .prop_map(|rules| Filter::FuzzyRow {
            rules: rules
                .into_iter()
                .map(|(key, mask)| FuzzyRule { key, mask })
                .collect()
        }),
        proptest::collection::vec(
            (short_bytes(), any::<bool>(), short_bytes(), any::<bool>()),
            1..3
        )
        .prop_map(|ranges| {
            Filter::MultiRowRange {
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
        }),
    ]
}

fn row_filter() -> impl Strategy<Value = Filter> {
    prop_oneof![
        4 => row_leaf(),
        1 => proptest::collection::vec(row_leaf(), 2..3)
            .prop_map(|filters| Filter::List(FilterList { operator: ListOperator::MustPassOne, filters })),
    ]
}

fn cell_filter() -> impl Strategy<Value = Filter> {
    prop_oneof![
        value_comparator().prop_map(|(op, comparator)| Filter::Value { op, comparator }),
        (
            op(),
            proptest::sample::select(vec![b"x".to_vec(), b"y".to_vec()])
        )
            .prop_map(|(op, v)| Filter::Qualifier {
                op,
                comparator: Comparator::Binary(v)
            }),
        (op(), Just(b"a".to_vec())).prop_map(|(op, v)| Filter::Family {
            op,
            comparator: Comparator::Binary(v)
        }),
        proptest::collection::vec(1i64..4, 0..3)
            .prop_map(|timestamps| Filter::Timestamps { timestamps }),
        proptest::sample::select(vec![b"x".to_vec(), b"".to_vec(), b"y".to_vec()])
            .prop_map(|prefix| Filter::ColumnPrefix { prefix }),
        Just(Filter::MultipleColumnPrefix {
            prefixes: vec![b"x".to_vec(), b"xy".to_vec()]
        }),
        (any::<bool>(), any::<bool>()).prop_map(|(a, b)| Filter::ColumnRange {
            min: b"x".to_vec(),
            min_inclusive: a,
            max: b"xy".to_vec(),
            max_inclusive: b
        }),
        (
            value_comparator(),
            proptest::sample::select(vec![b"a".to_vec(), b"b".to_vec()]),
            proptest::sample::select(vec![b"x".to_vec(), b"y".to_vec(), b"".to_vec()])
        )
            .prop_map(
                |((op, comparator), family, qualifier)| Filter::ColumnValue {
                    family,
                    qualifier,
                    op,
                    comparator
                }
            ),
    ]
}

fn column_value_filter() -> impl Strategy<Value = Filter> {
    (
        value_comparator(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        proptest::sample::select(vec![b"x".to_vec(), b"y".to_vec()]),
    )
        .prop_map(|((op, comparator), missing, latest, exclude, qualifier)| {
            let test = ColumnValueTest {
                family: b"a".to_vec(),
                qualifier,
                op,
                comparator,
                filter_if_missing: missing,
                latest_version_only: latest,
            };
            if exclude {
                Filter::SingleColumnValueExclude(test)
            } else {
                Filter::SingleColumnValue(test)
            }
        })
}

fn other_filter() -> impl Strategy<Value = Filter> {
    prop_oneof![
        (
            value_comparator(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            proptest::sample::select(vec![b"x".to_vec(), b"y".to_vec()])
        )
            .prop_map(|((op, comparator), missing, latest, exclude, qualifier)| {
                let test = ColumnValueTest {
                    family: b"a".to_vec(),
                    qualifier,
                    op,
                    comparator,
                    filter_if_missing: missing,
                    latest_version_only: latest,
                };
                if exclude {
                    Filter::SingleColumnValueExclude(test)
                } else {
                    Filter::SingleColumnValue(test)
                }
            }),
        any::<bool>().prop_map(|len_as_value| Filter::KeyOnly { len_as_value }),
        Just(Filter::FirstKeyOnly),
        (0u64..4).prop_map(|page_size| Filter::Page { page_size }),
        (1u32..3, 0u32..2).prop_map(|(limit, offset)| Filter::ColumnPagination {
            limit,
            offset: ColumnOffset::Index(offset)
        }),
        (0u32..4).prop_map(|limit| Filter::ColumnCountGet { limit }),
        (
            proptest::sample::select(vec![b"a".to_vec(), b"b".to_vec()]),
            proptest::sample::select(vec![b"x".to_vec(), b"y".to_vec()]),
            any::<bool>(),
            proptest::option::of(value_comparator())
        )
            .prop_map(|(family, qualifier, drop_dependent_column, value_test)| {
                Filter::DependentColumn(DependentColumn {
                    family,
                    qualifier,
                    drop_dependent_column,
                    value_test,
                })
            }),
        row_filter().prop_map(|f| Filter::While(Box::new(f))),
        cell_filter().prop_map(|f| Filter::While(Box::new(f))),
        prop_oneof![row_filter(), cell_filter()].prop_map(|f| Filter::Skip(Box::new(f))),
        (row_filter(), cell_filter()).prop_map(|(a, b)| Filter::List(FilterList {
            operator: ListOperator::MustPassOne,
            filters: vec![a, b]
        })),
    ]
}

fn conjunct() -> impl Strategy<Value = Filter> {
    prop_oneof![4 => row_filter(), 3 => cell_filter(), 2 => column_value_filter(), 2 => other_filter()]
}

fn filter() -> impl Strategy<Value = Filter> {
    let member = prop_oneof![
        4 => conjunct(),
        1 => proptest::collection::vec(conjunct(), 2..3)
            .prop_map(|filters| Filter::List(FilterList { operator: ListOperator::MustPassAll, filters })),
    ];
    proptest::collection::vec(member, 1..4).prop_map(|mut filters| {
        if filters.len() == 1 {
            filters.remove(0)
        } else {
            Filter::List(FilterList {
                operator: ListOperator::MustPassAll,
                filters,
            })
        }
    })
}

fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
    prop_oneof![
        2 => Just(Bound::Unbounded),
        1 => row_key().prop_map(Bound::Included),
        1 => row_key().prop_map(Bound::Excluded),
    ]
}

fn scan_range() -> impl Strategy<Value = ScanRange> {
    (bound(), bound(), any::<bool>()).prop_map(|(start, end, reversed)| ScanRange {
        start,
        end,
        reversed,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// The planned scan (seek hints, stop predicate, row kernels, column value kernels, direct
    /// output, row limits) returns exactly the evaluator's rows.
    #[test]
    fn planned_scan_equals_the_evaluator(filter in filter(), table in table(), scan in scan_range(), max_versions in 1u32..3) {
        run(Some(&filter), &table, &scan, max_versions);
    }

    /// Hints never skip a row that could match: every row the evaluator returns is inside the
    /// plan's ranges, `seek` says `Here` for it, and every block containing it may contain it.
    #[test]
    fn hints_never_skip_a_returned_row(filter in filter(), table in table(), scan in scan_range()) {
        let plan = Plan::compile(Some(&filter), &scan).unwrap();
        let rows = table.refs(scan.reversed);
        let returned = strata_filters::reference::scan_with_evaluator(Some(&filter), &rows, &scan, 3).unwrap();
        let keys: Vec<&[u8]> = table.rows.iter().map(|row| row[0].row.as_slice()).collect();
        for (row, _) in &returned {
            prop_assert!(plan.ranges.contains(row), "row {:?} outside {:?}", row, plan.ranges);
            prop_assert_eq!(plan.seek(row), Seek::Here);
            let at = keys.iter().position(|key| *key == row.as_slice()).unwrap_or(0);
            for first in keys[..=at].iter().rev().take(3) {
                for last in keys[at..].iter().take(3) {
                    prop_assert!(plan.may_contain(first, last), "block [{:?}, {:?}] would skip {:?}", first, last, row);
                }
            }
        }
    }

    /// The row predicate and stop predicate evaluate the same over a batch (every ISA, fixed
    /// and variable batches) as row by row.
    #[test]
    fn row_predicates_agree_over_batches(filter in filter(), keys in proptest::collection::vec(row_key(), 0..80), width in 1usize..5) {
        let plan = Plan::compile(Some(&filter), &ScanRange::all()).unwrap();
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for key in &keys {
            data.extend_from_slice(key);
            offsets.push(data.len() as u32);
        }
        let fixed_keys: Vec<Vec<u8>> = keys.iter().map(|k| k.iter().copied().cycle().take(width).collect()).collect();
        let fixed_data: Vec<u8> = fixed_keys.concat();
        let batches = [
            (Batch::variable(&offsets, &data).unwrap(), keys.clone()),
            (Batch::fixed(width, fixed_keys.len(), &fixed_data).unwrap(), fixed_keys.clone()),
        ];
        for predicate in [&plan.row_filter, &plan.stop_filter].into_iter().flatten() {
            for (batch, rows) in &batches {
                let expected = Bitmap::from_bools(rows.iter().map(|row| predicate.matches(row)));
                for isa in Isa::supported() {
                    let mut out = Bitmap::zeros(0);
                    predicate.eval_with(isa, batch, &mut out);
                    prop_assert_eq!(&out, &expected, "{:?}", isa);
                }
            }
        }
    }
}

#[test]
fn plan_shapes() {
    let compile =
        |text: &str| Plan::compile(Some(&parse(text).unwrap()), &ScanRange::all()).unwrap();
    // Row predicates and cell predicates only: no evaluator needed.
    let plan = compile("PrefixFilter('ab') AND ValueFilter(=, 'binary:x') AND KeyOnlyFilter()");
    assert!(!plan.needs_evaluator && plan.row_filter.is_some() && plan.cell_filter.len() == 1);
    assert_eq!(plan.seek(b"aa"), Seek::Forward(b"ab".to_vec()));
    assert_eq!(plan.seek(b"b"), Seek::Done);
    // ColumnValueFilter is a cell predicate (exact without the evaluator);
    // DependentColumnFilter decides from the whole row, in the evaluator.
    let plan = compile("ColumnValueFilter('f', 'q', >, 'binary:5')");
    assert!(!plan.needs_evaluator);
    assert!(matches!(
        plan.cell_filter.as_slice(),
        [strata_filters::plan::CellPredicate::ColumnValue { .. }]
    ));
    assert!(compile("DependentColumnFilter('f', 'q')").needs_evaluator);
    // Two RowMaskFilters on one field fuse into a segment range.
    let plan = compile(
        r"RowMaskFilter(16, '\xFF\xFF\xFF\xFF', >, '\x00\x00\x00\x05') AND RowMaskFilter(16, '\xFF\xFF\xFF\xFF', <, '\x00\x00\x00\x09')",
    );
    assert!(matches!(
        plan.row_filter,
        Some(strata_filters::plan::RowPredicate::SegmentRange(_))
    ));
    // RowMaskFilters with `=` fuse into one masked equality, with a PrefixFilter beside them;
    // prefixes alone stay exactly key ranges.
    let plan = compile(
        r"RowMaskFilter(12, '\xFF\xFF\xFF\xFF', =, '\x00\x00\x01\x94') AND RowMaskFilter(16, '\xFF\xFF\xFF\xFF', =, '\x01\x33\x7D\x51')",
    );
    assert!(matches!(
        &plan.row_filter,
        Some(strata_filters::plan::RowPredicate::MaskedEquals(fused)) if fused.parts().len() == 2
    ));
    let plan = compile(
        r"PrefixFilter('ab') AND RowMaskFilter(4, '\xFF', =, '\x07') AND RowMaskFilter(4, '\xFF', >, '\x01')",
    );
    match &plan.row_filter {
        Some(strata_filters::plan::RowPredicate::All(members)) => {
            assert_eq!(members.len(), 2, "{members:?}");
            assert!(matches!(
                &members[0],
                strata_filters::plan::RowPredicate::MaskedEquals(fused) if fused.parts().len() == 2
            ));
        }
        other => panic!("expected an AND of the fused test and the > test, got {other:?}"),
    }
    let plan = compile("PrefixFilter('a') AND PrefixFilter('ab')");
    assert!(plan.as_key_interval().is_some());
    // A page after a column test is exact; before it, the evaluator must count rows.
    assert!(
        !compile("SingleColumnValueFilter('f', 'q', =, 'binary:x') AND PageFilter(3)")
            .needs_evaluator
    );
    let plan = compile("PageFilter(3) AND SingleColumnValueFilter('f', 'q', =, 'binary:x')");
    assert!(
        plan.needs_evaluator && plan.column_filters.is_empty() && plan.limits.max_rows == Some(3)
    );
    // WHILE over a row predicate becomes a stop predicate; only the end of the ranges applies.
    let plan = compile("WHILE RowFilter(<, 'binary:m') AND PrefixFilter('c')");
    assert!(plan.stop_filter.is_some() && !plan.needs_evaluator);
    assert_eq!(plan.seek(b"a"), Seek::Here);
    // Fuzzy rules become seek hints.
    let plan = compile(r"FuzzyRowFilter('\x00\x01??', '\x00\x00\x01\x01')");
    assert_eq!(
        plan.seek(b"\x00\x00zz"),
        Seek::Forward(b"\x00\x01".to_vec())
    );
    assert!(!plan.may_contain(b"\x00\x02", b"\x00\x09"));
    // A WHILE elsewhere forbids skipping rows by row predicates.
    let plan = compile("WHILE ValueFilter(=, 'binary:x') OR PrefixFilter('a')");
    assert!(plan.needs_evaluator && plan.row_filter.is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Cell predicates over cell batches agree with the per-cell test, and the batch form of
    /// a column value predicate agrees with its row test.
    #[test]
    fn cell_kernels_agree_over_batches(filter in cell_filter(), column in column_value_filter(), table in table()) {
        let plan = Plan::compile(Some(&Filter::List(FilterList { operator: ListOperator::MustPassAll, filters: vec![column, filter] })), &ScanRange::all()).unwrap();
        let cells: Vec<&Cell> = table.rows.iter().flatten().filter(|c| c.family == b"a").collect();
        let mut offsets = vec![0u32];
        let mut qualifiers = Vec::new();
        for cell in &cells {
            qualifiers.extend_from_slice(&cell.qualifier);
            offsets.push(qualifiers.len() as u32);
        }
        let mut value_offsets = vec![0u32];
        let mut values = Vec::new();
        for cell in &cells {
            values.extend_from_slice(&cell.value);
            value_offsets.push(values.len() as u32);
        }
        let timestamps: Vec<i64> = cells.iter().map(|c| c.timestamp).collect();
        let batch = strata_filters::plan::CellBatch {
            family: b"a",
            qualifiers: strata_filters::VarBatch::new(&offsets, &qualifiers).unwrap(),
            timestamps: &timestamps,
            values: strata_filters::VarBatch::new(&value_offsets, &values).unwrap(),
        };
        for predicate in &plan.cell_filter {
            let mut out = Bitmap::zeros(0);
            predicate.eval(&batch, &mut out);
            let expected = Bitmap::from_bools(cells.iter().map(|c| predicate.matches(&c.as_ref())));
            prop_assert_eq!(out, expected);
        }
        for predicate in &plan.column_filters {
            // One latest value per row (present or not).
            let mut latest_offsets = vec![0u32];
            let mut latest = Vec::new();
            let mut present = Vec::new();
            for row in &table.rows {
                let newest = row.iter().find(|c| c.family == predicate.family && c.qualifier == predicate.qualifier);
                present.push(newest.is_some());
                latest.extend_from_slice(newest.map_or(&[][..], |c| c.value.as_slice()));
                latest_offsets.push(latest.len() as u32);
            }
            let mut out = Bitmap::zeros(0);
            predicate.eval_latest(&strata_filters::VarBatch::new(&latest_offsets, &latest).unwrap(), &Bitmap::from_bools(present), &mut out);
            let rows: Vec<Vec<strata_filters::CellRef<'_>>> = table.refs(false);
            let expected = Bitmap::from_bools(rows.iter().map(|row| predicate.row_passes_cells(row)));
            prop_assert_eq!(out, expected);
        }
    }
}

#[test]
fn a_plan_that_only_keeps_one_key_interval_says_which() {
    let range = ScanRange {
        start: Bound::Unbounded,
        end: Bound::Unbounded,
        reversed: false,
    };
    let interval = |text: &str| {
        let filter = strata_filters::parse(text).unwrap();
        Plan::compile(Some(&filter), &range)
            .unwrap()
            .as_key_interval()
            .map(|i| (i.start.clone(), i.end.clone()))
    };
    assert_eq!(
        interval("PrefixFilter('ab')"),
        Some((
            Bound::Included(b"ab".to_vec()),
            Bound::Excluded(b"ac".to_vec())
        ))
    );
    // Anything else the filter does keeps the filter.
    for text in [
        "PrefixFilter('ab') AND ValueFilter(=, 'binary:x')",
        "PrefixFilter('ab') AND KeyOnlyFilter()",
        "PrefixFilter('ab') AND PageFilter(3)",
        "PrefixFilter('ab') OR PrefixFilter('cd')",
        "WHILE PrefixFilter('ab')",
        "FuzzyRowFilter('a?', '\\x00\\x01')",
    ] {
        assert_eq!(interval(text), None, "{text}");
    }
}

#[test]
fn a_lone_prefix_filter_is_plainly_the_interval_its_compiled_plan_keeps() {
    let range = ScanRange::all();
    for prefix in [&b"ab"[..], b"", b"a\xff", b"\xff\xff", b"\x00"] {
        let filter = strata_filters::Filter::Prefix {
            prefix: prefix.to_vec(),
        };
        let compiled = Plan::compile(Some(&filter), &range).unwrap();
        assert_eq!(
            Plan::plain_key_interval(&filter).as_ref(),
            compiled.as_key_interval(),
            "{prefix:?}"
        );
    }
    // Other filters are left to the compiled plan.
    for text in [
        "RowFilter(<, 'binary:ab')",
        "PrefixFilter('ab') AND KeyOnlyFilter()",
        "WHILE PrefixFilter('ab')",
    ] {
        let filter = strata_filters::parse(text).unwrap();
        assert_eq!(Plan::plain_key_interval(&filter), None, "{text}");
    }
}
