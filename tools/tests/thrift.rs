//! `strata thrift`: each call of HBase's Thrift1 interface against a server on a loopback
//! port, with its HBase semantics and its errors.

#![cfg(test)]

mod thrift_support;

use strata_tools::thrift::client::Client;
use strata_tools::thrift::codec::ThriftMap;
use strata_tools::thrift::hbase::*;
use strata_tools::thrift::transport::Transport;
use strata_tools::thrift::{Accept, ServerOptions};
use thrift_support::*;

/// `(column, value, timestamp)` of each cell of a row result, in the order sent.
fn cells(row: &TRowResult) -> Vec<(String, String, i64)> {
    let pairs: Vec<(Vec<u8>, TCell)> = match (&row.columns, &row.sorted_columns) {
        (Some(ThriftMap(pairs)), _) => pairs.clone(),
        (None, Some(sorted)) => sorted
            .iter()
            .map(|column| {
                (
                    column.column_name.clone().unwrap(),
                    column.cell.clone().unwrap(),
                )
            })
            .collect(),
        (None, None) => Vec::new(),
    };
    pairs
        .into_iter()
        .map(|(column, cell)| {
            (
                String::from_utf8(column).unwrap(),
                String::from_utf8(cell.value.unwrap()).unwrap(),
                cell.timestamp.unwrap(),
            )
        })
        .collect()
}

fn values(row: &TRowResult) -> Vec<(String, String)> {
    cells(row)
        .into_iter()
        .map(|(column, value, _)| (column, value))
        .collect()
}

fn family(name: &str, versions: i32) -> ColumnDescriptor {
    ColumnDescriptor {
        name: bytes(name),
        max_versions: Some(versions),
        ..ColumnDescriptor::default()
    }
}

fn create(client: &mut Client, table: &str, families: Vec<ColumnDescriptor>) {
    ok::<()>(
        client,
        Call::CreateTable(CreateTableArgs {
            table_name: bytes(table),
            column_families: Some(families),
        }),
    );
}

fn put(column: &str, value: &str) -> Mutation {
    Mutation {
        is_delete: Some(false),
        column: bytes(column),
        value: bytes(value),
        write_to_wal: Some(true),
    }
}

fn delete(column: &str) -> Mutation {
    Mutation {
        is_delete: Some(true),
        column: bytes(column),
        value: None,
        write_to_wal: Some(true),
    }
}

fn mutate(client: &mut Client, table: &str, row: &str, mutations: Vec<Mutation>) {
    ok::<()>(
        client,
        Call::MutateRows(MutateRowsArgs {
            table_name: bytes(table),
            row_batches: Some(vec![BatchMutation {
                row: bytes(row),
                mutations: Some(mutations),
            }]),
            attributes: None,
        }),
    );
}

fn mutate_at(
    client: &mut Client,
    table: &str,
    row: &str,
    timestamp: i64,
    mutations: Vec<Mutation>,
) {
    ok::<()>(
        client,
        Call::MutateRowTs(MutateRowTsArgs {
            table_name: bytes(table),
            row: bytes(row),
            mutations: Some(mutations),
            timestamp: Some(timestamp),
            attributes: None,
        }),
    );
}

fn get_row(
    client: &mut Client,
    table: &str,
    row: &str,
    columns: Option<&[&str]>,
) -> Vec<(String, String)> {
    let rows: Vec<TRowResult> = ok(
        client,
        Call::GetRowWithColumns(GetRowWithColumnsArgs {
            table_name: bytes(table),
            row: bytes(row),
            columns: columns.and_then(texts),
            attributes: None,
        }),
    );
    rows.first().map(values).unwrap_or_default()
}

fn get_row_ts(
    client: &mut Client,
    table: &str,
    row: &str,
    timestamp: i64,
) -> Vec<(String, String, i64)> {
    let rows: Vec<TRowResult> = ok(
        client,
        Call::GetRowTs(GetRowTsArgs {
            table_name: bytes(table),
            row: bytes(row),
            timestamp: Some(timestamp),
            attributes: None,
        }),
    );
    rows.first().map(cells).unwrap_or_default()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(column, value)| (column.to_string(), value.to_string()))
        .collect()
}

fn open_scan(client: &mut Client, table: &str, scan: TScan) -> i32 {
    ok(
        client,
        Call::ScannerOpenWithScan(ScannerOpenWithScanArgs {
            table_name: bytes(table),
            scan: Some(scan),
            attributes: None,
        }),
    )
}

fn next_rows(client: &mut Client, id: i32, rows: i32) -> Vec<TRowResult> {
    ok(
        client,
        Call::ScannerGetList(ScannerGetListArgs {
            id: Some(id),
            nb_rows: Some(rows),
        }),
    )
}

fn row_keys(rows: &[TRowResult]) -> Vec<String> {
    rows.iter()
        .map(|row| String::from_utf8(row.row.clone().unwrap()).unwrap())
        .collect()
}

fn drain(client: &mut Client, id: i32) -> Vec<TRowResult> {
    let mut all = Vec::new();
    loop {
        let rows = next_rows(client, id, 3);
        if rows.is_empty() {
            break;
        }
        all.extend(rows);
    }
    ok::<()>(
        client,
        Call::ScannerClose(ScannerCloseArgs { id: Some(id) }),
    );
    all
}

