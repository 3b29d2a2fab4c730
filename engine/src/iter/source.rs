//! Sources of cells in store order: memstores, single HFiles, and sorted
//! levels of HFiles.

use std::sync::Arc;

use crate::cell::CellRef;
use crate::cell::SeekKey;
use crate::error::Result;
use crate::gate::RowGate;
use crate::hfile::reader::{FileCursor, HFileReader, ReadAheadStop};
use crate::memstore::{Cursor, Memstore};

/// A positioned, forward-iterable run of cells in store order
/// (row ASC, qualifier ASC, timestamp DESC, kind DESC, sequence DESC).
pub(crate) trait CellSource: Send {
    /// Positions at the first cell with key >= `key`.
    fn seek(&mut self, key: &SeekKey<'_>) -> Result<()>;
    /// Positions at the last cell with key < `key`.
    fn seek_before(&mut self, key: &SeekKey<'_>) -> Result<()>;
    /// Positions at the last cell.
    fn seek_to_last(&mut self) -> Result<()>;
    /// Moves to the next cell.
    fn advance(&mut self) -> Result<()>;
    /// The cell at the position, or `None` when exhausted.
    fn current(&self) -> Option<CellRef<'_>>;
    /// False when the source certainly holds no family delete marker
    /// (which lets a read skip within the empty qualifier).
    fn may_hold_family_markers(&self) -> bool;
}

/// One source of a merge, dispatched statically: the merge calls these
/// methods for every cell, and a `match` the compiler can inline costs less
/// than a call through a vtable.
pub(crate) enum Source {
    Memstore(MemstoreSource),
    File(FileSource),
    Level(LevelSource),
}

macro_rules! each_source {
    ($source:expr, $inner:ident => $call:expr) => {
        match $source {
            Source::Memstore($inner) => $call,
            Source::File($inner) => $call,
            Source::Level($inner) => $call,
        }
    };
}

impl CellSource for Source {
    #[inline]
    fn seek(&mut self, key: &SeekKey<'_>) -> Result<()> {
        each_source!(self, s => s.seek(key))
    }

    #[inline]
    fn seek_before(&mut self, key: &SeekKey<'_>) -> Result<()> {
        each_source!(self, s => s.seek_before(key))
    }

    #[inline]
    fn seek_to_last(&mut self) -> Result<()> {
        each_source!(self, s => s.seek_to_last())
    }

    #[inline]
    fn advance(&mut self) -> Result<()> {
        each_source!(self, s => s.advance())
    }

    #[inline]
    fn current(&self) -> Option<CellRef<'_>> {
        each_source!(self, s => s.current())
    }

    #[inline]
    fn may_hold_family_markers(&self) -> bool {
        each_source!(self, s => s.may_hold_family_markers())
    }
}

impl Source {
    /// The file a single-file source reads.
    pub(crate) fn file(&self) -> Option<&Arc<HFileReader>> {
        match self {
            Source::File(file) => Some(file.cursor.reader()),
            Source::Memstore(_) | Source::Level(_) => None,
        }
    }

    /// The file cursor under the source, when it reads a file (alone or as
    /// part of a level) and is positioned in it.
    #[inline]
    pub(crate) fn file_cursor(&self) -> Option<&FileCursor> {
        match self {
            Source::Memstore(_) => None,
            Source::File(file) => Some(&file.cursor),
            Source::Level(level) => level.cursor.as_ref(),
        }
    }

    /// [`Source::file_cursor`], to move. A caller that moved it must call
    /// [`Source::cursor_moved`] before reading the source again.
    #[inline]
    pub(crate) fn file_cursor_mut(&mut self) -> Option<&mut FileCursor> {
        match self {
            Source::Memstore(_) => None,
            Source::File(file) => Some(&mut file.cursor),
            Source::Level(level) => level.cursor.as_mut(),
        }
    }

    /// Restores the source after its file cursor was moved directly: a
    /// level's cursor moved past the end of its file goes on to the level's
    /// next file (a file alone simply ends).
    #[inline]
    pub(crate) fn cursor_moved(&mut self) -> Result<()> {
        match self {
            Source::Level(level) => level.cursor_moved(),
            Source::Memstore(_) | Source::File(_) => Ok(()),
        }
    }
}

impl From<MemstoreSource> for Source {
    fn from(source: MemstoreSource) -> Source {
        Source::Memstore(source)
    }
}

impl From<FileSource> for Source {
    fn from(source: FileSource) -> Source {
        Source::File(source)
    }
}

impl From<LevelSource> for Source {
    fn from(source: LevelSource) -> Source {
        Source::Level(source)
    }
}

/// A memstore as a [`CellSource`]. With a gate, rows the gate's row-key
/// predicate rejects are stepped over (one scalar test per row).
pub(crate) struct MemstoreSource {
    cursor: Cursor,
    gate: Option<Arc<RowGate>>,
    /// The memstore held family markers when the read started.
    family_markers: bool,
    /// The cursor is at the first cell of its row, where a seek to the
    /// row's start would put it: such a seek is skipped (a get positions
    /// the source while choosing it, and the read's first seek is that).
    at_row_start: bool,
}

impl MemstoreSource {
    pub(crate) fn new(memstore: Arc<Memstore>) -> Self {
        MemstoreSource::with_gate(memstore, None)
    }

