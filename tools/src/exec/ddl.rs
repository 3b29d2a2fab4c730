//! Table commands: create, list, exists, describe, alter, disable, enable, is_enabled,
//! is_disabled, drop, truncate, truncate_preserve.

use std::io::Write;

use strata::{FamilyDescriptor, PreSplit, TableDescriptor};

use super::errors::failed;
use super::schema::{
    apply_family_spec, apply_table_options, family_descriptor, family_text, table_text,
    unset_table_options, with_families, with_split_keys,
};
use super::{CommandError, Executor, Reply, line};
use crate::shell::{
    self, Alter, AlterChange, CreateTable, list_result_line, row_count_line, split_keys_from_file,
};

impl Executor {
    pub(super) fn create(
        &mut self,
        create: &CreateTable,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let mut descriptor = TableDescriptor::new(create.table.clone());
        for family in &create.families {
            descriptor = descriptor.family(family_descriptor(family));
        }
        descriptor = apply_table_options(descriptor, &create.options);
        descriptor = descriptor.pre_split(match &create.pre_split {
            shell::PreSplit::None => PreSplit::None,
            shell::PreSplit::Keys(keys) => PreSplit::Keys(keys.clone()),
            shell::PreSplit::KeysFile(path) => {
                let contents = std::fs::read_to_string(path)
                    .map_err(|_| failed(format!("Splits file {path} doesn't exist")))?;
                PreSplit::Keys(split_keys_from_file(&contents))
            }
            // HBase's RegionSplitter keys, computed by the shell so they match HBase's exactly.
            shell::PreSplit::Algorithm { algorithm, regions } => {
                PreSplit::Keys(algorithm.split_keys(*regions))
            }
            shell::PreSplit::SaltBuckets(buckets) => PreSplit::SaltBuckets { buckets: *buckets },
        });
        self.db
            .create_table(descriptor)
            .map_err(|error| self.engine_error(&create.table, error))?;
        line(out, &format!("Created table {}", create.table))?;
        Ok(Reply::Value(format!("Hbase::Table - {}", create.table)))
    }

