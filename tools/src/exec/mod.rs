//! The command executor: runs the typed [`Command`]s of the shell against a strata [`Db`] and
//! prints what HBase 2.x's shell prints for them.
//!
//! The executor writes a command's own output (result rows, messages, row counts) to the
//! writer it is given and returns a [`Reply`] telling the caller what HBase prints after it
//! (`Took X.XXXX seconds` and, for commands that return a value, IRB's `=> value` echo). The
//! caller ([`Session`](crate::session::Session)) times the command and prints those lines and
//! errors, so the executor never measures time.
//!
//! Modules: [`schema`] converts between the shell's family and table specifications and the
//! engine's descriptors (and renders `describe`); `ddl` runs the table commands; `dml` the
//! reads and writes; `admin` the maintenance and cluster commands (and `backup`); `snapshot` HBase's snapshot
//! commands; `output` renders cells;
//! `errors` words engine errors as HBase does.

mod admin;
mod ddl;
mod dml;
mod errors;
pub mod identity;
mod namespace;
mod output;
pub mod schema;
mod snapshot;

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use strata::{Clock, Db, DbOptions, Table};

use crate::shell::{Command, TableLayout, TimestampFormat};

pub use admin::region_name;
pub use errors::CommandError;
pub use identity::UserIdentity;
pub use namespace::table_reference;

/// How the executor prints results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecOptions {
    /// How cell timestamps are printed (epoch milliseconds by default).
    pub timestamps: TimestampFormat,
    /// The two-column layout of `get` and `scan` (unpadded when output is no terminal).
    pub layout: TableLayout,
}

/// What the shell prints after a command's own output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `Took X.XXXX seconds`.
    Done,
    /// `Took X.XXXX seconds`, then `=> value`: the command returns a value that HBase's IRB
    /// echoes (`list`, `count`, `exists`, `is_enabled`, `create`).
    Value(String),
    /// Nothing: `help`, which HBase runs outside its timed command wrapper.
    Untimed,
    /// Leave the shell (`exit`).
    Exit,
}

/// Runs shell commands against one open database.
pub struct Executor {
    db: Db,
    clock: Arc<dyn Clock>,
    options: ExecOptions,
    /// Who `whoami` says runs the shell.
    user: UserIdentity,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("db", &self.db.path())
            .field("options", &self.options)
            .finish()
    }
}

impl Executor {
    /// Opens (creating if missing, unless `db_options` says otherwise) the database in `dir`.
    pub fn open(
        dir: impl AsRef<Path>,
        db_options: DbOptions,
        options: ExecOptions,
    ) -> strata::Result<Executor> {
        let clock = db_options.clock.clone();
        let db = Db::open(dir, db_options)?;
        Ok(Executor::with_db(db, clock, options))
    }

    /// An executor over a database that is already open (a server's sessions share one);
    /// `clock` is the one the database was opened with. Closing it is the owner's job.
    pub fn with_db(db: Db, clock: Arc<dyn Clock>, options: ExecOptions) -> Executor {
        Executor {
            db,
            clock,
            options,
            user: UserIdentity::current(),
        }
    }

    /// Changes who `whoami` reports (tests fix it so that transcripts do not depend on the
    /// machine).
    pub fn set_user(&mut self, user: UserIdentity) {
        self.user = user;
    }

    /// The database.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The print options.
    pub fn options(&self) -> ExecOptions {
        self.options
    }

    /// Changes the print options (for instance the layout when the terminal is resized).
    pub fn set_options(&mut self, options: ExecOptions) {
        self.options = options;
    }

    /// Closes the database (flushing memstores, syncing the WAL).
    pub fn close(self) -> strata::Result<()> {
        self.db.close()
    }

