//! Tools around the strata storage engine: `strata shell`, an HBase-compatible shell, and
//! the on-disk tools `strata hfile`, `strata wal`, `strata verify` and `strata regions`.
//!
//! * [`shell`]: the shell's syntax layer (HBase shell command lines to typed commands) and
//!   the output helpers that need no engine.
//! * [`exec`]: runs those commands against a database and prints HBase 2.x's output.
//! * [`session`]: input text in, output out: statements, timing, errors, the interactive
//!   terminal loop.
//! * [`disk`]: the on-disk tools.
//! * [`thrift`]: `strata thrift`, HBase's Thrift1 gateway.
//! * [`server`]: `strata server`: the Thrift gateway, the admin port `strata shell --connect`
//!   talks to, and the HTTP port (status page, `/metrics`), over one database.
//! * [`net`]: serving TCP connections (bounded thread per connection, orderly shutdown).
//! * [`conventions`]: HBase's conventions the shell, the gateway and the disk tools share
//!   (`Bytes.toStringBinary`, family option names, `FOREVER`).
//! * [`sql`]: `strata sql`, SQL over strata tables (strata-sql, DataFusion).
//!
//! The `strata` binary (`src/bin/strata.rs`) parses the command line and calls these.
//! `docs/shell.md` describes the commands, their output and the differences from HBase.

#![warn(missing_docs)]

pub mod bulkload;
pub mod conventions;
pub mod disk;
pub mod exec;
pub mod loadgen;
pub mod net;
pub mod server;
pub mod session;
pub mod shell;
pub mod sql;
pub mod thrift;
