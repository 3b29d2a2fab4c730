//! A shell session: input text in, HBase shell output out.
//!
//! [`Session::run_source`] parses a piece of input (a typed statement, a `-e` argument, a
//! whole script), runs each statement with the [`Executor`] and prints what HBase 2.x's shell
//! prints around it: warnings about the arguments, the command's output, `Took X.XXXX
//! seconds`, IRB's `=> value` echo, and for a failed command
//!
//! ```text
//!
//! ERROR: Unknown table nope!
//!
//! For usage try 'help "scan"'
//!
//! Took 0.0003 seconds
//! ```
//!
//! An error does not stop the statements after it (the caller decides what a failure means:
//! the `strata shell` binary exits non-zero at the end of a script that had one).
//! [`Session::run_bytes`] does the same for a script read as bytes, in which a statement
//! holding bytes that are not UTF-8 is one more such error.
//! [`run_interactive`] reads statements from a terminal with line editing and history;
//! [`run_lines`] is its loop, over any [`LineEditor`] and any [`Runner`]: a [`Session`] here,
//! or one on a server (`strata shell --connect`, [`crate::server::client::RemoteSession`]).

use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rustyline::error::ReadlineError;

use crate::exec::{CommandError, ExecOptions, Executor, Reply, table_reference};
use crate::shell::{
    Command, NameError, NameErrorKind, ShellError, SourceText, Span, Statement, SyntaxErrorKind,
    TableLayout, needs_more_input, parse_script, parse_source, resolve_table_method, took_line,
};

/// Whether to keep reading input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read more statements.
    Continue,
    /// `exit` was run.
    Exit,
}

/// What one statement that ran did, for [`Session::after_each_statement`].
#[derive(Debug, Clone, Copy)]
pub struct StatementReport<'a> {
    /// The command that ran.
    pub command: &'a Command,
    /// The command failed (its error was printed).
    pub failed: bool,
    /// How long it ran.
    pub elapsed: Duration,
}

/// The hook of [`Session::after_each_statement`].
type AfterStatement = Box<dyn FnMut(&StatementReport<'_>)>;

/// Runs statements and prints their output.
pub struct Session {
    executor: Executor,
    echo: bool,
    failures: u64,
    before_statement: Option<Box<dyn FnMut()>>,
    after_statement: Option<AfterStatement>,
    /// Table references assigned so far (`t = get_table 't'`): variable to table name.
    variables: BTreeMap<String, String>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("executor", &self.executor)
            .field("echo", &self.echo)
            .field("failures", &self.failures)
            .finish()
    }
}

impl Session {
    /// A session running commands with `executor`.
    pub fn new(executor: Executor) -> Session {
        Session {
            executor,
            echo: false,
            failures: 0,
            before_statement: None,
            after_statement: None,
            variables: BTreeMap::new(),
        }
    }

    /// With `echo`, each statement's source lines are printed before its output, prefixed
    /// with `strata> `, so the output reads as a transcript (used by the script tests).
    pub fn with_echo(mut self, echo: bool) -> Session {
        self.echo = echo;
        self
    }

    /// Calls `hook` before each statement runs (tests use it to move a manual clock).
    pub fn before_each_statement(&mut self, hook: impl FnMut() + 'static) {
        self.before_statement = Some(Box::new(hook));
    }

