//! `strata`: the HBase-compatible shell, the on-disk tools, the HBase Thrift gateway and the
//! server of the strata storage engine.
//!
//! ```text
//! strata shell [--data DIR | --connect HOST:PORT] [-e 'cmd; cmd'] [--timestamps millis|iso]
//! strata hfile FILE [--cells]
//! strata wal DIR
//! strata verify DIR
//! strata regions DIR TABLE
//! strata bulkload [--data DIR] --table T [INPUT ...] [--format tsv|csv] [--sorted] [--out DIR]
//!                 [--build-only] [--files DIR] [--copy] [--backfill]
//! strata thrift [--data DIR] [--bind 127.0.0.1] [--port 9090] [--transport auto|buffered|framed]
//!               [--protocol auto|binary|compact] [--durability async|sync|fsync|skip|table]
//! strata sql [--data DIR] [-e 'stmt; stmt'] [--format table|csv|json] [--partitions N]
//!            [--cluster cluster.json]
//! strata sql-worker [--data DIR] [--listen 127.0.0.1:0]
//! strata server [--data DIR] [--bind 127.0.0.1] [--thrift-port 9090] [--admin-port 16000]
//!               [--http-port 16030] [--log-format text|json] [--log-level LEVEL] [Thrift flags]
//! strata backup [--data DIR | --connect HOST:PORT] --out BACKUP
//! ```

use std::ffi::OsString;
use std::io::{self, IsTerminal, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use strata::{Db, DbOptions, Durability, WalRecovery};
use strata_tools::disk;
use strata_tools::exec::{ExecOptions, Executor, UserIdentity};
use strata_tools::server::admin::{
    AdminOptions, DEFAULT_ADMIN_PORT, DEFAULT_MAX_ADMIN_CONNECTIONS,
};
use strata_tools::server::client::{AdminClient, RemoteSession, SessionRequest};
use strata_tools::server::events::{MAX_RECENT_EVENTS, RecentEvents};
use strata_tools::server::http::{DEFAULT_HTTP_PORT, DEFAULT_MAX_HTTP_CONNECTIONS, HttpOptions};
use strata_tools::server::logging::{self, LogFormat};
use strata_tools::server::wire::{Language, Settings, SqlFormat};
use strata_tools::server::{self as service, Server};
use strata_tools::session::{self, Session};
use strata_tools::shell::{TableLayout, TimestampFormat};
use strata_tools::thrift::codec::Protocol;
use strata_tools::thrift::transport::Transport;
use strata_tools::thrift::{Accept, ServerOptions, ThriftServer};

/// Where `strata shell` keeps its database when `--data` is not given.
const DEFAULT_DATA_DIR: &str = "./strata-data";

/// Exit code of a script in which a statement failed, or of `verify` finding damage.
const EXIT_FAILED: u8 = 1;
/// Exit code when the tool could not run at all (database does not open, bad arguments).
const EXIT_UNUSABLE: u8 = 2;

#[derive(Parser)]
#[command(
    name = "strata",
    version,
    about = "The strata shell (HBase shell syntax), on-disk tools, HBase Thrift gateway and server"
)]
struct Cli {
    #[command(subcommand)]
    tool: Tool,
}

