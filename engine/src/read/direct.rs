//! Direct gets: a row read from the few sources that may hold it, without
//! a scan plan, a scanner, cursors or the merge heap (they were most of a
//! get's instructions). Per family, the memstores whose row filter and the
//! files whose key range, time range and bloom may hold the row are chosen
//! under the store's version lock, and each file's block for the row is
//! found in its index; then a lone file's row is resolved inside its block,
//! and the cells of a few sources (a memstore over a file, overlapping
//! files) are merged by key on the way to the resolver
//! ([`PointMerge`](crate::iter::point::PointMerge)). A get with a filter,
//! more sources, or a row that may go on in the next block goes through
//! the merge instead ([`super::get`]).

use std::sync::Arc;

use smallvec::SmallVec;

use super::block_rows::resolve_block_row;
use super::plan::{family_plans, query_rules, single_column};
use super::resolve::{QueryRules, Resolver};
use super::sink::RowSink;
use crate::catalog::TableState;
use crate::cell::validate_row;
use crate::error::Result;
use crate::hfile::block::BlockHandle;
use crate::hfile::reader::HFileReader;
use crate::iter::point::{PointMerge, RowInBlock, row_in_block};
use crate::memstore::Memstore;
use crate::ops::Get;
use crate::region::Region;
use crate::schema::FamilyPlan;
use crate::store::{ReadScope, RowSource, Store};

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
/// as [`plan_get`](super::plan::plan_get) does.
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
    let buffers = DirectBuffers {
        qualifier_buffer: &mut scratch.qualifier_buffer,
        seek_key: &mut scratch.seek_key,
    };
    read_direct_sources(sources, region, row, read_point, cells, buffers)
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
    mut buffers: DirectBuffers<'_>,
) -> Result<DirectGet> {
    if plan.sources.is_empty() {
        return Ok(DirectGet::Absent);
    }
    cells.begin_row(row);
    // The sources come grouped by family, in the families' order.
    for group in plan.sources.chunk_by(|(a, _), (b, _)| a == b) {
        let Some(family) = group
            .first()
            .and_then(|(index, _)| plan.families.get(*index))
        else {
            continue;
        };
        let read = DirectFamily {
            family,
            query: plan.query,
            row,
            read_point,
        };
        if read.resolve(group, cells, buffers.reborrow())? == DirectGet::NeedsMerge {
            return Ok(DirectGet::NeedsMerge);
        }
    }
    if cells.cell_count() > 0 {
        region
            .activity
            .rows_read
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(DirectGet::Read)
}

/// The buffers a direct get resolves with (see [`GetScratch`]).
struct DirectBuffers<'a> {
    qualifier_buffer: &'a mut Vec<u8>,
    seek_key: &'a mut Vec<u8>,
}

impl DirectBuffers<'_> {
    fn reborrow(&mut self) -> DirectBuffers<'_> {
        DirectBuffers {
            qualifier_buffer: self.qualifier_buffer,
            seek_key: self.seek_key,
        }
    }
}

/// One family's part of a direct get.
struct DirectFamily<'a> {
    family: &'a FamilyPlan,
    query: QueryRules,
    row: &'a [u8],
    read_point: u64,
}

impl DirectFamily<'_> {
    /// Resolves the family's cells of the row from `sources` (all of this
    /// family) into `cells`: a lone file's row inside its block, several
    /// sources' cells merged by key. [`DirectGet::NeedsMerge`] when the row
    /// may go on past a block's end.
    fn resolve<S: RowSink>(
        &self,
        sources: &[(usize, DirectSource)],
        cells: &mut S,
        buffers: DirectBuffers<'_>,
    ) -> Result<DirectGet> {
        let mut merge = PointMerge::default();
        for (_, source) in sources {
            match source {
                DirectSource::Block(file, handle, goes_on) => {
                    match row_in_block(file, *handle, *goes_on, self.row)? {
                        RowInBlock::Absent => {}
                        RowInBlock::GoesOn => return Ok(DirectGet::NeedsMerge),
                        // The usual state after compaction: one file alone.
                        RowInBlock::Found(found) if sources.len() == 1 => resolve_block_row(
                            &found.row(),
                            self.read_point,
                            self.family,
                            self.query,
                            buffers.qualifier_buffer,
                            None,
                            cells,
                        ),
                        RowInBlock::Found(found) => merge.add_block_row(found),
                    }
                }
                DirectSource::Memstore(memstore) => merge.add_memstore(memstore, self.row),
            }
        }
        if !merge.is_empty() {
            self.resolve_merged(&mut merge, family_markers(sources), cells, buffers);
        }
        Ok(DirectGet::Read)
    }

    /// Resolves the cells `merge` gives, in store order, into `cells`,
    /// skipping a finished column's older versions in every source.
    /// `family_markers`: a source may hold family delete markers.
    fn resolve_merged<S: RowSink>(
        &self,
        merge: &mut PointMerge<'_>,
        family_markers: bool,
        cells: &mut S,
        buffers: DirectBuffers<'_>,
    ) {
        let family = self.family;
        let mut resolver = Resolver::new(
            family.columns.as_ref(),
            family.rules,
            self.query,
            std::mem::take(buffers.qualifier_buffer),
        );
        while let Some((source, cell)) = merge.current() {
            // Cells written after the read point are not seen.
            let visible = cell.sequence <= self.read_point;
            if visible && resolver.push(&cell) {
                cells.push_cell(&family.name, &cell);
            }
            // After a visible cell the resolver's column is the cell's, so
            // skipping the column moves the cell's source on too.
            if visible && resolver.column_done(family_markers) {
                merge.skip_column(resolver.column_qualifier(), buffers.seek_key);
            } else {
                merge.advance(source);
            }
        }
        *buffers.qualifier_buffer = resolver.into_buffer();
    }
}

/// As the merge path: family markers (in the empty qualifier) may hide
/// every column, so that column is read whole where a source may hold
/// them.
fn family_markers(sources: &[(usize, DirectSource)]) -> bool {
    sources.iter().any(|(_, source)| match source {
        DirectSource::Memstore(memstore) => memstore.holds_family_markers(),
        DirectSource::Block(file, ..) => file.meta().markers > 0,
    })
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
            let buffers = DirectBuffers {
                qualifier_buffer,
                seek_key,
            };
            read_direct_sources(plan, region, &get.row, read_point, sink, buffers)
        }
        Ok(None) => Ok(DirectGet::NeedsMerge),
        Err(e) => Err(e),
    };
    // The sources hold memstores and files: not kept past the get.
    sources.clear();
    read
}
