//! Lexer: shell text to tokens, Ruby's rules for the subset the HBase shell uses.
//!
//! The lexer never stops at an error: a bad token becomes [`TokenKind::Error`] and lexing goes
//! on after it (a string with a bad escape still ends at its closing quote), so the parser can
//! report the error and resume at the next statement. A token or comment that holds input
//! that was not UTF-8 (see [`SourceText`](super::SourceText)) is such an error too.

use super::error::{SyntaxError, SyntaxErrorKind, UnsupportedSyntax};
use super::span::Span;

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// The kinds of token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    /// A quoted string literal, as bytes (double-quoted escapes may produce any byte).
    Str(Vec<u8>),
    Int(i64),
    Float(f64),
    /// A name starting with a lowercase letter or `_` (command names, `true`, `nil`...).
    Ident(String),
    /// A name starting with an uppercase letter (`VERSIONS`, `Bytes`).
    Const(String),
    Comma,
    FatArrow,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Dot,
    /// `:` (only lexed to explain symbols and `KEY: value` labels).
    Colon,
    /// `=` (only lexed to explain that assignment is not supported).
    Assign,
    Semicolon,
    Newline,
    Error(SyntaxError),
}

impl TokenKind {
    /// The token as Ruby names it in "syntax error, unexpected ..." messages.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Str(_) => "string literal".to_owned(),
            TokenKind::Int(_) => "integer literal".to_owned(),
            TokenKind::Float(_) => "float literal".to_owned(),
            TokenKind::Ident(name) => format!("local variable or method `{name}'"),
            TokenKind::Const(name) => format!("constant {name}"),
            TokenKind::Comma => "','".to_owned(),
            TokenKind::FatArrow => "'=>'".to_owned(),
            TokenKind::LParen => "'('".to_owned(),
            TokenKind::RParen => "')'".to_owned(),
            TokenKind::LBracket => "'['".to_owned(),
            TokenKind::RBracket => "']'".to_owned(),
            TokenKind::LBrace => "'{'".to_owned(),
            TokenKind::RBrace => "'}'".to_owned(),
            TokenKind::Dot => "'.'".to_owned(),
            TokenKind::Colon => "':'".to_owned(),
            TokenKind::Assign => "'='".to_owned(),
            TokenKind::Semicolon => "';'".to_owned(),
            TokenKind::Newline => "end-of-line".to_owned(),
            TokenKind::Error(_) => "invalid token".to_owned(),
        }
    }
}

/// Splits `source` into tokens. Comments, spaces and backslash-newline continuations are
/// dropped; newlines are kept (they end statements). `invalid_utf8` are the spans (in order)
/// of replacement characters that stand for bytes that were not UTF-8: the token or comment
/// holding one becomes an [`SyntaxErrorKind::InvalidUtf8`] error.
pub(crate) fn tokenize(source: &str, invalid_utf8: &[Span]) -> Vec<Token> {
    let mut lexer = Lexer::new(source, invalid_utf8);
    lexer.run();
    lexer.tokens
}

/// Whether `source` ends with a backslash-newline line continuation (outside strings and
/// comments), followed by nothing but blanks: the statement goes on in the next line.
pub(crate) fn ends_with_line_continuation(source: &str) -> bool {
    let mut lexer = Lexer::new(source, &[]);
    lexer.run();
    let rest = lexer.continuation_end.and_then(|end| source.get(end..));
    rest.is_some_and(|rest| rest.trim_matches([' ', '\t', '\r']).is_empty())
}

struct Lexer<'a> {
    source: &'a str,
    bytes: &'a [u8],
    /// Replacement characters standing for input that was not UTF-8, in order.
    invalid_utf8: &'a [Span],
    offset: usize,
    tokens: Vec<Token>,
    /// The offset just after the last backslash-newline continuation.
    continuation_end: Option<usize>,
}

