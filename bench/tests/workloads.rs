//! Every workload at a tiny size against strata: the counts add up, reads
//! find what they should, and the JSON carries the fields issue 6 requires.
#![cfg(test)]

use strata_bench::config::{
    ChildCommand, CompressionChoice, DurabilityChoice, EngineKind, EngineSettings, RunConfig,
    ValueKind,
};
use strata_bench::report::{self, RunResult};
use strata_bench::runner;
use strata_bench::workload::{MULTIGET_BATCH_KEYS, Workload};
use strata_bench::ycsb::YcsbKind;

const TINY_NUM: u64 = 2_000;

fn tiny_config(dir: &std::path::Path, workloads: Vec<Workload>, threads: usize) -> RunConfig {
    RunConfig {
        engines: vec![EngineKind::Strata],
        workloads,
        num: TINY_NUM,
        ops: None,
        key_bytes: 16,
        value_bytes: 100,
        values: ValueKind::Random,
        threads,
        regions: 1,
        dir: Some(dir.to_path_buf()),
        repeat: 1,
        seed: 1,
        settings: EngineSettings {
            bulk_verify_blocks: true,
            block_size_bytes: 4096,
            cache_bytes: 8 << 20,
            bloom_bits_per_key: 10,
            compression: CompressionChoice::None,
            durability: DurabilityChoice::Async,
            io: None,
            memtable_bytes: strata::DEFAULT_MEMSTORE_FLUSH_SIZE_BYTES,
            background_threads: 2,
            memstore_parts: 1,
        },
        progress: false,
        strata_io: Vec::new(),
        cold: false,
        warm: false,
        isolate: None,
        first_run: 0,
    }
}

fn run(config: &RunConfig) -> Vec<RunResult> {
    runner::run_all(config, |_| {}).unwrap()
}

fn check_counts(r: &RunResult, workload: Workload, num: u64) {
    let name = &r.workload;
    assert_eq!(r.ops, workload.ops(num, None), "{name}: ops");
    assert!(r.seconds > 0.0 && r.ops_per_sec > 0.0, "{name}: timing");
    assert!(r.peak_rss_bytes > 0, "{name}: rss");
    match workload {
        Workload::ReadRandom | Workload::PeRandomRead | Workload::ReadWhileWriting => {
            assert_eq!(r.reads, r.ops, "{name}: reads");
            assert_eq!(r.found, r.ops, "{name}: every loaded key is found");
        }
        Workload::ReadMissing => {
            assert_eq!(r.reads, r.ops, "{name}: reads");
            assert_eq!(r.found, 0, "{name}: no absent key is found");
        }
        Workload::MultiGet => {
            assert_eq!(r.reads, r.ops * MULTIGET_BATCH_KEYS as u64, "{name}: keys");
            assert_eq!(r.found, r.reads, "{name}: every key is found");
            assert!(r.multiget_method.is_some());
        }
        Workload::Scan => assert_eq!(r.scanned, num, "{name}: a full scan sees every record"),
        Workload::SeekRandom => {
            // 100 entries per seek, fewer only near the end of the key space.
            assert!(r.scanned > r.ops * 90, "{name}: {} entries", r.scanned);
        }
        Workload::PeScan100 => assert!(r.scanned > r.ops * 90, "{name}: {} rows", r.scanned),
        Workload::FillSeq | Workload::FillRandom | Workload::PeSequentialWrite => {
            assert_eq!(r.writes, num, "{name}: writes");
            assert!(
                r.write_amp.is_some() && r.bytes_written > 0,
                "{name}: write amp"
            );
        }
        Workload::Overwrite => assert_eq!(r.writes, r.ops, "{name}: writes"),
        Workload::BulkLoad => {
            assert_eq!(r.writes, num, "{name}: writes");
            let bulk = r.bulk.as_ref().unwrap();
            assert!(
                bulk.build_seconds > 0.0 && bulk.file_bytes > 0,
                "{name}: {bulk:?}"
            );
            assert_eq!(bulk.reads_after, num.min(100_000), "{name}: reads after");
        }
        // Each query's matches are checked against the census inside the
        // run; a prefix query asks for the url of an existing record.
        Workload::FilterScanPrefix => assert!(r.scanned >= r.ops, "{name}: {} rows", r.scanned),
        Workload::FilterScanMask | Workload::FilterScanValue => {
            assert_eq!(r.ops % num, 0, "{name}: whole passes");
            assert!(r.p50_us.is_some(), "{name}: per-query latency");
        }
        Workload::Ycsb(kind) => {
            // Every read targets a record that exists.
            assert_eq!(r.found, r.reads, "{name}: reads find their records");
            match kind {
                YcsbKind::C => assert_eq!(r.reads, r.ops),
                YcsbKind::D => assert_eq!(r.live_records, num + r.writes, "{name}: inserts"),
                YcsbKind::E => {
                    assert_eq!(r.live_records, num + r.writes, "{name}: inserts");
                    assert!(r.scanned > 0, "{name}: scans");
                }
                _ => {}
            }
        }
    }
    if workload.load_order().is_some() {
        let load = r.load.as_ref().unwrap();
        assert_eq!(load.ops, num, "{name}: load");
    } else {
        assert!(r.load.is_none());
    }
}

