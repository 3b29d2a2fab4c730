//! Filters inside the engine: scans and gets with filters return exactly
//! what HBase's cell-by-cell protocol (the scalar reference of
//! `strata-filters`) returns for the same visible rows, whether the row-key
//! parts run as block kernels or not; `count` and `delete_where` run inside
//! the engine; scenario 4's composite-key queries.

// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::ops::Bound;

use proptest::prelude::*;
use strata::filters::reference::scan_with_evaluator;
use strata::filters::{CellRef as FilterCell, ScanRange};
use strata::keys::KeyBuilder;
use strata::{
    Db, DbOptions, Delete, FamilyDescriptor, Get, Put, RowResult, Scan, Table, TableDescriptor,
};

type Row = (Vec<u8>, Vec<(Vec<u8>, Vec<u8>, i64, Vec<u8>)>);

/// A row key and its cells' qualifiers and values.
type ProjectedRow = (Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>);

fn flat(rows: Vec<RowResult>) -> Vec<Row> {
    rows.into_iter()
        .map(|r| {
            let cells = r
                .cells
                .into_iter()
                .map(|c| (c.family, c.qualifier, c.timestamp, c.value))
                .collect();
            (r.row, cells)
        })
        .collect()
}

fn scan_all(table: &Table, scan: &Scan) -> Vec<RowResult> {
    table.scan(scan).unwrap().map(|r| r.unwrap()).collect()
}

const FILTERS: &[&str] = &[
    "PrefixFilter('r1')",
    "PrefixFilter('r0')",
    "RowFilter(<, 'binary:r12')",
    "RowFilter(>=, 'binaryprefix:r2')",
    "RowFilter(=, 'regexstring:r[13]5')",
    "RowFilter(!=, 'substring:3')",
    "ValueFilter(=, 'binary:v1')",
    "ValueFilter(>, 'binary:v3')",
    "QualifierFilter(>=, 'binary:b')",
    "FamilyFilter(=, 'binary:g')",
    "ColumnPrefixFilter('a')",
    "MultipleColumnPrefixFilter('a', 'c')",
    "ColumnRangeFilter('a', false, 'c', true)",
    "SingleColumnValueFilter('f', 'a', =, 'binary:v2')",
    "SingleColumnValueFilter('f', 'b', <, 'binary:v3', true, true)",
    "SingleColumnValueFilter('g', 'a', !=, 'binary:v0', false, false)",
    "SingleColumnValueExcludeFilter('f', 'a', >=, 'binary:v1')",
    "PageFilter(3)",
    "KeyOnlyFilter()",
    "KeyOnlyFilter(true)",
    "FirstKeyOnlyFilter()",
    "TimestampsFilter(1, 3)",
    "ColumnCountGetFilter(2)",
    "ColumnPaginationFilter(2, 1)",
    "InclusiveStopFilter('r15')",
    "MultiRowRangeFilter('r03', true, 'r08', false, 'r16', true, 'r18', true)",
    "FuzzyRowFilter('r?5', '\\x00\\x01\\x00')",
    "RowMaskFilter(1, '\\xFF', =, '1')",
    "RowMaskFilter(2, '\\x0F', >, '\\x04')",
    "ColumnValueFilter('f', 'a', >=, 'binary:v2')",
    "ColumnValueFilter('g', 'b', !=, 'binary:v1')",
    "DependentColumnFilter('f', 'a')",
    "DependentColumnFilter('g', 'b', true, !=, 'binary:v1')",
    "ColumnCountGetFilter(1)",
];

fn filter_strategy() -> impl Strategy<Value = String> {
    let leaf = (0..FILTERS.len()).prop_map(|i| FILTERS[i].to_string());
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) AND ({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) OR ({b})")),
            inner.clone().prop_map(|a| format!("SKIP ({a})")),
            inner.prop_map(|a| format!("WHILE ({a})")),
        ]
    })
}

fn row_key(i: u8) -> String {
    format!("r{i:02}")
}

