//! Printing query results: an aligned table with a row count, CSV with a header, or a JSON
//! array of objects. Binary values (row keys, qualifiers, values of the cells view) are
//! printed as HBase prints bytes: printable ASCII as is, other bytes as `\xHH`.

use std::io::{self, Write};
use std::sync::Arc;

use strata::filters::escape::to_string_binary;
use strata_sql::datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray};
use strata_sql::datafusion::arrow::csv::WriterBuilder;
use strata_sql::datafusion::arrow::datatypes::{DataType, Field, Schema};
use strata_sql::datafusion::arrow::error::ArrowError;
use strata_sql::datafusion::arrow::json::ArrayWriter;
use strata_sql::datafusion::arrow::util::pretty::pretty_format_batches_with_schema;

/// How `strata sql` prints results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// An aligned table and `N row(s)`.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// A JSON array of objects, one per row.
    Json,
}

fn arrow(error: ArrowError) -> io::Error {
    io::Error::other(error)
}

/// A binary column as text, HBase-escaped.
fn escaped(array: &dyn Array) -> Option<ArrayRef> {
    let strings: StringArray = match array.data_type() {
        DataType::Binary => array
            .as_binary::<i32>()
            .iter()
            .map(|v| v.map(to_string_binary))
            .collect(),
        DataType::LargeBinary => array
            .as_binary::<i64>()
            .iter()
            .map(|v| v.map(to_string_binary))
            .collect(),
        DataType::BinaryView => array
            .as_binary_view()
            .iter()
            .map(|v| v.map(to_string_binary))
            .collect(),
        _ => return None,
    };
    Some(Arc::new(strings))
}

/// `schema` with binary fields as text.
fn printable_schema(schema: &Schema) -> Arc<Schema> {
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
                    Field::new(f.name(), DataType::Utf8, f.is_nullable())
                }
                _ => f.as_ref().clone(),
            })
            .collect::<Vec<_>>(),
    ))
}

/// `batch` with binary columns as escaped text, under `schema`.
fn printable(batch: &RecordBatch, schema: &Arc<Schema>) -> io::Result<RecordBatch> {
    let columns: Vec<ArrayRef> = batch
        .columns()
        .iter()
        .map(|c| escaped(c.as_ref()).unwrap_or_else(|| Arc::clone(c)))
        .collect();
    RecordBatch::try_new(Arc::clone(schema), columns).map_err(arrow)
}

/// Prints one statement's result. A result without columns (DDL) prints nothing.
pub fn write_result(
    format: OutputFormat,
    schema: &Schema,
    batches: &[RecordBatch],
    out: &mut dyn Write,
) -> io::Result<()> {
    if schema.fields().is_empty() {
        return Ok(());
    }
    let schema = printable_schema(schema);
    let batches = batches
        .iter()
        .map(|b| printable(b, &schema))
        .collect::<io::Result<Vec<_>>>()?;
    match format {
        OutputFormat::Table => {
            let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
            writeln!(
                out,
                "{}",
                pretty_format_batches_with_schema(Arc::clone(&schema), &batches).map_err(arrow)?
            )?;
            writeln!(out, "{rows} row(s)")
        }
        OutputFormat::Csv => {
            let mut writer = WriterBuilder::new().with_header(true).build(&mut *out);
            if batches.is_empty() {
                writer
                    .write(&RecordBatch::new_empty(Arc::clone(&schema)))
                    .map_err(arrow)?;
            }
            for batch in &batches {
                writer.write(batch).map_err(arrow)?;
            }
            Ok(())
        }
        OutputFormat::Json => {
            let mut writer = ArrayWriter::new(&mut *out);
            for batch in &batches {
                writer.write(batch).map_err(arrow)?;
            }
            writer.finish().map_err(arrow)?;
            drop(writer);
            writeln!(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_sql::datafusion::arrow::array::{BinaryArray, Int64Array};

    fn batch() -> (Arc<Schema>, RecordBatch) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("row", DataType::Binary, false),
            Field::new("n", DataType::Int64, true),
        ]));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(BinaryArray::from(vec![&b"a\x00"[..], b"b"])),
                Arc::new(Int64Array::from(vec![Some(1), None])),
            ],
        )
        .unwrap();
        (schema, batch)
    }

    fn render(format: OutputFormat) -> String {
        let (schema, batch) = batch();
        let mut out = Vec::new();
        write_result(format, &schema, &[batch], &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn table_csv_and_json_escape_binary_values() {
        assert_eq!(
            render(OutputFormat::Table),
            "+-------+---+\n| row   | n |\n+-------+---+\n| a\\x00 | 1 |\n| b     |   |\n+-------+---+\n2 row(s)\n"
        );
        assert_eq!(render(OutputFormat::Csv), "row,n\na\\x00,1\nb,\n");
        assert_eq!(
            render(OutputFormat::Json),
            "[{\"row\":\"a\\\\x00\",\"n\":1},{\"row\":\"b\"}]\n"
        );
    }

    #[test]
    fn empty_results_still_show_their_columns() {
        let (schema, _) = batch();
        let mut out = Vec::new();
        write_result(OutputFormat::Csv, &schema, &[], &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "row,n\n");
        let mut out = Vec::new();
        write_result(OutputFormat::Json, &schema, &[], &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "[]\n");
    }
}
