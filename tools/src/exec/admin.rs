//! Maintenance and cluster commands: flush, compact, major_compact, split, list_regions,
//! status.
//!
//! strata is embedded, so the "cluster" is this process: one server (printed as
//! [`SERVER_NAME`]) holding every region. Regions are named like HBase's
//! (`table,start key,region id`), and commands that take a region accept that name or the
//! bare region id (HBase's "encoded" region name).

use std::io::Write;

use strata::{RegionInfo, Table};

use super::errors::failed;
use super::{CommandError, Executor, Reply, line};
use crate::shell::{
    ListRegions, Maintenance, RegionColumn, Split, StatusFormat, region_table, to_string_binary,
};

/// The one "server" of an embedded database, as `list_regions` and `status` print it.
pub const SERVER_NAME: &str = "localhost";

const BYTES_PER_MB: u64 = 1024 * 1024;
const BYTES_PER_KB: u64 = 1024;

/// What a maintenance command applies to.
enum Target {
    /// Every region of a table.
    Table(Table),
    /// One region of a table.
    Region(Table, u64),
}

/// The name `list_regions` prints for a region, and that `flush`, `compact` and `split`
/// accept: `table,start key,id` (the start key through `Bytes.toStringBinary`).
pub fn region_name(table: &str, region: &RegionInfo) -> String {
    format!(
        "{table},{},{}",
        to_string_binary(&region.start_key),
        region.id
    )
}

/// The table and region id of a region name (`t,start,7`, `t,start,7.`); the start key is
/// not needed to find the region.
fn parse_region_name(name: &str) -> Option<(&str, u64)> {
    let (table, rest) = name.split_once(',')?;
    let (_, id) = rest.rsplit_once(',')?;
    let id = id.strip_suffix('.').unwrap_or(id);
    Some((table, id.parse().ok()?))
}

impl Executor {
    /// A table name, a region name, or a bare region id; HBase's `Unknown table t!` when it
    /// is none of them.
    fn target(&self, name: &str) -> Result<Target, CommandError> {
        if self.db.table_exists(name) {
            return Ok(Target::Table(self.table(name)?));
        }
        let unknown = || failed(format!("Unknown table {name}!"));
        let (table, id) = match parse_region_name(name) {
            Some((table, id)) => (self.table(table).map_err(|_| unknown())?, id),
            None => {
                let id: u64 = name.parse().map_err(|_| unknown())?;
                let table = self
                    .db
                    .list_tables()
                    .into_iter()
                    .filter_map(|table| self.db.table(&table).ok())
                    .find(|table| {
                        table
                            .regions()
                            .is_ok_and(|regions| regions.iter().any(|region| region.id == id))
                    })
                    .ok_or_else(unknown)?;
                (table, id)
            }
        };
        let regions = table
            .regions()
            .map_err(|error| self.engine_error(table.name(), error))?;
        if !regions.iter().any(|region| region.id == id) {
            return Err(failed(format!("Unknown region {name}!")));
        }
        Ok(Target::Region(table, id))
    }

    /// Checks the family argument of a maintenance command. The engine flushes and compacts
    /// all families of a region together, so a valid family only narrows nothing.
    fn check_family(&self, table: &Table, family: Option<&str>) -> Result<(), CommandError> {
        let Some(family) = family else {
            return Ok(());
        };
        let descriptor = table
            .descriptor()
            .map_err(|error| self.engine_error(table.name(), error))?;
        if descriptor.family_named(family.as_bytes()).is_none() {
            return Err(failed(self.unknown_family(table.name())));
        }
        Ok(())
    }

    pub(super) fn flush(&mut self, target: &Maintenance) -> Result<Reply, CommandError> {
        let result = match self.target(&target.target)? {
            Target::Table(table) => {
                self.check_family(&table, target.family.as_deref())?;
                table
                    .flush()
                    .map_err(|error| (table.name().to_owned(), error))
            }
            Target::Region(table, id) => {
                self.check_family(&table, target.family.as_deref())?;
                table
                    .flush_region(id)
                    .map_err(|error| (table.name().to_owned(), error))
            }
        };
        result.map_err(|(table, error)| self.engine_error(&table, error))?;
        Ok(Reply::Done)
    }

    /// `compact` (`major == false`) and `major_compact`.
    pub(super) fn compact(
        &mut self,
        target: &Maintenance,
        major: bool,
    ) -> Result<Reply, CommandError> {
        let result = match self.target(&target.target)? {
            Target::Table(table) => {
                self.check_family(&table, target.family.as_deref())?;
                let done = if major {
                    table.major_compact()
                } else {
                    table.compact()
                };
                done.map_err(|error| (table.name().to_owned(), error))
            }
            Target::Region(table, id) => {
                self.check_family(&table, target.family.as_deref())?;
                table
                    .compact_region(id, major)
                    .map_err(|error| (table.name().to_owned(), error))
            }
        };
        result.map_err(|(table, error)| self.engine_error(&table, error))?;
        Ok(Reply::Done)
    }

