//! A store's state at one moment, replaced as a whole (copy on write), and
//! the transitions flush, compaction and split make of it. Each transition
//! returns a new version that keeps the level invariants, which debug builds
//! check after every transition:
//!
//! * L0 holds flushed files newest first (their highest sequences do not
//!   grow along the level);
//! * every deeper level is sorted by first row, and its files are disjoint
//!   (each file's last row is below the next file's first row).

use std::ops::Bound;
use std::sync::Arc;

use crate::hfile::reader::HFileReader;
use crate::iter::run::{above_lower, below_upper};
use crate::memstore::Memstore;
use crate::ops::ColumnSet;

use super::LEVELS;

/// A memstore waiting to be flushed.
#[derive(Clone)]
pub(crate) struct FrozenMemstore {
    pub(crate) memstore: Arc<Memstore>,
    /// The memstore owns sequences in `(after, up_to]`.
    pub(crate) after: u64,
    pub(crate) up_to: u64,
}

/// One consistent state of a store.
#[derive(Clone)]
pub(crate) struct StoreVersion {
    pub(crate) active: Arc<Memstore>,
    pub(crate) active_after: u64,
    /// Oldest first.
    pub(crate) frozen: Vec<FrozenMemstore>,
    /// `levels[0]` newest first; the others sorted by first row.
    pub(crate) levels: Vec<Vec<Arc<HFileReader>>>,
}

impl StoreVersion {
    /// Every file of every level.
    pub(crate) fn files(&self) -> impl Iterator<Item = (usize, &Arc<HFileReader>)> {
        self.levels
            .iter()
            .enumerate()
            .flat_map(|(level, files)| files.iter().map(move |f| (level, f)))
    }

    /// Bytes of the files of `level`.
    pub(crate) fn level_bytes(&self, level: usize) -> u64 {
        self.levels
            .get(level)
            .map_or(0, |files| files.iter().map(|f| f.meta().size).sum())
    }

    /// The rows in `lower..upper` holding a cell of `columns` (`None`: any
    /// cell), counted from the files' meta blocks without reading a data
    /// block, when that count is exact: both memstores are empty, no file
    /// holds a delete marker or a cell older than `oldest_unexpired_ms`
    /// (the TTL horizon; `i64::MIN` without one), the files' row spans are
    /// disjoint (no row is in two files) and each lies wholly inside or
    /// wholly outside the bounds, and each file inside counted the rows of
    /// the columns asked for (a row holding several of them counts once,
    /// so for several columns one of them must be in every row of the
    /// file, or all but one in none), and no file inside holds a cell
    /// newer than `read_point` (one flushed or loaded after the read
    /// began). `None` otherwise: the caller reads the rows instead. Every
    /// row such a version holds is visible at `read_point` with every
    /// version rule, since nothing deletes, expires or is uncommitted.
    pub(crate) fn known_row_count(
        &self,
        lower: &Bound<Vec<u8>>,
        upper: &Bound<Vec<u8>>,
        columns: Option<&ColumnSet>,
        oldest_unexpired_ms: i64,
        read_point: u64,
    ) -> Option<u64> {
        if self.active.cell_count() > 0 || self.frozen.iter().any(|f| f.memstore.cell_count() > 0) {
            return None;
        }
        let mut inside: Vec<&Arc<HFileReader>> = Vec::new();
        for (_, file) in self.files() {
            let meta = file.meta();
            if !above_lower(&meta.last_row, lower) || !below_upper(&meta.first_row, upper) {
                continue;
            }
            let wholly_inside =
                above_lower(&meta.first_row, lower) && below_upper(&meta.last_row, upper);
            if !wholly_inside
                || meta.markers > 0
                || meta.min_timestamp < oldest_unexpired_ms
                || meta.max_sequence > read_point
            {
                return None;
            }
            inside.push(file);
        }
        inside.sort_unstable_by(|a, b| a.meta().first_row.cmp(&b.meta().first_row));
        if inside
            .windows(2)
            .any(|pair| pair[0].meta().last_row >= pair[1].meta().first_row)
        {
            return None;
        }
        inside.iter().try_fold(0u64, |total, file| {
            Some(total + file_rows_holding(file, columns)?)
        })
    }
}

