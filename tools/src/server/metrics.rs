//! `/metrics` (and `/prometheus`, where HBase 2.5+ serves them): a [`StateSnapshot`] in the
//! Prometheus text format, or OpenMetrics when the scraper asks for it, encoded by the
//! Prometheus project's Rust client (`prometheus-client`).
//!
//! Names are `strata_*`; counters get their `_total` suffix from the encoder. Per-table series
//! carry a `table` label, per-region series `table` and `region` (the region's id, as in its
//! HBase name `table,start,id`). Latency histograms are Prometheus histograms in seconds, one
//! bucket per power of two of nanoseconds (bounds the engine's finer buckets share).
//! [`families`] lists every family from a snapshot.

use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use strata::LatencySnapshot;

use super::snapshot::StateSnapshot;

/// The `Content-Type` of the Prometheus text format.
pub const PROMETHEUS_CONTENT_TYPE: &str =
    prometheus_client::encoding::prometheus_text::CONTENT_TYPE;
/// The `Content-Type` of OpenMetrics text.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Microseconds in a second.
const MICROS_PER_SECOND: f64 = 1_000_000.0;

/// Which text format to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposition {
    /// Prometheus text 0.0.4 (the default; what HBase's `/prometheus` serves).
    Prometheus,
    /// OpenMetrics 1.0 text (when the scraper's `Accept` asks for it).
    OpenMetrics,
}

impl Exposition {
    /// The format an `Accept` header asks for.
    pub fn for_accept(accept: Option<&str>) -> Exposition {
        match accept {
            Some(accept) if accept.contains("application/openmetrics-text") => {
                Exposition::OpenMetrics
            }
            _ => Exposition::Prometheus,
        }
    }

    /// The `Content-Type` of the format.
    pub fn content_type(self) -> &'static str {
        match self {
            Exposition::Prometheus => PROMETHEUS_CONTENT_TYPE,
            Exposition::OpenMetrics => OPENMETRICS_CONTENT_TYPE,
        }
    }
}

/// Counter, gauge or histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// A sample's value.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Count(u64),
    Real(f64),
    /// A latency histogram in seconds: its sum, count and buckets (upper
    /// bound, operations in the bucket, not cumulative; the last is +Inf).
    Histogram {
        sum: f64,
        count: u64,
        buckets: Vec<(f64, u64)>,
    },
}

/// The upper bounds of the exposed latency buckets: every power of two of
/// nanoseconds from 2^7 (128 ns) to 2^37 (about 137 s), which are bucket
/// boundaries of the engine's histogram (it has four buckets per power of
/// two; one per power keeps a scrape small), then +Inf.
const LATENCY_BOUND_NANOS: std::ops::RangeInclusive<u32> = 7..=37;

impl From<&LatencySnapshot> for Value {
    fn from(histogram: &LatencySnapshot) -> Value {
        let mut buckets = Vec::new();
        let mut below = 0u64;
        for power in LATENCY_BOUND_NANOS {
            let bound = Duration::from_nanos(1u64 << power);
            let cumulative = histogram.count_below(bound);
            buckets.push((bound.as_secs_f64(), cumulative.saturating_sub(below)));
            below = cumulative;
        }
        buckets.push((f64::INFINITY, histogram.count.saturating_sub(below)));
        Value::Histogram {
            sum: histogram.sum.as_secs_f64(),
            count: histogram.count,
            buckets,
        }
    }
}

impl From<u64> for Value {
    fn from(value: u64) -> Value {
        Value::Count(value)
    }
}

impl From<usize> for Value {
    fn from(value: usize) -> Value {
        Value::Count(value as u64)
    }
}

impl From<f64> for Value {
    fn from(value: f64) -> Value {
        Value::Real(value)
    }
}

impl From<bool> for Value {
    fn from(value: bool) -> Value {
        Value::Count(u64::from(value))
    }
}