#[test]
fn every_workload_runs_at_a_tiny_size() {
    let dir = tempfile::tempdir().unwrap();
    let config = tiny_config(dir.path(), Workload::ALL.to_vec(), 1);
    let results = run(&config);
    assert_eq!(results.len(), Workload::ALL.len());
    for (r, w) in results.iter().zip(Workload::ALL) {
        assert_eq!(r.workload, w.name());
        check_counts(r, w, TINY_NUM);
    }
    // Every run directory is removed after its run.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn several_threads_split_the_work_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let workloads = vec![
        Workload::FillRandom,
        Workload::ReadRandom,
        Workload::ReadMissing,
        Workload::ReadWhileWriting,
        Workload::MultiGet,
        Workload::Scan,
        Workload::Ycsb(YcsbKind::D),
        Workload::Ycsb(YcsbKind::E),
        Workload::FilterScanPrefix,
        Workload::FilterScanMask,
    ];
    let config = tiny_config(dir.path(), workloads.clone(), 3);
    for (r, w) in run(&config).iter().zip(workloads) {
        assert_eq!(r.threads, 3);
        check_counts(r, w, TINY_NUM);
    }
}

#[test]
fn scans_of_a_pre_split_table_see_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let workloads = vec![
        Workload::Scan,
        Workload::Ycsb(YcsbKind::E),
        Workload::PeScan100,
    ];
    let mut config = tiny_config(dir.path(), workloads.clone(), 2);
    config.regions = 4;
    for (r, w) in run(&config).iter().zip(workloads) {
        check_counts(r, w, TINY_NUM);
    }
}

/// `--ops` asks a scan for whole passes: each thread reads its range once
/// per pass, every pass checked against the load.
#[test]
fn a_scan_makes_as_many_passes_as_ops_ask_for() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = tiny_config(dir.path(), vec![Workload::Scan], 2);
    config.regions = 4;
    config.ops = Some(2 * TINY_NUM + 1);
    let results = run(&config);
    let r = &results[0];
    assert_eq!(Workload::Scan.ops(TINY_NUM, config.ops), 3 * TINY_NUM);
    assert_eq!(r.ops, 3 * TINY_NUM);
    assert_eq!(r.scanned, 3 * TINY_NUM);
    assert_eq!(Workload::Scan.ops(TINY_NUM, None), TINY_NUM);
}

#[test]
fn json_output_parses_with_the_required_fields() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = tiny_config(dir.path(), vec![Workload::FillSeq, Workload::ReadRandom], 1);
    config.repeat = 2;
    let results = run(&config);
    assert_eq!(results.len(), 4);
    let path = dir.path().join("results.json");
    report::write_json(&path, &results).unwrap();
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let array = value.as_array().unwrap();
    assert_eq!(array.len(), 4);
    for object in array {
        for field in [
            "engine",
            "workload",
            "num",
            "threads",
            "ops",
            "seconds",
            "ops_per_sec",
            "p50_us",
            "p99_us",
            "p999_us",
            "bytes_written",
            "disk_bytes",
            "peak_rss_bytes",
        ] {
            assert!(object.get(field).is_some(), "missing {field}");
        }
        assert_eq!(object["engine"], "strata");
        assert!(object["p99_us"].as_f64().unwrap() >= object["p50_us"].as_f64().unwrap());
    }
    // The records deserialize back to what was written (floats up to their
    // last digit).
    let back: Vec<RunResult> = serde_json::from_value(value).unwrap();
    for (b, r) in back.iter().zip(&results) {
        assert_eq!(
            (&b.engine, &b.workload, b.run, b.ops),
            (&r.engine, &r.workload, r.run, r.ops)
        );
        assert!((b.ops_per_sec - r.ops_per_sec).abs() <= r.ops_per_sec * 1e-12);
    }
    // Repeated runs show medians and a min-max column.
    let table = report::render_table(&results);
    assert!(table.contains("ops/s min-max"), "{table}");
    assert!(table.contains("readrandom"));
}

#[test]
fn sync_durability_reports_group_commit() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = tiny_config(dir.path(), vec![Workload::FillRandom], 4);
    config.num = 400;
    config.settings.durability = DurabilityChoice::Sync;
    let results = run(&config);
    let wal = results[0].wal.as_ref().unwrap();
    assert_eq!(wal.frames, 400);
    assert!(wal.syncs > 0 && wal.groups > 0 && wal.avg_group_size >= 1.0);
    assert!(report::render_table(&results).contains("WAL group commit"));
}

