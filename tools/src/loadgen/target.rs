//! What a run drives, and each operation of the mix as that target expresses it.
//!
//! * [`Target::Table`]: a strata table in this process.
//! * [`Target::Peer`] (feature `peers`): RocksDB or fjall in this process, through
//!   strata-bench's engine adapters, so that a loadgen comparison configures each engine
//!   exactly as a strata-bench comparison does ([`peer_settings`]).
//! * [`Target::Thrift`]: any HBase Thrift1 server (`strata thrift`, or a real HBase's Thrift
//!   gateway); each worker has its own connection, one call at a time, as HBase clients do.
//! * [`Target::DryRun`]: nothing; measures the dispatcher.
//!
//! The run draws each operation's keys and values the same way whatever the target
//! ([`Operation`]), so every engine sees the same schedule, mix and keys. An operation a
//! target cannot express is refused before the run ([`Target::check_mix`]), never imitated
//! with something else.

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use strata::{
    CheckAction, CheckAndMutate, Delete, Get, Increment, Put, RegionActivity, Scan, Table,
};

use super::spec::{Mix, OpKind, SpecError};
use super::{COUNTER, FAMILY, QUALIFIER, RunError};
use crate::thrift::client::{Client, ClientError};
use crate::thrift::codec::{ThriftMap, Wire};
use crate::thrift::hbase::{
    AtomicIncrementArgs, Attributes, BatchMutation, Call, CheckAndPutArgs, ColumnDescriptor,
    CreateTableArgs, DeleteAllRowArgs, GetRowArgs, GetRowsArgs, GetTableNamesArgs,
    GetTableRegionsArgs, MutateRowArgs, MutateRowsArgs, Mutation, Response, ScannerCloseArgs,
    ScannerGetListArgs, ScannerOpenArgs, ScannerOpenWithScanArgs, TRegionInfo, TRowResult, TScan,
};
use crate::thrift::transport::WireFormat;

/// How long a Thrift call may take before the worker gives up on its connection (and opens
/// a new one for its next operation): long enough for any server stall a run should see
/// as latency, short enough that a hung server does not hold a worker for the whole run.
pub const THRIFT_CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Rows per `mutateRows` call when a table is preloaded over Thrift, and per
/// `scannerGetList` call when an existing table's rows are counted.
pub const THRIFT_BATCH_ROWS: usize = 1000;

/// An engine `--engine` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineName {
    /// strata, in this process.
    Strata,
    /// RocksDB through the `rocksdb` crate (feature `peers`).
    RocksDb,
    /// fjall (feature `peers`).
    Fjall,
}

impl EngineName {
    /// Every engine, in the order a comparison lists them.
    pub const ALL: [EngineName; 3] = [EngineName::Strata, EngineName::RocksDb, EngineName::Fjall];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            EngineName::Strata => "strata",
            EngineName::RocksDb => "rocksdb",
            EngineName::Fjall => "fjall",
        }
    }

    /// The operations this engine cannot express: RocksDB and fjall store plain key-value
    /// records and have no atomic read-modify-write of one (a merge operator or a
    /// transaction would be another operation, with other costs).
    pub fn unsupported(self) -> &'static [OpKind] {
        match self {
            EngineName::Strata => &[],
            EngineName::RocksDb | EngineName::Fjall => &[OpKind::Increment, OpKind::CheckAndMutate],
        }
    }

    /// Whether this build can drive the engine.
    pub fn compiled_in(self) -> bool {
        match self {
            EngineName::Strata => true,
            EngineName::RocksDb | EngineName::Fjall => cfg!(feature = "peers"),
        }
    }

    /// Parses `--engine` values (each a name or a comma-separated list; `all` is every
    /// engine of this build), in order, each engine once. A peer this build lacks is an
    /// error that says how to build it.
    pub fn parse_list<S: AsRef<str>>(values: &[S]) -> Result<Vec<EngineName>, SpecError> {
        let mut engines = Vec::new();
        for value in values {
            for name in value.as_ref().split(',').map(str::trim) {
                let named: Vec<EngineName> = match name {
                    "" => continue,
                    "all" => EngineName::ALL
                        .into_iter()
                        .filter(|e| e.compiled_in())
                        .collect(),
                    _ => {
                        let engine = EngineName::ALL
                            .into_iter()
                            .find(|e| e.name() == name)
                            .ok_or_else(|| {
                                SpecError(format!(
                                    "--engine {name:?}: one of strata, rocksdb, fjall, all"
                                ))
                            })?;
                        if !engine.compiled_in() {
                            return Err(SpecError(format!(
                                "--engine {name}: not in this build; build strata-loadgen with \
                                 the peers feature (cargo build --release -p strata-tools \
                                 --features peers; RocksDB compiles C++ and needs clang)"
                            )));
                        }
                        vec![engine]
                    }
                };
                for engine in named {
                    if !engines.contains(&engine) {
                        engines.push(engine);
                    }
                }
            }
        }
        Ok(engines)
    }
}

