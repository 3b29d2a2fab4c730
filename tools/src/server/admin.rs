//! The admin port: `strata shell --connect` runs its statements here.
//!
//! Each connection gets a shell [`Session`] of its own on the server (its own table
//! variables, failure count and print settings) over the server's database, and runs the
//! source text it is sent ([`super::wire`]): the output is what a local shell prints, by
//! construction, streamed back in `Output` frames. Connections are served on their own threads
//! (`crate::net::Listener`, bounded), so a long scan in one does not hold up the others; a
//! client that goes away mid-scan makes the scan's next output chunk fail, which ends that
//! session's work. A malformed, unknown or oversized request gets an `Error` reply saying why
//! and closes only its own connection.

use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use strata::{Clock, Db};

use super::wire::{
    self, DEFAULT_MAX_REQUEST_BYTES, Done, Hello, Language, OutputFrames, PROTOCOL_VERSION, Reply,
    Request, Welcome, WireError,
};
use crate::exec::{ExecOptions, Executor, UserIdentity};
use crate::net::{Connection, ConnectionReader, Service, Wait};
use crate::session::{Flow, Session, StatementReport};
use crate::shell::{COMMAND_GROUPS, TableLayout};

/// The admin port's default: HBase's master RPC port.
pub const DEFAULT_ADMIN_PORT: u16 = 16000;
/// Default most shells connected at once.
pub const DEFAULT_MAX_ADMIN_CONNECTIONS: usize = 64;
/// Default longest pause inside a request before the connection is closed.
pub const DEFAULT_REQUEST_STALL_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a connection waiting for its next request checks for a shutdown.
const TICK: Duration = Duration::from_millis(250);
/// Longest an output frame may take to be written before the client is given up.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// A hook run on every new session before its first statement (tests use it to fix the
/// clock's steps; a deployment could set defaults).
pub type SessionSetup = Arc<dyn Fn(&mut Session) + Send + Sync>;

/// How the admin port listens and what it allows.
#[derive(Clone)]
pub struct AdminOptions {
    /// Address and port to listen on (port 0: any free port).
    pub bind: SocketAddr,
    /// Most shells connected at once; more are told so and closed.
    pub max_connections: usize,
    /// Largest request (a script sent at once), in bytes.
    pub max_request_bytes: u64,
    /// A connection that sends no byte for this long in the middle of a request is closed.
    pub request_stall_timeout: Duration,
    /// Run on every new session.
    pub session_setup: Option<SessionSetup>,
}

impl std::fmt::Debug for AdminOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdminOptions")
            .field("bind", &self.bind)
            .field("max_connections", &self.max_connections)
            .field("max_request_bytes", &self.max_request_bytes)
            .field("request_stall_timeout", &self.request_stall_timeout)
            .field("session_setup", &self.session_setup.is_some())
            .finish()
    }
}

impl Default for AdminOptions {
    fn default() -> Self {
        AdminOptions {
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), DEFAULT_ADMIN_PORT),
            max_connections: DEFAULT_MAX_ADMIN_CONNECTIONS,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            request_stall_timeout: DEFAULT_REQUEST_STALL_TIMEOUT,
            session_setup: None,
        }
    }
}

/// Counters of the admin port.
#[derive(Debug, Default)]
pub struct AdminCounters {
    /// `Run` requests served.
    pub requests: AtomicU64,
    /// Commands run (statements that parsed).
    pub statements: AtomicU64,
    /// Commands that failed.
    pub failed_statements: AtomicU64,
    /// Connections closed because of a malformed, unknown or oversized request.
    pub malformed_requests: AtomicU64,
}

/// Why an admin connection ended early.
#[derive(Debug)]
pub(crate) enum AdminError {
    /// The socket failed, or the client went away in the middle of a reply.
    Io(io::Error),
    /// The client sent what the protocol does not allow (it was told why).
    Refused(String),
}

impl std::fmt::Display for AdminError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdminError::Io(error) => write!(f, "{error}"),
            AdminError::Refused(reason) => f.write_str(reason),
        }
    }
}

