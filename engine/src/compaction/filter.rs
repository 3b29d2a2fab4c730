//! The drop rules of compaction, applied one row at a time (see the module
//! above for what is dropped and why).

use crate::cell::{CellKind, CellRef};
use crate::options::FamilyDescriptor;

/// What happens to one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Keep,
    /// Keep the cell without its value (a hidden version holding its place).
    Ghost,
    Drop,
}

/// A marker seen in the row: where it is, its kind, timestamp, sequence.
#[derive(Debug, Clone, Copy)]
struct Marker {
    index: usize,
    kind: CellKind,
    timestamp: i64,
    sequence: u64,
}

impl Marker {
    fn hides(&self, timestamp: i64, sequence: u64) -> bool {
        self.sequence > sequence
            && match self.kind {
                CellKind::DeleteFamily | CellKind::DeleteColumn => timestamp <= self.timestamp,
                CellKind::DeleteFamilyVersion | CellKind::Delete => timestamp == self.timestamp,
                CellKind::Put => false,
            }
    }
}

/// The drop rules, applied one row at a time.
pub(crate) struct CompactionFilter {
    window: u32,
    /// Puts with a timestamp below this are expired.
    oldest_unexpired_ms: i64,
    bottommost: bool,
}

impl CompactionFilter {
    pub(crate) fn new(family: &FamilyDescriptor, now_ms: i64, bottommost: bool) -> Self {
        CompactionFilter {
            window: family.get_max_versions(),
            oldest_unexpired_ms: family.oldest_unexpired_ms(now_ms),
            bottommost,
        }
    }

    /// Decides every cell of one row (cells in store order). With
    /// `keep_markers`, markers are kept whatever the level.
    pub(crate) fn decide_row(&self, cells: &[CellRef<'_>], keep_markers: bool) -> Vec<Decision> {
        let may_drop_markers = self.bottommost && !keep_markers;
        let mut decisions = vec![Decision::Keep; cells.len()];
        let mut needed = vec![false; cells.len()];
        let mut family_markers: Vec<Marker> = Vec::new();
        let mut column_markers: Vec<Marker> = Vec::new();
        let mut column: Option<&[u8]> = None;
        let mut last_put_timestamp: Option<i64> = None;
        let mut window_used = 0u32;
        for (index, cell) in cells.iter().enumerate() {
            if column != Some(cell.qualifier) {
                column = Some(cell.qualifier);
                column_markers.clear();
                last_put_timestamp = None;
                window_used = 0;
            }
            let marker = Marker {
                index,
                kind: cell.kind,
                timestamp: cell.timestamp,
                sequence: cell.sequence,
            };
            match cell.kind {
                CellKind::DeleteFamily | CellKind::DeleteFamilyVersion => {
                    family_markers.push(marker)
                }
                CellKind::DeleteColumn | CellKind::Delete => column_markers.push(marker),
                CellKind::Put => {
                    let (ts, seq) = (cell.timestamp, cell.sequence);
                    if last_put_timestamp == Some(ts) {
                        decisions[index] = Decision::Drop;
                        continue;
                    }
                    last_put_timestamp = Some(ts);
                    window_used += 1;
                    if window_used > self.window || ts < self.oldest_unexpired_ms {
                        decisions[index] = Decision::Drop;
                        continue;
                    }
                    let mut hidden = false;
                    for m in family_markers.iter().chain(&column_markers) {
                        if m.hides(ts, seq) {
                            hidden = true;
                            needed[m.index] = true;
                        }
                    }
                    if hidden {
                        decisions[index] = Decision::Ghost;
                    }
                }
            }
        }
        if may_drop_markers {
            for (index, cell) in cells.iter().enumerate() {
                if cell.kind.is_delete() && !needed[index] {
                    decisions[index] = Decision::Drop;
                }
            }
        }
        decisions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(q: &'static str, ts: i64, seq: u64) -> CellRef<'static> {
        CellRef {
            row: b"r",
            qualifier: q.as_bytes(),
            timestamp: ts,
            kind: CellKind::Put,
            sequence: seq,
            value: b"v",
        }
    }

    fn marker(q: &'static str, ts: i64, kind: CellKind, seq: u64) -> CellRef<'static> {
        CellRef {
            value: b"",
            kind,
            ..put(q, ts, seq)
        }
    }

    #[test]
    fn drop_rules() {
        use Decision::*;
        let family = FamilyDescriptor::new("f").max_versions(2);
        let cells = [
            marker("a", 9, CellKind::Delete, 10),
            put("a", 9, 5),
            put("a", 9, 4),
            put("a", 8, 3),
            put("a", 7, 2),
            marker("b", 5, CellKind::DeleteColumn, 10),
            put("b", 4, 11),
        ];
        let upper = CompactionFilter::new(&family, 1000, false);
        assert_eq!(
            upper.decide_row(&cells, false),
            [Keep, Ghost, Drop, Keep, Drop, Keep, Keep],
            "above the bottom: ghosts, same-ts and out-of-window drops, markers kept"
        );
        let bottom = CompactionFilter::new(&family, 1000, true);
        assert_eq!(
            bottom.decide_row(&cells, false),
            [Keep, Ghost, Drop, Keep, Drop, Drop, Keep],
            "at the bottom a marker stays only while it hides a ghost"
        );
        assert_eq!(
            bottom.decide_row(&cells, true)[5],
            Keep,
            "an overflowing row keeps its markers"
        );
        let ttl = FamilyDescriptor::new("f")
            .max_versions(5)
            .ttl(std::time::Duration::from_millis(100));
        let expiring = CompactionFilter::new(&ttl, 1000, false);
        assert_eq!(
            expiring.decide_row(&[put("b", 950, 1), put("b", 899, 1)], false),
            [Keep, Drop]
        );
    }

    #[test]
    fn family_markers_hiding_ghosts_survive_the_bottom() {
        use Decision::*;
        let family = FamilyDescriptor::new("f").max_versions(2);
        let cells = [
            marker("", 20, CellKind::DeleteFamily, 2),
            put("x", 20, 1),
            put("x", 0, 3),
        ];
        let bottom = CompactionFilter::new(&family, 1000, true);
        assert_eq!(bottom.decide_row(&cells, false), [Keep, Ghost, Keep]);
    }
}
