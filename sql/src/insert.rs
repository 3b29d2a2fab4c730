//! `INSERT INTO` a mapped table or a cells view: each input row becomes a strata put (a
//! mapped row: its key from the key columns, one cell per non-NULL value column; a cells-view
//! row: one cell), written with `Table::put_many`, which commits its rows in WAL groups.
//!
//! Every row of the input is encoded and checked before anything is written, so an input
//! with one bad row writes nothing; inputs larger than [`MAX_BUFFERED_INSERT_BYTES`] are
//! written in parts of about that size, and a bad row in a later part leaves the earlier
//! parts written (the error says how many rows were).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{Int64Type, SchemaRef};
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::sink::DataSink;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use futures::StreamExt;
use strata::filters::escape::to_string_binary;
use strata::{Db, Put};

use crate::codec::{Value, array_value, encode};
use crate::mapping::{ColumnSource, KeyPart, Mapping};
use crate::view::{CELLS_FAMILY, CELLS_QUALIFIER, CELLS_ROW, CELLS_TIMESTAMP, CELLS_VALUE, View};

/// Bytes of encoded puts an insert holds before writing them.
pub const MAX_BUFFERED_INSERT_BYTES: usize = 64 << 20;

/// Writes an insert's rows into a strata table.
#[derive(Debug)]
pub(crate) struct StrataSink {
    db: Db,
    sql_table: String,
    table: String,
    view: View,
    schema: SchemaRef,
}

impl StrataSink {
    pub(crate) fn new(db: Db, sql_table: &str, table: &str, view: View) -> StrataSink {
        StrataSink {
            schema: view.schema(),
            db,
            sql_table: sql_table.to_owned(),
            table: table.to_owned(),
            view,
        }
    }

    fn row_error(&self, row: usize, message: &str) -> DataFusionError {
        DataFusionError::Execution(format!(
            "INSERT INTO {}: input row {row}: {message}",
            self.sql_table
        ))
    }

    /// The puts of `batch`'s rows and their bytes; `first_row` numbers them in messages.
    fn puts(&self, batch: &RecordBatch, first_row: usize) -> Result<(Vec<Put>, usize)> {
        let mut puts = Vec::with_capacity(batch.num_rows());
        let mut bytes = 0;
        for row in 0..batch.num_rows() {
            let (put, size) = match &self.view {
                View::Mapped(mapping) => mapped_put(mapping, batch, row),
                View::Cells { .. } => cells_put(batch, row),
            }
            .map_err(|message| self.row_error(first_row + row, &message))?;
            puts.push(put);
            bytes += size;
        }
        Ok((puts, bytes))
    }

    async fn write(&self, puts: Vec<Put>) -> Result<()> {
        let table = self
            .db
            .table(&self.table)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        tokio::task::spawn_blocking(move || table.put_many(&puts))
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))?
            .map_err(|e| DataFusionError::External(Box::new(e)))
    }
}

