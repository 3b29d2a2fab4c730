//! Results: one record per engine, workload and repetition; the table on
//! stdout (medians and min-max over repetitions, ratios between engines);
//! the JSON file.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::cold::EvictionReport;
use crate::error::{BenchError, Result};

/// The untimed load that preceded a read workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadResult {
    /// Records written.
    pub ops: u64,
    /// Seconds for the writes and the final flush (`load_finished`).
    pub seconds: f64,
    /// `ops / seconds`.
    pub ops_per_sec: f64,
    /// Bytes written to disk by the load, including the settling after it.
    pub bytes_written: u64,
}

/// Group commit of strata's WAL during the timed phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WalReport {
    /// Groups written.
    pub groups: u64,
    /// Frames (row mutations) written.
    pub frames: u64,
    /// `frames / groups`.
    pub avg_group_size: f64,
    /// Syncs performed.
    pub syncs: u64,
    /// Average time of a write+sync submission, microseconds.
    pub avg_sync_us: f64,
}

/// One engine running one workload once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Engine name.
    pub engine: String,
    /// Workload name.
    pub workload: String,
    /// Repetition index (0-based).
    pub run: u32,
    /// Records loaded or written (`--num`).
    pub num: u64,
    /// Client threads.
    pub threads: usize,
    /// Key size in bytes.
    pub key_size: usize,
    /// Value size in bytes.
    pub value_size: usize,
    /// Durability of timed writes.
    pub durability: String,
    /// Operations timed (a write, a read, a seek with its entries, a batch
    /// of 64 keys, or for `scan` one entry).
    pub ops: u64,
    /// Seconds of the timed phase, including the final flush of write
    /// workloads (`finish_seconds` of it).
    pub seconds: f64,
    /// Of `seconds`, the final flush/sync (`load_finished`).
    pub finish_seconds: f64,
    /// `ops / seconds`.
    pub ops_per_sec: f64,
    /// Bytes of keys and values written or returned, per second, in MB (10^6).
    pub mb_per_sec: f64,
    /// Median latency, microseconds (none for `scan`).
    pub p50_us: Option<f64>,
    /// 99th percentile latency, microseconds.
    pub p99_us: Option<f64>,
    /// 99.9th percentile latency, microseconds.
    pub p999_us: Option<f64>,
    /// Highest latency, microseconds.
    pub max_us: Option<f64>,
    /// CPU seconds of the process (all threads) from the start of the timed
    /// phase until the engine settled (for a cold run including the
    /// evictions' system time, at most `eviction.seconds`).
    pub cpu_seconds: f64,
    /// Bytes written to disk from the start of the timed phase until the
    /// engine settled (`write_bytes` of `/proc/self/io`).
    pub bytes_written: u64,
    /// `bytes_written` over the bytes of keys and values the workload wrote.
    pub write_amp: Option<f64>,
    /// Allocated bytes of the database directory after settling (`du`).
    pub disk_bytes: u64,
    /// Sum of file lengths of the directory after settling.
    pub disk_bytes_apparent: u64,
    /// `disk_bytes` over the bytes of keys and values of the live records.
    pub space_amp: Option<f64>,
    /// Live records after the run.
    pub live_records: u64,
    /// Peak resident set size of the process during the timed phase.
    pub peak_rss_bytes: u64,
    /// Keys looked up by point reads.
    pub reads: u64,
    /// Point reads that found their key.
    pub found: u64,
    /// Records written in the timed phase (for `readwhilewriting`, by the
    /// writer thread).
    pub writes: u64,
    /// Entries returned by scans.
    pub scanned: u64,
    /// Engine counters after settling, cumulative since the engine opened
    /// (load included): for strata its `Db::stats()`.
    pub engine_counters: std::collections::BTreeMap<String, u64>,
    /// How each engine counter changed during the timed phase (read just
    /// before its first operation and just after its last, before settling;
    /// negative for a gauge that shrank). For a cold run, strata's
    /// `block_cache_hits` and `block_cache_misses` here show how much its
    /// block cache still served.
    #[serde(default)]
    pub timed_counters: std::collections::BTreeMap<String, i64>,
    /// strata's I/O back end (`uring` or `sync`).
    pub io_backend: Option<String>,
    /// How the engine performed `multiget` batches.
    pub multiget_method: Option<String>,
    /// The untimed load before the timed phase.
    pub load: Option<LoadResult>,
    /// strata's WAL group commit in the timed phase.
    pub wal: Option<WalReport>,
    /// Cold reads (`--cold`): the page cache of every file of the database
    /// directory was evicted before every timed operation, untimed.
    #[serde(default)]
    pub cold: bool,
    /// Warm reads (`--warm`): one untimed full pass over the loaded data
    /// filled the caches before the timed phase.
    #[serde(default)]
    pub warm: bool,
    /// Block cache capacity of the engine in bytes (`--cache-mb`).
    #[serde(default)]
    pub block_cache_bytes: u64,
    /// The evictions of a cold run.
    #[serde(default)]
    pub eviction: Option<EvictionReport>,
    /// The phases of a `bulkload` run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bulk: Option<crate::workload::BulkPhases>,
}

