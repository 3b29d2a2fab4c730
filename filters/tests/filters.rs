//! Per-filter behaviour: small tables and the exact rows HBase 2.x returns. Every case also
//! runs through the plan (`support::run` asserts the planned scan agrees).

mod support;

use support::{Table, expect, scan, scan_reversed};

fn people() -> Table {
    Table::new(&[
        ("a1", "f", "name", 1, "ann"),
        ("b1", "f", "age", 1, "31"),
        ("b1", "f", "name", 1, "bob"),
        ("b2", "f", "name", 1, "bea"),
        ("c1", "f", "name", 1, "cid"),
    ])
}

#[test]
fn prefix_filter_returns_the_prefix_and_stops_past_it() {
    expect(
        scan("PrefixFilter('b')", &people(), 1),
        &["b1 f:age@1=31 f:name@1=bob", "b2 f:name@1=bea"],
    );
    // A row shorter than the prefix is excluded without ending the scan.
    let table = Table::new(&[
        ("a", "f", "q", 1, "v"),
        ("ab", "f", "q", 1, "v"),
        ("b", "f", "q", 1, "v"),
    ]);
    expect(scan("PrefixFilter('ab')", &table, 1), &["ab f:q@1=v"]);
}

#[test]
fn prefix_filter_in_a_reversed_scan() {
    expect(
        scan_reversed("PrefixFilter('b')", &people(), 1),
        &["b2 f:name@1=bea", "b1 f:age@1=31 f:name@1=bob"],
    );
}

#[test]
fn row_filter_every_operator() {
    let t = people();
    expect(
        scan("RowFilter(<, 'binary:b2')", &t, 1),
        &["a1 f:name@1=ann", "b1 f:age@1=31 f:name@1=bob"],
    );
    expect(
        scan("RowFilter(<=, 'binary:b1')", &t, 1),
        &["a1 f:name@1=ann", "b1 f:age@1=31 f:name@1=bob"],
    );
    expect(
        scan("RowFilter(=, 'binary:b2')", &t, 1),
        &["b2 f:name@1=bea"],
    );
    assert_eq!(scan("RowFilter(!=, 'binary:b1')", &t, 1).len(), 3);
    expect(
        scan("RowFilter(>=, 'binary:b2')", &t, 1),
        &["b2 f:name@1=bea", "c1 f:name@1=cid"],
    );
    expect(
        scan("RowFilter(>, 'binary:b2')", &t, 1),
        &["c1 f:name@1=cid"],
    );
    assert_eq!(scan("RowFilter(=, 'binaryprefix:b')", &t, 1).len(), 2);
    assert_eq!(scan("RowFilter(=, 'regexstring:^[ac]')", &t, 1).len(), 2);
    expect(
        scan("RowFilter(!=, 'substring:B')", &t, 1),
        &["a1 f:name@1=ann", "c1 f:name@1=cid"],
    );
    expect(scan("RowFilter(NO_OP, 'binary:a1')", &t, 1), &[]);
}

fn two_families() -> Table {
    Table::new(&[
        ("r1", "a", "x", 1, "1"),
        ("r1", "a", "y", 1, "2"),
        ("r1", "b", "x", 1, "3"),
        ("r2", "b", "", 1, "4"),
    ])
}

#[test]
fn family_filter_skips_a_family_but_not_the_row() {
    expect(
        scan("FamilyFilter(=, 'binary:b')", &two_families(), 1),
        &["r1 b:x@1=3", "r2 b:@1=4"],
    );
    expect(
        scan("FamilyFilter(!=, 'binary:b')", &two_families(), 1),
        &["r1 a:x@1=1 a:y@1=2"],
    );
}

#[test]
fn qualifier_filter_lets_the_empty_qualifier_through() {
    expect(
        scan("QualifierFilter(=, 'binary:x')", &two_families(), 1),
        &["r1 a:x@1=1 b:x@1=3", "r2 b:@1=4"],
    );
}

#[test]
fn value_filter_comparators() {
    let t = Table::new(&[
        ("r1", "f", "a", 1, "Hello World"),
        ("r1", "f", "b", 1, "bye"),
        ("r2", "f", "a", 1, "hello\nthere"),
    ]);
    expect(
        scan("ValueFilter(=, 'substring:WORLD')", &t, 1),
        &["r1 f:a@1=Hello World"],
    );
    expect(
        scan("ValueFilter(=, 'regexstring:o.t')", &t, 1),
        &["r2 f:a@1=hello\\x0Athere"],
    );
    expect(
        scan("ValueFilter(=, 'binaryprefix:by')", &t, 1),
        &["r1 f:b@1=bye"],
    );
    expect(
        scan("ValueFilter(>, 'binary:c')", &t, 1),
        &["r2 f:a@1=hello\\x0Athere"],
    );
}

