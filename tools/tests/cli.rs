//! The `strata` binary: `shell` with -e, standard input and --timestamps, exit codes, and
//! the on-disk tools `hfile`, `wal`, `verify` (including a damaged HFile) and `regions`.

#![cfg(test)]

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use strata::{Db, DbOptions, FamilyDescriptor, Put, TableDescriptor};

fn strata() -> Command {
    Command::new(env!("CARGO_BIN_EXE_strata"))
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn shell(data: &Path, statements: &str) -> Output {
    strata()
        .args(["shell", "--data"])
        .arg(data)
        .args(["-e", statements])
        .output()
        .unwrap()
}

fn shell_stdin(data: &Path, script: impl AsRef<[u8]>) -> Output {
    with_stdin(strata().args(["shell", "--data"]).arg(data), script)
}

/// Runs `command` with `input` on its standard input.
fn with_stdin(command: &mut Command, input: impl AsRef<[u8]>) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_ref())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The HFiles of a database, sorted.
fn hfiles(data: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data.join("data"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "hfile")
        })
        .collect();
    files.sort();
    files
}

/// Table `t` (family `f`) holding `puts`, closed without a flush: the rows stay in the WAL.
fn logged(dir: &Path, puts: &[Put]) {
    let db = Db::open(
        dir,
        DbOptions {
            flush_on_close: false,
            ..DbOptions::default()
        },
    )
    .unwrap();
    let table = db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap();
    for put in puts {
        table.put(put).unwrap();
    }
    db.close().unwrap();
}

#[test]
fn shell_runs_statements_given_with_e() {
    let dir = tempfile::tempdir().unwrap();
    let output = shell(
        dir.path(),
        "create 't', 'f'; put 't', 'r', 'f:q', 'v'\nscan 't'",
    );
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    assert!(text.starts_with("Created table t\nTook "), "{text}");
    assert!(text.contains("=> Hbase::Table - t\n"), "{text}");
    assert!(
        text.contains("ROW  COLUMN+CELL\n r column=f:q, timestamp="),
        "{text}"
    );
    assert!(text.contains(", value=v\n1 row(s)\nTook "), "{text}");
    // The data is there for the next run.
    let output = shell(dir.path(), "get 't', 'r'");
    assert!(stdout(&output).contains(" f:q timestamp="), "{output:?}");
}

#[test]
fn a_script_with_an_error_runs_on_and_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let output = shell_stdin(
        dir.path(),
        "create 't', 'f'\nscan 'nope'\nput 't', 'r', 'f:q'\nlist\n",
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("\nERROR: Unknown table nope!\n\nFor usage try 'help \"scan\"'\n"),
        "{text}"
    );
    assert!(
        text.contains("ERROR: wrong number of arguments (given 3, expected 4..6)"),
        "{text}"
    );
    assert!(text.ends_with("=> [\"t\"]\n"), "{text}");
    let output = shell_stdin(dir.path(), "list\nexists 't'\n");
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn a_syntax_error_makes_the_exit_code_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let output = shell(dir.path(), "put 't', 'r");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(stdout(&output).starts_with("SyntaxError: (hbase):1: unterminated string"));
}

