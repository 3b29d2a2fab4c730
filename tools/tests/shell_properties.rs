//! Properties of the syntax layer over generated input.

// Marks the helpers below as test code, so the workspace's allow-*-in-tests lint settings apply.
#![cfg(test)]

use proptest::prelude::*;
use strata_tools::shell::{
    Command, inspect_bytes, needs_more_input, parse_command, parse_script, to_string_binary,
};

/// Text built from pieces of shell syntax, so generated lines get past the lexer often.
fn shell_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("put".to_owned()),
        Just("scan".to_owned()),
        Just("create".to_owned()),
        Just("get".to_owned()),
        Just("'t'".to_owned()),
        Just("\"r\\x00\"".to_owned()),
        Just(", ".to_owned()),
        Just(" => ".to_owned()),
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just("(".to_owned()),
        Just(")".to_owned()),
        Just("NAME".to_owned()),
        Just("VERSIONS".to_owned()),
        Just("\n".to_owned()),
        Just(";".to_owned()),
        Just("#".to_owned()),
        Just("'".to_owned()),
        Just("\"".to_owned()),
        Just("\\".to_owned()),
        Just(".".to_owned()),
        Just(":".to_owned()),
        (-1000i64..1000).prop_map(|number| number.to_string()),
        "[a-z_]{1,6}",
        any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

proptest! {
    #[test]
    fn parsing_never_panics_and_errors_point_into_the_input(source in shell_like()) {
        let _ = needs_more_input(&source);
        for result in parse_script(&source) {
            if let Err(error) = result {
                prop_assert!(error.span().start <= source.len());
                let position = error.position();
                prop_assert!(position.line >= 1 && position.column >= 1);
                let rendered = error.render(&source);
                prop_assert!(!rendered.is_empty());
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(source in any::<String>()) {
        let _ = needs_more_input(&source);
        let _ = parse_script(&source);
    }

    #[test]
    fn escaped_double_quoted_strings_round_trip_any_bytes(row in proptest::collection::vec(any::<u8>(), 1..32)) {
        let literal: String = row.iter().map(|byte| format!("\\x{byte:02x}")).collect();
        let line = format!("put 't', \"{literal}\", 'f:q', 'v'");
        let parsed = parse_command(&line).map(|statement| statement.command);
        match parsed {
            Ok(Command::Put(put)) => prop_assert_eq!(put.row, row),
            other => prop_assert!(false, "unexpected {:?}", other),
        }
    }

    #[test]
    fn inspected_strings_parse_back(value in proptest::collection::vec(any::<u8>(), 0..32)) {
        // Ruby's inspect output is itself a valid double-quoted literal.
        let line = format!("put 't', 'r', 'f:q', {}", inspect_bytes(&value));
        let parsed = parse_command(&line).map(|statement| statement.command);
        match parsed {
            Ok(Command::Put(put)) => prop_assert_eq!(put.value, value),
            other => prop_assert!(false, "{line}: unexpected {:?}", other),
        }
    }

    #[test]
    fn single_quoted_binary_strings_stay_literal(value in proptest::collection::vec(any::<u8>(), 0..32)) {
        let text = to_string_binary(&value);
        let line = format!("put 't', 'r', 'f:q', '{}'", text.replace('\'', "\\'"));
        let parsed = parse_command(&line).map(|statement| statement.command);
        match parsed {
            Ok(Command::Put(put)) => prop_assert_eq!(put.value, text.into_bytes()),
            other => prop_assert!(false, "{line}: unexpected {:?}", other),
        }
    }
}
