//! `strata-sql-bench`: SQL over strata against DataFusion over Parquet and against strata's
//! own scan API, on a wide mapped table (10,000,000 rows by default).
//!
//! ```text
//! strata-sql-bench [--rows N] [--dir DIR] [--runs 5] [--partitions 1,2] [--workers]
//!                  [--configs NAME,..] [--queries NAME,..]   (names containing one of these)
//!                  [--cache-mb N]   (the block cache of the in-process database)
//! strata-sql-bench worker --data DIR --listen ADDR      (one process of the --workers runs)
//! ```
//!
//! The table `t` (`id BIGINT UNSIGNED` key, `cat VARCHAR`, `amount BIGINT`, `qty BIGINT`,
//! `note VARCHAR`) is bulk-loaded once into DIR/strata (kept for later runs) and written to
//! Parquet with DataFusion's default settings (DIR/parquet). Four queries: `count(*)`, an
//! aggregate filtered by a predicate the engine runs as a value kernel, a GROUP BY, and a key
//! range. Each runs on strata-sql with pushdown, strata-sql without pushdown, DataFusion over
//! the Parquet files, and the same work written by hand against strata's scan API, at each
//! partition count; runs of the configurations alternate and the median of `--runs` is
//! printed. With `--workers`, the same queries also run on 1 and on 3 `worker` processes of
//! this binary (the table cut into 3 shards by key). Built only with `--features bench`
//! (it needs DataFusion's Parquet support): see docs/benchmarks.md, "SQL".

use std::collections::BTreeMap;
use std::error::Error;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use strata::filters::model::{ColumnValueTest, Comparator, CompareOp};
use strata::{Db, DbOptions, FamilyDescriptor, Filter, Scan, TableDescriptor};
use strata_sql::datafusion::arrow::array::RecordBatch;
use strata_sql::datafusion::arrow::util::pretty::pretty_format_batches;
use strata_sql::datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use strata_sql::{Cluster, Shard, SqlContext, WorkerShards};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const MAPPING: &str = "CREATE EXTERNAL TABLE t (id BIGINT UNSIGNED NOT NULL, amount BIGINT NOT NULL, \
    cat VARCHAR NOT NULL, note VARCHAR NOT NULL, qty BIGINT NOT NULL) STORED AS STRATA LOCATION 't' \
    OPTIONS ('mapping' ':key#b,d:amount#b,d:cat,d:note,d:qty#b')";

/// The queries: name and SQL (the key range is a thousandth of the rows in the middle).
fn queries(rows: u64) -> Vec<(&'static str, String)> {
    let (low, high) = (rows / 2, rows / 2 + rows / 1000);
    vec![
        ("count", "SELECT count(*) FROM t".to_owned()),
        (
            "filtered aggregate",
            "SELECT count(*), sum(qty) FROM t WHERE amount > 990".to_owned(),
        ),
        (
            "group by",
            "SELECT cat, count(*), sum(amount) FROM t GROUP BY cat ORDER BY cat".to_owned(),
        ),
        (
            "key range",
            format!("SELECT count(*), sum(amount) FROM t WHERE id >= {low} AND id < {high}"),
        ),
    ]
}

/// Row `i`'s values: amount 0..1000, qty 1..=100, one of 8 categories, a note.
fn row(i: u64) -> (i64, String, String, i64) {
    let h = strata::keys::stable_hash(&i.to_be_bytes());
    (
        (h % 1000) as i64,
        format!("cat{}", (h >> 20) % 8),
        format!("note {:08x}", h >> 32),
        ((h >> 10) % 100 + 1) as i64,
    )
}

/// Bulk-loads rows `range` of the table into `db` (cells in key, then qualifier, order).
fn load_rows(db: &Db, range: std::ops::Range<u64>, scratch: &Path) -> Result<()> {
    let table = db.create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("d")))?;
    if range.is_empty() {
        // The coordinator's catalog: the table and its mapping, no rows.
        return Ok(());
    }
    let mut writer = table.bulk_writer(scratch)?;
    for i in range {
        let key = i.to_be_bytes();
        let (amount, cat, note, qty) = row(i);
        writer.add(&key, b"d", b"amount", 1, &amount.to_be_bytes())?;
        writer.add(&key, b"d", b"cat", 1, cat.as_bytes())?;
        writer.add(&key, b"d", b"note", 1, note.as_bytes())?;
        writer.add(&key, b"d", b"qty", 1, &qty.to_be_bytes())?;
    }
    let files = writer.finish()?;
    table.bulk_load(&files.paths(), &strata::BulkLoadOptions::default())?;
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// Opens (creating and loading when missing) the database in `dir` with rows `range`, with
/// a block cache of `cache_bytes` (the default without).
fn database(dir: &Path, range: std::ops::Range<u64>, cache_bytes: Option<u64>) -> Result<Db> {
    let fresh = !dir.exists();
    let mut options = DbOptions::default();
    if let Some(bytes) = cache_bytes {
        options.block_cache_bytes = bytes;
    }
    let db = Db::open(dir, options)?;
    if fresh {
        let started = Instant::now();
        let scratch = dir.join("load");
        load_rows(&db, range.clone(), &scratch)?;
        std::fs::remove_dir_all(&scratch).ok();
        let sql = SqlContext::new(db.clone())?;
        runtime()?.block_on(sql.run(MAPPING))?;
        eprintln!(
            "loaded rows {}..{} into {} in {:.1?}",
            range.start,
            range.end,
            dir.display(),
            started.elapsed()
        );
    }
    Ok(db)
}