#[test]
fn timestamps_print_as_iso_date_times_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let output = strata()
        .args(["shell", "--timestamps", "iso", "--data"])
        .arg(dir.path())
        .args([
            "-e",
            "create 't', 'f'; put 't', 'r', 'f:q', 'v', 86400000; get 't', 'r'",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(stdout(&output).contains(" f:q timestamp=1970-01-02T00:00, value=v\n"));
}

#[test]
fn the_default_data_directory_is_strata_data() {
    let dir = tempfile::tempdir().unwrap();
    let output = strata()
        .current_dir(dir.path())
        .args(["shell", "-e", "create 't', 'f'"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(dir.path().join("strata-data").join("CURRENT").exists());
}

#[test]
fn hfile_prints_the_summary_and_the_cells() {
    let dir = tempfile::tempdir().unwrap();
    let output = shell(
        dir.path(),
        "create 't', 'f'; put 't', 'r1', 'f:q', 'v1', 10; put 't', 'r2', 'f:q', \"\\x00\", 20; delete 't', 'r1', 'f:q', 10; flush 't'",
    );
    assert!(output.status.success(), "{output:?}");
    let files = hfiles(dir.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let output = strata()
        .arg("hfile")
        .arg(&files[0])
        .arg("--cells")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    for expected in [
        "HFile ",
        "  family:        f\n",
        "  first row:     r1\n",
        "  last row:      r2\n",
        "  rows:          2\n",
        "  cells:         3 (1 delete markers)\n",
        "  timestamps:    10 .. 20\n",
        "  index levels:  1\n",
        "  bloom:         ROW, 2 keys\n",
        "  sequences:     1 .. 3\n",
        "cells:\n",
        "K: r1/f:q/10/Delete/vlen=0/seqid=3 V: \n",
        "K: r1/f:q/10/Put/vlen=2/seqid=1 V: v1\n",
        "K: r2/f:q/20/Put/vlen=1/seqid=2 V: \\x00\n",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    let output = strata().arg("hfile").arg(&files[0]).output().unwrap();
    assert!(!stdout(&output).contains("cells:\n"));
}

#[test]
fn wal_lists_segments_records_and_how_they_end() {
    let dir = tempfile::tempdir().unwrap();
    logged(
        dir.path(),
        &[
            Put::new("a").add("f", "q", "1"),
            Put::new("b").add("f", "q", "2").add("f", "r", "3"),
        ],
    );
    let output = strata().arg("wal").arg(dir.path()).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains("segment(s)\n"), "{text}");
    assert!(
        text.contains("2 record(s), sequences 1..2, sealed\n"),
        "{text}"
    );
    assert!(
        text.contains(": sequence 1, region 1, row a, 1 cell(s), "),
        "{text}"
    );
    assert!(
        text.contains(": sequence 2, region 1, row b, 2 cell(s), "),
        "{text}"
    );
}

#[test]
fn verify_finds_no_damage_in_a_healthy_database() {
    let dir = tempfile::tempdir().unwrap();
    shell(
        dir.path(),
        "create 't', 'f'; put 't', 'r', 'f:q', 'v'; flush 't'",
    );
    let output = strata().arg("verify").arg(dir.path()).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("HFiles: 1 file(s), 1 block(s) checked\n"),
        "{text}"
    );
    assert!(text.ends_with("verify: no damage found\n"), "{text}");
}

#[test]
fn verify_reports_a_damaged_hfile_with_its_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    shell(
        dir.path(),
        "create 't', 'f'; put 't', 'r', 'f:q', 'value'; flush 't'",
    );
    let files = hfiles(dir.path());
    let damaged = &files[0];
    // Flip a byte inside the first data block, which starts at offset 0.
    let mut bytes = std::fs::read(damaged).unwrap();
    bytes[8] ^= 0xFF;
    std::fs::write(damaged, &bytes).unwrap();
    let output = strata().arg("verify").arg(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    let expected = format!("DAMAGE: corruption in {} at offset 0: ", damaged.display());
    assert!(text.contains(&expected), "missing {expected:?} in\n{text}");
    assert!(text.ends_with("verify: 1 problem(s) found\n"), "{text}");
}

#[test]
fn verify_reports_a_truncated_hfile_even_when_the_database_does_not_open() {
    let dir = tempfile::tempdir().unwrap();
    shell(
        dir.path(),
        "create 't', 'f'; put 't', 'r', 'f:q', 'v'; flush 't'",
    );
    let files = hfiles(dir.path());
    let bytes = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], &bytes[..bytes.len() - 10]).unwrap();
    let output = strata().arg("verify").arg(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains(&files[0].display().to_string()), "{text}");
    assert!(text.contains("offset"), "{text}");
}

#[test]
fn regions_lists_boundaries_sizes_and_files() {
    let dir = tempfile::tempdir().unwrap();
    shell(
        dir.path(),
        "create 't', 'f', SPLITS => ['m']; put 't', 'a', 'f:q', 'v'; put 't', 'x', 'f:q', 'v'; flush 't'; put 't', 'b', 'f:q', 'v'",
    );
    let output = strata()
        .arg("regions")
        .arg(dir.path())
        .arg("t")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "t (ENABLED), 2 region(s)", "{text}");
    assert!(
        lines[1].starts_with(" ID | START_KEY | END_KEY | MEMSTORE_BYTES |"),
        "{text}"
    );
    // Closing the shell flushed the memstores: region 1 has two files, region 2 one.
    assert!(lines[3].contains("|           |       m |"), "{text}");
    assert!(lines[3].contains(" 2/0/0/0/0/0/0 |"), "{text}");
    assert!(lines[4].contains("|         m |         |"), "{text}");
    assert!(lines[4].contains(" 1/0/0/0/0/0/0 |"), "{text}");
    let output = strata()
        .arg("regions")
        .arg(dir.path())
        .arg("nope")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("table 'nope' does not exist"));
}

