//! The scan's execution plan: one partition per key range (a region, or a sub-range of
//! one), each read by the engine's borrowing cursor on a blocking thread into Arrow batches.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{
    EquivalenceProperties, Partitioning, PhysicalExpr, PhysicalSortExpr,
};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use strata::filters::escape::to_string_binary;
use strata::{Db, Filter, Scan};

use crate::mapping::{ColumnSource, KeyPart, order_preserving};
use crate::pushdown::ranges_filter;
use crate::ranges::{KeyRange, KeyRanges};
use crate::rows::RowDecoder;
use crate::view::{CELLS_ROW, View};

/// Batches a partition's reader may have ready ahead of the consumer.
const READ_AHEAD_BATCHES: usize = 2;

/// What a scan reads of each row.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ReadColumns {
    /// Every family.
    All,
    /// Whole families.
    Families(Vec<Vec<u8>>),
    /// Single columns, `(family, qualifier)`.
    Columns(Vec<(Vec<u8>, Vec<u8>)>),
}

/// Everything a partition needs to run a scan, the same for every partition of a query.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanSpec {
    /// The SQL table (for messages).
    pub sql_table: String,
    /// The strata table.
    pub table: String,
    /// How the table appears in SQL.
    pub view: View,
    /// The view's columns the scan returns, in order (empty: only row counts).
    pub projection: Vec<usize>,
    /// The key ranges that can hold matching rows.
    pub ranges: KeyRanges,
    /// The pushed-down filter (key ranges apart).
    pub filter: Option<Filter>,
    /// The families or columns the scan reads.
    pub read: ReadColumns,
    /// Only timestamps in `[min, max)`.
    pub time: Option<(i64, i64)>,
    /// At most this many output rows per partition.
    pub limit: Option<usize>,
}

impl ScanSpec {
    /// The strata scan of the part of this spec inside `partition`; `None` when no row of
    /// the partition can match.
    pub fn scan_within(&self, partition: &KeyRange) -> Result<Option<Scan>> {
        let ranges = self.ranges.within(partition);
        let Some(hull) = ranges.hull() else {
            return Ok(None);
        };
        let mut scan = Scan::new();
        if !hull.start.is_empty() {
            scan = scan.start(&hull.start);
        }
        if let Some(end) = &hull.end {
            scan = scan.stop(end);
        }
        scan = match &self.read {
            ReadColumns::All => scan,
            ReadColumns::Families(families) => families.iter().fold(scan, |s, f| s.family(f)),
            ReadColumns::Columns(columns) => columns.iter().fold(scan, |s, (f, q)| s.column(f, q)),
        };
        if let Some((min, max)) = self.time {
            scan = scan.time_range(min, max);
        }
        // Several ranges in the partition: the engine skips between them.
        let ranges_filter = (ranges.ranges().len() > 1).then(|| ranges_filter(&ranges));
        let filter = match (ranges_filter, &self.filter) {
            (None, None) => None,
            (Some(r), None) => Some(r),
            (None, Some(f)) => Some(f.clone()),
            (Some(r), Some(f)) => Some(
                Filter::all(vec![r, f.clone()])
                    .map_err(|e| DataFusionError::Internal(e.to_string()))?,
            ),
        };
        if let Some(filter) = filter {
            scan = scan.filter(filter);
        }
        if let Some(limit) = self.limit {
            scan = scan.limit(limit as u64);
        }
        Ok(Some(scan))
    }
}

/// Where a scan's rows come from.
#[derive(Debug, Clone)]
pub enum RowSource {
    /// A database open in this process.
    Local(Db),
    /// Workers of a cluster: this process plans the scan and never runs it.
    Remote,
}

