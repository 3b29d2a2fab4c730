//! The block cache: decoded data blocks, keyed by (file id, block offset),
//! weighted by the bytes they hold (quick_cache's CLOCK-Pro eviction).
//! Meta, index and bloom of open files do not go through it: readers keep
//! them resident (`HFileReader`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use quick_cache::{DefaultHashBuilder, Lifecycle, Weighter};

use crate::hfile::data_block::DataBlock;

/// A cached block.
pub(crate) type CachedBlock = Arc<DataBlock>;

#[derive(Clone)]
struct ByBytes;

impl Weighter<(u64, u64), CachedBlock> for ByBytes {
    fn weight(&self, _key: &(u64, u64), block: &CachedBlock) -> u64 {
        block.memory_bytes() as u64
    }
}

/// Keeps a block cached while someone besides the cache holds it. A
/// multi-get holds the blocks it read ahead until it has read its rows: in a
/// cache much smaller than the data, newly inserted blocks are the first
/// evicted, and a 64-key batch in an 8 MiB cache lost about 58 of its blocks
/// before using them. Scans pin the block under each cursor the same way.
/// Pinned blocks still count against the capacity.
#[derive(Clone, Copy, Default)]
struct PinWhileHeld;

impl Lifecycle<(u64, u64), CachedBlock> for PinWhileHeld {
    type RequestState = ();

    fn is_pinned(&self, _key: &(u64, u64), block: &CachedBlock) -> bool {
        Arc::strong_count(block) > 1
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
    cache: quick_cache::sync::Cache<
        (u64, u64),
        CachedBlock,
        ByBytes,
        DefaultHashBuilder,
        PinWhileHeld,
    >,
    capacity_bytes: u64,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// A block larger than this share of the cache's capacity is not cached.
const LARGEST_BLOCK_SHARE: u64 = 16;

/// Typical decoded block size, to size the cache's tables.
const TYPICAL_BLOCK_BYTES: u64 = crate::options::DEFAULT_BLOCK_SIZE_BYTES as u64;

impl BlockCache {
    pub(crate) fn new(capacity_bytes: u64) -> Self {
        let items = (capacity_bytes / TYPICAL_BLOCK_BYTES).clamp(16, 4_000_000) as usize;
        BlockCache {
            cache: quick_cache::sync::Cache::with(
                items,
                capacity_bytes.max(1),
                ByBytes,
                DefaultHashBuilder::default(),
                PinWhileHeld,
            ),
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

    /// The block if it is cached; unlike `get`, not counted as a hit or a
    /// miss (it plans reads, it does not serve one).
    pub(crate) fn peek(&self, file: u64, offset: u64) -> Option<CachedBlock> {
        self.cache.peek(&(file, offset))
    }

    /// Caches `block`, unless it would take more than
    /// 1/[`LARGEST_BLOCK_SHARE`] of the capacity: the caller holds the
    /// block, so it is pinned on arrival and the cache could not refuse it
    /// or evict it, however large (one huge cell would empty its shard).
    pub(crate) fn insert(&self, file: u64, offset: u64, block: CachedBlock) {
        let weight = ByBytes.weight(&(file, offset), &block);
        if self.capacity_bytes > 0 && weight <= self.capacity_bytes / LARGEST_BLOCK_SHARE {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{CellKind, CellRef};
    use crate::hfile::data_block::DataBlockBuilder;

    /// A decoded block of one cell with a `value_bytes`-byte value.
    fn block(value_bytes: usize) -> Arc<DataBlock> {
        let value = vec![7u8; value_bytes];
        let mut builder = DataBlockBuilder::default();
        builder.add(&CellRef {
            row: b"row",
            qualifier: b"q",
            timestamp: 1,
            kind: CellKind::Put,
            sequence: 1,
            value: &value,
        });
        Arc::new(DataBlock::decode(builder.finish_block(false)).unwrap())
    }

    /// Capacity of the test caches: a 4,000-byte block is well under its
    /// largest cacheable block.
    const CAPACITY: u64 = 256 * 1024;

    /// Inserts about 2,000 blocks of 4,000 bytes after `(1, 0)` (thirty
    /// times the capacity); true when `(1, 0)` is still cached.
    fn survives_flood(cache: &BlockCache) -> bool {
        for offset in 1..2000u64 {
            cache.insert(3, offset * 4096, block(4_000));
        }
        cache.peek(1, 0).is_some()
    }

    /// A cache already full of older blocks (so that a new block
    /// lands where new blocks do in a busy cache: first in line to go).
    fn full_cache() -> BlockCache {
        let cache = BlockCache::new(CAPACITY);
        for offset in 0..400u64 {
            cache.insert(2, offset * 4096, block(4_000));
        }
        cache
    }

    #[test]
    fn a_block_stays_cached_while_held() {
        let unheld = full_cache();
        unheld.insert(1, 0, block(4_000));
        assert!(
            !survives_flood(&unheld),
            "control: an unheld block is evicted"
        );

        let cache = full_cache();
        let held = block(4_000);
        cache.insert(1, 0, held.clone());
        assert!(survives_flood(&cache), "the held block was evicted");
        assert!(cache.stats().bytes <= CAPACITY + 8 * 1024);
        drop(held);
        assert!(!survives_flood(&cache), "a released block stayed pinned");
    }

    #[test]
    fn a_block_too_large_for_its_share_is_not_cached() {
        let cache = BlockCache::new(CAPACITY);
        cache.insert(1, 0, block(4_000));
        let huge = block(CAPACITY as usize / 8);
        cache.insert(1, 4096, huge.clone());
        assert!(
            cache.peek(1, 4096).is_none(),
            "a huge held block was cached"
        );
        assert!(
            cache.peek(1, 0).is_some(),
            "a huge block evicted the others"
        );
    }
}
