//! `strata server`: the binary's start line, signals and directory lock; shells through its
//! admin port (several at once, with a Thrift client, while admin commands run on the live
//! database); bad admin requests and clients that leave; the HTTP port's status page and
//! metrics, and bad HTTP requests. The shell transcripts run through the server in
//! `shell_transcripts.rs` (`through_server`); the interactive shell in `interactive.rs`.

#![cfg(test)]

mod server_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use server_support::*;
use strata::{Db, FamilyDescriptor, Put, Scan, TableDescriptor};
use strata_tools::server::client::{AdminClient, ClientError, SessionRequest};
use strata_tools::server::wire::{
    self, Hello, Language, PROTOCOL_VERSION, Reply, Request, Settings, SqlFormat, Timestamps,
};
use strata_tools::thrift::client::Client;
use strata_tools::thrift::hbase::{BatchMutation, Call, MutateRowsArgs, Mutation, Response};
use strata_tools::thrift::transport::{Transport, WireFormat};

/// Waits up to `limit` for `condition`, polling.
fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    condition()
}

fn strata() -> Command {
    Command::new(env!("CARGO_BIN_EXE_strata"))
}

fn with_stdin(command: &mut Command, input: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// Output with the parts that differ from run to run (timings, timestamps, the user) masked.
fn normalized(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(output);
    let took = regex::Regex::new(r"Took \d+\.\d{4} seconds").unwrap();
    let stamps = regex::Regex::new(r"timestamp=\d+").unwrap();
    let text = took.replace_all(&text, "Took X seconds");
    stamps.replace_all(&text, "timestamp=T").into_owned()
}

const SCRIPT: &[u8] = b"create 'scores', 'grade', {NAME => 'course', VERSIONS => 3}
put 'scores', 'Tom', 'grade:', '1'
put 'scores', 'Tom', 'course:math', '87'
put 'scores', \"J\\xC3\\xA9r\\xFF\", 'course:art', '80'
scan 'scores'
get 'scores', 'Tom'
count 'scores'
flush 'scores'
list_regions 'scores'
describe 'scores'
nope 'scores'
put 'scores', 'Tom', 'nofamily:x', '1'
put 'scores', 'r', 'course:x', 'caf\xe9'
list
";

#[test]
fn the_binary_prints_its_ports_runs_shells_as_local_ones_and_stops_on_sigterm() {
    let served = tempfile::tempdir().unwrap();
    let local = tempfile::tempdir().unwrap();
    let mut server = ServerProcess::start(&served.path().join("db"), &["--log-format", "json"]);
    let admin = server.addresses.admin.to_string();

    // A script on standard input, with failures: the same output and exit status both ways.
    let through = with_stdin(strata().args(["shell", "--connect", &admin]), SCRIPT);
    let locally = with_stdin(
        strata()
            .args(["shell", "--data"])
            .arg(local.path().join("db")),
        SCRIPT,
    );
    assert_eq!(normalized(&through.stdout), normalized(&locally.stdout));
    assert_eq!(through.status.code(), Some(1), "{through:?}");
    assert_eq!(locally.status.code(), Some(1));
    assert!(
        normalized(&through.stdout).contains("ERROR: Unknown column family!"),
        "{}",
        normalized(&through.stdout)
    );

    // -e, with --timestamps, no failure: exit 0.
    let execute = strata()
        .args(["shell", "--connect", &admin, "--timestamps", "iso", "-e"])
        .arg("get 'scores', 'Tom'; exists 'scores'")
        .output()
        .unwrap();
    assert_eq!(execute.status.code(), Some(0), "{execute:?}");
    let text = String::from_utf8_lossy(&execute.stdout);
    assert!(text.contains("timestamp=20"), "{text}");
    assert!(text.contains("Table scores does exist"), "{text}");

    // A directory and a server at once: refused.
    let both = strata()
        .args(["shell", "--data", "db", "--connect", &admin, "-e", "list"])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&both.stderr).contains("cannot be used with"));

    // Nobody listening: a clear error, exit 2.
    let nobody = strata()
        .args(["shell", "--connect", "127.0.0.1:1", "-e", "list"])
        .output()
        .unwrap();
    assert_eq!(nobody.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&nobody.stderr).contains("cannot connect to 127.0.0.1:1"),
        "{nobody:?}"
    );

    let status = server.terminate();
    assert!(status.success(), "{status:?}; stderr:\n{}", server.stderr());
    let log = server.stderr();
    assert!(log.contains("\"message\":\"database closed\""), "{log}");
    assert!(log.contains("shell ran flush"), "{log}");
    // The database was closed cleanly: it opens, with what the shells wrote.
    let db = Db::open_default(served.path().join("db")).unwrap();
    assert_eq!(db.table("scores").unwrap().count(&Scan::new()).unwrap(), 2);
    db.close().unwrap();
}

