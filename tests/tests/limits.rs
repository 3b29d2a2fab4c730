//! Limits under load (`docs/reliability.md`, "Limits under load"): many
//! concurrent writers and scanners against a database with a tiny memstore
//! budget. Writes must stall, never fail; the memory the memstores hold
//! (the engine's own accounting, `Db::stats().memstore_bytes`) must stay
//! under the bound the stall rules promise; the process's resident memory
//! must stay within a generous margin; and every acknowledged write must
//! read back afterwards. Bounded in time (about three seconds of load).
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use strata::{Db, DbOptions, Durability, FamilyDescriptor, Get, Put, Scan, TableDescriptor};

const WRITERS: usize = 8;
const SCANNERS: usize = 4;
const LOAD_TIME: Duration = Duration::from_secs(3);
/// The smallest budgets the options accept.
const GLOBAL_LIMIT_BYTES: u64 = 1024 * 1024;
const FLUSH_SIZE_BYTES: u64 = 64 * 1024;
const VALUE_BYTES: usize = 2 * 1024;
/// Most rows one writer writes (the load also ends after [`LOAD_TIME`]).
const MAX_ROWS_PER_WRITER: u64 = 20_000;

/// Resident memory of this process in bytes, from `/proc/self/status`.
fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

fn value(writer: usize, i: u64) -> Vec<u8> {
    let mut v = format!("{writer}-{i}-").into_bytes();
    v.resize(VALUE_BYTES, b'a' + (i % 26) as u8);
    v
}

