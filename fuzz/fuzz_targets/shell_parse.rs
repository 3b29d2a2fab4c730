//! Fuzz target: the shell's lexer and parser (`strata_tools::shell::parse_source` on the
//! bytes as a script, `needs_more_input` as the interactive prompt asks it).
//!
//! Promises checked: every statement and every error points into the input (its span lies
//! inside the text, on character boundaries), and errors render without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_tools::shell::{SourceText, needs_more_input, parse_source};

fuzz_target!(|data: &[u8]| {
    let source = SourceText::decode(data);
    let text = source.text();
    let _ = needs_more_input(text);
    for statement in parse_source(&source) {
        let span = match &statement {
            Ok(statement) => statement.span,
            Err(error) => {
                let _ = error.to_string();
                error.span()
            }
        };
        assert!(
            span.start <= span.end && span.end <= text.len(),
            "span {span:?} outside the {} bytes of input",
            text.len()
        );
        assert!(
            text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
            "span {span:?} splits a character"
        );
    }
});
