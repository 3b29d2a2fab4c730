//! Child process of the crash test: writes until it is killed.
//!
//! Usage: `crash_writer DB_DIR ACK_FILE PREFIX THREADS [busy]`
//! (`busy`: the options of [`strata_tests::crash_options`] with flushes and
//! compactions running all the time).
//!
//! Each thread writes rows `PREFIX-tT-NNNNNNNN` holding the same value in
//! families `a` and `b` (one mutation, `SyncWal`), and every fifth step
//! increments the counter row `PREFIX-counter-tT`. After each call returns,
//! it appends one line to ACK_FILE with a single `write` (O_APPEND), which
//! survives SIGKILL because it is in the kernel once `write` returns:
//! `P ROW VALUE` for puts, `C ROW COUNT` for increments.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test child fails loudly"
)]

use std::io::Write;
use std::sync::Arc;

use strata::{Durability, Increment, Put};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (dir, ack_path, prefix, threads, busy) = match args.as_slice() {
        [_, dir, ack, prefix, threads] => (dir, ack, prefix, threads, false),
        [_, dir, ack, prefix, threads, mode] if mode == "busy" => (dir, ack, prefix, threads, true),
        _ => {
            eprintln!("usage: crash_writer DB_DIR ACK_FILE PREFIX THREADS [busy]");
            std::process::exit(2);
        }
    };
    let threads: usize = threads.parse().expect("THREADS is a number");
    let db = strata_tests::open_crash_db(dir, busy).expect("open");
    let table = db.table("crash").expect("table");
    let ack = Arc::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(ack_path)
            .expect("ack file"),
    );
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let table = table.clone();
            let ack = ack.clone();
            let prefix = prefix.clone();
            std::thread::spawn(move || {
                let counter = format!("{prefix}-counter-t{t}");
                for n in 0u64.. {
                    let line = if n % 5 == 4 {
                        let r = table
                            .increment(
                                &Increment::new(&counter)
                                    .add("a", "n", 1)
                                    .durability(Durability::SyncWal),
                            )
                            .unwrap();
                        let count =
                            i64::from_be_bytes(r.value("a", "n").unwrap().try_into().unwrap());
                        format!("C {counter} {count}\n")
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
                            .unwrap();
                        format!("P {row} {value}\n")
                    };
                    (&*ack).write_all(line.as_bytes()).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}
