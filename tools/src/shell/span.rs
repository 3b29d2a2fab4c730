//! Source positions: byte spans in the input and the line/column a person reads.

use std::fmt;

/// A half-open byte range `[start, end)` in the source text given to the parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset one past the last byte.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end` (byte offsets).
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The empty span at `offset`.
    pub fn at(offset: usize) -> Span {
        Span {
            start: offset,
            end: offset,
        }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A position as a person reads it: 1-based line and column (columns count characters),
/// plus the byte offset it was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    /// Byte offset in the source text.
    pub offset: usize,
    /// Line number, starting at 1.
    pub line: usize,
    /// Column number in characters, starting at 1.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` in `source`. An offset past the end (or inside a
    /// multi-byte character) is clamped to the nearest preceding character boundary.
    pub fn locate(source: &str, offset: usize) -> Position {
        let mut clamped = offset.min(source.len());
        while clamped > 0 && !source.is_char_boundary(clamped) {
            clamped -= 1;
        }
        let before = source.get(..clamped).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
        let column = before
            .get(line_start..)
            .map_or(0, |text| text.chars().count())
            + 1;
        Position {
            offset,
            line,
            column,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// The text of the line that contains byte `offset`, without its line terminator.
pub(crate) fn line_text(source: &str, offset: usize) -> &str {
    let mut clamped = offset.min(source.len());
    while clamped > 0 && !source.is_char_boundary(clamped) {
        clamped -= 1;
    }
    let start = source
        .get(..clamped)
        .and_then(|text| text.rfind('\n'))
        .map_or(0, |nl| nl + 1);
    let rest = source.get(start..).unwrap_or("");
    let line = rest.split('\n').next().unwrap_or("");
    line.strip_suffix('\r').unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_counts_lines_and_characters() {
        let source = "put 't'\nget 'é', 'r'";
        assert_eq!(
            Position::locate(source, 0),
            Position {
                offset: 0,
                line: 1,
                column: 1
            }
        );
        let comma = source.find(',').unwrap_or(0);
        let position = Position::locate(source, comma);
        assert_eq!((position.line, position.column), (2, 8));
        assert_eq!(line_text(source, comma), "get 'é', 'r'");
    }

    #[test]
    fn locate_clamps_out_of_range_offsets() {
        let position = Position::locate("ab", 99);
        assert_eq!((position.line, position.column), (1, 3));
    }
}
