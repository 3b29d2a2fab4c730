//! RocksDB through the `rocksdb` crate: the default column family, a
//! block-based table with the harness's block size, bloom and LRU cache.

use std::path::Path;

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DB, DBCompressionType,
    IngestExternalFileOptions, Options, ReadOptions, SstFileWriter, WriteOptions,
};

use super::{BulkLoader, Engine, ScanCount, wait_until_idle};
use crate::error::{BenchError, Result};
use crate::pages::FilterQuery;
use crate::settings::{CompressionChoice, DurabilityChoice, EngineSettings, ZSTD_LEVEL};

/// The one column family.
const COLUMN_FAMILY: &str = "default";
/// zstd window bits RocksDB's `CompressionOptions` use by default.
const ROCKSDB_ZSTD_WINDOW_BITS: i32 = -14;

/// RocksDB with the harness's settings.
pub struct RocksDbEngine {
    db: DB,
    write: WriteOptions,
    load_write: WriteOptions,
    /// The options the database opened with, for `SstFileWriter`s (same
    /// block size, bloom and compression as the database's own files).
    options: Options,
}

/// RocksDB's bulk load: one `SstFileWriter` file, then
/// `ingest_external_file` moving it in.
struct RocksBulk<'a> {
    db: &'a DB,
    writer: SstFileWriter<'a>,
    path: std::path::PathBuf,
}

impl BulkLoader for RocksBulk<'_> {
    fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.writer.put(key, value)?)
    }

    fn finish_files(&mut self) -> Result<u64> {
        self.writer.finish()?;
        Ok(std::fs::metadata(&self.path)
            .map_err(|e| BenchError::io("sizing the SST file", e))?
            .len())
    }

    fn ingest(self: Box<Self>) -> Result<()> {
        let mut options = IngestExternalFileOptions::default();
        options.set_move_files(true);
        Ok(self
            .db
            .ingest_external_file_opts(&options, vec![self.path.clone()])?)
    }
}

/// The options docs/benchmarks.md lists for RocksDB.
fn options(settings: &EngineSettings) -> Options {
    let mut table = BlockBasedOptions::default();
    table.set_block_size(settings.block_size_bytes as usize);
    table.set_block_cache(&Cache::new_lru_cache(settings.cache_bytes as usize));
    if settings.bloom_bits_per_key > 0 {
        // Full (not block-based) filters, whole keys.
        table.set_bloom_filter(f64::from(settings.bloom_bits_per_key), false);
    }
    // Index and filter blocks stay outside the cache, held by the open
    // table readers (RocksDB's default; strata keeps them resident too).
    table.set_cache_index_and_filter_blocks(false);

    let mut options = Options::default();
    options.create_if_missing(true);
    options.set_block_based_table_factory(&table);
    options.set_write_buffer_size(settings.memtable_bytes as usize);
    options.set_max_background_jobs(settings.background_threads as i32);
    let compression = match settings.compression {
        CompressionChoice::None => DBCompressionType::None,
        CompressionChoice::Zstd => DBCompressionType::Zstd,
        CompressionChoice::Lz4 => DBCompressionType::Lz4,
        CompressionChoice::Snappy => DBCompressionType::Snappy,
        // HBase's GZ is zlib's deflate, RocksDB's `kZlibCompression`.
        CompressionChoice::Gz => DBCompressionType::Zlib,
    };
    options.set_compression_type(compression);
    options.set_bottommost_compression_type(compression);
    if settings.compression == CompressionChoice::Zstd {
        options.set_compression_options(ROCKSDB_ZSTD_WINDOW_BITS, ZSTD_LEVEL, 0, 0);
    }
    options
}

