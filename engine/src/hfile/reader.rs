//! Opens HFiles and reads their blocks, through the block cache.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::block::{BlockHandle, unframe_block};
use super::bloom::{self, cell_hash};
use super::data_block::{DataBlock, DecodedCell, Position};
use super::index::IndexBlock;
use super::{FileInfo, FileMeta, TRAILER_BYTES, Trailer, decode_meta, partition_point};
use crate::cell::SeekKey;
use crate::cell::{CellRef, compare_keys};
use crate::error::{Error, Result};
use crate::gate::RowGate;
use crate::hfile::cache::{BlockCache, CachedBlock};
use crate::io::{Io, IoFile, ReadOp};
use crate::options::BloomType;
use strata_filters::Bitmap;
use strata_filters::plan::Seek;

/// An open HFile. Meta, top index and bloom stay in memory while it is open,
/// and so does each leaf index block once it was read.
pub(crate) struct HFileReader {
    meta: FileMeta,
    info: FileInfo,
    path: PathBuf,
    file: IoFile,
    io: Io,
    top: IndexBlock,
    /// The leaf index blocks of a two-level index (one slot per top index
    /// entry; empty for a one-level index), each read on its first use and
    /// then held while the file is open, as the top index is. Every seek of
    /// the file walks a leaf: held here, a seek skips a block cache lookup
    /// (a hash probe and a reference count, two or three cache misses) and
    /// a leaf is never evicted by data blocks. RocksDB holds its index
    /// outside the block cache by default for the same reason
    /// (`cache_index_and_filter_blocks = false`). The leaves take about as
    /// much memory as the top index times its fan-out: under 1% of the
    /// file's data, less than its bloom.
    leaves: Box<[OnceLock<IndexBlock>]>,
    bloom: Option<Box<[u8]>>,
    cache: Arc<BlockCache>,
    cache_data_blocks: bool,
    /// Data blocks go into the cache's in-memory tier (an `IN_MEMORY`
    /// family; see [`HFileReader::cache_in_memory`]).
    cache_in_memory: bool,
    /// A bulk-loaded file's cells read with this sequence (see
    /// [`HFileReader::assign_sequence`]); `None` for every other file.
    assigned_sequence: Option<u64>,
    /// When the file was written: its modification time when opened, in
    /// milliseconds since the Unix epoch (HFiles are never modified after
    /// they are finished). Periodic major compaction measures age from it.
    written_at_ms: i64,
}