/// Writes `results` as a JSON array to `path`.
pub fn write_json(path: &Path, results: &[RunResult]) -> Result<()> {
    let text = serde_json::to_string_pretty(results)?;
    std::fs::write(path, text + "\n")
        .map_err(|e| BenchError::io(format!("writing {}", path.display()), e))
}

/// Median of `values` (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The runs of one engine on one workload.
struct Group<'a> {
    /// The workload, marked `[cold]` for cold runs.
    workload: String,
    /// The engine, with strata's I/O back end when runs compare back ends
    /// (`strata/uring`).
    engine: String,
    runs: Vec<&'a RunResult>,
}

impl Group<'_> {
    fn median_of(&self, f: impl Fn(&RunResult) -> f64) -> f64 {
        median(&self.runs.iter().map(|r| f(r)).collect::<Vec<_>>())
    }

    fn median_opt(&self, f: impl Fn(&RunResult) -> Option<f64>) -> Option<f64> {
        let values: Vec<f64> = self.runs.iter().filter_map(|r| f(r)).collect();
        (!values.is_empty()).then(|| median(&values))
    }

    fn min_max(&self, f: impl Fn(&RunResult) -> f64) -> (f64, f64) {
        self.runs
            .iter()
            .map(|r| f(r))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    }
}

/// strata's name in the table: `strata/uring` and `strata/sync` when the
/// results hold more than one back end for it, `strata` otherwise.
pub fn engine_label(r: &RunResult, compares_io: bool) -> String {
    match (&r.io_backend, compares_io && r.engine == "strata") {
        (Some(io), true) => format!("{}/{io}", r.engine),
        _ => r.engine.clone(),
    }
}

/// Workload name in the table: cold and warm runs are marked, so they can
/// never be mistaken for runs that read each block for the first time.
fn workload_label(r: &RunResult) -> String {
    if r.cold {
        format!("{} [cold]", r.workload)
    } else if r.warm {
        format!("{} [warm]", r.workload)
    } else {
        r.workload.clone()
    }
}

fn groups(results: &[RunResult]) -> Vec<Group<'_>> {
    let mut strata_io: Vec<Option<&str>> = Vec::new();
    for r in results.iter().filter(|r| r.engine == "strata") {
        if !strata_io.contains(&r.io_backend.as_deref()) {
            strata_io.push(r.io_backend.as_deref());
        }
    }
    let compares_io = strata_io.len() > 1;
    let mut groups: Vec<Group<'_>> = Vec::new();
    for r in results {
        let (workload, engine) = (workload_label(r), engine_label(r, compares_io));
        match groups
            .iter_mut()
            .find(|g| g.workload == workload && g.engine == engine)
        {
            Some(g) => g.runs.push(r),
            None => groups.push(Group {
                workload,
                engine,
                runs: vec![r],
            }),
        }
    }
    groups
}

/// `1234567.8` as `1,234,568`.
fn thousands(value: f64) -> String {
    if !value.is_finite() {
        return "-".into();
    }
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if value < 0.0 { format!("-{out}") } else { out }
}

fn latency(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(v) if v < 10.0 => format!("{v:.2}"),
        Some(v) if v < 1000.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.0}"),
    }
}

fn amp(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{v:.2}"))
}

fn mib(bytes: f64) -> String {
    format!("{:.1}", bytes / (1024.0 * 1024.0))
}

