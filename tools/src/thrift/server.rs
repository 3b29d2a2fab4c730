//! The server: a listener, one thread per connection, and an orderly shutdown.
//!
//! Every accepted connection gets its own thread (up to [`ServerOptions::max_connections`];
//! a connection beyond that is closed at once), so no client waits for another's call
//! (`crate::net::Listener`). A connection's thread owns its [`Session`] (its scanners): they
//! close when the connection ends, whatever the reason. A malformed or oversized message closes that connection only,
//! after an `Exception` reply when its header could be read. [`ServerHandle::shutdown`] stops
//! the listener, shuts every connection's socket down and [`ThriftServer::run`] returns once
//! every connection thread has finished; the caller then closes the database.

use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use strata::{Db, Durability};

use super::codec::{DecodeError, MessageHeader, MessageType, Protocol, Reader};
use super::handler::{Counters, Gateway, Session};
use super::hbase::{
    self, Failure, Incoming, application_error, encode_application_exception, encode_reply,
};
use super::transport::{
    DETECTION_BYTES, Transport, WireFormat, detect_wire_format, read_frame, write_message,
};
use crate::net::{Connection, ConnectionReader, Listener, ListenerHandle, Service, Wait};

/// Default largest message (and frame) a connection may send or be sent: 64 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;
/// Default most connections served at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Default most scanners one connection may hold open.
pub const DEFAULT_MAX_SCANNERS_PER_CONNECTION: usize = 1024;
/// Default time a scanner may go unused before it is closed (HBase's scanner lease period).
pub const DEFAULT_SCANNER_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default longest pause inside a message before the connection is closed.
pub const DEFAULT_MESSAGE_STALL_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a connection waiting for its next message checks its scanners and the
/// shutdown flag.
const TICK: Duration = Duration::from_millis(250);
/// Longest a reply may take to be written before the connection is given up.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// Which transport or protocol the server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accept<T> {
    /// Whatever each client speaks, recognised from its first bytes.
    Auto,
    /// Only this one; a client speaking another gets an error and is disconnected.
    Only(T),
}

impl<T: PartialEq> Accept<T> {
    fn allows(&self, value: &T) -> bool {
        match self {
            Accept::Auto => true,
            Accept::Only(only) => only == value,
        }
    }
}

/// How a server listens and what it allows.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Address and port to listen on (port 0: any free port).
    pub bind: SocketAddr,
    /// Transports accepted.
    pub transport: Accept<Transport>,
    /// Protocols accepted.
    pub protocol: Accept<Protocol>,
    /// Largest message or frame, in bytes, either way.
    pub max_message_bytes: u64,
    /// Most connections served at once.
    pub max_connections: usize,
    /// Most scanners one connection may hold open.
    pub max_scanners_per_connection: usize,
    /// A scanner unused for this long is closed.
    pub scanner_idle_timeout: Duration,
    /// A connection that sends no byte for this long in the middle of a message is closed.
    pub message_stall_timeout: Duration,
    /// The durability of every mutation that asks for the WAL (`writeToWAL`, the default);
    /// `None`: each table's own. Mutations with `writeToWAL = false` skip the WAL.
    pub durability: Option<Durability>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 9090),
            transport: Accept::Auto,
            protocol: Accept::Auto,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_scanners_per_connection: DEFAULT_MAX_SCANNERS_PER_CONNECTION,
            scanner_idle_timeout: DEFAULT_SCANNER_IDLE_TIMEOUT,
            message_stall_timeout: DEFAULT_MESSAGE_STALL_TIMEOUT,
            durability: Some(Durability::AsyncWal),
        }
    }
}

pub use crate::net::LogSink;

/// A snapshot of the server's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerStats {
    /// Connections being served now.
    pub open_connections: usize,
    /// Scanners open now, on all connections.
    pub open_scanners: usize,
    /// Connections accepted since start.
    pub connections_accepted: u64,
    /// Connections closed at once because too many were open.
    pub connections_refused: u64,
    /// Calls answered.
    pub calls: u64,
    /// Connections closed because of a malformed or oversized message.
    pub malformed_messages: u64,
    /// Scanners closed for being idle.
    pub scanners_expired: u64,
}

/// What every connection shares: the gateway and the settings.
struct Shared {
    gateway: Gateway,
    options: ServerOptions,
    counters: Arc<Counters>,
}

impl Service for Shared {
    type Error = ConnectionError;

    fn serve(&self, stream: TcpStream, connection: &Connection) -> Result<(), ConnectionError> {
        serve_connection(self, connection, stream)
    }
}

/// A Thrift1 server over one database.
pub struct ThriftServer {
    listener: Listener,
    shared: Arc<Shared>,
}

/// Controls a running server from another thread.
#[derive(Clone)]
pub struct ServerHandle {
    listener: ListenerHandle,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("local_addr", &self.listener.local_addr())
            .finish()
    }
}

