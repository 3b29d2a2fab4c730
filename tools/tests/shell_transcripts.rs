//! Data-driven shell tests: each `scripts/NAME.hsh` runs through a shell session on a fresh
//! database, and its transcript (each statement echoed as `strata> ...`, then what the shell
//! printed) must equal `scripts/NAME.out`.
//!
//! Runs are deterministic: the database clock starts at 1700000000000 ms (2023-11-14T22:13:20
//! UTC) and moves 1 ms before each statement; `Took` timings print as `Took X.XXXX seconds`
//! and the I/O back end `status` reports as `ioBackend=X`.
//! Regenerate the expected files on purpose, after checking the new output is right:
//!
//! ```text
//! STRATA_REGENERATE=1 cargo test -p strata-tools --test shell_transcripts
//! ```
//!
//! Lines starting with `#!` are directives of the test, not shell input:
//! `#! reopen` closes and reopens the database, `#! advance N` moves the clock N ms,
//! `#! timestamps iso|millis` switches how timestamps print, `#! segment` only starts a new
//! piece of input (as if typed separately, so an unbalanced quote cannot swallow the rest).
//!
//! With `STRATA_KEEP_DATA=DIR` each script's database directory is copied to `DIR/NAME` after
//! the run, so that the bytes on disk of two builds can be compared
//! (`bench/disk_fingerprint.sh`).

#![cfg(test)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata::{Clock, DbOptions, ManualClock};
use strata_tools::exec::{ExecOptions, Executor, UserIdentity};
use strata_tools::session::{Flow, Session};
use strata_tools::shell::{TableLayout, TimestampFormat};

/// The clock reading when a script starts.
const START_MS: i64 = 1_700_000_000_000;

fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts")
}

struct Run {
    dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    timestamps: TimestampFormat,
    session: Option<Session>,
}

impl Run {
    fn new() -> Run {
        let mut run = Run {
            dir: tempfile::tempdir().unwrap(),
            clock: Arc::new(ManualClock::new(START_MS)),
            timestamps: TimestampFormat::EpochMillis,
            session: None,
        };
        run.open();
        run
    }

    fn open(&mut self) {
        let clock: Arc<dyn Clock> = self.clock.clone();
        // The default I/O back end, so that CI's two passes (io_uring, then STRATA_IO=sync)
        // run the scripts on both.
        let options = DbOptions {
            clock,
            ..DbOptions::default()
        };
        let mut executor = Executor::open(
            self.dir.path(),
            options,
            ExecOptions {
                timestamps: self.timestamps,
                layout: TableLayout::new(0),
            },
        )
        .unwrap();
        // `whoami` must not depend on who runs the tests.
        executor.set_user(UserIdentity::new("strata", &["strata", "hbase"]));
        let mut session = Session::new(executor).with_echo(true);
        let tick = self.clock.clone();
        session.before_each_statement(move || tick.advance(1));
        self.session = Some(session);
    }

    fn close(&mut self) {
        if let Some(session) = self.session.take() {
            session.into_executor().close().unwrap();
        }
    }

    fn directive(&mut self, directive: &str) {
        let words: Vec<&str> = directive.split_whitespace().collect();
        match words.as_slice() {
            ["reopen"] => {
                self.close();
                self.open();
            }
            ["segment"] => {}
            ["advance", millis] => self.clock.advance(millis.parse().unwrap()),
            ["timestamps", format] => {
                self.timestamps = match *format {
                    "iso" => TimestampFormat::Iso8601,
                    "millis" => TimestampFormat::EpochMillis,
                    other => panic!("unknown timestamp format {other}"),
                };
                let session = self.session.as_mut().unwrap();
                let options = session.executor().options();
                session.executor_mut().set_options(ExecOptions {
                    timestamps: self.timestamps,
                    ..options
                });
            }
            _ => panic!("unknown directive #! {directive}"),
        }
    }
}

/// Copies every file under `from` into `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs a script and returns its normalized transcript.
fn transcript(name: &str, script: &str) -> String {
    let mut run = Run::new();
    let mut out = Vec::new();
    let mut segment = String::new();
    let mut exited = false;
    for line in script.split_inclusive('\n') {
        if let Some(directive) = line.strip_prefix("#!") {
            if !exited {
                let flow = run
                    .session
                    .as_mut()
                    .unwrap()
                    .run_source(&segment, &mut out)
                    .unwrap();
                exited = flow == Flow::Exit;
            }
            segment.clear();
            out.extend_from_slice(line.as_bytes());
            if !exited {
                run.directive(directive.trim());
            }
        } else {
            segment.push_str(line);
        }
    }
    if !exited {
        run.session
            .as_mut()
            .unwrap()
            .run_source(&segment, &mut out)
            .unwrap();
    }
    run.close();
    if let Some(keep) = std::env::var_os("STRATA_KEEP_DATA") {
        let target = Path::new(&keep).join(name);
        let _ = std::fs::remove_dir_all(&target);
        copy_tree(run.dir.path(), &target);
    }
    let text = String::from_utf8(out).unwrap();
    let took = regex::Regex::new(r"Took \d+\.\d{4} seconds").unwrap();
    let text = took.replace_all(&text, "Took X.XXXX seconds");
    let backend = regex::Regex::new(r"ioBackend=\w+").unwrap();
    backend.replace_all(&text, "ioBackend=X").into_owned()
}

fn check(name: &str) {
    let script_path = scripts_dir().join(format!("{name}.hsh"));
    let expected_path = scripts_dir().join(format!("{name}.out"));
    let script = std::fs::read_to_string(&script_path).unwrap();
    let actual = transcript(name, &script);
    if std::env::var_os("STRATA_REGENERATE").is_some() {
        std::fs::write(&expected_path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    if actual != expected {
        let (line, want, got) = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .find(|(_, (want, got))| want != got)
            .map(|(index, (want, got))| (index + 1, want.to_owned(), got.to_owned()))
            .unwrap_or((
                expected.lines().count().min(actual.lines().count()) + 1,
                "(end of file)".to_owned(),
                "(end of file)".to_owned(),
            ));
        panic!(
            "{name}.hsh: transcript differs from {name}.out at line {line}\n  expected: {want}\n  actual:   {got}\n\
             (if the new output is right: STRATA_REGENERATE=1 cargo test -p strata-tools --test shell_transcripts)\n\
             --- full transcript ---\n{actual}"
        );
    }
}

macro_rules! scripts {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name));
            }
        )*

        #[test]
        fn every_script_has_a_test() {
            let known = [$(stringify!($name)),*];
            for entry in std::fs::read_dir(scripts_dir()).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|extension| extension == "hsh") {
                    let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
                    assert!(known.contains(&stem.as_str()), "{stem}.hsh is not listed in scripts!");
                }
            }
        }
    };
}

scripts!(
    scenario_5,
    scenario_1_word_count,
    tables,
    reads,
    writes,
    maintenance,
    errors,
    timestamps_and_reopen,
    hbase_filters,
    namespaces,
);
