//! The block cache: decoded data blocks, keyed by (file id, block offset),
//! weighted by the bytes they hold (quick_cache's CLOCK-Pro eviction).
//! Meta, index and bloom of open files do not go through it: readers keep
//! them resident (`HFileReader`).
//!
//! Blocks of `IN_MEMORY` families have priority, as in HBase's in-memory
//! tier (`hbase.lru.blockcache.memory.percentage`, 25%): up to
//! [`IN_MEMORY_SHARE_PERCENT`] of the capacity of them is never evicted by
//! other blocks, so a scan of a large family cannot push a small, hot
//! lookup family out. Their blocks beyond that share are cached like any
//! other. A file's priority blocks return to normal eviction when its
//! reader is dropped (the file left every store), so the share never fills
//! with blocks of deleted files.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

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

/// HBase's `hbase.lru.blockcache.memory.percentage` (0.25): the share of the
/// cache's capacity that blocks of `IN_MEMORY` families may hold at priority.
pub(crate) const IN_MEMORY_SHARE_PERCENT: u64 = 25;

/// The blocks held at priority, with their weights.
#[derive(Default)]
struct InMemoryTier {
    blocks: HashMap<(u64, u64), u64>,
    bytes: u64,
}

/// Keeps a block cached while someone besides the cache holds it, or while
/// it is in the in-memory tier. A
/// multi-get holds the blocks it read ahead until it has read its rows: in a
/// cache much smaller than the data, newly inserted blocks are the first
/// evicted, and a 64-key batch in an 8 MiB cache lost about 58 of its blocks
/// before using them. Scans pin the block under each cursor the same way.
/// Pinned blocks still count against the capacity.
#[derive(Clone, Default)]
struct PinWhileHeld {
    in_memory: Arc<Mutex<InMemoryTier>>,
    /// Bytes of the in-memory tier, readable without its lock: eviction
    /// asks about every candidate, and with no `IN_MEMORY` family this
    /// stays 0 and the lock is never taken.
    in_memory_bytes: Arc<AtomicU64>,
}

impl Lifecycle<(u64, u64), CachedBlock> for PinWhileHeld {
    type RequestState = ();

    fn is_pinned(&self, key: &(u64, u64), block: &CachedBlock) -> bool {
        Arc::strong_count(block) > 1
            || (self.in_memory_bytes.load(Ordering::Relaxed) > 0
                && self.in_memory.lock().blocks.contains_key(key))
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
    /// Bytes of `IN_MEMORY` families' blocks held at priority (at most a
    /// quarter of the capacity; counted in `bytes` too).
    pub in_memory_bytes: u64,
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
    /// The in-memory tier, shared with the cache's lifecycle.
    pins: PinWhileHeld,
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
        let pins = PinWhileHeld::default();
        BlockCache {
            cache: quick_cache::sync::Cache::with(
                items,
                capacity_bytes.max(1),
                ByBytes,
                DefaultHashBuilder::default(),
                pins.clone(),
            ),
            capacity_bytes,
            pins,
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
        if self.is_cacheable(file, offset, &block) {
            self.cache.insert((file, offset), block);
        }
    }

    /// Caches `block` of an `IN_MEMORY` family: in the in-memory tier while
    /// it has room (never evicted until [`BlockCache::release_file`]), else
    /// as [`BlockCache::insert`] does.
    pub(crate) fn insert_in_memory(&self, file: u64, offset: u64, block: CachedBlock) {
        if !self.is_cacheable(file, offset, &block) {
            return;
        }
        let weight = ByBytes.weight(&(file, offset), &block);
        let budget = self.capacity_bytes / 100 * IN_MEMORY_SHARE_PERCENT;
        {
            let mut tier = self.pins.in_memory.lock();
            if !tier.blocks.contains_key(&(file, offset)) && tier.bytes + weight <= budget {
                tier.blocks.insert((file, offset), weight);
                tier.bytes += weight;
                self.pins
                    .in_memory_bytes
                    .store(tier.bytes, Ordering::Relaxed);
            }
        }
        // Not under the tier's lock: inserting may evict, which asks the
        // lifecycle, which takes it.
        self.cache.insert((file, offset), block);
    }

    /// Returns the in-memory tier's blocks of `file` to normal eviction (its
    /// reader is gone); they leave the cache as other blocks do.
    pub(crate) fn release_file(&self, file: u64) {
        let mut tier = self.pins.in_memory.lock();
        let mut freed = 0;
        tier.blocks.retain(|(block_file, _), weight| {
            let keep = *block_file != file;
            if !keep {
                freed += *weight;
            }
            keep
        });
        tier.bytes -= freed;
        self.pins
            .in_memory_bytes
            .store(tier.bytes, Ordering::Relaxed);
    }

    /// False for a block that would take more than
    /// 1/[`LARGEST_BLOCK_SHARE`] of the capacity (or any block when the
    /// capacity is 0).
    fn is_cacheable(&self, file: u64, offset: u64, block: &CachedBlock) -> bool {
        let weight = ByBytes.weight(&(file, offset), block);
        self.capacity_bytes > 0 && weight <= self.capacity_bytes / LARGEST_BLOCK_SHARE
    }

    pub(crate) fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bytes: self.cache.weight(),
            capacity_bytes: self.capacity_bytes,
            in_memory_bytes: self.pins.in_memory_bytes.load(Ordering::Relaxed),
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
    fn in_memory_blocks_outlast_floods_up_to_their_share_until_released() {
        let cache = full_cache();
        cache.insert_in_memory(1, 0, block(4_000));
        assert!(survives_flood(&cache), "an in-memory block was evicted");
        // The tier holds at most a quarter of the capacity: of 40 blocks of
        // 4 KB in a 256 KiB cache, about 16 stay through a flood.
        for offset in 1..40u64 {
            cache.insert_in_memory(1, offset * 4096, block(4_000));
        }
        survives_flood(&cache);
        let kept = (0..40u64)
            .filter(|offset| cache.peek(1, offset * 4096).is_some())
            .count();
        let share = (CAPACITY / 100 * IN_MEMORY_SHARE_PERCENT) as usize;
        assert!(
            (share / 5000..=share / 4000).contains(&kept),
            "{kept} in-memory blocks stayed"
        );
        assert!(cache.stats().bytes <= CAPACITY + share as u64);
        // Released (the file left every store): evicted like any block.
        // Blocks the tier kept through floods are "hot" to CLOCK-Pro, which
        // a flood of blocks read once never evicts (its scan resistance);
        // a flood of blocks read again evicts them once released.
        let hot_flood = |file: u64| {
            for offset in 0..2000u64 {
                cache.insert(file, offset * 4096, block(4_000));
                cache.get(file, offset * 4096);
            }
        };
        let in_tier = || {
            (0..40u64)
                .filter(|offset| cache.peek(1, offset * 4096).is_some())
                .count()
        };
        hot_flood(4);
        assert_eq!(in_tier(), kept, "a hot flood evicted in-memory blocks");
        cache.release_file(1);
        hot_flood(5);
        assert!(
            (0..40u64).all(|offset| cache.peek(1, offset * 4096).is_none()),
            "a released block stayed"
        );
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
