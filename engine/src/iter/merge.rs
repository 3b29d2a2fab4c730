//! Merging the sources of one store into one stream, at a read point.

use std::cmp::Ordering;

use smallvec::SmallVec;

use super::run::{BlockRunSources, MAX_RUN_BLOCKS, RunBlock};
use super::source::{CellSource, Source};
use crate::cell::SeekKey;
use crate::cell::{CellRef, compare_keys};
use crate::error::Result;
use crate::hfile::reader::{FileCursor, HFileReader};
use std::sync::Arc;

/// The sources of one store merged in store order, showing only cells whose
/// sequence is at most the read point.
///
/// The merger keeps the index of the source holding the smallest current cell
/// (the winner) apart from the others, which form a binary min-heap by their
/// current cells: the heap's top is the runner-up, the bound the winner may
/// advance to without losing its place. Reading the current cell costs no
/// comparison; advancing costs one while the winner stays ahead (the usual
/// case: after a compaction one source holds long runs of consecutive
/// cells); a change of winner swaps it with the top and sifts it down, about
/// two comparisons per level of the heap (RocksDB's merging iterator keeps
/// its heap the same way). A store has a handful of sources: its memstores,
/// its L0 files, one run per deeper level.
pub(crate) struct MergedSources {
    sources: Vec<Source>,
    read_point: u64,
    /// Some source may hold a family delete marker.
    family_markers: bool,
    /// The source holding the smallest current cell; `None` when every
    /// source is exhausted.
    winner: Option<usize>,
    /// Every other source with a current cell, as a binary min-heap by
    /// that cell (`heap[0]` is the runner-up); never holds the winner or an
    /// exhausted source. Inline up to [`INLINE_SOURCES`] (a get merges one
    /// or two sources and should not allocate for it).
    heap: SmallVec<[usize; INLINE_SOURCES]>,
}

/// Sources a merge heaps without allocating.
const INLINE_SOURCES: usize = 8;

/// Debug builds count the key comparisons the mergers of a thread make and
/// the cells they move past, so that a test can bound comparisons per cell.
#[cfg(debug_assertions)]
mod debug_counts {
    use std::cell::Cell;

    thread_local! {
        pub(super) static COMPARISONS: Cell<u64> = const { Cell::new(0) };
        pub(super) static CELLS: Cell<u64> = const { Cell::new(0) };
    }

    pub(super) fn add(counter: &'static std::thread::LocalKey<Cell<u64>>) {
        counter.with(|c| c.set(c.get() + 1));
    }
}

/// `(key comparisons, cells advanced past)` of this thread's mergers since
/// the last [`reset_merge_counts`] (debug builds; zeros in release builds).
#[cfg(test)]
pub(crate) fn merge_counts() -> (u64, u64) {
    #[cfg(debug_assertions)]
    {
        (
            debug_counts::COMPARISONS.with(std::cell::Cell::get),
            debug_counts::CELLS.with(std::cell::Cell::get),
        )
    }
    #[cfg(not(debug_assertions))]
    {
        (0, 0)
    }
}

/// Zeroes this thread's merge counts.
#[cfg(test)]
pub(crate) fn reset_merge_counts() {
    #[cfg(debug_assertions)]
    {
        debug_counts::COMPARISONS.with(|c| c.set(0));
        debug_counts::CELLS.with(|c| c.set(0));
    }
}

/// Compares two cells' keys (counted in debug builds).
fn less(a: &CellRef<'_>, b: &CellRef<'_>) -> bool {
    #[cfg(debug_assertions)]
    debug_counts::add(&debug_counts::COMPARISONS);
    compare_keys(a.tuple(), b.tuple()) == Ordering::Less
}

impl MergedSources {
    pub(crate) fn new(sources: Vec<Source>, read_point: u64) -> Self {
        MergedSources {
            family_markers: sources.iter().any(|s| s.may_hold_family_markers()),
            sources,
            read_point,
            winner: None,
            heap: SmallVec::new(),
        }
    }