    /// Runs one command, writing its output to `out`.
    pub fn execute(
        &mut self,
        command: &Command,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        match command {
            Command::Create(create) => self.create(create, out),
            Command::List { pattern } => self.list(pattern.as_deref(), out),
            Command::Exists { table } => self.exists(table, out),
            Command::Describe { table } => self.describe(table, out),
            Command::Put(put) => self.put(put),
            Command::Get(get) => self.get(get, out),
            Command::Scan(scan) => self.scan(scan, out),
            Command::Count(count) => self.count(count, out),
            Command::Delete(delete) => self.delete(delete),
            Command::DeleteAll(delete) => self.delete_all(delete),
            Command::Incr(incr) => self.incr(incr, out),
            Command::GetCounter(counter) => self.get_counter(counter, out),
            Command::Append(append) => self.append(append, out),
            Command::Truncate { table } => self.truncate(table, false, out),
            Command::TruncatePreserve { table } => self.truncate(table, true, out),
            Command::Disable { table } => self.disable(table),
            Command::Enable { table } => self.enable(table),
            Command::IsEnabled { table } => self.is_enabled(table, true, out),
            Command::IsDisabled { table } => self.is_enabled(table, false, out),
            Command::Drop { table } => self.drop_table(table),
            Command::Alter(alter) => self.alter(alter, out),
            Command::Flush(target) => self.flush(target),
            Command::Compact(target) => self.compact(target, false),
            Command::MajorCompact(target) => self.compact(target, true),
            Command::Split(split) => self.split(split),
            Command::ListRegions(list) => self.list_regions(list, out),
            Command::MergeRegion { regions } => self.merge_region(regions),
            Command::Normalize => self.normalize(out),
            Command::NormalizerSwitch { on } => self.normalizer_switch(*on, out),
            Command::NormalizerEnabled => self.normalizer_enabled(out),
            Command::Status { format } => self.status(*format, out),
            Command::GetSplits { table } => self.get_splits(table, out),
            Command::GetTable { table } => self.get_table(table),
            Command::Whoami => self.whoami(out),
            Command::ListNamespace { pattern } => self.list_namespace(pattern.as_deref(), out),
            Command::CreateNamespace { namespace } => self.create_namespace(namespace),
            Command::DescribeNamespace { namespace } => self.describe_namespace(namespace, out),
            Command::DropNamespace { namespace } => self.drop_namespace(namespace),
            Command::ListNamespaceTables { namespace } => {
                self.list_namespace_tables(namespace, out)
            }
            // Variables live in the session, which resolves these before they run.
            Command::TableMethod(_) | Command::Variable { .. } => Err(CommandError::Failed(
                "table references are resolved by the shell session (strata_tools::session)"
                    .to_owned(),
            )),
            Command::Snapshot {
                table,
                name,
                skip_flush,
            } => self.snapshot(table, name, *skip_flush),
            Command::ListSnapshots { pattern } => {
                self.list_snapshots(None, pattern.as_deref(), out)
            }
            Command::ListTableSnapshots {
                table_pattern,
                pattern,
            } => self.list_snapshots(Some(table_pattern), pattern.as_deref(), out),
            Command::CloneSnapshot { name, table } => self.clone_snapshot(name, table),
            Command::RestoreSnapshot { name } => self.restore_snapshot(name),
            Command::DeleteSnapshot { name } => self.delete_snapshot(name),
            Command::Backup { dir } => self.backup(dir, out),
            Command::Version => {
                writeln!(out, "{}", version_line())?;
                Ok(Reply::Done)
            }
            Command::Help { topic } => help(topic.as_deref(), out),
            Command::Exit => Ok(Reply::Exit),
        }
    }

    /// A handle to `name`, or HBase's `Unknown table t!`.
    fn table(&self, name: &str) -> Result<Table, CommandError> {
        self.db
            .table(name)
            .map_err(|error| self.engine_error(name, error))
    }

    /// The names `list`-like commands keep: those the whole regular expression matches
    /// (Java's `Pattern.matches`), all of them without one.
    fn matching(names: Vec<String>, pattern: Option<&str>) -> Result<Vec<String>, CommandError> {
        let regex = regex::Regex::new(&format!("^(?:{})$", pattern.unwrap_or(".*")))
            .map_err(|error| errors::failed(format!("invalid regular expression: {error}")))?;
        Ok(names
            .into_iter()
            .filter(|name| regex.is_match(name))
            .collect())
    }

    /// "Now" by the database's clock.
    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }
}

/// What `version` prints.
pub fn version_line() -> String {
    format!("strata {}", env!("CARGO_PKG_VERSION"))
}

/// `help`, `help 'command'`, `help 'group'`.
fn help(topic: Option<&str>, out: &mut dyn Write) -> Result<Reply, CommandError> {
    let text = match topic {
        None => crate::shell::help_overview(),
        Some(topic) => match crate::shell::help_text(topic) {
            Some(text) => text.to_owned(),
            None => crate::shell::group_help(topic).ok_or_else(|| {
                CommandError::Failed(format!("Invalid command or command group name: {topic}"))
            })?,
        },
    };
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    Ok(Reply::Untimed)
}

/// Writes `text` followed by a newline; a helper for the many one-line messages.
fn line(out: &mut dyn Write, text: &str) -> io::Result<()> {
    writeln!(out, "{text}")
}
