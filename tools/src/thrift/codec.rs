//! Thrift's binary and compact protocols: messages, structs, fields and values, read from
//! any byte source and written to a buffer.
//!
//! The encodings follow Apache Thrift's specifications (`doc/specs/thrift-binary-protocol.md`
//! and `thrift-compact-protocol.md` in the Thrift sources):
//!
//! * binary: integers big-endian and fixed width; a field is a type byte and an `i16` id; a
//!   string or binary is an `i32` length and the bytes; a list is an element type byte and an
//!   `i32` count; a message begins with `0x8001_00TT` (strict) or, from old clients, with the
//!   name first (non-strict, which this reader accepts as HBase's server does);
//! * compact: integers as zigzag varints; a field header carries the id as a delta from the
//!   previous field of the same struct when it fits in four bits; a bool field's value is its
//!   type; a double is little-endian; a message begins with `0x82`, a byte of version and type,
//!   the sequence id as a varint and the name.
//!
//! Everything a peer sends is bounded before it is allocated: a [`Reader`] has a byte budget
//! for the whole message (a string, a binary or a container whose declared size does not fit
//! in what is left of the budget is [`DecodeError::TooLarge`], and a string's bytes are
//! allocated as they arrive, not from the declared length), and structs and containers nest
//! at most [`MAX_NESTING_DEPTH`] deep.

use std::fmt;
use std::io::{self, Read};

/// Deepest nesting of structs and containers a reader accepts (HBase's IDL nests three
/// levels: a list of structs holding a list of structs).
pub const MAX_NESTING_DEPTH: usize = 64;

/// Most elements reserved in advance for a list or map, whatever its declared size (the rest
/// grows as elements are actually read).
const MAX_PREALLOCATED_ELEMENTS: usize = 1024;

/// The strict binary protocol's version word (the high half of a message's first `i32`).
const BINARY_VERSION_1: u32 = 0x8001_0000;
/// Mask of the version word in the first `i32` of a strict binary message.
const BINARY_VERSION_MASK: u32 = 0xffff_0000;
/// The compact protocol's first byte.
pub const COMPACT_PROTOCOL_ID: u8 = 0x82;
/// The compact protocol version this codec speaks.
const COMPACT_VERSION: u8 = 1;
/// Mask of the version bits in the compact protocol's second byte.
const COMPACT_VERSION_MASK: u8 = 0x1f;
/// Shift of the message type bits in the compact protocol's second byte.
const COMPACT_TYPE_SHIFT: u8 = 5;
/// The first byte of a strict binary message.
pub const BINARY_FIRST_BYTE: u8 = 0x80;
/// Longest varint of an `i64` (ten groups of seven bits).
const MAX_VARINT_BYTES: usize = 10;

/// Which Thrift protocol encodes the messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// `TBinaryProtocol` (what `hbase thrift start` speaks by default).
    Binary,
    /// `TCompactProtocol`.
    Compact,
}

impl Protocol {
    /// The name used on the command line and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Binary => "binary",
            Protocol::Compact => "compact",
        }
    }
}

/// The type of a Thrift value, as a field header or container header names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TType {
    /// A boolean.
    Bool,
    /// A signed byte (`byte`/`i8`).
    Byte,
    /// A 64-bit float.
    Double,
    /// A 16-bit integer.
    I16,
    /// A 32-bit integer.
    I32,
    /// A 64-bit integer.
    I64,
    /// A string or binary: length-prefixed bytes.
    Binary,
    /// A struct (also an exception or an argument list).
    Struct,
    /// A map.
    Map,
    /// A set.
    Set,
    /// A list.
    List,
    /// A 16-byte UUID.
    Uuid,
}

impl TType {
    /// The binary protocol's type code.
    fn binary_code(self) -> u8 {
        match self {
            TType::Bool => 2,
            TType::Byte => 3,
            TType::Double => 4,
            TType::I16 => 6,
            TType::I32 => 8,
            TType::I64 => 10,
            TType::Binary => 11,
            TType::Struct => 12,
            TType::Map => 13,
            TType::Set => 14,
            TType::List => 15,
            TType::Uuid => 16,
        }
    }

    /// The type of a binary protocol type code (`None` for 0, the stop code).
    fn from_binary_code(code: u8) -> Result<Option<TType>, DecodeError> {
        Ok(Some(match code {
            0 => return Ok(None),
            2 => TType::Bool,
            3 => TType::Byte,
            4 => TType::Double,
            6 => TType::I16,
            8 => TType::I32,
            10 => TType::I64,
            11 => TType::Binary,
            12 => TType::Struct,
            13 => TType::Map,
            14 => TType::Set,
            15 => TType::List,
            16 => TType::Uuid,
            other => return Err(DecodeError::UnknownType { code: other }),
        }))
    }

    /// The compact protocol's type code (a bool as an element type is 1, "true").
    fn compact_code(self) -> u8 {
        match self {
            TType::Bool => COMPACT_TRUE,
            TType::Byte => 3,
            TType::I16 => 4,
            TType::I32 => 5,
            TType::I64 => 6,
            TType::Double => 7,
            TType::Binary => 8,
            TType::List => 9,
            TType::Set => 10,
            TType::Map => 11,
            TType::Struct => 12,
            TType::Uuid => 13,
        }
    }

    /// The type of a compact protocol type code (`None` for 0, the stop code).
    fn from_compact_code(code: u8) -> Result<Option<TType>, DecodeError> {
        Ok(Some(match code {
            0 => return Ok(None),
            COMPACT_TRUE | COMPACT_FALSE => TType::Bool,
            3 => TType::Byte,
            4 => TType::I16,
            5 => TType::I32,
            6 => TType::I64,
            7 => TType::Double,
            8 => TType::Binary,
            9 => TType::List,
            10 => TType::Set,
            11 => TType::Map,
            12 => TType::Struct,
            13 => TType::Uuid,
            other => return Err(DecodeError::UnknownType { code: other }),
        }))
    }
}

/// The compact protocol's code for a true bool (field type, or element value).
const COMPACT_TRUE: u8 = 1;
/// The compact protocol's code for a false bool.
const COMPACT_FALSE: u8 = 2;

/// What a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageType {
    /// A call that expects a reply.
    Call,
    /// The reply to a call: a result struct.
    Reply,
    /// A `TApplicationException` instead of a reply.
    Exception,
    /// A call that expects no reply.
    Oneway,
}