impl Drop for HFileReader {
    fn drop(&mut self) {
        if self.cache_in_memory {
            self.cache.release_file(self.meta.id);
        }
    }
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
            .map_err(|e| Error::read_failed(path, trailer_at, e))?;
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
        let leaf_count = if info.index_levels == 2 { top.len() } else { 0 };
        let written_at_ms = file
            .modified_ms()
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        Ok(HFileReader {
            meta,
            info,
            path: path.to_path_buf(),
            file,
            io,
            top,
            leaves: (0..leaf_count).map(|_| OnceLock::new()).collect(),
            bloom,
            cache,
            cache_data_blocks,
            cache_in_memory: false,
            assigned_sequence: None,
            written_at_ms,
        })
    }

    /// Makes the file's data blocks cache at priority when `in_memory` (its
    /// family is `IN_MEMORY`; `hfile::cache`). Set before the reader is
    /// shared; the blocks return to normal eviction when it is dropped.
    pub(crate) fn cache_in_memory(mut self, in_memory: bool) -> Self {
        self.cache_in_memory = in_memory;
        self
    }

    /// When the file was written, in milliseconds since the Unix epoch.
    pub(crate) fn written_at_ms(&self) -> i64 {
        self.written_at_ms
    }

    /// Makes every cell of a bulk-written file (whose cells carry sequence
    /// 0) read with `sequence`, the one its load assigned, and the file's
    /// meta say so. Set before the reader is shared, so no block of this
    /// file was decoded yet.
    pub(crate) fn assign_sequence(&mut self, sequence: u64) {
        self.assigned_sequence = Some(sequence);
        self.meta.min_sequence = sequence;
        self.meta.max_sequence = sequence;
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

    /// Leaf index block `j`, read from the file on its first use (two
    /// threads may both read it; one copy is kept).
    fn leaf(&self, j: usize) -> Result<&IndexBlock> {
        let slot = self
            .leaves
            .get(j)
            .ok_or_else(|| Error::corruption(&self.path, 0, format!("no leaf index block {j}")))?;
        if let Some(leaf) = slot.get() {
            return Ok(leaf);
        }
        let handle = self.top.handle(j);
        let payload = read_block(&self.file, &self.path, handle)?;
        let leaf = IndexBlock::decode(payload, handle.offset)
            .map_err(|e| Error::corruption(&self.path, handle.offset, e.0))?;
        Ok(slot.get_or_init(|| leaf))
    }

    /// Data block `ordinal`'s entry in the index: the index block that
    /// lists it (the top level of a one-level index; else the leaf whose
    /// ordinal base is the last at or below `ordinal`) and its position
    /// there. A block the index does not list is corruption: the meta block
    /// counted more blocks than the index holds.
    fn index_entry(&self, ordinal: usize) -> Result<(&IndexBlock, usize)> {
        let (index, position, index_offset) = if self.two_level() {
            // The last leaf whose ordinal base is at or below `ordinal`.
            let j = partition_point(0, self.top.len(), |j| {
                self.top.ordinal_base(j) <= ordinal as u64
            })
            .saturating_sub(1);
            let base = self.top.ordinal_base(j) as usize;
            (
                self.leaf(j)?,
                ordinal.checked_sub(base),
                self.top.handle(j).offset,
            )
        } else {
            (&self.top, Some(ordinal), 0)
        };
        match position {
            Some(position) if position < index.len() => Ok((index, position)),
            _ => Err(Error::corruption(
                &self.path,
                index_offset,
                format!("data block {ordinal} is not in the index (index too short)"),
            )),
        }
    }

    /// The handle of data block `ordinal`.
    pub(crate) fn handle_of(&self, ordinal: usize) -> Result<BlockHandle> {
        let (index, position) = self.index_entry(ordinal)?;
        Ok(index.handle(position))
    }

    /// The first data block that can hold `row` or a later one.
    pub(crate) fn seek_block(&self, row: &[u8]) -> Result<Option<usize>> {
        Ok(self.seek_block_handle(row)?.map(|(ordinal, _)| ordinal))
    }

    /// As [`HFileReader::seek_block`], with the block's handle, found in
    /// the same walk of the index (a second walk, `handle_of`, searches the
    /// top level again and looks the leaf up in the cache again).
    pub(crate) fn seek_block_handle(&self, row: &[u8]) -> Result<Option<(usize, BlockHandle)>> {
        let j = self.top.first_ending_at_or_after(row);
        if j >= self.top.len() {
            return Ok(None);
        }
        if !self.two_level() {
            return Ok(Some((j, self.top.handle(j))));
        }
        let leaf = self.leaf(j)?;
        let k = leaf.first_ending_at_or_after(row);
        Ok((k < leaf.len()).then(|| (self.top.ordinal_base(j) as usize + k, leaf.handle(k))))
    }

    /// The handle of the block a get of `row` reads (the one
    /// [`HFileReader::seek_block_handle`] finds), and whether `row` may go
    /// on in the block after it: the block ends with `row` and the next one
    /// starts with it, or the next one is listed in another leaf of the
    /// index (not read to tell; the answer is then yes).
    pub(crate) fn seek_row_block(&self, row: &[u8]) -> Result<Option<(BlockHandle, bool)>> {
        let j = self.top.first_ending_at_or_after(row);
        if j >= self.top.len() {
            return Ok(None);
        }
        if !self.two_level() {
            return Ok(Some((
                self.top.handle(j),
                row_goes_on(&self.top, j, row, false),
            )));
        }
        let leaf = self.leaf(j)?;
        let k = leaf.first_ending_at_or_after(row);
        Ok((k < leaf.len()).then(|| (leaf.handle(k), row_goes_on(leaf, k, row, true))))
    }

    /// The last data block that can hold `row` or an earlier one.
    pub(crate) fn seek_block_before(&self, row: &[u8]) -> Result<Option<usize>> {
        self.last_block_where(row, IndexBlock::last_starting_at_or_before)
    }

    /// The last data block whose first row is < `row`.
    pub(crate) fn seek_block_strictly_before(&self, row: &[u8]) -> Result<Option<usize>> {
        self.last_block_where(row, IndexBlock::last_starting_before)
    }

    /// The last data block `last` finds for `row`, searching the top index
    /// and then, in a two-level index, the leaf it names.
    fn last_block_where(
        &self,
        row: &[u8],
        last: fn(&IndexBlock, &[u8]) -> Option<usize>,
    ) -> Result<Option<usize>> {
        let Some(j) = last(&self.top, row) else {
            return Ok(None);
        };
        if !self.two_level() {
            return Ok(Some(j));
        }
        Ok(last(self.leaf(j)?, row).map(|k| self.top.ordinal_base(j) as usize + k))
    }

    /// The data blocks that can hold rows in `[start, end)` (an empty `end` has no upper
    /// bound), as ordinals `low..high`, from the index alone: `low` is the first block ending
    /// at or after `start`, `high` is one past the block that can hold `end`.
    pub(crate) fn blocks_in(&self, start: &[u8], end: &[u8]) -> Result<std::ops::Range<usize>> {
        let count = self.block_count();
        let low = self.seek_block(start)?.unwrap_or(count);
        let high = if end.is_empty() {
            count
        } else {
            self.seek_block(end)?.map_or(count, |o| o + 1).min(count)
        };
        Ok(low..high.max(low))
    }

    /// First and last row of data block `ordinal`, from the index.
    pub(crate) fn block_bounds(&self, ordinal: usize) -> Result<(Vec<u8>, Vec<u8>)> {
        let (index, position) = self.index_entry(ordinal)?;
        Ok((
            index.first_row(position).to_vec(),
            index.last_row(position).to_vec(),
        ))
    }

    /// The data block at `handle` (from [`HFileReader::seek_block_handle`]),
    /// from the cache or the file (then cached).
    pub(crate) fn data_block_at(&self, handle: BlockHandle) -> Result<Arc<DataBlock>> {
        if let Some(block) = self.cached(handle) {
            return Ok(block);
        }
        self.read_uncached(handle, true)
    }

    /// Data block `ordinal`, from the cache or the file.
    pub(crate) fn data_block(&self, ordinal: usize) -> Result<Arc<DataBlock>> {
        self.data_block_with(ordinal, true)
    }

    /// Data block `ordinal`, from the cache or the file; a block read from
    /// the file is cached only when `fill_cache` (and the family caches).
    pub(crate) fn data_block_with(
        &self,
        ordinal: usize,
        fill_cache: bool,
    ) -> Result<Arc<DataBlock>> {
        let handle = self.handle_of(ordinal)?;
        if let Some(block) = self.cached(handle) {
            return Ok(block);
        }
        self.read_uncached(handle, fill_cache)
    }

    /// Reads the block at `handle` from the file without looking in the
    /// cache: the caller has just looked and missed (each lookup counts in
    /// the cache statistics, so a block is looked up once per read).
    fn read_uncached(&self, handle: BlockHandle, fill_cache: bool) -> Result<Arc<DataBlock>> {
        let payload = read_block(&self.file, &self.path, handle)?;
        self.install(handle, payload, fill_cache)
    }

    /// The cached copy of a data block.
    fn cached(&self, handle: BlockHandle) -> Option<Arc<DataBlock>> {
        self.cache.get(self.meta.id, handle.offset)
    }

    /// Data blocks `ordinals`: the cached ones from the cache, the others
    /// read in one `read_many` batch (one io_uring submission) and cached
    /// when `fill_cache`. Scan read-ahead and compaction inputs use it.
    /// `ordinals[0]` is the block the caller has just looked up and missed,
    /// so it is read without a second (counted) lookup.
    pub(crate) fn data_blocks_after_miss(
        &self,
        ordinals: &[usize],
        fill_cache: bool,
    ) -> Result<Vec<Arc<DataBlock>>> {
        let handles = ordinals
            .iter()
            .map(|&o| self.handle_of(o))
            .collect::<Result<Vec<_>>>()?;
        let mut blocks: Vec<Option<Arc<DataBlock>>> = handles
            .iter()
            .enumerate()
            .map(|(i, &h)| if i == 0 { None } else { self.cached(h) })
            .collect();
        let missing: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].is_none()).collect();
        let mut buffers: Vec<Vec<u8>> = missing
            .iter()
            .map(|&i| vec![0u8; handles[i].len as usize])
            .collect();
        if !missing.is_empty() {
            let mut ops: Vec<ReadOp<'_>> = missing
                .iter()
                .zip(buffers.iter_mut())
                .map(|(&i, buf)| ReadOp {
                    file: &self.file,
                    offset: handles[i].offset,
                    buf: buf.as_mut_slice(),
                })
                .collect();
            self.io.read_many(&mut ops).map_err(|failed| {
                let offset = ops.get(failed.index).map_or(0, |op| op.offset);
                Error::read_failed(&self.path, offset, failed.source)
            })?;
        }
        for (&i, stored) in missing.iter().zip(buffers) {
            let payload = unframe_block(stored)
                .map_err(|e| Error::corruption(&self.path, handles[i].offset, e.0))?;
            blocks[i] = Some(self.install(handles[i], payload, fill_cache)?);
        }
        Ok(blocks.into_iter().flatten().collect())
    }

    /// The on-disk size of data block `ordinal` in bytes.
    pub(crate) fn block_len(&self, ordinal: usize) -> Result<u64> {
        Ok(u64::from(self.handle_of(ordinal)?.len))
    }

    fn install(
        &self,
        handle: BlockHandle,
        payload: Vec<u8>,
        fill_cache: bool,
    ) -> Result<Arc<DataBlock>> {
        let mut block = DataBlock::decode(payload)
            .map_err(|e| Error::corruption(&self.path, handle.offset, e.0))?;
        if let Some(sequence) = self.assigned_sequence {
            block.assign_sequence(sequence);
        }
        let block = Arc::new(block);
        if fill_cache && self.cache_data_blocks {
            if self.cache_in_memory {
                self.cache
                    .insert_in_memory(self.meta.id, handle.offset, block.clone());
            } else {
                self.cache
                    .insert(self.meta.id, handle.offset, block.clone());
            }
        }
        Ok(block)
    }

    /// The cached copy of the block at `handle`, if the cache holds it.
    pub(crate) fn cached_block(&self, handle: BlockHandle) -> Option<CachedBlock> {
        if !self.cache_data_blocks {
            return None;
        }
        self.cache.peek(self.meta.id, handle.offset)
    }

    /// False when the bloom proves `row` absent. `hash` must be
    /// `bloom::row_hash(row)`: worked out once, it serves every file a get
    /// probes.
    pub(crate) fn may_contain_hashed_row(&self, row: &[u8], hash: u64) -> bool {
        match (&self.bloom, self.info.bloom) {
            (Some(filter), BloomType::Row) => bloom::may_contain(filter, hash),
            _ => self.meta.overlaps(Some(row), Some(row)),
        }
    }

    /// Starts loading the bloom line a probe for the row hashing to `hash`
    /// reads (ROW blooms; others are left alone).
    pub(crate) fn prefetch_row_bloom(&self, hash: u64) {
        if let (Some(filter), BloomType::Row) = (&self.bloom, self.info.bloom) {
            bloom::prefetch(filter, hash);
        }
    }

    /// False when the bloom proves that `row` has no cell in `qualifier` and
    /// no family marker (which lives in the empty qualifier). `row_hash`
    /// must be `bloom::row_hash(row)`; a ROW bloom answers with it.
    pub(crate) fn may_contain_column(&self, row: &[u8], row_hash: u64, qualifier: &[u8]) -> bool {
        match (&self.bloom, self.info.bloom) {
            (Some(filter), BloomType::RowCol) => {
                bloom::may_contain(filter, cell_hash(row, qualifier))
                    || bloom::may_contain(filter, cell_hash(row, b""))
            }
            _ => self.may_contain_hashed_row(row, row_hash),
        }
    }

    /// Reads the given data blocks that are not cached, all in one
    /// `read_many` batch (one io_uring submission), and caches them. Returns
    /// every cached block of the batch, the ones found cached included: the
    /// cache keeps them while the caller holds them (`cache::PinWhileHeld`),
    /// so the reads that follow find them however small the cache is.
    pub(crate) fn prefetch(
        readers_and_blocks: &[(&HFileReader, BlockHandle)],
    ) -> Result<Vec<CachedBlock>> {
        let mut held = Vec::new();
        let mut wanted: Vec<(&HFileReader, BlockHandle)> = Vec::new();
        for &(reader, handle) in readers_and_blocks {
            if let Some(block) = reader.cached_block(handle) {
                held.push(block);
            } else if !wanted
                .iter()
                .any(|(r, h)| r.meta.id == reader.meta.id && *h == handle)
            {
                wanted.push((reader, handle));
            }
        }
        let Some((first, _)) = wanted.first() else {
            return Ok(held);
        };
        let io = &first.io;
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
                .map_err(|failed| match wanted.get(failed.index) {
                    Some((reader, handle)) => {
                        Error::read_failed(&reader.path, handle.offset, failed.source)
                    }
                    None => Error::io("reading blocks for a multi-get", failed.source),
                })?;
        }
        for ((reader, handle), stored) in wanted.into_iter().zip(buffers) {
            let payload = unframe_block(stored)
                .map_err(|e| Error::corruption(&reader.path, handle.offset, e.0))?;
            let block = reader.install(handle, payload, true)?;
            // Without a cache nothing keeps the block for the reads that
            // follow; the reads still happened in one batch.
            if reader.cache_data_blocks {
                held.push(block);
            }
        }
        Ok(held)
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

