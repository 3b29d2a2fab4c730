//! Writes an HFile from cells in store order.

use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

use super::block::{BLOCK_TRAILER_BYTES, BlockHandle, frame_block, frame_in_place};
use super::bloom::{self, cell_hash, row_hash};
use super::column_rows::ColumnRowCounter;
use super::data_block::DataBlockBuilder;
use super::index::{IndexEntry, encode_index};
use super::{BulkOrigin, FileInfo, FileMeta, MAX_INDEX_ENTRIES, Trailer, encode_meta};
use crate::cell::{CellRef, bytes_equal, compare_keys};
use crate::error::{Error, Result};
use crate::io::budget::{IoBudget, IoPriority};
use crate::io::{Io, IoFile, SyncKind};
use crate::options::{BloomType, Compression};

/// Bytes buffered before they are written to the file.
const WRITE_BUFFER_BYTES: usize = 1024 * 1024;

/// A write buffer's capacity: room for a full buffer's last block (it is
/// flushed after crossing [`WRITE_BUFFER_BYTES`]).
fn buffer_capacity(options: &WriterOptions) -> usize {
    WRITE_BUFFER_BYTES + options.block_size + 64
}

/// The last cell's key but its row (the file meta's last row): qualifier,
/// timestamp, kind, sequence.
type OwnedKey = (Vec<u8>, i64, crate::cell::CellKind, u64);

/// How a file is written.
#[derive(Debug, Clone)]
pub(crate) struct WriterOptions {
    pub(crate) family: Vec<u8>,
    pub(crate) block_size: usize,
    pub(crate) compression: Compression,
    pub(crate) bloom: BloomType,
    pub(crate) bloom_bits_per_key: u32,
    /// Set by a bulk writer: recorded in the meta block (every cell then
    /// carries sequence 0; the load assigns the sequence it reads with).
    pub(crate) bulk: Option<BulkOrigin>,
    /// The background I/O budget each buffer waits on before it is written
    /// (flush and compaction outputs; `None`: unlimited).
    pub(crate) budget: Option<WriteBudget>,
}

/// The I/O budget a writer draws from, and at which priority.
#[derive(Debug, Clone)]
pub(crate) struct WriteBudget {
    pub(crate) budget: Arc<IoBudget>,
    pub(crate) priority: IoPriority,
}

/// Writes a file's full buffers on a helper thread while the writer builds
/// the next one, at most one buffer at a time. Written inline, each 1 MiB
/// waited for its copy into the page cache (io_uring's worker thread does
/// it), about a fifth of a flush of 200,000 small cells, with the other
/// core idle; here it overlaps the building of the next megabyte.
struct WriteBehind {
    /// Buffers to write, at their offsets, in order.
    jobs: Option<mpsc::SyncSender<(u64, Vec<u8>)>>,
    /// Each written buffer back, emptied for reuse, or its write's error.
    done: mpsc::Receiver<std::io::Result<Vec<u8>>>,
    /// A buffer was sent whose result is not received yet.
    in_flight: bool,
    worker: Option<std::thread::JoinHandle<()>>,
}

/// Writes `buffer` at `offset` and asks the disk to start writing it: the
/// disk writes this chunk while the next is built, so the sync that ends
/// the file waits for about one chunk, not the whole file.
fn write_chunk(file: &IoFile, offset: u64, buffer: &[u8]) -> std::io::Result<()> {
    file.write_at(offset, buffer)?;
    file.start_writeback(offset, buffer.len() as u64);
    Ok(())
}

/// The error of a write-behind thread that is gone.
fn write_thread_stopped() -> std::io::Error {
    std::io::Error::other("the HFile write thread stopped")
}

