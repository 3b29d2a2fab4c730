//! The region scanner: the rows of one region a plan reads, in key order
//! (or in reverse), each assembled from the region's stores and resolved
//! into a [`RowSink`]. A store's part of a row comes through its
//! [`StoreScan`]; this room decides which row comes next, across stores,
//! within the plan's and the region's bounds, and drops a row the cell
//! gate's column tests reject.

use std::ops::Bound;
use std::sync::Arc;

use strata_filters::plan::Seek;

use super::cell_gate::{CellGate, RowVerdict};
use super::plan::ScanPlan;
use super::sink::RowSink;
use super::store_scan::StoreScan;
use crate::cell::SeekKey;
use crate::error::Result;
use crate::gate::RowGate;
use crate::hfile::reader::HFileReader;
use crate::iter::run::above_lower;
use crate::iter::run::below_upper;
use crate::region::{ActivityCounters, Region};
use crate::store::Store;

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
    /// allocation per row); a get's result takes it. Rows lent from blocks
    /// go to the sink without it.
    row: Vec<u8>,
    /// Rows returned, added to the region's counters when the scanner
    /// drops (one atomic add per scanner, not per row).
    rows_read: u64,
    activity: Arc<ActivityCounters>,
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
                Some(StoreScan::new(family, sources, plan.read_point))
            })
            .collect::<Vec<_>>();
        let empty_get = stores.is_empty() && single_row;
        // The region's range narrows the plan's bounds only for a scan that
        // crosses it (a get, or a scan inside one region, keeps the plan's).
        // A get of a row no memstore holds and every file's key range, time
        // range or bloom rules out is finished before it starts, without
        // these allocations (they were most of such a get).
        let lower =
            (!empty_get && !region.start().is_empty() && above_lower(region.start(), &plan.lower))
                .then(|| Bound::Included(region.start().to_vec()));
        let upper =
            (!empty_get && !region.end().is_empty() && below_upper(region.end(), &plan.upper))
                .then(|| Bound::Excluded(region.end().to_vec()));
        RegionScanner {
            stores,
            lower,
            upper,
            started: empty_get,
            reverse_bound: None,
            finished: empty_get,
            row: Vec::new(),
            rows_read: 0,
            activity: region.activity.clone(),
            verdict: RowVerdict::default(),
        }
    }

    /// The files the scanner's stores read (each file source's file).
    pub(crate) fn files(&self) -> impl Iterator<Item = &Arc<HFileReader>> {
        self.stores
            .iter()
            .flat_map(|store| store.rows_ref().files())
    }

    /// The key of the row the merge path last resolved (a get's row),
    /// taken: the scanner's buffer becomes the result's key, no second
    /// copy.
    pub(crate) fn take_row_key(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.row)
    }

    /// Reads the next row with at least one returned cell into `sink`;
    /// false at the end.
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
    /// one of them): `Some(true)` when the row's cell is returned,
    /// `Some(false)` when it is not (its row returns nothing), `None` when
    /// the general path must go on. The lone cell is resolved without the
    /// general path's resolver, selections and run ranking.
    #[inline]
    fn step_lone_cell_run<S: RowSink>(&mut self, plan: &ScanPlan, sink: &mut S) -> Option<bool> {
        if self.finished || plan.cell_gate.is_some() || plan.query.raw {
            return None;
        }
        let upper = self.upper.as_ref().unwrap_or(&plan.upper);
        self.stores
            .first_mut()?
            .next_lone_cell_row(plan, upper, sink)
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
                store.rows().seek(&SeekKey::row_start(&start))?;
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

    /// Reads the next row of the block run under way (a forward scan of
    /// one store) into `sink`: `Some(true)` when the row returns cells,
    /// `Some(false)` when it returns none, `None` when no run is under way.
    fn step_run<S: RowSink>(&mut self, plan: &ScanPlan, sink: &mut S) -> Result<Option<bool>> {
        let Some(store) = self.stores.first_mut() else {
            return Ok(None);
        };
        let upper = self.upper.as_ref().unwrap_or(&plan.upper);
        store.next_run_row(plan, upper, &mut self.verdict, sink)
    }

    /// Resolves the smallest row the stores' merged sources stand on into
    /// `sink` (its key then in `self.row`): `Some(true)` when it returns
    /// cells, `Some(false)` when it returns none, `None` past the last row.
    fn next_merged_row<S: RowSink>(
        &mut self,
        plan: &ScanPlan,
        sink: &mut S,
    ) -> Result<Option<bool>> {
        let mut smallest: Option<&[u8]> = None;
        for store in &mut self.stores {
            if let Some(row) = store.rows().next_row_key()?
                && smallest.is_none_or(|s| row < s)
            {
                smallest = Some(row);
            }
        }
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
                    .rows()
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
                store.rows().seek(&SeekKey::row_start(&row))?;
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
        match target {
            Seek::Forward(key) => {
                self.started = true;
                for store in &mut self.stores {
                    store.rows().seek(&SeekKey::row_start(key))?;
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
    /// afresh), leaving each store past the row (or, where a block run
    /// begins, with the run under way).
    fn collect_row<S: RowSink>(&mut self, plan: &ScanPlan, row: &[u8], sink: &mut S) -> Result<()> {
        sink.begin_row(row);
        let gate = plan.cell_gate.as_deref();
        if let Some(gate) = gate {
            gate.begin_row(&mut self.verdict);
        }
        // A run reads the rows of one store forward; with several stores a
        // row is assembled from all of them; a get reads one row.
        let may_run = self.stores.len() == 1 && !plan.reversed && plan.single_row().is_none();
        let run_within = may_run.then_some(self.upper.as_ref().unwrap_or(&plan.upper));
        for store in &mut self.stores {
            store.collect_row(plan, row, run_within, &mut self.verdict, sink)?;
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
}
