//! The read path: plan a scan, walk its regions in order (or in reverse),
//! merge each store's sources at the read point, resolve versions and
//! deletes, and hand back rows.
//!
//! A get is a scan of one row.

pub(crate) mod cell_gate;
pub(crate) mod cursor;
pub(crate) mod filtering;
pub(crate) mod parallel;
pub(crate) mod resolve;
pub(crate) mod salted;
pub(crate) mod sink;

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use crate::catalog::TableState;
use crate::cell::{
    Cell, RowResult, TimeRange, compare_bytes, compare_keys, prefix_successor, validate_row,
};
use crate::cell::{CellRef, SeekKey};
use crate::error::{Error, Result};
use crate::gate::RowGate;
use crate::hfile::block::BlockHandle;
use crate::hfile::data_block::{DataBlock, DecodedCell, Position};
use crate::hfile::reader::HFileReader;
use crate::iter::merge::{MAX_RUN_BLOCKS, MergedSources, RunBlock};
use crate::memstore::Memstore;
use crate::ops::{ColumnSelection, Get, ReadOptions, Scan};
use crate::region::{ActivityCounters, Region};
use crate::schema::{FamilyPlan, family_plan};
use crate::store::{ReadScope, RowSource, Store};
use cell_gate::{BlockSelection, CellGate, RowVerdict};
use filtering::{FilterSetup, FilterStage, Verdict};
use resolve::{QueryRules, Resolver};
use sink::{RowBuffer, RowSink};
use smallvec::SmallVec;
use strata_filters::Bitmap;
use strata_filters::plan::Seek;

/// Everything a read needs to know, fixed when it starts.
#[derive(Debug, Clone)]
pub(crate) struct ScanPlan {
    /// Rows in `lower..upper`, in ascending key terms whatever the direction.
    pub(crate) lower: Bound<Vec<u8>>,
    pub(crate) upper: Bound<Vec<u8>>,
    pub(crate) reversed: bool,
    /// Families read, sorted by name (shared with the table's state when
    /// the read takes every family).
    pub(crate) families: Arc<[FamilyPlan]>,
    pub(crate) query: QueryRules,
    pub(crate) read_point: u64,
    pub(crate) limit: Option<u64>,
    pub(crate) batch: Option<usize>,
    /// The compiled filter, if any; with one, `query.max_versions` is
    /// unlimited and the filter stage applies `filter_max_versions` after
    /// filtering, as HBase does.
    pub(crate) filter: Option<FilterSetup>,
    pub(crate) filter_max_versions: u32,
    /// Push the filter's row-key parts down to the sources.
    pub(crate) vectorized: bool,
    /// The filter's cell predicates, when they alone decide rows: applied
    /// while rows are resolved (see [`cell_gate`]).
    pub(crate) cell_gate: Option<Arc<CellGate>>,
}

/// The filter part of a plan: compiles the filter for the scan range and
/// lifts the query's version limit above the filter stage.
fn attach_filter(
    plan: &mut ScanPlan,
    filter: Option<&Arc<strata_filters::Filter>>,
    vectorized: bool,
) -> Result<()> {
    let Some(filter) = filter else {
        return Ok(());
    };
    if plan.query.raw {
        return Err(Error::InvalidOption {
            name: "raw",
            reason: "a raw scan cannot take a filter (filters see visible cells only)".into(),
        });
    }
    let range = strata_filters::ScanRange {
        start: plan.lower.clone(),
        end: plan.upper.clone(),
        reversed: plan.reversed,
    };
    // A lone PrefixFilter (an HBase prefix scan) is plainly an interval:
    // not worth compiling a plan for (that was a fifth of a short prefix
    // scan's instructions).
    if let Some(interval) = strata_filters::Plan::plain_key_interval(filter) {
        narrow_to_interval(plan, &interval);
        return Ok(());
    }
    let setup = FilterSetup::compile(filter, &range)?;
    if let Some(interval) = setup.plan.as_key_interval() {
        // The filter only keeps the rows of one key interval (a
        // PrefixFilter, say): the scan reads that interval and nothing
        // else, without a filter stage.
        narrow_to_interval(plan, interval);
        return Ok(());
    }
    plan.cell_gate = CellGate::for_plan(&setup.plan).map(Arc::new);
    plan.filter = Some(setup);
    plan.filter_max_versions = plan.query.max_versions;
    plan.query.max_versions = u32::MAX;
    plan.vectorized = vectorized;
    Ok(())
}

/// Narrows the plan's bounds to the rows of `interval`.
fn narrow_to_interval(plan: &mut ScanPlan, interval: &strata_filters::ranges::KeyInterval) {
    plan.lower = max_lower(plan.lower.clone(), interval.start.clone());
    plan.upper = min_upper(plan.upper.clone(), interval.end.clone());
}

/// The version rules of a read's options (`raw`: markers and hidden cells
/// are returned too), checked: a valid time range, at least one version.
fn query_rules(read: &ReadOptions, raw: bool, now_ms: i64) -> Result<QueryRules> {
    Ok(QueryRules {
        time_range: TimeRange::new(read.time_min, read.time_max)?,
        max_versions: check_versions(read.max_versions)?,
        raw,
        now_ms,
    })
}

fn family_plans(state: &TableState, columns: &ColumnSelection) -> Result<Arc<[FamilyPlan]>> {
    if columns.is_all() {
        return Ok(state.all_families.clone());
    }
    let mut plans = Vec::new();
    for (name, qualifiers) in columns.families() {
        let (id, family) = state.family(name).ok_or_else(|| Error::UnknownFamily {
            table: state.descriptor.name().to_owned(),
            family: String::from_utf8_lossy(name).into_owned(),
        })?;
        plans.push(family_plan(id, family, qualifiers.cloned()));
    }
    plans.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(plans.into())
}

fn check_versions(versions: u32) -> Result<u32> {
    if versions == 0 {
        return Err(Error::InvalidOption {
            name: "max_versions",
            reason: "must be at least 1".into(),
        });
    }
    Ok(versions)
}

/// Tightens `lower` to at least `bound`.
fn max_lower(lower: Bound<Vec<u8>>, bound: Bound<Vec<u8>>) -> Bound<Vec<u8>> {
    use Bound::*;
    match (&lower, &bound) {
        (Unbounded, _) => bound,
        (_, Unbounded) => lower,
        (Included(a) | Excluded(a), Included(b) | Excluded(b)) => {
            if a < b || (a == b && matches!(bound, Excluded(_))) {
                bound
            } else {
                lower
            }
        }
    }
}

/// Tightens `upper` to at most `bound`.
fn min_upper(upper: Bound<Vec<u8>>, bound: Bound<Vec<u8>>) -> Bound<Vec<u8>> {
    use Bound::*;
    match (&upper, &bound) {
        (Unbounded, _) => bound,
        (_, Unbounded) => upper,
        (Included(a) | Excluded(a), Included(b) | Excluded(b)) => {
            if b < a || (a == b && matches!(bound, Excluded(_))) {
                bound
            } else {
                upper
            }
        }
    }
}

fn bound_of(key: &Option<(Vec<u8>, bool)>) -> Bound<Vec<u8>> {
    match key {
        // HBase treats an empty start or stop row as "no bound".
        Some((k, _)) if k.is_empty() => Bound::Unbounded,
        Some((k, true)) => Bound::Included(k.clone()),
        Some((k, false)) => Bound::Excluded(k.clone()),
        None => Bound::Unbounded,
    }
}

/// Plans a scan of the table as it is in `state`.
pub(crate) fn plan_scan(
    state: &TableState,
    scan: &Scan,
    read_point: u64,
    now_ms: i64,
) -> Result<ScanPlan> {
    let query = query_rules(&scan.read, scan.raw, now_ms)?;
    if scan.batch == Some(0) {
        return Err(Error::InvalidOption {
            name: "batch",
            reason: "must be at least 1 cell".into(),
        });
    }
    // HBase: a reversed scan starts at the larger key and stops at the smaller.
    let (mut lower, mut upper) = if scan.reversed {
        (bound_of(&scan.stop), bound_of(&scan.start))
    } else {
        (bound_of(&scan.start), bound_of(&scan.stop))
    };
    if let Some(prefix) = &scan.prefix
        && !prefix.is_empty()
    {
        lower = max_lower(lower, Bound::Included(prefix.clone()));
        if let Some(end) = prefix_successor(prefix) {
            upper = min_upper(upper, Bound::Excluded(end));
        }
    }
    let mut plan = ScanPlan {
        lower,
        upper,
        reversed: scan.reversed,
        families: family_plans(state, &scan.read.columns)?,
        query,
        read_point,
        limit: scan.limit,
        batch: scan.batch,
        filter: None,
        filter_max_versions: query.max_versions,
        vectorized: false,
        cell_gate: None,
    };
    attach_filter(&mut plan, scan.read.filter.as_ref(), scan.vectorized)?;
    Ok(plan)
}

/// Plans a get: a scan of exactly one row.
pub(crate) fn plan_get(
    state: &TableState,
    get: &Get,
    read_point: u64,
    now_ms: i64,
) -> Result<ScanPlan> {
    validate_row(&get.row)?;
    let query = query_rules(&get.read, false, now_ms)?;
    let mut plan = ScanPlan {
        lower: Bound::Included(get.row.clone()),
        upper: Bound::Included(get.row.clone()),
        reversed: false,
        families: family_plans(state, &get.read.columns)?,
        query,
        read_point,
        limit: Some(1),
        batch: None,
        filter: None,
        filter_max_versions: query.max_versions,
        vectorized: false,
        cell_gate: None,
    };
    attach_filter(&mut plan, get.read.filter.as_ref(), true)?;
    Ok(plan)
}

