//! The get path. A get first tries the direct path ([`super::direct`]),
//! which also answers absent rows from row filters and blooms; a get it
//! cannot read (a filter, many sources, a row that goes on past a block's
//! end) is a scan of one row through the merge (a [`RegionScanner`] over a
//! get's [`ScanPlan`]). Many gets at once are planned first, each by the
//! path it takes, and the data blocks all of them need that are not cached
//! are read in one batch before any row is read.

use std::ops::Bound;
use std::sync::Arc;

use super::direct::{DirectGet, DirectGetPlan, GetScratch, plan_direct_get, read_direct_get};
use super::filtering::{FilterStage, Verdict};
use super::plan::{ScanPlan, plan_get};
use super::scanner::RegionScanner;
use super::sink::{RowBuffer, RowSink};
use crate::catalog::TableState;
use crate::cell::RowResult;
use crate::error::Result;
use crate::hfile::block::BlockHandle;
use crate::hfile::reader::HFileReader;
use crate::ops::Get;
use crate::region::Region;
use crate::store::Store;

/// The region a row routes to, with its stores as the table's state has
/// them (what the table handle's routing gives a read).
pub(crate) type Routed<'s> = (&'s Arc<Region>, &'s [Arc<Store>]);

/// Reads the row of `get` from the region it routes to, at `read_point`:
/// the direct path first (which also answers absent rows from row filters
/// and blooms, with no separate check: under a steady writer every extra
/// pass over the store's locks cost the reader, their cache lines moving
/// between the reader's and the writer's cores), else the merge. An absent
/// row gives an empty result.
pub(crate) fn get_row(
    state: &TableState,
    (region, stores): Routed<'_>,
    get: &Get,
    read_point: u64,
    now_ms: i64,
) -> Result<RowResult> {
    count_get(region);
    let mut cells = Vec::new();
    let mut scratch = GetScratch::default();
    let direct = super::direct::read_row_directly(
        state,
        (region, stores),
        get,
        read_point,
        now_ms,
        &mut cells,
        &mut scratch,
    )?;
    if direct != DirectGet::NeedsMerge {
        return Ok(RowResult {
            row: get.row.clone(),
            cells,
        });
    }
    read_merged(state, region, get, read_point, now_ms)
}

/// Reads the row of `get` into `sink`: true when the get returns cells
/// (the sink then holds the row, begun afresh; when false, what the sink
/// holds means nothing). What [`get_row`] does, for sinks that lend;
/// `scratch` is kept from get to get by a reader of many rows.
pub(crate) fn get_row_into<S: RowSink>(
    state: &TableState,
    (region, stores): Routed<'_>,
    get: &Get,
    read_point: u64,
    now_ms: i64,
    sink: &mut S,
    scratch: &mut GetScratch,
) -> Result<bool> {
    count_get(region);
    match super::direct::read_row_directly(
        state,
        (region, stores),
        get,
        read_point,
        now_ms,
        sink,
        scratch,
    )? {
        DirectGet::Read => return Ok(sink.cell_count() > 0),
        DirectGet::Absent => return Ok(false),
        DirectGet::NeedsMerge => {}
    }
    let plan = plan_get(state, get, read_point, now_ms)?;
    read_row_into(&mut RegionScanner::open(region, &plan), &plan, sink)
}

