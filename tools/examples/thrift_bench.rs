//! Throughput of `strata thrift` on loopback: one-cell `mutateRows` and one-cell `getRow`,
//! per connection and over many connections, as an HBase Thrift client sees it.
//!
//! ```text
//! cargo run --release -p strata-tools --example thrift_bench -- [--connections 1,16]
//!     [--seconds 5] [--repeat 3] [--durability async|sync|skip] [--connect HOST:PORT]
//!     [--transport buffered|framed] [--protocol binary|compact]
//! ```
//!
//! Without `--connect` it starts a gateway in this process over a fresh database in a
//! temporary directory, listening on 127.0.0.1 (the clients still go through TCP); with it,
//! it drives a running `strata thrift` (whose `--durability` then applies). Each run is
//! bounded by `--seconds`; the table gives the median of `--repeat` runs, with the smallest
//! and largest, and the median run's latency percentiles and CPU time per call (user and
//! system time of this whole process over the calls: client and gateway together without
//! `--connect`, the client alone with it).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use hdrhistogram::Histogram;
use strata::{Db, Durability};
use strata_tools::thrift::client::Client;
use strata_tools::thrift::codec::Protocol;
use strata_tools::thrift::hbase::{
    BatchMutation, Call, ColumnDescriptor, CreateTableArgs, GetRowArgs, MutateRowsArgs, Mutation,
    Response, TRowResult,
};
use strata_tools::thrift::transport::{Transport, WireFormat};
use strata_tools::thrift::{ServerOptions, ThriftServer};

/// The table the benchmark writes and reads.
const TABLE: &str = "thrift_bench";
/// Bytes of each value.
const VALUE_BYTES: usize = 100;
/// How long a client waits for one reply.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Parser)]
#[command(about = "Throughput of strata thrift: one-cell mutateRows and getRow on loopback")]
struct Args {
    /// Connection counts to measure, each with its own client thread.
    #[arg(long, value_delimiter = ',', default_value = "1,16")]
    connections: Vec<usize>,
    /// Length of each run, in seconds.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Runs of each workload and connection count; the median is reported.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Durability of the in-process gateway's writes.
    #[arg(long, value_enum, default_value_t = DurabilityArg::Async)]
    durability: DurabilityArg,
    /// Drive a running gateway instead of starting one.
    #[arg(long)]
    connect: Option<SocketAddr>,
    /// Transport the clients speak.
    #[arg(long, value_enum, default_value_t = TransportArg::Buffered)]
    transport: TransportArg,
    /// Protocol the clients speak.
    #[arg(long, value_enum, default_value_t = ProtocolArg::Binary)]
    protocol: ProtocolArg,
    /// Workloads to run, in order (getRow reads the rows mutateRows wrote, so it needs a
    /// mutateRows run before it).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "mutate-rows,get-row"
    )]
    workloads: Vec<Workload>,
}

#[derive(Clone, Copy, ValueEnum)]
enum DurabilityArg {
    Async,
    Sync,
    Skip,
}

#[derive(Clone, Copy, ValueEnum)]
enum TransportArg {
    Buffered,
    Framed,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProtocolArg {
    Binary,
    Compact,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Workload {
    /// One-cell `mutateRows` of a new row.
    MutateRows,
    /// One-cell `getRow` of a row written before.
    GetRow,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::MutateRows => "mutateRows (1 cell)",
            Workload::GetRow => "getRow (1 cell)",
        }
    }
}

/// One run: calls made, their latencies in microseconds, and the CPU time the whole process
/// (client threads, and the gateway when it runs in this process) used meanwhile.
struct RunResult {
    calls: u64,
    elapsed: Duration,
    cpu: Duration,
    latency_us: Histogram<u64>,
}

impl RunResult {
    fn calls_per_second(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }

    /// CPU microseconds (user and system, every thread of this process) per call.
    fn cpu_us_per_call(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.calls.max(1) as f64
    }
}

/// CPU time used so far by every thread of this process, user and system.
fn process_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; the clock id is a constant Linux knows.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    if status != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

fn row_key(connection: usize, index: u64) -> Vec<u8> {
    format!("c{connection:03}-{index:010}").into_bytes()
}