#[derive(Debug, Clone)]
enum Step {
    Put(u8, u8, u8, i64, u8),
    DeleteColumn(u8, u8, u8),
    Flush,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    proptest::collection::vec(
        prop_oneof![
            8 => (0u8..20, 0u8..2, 0u8..3, 1i64..5, 0u8..5).prop_map(|(r, f, q, ts, v)| Step::Put(r, f, q, ts, v)),
            1 => (0u8..20, 0u8..2, 0u8..3).prop_map(|(r, f, q)| Step::DeleteColumn(r, f, q)),
            1 => Just(Step::Flush),
        ],
        1..120,
    )
}

fn build(steps: &[Step]) -> (tempfile::TempDir, Db, Table) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("t")
                .family(
                    FamilyDescriptor::new("f")
                        .max_versions(3)
                        .block_size_bytes(1024),
                )
                .family(
                    FamilyDescriptor::new("g")
                        .max_versions(2)
                        .block_size_bytes(1024),
                )
                .pre_split(strata::PreSplit::Keys(vec![b"r10".to_vec()])),
        )
        .unwrap();
    let fam = |f: u8| if f == 0 { "f" } else { "g" };
    let qual = |q: u8| ["a", "b", "c"][q as usize];
    for step in steps {
        match *step {
            Step::Put(r, f, q, ts, v) => {
                table
                    .put(&Put::new(row_key(r)).add_at(fam(f), qual(q), ts, format!("v{v}")))
                    .unwrap();
            }
            Step::DeleteColumn(r, f, q) => {
                table
                    .delete(&Delete::new(row_key(r)).column_all_versions_up_to(fam(f), qual(q), 2))
                    .unwrap();
            }
            Step::Flush => table.flush().unwrap(),
        }
    }
    (dir, db, table)
}

fn bound(key: Option<(u8, bool)>) -> Bound<Vec<u8>> {
    match key {
        None => Bound::Unbounded,
        Some((r, true)) => Bound::Included(row_key(r).into_bytes()),
        Some((r, false)) => Bound::Excluded(row_key(r).into_bytes()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 80, ..ProptestConfig::default() })]

    #[test]
    fn filtered_scans_match_the_reference(
        steps in steps(),
        filter in filter_strategy(),
        low in proptest::option::of((0u8..20, any::<bool>())),
        high in proptest::option::of((0u8..20, any::<bool>())),
        reversed in any::<bool>(),
        versions in prop_oneof![Just(1u32), Just(2), Just(10)],
    ) {
        let (_dir, _db, table) = build(&steps);
        // The scan in HBase terms: reversed scans start at the high end.
        let mut scan = Scan::new().reversed(reversed).max_versions(versions);
        let (start, stop) = if reversed { (high, low) } else { (low, high) };
        if let Some((r, inclusive)) = start {
            scan = scan.start_with(row_key(r), inclusive);
        }
        if let Some((r, inclusive)) = stop {
            scan = scan.stop_with(row_key(r), inclusive);
        }
        // The visible rows, every window version, in scan order.
        let visible = scan_all(&table, &scan.clone().all_versions());
        let rows: Vec<Vec<FilterCell<'_>>> = visible
            .iter()
            .map(|r| {
                r.cells
                    .iter()
                    .map(|c| FilterCell { row: &r.row, family: &c.family, qualifier: &c.qualifier, timestamp: c.timestamp, value: &c.value })
                    .collect()
            })
            .collect();
        let parsed = strata::filters::parse(&filter).unwrap();
        let range = ScanRange { start: bound(low), end: bound(high), reversed };
        let expected: Vec<Row> = scan_with_evaluator(Some(&parsed), &rows, &range, versions)
            .unwrap()
            .into_iter()
            .map(|(row, cells)| {
                let cells = cells.into_iter().map(|c| (c.family.to_vec(), c.qualifier.to_vec(), c.timestamp, c.value.into_owned())).collect();
                (row, cells)
            })
            .collect();
        let fast = flat(scan_all(&table, &scan.clone().filter(parsed.clone())));
        prop_assert_eq!(&fast, &expected, "vectorized: {}", filter);
        let slow = flat(scan_all(&table, &scan.clone().filter(parsed.clone()).vectorized(false)));
        prop_assert_eq!(&slow, &expected, "cell by cell: {}", filter);
        let count = table.count(&scan.clone().filter(parsed.clone())).unwrap();
        prop_assert_eq!(count, expected.len() as u64);
        // A get is a one-row scan with the same filter.
        if !reversed {
            let row = row_key(7);
            let got = table.get(&Get::new(&row).max_versions(versions).filter(parsed.clone())).unwrap();
            let single = scan_all(&table, &Scan::new().start(&row).stop_with(&row, true).max_versions(versions).filter(parsed));
            prop_assert_eq!(got.is_empty(), single.is_empty());
            if let Some(first) = single.first() {
                prop_assert_eq!(&got.cells, &first.cells);
            }
        }
    }
}

