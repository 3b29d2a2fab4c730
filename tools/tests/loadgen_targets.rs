//! strata-loadgen's targets besides a strata table in process: an HBase Thrift1 server
//! (`strata thrift`'s server on a loopback port, driven by short real runs of the binary),
//! comparisons of several targets (the same schedule against each, interleaved repeats, one
//! report), and what a target without regions reports. The RocksDB and fjall targets are in
//! loadgen_peers.rs (built with the `peers` feature).

// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

mod thrift_support;

use std::process::{Command, Output};
use std::time::Duration;

use strata::{FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use strata_tools::loadgen::compare::{Comparison, EngineRun};
use strata_tools::loadgen::keys::{Chooser, KeySpace};
use strata_tools::loadgen::plots::{self, ReportFormat};
use strata_tools::loadgen::schedule::Arrival;
use strata_tools::loadgen::spec::{Distribution, KeyPattern, Mix, RateSpec, Slo};
use strata_tools::loadgen::{self, LoadSpec, Target};
use thrift_support::TestServer;

/// Every operation the mix offers.
const EVERY_OPERATION: &str = "get=0.3,update=0.15,put=0.1,scan=0.1,increment=0.1,delete=0.05,\
                               get_many=0.1,check_and_mutate=0.1";

/// A short run: 600 ops/s for 1 s after 0.2 s of warm-up, on two workers.
const SHORT_RUN: [&str; 12] = [
    "--rate",
    "600",
    "--warmup",
    "0.2s",
    "--duration",
    "1s",
    "--interval",
    "200ms",
    "--threads",
    "2",
    "--view",
    "lines",
];

fn loadgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata-loadgen"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The pages are XHTML with a doctype.
fn xhtml<'input>() -> roxmltree::ParsingOptions<'input> {
    roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    }
}

fn json_of(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_operation_of_the_mix_reaches_a_thrift_server() {
    let server = TestServer::start();
    let address = server.address().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let json_arg = json.to_str().unwrap();
    let mut args = vec!["--thrift", &address, "--create", "--records", "500"];
    args.extend(["--mix", EVERY_OPERATION, "--json", json_arg]);
    args.extend(SHORT_RUN);
    let out = loadgen(&args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "created table loadgen on the Thrift server at {address} and preloaded 500 records"
        )),
        "{stderr}"
    );
    let summary = json_of(&json);
    assert_eq!(summary["errors"], 0, "{}", summary["first_error"]);
    assert_eq!(summary["target"], format!("thrift {address}"));
    let ops = summary["ops"].as_u64().unwrap();
    let dropped = summary["dropped"].as_u64().unwrap();
    // 600 scheduled after warm-up; loose for a busy test machine.
    assert!((300..=800).contains(&(ops + dropped)), "{ops} + {dropped}");
    // One region, from getTableRegions, with every operation and no engine counters:
    // Thrift1 does not carry them.
    let regions = summary["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 1);
    assert_eq!(regions[0]["ops"].as_u64(), Some(ops));
    assert!(regions[0].get("rows_read").is_none(), "{}", regions[0]);
    assert!(
        stdout.contains(&format!(
            "(thrift {address} does not report its regions' counters: `-`)"
        )),
        "{stdout}"
    );
    // The operations reached the server's table: the preloaded records (record 0 among
    // them, with a value of --value-size bytes), the puts, and the increments' counters.
    let table = server.db.table("loadgen").unwrap();
    let mut first = Vec::new();
    KeySpace::new(KeyPattern::Hashed, 16)
        .unwrap()
        .write_key(0, &mut first);
    let row = table.get(&Get::new(&first)).unwrap();
    // A delete may have taken record 0; its put went in before.
    if !row.is_empty() {
        assert_eq!(row.value("f", "v").map(<[u8]>::len), Some(100));
    }
    let rows: Vec<_> = table
        .scan(&Scan::new())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(rows.len() >= 450, "{} rows", rows.len());
    let counters = rows.iter().filter(|r| r.value("f", "n").is_some()).count();
    assert!(counters > 0, "no increment reached the table");
    server.stop();
}

