//! The client side of the admin port: what `strata shell --connect HOST:PORT` runs.
//!
//! [`AdminClient`] opens a session on a server and runs source text in it, copying the
//! output to a writer as it arrives; [`RemoteSession`] is that client as the interactive
//! loop's [`Runner`], so `--connect` gives the local shell's prompt, line editing and
//! multi-line statements (those stay on the client).

use std::io::{self, BufReader, BufWriter, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use super::wire::{
    self, Done, Hello, Language, PROTOCOL_VERSION, Reply, Request, Settings, SqlFormat, User,
    Welcome, WireError,
};
use crate::session::{Flow, InteractiveError, Runner, invalid_line_report};

/// Longest the client waits for the connection to be set up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a connected shell could not go on.
#[derive(Debug)]
pub enum ClientError {
    /// The address did not resolve, or no connection could be made to it.
    Connect {
        /// The address as given.
        address: String,
        /// Why.
        source: io::Error,
    },
    /// The connection failed, or the server sent something the protocol does not allow.
    Wire(WireError),
    /// The server refused the request and closed the connection (its words).
    Server(String),
    /// Writing the output failed.
    Output(io::Error),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Connect { address, source } => {
                write!(f, "cannot connect to {address}: {source}")
            }
            ClientError::Wire(WireError::Closed | WireError::Truncated) => {
                f.write_str("the server closed the connection")
            }
            ClientError::Wire(error) => write!(f, "talking to the server: {error}"),
            ClientError::Server(message) => write!(f, "the server refused: {message}"),
            ClientError::Output(error) => write!(f, "writing output: {error}"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<WireError> for ClientError {
    fn from(error: WireError) -> Self {
        ClientError::Wire(error)
    }
}

impl From<ClientError> for InteractiveError {
    fn from(error: ClientError) -> Self {
        match error {
            ClientError::Output(error) => InteractiveError::Output(error),
            other => InteractiveError::Server(other.to_string()),
        }
    }
}

/// What a shell asks of its session.
#[derive(Debug, Clone)]
pub struct SessionRequest {
    /// How output is printed.
    pub settings: Settings,
    /// Who runs the shell (`whoami`).
    pub user: User,
    /// Echo statements before their output (transcripts).
    pub echo: bool,
    /// Longest to wait for each frame of a reply; `None` waits as long as the statement
    /// runs (a major compaction may take hours).
    pub reply_timeout: Option<Duration>,
    /// What the session runs: shell statements or SQL.
    pub language: Language,
    /// How an SQL session prints results.
    pub sql_format: SqlFormat,
}

/// A shell session on a server.
pub struct AdminClient {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
    welcome: Welcome,
    settings: Settings,
    failures: u64,
}

impl std::fmt::Debug for AdminClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdminClient")
            .field("welcome", &self.welcome)
            .field("failures", &self.failures)
            .finish()
    }
}

impl AdminClient {
    /// Connects to `address` (`HOST:PORT`) and opens a session.
    pub fn connect(address: &str, request: SessionRequest) -> Result<AdminClient, ClientError> {
        let connect_error = |source| ClientError::Connect {
            address: address.to_owned(),
            source,
        };
        let mut last_error = io::Error::new(
            io::ErrorKind::NotFound,
            "the address resolves to nothing (give HOST:PORT)",
        );
        let mut connected = None;
        for candidate in address.to_socket_addrs().map_err(connect_error)? {
            match TcpStream::connect_timeout(&candidate, CONNECT_TIMEOUT) {
                Ok(stream) => {
                    connected = Some(stream);
                    break;
                }
                Err(error) => last_error = error,
            }
        }
        let stream = connected.ok_or_else(|| connect_error(last_error))?;
        let setup = |stream: &TcpStream| -> io::Result<()> {
            stream.set_nodelay(true)?;
            stream.set_read_timeout(request.reply_timeout)?;
            stream.set_write_timeout(request.reply_timeout)
        };
        setup(&stream).map_err(|error| ClientError::Wire(WireError::Io(error)))?;
        let reader = stream
            .try_clone()
            .map_err(|error| ClientError::Wire(WireError::Io(error)))?;
        let mut client = AdminClient {
            reader: BufReader::new(reader),
            writer: BufWriter::new(stream),
            welcome: Welcome {
                protocol: 0,
                server: String::new(),
                data: String::new(),
                language: Language::Shell,
            },
            settings: request.settings,
            failures: 0,
        };
        client.send(&Request::Hello(Hello {
            protocol: PROTOCOL_VERSION,
            client: format!("strata {}", env!("CARGO_PKG_VERSION")),
            settings: request.settings,
            user: Some(request.user),
            echo: request.echo,
            language: request.language,
            sql_format: request.sql_format,
        }))?;
        match client.receive()? {
            Reply::Welcome(welcome) => client.welcome = welcome,
            other => return Err(unexpected(&other)),
        }
        if client.welcome.language != request.language {
            // A server from before SQL sessions would run SQL as shell statements.
            return Err(ClientError::Server(format!(
                "{} serves no {:?} sessions (it is older than this client)",
                client.welcome.server, request.language
            )));
        }
        Ok(client)
    }

    /// What the server said when the session opened.
    pub fn welcome(&self) -> &Welcome {
        &self.welcome
    }

    /// Statements of the session that failed so far.
    pub fn failures(&self) -> u64 {
        self.failures
    }

    fn send(&mut self, request: &Request) -> Result<(), ClientError> {
        wire::write_request(&mut self.writer, request)
            .and_then(|()| self.writer.flush())
            .map_err(|error| ClientError::Wire(WireError::Io(error)))
    }

    fn receive(&mut self) -> Result<Reply, ClientError> {
        match wire::read_reply(&mut self.reader)? {
            Reply::Error(message) => Err(ClientError::Server(message)),
            reply => Ok(reply),
        }
    }

    /// Waits for the `Done` that ends a request, copying `Output` to `out` and
    /// `ErrorOutput` to `errors`.
    fn finish_request(
        &mut self,
        out: &mut dyn Write,
        errors: &mut dyn Write,
    ) -> Result<Done, ClientError> {
        loop {
            match self.receive()? {
                Reply::Output(bytes) => {
                    out.write_all(&bytes).map_err(ClientError::Output)?;
                }
                Reply::ErrorOutput(bytes) => {
                    out.flush().map_err(ClientError::Output)?;
                    errors.write_all(&bytes).map_err(ClientError::Output)?;
                    errors.flush().map_err(ClientError::Output)?;
                }
                Reply::Done(done) => {
                    out.flush().map_err(ClientError::Output)?;
                    self.failures = done.failures;
                    return Ok(done);
                }
                other => return Err(unexpected(&other)),
            }
        }
    }

    /// Runs the statements of `source` (bytes, as a script is read) on the server, copying
    /// their output to `out` as it arrives (error messages, which SQL sessions send apart,
    /// to standard error).
    pub fn run(&mut self, source: &[u8], out: &mut dyn Write) -> Result<Flow, ClientError> {
        self.run_with_errors(source, out, &mut io::stderr().lock())
    }

    /// As [`AdminClient::run`], with error messages copied to `errors`.
    pub fn run_with_errors(
        &mut self,
        source: &[u8],
        out: &mut dyn Write,
        errors: &mut dyn Write,
    ) -> Result<Flow, ClientError> {
        self.send(&Request::Run(source.to_vec()))?;
        let done = self.finish_request(out, errors)?;
        Ok(if done.exit {
            Flow::Exit
        } else {
            Flow::Continue
        })
    }

    /// Changes how output is printed, when it differs from what the session has.
    pub fn set_settings(&mut self, settings: Settings) -> Result<(), ClientError> {
        if settings == self.settings {
            return Ok(());
        }
        self.send(&Request::Settings(settings))?;
        self.finish_request(&mut io::sink(), &mut io::sink())?;
        self.settings = settings;
        Ok(())
    }
}

fn unexpected(reply: &Reply) -> ClientError {
    let what = match reply {
        Reply::Welcome(_) => "a second welcome",
        Reply::Output(_) | Reply::ErrorOutput(_) => "output outside a statement",
        Reply::Done(_) => "an end of statement before any was run",
        Reply::Error(_) => "an error",
    };
    ClientError::Wire(WireError::Malformed {
        kind: "reply",
        reason: format!("the server sent {what}"),
    })
}

/// A session on a server as the interactive loop's [`Runner`]: statements run there; lines
/// that are not UTF-8 are reported here (they never leave the terminal), and counted with the
/// server's failures.
#[derive(Debug)]
pub struct RemoteSession {
    client: AdminClient,
    local_failures: u64,
}

impl RemoteSession {
    /// The interactive loop over `client`.
    pub fn new(client: AdminClient) -> RemoteSession {
        RemoteSession {
            client,
            local_failures: 0,
        }
    }

    /// Statements that failed so far, on the server and here.
    pub fn failures(&self) -> u64 {
        self.client.failures() + self.local_failures
    }
}

impl Runner for RemoteSession {
    fn set_width(&mut self, width: usize) -> Result<(), InteractiveError> {
        let settings = Settings {
            width,
            ..self.client.settings
        };
        Ok(self.client.set_settings(settings)?)
    }

    fn run_source(&mut self, source: &str, out: &mut dyn Write) -> Result<Flow, InteractiveError> {
        Ok(self.client.run(source.as_bytes(), out)?)
    }

    fn report_invalid_line(&mut self, line: usize, out: &mut dyn Write) -> io::Result<()> {
        self.local_failures += 1;
        writeln!(out, "{}", invalid_line_report(line))
    }
}
