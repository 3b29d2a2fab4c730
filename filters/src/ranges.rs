//! Sets of row keys as sorted, disjoint intervals: the key ranges a plan hands to the index,
//! and the merged ranges of MultiRowRangeFilter.

use std::cmp::Ordering;
use std::ops::Bound;

use crate::model::RowRange;

/// One interval of row keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyInterval {
    /// Lower end (`Unbounded`: from the first row).
    pub start: Bound<Vec<u8>>,
    /// Upper end (`Unbounded`: to the last row).
    pub end: Bound<Vec<u8>>,
}

impl KeyInterval {
    /// Every row key.
    pub fn full() -> Self {
        KeyInterval {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
        }
    }

    /// The interval of a [`RowRange`] (empty start or stop: unbounded).
    pub fn from_row_range(range: &RowRange) -> Self {
        let start = if range.start.is_empty() {
            Bound::Unbounded
        } else if range.start_inclusive {
            Bound::Included(range.start.clone())
        } else {
            Bound::Excluded(range.start.clone())
        };
        let end = if range.stop.is_empty() {
            Bound::Unbounded
        } else if range.stop_inclusive {
            Bound::Included(range.stop.clone())
        } else {
            Bound::Excluded(range.stop.clone())
        };
        KeyInterval { start, end }
    }

    /// Rows starting with `prefix`.
    pub fn prefix(prefix: &[u8]) -> Self {
        let end = match prefix_successor(prefix) {
            Some(successor) => Bound::Excluded(successor),
            None => Bound::Unbounded,
        };
        let start = if prefix.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Included(prefix.to_vec())
        };
        KeyInterval { start, end }
    }

    /// True when `row` is inside.
    pub fn contains(&self, row: &[u8]) -> bool {
        self.admits_start(row) && self.admits_end(row)
    }

    /// True when `row` is not below the start.
    pub fn admits_start(&self, row: &[u8]) -> bool {
        match &self.start {
            Bound::Unbounded => true,
            Bound::Included(start) => row >= start.as_slice(),
            Bound::Excluded(start) => row > start.as_slice(),
        }
    }

    /// True when `row` is not above the end.
    pub fn admits_end(&self, row: &[u8]) -> bool {
        match &self.end {
            Bound::Unbounded => true,
            Bound::Included(end) => row <= end.as_slice(),
            Bound::Excluded(end) => row < end.as_slice(),
        }
    }

    /// The smallest row key inside the interval (`None` when it is unbounded below).
    pub fn first_row(&self) -> Option<Vec<u8>> {
        match &self.start {
            Bound::Unbounded => None,
            Bound::Included(start) => Some(start.clone()),
            Bound::Excluded(start) => {
                let mut next = start.clone();
                next.push(0);
                Some(next)
            }
        }
    }

    fn is_empty(&self) -> bool {
        match (&self.start, &self.end) {
            (Bound::Unbounded, _) | (_, Bound::Unbounded) => false,
            (Bound::Included(a), Bound::Included(b)) => a > b,
            (Bound::Included(a) | Bound::Excluded(a), Bound::Excluded(b))
            | (Bound::Excluded(a), Bound::Included(b)) => a >= b,
        }
    }
}

/// The shortest key greater than every key starting with `prefix`, or `None` when there is
/// none (the prefix is all 0xFF or empty).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|b| *b != 0xff)?;
    let mut successor = prefix[..=last].to_vec();
    if let Some(byte) = successor.last_mut() {
        *byte += 1;
    }
    Some(successor)
}

fn compare_starts(a: &Bound<Vec<u8>>, b: &Bound<Vec<u8>>) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Less,
        (_, Bound::Unbounded) => Ordering::Greater,
        (Bound::Included(x), Bound::Included(y)) | (Bound::Excluded(x), Bound::Excluded(y)) => {
            x.cmp(y)
        }
        (Bound::Included(x), Bound::Excluded(y)) => x.cmp(y).then(Ordering::Less),
        (Bound::Excluded(x), Bound::Included(y)) => x.cmp(y).then(Ordering::Greater),
    }
}

fn compare_ends(a: &Bound<Vec<u8>>, b: &Bound<Vec<u8>>) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Greater,
        (_, Bound::Unbounded) => Ordering::Less,
        (Bound::Included(x), Bound::Included(y)) | (Bound::Excluded(x), Bound::Excluded(y)) => {
            x.cmp(y)
        }
        (Bound::Included(x), Bound::Excluded(y)) => x.cmp(y).then(Ordering::Greater),
        (Bound::Excluded(x), Bound::Included(y)) => x.cmp(y).then(Ordering::Less),
    }
}

/// True when an interval ending at `end` and one starting at `start` overlap or touch (so
/// their union is one interval).
fn joins(end: &Bound<Vec<u8>>, start: &Bound<Vec<u8>>) -> bool {
    match (end, start) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => true,
        (Bound::Excluded(e), Bound::Excluded(s)) => s < e,
        (Bound::Included(e) | Bound::Excluded(e), Bound::Included(s))
        | (Bound::Included(e), Bound::Excluded(s)) => s <= e,
    }
}

/// A set of row keys: sorted, disjoint, non-touching, non-empty intervals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRanges {
    intervals: Vec<KeyInterval>,
}

/// Where a row falls relative to a [`KeyRanges`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RangePosition {
    /// Inside interval `index`.
    Inside(usize),
    /// Between intervals: before interval `index`, after any earlier one.
    Before(usize),
    /// After every interval.
    After,
}

impl KeyRanges {
    /// Every row key.
    pub fn full() -> Self {
        KeyRanges {
            intervals: vec![KeyInterval::full()],
        }
    }

