//! Compiled comparators with HBase's `ByteArrayComparable.compareTo` semantics.
//!
//! The scalar evaluator and the plan's scalar paths share this one definition of what a
//! comparator means, so the kernels have a single reference to agree with.

use std::cmp::Ordering;

use regex::bytes::{Regex, RegexBuilder};

use crate::model::{BitOp, Comparator, CompareOp, ModelError};

/// Compiles a `regexstring:` pattern the way HBase's `RegexStringComparator(String)` does:
/// `.` also matches line terminators (Java `Pattern.DOTALL`), and a match anywhere counts.
pub(crate) fn compile_regex(pattern: &str) -> Result<Regex, ModelError> {
    RegexBuilder::new(pattern)
        .dot_matches_new_line(true)
        .build()
        .map_err(|error| ModelError::InvalidRegex {
            pattern: pattern.to_string(),
            message: error.to_string(),
        })
}

/// A comparator ready to compare: regexes compiled, substrings lowercased.
#[derive(Clone, Debug)]
pub(crate) enum CompiledComparator {
    Binary(Vec<u8>),
    BinaryPrefix(Vec<u8>),
    /// The needle, already lowercased.
    Substring(String),
    Regex(Regex),
    Bit(BitOp, Vec<u8>),
    Long(i64),
    Null,
}

impl CompiledComparator {
    pub(crate) fn compile(comparator: &Comparator) -> Result<Self, ModelError> {
        Ok(match comparator {
            Comparator::Binary(bytes) => CompiledComparator::Binary(bytes.clone()),
            Comparator::BinaryPrefix(bytes) => CompiledComparator::BinaryPrefix(bytes.clone()),
            Comparator::Substring(needle) => CompiledComparator::Substring(needle.to_lowercase()),
            Comparator::RegexString(pattern) => CompiledComparator::Regex(compile_regex(pattern)?),
            Comparator::Bit(op, bytes) => CompiledComparator::Bit(*op, bytes.clone()),
            Comparator::Long(value) => CompiledComparator::Long(*value),
            Comparator::Null => CompiledComparator::Null,
        })
    }

    /// HBase's `compareTo(bytes)`: the comparator on the left, the cell part on the right.
    /// `None` when the cell part cannot be read as the comparator's type (a `long:`
    /// comparator and a value that is not 8 bytes: HBase throws, strata treats it as failing
    /// every operator).
    pub(crate) fn compare_to(&self, bytes: &[u8]) -> Option<Ordering> {
        match self {
            CompiledComparator::Binary(value) => Some(value.as_slice().cmp(bytes)),
            CompiledComparator::BinaryPrefix(value) => {
                let head = &bytes[..bytes.len().min(value.len())];
                Some(value.as_slice().cmp(head))
            }
            CompiledComparator::Substring(needle) => {
                Some(match_result(contains_ignore_case(bytes, needle)))
            }
            CompiledComparator::Regex(regex) => Some(match_result(regex.is_match(bytes))),
            CompiledComparator::Bit(op, operand) => {
                Some(match_result(bit_matches(*op, operand, bytes)))
            }
            CompiledComparator::Long(value) => {
                let cell: [u8; 8] = bytes.try_into().ok()?;
                Some(value.cmp(&i64::from_be_bytes(cell)))
            }
            CompiledComparator::Null => Some(Ordering::Greater),
        }
    }

    /// True when a compare filter with this operator lets `bytes` pass.
    pub(crate) fn passes(&self, op: CompareOp, bytes: &[u8]) -> bool {
        if op == CompareOp::NoOp {
            return false;
        }
        match self.compare_to(bytes) {
            Some(ordering) => !op.filters_out(ordering),
            None => false,
        }
    }
}

/// Match-only comparators answer 0 for a match and 1 otherwise.
fn match_result(matched: bool) -> Ordering {
    if matched {
        Ordering::Equal
    } else {
        Ordering::Greater
    }
}

