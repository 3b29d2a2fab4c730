//! The SQL catalog over a strata database: every table as its cells view, the mapped tables
//! stored in the system table `strata:sql_tables`, and `CREATE EXTERNAL TABLE ... STORED AS
//! STRATA`.
//!
//! Mappings live in an ordinary strata table, one row per SQL table, so they are as durable
//! as any data, move with the database (checkpoints, snapshots) and need nothing of the
//! manifest's format.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{SchemaProvider, Session, TableProvider, TableProviderFactory};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::CreateExternalTable;
use parking_lot::RwLock;
use strata::{Db, FamilyDescriptor, Get, Put, Scan, TableDescriptor};

use crate::distributed::Cluster;
use crate::exec::RowSource;
use crate::mapping::{BadValues, ColumnDeclaration, Mapping, MappingError};
use crate::provider::StrataTable;
use crate::view::View;

/// The namespace of strata-sql's own table.
pub const SQL_NAMESPACE: &str = "strata";
/// The table holding the mappings: row = SQL table name, family `m`.
pub const MAPPINGS_TABLE: &str = "strata:sql_tables";
const MAPPINGS_FAMILY: &str = "m";
const TABLE_QUALIFIER: &str = "table";
const MAPPING_QUALIFIER: &str = "mapping";
const COLUMNS_QUALIFIER: &str = "columns";
const BAD_VALUES_QUALIFIER: &str = "bad_values";

/// The file type of `CREATE EXTERNAL TABLE ... STORED AS STRATA`.
pub const STORED_AS: &str = "STRATA";
/// The option naming the mapping (`OPTIONS ('mapping' ':key,f:q')`).
pub const MAPPING_OPTION: &str = "mapping";
/// The option saying what undecodable values become (`'bad_values' 'null'`).
pub const BAD_VALUES_OPTION: &str = "bad_values";

/// A mapped SQL table as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedTable {
    /// The SQL table name.
    pub name: String,
    /// The strata table it reads.
    pub table: String,
    /// Its mapping.
    pub mapping: Mapping,
}

/// The database a session's tables are defined in, and how their scans run.
#[derive(Debug, Clone)]
pub(crate) struct Catalog {
    db: Db,
    placement: Placement,
    pushdown: bool,
}

/// Where a session's scans read their rows.
#[derive(Debug, Clone)]
pub(crate) enum Placement {
    /// From the session's own database.
    Local,
    /// From the workers of a cluster (the session's database only defines the tables).
    Cluster(Arc<Cluster>),
}

fn engine(error: strata::Error) -> DataFusionError {
    DataFusionError::External(Box::new(error))
}

fn mapping_error(error: MappingError) -> DataFusionError {
    DataFusionError::Plan(error.to_string())
}

impl Catalog {
    pub(crate) fn new(db: Db, placement: Placement, pushdown: bool) -> Catalog {
        Catalog {
            db,
            placement,
            pushdown,
        }
    }

    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    /// The stored mapping of SQL table `name`, if there is one.
    pub(crate) fn mapped_table(&self, name: &str) -> Result<Option<MappedTable>> {
        if !self.db.table_exists(MAPPINGS_TABLE) {
            return Ok(None);
        }
        let row = self
            .db
            .table(MAPPINGS_TABLE)
            .and_then(|t| t.get(&Get::new(name)))
            .map_err(engine)?;
        if row.is_empty() {
            return Ok(None);
        }
        let text = |qualifier: &str| -> Result<String> {
            let bytes = row.value(MAPPINGS_FAMILY, qualifier).unwrap_or_default();
            String::from_utf8(bytes.to_vec()).map_err(|_| {
                mapping_error(MappingError::Stored {
                    table: name.to_owned(),
                    message: format!("{qualifier} is not UTF-8"),
                })
            })
        };
        let stored = |message: String| {
            mapping_error(MappingError::Stored {
                table: name.to_owned(),
                message,
            })
        };
        let columns = Mapping::parse_columns_text(&text(COLUMNS_QUALIFIER)?).map_err(stored)?;
        let bad_values =
            BadValues::parse(&text(BAD_VALUES_QUALIFIER)?).map_err(|e| stored(e.to_string()))?;
        let mapping = Mapping::parse(&text(MAPPING_QUALIFIER)?, &columns, bad_values)
            .map_err(|e| stored(e.to_string()))?;
        Ok(Some(MappedTable {
            name: name.to_owned(),
            table: text(TABLE_QUALIFIER)?,
            mapping,
        }))
    }

    /// The SQL names of every stored mapping, in order.
    pub(crate) fn mapped_names(&self) -> Result<Vec<String>> {
        if !self.db.table_exists(MAPPINGS_TABLE) {
            return Ok(Vec::new());
        }
        let table = self.db.table(MAPPINGS_TABLE).map_err(engine)?;
        let mut names = Vec::new();
        let mut cursor = table
            .scan_cursor(&Scan::new().column(MAPPINGS_FAMILY, TABLE_QUALIFIER))
            .map_err(engine)?;
        while let Some(row) = cursor.next_row().map_err(engine)? {
            names.push(String::from_utf8_lossy(row.row()).into_owned());
        }
        Ok(names)
    }