/// HBase's own examples over a small table, inside the engine: DependentColumnFilter
/// (`TestDependentColumnFilter.testScans`), ColumnValueFilter, ColumnCountGetFilter closing
/// the families that reached its limit, and a filter string holding a byte that is not UTF-8
/// (the shell test `scan should support FILTER with non-ASCII bytes`).
#[test]
fn hbase_examples_inside_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("familyOne").max_versions(5))
                .family(FamilyDescriptor::new("familyTwo").max_versions(5)),
        )
        .unwrap();
    let cells: &[(&str, &str, i64, &str)] = &[
        ("test1", "familyOne", 900, "bad1"),
        ("test1", "familyOne", 800, "bad2"),
        ("test1", "familyOne", 700, "match"),
        ("test1", "familyTwo", 900, "bad1"),
        ("test1", "familyTwo", 700, "bad3"),
        ("test2", "familyOne", 900, "bad1"),
        ("test2", "familyOne", 700, "match"),
        ("test2", "familyTwo", 900, "match"),
        ("test2", "familyTwo", 800, "bad3"),
    ];
    for (row, family, ts, value) in cells {
        table
            .put(&Put::new(row).add_at(family, "qualifier", *ts, value))
            .unwrap();
    }
    let cells_of = |filter: &str| -> (usize, usize) {
        let rows = scan_all(
            &table,
            &Scan::new().all_versions().filter_string(filter).unwrap(),
        );
        (rows.len(), rows.iter().map(|r| r.cells.len()).sum())
    };
    assert_eq!(
        cells_of("DependentColumnFilter('familyOne', 'qualifier')"),
        (2, 8)
    );
    assert_eq!(
        cells_of("DependentColumnFilter('familyOne', 'qualifier', true)"),
        (2, 3)
    );
    assert_eq!(
        cells_of("DependentColumnFilter('familyOne', 'qualifier', false, =, 'binary:match')"),
        (2, 3)
    );
    assert_eq!(
        cells_of("DependentColumnFilter('familyOne', 'qualifier', true, =, 'binary:match')"),
        (1, 1)
    );
    // The same after a flush (cells now come from an HFile).
    table.flush().unwrap();
    assert_eq!(
        cells_of("DependentColumnFilter('familyOne', 'qualifier', true)"),
        (2, 3)
    );
    // ColumnValueFilter returns the matching cells of its column only.
    let rows = flat(scan_all(
        &table,
        &Scan::new()
            .all_versions()
            .filter_string("ColumnValueFilter('familyTwo', 'qualifier', =, 'binary:match')")
            .unwrap(),
    ));
    assert_eq!(
        rows,
        vec![(
            b"test2".to_vec(),
            vec![(
                b"familyTwo".to_vec(),
                b"qualifier".to_vec(),
                900,
                b"match".to_vec()
            )]
        )]
    );
    // Versions are counted after the filter: with one version, each row's newest *matching*
    // version of familyOne:qualifier shows (the newest versions are "bad1").
    assert_eq!(
        table
            .count(
                &Scan::new()
                    .filter_string("ColumnValueFilter('familyOne', 'qualifier', =, 'binary:match')")
                    .unwrap()
            )
            .unwrap(),
        2
    );
}

