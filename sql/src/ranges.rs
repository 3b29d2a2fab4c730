//! Sets of row-key intervals: what pushed-down key predicates leave of a table, intersected
//! with region boundaries to pick and bound the partitions.

use strata::filters::model::RowRange;

/// The most intervals a key predicate is planned as (an IN-list's points, a composite key's
/// combinations); beyond it the set is widened to its hull and the filters do the rest.
pub const MAX_KEY_RANGES: usize = 4096;

/// Row keys from `start` (inclusive; empty: from the first row) to `end` (exclusive; `None`:
/// to the last row).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyRange {
    /// First key in the range; empty for no lower bound.
    pub start: Vec<u8>,
    /// First key past the range; `None` for no upper bound.
    pub end: Option<Vec<u8>>,
}

impl KeyRange {
    /// Every key.
    pub fn all() -> KeyRange {
        KeyRange {
            start: Vec::new(),
            end: None,
        }
    }

    /// Exactly `key`.
    pub fn point(key: &[u8]) -> KeyRange {
        KeyRange {
            start: key.to_vec(),
            end: Some(successor(key)),
        }
    }

    /// Every key starting with `prefix`.
    pub fn prefix(prefix: &[u8]) -> KeyRange {
        KeyRange {
            start: prefix.to_vec(),
            end: prefix_successor(prefix),
        }
    }

    /// A region's range (`end` empty: the last region).
    pub fn region(start: &[u8], end: &[u8]) -> KeyRange {
        KeyRange {
            start: start.to_vec(),
            end: (!end.is_empty()).then(|| end.to_vec()),
        }
    }

    /// True when no key lies in the range.
    pub fn is_empty(&self) -> bool {
        self.end.as_ref().is_some_and(|end| *end <= self.start)
    }

    /// The keys in both ranges (possibly empty).
    pub fn intersect(&self, other: &KeyRange) -> KeyRange {
        let start = self.start.clone().max(other.start.clone());
        let end = match (&self.end, &other.end) {
            (None, e) | (e, None) => e.clone(),
            (Some(a), Some(b)) => Some(a.min(b).clone()),
        };
        KeyRange { start, end }
    }

    /// True when `key` lies in the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start.as_slice() && self.end.as_ref().is_none_or(|end| key < end.as_slice())
    }

    /// The range as a `MultiRowRangeFilter` range.
    pub fn to_row_range(&self) -> RowRange {
        RowRange {
            start: self.start.clone(),
            start_inclusive: true,
            stop: self.end.clone().unwrap_or_default(),
            stop_inclusive: false,
        }
    }
}

/// The smallest key greater than `key`: `key` followed by a zero byte.
pub fn successor(key: &[u8]) -> Vec<u8> {
    let mut next = key.to_vec();
    next.push(0);
    next
}

/// The smallest key greater than every key starting with `prefix`; `None` when there is none
/// (an empty prefix, or one of `0xFF` bytes only).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let keep = prefix.iter().rposition(|&b| b != 0xFF)?;
    let mut next = prefix.get(..=keep)?.to_vec();
    if let Some(last) = next.last_mut() {
        *last += 1;
    }
    Some(next)
}

/// A set of disjoint key ranges in key order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyRanges {
    ranges: Vec<KeyRange>,
}

impl KeyRanges {
    /// Every key.
    pub fn all() -> KeyRanges {
        KeyRanges {
            ranges: vec![KeyRange::all()],
        }
    }

    /// No key.
    pub fn none() -> KeyRanges {
        KeyRanges { ranges: Vec::new() }
    }

    /// The union of `ranges` (in any order, overlapping or not), widened to its hull past
    /// [`MAX_KEY_RANGES`].
    pub fn from_ranges(mut ranges: Vec<KeyRange>) -> KeyRanges {
        ranges.retain(|r| !r.is_empty());
        ranges.sort_by(|a, b| a.start.cmp(&b.start));
        let mut merged: Vec<KeyRange> = Vec::with_capacity(ranges.len());
        for range in ranges {
            match merged.last_mut() {
                Some(last) if last.end.as_ref().is_none_or(|end| *end >= range.start) => {
                    last.end = match (&last.end, &range.end) {
                        (None, _) | (_, None) => None,
                        (Some(a), Some(b)) => Some(a.max(b).clone()),
                    };
                }
                _ => merged.push(range),
            }
        }
        let set = KeyRanges { ranges: merged };
        if set.ranges.len() > MAX_KEY_RANGES {
            return KeyRanges {
                ranges: set.hull().into_iter().collect(),
            };
        }
        set
    }

    /// The ranges, disjoint and in key order.
    pub fn ranges(&self) -> &[KeyRange] {
        &self.ranges
    }