#[derive(Subcommand)]
enum Tool {
    /// HBase shell commands against a strata database: interactive on a terminal, a script
    /// from standard input otherwise, or the statements given with -e. With --connect they run
    /// on a `strata server`, with the same output.
    Shell {
        /// The database directory (created when missing).
        #[arg(long, default_value = DEFAULT_DATA_DIR)]
        data: PathBuf,
        /// Run every statement on the `strata server` whose admin port is HOST:PORT instead of
        /// opening a directory.
        #[arg(long, value_name = "HOST:PORT", conflicts_with_all = ["data", "wal_recovery"])]
        connect: Option<String>,
        /// Statements to run (separated by ';' or newlines) instead of reading input.
        #[arg(short = 'e', long = "execute")]
        execute: Option<OsString>,
        /// How cell timestamps are printed.
        #[arg(long, value_enum, default_value_t = Timestamps::Millis)]
        timestamps: Timestamps,
        /// What opening does with a damaged WAL: refuse (strict), or replay what precedes the
        /// damage and set the rest aside under DIR/wal/damaged (point-in-time; acknowledged
        /// writes after the damage are lost).
        #[arg(long, value_enum, default_value_t = WalRecoveryArg::Strict)]
        wal_recovery: WalRecoveryArg,
    },
    /// Describe one HFile: trailer, meta, index and bloom; with --cells every cell.
    Hfile {
        /// The HFile (DIR/data/NNNNNNNNNNNN.hfile).
        file: PathBuf,
        /// Also print every cell.
        #[arg(long)]
        cells: bool,
        /// How cell timestamps are printed.
        #[arg(long, value_enum, default_value_t = Timestamps::Millis)]
        timestamps: Timestamps,
    },
    /// List the WAL segments of a database with their records and sequence ranges.
    Wal {
        /// The database directory.
        dir: PathBuf,
    },
    /// Check every checksum of a database's WAL and HFiles; exits 1 on damage.
    Verify {
        /// The database directory.
        dir: PathBuf,
    },
    /// List the regions of a table: boundaries, memstore and file sizes, files per level.
    Regions {
        /// The database directory.
        dir: PathBuf,
        /// The table.
        table: String,
    },
    /// Bulk-load cells into a table: build HFiles from TSV/CSV lines (row, family:qualifier,
    /// timestamp, value) cut at the table's regions, and load them all at once; or load
    /// files a bulk writer made (--files). HBase's ImportTsv + completebulkload.
    Bulkload(BulkloadArgs),
    /// Serve HBase's Thrift1 interface (what `hbase thrift start` serves) over the database,
    /// for happybase and the other HBase Thrift clients. Stops on SIGINT or SIGTERM.
    Thrift(ThriftArgs),
    /// SQL over the database's tables (DataFusion): interactive on a terminal, a script from
    /// standard input otherwise, or the statements given with -e.
    Sql(strata_tools::sql::SqlArgs),
    /// Serve the database's tables to SQL queries planned by `strata sql --cluster` in
    /// another process (datafusion-distributed over Arrow Flight). Stops on SIGINT or SIGTERM.
    SqlWorker(strata_tools::sql::worker::SqlWorkerArgs),
    /// Serve the database: HBase's Thrift1 gateway, the admin port `strata shell --connect`
    /// talks to, and HTTP (status page at /, metrics at /metrics and /prometheus). Prints the
    /// bound addresses on one line of standard output, logs to standard error, and stops
    /// cleanly on SIGINT or SIGTERM.
    Server(ServerArgs),
    /// Make a consistent copy of a database in the new directory BACKUP while it keeps taking
    /// writes (the shell's `backup 'BACKUP'`): of the directory --data (no other process may
    /// have it open), or with --connect of the database a `strata server` serves, in which
    /// case BACKUP is a path on the server's machine (give it absolute). Restore by opening
    /// the copy: stop the server, move BACKUP in place of its data directory, start it.
    Backup {
        /// The database directory.
        #[arg(long, default_value = DEFAULT_DATA_DIR)]
        data: PathBuf,
        /// Back up the database of the `strata server` whose admin port is HOST:PORT.
        #[arg(long, value_name = "HOST:PORT", conflicts_with = "data")]
        connect: Option<String>,
        /// The directory to create for the copy (it must not exist).
        #[arg(long, value_name = "BACKUP")]
        out: PathBuf,
    },
}

#[derive(clap::Args)]
struct BulkloadArgs {
    /// The database directory.
    #[arg(long, default_value = DEFAULT_DATA_DIR)]
    data: PathBuf,
    /// The table to load into.
    #[arg(long)]
    table: String,
    /// Input files of cells, one per line; none or '-' reads standard input.
    inputs: Vec<PathBuf>,
    /// How fields are separated: tsv (tabs) or csv (commas, double quotes).
    #[arg(long, value_enum, default_value_t = FormatArg::Tsv)]
    format: FormatArg,
    /// The input is sorted by row, family and qualifier, newest timestamp first: stream it
    /// instead of sorting it in memory.
    #[arg(long)]
    sorted: bool,
    /// Most MiB of unsorted input held in memory for sorting.
    #[arg(long, default_value_t = 1024)]
    max_memory_mb: u64,
    /// Where the HFiles are written (default: a temporary directory inside --data, removed
    /// after the load).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Only build the files (into --out); load them later with --files.
    #[arg(long, requires = "out")]
    build_only: bool,
    /// Load the HFiles of this directory (a bulk writer's output) instead of reading input.
    #[arg(long, conflicts_with_all = ["inputs", "build_only", "out"])]
    files: Option<PathBuf>,
    /// Copy the files into the database instead of moving them.
    #[arg(long)]
    copy: bool,
    /// Back-fill: the cells count as written before everything in the table (a live cell
    /// with the same timestamp wins).
    #[arg(long)]
    backfill: bool,
    /// Check only the files' trailers, meta and index before loading, not every block.
    #[arg(long)]
    no_verify_blocks: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// Tab-separated.
    Tsv,
    /// Comma-separated, RFC 4180 quoting.
    Csv,
}

