//! The HTTP port: the status page at `/`, metrics at `/metrics` and `/prometheus`.
//!
//! One request per connection (`Connection: close`), served on the connection's own thread
//! (`crate::net::Listener`, bounded in count). The request head is parsed by `httparse`
//! (hyper's parser) and must arrive whole within [`REQUEST_TIMEOUT`] and
//! [`MAX_REQUEST_HEAD_BYTES`]; anything else gets a 4xx answer saying why. Only `GET` and
//! `HEAD` are served.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::metrics::{self, Exposition};
use super::{ServerState, status};
use crate::net::{Connection, Service};

/// The HTTP port's default: HBase's RegionServer info port.
pub const DEFAULT_HTTP_PORT: u16 = 16030;
/// Default most HTTP connections served at once.
pub const DEFAULT_MAX_HTTP_CONNECTIONS: usize = 32;
/// Largest request head (request line and headers), in bytes.
pub const MAX_REQUEST_HEAD_BYTES: usize = 16 * 1024;
/// Most headers a request may have.
const MAX_HEADERS: usize = 64;
/// Longest a request head may take to arrive.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest a response may take to be written.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// How the HTTP port listens.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Address and port to listen on (port 0: any free port).
    pub bind: SocketAddr,
    /// Most connections served at once; more get a 503.
    pub max_connections: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), DEFAULT_HTTP_PORT),
            max_connections: DEFAULT_MAX_HTTP_CONNECTIONS,
        }
    }
}

/// Counters of the HTTP port.
#[derive(Debug, Default)]
pub struct HttpCounters {
    /// Requests answered.
    pub requests: AtomicU64,
    /// Requests answered with a 4xx or 5xx status.
    pub failed_requests: AtomicU64,
}

/// An answer.
#[derive(Debug)]
struct Response {
    status: u16,
    reason: &'static str,
    content_type: &'static str,
    body: Vec<u8>,
    allow: bool,
}

impl Response {
    fn ok(content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status: 200,
            reason: "OK",
            content_type,
            body: body.into(),
            allow: false,
        }
    }

    fn error(status: u16, reason: &'static str, message: String) -> Response {
        Response {
            status,
            reason,
            content_type: "text/plain; charset=utf-8",
            body: format!("{status} {reason}: {message}\n").into_bytes(),
            allow: status == 405,
        }
    }

    /// Writes the answer; without the body for a `HEAD` request.
    fn write(&self, stream: &mut dyn Write, with_body: bool) -> io::Result<()> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
             Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n",
            self.status,
            self.reason,
            self.content_type,
            self.body.len()
        );
        if self.allow {
            head.push_str("Allow: GET, HEAD\r\n");
        }
        if self.status == 503 {
            head.push_str("Retry-After: 1\r\n");
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        if with_body {
            bytes.extend_from_slice(&self.body);
        }
        stream.write_all(&bytes)?;
        stream.flush()
    }
}

/// Why a request head could not be read.
#[derive(Debug)]
enum HeadError {
    /// The client closed the connection before sending a whole request head.
    Closed,
    /// The socket failed.
    Io(io::Error),
    /// An answer for the client (4xx) saying what is wrong.
    Refused(Response),
}

/// Reads bytes until the end of the request head (`\r\n\r\n`), within the limits.
fn read_head(stream: &mut TcpStream) -> Result<Vec<u8>, HeadError> {
    let started = Instant::now();
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let too_large = || {
        HeadError::Refused(Response::error(
            431,
            "Request Header Fields Too Large",
            format!("the request head is over {MAX_REQUEST_HEAD_BYTES} bytes"),
        ))
    };
    loop {
        let end = head
            .windows(4)
            .position(|window| window == b"\r\n\r\n")
            .map(|at| at + 4);
        match end {
            Some(end) if end > MAX_REQUEST_HEAD_BYTES => return Err(too_large()),
            Some(_) => return Ok(head),
            None if head.len() > MAX_REQUEST_HEAD_BYTES => return Err(too_large()),
            None => {}
        }
        let remaining = REQUEST_TIMEOUT.saturating_sub(started.elapsed());
        if remaining.is_zero() {
            return Err(timed_out());
        }
        stream
            .set_read_timeout(Some(remaining))
            .map_err(HeadError::Io)?;
        match stream.read(&mut chunk) {
            // Before a request or inside one: the client left, no one is there to answer.
            Ok(0) => return Err(HeadError::Closed),
            Ok(read) => head.extend_from_slice(chunk.get(..read).unwrap_or_default()),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(timed_out());
            }
            Err(error) => return Err(HeadError::Io(error)),
        }
    }
}

/// Most bytes read and dropped after refusing a request, so that closing does not reset the
/// connection (and lose the answer) while the client is still sending.
const LINGER_BYTES: usize = 64 * 1024;
/// Longest spent reading and dropping them.
const LINGER_TIMEOUT: Duration = Duration::from_secs(1);

/// Ends the sending side, then reads what the client still sends (bounded in bytes and time)
/// before the socket closes: unread input would make the close a reset, which can destroy the
/// answer before the client read it.
fn linger(stream: &mut TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let started = Instant::now();
    let mut dropped = 0;
    let mut chunk = [0u8; 4096];
    while dropped < LINGER_BYTES && started.elapsed() < LINGER_TIMEOUT {
        let _ = stream.set_read_timeout(Some(
            LINGER_TIMEOUT
                .saturating_sub(started.elapsed())
                .max(Duration::from_millis(1)),
        ));
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(read) => dropped += read,
        }
    }
}

