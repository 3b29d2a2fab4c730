//! Version resolution: which cells of one row and family a read returns.
//!
//! The rules (`docs/semantics.md`, "Versions" and "Deletes"), applied to the
//! family's cells in store order as they stream by:
//!
//! 1. A delete marker hides only cells written before it (smaller sequence)
//!    whose timestamp it covers: `DeleteFamily` and `DeleteColumn` cover
//!    timestamps `<=` theirs, `DeleteFamilyVersion` and `Delete` exactly
//!    theirs; the family markers cover every column of the family.
//! 2. Per column, the newest `VERSIONS` distinct put timestamps form the
//!    window; at one timestamp the put with the highest sequence is the
//!    version. A hidden version still takes its place in the window.
//! 3. Of the window, hidden versions, versions older than the TTL (unless
//!    among the newest `MIN_VERSIONS`) and versions outside the query's time
//!    range drop out; then the query's max versions apply.
//! 4. Under `KEEP_DELETED_CELLS` a marker hides only from reads whose time
//!    range holds its timestamp ([`FamilyRules::marker_applies`]); a marker
//!    that does not apply is passed over as if absent.
//!
//! Streaming works because of the store order: within a column, markers at
//! timestamps `>=` a put's come before it, and family markers live in the
//! empty qualifier, which comes before every other column of the row and,
//! for the empty qualifier itself, sort before the puts they can hide.

use crate::cell::{CellKind, CellRef, TimeRange};
use crate::ops::ColumnSet;
pub(crate) use crate::schema::FamilyRules;
use smallvec::SmallVec;

/// Per-query rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QueryRules {
    pub(crate) time_range: TimeRange,
    pub(crate) max_versions: u32,
    pub(crate) raw: bool,
    /// "Now" for TTL, in milliseconds.
    pub(crate) now_ms: i64,
}

/// Family markers of each kind a [`Resolver`] keeps without allocating.
const INLINE_FAMILY_MARKERS: usize = 4;

/// Resolves the cells of one (row, family).
pub(crate) struct Resolver<'a> {
    columns: Option<&'a ColumnSet>,
    rules: FamilyRules,
    query: QueryRules,
    /// Cells with a timestamp below this are expired.
    oldest_unexpired_ms: i64,
    /// `(timestamp, sequence)` of DeleteFamily markers seen in this row
    /// (inline: a row rarely has more than a few, and a get of a deleted
    /// row should not allocate for them).
    family_range_markers: SmallVec<[(i64, u64); INLINE_FAMILY_MARKERS]>,
    /// `(timestamp, sequence)` of DeleteFamilyVersion markers seen.
    family_point_markers: SmallVec<[(i64, u64); INLINE_FAMILY_MARKERS]>,
    column: Column,
}

/// State of the column being resolved.
#[derive(Default)]
struct Column {
    started: bool,
    qualifier: Vec<u8>,
    /// Highest sequence of the DeleteColumn markers seen in the column (all
    /// of them have timestamps >= the current cell's, by store order).
    range_marker_sequence: u64,
    /// Timestamp and highest sequence of Delete markers at that timestamp.
    point_marker: Option<(i64, u64)>,
    last_put_timestamp: Option<i64>,
    window_used: u32,
    returned: u32,
}

impl<'a> Resolver<'a> {
    /// A resolver for one row; `qualifier_buffer` is the buffer a previous
    /// row's resolver gave back ([`Resolver::into_buffer`]), so that a scan
    /// does not allocate a column's qualifier per row.
    pub(crate) fn new(
        columns: Option<&'a ColumnSet>,
        rules: FamilyRules,
        query: QueryRules,
        qualifier_buffer: Vec<u8>,
    ) -> Self {
        let oldest_unexpired_ms = rules.oldest_unexpired_ms(query.now_ms);
        Resolver {
            columns,
            rules,
            query,
            oldest_unexpired_ms,
            family_range_markers: SmallVec::new(),
            family_point_markers: SmallVec::new(),
            column: Column {
                qualifier: qualifier_buffer,
                ..Column::default()
            },
        }
    }

    /// Whether a read returns `cell` when it is the only cell of its row
    /// and family (a store after compaction holds most rows so): a put the
    /// columns select, unexpired and inside the query's time range. No
    /// marker can hide it, and it fills one place of any version window.
    /// Not for raw reads, which also return markers. The same answer as a
    /// fresh resolver's [`Resolver::push`], without building one (a block
    /// run asks it for every row).
    #[inline]
    pub(crate) fn lone_cell_returned(
        columns: Option<&ColumnSet>,
        rules: FamilyRules,
        query: QueryRules,
        cell: &CellRef<'_>,
    ) -> bool {
        debug_assert!(!query.raw);
        let oldest_unexpired_ms = rules.oldest_unexpired_ms(query.now_ms);
        cell.kind == CellKind::Put
            && rules.max_versions > 0
            && query.max_versions > 0
            && columns.is_none_or(|set| set.contains(cell.qualifier))
            && !rules.expired(1, cell.timestamp, oldest_unexpired_ms)
            && query.time_range.contains(cell.timestamp)
    }