/// Whether `row`, found in the block of entry `i` of `index`, may go on in
/// the next block: the block ends with `row` and the next entry starts with
/// it. Past the index's last entry the answer is `past_end` (yes for a leaf
/// of a two-level index, whose successor lies in the next leaf; no for the
/// top level of a one-level index, which lists the file's last block).
fn row_goes_on(index: &IndexBlock, i: usize, row: &[u8], past_end: bool) -> bool {
    if index.last_row(i) != row {
        return false;
    }
    if i + 1 < index.len() {
        index.first_row(i + 1) == row
    } else {
        past_end
    }
}

/// Reads and checks one stored block.
fn read_block(file: &IoFile, path: &Path, handle: BlockHandle) -> Result<Vec<u8>> {
    let mut stored = vec![0u8; handle.len as usize];
    file.read_exact_at(handle.offset, &mut stored)
        .map_err(|e| Error::read_failed(path, handle.offset, e))?;
    unframe_block(stored).map_err(|e| Error::corruption(path, handle.offset, e.0))
}

/// A position in one HFile, moving in store order.
///
/// With a [`RowGate`], the cursor skips blocks whose key span cannot hold a
/// returned row (without reading them) and rows the gate's row-key kernel
/// rejects (evaluated once per block over all its row keys), so the merge
/// above never sees them.
pub(crate) struct FileCursor {
    reader: Arc<HFileReader>,
    block: Option<(usize, Arc<DataBlock>)>,
    /// The cell under the cursor (in `block`), and its fields decoded.
    position: Option<(Position, DecodedCell)>,
    gate: Option<Arc<RowGate>>,
    /// Rows of the current block that pass the gate's row-key kernel, when
    /// `rows_selected` (the bitmap's allocation is kept from block to block).
    passing: Bitmap,
    /// `passing` holds the current block's rows; otherwise every row passes
    /// or, for a block whose keys form no batch, each is tested by itself.
    rows_selected: bool,
    /// Whether blocks read from the file go into the block cache
    /// (compaction inputs do not, so they never evict what reads use).
    fill_cache: bool,
    /// Blocks read ahead, ascending by ordinal, not yet reached.
    ahead: VecDeque<(usize, Arc<DataBlock>)>,
    /// The block a forward pass over the file would read next.
    next_in_sequence: Option<usize>,
    /// Consecutive forward cache misses; read-ahead starts at
    /// [`READ_AHEAD_AFTER`] and its window doubles with each batch.
    sequential_misses: u32,
    /// A whole-file pass: read ahead in full batches from the first miss.
    whole_file: bool,
    /// The last row the read can return: read-ahead stops before a block
    /// that starts past it.
    stop: Option<Arc<ReadAheadStop>>,
    /// The handle of the block the last seek found in the index, so that
    /// reading it does not walk the index again.
    found_handle: Option<(usize, BlockHandle)>,
}

