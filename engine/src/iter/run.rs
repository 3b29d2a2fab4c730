//! Block runs: rows of cached blocks that one store's file cursors alone
//! hold, read straight from the blocks, row after row, while the cursors
//! stay where the run began (moving them and re-ranking the merge per row
//! was most of a cached scan's time). The run's end moves them past the
//! rows at once and ranks the merge afresh.
//!
//! Usually one block (after a compaction one file holds long stretches of
//! rows); with overlapping files whose rows alternate (a table filled in
//! random order, before its files compact), the rows of up to
//! [`MAX_RUN_BLOCKS`] files' blocks merged by row key, a key comparison per
//! block a row, without the merge heap. A run ends where a row is in two of
//! its blocks (its cells need the merge), where another source's rows
//! begin, or past the scan's upper bound; where a side reads its block to
//! the end, an unbounded run goes on into that file's next block.
//!
//! A run is part of a store's [`MergedRows`](super::rows::MergedRows),
//! which owns the merge and ends the run before anything reads the merge:
//! the cursors and the ranking they must agree with never leave iter/.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

use smallvec::SmallVec;

use super::block_row::{BlockCell, BlockRef, BlockRow};
use super::merge::MergedSources;
use crate::cell::compare_bytes;
use crate::error::Result;
use crate::hfile::data_block::DataBlock;

/// Blocks a block run merges at most: the winner's and those of up to
/// three other sources (a table filled in random order holds a few
/// overlapping files until they compact).
pub(super) const MAX_RUN_BLOCKS: usize = 4;

/// What [`MergedSources::block_run_sources`] finds.
pub(super) struct BlockRunSources<'a> {
    /// Sources other than the winner standing in cached blocks.
    pub(super) blocks: SmallVec<[RunBlock<'a>; MAX_RUN_BLOCKS]>,
    /// The smallest row of every other source (`None`: none has cells).
    pub(super) bound: Option<&'a [u8]>,
}

/// A source's cursor in a cached block.
pub(super) struct RunBlock<'a> {
    /// The source's index among the sources.
    pub(super) source: usize,
    /// The cached block its cursor stands in.
    pub(super) block: &'a Arc<DataBlock>,
    /// The row of that block the cursor is on (one whose cells all lie in it).
    pub(super) row: usize,
    /// The cell of the block the cursor stands at (in that row).
    pub(super) cell: usize,
}

/// True when `row` is inside the lower bound `lower`.
#[inline]
pub(crate) fn above_lower(row: &[u8], lower: &Bound<Vec<u8>>) -> bool {
    match lower {
        Bound::Included(l) => compare_bytes(row, l) != Ordering::Less,
        Bound::Excluded(l) => compare_bytes(row, l) == Ordering::Greater,
        Bound::Unbounded => true,
    }
}

/// True when `row` is inside the upper bound `upper`.
#[inline]
pub(crate) fn below_upper(row: &[u8], upper: &Bound<Vec<u8>>) -> bool {
    match upper {
        Bound::Included(u) => compare_bytes(row, u) != Ordering::Greater,
        Bound::Excluded(u) => compare_bytes(row, u) == Ordering::Less,
        Bound::Unbounded => true,
    }
}

/// Debug builds count the rows block runs step through (read, or tested
/// against the cell gate's selection), so that a test can check that a
/// selective filter skips the rows without a passing cell a block at a
/// time rather than row by row.
#[cfg(debug_assertions)]
mod run_counts {
    use std::cell::Cell;

    thread_local! {
        pub(super) static ROWS_STEPPED: Cell<u64> = const { Cell::new(0) };
        pub(super) static RUNS_BEGUN: Cell<u64> = const { Cell::new(0) };
    }

    #[inline]
    pub(super) fn add_row() {
        ROWS_STEPPED.with(|c| c.set(c.get() + 1));
    }

    #[inline]
    pub(super) fn add_run() {
        RUNS_BEGUN.with(|c| c.set(c.get() + 1));
    }
}

/// Counts a row a run stepped through (debug builds).
#[inline]
fn stepped_row() {
    #[cfg(debug_assertions)]
    run_counts::add_row();
}

/// Block runs this thread began since the last [`reset_run_rows_stepped`]
/// (debug builds; 0 in release builds): a run that goes on across its
/// blocks' ends is one run.
#[cfg(test)]
pub(crate) fn runs_begun() -> u64 {
    #[cfg(debug_assertions)]
    {
        run_counts::RUNS_BEGUN.with(std::cell::Cell::get)
    }
    #[cfg(not(debug_assertions))]
    {
        0
    }
}