    pub(super) fn split(&mut self, split: &Split) -> Result<Reply, CommandError> {
        let key = split.split_key.as_deref();
        let result = match self.target(&split.target)? {
            Target::Table(table) => table
                .split(key)
                .map_err(|error| (table.name().to_owned(), error)),
            Target::Region(table, id) => table
                .split_region(id, key)
                .map_err(|error| (table.name().to_owned(), error)),
        };
        result.map_err(|(table, error)| self.engine_error(&table, error))?;
        Ok(Reply::Done)
    }

    /// `merge_region`: the regions (names or ids) must be of one table and follow each
    /// other; they merge in key order, each into the region merged so far.
    pub(super) fn merge_region(&mut self, names: &[String]) -> Result<Reply, CommandError> {
        let mut table: Option<Table> = None;
        let mut ids = Vec::with_capacity(names.len());
        for name in names {
            let Target::Region(region_table, id) = self.target(name)? else {
                return Err(failed(format!("{name} is a table, not a region")));
            };
            if table
                .as_ref()
                .is_some_and(|t| t.name() != region_table.name())
            {
                return Err(failed(format!(
                    "Regions of different tables cannot merge: {}",
                    names.join(", ")
                )));
            }
            ids.push(id);
            table = Some(region_table);
        }
        let Some(table) = table else {
            return Err(failed("merge_region needs at least two regions".to_owned()));
        };
        let regions = table
            .regions()
            .map_err(|error| self.engine_error(table.name(), error))?;
        ids.sort_by_key(|id| regions.iter().position(|r| r.id == *id));
        let mut merged = ids.first().copied().unwrap_or_default();
        for &next in ids.iter().skip(1) {
            merged = table
                .merge_regions(merged, next)
                .map_err(|error| self.engine_error(table.name(), error))?;
        }
        Ok(Reply::Done)
    }

    /// `normalize`: prints `true` once the normalizer ran over every table.
    pub(super) fn normalize(&mut self, out: &mut dyn Write) -> Result<Reply, CommandError> {
        self.db
            .normalize()
            .map_err(|error| self.engine_error("", error))?;
        line(out, "true")?;
        Ok(Reply::Done)
    }

    /// `backup 'DIR'`: a checkpoint of the database in `DIR`; prints what it holds.
    pub(super) fn backup(&mut self, dir: &str, out: &mut dyn Write) -> Result<Reply, CommandError> {
        let report = self
            .db
            .checkpoint(dir)
            .map_err(|error| self.engine_error("", error))?;
        line(
            out,
            &format!(
                "Backup of {} in {} at sequence {}: {} HFiles linked, {} copied ({} bytes), {} log records",
                self.db.path().display(),
                report.path.display(),
                report.sequence,
                report.hfiles_linked,
                report.hfiles_copied,
                report.bytes_copied,
                report.wal_mutations
            ),
        )?;
        Ok(Reply::Done)
    }

    /// `normalizer_switch`: prints the previous state.
    pub(super) fn normalizer_switch(
        &mut self,
        on: bool,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        line(out, &self.db.set_normalizer(on).to_string())?;
        Ok(Reply::Done)
    }

    /// `normalizer_enabled`.
    pub(super) fn normalizer_enabled(
        &mut self,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        line(out, &self.db.normalizer_enabled().to_string())?;
        Ok(Reply::Done)
    }

    pub(super) fn list_regions(
        &mut self,
        list: &ListRegions,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let table = self.table(&list.table)?;
        if !table.is_enabled() {
            return Err(failed(format!("Table {} must be enabled.", list.table)));
        }
        let regions = table
            .regions()
            .map_err(|error| self.engine_error(&list.table, error))?;
        let rows: Vec<Vec<String>> = regions
            .iter()
            .map(|region| {
                list.columns
                    .iter()
                    .map(|column| match column {
                        RegionColumn::ServerName => SERVER_NAME.to_owned(),
                        RegionColumn::RegionName => region_name(&list.table, region),
                        RegionColumn::StartKey => to_string_binary(&region.start_key),
                        RegionColumn::EndKey => to_string_binary(&region.end_key),
                        RegionColumn::Size => (region.file_bytes / BYTES_PER_MB).to_string(),
                        // HBase's REQ: read and write requests of the region.
                        RegionColumn::Requests => {
                            (region.activity.rows_read + region.activity.rows_written).to_string()
                        }
                        // Every file is local.
                        RegionColumn::Locality => "1.0".to_owned(),
                    })
                    .collect()
            })
            .collect();
        out.write_all(region_table(&list.columns, &rows).as_bytes())?;
        Ok(Reply::Done)
    }

