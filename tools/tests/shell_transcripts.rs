//! Data-driven shell tests: each `scripts/NAME.hsh` runs through a shell session on a fresh
//! database, and its transcript (each statement echoed as `strata> ...`, then what the shell
//! printed) must equal `scripts/NAME.out`. Every script runs twice: in a local session, and
//! (module `through_server`) through a `strata server` on a loopback port, as
//! `strata shell --connect` runs it; both must give the same transcript.
//!
//! Module `beside_load` runs each script through the server once more while a strata-loadgen
//! run writes to another table (`background_load`) through the server's Thrift port, and
//! compares it with a run beside the same table left idle: a busy neighbour may change
//! nothing but the numbers that count the whole server or the neighbour itself (the server's
//! totals and the neighbour region's counters in `status 'detailed'`), and the load must see
//! no error. The neighbour is created before the script in both runs, so `list` shows it and
//! region ids start one later than in the `.out` files.
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
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use server_support::{TestServer, loopback_options, ticking_sessions};
use strata::{Clock, Db, DbOptions, ManualClock};
use strata_tools::exec::{ExecOptions, Executor, UserIdentity};
use strata_tools::loadgen::keys::{Chooser, KeySpace};
use strata_tools::loadgen::schedule::Arrival;
use strata_tools::loadgen::spec::{Distribution, KeyPattern, Mix, RateSpec};
use strata_tools::loadgen::target::ThriftTarget;
use strata_tools::loadgen::{self, LoadSpec, Target};
use strata_tools::server::client::AdminClient;
use strata_tools::server::wire::Settings;
use strata_tools::session::{Flow, Session};
use strata_tools::shell::{TableLayout, TimestampFormat};
use strata_tools::thrift::codec::Protocol;
use strata_tools::thrift::transport::{Transport, WireFormat};

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
    /// Through the server, beside the table [`NEIGHBOUR`] that nothing touches.
    BesideIdleTable,
    /// Through the server, while a loadgen run writes to [`NEIGHBOUR`] through its Thrift
    /// port.
    BesideLoad,
}

impl Mode {
    fn has_neighbour(self) -> bool {
        matches!(self, Mode::BesideIdleTable | Mode::BesideLoad)
    }
}

/// The table the `beside_*` modes create before the script, and the loadgen writes to.
const NEIGHBOUR: &str = "background_load";
/// Records in [`NEIGHBOUR`] before the script starts.
const NEIGHBOUR_RECORDS: u64 = 500;
/// A loadgen run (one of many while a script runs): short, so that stopping the load waits
/// little, and each reports its own errors.
const LOAD_RUN: Duration = Duration::from_millis(200);
/// The most a script may keep the load running: a bound, far above any script's length.
const LOAD_LIMIT: Duration = Duration::from_secs(120);

/// The loadgen's spec: gets, updates and new rows at 1,000 operations a second.
fn neighbour_spec() -> LoadSpec {
    LoadSpec {
        rate: RateSpec::Steps(vec![1000.0]),
        step_every: LOAD_RUN,
        warmup: Duration::from_millis(20),
        duration: LOAD_RUN,
        threads: 2,
        arrival: Arrival::Uniform,
        max_lag: Duration::from_secs(1),
        mix: Mix::parse("get=0.5,update=0.3,put=0.2").unwrap(),
        chooser: Chooser::new(Distribution::Uniform),
        keys: KeySpace::new(KeyPattern::Hashed, 16).unwrap(),
        value_bytes: 100,
        scan_rows: 10,
        batch: 4,
        records: NEIGHBOUR_RECORDS,
        interval: Duration::from_millis(100),
        slo: None,
        seed: 31,
        pause: None,
    }
}

fn neighbour_target(server: &TestServer) -> ThriftTarget {
    let format = WireFormat {
        transport: Transport::Buffered,
        protocol: Protocol::Binary,
    };
    ThriftTarget::new(&server.addresses.thrift.to_string(), format, NEIGHBOUR).unwrap()
}

/// Creates [`NEIGHBOUR`] through the server's Thrift port, as `strata-loadgen --create`
/// does, and preloads it.
fn create_neighbour(server: &TestServer) {
    let target = neighbour_target(server);
    target.create_table().unwrap();
    let mut client = target.connect().unwrap();
    loadgen::preload_with(&neighbour_spec(), |records| {
        target.load(&mut client, records)
    })
    .unwrap();
}

