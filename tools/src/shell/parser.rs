//! Parser: tokens to [`Call`]s, one per statement.
//!
//! Statements end at a newline, a `;` or the end of the input. A newline does not end a
//! statement while a `(`, `[` or `{` is open, or right after a `,`, `=>` or `.` (Ruby
//! continues the expression on the next line). After an error the parser skips to the end of
//! the statement and goes on with the next one.

use super::ast::{Call, Value, ValueKind, ruby_float_to_s};
use super::bytes::{to_bytes_binary, to_bytes_double, to_bytes_long};
use super::error::{
    Expected, NameError, NameErrorKind, ShellError, SyntaxError, SyntaxErrorKind,
    UnsupportedSyntax, closing_bracket,
};
use super::lexer::{Token, TokenKind, ends_with_line_continuation, tokenize};
use super::span::Span;

/// Parses every statement of `source`. Empty statements (blank lines, comments) yield
/// nothing; each other statement yields its [`Call`] or the first error in it.
pub fn parse_calls(source: &str) -> Vec<Result<Call, ShellError>> {
    parse_calls_marked(source, &[])
}

/// [`parse_calls`] for text decoded from bytes: a statement holding one of the
/// `invalid_utf8` spans fails with [`SyntaxErrorKind::InvalidUtf8`].
pub(crate) fn parse_calls_marked(
    source: &str,
    invalid_utf8: &[Span],
) -> Vec<Result<Call, ShellError>> {
    let tokens = significant_tokens(tokenize(source, invalid_utf8));
    let mut parser = Parser {
        source,
        tokens,
        position: 0,
        nesting: 0,
    };
    parser.statements()
}

