//! Data-driven shell tests: each `scripts/NAME.hsh` runs through a shell session on a fresh
//! database, and its transcript (each statement echoed as `strata> ...`, then what the shell
//! printed) must equal `scripts/NAME.out`. Every script runs twice: in a local session, and
//! (module `through_server`) through a `strata server` on a loopback port, as
//! `strata shell --connect` runs it; both must give the same transcript.
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

mod server_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use server_support::{TestServer, loopback_options, ticking_sessions};
use strata::{Clock, Db, DbOptions, ManualClock};
use strata_tools::exec::{ExecOptions, Executor, UserIdentity};
use strata_tools::server::client::AdminClient;
use strata_tools::server::wire::Settings;
use strata_tools::session::{Flow, Session};
use strata_tools::shell::{TableLayout, TimestampFormat};

/// The clock reading when a script starts.
const START_MS: i64 = 1_700_000_000_000;

fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts")
}

/// Where the statements run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A session in this process over the database.
    Local,
    /// A session on a server in this process, through its admin port.
    ThroughServer,
}

/// A session, local or on a server.
enum Shell {
    Local(Session),
    Remote {
        server: TestServer,
        client: AdminClient,
    },
}

struct Run {
    mode: Mode,
    dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    timestamps: TimestampFormat,
    shell: Option<Shell>,
}

impl Run {
    fn new(mode: Mode) -> Run {
        let mut run = Run {
            mode,
            dir: tempfile::tempdir().unwrap(),
            clock: Arc::new(ManualClock::new(START_MS)),
            timestamps: TimestampFormat::EpochMillis,
            shell: None,
        };
        run.open();
        run
    }

    fn open(&mut self) {
        let clock: Arc<dyn Clock> = self.clock.clone();
        // The default I/O back end, so that CI's two passes (io_uring, then STRATA_IO=sync)
        // run the scripts on both.
        let options = DbOptions {
            clock: clock.clone(),
            ..DbOptions::default()
        };
        self.shell = Some(match self.mode {
            Mode::Local => {
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
                Shell::Local(session)
            }
            Mode::ThroughServer => {
                let db = Db::open(self.dir.path(), options).unwrap();
                let mut server_options = loopback_options();
                server_options.admin = ticking_sessions(self.clock.clone());
                let server = TestServer::start(db, clock, server_options);
                // The shell's user (`whoami`) travels in its hello.
                let mut client = server.shell_with(true);
                client.set_settings(self.settings()).unwrap();
                Shell::Remote { server, client }
            }
        });
    }

    fn settings(&self) -> Settings {
        Settings {
            timestamps: self.timestamps.into(),
            width: 0,
        }
    }

    /// Runs a piece of the script, appending the transcript to `out`.
    fn run_segment(&mut self, segment: &str, out: &mut Vec<u8>) -> Flow {
        match self.shell.as_mut().unwrap() {
            Shell::Local(session) => session.run_source(segment, out).unwrap(),
            Shell::Remote { client, .. } => client.run(segment.as_bytes(), out).unwrap(),
        }
    }

    fn close(&mut self) {
        match self.shell.take() {
            Some(Shell::Local(session)) => session.into_executor().close().unwrap(),
            Some(Shell::Remote { mut server, client }) => {
                drop(client);
                server.stop();
                server.db.close().unwrap();
            }
            None => {}
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
                let settings = self.settings();
                match self.shell.as_mut().unwrap() {
                    Shell::Local(session) => {
                        let options = session.executor().options();
                        session.executor_mut().set_options(ExecOptions {
                            timestamps: self.timestamps,
                            ..options
                        });
                    }
                    Shell::Remote { client, .. } => client.set_settings(settings).unwrap(),
                }
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
fn transcript(name: &str, script: &str, mode: Mode) -> String {
    let mut run = Run::new(mode);
    let mut out = Vec::new();
    let mut segment = String::new();
    let mut exited = false;
    for line in script.split_inclusive('\n') {
        if let Some(directive) = line.strip_prefix("#!") {
            if !exited {
                exited = run.run_segment(&segment, &mut out) == Flow::Exit;
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
        run.run_segment(&segment, &mut out);
    }
    run.close();
    if let (Some(keep), Mode::Local) = (std::env::var_os("STRATA_KEEP_DATA"), mode) {
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

fn check(name: &str, mode: Mode) {
    let script_path = scripts_dir().join(format!("{name}.hsh"));
    let expected_path = scripts_dir().join(format!("{name}.out"));
    let script = std::fs::read_to_string(&script_path).unwrap();
    let actual = transcript(name, &script, mode);
    if std::env::var_os("STRATA_REGENERATE").is_some() {
        // The local run writes the expected transcript; the server's must then match it.
        if mode == Mode::Local {
            std::fs::write(&expected_path, &actual).unwrap();
        }
        return;
    }
    let through = match mode {
        Mode::Local => "",
        Mode::ThroughServer => " through strata server",
    };
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
            "{name}.hsh{through}: transcript differs from {name}.out at line {line}\n  expected: {want}\n  actual:   {got}\n\
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
                check(stringify!($name), Mode::Local);
            }
        )*

        /// The same scripts through `strata server`'s admin port.
        mod through_server {
            $(
                #[test]
                fn $name() {
                    super::check(stringify!($name), super::Mode::ThroughServer);
                }
            )*
        }

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
    snapshots,
    codecs,
);