/// Refuses `mix` when it has an operation of `unsupported`, which the target `name` cannot
/// express.
pub fn check_mix(name: &str, unsupported: &[OpKind], mix: &Mix) -> Result<(), RunError> {
    match mix
        .parts
        .iter()
        .find(|(kind, _)| unsupported.contains(kind))
    {
        Some((kind, _)) => Err(RunError(format!(
            "--mix has {kind}, which {name} cannot express: it stores plain key-value records \
             and has no atomic read-modify-write of one; take {kind} out of the mix to drive it",
            kind = kind.name()
        ))),
        None => Ok(()),
    }
}

/// One operation with its keys and values drawn.
#[derive(Debug, Clone, Copy)]
pub enum Operation<'a> {
    /// Reads a row.
    Get {
        /// The row.
        row: &'a [u8],
    },
    /// Writes a row's value (an insert or an update).
    Put {
        /// The row.
        row: &'a [u8],
        /// Its new value.
        value: &'a [u8],
    },
    /// Reads up to `rows` rows from `start` on.
    Scan {
        /// The first row (inclusive).
        start: &'a [u8],
        /// Rows to read at most.
        rows: u64,
    },
    /// Adds 1 to a row's counter.
    Increment {
        /// The row.
        row: &'a [u8],
    },
    /// Deletes a row.
    Delete {
        /// The row.
        row: &'a [u8],
    },
    /// Reads several rows in one call.
    GetMany {
        /// The rows.
        rows: &'a [Vec<u8>],
    },
    /// Writes a row's value if it is `expected`.
    CheckAndPut {
        /// The row.
        row: &'a [u8],
        /// The value the row must have.
        expected: &'a [u8],
        /// The value written when it has.
        value: &'a [u8],
    },
}

/// A region of the target as the run starts: its key range and, where the target reports
/// them, its engine counters.
#[derive(Debug, Clone)]
pub struct RegionSpan {
    /// Start key (inclusive; empty for the first region).
    pub start_key: Vec<u8>,
    /// End key (exclusive; empty for the last region).
    pub end_key: Vec<u8>,
    /// The engine's counters of the region; `None` when the target does not report them
    /// (a Thrift server).
    pub activity: Option<RegionActivity>,
}

/// What the operations run against.
pub enum Target {
    /// A strata table in this process.
    Table(Table),
    /// RocksDB or fjall in this process.
    #[cfg(feature = "peers")]
    Peer(PeerEngine),
    /// An HBase Thrift1 server.
    Thrift(ThriftTarget),
    /// Nothing: measures the dispatcher itself.
    DryRun,
}

/// One worker's way to the target: the target itself for an engine in this process, its
/// own connection for a Thrift server.
pub enum Session {
    /// Operations call the engine in this process.
    InProcess,
    /// Operations go over this worker's connection; `None` after a connection failed (the
    /// next operation opens a new one, since a reply that came late would otherwise be
    /// read as the next call's).
    Thrift(Option<Client>),
}

impl Target {
    /// What reports call the target: `strata`, `rocksdb`, `fjall`, `thrift HOST:PORT`,
    /// `dry run`.
    pub fn name(&self) -> String {
        match self {
            Target::Table(_) => "strata".to_owned(),
            #[cfg(feature = "peers")]
            Target::Peer(peer) => peer.engine.name().to_owned(),
            Target::Thrift(thrift) => format!("thrift {}", thrift.label),
            Target::DryRun => "dry run".to_owned(),
        }
    }