    pub(super) fn list(
        &mut self,
        pattern: Option<&str>,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let names = Executor::matching(self.db.list_tables(), pattern)?;
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

    pub(super) fn exists(
        &mut self,
        table: &str,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let exists = self.db.table_exists(table);
        let verb = if exists {
            "does exist"
        } else {
            "does not exist"
        };
        line(out, &format!("Table {table} {verb}"))?;
        Ok(Reply::Value(exists.to_string()))
    }

    /// HBase's admin commands check existence first with this message.
    fn must_exist(&self, table: &str) -> Result<(), CommandError> {
        if self.db.table_exists(table) {
            Ok(())
        } else {
            Err(failed(format!("Table {table} does not exist.")))
        }
    }

    pub(super) fn describe(
        &mut self,
        table: &str,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        self.must_exist(table)?;
        let handle = self.table(table)?;
        let descriptor = handle
            .descriptor()
            .map_err(|error| self.engine_error(table, error))?;
        let state = if handle.is_enabled() {
            "ENABLED"
        } else {
            "DISABLED"
        };
        line(out, &format!("Table {table} is {state}"))?;
        line(out, &table_text(&descriptor))?;
        line(out, "COLUMN FAMILIES DESCRIPTION")?;
        // HBase keeps families sorted by name.
        let mut families: Vec<&FamilyDescriptor> = descriptor.families().iter().collect();
        families.sort_by(|a, b| a.name().cmp(b.name()));
        for family in &families {
            line(out, &family_text(family))?;
            line(out, "")?;
        }
        line(out, &row_count_line(families.len() as u64))?;
        Ok(Reply::Done)
    }

    pub(super) fn alter(
        &mut self,
        alter: &Alter,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        if !self.db.table_exists(&alter.table) {
            return Err(failed(format!("Can't find a table: {}", alter.table)));
        }
        let handle = self.table(&alter.table)?;
        let current = handle
            .descriptor()
            .map_err(|error| self.engine_error(&alter.table, error))?;
        let mut families: Vec<FamilyDescriptor> = current.families().to_vec();
        let mut descriptor = current;
        for change in &alter.changes {
            match change {
                AlterChange::Family(spec) => {
                    match families
                        .iter_mut()
                        .find(|family| family.name() == spec.name)
                    {
                        Some(family) => *family = apply_family_spec(family.clone(), spec),
                        None => families.push(family_descriptor(spec)),
                    }
                }
                AlterChange::DeleteFamily(name) => {
                    let before = families.len();
                    families.retain(|family| family.name() != name);
                    if families.len() == before {
                        return Err(failed(format!(
                            "org.apache.hadoop.hbase.InvalidFamilyOperationException: Family '{name}' does not exist, so it cannot be deleted"
                        )));
                    }
                }
                AlterChange::SetOptions(options) => {
                    descriptor = apply_table_options(descriptor, options);
                }
                AlterChange::UnsetOptions(keys) => {
                    descriptor = unset_table_options(descriptor, keys);
                }
            }
        }
        if families.is_empty() {
            return Err(failed(
                "org.apache.hadoop.hbase.DoNotRetryIOException: Table should have at least one column family.",
            ));
        }
        let descriptor = with_families(&descriptor, families);
        self.db
            .alter_table(descriptor)
            .map_err(|error| self.engine_error(&alter.table, error))?;
        let regions = handle
            .regions()
            .map_err(|error| self.engine_error(&alter.table, error))?
            .len();
        line(out, "Updating all regions with the new schema...")?;
        line(out, &format!("{regions}/{regions} regions updated."))?;
        line(out, "Done.")?;
        Ok(Reply::Done)
    }

    pub(super) fn disable(&mut self, table: &str) -> Result<Reply, CommandError> {
        self.must_exist(table)?;
        if self.table(table)?.is_enabled() {
            self.db
                .disable_table(table)
                .map_err(|error| self.engine_error(table, error))?;
        }
        Ok(Reply::Done)
    }

    pub(super) fn enable(&mut self, table: &str) -> Result<Reply, CommandError> {
        self.must_exist(table)?;
        if !self.table(table)?.is_enabled() {
            self.db
                .enable_table(table)
                .map_err(|error| self.engine_error(table, error))?;
        }
        Ok(Reply::Done)
    }

    /// `is_enabled` (`enabled == true`) and `is_disabled`.
    pub(super) fn is_enabled(
        &mut self,
        table: &str,
        enabled: bool,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let answer = self.table(table)?.is_enabled() == enabled;
        line(out, &answer.to_string())?;
        Ok(Reply::Value(answer.to_string()))
    }

    pub(super) fn drop_table(&mut self, table: &str) -> Result<Reply, CommandError> {
        self.must_exist(table)?;
        if self.table(table)?.is_enabled() {
            return Err(failed(format!(
                "Table {table} is enabled. Disable it first."
            )));
        }
        self.db
            .drop_table(table)
            .map_err(|error| self.engine_error(table, error))?;
        Ok(Reply::Done)
    }

    /// `truncate` (one region afterwards) and `truncate_preserve` (the same region
    /// boundaries): disable, drop and create again with the same schema, as HBase does.
    pub(super) fn truncate(
        &mut self,
        table: &str,
        preserve_regions: bool,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        line(
            out,
            &format!("Truncating '{table}' table (it may take a while):"),
        )?;
        let handle = self.table(table)?;
        let descriptor = handle
            .descriptor()
            .map_err(|error| self.engine_error(table, error))?;
        let split_keys = if preserve_regions {
            handle
                .regions()
                .map_err(|error| self.engine_error(table, error))?
                .into_iter()
                .map(|region| region.start_key)
                .filter(|start| !start.is_empty())
                .collect()
        } else {
            Vec::new()
        };
        if handle.is_enabled() {
            line(out, "Disabling table...")?;
            self.db
                .disable_table(table)
                .map_err(|error| self.engine_error(table, error))?;
        }
        line(out, "Truncating table...")?;
        self.db
            .drop_table(table)
            .map_err(|error| self.engine_error(table, error))?;
        self.db
            .create_table(with_split_keys(&descriptor, split_keys))
            .map_err(|error| self.engine_error(table, error))?;
        Ok(Reply::Done)
    }
}
