//! `strata sql`: SQL over a strata database (strata-sql, DataFusion), from `-e`, a script on
//! standard input, or an interactive prompt with history; results as a table, CSV or JSON.
//! With `--cluster`, the scans run on `strata sql-worker` processes ([`worker`]).
//!
//! Statements are split by DataFusion's own parser (quotes and comments are respected) and
//! run one after another; a failed statement prints `Error: ...` on standard error and the
//! ones after it still run (the binary exits 1 at the end of a script that had a failure).

pub mod render;
pub mod worker;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rustyline::error::ReadlineError;
use strata::{Db, DbOptions};
use strata_sql::SqlContext;
use strata_sql::datafusion::common::Result as DfResult;
use strata_sql::datafusion::sql::parser::DFParserBuilder;

pub use render::OutputFormat;

/// The arguments of `strata sql`.
#[derive(Debug, clap::Args)]
pub struct SqlArgs {
    /// The database directory (created when missing).
    #[arg(long, default_value = "./strata-data")]
    pub data: PathBuf,
    /// Statements to run (separated by ';') instead of reading input.
    #[arg(short = 'e', long = "execute")]
    pub execute: Option<String>,
    /// How results are printed.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// DataFusion partitions a query aims for (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub partitions: usize,
    /// Run the scans on the workers of this cluster map (JSON: which `strata sql-worker`
    /// holds which key ranges); --data then only defines the tables and mappings.
    #[arg(long)]
    pub cluster: Option<PathBuf>,
    /// Run the statements on the `strata server` whose admin port is HOST:PORT, over the
    /// database it serves (its tables and mappings), instead of opening a directory.
    #[arg(long, value_name = "HOST:PORT", conflicts_with_all = ["data", "cluster", "partitions"])]
    pub connect: Option<String>,
}

/// Most lines of history kept.
const MAX_HISTORY_LINES: usize = 1000;

/// A SQL session that prints results.
pub struct SqlShell {
    context: SqlContext,
    runtime: tokio::runtime::Runtime,
    format: OutputFormat,
    failures: u64,
    timing: bool,
}

impl std::fmt::Debug for SqlShell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlShell")
            .field("context", &self.context)
            .field("failures", &self.failures)
            .finish()
    }
}

/// A tokio runtime for the session's queries.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start the query runtime: {error}"))
}

/// DataFusion's configuration for `partitions` target partitions (0: one per core).
pub fn session_config(partitions: usize) -> strata_sql::datafusion::prelude::SessionConfig {
    let config = strata_sql::datafusion::prelude::SessionConfig::new();
    if partitions == 0 {
        config
    } else {
        config.with_target_partitions(partitions)
    }
}

impl SqlShell {
    /// A shell over the database in `data`; with a cluster map, the scans run on its
    /// workers and `data` only defines the tables.
    pub fn open(
        data: &Path,
        format: OutputFormat,
        partitions: usize,
        cluster: Option<&Path>,
    ) -> Result<SqlShell, String> {
        let db = Db::open(data, DbOptions::default())
            .map_err(|error| format!("cannot open {}: {error}", data.display()))?;
        let config = session_config(partitions);
        let context = match cluster {
            None => SqlContext::with_config(db, config),
            Some(path) => {
                let cluster = strata_sql::Cluster::load(path).map_err(|error| error.to_string())?;
                SqlContext::with_cluster(db, config, cluster)
            }
        }
        .map_err(|error| error.to_string())?;
        SqlShell::new(context, format)
    }

    /// A shell running its statements in `context`.
    pub fn new(context: SqlContext, format: OutputFormat) -> Result<SqlShell, String> {
        Ok(SqlShell {
            context,
            runtime: runtime()?,
            format,
            failures: 0,
            timing: false,
        })
    }

    /// With `timing`, each result is followed by the time it took (interactive use).
    pub fn with_timing(mut self, timing: bool) -> SqlShell {
        self.timing = timing;
        self
    }

    /// The SQL session.
    pub fn context(&self) -> &SqlContext {
        &self.context
    }

    /// Statements that failed so far.
    pub fn failures(&self) -> u64 {
        self.failures
    }

    /// Counts a failure found outside [`SqlShell::run_text`] (input that is not text).
    pub fn count_failure(&mut self) {
        self.failures += 1;
    }

    /// Runs every statement of `text`, printing results to `out` and errors to `errors`.
    pub fn run_text(
        &mut self,
        text: &str,
        out: &mut dyn Write,
        errors: &mut dyn Write,
    ) -> io::Result<()> {
        let statements = match DFParserBuilder::new(text)
            .build()
            .and_then(|mut parser| parser.parse_statements())
        {
            Ok(statements) => statements,
            Err(error) => {
                self.failures += 1;
                return writeln!(errors, "Error: {error}");
            }
        };
        for statement in statements {
            let started = Instant::now();
            let context = self.context.session().clone();
            let result: DfResult<_> = self.runtime.block_on(async move {
                let plan = context.state().statement_to_plan(statement).await?;
                let frame = context.execute_logical_plan(plan).await?;
                let schema = frame.schema().as_arrow().clone();
                Ok((schema, frame.collect().await?))
            });
            match result {
                Ok((schema, batches)) => {
                    render::write_result(self.format, &schema, &batches, out)?;
                    if self.timing {
                        writeln!(out, "({:.3} s)", started.elapsed().as_secs_f64())?;
                    }
                }
                Err(error) => {
                    self.failures += 1;
                    writeln!(errors, "Error: {error}")?;
                }
            }
        }
        out.flush()
    }