    /// Calls `hook` after each command ran (not after statements that failed to parse): the
    /// server logs and counts the commands its sessions run.
    pub fn after_each_statement(&mut self, hook: impl FnMut(&StatementReport<'_>) + 'static) {
        self.after_statement = Some(Box::new(hook));
    }

    /// Statements that failed so far (syntax, argument and command errors).
    pub fn failures(&self) -> u64 {
        self.failures
    }

    /// The executor.
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// The executor, mutably (to change its print options).
    pub fn executor_mut(&mut self) -> &mut Executor {
        &mut self.executor
    }

    /// Ends the session, returning the executor (to close the database).
    pub fn into_executor(self) -> Executor {
        self.executor
    }

    /// Runs every statement of `source`, printing to `out`. Returns [`Flow::Exit`] when a
    /// statement was `exit` (the statements after it are not run). Only a failure to write
    /// `out` is an `Err`; command failures are printed and counted.
    pub fn run_source(&mut self, source: &str, out: &mut dyn Write) -> io::Result<Flow> {
        self.run_statements(source, parse_script(source), out)
    }

    /// [`Session::run_source`] for input read as bytes (a script on standard input): a
    /// statement holding bytes that are not UTF-8 fails with a syntax error at their line and
    /// column, and the other statements run.
    pub fn run_bytes(&mut self, input: &[u8], out: &mut dyn Write) -> io::Result<Flow> {
        let source = SourceText::decode(input);
        self.run_statements(source.text(), parse_source(&source), out)
    }

    /// Runs the statements parsed from `source`, printing to `out`.
    fn run_statements(
        &mut self,
        source: &str,
        statements: Vec<Result<Statement, ShellError>>,
        out: &mut dyn Write,
    ) -> io::Result<Flow> {
        let mut echoed_to = 0;
        for parsed in statements {
            match parsed {
                Ok(statement) => {
                    if self.echo {
                        echoed_to = echo(source, statement.span, echoed_to, out)?;
                    }
                    let Some(statement) = self.resolve(statement, source, out)? else {
                        continue;
                    };
                    for warning in &statement.warnings {
                        writeln!(out, "{warning}")?;
                    }
                    if let Some(hook) = self.before_statement.as_mut() {
                        hook();
                    }
                    let started = Instant::now();
                    let reply = self.executor.execute(&statement.command, out);
                    let elapsed = started.elapsed();
                    if reply.is_ok() {
                        self.assign(&statement);
                    }
                    if let Some(hook) = self.after_statement.as_mut() {
                        hook(&StatementReport {
                            command: &statement.command,
                            failed: matches!(reply, Err(CommandError::Failed(_))),
                            elapsed,
                        });
                    }
                    match reply {
                        Ok(Reply::Done) => writeln!(out, "{}", took_line(elapsed))?,
                        Ok(Reply::Value(value)) => {
                            writeln!(out, "{}", took_line(elapsed))?;
                            writeln!(out, "=> {value}")?;
                        }
                        Ok(Reply::Untimed) => {}
                        Ok(Reply::Exit) => return Ok(Flow::Exit),
                        Err(CommandError::Failed(message)) => {
                            self.failures += 1;
                            error_block(&message, statement.command.name(), out)?;
                            writeln!(out, "{}", took_line(elapsed))?;
                        }
                        Err(CommandError::Output(error)) => return Err(error),
                    }
                }
                Err(error) => {
                    if self.echo {
                        // The statement may begin lines before the error (an unclosed string
                        // or bracket): echo from the first line not echoed yet.
                        let from = first_statement_line(source, echoed_to).min(error.span().start);
                        let span = Span::new(from, error.span().end.max(from));
                        echoed_to = echo(source, span, echoed_to, out)?;
                    }
                    self.failures += 1;
                    self.print_parse_error(&error, source, out)?;
                }
            }
        }
        Ok(Flow::Continue)
    }

    /// Resolves what refers to variables: `t.put ...` becomes `put 't', ...` once `t`'s table
    /// is known; a bare variable prints its value (IRB's echo). Returns the statement to
    /// run, or `None` when there is nothing to run (the variable was printed, or an error
    /// was).
    fn resolve(
        &mut self,
        statement: Statement,
        source: &str,
        out: &mut dyn Write,
    ) -> io::Result<Option<Statement>> {
        let resolved = match &statement.command {
            Command::TableMethod(call) => {
                match call
                    .receiver
                    .as_ref()
                    .map(|(name, span)| (name, *span, self.variables.get(name)))
                {
                    Some((_, _, Some(table))) => resolve_table_method(call, table, source),
                    Some((name, span, None)) => Err(ShellError::from(NameError::new(
                        name,
                        NameErrorKind::UndefinedVariable,
                        span,
                        source,
                    ))),
                    None => Ok(statement),
                }
            }
            Command::Variable { name, span } => {
                match self.variables.get(name) {
                    Some(table) => writeln!(out, "=> {}", table_reference(table))?,
                    None => {
                        let error =
                            NameError::new(name, NameErrorKind::UndefinedCommand, *span, source);
                        self.failures += 1;
                        self.print_parse_error(&ShellError::from(error), source, out)?;
                    }
                }
                return Ok(None);
            }
            _ => Ok(statement),
        };
        match resolved {
            Ok(statement) => Ok(Some(statement)),
            Err(error) => {
                self.failures += 1;
                self.print_parse_error(&error, source, out)?;
                Ok(None)
            }
        }
    }

    /// `t = get_table 't'` (or `t = create 't', ...`) succeeded: `t` holds the table.
    fn assign(&mut self, statement: &Statement) {
        let table = match &statement.command {
            Command::GetTable { table } => table,
            Command::Create(create) => &create.table,
            _ => return,
        };
        if let Some(variable) = &statement.assign_to {
            self.variables.insert(variable.clone(), table.clone());
        }
    }

    /// Syntax and name errors print as IRB prints them; argument errors as HBase's command
    /// wrapper prints a failed command.
    fn print_parse_error(
        &self,
        error: &ShellError,
        source: &str,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        match (error, error.command()) {
            (ShellError::Argument(argument), Some(command)) => {
                error_block(&argument.kind.to_string(), command, out)?;
                writeln!(out, "{}", took_line(std::time::Duration::ZERO))
            }
            _ => writeln!(out, "{}", error.render(source)),
        }
    }
}

/// What the interactive loop ([`run_lines`]) runs statements with: a local [`Session`], or a
/// session on a server.
pub trait Runner {
    /// Sets the width statements' output is laid out for (the terminal's, read before each
    /// statement since it may have been resized).
    fn set_width(&mut self, width: usize) -> Result<(), InteractiveError>;