/// Rows this thread's block runs stepped through since the last
/// [`reset_run_rows_stepped`] (debug builds; 0 in release builds).
#[cfg(test)]
pub(crate) fn run_rows_stepped() -> u64 {
    #[cfg(debug_assertions)]
    {
        run_counts::ROWS_STEPPED.with(std::cell::Cell::get)
    }
    #[cfg(not(debug_assertions))]
    {
        0
    }
}

/// Zeroes this thread's counts of rows stepped through by block runs and
/// of runs begun.
#[cfg(test)]
pub(crate) fn reset_run_rows_stepped() {
    #[cfg(debug_assertions)]
    {
        run_counts::ROWS_STEPPED.with(|c| c.set(0));
        run_counts::RUNS_BEGUN.with(|c| c.set(0));
    }
}

/// Rows of cached blocks that one store's file cursors alone hold, inside
/// the scan's bounds (see the module's description).
pub(super) struct BlockRun {
    /// The first is the winning source's block, where the run began.
    sides: SmallVec<[RunSide; MAX_RUN_BLOCKS]>,
    /// The scan's upper bound may fall inside the run: each row is checked
    /// against it as the run reaches it (see [`run_end`]).
    check_upper: bool,
    /// No source outside the run had a row when it began (the usual state:
    /// a compacted store, or overlapping files, with an empty memstore), so
    /// a side that read its block to the end may go on into its file's next
    /// block ([`BlockRun::extend`]) instead of ending the run.
    unbounded: bool,
    /// Cells that sides moved on past (into their files' next blocks) have
    /// moved their cursors past, for the merge's debug counts.
    moved: usize,
    /// Every side's block holds one cell per row (see
    /// [`BlockRun::next_lone_cell`]).
    lone_cells: bool,
}

/// The row a run may follow: row `row` of the winner's `block`, from cell
/// `from_cell` (where the winner's cursor stands), which the winner alone
/// held and which was just read.
#[derive(Clone, Copy)]
pub(super) struct LeadRow<'a> {
    pub(super) block: &'a Arc<DataBlock>,
    pub(super) row: usize,
    pub(super) from_cell: usize,
}

impl LeadRow<'_> {
    /// The run side of source `source` (the winner) over the rows after
    /// the lead row, up to `end`.
    fn side(&self, source: usize, end: usize) -> RunSide {
        RunSide {
            source,
            block: self.block.clone(),
            next: self.row + 1,
            end,
            start_row: self.row,
            from_cell: self.from_cell,
        }
    }
}

/// One file's rows in a [`BlockRun`].
struct RunSide {
    /// The merge source whose cursor reads the block.
    source: usize,
    block: Arc<DataBlock>,
    /// The next row to read.
    next: usize,
    /// The first row the run does not read (`next <= end <= rows`).
    end: usize,
    /// The row the source's cursor stands on.
    start_row: usize,
    /// The cell the source's cursor stands at.
    from_cell: usize,
}

/// The first cell of row `row` of `block`, or the block's cell count past
/// its last row.
fn first_cell_of(block: &DataBlock, row: usize) -> usize {
    if row < block.rows() {
        block.row_cells(row).start
    } else {
        block.cells()
    }
}

impl BlockRun {
    /// A run over `sides` that has moved no cursor yet (counted among the
    /// runs begun in debug builds).
    fn new(sides: SmallVec<[RunSide; MAX_RUN_BLOCKS]>, check_upper: bool, unbounded: bool) -> Self {
        #[cfg(debug_assertions)]
        run_counts::add_run();
        let lone_cells = lone_cells(&sides);
        BlockRun {
            sides,
            check_upper,
            unbounded,
            moved: 0,
            lone_cells,
        }
    }

    /// The run that may follow `lead`, a row the winner alone held and
    /// which was just read: over the rows after it that the winner's cursor
    /// alone holds, or, when the next row is another source's, over the
    /// blocks of up to [`MAX_RUN_BLOCKS`] files merged by row key. `None`
    /// when neither has a row to run over.
    pub(super) fn after_row(
        merge: &MergedSources,
        lead: LeadRow<'_>,
        upper: &Bound<Vec<u8>>,
    ) -> Option<BlockRun> {
        let next_row = merge.runner_up_row();
        let (end, check_upper) = run_end(lead.block, lead.row + 1, next_row, upper);
        if end > lead.row + 1 {
            // The rows up to `end` are this cursor's alone and inside the
            // scan: read them from the block without moving the cursor row
            // by row.
            let side = lead.side(merge.winner()?, end);
            return Some(BlockRun::new(
                smallvec::smallvec![side],
                check_upper,
                next_row.is_none(),
            ));
        }
        // The next row is another source's: with overlapping files rows
        // alternate between them. Merge their blocks' rows by key.
        Self::merged_after_row(merge, lead, upper)
    }

