//! Metamorphic test (Pebble's idea): one seeded sequence of random operations
//! runs against several databases that differ only in options that must not
//! change a read: block size, compression, bloom type, I/O back end, when
//! flushes, compactions, splits and reopenings happen, and how the table is
//! pre-split. Every read's result (gets and scans with columns, time ranges,
//! versions, limits, directions and filters; increments' and check-and-mutates'
//! outcomes) is written to a transcript, and the transcripts must be equal.
//!
//! Unlike the model test (`model.rs`) it needs no model of the rules, so it
//! reaches what a model would be costly to describe: every filter of the
//! language, TTL, every delete kind together. A difference names the first
//! operation whose result differs and both configurations.
//!
//! `cargo test` runs two seeds; `cargo test --release -p strata-tests --test
//! metamorphic -- --ignored --nocapture` runs `METAMORPHIC_ROUNDS` seeds
//! (default 40) of `METAMORPHIC_OPS` operations (default 1500).
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::sync::Arc;
use std::time::Duration;
use strata_tests::Rng;

use strata::{
    BloomType, CheckAndMutate, CompareOp, Compression, Db, DbOptions, Delete, FamilyDescriptor,
    Get, Increment, IoMode, ManualClock, Put, RowMutations, RowResult, Scan, Table,
    TableDescriptor,
};

const ROWS: [&str; 12] = [
    "r00", "r01", "r02", "r03", "r03x", "r04", "r05", "r06", "r07", "r08", "r09", "s",
];
/// `a` keeps 3 versions; `b` keeps 1 and its cells live 60 ms.
const FAMILIES: [&str; 2] = ["a", "b"];
const QUALIFIERS: [&str; 4] = ["", "q", "qq", "z"];
const COUNTER: &str = "cnt";
const FILTERS: [&str; 14] = [
    "ValueFilter(=, 'binary:v3')",
    "ValueFilter(!=, 'substring:7')",
    "PrefixFilter('r0')",
    "RowFilter(<, 'binary:r06')",
    "QualifierFilter(>=, 'binary:q')",
    "FamilyFilter(=, 'binary:a')",
    "SingleColumnValueFilter('a', 'q', >=, 'binary:v4')",
    "KeyOnlyFilter()",
    "ColumnPrefixFilter('q')",
    "FirstKeyOnlyFilter()",
    "ColumnCountGetFilter(2)",
    "TimestampsFilter(5, 10, 20, 30)",
    "PageFilter(3)",
    "SKIP ValueFilter(!=, 'binaryprefix:v1') OR ColumnRangeFilter('q', true, 'z', false)",
];

/// What differs between the databases compared. None of it may change a read.
#[derive(Debug, Clone)]
struct Config {
    name: &'static str,
    block_size_bytes: u32,
    compression: Compression,
    bloom: BloomType,
    io: IoMode,
    /// Flush every table after every `n` operations.
    flush_every: Option<usize>,
    /// Compact (minor) after every `n` operations.
    compact_every: Option<usize>,
    /// Major-compact after every `n` operations.
    major_compact_every: Option<usize>,
    /// Split the region of a row after every `n` operations.
    split_every: Option<usize>,
    /// Close cleanly and reopen after every `n` operations.
    reopen_every: Option<usize>,
    /// Memstore size that makes a region flush by itself.
    memstore_flush_size_bytes: Option<u64>,
    /// L0 files that start a background compaction.
    l0_compaction_trigger: usize,
    split_keys: &'static [&'static str],
}

impl Config {
    fn base() -> Config {
        Config {
            name: "base: 64 KiB blocks, no compression, ROW bloom, sync I/O, memstore only",
            block_size_bytes: 64 * 1024,
            compression: Compression::None,
            bloom: BloomType::Row,
            io: IoMode::Sync,
            flush_every: None,
            compact_every: None,
            major_compact_every: None,
            split_every: None,
            reopen_every: None,
            memstore_flush_size_bytes: None,
            l0_compaction_trigger: 4,
            split_keys: &[],
        }
    }

    fn all() -> Vec<Config> {
        vec![
            Config::base(),
            Config {
                name: "1 KiB blocks, zstd, ROWCOL bloom, io_uring when available, flush every 9, compact every 40, pre-split",
                block_size_bytes: 1024,
                compression: Compression::Zstd { level: 3 },
                bloom: BloomType::RowCol,
                io: IoMode::Auto,
                flush_every: Some(9),
                compact_every: Some(40),
                l0_compaction_trigger: 2,
                split_keys: &["r03", "r05", "r08"],
                ..Config::base()
            },
            Config {
                name: "2 KiB blocks, no bloom, tiny memstores flushing by themselves, major compaction every 60, splits",
                block_size_bytes: 2048,
                bloom: BloomType::None,
                memstore_flush_size_bytes: Some(64 * 1024),
                major_compact_every: Some(60),
                split_every: Some(45),
                l0_compaction_trigger: 2,
                ..Config::base()
            },
            Config {
                name: "4 KiB blocks, zstd, clean reopen every 70, flush every 23, pre-split at every row",
                block_size_bytes: 4096,
                compression: Compression::Zstd { level: 1 },
                flush_every: Some(23),
                reopen_every: Some(70),
                split_keys: &[
                    "r01", "r02", "r03", "r03x", "r04", "r05", "r06", "r07", "r08", "r09", "s",
                ],
                ..Config::base()
            },
        ]
    }
}

