//! `strata thrift`: HBase's Thrift1 gateway over an embedded strata database, so that
//! happybase and the other clients of `hbase thrift start` work unchanged.
//!
//! * [`codec`]: Thrift's binary and compact protocols, bounded (a hand-written codec; why is
//!   in `docs/thrift.md`).
//! * [`hbase`]: HBase's `Hbase.thrift` as Rust types: structs, calls, replies.
//! * [`transport`]: buffered and framed transports, and recognising what a client speaks.
//! * [`handler`]: what each call does to the database.
//! * [`server`]: the listener, one thread per connection, shutdown.
//! * [`client`]: a small blocking client for tests and benchmarks.
//!
//! `docs/thrift.md` lists every call, how it maps onto strata, and each difference from
//! HBase's gateway.

pub mod client;
pub mod codec;
pub mod handler;
pub mod hbase;
pub mod server;
pub mod transport;

pub use server::{
    Accept, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_SCANNERS_PER_CONNECTION, DEFAULT_MESSAGE_STALL_TIMEOUT,
    DEFAULT_SCANNER_IDLE_TIMEOUT, LogSink, ServerHandle, ServerOptions, ServerStats, ThriftServer,
};