/// The put of one input row and its size in bytes (key, families, qualifiers, values).
fn mapped_put(mapping: &Mapping, batch: &RecordBatch, row: usize) -> Result<(Put, usize), String> {
    let mut key = Vec::new();
    let mut cells: Vec<(&[u8], &[u8], Vec<u8>)> = Vec::new();
    // Key parts in key order.
    for &column in mapping.key_columns() {
        let (Some(mapped), Some(array)) =
            (mapping.columns().get(column), batch.columns().get(column))
        else {
            return Err("the input lacks a key column".to_owned());
        };
        let value = array_value(array.as_ref(), row)
            .ok_or_else(|| format!("key column {} is NULL", mapped.name))?;
        let start = key.len();
        encode(value, mapped.column_type, mapped.encoding, &mut key)
            .map_err(|e| format!("column {}: {}", mapped.name, e.0))?;
        let part_len = key.len() - start;
        match mapping.key_part(column) {
            Some(KeyPart::Fixed(width)) if part_len != width => {
                return Err(format!(
                    "key column {} is {part_len} bytes encoded; its key part is {width} bytes",
                    mapped.name
                ));
            }
            Some(KeyPart::UntilSeparator(separator)) => {
                if key
                    .get(start..)
                    .is_some_and(|part| part.contains(&separator))
                {
                    return Err(format!(
                        "key column {} holds the separator {}",
                        mapped.name,
                        to_string_binary(&[separator])
                    ));
                }
                key.push(separator);
            }
            _ => {}
        }
    }
    for (column, mapped) in mapping.columns().iter().enumerate() {
        let ColumnSource::Cell { family, qualifier } = &mapped.source else {
            continue;
        };
        let Some(array) = batch.columns().get(column) else {
            continue;
        };
        let Some(value) = array_value(array.as_ref(), row) else {
            if !mapped.nullable {
                return Err(format!("column {} is NOT NULL", mapped.name));
            }
            continue;
        };
        let mut bytes = Vec::new();
        encode(value, mapped.column_type, mapped.encoding, &mut bytes)
            .map_err(|e| format!("column {}: {}", mapped.name, e.0))?;
        cells.push((family, qualifier, bytes));
    }
    if cells.is_empty() {
        return Err(format!(
            "row {}: every value column is NULL, and a strata row needs a cell",
            to_string_binary(&key)
        ));
    }
    let size = key.len()
        + cells
            .iter()
            .map(|(f, q, v)| f.len() + q.len() + v.len())
            .sum::<usize>();
    let put = cells
        .into_iter()
        .fold(Put::new(key), |put, (f, q, v)| put.add(f, q, v));
    Ok((put, size))
}

/// The put of one cells-view input row and its size in bytes.
fn cells_put(batch: &RecordBatch, row: usize) -> Result<(Put, usize), String> {
    let bytes = |column: usize| -> Result<&[u8], String> {
        let array = batch
            .columns()
            .get(column)
            .ok_or_else(|| "the input lacks a column".to_owned())?;
        match array_value(array.as_ref(), row) {
            Some(Value::Bytes(b)) => Ok(b),
            Some(Value::Text(t)) => Ok(t.as_bytes()),
            _ => Err(format!("{} is NULL", crate::view::CELLS_COLUMNS[column])),
        }
    };
    let timestamp = batch
        .columns()
        .get(CELLS_TIMESTAMP)
        .filter(|a| a.is_valid(row))
        .map(|a| a.as_primitive::<Int64Type>().value(row))
        .ok_or_else(|| "timestamp is NULL".to_owned())?;
    let (key, family, qualifier, value) = (
        bytes(CELLS_ROW)?,
        bytes(CELLS_FAMILY)?,
        bytes(CELLS_QUALIFIER)?,
        bytes(CELLS_VALUE)?,
    );
    let size = key.len() + family.len() + qualifier.len() + value.len();
    Ok((
        Put::new(key).add_at(family, qualifier, timestamp, value),
        size,
    ))
}

impl DisplayAs for StrataSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StrataSink: table={}", self.table)
    }
}

#[async_trait]
impl DataSink for StrataSink {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    async fn write_all(
        &self,
        mut data: SendableRecordBatchStream,
        _context: &Arc<TaskContext>,
    ) -> Result<u64> {
        let mut pending: Vec<Put> = Vec::new();
        let mut pending_bytes = 0;
        let mut rows = 0usize;
        let mut written = 0usize;
        while let Some(batch) = data.next().await {
            let batch = batch?;
            let (puts, bytes) = self.puts(&batch, rows).map_err(|e| {
                if written > 0 {
                    DataFusionError::Execution(format!("{e} ({written} earlier rows were written)"))
                } else {
                    e
                }
            })?;
            rows += batch.num_rows();
            pending_bytes += bytes;
            pending.extend(puts);
            if pending_bytes >= MAX_BUFFERED_INSERT_BYTES {
                written += pending.len();
                self.write(std::mem::take(&mut pending)).await?;
                pending_bytes = 0;
            }
        }
        if !pending.is_empty() {
            self.write(pending).await?;
        }
        Ok(rows as u64)
    }
}