/// HBase's shell test `scan should support FILTER with non-ASCII bytes`: the value is the
/// byte 0x82 and the filter string holds that raw byte inside its binary comparator.
#[test]
fn filter_strings_may_hold_any_byte() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    let table = db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("x")))
        .unwrap();
    for (row, value) in [("1", b"1".as_slice()), ("2", b"11"), ("4", b"\x82")] {
        table.put(&Put::new(row).add("x", "a", value)).unwrap();
    }
    let mut filter = b"SingleColumnValueFilter('x', 'a', >=, 'binary:".to_vec();
    filter.push(0x82);
    filter.extend_from_slice(b"', true, true)");
    let rows = scan_all(&table, &Scan::new().filter_bytes(&filter).unwrap());
    let keys: Vec<&[u8]> = rows.iter().map(|r| r.row.as_slice()).collect();
    assert_eq!(keys, vec![b"4".as_slice()]);
    let got = table
        .get(&Get::new("4").filter_bytes(&filter).unwrap())
        .unwrap();
    assert_eq!(got.cells.len(), 1);
    // A malformed byte string is a typed error pointing at the byte.
    let err = Scan::new()
        .filter_bytes(b"PrefixFilter('a') \xff")
        .unwrap_err();
    assert!(err.is_invalid_input());
    assert!(err.to_string().contains("at byte 18"), "{err}");
}

