//! Puts to one region while a bulk load fills another: their latency before
//! and during the load (issue 16's "puts to other regions keep their p99
//! within 2x of their baseline while a load runs").
//!
//! Run: `cargo run --release --example bulk_under_load [LOAD_MB] [ROUNDS]`
//! (default 256 MB per load, 3 rounds). Each round: a writer thread puts
//! rows into region `a` (SyncWal, one at a time) for the baseline, then
//! while the main thread writes and loads LOAD_MB of sorted cells into
//! region `b`; the put latencies of both phases are printed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use strata::{
    BulkLoadOptions, Db, FamilyDescriptor, PreSplit, Put, Result, Table, TableDescriptor,
};

/// Phases of the writer: 0 baseline, 1 during the load, 2 stop.
const BASELINE: u8 = 0;
const DURING: u8 = 1;
const STOP: u8 = 2;

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    let at = ((sorted.len() as f64 * q) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(at).copied().unwrap_or_default()
}

fn writer(table: Table, phase: Arc<AtomicU8>, done: Arc<AtomicBool>) -> [Vec<Duration>; 2] {
    let mut latencies = [Vec::new(), Vec::new()];
    let mut i = 0u64;
    loop {
        let current = phase.load(Ordering::Acquire);
        if current == STOP {
            break;
        }
        let started = Instant::now();
        let put = Put::new(format!("a{i:012}")).add("f", "q", [7u8; 100]);
        if table.put(&put).is_err() {
            break;
        }
        if let Some(bucket) = latencies.get_mut(usize::from(current)) {
            bucket.push(started.elapsed());
        }
        i += 1;
        // About 2,000 puts a second: a steady load, not a saturating one.
        std::thread::sleep(Duration::from_micros(500));
    }
    done.store(true, Ordering::Release);
    latencies
}

fn main() -> Result<()> {
    let arg = |n: usize, default: u64| {
        std::env::args()
            .nth(n)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let (load_mb, rounds) = (arg(1, 256), arg(2, 3));
    let dir = tempfile::tempdir().map_err(|e| strata::Error::Io {
        context: "creating a temporary directory".into(),
        source: Arc::new(e),
    })?;
    let db = Db::open_default(dir.path().join("db"))?;
    let table = db.create_table(
        TableDescriptor::new("t")
            .family(FamilyDescriptor::new("f"))
            .pre_split(PreSplit::Keys(vec![b"b".to_vec()])),
    )?;
    let cells = load_mb * 1_000_000 / 116;
    for round in 0..rounds {
        let phase = Arc::new(AtomicU8::new(BASELINE));
        let done = Arc::new(AtomicBool::new(false));
        let handle = {
            let (table, phase, done) = (table.clone(), phase.clone(), done.clone());
            std::thread::spawn(move || writer(table, phase, done))
        };
        std::thread::sleep(Duration::from_secs(3));
        phase.store(DURING, Ordering::Release);
        let started = Instant::now();
        let mut bulk = table.bulk_writer(dir.path().join(format!("load-{round}")))?;
        for i in 0..cells {
            let row = format!("b{round:02}{i:013}");
            bulk.add(row.as_bytes(), b"f", b"q", 1, &[9u8; 100])?;
        }
        let files = bulk.finish()?;
        let built = started.elapsed();
        let report = table.bulk_load(&files.paths(), &BulkLoadOptions::default())?;
        let loaded = started.elapsed();
        phase.store(STOP, Ordering::Release);
        let [mut baseline, mut during] = handle.join().map_err(|_| strata::Error::Closed)?;
        baseline.sort();
        during.sort();
        println!(
            "round {round}: load of {load_mb} MB into region b: build {built:.2?}, total \
             {loaded:.2?} ({} files)",
            report.files_installed
        );
        for (name, sorted) in [("baseline", &baseline), ("during load", &during)] {
            println!(
                "  puts to region a, {name:>11}: {:>6} puts, p50 {:>8.1?}, p99 {:>8.1?}, max {:>8.1?}",
                sorted.len(),
                percentile(sorted, 0.5),
                percentile(sorted, 0.99),
                sorted.last().copied().unwrap_or_default()
            );
        }
        let ratio = percentile(&during, 0.99).as_secs_f64()
            / percentile(&baseline, 0.99).as_secs_f64().max(1e-9);
        println!("  p99 during / baseline: {ratio:.2}x");
        assert!(done.load(Ordering::Acquire));
    }
    db.close()
}