/// One database under test.
struct Subject {
    config: Config,
    clock: Arc<ManualClock>,
    table: Table,
    /// `None` only while reopening.
    db: Option<Db>,
    dir: tempfile::TempDir,
}

impl Subject {
    fn options(config: &Config, clock: &Arc<ManualClock>) -> DbOptions {
        DbOptions {
            io: config.io,
            clock: clock.clone(),
            wal_segment_bytes: 256 * 1024,
            block_cache_bytes: 256 * 1024,
            l0_compaction_trigger: config.l0_compaction_trigger,
            ..DbOptions::default()
        }
    }

    fn new(config: Config) -> Subject {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(1));
        let db = Db::open(dir.path(), Subject::options(&config, &clock)).unwrap();
        let family = |name: &str| {
            FamilyDescriptor::new(name)
                .block_size_bytes(config.block_size_bytes)
                .compression(config.compression)
                .bloom(config.bloom)
        };
        let mut descriptor = TableDescriptor::new("t")
            .family(family(FAMILIES[0]).max_versions(3))
            .family(family(FAMILIES[1]).ttl(Duration::from_millis(60)))
            .pre_split(strata::PreSplit::Keys(
                config
                    .split_keys
                    .iter()
                    .map(|k| k.as_bytes().to_vec())
                    .collect(),
            ));
        if let Some(bytes) = config.memstore_flush_size_bytes {
            descriptor = descriptor.memstore_flush_size_bytes(bytes);
        }
        let table = db.create_table(descriptor).unwrap();
        Subject {
            config,
            clock,
            table,
            db: Some(db),
            dir,
        }
    }

    fn reopen(&mut self) {
        if let Some(db) = self.db.take() {
            db.close().unwrap();
        }
        let db = Db::open(self.dir.path(), Subject::options(&self.config, &self.clock)).unwrap();
        self.table = db.table("t").unwrap();
        self.db = Some(db);
    }

    /// The maintenance this configuration does after operation `i`.
    fn maintain(&mut self, i: usize, rng_row: usize) {
        let due = |every: Option<usize>| every.is_some_and(|n| i % n == n - 1);
        if due(self.config.flush_every) {
            self.table.flush().unwrap();
        }
        if due(self.config.compact_every) {
            self.table.compact().unwrap();
        }
        if due(self.config.major_compact_every) {
            self.table.major_compact().unwrap();
        }
        if due(self.config.split_every) {
            // A split at a region's first row is refused; any other is fine.
            let _ = self.table.split(Some(ROWS[rng_row].as_bytes()));
        }
        if due(self.config.reopen_every) {
            self.reopen();
        }
    }
}

/// The rows as text; long values are cut to their length and a checksum.
fn rows_text(rows: &[RowResult]) -> String {
    let mut out = String::new();
    for row in rows {
        out.push_str(&String::from_utf8_lossy(&row.row));
        out.push('{');
        for c in &row.cells {
            out.push_str(&format!(
                "{}:{}@{}={} ",
                String::from_utf8_lossy(&c.family),
                String::from_utf8_lossy(&c.qualifier),
                c.timestamp,
                value_text(&c.value)
            ));
        }
        out.push('}');
    }
    out
}

