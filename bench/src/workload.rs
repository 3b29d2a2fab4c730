//! The workloads: what each one loads, what each thread does, and what it
//! counts. Timing and measurement around them live in `runner`.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::cold::PageCacheEvictor;
use crate::engine::Engine;
use crate::error::{BenchError, Result};
use crate::keys::{KeyShape, ValuePool};
use crate::measure::Latencies;
use crate::pages::{self, Census};
use crate::random::{Rng, mix64};
use crate::ycsb::{
    InsertCounter, MAX_SCAN_LENGTH, ScrambledZipfian, SkewedLatest, YcsbKind, YcsbOp,
};

/// Entries read after each seek of `seekrandom`.
pub const SEEK_NEXT_ENTRIES: u64 = 100;
/// Keys per batch of `multiget`.
pub const MULTIGET_BATCH_KEYS: usize = 64;
/// Rows per scan of `pe-scan100`.
pub const PE_SCAN_ROWS: u64 = 100;
/// `filterscan-prefix` runs one query per this many records by default.
pub const PREFIX_QUERY_EVERY_RECORDS: u64 = 100;
/// Full-table passes (queries) of `filterscan-mask` and `filterscan-value`
/// by default.
pub const FILTER_SCAN_PASSES: u64 = 4;
/// Operations a thread completes between two updates of the shared
/// progress counter.
const PROGRESS_BATCH_OPS: u64 = 256;

/// One benchmark workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Write `num` keys in key order.
    FillSeq,
    /// Write each of `num` keys once, in random order.
    FillRandom,
    /// Overwrite random existing keys.
    Overwrite,
    /// Read random existing keys.
    ReadRandom,
    /// Read random absent keys (each sorts next to a present key).
    ReadMissing,
    /// `readrandom` on every client thread while one more thread overwrites
    /// random keys without pause.
    ReadWhileWriting,
    /// Seek to a random key, then read the next 100 entries.
    SeekRandom,
    /// Read batches of 64 random existing keys.
    MultiGet,
    /// Read every entry in key order (each thread one key range).
    Scan,
    /// A YCSB core workload.
    Ycsb(YcsbKind),
    /// HBase PerformanceEvaluation `sequentialWrite`.
    PeSequentialWrite,
    /// HBase PerformanceEvaluation `randomRead`.
    PeRandomRead,
    /// HBase PerformanceEvaluation `scanRange100`.
    PeScan100,
    /// Scenario 4's records; each operation is one query for every record
    /// of a url (a key prefix).
    FilterScanPrefix,
    /// Scenario 4's records; each query tests every key for
    /// `sdate = D AND code = C` (two non-leading key fields); ops are rows
    /// examined.
    FilterScanMask,
    /// Scenario 4's records; each query tests every value for a score in
    /// its first 8 bytes; ops are rows examined.
    FilterScanValue,
    /// Write `num` keys in key order into the engine's external file format
    /// and ingest them (strata: `BulkWriter` + `Table::bulk_load`; RocksDB:
    /// `SstFileWriter` + `ingest_external_file`; fjall: `start_ingestion`),
    /// timed end to end; then random reads, timed apart.
    BulkLoad,
}

/// Random reads `bulkload` makes after its load (at most), timed apart.
pub const BULKLOAD_READS_AFTER: u64 = 100_000;

/// The phases of one `bulkload` run.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BulkPhases {
    /// Seconds writing the files (every record added, files synced).
    pub build_seconds: f64,
    /// Seconds ingesting them (fjall: its `finish`, which registers the
    /// tables its writes already made).
    pub ingest_seconds: f64,
    /// Bytes of the files built (0 for fjall, which has no separate files).
    pub file_bytes: u64,
    /// Random reads after the load, and their rate.
    pub reads_after: u64,
    /// Reads per second of those reads.
    pub reads_after_per_sec: f64,
}

/// How a workload's data is loaded before its timed phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadOrder {
    /// fillrandom: each key once, in random order.
    Random,
    /// YCSB's load phase: records `0..num` in order; their keys are hashed,
    /// so the key order is random too.
    Ycsb,
}

