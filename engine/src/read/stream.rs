//! Row streams: the rows of a scan, region after region, through the
//! filter stage and the row limit ([`RowStream`], what the borrowing
//! cursor, the parallel scans and the scans inside the engine share), and
//! the owned-row iterator over them ([`Scanner`]).

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use super::filtering::{FilterStage, Verdict};
use super::plan::ScanPlan;
use super::scanner::RegionScanner;
use super::sink::{RowBuffer, RowSink};
use crate::catalog::TableState;
use crate::cell::{Cell, RowResult};
use crate::error::Result;
use crate::iter::run::below_upper;
use crate::metrics::ScanTimer;

/// The rows of a scan, region after region, through the filter stage and
/// the row limit: what [`Scanner`] and [`ScanCursor`](super::cursor::ScanCursor) share.
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
    /// Times the scan until the stream is dropped (scans the caller
    /// started; `None` for the engine's own).
    timer: Option<ScanTimer>,
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
            timer: None,
        })
    }

    /// The stream, timed by `timer` until dropped.
    pub(crate) fn timed(mut self, timer: ScanTimer) -> RowStream {
        self.timer = Some(timer);
        self
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
                    self.count_returned_row();
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

    /// Counts a returned row; the stream is finished at the plan's limit.
    #[inline]
    fn count_returned_row(&mut self) {
        self.rows_returned += 1;
        if self
            .plan
            .limit
            .is_some_and(|limit| self.rows_returned >= limit)
        {
            self.finished = true;
        }
    }

    #[inline(never)]
    fn next_row_in_general<S: RowSink>(&mut self, sink: &mut S) -> Result<bool> {
        if self.finished {
            return Ok(false);
        }
        match self.next_full_row(sink) {
            Ok(true) => {
                self.count_returned_row();
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
                region
                    .activity
                    .scans
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
/// [`Scan::batch`](crate::Scan::batch), a part of one row), with owned cells: a copy, at the
/// edge, of what the borrowing [`ScanCursor`](super::cursor::ScanCursor) lends.
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

    /// The scanner, timed by `timer` until dropped.
    pub(crate) fn timed(mut self, timer: ScanTimer) -> Scanner {
        self.stream = self.stream.timed(timer);
        self
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