    pub(crate) fn with_gate(memstore: Arc<Memstore>, gate: Option<Arc<RowGate>>) -> Self {
        let gate = gate.filter(|g| g.row_filter);
        MemstoreSource {
            family_markers: memstore.holds_family_markers(),
            cursor: Cursor::new(memstore),
            gate,
            at_row_start: false,
        }
    }

    /// A source for a get of `row` (whose `split_block::row_hash` is
    /// `row_hash`), positioned at the row's first cell with one descent of
    /// the skiplist; `None` when the memstore does not hold the row (most
    /// often known from its row filter, without a descent) or the gate
    /// rejects it.
    pub(crate) fn for_row(
        memstore: &Arc<Memstore>,
        gate: Option<Arc<RowGate>>,
        row: &[u8],
        row_hash: u64,
    ) -> Option<Self> {
        if !memstore.may_hold_row(row_hash) {
            return None;
        }
        let gate = gate.filter(|g| g.row_filter);
        if gate.as_ref().is_some_and(|g| !g.row_passes(row)) {
            return None;
        }
        let cursor = Cursor::at_row(memstore, row)?;
        Some(MemstoreSource {
            family_markers: memstore.holds_family_markers(),
            cursor,
            gate,
            at_row_start: true,
        })
    }

    fn failing_row(&self) -> Option<Vec<u8>> {
        let gate = self.gate.as_ref()?;
        let cell = self.cursor.current()?;
        (!gate.row_passes(cell.row)).then(|| cell.row.to_vec())
    }

    /// Moves forward past rows the gate rejects.
    fn settle_forward(&mut self) {
        while let Some(mut row) = self.failing_row() {
            row.push(0);
            self.cursor.seek(&SeekKey::row_start(&row));
        }
    }

    /// Moves backward past rows the gate rejects.
    fn settle_backward(&mut self) {
        while let Some(row) = self.failing_row() {
            self.cursor.seek_before(&SeekKey::row_start(&row));
        }
    }
}

impl CellSource for MemstoreSource {
    fn seek(&mut self, key: &SeekKey<'_>) -> Result<()> {
        if std::mem::take(&mut self.at_row_start)
            && key.is_row_start()
            && self.cursor.current().is_some_and(|c| c.row == key.row)
        {
            return Ok(());
        }
        self.cursor.seek(key);
        self.settle_forward();
        Ok(())
    }

    fn seek_before(&mut self, key: &SeekKey<'_>) -> Result<()> {
        self.at_row_start = false;
        self.cursor.seek_before(key);
        self.settle_backward();
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.at_row_start = false;
        self.cursor.seek_to_last();
        self.settle_backward();
        Ok(())
    }

    fn advance(&mut self) -> Result<()> {
        self.at_row_start = false;
        if self.gate.is_none() {
            // Without a gate there is nothing to settle: no row copy.
            self.cursor.next();
            return Ok(());
        }
        let before = self.cursor.current().map(|c| c.row.to_vec());
        self.cursor.next();
        let row_changed = match (&before, self.cursor.current()) {
            (Some(b), Some(c)) => b.as_slice() != c.row,
            _ => false,
        };
        if row_changed {
            self.settle_forward();
        }
        Ok(())
    }

    fn current(&self) -> Option<CellRef<'_>> {
        self.cursor.current()
    }

    fn may_hold_family_markers(&self) -> bool {
        self.family_markers
    }
}

/// One HFile as a [`CellSource`].
pub(crate) struct FileSource {
    cursor: FileCursor,
    /// The file holds delete markers (its meta counts them, not by kind).
    markers: bool,
}

impl FileSource {
    pub(crate) fn new(reader: Arc<HFileReader>, gate: Option<Arc<RowGate>>) -> Self {
        FileSource {
            markers: reader.meta().markers > 0,
            cursor: FileCursor::with_gate(reader, gate),
        }
    }

    /// Stops the file's read-ahead at `stop` (a scan's last row).
    pub(crate) fn with_read_ahead_stop(mut self, stop: Option<Arc<ReadAheadStop>>) -> Self {
        self.cursor = self.cursor.with_read_ahead_stop(stop);
        self
    }

    /// A compaction input: whole-file read-ahead, no block cache fill.
    pub(crate) fn for_compaction(reader: Arc<HFileReader>) -> Self {
        FileSource {
            markers: reader.meta().markers > 0,
            cursor: FileCursor::for_whole_file(reader),
        }
    }
}

impl CellSource for FileSource {
    fn seek(&mut self, key: &SeekKey<'_>) -> Result<()> {
        self.cursor.seek(key)
    }