/// Where a read's rows end, for read-ahead: blocks that start past it hold
/// nothing the read returns and are never read ahead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadAheadStop {
    /// The last row (or, when `excluded`, the first row not) returned.
    pub(crate) row: Vec<u8>,
    /// `row` itself is not returned (a scan's exclusive stop row).
    pub(crate) excluded: bool,
}

impl ReadAheadStop {
    /// Whether a block whose first row is `first` starts past the read.
    fn is_past(&self, first: &[u8]) -> bool {
        if self.excluded {
            first >= self.row.as_slice()
        } else {
            first > self.row.as_slice()
        }
    }
}

/// Sequential block reads (cache misses) before a cursor starts reading
/// ahead: gets and short scans never read more than they need.
const READ_AHEAD_AFTER: u32 = 2;
/// The first read-ahead batch in bytes; each next batch doubles.
const READ_AHEAD_FIRST_BYTES: u64 = 64 << 10;
/// The largest read-ahead batch of a scan, in bytes.
const READ_AHEAD_MAX_BYTES: u64 = 512 << 10;
/// The read-ahead batch of a whole-file pass, in bytes (from the first read).
const WHOLE_FILE_READ_AHEAD_BYTES: u64 = 2 << 20;

impl FileCursor {
    pub(crate) fn new(reader: Arc<HFileReader>) -> Self {
        FileCursor::with_gate(reader, None)
    }