    /// Checks `mapping` against strata table `table` and stores it as SQL table `name`.
    pub(crate) fn store_mapping(&self, name: &str, table: &str, mapping: &Mapping) -> Result<()> {
        let descriptor = self.db.describe_table(table).map_err(engine)?;
        let families: Vec<String> = descriptor
            .families()
            .iter()
            .map(|f| f.name().to_owned())
            .collect();
        mapping
            .check_families(table, &families)
            .map_err(mapping_error)?;
        let mappings = self.mappings_table()?;
        mappings
            .put(
                &Put::new(name)
                    .add(MAPPINGS_FAMILY, TABLE_QUALIFIER, table)
                    .add(MAPPINGS_FAMILY, MAPPING_QUALIFIER, mapping.spec())
                    .add(MAPPINGS_FAMILY, COLUMNS_QUALIFIER, mapping.columns_text())
                    .add(
                        MAPPINGS_FAMILY,
                        BAD_VALUES_QUALIFIER,
                        mapping.bad_values().name(),
                    ),
            )
            .map_err(engine)
    }

    /// Removes the mapping of SQL table `name`; true when there was one.
    pub(crate) fn remove_mapping(&self, name: &str) -> Result<bool> {
        if self.mapped_table(name)?.is_none() {
            return Ok(false);
        }
        let table = self.db.table(MAPPINGS_TABLE).map_err(engine)?;
        table.delete(&strata::Delete::new(name)).map_err(engine)?;
        Ok(true)
    }

    fn mappings_table(&self) -> Result<strata::Table> {
        if !self.db.namespace_exists(SQL_NAMESPACE) {
            self.db.create_namespace(SQL_NAMESPACE).map_err(engine)?;
        }
        if !self.db.table_exists(MAPPINGS_TABLE) {
            return self
                .db
                .create_table(
                    TableDescriptor::new(MAPPINGS_TABLE)
                        .family(FamilyDescriptor::new(MAPPINGS_FAMILY)),
                )
                .map_err(engine);
        }
        self.db.table(MAPPINGS_TABLE).map_err(engine)
    }

    /// The provider of SQL table `name`: its mapping, else the cells view of the strata
    /// table of that name (when `cells_fallback`).
    pub(crate) fn provider(&self, name: &str, cells_fallback: bool) -> Result<Option<StrataTable>> {
        if let Some(mapped) = self.mapped_table(name)? {
            return Ok(Some(self.table_provider(
                &mapped.name,
                &mapped.table,
                View::Mapped(mapped.mapping),
            )));
        }
        if cells_fallback && self.db.table_exists(name) {
            return self.cells_provider(name).map(Some);
        }
        Ok(None)
    }

    /// The cells view of strata table `table`.
    pub(crate) fn cells_provider(&self, table: &str) -> Result<StrataTable> {
        let descriptor = self.db.describe_table(table).map_err(engine)?;
        let single_version = descriptor
            .families()
            .iter()
            .all(|f| f.get_max_versions() == 1);
        Ok(self.table_provider(table, table, View::Cells { single_version }))
    }

    pub(crate) fn table_provider(&self, sql_name: &str, table: &str, view: View) -> StrataTable {
        let source = match &self.placement {
            Placement::Local => RowSource::Local(self.db.clone()),
            Placement::Cluster(_) => RowSource::Remote,
        };
        let cluster = match &self.placement {
            Placement::Local => None,
            Placement::Cluster(cluster) => Some(Arc::clone(cluster)),
        };
        StrataTable::new(sql_name, table, view, self.db.clone(), source)
            .with_cluster(cluster)
            .with_pushdown(self.pushdown)
    }

    /// Strata tables other than strata-sql's own.
    pub(crate) fn strata_tables(&self) -> Vec<String> {
        self.db
            .list_tables()
            .into_iter()
            .filter(|t| t != MAPPINGS_TABLE)
            .collect()
    }
}

/// The default schema: mapped tables by their SQL names, every other strata table as its
/// cells view, and tables a session registers (views, in-memory tables) for that session.
#[derive(Debug)]
pub(crate) struct StrataSchema {
    catalog: Catalog,
    session_tables: RwLock<HashMap<String, Arc<dyn TableProvider>>>,
}

impl StrataSchema {
    pub(crate) fn new(catalog: Catalog) -> StrataSchema {
        StrataSchema {
            catalog,
            session_tables: RwLock::new(HashMap::new()),
        }
    }
}

