//! Input bytes to the text the lexer reads, remembering where the bytes were not UTF-8.
//!
//! A script from standard input is bytes. Ruby reads it as UTF-8 and rejects, statement by
//! statement, what is not: binary bytes belong in `\xNN` escapes of double-quoted strings.
//! [`SourceText::decode`] turns each invalid sequence into U+FFFD (as
//! `String::from_utf8_lossy` does) and keeps its span, so that the lexer can turn it into an
//! error in the statement that holds it while the other statements run.

use super::span::Span;

/// Shell input as text, with the spans of the replaced invalid UTF-8 sequences.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceText {
    text: String,
    /// Each replacement character that stands for invalid bytes, in order.
    invalid_utf8: Vec<Span>,
}

impl SourceText {
    /// Decodes `bytes`, replacing each maximal invalid UTF-8 sequence with U+FFFD.
    pub fn decode(bytes: &[u8]) -> SourceText {
        let mut text = String::with_capacity(bytes.len());
        let mut invalid_utf8 = Vec::new();
        for chunk in bytes.utf8_chunks() {
            text.push_str(chunk.valid());
            if !chunk.invalid().is_empty() {
                let start = text.len();
                text.push(char::REPLACEMENT_CHARACTER);
                invalid_utf8.push(Span::new(start, text.len()));
            }
        }
        SourceText { text, invalid_utf8 }
    }

    /// The decoded text; spans of errors and statements refer to it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where the input was not UTF-8: one replacement character each, in order.
    pub fn invalid_utf8(&self) -> &[Span] {
        &self.invalid_utf8
    }
}

impl From<&str> for SourceText {
    fn from(text: &str) -> SourceText {
        SourceText {
            text: text.to_owned(),
            invalid_utf8: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_invalid_sequence_becomes_one_remembered_replacement() {
        let source = SourceText::decode(b"a\xE9b\xF0\x9F\nc\xEF\xBF\xBD");
        assert_eq!(source.text(), "a\u{FFFD}b\u{FFFD}\nc\u{FFFD}");
        // The last replacement character was valid input: it is not remembered.
        assert_eq!(source.invalid_utf8(), [Span::new(1, 4), Span::new(5, 8)]);
        assert_eq!(SourceText::decode(b"put 't'"), SourceText::from("put 't'"));
    }
}
