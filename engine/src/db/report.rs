//! What a database reports about itself: counters, what opening found, and
//! a check of every block of every HFile.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::Db;
use crate::compaction::pick;
use crate::error::{Error, Result};
use crate::hfile::cache::CacheStats;
use crate::io::Backend;
use crate::io::budget::IoBudgetStats;
use crate::metrics::LatencySnapshot;
use crate::region::RegionActivity;
use crate::wal::{Wal, WalStats};

/// Counters describing a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DbStats {
    /// Bytes of memory held by all memstores.
    pub memstore_bytes: u64,
    /// The highest sequence number handed out.
    pub last_sequence: u64,
    /// Group commit counters of the WAL.
    pub wal: WalStats,
    /// The I/O back end in use.
    pub io_backend: Backend,
    /// Block cache counters.
    pub cache: CacheStats,
    /// Flushes completed since open.
    pub flushes: u64,
    /// Compactions completed since open.
    pub compactions: u64,
    /// Bytes of HFiles written by flushes and compactions since open.
    pub hfile_bytes_written: u64,
    /// HFiles in the database and their total size in bytes.
    pub files: u64,
    /// Total size of the HFiles in bytes.
    pub file_bytes: u64,
    /// Microseconds writers spent stalled (slowed down or waiting).
    pub stall_micros: u64,
    /// Region splits completed since open.
    pub splits: u64,
    /// Region merges completed since open.
    pub merges: u64,
    /// Bulk loads completed since open.
    pub bulk_loads: u64,
    /// Bytes of the files bulk loads installed since open.
    pub bulk_loaded_bytes: u64,
    /// Background flushes, compactions and splits that failed since open;
    /// [`Db::background_error`] holds the last failure.
    pub background_failures: u64,
}

/// Everything the database counts, taken at one moment by [`Db::metrics`]:
/// the counters of [`DbStats`], latency histograms of the operations, the
/// compaction debt, the open files and each table's and region's activity.
/// Counters run from the open (a region's from the split or merge that made
/// it); take two snapshots and subtract to see an interval.
#[derive(Debug, Clone, PartialEq)]
pub struct DbMetrics {
    /// The database's counters.
    pub stats: DbStats,
    /// Commits of row mutations (puts, deletes, increments, appends,
    /// check-and-mutate, batches), from the WAL append until visible (and
    /// durable when asked). Sampled: see [`crate::LATENCY_SAMPLE_PERIOD`].
    pub writes: LatencySnapshot,
    /// Single-row gets ([`crate::Table::get`], [`crate::RowReader`]).
    /// Sampled: see [`crate::LATENCY_SAMPLE_PERIOD`].
    pub gets: LatencySnapshot,
    /// Scans ([`crate::Table::scan`], `scan_cursor`, `scan_parallel`), from
    /// their start until the scanner is dropped (the caller's time between
    /// rows included). Every scan is timed.
    pub scans: LatencySnapshot,
    /// WAL writes that included a sync. Every one is timed.
    pub wal_syncs: LatencySnapshot,
    /// Bytes compaction has to rewrite before no level of any store is over
    /// its trigger or target (an estimate, as RocksDB's pending-compaction
    /// bytes).
    pub compaction_debt_bytes: u64,
    /// Files the database holds open: HFiles, WAL segments, the manifest.
    pub open_files: u64,
    /// The background I/O budget's limit, the bytes flushes and
    /// compactions wrote through it and the time they waited for it
    /// (`None` when `DbOptions::background_write_bytes_per_sec` is 0).
    pub io_budget: Option<IoBudgetStats>,
    /// Every table, by name.
    pub tables: Vec<TableMetrics>,
}

/// One table's part of [`DbMetrics`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableMetrics {
    /// The table's name.
    pub name: String,
    /// Its counters since the database opened: its regions' added up, plus
    /// those of the regions it had before splits, merges and restores (a
    /// region they make starts at zero; the table's total never goes down).
    pub activity: RegionActivity,
    /// Its compaction debt in bytes (see [`DbMetrics::compaction_debt_bytes`]).
    pub compaction_debt_bytes: u64,
    /// Each region's id and counters, in key order.
    pub regions: Vec<(u64, RegionActivity)>,
}

