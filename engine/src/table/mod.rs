//! A table handle: the data operations, routing rows to regions.
//!
//! Every operation validates its input completely before it takes the row
//! lock, and a mutation is committed as one unit, so a failed call leaves the
//! table unchanged. Read-modify-write operations (increment, append,
//! check-and-mutate, deletes of the latest version) read and write under the
//! row lock; every mutation takes it, so they serialize with plain writes of
//! the same row.

use std::collections::HashSet;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::catalog::{TableInner, TableState};
use crate::cell::{
    Cell, CellKind, RowResult, validate_qualifier, validate_row, validate_timestamp,
};
use crate::core::Services;
use crate::error::{Error, Result};
use crate::hfile::reader::HFileReader;
use crate::maintenance::Supervisor;
use crate::ops::{
    Append, BatchOp, BatchResult, CheckAction, CheckAndMutate, CheckAndMutateResult, CompareOp,
    Condition, Delete, DeleteEntry, Get, Increment, Mutation, Put, RowMutations, Scan,
};
use crate::options::TableDescriptor;
use crate::read::{Scanner, get_finds_nothing, plan_get, plan_scan, read_row};
use crate::region::Region;
use crate::store::Store;
use crate::write::{PreparedCell, PreparedFamily, PreparedRow, commit};

/// Whether `left OP right` holds, given `left.cmp(right)`.
fn ordering_holds(op: CompareOp, ordering: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        CompareOp::Less => ordering == Less,
        CompareOp::LessOrEqual => ordering != Greater,
        CompareOp::Equal => ordering == Equal,
        CompareOp::NotEqual => ordering != Equal,
        CompareOp::GreaterOrEqual => ordering != Less,
        CompareOp::Greater => ordering == Greater,
        CompareOp::NoOp => false,
    }
}

/// A column as (family, qualifier).
type ColumnKey = (Vec<u8>, Vec<u8>);
/// The newest value of a column and its timestamp, if it has one.
type StoredValue = Option<(Vec<u8>, i64)>;

/// Most rows committed together by one `put_many` or batch group.
const MAX_ROWS_PER_COMMIT: usize = 1024;

/// A region of a table as reported by [`Table::regions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionInfo {
    /// Region id, unique in the database.
    pub id: u64,
    /// Inclusive start key (empty for the first region).
    pub start_key: Vec<u8>,
    /// Exclusive end key (empty for the last region).
    pub end_key: Vec<u8>,
    /// Bytes of memory held by the region's memstores.
    pub memstore_bytes: u64,
    /// Cells in the region's memstores.
    pub memstore_cells: u64,
    /// HFiles per level (L0 first), all families together.
    pub files_per_level: Vec<usize>,
    /// Bytes of the region's HFiles.
    pub file_bytes: u64,
}

/// A handle to one table. Cheap to clone; every clone sees the same table.
#[derive(Clone)]
pub struct Table {
    pub(crate) services: Arc<Services>,
    pub(crate) supervisor: Arc<Supervisor>,
    pub(crate) inner: Arc<TableInner>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("name", &self.inner.name)
            .finish()
    }
}

fn unknown_family(state: &TableState, family: &[u8]) -> Error {
    Error::UnknownFamily {
        table: state.descriptor.name().to_owned(),
        family: String::from_utf8_lossy(family).into_owned(),
    }
}

/// Collects cells per family, keeping the last of identical
/// (family, qualifier, timestamp, kind) keys, as HBase does within one mutation.
#[derive(Default)]
struct CellsByFamily {
    families: Vec<(u32, Vec<PreparedCell>)>,
}

impl CellsByFamily {
    fn push(&mut self, family_id: u32, cell: PreparedCell) {
        match self.families.iter_mut().find(|(id, _)| *id == family_id) {
            Some((_, cells)) => cells.push(cell),
            None => self.families.push((family_id, vec![cell])),
        }
    }

    fn into_prepared(
        self,
        region: &Arc<Region>,
        row: &[u8],
        durability: crate::Durability,
    ) -> Result<PreparedRow> {
        let mut families = Vec::with_capacity(self.families.len());
        for (family_id, mut cells) in self.families {
            if cells.len() > 1 {
                let mut seen = HashSet::new();
                cells.reverse();
                cells.retain(|c| seen.insert((c.qualifier.clone(), c.timestamp, c.kind)));
                cells.reverse();
            }
            // The store exists unless the family was dropped concurrently.
            let store = region
                .store(family_id)
                .ok_or_else(|| Error::UnknownFamily {
                    table: String::new(),
                    family: format!("(id {family_id})"),
                })?;
            families.push(PreparedFamily { store, cells });
        }
        debug_assert!(
            region.contains(row),
            "rows are routed to the region holding them"
        );
        let prepared = PreparedRow {
            region: region.clone(),
            row: row.to_vec(),
            families,
            durability,
        };
        prepared.check_size()?;
        Ok(prepared)
    }
}