type Labels = Vec<(&'static str, String)>;

/// One metric family and its samples.
#[derive(Debug, Clone)]
struct Family {
    name: &'static str,
    help: &'static str,
    kind: Kind,
    samples: Vec<(Labels, Value)>,
}

impl Family {
    fn new(name: &'static str, kind: Kind, help: &'static str) -> Family {
        Family {
            name,
            help,
            kind,
            samples: Vec::new(),
        }
    }

    fn sample(mut self, labels: Labels, value: impl Into<Value>) -> Family {
        self.samples.push((labels, value.into()));
        self
    }

    fn single(
        name: &'static str,
        kind: Kind,
        help: &'static str,
        value: impl Into<Value>,
    ) -> Family {
        Family::new(name, kind, help).sample(Vec::new(), value)
    }

    fn encode(&self, encoder: &mut DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let metric_type = match self.kind {
            Kind::Counter => ConstCounter::new(0u64).metric_type(),
            Kind::Gauge => ConstGauge::new(0u64).metric_type(),
            Kind::Histogram => MetricType::Histogram,
        };
        let mut family = encoder.encode_descriptor(self.name, self.help, None, metric_type)?;
        for (labels, value) in &self.samples {
            let mut metric = family.encode_family(labels)?;
            match (self.kind, value) {
                (Kind::Counter, Value::Count(v)) => ConstCounter::new(*v).encode(metric)?,
                (Kind::Counter, Value::Real(v)) => ConstCounter::new(*v).encode(metric)?,
                (Kind::Gauge, Value::Count(v)) => ConstGauge::new(*v).encode(metric)?,
                (Kind::Gauge, Value::Real(v)) => ConstGauge::new(*v).encode(metric)?,
                (
                    Kind::Histogram,
                    Value::Histogram {
                        sum,
                        count,
                        buckets,
                    },
                ) => metric.encode_histogram::<NoLabelSet>(*sum, *count, buckets, None)?,
                // Families are built by kind in this module; a mismatch is a
                // bug here, reported as a failed encoding rather than a panic.
                _ => return Err(std::fmt::Error),
            }
        }
        Ok(())
    }
}

/// Hands the families to the encoder on a scrape.
#[derive(Debug)]
struct SnapshotCollector {
    families: Vec<Family>,
}

impl Collector for SnapshotCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        for family in &self.families {
            family.encode(&mut encoder)?;
        }
        Ok(())
    }
}

fn seconds_from_micros(micros: u64) -> f64 {
    micros as f64 / MICROS_PER_SECOND
}