impl MessageType {
    fn code(self) -> u8 {
        match self {
            MessageType::Call => 1,
            MessageType::Reply => 2,
            MessageType::Exception => 3,
            MessageType::Oneway => 4,
        }
    }

    fn from_code(code: u8) -> Result<MessageType, DecodeError> {
        match code {
            1 => Ok(MessageType::Call),
            2 => Ok(MessageType::Reply),
            3 => Ok(MessageType::Exception),
            4 => Ok(MessageType::Oneway),
            other => Err(DecodeError::BadMessageType { code: other }),
        }
    }
}

/// The header of a message: the method, what the message is, and the sequence id that pairs
/// a reply with its call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageHeader {
    /// The method name.
    pub name: String,
    /// Call, reply, exception or oneway.
    pub kind: MessageType,
    /// Chosen by the caller, echoed in the reply.
    pub sequence_id: i32,
}

/// Why bytes could not be decoded.
#[derive(Debug)]
pub enum DecodeError {
    /// The input ended inside a message.
    Truncated,
    /// The byte source failed.
    Io(io::Error),
    /// A length, count or the whole message is over the limit.
    TooLarge {
        /// What was too large (`"string"`, `"list"`, `"message"`, `"frame"`).
        what: &'static str,
        /// Its declared size, in bytes or elements.
        size: u64,
        /// The most that was allowed there.
        limit: u64,
    },
    /// A negative length or count.
    NegativeSize {
        /// What had the negative size.
        what: &'static str,
        /// The size.
        size: i64,
    },
    /// A binary message whose first word is not version 1.
    BadVersion {
        /// The first word.
        word: u32,
    },
    /// A compact message whose protocol id or version is not 0x82 / 1.
    BadCompactHeader {
        /// The protocol id byte.
        protocol_id: u8,
        /// The version bits.
        version: u8,
    },
    /// A type code that no Thrift type has.
    UnknownType {
        /// The code.
        code: u8,
    },
    /// A message type code outside 1..=4.
    BadMessageType {
        /// The code.
        code: u8,
    },
    /// Structs or containers nested deeper than [`MAX_NESTING_DEPTH`].
    TooDeep,
    /// A varint longer than its type allows.
    BadVarint,
    /// A method name that is not UTF-8.
    NameNotUtf8,
    /// A field of a known struct is missing or has the wrong shape.
    Invalid {
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated => f.write_str("the message ends early (truncated)"),
            DecodeError::Io(error) => write!(f, "reading the message: {error}"),
            DecodeError::TooLarge { what, size, limit } => {
                write!(f, "{what} of {size} is over the limit of {limit}")
            }
            DecodeError::NegativeSize { what, size } => write!(f, "{what} has size {size}"),
            DecodeError::BadVersion { word } => {
                write!(
                    f,
                    "not a Thrift binary protocol message (first word {word:#010x})"
                )
            }
            DecodeError::BadCompactHeader {
                protocol_id,
                version,
            } => write!(
                f,
                "not a Thrift compact protocol message (protocol id {protocol_id:#04x}, \
                 version {version})"
            ),
            DecodeError::UnknownType { code } => write!(f, "unknown Thrift type code {code}"),
            DecodeError::BadMessageType { code } => {
                write!(f, "unknown Thrift message type {code}")
            }
            DecodeError::TooDeep => write!(
                f,
                "structs and containers nested deeper than {MAX_NESTING_DEPTH} levels"
            ),
            DecodeError::BadVarint => f.write_str("a varint is longer than its type allows"),
            DecodeError::NameNotUtf8 => f.write_str("the method name is not UTF-8"),
            DecodeError::Invalid { reason } => f.write_str(reason),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<io::Error> for DecodeError {
    fn from(error: io::Error) -> DecodeError {
        if error.kind() == io::ErrorKind::UnexpectedEof {
            DecodeError::Truncated
        } else {
            DecodeError::Io(error)
        }
    }
}

/// Reads one message's values from a byte source, within a byte budget.
///
/// Invariant: every byte taken from `source` was first subtracted from `remaining_bytes`, so a
/// message never consumes more than the budget it was given.
pub struct Reader<R> {
    source: R,
    protocol: Protocol,
    remaining_bytes: u64,
    depth: usize,
    /// Compact protocol: the id of the last field read in each enclosing struct.
    field_id_stack: Vec<i16>,
    last_field_id: i16,
    /// Compact protocol: the value of a bool field, carried by its header.
    pending_bool: Option<bool>,
}

impl<R: Read> Reader<R> {
    /// A reader of `protocol` from `source` that takes at most `budget_bytes`.
    pub fn new(source: R, protocol: Protocol, budget_bytes: u64) -> Reader<R> {
        Reader {
            source,
            protocol,
            remaining_bytes: budget_bytes,
            depth: 0,
            field_id_stack: Vec::new(),
            last_field_id: 0,
            pending_bool: None,
        }
    }

    /// What is left of the byte budget.
    pub fn remaining_bytes(&self) -> u64 {
        self.remaining_bytes
    }

    fn spend(&mut self, bytes: u64, what: &'static str) -> Result<(), DecodeError> {
        if bytes > self.remaining_bytes {
            return Err(DecodeError::TooLarge {
                what,
                size: bytes,
                limit: self.remaining_bytes,
            });
        }
        self.remaining_bytes -= bytes;
        Ok(())
    }

    fn read_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        self.spend(N as u64, "message")?;
        let mut bytes = [0u8; N];
        self.source.read_exact(&mut bytes)?;
        Ok(bytes)
    }

    fn read_u8(&mut self) -> Result<u8, DecodeError> {
        let [byte] = self.read_array::<1>()?;
        Ok(byte)
    }

    /// An unsigned LEB128 varint of at most `max_bytes` bytes.
    fn read_varint(&mut self, max_bytes: usize) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for index in 0..max_bytes {
            let byte = self.read_u8()?;
            value |= u64::from(byte & 0x7f) << (7 * index);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(DecodeError::BadVarint)
    }

    fn read_zigzag(&mut self, max_bytes: usize) -> Result<i64, DecodeError> {
        let raw = self.read_varint(max_bytes)?;
        Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
    }

    /// A declared size: not negative, and at least `min_bytes_each` bytes per element must
    /// still fit in the budget.
    fn checked_size(
        &self,
        size: i64,
        min_bytes_each: u64,
        what: &'static str,
    ) -> Result<usize, DecodeError> {
        if size < 0 {
            return Err(DecodeError::NegativeSize { what, size });
        }
        let size = size as u64;
        if size.saturating_mul(min_bytes_each) > self.remaining_bytes {
            return Err(DecodeError::TooLarge {
                what,
                size,
                limit: self.remaining_bytes / min_bytes_each.max(1),
            });
        }
        usize::try_from(size).map_err(|_| DecodeError::TooLarge {
            what,
            size,
            limit: usize::MAX as u64,
        })
    }

    fn size_i32(&mut self, what: &'static str, min_bytes_each: u64) -> Result<usize, DecodeError> {
        let size = match self.protocol {
            Protocol::Binary => i64::from(i32::from_be_bytes(self.read_array::<4>()?)),
            Protocol::Compact => i64::from(self.read_varint(5)? as u32 as i32),
        };
        self.checked_size(size, min_bytes_each, what)
    }

    fn enter(&mut self) -> Result<(), DecodeError> {
        if self.depth >= MAX_NESTING_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Reads a message header.
    pub fn read_message_begin(&mut self) -> Result<MessageHeader, DecodeError> {
        match self.protocol {
            Protocol::Binary => {
                let word = u32::from_be_bytes(self.read_array::<4>()?);
                if word & 0x8000_0000 != 0 {
                    if word & BINARY_VERSION_MASK != BINARY_VERSION_1 {
                        return Err(DecodeError::BadVersion { word });
                    }
                    let kind = MessageType::from_code((word & 0xff) as u8)?;
                    let name = self.read_name_bytes()?;
                    let sequence_id = self.read_i32()?;
                    Ok(MessageHeader {
                        name,
                        kind,
                        sequence_id,
                    })
                } else {
                    // Non-strict: the first word was the name's length.
                    let length = self.checked_size(i64::from(word as i32), 1, "method name")?;
                    let name = self.read_exact_bytes(length)?;
                    let name = String::from_utf8(name).map_err(|_| DecodeError::NameNotUtf8)?;
                    let kind = MessageType::from_code(self.read_u8()?)?;
                    let sequence_id = self.read_i32()?;
                    Ok(MessageHeader {
                        name,
                        kind,
                        sequence_id,
                    })
                }
            }
            Protocol::Compact => {
                let protocol_id = self.read_u8()?;
                let version_and_type = self.read_u8()?;
                let version = version_and_type & COMPACT_VERSION_MASK;
                if protocol_id != COMPACT_PROTOCOL_ID || version != COMPACT_VERSION {
                    return Err(DecodeError::BadCompactHeader {
                        protocol_id,
                        version,
                    });
                }
                let kind = MessageType::from_code(version_and_type >> COMPACT_TYPE_SHIFT)?;
                let sequence_id = self.read_varint(5)? as u32 as i32;
                let name = self.read_name_bytes()?;
                Ok(MessageHeader {
                    name,
                    kind,
                    sequence_id,
                })
            }
        }
    }

    fn read_name_bytes(&mut self) -> Result<String, DecodeError> {
        let bytes = self.read_binary()?;
        String::from_utf8(bytes).map_err(|_| DecodeError::NameNotUtf8)
    }

    /// Starts reading a struct.
    pub fn read_struct_begin(&mut self) -> Result<(), DecodeError> {
        self.enter()?;
        self.field_id_stack.push(self.last_field_id);
        self.last_field_id = 0;
        Ok(())
    }

    /// Ends reading a struct (after [`Reader::read_field_begin`] returned `None`).
    pub fn read_struct_end(&mut self) {
        self.last_field_id = self.field_id_stack.pop().unwrap_or(0);
        self.leave();
    }

    /// The next field's type and id, or `None` at the struct's end.
    pub fn read_field_begin(&mut self) -> Result<Option<(TType, i16)>, DecodeError> {
        match self.protocol {
            Protocol::Binary => {
                let Some(ttype) = TType::from_binary_code(self.read_u8()?)? else {
                    return Ok(None);
                };
                let id = i16::from_be_bytes(self.read_array::<2>()?);
                Ok(Some((ttype, id)))
            }
            Protocol::Compact => {
                let byte = self.read_u8()?;
                let Some(ttype) = TType::from_compact_code(byte & 0x0f)? else {
                    return Ok(None);
                };
                let delta = byte >> 4;
                let id = if delta == 0 {
                    i16::try_from(self.read_zigzag(3)?).map_err(|_| DecodeError::BadVarint)?
                } else {
                    self.last_field_id.wrapping_add(i16::from(delta))
                };
                self.last_field_id = id;
                if ttype == TType::Bool {
                    self.pending_bool = Some(byte & 0x0f == COMPACT_TRUE);
                }
                Ok(Some((ttype, id)))
            }
        }
    }

    /// A bool (in a compact struct, the value its field header carried).
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        if let Some(value) = self.pending_bool.take() {
            return Ok(value);
        }
        let byte = self.read_u8()?;
        Ok(match self.protocol {
            Protocol::Binary => byte != 0,
            Protocol::Compact => byte == COMPACT_TRUE,
        })
    }

    /// A signed byte.
    pub fn read_i8(&mut self) -> Result<i8, DecodeError> {
        Ok(self.read_u8()? as i8)
    }

    /// A 16-bit integer.
    pub fn read_i16(&mut self) -> Result<i16, DecodeError> {
        match self.protocol {
            Protocol::Binary => Ok(i16::from_be_bytes(self.read_array::<2>()?)),
            Protocol::Compact => {
                i16::try_from(self.read_zigzag(3)?).map_err(|_| DecodeError::BadVarint)
            }
        }
    }

    /// A 32-bit integer.
    pub fn read_i32(&mut self) -> Result<i32, DecodeError> {
        match self.protocol {
            Protocol::Binary => Ok(i32::from_be_bytes(self.read_array::<4>()?)),
            Protocol::Compact => {
                i32::try_from(self.read_zigzag(5)?).map_err(|_| DecodeError::BadVarint)
            }
        }
    }

    /// A 64-bit integer.
    pub fn read_i64(&mut self) -> Result<i64, DecodeError> {
        match self.protocol {
            Protocol::Binary => Ok(i64::from_be_bytes(self.read_array::<8>()?)),
            Protocol::Compact => self.read_zigzag(MAX_VARINT_BYTES),
        }
    }

    /// A 64-bit float.
    pub fn read_double(&mut self) -> Result<f64, DecodeError> {
        let bytes = self.read_array::<8>()?;
        Ok(match self.protocol {
            Protocol::Binary => f64::from_be_bytes(bytes),
            Protocol::Compact => f64::from_le_bytes(bytes),
        })
    }

    /// A UUID's 16 bytes.
    pub fn read_uuid(&mut self) -> Result<[u8; 16], DecodeError> {
        self.read_array::<16>()
    }

    /// A string or binary. Its declared length must fit in the budget; the bytes are
    /// allocated as they arrive.
    pub fn read_binary(&mut self) -> Result<Vec<u8>, DecodeError> {
        let length = self.size_i32("string", 1)?;
        self.read_exact_bytes(length)
    }

    fn read_exact_bytes(&mut self, length: usize) -> Result<Vec<u8>, DecodeError> {
        self.spend(length as u64, "string")?;
        let mut bytes = Vec::with_capacity(length.min(64 * 1024));
        let read = (&mut self.source)
            .take(length as u64)
            .read_to_end(&mut bytes)?;
        if read < length {
            return Err(DecodeError::Truncated);
        }
        Ok(bytes)
    }

    /// A list (or set) header: the element type and count.
    pub fn read_list_begin(&mut self) -> Result<(TType, usize), DecodeError> {
        self.enter()?;
        self.read_sequence_header("list")
    }

    /// Ends a list (or set).
    pub fn read_list_end(&mut self) {
        self.leave();
    }

    fn read_sequence_header(&mut self, what: &'static str) -> Result<(TType, usize), DecodeError> {
        match self.protocol {
            Protocol::Binary => {
                let code = self.read_u8()?;
                let element =
                    TType::from_binary_code(code)?.ok_or(DecodeError::UnknownType { code })?;
                let size = self.size_i32(what, 1)?;
                Ok((element, size))
            }
            Protocol::Compact => {
                let byte = self.read_u8()?;
                let code = byte & 0x0f;
                let element =
                    TType::from_compact_code(code)?.ok_or(DecodeError::UnknownType { code })?;
                let short_size = byte >> 4;
                let size = if short_size == 0x0f {
                    self.size_i32(what, 1)?
                } else {
                    usize::from(short_size)
                };
                Ok((element, self.checked_size(size as i64, 1, what)?))
            }
        }
    }

    /// A map header: key type, value type and count (the types are `None` for an empty
    /// compact map, which does not carry them).
    pub fn read_map_begin(&mut self) -> Result<(Option<(TType, TType)>, usize), DecodeError> {
        self.enter()?;
        match self.protocol {
            Protocol::Binary => {
                let key_code = self.read_u8()?;
                let value_code = self.read_u8()?;
                let key = TType::from_binary_code(key_code)?
                    .ok_or(DecodeError::UnknownType { code: key_code })?;
                let value = TType::from_binary_code(value_code)?
                    .ok_or(DecodeError::UnknownType { code: value_code })?;
                let size = self.size_i32("map", 2)?;
                Ok((Some((key, value)), size))
            }
            Protocol::Compact => {
                let raw = self.read_varint(5)? as u32 as i32;
                let size = self.checked_size(i64::from(raw), 2, "map")?;
                if size == 0 {
                    return Ok((None, 0));
                }
                let types = self.read_u8()?;
                let key = TType::from_compact_code(types >> 4)?
                    .ok_or(DecodeError::UnknownType { code: types >> 4 })?;
                let value = TType::from_compact_code(types & 0x0f)?
                    .ok_or(DecodeError::UnknownType { code: types & 0x0f })?;
                Ok((Some((key, value)), size))
            }
        }
    }

    /// Ends a map.
    pub fn read_map_end(&mut self) {
        self.leave();
    }

    /// Reads and drops a value of type `ttype` (an unknown field, or a field of the wrong
    /// type, which Thrift's generated code skips too).
    pub fn skip(&mut self, ttype: TType) -> Result<(), DecodeError> {
        match ttype {
            TType::Bool => {
                self.read_bool()?;
            }
            TType::Byte => {
                self.read_i8()?;
            }
            TType::Double => {
                self.read_double()?;
            }
            TType::I16 => {
                self.read_i16()?;
            }
            TType::I32 => {
                self.read_i32()?;
            }
            TType::I64 => {
                self.read_i64()?;
            }
            TType::Uuid => {
                self.read_uuid()?;
            }
            TType::Binary => {
                let length = self.size_i32("string", 1)?;
                self.spend(length as u64, "string")?;
                let copied =
                    io::copy(&mut (&mut self.source).take(length as u64), &mut io::sink())?;
                if copied < length as u64 {
                    return Err(DecodeError::Truncated);
                }
            }
            TType::Struct => {
                self.read_struct_begin()?;
                while let Some((field_type, _)) = self.read_field_begin()? {
                    self.skip(field_type)?;
                }
                self.read_struct_end();
            }
            TType::List | TType::Set => {
                let (element, size) = self.read_list_begin()?;
                for _ in 0..size {
                    self.skip(element)?;
                }
                self.read_list_end();
            }
            TType::Map => {
                let (types, size) = self.read_map_begin()?;
                if let Some((key, value)) = types {
                    for _ in 0..size {
                        self.skip(key)?;
                        self.skip(value)?;
                    }
                }
                self.read_map_end();
            }
        }
        Ok(())
    }
}

/// Writes one message into a growing buffer.
pub struct Writer {
    protocol: Protocol,
    bytes: Vec<u8>,
    field_id_stack: Vec<i16>,
    last_field_id: i16,
    /// Compact protocol: a bool field whose header waits for its value.
    pending_bool_field: Option<i16>,
    /// A length or count did not fit in an `i32`.
    overflowed: bool,
}

/// A message that could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// A string or container longer than Thrift's `i32` lengths allow.
    TooLarge,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::TooLarge => {
                f.write_str("a string or container is longer than Thrift's i32 lengths allow")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

impl Writer {
    /// A writer of `protocol` with an empty buffer.
    pub fn new(protocol: Protocol) -> Writer {
        Writer {
            protocol,
            bytes: Vec::new(),
            field_id_stack: Vec::new(),
            last_field_id: 0,
            pending_bool_field: None,
            overflowed: false,
        }
    }

    /// The encoded bytes.
    pub fn into_bytes(self) -> Result<Vec<u8>, EncodeError> {
        if self.overflowed {
            return Err(EncodeError::TooLarge);
        }
        Ok(self.bytes)
    }

    fn length_i32(&mut self, length: usize) -> i32 {
        i32::try_from(length).unwrap_or_else(|_| {
            self.overflowed = true;
            i32::MAX
        })
    }

    fn write_varint(&mut self, mut value: u64) {
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                self.bytes.push(byte);
                return;
            }
            self.bytes.push(byte | 0x80);
        }
    }

