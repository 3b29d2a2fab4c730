//! Leveled compaction of one store.
//!
//! Levels: L0 holds flushed files, newest first, possibly overlapping;
//! L1..L6 are sorted runs of non-overlapping files, each level
//! `level_multiplier` times the target size of the one above (L1's target
//! is `level_base_bytes`). Scores: L0's is its file count over
//! `l0_compaction_trigger`; a deeper level's is its size over its target.
//! The highest score >= 1 is compacted:
//!
//! * L0: every L0 file plus the L1 files they overlap, into L1;
//! * Li (i >= 1): the next file after the level's compaction pointer (round
//!   robin through the key space) plus the Li+1 files it overlaps, into Li+1.
//!   A file that overlaps nothing below is moved down without rewriting.
//!
//! Outputs are cut at `target_file_bytes`, only between rows, so no row is
//! split across two files of one level.
//!
//! # What a compaction drops (`docs/semantics.md`: reads never change)
//! For every row and column of the merged inputs, in store order:
//! * a put at the same timestamp as the previous put of the column (an older
//!   write at that timestamp, never visible);
//! * puts beyond the newest `VERSIONS` distinct timestamps of the inputs
//!   (newer levels only add newer writes, deeper ones only add timestamps,
//!   and the timestamps ahead of such a put stay: see the next two rules);
//! * puts older than the TTL (anything that could take their window place
//!   has a smaller timestamp, so it is expired too).
//!
//! A hidden put inside the window is kept as a value-less *ghost*: it holds
//! its window place, which later writes with smaller timestamps depend on.
//! Above the bottommost level every delete marker is kept (it may hide
//! deeper cells). At the bottommost level (nothing deeper for these rows) a
//! marker is kept only while it hides a ghost of its row; the filter
//! therefore decides a row at a time, and a row larger than
//! [`job::MAX_BUFFERED_ROW_CELLS`] keeps all its markers.
//!
//! With live read snapshots the rules run once per view (the latest one and
//! each snapshot's, see `docs/semantics.md` R19a) and a cell keeps the most
//! any view gives it, so a snapshot reads the same after the compaction.

//!
//! The parts: [`pick`] (scores and pickers), [`filter`] (the drop rules),
//! [`job`] (one compaction run), [`timed`] (what time alone makes due:
//! wholly expired files dropped, periodic major compactions); the two
//! policies below run them for a region.

pub(crate) mod filter;
pub(crate) mod job;
pub(crate) mod pick;
pub(crate) mod timed;

use std::sync::Arc;

use crate::catalog::TableState;
use crate::core::Services;
use crate::error::Result;
use crate::region::Region;
pub(crate) use pick::region_score;
pub(crate) use timed::work_due as timed_work_due;

/// One background compaction of the most urgent store of `region` (its
/// compaction slot held by the caller); returns whether the region has
/// more to compact. Files a split left shared with a sibling are rewritten
/// first, one store at a time; then the work time made due runs
/// ([`timed::run_due`]: expired files dropped, periodic major compactions),
/// then the most urgent store by score.
pub(crate) fn compact_most_urgent(
    services: &Services,
    state: &TableState,
    region: &Arc<Region>,
) -> Result<bool> {
    if let Some(store) = region
        .stores()
        .into_iter()
        .find(|s| s.version().files().any(|(_, f)| !region.owns(f.meta())))
    {
        if let (Some((_, family)), Some(pick)) = (
            state.family_by_id(store.family_id()),
            pick::pick_major(&store.version()),
        ) {
            job::run(services, region, &store, family, &pick)?;
        }
        return Ok(true);
    }
    timed::run_due(services, state, region)?;
    let best = region
        .stores()
        .into_iter()
        .map(|s| {
            let score = pick::score(&s.version(), &services.options).1;
            (s, score)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let Some((store, score)) = best else {
        return Ok(false);
    };
    if score < 1.0 {
        return Ok(false);
    }
    let Some((_, family)) = state.family_by_id(store.family_id()) else {
        return Ok(false);
    };
    let pointer = store.compact_pointers();
    let Some(pick) = pick::pick(&store.version(), &services.options, &pointer) else {
        return Ok(false);
    };
    job::run(services, region, &store, family, &pick)?;
    if let Some(last) = pick.upper.iter().map(|f| f.meta().last_row.clone()).max() {
        store.set_compact_pointer(pick.level, last);
    }
    Ok(region_score(region, &services.options) >= 1.0)
}

/// Compacts every store of `region` now (its compaction slot held by the
/// caller). A minor compaction moves L0 into L1 and then follows the
/// scores; a major one rewrites each store into one sorted run at its
/// deepest level.
pub(crate) fn compact_region_now(
    services: &Services,
    state: &TableState,
    region: &Arc<Region>,
    major: bool,
) -> Result<()> {
    for store in region.stores() {
        let Some((_, family)) = state.family_by_id(store.family_id()) else {
            continue;
        };
        let first = if major {
            pick::pick_major(&store.version())
        } else {
            pick::pick_level0(&store.version())
        };
        if let Some(pick) = first {
            job::run(services, region, &store, family, &pick)?;
        }
        if !major {
            while let Some(pick) = pick::pick(
                &store.version(),
                &services.options,
                &store.compact_pointers(),
            ) {
                job::run(services, region, &store, family, &pick)?;
                if let Some(last) = pick.upper.iter().map(|f| f.meta().last_row.clone()).max() {
                    store.set_compact_pointer(pick.level, last);
                }
            }
        }
    }
    Ok(())
}
