//! Fuzz target: the filter language (`strata_filters::parse_bytes`, and `parse` on UTF-8
//! input), as scans, gets and the shell's and Thrift's FILTER strings reach it.
//!
//! Promises checked: a parsed filter prints to text that parses back to the same filter
//! (`filters/src/display.rs`); its evaluator and scan plan build or fail with a typed
//! error; evaluating it on a small row never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_filters::{CellRef, FilterEvaluator, Plan, ScanRange, parse, parse_bytes};

fuzz_target!(|data: &[u8]| {
    let parsed = parse_bytes(data);
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(parse(text), parsed, "parse and parse_bytes disagree");
    }
    let Ok(filter) = parsed else { return };
    let printed = filter.to_string();
    assert_eq!(
        parse(&printed).as_ref(),
        Ok(&filter),
        "{printed:?} does not parse back"
    );
    let _ = Plan::compile(Some(&filter), &ScanRange::all());
    if let Ok(mut evaluator) = FilterEvaluator::new(&filter) {
        let cells = [
            CellRef {
                row: b"row1",
                family: b"f",
                qualifier: b"a",
                timestamp: 2,
                value: b"x",
            },
            CellRef {
                row: b"row1",
                family: b"f",
                qualifier: b"b",
                timestamp: 1,
                value: &[0, 0, 0, 0, 0, 0, 0, 7],
            },
            CellRef {
                row: b"row1",
                family: b"g",
                qualifier: b"",
                timestamp: 3,
                value: b"",
            },
        ];
        let _ = evaluator.evaluate_row(&cells, 1);
    }
});