    pub(super) fn status(
        &mut self,
        format: StatusFormat,
        out: &mut dyn Write,
    ) -> Result<Reply, CommandError> {
        let mut regions: Vec<(String, usize, RegionInfo)> = Vec::new();
        for name in self.db.list_tables() {
            let table = self.table(&name)?;
            let stores = table
                .descriptor()
                .map_err(|error| self.engine_error(&name, error))?
                .families()
                .len();
            let infos = table
                .regions()
                .map_err(|error| self.engine_error(&name, error))?;
            regions.extend(infos.into_iter().map(|info| (name.clone(), stores, info)));
        }
        let stats = self.db.stats();
        if format == StatusFormat::Summary {
            line(
                out,
                &format!(
                    "1 active master, 0 backup masters, 1 servers, 0 dead, {:.4} average load",
                    regions.len() as f64
                ),
            )?;
            return Ok(Reply::Done);
        }
        if format == StatusFormat::Detailed {
            line(out, &format!("version {}", env!("CARGO_PKG_VERSION")))?;
            line(out, "0 regionsInTransition")?;
        }
        line(out, &format!("active master:  {SERVER_NAME}"))?;
        line(out, "0 backup masters")?;
        line(out, "1 live servers")?;
        line(out, &format!("    {SERVER_NAME}"))?;
        line(
            out,
            &format!(
                "        numberOfOnlineRegions={}, numberOfStorefiles={}, storefileSizeMB={}, \
                 memstoreSizeMB={}, lastSequenceId={}, flushes={}, compactions={}, \
                 hfileWrittenKB={}, walSyncs={}, walWrittenKB={}, blockCacheHits={}, \
                 blockCacheMisses={}, blockCacheSizeKB={}, stallMicros={}, splits={}, \
                 merges={}, bulkLoads={}, bulkLoadedKB={}, ioBackend={}",
                regions.len(),
                stats.files,
                stats.file_bytes / BYTES_PER_MB,
                stats.memstore_bytes / BYTES_PER_MB,
                stats.last_sequence,
                stats.flushes,
                stats.compactions,
                stats.hfile_bytes_written / BYTES_PER_KB,
                stats.wal.syncs,
                stats.wal.bytes_written / BYTES_PER_KB,
                stats.cache.hits,
                stats.cache.misses,
                stats.cache.bytes / BYTES_PER_KB,
                stats.stall_micros,
                stats.splits,
                stats.merges,
                stats.bulk_loads,
                stats.bulk_loaded_bytes / BYTES_PER_KB,
                stats.io_backend.name(),
            ),
        )?;
        if format == StatusFormat::Detailed {
            for (table, stores, region) in &regions {
                line(out, &format!("        \"{}\"", region_name(table, region)))?;
                let files: usize = region.files_per_level.iter().sum();
                let levels: Vec<String> = region
                    .files_per_level
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                line(
                    out,
                    &format!(
                        "            numberOfStores={stores}, numberOfStorefiles={files}, \
                         storefileSizeKB={}, memstoreSizeKB={}, memstoreCells={}, \
                         storefileCells={}, readRequestsCount={}, writeRequestsCount={}, \
                         flushes={}, compactions={}, bulkLoadedFiles={}, stallMicros={}, \
                         filesPerLevel=[{}]",
                        region.file_bytes / BYTES_PER_KB,
                        region.memstore_bytes / BYTES_PER_KB,
                        region.memstore_cells,
                        region.file_cells,
                        region.activity.rows_read,
                        region.activity.rows_written,
                        region.activity.flushes,
                        region.activity.compactions,
                        region.activity.bulk_loaded_files,
                        region.activity.stall_micros,
                        levels.join(", ")
                    ),
                )?;
            }
        }
        line(out, "0 dead servers")?;
        if format == StatusFormat::Simple {
            line(
                out,
                &format!("Aggregate load: 0, regions: {}", regions.len()),
            )?;
        }
        Ok(Reply::Done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_names_parse_back() {
        assert_eq!(parse_region_name("t,,7"), Some(("t", 7)));
        assert_eq!(parse_region_name("t,a,b,12."), Some(("t", 12)));
        assert_eq!(parse_region_name("t"), None);
        assert_eq!(parse_region_name("t,x,y"), None);
    }
}