/// The background work waiting and running now: the flush and compaction
/// queue an operator watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BackgroundWork {
    /// Region flushes queued.
    pub queued_flushes: usize,
    /// Region compactions queued (at most one per region).
    pub queued_compactions: usize,
    /// Region splits queued.
    pub queued_splits: usize,
    /// Normalizer runs queued (at most one per table).
    pub queued_normalizations: usize,
    /// Jobs running now (at most the background threads).
    pub running: usize,
}

/// What replay found on open.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecoveryReport {
    /// Row mutations replayed from the WAL.
    pub records_replayed: u64,
    /// Records skipped: already flushed, or their table or family dropped.
    pub records_skipped: u64,
    /// Where a torn WAL tail was cut, if one was.
    pub torn_tail: Option<(PathBuf, u64)>,
    /// Files deleted because no manifest entry referenced them.
    pub orphan_files_deleted: u64,
    /// An edit appended to the manifest after its last commit that did not
    /// read back whole: a crash cut its append short, and nothing acted on
    /// it. The manifest file and the edit's offset.
    pub manifest_torn_tail: Option<(PathBuf, u64)>,
    /// With [`crate::WalRecovery::PointInTime`]: the damaged WAL segment and
    /// the offset where replay stopped. Every record after it was discarded.
    pub wal_damage: Option<(PathBuf, u64)>,
    /// Copies, under `wal/damaged/`, of the segments point-in-time recovery
    /// cut or set aside, as they were before.
    pub wal_set_aside: Vec<PathBuf>,
}

impl RecoveryReport {
    /// The open's operator events: one summary, and a warning for each kind
    /// of damage recovery met.
    pub(super) fn log_open(
        &self,
        dir: &std::path::Path,
        read_only: bool,
        tables: usize,
        elapsed: std::time::Duration,
    ) {
        tracing::info!(
            dir = %dir.display(),
            read_only,
            tables,
            records_replayed = self.records_replayed,
            records_skipped = self.records_skipped,
            orphan_files_deleted = self.orphan_files_deleted,
            elapsed_ms = elapsed.as_millis() as u64,
            "opened the database"
        );
        if let Some((file, offset)) = &self.torn_tail {
            tracing::warn!(
                file = %file.display(),
                offset,
                "damage found: the WAL's last record was torn (a crash cut it); replay stopped there"
            );
        }
        if let Some((file, offset)) = &self.manifest_torn_tail {
            tracing::warn!(
                file = %file.display(),
                offset,
                "damage found: the manifest's last edit was torn (a crash cut it) and is ignored"
            );
        }
        if let Some((file, offset)) = &self.wal_damage {
            tracing::warn!(
                file = %file.display(),
                offset,
                set_aside = ?self.wal_set_aside,
                "damage found: point-in-time recovery discarded every WAL record from here"
            );
        }
    }
}

/// What [`Db::verify`] found.
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    /// HFiles checked.
    pub files: u64,
    /// Data blocks checked.
    pub blocks: u64,
    /// Every problem found, each naming its file and offset.
    pub problems: Vec<Error>,
}

impl Db {
    /// Checks every block of every HFile of the database.
    pub fn verify(&self) -> Result<VerifyReport> {
        self.check_open()?;
        let mut report = VerifyReport::default();
        for file in self.inner.catalog.distinct_files() {
            report.files += 1;
            report.blocks += file.block_count() as u64;
            report.problems.extend(file.verify());
        }
        for problem in &report.problems {
            tracing::warn!(error = %problem, "damage found by verify");
        }
        Ok(report)
    }