/// What the direct path ([`read_direct_get`]) made of a get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DirectGet {
    /// The row's cells are in the sink (none: the row is absent).
    Read,
    /// No source may hold the row (memstore row filters, file key ranges,
    /// time ranges and blooms ruled them all out): the row is absent, and
    /// the sink was left untouched (not even begun).
    Absent,
    /// The row may go on past a block's end, or the get needs what only the
    /// general path does (a filter, many sources): the general path reads it.
    NeedsMerge,
}

/// Buffers a direct get works in, kept from get to get by readers that
/// read many rows (a fresh one allocates only when a row needs it).
#[derive(Default)]
pub(crate) struct GetScratch {
    /// The resolver's copy of the column being resolved.
    qualifier_buffer: Vec<u8>,
    /// A memstore's key to the column after a finished one.
    seek_key: Vec<u8>,
    /// The sources chosen for the get being read (empty between gets).
    sources: DirectSources,
}

impl std::fmt::Debug for GetScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GetScratch")
            .field("qualifier_buffer_bytes", &self.qualifier_buffer.capacity())
            .field("seek_key_bytes", &self.seek_key.capacity())
            .finish()
    }
}

/// Sources of one family a direct get reads at most; more (a pile of L0
/// files) go through the general path's merge heap.
const MAX_DIRECT_SOURCES: usize = 4;

/// The families a get reads: the table's list, borrowed, when it reads all
/// of them (no reference count taken), or the ones it names.
pub(crate) enum GetFamilies<'s> {
    All(&'s [FamilyPlan]),
    Named(Arc<[FamilyPlan]>),
}

impl std::ops::Deref for GetFamilies<'_> {
    type Target = [FamilyPlan];

    fn deref(&self) -> &[FamilyPlan] {
        match self {
            GetFamilies::All(families) => families,
            GetFamilies::Named(families) => families,
        }
    }
}

/// Where the direct path reads some of one family's cells of the row.
enum DirectSource {
    /// The block of a file that may hold the row, which the row starts in,
    /// and whether the row may go on in the file's next block.
    Block(Arc<HFileReader>, BlockHandle, bool),
    /// A memstore that may hold the row.
    Memstore(Arc<Memstore>),
}

/// A get the direct path reads (chosen by [`plan_direct_get`], read by
/// [`read_direct_get`]; a multi-get reads the blocks of all its keys in one
/// batch in between).
pub(crate) struct DirectGetPlan<'s> {
    families: GetFamilies<'s>,
    query: QueryRules,
    /// As [`DirectSources`], with less room inline: a multi-get keeps one
    /// plan per key.
    sources: SmallVec<[(usize, DirectSource); 2]>,
}

/// The sources that may hold a get's row, each with the index of its
/// family in the get's families, grouped by family in their order.
type DirectSources = SmallVec<[(usize, DirectSource); MAX_DIRECT_SOURCES]>;

impl DirectGetPlan<'_> {
    /// The file blocks the get reads.
    pub(crate) fn blocks(&self) -> impl Iterator<Item = (&HFileReader, BlockHandle)> {
        self.sources.iter().filter_map(|(_, source)| match source {
            DirectSource::Block(file, handle, _) => Some((file.as_ref(), *handle)),
            DirectSource::Memstore(_) => None,
        })
    }
}

/// Plans the get `get` of a row of `region` on the direct path: per family,
/// the memstores whose row filter and the files whose key range, time range
/// and bloom may hold the row (files with the row's block found in their
/// index now). `Ok(None)` when the get needs the general path (a filter, or
/// more than [`MAX_DIRECT_SOURCES`] sources in a family). Validates the get
/// as [`plan_get`] does.
pub(crate) fn plan_direct_get<'s>(
    state: &'s TableState,
    stores: &[Arc<Store>],
    get: &Get,
    now_ms: i64,
) -> Result<Option<DirectGetPlan<'s>>> {
    let mut sources = DirectSources::new();
    let chosen = choose_direct_sources(state, stores, get, now_ms, &mut sources)?;
    Ok(chosen.map(|(families, query)| DirectGetPlan {
        families,
        query,
        sources: sources.into_iter().collect(),
    }))
}

/// What [`plan_direct_get`] plans, with the sources put in `sources` (which
/// must be empty): a single get keeps them in its [`GetScratch`] rather
/// than moving a plan of several hundred bytes from call to call.
fn choose_direct_sources<'s>(
    state: &'s TableState,
    stores: &[Arc<Store>],
    get: &Get,
    now_ms: i64,
    sources: &mut DirectSources,
) -> Result<Option<(GetFamilies<'s>, QueryRules)>> {
    debug_assert!(sources.is_empty());
    validate_row(&get.row)?;
    let query = query_rules(&get.read, false, now_ms)?;
    let families = if get.read.columns.is_all() {
        GetFamilies::All(&state.all_families)
    } else {
        GetFamilies::Named(family_plans(state, &get.read.columns)?)
    };
    if get.read.filter.is_some() {
        return Ok(None);
    }
    let row = get.row.as_slice();
    let single_row_hash = crate::hfile::bloom::row_hash(row);
    let mut files: SmallVec<[Arc<HFileReader>; MAX_DIRECT_SOURCES]> = SmallVec::new();
    for (index, family) in families.iter().enumerate() {
        let scope = ReadScope {
            first_row: Some(row),
            last_row: Some(row),
            last_row_excluded: false,
            single_row: Some(row),
            single_row_hash,
            single_column: single_column(family),
            min_timestamp: query.time_range.min(),
        };
        // Sources are chosen under the store's version lock; the files'
        // indexes (and later their blocks) are read after it is released.
        let mut count = 0;
        let store = stores.iter().find(|store| store.family_id() == family.id);
        let chosen = store.map(|store| {
            store.read_version(|version| {
                Store::for_each_row_source(version, &scope, |source| {
                    count += 1;
                    if count > MAX_DIRECT_SOURCES {
                        return Err(());
                    }
                    match source {
                        RowSource::Memstore(memstore) => {
                            sources.push((index, DirectSource::Memstore(memstore.clone())));
                        }
                        RowSource::File(file) => files.push(file.clone()),
                    }
                    Ok(())
                })
            })
        });
        if chosen == Some(Err(())) {
            return Ok(None);
        }
        for file in files.drain(..) {
            if let Some((handle, goes_on)) = file.seek_row_block(row)? {
                sources.push((index, DirectSource::Block(file, handle, goes_on)));
            }
        }
    }
    Ok(Some((families, query)))
}

/// The cells of the row one direct source holds, one at a time in store
/// order, for merging several sources of a family.
enum RowCells<'r> {
    Block {
        block: Arc<DataBlock>,
        /// The row's index in the block.
        row: usize,
        /// The cell under the cursor, decoded; `None` past the row.
        current: Option<DecodedCell>,
        /// The next cell's index and the end of the row's cells.
        next: usize,
        end: usize,
    },
    Memstore {
        cursor: crate::memstore::Cursor,
        row: &'r [u8],
    },
}

impl RowCells<'_> {
    fn current(&self) -> Option<CellRef<'_>> {
        match self {
            RowCells::Block { block, current, .. } => {
                current.as_ref().map(|decoded| block.decoded(decoded))
            }
            RowCells::Memstore { cursor, row } => cursor.current().filter(|c| c.row == *row),
        }
    }

    fn advance(&mut self) {
        match self {
            RowCells::Block {
                block,
                row,
                current,
                next,
                end,
            } => {
                *current = (*next < *end).then(|| {
                    block.decode_cell(Position {
                        row: *row,
                        cell: *next,
                    })
                });
                *next += 1;
            }
            RowCells::Memstore { cursor, .. } => cursor.next(),
        }
    }

    /// Moves past the rest of column `qualifier` of the row (older
    /// versions a resolver that has what it needs of the column would only
    /// drop: a hot row's memstore can hold thousands). A memstore steps a
    /// few cells, then seeks to the next column's first key (`qualifier`
    /// + 0x00), built in `seek_key`.
    fn skip_column(&mut self, qualifier: &[u8], seek_key: &mut Vec<u8>) {
        for _ in 0..COLUMN_SKIP_STEPS {
            match self.current() {
                Some(cell) if cell.qualifier == qualifier => self.advance(),
                _ => return,
            }
        }
        match self {
            RowCells::Memstore { cursor, row } => {
                seek_key.clear();
                seek_key.extend_from_slice(qualifier);
                seek_key.push(0);
                cursor.seek(&SeekKey {
                    qualifier: seek_key,
                    ..SeekKey::row_start(row)
                });
            }
            RowCells::Block { .. } => {
                while self
                    .current()
                    .is_some_and(|cell| cell.qualifier == qualifier)
                {
                    self.advance();
                }
            }
        }
    }
}

/// Reads the row `row` of `region` as `plan` says, at `read_point` (taken
/// before the plan), with the resolution the merge path applies (versions,
/// deletes, TTL, the time range): a family's cells from a file's block
/// alone are resolved inside the block (`resolve_block_row`, as a scan's
/// single-file path does); cells of several sources (a memstore over a
/// file, overlapping files) are merged by key on the way to the resolver.
/// No scan plan, scanner, cursor heap or merge heap is built: they were
/// most of such a get's instructions. A row at a block's end may go on in
/// the next block; then the general path reads it.
pub(crate) fn read_direct_get<S: RowSink>(
    plan: &DirectGetPlan<'_>,
    region: &Region,
    row: &[u8],
    read_point: u64,
    cells: &mut S,
    scratch: &mut GetScratch,
) -> Result<DirectGet> {
    let sources = DirectRead {
        families: &plan.families,
        query: plan.query,
        sources: &plan.sources,
    };
    read_direct_sources(
        sources,
        region,
        row,
        read_point,
        cells,
        &mut scratch.qualifier_buffer,
        &mut scratch.seek_key,
    )
}