/// The rows of one file holding a cell of `columns` (`None`: any), from
/// its meta block; `None` when the meta cannot tell.
fn file_rows_holding(file: &HFileReader, columns: Option<&ColumnSet>) -> Option<u64> {
    let rows = file.meta().rows;
    let Some(columns) = columns else {
        return Some(rows);
    };
    let counted = file.info().column_rows.as_ref()?;
    let per_column: Vec<u64> = columns
        .iter()
        .map(|q| {
            counted
                .binary_search_by(|(c, _)| c.as_slice().cmp(q))
                .map_or(0, |i| counted[i].1)
        })
        .collect();
    if per_column.contains(&rows) {
        // One of the columns is in every row: so is the union.
        return Some(rows);
    }
    match per_column.iter().filter(|&&n| n > 0).count() {
        0 => Some(0),
        1 => per_column.iter().copied().max(),
        _ => None,
    }
}

impl StoreVersion {
    /// The first version of a store: an empty active memstore taking
    /// sequences above `after`, and `levels` (L0 newest first, the others
    /// sorted by first row).
    pub(crate) fn new(after: u64, mut levels: Vec<Vec<Arc<HFileReader>>>) -> StoreVersion {
        levels.resize_with(LEVELS, Vec::new);
        let version = StoreVersion {
            active: Arc::new(Memstore::new()),
            active_after: after,
            frozen: Vec::new(),
            levels,
        };
        version.debug_check_levels();
        version
    }

    /// The active memstore frozen at `boundary` (a flush starts), a new one
    /// taking later sequences.
    pub(crate) fn with_frozen(&self, boundary: u64) -> StoreVersion {
        let mut next = self.clone();
        next.frozen.push(FrozenMemstore {
            memstore: self.active.clone(),
            after: self.active_after,
            up_to: boundary,
        });
        next.active = Arc::new(Memstore::new());
        next.active_after = boundary;
        next
    }

    /// A flush through `boundary` done: the frozen memstores it wrote leave,
    /// `file` (if the flush wrote one) becomes the newest L0 file. Also
    /// returns the bytes of memory the memstores held.
    pub(crate) fn with_flushed(
        &self,
        boundary: u64,
        file: Option<Arc<HFileReader>>,
    ) -> (StoreVersion, u64) {
        let mut next = self.clone();
        let mut freed = 0u64;
        next.frozen.retain(|f| {
            let flushed = f.up_to <= boundary;
            if flushed {
                freed += f.memstore.allocated_bytes();
            }
            !flushed
        });
        if let Some(file) = file {
            next.insert_l0(file);
        }
        (next, freed)
    }

    /// Puts `file` into L0 at its place by highest sequence (newest
    /// first). A flushed file is usually the newest, but a bulk load may
    /// have put a file with a later sequence into L0 while older writes
    /// still waited in a memstore.
    fn insert_l0(&mut self, file: Arc<HFileReader>) {
        if let Some(l0) = self.levels.first_mut() {
            let newest = file.meta().max_sequence;
            let at = l0.partition_point(|f| f.meta().max_sequence > newest);
            l0.insert(at, file);
        }
    }

