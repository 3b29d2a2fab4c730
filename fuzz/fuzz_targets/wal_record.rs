//! Fuzz target: `strata::fuzzing::wal_record` (see its documentation for what the
//! input means and which promises are checked).
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata::fuzzing::{Outcome, wal_record};

fuzz_target!(|data: &[u8]| {
    if let Outcome::Broken(why) = wal_record(data) {
        panic!("{why}");
    }
});
