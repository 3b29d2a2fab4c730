//! HBase's `Bytes.toStringBinary` / `Bytes.toBytesBinary` byte notation: printable ASCII as is,
//! every other byte as `\xNN`. Used for the binary string arguments of the language.

/// Characters `Bytes.toStringBinary` prints as themselves besides ASCII letters and digits.
const PRINTABLE_PUNCTUATION: &[u8] = b" `~!@#$%^&*()-_=+[]{}|;:'\",.<>/?";

/// True when `toStringBinary` prints `byte` as itself.
fn prints_as_itself(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || PRINTABLE_PUNCTUATION.contains(&byte)
}

/// Renders bytes as HBase's `Bytes.toStringBinary` does (uppercase hex escapes). A backslash
/// is always escaped, so [`from_string_binary`] reads the text back exactly.
pub fn to_string_binary(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len());
    for &byte in bytes {
        if prints_as_itself(byte) {
            text.push(char::from(byte));
        } else {
            text.push_str(&format!("\\x{byte:02X}"));
        }
    }
    text
}

/// Reads HBase's `Bytes.toBytesBinary` notation: `\xNN` (two hex digits, either case) is one
/// byte; any other character, a lone backslash included, stands for its UTF-8 bytes.
pub fn from_string_binary(text: &str) -> Vec<u8> {
    from_bytes_binary(text.as_bytes())
}

/// [`from_string_binary`] over bytes that need not be UTF-8: `\xNN` is one byte, every other
/// byte stands for itself.
pub fn from_bytes_binary(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if let Some(byte) = escaped_byte(bytes, index) {
            out.push(byte);
            index += 4;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    out
}

/// The byte of a `\xNN` escape starting at `index`, if there is one.
fn escaped_byte(bytes: &[u8], index: usize) -> Option<u8> {
    match bytes.get(index..index + 4)? {
        [b'\\', b'x', high, low] => Some(hex_value(*high)? << 4 | hex_value(*low)?),
        _ => None,
    }
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(from_string_binary(&to_string_binary(&all)), all);
    }

    #[test]
    fn matches_hbase_notation() {
        assert_eq!(to_string_binary(b"a\x00\\b\xff'"), "a\\x00\\x5Cb\\xFF'");
        assert_eq!(from_string_binary("\\x0a\\xZZ\\"), b"\n\\xZZ\\".to_vec());
        assert_eq!(from_string_binary("é"), "é".as_bytes().to_vec());
    }
}
