//! The DataFusion table provider of a strata table: schema, filter pushdown decisions, scan
//! planning (projection, pushed filters, key ranges, partitions per region) and `INSERT`.

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::TableType;
use datafusion::datasource::sink::DataSinkExec;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use strata::Db;

use crate::distributed::Cluster;
use crate::exec::{ReadColumns, RowSource, ScanSpec, StrataScanExec};
use crate::insert::StrataSink;
use crate::mapping::{ColumnSource, Mapping};
use crate::pushdown::{Pushed, compile, derive_part_ranges};
use crate::ranges::{KeyRange, KeyRanges};
use crate::view::View;

/// A strata table as a SQL table: its cells view or a mapping.
#[derive(Debug, Clone)]
pub struct StrataTable {
    sql_name: String,
    table: String,
    view: View,
    db: Db,
    source: RowSource,
    /// The workers that hold the table's shards, when the scans run on a cluster.
    cluster: Option<Arc<Cluster>>,
    /// Whether filters and limits are pushed into the scans (off: DataFusion does all).
    pushdown: bool,
}

fn engine(error: strata::Error) -> DataFusionError {
    DataFusionError::External(Box::new(error))
}

impl StrataTable {
    pub(crate) fn new(sql_name: &str, table: &str, view: View, db: Db, source: RowSource) -> Self {
        StrataTable {
            sql_name: sql_name.to_owned(),
            table: table.to_owned(),
            view,
            db,
            source,
            cluster: None,
            pushdown: true,
        }
    }

    /// Scans run on `cluster`'s workers (or locally, with `None`).
    pub(crate) fn with_cluster(mut self, cluster: Option<Arc<Cluster>>) -> Self {
        self.cluster = cluster;
        self
    }

    /// With `false`, no filter or limit is pushed into the scans.
    pub(crate) fn with_pushdown(mut self, pushdown: bool) -> Self {
        self.pushdown = pushdown;
        self
    }

    /// The strata table it reads.
    pub fn strata_table(&self) -> &str {
        &self.table
    }

    /// How it shows the table.
    pub fn view(&self) -> &View {
        &self.view
    }