impl Workload {
    /// Every workload, in the order of the full list.
    pub const ALL: [Workload; 22] = [
        Workload::FillSeq,
        Workload::FillRandom,
        Workload::Overwrite,
        Workload::ReadRandom,
        Workload::ReadMissing,
        Workload::ReadWhileWriting,
        Workload::SeekRandom,
        Workload::MultiGet,
        Workload::Scan,
        Workload::Ycsb(YcsbKind::A),
        Workload::Ycsb(YcsbKind::B),
        Workload::Ycsb(YcsbKind::C),
        Workload::Ycsb(YcsbKind::D),
        Workload::Ycsb(YcsbKind::E),
        Workload::Ycsb(YcsbKind::F),
        Workload::PeSequentialWrite,
        Workload::PeRandomRead,
        Workload::PeScan100,
        Workload::FilterScanPrefix,
        Workload::FilterScanMask,
        Workload::FilterScanValue,
        Workload::BulkLoad,
    ];

    /// Name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Workload::FillSeq => "fillseq",
            Workload::BulkLoad => "bulkload",
            Workload::FillRandom => "fillrandom",
            Workload::Overwrite => "overwrite",
            Workload::ReadRandom => "readrandom",
            Workload::ReadMissing => "readmissing",
            Workload::ReadWhileWriting => "readwhilewriting",
            Workload::SeekRandom => "seekrandom",
            Workload::MultiGet => "multiget",
            Workload::Scan => "scan",
            Workload::Ycsb(YcsbKind::A) => "ycsb-a",
            Workload::Ycsb(YcsbKind::B) => "ycsb-b",
            Workload::Ycsb(YcsbKind::C) => "ycsb-c",
            Workload::Ycsb(YcsbKind::D) => "ycsb-d",
            Workload::Ycsb(YcsbKind::E) => "ycsb-e",
            Workload::Ycsb(YcsbKind::F) => "ycsb-f",
            Workload::PeSequentialWrite => "pe-sequentialwrite",
            Workload::PeRandomRead => "pe-randomread",
            Workload::PeScan100 => "pe-scan100",
            Workload::FilterScanPrefix => "filterscan-prefix",
            Workload::FilterScanMask => "filterscan-mask",
            Workload::FilterScanValue => "filterscan-value",
        }
    }

    /// Parses a comma-separated list of workload names (`all` for every one).
    pub fn parse_list(list: &str) -> Result<Vec<Workload>> {
        if list.trim() == "all" {
            return Ok(Workload::ALL.to_vec());
        }
        list.split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|name| {
                Workload::ALL
                    .into_iter()
                    .find(|w| w.name() == name)
                    .ok_or_else(|| {
                        let known: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
                        BenchError::Usage(format!(
                            "unknown workload '{name}'; known: {}",
                            known.join(", ")
                        ))
                    })
            })
            .collect()
    }

    /// How keys look: PerformanceEvaluation's 26-digit keys, scenario 4's
    /// composite keys, or db_bench's.
    pub fn key_shape(self, key_bytes: usize) -> KeyShape {
        if self.is_pe() {
            KeyShape::Pe
        } else if self.is_filter_scan() {
            KeyShape::Pages
        } else {
            KeyShape::DbBench { key_bytes }
        }
    }

    /// Value size: PerformanceEvaluation's 1000 bytes, the configured one,
    /// or for scenario 4's records at least the 8-byte score.
    pub fn value_bytes(self, configured: usize) -> usize {
        if self.is_pe() {
            crate::keys::PE_VALUE_BYTES
        } else if self.is_filter_scan() {
            configured.max(pages::SCORE_BYTES)
        } else {
            configured
        }
    }

    /// True for the `filterscan-*` workloads (scenario 4's records).
    pub fn is_filter_scan(self) -> bool {
        matches!(
            self,
            Workload::FilterScanPrefix | Workload::FilterScanMask | Workload::FilterScanValue
        )
    }

    fn is_pe(self) -> bool {
        matches!(
            self,
            Workload::PeSequentialWrite | Workload::PeRandomRead | Workload::PeScan100
        )
    }

    /// True for the workloads whose timed phase only reads (what `--cold`
    /// applies to).
    pub fn reads_only(self) -> bool {
        matches!(
            self,
            Workload::ReadRandom
                | Workload::ReadMissing
                | Workload::SeekRandom
                | Workload::MultiGet
                | Workload::Scan
                | Workload::Ycsb(YcsbKind::C)
                | Workload::PeRandomRead
                | Workload::PeScan100
                | Workload::FilterScanPrefix
                | Workload::FilterScanMask
                | Workload::FilterScanValue
        )
    }

    /// How the data is loaded (untimed) before the timed phase; `None` for
    /// workloads that start from an empty database.
    pub fn load_order(self) -> Option<LoadOrder> {
        match self {
            Workload::FillSeq
            | Workload::FillRandom
            | Workload::PeSequentialWrite
            | Workload::BulkLoad => None,
            Workload::Ycsb(_) => Some(LoadOrder::Ycsb),
            _ => Some(LoadOrder::Random),
        }
    }

    /// Whether the timed phase ends with `load_finished` (the final flush):
    /// the write workloads, as db_bench's fill benchmarks are measured with
    /// their flush.
    pub fn ends_with_flush(self) -> bool {
        matches!(
            self,
            Workload::FillSeq
                | Workload::FillRandom
                | Workload::Overwrite
                | Workload::PeSequentialWrite
        )
    }

    /// Operations of the timed phase: a write, a read, a seek with its
    /// entries, a batch of 64 keys, a prefix query, or (for `scan` and the
    /// full-table filter scans) one entry examined. `scan` and the
    /// full-table filter scans make whole passes, so their ops round up to
    /// a multiple of `num` (`scan`: one pass unless more are asked for).
    pub fn ops(self, num: u64, requested: Option<u64>) -> u64 {
        match self {
            Workload::FillSeq
            | Workload::FillRandom
            | Workload::PeSequentialWrite
            | Workload::BulkLoad => num,
            Workload::MultiGet => requested.unwrap_or((num / MULTIGET_BATCH_KEYS as u64).max(1)),
            Workload::FilterScanPrefix => {
                requested.unwrap_or((num / PREFIX_QUERY_EVERY_RECORDS).max(1))
            }
            Workload::FilterScanMask | Workload::FilterScanValue => {
                whole_passes(num, requested, FILTER_SCAN_PASSES)
            }
            Workload::Scan => whole_passes(num, requested, 1),
            _ => requested.unwrap_or(num),
        }
    }

    /// Writes the key of record `index` into `out`.
    pub fn record_key(self, shape: KeyShape, index: u64, out: &mut Vec<u8>) {
        match self {
            Workload::Ycsb(_) => shape.write_key(mix64(index), out),
            _ => shape.write_key(index, out),
        }
    }
}

