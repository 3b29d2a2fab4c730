//! FuzzyRowFilter matching and the "next row that can match" computation, shared by the
//! evaluator (seek hints) and the plan (index skipping).

use crate::model::FuzzyRule;

/// A fuzzy rule with its mask decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FuzzyMatcher {
    key: Vec<u8>,
    /// `true` where the row byte must equal the key byte.
    fixed: Vec<bool>,
}

impl FuzzyMatcher {
    pub(crate) fn new(rule: &FuzzyRule) -> Self {
        FuzzyMatcher {
            key: rule.key.clone(),
            fixed: rule.mask.iter().map(|m| *m == 0).collect(),
        }
    }

    /// The rule's key bytes.
    pub(crate) fn key(&self) -> &[u8] {
        &self.key
    }

    /// `true` at the positions the row must match.
    pub(crate) fn fixed(&self) -> &[bool] {
        &self.fixed
    }

    /// HBase's `satisfies`: the first `min(row.len(), key.len())` bytes must agree at every
    /// fixed position. A row shorter than the key is only tested on its own bytes.
    pub(crate) fn satisfies(&self, row: &[u8]) -> bool {
        self.first_violation(row).is_none()
    }

    fn first_violation(&self, row: &[u8]) -> Option<usize> {
        row.iter()
            .zip(&self.key)
            .zip(&self.fixed)
            .position(|((byte, key), fixed)| *fixed && byte != key)
    }

    /// The smallest row key strictly greater than `row` that satisfies the rule, if any.
    ///
    /// Precondition: `row` does not satisfy the rule. Let `p` be the first violating
    /// position. Any greater satisfying row differs from `row` at some `q <= p` by a larger
    /// byte; the largest such `q` that admits one (a fixed byte above `row[q]`, or a free byte
    /// below 0xFF) gives the smallest candidate `row[..q] + [byte]`.
    fn next_after_violation(&self, row: &[u8], violation: usize) -> Option<Vec<u8>> {
        (0..=violation).rev().find_map(|q| {
            let current = *row.get(q)?;
            let next = if *self.fixed.get(q)? {
                let wanted = *self.key.get(q)?;
                (wanted > current).then_some(wanted)
            } else {
                current.checked_add(1)
            }?;
            let mut candidate = row.get(..q)?.to_vec();
            candidate.push(next);
            Some(candidate)
        })
    }

    /// The smallest row key greater than `row` that satisfies the rule (for a row that does
    /// not satisfy it), or `None` when no greater row can.
    pub(crate) fn next_row_after(&self, row: &[u8]) -> Option<Vec<u8>> {
        match self.first_violation(row) {
            Some(violation) => self.next_after_violation(row, violation),
            None => None,
        }
    }

    /// The smallest row key `>= row` satisfying the rule.
    pub(crate) fn first_at_or_after(&self, row: &[u8]) -> Option<Vec<u8>> {
        match self.first_violation(row) {
            None => Some(row.to_vec()),
            Some(violation) => self.next_after_violation(row, violation),
        }
    }
}

/// Several fuzzy rules, any of which may match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FuzzySet {
    pub(crate) matchers: Vec<FuzzyMatcher>,
}

impl FuzzySet {
    pub(crate) fn new(rules: &[FuzzyRule]) -> Self {
        FuzzySet {
            matchers: rules.iter().map(FuzzyMatcher::new).collect(),
        }
    }

    pub(crate) fn satisfies(&self, row: &[u8]) -> bool {
        self.matchers.iter().any(|m| m.satisfies(row))
    }

    /// The smallest row key greater than `row` that some rule matches.
    pub(crate) fn next_row_after(&self, row: &[u8]) -> Option<Vec<u8>> {
        self.matchers
            .iter()
            .filter_map(|m| m.next_row_after(row))
            .min()
    }

    /// The smallest row key `>= row` that some rule matches.
    pub(crate) fn first_at_or_after(&self, row: &[u8]) -> Option<Vec<u8>> {
        self.matchers
            .iter()
            .filter_map(|m| m.first_at_or_after(row))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(key: &[u8], mask: &[u8]) -> FuzzyMatcher {
        FuzzyMatcher::new(&FuzzyRule {
            key: key.to_vec(),
            mask: mask.to_vec(),
        })
    }

    #[test]
    fn satisfies_like_hbase() {
        let m = matcher(b"\x00\x00\x00\x01????", &[0, 0, 0, 0, 1, 1, 1, 1]);
        assert!(m.satisfies(b"\x00\x00\x00\x01abcd"));
        assert!(m.satisfies(b"\x00\x00\x00\x01abcdEXTRA"));
        assert!(!m.satisfies(b"\x00\x00\x00\x02abcd"));
        // HBase compares only min(row, key) bytes: short rows matching on their length pass.
        assert!(m.satisfies(b"\x00\x00"));
    }

    #[test]
    fn next_row_is_the_smallest_greater_match() {
        let m = matcher(b"\x00\x00\x00\x01????", &[0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(
            m.next_row_after(b"\x00\x00\x00\x00zz"),
            Some(b"\x00\x00\x00\x01".to_vec())
        );
        assert_eq!(m.next_row_after(b"\x00\x00\x00\x02"), None);
        let free_first = matcher(b"?a", &[1, 0]);
        assert_eq!(free_first.next_row_after(b"kb"), Some(b"l".to_vec()));
        assert_eq!(free_first.next_row_after(b"k\x00"), Some(b"ka".to_vec()));
        assert_eq!(free_first.next_row_after(b"\xffb"), None);
    }

    #[test]
    fn next_row_matches_brute_force() {
        let m = matcher(b"a?c", &[0, 1, 0]);
        let alphabet = [b'a', b'b', b'c', 0xff];
        let mut rows: Vec<Vec<u8>> = Vec::new();
        for a in alphabet {
            rows.push(vec![a]);
            for b in alphabet {
                rows.push(vec![a, b]);
                for c in alphabet {
                    rows.push(vec![a, b, c]);
                }
            }
        }
        rows.sort();
        for row in &rows {
            if m.satisfies(row) {
                continue;
            }
            let expected = rows.iter().find(|r| *r > row && m.satisfies(r)).cloned();
            let next = m.next_row_after(row);
            // The computed row may be outside the sampled alphabet, but it must satisfy the
            // rule, be greater than the row, and not jump over any sampled match.
            if let Some(next) = &next {
                assert!(m.satisfies(next) && next > row);
                if let Some(expected) = &expected {
                    assert!(next <= expected, "{row:?}: {next:?} skips {expected:?}");
                }
            } else {
                assert_eq!(expected, None, "{row:?}");
            }
        }
    }
}