impl From<io::Error> for AdminError {
    fn from(error: io::Error) -> Self {
        AdminError::Io(error)
    }
}

/// The admin port's [`Service`].
pub(crate) struct AdminService {
    db: Db,
    clock: Arc<dyn Clock>,
    options: AdminOptions,
    counters: Arc<AdminCounters>,
}

impl AdminService {
    pub(crate) fn new(
        db: Db,
        clock: Arc<dyn Clock>,
        options: AdminOptions,
        counters: Arc<AdminCounters>,
    ) -> AdminService {
        AdminService {
            db,
            clock,
            options,
            counters,
        }
    }

    /// Waits for the next request; `None` when the client closed the connection between
    /// requests or the server is shutting down. A request that cannot be read is answered
    /// with an `Error` saying why and ends the connection.
    fn next_request(
        &self,
        reader: &mut ConnectionReader,
        writer: &mut TcpStream,
        connection: &Connection,
    ) -> Result<Option<Request>, AdminError> {
        loop {
            if connection.is_shutting_down() {
                return Ok(None);
            }
            match reader.wait_for_message()? {
                Wait::Closed => return Ok(None),
                Wait::Tick => continue,
                Wait::Ready => {}
            }
            return match wire::read_request(reader, self.options.max_request_bytes) {
                Ok(request) => Ok(Some(request)),
                Err(WireError::Closed) => Ok(None),
                Err(WireError::Io(error)) => Err(AdminError::Io(error)),
                // The client left mid-request: nothing of it runs, there is no one to tell.
                Err(WireError::Truncated) => Err(AdminError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the client left in the middle of a request",
                ))),
                Err(error) => Err(self.refuse_request(writer, error.to_string())),
            };
        }
    }

    /// True when the connection's first bytes are printable text: someone pointed a browser,
    /// curl or telnet at the admin port (a frame's length header is never four letters).
    fn sends_text(reader: &mut ConnectionReader) -> io::Result<bool> {
        let buffered = reader.peek(wire::FRAME_HEADER_BYTES)?;
        Ok(buffered
            .get(..wire::FRAME_HEADER_BYTES)
            .is_some_and(|start| {
                start
                    .iter()
                    .all(|byte| byte.is_ascii_graphic() || *byte == b' ')
            }))
    }

    /// Tells the client why its request is refused; the connection then ends.
    fn refuse_request(&self, writer: &mut TcpStream, reason: String) -> AdminError {
        self.counters
            .malformed_requests
            .fetch_add(1, Ordering::Relaxed);
        // The client may be gone already; the connection ends either way.
        let _ = wire::write_reply(writer, &Reply::Error(reason.clone()));
        AdminError::Refused(reason)
    }

    /// A session for a client that said `hello`.
    fn session(&self, hello: &Hello, connection: &Connection) -> Session {
        let options = ExecOptions {
            timestamps: hello.settings.timestamps.into(),
            layout: TableLayout::new(hello.settings.width),
        };
        let mut executor = Executor::with_db(self.db.clone(), self.clock.clone(), options);
        if let Some(user) = &hello.user {
            executor.set_user(UserIdentity::from(user.clone()));
        }
        let mut session = Session::new(executor).with_echo(hello.echo);
        let counters = self.counters.clone();
        let id = connection.id;
        let peer = connection.peer.clone();
        session.after_each_statement(move |report: &StatementReport<'_>| {
            counters.statements.fetch_add(1, Ordering::Relaxed);
            if report.failed {
                counters.failed_statements.fetch_add(1, Ordering::Relaxed);
            }
            log_statement(id, &peer, report);
        });
        if let Some(setup) = &self.options.session_setup {
            setup(&mut session);
        }
        session
    }
}