    pub(crate) fn with_gate(reader: Arc<HFileReader>, gate: Option<Arc<RowGate>>) -> Self {
        FileCursor {
            reader,
            block: None,
            position: None,
            gate,
            passing: Bitmap::zeros(0),
            rows_selected: false,
            fill_cache: true,
            ahead: VecDeque::new(),
            next_in_sequence: None,
            sequential_misses: 0,
            whole_file: false,
            stop: None,
            found_handle: None,
        }
    }

    /// Stops read-ahead at `stop` (a scan's last row).
    pub(crate) fn with_read_ahead_stop(mut self, stop: Option<Arc<ReadAheadStop>>) -> Self {
        self.stop = stop;
        self
    }

    /// A cursor for a whole-file pass (compaction, dumps): reads ahead in
    /// large batches from the start and leaves the block cache alone.
    pub(crate) fn for_whole_file(reader: Arc<HFileReader>) -> Self {
        FileCursor {
            fill_cache: false,
            whole_file: true,
            ..FileCursor::new(reader)
        }
    }

    fn load(&mut self, ordinal: usize) -> Result<Arc<DataBlock>> {
        if let Some((o, block)) = &self.block
            && *o == ordinal
        {
            return Ok(block.clone());
        }
        let block = self.fetch(ordinal)?;
        self.rows_selected = self
            .gate
            .as_ref()
            .is_some_and(|g| g.block_rows_into(block.row_key_batch(), &mut self.passing));
        self.block = Some((ordinal, block.clone()));
        Ok(block)
    }