/// The table printed on stdout: one row per engine and workload with the
/// medians over repetitions (and the min-max of ops/s when repeated), then
/// the loads, ratios between engines, and strata's WAL group commit.
pub fn render_table(results: &[RunResult]) -> String {
    let groups = groups(results);
    let repeated = groups.iter().any(|g| g.runs.len() > 1);
    let mut rows: Vec<Vec<String>> = vec![
        [
            "workload",
            "engine",
            "ops",
            "ops/s",
            "MB/s",
            "flush s",
            "p50 us",
            "p99 us",
            "p99.9 us",
            "max us",
            "cpu s",
            "written MiB",
            "w-amp",
            "disk MiB",
            "s-amp",
            "peak RSS MiB",
        ]
        .iter()
        .map(|s| (*s).to_string())
        .collect(),
    ];
    if repeated {
        rows[0].insert(4, "ops/s min-max".into());
    }
    for g in &groups {
        let mut row = vec![
            g.workload.clone(),
            g.engine.clone(),
            thousands(g.median_of(|r| r.ops as f64)),
            thousands(g.median_of(|r| r.ops_per_sec)),
            format!("{:.1}", g.median_of(|r| r.mb_per_sec)),
            format!("{:.2}", g.median_of(|r| r.finish_seconds)),
            latency(g.median_opt(|r| r.p50_us)),
            latency(g.median_opt(|r| r.p99_us)),
            latency(g.median_opt(|r| r.p999_us)),
            latency(g.median_opt(|r| r.max_us)),
            format!("{:.2}", g.median_of(|r| r.cpu_seconds)),
            mib(g.median_of(|r| r.bytes_written as f64)),
            amp(g.median_opt(|r| r.write_amp)),
            mib(g.median_of(|r| r.disk_bytes as f64)),
            amp(g.median_opt(|r| r.space_amp)),
            mib(g.median_of(|r| r.peak_rss_bytes as f64)),
        ];
        if repeated {
            let (lo, hi) = g.min_max(|r| r.ops_per_sec);
            row.insert(4, format!("{}-{}", thousands(lo), thousands(hi)));
        }
        rows.push(row);
    }
    let mut out = String::new();
    push_aligned(&mut out, &rows);

    let loads: Vec<Vec<String>> = groups
        .iter()
        .filter(|g| g.runs.iter().all(|r| r.load.is_some()))
        .map(|g| {
            let load =
                |f: fn(&LoadResult) -> f64| g.median_of(|r| r.load.as_ref().map_or(f64::NAN, f));
            vec![
                g.workload.clone(),
                g.engine.clone(),
                thousands(load(|l| l.ops as f64)),
                format!("{:.2}", load(|l| l.seconds)),
                thousands(load(|l| l.ops_per_sec)),
                mib(load(|l| l.bytes_written as f64)),
            ]
        })
        .collect();
    if !loads.is_empty() {
        out.push_str("\nuntimed loads (fillrandom order, then flush and settle):\n");
        let mut rows = vec![
            [
                "workload",
                "engine",
                "records",
                "seconds",
                "records/s",
                "written MiB",
            ]
            .iter()
            .map(|s| (*s).to_string())
            .collect(),
        ];
        rows.extend(loads);
        push_aligned(&mut out, &rows);
    }

    let ratios = ratio_rows(&groups);
    if !ratios.is_empty() {
        out.push_str("\nops/s ratios (medians):\n");
        push_aligned(&mut out, &ratios);
    }

    let bulk_lines: Vec<String> = groups
        .iter()
        .filter(|g| g.runs.iter().any(|r| r.bulk.is_some()))
        .map(|g| {
            let phase = |f: fn(&crate::workload::BulkPhases) -> f64| {
                g.median_of(|r| r.bulk.as_ref().map_or(f64::NAN, f))
            };
            let input_mb =
                g.median_of(|r| (r.writes * (r.key_size + r.value_size) as u64) as f64 / 1e6);
            let build = phase(|b| b.build_seconds);
            format!(
                "  {} {}: build {:.3} s ({:.0} MB/s of input), ingest {:.1} ms, files {}, \
                 reads after {}/s ({} reads)",
                g.engine,
                g.workload,
                build,
                input_mb / build.max(1e-9),
                phase(|b| b.ingest_seconds) * 1e3,
                mib(phase(|b| b.file_bytes as f64)),
                thousands(phase(|b| b.reads_after_per_sec)),
                thousands(phase(|b| b.reads_after as f64)),
            )
        })
        .collect();
    if !bulk_lines.is_empty() {
        out.push_str(
            "\nbulkload phases (medians; files in MiB; the reads after the load are not in ops/s):\n",
        );
        for line in bulk_lines {
            out.push_str(&line);
            out.push('\n');
        }
    }

    let cold_lines: Vec<String> = groups
        .iter()
        .filter(|g| g.runs.iter().any(|r| r.cold))
        .map(|g| {
            let eviction = |f: fn(&EvictionReport) -> f64| {
                g.median_of(|r| r.eviction.as_ref().map_or(f64::NAN, f))
            };
            let mut line = format!(
                "  {} {}: {} evictions of {} files, {:.2} s untimed, {} listings",
                g.engine,
                g.workload,
                thousands(eviction(|e| e.evictions as f64)),
                thousands(eviction(|e| e.files as f64)),
                eviction(|e| e.seconds),
                thousands(eviction(|e| e.listings as f64)),
            );
            // Engines that count their block cache (strata): what it still
            // served during the timed phase.
            let per_op = |name: &str| {
                g.median_of(|r| {
                    r.timed_counters
                        .get(name)
                        .map_or(f64::NAN, |&v| v as f64 / r.ops.max(1) as f64)
                })
            };
            let (hits, misses) = (per_op("block_cache_hits"), per_op("block_cache_misses"));
            if hits.is_finite() && misses.is_finite() {
                let _ = write!(
                    line,
                    "; block cache lookups per op: {hits:.1} hits, {misses:.1} misses"
                );
            }
            line
        })
        .collect();
    if !cold_lines.is_empty() {
        let mut caches: Vec<u64> = groups
            .iter()
            .flat_map(|g| {
                g.runs
                    .iter()
                    .filter(|r| r.cold)
                    .map(|r| r.block_cache_bytes)
            })
            .collect();
        caches.sort_unstable();
        caches.dedup();
        let caches: Vec<String> = caches.iter().map(|&c| mib(c as f64)).collect();
        let _ = writeln!(
            out,
            "\n[cold]: before every timed operation (multiget: every batch; scan: once, before \
             the scan) the page cache of \
             every file of the database directory was evicted (posix_fadvise DONTNEED); the \
             evictions are in no latency and not in ops/s; block cache {} MiB (medians):",
            caches.join(", ")
        );
        for line in cold_lines {
            out.push_str(&line);
            out.push('\n');
        }
    }

    let wal_lines: Vec<String> = groups
        .iter()
        .filter(|g| g.runs.iter().all(|r| r.wal.as_ref().is_some_and(|w| w.frames > 0)))
        .map(|g| {
            let wal = |f: fn(&WalReport) -> f64| g.median_of(|r| r.wal.as_ref().map_or(f64::NAN, f));
            format!(
                "  {} {} (io {}): {} frames in {} groups (avg {:.1} per group), {} syncs, avg write+sync {:.0} us",
                g.engine,
                g.workload,
                g.runs.first().and_then(|r| r.io_backend.as_deref()).unwrap_or("?"),
                thousands(wal(|w| w.frames as f64)),
                thousands(wal(|w| w.groups as f64)),
                wal(|w| w.avg_group_size),
                thousands(wal(|w| w.syncs as f64)),
                wal(|w| w.avg_sync_us),
            )
        })
        .collect();
    if !wal_lines.is_empty() {
        out.push_str("\nWAL group commit during the timed phase (medians):\n");
        for line in wal_lines {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Rows of strata's ops/s over each peer's, per workload; when strata ran
/// with both I/O back ends, each back end over each peer and a last column
/// io_uring over sync.
fn ratio_rows(groups: &[Group<'_>]) -> Vec<Vec<String>> {
    let is_strata = |engine: &str| engine == "strata" || engine.starts_with("strata/");
    let (mut stratas, mut peers): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    for g in groups {
        let list = if is_strata(&g.engine) {
            &mut stratas
        } else {
            &mut peers
        };
        if !list.contains(&g.engine.as_str()) {
            list.push(&g.engine);
        }
    }
    // (numerator, denominator, column title)
    let mut columns: Vec<(&str, &str, String)> = Vec::new();
    for &strata in &stratas {
        for &peer in &peers {
            columns.push((strata, peer, format!("{strata}/{peer}")));
        }
    }
    if stratas.contains(&"strata/uring") && stratas.contains(&"strata/sync") {
        columns.push(("strata/uring", "strata/sync", "uring/sync".to_string()));
    }
    if columns.is_empty() {
        return Vec::new();
    }
    let mut rows = vec![
        std::iter::once("workload".to_string())
            .chain(columns.iter().map(|(_, _, title)| title.clone()))
            .collect::<Vec<_>>(),
    ];
    let mut workloads: Vec<&str> = Vec::new();
    for g in groups {
        if !workloads.contains(&g.workload.as_str()) {
            workloads.push(&g.workload);
        }
    }
    for workload in workloads {
        let ops = |engine: &str| {
            groups
                .iter()
                .find(|g| g.workload == workload && g.engine == engine)
                .map(|g| g.median_of(|r| r.ops_per_sec))
        };
        if !stratas.iter().any(|s| ops(s).is_some()) {
            continue;
        }
        let mut row = vec![workload.to_string()];
        for (numerator, denominator, _) in &columns {
            row.push(match (ops(numerator), ops(denominator)) {
                (Some(n), Some(d)) if d > 0.0 => format!("{:.2}x", n / d),
                _ => "-".into(),
            });
        }
        rows.push(row);
    }
    rows
}

/// Appends `rows` with every column padded to its widest cell; text columns
/// (the first two) left-aligned, numbers right-aligned.
fn push_aligned(out: &mut String, rows: &[Vec<String>]) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let width = widths.get(c).copied().unwrap_or(0);
            if c > 0 {
                line.push_str("  ");
            }
            if c < 2 {
                let _ = write!(line, "{cell:<width$}");
            } else {
                let _ = write!(line, "{cell:>width$}");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    fn result(engine: &str, io: Option<&str>, ops_per_sec: f64, cold: bool) -> RunResult {
        RunResult {
            engine: engine.into(),
            workload: "multiget".into(),
            run: 0,
            num: 1000,
            threads: 1,
            key_size: 16,
            value_size: 100,
            durability: "async".into(),
            ops: 100,
            seconds: 100.0 / ops_per_sec,
            finish_seconds: 0.0,
            ops_per_sec,
            mb_per_sec: 1.0,
            p50_us: Some(10.0),
            p99_us: Some(20.0),
            p999_us: Some(30.0),
            max_us: Some(40.0),
            cpu_seconds: 0.1,
            bytes_written: 0,
            write_amp: None,
            disk_bytes: 0,
            disk_bytes_apparent: 0,
            space_amp: None,
            live_records: 1000,
            peak_rss_bytes: 1 << 20,
            reads: 6400,
            found: 6400,
            writes: 0,
            scanned: 0,
            engine_counters: Default::default(),
            timed_counters: [
                ("block_cache_hits".to_string(), 1000),
                ("block_cache_misses".to_string(), 200),
            ]
            .into(),
            io_backend: io.map(str::to_string),
            multiget_method: None,
            load: None,
            wal: None,
            cold,
            warm: false,
            block_cache_bytes: 8 << 20,
            eviction: cold.then_some(EvictionReport {
                evictions: 100,
                files: 12,
                listings: 1,
                seconds: 0.5,
            }),
            bulk: None,
        }
    }

    #[test]
    fn both_io_back_ends_get_their_own_rows_and_a_ratio() {
        let results = [
            result("strata", Some("uring"), 3000.0, true),
            result("strata", Some("sync"), 1000.0, true),
            result("rocksdb", None, 1500.0, true),
        ];
        let table = render_table(&results);
        assert!(table.contains("strata/uring"), "{table}");
        assert!(table.contains("strata/sync"), "{table}");
        assert!(table.contains("uring/sync"), "{table}");
        let ratios = table.split("ops/s ratios").nth(1).unwrap();
        let row = ratios
            .lines()
            .find(|l| l.starts_with("multiget [cold]"))
            .unwrap();
        // uring/rocksdb, sync/rocksdb, uring/sync
        let cells: Vec<&str> = row.split_whitespace().skip(2).collect();
        assert_eq!(cells, ["2.00x", "0.67x", "3.00x"], "{table}");
        assert!(
            table.contains("[cold]: before every timed operation"),
            "{table}"
        );
        assert!(table.contains("block cache 8.0 MiB"), "{table}");
        assert!(table.contains("10.0 hits, 2.0 misses"), "{table}");
    }

    #[test]
    fn one_back_end_keeps_the_plain_name_and_warm_runs_are_unmarked() {
        let results = [
            result("strata", Some("uring"), 3000.0, false),
            result("rocksdb", None, 1500.0, false),
        ];
        let table = render_table(&results);
        assert!(!table.contains("strata/uring "), "{table}");
        assert!(table.contains("strata/rocksdb"), "{table}");
        assert!(!table.contains("cold"), "{table}");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(1234567.4), "1,234,567");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1000.0), "1,000");
    }
}
