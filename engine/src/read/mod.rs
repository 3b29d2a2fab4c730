//! The read path: plan a scan, walk its regions in order (or in reverse),
//! merge each store's sources at the read point, resolve versions and
//! deletes, and hand back rows.
//!
//! A get is a scan of one row.

pub(crate) mod filtering;
pub(crate) mod resolve;

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use crate::catalog::TableState;
use crate::cell::SeekKey;
use crate::cell::{Cell, RowResult, TimeRange, compare_keys, prefix_successor, validate_row};
use crate::error::{Error, Result};
use crate::gate::RowGate;
use crate::iter::merge::MergedSources;
use crate::ops::{ColumnSelection, Get, Scan};
use crate::region::Region;
use crate::schema::{FamilyPlan, family_plan};
use crate::store::{ReadScope, Store};
use filtering::{FilterSetup, FilterStage, Verdict};
use resolve::{QueryRules, Resolver};
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
    plan.filter = Some(FilterSetup::compile(filter, &range)?);
    plan.filter_max_versions = plan.query.max_versions;
    plan.query.max_versions = u32::MAX;
    plan.vectorized = vectorized;
    Ok(())
}

fn time_range(min: i64, max: i64) -> Result<TimeRange> {
    TimeRange::new(min, max)
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
    let range = time_range(scan.time_min, scan.time_max)?;
    let max_versions = check_versions(scan.max_versions)?;
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
        families: family_plans(state, &scan.columns)?,
        query: QueryRules {
            time_range: range,
            max_versions,
            raw: scan.raw,
            now_ms,
            count_only: false,
        },
        read_point,
        limit: scan.limit,
        batch: scan.batch,
        filter: None,
        filter_max_versions: max_versions,
        vectorized: false,
    };
    attach_filter(&mut plan, scan.filter.as_ref(), scan.vectorized)?;
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
    let max_versions = check_versions(get.max_versions)?;
    let mut plan = ScanPlan {
        lower: Bound::Included(get.row.clone()),
        upper: Bound::Included(get.row.clone()),
        reversed: false,
        families: family_plans(state, &get.columns)?,
        query: QueryRules {
            time_range: time_range(get.time_min, get.time_max)?,
            max_versions,
            raw: false,
            now_ms,
            count_only: false,
        },
        read_point,
        limit: Some(1),
        batch: None,
        filter: None,
        filter_max_versions: max_versions,
        vectorized: false,
    };
    attach_filter(&mut plan, get.filter.as_ref(), true)?;
    Ok(plan)
}

/// True when `get` certainly finds nothing in `region`: it reads every
/// family without a filter, every memstore is empty, and every file's key
/// range, time range or bloom rules the row out. The get is
/// validated as [`plan_get`] validates it (the same errors). A get of an
/// absent row then costs neither a plan nor a scanner; a get that may find
/// something repeats these checks in its scanner, on hot cache lines.
pub(crate) fn get_finds_nothing(state: &TableState, region: &Region, get: &Get) -> Result<bool> {
    validate_row(&get.row)?;
    check_versions(get.max_versions)?;
    let range = time_range(get.time_min, get.time_max)?;
    if get.filter.is_some() || !get.columns.is_all() {
        return Ok(false);
    }
    let row = get.row.as_slice();
    let scope = ReadScope {
        first_row: Some(row),
        last_row: Some(row),
        single_row: Some(row),
        single_row_hash: crate::hfile::bloom::row_hash(row),
        single_column: None,
        min_timestamp: range.min(),
    };
    for family in state.all_families.iter() {
        if let Some(version) = region.store_version(family.id)
            && Store::may_hold_row(&version, &scope)
        {
            return Ok(false);
        }
    }
    Ok(true)
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
        let single_column = match &family.columns {
            Some(set) if set.len() == 1 && single_row.is_some() => {
                set.iter().next().map(Vec::as_slice)
            }
            _ => None,
        };
        ReadScope {
            first_row: bound(&self.lower),
            last_row: bound(&self.upper),
            single_row,
            single_row_hash: single_row.map_or(0, crate::hfile::bloom::row_hash),
            single_column,
            min_timestamp: self.query.time_range.min(),
        }
    }
}

