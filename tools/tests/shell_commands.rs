//! Valid shell lines and the typed commands they parse to.

// Marks the helpers below as test code, so the workspace's allow-*-in-tests lint settings apply.
#![cfg(test)]

use strata_tools::shell::{
    Alter, AlterChange, Append, BloomFilter, CellColumn, ColumnSpec, Command, Compression, Count,
    CreateTable, Delete, DeleteAll, DeleteColumn, Durability, FamilySetting, FamilySpec, Formatter,
    Get, GetCounter, Incr, KeepDeletedCells, ListRegions, Maintenance, PreSplit, Put, RegionColumn,
    RowSelector, Scan, ScanSpec, Split, SplitAlgorithm, StatusFormat, TableOptionKey, TableOptions,
    TimeFilter, Ttl, Warning, parse_command,
};

fn bytes(text: &str) -> Vec<u8> {
    text.as_bytes().to_vec()
}

fn put(row: &str, family: &str, qualifier: &str, value: &[u8], timestamp: Option<i64>) -> Command {
    Command::Put(Put {
        table: "t".to_owned(),
        row: bytes(row),
        column: CellColumn::new(family, qualifier.as_bytes()),
        value: value.to_vec(),
        timestamp,
    })
}

fn get(columns: Vec<ColumnSpec>) -> Get {
    Get {
        table: "t".to_owned(),
        row: bytes("r"),
        columns,
        time: None,
        versions: None,
        filter: None,
        formatter: None,
        max_length: None,
    }
}

fn scan(spec: ScanSpec) -> Command {
    Command::Scan(Scan {
        table: "t".to_owned(),
        spec,
    })
}

fn create(families: Vec<FamilySpec>, pre_split: PreSplit, options: TableOptions) -> Command {
    Command::Create(CreateTable {
        table: "t".to_owned(),
        families,
        pre_split,
        options,
    })
}

fn alter(changes: Vec<AlterChange>) -> Command {
    Command::Alter(Alter {
        table: "t".to_owned(),
        changes,
    })
}

fn family(name: &str) -> FamilySpec {
    FamilySpec::named(name)
}

fn column(family: &str, qualifier: &str) -> ColumnSpec {
    ColumnSpec::column(family, qualifier.as_bytes())
}

fn delete_column(family: &str, qualifier: Option<&str>) -> DeleteColumn {
    DeleteColumn {
        family: family.to_owned(),
        qualifier: qualifier.map(bytes),
    }
}

