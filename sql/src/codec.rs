//! Values in bytes and back: stored bytes appended to Arrow builders (scans), Arrow values
//! encoded into bytes (inserts and pushed-down literals), for each [`ColumnType`] and
//! [`Encoding`].

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryBuilder, BooleanBuilder, Float64Builder, Int32Builder,
    Int64Builder, StringBuilder, UInt8Builder, UInt32Builder, UInt64Builder,
};
use datafusion::arrow::datatypes::{
    DataType, Float64Type, Int32Type, Int64Type, UInt8Type, UInt32Type, UInt64Type,
};
use datafusion::common::ScalarValue;

use crate::mapping::{ColumnType, Encoding};

/// Why stored bytes are not a value of their column's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeFailure(pub String);

/// An Arrow builder for one mapped column.
#[derive(Debug)]
pub enum ColumnBuilder {
    /// `Utf8`.
    Utf8(StringBuilder),
    /// `Binary`.
    Binary(BinaryBuilder),
    /// `Boolean`.
    Boolean(BooleanBuilder),
    /// `Int32`.
    Int32(Int32Builder),
    /// `Int64`.
    Int64(Int64Builder),
    /// `UInt8`.
    UInt8(UInt8Builder),
    /// `UInt32`.
    UInt32(UInt32Builder),
    /// `UInt64`.
    UInt64(UInt64Builder),
    /// `Float64`.
    Float64(Float64Builder),
}

fn fixed<const N: usize>(bytes: &[u8], what: &str) -> Result<[u8; N], DecodeFailure> {
    bytes
        .try_into()
        .map_err(|_| DecodeFailure(format!("{} bytes are not a {N}-byte {what}", bytes.len())))
}

fn text<'a>(bytes: &'a [u8], what: &str) -> Result<&'a str, DecodeFailure> {
    std::str::from_utf8(bytes)
        .map_err(|_| DecodeFailure(format!("the bytes are not UTF-8 text of a {what}")))
}

fn parse_text<T: std::str::FromStr>(bytes: &[u8], what: &str) -> Result<T, DecodeFailure> {
    let text = text(bytes, what)?;
    text.parse()
        .map_err(|_| DecodeFailure(format!("{text:?} is not a {what}")))
}

/// The sign bit of an `N`-byte big-endian integer, flipped by the ordered encoding.
const SIGN_BIT: u8 = 0x80;

fn unflip<const N: usize>(mut bytes: [u8; N]) -> [u8; N] {
    if let Some(first) = bytes.first_mut() {
        *first ^= SIGN_BIT;
    }
    bytes
}

/// Decodes an `i32` stored in `encoding`.
pub fn decode_i32(bytes: &[u8], encoding: Encoding) -> Result<i32, DecodeFailure> {
    match encoding {
        Encoding::String => parse_text(bytes, "32-bit integer"),
        Encoding::Binary => Ok(i32::from_be_bytes(fixed(bytes, "integer")?)),
        Encoding::Ordered => Ok(i32::from_be_bytes(unflip(fixed(bytes, "integer")?))),
    }
}

/// Decodes an `i64` stored in `encoding`.
pub fn decode_i64(bytes: &[u8], encoding: Encoding) -> Result<i64, DecodeFailure> {
    match encoding {
        Encoding::String => parse_text(bytes, "64-bit integer"),
        Encoding::Binary => Ok(i64::from_be_bytes(fixed(bytes, "integer")?)),
        Encoding::Ordered => Ok(i64::from_be_bytes(unflip(fixed(bytes, "integer")?))),
    }
}

fn decode_unsigned<const N: usize>(
    bytes: &[u8],
    encoding: Encoding,
    what: &str,
) -> Result<[u8; N], DecodeFailure> {
    match encoding {
        Encoding::Binary | Encoding::Ordered => fixed(bytes, what),
        Encoding::String => {
            let value: u64 = parse_text(bytes, what)?;
            let be = value.to_be_bytes();
            let (high, low) = be.split_at(be.len().saturating_sub(N));
            if high.iter().any(|&b| b != 0) {
                return Err(DecodeFailure(format!("{value} does not fit a {what}")));
            }
            low.try_into()
                .map_err(|_| DecodeFailure(format!("{value} does not fit a {what}")))
        }
    }
}

