//! Opens HFiles and reads their blocks, through the block cache.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::block::{BlockHandle, unframe_block};
use super::bloom::{self, cell_hash, row_hash};
use super::data_block::{DataBlock, Position};
use super::index::IndexBlock;
use super::{FileInfo, FileMeta, TRAILER_BYTES, Trailer, decode_meta};
use crate::cache::{BlockCache, CachedBlock};
use crate::cell::CellRef;
use crate::error::{Error, Result};
use crate::io::{Io, IoFile, ReadOp};
use crate::memstore::SeekKey;
use crate::options::BloomType;

/// An open HFile. Meta, top index and bloom stay in memory while it is open.
pub(crate) struct HFileReader {
    meta: FileMeta,
    info: FileInfo,
    path: PathBuf,
    file: IoFile,
    io: Io,
    top: IndexBlock,
    bloom: Option<Box<[u8]>>,
    cache: Arc<BlockCache>,
    cache_data_blocks: bool,
}

impl std::fmt::Debug for HFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HFileReader")
            .field("path", &self.path)
            .finish()
    }
}

impl HFileReader {
    /// Opens and checks the file's trailer, meta, index and bloom.
    pub(crate) fn open(
        io: Io,
        path: &Path,
        id: u64,
        cache: Arc<BlockCache>,
        cache_data_blocks: bool,
    ) -> Result<HFileReader> {
        let file = io.open_read(path)?;
        let size = file
            .len()
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        let trailer_at = size.checked_sub(TRAILER_BYTES as u64).ok_or_else(|| {
            Error::corruption(
                path,
                0,
                format!("{size} bytes is shorter than the HFile trailer"),
            )
        })?;
        let mut trailer_bytes = [0u8; TRAILER_BYTES];
        file.read_exact_at(trailer_at, &mut trailer_bytes)
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        let trailer = Trailer::decode(&trailer_bytes, size)
            .map_err(|e| Error::corruption(path, trailer_at, e.0))?;
        let read = |h: BlockHandle| -> Result<Vec<u8>> { read_block(&file, path, h) };
        let (meta, info) = decode_meta(&read(trailer.meta)?, id, size)
            .map_err(|e| Error::corruption(path, trailer.meta.offset, e.0))?;
        let top = IndexBlock::decode(read(trailer.index)?, trailer.index.offset)
            .map_err(|e| Error::corruption(path, trailer.index.offset, e.0))?;
        let bloom = if trailer.bloom.len > 0 {
            Some(read(trailer.bloom)?.into_boxed_slice())
        } else {
            None
        };
        if info.data_blocks != trailer.data_blocks
            || (info.index_levels == 1 && top.len() != info.data_blocks as usize)
        {
            return Err(Error::corruption(
                path,
                trailer_at,
                "trailer, meta and index disagree on the block count",
            ));
        }
        Ok(HFileReader {
            meta,
            info,
            path: path.to_path_buf(),
            file,
            io,
            top,
            bloom,
            cache,
            cache_data_blocks,
        })
    }

    /// The file's description.
    pub(crate) fn meta(&self) -> &FileMeta {
        &self.meta
    }