    /// The operations this target cannot express (see [`EngineName::unsupported`]).
    pub fn unsupported(&self) -> &'static [OpKind] {
        match self {
            #[cfg(feature = "peers")]
            Target::Peer(peer) => peer.engine.unsupported(),
            _ => &[],
        }
    }

    /// Refuses a mix with an operation this target cannot express.
    pub fn check_mix(&self, mix: &Mix) -> Result<(), RunError> {
        check_mix(&self.name(), self.unsupported(), mix)
    }

    /// The regions as the run starts: the table's for strata (with their counters), the
    /// server's `getTableRegions` for Thrift, none for RocksDB and fjall (they have no
    /// regions), one covering everything for a dry run.
    pub fn regions(&self) -> Result<Vec<RegionSpan>, RunError> {
        match self {
            Target::Table(table) => Ok(table
                .regions()?
                .into_iter()
                .map(|r| RegionSpan {
                    start_key: r.start_key,
                    end_key: r.end_key,
                    activity: Some(r.activity),
                })
                .collect()),
            #[cfg(feature = "peers")]
            Target::Peer(_) => Ok(Vec::new()),
            Target::Thrift(thrift) => thrift.regions(),
            Target::DryRun => Ok(vec![RegionSpan {
                start_key: Vec::new(),
                end_key: Vec::new(),
                activity: Some(RegionActivity::default()),
            }]),
        }
    }

    /// Microseconds the engine has stalled writers, where it reports it (strata).
    pub fn stall_micros(&self) -> u64 {
        match self {
            Target::Table(t) => t
                .regions()
                .map(|rs| rs.iter().map(|r| r.activity.stall_micros).sum())
                .unwrap_or(0),
            _ => 0,
        }
    }

    /// A worker's session: for a Thrift server a connection, opened now so that a server
    /// that cannot be reached is an error before the run starts.
    pub fn session(&self) -> Result<Session, RunError> {
        match self {
            Target::Thrift(thrift) => Ok(Session::Thrift(Some(thrift.connect()?))),
            _ => Ok(Session::InProcess),
        }
    }

    /// Runs one operation; an error is the engine's or the server's message.
    pub fn execute(&self, session: &mut Session, operation: Operation<'_>) -> Result<(), String> {
        match self {
            Target::Table(table) => execute_on_table(table, operation).map_err(|e| e.to_string()),
            #[cfg(feature = "peers")]
            Target::Peer(peer) => peer.execute(operation).map_err(|e| e.to_string()),
            Target::Thrift(thrift) => {
                let Session::Thrift(connection) = session else {
                    return Err("no connection to the Thrift server".to_owned());
                };
                thrift.execute(connection, operation)
            }
            Target::DryRun => Ok(()),
        }
    }
}

fn execute_on_table(table: &Table, operation: Operation<'_>) -> Result<(), strata::Error> {
    match operation {
        Operation::Get { row } => {
            table.get(&Get::new(row))?;
        }
        Operation::Put { row, value } => table.put(&Put::new(row).add(FAMILY, QUALIFIER, value))?,
        Operation::Scan { start, rows } => {
            let mut cursor = table.scan_cursor(&Scan::new().start(start).limit(rows))?;
            while cursor.next_row()?.is_some() {}
        }
        Operation::Increment { row } => {
            table.increment(&Increment::new(row).add(FAMILY, COUNTER, 1))?;
        }
        Operation::Delete { row } => table.delete(&Delete::new(row))?,
        Operation::GetMany { rows } => {
            let gets: Vec<Get> = rows.iter().map(Get::new).collect();
            table.get_many(&gets)?;
        }
        Operation::CheckAndPut {
            row,
            expected,
            value,
        } => {
            let put = Put::new(row).add(FAMILY, QUALIFIER, value);
            table.check_and_mutate(
                &CheckAndMutate::builder(row)
                    .if_equals(FAMILY, QUALIFIER, expected)
                    .then(CheckAction::Put(put)),
            )?;
        }
    }
    Ok(())
}

