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
//! [`run_interactive`] reads statements from a terminal with line editing and history.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use crate::exec::{CommandError, ExecOptions, Executor, Reply};
use crate::shell::{ShellError, Span, TableLayout, needs_more_input, parse_script, took_line};

/// Whether to keep reading input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read more statements.
    Continue,
    /// `exit` was run.
    Exit,
}

/// Runs statements and prints their output.
pub struct Session {
    executor: Executor,
    echo: bool,
    failures: u64,
    before_statement: Option<Box<dyn FnMut()>>,
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
        let mut echoed_to = 0;
        for parsed in parse_script(source) {
            match parsed {
                Ok(statement) => {
                    if self.echo {
                        echoed_to = echo(source, statement.span, echoed_to, out)?;
                    }
                    for warning in &statement.warnings {
                        writeln!(out, "{warning}")?;
                    }
                    if let Some(hook) = self.before_statement.as_mut() {
                        hook();
                    }
                    let started = Instant::now();
                    let reply = self.executor.execute(&statement.command, out);
                    let elapsed = started.elapsed();
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

/// Reads statements from the terminal until `exit` or end of input (Ctrl-D), with line
/// editing and history. A statement continues on the next line while it is unfinished
/// ([`needs_more_input`]); Ctrl-C abandons the statement being typed. Errors are printed
/// and the shell keeps going.
pub fn run_interactive(session: &mut Session, banner: &str) -> Result<(), InteractiveError> {
    let config = rustyline::Config::builder()
        .max_history_size(MAX_HISTORY_LINES)
        .map_err(InteractiveError::Editor)?
        .auto_add_history(false)
        .build();
    let mut editor: rustyline::DefaultEditor =
        rustyline::Editor::with_config(config).map_err(InteractiveError::Editor)?;
    let history = history_path();
    if let Some(path) = &history {
        // A missing history file is normal the first time.
        let _ = editor.load_history(path);
    }
    let mut stdout = io::stdout();
    writeln!(stdout, "{banner}").map_err(InteractiveError::Output)?;
    let mut statement = String::new();
    let mut number = 1u32;
    loop {
        let prompt = if statement.is_empty() {
            format!("strata:{number:03}:0> ")
        } else {
            format!("strata:{number:03}:1* ")
        };
        match editor.readline(&prompt) {
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
                let _ = editor.add_history_entry(statement.as_str());
                let options = session.executor().options();
                session.executor_mut().set_options(ExecOptions {
                    layout: TableLayout::new(terminal_width()),
                    ..options
                });
                let flow = session
                    .run_source(&statement, &mut stdout)
                    .map_err(InteractiveError::Output)?;
                stdout.flush().map_err(InteractiveError::Output)?;
                statement.clear();
                number += 1;
                if flow == Flow::Exit {
                    break;
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => statement.clear(),
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(error) => return Err(InteractiveError::Editor(error)),
        }
    }
    if let Some(path) = &history {
        // Losing history is not worth failing the session for.
        let _ = editor.save_history(path);
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
}

impl std::fmt::Display for InteractiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InteractiveError::Editor(error) => write!(f, "line editor: {error}"),
            InteractiveError::Output(error) => write!(f, "writing output: {error}"),
        }
    }
}

impl std::error::Error for InteractiveError {}

#[cfg(test)]
mod tests {
    use super::*;

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