/// What the load did while one server ran.
#[derive(Default, Clone, Copy)]
struct LoadTotals {
    runs: u64,
    ops: u64,
    errors: u64,
}

/// Loadgen runs one after another against [`NEIGHBOUR`] until stopped.
struct BackgroundLoad {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<LoadTotals>,
}

impl BackgroundLoad {
    fn start(server: &TestServer) -> BackgroundLoad {
        let stop = Arc::new(AtomicBool::new(false));
        let address = server.addresses.thrift;
        let format = WireFormat {
            transport: Transport::Buffered,
            protocol: Protocol::Binary,
        };
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut totals = LoadTotals::default();
            // At least one run, so that even a script's shortest stretch is under load.
            loop {
                let target = ThriftTarget::new(&address.to_string(), format, NEIGHBOUR).unwrap();
                let summary =
                    loadgen::run(neighbour_spec(), Target::Thrift(target), |_| {}).unwrap();
                totals.runs += 1;
                totals.ops += summary.ops;
                totals.errors += summary.errors;
                if stopped.load(Ordering::Relaxed) || started.elapsed() > LOAD_LIMIT {
                    return totals;
                }
            }
        });
        BackgroundLoad { stop, thread }
    }

    /// Stops the load after its current run and returns what it did.
    fn finish(self) -> LoadTotals {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// A session, local or on a server.
enum Shell {
    Local(Session),
    Remote {
        server: TestServer,
        client: AdminClient,
        load: Option<BackgroundLoad>,
    },
}

struct Run {
    mode: Mode,
    dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    timestamps: TimestampFormat,
    shell: Option<Shell>,
    /// Whether [`NEIGHBOUR`] was created (it outlives a `#! reopen`).
    neighbour_created: bool,
    /// What the background load did, summed over the script's servers.
    load: LoadTotals,
}

impl Run {
    fn new(mode: Mode) -> Run {
        let mut run = Run {
            mode,
            dir: tempfile::tempdir().unwrap(),
            clock: Arc::new(ManualClock::new(START_MS)),
            timestamps: TimestampFormat::EpochMillis,
            shell: None,
            neighbour_created: false,
            load: LoadTotals::default(),
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
            Mode::ThroughServer | Mode::BesideIdleTable | Mode::BesideLoad => {
                let db = Db::open(self.dir.path(), options).unwrap();
                let mut server_options = loopback_options();
                server_options.admin = ticking_sessions(self.clock.clone());
                let server = TestServer::start(db, clock, server_options);
                if self.mode.has_neighbour() && !self.neighbour_created {
                    create_neighbour(&server);
                    self.neighbour_created = true;
                }
                let load = (self.mode == Mode::BesideLoad).then(|| BackgroundLoad::start(&server));
                // The shell's user (`whoami`) travels in its hello.
                let mut client = server.shell_with(true);
                client.set_settings(self.settings()).unwrap();
                Shell::Remote {
                    server,
                    client,
                    load,
                }
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
            Some(Shell::Remote {
                mut server,
                client,
                load,
            }) => {
                drop(client);
                if let Some(load) = load {
                    let totals = load.finish();
                    self.load.runs += totals.runs;
                    self.load.ops += totals.ops;
                    self.load.errors += totals.errors;
                }
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

/// A script's normalized transcript, and what the background load did beside it.
struct Transcript {
    text: String,
    load: LoadTotals,
}

/// Runs a script and returns its normalized transcript.
fn transcript(name: &str, script: &str, mode: Mode) -> Transcript {
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
    Transcript {
        text: backend.replace_all(&text, "ioBackend=X").into_owned(),
        load: run.load,
    }
}

/// `text` with the counters a busy [`NEIGHBOUR`] may change replaced by `#`: those of the
/// server's totals line (under `    localhost` in `status 'detailed'` and `'simple'`) and of
/// the neighbour region's line (under its name in `status 'detailed'`). Every other line
/// counts the script's own tables and must not change.
fn mask_neighbour_counters(text: &str) -> String {
    let counter = regex::Regex::new(r"=(\d+|\[[^\]]*\])").unwrap();
    let neighbour_region = format!("        \"{NEIGHBOUR},");
    let mut masked = String::with_capacity(text.len());
    let mut next_is_counted = false;
    for line in text.split_inclusive('\n') {
        if next_is_counted {
            masked.push_str(&counter.replace_all(line, "=#"));
        } else {
            masked.push_str(line);
        }
        next_is_counted = line.trim_end() == "    localhost" || line.starts_with(&neighbour_region);
    }
    masked
}

/// The first line where `actual` differs from `expected`: its number, and both versions.
fn first_difference(expected: &str, actual: &str) -> (usize, String, String) {
    expected
        .lines()
        .zip(actual.lines())
        .enumerate()
        .find(|(_, (want, got))| want != got)
        .map(|(index, (want, got))| (index + 1, want.to_owned(), got.to_owned()))
        .unwrap_or((
            expected.lines().count().min(actual.lines().count()) + 1,
            "(end of file)".to_owned(),
            "(end of file)".to_owned(),
        ))
}

fn check(name: &str, mode: Mode) {
    let script_path = scripts_dir().join(format!("{name}.hsh"));
    let expected_path = scripts_dir().join(format!("{name}.out"));
    let script = std::fs::read_to_string(&script_path).unwrap();
    let actual = transcript(name, &script, mode).text;
    if std::env::var_os("STRATA_REGENERATE").is_some() {
        // The local run writes the expected transcript; the server's must then match it.
        if mode == Mode::Local {
            std::fs::write(&expected_path, &actual).unwrap();
        }
        return;
    }
    let through = match mode {
        Mode::Local => "",
        _ => " through strata server",
    };
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    if actual != expected {
        let (line, want, got) = first_difference(&expected, &actual);
        panic!(
            "{name}.hsh{through}: transcript differs from {name}.out at line {line}\n  expected: {want}\n  actual:   {got}\n\
             (if the new output is right: STRATA_REGENERATE=1 cargo test -p strata-tools --test shell_transcripts)\n\
             --- full transcript ---\n{actual}"
        );
    }
}

/// Runs `name` through the server beside [`NEIGHBOUR`] left idle, then beside it under load:
/// the two transcripts must match but for [`mask_neighbour_counters`], and the load must have
/// run without an error.
fn check_beside_load(name: &str) {
    let script = std::fs::read_to_string(scripts_dir().join(format!("{name}.hsh"))).unwrap();
    let idle = transcript(name, &script, Mode::BesideIdleTable);
    let busy = transcript(name, &script, Mode::BesideLoad);
    assert!(
        busy.load.runs > 0 && busy.load.ops > 0,
        "{name}.hsh: the background load ran no operation"
    );
    assert_eq!(
        busy.load.errors, 0,
        "{name}.hsh: the background load saw errors while the script ran"
    );
    let (expected, actual) = (
        mask_neighbour_counters(&idle.text),
        mask_neighbour_counters(&busy.text),
    );
    if actual != expected {
        let (line, want, got) = first_difference(&expected, &actual);
        panic!(
            "{name}.hsh beside a loaded table: transcript differs from the one beside an idle \
             table at line {line}\n  idle:   {want}\n  loaded: {got}\n--- full transcript ---\n{actual}"
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

        /// The same scripts through the server while a loadgen writes to another table.
        mod beside_load {
            $(
                #[test]
                fn $name() {
                    super::check_beside_load(stringify!($name));
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
    retention,
);

#[test]
fn a_busy_neighbour_may_change_only_the_servers_and_its_own_counters() {
    let status = "1 live servers\n    localhost\n        numberOfOnlineRegions=2, walSyncs=17, ioBackend=X\n        \"background_load,,1\"\n            numberOfStores=1, writeRequestsCount=900, filesPerLevel=[1, 0]\n        \"m,,2\"\n            numberOfStores=2, writeRequestsCount=4, filesPerLevel=[0, 0]\n";
    assert_eq!(
        mask_neighbour_counters(status),
        "1 live servers\n    localhost\n        numberOfOnlineRegions=#, walSyncs=#, ioBackend=X\n        \"background_load,,1\"\n            numberOfStores=#, writeRequestsCount=#, filesPerLevel=#\n        \"m,,2\"\n            numberOfStores=2, writeRequestsCount=4, filesPerLevel=[0, 0]\n"
    );
}