impl Table {
    /// The table's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The table's state for metadata reads (works while disabled).
    fn metadata(&self) -> Result<Arc<TableState>> {
        if self.services.is_closed() {
            return Err(Error::Closed);
        }
        if self.inner.dropped.load(Ordering::Acquire) {
            return Err(Error::TableNotFound {
                table: self.inner.name.clone(),
            });
        }
        Ok(self.inner.state.read().clone())
    }

    /// The table's state for reads and writes (fails while disabled).
    pub(crate) fn state(&self) -> Result<Arc<TableState>> {
        let state = self.metadata()?;
        if !self.inner.enabled.load(Ordering::Acquire) {
            return Err(Error::TableDisabled {
                table: self.inner.name.clone(),
            });
        }
        Ok(state)
    }

    /// True unless the table is disabled.
    pub fn is_enabled(&self) -> bool {
        self.inner.enabled.load(Ordering::Acquire)
    }

    /// The table's current descriptor.
    pub fn descriptor(&self) -> Result<TableDescriptor> {
        Ok(self.metadata()?.descriptor.clone())
    }

    /// The table's regions in key order.
    pub fn regions(&self) -> Result<Vec<RegionInfo>> {
        Ok(self
            .metadata()?
            .regions
            .iter()
            .map(|r| {
                let mut files_per_level = vec![0; crate::store::LEVELS];
                let mut file_bytes = 0;
                for store in r.stores() {
                    for (level, file) in store.version().files() {
                        if let Some(n) = files_per_level.get_mut(level) {
                            *n += 1;
                        }
                        file_bytes += file.meta().size;
                    }
                }
                RegionInfo {
                    id: r.id(),
                    start_key: r.start().to_vec(),
                    end_key: r.end().to_vec(),
                    memstore_bytes: r.memstore_bytes(),
                    memstore_cells: r.memstore_cells(),
                    files_per_level,
                    file_bytes,
                }
            })
            .collect())
    }