impl ServerHandle {
    /// Stops accepting, disconnects every client and makes [`ThriftServer::run`] return once
    /// every connection thread has finished. Calls in progress finish first.
    pub fn shutdown(&self) {
        self.listener.shutdown();
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr()
    }

    /// The server's counters now.
    pub fn stats(&self) -> ServerStats {
        let counters = &self.shared.counters;
        let connections = self.listener.stats();
        ServerStats {
            open_connections: connections.open,
            open_scanners: counters.open_scanners.load(Ordering::SeqCst),
            connections_accepted: connections.accepted,
            connections_refused: connections.refused,
            calls: counters.calls.load(Ordering::SeqCst),
            malformed_messages: counters.malformed_messages.load(Ordering::SeqCst),
            scanners_expired: counters.scanners_expired.load(Ordering::SeqCst),
        }
    }
}

impl ThriftServer {
    /// Binds the listener. Nothing is served until [`ThriftServer::run`].
    pub fn bind(db: Db, options: ServerOptions, log: LogSink) -> io::Result<ThriftServer> {
        let listener = Listener::bind(options.bind, "thrift-conn", options.max_connections, log)?;
        let counters = Arc::new(Counters::default());
        let max_reply_bytes = usize::try_from(options.max_message_bytes / 2).unwrap_or(usize::MAX);
        let gateway = Gateway::new(
            db,
            options.durability,
            options.scanner_idle_timeout,
            options.max_scanners_per_connection,
            max_reply_bytes,
            counters.clone(),
        );
        Ok(ThriftServer {
            listener,
            shared: Arc::new(Shared {
                gateway,
                options,
                counters,
            }),
        })
    }

    /// The address the server listens on (with the port chosen when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr()
    }

    /// A handle to stop the server and read its counters.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            listener: self.listener.handle(),
            shared: self.shared.clone(),
        }
    }

    /// Serves until [`ServerHandle::shutdown`]; returns when every connection has ended.
    pub fn run(self) -> io::Result<()> {
        self.listener.run(self.shared)
    }
}

/// Why a connection ended early.
#[derive(Debug)]
pub(crate) enum ConnectionError {
    /// The socket failed (reset, timed out writing).
    Io(io::Error),
    /// The client sent a message that could not be decoded, or was too large.
    Malformed(DecodeError),
    /// The client speaks a transport or protocol the server was told not to accept, or
    /// something that is no Thrift at all.
    Refused(String),
}

impl std::fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectionError::Io(error) => write!(f, "{error}"),
            ConnectionError::Malformed(error) => write!(f, "malformed message: {error}"),
            ConnectionError::Refused(reason) => f.write_str(reason),
        }
    }
}

impl From<io::Error> for ConnectionError {
    fn from(error: io::Error) -> Self {
        ConnectionError::Io(error)
    }
}

/// A decoded message, or why it could not be, with its header when that much was read.
enum Received {
    Message(Incoming),
    Malformed {
        header: Option<MessageHeader>,
        error: DecodeError,
    },
}

/// Serves one connection until it closes, the server shuts down or a message is malformed.
fn serve_connection(
    shared: &Shared,
    connection: &Connection,
    stream: TcpStream,
) -> Result<(), ConnectionError> {
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let mut writer = stream.try_clone()?;
    let mut reader = ConnectionReader::new(stream, TICK, shared.options.message_stall_timeout)?;
    let mut session = Session::new();
    let mut format: Option<WireFormat> = None;
    loop {
        shared
            .gateway
            .expire_idle_scanners(&mut session, Instant::now());
        if connection.is_shutting_down() {
            return Ok(());
        }
        match reader.wait_for_message()? {
            Wait::Closed => return Ok(()),
            Wait::Tick => continue,
            Wait::Ready => {}
        }
        let format = match format {
            Some(format) => format,
            None => {
                let detected = detect(shared, &mut reader, &mut writer)?;
                *format.insert(detected)
            }
        };
        let received = receive(&mut reader, format, shared.options.max_message_bytes);
        let incoming = match received {
            Received::Message(incoming) => incoming,
            Received::Malformed { header, error } => {
                shared
                    .counters
                    .malformed_messages
                    .fetch_add(1, Ordering::SeqCst);
                if let Some(header) = header {
                    let reply = encode_application_exception(
                        format.protocol,
                        &header.name,
                        header.sequence_id,
                        application_error::PROTOCOL_ERROR,
                        &format!("strata could not read the arguments: {error}"),
                    );
                    if let Ok(reply) = reply {
                        let _ = write_message(&mut writer, format.transport, &reply);
                    }
                }
                return Err(ConnectionError::Malformed(error));
            }
        };
        let reply = answer(shared, &mut session, format.protocol, incoming);
        if let Some(reply) = reply {
            write_message(&mut writer, format.transport, &reply)?;
            writer.flush()?;
        }
    }
}

