//! strata-bench: db_bench, HBase PerformanceEvaluation and YCSB workloads
//! against strata and, with the `peers` feature, RocksDB and fjall in the
//! same run, so every claim is a ratio measured side by side.
//!
//! The binary (`src/main.rs`) parses the command line (`cli`), runs the
//! workloads (`runner`, `workload`) against the engines (`engine`) and
//! prints the results (`report`); `cold` evicts the page cache for cold
//! reads. `docs/benchmarks.md` says how to run it, how the engines are
//! configured and what this machine measured.
//!
//! Modules point one way, none in a cycle: the engines read only `settings`
//! (what every engine is set up with) and `pages` (the filter queries);
//! `workload` drives the engines; `config` names the workloads; `keys`,
//! `pages` and `ycsb` draw from `random`.

pub mod cli;
pub mod cold;
pub mod config;
pub mod engine;
pub mod error;
pub mod keys;
pub mod measure;
pub mod memory;
pub mod pages;
pub mod random;
pub mod report;
pub mod runner;
pub mod settings;
pub mod workload;
pub mod ycsb;

pub use error::{BenchError, Result};