#[test]
fn a_served_directory_refuses_a_second_server_and_a_local_shell_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("db");
    let _server = ServerProcess::start(&data, &[]);
    let second = server_command(&data).output().unwrap();
    assert_eq!(second.status.code(), Some(2));
    assert!(second.stdout.is_empty(), "no address line: {second:?}");
    let error = String::from_utf8_lossy(&second.stderr);
    assert!(
        error.contains("is already open (its LOCK is held)"),
        "{error}"
    );
    assert!(error.contains("strata shell --connect"), "{error}");

    let shell = strata()
        .args(["shell", "--data"])
        .arg(&data)
        .args(["-e", "list"])
        .output()
        .unwrap();
    assert_eq!(shell.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&shell.stderr).contains("--connect HOST:PORT"),
        "{shell:?}"
    );
}

/// Runs `strata server` on `data` with every port free (0) unless `flags` say otherwise,
/// expects it to refuse to start (exit status 2) and returns what it printed on stderr.
fn refused_server(data: &Path, flags: &[&str]) -> String {
    let mut ports = vec!["--thrift-port", "0", "--http-port", "0"];
    if !flags.contains(&"--admin-port") {
        ports.extend(["--admin-port", "0"]);
    }
    let output = strata()
        .args(["server", "--data"])
        .arg(data)
        .args(ports)
        .args(flags)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_port_in_use_is_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let error = refused_server(&dir.path().join("db"), &["--admin-port", &port]);
    assert!(
        error.contains("for the admin port (--admin-port"),
        "{error}"
    );
    // The database it opened was closed again: it opens.
    Db::open_default(dir.path().join("db"))
        .unwrap()
        .close()
        .unwrap();
}

#[test]
fn a_background_write_budget_beyond_bytes_per_second_is_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let error = refused_server(
        &dir.path().join("db"),
        &["--background-write-mib-per-sec", "18446744073709551615"],
    );
    assert!(
        error.contains("--background-write-mib-per-sec 18446744073709551615 does not fit"),
        "{error}"
    );
    assert!(!dir.path().join("db").exists(), "nothing was opened");
}

fn thrift_put(client: &mut Client, table: &str, row: &str) {
    let response = client
        .call::<()>(&Call::MutateRows(MutateRowsArgs {
            table_name: Some(table.as_bytes().to_vec()),
            row_batches: Some(vec![BatchMutation {
                row: Some(row.as_bytes().to_vec()),
                mutations: Some(vec![Mutation {
                    is_delete: Some(false),
                    column: Some(b"f:q".to_vec()),
                    value: Some(b"v".to_vec()),
                    write_to_wal: Some(true),
                }]),
            }]),
            attributes: None,
        }))
        .unwrap();
    assert!(matches!(response, Response::Success(())), "{response:?}");
}

