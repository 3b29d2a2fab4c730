//! strata-loadgen against RocksDB and fjall (built with `--features peers`): short real runs
//! of the binary, each engine alone and all three compared, and the operations a peer cannot
//! express refused before anything runs.
//!
//! Run with `cargo test --release -p strata-tools --features peers --test loadgen_peers`
//! (release: the RocksDB that strata-bench's release build compiled is reused; a debug
//! build would compile it again).

// Compiled only as a test, so clippy treats helpers here as test code; and only with the
// peers.
#![cfg(test)]
#![cfg(feature = "peers")]

use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// What every engine can do: reads, inserts, overwrites, scans, deletes and multi-gets.
const PEER_MIX: &str = "get=0.4,update=0.2,put=0.1,scan=0.1,delete=0.1,get_many=0.1";

fn loadgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata-loadgen"))
        .args(args)
        .args(["--view", "lines", "--threads", "2", "--interval", "200ms"])
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn rocksdb_and_fjall_each_run_the_mix_they_can_express() {
    let dir = tempfile::tempdir().unwrap();
    for engine in ["rocksdb", "fjall"] {
        let json = dir.path().join(format!("{engine}.json"));
        let out = loadgen(&[
            "--engine",
            engine,
            "--records",
            "2000",
            "--mix",
            PEER_MIX,
            "--rate",
            "800",
            "--warmup",
            "0.2s",
            "--duration",
            "1s",
            "--json",
            json.to_str().unwrap(),
        ]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{engine}: {stderr}");
        assert!(
            stderr.contains(&format!("preloaded 2000 records into {engine} in")),
            "{engine}: {stderr}"
        );
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(summary["target"], engine);
        assert_eq!(summary["errors"], 0, "{engine}: {}", summary["first_error"]);
        let ops = summary["ops"].as_u64().unwrap();
        let dropped = summary["dropped"].as_u64().unwrap();
        // 800 scheduled after warm-up; loose for a busy test machine.
        assert!(
            (400..=1100).contains(&(ops + dropped)),
            "{engine}: {ops} + {dropped}"
        );
        // Inserts went on from the preloaded records.
        assert!(summary["records_at_end"].as_u64().unwrap() > 2000);
        // No regions are invented for an engine that has none.
        assert_eq!(summary["regions"].as_array().unwrap().len(), 0);
        assert!(
            stdout.contains(&format!("== regions: none ({engine} has no regions;")),
            "{engine}: {stdout}"
        );
    }
}

#[test]
fn the_three_engines_are_compared_on_one_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("cmp.json");
    let svg = dir.path().join("cmp.svg");
    let out = loadgen(&[
        "--engine",
        "strata,rocksdb,fjall",
        "--records",
        "2000",
        "--mix",
        "get=0.8,update=0.2",
        "--rate",
        "300..600",
        "--step",
        "300",
        "--step-every",
        "0.6s",
        "--warmup",
        "0.2s",
        "--slo",
        "p99<1s",
        "--json",
        json.to_str().unwrap(),
        "--report",
        svg.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("== comparison: strata, rocksdb, fjall (open loop"),
        "{stdout}"
    );
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let engines: Vec<&str> = value["comparison"]["engines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["engine"].as_str().unwrap())
        .collect();
    assert_eq!(engines, ["strata", "rocksdb", "fjall"]);
    for run in value["runs"].as_array().unwrap() {
        assert_eq!(run["summary"]["errors"], 0, "{}", run["engine"]);
        assert!(run["summary"]["ops"].as_u64().unwrap() > 0);
    }
    let svg = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let titles: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .filter(|t| t.ends_with(", run 1"))
        .collect();
    assert_eq!(titles, ["strata, run 1", "rocksdb, run 1", "fjall, run 1"]);
}

#[test]
fn increments_and_check_and_mutate_are_refused_before_anything_runs() {
    for (mix, operation) in [
        ("get=0.5,increment=0.5", "increment"),
        ("get=0.5,check_and_mutate=0.5", "check_and_mutate"),
    ] {
        let started = Instant::now();
        // A run that would take a minute (and a million-record preload) if it started.
        let out = loadgen(&[
            "--engine",
            "strata,fjall",
            "--mix",
            mix,
            "--records",
            "1m",
            "--duration",
            "60s",
        ]);
        assert_eq!(out.status.code(), Some(2), "{mix}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!(
                "--mix has {operation}, which fjall cannot express"
            )),
            "{stderr}"
        );
        assert!(started.elapsed() < Duration::from_secs(20));
    }
    // fsync is strata's own mode; the peers' sync is an fdatasync.
    let out = loadgen(&[
        "--engine",
        "rocksdb",
        "--durability",
        "fsync",
        "--duration",
        "1s",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .contains("--durability fsync: rocksdb is driven with skip, async or sync"),
        "{}",
        text(&out.stderr)
    );
}
