//! Fuzz target: `strata::fuzzing::hfile_trailer` (see its documentation for what the
//! input means and which promises are checked).
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata::fuzzing::{Outcome, hfile_trailer};

fuzz_target!(|data: &[u8]| {
    if let Outcome::Broken(why) = hfile_trailer(data) {
        panic!("{why}");
    }
});