    fn region<'s>(state: &'s TableState, row: &[u8]) -> Result<&'s Arc<Region>> {
        state.region_for(row).ok_or_else(|| Error::TableNotFound {
            table: state.descriptor.name().to_owned(),
        })
    }

    fn check_value(state: &TableState, value: &[u8]) -> Result<()> {
        let max = state.descriptor.get_max_value_bytes();
        if value.len() > max {
            return Err(Error::ValueTooLarge {
                len: value.len(),
                max,
            });
        }
        Ok(())
    }

    fn family_id(state: &TableState, family: &[u8]) -> Result<u32> {
        state
            .family(family)
            .map(|(id, _)| id)
            .ok_or_else(|| unknown_family(state, family))
    }

    fn prepare_put(&self, state: &TableState, put: &Put, now_ms: i64) -> Result<PreparedRow> {
        validate_row(&put.row)?;
        if put.cells.is_empty() {
            return Err(Error::EmptyMutation);
        }
        let region = Self::region(state, &put.row)?;
        let mut cells = CellsByFamily::default();
        Self::add_put_cells(state, put, now_ms, &mut cells)?;
        let durability = put.durability.unwrap_or(state.descriptor.get_durability());
        cells.into_prepared(region, &put.row, durability)
    }

    fn add_put_cells(
        state: &TableState,
        put: &Put,
        now_ms: i64,
        out: &mut CellsByFamily,
    ) -> Result<()> {
        for cell in &put.cells {
            let family_id = Self::family_id(state, &cell.family)?;
            validate_qualifier(&cell.qualifier)?;
            let timestamp = cell.timestamp.or(put.timestamp).unwrap_or(now_ms);
            validate_timestamp(timestamp)?;
            Self::check_value(state, &cell.value)?;
            out.push(
                family_id,
                PreparedCell {
                    qualifier: cell.qualifier.clone(),
                    timestamp,
                    kind: CellKind::Put,
                    value: cell.value.clone(),
                },
            );
        }
        Ok(())
    }

    /// Checks a delete's input without reading anything.
    fn validate_delete(state: &TableState, delete: &Delete) -> Result<()> {
        validate_row(&delete.row)?;
        if let Some(ts) = delete.timestamp {
            validate_timestamp(ts)?;
        }
        for entry in &delete.entries {
            let (family, qualifier, timestamp) = match entry {
                DeleteEntry::Family { family, timestamp } => (family, None, *timestamp),
                DeleteEntry::FamilyVersion { family, timestamp } => {
                    (family, None, Some(*timestamp))
                }
                DeleteEntry::ColumnAllVersions {
                    family,
                    qualifier,
                    timestamp,
                }
                | DeleteEntry::ColumnVersion {
                    family,
                    qualifier,
                    timestamp,
                } => (family, Some(qualifier), *timestamp),
            };
            Self::family_id(state, family)?;
            if let Some(q) = qualifier {
                validate_qualifier(q)?;
            }
            if let Some(ts) = timestamp {
                validate_timestamp(ts)?;
            }
        }
        Ok(())
    }

    /// Turns a delete into markers; "latest version" entries read the row,
    /// so the caller must hold the row lock.
    fn add_delete_cells(
        &self,
        state: &TableState,
        delete: &Delete,
        now_ms: i64,
        out: &mut CellsByFamily,
    ) -> Result<()> {
        let default_ts = delete.timestamp.unwrap_or(now_ms);
        let marker = |qualifier: &[u8], timestamp: i64, kind: CellKind| PreparedCell {
            qualifier: qualifier.to_vec(),
            timestamp,
            kind,
            value: Vec::new(),
        };
        if delete.entries.is_empty() {
            for &family_id in &state.family_ids {
                out.push(family_id, marker(b"", default_ts, CellKind::DeleteFamily));
            }
            return Ok(());
        }
        for entry in &delete.entries {
            match entry {
                DeleteEntry::Family { family, timestamp } => out.push(
                    Self::family_id(state, family)?,
                    marker(b"", timestamp.unwrap_or(default_ts), CellKind::DeleteFamily),
                ),
                DeleteEntry::FamilyVersion { family, timestamp } => out.push(
                    Self::family_id(state, family)?,
                    marker(b"", *timestamp, CellKind::DeleteFamilyVersion),
                ),
                DeleteEntry::ColumnAllVersions {
                    family,
                    qualifier,
                    timestamp,
                } => out.push(
                    Self::family_id(state, family)?,
                    marker(
                        qualifier,
                        timestamp.unwrap_or(default_ts),
                        CellKind::DeleteColumn,
                    ),
                ),
                DeleteEntry::ColumnVersion {
                    family,
                    qualifier,
                    timestamp,
                } => {
                    let timestamp = match timestamp.or(delete.timestamp) {
                        Some(ts) => ts,
                        // HBase: the newest visible version's timestamp, or now
                        // when there is none (a marker that hides nothing).
                        None => {
                            let get = Get::new(&delete.row).column(family, qualifier);
                            self.get_in(state, &get, now_ms)?
                                .cells
                                .first()
                                .map_or(now_ms, |c| c.timestamp)
                        }
                    };
                    out.push(
                        Self::family_id(state, family)?,
                        marker(qualifier, timestamp, CellKind::Delete),
                    );
                }
            }
        }
        Ok(())
    }

    fn prepare_delete(
        &self,
        state: &TableState,
        delete: &Delete,
        now_ms: i64,
    ) -> Result<PreparedRow> {
        let region = Self::region(state, &delete.row)?;
        let mut cells = CellsByFamily::default();
        self.add_delete_cells(state, delete, now_ms, &mut cells)?;
        let durability = delete
            .durability
            .unwrap_or(state.descriptor.get_durability());
        cells.into_prepared(region, &delete.row, durability)
    }

    fn lock_row(&self, row: &[u8]) -> crate::mvcc::RowLockGuard<'_> {
        self.services.row_locks.lock(self.inner.id, [row])
    }

    /// Throttles (holding no lock), then takes the split gate and the
    /// current state: the regions this state routes to cannot be split away
    /// until the returned guard is dropped.
    fn writable(
        &self,
        row: &[u8],
    ) -> Result<(parking_lot::RwLockReadGuard<'_, ()>, Arc<TableState>)> {
        let state = self.state()?;
        self.throttle(&state, row)?;
        let gate = self.inner.split_gate.read_recursive();
        Ok((gate, self.state()?))
    }

    /// Waits (before taking row locks) while the region of `row` must not
    /// take writes: L0 too deep, memstores full.
    fn throttle(&self, state: &TableState, row: &[u8]) -> Result<()> {
        let region = Self::region(state, row)?;
        self.supervisor.before_write(
            &self.inner,
            region,
            state.descriptor.get_memstore_flush_size_bytes(),
        )
    }

    /// Commits `rows` (whose rows the caller locked) and schedules the
    /// flushes the written regions now need.
    fn commit_and_notify(&self, state: &TableState, rows: &[PreparedRow]) -> Result<()> {
        commit(&self.services, rows)?;
        let flush_size = state.descriptor.get_memstore_flush_size_bytes();
        let mut last = None;
        for row in rows {
            if last != Some(row.region.id()) {
                self.supervisor
                    .after_write(&self.inner, &row.region, flush_size);
                last = Some(row.region.id());
            }
        }
        Ok(())
    }

    /// Writes a put. Returns once it is visible (and, with `SyncWal`, durable).
    pub fn put(&self, put: &Put) -> Result<()> {
        let (_gate, state) = self.writable(&put.row)?;
        let prepared = self.prepare_put(&state, put, self.services.now_ms())?;
        let _lock = self.lock_row(&put.row);
        self.commit_and_notify(&state, std::slice::from_ref(&prepared))
    }

    /// Writes many puts with one WAL sync. Every put is validated first; if
    /// any is invalid nothing is written. Each row is atomic on its own.
    pub fn put_many(&self, puts: &[Put]) -> Result<()> {
        let state = self.state()?;
        let now = self.services.now_ms();
        for put in puts {
            self.prepare_put(&state, put, now)?;
        }
        for chunk in puts.chunks(MAX_ROWS_PER_COMMIT) {
            let Some(first) = chunk.first() else { continue };
            let (_gate, state) = self.writable(&first.row)?;
            let prepared = chunk
                .iter()
                .map(|p| self.prepare_put(&state, p, now))
                .collect::<Result<Vec<_>>>()?;
            let _locks = self
                .services
                .row_locks
                .lock(self.inner.id, prepared.iter().map(|p| p.row.as_slice()));
            self.commit_and_notify(&state, &prepared)?;
        }
        Ok(())
    }

    /// Writes delete markers.
    pub fn delete(&self, delete: &Delete) -> Result<()> {
        let (_gate, state) = self.writable(&delete.row)?;
        Self::validate_delete(&state, delete)?;
        let _lock = self.lock_row(&delete.row);
        let prepared = self.prepare_delete(&state, delete, self.services.now_ms())?;
        self.commit_and_notify(&state, std::slice::from_ref(&prepared))
    }

    fn get_in(&self, state: &TableState, get: &Get, now_ms: i64) -> Result<RowResult> {
        let region = Self::region(state, &get.row)?;
        if get_finds_nothing(state, region, get)? {
            return Ok(RowResult {
                row: get.row.clone(),
                cells: Vec::new(),
            });
        }
        let mut plan = plan_get(state, get, self.services.mvcc.read_point(), now_ms)?;
        if let Some(row) = read_row(region, &plan)? {
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

    /// Reads one row; an absent row gives an empty result.
    pub fn get(&self, get: &Get) -> Result<RowResult> {
        let state = self.state()?;
        self.get_in(&state, get, self.read_now_ms(&state))
    }

    /// The clock reading a read resolves TTLs against. Only TTL expiry
    /// looks at it, so for a table with no TTL family the clock is not read
    /// (it showed in profiles of gets of absent rows) and 0 stands in.
    fn read_now_ms(&self, state: &TableState) -> i64 {
        if state.has_ttl() {
            self.services.now_ms()
        } else {
            0
        }
    }

    /// True when the get would return at least one cell.
    pub fn exists(&self, get: &Get) -> Result<bool> {
        Ok(!self.get(get)?.is_empty())
    }

    /// The scan cut at region boundaries: one scan per region that can hold
    /// its rows, in scan order, to run in parallel (what HBase's
    /// `TableInputFormat` splits are). Run one after another they return
    /// exactly the scan's rows, except that a `limit` (or `PageFilter`)
    /// applies to each part on its own. Parts still read correctly after the
    /// regions split again; they may then span more than one region.
    pub fn scan_splits(&self, scan: &Scan) -> Result<Vec<Scan>> {
        let state = self.state()?;
        let mut parts: Vec<Scan> = state
            .regions
            .iter()
            .filter_map(|region| scan.within(region.start(), region.end()))
            .collect();
        if scan.reversed {
            parts.reverse();
        }
        Ok(parts)
    }

    /// Starts a scan; rows come from the returned iterator.
    pub fn scan(&self, scan: &Scan) -> Result<Scanner> {
        let state = self.state()?;
        let plan = plan_scan(
            &state,
            scan,
            self.services.mvcc.read_point(),
            self.read_now_ms(&state),
        )?;
        Scanner::new(state, plan)
    }

    fn validate_columns<'a>(
        state: &TableState,
        row: &[u8],
        columns: impl Iterator<Item = (&'a [u8], &'a [u8])>,
    ) -> Result<usize> {
        validate_row(row)?;
        let mut n = 0;
        for (family, qualifier) in columns {
            Self::family_id(state, family)?;
            validate_qualifier(qualifier)?;
            n += 1;
        }
        if n == 0 {
            return Err(Error::EmptyMutation);
        }
        Ok(n)
    }

    /// Reads the newest value and timestamp of each column, under the row lock.
    fn read_columns(
        &self,
        state: &TableState,
        row: &[u8],
        columns: &[ColumnKey],
        now_ms: i64,
    ) -> Result<Vec<StoredValue>> {
        let mut get = Get::new(row);
        for (family, qualifier) in columns {
            get = get.column(family, qualifier);
        }
        let current = self.get_in(state, &get, now_ms)?;
        Ok(columns
            .iter()
            .map(|(f, q)| {
                current
                    .cells
                    .iter()
                    .find(|c| c.family == *f && c.qualifier == *q)
                    .map(|c| (c.value.clone(), c.timestamp))
            })
            .collect())
    }

    /// Writes `values` (one per column) as new versions; returns them.
    fn write_new_values(
        &self,
        state: &TableState,
        row: &[u8],
        columns: &[ColumnKey],
        values: Vec<(Vec<u8>, i64)>,
        durability: crate::Durability,
    ) -> Result<RowResult> {
        let region = Self::region(state, row)?;
        let mut cells = CellsByFamily::default();
        let mut result = Vec::with_capacity(columns.len());
        for ((family, qualifier), (value, timestamp)) in columns.iter().zip(values) {
            cells.push(
                Self::family_id(state, family)?,
                PreparedCell {
                    qualifier: qualifier.clone(),
                    timestamp,
                    kind: CellKind::Put,
                    value: value.clone(),
                },
            );
            result.push(Cell {
                family: family.clone(),
                qualifier: qualifier.clone(),
                timestamp,
                kind: CellKind::Put,
                value,
            });
        }
        let prepared = cells.into_prepared(region, row, durability)?;
        self.commit_and_notify(state, std::slice::from_ref(&prepared))?;
        result.sort_by(|a, b| (&a.family, &a.qualifier).cmp(&(&b.family, &b.qualifier)));
        Ok(RowResult {
            row: row.to_vec(),
            cells: result,
        })
    }

    /// Columns in first-seen order with their operands merged by `merge`.
    fn merge_columns<T: Clone>(
        columns: &[(Vec<u8>, Vec<u8>, T)],
        merge: impl Fn(&T, &T) -> Option<T>,
        overflow: impl Fn(&[u8], &[u8]) -> Error,
    ) -> Result<(Vec<ColumnKey>, Vec<T>)> {
        let mut keys: Vec<ColumnKey> = Vec::new();
        let mut operands: Vec<T> = Vec::new();
        for (family, qualifier, operand) in columns {
            match keys.iter().position(|(f, q)| f == family && q == qualifier) {
                Some(i) => {
                    let slot = operands
                        .get_mut(i)
                        .ok_or_else(|| overflow(family, qualifier))?;
                    *slot = merge(slot, operand).ok_or_else(|| overflow(family, qualifier))?;
                }
                None => {
                    keys.push((family.clone(), qualifier.clone()));
                    operands.push(operand.clone());
                }
            }
        }
        Ok((keys, operands))
    }

    fn increment_locked(&self, state: &TableState, increment: &Increment) -> Result<RowResult> {
        let now = self.services.now_ms();
        let overflow = |family: &[u8], qualifier: &[u8]| Error::CounterOverflow {
            family: String::from_utf8_lossy(family).into_owned(),
            qualifier: qualifier.to_vec(),
        };
        let (columns, deltas) =
            Self::merge_columns(&increment.columns, |a, b| a.checked_add(*b), overflow)?;
        let current = self.read_columns(state, &increment.row, &columns, now)?;
        let mut values = Vec::with_capacity(columns.len());
        for (((family, qualifier), delta), stored) in columns.iter().zip(&deltas).zip(current) {
            let (old, timestamp) = match stored {
                None => (0, now),
                Some((bytes, ts)) => {
                    let array: [u8; 8] =
                        bytes
                            .as_slice()
                            .try_into()
                            .map_err(|_| Error::NotACounter {
                                family: String::from_utf8_lossy(family).into_owned(),
                                qualifier: qualifier.clone(),
                                len: bytes.len(),
                            })?;
                    (i64::from_be_bytes(array), now.max(ts))
                }
            };
            let new = old
                .checked_add(*delta)
                .ok_or_else(|| overflow(family, qualifier))?;
            values.push((new.to_be_bytes().to_vec(), timestamp));
        }
        let durability = increment
            .durability
            .unwrap_or(state.descriptor.get_durability());
        self.write_new_values(state, &increment.row, &columns, values, durability)
    }

    /// Adds to 8-byte big-endian counters atomically; returns the new values.
    pub fn increment(&self, increment: &Increment) -> Result<RowResult> {
        let (_gate, state) = self.writable(&increment.row)?;
        Self::validate_columns(
            &state,
            &increment.row,
            increment
                .columns
                .iter()
                .map(|(f, q, _)| (f.as_slice(), q.as_slice())),
        )?;
        let _lock = self.lock_row(&increment.row);
        self.increment_locked(&state, increment)
    }

    fn append_locked(&self, state: &TableState, append: &Append) -> Result<RowResult> {
        let now = self.services.now_ms();
        let (columns, suffixes) = Self::merge_columns(
            &append.columns,
            |a: &Vec<u8>, b: &Vec<u8>| Some([a.as_slice(), b.as_slice()].concat()),
            |_, _| Error::EmptyMutation,
        )?;
        let current = self.read_columns(state, &append.row, &columns, now)?;
        let mut values = Vec::with_capacity(columns.len());
        for (suffix, stored) in suffixes.iter().zip(current) {
            let (mut value, timestamp) = match stored {
                None => (Vec::new(), now),
                Some((bytes, ts)) => (bytes, now.max(ts)),
            };
            value.extend_from_slice(suffix);
            Self::check_value(state, &value)?;
            values.push((value, timestamp));
        }
        let durability = append
            .durability
            .unwrap_or(state.descriptor.get_durability());
        self.write_new_values(state, &append.row, &columns, values, durability)
    }

    /// Appends to values atomically; returns the new values.
    pub fn append(&self, append: &Append) -> Result<RowResult> {
        let (_gate, state) = self.writable(&append.row)?;
        Self::validate_columns(
            &state,
            &append.row,
            append
                .columns
                .iter()
                .map(|(f, q, _)| (f.as_slice(), q.as_slice())),
        )?;
        let _lock = self.lock_row(&append.row);
        self.append_locked(&state, append)
    }

    fn validate_row_mutations(state: &TableState, mutations: &RowMutations) -> Result<()> {
        validate_row(&mutations.row)?;
        if mutations.mutations.is_empty() {
            return Err(Error::EmptyMutation);
        }
        for m in &mutations.mutations {
            let row = match m {
                Mutation::Put(p) => &p.row,
                Mutation::Delete(d) => &d.row,
            };
            if *row != mutations.row {
                return Err(Error::RowMismatch {
                    expected: mutations.row.clone(),
                    found: row.clone(),
                });
            }
            if let Mutation::Delete(d) = m {
                Self::validate_delete(state, d)?;
            }
        }
        Ok(())
    }

    fn mutate_row_locked(&self, state: &TableState, mutations: &RowMutations) -> Result<()> {
        let now = self.services.now_ms();
        let region = Self::region(state, &mutations.row)?;
        let mut cells = CellsByFamily::default();
        for m in &mutations.mutations {
            match m {
                Mutation::Put(put) => {
                    if put.cells.is_empty() {
                        return Err(Error::EmptyMutation);
                    }
                    Self::add_put_cells(state, put, now, &mut cells)?;
                }
                Mutation::Delete(delete) => {
                    self.add_delete_cells(state, delete, now, &mut cells)?
                }
            }
        }
        let durability = mutations
            .durability
            .unwrap_or(state.descriptor.get_durability());
        let prepared = cells.into_prepared(region, &mutations.row, durability)?;
        self.commit_and_notify(state, std::slice::from_ref(&prepared))
    }

    /// Applies puts and deletes to one row atomically (one sequence number).
    pub fn mutate_row(&self, mutations: &RowMutations) -> Result<()> {
        let (_gate, state) = self.writable(&mutations.row)?;
        Self::validate_row_mutations(&state, mutations)?;
        let _lock = self.lock_row(&mutations.row);
        self.mutate_row_locked(&state, mutations)
    }

    /// HBase's check: `operand OP stored` on the newest visible value.
    fn condition_holds(op: CompareOp, operand: &[u8], stored: Option<&[u8]>) -> bool {
        if op == CompareOp::NoOp {
            return false;
        }
        match (operand.is_empty(), stored) {
            (true, None) => op != CompareOp::NotEqual,
            (true, Some(value)) => value.is_empty() == (op != CompareOp::NotEqual),
            (false, None) => false,
            (false, Some(value)) => ordering_holds(op, operand.cmp(value)),
        }
    }

    /// Checks a column and, if the check holds, applies the action; both
    /// under the row lock.
    pub fn check_and_mutate(&self, check: &CheckAndMutate) -> Result<CheckAndMutateResult> {
        let (_gate, state) = self.writable(&check.row)?;
        validate_row(&check.row)?;
        let Condition::Compare {
            family,
            qualifier,
            op,
            operand,
        } = &check.condition;
        Self::family_id(&state, family)?;
        validate_qualifier(qualifier)?;
        let action_row = match &check.action {
            CheckAction::Put(p) => &p.row,
            CheckAction::Delete(d) => &d.row,
            CheckAction::RowMutations(m) => &m.row,
            CheckAction::Increment(i) => &i.row,
            CheckAction::Append(a) => &a.row,
        };
        if *action_row != check.row {
            return Err(Error::RowMismatch {
                expected: check.row.clone(),
                found: action_row.clone(),
            });
        }
        let now = self.services.now_ms();
        // Validate the action fully before taking the lock.
        match &check.action {
            CheckAction::Put(p) => {
                self.prepare_put(&state, p, now)?;
            }
            CheckAction::Delete(d) => Self::validate_delete(&state, d)?,
            CheckAction::RowMutations(m) => Self::validate_row_mutations(&state, m)?,
            CheckAction::Increment(i) => {
                Self::validate_columns(
                    &state,
                    &i.row,
                    i.columns
                        .iter()
                        .map(|(f, q, _)| (f.as_slice(), q.as_slice())),
                )?;
            }
            CheckAction::Append(a) => {
                Self::validate_columns(
                    &state,
                    &a.row,
                    a.columns
                        .iter()
                        .map(|(f, q, _)| (f.as_slice(), q.as_slice())),
                )?;
            }
        }
        let get = Get::new(&check.row)
            .column(family, qualifier)
            .time_range(check.time_min, check.time_max);
        let _lock = self.lock_row(&check.row);
        let current = self.get_in(&state, &get, now)?;
        let stored = current.cells.first().map(|c| c.value.as_slice());
        if !Self::condition_holds(*op, operand, stored) {
            return Ok(CheckAndMutateResult {
                success: false,
                result: None,
            });
        }
        let result = match &check.action {
            CheckAction::Put(p) => {
                let prepared = self.prepare_put(&state, p, self.services.now_ms())?;
                self.commit_and_notify(&state, std::slice::from_ref(&prepared))?;
                None
            }
            CheckAction::Delete(d) => {
                let prepared = self.prepare_delete(&state, d, self.services.now_ms())?;
                self.commit_and_notify(&state, std::slice::from_ref(&prepared))?;
                None
            }
            CheckAction::RowMutations(m) => {
                self.mutate_row_locked(&state, m)?;
                None
            }
            CheckAction::Increment(i) => Some(self.increment_locked(&state, i)?),
            CheckAction::Append(a) => Some(self.append_locked(&state, a)?),
        };
        Ok(CheckAndMutateResult {
            success: true,
            result,
        })
    }

    /// Counts the rows a scan returns, inside the engine: without a filter no
    /// cell is copied. The scan's limit applies; its batch size does not.
    pub fn count(&self, scan: &Scan) -> Result<u64> {
        let state = self.state()?;
        let mut plan = plan_scan(
            &state,
            scan,
            self.services.mvcc.read_point(),
            self.services.now_ms(),
        )?;
        plan.batch = None;
        plan.query.count_only = plan.filter.is_none() && !plan.query.raw;
        let mut n = 0;
        for row in Scanner::new(state, plan)? {
            row?;
            n += 1;
        }
        Ok(n)
    }

    /// Deletes, inside the engine and in one pass, every row the scan
    /// returns (filters included): the whole row when the scan selects no
    /// columns, otherwise the selected families and the selected columns the
    /// row has. Markers get `timestamp` (default: now), so versions written
    /// later with larger timestamps survive. Each row is deleted atomically
    /// and durably per the table's durability; rows are committed in groups
    /// sharing one WAL sync. Returns the number of rows deleted.
    pub fn delete_where(&self, scan: &Scan, timestamp: Option<i64>) -> Result<u64> {
        let state = self.state()?;
        let timestamp = timestamp.unwrap_or(self.services.now_ms());
        validate_timestamp(timestamp)?;
        let mut plan = plan_scan(
            &state,
            scan,
            self.services.mvcc.read_point(),
            self.services.now_ms(),
        )?;
        plan.batch = None;
        let mut pending: Vec<Delete> = Vec::new();
        let mut deleted = 0;
        for row in Scanner::new(state.clone(), plan)? {
            let row = row?;
            let mut delete = Delete::new(&row.row).timestamp(timestamp);
            for (family, qualifiers) in scan.columns.families() {
                match qualifiers {
                    None => delete = delete.family_up_to(family, timestamp),
                    Some(wanted) => {
                        let mut present: Vec<&[u8]> = row
                            .cells
                            .iter()
                            .filter(|c| c.family == family && wanted.contains(&c.qualifier))
                            .map(|c| c.qualifier.as_slice())
                            .collect();
                        present.dedup();
                        for q in present {
                            delete = delete.column_all_versions_up_to(family, q, timestamp);
                        }
                    }
                }
            }
            if scan.columns.is_all() || !delete.entries.is_empty() {
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
    }

    /// Commits deletes (without latest-version entries) sharing one WAL sync.
    fn delete_group(&self, deletes: &[Delete]) -> Result<()> {
        let Some(first) = deletes.first() else {
            return Ok(());
        };
        let (_gate, state) = self.writable(&first.row)?;
        let now = self.services.now_ms();
        let prepared = deletes
            .iter()
            .map(|d| self.prepare_delete(&state, d, now))
            .collect::<Result<Vec<_>>>()?;
        let _locks = self
            .services
            .row_locks
            .lock(self.inner.id, prepared.iter().map(|p| p.row.as_slice()));
        self.commit_and_notify(&state, &prepared)
    }

    /// Reads many rows; the data blocks they need that are not cached are
    /// read in one batch (one io_uring submission) before the rows are
    /// assembled. Results come in the order of `gets`.
    pub fn get_many(&self, gets: &[Get]) -> Result<Vec<RowResult>> {
        let state = self.state()?;
        let now = self.read_now_ms(&state);
        let read_point = self.services.mvcc.read_point();
        let mut wanted: Vec<(Arc<HFileReader>, usize)> = Vec::new();
        // Planned once: the same plans read the rows after the prefetch.
        let mut planned = Vec::with_capacity(gets.len());
        for get in gets {
            let plan = plan_get(&state, get, read_point, now)?;
            let region = Self::region(&state, &get.row)?;
            for family in plan.families.iter() {
                let Some(version) = region.store_version(family.id) else {
                    continue;
                };
                let scope = plan.store_scope(family);
                Store::for_each_single_row_candidate(&version, &scope, |file| {
                    if let Some(ordinal) = file.seek_block(&get.row)? {
                        wanted.push((file.clone(), ordinal));
                    }
                    Ok::<(), Error>(())
                })?;
            }
            planned.push((region, plan));
        }
        let batch: Vec<(&HFileReader, usize)> =
            wanted.iter().map(|(f, o)| (f.as_ref(), *o)).collect();
        // Held until the rows are read: the cache keeps them meanwhile.
        let _held = HFileReader::prefetch(&batch)?;
        gets.iter()
            .zip(&planned)
            .map(|(get, (region, plan))| {
                Ok(read_row(region, plan)?.unwrap_or_else(|| RowResult {
                    row: get.row.clone(),
                    cells: Vec::new(),
                }))
            })
            .collect()
    }

    /// Flushes every region's memstores to HFiles and waits for it.
    pub fn flush(&self) -> Result<()> {
        let state = self.state()?;
        for region in &state.regions {
            self.supervisor.flush(&self.inner, region)?;
        }
        Ok(())
    }

    /// Flushes one region (by id, see [`Table::regions`]).
    pub fn flush_region(&self, region_id: u64) -> Result<()> {
        let state = self.state()?;
        let region = Self::region_by_id(&state, region_id)?;
        self.supervisor.flush(&self.inner, region)
    }

    /// Compacts every region: L0 into L1, then whatever the level sizes ask
    /// for. Runs in the caller's thread.
    pub fn compact(&self) -> Result<()> {
        let state = self.state()?;
        for region in &state.regions {
            self.supervisor.compact_now(&self.inner, region, false)?;
        }
        Ok(())
    }

    /// Rewrites every store of every region into one sorted run at its
    /// deepest level, dropping everything reads can no longer see.
    pub fn major_compact(&self) -> Result<()> {
        let state = self.state()?;
        for region in &state.regions {
            self.supervisor.compact_now(&self.inner, region, true)?;
        }
        Ok(())
    }

    /// Compacts one region (minor or major).
    pub fn compact_region(&self, region_id: u64, major: bool) -> Result<()> {
        let state = self.state()?;
        let region = Self::region_by_id(&state, region_id)?;
        self.supervisor.compact_now(&self.inner, region, major)
    }

    /// Splits regions (HBase `split`): with no key, every region at its
    /// middle key (regions that cannot be cut are left alone); with a key,
    /// the region holding it, at it. Writes to the table wait meanwhile.
    pub fn split(&self, key: Option<&[u8]>) -> Result<()> {
        let state = self.state()?;
        match key {
            Some(key) => {
                let region = Self::region(&state, key)?;
                self.supervisor
                    .split(&self.inner, region, Some(key.to_vec()))?;
            }
            None => {
                for region in &state.regions {
                    self.supervisor.split(&self.inner, region, None)?;
                }
            }
        }
        Ok(())
    }

    /// Splits one region (by id) at `key`, or at its middle key.
    pub fn split_region(&self, region_id: u64, key: Option<&[u8]>) -> Result<()> {
        let state = self.state()?;
        let region = Self::region_by_id(&state, region_id)?;
        self.supervisor
            .split(&self.inner, region, key.map(<[u8]>::to_vec))?;
        Ok(())
    }

    fn region_by_id(state: &TableState, region_id: u64) -> Result<&Arc<Region>> {
        state
            .regions
            .iter()
            .find(|r| r.id() == region_id)
            .ok_or_else(|| Error::RegionNotFound {
                table: state.descriptor.name().to_owned(),
                region_id,
            })
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
    fn put_run(&self, puts: &[&Put]) -> Vec<Result<BatchResult>> {
        let Some(first) = puts.first() else {
            return Vec::new();
        };
        let (_gate, state) = match self.writable(&first.row) {
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
                .lock(self.inner.id, prepared.iter().map(|p| p.row.as_slice()));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_and_mutate_follows_hbase_operand_order() {
        use CompareOp::*;
        // Greater holds when the operand is greater than the stored value.
        assert!(Table::condition_holds(Greater, b"5", Some(b"3")));
        assert!(!Table::condition_holds(Greater, b"3", Some(b"5")));
        assert!(Table::condition_holds(Less, b"3", Some(b"5")));
        assert!(Table::condition_holds(Equal, b"x", Some(b"x")));
        assert!(!Table::condition_holds(Equal, b"x", None));
        // An empty operand matches a missing column or an empty value.
        assert!(Table::condition_holds(Equal, b"", None));
        assert!(Table::condition_holds(Equal, b"", Some(b"")));
        assert!(!Table::condition_holds(Equal, b"", Some(b"v")));
        assert!(!Table::condition_holds(NotEqual, b"", None));
        assert!(Table::condition_holds(NotEqual, b"", Some(b"v")));
    }
}