    fn write_zigzag(&mut self, value: i64) {
        self.write_varint(((value << 1) ^ (value >> 63)) as u64);
    }

    /// Writes a message header.
    pub fn write_message_begin(&mut self, header: &MessageHeader) {
        match self.protocol {
            Protocol::Binary => {
                let word = BINARY_VERSION_1 | u32::from(header.kind.code());
                self.bytes.extend_from_slice(&word.to_be_bytes());
                self.write_binary(header.name.as_bytes());
                self.write_i32(header.sequence_id);
            }
            Protocol::Compact => {
                self.bytes.push(COMPACT_PROTOCOL_ID);
                self.bytes
                    .push(COMPACT_VERSION | (header.kind.code() << COMPACT_TYPE_SHIFT));
                self.write_varint(u64::from(header.sequence_id as u32));
                self.write_binary(header.name.as_bytes());
            }
        }
    }

    /// Starts a struct.
    pub fn write_struct_begin(&mut self) {
        self.field_id_stack.push(self.last_field_id);
        self.last_field_id = 0;
    }

    /// Ends a struct (after [`Writer::write_field_stop`]).
    pub fn write_struct_end(&mut self) {
        self.last_field_id = self.field_id_stack.pop().unwrap_or(0);
    }

    /// Starts a field of type `ttype` with id `id`; its value follows.
    pub fn write_field_begin(&mut self, ttype: TType, id: i16) {
        match self.protocol {
            Protocol::Binary => {
                self.bytes.push(ttype.binary_code());
                self.bytes.extend_from_slice(&id.to_be_bytes());
            }
            Protocol::Compact => {
                if ttype == TType::Bool {
                    // The header carries the value: written by `write_bool`.
                    self.pending_bool_field = Some(id);
                } else {
                    self.write_compact_field_header(ttype.compact_code(), id);
                }
            }
        }
    }

