//! The admin protocol: what `strata shell --connect` and `strata server`'s admin port say to
//! each other.
//!
//! A connection carries frames both ways. A frame is its payload's length (`u32`, big-endian,
//! at most the receiver's limit), then the payload: one byte naming the frame's kind, then
//! its body. Control bodies are JSON objects (a field the receiver does not know is ignored
//! and a missing optional field takes its default, so either side can add one without a new
//! protocol version); statement source and output are raw bytes, so scripts that are not
//! UTF-8 travel unchanged.
//!
//! ```text
//! client                               server
//! Hello {protocol, settings, user} -->
//!                                  <-- Welcome {protocol, server, data}
//! Run (statement source bytes)     -->
//!                                  <-- Output (bytes) ... Output
//!                                  <-- ErrorOutput (bytes)   (SQL sessions' error messages)
//!                                  <-- Done {failures, exit}
//! Settings {timestamps, width}     -->
//!                                  <-- Done {failures, exit: false}
//!                                  <-- Error {message}   (then the server closes)
//! ```
//!
//! A statement travels as its source text and runs in a shell session on the server, so a new
//! shell command needs no change here. Every `Run` and `Settings` is answered by exactly one
//! `Done` (after the `Output` frames of a `Run`), or by an `Error` after which the connection
//! ends: a malformed, unknown or oversized request is answered so, and only its own
//! connection is closed.

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};

use crate::exec::UserIdentity;
use crate::shell::TimestampFormat;

/// The protocol version this build speaks (sent in `Hello` and `Welcome`).
pub const PROTOCOL_VERSION: u32 = 1;
/// Bytes of a frame's header: the payload's length as a big-endian `u32`.
pub const FRAME_HEADER_BYTES: usize = 4;
/// Default largest request a server accepts (a script sent with `Run`): 64 MiB.
pub const DEFAULT_MAX_REQUEST_BYTES: u64 = 64 * 1024 * 1024;
/// Output is sent in frames of at most this many bytes.
pub const OUTPUT_CHUNK_BYTES: usize = 64 * 1024;
/// Largest frame a client accepts: output chunks and control messages are far smaller.
pub const MAX_REPLY_FRAME_BYTES: u64 = 1024 * 1024;
/// Most bytes of a frame allocated before they arrive.
const ALLOCATION_CHUNK_BYTES: usize = 64 * 1024;

/// Kind bytes (the first byte of a payload).
mod kind {
    pub const HELLO: u8 = b'H';
    pub const RUN: u8 = b'R';
    pub const SETTINGS: u8 = b'S';
    pub const WELCOME: u8 = b'W';
    pub const OUTPUT: u8 = b'O';
    pub const DONE: u8 = b'D';
    pub const ERROR: u8 = b'E';
    pub const ERROR_OUTPUT: u8 = b'e';
}

/// What a session runs: HBase shell statements, or SQL (`strata sql --connect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// The HBase shell's statements.
    #[default]
    Shell,
    /// SQL statements, run by strata-sql over the server's database.
    Sql,
}

/// How an SQL session prints results ([`crate::sql::OutputFormat`] on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SqlFormat {
    /// An aligned table and `N row(s)`.
    #[default]
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// A JSON array of objects.
    Json,
}

impl From<crate::sql::OutputFormat> for SqlFormat {
    fn from(format: crate::sql::OutputFormat) -> SqlFormat {
        match format {
            crate::sql::OutputFormat::Table => SqlFormat::Table,
            crate::sql::OutputFormat::Csv => SqlFormat::Csv,
            crate::sql::OutputFormat::Json => SqlFormat::Json,
        }
    }
}

impl From<SqlFormat> for crate::sql::OutputFormat {
    fn from(format: SqlFormat) -> crate::sql::OutputFormat {
        match format {
            SqlFormat::Table => crate::sql::OutputFormat::Table,
            SqlFormat::Csv => crate::sql::OutputFormat::Csv,
            SqlFormat::Json => crate::sql::OutputFormat::Json,
        }
    }
}

/// How a session prints: what `--timestamps` and the terminal's width decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// How cell timestamps are printed.
    #[serde(default)]
    pub timestamps: Timestamps,
    /// The client's terminal width in columns; 0 when its output is no terminal (then
    /// nothing is padded, as in HBase).
    #[serde(default)]
    pub width: usize,
}

