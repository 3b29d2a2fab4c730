//! Child process of the snapshot and checkpoint crash test: round after
//! round, writes rows to table `t`, checkpoints the database, snapshots `t`,
//! clones the snapshot, deletes the previous snapshot and restores `t` from
//! the new one, printing `DONE <step> <round>` after each returns, until it
//! is killed (SIGKILL) or has run `MAX_ROUNDS` rounds.
//!
//! Usage: `snapshot_crash DB_DIR CHECKPOINTS_DIR FIRST_ROUND`
//! Round `r` writes rows `ROWS_PER_ROUND * r ..` and uses the names
//! `ckpt-r`, `s-r`, `c-r`; a child started after a kill goes on from the
//! round the parent gives it.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test child fails loudly"
)]

use std::io::Write;

use strata::{Durability, Put};

/// Rows each round writes before its checkpoint and snapshot.
const ROWS_PER_ROUND: u64 = 50;
/// Rounds a child runs at most.
const MAX_ROUNDS: u64 = 200;

fn done(step: &str, round: u64) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "DONE {step} {round}").expect("stdout");
    out.flush().expect("stdout");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, db_dir, checkpoints, first] = args.as_slice() else {
        eprintln!("usage: snapshot_crash DB_DIR CHECKPOINTS_DIR FIRST_ROUND");
        std::process::exit(2);
    };
    let first: u64 = first.parse().expect("FIRST_ROUND");
    let db = strata_tests::open_crash_db(db_dir, true).expect("open");
    let table = db.table("t").expect("table t");
    for round in first..first + MAX_ROUNDS {
        let rows: Vec<Put> = (round * ROWS_PER_ROUND..(round + 1) * ROWS_PER_ROUND)
            .map(|i| {
                Put::new(format!("row{i:08}"))
                    .add("f", "q", vec![b'v'; 300])
                    .durability(Durability::SyncWal)
            })
            .collect();
        table.put_many(&rows).expect("put");
        done("put", round);
        db.checkpoint(std::path::Path::new(checkpoints).join(format!("ckpt-{round}")))
            .expect("checkpoint");
        done("checkpoint", round);
        db.snapshot("t", &format!("s-{round}")).expect("snapshot");
        done("snapshot", round);
        db.clone_snapshot(&format!("s-{round}"), &format!("c-{round}"))
            .expect("clone");
        done("clone", round);
        if round > first {
            db.delete_snapshot(&format!("s-{}", round - 1))
                .expect("delete");
            done("delete", round);
        }
        db.disable_table("t").expect("disable");
        db.restore_snapshot(&format!("s-{round}")).expect("restore");
        db.enable_table("t").expect("enable");
        done("restore", round);
    }
}