/// Opens RocksDB or fjall on the empty directory `dir` with the settings strata-bench
/// would give it ([`peer_settings`]: `cache_bytes` of block cache, `durability`), refuses a
/// mix it cannot express, and preloads the spec's records as strata's are (WAL on, no sync
/// per write, then the memtable flushed, as strata-bench ends a load). Returns the target
/// and how long the preload took. Without the `peers` feature: an error saying how to build
/// it.
pub fn open_peer(
    engine: EngineName,
    dir: &std::path::Path,
    cache_bytes: u64,
    durability: strata::Durability,
    spec: &super::LoadSpec,
) -> Result<(Target, Duration), RunError> {
    check_mix(engine.name(), engine.unsupported(), &spec.mix)?;
    #[cfg(feature = "peers")]
    {
        let settings = peer_settings(cache_bytes, durability)?;
        let peer = PeerEngine::open(engine, dir, &settings)?;
        let took = super::preload_with(spec, |records| peer.load(records))?;
        peer.load_finished()?;
        Ok((Target::Peer(peer), took))
    }
    #[cfg(not(feature = "peers"))]
    {
        let _ = (dir, cache_bytes, durability);
        Err(RunError(format!(
            "--engine {}: not in this build; build strata-loadgen with the peers feature",
            engine.name()
        )))
    }
}

/// RocksDB or fjall, opened through strata-bench's adapter.
#[cfg(feature = "peers")]
pub struct PeerEngine {
    engine: EngineName,
    adapter: Box<dyn strata_bench::engine::Engine>,
}

/// The settings strata-bench would give every engine, taken from the strata defaults
/// strata-loadgen opens its own database with, so the peers are configured like the strata
/// they are compared with: strata's block size, memstore flush size, bloom bits and
/// background threads, no compression, the block cache of `cache_bytes`, and `durability`.
#[cfg(feature = "peers")]
pub fn peer_settings(
    cache_bytes: u64,
    durability: strata::Durability,
) -> Result<strata_bench::config::EngineSettings, RunError> {
    use strata_bench::config::{CompressionChoice, DurabilityChoice, EngineSettings};
    let durability = match durability {
        strata::Durability::SkipWal => DurabilityChoice::Skip,
        strata::Durability::AsyncWal => DurabilityChoice::Async,
        strata::Durability::SyncWal => DurabilityChoice::Sync,
        other => {
            return Err(RunError(format!(
                "--durability {other:?}: RocksDB and fjall are driven with skip, async or sync \
                 (their sync is an fdatasync, as strata's sync)"
            )));
        }
    };
    let defaults = strata::DbOptions::default();
    Ok(EngineSettings {
        block_size_bytes: strata::DEFAULT_BLOCK_SIZE_BYTES,
        cache_bytes,
        bloom_bits_per_key: defaults.bloom_bits_per_key,
        compression: CompressionChoice::None,
        durability,
        io: None,
        memtable_bytes: strata::DEFAULT_MEMSTORE_FLUSH_SIZE_BYTES,
        background_threads: defaults.background_threads,
        memstore_parts: defaults.memstore_parts,
        bulk_verify_blocks: false,
    })
}

#[cfg(feature = "peers")]
impl PeerEngine {
    /// Opens `engine` (RocksDB or fjall) on the empty directory `dir`.
    pub fn open(
        engine: EngineName,
        dir: &std::path::Path,
        settings: &strata_bench::config::EngineSettings,
    ) -> Result<PeerEngine, RunError> {
        use strata_bench::config::EngineKind;
        let kind = match engine {
            EngineName::RocksDb => EngineKind::RocksDb,
            EngineName::Fjall => EngineKind::Fjall,
            EngineName::Strata => {
                return Err(RunError(
                    "strata runs as a table, not through strata-bench's adapter".to_owned(),
                ));
            }
        };
        let adapter = strata_bench::engine::open(kind, dir, settings)
            .map_err(|e| RunError(format!("opening {}: {e}", engine.name())))?;
        Ok(PeerEngine { engine, adapter })
    }