    /// Counters describing the database.
    pub fn stats(&self) -> DbStats {
        let all_files = self.inner.catalog.distinct_files();
        let files = all_files.len() as u64;
        let file_bytes = all_files.iter().map(|f| f.meta().size).sum();
        let services = &self.inner.services;
        let s = &services.counters;
        DbStats {
            memstore_bytes: services.memstore_bytes.load(Ordering::Relaxed),
            last_sequence: services.mvcc.last_sequence(),
            wal: services
                .wal_if_writable()
                .map(Wal::stats)
                .unwrap_or_default(),
            io_backend: services.io.backend(),
            cache: services.cache.stats(),
            flushes: s.flushes.load(Ordering::Relaxed),
            compactions: s.compactions.load(Ordering::Relaxed),
            hfile_bytes_written: s.bytes_flushed_or_compacted.load(Ordering::Relaxed),
            files,
            file_bytes,
            stall_micros: s.stall_micros.load(Ordering::Relaxed),
            splits: s.splits.load(Ordering::Relaxed),
            merges: s.merges.load(Ordering::Relaxed),
            bulk_loads: s.bulk_loads.load(Ordering::Relaxed),
            bulk_loaded_bytes: s.bytes_bulk_loaded.load(Ordering::Relaxed),
            background_failures: s.background_failures.load(Ordering::Relaxed),
        }
    }

    /// Everything the database counts, at one moment (see [`DbMetrics`]).
    /// Cheap: relaxed loads of counters and histograms, one pass over the
    /// regions; nothing is reset.
    pub fn metrics(&self) -> DbMetrics {
        let services = &self.inner.services;
        let options = &services.options;
        let tables: Vec<TableMetrics> = self
            .inner
            .catalog
            .tables()
            .into_iter()
            .map(|table| {
                let state = table.state.read().clone();
                let regions = &state.regions;
                let compaction_debt_bytes = regions
                    .iter()
                    .flat_map(|region| region.stores())
                    .map(|store| pick::debt_bytes(&store.version(), options))
                    .sum();
                let regions: Vec<(u64, RegionActivity)> = regions
                    .iter()
                    .map(|region| (region.id(), region.activity_snapshot()))
                    .collect();
                TableMetrics {
                    name: table.name.clone(),
                    activity: state.total_activity(regions.iter().map(|(_, a)| *a)),
                    compaction_debt_bytes,
                    regions,
                }
            })
            .collect();
        let latencies = &services.latencies;
        DbMetrics {
            stats: self.stats(),
            writes: latencies.write.snapshot(),
            gets: latencies.get.snapshot(),
            scans: latencies.scan.snapshot(),
            wal_syncs: services
                .wal_if_writable()
                .map(Wal::sync_latency)
                .unwrap_or_default(),
            compaction_debt_bytes: tables.iter().map(|t| t.compaction_debt_bytes).sum(),
            open_files: services.io.open_files(),
            io_budget: services.io_budget.as_ref().map(|budget| budget.stats()),
            tables,
        }
    }

    /// The flushes, compactions, splits and normalizer runs queued, and the
    /// jobs running, now.
    pub fn background_work(&self) -> BackgroundWork {
        let (flushes, compactions, splits, normalizations, running) =
            self.inner.supervisor.backlog();
        BackgroundWork {
            queued_flushes: flushes,
            queued_compactions: compactions,
            queued_splits: splits,
            queued_normalizations: normalizations,
            running,
        }
    }

    /// The last failure of a background flush, compaction or split, as the
    /// job met it (also counted in [`DbStats::background_failures`]). A
    /// writer stalled behind a failed job gets it as
    /// [`Error::BackgroundFailed`].
    pub fn background_error(&self) -> Option<Error> {
        self.inner.supervisor.last_error()
    }

    /// The storage failure that put the database in read-only mode, if one
    /// did: a failed WAL write or sync, a flush, compaction or split that
    /// could not write or read, a manifest edit that failed. Every change
    /// then fails with [`Error::WritesStopped`] naming it, reads keep
    /// working, and reopening the database (once the cause is fixed, for
    /// instance space freed) resumes writes with nothing acknowledged lost
    /// (`docs/reliability.md`).
    pub fn storage_failure(&self) -> Option<Error> {
        self.inner.services.write_stop()
    }
}