#[derive(clap::Args)]
struct ThriftArgs {
    /// The database directory (created when missing).
    #[arg(long, default_value = DEFAULT_DATA_DIR)]
    data: PathBuf,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// The port to listen on (0: any free port, printed at start).
    #[arg(long, default_value_t = 9090)]
    port: u16,
    #[command(flatten)]
    gateway: GatewayArgs,
    /// What opening does with a damaged WAL (as for `strata shell`).
    #[arg(long, value_enum, default_value_t = WalRecoveryArg::Strict)]
    wal_recovery: WalRecoveryArg,
    /// The background I/O budget: MiB per second that flushes and compactions together may
    /// write (RocksDB's rate limiter; HBase's compaction throughput limit). 0: unlimited.
    /// Foreground writes (the WAL) and reads are never limited.
    #[arg(long, default_value_t = 0)]
    background_write_mib_per_sec: u64,
}

/// How the Thrift gateway serves its clients (`strata thrift` and `strata server`).
#[derive(clap::Args)]
struct GatewayArgs {
    /// The transport clients must speak; auto recognises buffered (HBase's default) and
    /// framed from each client's first bytes.
    #[arg(long, value_enum, default_value_t = TransportArg::Auto)]
    transport: TransportArg,
    /// The protocol clients must speak; auto recognises binary (HBase's default) and compact.
    #[arg(long, value_enum, default_value_t = ProtocolArg::Auto)]
    protocol: ProtocolArg,
    /// The durability of mutations that ask for the WAL: async (default; synced within
    /// 100 ms, like HBase's SYNC_WAL the acknowledged write is not yet on disk), sync
    /// (fdatasync before each reply), fsync, skip (no WAL), or table (each table's own).
    #[arg(long, value_enum, default_value_t = DurabilityArg::Async)]
    durability: DurabilityArg,
    /// Largest message or frame either way, in MiB.
    #[arg(long, default_value_t = 64)]
    max_message_mb: u64,
    /// Most Thrift connections served at once; more are closed at once.
    #[arg(long, default_value_t = strata_tools::thrift::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// Seconds a scanner may go unused before it is closed.
    #[arg(long, default_value_t = 60)]
    scanner_timeout_secs: u64,
}

impl GatewayArgs {
    /// The Thrift server's options, listening on `bind`.
    fn options(&self, bind: SocketAddr) -> ServerOptions {
        ServerOptions {
            bind,
            transport: match self.transport {
                TransportArg::Auto => Accept::Auto,
                TransportArg::Buffered => Accept::Only(Transport::Buffered),
                TransportArg::Framed => Accept::Only(Transport::Framed),
            },
            protocol: match self.protocol {
                ProtocolArg::Auto => Accept::Auto,
                ProtocolArg::Binary => Accept::Only(Protocol::Binary),
                ProtocolArg::Compact => Accept::Only(Protocol::Compact),
            },
            max_message_bytes: self.max_message_mb.saturating_mul(1024 * 1024),
            max_connections: self.max_connections,
            scanner_idle_timeout: Duration::from_secs(self.scanner_timeout_secs),
            durability: self.durability.durability(),
            ..ServerOptions::default()
        }
    }

    /// `transport X, protocol Y`, as the start line says it.
    fn describe(&self) -> String {
        let name = |value: Option<clap::builder::PossibleValue>| {
            value.map_or_else(String::new, |value| value.get_name().to_owned())
        };
        format!(
            "transport {}, protocol {}",
            name(self.transport.to_possible_value()),
            name(self.protocol.to_possible_value())
        )
    }
}