    /// Writes one batch of an untimed preload (WAL on, not synced per write).
    pub fn load(&self, records: &[(Vec<u8>, Vec<u8>)]) -> Result<(), String> {
        for (key, value) in records {
            self.adapter
                .put_for_load(key, value)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Ends a preload as strata-bench ends a load: the memtable flushed to a file.
    pub fn load_finished(&self) -> Result<(), RunError> {
        self.adapter
            .load_finished()
            .map_err(|e| RunError(format!("{}: {e}", self.engine.name())))
    }

    fn execute(&self, operation: Operation<'_>) -> strata_bench::Result<()> {
        let engine = &self.adapter;
        match operation {
            Operation::Get { row } => {
                engine.get(row)?;
            }
            Operation::Put { row, value } => engine.put(row, value)?,
            Operation::Scan { start, rows } => {
                engine.scan(start, None, rows)?;
            }
            Operation::Delete { row } => engine.delete(row)?,
            Operation::GetMany { rows } => {
                engine.multi_get(rows)?;
            }
            // Refused by `check_mix` before any run.
            Operation::Increment { .. } | Operation::CheckAndPut { .. } => {
                return Err(strata_bench::BenchError::Usage(format!(
                    "{} cannot increment or check-and-put",
                    self.engine.name()
                )));
            }
        }
        Ok(())
    }
}

/// Why a Thrift call failed.
#[derive(Debug)]
pub enum ThriftError {
    /// The connection failed or the reply could not be read.
    Connection(ClientError),
    /// The server answered with an exception.
    Refused {
        /// The method called.
        method: &'static str,
        /// The exception's type and message.
        message: String,
    },
}

impl fmt::Display for ThriftError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThriftError::Connection(e) => write!(f, "{e}"),
            ThriftError::Refused { method, message } => write!(f, "{method}: {message}"),
        }
    }
}

/// Makes `call` and returns its success value.
fn call<T: Wire>(client: &mut Client, call: Call) -> Result<T, ThriftError> {
    let method = call.name();
    let refused = |kind: &str, message: Option<String>| ThriftError::Refused {
        method,
        message: format!("{kind}: {}", message.unwrap_or_default()),
    };
    match client.call::<T>(&call).map_err(ThriftError::Connection)? {
        Response::Success(value) => Ok(value),
        Response::Io(e) => Err(refused("IOError", e.message)),
        Response::IllegalArgument(e) => Err(refused("IllegalArgument", e.message)),
        Response::AlreadyExists(e) => Err(refused("AlreadyExists", e.message)),
        Response::Application(e) => Err(refused("TApplicationException", e.message)),
    }
}

/// No attributes: sent as an empty map rather than left out, since some HBase releases'
/// handlers read the map without checking that it is there.
fn no_attributes() -> Option<Attributes> {
    Some(ThriftMap(Vec::new()))
}

/// A table on an HBase Thrift1 server.
pub struct ThriftTarget {
    address: SocketAddr,
    /// `HOST:PORT` as given.
    label: String,
    format: WireFormat,
    table: Vec<u8>,
    /// `f:v`, the column of a record's value.
    value_column: Vec<u8>,
    /// `f:n`, the column increments add to.
    counter_column: Vec<u8>,
}

impl ThriftTarget {
    /// The table `table` on the server at `address` (`HOST:PORT`), spoken to in `format`.
    pub fn new(address: &str, format: WireFormat, table: &str) -> Result<ThriftTarget, RunError> {
        let resolved = address
            .to_socket_addrs()
            .map_err(|e| RunError(format!("--thrift {address}: {e}")))?
            .next()
            .ok_or_else(|| RunError(format!("--thrift {address}: no address")))?;
        let column = |qualifier: &[u8]| [FAMILY, b":", qualifier].concat();
        Ok(ThriftTarget {
            address: resolved,
            label: address.to_owned(),
            format,
            table: table.as_bytes().to_vec(),
            value_column: column(QUALIFIER),
            counter_column: column(COUNTER),
        })
    }

    /// A new connection.
    pub fn connect(&self) -> Result<Client, RunError> {
        Client::connect(self.address, self.format, THRIFT_CALL_TIMEOUT).map_err(|e| {
            RunError(format!(
                "--thrift {}: cannot connect ({}): {e}",
                self.label, self.format
            ))
        })
    }

    fn setup_error(&self, what: &str, e: ThriftError) -> RunError {
        RunError(format!("--thrift {}: {what}: {e}", self.label))
    }

    /// Whether the server has the table.
    pub fn table_exists(&self) -> Result<bool, RunError> {
        let mut client = self.connect()?;
        let names: Vec<Vec<u8>> = call(&mut client, Call::GetTableNames(GetTableNamesArgs {}))
            .map_err(|e| self.setup_error("listing tables", e))?;
        Ok(names.contains(&self.table))
    }

