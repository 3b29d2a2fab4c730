//! Child process of the bulk-load crash test: loads the files of a
//! directory into table `t` and, when the load reaches the given step,
//! prints `REACHED STEP` and waits to be killed.
//!
//! Usage: `bulk_crash DB_DIR FILES_DIR STEP move|copy`
//! (`STEP` is a `strata::BulkLoadStep` name, e.g. `Committed`).
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test child fails loudly"
)]

use std::io::Write;
use std::sync::Arc;

use strata::{BulkLoadOptions, Put};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, db_dir, files_dir, step, mode] = args.as_slice() else {
        eprintln!("usage: bulk_crash DB_DIR FILES_DIR STEP move|copy");
        std::process::exit(2);
    };
    let db = strata_tests::open_crash_db(db_dir, false).expect("open");
    let table = db.table("t").expect("table t");
    // A row in the load's range waits in a memstore: the load flushes it.
    table
        .put(&Put::new("row000100-live").add("f", "q", "live"))
        .expect("put");
    let mut files: Vec<_> = std::fs::read_dir(files_dir)
        .expect("files")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let target = step.clone();
    let options = BulkLoadOptions::default()
        .copy(mode == "copy")
        .on_step(Arc::new(move |reached| {
            if format!("{reached:?}") == target {
                let mut out = std::io::stdout().lock();
                writeln!(out, "REACHED {reached:?}").expect("stdout");
                out.flush().expect("stdout");
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(60));
                }
            }
        }));
    table.bulk_load(&files, &options).expect("bulk load");
    println!("DONE");
}
