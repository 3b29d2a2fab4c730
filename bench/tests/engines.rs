//! The engine adapters on their own: what strata-loadgen calls on them (it drives RocksDB and
//! fjall through these adapters) besides the workloads' calls. Every engine this build has.
#![cfg(test)]

use clap::Parser;
use strata_bench::cli::Cli;
use strata_bench::config::{EngineKind, EngineSettings};
use strata_bench::engine;

/// strata-bench's own defaults.
fn settings() -> EngineSettings {
    Cli::try_parse_from(["strata-bench"])
        .unwrap()
        .run_config()
        .unwrap()
        .settings
}

#[test]
fn every_engine_deletes_a_record_in_memory_and_after_a_flush() {
    for kind in EngineKind::ALL.into_iter().filter(|k| k.compiled_in()) {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine::open(kind, dir.path(), &settings()).unwrap();
        let name = kind.name();
        for key in [b"k1".as_slice(), b"k2", b"k3"] {
            engine.put(key, b"value").unwrap();
        }
        // k1 is deleted while its put is in the memtable, k2 once it is in a file.
        engine.delete(b"k1").unwrap();
        engine.load_finished().unwrap();
        engine.delete(b"k2").unwrap();
        // Deleting a key that was never written is no error.
        engine.delete(b"absent").unwrap();
        assert_eq!(engine.get(b"k1").unwrap(), None, "{name}: k1");
        assert_eq!(engine.get(b"k2").unwrap(), None, "{name}: k2");
        assert_eq!(engine.get(b"k3").unwrap(), Some(5), "{name}: k3");
        let keys = vec![b"k1".to_vec(), b"k2".to_vec(), b"k3".to_vec()];
        assert_eq!(engine.multi_get(&keys).unwrap(), 1, "{name}: multi_get");
        engine.close().unwrap();
    }
}