    fn write_compact_field_header(&mut self, code: u8, id: i16) {
        let delta = i32::from(id) - i32::from(self.last_field_id);
        if (1..=15).contains(&delta) {
            self.bytes.push(((delta as u8) << 4) | code);
        } else {
            self.bytes.push(code);
            self.write_zigzag(i64::from(id));
        }
        self.last_field_id = id;
    }

    /// Ends a struct's fields.
    pub fn write_field_stop(&mut self) {
        self.bytes.push(0);
    }

    /// A bool.
    pub fn write_bool(&mut self, value: bool) {
        match self.protocol {
            Protocol::Binary => self.bytes.push(u8::from(value)),
            Protocol::Compact => {
                let code = if value { COMPACT_TRUE } else { COMPACT_FALSE };
                match self.pending_bool_field.take() {
                    Some(id) => self.write_compact_field_header(code, id),
                    None => self.bytes.push(code),
                }
            }
        }
    }

    /// A signed byte.
    pub fn write_i8(&mut self, value: i8) {
        self.bytes.push(value as u8);
    }

    /// A 16-bit integer.
    pub fn write_i16(&mut self, value: i16) {
        match self.protocol {
            Protocol::Binary => self.bytes.extend_from_slice(&value.to_be_bytes()),
            Protocol::Compact => self.write_zigzag(i64::from(value)),
        }
    }