#[test]
fn two_shells_and_a_thrift_client_at_once_while_admin_commands_run_on_the_live_database() {
    // The writers go on until the admin commands are done, within these bounds.
    const MAX_SHELL_BATCHES: usize = 2000;
    const MAX_THRIFT_ROWS: usize = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::open(dir.path());
    let mut setup = server.shell();
    let created = TestServer::run(
        &mut setup,
        "create 'shell', 'f'\ncreate 'thrift', 'f', {SPLITS => ['m']}\n",
    );
    assert!(created.contains("Created table thrift"), "{created}");
    let admin_done = AtomicBool::new(false);

    let (shell_rows, thrift_rows) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut shell = server.shell();
            let mut batches = 0;
            // At least a few batches, whatever the admin commands' pace.
            while batches < 5 || (!admin_done.load(Ordering::SeqCst) && batches < MAX_SHELL_BATCHES)
            {
                let statements: String = (0..10)
                    .map(|i| format!("put 'shell', 'r{:05}', 'f:q', 'v'\n", batches * 10 + i))
                    .collect();
                let out = TestServer::run(&mut shell, &statements);
                assert!(!out.contains("ERROR"), "{out}");
                batches += 1;
            }
            assert_eq!(shell.failures(), 0);
            batches * 10
        });
        let thrift = scope.spawn(|| {
            let format = WireFormat {
                transport: Transport::Buffered,
                protocol: strata_tools::thrift::codec::Protocol::Binary,
            };
            let mut client =
                Client::connect(server.addresses.thrift, format, REPLY_TIMEOUT).unwrap();
            let mut rows = 0;
            while rows < 50 || (!admin_done.load(Ordering::SeqCst) && rows < MAX_THRIFT_ROWS) {
                thrift_put(&mut client, "thrift", &format!("{:x}{rows:05}", rows % 16));
                rows += 1;
            }
            rows
        });
        // The admin commands, on the tables being written.
        let mut admin = server.shell();
        for round in 0..3 {
            let out = TestServer::run(
                &mut admin,
                &format!(
                    "flush 'thrift'\ncompact 'thrift'\nflush 'shell'\n\
                     alter 'shell', NAME => 'f', VERSIONS => {}\n\
                     major_compact 'thrift'\nstatus 'detailed'\nlist_regions 'thrift'\n",
                    round + 2
                ),
            );
            assert!(!out.contains("ERROR"), "round {round}: {out}");
            assert!(out.contains("numberOfOnlineRegions="), "{out}");
        }
        let split = TestServer::run(
            &mut admin,
            "split 'shell', 'r00020'\nlist_regions 'shell'\n",
        );
        assert!(!split.contains("ERROR"), "{split}");
        assert!(split.contains("2 rows"), "{split}");
        let ids: Vec<String> = server
            .db
            .table("shell")
            .unwrap()
            .regions()
            .unwrap()
            .iter()
            .map(|region| region.id.to_string())
            .collect();
        let merged = TestServer::run(
            &mut admin,
            &format!(
                "merge_region '{}', '{}'\nlist_regions 'shell'\n",
                ids[0], ids[1]
            ),
        );
        assert!(!merged.contains("ERROR"), "{merged}");
        assert!(merged.contains("1 rows"), "{merged}");
        admin_done.store(true, Ordering::SeqCst);
        (writer.join().unwrap(), thrift.join().unwrap())
    });
    let counts = TestServer::run(&mut setup, "count 'shell'\ncount 'thrift'\n");
    let counted = |rows: usize| counts.lines().any(|line| line == format!("{rows} row(s)"));
    assert!(counted(shell_rows), "{shell_rows}: {counts}");
    assert!(counted(thrift_rows), "{thrift_rows}: {counts}");
    let snapshot = server.handle.snapshot();
    assert!(snapshot.admin.statements >= (shell_rows + 20) as u64);
    assert_eq!(snapshot.admin.failed_statements, 0);
    assert!(snapshot.thrift.calls >= thrift_rows as u64);
}

/// A raw connection to the admin port that said hello.
fn raw_session(server: &TestServer) -> TcpStream {
    let mut stream = TcpStream::connect(server.addresses.admin).unwrap();
    stream.set_read_timeout(Some(REPLY_TIMEOUT)).unwrap();
    wire::write_request(&mut stream, &Request::Hello(hello(PROTOCOL_VERSION))).unwrap();
    match wire::read_reply(&mut stream).unwrap() {
        Reply::Welcome(_) => stream,
        other => panic!("no welcome: {other:?}"),
    }
}

fn hello(protocol: u32) -> Hello {
    Hello {
        protocol,
        client: "test".into(),
        settings: Settings {
            timestamps: Timestamps::Millis,
            width: 0,
        },
        user: None,
        echo: false,
        language: Language::Shell,
        sql_format: SqlFormat::Table,
    }
}

/// The error the server answers on `stream` with, after which it closes it.
fn error_reply(stream: &mut TcpStream) -> String {
    let message = match wire::read_reply(stream) {
        Ok(Reply::Error(message)) => message,
        other => panic!("expected an error reply, got {other:?}"),
    };
    let mut rest = Vec::new();
    // Closed by the server: end of stream (or a reset).
    let _ = stream.read_to_end(&mut rest);
    assert!(rest.is_empty(), "nothing after the error: {rest:?}");
    message
}

