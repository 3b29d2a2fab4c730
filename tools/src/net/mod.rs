//! Serving TCP connections, shared by the Thrift gateway and the admin and HTTP ports of
//! `strata server`.
//!
//! * [`listener`]: accepts connections and serves each on its own thread, bounded in count,
//!   with an orderly shutdown.
//! * [`reader`]: reads a connection with a tick between messages and a stall timeout inside
//!   one.

pub mod listener;
pub mod reader;

pub use listener::{Connection, ConnectionStats, Listener, ListenerHandle, LogSink, Service};
pub use reader::{ConnectionReader, Wait};