    /// The interactive prompt: reads statements (ended by `;`) with line editing and
    /// history until end of input or `\q`.
    pub fn run_interactive(&mut self, banner: &str) -> Result<(), String> {
        prompt(banner, |text| {
            self.run_text(text, &mut io::stdout().lock(), &mut io::stderr().lock())
                .map_err(|error| format!("writing output: {error}"))
        })
    }

    /// Closes the database.
    pub fn close(self) -> Result<(), String> {
        self.context.db().close().map_err(|error| error.to_string())
    }
}

/// The prompt: reads statements (ended by `;`) with line editing and history
/// (`~/.strata_sql_history`) until end of input or `\q`, and gives each to `run`.
fn prompt(banner: &str, mut run: impl FnMut(&str) -> Result<(), String>) -> Result<(), String> {
    let config = rustyline::Config::builder()
        .max_history_size(MAX_HISTORY_LINES)
        .map_err(|error| error.to_string())?
        .auto_add_history(false)
        .build();
    let mut editor: rustyline::DefaultEditor =
        rustyline::Editor::with_config(config).map_err(|error| error.to_string())?;
    let history =
        std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".strata_sql_history"));
    if let Some(path) = &history {
        // A missing history file is normal the first time.
        let _ = editor.load_history(path);
    }
    println!("{banner}");
    let mut statement = String::new();
    let outcome = loop {
        let prompt = if statement.is_empty() {
            "sql> "
        } else {
            "  -> "
        };
        match editor.readline(prompt) {
            Ok(line) => {
                if statement.is_empty() && line.trim() == "\\q" {
                    break Ok(());
                }
                if !statement.is_empty() {
                    statement.push('\n');
                }
                statement.push_str(&line);
                if !statement.trim_end().ends_with(';') {
                    continue;
                }
                // A statement missing from the history is not worth stopping for.
                let _ = editor.add_history_entry(statement.as_str());
                let text = std::mem::take(&mut statement);
                if let Err(error) = run(&text) {
                    break Err(error);
                }
            }
            Err(ReadlineError::Interrupted) => statement.clear(),
            Err(ReadlineError::Eof) => break Ok(()),
            Err(error) => break Err(error.to_string()),
        }
    };
    if let Some(path) = &history {
        // Losing history is not worth failing the session for.
        let _ = editor.save_history(path);
    }
    outcome
}

/// The statements of `-e`, else standard input read whole.
fn script(execute: Option<String>) -> Result<String, String> {
    use std::io::Read;
    match execute {
        Some(text) => Ok(text),
        None => {
            let mut text = String::new();
            io::stdin()
                .read_to_string(&mut text)
                .map_err(|error| format!("reading standard input: {error}"))?;
            Ok(text)
        }
    }
}

/// `strata sql --connect`: the statements run in an SQL session on a server's admin port.
fn run_connected(address: &str, args: SqlArgs) -> Result<std::process::ExitCode, String> {
    use crate::server::client::{AdminClient, SessionRequest};
    use crate::server::wire::{Language, Settings, Timestamps};
    use std::io::IsTerminal;
    let request = SessionRequest {
        settings: Settings {
            timestamps: Timestamps::Millis,
            width: 0,
        },
        user: (&crate::exec::UserIdentity::current()).into(),
        echo: false,
        reply_timeout: None,
        language: Language::Sql,
        sql_format: args.format.into(),
    };
    let mut client = AdminClient::connect(address, request).map_err(|error| error.to_string())?;
    let interactive = args.execute.is_none() && io::stdin().is_terminal();
    if interactive {
        let banner = format!(
            "strata sql {} (DataFusion) on {} ({}), data in {}\nEnd statements with ';'. \\q quits.",
            env!("CARGO_PKG_VERSION"),
            address,
            client.welcome().server,
            client.welcome().data
        );
        prompt(&banner, |text| {
            client
                .run(text.as_bytes(), &mut io::stdout().lock())
                .map(|_| ())
                .map_err(|error| error.to_string())
        })?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let text = script(args.execute)?;
    client
        .run(text.as_bytes(), &mut io::stdout().lock())
        .map_err(|error| error.to_string())?;
    Ok(if client.failures() > 0 {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    })
}

/// `strata sql`: the statements of `-e`, or a script on standard input, or the prompt; on
/// the database directory, or with `--connect` on a server.
pub fn run(args: SqlArgs) -> Result<std::process::ExitCode, String> {
    use std::io::IsTerminal;
    if let Some(address) = args.connect.clone() {
        return run_connected(&address, args);
    }
    let mut shell = SqlShell::open(
        &args.data,
        args.format,
        args.partitions,
        args.cluster.as_deref(),
    )?;
    let interactive = args.execute.is_none() && io::stdin().is_terminal();
    let ran = if interactive {
        let banner = format!(
            "strata sql {} (DataFusion), data in {}\nEnd statements with ';'. \\q quits.",
            env!("CARGO_PKG_VERSION"),
            args.data.display()
        );
        shell.timing = true;
        shell.run_interactive(&banner)
    } else {
        let text = script(args.execute)?;
        shell
            .run_text(&text, &mut io::stdout().lock(), &mut io::stderr().lock())
            .map_err(|error| format!("writing output: {error}"))
    };
    let failures = shell.failures();
    let closed = shell.close();
    ran?;
    closed?;
    Ok(if !interactive && failures > 0 {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    })
}
