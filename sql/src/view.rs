//! The two shapes a strata table takes in SQL: the long cells view every table has, and a
//! wide table through a [`Mapping`].

use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::mapping::Mapping;

/// Column names of the cells view, in order.
pub const CELLS_COLUMNS: [&str; 5] = ["row", "family", "qualifier", "timestamp", "value"];

/// Index of the `row` column of the cells view.
pub const CELLS_ROW: usize = 0;
/// Index of the `family` column of the cells view.
pub const CELLS_FAMILY: usize = 1;
/// Index of the `qualifier` column of the cells view.
pub const CELLS_QUALIFIER: usize = 2;
/// Index of the `timestamp` column of the cells view.
pub const CELLS_TIMESTAMP: usize = 3;
/// Index of the `value` column of the cells view.
pub const CELLS_VALUE: usize = 4;

static CELLS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        Field::new(CELLS_COLUMNS[CELLS_ROW], DataType::Binary, false),
        Field::new(CELLS_COLUMNS[CELLS_FAMILY], DataType::Utf8, false),
        Field::new(CELLS_COLUMNS[CELLS_QUALIFIER], DataType::Binary, false),
        Field::new(CELLS_COLUMNS[CELLS_TIMESTAMP], DataType::Int64, false),
        Field::new(CELLS_COLUMNS[CELLS_VALUE], DataType::Binary, false),
    ]))
});

/// The schema of every cells view: `row`, `family`, `qualifier`, `timestamp` (milliseconds),
/// `value`; bytes are `Binary` (`CAST(value AS VARCHAR)` reads them as text), the family is
/// text (family names are printable).
pub fn cells_schema() -> SchemaRef {
    Arc::clone(&CELLS_SCHEMA)
}

/// How a strata table appears as a SQL table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum View {
    /// One SQL row per cell (the newest version of each column).
    Cells {
        /// True when every family of the table keeps one version, so that a cell predicate
        /// (on the value or the timestamp) decided in the engine keeps exactly the newest
        /// versions that pass it; with more versions the engine would return an older
        /// passing version instead, so such predicates stay in DataFusion.
        single_version: bool,
    },
    /// One SQL row per strata row, columns as the mapping says.
    Mapped(Mapping),
}

impl View {
    /// The view's Arrow schema.
    pub fn schema(&self) -> SchemaRef {
        match self {
            View::Cells { .. } => cells_schema(),
            View::Mapped(mapping) => mapping.schema(),
        }
    }

    /// A short name for EXPLAIN output.
    pub fn kind(&self) -> &'static str {
        match self {
            View::Cells { .. } => "cells",
            View::Mapped(_) => "mapped",
        }
    }
}
