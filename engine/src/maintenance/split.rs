//! Splitting a region into two daughters that share the parent's files
//! until compaction rewrites them (HBase's reference files, without the
//! references: a daughter reads only rows in its range).
//!
//! 1. Flush the parent, so its memstores are empty and both daughters start
//!    from its flushed sequence.
//! 2. Pick the split key (the caller's, or the middle key of the parent's
//!    largest file) and check it lies strictly inside the parent.
//! 3. Record the split in the manifest: two new region ids, each listing the
//!    parent's files.
//! 4. Swap the daughters in for the parent in the table's state and retire
//!    the parent.
//!
//! The caller holds the table's split gate (writes wait meanwhile) and the
//! parent's compaction slot. A crash before step 3 leaves the parent; after
//! it, the daughters.

use std::sync::Arc;

use crate::catalog::{TableInner, TableState};
use crate::core::Services;
use crate::error::{Error, Result};
use crate::manifest::{Edit, RegionRecord, edit};
use crate::region::Region;
use crate::store::Store;

use super::flush::flush_region;

/// Splits `region` at `key` (default: its middle key). Returns the
/// daughters, or `None` when there was nothing to split (no data, or a
/// single row).
pub(crate) fn split_region(
    services: &Services,
    table: &TableInner,
    region: &Arc<Region>,
    key: Option<Vec<u8>>,
) -> Result<Option<Vec<Arc<Region>>>> {
    let started = std::time::Instant::now();
    flush_region(services, table, region)?;
    let key = match key {
        Some(key) => key,
        None => match middle_key(region)? {
            Some(key) => key,
            None => return Ok(None),
        },
    };
    check_inside(region, &key)?;
    let split_key = key.escape_ascii().to_string();
    let records = record_split(services, table, region, key)?;
    let daughters = daughters(table, region, &records);
    install(table, region, &daughters);
    tracing::info!(
        table = %table.name,
        region = region.id(),
        split_key,
        daughters = ?daughters.iter().map(|d| d.id()).collect::<Vec<_>>(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "split a region"
    );
    services
        .counters
        .splits
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(Some(daughters))
}

/// Step 2: the key must leave rows on both sides.
fn check_inside(region: &Region, key: &[u8]) -> Result<()> {
    if key <= region.start() || (!region.end().is_empty() && key >= region.end()) {
        return Err(Error::SplitKeyOutsideRegion {
            key: key.to_vec(),
            start: region.start().to_vec(),
            end: region.end().to_vec(),
        });
    }
    Ok(())
}

/// Step 3: the daughters' records, made durable.
fn record_split(
    services: &Services,
    table: &TableInner,
    region: &Region,
    key: Vec<u8>,
) -> Result<Vec<RegionRecord>> {
    let files = super::region_files(region);
    let flushed = region.flushed_sequence();
    let first_id = services.manifest().allocate_region_ids(2);
    let bounds = [
        (region.start().to_vec(), key.clone()),
        (key, region.end().to_vec()),
    ];
    let records: Vec<RegionRecord> = bounds
        .into_iter()
        .enumerate()
        .map(|(i, (start, end))| RegionRecord {
            id: first_id + i as u64,
            start,
            end,
            flushed_sequence: flushed,
            files: files.clone(),
        })
        .collect();
    services.record(&Edit::SplitRegion(edit::SplitRegion {
        table_id: table.id,
        parent_id: region.id(),
        daughters: records.clone(),
    }))?;
    Ok(records)
}

/// The daughters of `region`: each store starts from the parent's files.
fn daughters(table: &TableInner, region: &Region, records: &[RegionRecord]) -> Vec<Arc<Region>> {
    let flushed = region.flushed_sequence();
    let stores = region.stores();
    records
        .iter()
        .map(|r| {
            let stores = stores
                .iter()
                .map(|s| {
                    Arc::new(Store::with_version(
                        s.family_id(),
                        s.family_name(),
                        s.version().with_split(flushed),
                    ))
                })
                .collect();
            Arc::new(Region::new(
                r.id,
                table.id,
                r.start.clone(),
                r.end.clone(),
                stores,
                flushed,
            ))
        })
        .collect()
}

/// Step 4: the daughters replace the parent in the table's state.
fn install(table: &TableInner, region: &Arc<Region>, daughters: &[Arc<Region>]) {
    table.state.replace(|state| {
        let mut regions = state.regions.clone();
        if let Some(at) = regions.iter().position(|r| Arc::ptr_eq(r, region)) {
            regions.splice(at..=at, daughters.iter().cloned());
        }
        // The parent's counters move to the table's retired ones in the same swap, so the
        // table's totals do not drop when the daughters start theirs at zero.
        TableState::new(state.descriptor.clone(), state.family_ids.clone(), regions)
            .retiring(state.retired_activity, [region])
    });
    region.schedule.retire();
}

/// A key near the middle of `region`'s data: the middle row of the
/// middle block (within the region) of its largest file, always above
/// the region's first row there so that neither daughter starts empty;
/// `None` when the data cannot be cut (empty, or a single row).
pub(crate) fn middle_key(region: &Region) -> Result<Option<Vec<u8>>> {
    let Some(file) = region.largest_file() else {
        return Ok(None);
    };
    let std::ops::Range { start: lo, end: hi } = file.blocks_in(region.start(), region.end())?;
    // The region's first row in this file: a split key must be above it,
    // or the lower daughter would be empty (HBase refuses such a
    // midkey too).
    let mut first_row = None;
    'find_first: for ordinal in lo..hi {
        let block = file.data_block(ordinal)?;
        for r in 0..block.rows() {
            if block.row(r) >= region.start() {
                first_row = Some(block.row(r).to_vec());
                break 'find_first;
            }
        }
    }
    let Some(first_row) = first_row else {
        return Ok(None);
    };
    // The middle row of the middle block, or the next row above the
    // region's first one after it.
    let middle = lo + (hi - lo) / 2;
    for ordinal in middle..hi {
        let block = file.data_block(ordinal)?;
        // In the middle block, start at the middle of the rows inside
        // the region (a shared parent file also holds rows outside it).
        let from = if ordinal == middle {
            let inside = (0..block.rows())
                .filter(|&r| {
                    let row = block.row(r);
                    row >= region.start() && (region.end().is_empty() || row < region.end())
                })
                .collect::<Vec<_>>();
            inside.get(inside.len() / 2).copied().unwrap_or(0)
        } else {
            0
        };
        for r in from..block.rows() {
            let key = block.row(r);
            if !region.end().is_empty() && key >= region.end() {
                return Ok(None);
            }
            if key > first_row.as_slice() {
                return Ok(Some(key.to_vec()));
            }
        }
    }
    Ok(None)
}