/// Recognises what the client speaks from its first bytes; refuses (with an error reply in
/// the client's own format when possible) what the server does not accept.
fn detect(
    shared: &Shared,
    reader: &mut ConnectionReader,
    writer: &mut TcpStream,
) -> Result<WireFormat, ConnectionError> {
    let prefix = reader.peek(DETECTION_BYTES)?;
    let Some(format) = detect_wire_format(prefix) else {
        shared
            .counters
            .malformed_messages
            .fetch_add(1, Ordering::SeqCst);
        return Err(ConnectionError::Refused(format!(
            "the first bytes {:02x?} are no Thrift message",
            prefix
        )));
    };
    let options = &shared.options;
    if options.transport.allows(&format.transport) && options.protocol.allows(&format.protocol) {
        return Ok(format);
    }
    let expected = describe_accepted(options);
    let reason = format!("the client speaks {format}; this server accepts {expected}");
    // Answer the first call in the client's own format, so that it sees why.
    if let Received::Message(Incoming::Call { header, .. } | Incoming::UnknownMethod { header }) =
        receive(reader, format, options.max_message_bytes)
    {
        let reply = encode_application_exception(
            format.protocol,
            &header.name,
            header.sequence_id,
            application_error::PROTOCOL_ERROR,
            &format!("strata thrift: {reason}"),
        );
        if let Ok(reply) = reply {
            let _ = write_message(writer, format.transport, &reply);
        }
    }
    Err(ConnectionError::Refused(reason))
}

fn describe_accepted(options: &ServerOptions) -> String {
    let transport = match options.transport {
        Accept::Auto => "any transport".to_owned(),
        Accept::Only(transport) => format!("{} transport", transport.name()),
    };
    let protocol = match options.protocol {
        Accept::Auto => "any protocol".to_owned(),
        Accept::Only(protocol) => format!("{} protocol", protocol.name()),
    };
    format!("{transport}, {protocol}")
}

/// Reads one message in `format`, within `max_message_bytes`.
fn receive(reader: &mut ConnectionReader, format: WireFormat, max_message_bytes: u64) -> Received {
    match format.transport {
        Transport::Buffered => {
            let mut message = Reader::new(&mut *reader, format.protocol, max_message_bytes);
            decode_call(&mut message)
        }
        Transport::Framed => {
            let frame = match read_frame(reader, max_message_bytes) {
                Ok(frame) => frame,
                Err(error) => {
                    return Received::Malformed {
                        header: None,
                        error,
                    };
                }
            };
            let mut message = Reader::new(&frame[..], format.protocol, frame.len() as u64);
            let received = decode_call(&mut message);
            let left = message.remaining_bytes();
            match received {
                Received::Message(Incoming::Call { header, .. }) if left > 0 => {
                    Received::Malformed {
                        header: Some(header),
                        error: DecodeError::Invalid {
                            reason: format!("the frame has {left} bytes after its message"),
                        },
                    }
                }
                other => other,
            }
        }
    }
}

fn decode_call<R: std::io::Read>(reader: &mut Reader<R>) -> Received {
    let header = match reader.read_message_begin() {
        Ok(header) => header,
        Err(error) => {
            return Received::Malformed {
                header: None,
                error,
            };
        }
    };
    let kept = header.clone();
    match hbase::read_call_after(reader, header) {
        Ok(incoming) => Received::Message(incoming),
        Err(error) => Received::Malformed {
            header: Some(kept),
            error,
        },
    }
}

/// The reply to one message (`None` for a oneway call).
fn answer(
    shared: &Shared,
    session: &mut Session,
    protocol: Protocol,
    incoming: Incoming,
) -> Option<Vec<u8>> {
    let max_message_bytes = shared.options.max_message_bytes;
    match incoming {
        Incoming::UnknownMethod { header } => {
            let message = format!(
                "Invalid method name: '{}' (not a method of HBase's Thrift1 interface)",
                header.name
            );
            encode_application_exception(
                protocol,
                &header.name,
                header.sequence_id,
                application_error::UNKNOWN_METHOD,
                &message,
            )
            .ok()
        }
        Incoming::Call { header, call } => {
            let oneway = header.kind == MessageType::Oneway;
            let throws = call.throws();
            let result = shared.gateway.handle(session, call);
            if oneway {
                return None;
            }
            let encoded = encode_reply(protocol, &header.name, header.sequence_id, throws, &result);
            let too_large = |size: Option<usize>| {
                let detail = size.map_or_else(
                    || "more than Thrift's lengths allow".to_owned(),
                    |size| format!("{size} bytes"),
                );
                Failure::Io(format!(
                    "the reply would be {detail}, over the limit of {max_message_bytes} bytes \
                     (--max-message-mb); ask for fewer rows or columns"
                ))
            };
            let failure = match encoded {
                Ok(reply) if reply.len() as u64 <= max_message_bytes => return Some(reply),
                Ok(reply) => too_large(Some(reply.len())),
                Err(_) => too_large(None),
            };
            encode_reply(
                protocol,
                &header.name,
                header.sequence_id,
                throws,
                &Err(failure),
            )
            .ok()
        }
    }
}