#[test]
fn tools_refuse_what_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("x.hfile");
    std::fs::write(&garbage, b"not an hfile").unwrap();
    let output = strata().arg("hfile").arg(&garbage).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let output = strata()
        .arg("verify")
        .arg(dir.path().join("missing"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

/// Every file under `dir` with its bytes.
fn files_of(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                files.insert(entry.path(), std::fs::read(entry.path()).unwrap());
            }
        }
    }
    files
}

/// Issue 12, item 1: `verify` on a damaged manifest reports it, exits 1 and deletes nothing
/// (it used to open the database, roll the manifest back and delete table b's HFile).
#[test]
fn verify_reports_a_damaged_manifest_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    shell(
        dir.path(),
        "create 'a', 'f'; put 'a', 'r', 'f:q', '1'; create 'b', 'f'; put 'b', 'r', 'f:q', '2'",
    );
    // Reopen once: the manifest becomes a snapshot whose last edit describes b.
    shell(dir.path(), "list");
    let current = std::fs::read_to_string(dir.path().join("CURRENT")).unwrap();
    let manifest = dir.path().join(current.trim_end());
    let mut bytes = std::fs::read(&manifest).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&manifest, &bytes).unwrap();
    let before = files_of(dir.path());
    let output = strata().arg("verify").arg(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains(&format!("DAMAGE: corruption in {}", manifest.display())),
        "{text}"
    );
    // Without a readable manifest every HFile is still checked on its own.
    assert!(text.contains("HFiles: 2 file(s)"), "{text}");
    assert_eq!(files_of(dir.path()), before, "verify changed the directory");
    // The shell refuses to open it too, and also changes nothing.
    let output = shell(dir.path(), "scan 'b'");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("corruption in"),
        "{output:?}"
    );
    assert_eq!(
        files_of(dir.path()),
        before,
        "a refused open changed the directory"
    );
}

/// Issue 12, item 2: an acknowledged put's record damaged at the end of the newest WAL
/// segment is reported by `verify` (with file and offset) and `wal`, changing nothing.
#[test]
fn verify_and_wal_report_a_damaged_last_record() {
    let dir = tempfile::tempdir().unwrap();
    logged(
        dir.path(),
        &[
            Put::new("a").add("f", "q", "1"),
            Put::new("b").add("f", "q", "2"),
        ],
    );
    let segment = strata::inspect::wal_segments(dir.path()).unwrap().remove(0);
    let last = segment.records.last().unwrap();
    let mut bytes = std::fs::read(&segment.path).unwrap();
    bytes[last.offset as usize..last.offset as usize + 8].fill(0);
    std::fs::write(&segment.path, &bytes).unwrap();
    let before = files_of(dir.path());
    let output = strata().arg("verify").arg(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let expected = format!(
        "DAMAGE: corruption in {} at offset {}: ",
        segment.path.display(),
        last.offset
    );
    assert!(stdout(&output).contains(&expected), "{}", stdout(&output));
    let output = strata().arg("wal").arg(dir.path()).output().unwrap();
    assert!(
        stdout(&output).contains(&format!("DAMAGED at offset {}", last.offset)),
        "{}",
        stdout(&output)
    );
    assert_eq!(
        files_of(dir.path()),
        before,
        "the tools changed the directory"
    );
}

/// `regions` opens read-only: the WAL it replays stays as it was, nothing is flushed.
#[test]
fn regions_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    logged(dir.path(), &[Put::new("a").add("f", "q", "1")]);
    let before = files_of(dir.path());
    let output = strata()
        .arg("regions")
        .arg(dir.path())
        .arg("t")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(files_of(dir.path()), before);
}