fn decode_bool(bytes: &[u8], encoding: Encoding) -> Result<bool, DecodeFailure> {
    match encoding {
        // HBase's Bytes.toBoolean: one byte, anything but zero is true.
        Encoding::Binary | Encoding::Ordered => Ok(fixed::<1>(bytes, "boolean")? != [0]),
        Encoding::String => match text(bytes, "boolean")? {
            t if t.eq_ignore_ascii_case("true") => Ok(true),
            t if t.eq_ignore_ascii_case("false") => Ok(false),
            t => Err(DecodeFailure(format!("{t:?} is not true or false"))),
        },
    }
}

fn decode_f64(bytes: &[u8], encoding: Encoding) -> Result<f64, DecodeFailure> {
    match encoding {
        Encoding::Binary | Encoding::Ordered => {
            Ok(f64::from_bits(u64::from_be_bytes(fixed(bytes, "double")?)))
        }
        Encoding::String => parse_text(bytes, "double"),
    }
}

impl ColumnBuilder {
    /// An empty builder for `column_type`, with room for `rows` values.
    pub fn new(column_type: ColumnType, rows: usize) -> ColumnBuilder {
        match column_type {
            ColumnType::Utf8 => ColumnBuilder::Utf8(StringBuilder::with_capacity(rows, rows * 16)),
            ColumnType::Binary => {
                ColumnBuilder::Binary(BinaryBuilder::with_capacity(rows, rows * 16))
            }
            ColumnType::Boolean => ColumnBuilder::Boolean(BooleanBuilder::with_capacity(rows)),
            ColumnType::Int32 => ColumnBuilder::Int32(Int32Builder::with_capacity(rows)),
            ColumnType::Int64 => ColumnBuilder::Int64(Int64Builder::with_capacity(rows)),
            ColumnType::UInt8 => ColumnBuilder::UInt8(UInt8Builder::with_capacity(rows)),
            ColumnType::UInt32 => ColumnBuilder::UInt32(UInt32Builder::with_capacity(rows)),
            ColumnType::UInt64 => ColumnBuilder::UInt64(UInt64Builder::with_capacity(rows)),
            ColumnType::Float64 => ColumnBuilder::Float64(Float64Builder::with_capacity(rows)),
        }
    }

    /// Appends the value stored in `bytes`; on failure nothing is appended.
    pub fn append(&mut self, bytes: &[u8], encoding: Encoding) -> Result<(), DecodeFailure> {
        match self {
            ColumnBuilder::Utf8(b) => b.append_value(text(bytes, "string")?),
            ColumnBuilder::Binary(b) => b.append_value(bytes),
            ColumnBuilder::Boolean(b) => b.append_value(decode_bool(bytes, encoding)?),
            ColumnBuilder::Int32(b) => b.append_value(decode_i32(bytes, encoding)?),
            ColumnBuilder::Int64(b) => b.append_value(decode_i64(bytes, encoding)?),
            ColumnBuilder::UInt8(b) => b.append_value(u8::from_be_bytes(decode_unsigned(
                bytes,
                encoding,
                "unsigned byte",
            )?)),
            ColumnBuilder::UInt32(b) => b.append_value(u32::from_be_bytes(decode_unsigned(
                bytes,
                encoding,
                "32-bit unsigned integer",
            )?)),
            ColumnBuilder::UInt64(b) => b.append_value(u64::from_be_bytes(decode_unsigned(
                bytes,
                encoding,
                "64-bit unsigned integer",
            )?)),
            ColumnBuilder::Float64(b) => b.append_value(decode_f64(bytes, encoding)?),
        }
        Ok(())
    }

    /// Appends a NULL.
    pub fn append_null(&mut self) {
        match self {
            ColumnBuilder::Utf8(b) => b.append_null(),
            ColumnBuilder::Binary(b) => b.append_null(),
            ColumnBuilder::Boolean(b) => b.append_null(),
            ColumnBuilder::Int32(b) => b.append_null(),
            ColumnBuilder::Int64(b) => b.append_null(),
            ColumnBuilder::UInt8(b) => b.append_null(),
            ColumnBuilder::UInt32(b) => b.append_null(),
            ColumnBuilder::UInt64(b) => b.append_null(),
            ColumnBuilder::Float64(b) => b.append_null(),
        }
    }

