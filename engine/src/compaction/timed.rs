//! Compaction work that time alone makes due, which the compaction checker
//! looks for (`DbOptions::compaction_check_interval`) so that space is freed
//! even in a store nothing writes to:
//!
//! * **Wholly expired files.** A file whose newest cell is older than the
//!   family's TTL holds nothing a read can return, now or later, so it is
//!   dropped from its store without being rewritten (RocksDB's FIFO/TTL
//!   compaction, HBase's `hbase.store.delete.expired.storefile`). Its delete
//!   markers go with it: a marker hides only cells at or below its own
//!   timestamp, which are expired too. Version windows are unchanged for
//!   every unexpired cell: an expired cell sorts after every unexpired
//!   version of its column (its timestamp is smaller), so it takes no place
//!   ahead of one.
//! * **Periodic major compaction** (HBase's `hbase.hregion.majorcompaction`
//!   with its jitter): a store whose oldest file was written more than its
//!   period ago is major-compacted, unless it is one file below L0 with
//!   nothing expired, which a major compaction would rewrite unchanged
//!   (HBase skips that case the same way).

use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_64;

use super::{job, pick};
use crate::catalog::TableState;
use crate::core::Services;
use crate::error::Result;
use crate::hfile::reader::HFileReader;
use crate::options::{DbOptions, FamilyDescriptor};
use crate::region::Region;
use crate::store::{Store, StoreVersion};

/// The files of `version` (with their levels) whose every cell is expired at
/// `now_ms` under `family`'s TTL; none without a TTL, and none in a family
/// with `MIN_VERSIONS`, whose expired cells may still be among the newest
/// versions of their column (HBase's `HStore` skips expired-file removal
/// for `minVersions > 0` the same way).
pub(crate) fn expired_files(
    version: &StoreVersion,
    family: &FamilyDescriptor,
    now_ms: i64,
) -> Vec<(usize, Arc<HFileReader>)> {
    if family.ttl_ms().is_none() || family.get_min_versions() > 0 {
        return Vec::new();
    }
    let oldest_unexpired_ms = family.oldest_unexpired_ms(now_ms);
    version
        .files()
        .filter(|(_, file)| file.meta().max_timestamp < oldest_unexpired_ms)
        .map(|(level, file)| (level, file.clone()))
        .collect()
}

/// The periodic major compaction period of one store in milliseconds, its
/// jitter applied; `None` when periodic major compaction is off. The family's
/// own period and jitter (HBase's family `CONFIGURATION`) win over the
/// database's. The jitter factor is drawn from the region and family ids, so
/// it is the same for a store every time and differs between stores.
pub(crate) fn major_period_ms(
    options: &DbOptions,
    family: &FamilyDescriptor,
    region_id: u64,
    family_id: u32,
) -> Option<i64> {
    let period = family
        .get_major_compaction_period()
        .unwrap_or(options.major_compaction_period);
    let period_ms = period.as_millis() as f64;
    if period_ms <= 0.0 {
        return None;
    }
    let mut seed = [0u8; 12];
    seed[..8].copy_from_slice(&region_id.to_le_bytes());
    seed[8..].copy_from_slice(&family_id.to_le_bytes());
    // 53 random bits as a fraction in [0, 1).
    let unit = (xxh3_64(&seed) >> 11) as f64 / (1u64 << 53) as f64;
    let jitter = family
        .get_major_compaction_jitter()
        .unwrap_or(options.major_compaction_jitter);
    let factor = 1.0 - jitter + 2.0 * jitter * unit;
    Some((period_ms * factor) as i64)
}

/// Whether `store`'s periodic major compaction is due at `now_ms`.
fn major_due(
    options: &DbOptions,
    region: &Region,
    store: &Store,
    family: &FamilyDescriptor,
    now_ms: i64,
) -> bool {
    let Some(period_ms) = major_period_ms(options, family, region.id(), store.family_id()) else {
        return false;
    };
    let version = store.version();
    let files: Vec<(usize, &Arc<HFileReader>)> = version.files().collect();
    let Some(oldest_written_ms) = files.iter().map(|(_, f)| f.written_at_ms()).min() else {
        return false;
    };
    if now_ms.saturating_sub(oldest_written_ms) < period_ms {
        return false;
    }
    match files.as_slice() {
        [(level, file)] => {
            *level == 0 || file.meta().min_timestamp < family.oldest_unexpired_ms(now_ms)
        }
        _ => true,
    }
}

