//! fjall: one keyspace `bench` with the harness's block size, bloom bits,
//! cache and compression.

use std::path::Path;

use fjall::config::{
    BlockSizePolicy, BloomConstructionPolicy, CompressionPolicy, FilterPolicy, FilterPolicyEntry,
    PinningPolicy,
};
use fjall::{CompressionType, Database, Keyspace, KeyspaceCreateOptions, PersistMode};

use super::{BulkLoader, Engine, ScanCount, wait_until_idle};
use crate::error::{BenchError, Result};
use crate::pages::FilterQuery;
use crate::settings::{CompressionChoice, DurabilityChoice, EngineSettings};

/// The one keyspace.
const KEYSPACE: &str = "bench";

/// fjall with the harness's settings.
pub struct FjallEngine {
    db: Database,
    keyspace: Keyspace,
    sync_each_write: bool,
}

/// The keyspace options docs/benchmarks.md lists for fjall.
fn keyspace_options(settings: &EngineSettings) -> KeyspaceCreateOptions {
    let filter = if settings.bloom_bits_per_key == 0 {
        FilterPolicyEntry::None
    } else {
        FilterPolicyEntry::Bloom(BloomConstructionPolicy::BitsPerKey(
            settings.bloom_bits_per_key as f32,
        ))
    };
    // fjall has no zstd: lz4 is its only block compression.
    let compression = match settings.compression {
        CompressionChoice::None => CompressionType::None,
        // fjall has no zstd, Snappy or DEFLATE: lz4 stands in for all of them.
        CompressionChoice::Zstd
        | CompressionChoice::Lz4
        | CompressionChoice::Snappy
        | CompressionChoice::Gz => CompressionType::Lz4,
    };
    KeyspaceCreateOptions::default()
        .data_block_size_policy(BlockSizePolicy::all(settings.block_size_bytes))
        .filter_policy(FilterPolicy::all(filter))
        .data_block_compression_policy(CompressionPolicy::all(compression))
        // Index and filter blocks of every level stay resident, as RocksDB's
        // table readers and strata's open files keep them.
        .index_block_pinning_policy(PinningPolicy::all(true))
        .filter_block_pinning_policy(PinningPolicy::all(true))
        .max_memtable_size(settings.memtable_bytes)
        // `skip`: writes stay in the journal's in-process buffer (fjall
        // cannot turn its journal off).
        .manual_journal_persist(settings.durability == DurabilityChoice::Skip)
}

impl FjallEngine {
    /// Opens a new database in `dir`.
    pub fn open(dir: &Path, settings: &EngineSettings) -> Result<FjallEngine> {
        let db = Database::builder(dir)
            .cache_size(settings.cache_bytes)
            .worker_threads(settings.background_threads.max(1))
            .manual_journal_persist(settings.durability == DurabilityChoice::Skip)
            .open()?;
        let options = keyspace_options(settings);
        let keyspace = db.keyspace(KEYSPACE, || options)?;
        Ok(FjallEngine {
            db,
            keyspace,
            sync_each_write: settings.durability == DurabilityChoice::Sync,
        })
    }
}

/// Writes one record of a bulk load.
type WriteRecord<'a> = Box<dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a>;

/// fjall's bulk load: `Keyspace::start_ingestion` writes sorted records
/// straight into the keyspace's tables; `finish` registers them. Building
/// and ingesting are one stream (there is no separate file to prepare).
/// fjall does not export the ingestion's type, so it is held by the two
/// closures that use it.
struct FjallBulk<'a> {
    write: WriteRecord<'a>,
    finish: Box<dyn FnOnce() -> Result<()> + 'a>,
}

impl BulkLoader for FjallBulk<'_> {
    fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        (self.write)(key, value)
    }

    fn finish_files(&mut self) -> Result<u64> {
        Ok(0)
    }

    fn ingest(self: Box<Self>) -> Result<()> {
        (self.finish)()
    }
}

impl Engine for FjallEngine {
    fn bulk_loader(&self, _dir: &Path) -> Result<Box<dyn BulkLoader + '_>> {
        let ingestion = std::rc::Rc::new(std::cell::RefCell::new(Some(
            self.keyspace.start_ingestion()?,
        )));
        let writing = ingestion.clone();
        Ok(Box::new(FjallBulk {
            write: Box::new(move |key, value| match writing.borrow_mut().as_mut() {
                Some(ingestion) => Ok(ingestion.write(key.to_vec(), value.to_vec())?),
                None => Err(BenchError::Check("the ingestion finished".into())),
            }),
            finish: Box::new(move || match ingestion.borrow_mut().take() {
                Some(ingestion) => Ok(ingestion.finish()?),
                None => Ok(()),
            }),
        }))
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.keyspace.insert(key, value)?;
        if self.sync_each_write {
            self.db.persist(PersistMode::SyncData)?;
        }
        Ok(())
    }

    fn put_for_load(&self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.keyspace.insert(key, value)?)
    }

    fn get(&self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.keyspace.get(key)?.map(|v| v.len()))
    }

    fn delete(&self, key: &[u8]) -> Result<()> {
        self.keyspace.remove(key)?;
        if self.sync_each_write {
            self.db.persist(PersistMode::SyncData)?;
        }
        Ok(())
    }

    fn multi_get(&self, keys: &[Vec<u8>]) -> Result<u64> {
        // fjall has no multi-get: one get per key.
        let mut found = 0;
        for key in keys {
            if self.keyspace.get(key)?.is_some() {
                found += 1;
            }
        }
        Ok(found)
    }

    fn multi_get_method(&self) -> &'static str {
        "one get per key (fjall has no multi-get)"
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u64) -> Result<ScanCount> {
        let iter = match end {
            Some(end) => self.keyspace.range(start..end),
            None => self.keyspace.range(start..),
        };
        let mut count = ScanCount::default();
        for guard in iter {
            if count.entries >= limit {
                break;
            }
            let (key, value) = guard.into_inner()?;
            count.entries += 1;
            count.bytes += (key.len() + value.len()) as u64;
        }
        Ok(count)
    }

    fn filter_scan(&self, query: &FilterQuery) -> Result<ScanCount> {
        let (start, end) = query.key_range();
        let iter = match end {
            Some(end) => self.keyspace.range(start..end),
            None => self.keyspace.range(start..),
        };
        let mut count = ScanCount::default();
        for guard in iter {
            let (key, value) = guard.into_inner()?;
            if query.matches(&key, &value) {
                count.entries += 1;
                count.bytes += (key.len() + value.len()) as u64;
            }
        }
        Ok(count)
    }

    fn load_finished(&self) -> Result<()> {
        // Flush the memtable into a table file and wait for it, then make
        // the journal durable.
        self.keyspace.rotate_memtable_and_wait()?;
        Ok(self.db.persist(PersistMode::SyncData)?)
    }

    fn settle(&self) -> Result<()> {
        wait_until_idle("fjall", || {
            Ok(self.db.outstanding_flushes() > 0 || self.db.active_compactions() > 0)
        })
    }

    fn close(self: Box<Self>) -> Result<()> {
        self.db.persist(PersistMode::SyncAll)?;
        drop(self);
        Ok(())
    }
}
