//! `strata sql`: statements from -e and standard input, the three output formats, errors and
//! exit codes.

#![cfg(test)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use strata::{Db, FamilyDescriptor, Put, TableDescriptor};

fn strata() -> Command {
    Command::new(env!("CARGO_BIN_EXE_strata"))
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A database with the student scores of the shell's first contact.
fn scores(dir: &Path) {
    let db = Db::open_default(dir).unwrap();
    let t = db
        .create_table(
            TableDescriptor::new("scores")
                .family(FamilyDescriptor::new("grade"))
                .family(FamilyDescriptor::new("course")),
        )
        .unwrap();
    t.put(
        &Put::new("Tom")
            .add_at("grade", "", 1, "1")
            .add_at("course", "math", 1, "87"),
    )
    .unwrap();
    t.put(
        &Put::new("Jerry")
            .add_at("grade", "", 1, "2")
            .add_at("course", "math", 1, "100"),
    )
    .unwrap();
    db.close().unwrap();
}

fn sql(data: &Path, args: &[&str]) -> Output {
    strata()
        .args(["sql", "--data"])
        .arg(data)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn statements_from_e_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    scores(dir.path());
    let query = "SELECT CAST(row AS VARCHAR) AS student, CAST(value AS VARCHAR) AS grade \
                 FROM scores WHERE family = 'grade' ORDER BY student";
    let table = sql(dir.path(), &["-e", query]);
    assert!(table.status.success(), "{}", stderr(&table));
    assert_eq!(
        stdout(&table),
        "+---------+-------+\n| student | grade |\n+---------+-------+\n| Jerry   | 2     |\n| Tom     | 1     |\n+---------+-------+\n2 row(s)\n"
    );
    let csv = sql(dir.path(), &["--format", "csv", "-e", query]);
    assert_eq!(stdout(&csv), "student,grade\nJerry,2\nTom,1\n");
    let json = sql(dir.path(), &["--format", "json", "-e", query]);
    assert_eq!(
        stdout(&json),
        "[{\"student\":\"Jerry\",\"grade\":\"2\"},{\"student\":\"Tom\",\"grade\":\"1\"}]\n"
    );
    // Binary values print as HBase prints bytes.
    let raw = sql(
        dir.path(),
        &[
            "--format",
            "csv",
            "-e",
            "SELECT row FROM scores WHERE family = 'grade' ORDER BY row",
        ],
    );
    assert_eq!(stdout(&raw), "row\nJerry\nTom\n");
}

#[test]
fn a_script_on_standard_input_runs_every_statement() {
    let dir = tempfile::tempdir().unwrap();
    scores(dir.path());
    let script = "CREATE EXTERNAL TABLE s (student VARCHAR NOT NULL, grade VARCHAR NOT NULL, math VARCHAR) \
                    STORED AS STRATA LOCATION 'scores' OPTIONS ('mapping' ':key,grade:,course:math');\n\
                  INSERT INTO s VALUES ('Bob', '3', '60');\n\
                  SELECT student, math FROM s ORDER BY student;\n";
    let mut child = strata()
        .args(["sql", "--format", "csv", "--data"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "count\n1\nstudent,math\nBob,60\nJerry,100\nTom,87\n"
    );
    // The mapping and the row were stored: a new process sees them.
    let again = sql(
        dir.path(),
        &["--format", "csv", "-e", "SELECT count(*) AS n FROM s"],
    );
    assert_eq!(stdout(&again), "n\n3\n");
}

#[test]
fn a_failed_statement_is_reported_and_the_rest_still_run() {
    let dir = tempfile::tempdir().unwrap();
    scores(dir.path());
    let output = sql(
        dir.path(),
        &[
            "--format",
            "csv",
            "-e",
            "SELECT * FROM nope; SELECT count(*) AS n FROM scores",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("Error: ") && stderr(&output).contains("nope"),
        "{}",
        stderr(&output)
    );
    assert_eq!(stdout(&output), "n\n4\n");
    let syntax = sql(dir.path(), &["-e", "SELEC 1"]);
    assert_eq!(syntax.status.code(), Some(1));
    assert!(stderr(&syntax).contains("SQL error"), "{}", stderr(&syntax));
}
