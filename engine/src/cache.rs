//! The block cache: decoded data blocks and leaf index blocks, keyed by
//! (file id, block offset), weighted by the bytes they hold (quick_cache's
//! CLOCK-Pro eviction). Meta, top index and bloom of open files do not go
//! through it: readers keep them resident.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use quick_cache::Weighter;

use crate::hfile::data_block::DataBlock;
use crate::hfile::index::IndexBlock;

/// A cached block.
#[derive(Clone)]
pub(crate) enum CachedBlock {
    Data(Arc<DataBlock>),
    Index(Arc<IndexBlock>),
}

#[derive(Clone)]
struct ByBytes;

impl Weighter<(u64, u64), CachedBlock> for ByBytes {
    fn weight(&self, _key: &(u64, u64), block: &CachedBlock) -> u64 {
        match block {
            CachedBlock::Data(b) => b.memory_bytes() as u64,
            CachedBlock::Index(b) => b.memory_bytes() as u64,
        }
    }
}

/// Counters of the block cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups that found the block.
    pub hits: u64,
    /// Lookups that had to read the block.
    pub misses: u64,
    /// Bytes held.
    pub bytes: u64,
    /// Capacity in bytes.
    pub capacity_bytes: u64,
}

/// Shared by every reader of a database.
pub(crate) struct BlockCache {
    cache: quick_cache::sync::Cache<(u64, u64), CachedBlock, ByBytes>,
    capacity_bytes: u64,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// Typical decoded block size, to size the cache's tables.
const TYPICAL_BLOCK_BYTES: u64 = crate::options::DEFAULT_BLOCK_SIZE_BYTES as u64;

impl BlockCache {
    pub(crate) fn new(capacity_bytes: u64) -> Self {
        let items = (capacity_bytes / TYPICAL_BLOCK_BYTES).clamp(16, 4_000_000) as usize;
        BlockCache {
            cache: quick_cache::sync::Cache::with_weighter(items, capacity_bytes.max(1), ByBytes),
            capacity_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    pub(crate) fn get(&self, file: u64, offset: u64) -> Option<CachedBlock> {
        let found = self.cache.get(&(file, offset));
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// True when the block is cached; unlike `get`, not counted as a hit
    /// or a miss (it plans reads, it does not serve one).
    pub(crate) fn contains(&self, file: u64, offset: u64) -> bool {
        self.cache.peek(&(file, offset)).is_some()
    }

    pub(crate) fn insert(&self, file: u64, offset: u64, block: CachedBlock) {
        if self.capacity_bytes > 0 {
            self.cache.insert((file, offset), block);
        }
    }

    pub(crate) fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bytes: self.cache.weight(),
            capacity_bytes: self.capacity_bytes,
        }
    }
}
