//! One view of the database and the server, gathered at once for a scrape of `/metrics` or
//! a view of the status page, so both say the same thing.
//!
//! It is made of what the engine reports ([`Db::metrics`], [`Db::background_work`],
//! [`strata::Table::regions`] with their [`strata::RegionActivity`]) and the server's own
//! counters.
//!
//! The engine does not record when a region last flushed or compacted; [`RegionWatch`] notes
//! the time at which the server first saw a region's flush or compaction count go up (it
//! looks every [`WATCH_INTERVAL`] and at every snapshot), and logs it as an event.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use strata::{BackgroundWork, Db, DbMetrics, DbStats, RegionActivity, RegionInfo};

use crate::exec::region_name;
use crate::net::ConnectionStats;
use crate::thrift::ServerStats;

/// How often the server looks for regions that flushed or compacted.
pub const WATCH_INTERVAL: Duration = Duration::from_secs(1);

/// The addresses the server's ports are bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addresses {
    /// HBase's Thrift1 gateway.
    pub thrift: SocketAddr,
    /// The admin port (`strata shell --connect`).
    pub admin: SocketAddr,
    /// The HTTP port (status page, `/metrics`).
    pub http: SocketAddr,
}

/// The admin port's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AdminStats {
    /// Its connections.
    pub connections: ConnectionStats,
    /// Requests (statement batches) served.
    pub requests: u64,
    /// Commands run.
    pub statements: u64,
    /// Commands that failed.
    pub failed_statements: u64,
    /// Connections closed for a malformed, unknown or oversized request.
    pub malformed_requests: u64,
}

/// The HTTP port's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HttpStats {
    /// Its connections.
    pub connections: ConnectionStats,
    /// Requests answered (any status).
    pub requests: u64,
    /// Requests answered with a 4xx or 5xx status.
    pub failed_requests: u64,
}

/// One region as the page and the metrics show it.
#[derive(Debug, Clone)]
pub struct RegionSnapshot {
    /// HBase's region name (`table,start key,id`).
    pub name: String,
    /// What the engine reports of it.
    pub info: RegionInfo,
    /// When the server first saw its latest flush.
    pub last_flush: Option<SystemTime>,
    /// When the server first saw its latest compaction.
    pub last_compaction: Option<SystemTime>,
}

/// One table.
#[derive(Debug, Clone)]
pub struct TableSnapshot {
    /// Its name (`ns:table` outside the default namespace).
    pub name: String,
    /// False when disabled.
    pub enabled: bool,
    /// Its column families.
    pub families: Vec<String>,
    /// Its regions in key order.
    pub regions: Vec<RegionSnapshot>,
    /// Its counters since the database opened, across splits and merges
    /// ([`strata::Table::activity`]).
    pub activity: RegionActivity,
}

/// The WAL's files on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WalFiles {
    /// Segment files.
    pub segments: u64,
    /// Their size in bytes (preallocated space included).
    pub bytes: u64,
}

/// Everything the page and the metrics show, taken at one moment.
#[derive(Debug, Clone)]
pub struct StateSnapshot {
    /// When it was taken.
    pub taken_at: SystemTime,
    /// When the server started.
    pub started_at: SystemTime,
    /// The database directory.
    pub data_dir: PathBuf,
    /// The server's ports.
    pub addresses: Addresses,
    /// The engine's counters.
    pub stats: DbStats,
    /// The engine's metrics: latency histograms, compaction debt, open files, per-table
    /// activity ([`Db::metrics`]; its `stats` are [`StateSnapshot::stats`]).
    pub engine: DbMetrics,
    /// Flushes and compactions queued and running.
    pub background: BackgroundWork,
    /// The last failure of a background job, in words.
    pub background_error: Option<String>,
    /// The storage failure that stopped every change, in words.
    pub storage_failure: Option<String>,
    /// The WAL's files on disk.
    pub wal_files: WalFiles,
    /// Every table, by name.
    pub tables: Vec<TableSnapshot>,
    /// The Thrift gateway's counters.
    pub thrift: ServerStats,
    /// The admin port's counters.
    pub admin: AdminStats,
    /// The HTTP port's counters.
    pub http: HttpStats,
}

impl StateSnapshot {
    /// Seconds since the server started.
    pub fn uptime(&self) -> Duration {
        self.taken_at
            .duration_since(self.started_at)
            .unwrap_or_default()
    }

    /// Regions of every table.
    pub fn region_count(&self) -> usize {
        self.tables.iter().map(|table| table.regions.len()).sum()
    }
}

/// A table and its regions as the engine reports them.
#[derive(Debug, Clone)]
pub struct TableRegions {
    /// The table's name.
    pub name: String,
    /// False when disabled.
    pub enabled: bool,
    /// Its column families.
    pub families: Vec<String>,
    /// Its regions in key order.
    pub regions: Vec<RegionInfo>,
    /// Its counters since the database opened ([`strata::Table::activity`]).
    pub activity: RegionActivity,
}

