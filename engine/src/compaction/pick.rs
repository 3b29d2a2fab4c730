//! Which files a compaction of one store takes, and how urgently: the level
//! scores and the pickers (see the module above for the policy).

use std::sync::Arc;

use crate::hfile::reader::HFileReader;
use crate::options::DbOptions;
use crate::region::Region;
use crate::store::{LEVELS, StoreVersion};

/// What one compaction rewrites.
#[derive(Debug, Clone)]
pub(crate) struct Pick {
    /// Level the upper inputs come from.
    pub(crate) level: usize,
    pub(crate) output_level: usize,
    /// Files from `level`.
    pub(crate) upper: Vec<Arc<HFileReader>>,
    /// Files from `output_level` overlapping them.
    pub(crate) lower: Vec<Arc<HFileReader>>,
    /// No data below `output_level` (markers and hidden puts may go).
    pub(crate) bottommost: bool,
}

impl Pick {
    pub(crate) fn inputs(&self) -> impl Iterator<Item = &Arc<HFileReader>> {
        self.upper.iter().chain(&self.lower)
    }

    /// A lone file with nothing to merge can move down as it is.
    pub(crate) fn is_trivial_move(&self) -> bool {
        self.level > 0 && self.upper.len() == 1 && self.lower.is_empty()
    }
}

/// Target size of `level` in bytes (level >= 1).
fn level_target(options: &DbOptions, level: usize) -> u64 {
    let mut target = options.level_base_bytes;
    for _ in 1..level {
        target = target.saturating_mul(options.level_multiplier);
    }
    target
}

/// The most urgent level and its score.
pub(crate) fn score(version: &StoreVersion, options: &DbOptions) -> (usize, f64) {
    let mut best = (0, 0.0);
    for level in 0..LEVELS - 1 {
        let score = if level == 0 {
            version.levels.first().map_or(0, Vec::len) as f64 / options.l0_compaction_trigger as f64
        } else {
            version.level_bytes(level) as f64 / level_target(options, level) as f64
        };
        if score > best.1 {
            best = (level, score);
        }
    }
    best
}

/// Bytes compaction has to rewrite before no level of the store is over
/// its trigger or target: L0's bytes once it holds the trigger's count of
/// files, and each lower level's bytes beyond its target. An estimate, as
/// RocksDB's pending-compaction bytes are, that leaves out the bytes of the
/// next level a compaction merges with.
pub(crate) fn debt_bytes(version: &StoreVersion, options: &DbOptions) -> u64 {
    (0..LEVELS - 1)
        .map(|level| {
            if level == 0 {
                let files = version.levels.first().map_or(0, Vec::len);
                if files >= options.l0_compaction_trigger {
                    version.level_bytes(0)
                } else {
                    0
                }
            } else {
                version
                    .level_bytes(level)
                    .saturating_sub(level_target(options, level))
            }
        })
        .sum()
}

fn key_range(files: &[Arc<HFileReader>]) -> Option<(Vec<u8>, Vec<u8>)> {
    let first = files.iter().map(|f| f.meta().first_row.clone()).min()?;
    let last = files.iter().map(|f| f.meta().last_row.clone()).max()?;
    Some((first, last))
}

fn overlapping(files: &[Arc<HFileReader>], lo: &[u8], hi: &[u8]) -> Vec<Arc<HFileReader>> {
    files
        .iter()
        .filter(|f| f.meta().overlaps(Some(lo), Some(hi)))
        .cloned()
        .collect()
}

fn nothing_below(version: &StoreVersion, level: usize) -> bool {
    version.levels.iter().skip(level + 1).all(Vec::is_empty)
}

/// The highest compaction score of any store of `region`.
pub(crate) fn region_score(region: &Region, options: &DbOptions) -> f64 {
    region
        .stores()
        .iter()
        .map(|s| score(&s.version(), options).1)
        .fold(0.0, f64::max)
}

/// Picks the compaction the scores ask for, if any.
pub(crate) fn pick(
    version: &StoreVersion,
    options: &DbOptions,
    pointer: &[Vec<u8>],
) -> Option<Pick> {
    let (level, score) = score(version, options);
    if score < 1.0 {
        return None;
    }
    let files = version.levels.get(level)?;
    let upper: Vec<Arc<HFileReader>> = if level == 0 {
        files.clone()
    } else {
        // Round robin: the first file starting after the pointer.
        let after = pointer.get(level).map_or(&[][..], Vec::as_slice);
        let next = files
            .iter()
            .find(|f| f.meta().first_row.as_slice() > after)
            .or_else(|| files.first())?;
        vec![next.clone()]
    };
    let output_level = level + 1;
    let (lo, hi) = key_range(&upper)?;
    let lower = overlapping(version.levels.get(output_level)?, &lo, &hi);
    Some(Pick {
        level,
        output_level,
        upper,
        lower,
        bottommost: nothing_below(version, output_level),
    })
}

/// Every L0 file (with the L1 files they overlap) into L1, whatever the
/// scores say: what a manual minor compaction does first.
pub(crate) fn pick_level0(version: &StoreVersion) -> Option<Pick> {
    let upper = version.levels.first()?.clone();
    let (lo, hi) = key_range(&upper)?;
    let lower = overlapping(version.levels.get(1)?, &lo, &hi);
    Some(Pick {
        level: 0,
        output_level: 1,
        upper,
        lower,
        bottommost: nothing_below(version, 1),
    })
}

/// Everything of the store into its deepest occupied level (at least L1).
pub(crate) fn pick_major(version: &StoreVersion) -> Option<Pick> {
    let deepest = version.levels.iter().rposition(|files| !files.is_empty())?;
    let output_level = deepest.max(1);
    let mut upper = Vec::new();
    for level in 0..output_level {
        upper.extend(version.levels.get(level).into_iter().flatten().cloned());
    }
    let lower: Vec<Arc<HFileReader>> = version
        .levels
        .get(output_level)
        .cloned()
        .unwrap_or_default();
    Some(Pick {
        level: 0,
        output_level,
        upper,
        lower,
        bottommost: true,
    })
}