/// Reads a strata table's key ranges, one DataFusion partition per range.
#[derive(Debug, Clone)]
pub struct StrataScanExec {
    spec: Arc<ScanSpec>,
    partitions: Vec<KeyRange>,
    /// The worker holding each partition (a cluster's scans; empty for a local scan).
    workers: Vec<Option<String>>,
    source: RowSource,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl StrataScanExec {
    /// A scan of `spec` in `partitions` (key ranges in key order) from `source`.
    pub fn new(spec: Arc<ScanSpec>, partitions: Vec<KeyRange>, source: RowSource) -> Result<Self> {
        let count = partitions.len();
        StrataScanExec::placed(spec, partitions, Vec::new(), count, source)
    }

    /// A scan whose partitions are on the given `workers` (one per partition), shown to
    /// DataFusion as `partition_count` partitions (those past `partitions` are empty: the
    /// variants of a distributed scan must all have the same count).
    pub fn placed(
        spec: Arc<ScanSpec>,
        partitions: Vec<KeyRange>,
        workers: Vec<Option<String>>,
        partition_count: usize,
        source: RowSource,
    ) -> Result<Self> {
        let schema = Arc::new(spec.view.schema().project(&spec.projection)?);
        let orderings = key_ordering(&spec, &schema);
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new_with_orderings(Arc::clone(&schema), orderings),
            // At least one partition, which an empty scan leaves empty.
            Partitioning::UnknownPartitioning(partition_count.max(partitions.len()).max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(StrataScanExec {
            spec,
            partitions,
            workers,
            source,
            schema,
            properties,
        })
    }

    /// The same scan over other partitions, placed on `workers`.
    pub fn with_placement(
        &self,
        partitions: Vec<KeyRange>,
        workers: Vec<Option<String>>,
        partition_count: usize,
        source: RowSource,
    ) -> Result<Self> {
        StrataScanExec::placed(
            Arc::clone(&self.spec),
            partitions,
            workers,
            partition_count,
            source,
        )
    }

    /// The worker of each partition (empty for a local scan).
    pub fn workers(&self) -> &[Option<String>] {
        &self.workers
    }

    /// The partitions DataFusion sees.
    pub fn partition_count(&self) -> usize {
        self.properties.partitioning.partition_count()
    }

    /// The scan's spec.
    pub fn spec(&self) -> &Arc<ScanSpec> {
        &self.spec
    }

    /// The partitions' key ranges.
    pub fn partitions(&self) -> &[KeyRange] {
        &self.partitions
    }
}

/// The orderings the scan's output has: every partition reads its range in key order, so the
/// key columns that lead the key, in key order and with order-preserving encodings, are
/// sorted (as far as they are projected).
fn key_ordering(spec: &ScanSpec, schema: &SchemaRef) -> Vec<Vec<PhysicalSortExpr>> {
    let sorted_view_columns: Vec<usize> = match &spec.view {
        View::Cells { .. } => vec![CELLS_ROW],
        View::Mapped(mapping) => {
            let mut columns = Vec::new();
            for &column in mapping.key_columns() {
                let Some(mapped) = mapping.columns().get(column) else {
                    break;
                };
                let ColumnSource::Key { part, .. } = mapped.source else {
                    break;
                };
                if !order_preserving(mapped.column_type, mapped.encoding)
                    || matches!(part, KeyPart::UntilSeparator(_))
                {
                    break;
                }
                columns.push(column);
            }
            columns
        }
    };
    let mut ordering = Vec::new();
    for view_column in sorted_view_columns {
        let Some(output) = spec.projection.iter().position(|&p| p == view_column) else {
            break;
        };
        let name = schema.field(output).name();
        ordering.push(PhysicalSortExpr::new_default(Arc::new(Column::new(
            name, output,
        ))));
    }
    if ordering.is_empty() {
        Vec::new()
    } else {
        vec![ordering]
    }
}

fn write_key(f: &mut fmt::Formatter<'_>, key: &[u8]) -> fmt::Result {
    write!(f, "'{}'", to_string_binary(key))
}

fn write_range(f: &mut fmt::Formatter<'_>, range: &KeyRange) -> fmt::Result {
    write!(f, "[")?;
    write_key(f, &range.start)?;
    write!(f, ", ")?;
    match &range.end {
        Some(end) => write_key(f, end)?,
        None => write!(f, "end")?,
    }
    write!(f, ")")
}

impl DisplayAs for StrataScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = &self.spec;
        write!(
            f,
            "StrataScanExec: table={} view={} partitions={}",
            spec.table,
            spec.view.kind(),
            self.partitions.len()
        )?;
        let mut workers: Vec<&str> = self.workers.iter().flatten().map(String::as_str).collect();
        workers.dedup();
        if !workers.is_empty() {
            write!(f, " workers=[{}]", workers.join(","))?;
        }
        if !spec.ranges.is_all() {
            write!(f, " ranges=")?;
            let shown = if matches!(t, DisplayFormatType::Verbose) {
                usize::MAX
            } else {
                4
            };
            for (i, range) in spec.ranges.ranges().iter().take(shown).enumerate() {
                if i > 0 {
                    write!(f, ",")?;
                }
                write_range(f, range)?;
            }
            if spec.ranges.ranges().len() > shown {
                write!(f, ",...{} in all", spec.ranges.ranges().len())?;
            }
        }
        if let Some(filter) = &spec.filter {
            write!(f, " filter=\"{filter}\"")?;
        }
        match &spec.read {
            ReadColumns::All => {}
            ReadColumns::Families(families) => {
                let names: Vec<_> = families
                    .iter()
                    .map(|f| String::from_utf8_lossy(f))
                    .collect();
                write!(f, " families=[{}]", names.join(","))?;
            }
            ReadColumns::Columns(columns) => {
                let names: Vec<_> = columns
                    .iter()
                    .map(|(fam, q)| {
                        format!("{}:{}", String::from_utf8_lossy(fam), to_string_binary(q))
                    })
                    .collect();
                write!(f, " columns=[{}]", names.join(","))?;
            }
        }
        if let Some((min, max)) = spec.time {
            write!(f, " time=[{min}, {max})")?;
        }
        if let Some(limit) = spec.limit {
            write!(f, " limit={limit}")?;
        }
        if spec.projection.is_empty() {
            write!(f, " count_only")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for StrataScanExec {
    fn name(&self) -> &str {
        "StrataScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(
                "StrataScanExec has no children".to_owned(),
            ))
        }
    }