#[test]
fn tables_are_created_listed_described_disabled_and_deleted() {
    let server = TestServer::start();
    let mut client = server.client();
    create(
        &mut client,
        "t",
        vec![
            family("a:", 5),
            ColumnDescriptor {
                name: bytes("b"),
                compression: Some("ZSTD".into()),
                bloom_filter_type: Some("ROW".into()),
                in_memory: Some(true),
                block_cache_enabled: Some(true),
                time_to_live: Some(3600),
                ..ColumnDescriptor::default()
            },
            ColumnDescriptor {
                name: bytes("c"),
                compression: Some("snappy".into()),
                ..ColumnDescriptor::default()
            },
        ],
    );
    create(&mut client, "s", vec![family("f", 1)]);
    let names: Vec<Vec<u8>> = ok(&mut client, Call::GetTableNames(GetTableNamesArgs {}));
    assert_eq!(names, vec![b"s".to_vec(), b"t".to_vec()]);

    let described: ThriftMap<Vec<u8>, ColumnDescriptor> = ok(
        &mut client,
        Call::GetColumnDescriptors(GetColumnDescriptorsArgs {
            table_name: bytes("t"),
        }),
    );
    let ThriftMap(described) = described;
    assert_eq!(described.len(), 3);
    assert_eq!(described[2].1.compression.as_deref(), Some("SNAPPY"));
    let (name, a) = &described[0];
    assert_eq!(name, b"a:");
    assert_eq!(a.max_versions, Some(5));
    assert_eq!(a.compression.as_deref(), Some("NONE"));
    assert_eq!(a.bloom_filter_type.as_deref(), Some("NONE"));
    // HBase's IDL defaults: no block cache, cells live forever.
    assert_eq!(a.block_cache_enabled, Some(false));
    assert_eq!(a.time_to_live, Some(i32::MAX));
    let (name, b) = &described[1];
    assert_eq!(name, b"b:");
    assert_eq!(b.max_versions, Some(3), "the IDL's default");
    assert_eq!(b.compression.as_deref(), Some("ZSTD"));
    assert_eq!(b.bloom_filter_type.as_deref(), Some("ROW"));
    assert_eq!(b.in_memory, Some(true));
    assert_eq!(b.block_cache_enabled, Some(true));
    assert_eq!(b.time_to_live, Some(3600));

    let exists = fails::<()>(
        &mut client,
        Call::CreateTable(CreateTableArgs {
            table_name: bytes("t"),
            column_families: Some(vec![family("f", 1)]),
        }),
    );
    assert!(matches!(exists, Response::AlreadyExists(_)), "{exists:?}");
    let lzo = illegal_argument(fails::<()>(
        &mut client,
        Call::CreateTable(CreateTableArgs {
            table_name: bytes("u"),
            column_families: Some(vec![ColumnDescriptor {
                name: bytes("f:"),
                compression: Some("LZO".into()),
                ..ColumnDescriptor::default()
            }]),
        }),
    ));
    assert!(
        lzo.contains("LZO") && lzo.contains("SNAPPY, LZ4 or ZSTD"),
        "{lzo}"
    );
    let no_families = illegal_argument(fails::<()>(
        &mut client,
        Call::CreateTable(CreateTableArgs {
            table_name: bytes("u"),
            column_families: Some(Vec::new()),
        }),
    ));
    assert!(no_families.contains("family"), "{no_families}");

    let enabled = |client: &mut Client, table: &str| -> bool {
        ok(
            client,
            Call::IsTableEnabled(IsTableEnabledArgs {
                table_name: bytes(table),
            }),
        )
    };
    assert!(enabled(&mut client, "t"));
    // HBase refuses to delete an enabled table.
    let enabled_drop = io_error(fails::<()>(
        &mut client,
        Call::DeleteTable(DeleteTableArgs {
            table_name: bytes("t"),
        }),
    ));
    assert!(
        enabled_drop.contains("TableNotDisabledException"),
        "{enabled_drop}"
    );
    ok::<()>(
        &mut client,
        Call::DisableTable(DisableTableArgs {
            table_name: bytes("t"),
        }),
    );
    assert!(!enabled(&mut client, "t"));
    let twice = io_error(fails::<()>(
        &mut client,
        Call::DisableTable(DisableTableArgs {
            table_name: bytes("t"),
        }),
    ));
    assert!(twice.contains("TableNotEnabledException"), "{twice}");
    let read_disabled = io_error(fails::<Vec<TRowResult>>(
        &mut client,
        Call::GetRow(GetRowArgs {
            table_name: bytes("t"),
            row: bytes("r"),
            attributes: None,
        }),
    ));
    assert!(
        read_disabled.contains("TableNotEnabledException"),
        "{read_disabled}"
    );
    let flags: ThriftMap<Vec<u8>, bool> = ok(
        &mut client,
        Call::GetTableNamesWithIsTableEnabled(GetTableNamesWithIsTableEnabledArgs {}),
    );
    assert_eq!(flags.0, vec![(b"s".to_vec(), true), (b"t".to_vec(), false)]);
    ok::<()>(
        &mut client,
        Call::DeleteTable(DeleteTableArgs {
            table_name: bytes("t"),
        }),
    );
    let names: Vec<Vec<u8>> = ok(&mut client, Call::GetTableNames(GetTableNamesArgs {}));
    assert_eq!(names, vec![b"s".to_vec()]);
    server.stop();
}

