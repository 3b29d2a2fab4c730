//! Write stalls: what a write waits for before it may go on, and the
//! flushes a write's growth makes necessary.
//!
//! Before a write to a region: flushes are scheduled when the region's
//! memstores or all memstores together pass their limits; the writer slows
//! down gradually (half a millisecond per L0 file past
//! `l0_slowdown_files`) and waits while the region's memstores hold
//! [`MEMSTORE_BLOCK_MULTIPLIER`] times its flush size, while all memstores
//! hold one and a half times the global limit, or while L0 is at
//! `l0_stop_files`. A stalled writer rechecks whenever a background job
//! finishes, at least every [`STALL_RECHECK`]; it gives up with
//! [`Error::BackgroundFailed`] when the pool is idle after a failure (no job
//! will make room).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::Supervisor;
use crate::catalog::TableInner;
use crate::error::{Error, Result};
use crate::region::Region;

/// The writers waiting at a hard limit now.
#[derive(Default)]
pub(super) struct Stalls {
    /// Writers waiting.
    writers: usize,
    /// When the number of writers waiting last went up from 0.
    since: Option<Instant>,
}

/// A writer waiting at a hard limit; dropping it (the wait is over, or
/// failed) uncounts it, and the last one ends the stall, an operator event.
pub(super) struct StalledWriter<'a> {
    supervisor: &'a Supervisor,
}

impl Drop for StalledWriter<'_> {
    fn drop(&mut self) {
        let mut stalls = self.supervisor.stalled.lock();
        stalls.writers = stalls.writers.saturating_sub(1);
        if stalls.writers == 0 {
            let stalled_ms = stalls
                .since
                .take()
                .map_or(0, |since| since.elapsed().as_millis() as u64);
            tracing::info!(stalled_ms, "writes resumed");
        }
    }
}

/// Writes to a region wait while its memstores hold this many times the
/// flush size.
const MEMSTORE_BLOCK_MULTIPLIER: u64 = 4;
/// Longest a stalled writer waits before it rechecks its condition.
const STALL_RECHECK: Duration = Duration::from_millis(10);

impl Supervisor {
    /// Called before a write to `region`: schedules flushes the memory
    /// limits ask for, slows the writer down while L0 is deep, and makes it
    /// wait while L0 or memory are at their hard limits.
    pub(crate) fn before_write(
        &self,
        table: &Arc<TableInner>,
        region: &Arc<Region>,
        flush_size: u64,
    ) -> Result<()> {
        // When the write first slept or waited: only such a write counts as
        // stalled (the checks alone take well under a microsecond, which is
        // not a stall), and only it reads the clock (a clock read on every
        // write was 2% of a small put's CPU).
        let mut stalled_since: Option<Instant> = None;
        // Counted among the stalled writers while it waits at a hard limit.
        let mut waiting: Option<StalledWriter<'_>> = None;
        let o = &self.services.options;
        loop {
            let l0 = region.l0_files();
            let region_blocked =
                region.memstore_bytes() >= flush_size.saturating_mul(MEMSTORE_BLOCK_MULTIPLIER);
            let global = self.services.memstore_bytes.load(Ordering::Relaxed);
            let global_blocked = global
                >= o.global_memstore_limit_bytes
                    .saturating_add(o.global_memstore_limit_bytes / 2);
            if region_blocked {
                self.pool.schedule_flush(table, region);
            }
            if global >= o.global_memstore_limit_bytes {
                self.flush_largest_region();
            }
            if l0 >= o.l0_stop_files {
                self.pool.schedule_compaction(table, region);
            }
            if !(region_blocked || global_blocked || l0 >= o.l0_stop_files) {
                if l0 >= o.l0_slowdown_files {
                    // Gradual: each L0 file past the slowdown mark adds half a millisecond.
                    let extra = (l0 - o.l0_slowdown_files + 1) as u64;
                    stalled_since.get_or_insert_with(Instant::now);
                    std::thread::sleep(Duration::from_micros(500 * extra));
                }
                break;
            }
            // A storage failure stopped writes: no job will make room.
            self.services.check_writable()?;
            if let Some(failure) = self.pool.last_error()
                && self.pool.is_idle()
            {
                return Err(Error::BackgroundFailed {
                    source: Box::new(failure),
                });
            }
            if waiting.is_none() {
                let reason = if l0 >= o.l0_stop_files {
                    "l0 files"
                } else if region_blocked {
                    "region memstore"
                } else {
                    "global memstore"
                };
                waiting = Some(self.stall_begins(table, region, reason, l0, global));
            }
            stalled_since.get_or_insert_with(Instant::now);
            self.pool.wait_progress(STALL_RECHECK);
        }
        drop(waiting);
        if let Some(started) = stalled_since {
            let waited = started.elapsed().as_micros();
            let waited = u64::try_from(waited).unwrap_or(u64::MAX);
            self.services
                .counters
                .stall_micros
                .fetch_add(waited, Ordering::Relaxed);
            region
                .activity
                .stall_micros
                .fetch_add(waited, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Counts a writer that must wait at a hard limit: the first one
    /// starts a stall, an operator event (a writer only slowed down by L0
    /// files is counted in the stall time, not as a stall).
    fn stall_begins(
        &self,
        table: &TableInner,
        region: &Region,
        reason: &'static str,
        l0_files: usize,
        global_memstore_bytes: u64,
    ) -> StalledWriter<'_> {
        let mut stalls = self.stalled.lock();
        if stalls.writers == 0 {
            stalls.since = Some(Instant::now());
            tracing::warn!(
                table = %table.name,
                region = region.id(),
                reason,
                l0_files,
                region_memstore_bytes = region.memstore_bytes(),
                global_memstore_bytes,
                "writes stalled"
            );
        }
        stalls.writers += 1;
        StalledWriter { supervisor: self }
    }

    /// Called after a write grew `region`'s memstores.
    pub(crate) fn after_write(
        &self,
        table: &Arc<TableInner>,
        region: &Arc<Region>,
        flush_size: u64,
    ) {
        if region.unflushed_memstore_bytes() >= flush_size {
            self.pool.schedule_flush(table, region);
        }
        if self
            .services
            .wal_if_writable()
            .is_some_and(|wal| wal.segment_count() > self.services.options.max_wal_segments)
        {
            self.flush_regions_pinning_the_wal();
        }
    }

    fn flush_largest_region(&self) {
        if self.memory_flush_pending.swap(true, Ordering::AcqRel) {
            return;
        }
        let largest = self
            .catalog
            .all_regions()
            .into_iter()
            .max_by_key(|(_, r)| r.memstore_bytes());
        match largest {
            Some((table, region)) if region.memstore_bytes() > 0 => {
                self.pool.schedule_flush(&table, &region)
            }
            _ => self.memory_flush_pending.store(false, Ordering::Release),
        }
    }

    fn flush_regions_pinning_the_wal(&self) {
        let Some(oldest) = self
            .services
            .wal_if_writable()
            .and_then(crate::wal::Wal::oldest_segment_max_sequence)
        else {
            return;
        };
        for (table, region) in self.catalog.all_regions() {
            if region.memstore_cells() > 0 && region.flushed_sequence() < oldest {
                self.pool.schedule_flush(&table, &region);
            }
        }
    }
}