    fn seek_before(&mut self, key: &SeekKey<'_>) -> Result<()> {
        self.cursor.seek_before(key)
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.cursor.seek_to_last()
    }

    fn advance(&mut self) -> Result<()> {
        self.cursor.advance()
    }

    fn current(&self) -> Option<CellRef<'_>> {
        self.cursor.current()
    }

    fn may_hold_family_markers(&self) -> bool {
        self.markers
    }
}

/// A sorted run of non-overlapping files (one level) as one [`CellSource`].
pub(crate) struct LevelSource {
    /// Sorted by first row; no two share a row.
    files: Vec<Arc<HFileReader>>,
    gate: Option<Arc<RowGate>>,
    /// The file under the cursor.
    file: usize,
    cursor: Option<FileCursor>,
    /// Cursors for a compaction: whole-file read-ahead, no cache fill.
    compaction: bool,
    /// Where the read's rows end: no file's read-ahead passes it.
    stop: Option<Arc<ReadAheadStop>>,
}

impl LevelSource {
    pub(crate) fn new(files: Vec<Arc<HFileReader>>, gate: Option<Arc<RowGate>>) -> Self {
        LevelSource {
            files,
            gate,
            file: 0,
            cursor: None,
            compaction: false,
            stop: None,
        }
    }

    /// Stops read-ahead in every file at `stop` (a scan's last row).
    pub(crate) fn with_read_ahead_stop(mut self, stop: Option<Arc<ReadAheadStop>>) -> Self {
        self.stop = stop;
        self
    }

    /// A compaction input level: whole-file read-ahead, no cache fill.
    pub(crate) fn for_compaction(files: Vec<Arc<HFileReader>>) -> Self {
        LevelSource {
            compaction: true,
            ..LevelSource::new(files, None)
        }
    }

    fn open(&mut self, file: usize) -> Option<&mut FileCursor> {
        let reader = self.files.get(file)?.clone();
        if self.file != file || self.cursor.is_none() {
            self.file = file;
            self.cursor = Some(if self.compaction {
                FileCursor::for_whole_file(reader)
            } else {
                FileCursor::with_gate(reader, self.gate.clone())
                    .with_read_ahead_stop(self.stop.clone())
            });
        }
        self.cursor.as_mut()
    }

    /// See [`Source::cursor_moved`].
    fn cursor_moved(&mut self) -> Result<()> {
        if self.cursor.as_ref().is_some_and(|c| c.current().is_none()) {
            self.first_from(self.file + 1)?;
        }
        Ok(())
    }

    /// Positions at the first cell of `file` or, if it has none, of a later one.
    fn first_from(&mut self, mut file: usize) -> Result<()> {
        loop {
            let Some(cursor) = self.open(file) else {
                self.cursor = None;
                return Ok(());
            };
            cursor.seek_to_first()?;
            if cursor.current().is_some() {
                return Ok(());
            }
            file += 1;
        }
    }
}

impl CellSource for LevelSource {
    fn seek(&mut self, key: &SeekKey<'_>) -> Result<()> {
        // The first file whose last row is >= the key's row.
        let file = self
            .files
            .partition_point(|f| f.meta().last_row.as_slice() < key.row);
        let Some(cursor) = self.open(file) else {
            self.cursor = None;
            return Ok(());
        };
        cursor.seek(key)?;
        if cursor.current().is_none() {
            self.first_from(file + 1)?;
        }
        Ok(())
    }

    fn seek_before(&mut self, key: &SeekKey<'_>) -> Result<()> {
        // The last file whose first row is <= the key's row; files do not
        // share rows, so if it has nothing before the key, the file before
        // it ends before the key.
        let Some(file) = self
            .files
            .partition_point(|f| f.meta().first_row.as_slice() <= key.row)
            .checked_sub(1)
        else {
            self.cursor = None;
            return Ok(());
        };
        if let Some(cursor) = self.open(file) {
            cursor.seek_before(key)?;
            if cursor.current().is_some() {
                return Ok(());
            }
        }
        match file.checked_sub(1).and_then(|f| self.open(f)) {
            Some(cursor) => cursor.seek_to_last(),
            None => {
                self.cursor = None;
                Ok(())
            }
        }
    }

    fn seek_to_last(&mut self) -> Result<()> {
        match self.files.len().checked_sub(1).and_then(|f| self.open(f)) {
            Some(cursor) => cursor.seek_to_last(),
            None => Ok(()),
        }
    }

    fn advance(&mut self) -> Result<()> {
        let Some(cursor) = self.cursor.as_mut() else {
            return Ok(());
        };
        cursor.advance()?;
        if cursor.current().is_none() {
            self.first_from(self.file + 1)?;
        }
        Ok(())
    }

    fn current(&self) -> Option<CellRef<'_>> {
        self.cursor.as_ref()?.current()
    }

    fn may_hold_family_markers(&self) -> bool {
        self.files.iter().any(|f| f.meta().markers > 0)
    }
}
