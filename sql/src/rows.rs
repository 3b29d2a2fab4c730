//! Rows from the engine's borrowing cursor straight into Arrow builders: a lent
//! [`RowView`]'s key and cell values are decoded into the builders of the projected columns,
//! without an owned copy of the row or of any cell.

use std::ops::Range;

use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{DataFusionError, Result};
use strata::RowView;
use strata::filters::escape::to_string_binary;

use crate::codec::{ColumnBuilder, DecodeFailure};
use crate::mapping::{BadValues, ColumnSource, ColumnType, Encoding, Mapping};
use crate::view::{CELLS_FAMILY, CELLS_QUALIFIER, CELLS_ROW, CELLS_TIMESTAMP, CELLS_VALUE, View};

/// One projected column of a mapped table.
#[derive(Debug)]
pub(crate) struct MappedOutput {
    name: String,
    encoding: Encoding,
    nullable: bool,
    source: ColumnSource,
    builder: ColumnBuilder,
}

/// Builds record batches of one view's projected columns from lent rows.
#[derive(Debug)]
pub(crate) enum RowDecoder {
    /// A mapped table: one output row per strata row.
    Mapped {
        /// The SQL table, for error messages.
        table: String,
        bad_values: BadValues,
        mapping: Mapping,
        outputs: Vec<MappedOutput>,
        /// Byte ranges of the current key's parts (reused from row to row).
        key_parts: Vec<Range<usize>>,
        /// Which cell outputs the current row filled (reused).
        filled: Vec<bool>,
        rows: usize,
        schema: SchemaRef,
    },
    /// The cells view: one output row per cell.
    Cells {
        /// Builders of the projected cells-view columns, by cells-view column index.
        builders: Vec<(usize, ColumnBuilder)>,
        rows: usize,
        schema: SchemaRef,
    },
}

impl RowDecoder {
    /// A decoder of `projection` (indexes into the view's columns) of `view`, whose batches
    /// have `schema`, with room for `batch_rows` rows.
    pub(crate) fn new(
        table: &str,
        view: &View,
        projection: &[usize],
        schema: SchemaRef,
        batch_rows: usize,
    ) -> RowDecoder {
        match view {
            View::Mapped(mapping) => RowDecoder::Mapped {
                table: table.to_owned(),
                bad_values: mapping.bad_values(),
                outputs: projection
                    .iter()
                    .filter_map(|&i| mapping.columns().get(i))
                    .map(|c| MappedOutput {
                        name: c.name.clone(),
                        encoding: c.encoding,
                        nullable: c.nullable,
                        source: c.source.clone(),
                        builder: ColumnBuilder::new(c.column_type, batch_rows),
                    })
                    .collect(),
                mapping: mapping.clone(),
                key_parts: Vec::new(),
                filled: vec![false; projection.len()],
                rows: 0,
                schema,
            },
            View::Cells { .. } => RowDecoder::Cells {
                builders: projection
                    .iter()
                    .map(|&i| {
                        let column_type = match i {
                            CELLS_FAMILY => ColumnType::Utf8,
                            CELLS_TIMESTAMP => ColumnType::Int64,
                            _ => ColumnType::Binary,
                        };
                        (i, ColumnBuilder::new(column_type, batch_rows))
                    })
                    .collect(),
                rows: 0,
                schema,
            },
        }
    }

    /// Rows built and not yet taken.
    pub(crate) fn len(&self) -> usize {
        match self {
            RowDecoder::Mapped { rows, .. } | RowDecoder::Cells { rows, .. } => *rows,
        }
    }

