//! Operations over many rows: `put_many`, `batch`, `get_many`, and the
//! scans that run inside the engine (`count`, `delete_where`).

use super::Table;
use crate::catalog::TableState;
use crate::cell::{RowResult, validate_timestamp};
use crate::error::{Error, Result};
use crate::ops::{BatchOp, BatchResult, Delete, Get, Put, Scan};
use crate::read::get;
use crate::read::parallel::{self, Parts};
use crate::read::sink::RowBuffer;
use crate::write::PreparedRow;

/// Most rows committed together by one `put_many` or batch group.
const MAX_ROWS_PER_COMMIT: usize = 1024;

impl Table {
    /// Writes many puts with one WAL sync. Every put is validated first; if
    /// any is invalid nothing is written. Each row is atomic on its own.
    pub fn put_many(&self, puts: &[Put]) -> Result<()> {
        let state = self.state()?;
        let now = self.services.now_ms();
        for put in puts {
            self.prepare_put(&state, put, now)?;
        }
        for chunk in puts.chunks(MAX_ROWS_PER_COMMIT) {
            self.commit_group(chunk, Put::row, |state, put| {
                self.prepare_put(state, put, now)
            })?;
        }
        Ok(())
    }

    /// Counts the rows a scan returns, inside the engine: no cell is copied
    /// without a filter, and the region parts are counted in parallel (on
    /// the machine's parallelism) unless a limit, a `PageFilter` or a
    /// `WHILE` makes the count depend on the order. The scan's batch size
    /// does not apply.
    pub fn count(&self, scan: &Scan) -> Result<u64> {
        let (parts, threads) = self.parts_for_bulk(scan)?;
        parallel::count_rows(parts, threads)
    }

    /// The rows `scan` returns, when the files' meta blocks tell the exact
    /// count without reading a row (the conditions are in
    /// `docs/semantics.md`, R31: compacted regions without delete markers,
    /// nothing in the memstores, no filter, time range or limit); `None`
    /// when some row would have to be read, as [`Table::count`] then does.
    /// Costs no I/O: query planners can ask it for exact statistics.
    pub fn known_count(&self, scan: &Scan) -> Result<Option<u64>> {
        let (parts, _) = self.parts_for_bulk(scan)?;
        Ok(parallel::known_count(&parts))
    }

    /// The scan's parts for a read inside the engine, and the threads to
    /// read them with: in parallel per region unless the scan's result
    /// depends on reading rows in order (a row limit too).
    fn parts_for_bulk(&self, scan: &Scan) -> Result<(Parts, usize)> {
        let mut parts = if scan.limit.is_some() {
            self.whole_scan_as_one_part(scan)?
        } else {
            self.scan_parts(scan)?
        };
        for plan in &mut parts.plans {
            plan.batch = None;
        }
        let threads = if parts.plans.len() > 1 { 0 } else { 1 };
        Ok((parts, threads))
    }

    /// Deletes, inside the engine, every row the scan returns (filters
    /// included): the whole row when the scan selects no columns, otherwise
    /// the selected families and the selected columns the row has. Markers
    /// get `timestamp` (default: now), so versions written later with larger
    /// timestamps survive. Each row is deleted atomically and durably per
    /// the table's durability; rows are committed in groups sharing one WAL
    /// sync, region parts in parallel as [`Table::count`] reads them.
    /// Returns the number of rows deleted.
    pub fn delete_where(&self, scan: &Scan, timestamp: Option<i64>) -> Result<u64> {
        let timestamp = timestamp.unwrap_or(self.services.now_ms());
        validate_timestamp(timestamp)?;
        let (parts, threads) = self.parts_for_bulk(scan)?;
        let deleted = parallel::for_each_part(parts, threads, |mut stream| {
            let mut pending: Vec<Delete> = Vec::new();
            let mut deleted = 0;
            let mut row = RowBuffer::default();
            while stream.next_row(&mut row)? {
                if let Some(delete) = row_delete(scan, &row, timestamp) {
                    pending.push(delete);
                    deleted += 1;
                }
                if pending.len() >= MAX_ROWS_PER_COMMIT {
                    self.delete_group(&pending)?;
                    pending.clear();
                }
            }
            self.delete_group(&pending)?;
            Ok(deleted)
        })?;
        Ok(deleted.into_iter().sum())
    }

    /// Commits deletes (without latest-version entries) sharing one WAL sync.
    pub(super) fn delete_group(&self, deletes: &[Delete]) -> Result<()> {
        let now = self.services.now_ms();
        self.commit_group(deletes, Delete::row, |state, delete| {
            self.prepare_delete(state, delete, now)
        })
    }

    /// Commits the mutations `items` together, sharing one WAL sync: takes
    /// the split gate and the state that routes the first one's row
    /// (`row_of`), prepares each against that state (`prepare`), locks
    /// their rows and commits.
    fn commit_group<T>(
        &self,
        items: &[T],
        row_of: impl Fn(&T) -> &[u8],
        prepare: impl for<'t> Fn(&'t TableState, &'t T) -> Result<PreparedRow<'t>>,
    ) -> Result<()> {
        let Some(first) = items.first() else {
            return Ok(());
        };
        let (_gate, state) = self.writable(row_of(first))?;
        let prepared = items
            .iter()
            .map(|item| prepare(&state, item))
            .collect::<Result<Vec<_>>>()?;
        let _locks = self
            .services
            .row_locks
            .lock(self.inner.id, prepared.iter().map(|p| p.row));
        self.commit_and_notify(&state, &prepared)
    }