/// Every metric family of `snapshot`.
fn families(snapshot: &StateSnapshot) -> Vec<Family> {
    use Kind::{Counter, Gauge};
    let stats = &snapshot.stats;
    let started = snapshot
        .started_at
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut families = vec![
        Family::new(
            "strata_build_info",
            Gauge,
            "The strata version serving (always 1).",
        )
        .sample(
            vec![("version", env!("CARGO_PKG_VERSION").to_owned())],
            1u64,
        ),
        Family::single(
            "strata_start_time_seconds",
            Gauge,
            "When the server started, in seconds since the epoch.",
            started.as_secs_f64(),
        ),
        Family::single(
            "strata_uptime_seconds",
            Gauge,
            "Seconds since the server started.",
            snapshot.uptime().as_secs_f64(),
        ),
        Family::new(
            "strata_io_backend_info",
            Gauge,
            "The I/O back end in use (always 1).",
        )
        .sample(vec![("backend", stats.io_backend.name().to_owned())], 1u64),
        Family::single(
            "strata_memstore_bytes",
            Gauge,
            "Bytes held by all memstores.",
            stats.memstore_bytes,
        ),
        Family::single(
            "strata_last_sequence",
            Gauge,
            "The highest sequence number handed out.",
            stats.last_sequence,
        ),
        Family::single(
            "strata_hfiles",
            Gauge,
            "HFiles in the database.",
            stats.files,
        ),
        Family::single(
            "strata_hfile_bytes",
            Gauge,
            "Bytes of the database's HFiles.",
            stats.file_bytes,
        ),
        Family::single(
            "strata_flushes",
            Counter,
            "Flushes completed since open.",
            stats.flushes,
        ),
        Family::single(
            "strata_compactions",
            Counter,
            "Compactions completed since open.",
            stats.compactions,
        ),
        Family::single(
            "strata_hfile_written_bytes",
            Counter,
            "Bytes of HFiles written by flushes and compactions since open.",
            stats.hfile_bytes_written,
        ),
        Family::single(
            "strata_write_stall_seconds",
            Counter,
            "Seconds writers spent stalled (slowed down or waiting).",
            seconds_from_micros(stats.stall_micros),
        ),
        Family::single(
            "strata_splits",
            Counter,
            "Region splits since open.",
            stats.splits,
        ),
        Family::single(
            "strata_merges",
            Counter,
            "Region merges since open.",
            stats.merges,
        ),
        Family::single(
            "strata_bulk_loads",
            Counter,
            "Bulk loads since open.",
            stats.bulk_loads,
        ),
        Family::single(
            "strata_bulk_loaded_bytes",
            Counter,
            "Bytes of files bulk loads installed since open.",
            stats.bulk_loaded_bytes,
        ),
        Family::single(
            "strata_background_failures",
            Counter,
            "Background flushes, compactions and splits that failed since open.",
            stats.background_failures,
        ),
        Family::single(
            "strata_writes_stopped",
            Gauge,
            "1 when a storage failure stopped every change (reads go on; reopen once fixed).",
            snapshot.storage_failure.is_some(),
        ),
        Family::new(
            "strata_background_queued_jobs",
            Gauge,
            "Background jobs waiting, by kind.",
        )
        .sample(
            vec![("job", "flush".to_owned())],
            snapshot.background.queued_flushes,
        )
        .sample(
            vec![("job", "compaction".to_owned())],
            snapshot.background.queued_compactions,
        )
        .sample(
            vec![("job", "split".to_owned())],
            snapshot.background.queued_splits,
        )
        .sample(
            vec![("job", "normalize".to_owned())],
            snapshot.background.queued_normalizations,
        ),
        Family::single(
            "strata_background_running_jobs",
            Gauge,
            "Background jobs running.",
            snapshot.background.running,
        ),
        Family::single(
            "strata_wal_groups",
            Counter,
            "WAL group commits written.",
            stats.wal.groups_written,
        ),
        Family::single(
            "strata_wal_frames",
            Counter,
            "WAL frames (row mutations) written.",
            stats.wal.frames_written,
        ),
        Family::single(
            "strata_wal_written_bytes",
            Counter,
            "Bytes of WAL frames written.",
            stats.wal.bytes_written,
        ),
        Family::single(
            "strata_wal_syncs",
            Counter,
            "WAL syncs performed.",
            stats.wal.syncs,
        ),
        Family::single(
            "strata_wal_sync_seconds",
            Counter,
            "Seconds spent in WAL writes that included a sync.",
            seconds_from_micros(stats.wal.sync_micros_total),
        ),
        Family::single(
            "strata_wal_segments_created",
            Counter,
            "WAL segments created since open.",
            stats.wal.segments_created,
        ),
        Family::single(
            "strata_wal_writebacks_started",
            Counter,
            "Times the WAL asked the disk to start writing its unsynced async bytes.",
            stats.wal.writebacks_started,
        ),
        Family::single(
            "strata_wal_segment_files",
            Gauge,
            "WAL segment files on disk.",
            snapshot.wal_files.segments,
        ),
        Family::single(
            "strata_wal_segment_bytes",
            Gauge,
            "Bytes of WAL segment files on disk (preallocated space included).",
            snapshot.wal_files.bytes,
        ),
        Family::single(
            "strata_block_cache_hits",
            Counter,
            "Block cache lookups that found the block.",
            stats.cache.hits,
        ),
        Family::single(
            "strata_block_cache_misses",
            Counter,
            "Block cache lookups that had to read the block.",
            stats.cache.misses,
        ),
        Family::single(
            "strata_block_cache_bytes",
            Gauge,
            "Bytes held by the block cache.",
            stats.cache.bytes,
        ),
        Family::single(
            "strata_block_cache_capacity_bytes",
            Gauge,
            "The block cache's capacity in bytes.",
            stats.cache.capacity_bytes,
        ),
    ];
    families.extend(engine_families(snapshot));
    families.extend(table_families(snapshot));
    families.extend(server_families(snapshot));
    families
}