/// What the threads of one phase share.
pub struct PhaseContext<'a> {
    /// The engine under test.
    pub engine: &'a dyn Engine,
    /// The workload.
    pub workload: Workload,
    /// Key shape.
    pub shape: KeyShape,
    /// Values to write.
    pub values: &'a ValuePool,
    /// Records loaded (or written by fills).
    pub num: u64,
    /// Operations of the whole phase.
    pub ops: u64,
    /// Client threads (`readwhilewriting` runs one writer thread more).
    pub threads: usize,
    /// Run seed.
    pub seed: u64,
    /// Record order of fillrandom and of random loads.
    pub order: Option<&'a [u64]>,
    /// YCSB's insert sequence.
    pub inserts: &'a InsertCounter,
    /// Operations done so far, for the progress bar.
    pub progress: &'a AtomicU64,
    /// Reader threads that finished (the `readwhilewriting` writer stops
    /// when all have).
    pub readers_finished: &'a AtomicUsize,
    /// Matches each filter query must return (`filterscan-*` only).
    pub census: Option<&'a Census>,
    /// Cold reads: evicts the database directory's page cache before every
    /// operation of the timed phase, untimed (`None`: warm).
    pub evictor: Option<&'a Mutex<PageCacheEvictor>>,
    /// Where `bulkload` writes its files (on the database's file system).
    pub bulk_dir: Option<&'a std::path::Path>,
}

/// What one thread did.
#[derive(Debug)]
pub struct ThreadOutcome {
    /// Operations completed.
    pub ops: u64,
    /// Keys looked up by point reads.
    pub reads: u64,
    /// Point reads that found their key.
    pub found: u64,
    /// Records written.
    pub writes: u64,
    /// Entries returned by scans.
    pub scanned: u64,
    /// Bytes of keys and values written or returned.
    pub bytes: u64,
    /// Latency of each operation.
    pub latencies: Latencies,
    /// Time between operations spent on work that is not measured (cold
    /// reads' page-cache eviction): in no latency, and taken out of the
    /// phase's seconds.
    pub untimed: Duration,
    /// The phases of a `bulkload` run.
    pub bulk: Option<BulkPhases>,
}