    /// False when no source holds a family delete marker.
    pub(crate) fn may_hold_family_markers(&self) -> bool {
        self.family_markers
    }

    fn skip_invisible(source: &mut Source, read_point: u64) -> Result<()> {
        while source.current().is_some_and(|c| c.sequence > read_point) {
            source.advance()?;
        }
        Ok(())
    }

    /// Positions every source at the first visible cell with key >= `key`.
    pub(crate) fn seek(&mut self, key: &SeekKey<'_>) -> Result<()> {
        for source in &mut self.sources {
            source.seek(key)?;
            Self::skip_invisible(source, self.read_point)?;
        }
        self.rank();
        Ok(())
    }

    /// Moves every source that is before `key` to its first visible cell
    /// with key >= `key`; sources already at or past it stay (a seek would
    /// land them where they are, at the cost of a descent).
    pub(crate) fn seek_forward(&mut self, key: &SeekKey<'_>) -> Result<()> {
        let target = key.tuple();
        for source in &mut self.sources {
            let behind = source
                .current()
                .is_some_and(|c| compare_keys(c.tuple(), target) == Ordering::Less);
            if behind {
                source.seek(key)?;
                Self::skip_invisible(source, self.read_point)?;
            }
        }
        self.rank();
        Ok(())
    }

    /// Finds the winner among every source's current cell and heaps the
    /// others.
    fn rank(&mut self) {
        self.heap.clear();
        self.winner = None;
        for (i, source) in self.sources.iter().enumerate() {
            if source.current().is_some() {
                self.heap.push(i);
            }
        }
        for at in (0..self.heap.len() / 2).rev() {
            sift_down(&mut self.heap, &self.sources, at);
        }
        self.winner = pop_top(&mut self.heap, &self.sources);
    }

    /// After the winner moved forward: it stays the winner while its cell
    /// is below the runner-up's (one comparison), else it changes places
    /// with the runner-up (or, exhausted, leaves the merge).
    fn restore_after_winner_moved(&mut self) {
        let Some(winner) = self.winner else {
            return;
        };
        let winner_cell = self.sources.get(winner).and_then(Source::current);
        if winner_cell.is_none() {
            self.winner = pop_top(&mut self.heap, &self.sources);
            return;
        }
        let Some(&top) = self.heap.first() else {
            return;
        };
        if source_less(&self.sources, winner, top) {
            return;
        }
        self.winner = Some(top);
        if let Some(slot) = self.heap.first_mut() {
            *slot = winner;
        }
        sift_down(&mut self.heap, &self.sources, 0);
    }

