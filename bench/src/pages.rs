//! The records of the `filterscan-*` workloads: scenario 4's web-page
//! connectivity records (SCENARIOS.md), keyed by ten fixed-width 4-byte
//! big-endian fields, and the queries run over them.
//!
//! Every field of record `index` is a function of `index`, so the number of
//! records a query must match is known without asking any engine: the
//! `Census` counts them once per run and each query's result is checked
//! against it.

use crate::random::{Rng, mix64};

/// Fields per key.
pub const FIELDS: usize = 10;
/// Bytes per field (big-endian `u32`).
pub const FIELD_BYTES: usize = 4;
/// Key width: ten 4-byte fields.
pub const PAGES_KEY_BYTES: usize = FIELDS * FIELD_BYTES;
/// Distinct urls (the leading field, an md5 of the url reduced to an id).
pub const URLS: u32 = 5_000;
/// Distinct scan dates (field `sdate`), days from `FIRST_DATE`.
pub const DATES: u32 = 30;
/// The first scan date, as scenario 4 writes dates (yyyymmdd).
pub const FIRST_DATE: u32 = 20150401;
/// HTTP codes of field `code`.
pub const CODES: [u32; 4] = [200, 301, 404, 500];
/// Distinct scores in the first 8 bytes of a value.
pub const SCORES: u64 = 1_000;
/// Width of the score at the start of each value, in bytes.
pub const SCORE_BYTES: usize = 8;

/// Byte offset of field `md5url` (the leading field).
pub const URL_OFFSET: usize = 0;
/// Byte offset of field `code`.
pub const CODE_OFFSET: usize = 3 * FIELD_BYTES;
/// Byte offset of field `sdate`.
pub const DATE_OFFSET: usize = 4 * FIELD_BYTES;

/// The ten fields of record `index`: md5url, site, status, code, sdate,
/// type, free, close, queue and the record id (which keeps keys unique).
/// The fields step with different divisors so they are not correlated.
pub fn fields(index: u64) -> [u32; FIELDS] {
    let i = index as u32;
    [
        url_of(index),
        (i / 3) % 7,
        (i / 5) % 3,
        CODES[((i / 7) % 4) as usize],
        FIRST_DATE + (i / 11) % DATES,
        (i / 13) % 4,
        (i / 17) % 2,
        (i / 19) % 2,
        (i / 23) % 5,
        i,
    ]
}

/// The url id of record `index`, scattered so that the records of one url
/// are not written together.
pub fn url_of(index: u64) -> u32 {
    (mix64(index) % u64::from(URLS)) as u32
}

/// The score of record `index`, stored in the first 8 bytes of its value.
pub fn score_of(index: u64) -> u64 {
    mix64(index ^ 0x00c0_ffee) % SCORES
}

/// Writes the key of record `index` into `out` (replacing its contents).
pub fn write_key(index: u64, out: &mut Vec<u8>) {
    out.clear();
    for field in fields(index) {
        out.extend_from_slice(&field.to_be_bytes());
    }
}

/// Writes the value of record `index`: its score as 8 big-endian bytes,
/// then `filler` up to `value_bytes` (at least the score is written).
pub fn write_value(index: u64, filler: &[u8], value_bytes: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&score_of(index).to_be_bytes());
    let rest = value_bytes.saturating_sub(SCORE_BYTES).min(filler.len());
    out.extend_from_slice(&filler[..rest]);
}

/// What one filtered scan asks for: rows in `start..end` whose key starts
/// with `prefix`, whose 4-byte key fields at the given offsets equal the
/// given values, and whose value starts with `value_prefix`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterQuery {
    /// First key (inclusive); empty for the start of the table.
    pub start: Vec<u8>,
    /// Key to stop before; `None` for the end of the table.
    pub end: Option<Vec<u8>>,
    /// Keys must start with these bytes.
    pub prefix: Option<Vec<u8>>,
    /// Key fields that must be equal: (byte offset, big-endian bytes).
    pub key_equals: Vec<(usize, [u8; FIELD_BYTES])>,
    /// Values must start with these bytes.
    pub value_prefix: Option<Vec<u8>>,
}