impl RocksDbEngine {
    /// Opens a new database in `dir`.
    pub fn open(dir: &Path, settings: &EngineSettings) -> Result<RocksDbEngine> {
        let options = options(settings);
        let db = DB::open_cf_descriptors(
            &options,
            dir,
            [ColumnFamilyDescriptor::new(COLUMN_FAMILY, options.clone())],
        )?;
        let mut write = WriteOptions::default();
        let mut load_write = WriteOptions::default();
        match settings.durability {
            DurabilityChoice::Skip => {
                write.disable_wal(true);
                load_write.disable_wal(true);
            }
            DurabilityChoice::Async => {}
            DurabilityChoice::Sync => write.set_sync(true),
        }
        Ok(RocksDbEngine {
            db,
            write,
            load_write,
            options,
        })
    }

    fn int_property(&self, name: &str) -> Result<u64> {
        Ok(self.db.property_int_value(name)?.unwrap_or(0))
    }
}

impl Engine for RocksDbEngine {
    fn bulk_loader(&self, dir: &Path) -> Result<Box<dyn BulkLoader + '_>> {
        std::fs::create_dir_all(dir)
            .map_err(|e| BenchError::io("creating the SST directory", e))?;
        let path = dir.join("bulk.sst");
        let writer = SstFileWriter::create(&self.options);
        writer.open(&path)?;
        Ok(Box::new(RocksBulk {
            db: &self.db,
            writer,
            path,
        }))
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.db.put_opt(key, value, &self.write)?)
    }

    fn put_for_load(&self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.db.put_opt(key, value, &self.load_write)?)
    }

    fn get(&self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.db.get_pinned(key)?.map(|v| v.len()))
    }

    fn delete(&self, key: &[u8]) -> Result<()> {
        Ok(self.db.delete_opt(key, &self.write)?)
    }

    fn multi_get(&self, keys: &[Vec<u8>]) -> Result<u64> {
        let cf = self
            .db
            .cf_handle(COLUMN_FAMILY)
            .ok_or_else(|| BenchError::Check("rocksdb lost its default column family".into()))?;
        let mut found = 0;
        for result in self.db.batched_multi_get_cf(cf, keys, false) {
            if result?.is_some() {
                found += 1;
            }
        }
        Ok(found)
    }

    fn multi_get_method(&self) -> &'static str {
        "batched_multi_get_cf (one call)"
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u64) -> Result<ScanCount> {
        let mut read = ReadOptions::default();
        if let Some(end) = end {
            read.set_iterate_upper_bound(end);
        }
        let mut iter = self.db.raw_iterator_opt(read);
        iter.seek(start);
        let mut count = ScanCount::default();
        while count.entries < limit {
            let (Some(key), Some(value)) = (iter.key(), iter.value()) else {
                break;
            };
            count.entries += 1;
            count.bytes += (key.len() + value.len()) as u64;
            iter.next();
        }
        iter.status()?;
        Ok(count)
    }

    fn filter_scan(&self, query: &FilterQuery) -> Result<ScanCount> {
        let (start, end) = query.key_range();
        let mut read = ReadOptions::default();
        if let Some(end) = end {
            read.set_iterate_upper_bound(end);
        }
        let mut iter = self.db.raw_iterator_opt(read);
        iter.seek(&start);
        let mut count = ScanCount::default();
        while let (Some(key), Some(value)) = (iter.key(), iter.value()) {
            if query.matches(key, value) {
                count.entries += 1;
                count.bytes += (key.len() + value.len()) as u64;
            }
            iter.next();
        }
        iter.status()?;
        Ok(count)
    }

    fn load_finished(&self) -> Result<()> {
        // Flush the memtable into an SST and wait for it.
        Ok(self.db.flush()?)
    }

    fn settle(&self) -> Result<()> {
        wait_until_idle("rocksdb", || {
            Ok(self.int_property("rocksdb.compaction-pending")? > 0
                || self.int_property("rocksdb.num-running-compactions")? > 0
                || self.int_property("rocksdb.num-running-flushes")? > 0
                || self.int_property("rocksdb.mem-table-flush-pending")? > 0)
        })
    }

    fn close(self: Box<Self>) -> Result<()> {
        // Dropping the handle closes the database (background work was
        // already waited for by `settle`).
        drop(self);
        Ok(())
    }
}
