//! HBase's `Bytes` conversions that the shell shows or accepts: `toStringBinary` and its
//! inverse `toBytesBinary` (from [`crate::conventions`], which the other tools share),
//! `toBytes` of numbers, and the value formatters of `get`/`scan` (`'f:q:toLong'`,
//! `FORMATTER => 'toString'`).

use std::fmt;

pub use crate::conventions::{to_bytes_binary, to_string_binary};

/// `Bytes.toBytes(long)`: 8 bytes, big-endian.
pub fn to_bytes_long(value: i64) -> [u8; 8] {
    value.to_be_bytes()
}

/// `Bytes.toBytes(double)`: the IEEE 754 bits, big-endian.
pub fn to_bytes_double(value: f64) -> [u8; 8] {
    value.to_bits().to_be_bytes()
}

/// A `Bytes` method used to print cell values (and, with `FORMATTER`, row keys and
/// qualifiers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Formatter {
    /// `toStringBinary`, the default.
    ToStringBinary,
    /// `toString`: the bytes decoded as UTF-8 (invalid sequences become U+FFFD).
    ToString,
    /// `toLong`: the first 8 bytes as a big-endian signed integer.
    ToLong,
    /// `toInt`: the first 4 bytes as a big-endian signed integer.
    ToInt,
    /// `toShort`: the first 2 bytes as a big-endian signed integer.
    ToShort,
    /// `toDouble`: the first 8 bytes as an IEEE 754 double.
    ToDouble,
    /// `toFloat`: the first 4 bytes as an IEEE 754 float.
    ToFloat,
    /// `toBoolean`: exactly one byte, `false` when it is 0.
    ToBoolean,
    /// `toHex`: lowercase hexadecimal.
    ToHex,
}

/// The fully qualified `Bytes` class, accepted in `c(...)` formatter specifications.
const BYTES_CLASS: &str = "org.apache.hadoop.hbase.util.Bytes";

impl Formatter {
    /// Every formatter, in the order help texts list them.
    pub const ALL: [Formatter; 9] = [
        Formatter::ToStringBinary,
        Formatter::ToString,
        Formatter::ToLong,
        Formatter::ToInt,
        Formatter::ToShort,
        Formatter::ToDouble,
        Formatter::ToFloat,
        Formatter::ToBoolean,
        Formatter::ToHex,
    ];

    /// The Java method name.
    pub fn name(self) -> &'static str {
        match self {
            Formatter::ToStringBinary => "toStringBinary",
            Formatter::ToString => "toString",
            Formatter::ToLong => "toLong",
            Formatter::ToInt => "toInt",
            Formatter::ToShort => "toShort",
            Formatter::ToDouble => "toDouble",
            Formatter::ToFloat => "toFloat",
            Formatter::ToBoolean => "toBoolean",
            Formatter::ToHex => "toHex",
        }
    }

    /// Parses a formatter as HBase writes it: a `Bytes` method name (`toLong`), or
    /// `c(org.apache.hadoop.hbase.util.Bytes).toLong` (other classes are not available).
    pub fn parse(text: &str) -> Option<Formatter> {
        let method = match text.strip_prefix("c(") {
            Some(rest) => {
                let (class, method) = rest.split_once(").")?;
                if class != BYTES_CLASS && class != "Bytes" {
                    return None;
                }
                method
            }
            None => text,
        };
        Formatter::ALL
            .into_iter()
            .find(|formatter| formatter.name() == method)
    }

    /// Formats `bytes`, or fails as the Java method would on a too-short array.
    pub fn format(self, bytes: &[u8]) -> Result<String, FormatError> {
        let error = |needed: usize| FormatError {
            formatter: self,
            length: bytes.len(),
            needed,
        };
        match self {
            Formatter::ToStringBinary => Ok(to_string_binary(bytes)),
            Formatter::ToString => Ok(String::from_utf8_lossy(bytes).into_owned()),
            Formatter::ToHex => Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect()),
            Formatter::ToBoolean => match bytes {
                [byte] => Ok((*byte != 0).to_string()),
                _ => Err(error(1)),
            },
            Formatter::ToLong => prefix::<8>(bytes)
                .map(|b| i64::from_be_bytes(b).to_string())
                .ok_or(error(8)),
            Formatter::ToInt => prefix::<4>(bytes)
                .map(|b| i32::from_be_bytes(b).to_string())
                .ok_or(error(4)),
            Formatter::ToShort => prefix::<2>(bytes)
                .map(|b| i16::from_be_bytes(b).to_string())
                .ok_or(error(2)),
            Formatter::ToDouble => prefix::<8>(bytes)
                .map(|b| java_double_to_string(f64::from_be_bytes(b)))
                .ok_or(error(8)),
            Formatter::ToFloat => prefix::<4>(bytes)
                .map(|b| java_float_to_string(f32::from_be_bytes(b)))
                .ok_or(error(4)),
        }
    }
}

impl fmt::Display for Formatter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn prefix<const N: usize>(bytes: &[u8]) -> Option<[u8; N]> {
    bytes.get(..N).and_then(|head| head.try_into().ok())
}

