//! Child process of the crash test: writes until it is killed, or until a
//! simulated power loss stops it.
//!
//! Usage: `crash_writer DB_DIR ACK_FILE PREFIX THREADS [busy] [power-loss CALLS SEED [torn] [on KIND]]`
//! (`busy`: the options of [`strata_tests::crash_options`] with flushes and
//! compactions running all the time).
//!
//! Each thread writes rows `PREFIX-tT-NNNNNNNN` holding the same value in
//! families `a` and `b` (one mutation, `SyncWal`), every fifth step
//! increments the counter row `PREFIX-counter-tT`, and every fifth step
//! (another one) writes three rows `PREFIX-tT-NNNNNNNN-m0..m2` in one
//! multi-row mutation (`Table::mutate_rows`). After each call returns,
//! it appends one line to ACK_FILE with a single `write` (O_APPEND), which
//! survives SIGKILL because it is in the kernel once `write` returns:
//! `P ROW VALUE` for puts, `C ROW COUNT` for increments, `M STEM VALUE` for
//! multi-row mutations (rows `STEM-m0..m2`). A multi-row mutation a split
//! put across two regions is refused and not acknowledged.
//!
//! With `power-loss CALLS SEED`, the database runs on the fault-injecting
//! back end, which loses power at its mutating I/O call number CALLS (any
//! call: a WAL write, a flush, a compaction, a manifest edit, a segment
//! switch, the open itself; with `on KIND` (`hfile`, `manifest`, `wal`,
//! `directory`), the CALLS-th mutating call on a file of that kind, to land
//! inside a flush or compaction, a manifest edit, a segment switch); every
//! writer stops at its first error, the
//! database is dropped, and everything not durable is dropped from the
//! directory (or, with `torn`, torn at a sector boundary). The process then
//! prints where the power went out (`crash: OP KIND` or `crash: none`) and
//! exits 0; the parent checks the directory as after a SIGKILL. Any error
//! other than the power loss exits non-zero.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "a test child fails loudly"
)]

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use strata::fault::{FaultInjector, FileKind, PowerLoss};
use strata::{Db, Durability, Error, Increment, Mutation, Put, Table};

/// Rows of each multi-row mutation the writer makes.
const ROWS_PER_MULTI_ROW_MUTATION: usize = 3;

/// Longest a power-loss child writes before it cuts the power itself.
const POWER_LOSS_DEADLINE: Duration = Duration::from_secs(10);

struct PowerLossPlan {
    calls: u64,
    seed: u64,
    torn: bool,
    on: Option<FileKind>,
}

struct Args {
    dir: String,
    ack_path: String,
    prefix: String,
    threads: usize,
    busy: bool,
    power_loss: Option<PowerLossPlan>,
}

fn usage() -> ! {
    eprintln!(
        "usage: crash_writer DB_DIR ACK_FILE PREFIX THREADS [busy] \
         [power-loss CALLS SEED [torn] [on KIND]]"
    );
    std::process::exit(2);
}

fn parse_args() -> Args {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, ack_path, prefix, threads, rest @ ..] = args.as_slice() else {
        usage()
    };
    let mut args = Args {
        dir: dir.clone(),
        ack_path: ack_path.clone(),
        prefix: prefix.clone(),
        threads: threads.parse().unwrap_or_else(|_| usage()),
        busy: false,
        power_loss: None,
    };
    let mut rest = rest.iter();
    while let Some(word) = rest.next() {
        match word.as_str() {
            "busy" => args.busy = true,
            "power-loss" => {
                let mut number = || -> u64 {
                    rest.next()
                        .and_then(|v| v.parse().ok())
                        .unwrap_or_else(|| usage())
                };
                args.power_loss = Some(PowerLossPlan {
                    calls: number(),
                    seed: number(),
                    torn: false,
                    on: None,
                });
            }
            "on" => {
                let kind = match rest.next().map(String::as_str) {
                    Some("hfile") => FileKind::HFile,
                    Some("manifest") => FileKind::Manifest,
                    Some("wal") => FileKind::Wal,
                    Some("directory") => FileKind::Directory,
                    _ => usage(),
                };
                match &mut args.power_loss {
                    Some(plan) => plan.on = Some(kind),
                    None => usage(),
                }
            }
            "torn" => match &mut args.power_loss {
                Some(plan) => plan.torn = true,
                None => usage(),
            },
            _ => usage(),
        }
    }
    args
}