    /// A 32-bit integer.
    pub fn write_i32(&mut self, value: i32) {
        match self.protocol {
            Protocol::Binary => self.bytes.extend_from_slice(&value.to_be_bytes()),
            Protocol::Compact => self.write_zigzag(i64::from(value)),
        }
    }

    /// A 64-bit integer.
    pub fn write_i64(&mut self, value: i64) {
        match self.protocol {
            Protocol::Binary => self.bytes.extend_from_slice(&value.to_be_bytes()),
            Protocol::Compact => self.write_zigzag(value),
        }
    }

    /// A 64-bit float.
    pub fn write_double(&mut self, value: f64) {
        match self.protocol {
            Protocol::Binary => self.bytes.extend_from_slice(&value.to_be_bytes()),
            Protocol::Compact => self.bytes.extend_from_slice(&value.to_le_bytes()),
        }
    }

    /// A string or binary.
    pub fn write_binary(&mut self, value: &[u8]) {
        let length = self.length_i32(value.len());
        match self.protocol {
            Protocol::Binary => self.bytes.extend_from_slice(&length.to_be_bytes()),
            Protocol::Compact => self.write_varint(u64::from(length as u32)),
        }
        self.bytes.extend_from_slice(value);
    }

    /// A list header.
    pub fn write_list_begin(&mut self, element: TType, size: usize) {
        let size = self.length_i32(size);
        match self.protocol {
            Protocol::Binary => {
                self.bytes.push(element.binary_code());
                self.bytes.extend_from_slice(&size.to_be_bytes());
            }
            Protocol::Compact => {
                if size < 15 {
                    self.bytes
                        .push(((size as u8) << 4) | element.compact_code());
                } else {
                    self.bytes.push(0xf0 | element.compact_code());
                    self.write_varint(u64::from(size as u32));
                }
            }
        }
    }

    /// A map header.
    pub fn write_map_begin(&mut self, key: TType, value: TType, size: usize) {
        let size = self.length_i32(size);
        match self.protocol {
            Protocol::Binary => {
                self.bytes.push(key.binary_code());
                self.bytes.push(value.binary_code());
                self.bytes.extend_from_slice(&size.to_be_bytes());
            }
            Protocol::Compact => {
                self.write_varint(u64::from(size as u32));
                if size > 0 {
                    self.bytes
                        .push((key.compact_code() << 4) | value.compact_code());
                }
            }
        }
    }
}

