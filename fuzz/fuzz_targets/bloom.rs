//! Fuzz target: `strata::fuzzing::bloom` (see its documentation for what the
//! input means and which promises are checked).
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata::fuzzing::{Outcome, bloom};

fuzz_target!(|data: &[u8]| {
    if let Outcome::Broken(why) = bloom(data) {
        panic!("{why}");
    }
});
