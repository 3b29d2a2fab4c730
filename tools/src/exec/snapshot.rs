//! HBase's snapshot commands: snapshot, list_snapshots, list_table_snapshots, clone_snapshot,
//! restore_snapshot, delete_snapshot (`strata::Db::snapshot` and the rest). Like HBase's, they print nothing
//! but `list_snapshots`, whose table is HBase's (`SNAPSHOT  TABLE + CREATION TIME`, the
//! creation time as Ruby prints a `Time`).

use std::io::Write;

use super::errors::failed;
use super::{CommandError, Executor, Reply};
use crate::shell::{list_result_line, row_count_line, ruby_time_text};

impl Executor {
    pub(super) fn snapshot(
        &mut self,
        table: &str,
        name: &str,
        skip_flush: bool,
    ) -> Result<Reply, CommandError> {
        self.db
            .snapshot_with(table, name, strata::SnapshotOptions { skip_flush })
            .map_err(|error| self.engine_error(table, error))?;
        Ok(Reply::Done)
    }

    /// `list_snapshots ['regex']` and `list_table_snapshots 'tableRegex'[, 'regex']`: one row
    /// per snapshot (of a table matching `table_pattern`, when given), then the count; returns
    /// the names.
    pub(super) fn list_snapshots(
        &mut self,
        table_pattern: Option<&str>,
        pattern: Option<&str>,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let mut all = self.db.list_snapshots();
        if let Some(table_pattern) = table_pattern {
            let tables = Executor::matching(
                all.iter().map(|s| s.table.clone()).collect(),
                Some(table_pattern),
            )?;
            all.retain(|s| tables.contains(&s.table));
        }
        let names = Executor::matching(all.iter().map(|s| s.name.clone()).collect(), pattern)?;
        let snapshots: Vec<&strata::SnapshotInfo> =
            all.iter().filter(|s| names.contains(&s.name)).collect();
        let layout = self.options.layout;
        out.write_all(
            layout
                .header("SNAPSHOT", "TABLE + CREATION TIME")
                .as_bytes(),
        )?;
        for s in &snapshots {
            let detail = format!("{} ({})", s.table, ruby_time_text(s.created_ms));
            out.write_all(layout.row(&s.name, &detail).as_bytes())?;
        }
        writeln!(out, "{}", row_count_line(snapshots.len() as u64))?;
        Ok(Reply::Value(
            list_result_line(&names)
                .trim_start_matches("=> ")
                .to_owned(),
        ))
    }

    /// `clone_snapshot 'name', 't'`: an existing table is HBase's `TableExistsException`.
    pub(super) fn clone_snapshot(
        &mut self,
        name: &str,
        table: &str,
    ) -> Result<Reply, CommandError> {
        match self.db.clone_snapshot(name, table) {
            Ok(_) => Ok(Reply::Done),
            Err(strata::Error::TableExists { table }) => Err(failed(format!(
                "org.apache.hadoop.hbase.TableExistsException: {table}"
            ))),
            Err(error) => Err(self.engine_error(table, error)),
        }
    }

    pub(super) fn restore_snapshot(&mut self, name: &str) -> Result<Reply, CommandError> {
        self.db
            .restore_snapshot(name)
            .map_err(|error| self.engine_error("", error))?;
        Ok(Reply::Done)
    }

    pub(super) fn delete_snapshot(&mut self, name: &str) -> Result<Reply, CommandError> {
        self.db
            .delete_snapshot(name)
            .map_err(|error| self.engine_error("", error))?;
        Ok(Reply::Done)
    }
}
