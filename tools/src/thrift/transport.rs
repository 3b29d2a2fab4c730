//! Thrift's transports over a TCP connection: buffered (messages back to back, what
//! `hbase thrift start` speaks by default) and framed (each message after its length as a
//! big-endian `i32`), and recognising which one, and which protocol, a client speaks from its
//! first bytes.
//!
//! Connections are read with [`ConnectionReader`] (`crate::net`): between messages a tick
//! hands control back to the server (to expire idle scanners, to notice a shutdown); inside a
//! message a client that stops sending is given up after the stall timeout.

use std::fmt;
use std::io::{self, Read, Write};

use super::codec::{BINARY_FIRST_BYTE, COMPACT_PROTOCOL_ID, DecodeError, Protocol};
pub use crate::net::reader::{ConnectionReader, Wait};

/// Bytes of a frame header: the frame's length as a big-endian `i32`.
pub const FRAME_HEADER_BYTES: usize = 4;

/// Bytes needed to tell a framed message from a buffered one: a frame header and the first
/// byte of the message in it.
pub const DETECTION_BYTES: usize = FRAME_HEADER_BYTES + 1;

/// Most bytes of a frame allocated before they arrive.
const FRAME_CHUNK_BYTES: usize = 64 * 1024;

/// How messages are delimited on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// `TBufferedTransport`: messages back to back.
    Buffered,
    /// `TFramedTransport`: every message after its length.
    Framed,
}

impl Transport {
    /// The name used on the command line and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Buffered => "buffered",
            Transport::Framed => "framed",
        }
    }
}

/// A transport and a protocol: what a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WireFormat {
    /// How messages are delimited.
    pub transport: Transport,
    /// How values are encoded.
    pub protocol: Protocol,
}

impl fmt::Display for WireFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} transport, {} protocol",
            self.transport.name(),
            self.protocol.name()
        )
    }
}

/// What a connection's first bytes say it speaks, or `None` when they are no Thrift message
/// this server knows (or fewer than [`DETECTION_BYTES`] bytes were needed but not given).
///
/// * `0x80` first: a strict binary message, buffered (`0x8001` is the version word; no frame
///   is 2 GiB long, so a frame header never starts with it);
/// * `0x82` first: a compact message, buffered;
/// * otherwise the first four bytes are a length, and the fifth byte tells: `0x80` or `0x82`
///   begins a framed binary or compact message; anything else is an old non-strict binary
///   message, buffered, whose first four bytes were its method name's length.
pub fn detect_wire_format(prefix: &[u8]) -> Option<WireFormat> {
    let first = *prefix.first()?;
    let buffered = |protocol| WireFormat {
        transport: Transport::Buffered,
        protocol,
    };
    let framed = |protocol| WireFormat {
        transport: Transport::Framed,
        protocol,
    };
    match first {
        BINARY_FIRST_BYTE => Some(buffered(Protocol::Binary)),
        COMPACT_PROTOCOL_ID => Some(buffered(Protocol::Compact)),
        _ => match *prefix.get(FRAME_HEADER_BYTES)? {
            BINARY_FIRST_BYTE => Some(framed(Protocol::Binary)),
            COMPACT_PROTOCOL_ID => Some(framed(Protocol::Compact)),
            // A non-strict binary message starts with its name's length (small, positive) and
            // then the name.
            _ if first == 0 => Some(buffered(Protocol::Binary)),
            _ => None,
        },
    }
}