/// A type that travels as one Thrift value of type [`Wire::TYPE`].
///
/// `Vec<u8>` is Thrift's `binary` (and `string`); `Vec<T>` of any other `Wire` type is a
/// `list<T>`; [`ThriftMap`] is a `map`. (`u8` therefore must never implement `Wire`: a
/// signed byte is `i8`.)
pub trait Wire: Sized {
    /// The Thrift type of the value.
    const TYPE: TType;
    /// True only for `()`, the success value of a `void` method, which travels as nothing.
    const IS_VOID: bool = false;
    /// Writes the value.
    fn write(&self, writer: &mut Writer);
    /// Reads a value.
    fn read<R: Read>(reader: &mut Reader<R>) -> Result<Self, DecodeError>;
}

impl Wire for bool {
    const TYPE: TType = TType::Bool;
    fn write(&self, writer: &mut Writer) {
        writer.write_bool(*self);
    }
    fn read<R: Read>(reader: &mut Reader<R>) -> Result<Self, DecodeError> {
        reader.read_bool()
    }
}

impl Wire for i8 {
    const TYPE: TType = TType::Byte;
    fn write(&self, writer: &mut Writer) {
        writer.write_i8(*self);
    }
    fn read<R: Read>(reader: &mut Reader<R>) -> Result<Self, DecodeError> {
        reader.read_i8()
    }
}

impl Wire for i16 {
    const TYPE: TType = TType::I16;
    fn write(&self, writer: &mut Writer) {
        writer.write_i16(*self);
    }
    fn read<R: Read>(reader: &mut Reader<R>) -> Result<Self, DecodeError> {
        reader.read_i16()
    }
}

impl Wire for i32 {
    const TYPE: TType = TType::I32;
    fn write(&self, writer: &mut Writer) {
        writer.write_i32(*self);
    }
    fn read<R: Read>(reader: &mut Reader<R>) -> Result<Self, DecodeError> {
        reader.read_i32()
    }
}

impl Wire for i64 {
    const TYPE: TType = TType::I64;
    fn write(&self, writer: &mut Writer) {
        writer.write_i64(*self);
    }
    fn read<R: Read>(reader: &mut Reader<R>) -> Result<Self, DecodeError> {
        reader.read_i64()
    }
}

impl Wire for f64 {
    const TYPE: TType = TType::Double;
    fn write(&self, writer: &mut Writer) {
        writer.write_double(*self);
    }
    fn read<R: Read>(reader: &mut Reader<R>) -> Result<Self, DecodeError> {
        reader.read_double()
    }
}

impl Wire for Vec<u8> {
    const TYPE: TType = TType::Binary;
    fn write(&self, writer: &mut Writer) {
        writer.write_binary(self);
    }
    fn read<R: Read>(reader: &mut Reader<R>) -> Result<Self, DecodeError> {
        reader.read_binary()
    }
}

/// Thrift's `string`: UTF-8 on the wire. Bytes that are not UTF-8 are read lossily (the
/// strings of HBase's IDL are messages meant for people).
impl Wire for String {
    const TYPE: TType = TType::Binary;
    fn write(&self, writer: &mut Writer) {
        writer.write_binary(self.as_bytes());
    }
    fn read<R: Read>(reader: &mut Reader<R>) -> Result<Self, DecodeError> {
        let bytes = reader.read_binary()?;
        Ok(String::from_utf8(bytes)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()))
    }
}

impl<T: Wire> Wire for Vec<T> {
    const TYPE: TType = TType::List;
    fn write(&self, writer: &mut Writer) {
        writer.write_list_begin(T::TYPE, self.len());
        for item in self {
            item.write(writer);
        }
    }
    fn read<R: Read>(reader: &mut Reader<R>) -> Result<Self, DecodeError> {
        let (element, size) = reader.read_list_begin()?;
        let mut items = Vec::with_capacity(size.min(MAX_PREALLOCATED_ELEMENTS));
        if element == T::TYPE {
            for _ in 0..size {
                items.push(T::read(reader)?);
            }
        } else {
            // Elements of another type: skipped, as a field of the wrong type is.
            for _ in 0..size {
                reader.skip(element)?;
            }
        }
        reader.read_list_end();
        Ok(items)
    }
}

/// A Thrift `map`, kept as the pairs in the order they travel.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThriftMap<K, V>(pub Vec<(K, V)>);

impl<K: Wire, V: Wire> Wire for ThriftMap<K, V> {
    const TYPE: TType = TType::Map;
    fn write(&self, writer: &mut Writer) {
        writer.write_map_begin(K::TYPE, V::TYPE, self.0.len());
        for (key, value) in &self.0 {
            key.write(writer);
            value.write(writer);
        }
    }
    fn read<R: Read>(reader: &mut Reader<R>) -> Result<Self, DecodeError> {
        let (types, size) = reader.read_map_begin()?;
        let mut pairs = Vec::with_capacity(size.min(MAX_PREALLOCATED_ELEMENTS));
        match types {
            Some((key, value)) if key == K::TYPE && value == V::TYPE => {
                for _ in 0..size {
                    let key = K::read(reader)?;
                    let value = V::read(reader)?;
                    pairs.push((key, value));
                }
            }
            Some((key, value)) => {
                for _ in 0..size {
                    reader.skip(key)?;
                    reader.skip(value)?;
                }
            }
            None => {}
        }
        reader.read_map_end();
        Ok(ThriftMap(pairs))
    }
}