/// Counts a single-row read of `region` (its rows are counted where they
/// are read).
#[inline]
fn count_get(region: &Region) {
    region
        .activity
        .gets
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Reads the row of `get` from `region` through the general path (a scan
/// plan and the merge), at `read_point`. An absent row gives an empty
/// result.
fn read_merged(
    state: &TableState,
    region: &Region,
    get: &Get,
    read_point: u64,
    now_ms: i64,
) -> Result<RowResult> {
    let mut plan = plan_get(state, get, read_point, now_ms)?;
    if let Some(row) = read_row(RegionScanner::open(region, &plan), &plan)? {
        return Ok(row);
    }
    // An absent row: its result takes the plan's copy of the key rather
    // than a fresh one.
    let row = match std::mem::replace(&mut plan.lower, Bound::Unbounded) {
        Bound::Included(row) | Bound::Excluded(row) => row,
        Bound::Unbounded => get.row.clone(),
    };
    Ok(RowResult {
        row,
        cells: Vec::new(),
    })
}

/// How a multi-get reads one of its keys.
enum PlannedGet<'s> {
    /// From the few sources that may hold it (a file's block, a memstore).
    Direct(&'s Region, DirectGetPlan<'s>),
    /// Through the merge: its sources chosen (memstores positioned, files
    /// picked by key range, time range and bloom), not yet read (boxed:
    /// much larger, and the slower path anyway).
    Merge(Box<(RegionScanner, ScanPlan)>),
}

/// Reads many rows, each from the region `regions` routes it to (one per
/// get, in order), at `read_point`; results in the order of `gets`. Each
/// get is planned once, directly from its sources when it can be (a
/// memstore, or a file whose index entry and block handle are found now),
/// else through the merge (blooms probed, memstores positioned); the data
/// blocks all of them need that are not cached are then read in one batch
/// (one io_uring submission), and the same plans read the rows.
pub(crate) fn get_many<'s>(
    state: &'s TableState,
    gets: &[Get],
    regions: &[Routed<'s>],
    read_point: u64,
    now_ms: i64,
) -> Result<Vec<RowResult>> {
    let planned = gets
        .iter()
        .zip(regions)
        .map(|(get, &routed)| plan_one(state, get, routed, read_point, now_ms))
        .collect::<Result<Vec<_>>>()?;
    // Held until the rows are read: the cache keeps them meanwhile.
    let _held = prefetch_blocks(gets, &planned)?;
    let mut scratch = GetScratch::default();
    gets.iter()
        .zip(planned)
        .map(|(get, planned)| read_planned(state, get, planned, (read_point, now_ms), &mut scratch))
        .collect()
}

/// Plans one get of a multi-get by the path it takes.
fn plan_one<'s>(
    state: &'s TableState,
    get: &Get,
    (region, stores): Routed<'s>,
    read_point: u64,
    now_ms: i64,
) -> Result<PlannedGet<'s>> {
    count_get(region);
    Ok(match plan_direct_get(state, stores, get, now_ms)? {
        Some(plan) => PlannedGet::Direct(region, plan),
        None => {
            let plan = plan_get(state, get, read_point, now_ms)?;
            PlannedGet::Merge(Box::new((RegionScanner::open(region, &plan), plan)))
        }
    })
}

/// Reads into the cache, in one batch, the data blocks the planned gets
/// need that it does not hold; the returned guard holds them.
fn prefetch_blocks(gets: &[Get], planned: &[PlannedGet<'_>]) -> Result<impl Sized + use<>> {
    let mut wanted: Vec<(&HFileReader, BlockHandle)> = Vec::new();
    for (get, planned) in gets.iter().zip(planned) {
        match planned {
            PlannedGet::Direct(_, plan) => wanted.extend(plan.blocks()),
            PlannedGet::Merge(merge) => {
                for file in merge.0.files() {
                    if let Some((_, handle)) = file.seek_block_handle(&get.row)? {
                        wanted.push((file.as_ref(), handle));
                    }
                }
            }
        }
    }
    HFileReader::prefetch(&wanted)
}

/// Reads one planned get of a multi-get.
fn read_planned(
    state: &TableState,
    get: &Get,
    planned: PlannedGet<'_>,
    (read_point, now_ms): (u64, i64),
    scratch: &mut GetScratch,
) -> Result<RowResult> {
    let found = match planned {
        PlannedGet::Direct(region, plan) => {
            let mut cells = Vec::new();
            return match read_direct_get(&plan, region, &get.row, read_point, &mut cells, scratch)?
            {
                DirectGet::Read | DirectGet::Absent => Ok(RowResult {
                    row: get.row.clone(),
                    cells,
                }),
                DirectGet::NeedsMerge => read_merged(state, region, get, read_point, now_ms),
            };
        }
        PlannedGet::Merge(merge) => {
            let (scanner, plan) = *merge;
            read_row(scanner, &plan)?
        }
    };
    Ok(found.unwrap_or_else(|| RowResult {
        row: get.row.clone(),
        cells: Vec::new(),
    }))
}

/// The one row of `scanner` (opened with the get plan `plan`), through the
/// filter; `None` when it returns no cell.
fn read_row(mut scanner: RegionScanner, plan: &ScanPlan) -> Result<Option<RowResult>> {
    let mut cells = Vec::new();
    if !read_row_into(&mut scanner, plan, &mut cells)? {
        return Ok(None);
    }
    // The scanner's row buffer becomes the result's key: no second copy.
    Ok(Some(RowResult {
        row: scanner.take_row_key(),
        cells,
    }))
}

/// The row of `scanner` (opened with the get plan `plan`) into `sink`,
/// through the filter: true when it returns cells (the sink then holds
/// them).
fn read_row_into<S: RowSink>(
    scanner: &mut RegionScanner,
    plan: &ScanPlan,
    sink: &mut S,
) -> Result<bool> {
    match &plan.filter {
        None => scanner.next_row(plan, sink),
        Some(setup) => {
            let mut visible = RowBuffer::default();
            if !scanner.next_row(plan, &mut visible)? {
                return Ok(false);
            }
            let mut stage = FilterStage::new(
                setup,
                false,
                plan.filter_max_versions,
                plan.families.iter().map(|family| family.name.as_slice()),
            )?;
            Ok(matches!(
                stage.process(&visible, sink),
                Verdict::Return { .. }
            ))
        }
    }
}