/// [`TimestampFormat`] on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Timestamps {
    /// Milliseconds since the epoch.
    #[default]
    Millis,
    /// ISO-8601 in UTC.
    Iso,
}

impl From<TimestampFormat> for Timestamps {
    fn from(format: TimestampFormat) -> Timestamps {
        match format {
            TimestampFormat::EpochMillis => Timestamps::Millis,
            TimestampFormat::Iso8601 => Timestamps::Iso,
        }
    }
}

impl From<Timestamps> for TimestampFormat {
    fn from(timestamps: Timestamps) -> TimestampFormat {
        match timestamps {
            Timestamps::Millis => TimestampFormat::EpochMillis,
            Timestamps::Iso => TimestampFormat::Iso8601,
        }
    }
}

/// Who runs the shell (what `whoami` prints): the client's user, as a local shell would say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    /// The user name.
    pub name: String,
    /// Its groups, the primary group first.
    #[serde(default)]
    pub groups: Vec<String>,
}

impl From<&UserIdentity> for User {
    fn from(identity: &UserIdentity) -> User {
        User {
            name: identity.name.clone(),
            groups: identity.groups.clone(),
        }
    }
}

impl From<User> for UserIdentity {
    fn from(user: User) -> UserIdentity {
        UserIdentity {
            name: user.name,
            groups: user.groups,
        }
    }
}

/// The first request of a connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The protocol version the client speaks.
    pub protocol: u32,
    /// The client program and version (for the server's log).
    #[serde(default)]
    pub client: String,
    /// How the session prints.
    #[serde(default = "default_settings")]
    pub settings: Settings,
    /// Who runs the shell; the server's own user when absent.
    #[serde(default)]
    pub user: Option<User>,
    /// Echo each statement's source before its output, prefixed `strata> ` (transcripts).
    #[serde(default)]
    pub echo: bool,
    /// What the session runs (absent: the shell's statements).
    #[serde(default)]
    pub language: Language,
    /// How an SQL session prints results.
    #[serde(default)]
    pub sql_format: SqlFormat,
}

fn default_settings() -> Settings {
    Settings {
        timestamps: Timestamps::Millis,
        width: 0,
    }
}

/// The server's answer to `Hello`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Welcome {
    /// The protocol version the server speaks.
    pub protocol: u32,
    /// The server program and version.
    pub server: String,
    /// The database directory the server serves (for the interactive banner).
    pub data: String,
    /// What the session runs, as the server understood the hello (a server older than SQL
    /// sessions leaves it out, and the client then knows it would run SQL as shell input).
    #[serde(default)]
    pub language: Language,
}

/// The end of a `Run` (or the answer to `Settings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Done {
    /// Statements of the session that failed so far (syntax, argument and command errors).
    pub failures: u64,
    /// `exit` ran: the server ends the session after this frame.
    #[serde(default)]
    pub exit: bool,
}

#[derive(Serialize, Deserialize)]
struct ErrorBody {
    message: String,
}

/// What a client sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Opens the session.
    Hello(Hello),
    /// Runs statements (a line, a `-e` argument, a whole script), given as source bytes.
    Run(Vec<u8>),
    /// Changes how the session prints.
    Settings(Settings),
}

/// What a server sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Answers `Hello`.
    Welcome(Welcome),
    /// Part of a statement's output.
    Output(Vec<u8>),
    /// Ends a `Run` or answers `Settings`.
    Done(Done),
    /// The request could not be served; the connection ends after this frame.
    Error(String),
    /// Part of a statement's error messages, for the client's standard error (SQL sessions:
    /// a failed statement's `Error: ...`).
    ErrorOutput(Vec<u8>),
}

