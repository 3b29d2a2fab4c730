//! Fuzz target: `strata::fuzzing::data_block` (see its documentation for what the
//! input means and which promises are checked).
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata::fuzzing::{Outcome, data_block};

fuzz_target!(|data: &[u8]| {
    if let Outcome::Broken(why) = data_block(data) {
        panic!("{why}");
    }
});