impl WriteBehind {
    /// Starts the helper thread for `file`; `None` when no thread can be
    /// started (the writer then writes inline).
    fn start(file: Arc<IoFile>) -> Option<WriteBehind> {
        let (jobs, queued) = mpsc::sync_channel::<(u64, Vec<u8>)>(1);
        let (finished, done) = mpsc::sync_channel(1);
        let worker = std::thread::Builder::new()
            .name("strata-hfile-write".into())
            .spawn(move || {
                for (offset, mut buffer) in queued {
                    let written = write_chunk(&file, offset, &buffer).map(|()| {
                        buffer.clear();
                        buffer
                    });
                    if finished.send(written).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        Some(WriteBehind {
            jobs: Some(jobs),
            done,
            in_flight: false,
            worker: Some(worker),
        })
    }

    /// Waits for the buffer in flight, if any; returns it for reuse.
    fn wait(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        if !std::mem::take(&mut self.in_flight) {
            return Ok(None);
        }
        match self.done.recv() {
            Ok(written) => written.map(Some),
            Err(_) => Err(write_thread_stopped()),
        }
    }

    /// Hands `buffer` to the helper to write at `offset` (after the one in
    /// flight, which this waits for); returns the buffer that one wrote.
    fn send(&mut self, offset: u64, buffer: Vec<u8>) -> std::io::Result<Option<Vec<u8>>> {
        let returned = self.wait()?;
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send((offset, buffer)).is_ok());
        if !sent {
            return Err(write_thread_stopped());
        }
        self.in_flight = true;
        Ok(returned)
    }
}

impl Drop for WriteBehind {
    /// Lets the helper finish its write (a failed or abandoned file's last
    /// chunk at most) and stop.
    fn drop(&mut self) {
        drop(self.jobs.take());
        let _ = self.wait();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// Builds one HFile.
pub(crate) struct HFileWriter {
    io: Io,
    file: Arc<IoFile>,
    path: PathBuf,
    options: WriterOptions,
    /// Bytes not yet written, starting at `written`.
    buffer: Vec<u8>,
    written: u64,
    /// Writes full buffers while the next is built (started by the first).
    write_behind: Option<WriteBehind>,
    /// A written buffer to fill next.
    spare: Option<Vec<u8>>,
    builder: DataBlockBuilder,
    index: Vec<IndexEntry>,
    bloom_hashes: Vec<u64>,
    last_bloom_hash: Option<u64>,
    meta: FileMeta,
    last_key: Option<OwnedKey>,
    column_rows: ColumnRowCounter,
    /// The size of the row being added so far, and of the row before it
    /// ([`predicted_cell_bytes`] summed): a block is cut before a row the last one's size
    /// says will not fit ([`HFileWriter::add_ordered`]).
    row_bytes: usize,
    last_row_bytes: usize,
}

/// Rows of at most 1/`WHOLE_ROW_SHARE` of a block are kept whole in one
/// block where the size of the row before predicts it ([`HFileWriter::add_ordered`]);
/// larger rows would leave too much of a block empty.
const WHOLE_ROW_SHARE: usize = 8;

/// About what `cell` adds to a block's payload: its qualifier and value
/// (and key, for a row's first cell) and a few bytes of its integer
/// columns. A prediction, not [`DataBlockBuilder::estimated_bytes_with`]'s
/// exact size.
fn predicted_cell_bytes(cell: &CellRef<'_>, new_row: bool) -> usize {
    const INTEGER_COLUMN_BYTES: usize = 12;
    cell.qualifier.len()
        + cell.value.len()
        + INTEGER_COLUMN_BYTES
        + if new_row { cell.row.len() } else { 0 }
}

impl HFileWriter {
    /// Creates `path` (which must not exist).
    pub(crate) fn create(io: Io, path: &Path, options: WriterOptions) -> Result<HFileWriter> {
        let file = Arc::new(io.create_new(path)?);
        let buffer = Vec::with_capacity(buffer_capacity(&options));
        Ok(HFileWriter {
            io,
            file,
            path: path.to_path_buf(),
            options,
            buffer,
            written: 0,
            write_behind: None,
            spare: None,
            builder: DataBlockBuilder::default(),
            index: Vec::new(),
            bloom_hashes: Vec::new(),
            last_bloom_hash: None,
            meta: FileMeta {
                id: 0,
                size: 0,
                first_row: Vec::new(),
                last_row: Vec::new(),
                min_timestamp: i64::MAX,
                max_timestamp: i64::MIN,
                min_sequence: u64::MAX,
                max_sequence: 0,
                cells: 0,
                rows: 0,
                markers: 0,
            },
            last_key: None,
            column_rows: ColumnRowCounter::default(),
            row_bytes: 0,
            last_row_bytes: 0,
        })
    }

    /// Makes room for the bloom keys of up to `cells` cells (a flush knows
    /// its memstores' count), so that the list does not grow by doubling,
    /// each step copying it into freshly faulted pages, while the file is
    /// built. Only a capacity: a wrong count changes no byte of the file.
    pub(crate) fn expect_cells(&mut self, cells: u64) {
        if self.options.bloom != BloomType::None {
            let cells = usize::try_from(cells).unwrap_or(usize::MAX);
            self.bloom_hashes
                .reserve(cells.saturating_sub(self.bloom_hashes.len()));
        }
    }

    /// Bytes the file will take, roughly (written plus pending).
    pub(crate) fn estimated_bytes(&self) -> u64 {
        self.written + self.buffer.len() as u64 + self.builder.estimated_bytes() as u64
    }

    /// The row of the last cell added.
    pub(crate) fn last_row(&self) -> &[u8] {
        &self.meta.last_row
    }

    /// Adds a cell; cells must come in strictly ascending store order.
    pub(crate) fn add(&mut self, cell: &CellRef<'_>) -> Result<()> {
        if let Some(last) = &self.last_key
            && compare_keys(
                (&self.meta.last_row, &last.0, last.1, last.2, last.3),
                cell.tuple(),
            ) != std::cmp::Ordering::Less
        {
            return Err(Error::corruption(
                &self.path,
                self.estimated_bytes(),
                "cells added out of order",
            ));
        }
        // The last key's buffers are reused: a compaction adds millions of
        // cells, and two allocations per cell showed in profiles. Its row is
        // the meta's last row, which `add_ordered` keeps.
        match &mut self.last_key {
            Some(last) => {
                last.0.clear();
                last.0.extend_from_slice(cell.qualifier);
                last.1 = cell.timestamp;
                last.2 = cell.kind;
                last.3 = cell.sequence;
            }
            None => {
                self.last_key = Some((
                    cell.qualifier.to_vec(),
                    cell.timestamp,
                    cell.kind,
                    cell.sequence,
                ));
            }
        }
        self.add_ordered(cell)
    }

    /// Adds a cell the caller has already checked comes after the last one
    /// (the bulk writer checks its own stricter order, naming the cell): the
    /// same as [`HFileWriter::add`] without a second comparison and copy of
    /// every key.
    pub(crate) fn add_ordered(&mut self, cell: &CellRef<'_>) -> Result<()> {
        // A block ends before the cell that would take its frame (payload
        // and trailer) past the block size (a cell larger than a block gets
        // a block of its own). Cut after crossing instead, a 14 KiB block is
        // a little over 14 KiB and takes the allocator's next size class
        // (16 KiB plus a page) in the cache. The trailer counts because a
        // raw block is cached in the buffer its frame was read into.
        // The row is compared once, with the file's last row: while the
        // block holds cells its last row is the file's.
        //
        // A block also ends before a row's first cell when the row before
        // was small and as large a row would not fit: rows then lie whole
        // in one block (unless they outgrow the row before), and a scan
        // reads them straight from the block, run after run across blocks,
        // where a row cut in two takes the merge. The block is left short
        // by less than a row.
        let new_row = self.meta.cells == 0 || !bytes_equal(&self.meta.last_row, cell.row);
        let added = predicted_cell_bytes(cell, new_row);
        if new_row {
            self.last_row_bytes = self.row_bytes;
            self.row_bytes = 0;
        }
        self.row_bytes += added;
        if !self.builder.is_empty() {
            let with_cell = self.builder.estimated_bytes_with(cell, new_row) + BLOCK_TRAILER_BYTES;
            let rest_of_row =
                if new_row && self.last_row_bytes <= self.options.block_size / WHOLE_ROW_SHARE {
                    self.last_row_bytes.saturating_sub(added)
                } else {
                    0
                };
            if with_cell + rest_of_row > self.options.block_size {
                self.finish_block(new_row)?;
            }
        }
        if new_row {
            if self.meta.cells == 0 {
                self.meta.first_row = cell.row.to_vec();
            }
            self.meta.last_row.clear();
            self.meta.last_row.extend_from_slice(cell.row);
            self.meta.rows += 1;
        }
        let bloom_hash = match self.options.bloom {
            BloomType::None => None,
            BloomType::Row => new_row.then(|| row_hash(cell.row)),
            BloomType::RowCol => Some(cell_hash(cell.row, cell.qualifier)),
        };
        if let Some(h) = bloom_hash
            && self.last_bloom_hash != Some(h)
        {
            self.bloom_hashes.push(h);
            self.last_bloom_hash = Some(h);
        }
        // An empty block starts a row even when the cell goes on the last
        // block's row.
        let block_row = new_row || self.builder.is_empty();
        self.builder.add_known(cell, block_row);
        self.column_rows.record(cell.qualifier, new_row);
        let m = &mut self.meta;
        m.cells += 1;
        m.markers += u64::from(cell.kind.is_delete());
        m.min_timestamp = m.min_timestamp.min(cell.timestamp);
        m.max_timestamp = m.max_timestamp.max(cell.timestamp);
        m.min_sequence = m.min_sequence.min(cell.sequence);
        m.max_sequence = m.max_sequence.max(cell.sequence);
        Ok(())
    }

    /// Appends a framed block to the buffer; returns its handle.
    fn push_block(&mut self, payload: &[u8], compression: Compression) -> Result<BlockHandle> {
        let start = self.buffer.len();
        frame_block(payload, compression, &mut self.buffer);
        self.pushed(start)
    }

    /// The handle of the framed block the buffer holds from `start` on;
    /// flushes the buffer once it is full.
    fn pushed(&mut self, start: usize) -> Result<BlockHandle> {
        let offset = self.written + start as u64;
        let len = (self.buffer.len() - start) as u32;
        if self.buffer.len() >= WRITE_BUFFER_BYTES {
            self.flush_buffer(false)?;
        }
        Ok(BlockHandle { offset, len })
    }

    /// Hands the full buffer to the write-behind thread (or writes it, if
    /// none could be started, or if it is a file's only buffer: `last`
    /// without one started) and goes on with an empty one.
    fn flush_buffer(&mut self, last: bool) -> Result<()> {
        if let Some(limit) = &self.options.budget {
            limit
                .budget
                .acquire(self.buffer.len() as u64, limit.priority);
        }
        let len = self.buffer.len() as u64;
        if self.write_behind.is_none() && !last {
            self.write_behind = WriteBehind::start(self.file.clone());
        }
        match &mut self.write_behind {
            Some(write_behind) => {
                let next = self
                    .spare
                    .take()
                    .unwrap_or_else(|| Vec::with_capacity(buffer_capacity(&self.options)));
                let full = std::mem::replace(&mut self.buffer, next);
                self.spare = write_behind
                    .send(self.written, full)
                    .map_err(|e| self.write_error(e))?;
            }
            None => {
                write_chunk(&self.file, self.written, &self.buffer)
                    .map_err(|e| self.write_error(e))?;
                self.buffer.clear();
            }
        }
        self.written += len;
        Ok(())
    }

    /// A failed write of this file, as the engine's error.
    fn write_error(&self, e: std::io::Error) -> Error {
        Error::io(format!("writing {}", self.path.display()), e)
    }

    /// Waits until every buffer handed to the write-behind thread is written.
    fn wait_written(&mut self) -> Result<()> {
        if let Some(write_behind) = &mut self.write_behind {
            write_behind.wait().map_err(|e| self.write_error(e))?;
        }
        Ok(())
    }

    /// Writes the block being built; `last_row_ends` says its last row
    /// has no cells in the next block. The block is encoded straight into
    /// the file buffer and framed there (no payload copy).
    fn finish_block(&mut self, last_row_ends: bool) -> Result<()> {
        let first_row = self.builder.first_row().to_vec();
        let last_row = self.builder.last_row().to_vec();
        let start = self.buffer.len();
        self.builder
            .finish_block_into(last_row_ends, &mut self.buffer);
        frame_in_place(&mut self.buffer, start, self.options.compression);
        let handle = self.pushed(start)?;
        self.index.push(IndexEntry {
            first_row,
            last_row,
            handle,
            ordinal_base: 0,
        });
        Ok(())
    }

    /// Writes bloom, index, meta and trailer, syncs the file, and returns
    /// its description. An empty file is an error (callers never make one).
    /// On failure the file is removed.
    pub(crate) fn finish(self, id: u64) -> Result<FileMeta> {
        let io = self.io.clone();
        let path = self.path.clone();
        let finished = self.write_tail(id);
        if finished.is_err() {
            let _ = io.remove_file(&path);
        }
        finished
    }

    fn write_tail(mut self, id: u64) -> Result<FileMeta> {
        if self.meta.cells == 0 {
            return Err(Error::corruption(
                &self.path,
                0,
                "an HFile must hold at least one cell",
            ));
        }
        if !self.builder.is_empty() {
            // The file's last block: its last row ends with the file.
            self.finish_block(true)?;
        }
        let data_blocks = self.index.len() as u32;
        let bloom = if self.options.bloom == BloomType::None {
            BlockHandle { offset: 0, len: 0 }
        } else {
            let filter = bloom::build(&self.bloom_hashes, self.options.bloom_bits_per_key);
            self.push_block(&filter, Compression::None)?
        };
        let (index, index_levels) = if self.index.len() <= MAX_INDEX_ENTRIES {
            let payload = encode_index(&self.index);
            (self.push_block(&payload, Compression::None)?, 1)
        } else {
            let leaves: Vec<Vec<IndexEntry>> = self
                .index
                .chunks(MAX_INDEX_ENTRIES)
                .map(<[_]>::to_vec)
                .collect();
            let mut top = Vec::with_capacity(leaves.len());
            let mut base = 0u64;
            for leaf in leaves {
                let payload = encode_index(&leaf);
                let handle = self.push_block(&payload, Compression::None)?;
                top.push(IndexEntry {
                    first_row: leaf
                        .first()
                        .map(|e| e.first_row.clone())
                        .unwrap_or_default(),
                    last_row: leaf.last().map(|e| e.last_row.clone()).unwrap_or_default(),
                    handle,
                    ordinal_base: base,
                });
                base += leaf.len() as u64;
            }
            (self.push_block(&encode_index(&top), Compression::None)?, 2)
        };
        let info = FileInfo {
            family: self.options.family.clone(),
            bloom: self.options.bloom,
            bloom_keys: self.bloom_hashes.len() as u64,
            compression: self.options.compression,
            block_size: self.options.block_size as u32,
            data_blocks,
            index_levels,
            bulk: self.options.bulk.clone(),
            column_rows: std::mem::take(&mut self.column_rows).finish(),
        };
        let meta_handle = self.push_block(&encode_meta(&self.meta, &info), Compression::None)?;
        let trailer = Trailer {
            meta: meta_handle,
            index,
            bloom,
            data_blocks,
        };
        self.buffer.extend_from_slice(&trailer.encode());
        self.flush_buffer(true)?;
        self.wait_written()?;
        self.file
            .sync(SyncKind::All)
            .map_err(|e| Error::io(format!("syncing {}", self.path.display()), e))?;
        self.meta.id = id;
        self.meta.size = self.written;
        Ok(self.meta)
    }

    /// Gives up on the file and removes it.
    pub(crate) fn abandon(self) {
        let _ = self.io.remove_file(&self.path);
    }
}