    /// The exact row count of a local mapped scan where the engine knows it without reading
    /// (`Table::known_count`: compacted regions without deletes, empty memstores, no filter
    /// or limit in the scan), so that DataFusion answers `count(*)` from it and runs no scan;
    /// unknown otherwise. The cells view has a row per cell, which the files do not count.
    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        let unknown = || Ok(Arc::new(Statistics::new_unknown(&self.schema)));
        let (RowSource::Local(db), View::Mapped(_)) = (&self.source, &self.spec.view) else {
            return unknown();
        };
        // The whole scan is asked as one range: partitions that cut a region into sub-ranges
        // cut through its files, whose counts then tell nothing.
        let everything = KeyRange::all();
        let ranges: Vec<&KeyRange> = match args.partition() {
            Some(partition) => self.partitions.get(partition).into_iter().collect(),
            None => vec![&everything],
        };
        let table = db.table(&self.spec.table).map_err(engine_error)?;
        let mut rows = 0u64;
        for range in ranges {
            let Some(scan) = self.spec.scan_within(range)? else {
                continue;
            };
            match table.known_count(&scan).map_err(engine_error)? {
                Some(known) => rows += known,
                None => return unknown(),
            }
        }
        let Ok(rows) = usize::try_from(rows) else {
            return unknown();
        };
        Ok(Arc::new(Statistics {
            num_rows: Precision::Exact(rows),
            total_byte_size: Precision::Absent,
            column_statistics: Statistics::unknown_column(&self.schema),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let mut builder =
            RecordBatchReceiverStreamBuilder::new(Arc::clone(&self.schema), READ_AHEAD_BATCHES);
        let Some(range) = self.partitions.get(partition).cloned() else {
            // The one partition of a scan with no key range to read (on a cluster too: no
            // worker holds a row it could match), or a partition that pads a task's variant.
            return Ok(builder.build());
        };
        let RowSource::Local(db) = &self.source else {
            return Err(DataFusionError::Execution(format!(
                "the scan of {} runs on the cluster's workers, not in the coordinating process",
                self.spec.table
            )));
        };
        let tx = builder.tx();
        let reader = PartitionReader {
            db: db.clone(),
            spec: Arc::clone(&self.spec),
            schema: Arc::clone(&self.schema),
            range,
            batch_rows: context.session_config().batch_size().max(1),
        };
        builder.spawn_blocking(move || reader.run(|batch| tx.blocking_send(Ok(batch)).is_ok()));
        Ok(builder.build())
    }
}

/// Reads one partition.
struct PartitionReader {
    db: Db,
    spec: Arc<ScanSpec>,
    schema: SchemaRef,
    range: KeyRange,
    batch_rows: usize,
}

fn engine_error(error: strata::Error) -> DataFusionError {
    DataFusionError::External(Box::new(error))
}

impl PartitionReader {
    /// Reads the partition, handing each batch to `send`, which returns false when the
    /// consumer has gone (the read then stops).
    fn run(self, mut send: impl FnMut(RecordBatch) -> bool) -> Result<()> {
        let table = self.db.table(&self.spec.table).map_err(engine_error)?;
        let Some(scan) = self.spec.scan_within(&self.range)? else {
            return Ok(());
        };
        if self.spec.projection.is_empty() && matches!(self.spec.view, View::Mapped(_)) {
            // count(*): the engine counts the rows itself, nothing is decoded.
            let rows = table.count(&scan).map_err(engine_error)?;
            let rows = usize::try_from(rows).unwrap_or(usize::MAX);
            let rows = self.spec.limit.map_or(rows, |limit| rows.min(limit));
            let batch = RecordBatch::try_new_with_options(
                Arc::clone(&self.schema),
                Vec::new(),
                &RecordBatchOptions::new().with_row_count(Some(rows)),
            )?;
            send(batch);
            return Ok(());
        }
        let mut decoder = RowDecoder::new(
            &self.spec.sql_table,
            &self.spec.view,
            &self.spec.projection,
            Arc::clone(&self.schema),
            self.batch_rows,
        );
        let mut left = self.spec.limit.unwrap_or(usize::MAX);
        let mut cursor = table.scan_cursor(&scan).map_err(engine_error)?;
        while left > 0 {
            let Some(row) = cursor.next_row().map_err(engine_error)? else {
                break;
            };
            left -= decoder.push(&row, left)?;
            if decoder.len() >= self.batch_rows && !send(decoder.finish()?) {
                return Ok(());
            }
        }
        if decoder.len() > 0 {
            send(decoder.finish()?);
        }
        Ok(())
    }
}
