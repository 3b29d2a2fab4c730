//! strata through its public API: one table `bench` with one family `f`;
//! a record is the cell `f:` (empty qualifier) of the row named by the key.

use std::cell::RefCell;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use strata::{
    BloomType, BulkFiles, BulkLoadOptions, BulkWriter, Compression, Db, DbOptions, Delete,
    Durability, FamilyDescriptor, Get, IoMode, Put, RowReader, Scan, Table, TableDescriptor,
};

use super::{BulkLoader, Engine, ScanCount, WalCounters};
use crate::error::{BenchError, Result};
use crate::pages::FilterQuery;
use crate::settings::{CompressionChoice, DurabilityChoice, EngineSettings, IoChoice, ZSTD_LEVEL};

/// Table the records go to.
const TABLE: &str = "bench";
/// The one column family.
const FAMILY: &[u8] = b"f";
/// Qualifier of the one cell per row (empty: the closest to a plain
/// key-value record).
const QUALIFIER: &[u8] = b"";

/// Numbers engines apart, so a thread's reader of an earlier engine is
/// never used for a later one.
static NEXT_ENGINE_ID: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The row reader this thread's gets go through (strata's cheapest point
    /// read, as RocksDB's `get_pinned`): one per worker thread, kept from get
    /// to get, tagged with the engine it reads. Worker threads live for one
    /// phase, so a reader never outlives the phase it was made in.
    static READER: RefCell<Option<(u64, RowReader)>> = const { RefCell::new(None) };
}

/// strata with the harness's settings.
pub struct StrataEngine {
    /// This engine's number (see [`NEXT_ENGINE_ID`]).
    id: u64,
    db: Db,
    table: Table,
    /// `bulkload` verifies every block before loading.
    bulk_verify_blocks: bool,
    load_durability: Durability,
}

/// strata's bulk load: a `BulkWriter` cut at the table's regions, then one
/// `Table::bulk_load` (moves the files in; every block verified first with
/// `--bulk-verify-blocks`, else the trailers, meta and index).
struct StrataBulk<'a> {
    table: &'a Table,
    verify_blocks: bool,
    writer: Option<BulkWriter>,
    files: Option<BulkFiles>,
}

impl BulkLoader for StrataBulk<'_> {
    fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| BenchError::Check("the bulk writer finished".into()))?;
        writer.add(key, FAMILY, QUALIFIER, 1, value)?;
        Ok(())
    }

    fn finish_files(&mut self) -> Result<u64> {
        let writer = self
            .writer
            .take()
            .ok_or_else(|| BenchError::Check("the bulk writer finished".into()))?;
        let files = writer.finish()?;
        let bytes = files.file_bytes();
        self.files = Some(files);
        Ok(bytes)
    }

    fn ingest(self: Box<Self>) -> Result<()> {
        let files = self
            .files
            .ok_or_else(|| BenchError::Check("no bulk files to load".into()))?;
        self.table.bulk_load(
            &files.paths(),
            &BulkLoadOptions::default().verify_blocks(self.verify_blocks),
        )?;
        Ok(())
    }
}

impl StrataEngine {
    /// Opens a new database in `dir` and creates the table.
    pub fn open(dir: &Path, settings: &EngineSettings) -> Result<StrataEngine> {
        let io = match settings.io {
            None => IoMode::Auto,
            Some(IoChoice::Uring) => IoMode::Uring,
            Some(IoChoice::Sync) => IoMode::Sync,
        };
        let defaults = DbOptions::default();
        let db = Db::open(
            dir,
            DbOptions {
                io,
                block_cache_bytes: settings.cache_bytes,
                // 0 turns blooms off through the family's bloom type below;
                // the option itself must stay within 1..=64.
                bloom_bits_per_key: if settings.bloom_bits_per_key == 0 {
                    defaults.bloom_bits_per_key
                } else {
                    settings.bloom_bits_per_key
                },
                background_threads: settings.background_threads,
                memstore_parts: settings.memstore_parts,
                ..defaults
            },
        )?;
        // strata prints nothing itself: say once why it runs on the sync back end.
        static FALLBACK_NOTICE: std::sync::Once = std::sync::Once::new();
        if let Some(reason) = strata::io_fallback_reason() {
            FALLBACK_NOTICE.call_once(|| {
                eprintln!(
                    "strata-bench: io_uring unavailable ({reason}); strata uses the sync back end"
                );
            });
        }
        // STRATA_IO wins over the option inside strata; a run labelled with
        // one back end must not silently measure the other.
        if let Some(wanted) = settings.io {
            let got = db.stats().io_backend.name();
            if got != wanted.name() {
                let _ = db.close();
                return Err(BenchError::Usage(format!(
                    "--io {} asked for, but strata opened with {got} \
                     ({}={:?} overrides --io; unset it)",
                    wanted.name(),
                    strata::IO_ENV_VAR,
                    std::env::var(strata::IO_ENV_VAR).unwrap_or_default()
                )));
            }
        }
        let durability = match settings.durability {
            DurabilityChoice::Skip => Durability::SkipWal,
            DurabilityChoice::Async => Durability::AsyncWal,
            DurabilityChoice::Sync => Durability::SyncWal,
        };
        let load_durability = match settings.durability {
            DurabilityChoice::Skip => Durability::SkipWal,
            DurabilityChoice::Async | DurabilityChoice::Sync => Durability::AsyncWal,
        };
        let compression = match settings.compression {
            CompressionChoice::None => Compression::None,
            CompressionChoice::Zstd => Compression::Zstd { level: ZSTD_LEVEL },
            CompressionChoice::Lz4 => Compression::Lz4,
            CompressionChoice::Snappy => Compression::Snappy,
            CompressionChoice::Gz => Compression::Gz,
        };
        let bloom = if settings.bloom_bits_per_key == 0 {
            BloomType::None
        } else {
            BloomType::Row
        };
        let family = FamilyDescriptor::new(String::from_utf8_lossy(FAMILY))
            .block_size_bytes(settings.block_size_bytes)
            .bloom(bloom)
            .compression(compression)
            .block_cache(true);
        let table = db.create_table(
            TableDescriptor::new(TABLE)
                .family(family)
                .memstore_flush_size_bytes(settings.memtable_bytes)
                .durability(durability),
        )?;
        Ok(StrataEngine {
            id: NEXT_ENGINE_ID.fetch_add(1, Ordering::Relaxed),
            db,
            table,
            bulk_verify_blocks: settings.bulk_verify_blocks,
            load_durability,
        })
    }
}