impl<'a> Lexer<'a> {
    fn new(source: &'a str, invalid_utf8: &'a [Span]) -> Lexer<'a> {
        Lexer {
            source,
            bytes: source.as_bytes(),
            invalid_utf8,
            offset: 0,
            tokens: Vec::new(),
            continuation_end: None,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.offset).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.offset + ahead).copied()
    }

    /// The character at the current offset (the offset is always on a char boundary).
    fn peek_char(&self) -> Option<char> {
        self.source
            .get(self.offset..)
            .and_then(|rest| rest.chars().next())
    }

    /// Adds the token that spans from `start` to the current offset; if it holds input that
    /// was not UTF-8, an error in its place.
    fn push(&mut self, kind: TokenKind, start: usize) {
        let kind = match self.first_invalid_utf8(start) {
            Some(invalid) => self.error(SyntaxErrorKind::InvalidUtf8, invalid),
            None => kind,
        };
        self.tokens.push(Token {
            kind,
            span: Span::new(start, self.offset),
        });
    }

    /// The first replacement for invalid UTF-8 between `start` and the current offset.
    fn first_invalid_utf8(&self, start: usize) -> Option<Span> {
        let first_after = self
            .invalid_utf8
            .partition_point(|invalid| invalid.start < start);
        self.invalid_utf8
            .get(first_after)
            .filter(|invalid| invalid.start < self.offset)
            .copied()
    }

    fn error(&self, kind: SyntaxErrorKind, span: Span) -> TokenKind {
        TokenKind::Error(SyntaxError::new(kind, span, self.source))
    }

    fn run(&mut self) {
        while let Some(byte) = self.peek() {
            let start = self.offset;
            match byte {
                b' ' | b'\t' | b'\r' | 0x0C => self.offset += 1,
                b'\n' => {
                    self.offset += 1;
                    self.push(TokenKind::Newline, start);
                }
                b'#' => {
                    self.skip_comment();
                    // Ruby reads comments as UTF-8 too.
                    if let Some(invalid) = self.first_invalid_utf8(start) {
                        let kind = self.error(SyntaxErrorKind::InvalidUtf8, invalid);
                        self.push(kind, start);
                    }
                }
                b'\\' if self.continues_line() => {}
                b'\'' => {
                    let kind = self.single_quoted();
                    self.push(kind, start);
                }
                b'"' => {
                    let kind = self.double_quoted();
                    self.push(kind, start);
                }
                b'0'..=b'9' => {
                    let kind = self.number(start);
                    self.push(kind, start);
                }
                b'-' | b'+' if self.peek_at(1).is_some_and(|next| next.is_ascii_digit()) => {
                    let kind = self.number(start);
                    self.push(kind, start);
                }
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                    let kind = self.name();
                    self.push(kind, start);
                }
                _ => {
                    let kind = self.punctuation(start);
                    self.push(kind, start);
                }
            }
        }
    }

    fn skip_comment(&mut self) {
        while let Some(byte) = self.peek() {
            if byte == b'\n' {
                break;
            }
            self.offset += 1;
        }
    }

    /// A backslash at the end of a line joins it with the next one. Returns whether it did.
    fn continues_line(&mut self) -> bool {
        let length = match (self.peek_at(1), self.peek_at(2)) {
            (Some(b'\n'), _) => 2,
            (Some(b'\r'), Some(b'\n')) => 3,
            _ => return false,
        };
        self.offset += length;
        self.continuation_end = Some(self.offset);
        true
    }

    fn punctuation(&mut self, start: usize) -> TokenKind {
        let two = (self.peek(), self.peek_at(1));
        if two == (Some(b'='), Some(b'>')) {
            self.offset += 2;
            return TokenKind::FatArrow;
        }
        let kind = match self.peek() {
            Some(b',') => TokenKind::Comma,
            Some(b'(') => TokenKind::LParen,
            Some(b')') => TokenKind::RParen,
            Some(b'[') => TokenKind::LBracket,
            Some(b']') => TokenKind::RBracket,
            Some(b'{') => TokenKind::LBrace,
            Some(b'}') => TokenKind::RBrace,
            Some(b'.') => TokenKind::Dot,
            Some(b':') => TokenKind::Colon,
            Some(b'=') => TokenKind::Assign,
            Some(b';') => TokenKind::Semicolon,
            _ => {
                let character = self.peek_char().unwrap_or('\u{FFFD}');
                self.offset += character.len_utf8().max(1);
                return self.error(
                    SyntaxErrorKind::UnexpectedCharacter { character },
                    Span::new(start, self.offset),
                );
            }
        };
        self.offset += 1;
        kind
    }

    fn name(&mut self) -> TokenKind {
        let start = self.offset;
        while self
            .peek()
            .is_some_and(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
        {
            self.offset += 1;
        }
        // Ruby method names may end in `?` or `!` (`exists?`); keep them in the name so an
        // unknown command is reported as written.
        if matches!(self.peek(), Some(b'?' | b'!')) && self.peek_at(1) != Some(b'=') {
            self.offset += 1;
        }
        let text = self.source.get(start..self.offset).unwrap_or("").to_owned();
        if text.starts_with(|first: char| first.is_ascii_uppercase()) {
            TokenKind::Const(text)
        } else {
            TokenKind::Ident(text)
        }
    }

    /// `'...'`: only `\'` and `\\` are escapes; every other byte is literal.
    fn single_quoted(&mut self) -> TokenKind {
        let start = self.offset;
        self.offset += 1;
        let mut bytes = Vec::new();
        loop {
            match self.peek() {
                None => {
                    return self.error(
                        SyntaxErrorKind::UnterminatedString { quote: '\'' },
                        Span::new(start, start + 1),
                    );
                }
                Some(b'\'') => {
                    self.offset += 1;
                    return TokenKind::Str(bytes);
                }
                Some(b'\\') if matches!(self.peek_at(1), Some(b'\'' | b'\\')) => {
                    bytes.extend(self.peek_at(1));
                    self.offset += 2;
                }
                Some(byte) => {
                    bytes.push(byte);
                    self.offset += 1;
                }
            }
        }
    }

    /// `"..."` with Ruby's escapes. On a bad escape the string is still read to its closing
    /// quote, and the first error is returned.
    fn double_quoted(&mut self) -> TokenKind {
        let start = self.offset;
        self.offset += 1;
        let mut bytes = Vec::new();
        let mut first_error: Option<TokenKind> = None;
        loop {
            match self.peek() {
                None => {
                    return self.error(
                        SyntaxErrorKind::UnterminatedString { quote: '"' },
                        Span::new(start, start + 1),
                    );
                }
                Some(b'"') => {
                    self.offset += 1;
                    return first_error.unwrap_or(TokenKind::Str(bytes));
                }
                Some(b'\\') => {
                    if let Err(error) = self.escape(&mut bytes) {
                        first_error.get_or_insert(error);
                    }
                }
                Some(b'#') if self.peek_at(1) == Some(b'{') => {
                    let error = self.error(
                        SyntaxErrorKind::Unsupported(UnsupportedSyntax::Interpolation),
                        Span::new(self.offset, self.offset + 2),
                    );
                    first_error.get_or_insert(error);
                    bytes.push(b'#');
                    self.offset += 1;
                }
                Some(byte) => {
                    bytes.push(byte);
                    self.offset += 1;
                }
            }
        }
    }

    /// One escape sequence in a double-quoted string; the offset is on the backslash.
    fn escape(&mut self, bytes: &mut Vec<u8>) -> Result<(), TokenKind> {
        let start = self.offset;
        self.offset += 1;
        let Some(byte) = self.peek() else {
            // The unterminated-string error is reported by the caller.
            return Ok(());
        };
        self.offset += 1;
        let simple = match byte {
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'e' => Some(0x1B),
            b's' => Some(b' '),
            b'v' => Some(0x0B),
            b'f' => Some(0x0C),
            _ => None,
        };
        if let Some(value) = simple {
            bytes.push(value);
            return Ok(());
        }
        match byte {
            b'\n' => Ok(()),
            b'0'..=b'7' => {
                // Up to three octal digits; Ruby keeps the low 8 bits ("\400" is "\x00").
                let mut value = u32::from(byte - b'0');
                for _ in 0..2 {
                    match self.peek() {
                        Some(digit @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(digit - b'0');
                            self.offset += 1;
                        }
                        _ => break,
                    }
                }
                bytes.push((value & 0xFF) as u8);
                Ok(())
            }
            b'x' => {
                let mut value: u8 = 0;
                let mut digits = 0;
                while digits < 2 {
                    match self.peek().and_then(|digit| (digit as char).to_digit(16)) {
                        Some(digit) => {
                            value = value * 16 + digit as u8;
                            self.offset += 1;
                            digits += 1;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    return Err(self.invalid_escape(start, "invalid hex escape"));
                }
                bytes.push(value);
                Ok(())
            }
            b'u' => self.unicode_escape(start, bytes),
            b'c' | b'C' | b'M' => {
                Err(self.invalid_escape(start, "control and meta escapes are not supported"))
            }
            _ => {
                // Ruby drops the backslash of an unknown escape (`\q` is `q`, `\"` is `"`).
                // The escaped character may be multi-byte: copy all of it.
                let char_start = self.offset - 1;
                let character = self
                    .source
                    .get(char_start..)
                    .and_then(|rest| rest.chars().next());
                let length = character.map_or(1, char::len_utf8);
                bytes.extend_from_slice(
                    self.bytes
                        .get(char_start..char_start + length)
                        .unwrap_or(&[]),
                );
                self.offset = char_start + length;
                Ok(())
            }
        }
    }

    /// `\uXXXX` or `\u{X ...}` (one or more code points), encoded as UTF-8.
    fn unicode_escape(&mut self, start: usize, bytes: &mut Vec<u8>) -> Result<(), TokenKind> {
        let mut code_points = Vec::new();
        if self.peek() == Some(b'{') {
            self.offset += 1;
            loop {
                while self.peek() == Some(b' ') {
                    self.offset += 1;
                }
                if self.peek() == Some(b'}') {
                    self.offset += 1;
                    break;
                }
                let digits = self.hex_digits(6);
                if digits.is_empty() {
                    return Err(self.invalid_escape(start, "invalid Unicode escape"));
                }
                code_points.push(digits);
            }
            if code_points.is_empty() {
                return Err(self.invalid_escape(start, "invalid Unicode escape"));
            }
        } else {
            let digits = self.hex_digits(4);
            if digits.len() != 4 {
                return Err(self.invalid_escape(start, "invalid Unicode escape"));
            }
            code_points.push(digits);
        }
        for digits in code_points {
            let value = u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32);
            let Some(character) = value else {
                return Err(self.invalid_escape(start, "invalid Unicode codepoint"));
            };
            let mut buffer = [0u8; 4];
            bytes.extend_from_slice(character.encode_utf8(&mut buffer).as_bytes());
        }
        Ok(())
    }

    fn hex_digits(&mut self, max: usize) -> String {
        let mut digits = String::new();
        while digits.len() < max {
            match self.peek() {
                Some(digit) if digit.is_ascii_hexdigit() => {
                    digits.push(digit as char);
                    self.offset += 1;
                }
                _ => break,
            }
        }
        digits
    }

    fn invalid_escape(&self, start: usize, reason: &'static str) -> TokenKind {
        let escape = self
            .source
            .get(start..self.offset)
            .unwrap_or("\\")
            .to_owned();
        self.error(
            SyntaxErrorKind::InvalidEscape { escape, reason },
            Span::new(start, self.offset),
        )
    }

    /// An integer or float literal, optionally signed: Ruby's `0x`, `0b`, `0o`, `0d`
    /// prefixes, leading-zero octal, `_` between digits, and `1.5e-3` floats.
    fn number(&mut self, start: usize) -> TokenKind {
        let negative = self.peek() == Some(b'-');
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.offset += 1;
        }
        let radix = match (
            self.peek(),
            self.peek_at(1).map(|byte| byte.to_ascii_lowercase()),
        ) {
            (Some(b'0'), Some(b'x')) => Some(16),
            (Some(b'0'), Some(b'b')) => Some(2),
            (Some(b'0'), Some(b'o')) => Some(8),
            (Some(b'0'), Some(b'd')) => Some(10),
            (Some(b'0'), Some(b'0'..=b'9' | b'_')) => Some(8),
            _ => None,
        };
        let result = match radix {
            Some(radix) => {
                // Leading-zero octal has no letter to skip.
                let has_letter = self
                    .peek_at(1)
                    .is_some_and(|byte| byte.is_ascii_alphabetic());
                if has_letter {
                    self.offset += 2;
                }
                self.integer_digits(radix).and_then(|digits| {
                    if digits.is_empty() && has_letter {
                        Err("numeric literal without digits")
                    } else {
                        Ok(digits)
                    }
                })
            }
            None => self.integer_digits(10),
        };
        let mut text = match result {
            Ok(digits) => digits,
            Err(reason) => return self.bad_number(start, reason),
        };
        let mut is_float = false;
        if radix.is_none() {
            if self.peek() == Some(b'.')
                && self.peek_at(1).is_some_and(|byte| byte.is_ascii_digit())
            {
                self.offset += 1;
                match self.integer_digits(10) {
                    Ok(fraction) => {
                        text.push('.');
                        text.push_str(&fraction);
                        is_float = true;
                    }
                    Err(reason) => return self.bad_number(start, reason),
                }
            }
            if matches!(self.peek(), Some(b'e' | b'E')) {
                let sign = matches!(self.peek_at(1), Some(b'+' | b'-'));
                let digit_at = if sign { 2 } else { 1 };
                if self
                    .peek_at(digit_at)
                    .is_some_and(|byte| byte.is_ascii_digit())
                {
                    let sign_text = if sign {
                        self.peek_at(1).map(char::from)
                    } else {
                        None
                    };
                    self.offset += digit_at;
                    match self.integer_digits(10) {
                        Ok(exponent) => {
                            text.push('e');
                            text.extend(sign_text);
                            text.push_str(&exponent);
                            is_float = true;
                        }
                        Err(reason) => return self.bad_number(start, reason),
                    }
                }
            }
        }
        if let Some(next) = self
            .peek()
            .filter(|byte| byte.is_ascii_alphanumeric() || *byte == b'_')
        {
            let reason = if radix == Some(8) && next.is_ascii_digit() {
                "Invalid octal digit"
            } else {
                "invalid numeric literal"
            };
            return self.bad_number(start, reason);
        }
        if is_float {
            let signed = if negative { format!("-{text}") } else { text };
            return match signed.parse::<f64>() {
                Ok(value) if value.is_finite() => TokenKind::Float(value),
                _ => self.bad_number(start, "float out of range"),
            };
        }
        let magnitude = u128::from_str_radix(
            if text.is_empty() { "0" } else { &text },
            radix.unwrap_or(10),
        );
        let value = magnitude.ok().and_then(|magnitude| {
            let signed = i128::try_from(magnitude).ok()?;
            i64::try_from(if negative { -signed } else { signed }).ok()
        });
        match value {
            Some(value) => TokenKind::Int(value),
            None => {
                let literal = self.source.get(start..self.offset).unwrap_or("").to_owned();
                self.error(
                    SyntaxErrorKind::IntegerOutOfRange { text: literal },
                    Span::new(start, self.offset),
                )
            }
        }
    }

    /// Digits of `radix` with single `_` separators between them; returns the digits without
    /// separators. Stops at the first byte that is neither.
    fn integer_digits(&mut self, radix: u32) -> Result<String, &'static str> {
        let mut digits = String::new();
        let mut last_was_underscore = false;
        loop {
            match self.peek() {
                Some(b'_') => {
                    if digits.is_empty() || last_was_underscore {
                        return Err("numeric literal with misplaced `_'");
                    }
                    last_was_underscore = true;
                    self.offset += 1;
                }
                Some(byte) if (byte as char).is_digit(radix) => {
                    digits.push(byte as char);
                    last_was_underscore = false;
                    self.offset += 1;
                }
                _ => break,
            }
        }
        if last_was_underscore {
            return Err("trailing `_' in number");
        }
        Ok(digits)
    }

    fn bad_number(&mut self, start: usize, reason: &'static str) -> TokenKind {
        while self
            .peek()
            .is_some_and(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
        {
            self.offset += 1;
        }
        let text = self.source.get(start..self.offset).unwrap_or("").to_owned();
        self.error(
            SyntaxErrorKind::InvalidNumber { text, reason },
            Span::new(start, self.offset),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(source: &str) -> Vec<TokenKind> {
        tokenize(source, &[])
            .into_iter()
            .map(|token| token.kind)
            .collect()
    }

    fn string(source: &str) -> Vec<u8> {
        match kinds(source).as_slice() {
            [TokenKind::Str(bytes)] => bytes.clone(),
            other => panic!("expected one string token for {source:?}, got {other:?}"),
        }
    }

    fn error(source: &str) -> SyntaxErrorKind {
        kinds(source)
            .into_iter()
            .find_map(|kind| match kind {
                TokenKind::Error(error) => Some(error.kind),
                _ => None,
            })
            .unwrap_or_else(|| panic!("expected an error token for {source:?}"))
    }

    #[test]
    fn single_quotes_are_literal_except_quote_and_backslash() {
        assert_eq!(string(r"'a\'b'"), b"a'b");
        assert_eq!(string(r"'a\\b'"), b"a\\b");
        assert_eq!(string(r"'\x41\n'"), b"\\x41\\n");
        assert_eq!(string("'two\nlines'"), b"two\nlines");
        assert_eq!(string("'é'"), "é".as_bytes());
    }

    #[test]
    fn double_quotes_follow_ruby_escapes() {
        assert_eq!(string(r#""\x41\x4a\xff\x7""#), b"AJ\xff\x07");
        assert_eq!(
            string(r#""\n\t\r\0\e\s\a\b\v\f""#),
            b"\n\t\r\0\x1b \x07\x08\x0b\x0c"
        );
        assert_eq!(string(r#""\\\"\'\#""#), b"\\\"'#");
        assert_eq!(string(r#""\101\0012\400""#), b"A\x012\x00");
        assert_eq!(string(r#""\u00e9\u{1F600 41}""#), "é😀A".as_bytes());
        assert_eq!(string(r#""\q\é""#), "qé".as_bytes());
        assert_eq!(string("\"a\\\nb\""), b"ab");
        assert_eq!(string(r##""#a #@b""##), b"#a #@b");
    }

    #[test]
    fn bad_escapes_are_errors_that_keep_the_string_boundary() {
        assert!(matches!(
            error(r#""\xg" 'next'"#),
            SyntaxErrorKind::InvalidEscape {
                reason: "invalid hex escape",
                ..
            }
        ));
        let tokens = kinds(r#""\xg" 'next'"#);
        assert_eq!(tokens.get(1), Some(&TokenKind::Str(b"next".to_vec())));
        assert!(matches!(
            error(r#""\u12""#),
            SyntaxErrorKind::InvalidEscape { .. }
        ));
        assert!(matches!(
            error(r#""\u{110000}""#),
            SyntaxErrorKind::InvalidEscape { .. }
        ));
        assert!(matches!(
            error(r#""\cA""#),
            SyntaxErrorKind::InvalidEscape { .. }
        ));
        assert!(matches!(
            error(r#""row#{i}""#),
            SyntaxErrorKind::Unsupported(UnsupportedSyntax::Interpolation)
        ));
    }

    #[test]
    fn unterminated_strings_point_at_the_opening_quote() {
        let tokens = tokenize("put 't', 'r", &[]);
        match tokens.last().map(|token| &token.kind) {
            Some(TokenKind::Error(error)) => {
                assert_eq!(
                    error.kind,
                    SyntaxErrorKind::UnterminatedString { quote: '\'' }
                );
                assert_eq!(error.span, Span::new(9, 10));
                assert_eq!((error.position.line, error.position.column), (1, 10));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            error("\"abc"),
            SyntaxErrorKind::UnterminatedString { quote: '"' }
        );
    }

    #[test]
    fn numbers_follow_ruby_literals() {
        assert_eq!(
            kinds("1_000 -42 +7 0x1F 0b101 0o17 017 0d99"),
            vec![
                TokenKind::Int(1000),
                TokenKind::Int(-42),
                TokenKind::Int(7),
                TokenKind::Int(31),
                TokenKind::Int(5),
                TokenKind::Int(15),
                TokenKind::Int(15),
                TokenKind::Int(99),
            ]
        );
        assert_eq!(
            kinds("1.5 -2.5e3 1e-2 1_0.2_5"),
            vec![
                TokenKind::Float(1.5),
                TokenKind::Float(-2500.0),
                TokenKind::Float(0.01),
                TokenKind::Float(10.25),
            ]
        );
        assert_eq!(
            kinds("9223372036854775807 -9223372036854775808"),
            vec![TokenKind::Int(i64::MAX), TokenKind::Int(i64::MIN),]
        );
        assert_eq!(
            kinds("1.day"),
            vec![
                TokenKind::Int(1),
                TokenKind::Dot,
                TokenKind::Ident("day".to_owned()),
            ]
        );
    }

    #[test]
    fn malformed_numbers_are_errors() {
        assert!(matches!(
            error("1_"),
            SyntaxErrorKind::InvalidNumber {
                reason: "trailing `_' in number",
                ..
            }
        ));
        assert!(matches!(
            error("1__0"),
            SyntaxErrorKind::InvalidNumber { .. }
        ));
        assert!(matches!(
            error("09"),
            SyntaxErrorKind::InvalidNumber {
                reason: "Invalid octal digit",
                ..
            }
        ));
        assert!(matches!(error("0x"), SyntaxErrorKind::InvalidNumber { .. }));
        assert!(matches!(
            error("12ab"),
            SyntaxErrorKind::InvalidNumber { .. }
        ));
        assert!(matches!(
            error("9223372036854775808"),
            SyntaxErrorKind::IntegerOutOfRange { .. }
        ));
    }

    #[test]
    fn input_that_was_not_utf8_is_an_error_where_it_is() {
        let source = crate::shell::SourceText::decode(b"put '\xE9', \"\\\xFF\" # \xFE\n\xFF list");
        let kinds: Vec<String> = tokenize(source.text(), source.invalid_utf8())
            .into_iter()
            .map(|token| match token.kind {
                TokenKind::Error(error) => format!("{:?}@{}", error.kind, error.position),
                other => other.describe(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "local variable or method `put'",
                "InvalidUtf8@1:6",
                "','",
                "InvalidUtf8@1:12",
                "InvalidUtf8@1:17",
                "end-of-line",
                "InvalidUtf8@2:1",
                "local variable or method `list'",
            ]
        );
    }

    #[test]
    fn punctuation_comments_and_continuations() {
        assert_eq!(
            kinds("{A => [1, 2]}; # comment\n( ) . : = \\\nb"),
            vec![
                TokenKind::LBrace,
                TokenKind::Const("A".to_owned()),
                TokenKind::FatArrow,
                TokenKind::LBracket,
                TokenKind::Int(1),
                TokenKind::Comma,
                TokenKind::Int(2),
                TokenKind::RBracket,
                TokenKind::RBrace,
                TokenKind::Semicolon,
                TokenKind::Newline,
                TokenKind::LParen,
                TokenKind::RParen,
                TokenKind::Dot,
                TokenKind::Colon,
                TokenKind::Assign,
                TokenKind::Ident("b".to_owned()),
            ]
        );
        assert_eq!(
            kinds("exists? 't'").first(),
            Some(&TokenKind::Ident("exists?".to_owned()))
        );
        assert!(matches!(
            error("put %w"),
            SyntaxErrorKind::UnexpectedCharacter { character: '%' }
        ));
    }
}