impl ThreadOutcome {
    fn new() -> Result<ThreadOutcome> {
        Ok(ThreadOutcome {
            ops: 0,
            reads: 0,
            found: 0,
            writes: 0,
            scanned: 0,
            bytes: 0,
            latencies: Latencies::new()?,
            untimed: Duration::ZERO,
            bulk: None,
        })
    }

    /// Adds another thread's counts.
    pub fn merge(&mut self, other: &ThreadOutcome) {
        self.ops += other.ops;
        self.reads += other.reads;
        self.found += other.found;
        self.writes += other.writes;
        self.scanned += other.scanned;
        self.bytes += other.bytes;
        self.latencies.merge(&other.latencies);
        self.untimed += other.untimed;
        self.bulk = self.bulk.or(other.bulk);
    }
}

/// Ops of a phase of whole passes over `num` records: `requested` ops
/// rounded up to a multiple of `num`, or `default_passes` passes; at least
/// one pass.
fn whole_passes(num: u64, requested: Option<u64>, default_passes: u64) -> u64 {
    let passes = requested.map_or(default_passes, |r| r.div_ceil(num.max(1)));
    passes.max(1) * num
}

/// The slice `0..total` that thread `thread` of `threads` takes.
pub fn thread_share(total: u64, threads: usize, thread: usize) -> std::ops::Range<u64> {
    let (threads, thread) = (threads as u64, thread as u64);
    let base = total / threads;
    let extra = total % threads;
    let start = thread * base + thread.min(extra);
    let len = base + u64::from(thread < extra);
    start..start + len
}

/// Times operations back to back: each latency runs from the end of the
/// previous operation (so it includes choosing the key, a few tens of ns).
struct OpClock {
    last: Instant,
    since_progress: u64,
}

impl OpClock {
    fn start() -> OpClock {
        OpClock {
            last: Instant::now(),
            since_progress: 0,
        }
    }

    fn tick(&mut self, outcome: &mut ThreadOutcome, progress: &AtomicU64) {
        let now = Instant::now();
        outcome.latencies.record(now - self.last);
        self.last = now;
        outcome.ops += 1;
        self.since_progress += 1;
        if self.since_progress == PROGRESS_BATCH_OPS {
            progress.fetch_add(PROGRESS_BATCH_OPS, Ordering::Relaxed);
            self.since_progress = 0;
        }
    }

    fn finish(self, progress: &AtomicU64) {
        progress.fetch_add(self.since_progress, Ordering::Relaxed);
    }

    /// Cold reads: evicts the page cache before the next operation, untimed
    /// (see `untimed`). Nothing happens when the run is warm.
    fn evict(&mut self, ctx: &PhaseContext<'_>, outcome: &mut ThreadOutcome) -> Result<()> {
        match ctx.evictor {
            Some(evictor) => self.untimed(outcome, || evictor.lock().evict()),
            None => Ok(()),
        }
    }

    /// Runs `work` between two operations and restarts the clock after it,
    /// so the next latency starts when `work` is done; the time since the
    /// previous operation ended goes to `outcome.untimed`, which the runner
    /// takes out of the phase's seconds.
    fn untimed(
        &mut self,
        outcome: &mut ThreadOutcome,
        work: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        work()?;
        let now = Instant::now();
        outcome.untimed += now - self.last;
        self.last = now;
        Ok(())
    }
}

/// Marks a reader finished even when it fails, so the writer of
/// `readwhilewriting` never waits forever.
struct ReaderDone<'a>(&'a AtomicUsize);