impl Engine for StrataEngine {
    fn bulk_loader(&self, dir: &Path) -> Result<Box<dyn BulkLoader + '_>> {
        Ok(Box::new(StrataBulk {
            table: &self.table,
            verify_blocks: self.bulk_verify_blocks,
            writer: Some(self.table.bulk_writer(dir)?),
            files: None,
        }))
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        // Durability comes from the table descriptor. The cell's bytes are
        // borrowed, as RocksDB's and fjall's puts borrow theirs.
        Ok(self.table.put_value(key, FAMILY, QUALIFIER, value)?)
    }

    fn put_for_load(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let put = Put::new(key)
            .add(FAMILY, QUALIFIER, value)
            .durability(self.load_durability);
        Ok(self.table.put(&put)?)
    }

    fn get(&self, key: &[u8]) -> Result<Option<usize>> {
        READER.with_borrow_mut(|reader| {
            let reader = match reader {
                Some((id, reader)) if *id == self.id => reader,
                _ => &mut reader.insert((self.id, self.table.row_reader())).1,
            };
            let Some(row) = reader.get_row(key)? else {
                return Ok(None);
            };
            Ok(row
                .cells()
                .find(|c| c.family() == FAMILY && c.qualifier() == QUALIFIER)
                .map(|c| c.value().len()))
        })
    }

    fn delete(&self, key: &[u8]) -> Result<()> {
        // Durability comes from the table descriptor.
        Ok(self.table.delete(&Delete::new(key))?)
    }

    fn multi_get(&self, keys: &[Vec<u8>]) -> Result<u64> {
        let gets: Vec<Get> = keys.iter().map(Get::new).collect();
        let rows = self.table.get_many(&gets)?;
        Ok(rows
            .iter()
            .filter(|row| row.value(FAMILY, QUALIFIER).is_some())
            .count() as u64)
    }

    fn multi_get_method(&self) -> &'static str {
        "get_many (uncached blocks of all keys in one read_many batch)"
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u64) -> Result<ScanCount> {
        let mut scan = Scan::new().start(start).limit(limit);
        if let Some(end) = end {
            scan = scan.stop(end);
        }
        count_rows(&self.table, &scan)
    }

    fn filter_scan(&self, query: &FilterQuery) -> Result<ScanCount> {
        let mut scan = Scan::new();
        if !query.start.is_empty() {
            scan = scan.start(&query.start);
        }
        if let Some(end) = &query.end {
            scan = scan.stop(end);
        }
        if let Some(filter) = query.hbase_filter() {
            scan = scan.filter_string(&filter)?;
        }
        count_rows(&self.table, &scan)
    }

    fn presplit(&self, split_keys: &[Vec<u8>]) -> Result<()> {
        for key in split_keys {
            self.table.split(Some(key))?;
        }
        Ok(())
    }

    fn load_finished(&self) -> Result<()> {
        // Flush every memstore into HFiles and wait for it.
        Ok(self.db.flush()?)
    }

    fn settle(&self) -> Result<()> {
        self.db.wait_for_background_work()?;
        // AsyncWal frames still waiting for the WAL writer's interval (up to
        // 100 ms) would otherwise be written and synced during the next
        // timed phase, competing with its reads (and, with --cold, leaving
        // dirty pages behind).
        Ok(self.db.sync_wal()?)
    }

    fn wal_counters(&self) -> Option<WalCounters> {
        let wal = self.db.stats().wal;
        Some(WalCounters {
            groups: wal.groups_written,
            frames: wal.frames_written,
            syncs: wal.syncs,
            sync_micros: wal.sync_micros_total,
        })
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let stats = self.db.stats();
        vec![
            ("memstore_bytes", stats.memstore_bytes),
            ("hfiles", stats.files),
            ("hfile_bytes", stats.file_bytes),
            ("flushes", stats.flushes),
            ("compactions", stats.compactions),
            ("hfile_bytes_written", stats.hfile_bytes_written),
            ("stall_micros", stats.stall_micros),
            ("block_cache_hits", stats.cache.hits),
            ("block_cache_misses", stats.cache.misses),
            ("block_cache_bytes", stats.cache.bytes),
            ("wal_bytes_written", stats.wal.bytes_written),
        ]
    }

    fn io_backend(&self) -> Option<&'static str> {
        Some(self.db.stats().io_backend.name())
    }

    fn close(self: Box<Self>) -> Result<()> {
        Ok(self.db.close()?)
    }
}

/// Runs `scan`; counts its rows and their bytes (row keys and values).
fn count_rows(table: &Table, scan: &Scan) -> Result<ScanCount> {
    // The borrowing cursor: what a program reading many rows should use.
    let mut count = ScanCount::default();
    let mut cursor = table.scan_cursor(scan)?;
    while let Some(row) = cursor.next_row()? {
        count.entries += 1;
        count.bytes +=
            row.row().len() as u64 + row.cells().map(|c| c.value().len() as u64).sum::<u64>();
    }
    Ok(count)
}