/// The engine's latency histograms (named after HBase's RegionServer `Put`, `Get` and
/// `ScanTime` and its WAL's `SyncTime`), compaction debt and open files.
fn engine_families(snapshot: &StateSnapshot) -> Vec<Family> {
    use Kind::{Gauge, Histogram};
    let engine = &snapshot.engine;
    let histogram = |name, help, latencies: &LatencySnapshot| {
        Family::single(name, Histogram, help, Value::from(latencies))
    };
    let mut table_debt = Family::new(
        "strata_table_compaction_debt_bytes",
        Gauge,
        "Bytes compaction has to rewrite before no level of the table's stores is over its trigger or target.",
    );
    for table in &engine.tables {
        table_debt = table_debt.sample(
            vec![("table", table.name.clone())],
            table.compaction_debt_bytes,
        );
    }
    let mut families = vec![
        histogram(
            "strata_write_latency_seconds",
            "Commits of puts, deletes, increments, appends, check-and-mutates and batches (HBase's Put/Mutate), from the WAL append to visible (and synced when asked); one in 16 per thread timed and counted 16 times.",
            &engine.writes,
        ),
        histogram(
            "strata_get_latency_seconds",
            "Single-row gets (HBase's Get); one in 16 per thread timed and counted 16 times.",
            &engine.gets,
        ),
        histogram(
            "strata_scan_latency_seconds",
            "Scans from their start until the scanner was dropped (HBase's ScanTime), the caller's time between rows included.",
            &engine.scans,
        ),
        histogram(
            "strata_wal_sync_latency_seconds",
            "WAL writes that included a sync (HBase's WAL SyncTime).",
            &engine.wal_syncs,
        ),
        Family::single(
            "strata_compaction_debt_bytes",
            Gauge,
            "Bytes compaction has to rewrite before no level of any store is over its trigger or target (an estimate, as RocksDB's pending compaction bytes).",
            engine.compaction_debt_bytes,
        ),
        table_debt,
        Family::single(
            "strata_open_files",
            Gauge,
            "Files the database holds open: HFiles, WAL segments, the manifest.",
            engine.open_files,
        ),
    ];
    if let Some(budget) = &engine.io_budget {
        families.extend(io_budget_families(budget));
    }
    families
}

/// The background I/O budget (`DbOptions::background_write_bytes_per_sec`), when one is set:
/// its limit, and the bytes flushes and compactions wrote through it and the time they waited.
fn io_budget_families(budget: &strata::IoBudgetStats) -> Vec<Family> {
    use Kind::{Counter, Gauge};
    let kind = |name: &str| vec![("kind", name.to_owned())];
    vec![
        Family::single(
            "strata_background_write_limit_bytes_per_second",
            Gauge,
            "The background I/O budget flush and compaction writes share.",
            budget.bytes_per_sec,
        ),
        Family::new(
            "strata_background_write_bytes",
            Counter,
            "Bytes flushes and compactions wrote through the background I/O budget.",
        )
        .sample(kind("flush"), budget.flush_bytes)
        .sample(kind("compaction"), budget.compaction_bytes),
        Family::new(
            "strata_background_write_wait_seconds",
            Counter,
            "Seconds flush and compaction writes waited for the background I/O budget.",
        )
        .sample(kind("flush"), budget.flush_waited.as_secs_f64())
        .sample(kind("compaction"), budget.compaction_waited.as_secs_f64()),
    ]
}

