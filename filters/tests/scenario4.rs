//! SCENARIOS.md, scenario 4: web-page connectivity records under a row key of ten 4-byte
//! big-endian fields (md5url, site, status, code, sdate, type, free, close, queue,
//! scantype). Every query returns the right rows through the scalar evaluator, through the
//! plan's kernels over 4096-key fixed-width batches (every ISA), and through the planned scan.

mod support;

use strata_filters::kernels::{Isa, Kernel};
use strata_filters::plan::{Plan, RowPredicate, ScanRange};
use strata_filters::reference::{scan_with_evaluator, scan_with_plan};
use strata_filters::{Batch, Bitmap, CellRef, parse};

const FIELDS: usize = 10;
const WIDTH: usize = 4 * FIELDS;
const ROWS: usize = 20_000;
const BLOCK_KEYS: usize = 4096;

const MD5URL: usize = 0;
const SITE: usize = 1;
const STATUS: usize = 2;
const CODE: usize = 3;
const SDATE: usize = 4;
const TYPE: usize = 5;
const FREE: usize = 6;

/// A deterministic pseudo-random generator (xorshift) so the data set is fixed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

fn records() -> Vec<[u32; FIELDS]> {
    let mut rng = Rng(0x5eed);
    let urls: Vec<u32> = (0..200).map(|_| rng.next()).collect();
    let mut records: Vec<[u32; FIELDS]> = (0..ROWS)
        .map(|i| {
            let mut r = [0u32; FIELDS];
            r[MD5URL] = urls[rng.next() as usize % urls.len()];
            r[SITE] = rng.next() % 50;
            r[STATUS] = rng.next() % 4;
            r[CODE] = [200, 301, 404, 500][rng.next() as usize % 4];
            r[SDATE] = 20_240_000 + rng.next() % 365;
            r[TYPE] = rng.next() % 6;
            r[FREE] = rng.next() % 2;
            r[7] = rng.next() % 2;
            r[8] = i as u32;
            r[9] = rng.next() % 3;
            r
        })
        .collect();
    records.sort_by_key(key);
    records.dedup_by_key(|r| key(r));
    records
}

fn key(record: &[u32; FIELDS]) -> Vec<u8> {
    record
        .iter()
        .flat_map(|field| field.to_be_bytes())
        .collect()
}

fn field(index: usize, op: &str, value: u32) -> String {
    let bytes: String = value
        .to_be_bytes()
        .iter()
        .map(|b| format!("\\x{b:02X}"))
        .collect();
    format!(
        "RowMaskFilter({}, '\\xFF\\xFF\\xFF\\xFF', {op}, '{bytes}')",
        4 * index
    )
}

#[test]
fn every_query_returns_the_right_rows() {
    let records = records();
    let keys: Vec<Vec<u8>> = records.iter().map(key).collect();
    let x = records[1234][MD5URL];
    let d = records[1234][SDATE];
    let (d1, d2) = (d - 15, d + 15);
    type Query = (String, Box<dyn Fn(&[u32; FIELDS]) -> bool>);
    let queries: Vec<Query> = vec![
        (
            format!("{} AND {}", field(MD5URL, "=", x), field(SDATE, "=", d)),
            Box::new(move |r| r[MD5URL] == x && r[SDATE] == d),
        ),
        (
            format!("{} AND {}", field(SDATE, "=", d), field(CODE, "=", 404)),
            Box::new(move |r| r[SDATE] == d && r[CODE] == 404),
        ),
        (
            format!(
                "{} AND {} AND {}",
                field(MD5URL, "=", x),
                field(SDATE, ">", d1),
                field(SDATE, "<", d2)
            ),
            Box::new(move |r| r[MD5URL] == x && d1 < r[SDATE] && r[SDATE] < d2),
        ),
        (
            format!(
                "{} AND {} AND {} AND {}",
                field(SDATE, ">=", d1),
                field(SDATE, "<=", d2),
                field(STATUS, "=", 2),
                field(FREE, "=", 1)
            ),
            Box::new(move |r| (d1..=d2).contains(&r[SDATE]) && r[STATUS] == 2 && r[FREE] == 1),
        ),
        (
            format!(
                "({} OR {}) AND {} AND {}",
                field(CODE, "=", 404),
                field(CODE, "=", 500),
                field(TYPE, "!=", 3),
                field(SITE, "<", 10)
            ),
            Box::new(move |r| (r[CODE] == 404 || r[CODE] == 500) && r[TYPE] != 3 && r[SITE] < 10),
        ),
        (
            format!("{} AND {}", field(MD5URL, ">=", x), field(STATUS, "=", 0)),
            Box::new(move |r| r[MD5URL] >= x && r[STATUS] == 0),
        ),
    ];

    let cells: Vec<Vec<CellRef<'_>>> = keys
        .iter()
        .map(|k| {
            vec![CellRef {
                row: k,
                family: b"f",
                qualifier: b"q",
                timestamp: 1,
                value: b"v",
            }]
        })
        .collect();
    for (text, predicate) in &queries {
        let filter = parse(text).unwrap_or_else(|e| panic!("{e}"));
        let expected: Vec<&[u8]> = records
            .iter()
            .zip(&keys)
            .filter(|(r, _)| predicate(r))
            .map(|(_, k)| k.as_slice())
            .collect();
        assert!(!expected.is_empty(), "query selects nothing: {text}");

        // The scalar evaluator.
        let scan = ScanRange::all();
        let by_evaluator = scan_with_evaluator(Some(&filter), &cells, &scan, 1).unwrap();
        let rows: Vec<&[u8]> = by_evaluator.iter().map(|(row, _)| row.as_slice()).collect();
        assert_eq!(rows, expected, "evaluator: {text}");

        // The plan: exact row kernels only, no evaluator, narrowed ranges when the leading
        // field is fixed.
        let plan = Plan::compile(Some(&filter), &scan).unwrap();
        assert!(!plan.needs_evaluator, "{text}");
        let predicate = plan
            .row_filter
            .as_ref()
            .unwrap_or_else(|| panic!("no row kernel for {text}"));
        if text.starts_with(&field(MD5URL, "=", x)) {
            assert!(
                !plan.ranges.is_full(),
                "leading field fixed but no narrowing: {text}"
            );
            assert!(plan.ranges.contains(expected[0]));
        }
        if text.contains(", >, ") && text.contains(", <, ") {
            assert!(contains_segment_range(predicate), "range not fused: {text}");
        }
        for isa in Isa::supported() {
            let mut selected = Vec::new();
            for block in keys.chunks(BLOCK_KEYS) {
                let data = block.concat();
                let batch = Batch::fixed(WIDTH, block.len(), &data).unwrap();
                let mut bits = Bitmap::zeros(0);
                predicate.eval_with(isa, &batch, &mut bits);
                selected.extend(bits.iter_ones().map(|i| block[i].as_slice()));
            }
            assert_eq!(selected, expected, "{isa:?} kernels: {text}");
        }
        let by_plan = scan_with_plan(&plan, Some(&filter), &cells, &scan, 1).unwrap();
        assert_eq!(by_plan, by_evaluator, "planned scan: {text}");
    }
}

fn contains_segment_range(predicate: &RowPredicate) -> bool {
    match predicate {
        RowPredicate::SegmentRange(_) => true,
        RowPredicate::All(members) | RowPredicate::Any(members) => {
            members.iter().any(contains_segment_range)
        }
        _ => false,
    }
}