/// Why a frame could not be read.
#[derive(Debug)]
pub enum WireError {
    /// The connection failed or timed out.
    Io(io::Error),
    /// The peer closed the connection before a frame began.
    Closed,
    /// The connection ended inside a frame.
    Truncated,
    /// A frame over the receiver's limit (its bytes are not read).
    TooLarge {
        /// The frame's payload length.
        bytes: u64,
        /// The receiver's limit.
        limit: u64,
    },
    /// A frame of a kind this side does not expect (`None`: an empty frame).
    UnknownKind(Option<u8>),
    /// A control body that is not the JSON object its kind needs.
    Malformed {
        /// The frame's kind.
        kind: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Io(error) => write!(f, "{error}"),
            WireError::Closed => f.write_str("the connection was closed"),
            WireError::Truncated => f.write_str("the connection ended in the middle of a frame"),
            WireError::TooLarge { bytes, limit } => write!(
                f,
                "a request of {bytes} bytes is over the limit of {limit} bytes (the server's \
                 --max-request-mb)"
            ),
            WireError::UnknownKind(Some(byte)) => write!(
                f,
                "unknown frame kind 0x{byte:02x} (is this a strata admin client? the admin \
                 protocol is in tools/src/server/wire.rs)"
            ),
            WireError::UnknownKind(None) => f.write_str("an empty frame"),
            WireError::Malformed { kind, reason } => write!(f, "malformed {kind}: {reason}"),
        }
    }
}

impl std::error::Error for WireError {}

impl From<io::Error> for WireError {
    fn from(error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::UnexpectedEof {
            WireError::Truncated
        } else {
            WireError::Io(error)
        }
    }
}

/// Writes one frame of `kind` with `body`, in one write.
fn write_frame(sink: &mut dyn Write, kind: u8, body: &[u8]) -> io::Result<()> {
    let length = u32::try_from(body.len() + 1)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a frame over 4 GiB"))?;
    let mut frame = Vec::with_capacity(FRAME_HEADER_BYTES + 1 + body.len());
    frame.extend_from_slice(&length.to_be_bytes());
    frame.push(kind);
    frame.extend_from_slice(body);
    sink.write_all(&frame)
}

fn write_json(sink: &mut dyn Write, kind: u8, body: &impl Serialize) -> io::Result<()> {
    let body = serde_json::to_vec(body).map_err(io::Error::other)?;
    write_frame(sink, kind, &body)
}

/// Reads one frame: its kind and body. `Closed` when the stream ends before the frame does
/// begin; a length over `max_frame_bytes` is refused before any of its bytes are read.
fn read_frame(source: &mut dyn Read, max_frame_bytes: u64) -> Result<(u8, Vec<u8>), WireError> {
    let mut header = [0u8; FRAME_HEADER_BYTES];
    let mut filled = 0;
    while filled < FRAME_HEADER_BYTES {
        let target = header.get_mut(filled..).unwrap_or_default();
        match source.read(target) {
            Ok(0) if filled == 0 => return Err(WireError::Closed),
            Ok(0) => return Err(WireError::Truncated),
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error.into()),
        }
    }
    let length = u64::from(u32::from_be_bytes(header));
    if length > max_frame_bytes {
        return Err(WireError::TooLarge {
            bytes: length,
            limit: max_frame_bytes,
        });
    }
    let mut payload = Vec::with_capacity((length as usize).min(ALLOCATION_CHUNK_BYTES));
    source.take(length).read_to_end(&mut payload)?;
    if (payload.len() as u64) < length {
        return Err(WireError::Truncated);
    }
    match payload.split_first() {
        Some((&kind, _)) => {
            payload.remove(0);
            Ok((kind, payload))
        }
        None => Err(WireError::UnknownKind(None)),
    }
}

fn parse_json<T: for<'de> Deserialize<'de>>(
    kind: &'static str,
    body: &[u8],
) -> Result<T, WireError> {
    serde_json::from_slice(body).map_err(|error| WireError::Malformed {
        kind,
        reason: error.to_string(),
    })
}

/// Writes a request.
pub fn write_request(sink: &mut dyn Write, request: &Request) -> io::Result<()> {
    match request {
        Request::Hello(hello) => write_json(sink, kind::HELLO, hello),
        Request::Run(source) => write_frame(sink, kind::RUN, source),
        Request::Settings(settings) => write_json(sink, kind::SETTINGS, settings),
    }
}

/// Reads a request of at most `max_request_bytes`.
pub fn read_request(source: &mut dyn Read, max_request_bytes: u64) -> Result<Request, WireError> {
    let (frame_kind, body) = read_frame(source, max_request_bytes)?;
    match frame_kind {
        kind::HELLO => parse_json("hello", &body).map(Request::Hello),
        kind::RUN => Ok(Request::Run(body)),
        kind::SETTINGS => parse_json("settings", &body).map(Request::Settings),
        other => Err(WireError::UnknownKind(Some(other))),
    }
}