    /// The values appended so far, as an array; the builder starts empty again.
    pub fn finish(&mut self) -> ArrayRef {
        match self {
            ColumnBuilder::Utf8(b) => Arc::new(b.finish()),
            ColumnBuilder::Binary(b) => Arc::new(b.finish()),
            ColumnBuilder::Boolean(b) => Arc::new(b.finish()),
            ColumnBuilder::Int32(b) => Arc::new(b.finish()),
            ColumnBuilder::Int64(b) => Arc::new(b.finish()),
            ColumnBuilder::UInt8(b) => Arc::new(b.finish()),
            ColumnBuilder::UInt32(b) => Arc::new(b.finish()),
            ColumnBuilder::UInt64(b) => Arc::new(b.finish()),
            ColumnBuilder::Float64(b) => Arc::new(b.finish()),
        }
    }
}

/// A value to encode: what an Arrow array or a SQL literal holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// Text.
    Text(&'a str),
    /// Bytes.
    Bytes(&'a [u8]),
    /// A boolean.
    Bool(bool),
    /// A signed integer (any width).
    Int(i64),
    /// An unsigned integer (any width).
    UInt(u64),
    /// A double.
    Float(f64),
}

/// Why a value cannot be stored in a column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeFailure(pub String);

/// Appends `value`, as a value of `column_type` in `encoding`, to `out`.
pub fn encode(
    value: Value<'_>,
    column_type: ColumnType,
    encoding: Encoding,
    out: &mut Vec<u8>,
) -> Result<(), EncodeFailure> {
    let mismatch = || {
        EncodeFailure(format!(
            "{value:?} is not a value of type {}",
            column_type.name()
        ))
    };
    match column_type {
        ColumnType::Utf8 | ColumnType::Binary => match value {
            Value::Text(t) => out.extend_from_slice(t.as_bytes()),
            Value::Bytes(b) => out.extend_from_slice(b),
            _ => return Err(mismatch()),
        },
        ColumnType::Boolean => {
            let Value::Bool(v) = value else {
                return Err(mismatch());
            };
            match encoding {
                Encoding::String => out.extend_from_slice(if v { b"true" } else { b"false" }),
                // HBase's Bytes.toBytes(boolean): -1 for true, 0 for false.
                Encoding::Binary | Encoding::Ordered => out.push(if v { 0xFF } else { 0 }),
            }
        }
        ColumnType::Int32 | ColumnType::Int64 => {
            let v = match value {
                Value::Int(v) => v,
                Value::UInt(v) => i64::try_from(v).map_err(|_| mismatch())?,
                _ => return Err(mismatch()),
            };
            if column_type == ColumnType::Int32 {
                let v = i32::try_from(v)
                    .map_err(|_| EncodeFailure(format!("{v} does not fit a 32-bit integer")))?;
                encode_signed(&v.to_be_bytes(), v.to_string(), encoding, out);
            } else {
                encode_signed(&v.to_be_bytes(), v.to_string(), encoding, out);
            }
        }
        ColumnType::UInt8 | ColumnType::UInt32 | ColumnType::UInt64 => {
            let v = match value {
                Value::UInt(v) => v,
                Value::Int(v) => u64::try_from(v).map_err(|_| mismatch())?,
                _ => return Err(mismatch()),
            };
            let width = column_type.binary_width().unwrap_or(8);
            let be = v.to_be_bytes();
            let (high, low) = be.split_at(be.len() - width);
            if high.iter().any(|&b| b != 0) {
                return Err(EncodeFailure(format!(
                    "{v} does not fit a {} ",
                    column_type.name()
                )));
            }
            match encoding {
                Encoding::String => out.extend_from_slice(v.to_string().as_bytes()),
                Encoding::Binary | Encoding::Ordered => out.extend_from_slice(low),
            }
        }
        ColumnType::Float64 => {
            let v = match value {
                Value::Float(v) => v,
                Value::Int(v) => v as f64,
                Value::UInt(v) => v as f64,
                _ => return Err(mismatch()),
            };
            match encoding {
                Encoding::String => out.extend_from_slice(v.to_string().as_bytes()),
                Encoding::Binary | Encoding::Ordered => {
                    out.extend_from_slice(&v.to_bits().to_be_bytes())
                }
            }
        }
    }
    Ok(())
}

fn encode_signed(be: &[u8], decimal: String, encoding: Encoding, out: &mut Vec<u8>) {
    match encoding {
        Encoding::String => out.extend_from_slice(decimal.as_bytes()),
        Encoding::Binary => out.extend_from_slice(be),
        Encoding::Ordered => {
            let start = out.len();
            out.extend_from_slice(be);
            if let Some(first) = out.get_mut(start) {
                *first ^= SIGN_BIT;
            }
        }
    }
}

/// The value of row `row` of `array`, `None` when it is NULL or of a type no mapping has.
pub fn array_value(array: &dyn Array, row: usize) -> Option<Value<'_>> {
    if array.is_null(row) {
        return None;
    }
    Some(match array.data_type() {
        DataType::Utf8 => Value::Text(array.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => Value::Text(array.as_string::<i64>().value(row)),
        DataType::Utf8View => Value::Text(array.as_string_view().value(row)),
        DataType::Binary => Value::Bytes(array.as_binary::<i32>().value(row)),
        DataType::LargeBinary => Value::Bytes(array.as_binary::<i64>().value(row)),
        DataType::BinaryView => Value::Bytes(array.as_binary_view().value(row)),
        DataType::Boolean => Value::Bool(array.as_boolean().value(row)),
        DataType::Int32 => Value::Int(i64::from(array.as_primitive::<Int32Type>().value(row))),
        DataType::Int64 => Value::Int(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => Value::UInt(u64::from(array.as_primitive::<UInt8Type>().value(row))),
        DataType::UInt32 => Value::UInt(u64::from(array.as_primitive::<UInt32Type>().value(row))),
        DataType::UInt64 => Value::UInt(array.as_primitive::<UInt64Type>().value(row)),
        DataType::Float64 => Value::Float(array.as_primitive::<Float64Type>().value(row)),
        _ => return None,
    })
}

/// The value of a SQL literal, `None` when it is NULL or of another kind.
pub fn scalar_value(scalar: &ScalarValue) -> Option<Value<'_>> {
    Some(match scalar {
        ScalarValue::Utf8(Some(t))
        | ScalarValue::LargeUtf8(Some(t))
        | ScalarValue::Utf8View(Some(t)) => Value::Text(t),
        ScalarValue::Binary(Some(b))
        | ScalarValue::LargeBinary(Some(b))
        | ScalarValue::BinaryView(Some(b))
        | ScalarValue::FixedSizeBinary(_, Some(b)) => Value::Bytes(b),
        ScalarValue::Boolean(Some(v)) => Value::Bool(*v),
        ScalarValue::Int8(Some(v)) => Value::Int(i64::from(*v)),
        ScalarValue::Int16(Some(v)) => Value::Int(i64::from(*v)),
        ScalarValue::Int32(Some(v)) => Value::Int(i64::from(*v)),
        ScalarValue::Int64(Some(v)) => Value::Int(*v),
        ScalarValue::UInt8(Some(v)) => Value::UInt(u64::from(*v)),
        ScalarValue::UInt16(Some(v)) => Value::UInt(u64::from(*v)),
        ScalarValue::UInt32(Some(v)) => Value::UInt(u64::from(*v)),
        ScalarValue::UInt64(Some(v)) => Value::UInt(*v),
        ScalarValue::Float64(Some(v)) => Value::Float(*v),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray};
    use proptest::prelude::*;

    fn round_trip(value: Value<'_>, ty: ColumnType, enc: Encoding) -> ArrayRef {
        let mut bytes = Vec::new();
        encode(value, ty, enc, &mut bytes).unwrap();
        let mut builder = ColumnBuilder::new(ty, 1);
        builder.append(&bytes, enc).unwrap();
        builder.finish()
    }

    #[test]
    fn hbase_bytes_encodings() {
        let mut out = Vec::new();
        encode(
            Value::Int(-2),
            ColumnType::Int64,
            Encoding::Binary,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, (-2i64).to_be_bytes());
        out.clear();
        encode(
            Value::Int(-2),
            ColumnType::Int32,
            Encoding::Ordered,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, strata::keys::encode_i32(-2));
        out.clear();
        encode(
            Value::Bool(true),
            ColumnType::Boolean,
            Encoding::Binary,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, [0xFF]);
        out.clear();
        encode(
            Value::Int(42),
            ColumnType::Int64,
            Encoding::String,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, b"42");
        out.clear();
        assert!(
            encode(
                Value::Int(300),
                ColumnType::UInt8,
                Encoding::Binary,
                &mut out
            )
            .is_err()
        );
        assert!(
            encode(
                Value::Int(1 << 40),
                ColumnType::Int32,
                Encoding::Binary,
                &mut out
            )
            .is_err()
        );
        assert!(
            encode(
                Value::Text("x"),
                ColumnType::Int64,
                Encoding::Binary,
                &mut out
            )
            .is_err()
        );
    }

    #[test]
    fn undecodable_bytes_say_why() {
        let mut b = ColumnBuilder::new(ColumnType::Int64, 1);
        let e = b.append(b"abc", Encoding::Binary).unwrap_err();
        assert!(e.0.contains("3 bytes are not a 8-byte integer"), "{e:?}");
        let e = b.append(b"4x", Encoding::String).unwrap_err();
        assert!(e.0.contains("\"4x\" is not a 64-bit integer"), "{e:?}");
        let mut s = ColumnBuilder::new(ColumnType::Utf8, 1);
        assert!(s.append(&[0xFF, 0xFE], Encoding::String).is_err());
        let mut u = ColumnBuilder::new(ColumnType::UInt8, 1);
        assert!(u.append(b"256", Encoding::String).is_err());
        u.append(b"255", Encoding::String).unwrap();
        b.append_null();
        assert_eq!(b.finish().null_count(), 1);
    }

    #[test]
    fn arrays_and_literals_give_values() {
        let strings = StringArray::from(vec![Some("a"), None]);
        assert_eq!(array_value(&strings, 0), Some(Value::Text("a")));
        assert_eq!(array_value(&strings, 1), None);
        let ints = Int64Array::from(vec![7]);
        assert_eq!(array_value(&ints, 0), Some(Value::Int(7)));
        assert_eq!(
            scalar_value(&ScalarValue::UInt32(Some(3))),
            Some(Value::UInt(3))
        );
        assert_eq!(scalar_value(&ScalarValue::Int64(None)), None);
    }

    proptest! {
        #[test]
        fn every_encoding_round_trips(v in any::<i64>(), u in any::<u64>(), f in any::<f64>(), b in any::<bool>()) {
            for enc in [Encoding::String, Encoding::Binary, Encoding::Ordered] {
                let a = round_trip(Value::Int(v), ColumnType::Int64, enc);
                prop_assert_eq!(a.as_primitive::<Int64Type>().value(0), v);
                let small = v as i32;
                let a = round_trip(Value::Int(i64::from(small)), ColumnType::Int32, enc);
                prop_assert_eq!(a.as_primitive::<Int32Type>().value(0), small);
                let a = round_trip(Value::UInt(u), ColumnType::UInt64, enc);
                prop_assert_eq!(a.as_primitive::<UInt64Type>().value(0), u);
                let a = round_trip(Value::UInt(u64::from(u as u32)), ColumnType::UInt32, enc);
                prop_assert_eq!(a.as_primitive::<UInt32Type>().value(0), u as u32);
                if enc != Encoding::Ordered {
                    let a = round_trip(Value::Bool(b), ColumnType::Boolean, enc);
                    prop_assert_eq!(a.as_boolean().value(0), b);
                    let a = round_trip(Value::Float(f), ColumnType::Float64, enc);
                    let back = a.as_primitive::<Float64Type>().value(0);
                    prop_assert!(back == f || (back.is_nan() && f.is_nan()));
                }
            }
        }

        #[test]
        fn ordered_encoding_sorts_as_the_numbers(a in any::<i64>(), b in any::<i64>()) {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            encode(Value::Int(a), ColumnType::Int64, Encoding::Ordered, &mut x).unwrap();
            encode(Value::Int(b), ColumnType::Int64, Encoding::Ordered, &mut y).unwrap();
            prop_assert_eq!(a.cmp(&b), x.cmp(&y));
        }
    }
}