/// 10,000 nested `Bytes.toBytes(...)` calls used to overflow the stack and abort the shell.
#[test]
fn deeply_nested_calls_are_a_syntax_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!(
        "{}'x'{}",
        "Bytes.toBytes(".repeat(5_000) + &"Bytes.toBytesBinary(".repeat(5_000),
        ")".repeat(10_000)
    );
    let script = format!(
        "create 't', 'f'\nput 't', {deep}, 'f:q', 'v'\nput 't', 'r', 'f:q', 'v'\ncount 't'\n"
    );
    let output = shell_stdin(dir.path(), &script);
    let text = stdout(&output);
    // Exit code 1 (a statement failed), not a signal.
    assert_eq!(output.status.code(), Some(1), "{:?}", output.status);
    assert!(
        text.contains(
            "SyntaxError: (hbase):2: arrays, hashes and method calls nest deeper than 32 levels\n"
        ),
        "{}",
        text.get(..300).unwrap_or(&text)
    );
    let end = text.get(text.len().saturating_sub(100)..).unwrap_or(&text);
    assert!(
        end.ends_with("\n=> 1\n"),
        "the statements after it ran: {end}"
    );
}

/// A script is read as bytes: the statement with bytes that are not UTF-8 fails, naming its
/// line, and the others run (it used to be refused whole, before any statement ran).
#[test]
fn a_script_line_that_is_not_utf8_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let script: &[u8] = b"create 't', 'f'\n\
        put 't', 'r1', 'f:q', 'v1'\n\
        put 't', 'r2', 'f:q', 'caf\xE9'\n\
        put 't', 'r3', 'f:q', \"caf\\xE9\"\n\
        count 't'\n";
    let output = shell_stdin(dir.path(), script);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    let error = format!(
        "SyntaxError: (hbase):3: invalid multibyte char (UTF-8): write bytes that are not \
         UTF-8 as \\xNN escapes in a double-quoted string, such as \"caf\\xE9\"\n\
         put 't', 'r2', 'f:q', 'caf\u{FFFD}'\n{}^\n",
        " ".repeat(26)
    );
    assert!(text.contains(&error), "{text}");
    assert!(text.contains("\n2 row(s)\n"), "{text}");
    let output = shell(dir.path(), "get 't', 'r3'");
    assert!(stdout(&output).contains(", value=caf\\xE9\n"), "{output:?}");

    // The same through -e, whose argument is bytes too.
    let output = strata()
        .args(["shell", "--data"])
        .arg(dir.path())
        .arg("-e")
        .arg(OsStr::from_bytes(
            b"list; put 't', 'r4', 'f:q', '\xFF'; count 't'",
        ))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("SyntaxError: (hbase):1: invalid multibyte char (UTF-8)"),
        "{text}"
    );
    assert!(text.contains("\n2 row(s)\n"), "{text}");
}

