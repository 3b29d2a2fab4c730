//! Fuzz target: `strata::fuzzing::manifest_edit` (see its documentation for what the
//! input means and which promises are checked).
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata::fuzzing::{Outcome, manifest_edit};

fuzz_target!(|data: &[u8]| {
    if let Outcome::Broken(why) = manifest_edit(data) {
        panic!("{why}");
    }
});