fn open_admin_connections(server: &TestServer) -> usize {
    server.handle.snapshot().admin.connections.open
}

#[test]
fn a_long_scan_holds_up_no_other_shell_and_a_client_that_leaves_mid_scan_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::open(dir.path());
    let table = server
        .db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap();
    let value = vec![b'v'; 200];
    let puts: Vec<Put> = (0..20_000u32)
        .map(|row| Put::new(format!("row{row:06}")).add("f", "q", value.as_slice()))
        .collect();
    table.put_many(&puts).unwrap();
    // A client that asks for the whole table and reads one frame of it: the scan's output
    // fills the socket and the scan waits.
    let mut scanner = raw_session(&server);
    wire::write_request(&mut scanner, &Request::Run(b"scan 't'".to_vec())).unwrap();
    assert!(matches!(
        wire::read_reply(&mut scanner),
        Ok(Reply::Output(_))
    ));

    let mut other = server.shell();
    let started = Instant::now();
    let out = TestServer::run(&mut other, "get 't', 'row000007'\nlist\n");
    assert!(out.contains("1 row(s)"), "{out}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(open_admin_connections(&server), 2);

    // The client leaves mid-scan: its session ends (the scan's next chunk fails).
    drop(scanner);
    assert!(
        eventually(Duration::from_secs(20), || open_admin_connections(&server)
            == 1),
        "the scanning session did not end"
    );
    let out = TestServer::run(&mut other, "count 't'\n");
    assert!(out.contains("20000 row(s)"), "{out}");
}

#[test]
fn bad_admin_requests_get_a_clear_error_and_close_only_their_own_connection() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::open_with(dir.path(), |options| {
        options.admin.max_request_bytes = 1024;
    });
    let mut good = server.shell();
    TestServer::run(&mut good, "create 't', 'f'\n");

    // Text, as from a browser or curl.
    let mut http = TcpStream::connect(server.addresses.admin).unwrap();
    http.set_read_timeout(Some(REPLY_TIMEOUT)).unwrap();
    http.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let message = error_reply(&mut http);
    assert!(message.contains("this is the admin port"), "{message}");

    // A request over the limit: refused before it is read.
    let mut oversized = raw_session(&server);
    let script = format!("put 't', 'big', 'f:q', '{}'", "x".repeat(2000));
    wire::write_request(&mut oversized, &Request::Run(script.into_bytes())).unwrap();
    let message = error_reply(&mut oversized);
    assert!(
        message.contains("over the limit of 1024 bytes (the server's --max-request-mb)"),
        "{message}"
    );

    // A statement before the hello, an unknown kind, another protocol, a second hello.
    let mut no_hello = TcpStream::connect(server.addresses.admin).unwrap();
    no_hello.set_read_timeout(Some(REPLY_TIMEOUT)).unwrap();
    wire::write_request(&mut no_hello, &Request::Run(b"list".to_vec())).unwrap();
    assert!(error_reply(&mut no_hello).contains("the first request must be a hello"));

    let mut unknown = raw_session(&server);
    unknown.write_all(&[0, 0, 0, 1, b'?']).unwrap();
    assert!(error_reply(&mut unknown).contains("unknown frame kind 0x3f"));

    let mut future = TcpStream::connect(server.addresses.admin).unwrap();
    future.set_read_timeout(Some(REPLY_TIMEOUT)).unwrap();
    wire::write_request(&mut future, &Request::Hello(hello(99))).unwrap();
    assert!(error_reply(&mut future).contains("speaks admin protocol 1, the client 99"));

    let mut twice = raw_session(&server);
    wire::write_request(&mut twice, &Request::Hello(hello(PROTOCOL_VERSION))).unwrap();
    assert!(error_reply(&mut twice).contains("a second hello"));

    // Half a request, then the client leaves: nothing of it runs.
    let mut half = raw_session(&server);
    let mut frame = Vec::new();
    wire::write_request(
        &mut frame,
        &Request::Run(b"put 't', 'half', 'f:q', 'v'".to_vec()),
    )
    .unwrap();
    half.write_all(&frame[..frame.len() / 2]).unwrap();
    drop(half);

    assert!(
        eventually(Duration::from_secs(20), || open_admin_connections(&server)
            == 1),
        "only the good shell is left"
    );
    let out = TestServer::run(&mut good, "put 't', 'ok', 'f:q', 'v'\nscan 't'\n");
    assert!(out.contains(" ok column=f:q"), "{out}");
    assert!(!out.contains("half") && !out.contains("big"), "{out}");
    assert_eq!(server.handle.snapshot().admin.malformed_requests, 6);
}

