//! The parsed form of a statement: a command name and its evaluated argument values.

use super::span::Span;

/// One statement: a command name and its arguments, as written (not yet validated against
/// the command's signature; see [`Command::from_call`](super::Command::from_call)).
///
/// Trailing bare `KEY => value` arguments (`alter 't', NAME => 'f', VERSIONS => 5`) are
/// collected into one [`ValueKind::Hash`] argument, as Ruby does.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The command name as written (`desc`, `scan`...); for `t.put ...`, the method (`put`).
    pub name: String,
    /// The bytes of the name.
    pub name_span: Span,
    /// The arguments, in order.
    pub args: Vec<Value>,
    /// The whole statement.
    pub span: Span,
    /// `t.put 'r', 'f:q', 'v'`: the variable (a table reference) the command is called on,
    /// with its bytes.
    pub receiver: Option<(String, Span)>,
    /// `t = get_table 't'`: the variable the command's result is assigned to, with its bytes.
    pub assign_to: Option<(String, Span)>,
}

/// An argument value with the bytes it was written in.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// The value.
    pub kind: ValueKind,
    /// Where it is in the source.
    pub span: Span,
}

/// The values the shell's Ruby subset can express.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueKind {
    /// A string: the bytes of a quoted literal (after escapes), or of a `Bytes.toBytes(...)`
    /// or `Bytes.toBytesBinary(...)` call.
    Str(Vec<u8>),
    /// An integer literal.
    Int(i64),
    /// A float literal.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// `nil`.
    Nil,
    /// A bare constant such as `VERSIONS`. In the HBase shell these constants are strings
    /// holding their own name, and this shell treats every constant that way.
    Const(String),
    /// `[a, b, ...]`.
    Array(Vec<Value>),
    /// `{k => v, ...}`, in the order written. Keys are strings or constants.
    Hash(Vec<(Value, Value)>),
}

impl ValueKind {
    /// The Ruby class of the value, for error messages.
    pub fn ruby_class(&self) -> &'static str {
        match self {
            ValueKind::Str(_) | ValueKind::Const(_) => "String",
            ValueKind::Int(_) => "Integer",
            ValueKind::Float(_) => "Float",
            ValueKind::Bool(true) => "TrueClass",
            ValueKind::Bool(false) => "FalseClass",
            ValueKind::Nil => "NilClass",
            ValueKind::Array(_) => "Array",
            ValueKind::Hash(_) => "Hash",
        }
    }

    /// The value as Ruby's `inspect` prints it (`"abc"`, `[1, 2]`, `{"NAME"=>"f"}`).
    pub fn inspect(&self) -> String {
        match self {
            ValueKind::Str(bytes) => inspect_bytes(bytes),
            ValueKind::Const(name) => inspect_bytes(name.as_bytes()),
            ValueKind::Int(value) => value.to_string(),
            ValueKind::Float(value) => ruby_float_to_s(*value),
            ValueKind::Bool(value) => value.to_string(),
            ValueKind::Nil => "nil".to_owned(),
            ValueKind::Array(items) => {
                let items: Vec<String> = items.iter().map(|item| item.kind.inspect()).collect();
                format!("[{}]", items.join(", "))
            }
            ValueKind::Hash(pairs) => {
                let pairs: Vec<String> = pairs
                    .iter()
                    .map(|(key, value)| format!("{}=>{}", key.kind.inspect(), value.kind.inspect()))
                    .collect();
                format!("{{{}}}", pairs.join(", "))
            }
        }
    }
}

/// Ruby's `Float#to_s`: `1.5`, `100.0`, `1.0e+16`, `1.0e-05`.
pub fn ruby_float_to_s(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-Infinity" } else { "Infinity" }.to_owned();
    }
    super::bytes::shortest_decimal(&format!("{value:e}"), -4..16, |exponent| {
        format!("e{exponent:+03}")
    })
}

/// A byte string as Ruby's `String#inspect` prints it: double-quoted, with escapes for
/// quotes, backslashes, control characters and bytes that are not valid UTF-8.
pub fn inspect_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        let mut characters = chunk.valid().chars().peekable();
        while let Some(character) = characters.next() {
            match character {
                '#' if matches!(characters.peek(), Some('{' | '$' | '@')) => out.push_str("\\#"),
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\u{1b}' => out.push_str("\\e"),
                character if character.is_control() && character.is_ascii() => {
                    out.push_str(&format!("\\x{:02X}", u32::from(character)));
                }
                character if character.is_control() => {
                    out.push_str(&format!("\\u{:04X}", u32::from(character)));
                }
                character => out.push(character),
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02X}"));
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(kind: ValueKind) -> Value {
        Value {
            kind,
            span: Span::default(),
        }
    }

    #[test]
    fn inspect_matches_ruby() {
        assert_eq!(
            inspect_bytes(b"a\"b\\c\n\x01\xff"),
            "\"a\\\"b\\\\c\\n\\x01\\xFF\""
        );
        assert_eq!(inspect_bytes("é".as_bytes()), "\"é\"");
        assert_eq!(inspect_bytes(b"#{x} #a"), "\"\\#{x} #a\"");
        assert_eq!(inspect_bytes("\u{80}".as_bytes()), "\"\\u0080\"");
        let hash = ValueKind::Hash(vec![(
            value(ValueKind::Const("NAME".to_owned())),
            value(ValueKind::Array(vec![
                value(ValueKind::Int(1)),
                value(ValueKind::Nil),
            ])),
        )]);
        assert_eq!(hash.inspect(), "{\"NAME\"=>[1, nil]}");
        assert_eq!(ValueKind::Float(1.0).inspect(), "1.0");
        assert_eq!(ruby_float_to_s(1e15), "1000000000000000.0");
        assert_eq!(ruby_float_to_s(1e16), "1.0e+16");
        assert_eq!(ruby_float_to_s(0.0001), "0.0001");
        assert_eq!(ruby_float_to_s(-0.00001), "-1.0e-05");
        assert_eq!(ruby_float_to_s(2.5), "2.5");
    }
}