#[test]
fn writers_stall_instead_of_failing_and_memory_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(
        Db::open(
            dir.path(),
            DbOptions {
                global_memstore_limit_bytes: GLOBAL_LIMIT_BYTES,
                block_cache_bytes: 1024 * 1024,
                background_threads: 2,
                l0_compaction_trigger: 2,
                // Few L0 files before writers slow down and stop: the
                // compaction stall is exercised too.
                l0_slowdown_files: 4,
                l0_stop_files: 8,
                wal_segment_bytes: 1024 * 1024,
                ..DbOptions::default()
            },
        )
        .unwrap(),
    );
    db.create_table(
        TableDescriptor::new("t")
            .family(FamilyDescriptor::new("f"))
            .memstore_flush_size_bytes(FLUSH_SIZE_BYTES)
            .durability(Durability::AsyncWal)
            .pre_split(strata::PreSplit::Keys(vec![b"w4".to_vec()])),
    )
    .unwrap();
    let baseline_rss = rss_bytes();
    let stop = Arc::new(AtomicBool::new(false));
    let peak_memstore = Arc::new(AtomicU64::new(0));
    let peak_rss = Arc::new(AtomicU64::new(0));
    let started = Instant::now();

    let monitor = {
        let (db, stop, peak_memstore, peak_rss) = (
            db.clone(),
            stop.clone(),
            peak_memstore.clone(),
            peak_rss.clone(),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak_memstore.fetch_max(db.stats().memstore_bytes, Ordering::Relaxed);
                peak_rss.fetch_max(rss_bytes(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let table = db.table("t").unwrap();
                let mut written = 0u64;
                while written < MAX_ROWS_PER_WRITER && started.elapsed() < LOAD_TIME {
                    let row = format!("w{w}-{written:06}");
                    // A stalled write waits; it must not fail.
                    table
                        .put(&Put::new(row).add("f", "v", value(w, written)))
                        .unwrap_or_else(|e| panic!("writer {w}: write {written} failed: {e}"));
                    written += 1;
                }
                let _ = stop;
                written
            })
        })
        .collect();
    let scanners: Vec<_> = (0..SCANNERS)
        .map(|s| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let table = db.table("t").unwrap();
                let mut scans = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let prefix = format!("w{}", s % WRITERS);
                    let mut cursor = table.scan_cursor(&Scan::new().prefix(prefix)).unwrap();
                    let mut rows = 0u64;
                    while let Some(row) = cursor.next_row().unwrap() {
                        assert_eq!(row.len(), 1);
                        rows += 1;
                        if rows.is_multiple_of(256) && stop.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                    scans += 1;
                }
                scans
            })
        })
        .collect();

    // A writer stalled for good is a hang: report what the regions look
    // like and fail rather than wait forever.
    let watchdog = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let deadline = Instant::now() + LOAD_TIME + Duration::from_secs(30);
            while !stop.load(Ordering::Relaxed) {
                if Instant::now() > deadline {
                    eprintln!(
                        "writers still stalled 30 s after the load ended: {:#?}",
                        db.stats()
                    );
                    for region in db.table("t").unwrap().regions().unwrap() {
                        eprintln!("{region:?}");
                    }
                    eprintln!("background error: {:?}", db.background_error());
                    std::process::exit(1);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let written: Vec<u64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    stop.store(true, Ordering::Relaxed);
    let scans: u64 = scanners.into_iter().map(|s| s.join().unwrap()).sum();
    monitor.join().unwrap();
    watchdog.join().unwrap();
    let stats = db.stats();

    // The stall rules: a writer waits while all memstores hold 1.5 times the
    // global limit (or its region 4 times its flush size), checked before
    // it writes; so at most every writer's one mutation more can be on top.
    // Memstores allocate arenas in chunks of up to 1 MiB, one arena per
    // store being written and one per store being flushed.
    let regions = 2;
    let chunk_slack = 2 * regions * 1024 * 1024;
    let bound = GLOBAL_LIMIT_BYTES * 3 / 2 + (WRITERS * (VALUE_BYTES + 256)) as u64 + chunk_slack;
    let peak = peak_memstore.load(Ordering::Relaxed);
    let total: u64 = written.iter().sum();
    println!(
        "limits: {total} writes ({:.1} MiB) by {WRITERS} writers and {scans} scans by {SCANNERS} scanners in {:.1}s; \
         peak memstore {:.2} MiB (bound {:.2} MiB, global limit {:.2} MiB); \
         stalled {:.2}s in total; {} flushes, {} compactions; RSS {:.0} MiB before, peak {:.0} MiB",
        (total * VALUE_BYTES as u64) as f64 / (1 << 20) as f64,
        started.elapsed().as_secs_f64(),
        peak as f64 / (1 << 20) as f64,
        bound as f64 / (1 << 20) as f64,
        GLOBAL_LIMIT_BYTES as f64 / (1 << 20) as f64,
        stats.stall_micros as f64 / 1e6,
        stats.flushes,
        stats.compactions,
        baseline_rss as f64 / (1 << 20) as f64,
        peak_rss.load(Ordering::Relaxed) as f64 / (1 << 20) as f64,
    );
    assert!(
        peak <= bound,
        "memstores held {peak} bytes, over the bound {bound}"
    );
    // The load wrote several times the budget, so memory was given back.
    assert!(
        total * VALUE_BYTES as u64 > 4 * GLOBAL_LIMIT_BYTES,
        "only {total} writes: the load did not press on the budget"
    );
    assert!(stats.flushes > 4, "{stats:?}");
    assert!(
        db.background_error().is_none(),
        "{:?}",
        db.background_error()
    );
    // Resident memory: block cache (1 MiB), memstores, WAL buffers, read-ahead
    // and per-thread allocator caches; 256 MiB is a generous margin that an
    // unbounded queue or buffer would pass in these three seconds.
    let rss_growth = peak_rss
        .load(Ordering::Relaxed)
        .saturating_sub(baseline_rss);
    assert!(
        rss_growth < 256 * 1024 * 1024,
        "resident memory grew by {rss_growth} bytes"
    );

    // Every acknowledged write reads back.
    let table = db.table("t").unwrap();
    for (w, &count) in written.iter().enumerate() {
        for i in (0..count).step_by(97).chain(count.checked_sub(1)) {
            let got = table.get(&Get::new(format!("w{w}-{i:06}"))).unwrap();
            assert_eq!(
                got.value("f", "v"),
                Some(value(w, i).as_slice()),
                "w{w}-{i}"
            );
        }
    }
    Arc::try_unwrap(db).ok().unwrap().close().unwrap();
}
