//! Namespaces and table references: list_namespace, create_namespace, describe_namespace,
//! drop_namespace, list_namespace_tables, get_table, get_splits, whoami.
//!
//! Namespaces live in the engine's catalog (`strata::Db::create_namespace`): `default` and
//! `hbase` always exist, a table `ns:t` needs namespace `ns`, and only an empty namespace can
//! be dropped, as in HBase.

use std::io::Write;

use super::{CommandError, Executor, Reply, line};
use crate::shell::{list_result_line, row_count_line, to_string_binary};

impl Executor {
    /// `list_namespace ['regex']`: HBase 2.x prints the names and the row count, and returns
    /// nothing IRB would echo.
    pub(super) fn list_namespace(
        &mut self,
        pattern: Option<&str>,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let names = Executor::matching(self.db.list_namespaces(), pattern)?;
        line(out, "NAMESPACE")?;
        for name in &names {
            line(out, name)?;
        }
        line(out, &row_count_line(names.len() as u64))?;
        Ok(Reply::Done)
    }

    pub(super) fn create_namespace(&mut self, namespace: &str) -> Result<Reply, CommandError> {
        self.db
            .create_namespace(namespace)
            .map_err(|error| self.engine_error(namespace, error))?;
        Ok(Reply::Done)
    }

    pub(super) fn drop_namespace(&mut self, namespace: &str) -> Result<Reply, CommandError> {
        self.db
            .drop_namespace(namespace)
            .map_err(|error| self.engine_error(namespace, error))?;
        Ok(Reply::Done)
    }

    /// `describe_namespace 'ns'`: the descriptor (strata keeps no namespace properties, so
    /// only the name) and HBase's quota line (strata has no quotas).
    pub(super) fn describe_namespace(
        &mut self,
        namespace: &str,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        if !self.db.namespace_exists(namespace) {
            return Err(self.engine_error(
                namespace,
                strata::Error::NamespaceNotFound {
                    namespace: namespace.to_owned(),
                },
            ));
        }
        line(out, "DESCRIPTION")?;
        line(out, &format!("{{NAME => '{namespace}'}}"))?;
        line(out, "Quota is disabled")?;
        Ok(Reply::Done)
    }

    /// `list_namespace_tables 'ns'`: the tables by their name inside the namespace.
    pub(super) fn list_namespace_tables(
        &mut self,
        namespace: &str,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let names = self
            .db
            .list_namespace_tables(namespace)
            .map_err(|error| self.engine_error(namespace, error))?;
        line(out, "TABLE")?;
        for name in &names {
            line(out, name)?;
        }
        line(out, &row_count_line(names.len() as u64))?;
        Ok(Reply::Value(
            list_result_line(&names)
                .trim_start_matches("=> ")
                .to_owned(),
        ))
    }

    /// `get_table 't'`: HBase returns a table object without looking the table up (a
    /// missing table fails at its first use); IRB echoes it.
    pub(super) fn get_table(&mut self, table: &str) -> Result<Reply, CommandError> {
        Ok(Reply::Value(table_reference(table)))
    }

    /// `get_splits 't'`: the number of regions, then each split key (every region's start
    /// key but the first) through `Bytes.toStringBinary`, one per line, as Ruby's `puts`
    /// prints an array (an empty one as one empty line).
    pub(super) fn get_splits(
        &mut self,
        table: &str,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let regions = self
            .table(table)?
            .regions()
            .map_err(|error| self.engine_error(table, error))?;
        let splits: Vec<String> = regions
            .iter()
            .filter(|region| !region.start_key.is_empty())
            .map(|region| to_string_binary(&region.start_key))
            .collect();
        line(
            out,
            &format!("Total number of splits = {}", splits.len() + 1),
        )?;
        if splits.is_empty() {
            line(out, "")?;
        }
        for split in &splits {
            line(out, split)?;
        }
        Ok(Reply::Value(
            list_result_line(&splits)
                .trim_start_matches("=> ")
                .to_owned(),
        ))
    }

    /// `whoami`: the user and groups of this process.
    pub(super) fn whoami(&mut self, out: &mut dyn Write) -> Result<Reply, CommandError> {
        for text in self.user.lines() {
            line(out, &text)?;
        }
        Ok(Reply::Done)
    }
}

/// How IRB shows a table reference (HBase's `Hbase::Table#inspect`).
pub fn table_reference(table: &str) -> String {
    format!("Hbase::Table - {table}")
}
