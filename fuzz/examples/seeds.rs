//! Writes a starting corpus for every fuzz target: `seeds DIR` fills `DIR/TARGET/` with
//! well-formed inputs (files the engine writes, filters and shell scripts from the docs,
//! Thrift calls as happybase sends them), so the fuzzer mutates valid bytes instead of
//! discovering each format from nothing. `fuzz/run.sh` runs it (`cargo run --example seeds`) before fuzzing.

use std::path::Path;

use strata_tools::thrift::codec::Protocol;
use strata_tools::thrift::hbase::{
    Call, GetColumnDescriptorsArgs, GetTableNamesArgs, ScannerGetArgs, encode_call,
};

/// Targets whose seeds come from the engine (`strata::fuzzing::seed_inputs`).
const ENGINE_TARGETS: &[&str] = &[
    "wal_record",
    "wal_segment",
    "hfile_block",
    "data_block",
    "index_block",
    "bloom",
    "hfile_trailer",
    "manifest_edit",
    "manifest_file",
];

const FILTERS: &[&str] = &[
    "PrefixFilter('row1') AND ValueFilter(=, 'binary:x')",
    "SingleColumnValueFilter('info', 'category', =, 'binary:report') AND PageFilter(2)",
    "(RowFilter(>=, 'binary:a') OR QualifierFilter(=, 'regexstring:^q1')) AND KeyOnlyFilter()",
    "SKIP ValueFilter(!=, 'substring:abc')",
    "WHILE RowFilter(<, 'binaryprefix:m')",
    "ColumnRangeFilter('a', true, 'c', false)",
    "TimestampsFilter(1, 2, 3)",
    "DependentColumnFilter('f', 'q', true, =, 'binary:v')",
    "ColumnValueFilter('f', 'q', >, 'binary:5')",
    "FuzzyRowFilter('\\x00\\x01ab', '\\x01\\x00\\x00\\x00')",
    "MultiRowRangeFilter('a', true, 'c', false, 'x', true, 'z', true)",
    "RowMaskFilter(2, '\\xff\\x0f', =, 'ab')",
    "ColumnPrefixFilter('q') AND FirstKeyOnlyFilter() AND ColumnCountGetFilter(3)",
    "InclusiveStopFilter('m') AND ColumnPaginationFilter(2, 1) AND MultipleColumnPrefixFilter('a', 'b')",
];

const SHELL: &[&str] = &[
    "create 'scores', 'grade', {NAME => 'course', VERSIONS => 3}\nlist\n",
    "put 'scores', 'Tom', 'course:math', '87', 1000\nget 'scores', 'Tom', {COLUMN => 'course:math', TIMERANGE => [1000, 3000], VERSIONS => 3}\n",
    "scan 'files', {STARTROW => \"0001\\x00\", STOPROW => '0002', FILTER => \"PrefixFilter('a') AND PageFilter(2)\", COLUMNS => ['info:name']}\n",
    "t = get_table 'ns1:t'; t.put 'r', 'f:q', Bytes.toBytes(5)\nt.scan\n",
    "alter 't', NAME => 'f', VERSIONS => 5, TTL => 100\ndeleteall 't', 'r', 'f:q', 3000 # comment\n",
    "create 't', 'f', SPLITS => ['a', 'b'], {NUMREGIONS => 4, SPLITALGO => 'HexStringSplit'}\nincr 't', 'r', 'f:c', 0x10\n",
];

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .ok_or_else(|| std::io::Error::other("usage: seeds DIR"))?;
    let dir = Path::new(&dir);
    for target in ENGINE_TARGETS {
        write(dir, target, strata::fuzzing::seed_inputs(target))?;
    }
    write(
        dir,
        "filter_parse",
        FILTERS.iter().map(|f| f.as_bytes().to_vec()).collect(),
    )?;
    write(
        dir,
        "shell_parse",
        SHELL.iter().map(|s| s.as_bytes().to_vec()).collect(),
    )?;
    let calls = [
        Call::GetTableNames(GetTableNamesArgs {}),
        Call::GetColumnDescriptors(GetColumnDescriptorsArgs {
            table_name: Some(b"t".to_vec()),
        }),
        Call::ScannerGet(ScannerGetArgs { id: Some(7) }),
    ];
    let mut thrift = Vec::new();
    for protocol in [Protocol::Binary, Protocol::Compact] {
        for call in &calls {
            let message = encode_call(protocol, call, 1)
                .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
            let mut framed = (message.len() as u32).to_be_bytes().to_vec();
            framed.extend_from_slice(&message);
            thrift.push(message);
            thrift.push(framed);
        }
    }
    write(dir, "thrift_message", thrift)
}

fn write(dir: &Path, target: &str, inputs: Vec<Vec<u8>>) -> std::io::Result<()> {
    let target_dir = dir.join(target);
    std::fs::create_dir_all(&target_dir)?;
    for (i, input) in inputs.iter().enumerate() {
        std::fs::write(target_dir.join(format!("seed-{i}")), input)?;
    }
    Ok(())
}