impl Drop for ReaderDone<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// Runs thread `thread`'s part of the timed phase.
pub fn run_thread(ctx: &PhaseContext<'_>, thread: usize) -> Result<ThreadOutcome> {
    let mut rng = Rng::for_thread(ctx.seed, ctx.workload.name(), thread);
    let mut out = ThreadOutcome::new()?;
    let mut key = Vec::with_capacity(64);
    let mut clock = OpClock::start();
    let share = thread_share(ctx.ops, ctx.threads, thread);
    let engine = ctx.engine;
    let key_bytes = ctx.shape.key_bytes() as u64;
    match ctx.workload {
        // One stream in key order: thread 0 makes it, the others idle.
        Workload::BulkLoad if thread > 0 => {}
        Workload::BulkLoad => {
            let dir = ctx
                .bulk_dir
                .ok_or_else(|| BenchError::Check("bulkload needs a directory".into()))?;
            let started = Instant::now();
            let mut loader = engine.bulk_loader(dir)?;
            for index in 0..ctx.num {
                ctx.workload.record_key(ctx.shape, index, &mut key);
                let value = ctx.values.value(&mut rng);
                loader.add(&key, value)?;
                out.writes += 1;
                out.bytes += key_bytes + value.len() as u64;
                clock.tick(&mut out, ctx.progress);
            }
            let file_bytes = loader.finish_files()?;
            let build = started.elapsed();
            let ingest_started = Instant::now();
            loader.ingest()?;
            let ingest = ingest_started.elapsed();
            // Reads afterwards, timed apart (not in the load's seconds).
            let reads_started = Instant::now();
            let reads = ctx.num.min(BULKLOAD_READS_AFTER);
            for _ in 0..reads {
                ctx.workload
                    .record_key(ctx.shape, rng.below(ctx.num), &mut key);
                if engine.get(&key)?.is_none() {
                    return Err(BenchError::Check("a bulk-loaded record is missing".into()));
                }
            }
            let read_time = reads_started.elapsed();
            out.untimed += read_time;
            out.bulk = Some(BulkPhases {
                build_seconds: build.as_secs_f64(),
                ingest_seconds: ingest.as_secs_f64(),
                file_bytes,
                reads_after: reads,
                reads_after_per_sec: reads as f64 / read_time.as_secs_f64().max(1e-9),
            });
        }
        Workload::FillSeq | Workload::PeSequentialWrite => {
            for index in share {
                ctx.workload.record_key(ctx.shape, index, &mut key);
                let value = ctx.values.value(&mut rng);
                engine.put(&key, value)?;
                out.writes += 1;
                out.bytes += key_bytes + value.len() as u64;
                clock.tick(&mut out, ctx.progress);
            }
        }
        Workload::FillRandom => {
            let order = ctx.order.unwrap_or_default();
            for position in share {
                let index = order.get(position as usize).copied().unwrap_or(position);
                ctx.workload.record_key(ctx.shape, index, &mut key);
                let value = ctx.values.value(&mut rng);
                engine.put(&key, value)?;
                out.writes += 1;
                out.bytes += key_bytes + value.len() as u64;
                clock.tick(&mut out, ctx.progress);
            }
        }
        Workload::Overwrite => {
            for _ in share {
                ctx.workload
                    .record_key(ctx.shape, rng.below(ctx.num), &mut key);
                let value = ctx.values.value(&mut rng);
                engine.put(&key, value)?;
                out.writes += 1;
                out.bytes += key_bytes + value.len() as u64;
                clock.tick(&mut out, ctx.progress);
            }
        }
        Workload::ReadRandom | Workload::PeRandomRead | Workload::ReadMissing => {
            let missing = ctx.workload == Workload::ReadMissing;
            for _ in share {
                clock.evict(ctx, &mut out)?;
                let index = rng.below(ctx.num);
                if missing {
                    ctx.shape.write_missing_key(index, &mut key);
                } else {
                    ctx.workload.record_key(ctx.shape, index, &mut key);
                }
                read_one(engine, &key, &mut out)?;
                clock.tick(&mut out, ctx.progress);
            }
        }
        Workload::ReadWhileWriting => {
            if thread == ctx.threads {
                return overwrite_until_readers_finish(ctx, rng);
            }
            let _done = ReaderDone(ctx.readers_finished);
            for _ in share {
                ctx.workload
                    .record_key(ctx.shape, rng.below(ctx.num), &mut key);
                read_one(engine, &key, &mut out)?;
                clock.tick(&mut out, ctx.progress);
            }
        }
        Workload::SeekRandom => {
            for _ in share {
                clock.evict(ctx, &mut out)?;
                ctx.workload
                    .record_key(ctx.shape, rng.below(ctx.num), &mut key);
                let count = engine.scan(&key, None, SEEK_NEXT_ENTRIES)?;
                out.scanned += count.entries;
                out.bytes += count.bytes;
                clock.tick(&mut out, ctx.progress);
            }
        }
        Workload::PeScan100 => {
            let mut stop = Vec::with_capacity(64);
            for _ in share {
                clock.evict(ctx, &mut out)?;
                let start = rng.below(ctx.num);
                ctx.workload.record_key(ctx.shape, start, &mut key);
                ctx.workload
                    .record_key(ctx.shape, start + PE_SCAN_ROWS, &mut stop);
                let count = engine.scan(&key, Some(&stop), PE_SCAN_ROWS)?;
                out.scanned += count.entries;
                out.bytes += count.bytes;
                clock.tick(&mut out, ctx.progress);
            }
        }
        Workload::MultiGet => {
            let mut keys: Vec<Vec<u8>> = (0..MULTIGET_BATCH_KEYS)
                .map(|_| Vec::with_capacity(64))
                .collect();
            for _ in share {
                clock.evict(ctx, &mut out)?;
                for k in &mut keys {
                    ctx.workload.record_key(ctx.shape, rng.below(ctx.num), k);
                }
                let found = engine.multi_get(&keys)?;
                out.reads += keys.len() as u64;
                out.found += found;
                out.bytes += found * (key_bytes + ctx.values.value_bytes() as u64);
                clock.tick(&mut out, ctx.progress);
            }
        }
        Workload::Scan => {
            // The key space is cut into one range per thread; ops are
            // entries. Every thread reads its range once per pass (more
            // passes than one make a phase long enough to time steadily).
            let range = thread_share(ctx.num, ctx.threads, thread);
            let expected = range.end - range.start;
            ctx.workload.record_key(ctx.shape, range.start, &mut key);
            let mut end = Vec::new();
            let end = (thread + 1 < ctx.threads).then(|| {
                ctx.workload.record_key(ctx.shape, range.end, &mut end);
                end
            });
            for _ in 0..(ctx.ops / ctx.num.max(1)).max(1) {
                // Timed by its own clock: a fresh one takes the eviction untimed.
                OpClock::start().evict(ctx, &mut out)?;
                let count = engine.scan(&key, end.as_deref(), u64::MAX)?;
                if count.entries != expected {
                    return Err(BenchError::Check(format!(
                        "scan of thread {thread} returned {} entries, {expected} were loaded",
                        count.entries
                    )));
                }
                out.ops += count.entries;
                out.scanned += count.entries;
                out.bytes += count.bytes;
                ctx.progress.fetch_add(count.entries, Ordering::Relaxed);
            }
            // One latency sample would be the whole scan; a full scan has no
            // per-operation latency.
            return Ok(out);
        }
        Workload::FilterScanPrefix => {
            let census = census(ctx)?;
            for _ in share {
                clock.evict(ctx, &mut out)?;
                let (query, url) = pages::prefix_query(ctx.num, &mut rng);
                let count = engine.filter_scan(&query)?;
                check_matches(ctx.workload, count.entries, census.with_url(url))?;
                out.scanned += count.entries;
                out.bytes += count.bytes;
                clock.tick(&mut out, ctx.progress);
            }
        }
        Workload::FilterScanMask | Workload::FilterScanValue => {
            // Each query is a pass over the whole table; its latency is the
            // pass's, its ops the rows it examined.
            let census = census(ctx)?;
            let passes = thread_share(ctx.ops / ctx.num.max(1), ctx.threads, thread);
            for _ in passes {
                let (query, expected) = if ctx.workload == Workload::FilterScanMask {
                    let (query, date, code) = pages::mask_query(&mut rng);
                    (query, census.with_date_and_code(date, code))
                } else {
                    let (query, score) = pages::value_query(&mut rng);
                    (query, census.with_score(score))
                };
                // Timed by its own clock: a fresh one takes the eviction untimed.
                OpClock::start().evict(ctx, &mut out)?;
                let started = Instant::now();
                let count = engine.filter_scan(&query)?;
                out.latencies.record(started.elapsed());
                check_matches(ctx.workload, count.entries, expected)?;
                out.ops += ctx.num;
                out.scanned += count.entries;
                out.bytes += count.bytes;
                ctx.progress.fetch_add(ctx.num, Ordering::Relaxed);
            }
            return Ok(out);
        }
        Workload::Ycsb(kind) => run_ycsb(
            ctx,
            kind,
            share.end - share.start,
            &mut rng,
            &mut out,
            &mut clock,
        )?,
    }
    clock.finish(ctx.progress);
    Ok(out)
}