/// One writer: puts and increments until an error (the power loss; any
/// other error panics), acknowledging each in `ack`.
fn write_until_failure(
    table: &Table,
    ack: &std::fs::File,
    prefix: &str,
    t: usize,
    faults: Option<&FaultInjector>,
) {
    let counter = format!("{prefix}-counter-t{t}");
    for n in 0u64.. {
        let outcome = if n % 5 == 4 {
            table
                .increment(
                    &Increment::new(&counter)
                        .add("a", "n", 1)
                        .durability(Durability::SyncWal),
                )
                .map(|r| {
                    let count = i64::from_be_bytes(r.value("a", "n").unwrap().try_into().unwrap());
                    format!("C {counter} {count}\n")
                })
        } else if n % 5 == 2 {
            let stem = format!("{prefix}-t{t}-{n:08}");
            let value = format!("value-{t}-{n}");
            let rows: Vec<Mutation> = (0..ROWS_PER_MULTI_ROW_MUTATION)
                .map(|k| {
                    Mutation::Put(
                        Put::new(format!("{stem}-m{k}"))
                            .add("a", "v", &value)
                            .add("b", "v", &value)
                            .durability(Durability::SyncWal),
                    )
                })
                .collect();
            match table.mutate_rows(&rows) {
                // A split fell between the rows: refused whole, not acknowledged.
                Err(Error::RowsSpanRegions { .. }) => continue,
                outcome => outcome.map(|()| format!("M {stem} {value}\n")),
            }
        } else {
            let row = format!("{prefix}-t{t}-{n:08}");
            let value = format!("value-{t}-{n}");
            table
                .put(
                    &Put::new(&row)
                        .add("a", "v", &value)
                        .add("b", "v", &value)
                        .durability(Durability::SyncWal),
                )
                .map(|()| format!("P {row} {value}\n"))
        };
        match outcome {
            Ok(line) => (&*ack).write_all(line.as_bytes()).unwrap(),
            Err(_) if faults.is_some_and(FaultInjector::has_crashed) => return,
            Err(e) => panic!("write failed without a power loss: {e}"),
        }
    }
}

fn main() {
    let args = parse_args();
    let faults = args
        .power_loss
        .as_ref()
        .map(|plan| FaultInjector::new(plan.seed));
    if let (Some(faults), Some(plan)) = (&faults, &args.power_loss) {
        match plan.on {
            Some(kind) => faults.crash_at_call_on(kind, plan.calls),
            None => faults.crash_at_call(plan.calls),
        }
    }
    let opened = match &faults {
        // Retried while locked, as the parent's opens are: another crash
        // test's child may briefly hold the lock file's descriptor.
        Some(faults) => strata_tests::retry_while_locked(|| {
            Db::open_with_faults(&args.dir, strata_tests::crash_options(args.busy), faults)
        }),
        None => strata_tests::open_crash_db(&args.dir, args.busy),
    };
    let db = match opened {
        Ok(db) => Some(db),
        // The power went out while opening (replay, manifest rewrite, ...).
        Err(_) if faults.as_ref().is_some_and(FaultInjector::has_crashed) => None,
        Err(e) => panic!("open: {e}"),
    };
    if let Some(db) = db {
        let table = db.table("crash").expect("table");
        let ack = Arc::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&args.ack_path)
                .expect("ack file"),
        );
        let workers: Vec<_> = (0..args.threads)
            .map(|t| {
                let table = table.clone();
                let ack = ack.clone();
                let prefix = args.prefix.clone();
                let faults = faults.clone();
                std::thread::spawn(move || {
                    write_until_failure(&table, &ack, &prefix, t, faults.as_ref())
                })
            })
            .collect();
        if let Some(faults) = &faults {
            let deadline = Instant::now() + POWER_LOSS_DEADLINE;
            while !workers.iter().all(|w| w.is_finished()) {
                if Instant::now() > deadline {
                    faults.crash_now();
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        for w in workers {
            w.join().unwrap();
        }
    }
    let (Some(faults), Some(plan)) = (&faults, &args.power_loss) else {
        return;
    };
    let point = faults.crash_point();
    let mode = if plan.torn {
        PowerLoss::torn(plan.seed)
    } else {
        PowerLoss::drop_unsynced()
    };
    faults.power_loss(mode).expect("power loss");
    match point {
        Some(point) if point.op.is_some() => println!(
            "crash: {} {}",
            point.op.map_or("-", |op| op.name()),
            point.kind.map_or("-", |k| k.name())
        ),
        _ => println!("crash: none"),
    }
}