/// Writes a reply.
pub fn write_reply(sink: &mut dyn Write, reply: &Reply) -> io::Result<()> {
    match reply {
        Reply::Welcome(welcome) => write_json(sink, kind::WELCOME, welcome),
        Reply::Output(bytes) => write_frame(sink, kind::OUTPUT, bytes),
        Reply::ErrorOutput(bytes) => write_frame(sink, kind::ERROR_OUTPUT, bytes),
        Reply::Done(done) => write_json(sink, kind::DONE, done),
        Reply::Error(message) => write_json(
            sink,
            kind::ERROR,
            &ErrorBody {
                message: message.clone(),
            },
        ),
    }
}

/// Reads a reply (at most [`MAX_REPLY_FRAME_BYTES`]).
pub fn read_reply(source: &mut dyn Read) -> Result<Reply, WireError> {
    let (frame_kind, body) = read_frame(source, MAX_REPLY_FRAME_BYTES)?;
    match frame_kind {
        kind::WELCOME => parse_json("welcome", &body).map(Reply::Welcome),
        kind::OUTPUT => Ok(Reply::Output(body)),
        kind::ERROR_OUTPUT => Ok(Reply::ErrorOutput(body)),
        kind::DONE => parse_json("done", &body).map(Reply::Done),
        kind::ERROR => {
            parse_json::<ErrorBody>("error", &body).map(|error| Reply::Error(error.message))
        }
        other => Err(WireError::UnknownKind(Some(other))),
    }
}

/// A writer that sends what is written to it as `Output` frames of at most
/// [`OUTPUT_CHUNK_BYTES`]: a frame goes out when the chunk is full and at
/// [`OutputFrames::finish`].
///
/// Invariant the server relies on: a command's output reaches the socket (and so can fail
/// because the client left) only once it passes a whole chunk; commands that change the
/// database print a few lines at most, so only reads (scans, counts) are cut short by a
/// client that vanished, never a change halfway.
pub struct OutputFrames<'a> {
    sink: &'a mut dyn Write,
    chunk: Vec<u8>,
}

impl<'a> OutputFrames<'a> {
    /// Frames for `sink`.
    pub fn new(sink: &'a mut dyn Write) -> OutputFrames<'a> {
        OutputFrames {
            sink,
            chunk: Vec::with_capacity(OUTPUT_CHUNK_BYTES),
        }
    }

    fn send_chunk(&mut self) -> io::Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        write_frame(self.sink, kind::OUTPUT, &self.chunk)?;
        self.chunk.clear();
        Ok(())
    }

    /// Sends what is left.
    pub fn finish(mut self) -> io::Result<()> {
        self.send_chunk()?;
        self.sink.flush()
    }
}

