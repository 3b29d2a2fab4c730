//! `strata`: the HBase-compatible shell and the on-disk tools of the strata storage engine.
//!
//! ```text
//! strata shell [--data DIR] [-e 'cmd; cmd'] [--timestamps millis|iso]
//! strata hfile FILE [--cells]
//! strata wal DIR
//! strata verify DIR
//! strata regions DIR TABLE
//! ```

use std::ffi::OsString;
use std::io::{self, IsTerminal, Read, Write};
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use strata::{DbOptions, WalRecovery};
use strata_tools::disk;
use strata_tools::exec::{ExecOptions, Executor};
use strata_tools::session::{self, Session};
use strata_tools::shell::{TableLayout, TimestampFormat};

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
    about = "The strata shell (HBase shell syntax) and on-disk tools"
)]
struct Cli {
    #[command(subcommand)]
    tool: Tool,
}

#[derive(Subcommand)]
enum Tool {
    /// HBase shell commands against a strata database: interactive on a terminal, a script
    /// from standard input otherwise, or the statements given with -e.
    Shell {
        /// The database directory (created when missing).
        #[arg(long, default_value = DEFAULT_DATA_DIR)]
        data: PathBuf,
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
            data,
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
    };
    result.unwrap_or_else(|message| {
        eprintln!("strata: {message}");
        ExitCode::from(EXIT_UNUSABLE)
    })
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
    let executor = Executor::open(&data, db_options, options)
        .map_err(|error| format!("cannot open {}: {error}", data.display()))?;
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

/// Runs the -e statements or the script on standard input. Both are read as bytes: a
/// statement with bytes that are not UTF-8 is an error, the others run.
fn run_script(session: &mut Session, execute: Option<OsString>) -> Result<(), String> {
    let source = match execute {
        Some(statements) => statements.into_vec(),
        None => {
            let mut source = Vec::new();
            io::stdin()
                .read_to_end(&mut source)
                .map_err(|error| format!("reading standard input: {error}"))?;
            source
        }
    };
    let mut stdout = io::stdout().lock();
    session
        .run_bytes(&source, &mut stdout)
        .map_err(|error| format!("writing output: {error}"))?;
    stdout
        .flush()
        .map_err(|error| format!("writing output: {error}"))
}