/// ColumnCountGetFilter: a row with more columns than the limit closes the families that
/// saw it for the rest of the scan (HBase's store scanners meet DONE_SCAN); the others go on.
#[test]
fn column_count_get_filter_closes_families_inside_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("a"))
                .family(FamilyDescriptor::new("c")),
        )
        .unwrap();
    for (row, family, qualifier) in [
        ("r1", "a", "x"),
        ("r1", "a", "y"),
        ("r2", "a", "x"),
        ("r2", "c", "x"),
        ("r3", "c", "x"),
    ] {
        table
            .put(&Put::new(row).add(family, qualifier, "v"))
            .unwrap();
    }
    let scan = Scan::new()
        .filter_string("ColumnCountGetFilter(1)")
        .unwrap();
    let rows = flat(scan_all(&table, &scan));
    let shown: Vec<(String, Vec<String>)> = rows
        .iter()
        .map(|(row, cells)| {
            (
                String::from_utf8_lossy(row).into_owned(),
                cells
                    .iter()
                    .map(|(f, q, _, _)| {
                        format!(
                            "{}:{}",
                            String::from_utf8_lossy(f),
                            String::from_utf8_lossy(q)
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            ("r1".to_owned(), vec!["a:x".to_owned()]),
            ("r2".to_owned(), vec!["c:x".to_owned()]),
            ("r3".to_owned(), vec!["c:x".to_owned()]),
        ]
    );
    // A scan of family a alone ends in r1: family a closed, nothing else to read.
    let only_a = Scan::new()
        .family("a")
        .filter_string("ColumnCountGetFilter(1)")
        .unwrap();
    assert_eq!(scan_all(&table, &only_a).len(), 1);
    assert_eq!(table.count(&only_a).unwrap(), 1);
}

#[test]
fn malformed_filter_strings_are_typed_errors() {
    let err = Scan::new()
        .filter_string("PrefixFilter('abc' AND")
        .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
    assert!(err.to_string().contains("invalid filter"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    let table = db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap();
    let raw = Scan::new()
        .raw(true)
        .filter_string("KeyOnlyFilter()")
        .unwrap();
    assert!(
        table.scan(&raw).is_err(),
        "raw scans see markers; filters see visible cells"
    );
}

#[test]
fn count_and_delete_where_run_inside_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("wc")
                .family(FamilyDescriptor::new("CNT"))
                .family(FamilyDescriptor::new("x")),
        )
        .unwrap();
    for t in ["books", "news"] {
        for w in 0..50 {
            table
                .put(
                    &Put::new(format!("{t} word{w:02}"))
                        .add_at("CNT", "", 100, (w as i64).to_be_bytes())
                        .add_at("x", "y", 100, "z"),
                )
                .unwrap();
        }
    }
    table.flush().unwrap();
    assert_eq!(table.count(&Scan::new()).unwrap(), 100);
    assert_eq!(table.count(&Scan::new().prefix("news ")).unwrap(), 50);
    let odd = Scan::new().filter_string("ValueFilter(=, 'regexstring:word[0-9][13579]$') OR RowFilter(=, 'regexstring:[13579]$')").unwrap();
    assert_eq!(table.count(&odd).unwrap(), 50);
    // Clearing one table's counts by prefix, with a timestamp taken before a
    // new count job: what the job writes afterwards (newer timestamps) stays.
    let clear_at = 150;
    table
        .put(&Put::new("books word07").add_at("CNT", "", 200, 99i64.to_be_bytes()))
        .unwrap();
    assert_eq!(
        table
            .delete_where(&Scan::new().prefix("books "), Some(clear_at))
            .unwrap(),
        50
    );
    assert_eq!(
        table.count(&Scan::new().prefix("books ")).unwrap(),
        1,
        "the newer count survives"
    );
    assert_eq!(
        table
            .get(&Get::new("books word07"))
            .unwrap()
            .value("CNT", ""),
        Some(&99i64.to_be_bytes()[..])
    );
    // Clearing by column: only the selected family goes.
    assert_eq!(
        table
            .delete_where(&Scan::new().prefix("news ").family("CNT"), None)
            .unwrap(),
        50
    );
    let news = table.get(&Get::new("news word01")).unwrap();
    assert_eq!(news.cells.len(), 1);
    assert_eq!(news.cells[0].family, b"x");
    // By filter, durable across a crash-like reopen.
    let filter = Scan::new()
        .prefix("news ")
        .filter_string("RowFilter(=, 'regexstring:word0')")
        .unwrap();
    assert_eq!(table.delete_where(&filter, None).unwrap(), 10);
    db.close().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    assert_eq!(
        db.table("wc")
            .unwrap()
            .count(&Scan::new().prefix("news "))
            .unwrap(),
        40
    );
}

/// Scenario 4: web-page records keyed by ten 4-byte big-endian fields.
#[test]
fn scenario_4_composite_key_queries() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("pages").family(FamilyDescriptor::new("d").block_size_bytes(4096)),
        )
        .unwrap();
    // md5url, site, status, code, sdate, type, free, close, queue, scantype
    let record = |i: u32| -> [u32; 10] {
        [
            i % 500,
            i % 7,
            i % 3,
            [200, 404, 500][(i % 3) as usize],
            20150400 + i % 30,
            i % 4,
            i % 2,
            (i / 2) % 2,
            i % 5,
            i % 6,
        ]
    };
    let key = |f: [u32; 10]| f.iter().fold(KeyBuilder::new(), |b, v| b.u32(*v)).build();
    let mut puts = Vec::new();
    for i in 0..20_000u32 {
        puts.push(Put::new(key(record(i))).add("d", "", i.to_be_bytes()));
    }
    for chunk in puts.chunks(1000) {
        table.put_many(chunk).unwrap();
    }
    table.flush().unwrap();
    let field = |offset: usize, op: &str, value: u32| {
        let v: String = value
            .to_be_bytes()
            .iter()
            .map(|b| format!("\\x{b:02X}"))
            .collect();
        format!(
            "RowMaskFilter({}, '\\xFF\\xFF\\xFF\\xFF', {op}, '{v}')",
            offset * 4
        )
    };
    let brute = |pred: &dyn Fn(&[u32; 10]) -> bool| {
        let mut keys: Vec<Vec<u8>> = (0..20_000u32)
            .map(record)
            .filter(|r| pred(r))
            .map(key)
            .collect();
        keys.sort();
        keys.dedup();
        keys
    };
    type Query = (String, Box<dyn Fn(&[u32; 10]) -> bool>);
    let queries: Vec<Query> = vec![
        (
            format!("{} AND {}", field(0, "=", 42), field(4, "=", 20150412)),
            Box::new(|r| r[0] == 42 && r[4] == 20150412),
        ),
        (
            format!("{} AND {}", field(4, "=", 20150407), field(3, "=", 404)),
            Box::new(|r| r[4] == 20150407 && r[3] == 404),
        ),
        (
            format!(
                "{} AND {} AND {}",
                field(0, "=", 42),
                field(4, ">", 20150405),
                field(4, "<", 20150420)
            ),
            Box::new(|r| r[0] == 42 && r[4] > 20150405 && r[4] < 20150420),
        ),
        (
            format!(
                "{} AND {} AND {}",
                field(2, "=", 1),
                field(5, "=", 3),
                field(6, "=", 1)
            ),
            Box::new(|r| r[2] == 1 && r[5] == 3 && r[6] == 1),
        ),
    ];
    for (filter, pred) in &queries {
        let scan = Scan::new().filter_string(filter).unwrap();
        let got: Vec<Vec<u8>> = scan_all(&table, &scan).into_iter().map(|r| r.row).collect();
        assert_eq!(got, brute(pred.as_ref()), "{filter}");
        let slow: Vec<Vec<u8>> = scan_all(&table, &scan.vectorized(false))
            .into_iter()
            .map(|r| r.row)
            .collect();
        assert_eq!(slow, got, "{filter}");
    }
}

/// A selective prefix query reads few blocks: the others are skipped
/// through the index without being read.
#[test]
fn selective_queries_skip_blocks_through_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        block_cache_bytes: 64 << 20,
        ..DbOptions::default()
    };
    let db = Db::open(dir.path(), options.clone()).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("t").family(FamilyDescriptor::new("f").block_size_bytes(4096)),
        )
        .unwrap();
    let puts: Vec<Put> = (0..50_000u32)
        .map(|i| Put::new(format!("user{:05}|{i:08}", i / 100)).add("f", "", [7u8; 40]))
        .collect();
    for chunk in puts.chunks(1000) {
        table.put_many(chunk).unwrap();
    }
    db.close().unwrap();
    let db = Db::open(dir.path(), options).unwrap();
    let table = db.table("t").unwrap();
    let blocks_total = db.stats();
    let before = blocks_total.cache.misses;
    let rows = table
        .count(
            &Scan::new()
                .filter_string("PrefixFilter('user00123|')")
                .unwrap(),
        )
        .unwrap();
    assert_eq!(rows, 100);
    let read = db.stats().cache.misses - before;
    let file_blocks = table.regions().unwrap()[0].file_bytes / 4096;
    assert!(
        read * 100 < file_blocks * 5,
        "read {read} blocks of about {file_blocks}"
    );
    let fuzzy =
        "FuzzyRowFilter('user??123|', '\\x00\\x00\\x00\\x00\\x01\\x01\\x00\\x00\\x00\\x00')";
    let before = db.stats().cache.misses;
    assert_eq!(
        table
            .count(&Scan::new().filter_string(fuzzy).unwrap())
            .unwrap(),
        100
    );
    let read = db.stats().cache.misses - before;
    assert!(
        read * 100 < file_blocks * 5,
        "fuzzy read {read} blocks of about {file_blocks}"
    );
}