    /// Block `ordinal` from the read-ahead queue, the cache, or the file;
    /// a forward run of cache misses turns into read-ahead batches of the
    /// blocks the gate wants next, each one `read_many` submission.
    fn fetch(&mut self, ordinal: usize) -> Result<Arc<DataBlock>> {
        while self.ahead.front().is_some_and(|(o, _)| *o < ordinal) {
            self.ahead.pop_front();
        }
        if let Some((o, _)) = self.ahead.front() {
            if *o == ordinal {
                if let Some((_, block)) = self.ahead.pop_front() {
                    return Ok(block);
                }
            } else {
                // Moving backward: the queue is of no use.
                self.ahead.clear();
            }
        }
        let handle = match self.found_handle {
            Some((found, handle)) if found == ordinal => handle,
            _ => self.reader.handle_of(ordinal)?,
        };
        if let Some(block) = self.reader.cached(handle) {
            return Ok(block);
        }
        let window = if self.whole_file {
            WHOLE_FILE_READ_AHEAD_BYTES
        } else {
            if self.next_in_sequence == Some(ordinal) {
                self.sequential_misses = self.sequential_misses.saturating_add(1);
            } else {
                self.sequential_misses = 0;
            }
            if self.sequential_misses < READ_AHEAD_AFTER {
                self.next_in_sequence = Some(ordinal + 1);
                return self.reader.read_uncached(handle, self.fill_cache);
            }
            let doublings = (self.sequential_misses - READ_AHEAD_AFTER).min(16);
            (READ_AHEAD_FIRST_BYTES << doublings).min(READ_AHEAD_MAX_BYTES)
        };
        let mut ordinals = vec![ordinal];
        let mut bytes = u64::from(handle.len);
        let mut next = ordinal + 1;
        while bytes < window && next < self.reader.block_count() {
            match self.wanted_from(next)? {
                Some(wanted) => {
                    if let Some(stop) = &self.stop
                        && stop.is_past(&self.reader.block_bounds(wanted)?.0)
                    {
                        break;
                    }
                    bytes += self.reader.block_len(wanted)?;
                    ordinals.push(wanted);
                    next = wanted + 1;
                }
                None => break,
            }
        }
        let mut blocks = self
            .reader
            .data_blocks_after_miss(&ordinals, self.fill_cache)?
            .into_iter();
        let block = blocks.next().ok_or_else(|| {
            Error::corruption(
                &self.reader.path,
                handle.offset,
                "block read returned nothing",
            )
        })?;
        self.ahead.extend(ordinals[1..].iter().copied().zip(blocks));
        self.next_in_sequence = Some(next);
        Ok(block)
    }

    /// The first block at or after `ordinal` that the gate does not rule
    /// out. A ruled-out block is jumped over to the block holding the plan's
    /// next candidate row, so that a narrow filtered scan does not walk the
    /// index of the whole file.
    fn wanted_from(&self, mut ordinal: usize) -> Result<Option<usize>> {
        let count = self.reader.block_count();
        let Some(gate) = &self.gate else {
            return Ok((ordinal < count).then_some(ordinal));
        };
        while ordinal < count {
            let (first, last) = self.reader.block_bounds(ordinal)?;
            if gate.block_wanted(&first, &last) {
                return Ok(Some(ordinal));
            }
            ordinal = match gate.forward_jump(&last) {
                Some(Seek::Done) => return Ok(None),
                Some(Seek::Forward(next)) => match self.reader.seek_block(&next)? {
                    Some(block) => block.max(ordinal + 1),
                    None => return Ok(None),
                },
                _ => ordinal + 1,
            };
        }
        Ok(None)
    }

    /// The last block at or before `ordinal` that the gate does not rule
    /// out, jumping backward the way [`FileCursor::wanted_from`] jumps forward.
    fn wanted_until(&self, ordinal: usize) -> Result<Option<usize>> {
        let Some(gate) = &self.gate else {
            return Ok((ordinal < self.reader.block_count()).then_some(ordinal));
        };
        let mut next = Some(ordinal);
        while let Some(ordinal) = next {
            let (first, last) = self.reader.block_bounds(ordinal)?;
            if gate.block_wanted(&first, &last) {
                return Ok(Some(ordinal));
            }
            let previous = ordinal.checked_sub(1);
            next = match gate.backward_jump(&first) {
                Some(Seek::Done) => return Ok(None),
                Some(Seek::Backward { key, inclusive }) => {
                    let block = if inclusive {
                        self.reader.seek_block_before(&key)?
                    } else {
                        self.reader.seek_block_strictly_before(&key)?
                    };
                    block
                        .zip(previous)
                        .map(|(block, previous)| block.min(previous))
                }
                _ => previous,
            };
        }
        Ok(None)
    }

