//! Read planning: what a scan or a get reads, fixed when it starts. The
//! bounds (start and stop, prefix, the filter's key interval), the
//! families and columns, the version rules, the read point, the limit and
//! batch, and the compiled filter with the parts of it that run below the
//! filter stage (the row gate at the sources, the cell gate while rows
//! resolve). A scan's region parts are planned here too.

use std::ops::Bound;
use std::sync::Arc;

use super::cell_gate::CellGate;
use super::filtering::FilterSetup;
use super::parallel::Parts;
use super::resolve::QueryRules;
use crate::catalog::TableState;
use crate::cell::{TimeRange, prefix_successor, validate_row};
use crate::error::{Error, Result};
use crate::ops::{ColumnSelection, Get, ReadOptions, Scan};
use crate::read_snapshot::HeldReadPoint;
use crate::schema::{FamilyPlan, family_plan};
use crate::store::ReadScope;

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
    /// while rows are resolved (see [`super::cell_gate`]).
    pub(crate) cell_gate: Option<Arc<CellGate>>,
    /// The read snapshot `read_point` belongs to, held while the plan (and
    /// every stream reading it) lives, so that compaction keeps what the
    /// read still needs.
    pub(crate) snapshot: Option<Arc<HeldReadPoint>>,
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
pub(super) fn query_rules(read: &ReadOptions, raw: bool, now_ms: i64) -> Result<QueryRules> {
    Ok(QueryRules {
        time_range: TimeRange::new(read.time_min, read.time_max)?,
        max_versions: check_versions(read.max_versions)?,
        raw,
        now_ms,
    })
}

pub(super) fn family_plans(
    state: &TableState,
    columns: &ColumnSelection,
) -> Result<Arc<[FamilyPlan]>> {
    if columns.is_all() {
        return Ok(state.all_families.clone());
    }
    let mut plans = Vec::new();
    for (name, qualifiers) in columns.families() {
        let (id, family) = state.family(name).ok_or_else(|| Error::UnknownFamily {
            table: state.descriptor.name().to_owned(),
            family: String::from_utf8_lossy(name).into_owned(),
        })?;
        plans.push(family_plan(id, family, qualifiers));
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
        snapshot: None,
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
        snapshot: None,
    };
    attach_filter(&mut plan, get.read.filter.as_ref(), true)?;
    Ok(plan)
}

/// The scan planned per region part, in scan order, over `state` at
/// `read_point`; one part when the scan's filter depends on reading rows
/// in order (a `PageFilter`, `WHILE`, a filter the evaluator runs) or the
/// table has one region. The whole scan is planned first, so that a bad
/// scan fails as a serial scan fails.
pub(crate) fn plan_parts(
    state: Arc<TableState>,
    scan: &Scan,
    read_point: u64,
    now_ms: i64,
) -> Result<Parts> {
    let whole = plan_scan(&state, scan, read_point, now_ms)?;
    let order_dependent = whole.filter.as_ref().is_some_and(|f| {
        f.plan.limits.max_rows.is_some() || f.plan.stop_filter.is_some() || f.plan.needs_evaluator
    });
    if order_dependent || state.regions.len() <= 1 {
        return Ok(Parts {
            state,
            plans: vec![whole],
        });
    }
    let mut plans = state
        .regions
        .iter()
        .filter_map(|region| scan.within(region.start(), region.end()))
        .map(|part| plan_scan(&state, &part, read_point, now_ms))
        .collect::<Result<Vec<_>>>()?;
    if scan.reversed {
        plans.reverse();
    }
    Ok(Parts { state, plans })
}

/// The only qualifier a get reads of `family`, for ROWCOL blooms.
pub(super) fn single_column(family: &FamilyPlan) -> Option<&[u8]> {
    match &family.columns {
        Some(set) if set.len() == 1 => set.iter().next(),
        _ => None,
    }
}

impl ScanPlan {
    /// The one row the plan reads, when it is a get's plan.
    pub(crate) fn single_row(&self) -> Option<&[u8]> {
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