    /// Decodes `row` into the builders; returns the output rows it made (cells view: its
    /// cells, at most `room`).
    pub(crate) fn push(&mut self, row: &RowView<'_>, room: usize) -> Result<usize> {
        match self {
            RowDecoder::Cells { builders, rows, .. } => {
                let mut made = 0;
                for cell in row.cells().take(room) {
                    for (column, builder) in builders.iter_mut() {
                        let appended = match *column {
                            CELLS_ROW => builder.append(row.row(), Encoding::Binary),
                            CELLS_FAMILY => builder.append(cell.family(), Encoding::String),
                            CELLS_QUALIFIER => builder.append(cell.qualifier(), Encoding::Binary),
                            CELLS_TIMESTAMP => {
                                builder.append(&cell.timestamp().to_be_bytes(), Encoding::Binary)
                            }
                            CELLS_VALUE => builder.append(cell.value(), Encoding::Binary),
                            _ => Ok(()),
                        };
                        appended.map_err(|DecodeFailure(reason)| {
                            DataFusionError::Execution(format!(
                                "row {}: {reason}",
                                to_string_binary(row.row())
                            ))
                        })?;
                    }
                    made += 1;
                }
                *rows += made;
                Ok(made)
            }
            RowDecoder::Mapped {
                table,
                bad_values,
                mapping,
                outputs,
                key_parts,
                filled,
                rows,
                ..
            } => {
                let context = RowContext {
                    table,
                    key: row.row(),
                };
                if outputs
                    .iter()
                    .any(|o| matches!(o.source, ColumnSource::Key { .. }))
                {
                    mapping
                        .split_key(row.row(), key_parts)
                        .map_err(|reason| context.key_error(&reason))?;
                }
                filled.fill(false);
                for cell in row.cells() {
                    for (output, done) in outputs.iter_mut().zip(filled.iter_mut()) {
                        if let ColumnSource::Cell { family, qualifier } = &output.source
                            && !*done
                            && cell.family() == family.as_slice()
                            && cell.qualifier() == qualifier.as_slice()
                        {
                            *done = true;
                            let decoded = output.builder.append(cell.value(), output.encoding);
                            context.settle(decoded, output, *bad_values)?;
                        }
                    }
                }
                for (output, done) in outputs.iter_mut().zip(filled.iter()) {
                    match &output.source {
                        ColumnSource::Key { index, .. } => {
                            let part = key_parts
                                .get(*index)
                                .and_then(|r| row.row().get(r.clone()))
                                .unwrap_or_default();
                            let decoded = output.builder.append(part, output.encoding);
                            // A key that fits the layout but whose part does not decode is
                            // an error whatever the mapping says: key columns are never NULL.
                            context.settle(decoded, output, BadValues::Error)?;
                        }
                        ColumnSource::Cell { family, qualifier } if !done => {
                            if !output.nullable {
                                return Err(context.error(
                                    &output.name,
                                    &format!(
                                        "the row has no cell {}:{}, which this NOT NULL column maps",
                                        String::from_utf8_lossy(family),
                                        to_string_binary(qualifier)
                                    ),
                                ));
                            }
                            output.builder.append_null();
                        }
                        ColumnSource::Cell { .. } => {}
                    }
                }
                *rows += 1;
                Ok(1)
            }
        }
    }

    /// The rows built so far as a batch; the decoder starts empty again.
    pub(crate) fn finish(&mut self) -> Result<RecordBatch> {
        let (columns, rows, schema): (Vec<ArrayRef>, usize, &SchemaRef) = match self {
            RowDecoder::Mapped {
                outputs,
                rows,
                schema,
                ..
            } => (
                outputs.iter_mut().map(|o| o.builder.finish()).collect(),
                std::mem::take(rows),
                schema,
            ),
            RowDecoder::Cells {
                builders,
                rows,
                schema,
            } => (
                builders.iter_mut().map(|(_, b)| b.finish()).collect(),
                std::mem::take(rows),
                schema,
            ),
        };
        Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )?)
    }
}

/// The row being decoded, for error messages.
struct RowContext<'a> {
    table: &'a str,
    key: &'a [u8],
}

impl RowContext<'_> {
    fn error(&self, column: &str, reason: &str) -> DataFusionError {
        DataFusionError::Execution(format!(
            "table {}, row {}, column {column}: {reason}",
            self.table,
            to_string_binary(self.key)
        ))
    }

    fn key_error(&self, reason: &str) -> DataFusionError {
        DataFusionError::Execution(format!(
            "table {}, row {}: the row key does not fit the mapping's key layout: {reason}",
            self.table,
            to_string_binary(self.key)
        ))
    }

    /// After an append: an error, or a NULL in its place, as `bad_values` says.
    fn settle(
        &self,
        decoded: std::result::Result<(), DecodeFailure>,
        output: &mut MappedOutput,
        bad_values: BadValues,
    ) -> Result<()> {
        match (decoded, bad_values) {
            (Ok(()), _) => Ok(()),
            (Err(_), BadValues::Null) => {
                output.builder.append_null();
                Ok(())
            }
            (Err(DecodeFailure(reason)), BadValues::Error) => {
                let cell = match &output.source {
                    ColumnSource::Cell { family, qualifier } => format!(
                        " ({}:{})",
                        String::from_utf8_lossy(family),
                        to_string_binary(qualifier)
                    ),
                    ColumnSource::Key { .. } => " (row key part)".to_owned(),
                };
                Err(self.error(&format!("{}{cell}", output.name), &reason))
            }
        }
    }
}