fn value_text(value: &[u8]) -> String {
    if value.len() <= 16 {
        return String::from_utf8_lossy(value).into_owned();
    }
    let sum = value
        .iter()
        .fold(0u64, |h, &b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    format!(
        "{}..({} bytes, sum {sum:x})",
        String::from_utf8_lossy(&value[..4]),
        value.len()
    )
}

/// The read options a get or scan takes, drawn once and applied to either.
struct Query {
    family: Option<&'static str>,
    column: Option<(&'static str, &'static str)>,
    time: Option<(i64, i64)>,
    versions: Option<u32>,
    filter: Option<&'static str>,
}

impl Query {
    fn draw(rng: &mut Rng) -> Query {
        let family = rng.chance(25).then(|| *rng.pick(&FAMILIES));
        let column = (family.is_none() && rng.chance(25))
            .then(|| (*rng.pick(&FAMILIES), *rng.pick(&QUALIFIERS)));
        let time = rng.chance(25).then(|| {
            let a = rng.index(40) as i64;
            (a, a + 1 + rng.index(30) as i64)
        });
        let versions = rng.chance(40).then(|| *rng.pick(&[1u32, 2, 5]));
        let filter = rng.chance(35).then(|| *rng.pick(&FILTERS));
        Query {
            family,
            column,
            time,
            versions,
            filter,
        }
    }

    fn describe(&self) -> String {
        format!(
            "family {:?} column {:?} time {:?} versions {:?} filter {:?}",
            self.family, self.column, self.time, self.versions, self.filter
        )
    }

    fn get(&self, row: &str) -> Get {
        let mut get = Get::new(row);
        if let Some(f) = self.family {
            get = get.family(f);
        }
        if let Some((f, q)) = self.column {
            get = get.column(f, q);
        }
        if let Some((min, max)) = self.time {
            get = get.time_range(min, max);
        }
        if let Some(v) = self.versions {
            get = get.max_versions(v);
        }
        if let Some(filter) = self.filter {
            get = get.filter_string(filter).unwrap();
        }
        get
    }

    fn scan(&self) -> Scan {
        let mut scan = Scan::new();
        if let Some(f) = self.family {
            scan = scan.family(f);
        }
        if let Some((f, q)) = self.column {
            scan = scan.column(f, q);
        }
        if let Some((min, max)) = self.time {
            scan = scan.time_range(min, max);
        }
        if let Some(v) = self.versions {
            scan = scan.max_versions(v);
        }
        if let Some(filter) = self.filter {
            scan = scan.filter_string(filter).unwrap();
        }
        scan
    }
}

/// An operation, drawn once and run against every subject.
enum Op {
    Put(Put),
    Delete(Delete),
    Increment(Increment),
    CheckAndMutate(CheckAndMutate),
    MutateRow(RowMutations),
    Get(Query, &'static str),
    Scan(Query, Scan),
    Advance(i64),
}

fn draw_op(rng: &mut Rng) -> Op {
    let row = *rng.pick(&ROWS);
    let family = *rng.pick(&FAMILIES);
    let qualifier = *rng.pick(&QUALIFIERS);
    let ts = 1 + rng.index(40) as i64;
    let value = format!("v{}", rng.index(10));
    match rng.index(100) {
        0..=29 => {
            let mut put = Put::new(row);
            for _ in 0..1 + rng.index(3) {
                let (f, q, mut v) = (
                    *rng.pick(&FAMILIES),
                    *rng.pick(&QUALIFIERS),
                    format!("v{}", rng.index(10)),
                );
                if rng.chance(10) {
                    // Large values fill small memstores and blocks.
                    v.push_str(&"x".repeat(rng.index(8000)));
                }
                put = if rng.chance(50) {
                    put.add_at(f, q, 1 + rng.index(40) as i64, v)
                } else {
                    put.add(f, q, v)
                };
            }
            Op::Put(put)
        }
        30..=39 => {
            let d = Delete::new(row);
            Op::Delete(match rng.index(8) {
                0 => d,
                1 => d.timestamp(ts),
                2 => d.family(family),
                3 => d.family_up_to(family, ts),
                4 => d.family_version(family, ts),
                5 => d.column_all_versions(family, qualifier),
                6 => d.column_version(family, qualifier, ts),
                _ => d.column_latest_version(family, qualifier),
            })
        }
        40..=45 => Op::Increment(Increment::new(row).add(family, COUNTER, rng.index(7) as i64 - 3)),
        46..=51 => {
            let op = *rng.pick(&[
                CompareOp::Less,
                CompareOp::Equal,
                CompareOp::NotEqual,
                CompareOp::GreaterOrEqual,
            ]);
            let operand = if rng.chance(20) {
                Vec::new()
            } else {
                format!("v{}", rng.index(10)).into_bytes()
            };
            Op::CheckAndMutate(
                CheckAndMutate::builder(row)
                    .if_matches(family, qualifier, op, &operand)
                    .then_put(Put::new(row).add(family, qualifier, value)),
            )
        }
        52..=54 => Op::MutateRow(
            RowMutations::new(row)
                .delete(Delete::new(row).column_all_versions(family, qualifier))
                .put(Put::new(row).add(*rng.pick(&FAMILIES), *rng.pick(&QUALIFIERS), value)),
        ),
        55..=74 => Op::Get(Query::draw(rng), row),
        75..=94 => {
            let query = Query::draw(rng);
            let mut scan = query.scan();
            if rng.chance(50) {
                scan = scan.start(*rng.pick(&ROWS));
            }
            if rng.chance(40) {
                scan = scan.stop(*rng.pick(&ROWS));
            }
            if rng.chance(30) {
                scan = scan.reversed(true);
            }
            if rng.chance(20) {
                scan = scan.limit(1 + rng.index(4) as u64);
            }
            if rng.chance(15) {
                scan = scan.prefix("r0");
            }
            Op::Scan(query, scan)
        }
        _ => Op::Advance(1 + rng.index(6) as i64),
    }
}

fn outcome(what: &str, result: strata::Result<()>) -> String {
    match result {
        Ok(()) => format!("{what} ok"),
        Err(e) => format!("{what} error {e}"),
    }
}

/// Runs `op` on `subject`; returns what a reader would see.
fn run(subject: &Subject, op: &Op) -> String {
    let table = &subject.table;
    match op {
        Op::Put(put) => outcome("put", table.put(put)),
        Op::Delete(delete) => outcome("delete", table.delete(delete)),
        Op::Increment(increment) => match table.increment(increment) {
            Ok(row) => format!("increment {}", rows_text(&[row])),
            Err(e) => format!("increment error {e}"),
        },
        Op::CheckAndMutate(check) => match table.check_and_mutate(check) {
            Ok(outcome) => format!("check_and_mutate {}", outcome.success),
            Err(e) => format!("check_and_mutate error {e}"),
        },
        Op::MutateRow(mutations) => outcome("mutate_row", table.mutate_row(mutations)),
        Op::Get(query, row) => match table.get(&query.get(row)) {
            Ok(result) => format!("get {row} {}: {}", query.describe(), rows_text(&[result])),
            Err(e) => format!("get {row} {}: error {e}", query.describe()),
        },
        Op::Scan(query, scan) => {
            let rows: Result<Vec<RowResult>, _> = table.scan(scan).and_then(|s| s.collect());
            match rows {
                Ok(rows) => format!("scan {}: {}", query.describe(), rows_text(&rows)),
                Err(e) => format!("scan {}: error {e}", query.describe()),
            }
        }
        Op::Advance(ms) => {
            subject.clock.advance(*ms);
            format!("advance {ms}")
        }
    }
}

/// Runs `ops` operations drawn from `seed` against every configuration and
/// compares each one's transcript with the base configuration's.
fn round(seed: u64, ops: usize) {
    let mut subjects: Vec<Subject> = Config::all().into_iter().map(Subject::new).collect();
    let mut rng = Rng(seed);
    let mut transcripts: Vec<Vec<String>> = vec![Vec::new(); subjects.len()];
    for i in 0..ops {
        let op = draw_op(&mut rng);
        let split_row = rng.index(ROWS.len());
        for (subject, transcript) in subjects.iter_mut().zip(&mut transcripts) {
            transcript.push(run(subject, &op));
            subject.maintain(i, split_row);
        }
        let base = &transcripts[0][i];
        for (subject, transcript) in subjects.iter().zip(&transcripts).skip(1) {
            assert_eq!(
                &transcript[i], base,
                "seed {seed}, operation {i}: \"{}\" reads differently from \"{}\"",
                subject.config.name, subjects[0].config.name
            );
        }
    }
    // The operations did what they were drawn for: few fail (only
    // increments of a value that is no counter may), and reads see data.
    let failed = transcripts[0]
        .iter()
        .filter(|t| t.contains("error"))
        .count();
    let non_empty_reads = transcripts[0]
        .iter()
        .filter(|t| (t.starts_with("get") || t.starts_with("scan")) && t.contains('@'))
        .count();
    assert!(
        failed * 20 < ops,
        "seed {seed}: {failed} of {ops} operations failed"
    );
    assert!(
        non_empty_reads * 5 > ops,
        "seed {seed}: only {non_empty_reads} reads saw data"
    );
    // Every configuration ends with the same whole table.
    let scan_all = |s: &Subject| {
        let rows: Vec<RowResult> = s
            .table
            .scan(&Scan::new().all_versions())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        rows_text(&rows)
    };
    let base = scan_all(&subjects[0]);
    for subject in &subjects[1..] {
        assert_eq!(
            scan_all(subject),
            base,
            "seed {seed}: final contents of \"{}\"",
            subject.config.name
        );
    }
    for subject in subjects {
        let db = subject.db.unwrap();
        let error = db.background_error();
        assert!(error.is_none(), "{}: {error:?}", subject.config.name);
        db.close().unwrap();
    }
}

#[test]
fn random_operations_read_the_same_under_every_configuration() {
    for seed in [1, 2] {
        round(seed, 250);
    }
}

#[test]
#[ignore = "many rounds: cargo test --release -p strata-tests --test metamorphic -- --ignored --nocapture"]
fn metamorphic_rounds() {
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let rounds = env("METAMORPHIC_ROUNDS", 40);
    let ops = env("METAMORPHIC_OPS", 1500) as usize;
    let first = env("METAMORPHIC_SEED", 100);
    for seed in first..first + rounds {
        round(seed, ops);
    }
    println!(
        "metamorphic: {rounds} rounds of {ops} operations, seeds {first}..{}, all configurations agree",
        first + rounds
    );
}
