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

impl Decision {
    /// How much of the cell the decision keeps (Drop < Ghost < Keep).
    fn rank(self) -> u8 {
        match self {
            Decision::Drop => 0,
            Decision::Ghost => 1,
            Decision::Keep => 2,
        }
    }
}

/// The drop rules, applied one row at a time.
pub(crate) struct CompactionFilter {
    window: u32,
    /// Puts with a timestamp below this are expired.
    oldest_unexpired_ms: i64,
    bottommost: bool,
    /// The read points of the live read snapshots, ascending: each is a
    /// view of the data that must read the same after the compaction.
    snapshots: Vec<u64>,
}

impl CompactionFilter {
    /// The rules for `family`, judging expiry at `now_ms`, keeping what
    /// readers at the read points `snapshots` (ascending) can read.
    pub(crate) fn new(
        family: &FamilyDescriptor,
        now_ms: i64,
        bottommost: bool,
        snapshots: Vec<u64>,
    ) -> Self {
        CompactionFilter {
            window: family.get_max_versions(),
            oldest_unexpired_ms: family.oldest_unexpired_ms(now_ms),
            bottommost,
            snapshots,
        }
    }

    /// Decides every cell of one row (cells in store order). With
    /// `keep_markers`, markers are kept whatever the level.
    ///
    /// With live read snapshots the rules run once per view, as RocksDB
    /// keeps a version per snapshot stripe: the latest view (every cell)
    /// and each snapshot's (the cells with a sequence at most its read
    /// point), and a cell keeps the most any view gives it (Keep over Ghost
    /// over Drop). A cell one view would drop but another keeps does not
    /// change the first view's reads: what made the first view drop it (a
    /// newer put at its timestamp, the newer puts filling the version
    /// window, expiry, a marker hiding it) is kept for that view too.
    pub(crate) fn decide_row(&self, cells: &[CellRef<'_>], keep_markers: bool) -> Vec<Decision> {
        let mut decisions = self.decide_view(cells, keep_markers, u64::MAX);
        let newest = cells.iter().map(|c| c.sequence).max().unwrap_or(0);
        let oldest = cells.iter().map(|c| c.sequence).min().unwrap_or(0);
        for &snapshot in &self.snapshots {
            if snapshot >= newest {
                // This view and every later one see all of the row.
                break;
            }
            if snapshot < oldest {
                continue;
            }
            let view = self.decide_view(cells, keep_markers, snapshot);
            for (decision, in_view) in decisions.iter_mut().zip(view) {
                if in_view.rank() > decision.rank() {
                    *decision = in_view;
                }
            }
        }
        decisions
    }

    /// The rules for the view of a reader at `read_point`: cells with a
    /// later sequence are not in it (and get `Drop`, which claims nothing).
    fn decide_view(
        &self,
        cells: &[CellRef<'_>],
        keep_markers: bool,
        read_point: u64,
    ) -> Vec<Decision> {
        let may_drop_markers = self.bottommost && !keep_markers;
        let mut decisions = vec![Decision::Keep; cells.len()];
        let mut needed = vec![false; cells.len()];
        let mut family_markers: Vec<Marker> = Vec::new();
        let mut column_markers: Vec<Marker> = Vec::new();
        let mut column: Option<&[u8]> = None;
        let mut last_put_timestamp: Option<i64> = None;
        let mut window_used = 0u32;
        for (index, cell) in cells.iter().enumerate() {
            if cell.sequence > read_point {
                decisions[index] = Decision::Drop;
                continue;
            }
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
                if cell.kind.is_delete() && !needed[index] && cell.sequence <= read_point {
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
        let upper = CompactionFilter::new(&family, 1000, false, Vec::new());
        assert_eq!(
            upper.decide_row(&cells, false),
            [Keep, Ghost, Drop, Keep, Drop, Keep, Keep],
            "above the bottom: ghosts, same-ts and out-of-window drops, markers kept"
        );
        let bottom = CompactionFilter::new(&family, 1000, true, Vec::new());
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
        let expiring = CompactionFilter::new(&ttl, 1000, false, Vec::new());
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
        let bottom = CompactionFilter::new(&family, 1000, true, Vec::new());
        assert_eq!(bottom.decide_row(&cells, false), [Keep, Ghost, Keep]);
    }

    #[test]
    fn a_live_snapshot_keeps_what_its_view_reads() {
        use Decision::*;
        let family = FamilyDescriptor::new("f").max_versions(1);
        // v1 (seq 2) overwritten by v2 (seq 5), then deleted by a marker
        // (seq 8) at the bottom; a snapshot at sequence 3 reads v1.
        let cells = [
            marker("a", 20, CellKind::DeleteColumn, 8),
            put("a", 10, 5),
            put("a", 9, 2),
        ];
        let without = CompactionFilter::new(&family, 1000, true, Vec::new());
        assert_eq!(without.decide_row(&cells, false), [Keep, Ghost, Drop]);
        let at_3 = CompactionFilter::new(&family, 1000, true, vec![3]);
        assert_eq!(
            at_3.decide_row(&cells, false),
            [Keep, Ghost, Keep],
            "the snapshot at 3 reads the put of sequence 2"
        );
        let at_6 = CompactionFilter::new(&family, 1000, true, vec![6]);
        assert_eq!(
            at_6.decide_row(&cells, false),
            [Keep, Keep, Drop],
            "the snapshot at 6 reads the put of sequence 5 with its value"
        );
        // A marker the latest view could drop stays for a snapshot that
        // sees it hiding a put (the put of sequence 1 is hidden at 4, and
        // the newer put of sequence 6 is not in that view).
        let cells = [
            put("b", 30, 6),
            marker("b", 20, CellKind::DeleteColumn, 3),
            put("b", 10, 1),
        ];
        let family = FamilyDescriptor::new("f").max_versions(2);
        let without = CompactionFilter::new(&family, 1000, true, Vec::new());
        assert_eq!(without.decide_row(&cells, false), [Keep, Keep, Ghost]);
        let at_4 = CompactionFilter::new(&family, 1000, true, vec![4]);
        assert_eq!(at_4.decide_row(&cells, false), [Keep, Keep, Ghost]);
        // Snapshots newer than every cell change nothing.
        let later = CompactionFilter::new(&family, 1000, true, vec![100]);
        assert_eq!(later.decide_row(&cells, false), [Keep, Keep, Ghost]);
    }
}