impl Write for OutputFrames<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let room = OUTPUT_CHUNK_BYTES - self.chunk.len();
        let taken = bytes.len().min(room);
        self.chunk
            .extend_from_slice(bytes.get(..taken).unwrap_or_default());
        if self.chunk.len() == OUTPUT_CHUNK_BYTES {
            self.send_chunk()?;
        }
        Ok(taken)
    }

    /// Does nothing: chunks go out when full and at [`OutputFrames::finish`] (the session
    /// flushes after each statement; a frame per statement would cost a syscall each).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip_request(request: Request) {
        let mut bytes = Vec::new();
        write_request(&mut bytes, &request).unwrap();
        assert_eq!(read_request(&mut &bytes[..], 1 << 20).unwrap(), request);
    }

    #[test]
    fn requests_and_replies_round_trip() {
        round_trip_request(Request::Hello(Hello {
            protocol: PROTOCOL_VERSION,
            client: "test".into(),
            settings: Settings {
                timestamps: Timestamps::Iso,
                width: 120,
            },
            user: Some(User {
                name: "u".into(),
                groups: vec!["g".into()],
            }),
            echo: true,
            language: Language::Sql,
            sql_format: SqlFormat::Csv,
        }));
        round_trip_request(Request::Run(b"put 't', \"\xff\"".to_vec()));
        round_trip_request(Request::Settings(default_settings()));
        for reply in [
            Reply::Welcome(Welcome {
                protocol: 1,
                server: "s".into(),
                data: "/d".into(),
                language: Language::Sql,
            }),
            Reply::Output(vec![0, 1, 2]),
            Reply::ErrorOutput(b"Error: no table t\n".to_vec()),
            Reply::Done(Done {
                failures: 3,
                exit: true,
            }),
            Reply::Error("no".into()),
        ] {
            let mut bytes = Vec::new();
            write_reply(&mut bytes, &reply).unwrap();
            assert_eq!(read_reply(&mut &bytes[..]).unwrap(), reply);
        }
    }

    #[test]
    fn unknown_fields_are_ignored_and_missing_ones_defaulted() {
        let body = br#"{"protocol": 1, "future_field": [1, 2]}"#;
        let mut bytes = Vec::new();
        write_frame(&mut bytes, kind::HELLO, body).unwrap();
        let Request::Hello(hello) = read_request(&mut &bytes[..], 1024).unwrap() else {
            panic!("not a hello");
        };
        assert_eq!(hello.settings, default_settings());
        assert_eq!(hello.user, None);
        assert!(!hello.echo);
    }

    #[test]
    fn bad_frames_are_refused_with_what_is_wrong() {
        let mut oversized = Vec::new();
        write_request(&mut oversized, &Request::Run(vec![b'x'; 100])).unwrap();
        let error = read_request(&mut &oversized[..], 50).unwrap_err();
        assert!(
            matches!(
                error,
                WireError::TooLarge {
                    bytes: 101,
                    limit: 50
                }
            ),
            "{error:?}"
        );
        assert!(error.to_string().contains("--max-request-mb"));

        assert!(matches!(
            read_request(&mut &oversized[..20], 1024),
            Err(WireError::Truncated)
        ));
        assert!(matches!(
            read_request(&mut &oversized[..2], 1024),
            Err(WireError::Truncated)
        ));
        assert!(matches!(
            read_request(&mut &[][..], 1024),
            Err(WireError::Closed)
        ));
        assert!(matches!(
            read_request(&mut &[0, 0, 0, 0][..], 1024),
            Err(WireError::UnknownKind(None))
        ));
        let http = b"GET / HTTP/1.1\r\n\r\n";
        assert!(matches!(
            read_request(&mut &http[..], 1024),
            Err(WireError::TooLarge { .. })
        ));
        let mut unknown = Vec::new();
        write_frame(&mut unknown, b'?', b"").unwrap();
        assert!(matches!(
            read_request(&mut &unknown[..], 1024),
            Err(WireError::UnknownKind(Some(b'?')))
        ));
        let mut not_json = Vec::new();
        write_frame(&mut not_json, kind::HELLO, b"{protocol").unwrap();
        let error = read_request(&mut &not_json[..], 1024).unwrap_err();
        assert!(
            error.to_string().starts_with("malformed hello: "),
            "{error}"
        );
        // A reply kind is no request.
        let mut welcome = Vec::new();
        write_reply(
            &mut welcome,
            &Reply::Done(Done {
                failures: 0,
                exit: false,
            }),
        )
        .unwrap();
        assert!(matches!(
            read_request(&mut &welcome[..], 1024),
            Err(WireError::UnknownKind(Some(b'D')))
        ));
    }

    #[test]
    fn output_goes_out_in_whole_chunks_and_the_rest_at_finish() {
        let mut sink = Vec::new();
        let mut frames = OutputFrames::new(&mut sink);
        let text = vec![b'a'; OUTPUT_CHUNK_BYTES + 10];
        frames.write_all(&text).unwrap();
        frames.flush().unwrap();
        frames.finish().unwrap();
        let mut source = &sink[..];
        let mut received = Vec::new();
        let mut frames_read = 0;
        while let Ok(Reply::Output(bytes)) = read_reply(&mut source) {
            assert!(bytes.len() <= OUTPUT_CHUNK_BYTES);
            received.extend_from_slice(&bytes);
            frames_read += 1;
        }
        assert_eq!(frames_read, 2);
        assert_eq!(received, text);
    }
}
