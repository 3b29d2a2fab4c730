//! Atomic row operations: increment, append, mutate-row and
//! check-and-mutate, each reading and writing its row under the row lock.

use std::borrow::Cow;
use std::collections::HashMap;

use super::Table;
use super::mutation::CellsByFamily;
use crate::catalog::TableState;
use crate::cell::{Cell, CellKind, RowResult, validate_qualifier, validate_row};
use crate::error::{Error, Result};
use crate::ops::{
    Append, CheckAction, CheckAndMutate, CheckAndMutateResult, CompareOp, Condition, Get,
    Increment, Mutation, RowMutations,
};
use crate::write::{PreparedCell, check_together_size, commit_together};

/// A column as (family, qualifier).
type ColumnKey = (Vec<u8>, Vec<u8>);
/// The newest value of a column and its timestamp, if it has one.
type StoredValue = Option<(Vec<u8>, i64)>;

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

impl Table {
    pub(super) fn validate_columns<'a>(
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
    pub(super) fn read_columns(
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
    pub(super) fn write_new_values(
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
                    qualifier: Cow::Borrowed(qualifier),
                    timestamp,
                    kind: CellKind::Put,
                    value: Cow::Owned(value.clone()),
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
    pub(super) fn merge_columns<T: Clone>(
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

    pub(super) fn increment_locked(
        &self,
        state: &TableState,
        increment: &Increment,
    ) -> Result<RowResult> {
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
        let columns = increment.columns.iter().map(|(f, q, _)| (f, q));
        self.update_columns_locked(&increment.row, columns, |state| {
            self.increment_locked(state, increment)
        })
    }

    /// What increment and append share: takes the split gate and the
    /// table's state, checks the row and `columns` (family, qualifier),
    /// then runs `update` under the row's lock.
    fn update_columns_locked<'c>(
        &self,
        row: &[u8],
        columns: impl Iterator<Item = (&'c Vec<u8>, &'c Vec<u8>)>,
        update: impl FnOnce(&TableState) -> Result<RowResult>,
    ) -> Result<RowResult> {
        let (_gate, state) = self.writable(row)?;
        let columns = columns.map(|(family, qualifier)| (family.as_slice(), qualifier.as_slice()));
        Self::validate_columns(&state, row, columns)?;
        let _lock = self.lock_row(row);
        update(&state)
    }

    pub(super) fn append_locked(&self, state: &TableState, append: &Append) -> Result<RowResult> {
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
        let columns = append.columns.iter().map(|(f, q, _)| (f, q));
        self.update_columns_locked(&append.row, columns, |state| {
            self.append_locked(state, append)
        })
    }

    pub(super) fn validate_row_mutations(
        state: &TableState,
        mutations: &RowMutations,
    ) -> Result<()> {
        validate_row(&mutations.row)?;
        if mutations.mutations.is_empty() {
            return Err(Error::EmptyMutation);
        }
        for m in &mutations.mutations {
            let row = match m {
                Mutation::Put(p) => p.row(),
                Mutation::Delete(d) => d.row.as_slice(),
            };
            if *row != *mutations.row {
                return Err(Error::RowMismatch {
                    expected: mutations.row.clone(),
                    found: row.to_vec(),
                });
            }
            if let Mutation::Delete(d) = m {
                Self::validate_delete(state, d)?;
            }
        }
        Ok(())
    }

    pub(super) fn mutate_row_locked(
        &self,
        state: &TableState,
        mutations: &RowMutations,
    ) -> Result<()> {
        let now = self.services.now_ms();
        let region = Self::region(state, &mutations.row)?;
        let mut cells = CellsByFamily::default();
        for m in &mutations.mutations {
            match m {
                Mutation::Put(put) => {
                    if put.is_empty() {
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

    /// Applies puts and deletes on several rows of one region atomically
    /// (HBase's `MultiRowMutationEndpoint.mutateRows`): all of them or none
    /// are applied, and readers see all of them or none, because they share
    /// one sequence number and one WAL record. Within a row the mutations
    /// apply in order, as in [`Table::mutate_row`]: a delete never hides a
    /// put of the same call. The call is as durable as the strongest
    /// durability any of its puts and deletes asks for (the table's when none
    /// names one).
    ///
    /// Rows in more than one region fail with [`Error::RowsSpanRegions`],
    /// an unknown family with [`Error::UnknownFamily`], an empty list with
    /// [`Error::EmptyMutation`]; nothing is applied then.
    pub fn mutate_rows(&self, mutations: &[Mutation]) -> Result<()> {
        let first_row = mutations
            .first()
            .map(Mutation::row)
            .ok_or(Error::EmptyMutation)?;
        validate_row(first_row)?;
        let (_gate, state) = self.writable(first_row)?;
        let region = Self::region(&state, first_row)?;
        // The rows in first-seen order, each with its mutations in order
        // (`index` finds a row's place without a search per mutation).
        let mut rows: Vec<(&[u8], Vec<&Mutation>)> = Vec::new();
        let mut index: HashMap<&[u8], usize> = HashMap::with_capacity(mutations.len());
        let mut asked = None;
        for mutation in mutations {
            let row = mutation.row();
            validate_row(row)?;
            if !region.contains(row) {
                return Err(Error::RowsSpanRegions {
                    table: state.descriptor.name().to_owned(),
                    first_row: first_row.to_vec(),
                    other_row: row.to_vec(),
                    region_end: region.end().to_vec(),
                });
            }
            match mutation {
                Mutation::Put(put) if put.is_empty() => return Err(Error::EmptyMutation),
                Mutation::Put(put) => {
                    for cell in put.cells() {
                        Self::family_id(&state, cell.family)?;
                    }
                }
                Mutation::Delete(delete) => Self::validate_delete(&state, delete)?,
            }
            asked = asked.max(mutation.durability());
            match index.get(row).and_then(|&at| rows.get_mut(at)) {
                Some((_, list)) => list.push(mutation),
                None => {
                    index.insert(row, rows.len());
                    rows.push((row, vec![mutation]));
                }
            }
        }
        // One WAL record carries every row, so they share one durability.
        let durability = asked.unwrap_or(state.descriptor.get_durability());
        let _locks = self
            .services
            .row_locks
            .lock(self.inner.id, rows.iter().map(|(row, _)| *row));
        let now = self.services.now_ms();
        let mut prepared = Vec::with_capacity(rows.len());
        for (row, list) in &rows {
            let mut cells = CellsByFamily::default();
            for mutation in list {
                match mutation {
                    Mutation::Put(put) => Self::add_put_cells(&state, put, now, &mut cells)?,
                    Mutation::Delete(delete) => {
                        self.add_delete_cells(&state, delete, now, &mut cells)?
                    }
                }
            }
            prepared.push(cells.into_prepared(region, row, durability)?);
        }
        check_together_size(&prepared)?;
        commit_together(
            &self.services,
            &prepared,
            self.active_memstore_limit(&state),
        )?;
        self.notify_written(&state, &prepared);
        Ok(())
    }

    /// HBase's check: `operand OP stored` on the newest visible value.
    pub(super) fn condition_holds(op: CompareOp, operand: &[u8], stored: Option<&[u8]>) -> bool {
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
        // What the check reads: the column, the row through the filter, or
        // the whole row.
        let get = match &check.condition {
            Condition::Compare {
                family, qualifier, ..
            } => {
                Self::family_id(&state, family)?;
                validate_qualifier(qualifier)?;
                Get::new(&check.row).column(family, qualifier)
            }
            Condition::Filter(filter) => Get::new(&check.row).filter(filter.clone()),
            Condition::Row { .. } => Get::new(&check.row),
        }
        .time_range(check.time_min, check.time_max);
        let action_row = match &check.action {
            CheckAction::Put(p) => p.row(),
            CheckAction::Delete(d) => d.row.as_slice(),
            CheckAction::RowMutations(m) => m.row.as_slice(),
            CheckAction::Increment(i) => i.row.as_slice(),
            CheckAction::Append(a) => a.row.as_slice(),
        };
        if *action_row != *check.row {
            return Err(Error::RowMismatch {
                expected: check.row.clone(),
                found: action_row.to_vec(),
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
        let _lock = self.lock_row(&check.row);
        let current = self.get_in(&state, &get, now)?;
        let holds = match &check.condition {
            Condition::Compare { op, operand, .. } => {
                let stored = current.cells.first().map(|c| c.value.as_slice());
                Self::condition_holds(*op, operand, stored)
            }
            // HBase: the filter matches when the filtered get returns a cell.
            Condition::Filter(_) => !current.cells.is_empty(),
            Condition::Row { exists } => current.cells.is_empty() != *exists,
        };
        if !holds {
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