#[test]
fn unknown_tables_and_families_are_io_errors() {
    let server = TestServer::start();
    let mut client = server.client();
    create(&mut client, "t", vec![family("f", 1)]);
    let unknown_table = io_error(fails::<Vec<TRowResult>>(
        &mut client,
        Call::GetRow(GetRowArgs {
            table_name: bytes("nope"),
            row: bytes("r"),
            attributes: None,
        }),
    ));
    assert_eq!(
        unknown_table,
        "org.apache.hadoop.hbase.TableNotFoundException: nope"
    );
    let unknown_table = io_error(fails::<()>(
        &mut client,
        Call::MutateRows(MutateRowsArgs {
            table_name: bytes("nope"),
            row_batches: Some(Vec::new()),
            attributes: None,
        }),
    ));
    assert!(unknown_table.contains("TableNotFoundException"));
    for call in [
        Call::IsTableEnabled(IsTableEnabledArgs {
            table_name: bytes("nope"),
        }),
        Call::GetColumnDescriptors(GetColumnDescriptorsArgs {
            table_name: bytes("nope"),
        }),
        Call::DeleteTable(DeleteTableArgs {
            table_name: bytes("nope"),
        }),
    ] {
        let response = client.call::<()>(&call).unwrap();
        // The success types differ; the IOError is what matters.
        assert!(matches!(response, Response::Io(_)), "{response:?}");
    }
    // HBase answers the regions of a missing table with an empty list.
    let regions: Vec<TRegionInfo> = ok(
        &mut client,
        Call::GetTableRegions(GetTableRegionsArgs {
            table_name: bytes("nope"),
        }),
    );
    assert!(regions.is_empty());

    let unknown_family = io_error(fails::<()>(
        &mut client,
        Call::MutateRow(MutateRowArgs {
            table_name: bytes("t"),
            row: bytes("r"),
            mutations: Some(vec![put("g:q", "v")]),
            attributes: None,
        }),
    ));
    assert!(
        unknown_family.contains("NoSuchColumnFamilyException") && unknown_family.contains('g'),
        "{unknown_family}"
    );
    let unknown_family = io_error(fails::<Vec<TRowResult>>(
        &mut client,
        Call::GetRowWithColumns(GetRowWithColumnsArgs {
            table_name: bytes("t"),
            row: bytes("r"),
            columns: texts(&["g"]),
            attributes: None,
        }),
    ));
    assert!(unknown_family.contains("NoSuchColumnFamilyException"));
    // A put needs a qualifier: a bare family is only for deletes.
    let bare = illegal_argument(fails::<()>(
        &mut client,
        Call::MutateRow(MutateRowArgs {
            table_name: bytes("t"),
            row: bytes("r"),
            mutations: Some(vec![put("f", "v")]),
            attributes: None,
        }),
    ));
    assert!(bare.contains("qualifier"), "{bare}");
    // An empty row key is invalid input.
    let empty_row = illegal_argument(fails::<()>(
        &mut client,
        Call::MutateRow(MutateRowArgs {
            table_name: bytes("t"),
            row: bytes(""),
            mutations: Some(vec![put("f:q", "v")]),
            attributes: None,
        }),
    ));
    assert!(!empty_row.is_empty());
    server.stop();
}

#[test]
fn puts_and_reads_follow_hbase_columns() {
    let server = TestServer::start();
    let mut client = server.client();
    create(&mut client, "t", vec![family("a", 3), family("b", 3)]);
    mutate(
        &mut client,
        "t",
        "r1",
        vec![put("a:x", "1"), put("a:", "empty"), put("b:y", "2")],
    );
    assert_eq!(
        get_row(&mut client, "t", "r1", None),
        pairs(&[("a:", "empty"), ("a:x", "1"), ("b:y", "2")])
    );
    // A family alone selects the family; `family:` only the empty qualifier.
    assert_eq!(
        get_row(&mut client, "t", "r1", Some(&["a"])),
        pairs(&[("a:", "empty"), ("a:x", "1")])
    );
    assert_eq!(
        get_row(&mut client, "t", "r1", Some(&["a:"])),
        pairs(&[("a:", "empty")])
    );
    assert_eq!(
        get_row(&mut client, "t", "r1", Some(&["a:x", "b:y"])),
        pairs(&[("a:x", "1"), ("b:y", "2")])
    );
    // A missing row is an empty list.
    assert!(get_row(&mut client, "t", "nope", None).is_empty());

    // getRows leaves missing rows out; getRowsWithColumns narrows each row.
    mutate(&mut client, "t", "r2", vec![put("a:x", "3")]);
    let rows: Vec<TRowResult> = ok(
        &mut client,
        Call::GetRows(GetRowsArgs {
            table_name: bytes("t"),
            rows: texts(&["r2", "missing", "r1"]),
            attributes: None,
        }),
    );
    assert_eq!(row_keys(&rows), ["r2", "r1"]);
    let none: Vec<TRowResult> = ok(
        &mut client,
        Call::GetRows(GetRowsArgs {
            table_name: bytes("t"),
            rows: Some(Vec::new()),
            attributes: None,
        }),
    );
    assert!(none.is_empty());
    let rows: Vec<TRowResult> = ok(
        &mut client,
        Call::GetRowsWithColumns(GetRowsWithColumnsArgs {
            table_name: bytes("t"),
            rows: texts(&["r1", "r2"]),
            columns: texts(&["b"]),
            attributes: None,
        }),
    );
    assert_eq!(row_keys(&rows), ["r1"]);
    assert_eq!(values(&rows[0]), pairs(&[("b:y", "2")]));

    // get: the newest cell of a column, or of each column of a family.
    let got: Vec<TCell> = ok(
        &mut client,
        Call::Get(GetArgs {
            table_name: bytes("t"),
            row: bytes("r1"),
            column: bytes("a"),
            attributes: None,
        }),
    );
    assert_eq!(
        got.iter()
            .map(|cell| cell.value.clone().unwrap())
            .collect::<Vec<_>>(),
        [b"empty".to_vec(), b"1".to_vec()]
    );
    server.stop();
}