#[derive(clap::Args)]
struct ServerArgs {
    /// The database directory (created when missing).
    #[arg(long, default_value = DEFAULT_DATA_DIR)]
    data: PathBuf,
    /// The address every port listens on (loopback by default; 0.0.0.0 for every interface).
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// The Thrift gateway's port (0: any free port).
    #[arg(long, default_value_t = 9090)]
    thrift_port: u16,
    /// The admin port, for `strata shell --connect` (HBase's master RPC port; 0: any free port).
    #[arg(long, default_value_t = DEFAULT_ADMIN_PORT)]
    admin_port: u16,
    /// The HTTP port: status page and metrics (HBase's RegionServer info port; 0: any free
    /// port).
    #[arg(long, default_value_t = DEFAULT_HTTP_PORT)]
    http_port: u16,
    #[command(flatten)]
    gateway: GatewayArgs,
    /// Most shells connected at once.
    #[arg(long, default_value_t = DEFAULT_MAX_ADMIN_CONNECTIONS)]
    admin_max_connections: usize,
    /// Largest request a shell may send (a script sent at once), in MiB.
    #[arg(long, default_value_t = 64)]
    max_request_mb: u64,
    /// Most HTTP connections served at once.
    #[arg(long, default_value_t = DEFAULT_MAX_HTTP_CONNECTIONS)]
    http_max_connections: usize,
    /// How log lines on standard error are written.
    #[arg(long, value_enum, default_value_t = LogFormatArg::Text)]
    log_format: LogFormatArg,
    /// What is logged: a level (error, warn, info, debug, trace) or RUST_LOG-style directives
    /// (warn,strata::server=debug). Default: RUST_LOG, else info.
    #[arg(long)]
    log_level: Option<String>,
    /// What opening does with a damaged WAL (as for `strata shell`).
    #[arg(long, value_enum, default_value_t = WalRecoveryArg::Strict)]
    wal_recovery: WalRecoveryArg,
    /// The background I/O budget: MiB per second that flushes and compactions together may
    /// write (RocksDB's rate limiter; HBase's compaction throughput limit). 0: unlimited.
    /// Foreground writes (the WAL) and reads are never limited.
    #[arg(long, default_value_t = 0)]
    background_write_mib_per_sec: u64,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormatArg {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

impl From<LogFormatArg> for LogFormat {
    fn from(format: LogFormatArg) -> LogFormat {
        match format {
            LogFormatArg::Text => LogFormat::Text,
            LogFormatArg::Json => LogFormat::Json,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum TransportArg {
    /// Buffered or framed, whichever each client speaks.
    Auto,
    /// Messages back to back (`hbase thrift start`'s default).
    Buffered,
    /// Every message after its length (`hbase thrift start -f`).
    Framed,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProtocolArg {
    /// Binary or compact, whichever each client speaks.
    Auto,
    /// TBinaryProtocol (`hbase thrift start`'s default).
    Binary,
    /// TCompactProtocol (`hbase thrift start -c`).
    Compact,
}

#[derive(Clone, Copy, ValueEnum)]
enum DurabilityArg {
    /// Written to the WAL, synced within 100 ms (the call does not wait).
    Async,
    /// fdatasync before the reply.
    Sync,
    /// fsync before the reply.
    Fsync,
    /// No WAL: lost on a crash until flushed.
    Skip,
    /// Each table's own durability.
    Table,
}

impl DurabilityArg {
    fn durability(self) -> Option<Durability> {
        match self {
            DurabilityArg::Async => Some(Durability::AsyncWal),
            DurabilityArg::Sync => Some(Durability::SyncWal),
            DurabilityArg::Fsync => Some(Durability::FsyncWal),
            DurabilityArg::Skip => Some(Durability::SkipWal),
            DurabilityArg::Table => None,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum WalRecoveryArg {
    /// Refuse to open on any damage (the default).
    Strict,
    /// Replay every record before the first damage; copy the rest to DIR/wal/damaged.
    PointInTime,
}

impl From<WalRecoveryArg> for WalRecovery {
    fn from(mode: WalRecoveryArg) -> WalRecovery {
        match mode {
            WalRecoveryArg::Strict => WalRecovery::Strict,
            WalRecoveryArg::PointInTime => WalRecovery::PointInTime,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Timestamps {
    /// Milliseconds since the epoch (HBase's default).
    Millis,
    /// ISO-8601 date-times in UTC.
    Iso,
}

impl From<Timestamps> for TimestampFormat {
    fn from(timestamps: Timestamps) -> TimestampFormat {
        match timestamps {
            Timestamps::Millis => TimestampFormat::EpochMillis,
            Timestamps::Iso => TimestampFormat::Iso8601,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.tool {
        Tool::Shell {
            connect: Some(address),
            execute,
            timestamps,
            ..
        } => connected_shell(&address, execute, timestamps.into()),
        Tool::Shell {
            data,
            connect: None,
            execute,
            timestamps,
            wal_recovery,
        } => shell(data, execute, timestamps.into(), wal_recovery.into()),
        Tool::Hfile {
            file,
            cells,
            timestamps,
        } => disk::print_hfile(&file, cells, timestamps.into(), &mut io::stdout().lock())
            .map(|()| ExitCode::SUCCESS)
            .map_err(|error| error.to_string()),
        Tool::Wal { dir } => disk::print_wal(&dir, &mut io::stdout().lock())
            .map(|()| ExitCode::SUCCESS)
            .map_err(|error| error.to_string()),
        Tool::Verify { dir } => disk::verify(&dir, &mut io::stdout().lock())
            .map(|outcome| {
                if outcome.problems == 0 {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(EXIT_FAILED)
                }
            })
            .map_err(|error| error.to_string()),
        Tool::Regions { dir, table } => disk::print_regions(&dir, &table, &mut io::stdout().lock())
            .map(|()| ExitCode::SUCCESS)
            .map_err(|error| error.to_string()),
        Tool::Thrift(args) => thrift(args),
        Tool::Server(args) => server(args),
        Tool::Bulkload(args) => bulkload(args),
        Tool::Sql(args) => strata_tools::sql::run(args),
        Tool::SqlWorker(args) => strata_tools::sql::worker::run(args),
        Tool::Backup { data, connect, out } => {
            backup_statement(&out).and_then(|statement| match connect {
                Some(address) => {
                    connected_shell(&address, Some(statement), TimestampFormat::EpochMillis)
                }
                None => shell(
                    data,
                    Some(statement),
                    TimestampFormat::EpochMillis,
                    WalRecovery::Strict,
                ),
            })
        }
    };
    result.unwrap_or_else(|message| {
        eprintln!("strata: {message}");
        ExitCode::from(EXIT_UNUSABLE)
    })
}

/// `strata bulkload`: build files from input and load them, or load prepared files.
fn bulkload(args: BulkloadArgs) -> Result<ExitCode, String> {
    use strata_tools::bulkload::{self as bulk, BuildOptions, InputFormat};
    let db = Db::open(&args.data, DbOptions::default())
        .map_err(|error| format!("cannot open {}: {error}", args.data.display()))?;
    report_recovery(db.recovery_report());
    let table = db.table(&args.table).map_err(|error| error.to_string())?;
    let options = strata::BulkLoadOptions::default()
        .copy(args.copy)
        .backfill(args.backfill)
        .verify_blocks(!args.no_verify_blocks);
    let mut out = io::stdout().lock();
    let outcome = (|| -> Result<(), String> {
        if let Some(dir) = &args.files {
            let files = bulk::files_in(dir).map_err(|e| e.to_string())?;
            if files.is_empty() {
                return Err(format!("{} holds no .hfile", dir.display()));
            }
            let (report, took) =
                bulk::timed(|| bulk::load(&table, &files, &options)).map_err(|e| e.to_string())?;
            for line in bulk::summary(None, Some((&report, took))) {
                writeln!(out, "{line}").map_err(|e| e.to_string())?;
            }
            return Ok(());
        }
        let temporary = match &args.out {
            Some(_) => None,
            None => Some(
                tempfile::Builder::new()
                    .prefix("bulkload-")
                    .tempdir_in(&args.data)
                    .map_err(|e| format!("creating a directory in {}: {e}", args.data.display()))?,
            ),
        };
        let dir = match (&args.out, &temporary) {
            (Some(dir), _) => dir.clone(),
            (None, Some(t)) => t.path().to_path_buf(),
            (None, None) => return Err("no output directory".into()),
        };
        let mut inputs: Vec<Box<dyn io::BufRead>> = Vec::new();
        if args.inputs.is_empty() || args.inputs.iter().any(|p| p.as_os_str() == "-") {
            inputs.push(Box::new(io::BufReader::new(io::stdin())));
        }
        for path in args.inputs.iter().filter(|p| p.as_os_str() != "-") {
            let file = std::fs::File::open(path)
                .map_err(|e| format!("opening {}: {e}", path.display()))?;
            inputs.push(Box::new(io::BufReader::with_capacity(1 << 20, file)));
        }
        let build_options = BuildOptions {
            format: match args.format {
                FormatArg::Tsv => InputFormat::Tsv,
                FormatArg::Csv => InputFormat::Csv,
            },
            sorted: args.sorted,
            max_memory_bytes: args.max_memory_mb << 20,
            now_ms: strata::Clock::now_ms(&strata::SystemClock),
        };
        let (files, built) = bulk::timed(|| bulk::build(&table, &mut inputs, &dir, &build_options))
            .map_err(|e| e.to_string())?;
        let loaded = if args.build_only {
            None
        } else {
            Some(
                bulk::timed(|| bulk::load(&table, &files.paths(), &options))
                    .map_err(|e| e.to_string())?,
            )
        };
        for line in bulk::summary(Some((&files, built)), loaded.as_ref().map(|(r, t)| (r, *t))) {
            writeln!(out, "{line}").map_err(|e| e.to_string())?;
        }
        if args.build_only {
            writeln!(out, "files in {}", dir.display()).map_err(|e| e.to_string())?;
        }
        Ok(())
    })();
    let closed = db.close();
    outcome?;
    closed.map_err(|error| format!("closing {}: {error}", args.data.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// `strata backup`'s statement: the shell's `backup 'OUT'`, OUT quoted as a single-quoted
/// string (where only `\\` and `\'` are escapes).
fn backup_statement(out: &std::path::Path) -> Result<OsString, String> {
    let path = out.to_str().ok_or_else(|| {
        format!(
            "{} is not UTF-8, which the shell's strings need",
            out.display()
        )
    })?;
    let quoted = path.replace('\\', "\\\\").replace('\'', "\\'");
    Ok(OsString::from(format!("backup '{quoted}'")))
}

/// `strata shell`: script from -e or standard input, or the interactive shell.
fn shell(
    data: PathBuf,
    execute: Option<OsString>,
    timestamps: TimestampFormat,
    wal_recovery: WalRecovery,
) -> Result<ExitCode, String> {
    let interactive = execute.is_none() && io::stdin().is_terminal();
    let options = ExecOptions {
        timestamps,
        layout: TableLayout::new(session::terminal_width()),
    };
    let db_options = DbOptions {
        wal_recovery,
        ..DbOptions::default()
    };
    let executor =
        Executor::open(&data, db_options, options).map_err(|error| open_error(&data, &error))?;
    report_recovery(executor.db().recovery_report());
    let mut session = Session::new(executor);
    let ran = if interactive {
        let banner = format!(
            "strata shell {} (HBase shell syntax), data in {}\n\
             Use \"help\" to get list of supported commands.\n\
             Use \"exit\" to quit this interactive shell.",
            env!("CARGO_PKG_VERSION"),
            data.display()
        );
        session::run_interactive(&mut session, &banner).map_err(|error| error.to_string())
    } else {
        run_script(&mut session, execute)
    };
    let failures = session.failures();
    let closed = session.into_executor().close();
    ran?;
    closed.map_err(|error| format!("closing {}: {error}", data.display()))?;
    if !interactive && failures > 0 {
        Ok(ExitCode::from(EXIT_FAILED))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}

/// Why a database did not open, with what to do when a server holds it.
fn open_error(data: &std::path::Path, error: &strata::Error) -> String {
    let hint = match error {
        strata::Error::DatabaseLocked { .. } => {
            "; if a `strata server` serves it, run the shell through it with \
             `strata shell --connect HOST:PORT` (its admin port)"
        }
        _ => "",
    };
    format!("cannot open {}: {error}{hint}", data.display())
}

/// Says on stderr what opening had to fall back to or discard (the library prints nothing
/// itself).
fn report_recovery(report: &strata::RecoveryReport) {
    if let Some(reason) = strata::io_fallback_reason() {
        eprintln!("strata: io_uring unavailable ({reason}); using the sync I/O back end");
    }
    if let Some((file, offset)) = &report.wal_damage {
        eprintln!(
            "strata: point-in-time WAL recovery: replay stopped at damage in {} at offset \
             {offset}; every record after it was discarded",
            file.display()
        );
        for copy in &report.wal_set_aside {
            eprintln!("strata: the discarded log is kept in {}", copy.display());
        }
    }
}

/// The -e statements, or the script on standard input, as bytes: a statement with bytes that
/// are not UTF-8 is an error, the others run.
fn read_source(execute: Option<OsString>) -> Result<Vec<u8>, String> {
    match execute {
        Some(statements) => Ok(statements.into_vec()),
        None => {
            let mut source = Vec::new();
            io::stdin()
                .read_to_end(&mut source)
                .map_err(|error| format!("reading standard input: {error}"))?;
            Ok(source)
        }
    }
}

/// Runs the -e statements or the script on standard input.
fn run_script(session: &mut Session, execute: Option<OsString>) -> Result<(), String> {
    let source = read_source(execute)?;
    let mut stdout = io::stdout().lock();
    session
        .run_bytes(&source, &mut stdout)
        .map_err(|error| format!("writing output: {error}"))?;
    stdout
        .flush()
        .map_err(|error| format!("writing output: {error}"))
}

/// `strata shell --connect`: every statement runs on the server at `address`; the output and
/// the exit status are a local shell's.
fn connected_shell(
    address: &str,
    execute: Option<OsString>,
    timestamps: TimestampFormat,
) -> Result<ExitCode, String> {
    let interactive = execute.is_none() && io::stdin().is_terminal();
    let request = SessionRequest {
        settings: Settings {
            timestamps: timestamps.into(),
            width: session::terminal_width(),
        },
        user: (&UserIdentity::current()).into(),
        echo: false,
        reply_timeout: None,
        language: Language::Shell,
        sql_format: SqlFormat::Table,
    };
    let mut client = AdminClient::connect(address, request).map_err(|error| error.to_string())?;
    if interactive {
        let welcome = client.welcome();
        let banner = format!(
            "strata shell {} (HBase shell syntax), connected to {address} ({} serving {})\n\
             Use \"help\" to get list of supported commands.\n\
             Use \"exit\" to quit this interactive shell.",
            env!("CARGO_PKG_VERSION"),
            welcome.server,
            welcome.data,
        );
        let mut remote = RemoteSession::new(client);
        session::run_interactive(&mut remote, &banner).map_err(|error| error.to_string())?;
        return Ok(ExitCode::SUCCESS);
    }
    let source = read_source(execute)?;
    let mut stdout = io::stdout().lock();
    client
        .run(&source, &mut stdout)
        .map_err(|error| error.to_string())?;
    stdout
        .flush()
        .map_err(|error| format!("writing output: {error}"))?;
    if client.failures() > 0 {
        Ok(ExitCode::from(EXIT_FAILED))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}

/// Calls `stop` with the signal's number on the first SIGINT or SIGTERM, from a thread of its
/// own; [`SignalWatch::finish`] ends that thread.
fn on_stop_signal(stop: impl FnOnce(i32) + Send + 'static) -> Result<SignalWatch, String> {
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])
    .map_err(|error| format!("cannot catch SIGINT and SIGTERM: {error}"))?;
    let handle = signals.handle();
    let thread = std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            stop(signal);
        }
    });
    Ok(SignalWatch { handle, thread })
}

/// The thread [`on_stop_signal`] started.
struct SignalWatch {
    handle: signal_hook::iterator::Handle,
    thread: std::thread::JoinHandle<()>,
}

impl SignalWatch {
    /// Stops watching for signals.
    fn finish(self) {
        self.handle.close();
        let _ = self.thread.join();
    }
}

/// `--background-write-mib-per-sec` in bytes per second.
fn mib_per_sec(mib: u64) -> Result<u64, String> {
    mib.checked_mul(1024 * 1024).ok_or_else(|| {
        format!("--background-write-mib-per-sec {mib} does not fit in bytes per second")
    })
}

/// `strata thrift`: serves until SIGINT or SIGTERM, then closes the database.
fn thrift(args: ThriftArgs) -> Result<ExitCode, String> {
    let db_options = DbOptions {
        wal_recovery: args.wal_recovery.into(),
        ..DbOptions::default()
    }
    .with_background_write_limit(mib_per_sec(args.background_write_mib_per_sec)?);
    let db = Db::open(&args.data, db_options).map_err(|error| open_error(&args.data, &error))?;
    report_recovery(db.recovery_report());
    let options = args.gateway.options(SocketAddr::new(args.bind, args.port));
    let log = Arc::new(|line: &str| eprintln!("strata thrift: {line}"));
    let server = ThriftServer::bind(db.clone(), options, log)
        .map_err(|error| format!("cannot listen on {}:{}: {error}", args.bind, args.port))?;
    let handle = server.handle();
    let signals = on_stop_signal(move |signal| {
        eprintln!("strata thrift: signal {signal}, stopping");
        handle.shutdown();
    })?;
    eprintln!(
        "strata thrift: serving {} on {} (HBase Thrift1; {})",
        args.data.display(),
        server.local_addr(),
        args.gateway.describe(),
    );
    let served = server.run();
    signals.finish();
    let closed = db.close();
    served.map_err(|error| format!("serving: {error}"))?;
    closed.map_err(|error| format!("closing {}: {error}", args.data.display()))?;
    eprintln!("strata thrift: database closed");
    Ok(ExitCode::SUCCESS)
}

/// `strata server`: serves the three ports until SIGINT or SIGTERM, then closes the database.
fn server(args: ServerArgs) -> Result<ExitCode, String> {
    let events = RecentEvents::new(MAX_RECENT_EVENTS);
    logging::install(args.log_format.into(), args.log_level.as_deref(), &events)
        .map_err(|error| error.to_string())?;
    let db_options = DbOptions {
        wal_recovery: args.wal_recovery.into(),
        ..DbOptions::default()
    }
    .with_background_write_limit(mib_per_sec(args.background_write_mib_per_sec)?);
    let clock = db_options.clock.clone();
    let db = Db::open(&args.data, db_options).map_err(|error| open_error(&args.data, &error))?;
    log_recovery(db.recovery_report());
    let options = service::ServerOptions {
        thrift: args
            .gateway
            .options(SocketAddr::new(args.bind, args.thrift_port)),
        admin: AdminOptions {
            bind: SocketAddr::new(args.bind, args.admin_port),
            max_connections: args.admin_max_connections,
            max_request_bytes: args.max_request_mb.saturating_mul(1024 * 1024),
            ..AdminOptions::default()
        },
        http: HttpOptions {
            bind: SocketAddr::new(args.bind, args.http_port),
            max_connections: args.http_max_connections,
        },
    };
    let server = match Server::bind(db.clone(), clock, options, events) {
        Ok(server) => server,
        Err(error) => {
            let _ = db.close();
            return Err(error.to_string());
        }
    };
    let handle = server.handle();
    let signals = on_stop_signal(move |signal| {
        tracing::info!(target: "strata::server", signal, "stopping on a signal");
        handle.shutdown();
    })?;
    let addresses = server.addresses();
    // The one line standard output carries: scripts and tests read the ports from it.
    println!(
        "strata server listening thrift={} admin={} http={}",
        addresses.thrift, addresses.admin, addresses.http
    );
    let _ = io::stdout().flush();
    tracing::info!(
        target: "strata::server",
        data = %args.data.display(),
        thrift = %addresses.thrift,
        admin = %addresses.admin,
        http = %addresses.http,
        thrift_wire = args.gateway.describe().as_str(),
        "serving"
    );
    let served = server.run();
    signals.finish();
    let closed = db.close();
    served.map_err(|error| format!("serving: {error}"))?;
    closed.map_err(|error| format!("closing {}: {error}", args.data.display()))?;
    tracing::info!(target: "strata::server", "database closed");
    Ok(ExitCode::SUCCESS)
}

/// [`report_recovery`] for the server: the same facts, as log events.
fn log_recovery(report: &strata::RecoveryReport) {
    if let Some(reason) = strata::io_fallback_reason() {
        tracing::warn!(
            target: "strata::server",
            reason,
            "io_uring unavailable; using the sync I/O back end"
        );
    }
    if let Some((file, offset)) = &report.wal_damage {
        tracing::warn!(
            target: "strata::server",
            file = %file.display(),
            offset,
            "point-in-time WAL recovery: replay stopped at damage; every record after it was \
             discarded"
        );
        for copy in &report.wal_set_aside {
            tracing::warn!(target: "strata::server", copy = %copy.display(), "the discarded log is kept");
        }
    }
    tracing::info!(
        target: "strata::server",
        replayed = report.records_replayed,
        skipped = report.records_skipped,
        "database open"
    );
}