#[test]
fn value_filter_with_long_and_bit_comparators() {
    let mut table = Table::default();
    for (row, value) in [
        ("r1", 5i64.to_be_bytes().to_vec()),
        ("r2", (-7i64).to_be_bytes().to_vec()),
        ("r3", b"short".to_vec()),
    ] {
        table.rows.push(vec![support::Cell {
            row: row.as_bytes().to_vec(),
            family: b"f".to_vec(),
            qualifier: b"n".to_vec(),
            timestamp: 1,
            value,
        }]);
    }
    let rows = |filter: &str| {
        scan(filter, &table, 1)
            .into_iter()
            .map(|line| line[..2].to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(rows("ValueFilter(<, 'long:0')"), ["r2"]);
    assert_eq!(rows("ValueFilter(>=, 'long:5')"), ["r1"]);
    // A value that is not 8 bytes never passes a long comparison, whatever the operator.
    assert_eq!(rows("ValueFilter(!=, 'long:5')"), ["r2"]);
    assert_eq!(
        rows("ValueFilter(=, b'bitand:\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x04')"),
        ["r1"]
    );
    assert_eq!(rows("ValueFilter(=, 'null:')"), Vec::<String>::new());
    assert_eq!(rows("ValueFilter(!=, 'null:')").len(), 3);
}

fn scores() -> Table {
    Table::new(&[
        ("r1", "f", "a", 1, "x"),
        ("r1", "f", "score", 3, "10"),
        ("r1", "f", "score", 2, "99"),
        ("r2", "f", "a", 1, "y"),
        ("r3", "f", "a", 1, "z"),
        ("r3", "f", "score", 1, "99"),
    ])
}

#[test]
fn single_column_value_filter_missing_and_latest_version() {
    let t = scores();
    // Defaults: rows without the column pass; only the newest version is tested.
    expect(
        scan(
            "SingleColumnValueFilter('f', 'score', =, 'binary:99')",
            &t,
            1,
        ),
        &["r2 f:a@1=y", "r3 f:a@1=z f:score@1=99"],
    );
    // filterIfMissing drops r2.
    expect(
        scan(
            "SingleColumnValueFilter('f', 'score', =, 'binary:99', true, true)",
            &t,
            1,
        ),
        &["r3 f:a@1=z f:score@1=99"],
    );
    // latestVersionOnly = false: an older version may match; the whole row is returned.
    expect(
        scan(
            "SingleColumnValueFilter('f', 'score', =, 'binary:99', true, false)",
            &t,
            2,
        ),
        &[
            "r1 f:a@1=x f:score@3=10 f:score@2=99",
            "r3 f:a@1=z f:score@1=99",
        ],
    );
}

#[test]
fn single_column_value_exclude_filter_drops_the_tested_column() {
    let t = scores();
    expect(
        scan(
            "SingleColumnValueExcludeFilter('f', 'score', =, 'binary:99', true, true)",
            &t,
            1,
        ),
        &["r3 f:a@1=z"],
    );
    // A row holding only the tested column is empty after the exclusion: not returned.
    let only = Table::new(&[("r1", "f", "score", 1, "99")]);
    expect(
        scan(
            "SingleColumnValueExcludeFilter('f', 'score', =, 'binary:99')",
            &only,
            1,
        ),
        &[],
    );
}

#[test]
fn page_filter_counts_rows_and_its_position_matters() {
    expect(
        scan("PageFilter(2)", &people(), 1),
        &["a1 f:name@1=ann", "b1 f:age@1=31 f:name@1=bob"],
    );
    expect(scan("PageFilter(0)", &people(), 1), &[]);
    let t = Table::new(&[
        ("r1", "f", "a", 1, "1"),
        ("r1", "f", "b", 1, "no"),
        ("r2", "f", "a", 1, "1"),
        ("r2", "f", "b", 1, "yes"),
    ]);
    // The page counts r1 before the column test rejects it, so nothing is returned.
    expect(
        scan(
            "PageFilter(1) AND SingleColumnValueFilter('f', 'b', =, 'binary:yes')",
            &t,
            1,
        ),
        &[],
    );
    // With the column test first the page only counts rows that passed it.
    expect(
        scan(
            "SingleColumnValueFilter('f', 'b', =, 'binary:yes') AND PageFilter(1)",
            &t,
            1,
        ),
        &["r2 f:a@1=1 f:b@1=yes"],
    );
}

#[test]
fn while_ends_the_scan_at_the_first_rejection() {
    expect(
        scan("WHILE RowFilter(<, 'binary:b2')", &people(), 1),
        &["a1 f:name@1=ann", "b1 f:age@1=31 f:name@1=bob"],
    );
    let t = Table::new(&[
        ("r1", "f", "a", 1, "x"),
        ("r1", "f", "b", 1, "x"),
        ("r2", "f", "a", 1, "x"),
        ("r2", "f", "b", 1, "y"),
        ("r2", "f", "c", 1, "x"),
        ("r3", "f", "a", 1, "x"),
    ]);
    // HBase returns the part of r2 before the first rejected cell, then stops.
    expect(
        scan("WHILE ValueFilter(=, 'binary:x')", &t, 1),
        &["r1 f:a@1=x f:b@1=x", "r2 f:a@1=x"],
    );
}

#[test]
fn skip_drops_whole_rows() {
    let t = Table::new(&[
        ("r1", "f", "a", 1, "1"),
        ("r1", "f", "b", 1, "0"),
        ("r2", "f", "a", 1, "2"),
        ("r2", "f", "b", 1, "3"),
    ]);
    expect(
        scan("SKIP ValueFilter(!=, 'binary:0')", &t, 1),
        &["r2 f:a@1=2 f:b@1=3"],
    );
    expect(
        scan("ValueFilter(!=, 'binary:0')", &t, 1),
        &["r1 f:a@1=1", "r2 f:a@1=2 f:b@1=3"],
    );
    // HBase's SkipFilter does not pass row keys to the wrapped filter: a wrapped RowFilter
    // never filters.
    assert_eq!(scan("SKIP RowFilter(=, 'binary:r1')", &t, 1).len(), 2);
}

#[test]
fn filter_lists_and_precedence() {
    let t = people();
    expect(
        scan("PrefixFilter('a') OR PrefixFilter('c')", &t, 1),
        &["a1 f:name@1=ann", "c1 f:name@1=cid"],
    );
    // AND binds tighter than OR.
    expect(
        scan(
            "PrefixFilter('a') OR PrefixFilter('b') AND QualifierFilter(=, 'binary:age')",
            &t,
            1,
        ),
        &["a1 f:name@1=ann", "b1 f:age@1=31"],
    );
    expect(
        scan(
            "(PrefixFilter('a') OR PrefixFilter('b')) AND QualifierFilter(=, 'binary:age')",
            &t,
            1,
        ),
        &["b1 f:age@1=31"],
    );
    // OR applies a member's transform only to cells that member included.
    let v = Table::new(&[("r1", "f", "a", 1, "x"), ("r1", "f", "b", 1, "y")]);
    expect(
        scan("ValueFilter(=, 'binary:x') OR KeyOnlyFilter()", &v, 1),
        &["r1 f:a@1= f:b@1="],
    );
    expect(
        scan("ValueFilter(=, 'binary:x') AND KeyOnlyFilter(true)", &v, 1),
        &["r1 f:a@1=\\x00\\x00\\x00\\x01"],
    );
}

#[test]
fn first_key_only_and_key_only() {
    expect(
        scan("FirstKeyOnlyFilter()", &two_families(), 1),
        &["r1 a:x@1=1", "r2 b:@1=4"],
    );
    assert_eq!(
        scan("KeyOnlyFilter()", &people(), 1)[0].clone(),
        "a1 f:name@1="
    );
    assert_eq!(
        scan("KeyOnlyFilter(true)", &people(), 1)[0].clone(),
        "a1 f:name@1=\\x00\\x00\\x00\\x03"
    );
}

fn versions() -> Table {
    Table::new(&[
        ("r1", "f", "a", 30, "new"),
        ("r1", "f", "a", 20, "mid"),
        ("r1", "f", "a", 10, "old"),
        ("r1", "f", "b", 20, "b20"),
    ])
}

#[test]
fn timestamps_filter_and_versions_counted_after_the_filter() {
    expect(
        scan("TimestampsFilter(10, 20)", &versions(), 1),
        &["r1 f:a@20=mid f:b@20=b20"],
    );
    expect(
        scan("TimestampsFilter(10, 20)", &versions(), 3),
        &["r1 f:a@20=mid f:a@10=old f:b@20=b20"],
    );
    // HBase applies the filter before counting versions: the newest *matching* version wins.
    expect(
        scan("ValueFilter(=, 'binary:old')", &versions(), 1),
        &["r1 f:a@10=old"],
    );
}

#[test]
fn column_pagination_and_count() {
    let t = Table::new(&[
        ("r1", "f", "a", 1, "1"),
        ("r1", "f", "b", 1, "2"),
        ("r1", "f", "c", 1, "3"),
        ("r1", "f", "d", 1, "4"),
        ("r2", "f", "a", 1, "5"),
        ("r2", "f", "b", 1, "6"),
    ]);
    expect(
        scan("ColumnPaginationFilter(2, 1)", &t, 1),
        &["r1 f:b@1=2 f:c@1=3", "r2 f:b@1=6"],
    );
    expect(
        scan("ColumnPaginationFilter(2, 'b')", &t, 1),
        &["r1 f:b@1=2 f:c@1=3", "r2 f:b@1=6"],
    );
    // ColumnCountGetFilter closes the family inside the first row with more than `limit`
    // columns; with one family nothing more comes.
    expect(
        scan("ColumnCountGetFilter(2)", &t, 1),
        &["r1 f:a@1=1 f:b@1=2"],
    );
    expect(
        scan("ColumnCountGetFilter(4)", &t, 1),
        &["r1 f:a@1=1 f:b@1=2 f:c@1=3 f:d@1=4", "r2 f:a@1=5 f:b@1=6"],
    );
}

#[test]
fn inclusive_stop_filter() {
    expect(
        scan("InclusiveStopFilter('b1')", &people(), 1),
        &["a1 f:name@1=ann", "b1 f:age@1=31 f:name@1=bob"],
    );
    expect(
        scan_reversed("InclusiveStopFilter('b2')", &people(), 1),
        &["c1 f:name@1=cid", "b2 f:name@1=bea"],
    );
}

#[test]
fn column_range_and_prefix_filters() {
    let t = Table::new(&[
        ("r1", "f", "a", 1, "1"),
        ("r1", "f", "ab", 1, "2"),
        ("r1", "f", "ac", 1, "3"),
        ("r1", "f", "b", 1, "4"),
        ("r1", "f", "c", 1, "5"),
    ]);
    expect(
        scan("ColumnRangeFilter('ab', false, 'b', true)", &t, 1),
        &["r1 f:ac@1=3 f:b@1=4"],
    );
    expect(
        scan("ColumnRangeFilter('', true, 'ab', false)", &t, 1),
        &["r1 f:a@1=1"],
    );
    expect(
        scan("ColumnPrefixFilter('a')", &t, 1),
        &["r1 f:a@1=1 f:ab@1=2 f:ac@1=3"],
    );
    expect(
        scan("MultipleColumnPrefixFilter('ab', 'c')", &t, 1),
        &["r1 f:ab@1=2 f:c@1=5"],
    );
    // HBase only tries the largest prefix not above the qualifier: with 'a' and 'ab', the
    // qualifier 'ac' is tested against 'ab' and skipped.
    expect(
        scan("MultipleColumnPrefixFilter('a', 'ab')", &t, 1),
        &["r1 f:a@1=1 f:ab@1=2"],
    );
}

fn composite() -> Table {
    Table::new(&[
        ("\x00\x01aa", "f", "q", 1, "1"),
        ("\x00\x02ab", "f", "q", 1, "2"),
        ("\x00\x02zz", "f", "q", 1, "3"),
        ("\x01\x02ab", "f", "q", 1, "4"),
        ("\x01", "f", "q", 1, "5"),
    ])
}

fn row_keys(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .map(|line| line.split(' ').next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn fuzzy_row_filter() {
    let t = composite();
    let rows = row_keys(scan(
        r"FuzzyRowFilter('\x00\x02ab', '\x01\x00\x00\x00')",
        &t,
        1,
    ));
    assert_eq!(rows, [r"\x00\x02ab", r"\x01", r"\x01\x02ab"]);
    // HBase compares min(row, key) bytes: the 1-byte row \x01 matches on its length.
    let rows = row_keys(scan(
        r"FuzzyRowFilter('\x00\x02??', '\x00\x00\x01\x01')",
        &t,
        1,
    ));
    assert_eq!(rows, [r"\x00\x02ab", r"\x00\x02zz"]);
}

#[test]
fn multi_row_range_filter() {
    let t = people();
    assert_eq!(
        row_keys(scan(
            "MultiRowRangeFilter('a1', true, 'b1', true, 'c', true, '', false)",
            &t,
            1
        )),
        ["a1", "b1", "c1"]
    );
    assert_eq!(
        row_keys(scan("MultiRowRangeFilter('a1', false, 'b2', false)", &t, 1)),
        ["b1"]
    );
    assert_eq!(
        row_keys(scan_reversed(
            "MultiRowRangeFilter('b1', true, 'b2', true)",
            &t,
            1
        )),
        ["b2", "b1"]
    );
}

#[test]
fn row_mask_filter_and_short_rows() {
    let t = composite();
    assert_eq!(
        row_keys(scan(r"RowMaskFilter(1, '\xFF', =, '\x02')", &t, 1)),
        [r"\x00\x02ab", r"\x00\x02zz", r"\x01\x02ab"]
    );
    assert_eq!(
        row_keys(scan(r"RowMaskFilter(0, '\xFF\xFF', >, '\x00\x01')", &t, 1)),
        [r"\x00\x02ab", r"\x00\x02zz", r"\x01\x02ab"]
    );
    // Rows shorter than offset + len never pass, not even `!=`.
    assert_eq!(
        row_keys(scan(r"RowMaskFilter(1, '\xFF', !=, '\x09')", &t, 1)).len(),
        4
    );
    // 'a' & 0xDF is 'A': the mask folds case.
    assert_eq!(
        row_keys(scan(r"RowMaskFilter(2, '\xDF', =, 'A')", &t, 1)),
        [r"\x00\x01aa", r"\x00\x02ab", r"\x01\x02ab"]
    );
}

#[test]
fn the_protocol_methods_mirror_hbase() {
    use strata_filters::{CellHint, CellRef, FilterEvaluator, ReturnCode};
    let cell = |qualifier: &'static [u8]| CellRef {
        row: b"r1",
        family: b"f",
        qualifier,
        timestamp: 5,
        value: b"v",
    };

    let mut range = FilterEvaluator::new(
        &strata_filters::parse("ColumnRangeFilter('m', true, 'p', false)").unwrap(),
    )
    .unwrap();
    assert!(!range.filter_row_key(b"r1"));
    assert_eq!(
        range.filter_cell(&cell(b"a")),
        ReturnCode::SeekNextUsingHint
    );
    assert_eq!(
        range.next_cell_hint(&cell(b"a")),
        Some(CellHint {
            row: b"r1".to_vec(),
            family: b"f".to_vec(),
            qualifier: b"m".to_vec()
        })
    );
    assert_eq!(range.filter_cell(&cell(b"n")), ReturnCode::Include);
    assert_eq!(range.filter_cell(&cell(b"p")), ReturnCode::NextRow);

    let mut page = FilterEvaluator::new(&strata_filters::parse("PageFilter(1)").unwrap()).unwrap();
    assert!(page.has_filter_row() && !page.filter_all_remaining());
    assert!(!page.filter_row());
    assert!(page.filter_all_remaining() && page.filter_row_key(b"r2"));

    let mut key_only =
        FilterEvaluator::new(&strata_filters::parse("KeyOnlyFilter(true)").unwrap()).unwrap();
    let transformed = key_only.transform_cell(cell(b"a").into());
    assert_eq!(transformed.value.as_ref(), &1i32.to_be_bytes());
    assert_eq!(key_only.filter_cell(&cell(b"a")), ReturnCode::Include);

    let mut exclude = FilterEvaluator::new(
        &strata_filters::parse("SingleColumnValueExcludeFilter('f', 'a', =, 'binary:v')").unwrap(),
    )
    .unwrap();
    let mut cells = vec![cell(b"a").into(), cell(b"b").into()];
    exclude.filter_row_cells(&mut cells);
    assert_eq!(cells.len(), 1);
}

#[test]
fn evaluate_row_reports_row_level_seeks() {
    use strata_filters::{CellRef, FilterEvaluator};
    let filter =
        strata_filters::parse(r"FuzzyRowFilter('\x00\x05??', '\x00\x00\x01\x01')").unwrap();
    let mut evaluator = FilterEvaluator::new(&filter).unwrap();
    let cells = [
        CellRef {
            row: b"\x00\x01zz",
            family: b"a",
            qualifier: b"q",
            timestamp: 1,
            value: b"",
        },
        CellRef {
            row: b"\x00\x01zz",
            family: b"b",
            qualifier: b"q",
            timestamp: 1,
            value: b"",
        },
    ];
    let outcome = evaluator.evaluate_row(&cells, 1);
    assert!(outcome.excluded && !outcome.stop_scan);
    assert_eq!(outcome.next_row_hint, Some(b"\x00\x05".to_vec()));
    // Past the last possible match the filter ends the scan.
    let late = [CellRef {
        row: b"\x00\x06",
        family: b"a",
        qualifier: b"q",
        timestamp: 1,
        value: b"",
    }];
    let outcome = evaluator.evaluate_row(&late, 1);
    assert!(outcome.excluded && outcome.stop_scan);
}

/// HBase's `TestDependentColumnFilter.testScans`: two rows, two families, three stamps; the
/// reference column is `familyOne:qualifier`.
fn dependent_table() -> Table {
    Table::new(&[
        ("test1", "familyOne", "qualifier", 900, "bad1"),
        ("test1", "familyOne", "qualifier", 800, "bad2"),
        ("test1", "familyOne", "qualifier", 700, "match"),
        ("test1", "familyTwo", "qualifier", 900, "bad1"),
        ("test1", "familyTwo", "qualifier", 700, "bad3"),
        ("test2", "familyOne", "qualifier", 900, "bad1"),
        ("test2", "familyOne", "qualifier", 700, "match"),
        ("test2", "familyTwo", "qualifier", 900, "match"),
        ("test2", "familyTwo", "qualifier", 800, "bad3"),
    ])
}

fn cell_count(rows: &[String]) -> usize {
    rows.iter().map(|row| row.split(' ').count() - 1).sum()
}

#[test]
fn dependent_column_filter_matches_hbase_test_scans() {
    let t = dependent_table();
    let all = u32::MAX;
    // Every cell whose timestamp the reference column has: 2 rows, 8 cells.
    let rows = scan("DependentColumnFilter('familyOne', 'qualifier')", &t, all);
    assert_eq!((rows.len(), cell_count(&rows)), (2, 8), "{rows:?}");
    expect(
        rows,
        &[
            "test1 familyOne:qualifier@900=bad1 familyOne:qualifier@800=bad2 \
             familyOne:qualifier@700=match familyTwo:qualifier@900=bad1 \
             familyTwo:qualifier@700=bad3",
            "test2 familyOne:qualifier@900=bad1 familyOne:qualifier@700=match \
             familyTwo:qualifier@900=match",
        ],
    );
    // Dropping the reference cells: 2 rows, 3 cells.
    expect(
        scan(
            "DependentColumnFilter('familyOne', 'qualifier', true)",
            &t,
            all,
        ),
        &[
            "test1 familyTwo:qualifier@900=bad1 familyTwo:qualifier@700=bad3",
            "test2 familyTwo:qualifier@900=match",
        ],
    );
    // With a value test only the matching reference cells count: 2 rows, 3 cells.
    expect(
        scan(
            "DependentColumnFilter('familyOne', 'qualifier', false, =, 'binary:match')",
            &t,
            all,
        ),
        &[
            "test1 familyOne:qualifier@700=match familyTwo:qualifier@700=bad3",
            "test2 familyOne:qualifier@700=match",
        ],
    );
    // Value test and drop: 1 row, 1 cell.
    expect(
        scan(
            "DependentColumnFilter('familyOne', 'qualifier', true, =, 'binary:match')",
            &t,
            all,
        ),
        &["test1 familyTwo:qualifier@700=bad3"],
    );
    // NO_OP in the 5-argument form lets no reference cell count: nothing.
    expect(
        scan(
            "DependentColumnFilter('familyOne', 'qualifier', false, NO_OP, 'binary:match')",
            &t,
            all,
        ),
        &[],
    );
    // A row without the reference column keeps nothing.
    let lone = Table::new(&[("r", "f", "x", 5, "v")]);
    expect(scan("DependentColumnFilter('f', 'ref')", &lone, 1), &[]);
}

/// The reference timestamps are those the filter saw: HBase calls the filter on a column's
/// versions until the scan's version count (which counts included cells) is exceeded, so with
/// 1 version the second reference version is seen (and counts) but not returned.
#[test]
fn dependent_column_filter_with_multiple_versions() {
    let t = Table::new(&[
        ("r", "f", "a", 2, "a2"),
        ("r", "f", "a", 1, "a1"),
        ("r", "f", "ref", 3, "new"),
        ("r", "f", "ref", 2, "old"),
        ("r", "f", "ref", 1, "oldest"),
        ("r", "g", "b", 3, "b3"),
        ("r", "g", "b", 1, "b1"),
    ]);
    // One version: ref@3 included, ref@2 seen (stamp 2 counts) then cut by the version count;
    // ref@1 never seen. f:a's newest version (2) matches, g:b's newest (3) matches.
    expect(
        scan("DependentColumnFilter('f', 'ref')", &t, 1),
        &["r f:a@2=a2 f:ref@3=new g:b@3=b3"],
    );
    // Every version: all three stamps count.
    expect(
        scan("DependentColumnFilter('f', 'ref')", &t, u32::MAX),
        &["r f:a@2=a2 f:a@1=a1 f:ref@3=new f:ref@2=old f:ref@1=oldest g:b@3=b3 g:b@1=b1"],
    );
    // A value test skips the newest reference version, so the version count reaches deeper:
    // with 1 version, ref@2 is included and ref@1 seen (stamps 2 and 1). g:b@3 is g:b's one
    // included version and has no matching stamp; g:b@1 was cut by the version count.
    expect(
        scan(
            "DependentColumnFilter('f', 'ref', false, !=, 'binary:new')",
            &t,
            1,
        ),
        &["r f:a@2=a2 f:ref@2=old"],
    );
    // Versions of other columns are counted before filterRowCells drops the unmatched ones:
    // with 1 version g:b@3 is the only version of g:b included, so g:b@1 never shows.
    expect(
        scan(
            "DependentColumnFilter('f', 'ref', true, =, 'binary:oldest')",
            &t,
            1,
        ),
        &[],
    );
    expect(
        scan(
            "DependentColumnFilter('f', 'ref', true, =, 'binary:oldest')",
            &t,
            2,
        ),
        &["r f:a@1=a1 g:b@1=b1"],
    );
}

#[test]
fn dependent_column_filter_in_lists() {
    let t = dependent_table();
    // AND: earlier members hide cells from it (HBASE-20565), so a reference cell a
    // ValueFilter rejects does not count.
    expect(
        scan(
            "ValueFilter(!=, 'binary:match') AND DependentColumnFilter('familyOne', 'qualifier')",
            &t,
            u32::MAX,
        ),
        &[
            "test1 familyOne:qualifier@900=bad1 familyOne:qualifier@800=bad2 \
             familyTwo:qualifier@900=bad1",
            "test2 familyOne:qualifier@900=bad1",
        ],
    );
    // It never decides on row keys: a RowFilter before it still rejects rows.
    expect(
        scan(
            "RowFilter(=, 'binary:test2') AND DependentColumnFilter('familyOne', 'qualifier', true)",
            &t,
            u32::MAX,
        ),
        &["test2 familyTwo:qualifier@900=match"],
    );
}

/// HBase 2.1's ColumnValueFilter returns only the tested column's matching cells, where
/// SingleColumnValueFilter returns whole rows.
#[test]
fn column_value_filter_returns_only_the_matching_cells() {
    let t = Table::new(&[
        ("r1", "f", "a", 1, "x"),
        ("r1", "f", "status", 2, "active"),
        ("r1", "f", "status", 1, "new"),
        ("r1", "f", "z", 1, "y"),
        ("r1", "g", "status", 1, "active"),
        ("r2", "f", "a", 1, "x"),
        ("r2", "f", "status", 1, "closed"),
        ("r3", "f", "a", 1, "x"),
    ]);
    expect(
        scan(
            "ColumnValueFilter('f', 'status', =, 'binary:active')",
            &t,
            1,
        ),
        &["r1 f:status@2=active"],
    );
    // The row-level filter keeps r1 and r3 (no column: it passes) whole.
    expect(
        scan(
            "SingleColumnValueFilter('f', 'status', =, 'binary:active')",
            &t,
            1,
        ),
        &[
            "r1 f:a@1=x f:status@2=active f:z@1=y g:status@1=active",
            "r3 f:a@1=x",
        ],
    );
    // Versions are counted after the filter: every matching version, newest first.
    expect(
        scan("ColumnValueFilter('f', 'status', <, 'binary:b')", &t, 1),
        &["r1 f:status@2=active"],
    );
    expect(
        scan("ColumnValueFilter('f', 'status', >, 'binary:b')", &t, 1),
        &["r1 f:status@1=new", "r2 f:status@1=closed"],
    );
    expect(
        scan("ColumnValueFilter('f', 'status', !=, 'binary:x')", &t, 3),
        &[
            "r1 f:status@2=active f:status@1=new",
            "r2 f:status@1=closed",
        ],
    );
    // HBase's TestParseFilter string; binaryprefix compares the value's first bytes.
    expect(
        scan(
            "ColumnValueFilter ('f', 'status', <, 'binaryprefix:b')",
            &t,
            1,
        ),
        &["r1 f:status@2=active"],
    );
    expect(
        scan(
            "ColumnValueFilter('f', 'status', =, 'substring:LOS')",
            &t,
            1,
        ),
        &["r2 f:status@1=closed"],
    );
    // Another family's column of the same qualifier is not the column.
    expect(
        scan(
            "ColumnValueFilter('g', 'status', =, 'binary:active')",
            &t,
            1,
        ),
        &["r1 g:status@1=active"],
    );
    // NO_OP keeps nothing; a missing column keeps nothing.
    expect(
        scan("ColumnValueFilter('f', 'status', NO_OP, 'binary:x')", &t, 1),
        &[],
    );
    expect(
        scan("ColumnValueFilter('f', 'nope', !=, 'binary:x')", &t, 1),
        &[],
    );
    // In lists: with KeyOnlyFilter the value is tested before it is emptied; OR keeps the
    // other member's cells.
    expect(
        scan(
            "ColumnValueFilter('f', 'status', =, 'binary:active') AND KeyOnlyFilter()",
            &t,
            1,
        ),
        &["r1 f:status@2="],
    );
    expect(
        scan(
            "ColumnValueFilter('f', 'status', =, 'binary:closed') OR QualifierFilter(=, 'binary:z')",
            &t,
            1,
        ),
        &["r1 f:z@1=y", "r2 f:status@1=closed"],
    );
    expect(
        scan_reversed(
            "ColumnValueFilter('f', 'status', =, 'binary:active')",
            &t,
            1,
        ),
        &["r1 f:status@2=active"],
    );
}

/// HBase's ColumnCountGetFilter: once a row has more columns than the limit, the filter
/// reports filterAllRemaining, and each family's store scanner that meets it (at its next
/// cell, even when that cell is in a later row) closes for the rest of the scan. The count
/// is reset between rows, so the families that did not see it go on.
#[test]
fn column_count_get_filter_closes_the_families_that_reached_it() {
    // The limit is passed on the last cell of r1: HBase returns nothing more of family f.
    let one_family = Table::new(&[
        ("r1", "f", "a", 1, "1"),
        ("r1", "f", "b", 1, "2"),
        ("r1", "f", "c", 1, "3"),
        ("r2", "f", "a", 1, "4"),
        ("r3", "f", "a", 1, "5"),
    ]);
    expect(
        scan("ColumnCountGetFilter(2)", &one_family, 1),
        &["r1 f:a@1=1 f:b@1=2"],
    );
    // Exactly the limit: nothing closes.
    expect(
        scan("ColumnCountGetFilter(3)", &one_family, 1),
        &["r1 f:a@1=1 f:b@1=2 f:c@1=3", "r2 f:a@1=4", "r3 f:a@1=5"],
    );
    // Two families: r1's family a reaches the limit and closes (with family b, which comes
    // after it in r1); r2 has only family c, which did not see it and goes on.
    let families = Table::new(&[
        ("r1", "a", "x", 1, "1"),
        ("r1", "a", "y", 1, "2"),
        ("r1", "b", "x", 1, "3"),
        ("r2", "a", "x", 1, "4"),
        ("r2", "c", "x", 1, "5"),
        ("r3", "b", "x", 1, "6"),
        ("r3", "c", "x", 1, "7"),
        ("r3", "c", "y", 1, "8"),
    ]);
    expect(
        scan("ColumnCountGetFilter(1)", &families, 1),
        &["r1 a:x@1=1", "r2 c:x@1=5", "r3 c:x@1=7"],
    );
    // The evaluator reports the end of the scan once every family it was told about closed.
    let filter = strata_filters::parse("ColumnCountGetFilter(1)").unwrap();
    let rows = families.refs(false);
    let mut evaluator = strata_filters::FilterEvaluator::new(&filter)
        .unwrap()
        .with_scan_families(["a", "b", "c"]);
    let first = evaluator.evaluate_row(&rows[0], 1);
    assert!(!first.excluded && !first.stop_scan);
    assert_eq!(evaluator.closed_families(), &[b"a".to_vec(), b"b".to_vec()]);
    let second = evaluator.evaluate_row(&rows[1], 1);
    assert_eq!(second.cells.len(), 1);
    assert!(!second.stop_scan);
    let third = evaluator.evaluate_row(&rows[2], 1);
    assert_eq!(third.cells.len(), 1);
    assert!(third.stop_scan, "every family is closed: {third:?}");
    // Without the scan's families the closed ones are ignored, never reported as the end.
    let mut evaluator = strata_filters::FilterEvaluator::new(&filter).unwrap();
    for row in &rows {
        assert!(!evaluator.evaluate_row(row, 1).stop_scan);
    }
}

/// HBase's parser closes the parentheses left open at the end: the filter behaves as the
/// closed one.
#[test]
fn an_unclosed_parenthesis_at_the_end_is_closed() {
    let t = people();
    assert_eq!(
        scan("(PrefixFilter('b')", &t, 1),
        scan("PrefixFilter('b')", &t, 1)
    );
    assert_eq!(
        scan(
            "(PrefixFilter('b') AND (ValueFilter(=, 'binary:bob')",
            &t,
            1
        ),
        vec!["b1 f:name@1=bob".to_owned()]
    );
}
