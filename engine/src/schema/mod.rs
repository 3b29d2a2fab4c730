//! What a table's descriptor means for the engine's readers and jobs, worked
//! out once per schema: each family's id, name and rules (version window,
//! TTL), as the plans reads start from.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::ops::ColumnSet;
use crate::options::{FamilyDescriptor, KeepDeletedCells, TableDescriptor};

/// Per-family rules from the table descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FamilyRules {
    /// `VERSIONS`: size of the window.
    pub(crate) max_versions: u32,
    /// TTL in milliseconds, if any.
    pub(crate) ttl_ms: Option<u64>,
    /// `MIN_VERSIONS`: this many newest versions of a column outlive the TTL.
    pub(crate) min_versions: u32,
    /// `KEEP_DELETED_CELLS`.
    pub(crate) keep_deleted_cells: KeepDeletedCells,
}

impl FamilyRules {
    /// The rules of `family`.
    pub(crate) fn of(family: &FamilyDescriptor) -> FamilyRules {
        let retention = family.retention();
        FamilyRules {
            max_versions: family.get_max_versions(),
            ttl_ms: family.ttl_ms(),
            min_versions: retention.min_versions,
            keep_deleted_cells: retention.keep_deleted_cells,
        }
    }

    /// At `now_ms`, cells with a timestamp below this are expired
    /// (`i64::MIN` without a TTL: none is).
    pub(crate) fn oldest_unexpired_ms(&self, now_ms: i64) -> i64 {
        crate::options::oldest_unexpired_ms(self.ttl_ms, now_ms)
    }

    /// Whether the put at place `place` (1 = newest) of its column's version
    /// window, with timestamp `timestamp`, is past its TTL for good: expired
    /// (`timestamp < oldest_unexpired_ms`) and not among the newest
    /// `MIN_VERSIONS` (HBase's `ColumnTracker.checkVersions`: "keep the KV
    /// if required by minversions or it is not expired").
    pub(crate) fn expired(&self, place: u32, timestamp: i64, oldest_unexpired_ms: i64) -> bool {
        timestamp < oldest_unexpired_ms && place > self.min_versions
    }

    /// Whether a delete marker at `marker_timestamp` hides what it covers
    /// from a read. Under `KEEP_DELETED_CELLS => FALSE` always; otherwise
    /// only when the read's time range holds the marker's timestamp
    /// (HBase's `NormalUserScanQueryMatcher`: with deleted cells kept, a
    /// marker outside the range is not tracked), and under `TTL` also once
    /// the marker has expired, as compaction then treats it as under
    /// `FALSE` (`CompactionScanQueryMatcher.trackDelete`).
    pub(crate) fn marker_applies(
        &self,
        marker_timestamp: i64,
        time_range_contains: bool,
        oldest_unexpired_ms: i64,
    ) -> bool {
        match self.keep_deleted_cells {
            KeepDeletedCells::False => true,
            KeepDeletedCells::True => time_range_contains,
            KeepDeletedCells::Ttl => time_range_contains || marker_timestamp < oldest_unexpired_ms,
        }
    }
}

/// One family a read touches.
#[derive(Debug, Clone)]
pub(crate) struct FamilyPlan {
    pub(crate) id: u32,
    pub(crate) name: Vec<u8>,
    pub(crate) rules: FamilyRules,
    /// Selected qualifiers; `None` = the whole family.
    pub(crate) columns: Option<ColumnSet>,
}

/// The plan of `family` (id `id`) reading `columns` (`None`: all of them).
pub(crate) fn family_plan(
    id: u32,
    family: &FamilyDescriptor,
    columns: Option<&BTreeSet<Vec<u8>>>,
) -> FamilyPlan {
    FamilyPlan {
        id,
        name: family.name().as_bytes().to_vec(),
        rules: FamilyRules::of(family),
        columns: columns.map(ColumnSet::from),
    }
}

/// The plan of every family of a table, sorted by name (kept in its
/// table's state so that reads of whole rows share it).
pub(crate) fn all_family_plans(
    descriptor: &TableDescriptor,
    family_ids: &[u32],
) -> Arc<[FamilyPlan]> {
    let mut plans: Vec<FamilyPlan> = family_ids
        .iter()
        .zip(descriptor.families())
        .map(|(id, family)| family_plan(*id, family, None))
        .collect();
    plans.sort_by(|a, b| a.name.cmp(&b.name));
    plans.into()
}