#[test]
fn sql_sessions_query_the_served_database_beside_shells_and_report_errors_apart() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::open(dir.path());
    let mut shell = server.shell();
    TestServer::run(
        &mut shell,
        "create 'scores', 'grade'\nput 'scores', 'Tom', 'grade:', '1'\n",
    );
    let address = server.addresses.admin.to_string();
    let sql_request = SessionRequest {
        language: Language::Sql,
        sql_format: SqlFormat::Csv,
        ..session_request(false)
    };
    let mut sql = AdminClient::connect(&address, sql_request.clone()).unwrap();
    assert_eq!(sql.welcome().language, Language::Sql);
    let query = "SELECT CAST(row AS VARCHAR) AS student, CAST(value AS VARCHAR) AS grade \
                 FROM scores ORDER BY student;";
    let run = |sql: &mut AdminClient, text: &str| {
        let (mut out, mut errors) = (Vec::new(), Vec::new());
        sql.run_with_errors(text.as_bytes(), &mut out, &mut errors)
            .unwrap();
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(errors).unwrap(),
        )
    };
    assert_eq!(
        run(&mut sql, query),
        ("student,grade\nTom,1\n".into(), String::new())
    );

    // A write through the shell is seen by the next query: one live database.
    TestServer::run(&mut shell, "put 'scores', 'Ann', 'grade:', '2'\n");
    let (out, _) = run(&mut sql, query);
    assert_eq!(out, "student,grade\nAnn,2\nTom,1\n");

    // A failed statement's message goes apart, and the statements after it still run.
    let (out, errors) = run(
        &mut sql,
        "SELECT * FROM nowhere; SELECT count(*) AS n FROM scores;",
    );
    assert_eq!(out, "n\n2\n");
    assert!(
        errors.starts_with("Error: ") && errors.contains("nowhere"),
        "{errors}"
    );
    assert_eq!(sql.failures(), 1);
    let (_, errors) = run(&mut sql, "SELEC 1;");
    assert!(errors.contains("Error: "), "{errors}");
    assert_eq!(sql.failures(), 2);

    // A mapping created in one SQL session is stored with the table: another sees it.
    run(
        &mut sql,
        "CREATE EXTERNAL TABLE grades (student VARCHAR NOT NULL, grade VARCHAR) \
         STORED AS STRATA LOCATION 'scores' OPTIONS ('mapping' ':key,grade:');",
    );
    let mut other = AdminClient::connect(&address, sql_request).unwrap();
    let (out, errors) = run(
        &mut other,
        "SELECT grade FROM grades WHERE student = 'Ann';",
    );
    assert_eq!((out.as_str(), errors.as_str()), ("grade\n2\n", ""));

    // The shell session is unaffected by the SQL sessions beside it.
    assert!(TestServer::run(&mut shell, "count 'scores'\n").contains("2 row(s)"));
    assert_eq!(shell.failures(), 0);
}