/// Logs a command a session ran: at info the ones that change tables, namespaces or regions
/// (an operator wants to see who flushed or altered what), at debug reads and writes of
/// cells (too many to log by default).
fn log_statement(connection: u64, peer: &str, report: &StatementReport<'_>) {
    let name = report.command.name();
    let elapsed_us = u64::try_from(report.elapsed.as_micros()).unwrap_or(u64::MAX);
    let administrative = COMMAND_GROUPS
        .iter()
        .filter(|(group, _)| matches!(*group, "ddl" | "namespace" | "snapshots" | "tools"))
        .any(|(_, commands)| commands.contains(&name));
    let read_only = matches!(
        name,
        "describe"
            | "exists"
            | "get_table"
            | "is_disabled"
            | "is_enabled"
            | "list"
            | "list_regions"
            | "describe_namespace"
            | "list_namespace"
            | "list_namespace_tables"
            | "get_splits"
            | "normalizer_enabled"
            | "list_snapshots"
            | "list_table_snapshots"
    );
    if administrative && !read_only {
        tracing::info!(
            target: "strata::server::admin",
            connection,
            peer,
            failed = report.failed,
            elapsed_us,
            "shell ran {name}"
        );
    } else {
        tracing::debug!(
            target: "strata::server::admin",
            connection,
            peer,
            failed = report.failed,
            elapsed_us,
            "shell ran {name}"
        );
    }
}

impl Service for AdminService {
    type Error = AdminError;

    fn serve(&self, stream: TcpStream, connection: &Connection) -> Result<(), AdminError> {
        stream.set_nodelay(true)?;
        stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
        let mut writer = stream.try_clone()?;
        let mut reader = ConnectionReader::new(stream, TICK, self.options.request_stall_timeout)?;
        if let Wait::Ready = reader.wait_for_message()?
            && Self::sends_text(&mut reader)?
        {
            return Err(self.refuse_request(
                &mut writer,
                "this is the admin port of strata server, for `strata shell --connect`; it got \
                 text (an HTTP request?): the status page and /metrics are on the HTTP port"
                    .into(),
            ));
        }
        let hello = match self.next_request(&mut reader, &mut writer, connection)? {
            None => return Ok(()),
            Some(Request::Hello(hello)) => hello,
            Some(_) => {
                return Err(self.refuse_request(
                    &mut writer,
                    "the first request must be a hello (is this a strata admin client?)".into(),
                ));
            }
        };
        if hello.protocol != PROTOCOL_VERSION {
            return Err(self.refuse_request(
                &mut writer,
                format!(
                    "this server speaks admin protocol {PROTOCOL_VERSION}, the client {} \
                     (use a strata shell of the server's version)",
                    hello.protocol
                ),
            ));
        }
        tracing::info!(
            target: "strata::server::admin",
            connection = connection.id,
            peer = connection.peer.as_str(),
            client = hello.client.as_str(),
            "shell connected"
        );
        if hello.language == Language::Sql {
            return self.serve_sql(&hello, &mut reader, &mut writer, connection);
        }
        let mut session = self.session(&hello, connection);
        self.welcome(&mut writer, Language::Shell)?;
        let served = self.serve_session(&mut session, &mut reader, &mut writer, connection);
        tracing::info!(
            target: "strata::server::admin",
            connection = connection.id,
            peer = connection.peer.as_str(),
            failures = session.failures(),
            "shell disconnected"
        );
        served
    }

    fn refuse(&self, stream: &mut TcpStream, reason: &str) {
        // A refused connection's first request is not read: the error is there to be read
        // as the reply to its hello.
        let _ = stream.set_write_timeout(Some(TICK));
        let _ = wire::write_reply(
            stream,
            &Reply::Error(format!("the server is busy: {reason}")),
        );
    }
}

impl AdminService {
    fn welcome(&self, writer: &mut TcpStream, language: Language) -> Result<(), AdminError> {
        wire::write_reply(
            writer,
            &Reply::Welcome(Welcome {
                protocol: PROTOCOL_VERSION,
                server: format!("strata {}", env!("CARGO_PKG_VERSION")),
                data: self.db.path().display().to_string(),
                language,
            }),
        )?;
        Ok(())
    }