fn census<'a>(ctx: &PhaseContext<'a>) -> Result<&'a Census> {
    ctx.census
        .ok_or_else(|| BenchError::Check(format!("{} ran without its census", ctx.workload.name())))
}

/// A filter query must return exactly the records the census counted.
fn check_matches(workload: Workload, matched: u64, expected: u64) -> Result<()> {
    if matched == expected {
        Ok(())
    } else {
        Err(BenchError::Check(format!(
            "a {} query matched {matched} records, {expected} match",
            workload.name()
        )))
    }
}

fn read_one(engine: &dyn Engine, key: &[u8], out: &mut ThreadOutcome) -> Result<()> {
    out.reads += 1;
    if let Some(value_len) = engine.get(key)? {
        out.found += 1;
        out.bytes += (key.len() + value_len) as u64;
    }
    Ok(())
}

/// The extra writer thread of `readwhilewriting`: overwrites random keys
/// until every reader has finished. Its writes are counted, not timed.
fn overwrite_until_readers_finish(ctx: &PhaseContext<'_>, mut rng: Rng) -> Result<ThreadOutcome> {
    let mut out = ThreadOutcome::new()?;
    let mut key = Vec::with_capacity(64);
    while ctx.readers_finished.load(Ordering::Acquire) < ctx.threads {
        ctx.workload
            .record_key(ctx.shape, rng.below(ctx.num), &mut key);
        let value = ctx.values.value(&mut rng);
        ctx.engine.put(&key, value)?;
        out.writes += 1;
        out.bytes += (key.len() + value.len()) as u64;
    }
    Ok(out)
}