    /// True when every key is in the set.
    pub fn is_all(&self) -> bool {
        self.ranges.len() == 1 && self.ranges.first() == Some(&KeyRange::all())
    }

    /// True when no key is in the set.
    pub fn is_none(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The keys in both sets (a merge of the two sorted lists).
    pub fn intersect(&self, other: &KeyRanges) -> KeyRanges {
        let mut out = Vec::new();
        let (mut i, mut j) = (0, 0);
        while let (Some(a), Some(b)) = (self.ranges.get(i), other.ranges.get(j)) {
            let both = a.intersect(b);
            if !both.is_empty() {
                out.push(both);
            }
            // The range that ends first meets nothing more of the other list.
            match (&a.end, &b.end) {
                (None, None) => break,
                (None, Some(_)) => j += 1,
                (Some(_), None) => i += 1,
                (Some(x), Some(y)) if x <= y => i += 1,
                (Some(_), Some(_)) => j += 1,
            }
        }
        KeyRanges::from_ranges(out)
    }

    /// The keys in either set.
    pub fn union(&self, other: &KeyRanges) -> KeyRanges {
        KeyRanges::from_ranges(self.ranges.iter().chain(&other.ranges).cloned().collect())
    }

    /// The set's parts inside `range`.
    pub fn within(&self, range: &KeyRange) -> KeyRanges {
        self.intersect(&KeyRanges {
            ranges: vec![range.clone()],
        })
    }

    /// The smallest single range holding the set; `None` for the empty set.
    pub fn hull(&self) -> Option<KeyRange> {
        let first = self.ranges.first()?;
        let last = self.ranges.last()?;
        Some(KeyRange {
            start: first.start.clone(),
            end: last.end.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn r(start: &str, end: Option<&str>) -> KeyRange {
        KeyRange {
            start: start.as_bytes().to_vec(),
            end: end.map(|e| e.as_bytes().to_vec()),
        }
    }

    #[test]
    fn successors() {
        assert_eq!(successor(b"ab"), b"ab\0");
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(b"a\xFF"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xFF\xFF"), None);
        assert_eq!(prefix_successor(b""), None);
    }

    #[test]
    fn union_merges_and_intersection_cuts() {
        let a = KeyRanges::from_ranges(vec![
            r("c", Some("e")),
            r("a", Some("b")),
            r("d", Some("f")),
        ]);
        assert_eq!(a.ranges(), &[r("a", Some("b")), r("c", Some("f"))]);
        let b = KeyRanges::from_ranges(vec![r("ab", Some("d"))]);
        assert_eq!(
            a.intersect(&b).ranges(),
            &[r("ab", Some("b")), r("c", Some("d"))]
        );
        assert!(a.intersect(&KeyRanges::none()).is_none());
        assert!(KeyRanges::all().union(&a).is_all());
        assert_eq!(a.hull(), Some(r("a", Some("f"))));
    }

    #[test]
    fn too_many_ranges_widen_to_the_hull() {
        let points: Vec<KeyRange> = (0..MAX_KEY_RANGES as u32 + 1)
            .map(|i| KeyRange::point(&i.to_be_bytes()))
            .collect();
        let set = KeyRanges::from_ranges(points);
        assert_eq!(set.ranges().len(), 1);
        assert!(set.ranges()[0].contains(&7u32.to_be_bytes()));
    }

    proptest! {
        #[test]
        fn set_operations_agree_with_membership(
            a in prop::collection::vec((prop::collection::vec(0u8..4, 0..3), prop::option::of(prop::collection::vec(0u8..4, 0..3))), 0..4),
            b in prop::collection::vec((prop::collection::vec(0u8..4, 0..3), prop::option::of(prop::collection::vec(0u8..4, 0..3))), 0..4),
            key in prop::collection::vec(0u8..4, 1..4),
        ) {
            let to_set = |v: &Vec<(Vec<u8>, Option<Vec<u8>>)>| {
                KeyRanges::from_ranges(v.iter().map(|(s, e)| KeyRange { start: s.clone(), end: e.clone() }).collect())
            };
            let member = |v: &Vec<(Vec<u8>, Option<Vec<u8>>)>| v.iter().any(|(s, e)| KeyRange { start: s.clone(), end: e.clone() }.contains(&key));
            let (sa, sb) = (to_set(&a), to_set(&b));
            let contains = |s: &KeyRanges| s.ranges().iter().any(|r| r.contains(&key));
            prop_assert_eq!(contains(&sa), member(&a));
            prop_assert_eq!(contains(&sa.intersect(&sb)), member(&a) && member(&b));
            prop_assert_eq!(contains(&sa.union(&sb)), member(&a) || member(&b));
        }
    }
}
