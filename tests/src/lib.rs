//! Shared helpers for strata's integration tests.
