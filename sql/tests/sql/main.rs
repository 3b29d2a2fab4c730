//! strata-sql's integration tests, in one binary (each test binary links all of DataFusion,
//! so one binary instead of six saves most of their link time).

// Marks the helpers as test code, so the workspace's allow-*-in-tests lint settings apply.
#![cfg(test)]

mod cells;
mod common;
mod differential;
mod insert;
mod mapped;
mod partitions;
mod scenarios;