impl FilterQuery {
    /// The predicate, applied in Rust by engines without server-side
    /// filters (RocksDB, fjall) to each entry their iterator returns.
    pub fn matches(&self, key: &[u8], value: &[u8]) -> bool {
        self.prefix.as_ref().is_none_or(|p| key.starts_with(p))
            && self
                .key_equals
                .iter()
                .all(|(offset, want)| key.get(*offset..offset + FIELD_BYTES) == Some(&want[..]))
            && self
                .value_prefix
                .as_ref()
                .is_none_or(|p| value.starts_with(p))
    }

    /// The key range a client of an engine without filters iterates:
    /// `start..end` narrowed to the keys that start with `prefix`, as a
    /// RocksDB user seeks to a prefix and bounds the iterator after it.
    pub fn key_range(&self) -> (Vec<u8>, Option<Vec<u8>>) {
        let Some(prefix) = &self.prefix else {
            return (self.start.clone(), self.end.clone());
        };
        let start = self.start.clone().max(prefix.clone());
        let end = match (&self.end, prefix_successor(prefix)) {
            (Some(a), Some(b)) => Some(a.clone().min(b)),
            (a, b) => a.clone().or(b),
        };
        (start, end)
    }

    /// The same predicate in HBase's filter language, for strata:
    /// `PrefixFilter`, `RowMaskFilter` (strata's masked key compare) and
    /// `ValueFilter` with a `binaryprefix` comparator, joined by AND. HBase
    /// filters read quoted strings literally, so binary arguments are
    /// written `b'\xNN...'` (strata's extensions read escapes always).
    pub fn hbase_filter(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(prefix) = &self.prefix {
            parts.push(format!("PrefixFilter(b'{}')", escaped(prefix)));
        }
        for (offset, want) in &self.key_equals {
            parts.push(format!(
                "RowMaskFilter({offset}, '{}', =, '{}')",
                escaped(&[0xff; FIELD_BYTES]),
                escaped(want)
            ));
        }
        if let Some(prefix) = &self.value_prefix {
            parts.push(format!(
                "ValueFilter(=, b'binaryprefix:{}')",
                escaped(prefix)
            ));
        }
        (!parts.is_empty()).then(|| parts.join(" AND "))
    }
}