/// Per-table and per-region families.
fn table_families(snapshot: &StateSnapshot) -> Vec<Family> {
    use Kind::Gauge;
    let mut regions = Family::new("strata_table_regions", Gauge, "Regions of a table.");
    let mut enabled = Family::new("strata_table_enabled", Gauge, "1 when a table is enabled.");
    let mut memstore_bytes = Family::new(
        "strata_region_memstore_bytes",
        Gauge,
        "Bytes held by a region's memstores.",
    );
    let mut memstore_cells = Family::new(
        "strata_region_memstore_cells",
        Gauge,
        "Cells in a region's memstores.",
    );
    let mut hfile_bytes = Family::new(
        "strata_region_hfile_bytes",
        Gauge,
        "Bytes of a region's HFiles.",
    );
    let mut hfile_cells = Family::new(
        "strata_region_hfile_cells",
        Gauge,
        "Cells in a region's HFiles.",
    );
    let mut hfiles = Family::new(
        "strata_region_hfiles",
        Gauge,
        "HFiles of a region per level (level 0 and the levels that hold files).",
    );
    let mut region_activity = ActivityFamilies::new(REGION_ACTIVITY);
    // Per table the same counters, kept across splits and merges (a region those make starts
    // at zero, so a sum over regions would go backwards).
    let mut table_activity = ActivityFamilies::new(TABLE_ACTIVITY);
    for table in &snapshot.tables {
        let table_label = || vec![("table", table.name.clone())];
        regions = regions.sample(table_label(), table.regions.len());
        enabled = enabled.sample(table_label(), table.enabled);
        table_activity.sample(table_label, &table.activity);
        for region in &table.regions {
            let info = &region.info;
            let labels = || {
                vec![
                    ("table", table.name.clone()),
                    ("region", info.id.to_string()),
                ]
            };
            memstore_bytes = memstore_bytes.sample(labels(), info.memstore_bytes);
            memstore_cells = memstore_cells.sample(labels(), info.memstore_cells);
            hfile_bytes = hfile_bytes.sample(labels(), info.file_bytes);
            hfile_cells = hfile_cells.sample(labels(), info.file_cells);
            for (level, count) in info.files_per_level.iter().enumerate() {
                if level == 0 || *count > 0 {
                    let mut level_labels = labels();
                    level_labels.push(("level", level.to_string()));
                    hfiles = hfiles.sample(level_labels, *count);
                }
            }
            region_activity.sample(labels, &info.activity);
        }
    }
    let mut families = vec![regions, enabled];
    families.extend(table_activity.0);
    families.extend([
        memstore_bytes,
        memstore_cells,
        hfile_bytes,
        hfile_cells,
        hfiles,
    ]);
    families.extend(region_activity.0);
    families
}

/// Counters in a [`strata::RegionActivity`] that `/metrics` serves.
const ACTIVITY_COUNTERS: usize = 9;

/// Each activity counter's family name and help per region, in [`activity_values`]' order.
const REGION_ACTIVITY: [(&str, &str); ACTIVITY_COUNTERS] = [
    (
        "strata_region_gets",
        "Single-row reads of a region (gets, get_many rows, the reads of increments and check-and-mutates).",
    ),
    ("strata_region_scans", "Scans that read a region."),
    (
        "strata_region_read_rows",
        "Rows a region returned to gets and scans.",
    ),
    ("strata_region_written_rows", "Rows mutated in a region."),
    (
        "strata_region_written_bytes",
        "Memstore bytes a region's mutations added.",
    ),
    ("strata_region_flushes", "Flushes of a region."),
    (
        "strata_region_compactions",
        "Compactions of a region's stores.",
    ),
    (
        "strata_region_write_stall_seconds",
        "Seconds writers to a region spent stalled.",
    ),
    (
        "strata_region_bulk_loaded_bytes",
        "Bytes of files bulk loads installed into a region.",
    ),
];

/// The same per table, since the database opened, across splits and merges.
const TABLE_ACTIVITY: [(&str, &str); ACTIVITY_COUNTERS] = [
    (
        "strata_table_gets",
        "Single-row reads of a table since the database opened, across splits and merges.",
    ),
    (
        "strata_table_scans",
        "Region scans of a table (a scan counts once per region it reads).",
    ),
    (
        "strata_table_read_rows",
        "Rows a table returned to gets and scans.",
    ),
    ("strata_table_written_rows", "Rows mutated in a table."),
    (
        "strata_table_written_bytes",
        "Memstore bytes a table's mutations added.",
    ),
    ("strata_table_flushes", "Region flushes of a table."),
    ("strata_table_compactions", "Store compactions of a table."),
    (
        "strata_table_write_stall_seconds",
        "Seconds writers to a table spent stalled.",
    ),
    (
        "strata_table_bulk_loaded_bytes",
        "Bytes of files bulk loads installed into a table.",
    ),
];

/// A [`strata::RegionActivity`]'s counters as sample values, in the order of
/// [`REGION_ACTIVITY`] and [`TABLE_ACTIVITY`].
fn activity_values(activity: &strata::RegionActivity) -> [Value; ACTIVITY_COUNTERS] {
    [
        activity.gets.into(),
        activity.scans.into(),
        activity.rows_read.into(),
        activity.rows_written.into(),
        activity.bytes_written.into(),
        activity.flushes.into(),
        activity.compactions.into(),
        seconds_from_micros(activity.stall_micros).into(),
        activity.bulk_loaded_bytes.into(),
    ]
}