    /// The file's format facts.
    pub(crate) fn info(&self) -> &FileInfo {
        &self.info
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Number of data blocks.
    pub(crate) fn block_count(&self) -> usize {
        self.info.data_blocks as usize
    }

    fn two_level(&self) -> bool {
        self.info.index_levels == 2
    }

    fn leaf(&self, j: usize) -> Result<Arc<IndexBlock>> {
        let handle = self.top.handle(j);
        if let Some(CachedBlock::Index(leaf)) = self.cache.get(self.meta.id, handle.offset) {
            return Ok(leaf);
        }
        let payload = read_block(&self.file, &self.path, handle)?;
        let leaf = Arc::new(
            IndexBlock::decode(payload, handle.offset)
                .map_err(|e| Error::corruption(&self.path, handle.offset, e.0))?,
        );
        self.cache.insert(
            self.meta.id,
            handle.offset,
            CachedBlock::Index(leaf.clone()),
        );
        Ok(leaf)
    }

    /// The handle of data block `ordinal`.
    pub(crate) fn handle_of(&self, ordinal: usize) -> Result<BlockHandle> {
        if !self.two_level() {
            return Ok(self.top.handle(ordinal));
        }
        // The last leaf whose ordinal base is <= ordinal.
        let (mut lo, mut hi) = (0, self.top.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.top.ordinal_base(mid) <= ordinal as u64 {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let j = lo.saturating_sub(1);
        let leaf = self.leaf(j)?;
        let k = ordinal - self.top.ordinal_base(j) as usize;
        if k >= leaf.len() {
            return Err(Error::corruption(
                &self.path,
                self.top.handle(j).offset,
                "leaf index too short",
            ));
        }
        Ok(leaf.handle(k))
    }

    /// The first data block that can hold `row` or a later one.
    pub(crate) fn seek_block(&self, row: &[u8]) -> Result<Option<usize>> {
        let j = self.top.first_ending_at_or_after(row);
        if j >= self.top.len() {
            return Ok(None);
        }
        if !self.two_level() {
            return Ok(Some(j));
        }
        let leaf = self.leaf(j)?;
        let k = leaf.first_ending_at_or_after(row);
        Ok((k < leaf.len()).then(|| self.top.ordinal_base(j) as usize + k))
    }

    /// The last data block that can hold `row` or an earlier one.
    pub(crate) fn seek_block_before(&self, row: &[u8]) -> Result<Option<usize>> {
        let Some(j) = self.top.last_starting_at_or_before(row) else {
            return Ok(None);
        };
        if !self.two_level() {
            return Ok(Some(j));
        }
        let leaf = self.leaf(j)?;
        Ok(leaf
            .last_starting_at_or_before(row)
            .map(|k| self.top.ordinal_base(j) as usize + k))
    }

    /// The last data block whose first row is < `row`.
    pub(crate) fn seek_block_strictly_before(&self, row: &[u8]) -> Result<Option<usize>> {
        let Some(j) = self.top.last_starting_before(row) else {
            return Ok(None);
        };
        if !self.two_level() {
            return Ok(Some(j));
        }
        let leaf = self.leaf(j)?;
        Ok(leaf
            .last_starting_before(row)
            .map(|k| self.top.ordinal_base(j) as usize + k))
    }

    /// Data block `ordinal`, from the cache or the file.
    pub(crate) fn data_block(&self, ordinal: usize) -> Result<Arc<DataBlock>> {
        let handle = self.handle_of(ordinal)?;
        if let Some(CachedBlock::Data(block)) = self.cache.get(self.meta.id, handle.offset) {
            return Ok(block);
        }
        let payload = read_block(&self.file, &self.path, handle)?;
        self.install(handle, payload)
    }

    fn install(&self, handle: BlockHandle, payload: Vec<u8>) -> Result<Arc<DataBlock>> {
        let block = Arc::new(
            DataBlock::decode(payload)
                .map_err(|e| Error::corruption(&self.path, handle.offset, e.0))?,
        );
        if self.cache_data_blocks {
            self.cache.insert(
                self.meta.id,
                handle.offset,
                CachedBlock::Data(block.clone()),
            );
        }
        Ok(block)
    }

    /// True when the cached copy of block `ordinal` is present.
    pub(crate) fn is_cached(&self, handle: BlockHandle) -> bool {
        self.cache_data_blocks && self.cache.get(self.meta.id, handle.offset).is_some()
    }

    /// False when the bloom proves `row` absent.
    pub(crate) fn may_contain_row(&self, row: &[u8]) -> bool {
        match (&self.bloom, self.info.bloom) {
            (Some(filter), BloomType::Row) => bloom::may_contain(filter, row_hash(row)),
            _ => self.meta.overlaps(Some(row), Some(row)),
        }
    }

    /// False when the bloom proves that `row` has no cell in `qualifier` and
    /// no family marker (which lives in the empty qualifier).
    pub(crate) fn may_contain_column(&self, row: &[u8], qualifier: &[u8]) -> bool {
        match (&self.bloom, self.info.bloom) {
            (Some(filter), BloomType::RowCol) => {
                bloom::may_contain(filter, cell_hash(row, qualifier))
                    || bloom::may_contain(filter, cell_hash(row, b""))
            }
            _ => self.may_contain_row(row),
        }
    }

    /// Reads the given data blocks that are not cached, all in one
    /// `read_many` batch (one io_uring submission), and caches them.
    pub(crate) fn prefetch(readers_and_blocks: &[(&HFileReader, usize)]) -> Result<()> {
        let mut wanted: Vec<(&HFileReader, BlockHandle)> = Vec::new();
        for &(reader, ordinal) in readers_and_blocks {
            let handle = reader.handle_of(ordinal)?;
            if !reader.is_cached(handle)
                && !wanted
                    .iter()
                    .any(|(r, h)| r.meta.id == reader.meta.id && *h == handle)
            {
                wanted.push((reader, handle));
            }
        }
        let Some((first, _)) = wanted.first() else {
            return Ok(());
        };
        let io = first.io;
        let mut buffers: Vec<Vec<u8>> = wanted
            .iter()
            .map(|(_, h)| vec![0u8; h.len as usize])
            .collect();
        {
            let mut ops: Vec<ReadOp<'_>> = wanted
                .iter()
                .zip(buffers.iter_mut())
                .map(|((reader, h), buf)| ReadOp {
                    file: &reader.file,
                    offset: h.offset,
                    buf: buf.as_mut_slice(),
                })
                .collect();
            io.read_many(&mut ops)
                .map_err(|e| Error::io("reading blocks for a multi-get", e))?;
        }
        for ((reader, handle), stored) in wanted.into_iter().zip(buffers) {
            let payload = unframe_block(&stored)
                .map_err(|e| Error::corruption(&reader.path, handle.offset, e.0))?;
            let block = reader.install(handle, payload)?;
            if !reader.cache_data_blocks {
                // Nothing to keep it; the reads still happened in one batch.
                drop(block);
            }
        }
        Ok(())
    }

    /// Checks every block of the file; returns what is damaged.
    pub(crate) fn verify(&self) -> Vec<Error> {
        let mut damage = Vec::new();
        for ordinal in 0..self.block_count() {
            match self.handle_of(ordinal) {
                Ok(handle) => {
                    if let Err(e) = read_block(&self.file, &self.path, handle).and_then(|p| {
                        DataBlock::decode(p)
                            .map_err(|e| Error::corruption(&self.path, handle.offset, e.0))
                    }) {
                        damage.push(e);
                    }
                }
                Err(e) => {
                    damage.push(e);
                    break;
                }
            }
        }
        damage
    }
}

/// Reads and checks one stored block.
fn read_block(file: &IoFile, path: &Path, handle: BlockHandle) -> Result<Vec<u8>> {
    let mut stored = vec![0u8; handle.len as usize];
    file.read_exact_at(handle.offset, &mut stored)
        .map_err(|e| {
            Error::io(
                format!("reading {} at {}", path.display(), handle.offset),
                e,
            )
        })?;
    unframe_block(&stored).map_err(|e| Error::corruption(path, handle.offset, e.0))
}

/// A position in one HFile, moving in store order.
pub(crate) struct FileCursor {
    reader: Arc<HFileReader>,
    block: Option<(usize, Arc<DataBlock>)>,
    position: Option<Position>,
}

impl FileCursor {
    pub(crate) fn new(reader: Arc<HFileReader>) -> Self {
        FileCursor {
            reader,
            block: None,
            position: None,
        }
    }

    fn load(&mut self, ordinal: usize) -> Result<Arc<DataBlock>> {
        if let Some((o, block)) = &self.block
            && *o == ordinal
        {
            return Ok(block.clone());
        }
        let block = self.reader.data_block(ordinal)?;
        self.block = Some((ordinal, block.clone()));
        Ok(block)
    }

    fn first_of(&mut self, ordinal: usize) -> Result<()> {
        if ordinal >= self.reader.block_count() {
            self.position = None;
            return Ok(());
        }
        let block = self.load(ordinal)?;
        self.position = block.first();
        Ok(())
    }

    fn last_of(&mut self, ordinal: usize) -> Result<()> {
        let block = self.load(ordinal)?;
        self.position = block.last();
        Ok(())
    }

    /// Positions at the first cell with key >= `key`.
    pub(crate) fn seek(&mut self, key: &SeekKey<'_>) -> Result<()> {
        let Some(ordinal) = self.reader.seek_block(key.row)? else {
            self.position = None;
            return Ok(());
        };
        let block = self.load(ordinal)?;
        match block.seek(key) {
            Some(p) => self.position = Some(p),
            None => self.first_of(ordinal + 1)?,
        }
        Ok(())
    }

    /// Positions at the last cell with key < `key`.
    pub(crate) fn seek_before(&mut self, key: &SeekKey<'_>) -> Result<()> {
        // A row can span blocks, so the block found may hold only cells at
        // or after the key; step back until one holds a smaller cell. For a
        // row-start key, start at the last block beginning before the row.
        let start = if key.is_row_start() {
            self.reader.seek_block_strictly_before(key.row)?
        } else {
            self.reader.seek_block_before(key.row)?
        };
        let Some(mut ordinal) = start else {
            self.position = None;
            return Ok(());
        };
        loop {
            let block = self.load(ordinal)?;
            if let Some(p) = block.seek_before(key) {
                self.position = Some(p);
                return Ok(());
            }
            let Some(previous) = ordinal.checked_sub(1) else {
                self.position = None;
                return Ok(());
            };
            ordinal = previous;
        }
    }

    /// Positions at the last cell of the file.
    pub(crate) fn seek_to_last(&mut self) -> Result<()> {
        match self.reader.block_count().checked_sub(1) {
            Some(last) => self.last_of(last),
            None => {
                self.position = None;
                Ok(())
            }
        }
    }

    /// Positions at the first cell of the file.
    pub(crate) fn seek_to_first(&mut self) -> Result<()> {
        self.first_of(0)
    }

    /// Moves to the next cell.
    pub(crate) fn advance(&mut self) -> Result<()> {
        let (Some(p), Some((ordinal, block))) = (self.position, &self.block) else {
            return Ok(());
        };
        match block.next(p) {
            Some(next) => self.position = Some(next),
            None => {
                let next = *ordinal + 1;
                self.first_of(next)?;
            }
        }
        Ok(())
    }

    /// The cell under the cursor.
    pub(crate) fn current(&self) -> Option<CellRef<'_>> {
        let p = self.position?;
        let (_, block) = self.block.as_ref()?;
        Some(block.cell(p))
    }
}