/// Filters the engine applies below its filter stage (cell predicates as block kernels,
/// SingleColumnValueFilter as a row verdict from the block's value kernel), over a table of
/// many small blocks (one sorted run, then a sparse memstore, so rows come from block runs,
/// from the merge, and from rows that cross blocks): what they return equals the scalar
/// reference over the visible rows.
#[test]
fn filters_below_the_stage_over_many_blocks_match_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("t").family(
                FamilyDescriptor::new("f")
                    .max_versions(2)
                    .block_size_bytes(1024),
            ),
        )
        .unwrap();
    let key = |i: u32| format!("row{i:05}");
    let mut puts = Vec::new();
    for i in 0..2000u32 {
        let mut put = Put::new(key(i)).add_at("f", "a", 1, format!("v{}", i % 7));
        if i % 3 == 0 {
            put = put.add_at("f", "a", 2, format!("v{}", (i / 3) % 5));
        }
        if i % 4 != 1 {
            put = put.add_at("f", "b", 1 + i64::from(i % 3), format!("w{}", i % 11));
        }
        puts.push(put);
    }
    table.put_many(&puts).unwrap();
    for i in (0..2000u32).step_by(29) {
        table
            .delete(&Delete::new(key(i)).column_all_versions("f", "a"))
            .unwrap();
    }
    table.flush().unwrap();
    table.major_compact().unwrap();
    for i in (0..2000u32).step_by(31) {
        table
            .put(&Put::new(key(i)).add_at("f", "a", 3, "v3"))
            .unwrap();
    }
    let visible = scan_all(&table, &Scan::new().all_versions());
    let rows: Vec<Vec<FilterCell<'_>>> = visible
        .iter()
        .map(|r| {
            r.cells
                .iter()
                .map(|c| FilterCell {
                    row: &r.row,
                    family: &c.family,
                    qualifier: &c.qualifier,
                    timestamp: c.timestamp,
                    value: &c.value,
                })
                .collect()
        })
        .collect();
    let range = ScanRange {
        start: Bound::Unbounded,
        end: Bound::Unbounded,
        reversed: false,
    };
    for filter in [
        "SingleColumnValueFilter('f', 'a', =, 'binary:v3')",
        "SingleColumnValueFilter('f', 'a', =, 'binary:v3', true, true)",
        "SingleColumnValueFilter('f', 'b', <, 'binary:w2', true, true)",
        "SingleColumnValueFilter('f', 'b', !=, 'substring:1')",
        "SingleColumnValueExcludeFilter('f', 'a', >=, 'binary:v4')",
        "SingleColumnValueFilter('f', 'a', =, 'binary:v1') AND ValueFilter(=, 'substring:w')",
        "ValueFilter(=, 'binary:v3')",
        "TimestampsFilter(2, 3)",
        "ColumnPrefixFilter('b')",
        "ColumnRangeFilter('a', false, 'b', true)",
        "QualifierFilter(=, 'binary:a') AND TimestampsFilter(1)",
    ] {
        let parsed = strata::filters::parse(filter).unwrap();
        let expected: Vec<Row> = scan_with_evaluator(Some(&parsed), &rows, &range, 1)
            .unwrap()
            .into_iter()
            .map(|(row, cells)| {
                let cells = cells
                    .into_iter()
                    .map(|c| {
                        (
                            c.family.to_vec(),
                            c.qualifier.to_vec(),
                            c.timestamp,
                            c.value.into_owned(),
                        )
                    })
                    .collect();
                (row, cells)
            })
            .collect();
        assert!(!expected.is_empty(), "{filter} selects something");
        let scan = Scan::new().filter(parsed);
        assert_eq!(flat(scan_all(&table, &scan)), expected, "{filter}");
        let mut lent = Vec::new();
        let mut cursor = table.scan_cursor(&scan).unwrap();
        while let Some(view) = cursor.next_row().unwrap() {
            lent.push(view.to_row_result());
        }
        assert_eq!(flat(lent), expected, "{filter}, cursor");
        assert_eq!(
            table.count(&scan).unwrap(),
            expected.len() as u64,
            "{filter}, count"
        );
    }
}