fn mutate_call(row: Vec<u8>) -> Call {
    Call::MutateRows(MutateRowsArgs {
        table_name: Some(TABLE.as_bytes().to_vec()),
        row_batches: Some(vec![BatchMutation {
            row: Some(row),
            mutations: Some(vec![Mutation {
                is_delete: Some(false),
                column: Some(b"f:q".to_vec()),
                value: Some(vec![b'v'; VALUE_BYTES]),
                write_to_wal: Some(true),
            }]),
        }]),
        attributes: None,
    })
}

fn get_call(row: Vec<u8>) -> Call {
    Call::GetRow(GetRowArgs {
        table_name: Some(TABLE.as_bytes().to_vec()),
        row: Some(row),
        attributes: None,
    })
}

/// Runs `workload` on `connections` connections for `duration`. Connection `c` has written
/// rows `0..written[c]` so far: a writer goes on from there, a reader reads those rows in a
/// scrambled order.
fn run(
    address: SocketAddr,
    format: WireFormat,
    workload: Workload,
    connections: usize,
    duration: Duration,
    written: &[u64],
) -> Result<(RunResult, Vec<u64>), String> {
    let start = Arc::new(Barrier::new(connections + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..connections)
        .map(|connection| {
            let mut client = Client::connect(address, format, CALL_TIMEOUT)
                .map_err(|error| error.to_string())?;
            let (start, stop) = (start.clone(), stop.clone());
            let written = written.get(connection).copied().unwrap_or(0);
            Ok(std::thread::spawn(
                move || -> Result<(u64, Histogram<u64>), String> {
                    let mut latency_us =
                        Histogram::<u64>::new(3).map_err(|error| error.to_string())?;
                    let mut calls = 0u64;
                    start.wait();
                    while !stop.load(Ordering::Relaxed) {
                        let began = Instant::now();
                        match workload {
                            Workload::MutateRows => {
                                let call = mutate_call(row_key(connection, written + calls));
                                match client.call::<()>(&call).map_err(|e| e.to_string())? {
                                    Response::Success(()) => {}
                                    other => return Err(format!("mutateRows failed: {other:?}")),
                                }
                            }
                            Workload::GetRow => {
                                // A multiplicative hash spreads the reads over the written rows.
                                let index =
                                    calls.wrapping_mul(0x9e37_79b9_7f4a_7c15) % written.max(1);
                                let call = get_call(row_key(connection, index));
                                match client
                                    .call::<Vec<TRowResult>>(&call)
                                    .map_err(|e| e.to_string())?
                                {
                                    Response::Success(rows) if rows.len() == 1 => {}
                                    other => return Err(format!("getRow failed: {other:?}")),
                                }
                            }
                        }
                        let micros = began.elapsed().as_micros() as u64;
                        latency_us
                            .record(micros.max(1))
                            .map_err(|error| error.to_string())?;
                        calls += 1;
                    }
                    Ok((calls, latency_us))
                },
            ))
        })
        .collect::<Result<_, String>>()?;
    start.wait();
    let began = Instant::now();
    let cpu_before = process_cpu_time();
    std::thread::sleep(duration);
    stop.store(true, Ordering::Relaxed);
    let mut total = RunResult {
        calls: 0,
        elapsed: Duration::ZERO,
        cpu: Duration::ZERO,
        latency_us: Histogram::<u64>::new(3).map_err(|error| error.to_string())?,
    };
    let mut per_connection = Vec::with_capacity(connections);
    for worker in workers {
        let (calls, latency_us) = worker
            .join()
            .map_err(|_| "a client thread panicked".to_owned())??;
        total.calls += calls;
        per_connection.push(calls);
        total
            .latency_us
            .add(&latency_us)
            .map_err(|error| error.to_string())?;
    }
    total.elapsed = began.elapsed();
    total.cpu = process_cpu_time().saturating_sub(cpu_before);
    Ok((total, per_connection))
}

fn create_table(address: SocketAddr, format: WireFormat) -> Result<(), String> {
    let mut client =
        Client::connect(address, format, CALL_TIMEOUT).map_err(|error| error.to_string())?;
    let call = Call::CreateTable(CreateTableArgs {
        table_name: Some(TABLE.as_bytes().to_vec()),
        column_families: Some(vec![ColumnDescriptor {
            name: Some(b"f:".to_vec()),
            max_versions: Some(1),
            block_cache_enabled: Some(true),
            bloom_filter_type: Some("ROW".into()),
            ..ColumnDescriptor::default()
        }]),
    });
    match client
        .call::<()>(&call)
        .map_err(|error| error.to_string())?
    {
        Response::Success(()) => Ok(()),
        other => Err(format!(
            "createTable {TABLE} failed (drop it first if it exists): {other:?}"
        )),
    }
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    let format = WireFormat {
        transport: match args.transport {
            TransportArg::Buffered => Transport::Buffered,
            TransportArg::Framed => Transport::Framed,
        },
        protocol: match args.protocol {
            ProtocolArg::Binary => Protocol::Binary,
            ProtocolArg::Compact => Protocol::Compact,
        },
    };
    let durability = match args.durability {
        DurabilityArg::Async => Durability::AsyncWal,
        DurabilityArg::Sync => Durability::SyncWal,
        DurabilityArg::Skip => Durability::SkipWal,
    };
    let directory = tempfile::tempdir().map_err(|error| error.to_string())?;
    let mut local = None;
    let address = match args.connect {
        Some(address) => address,
        None => {
            let db = Db::open_default(directory.path()).map_err(|error| error.to_string())?;
            let options = ServerOptions {
                bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
                durability: Some(durability),
                ..ServerOptions::default()
            };
            let server = ThriftServer::bind(
                db.clone(),
                options,
                Arc::new(|line: &str| {
                    eprintln!("server: {line}");
                }),
            )
            .map_err(|error| error.to_string())?;
            let address = server.local_addr();
            let handle = server.handle();
            let thread = std::thread::spawn(move || server.run());
            local = Some((db, handle, thread));
            address
        }
    };
    create_table(address, format)?;
    let duration = Duration::from_secs(args.seconds);
    println!(
        "strata thrift on {address}, {format}, {} writes, {} s per run, median of {}",
        match args.connect {
            Some(_) => "the server's",
            None => durability.name(),
        },
        args.seconds,
        args.repeat
    );
    println!(
        "{:<22} {:>5} {:>12} {:>23} {:>8} {:>8} {:>8} {:>12}",
        "workload", "conns", "calls/s", "(min-max)", "p50 us", "p99 us", "p999 us", "cpu us/call"
    );
    // Rows written per connection so far: the next index to write, and what reads may read.
    let max_connections = args.connections.iter().copied().max().unwrap_or(1);
    let mut written = vec![0u64; max_connections];
    for workload in args.workloads.iter().copied() {
        for &connections in &args.connections {
            let mut runs = Vec::with_capacity(args.repeat);
            for _ in 0..args.repeat.max(1) {
                let (result, per_connection) =
                    run(address, format, workload, connections, duration, &written)?;
                if workload == Workload::MutateRows {
                    for (slot, calls) in written.iter_mut().zip(per_connection) {
                        *slot += calls;
                    }
                }
                runs.push(result);
            }
            runs.sort_by(|a, b| a.calls_per_second().total_cmp(&b.calls_per_second()));
            let median = &runs[runs.len() / 2];
            println!(
                "{:<22} {:>5} {:>12.0} {:>23} {:>8} {:>8} {:>8} {:>12.1}",
                workload.name(),
                connections,
                median.calls_per_second(),
                format!(
                    "({:.0}-{:.0})",
                    runs[0].calls_per_second(),
                    runs[runs.len() - 1].calls_per_second()
                ),
                median.latency_us.value_at_quantile(0.5),
                median.latency_us.value_at_quantile(0.99),
                median.latency_us.value_at_quantile(0.999),
                median.cpu_us_per_call(),
            );
        }
    }
    if let Some((db, handle, thread)) = local {
        handle.shutdown();
        thread
            .join()
            .map_err(|_| "the server thread panicked".to_owned())?
            .map_err(|error| error.to_string())?;
        db.close().map_err(|error| error.to_string())?;
    }
    Ok(())
}