/// Reads one frame's bytes: its length must be at most `max_frame_bytes`; the bytes are
/// allocated as they arrive.
pub fn read_frame<R: Read>(source: &mut R, max_frame_bytes: u64) -> Result<Vec<u8>, DecodeError> {
    let mut header = [0u8; FRAME_HEADER_BYTES];
    source.read_exact(&mut header)?;
    let length = i32::from_be_bytes(header);
    if length < 0 {
        return Err(DecodeError::NegativeSize {
            what: "frame",
            size: i64::from(length),
        });
    }
    let length = length as u64;
    if length > max_frame_bytes {
        return Err(DecodeError::TooLarge {
            what: "frame",
            size: length,
            limit: max_frame_bytes,
        });
    }
    let mut frame = Vec::with_capacity((length as usize).min(FRAME_CHUNK_BYTES));
    source.take(length).read_to_end(&mut frame)?;
    if (frame.len() as u64) < length {
        return Err(DecodeError::Truncated);
    }
    Ok(frame)
}

/// Writes one encoded message: as it is, or after its frame header.
pub fn write_message<W: Write>(
    sink: &mut W,
    transport: Transport,
    message: &[u8],
) -> io::Result<()> {
    match transport {
        Transport::Buffered => sink.write_all(message),
        Transport::Framed => {
            let length = i32::try_from(message.len())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a message over 2 GiB"))?;
            // One write for header and message: a frame is never split across two segments
            // on our side.
            let mut framed = Vec::with_capacity(FRAME_HEADER_BYTES + message.len());
            framed.extend_from_slice(&length.to_be_bytes());
            framed.extend_from_slice(message);
            sink.write_all(&framed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_formats_are_told_apart_by_their_first_bytes() {
        let buffered_binary = [0x80, 0x01, 0x00, 0x01, 0x00];
        let buffered_compact = [0x82, 0x21, 0x00, 0x03, b'g'];
        let framed_binary = [0x00, 0x00, 0x00, 0x20, 0x80];
        let framed_compact = [0x00, 0x00, 0x01, 0x00, 0x82];
        let non_strict = [0x00, 0x00, 0x00, 0x06, b'g'];
        let cases = [
            (&buffered_binary[..], Transport::Buffered, Protocol::Binary),
            (
                &buffered_compact[..],
                Transport::Buffered,
                Protocol::Compact,
            ),
            (&framed_binary[..], Transport::Framed, Protocol::Binary),
            (&framed_compact[..], Transport::Framed, Protocol::Compact),
            (&non_strict[..], Transport::Buffered, Protocol::Binary),
        ];
        for (prefix, transport, protocol) in cases {
            assert_eq!(
                detect_wire_format(prefix),
                Some(WireFormat {
                    transport,
                    protocol
                }),
                "{prefix:?}"
            );
        }
        assert_eq!(detect_wire_format(b"GET / HTTP/1.1"), None);
        assert_eq!(detect_wire_format(&[0, 0, 0]), None);
        assert_eq!(detect_wire_format(&[]), None);
        assert_eq!(
            detect_wire_format(&[0x80]).map(|format| format.transport),
            Some(Transport::Buffered)
        );
    }

    #[test]
    fn frames_round_trip_and_bad_frames_are_refused() {
        let mut bytes = Vec::new();
        write_message(&mut bytes, Transport::Framed, b"hello").unwrap();
        assert_eq!(bytes, [0, 0, 0, 5, b'h', b'e', b'l', b'l', b'o']);
        assert_eq!(read_frame(&mut &bytes[..], 5).unwrap(), b"hello");
        assert!(matches!(
            read_frame(&mut &bytes[..], 4),
            Err(DecodeError::TooLarge {
                what: "frame",
                size: 5,
                limit: 4
            })
        ));
        assert!(matches!(
            read_frame(&mut &bytes[..8], 100),
            Err(DecodeError::Truncated)
        ));
        assert!(matches!(
            read_frame(&mut &bytes[..2], 100),
            Err(DecodeError::Truncated)
        ));
        let negative = [0xff, 0xff, 0xff, 0xfe];
        assert!(matches!(
            read_frame(&mut &negative[..], 100),
            Err(DecodeError::NegativeSize { .. })
        ));
        let mut plain = Vec::new();
        write_message(&mut plain, Transport::Buffered, b"hello").unwrap();
        assert_eq!(plain, b"hello");
    }
}