fn check(cases: Vec<(&str, Command)>) {
    let mut failures = Vec::new();
    for (line, expected) in cases {
        match parse_command(line) {
            Ok(statement) if statement.command == expected => {
                if !statement.warnings.is_empty() {
                    failures.push(format!(
                        "{line}\n  unexpected warnings {:?}",
                        statement.warnings
                    ));
                }
            }
            Ok(statement) => {
                failures.push(format!(
                    "{line}\n  expected {expected:?}\n  got      {:?}",
                    statement.command
                ));
            }
            Err(error) => failures.push(format!("{line}\n  error: {}", error.render(line))),
        }
    }
    assert!(
        failures.is_empty(),
        "{} line(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn table_administration() {
    let full_family = FamilySpec {
        name: "f".to_owned(),
        versions: Some(3),
        ttl: Some(Ttl::Seconds(86_400)),
        bloom_filter: Some(BloomFilter::RowCol),
        block_size_bytes: Some(16_384),
        compression: Some(Compression::Zstd),
        in_memory: Some(true),
        block_cache: Some(false),
        min_versions: Some(2),
        keep_deleted_cells: Some(KeepDeletedCells::Ttl),
        major_compaction_period_ms: Some(FamilySetting::Value(86_400_000)),
        major_compaction_jitter_millionths: Some(FamilySetting::Value(250_000)),
    };
    check(vec![
        (
            "create 't', 'f1', 'f2'",
            create(
                vec![family("f1"), family("f2")],
                PreSplit::None,
                TableOptions::default(),
            ),
        ),
        (
            "create('t', 'f1')",
            create(vec![family("f1")], PreSplit::None, TableOptions::default()),
        ),
        (
            "create 't', ['f1', ['f2']], nil",
            create(
                vec![family("f1"), family("f2")],
                PreSplit::None,
                TableOptions::default(),
            ),
        ),
        (
            "create 't', {NAME => 'f1'}, {NAME => 'f2'}",
            create(
                vec![family("f1"), family("f2")],
                PreSplit::None,
                TableOptions::default(),
            ),
        ),
        (
            "create 't', {NAME => 'f', VERSIONS => 3, TTL => 86400, BLOOMFILTER => 'ROWCOL', BLOCKSIZE => 16384, \
             COMPRESSION => 'ZSTD', IN_MEMORY => true, BLOCKCACHE => false, MIN_VERSIONS => 2, \
             KEEP_DELETED_CELLS => 'TTL', CONFIGURATION => {'hbase.hregion.majorcompaction' => 86400000, \
             'hbase.hregion.majorcompaction.jitter' => 0.25}}, {NAME => 'g'}",
            create(
                vec![full_family.clone(), family("g")],
                PreSplit::None,
                TableOptions::default(),
            ),
        ),
        (
            "create 't', {'NAME' => 'f', 'VERSIONS' => '3', 'TTL' => '1 DAY', 'BLOOMFILTER' => 'rowcol', 'BLOCKSIZE' => '16384', \
             'COMPRESSION' => 'zstd', 'IN_MEMORY' => 'TRUE', 'BLOCKCACHE' => 'false', 'MIN_VERSIONS' => '2', \
             'KEEP_DELETED_CELLS' => 'ttl', 'CONFIGURATION' => {'hbase.hregion.majorcompaction' => '86400000', \
             'hbase.hregion.majorcompaction.jitter' => '0.25'}}, 'g'",
            create(
                vec![full_family, family("g")],
                PreSplit::None,
                TableOptions::default(),
            ),
        ),
        (
            "create 't', {NAME => 'f', TTL => 'FOREVER', BLOOMFILTER => 'NONE', COMPRESSION => 'NONE'}",
            create(
                vec![FamilySpec {
                    ttl: Some(Ttl::Forever),
                    bloom_filter: Some(BloomFilter::None),
                    compression: Some(Compression::None),
                    ..family("f")
                }],
                PreSplit::None,
                TableOptions::default(),
            ),
        ),
        (
            "create 't', 'f', SPLITS => ['20', '10', \"\\x00\\xff\", '\\x30']",
            create(
                vec![family("f")],
                PreSplit::Keys(vec![
                    vec![0x00, 0xff],
                    b"0".to_vec(),
                    bytes("10"),
                    bytes("20"),
                ]),
                TableOptions::default(),
            ),
        ),
        (
            "create 't', 'f', {NUMREGIONS => 15, SPLITALGO => 'HexStringSplit'}",
            create(
                vec![family("f")],
                PreSplit::Algorithm {
                    algorithm: SplitAlgorithm::HexStringSplit,
                    regions: 15,
                },
                TableOptions::default(),
            ),
        ),
        (
            "create 't', 'f', NUMREGIONS => 4, SPLITALGO => 'org.apache.hadoop.hbase.util.RegionSplitter.UniformSplit'",
            create(
                vec![family("f")],
                PreSplit::Algorithm {
                    algorithm: SplitAlgorithm::UniformSplit,
                    regions: 4,
                },
                TableOptions::default(),
            ),
        ),
        (
            "create 't', 'f', SALT_BUCKETS => 1000",
            create(
                vec![family("f")],
                PreSplit::SaltBuckets(1000),
                TableOptions::default(),
            ),
        ),
        (
            "create 't', 'f', SPLITS_FILE => 'splits.txt'",
            create(
                vec![family("f")],
                PreSplit::KeysFile("splits.txt".to_owned()),
                TableOptions::default(),
            ),
        ),
        (
            "create 't', 'f', MAX_FILESIZE => '134217728', MEMSTORE_FLUSHSIZE => 1_048_576, DURABILITY => 'ASYNC_WAL'",
            create(
                vec![family("f")],
                PreSplit::None,
                TableOptions {
                    max_region_size_bytes: Some(134_217_728),
                    memstore_flush_size_bytes: Some(1_048_576),
                    durability: Some(Durability::AsyncWal),
                },
            ),
        ),
        ("list", Command::List { pattern: None }),
        (
            "list 'abc.*'",
            Command::List {
                pattern: Some("abc.*".to_owned()),
            },
        ),
        (
            "exists 't'",
            Command::Exists {
                table: "t".to_owned(),
            },
        ),
        (
            "describe 't'",
            Command::Describe {
                table: "t".to_owned(),
            },
        ),
        (
            "desc 't'",
            Command::Describe {
                table: "t".to_owned(),
            },
        ),
        (
            "describe 'ns:t'",
            Command::Describe {
                table: "ns:t".to_owned(),
            },
        ),
        (
            "disable 't'",
            Command::Disable {
                table: "t".to_owned(),
            },
        ),
        (
            "enable 't'",
            Command::Enable {
                table: "t".to_owned(),
            },
        ),
        (
            "is_enabled 't'",
            Command::IsEnabled {
                table: "t".to_owned(),
            },
        ),
        (
            "is_disabled 't'",
            Command::IsDisabled {
                table: "t".to_owned(),
            },
        ),
        (
            "drop 't'",
            Command::Drop {
                table: "t".to_owned(),
            },
        ),
        (
            "truncate 't'",
            Command::Truncate {
                table: "t".to_owned(),
            },
        ),
        (
            "truncate_preserve 't'",
            Command::TruncatePreserve {
                table: "t".to_owned(),
            },
        ),
    ]);
}

#[test]
fn alter_forms() {
    check(vec![
        (
            "alter 't', NAME => 'f', VERSIONS => 5",
            alter(vec![AlterChange::Family(FamilySpec {
                versions: Some(5),
                ..family("f")
            })]),
        ),
        (
            "alter 't', 'f1', {NAME => 'f2', IN_MEMORY => true}, {NAME => 'f3', VERSIONS => 5}",
            alter(vec![
                AlterChange::Family(family("f1")),
                AlterChange::Family(FamilySpec {
                    in_memory: Some(true),
                    ..family("f2")
                }),
                AlterChange::Family(FamilySpec {
                    versions: Some(5),
                    ..family("f3")
                }),
            ]),
        ),
        (
            "alter 't', NAME => 'f', CONFIGURATION => {'hbase.hregion.majorcompaction' => '0', \
             'hbase.hregion.majorcompaction.jitter' => nil}",
            alter(vec![AlterChange::Family(FamilySpec {
                major_compaction_period_ms: Some(FamilySetting::Value(0)),
                major_compaction_jitter_millionths: Some(FamilySetting::Database),
                ..family("f")
            })]),
        ),
        (
            "alter 't', 'delete' => 'f'",
            alter(vec![AlterChange::DeleteFamily("f".to_owned())]),
        ),
        (
            "alter 't', NAME => 'f', METHOD => 'delete'",
            alter(vec![AlterChange::DeleteFamily("f".to_owned())]),
        ),
        (
            "alter 't', {NAME => 'f', METHOD => 'delete'}",
            alter(vec![AlterChange::DeleteFamily("f".to_owned())]),
        ),
        (
            "alter 't', MAX_FILESIZE => '134217728'",
            alter(vec![AlterChange::SetOptions(TableOptions {
                max_region_size_bytes: Some(134_217_728),
                ..TableOptions::default()
            })]),
        ),
        (
            "alter 't', METHOD => 'table_att', DURABILITY => 'SKIP_WAL'",
            alter(vec![AlterChange::SetOptions(TableOptions {
                durability: Some(Durability::SkipWal),
                ..TableOptions::default()
            })]),
        ),
        (
            "alter 't', METHOD => 'table_att_unset', NAME => ['MAX_FILESIZE', 'DURABILITY']",
            alter(vec![AlterChange::UnsetOptions(vec![
                TableOptionKey::MaxFileSize,
                TableOptionKey::Durability,
            ])]),
        ),
        (
            "alter 't', { NAME => 'f1', VERSIONS => 3 },\n { MAX_FILESIZE => '134217728' }, { METHOD => 'delete', NAME => 'f2' }",
            alter(vec![
                AlterChange::Family(FamilySpec {
                    versions: Some(3),
                    ..family("f1")
                }),
                AlterChange::SetOptions(TableOptions {
                    max_region_size_bytes: Some(134_217_728),
                    ..TableOptions::default()
                }),
                AlterChange::DeleteFamily("f2".to_owned()),
            ]),
        ),
    ]);
}

#[test]
fn writes() {
    check(vec![
        ("put 't', 'r', 'f:q', 'v'", put("r", "f", "q", b"v", None)),
        (
            "put 't', 'r', 'f:q', 'v', 1700000000000",
            put("r", "f", "q", b"v", Some(1_700_000_000_000)),
        ),
        ("put('t', 'r', 'f:q', 'v')", put("r", "f", "q", b"v", None)),
        ("put 't', 'r', 'f:', 'v'", put("r", "f", "", b"v", None)),
        ("put 't', 'r', 'f', 'v'", put("r", "f", "", b"v", None)),
        (
            "put 't', 'r', 'f:a:b', 'v'",
            put("r", "f", "a:b", b"v", None),
        ),
        ("put 't', 'r', 'f:q', 42", put("r", "f", "q", b"42", None)),
        ("put 't', 1, 'f:q', 2.5", put("1", "f", "q", b"2.5", None)),
        (
            "put 't', \"k\\x00\\x01\", 'f:q', \"\\xff\\x00\"",
            put("k\0\x01", "f", "q", b"\xff\x00", None),
        ),
        (
            "put 't', 'r', 'f:q', Bytes.toBytes(10)",
            put("r", "f", "q", &10i64.to_be_bytes(), None),
        ),
        (
            "put 't', 'r', 'f:q', org.apache.hadoop.hbase.util.Bytes.toBytes(\"x\")",
            put("r", "f", "q", b"x", None),
        ),
        (
            "put 't', 'r', 'f:q', Bytes.toBytesBinary('\\x01a')",
            put("r", "f", "q", b"\x01a", None),
        ),
        (
            "append 't', 'r', 'f:q', 'more'",
            Command::Append(Append {
                table: "t".to_owned(),
                row: bytes("r"),
                column: CellColumn::new("f", b"q"),
                value: bytes("more"),
            }),
        ),
        (
            "incr 't', 'r', 'f:q'",
            Command::Incr(Incr {
                table: "t".to_owned(),
                row: bytes("r"),
                column: CellColumn::new("f", b"q"),
                amount: 1,
            }),
        ),
        (
            "incr 't', 'r', 'f:q', -5",
            Command::Incr(Incr {
                table: "t".to_owned(),
                row: bytes("r"),
                column: CellColumn::new("f", b"q"),
                amount: -5,
            }),
        ),
        (
            "incr 't', 'r', 'CNT:', 1_000",
            Command::Incr(Incr {
                table: "t".to_owned(),
                row: bytes("r"),
                column: CellColumn::new("CNT", b""),
                amount: 1000,
            }),
        ),
        (
            "get_counter 't', 'r', 'f:q'",
            Command::GetCounter(GetCounter {
                table: "t".to_owned(),
                row: bytes("r"),
                column: CellColumn::new("f", b"q"),
            }),
        ),
    ]);
}

#[test]
fn deletes() {
    let delete = |column: DeleteColumn, timestamp: Option<i64>| {
        Command::Delete(Delete {
            table: "t".to_owned(),
            row: bytes("r"),
            column,
            timestamp,
        })
    };
    let delete_all = |rows: RowSelector, column: Option<DeleteColumn>, timestamp: Option<i64>| {
        Command::DeleteAll(DeleteAll {
            table: "t".to_owned(),
            rows,
            column,
            timestamp,
        })
    };
    check(vec![
        (
            "delete 't', 'r', 'f:q'",
            delete(delete_column("f", Some("q")), None),
        ),
        (
            "delete 't', 'r', 'f:q', 123",
            delete(delete_column("f", Some("q")), Some(123)),
        ),
        (
            "delete 't', 'r', 'f', 123",
            delete(delete_column("f", None), Some(123)),
        ),
        (
            "deleteall 't', 'r'",
            delete_all(RowSelector::Row(bytes("r")), None, None),
        ),
        (
            "deleteall 't', 'r', 'f:q'",
            delete_all(
                RowSelector::Row(bytes("r")),
                Some(delete_column("f", Some("q"))),
                None,
            ),
        ),
        (
            "deleteall 't', 'r', 'f:q', 99",
            delete_all(
                RowSelector::Row(bytes("r")),
                Some(delete_column("f", Some("q"))),
                Some(99),
            ),
        ),
        (
            "deleteall 't', 'r', nil, 99",
            delete_all(RowSelector::Row(bytes("r")), None, Some(99)),
        ),
        (
            "deleteall 't', 'r', '', 99",
            delete_all(RowSelector::Row(bytes("r")), None, Some(99)),
        ),
        (
            "deleteall 't', {ROWPREFIXFILTER => 'p'}",
            delete_all(RowSelector::Prefix(bytes("p")), None, None),
        ),
        (
            "deleteall 't', {ROWPREFIXFILTER => 'p'}, 'CNT', 1700000000000",
            delete_all(
                RowSelector::Prefix(bytes("p")),
                Some(delete_column("CNT", None)),
                Some(1_700_000_000_000),
            ),
        ),
    ]);
}

#[test]
fn gets() {
    let with = |change: &dyn Fn(&mut Get)| {
        let mut value = get(Vec::new());
        change(&mut value);
        Command::Get(value)
    };
    check(vec![
        ("get 't', 'r'", Command::Get(get(Vec::new()))),
        ("get('t', 'r')", Command::Get(get(Vec::new()))),
        (
            "get 't', 'r', 'f:q'",
            Command::Get(get(vec![column("f", "q")])),
        ),
        (
            "get 't', 'r', 'f:q', 'g'",
            Command::Get(get(vec![column("f", "q"), ColumnSpec::family("g")])),
        ),
        (
            "get 't', 'r', ['f:q', 'g']",
            Command::Get(get(vec![column("f", "q"), ColumnSpec::family("g")])),
        ),
        (
            "get 't', 'r', 'f:'",
            Command::Get(get(vec![column("f", "")])),
        ),
        (
            "get 't', 'r', {COLUMN => 'f:q'}",
            Command::Get(get(vec![column("f", "q")])),
        ),
        (
            "get 't', 'r', {COLUMNS => ['f:q', 'g']}",
            Command::Get(get(vec![column("f", "q"), ColumnSpec::family("g")])),
        ),
        (
            "get 't', 'r', COLUMN => 'f:q'",
            Command::Get(get(vec![column("f", "q")])),
        ),
        (
            "get 't', 'r', {TIMERANGE => [10, 20]}",
            with(&|get| get.time = Some(TimeFilter::Range { min: 10, max: 20 })),
        ),
        (
            "get 't', 'r', {COLUMN => 'f:q', TIMESTAMP => 5, VERSIONS => 4}",
            with(&|get| {
                get.columns = vec![column("f", "q")];
                get.time = Some(TimeFilter::At(5));
                get.versions = Some(4);
            }),
        ),
        (
            "get 't', 'r', {VERSIONS => 3}",
            with(&|get| get.versions = Some(3)),
        ),
        (
            "get 't', 'r', {FILTER => \"ValueFilter(=, 'binary:abc')\"}",
            with(&|get| get.filter = Some(bytes("ValueFilter(=, 'binary:abc')"))),
        ),
        (
            "get 't', 'r', {COLUMN => ['f:a:toLong', 'f:b:c(org.apache.hadoop.hbase.util.Bytes).toInt', 'f:x:y']}",
            with(&|get| {
                get.columns = vec![
                    ColumnSpec {
                        formatter: Some(Formatter::ToLong),
                        ..column("f", "a")
                    },
                    ColumnSpec {
                        formatter: Some(Formatter::ToInt),
                        ..column("f", "b")
                    },
                    column("f", "x:y"),
                ];
            }),
        ),
        (
            "get 't', 'r', {FORMATTER => 'toString', MAXLENGTH => 20}",
            with(&|get| {
                get.formatter = Some(Formatter::ToString);
                get.max_length = Some(20);
            }),
        ),
    ]);
}

#[test]
fn scans_and_counts() {
    let spec = |change: &dyn Fn(&mut ScanSpec)| {
        let mut spec = ScanSpec::default();
        change(&mut spec);
        spec
    };
    check(vec![
        ("scan 't'", scan(ScanSpec::default())),
        ("scan 't', {}", scan(ScanSpec::default())),
        (
            "scan 't', {COLUMNS => ['course:']}",
            scan(spec(&|s| s.columns = vec![column("course", "")])),
        ),
        (
            "scan 't', {COLUMNS => 'f'}",
            scan(spec(&|s| s.columns = vec![ColumnSpec::family("f")])),
        ),
        (
            "scan 't', {COLUMNS => ['c1', 'c2'], LIMIT => 10, STARTROW => 'xyz'}",
            scan(spec(&|s| {
                s.columns = vec![ColumnSpec::family("c1"), ColumnSpec::family("c2")];
                s.limit = Some(10);
                s.start_row = Some(bytes("xyz"));
            })),
        ),
        (
            "scan 't', {STARTROW => 'a', STOPROW => \"b\\x00\", REVERSED => true, RAW => true, VERSIONS => 10}",
            scan(spec(&|s| {
                s.start_row = Some(bytes("a"));
                s.stop_row = Some(b"b\0".to_vec());
                s.reversed = true;
                s.raw = true;
                s.versions = Some(10);
            })),
        ),
        (
            "scan 't', {ROWPREFIXFILTER => 'row2', FILTER => \"\n    (QualifierFilter (>=, 'binary:xyz')) AND (TimestampsFilter ( 123, 456))\"}",
            scan(spec(&|s| {
                s.row_prefix = Some(bytes("row2"));
                s.filter = Some(bytes(
                    "\n    (QualifierFilter (>=, 'binary:xyz')) AND (TimestampsFilter ( 123, 456))",
                ));
            })),
        ),
        (
            "scan 't', {COLUMNS => 'c1', TIMERANGE => [1303668804, 1303668904]}",
            scan(spec(&|s| {
                s.columns = vec![ColumnSpec::family("c1")];
                s.time = Some(TimeFilter::Range {
                    min: 1_303_668_804,
                    max: 1_303_668_904,
                });
            })),
        ),
        (
            "scan 't', {TIMESTAMP => 7, BATCH => 100}",
            scan(spec(&|s| {
                s.time = Some(TimeFilter::At(7));
                s.batch = Some(100);
            })),
        ),
        (
            "scan 't', {REVERSED => 'false', RAW => false}",
            scan(ScanSpec::default()),
        ),
        (
            "count 't'",
            Command::Count(Count {
                table: "t".to_owned(),
                interval_rows: 1000,
                spec: ScanSpec::default(),
            }),
        ),
        (
            "count 't', INTERVAL => 100000",
            Command::Count(Count {
                table: "t".to_owned(),
                interval_rows: 100_000,
                spec: ScanSpec::default(),
            }),
        ),
        (
            "count 't', 10",
            Command::Count(Count {
                table: "t".to_owned(),
                interval_rows: 10,
                spec: ScanSpec::default(),
            }),
        ),
        (
            "count 't', {INTERVAL => 5, ROWPREFIXFILTER => 'a'}",
            Command::Count(Count {
                table: "t".to_owned(),
                interval_rows: 5,
                spec: spec(&|s| s.row_prefix = Some(bytes("a"))),
            }),
        ),
    ]);
}

#[test]
fn maintenance_and_general() {
    let maintenance = |target: &str, family: Option<&str>| Maintenance {
        target: target.to_owned(),
        family: family.map(str::to_owned),
    };
    check(vec![
        ("flush 't'", Command::Flush(maintenance("t", None))),
        (
            "flush 't', 'f'",
            Command::Flush(maintenance("t", Some("f"))),
        ),
        ("compact 't'", Command::Compact(maintenance("t", None))),
        (
            "compact 't', 'f', 'NORMAL'",
            Command::Compact(maintenance("t", Some("f"))),
        ),
        (
            "compact 't', nil, 'NORMAL'",
            Command::Compact(maintenance("t", None)),
        ),
        (
            "major_compact 't'",
            Command::MajorCompact(maintenance("t", None)),
        ),
        (
            "major_compact 't', 'f'",
            Command::MajorCompact(maintenance("t", Some("f"))),
        ),
        (
            "split 't'",
            Command::Split(Split {
                target: "t".to_owned(),
                split_key: None,
            }),
        ),
        (
            "split 't', 'm'",
            Command::Split(Split {
                target: "t".to_owned(),
                split_key: Some(bytes("m")),
            }),
        ),
        (
            "list_regions 't'",
            Command::ListRegions(ListRegions {
                table: "t".to_owned(),
                columns: RegionColumn::ALL.to_vec(),
            }),
        ),
        (
            "list_regions 't', '', ['start_key', 'END_KEY', 'start_key']",
            Command::ListRegions(ListRegions {
                table: "t".to_owned(),
                columns: vec![RegionColumn::StartKey, RegionColumn::EndKey],
            }),
        ),
        (
            "list_regions 't', {}, ['SIZE']",
            Command::ListRegions(ListRegions {
                table: "t".to_owned(),
                columns: vec![RegionColumn::Size],
            }),
        ),
        (
            "status",
            Command::Status {
                format: StatusFormat::Summary,
            },
        ),
        (
            "status 'simple'",
            Command::Status {
                format: StatusFormat::Simple,
            },
        ),
        (
            "status 'detailed'",
            Command::Status {
                format: StatusFormat::Detailed,
            },
        ),
        ("version", Command::Version),
        ("help", Command::Help { topic: None }),
        (
            "help 'get'",
            Command::Help {
                topic: Some("get".to_owned()),
            },
        ),
        (
            "help \"dml\"",
            Command::Help {
                topic: Some("dml".to_owned()),
            },
        ),
        ("exit", Command::Exit),
        ("quit", Command::Exit),
        ("exit()", Command::Exit),
    ]);
}

#[test]
fn syntax_variations_parse_to_the_same_command() {
    let expected = put("r", "f", "q", b"v", None);
    check(vec![
        ("put 't','r','f:q','v'", expected.clone()),
        (
            "  put   't' ,  'r', 'f:q', 'v'  # trailing comment",
            expected.clone(),
        ),
        ("put \"t\", \"r\", \"f:q\", \"v\"", expected.clone()),
        ("put 't', 'r',\n    'f:q',\n    'v'", expected.clone()),
        ("put('t',\n 'r', 'f:q',\n 'v')", expected.clone()),
        ("put 't', 'r', \\\n 'f:q', 'v'", expected.clone()),
        ("put 't', 'r', 'f' ':q', 'v'", expected.clone()),
        ("put 't', 'r', 'f:q', 'v';", expected),
        (
            "put 't', 'r', 'f:q', 'v\\'s'",
            put("r", "f", "q", b"v's", None),
        ),
        (
            "put 't', 'r', 'f:q', 'two\nlines'",
            put("r", "f", "q", b"two\nlines", None),
        ),
        (
            "put 't', 'r', 'f:q', 'v', 0x10",
            put("r", "f", "q", b"v", Some(16)),
        ),
        (
            "put 't', 'r', 'f:q', 'v', 1_700_000_000_000",
            put("r", "f", "q", b"v", Some(1_700_000_000_000)),
        ),
        (
            "put 't', 'r', 'f:q', 'é'",
            put("r", "f", "q", "é".as_bytes(), None),
        ),
    ]);
}

#[test]
fn warnings_are_reported_with_the_command() {
    let cases: Vec<(&str, Vec<Warning>)> = vec![
        (
            "create 't', {NAME => 'f', DATA_BLOCK_ENCODING => 'FAST_DIFF', FOO => 1}",
            vec![
                Warning::IgnoredArgument {
                    key: "DATA_BLOCK_ENCODING".to_owned(),
                },
                Warning::UnknownArgument {
                    key: "FOO".to_owned(),
                    scope: strata_tools::shell::ArgumentScope::Family("f".to_owned()),
                },
            ],
        ),
        (
            "create 't', 'f', 'f', OWNER => 'me', BAR => 2",
            vec![
                Warning::FamilyReplaced {
                    family: "f".to_owned(),
                },
                Warning::IgnoredArgument {
                    key: "OWNER".to_owned(),
                },
                Warning::UnknownArgument {
                    key: "BAR".to_owned(),
                    scope: strata_tools::shell::ArgumentScope::CreateTable,
                },
            ],
        ),
        (
            "scan 't', {CACHE_BLOCKS => false, CACHE => 100}",
            vec![
                Warning::IgnoredArgument {
                    key: "CACHE_BLOCKS".to_owned(),
                },
                Warning::IgnoredArgument {
                    key: "CACHE".to_owned(),
                },
            ],
        ),
        (
            "scan 't', {LIMIT => 1, LIMIT => 2}",
            vec![Warning::DuplicateKey {
                key: "LIMIT".to_owned(),
            }],
        ),
        (
            "alter 't', FOO => 1",
            vec![Warning::UnknownArgument {
                key: "FOO".to_owned(),
                scope: strata_tools::shell::ArgumentScope::Command,
            }],
        ),
        (
            "list_regions 't', 'server1'",
            vec![Warning::IgnoredArgument {
                key: "SERVER_NAME".to_owned(),
            }],
        ),
        (
            "put 't', 'r', 'f:q', 'v', {ATTRIBUTES => {'k' => 'v'}}",
            vec![Warning::IgnoredArgument {
                key: "ATTRIBUTES".to_owned(),
            }],
        ),
    ];
    for (line, expected) in cases {
        let statement =
            parse_command(line).unwrap_or_else(|error| panic!("{line}: {}", error.render(line)));
        assert_eq!(statement.warnings, expected, "{line}");
    }
    let texts: Vec<String> =
        parse_command("create 't', {NAME => 'f', FOO => 1}, BAR => 2, OWNER => 'x'")
            .map(|statement| statement.warnings.iter().map(ToString::to_string).collect())
            .unwrap_or_default();
    assert_eq!(
        texts,
        vec![
            "Unknown argument ignored for column family f: FOO",
            "An argument ignored (unknown or overridden): BAR",
            "An argument ignored (no effect in strata): OWNER",
        ]
    );
    let statement = parse_command("scan 't', {LIMIT => 1, LIMIT => 2}")
        .ok()
        .map(|statement| statement.command);
    assert_eq!(
        statement,
        Some(scan(ScanSpec {
            limit: Some(2),
            ..ScanSpec::default()
        }))
    );
}

#[test]
fn namespaces_and_table_references() {
    let ns = |name: &str| name.to_owned();
    check(vec![
        ("list_namespace", Command::ListNamespace { pattern: None }),
        (
            "list_namespace 'n.*'",
            Command::ListNamespace {
                pattern: Some(ns("n.*")),
            },
        ),
        (
            "create_namespace 'ns1'",
            Command::CreateNamespace {
                namespace: ns("ns1"),
            },
        ),
        (
            "create_namespace 'ns1', {}",
            Command::CreateNamespace {
                namespace: ns("ns1"),
            },
        ),
        (
            "describe_namespace 'ns1'",
            Command::DescribeNamespace {
                namespace: ns("ns1"),
            },
        ),
        (
            "drop_namespace 'ns1'",
            Command::DropNamespace {
                namespace: ns("ns1"),
            },
        ),
        (
            "list_namespace_tables 'ns1'",
            Command::ListNamespaceTables {
                namespace: ns("ns1"),
            },
        ),
        (
            "get_splits 'ns1:t'",
            Command::GetSplits { table: ns("ns1:t") },
        ),
        ("get_table 't'", Command::GetTable { table: ns("t") }),
        ("whoami", Command::Whoami),
    ]);
    // Assignments of table references, and calls on them, resolved when they run.
    let statement = parse_command("t = get_table 'ns1:t'").unwrap();
    assert_eq!(statement.command, Command::GetTable { table: ns("ns1:t") });
    assert_eq!(statement.assign_to.as_deref(), Some("t"));
    let statement = parse_command("t = create 't', 'f'").unwrap();
    assert!(matches!(statement.command, Command::Create(_)));
    assert_eq!(statement.assign_to.as_deref(), Some("t"));
    let statement = parse_command("t.put 'r', 'f:q', 'v'").unwrap();
    let Command::TableMethod(call) = &statement.command else {
        panic!("{:?}", statement.command)
    };
    assert_eq!(call.name, "put");
    assert_eq!(
        call.receiver.as_ref().map(|(name, _)| name.as_str()),
        Some("t")
    );
    let resolved =
        strata_tools::shell::resolve_table_method(call, "ns1:t", "t.put 'r', 'f:q', 'v'").unwrap();
    assert_eq!(
        resolved.command,
        Command::Put(Put {
            table: ns("ns1:t"),
            row: bytes("r"),
            column: CellColumn::new("f", b"q"),
            value: bytes("v"),
            timestamp: None,
        })
    );
    let statement = parse_command("t").unwrap();
    assert!(matches!(statement.command, Command::Variable { ref name, .. } if name == "t"));
}

/// HBase applies a scan's LIMIT only above zero: `LIMIT => 0` (or less) reads every row.
#[test]
fn a_limit_of_zero_or_less_is_no_limit() {
    for line in ["scan 't', {LIMIT => 0}", "scan 't', {LIMIT => -1}"] {
        check(vec![(line, scan(ScanSpec::default()))]);
    }
    check(vec![(
        "scan 't', {LIMIT => 3}",
        scan(ScanSpec {
            limit: Some(3),
            ..ScanSpec::default()
        }),
    )]);
}