/// HBase's `BitComparator`: lengths must agree, and some byte of `operand op bytes` is non-zero.
pub(crate) fn bit_matches(op: BitOp, operand: &[u8], bytes: &[u8]) -> bool {
    operand.len() == bytes.len()
        && operand.iter().zip(bytes).any(|(a, b)| match op {
            BitOp::And => a & b != 0,
            BitOp::Or => a | b != 0,
            BitOp::Xor => a ^ b != 0,
        })
}

/// HBase's `SubstringComparator`: `Bytes.toString(value).toLowerCase().contains(needle)`, with
/// the needle already lowercased. ASCII values take a byte-level path; anything else is decoded
/// (invalid UTF-8 becomes U+FFFD, as Java does) and lowercased with Unicode rules.
pub(crate) fn contains_ignore_case(haystack: &[u8], needle_lowercase: &str) -> bool {
    if haystack.is_ascii() {
        let needle = needle_lowercase.as_bytes();
        if needle.is_empty() {
            return true;
        }
        if !needle.is_ascii() {
            return false;
        }
        haystack.windows(needle.len()).any(|window| {
            window
                .iter()
                .zip(needle)
                .all(|(h, n)| h.to_ascii_lowercase() == *n)
        })
    } else {
        String::from_utf8_lossy(haystack)
            .to_lowercase()
            .contains(needle_lowercase)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(comparator: Comparator) -> CompiledComparator {
        CompiledComparator::compile(&comparator).unwrap()
    }

    #[test]
    fn binary_reads_naturally() {
        let c = cmp(Comparator::Binary(b"m".to_vec()));
        assert!(c.passes(CompareOp::Less, b"a"));
        assert!(!c.passes(CompareOp::Less, b"m"));
        assert!(c.passes(CompareOp::LessOrEqual, b"m"));
        assert!(c.passes(CompareOp::Greater, b"ma"));
        assert!(c.passes(CompareOp::NotEqual, b"x"));
        assert!(!c.passes(CompareOp::NoOp, b"m"));
    }

    #[test]
    fn binary_prefix_compares_the_head_only() {
        let c = cmp(Comparator::BinaryPrefix(b"ab".to_vec()));
        assert!(c.passes(CompareOp::Equal, b"abzzz"));
        assert!(c.passes(CompareOp::Less, b"a"));
        assert!(c.passes(CompareOp::Greater, b"b"));
    }

    #[test]
    fn substring_ignores_case_and_handles_unicode() {
        let c = cmp(Comparator::Substring("ÄbC".to_string()));
        assert!(c.passes(CompareOp::Equal, "xxäBcxx".as_bytes()));
        assert!(!c.passes(CompareOp::Equal, b"abc"));
        let ascii = cmp(Comparator::Substring("HeLLo".to_string()));
        assert!(ascii.passes(CompareOp::Equal, b"say hello!"));
        assert!(ascii.passes(CompareOp::NotEqual, b"bye"));
    }

    #[test]
    fn regex_finds_anywhere_and_dot_matches_newline() {
        let c = cmp(Comparator::RegexString("a.b".to_string()));
        assert!(c.passes(CompareOp::Equal, b"xxa\nbyy"));
        assert!(!c.passes(CompareOp::Equal, b"ab"));
    }

    #[test]
    fn long_requires_eight_bytes() {
        let c = cmp(Comparator::Long(10));
        assert!(c.passes(CompareOp::Less, &5i64.to_be_bytes()));
        assert!(c.passes(CompareOp::Less, &(-5i64).to_be_bytes()));
        assert!(!c.passes(CompareOp::Less, &20i64.to_be_bytes()));
        for op in CompareOp::ALL {
            assert!(!c.passes(op, b"short"));
        }
    }

    #[test]
    fn bit_and_null_follow_hbase() {
        let and = cmp(Comparator::Bit(BitOp::And, vec![0x01, 0x00]));
        assert!(and.passes(CompareOp::Equal, &[0x01, 0xff]));
        assert!(!and.passes(CompareOp::Equal, &[0x02, 0xff]));
        assert!(!and.passes(CompareOp::Equal, &[0x01]));
        let null = cmp(Comparator::Null);
        assert!(!null.passes(CompareOp::Equal, b""));
        assert!(null.passes(CompareOp::NotEqual, b""));
    }
}