    /// Reads many rows; the data blocks they need that are not cached are
    /// read in one batch (one io_uring submission) before the rows are
    /// assembled. Results come in the order of `gets`.
    pub fn get_many(&self, gets: &[Get]) -> Result<Vec<RowResult>> {
        let state = self.state()?;
        let now = self.read_now_ms(&state);
        // One read point for every get: the read snapshot they all name,
        // or the current one.
        let snapshot = gets.first().and_then(|get| get.read.snapshot.as_ref());
        if gets
            .iter()
            .any(|get| get.read.snapshot.as_ref() != snapshot)
        {
            return Err(Error::InvalidOption {
                name: "snapshot",
                reason: "the gets of one get_many read at one read point: give every one \
                         the same read snapshot, or none"
                    .into(),
            });
        }
        let (read_point, _held) = match gets.first() {
            Some(get) => self.read_point_of(&get.read)?,
            None => (self.services.mvcc.read_point(), None),
        };
        let regions = gets
            .iter()
            .map(|get| Self::region_with_stores(&state, &get.row))
            .collect::<Result<Vec<_>>>()?;
        get::get_many(&state, gets, &regions, read_point, now)
    }

    /// Runs operations in order; each is atomic on its own row, and runs of
    /// consecutive puts share one WAL sync. Returns one outcome per operation.
    pub fn batch(&self, ops: &[BatchOp]) -> Vec<Result<BatchResult>> {
        let mut results: Vec<Result<BatchResult>> = Vec::with_capacity(ops.len());
        let mut i = 0;
        while let Some(op) = ops.get(i) {
            if let BatchOp::Put(_) = op {
                let run: Vec<&Put> = ops
                    .get(i..)
                    .unwrap_or_default()
                    .iter()
                    .take(MAX_ROWS_PER_COMMIT)
                    .map_while(|op| match op {
                        BatchOp::Put(p) => Some(p),
                        _ => None,
                    })
                    .collect();
                i += run.len();
                results.extend(self.put_run(&run));
                continue;
            }
            results.push(match op {
                BatchOp::Put(p) => self.put(p).map(|()| BatchResult::Done),
                BatchOp::Delete(d) => self.delete(d).map(|()| BatchResult::Done),
                BatchOp::Get(g) => self.get(g).map(BatchResult::Row),
                BatchOp::Increment(inc) => self.increment(inc).map(BatchResult::Row),
                BatchOp::Append(a) => self.append(a).map(BatchResult::Row),
                BatchOp::RowMutations(m) => self.mutate_row(m).map(|()| BatchResult::Done),
                BatchOp::CheckAndMutate(c) => {
                    self.check_and_mutate(c).map(BatchResult::CheckAndMutate)
                }
            });
            i += 1;
        }
        results
    }

    /// Commits the valid puts of a run together; invalid ones get their error.
    pub(super) fn put_run(&self, puts: &[&Put]) -> Vec<Result<BatchResult>> {
        let Some(first) = puts.first() else {
            return Vec::new();
        };
        let (_gate, state) = match self.writable(first.row()) {
            Ok(writable) => writable,
            Err(e) => return puts.iter().map(|_| Err(e.clone())).collect(),
        };
        let now = self.services.now_ms();
        let mut outcomes: Vec<Result<BatchResult>> = Vec::with_capacity(puts.len());
        let mut prepared = Vec::new();
        for put in puts {
            match self.prepare_put(&state, put, now) {
                Ok(p) => {
                    prepared.push(p);
                    outcomes.push(Ok(BatchResult::Done));
                }
                Err(e) => outcomes.push(Err(e)),
            }
        }
        let committed = {
            let _locks = self
                .services
                .row_locks
                .lock(self.inner.id, prepared.iter().map(|p| p.row));
            self.commit_and_notify(&state, &prepared)
        };
        if let Err(e) = committed {
            for outcome in outcomes.iter_mut().filter(|o| o.is_ok()) {
                *outcome = Err(e.clone());
            }
        }
        outcomes
    }
}

/// The delete [`Table::delete_where`] makes of one returned row: the whole
/// row when the scan selects no columns, otherwise the selected families
/// and the selected columns the row has (`None`: none of them).
fn row_delete(scan: &Scan, row: &RowBuffer, timestamp: i64) -> Option<Delete> {
    let mut delete = Delete::new(row.row()).timestamp(timestamp);
    for (family, qualifiers) in scan.read.columns.families() {
        match qualifiers {
            None => delete = delete.family_up_to(family, timestamp),
            Some(wanted) => {
                let mut present: Vec<&[u8]> = row
                    .cells(0..row.len())
                    .filter(|c| c.family == family && wanted.contains(c.qualifier))
                    .map(|c| c.qualifier)
                    .collect();
                present.dedup();
                for q in present {
                    delete = delete.column_all_versions_up_to(family, q, timestamp);
                }
            }
        }
    }
    (scan.read.columns.is_all() || !delete.entries.is_empty()).then_some(delete)
}
