//! Three `strata sql-worker` processes on loopback, each holding a third of two tables' key
//! ranges, and one worker holding all of it, answer a word count, a filtered aggregate, key
//! ranges across shards, inside one shard and holding nothing, and a whole-table count exactly
//! as one process over all the data does; a worker that is gone fails the query with an error
//! naming it. Every process is stopped at the end, and every wait is bounded.

#![cfg(test)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use strata::{Db, FamilyDescriptor, Put, TableDescriptor};

/// Longest wait for a worker to say where it listens, or for a query to finish.
const DEADLINE: Duration = Duration::from_secs(120);

fn strata() -> Command {
    Command::new(env!("CARGO_BIN_EXE_strata"))
}

/// A running worker, stopped when dropped.
struct Worker {
    child: Child,
    url: String,
}

impl Worker {
    fn start(data: &Path) -> Worker {
        let mut child = strata()
            .args(["sql-worker", "--listen", "127.0.0.1:0", "--data"])
            .arg(data)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(DEADLINE)
            .expect("the worker says where it listens");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Worker { child, url }
    }

    /// Stops the worker with SIGTERM (a clean close) and waits for it.
    fn stop(mut self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) on our own child's pid, which has not been waited for yet.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let status = wait_bounded(&mut self.child);
        assert!(status.success(), "the worker exited with {status}");
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_bounded(child: &mut Child) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("a process ran past {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `strata sql` with `args`; exit code, stdout, stderr.
fn sql(args: &[&str]) -> (i32, String, String) {
    let mut child = strata()
        .arg("sql")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
        text
    });
    let status = wait_bounded(&mut child);
    (
        status.code().unwrap_or(-1),
        out.join().unwrap(),
        err.join().unwrap(),
    )
}

const SHARD_BOUNDS: [&str; 2] = ["k0100", "k0200"];

/// The rows of shard `shard` (0, 1, 2) of the key range, or all of them.
fn in_shard(key: &str, shard: Option<usize>) -> bool {
    match shard {
        None => true,
        Some(0) => key < SHARD_BOUNDS[0],
        Some(1) => key >= SHARD_BOUNDS[0] && key < SHARD_BOUNDS[1],
        Some(_) => key >= SHARD_BOUNDS[1],
    }
}

const WORDS: [&str; 7] = [
    "storage", "region", "scan", "flush", "kernel", "bloom", "merge",
];

/// Creates the tables and loads the rows of `shard` (`None`: every row; `Some(9)`: none).
fn load(dir: &Path, shard: Option<usize>) {
    let db = Db::open_default(dir).unwrap();
    let docs = db
        .create_table(TableDescriptor::new("docs").family(FamilyDescriptor::new("t")))
        .unwrap();
    let sales = db
        .create_table(TableDescriptor::new("sales").family(FamilyDescriptor::new("s")))
        .unwrap();
    for i in 0..300usize {
        let key = format!("k{i:04}");
        if !in_shard(&key, shard) || shard == Some(9) {
            continue;
        }
        let line: Vec<&str> = (0..(i % 5 + 1))
            .map(|j| WORDS[(i * 3 + j) % WORDS.len()])
            .collect();
        docs.put(&Put::new(&key).add("t", "line", line.join(" ")))
            .unwrap();
        sales
            .put(
                &Put::new(&key)
                    .add("s", "region", ["north", "south", "east", "west"][i % 4])
                    .add("s", "amount", ((i * 37 % 101) as i64).to_be_bytes()),
            )
            .unwrap();
    }
    db.close().unwrap();
}

const MAPPING: &str = "CREATE EXTERNAL TABLE sales_by (id VARCHAR NOT NULL, region VARCHAR NOT NULL, amount BIGINT NOT NULL) \
                       STORED AS STRATA LOCATION 'sales' OPTIONS ('mapping' ':key,s:region,s:amount#b')";

const QUERIES: [&str; 6] = [
    "SELECT word, count(*) AS n FROM (SELECT unnest(string_to_array(CAST(value AS VARCHAR), ' ')) AS word FROM docs) \
     GROUP BY word ORDER BY n DESC, word",
    "SELECT region, count(*) AS n, sum(amount) AS total FROM sales_by WHERE amount > 50 GROUP BY region ORDER BY region",
    "SELECT count(*) AS n, min(id) AS first, max(id) AS last FROM sales_by WHERE id >= 'k0150' AND id < 'k0250'",
    // Every row, no filter: a scan of each worker's whole shard.
    "SELECT count(*) AS n, sum(amount) AS total FROM sales_by",
    // Rows of one shard only: one worker holds every partition of the scan.
    "SELECT count(*) AS n, sum(amount) AS total, max(id) AS last FROM sales_by WHERE id >= 'k0010' AND id < 'k0020'",
    // A key range no row can be in: no worker is asked.
    "SELECT count(*) AS n FROM sales_by WHERE id > 'k5' AND id < 'k4'",
];

