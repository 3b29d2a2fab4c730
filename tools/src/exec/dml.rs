//! Reads and writes: put, get, scan, count, delete, deleteall, incr, get_counter, append.

use std::io::Write;

use strata::Table;

use super::errors::failed;
use super::output::CellFormat;
use super::{CommandError, Executor, Reply, line};
use crate::shell::{
    self, Append, ColumnSpec, Count, Delete, DeleteAll, DeleteColumn, GetCounter, Incr, Put,
    RowSelector, ScanSpec, TimeFilter, counter_line, row_count_line, to_string_binary,
};

/// The filter each counted row passes through when `count` needs row keys for its progress
/// lines and the user gave no filter: one key-only cell per row, as HBase's count does.
const COUNT_ROW_KEYS_FILTER: &str = "FirstKeyOnlyFilter() AND KeyOnlyFilter()";

impl Executor {
    pub(super) fn put(&mut self, put: &Put) -> Result<Reply, CommandError> {
        let table = self.table(&put.table)?;
        let column = &put.column;
        let mutation = strata::Put::new(&put.row);
        let mutation = match put.timestamp {
            Some(timestamp) => {
                mutation.add_at(&column.family, &column.qualifier, timestamp, &put.value)
            }
            None => mutation.add(&column.family, &column.qualifier, &put.value),
        };
        table
            .put(&mutation)
            .map_err(|error| self.engine_error(&put.table, error))?;
        Ok(Reply::Done)
    }

    pub(super) fn get(
        &mut self,
        get: &shell::Get,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        // HBase prints the header before it looks the table up.
        let layout = self.options.layout;
        out.write_all(layout.header("COLUMN", "CELL").as_bytes())?;
        let table = self.table(&get.table)?;
        let mut read = strata::Get::new(&get.row);
        for column in &get.columns {
            read = match read_qualifier(column) {
                Some(qualifier) => read.column(&column.family, qualifier),
                None => read.family(&column.family),
            };
        }
        match get.time {
            Some(TimeFilter::At(timestamp)) => read = read.timestamp(timestamp),
            Some(TimeFilter::Range { min, max }) => read = read.time_range(min, max),
            None => {}
        }
        if let Some(versions) = get.versions {
            read = read.max_versions(versions);
        }
        if let Some(filter) = &get.filter {
            read = read
                .filter_bytes(filter)
                .map_err(|error| self.engine_error(&get.table, error))?;
        }
        let result = table
            .get(&read)
            .map_err(|error| self.engine_error(&get.table, error))?;
        let format = CellFormat {
            columns: &get.columns,
            formatter: get.formatter,
            max_length: get.max_length,
            timestamps: self.options.timestamps,
        };
        for cell in &result.cells {
            out.write_all(
                layout
                    .row(&format.column(cell)?, &format.cell(cell)?)
                    .as_bytes(),
            )?;
        }
        let rows = u64::from(!result.is_empty());
        line(out, &row_count_line(rows))?;
        Ok(Reply::Done)
    }

    pub(super) fn scan(
        &mut self,
        scan: &shell::Scan,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        // HBase prints the header before it looks the table up.
        let layout = self.options.layout;
        out.write_all(layout.header("ROW", "COLUMN+CELL").as_bytes())?;
        let table = self.table(&scan.table)?;
        let plan = self.scan_of(&scan.table, &scan.spec, true)?;
        let format = CellFormat {
            columns: &scan.spec.columns,
            formatter: scan.spec.formatter,
            max_length: scan.spec.max_length,
            timestamps: self.options.timestamps,
        };
        let scanner = table
            .scan(&plan)
            .map_err(|error| self.engine_error(&scan.table, error))?;
        let mut rows = 0u64;
        for row in scanner {
            let row = row.map_err(|error| self.engine_error(&scan.table, error))?;
            let key = format.row_key(&row.row)?;
            for cell in &row.cells {
                let text = format!("column={}, {}", format.column(cell)?, format.cell(cell)?);
                out.write_all(layout.row(&key, &text).as_bytes())?;
            }
            rows += 1;
        }
        line(out, &row_count_line(rows))?;
        Ok(Reply::Done)
    }