#[test]
fn cold_reads_evict_before_every_operation_untimed() {
    let dir = tempfile::tempdir().unwrap();
    let workloads = vec![
        Workload::MultiGet,
        Workload::ReadRandom,
        Workload::ReadMissing,
    ];
    let mut config = tiny_config(dir.path(), workloads.clone(), 1);
    config.cold = true;
    config.ops = Some(40);
    let results = run(&config);
    assert_eq!(results.len(), workloads.len());
    for (r, w) in results.iter().zip(workloads) {
        let name = &r.workload;
        assert!(r.cold, "{name}");
        assert_eq!(r.ops, 40, "{name}");
        assert_eq!(r.block_cache_bytes, 8 << 20, "{name}");
        let eviction = r.eviction.as_ref().unwrap();
        // One eviction before every operation, over the files strata wrote
        // (HFiles, WAL, manifest).
        assert_eq!(eviction.evictions, r.ops, "{name}");
        assert!(eviction.files >= 2, "{name}: {} files", eviction.files);
        assert!(eviction.listings >= 1, "{name}");
        assert!(eviction.seconds > 0.0, "{name}");
        assert!(r.seconds > 0.0 && r.p50_us.is_some(), "{name}");
        match w {
            Workload::MultiGet => {
                assert_eq!(r.found, r.ops * MULTIGET_BATCH_KEYS as u64, "{name}")
            }
            Workload::ReadMissing => assert_eq!(r.found, 0, "{name}"),
            _ => assert_eq!(r.found, r.ops, "{name}"),
        }
    }
    let table = report::render_table(&results);
    assert!(table.contains("multiget [cold]"), "{table}");
    assert!(table.contains("posix_fadvise"), "{table}");
    let json = serde_json::to_value(&results).unwrap();
    assert_eq!(json[0]["cold"], true);
    assert_eq!(json[0]["eviction"]["evictions"], 40);
    // Every run directory is removed after its run (the evictor's handles
    // are closed).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn warm_reads_fill_the_block_cache_before_the_timed_phase() {
    let dir = tempfile::tempdir().unwrap();
    let workloads = vec![Workload::Scan, Workload::ReadRandom, Workload::FillSeq];
    let mut config = tiny_config(dir.path(), workloads.clone(), 1);
    config.warm = true;
    let warm = run(&config);
    config.warm = false;
    let first_read = run(&config);
    for (warm, first) in warm.iter().zip(&first_read) {
        let name = &warm.workload;
        // A fill loads nothing to warm.
        assert_eq!(warm.warm, name != "fillseq", "{name}");
        if name == "scan" {
            // The timed scan of a warmed table misses the block cache
            // nowhere; the first read of every block misses it.
            let misses = |r: &RunResult| r.timed_counters.get("block_cache_misses").copied();
            assert_eq!(
                misses(warm),
                Some(0),
                "{name} warm: {:?}",
                warm.timed_counters
            );
            assert!(
                misses(first).unwrap_or(0) > 0,
                "{name}: {:?}",
                first.timed_counters
            );
        }
    }
    let table = report::render_table(&warm);
    assert!(table.contains("scan [warm]"), "{table}");
    assert_eq!(serde_json::to_value(&warm).unwrap()[0]["warm"], true);
    use clap::Parser;
    let cli = strata_bench::cli::Cli::try_parse_from(["strata-bench", "--cold", "--warm"]);
    assert!(cli.is_err(), "--cold and --warm conflict");
}

#[test]
fn isolated_runs_come_back_from_their_own_processes_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("results.json");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_strata-bench"))
        .args([
            "--isolate",
            "--workloads",
            "fillseq,readrandom",
            "--repeat",
            "2",
        ])
        .args(["--num", &TINY_NUM.to_string(), "--no-progress", "--dir"])
        .arg(dir.path())
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: Vec<RunResult> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let order: Vec<(&str, u32)> = results
        .iter()
        .map(|r| (r.workload.as_str(), r.run))
        .collect();
    assert_eq!(
        order,
        [
            ("fillseq", 0),
            ("fillseq", 1),
            ("readrandom", 0),
            ("readrandom", 1)
        ]
    );
    for r in &results {
        // The children ran the parent's record count, not their own default.
        assert_eq!(r.num, TINY_NUM);
        let workload = Workload::parse_list(&r.workload).unwrap()[0];
        check_counts(r, workload, TINY_NUM);
    }
}

#[test]
fn a_failed_child_run_is_an_error_with_what_it_printed() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = tiny_config(dir.path(), vec![Workload::FillSeq], 1);
    config.isolate = Some(ChildCommand {
        program: env!("CARGO_BIN_EXE_strata-bench").into(),
        // Every child refuses its command line: no value can be empty.
        args: vec!["--value-size".into(), "0".into()],
    });
    let error = runner::run_all(&config, |_| {}).unwrap_err().to_string();
    assert!(
        error.contains("the child process of strata fillseq run 0 failed"),
        "{error}"
    );
    assert!(
        error.contains("--value-size must be at least 1 byte"),
        "{error}"
    );
}
