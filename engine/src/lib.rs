//! strata: an embeddable HBase-style wide-column store.
#![warn(missing_docs)]

pub mod cell;
pub mod clock;
mod codec;
pub mod error;
mod io;
pub mod keys;
mod memstore;
pub mod options;