    /// `count`: inside the engine ([`Table::count`]) up to the first progress line; beyond
    /// it, the progress lines need row keys, so the rows are read (one key-only cell each,
    /// unless a filter needs whole rows).
    pub(super) fn count(
        &mut self,
        count: &Count,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let table = self.table(&count.table)?;
        let plan = self.scan_of(&count.table, &count.spec, false)?;
        let interval = count.interval_rows.max(1);
        let first_limit = count
            .spec
            .limit
            .map_or(interval, |limit| limit.min(interval));
        let first = table
            .count(&plan.clone().limit(first_limit))
            .map_err(|error| self.engine_error(&count.table, error))?;
        let total = if first < interval {
            first
        } else {
            self.count_with_progress(&table, &count.table, &count.spec, plan, interval, out)?
        };
        line(out, &row_count_line(total))?;
        Ok(Reply::Value(total.to_string()))
    }

    fn count_with_progress(
        &self,
        table: &Table,
        name: &str,
        spec: &ScanSpec,
        plan: strata::Scan,
        interval: u64,
        out: &mut dyn Write,
    ) -> Result<u64, CommandError> {
        let plan = if spec.filter.is_none() && !spec.raw {
            plan.filter_string(COUNT_ROW_KEYS_FILTER)
                .map_err(|error| self.engine_error(name, error))?
        } else {
            plan
        };
        // The borrowing cursor: only each row's key is looked at.
        let mut cursor = table
            .scan_cursor(&plan)
            .map_err(|error| self.engine_error(name, error))?;
        let mut total = 0u64;
        while let Some(row) = cursor
            .next_row()
            .map_err(|error| self.engine_error(name, error))?
        {
            total += 1;
            if total.is_multiple_of(interval) {
                line(
                    out,
                    &format!(
                        "Current count: {total}, row: {}",
                        to_string_binary(row.row())
                    ),
                )?;
            }
        }
        Ok(total)
    }

    /// The engine scan for the shell's scan options (`with_batch`: keep `BATCH`, which
    /// `count` ignores).
    fn scan_of(
        &self,
        table: &str,
        spec: &ScanSpec,
        with_batch: bool,
    ) -> Result<strata::Scan, CommandError> {
        let mut scan = strata::Scan::new();
        for column in &spec.columns {
            scan = match read_qualifier(column) {
                Some(qualifier) => scan.column(&column.family, qualifier),
                None => scan.family(&column.family),
            };
        }
        if let Some(start) = &spec.start_row {
            scan = scan.start(start);
        }
        if let Some(stop) = &spec.stop_row {
            scan = scan.stop(stop);
        }
        if let Some(prefix) = &spec.row_prefix {
            scan = scan.prefix(prefix);
        }
        if let Some(limit) = spec.limit {
            scan = scan.limit(limit);
        }
        if let (Some(batch), true) = (spec.batch, with_batch) {
            scan = scan.batch(batch as usize);
        }
        if let Some(versions) = spec.versions {
            scan = scan.max_versions(versions);
        }
        match spec.time {
            Some(TimeFilter::At(timestamp)) => scan = scan.timestamp(timestamp),
            Some(TimeFilter::Range { min, max }) => scan = scan.time_range(min, max),
            None => {}
        }
        scan = scan.reversed(spec.reversed).raw(spec.raw);
        if let Some(filter) = &spec.filter {
            scan = scan
                .filter_bytes(filter)
                .map_err(|error| self.engine_error(table, error))?;
        }
        Ok(scan)
    }

    /// `delete`: one version of a column (the latest, or the one at the timestamp), or with a
    /// family only, the version at the timestamp in every column of the family.
    pub(super) fn delete(&mut self, delete: &Delete) -> Result<Reply, CommandError> {
        let table = self.table(&delete.table)?;
        let family = &delete.column.family;
        let mutation = strata::Delete::new(&delete.row);
        let mutation = match (&delete.column.qualifier, delete.timestamp) {
            (Some(qualifier), None) => mutation.column_latest_version(family, qualifier),
            (Some(qualifier), Some(timestamp)) => {
                mutation.column_version(family, qualifier, timestamp)
            }
            (None, Some(timestamp)) => mutation.family_version(family, timestamp),
            // HBase sends LATEST_TIMESTAMP, which the server turns into "now".
            (None, None) => mutation.family_version(family, self.now_ms()),
        };
        table
            .delete(&mutation)
            .map_err(|error| self.engine_error(&delete.table, error))?;
        Ok(Reply::Done)
    }