    /// True when row `r` of the current block passes the gate.
    fn row_ok(&self, block: &DataBlock, r: usize) -> bool {
        match &self.gate {
            _ if self.rows_selected => self.passing.get(r),
            Some(gate) if gate.row_filter => gate.row_passes(block.row(r)),
            _ => true,
        }
    }

    /// The first passing row at or after `r` in `block` (the current
    /// block): a word of the selection at a time when there is one.
    fn passing_from(&self, block: &DataBlock, r: usize) -> Option<usize> {
        if self.rows_selected {
            return self.passing.next_one(r);
        }
        (r..block.rows()).find(|&r| self.row_ok(block, r))
    }

    /// The last passing row at or before `r` in `block` (the current block).
    fn passing_until(&self, block: &DataBlock, r: usize) -> Option<usize> {
        if self.rows_selected {
            return self.passing.last_one_until(r);
        }
        (0..=r).rev().find(|&r| self.row_ok(block, r))
    }

    /// Positions at the first passing cell of block `ordinal` or a later one.
    fn first_of(&mut self, ordinal: usize) -> Result<()> {
        let mut next = self.wanted_from(ordinal)?;
        while let Some(ordinal) = next {
            let block = self.load(ordinal)?;
            if let Some(r) = self.passing_from(&block, 0) {
                self.place(Some(Position {
                    row: r,
                    cell: block.row_cells(r).start,
                }));
                return Ok(());
            }
            next = self.wanted_from(ordinal + 1)?;
        }
        self.place(None);
        Ok(())
    }

    /// Positions at the last passing cell of block `ordinal` or an earlier one.
    fn last_of(&mut self, ordinal: usize) -> Result<()> {
        let mut next = self.wanted_until(ordinal)?;
        while let Some(ordinal) = next {
            let block = self.load(ordinal)?;
            if let Some(r) = block
                .rows()
                .checked_sub(1)
                .and_then(|last| self.passing_until(&block, last))
            {
                self.place(Some(Position {
                    row: r,
                    cell: block.row_cells(r).end - 1,
                }));
                return Ok(());
            }
            next = match ordinal.checked_sub(1) {
                Some(previous) => self.wanted_until(previous)?,
                None => None,
            };
        }
        self.place(None);
        Ok(())
    }

    /// From a raw position in block `ordinal`, moves forward to a passing row.
    fn settle_forward(&mut self, ordinal: usize, p: Option<Position>) -> Result<()> {
        let Some(p) = p else {
            return self.first_of(ordinal + 1);
        };
        if self.gate.is_none() {
            // Every row passes: no block handle to clone (an atomic
            // increment per row of a scan).
            self.place(Some(p));
            return Ok(());
        }
        let Some((_, block)) = self.block.clone() else {
            return self.first_of(ordinal + 1);
        };
        if self.row_ok(&block, p.row) {
            self.place(Some(p));
            return Ok(());
        }
        match self.passing_from(&block, p.row + 1) {
            Some(r) => {
                self.place(Some(Position {
                    row: r,
                    cell: block.row_cells(r).start,
                }));
                Ok(())
            }
            None => self.first_of(ordinal + 1),
        }
    }

    /// Positions at the first cell with key >= `key`.
    pub(crate) fn seek(&mut self, key: &SeekKey<'_>) -> Result<()> {
        // Forward from the cell under the cursor (a skip to the next column
        // or row): every cell at or after the key is in this block or a
        // later one, so the block is searched from the cursor on, and the
        // index only when the key is past the block's last cell.
        if let (Some((ordinal, block)), Some((from, decoded))) = (&self.block, &self.position)
            && compare_keys(block.decoded(decoded).tuple(), key.tuple()) == Ordering::Less
            && let Some(p) = block.seek_from(key, *from)
        {
            let ordinal = *ordinal;
            return self.settle_forward(ordinal, Some(p));
        }
        let Some((mut ordinal, handle)) = self.reader.seek_block_handle(key.row)? else {
            self.place(None);
            return Ok(());
        };
        self.found_handle = Some((ordinal, handle));
        loop {
            match self.wanted_from(ordinal)? {
                Some(wanted) if wanted == ordinal => {}
                Some(later) if key.is_row_start() => return self.first_of(later),
                Some(later) => ordinal = later,
                None => {
                    self.place(None);
                    return Ok(());
                }
            }
            let block = self.load(ordinal)?;
            let p = block.seek(key);
            if p.is_some() || key.is_row_start() {
                // A row-start key sorts before every cell of a later block.
                return self.settle_forward(ordinal, p);
            }
            // Every cell of this block sorts before a key inside a row (the
            // next column of `skip_column`), and a row can span blocks: the
            // next block may still start before the key.
            ordinal += 1;
        }
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
        let mut next = match start {
            Some(ordinal) => self.wanted_until(ordinal)?,
            None => None,
        };
        while let Some(ordinal) = next {
            let block = self.load(ordinal)?;
            if let Some(p) = block.seek_before(key) {
                if self.row_ok(&block, p.row) {
                    self.place(Some(p));
                    return Ok(());
                }
                if let Some(r) = p
                    .row
                    .checked_sub(1)
                    .and_then(|r| self.passing_until(&block, r))
                {
                    self.place(Some(Position {
                        row: r,
                        cell: block.row_cells(r).end - 1,
                    }));
                    return Ok(());
                }
                // Everything earlier in this block fails: earlier blocks
                // hold only smaller cells.
                return match ordinal.checked_sub(1) {
                    Some(previous) => self.last_of(previous),
                    None => {
                        self.place(None);
                        Ok(())
                    }
                };
            }
            next = match ordinal.checked_sub(1) {
                Some(previous) => self.wanted_until(previous)?,
                None => None,
            };
        }
        self.place(None);
        Ok(())
    }