#[test]
fn ts_calls_take_an_exclusive_upper_bound_and_write_at_their_timestamp() {
    let server = TestServer::start();
    let mut client = server.client();
    create(&mut client, "t", vec![family("f", 5)]);
    mutate_at(&mut client, "t", "r", 100, vec![put("f:q", "v100")]);
    mutate_at(&mut client, "t", "r", 200, vec![put("f:q", "v200")]);
    mutate_at(
        &mut client,
        "t",
        "r",
        300,
        vec![put("f:q", "v300"), put("f:p", "p300")],
    );
    // getRowTs: [0, ts).
    assert_eq!(
        get_row_ts(&mut client, "t", "r", 300),
        [("f:q".to_string(), "v200".to_string(), 200)]
    );
    assert_eq!(
        get_row_ts(&mut client, "t", "r", 301),
        [
            ("f:p".to_string(), "p300".to_string(), 300),
            ("f:q".to_string(), "v300".to_string(), 300)
        ]
    );
    assert!(get_row_ts(&mut client, "t", "r", 100).is_empty());
    // getVer and getVerTs: versions newest first, below the bound.
    let versions: Vec<TCell> = ok(
        &mut client,
        Call::GetVer(GetVerArgs {
            table_name: bytes("t"),
            row: bytes("r"),
            column: bytes("f:q"),
            num_versions: Some(2),
            attributes: None,
        }),
    );
    assert_eq!(
        versions
            .iter()
            .map(|cell| cell.timestamp.unwrap())
            .collect::<Vec<_>>(),
        [300, 200]
    );
    let versions: Vec<TCell> = ok(
        &mut client,
        Call::GetVerTs(GetVerTsArgs {
            table_name: bytes("t"),
            row: bytes("r"),
            column: bytes("f:q"),
            timestamp: Some(300),
            num_versions: Some(10),
            attributes: None,
        }),
    );
    assert_eq!(
        versions
            .iter()
            .map(|cell| cell.timestamp.unwrap())
            .collect::<Vec<_>>(),
        [200, 100]
    );
    let zero = io_error(fails::<Vec<TCell>>(
        &mut client,
        Call::GetVer(GetVerArgs {
            table_name: bytes("t"),
            row: bytes("r"),
            column: bytes("f:q"),
            num_versions: Some(0),
            attributes: None,
        }),
    ));
    assert!(zero.contains("numVersions"), "{zero}");
    // getRowsWithColumnsTs and mutateRowsTs.
    ok::<()>(
        &mut client,
        Call::MutateRowsTs(MutateRowsTsArgs {
            table_name: bytes("t"),
            row_batches: Some(vec![BatchMutation {
                row: bytes("s"),
                mutations: Some(vec![put("f:q", "s50")]),
            }]),
            timestamp: Some(50),
            attributes: None,
        }),
    );
    let rows: Vec<TRowResult> = ok(
        &mut client,
        Call::GetRowsWithColumnsTs(GetRowsWithColumnsTsArgs {
            table_name: bytes("t"),
            rows: texts(&["r", "s"]),
            columns: texts(&["f:q"]),
            timestamp: Some(150),
            attributes: None,
        }),
    );
    assert_eq!(
        rows.iter().map(cells).collect::<Vec<_>>(),
        [
            vec![("f:q".to_string(), "v100".to_string(), 100)],
            vec![("f:q".to_string(), "s50".to_string(), 50)]
        ]
    );
    let rows: Vec<TRowResult> = ok(
        &mut client,
        Call::GetRowsTs(GetRowsTsArgs {
            table_name: bytes("t"),
            rows: texts(&["s"]),
            timestamp: Some(50),
            attributes: None,
        }),
    );
    assert!(rows.is_empty());
    // getRowWithColumnsTs.
    let rows: Vec<TRowResult> = ok(
        &mut client,
        Call::GetRowWithColumnsTs(GetRowWithColumnsTsArgs {
            table_name: bytes("t"),
            row: bytes("r"),
            columns: texts(&["f:p"]),
            timestamp: Some(i64::MAX),
            attributes: None,
        }),
    );
    assert_eq!(values(&rows[0]), pairs(&[("f:p", "p300")]));
    server.stop();
}

#[test]
fn deletes_take_families_columns_rows_and_timestamps() {
    let server = TestServer::start();
    let mut client = server.client();
    create(&mut client, "t", vec![family("a", 5), family("b", 5)]);
    let full = || vec![put("a:x", "1"), put("a:y", "2"), put("b:z", "3")];

    // A bare family name in a delete mutation deletes the family.
    mutate(&mut client, "t", "r", full());
    mutate(&mut client, "t", "r", vec![delete("a")]);
    assert_eq!(get_row(&mut client, "t", "r", None), pairs(&[("b:z", "3")]));

    // `family:qualifier` deletes that column only; `family:` the empty qualifier only.
    mutate(&mut client, "t", "s", vec![put("a:x", "1"), put("a:", "e")]);
    mutate(&mut client, "t", "s", vec![delete("a:")]);
    assert_eq!(get_row(&mut client, "t", "s", None), pairs(&[("a:x", "1")]));

    // A row's puts go first, then its deletes: a delete hides a put of the same call.
    mutate(
        &mut client,
        "t",
        "u",
        vec![delete("a:x"), put("a:x", "gone"), put("a:y", "kept")],
    );
    assert_eq!(
        get_row(&mut client, "t", "u", None),
        pairs(&[("a:y", "kept")])
    );

    // mutateRowTs deletes what is at or before its timestamp.
    mutate_at(&mut client, "t", "v", 10, vec![put("a:x", "10")]);
    mutate_at(&mut client, "t", "v", 20, vec![put("a:x", "20")]);
    mutate_at(&mut client, "t", "v", 10, vec![delete("a:x")]);
    let versions: Vec<TCell> = ok(
        &mut client,
        Call::GetVer(GetVerArgs {
            table_name: bytes("t"),
            row: bytes("v"),
            column: bytes("a:x"),
            num_versions: Some(5),
            attributes: None,
        }),
    );
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0].timestamp, Some(20));

    // deleteAll and deleteAllTs: every version of a column, or of a family.
    mutate(&mut client, "t", "w", full());
    ok::<()>(
        &mut client,
        Call::DeleteAll(DeleteAllArgs {
            table_name: bytes("t"),
            row: bytes("w"),
            column: bytes("a:x"),
            attributes: None,
        }),
    );
    assert_eq!(
        get_row(&mut client, "t", "w", None),
        pairs(&[("a:y", "2"), ("b:z", "3")])
    );
    ok::<()>(
        &mut client,
        Call::DeleteAll(DeleteAllArgs {
            table_name: bytes("t"),
            row: bytes("w"),
            column: bytes("b"),
            attributes: None,
        }),
    );
    assert_eq!(get_row(&mut client, "t", "w", None), pairs(&[("a:y", "2")]));
    mutate_at(&mut client, "t", "x", 5, vec![put("a:x", "5")]);
    mutate_at(&mut client, "t", "x", 15, vec![put("a:x", "15")]);
    ok::<()>(
        &mut client,
        Call::DeleteAllTs(DeleteAllTsArgs {
            table_name: bytes("t"),
            row: bytes("x"),
            column: bytes("a:x"),
            timestamp: Some(10),
            attributes: None,
        }),
    );
    assert_eq!(
        get_row_ts(&mut client, "t", "x", i64::MAX),
        [("a:x".to_string(), "15".to_string(), 15)]
    );
    assert!(get_row_ts(&mut client, "t", "x", 15).is_empty());

    // deleteAllRow and deleteAllRowTs.
    ok::<()>(
        &mut client,
        Call::DeleteAllRowTs(DeleteAllRowTsArgs {
            table_name: bytes("t"),
            row: bytes("x"),
            timestamp: Some(14),
            attributes: None,
        }),
    );
    assert_eq!(
        get_row(&mut client, "t", "x", None),
        pairs(&[("a:x", "15")])
    );
    ok::<()>(
        &mut client,
        Call::DeleteAllRow(DeleteAllRowArgs {
            table_name: bytes("t"),
            row: bytes("x"),
            attributes: None,
        }),
    );
    assert!(get_row(&mut client, "t", "x", None).is_empty());
    server.stop();
}