    /// `deleteall`: every version up to the timestamp (now by default) of a row, a family or
    /// a column; with `{ROWPREFIXFILTER => 'p'}`, of every row with the prefix, in one
    /// engine call ([`Table::delete_where`]).
    pub(super) fn delete_all(&mut self, delete: &DeleteAll) -> Result<Reply, CommandError> {
        let table = self.table(&delete.table)?;
        match &delete.rows {
            RowSelector::Row(row) => {
                let mutation = whole_row_delete(row, delete.column.as_ref(), delete.timestamp);
                table
                    .delete(&mutation)
                    .map_err(|error| self.engine_error(&delete.table, error))?;
            }
            RowSelector::Prefix(prefix) => {
                let mut scan = strata::Scan::new().prefix(prefix);
                scan = match &delete.column {
                    Some(DeleteColumn {
                        family,
                        qualifier: Some(qualifier),
                    }) => scan.column(family, qualifier),
                    Some(DeleteColumn {
                        family,
                        qualifier: None,
                    }) => scan.family(family),
                    None => scan,
                };
                table
                    .delete_where(&scan, delete.timestamp)
                    .map_err(|error| self.engine_error(&delete.table, error))?;
            }
        }
        Ok(Reply::Done)
    }

    pub(super) fn incr(&mut self, incr: &Incr, out: &mut dyn Write) -> Result<Reply, CommandError> {
        let table = self.table(&incr.table)?;
        let column = &incr.column;
        let result = table
            .increment(&strata::Increment::new(&incr.row).add(
                &column.family,
                &column.qualifier,
                incr.amount,
            ))
            .map_err(|error| self.engine_error(&incr.table, error))?;
        match result.value(&column.family, &column.qualifier) {
            Some(value) => line(out, &counter_line(counter_value(value)?))?,
            None => line(out, "No counter found at specified coordinates")?,
        }
        Ok(Reply::Done)
    }

    pub(super) fn get_counter(
        &mut self,
        counter: &GetCounter,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let table = self.table(&counter.table)?;
        let column = &counter.column;
        let result = table
            .get(&strata::Get::new(&counter.row).column(&column.family, &column.qualifier))
            .map_err(|error| self.engine_error(&counter.table, error))?;
        match result.value(&column.family, &column.qualifier) {
            Some(value) => line(out, &counter_line(counter_value(value)?))?,
            None => line(out, "No counter found at specified coordinates")?,
        }
        Ok(Reply::Done)
    }

    pub(super) fn append(
        &mut self,
        append: &Append,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let table = self.table(&append.table)?;
        let column = &append.column;
        let result = table
            .append(&strata::Append::new(&append.row).add(
                &column.family,
                &column.qualifier,
                &append.value,
            ))
            .map_err(|error| self.engine_error(&append.table, error))?;
        if let Some(value) = result.value(&column.family, &column.qualifier) {
            line(out, &format!("CURRENT VALUE = {}", to_string_binary(value)))?;
        }
        Ok(Reply::Done)
    }
}

/// The qualifier a read column selects; `None` for the whole family. As in HBase's
/// tutorials (and HBase before 2.0), `'f:'` selects the whole family too.
fn read_qualifier(column: &ColumnSpec) -> Option<&[u8]> {
    column
        .qualifier
        .as_deref()
        .filter(|qualifier| !qualifier.is_empty())
}

/// `Bytes.toLong` of a counter cell.
fn counter_value(value: &[u8]) -> Result<i64, CommandError> {
    let bytes: [u8; 8] = value
        .try_into()
        .map_err(|_| failed(format!("Wrong length: {}, expected 8", value.len())))?;
    Ok(i64::from_be_bytes(bytes))
}

/// The delete `deleteall 't', 'r' [, column [, ts]]` sends.
fn whole_row_delete(
    row: &[u8],
    column: Option<&DeleteColumn>,
    timestamp: Option<i64>,
) -> strata::Delete {
    let delete = strata::Delete::new(row);
    match (column, timestamp) {
        (None, None) => delete,
        (None, Some(timestamp)) => delete.timestamp(timestamp),
        (
            Some(DeleteColumn {
                family,
                qualifier: Some(qualifier),
            }),
            None,
        ) => delete.column_all_versions(family, qualifier),
        (
            Some(DeleteColumn {
                family,
                qualifier: Some(qualifier),
            }),
            Some(timestamp),
        ) => delete.column_all_versions_up_to(family, qualifier, timestamp),
        (
            Some(DeleteColumn {
                family,
                qualifier: None,
            }),
            None,
        ) => delete.family(family),
        (
            Some(DeleteColumn {
                family,
                qualifier: None,
            }),
            Some(timestamp),
        ) => delete.family_up_to(family, timestamp),
    }
}