/// Bytes as `\xNN` escapes, which the filter language reads back as bytes.
/// Built in one string: a query's filter is written inside its timed
/// operation, and a `format!` per byte showed in strata's profile.
fn escaped(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(bytes.len() * 4);
    for &b in bytes {
        out.push_str("\\x");
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

/// How many of the records `0..num` each query value matches.
#[derive(Debug, Clone)]
pub struct Census {
    by_url: Vec<u64>,
    by_date_and_code: Vec<u64>,
    by_score: Vec<u64>,
}

impl Census {
    /// Counts the records `0..num` (a pass over the field functions, about
    /// 10 ns per record).
    pub fn new(num: u64) -> Census {
        let mut census = Census {
            by_url: vec![0; URLS as usize],
            by_date_and_code: vec![0; (DATES as usize) * CODES.len()],
            by_score: vec![0; SCORES as usize],
        };
        for index in 0..num {
            let f = fields(index);
            census.by_url[f[0] as usize] += 1;
            census.by_date_and_code[date_code_slot(f[4], f[3])] += 1;
            census.by_score[score_of(index) as usize] += 1;
        }
        census
    }

    /// Records of url `url`.
    pub fn with_url(&self, url: u32) -> u64 {
        self.by_url.get(url as usize).copied().unwrap_or(0)
    }

    /// Records with scan date `date` and code `code`.
    pub fn with_date_and_code(&self, date: u32, code: u32) -> u64 {
        self.by_date_and_code
            .get(date_code_slot(date, code))
            .copied()
            .unwrap_or(0)
    }

    /// Records whose value starts with score `score`.
    pub fn with_score(&self, score: u64) -> u64 {
        self.by_score.get(score as usize).copied().unwrap_or(0)
    }
}

fn date_code_slot(date: u32, code: u32) -> usize {
    let day = date.saturating_sub(FIRST_DATE) as usize;
    let code = CODES.iter().position(|&c| c == code).unwrap_or(CODES.len());
    day * CODES.len() + code
}

/// A query of `filterscan-prefix`: every record of one url (the leading
/// key field), chosen as the url of a random record so it has matches.
/// The whole table is the range: narrowing it is the engine's job (strata
/// seeks through the filter's plan; RocksDB and fjall seek to the prefix).
pub fn prefix_query(num: u64, rng: &mut Rng) -> (FilterQuery, u32) {
    let url = url_of(rng.below(num.max(1)));
    let query = FilterQuery {
        prefix: Some(url.to_be_bytes().to_vec()),
        ..FilterQuery::default()
    };
    (query, url)
}

/// A query of `filterscan-mask`: `sdate = D AND code = C` on two
/// non-leading key fields, so every key of the table is tested.
pub fn mask_query(rng: &mut Rng) -> (FilterQuery, u32, u32) {
    let date = FIRST_DATE + rng.below(u64::from(DATES)) as u32;
    let code = CODES[rng.below(CODES.len() as u64) as usize];
    let query = FilterQuery {
        key_equals: vec![
            (DATE_OFFSET, date.to_be_bytes()),
            (CODE_OFFSET, code.to_be_bytes()),
        ],
        ..FilterQuery::default()
    };
    (query, date, code)
}

/// A query of `filterscan-value`: values whose 8-byte score equals a
/// random score (0.1% of the records), so every value is tested.
pub fn value_query(rng: &mut Rng) -> (FilterQuery, u64) {
    let score = rng.below(SCORES);
    let query = FilterQuery {
        value_prefix: Some(score.to_be_bytes().to_vec()),
        ..FilterQuery::default()
    };
    (query, score)
}

/// The first key after every key that starts with `prefix`, or `None`
/// when there is none (the prefix is all `0xff`).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_forty_bytes_and_carry_their_fields() {
        let mut key = Vec::new();
        write_key(123_456, &mut key);
        assert_eq!(key.len(), PAGES_KEY_BYTES);
        let f = fields(123_456);
        assert_eq!(key[DATE_OFFSET..DATE_OFFSET + 4], f[4].to_be_bytes());
        assert_eq!(key[CODE_OFFSET..CODE_OFFSET + 4], f[3].to_be_bytes());
        assert_eq!(key[36..], 123_456u32.to_be_bytes());
    }

    #[test]
    fn the_census_agrees_with_the_predicate() {
        let num = 20_000;
        let census = Census::new(num);
        let mut rng = Rng::new(5);
        let (mut key, mut value) = (Vec::new(), Vec::new());
        let queries: Vec<(FilterQuery, u64)> = vec![
            {
                let (q, url) = prefix_query(num, &mut rng);
                (q, census.with_url(url))
            },
            {
                let (q, d, c) = mask_query(&mut rng);
                (q, census.with_date_and_code(d, c))
            },
            {
                let (q, s) = value_query(&mut rng);
                (q, census.with_score(s))
            },
        ];
        for (query, expected) in queries {
            let matched = (0..num)
                .filter(|&i| {
                    write_key(i, &mut key);
                    write_value(i, b"filler", 100, &mut value);
                    query.matches(&key, &value)
                })
                .count() as u64;
            assert_eq!(matched, expected, "{query:?}");
            assert!(expected > 0);
        }
    }

    #[test]
    fn filter_strings_parse() {
        let mut rng = Rng::new(1);
        for query in [
            prefix_query(100, &mut rng).0,
            mask_query(&mut rng).0,
            value_query(&mut rng).0,
        ] {
            let text = query.hbase_filter().unwrap();
            strata::Scan::new().filter_string(&text).unwrap();
        }
        assert_eq!(FilterQuery::default().hbase_filter(), None);
        let prefix = FilterQuery {
            prefix: Some(vec![0x00, 0x7f, 0xab, 0xff]),
            ..FilterQuery::default()
        };
        assert_eq!(
            prefix.hbase_filter().as_deref(),
            Some("PrefixFilter(b'\\x00\\x7F\\xAB\\xFF')")
        );
    }

    #[test]
    fn the_key_range_narrows_to_the_prefix() {
        let query = FilterQuery {
            prefix: Some(b"k5".to_vec()),
            ..FilterQuery::default()
        };
        assert_eq!(query.key_range(), (b"k5".to_vec(), Some(b"k6".to_vec())));
        let bounded = FilterQuery {
            start: b"k55".to_vec(),
            end: Some(b"k58".to_vec()),
            ..query
        };
        assert_eq!(
            bounded.key_range(),
            (b"k55".to_vec(), Some(b"k58".to_vec()))
        );
    }

    #[test]
    fn prefix_successor_bounds_the_prefix() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_successor(&[0xff, 0xff]), None);
    }
}
