//! The background I/O budget (`DbOptions::background_write_bytes_per_sec`):
//! flush and compaction writes are paced to it and counted in
//! `Db::metrics`, while gets and puts go on unthrottled.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use strata::{Db, DbOptions, Error, FamilyDescriptor, Get, Put, TableDescriptor};

/// 1 MiB a second: one 100 ms refill is 104,857 bytes.
const LIMIT: u64 = 1024 * 1024;
const REFILL_BYTES: u64 = LIMIT / 10;

/// Compaction stays out of the way until the test asks for it.
fn options() -> DbOptions {
    DbOptions {
        l0_compaction_trigger: 8,
        l0_slowdown_files: 20,
        l0_stop_files: 30,
        ..DbOptions::default()
    }
}

/// A value that compresses badly and differs per row (no family codec is
/// set, but the sizes should not depend on that).
fn value(row: u32) -> Vec<u8> {
    (0..200u32)
        .map(|i| (row.wrapping_mul(2_654_435_761).wrapping_add(i * 40_503) >> 13) as u8)
        .collect()
}

#[test]
fn a_compaction_under_a_tight_budget_takes_its_bytes_over_the_rate_while_gets_and_puts_go_on() {
    let dir = tempfile::tempdir().unwrap();
    // Two flushed files of about 0.6 MiB each, written without a budget.
    {
        let db = Db::open(dir.path(), options()).unwrap();
        let table = db
            .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
            .unwrap();
        for file in 0..2u32 {
            for i in 0..2_800u32 {
                let row = i * 2 + file;
                table
                    .put(&Put::new(format!("row{row:06}")).add("f", "q", value(row)))
                    .unwrap();
            }
            table.flush().unwrap();
        }
        db.close().unwrap();
    }

    let db = Db::open(dir.path(), options().with_background_write_limit(LIMIT)).unwrap();
    let table = db.table("t").unwrap();
    let before = db.metrics();
    let budget = before.io_budget.expect("a budget is set");
    assert_eq!(budget.bytes_per_sec, LIMIT);
    assert_eq!(budget.compaction_bytes, 0);

    let compacting = AtomicBool::new(true);
    let (elapsed, foreground_ops) = std::thread::scope(|s| {
        let compaction = s.spawn(|| {
            let started = Instant::now();
            table.major_compact().unwrap();
            compacting.store(false, Ordering::SeqCst);
            started.elapsed()
        });
        // Gets and puts keep working while the compaction waits for its
        // budget: WAL appends and reads never draw from it.
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut ops = 0u32;
        while compacting.load(Ordering::SeqCst) && ops < 2_000 && Instant::now() < deadline {
            let row = ops * 2;
            let got = table.get(&Get::new(format!("row{row:06}"))).unwrap();
            assert_eq!(got.value("f", "q"), Some(&value(row)[..]));
            table
                .put(&Put::new(format!("new{ops:06}")).add("f", "q", "v"))
                .unwrap();
            ops += 1;
            std::thread::sleep(Duration::from_millis(1));
        }
        (compaction.join().unwrap(), ops)
    });

    let after = db.metrics();
    let budget = after.io_budget.unwrap();
    let compacted = after.stats.hfile_bytes_written - before.stats.hfile_bytes_written;
    // Every byte of the new file went through the budget, as compaction.
    assert_eq!(budget.compaction_bytes, compacted);
    assert_eq!(budget.flush_bytes, 0);
    assert!(compacted > 1024 * 1024, "compacted {compacted} bytes");
    // The first refill's bytes go at once; the rest take their time at the
    // rate (less 50 ms for timer granularity).
    let least = Duration::from_secs_f64((compacted - REFILL_BYTES) as f64 / LIMIT as f64);
    assert!(
        elapsed + Duration::from_millis(50) >= least,
        "{compacted} bytes in {elapsed:?}, at least {least:?} expected"
    );
    assert!(budget.compaction_waited + Duration::from_millis(50) >= least);
    assert!(
        foreground_ops > 0,
        "no get or put ran during the compaction"
    );
    for i in 0..foreground_ops {
        assert!(
            !table
                .get(&Get::new(format!("new{i:06}")))
                .unwrap()
                .is_empty()
        );
    }
    assert_eq!(
        table.count(&strata::Scan::new()).unwrap(),
        5_600 + u64::from(foreground_ops)
    );
    db.close().unwrap();
}

#[test]
fn flushes_draw_from_the_budget_as_flushes_and_an_unset_budget_reports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        options().with_background_write_limit(64 * LIMIT),
    )
    .unwrap();
    let table = db
        .create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap();
    for i in 0..500u32 {
        table
            .put(&Put::new(format!("row{i:06}")).add("f", "q", value(i)))
            .unwrap();
    }
    let before = db.metrics().stats.hfile_bytes_written;
    table.flush().unwrap();
    let metrics = db.metrics();
    let budget = metrics.io_budget.unwrap();
    assert_eq!(
        budget.flush_bytes,
        metrics.stats.hfile_bytes_written - before
    );
    assert!(budget.flush_bytes > 0);
    assert_eq!(budget.compaction_bytes, 0);
    db.close().unwrap();

    let unlimited = Db::open(dir.path(), options()).unwrap();
    assert_eq!(unlimited.metrics().io_budget, None);
    unlimited.close().unwrap();
}

#[test]
fn a_budget_below_64_kib_a_second_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let refused = Db::open(
        dir.path(),
        DbOptions::default().with_background_write_limit(1000),
    );
    match refused {
        Err(Error::InvalidOption { name, reason }) => {
            assert_eq!(name, "background_write_bytes_per_sec");
            assert!(reason.contains("64 KiB/s"), "{reason}");
        }
        other => panic!("expected InvalidOption, got {other:?}"),
    }
}