#[test]
fn counters_are_eight_byte_big_endian() {
    let server = TestServer::start();
    let mut client = server.client();
    create(&mut client, "t", vec![family("f", 1)]);
    let increment = |client: &mut Client, column: &str, value: i64| -> i64 {
        ok(
            client,
            Call::AtomicIncrement(AtomicIncrementArgs {
                table_name: bytes("t"),
                row: bytes("r"),
                column: bytes(column),
                value: Some(value),
            }),
        )
    };
    assert_eq!(increment(&mut client, "f:n", 10), 10);
    assert_eq!(increment(&mut client, "f:n", -3), 7);
    let stored: Vec<TCell> = ok(
        &mut client,
        Call::Get(GetArgs {
            table_name: bytes("t"),
            row: bytes("r"),
            column: bytes("f:n"),
            attributes: None,
        }),
    );
    assert_eq!(stored[0].value.as_deref(), Some(&7i64.to_be_bytes()[..]));
    // A bare family is the empty qualifier.
    assert_eq!(increment(&mut client, "f", 2), 2);
    ok::<()>(
        &mut client,
        Call::IncrementRows(IncrementRowsArgs {
            increments: Some(vec![
                TIncrement {
                    table: bytes("t"),
                    row: bytes("r"),
                    column: bytes("f:n"),
                    ammount: Some(100),
                },
                TIncrement {
                    table: bytes("t"),
                    row: bytes("r"),
                    column: bytes("f:m"),
                    ammount: Some(1),
                },
            ]),
        }),
    );
    ok::<()>(
        &mut client,
        Call::Increment(IncrementArgs {
            increment: Some(TIncrement {
                table: bytes("t"),
                row: bytes("r"),
                column: bytes("f:m"),
                ammount: Some(1),
            }),
        }),
    );
    assert_eq!(increment(&mut client, "f:n", 0), 107);
    assert_eq!(increment(&mut client, "f:m", 0), 2);
    mutate(&mut client, "t", "r", vec![put("f:s", "abc")]);
    let not_a_counter = io_error(fails::<i64>(
        &mut client,
        Call::AtomicIncrement(AtomicIncrementArgs {
            table_name: bytes("t"),
            row: bytes("r"),
            column: bytes("f:s"),
            value: Some(1),
        }),
    ));
    assert!(not_a_counter.contains("3 bytes wide"), "{not_a_counter}");
    server.stop();
}

fn scan_table(client: &mut Client) {
    create(client, "t", vec![family("a", 3), family("b", 3)]);
    for index in 0..10 {
        let row = format!("row{index}");
        mutate_at(
            client,
            "t",
            &row,
            1000 + index,
            vec![
                put("a:x", &format!("x{index}")),
                put("b:y", &format!("y{index}")),
            ],
        );
    }
}

