//! The server: a listener, one thread per connection, and an orderly shutdown.
//!
//! Every accepted connection gets its own thread (up to [`ServerOptions::max_connections`];
//! a connection beyond that is closed at once), so no client waits for another's call. A
//! connection's thread owns its [`Session`] (its scanners): they close when the connection
//! ends, whatever the reason. A malformed or oversized message closes that connection only,
//! after an `Exception` reply when its header could be read. [`ServerHandle::shutdown`] stops
//! the listener, shuts every connection's socket down and [`ThriftServer::run`] returns once
//! every connection thread has finished; the caller then closes the database.

use std::collections::HashMap;
use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use strata::{Db, Durability};

use super::codec::{DecodeError, MessageHeader, MessageType, Protocol, Reader};
use super::handler::{Counters, Gateway, Session};
use super::hbase::{
    self, Failure, Incoming, application_error, encode_application_exception, encode_reply,
};
use super::transport::{
    ConnectionReader, DETECTION_BYTES, Transport, Wait, WireFormat, detect_wire_format, read_frame,
    write_message,
};

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
/// Pause after a failed `accept` (out of descriptors, say) before the next one.
const ACCEPT_RETRY_PAUSE: Duration = Duration::from_millis(100);

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

/// Where the server reports what happens to connections (the library prints nothing itself;
/// `strata thrift` prints these lines on stderr).
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

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

/// What the listener and every connection share.
struct Shared {
    gateway: Gateway,
    options: ServerOptions,
    counters: Arc<Counters>,
    shutting_down: AtomicBool,
    /// A clone of every open connection's socket, to shut them down. A connection's thread
    /// removes its entry as its last act, so an empty map means every connection ended.
    connections: Mutex<HashMap<u64, TcpStream>>,
    /// Signalled whenever a connection ends.
    connection_ended: Condvar,
    log: LogSink,
    local_addr: SocketAddr,
}

impl Shared {
    fn log(&self, line: &str) {
        (self.log)(line);
    }

