//! Invalid shell lines: the error each one reports, rendered as the shell prints it, and its
//! position (line:column).

// Marks the helpers below as test code, so the workspace's allow-*-in-tests lint settings apply.
#![cfg(test)]

use strata_tools::shell::{ShellError, parse_command, parse_script};

/// Each case: the line, the rendered error, and where it points.
fn check(cases: &[(&str, &str, &str)]) {
    let mut failures = Vec::new();
    for (line, expected_text, expected_position) in cases {
        match parse_command(line) {
            Ok(statement) => failures.push(format!("{line}\n  parsed as {:?}", statement.command)),
            Err(error) => {
                let text = error.render(line);
                let position = error.position().to_string();
                if text != *expected_text || position != *expected_position {
                    failures.push(format!(
                        "{line}\n  expected {expected_position} {expected_text:?}\n  got      {position} {text:?}"
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn syntax_errors_show_the_line_and_a_caret() {
    check(&[
        (
            "put 't', 'r",
            "SyntaxError: (hbase):1: unterminated string meets end of file\nput 't', 'r\n         ^",
            "1:10",
        ),
        (
            "put 't', \"r\\\"",
            "SyntaxError: (hbase):1: unterminated string meets end of file\nput 't', \"r\\\"\n         ^",
            "1:10",
        ),
        (
            "create 't', {NAME => 'f'",
            "SyntaxError: (hbase):1: syntax error, unexpected end-of-input, expecting '}' (to close the '{' here)\n\
             create 't', {NAME => 'f'\n            ^",
            "1:13",
        ),
        (
            "get 't', 'r', ['a', 'b'",
            "SyntaxError: (hbase):1: syntax error, unexpected end-of-input, expecting ']' (to close the '[' here)\n\
             get 't', 'r', ['a', 'b'\n              ^",
            "1:15",
        ),
        (
            "get('t', 'r'",
            "SyntaxError: (hbase):1: syntax error, unexpected end-of-input, expecting ')' (to close the '(' here)\n\
             get('t', 'r'\n   ^",
            "1:4",
        ),
        (
            "put 't', , 'v'",
            "SyntaxError: (hbase):1: syntax error, unexpected ',', expecting a value\nput 't', , 'v'\n         ^",
            "1:10",
        ),
        (
            "put 't', 'r',",
            "SyntaxError: (hbase):1: syntax error, unexpected end-of-input, expecting a value\nput 't', 'r',\n             ^",
            "1:14",
        ),
        (
            "put 't', 'r', 'f:q', 'v' 5",
            "SyntaxError: (hbase):1: syntax error, unexpected integer literal, expecting ',' or end of command\n\
             put 't', 'r', 'f:q', 'v' 5\n                         ^",
            "1:26",
        ),
        (
            "scan 't', {COLUMNS => ['a'] LIMIT => 1}",
            "SyntaxError: (hbase):1: syntax error, unexpected constant LIMIT, expecting ',' or '}'\n\
             scan 't', {COLUMNS => ['a'] LIMIT => 1}\n                            ^",
            "1:29",
        ),
        (
            "scan 't', {LIMIT => 1]",
            "SyntaxError: (hbase):1: syntax error, unexpected ']', expecting ',' or '}'\n\
             scan 't', {LIMIT => 1]\n                     ^",
            "1:22",
        ),
        (
            "create 't', {NAME 'f'}",
            "SyntaxError: (hbase):1: syntax error, unexpected string literal, expecting '=>'\n\
             create 't', {NAME 'f'}\n                  ^",
            "1:19",
        ),
        (
            "create 't', {1 => 'f'}",
            "SyntaxError: (hbase):1: syntax error, unexpected integer literal, expecting a hash key\n\
             create 't', {1 => 'f'}\n             ^",
            "1:14",
        ),
        (
            "alter 't', NAME => 'f', 'g'",
            "SyntaxError: (hbase):1: syntax error, unexpected string literal, expecting KEY => value (bare KEY => \
             value arguments must come last)\nalter 't', NAME => 'f', 'g'\n                        ^",
            "1:25",
        ),
        (
            "'scores'",
            "SyntaxError: (hbase):1: syntax error, unexpected string literal, expecting a command name\n'scores'\n^",
            "1:1",
        ),
        (
            "put 't', 'r', 'f:q', \"\\xZZ\"",
            "SyntaxError: (hbase):1: invalid hex escape: \\x\nput 't', 'r', 'f:q', \"\\xZZ\"\n                      ^",
            "1:23",
        ),
        (
            "put 't', \"\\u{110000}\", 'f:q', 'v'",
            "SyntaxError: (hbase):1: invalid Unicode codepoint: \\u{110000}\nput 't', \"\\u{110000}\", 'f:q', 'v'\n          ^",
            "1:11",
        ),
        (
            "put 't', 'r', 'f:q', 9223372036854775808",
            "SyntaxError: (hbase):1: integer 9223372036854775808 is out of range (integers are 64-bit signed, as \
             Java's long)\nput 't', 'r', 'f:q', 9223372036854775808\n                     ^",
            "1:22",
        ),
        (
            "put 't', 'r', 'f:q', 'v', 1_",
            "SyntaxError: (hbase):1: trailing `_' in number: 1_\nput 't', 'r', 'f:q', 'v', 1_\n                          ^",
            "1:27",
        ),
        (
            "put 't', 'r', 'f:q' + 'x', 'v'",
            "SyntaxError: (hbase):1: syntax error, unexpected character '+'\nput 't', 'r', 'f:q' + 'x', 'v'\n                    ^",
            "1:21",
        ),
        (
            "\tput\t't', 'r',, 'v'",
            "SyntaxError: (hbase):1: syntax error, unexpected ',', expecting a value\n\tput\t't', 'r',, 'v'\n\t   \t         ^",
            "1:15",
        ),
    ]);
}

#[test]
fn unsupported_ruby_is_explained() {
    check(&[
        (
            "tables = list",
            "SyntaxError: (hbase):1: assignment is only supported for table references: \
             t = get_table 't' or t = create 't', 'f'\ntables = list\n^",
            "1:1",
        ),
        (
            "a = b = get_table 't'",
            "SyntaxError: (hbase):1: assignment is only supported for table references: \
             t = get_table 't' or t = create 't', 'f'\na = b = get_table 't'\n  ^",
            "1:3",
        ),
        (
            "t.get_table.put 'r', 'f:q', 'v'",
            "SyntaxError: (hbase):1: method call t.get_table.put is not supported (only Bytes.toBytes(...), \
             Bytes.toBytesBinary(...), .to_s and .to_java_bytes are evaluated)\nt.get_table.put 'r', 'f:q', 'v'\n^",
            "1:1",
        ),
        (
            "scan 't', {FILTER => PrefixFilter.new('x')}",
            "SyntaxError: (hbase):1: method call PrefixFilter.new is not supported (only Bytes.toBytes(...), \
             Bytes.toBytesBinary(...), .to_s and .to_java_bytes are evaluated)\n\
             scan 't', {FILTER => PrefixFilter.new('x')}\n                     ^",
            "1:22",
        ),
        (
            "create 't', {NAME: 'f'}",
            "SyntaxError: (hbase):1: `KEY: value` hash syntax is not supported; write KEY => value\n\
             create 't', {NAME: 'f'}\n             ^",
            "1:14",
        ),
        (
            "create 't', :f",
            "SyntaxError: (hbase):1: symbols (:name) are not supported; quote names: 'name'\ncreate 't', :f\n            ^",
            "1:13",
        ),
        (
            "put 't', \"row#{i}\", 'f:q', 'v'",
            "SyntaxError: (hbase):1: string interpolation #{...} is not supported\n\
             put 't', \"row#{i}\", 'f:q', 'v'\n             ^",
            "1:14",
        ),
        (
            "create scores, 'grade'",
            "NameError: undefined local variable or method `scores' for main:Object (names must be quoted: 'scores')",
            "1:8",
        ),
        (
            "frobnicate 't'",
            "NoMethodError: undefined method `frobnicate' for main:Object (type 'help' for the list of commands)",
            "1:1",
        ),
        (
            "grant 'bob', 'RW'",
            "ERROR: 'grant' is an HBase shell command that strata shell does not support",
            "1:1",
        ),
    ]);
}

#[test]
fn argument_errors_use_hbase_messages() {
    check(&[
        (
            "get",
            "ERROR: wrong number of arguments (given 0, expected 2+)",
            "1:4",
        ),
        (
            "get 't'",
            "ERROR: wrong number of arguments (given 1, expected 2+)",
            "1:8",
        ),
        (
            "put 't', 'r', 'f:q'",
            "ERROR: wrong number of arguments (given 3, expected 4..6)",
            "1:20",
        ),
        (
            "put 't', 'r', 'f:q', 'v', 1, {}, 3",
            "ERROR: wrong number of arguments (given 7, expected 4..6)",
            "1:34",
        ),
        (
            "exists 't', 'u'",
            "ERROR: wrong number of arguments (given 2, expected 1)",
            "1:13",
        ),
        (
            "drop",
            "ERROR: wrong number of arguments (given 0, expected 1)",
            "1:5",
        ),
        (
            "get_counter 't', 'r'",
            "ERROR: wrong number of arguments (given 2, expected 3)",
            "1:21",
        ),
        (
            "scan 't', {}, {}",
            "ERROR: wrong number of arguments (given 3, expected 1..2)",
            "1:15",
        ),
        (
            "list 'a', 'b'",
            "ERROR: wrong number of arguments (given 2, expected 0..1)",
            "1:11",
        ),
        (
            "version 1",
            "ERROR: wrong number of arguments (given 1, expected 0)",
            "1:9",
        ),
        (
            "create 't'",
            "ERROR: Table must have at least one column family",
            "1:1",
        ),
        (
            "create 't', {VERSIONS => 3}",
            "ERROR: Table must have at least one column family",
            "1:1",
        ),
        (
            "create 't', 5",
            "ERROR: column family specification must be a String or a Hash, got Integer 5",
            "1:13",
        ),
        (
            "create 5, 'f'",
            "ERROR: table name must be a String, got Integer 5",
            "1:8",
        ),
        (
            "create '', 'f'",
            "ERROR: table name must not be empty",
            "1:8",
        ),
        (
            "create 't', {NAME => 'f', BLOOMFILTER => 'ROWPREFIX_FIXED_LENGTH'}",
            "ERROR: BloomFilter type ROWPREFIX_FIXED_LENGTH is not supported. Use one of NONE ROW ROWCOL",
            "1:42",
        ),
        (
            "create 't', {NAME => 'f', COMPRESSION => 'lzo'}",
            "ERROR: Compression LZO is not supported. Use one of GZ NONE SNAPPY LZ4 ZSTD",
            "1:42",
        ),
        (
            "create 't', {NAME => 'f', VERSIONS => 0}",
            "ERROR: VERSIONS must be a positive Integer below 2^32, got 0",
            "1:39",
        ),
        (
            "create 't', {NAME => 'f', VERSIONS => 'x'}",
            "ERROR: VERSIONS must be an Integer, got String \"x\"",
            "1:39",
        ),
        (
            "create 't', {NAME => 'f', BLOCKSIZE => 100}",
            "ERROR: BLOCKSIZE must be between 1024 (1K) and 16777216 (16MB) bytes, got 100",
            "1:40",
        ),
        (
            "create 't', {NAME => 'f', TTL => 0}",
            "ERROR: TTL must be a positive number of seconds below 2147483647, or FOREVER, got 0",
            "1:34",
        ),
        (
            "create 't', {NAME => 'f', TTL => 'a week'}",
            "ERROR: Malformed TTL string a week: use seconds, FOREVER, or a duration like '1 DAY 2 HOURS 3 MINUTES 4 SECONDS'",
            "1:34",
        ),
        (
            "create 't', {NAME => 'f', IN_MEMORY => 'yes'}",
            "ERROR: IN_MEMORY must be true or false, got String \"yes\"",
            "1:40",
        ),
        (
            "create 't', {NAME => 'f', MIN_VERSIONS => 1}",
            "ERROR: MIN_VERSIONS is not supported by strata",
            "1:27",
        ),
        (
            "create 't', {NAME => 'f', KEEP_DELETED_CELLS => true}",
            "ERROR: KEEP_DELETED_CELLS is not supported by strata",
            "1:27",
        ),
        (
            "create 't', {NAME => 'f:x'}",
            "ERROR: Column Family names cannot contain control characters or colons: f:x",
            "1:22",
        ),
        (
            "create 't', '.f'",
            "ERROR: Column Family names cannot start with a period: .f",
            "1:13",
        ),
        (
            "create 't', {NAME => ''}",
            "ERROR: column family name must not be empty",
            "1:22",
        ),
        (
            "create 't', 'f', SPLITS => ['b', 'a', 'b']",
            "ERROR: All split keys must be unique, found duplicate: b, b",
            "1:28",
        ),
        (
            "create 't', 'f', SPLITS => ['a', '']",
            "ERROR: split key must not be empty",
            "1:34",
        ),
        (
            "create 't', 'f', SPLITS => 'a'",
            "ERROR: SPLITS must be an Array of Strings, got String \"a\"",
            "1:28",
        ),
        (
            "create 't', 'f', NUMREGIONS => 4",
            "ERROR: Split algorithm must be specified",
            "1:1",
        ),
        (
            "create 't', 'f', SPLITALGO => 'HexStringSplit'",
            "ERROR: Number of regions must be specified",
            "1:1",
        ),
        (
            "create 't', 'f', NUMREGIONS => 1, SPLITALGO => 'HexStringSplit'",
            "ERROR: NUMREGIONS must be between 2 and 65536, got 1",
            "1:32",
        ),
        (
            "create 't', 'f', NUMREGIONS => 4, SPLITALGO => 'MySplit'",
            "ERROR: split algorithm MySplit is not supported. Use one of HexStringSplit DecimalStringSplit UniformSplit",
            "1:48",
        ),
        (
            "create 't', 'f', SALT_BUCKETS => 0",
            "ERROR: SALT_BUCKETS must be between 1 and 65536, got 0",
            "1:34",
        ),
        (
            "create 't', 'f', SPLITS => ['a'], SALT_BUCKETS => 4",
            "ERROR: SPLITS and SALT_BUCKETS cannot be used together",
            "1:1",
        ),
        (
            "create 't', 'f', DURABILITY => 'LAZY'",
            "ERROR: DURABILITY LAZY is not supported. Use one of USE_DEFAULT SKIP_WAL ASYNC_WAL SYNC_WAL FSYNC_WAL",
            "1:32",
        ),
        (
            "create 't', 'f', READONLY => true",
            "ERROR: READONLY is not supported by strata",
            "1:18",
        ),
        (
            "alter 't'",
            "ERROR: There should be at least one argument but the table name",
            "1:10",
        ),
        (
            "alter 't', METHOD => 'delete'",
            "ERROR: NAME parameter missing for delete method",
            "1:22",
        ),
        (
            "alter 't', METHOD => 'frobnicate', NAME => 'f'",
            "ERROR: Unknown method: frobnicate",
            "1:22",
        ),
        (
            "alter 't', METHOD => 'table_att_unset', NAME => 'OWNER'",
            "ERROR: table attribute OWNER is not supported. Use one of MAX_FILESIZE MEMSTORE_FLUSHSIZE DURABILITY",
            "1:49",
        ),
        (
            "put 't', '', 'f:q', 'v'",
            "ERROR: row key must not be empty",
            "1:10",
        ),
        (
            "put 't', 'r', ':q', 'v'",
            "ERROR: column family name must not be empty",
            "1:15",
        ),
        (
            "put 't', 'r', 5, 'v'",
            "ERROR: column must be a String, got Integer 5",
            "1:15",
        ),
        (
            "put 't', 'r', 'f:q', nil",
            "ERROR: value must be a String, got NilClass nil",
            "1:22",
        ),
        (
            "put 't', 'r', 'f:q', 'v', -1",
            "ERROR: timestamp must be an Integer >= 0 (milliseconds since the epoch), got -1",
            "1:27",
        ),
        (
            "put 't', 'r', 'f:q', 'v', 'now'",
            "ERROR: timestamp must be an Integer, got String \"now\"",
            "1:27",
        ),
        (
            "put 't', 'r', 'f:q', 'v', {VISIBILITY => 'x'}",
            "ERROR: VISIBILITY is not supported by strata",
            "1:28",
        ),
        (
            "put 't', 'r', 'f:q', 'v', {TTL => 10}",
            "ERROR: TTL is not supported by strata",
            "1:28",
        ),
        (
            "incr 't', 'r', 'f:q', 1.5",
            "ERROR: increment must be an Integer, got Float 1.5",
            "1:23",
        ),
        (
            "get 't', 'r', {TIMESTAMP => 1, TIMERANGE => [1, 2]}",
            "ERROR: TIMESTAMP and TIMERANGE cannot be used together",
            "1:45",
        ),
        (
            "get 't', 'r', {COLUMN => 'a', COLUMNS => 'b'}",
            "ERROR: COLUMN and COLUMNS cannot be used together",
            "1:42",
        ),
        (
            "get 't', 'r', {TIMERANGE => [5, 2]}",
            "ERROR: maxStamp is smaller than minStamp",
            "1:29",
        ),
        (
            "get 't', 'r', {TIMERANGE => [-1, 2]}",
            "ERROR: Timestamp cannot be negative. minStamp:-1, maxStamp:2",
            "1:29",
        ),
        (
            "get 't', 'r', {TIMERANGE => [1]}",
            "ERROR: TIMERANGE must be an Array of two Integers [min, max], got Array [1]",
            "1:29",
        ),
        (
            "get 't', 'r', {AUTHORIZATIONS => ['x']}",
            "ERROR: AUTHORIZATIONS is not supported by strata",
            "1:16",
        ),
        (
            "get 't', 'r', {COLUMN => 'f:q:toBigDecimal'}",
            "ERROR: unknown formatter toBigDecimal: use one of toStringBinary toString toLong toInt toShort toDouble toFloat \
             toBoolean toHex",
            "1:26",
        ),
        // HBase's own words (hbase-shell table.rb): `get` shows the options hash, without the
        // keys it took out before looking at the columns; `scan` and `count` have their own.
        (
            "get 't', 'r', {COLUMN => 5}",
            "ERROR: Failed parse column argument type {\"COLUMN\"=>5}, Hash",
            "1:26",
        ),
        (
            "get 't', 'r', {COLUMNS => {}, VERSIONS => 2, FILTER => \"KeyOnlyFilter()\"}",
            "ERROR: Failed parse column argument type {\"COLUMNS\"=>{}, \"VERSIONS\"=>2}, Hash",
            "1:27",
        ),
        (
            "scan 't', {COLUMNS => {}}",
            "ERROR: COLUMNS must be specified as a String or an Array",
            "1:23",
        ),
        (
            "count 't', {COLUMN => 5}",
            "ERROR: COLUMNS must be specified as a String or an Array",
            "1:23",
        ),
        (
            "get 't', 'r', {COLUMNS => ['f:q', 5]}",
            "ERROR: COLUMNS must be a String or an Array of Strings, got Integer 5",
            "1:35",
        ),
        (
            "get 't', 'r', ['f', 1]",
            "ERROR: column must be a String or an Array of Strings, got Integer 1",
            "1:21",
        ),
        (
            "get 't', 'r', {COLUMN => 'a'}, 'x'",
            "ERROR: wrong number of arguments (given 4, expected 2..3)",
            "1:32",
        ),
        (
            "get 't', 'r', {FILTER => 5}",
            "ERROR: FILTER must be a filter String, got Integer 5",
            "1:26",
        ),
        (
            "get 't', 'r', {FILTER => ' '}",
            "ERROR: FILTER must not be empty",
            "1:26",
        ),
        (
            "scan 't', 'f'",
            "ERROR: scan options must be a Hash, got String \"f\"",
            "1:11",
        ),
        (
            "scan 't', {ROWPREFIXFILTER => 'a', STARTROW => 'b'}",
            "ERROR: ROWPREFIXFILTER and STARTROW cannot be used together",
            "1:31",
        ),
        (
            "scan 't', {LIMIT => 1.5}",
            "ERROR: LIMIT must be an Integer, got Float 1.5",
            "1:21",
        ),
        (
            "scan 't', {REVERSED => 'yes'}",
            "ERROR: REVERSED must be true or false, got String \"yes\"",
            "1:24",
        ),
        (
            "scan 't', {FORMATTER => 'toJson'}",
            "ERROR: unknown formatter toJson: use one of toStringBinary toString toLong toInt toShort toDouble toFloat toBoolean toHex",
            "1:25",
        ),
        (
            "count 't', 'x'",
            "ERROR: count options must be a Hash or an Integer interval, got String \"x\"",
            "1:12",
        ),
        (
            "count 't', INTERVAL => 0",
            "ERROR: INTERVAL must be a positive Integer, got 0",
            "1:24",
        ),
        (
            "delete 't', 'r', ''",
            "ERROR: column family name must not be empty",
            "1:18",
        ),
        (
            "deleteall 't', {CACHE => 1}",
            "ERROR: ROWPREFIXFILTER must be specified",
            "1:16",
        ),
        (
            "compact 't', 'f', 'MOB'",
            "ERROR: compaction type MOB is not supported. Use one of NORMAL",
            "1:19",
        ),
        (
            "split 't', ''",
            "ERROR: split point must not be empty",
            "1:12",
        ),
        (
            "status 'replication'",
            "ERROR: status format replication is not supported. Use one of summary simple detailed",
            "1:8",
        ),
        (
            "list_regions 't', nil, ['FOO']",
            "ERROR: FOO is not a valid column. Possible values are SERVER_NAME, REGION_NAME, START_KEY, END_KEY, SIZE, REQ, LOCALITY.",
            "1:25",
        ),
        (
            "put 't', \"r\", \"f\\xff:q\", 'v'",
            "ERROR: column family name must be valid UTF-8",
            "1:15",
        ),
    ]);
}

#[test]
fn argument_errors_name_their_command() {
    let command = |line: &str| parse_command(line).err().and_then(|error| error.command());
    assert_eq!(command("desc"), Some("describe"));
    assert_eq!(command("put 't'"), Some("put"));
    assert_eq!(command("put 't', 'r"), None);
    assert_eq!(command("nosuch"), None);
}

#[test]
fn one_bad_statement_does_not_stop_the_others() {
    let script = "put 't', 'r', 'f:q', 'v'\nget 't'\nput 't', , 'x'; scan 't'\nscan 't', {LIMIT => 1 ]; list\n";
    let results = parse_script(script);
    let summary: Vec<String> = results
        .iter()
        .map(|result| match result {
            Ok(statement) => statement.command.name().to_owned(),
            Err(error) => format!("error@{}", error.position()),
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            "put",
            "error@2:8",
            "error@3:10",
            "scan",
            "error@4:23",
            "list"
        ]
    );
    let rendered = results
        .get(1)
        .and_then(|result| result.as_ref().err())
        .map(|error| error.render(script));
    assert_eq!(
        rendered.as_deref(),
        Some("ERROR: wrong number of arguments (given 1, expected 2+)")
    );
    let rendered = results
        .get(2)
        .and_then(|result| result.as_ref().err())
        .map(|error| error.render(script));
    assert_eq!(
        rendered.as_deref(),
        Some(
            "SyntaxError: (hbase):3: syntax error, unexpected ',', expecting a value\nput 't', , 'x'; scan 't'\n         ^"
        )
    );
}

#[test]
fn an_unclosed_bracket_swallows_the_rest_like_ruby() {
    let results = parse_script("put 't', {A => 1\nget 't', 'r'\n");
    assert_eq!(results.len(), 1);
    assert!(matches!(results.first(), Some(Err(ShellError::Syntax(_)))));
}

#[test]
fn nesting_is_bounded() {
    let deep = format!(
        "put 't', 'r', 'f:q', {}1{}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let error = parse_command(&deep).err().map(|error| error.to_string());
    assert_eq!(
        error.as_deref(),
        Some("arrays, hashes and method calls nest deeper than 32 levels (at 1:54)")
    );
    let fine = format!("get 't', 'r', {}'f:q'{}", "[".repeat(32), "]".repeat(32));
    let parsed = parse_command(&fine).map_err(|error| error.render(&fine));
    assert!(parsed.is_ok(), "{parsed:?}");
}

#[test]
fn method_call_nesting_is_bounded() {
    // Each call is one level, like a bracket; 10,000 levels used to overflow the stack.
    for method in [
        "Bytes.toBytes",
        "Bytes.toBytesBinary",
        "org.apache.hadoop.hbase.util.Bytes.toBytes",
    ] {
        let deep = format!(
            "put 't', {}'x'{}, 'f:q', 'v'",
            format!("{method}(").repeat(10_000),
            ")".repeat(10_000)
        );
        let error = parse_command(&deep).err().map(|error| error.to_string());
        let column = 9 + 32 * (method.len() + 1) + method.len() + 1;
        assert_eq!(
            error,
            Some(format!(
                "arrays, hashes and method calls nest deeper than 32 levels (at 1:{column})"
            )),
            "{method}"
        );
    }
    // Calls and brackets count together.
    let mixed = format!(
        "put 't', {}'x'{}, 'f:q', 'v'",
        "Bytes.toBytes([".repeat(17),
        "])".repeat(17)
    );
    let error = parse_command(&mixed).err().map(|error| error.to_string());
    assert_eq!(
        error.as_deref(),
        Some("arrays, hashes and method calls nest deeper than 32 levels (at 1:263)")
    );
    let fine = format!(
        "put 't', {}'x'{}, 'f:q', 'v'",
        "Bytes.toBytes(".repeat(32),
        ")".repeat(32)
    );
    let parsed = parse_command(&fine).map_err(|error| error.render(&fine));
    assert!(parsed.is_ok(), "{parsed:?}");
}

#[test]
fn deep_input_of_any_shape_is_an_error_not_a_stack_overflow() {
    // Every construct that opens something, 100,000 times over. The parser must answer each
    // with an error (or, for what does not nest, a result) without recursing per level.
    let openers = [
        "[",
        "{A => ",
        "(",
        "Bytes.toBytes(",
        "Bytes.toBytesBinary(",
        "put(",
        "'a'.",
        "-",
    ];
    for opener in openers {
        let script = format!("put 't', 'r', 'f:q', {}1\nlist\n", opener.repeat(100_000));
        let results = parse_script(&script);
        assert!(
            matches!(results.first(), Some(Err(_))),
            "{opener}: {:?}",
            results.first().map(|result| result.as_ref().map(|_| ()))
        );
    }
}

#[test]
fn parse_command_wants_exactly_one_statement() {
    let error = parse_command("list; list")
        .err()
        .map(|error| error.to_string());
    assert_eq!(
        error.as_deref(),
        Some("syntax error, unexpected another statement, expecting end-of-input (at 1:7)")
    );
    let error = parse_command("  # only a comment")
        .err()
        .map(|error| error.to_string());
    assert_eq!(
        error.as_deref(),
        Some("syntax error, unexpected end-of-input, expecting a command name (at 1:19)")
    );
}