/// Reads the one row a get plan covers from `region`, through the filter.
pub(crate) fn read_row(region: &Region, plan: &ScanPlan) -> Result<Option<RowResult>> {
    let mut scanner = RegionScanner::open(region, plan);
    let Some(row) = scanner.next_row(plan)? else {
        return Ok(None);
    };
    match &plan.filter {
        None => Ok(Some(row)),
        Some(setup) => match FilterStage::new(setup, false, plan.filter_max_versions)?.process(row)
        {
            Verdict::Return { row, .. } => Ok(Some(row)),
            _ => Ok(None),
        },
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
        Bound::Included(u) => row <= u.as_slice(),
        Bound::Excluded(u) => row < u.as_slice(),
        Bound::Unbounded => true,
    }
}

/// One store of a region scan.
struct StoreScan {
    family: usize,
    sources: MergedSources,
}

/// Reads the rows of one region.
pub(crate) struct RegionScanner {
    stores: Vec<StoreScan>,
    /// The plan's bounds clipped to the region's range: after a split, a
    /// region's files may still hold rows of its sibling.
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    started: bool,
    /// Reverse scans: the next row must be below this (`None` = no bound yet).
    reverse_bound: Option<Vec<u8>>,
    finished: bool,
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
                })
            })
            .collect::<Vec<_>>();
        if stores.is_empty() && single_row {
            // A get of a row no memstore holds and every file's key range,
            // time range or bloom rules out: finished before it starts,
            // without the allocations below (they were most of such a get).
            return RegionScanner {
                stores,
                lower: Bound::Unbounded,
                upper: Bound::Unbounded,
                started: true,
                reverse_bound: None,
                finished: true,
            };
        }
        let mut lower = plan.lower.clone();
        if !region.start().is_empty() {
            lower = max_lower(lower, Bound::Included(region.start().to_vec()));
        }
        let mut upper = plan.upper.clone();
        if !region.end().is_empty() {
            upper = min_upper(upper, Bound::Excluded(region.end().to_vec()));
        }
        RegionScanner {
            stores,
            lower,
            upper,
            started: false,
            reverse_bound: None,
            finished: false,
        }
    }

    /// The next row with at least one returned cell.
    pub(crate) fn next_row(&mut self, plan: &ScanPlan) -> Result<Option<RowResult>> {
        if self.finished {
            return Ok(None);
        }
        let row = if plan.reversed {
            self.next_row_reverse(plan)?
        } else {
            self.next_row_forward(plan)?
        };
        if row.is_none() {
            self.finished = true;
        }
        Ok(row)
    }

    fn next_row_forward(&mut self, plan: &ScanPlan) -> Result<Option<RowResult>> {
        if !self.started {
            self.started = true;
            let start: Vec<u8> = match &self.lower {
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
            let Some(row) = self
                .stores
                .iter()
                .filter_map(|s| s.sources.current().map(|c| c.row))
                .min()
                .map(<[u8]>::to_vec)
            else {
                return Ok(None);
            };
            if !below_upper(&row, &self.upper) {
                return Ok(None);
            }
            let cells = self.collect_row(plan, &row)?;
            if !cells.is_empty() {
                return Ok(Some(RowResult { row, cells }));
            }
        }
    }

    fn next_row_reverse(&mut self, plan: &ScanPlan) -> Result<Option<RowResult>> {
        if !self.started {
            self.started = true;
            self.reverse_bound = match &self.upper {
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
                return Ok(None);
            };
            if !above_lower(&row, &self.lower) {
                return Ok(None);
            }
            self.reverse_bound = Some(row.clone());
            for store in &mut self.stores {
                store.sources.seek(&SeekKey::row_start(&row))?;
            }
            let cells = self.collect_row(plan, &row)?;
            if !cells.is_empty() {
                return Ok(Some(RowResult { row, cells }));
            }
        }
    }

    /// Moves to the candidate row a filter's seek hint names.
    pub(crate) fn skip_to(&mut self, target: &Seek) -> Result<()> {
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

    /// Resolves every store's cells of `row`; leaves each store positioned
    /// after the row.
    fn collect_row(&mut self, plan: &ScanPlan, row: &[u8]) -> Result<Vec<Cell>> {
        let mut cells = Vec::new();
        for store in &mut self.stores {
            let Some(family) = plan.families.get(store.family) else {
                continue;
            };
            let mut resolver = Resolver::new(
                &family.name,
                family.columns.as_ref(),
                family.rules,
                plan.query,
            );
            while let Some(cell) = store.sources.current() {
                if cell.row != row {
                    break;
                }
                resolver.push(&cell, &mut cells);
                if resolver.column_done(store.sources.may_hold_family_markers()) {
                    skip_column(&mut store.sources, row, resolver.column_qualifier())?;
                } else {
                    store.sources.advance()?;
                }
            }
        }
        Ok(cells)
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

/// An iterator over the rows of a scan. Each item is one row (or, with
/// [`Scan::batch`], a part of one row).
pub struct Scanner {
    state: Arc<TableState>,
    plan: ScanPlan,
    stage: Option<FilterStage>,
    region_index: Option<usize>,
    current: Option<RegionScanner>,
    pending: VecDeque<RowResult>,
    rows_returned: u64,
    finished: bool,
}

impl std::fmt::Debug for Scanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner")
            .field("table", &self.state.descriptor.name())
            .field("rows_returned", &self.rows_returned)
            .finish()
    }
}

impl Scanner {
    pub(crate) fn new(state: Arc<TableState>, plan: ScanPlan) -> Result<Scanner> {
        let finished = plan.limit == Some(0);
        let stage = plan
            .filter
            .as_ref()
            .map(|setup| FilterStage::new(setup, plan.reversed, plan.filter_max_versions))
            .transpose()?;
        Ok(Scanner {
            state,
            plan,
            stage,
            region_index: None,
            current: None,
            pending: VecDeque::new(),
            rows_returned: 0,
            finished,
        })
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

    fn next_full_row(&mut self) -> Result<Option<RowResult>> {
        loop {
            if self.current.is_none() {
                let index = match self.region_index {
                    None => self.first_region(),
                    Some(i) => self.following_region(i),
                };
                let Some(index) = index else {
                    return Ok(None);
                };
                let Some(region) = self.state.regions.get(index) else {
                    return Ok(None);
                };
                self.region_index = Some(index);
                self.current = Some(RegionScanner::open(region, &self.plan));
            }
            if let Some(scanner) = &mut self.current {
                let Some(row) = scanner.next_row(&self.plan)? else {
                    self.current = None;
                    continue;
                };
                let Some(stage) = &mut self.stage else {
                    return Ok(Some(row));
                };
                if stage.exhausted() {
                    return Ok(None);
                }
                match stage.process(row) {
                    Verdict::Return { row, stop } => {
                        if stop {
                            self.finished = true;
                        }
                        return Ok(Some(row));
                    }
                    Verdict::Skip => {}
                    Verdict::Stop => return Ok(None),
                    Verdict::SeekTo(target) => scanner.skip_to(&target)?,
                }
            }
        }
    }
}

impl Iterator for Scanner {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(part) = self.pending.pop_front() {
            return Some(Ok(part));
        }
        if self.finished {
            return None;
        }
        match self.next_full_row() {
            Ok(Some(row)) => {
                self.rows_returned += 1;
                if self
                    .plan
                    .limit
                    .is_some_and(|limit| self.rows_returned >= limit)
                {
                    self.finished = true;
                }
                match self.plan.batch {
                    Some(batch) if row.cells.len() > batch => {
                        let RowResult { row, cells } = row;
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
                    _ => Some(Ok(row)),
                }
            }
            Ok(None) => {
                self.finished = true;
                None
            }
            Err(e) => {
                self.finished = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
