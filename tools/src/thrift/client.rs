//! A small blocking client of HBase's Thrift1 interface, for tests and benchmarks: one
//! connection, one call at a time, any transport and protocol.

use std::fmt;
use std::io::{self, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use super::codec::{DecodeError, EncodeError, Reader, Wire};
use super::hbase::{self, Call, Response};
use super::transport::{Transport, WireFormat, read_frame, write_message};

/// Largest reply the client reads: 256 MiB.
const MAX_REPLY_BYTES: u64 = 256 * 1024 * 1024;

/// Why a call got no response.
#[derive(Debug)]
pub enum ClientError {
    /// The connection failed.
    Io(io::Error),
    /// The call could not be encoded.
    Encode(EncodeError),
    /// The reply could not be decoded.
    Decode(DecodeError),
    /// The reply answered another call.
    SequenceMismatch {
        /// The id of the call.
        sent: i32,
        /// The id in the reply.
        received: i32,
    },
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Io(error) => write!(f, "connection: {error}"),
            ClientError::Encode(error) => write!(f, "encoding the call: {error}"),
            ClientError::Decode(error) => write!(f, "decoding the reply: {error}"),
            ClientError::SequenceMismatch { sent, received } => {
                write!(f, "sent call {sent}, got the reply to {received}")
            }
        }
    }
}

impl std::error::Error for ClientError {}

impl From<io::Error> for ClientError {
    fn from(error: io::Error) -> Self {
        ClientError::Io(error)
    }
}

impl From<DecodeError> for ClientError {
    fn from(error: DecodeError) -> Self {
        ClientError::Decode(error)
    }
}

/// One connection to a Thrift1 server.
pub struct Client {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    format: WireFormat,
    next_sequence_id: i32,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("format", &self.format)
            .finish()
    }
}

impl Client {
    /// Connects to `address`, speaking `format`; calls time out after `timeout`.
    pub fn connect(
        address: SocketAddr,
        format: WireFormat,
        timeout: Duration,
    ) -> io::Result<Client> {
        let stream = TcpStream::connect_timeout(&address, timeout)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        Ok(Client {
            writer: stream.try_clone()?,
            reader: BufReader::new(stream),
            format,
            next_sequence_id: 1,
        })
    }

    /// The socket (to shut it down in the middle of a call, in tests).
    pub fn stream(&self) -> &TcpStream {
        &self.writer
    }

    /// Sends a call without waiting for its reply; returns its sequence id.
    pub fn send(&mut self, call: &Call) -> Result<i32, ClientError> {
        let sequence_id = self.next_sequence_id;
        self.next_sequence_id = self.next_sequence_id.wrapping_add(1);
        let message = hbase::encode_call(self.format.protocol, call, sequence_id)
            .map_err(ClientError::Encode)?;
        write_message(&mut self.writer, self.format.transport, &message)?;
        self.writer.flush()?;
        Ok(sequence_id)
    }

    /// Reads the reply to call `sequence_id`, whose success value is a `T`.
    pub fn receive<T: Wire>(&mut self, sequence_id: i32) -> Result<Response<T>, ClientError> {
        let (header, response) = match self.format.transport {
            Transport::Buffered => {
                let mut reader =
                    Reader::new(&mut self.reader, self.format.protocol, MAX_REPLY_BYTES);
                hbase::read_response::<T, _>(&mut reader)?
            }
            Transport::Framed => {
                let frame = read_frame(&mut self.reader, MAX_REPLY_BYTES)?;
                let mut reader = Reader::new(&frame[..], self.format.protocol, frame.len() as u64);
                hbase::read_response::<T, _>(&mut reader)?
            }
        };
        if header.sequence_id != sequence_id {
            return Err(ClientError::SequenceMismatch {
                sent: sequence_id,
                received: header.sequence_id,
            });
        }
        Ok(response)
    }

    /// Makes a call and returns its response; `T` is the method's success type (see
    /// [`hbase::methods`]; `()` for `void`).
    pub fn call<T: Wire>(&mut self, call: &Call) -> Result<Response<T>, ClientError> {
        let sequence_id = self.send(call)?;
        self.receive(sequence_id)
    }
}