/// A formatter could not read a value: the array is too short (or, for `toBoolean`, not
/// exactly one byte long).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatError {
    /// The formatter that failed.
    pub formatter: Formatter,
    /// The length of the value.
    pub length: usize,
    /// The length the formatter needs.
    pub needed: usize,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.formatter == Formatter::ToBoolean {
            write!(f, "Array has wrong size: {}", self.length)
        } else {
            write!(
                f,
                "offset (0) + length ({}) exceed the capacity of the array: {}",
                self.needed, self.length
            )
        }
    }
}

impl std::error::Error for FormatError {}

/// `Double.toString` as Java prints it: `1.5`, `100.0`, `1.0E10`, `1.0E-5`, `NaN`.
pub fn java_double_to_string(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-Infinity" } else { "Infinity" }.to_owned();
    }
    shortest_decimal(&format!("{value:e}"), -3..7, |exponent| {
        format!("E{exponent}")
    })
}

/// `Float.toString` as Java prints it.
pub fn java_float_to_string(value: f32) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-Infinity" } else { "Infinity" }.to_owned();
    }
    shortest_decimal(&format!("{value:e}"), -3..7, |exponent| {
        format!("E{exponent}")
    })
}

/// A finite float in decimal from Rust's shortest scientific form (`-1.25e3`): plain
/// notation when the decimal exponent is in `plain`, else `d.ddd` followed by the exponent
/// as `exponent_text` writes it. There is always a fractional digit (`100.0`, `1.0E10`), as
/// in Java and Ruby.
pub(crate) fn shortest_decimal(
    scientific: &str,
    plain: std::ops::Range<i32>,
    exponent_text: impl Fn(i32) -> String,
) -> String {
    let negative = scientific.starts_with('-');
    let unsigned = scientific.trim_start_matches('-');
    let (mantissa, exponent) = unsigned.split_once('e').unwrap_or((unsigned, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if digits.chars().all(|digit| digit == '0') {
        return format!("{sign}0.0");
    }
    if plain.contains(&exponent) {
        let point = exponent + 1;
        let text = if point <= 0 {
            let zeros = "0".repeat(usize::try_from(-point).unwrap_or(0));
            format!("0.{zeros}{digits}")
        } else {
            let point = usize::try_from(point).unwrap_or(0);
            let integer: String = digits.chars().take(point).collect();
            let padding = "0".repeat(point.saturating_sub(digits.len()));
            let fraction: String = digits.chars().skip(point).collect();
            let fraction = if fraction.is_empty() {
                "0".to_owned()
            } else {
                fraction
            };
            format!("{integer}{padding}.{fraction}")
        };
        format!("{sign}{text}")
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}{}", exponent_text(exponent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatters_read_like_java() {
        assert_eq!(
            Formatter::ToLong.format(&42i64.to_be_bytes()),
            Ok("42".to_owned())
        );
        assert_eq!(
            Formatter::ToLong.format(&(-1i64).to_be_bytes()),
            Ok("-1".to_owned())
        );
        assert_eq!(
            Formatter::ToInt.format(&[0, 0, 1, 0, 9]),
            Ok("256".to_owned())
        );
        assert_eq!(
            Formatter::ToShort.format(&[0xFF, 0xFE]),
            Ok("-2".to_owned())
        );
        assert_eq!(Formatter::ToBoolean.format(&[0]), Ok("false".to_owned()));
        assert_eq!(Formatter::ToBoolean.format(&[0xFF]), Ok("true".to_owned()));
        assert_eq!(
            Formatter::ToHex.format(&[0xAB, 0x01]),
            Ok("ab01".to_owned())
        );
        assert_eq!(
            Formatter::ToString.format("é\\".as_bytes()),
            Ok("é\\".to_owned())
        );
        assert_eq!(
            Formatter::ToDouble.format(&to_bytes_double(1.5)),
            Ok("1.5".to_owned())
        );
        let error = Formatter::ToLong.format(b"abc");
        assert_eq!(
            error.map_err(|error| error.to_string()),
            Err("offset (0) + length (8) exceed the capacity of the array: 3".to_owned())
        );
        let error = Formatter::ToBoolean
            .format(b"ab")
            .map_err(|error| error.to_string());
        assert_eq!(error, Err("Array has wrong size: 2".to_owned()));
    }

    #[test]
    fn formatter_names_parse() {
        assert_eq!(Formatter::parse("toLong"), Some(Formatter::ToLong));
        assert_eq!(
            Formatter::parse("c(org.apache.hadoop.hbase.util.Bytes).toInt"),
            Some(Formatter::ToInt)
        );
        assert_eq!(Formatter::parse("c(com.example.Mine).format"), None);
        assert_eq!(Formatter::parse("tolong"), None);
    }

    #[test]
    fn doubles_print_like_java() {
        let cases: [(f64, &str); 12] = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (100.0, "100.0"),
            (1.5, "1.5"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1234567.0, "1234567.0"),
            (12345678.0, "1.2345678E7"),
            (1e10, "1.0E10"),
            (-2.5e-7, "-2.5E-7"),
            (f64::NAN, "NaN"),
        ];
        for (value, expected) in cases {
            assert_eq!(java_double_to_string(value), expected, "{value}");
        }
        assert_eq!(java_double_to_string(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(java_float_to_string(0.1), "0.1");
    }
}
