//! strata-loadgen's views: the `--report` plots (HTML and SVG, parsed as
//! XML), bad report paths, and the live view on a pseudo-terminal.

// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use strata::{Db, FamilyDescriptor, TableDescriptor};
use strata_tools::loadgen::keys::{Chooser, KeySpace};
use strata_tools::loadgen::plots::{self, HEATMAP_LEGEND_STEPS, HeatMap, ReportFormat};
use strata_tools::loadgen::report::RunSummary;
use strata_tools::loadgen::schedule::Arrival;
use strata_tools::loadgen::spec::{Distribution, KeyPattern, Mix, RateSpec};
use strata_tools::loadgen::{self, LoadSpec, Target};

/// A 1.2 s run (0.3 s of it warm-up) at 2000 ops/s on 4 regions, with a
/// 0.2 s pause so that one interval is a stall.
fn short_run() -> RunSummary {
    let spec = LoadSpec {
        rate: RateSpec::Steps(vec![2000.0]),
        step_every: Duration::from_secs(1),
        warmup: Duration::from_millis(300),
        duration: Duration::from_millis(900),
        threads: 2,
        arrival: Arrival::Uniform,
        max_lag: Duration::from_secs(1),
        mix: Mix::parse("get=0.5,update=0.5").unwrap(),
        chooser: Chooser::new(Distribution::Uniform),
        keys: KeySpace::new(KeyPattern::Hashed, 16).unwrap(),
        value_bytes: 50,
        scan_rows: 10,
        batch: 4,
        records: 2000,
        interval: Duration::from_millis(150),
        slo: None,
        seed: 3,
        pause: Some((Duration::from_millis(600), Duration::from_millis(200))),
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    let t = db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap();
    for key in spec.keys.split_keys(4, spec.records).unwrap() {
        t.split(Some(&key)).unwrap();
    }
    loadgen::preload(&t, &spec).unwrap();
    let summary = loadgen::run(spec, Target::Table(t), |_| {}).unwrap();
    db.close().unwrap();
    summary
}

/// The trimmed text of every `<text>` element.
fn texts(doc: &roxmltree::Document<'_>) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or_default().trim().to_string())
        .collect()
}

/// Elements named `tag` whose attribute `attribute` is `value`.
fn count_with(doc: &roxmltree::Document<'_>, tag: &str, attribute: &str, value: &str) -> usize {
    doc.descendants()
        .filter(|n| n.has_tag_name(tag) && n.attribute(attribute) == Some(value))
        .count()
}

#[test]
fn the_report_plots_throughput_latency_the_spectrum_and_load_per_region() {
    let summary = short_run();
    assert!(summary.intervals.iter().any(|i| i.stall));
    let charts = plots::charts(&summary).unwrap();

    let throughput = roxmltree::Document::parse(&charts.throughput).unwrap();
    let t = texts(&throughput);
    for wanted in [
        "Throughput per interval",
        "time (s)",
        "operations per second",
        "target ops/s",
        "achieved ops/s",
        "warm-up",
        "stall",
    ] {
        assert!(t.iter().any(|x| x == wanted), "{wanted} not in {t:?}");
    }

    let latency = roxmltree::Document::parse(&charts.latency).unwrap();
    let t = texts(&latency);
    assert!(t.iter().any(|x| x.starts_with("Latency per interval")));
    assert!(t.iter().any(|x| x == "latency (us, log scale)"));
    // Six series, each a line in its own colour plus its legend key.
    for (name, colour) in [
        ("corrected p50", "#FD8D3C"),
        ("corrected p99", "#E31A1C"),
        ("corrected p99.9", "#800026"),
        ("service p50", "#6BAED6"),
        ("service p99", "#2171B5"),
        ("service p99.9", "#08306B"),
    ] {
        assert!(t.iter().any(|x| x == name), "{name} not in {t:?}");
        assert!(
            count_with(&latency, "polyline", "stroke", colour) >= 2,
            "{name}: no line in {colour}"
        );
    }

    let spectrum = roxmltree::Document::parse(&charts.spectrum).unwrap();
    let t = texts(&spectrum);
    assert!(t.iter().any(|x| x.starts_with("Latency by percentile")));
    assert!(
        t.iter()
            .any(|x| x == "percentile (log scale of 1 / (1 - p))")
    );
    // The x axis is labelled in percentiles.
    for label in ["0%", "90%", "99%"] {
        assert!(t.iter().any(|x| x == label), "{label} not in {t:?}");
    }
    for (name, colour) in [("corrected", "#E31A1C"), ("service", "#2171B5")] {
        assert!(t.iter().any(|x| x == name));
        assert!(count_with(&spectrum, "polyline", "stroke", colour) >= 2);
    }

    let regions = roxmltree::Document::parse(&charts.regions).unwrap();
    let t = texts(&regions);
    assert!(t.iter().any(|x| x.starts_with("Load per region over time")));
    for label in ["#0", "#1", "#2", "#3"] {
        assert!(t.iter().any(|x| x == label), "{label} not in {t:?}");
    }
    // One cell per region and interval, the colour scale, the background.
    let map = HeatMap::of(&summary.region_timeline);
    assert_eq!(map.rows.len(), 4);
    assert_eq!(map.columns.len(), summary.intervals.len());
    let rects = regions
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .count();
    assert_eq!(
        rects,
        1 + 4 * summary.intervals.len() + HEATMAP_LEGEND_STEPS
    );
    // The cells add up to the operations of the run, warm-up included.
    let cell_ops: f64 = map
        .columns
        .iter()
        .zip(&map.ops_per_s)
        .map(|((from, to), cells)| cells.iter().sum::<f64>() * (to - from))
        .sum();
    let ops: u64 = summary.intervals.iter().map(|i| i.ops).sum();
    assert!((cell_ops - ops as f64).abs() < 1.0, "{cell_ops} vs {ops}");

    // The HTML page is well-formed and holds the four charts and both tables.
    let mut page = Vec::new();
    plots::write_report(
        &summary,
        ReportFormat::Html,
        "strata-loadgen --test",
        &mut page,
    )
    .unwrap();
    let page = String::from_utf8(page).unwrap();
    // The page starts with <!DOCTYPE html>, which XML calls a DTD.
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(&page, options).unwrap();
    assert_eq!(
        doc.descendants().filter(|n| n.has_tag_name("svg")).count(),
        4
    );
    let headings: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("h2"))
        .filter_map(|n| n.text())
        .collect();
    assert_eq!(
        headings,
        [
            "Summary",
            "Throughput",
            "Latency over time",
            "Latency spectrum",
            "Load per region",
            "Regions"
        ]
    );
    let tables: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("table"))
        .collect();
    assert_eq!(tables.len(), 2);
    // Phases: header, warm-up, measured. Regions: header and four.
    let rows = |t: &roxmltree::Node<'_, '_>| t.children().filter(|n| n.has_tag_name("tr")).count();
    assert_eq!(rows(&tables[0]), 3);
    assert_eq!(rows(&tables[1]), 5);
    assert!(page.contains("<code>strata-loadgen --test</code>"));

    // The SVG file stacks the four charts in one image.
    let mut svg = Vec::new();
    plots::write_report(&summary, ReportFormat::Svg, "", &mut svg).unwrap();
    let svg = String::from_utf8(svg).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let t = texts(&doc);
    for title in [
        "Throughput per interval",
        "Latency by percentile after warm-up (the spectrum)",
        "Load per region over time (operations per second)",
    ] {
        assert!(t.iter().any(|x| x == title), "{title}");
    }
}

