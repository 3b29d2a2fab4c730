//! Whole scripts: scenario 5 of SCENARIOS.md, multi-line statements, and the interactive
//! shell's "is this statement finished?" check.

// Marks the helpers below as test code, so the workspace's allow-*-in-tests lint settings apply.
#![cfg(test)]

use strata_tools::shell::{
    CellColumn, ColumnSpec, Command, CreateTable, Delete, DeleteColumn, FamilySpec, Get, PreSplit,
    Put, Scan, ScanSpec, TableOptions, TimeFilter, needs_more_input, parse_script,
};

fn commands(script: &str) -> Vec<Command> {
    parse_script(script)
        .into_iter()
        .map(|result| result.unwrap_or_else(|error| panic!("{}", error.render(script))))
        .map(|statement| {
            assert!(
                statement.warnings.is_empty(),
                "unexpected warnings {:?}",
                statement.warnings
            );
            statement.command
        })
        .collect()
}

fn put(row: &str, family: &str, qualifier: &str, value: &str) -> Command {
    Command::Put(Put {
        table: "scores".to_owned(),
        row: row.as_bytes().to_vec(),
        column: CellColumn::new(family, qualifier.as_bytes()),
        value: value.as_bytes().to_vec(),
        timestamp: None,
    })
}

fn get(row: &str) -> Get {
    Get {
        table: "scores".to_owned(),
        row: row.as_bytes().to_vec(),
        columns: Vec::new(),
        time: None,
        versions: None,
        filter: None,
        formatter: None,
        max_length: None,
    }
}

/// The script of scenario 5, as SCENARIOS.md gives it.
const SCENARIO_5: &str = "\
create 'scores', 'grade', 'course'
list
describe 'scores'
put 'scores', 'Tom', 'grade:', '1'
put 'scores', 'Tom', 'course:math', '87'
put 'scores', 'Tom', 'course:art', '97'
put 'scores', 'Jerry', 'grade:', '2'
put 'scores', 'Jerry', 'course:math', '100'
put 'scores', 'Jerry', 'course:art', '80'
get 'scores', 'Tom'
scan 'scores'
scan 'scores', {COLUMNS => ['course:']}
";

#[test]
fn scenario_5_parses_to_the_expected_commands() {
    let scores = || "scores".to_owned();
    assert_eq!(
        commands(SCENARIO_5),
        vec![
            Command::Create(CreateTable {
                table: scores(),
                families: vec![FamilySpec::named("grade"), FamilySpec::named("course")],
                pre_split: PreSplit::None,
                options: TableOptions::default(),
            }),
            Command::List { pattern: None },
            Command::Describe { table: scores() },
            put("Tom", "grade", "", "1"),
            put("Tom", "course", "math", "87"),
            put("Tom", "course", "art", "97"),
            put("Jerry", "grade", "", "2"),
            put("Jerry", "course", "math", "100"),
            put("Jerry", "course", "art", "80"),
            Command::Get(get("Tom")),
            Command::Scan(Scan {
                table: scores(),
                spec: ScanSpec::default()
            }),
            Command::Scan(Scan {
                table: scores(),
                spec: ScanSpec {
                    columns: vec![ColumnSpec::column("course", b"")],
                    ..ScanSpec::default()
                },
            }),
        ]
    );
}

#[test]
fn scenario_5_versions_time_ranges_and_deletes() {
    let script = "\
# A family that keeps three versions.
alter 'scores', NAME => 'course', VERSIONS => 3
put 'scores', 'Tom', 'course:math', '90', 1000
put 'scores', 'Tom', 'course:math', '95', 2000
get 'scores', 'Tom', {COLUMN => 'course:math', VERSIONS => 3}
get 'scores', 'Tom', {COLUMN => 'course:math', TIMERANGE => [0, 1500], VERSIONS => 3}
delete 'scores', 'Tom', 'course:math', 2000
";
    let parsed = commands(script);
    assert_eq!(parsed.len(), 6);
    assert_eq!(parsed.first().map(Command::name), Some("alter"));
    assert_eq!(
        parsed.get(3),
        Some(&Command::Get(Get {
            columns: vec![ColumnSpec::column("course", b"math")],
            versions: Some(3),
            ..get("Tom")
        }))
    );
    assert_eq!(
        parsed.get(4),
        Some(&Command::Get(Get {
            columns: vec![ColumnSpec::column("course", b"math")],
            versions: Some(3),
            time: Some(TimeFilter::Range { min: 0, max: 1500 }),
            ..get("Tom")
        }))
    );
    assert_eq!(
        parsed.get(5),
        Some(&Command::Delete(Delete {
            table: "scores".to_owned(),
            row: b"Tom".to_vec(),
            column: DeleteColumn {
                family: "course".to_owned(),
                qualifier: Some(b"math".to_vec())
            },
            timestamp: Some(2000),
        }))
    );
}

