//! Sources of cells in store order: memstores, single HFiles, and sorted
//! levels of HFiles.

use std::sync::Arc;

use crate::cell::CellRef;
use crate::error::Result;
use crate::hfile::reader::{FileCursor, HFileReader};
use crate::memstore::{Cursor, Memstore, SeekKey};

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
}

/// A memstore as a [`CellSource`].
pub(crate) struct MemstoreSource {
    cursor: Cursor,
}

impl MemstoreSource {
    pub(crate) fn new(memstore: Arc<Memstore>) -> Self {
        MemstoreSource {
            cursor: Cursor::new(memstore),
        }
    }
}

impl CellSource for MemstoreSource {
    fn seek(&mut self, key: &SeekKey<'_>) -> Result<()> {
        self.cursor.seek(key);
        Ok(())
    }

    fn seek_before(&mut self, key: &SeekKey<'_>) -> Result<()> {
        self.cursor.seek_before(key);
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.cursor.seek_to_last();
        Ok(())
    }

    fn advance(&mut self) -> Result<()> {
        self.cursor.next();
        Ok(())
    }

    fn current(&self) -> Option<CellRef<'_>> {
        self.cursor.current()
    }
}

/// One HFile as a [`CellSource`].
pub(crate) struct FileSource {
    cursor: FileCursor,
}

impl FileSource {
    pub(crate) fn new(reader: Arc<HFileReader>) -> Self {
        FileSource {
            cursor: FileCursor::new(reader),
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
}

/// A sorted run of non-overlapping files (one level) as one [`CellSource`].
pub(crate) struct LevelSource {
    /// Sorted by first row; no two share a row.
    files: Vec<Arc<HFileReader>>,
    /// The file under the cursor.
    file: usize,
    cursor: Option<FileCursor>,
}

impl LevelSource {
    pub(crate) fn new(files: Vec<Arc<HFileReader>>) -> Self {
        LevelSource {
            files,
            file: 0,
            cursor: None,
        }
    }

    fn open(&mut self, file: usize) -> Option<&mut FileCursor> {
        let reader = self.files.get(file)?.clone();
        if self.file != file || self.cursor.is_none() {
            self.file = file;
            self.cursor = Some(FileCursor::new(reader));
        }
        self.cursor.as_mut()
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
}