    /// Creates the table with family `f` as strata-loadgen creates it in process: one
    /// version, no compression, a row bloom, blocks cached, no TTL (Thrift1's own defaults
    /// would leave the block cache off).
    pub fn create_table(&self) -> Result<(), RunError> {
        let mut client = self.connect()?;
        let family = ColumnDescriptor {
            name: Some([FAMILY, b":"].concat()),
            max_versions: Some(1),
            compression: Some("NONE".to_owned()),
            in_memory: Some(false),
            bloom_filter_type: Some("ROW".to_owned()),
            block_cache_enabled: Some(true),
            time_to_live: Some(i32::MAX),
            ..ColumnDescriptor::default()
        };
        call::<()>(
            &mut client,
            Call::CreateTable(CreateTableArgs {
                table_name: Some(self.table.clone()),
                column_families: Some(vec![family]),
            }),
        )
        .map_err(|e| self.setup_error("creating the table", e))
    }

    /// Writes one batch of an untimed preload with one `mutateRows` call.
    pub fn load(&self, client: &mut Client, records: &[(Vec<u8>, Vec<u8>)]) -> Result<(), String> {
        let batches = records
            .iter()
            .map(|(key, value)| BatchMutation {
                row: Some(key.clone()),
                mutations: Some(vec![self.put_mutation(value)]),
            })
            .collect();
        call::<()>(
            client,
            Call::MutateRows(MutateRowsArgs {
                table_name: Some(self.table.clone()),
                row_batches: Some(batches),
                attributes: no_attributes(),
            }),
        )
        .map_err(|e| e.to_string())
    }

    /// Counts the table's rows (a scan of row keys only, [`THRIFT_BATCH_ROWS`] a call).
    pub fn count_rows(&self) -> Result<u64, RunError> {
        let mut client = self.connect()?;
        let scan = TScan {
            filter_string: Some(b"FirstKeyOnlyFilter() AND KeyOnlyFilter()".to_vec()),
            caching: Some(THRIFT_BATCH_ROWS as i32),
            ..TScan::default()
        };
        let id: i32 = call(
            &mut client,
            Call::ScannerOpenWithScan(ScannerOpenWithScanArgs {
                table_name: Some(self.table.clone()),
                scan: Some(scan),
                attributes: no_attributes(),
            }),
        )
        .map_err(|e| self.setup_error("counting rows", e))?;
        let mut rows = 0u64;
        loop {
            let batch: Vec<TRowResult> = call(
                &mut client,
                Call::ScannerGetList(ScannerGetListArgs {
                    id: Some(id),
                    nb_rows: Some(THRIFT_BATCH_ROWS as i32),
                }),
            )
            .map_err(|e| self.setup_error("counting rows", e))?;
            if batch.is_empty() {
                break;
            }
            rows += batch.len() as u64;
        }
        call::<()>(
            &mut client,
            Call::ScannerClose(ScannerCloseArgs { id: Some(id) }),
        )
        .map_err(|e| self.setup_error("counting rows", e))?;
        Ok(rows)
    }

    /// The table's regions by `getTableRegions` (key ranges only: Thrift1 carries no load
    /// counters).
    pub fn regions(&self) -> Result<Vec<RegionSpan>, RunError> {
        let mut client = self.connect()?;
        let regions: Vec<TRegionInfo> = call(
            &mut client,
            Call::GetTableRegions(GetTableRegionsArgs {
                table_name: Some(self.table.clone()),
            }),
        )
        .map_err(|e| self.setup_error("listing the table's regions", e))?;
        let mut spans: Vec<RegionSpan> = regions
            .into_iter()
            .map(|r| RegionSpan {
                start_key: r.start_key.unwrap_or_default(),
                end_key: r.end_key.unwrap_or_default(),
                activity: None,
            })
            .collect();
        spans.sort_by(|a, b| a.start_key.cmp(&b.start_key));
        Ok(spans)
    }

    fn put_mutation(&self, value: &[u8]) -> Mutation {
        Mutation {
            is_delete: Some(false),
            column: Some(self.value_column.clone()),
            value: Some(value.to_vec()),
            write_to_wal: Some(true),
        }
    }

