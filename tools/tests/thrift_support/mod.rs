//! Shared by the Thrift gateway's tests: a server in this process on a free loopback port, and
//! clients of it.

#![allow(
    dead_code,
    reason = "each of the three test crates that include this module uses a different part of it"
)]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use strata::Db;
use strata_tools::thrift::client::Client;
use strata_tools::thrift::codec::{Protocol, Wire};
use strata_tools::thrift::hbase::{Call, Response};
use strata_tools::thrift::transport::{Transport, WireFormat};
use strata_tools::thrift::{ServerHandle, ServerOptions, ThriftServer};

/// How long a test client waits for a reply.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(20);

pub const BUFFERED_BINARY: WireFormat = WireFormat {
    transport: Transport::Buffered,
    protocol: Protocol::Binary,
};

pub const ALL_FORMATS: [WireFormat; 4] = [
    BUFFERED_BINARY,
    WireFormat {
        transport: Transport::Framed,
        protocol: Protocol::Binary,
    },
    WireFormat {
        transport: Transport::Buffered,
        protocol: Protocol::Compact,
    },
    WireFormat {
        transport: Transport::Framed,
        protocol: Protocol::Compact,
    },
];

/// A server on 127.0.0.1 over a fresh database.
pub struct TestServer {
    pub db: Db,
    pub handle: ServerHandle,
    pub log: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
    _dir: tempfile::TempDir,
}

impl TestServer {
    pub fn start() -> TestServer {
        TestServer::start_with(ServerOptions::default())
    }

    pub fn start_with(options: ServerOptions) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open_default(dir.path()).unwrap();
        let options = ServerOptions {
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
            ..options
        };
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let server = ThriftServer::bind(
            db.clone(),
            options,
            Arc::new(move |line: &str| sink.lock().unwrap().push(line.to_owned())),
        )
        .unwrap();
        let handle = server.handle();
        let thread = std::thread::spawn(move || server.run());
        TestServer {
            db,
            handle,
            log,
            thread: Some(thread),
            _dir: dir,
        }
    }

    pub fn address(&self) -> SocketAddr {
        self.handle.local_addr()
    }

    pub fn client(&self) -> Client {
        self.client_with(BUFFERED_BINARY)
    }

    pub fn client_with(&self, format: WireFormat) -> Client {
        Client::connect(self.address(), format, CALL_TIMEOUT).unwrap()
    }

    /// Stops the server, waits for it, closes the database.
    pub fn stop(mut self) {
        self.handle.shutdown();
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap().unwrap();
        }
        self.db.close().unwrap();
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

/// The success value of a call, failing the test on anything else.
pub fn ok<T: Wire + std::fmt::Debug>(client: &mut Client, call: Call) -> T {
    let name = call.name();
    match client.call::<T>(&call).unwrap() {
        Response::Success(value) => value,
        other => panic!("{name} failed: {other:?}"),
    }
}

/// The response of a call that must not succeed.
pub fn fails<T: Wire + std::fmt::Debug>(client: &mut Client, call: Call) -> Response<T> {
    let name = call.name();
    let response = client.call::<T>(&call).unwrap();
    assert!(
        !matches!(response, Response::Success(_)),
        "{name} succeeded: {response:?}"
    );
    response
}

/// The message of an `IOError` response.
pub fn io_error<T: std::fmt::Debug>(response: Response<T>) -> String {
    match response {
        Response::Io(error) => error.message.unwrap_or_default(),
        other => panic!("expected an IOError, got {other:?}"),
    }
}

/// The message of an `IllegalArgument` response.
pub fn illegal_argument<T: std::fmt::Debug>(response: Response<T>) -> String {
    match response {
        Response::IllegalArgument(error) => error.message.unwrap_or_default(),
        other => panic!("expected an IllegalArgument, got {other:?}"),
    }
}

pub fn bytes(text: &str) -> Option<Vec<u8>> {
    Some(text.as_bytes().to_vec())
}

pub fn texts(items: &[&str]) -> Option<Vec<Vec<u8>>> {
    Some(items.iter().map(|item| item.as_bytes().to_vec()).collect())
}