    /// Positions at the last cell of the file.
    pub(crate) fn seek_to_last(&mut self) -> Result<()> {
        match self.reader.block_count().checked_sub(1) {
            Some(last) => self.last_of(last),
            None => {
                self.place(None);
                Ok(())
            }
        }
    }

    /// Positions at the first cell of the file.
    pub(crate) fn seek_to_first(&mut self) -> Result<()> {
        self.first_of(0)
    }

    /// The rest of the current row when it ends inside the current block
    /// (it is not the block's last row, which may continue in the next
    /// block, unless the block says that row ends in it): the block, the
    /// row's index in it, and the cells from the cursor's to the row's last. A scan reads such a row straight from the
    /// block's columns, then calls [`FileCursor::step_past_row`].
    #[inline]
    pub(crate) fn rest_of_row_in_block(&self) -> Option<(&Arc<DataBlock>, usize, Range<usize>)> {
        let (p, _) = self.position?;
        let (_, block) = self.block.as_ref()?;
        if p.row >= block.whole_rows() {
            return None;
        }
        let end = block.row_cells(p.row).end;
        Some((block, p.row, p.cell..end))
    }

    /// Moves to the first cell of the row after row `row` of the current
    /// block (which [`FileCursor::rest_of_row_in_block`] returned), or to
    /// the next row the gate passes.
    pub(crate) fn step_past_row(&mut self, row: usize) -> Result<()> {
        let Some((ordinal, block)) = self.block.as_ref() else {
            return Ok(());
        };
        let ordinal = *ordinal;
        let next = (row + 1 < block.rows()).then(|| Position {
            row: row + 1,
            cell: block.row_cells(row + 1).start,
        });
        self.settle_forward(ordinal, next)
    }

    /// Moves forward to the first cell of row `row` of the current block
    /// (or the next row the gate passes), skipping the rows between.
    pub(crate) fn jump_to_row(&mut self, row: usize) -> Result<()> {
        let Some((ordinal, block)) = self.block.as_ref() else {
            return Ok(());
        };
        let ordinal = *ordinal;
        let at = (row < block.rows()).then(|| Position {
            row,
            cell: block.row_cells(row).start,
        });
        self.settle_forward(ordinal, at)
    }

    /// True when the cursor filters rows by its gate's row-key predicate
    /// (the rows of its block are then not all its rows). A gate without
    /// one only picks which blocks to read: inside a block every row is the
    /// cursor's.
    pub(crate) fn filters_rows(&self) -> bool {
        self.gate.as_ref().is_some_and(|g| g.row_filter)
    }

    /// The file the cursor reads.
    pub(crate) fn reader(&self) -> &Arc<HFileReader> {
        &self.reader
    }

    /// Puts the cursor at `p` of the current block (or nowhere).
    #[inline]
    fn place(&mut self, p: Option<Position>) {
        self.position = match (p, &self.block) {
            (Some(p), Some((_, block))) => Some((p, block.decode_cell(p))),
            _ => None,
        };
    }

    /// Moves to the next cell.
    pub(crate) fn advance(&mut self) -> Result<()> {
        let (Some((p, _)), Some((ordinal, block))) = (self.position, self.block.as_ref()) else {
            return Ok(());
        };
        match block.next(p) {
            Some(next) if next.row == p.row => {
                self.place(Some(next));
                Ok(())
            }
            next => {
                let ordinal = *ordinal;
                self.settle_forward(ordinal, next)
            }
        }
    }

    /// The cell under the cursor.
    #[inline]
    pub(crate) fn current(&self) -> Option<CellRef<'_>> {
        let (_, decoded) = self.position.as_ref()?;
        let (_, block) = self.block.as_ref()?;
        Some(block.decoded(decoded))
    }
}