/// How a YCSB thread picks existing records.
enum KeyChooser {
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
}

impl KeyChooser {
    /// An existing record: YCSB draws again while the draw is past the last
    /// acknowledged insert.
    fn next(&mut self, rng: &mut Rng, inserts: &InsertCounter) -> u64 {
        loop {
            let count = inserts.count();
            let index = match self {
                KeyChooser::Zipfian(z) => z.next(rng),
                KeyChooser::Latest(l) => l.next(rng, count),
            };
            if index < count {
                return index;
            }
        }
    }
}

fn run_ycsb(
    ctx: &PhaseContext<'_>,
    kind: YcsbKind,
    ops: u64,
    rng: &mut Rng,
    out: &mut ThreadOutcome,
    clock: &mut OpClock,
) -> Result<()> {
    let engine = ctx.engine;
    // YCSB sizes the zipfian's range with room for the expected inserts.
    let expected_new = (ctx.ops as f64 * kind.insert_proportion() * 2.0) as u64;
    let mut chooser = if kind.uses_latest() {
        KeyChooser::Latest(SkewedLatest::new(ctx.num))
    } else {
        KeyChooser::Zipfian(ScrambledZipfian::new(0, ctx.num + expected_new - 1))
    };
    // Work done before the first operation (zeta for "latest") is not timed.
    *clock = OpClock::start();
    let mut key = Vec::with_capacity(64);
    let key_bytes = ctx.shape.key_bytes() as u64;
    for _ in 0..ops {
        clock.evict(ctx, out)?;
        match kind.next_op(rng) {
            YcsbOp::Read => {
                let index = chooser.next(rng, ctx.inserts);
                ctx.workload.record_key(ctx.shape, index, &mut key);
                read_one(engine, &key, out)?;
            }
            YcsbOp::Update => {
                let index = chooser.next(rng, ctx.inserts);
                ctx.workload.record_key(ctx.shape, index, &mut key);
                let value = ctx.values.value(rng);
                engine.put(&key, value)?;
                out.writes += 1;
                out.bytes += key_bytes + value.len() as u64;
            }
            YcsbOp::Insert => {
                let index = ctx.inserts.claim();
                ctx.workload.record_key(ctx.shape, index, &mut key);
                let value = ctx.values.value(rng);
                engine.put(&key, value)?;
                ctx.inserts.acknowledge(index);
                out.writes += 1;
                out.bytes += key_bytes + value.len() as u64;
            }
            YcsbOp::Scan => {
                let index = chooser.next(rng, ctx.inserts);
                ctx.workload.record_key(ctx.shape, index, &mut key);
                let length = 1 + rng.below(MAX_SCAN_LENGTH);
                let count = engine.scan(&key, None, length)?;
                out.scanned += count.entries;
                out.bytes += count.bytes;
            }
            YcsbOp::ReadModifyWrite => {
                let index = chooser.next(rng, ctx.inserts);
                ctx.workload.record_key(ctx.shape, index, &mut key);
                read_one(engine, &key, out)?;
                let value = ctx.values.value(rng);
                engine.put(&key, value)?;
                out.writes += 1;
                out.bytes += key_bytes + value.len() as u64;
            }
        }
        clock.tick(out, ctx.progress);
    }
    Ok(())
}