/// Whether `source` ends in the middle of a statement: inside a string, inside an open
/// bracket, or right after a `,`, `=>`, `.` or a trailing backslash. An interactive shell
/// reads another line instead of running the input.
pub fn needs_more_input(source: &str) -> bool {
    let tokens = tokenize(source, &[]);
    let mut depth: usize = 0;
    for token in &tokens {
        match token.kind {
            TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => depth += 1,
            TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    if depth > 0 {
        return true;
    }
    if ends_with_line_continuation(source) {
        return true;
    }
    let last = tokens
        .iter()
        .rev()
        .find(|token| token.kind != TokenKind::Newline);
    match last.map(|token| &token.kind) {
        Some(TokenKind::Error(error)) => match error.kind {
            SyntaxErrorKind::UnterminatedString { .. } => true,
            // A backslash typed last: the line continues once the newline comes.
            SyntaxErrorKind::UnexpectedCharacter { character: '\\' } => {
                source.trim_end_matches([' ', '\t', '\r']).ends_with('\\')
            }
            _ => false,
        },
        Some(TokenKind::Comma | TokenKind::FatArrow | TokenKind::Dot) => true,
        _ => false,
    }
}

/// Drops the newlines that do not end a statement: those inside brackets and those right
/// after a token that continues the expression.
fn significant_tokens(tokens: Vec<Token>) -> Vec<Token> {
    let mut kept: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut depth: usize = 0;
    for token in tokens {
        match token.kind {
            TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => depth += 1,
            TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                depth = depth.saturating_sub(1);
            }
            TokenKind::Newline => {
                let continues = kept.last().is_some_and(|previous| {
                    matches!(
                        previous.kind,
                        TokenKind::Comma
                            | TokenKind::FatArrow
                            | TokenKind::Dot
                            | TokenKind::Newline
                    )
                });
                if depth > 0 || continues {
                    continue;
                }
            }
            _ => {}
        }
        kept.push(token);
    }
    kept
}

/// A Ruby method name as a command on a table reference takes it: lowercase words.
fn is_method_name(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
}

/// The prefix of `Bytes` when written fully qualified.
const BYTES_PACKAGE: &str = "org.apache.hadoop.hbase.util.";

/// How deeply arrays, hashes and method calls (`Bytes.toBytes(...)`) may nest, together.
/// The parser recurses once per level; the bound keeps hostile input from exhausting the
/// stack.
pub const MAX_NESTING_DEPTH: usize = 32;

struct Parser<'a> {
    source: &'a str,
    tokens: Vec<Token>,
    position: usize,
    /// Arrays, hashes and method-call parentheses open around the current token.
    nesting: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.position)
    }

    fn peek_kind(&self) -> Option<&TokenKind> {
        self.peek().map(|token| &token.kind)
    }

    fn advance(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.position).cloned();
        if token.is_some() {
            self.position += 1;
        }
        token
    }

    fn at_statement_end(&self) -> bool {
        matches!(
            self.peek_kind(),
            None | Some(TokenKind::Newline | TokenKind::Semicolon)
        )
    }

    fn end_span(&self) -> Span {
        Span::at(self.source.len())
    }

    fn syntax(&self, kind: SyntaxErrorKind, span: Span) -> ShellError {
        ShellError::from(SyntaxError::new(kind, span, self.source))
    }

    /// "unexpected <next token>, expecting <expected>", at the next token (or the end).
    fn unexpected_next(&self, expected: Expected) -> ShellError {
        match self.peek() {
            Some(Token {
                kind: TokenKind::Error(error),
                ..
            }) => ShellError::from(error.clone()),
            Some(token) => self.syntax(
                SyntaxErrorKind::Unexpected {
                    found: token.kind.describe(),
                    expected,
                },
                token.span,
            ),
            None => self.syntax(
                SyntaxErrorKind::Unexpected {
                    found: "end-of-input".to_owned(),
                    expected,
                },
                self.end_span(),
            ),
        }
    }

    fn statements(&mut self) -> Vec<Result<Call, ShellError>> {
        let mut results = Vec::new();
        loop {
            while matches!(
                self.peek_kind(),
                Some(TokenKind::Newline | TokenKind::Semicolon)
            ) {
                self.position += 1;
            }
            if self.peek().is_none() {
                return results;
            }
            let start = self.position;
            let result = self.statement();
            if result.is_err() {
                self.skip_statement(start);
            }
            results.push(result);
        }
    }

    /// Moves past the statement that began at token `start`: to the first `;` or newline
    /// after the current position that is not inside brackets opened in the statement.
    fn skip_statement(&mut self, start: usize) {
        let mut depth: usize = 0;
        let mut index = start;
        while let Some(token) = self.tokens.get(index) {
            match token.kind {
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => depth += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    depth = depth.saturating_sub(1);
                }
                TokenKind::Newline | TokenKind::Semicolon
                    if depth == 0 && index >= self.position =>
                {
                    break;
                }
                _ => {}
            }
            index += 1;
        }
        self.position = index;
    }

    fn statement(&mut self) -> Result<Call, ShellError> {
        let (name, name_token) = match self.peek() {
            Some(
                token @ Token {
                    kind: TokenKind::Ident(name),
                    ..
                },
            ) => (name.clone(), token.clone()),
            _ => return Err(self.unexpected_next(Expected::CommandName)),
        };
        self.position += 1;
        match self.peek() {
            Some(Token {
                kind: TokenKind::Assign,
                span,
            }) => {
                // `t = get_table 't'`: the right side is a command; which commands may be
                // assigned is checked with the command's arguments.
                let assign = *span;
                self.position += 1;
                let mut call = self.statement()?;
                if call.assign_to.is_some() {
                    return Err(self.syntax(
                        SyntaxErrorKind::Unsupported(UnsupportedSyntax::Assignment),
                        assign,
                    ));
                }
                call.span = name_token.span.to(call.span);
                call.assign_to = Some((name, name_token.span));
                return Ok(call);
            }
            Some(Token {
                kind: TokenKind::Dot,
                ..
            }) => {
                let (path, span) = self.dotted_path(&name, name_token.span)?;
                // `t.put ...`: a command on the table reference held by variable `t`.
                let method = path
                    .strip_prefix(&format!("{name}."))
                    .filter(|method| is_method_name(method));
                return match method {
                    Some(method) => {
                        let method_span = Span::new(span.end - method.len(), span.end);
                        let mut call = self.call_arguments(method.to_owned(), method_span)?;
                        call.span = name_token.span.to(call.span);
                        call.receiver = Some((name, name_token.span));
                        Ok(call)
                    }
                    None => Err(self.unsupported_call(&path, span)),
                };
            }
            _ => {}
        }
        self.call_arguments(name, name_token.span)
    }

    /// The arguments of a command named `name` (already read), to the end of the statement:
    /// `name arg, arg` or `name(arg, arg)`.
    fn call_arguments(&mut self, name: String, name_span: Span) -> Result<Call, ShellError> {
        let args = if self.peek_kind() == Some(&TokenKind::LParen) {
            let open = self.advance().map_or(self.end_span(), |token| token.span);
            self.list(Some(('(', open)), true)?
        } else {
            self.list(None, true)?
        };
        if !self.at_statement_end() {
            return Err(self.unexpected_next(Expected::ArgumentSeparator));
        }
        let end = self
            .tokens
            .get(self.position.wrapping_sub(1))
            .map_or(name_span, |t| t.span);
        Ok(Call {
            name,
            name_span,
            args,
            span: name_span.to(end),
            receiver: None,
            assign_to: None,
        })
    }

    /// A comma-separated list of values up to the closing bracket of `open` (consumed), or
    /// up to the end of the statement when `open` is `None`. With `allow_pairs`, trailing
    /// `KEY => value` items are collected into one hash value.
    fn list(
        &mut self,
        open: Option<(char, Span)>,
        allow_pairs: bool,
    ) -> Result<Vec<Value>, ShellError> {
        let close = open.map(|(bracket, _)| closing_token(bracket));
        let mut items = Vec::new();
        let mut pairs: Vec<(Value, Value)> = Vec::new();
        loop {
            if let Some(close) = &close {
                if self.peek_kind() == Some(close) {
                    break;
                }
            } else if self.at_statement_end() && items.is_empty() && pairs.is_empty() {
                break;
            }
            if let (None, Some((bracket, span))) = (self.peek(), open) {
                return Err(self.syntax(SyntaxErrorKind::UnclosedBracket { open: bracket }, span));
            }
            let item = self.value()?;
            if allow_pairs && self.peek_kind() == Some(&TokenKind::FatArrow) {
                self.position += 1;
                check_key(self, &item)?;
                let value = self.value()?;
                pairs.push((item, value));
            } else if !pairs.is_empty() {
                return Err(self.syntax(
                    SyntaxErrorKind::Unexpected {
                        found: describe_value(&item.kind),
                        expected: Expected::KeyValuePair,
                    },
                    item.span,
                ));
            } else {
                items.push(item);
            }
            match self.peek_kind() {
                Some(TokenKind::Comma) => self.position += 1,
                Some(kind) if close.as_ref() == Some(kind) => break,
                _ if close.is_none() && self.at_statement_end() => break,
                None => {
                    if let Some((bracket, span)) = open {
                        return Err(
                            self.syntax(SyntaxErrorKind::UnclosedBracket { open: bracket }, span)
                        );
                    }
                    break;
                }
                _ => {
                    let expected = match open {
                        Some((bracket, _)) => Expected::CommaOrClose(closing_bracket(bracket)),
                        None => Expected::ArgumentSeparator,
                    };
                    return Err(self.unexpected_next(expected));
                }
            }
        }
        if close.is_some() {
            self.position += 1;
        }
        if let (Some((first, _)), Some((_, last))) = (pairs.first(), pairs.last()) {
            let span = first.span.to(last.span);
            items.push(Value {
                kind: ValueKind::Hash(pairs),
                span,
            });
        }
        Ok(items)
    }

    /// A value, followed by any of the conversions Ruby users append to it: `.to_s` and
    /// `.to_java_bytes` (which change nothing a shell argument can tell apart, except that
    /// `.to_s` makes a number its decimal text). Other method calls are unsupported.
    fn value(&mut self) -> Result<Value, ShellError> {
        let mut value = self.plain_value()?;
        while self.peek_kind() == Some(&TokenKind::Dot) {
            self.position += 1;
            let (method, method_span) = match self.peek() {
                Some(Token {
                    kind: TokenKind::Ident(name) | TokenKind::Const(name),
                    span,
                }) => (name.clone(), *span),
                _ => return Err(self.unexpected_next(Expected::MethodName)),
            };
            self.position += 1;
            let path_span = value.span.to(method_span);
            let path = self
                .source
                .get(path_span.start..path_span.end)
                .unwrap_or("value")
                .to_owned();
            value.kind = match (method.as_str(), value.kind) {
                ("to_s", ValueKind::Int(number)) => ValueKind::Str(number.to_string().into_bytes()),
                ("to_s", ValueKind::Float(number)) => {
                    ValueKind::Str(ruby_float_to_s(number).into_bytes())
                }
                ("to_s" | "to_java_bytes", kind @ (ValueKind::Str(_) | ValueKind::Const(_))) => {
                    kind
                }
                _ => return Err(self.unsupported_call(&path, path_span)),
            };
            value.span = path_span;
        }
        Ok(value)
    }

    fn plain_value(&mut self) -> Result<Value, ShellError> {
        if self.at_statement_end() {
            return Err(self.unexpected_next(Expected::Value));
        }
        let Some(token) = self.advance() else {
            return Err(self.unexpected_next(Expected::Value));
        };
        let span = token.span;
        let kind = match token.kind {
            TokenKind::Str(mut bytes) => {
                // Adjacent literals concatenate, as in Ruby: 'a' "b" is "ab".
                let mut end = span;
                while let Some(Token {
                    kind: TokenKind::Str(more),
                    span: more_span,
                }) = self.peek()
                {
                    bytes.extend_from_slice(more);
                    end = *more_span;
                    self.position += 1;
                }
                return Ok(Value {
                    kind: ValueKind::Str(bytes),
                    span: span.to(end),
                });
            }
            TokenKind::Int(value) => ValueKind::Int(value),
            TokenKind::Float(value) => ValueKind::Float(value),
            TokenKind::Ident(name) => return self.name_value(name, span),
            TokenKind::Const(name) => return self.constant_value(name, span),
            TokenKind::LBracket => {
                let items = self.nested(span, |parser| parser.list(Some(('[', span)), false))?;
                let end = self.previous_span(span);
                return Ok(Value {
                    kind: ValueKind::Array(items),
                    span: span.to(end),
                });
            }
            TokenKind::LBrace => return self.nested(span, |parser| parser.hash(span)),
            TokenKind::Colon => {
                return Err(self.syntax(
                    SyntaxErrorKind::Unsupported(UnsupportedSyntax::Symbol),
                    span,
                ));
            }
            TokenKind::Error(error) => return Err(ShellError::from(error)),
            other => {
                return Err(self.syntax(
                    SyntaxErrorKind::Unexpected {
                        found: other.describe(),
                        expected: Expected::Value,
                    },
                    span,
                ));
            }
        };
        Ok(Value { kind, span })
    }

    /// Runs `parse` one nesting level deeper: inside the array, hash or method call whose
    /// opening bracket is at `open`. Fails at `open` when that would pass
    /// [`MAX_NESTING_DEPTH`].
    fn nested<T>(
        &mut self,
        open: Span,
        parse: impl FnOnce(&mut Self) -> Result<T, ShellError>,
    ) -> Result<T, ShellError> {
        if self.nesting >= MAX_NESTING_DEPTH {
            return Err(self.syntax(
                SyntaxErrorKind::TooDeep {
                    limit: MAX_NESTING_DEPTH,
                },
                open,
            ));
        }
        self.nesting += 1;
        let parsed = parse(self);
        self.nesting -= 1;
        parsed
    }

    fn previous_span(&self, fallback: Span) -> Span {
        self.tokens
            .get(self.position.wrapping_sub(1))
            .map_or(fallback, |token| token.span)
    }

    fn name_value(&mut self, name: String, span: Span) -> Result<Value, ShellError> {
        let kind = match name.as_str() {
            "true" => ValueKind::Bool(true),
            "false" => ValueKind::Bool(false),
            "nil" => ValueKind::Nil,
            _ if self.peek_kind() == Some(&TokenKind::Dot) => {
                let (path, path_span) = self.dotted_path(&name, span)?;
                return self.method_call(&path, path_span);
            }
            _ => {
                if self.peek_kind() == Some(&TokenKind::Colon) {
                    return Err(self.syntax(
                        SyntaxErrorKind::Unsupported(UnsupportedSyntax::LabelKey),
                        span,
                    ));
                }
                let error =
                    NameError::new(&name, NameErrorKind::UndefinedVariable, span, self.source);
                return Err(ShellError::from(error));
            }
        };
        Ok(Value { kind, span })
    }

    fn constant_value(&mut self, name: String, span: Span) -> Result<Value, ShellError> {
        match self.peek_kind() {
            Some(TokenKind::Dot) => {
                let (path, path_span) = self.dotted_path(&name, span)?;
                self.method_call(&path, path_span)
            }
            Some(TokenKind::Colon) => Err(self.syntax(
                SyntaxErrorKind::Unsupported(UnsupportedSyntax::LabelKey),
                span,
            )),
            _ => Ok(Value {
                kind: ValueKind::Const(name),
                span,
            }),
        }
    }

    /// `first.second.third`: the names joined by dots, and their span.
    fn dotted_path(&mut self, first: &str, span: Span) -> Result<(String, Span), ShellError> {
        let mut path = first.to_owned();
        let mut end = span;
        while self.peek_kind() == Some(&TokenKind::Dot) {
            self.position += 1;
            match self.peek() {
                Some(Token {
                    kind: TokenKind::Ident(name) | TokenKind::Const(name),
                    span,
                }) => {
                    path.push('.');
                    path.push_str(name);
                    end = *span;
                    self.position += 1;
                }
                _ => return Err(self.unexpected_next(Expected::MethodName)),
            }
        }
        Ok((path, span.to(end)))
    }

    fn unsupported_call(&self, path: &str, span: Span) -> ShellError {
        self.syntax(
            SyntaxErrorKind::Unsupported(UnsupportedSyntax::MethodCall {
                call: path.to_owned(),
            }),
            span,
        )
    }

    /// `Bytes.toBytes(x)` and `Bytes.toBytesBinary(s)`, evaluated as HBase's Java methods
    /// would. Any other dotted name is an unsupported method call.
    fn method_call(&mut self, path: &str, span: Span) -> Result<Value, ShellError> {
        let method = path.strip_prefix(BYTES_PACKAGE).unwrap_or(path);
        let binary = match method {
            "Bytes.toBytes" => false,
            "Bytes.toBytesBinary" => true,
            _ => return Err(self.unsupported_call(path, span)),
        };
        let open = match self.peek() {
            Some(Token {
                kind: TokenKind::LParen,
                span,
            }) => *span,
            _ => return Err(self.unexpected_next(Expected::OpenParen)),
        };
        self.position += 1;
        let args = self.nested(open, |parser| parser.list(Some(('(', open)), false))?;
        let call_span = span.to(self.previous_span(open));
        let bytes = match (args.as_slice(), binary) {
            (
                [
                    Value {
                        kind: ValueKind::Str(bytes),
                        ..
                    },
                ],
                true,
            ) => to_bytes_binary(bytes),
            (
                [
                    Value {
                        kind: ValueKind::Str(bytes),
                        ..
                    },
                ],
                false,
            ) => bytes.clone(),
            (
                [
                    Value {
                        kind: ValueKind::Int(value),
                        ..
                    },
                ],
                false,
            ) => to_bytes_long(*value).to_vec(),
            (
                [
                    Value {
                        kind: ValueKind::Float(value),
                        ..
                    },
                ],
                false,
            ) => to_bytes_double(*value).to_vec(),
            (
                [
                    Value {
                        kind: ValueKind::Bool(value),
                        ..
                    },
                ],
                false,
            ) => vec![if *value { 0xFF } else { 0 }],
            _ => {
                let types: Vec<&str> = args.iter().map(|arg| arg.kind.ruby_class()).collect();
                let call = format!("{path}({})", types.join(", "));
                return Err(self.unsupported_call(&call, call_span));
            }
        };
        Ok(Value {
            kind: ValueKind::Str(bytes),
            span: call_span,
        })
    }

    fn hash(&mut self, open: Span) -> Result<Value, ShellError> {
        let mut pairs = Vec::new();
        loop {
            match self.peek_kind() {
                Some(TokenKind::RBrace) => break,
                None => {
                    return Err(self.syntax(SyntaxErrorKind::UnclosedBracket { open: '{' }, open));
                }
                _ => {}
            }
            let key = self.value()?;
            check_key(self, &key)?;
            match self.peek_kind() {
                Some(TokenKind::FatArrow) => self.position += 1,
                None => {
                    return Err(self.syntax(SyntaxErrorKind::UnclosedBracket { open: '{' }, open));
                }
                _ => return Err(self.unexpected_next(Expected::FatArrow)),
            }
            let value = self.value()?;
            pairs.push((key, value));
            match self.peek_kind() {
                Some(TokenKind::Comma) => self.position += 1,
                Some(TokenKind::RBrace) => break,
                None => {
                    return Err(self.syntax(SyntaxErrorKind::UnclosedBracket { open: '{' }, open));
                }
                _ => return Err(self.unexpected_next(Expected::CommaOrClose('}'))),
            }
        }
        let close = self.advance().map_or(open, |token| token.span);
        Ok(Value {
            kind: ValueKind::Hash(pairs),
            span: open.to(close),
        })
    }
}