    /// The qualifier buffer, for the next row's resolver.
    pub(crate) fn into_buffer(self) -> Vec<u8> {
        self.column.qualifier
    }

    fn selected(&self, qualifier: &[u8]) -> bool {
        self.columns.is_none_or(|set| set.contains(qualifier))
    }

    fn hidden(&self, timestamp: i64, sequence: u64) -> bool {
        let c = &self.column;
        c.range_marker_sequence > sequence
            || c.point_marker
                .is_some_and(|(ts, seq)| ts == timestamp && seq > sequence)
            || self
                .family_range_markers
                .iter()
                .any(|&(ts, seq)| ts >= timestamp && seq > sequence)
            || self
                .family_point_markers
                .iter()
                .any(|&(ts, seq)| ts == timestamp && seq > sequence)
    }

    /// The qualifier of the column the last pushed cell belongs to.
    pub(crate) fn column_qualifier(&self) -> &[u8] {
        &self.column.qualifier
    }

    /// Feeds the next cell of the row and family (in store order, already
    /// limited to the read point); true when the read returns it.
    pub(crate) fn push(&mut self, cell: &CellRef<'_>) -> bool {
        if !self.column.started || self.column.qualifier != cell.qualifier {
            // Reuses the qualifier's buffer: no allocation per column once
            // the resolver has seen a qualifier as long.
            let mut qualifier = std::mem::take(&mut self.column.qualifier);
            qualifier.clear();
            qualifier.extend_from_slice(cell.qualifier);
            self.column = Column {
                started: true,
                qualifier,
                ..Column::default()
            };
        }
        if self.query.raw {
            return self.push_raw(cell);
        }
        let (ts, seq) = (cell.timestamp, cell.sequence);
        if cell.kind.is_delete()
            && !self.rules.marker_applies(
                ts,
                self.query.time_range.contains(ts),
                self.oldest_unexpired_ms,
            )
        {
            return false;
        }
        match cell.kind {
            CellKind::DeleteFamily => {
                self.family_range_markers.push((ts, seq));
                false
            }
            CellKind::DeleteFamilyVersion => {
                self.family_point_markers.push((ts, seq));
                false
            }
            CellKind::DeleteColumn => {
                let c = &mut self.column;
                c.range_marker_sequence = c.range_marker_sequence.max(seq);
                false
            }
            CellKind::Delete => {
                let c = &mut self.column;
                c.point_marker = match c.point_marker {
                    Some((marker_ts, marker_seq)) if marker_ts == ts => {
                        Some((ts, marker_seq.max(seq)))
                    }
                    _ => Some((ts, seq)),
                };
                false
            }
            CellKind::Put => {
                if self.column.last_put_timestamp == Some(ts) {
                    // An older write at the same timestamp: the newer one is the version.
                    return false;
                }
                self.column.last_put_timestamp = Some(ts);
                self.column.window_used += 1;
                let place = self.column.window_used;
                let visible = place <= self.rules.max_versions
                    && self.selected(cell.qualifier)
                    && !self.hidden(ts, seq)
                    && !self.rules.expired(place, ts, self.oldest_unexpired_ms)
                    && self.query.time_range.contains(ts)
                    && self.column.returned < self.query.max_versions;
                if visible {
                    self.column.returned += 1;
                }
                visible
            }
        }
    }

    /// True when no later cell of the current column (the one the last
    /// pushed cell belongs to) can change what the read returns, so the
    /// reader may jump to the next column: the column's window is full, or
    /// the query has its versions of it, or the column is not selected.
    /// In the empty qualifier only when no source holds family delete
    /// markers (`family_markers` false): they live there, and a later one
    /// may hide cells of every other column. Never for raw reads, which
    /// return markers without limit.
    pub(crate) fn column_done(&self, family_markers: bool) -> bool {
        let c = &self.column;
        !self.query.raw
            && c.started
            && (!c.qualifier.is_empty() || !family_markers)
            && (c.window_used >= self.rules.max_versions
                || c.returned >= self.query.max_versions
                || !self.selected(&c.qualifier))
    }