    /// Serves an SQL session (`strata sql --connect`): each `Run` is SQL text run by a
    /// strata-sql context over the server's database, results printed in the hello's format
    /// as `Output`, failed statements' messages as `ErrorOutput`; the statements after a
    /// failed one still run, as in a local `strata sql`. The context sees the tables and
    /// mappings of the database as they are when each statement is planned.
    fn serve_sql(
        &self,
        hello: &Hello,
        reader: &mut ConnectionReader,
        writer: &mut TcpStream,
        connection: &Connection,
    ) -> Result<(), AdminError> {
        let context =
            strata_sql::SqlContext::with_config(self.db.clone(), crate::sql::session_config(0))
                .map_err(|error| {
                    self.refuse_request(writer, format!("cannot start SQL: {error}"))
                })?;
        let mut shell = crate::sql::SqlShell::new(context, hello.sql_format.into())
            .map_err(|error| self.refuse_request(writer, error))?;
        self.welcome(writer, Language::Sql)?;
        tracing::info!(
            target: "strata::server::admin",
            connection = connection.id,
            peer = connection.peer.as_str(),
            "sql session opened"
        );
        while let Some(request) = self.next_request(reader, writer, connection)? {
            match request {
                Request::Run(source) => {
                    self.counters.requests.fetch_add(1, Ordering::Relaxed);
                    let before = shell.failures();
                    let mut errors = Vec::new();
                    let mut output = OutputFrames::new(writer);
                    match std::str::from_utf8(&source) {
                        Ok(text) => shell.run_text(text, &mut output, &mut errors)?,
                        Err(error) => {
                            shell.count_failure();
                            writeln!(errors, "Error: the statements are not UTF-8: {error}")?;
                        }
                    }
                    output.finish()?;
                    if !errors.is_empty() {
                        wire::write_reply(writer, &Reply::ErrorOutput(errors))?;
                    }
                    let failed = shell.failures() - before;
                    self.counters
                        .failed_statements
                        .fetch_add(failed, Ordering::Relaxed);
                }
                // Terminal settings shape shell output only.
                Request::Settings(_) => {}
                Request::Hello(_) => {
                    return Err(self.refuse_request(writer, "a second hello".into()));
                }
            }
            wire::write_reply(
                writer,
                &Reply::Done(Done {
                    failures: shell.failures(),
                    exit: false,
                }),
            )?;
            writer.flush()?;
        }
        tracing::info!(
            target: "strata::server::admin",
            connection = connection.id,
            peer = connection.peer.as_str(),
            failures = shell.failures(),
            "sql session closed"
        );
        Ok(())
    }

    /// Serves a session's requests until the client leaves, runs `exit` or the server stops.
    fn serve_session(
        &self,
        session: &mut Session,
        reader: &mut ConnectionReader,
        writer: &mut TcpStream,
        connection: &Connection,
    ) -> Result<(), AdminError> {
        while let Some(request) = self.next_request(reader, writer, connection)? {
            let flow = match request {
                Request::Run(source) => {
                    self.counters.requests.fetch_add(1, Ordering::Relaxed);
                    let mut output = OutputFrames::new(writer);
                    // An error here is the client gone (or too slow to read) mid-output: the
                    // rest of the request is abandoned with the connection.
                    let flow = session.run_bytes(&source, &mut output)?;
                    output.finish()?;
                    flow
                }
                Request::Settings(settings) => {
                    session.executor_mut().set_options(ExecOptions {
                        timestamps: settings.timestamps.into(),
                        layout: TableLayout::new(settings.width),
                    });
                    Flow::Continue
                }
                Request::Hello(_) => {
                    return Err(self.refuse_request(writer, "a second hello".into()));
                }
            };
            let exit = flow == Flow::Exit;
            wire::write_reply(
                writer,
                &Reply::Done(Done {
                    failures: session.failures(),
                    exit,
                }),
            )?;
            writer.flush()?;
            if exit {
                return Ok(());
            }
        }
        Ok(())
    }
}
