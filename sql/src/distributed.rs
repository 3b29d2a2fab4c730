//! Several processes: a query planned in one process runs its region scans on the worker
//! processes that hold the regions, through datafusion-distributed.
//!
//! A cluster is a set of workers (`strata sql-worker`), each serving a strata database that
//! holds some key ranges (shards) of some tables, described by a [`Cluster`] map. The
//! coordinating session plans as usual; its scan leaf ([`StrataScanExec`]) gets one partition
//! per shard that can hold matching rows, each tagged with its worker. Three handlers of
//! datafusion-distributed then place the scan: the stage takes one task per worker holding
//! such a shard (desired task count; two when that is one worker, see
//! `TASKS_FOR_ONE_WORKER`), each task's variant of the leaf keeps only its worker's
//! partitions (scale-up), and task `i` is sent to that worker (routing). The leaf crosses the
//! network through [`StrataCodec`]; stages above it (partial aggregates, shuffles) are
//! datafusion-distributed's, and results stream back as Arrow Flight data over gRPC.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{SessionState, SessionStateBuilder, TaskContext};
use datafusion::logical_expr::ScalarUDF;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_distributed::{
    DesiredTaskCountEvent, DesiredTaskCountEventResponse, DistributedExt, DistributedLeafExec,
    RouteTasksEvent, RouteTasksEventResponse, ScaleUpLeafNodeEvent, ScaleUpLeafNodeEventResponse,
    SessionStateBuilderExt, Worker, WorkerQueryContext, WorkerResolver, WorkerSessionBuilder,
};
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use serde::{Deserialize, Serialize};
use strata::Db;
use strata::filters::escape::from_string_binary;
use url::Url;

use crate::exec::{ReadColumns, RowSource, ScanSpec, StrataScanExec};
use crate::mapping::{BadValues, Mapping};
use crate::ranges::{KeyRange, KeyRanges};
use crate::view::View;

/// A key range of a table held by one worker, as written in a cluster file: keys in HBase's
/// binary notation (`\xHH` for bytes that are not printable), an empty `end` for no bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// The strata table.
    pub table: String,
    /// First key of the shard (empty: from the first row).
    #[serde(default)]
    pub start: String,
    /// First key past the shard (empty: to the last row).
    #[serde(default)]
    pub end: String,
}

impl Shard {
    /// The shard's key range.
    pub fn range(&self) -> KeyRange {
        KeyRange::region(
            &from_string_binary(&self.start),
            &from_string_binary(&self.end),
        )
    }
}

/// One worker and the shards it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerShards {
    /// The worker's address, `http://host:port`.
    pub url: String,
    /// The shards its database holds.
    pub shards: Vec<Shard>,
}

/// Which worker holds which key ranges: the region map of a cluster.
///
/// ```json
/// {"workers": [
///   {"url": "http://127.0.0.1:50051", "shards": [{"table": "pages", "start": "", "end": "m"}]},
///   {"url": "http://127.0.0.1:50052", "shards": [{"table": "pages", "start": "m", "end": ""}]}
/// ]}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// The workers.
    pub workers: Vec<WorkerShards>,
}

/// Why a cluster map was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterError(pub String);

impl std::fmt::Display for ClusterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cluster map: {}", self.0)
    }
}

impl std::error::Error for ClusterError {}

impl Cluster {
    /// Reads and checks a cluster map.
    pub fn from_json(text: &str) -> Result<Cluster, ClusterError> {
        let cluster: Cluster =
            serde_json::from_str(text).map_err(|e| ClusterError(e.to_string()))?;
        cluster.check()?;
        Ok(cluster)
    }

    /// Reads and checks the cluster map in `path`.
    pub fn load(path: &Path) -> Result<Cluster, ClusterError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ClusterError(format!("reading {}: {e}", path.display())))?;
        Cluster::from_json(&text)
    }

    /// The map as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    fn check(&self) -> Result<(), ClusterError> {
        if self.workers.is_empty() {
            return Err(ClusterError("no workers".to_owned()));
        }
        for worker in &self.workers {
            Url::parse(&worker.url)
                .map_err(|e| ClusterError(format!("worker url {:?}: {e}", worker.url)))?;
        }
        let mut by_table: BTreeMap<&str, Vec<KeyRange>> = BTreeMap::new();
        for worker in &self.workers {
            for shard in &worker.shards {
                let range = shard.range();
                if range.is_empty() {
                    return Err(ClusterError(format!(
                        "shard [{:?}, {:?}) of {} on {} is empty",
                        shard.start, shard.end, shard.table, worker.url
                    )));
                }
                let ranges = by_table.entry(&shard.table).or_default();
                if ranges.iter().any(|r| !r.intersect(&range).is_empty()) {
                    return Err(ClusterError(format!(
                        "shards of {} overlap at [{:?}, {:?}) on {}",
                        shard.table, shard.start, shard.end, worker.url
                    )));
                }
                ranges.push(range);
            }
        }
        Ok(())
    }

    /// The shards of `table` with their workers' URLs, in key order.
    pub fn shards_of(&self, table: &str) -> Vec<(KeyRange, String)> {
        let mut shards: Vec<(KeyRange, String)> = self
            .workers
            .iter()
            .flat_map(|w| {
                w.shards
                    .iter()
                    .filter(|s| s.table == table)
                    .map(|s| (s.range(), w.url.clone()))
            })
            .collect();
        shards.sort_by(|a, b| a.0.start.cmp(&b.0.start));
        shards
    }

    fn urls(&self) -> Result<Vec<Url>> {
        self.workers
            .iter()
            .map(|w| Url::parse(&w.url).map_err(|e| DataFusionError::External(Box::new(e))))
            .collect()
    }
}

