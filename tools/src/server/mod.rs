//! `strata server`: one process that owns a database and serves it on three ports.
//!
//! * Thrift ([`crate::thrift`]): HBase's Thrift1 gateway, what `strata thrift` serves
//!   (default port 9090).
//! * admin ([`admin`]): `strata shell --connect HOST:PORT` runs every shell command here, in a
//!   session of its own, with the output a local shell prints (default 16000, HBase's master
//!   RPC port). The protocol is in [`wire`], the client in [`client`].
//! * HTTP ([`http`]): the status page at `/` ([`status`]) and metrics at `/metrics` and
//!   `/prometheus` ([`metrics`]) (default 16030, HBase's RegionServer info port).
//!
//! Each port serves every connection on its own thread, bounded in count
//! ([`crate::net::Listener`]). [`ServerHandle::shutdown`] stops all three; [`Server::run`]
//! returns once every connection has ended, and the caller then closes the database. The
//! page and the metrics read one [`snapshot::StateSnapshot`]; the log and the page's recent
//! events come from `tracing` ([`logging`], [`events`]). The library prints nothing: the
//! `strata` binary prints the bound addresses and installs the log.

pub mod admin;
pub mod client;
pub mod events;
pub mod http;
pub mod logging;
pub mod metrics;
pub mod snapshot;
pub mod status;
pub mod wire;

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::SystemTime;

use strata::{Clock, Db};

use crate::net::{Listener, ListenerHandle, LogSink};
use crate::thrift::{self, ThriftServer};
use admin::{AdminCounters, AdminOptions, AdminService};
use events::RecentEvents;
use http::{HttpCounters, HttpOptions, HttpService};
use snapshot::{Addresses, AdminStats, HttpStats, RegionWatch, StateSnapshot, WATCH_INTERVAL};

/// How the server listens on its three ports.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// The Thrift gateway.
    pub thrift: thrift::ServerOptions,
    /// The admin port.
    pub admin: AdminOptions,
    /// The HTTP port.
    pub http: HttpOptions,
}

/// A port could not be bound.
#[derive(Debug)]
pub struct BindError {
    /// Which port: `Thrift`, `admin` or `HTTP`.
    pub port: &'static str,
    /// The command-line flag that sets it.
    pub flag: &'static str,
    /// The address that was asked for.
    pub address: SocketAddr,
    /// Why it failed.
    pub source: io::Error,
}

impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot listen on {} for the {} port ({}; 0 picks a free port): {}",
            self.address, self.port, self.flag, self.source
        )
    }
}

impl std::error::Error for BindError {}

impl BindError {
    /// Makes the error of `port` (set by `flag`) failing to bind `address`.
    fn of(
        port: &'static str,
        flag: &'static str,
        address: SocketAddr,
    ) -> impl FnOnce(io::Error) -> BindError {
        move |source| BindError {
            port,
            flag,
            address,
            source,
        }
    }
}

/// What the ports' services and the handle share.
pub(crate) struct ServerState {
    db: Db,
    started_at: SystemTime,
    addresses: Addresses,
    pub(crate) events: Arc<RecentEvents>,
    thrift: thrift::ServerHandle,
    admin: ListenerHandle,
    admin_counters: Arc<AdminCounters>,
    http: ListenerHandle,
    pub(crate) http_counters: Arc<HttpCounters>,
    watch: Mutex<RegionWatch>,
    /// Set when the server stops; the watcher waits on `stopped_changed`.
    stopped: Mutex<bool>,
    stopped_changed: Condvar,
}

impl ServerState {
    /// Everything the page and the metrics show, now.
    pub(crate) fn snapshot(&self) -> StateSnapshot {
        let taken_at = SystemTime::now();
        let tables = snapshot::tables(&self.db);
        let tables = self
            .watch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .observe(tables, taken_at);
        let admin = &self.admin_counters;
        let engine = self.db.metrics();
        StateSnapshot {
            taken_at,
            started_at: self.started_at,
            data_dir: self.db.path().to_path_buf(),
            addresses: self.addresses,
            stats: engine.stats,
            engine,
            background: self.db.background_work(),
            background_error: self.db.background_error().map(|error| error.to_string()),
            storage_failure: self.db.storage_failure().map(|error| error.to_string()),
            wal_files: snapshot::wal_files(self.db.path()),
            tables,
            thrift: self.thrift.stats(),
            admin: AdminStats {
                connections: self.admin.stats(),
                requests: admin.requests.load(Ordering::Relaxed),
                statements: admin.statements.load(Ordering::Relaxed),
                failed_statements: admin.failed_statements.load(Ordering::Relaxed),
                malformed_requests: admin.malformed_requests.load(Ordering::Relaxed),
            },
            http: HttpStats {
                connections: self.http.stats(),
                requests: self.http_counters.requests.load(Ordering::Relaxed),
                failed_requests: self.http_counters.failed_requests.load(Ordering::Relaxed),
            },
        }
    }

    /// Looks for regions that flushed or compacted since the last look.
    fn observe_regions(&self) {
        let tables = snapshot::tables(&self.db);
        self.watch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .observe(tables, SystemTime::now());
    }