/// Declares a Thrift struct: every field optional (`None` is "not sent"), [`Wire`] reading
/// fields in any order and skipping unknown ones and ones of another type.
macro_rules! thrift_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* $id:literal => $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            $(
                $(#[$field_meta])*
                #[doc = concat!("Field ", stringify!($id), "; `None` when not sent.")]
                pub $field: Option<$ty>,
            )*
        }

        impl $crate::thrift::codec::Wire for $name {
            const TYPE: $crate::thrift::codec::TType = $crate::thrift::codec::TType::Struct;

            fn write(&self, writer: &mut $crate::thrift::codec::Writer) {
                writer.write_struct_begin();
                $(
                    if let Some(value) = &self.$field {
                        writer.write_field_begin(
                            <$ty as $crate::thrift::codec::Wire>::TYPE,
                            $id,
                        );
                        $crate::thrift::codec::Wire::write(value, writer);
                    }
                )*
                writer.write_field_stop();
                writer.write_struct_end();
            }

            fn read<R: std::io::Read>(
                reader: &mut $crate::thrift::codec::Reader<R>,
            ) -> Result<Self, $crate::thrift::codec::DecodeError> {
                #[allow(unused_mut, reason = "a struct without fields assigns none")]
                let mut value = Self::default();
                reader.read_struct_begin()?;
                while let Some((field_type, id)) = reader.read_field_begin()? {
                    match id {
                        $(
                            $id if field_type == <$ty as $crate::thrift::codec::Wire>::TYPE => {
                                value.$field = Some(
                                    <$ty as $crate::thrift::codec::Wire>::read(reader)?,
                                );
                            }
                        )*
                        _ => reader.skip(field_type)?,
                    }
                }
                reader.read_struct_end();
                Ok(value)
            }
        }
    };
}