#[test]
fn an_existing_thrift_table_is_used_as_it_is_and_a_missing_one_refused() {
    let server = TestServer::start();
    let address = server.address().to_string();
    let mut args = vec!["--thrift", &address, "--table", "mine", "--mix", "get=1"];
    args.extend(SHORT_RUN);
    let out = loadgen(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&format!(
            "--table mine: no such table on the Thrift server at {address}; give --create"
        )),
        "{}",
        text(&out.stderr)
    );
    assert!(!server.db.table_exists("mine"), "a refused run created it");
    // The rows of an existing table are counted and chosen from, by the key pattern.
    let table = server
        .db
        .create_table(TableDescriptor::new("mine").family(FamilyDescriptor::new("f")))
        .unwrap();
    let keys = KeySpace::new(KeyPattern::Hashed, 16).unwrap();
    let puts: Vec<Put> = (0..300)
        .map(|record| {
            let mut key = Vec::new();
            keys.write_key(record, &mut key);
            Put::new(key).add("f", "v", b"value")
        })
        .collect();
    table.put_many(&puts).unwrap();
    let out = loadgen(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!(
            "using table mine on the Thrift server at {address} (300 rows)"
        )),
        "{}",
        text(&out.stderr)
    );
    server.stop();
}

#[test]
fn a_comparison_runs_the_same_schedule_against_each_target_in_turn() {
    let server = TestServer::start();
    let address = server.address().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("cmp.json");
    let html = dir.path().join("cmp.html");
    let hdr = dir.path().join("cmp.hlog");
    let (json_arg, html_arg, hdr_arg) = (
        json.to_str().unwrap(),
        html.to_str().unwrap(),
        hdr.to_str().unwrap(),
    );
    let args = [
        "--engine",
        "strata",
        "--thrift",
        &address,
        "--create",
        "--repeat",
        "2",
        "--records",
        "500",
        "--mix",
        "get=0.8,update=0.2",
        "--rate",
        "200..400",
        "--step",
        "200",
        "--step-every",
        "0.6s",
        "--warmup",
        "0.2s",
        "--interval",
        "200ms",
        "--threads",
        "2",
        "--slo",
        "p99<1s",
        "--view",
        "lines",
        "--json",
        json_arg,
        "--report",
        html_arg,
        "--hdr-log",
        hdr_arg,
    ];
    let out = loadgen(&args);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Each target once, then each again; every run with its own intervals and summary.
    let thrift = format!("thrift {address}");
    let banners: Vec<&str> = stdout.lines().filter(|l| l.starts_with("== ")).collect();
    let runs: Vec<&&str> = banners.iter().filter(|l| l.contains(", run ")).collect();
    assert_eq!(
        runs,
        [
            &"== strata, run 1 of 2",
            &format!("== {thrift}, run 1 of 2").as_str(),
            &"== strata, run 2 of 2",
            &format!("== {thrift}, run 2 of 2").as_str(),
        ],
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("== comparison: strata, {thrift} (open loop")),
        "{stdout}"
    );
    assert!(stdout.contains("2 runs each, interleaved"), "{stdout}");
    let value = json_of(&json);
    let runs = value["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    for (run, (engine, number)) in runs.iter().zip([
        ("strata", 1),
        (thrift.as_str(), 1),
        ("strata", 2),
        (thrift.as_str(), 2),
    ]) {
        assert_eq!(run["engine"], engine);
        assert_eq!(run["run"], number);
        assert_eq!(run["summary"]["target"], engine);
        assert_eq!(run["summary"]["errors"], 0);
        // The same phases for every run: warm-up and two steps.
        let rates: Vec<f64> = run["summary"]["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["target_rate"].as_f64().unwrap())
            .collect();
        assert_eq!(rates, [200.0, 200.0, 400.0]);
    }
    let comparison = &value["comparison"];
    assert_eq!(comparison["repeat"], 2);
    assert_eq!(comparison["slo"], "p99<1s");
    let engines = comparison["engines"].as_array().unwrap();
    assert_eq!(engines.len(), 2);
    assert_eq!(engines[1]["engine"], thrift);
    for engine in engines {
        assert_eq!(engine["runs"], 2);
        assert_eq!(
            engine["highest_rate_meeting_slo_each_run"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        let steps = engine["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 2);
        // A step's latencies are over both runs' operations.
        assert!(steps[1]["corrected"]["p50_us"].as_f64().unwrap() > 0.0);
    }
    // One page: the step charts, the spectra, and a chart pair per run side by side.
    let page = std::fs::read_to_string(&html).unwrap();
    let doc = roxmltree::Document::parse_with_options(&page, xhtml()).unwrap();
    let svgs = doc.descendants().filter(|n| n.has_tag_name("svg")).count();
    assert_eq!(
        svgs,
        3 + 4 * 2,
        "step latency, step throughput, spectra; 4 runs x 2"
    );
    assert!(page.contains("Latency spectra"), "{page}");
    // The HdrHistogram log tags each run's histograms.
    let log = std::fs::read_to_string(&hdr).unwrap();
    for tag in [
        "Tag=strata.1.corrected,",
        "Tag=strata.2.service,",
        &format!("Tag=thrift-{address}.2.corrected,"),
    ] {
        assert!(log.contains(tag), "{tag} missing");
    }
    server.stop();
}

#[test]
fn options_that_do_not_apply_to_the_targets_are_refused() {
    let server = TestServer::start();
    let address = server.address().to_string();
    let thrift = ["--thrift", address.as_str()];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [&thrift[..], &["--regions", "4"]].concat(),
            "--regions: Thrift1's createTable cannot pre-split",
        ),
        (
            [&thrift[..], &["--cache-mb", "64"]].concat(),
            "a Thrift server's block cache is the server's own",
        ),
        (
            [&thrift[..], &["--durability", "sync"]].concat(),
            "a Thrift server's writes have the server's durability",
        ),
        (
            vec!["--dry-run", "--engine", "strata"],
            "--dry-run drives no engine",
        ),
        (
            [&thrift[..], &["--data", "/nonexistent"]].concat(),
            "--data opens one strata database",
        ),
        (
            vec!["--engine", "mysql"],
            "one of strata, rocksdb, fjall, all",
        ),
        (vec!["--repeat", "0"], "--repeat 0: must be in 1..=100"),
    ];
    for (args, want) in cases {
        let mut all = args.clone();
        all.extend(SHORT_RUN);
        let out = loadgen(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
    if !cfg!(feature = "peers") {
        let out = loadgen(&["--engine", "strata,rocksdb"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            text(&out.stderr).contains("--engine rocksdb: not in this build"),
            "{}",
            text(&out.stderr)
        );
    }
    server.stop();
}

/// A dry run of a three-step ramp (200, 400, 600 ops/s, 0.4 s each), paused from `pause_at`
/// for 0.25 s when given.
fn ramp(pause_at: Option<Duration>) -> LoadSpec {
    LoadSpec {
        rate: RateSpec::Steps(vec![200.0, 400.0, 600.0]),
        step_every: Duration::from_millis(400),
        warmup: Duration::from_millis(100),
        duration: Duration::ZERO,
        threads: 1,
        arrival: Arrival::Uniform,
        // Operations held by the pause for longer are dropped: the step does not hold its
        // rate.
        max_lag: Duration::from_millis(150),
        mix: Mix::parse("get=1").unwrap(),
        chooser: Chooser::new(Distribution::Uniform),
        keys: KeySpace::new(KeyPattern::Hashed, 16).unwrap(),
        value_bytes: 10,
        scan_rows: 1,
        batch: 1,
        records: 100,
        interval: Duration::from_millis(100),
        slo: Some(Slo::parse("p99<100ms").unwrap()),
        seed: 5,
        pause: pause_at.map(|at| (at, Duration::from_millis(250))),
    }
}

#[test]
fn the_spectra_are_compared_at_the_highest_step_every_engine_held() {
    let run = |engine: &str, pause_at: Option<Duration>| EngineRun {
        engine: engine.to_owned(),
        run: 1,
        started: std::time::SystemTime::now(),
        summary: loadgen::run(ramp(pause_at), Target::DryRun, |_| {}).unwrap(),
    };
    // "slow" is paused in its third step (0.9..1.3 s): operations wait past --max-lag.
    let runs = vec![
        run("fast", None),
        run("slow", Some(Duration::from_millis(950))),
    ];
    let slo = Some(Slo::parse("p99<100ms").unwrap());
    let comparison = Comparison::new(&runs, slo, Some("p99<100ms")).unwrap();
    let [fast, slow] = comparison.engines.as_slice() else {
        panic!("{comparison:?}")
    };
    assert_eq!(slow.steps.len(), 3);
    assert_eq!(slow.steps[2].held_runs, 0, "{:?}", slow.steps[2]);
    assert!(slow.steps[2].dropped > 0);
    assert_eq!(slow.steps[2].met_slo_runs, Some(0));
    assert!(slow.highest_rate_meeting_slo.is_none_or(|r| r <= 400.0));
    // On a quiet machine every other step holds; a busy one may drop a few operations of
    // a dry run too, and the shared step is then lower still.
    let held = |e: &strata_tools::loadgen::compare::EngineSummary, step: usize| {
        e.steps[step].held_runs == 1
    };
    assert!(comparison.shared_step.is_none_or(|s| s < 2));
    if held(fast, 0) && held(fast, 1) && held(slow, 0) && held(slow, 1) {
        assert_eq!(comparison.shared_step, Some(1));
        assert_eq!(comparison.step_rate(1), Some(400.0));
        let text = comparison.text();
        assert!(
            text.contains("at 400 ops/s, the highest rate every engine held:"),
            "{text}"
        );
        // The third step of "slow" is marked as not held.
        let third = text
            .lines()
            .find(|l| l.trim_start().starts_with("600"))
            .unwrap();
        assert!(third.trim_end().ends_with('!'), "{third}");
    }
    // The SVG report draws the three step charts and both runs.
    let mut svg = Vec::new();
    plots::write_comparison_report(&comparison, &runs, ReportFormat::Svg, "test", &mut svg)
        .unwrap();
    let svg = String::from_utf8(svg).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for want in ["fast, run 1", "slow, run 1", "SLO p99<100ms"] {
        assert!(texts.iter().any(|t| t.contains(want)), "{want}: {texts:?}");
    }
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Latency by percentile at")),
        "{texts:?}"
    );
}

#[test]
fn a_target_without_regions_says_so_instead_of_a_region_table() {
    let mut summary = loadgen::run(ramp(None), Target::DryRun, |_| {}).unwrap();
    // As a RocksDB or fjall run reports: no regions.
    summary.regions.clear();
    summary.target = "rocksdb".to_owned();
    let text = summary.text();
    assert!(
        text.contains(
            "\n== regions: none (rocksdb has no regions; operations are not broken down by key range)\n"
        ),
        "{text}"
    );
    assert!(!text.contains("max/mean imbalance"), "{text}");
    let mut page = Vec::new();
    plots::write_report(&summary, ReportFormat::Html, "test", &mut page).unwrap();
    let page = String::from_utf8(page).unwrap();
    roxmltree::Document::parse_with_options(&page, xhtml()).unwrap();
    assert!(page.contains("<p>Target: rocksdb</p>"), "{page}");
    assert!(
        page.contains("rocksdb has no regions: operations are not broken down by key range."),
        "{page}"
    );
    assert!(!page.contains("<h2>Regions</h2>"), "{page}");
    // Three charts, no heat map.
    assert_eq!(page.matches("<svg").count(), 3);
}
