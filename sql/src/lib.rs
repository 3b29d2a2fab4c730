//! SQL and Arrow over strata's regions: strata tables as Apache DataFusion tables.
//!
//! Every strata table is queryable as a long *cells view* (`row`, `family`, `qualifier`,
//! `timestamp`, `value`), and as a wide table through a Hive-style [`Mapping`]
//! (`:key,info:name,info:age#b`, typed columns, composite row keys), created with
//! `CREATE EXTERNAL TABLE ... STORED AS STRATA` or [`SqlContext::create_mapped_table`] and
//! stored in the database itself. A scan runs one DataFusion partition per region that can
//! hold matching rows (more, cut at keys from the block indexes, when regions are fewer than
//! cores), pushes projections, key predicates, value predicates and limits into strata's
//! scans and filter kernels, and decodes rows from the engine's borrowing cursor straight
//! into Arrow builders. `INSERT INTO` writes rows back. `docs/sql.md` describes it all.
//!
//! ```
//! use strata::{Db, FamilyDescriptor, Put, TableDescriptor};
//! use strata_sql::SqlContext;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let db = Db::open_default(dir.path())?;
//! let users = db.create_table(TableDescriptor::new("users").family(FamilyDescriptor::new("info")))?;
//! users.put(&Put::new("u1").add("info", "name", "Ann").add("info", "age", 41i64.to_be_bytes()))?;
//! let runtime = tokio::runtime::Runtime::new()?;
//! let sql = SqlContext::new(db)?;
//! let batches = runtime.block_on(async {
//!     sql.run("CREATE EXTERNAL TABLE people (id VARCHAR, name VARCHAR, age BIGINT) \
//!              STORED AS STRATA LOCATION 'users' OPTIONS ('mapping' ':key,info:name,info:age#b')").await?;
//!     sql.run("SELECT name, age FROM people WHERE age > 40").await
//! })?;
//! assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod catalog;
pub mod codec;
pub mod distributed;
mod exec;
mod functions;
mod insert;
pub mod mapping;
mod provider;
mod pushdown;
pub mod ranges;
mod rows;
mod split;
mod view;

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::catalog::{CatalogProvider, MemoryCatalogProvider};
use datafusion::common::Result;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion::sql::parser::DFParserBuilder;
use strata::Db;

pub use catalog::{
    BAD_VALUES_OPTION, MAPPING_OPTION, MAPPINGS_TABLE, MappedTable, SQL_NAMESPACE, STORED_AS,
};
pub use datafusion;
pub use distributed::{Cluster, ClusterError, Shard, WorkerShards, serve_worker};
pub use exec::{ReadColumns, RowSource, ScanSpec, StrataScanExec};
pub use mapping::{BadValues, ColumnDeclaration, ColumnType, Encoding, Mapping, MappingError};
pub use provider::StrataTable;
pub use view::{CELLS_COLUMNS, View, cells_schema};

/// The catalog the SQL tables are in.
pub const CATALOG: &str = "strata";
/// The default schema: mapped tables, and every other table as its cells view.
pub const DEFAULT_SCHEMA: &str = "public";
/// The schema holding every strata table as its cells view (`cells.t`).
pub const CELLS_SCHEMA: &str = "cells";

/// A SQL session over a strata database.
#[derive(Clone)]
pub struct SqlContext {
    context: SessionContext,
    catalog: catalog::Catalog,
}

impl std::fmt::Debug for SqlContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlContext")
            .field("db", &self.catalog.db().path())
            .finish()
    }
}

impl SqlContext {
    /// A session over `db` with DataFusion's default configuration (one target partition
    /// per core).
    pub fn new(db: Db) -> Result<SqlContext> {
        SqlContext::with_config(db, SessionConfig::new())
    }

    /// A session over `db` with `config` (for instance its target partitions).
    pub fn with_config(db: Db, config: SessionConfig) -> Result<SqlContext> {
        SqlContext::with_options(db, config, true)
    }