    /// A run over several files' blocks from `lead`, a row the winner
    /// alone held, when the next row is another source's, other sources
    /// stand in cached blocks too, and every block has rows before the
    /// other sources' and the scan's upper bound.
    pub(super) fn merged_after_row(
        merge: &MergedSources,
        lead: LeadRow<'_>,
        upper: &Bound<Vec<u8>>,
    ) -> Option<BlockRun> {
        if merge.runner_up_row().is_none() || lead.row + 2 >= lead.block.rows() {
            return None;
        }
        let lead_source = merge.winner()?;
        let found = merge.block_run_sources()?;
        let (lead_end, mut check_upper) = run_end(lead.block, lead.row + 1, found.bound, upper);
        if lead_end <= lead.row + 1 {
            return None;
        }
        let mut sides = SmallVec::new();
        sides.push(lead.side(lead_source, lead_end));
        for other in &found.blocks {
            let (end, upper_inside) = run_end(other.block, other.row, found.bound, upper);
            if end <= other.row {
                return None;
            }
            check_upper |= upper_inside;
            sides.push(RunSide::standing_at(other, end));
        }
        Some(BlockRun::new(sides, check_upper, found.bound.is_none()))
    }

    /// The next row of a run whose blocks hold one cell per row, and its
    /// cell (the usual state of a compacted store, or of overlapping files
    /// of such rows): `None` when the run is not such a run, is over, two
    /// files hold the next row, or the next row is past `upper` (then the
    /// run ends there); the general step ([`BlockRun::next_side`]) then
    /// ends or extends it.
    // The usual scanned row. Always inlined, as its callers up to the
    // region scanner's `next_row` are: as a call of its own (LLVM left it
    // one) it returned its row and cell through memory, a memcpy a row (87
    // more instructions a row of a full cached scan, callgrind).
    #[inline(always)]
    pub(super) fn next_lone_cell(
        &mut self,
        upper: &Bound<Vec<u8>>,
    ) -> Option<(BlockRow<'_>, BlockCell<'_>)> {
        if !self.lone_cells {
            return None;
        }
        let at = match self.sides.as_slice() {
            [side] if side.next < side.end => 0,
            [_] => return None,
            sides => next_of(sides)?,
        };
        let side = self.sides.get_mut(at)?;
        let row = side.next;
        if self.check_upper && !below_upper(side.block.row(row), upper) {
            // Past the scan's end: the run ends here.
            side.end = row;
            return None;
        }
        side.next += 1;
        stepped_row();
        let block_row = BlockRow::lone(&side.block, row);
        Some((block_row, block_row.cell(row)))
    }

    /// The side whose row comes next, going on into the next block of a
    /// side that read its block to the end when the run is unbounded;
    /// `None` when the run is over (a row two files hold, the end of a
    /// bounded run's block, a row past `upper`): the caller ends it.
    pub(super) fn next_side(
        &mut self,
        merge: &mut MergedSources,
        upper: &Bound<Vec<u8>>,
    ) -> Result<Option<usize>> {
        let at = loop {
            if let Some(at) = next_of(&self.sides) {
                break at;
            }
            if !self.extend(merge, upper)? {
                return Ok(None);
            }
        };
        if self.check_upper
            && self
                .sides
                .get(at)
                .is_some_and(|side| !below_upper(side.block.row(side.next), upper))
        {
            // Past the scan's end (the run's rows come in key order, so
            // every later one is too).
            return Ok(None);
        }
        Ok(Some(at))
    }

