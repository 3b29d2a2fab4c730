//! What a table's descriptor means for the engine's readers and jobs, worked
//! out once per schema: each family's id, name and rules (version window,
//! TTL), as the plans reads start from.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::options::{FamilyDescriptor, TableDescriptor};

/// Per-family rules from the table descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FamilyRules {
    /// `VERSIONS`: size of the window.
    pub(crate) max_versions: u32,
    /// TTL in milliseconds, if any.
    pub(crate) ttl_ms: Option<u64>,
}

/// One family a read touches.
#[derive(Debug, Clone)]
pub(crate) struct FamilyPlan {
    pub(crate) id: u32,
    pub(crate) name: Vec<u8>,
    pub(crate) rules: FamilyRules,
    /// Selected qualifiers; `None` = the whole family.
    pub(crate) columns: Option<BTreeSet<Vec<u8>>>,
}

/// The plan of `family` (id `id`) reading `columns` (`None`: all of them).
pub(crate) fn family_plan(
    id: u32,
    family: &FamilyDescriptor,
    columns: Option<BTreeSet<Vec<u8>>>,
) -> FamilyPlan {
    FamilyPlan {
        id,
        name: family.name().as_bytes().to_vec(),
        rules: FamilyRules {
            max_versions: family.get_max_versions(),
            ttl_ms: family.ttl_ms(),
        },
        columns,
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