    /// Runs the statements of `source`, printing to `out` ([`Session::run_source`]).
    fn run_source(&mut self, source: &str, out: &mut dyn Write) -> Result<Flow, InteractiveError>;

    /// Reports line `line` of the statement being typed, which was not UTF-8 and was dropped
    /// with that statement: the syntax error a script gets ([`invalid_line_report`]), counted
    /// as a failure.
    fn report_invalid_line(&mut self, line: usize, out: &mut dyn Write) -> io::Result<()>;
}

impl Runner for Session {
    fn set_width(&mut self, width: usize) -> Result<(), InteractiveError> {
        let options = self.executor.options();
        self.executor.set_options(ExecOptions {
            layout: TableLayout::new(width),
            ..options
        });
        Ok(())
    }

    fn run_source(&mut self, source: &str, out: &mut dyn Write) -> Result<Flow, InteractiveError> {
        Session::run_source(self, source, out).map_err(InteractiveError::Output)
    }

    fn report_invalid_line(&mut self, line: usize, out: &mut dyn Write) -> io::Result<()> {
        self.failures += 1;
        writeln!(out, "{}", invalid_line_report(line))
    }
}

/// The syntax error of line `line` of a typed statement that was not UTF-8 (the error a
/// script gets, without the line, which was dropped).
pub fn invalid_line_report(line: usize) -> String {
    format!(
        "SyntaxError: (hbase):{line}: {}",
        SyntaxErrorKind::InvalidUtf8
    )
}

/// HBase's report of a failed command (without the `Took` line).
fn error_block(message: &str, command: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out)?;
    writeln!(out, "ERROR: {message}")?;
    writeln!(out)?;
    writeln!(out, "For usage try 'help \"{command}\"'")?;
    writeln!(out)
}

