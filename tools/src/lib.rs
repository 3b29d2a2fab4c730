//! Tools around the strata storage engine.
//!
//! For now this crate holds the engine-independent layer of `strata shell`: the HBase shell
//! syntax (lexer, parser, typed commands) and the output helpers that need no engine. See
//! [`shell`].

#![warn(missing_docs)]

pub mod shell;