/// The cluster's workers, for datafusion-distributed.
struct ClusterWorkers(Arc<Cluster>);

impl WorkerResolver for ClusterWorkers {
    fn get_urls(&self) -> Result<Vec<Url>> {
        self.0.urls()
    }
}

/// The distributed planner's settings for a coordinating session over `cluster`.
pub(crate) fn coordinator(
    builder: SessionStateBuilder,
    cluster: Arc<Cluster>,
) -> Result<SessionStateBuilder> {
    // datafusion-distributed caps a stage's tasks at the workers' count unless told otherwise;
    // a scan one worker holds needs two tasks (`task_count`), whatever the count of workers.
    let max_tasks = cluster.workers.len().max(TASKS_FOR_ONE_WORKER);
    builder
        .with_distributed_worker_resolver(ClusterWorkers(cluster))
        .with_distributed_planner()
        .with_distributed_user_codec(StrataCodec { db: None })
        .with_distributed_desired_task_count_handler(desired_task_count)
        .with_distributed_scale_up_leaf_node_handler(scale_up)
        .with_distributed_route_tasks_handler(route_tasks)
        .with_distributed_max_tasks_per_stage(max_tasks)
}

/// The workers a scan's partitions are on, in first-seen order.
fn scan_workers(scan: &StrataScanExec) -> Vec<String> {
    let mut workers: Vec<String> = Vec::new();
    for worker in scan.workers().iter().flatten() {
        if !workers.contains(worker) {
            workers.push(worker.clone());
        }
    }
    workers
}

/// Tasks of a stage whose scan one worker holds: that worker's, and one that reads nothing.
///
/// datafusion-distributed runs a stage of one task under a consumer of one task in the
/// coordinating process (it elides the network boundary), where the scan's rows are not; a
/// second, empty task keeps the stage on the worker. The empty task goes to the same worker
/// and costs it one empty stream.
const TASKS_FOR_ONE_WORKER: usize = 2;

/// Tasks of a scan's stage: one per worker holding a partition of the scan
/// ([`TASKS_FOR_ONE_WORKER`] when that is one worker; one when none is, and the scan reads
/// nothing).
fn task_count(workers: usize) -> usize {
    match workers {
        0 => 1,
        1 => TASKS_FOR_ONE_WORKER,
        many => many,
    }
}

/// One task per worker holding a partition of the scan (see [`task_count`]).
fn desired_task_count(
    event: DesiredTaskCountEvent<'_>,
) -> Option<Result<DesiredTaskCountEventResponse>> {
    let scan = event.plan.downcast_ref::<StrataScanExec>()?;
    Some(Ok(DesiredTaskCountEventResponse::desired(task_count(
        scan_workers(scan).len(),
    ))))
}