    /// Looks at the regions every [`WATCH_INTERVAL`] until the server stops.
    fn watch_regions(&self) {
        let mut stopped = self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
        while !*stopped {
            let (guard, _) = self
                .stopped_changed
                .wait_timeout(stopped, WATCH_INTERVAL)
                .unwrap_or_else(PoisonError::into_inner);
            stopped = guard;
            if !*stopped {
                drop(stopped);
                self.observe_regions();
                stopped = self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
            }
        }
    }
}

/// The three ports, bound; nothing is served until [`Server::run`].
pub struct Server {
    thrift: ThriftServer,
    admin: Listener,
    admin_service: Arc<AdminService>,
    http: Listener,
    http_service: Arc<HttpService>,
    state: Arc<ServerState>,
}

/// Controls a running server from another thread (a signal handler, a test).
#[derive(Clone)]
pub struct ServerHandle {
    state: Arc<ServerState>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("addresses", &self.state.addresses)
            .finish()
    }
}

impl ServerHandle {
    /// Stops all three ports: no new connections, every client disconnected; work in
    /// progress finishes first unless it needs its socket. [`Server::run`] then returns.
    pub fn shutdown(&self) {
        let state = &self.state;
        *state.stopped.lock().unwrap_or_else(PoisonError::into_inner) = true;
        state.stopped_changed.notify_all();
        state.thrift.shutdown();
        state.admin.shutdown();
        state.http.shutdown();
    }

    /// Where the ports listen.
    pub fn addresses(&self) -> Addresses {
        self.state.addresses
    }

    /// What the status page would show now.
    pub fn snapshot(&self) -> StateSnapshot {
        self.state.snapshot()
    }
}

/// Reports what a port's listener says about its connections as `tracing` events.
fn log_sink(port: &'static str) -> LogSink {
    Arc::new(move |line: &str| {
        tracing::info!(target: "strata::server", port, "{line}");
    })
}

impl Server {
    /// Binds the three ports over `db` (opened with `clock`). `events` is the ring the
    /// status page shows (the one the log's subscriber fills).
    pub fn bind(
        db: Db,
        clock: Arc<dyn Clock>,
        options: ServerOptions,
        events: Arc<RecentEvents>,
    ) -> Result<Server, BindError> {
        let thrift_bind = options.thrift.bind;
        let thrift = ThriftServer::bind(db.clone(), options.thrift, log_sink("thrift"))
            .map_err(BindError::of("Thrift", "--thrift-port", thrift_bind))?;
        let admin = Listener::bind(
            options.admin.bind,
            "admin-conn",
            options.admin.max_connections,
            log_sink("admin"),
        )
        .map_err(BindError::of("admin", "--admin-port", options.admin.bind))?;
        let http = Listener::bind(
            options.http.bind,
            "http-conn",
            options.http.max_connections,
            log_sink("http"),
        )
        .map_err(BindError::of("HTTP", "--http-port", options.http.bind))?;
        let admin_counters = Arc::new(AdminCounters::default());
        let state = Arc::new(ServerState {
            db: db.clone(),
            started_at: SystemTime::now(),
            addresses: Addresses {
                thrift: thrift.local_addr(),
                admin: admin.local_addr(),
                http: http.local_addr(),
            },
            events,
            thrift: thrift.handle(),
            admin: admin.handle(),
            admin_counters: admin_counters.clone(),
            http: http.handle(),
            http_counters: Arc::new(HttpCounters::default()),
            watch: Mutex::new(RegionWatch::default()),
            stopped: Mutex::new(false),
            stopped_changed: Condvar::new(),
        });
        Ok(Server {
            thrift,
            admin,
            admin_service: Arc::new(AdminService::new(db, clock, options.admin, admin_counters)),
            http,
            http_service: Arc::new(HttpService::new(state.clone())),
            state,
        })
    }

    /// Where the ports listen (with the ports chosen for port 0).
    pub fn addresses(&self) -> Addresses {
        self.state.addresses
    }

    /// A handle to stop the server and look at it.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            state: self.state.clone(),
        }
    }

    /// Serves until [`ServerHandle::shutdown`]; returns when every port has stopped and every
    /// connection has ended (the first error of a port, if one failed).
    pub fn run(self) -> io::Result<()> {
        let Server {
            thrift,
            admin,
            admin_service,
            http,
            http_service,
            state,
        } = self;
        // Dates what happened before the first look as unknown, not as "now".
        state.observe_regions();
        std::thread::scope(|scope| {
            let ports = [
                std::thread::Builder::new()
                    .name("thrift-accept".into())
                    .spawn_scoped(scope, move || thrift.run()),
                std::thread::Builder::new()
                    .name("admin-accept".into())
                    .spawn_scoped(scope, move || admin.run(admin_service)),
                std::thread::Builder::new()
                    .name("http-accept".into())
                    .spawn_scoped(scope, move || http.run(http_service)),
            ];
            if ports.iter().any(Result::is_err) {
                // The ports that started would serve on forever: stop them.
                ServerHandle {
                    state: state.clone(),
                }
                .shutdown();
            }
            let watcher = std::thread::Builder::new()
                .name("region-watch".into())
                .spawn_scoped(scope, || state.watch_regions());
            let mut outcome = Ok(());
            for port in ports {
                let ended = port.and_then(|thread| {
                    thread
                        .join()
                        .unwrap_or_else(|_| Err(io::Error::other("a port's thread panicked")))
                });
                if outcome.is_ok() {
                    outcome = ended;
                }
            }
            if let Ok(watcher) = watcher {
                let _ = watcher.join();
            }
            outcome
        })
    }
}