#[test]
fn scanners_honour_every_tscan_field() {
    let server = TestServer::start();
    let mut client = server.client();
    scan_table(&mut client);
    // Start (inclusive) and stop (exclusive).
    let id = open_scan(
        &mut client,
        "t",
        TScan {
            start_row: bytes("row2"),
            stop_row: bytes("row5"),
            ..TScan::default()
        },
    );
    let rows = drain(&mut client, id);
    assert_eq!(row_keys(&rows), ["row2", "row3", "row4"]);
    assert_eq!(values(&rows[0]), pairs(&[("a:x", "x2"), ("b:y", "y2")]));
    // Empty start and stop rows bound nothing.
    let id = open_scan(
        &mut client,
        "t",
        TScan {
            start_row: bytes(""),
            stop_row: bytes(""),
            ..TScan::default()
        },
    );
    assert_eq!(drain(&mut client, id).len(), 10);
    // Columns and timestamp (exclusive upper bound).
    let id = open_scan(
        &mut client,
        "t",
        TScan {
            columns: texts(&["b"]),
            timestamp: Some(1003),
            ..TScan::default()
        },
    );
    let rows = drain(&mut client, id);
    assert_eq!(row_keys(&rows), ["row0", "row1", "row2"]);
    assert_eq!(values(&rows[2]), pairs(&[("b:y", "y2")]));
    // Filter string through strata's filter language.
    let id = open_scan(
        &mut client,
        "t",
        TScan {
            filter_string: bytes("SingleColumnValueFilter ('a', 'x', =, 'binary:x7')"),
            ..TScan::default()
        },
    );
    assert_eq!(row_keys(&drain(&mut client, id)), ["row7"]);
    // batchSize cuts rows into results of at most that many cells.
    let id = open_scan(
        &mut client,
        "t",
        TScan {
            start_row: bytes("row0"),
            stop_row: bytes("row2"),
            batch_size: Some(1),
            caching: Some(1),
            ..TScan::default()
        },
    );
    let rows = drain(&mut client, id);
    assert_eq!(row_keys(&rows), ["row0", "row0", "row1", "row1"]);
    assert_eq!(values(&rows[1]), pairs(&[("b:y", "y0")]));
    // sortColumns: the columns come as a sorted list.
    let id = open_scan(
        &mut client,
        "t",
        TScan {
            start_row: bytes("row9"),
            sort_columns: Some(true),
            ..TScan::default()
        },
    );
    let rows = drain(&mut client, id);
    assert!(rows[0].columns.is_none());
    assert_eq!(values(&rows[0]), pairs(&[("a:x", "x9"), ("b:y", "y9")]));
    // reversed: from the start row (the larger key) down to the stop row (exclusive).
    let id = open_scan(
        &mut client,
        "t",
        TScan {
            start_row: bytes("row7"),
            stop_row: bytes("row4"),
            reversed: Some(true),
            ..TScan::default()
        },
    );
    assert_eq!(row_keys(&drain(&mut client, id)), ["row7", "row6", "row5"]);
    let id = open_scan(
        &mut client,
        "t",
        TScan {
            reversed: Some(true),
            ..TScan::default()
        },
    );
    assert_eq!(row_keys(&drain(&mut client, id))[0], "row9");
    // scannerGet takes one row at a time.
    let id = open_scan(&mut client, "t", TScan::default());
    let first: Vec<TRowResult> = ok(
        &mut client,
        Call::ScannerGet(ScannerGetArgs { id: Some(id) }),
    );
    assert_eq!(row_keys(&first), ["row0"]);
    assert_eq!(row_keys(&next_rows(&mut client, id, 2)), ["row1", "row2"]);
    ok::<()>(
        &mut client,
        Call::ScannerClose(ScannerCloseArgs { id: Some(id) }),
    );
    server.stop();
}

#[test]
fn the_older_scanner_calls_map_onto_scans() {
    let server = TestServer::start();
    let mut client = server.client();
    scan_table(&mut client);
    let open = |client: &mut Client, call: Call| -> Vec<String> {
        let id: i32 = ok(client, call);
        row_keys(&drain(client, id))
    };
    assert_eq!(
        open(
            &mut client,
            Call::ScannerOpen(ScannerOpenArgs {
                table_name: bytes("t"),
                start_row: bytes("row8"),
                columns: texts(&["a:x"]),
                attributes: None,
            })
        ),
        ["row8", "row9"]
    );
    assert_eq!(
        open(
            &mut client,
            Call::ScannerOpenWithStop(ScannerOpenWithStopArgs {
                table_name: bytes("t"),
                start_row: bytes("row1"),
                stop_row: bytes("row3"),
                columns: None,
                attributes: None,
            })
        ),
        ["row1", "row2"]
    );
    mutate(&mut client, "t", "other", vec![put("a:x", "o")]);
    assert_eq!(
        open(
            &mut client,
            Call::ScannerOpenWithPrefix(ScannerOpenWithPrefixArgs {
                table_name: bytes("t"),
                start_and_prefix: bytes("ot"),
                columns: None,
                attributes: None,
            })
        ),
        ["other"]
    );
    assert_eq!(
        open(
            &mut client,
            Call::ScannerOpenTs(ScannerOpenTsArgs {
                table_name: bytes("t"),
                start_row: bytes("row"),
                columns: None,
                timestamp: Some(1002),
                attributes: None,
            })
        ),
        ["row0", "row1"]
    );
    assert_eq!(
        open(
            &mut client,
            Call::ScannerOpenWithStopTs(ScannerOpenWithStopTsArgs {
                table_name: bytes("t"),
                start_row: bytes("row1"),
                stop_row: bytes("row5"),
                columns: texts(&["a"]),
                timestamp: Some(1003),
                attributes: None,
            })
        ),
        ["row1", "row2"]
    );
    server.stop();
}

