//! Expiry that frees space, measured: a table whose family has a TTL is
//! written continuously, and every few seconds the example prints how many
//! bytes its files take on disk against the bytes still live (written within
//! the last TTL). The compaction checker drops files whose every cell
//! expired, so the files stay within about twice the live data instead of
//! growing with everything ever written.
//!
//! Run: `cargo run --release --example ttl_space [SECONDS] [TTL_SECONDS]
//! [ROWS_PER_SECOND] [VALUE_BYTES]` (defaults 600, 60, 1000, 500). Prints one
//! line per 10 s: elapsed seconds, live MiB, file MiB, memstore MiB, files,
//! and file bytes over live bytes.

use std::time::{Duration, Instant};

use strata::{Db, DbOptions, Durability, FamilyDescriptor, Put, Result, TableDescriptor};

/// How often a line is printed.
const REPORT_EVERY: Duration = Duration::from_secs(10);
/// Region memstores flush at this size, so files appear every few seconds.
const FLUSH_BYTES: u64 = 4 * 1024 * 1024;

fn arg(index: usize, default: u64) -> u64 {
    std::env::args()
        .nth(index)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn main() -> Result<()> {
    let seconds = arg(1, 600);
    let ttl_seconds = arg(2, 60);
    let rows_per_second = arg(3, 1000).max(1);
    let value_bytes = arg(4, 500) as usize;
    let dir = std::env::temp_dir().join(format!("strata-ttl-space-{}", std::process::id()));
    let db = Db::open(&dir, DbOptions::default())?;
    let table = db.create_table(
        TableDescriptor::new("events")
            .family(FamilyDescriptor::new("e").ttl(Duration::from_secs(ttl_seconds)))
            .memstore_flush_size_bytes(FLUSH_BYTES)
            .durability(Durability::AsyncWal),
    )?;
    let value = vec![b'v'; value_bytes];
    let row_bytes = 16 + value_bytes as u64;
    let start = Instant::now();
    let mut written: u64 = 0;
    let mut next_report = REPORT_EVERY;
    println!("seconds live_mib file_mib memstore_mib files file_over_live");
    while start.elapsed() < Duration::from_secs(seconds) {
        // Keep to the rate: write the rows due by now.
        let due = (start.elapsed().as_secs_f64() * rows_per_second as f64) as u64;
        while written < due {
            table.put(&Put::new(format!("{written:016}")).add("e", "q", &value))?;
            written += 1;
        }
        if start.elapsed() >= next_report {
            next_report += REPORT_EVERY;
            let elapsed = start.elapsed().as_secs();
            let live_rows = rows_per_second * elapsed.min(ttl_seconds);
            let live = (live_rows * row_bytes) as f64;
            let stats = db.stats();
            let mib = |bytes: f64| bytes / (1024.0 * 1024.0);
            println!(
                "{elapsed} {:.1} {:.1} {:.1} {} {:.2}",
                mib(live),
                mib(stats.file_bytes as f64),
                mib(stats.memstore_bytes as f64),
                stats.files,
                stats.file_bytes as f64 / live
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    db.close()?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