#[async_trait]
impl SchemaProvider for StrataSchema {
    fn table_names(&self) -> Vec<String> {
        let mut names = self.catalog.mapped_names().unwrap_or_default();
        for table in self.catalog.strata_tables() {
            if !names.contains(&table) {
                names.push(table);
            }
        }
        names.extend(self.session_tables.read().keys().cloned());
        names.sort();
        names.dedup();
        names
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(table) = self.session_tables.read().get(name) {
            return Ok(Some(Arc::clone(table)));
        }
        Ok(self
            .catalog
            .provider(name, true)?
            .map(|t| Arc::new(t) as Arc<dyn TableProvider>))
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        if table.downcast_ref::<StrataTable>().is_some() {
            // A mapping, already stored by the table factory.
            return Ok(None);
        }
        Ok(self.session_tables.write().insert(name, table))
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(table) = self.session_tables.write().remove(name) {
            return Ok(Some(table));
        }
        let Some(provider) = self.catalog.provider(name, false)? else {
            if self.catalog.db().table_exists(name) {
                return Err(DataFusionError::Plan(format!(
                    "{name} is the cells view of a strata table: SQL drops mappings, never \
                     tables (drop the table with `strata shell`, `drop '{name}'`)"
                )));
            }
            return Ok(None);
        };
        self.catalog.remove_mapping(name)?;
        Ok(Some(Arc::new(provider)))
    }

    /// Only mappings and session tables "exist" for DDL: a mapping may take the name of the
    /// strata table it maps (its cells view stays in the `cells` schema), and a cells view
    /// cannot be dropped from SQL.
    fn table_exist(&self, name: &str) -> bool {
        self.session_tables.read().contains_key(name)
            || self.catalog.mapped_table(name).ok().flatten().is_some()
    }
}

/// The `cells` schema: every strata table as its cells view, under its own name.
#[derive(Debug)]
pub(crate) struct CellsSchema {
    catalog: Catalog,
}

impl CellsSchema {
    pub(crate) fn new(catalog: Catalog) -> CellsSchema {
        CellsSchema { catalog }
    }
}

#[async_trait]
impl SchemaProvider for CellsSchema {
    fn table_names(&self) -> Vec<String> {
        self.catalog.strata_tables()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if !self.catalog.db().table_exists(name) {
            return Ok(None);
        }
        Ok(Some(Arc::new(self.catalog.cells_provider(name)?)))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.catalog.db().table_exists(name)
    }
}

/// `CREATE EXTERNAL TABLE name (columns) STORED AS STRATA LOCATION 'strata table'
/// OPTIONS ('mapping' '...', 'bad_values' 'error'|'null')`.
#[derive(Debug)]
pub(crate) struct StrataTableFactory {
    catalog: Catalog,
}

impl StrataTableFactory {
    pub(crate) fn new(catalog: Catalog) -> StrataTableFactory {
        StrataTableFactory { catalog }
    }
}

/// Parses and stores a mapping; the provider of the new SQL table.
pub(crate) fn create_mapped_table(
    catalog: &Catalog,
    name: &str,
    table: &str,
    columns: &[ColumnDeclaration],
    spec: &str,
    bad_values: BadValues,
) -> Result<StrataTable> {
    let mapping = Mapping::parse(spec, columns, bad_values).map_err(mapping_error)?;
    catalog.store_mapping(name, table, &mapping)?;
    Ok(catalog.table_provider(name, table, View::Mapped(mapping)))
}

#[async_trait]
impl TableProviderFactory for StrataTableFactory {
    async fn create(
        &self,
        _state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let option = |key: &str| {
            cmd.options
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key) || k.ends_with(&format!(".{key}")))
                .map(|(_, v)| v.as_str())
        };
        let spec = option(MAPPING_OPTION).ok_or_else(|| {
            DataFusionError::Plan(format!(
                "CREATE EXTERNAL TABLE ... STORED AS {STORED_AS} needs OPTIONS ('{MAPPING_OPTION}' ':key,family:qualifier,...')"
            ))
        })?;
        let bad_values = option(BAD_VALUES_OPTION)
            .map(BadValues::parse)
            .transpose()
            .map_err(mapping_error)?
            .unwrap_or_default();
        for key in cmd.options.keys() {
            let known = [MAPPING_OPTION, BAD_VALUES_OPTION]
                .iter()
                .any(|k| key.eq_ignore_ascii_case(k) || key.ends_with(&format!(".{k}")));
            if !known {
                return Err(DataFusionError::Plan(format!(
                    "unknown option '{key}' (STORED AS {STORED_AS} takes '{MAPPING_OPTION}' and '{BAD_VALUES_OPTION}')"
                )));
            }
        }
        let [location] = cmd.locations.as_slice() else {
            return Err(DataFusionError::Plan(format!(
                "STORED AS {STORED_AS} takes one LOCATION, the strata table"
            )));
        };
        let columns: Vec<ColumnDeclaration> = cmd
            .schema
            .fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().clone(), f.is_nullable()))
            .collect();
        let provider = create_mapped_table(
            &self.catalog,
            cmd.name.table(),
            location,
            &columns,
            spec,
            bad_values,
        )?;
        Ok(Arc::new(provider))
    }
}