/// Whether any store of `region` has work that time made due at `now_ms`.
pub(crate) fn work_due(services: &Services, state: &TableState, region: &Region) -> bool {
    let now_ms = services.now_ms();
    region.stores().iter().any(|store| {
        state
            .family_by_id(store.family_id())
            .is_some_and(|(_, family)| {
                !expired_files(&store.version(), family, now_ms).is_empty()
                    || major_due(&services.options, region, store, family, now_ms)
            })
    })
}

/// Does the work time made due in every store of `region` (its compaction
/// slot held by the caller): drops wholly expired files, then runs the
/// periodic major compactions that are due. Returns whether it did any.
pub(crate) fn run_due(services: &Services, state: &TableState, region: &Region) -> Result<bool> {
    let mut did = false;
    for store in region.stores() {
        let Some((_, family)) = state.family_by_id(store.family_id()) else {
            continue;
        };
        let now_ms = services.now_ms();
        let expired = expired_files(&store.version(), family, now_ms);
        if !expired.is_empty() {
            job::drop_files(services, region, &store, &expired)?;
            did = true;
        }
        if major_due(&services.options, region, &store, family, now_ms)
            && let Some(major) = pick::pick_major(&store.version())
        {
            job::run(services, region, &store, family, &major)?;
            did = true;
        }
    }
    Ok(did)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn jitter_spreads_stores_within_its_bounds() {
        let options = DbOptions {
            major_compaction_period: Duration::from_secs(1000),
            major_compaction_jitter: 0.5,
            ..DbOptions::default()
        };
        let family = FamilyDescriptor::new("f");
        let periods: Vec<i64> = (0..200u64)
            .map(|region| major_period_ms(&options, &family, region, 1).unwrap())
            .collect();
        assert!(periods.iter().all(|p| (500_000..=1_500_000).contains(p)));
        let spread = periods.iter().max().unwrap() - periods.iter().min().unwrap();
        assert!(spread > 800_000, "jitter spreads the stores: {spread}");
        // The same store always gets the same period.
        assert_eq!(
            major_period_ms(&options, &family, 7, 1),
            major_period_ms(&options, &family, 7, 1)
        );
        let exact = DbOptions {
            major_compaction_jitter: 0.0,
            ..options.clone()
        };
        assert_eq!(major_period_ms(&exact, &family, 7, 1), Some(1_000_000));
        let off = DbOptions {
            major_compaction_period: Duration::ZERO,
            ..options
        };
        assert_eq!(major_period_ms(&off, &family, 7, 1), None);
    }

    /// A family's own period and jitter replace the database's, each on its
    /// own; a zero period turns the family's periodic compaction off, and a
    /// family period turns it on where the database's is off.
    #[test]
    fn a_familys_schedule_wins_over_the_databases() {
        let options = DbOptions {
            major_compaction_period: Duration::from_secs(1000),
            major_compaction_jitter: 0.0,
            ..DbOptions::default()
        };
        let day =
            FamilyDescriptor::new("f").major_compaction_period(Some(Duration::from_secs(86_400)));
        assert_eq!(major_period_ms(&options, &day, 7, 1), Some(86_400_000));
        let off = FamilyDescriptor::new("f").major_compaction_period(Some(Duration::ZERO));
        assert_eq!(major_period_ms(&options, &off, 7, 1), None);
        let database_off = DbOptions {
            major_compaction_period: Duration::ZERO,
            ..options.clone()
        };
        assert_eq!(major_period_ms(&database_off, &day, 7, 1), Some(86_400_000));
        let jittered = FamilyDescriptor::new("f").major_compaction_jitter(Some(0.5));
        let periods: Vec<i64> = (0..200u64)
            .map(|region| major_period_ms(&options, &jittered, region, 1).unwrap())
            .collect();
        assert!(periods.iter().all(|p| (500_000..=1_500_000).contains(p)));
        assert!(
            periods.iter().any(|p| *p != 1_000_000),
            "the family's jitter applies"
        );
    }
}