    /// The level a bulk-loaded file holding rows `[first_row, last_row]`
    /// goes to, keeping the level invariants and the rule that for any row
    /// a file in a higher level holds newer cells than one below:
    ///
    /// * with a fresh sequence (newer than every file), the deepest level
    ///   such that no file of it or of any level above overlaps the rows
    ///   (L0 when an L0 file overlaps them);
    /// * with sequence zero (older than every file), the bottom level, if
    ///   no file there overlaps; `None` otherwise (it cannot go below a
    ///   file it overlaps).
    pub(crate) fn bulk_load_level(
        &self,
        first_row: &[u8],
        last_row: &[u8],
        backfill: bool,
    ) -> Option<usize> {
        let overlaps = |level: usize| {
            self.levels.get(level).is_some_and(|files| {
                files
                    .iter()
                    .any(|f| f.meta().overlaps(Some(first_row), Some(last_row)))
            })
        };
        if backfill {
            return (!overlaps(LEVELS - 1)).then_some(LEVELS - 1);
        }
        match (0..LEVELS).find(|&level| overlaps(level)) {
            Some(level) => Some(level.saturating_sub(1)),
            None => Some(LEVELS - 1),
        }
    }

    /// A bulk-loaded file joins `level` (chosen by [`Self::bulk_load_level`]).
    pub(crate) fn with_bulk_loaded(&self, level: usize, file: Arc<HFileReader>) -> StoreVersion {
        let mut next = self.clone();
        if level == 0 {
            next.insert_l0(file);
        } else if let Some(files) = next.levels.get_mut(level) {
            let at = files.partition_point(|f| f.meta().first_row < file.meta().first_row);
            files.insert(at, file);
        }
        next
    }

    /// The first version of the region two regions merge into: the files of
    /// `self` (the lower region's store) and `upper` (the upper one's), the
    /// files of each region lying inside its own range (the caller checks),
    /// so each deeper level stays sorted and disjoint; fresh memstores above
    /// `after`.
    pub(crate) fn with_merged(&self, upper: &StoreVersion, after: u64) -> StoreVersion {
        let mut levels = self.levels.clone();
        for (level, files) in levels.iter_mut().enumerate() {
            if let Some(more) = upper.levels.get(level) {
                files.extend(more.iter().cloned());
            }
            if level == 0 {
                files.sort_by_key(|f| std::cmp::Reverse(f.meta().max_sequence));
            } else {
                files.sort_by(|a, b| a.meta().first_row.cmp(&b.meta().first_row));
            }
        }
        StoreVersion::new(after, levels)
    }

    /// A compaction done: the files `removed` leave every level, `outputs`
    /// join `output_level` in key order.
    pub(crate) fn with_compacted(
        &self,
        removed: &[u64],
        output_level: usize,
        outputs: Vec<Arc<HFileReader>>,
    ) -> StoreVersion {
        let mut next = self.clone();
        for level in next.levels.iter_mut() {
            level.retain(|f| !removed.contains(&f.meta().id));
        }
        if let Some(level) = next.levels.get_mut(output_level) {
            level.extend(outputs);
            level.sort_by(|a, b| a.meta().first_row.cmp(&b.meta().first_row));
        }
        next
    }

    /// The version without the files `removed` (dropped whole, nothing
    /// written in their place); every level keeps its order.
    pub(crate) fn without(&self, removed: &[u64]) -> StoreVersion {
        let mut next = self.clone();
        for level in next.levels.iter_mut() {
            level.retain(|f| !removed.contains(&f.meta().id));
        }
        next
    }

    /// The first version of a daughter of a split of the store this is a
    /// version of: the parent's files (shared until compaction rewrites them),
    /// fresh memstores above the parent's flushed sequence `after`.
    pub(crate) fn with_split(&self, after: u64) -> StoreVersion {
        StoreVersion::new(after, self.levels.clone())
    }

    /// Asserts the level invariants (debug builds only).
    pub(crate) fn debug_check_levels(&self) {
        if !cfg!(debug_assertions) {
            return;
        }
        if let Some(l0) = self.levels.first() {
            debug_assert!(
                l0.windows(2)
                    .all(|w| w[0].meta().max_sequence >= w[1].meta().max_sequence),
                "L0 must hold its files newest first"
            );
        }
        for (level, files) in self.levels.iter().enumerate().skip(1) {
            debug_assert!(
                files
                    .windows(2)
                    .all(|w| w[0].meta().last_row < w[1].meta().first_row),
                "L{level} must be sorted by first row and disjoint"
            );
        }
    }
}