    /// No row key.
    pub fn empty() -> Self {
        KeyRanges {
            intervals: Vec::new(),
        }
    }

    /// The union of the intervals, normalized.
    pub fn from_intervals(mut intervals: Vec<KeyInterval>) -> Self {
        intervals.retain(|interval| !interval.is_empty());
        intervals.sort_by(|a, b| compare_starts(&a.start, &b.start));
        let mut merged: Vec<KeyInterval> = Vec::with_capacity(intervals.len());
        for interval in intervals {
            match merged.last_mut() {
                Some(last) if joins(&last.end, &interval.start) => {
                    if compare_ends(&interval.end, &last.end) == Ordering::Greater {
                        last.end = interval.end;
                    }
                }
                _ => merged.push(interval),
            }
        }
        KeyRanges { intervals: merged }
    }

    /// The intervals, in key order.
    pub fn intervals(&self) -> &[KeyInterval] {
        &self.intervals
    }

    /// True when no row key is in the set.
    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty()
    }

    /// True when every row key is in the set.
    pub fn is_full(&self) -> bool {
        self.intervals == [KeyInterval::full()]
    }

    /// True when `row` is in the set.
    pub fn contains(&self, row: &[u8]) -> bool {
        matches!(self.position(row), RangePosition::Inside(_))
    }

    /// Locates `row` among the intervals (binary search).
    pub fn position(&self, row: &[u8]) -> RangePosition {
        let index = self
            .intervals
            .partition_point(|interval| !interval.admits_end(row));
        match self.intervals.get(index) {
            None => RangePosition::After,
            Some(interval) if interval.admits_start(row) => RangePosition::Inside(index),
            Some(_) => RangePosition::Before(index),
        }
    }

    /// Union of two sets.
    pub fn union(&self, other: &KeyRanges) -> KeyRanges {
        KeyRanges::from_intervals(
            self.intervals
                .iter()
                .chain(&other.intervals)
                .cloned()
                .collect(),
        )
    }

    /// Intersection of two sets.
    pub fn intersect(&self, other: &KeyRanges) -> KeyRanges {
        let mut out = Vec::new();
        for a in &self.intervals {
            for b in &other.intervals {
                let start = if compare_starts(&a.start, &b.start) == Ordering::Less {
                    &b.start
                } else {
                    &a.start
                };
                let end = if compare_ends(&a.end, &b.end) == Ordering::Greater {
                    &b.end
                } else {
                    &a.end
                };
                out.push(KeyInterval {
                    start: start.clone(),
                    end: end.clone(),
                });
            }
        }
        KeyRanges::from_intervals(out)
    }

    /// The smallest single interval covering the set, with its start replaced by `start`
    /// (used when only an upper limit may be applied).
    pub fn hull_from(&self, start: Bound<Vec<u8>>) -> KeyRanges {
        match self.intervals.last() {
            None => KeyRanges::empty(),
            Some(last) => KeyRanges::from_intervals(vec![KeyInterval {
                start,
                end: last.end.clone(),
            }]),
        }
    }

    /// The smallest single interval covering the set, with its end replaced by `end`.
    pub fn hull_to(&self, end: Bound<Vec<u8>>) -> KeyRanges {
        match self.intervals.first() {
            None => KeyRanges::empty(),
            Some(first) => KeyRanges::from_intervals(vec![KeyInterval {
                start: first.start.clone(),
                end,
            }]),
        }
    }

    /// True when some key `k` with `first <= k <= last` is in the set: a block whose keys
    /// span `[first, last]` can be skipped when this is false.
    pub fn overlaps(&self, first: &[u8], last: &[u8]) -> bool {
        match self.position(first) {
            RangePosition::Inside(_) => true,
            RangePosition::After => false,
            RangePosition::Before(index) => self.intervals.get(index).is_some_and(|interval| {
                interval
                    .first_row()
                    .is_none_or(|row| row.as_slice() <= last)
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inc(a: &str) -> Bound<Vec<u8>> {
        Bound::Included(a.as_bytes().to_vec())
    }
    fn exc(a: &str) -> Bound<Vec<u8>> {
        Bound::Excluded(a.as_bytes().to_vec())
    }

    #[test]
    fn merges_touching_and_keeps_gaps() {
        let set = KeyRanges::from_intervals(vec![
            KeyInterval {
                start: inc("c"),
                end: exc("e"),
            },
            KeyInterval {
                start: inc("a"),
                end: exc("c"),
            },
            KeyInterval {
                start: exc("g"),
                end: inc("h"),
            },
            KeyInterval {
                start: inc("f"),
                end: exc("g"),
            },
        ]);
        assert_eq!(set.intervals().len(), 3);
        assert!(set.contains(b"d") && !set.contains(b"e") && !set.contains(b"g"));
        assert_eq!(set.position(b"e"), RangePosition::Before(1));
        assert_eq!(set.position(b"z"), RangePosition::After);
        assert!(set.overlaps(b"e", b"f"));
        assert!(!set.overlaps(b"e", b"ez"));
    }

    #[test]
    fn intersect_and_prefix() {
        let prefix = KeyRanges::from_intervals(vec![KeyInterval::prefix(b"ab")]);
        assert!(prefix.contains(b"ab") && prefix.contains(b"abzz") && !prefix.contains(b"ac"));
        let upto = KeyRanges::from_intervals(vec![KeyInterval {
            start: Bound::Unbounded,
            end: inc("abc"),
        }]);
        let both = prefix.intersect(&upto);
        assert!(both.contains(b"abc") && !both.contains(b"abd"));
        assert_eq!(prefix_successor(b"a\xff\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xff"), None);
    }
}