/// Prints the source lines `span` touches that were not printed yet (those before
/// `echoed_to`), the first one prefixed with `strata> `. Returns the new `echoed_to`.
fn echo(source: &str, span: Span, echoed_to: usize, out: &mut dyn Write) -> io::Result<usize> {
    let line_start = source
        .get(..span.start.min(source.len()))
        .and_then(|before| before.rfind('\n'))
        .map_or(0, |newline| newline + 1);
    let start = line_start.max(echoed_to);
    let end_search = span.end.max(span.start).min(source.len());
    let end = source
        .get(end_search..)
        .and_then(|after| after.find('\n'))
        .map_or(source.len(), |newline| end_search + newline);
    if start >= end {
        return Ok(echoed_to);
    }
    let text = source.get(start..end).unwrap_or("");
    for (index, text_line) in text.lines().enumerate() {
        if index == 0 && start == line_start {
            writeln!(out, "strata> {text_line}")?;
        } else {
            writeln!(out, "        {text_line}")?;
        }
    }
    Ok(end + 1)
}

/// The offset of the first line at or after `from` that is neither blank nor a comment.
fn first_statement_line(source: &str, from: usize) -> usize {
    let mut offset = from.min(source.len());
    for text_line in source.get(offset..).unwrap_or("").split_inclusive('\n') {
        let trimmed = text_line.trim();
        if !trimmed.is_empty() && !trimmed.starts_with('#') {
            return offset;
        }
        offset += text_line.len();
    }
    offset
}

/// The width of the terminal on standard output; 0 when standard output is not a terminal
/// (then nothing is padded or wrapped, as in HBase).
pub fn terminal_width() -> usize {
    if !io::stdout().is_terminal() {
        return 0;
    }
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which points to the live,
    // properly aligned local above; standard output stays open for the whole process.
    let status = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) };
    if status == 0 {
        usize::from(size.ws_col)
    } else {
        0
    }
}

/// Where the interactive shell keeps its history: `$HOME/.strata_shell_history`.
fn history_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".strata_shell_history"))
}

/// Most lines of history kept.
const MAX_HISTORY_LINES: usize = 1000;

/// Where the interactive shell reads its lines: the terminal's line editor in
/// [`run_interactive`], scripted lines in tests.
pub trait LineEditor {
    /// Shows `prompt` and reads one line, without its line end. The errors are rustyline's:
    /// `Interrupted` (Ctrl-C), `Eof` (Ctrl-D), `Io` of kind `InvalidData` for input that is
    /// not UTF-8, any other for a terminal that failed.
    fn read_line(&mut self, prompt: &str) -> Result<String, ReadlineError>;

    /// Adds a statement to the history.
    fn add_history(&mut self, statement: &str);

    /// Drops the input that has arrived but was not read: after input that was not UTF-8,
    /// the rest of its line and whatever was pasted with it.
    fn discard_pending_input(&mut self);

    /// The width of the terminal in columns; 0 when output is not a terminal.
    fn width(&self) -> usize;
}

/// rustyline's editor on the process's terminal.
struct TerminalEditor {
    editor: rustyline::DefaultEditor,
}

impl LineEditor for TerminalEditor {
    fn read_line(&mut self, prompt: &str) -> Result<String, ReadlineError> {
        self.editor.readline(prompt)
    }

    fn add_history(&mut self, statement: &str) {
        // A statement missing from the history is not worth stopping the session for.
        let _ = self.editor.add_history_entry(statement);
    }

    fn discard_pending_input(&mut self) {
        // rustyline has already dropped what it had read ahead (it reads up to 1 KiB at a
        // time); the rest of a longer paste is still in the terminal's input queue.
        // SAFETY: tcflush takes no pointer; it acts on standard input's descriptor, open for
        // the whole process. On a descriptor that is not a terminal it fails with ENOTTY and
        // changes nothing, which is fine: there is then no typed-ahead input to drop.
        let _ = unsafe { libc::tcflush(libc::STDIN_FILENO, libc::TCIFLUSH) };
    }

    fn width(&self) -> usize {
        terminal_width()
    }
}