#[test]
fn scenario_5_file_catalogue_page_scan() {
    // userId (6 digits) + createTime (8 digits) + fileId (6 digits), one page at a time.
    let script = r#"
create 'files', {NAME => 'info', VERSIONS => 1}
scan 'files', {STARTROW => '00000120150401', STOPROW => '00000120150501',
               FILTER => "SingleColumnValueFilter('info', 'category', =, 'binary:report') AND PageFilter(10)"}
"#;
    let parsed = commands(script);
    assert_eq!(parsed.len(), 2);
    assert_eq!(
        parsed.get(1),
        Some(&Command::Scan(Scan {
            table: "files".to_owned(),
            spec: ScanSpec {
                start_row: Some(b"00000120150401".to_vec()),
                stop_row: Some(b"00000120150501".to_vec()),
                filter: Some(
                    b"SingleColumnValueFilter('info', 'category', =, 'binary:report') AND PageFilter(10)".to_vec()
                ),
                ..ScanSpec::default()
            },
        }))
    );
}

#[test]
fn statements_span_lines_while_open() {
    let script = "create 'scores',\n  {NAME => 'grade',\n   VERSIONS => 3},\n  'course'\nlist\n";
    let parsed = parse_script(script);
    assert_eq!(parsed.len(), 2);
    let spans: Vec<(usize, usize)> = parsed
        .iter()
        .filter_map(|result| result.as_ref().ok())
        .map(|statement| (statement.span.start, statement.span.end))
        .collect();
    let first_end = script
        .find("'course'")
        .map_or(0, |start| start + "'course'".len());
    let list_start = script.find("list").unwrap_or(0);
    assert_eq!(spans, vec![(0, first_end), (list_start, list_start + 4)]);
    let multi_line_string = "scan 't', {FILTER => \"\n  PrefixFilter('a')\"}\nlist";
    assert_eq!(commands(multi_line_string).len(), 2);
    let semicolons = "list; list;list\n\n# comment only\n  ;  \nversion";
    assert_eq!(commands(semicolons).len(), 4);
    assert!(commands("").is_empty());
    assert!(commands("# nothing\n\n").is_empty());
    assert_eq!(commands("list\r\nversion\r\n").len(), 2);
}

#[test]
fn interactive_input_knows_when_a_statement_is_unfinished() {
    let unfinished = [
        "put 't', 'r",
        "put 't', \"r\\\"",
        "create 't', {NAME => 'f'",
        "create 't', {NAME => 'f'},",
        "get 't', 'r', [",
        "get('t',",
        "alter 't', NAME =>",
        "put 't', 'r', \\",
        "put 't', 'r', \\\n",
        "put 't', 'r', \\\r\n  ",
        "put 't', 'r', \\  ",
        "scan 't', {FILTER => \"\n",
        "put 't', 'r', 'f:q', Bytes.",
    ];
    for input in unfinished {
        assert!(needs_more_input(input), "{input:?} should need more input");
    }
    let finished = [
        "",
        "list",
        "put 't', 'r', 'f:q', 'v'",
        "put 't', 'r', 'f:q', 'v' # a comment, with a comma,",
        "put 't', 'r', 'f:q', 'a\\\\'",
        "create 't', {NAME => 'f'}\n",
        "put 't', , 'v'",
        "scan 't', {LIMIT => 1]]",
        "put 't', 'r', 'f:q', \"\\\\\"",
        "list # a comment ending in a backslash \\",
        "list # a comment ending in a backslash \\\n",
        "put 't', 'r', 'f:q', 'a\\\n'",
    ];
    for input in finished {
        assert!(!needs_more_input(input), "{input:?} should be complete");
    }
}