/// The scan cut into one variant per worker, each with that worker's partitions (padded
/// with empty ones, as every variant has the same partition count).
fn scale_up(event: ScaleUpLeafNodeEvent<'_>) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
    let scan = event.plan.downcast_ref::<StrataScanExec>()?;
    let workers = scan_workers(scan);
    if workers.is_empty() {
        // No shard can hold a matching row: one task that reads nothing.
        return Some(Ok(ScaleUpLeafNodeEventResponse::new(Arc::clone(
            event.plan,
        ))));
    }
    if event.task_count != task_count(workers.len()) {
        return Some(Err(DataFusionError::Plan(format!(
            "the scan of {} needs one task on each of the {} workers holding its shards, and \
             the distributed planner gave its stage {} tasks",
            scan.spec().table,
            workers.len(),
            event.task_count
        ))));
    }
    let mut per_worker: Vec<(Vec<KeyRange>, Option<&String>)> = workers
        .iter()
        .map(|w| {
            let partitions = scan
                .partitions()
                .iter()
                .zip(scan.workers())
                .filter(|(_, on)| on.as_deref() == Some(w.as_str()))
                .map(|(p, _)| p.clone())
                .collect();
            (partitions, Some(w))
        })
        .collect();
    // The empty task of a scan one worker holds: no partition, and so no worker of its own
    // (`route_tasks` sends it to the other task's worker).
    per_worker.resize_with(event.task_count, || (Vec::new(), None));
    let width = per_worker
        .iter()
        .map(|(partitions, _)| partitions.len())
        .max()
        .unwrap_or(1);
    let variants = per_worker
        .into_iter()
        .map(|(partitions, worker)| {
            let count = partitions.len();
            scan.with_placement(
                partitions,
                vec![worker.cloned(); count],
                width,
                RowSource::Remote,
            )
            .map(|v| Arc::new(v) as Arc<dyn ExecutionPlan>)
        })
        .collect::<Result<Vec<_>>>();
    Some(variants.and_then(|variants| {
        DistributedLeafExec::try_new(Arc::clone(event.plan), variants)
            .map(|leaf| ScaleUpLeafNodeEventResponse::new(Arc::new(leaf)))
    }))
}

/// Task `i` of a stage holding a scan goes to the worker of the scan's variant `i`.
fn route_tasks(event: RouteTasksEvent<'_>) -> Option<Result<RouteTasksEventResponse>> {
    let mut urls: Option<Vec<String>> = None;
    let mut conflict = None;
    find_leaves(event.plan, &mut |leaf| {
        let placed: Vec<Option<String>> = leaf
            .variants()
            .iter()
            .map(|v| {
                v.downcast_ref::<StrataScanExec>()
                    .and_then(|s| s.workers().iter().flatten().next().cloned())
            })
            .collect();
        // A variant without partitions (the empty task of a scan one worker holds) can run
        // anywhere: on the first worker that holds a partition.
        let anywhere = placed.iter().flatten().next().cloned().unwrap_or_default();
        let workers: Vec<String> = placed
            .into_iter()
            .map(|worker| worker.unwrap_or_else(|| anywhere.clone()))
            .collect();
        match &urls {
            None => urls = Some(workers),
            Some(seen) if *seen != workers => {
                conflict = Some("two strata scans in one stage are held by different workers")
            }
            Some(_) => {}
        }
    });
    if let Some(conflict) = conflict {
        return Some(Err(DataFusionError::Plan(conflict.to_owned())));
    }
    let urls = urls?;
    if urls.len() != event.task_count {
        return None;
    }
    Some(
        urls.iter()
            .map(|u| Url::parse(u).map_err(|e| DataFusionError::External(Box::new(e))))
            .collect::<Result<Vec<_>>>()
            .map(RouteTasksEventResponse::new),
    )
}

/// Calls `found` with every leaf of `plan` that distributes a strata scan.
fn find_leaves(plan: &Arc<dyn ExecutionPlan>, found: &mut dyn FnMut(&DistributedLeafExec)) {
    if let Some(leaf) = plan.downcast_ref::<DistributedLeafExec>()
        && leaf.original().downcast_ref::<StrataScanExec>().is_some()
    {
        found(leaf);
        return;
    }
    for child in plan.children() {
        find_leaves(child, found);
    }
}

/// Sends strata scans across the network: encodes them on the coordinator, decodes them on a
/// worker into scans of the worker's database.
#[derive(Debug, Clone)]
pub(crate) struct StrataCodec {
    /// The worker's database (`None` on the coordinator, which only encodes).
    db: Option<Db>,
}

/// A scan on the wire (keys and values as bytes, the mapping and filter as their text).
#[derive(Serialize, Deserialize)]
struct ScanWire {
    sql_table: String,
    table: String,
    view: ViewWire,
    projection: Vec<usize>,
    ranges: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    filter: Option<String>,
    read: ReadWire,
    time: Option<(i64, i64)>,
    limit: Option<usize>,
    partitions: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    workers: Vec<Option<String>>,
    partition_count: usize,
}

#[derive(Serialize, Deserialize)]
enum ViewWire {
    Cells {
        single_version: bool,
    },
    Mapped {
        spec: String,
        columns: String,
        bad_values: String,
    },
}

#[derive(Serialize, Deserialize)]
enum ReadWire {
    All,
    Families(Vec<Vec<u8>>),
    Columns(Vec<(Vec<u8>, Vec<u8>)>),
}

fn wire_error(message: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Internal(format!("strata scan on the wire: {message}"))
}

fn ranges_to_wire(ranges: &[KeyRange]) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
    ranges
        .iter()
        .map(|r| (r.start.clone(), r.end.clone()))
        .collect()
}