    /// Raw reads return the stored cells themselves: markers (family markers
    /// whenever the family is read), hidden and surplus versions, limited
    /// only by the selected columns, the time range and max versions of puts.
    fn push_raw(&mut self, cell: &CellRef<'_>) -> bool {
        let wanted = (cell.kind.is_family_marker() || self.selected(cell.qualifier))
            && self.query.time_range.contains(cell.timestamp);
        if !wanted {
            return false;
        }
        if cell.kind == CellKind::Put {
            if self.column.returned >= self.query.max_versions {
                return false;
            }
            self.column.returned += 1;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn c(q: &'static str, ts: i64, kind: CellKind, seq: u64, v: &'static str) -> CellRef<'static> {
        CellRef {
            row: b"r",
            qualifier: q.as_bytes(),
            timestamp: ts,
            kind,
            sequence: seq,
            value: v.as_bytes(),
        }
    }

    fn resolve(
        cells: &mut [CellRef<'static>],
        window: u32,
        query_versions: u32,
    ) -> Vec<(String, i64, String)> {
        cells.sort_by(|a, b| crate::cell::compare_keys(a.tuple(), b.tuple()));
        let query = QueryRules {
            time_range: TimeRange::ALL,
            max_versions: query_versions,
            raw: false,
            now_ms: 1_000,
        };
        let rules = FamilyRules {
            max_versions: window,
            ttl_ms: None,
            min_versions: 0,
            keep_deleted_cells: crate::options::KeepDeletedCells::False,
        };
        let mut r = Resolver::new(None, rules, query, Vec::new());
        cells
            .iter()
            .filter(|cell| r.push(cell))
            .map(|c| {
                (
                    String::from_utf8(c.qualifier.to_vec()).unwrap(),
                    c.timestamp,
                    String::from_utf8(c.value.to_vec()).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn a_marker_hides_only_older_writes() {
        use CellKind::*;
        let mut cells = [
            c("a", 10, Put, 1, "old"),
            c("a", 20, DeleteColumn, 2, ""),
            c("a", 5, Put, 3, "later-but-older-ts"),
        ];
        assert_eq!(
            resolve(&mut cells, 3, 3),
            [("a".into(), 5, "later-but-older-ts".into())]
        );
    }

    #[test]
    fn hidden_versions_keep_their_place_in_the_window() {
        use CellKind::*;
        let mut cells = [
            c("a", 3, Put, 3, "v3"),
            c("a", 2, Put, 2, "v2"),
            c("a", 1, Put, 1, "v1"),
            c("a", 3, Delete, 4, ""),
        ];
        // Window of 2 = timestamps {3, 2}; 3 is hidden, so only v2 remains; v1 is outside.
        assert_eq!(resolve(&mut cells, 2, 10), [("a".into(), 2, "v2".into())]);
    }

    #[test]
    fn family_markers_cover_every_column_including_the_empty_one() {
        use CellKind::*;
        let mut cells = [
            c("", 5, Put, 1, "empty-q"),
            c("", 50, Put, 3, "empty-q-new"),
            c("", 10, DeleteFamily, 2, ""),
            c("b", 7, Put, 1, "b7"),
            c("b", 12, Put, 1, "b12"),
            c("c", 10, Put, 1, "c10"),
            c("c", 9, Put, 1, "c9"),
            c("", 9, DeleteFamilyVersion, 2, ""),
        ];
        assert_eq!(
            resolve(&mut cells, 5, 5),
            [
                ("".into(), 50, "empty-q-new".into()),
                ("b".into(), 12, "b12".into())
            ]
        );
    }

    #[test]
    fn same_timestamp_newest_write_wins() {
        use CellKind::*;
        let mut cells = [c("a", 5, Put, 1, "first"), c("a", 5, Put, 2, "second")];
        assert_eq!(
            resolve(&mut cells, 3, 3),
            [("a".into(), 5, "second".into())]
        );
    }

    proptest::proptest! {
        /// A lone cell is returned exactly when a fresh resolver returns it.
        #[test]
        fn a_lone_cell_resolves_as_a_fresh_resolver_resolves_it(
            kind in proptest::sample::select(vec![CellKind::Put, CellKind::Delete, CellKind::DeleteColumn, CellKind::DeleteFamily, CellKind::DeleteFamilyVersion]),
            qualifier in proptest::sample::select(vec!["", "a", "b"]),
            timestamp in 0i64..20,
            ttl in proptest::option::of(0u64..15),
            range in (0i64..20, 0i64..25),
            selected in proptest::option::of(proptest::sample::select(vec!["a", "b"])),
            versions in 1u32..3,
            min_versions in 0u32..2,
            keep_deleted_cells in proptest::sample::select(crate::options::KeepDeletedCells::ALL.to_vec()),
        ) {
            let cell = c(qualifier, timestamp, kind, 7, "v");
            let columns: Option<ColumnSet> = selected.map(|q| {
                ColumnSet::from(&[q.as_bytes().to_vec()].into_iter().collect::<BTreeSet<_>>())
            });
            let rules = FamilyRules {
                max_versions: versions,
                ttl_ms: ttl,
                min_versions: min_versions.min(versions),
                keep_deleted_cells,
            };
            let (min, max) = (range.0.min(range.1), range.0.max(range.1) + 1);
            let query = QueryRules {
                time_range: TimeRange::new(min, max).unwrap(),
                max_versions: versions,
                raw: false,
                now_ms: 20,
            };
            let mut fresh = Resolver::new(columns.as_ref(), rules, query, Vec::new());
            proptest::prop_assert_eq!(
                Resolver::lone_cell_returned(columns.as_ref(), rules, query, &cell),
                fresh.push(&cell)
            );
        }
    }
}
