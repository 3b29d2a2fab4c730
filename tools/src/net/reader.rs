//! Reading a connection message by message, with a tick between messages and a stall
//! timeout inside one.
//!
//! [`ConnectionReader`] reads with a short socket timeout (a tick): between messages a tick
//! hands control back to the server (to expire idle state, to notice a shutdown); inside a
//! message the reader waits, but gives up when no byte arrives for the stall timeout, so a
//! client that stops halfway through a message cannot hold its thread.

use std::io::{self, Read};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Bytes a connection reads from its socket at a time.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// What waiting for the next message found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// At least one byte of a message is here.
    Ready,
    /// A tick passed without a byte.
    Tick,
    /// The peer closed the connection between messages.
    Closed,
}

/// Reads one connection, buffered, with the tick and stall rules of the module.
pub struct ConnectionReader {
    stream: TcpStream,
    buffer: Box<[u8]>,
    /// Unread bytes are `buffer[start..end]`.
    start: usize,
    end: usize,
    stall_timeout: Duration,
}

impl ConnectionReader {
    /// A reader of `stream`, whose read timeout is set to `tick`. Inside a message, a pause
    /// longer than `stall_timeout` fails the read.
    pub fn new(
        stream: TcpStream,
        tick: Duration,
        stall_timeout: Duration,
    ) -> io::Result<ConnectionReader> {
        stream.set_read_timeout(Some(tick))?;
        Ok(ConnectionReader {
            stream,
            buffer: vec![0u8; READ_CHUNK_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
            stall_timeout,
        })
    }

    /// The bytes read but not consumed.
    pub fn buffered(&self) -> &[u8] {
        self.buffer.get(self.start..self.end).unwrap_or_default()
    }

    /// One read from the socket into the free part of the buffer; 0 at end of stream.
    fn read_socket(&mut self) -> io::Result<usize> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buffer.len() {
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let free = self.buffer.get_mut(self.end..).unwrap_or_default();
        let read = self.stream.read(free)?;
        self.end += read;
        Ok(read)
    }

    /// Waits one tick for the first byte of the next message.
    pub fn wait_for_message(&mut self) -> io::Result<Wait> {
        if self.start < self.end {
            return Ok(Wait::Ready);
        }
        loop {
            match self.read_socket() {
                Ok(0) => return Ok(Wait::Closed),
                Ok(_) => return Ok(Wait::Ready),
                Err(error) if is_timeout(&error) => return Ok(Wait::Tick),
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            }
        }
    }

    /// Reads from the socket inside a message: waits through ticks, fails after the stall
    /// timeout without a byte. Returns 0 at end of stream.
    fn read_in_message(&mut self) -> io::Result<usize> {
        let mut stalled_since: Option<Instant> = None;
        loop {
            match self.read_socket() {
                Ok(read) => return Ok(read),
                Err(error) if is_timeout(&error) => {
                    let since = *stalled_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= self.stall_timeout {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!(
                                "no byte for {:?} in the middle of a message",
                                self.stall_timeout
                            ),
                        ));
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            }
        }
    }

    /// Makes at least `wanted` bytes available (fewer only at end of stream) and returns
    /// what is buffered, without consuming it.
    pub fn peek(&mut self, wanted: usize) -> io::Result<&[u8]> {
        let wanted = wanted.min(self.buffer.len());
        while self.end - self.start < wanted {
            if self.read_in_message()? == 0 {
                break;
            }
        }
        Ok(self.buffered())
    }
}

impl Read for ConnectionReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.start == self.end && self.read_in_message()? == 0 {
            return Ok(0);
        }
        let available = self.buffered();
        let count = available.len().min(out.len());
        let (head, _) = available.split_at(count);
        let (target, _) = out.split_at_mut(count);
        target.copy_from_slice(head);
        self.start += count;
        Ok(count)
    }
}

fn is_timeout(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}