#[test]
fn too_many_shells_are_told_the_server_is_busy() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::open_with(dir.path(), |options| {
        options.admin.max_connections = 1;
    });
    let mut first = server.shell();
    let refused = AdminClient::connect(&server.addresses.admin.to_string(), session_request(false));
    match refused {
        Err(ClientError::Server(message)) => {
            assert!(
                message.contains("the server is busy: 1 connections are open"),
                "{message}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(TestServer::run(&mut first, "list\n").contains("0 row(s)"));
}

#[test]
fn the_status_page_shows_tables_regions_and_events_with_every_string_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::open(dir.path());
    let mut shell = server.shell();
    let out = TestServer::run(
        &mut shell,
        "create 'scores', 'grade', {SPLITS => [\"<b>&\\x00\"]}\n\
         put 'scores', 'Tom', 'grade:', '1'\nput 'scores', 'zed', 'grade:', '2'\n\
         flush 'scores'\ndisable 'scores'\nenable 'scores'\n",
    );
    assert!(!out.contains("ERROR"), "{out}");
    let (status, response) = http_request(server.addresses.http, "GET", "/", "");
    assert_eq!(status, 200, "{response}");
    assert!(response.contains("Content-Type: text/html; charset=utf-8\r\n"));
    let page = body(&response);
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(page.contains("<meta http-equiv=\"refresh\" content=\"10\">"));
    assert!(
        page.contains("<td>scores</td><td>enabled</td><td>grade</td>"),
        "{page}"
    );
    // The split key, as the shell prints it, escaped; never as markup.
    assert!(page.contains("<td>&lt;b&gt;&amp;\\x00</td>"), "{page}");
    assert!(page.contains("<td>scores,&lt;b&gt;&amp;\\x00,"), "{page}");
    assert!(!page.contains("<b>&"), "{page}");
    assert!(page.contains("<td>(first)</td>") && page.contains("<td>(last)</td>"));
    for section in [
        "tables",
        "regions",
        "compaction-queue",
        "wal",
        "cache",
        "server",
        "events",
    ] {
        assert!(
            page.contains(&format!("id=\"{section}\"")),
            "no {section} section"
        );
    }
    // The shell's administrative commands are recent events (when the test's process has
    // no subscriber the ring is empty: the page says so).
    assert!(page.contains("Recent events"));
    assert_eq!(page.matches("<html").count(), 1);
}

/// The value of `family` with `labels` (`{a="b"}`, or empty) among a scrape's `samples`;
/// a missing sample fails the test, showing the scrape (`response`).
fn sample_value(
    samples: &[(String, String, f64)],
    family: &str,
    labels: &str,
    response: &str,
) -> f64 {
    samples
        .iter()
        .find(|(f, l, _)| f == family && l == labels)
        .map(|(_, _, v)| *v)
        .unwrap_or_else(|| panic!("no {family}{labels} in\n{}", body(response)))
}

/// Checks the Prometheus text format line by line: `# HELP`/`# TYPE` comments, samples
/// `name{label="value",...} number` whose family was declared. Returns the samples.
fn parse_prometheus(text: &str) -> Vec<(String, String, f64)> {
    let name = regex::Regex::new(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$").unwrap();
    let sample = regex::Regex::new(
        r#"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$"#,
    )
    .unwrap();
    let mut declared = std::collections::HashSet::new();
    let mut histograms = std::collections::HashSet::new();
    let mut samples = Vec::new();
    for line in text.lines() {
        if let Some(comment) = line.strip_prefix("# ") {
            let mut words = comment.splitn(3, ' ');
            let kind = words.next().unwrap();
            let family = words.next().unwrap_or_default();
            assert!(name.is_match(family), "{line}");
            if kind == "TYPE" {
                let type_name = words.next().unwrap_or_default();
                assert!(
                    ["counter", "gauge", "histogram"].contains(&type_name),
                    "{line}"
                );
                declared.insert(family.to_owned());
                if type_name == "histogram" {
                    histograms.insert(family.to_owned());
                }
            } else {
                assert_eq!(kind, "HELP", "{line}");
            }
            continue;
        }
        let captures = sample
            .captures(line)
            .unwrap_or_else(|| panic!("bad sample: {line}"));
        let family = captures.get(1).unwrap().as_str().to_owned();
        // A histogram's samples are its `_bucket`s, `_sum` and `_count`.
        let declared_as = ["_bucket", "_sum", "_count"]
            .iter()
            .filter_map(|suffix| family.strip_suffix(suffix))
            .find(|base| histograms.contains(*base))
            .unwrap_or(&family);
        assert!(declared.contains(declared_as), "{family} has no TYPE");
        let value: f64 = captures.get(3).unwrap().as_str().parse().unwrap();
        let labels = captures.get(2).map_or("", |m| m.as_str()).to_owned();
        samples.push((family, labels, value));
    }
    samples
}

#[test]
fn the_background_io_budget_is_served_when_one_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let db_options = strata::DbOptions::default().with_background_write_limit(64 * 1024 * 1024);
    let clock = db_options.clock.clone();
    let db = Db::open(dir.path(), db_options).unwrap();
    let server = TestServer::start(db, clock, loopback_options());
    let mut shell = server.shell();
    TestServer::run(
        &mut shell,
        "create 't', 'f'\nput 't', 'a', 'f:q', 'v'\nflush 't'\n",
    );
    let (status, response) = http_request(server.addresses.http, "GET", "/metrics", "");
    assert_eq!(status, 200, "{response}");
    let samples = parse_prometheus(body(&response));
    let value = |family: &str, labels: &str| sample_value(&samples, family, labels, &response);
    assert_eq!(
        value("strata_background_write_limit_bytes_per_second", ""),
        64.0 * 1024.0 * 1024.0
    );
    let flushed = server.db.metrics().stats.hfile_bytes_written as f64;
    assert!(flushed > 0.0);
    assert_eq!(
        value("strata_background_write_bytes_total", "{kind=\"flush\"}"),
        flushed
    );
    assert_eq!(
        value(
            "strata_background_write_bytes_total",
            "{kind=\"compaction\"}"
        ),
        0.0
    );
    assert!(
        value(
            "strata_background_write_wait_seconds_total",
            "{kind=\"flush\"}"
        ) >= 0.0
    );
}

#[test]
fn metrics_are_served_in_the_prometheus_text_format_at_both_paths() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::open(dir.path());
    let mut shell = server.shell();
    TestServer::run(
        &mut shell,
        "create 't', 'f'\nput 't', 'a', 'f:q', 'v'\nput 't', 'b', 'f:q', 'v'\nget 't', 'a'\nflush 't'\n",
    );
    for path in ["/metrics", "/prometheus"] {
        let (status, response) = http_request(server.addresses.http, "GET", path, "");
        assert_eq!(status, 200, "{response}");
        assert!(
            response.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            "{response}"
        );
        let samples = parse_prometheus(body(&response));
        let value = |family: &str, labels: &str| sample_value(&samples, family, labels, &response);
        let region = server.db.table("t").unwrap().regions().unwrap()[0].id;
        let labels = format!("{{table=\"t\",region=\"{region}\"}}");
        assert_eq!(value("strata_region_written_rows_total", &labels), 2.0);
        assert_eq!(value("strata_region_read_rows_total", &labels), 1.0);
        assert_eq!(value("strata_region_flushes_total", &labels), 1.0);
        assert_eq!(value("strata_table_regions", "{table=\"t\"}"), 1.0);
        // The table's own counters (kept across splits: tests/tests/metrics.rs).
        assert_eq!(
            value("strata_table_written_rows_total", "{table=\"t\"}"),
            2.0
        );
        assert_eq!(value("strata_table_gets_total", "{table=\"t\"}"), 1.0);
        assert_eq!(value("strata_table_flushes_total", "{table=\"t\"}"), 1.0);
        assert_eq!(value("strata_flushes_total", ""), 1.0);
        assert!(value("strata_wal_frames_total", "") >= 2.0);
        assert_eq!(
            value("strata_server_open_connections", "{endpoint=\"admin\"}"),
            1.0
        );
        assert!(value("strata_admin_statements_total", "") >= 5.0);
        assert_eq!(value("strata_region_gets_total", &labels), 1.0);
        assert_eq!(value("strata_region_scans_total", &labels), 0.0);
        assert!(
            value("strata_open_files", "") >= 2.0,
            "the WAL and the HFile"
        );
        assert_eq!(value("strata_compaction_debt_bytes", ""), 0.0);
        assert!(
            !body(&response).contains("strata_background_write"),
            "no budget is set"
        );
        assert_eq!(
            value("strata_table_compaction_debt_bytes", "{table=\"t\"}"),
            0.0
        );
        // Histograms: cumulative buckets up to +Inf, which is the count. Puts and gets are
        // sampled (one in 16 per thread, counted 16 times); each put synced the WAL.
        for histogram in [
            "strata_write_latency_seconds",
            "strata_get_latency_seconds",
            "strata_scan_latency_seconds",
            "strata_wal_sync_latency_seconds",
        ] {
            let buckets: Vec<f64> = samples
                .iter()
                .filter(|(f, _, _)| *f == format!("{histogram}_bucket"))
                .map(|(_, _, v)| *v)
                .collect();
            assert_eq!(buckets.len(), 32, "{histogram}: 31 bounds and +Inf");
            assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{histogram}");
            let count = value(&format!("{histogram}_count"), "");
            assert_eq!(
                value(&format!("{histogram}_bucket"), "{le=\"+Inf\"}"),
                count
            );
            assert!(value(&format!("{histogram}_sum"), "") >= 0.0);
        }
        assert_eq!(value("strata_get_latency_seconds_count", ""), 16.0);
        assert!(value("strata_write_latency_seconds_count", "") >= 16.0);
        assert!(value("strata_wal_sync_latency_seconds_count", "") >= 1.0);
        assert!(value("strata_wal_sync_latency_seconds_sum", "") > 0.0);
    }
    let (status, response) = http_request(
        server.addresses.http,
        "GET",
        "/metrics",
        "Accept: application/openmetrics-text; version=1.0.0\r\n",
    );
    assert_eq!(status, 200);
    assert!(response.contains("Content-Type: application/openmetrics-text; version=1.0.0"));
    assert!(body(&response).ends_with("# EOF\n"), "{response}");
}