#[test]
fn report_paths_are_checked_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("run.html");
    for (path, want) in [
        (
            dir.path().join("run.png"),
            "the name must end in .html or .svg".to_string(),
        ),
        (missing.clone(), format!("--report {}:", missing.display())),
    ] {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_strata-loadgen"))
            .arg("--report")
            .arg(&path)
            // A run that would take a minute if it started.
            .args(["--dry-run", "--duration", "60s", "--warmup", "0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{path:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&want), "{path:?}: {stderr}");
        assert!(started.elapsed() < Duration::from_secs(30));
    }
    // A good path gets a report.
    let path = dir.path().join("run.svg");
    let status = Command::new(env!("CARGO_BIN_EXE_strata-loadgen"))
        .arg("--report")
        .arg(&path)
        .args([
            "--dry-run",
            "--rate",
            "1000",
            "--duration",
            "0.4s",
            "--warmup",
            "0",
            "--interval",
            "100ms",
        ])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let svg = std::fs::read_to_string(&path).unwrap();
    roxmltree::Document::parse(&svg).unwrap();
}

/// A new pseudo-terminal: its master side, and the slave side for the
/// program (as tools/tests/interactive.rs opens one for the shell).
fn open_pty() -> (File, OwnedFd) {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    let size = libc::winsize {
        ws_row: 40,
        ws_col: 160,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes one descriptor through each of the first two pointers, which
    // point to the live locals above; it reads `size`, also live; name and termios may be
    // null.
    let status = unsafe {
        libc::openpty(
            &raw mut master,
            &raw mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &raw const size,
        )
    };
    assert_eq!(status, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty succeeded, so both are open descriptors that nothing else owns.
    unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

#[test]
fn on_a_terminal_the_live_view_is_drawn_each_interval_and_cleared_at_the_end() {
    let (master, slave) = open_pty();
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata-loadgen"))
        .args([
            "--dry-run",
            "--rate",
            "2000",
            "--warmup",
            "0.3s",
            "--duration",
            "0.9s",
            "--interval",
            "300ms",
        ])
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    let output = Arc::new(Mutex::new(Vec::new()));
    let collected = output.clone();
    let mut reader = master;
    let reading = std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        // Ends with an error (EIO) once the program has exited and the
        // terminal has no writer left.
        while let Ok(read @ 1..) = reader.read(&mut buffer) {
            collected
                .lock()
                .unwrap()
                .extend_from_slice(buffer.get(..read).unwrap_or_default());
        }
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!(
                "strata-loadgen did not exit; it printed:\n{}",
                String::from_utf8_lossy(&output.lock().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    reading.join().unwrap();
    let text = String::from_utf8_lossy(&output.lock().unwrap()).into_owned();
    assert!(status.success(), "{status:?}: {text}");
    // The view, with its headings, drawn before the first interval and
    // after each of the four.
    assert_eq!(
        text.matches("strata-loadgen open loop, 4 workers").count(),
        5,
        "{text}"
    );
    assert!(text.contains("warm-up at 2000 ops/s"), "{text}");
    assert!(text.contains("step 1 of 1 at 2000 ops/s"), "{text}");
    assert_eq!(text.matches("hottest regions").count(), 4, "{text}");
    assert!(text.contains("100.0%"), "{text}");
    // Redrawn in place: before each of the four intervals' draws and at the
    // end, the cursor moves up over the old view and clears its lines (ESC
    // [ 2 K), at least three lines each time.
    assert!(text.matches("\u{1b}[2K").count() >= 5 * 3, "{text}");
    // The interval lines scroll above the view as they would in a pipe.
    for t in ["0.3", "0.6", "0.9", "1.2"] {
        assert!(text.contains(&format!("{t:>7}      2000 ")), "{t}: {text}");
    }
    let summary_at = text.find("== summary").expect("a summary");
    let last_view = text.rfind("hottest regions").unwrap();
    assert!(summary_at > last_view);
    // After the view is cleared the screen ends with the plain summary: no
    // escape codes after it.
    assert!(!text[summary_at..].contains('\u{1b}'), "{text}");
}

#[test]
fn in_a_pipe_the_output_is_plain_interval_lines_that_parse() {
    let out = Command::new(env!("CARGO_BIN_EXE_strata-loadgen"))
        .args([
            "--dry-run",
            "--rate",
            "1000",
            "--warmup",
            "0.2s",
            "--duration",
            "0.6s",
            "--interval",
            "200ms",
        ])
        .env("TERM", "xterm")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // No live view and no escape codes: scripts read this.
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(!text.contains("hottest regions"), "{text}");
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .filter(|w| *w != "|")
        .collect();
    assert_eq!(
        header,
        [
            "t(s)", "target", "rate", "lag99", "c.p50", "c.p99", "c.p999", "c.max", "s.p50",
            "s.p99", "s.p999", "errors", "dropped"
        ]
    );
    let mut times = Vec::new();
    for line in lines.take_while(|l| !l.is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().filter(|w| *w != "|").collect();
        assert!(fields.len() >= header.len(), "{line}");
        times.push(fields[0].parse::<f64>().unwrap());
        assert_eq!(fields[1], "1000", "{line}");
        let rate: f64 = fields[2].parse().unwrap();
        // 1000/s scheduled; loose for a busy test machine.
        assert!((500.0..=1500.0).contains(&rate), "{line}");
        for latency in &fields[3..11] {
            assert!(
                latency.ends_with("us") || latency.ends_with("ms") || latency.ends_with('s'),
                "{latency} in {line}"
            );
        }
        assert_eq!(fields[11], "0", "{line}");
        let flags = &fields[header.len()..];
        assert!(
            flags.iter().all(|f| ["warm-up", "STALL"].contains(f)),
            "{line}"
        );
    }
    assert_eq!(times, [0.2, 0.4, 0.6, 0.8]);
    assert!(text.contains("\n== summary (open loop"), "{text}");
}