/// Thread `thread`'s part of the untimed load: records in `order` (or
/// `0..num` for YCSB), written with `put_for_load`.
pub fn load_thread(ctx: &PhaseContext<'_>, thread: usize) -> Result<u64> {
    let mut rng = Rng::for_thread(ctx.seed, "load", thread);
    let mut key = Vec::with_capacity(64);
    let mut page_value = Vec::new();
    let mut since_progress = 0;
    let mut written = 0;
    for position in thread_share(ctx.num, ctx.threads, thread) {
        let index = match ctx.order {
            Some(order) => order.get(position as usize).copied().unwrap_or(position),
            None => position,
        };
        ctx.workload.record_key(ctx.shape, index, &mut key);
        let mut value = ctx.values.value(&mut rng);
        if ctx.shape == KeyShape::Pages {
            // Scenario 4's values start with the record's score.
            pages::write_value(index, value, ctx.values.value_bytes(), &mut page_value);
            value = &page_value;
        }
        ctx.engine.put_for_load(&key, value)?;
        written += 1;
        since_progress += 1;
        if since_progress == PROGRESS_BATCH_OPS {
            ctx.progress.fetch_add(since_progress, Ordering::Relaxed);
            since_progress = 0;
        }
    }
    ctx.progress.fetch_add(since_progress, Ordering::Relaxed);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for w in Workload::ALL {
            assert_eq!(Workload::parse_list(w.name()).unwrap(), vec![w]);
        }
        assert_eq!(
            Workload::parse_list("all").unwrap().len(),
            Workload::ALL.len()
        );
        assert!(Workload::parse_list("filterscan-nope").is_err());
    }

    #[test]
    fn untimed_work_is_in_no_latency() {
        let progress = AtomicU64::new(0);
        let mut out = ThreadOutcome::new().unwrap();
        let mut clock = OpClock::start();
        let pause = Duration::from_millis(30);
        for _ in 0..3 {
            clock
                .untimed(&mut out, || {
                    std::thread::sleep(pause);
                    Ok(())
                })
                .unwrap();
            clock.tick(&mut out, &progress);
        }
        assert_eq!(out.ops, 3);
        assert!(out.untimed >= pause * 3, "{:?}", out.untimed);
        // The operations themselves took next to nothing.
        assert!(
            out.latencies.max_us() < 10_000.0,
            "{}",
            out.latencies.max_us()
        );
    }

    #[test]
    fn cold_mode_covers_the_read_only_workloads() {
        for w in [
            Workload::ReadRandom,
            Workload::ReadMissing,
            Workload::MultiGet,
        ] {
            assert!(w.reads_only(), "{}", w.name());
        }
        for w in Workload::ALL {
            // A workload without a load starts empty: it writes.
            if w.load_order().is_none() || w.ends_with_flush() {
                assert!(!w.reads_only(), "{}", w.name());
            }
        }
        assert!(!Workload::ReadWhileWriting.reads_only());
        assert!(!Workload::Ycsb(YcsbKind::A).reads_only());
    }

    #[test]
    fn thread_shares_cover_everything_once() {
        for (total, threads) in [(10, 3), (2, 4), (1_000_003, 7)] {
            let mut next = 0;
            for t in 0..threads {
                let share = thread_share(total, threads, t);
                assert_eq!(share.start, next);
                next = share.end;
            }
            assert_eq!(next, total);
        }
    }
}