#[test]
fn bad_http_requests_get_a_4xx_and_the_port_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::open(dir.path());
    let http = server.addresses.http;
    let (status, response) = http_request(http, "POST", "/", "Content-Length: 0\r\n");
    assert_eq!(status, 405, "{response}");
    assert!(response.contains("Allow: GET, HEAD\r\n"));
    let (status, response) = http_request(http, "GET", "/nope<script>", "");
    assert_eq!(status, 404, "{response}");
    let (status, response) = http_request(http, "HEAD", "/", "");
    assert_eq!(status, 200);
    assert!(response.contains("Content-Length: "));
    assert!(body(&response).is_empty(), "{response}");

    let raw = |bytes: &[u8]| -> String {
        let mut stream = TcpStream::connect(http).unwrap();
        stream.set_read_timeout(Some(REPLY_TIMEOUT)).unwrap();
        // The server may answer and close before it read everything: a reset is fine.
        let _ = stream.write_all(bytes);
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        String::from_utf8_lossy(&response).into_owned()
    };
    assert!(raw(b"GARBAGE\x00\x01 / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 400 "));
    let huge = format!("GET / HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(20_000));
    assert!(raw(huge.as_bytes()).starts_with("HTTP/1.1 431 "));
    // Half a request head, then the client leaves; or stalls: a 408 after the timeout.
    let mut leaving = TcpStream::connect(http).unwrap();
    leaving.write_all(b"GET / HT").unwrap();
    drop(leaving);
    assert!(raw(b"GET / HT").starts_with("HTTP/1.1 408 "));

    let (status, _) = http_request(http, "GET", "/", "");
    assert_eq!(status, 200);
    let http_stats = server.handle.snapshot().http;
    assert_eq!(http_stats.failed_requests, 5);
}