pub(crate) use thrift_struct;

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    thrift_struct! {
        /// Every kind of field, for round trips.
        pub struct Everything {
            1 => flag: bool,
            2 => byte: i8,
            3 => short: i16,
            4 => int: i32,
            5 => long: i64,
            6 => double: f64,
            7 => bytes: Vec<u8>,
            8 => text: String,
            9 => list: Vec<i64>,
            10 => flags: Vec<bool>,
            11 => map: ThriftMap<Vec<u8>, i32>,
            12 => nested: Inner,
            13 => nested_list: Vec<Inner>,
            300 => far: i32,
            -2 => negative: bool,
        }
    }

    thrift_struct! {
        /// A struct inside [`Everything`].
        pub struct Inner {
            1 => first: bool,
            2 => second: Vec<u8>,
        }
    }

    fn encode<T: Wire>(protocol: Protocol, value: &T) -> Vec<u8> {
        let mut writer = Writer::new(protocol);
        value.write(&mut writer);
        writer.into_bytes().unwrap()
    }

    fn decode<T: Wire>(protocol: Protocol, bytes: &[u8]) -> Result<T, DecodeError> {
        let mut reader = Reader::new(bytes, protocol, bytes.len() as u64);
        T::read(&mut reader)
    }

    fn full() -> Everything {
        Everything {
            flag: Some(true),
            byte: Some(-7),
            short: Some(-300),
            int: Some(i32::MIN),
            long: Some(i64::MAX),
            double: Some(-2.5),
            bytes: Some(vec![0, 255, b':', 1]),
            text: Some("héllo".into()),
            list: Some(vec![1, -1, 1 << 40]),
            flags: Some(vec![true, false, true]),
            map: Some(ThriftMap(vec![(b"k".to_vec(), 1), (b"".to_vec(), -1)])),
            nested: Some(Inner {
                first: Some(false),
                second: Some(b"in".to_vec()),
            }),
            nested_list: Some(vec![
                Inner::default(),
                Inner {
                    first: Some(true),
                    second: None,
                },
            ]),
            far: Some(17),
            negative: Some(false),
        }
    }

    #[test]
    fn every_field_type_round_trips_in_both_protocols() {
        for protocol in [Protocol::Binary, Protocol::Compact] {
            let value = full();
            let bytes = encode(protocol, &value);
            assert_eq!(decode::<Everything>(protocol, &bytes).unwrap(), value);
            let empty = Everything::default();
            assert_eq!(
                decode::<Everything>(protocol, &encode(protocol, &empty)).unwrap(),
                empty
            );
        }
    }

    #[test]
    fn binary_encoding_matches_the_specification() {
        let value = Inner {
            first: Some(true),
            second: Some(b"ab".to_vec()),
        };
        assert_eq!(
            encode(Protocol::Binary, &value),
            [2, 0, 1, 1, 11, 0, 2, 0, 0, 0, 2, b'a', b'b', 0]
        );
        // Compact: the bool's value is its field type (1 = true), field 2 is a delta of 1,
        // the binary's length a varint.
        assert_eq!(
            encode(Protocol::Compact, &value),
            [0x11, 0x18, 2, b'a', b'b', 0]
        );
    }

    #[test]
    fn compact_integers_are_zigzag_varints_and_far_fields_carry_their_id() {
        let value = Everything {
            int: Some(-1),
            far: Some(300),
            ..Everything::default()
        };
        // Field 4 (delta 4, type i32 = 5): zigzag(-1) = 1. Field 300: delta too large, so
        // type byte 5 then zigzag(300) = 600 = 0xd8 0x04, then zigzag(300) as the value.
        assert_eq!(
            encode(Protocol::Compact, &value),
            [0x45, 0x01, 0x05, 0xd8, 0x04, 0xd8, 0x04, 0]
        );
    }

    #[test]
    fn messages_round_trip_and_old_non_strict_binary_headers_are_read() {
        for protocol in [Protocol::Binary, Protocol::Compact] {
            for kind in [
                MessageType::Call,
                MessageType::Reply,
                MessageType::Exception,
                MessageType::Oneway,
            ] {
                let header = MessageHeader {
                    name: "getRow".into(),
                    kind,
                    sequence_id: -5,
                };
                let mut writer = Writer::new(protocol);
                writer.write_message_begin(&header);
                let bytes = writer.into_bytes().unwrap();
                let mut reader = Reader::new(&bytes[..], protocol, 1000);
                assert_eq!(reader.read_message_begin().unwrap(), header);
            }
        }
        let mut non_strict = vec![0, 0, 0, 3];
        non_strict.extend_from_slice(b"get");
        non_strict.push(1);
        non_strict.extend_from_slice(&7i32.to_be_bytes());
        let mut reader = Reader::new(&non_strict[..], Protocol::Binary, 100);
        assert_eq!(
            reader.read_message_begin().unwrap(),
            MessageHeader {
                name: "get".into(),
                kind: MessageType::Call,
                sequence_id: 7
            }
        );
    }

    #[test]
    fn unknown_fields_and_fields_of_another_type_are_skipped() {
        for protocol in [Protocol::Binary, Protocol::Compact] {
            // An Everything read as an Inner: every field but 1 and 2 is unknown, and both of
            // those have other types in Everything (bool is 1 in both; 2 is i8 there).
            let bytes = encode(protocol, &full());
            let inner: Inner = decode(protocol, &bytes).unwrap();
            assert_eq!(
                inner,
                Inner {
                    first: Some(true),
                    second: None
                }
            );
        }
    }

    #[test]
    fn every_truncation_of_a_message_is_rejected() {
        for protocol in [Protocol::Binary, Protocol::Compact] {
            let bytes = encode(protocol, &full());
            for cut in 0..bytes.len() {
                let result = decode::<Everything>(protocol, &bytes[..cut]);
                assert!(
                    matches!(
                        result,
                        Err(DecodeError::Truncated | DecodeError::TooLarge { .. })
                    ),
                    "{protocol:?} cut at {cut}: {result:?}"
                );
            }
        }
    }

    #[test]
    fn a_string_longer_than_the_budget_is_refused_before_it_is_read() {
        // A binary field claiming 2 GiB in an 11-byte message.
        let bytes = [11, 0, 7, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0];
        let error = decode::<Everything>(Protocol::Binary, &bytes).unwrap_err();
        assert!(
            matches!(
                error,
                DecodeError::TooLarge {
                    what: "string",
                    size: 0x7fff_ffff,
                    ..
                }
            ),
            "{error:?}"
        );
        // A negative length.
        let bytes = [11, 0, 7, 0xff, 0xff, 0xff, 0xfe, 0];
        assert!(matches!(
            decode::<Everything>(Protocol::Binary, &bytes),
            Err(DecodeError::NegativeSize { size: -2, .. })
        ));
        // A list of a billion i64s in a compact message of a few bytes.
        let bytes = [0x99, 0xf6, 0x80, 0x94, 0xeb, 0xdc, 0x03, 0];
        assert!(matches!(
            decode::<Everything>(Protocol::Compact, &bytes),
            Err(DecodeError::TooLarge { what: "list", .. })
        ));
        // A map claiming more pairs than bytes.
        let bytes = [13, 0, 11, 11, 8, 0x10, 0, 0, 0, 0];
        assert!(matches!(
            decode::<Everything>(Protocol::Binary, &bytes),
            Err(DecodeError::TooLarge { what: "map", .. })
        ));
    }

    #[test]
    fn the_budget_bounds_the_whole_message() {
        let bytes = encode(Protocol::Binary, &full());
        let mut reader = Reader::new(&bytes[..], Protocol::Binary, bytes.len() as u64 - 1);
        assert!(matches!(
            Everything::read(&mut reader),
            Err(DecodeError::TooLarge { .. })
        ));
    }

    #[test]
    fn nesting_is_bounded() {
        // Lists of lists, deeper than the limit.
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&[15, 0, 9]);
        for _ in 0..MAX_NESTING_DEPTH + 1 {
            bytes.extend_from_slice(&[15, 0, 0, 0, 1]);
        }
        let error = decode::<Everything>(Protocol::Binary, &bytes).unwrap_err();
        assert!(matches!(error, DecodeError::TooDeep), "{error:?}");
    }

    #[test]
    fn unknown_type_codes_and_bad_headers_are_errors() {
        assert!(matches!(
            decode::<Everything>(Protocol::Binary, &[9, 0, 1]),
            Err(DecodeError::UnknownType { code: 9 })
        ));
        let mut reader = Reader::new(&[0x80u8, 0x02, 0, 1][..], Protocol::Binary, 100);
        assert!(matches!(
            reader.read_message_begin(),
            Err(DecodeError::BadVersion { .. })
        ));
        let mut reader = Reader::new(&[0x82u8, 0x22, 0, 0][..], Protocol::Compact, 100);
        assert!(matches!(
            reader.read_message_begin(),
            Err(DecodeError::BadCompactHeader { version: 2, .. })
        ));
        let overlong = [0x45, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0];
        assert!(matches!(
            decode::<Everything>(Protocol::Compact, &overlong),
            Err(DecodeError::BadVarint)
        ));
    }

    fn inner_strategy() -> impl Strategy<Value = Inner> {
        (
            proptest::option::of(any::<bool>()),
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)),
        )
            .prop_map(|(first, second)| Inner { first, second })
    }

    fn everything_strategy() -> impl Strategy<Value = Everything> {
        (
            (
                proptest::option::of(any::<bool>()),
                proptest::option::of(any::<i8>()),
                proptest::option::of(any::<i16>()),
                proptest::option::of(any::<i32>()),
                proptest::option::of(any::<i64>()),
                proptest::option::of(-1e12f64..1e12),
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..64)),
                proptest::option::of(".{0,20}"),
            ),
            (
                proptest::option::of(proptest::collection::vec(any::<i64>(), 0..20)),
                proptest::option::of(proptest::collection::vec(any::<bool>(), 0..20)),
                proptest::option::of(proptest::collection::vec(
                    (proptest::collection::vec(any::<u8>(), 0..8), any::<i32>()),
                    0..20,
                )),
                proptest::option::of(inner_strategy()),
                proptest::option::of(proptest::collection::vec(inner_strategy(), 0..20)),
                proptest::option::of(any::<i32>()),
                proptest::option::of(any::<bool>()),
            ),
        )
            .prop_map(
                |(
                    (flag, byte, short, int, long, double, bytes, text),
                    (list, flags, map, nested, nested_list, far, negative),
                )| Everything {
                    flag,
                    byte,
                    short,
                    int,
                    long,
                    double,
                    bytes,
                    text,
                    list,
                    flags,
                    map: map.map(ThriftMap),
                    nested,
                    nested_list,
                    far,
                    negative,
                },
            )
    }

    proptest! {
        #[test]
        fn any_struct_round_trips(value in everything_strategy()) {
            for protocol in [Protocol::Binary, Protocol::Compact] {
                let bytes = encode(protocol, &value);
                prop_assert_eq!(decode::<Everything>(protocol, &bytes).unwrap(), value.clone());
            }
        }

        #[test]
        fn random_bytes_never_panic_or_overrun_the_budget(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            for protocol in [Protocol::Binary, Protocol::Compact] {
                let mut reader = Reader::new(&bytes[..], protocol, bytes.len() as u64);
                let _ = reader.read_message_begin();
                let _ = Everything::read(&mut reader);
            }
        }
    }
}