    /// Takes the next row of side `at` ([`BlockRun::next_side`]).
    #[inline]
    pub(super) fn take_row(&mut self, at: usize) -> Option<BlockRow<'_>> {
        let side = self.sides.get_mut(at)?;
        let row = side.next;
        side.next += 1;
        stepped_row();
        Some(BlockRow::whole(&side.block, row))
    }

    /// Skips, on every side, the rows that return nothing, after a row
    /// without a cell that may be returned; `next_passing_cell(block, from)`
    /// gives the first cell of `block` at or after cell `from` that may be
    /// returned (`None`: none; `Some(from)` when it cannot tell).
    pub(super) fn skip_rows_returning_nothing(
        &mut self,
        mut next_passing_cell: impl FnMut(BlockRef<'_>, usize) -> Option<usize>,
    ) {
        match self.sides.as_mut_slice() {
            [side] => side.next = side.next_passing_row(&mut next_passing_cell),
            sides => skip_to_passing_rows(sides, &mut next_passing_cell),
        }
    }

    /// Goes on with a run one of whose sides has read its block to the
    /// end: that side's cursor moves past the block into its file's next
    /// block (a level's into its next file) and the side reads on from
    /// there, so the run does not end at every block's end (with
    /// overlapping files, each run's end and restart went through the
    /// general path and the merge). Only for an unbounded run (no other
    /// source's rows to stop before) whose side ended at its block's end,
    /// not at another side's row or at a last row that may go on. `false`
    /// when the run cannot go on: the caller ends it; the side's cursor
    /// then already stands where it moved.
    fn extend(&mut self, merge: &mut MergedSources, upper: &Bound<Vec<u8>>) -> Result<bool> {
        if !self.unbounded {
            return Ok(false);
        }
        let Some(side) = self.sides.iter_mut().find(|side| side.next >= side.end) else {
            // Two files hold the next row: its cells need the merge.
            return Ok(false);
        };
        if side.end != side.block.rows() {
            return Ok(false);
        }
        self.moved += side.move_cursor(merge)?;
        // The cursor stands past the rows the side read: ending the run now
        // must not move it again.
        side.start_row = side.next;
        let Some(next) = merge.moved_on_block(side.source)? else {
            return Ok(false);
        };
        let (end, upper_inside) = run_end(next.block, next.row, None, upper);
        if end <= next.row {
            return Ok(false);
        }
        *side = RunSide::standing_at(&next, end);
        self.check_upper |= upper_inside;
        self.lone_cells = lone_cells(&self.sides);
        Ok(true)
    }

    /// Ends the run: its cursors move to the first rows it did not read,
    /// and the merge is ranked afresh.
    pub(super) fn end(self, merge: &mut MergedSources) -> Result<()> {
        let mut moved = self.moved;
        for side in &self.sides {
            moved += side.move_cursor(merge)?;
        }
        match self.sides.as_slice() {
            [_] => merge.sole_source_moved(moved),
            sides => {
                let sources: SmallVec<[usize; MAX_RUN_BLOCKS]> =
                    sides.iter().map(|side| side.source).collect();
                merge.sources_moved(&sources, moved)
            }
        }
    }
}

/// The side of `sides` whose row comes next; `None` when the run is over
/// (a side read up to its end) or two files hold the next row.
#[inline]
fn next_of(sides: &[RunSide]) -> Option<usize> {
    let (first, rest) = sides.split_first()?;
    if first.next >= first.end {
        return None;
    }
    if rest.is_empty() {
        // One block: no key to compare.
        return Some(0);
    }
    let mut best = 0;
    let mut best_row = first.block.row(first.next);
    for (i, side) in rest.iter().enumerate() {
        if side.next >= side.end {
            return None;
        }
        let row = side.block.row(side.next);
        match compare_bytes(row, best_row) {
            Ordering::Less => {
                best = i + 1;
                best_row = row;
            }
            Ordering::Greater => {}
            // Two files hold the row: its cells need the merge.
            Ordering::Equal => return None,
        }
    }
    Some(best)
}

/// True when every side's block holds one cell per row
/// ([`BlockRun::lone_cells`]).
fn lone_cells(sides: &[RunSide]) -> bool {
    sides.iter().all(|side| side.block.one_cell_per_row())
}

impl RunSide {
    /// A side from where a source's cursor stands (`at`), reading its
    /// block's rows up to `end`.
    fn standing_at(at: &RunBlock<'_>, end: usize) -> RunSide {
        RunSide {
            source: at.source,
            block: at.block.clone(),
            next: at.row,
            end,
            start_row: at.row,
            from_cell: at.cell,
        }
    }

    /// Moves the source's cursor to the first row the run did not read;
    /// returns the cells it moved past.
    fn move_cursor(&self, merge: &mut MergedSources) -> Result<usize> {
        if self.next == self.start_row {
            return Ok(0);
        }
        // Past the block's last row, every cell of the block was moved past.
        let moved = first_cell_of(&self.block, self.next) - self.from_cell;
        if let Some(cursor) = merge.file_cursor_at(self.source) {
            cursor.jump_to_row(self.next)?;
        }
        Ok(moved)
    }