/// A column test that rejects rows missing its column, over blocks of one version per
/// column (a compacted store, no markers), lets the scan skip the rows holding no passing
/// cell of the column without resolving them; with a projection of some columns, the cells
/// of the others are passed over by qualifier. Both return exactly the rows and cells a
/// plain model gives, through block runs, rows lent from blocks, and rows a newer memstore
/// version sends through the merge.
#[test]
fn column_tests_over_one_version_blocks_return_what_a_model_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), DbOptions::default()).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("t").family(FamilyDescriptor::new("f").block_size_bytes(1024)),
        )
        .unwrap();
    let key = |i: u32| format!("row{i:05}");
    // The model: row -> qualifier -> value (one version each).
    let mut model: std::collections::BTreeMap<String, std::collections::BTreeMap<&str, String>> =
        Default::default();
    let mut puts = Vec::new();
    for i in 0..3000u32 {
        let mut put = Put::new(key(i)).add_at("f", "a", 1, format!("v{}", i % 7));
        let row = model.entry(key(i)).or_default();
        row.insert("a", format!("v{}", i % 7));
        if i % 4 != 1 {
            put = put.add_at("f", "b", 1, format!("w{:02}", i % 13));
            row.insert("b", format!("w{:02}", i % 13));
        }
        put = put.add_at("f", "c", 1, "x");
        row.insert("c", "x".to_owned());
        puts.push(put);
    }
    table.put_many(&puts).unwrap();
    table.flush().unwrap();
    table.major_compact().unwrap();
    // Newer versions of some rows' b in the memstore: those rows go through the merge.
    for i in (0..3000u32).step_by(37) {
        table
            .put(&Put::new(key(i)).add_at("f", "b", 2, "w00"))
            .unwrap();
        model
            .entry(key(i))
            .or_default()
            .insert("b", "w00".to_owned());
    }
    for (filter, passes) in [
        (
            "SingleColumnValueFilter('f', 'b', <, 'binary:w03', true, true)",
            (|b: Option<&String>| b.is_some_and(|b| b.as_str() < "w03")) as fn(_) -> bool,
        ),
        (
            "SingleColumnValueFilter('f', 'b', =, 'binary:w07', true, true)",
            |b: Option<&String>| b.is_some_and(|b| b == "w07"),
        ),
        (
            "SingleColumnValueFilter('f', 'b', >, 'binary:w99', true, true)",
            |b: Option<&String>| b.is_some_and(|b| b.as_str() > "w99"),
        ),
        (
            "SingleColumnValueFilter('f', 'b', =, 'binary:w05', false, true)",
            |b: Option<&String>| b.is_none_or(|b| b == "w05"),
        ),
    ] {
        for columns in [vec!["a", "b"], vec!["b", "c"], vec!["a", "b", "c"]] {
            let expected: Vec<ProjectedRow> = model
                .iter()
                .filter(|(_, row)| passes(row.get("b")))
                .map(|(key, row)| {
                    let cells = row
                        .iter()
                        .filter(|(q, _)| columns.contains(q))
                        .map(|(q, v)| (q.as_bytes().to_vec(), v.as_bytes().to_vec()))
                        .collect();
                    (key.as_bytes().to_vec(), cells)
                })
                .collect();
            let mut scan = Scan::new().filter(strata::filters::parse(filter).unwrap());
            for column in &columns {
                scan = scan.column("f", column);
            }
            let got: Vec<ProjectedRow> = scan_all(&table, &scan)
                .into_iter()
                .map(|r| {
                    let cells = r
                        .cells
                        .iter()
                        .map(|c| (c.qualifier.clone(), c.value.clone()))
                        .collect();
                    (r.row, cells)
                })
                .collect();
            assert_eq!(got.len(), expected.len(), "{filter}, columns {columns:?}");
            assert_eq!(got, expected, "{filter}, columns {columns:?}");
        }
    }
}