/// Issue 12, item 4: a damaged WAL refuses to open; `--wal-recovery point-in-time` is the
/// operator's way in, and says what it discarded.
#[test]
fn the_shell_refuses_a_damaged_wal_unless_told_to_recover_point_in_time() {
    let dir = tempfile::tempdir().unwrap();
    logged(
        dir.path(),
        &["a", "b", "c"].map(|row| Put::new(row).add("f", "q", row)),
    );
    let segment = strata::inspect::wal_segments(dir.path()).unwrap().remove(0);
    let damaged = segment.records[1].offset;
    let mut bytes = std::fs::read(&segment.path).unwrap();
    bytes[damaged as usize + 20] ^= 0x08;
    std::fs::write(&segment.path, &bytes).unwrap();

    let output = shell(dir.path(), "scan 't'");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(stderr.contains(&format!("at offset {damaged}")), "{stderr}");
    let output = strata()
        .args(["shell", "--wal-recovery", "point-in-time", "--data"])
        .arg(dir.path())
        .args(["-e", "scan 't'"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(stderr.contains("point-in-time WAL recovery"), "{stderr}");
    assert!(stderr.contains("wal/damaged/"), "{stderr}");
    let text = stdout(&output);
    assert!(
        text.contains("1 row(s)"),
        "only the row before the damage: {text}"
    );
}

/// `strata bulkload`: unsorted TSV from standard input, CSV from a file, sorted streams,
/// files built first and loaded later, and a bad line named by its number.
#[test]
fn bulkload_builds_and_loads_files() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("db");
    let created = shell(&data, "create 't', 'f', {SPLITS => ['m']}");
    assert!(created.status.success(), "{created:?}");
    let bulkload = |args: &[&str], stdin: &str| {
        with_stdin(
            strata()
                .args(["bulkload", "--data"])
                .arg(&data)
                .args(["--table", "t"])
                .args(args),
            stdin,
        )
    };
    // Unsorted TSV: sorted in memory; the later of two lines with one key wins.
    let loaded = bulkload(
        &[],
        "z1\tf:q\t10\tlast\n# a comment\na1\tf:q\t10\tfirst\na1\tf:r\t10\tx\\x41\nz1\tf:q\t10\tlater\n",
    );
    assert!(loaded.status.success(), "{loaded:?}");
    let text = stdout(&loaded);
    assert!(text.contains("built 2 file(s)"), "{text}");
    assert!(text.contains("loaded 2 file(s) into 2 region(s)"), "{text}");
    let scan = stdout(&shell(&data, "scan 't'"));
    assert!(
        scan.contains("a1 column=f:r, timestamp=10, value=xA"),
        "{scan}"
    );
    assert!(
        scan.contains("z1 column=f:q, timestamp=10, value=later"),
        "{scan}"
    );
    // CSV from a file, sorted, built into a directory and loaded later.
    let csv = dir.path().join("cells.csv");
    std::fs::write(&csv, "\"b,1\",f:q,20,\"say \"\"hi\"\"\"\nc1,f:q,20,plain\n").unwrap();
    let out = dir.path().join("out");
    let built = strata()
        .args(["bulkload", "--data"])
        .arg(&data)
        .args([
            "--table",
            "t",
            "--format",
            "csv",
            "--sorted",
            "--build-only",
            "--out",
        ])
        .arg(&out)
        .arg(&csv)
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    let files: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert_eq!(files.len(), 1);
    // `strata hfile` shows where a bulk file comes from.
    let hfile = strata()
        .arg("hfile")
        .arg(files[0].as_ref().unwrap().path())
        .arg("--cells")
        .output()
        .unwrap();
    let described = stdout(&hfile);
    assert!(
        described.contains("bulk file:     table 't'"),
        "{described}"
    );
    assert!(described.contains("seqid=0"), "{described}");
    let ingested = strata()
        .args(["bulkload", "--data"])
        .arg(&data)
        .args(["--table", "t", "--files"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(ingested.status.success(), "{ingested:?}");
    let scan = stdout(&shell(&data, "scan 't'"));
    assert!(
        scan.contains("b,1 column=f:q, timestamp=20, value=say \"hi\""),
        "{scan}"
    );
    // A sorted stream out of order: the line is named, nothing is loaded.
    let refused = bulkload(&["--sorted"], "k2\tf:q\t1\tv\nk1\tf:q\t1\tv\n");
    assert!(!refused.status.success());
    let error = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(error.contains("line 2:"), "{error}");
    assert!(error.contains("does not come after"), "{error}");
    let bad = bulkload(&[], "k1\tnofamily:q\t1\tv\n");
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("line 1:"),
        "{bad:?}"
    );
    let count = stdout(&shell(&data, "count 't'"));
    assert!(count.contains("4 row(s)"), "{count}");
}