/// Reads statements from the terminal until `exit` or end of input (Ctrl-D), with line
/// editing and history: [`run_lines`] on rustyline's editor.
pub fn run_interactive(session: &mut dyn Runner, banner: &str) -> Result<(), InteractiveError> {
    let config = rustyline::Config::builder()
        .max_history_size(MAX_HISTORY_LINES)
        .map_err(InteractiveError::Editor)?
        .auto_add_history(false)
        .build();
    let editor: rustyline::DefaultEditor =
        rustyline::Editor::with_config(config).map_err(InteractiveError::Editor)?;
    let mut terminal = TerminalEditor { editor };
    let history = history_path();
    if let Some(path) = &history {
        // A missing history file is normal the first time.
        let _ = terminal.editor.load_history(path);
    }
    let mut stdout = io::stdout();
    writeln!(stdout, "{banner}").map_err(InteractiveError::Output)?;
    let ran = run_lines(session, &mut terminal, &mut stdout);
    if let Some(path) = &history {
        // Losing history is not worth failing the session for.
        let _ = terminal.editor.save_history(path);
    }
    ran
}

/// The interactive loop: reads lines from `editor` until `exit` or end of input, printing to
/// `out`. A statement continues on the next line while it is unfinished
/// ([`needs_more_input`]); Ctrl-C abandons the statement being typed. Errors are printed and
/// the shell keeps going, also after a line that is not UTF-8: that line is one syntax error,
/// and the statement it was part of is dropped with the input pasted after it.
pub fn run_lines(
    session: &mut dyn Runner,
    editor: &mut dyn LineEditor,
    out: &mut dyn Write,
) -> Result<(), InteractiveError> {
    let mut statement = String::new();
    let mut number = 1u32;
    loop {
        let prompt = if statement.is_empty() {
            format!("strata:{number:03}:0> ")
        } else {
            format!("strata:{number:03}:1* ")
        };
        match editor.read_line(&prompt) {
            Ok(text) => {
                if !statement.is_empty() {
                    statement.push('\n');
                }
                statement.push_str(&text);
                if needs_more_input(&statement) {
                    continue;
                }
                if statement.trim().is_empty() {
                    statement.clear();
                    continue;
                }
                editor.add_history(&statement);
                session.set_width(editor.width())?;
                let flow = session.run_source(&statement, out)?;
                out.flush().map_err(InteractiveError::Output)?;
                statement.clear();
                number += 1;
                if flow == Flow::Exit {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => statement.clear(),
            Err(ReadlineError::Eof) => break,
            // rustyline's report of a byte sequence that is not UTF-8. Its editor holds no
            // state from the failed line, so reading goes on with the next one.
            Err(ReadlineError::Io(error)) if error.kind() == io::ErrorKind::InvalidData => {
                editor.discard_pending_input();
                let line = if statement.is_empty() {
                    1
                } else {
                    statement.split('\n').count() + 1
                };
                statement.clear();
                session
                    .report_invalid_line(line, out)
                    .map_err(InteractiveError::Output)?;
                out.flush().map_err(InteractiveError::Output)?;
                number += 1;
            }
            Err(error) => return Err(InteractiveError::Editor(error)),
        }
    }
    Ok(())
}

/// Why the interactive shell stopped early.
#[derive(Debug)]
pub enum InteractiveError {
    /// The line editor failed (terminal trouble).
    Editor(rustyline::error::ReadlineError),
    /// Writing to standard output failed.
    Output(io::Error),
    /// The server of a connected shell failed or went away (what happened, in words).
    Server(String),
}

impl std::fmt::Display for InteractiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InteractiveError::Editor(error) => write!(f, "line editor: {error}"),
            InteractiveError::Output(error) => write!(f, "writing output: {error}"),
            InteractiveError::Server(message) => write!(f, "server: {message}"),
        }
    }
}

