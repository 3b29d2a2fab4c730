//! The interactive `strata shell` on a pseudo-terminal, so that rustyline's line editor reads
//! keys as it does from a person: a line with bytes that are not UTF-8 is one error and the
//! shell goes on (it used to exit with status 2, `line editor: invalid data`); the same shell
//! connected to a `strata server` (`--connect`) reads the terminal the same way.

#![cfg(test)]

mod server_support;

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long any one step may take (generous: the machine may be busy compiling).
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// The shell running on a pseudo-terminal, and everything it has printed so far.
struct Terminal {
    child: Child,
    master: File,
    output: Arc<Mutex<Vec<u8>>>,
    /// How much of `output` the test has looked at.
    seen: usize,
}

impl Terminal {
    fn start(data: &Path, home: &Path) -> Terminal {
        Terminal::spawn(
            &[OsStr::new("shell"), OsStr::new("--data"), data.as_os_str()],
            home,
        )
    }

    /// `strata ARGS` on a new pseudo-terminal.
    fn spawn(args: &[&OsStr], home: &Path) -> Terminal {
        let (master, slave) = open_pty();
        let child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(args)
            .env("HOME", home)
            .env("TERM", "xterm")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave))
            .spawn()
            .unwrap();
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let collected = output.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            // Ends with an error (EIO) once the shell has exited and closed the terminal.
            while let Ok(read @ 1..) = reader.read(&mut buffer) {
                collected
                    .lock()
                    .unwrap()
                    .extend_from_slice(buffer.get(..read).unwrap_or_default());
            }
        });
        Terminal {
            child,
            master,
            output,
            seen: 0,
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Waits until the output after what was seen contains `wanted`; returns what came
    /// before it and moves past it.
    fn expect(&mut self, wanted: &str) -> String {
        let started = Instant::now();
        loop {
            let output = self.output.lock().unwrap().clone();
            let fresh = output.get(self.seen..).unwrap_or_default();
            let found = fresh
                .windows(wanted.len())
                .position(|window| window == wanted.as_bytes());
            if let Some(at) = found {
                let before = String::from_utf8_lossy(fresh.get(..at).unwrap_or_default());
                self.seen += at + wanted.len();
                return before.into_owned();
            }
            if started.elapsed() > STEP_TIMEOUT || self.child.try_wait().unwrap().is_some() {
                let _ = self.child.kill();
                panic!(
                    "no {wanted:?} from the shell ({:?}); it printed:\n{}",
                    self.child.try_wait(),
                    self.text()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Types `keys` at once, as a fast typist or a paste would.
    fn type_keys(&mut self, keys: &[u8]) {
        self.master.write_all(keys).unwrap();
    }

    fn wait(&mut self) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if started.elapsed() > STEP_TIMEOUT {
                let _ = self.child.kill();
                panic!("the shell did not exit; it printed:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A new pseudo-terminal: its master side, and the slave side for the shell.
fn open_pty() -> (File, OwnedFd) {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    let size = libc::winsize {
        ws_row: 24,
        ws_col: 200,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes one descriptor through each of the first two pointers, which
    // point to the live locals above; it reads `size`, also live; name and termios may be
    // null.
    let status = unsafe {
        libc::openpty(
            &raw mut master,
            &raw mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &raw const size,
        )
    };
    assert_eq!(status, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty succeeded, so both are open descriptors that nothing else owns.
    unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

#[test]
fn a_typed_line_that_is_not_utf8_is_one_error_and_the_shell_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut terminal = Terminal::start(dir.path(), home.path());
    terminal.expect("strata:001:0> ");
    terminal.type_keys(b"create 't', 'f'\r");
    terminal.expect("strata:002:0> ");

    // A Latin-1 "é" (0xE9) where UTF-8 was expected; the rest of the line arrives with it.
    terminal.type_keys(b"put 't', 'r1', 'f:q', 'caf\xE9', {ATTRIBUTES => {}}\r");
    terminal.expect("SyntaxError: (hbase):1: invalid multibyte char (UTF-8): write bytes");
    let between = terminal.expect("strata:003:0> ");
    assert!(!between.contains("Error"), "one error only: {between}");

    // A bracketed paste of 3 KiB with a bad byte in the middle: none of it runs. rustyline
    // reads 1 KiB at a time and drops what it read past the error; the shell drops the rest.
    let lines = |rows: std::ops::Range<u32>| -> Vec<u8> {
        rows.flat_map(|row| format!("put 't', 'p{row:03}', 'f:q', 'v'\r").into_bytes())
            .collect()
    };
    let mut paste = b"\x1b[200~".to_vec();
    paste.extend(lines(0..55));
    paste.extend_from_slice(b"put 't', 'bad', 'f:q', '\xFF'\r");
    paste.extend(lines(55..110));
    paste.extend_from_slice(b"\x1b[201~");
    assert!(paste.len() > 3000 && paste.len() < 4000, "{}", paste.len());
    terminal.type_keys(&paste);
    terminal.expect("SyntaxError: (hbase):1: invalid multibyte char (UTF-8)");
    let between = terminal.expect("strata:004:0> ");
    assert!(!between.contains("Error"), "one error only: {between}");

    // The shell goes on as before. What is left of the paste when the shell drops pending
    // input (the end-of-paste marker, arriving late on a busy machine) may move the prompt's
    // counter on, so from here the test waits for each command's own output instead.
    terminal.type_keys(b"put 't', 'r4', 'f:q', \"caf\\xE9\"\r");
    terminal.expect("Took ");
    terminal.type_keys(b"scan 't'\r");
    let scanned = terminal.expect(" row(s)");
    let scanned = format!("{scanned} row(s)");
    // Padded to the terminal's 200 columns, as HBase lays out a terminal's output.
    assert!(scanned.contains(" r4  "), "{scanned}");
    assert!(scanned.contains(" column=f:q, timestamp="), "{scanned}");
    assert!(scanned.contains(", value=caf\\xE9 "), "{scanned}");
    assert!(scanned.contains("\n1 row(s)"), "{scanned}");
    terminal.type_keys(b"exit\r");
    let status = terminal.wait();
    assert!(
        status.success(),
        "{status:?}; it printed:\n{}",
        terminal.text()
    );
}

#[test]
fn the_connected_shell_reads_the_terminal_as_the_local_one() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let server = server_support::ServerProcess::start(&dir.path().join("db"), &[]);
    let admin = server.addresses.admin.to_string();
    let mut terminal = Terminal::spawn(
        &[
            OsStr::new("shell"),
            OsStr::new("--connect"),
            OsStr::new(&admin),
        ],
        home.path(),
    );
    let banner = terminal.expect("strata:001:0> ");
    assert!(
        banner.contains(&format!("connected to {admin} (strata ")),
        "{banner}"
    );
    terminal.type_keys(b"create 't', 'f'\r");
    terminal.expect("strata:002:0> ");

    // A statement over two lines continues on the client, then runs on the server.
    terminal.type_keys(b"put 't', 'r1',\r");
    terminal.expect("strata:002:1* ");
    terminal.type_keys(b"'f:q', 'v'\r");
    terminal.expect("strata:003:0> ");

    // A line that is not UTF-8 is one error, reported by the client.
    terminal.type_keys(b"put 't', 'r2', 'f:q', 'caf\xE9'\r");
    terminal.expect("SyntaxError: (hbase):1: invalid multibyte char (UTF-8)");
    terminal.expect("strata:004:0> ");

    // The server lays the output out for the client's terminal (200 columns).
    terminal.type_keys(b"scan 't'\r");
    let scanned = terminal.expect(" row(s)");
    assert!(scanned.contains(" r1  "), "{scanned}");
    assert!(scanned.ends_with("\n1"), "one row: {scanned}");
    terminal.type_keys(b"exit\r");
    let status = terminal.wait();
    assert!(
        status.success(),
        "{status:?}; it printed:\n{}",
        terminal.text()
    );
}
