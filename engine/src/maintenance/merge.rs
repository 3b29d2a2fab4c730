//! Merging two adjacent regions into one (HBase's `merge_region`), the
//! reverse of [`super::split`]: the merged region takes the files of both.
//!
//! 1. Rewrite files a split left shared with a sibling (a merged region may
//!    only hold files whose rows lie in its parents, or rows the parents'
//!    compactions already dropped would come back).
//! 2. Flush both regions, so their memstores are empty and the merged
//!    region starts from the higher of their flushed sequences.
//! 3. Record the merge in the manifest: a new region id, the first's start,
//!    the second's end, the files of both.
//! 4. Swap the merged region in for both in the table's state and retire
//!    them.
//!
//! The caller holds the table's split gate (writes wait meanwhile) and both
//! regions' compaction slots. A crash before step 3 leaves the two regions;
//! after it, the merged one. WAL records of the two old regions are all
//! flushed (step 2, with writes held), so replay skips them.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::catalog::{TableInner, TableState};
use crate::compaction;
use crate::core::Services;
use crate::error::{Error, Result};
use crate::manifest::{Edit, RegionRecord, edit};
use crate::region::Region;
use crate::store::Store;

use super::flush::flush_region;

/// Merges `first` and the region right after it, `second`. Returns the
/// merged region.
pub(crate) fn merge_regions(
    services: &Services,
    table: &TableInner,
    first: &Arc<Region>,
    second: &Arc<Region>,
) -> Result<Arc<Region>> {
    check_adjacent(table, first, second)?;
    let started = std::time::Instant::now();
    for region in [first, second] {
        rewrite_shared_files(services, table, region)?;
        flush_region(services, table, region)?;
    }
    let record = record_merge(services, table, first, second)?;
    let merged = merged_region(table, first, second, &record);
    install(table, first, second, &merged);
    services.counters.merges.fetch_add(1, Ordering::Relaxed);
    tracing::info!(
        table = %table.name,
        first = first.id(),
        second = second.id(),
        merged = merged.id(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "merged two regions"
    );
    Ok(merged)
}

/// The first region must end where the second starts.
fn check_adjacent(table: &TableInner, first: &Region, second: &Region) -> Result<()> {
    if first.end().is_empty() || first.end() != second.start() {
        return Err(Error::RegionsNotAdjacent {
            table: table.name.clone(),
            first: first.id(),
            second: second.id(),
        });
    }
    Ok(())
}

/// Step 1: compactions until no store reads a file reaching past the region
/// (each compaction of such a region rewrites one store's shared files).
fn rewrite_shared_files(
    services: &Services,
    table: &TableInner,
    region: &Arc<Region>,
) -> Result<()> {
    let state = table.state.read().clone();
    for _ in 0..=region.stores().len() {
        if !region.has_shared_files() {
            return Ok(());
        }
        compaction::compact_most_urgent(services, &state, region)?;
    }
    if region.has_shared_files() {
        return Err(Error::io(
            format!("merging region {}", region.id()),
            std::io::Error::other("files shared with a sibling region were not rewritten"),
        ));
    }
    Ok(())
}

/// Step 3: the merged region's record, made durable.
fn record_merge(
    services: &Services,
    table: &TableInner,
    first: &Region,
    second: &Region,
) -> Result<RegionRecord> {
    let mut files = super::region_files(first);
    files.extend(super::region_files(second));
    let record = RegionRecord {
        id: services.manifest().allocate_region_ids(1),
        start: first.start().to_vec(),
        end: second.end().to_vec(),
        flushed_sequence: first.flushed_sequence().max(second.flushed_sequence()),
        files,
    };
    services.record(&Edit::MergeRegions(edit::MergeRegions {
        table_id: table.id,
        first_id: first.id(),
        second_id: second.id(),
        merged: record.clone(),
    }))?;
    Ok(record)
}

/// The merged region: each store starts from the files of both parents'.
fn merged_region(
    table: &TableInner,
    first: &Region,
    second: &Region,
    record: &RegionRecord,
) -> Arc<Region> {
    let stores = first
        .stores()
        .iter()
        .map(|lower| {
            let version = match second.store(lower.family_id()) {
                Some(upper) => lower
                    .version()
                    .with_merged(&upper.version(), record.flushed_sequence),
                None => lower.version().with_split(record.flushed_sequence),
            };
            Arc::new(Store::with_version(
                lower.family_id(),
                lower.family_name(),
                version,
            ))
        })
        .collect();
    Arc::new(Region::new(
        record.id,
        table.id,
        record.start.clone(),
        record.end.clone(),
        stores,
        record.flushed_sequence,
    ))
}

/// Step 4: the merged region replaces both in the table's state.
fn install(table: &TableInner, first: &Arc<Region>, second: &Arc<Region>, merged: &Arc<Region>) {
    table.state.replace(|state| {
        let mut regions = state.regions.clone();
        if let Some(at) = regions.iter().position(|r| Arc::ptr_eq(r, first))
            && regions.get(at + 1).is_some_and(|r| Arc::ptr_eq(r, second))
        {
            regions.splice(at..=at + 1, [merged.clone()]);
        }
        TableState::new(state.descriptor.clone(), state.family_ids.clone(), regions)
            .retiring(state.retired_activity, [first, second])
    });
    first.schedule.retire();
    second.schedule.retire();
}

/// The region pairs HBase's normalizer would merge: in a table of at least
/// `min_regions` regions, adjacent regions older than the minimum age whose
/// sizes add up to less than `below_bytes` (or, when that is 0, less than
/// the table's average region size), each region in one pair at most. An
/// empty pre-split table (average 0) merges nothing.
pub(crate) fn normalizer_plan(
    regions: &[Arc<Region>],
    below_bytes: u64,
    min_regions: usize,
    min_age: std::time::Duration,
) -> Vec<(Arc<Region>, Arc<Region>)> {
    if regions.len() < min_regions.max(2) {
        return Vec::new();
    }
    let sizes: Vec<u64> = regions
        .iter()
        .map(|r| r.own_file_bytes() + r.memstore_bytes())
        .collect();
    let total: u64 = sizes.iter().sum();
    let threshold = if below_bytes > 0 {
        below_bytes
    } else {
        total / regions.len() as u64
    };
    let mut plan = Vec::new();
    let mut remaining = regions.len();
    let mut i = 0;
    while i + 1 < regions.len() && remaining > min_regions.max(1) {
        let (Some(a), Some(b)) = (regions.get(i), regions.get(i + 1)) else {
            break;
        };
        let pair_bytes =
            sizes.get(i).copied().unwrap_or(0) + sizes.get(i + 1).copied().unwrap_or(0);
        let old_enough = a.age() >= min_age && b.age() >= min_age;
        if old_enough && pair_bytes < threshold && !a.has_shared_files() && !b.has_shared_files() {
            plan.push((a.clone(), b.clone()));
            remaining -= 1;
            i += 2;
        } else {
            i += 1;
        }
    }
    plan
}