    /// The first row at or after `next`, up to `end`, with a cell that may
    /// be returned.
    fn next_passing_row(
        &self,
        next_passing_cell: &mut impl FnMut(BlockRef<'_>, usize) -> Option<usize>,
    ) -> usize {
        let from = first_cell_of(&self.block, self.next);
        next_passing_cell(BlockRef::new(&self.block), from)
            .map_or(self.end, |i| self.block.row_of_cell(i))
            .clamp(self.next, self.end)
    }
}

/// Skips the rows of every side of a merged run that return nothing: each
/// side's first row (from its `next`) with a cell that may be returned (or
/// its end) is found; every row of any side before the smallest of those
/// rows' keys has no such cell in any of the files, so it returns nothing
/// whatever the others hold of it; a row at or past it may be in several
/// files and is left to the run.
fn skip_to_passing_rows(
    sides: &mut [RunSide],
    next_passing_cell: &mut impl FnMut(BlockRef<'_>, usize) -> Option<usize>,
) {
    let passing: SmallVec<[usize; MAX_RUN_BLOCKS]> = sides
        .iter()
        .map(|side| side.next_passing_row(next_passing_cell))
        .collect();
    // Each side bounds the skip: at its first passing row (rows before it
    // may be skipped), or, when it has none and its run reaches the end of
    // its block (a block that says its last row ends in it), at its last
    // row: what its file holds after that row is not known here, but that
    // row itself has no passing cell in this file.
    let bounds: SmallVec<[(usize, bool); MAX_RUN_BLOCKS]> = sides
        .iter()
        .zip(&passing)
        .map(|(side, &row)| {
            let rows = side.block.rows();
            if row < rows {
                (row, true)
            } else {
                (rows.saturating_sub(1), false)
            }
        })
        .collect();
    // The smallest bound; at equal rows a passing row wins (its row must
    // be read).
    let Some((key_block, key_row, key_passes)) = sides
        .iter()
        .zip(&bounds)
        .min_by(|(a, (a_row, a_passes)), (b, (b_row, b_passes))| {
            compare_bytes(a.block.row(*a_row), b.block.row(*b_row))
                .then_with(|| b_passes.cmp(a_passes))
        })
        .map(|(side, &(row, passes))| (side.block.clone(), row, passes))
    else {
        return;
    };
    let key = key_block.row(key_row);
    // Rows before the key have no passing cell in any file, and no file
    // holds them beyond its block (every bound is at or before its block's
    // last row). When the key is a last row without a passing cell, and no
    // file has a passing cell of it (a passing row at it would have won),
    // it is skipped too.
    let skipped = if key_passes {
        Ordering::Less
    } else {
        Ordering::Equal
    };
    for (side, &row) in sides.iter_mut().zip(&passing) {
        side.next = side
            .block
            .first_row_where(side.next, |r| compare_bytes(r, key) > skipped)
            .min(row);
    }
}

/// Where rows that `block`'s cursor alone holds stop, from row `from` on:
/// the block's end, or its last row when that row may go on in the next
/// block ([`DataBlock::whole_rows`]), or the first row at or after
/// `next_row` (the runner-up's: another source holds it); and whether the
/// scan's upper bound `upper` falls before that end. The bound is not
/// searched for: a block found by a seek is cold in the CPU caches, and a
/// binary search misses once per halving, where the run reads its rows in
/// order anyway; a run whose bound falls inside it checks each row as it
/// reaches it ([`BlockRun::check_upper`]).
pub(super) fn run_end(
    block: &DataBlock,
    from: usize,
    next_row: Option<&[u8]>,
    upper: &Bound<Vec<u8>>,
) -> (usize, bool) {
    let mut end = block.whole_rows();
    if from >= end
        || next_row.is_some_and(|next| compare_bytes(block.row(from), next) != Ordering::Less)
        || !below_upper(block.row(from), upper)
    {
        // No row to run over (a get, a run's last row): one comparison
        // instead of the search below.
        return (from, false);
    }
    if let Some(next) = next_row {
        end = end.min(block.first_row_where(from, |r| compare_bytes(r, next) != Ordering::Less));
    }
    let upper_inside = end > from + 1 && !below_upper(block.row(end - 1), upper);
    (end, upper_inside)
}

#[cfg(test)]
mod tests {
    //! The block run on its own: HFiles written here, merged by
    //! [`MergedRows`](super::super::rows::MergedRows) and read row by row as
    //! a forward scan of one store reads them, against the same files merged
    //! cell by cell by [`MergedSources`].

    use std::ops::Bound;
    use std::sync::Arc;

    use super::super::merge::MergedSources;
    use super::super::rows::{MergedRows, RowOutcome};
    use super::super::source::{FileSource, Source};
    use super::{below_upper, reset_run_rows_stepped, run_rows_stepped, runs_begun};
    use crate::cell::{
        CellKind, OwnedCellFields as Owned, SeekKey, borrowed_fields, compare_keys, owned_fields,
    };
    use crate::hfile::cache::BlockCache;
    use crate::hfile::reader::HFileReader;
    use crate::hfile::writer::{HFileWriter, WriterOptions};
    use crate::io::{Backend, Io};
    use crate::options::{BloomType, Compression};

    /// A row and its visible cells, in store order.
    type Row = (Vec<u8>, Vec<Owned>);

    fn key(i: usize) -> Vec<u8> {
        format!("row{i:06}").into_bytes()
    }

    fn put(row: usize, qualifier: &str, timestamp: i64, sequence: u64) -> Owned {
        let value = format!("v{row}-{qualifier}-{timestamp}-{sequence}").into_bytes();
        (
            key(row),
            qualifier.as_bytes().to_vec(),
            timestamp,
            CellKind::Put,
            sequence,
            value,
        )
    }

    fn marker(row: usize, qualifier: &str, timestamp: i64, kind: CellKind, sequence: u64) -> Owned {
        (
            key(row),
            qualifier.as_bytes().to_vec(),
            timestamp,
            kind,
            sequence,
            Vec::new(),
        )
    }

    /// Files of sorted cells, in blocks of about `block_size` bytes.
    struct Files {
        /// Holds the files until the test ends.
        _dir: tempfile::TempDir,
        readers: Vec<Arc<HFileReader>>,
    }

    impl Files {
        fn write(files: Vec<Vec<Owned>>, block_size: usize) -> Files {
            let dir = tempfile::tempdir().unwrap();
            let io = Io::with_backend(Backend::Sync);
            let cache = Arc::new(BlockCache::new(64 << 20));
            let readers = files
                .into_iter()
                .enumerate()
                .map(|(id, mut cells)| {
                    cells.sort_by(|a, b| {
                        compare_keys(borrowed_fields(a).tuple(), borrowed_fields(b).tuple())
                    });
                    let path = dir.path().join(format!("{id}.hfile"));
                    let options = WriterOptions {
                        family: b"f".to_vec(),
                        block_size,
                        compression: Compression::None,
                        bloom: BloomType::None,
                        bloom_bits_per_key: 10,
                        bulk: None,
                        budget: None,
                    };
                    let mut writer = HFileWriter::create(io.clone(), &path, options).unwrap();
                    for cell in &cells {
                        writer.add(&borrowed_fields(cell)).unwrap();
                    }
                    writer.finish(id as u64).unwrap();
                    let reader =
                        HFileReader::open(io.clone(), &path, id as u64, cache.clone(), true);
                    Arc::new(reader.unwrap())
                })
                .collect();
            Files { _dir: dir, readers }
        }

        fn sources(&self) -> Vec<Source> {
            self.readers
                .iter()
                .map(|reader| FileSource::new(reader.clone(), None).into())
                .collect()
        }

        /// The visible cells from `start` on, merged cell by cell, grouped
        /// by row, up to `upper`.
        fn merged_cell_by_cell(&self, read_point: u64, upper: &Bound<Vec<u8>>) -> Vec<Row> {
            let mut merge = MergedSources::new(self.sources(), read_point);
            merge.seek(&SeekKey::row_start(b"")).unwrap();
            let mut rows: Vec<Row> = Vec::new();
            while let Some(cell) = merge.current() {
                if !below_upper(cell.row, upper) {
                    break;
                }
                match rows.last_mut() {
                    Some((row, cells)) if row.as_slice() == cell.row => {
                        cells.push(owned_fields(&cell))
                    }
                    _ => rows.push((cell.row.to_vec(), vec![owned_fields(&cell)])),
                }
                merge.advance().unwrap();
            }
            rows
        }
    }

    /// What a row passes: `None` passes every cell (no cell gate);
    /// otherwise a cell passes when its value ends in the byte.
    type Passing = Option<u8>;

    fn passes(passing: Passing, value: &[u8]) -> bool {
        passing.is_none_or(|last| value.last() == Some(&last))
    }

    /// Reads every row before `upper` as a forward scan of one store does:
    /// a run's lone cells first, then a run's rows, else the row the merge
    /// stands on, lent from a block (and going on as a run) or from the
    /// merge. Rows without a visible cell (or, with `passing`, a passing
    /// one) are left out; a run row or lent row without a passing cell
    /// skips what returns nothing, as the cell gate makes the scanner do.
    fn read_rows(rows: &mut MergedRows, upper: &Bound<Vec<u8>>, passing: Passing) -> Vec<Row> {
        let read_point = rows.read_point();
        let visible = |cell: &crate::cell::CellRef<'_>| cell.sequence <= read_point;
        let mut out: Vec<Row> = Vec::new();
        let mut keep = |row: &[u8], cells: Vec<Owned>| {
            if !cells.is_empty() {
                out.push((row.to_vec(), cells));
            }
        };
        let next_passing = |block: crate::iter::block_row::BlockRef<'_>, from: usize| {
            block
                .cells()
                .enumerate()
                .skip(from)
                .find(|(_, cell)| passes(passing, cell.value))
                .map(|(i, _)| i)
        };
        rows.seek(&SeekKey::row_start(b"")).unwrap();
        loop {
            if passing.is_none()
                && let Some((row, cell)) = rows.next_lone_cell(upper)
            {
                let cells = [cell.cell()]
                    .into_iter()
                    .filter(|c| visible(c))
                    .map(owned_fields);
                keep(row.key(), cells.collect());
                continue;
            }
            if let Some(row) = rows.next_run_row(upper).unwrap() {
                let cells = visible_cells(&row, read_point);
                let key = row.key().to_vec();
                if cells.iter().any(|c| passes(passing, &c.5)) {
                    keep(&key, cells);
                } else if passing.is_some() {
                    rows.skip_run_rows_returning_nothing(next_passing);
                }
                continue;
            }
            let Some(key) = rows.next_row_key().unwrap() else {
                break;
            };
            if !below_upper(key, upper) {
                break;
            }
            let key = key.to_vec();
            if let Some(row) = rows.lend_block_row(&key).unwrap() {
                let cells = visible_cells(&row, read_point);
                let outcome = if cells.iter().any(|c| passes(passing, &c.5)) {
                    keep(&key, cells);
                    RowOutcome::Read {
                        run_within: Some(upper),
                    }
                } else if passing.is_some() {
                    let after = row.cell_indexes().end;
                    RowOutcome::NothingPasses {
                        next_passing_cell: next_passing(row.block(), after),
                        run_within: Some(upper),
                    }
                } else {
                    RowOutcome::Read {
                        run_within: Some(upper),
                    }
                };
                rows.row_read(outcome).unwrap();
                continue;
            }
            let mut cells = rows.row_cells(&key).unwrap();
            let mut merged = Vec::new();
            while let Some(cell) = cells.current() {
                merged.push(owned_fields(&cell));
                cells.advance().unwrap();
            }
            if merged.iter().any(|c| passes(passing, &c.5)) {
                keep(&key, merged);
            }
        }
        out
    }

    /// The cells of a row lent from a block that are visible at
    /// `read_point`.
    fn visible_cells(row: &crate::iter::block_row::BlockRow<'_>, read_point: u64) -> Vec<Owned> {
        row.cells()
            .map(|cell| *cell.cell())
            .filter(|cell| cell.sequence <= read_point)
            .map(|cell| owned_fields(&cell))
            .collect()
    }

    fn scan(files: &Files, read_point: u64, upper: &Bound<Vec<u8>>, passing: Passing) -> Vec<Row> {
        let mut rows = MergedRows::new(files.sources(), read_point);
        read_rows(&mut rows, upper, passing)
    }

    /// `files` files whose rows interleave (row `i` is in file `i % files`),
    /// `columns` puts per row.
    fn interleaved(files: usize, rows: usize, columns: usize) -> Vec<Vec<Owned>> {
        let mut out = vec![Vec::new(); files];
        for row in 0..rows {
            for column in 0..columns {
                let qualifier = format!("q{column}");
                out[row % files].push(put(row, &qualifier, 1, row as u64 + 1));
            }
        }
        out
    }

    #[test]
    fn rows_of_interleaved_files_come_in_merge_order_from_runs() {
        for (files, columns) in [(1, 1), (2, 1), (3, 1), (4, 1), (3, 2), (5, 1)] {
            let rows = 3_000;
            let written = Files::write(interleaved(files, rows, columns), 512);
            reset_run_rows_stepped();
            let got = scan(&written, u64::MAX, &Bound::Unbounded, None);
            let stepped = run_rows_stepped();
            let runs = runs_begun();
            let want = written.merged_cell_by_cell(u64::MAX, &Bound::Unbounded);
            assert_eq!(got.len(), rows, "{files} files, {columns} columns");
            assert_eq!(got, want, "{files} files, {columns} columns");
            if cfg!(debug_assertions) && files <= 4 {
                // Nearly every row comes from a run; rows of one cell make
                // one run over every side, going on across block ends (a
                // row cut between blocks ends a run: the merge reads it).
                assert!(
                    stepped >= rows as u64 * 99 / 100,
                    "{files} files: {stepped} rows stepped"
                );
                assert!(columns > 1 || runs <= 2, "{files} files: {runs} runs");
            }
        }
    }

    #[test]
    fn deletes_and_versions_across_sides_go_through_the_merge_in_order() {
        // An older file of every row with two versions of `a` and one of
        // `b`; a newer file hiding every 7th row's `a` with a column marker
        // and adding a newer `b` to every 11th row (rows two files hold);
        // a third file of rows of its own between them.
        let rows = 1_500;
        let mut older = Vec::new();
        let mut newer = Vec::new();
        let mut own = Vec::new();
        for row in 0..rows {
            if row % 5 == 4 {
                own.push(put(row, "a", 3, 5_000 + row as u64));
                continue;
            }
            older.push(put(row, "a", 1, 10));
            older.push(put(row, "a", 2, 11));
            older.push(put(row, "b", 1, 12));
            if row % 7 == 0 {
                newer.push(marker(row, "a", 2, CellKind::DeleteColumn, 20));
            }
            if row % 11 == 0 {
                newer.push(put(row, "b", 5, 21));
            }
        }
        let written = Files::write(vec![older, newer, own], 400);
        for read_point in [u64::MAX, 20, 15] {
            let got = scan(&written, read_point, &Bound::Unbounded, None);
            let want = written.merged_cell_by_cell(read_point, &Bound::Unbounded);
            assert_eq!(got, want, "read point {read_point}");
        }
        // A row two files hold has both files' cells, newest first within
        // each column.
        let got = scan(&written, u64::MAX, &Bound::Unbounded, None);
        let shared = got.iter().find(|(row, _)| *row == key(77)).unwrap();
        let kinds: Vec<_> = shared.1.iter().map(|c| (c.1.clone(), c.2, c.3)).collect();
        assert_eq!(
            kinds,
            vec![
                (b"a".to_vec(), 2, CellKind::DeleteColumn),
                (b"a".to_vec(), 2, CellKind::Put),
                (b"a".to_vec(), 1, CellKind::Put),
                (b"b".to_vec(), 5, CellKind::Put),
                (b"b".to_vec(), 1, CellKind::Put),
            ]
        );
    }

    #[test]
    fn runs_stop_at_the_stop_row_and_leave_the_merge_there() {
        let rows = 2_000;
        for files in [1, 3] {
            let written = Files::write(interleaved(files, rows, 1), 512);
            for stop in [0, 1, 499, 500, 1_234, 1_999, 2_000] {
                for upper in [Bound::Excluded(key(stop)), Bound::Included(key(stop))] {
                    let mut merged = MergedRows::new(written.sources(), u64::MAX);
                    let got = read_rows(&mut merged, &upper, None);
                    let want = written.merged_cell_by_cell(u64::MAX, &upper);
                    assert_eq!(got, want, "{files} files, stop {upper:?}");
                    let last = match upper {
                        Bound::Included(_) => (stop + 1).min(rows),
                        _ => stop,
                    };
                    assert_eq!(got.len(), last, "{files} files, stop {upper:?}");
                    // The run ended where the scan stopped: the merge stands
                    // on the first row past the bound.
                    let next = merged.next_row_key().unwrap().map(<[u8]>::to_vec);
                    assert_eq!(next, (last < rows).then(|| key(last)), "{upper:?}");
                }
            }
        }
    }

    #[test]
    fn rows_returning_nothing_are_skipped_on_every_side() {
        // Values end in the row number's last digit; only rows ending in 7
        // pass, and only every 37th of those is written with that value.
        let rows = 6_000;
        let mut files = interleaved(3, rows, 1);
        for file in &mut files {
            for cell in file.iter_mut() {
                let row: usize = std::str::from_utf8(&cell.0[3..]).unwrap().parse().unwrap();
                let last = if row % 370 == 7 { b'7' } else { b'0' };
                cell.5.push(last);
            }
        }
        let written = Files::write(files, 512);
        reset_run_rows_stepped();
        let got = scan(&written, u64::MAX, &Bound::Unbounded, Some(b'7'));
        let stepped = run_rows_stepped();
        let want: Vec<Row> = written
            .merged_cell_by_cell(u64::MAX, &Bound::Unbounded)
            .into_iter()
            .filter(|(_, cells)| cells.iter().any(|c| passes(Some(b'7'), &c.5)))
            .collect();
        assert_eq!(got.len(), rows.div_ceil(370));
        assert_eq!(got, want);
        if cfg!(debug_assertions) {
            assert!(
                stepped < rows as u64 / 10,
                "{stepped} of {rows} rows stepped through"
            );
        }
    }
}
