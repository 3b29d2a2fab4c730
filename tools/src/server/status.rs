//! The status page (`GET /` on the HTTP port): plain HTML rendered on the server from a
//! [`StateSnapshot`] and the recent events, no script, refreshed by the browser every
//! [`REFRESH_SECONDS`].
//!
//! Escaping by construction: [`Page::raw`] takes only `&'static str` (the page's own markup),
//! everything else goes through [`Page::text`], which escapes `& < > " '`. Row keys are bytes
//! and are shown as the shell shows them (`Bytes.toStringBinary`), then escaped.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use super::events::RecentEvent;
use super::snapshot::StateSnapshot;
use crate::shell::{TimestampFormat, format_timestamp, to_string_binary};

/// Seconds between the browser's refreshes of the page.
pub const REFRESH_SECONDS: u32 = 10;
/// Most regions listed (the page must stay small and fast with many regions).
pub const MAX_REGIONS_SHOWN: usize = 1000;
/// Most events listed.
pub const MAX_EVENTS_SHOWN: usize = 100;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.4em;margin:0}h2{font-size:1.1em;margin-top:1.6em;border-bottom:1px solid #ccc}\
.meta{color:#555}table{border-collapse:collapse;font-size:.9em}\
th,td{padding:.2em .6em;border-bottom:1px solid #eee;text-align:left;vertical-align:top}\
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.t{white-space:nowrap}\
code{font-size:.95em}\
.alert{background:#fdd;border:1px solid #c00;padding:.5em 1em}\
.WARN{color:#a60}.ERROR{color:#c00}dl{display:grid;grid-template-columns:max-content auto;\
gap:.1em 1em}dt{color:#555}dd{margin:0}";

/// An HTML document being written.
struct Page {
    html: String,
}

impl Page {
    /// The page's own markup (never anything from the data or a request).
    fn raw(&mut self, markup: &'static str) -> &mut Self {
        self.html.push_str(markup);
        self
    }

    /// Text, escaped.
    fn text(&mut self, text: &str) -> &mut Self {
        for character in text.chars() {
            match character {
                '&' => self.html.push_str("&amp;"),
                '<' => self.html.push_str("&lt;"),
                '>' => self.html.push_str("&gt;"),
                '"' => self.html.push_str("&quot;"),
                '\'' => self.html.push_str("&#39;"),
                other => self.html.push(other),
            }
        }
        self
    }

    /// A number.
    fn number(&mut self, number: impl std::fmt::Display) -> &mut Self {
        let _ = write!(self.html, "{number}");
        self
    }

    /// A table cell holding escaped text.
    fn cell(&mut self, text: &str) -> &mut Self {
        self.raw("<td>").text(text).raw("</td>")
    }

    /// A right-aligned table cell holding escaped text (numbers, sizes).
    fn number_cell(&mut self, text: &str) -> &mut Self {
        self.raw("<td class=\"n\">").text(text).raw("</td>")
    }

    /// A table cell holding a time, kept on one line.
    fn time_cell(&mut self, text: &str) -> &mut Self {
        self.raw("<td class=\"t\">").text(text).raw("</td>")
    }

    /// A `<dt>`/`<dd>` pair.
    fn entry(&mut self, term: &'static str, value: &str) -> &mut Self {
        self.raw("<dt>")
            .raw(term)
            .raw("</dt><dd>")
            .text(value)
            .raw("</dd>")
    }
}

/// Bytes as a person reads them: `512 B`, `1.5 KiB`, `3.2 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS.get(unit).copied().unwrap_or("PiB"))
}

/// A duration as `2d 3h`, `4h 5m`, `6m 7s`, `8s`.
pub fn human_duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    let (days, hours, minutes) = (seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{seconds}s"),
        (0, 0, _) => format!("{minutes}m {}s", seconds % 60),
        (0, _, _) => format!("{hours}h {minutes}m"),
        _ => format!("{days}d {hours}h"),
    }
}

/// A moment in UTC, to the second.
fn utc(moment: SystemTime) -> String {
    let millis = moment
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        });
    // Java's ISO format, as the shell prints with --timestamps iso (seconds left out when 0).
    format!(
        "{}Z",
        format_timestamp(millis - millis % 1000, TimestampFormat::Iso8601)
    )
}

/// How long before `now` a moment was, or `—` when never seen.
fn ago(moment: Option<SystemTime>, now: SystemTime) -> String {
    match moment {
        Some(moment) => format!(
            "{} ago",
            human_duration(now.duration_since(moment).unwrap_or_default())
        ),
        None => "—".to_owned(),
    }
}

/// A key as the shell prints it; `(first)`/`(last)` for the open ends.
fn key(bytes: &[u8], empty: &str) -> String {
    if bytes.is_empty() {
        empty.to_owned()
    } else {
        to_string_binary(bytes)
    }
}

/// The levels that hold files, as `L0:2 L1:5`; `none` without files.
fn files_per_level(counts: &[usize]) -> String {
    let levels: Vec<String> = counts
        .iter()
        .enumerate()
        .filter(|(_, count)| **count > 0)
        .map(|(level, count)| format!("L{level}:{count}"))
        .collect();
    if levels.is_empty() {
        "none".to_owned()
    } else {
        levels.join(" ")
    }
}

/// The whole page.
pub fn render(snapshot: &StateSnapshot, events: &[RecentEvent]) -> String {
    let mut page = Page {
        html: String::with_capacity(16 * 1024),
    };
    page.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        .raw("<meta http-equiv=\"refresh\" content=\"")
        .number(REFRESH_SECONDS)
        .raw("\"><meta name=\"viewport\" content=\"width=device-width\"><title>strata server: ")
        .text(&snapshot.data_dir.display().to_string())
        .raw("</title><style>")
        .raw(STYLE)
        .raw("</style></head><body>\n<h1>strata server</h1><p class=\"meta\">strata ")
        .raw(env!("CARGO_PKG_VERSION"))
        .raw(" · data <code>")
        .text(&snapshot.data_dir.display().to_string())
        .raw("</code> · up ")
        .text(&human_duration(snapshot.uptime()))
        .raw(" · ")
        .text(&utc(snapshot.taken_at))
        .raw(" · refreshes every ")
        .number(REFRESH_SECONDS)
        .raw(" s</p>\n");
    alerts(&mut page, snapshot);
    tables(&mut page, snapshot);
    regions(&mut page, snapshot);
    background(&mut page, snapshot);
    wal_and_cache(&mut page, snapshot);
    server(&mut page, snapshot);
    recent_events(&mut page, events);
    page.raw("</body></html>\n");
    page.html
}

fn alerts(page: &mut Page, snapshot: &StateSnapshot) {
    if let Some(failure) = &snapshot.storage_failure {
        page.raw("<p class=\"alert\" id=\"writes-stopped\"><b>Writes stopped:</b> ")
            .text(failure)
            .raw(" (reads go on; reopen the database once the cause is fixed)</p>\n");
    }
    if let Some(error) = &snapshot.background_error {
        page.raw("<p class=\"alert\" id=\"background-error\"><b>Last background failure:</b> ")
            .text(error)
            .raw("</p>\n");
    }
}

fn tables(page: &mut Page, snapshot: &StateSnapshot) {
    page.raw("<h2 id=\"tables\">Tables</h2>");
    if snapshot.tables.is_empty() {
        page.raw("<p>No tables.</p>\n");
        return;
    }
    page.raw(
        "<table><tr><th>table</th><th>state</th><th>families</th><th class=\"n\">regions</th>\
         <th class=\"n\">size</th><th class=\"n\">memstore</th><th class=\"n\">files</th>\
         <th class=\"n\">cells</th><th class=\"n\">rows read</th><th class=\"n\">rows written</th></tr>\n",
    );
    for table in &snapshot.tables {
        let sum = |field: fn(&strata::RegionInfo) -> u64| -> u64 {
            table.regions.iter().map(|region| field(&region.info)).sum()
        };
        page.raw("<tr>")
            .cell(&table.name)
            .cell(if table.enabled { "enabled" } else { "disabled" })
            .cell(&table.families.join(", "))
            .number_cell(&table.regions.len().to_string())
            .number_cell(&human_bytes(sum(strata::RegionInfo::size_bytes)))
            .number_cell(&human_bytes(sum(|info| info.memstore_bytes)))
            .number_cell(&sum(|info| info.files_per_level.iter().sum::<usize>() as u64).to_string())
            .number_cell(&sum(strata::RegionInfo::cells).to_string())
            .number_cell(&sum(|info| info.activity.rows_read).to_string())
            .number_cell(&sum(|info| info.activity.rows_written).to_string())
            .raw("</tr>\n");
    }
    page.raw("</table>\n");
}

fn regions(page: &mut Page, snapshot: &StateSnapshot) {
    page.raw("<h2 id=\"regions\">Regions</h2>");
    let total = snapshot.region_count();
    if total == 0 {
        page.raw("<p>No regions.</p>\n");
        return;
    }
    page.raw(
        "<table><tr><th>region</th><th>start key</th><th>end key</th><th class=\"n\">size</th>\
         <th class=\"n\">memstore</th><th>files per level</th><th class=\"n\">rows read</th>\
         <th class=\"n\">rows written</th><th class=\"n\">flushes</th><th>last flush</th>\
         <th class=\"n\">compactions</th><th>last compaction</th><th class=\"n\">stalled</th></tr>\n",
    );
    let all = snapshot.tables.iter().flat_map(|table| &table.regions);
    for region in all.take(MAX_REGIONS_SHOWN) {
        let info = &region.info;
        let levels = files_per_level(&info.files_per_level);
        let activity = &info.activity;
        page.raw("<tr>")
            .cell(&region.name)
            .cell(&key(&info.start_key, "(first)"))
            .cell(&key(&info.end_key, "(last)"))
            .number_cell(&human_bytes(info.size_bytes()))
            .number_cell(&human_bytes(info.memstore_bytes))
            .cell(&levels)
            .number_cell(&activity.rows_read.to_string())
            .number_cell(&activity.rows_written.to_string())
            .number_cell(&activity.flushes.to_string())
            .time_cell(&ago(region.last_flush, snapshot.taken_at))
            .number_cell(&activity.compactions.to_string())
            .time_cell(&ago(region.last_compaction, snapshot.taken_at))
            .number_cell(&human_duration(Duration::from_micros(
                activity.stall_micros,
            )))
            .raw("</tr>\n");
    }
    page.raw("</table>\n");
    if total > MAX_REGIONS_SHOWN {
        page.raw("<p>")
            .number(total - MAX_REGIONS_SHOWN)
            .raw(" more regions not shown (see <code>/metrics</code> or <code>list_regions</code>).</p>\n");
    }
    page.raw(
        "<p class=\"meta\">Last flush and compaction: when this server first saw the region's \
         count go up (it looks every second).</p>\n",
    );
}

fn background(page: &mut Page, snapshot: &StateSnapshot) {
    let work = &snapshot.background;
    let stats = &snapshot.stats;
    page.raw("<h2 id=\"compaction-queue\">Compaction queue</h2><dl>")
        .entry("queued compactions", &work.queued_compactions.to_string())
        .entry("queued flushes", &work.queued_flushes.to_string())
        .entry("queued splits", &work.queued_splits.to_string())
        .entry(
            "queued normalizer runs",
            &work.queued_normalizations.to_string(),
        )
        .entry("running jobs", &work.running.to_string())
        .entry("flushes since open", &stats.flushes.to_string())
        .entry("compactions since open", &stats.compactions.to_string())
        .entry(
            "written by flushes and compactions",
            &human_bytes(stats.hfile_bytes_written),
        )
        .entry(
            "splits / merges",
            &format!("{} / {}", stats.splits, stats.merges),
        )
        .entry(
            "writers stalled",
            &human_duration(Duration::from_micros(stats.stall_micros)),
        )
        .entry(
            "background failures",
            &stats.background_failures.to_string(),
        )
        .raw("</dl>\n");
}

fn wal_and_cache(page: &mut Page, snapshot: &StateSnapshot) {
    let stats = &snapshot.stats;
    let wal = &stats.wal;
    let sync_ms = if wal.syncs == 0 {
        "—".to_owned()
    } else {
        format!(
            "{:.2} ms",
            wal.sync_micros_total as f64 / wal.syncs as f64 / 1000.0
        )
    };
    page.raw("<h2 id=\"wal\">WAL</h2><dl>")
        .entry(
            "segment files on disk",
            &format!(
                "{} ({})",
                snapshot.wal_files.segments,
                human_bytes(snapshot.wal_files.bytes)
            ),
        )
        .entry("group commits", &wal.groups_written.to_string())
        .entry("row mutations", &wal.frames_written.to_string())
        .entry("written", &human_bytes(wal.bytes_written))
        .entry("syncs", &wal.syncs.to_string())
        .entry("mean write+sync", &sync_ms)
        .entry("last sequence", &stats.last_sequence.to_string())
        .entry("memstores", &human_bytes(stats.memstore_bytes))
        .entry("I/O back end", stats.io_backend.name())
        .raw("</dl>\n");
    let cache = &stats.cache;
    let lookups = cache.hits + cache.misses;
    let hit_ratio = if lookups == 0 {
        "—".to_owned()
    } else {
        format!("{:.1}%", cache.hits as f64 * 100.0 / lookups as f64)
    };
    page.raw("<h2 id=\"cache\">Block cache</h2><dl>")
        .entry(
            "held",
            &format!(
                "{} of {}",
                human_bytes(cache.bytes),
                human_bytes(cache.capacity_bytes)
            ),
        )
        .entry("hits", &cache.hits.to_string())
        .entry("misses", &cache.misses.to_string())
        .entry("hit ratio", &hit_ratio)
        .raw("</dl>\n");
}

fn server(page: &mut Page, snapshot: &StateSnapshot) {
    let ports = [
        (
            "Thrift",
            snapshot.addresses.thrift,
            snapshot.thrift.open_connections,
            snapshot.thrift.connections_accepted,
            snapshot.thrift.connections_refused,
        ),
        (
            "admin",
            snapshot.addresses.admin,
            snapshot.admin.connections.open,
            snapshot.admin.connections.accepted,
            snapshot.admin.connections.refused,
        ),
        (
            "HTTP",
            snapshot.addresses.http,
            snapshot.http.connections.open,
            snapshot.http.connections.accepted,
            snapshot.http.connections.refused,
        ),
    ];
    page.raw(
        "<h2 id=\"server\">Server</h2><table><tr><th>port</th><th>address</th>\
         <th class=\"n\">open</th><th class=\"n\">accepted</th><th class=\"n\">refused</th></tr>\n",
    );
    for (name, address, open, accepted, refused) in ports {
        page.raw("<tr>")
            .cell(name)
            .cell(&address.to_string())
            .number_cell(&open.to_string())
            .number_cell(&accepted.to_string())
            .number_cell(&refused.to_string())
            .raw("</tr>\n");
    }
    page.raw("</table><dl>")
        .entry("Thrift calls", &snapshot.thrift.calls.to_string())
        .entry(
            "Thrift scanners open",
            &snapshot.thrift.open_scanners.to_string(),
        )
        .entry(
            "shell commands run",
            &format!(
                "{} ({} failed)",
                snapshot.admin.statements, snapshot.admin.failed_statements
            ),
        )
        .raw("</dl>\n");
}

fn recent_events(page: &mut Page, events: &[RecentEvent]) {
    page.raw("<h2 id=\"events\">Recent events</h2>");
    if events.is_empty() {
        page.raw("<p>None yet.</p>\n");
        return;
    }
    page.raw("<table><tr><th>time (UTC)</th><th>level</th><th>source</th><th>event</th></tr>\n");
    for event in events.iter().take(MAX_EVENTS_SHOWN) {
        let level = event.level.as_str();
        page.raw("<tr class=\"")
            .text(level)
            .raw("\">")
            .time_cell(&utc(event.at))
            .cell(level)
            .cell(&event.target)
            .cell(&event.text)
            .raw("</tr>\n");
    }
    page.raw("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_sizes_and_durations_read_well() {
        let mut page = Page {
            html: String::new(),
        };
        page.text("<script>alert('x')</script> & \"q\"");
        assert_eq!(
            page.html,
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024 * 1024), "3.0 GiB");
        assert_eq!(human_duration(Duration::from_secs(8)), "8s");
        assert_eq!(human_duration(Duration::from_secs(367)), "6m 7s");
        assert_eq!(human_duration(Duration::from_secs(4 * 3600 + 300)), "4h 5m");
        assert_eq!(
            human_duration(Duration::from_secs(2 * 86_400 + 3 * 3600)),
            "2d 3h"
        );
        assert_eq!(files_per_level(&[2, 0, 5, 0]), "L0:2 L2:5");
        assert_eq!(files_per_level(&[0, 0]), "none");
        assert_eq!(key(b"", "(first)"), "(first)");
        assert_eq!(key(b"a\x00<", "(first)"), "a\\x00<");
        assert_eq!(
            utc(SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123)),
            "2023-11-14T22:13:20Z"
        );
    }
}