/// The counter families of [`strata::RegionActivity`] in one scope (per region or per table).
struct ActivityFamilies([Family; ACTIVITY_COUNTERS]);

impl ActivityFamilies {
    fn new(names_and_help: [(&'static str, &'static str); ACTIVITY_COUNTERS]) -> ActivityFamilies {
        ActivityFamilies(names_and_help.map(|(name, help)| Family::new(name, Kind::Counter, help)))
    }

    /// One sample of every counter, each with `labels()`.
    fn sample(&mut self, labels: impl Fn() -> Labels, activity: &strata::RegionActivity) {
        for (family, value) in self.0.iter_mut().zip(activity_values(activity)) {
            family.samples.push((labels(), value));
        }
    }
}

/// The server's own families: connections per port, Thrift calls, admin requests, HTTP.
fn server_families(snapshot: &StateSnapshot) -> Vec<Family> {
    use Kind::{Counter, Gauge};
    let endpoints = [
        (
            "thrift",
            snapshot.thrift.open_connections,
            snapshot.thrift.connections_accepted,
            snapshot.thrift.connections_refused,
        ),
        (
            "admin",
            snapshot.admin.connections.open,
            snapshot.admin.connections.accepted,
            snapshot.admin.connections.refused,
        ),
        (
            "http",
            snapshot.http.connections.open,
            snapshot.http.connections.accepted,
            snapshot.http.connections.refused,
        ),
    ];
    let mut open = Family::new(
        "strata_server_open_connections",
        Gauge,
        "Connections open now, by port.",
    );
    let mut accepted = Family::new(
        "strata_server_accepted_connections",
        Counter,
        "Connections accepted, by port.",
    );
    let mut refused = Family::new(
        "strata_server_refused_connections",
        Counter,
        "Connections refused because too many were open, by port.",
    );
    for (endpoint, open_now, accepted_total, refused_total) in endpoints {
        let labels = || vec![("endpoint", endpoint.to_owned())];
        open = open.sample(labels(), open_now);
        accepted = accepted.sample(labels(), accepted_total);
        refused = refused.sample(labels(), refused_total);
    }
    vec![
        open,
        accepted,
        refused,
        Family::single(
            "strata_thrift_calls",
            Counter,
            "Thrift calls answered.",
            snapshot.thrift.calls,
        ),
        Family::single(
            "strata_thrift_open_scanners",
            Gauge,
            "Thrift scanners open.",
            snapshot.thrift.open_scanners,
        ),
        Family::single(
            "strata_thrift_malformed_messages",
            Counter,
            "Thrift connections closed for a malformed or oversized message.",
            snapshot.thrift.malformed_messages,
        ),
        Family::single(
            "strata_thrift_expired_scanners",
            Counter,
            "Thrift scanners closed for being idle.",
            snapshot.thrift.scanners_expired,
        ),
        Family::single(
            "strata_admin_requests",
            Counter,
            "Statement batches shells sent to the admin port.",
            snapshot.admin.requests,
        ),
        Family::single(
            "strata_admin_statements",
            Counter,
            "Shell commands run through the admin port.",
            snapshot.admin.statements,
        ),
        Family::single(
            "strata_admin_failed_statements",
            Counter,
            "Shell commands run through the admin port that failed.",
            snapshot.admin.failed_statements,
        ),
        Family::single(
            "strata_admin_malformed_requests",
            Counter,
            "Admin connections closed for a malformed, unknown or oversized request.",
            snapshot.admin.malformed_requests,
        ),
        Family::single(
            "strata_http_requests",
            Counter,
            "HTTP requests answered.",
            snapshot.http.requests,
        ),
        Family::single(
            "strata_http_failed_requests",
            Counter,
            "HTTP requests answered with an error status.",
            snapshot.http.failed_requests,
        ),
    ]
}

/// `snapshot` as exposition text in `format`.
pub fn render(snapshot: &StateSnapshot, format: Exposition) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(SnapshotCollector {
        families: families(snapshot),
    }));
    let mut text = String::new();
    match format {
        Exposition::Prometheus => {
            prometheus_client::encoding::prometheus_text::encode(&mut text, &registry)?;
        }
        Exposition::OpenMetrics => prometheus_client::encoding::text::encode(&mut text, &registry)?,
    }
    Ok(text)
}