    fn lock_connections(&self) -> std::sync::MutexGuard<'_, HashMap<u64, TcpStream>> {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until every connection thread has ended.
    fn wait_for_connections(&self) {
        let mut connections = self.lock_connections();
        while !connections.is_empty() {
            connections = self
                .connection_ended
                .wait(connections)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// A Thrift1 server over one database.
pub struct ThriftServer {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// Controls a running server from another thread.
#[derive(Clone)]
pub struct ServerHandle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("local_addr", &self.shared.local_addr)
            .finish()
    }
}

impl ServerHandle {
    /// Stops accepting, disconnects every client and makes [`ThriftServer::run`] return once
    /// every connection thread has finished. Calls in progress finish first.
    pub fn shutdown(&self) {
        if self.shared.shutting_down.swap(true, Ordering::SeqCst) {
            return;
        }
        for stream in self.shared.lock_connections().values() {
            // A connection that already closed has nothing to shut down.
            let _ = stream.shutdown(Shutdown::Both);
        }
        // Wake the listener's blocking accept with a connection of our own.
        let _ = TcpStream::connect_timeout(&wake_address(self.shared.local_addr), TICK);
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.local_addr
    }

    /// The server's counters now.
    pub fn stats(&self) -> ServerStats {
        let counters = &self.shared.counters;
        ServerStats {
            open_connections: counters.open_connections.load(Ordering::SeqCst),
            open_scanners: counters.open_scanners.load(Ordering::SeqCst),
            connections_accepted: counters.connections_accepted.load(Ordering::SeqCst),
            connections_refused: counters.connections_refused.load(Ordering::SeqCst),
            calls: counters.calls.load(Ordering::SeqCst),
            malformed_messages: counters.malformed_messages.load(Ordering::SeqCst),
            scanners_expired: counters.scanners_expired.load(Ordering::SeqCst),
        }
    }
}

/// The address to connect to to reach a listener bound to `local`: loopback for a wildcard.
fn wake_address(local: SocketAddr) -> SocketAddr {
    let ip = match local.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, local.port())
}

impl ThriftServer {
    /// Binds the listener. Nothing is served until [`ThriftServer::run`].
    pub fn bind(db: Db, options: ServerOptions, log: LogSink) -> io::Result<ThriftServer> {
        let listener = TcpListener::bind(options.bind)?;
        let local_addr = listener.local_addr()?;
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
                shutting_down: AtomicBool::new(false),
                connections: Mutex::new(HashMap::new()),
                connection_ended: Condvar::new(),
                log,
                local_addr,
            }),
        })
    }

    /// The address the server listens on (with the port chosen when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.local_addr
    }

    /// A handle to stop the server and read its counters.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            shared: self.shared.clone(),
        }
    }

    /// Serves until [`ServerHandle::shutdown`]; returns when every connection has ended.
    pub fn run(self) -> io::Result<()> {
        let mut next_connection_id = 0u64;
        for accepted in self.listener.incoming() {
            if self.shared.shutting_down.load(Ordering::SeqCst) {
                break;
            }
            let stream = match accepted {
                Ok(stream) => stream,
                Err(error) => {
                    self.shared.log(&format!("accept failed: {error}"));
                    std::thread::sleep(ACCEPT_RETRY_PAUSE);
                    continue;
                }
            };
            next_connection_id += 1;
            self.start_connection(stream, next_connection_id);
        }
        drop(self.listener);
        // Connections accepted just before the flag was set may have registered after the
        // shutdown pass: shut them down too, then wait for every thread.
        for stream in self.shared.lock_connections().values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        self.shared.wait_for_connections();
        Ok(())
    }

    fn start_connection(&self, stream: TcpStream, id: u64) {
        let shared = &self.shared;
        let peer = stream
            .peer_addr()
            .map_or_else(|_| "an unknown peer".to_owned(), |peer| peer.to_string());
        let open = shared.counters.open_connections.load(Ordering::SeqCst);
        if open >= shared.options.max_connections {
            shared
                .counters
                .connections_refused
                .fetch_add(1, Ordering::SeqCst);
            shared.log(&format!(
                "refused a connection from {peer}: {open} connections are open, the most \
                 allowed (--max-connections)"
            ));
            return;
        }
        let registered = stream.try_clone().map(|clone| {
            shared.lock_connections().insert(id, clone);
        });
        if let Err(error) = registered {
            shared.log(&format!("dropped a connection from {peer}: {error}"));
            return;
        }
        shared
            .counters
            .connections_accepted
            .fetch_add(1, Ordering::SeqCst);
        let guard = ConnectionGuard::new(shared.clone(), id);
        let thread_shared = shared.clone();
        // The thread is detached: it deregisters itself (the guard) as it ends, and `run`
        // waits for the registry to empty.
        let spawned = std::thread::Builder::new()
            .name(format!("thrift-conn-{id}"))
            .spawn(move || {
                let _guard = guard;
                let served = serve_connection(&thread_shared, stream);
                if let Err(error) = served
                    && !thread_shared.shutting_down.load(Ordering::SeqCst)
                {
                    thread_shared.log(&format!("connection {id} from {peer} closed: {error}"));
                }
            });
        if let Err(error) = spawned {
            // The closure (and with it the guard) was dropped: the connection is deregistered.
            shared.log(&format!("could not start a connection thread: {error}"));
        }
    }
}

/// Counts a connection as open and registered while its thread runs (also when it panics).
struct ConnectionGuard {
    shared: Arc<Shared>,
    id: u64,
}

impl ConnectionGuard {
    fn new(shared: Arc<Shared>, id: u64) -> ConnectionGuard {
        shared
            .counters
            .open_connections
            .fetch_add(1, Ordering::SeqCst);
        ConnectionGuard { shared, id }
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.shared
            .counters
            .open_connections
            .fetch_sub(1, Ordering::SeqCst);
        self.shared.lock_connections().remove(&self.id);
        self.shared.connection_ended.notify_all();
    }
}

/// Why a connection ended early.
#[derive(Debug)]
enum ConnectionError {
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
fn serve_connection(shared: &Shared, stream: TcpStream) -> Result<(), ConnectionError> {
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
        if shared.shutting_down.load(Ordering::SeqCst) {
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