/// Hash keys are strings or constants: HBase looks options up by their string name.
fn check_key(parser: &Parser<'_>, key: &Value) -> Result<(), ShellError> {
    match key.kind {
        ValueKind::Str(_) | ValueKind::Const(_) => Ok(()),
        _ => Err(parser.syntax(
            SyntaxErrorKind::Unexpected {
                found: describe_value(&key.kind),
                expected: Expected::HashKey,
            },
            key.span,
        )),
    }
}

fn closing_token(open: char) -> TokenKind {
    match open {
        '(' => TokenKind::RParen,
        '[' => TokenKind::RBracket,
        _ => TokenKind::RBrace,
    }
}

/// A parsed value named the way Ruby names the token that starts it.
fn describe_value(kind: &ValueKind) -> String {
    match kind {
        ValueKind::Str(_) => "string literal".to_owned(),
        ValueKind::Int(_) => "integer literal".to_owned(),
        ValueKind::Float(_) => "float literal".to_owned(),
        ValueKind::Bool(value) => format!("`{value}'"),
        ValueKind::Nil => "`nil'".to_owned(),
        ValueKind::Const(name) => format!("constant {name}"),
        ValueKind::Array(_) => "'['".to_owned(),
        ValueKind::Hash(_) => "'{'".to_owned(),
    }
}