    fn execute(
        &self,
        connection: &mut Option<Client>,
        operation: Operation<'_>,
    ) -> Result<(), String> {
        let client = match connection {
            Some(client) => client,
            None => connection.insert(self.connect().map_err(|e| e.0)?),
        };
        let result = self.call_operation(client, operation);
        if let Err(ThriftError::Connection(_)) = &result {
            *connection = None;
        }
        result.map_err(|e| e.to_string())
    }

    fn call_operation(
        &self,
        client: &mut Client,
        operation: Operation<'_>,
    ) -> Result<(), ThriftError> {
        let table = || Some(self.table.clone());
        match operation {
            Operation::Get { row } => {
                call::<Vec<TRowResult>>(
                    client,
                    Call::GetRow(GetRowArgs {
                        table_name: table(),
                        row: Some(row.to_vec()),
                        attributes: no_attributes(),
                    }),
                )?;
            }
            Operation::Put { row, value } => call::<()>(
                client,
                Call::MutateRow(MutateRowArgs {
                    table_name: table(),
                    row: Some(row.to_vec()),
                    mutations: Some(vec![self.put_mutation(value)]),
                    attributes: no_attributes(),
                }),
            )?,
            Operation::Scan { start, rows } => {
                // Thrift1 scans in three calls: open, fetch, close.
                let id: i32 = call(
                    client,
                    Call::ScannerOpen(ScannerOpenArgs {
                        table_name: table(),
                        start_row: Some(start.to_vec()),
                        columns: Some(Vec::new()),
                        attributes: no_attributes(),
                    }),
                )?;
                let fetched = call::<Vec<TRowResult>>(
                    client,
                    Call::ScannerGetList(ScannerGetListArgs {
                        id: Some(id),
                        nb_rows: Some(i32::try_from(rows).unwrap_or(i32::MAX)),
                    }),
                );
                let closed = call::<()>(
                    client,
                    Call::ScannerClose(ScannerCloseArgs { id: Some(id) }),
                );
                fetched?;
                closed?;
            }
            Operation::Increment { row } => {
                call::<i64>(
                    client,
                    Call::AtomicIncrement(AtomicIncrementArgs {
                        table_name: table(),
                        row: Some(row.to_vec()),
                        column: Some(self.counter_column.clone()),
                        value: Some(1),
                    }),
                )?;
            }
            Operation::Delete { row } => call::<()>(
                client,
                Call::DeleteAllRow(DeleteAllRowArgs {
                    table_name: table(),
                    row: Some(row.to_vec()),
                    attributes: no_attributes(),
                }),
            )?,
            Operation::GetMany { rows } => {
                call::<Vec<TRowResult>>(
                    client,
                    Call::GetRows(GetRowsArgs {
                        table_name: table(),
                        rows: Some(rows.to_vec()),
                        attributes: no_attributes(),
                    }),
                )?;
            }
            Operation::CheckAndPut {
                row,
                expected,
                value,
            } => {
                call::<bool>(
                    client,
                    Call::CheckAndPut(CheckAndPutArgs {
                        table_name: table(),
                        row: Some(row.to_vec()),
                        column: Some(self.value_column.clone()),
                        value: Some(expected.to_vec()),
                        mput: Some(self.put_mutation(value)),
                        attributes: no_attributes(),
                    }),
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_lists_parse_in_order_once_each() {
        assert_eq!(
            EngineName::parse_list(&["strata"]).unwrap(),
            vec![EngineName::Strata]
        );
        let e = EngineName::parse_list(&["mysql"]).unwrap_err().0;
        assert!(e.contains("one of strata, rocksdb, fjall, all"), "{e}");
        if cfg!(feature = "peers") {
            assert_eq!(
                EngineName::parse_list(&["fjall,strata", "fjall", "rocksdb"]).unwrap(),
                vec![EngineName::Fjall, EngineName::Strata, EngineName::RocksDb]
            );
            assert_eq!(
                EngineName::parse_list(&["all"]).unwrap(),
                EngineName::ALL.to_vec()
            );
        } else {
            let e = EngineName::parse_list(&["strata,rocksdb"]).unwrap_err().0;
            assert!(
                e.contains("--engine rocksdb: not in this build") && e.contains("--features peers"),
                "{e}"
            );
            assert_eq!(
                EngineName::parse_list(&["all"]).unwrap(),
                vec![EngineName::Strata]
            );
        }
    }
}