fn ranges_from_wire(ranges: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Vec<KeyRange> {
    ranges
        .into_iter()
        .map(|(start, end)| KeyRange { start, end })
        .collect()
}

impl StrataCodec {
    fn encode_scan(scan: &StrataScanExec) -> Result<Vec<u8>> {
        let spec = scan.spec();
        let wire = ScanWire {
            sql_table: spec.sql_table.clone(),
            table: spec.table.clone(),
            view: match &spec.view {
                View::Cells { single_version } => ViewWire::Cells {
                    single_version: *single_version,
                },
                View::Mapped(mapping) => ViewWire::Mapped {
                    spec: mapping.spec().to_owned(),
                    columns: mapping.columns_text(),
                    bad_values: mapping.bad_values().name().to_owned(),
                },
            },
            projection: spec.projection.clone(),
            ranges: ranges_to_wire(spec.ranges.ranges()),
            filter: spec.filter.as_ref().map(ToString::to_string),
            read: match &spec.read {
                ReadColumns::All => ReadWire::All,
                ReadColumns::Families(f) => ReadWire::Families(f.clone()),
                ReadColumns::Columns(c) => ReadWire::Columns(c.clone()),
            },
            time: spec.time,
            limit: spec.limit,
            partitions: ranges_to_wire(scan.partitions()),
            workers: scan.workers().to_vec(),
            partition_count: scan.partition_count(),
        };
        serde_json::to_vec(&wire).map_err(wire_error)
    }

    fn decode_scan(&self, bytes: &[u8]) -> Result<StrataScanExec> {
        let Some(db) = &self.db else {
            return Err(wire_error("this process holds no data to scan"));
        };
        let wire: ScanWire = serde_json::from_slice(bytes).map_err(wire_error)?;
        let view = match wire.view {
            ViewWire::Cells { single_version } => View::Cells { single_version },
            ViewWire::Mapped {
                spec,
                columns,
                bad_values,
            } => {
                let columns = Mapping::parse_columns_text(&columns).map_err(wire_error)?;
                let bad_values = BadValues::parse(&bad_values).map_err(wire_error)?;
                View::Mapped(Mapping::parse(&spec, &columns, bad_values).map_err(wire_error)?)
            }
        };
        let spec = ScanSpec {
            sql_table: wire.sql_table,
            table: wire.table,
            view,
            projection: wire.projection,
            ranges: KeyRanges::from_ranges(ranges_from_wire(wire.ranges)),
            filter: wire
                .filter
                .map(|f| strata::filters::parse(&f))
                .transpose()
                .map_err(wire_error)?,
            read: match wire.read {
                ReadWire::All => ReadColumns::All,
                ReadWire::Families(f) => ReadColumns::Families(f),
                ReadWire::Columns(c) => ReadColumns::Columns(c),
            },
            time: wire.time,
            limit: wire.limit,
        };
        StrataScanExec::placed(
            Arc::new(spec),
            ranges_from_wire(wire.partitions),
            wire.workers,
            wire.partition_count,
            RowSource::Local(db.clone()),
        )
    }
}

impl PhysicalExtensionCodec for StrataCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        _ctx: &TaskContext,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !inputs.is_empty() {
            return Err(wire_error("a strata scan has no inputs"));
        }
        Ok(Arc::new(self.decode_scan(buf)?))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some(scan) = node.downcast_ref::<StrataScanExec>() else {
            return Err(wire_error(format!("{} is not a strata scan", node.name())));
        };
        buf.extend_from_slice(&Self::encode_scan(scan)?);
        Ok(())
    }

    fn try_decode_udf(&self, name: &str, _buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        crate::functions::udf(name).ok_or_else(|| wire_error(format!("unknown function {name}")))
    }

    fn try_encode_udf(&self, _node: &ScalarUDF, _buf: &mut Vec<u8>) -> Result<()> {
        Ok(())
    }
}

/// Builds each worker query's session: the strata codec over the worker's database and
/// strata's functions.
#[derive(Clone)]
struct WorkerSessions {
    db: Db,
}

#[async_trait]
impl WorkerSessionBuilder for WorkerSessions {
    async fn build_session_state(&self, ctx: WorkerQueryContext) -> Result<SessionState> {
        let mut state = ctx
            .builder
            .with_distributed_user_codec(StrataCodec {
                db: Some(self.db.clone()),
            })
            .build();
        crate::functions::register_with(&mut state)?;
        Ok(state)
    }
}

/// Serves `db` as a worker on `listener` until `shutdown` completes.
pub async fn serve_worker(
    db: Db,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let worker = Worker::from_session_builder(WorkerSessions { db });
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    tonic::transport::Server::builder()
        .add_service(worker.into_worker_server())
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await?;
    Ok(())
}