#[test]
fn scanner_errors_bad_filters_and_foreign_ids() {
    let server = TestServer::start();
    let mut client = server.client();
    scan_table(&mut client);
    let missing = illegal_argument(fails::<Vec<TRowResult>>(
        &mut client,
        Call::ScannerGetList(ScannerGetListArgs {
            id: Some(12345),
            nb_rows: Some(1),
        }),
    ));
    assert!(missing.contains("scanner ID is invalid"), "{missing}");
    let missing = illegal_argument(fails::<()>(
        &mut client,
        Call::ScannerClose(ScannerCloseArgs { id: Some(12345) }),
    ));
    assert!(missing.contains("12345"), "{missing}");
    // A closed scanner is gone.
    let id = open_scan(&mut client, "t", TScan::default());
    ok::<()>(
        &mut client,
        Call::ScannerClose(ScannerCloseArgs { id: Some(id) }),
    );
    illegal_argument(fails::<Vec<TRowResult>>(
        &mut client,
        Call::ScannerGet(ScannerGetArgs { id: Some(id) }),
    ));
    // A scanner belongs to the connection that opened it.
    let id = open_scan(&mut client, "t", TScan::default());
    let mut other = server.client();
    illegal_argument(fails::<Vec<TRowResult>>(
        &mut other,
        Call::ScannerGetList(ScannerGetListArgs {
            id: Some(id),
            nb_rows: Some(1),
        }),
    ));
    assert_eq!(row_keys(&next_rows(&mut client, id, 1)), ["row0"]);
    // Bad filter strings.
    let bad = io_error(fails::<i32>(
        &mut client,
        Call::ScannerOpenWithScan(ScannerOpenWithScanArgs {
            table_name: bytes("t"),
            scan: Some(TScan {
                filter_string: bytes("PrefixFilter('a', 'b')"),
                ..TScan::default()
            }),
            attributes: None,
        }),
    ));
    assert!(bad.contains("bad filter string"), "{bad}");
    // Filter strings are bytes, as in HBase: one that is not UTF-8 opens a scanner.
    let raw = open_scan(
        &mut client,
        "t",
        TScan {
            filter_string: Some(b"PrefixFilter('\xff')".to_vec()),
            ..TScan::default()
        },
    );
    assert!(drain(&mut client, raw).is_empty());
    let negative = illegal_argument(fails::<Vec<TRowResult>>(
        &mut client,
        Call::ScannerGetList(ScannerGetListArgs {
            id: Some(id),
            nb_rows: Some(-1),
        }),
    ));
    assert!(negative.contains("nbRows"), "{negative}");
    let unknown_family = io_error(fails::<i32>(
        &mut client,
        Call::ScannerOpen(ScannerOpenArgs {
            table_name: bytes("t"),
            start_row: bytes(""),
            columns: texts(&["zz"]),
            attributes: None,
        }),
    ));
    assert!(
        unknown_family.contains("NoSuchColumnFamilyException"),
        "{unknown_family}"
    );
    assert_eq!(server.handle.stats().open_scanners, 1);
    drop(client);
    drop(other);
    server.stop();
}

#[test]
fn append_check_and_put_row_or_before_and_region_info() {
    let server = TestServer::start();
    let mut client = server.client();
    create(&mut client, "t", vec![family("f", 3)]);
    mutate(&mut client, "t", "b", vec![put("f:q", "ab")]);
    let appended: Vec<TCell> = ok(
        &mut client,
        Call::Append(AppendArgs {
            append: Some(TAppend {
                table: bytes("t"),
                row: bytes("b"),
                columns: texts(&["f:q", "f:new"]),
                values: texts(&["cd", "x"]),
            }),
        }),
    );
    let mut appended: Vec<Vec<u8>> = appended
        .into_iter()
        .map(|cell| cell.value.unwrap())
        .collect();
    appended.sort();
    assert_eq!(appended, [b"abcd".to_vec(), b"x".to_vec()]);
    let mismatch = io_error(fails::<Vec<TCell>>(
        &mut client,
        Call::Append(AppendArgs {
            append: Some(TAppend {
                table: bytes("t"),
                row: bytes("b"),
                columns: texts(&["f:q"]),
                values: texts(&[]),
            }),
        }),
    ));
    assert!(mismatch.contains("not matching"), "{mismatch}");

    let check = |client: &mut Client, value: Option<&str>, new: &str| -> bool {
        ok(
            client,
            Call::CheckAndPut(CheckAndPutArgs {
                table_name: bytes("t"),
                row: bytes("c"),
                column: bytes("f:q"),
                value: value.and_then(bytes),
                mput: Some(put("f:q", new)),
                attributes: None,
            }),
        )
    };
    assert!(check(&mut client, None, "first"), "no value yet");
    assert!(!check(&mut client, None, "second"));
    assert!(!check(&mut client, Some("other"), "third"));
    assert!(check(&mut client, Some("first"), "fourth"));
    assert_eq!(
        get_row(&mut client, "t", "c", None),
        pairs(&[("f:q", "fourth")])
    );

    // getRowOrBefore: the row itself, or the closest one before it.
    let before = |client: &mut Client, row: &str| -> Vec<Vec<u8>> {
        let cells: Vec<TCell> = ok(
            client,
            Call::GetRowOrBefore(GetRowOrBeforeArgs {
                table_name: bytes("t"),
                row: bytes(row),
                family: bytes("f"),
            }),
        );
        cells.into_iter().map(|cell| cell.value.unwrap()).collect()
    };
    assert_eq!(before(&mut client, "c"), [b"fourth".to_vec()]);
    assert_eq!(before(&mut client, "bz"), [b"x".to_vec(), b"abcd".to_vec()]);
    assert!(before(&mut client, "a").is_empty());

    // getRegionInfo takes HBase's meta row key.
    let region: TRegionInfo = ok(
        &mut client,
        Call::GetRegionInfo(GetRegionInfoArgs {
            row: bytes("t,c,99999999999999"),
        }),
    );
    assert_eq!(region.start_key, bytes(""));
    assert_eq!(region.end_key, bytes(""));
    let regions: Vec<TRegionInfo> = ok(
        &mut client,
        Call::GetTableRegions(GetTableRegionsArgs {
            table_name: bytes("t"),
        }),
    );
    assert_eq!(regions, vec![region.clone()]);
    let bad = io_error(fails::<TRegionInfo>(
        &mut client,
        Call::GetRegionInfo(GetRegionInfoArgs { row: bytes("t") }),
    ));
    assert!(bad.contains("Cannot find row"), "{bad}");

    // compact and majorCompact take a table name or a region name.
    for call in [
        Call::Compact(CompactArgs {
            table_name_or_region_name: bytes("t"),
        }),
        Call::MajorCompact(MajorCompactArgs {
            table_name_or_region_name: region.name.clone(),
        }),
    ] {
        ok::<()>(&mut client, call);
    }
    let unknown = io_error(fails::<()>(
        &mut client,
        Call::Compact(CompactArgs {
            table_name_or_region_name: bytes("nope"),
        }),
    ));
    assert!(unknown.contains("TableNotFoundException"), "{unknown}");
    assert_eq!(
        get_row(&mut client, "t", "c", None),
        pairs(&[("f:q", "fourth")])
    );
    server.stop();
}

