//! Shared by the server's tests: a `strata server` in this process on free loopback ports,
//! shells connected to it, and the `strata server` binary as a child process.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use strata::{Clock, Db, DbOptions};
use strata_tools::server::admin::{AdminOptions, SessionSetup};
use strata_tools::server::client::{AdminClient, SessionRequest};
use strata_tools::server::events::RecentEvents;
use strata_tools::server::http::HttpOptions;
use strata_tools::server::snapshot::Addresses;
use strata_tools::server::wire::{Language, Settings, SqlFormat, Timestamps, User};
use strata_tools::server::{Server, ServerHandle, ServerOptions};

/// How long a test waits for any one reply.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// Port 0 on loopback: any free port.
pub fn any_port() -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)
}

/// Options with every port on a free loopback port.
pub fn loopback_options() -> ServerOptions {
    let mut options = ServerOptions::default();
    options.thrift.bind = any_port();
    options.admin.bind = any_port();
    options.http.bind = any_port();
    options
}

/// A server over `db` in this process, serving on a thread of its own.
pub struct TestServer {
    pub db: Db,
    pub handle: ServerHandle,
    pub addresses: Addresses,
    pub events: Arc<RecentEvents>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    /// Serves `db` (opened with `clock`) with `options`.
    pub fn start(db: Db, clock: Arc<dyn Clock>, options: ServerOptions) -> TestServer {
        let events = RecentEvents::new(100);
        let server = Server::bind(db.clone(), clock, options, events.clone()).unwrap();
        let handle = server.handle();
        let addresses = server.addresses();
        let thread = std::thread::spawn(move || server.run());
        TestServer {
            db,
            handle,
            addresses,
            events,
            thread: Some(thread),
        }
    }

    /// A server over a fresh database in `dir`, with the defaults and free loopback ports.
    pub fn open(dir: &Path) -> TestServer {
        TestServer::open_with(dir, |_| {})
    }

    /// [`TestServer::open`], after `adjust` changed the options.
    pub fn open_with(dir: &Path, adjust: impl FnOnce(&mut ServerOptions)) -> TestServer {
        let db_options = DbOptions::default();
        let clock = db_options.clock.clone();
        let db = Db::open(dir, db_options).unwrap();
        let mut options = loopback_options();
        adjust(&mut options);
        TestServer::start(db, clock, options)
    }

    /// A shell session on the server, printing timestamps in milliseconds, 0 columns wide.
    pub fn shell(&self) -> AdminClient {
        self.shell_with(false)
    }

    /// A shell session that echoes each statement (`strata> ...`) before its output.
    pub fn shell_with(&self, echo: bool) -> AdminClient {
        AdminClient::connect(&self.addresses.admin.to_string(), session_request(echo)).unwrap()
    }

    /// Runs `source` in `shell` and returns the output.
    pub fn run(shell: &mut AdminClient, source: &str) -> String {
        let mut out = Vec::new();
        shell.run(source.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Stops the server and waits for it; the database stays open.
    pub fn stop(&mut self) {
        self.handle.shutdown();
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap().unwrap();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.handle.shutdown();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the tests' shells ask for: `whoami` as the transcripts expect it.
pub fn session_request(echo: bool) -> SessionRequest {
    SessionRequest {
        settings: Settings {
            timestamps: Timestamps::Millis,
            width: 0,
        },
        user: User {
            name: "strata".into(),
            groups: vec!["strata".into(), "hbase".into()],
        },
        echo,
        reply_timeout: Some(REPLY_TIMEOUT),
        language: Language::Shell,
        sql_format: SqlFormat::Table,
    }
}

/// Admin options whose sessions move `clock` 1 ms before each statement (as the transcript
/// tests' local sessions do).
pub fn ticking_sessions(clock: Arc<strata::ManualClock>) -> AdminOptions {
    let setup: SessionSetup = Arc::new(move |session| {
        let tick = clock.clone();
        session.before_each_statement(move || tick.advance(1));
    });
    AdminOptions {
        bind: any_port(),
        session_setup: Some(setup),
        ..AdminOptions::default()
    }
}

/// HTTP options on a free loopback port.
pub fn http_options() -> HttpOptions {
    HttpOptions {
        bind: any_port(),
        ..HttpOptions::default()
    }
}

/// `strata server --data DATA` on free loopback ports.
pub fn server_command(data: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_strata"));
    command.args(["server", "--data"]).arg(data).args([
        "--thrift-port",
        "0",
        "--admin-port",
        "0",
        "--http-port",
        "0",
    ]);
    command
}

/// The `strata server` binary serving `data` on free loopback ports; killed when dropped.
pub struct ServerProcess {
    pub child: Child,
    pub addresses: Addresses,
    stderr: Arc<std::sync::Mutex<String>>,
}

impl ServerProcess {
    /// Starts it with `extra` arguments and waits for its address line.
    pub fn start(data: &Path, extra: &[&str]) -> ServerProcess {
        let mut child = server_command(data)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(std::sync::Mutex::new(String::new()));
        let sink = stderr.clone();
        let mut errors = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            let mut line = String::new();
            while errors.read_line(&mut line).is_ok_and(|read| read > 0) {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let addresses = parse_address_line(&line).unwrap_or_else(|| {
            let _ = child.kill();
            panic!(
                "no address line from strata server: {line:?}; stderr:\n{}",
                stderr.lock().unwrap()
            )
        });
        ServerProcess {
            child,
            addresses,
            stderr,
        }
    }

    /// What it logged so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends SIGTERM and waits (bounded) for the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = i32::try_from(self.child.id()).unwrap();
        // SAFETY: kill takes no pointer; the pid is our own child's, not yet waited for.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                started.elapsed() < REPLY_TIMEOUT,
                "strata server did not stop on SIGTERM; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The addresses of `strata server listening thrift=A admin=B http=C`.
pub fn parse_address_line(line: &str) -> Option<Addresses> {
    let rest = line.trim_end().strip_prefix("strata server listening ")?;
    let mut thrift = None;
    let mut admin = None;
    let mut http = None;
    for field in rest.split(' ') {
        let (name, address) = field.split_once('=')?;
        let address: SocketAddr = address.parse().ok()?;
        match name {
            "thrift" => thrift = Some(address),
            "admin" => admin = Some(address),
            "http" => http = Some(address),
            _ => return None,
        }
    }
    Some(Addresses {
        thrift: thrift?,
        admin: admin?,
        http: http?,
    })
}

/// A plain HTTP/1.1 GET (or other `method`) of `path`; returns the status and the whole
/// response text.
pub fn http_request(address: SocketAddr, method: &str, path: &str, headers: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(REPLY_TIMEOUT)).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\n{headers}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, response)
}

/// The body of an HTTP response.
pub fn body(response: &str) -> &str {
    response.split_once("\r\n\r\n").map_or("", |(_, body)| body)
}