/// Runs `query` through a session over `catalog` whose scans run on the workers of the map
/// `cluster`, answering in CSV; exit code, stdout, stderr.
fn sql_on(catalog: &str, cluster: &str, query: &str) -> (i32, String, String) {
    sql(&[
        "--data",
        catalog,
        "--cluster",
        cluster,
        "--format",
        "csv",
        "-e",
        query,
    ])
}

/// A cluster map: each worker's url with the key range it holds of both tables.
fn cluster_map(workers: &[(&str, &str, &str)]) -> String {
    format!(
        "{{\"workers\": [{}]}}",
        workers
            .iter()
            .map(|(url, start, end)| format!(
                "{{\"url\": \"{url}\", \"shards\": [{{\"table\": \"docs\", \"start\": \"{start}\", \"end\": \"{end}\"}}, \
                 {{\"table\": \"sales\", \"start\": \"{start}\", \"end\": \"{end}\"}}]}}"
            ))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[test]
fn three_workers_answer_as_one_process_does() {
    let root = tempfile::tempdir().unwrap();
    let (single, catalog) = (root.path().join("single"), root.path().join("catalog"));
    load(&single, None);
    load(&catalog, Some(9));
    for data in [&single, &catalog] {
        let (code, _, err) = sql(&["--data", data.to_str().unwrap(), "-e", MAPPING]);
        assert_eq!(code, 0, "{err}");
    }
    let mut workers = Vec::new();
    for shard in 0..3 {
        let dir = root.path().join(format!("shard{shard}"));
        load(&dir, Some(shard));
        workers.push(Worker::start(&dir));
    }
    // Every row on one more worker: a cluster of one process (whose every scan one worker
    // holds).
    let whole = root.path().join("whole");
    load(&whole, None);
    let lone = Worker::start(&whole);
    let bounds = ["", SHARD_BOUNDS[0], SHARD_BOUNDS[1], ""];
    let shards: Vec<(&str, &str, &str)> = workers
        .iter()
        .enumerate()
        .map(|(i, w)| (w.url.as_str(), bounds[i], bounds[i + 1]))
        .collect();
    let cluster = root.path().join("cluster.json");
    std::fs::write(&cluster, cluster_map(&shards)).unwrap();
    let one_worker = root.path().join("one-worker.json");
    std::fs::write(&one_worker, cluster_map(&[(lone.url.as_str(), "", "")])).unwrap();
    let one_worker = one_worker.to_str().unwrap();
    let (single, catalog, cluster) = (
        single.to_str().unwrap(),
        catalog.to_str().unwrap(),
        cluster.to_str().unwrap(),
    );
    for query in QUERIES {
        let (code, one, err) = sql(&["--data", single, "--format", "csv", "-e", query]);
        assert_eq!(code, 0, "{err}");
        assert!(one.lines().count() > 1, "{query}: {one}");
        let (code, three, err) = sql_on(catalog, cluster, query);
        assert_eq!(code, 0, "{query}: {err}");
        assert_eq!(three, one, "{query}");
        let (code, on_one_worker, err) = sql_on(catalog, one_worker, query);
        assert_eq!(code, 0, "{query}: {err}");
        assert_eq!(on_one_worker, one, "{query} on one worker");
    }
    // A scan one worker holds runs there, not in the coordinating process.
    let (_, plan, _) = sql_on(catalog, one_worker, &format!("EXPLAIN {}", QUERIES[3]));
    assert!(plan.contains(&lone.url), "{plan}");
    // The plan shows the scans placed on the workers.
    let (_, plan, _) = sql_on(catalog, cluster, &format!("EXPLAIN {}", QUERIES[1]));
    for worker in &workers {
        assert!(plan.contains(&worker.url), "{plan}");
    }
    // A worker that is gone: the query fails, naming it, and prints no answer.
    let mut gone = workers.remove(1);
    gone.child.kill().unwrap();
    gone.child.wait().unwrap();
    let (code, out, err) = sql_on(catalog, cluster, QUERIES[1]);
    assert_eq!(code, 1, "{out}");
    assert!(out.is_empty(), "{out}");
    let port = gone.url.rsplit(':').next().unwrap();
    assert!(
        err.contains(port),
        "the error names the worker {}: {err}",
        gone.url
    );
    for worker in workers {
        worker.stop();
    }
    lone.stop();
}