    /// The smallest visible cell at the position.
    pub(crate) fn current(&self) -> Option<CellRef<'_>> {
        self.sources.get(self.winner?)?.current()
    }

    /// Moves past the smallest cell.
    pub(crate) fn advance(&mut self) -> Result<()> {
        let Some(winner) = self.winner else {
            return Ok(());
        };
        if let Some(source) = self.sources.get_mut(winner) {
            source.advance()?;
            Self::skip_invisible(source, self.read_point)?;
        }
        #[cfg(debug_assertions)]
        debug_counts::add(&debug_counts::CELLS);
        self.restore_after_winner_moved();
        Ok(())
    }

    /// The files the sources read (each file source's file; not levels).
    pub(crate) fn files(&self) -> impl Iterator<Item = &Arc<HFileReader>> {
        self.sources.iter().filter_map(Source::file)
    }

    /// The read point: cells with a larger sequence are not visible.
    pub(crate) fn read_point(&self) -> u64 {
        self.read_point
    }

    /// The index of the winning source (the one holding the smallest
    /// current cell).
    #[inline]
    pub(super) fn winner(&self) -> Option<usize> {
        self.winner
    }

    /// The row of the runner-up (the smallest current cell of every source
    /// but the winner); `None` when no other source has cells left. Every
    /// row before it is the winner's alone.
    #[inline]
    pub(super) fn runner_up_row(&self) -> Option<&[u8]> {
        let runner_up = *self.heap.first()?;
        Some(self.sources.get(runner_up)?.current()?.row)
    }

    /// Source `source`'s file cursor, if it reads a file.
    #[inline]
    pub(super) fn file_cursor(&self, source: usize) -> Option<&FileCursor> {
        self.sources.get(source)?.file_cursor()
    }

    /// [`MergedSources::file_cursor`], to move past cells only it holds;
    /// the mover then restores the ranking
    /// ([`MergedSources::sole_source_moved`],
    /// [`MergedSources::sources_moved`]).
    pub(super) fn file_cursor_at(&mut self, source: usize) -> Option<&mut FileCursor> {
        self.sources.get_mut(source)?.file_cursor_mut()
    }

    /// The sources other than the winner that read a file and stand inside
    /// a cached block (not on a last row that may go on in the next
    /// block), at most [`MAX_RUN_BLOCKS`] - 1 of them, and the smallest row
    /// of every other source (`None` when none has cells left). Rows of the
    /// winner's block and of those blocks before that row are theirs alone:
    /// a caller can merge them by row key straight from the blocks
    /// (overlapping files, rows alternating between them), then call
    /// [`MergedSources::sources_moved`]. `None` when no source qualifies.
    pub(super) fn block_run_sources(&self) -> Option<BlockRunSources<'_>> {
        let mut blocks = SmallVec::new();
        let mut bound: Option<&[u8]> = None;
        for &source in &self.heap {
            let Some(current) = self.sources.get(source).and_then(Source::current) else {
                continue;
            };
            let in_block = self
                .sources
                .get(source)
                .and_then(Source::file_cursor)
                // A cursor that skips rows its gate rejects does not hold
                // every row of its block.
                .filter(|cursor| !cursor.filters_rows())
                .and_then(FileCursor::rest_of_row_in_block);
            match in_block {
                Some((block, row, cells)) if blocks.len() + 1 < MAX_RUN_BLOCKS => {
                    blocks.push(RunBlock {
                        source,
                        block,
                        row,
                        cell: cells.start,
                    });
                }
                _ => {
                    if bound.is_none_or(|b| current.row < b) {
                        bound = Some(current.row);
                    }
                }
            }
        }
        if blocks.is_empty() {
            return None;
        }
        Some(BlockRunSources { blocks, bound })
    }

    /// Where source `source` stands after the caller moved its file cursor
    /// past the last row of its block (a block run read every row of it):
    /// a level's cursor goes on to the level's next file and invisible
    /// cells are skipped, as [`MergedSources::sources_moved`] would, without
    /// ranking the sources (the run goes on; its end ranks them). Returns
    /// the cached block, row and cell the cursor then stands at when that
    /// row ends in the block (`None`: the source has no more cells, stands
    /// on a last row that may go on, or filters rows).
    pub(super) fn moved_on_block(&mut self, source: usize) -> Result<Option<RunBlock<'_>>> {
        let Some(moved) = self.sources.get_mut(source) else {
            return Ok(None);
        };
        moved.cursor_moved()?;
        Self::skip_invisible(moved, self.read_point)?;
        Ok(moved
            .file_cursor()
            .filter(|cursor| !cursor.filters_rows())
            .and_then(FileCursor::rest_of_row_in_block)
            .map(|(block, row, cells)| RunBlock {
                source,
                block,
                row,
                cell: cells.start,
            }))
    }

    /// Restores the merge's invariants after the caller moved the file
    /// cursors of sources `moved` forward (past `cells` cells in all) over
    /// rows no other source holds: ranks every source afresh.
    pub(super) fn sources_moved(&mut self, moved: &[usize], cells: usize) -> Result<()> {
        #[cfg(debug_assertions)]
        for _ in 0..cells {
            debug_counts::add(&debug_counts::CELLS);
        }
        #[cfg(not(debug_assertions))]
        let _ = cells;
        for &source in moved {
            if let Some(source) = self.sources.get_mut(source) {
                source.cursor_moved()?;
                Self::skip_invisible(source, self.read_point)?;
            }
        }
        self.rank();
        Ok(())
    }

    /// Restores the merge's invariants after the caller moved the winner's
    /// file cursor forward past `cells` cells over rows no other source
    /// holds.
    pub(super) fn sole_source_moved(&mut self, cells: usize) -> Result<()> {
        #[cfg(debug_assertions)]
        for _ in 0..cells {
            debug_counts::add(&debug_counts::CELLS);
        }
        #[cfg(not(debug_assertions))]
        let _ = cells;
        let Some(winner) = self.winner else {
            return Ok(());
        };
        if let Some(source) = self.sources.get_mut(winner) {
            source.cursor_moved()?;
            Self::skip_invisible(source, self.read_point)?;
        }
        self.restore_after_winner_moved();
        Ok(())
    }

    /// The largest row with a cell (visible or not) before `bound`
    /// (`None` = after every row). Leaves the sources positioned anywhere;
    /// call [`MergedSources::seek`] before reading cells again.
    pub(crate) fn last_row_before(&mut self, bound: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        let mut best: Option<Vec<u8>> = None;
        for source in &mut self.sources {
            match bound {
                Some(row) => source.seek_before(&SeekKey::row_start(row))?,
                None => source.seek_to_last()?,
            }
            if let Some(cell) = source.current()
                && best.as_deref().is_none_or(|b| cell.row > b)
            {
                best = Some(cell.row.to_vec());
            }
        }
        // The sources are positioned anywhere: nothing is current until the
        // next seek ranks them again.
        self.winner = None;
        self.heap.clear();
        Ok(best)
    }
}

