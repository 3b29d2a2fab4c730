//! A TCP listener that serves every accepted connection on its own thread, bounded in count,
//! and stops in order.
//!
//! A connection beyond [`Listener::bind`]'s `max_connections` is handed to
//! [`Service::refuse`] (which may say why) and closed at once, so no client waits for another.
//! A connection's thread owns everything the [`Service`] keeps for it: it is dropped when the
//! connection ends, whatever the reason. [`ListenerHandle::shutdown`] stops accepting, shuts
//! every connection's socket down (a thread blocked reading or writing returns) and
//! [`Listener::run`] returns once every connection thread has finished.
//!
//! Invariant: a connection is in the registry exactly while its thread runs (its
//! [`ConnectionGuard`] removes it as the thread's last act, also on a panic), so an empty
//! registry means every connection ended.

use std::collections::HashMap;
use std::fmt::Display;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Pause after a failed `accept` (out of descriptors, say) before the next one.
const ACCEPT_RETRY_PAUSE: Duration = Duration::from_millis(100);
/// Longest the shutdown waits to wake the blocking `accept` with a connection of its own.
const WAKE_TIMEOUT: Duration = Duration::from_millis(250);

/// Where a server reports what happens to its connections (the library prints nothing
/// itself; `strata thrift` prints these lines on stderr, `strata server` logs them).
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// What a listener does with its connections.
pub trait Service: Send + Sync + 'static {
    /// Why a connection ended early.
    type Error: Display;

    /// Serves one connection until it closes or `connection.is_shutting_down()`.
    fn serve(&self, stream: TcpStream, connection: &Connection) -> Result<(), Self::Error>;

    /// Called on the accepting thread with a connection refused because `reason` (too many
    /// are open), just before it is closed: a service may write a short reply saying why.
    /// It must not block for long; the default writes nothing.
    fn refuse(&self, stream: &mut TcpStream, reason: &str) {
        let _ = (stream, reason);
    }
}

/// Counters of a listener's connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConnectionStats {
    /// Connections being served now.
    pub open: usize,
    /// Connections accepted since start.
    pub accepted: u64,
    /// Connections closed at once because too many were open.
    pub refused: u64,
}

/// What the listener and every connection share.
struct Shared {
    /// Names the connection threads (`NAME-ID`) and the log lines.
    name: &'static str,
    max_connections: usize,
    local_addr: SocketAddr,
    shutting_down: AtomicBool,
    open: AtomicUsize,
    accepted: AtomicU64,
    refused: AtomicU64,
    /// A clone of every open connection's socket, to shut them down.
    connections: Mutex<HashMap<u64, TcpStream>>,
    /// Signalled whenever a connection ends.
    connection_ended: Condvar,
    log: LogSink,
}

impl Shared {
    fn lock_connections(&self) -> MutexGuard<'_, HashMap<u64, TcpStream>> {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn shut_connections_down(&self) {
        for stream in self.lock_connections().values() {
            // A connection that already closed has nothing to shut down.
            let _ = stream.shutdown(Shutdown::Both);
        }
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

/// A bound listener; nothing is served until [`Listener::run`].
pub struct Listener {
    socket: TcpListener,
    shared: Arc<Shared>,
}

/// Controls a running listener from another thread.
#[derive(Clone)]
pub struct ListenerHandle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ListenerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenerHandle")
            .field("name", &self.shared.name)
            .field("local_addr", &self.shared.local_addr)
            .finish()
    }
}

impl ListenerHandle {
    /// Stops accepting, disconnects every client and makes [`Listener::run`] return once
    /// every connection thread has finished. Work in progress finishes first unless it needs
    /// the socket.
    pub fn shutdown(&self) {
        if self.shared.shutting_down.swap(true, Ordering::SeqCst) {
            return;
        }
        self.shared.shut_connections_down();
        // Wake the listener's blocking accept with a connection of our own.
        let _ = TcpStream::connect_timeout(&wake_address(self.shared.local_addr), WAKE_TIMEOUT);
    }

