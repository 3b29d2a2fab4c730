//! Turning puts and deletes into prepared rows: every check a mutation must
//! pass (families, qualifiers, timestamps, value sizes) before anything of
//! it is written, and its cells grouped by store.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use smallvec::{SmallVec, smallvec};

use super::Table;
use crate::catalog::TableState;
use crate::cell::{CellKind, validate_qualifier, validate_row, validate_timestamp};
use crate::error::{Error, Result};
use crate::ops::{Delete, DeleteEntry, Get, Put};
use crate::region::Region;
use crate::write::{PreparedCell, PreparedFamily, PreparedRow};

pub(super) fn unknown_family(state: &TableState, family: &[u8]) -> Error {
    Error::UnknownFamily {
        table: state.descriptor.name().to_owned(),
        family: String::from_utf8_lossy(family).into_owned(),
    }
}

/// The store of `family_id` in `region`: it exists unless the family was
/// dropped concurrently.
fn store_of(region: &Region, family_id: u32) -> Result<Arc<crate::store::Store>> {
    region
        .store(family_id)
        .ok_or(Error::FamilyDropped { family_id })
}

/// Collects cells per family, keeping the last of identical
/// (family, qualifier, timestamp, kind) keys, as HBase does within one mutation.
#[derive(Default)]
pub(super) struct CellsByFamily<'a> {
    /// Inline for the usual mutation: one family, one cell.
    families: SmallVec<[(u32, SmallVec<[PreparedCell<'a>; 1]>); 1]>,
}

impl<'a> CellsByFamily<'a> {
    pub(super) fn push(&mut self, family_id: u32, cell: PreparedCell<'a>) {
        match self.families.iter_mut().find(|(id, _)| *id == family_id) {
            Some((_, cells)) => cells.push(cell),
            None => self.families.push((family_id, smallvec![cell])),
        }
    }

    pub(super) fn into_prepared(
        self,
        region: &'a Arc<Region>,
        row: &'a [u8],
        durability: crate::Durability,
    ) -> Result<PreparedRow<'a>> {
        let mut families = SmallVec::with_capacity(self.families.len());
        for (family_id, mut cells) in self.families {
            if cells.len() > 1 {
                let mut seen = HashSet::new();
                cells.reverse();
                cells.retain(|c| seen.insert((c.qualifier.clone(), c.timestamp, c.kind)));
                cells.reverse();
            }
            let store = store_of(region, family_id)?;
            families.push(PreparedFamily { store, cells });
        }
        debug_assert!(
            region.contains(row),
            "rows are routed to the region holding them"
        );
        let prepared = PreparedRow {
            region,
            row,
            families,
            durability,
        };
        prepared.check_size()?;
        Ok(prepared)
    }
}

impl Table {
    pub(super) fn check_value(state: &TableState, value: &[u8]) -> Result<()> {
        let max = state.descriptor.get_max_value_bytes();
        if value.len() > max {
            return Err(Error::ValueTooLarge {
                len: value.len(),
                max,
            });
        }
        Ok(())
    }

    pub(super) fn family_id(state: &TableState, family: &[u8]) -> Result<u32> {
        state
            .family(family)
            .map(|(id, _)| id)
            .ok_or_else(|| unknown_family(state, family))
    }

    pub(super) fn prepare_put<'a>(
        &self,
        state: &'a TableState,
        put: &'a Put,
        now_ms: i64,
    ) -> Result<PreparedRow<'a>> {
        validate_row(put.row())?;
        if put.is_empty() {
            return Err(Error::EmptyMutation);
        }
        let region = Self::region(state, put.row())?;
        let mut cells = CellsByFamily::default();
        Self::add_put_cells(state, put, now_ms, &mut cells)?;
        let durability = put.durability.unwrap_or(state.descriptor.get_durability());
        cells.into_prepared(region, put.row(), durability)
    }

    /// Prepares a put of one cell of borrowed bytes at the current time:
    /// what [`Table::prepare_put`] makes of
    /// `Put::new(row).add(family, qualifier, value)`, with the same checks in
    /// the same order, without the `Put`'s copy of the bytes.
    pub(super) fn prepare_value<'a>(
        &self,
        state: &'a TableState,
        row: &'a [u8],
        family: &[u8],
        qualifier: &'a [u8],
        value: &'a [u8],
        now_ms: i64,
    ) -> Result<PreparedRow<'a>> {
        validate_row(row)?;
        let region = Self::region(state, row)?;
        let family_id = Self::family_id(state, family)?;
        validate_qualifier(qualifier)?;
        validate_timestamp(now_ms)?;
        Self::check_value(state, value)?;
        // One cell needs none of `CellsByFamily`'s grouping and
        // de-duplication (they were a tenth of a small put's time on the
        // writing thread): the row is built as `into_prepared` builds it.
        let store = store_of(region, family_id)?;
        let prepared = PreparedRow {
            region,
            row,
            families: smallvec![PreparedFamily {
                store,
                cells: smallvec![PreparedCell {
                    qualifier: Cow::Borrowed(qualifier),
                    timestamp: now_ms,
                    kind: CellKind::Put,
                    value: Cow::Borrowed(value),
                }],
            }],
            durability: state.descriptor.get_durability(),
        };
        prepared.check_size()?;
        Ok(prepared)
    }

    pub(super) fn add_put_cells<'a>(
        state: &TableState,
        put: &'a Put,
        now_ms: i64,
        out: &mut CellsByFamily<'a>,
    ) -> Result<()> {
        for cell in put.cells() {
            let family_id = Self::family_id(state, cell.family)?;
            validate_qualifier(cell.qualifier)?;
            let timestamp = cell.timestamp.or(put.timestamp).unwrap_or(now_ms);
            validate_timestamp(timestamp)?;
            Self::check_value(state, cell.value)?;
            out.push(
                family_id,
                PreparedCell {
                    qualifier: Cow::Borrowed(cell.qualifier),
                    timestamp,
                    kind: CellKind::Put,
                    value: Cow::Borrowed(cell.value),
                },
            );
        }
        Ok(())
    }

    /// Checks a delete's input without reading anything.
    pub(super) fn validate_delete(state: &TableState, delete: &Delete) -> Result<()> {
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
    pub(super) fn add_delete_cells<'a>(
        &self,
        state: &'a TableState,
        delete: &'a Delete,
        now_ms: i64,
        out: &mut CellsByFamily<'a>,
    ) -> Result<()> {
        let default_ts = delete.timestamp.unwrap_or(now_ms);
        let marker = |qualifier: &'a [u8], timestamp: i64, kind: CellKind| PreparedCell {
            qualifier: Cow::Borrowed(qualifier),
            timestamp,
            kind,
            value: Cow::Borrowed(&[]),
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

    pub(super) fn prepare_delete<'a>(
        &self,
        state: &'a TableState,
        delete: &'a Delete,
        now_ms: i64,
    ) -> Result<PreparedRow<'a>> {
        let region = Self::region(state, &delete.row)?;
        let mut cells = CellsByFamily::default();
        self.add_delete_cells(state, delete, now_ms, &mut cells)?;
        let durability = delete
            .durability
            .unwrap_or(state.descriptor.get_durability());
        cells.into_prepared(region, &delete.row, durability)
    }
}