/// True when source `a`'s current cell sorts before source `b`'s (an
/// exhausted source sorts after every cell).
fn source_less(sources: &[Source], a: usize, b: usize) -> bool {
    match (
        sources.get(a).and_then(Source::current),
        sources.get(b).and_then(Source::current),
    ) {
        (Some(x), Some(y)) => less(&x, &y),
        (Some(_), None) => true,
        _ => false,
    }
}

/// Restores the heap order of `heap` below slot `at`.
fn sift_down(heap: &mut [usize], sources: &[Source], mut at: usize) {
    loop {
        let left = 2 * at + 1;
        let Some(&left_source) = heap.get(left) else {
            return;
        };
        let (child, child_source) = match heap.get(left + 1) {
            Some(&right_source) if source_less(sources, right_source, left_source) => {
                (left + 1, right_source)
            }
            _ => (left, left_source),
        };
        let Some(&parent_source) = heap.get(at) else {
            return;
        };
        if !source_less(sources, child_source, parent_source) {
            return;
        }
        heap.swap(at, child);
        at = child;
    }
}

/// Takes the top of `heap` (the source with the smallest current cell).
fn pop_top(heap: &mut SmallVec<[usize; INLINE_SOURCES]>, sources: &[Source]) -> Option<usize> {
    if heap.is_empty() {
        return None;
    }
    let top = heap.swap_remove(0);
    sift_down(heap, sources, 0);
    Some(top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Db, DbOptions, Durability, FamilyDescriptor, Put, Scan, TableDescriptor};

    /// A table of `rows` rows compacted into one sorted run, then every
    /// `update_every`-th row written again (into the memstore) when that is
    /// not zero.
    fn compacted_table(dir: &std::path::Path, rows: usize, update_every: usize) -> crate::Table {
        compacted_table_with(dir, rows, update_every, DbOptions::default()).1
    }

    /// Table `t` of one family `f`, without a WAL, in a database opened in
    /// `dir` with `options`.
    fn table_in(dir: &std::path::Path, options: DbOptions) -> (Db, crate::Table) {
        let db = Db::open(dir, options).unwrap();
        let table = db
            .create_table(
                TableDescriptor::new("t")
                    .family(FamilyDescriptor::new("f"))
                    .durability(Durability::SkipWal),
            )
            .unwrap();
        (db, table)
    }

    /// [`compacted_table`] in a database opened with `options`.
    fn compacted_table_with(
        dir: &std::path::Path,
        rows: usize,
        update_every: usize,
        options: DbOptions,
    ) -> (Db, crate::Table) {
        let (db, table) = table_in(dir, options);
        let puts: Vec<Put> = (0..rows)
            .map(|i| Put::new(format!("row{i:06}")).add("f", "q", format!("v{i}")))
            .collect();
        table.put_many(&puts).unwrap();
        table.flush().unwrap();
        table.major_compact().unwrap();
        if update_every > 0 {
            let updates: Vec<Put> = (0..rows)
                .step_by(update_every)
                .map(|i| Put::new(format!("row{i:06}")).add("f", "q", "new"))
                .collect();
            table.put_many(&updates).unwrap();
        }
        (db, table)
    }

    /// `files` flushed files whose rows interleave (row `i` is in file
    /// `i % files`), every one in L0 (compaction held off), so a full scan
    /// changes winner at nearly every cell; a last write of every
    /// `last_every`-th row ends in the memstore (none when it is 0).
    fn interleaved_table(
        dir: &std::path::Path,
        files: usize,
        rows: usize,
        last_every: usize,
    ) -> (Db, crate::Table) {
        interleaved_padded_table(dir, files, rows, last_every, 0)
    }

    /// [`interleaved_table`] with `pad` filler bytes after each file's
    /// values (more blocks per file).
    fn interleaved_padded_table(
        dir: &std::path::Path,
        files: usize,
        rows: usize,
        last_every: usize,
        pad: usize,
    ) -> (Db, crate::Table) {
        let options = DbOptions {
            l0_compaction_trigger: 64,
            l0_slowdown_files: 100,
            l0_stop_files: 200,
            ..DbOptions::default()
        };
        let (db, table) = table_in(dir, options);
        for file in 0..files {
            let puts: Vec<Put> = (0..rows)
                .filter(|i| i % files == file)
                .map(|i| {
                    let value = format!("v{i}{}", "-".repeat(pad));
                    Put::new(format!("row{i:06}")).add("f", "q", value)
                })
                .collect();
            table.put_many(&puts).unwrap();
            table.flush().unwrap();
        }
        let last: Vec<Put> = (0..rows)
            .step_by(last_every.max(1))
            .take(if last_every == 0 { 0 } else { rows })
            .map(|i| Put::new(format!("row{i:06}")).add("f", "q", format!("w{i}")))
            .collect();
        table.put_many(&last).unwrap();
        (db, table)
    }

    #[test]
    fn many_sources_merge_in_order_with_a_heap() {
        let dir = tempfile::tempdir().unwrap();
        let rows = 4_000;
        let (_db, table) = interleaved_table(dir.path(), 8, rows, 10);
        reset_merge_counts();
        let got: Vec<_> = table
            .scan(&Scan::new())
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        let (comparisons, cells) = merge_counts();
        assert_eq!(got.len(), rows);
        for (i, row) in got.iter().enumerate() {
            assert_eq!(row.row, format!("row{i:06}").into_bytes());
            let want = if i % 10 == 0 {
                format!("w{i}")
            } else {
                format!("v{i}")
            };
            assert_eq!(row.cells.len(), 1);
            assert_eq!(row.cells[0].value, want.into_bytes());
        }
        #[cfg(debug_assertions)]
        {
            // Nine sources; a change of winner sifts down a heap of eight
            // (three levels, at most two comparisons each): a linear pass
            // over the sources would take eight.
            assert!(cells > 0);
            let per_cell = comparisons as f64 / cells as f64;
            assert!(per_cell <= 6.0, "{per_cell} comparisons per cell");
        }
        let _ = (comparisons, cells);
    }

    #[test]
    #[cfg(debug_assertions)]
    fn interleaved_files_are_merged_a_block_run_at_a_time() {
        // Rows alternate between files: merging cell by cell changes winner
        // at every row (at least one comparison per cell); runs over the
        // files' blocks compare row keys outside the merge and rank it once
        // per run.
        let rows = 20_000;
        for files in [2, 3, 4] {
            let dir = tempfile::tempdir().unwrap();
            let (_db, table) = interleaved_table(dir.path(), files, rows, 0);
            let per_cell = comparisons_per_cell(&table);
            assert!(
                per_cell <= 0.3,
                "{files} interleaved files: {per_cell} comparisons per cell"
            );
            let got: Vec<_> = table
                .scan(&Scan::new())
                .unwrap()
                .map(|r| r.unwrap())
                .collect();
            assert_eq!(got.len(), rows);
            for (i, row) in got.iter().enumerate() {
                assert_eq!(row.row, format!("row{i:06}").into_bytes());
            }
        }
    }

    #[test]
    #[cfg(debug_assertions)]
    fn a_selective_value_filter_over_interleaved_files_skips_failing_rows_by_the_block() {
        // Rows alternate between three files; the filter passes 11 of
        // 20,000 rows (values v1999 and v19990..v19999). Runs over the
        // files' blocks jump every side past the rows no file has a
        // passing cell of, a block at a time: the rows they step through
        // are a small part of the table.
        let rows = 20_000;
        let dir = tempfile::tempdir().unwrap();
        let (_db, table) = interleaved_table(dir.path(), 3, rows, 0);
        let scan = Scan::new()
            .filter_string("ValueFilter(=, 'binaryprefix:v1999')")
            .unwrap();
        crate::iter::run::reset_run_rows_stepped();
        let got: Vec<_> = table.scan(&scan).unwrap().map(|r| r.unwrap()).collect();
        let stepped = crate::iter::run::run_rows_stepped();
        let want: Vec<Vec<u8>> = std::iter::once(1999)
            .chain(19_990..20_000)
            .map(|i| format!("row{i:06}").into_bytes())
            .collect();
        assert_eq!(got.iter().map(|r| r.row.clone()).collect::<Vec<_>>(), want);
        assert!(
            stepped < rows as u64 / 10,
            "block runs stepped through {stepped} of {rows} rows"
        );
    }

    fn row_keys(table: &crate::Table, scan: &Scan) -> Vec<Vec<u8>> {
        table.scan(scan).unwrap().map(|r| r.unwrap().row).collect()
    }

    fn keys_of(rows: std::ops::Range<usize>) -> Vec<Vec<u8>> {
        rows.map(|i| format!("row{i:06}").into_bytes()).collect()
    }

    #[test]
    #[cfg(debug_assertions)]
    fn block_runs_go_on_across_block_ends() {
        // Three interleaved files, 20,000 rows of 100-byte values (about 50
        // blocks in each file): with no other source, one run reads the
        // whole table, its sides moving on from block to block; scans
        // ending inside a later block stop at their end.
        let rows = 20_000;
        let dir = tempfile::tempdir().unwrap();
        let (_db, table) = interleaved_padded_table(dir.path(), 3, rows, 0, 100);
        crate::iter::run::reset_run_rows_stepped();
        assert_eq!(row_keys(&table, &Scan::new()), keys_of(0..rows));
        let runs = crate::iter::run::runs_begun();
        assert!(runs <= 2, "{runs} runs for one unbounded scan");
        for (start, stop) in [(0, 7_777), (1_234, 1_235), (5_000, 15_001), (19_990, rows)] {
            let scan = Scan::new()
                .start(format!("row{start:06}"))
                .stop(format!("row{stop:06}"));
            assert_eq!(row_keys(&table, &scan), keys_of(start..stop));
        }
        let limited = Scan::new().start("row000100").limit(5_000);
        assert_eq!(row_keys(&table, &limited), keys_of(100..5_100));

        // One compacted file: one run too.
        let dir = tempfile::tempdir().unwrap();
        let table = compacted_table(dir.path(), rows, 0);
        crate::iter::run::reset_run_rows_stepped();
        assert_eq!(row_keys(&table, &Scan::new()), keys_of(0..rows));
        let runs = crate::iter::run::runs_begun();
        assert!(runs <= 2, "{runs} runs for one compacted file");

        // Memstore rows (every 5,000th) bound the runs before the last of
        // them: those end at block ends again (about 45 of them), and the
        // rows still come out right.
        let dir = tempfile::tempdir().unwrap();
        let (_db, table) = interleaved_padded_table(dir.path(), 3, rows, 5_000, 100);
        crate::iter::run::reset_run_rows_stepped();
        assert_eq!(row_keys(&table, &Scan::new()), keys_of(0..rows));
        let runs = crate::iter::run::runs_begun();
        assert!(runs > 30, "{runs} runs");
    }

    #[test]
    fn runs_go_on_from_file_to_file_of_a_level() {
        // Small target files: the compacted level is many files, so a
        // run's side moves on from a file's last block to the next file.
        let dir = tempfile::tempdir().unwrap();
        let options = DbOptions {
            target_file_bytes: 64 << 10,
            ..DbOptions::default()
        };
        let rows = 20_000;
        let (db, table) = compacted_table_with(dir.path(), rows, 0, options);
        db.wait_for_background_work().unwrap();
        assert!(db.stats().files > 3, "the level is several files");
        assert_eq!(row_keys(&table, &Scan::new()), keys_of(0..rows));
        let scan = Scan::new().start("row003333").stop("row017777");
        assert_eq!(row_keys(&table, &scan), keys_of(3_333..17_777));
        // Newer writes past the scan's read point: a snapshot scan started
        // before them skips their cells as the run moves on.
        let mut cursor = table.scan_cursor(&Scan::new()).unwrap();
        let first = cursor.next_row().unwrap().map(|r| r.row().to_vec());
        assert_eq!(first, Some(b"row000000".to_vec()));
        let newer: Vec<Put> = (0..rows)
            .step_by(7)
            .map(|i| Put::new(format!("row{i:06}")).add("f", "q", "newer"))
            .collect();
        table.put_many(&newer).unwrap();
        table.flush().unwrap();
        let mut seen = 1;
        while let Some(row) = cursor.next_row().unwrap() {
            assert!(row.cells().all(|c| c.value() != b"newer"));
            seen += 1;
        }
        assert_eq!(seen, rows);
    }

    fn comparisons_per_cell(table: &crate::Table) -> f64 {
        reset_merge_counts();
        let rows = table.scan(&Scan::new()).unwrap().count();
        assert!(rows > 0);
        let (comparisons, cells) = merge_counts();
        assert!(cells > 0, "debug builds count cells");
        comparisons as f64 / cells as f64
    }

    #[test]
    #[cfg(debug_assertions)]
    fn a_scan_of_a_compacted_store_compares_about_once_per_cell() {
        let dir = tempfile::tempdir().unwrap();
        let table = compacted_table(dir.path(), 20_000, 0);
        let alone = comparisons_per_cell(&table);
        assert!(
            alone <= 0.01,
            "one sorted run: {alone} comparisons per cell"
        );
        drop(table);
        let dir = tempfile::tempdir().unwrap();
        let table = compacted_table(dir.path(), 20_000, 100);
        let with_memstore = comparisons_per_cell(&table);
        assert!(
            with_memstore <= 1.3,
            "one run and a sparse memstore: {with_memstore} comparisons per cell"
        );
    }
}