#[test]
fn backup_copies_a_local_database_and_a_served_one_on_the_servers_machine() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("db");
    let setup = strata()
        .args(["shell", "--data"])
        .arg(&data)
        .args(["-e", "create 't', 'f'; put 't', 'r1', 'f:q', 'v1'"])
        .output()
        .unwrap();
    assert_eq!(setup.status.code(), Some(0), "{setup:?}");

    // Local: the directory, closed.
    let local = root.path().join("backups").join("local");
    let made = strata()
        .args(["backup", "--data"])
        .arg(&data)
        .arg("--out")
        .arg(&local)
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(0), "{made:?}");
    let text = String::from_utf8_lossy(&made.stdout);
    assert!(text.contains("HFiles linked"), "{text}");
    // Again to the same place: refused, exit 1, the first copy untouched.
    let again = strata()
        .args(["backup", "--data"])
        .arg(&data)
        .arg("--out")
        .arg(&local)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("already exists"),
        "{again:?}"
    );

    // Through a server, while it serves: the path is the server's.
    let mut server = ServerProcess::start(&data, &[]);
    let admin = server.addresses.admin.to_string();
    let write = strata()
        .args([
            "shell",
            "--connect",
            &admin,
            "-e",
            "put 't', 'r2', 'f:q', 'v2'",
        ])
        .output()
        .unwrap();
    assert_eq!(write.status.code(), Some(0), "{write:?}");
    let served = root.path().join("backups").join("served");
    let made = strata()
        .args(["backup", "--connect", &admin, "--out"])
        .arg(&served)
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(0), "{made:?}");
    let status = server.terminate();
    assert!(status.success(), "{status:?}");

    let rows = |dir: &Path| {
        let db = Db::open_default(dir).unwrap();
        let n = db.table("t").unwrap().count(&Scan::new()).unwrap();
        db.close().unwrap();
        n
    };
    assert_eq!(rows(&local), 1);
    assert_eq!(rows(&served), 2);
}