    /// True once [`ListenerHandle::shutdown`] was called.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.shutting_down.load(Ordering::SeqCst)
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.local_addr
    }

    /// The connection counters now.
    pub fn stats(&self) -> ConnectionStats {
        ConnectionStats {
            open: self.shared.open.load(Ordering::SeqCst),
            accepted: self.shared.accepted.load(Ordering::SeqCst),
            refused: self.shared.refused.load(Ordering::SeqCst),
        }
    }
}

/// One accepted connection, as its [`Service::serve`] sees it.
#[derive(Debug)]
pub struct Connection {
    /// Numbers the listener's connections from 1.
    pub id: u64,
    /// The client's address, as text (`an unknown peer` when the socket could not say).
    pub peer: String,
    handle: ListenerHandle,
}

impl Connection {
    /// True once the listener is shutting down: the connection should end.
    pub fn is_shutting_down(&self) -> bool {
        self.handle.is_shutting_down()
    }

    /// The listener serving this connection.
    pub fn listener(&self) -> &ListenerHandle {
        &self.handle
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

impl Listener {
    /// Binds `address` (port 0: any free port). `name` names the connection threads and the
    /// log lines; at most `max_connections` are served at once.
    pub fn bind(
        address: SocketAddr,
        name: &'static str,
        max_connections: usize,
        log: LogSink,
    ) -> io::Result<Listener> {
        let socket = TcpListener::bind(address)?;
        let local_addr = socket.local_addr()?;
        Ok(Listener {
            socket,
            shared: Arc::new(Shared {
                name,
                max_connections,
                local_addr,
                shutting_down: AtomicBool::new(false),
                open: AtomicUsize::new(0),
                accepted: AtomicU64::new(0),
                refused: AtomicU64::new(0),
                connections: Mutex::new(HashMap::new()),
                connection_ended: Condvar::new(),
                log,
            }),
        })
    }

    /// The address the listener is bound to (with the port chosen when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.local_addr
    }

    /// A handle to stop the listener and read its counters.
    pub fn handle(&self) -> ListenerHandle {
        ListenerHandle {
            shared: self.shared.clone(),
        }
    }

    /// Serves connections with `service` until [`ListenerHandle::shutdown`]; returns when
    /// every connection has ended.
    pub fn run<S: Service>(self, service: Arc<S>) -> io::Result<()> {
        let mut next_connection_id = 0u64;
        for accepted in self.socket.incoming() {
            if self.shared.shutting_down.load(Ordering::SeqCst) {
                break;
            }
            let stream = match accepted {
                Ok(stream) => stream,
                Err(error) => {
                    (self.shared.log)(&format!("accept failed: {error}"));
                    std::thread::sleep(ACCEPT_RETRY_PAUSE);
                    continue;
                }
            };
            next_connection_id += 1;
            self.start_connection(&service, stream, next_connection_id);
        }
        drop(self.socket);
        // Connections accepted just before the flag was set may have registered after the
        // shutdown pass: shut them down too, then wait for every thread.
        self.shared.shut_connections_down();
        self.shared.wait_for_connections();
        Ok(())
    }

    fn start_connection<S: Service>(&self, service: &Arc<S>, mut stream: TcpStream, id: u64) {
        let shared = &self.shared;
        let peer = stream
            .peer_addr()
            .map_or_else(|_| "an unknown peer".to_owned(), |peer| peer.to_string());
        let open = shared.open.load(Ordering::SeqCst);
        if open >= shared.max_connections {
            shared.refused.fetch_add(1, Ordering::SeqCst);
            let reason =
                format!("{open} connections are open, the most allowed (--max-connections)");
            (shared.log)(&format!("refused a connection from {peer}: {reason}"));
            service.refuse(&mut stream, &reason);
            return;
        }
        let registered = stream.try_clone().map(|clone| {
            shared.lock_connections().insert(id, clone);
        });
        if let Err(error) = registered {
            (shared.log)(&format!("dropped a connection from {peer}: {error}"));
            return;
        }
        shared.accepted.fetch_add(1, Ordering::SeqCst);
        let guard = ConnectionGuard::new(shared.clone(), id);
        let connection = Connection {
            id,
            peer,
            handle: self.handle(),
        };
        let service = service.clone();
        // The thread is detached: it deregisters itself (the guard) as it ends, and `run`
        // waits for the registry to empty.
        let spawned = std::thread::Builder::new()
            .name(format!("{}-{id}", shared.name))
            .spawn(move || {
                let _guard = guard;
                let served = service.serve(stream, &connection);
                if let Err(error) = served
                    && !connection.is_shutting_down()
                {
                    (connection.handle.shared.log)(&format!(
                        "connection {id} from {} closed: {error}",
                        connection.peer
                    ));
                }
            });
        if let Err(error) = spawned {
            // The closure (and with it the guard) was dropped: the connection is deregistered.
            (shared.log)(&format!("could not start a connection thread: {error}"));
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
        shared.open.fetch_add(1, Ordering::SeqCst);
        ConnectionGuard { shared, id }
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.shared.open.fetch_sub(1, Ordering::SeqCst);
        self.shared.lock_connections().remove(&self.id);
        self.shared.connection_ended.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    /// Echoes one line back, then waits for the client to close or the shutdown.
    struct Echo;

    impl Service for Echo {
        type Error = io::Error;

        fn serve(&self, mut stream: TcpStream, connection: &Connection) -> io::Result<()> {
            stream.set_read_timeout(Some(Duration::from_millis(20)))?;
            let mut byte = [0u8; 64];
            for _ in 0..500 {
                if connection.is_shutting_down() {
                    return Ok(());
                }
                match stream.read(&mut byte) {
                    Ok(0) => return Ok(()),
                    Ok(read) => stream.write_all(byte.get(..read).unwrap_or_default())?,
                    Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                    Err(error) => return Err(error),
                }
            }
            Ok(())
        }

        fn refuse(&self, stream: &mut TcpStream, reason: &str) {
            let _ = stream.write_all(format!("busy: {reason}").as_bytes());
        }
    }

    fn loopback() -> SocketAddr {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)
    }

    #[test]
    fn connections_past_the_limit_are_told_why_and_closed_and_shutdown_ends_the_rest() {
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = log.clone();
        let listener = Listener::bind(
            loopback(),
            "test-conn",
            1,
            Arc::new(move |line: &str| sink.lock().unwrap().push(line.to_owned())),
        )
        .unwrap();
        let handle = listener.handle();
        let address = listener.local_addr();
        let runner = std::thread::spawn(move || listener.run(Arc::new(Echo)));

        let mut first = TcpStream::connect(address).unwrap();
        first
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        first.write_all(b"ping").unwrap();
        let mut echoed = [0u8; 4];
        first.read_exact(&mut echoed).unwrap();
        assert_eq!(&echoed, b"ping");

        let mut second = TcpStream::connect(address).unwrap();
        second
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut refusal = String::new();
        second.read_to_string(&mut refusal).unwrap();
        assert!(
            refusal.starts_with("busy: 1 connections are open"),
            "{refusal}"
        );
        assert_eq!(
            handle.stats(),
            ConnectionStats {
                open: 1,
                accepted: 1,
                refused: 1
            }
        );

        handle.shutdown();
        runner.join().unwrap().unwrap();
        assert_eq!(handle.stats().open, 0);
        let mut rest = Vec::new();
        // The server shut the socket down: end of stream (or a reset).
        let _ = first.read_to_end(&mut rest);
        assert!(
            log.lock()
                .unwrap()
                .iter()
                .any(|line| line.contains("refused a connection"))
        );
    }
}