/// The tables of `db` and their regions; a table dropped meanwhile is left out.
pub fn tables(db: &Db) -> Vec<TableRegions> {
    let mut tables = Vec::new();
    for name in db.list_tables() {
        let Ok(table) = db.table(&name) else { continue };
        let (Ok(descriptor), Ok(regions), Ok(activity)) =
            (table.descriptor(), table.regions(), table.activity())
        else {
            continue;
        };
        let families = descriptor
            .families()
            .iter()
            .map(|family| family.name().to_owned())
            .collect();
        tables.push(TableRegions {
            name,
            enabled: table.is_enabled(),
            families,
            regions,
            activity,
        });
    }
    tables
}

/// The WAL segment files under `data_dir/wal` (0 and 0 when it cannot be read).
pub fn wal_files(data_dir: &Path) -> WalFiles {
    let mut files = WalFiles::default();
    let Ok(entries) = std::fs::read_dir(data_dir.join("wal")) else {
        return files;
    };
    for entry in entries.flatten() {
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        if metadata.is_file() {
            files.segments += 1;
            files.bytes += metadata.len();
        }
    }
    files
}

/// What the server last saw of one region.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    flushes: u64,
    compactions: u64,
    last_flush: Option<SystemTime>,
    last_compaction: Option<SystemTime>,
}

/// When each region's flush and compaction counts were last seen to go up.
#[derive(Debug, Default)]
pub struct RegionWatch {
    regions: HashMap<u64, Seen>,
    /// False until the first look: counts found then predate the server's watch.
    primed: bool,
}

impl RegionWatch {
    /// Compares `tables` with what was seen before, at `now`: notes (and logs) every region
    /// whose flush or compaction count went up, and forgets regions that are gone. Returns
    /// the tables as snapshots with their regions' last flush and compaction times.
    pub fn observe(&mut self, tables: Vec<TableRegions>, now: SystemTime) -> Vec<TableSnapshot> {
        let mut still_there = HashMap::with_capacity(self.regions.len());
        let mut snapshots = Vec::with_capacity(tables.len());
        for table in tables {
            let mut region_snapshots = Vec::with_capacity(table.regions.len());
            for info in table.regions {
                let name = region_name(&table.name, &info);
                let mut seen = self.regions.get(&info.id).copied().unwrap_or_default();
                let activity = info.activity;
                if activity.flushes > seen.flushes {
                    if self.primed {
                        seen.last_flush = Some(now);
                        tracing::info!(
                            target: "strata::server::watch",
                            region = name.as_str(),
                            flushes = activity.flushes - seen.flushes,
                            "region flushed"
                        );
                    }
                    seen.flushes = activity.flushes;
                }
                if activity.compactions > seen.compactions {
                    if self.primed {
                        seen.last_compaction = Some(now);
                        tracing::info!(
                            target: "strata::server::watch",
                            region = name.as_str(),
                            compactions = activity.compactions - seen.compactions,
                            "region compacted"
                        );
                    }
                    seen.compactions = activity.compactions;
                }
                still_there.insert(info.id, seen);
                region_snapshots.push(RegionSnapshot {
                    name,
                    info,
                    last_flush: seen.last_flush,
                    last_compaction: seen.last_compaction,
                });
            }
            snapshots.push(TableSnapshot {
                name: table.name,
                enabled: table.enabled,
                families: table.families,
                regions: region_snapshots,
                activity: table.activity,
            });
        }
        self.regions = still_there;
        self.primed = true;
        snapshots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(id: u64, flushes: u64, compactions: u64) -> RegionInfo {
        RegionInfo {
            id,
            start_key: Vec::new(),
            end_key: Vec::new(),
            memstore_bytes: 0,
            memstore_cells: 0,
            files_per_level: vec![0; 7],
            file_bytes: 0,
            file_cells: 0,
            activity: RegionActivity {
                flushes,
                compactions,
                ..RegionActivity::default()
            },
        }
    }

    fn table(regions: Vec<RegionInfo>) -> Vec<TableRegions> {
        vec![TableRegions {
            name: "t".to_owned(),
            enabled: true,
            families: vec!["f".to_owned()],
            regions,
            activity: RegionActivity::default(),
        }]
    }

    #[test]
    fn the_watch_dates_flushes_and_compactions_from_when_it_saw_them() {
        let mut watch = RegionWatch::default();
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        // What happened before the first look is not dated.
        let first = watch.observe(table(vec![region(1, 3, 1)]), start);
        assert_eq!(first[0].regions[0].last_flush, None);
        assert_eq!(first[0].regions[0].name, "t,,1");

        let later = start + Duration::from_secs(5);
        let second = watch.observe(table(vec![region(1, 4, 1), region(2, 1, 0)]), later);
        assert_eq!(second[0].regions[0].last_flush, Some(later));
        assert_eq!(second[0].regions[0].last_compaction, None);
        assert_eq!(second[0].regions[1].last_flush, Some(later));

        let third_time = later + Duration::from_secs(5);
        let third = watch.observe(table(vec![region(1, 4, 2)]), third_time);
        assert_eq!(third[0].regions[0].last_flush, Some(later));
        assert_eq!(third[0].regions[0].last_compaction, Some(third_time));
        assert_eq!(watch.regions.len(), 1, "region 2 is gone and forgotten");
    }
}