fn timed_out() -> HeadError {
    HeadError::Refused(Response::error(
        408,
        "Request Timeout",
        format!("the request head did not arrive within {REQUEST_TIMEOUT:?}"),
    ))
}

/// What a parsed request asks for.
struct Asked {
    method: String,
    path: String,
    accept: Option<String>,
}

fn parse(head: &[u8]) -> Result<Asked, Response> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let malformed = |reason: String| Response::error(400, "Bad Request", reason);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            return Err(malformed("an incomplete request head".into()));
        }
        Err(error) => return Err(malformed(format!("a malformed request head ({error})"))),
    }
    let method = request.method.unwrap_or_default().to_owned();
    let target = request.path.unwrap_or_default();
    let path = target
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .to_owned();
    let accept = request
        .headers
        .iter()
        .find(|header| header.name.eq_ignore_ascii_case("accept"))
        .map(|header| String::from_utf8_lossy(header.value).into_owned());
    Ok(Asked {
        method,
        path,
        accept,
    })
}

/// The HTTP port's [`Service`].
pub(crate) struct HttpService {
    state: Arc<ServerState>,
}

impl HttpService {
    pub(crate) fn new(state: Arc<ServerState>) -> HttpService {
        HttpService { state }
    }

    fn answer(&self, asked: &Asked) -> Response {
        if asked.method != "GET" && asked.method != "HEAD" {
            return Response::error(
                405,
                "Method Not Allowed",
                format!("{} is not served here; use GET", asked.method),
            );
        }
        match asked.path.as_str() {
            "/" => {
                let snapshot = self.state.snapshot();
                let events = self.state.events.newest_first();
                Response::ok(
                    "text/html; charset=utf-8",
                    status::render(&snapshot, &events),
                )
            }
            "/metrics" | "/prometheus" => {
                let format = Exposition::for_accept(asked.accept.as_deref());
                match metrics::render(&self.state.snapshot(), format) {
                    Ok(text) => Response::ok(format.content_type(), text),
                    Err(_) => Response::error(
                        500,
                        "Internal Server Error",
                        "the metrics could not be encoded".into(),
                    ),
                }
            }
            other => Response::error(
                404,
                "Not Found",
                format!("nothing at {other:?}; the status page is at /, metrics at /metrics"),
            ),
        }
    }

    fn count(&self, response: &Response) {
        let counters = &self.state.http_counters;
        counters.requests.fetch_add(1, Ordering::Relaxed);
        if response.status >= 400 {
            counters.failed_requests.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Service for HttpService {
    type Error = io::Error;

    fn serve(&self, mut stream: TcpStream, connection: &Connection) -> io::Result<()> {
        stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
        let (response, with_body) = match read_head(&mut stream) {
            Ok(head) => match parse(&head) {
                Ok(asked) => (self.answer(&asked), asked.method != "HEAD"),
                Err(refused) => (refused, true),
            },
            Err(HeadError::Closed) => return Ok(()),
            Err(HeadError::Io(error)) => return Err(error),
            Err(HeadError::Refused(refused)) => (refused, true),
        };
        self.count(&response);
        let refused = response.status >= 400;
        if response.status >= 400 {
            tracing::debug!(
                target: "strata::server::http",
                connection = connection.id,
                peer = connection.peer.as_str(),
                status = response.status,
                "refused an HTTP request"
            );
        }
        response.write(&mut stream, with_body)?;
        if refused {
            linger(&mut stream);
        }
        Ok(())
    }

    fn refuse(&self, stream: &mut TcpStream, reason: &str) {
        let _ = stream.set_write_timeout(Some(Duration::from_millis(250)));
        let response = Response::error(503, "Service Unavailable", reason.to_owned());
        let _ = response.write(stream, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_heads_parse_or_are_refused_with_a_4xx() {
        let asked = parse(b"GET /metrics?x=1 HTTP/1.1\r\nHost: h\r\nAccept: text/plain\r\n\r\n")
            .unwrap_or_else(|response| panic!("{response:?}"));
        assert_eq!(asked.method, "GET");
        assert_eq!(asked.path, "/metrics");
        assert_eq!(asked.accept.as_deref(), Some("text/plain"));
        let refused = parse(b"GET / HTTP/1.1\r\nBad Header\r\n\r\n")
            .err()
            .map(|r| r.status);
        assert_eq!(refused, Some(400));
    }

    #[test]
    fn responses_say_their_length_and_close() {
        let mut bytes = Vec::new();
        Response::ok("text/plain", "hi")
            .write(&mut bytes, true)
            .unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.contains("Content-Length: 2\r\n"));
        assert!(text.contains("Connection: close\r\n"));
        assert!(text.ends_with("\r\n\r\nhi"));
        let mut head_only = Vec::new();
        Response::error(405, "Method Not Allowed", "no".into())
            .write(&mut head_only, false)
            .unwrap();
        let text = String::from_utf8(head_only).unwrap();
        assert!(text.contains("Allow: GET, HEAD\r\n"));
        assert!(text.ends_with("\r\n\r\n"));
    }
}