/// The same answers by hand against strata's scan API (one thread per partition).
fn by_hand(db: &Db, query: &str, rows: u64, partitions: usize) -> Result<String> {
    let table = db.table("t")?;
    let long = |scan: Scan,
                f: &(dyn Fn(&strata::RowView<'_>) -> (i64, i64) + Sync)|
     -> Result<(i64, i64)> {
        let mut parallel = table.scan_parallel(&scan, partitions, strata::ScanOrder::AsReady)?;
        let (mut a, mut b) = (0, 0);
        while let Some(r) = parallel.next_row()? {
            let (x, y) = f(&r);
            a += x;
            b += y;
        }
        Ok((a, b))
    };
    let value = |r: &strata::RowView<'_>, q: &[u8]| -> i64 {
        r.cells()
            .find(|c| c.qualifier() == q)
            .and_then(|c| c.value().try_into().ok())
            .map_or(0, i64::from_be_bytes)
    };
    Ok(match query {
        "count" => format!("{}", table.count(&Scan::new().column("d", "qty"))?),
        "filtered aggregate" => {
            let test = ColumnValueTest {
                filter_if_missing: true,
                ..ColumnValueTest::new(b"d", b"amount", CompareOp::Greater, Comparator::Long(990))
            };
            let scan = Scan::new()
                .column("d", "amount")
                .column("d", "qty")
                .filter(Filter::SingleColumnValue(test));
            let (n, qty) = long(scan, &|r| (1, value(r, b"qty")))?;
            format!("{n} {qty}")
        }
        "group by" => {
            let mut groups: BTreeMap<Vec<u8>, (i64, i64)> = BTreeMap::new();
            let scan = Scan::new().column("d", "amount").column("d", "cat");
            let mut parallel =
                table.scan_parallel(&scan, partitions, strata::ScanOrder::AsReady)?;
            while let Some(r) = parallel.next_row()? {
                let cat = r
                    .cells()
                    .find(|c| c.qualifier() == b"cat")
                    .map(|c| c.value())
                    .unwrap_or_default();
                let amount = value(&r, b"amount");
                match groups.get_mut(cat) {
                    Some(g) => {
                        g.0 += 1;
                        g.1 += amount;
                    }
                    None => {
                        groups.insert(cat.to_vec(), (1, amount));
                    }
                }
            }
            groups
                .iter()
                .map(|(c, (n, s))| format!("{} {n} {s}", String::from_utf8_lossy(c)))
                .collect::<Vec<_>>()
                .join(",")
        }
        _ => {
            let (low, high) = (rows / 2, rows / 2 + rows / 1000);
            let scan = Scan::new()
                .start(low.to_be_bytes())
                .stop(high.to_be_bytes())
                .column("d", "amount");
            let (n, sum) = long(scan, &|r| (1, value(r, b"amount")))?;
            format!("{n} {sum}")
        }
    })
}

/// A result as one line of text, to compare engines.
fn answer(batches: &[RecordBatch]) -> Result<String> {
    Ok(pretty_format_batches(batches)?
        .to_string()
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(1)
        .map(|l| {
            l.replace('|', " ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(","))
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times.get(times.len() / 2).copied().unwrap_or(f64::NAN)
}

/// One engine configuration under test.
enum Engine {
    Sql(SqlContext),
    Parquet(SessionContext),
    ByHand(Db, usize),
}

struct Config {
    name: String,
    engine: Engine,
}

impl Config {
    fn run(
        &self,
        runtime: &tokio::runtime::Runtime,
        name: &str,
        sql: &str,
        rows: u64,
    ) -> Result<(f64, String)> {
        let started = Instant::now();
        let answer = match &self.engine {
            Engine::Sql(context) => answer(&runtime.block_on(context.run(sql))?)?,
            Engine::Parquet(context) => {
                answer(&runtime.block_on(async { context.sql(sql).await?.collect().await })?)?
            }
            Engine::ByHand(db, partitions) => by_hand(db, name, rows, *partitions)?,
        };
        Ok((started.elapsed().as_secs_f64() * 1e3, answer))
    }
}

struct Args {
    rows: u64,
    dir: Option<PathBuf>,
    runs: usize,
    partitions: Vec<usize>,
    workers: bool,
    /// Only configurations whose name contains one of these (all when empty).
    configs: Vec<String>,
    /// Only queries whose name contains one of these (all when empty).
    queries: Vec<String>,
    /// The in-process database's block cache (the engine's default without).
    cache_bytes: Option<u64>,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        rows: 10_000_000,
        dir: None,
        runs: 5,
        partitions: vec![1, 2],
        workers: false,
        configs: Vec::new(),
        queries: Vec::new(),
        cache_bytes: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--rows" => args.rows = value()?.parse()?,
            "--dir" => args.dir = Some(PathBuf::from(value()?)),
            "--runs" => args.runs = value()?.parse()?,
            "--partitions" => {
                args.partitions = value()?
                    .split(',')
                    .map(str::parse)
                    .collect::<std::result::Result<_, _>>()?
            }
            "--workers" => args.workers = true,
            "--configs" => args.configs = value()?.split(',').map(str::to_owned).collect(),
            "--cache-mb" => args.cache_bytes = Some(value()?.parse::<u64>()? << 20),
            "--queries" => args.queries = value()?.split(',').map(str::to_owned).collect(),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    Ok(args)
}

/// `worker --data DIR --listen ADDR`: serves a shard until killed.
fn worker(mut args: impl Iterator<Item = String>) -> Result<()> {
    let (mut data, mut listen) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--data" => data = args.next(),
            "--listen" => listen = args.next(),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let (Some(data), Some(listen)) = (data, listen) else {
        return Err("worker needs --data and --listen".into());
    };
    let db = Db::open_default(&data)?;
    let address: SocketAddr = listen.parse()?;
    let runtime = runtime()?;
    let listener = runtime.block_on(tokio::net::TcpListener::bind(address))?;
    runtime
        .block_on(strata_sql::serve_worker(
            db,
            listener,
            std::future::pending(),
        ))
        .map_err(|e| e.to_string().into())
}

/// A worker process of this binary, killed when dropped.
struct WorkerProcess(Child);

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Starts one worker per (directory, key range) and a coordinating session over them, whose
/// own (empty) database is `catalog`: each cluster needs its own, a database is opened by
/// one owner at a time.
fn cluster(
    catalog: &Path,
    shards: &[(PathBuf, Vec<u8>, Vec<u8>)],
) -> Result<(SqlContext, Vec<WorkerProcess>)> {
    let exe = std::env::current_exe()?;
    let mut processes = Vec::new();
    let mut workers = Vec::new();
    for (data, start, end) in shards {
        let port = free_port()?;
        let child = Command::new(&exe)
            .args(["worker", "--data"])
            .arg(data)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .spawn()?;
        processes.push(WorkerProcess(child));
        workers.push(WorkerShards {
            url: format!("http://127.0.0.1:{port}"),
            shards: vec![Shard {
                table: "t".into(),
                start: strata::filters::escape::to_string_binary(start),
                end: strata::filters::escape::to_string_binary(end),
            }],
        });
    }
    // The workers open their databases before they listen.
    std::thread::sleep(Duration::from_secs(3));
    let catalog = database(catalog, 0..0, None)?;
    let context = SqlContext::with_cluster(catalog, SessionConfig::new(), Cluster { workers })?;
    Ok((context, processes))
}

fn main() -> Result<()> {
    let mut raw = std::env::args().skip(1);
    if raw.next().as_deref() == Some("worker") {
        return worker(raw);
    }
    let args = parse_args()?;
    let temporary;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => {
            temporary = tempfile::tempdir()?;
            temporary.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&dir)?;
    let runtime = runtime()?;
    let db = database(&dir.join("strata"), 0..args.rows, args.cache_bytes)?;
    let parquet = dir.join("parquet");
    if !parquet.exists() {
        let started = Instant::now();
        let sql = SqlContext::new(db.clone())?;
        let path = parquet.to_string_lossy().into_owned();
        runtime.block_on(sql.run(&format!(
            "COPY (SELECT * FROM t) TO '{path}' STORED AS PARQUET"
        )))?;
        eprintln!("wrote {} in {:.1?}", parquet.display(), started.elapsed());
    }
    let mut configs = Vec::new();
    for &partitions in &args.partitions {
        let config = SessionConfig::new().with_target_partitions(partitions);
        configs.push(Config {
            name: format!("strata-sql p={partitions}"),
            engine: Engine::Sql(SqlContext::with_options(db.clone(), config.clone(), true)?),
        });
        configs.push(Config {
            name: format!("strata-sql no pushdown p={partitions}"),
            engine: Engine::Sql(SqlContext::with_options(db.clone(), config.clone(), false)?),
        });
        let context = SessionContext::new_with_config(config);
        runtime.block_on(context.register_parquet(
            "t",
            parquet.to_string_lossy().as_ref(),
            ParquetReadOptions::default(),
        ))?;
        configs.push(Config {
            name: format!("datafusion parquet p={partitions}"),
            engine: Engine::Parquet(context),
        });
        configs.push(Config {
            name: format!("strata scan API p={partitions}"),
            engine: Engine::ByHand(db.clone(), partitions),
        });
    }
    let mut _processes = Vec::new();
    if args.workers {
        let third = args.rows / 3;
        let bounds = [0, third, 2 * third, args.rows];
        let mut shards = Vec::new();
        for i in 0..3 {
            let shard = dir.join(format!("shard{i}"));
            database(&shard, bounds[i]..bounds[i + 1], None)?.close()?;
            let start = if i == 0 {
                Vec::new()
            } else {
                bounds[i].to_be_bytes().to_vec()
            };
            let end = if i == 2 {
                Vec::new()
            } else {
                bounds[i + 1].to_be_bytes().to_vec()
            };
            shards.push((shard, start, end));
        }
        let whole = dir.join("whole");
        database(&whole, 0..args.rows, None)?.close()?;
        let (one, p1) = cluster(&dir.join("catalog1"), &[(whole, Vec::new(), Vec::new())])?;
        let (three, p3) = cluster(&dir.join("catalog3"), &shards)?;
        configs.push(Config {
            name: "1 worker process".into(),
            engine: Engine::Sql(one),
        });
        configs.push(Config {
            name: "3 worker processes".into(),
            engine: Engine::Sql(three),
        });
        _processes.extend(p1);
        _processes.extend(p3);
    }
    let chosen = |name: &str, wanted: &[String]| {
        wanted.is_empty() || wanted.iter().any(|w| name.contains(w.as_str()))
    };
    configs.retain(|c| chosen(&c.name, &args.configs));
    // What the scans were given: the pushed filters and ranges, with pushdown on and off.
    for config in configs.iter().take(2) {
        if let Engine::Sql(context) = &config.engine {
            for (name, sql) in queries(args.rows).into_iter().skip(1).step_by(2) {
                let plan = runtime.block_on(context.run(&format!("EXPLAIN {sql}")))?;
                println!(
                    "EXPLAIN {name} ({}):\n{}",
                    config.name,
                    pretty_format_batches(&plan)?
                );
            }
        }
    }
    println!(
        "rows: {}, runs: {} (median), uptime before: {}",
        args.rows,
        args.runs,
        uptime()
    );
    for (name, sql) in queries(args.rows) {
        if !chosen(name, &args.queries) {
            continue;
        }
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
        let mut answers: Vec<String> = vec![String::new(); configs.len()];
        // One untimed run each (caches warm for everyone), then alternating timed runs.
        for (i, config) in configs.iter().enumerate() {
            answers[i] = config.run(&runtime, name, &sql, args.rows)?.1;
        }
        for _ in 0..args.runs {
            for (i, config) in configs.iter().enumerate() {
                times[i].push(config.run(&runtime, name, &sql, args.rows)?.0);
            }
        }
        println!("\n{name}: {sql}");
        let baseline = configs
            .iter()
            .position(|c| c.name.starts_with("datafusion parquet"))
            .map(|i| median(times[i].clone()));
        for (i, config) in configs.iter().enumerate() {
            let ms = median(times[i].clone());
            let ratio = baseline.map_or(String::new(), |b| format!("{:>6.2}x parquet", b / ms));
            println!(
                "  {:<34} {:>10.1} ms  {ratio}   {}",
                config.name, ms, answers[i]
            );
        }
        // Every engine must give the same answer.
        if let Some((i, a)) = answers.iter().enumerate().find(|(_, a)| **a != answers[0]) {
            return Err(format!("{}: {a} differs from {}", configs[i].name, answers[0]).into());
        }
    }
    println!("\nuptime after: {}", uptime());
    db.close()?;
    Ok(())
}

fn uptime() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}