    /// A session over `db` with `config`; with `pushdown` false no filter or limit is pushed
    /// into strata's scans (DataFusion evaluates them all: the baseline pushdown is measured
    /// against).
    pub fn with_options(db: Db, config: SessionConfig, pushdown: bool) -> Result<SqlContext> {
        let catalog = catalog::Catalog::new(db, catalog::Placement::Local, pushdown);
        SqlContext::build(catalog, config, Ok)
    }

    /// A session whose tables are defined in `catalog` (tables, families, mappings; it needs
    /// none of the data) and whose scans run on the workers of `cluster`, each region scan on
    /// the worker holding the region.
    pub fn with_cluster(
        catalog: Db,
        config: SessionConfig,
        cluster: Cluster,
    ) -> Result<SqlContext> {
        let cluster = Arc::new(cluster);
        let placement = catalog::Placement::Cluster(Arc::clone(&cluster));
        SqlContext::build(
            catalog::Catalog::new(catalog, placement, true),
            config,
            |builder| distributed::coordinator(builder, cluster),
        )
    }

    /// A session over `catalog`, its state built with `customize` (the distributed planner's
    /// settings, for instance).
    pub(crate) fn build(
        catalog: catalog::Catalog,
        config: SessionConfig,
        customize: impl FnOnce(SessionStateBuilder) -> Result<SessionStateBuilder>,
    ) -> Result<SqlContext> {
        let config = config
            .with_information_schema(true)
            .with_default_catalog_and_schema(CATALOG, DEFAULT_SCHEMA);
        let builder = SessionStateBuilder::new()
            .with_config(config)
            .with_default_features()
            .with_table_factory(
                STORED_AS.to_owned(),
                Arc::new(catalog::StrataTableFactory::new(catalog.clone())),
            );
        let context = SessionContext::new_with_state(customize(builder)?.build());
        let tables = MemoryCatalogProvider::new();
        tables.register_schema(
            DEFAULT_SCHEMA,
            Arc::new(catalog::StrataSchema::new(catalog.clone())),
        )?;
        tables.register_schema(
            CELLS_SCHEMA,
            Arc::new(catalog::CellsSchema::new(catalog.clone())),
        )?;
        context.register_catalog(CATALOG, Arc::new(tables));
        functions::register(&context);
        Ok(SqlContext { context, catalog })
    }

    /// The DataFusion session, for anything this API does not cover.
    pub fn session(&self) -> &SessionContext {
        &self.context
    }

    /// The database.
    pub fn db(&self) -> &Db {
        self.catalog.db()
    }

    /// Runs one SQL statement and collects its result.
    pub async fn run(&self, sql: &str) -> Result<Vec<RecordBatch>> {
        self.context.sql(sql).await?.collect().await
    }

    /// Runs every statement of `script` (statements end with `;`, split by DataFusion's
    /// parser, so quotes and comments are respected) in order, stopping at the first error;
    /// each statement's result.
    pub async fn run_script(&self, script: &str) -> Result<Vec<Vec<RecordBatch>>> {
        let statements = DFParserBuilder::new(script).build()?.parse_statements()?;
        let mut results = Vec::with_capacity(statements.len());
        for statement in statements {
            let plan = self.context.state().statement_to_plan(statement).await?;
            results.push(
                self.context
                    .execute_logical_plan(plan)
                    .await?
                    .collect()
                    .await?,
            );
        }
        Ok(results)
    }

    /// Maps strata table `table` as SQL table `name` with `columns` and the mapping `spec`
    /// (what `CREATE EXTERNAL TABLE` does), storing the mapping in the database.
    pub fn create_mapped_table(
        &self,
        name: &str,
        table: &str,
        columns: &[ColumnDeclaration],
        spec: &str,
        bad_values: BadValues,
    ) -> Result<()> {
        catalog::create_mapped_table(&self.catalog, name, table, columns, spec, bad_values)?;
        Ok(())
    }

    /// The stored mapping of SQL table `name`.
    pub fn mapped_table(&self, name: &str) -> Result<Option<MappedTable>> {
        self.catalog.mapped_table(name)
    }
}