/// A direct get's plan, borrowed.
#[derive(Clone, Copy)]
struct DirectRead<'a> {
    families: &'a [FamilyPlan],
    query: QueryRules,
    sources: &'a [(usize, DirectSource)],
}

/// [`read_direct_get`], over the plan's parts.
fn read_direct_sources<S: RowSink>(
    plan: DirectRead<'_>,
    region: &Region,
    row: &[u8],
    read_point: u64,
    cells: &mut S,
    qualifier_buffer: &mut Vec<u8>,
    seek_key: &mut Vec<u8>,
) -> Result<DirectGet> {
    if plan.sources.is_empty() {
        return Ok(DirectGet::Absent);
    }
    cells.begin_row(row);
    let mut rest = plan.sources;
    while let Some((family_index, _)) = rest.first() {
        let in_family = rest
            .iter()
            .take_while(|(index, _)| index == family_index)
            .count();
        let (group, after) = rest.split_at(in_family);
        rest = after;
        let Some(family) = plan.families.get(*family_index) else {
            continue;
        };
        let mut readers: SmallVec<[RowCells<'_>; MAX_DIRECT_SOURCES]> = SmallVec::new();
        for (_, source) in group {
            match source {
                DirectSource::Block(file, handle, goes_on) => {
                    let block = file.data_block_at(*handle)?;
                    let Some(at) = block.seek(&SeekKey::row_start(row)) else {
                        continue;
                    };
                    if block.row(at.row) != row {
                        continue;
                    }
                    if *goes_on && at.row + 1 >= block.rows() {
                        // The row goes on in the next block.
                        return Ok(DirectGet::NeedsMerge);
                    }
                    let end = block.row_cells(at.row).end;
                    if group.len() == 1 {
                        // The usual state after compaction: one file alone.
                        resolve_block_row(
                            BlockRow {
                                block: &block,
                                row: at.row,
                                cells: at.cell..end,
                            },
                            read_point,
                            family,
                            plan.query,
                            qualifier_buffer,
                            None,
                            cells,
                        );
                        continue;
                    }
                    let current = Some(block.decode_cell(at));
                    readers.push(RowCells::Block {
                        block,
                        row: at.row,
                        current,
                        next: at.cell + 1,
                        end,
                    });
                }
                DirectSource::Memstore(memstore) => {
                    if let Some(cursor) = crate::memstore::Cursor::at_row(memstore, row) {
                        readers.push(RowCells::Memstore { cursor, row });
                    }
                }
            }
        }
        if readers.is_empty() {
            continue;
        }
        let mut resolver = Resolver::new(
            family.columns.as_ref(),
            family.rules,
            plan.query,
            std::mem::take(qualifier_buffer),
        );
        // As the merge path: family markers (in the empty qualifier) may
        // hide every column, so that column is read whole where they may be.
        let family_markers = group.iter().any(|(_, source)| match source {
            DirectSource::Memstore(memstore) => memstore.holds_family_markers(),
            DirectSource::Block(file, ..) => file.meta().markers > 0,
        });
        // Keys are unique across sources (sequences differ), so the
        // smallest current cell is the next one in store order.
        loop {
            let mut smallest: Option<(usize, CellRef<'_>)> = None;
            for (i, reader) in readers.iter().enumerate() {
                if let Some(cell) = reader.current()
                    && smallest.as_ref().is_none_or(|(_, best)| {
                        compare_keys(cell.tuple(), best.tuple()) == std::cmp::Ordering::Less
                    })
                {
                    smallest = Some((i, cell));
                }
            }
            let Some((i, cell)) = smallest else {
                break;
            };
            // Cells written after the read point are not seen.
            let visible = cell.sequence <= read_point;
            if visible && resolver.push(&cell) {
                cells.push_cell(&family.name, &cell);
            }
            // After a visible cell the resolver's column is the cell's, so
            // skipping the column moves reader `i` on too.
            if visible && resolver.column_done(family_markers) {
                let qualifier = resolver.column_qualifier();
                for reader in &mut readers {
                    reader.skip_column(qualifier, seek_key);
                }
            } else if let Some(reader) = readers.get_mut(i) {
                reader.advance();
            }
        }
        *qualifier_buffer = resolver.into_buffer();
    }
    if cells.cell_count() > 0 {
        region
            .activity
            .rows_read
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(DirectGet::Read)
}

/// [`plan_direct_get`] and [`read_direct_get`] in one;
/// [`DirectGet::NeedsMerge`] sends the rest to the general path.
pub(crate) fn read_row_directly<S: RowSink>(
    state: &TableState,
    (region, stores): (&Region, &[Arc<Store>]),
    get: &Get,
    read_point: u64,
    now_ms: i64,
    sink: &mut S,
    scratch: &mut GetScratch,
) -> Result<DirectGet> {
    let GetScratch {
        qualifier_buffer,
        seek_key,
        sources,
    } = scratch;
    let read = match choose_direct_sources(state, stores, get, now_ms, sources) {
        Ok(Some((families, query))) => {
            let plan = DirectRead {
                families: &families,
                query,
                sources,
            };
            read_direct_sources(
                plan,
                region,
                &get.row,
                read_point,
                sink,
                qualifier_buffer,
                seek_key,
            )
        }
        Ok(None) => Ok(DirectGet::NeedsMerge),
        Err(e) => Err(e),
    };
    // The sources hold memstores and files: not kept past the get.
    sources.clear();
    read
}

/// The only qualifier a get reads of `family`, for ROWCOL blooms.
fn single_column(family: &FamilyPlan) -> Option<&[u8]> {
    match &family.columns {
        Some(set) if set.len() == 1 => set.iter().next().map(Vec::as_slice),
        _ => None,
    }
}

impl ScanPlan {
    /// The one row the plan reads, when it is a get's plan.
    fn single_row(&self) -> Option<&[u8]> {
        match (&self.lower, &self.upper) {
            (Bound::Included(a), Bound::Included(b)) if a == b => Some(a.as_slice()),
            _ => None,
        }
    }

    /// What the plan reads of one family, for choosing its sources.
    pub(crate) fn store_scope<'p>(&'p self, family: &'p FamilyPlan) -> ReadScope<'p> {
        let bound = |b: &'p Bound<Vec<u8>>| match b {
            Bound::Included(k) | Bound::Excluded(k) => Some(k.as_slice()),
            Bound::Unbounded => None,
        };
        let single_row = self.single_row();
        let single_column = single_row.and_then(|_| single_column(family));
        ReadScope {
            first_row: bound(&self.lower),
            last_row: bound(&self.upper),
            last_row_excluded: matches!(self.upper, Bound::Excluded(_)),
            single_row,
            single_row_hash: single_row.map_or(0, crate::hfile::bloom::row_hash),
            single_column,
            min_timestamp: self.query.time_range.min(),
        }
    }
}

/// Reads the one row a get plan covers from `region`, through the filter.
pub(crate) fn read_row(region: &Region, plan: &ScanPlan) -> Result<Option<RowResult>> {
    read_row_with(RegionScanner::open(region, plan), plan)
}

/// A get whose sources are chosen (memstores positioned, files picked by
/// key range, time range and bloom) but not yet read: a multi-get chooses
/// every key's sources once, prefetches the blocks their files need in one
/// batch, then reads.
pub(crate) struct PreparedGet {
    scanner: RegionScanner,
}

impl PreparedGet {
    /// Chooses the sources of the get `plan` in `region`.
    pub(crate) fn new(region: &Region, plan: &ScanPlan) -> PreparedGet {
        PreparedGet {
            scanner: RegionScanner::open(region, plan),
        }
    }

    /// The files the get reads.
    pub(crate) fn files(&self) -> impl Iterator<Item = &Arc<crate::hfile::reader::HFileReader>> {
        self.scanner
            .stores
            .iter()
            .flat_map(|store| store.sources.files())
    }

    /// Reads the row (`plan` is the one the get was prepared with).
    pub(crate) fn read(self, plan: &ScanPlan) -> Result<Option<RowResult>> {
        read_row_with(self.scanner, plan)
    }
}

fn read_row_with(mut scanner: RegionScanner, plan: &ScanPlan) -> Result<Option<RowResult>> {
    let mut cells = Vec::new();
    if !read_row_into(&mut scanner, plan, &mut cells)? {
        return Ok(None);
    }
    // The scanner's row buffer becomes the result's key: no second copy.
    Ok(Some(RowResult {
        row: std::mem::take(&mut scanner.row),
        cells,
    }))
}

/// Reads the one row of a get plan from `region` into `sink`, through the
/// filter: true when it returns cells (the sink then holds them).
pub(crate) fn read_row_to<S: RowSink>(
    region: &Region,
    plan: &ScanPlan,
    sink: &mut S,
) -> Result<bool> {
    read_row_into(&mut RegionScanner::open(region, plan), plan, sink)
}

/// The row of `scanner` (opened with the get plan `plan`) into `sink`.
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

fn above_lower(row: &[u8], lower: &Bound<Vec<u8>>) -> bool {
    match lower {
        Bound::Included(l) => row >= l.as_slice(),
        Bound::Excluded(l) => row > l.as_slice(),
        Bound::Unbounded => true,
    }
}

fn below_upper(row: &[u8], upper: &Bound<Vec<u8>>) -> bool {
    match upper {
        Bound::Included(u) => compare_bytes(row, u) != Ordering::Greater,
        Bound::Excluded(u) => compare_bytes(row, u) == Ordering::Less,
        Bound::Unbounded => true,
    }
}

/// Debug builds count the rows block runs step through (read, or tested
/// against the cell gate's selection), so that a test can check that a
/// selective filter skips the rows without a passing cell a block at a
/// time rather than row by row.
#[cfg(debug_assertions)]
mod run_counts {
    use std::cell::Cell;

    thread_local! {
        pub(super) static ROWS_STEPPED: Cell<u64> = const { Cell::new(0) };
        pub(super) static RUNS_BEGUN: Cell<u64> = const { Cell::new(0) };
    }

    #[inline]
    pub(super) fn add_row() {
        ROWS_STEPPED.with(|c| c.set(c.get() + 1));
    }

    #[inline]
    pub(super) fn add_run() {
        RUNS_BEGUN.with(|c| c.set(c.get() + 1));
    }
}

/// `Some(run)`, counted among the runs begun (debug builds).
#[inline]
fn begun(run: BlockRun) -> Option<BlockRun> {
    #[cfg(debug_assertions)]
    run_counts::add_run();
    Some(run)
}

/// Block runs this thread began since the last [`reset_run_rows_stepped`]
/// (debug builds; 0 in release builds): a run that goes on across its
/// blocks' ends is one run.
#[cfg(test)]
pub(crate) fn runs_begun() -> u64 {
    #[cfg(debug_assertions)]
    {
        run_counts::RUNS_BEGUN.with(std::cell::Cell::get)
    }
    #[cfg(not(debug_assertions))]
    {
        0
    }
}

/// Rows this thread's block runs stepped through since the last
/// [`reset_run_rows_stepped`] (debug builds; 0 in release builds).
#[cfg(test)]
pub(crate) fn run_rows_stepped() -> u64 {
    #[cfg(debug_assertions)]
    {
        run_counts::ROWS_STEPPED.with(std::cell::Cell::get)
    }
    #[cfg(not(debug_assertions))]
    {
        0
    }
}

/// Zeroes this thread's counts of rows stepped through by block runs and
/// of runs begun.
#[cfg(test)]
pub(crate) fn reset_run_rows_stepped() {
    #[cfg(debug_assertions)]
    {
        run_counts::ROWS_STEPPED.with(|c| c.set(0));
        run_counts::RUNS_BEGUN.with(|c| c.set(0));
    }
}

/// One store of a region scan.
struct StoreScan {
    family: usize,
    sources: MergedSources,
    /// The resolver's qualifier buffer, handed from row to row.
    qualifier_buffer: Vec<u8>,
    /// What the plan's cell gate computed over the blocks last read
    /// straight from, newest last (each block is held, so its identity is
    /// stable). Several, because rows of overlapping files (two levels
    /// after random writes) alternate between their cursors' blocks: with
    /// one entry, every alternation ran the kernels over a whole block
    /// again, once per row.
    block_cells: HeldSelections,
}

/// Reads the rows of one region.
pub(crate) struct RegionScanner {
    stores: Vec<StoreScan>,
    /// The region's range where it narrows the plan's bounds (`None`: the
    /// plan's bound holds): after a split, a region's files may still hold
    /// rows of its sibling.
    lower: Option<Bound<Vec<u8>>>,
    upper: Option<Bound<Vec<u8>>>,
    started: bool,
    /// Reverse scans: the next row must be below this (`None` = no bound yet).
    reverse_bound: Option<Vec<u8>>,
    finished: bool,
    /// The key of the row the merge path last resolved (reused: no
    /// allocation per row); a get's result takes it. Rows of a block run
    /// go to the sink without it.
    row: Vec<u8>,
    /// Rows returned, added to the region's counters when the scanner
    /// drops (one atomic add per scanner, not per row).
    rows_read: u64,
    activity: Arc<ActivityCounters>,
    /// Rows being read straight from one block (forward scans of one
    /// store only).
    run: Option<BlockRun>,
    /// The cell gate's column tests on the row being resolved.
    verdict: RowVerdict,
}

impl Drop for RegionScanner {
    fn drop(&mut self) {
        if self.rows_read > 0 {
            self.activity
                .rows_read
                .fetch_add(self.rows_read, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl RegionScanner {
    pub(crate) fn open(region: &Region, plan: &ScanPlan) -> RegionScanner {
        let single_row = plan.single_row().is_some();
        let gate = plan
            .filter
            .as_ref()
            .filter(|_| plan.vectorized)
            .map(|f| Arc::new(RowGate::for_plan(&f.plan)));
        let stores = plan
            .families
            .iter()
            .enumerate()
            .filter_map(|(family, fp)| {
                let version = region.store_version(fp.id)?;
                let scope = plan.store_scope(fp);
                let sources = Store::sources(&version, &scope, gate.as_ref());
                if sources.is_empty() && single_row {
                    return None;
                }
                Some(StoreScan {
                    family,
                    sources: MergedSources::new(sources, plan.read_point),
                    qualifier_buffer: Vec::new(),
                    block_cells: HeldSelections::new(),
                })
            })
            .collect::<Vec<_>>();
        if stores.is_empty() && single_row {
            // A get of a row no memstore holds and every file's key range,
            // time range or bloom rules out: finished before it starts,
            // without the allocations below (they were most of such a get).
            return RegionScanner {
                stores,
                lower: None,
                upper: None,
                started: true,
                reverse_bound: None,
                finished: true,
                row: Vec::new(),
                rows_read: 0,
                activity: region.activity.clone(),
                run: None,
                verdict: RowVerdict::default(),
            };
        }
        // The region's range narrows the plan's bounds only for a scan that
        // crosses it (a get, or a scan inside one region, keeps the plan's).
        let lower = (!region.start().is_empty() && above_lower(region.start(), &plan.lower))
            .then(|| Bound::Included(region.start().to_vec()));
        let upper = (!region.end().is_empty() && below_upper(region.end(), &plan.upper))
            .then(|| Bound::Excluded(region.end().to_vec()));
        RegionScanner {
            stores,
            lower,
            upper,
            started: false,
            reverse_bound: None,
            finished: false,
            row: Vec::new(),
            rows_read: 0,
            activity: region.activity.clone(),
            run: None,
            verdict: RowVerdict::default(),
        }
    }

    /// Reads the next row with at least one returned cell into `sink`
    /// (its key then in `self.row`); false at the end.
    #[inline]
    pub(crate) fn next_row<S: RowSink>(&mut self, plan: &ScanPlan, sink: &mut S) -> Result<bool> {
        // Kept small so the usual row costs no more than its own work: the
        // rest (with its large frame) is out of line.
        while let Some(returned) = self.step_lone_cell_run(plan, sink) {
            if returned {
                self.rows_read += 1;
                return Ok(true);
            }
        }
        self.next_row_in_general(plan, sink)
    }

    /// The next row of a block run whose blocks hold one cell per row,
    /// when there is one and the plan has no cell gate (the usual state of
    /// a compacted store, or of overlapping files of such rows, each row in
    /// one of them): `Some(true)` when the row's cell is
    /// returned, `Some(false)` when it is not (its row returns nothing),
    /// `None` when the general path must go on. The lone cell is resolved
    /// without the general path's resolver, selections and run ranking.
    #[inline]
    fn step_lone_cell_run<S: RowSink>(&mut self, plan: &ScanPlan, sink: &mut S) -> Option<bool> {
        let (Some(run), Some(store), false) =
            (&mut self.run, self.stores.first_mut(), self.finished)
        else {
            return None;
        };
        if !run.lone_cells || plan.cell_gate.is_some() || plan.query.raw {
            return None;
        }
        // `None` when the run is over or two files hold the next row: the
        // general path ends it (or extends it).
        let side = match run.sides.as_mut_slice() {
            [side] if side.next < side.end => side,
            [_] => return None,
            sides => {
                let at = BlockRun::next_of(sides)?;
                sides.get_mut(at)?
            }
        };
        let family = plan.families.get(store.family)?;
        let block = &side.block;
        let row = side.next;
        if run.check_upper
            && !below_upper(block.row(row), self.upper.as_ref().unwrap_or(&plan.upper))
        {
            // Past the scan's end: the run ends here.
            side.end = row;
            return None;
        }
        side.next += 1;
        #[cfg(debug_assertions)]
        run_counts::add_row();
        let decoded = block.decode_cell(Position { row, cell: row });
        let cell = block.decoded(&decoded);
        let returned = cell.sequence <= store.sources.read_point()
            && Resolver::lone_cell_returned(
                family.columns.as_ref(),
                family.rules,
                plan.query,
                &cell,
            );
        sink.lone_cell_block_row(&family.name, block, row, (&decoded, &cell), returned);
        Some(returned)
    }

    #[inline(never)]
    fn next_row_in_general<S: RowSink>(&mut self, plan: &ScanPlan, sink: &mut S) -> Result<bool> {
        if self.finished {
            return Ok(false);
        }
        let found = if plan.reversed {
            self.next_row_reverse(plan, sink)?
        } else {
            self.next_row_forward(plan, sink)?
        };
        if found {
            self.rows_read += 1;
        } else {
            self.finished = true;
        }
        Ok(found)
    }

    fn next_row_forward<S: RowSink>(&mut self, plan: &ScanPlan, sink: &mut S) -> Result<bool> {
        if !self.started {
            self.started = true;
            let start: Vec<u8> = match self.lower.as_ref().unwrap_or(&plan.lower) {
                Bound::Included(l) => l.clone(),
                Bound::Excluded(l) => {
                    let mut next = l.clone();
                    next.push(0);
                    next
                }
                Bound::Unbounded => Vec::new(),
            };
            for store in &mut self.stores {
                store.sources.seek(&SeekKey::row_start(&start))?;
            }
        }
        loop {
            let found = match self.step_run(plan, sink)? {
                Some(found) => found,
                None => match self.next_merged_row(plan, sink)? {
                    Some(found) => found,
                    None => return Ok(false),
                },
            };
            if found {
                return Ok(true);
            }
        }
    }

    /// Resolves the smallest row the stores' merged sources stand on into
    /// `sink` (its key then in `self.row`): `Some(true)` when it returns
    /// cells, `Some(false)` when it returns none, `None` past the last row.
    fn next_merged_row<S: RowSink>(
        &mut self,
        plan: &ScanPlan,
        sink: &mut S,
    ) -> Result<Option<bool>> {
        let smallest = self
            .stores
            .iter()
            .filter_map(|s| s.sources.current().map(|c| c.row))
            .min();
        let Some(smallest) = smallest else {
            return Ok(None);
        };
        if !below_upper(smallest, self.upper.as_ref().unwrap_or(&plan.upper)) {
            return Ok(None);
        }
        let mut row = std::mem::take(&mut self.row);
        row.clear();
        row.extend_from_slice(smallest);
        let collected = self.collect_row(plan, &row, sink);
        self.row = row;
        collected?;
        Ok(Some(sink.cell_count() > 0))
    }

    fn next_row_reverse<S: RowSink>(&mut self, plan: &ScanPlan, sink: &mut S) -> Result<bool> {
        if !self.started {
            self.started = true;
            self.reverse_bound = match self.upper.as_ref().unwrap_or(&plan.upper) {
                Bound::Included(u) => {
                    let mut next = u.clone();
                    next.push(0);
                    Some(next)
                }
                Bound::Excluded(u) => Some(u.clone()),
                Bound::Unbounded => None,
            };
        }
        loop {
            let mut candidate: Option<Vec<u8>> = None;
            for store in &mut self.stores {
                if let Some(row) = store
                    .sources
                    .last_row_before(self.reverse_bound.as_deref())?
                    && candidate.as_ref().is_none_or(|c| row > *c)
                {
                    candidate = Some(row);
                }
            }
            let Some(row) = candidate else {
                return Ok(false);
            };
            if !above_lower(&row, self.lower.as_ref().unwrap_or(&plan.lower)) {
                return Ok(false);
            }
            for store in &mut self.stores {
                store.sources.seek(&SeekKey::row_start(&row))?;
            }
            self.collect_row(plan, &row, sink)?;
            self.row.clear();
            self.row.extend_from_slice(&row);
            self.reverse_bound = Some(row);
            if sink.cell_count() > 0 {
                return Ok(true);
            }
        }
    }

    /// Moves to the candidate row a filter's seek hint names.
    pub(crate) fn skip_to(&mut self, target: &Seek) -> Result<()> {
        self.end_run()?;
        match target {
            Seek::Forward(key) => {
                self.started = true;
                for store in &mut self.stores {
                    store.sources.seek(&SeekKey::row_start(key))?;
                }
            }
            Seek::Backward { key, inclusive } => {
                self.started = true;
                let mut bound = key.clone();
                if *inclusive {
                    bound.push(0);
                }
                // Only ever narrows the bound.
                if self.reverse_bound.as_ref().is_none_or(|b| bound < *b) {
                    self.reverse_bound = Some(bound);
                }
            }
            Seek::Here => {}
            Seek::Done => self.finished = true,
        }
        Ok(())
    }

    /// Resolves every store's cells of `row` into `sink` (starting it
    /// afresh); leaves each store positioned after the row, except when a
    /// [`BlockRun`] begins: its store's cursor then stays where the run
    /// began.
    fn collect_row<S: RowSink>(&mut self, plan: &ScanPlan, row: &[u8], sink: &mut S) -> Result<()> {
        sink.begin_row(row);
        let gate = plan.cell_gate.as_deref();
        if let Some(gate) = gate {
            gate.begin_row(&mut self.verdict);
        }
        // A run reads the rows of one store forward; with several stores a
        // row is assembled from all of them; a get reads one row.
        let may_run = self.stores.len() == 1 && !plan.reversed && plan.single_row().is_none();
        for store in &mut self.stores {
            let Some(family) = plan.families.get(store.family) else {
                continue;
            };
            let read_point = store.sources.read_point();
            let StoreScan {
                sources,
                block_cells,
                qualifier_buffer,
                ..
            } = store;
            let winner = sources.winner().unwrap_or_default();
            if let Some((cursor, next_row)) = sources.sole_file_cursor(row)
                && let Some((block, block_row, cells)) = cursor.rest_of_row_in_block()
                && block.row(block_row) == row
            {
                // The usual state after a compaction: one file alone holds
                // the row, wholly inside the cached block. Its cells come
                // straight from the block's columns, without the merge.
                let selection = gate_selection(gate, &family.name, block_cells, block);
                if let Some(bits) = selection.and_then(|s| s.cells.as_ref()) {
                    let next_selected = next_set_bit(bits, cells.start);
                    if next_selected.is_none_or(|i| i >= cells.end) {
                        // No cell of the row passes: the row returns
                        // nothing, whatever its versions and markers. No
                        // other source holds the rows before the runner-up's
                        // row: jump to the next passing cell's row within
                        // them (or to the block's last row, which may go on
                        // in the next block).
                        let target =
                            next_selected.map_or(block.rows() - 1, |i| block.row_of_cell(i));
                        let to_row = target
                            .min(run_end(block, block_row + 1, next_row, &Bound::Unbounded).0)
                            .max(block_row + 1);
                        let skipped =
                            block.row_cells(to_row.min(block.rows() - 1)).start - cells.start;
                        if may_run
                            && to_row == block_row + 1
                            && next_row.is_some()
                            && !cursor.filters_rows()
                            && block_row + 2 < block.rows()
                        {
                            // The next row is another file's (overlapping
                            // files): merge their blocks' rows as a run,
                            // which skips rows without a passing cell in
                            // any.
                            let upper = self.upper.as_ref().unwrap_or(&plan.upper);
                            let lead_block = block.clone();
                            let from_cell = cells.start;
                            if let Some(run) =
                                merged_run(sources, lead_block, block_row, from_cell, upper)
                            {
                                self.run = begun(run);
                                continue;
                            }
                            if let Some(cursor) = sources.file_cursor_at(winner) {
                                cursor.jump_to_row(to_row)?;
                            }
                            sources.sole_source_moved(skipped)?;
                            continue;
                        }
                        cursor.jump_to_row(to_row)?;
                        sources.sole_source_moved(skipped)?;
                        continue;
                    }
                }
                let count = cells.len();
                let from_cell = cells.start;
                resolve_block_row(
                    BlockRow {
                        block,
                        row: block_row,
                        cells,
                    },
                    read_point,
                    family,
                    plan.query,
                    qualifier_buffer,
                    gate.zip(selection)
                        .map(|(gate, selection)| (gate, selection, &mut self.verdict)),
                    sink,
                );
                if may_run && !cursor.filters_rows() {
                    let upper = self.upper.as_ref().unwrap_or(&plan.upper);
                    let (end, check_upper) = run_end(block, block_row + 1, next_row, upper);
                    if end > block_row + 1 {
                        // The rows up to `end` are this cursor's alone and
                        // inside the scan: read them from the block without
                        // moving the cursor row by row.
                        self.run = begun(BlockRun::new(
                            smallvec::smallvec![RunSide {
                                source: winner,
                                block: block.clone(),
                                next: block_row + 1,
                                end,
                                start_row: block_row,
                                from_cell,
                            }],
                            check_upper,
                            next_row.is_none(),
                        ));
                        continue;
                    }
                    if next_row.is_some() && block_row + 2 < block.rows() {
                        // The next row is another source's: with
                        // overlapping files rows alternate between them.
                        // Merge their blocks' rows by key.
                        let lead_block = block.clone();
                        if let Some(run) =
                            merged_run(sources, lead_block, block_row, from_cell, upper)
                        {
                            self.run = begun(run);
                            continue;
                        }
                        if let Some(cursor) = sources.file_cursor_at(winner) {
                            cursor.step_past_row(block_row)?;
                        }
                        sources.sole_source_moved(count)?;
                        continue;
                    }
                }
                cursor.step_past_row(block_row)?;
                sources.sole_source_moved(count)?;
                continue;
            }
            let mut resolver = Resolver::new(
                family.columns.as_ref(),
                family.rules,
                plan.query,
                std::mem::take(&mut store.qualifier_buffer),
            );
            while let Some(cell) = store.sources.current() {
                if cell.row != row {
                    break;
                }
                if resolver.push(&cell) {
                    match gate {
                        None => sink.push_cell(&family.name, &cell),
                        Some(gate) => {
                            gate.note_cell(&family.name, &cell, &mut self.verdict);
                            if gate.matches(&family.name, &cell) {
                                sink.push_cell(&family.name, &cell);
                            }
                        }
                    }
                }
                if resolver.column_done(store.sources.may_hold_family_markers()) {
                    skip_column(&mut store.sources, row, resolver.column_qualifier())?;
                } else {
                    store.sources.advance()?;
                }
            }
            store.qualifier_buffer = resolver.into_buffer();
        }
        self.drop_row_failing_column_tests(gate, row, sink);
        Ok(())
    }

    /// Empties the row in `sink` when the gate's column tests reject it
    /// (the row then returns nothing; the filter stage never sees it).
    fn drop_row_failing_column_tests<S: RowSink>(
        &self,
        gate: Option<&CellGate>,
        row: &[u8],
        sink: &mut S,
    ) {
        if let Some(gate) = gate
            && gate.has_column_tests()
            && sink.cell_count() > 0
            && !gate.row_passes(&self.verdict)
        {
            sink.begin_row(row);
        }
    }

    /// Reads the next row of the block run into `sink`: `Some(true)` when
    /// the row returns cells, `Some(false)` when it returns none, `None`
    /// when no run is under way (one that reached its end is ended here).
    fn step_run<S: RowSink>(&mut self, plan: &ScanPlan, sink: &mut S) -> Result<Option<bool>> {
        let (Some(run), Some(store)) = (&mut self.run, self.stores.first_mut()) else {
            return Ok(None);
        };
        let upper = self.upper.as_ref().unwrap_or(&plan.upper);
        let at = loop {
            if let Some(at) = run.next_side() {
                break at;
            }
            if !extend_run(run, &mut store.sources, upper)? {
                self.end_run()?;
                return Ok(None);
            }
        };
        if run.check_upper
            && run
                .sides
                .get(at)
                .is_some_and(|side| !below_upper(side.block.row(side.next), upper))
        {
            // Past the scan's end (the run's rows come in key order, so
            // every later one is too): the run ends here.
            self.end_run()?;
            return Ok(None);
        }
        let Some(family) = plan.families.get(store.family) else {
            return Ok(None);
        };
        let several = run.sides.len() > 1;
        let Some(side) = run.sides.get_mut(at) else {
            return Ok(None);
        };
        let block = &side.block;
        let block_row = side.next;
        side.next += 1;
        #[cfg(debug_assertions)]
        run_counts::add_row();
        let cells = block.row_cells(block_row);
        sink.begin_block_row(block, block_row);
        let gate = plan.cell_gate.as_deref();
        if let Some(gate) = gate {
            gate.begin_row(&mut self.verdict);
        }
        let selection = gate_selection(gate, &family.name, &mut store.block_cells, block);
        if let Some(bits) = selection.and_then(|s| s.cells.as_ref()) {
            let next_selected = next_set_bit(bits, cells.start);
            if next_selected.is_none_or(|i| i >= cells.end) {
                // As in `collect_row`: on to the next row with a passing
                // cell, within the run.
                let passing = next_selected
                    .map_or(side.end, |i| block.row_of_cell(i))
                    .clamp(side.next, side.end);
                if several {
                    skip_to_passing_rows(&mut run.sides, gate, family, store);
                } else {
                    side.next = passing;
                }
                return Ok(Some(false));
            }
        }
        resolve_block_row(
            BlockRow {
                block,
                row: block_row,
                cells,
            },
            store.sources.read_point(),
            family,
            plan.query,
            &mut store.qualifier_buffer,
            gate.zip(selection)
                .map(|(gate, selection)| (gate, selection, &mut self.verdict)),
            sink,
        );
        if let Some(gate) = gate
            && gate.has_column_tests()
            && sink.cell_count() > 0
            && !gate.row_passes(&self.verdict)
        {
            sink.begin_block_row(block, block_row);
        }
        Ok(Some(sink.cell_count() > 0))
    }

    /// Ends the block run, if one is under way: its store's cursors move to
    /// the first rows the run did not read.
    fn end_run(&mut self) -> Result<()> {
        let (Some(run), Some(store)) = (self.run.take(), self.stores.first_mut()) else {
            return Ok(());
        };
        let mut moved = run.moved;
        for side in &run.sides {
            moved += side.move_cursor(&mut store.sources)?;
        }
        match run.sides.as_slice() {
            [_] => store.sources.sole_source_moved(moved),
            sides => {
                let sources: SmallVec<[usize; MAX_RUN_BLOCKS]> =
                    sides.iter().map(|side| side.source).collect();
                store.sources.sources_moved(&sources, moved)
            }
        }
    }
}

/// Rows of cached blocks that one store's file cursors alone hold, inside
/// the scan's bounds: the scanner reads them straight from the blocks, row
/// after row, while the cursors stay where the run began (moving them and
/// re-ranking the merge per row was most of a cached scan's time);
/// [`RegionScanner::end_run`] moves them past the rows at once.
///
/// Usually one block (after a compaction one file holds long stretches of
/// rows); with overlapping files whose rows alternate (a table filled in
/// random order, before its files compact), the rows of up to
/// [`MAX_RUN_BLOCKS`] files' blocks merged by row key. The run ends where
/// any block ends, where a row is in two of them (its cells need the
/// merge), where another source's rows begin, or past the scan's upper
/// bound.
struct BlockRun {
    /// The first is the winning source's block, where the run began.
    sides: SmallVec<[RunSide; MAX_RUN_BLOCKS]>,
    /// The scan's upper bound may fall inside the run: each row is checked
    /// against it as the run reaches it (see [`run_end`]).
    check_upper: bool,
    /// No source outside the run had a row when it began (the usual state:
    /// a compacted store, or overlapping files, with an empty memstore), so
    /// a side that read its block to the end may go on into its file's next
    /// block ([`extend_run`]) instead of ending the run.
    unbounded: bool,
    /// Cells that sides moved on past (into their files' next blocks) have
    /// moved their cursors past, for the merge's debug counts.
    moved: usize,
    /// Every side's block holds one cell per row (see
    /// [`RegionScanner::step_lone_cell_run`]).
    lone_cells: bool,
}

impl BlockRun {
    /// A run over `sides` that has moved no cursor yet.
    fn new(
        sides: SmallVec<[RunSide; MAX_RUN_BLOCKS]>,
        check_upper: bool,
        unbounded: bool,
    ) -> BlockRun {
        let lone_cells = lone_cells(&sides);
        BlockRun {
            sides,
            check_upper,
            unbounded,
            moved: 0,
            lone_cells,
        }
    }

    /// The side whose row comes next; `None` when the run is over.
    #[inline]
    fn next_side(&self) -> Option<usize> {
        Self::next_of(&self.sides)
    }

    /// [`BlockRun::next_side`] of `sides`.
    #[inline]
    fn next_of(sides: &[RunSide]) -> Option<usize> {
        let (first, rest) = sides.split_first()?;
        if first.next >= first.end {
            return None;
        }
        if rest.is_empty() {
            // One block: no key to compare.
            return Some(0);
        }
        let mut best = 0;
        let mut best_row = first.block.row(first.next);
        for (i, side) in rest.iter().enumerate() {
            if side.next >= side.end {
                return None;
            }
            let row = side.block.row(side.next);
            match compare_bytes(row, best_row) {
                std::cmp::Ordering::Less => {
                    best = i + 1;
                    best_row = row;
                }
                std::cmp::Ordering::Greater => {}
                // Two files hold the row: its cells need the merge.
                std::cmp::Ordering::Equal => return None,
            }
        }
        Some(best)
    }
}

/// One file's rows in a [`BlockRun`].
struct RunSide {
    /// The merge source whose cursor reads the block.
    source: usize,
    block: Arc<DataBlock>,
    /// The next row to read.
    next: usize,
    /// The first row the run does not read (`next <= end < rows`).
    end: usize,
    /// The row the source's cursor stands on.
    start_row: usize,
    /// The cell the source's cursor stands at.
    from_cell: usize,
}

/// True when every side's block holds one cell per row
/// ([`BlockRun::lone_cells`]).
fn lone_cells(sides: &[RunSide]) -> bool {
    sides.iter().all(|side| side.block.one_cell_per_row())
}

impl RunSide {
    /// A side from where a source's cursor stands (`at`), reading its
    /// block's rows up to `end`.
    fn standing_at(at: &RunBlock<'_>, end: usize) -> RunSide {
        RunSide {
            source: at.source,
            block: at.block.clone(),
            next: at.row,
            end,
            start_row: at.row,
            from_cell: at.cell,
        }
    }

    /// Moves the source's cursor to the first row the run did not read;
    /// returns the cells it moved past.
    fn move_cursor(&self, sources: &mut MergedSources) -> Result<usize> {
        if self.next == self.start_row {
            return Ok(0);
        }
        // `next <= end <= rows`: past the block's last row, every cell of
        // the block was moved past.
        let next_cell = if self.next < self.block.rows() {
            self.block.row_cells(self.next).start
        } else {
            self.block.cells()
        };
        let moved = next_cell - self.from_cell;
        if let Some(cursor) = sources.file_cursor_at(self.source) {
            cursor.jump_to_row(self.next)?;
        }
        Ok(moved)
    }

    /// The first row at or after `next`, up to `end`, with a cell the cell
    /// gate passes.
    fn next_passing_row(
        &self,
        gate: Option<&CellGate>,
        family: &FamilyPlan,
        held: &mut HeldSelections,
    ) -> usize {
        let selection = gate_selection(gate, &family.name, held, &self.block);
        let Some(bits) = selection.and_then(|s| s.cells.as_ref()) else {
            return self.next;
        };
        let from = self.block.row_cells(self.next).start;
        next_set_bit(bits, from)
            .map_or(self.end, |i| self.block.row_of_cell(i))
            .clamp(self.next, self.end)
    }
}

/// Skips the rows of every side of a merged run that return nothing: each
/// side's first row (from its `next`) with a cell the gate passes (or its
/// end) is found; every row of any side before the smallest of those rows'
/// keys has no passing cell in any of the files, so it returns nothing
/// whatever the others hold of it; a row at or past it may be in several
/// files and is left to the run.
fn skip_to_passing_rows(
    sides: &mut [RunSide],
    gate: Option<&CellGate>,
    family: &FamilyPlan,
    store: &mut StoreScan,
) {
    let passing: SmallVec<[usize; MAX_RUN_BLOCKS]> = sides
        .iter()
        .map(|side| side.next_passing_row(gate, family, &mut store.block_cells))
        .collect();
    // Each side bounds the skip: at its first passing row (rows before it
    // may be skipped), or, when it has none and its run reaches the end of
    // its block (a block that says its last row ends in it), at its last
    // row: what its file holds after that row is not known here, but that
    // row itself has no passing cell in this file.
    let bounds: SmallVec<[(usize, bool); MAX_RUN_BLOCKS]> = sides
        .iter()
        .zip(&passing)
        .map(|(side, &row)| {
            let rows = side.block.rows();
            if row < rows {
                (row, true)
            } else {
                (rows.saturating_sub(1), false)
            }
        })
        .collect();
    // The smallest bound; at equal rows a passing row wins (its row must
    // be read).
    let Some((key_block, key_row, key_passes)) = sides
        .iter()
        .zip(&bounds)
        .min_by(|(a, (a_row, a_passes)), (b, (b_row, b_passes))| {
            compare_bytes(a.block.row(*a_row), b.block.row(*b_row))
                .then_with(|| b_passes.cmp(a_passes))
        })
        .map(|(side, &(row, passes))| (side.block.clone(), row, passes))
    else {
        return;
    };
    let key = key_block.row(key_row);
    // Rows before the key have no passing cell in any file, and no file
    // holds them beyond its block (every bound is at or before its block's
    // last row). When the key is a last row without a passing cell, and no
    // file has a passing cell of it (a passing row at it would have won),
    // it is skipped too.
    let skipped = if key_passes {
        Ordering::Less
    } else {
        Ordering::Equal
    };
    for (side, &row) in sides.iter_mut().zip(&passing) {
        side.next = side
            .block
            .first_row_where(side.next, |r| compare_bytes(r, key) > skipped)
            .min(row);
    }
}

/// Goes on with a run one of whose sides has read its block to the end:
/// that side's cursor moves past the block into its file's next block (a
/// level's into its next file) and the side reads on from there, so the
/// run does not end at every block's end (with overlapping files, each
/// run's end and restart went through the general path and the merge).
/// Only for an unbounded run (no other source's rows to stop before) whose
/// side ended at its block's end, not at another side's row or at a last
/// row that may go on. `false` when the run cannot go on: the caller ends
/// it; the side's cursor then already stands where it moved.
fn extend_run(
    run: &mut BlockRun,
    sources: &mut MergedSources,
    upper: &Bound<Vec<u8>>,
) -> Result<bool> {
    if !run.unbounded {
        return Ok(false);
    }
    let Some(side) = run.sides.iter_mut().find(|side| side.next >= side.end) else {
        // Two files hold the next row: its cells need the merge.
        return Ok(false);
    };
    if side.end != side.block.rows() {
        return Ok(false);
    }
    run.moved += side.move_cursor(sources)?;
    // The cursor stands past the rows the side read: ending the run now
    // must not move it again.
    side.start_row = side.next;
    let Some(next) = sources.moved_on_block(side.source)? else {
        return Ok(false);
    };
    let (end, upper_inside) = run_end(next.block, next.row, None, upper);
    if end <= next.row {
        return Ok(false);
    }
    *side = RunSide::standing_at(&next, end);
    run.check_upper |= upper_inside;
    run.lone_cells = lone_cells(&run.sides);
    Ok(true)
}

/// A run over several files' blocks from a row the winner's cursor alone
/// held (row `lead_row` of `lead_block`, from cell `from_cell`, just
/// resolved) when other sources stand in cached blocks too and every block
/// has rows before the other sources' and the scan's upper bound.
fn merged_run(
    sources: &MergedSources,
    lead_block: Arc<DataBlock>,
    lead_row: usize,
    from_cell: usize,
    upper: &Bound<Vec<u8>>,
) -> Option<BlockRun> {
    let lead_source = sources.winner()?;
    let found = sources.block_run_sources()?;
    let (lead_end, mut check_upper) = run_end(&lead_block, lead_row + 1, found.bound, upper);
    if lead_end <= lead_row + 1 {
        return None;
    }
    let mut sides = SmallVec::new();
    sides.push(RunSide {
        source: lead_source,
        block: lead_block,
        next: lead_row + 1,
        end: lead_end,
        start_row: lead_row,
        from_cell,
    });
    for other in &found.blocks {
        let (end, upper_inside) = run_end(other.block, other.row, found.bound, upper);
        if end <= other.row {
            return None;
        }
        check_upper |= upper_inside;
        sides.push(RunSide::standing_at(other, end));
    }
    Some(BlockRun::new(sides, check_upper, found.bound.is_none()))
}

/// Where rows that `block`'s cursor alone holds stop, from row `from` on:
/// the block's end, or its last row when that row may go on in the next
/// block ([`DataBlock::whole_rows`]), or the first row at or after
/// `next_row` (the runner-up's: another source holds it); and whether the
/// scan's upper bound `upper` falls before that end. The bound is not
/// searched for: a block found by a seek is cold in the CPU caches, and a
/// binary search misses once per halving, where the run reads its rows in
/// order anyway; a run whose bound falls inside it checks each row as it
/// reaches it ([`BlockRun::check_upper`]).
fn run_end(
    block: &DataBlock,
    from: usize,
    next_row: Option<&[u8]>,
    upper: &Bound<Vec<u8>>,
) -> (usize, bool) {
    let mut end = block.whole_rows();
    if from >= end
        || next_row.is_some_and(|next| compare_bytes(block.row(from), next) != Ordering::Less)
        || !below_upper(block.row(from), upper)
    {
        // No row to run over (a get, a run's last row): one comparison
        // instead of the search below.
        return (from, false);
    }
    if let Some(next) = next_row {
        end = end.min(block.first_row_where(from, |r| compare_bytes(r, next) != Ordering::Less));
    }
    let upper_inside = end > from + 1 && !below_upper(block.row(end - 1), upper);
    (end, upper_inside)
}

/// What the plan's cell gate computes over `block` (`None` without a gate),
/// once per block, held in `held`.
fn gate_selection<'h>(
    gate: Option<&CellGate>,
    family: &[u8],
    held: &'h mut HeldSelections,
    block: &Arc<DataBlock>,
) -> Option<&'h BlockSelection> {
    let gate = gate?;
    let at = match held
        .iter()
        .position(|(block_held, _)| Arc::ptr_eq(block_held, block))
    {
        Some(at) => at,
        None => {
            if held.len() == HELD_SELECTIONS {
                held.remove(0);
            }
            held.push((block.clone(), gate.block_selection(family, block)));
            held.len() - 1
        }
    };
    held.get(at).map(|(_, selection)| selection)
}

/// Blocks a store scan keeps the cell gate's selections of: one per file
/// cursor a row can come from in the usual overlapping-levels states
/// (memstore flushes aside, up to about four levels hold a row's range).
/// The blocks stay pinned in the cache while held.
const HELD_SELECTIONS: usize = 4;

/// The cell gate's selections of the blocks a store scan read last.
type HeldSelections = smallvec::SmallVec<[(Arc<DataBlock>, BlockSelection); HELD_SELECTIONS]>;

/// Cells `cells` of row `row` of a cached block.
struct BlockRow<'b> {
    block: &'b Arc<DataBlock>,
    row: usize,
    cells: std::ops::Range<usize>,
}

/// Resolves a block row's cells of `family` into `sink`: those visible at
/// `read_point` that version resolution returns and the cell gate's
/// selection (if any) passes; the gate's column tests note each of them. A
/// row of one cell (every row of a compacted store with one version per
/// column) is resolved without building a resolver.
#[inline]
fn resolve_block_row<S: RowSink>(
    at: BlockRow<'_>,
    read_point: u64,
    family: &FamilyPlan,
    query: QueryRules,
    qualifier_buffer: &mut Vec<u8>,
    mut gate: Option<(&CellGate, &BlockSelection, &mut RowVerdict)>,
    sink: &mut S,
) {
    let BlockRow { block, row, cells } = at;
    let lone = cells.len() == 1 && !query.raw;
    let mut resolver = (!lone).then(|| {
        Resolver::new(
            family.columns.as_ref(),
            family.rules,
            query,
            std::mem::take(qualifier_buffer),
        )
    });
    for i in cells {
        let decoded = block.decode_cell(Position { row, cell: i });
        let cell = block.decoded(&decoded);
        let returned = cell.sequence <= read_point
            && match resolver.as_mut() {
                Some(resolver) => resolver.push(&cell),
                None => Resolver::lone_cell_returned(
                    family.columns.as_ref(),
                    family.rules,
                    query,
                    &cell,
                ),
            };
        if !returned {
            continue;
        }
        if let Some((gate, selection, verdict)) = gate.as_mut() {
            gate.note_block_cell(&family.name, selection, i, &cell, verdict);
            if selection.cells.as_ref().is_some_and(|bits| !bits.get(i)) {
                continue;
            }
        }
        sink.push_block_cell(&family.name, block, &decoded, &cell);
    }
    if let Some(resolver) = resolver {
        *qualifier_buffer = resolver.into_buffer();
    }
}

/// The first set bit of `bits` at or after `from`.
fn next_set_bit(bits: &Bitmap, from: usize) -> Option<usize> {
    let words = bits.words();
    let mut index = from / 64;
    let mut word = words.get(index)? & (u64::MAX << (from % 64));
    loop {
        if word != 0 {
            let bit = index * 64 + word.trailing_zeros() as usize;
            return (bit < bits.len()).then_some(bit);
        }
        index += 1;
        word = *words.get(index)?;
    }
}

/// Steps [`skip_column`] takes before it seeks instead.
const COLUMN_SKIP_STEPS: usize = 4;

/// Moves `sources` past every cell of column `qualifier` of `row`. The next
/// cell usually starts the next column already (one version per column is
/// the common case), so it steps a few times first; a column with many more
/// cells (a hot cell updated thousands of times since the last flush) is
/// left with one seek, so a read costs the versions it returns rather than
/// every version the memstore holds. This is HBase's "seek to next column".
fn skip_column(sources: &mut MergedSources, row: &[u8], qualifier: &[u8]) -> Result<()> {
    for _ in 0..COLUMN_SKIP_STEPS {
        sources.advance()?;
        match sources.current() {
            Some(c) if c.row == row && c.qualifier == qualifier => {}
            _ => return Ok(()),
        }
    }
    // The first key of the next possible qualifier (`qualifier` + 0x00).
    let mut next = Vec::with_capacity(qualifier.len() + 1);
    next.extend_from_slice(qualifier);
    next.push(0);
    let start = SeekKey {
        qualifier: &next,
        ..SeekKey::row_start(row)
    };
    sources.seek_forward(&start)?;
    // Every source's seek lands at or past the key; should one fall short,
    // step instead of re-reading the column (the read must make progress
    // and must not return a cell twice).
    while sources
        .current()
        .is_some_and(|c| compare_keys(c.tuple(), start.tuple()) == std::cmp::Ordering::Less)
    {
        sources.advance()?;
    }
    Ok(())
}

/// The rows of a scan, region after region, through the filter stage and
/// the row limit: what [`Scanner`] and [`cursor::ScanCursor`] share.
pub(crate) struct RowStream {
    state: Arc<TableState>,
    plan: ScanPlan,
    stage: Option<FilterStage>,
    region_index: Option<usize>,
    current: Option<RegionScanner>,
    /// A row's visible cells before the filter stage (filtered scans only).
    visible: RowBuffer,
    rows_returned: u64,
    finished: bool,
}

impl RowStream {
    pub(crate) fn new(state: Arc<TableState>, plan: ScanPlan) -> Result<RowStream> {
        let finished = plan.limit == Some(0);
        let stage = plan
            .filter
            .as_ref()
            .map(|setup| {
                FilterStage::new(
                    setup,
                    plan.reversed,
                    plan.filter_max_versions,
                    plan.families.iter().map(|family| family.name.as_slice()),
                )
            })
            .transpose()?;
        Ok(RowStream {
            state,
            plan,
            stage,
            region_index: None,
            current: None,
            visible: RowBuffer::default(),
            rows_returned: 0,
            finished,
        })
    }

    /// The plan the stream reads.
    pub(crate) fn plan(&self) -> &ScanPlan {
        &self.plan
    }

    /// The table's name.
    pub(crate) fn table_name(&self) -> &str {
        self.state.descriptor.name()
    }

    /// Rows returned so far.
    pub(crate) fn rows_returned(&self) -> u64 {
        self.rows_returned
    }

    /// Index of the first region to read.
    fn first_region(&self) -> Option<usize> {
        let regions = &self.state.regions;
        if regions.is_empty() {
            return None;
        }
        let index = if self.plan.reversed {
            match &self.plan.upper {
                Bound::Unbounded => regions.len() - 1,
                Bound::Included(u) => self.state.region_index_for(u),
                // The region holding the largest row below `u`.
                Bound::Excluded(u) => regions
                    .partition_point(|r| r.start() < u.as_slice())
                    .saturating_sub(1),
            }
        } else {
            match &self.plan.lower {
                Bound::Unbounded => 0,
                Bound::Included(l) | Bound::Excluded(l) => self.state.region_index_for(l),
            }
        };
        Some(index)
    }

    /// Index of the region after `index` in scan order, if the scan reaches it.
    fn following_region(&self, index: usize) -> Option<usize> {
        let regions = &self.state.regions;
        if self.plan.reversed {
            let next = index.checked_sub(1)?;
            let region = regions.get(next)?;
            let reaches = match &self.plan.lower {
                Bound::Unbounded => true,
                Bound::Included(l) | Bound::Excluded(l) => {
                    region.end().is_empty() || region.end() > l.as_slice()
                }
            };
            reaches.then_some(next)
        } else {
            let next = index + 1;
            let region = regions.get(next)?;
            below_upper(region.start(), &self.plan.upper).then_some(next)
        }
    }

    /// Reads the next row the scan returns into `sink` (started afresh);
    /// false at the end of the scan. After an error the stream is finished.
    #[inline]
    pub(crate) fn next_row<S: RowSink>(&mut self, sink: &mut S) -> Result<bool> {
        // The usual row of an unfiltered scan: straight from
        // the region scanner (the rest, with its large frame, out of line).
        if !self.finished
            && self.stage.is_none()
            && let Some(scanner) = &mut self.current
        {
            match scanner.next_row(&self.plan, sink) {
                Ok(true) => {
                    self.rows_returned += 1;
                    if self
                        .plan
                        .limit
                        .is_some_and(|limit| self.rows_returned >= limit)
                    {
                        self.finished = true;
                    }
                    return Ok(true);
                }
                // The region is done: on to the next one.
                Ok(false) => {}
                Err(e) => {
                    self.finished = true;
                    return Err(e);
                }
            }
        }
        self.next_row_in_general(sink)
    }

    #[inline(never)]
    fn next_row_in_general<S: RowSink>(&mut self, sink: &mut S) -> Result<bool> {
        if self.finished {
            return Ok(false);
        }
        match self.next_full_row(sink) {
            Ok(true) => {
                self.rows_returned += 1;
                if self
                    .plan
                    .limit
                    .is_some_and(|limit| self.rows_returned >= limit)
                {
                    self.finished = true;
                }
                Ok(true)
            }
            Ok(false) => {
                self.finished = true;
                Ok(false)
            }
            Err(e) => {
                self.finished = true;
                Err(e)
            }
        }
    }

    fn next_full_row<S: RowSink>(&mut self, sink: &mut S) -> Result<bool> {
        loop {
            if self.current.is_none() {
                let index = match self.region_index {
                    None => self.first_region(),
                    Some(i) => self.following_region(i),
                };
                let Some(index) = index else {
                    return Ok(false);
                };
                let Some(region) = self.state.regions.get(index) else {
                    return Ok(false);
                };
                self.region_index = Some(index);
                self.current = Some(RegionScanner::open(region, &self.plan));
            }
            let Some(scanner) = &mut self.current else {
                continue;
            };
            let Some(stage) = &mut self.stage else {
                if scanner.next_row(&self.plan, sink)? {
                    return Ok(true);
                }
                self.current = None;
                continue;
            };
            if !scanner.next_row(&self.plan, &mut self.visible)? {
                self.current = None;
                continue;
            }
            if stage.exhausted() {
                return Ok(false);
            }
            match stage.process(&self.visible, sink) {
                Verdict::Return { stop } => {
                    if stop {
                        self.finished = true;
                    }
                    return Ok(true);
                }
                Verdict::Skip => {}
                Verdict::Stop => return Ok(false),
                Verdict::SeekTo(target) => scanner.skip_to(&target)?,
            }
        }
    }
}

/// An iterator over the rows of a scan. Each item is one row (or, with
/// [`Scan::batch`], a part of one row), with owned cells: a copy, at the
/// edge, of what the borrowing [`cursor::ScanCursor`] lends.
pub struct Scanner {
    stream: RowStream,
    pending: VecDeque<RowResult>,
}

impl std::fmt::Debug for Scanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner")
            .field("table", &self.stream.table_name())
            .field("rows_returned", &self.stream.rows_returned())
            .finish()
    }
}

impl Scanner {
    pub(crate) fn new(state: Arc<TableState>, plan: ScanPlan) -> Result<Scanner> {
        Ok(Scanner {
            stream: RowStream::new(state, plan)?,
            pending: VecDeque::new(),
        })
    }
}

/// A row's key, the owned-row form of a [`RowSink`]'s output.
struct OwnedRow {
    row: Vec<u8>,
    cells: Vec<Cell>,
}

impl RowSink for OwnedRow {
    fn begin_row(&mut self, row: &[u8]) {
        self.row.clear();
        self.row.extend_from_slice(row);
        self.cells.clear();
    }

    fn push_cell(&mut self, family: &[u8], cell: &crate::cell::CellRef<'_>) {
        self.cells.push_cell(family, cell);
    }

    fn cell_count(&self) -> usize {
        self.cells.len()
    }
}

impl Iterator for Scanner {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(part) = self.pending.pop_front() {
            return Some(Ok(part));
        }
        let mut out = OwnedRow {
            row: Vec::new(),
            cells: Vec::new(),
        };
        match self.stream.next_row(&mut out) {
            Ok(true) => {}
            Ok(false) => return None,
            Err(e) => return Some(Err(e)),
        }
        let OwnedRow { row, cells } = out;
        match self.stream.plan().batch {
            Some(batch) if cells.len() > batch => {
                let mut cells = cells.into_iter().peekable();
                while cells.peek().is_some() {
                    let part: Vec<Cell> = cells.by_ref().take(batch).collect();
                    self.pending.push_back(RowResult {
                        row: row.clone(),
                        cells: part,
                    });
                }
                self.pending.pop_front().map(Ok)
            }
            _ => Some(Ok(RowResult { row, cells })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_set_bit_finds_the_first_one_at_or_after() {
        let bits = Bitmap::from_bools((0..200).map(|i| i == 3 || i == 64 || i == 130 || i == 199));
        let want = |from: usize| (from..200).find(|&i| bits.get(i));
        for from in 0..205 {
            assert_eq!(next_set_bit(&bits, from), want(from), "from {from}");
        }
        assert_eq!(next_set_bit(&Bitmap::zeros(0), 0), None);
        assert_eq!(next_set_bit(&Bitmap::zeros(64), 0), None);
    }

    #[test]
    fn bounds_tighten() {
        use Bound::*;
        let l = max_lower(Included(b"b".to_vec()), Included(b"a".to_vec()));
        assert_eq!(l, Included(b"b".to_vec()));
        let l = max_lower(Included(b"b".to_vec()), Excluded(b"b".to_vec()));
        assert_eq!(l, Excluded(b"b".to_vec()));
        let u = min_upper(Unbounded, Excluded(b"c".to_vec()));
        assert_eq!(u, Excluded(b"c".to_vec()));
        let u = min_upper(Included(b"c".to_vec()), Excluded(b"c".to_vec()));
        assert_eq!(u, Excluded(b"c".to_vec()));
        let u = min_upper(Included(b"a".to_vec()), Excluded(b"c".to_vec()));
        assert_eq!(u, Included(b"a".to_vec()));
    }
}