impl std::error::Error for InteractiveError {}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;

    /// Lines (or rustyline errors) given in advance; the end of input after them.
    #[derive(Default)]
    struct ScriptedEditor {
        lines: VecDeque<Result<String, ReadlineError>>,
        prompts: Vec<String>,
        history: Vec<String>,
        discards: usize,
    }

    impl ScriptedEditor {
        fn new(lines: Vec<Result<&str, ReadlineError>>) -> ScriptedEditor {
            ScriptedEditor {
                lines: lines
                    .into_iter()
                    .map(|line| line.map(str::to_owned))
                    .collect(),
                ..ScriptedEditor::default()
            }
        }
    }

    impl LineEditor for ScriptedEditor {
        fn read_line(&mut self, prompt: &str) -> Result<String, ReadlineError> {
            self.prompts.push(prompt.to_owned());
            self.lines.pop_front().unwrap_or(Err(ReadlineError::Eof))
        }

        fn add_history(&mut self, statement: &str) {
            self.history.push(statement.to_owned());
        }

        fn discard_pending_input(&mut self) {
            self.discards += 1;
        }

        fn width(&self) -> usize {
            0
        }
    }

    /// What rustyline returns for a byte sequence that is not UTF-8 (`tty/unix.rs`,
    /// `next_char`: `ReadlineError::from(ErrorKind::InvalidData)`).
    fn not_utf8() -> ReadlineError {
        ReadlineError::from(io::ErrorKind::InvalidData)
    }

    fn session(dir: &std::path::Path) -> Session {
        let executor =
            Executor::open(dir, strata::DbOptions::default(), ExecOptions::default()).unwrap();
        Session::new(executor)
    }

    #[test]
    fn a_line_that_is_not_utf8_is_one_error_and_the_shell_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = session(dir.path());
        let mut editor = ScriptedEditor::new(vec![
            Ok("create 't', 'f'"),
            Ok("put 't', 'r1',"),
            Err(not_utf8()),
            Err(not_utf8()),
            Ok("put 't', 'r2', 'f:q', 'v'"),
            Ok("count 't'"),
        ]);
        let mut out = Vec::new();
        run_lines(&mut session, &mut editor, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let error = "invalid multibyte char (UTF-8): write bytes that are not UTF-8 as \\xNN \
                     escapes in a double-quoted string, such as \"caf\\xE9\"\n";
        // The first bad line was the statement's second; the next one starts a statement.
        assert!(
            text.contains(&format!(
                "SyntaxError: (hbase):2: {error}SyntaxError: (hbase):1: {error}"
            )),
            "{text}"
        );
        assert!(
            text.contains("1 row(s)\n"),
            "the unfinished put was dropped: {text}"
        );
        assert_eq!(session.failures(), 2);
        assert_eq!(editor.discards, 2);
        assert_eq!(
            editor.prompts,
            [
                "strata:001:0> ",
                "strata:002:0> ",
                "strata:002:1* ",
                "strata:003:0> ",
                "strata:004:0> ",
                "strata:005:0> ",
                "strata:006:0> ",
            ]
        );
        assert_eq!(
            editor.history,
            ["create 't', 'f'", "put 't', 'r2', 'f:q', 'v'", "count 't'"]
        );
        session.into_executor().close().unwrap();
    }

    #[test]
    fn other_line_editor_failures_stop_the_shell() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = session(dir.path());
        let broken = ReadlineError::from(io::ErrorKind::BrokenPipe);
        let mut editor = ScriptedEditor::new(vec![Ok("list"), Err(broken), Ok("list")]);
        let mut out = Vec::new();
        let result = run_lines(&mut session, &mut editor, &mut out);
        assert!(
            matches!(result, Err(InteractiveError::Editor(_))),
            "{result:?}"
        );
        assert_eq!(editor.prompts.len(), 2);
        session.into_executor().close().unwrap();
    }

    #[test]
    fn echo_prints_each_line_once() {
        let source = "list; list\nput 't',\n  'r'\n";
        let mut out = Vec::new();
        let first = source.find("list").unwrap_or(0);
        let after = echo(source, Span::new(first, first + 4), 0, &mut out).unwrap();
        let second = source.rfind("list").unwrap_or(0);
        let after = echo(source, Span::new(second, second + 4), after, &mut out).unwrap();
        let put = source.find("put").unwrap_or(0);
        echo(source, Span::new(put, source.len() - 1), after, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "strata> list; list\nstrata> put 't',\n          'r'\n"
        );
    }
}