#[test]
fn server_type_cluster_id_and_unsupported_or_unknown_calls() {
    let server = TestServer::start();
    let mut client = server.client();
    let kind: i32 = ok(
        &mut client,
        Call::GetThriftServerType(GetThriftServerTypeArgs {}),
    );
    assert_eq!(kind, THRIFT_SERVER_TYPE_ONE);
    let id: String = ok(&mut client, Call::GetClusterId(GetClusterIdArgs {}));
    assert!(id.starts_with("strata:"), "{id}");
    let grant = io_error(fails::<bool>(
        &mut client,
        Call::Grant(GrantArgs { info: None }),
    ));
    assert!(grant.contains("not supported"), "{grant}");

    // A method outside the interface: Thrift's UNKNOWN_METHOD, and the connection goes on.
    let mut raw =
        strata_tools::thrift::codec::Writer::new(strata_tools::thrift::codec::Protocol::Binary);
    raw.write_message_begin(&strata_tools::thrift::codec::MessageHeader {
        name: "dropEverything".into(),
        kind: strata_tools::thrift::codec::MessageType::Call,
        sequence_id: 77,
    });
    strata_tools::thrift::codec::Wire::write(&GetRowArgs::default(), &mut raw);
    let bytes_out = raw.into_bytes().unwrap();
    std::io::Write::write_all(&mut client.stream(), &bytes_out).unwrap();
    let response = client.receive::<()>(77).unwrap();
    match response {
        Response::Application(exception) => {
            assert_eq!(exception.kind, Some(application_error::UNKNOWN_METHOD));
            assert!(exception.message.unwrap().contains("dropEverything"));
        }
        other => panic!("{other:?}"),
    }
    let names: Vec<Vec<u8>> = ok(&mut client, Call::GetTableNames(GetTableNamesArgs {}));
    assert!(names.is_empty());
    server.stop();
}

#[test]
fn every_transport_and_protocol_is_served_and_recognised() {
    let server = TestServer::start();
    create(&mut server.client(), "t", vec![family("f", 1)]);
    for (index, format) in ALL_FORMATS.into_iter().enumerate() {
        let mut client = server.client_with(format);
        let row = format!("r{index}");
        mutate(
            &mut client,
            "t",
            &row,
            vec![put("f:q", &format!("{format}"))],
        );
        assert_eq!(
            get_row(&mut client, "t", &row, None),
            pairs(&[("f:q", &format!("{format}"))]),
            "{format}"
        );
        let id = open_scan(&mut client, "t", TScan::default());
        assert_eq!(drain(&mut client, id).len(), index + 1, "{format}");
    }
    server.stop();
}

#[test]
fn a_server_told_one_transport_refuses_the_other_with_a_reason() {
    let server = TestServer::start_with(ServerOptions {
        transport: Accept::Only(Transport::Framed),
        ..ServerOptions::default()
    });
    let mut buffered = server.client();
    let response = buffered
        .call::<Vec<Vec<u8>>>(&Call::GetTableNames(GetTableNamesArgs {}))
        .unwrap();
    match response {
        Response::Application(exception) => {
            let message = exception.message.unwrap();
            assert!(
                message.contains("buffered") && message.contains("framed"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    let mut framed = server.client_with(ALL_FORMATS[1]);
    let names: Vec<Vec<u8>> = ok(&mut framed, Call::GetTableNames(GetTableNamesArgs {}));
    assert!(names.is_empty());
    server.stop();
}

/// `mutateRows` of rows in one region is one multi-row mutation (one WAL record, all or
/// nothing); rows of two regions, or a row both put and deleted, take HBase's per-row path.
#[test]
fn mutate_rows_in_one_region_is_atomic_and_across_regions_per_row() {
    let server = TestServer::start();
    let mut client = server.client();
    create(&mut client, "t", vec![family("f", 1)]);
    server.db.table("t").unwrap().split(Some(b"m")).unwrap();
    let batch = |rows: &[&str], mutations: fn() -> Vec<Mutation>| {
        Some(
            rows.iter()
                .map(|row| BatchMutation {
                    row: bytes(row),
                    mutations: Some(mutations()),
                })
                .collect(),
        )
    };
    let mutate_rows = |client: &mut Client, rows: &[&str], mutations: fn() -> Vec<Mutation>| {
        ok::<()>(
            client,
            Call::MutateRows(MutateRowsArgs {
                table_name: bytes("t"),
                row_batches: batch(rows, mutations),
                attributes: None,
            }),
        );
    };
    // The WAL offset of each logged row: rows of one record share it.
    let logged = |row: &str| -> Vec<u64> {
        // Written by the commit thread (the gateway may write AsyncWal): wait for it.
        server.db.sync_wal().unwrap();
        strata::inspect::wal_segments(server.db.path())
            .unwrap()
            .into_iter()
            .flat_map(|segment| segment.records)
            .filter(|record| record.row == row.as_bytes())
            .map(|record| record.offset)
            .collect()
    };
    mutate_rows(&mut client, &["a", "b"], || vec![put("f:q", "1")]);
    assert_eq!(logged("a"), logged("b"), "one record for both rows");
    mutate_rows(&mut client, &["c", "z"], || vec![put("f:q", "2")]);
    assert_ne!(logged("c"), logged("z"), "two regions: a record per row");
    // A row both put and deleted keeps HBase's order: the delete hides the put.
    mutate_rows(&mut client, &["d", "e"], || {
        vec![put("f:q", "gone"), delete("f:q")]
    });
    for row in ["a", "b"] {
        assert_eq!(get_row(&mut client, "t", row, None), pairs(&[("f:q", "1")]));
    }
    for row in ["c", "z"] {
        assert_eq!(get_row(&mut client, "t", row, None), pairs(&[("f:q", "2")]));
    }
    for row in ["d", "e"] {
        assert_eq!(get_row(&mut client, "t", row, None), pairs(&[]));
    }
}