    /// The scan of `projection` with `filters` (already accepted by
    /// [`TableProvider::supports_filters_pushdown`]) and `limit`, before partitioning.
    pub(crate) fn plan_spec(
        &self,
        projection: Vec<usize>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> ScanSpec {
        let pushed = filters
            .iter()
            .filter_map(|f| compile(f, &self.view))
            .fold(Pushed::everything(), Pushed::and);
        let mut ranges = pushed.ranges.clone();
        let read = match &self.view {
            View::Mapped(mapping) => {
                ranges = ranges.intersect(&derive_part_ranges(mapping, &pushed.parts));
                mapped_read_columns(mapping, &projection, filters)
            }
            View::Cells { .. } => match (&pushed.cells.families, &pushed.cells.qualifiers) {
                (Some(families), Some(qualifiers)) => ReadColumns::Columns(
                    families
                        .iter()
                        .flat_map(|f| qualifiers.iter().map(move |q| (f.clone(), q.clone())))
                        .collect(),
                ),
                (Some(families), None) => ReadColumns::Families(families.iter().cloned().collect()),
                (None, _) => ReadColumns::All,
            },
        };
        ScanSpec {
            sql_table: self.sql_name.clone(),
            table: self.table.clone(),
            view: self.view.clone(),
            projection,
            ranges,
            filter: pushed.filter,
            read,
            time: pushed.cells.time,
            limit,
        }
    }

    /// The partitions of a scan limited to `ranges`: the regions that can hold its rows,
    /// each narrowed to the hull of its ranges.
    pub(crate) fn region_partitions(&self, ranges: &KeyRanges) -> Result<Vec<KeyRange>> {
        let regions = self
            .db
            .table(&self.table)
            .and_then(|t| t.regions())
            .map_err(engine)?;
        Ok(regions
            .iter()
            .filter_map(|r| {
                ranges
                    .within(&KeyRange::region(&r.start_key, &r.end_key))
                    .hull()
            })
            .collect())
    }
}

/// The columns a mapped scan reads: the projected and filtered cell columns, and a column
/// every row has so that rows without those still appear (the first NOT NULL cell column,
/// or failing one every mapped cell column: a row of the table is a row with any of them).
fn mapped_read_columns(mapping: &Mapping, projection: &[usize], filters: &[Expr]) -> ReadColumns {
    let cell = |index: usize| match mapping.columns().get(index).map(|c| &c.source) {
        Some(ColumnSource::Cell { family, qualifier }) => Some((family.clone(), qualifier.clone())),
        _ => None,
    };
    let all_cells: Vec<usize> = (0..mapping.columns().len())
        .filter(|&i| cell(i).is_some())
        .collect();
    if all_cells.is_empty() {
        return ReadColumns::All;
    }
    let mut wanted: BTreeSet<usize> = projection
        .iter()
        .copied()
        .filter(|&i| cell(i).is_some())
        .collect();
    let schema = mapping.schema();
    for filter in filters {
        for column in filter.column_refs() {
            if let Ok(index) = schema.index_of(&column.name)
                && cell(index).is_some()
            {
                wanted.insert(index);
            }
        }
    }
    let has_marker = wanted
        .iter()
        .any(|&i| mapping.columns().get(i).is_some_and(|c| !c.nullable));
    if !has_marker {
        match all_cells
            .iter()
            .find(|&&i| mapping.columns().get(i).is_some_and(|c| !c.nullable))
        {
            Some(&marker) => {
                wanted.insert(marker);
            }
            None => wanted.extend(all_cells.iter().copied()),
        }
    }
    ReadColumns::Columns(wanted.into_iter().filter_map(cell).collect())
}

#[async_trait]
impl TableProvider for StrataTable {
    fn schema(&self) -> SchemaRef {
        self.view.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        if !self.pushdown {
            return Ok(vec![
                TableProviderFilterPushDown::Unsupported;
                filters.len()
            ]);
        }
        Ok(filters
            .iter()
            .map(|f| {
                compile(f, &self.view)
                    .map_or(TableProviderFilterPushDown::Unsupported, |p| p.decision())
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let projection = projection
            .cloned()
            .unwrap_or_else(|| (0..self.view.schema().fields().len()).collect());
        let limit = limit.filter(|_| self.pushdown);
        let spec = Arc::new(self.plan_spec(projection, filters, limit));
        if let Some(cluster) = &self.cluster {
            // One partition per shard that can hold matching rows, on the shard's worker.
            let (partitions, workers): (Vec<KeyRange>, Vec<Option<String>>) = cluster
                .shards_of(&self.table)
                .into_iter()
                .filter_map(|(shard, worker)| {
                    spec.ranges
                        .within(&shard)
                        .hull()
                        .map(|range| (range, Some(worker)))
                })
                .unzip();
            let count = partitions.len();
            return Ok(Arc::new(StrataScanExec::placed(
                spec,
                partitions,
                workers,
                count,
                self.source.clone(),
            )?));
        }
        let partitions = self.region_partitions(&spec.ranges)?;
        let partitions = crate::split::sub_ranges(
            &self.db,
            &self.table,
            partitions,
            state.config().target_partitions(),
        )?;
        Ok(Arc::new(StrataScanExec::new(
            spec,
            partitions,
            self.source.clone(),
        )?))
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if insert_op != InsertOp::Append {
            return Err(DataFusionError::Plan(format!(
                "{insert_op} is not supported on strata tables: INSERT INTO adds rows (a row \
                 written again replaces its cells' newest versions)"
            )));
        }
        let sink = StrataSink::new(
            self.db.clone(),
            &self.sql_name,
            &self.table,
            self.view.clone(),
        );
        Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), None)))
    }
}
