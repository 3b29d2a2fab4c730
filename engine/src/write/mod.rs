//! The write path, for one group of already validated row mutations whose
//! rows the caller has locked:
//!
//! sequence numbers (MVCC) -> WAL frames (group commit; `SyncWal` waits for
//! the sync) -> memstore inserts -> read point advances -> return.
//!
//! If the WAL refuses or fails, the sequences are still completed (as empty)
//! so that the read point can move on; nothing reached a memstore. An I/O
//! failure after the WAL write started leaves the outcome unknown, as in any
//! database: the record may or may not be replayed after a restart. A WAL
//! failure stops every later change ([`Error::WritesStopped`], see
//! `docs/reliability.md`): the failed write or sync is never retried, since
//! a retried sync could report success for data the page cache dropped.

use std::borrow::Cow;
use std::sync::Arc;

use smallvec::SmallVec;
use std::sync::atomic::Ordering;

use crate::cell::CellKind;
use crate::core::Services;
use crate::error::{Error, Result};
use crate::io::SyncKind;
use crate::memstore::NewCell;
use crate::metrics::{Latencies, Sampled};
use crate::options::Durability;
use crate::region::Region;
use crate::store::Store;
use crate::wal::format::{
    CellParts, FRAME_HEADER_BYTES, MAX_RECORD_BYTES, begin_frame, encode_multi_row,
    encode_mutation, finish_frame, multi_row_payload_bytes, mutation_payload_bytes,
};

/// One cell of a prepared mutation. Its bytes are borrowed from the
/// mutation when it has them (a put's qualifier and value: copying them
/// was two allocations a put) and owned when the write made them (an
/// increment's new value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PreparedCell<'a> {
    pub(crate) qualifier: Cow<'a, [u8]>,
    pub(crate) timestamp: i64,
    pub(crate) kind: CellKind,
    pub(crate) value: Cow<'a, [u8]>,
}

/// The cells of one family of a prepared mutation.
pub(crate) struct PreparedFamily<'a> {
    pub(crate) store: Arc<Store>,
    /// Inline while a mutation writes one cell to the family (the usual put).
    pub(crate) cells: SmallVec<[PreparedCell<'a>; 1]>,
}

/// A validated mutation of one row, ready to commit; its row key is
/// borrowed from the mutation.
pub(crate) struct PreparedRow<'a> {
    /// Borrowed from the table state the write routed by, which the writer
    /// holds until the commit is done (a reference count taken and dropped
    /// a put was two locked instructions).
    pub(crate) region: &'a Arc<Region>,
    pub(crate) row: &'a [u8],
    /// Inline while the mutation writes one family.
    pub(crate) families: SmallVec<[PreparedFamily<'a>; 1]>,
    pub(crate) durability: Durability,
}

impl PreparedRow<'_> {
    /// Bytes the WAL payload of this row takes (exactly what `encode_mutation` writes).
    pub(crate) fn encoded_len(&self) -> usize {
        mutation_payload_bytes(
            self.row.len(),
            self.families
                .iter()
                .map(|f| f.cells.iter().map(|c| (c.qualifier.len(), c.value.len()))),
        )
    }

    /// Rejects rows whose WAL record would exceed the limit.
    pub(crate) fn check_size(&self) -> Result<()> {
        check_record_size(self.encoded_len())
    }

    /// The row's families as the WAL encoders take them.
    fn logged_families(
        &self,
    ) -> impl ExactSizeIterator<Item = (u32, impl ExactSizeIterator<Item = CellParts<'_>>)> {
        self.families.iter().map(|f| {
            (
                f.store.family_id(),
                f.cells
                    .iter()
                    .map(|c| (c.kind, c.timestamp, c.qualifier.as_ref(), c.value.as_ref())),
            )
        })
    }
}

/// Rejects a WAL record payload of `len` bytes over the limit.
fn check_record_size(len: usize) -> Result<()> {
    if len > MAX_RECORD_BYTES {
        return Err(Error::MutationTooLarge {
            len,
            max: MAX_RECORD_BYTES,
        });
    }
    Ok(())
}

/// Rejects rows whose multi-row WAL record would exceed the limit.
pub(crate) fn check_together_size(rows: &[PreparedRow]) -> Result<()> {
    check_record_size(multi_row_payload_bytes(
        rows.iter().map(PreparedRow::encoded_len),
    ))
}

/// How the rows of one commit become visible and durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visibility {
    /// Each row on its own: a sequence and a WAL frame per row.
    EachRow,
    /// All rows at once: one sequence and one WAL frame (a multi-row
    /// mutation) for all of them, so that readers and replay see all of
    /// them or none. The rows share one region.
    AllRows,
}

fn sync_kind(durability: Durability) -> Option<SyncKind> {
    match durability {
        Durability::SkipWal | Durability::AsyncWal => None,
        Durability::SyncWal => Some(SyncKind::Data),
        Durability::FsyncWal => Some(SyncKind::All),
    }
}

fn stronger(a: Option<SyncKind>, b: Option<SyncKind>) -> Option<SyncKind> {
    match (a, b) {
        (Some(SyncKind::All), _) | (_, Some(SyncKind::All)) => Some(SyncKind::All),
        (Some(SyncKind::Data), _) | (_, Some(SyncKind::Data)) => Some(SyncKind::Data),
        _ => None,
    }
}

/// Logs and applies `rows`; each row becomes visible atomically, in order.
/// A store's active memstore that reaches `active_memstore_limit` bytes (if
/// any) is frozen ([`crate::store::active_memstore_limit`]).
pub(crate) fn commit(
    services: &Services,
    rows: &[PreparedRow],
    active_memstore_limit: Option<u64>,
) -> Result<()> {
    commit_rows(services, rows, Visibility::EachRow, active_memstore_limit)
}

/// Logs and applies `rows` (all of one region, each row at most once) as
/// one multi-row mutation: one sequence, one WAL frame, so that readers see
/// all of them or none and replay after a crash applies all or none.
pub(crate) fn commit_together(
    services: &Services,
    rows: &[PreparedRow],
    active_memstore_limit: Option<u64>,
) -> Result<()> {
    debug_assert!(
        rows.windows(2)
            .all(|pair| pair[0].region.id() == pair[1].region.id()),
        "a multi-row mutation stays in one region"
    );
    commit_rows(services, rows, Visibility::AllRows, active_memstore_limit)
}

fn commit_rows(
    services: &Services,
    rows: &[PreparedRow],
    visibility: Visibility,
    active_memstore_limit: Option<u64>,
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    services.check_writable()?;
    let timing = Latencies::start(Sampled::Write);
    let count = match visibility {
        Visibility::EachRow => rows.len() as u64,
        Visibility::AllRows => 1,
    };
    let first = services.mvcc.begin(count);
    let logged = match visibility {
        Visibility::EachRow => log(services, rows, first),
        Visibility::AllRows => log_together(services, rows, first),
    };
    if let Err(e) = logged {
        services.mvcc.complete(first, count);
        return Err(services.fail_change(e));
    }
    let mut grown_total = 0u64;
    // On the stack for mutations of up to four cells a family.
    let mut cells: SmallVec<[NewCell<'_>; 4]> = SmallVec::new();
    for (index, row) in (0u64..).zip(rows) {
        let sequence = match visibility {
            Visibility::EachRow => first + index,
            Visibility::AllRows => first,
        };
        let mut grown = 0u64;
        for family in &row.families {
            cells.clear();
            cells.extend(family.cells.iter().map(|c| NewCell {
                row: row.row,
                qualifier: &c.qualifier,
                timestamp: c.timestamp,
                kind: c.kind,
                sequence,
                value: &c.value,
            }));
            let grew = family.store.insert(sequence, &cells);
            // A memstore grows a chunk at a time (2 MiB once large), so this
            // is checked about once per 13,000 small cells.
            if let Some(limit) = active_memstore_limit
                && grew > 0
                && family.store.active_is_full(limit)
            {
                services
                    .mvcc
                    .at_sequence_boundary(|boundary| family.store.freeze_if_full(boundary, limit));
            }
            grown += grew;
        }
        // A memstore grows a chunk at a time, so `grown` is almost always
        // 0: the shared counters are changed only when it is not (each
        // change is a locked instruction, which waits for every store
        // before it to drain; three of them were ~4% of a small put).
        let activity = &row.region.activity;
        activity.rows_written.fetch_add(1, Ordering::Relaxed);
        if grown > 0 {
            row.region.add_memstore_bytes(grown as i64);
            activity.bytes_written.fetch_add(grown, Ordering::Relaxed);
        }
        grown_total += grown;
    }
    if grown_total > 0 {
        services
            .memstore_bytes
            .fetch_add(grown_total, Ordering::Relaxed);
    }
    services.mvcc.complete(first, count);
    services.mvcc.wait_visible(first + count - 1);
    Latencies::finish(&services.latencies.write, timing);
    Ok(())
}

/// Appends the WAL frames of `rows` (sequences from `first`) and waits for
/// the sync when any row's durability asks for it.
fn log(services: &Services, rows: &[PreparedRow], first: u64) -> Result<()> {
    // Sized up front and encoded in place: growing the buffers cell by cell
    // and copying each payload into its frame were ~5% of a small put.
    let wal_bytes: usize = rows
        .iter()
        .filter(|row| row.durability != Durability::SkipWal)
        .map(|row| FRAME_HEADER_BYTES + row.encoded_len())
        .sum();
    if wal_bytes == 0 {
        return Ok(());
    }
    with_frame_buffer(wal_bytes, |frames| {
        let mut frame_count = 0u64;
        let mut sync = None;
        let mut max_sequence = 0;
        for (sequence, row) in (first..).zip(rows) {
            if row.durability == Durability::SkipWal {
                continue;
            }
            let frame = begin_frame(frames);
            encode_mutation(
                frames,
                row.region.id(),
                sequence,
                row.row,
                row.logged_families(),
            );
            finish_frame(frames, frame);
            frame_count += 1;
            max_sequence = sequence;
            sync = stronger(sync, sync_kind(row.durability));
        }
        append_frames(services, frames, frame_count, max_sequence, sync)
    })
}

/// Largest frame buffer a writing thread keeps for its next write, in bytes; a write of
/// more gets a buffer of its own (freed when it is done).
const KEPT_FRAME_BUFFER_BYTES: usize = 64 * 1024;

thread_local! {
    /// The thread's buffer for encoding its writes' WAL frames: the WAL copies the frames
    /// into its group, so the buffer is free again when the append returns, and a put need
    /// not allocate one (a malloc and free a put).
    static FRAME_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `encode` with an empty buffer that has room for `bytes`.
fn with_frame_buffer<T>(bytes: usize, encode: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    if bytes > KEPT_FRAME_BUFFER_BYTES {
        return encode(&mut Vec::with_capacity(bytes));
    }
    FRAME_BUFFER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut frames) => {
            frames.clear();
            frames.reserve(bytes);
            encode(&mut frames)
        }
        // Only a write made from inside another's encoding could find it taken; none is,
        // but a buffer of its own is correct either way.
        Err(_) => encode(&mut Vec::with_capacity(bytes)),
    })
}

/// Appends one multi-row mutation frame holding `rows` at `sequence`
/// (nothing when every row skips the WAL) and waits for the sync when any
/// row's durability asks for it.
fn log_together(services: &Services, rows: &[PreparedRow], sequence: u64) -> Result<()> {
    let logged: Vec<&PreparedRow> = rows
        .iter()
        .filter(|row| row.durability != Durability::SkipWal)
        .collect();
    let Some(first) = logged.first() else {
        return Ok(());
    };
    let payload = multi_row_payload_bytes(logged.iter().map(|row| row.encoded_len()));
    let mut frames = Vec::with_capacity(FRAME_HEADER_BYTES + payload);
    let frame = begin_frame(&mut frames);
    encode_multi_row(
        &mut frames,
        first.region.id(),
        sequence,
        logged.iter().map(|row| (row.row, row.logged_families())),
    );
    finish_frame(&mut frames, frame);
    let sync = logged
        .iter()
        .fold(None, |sync, row| stronger(sync, sync_kind(row.durability)));
    append_frames(services, &frames, 1, sequence, sync)
}

/// Hands encoded frames to the WAL; waits for their sync when asked.
fn append_frames(
    services: &Services,
    frames: &[u8],
    frame_count: u64,
    max_sequence: u64,
    sync: Option<SyncKind>,
) -> Result<()> {
    if frame_count == 0 {
        return Ok(());
    }
    let wal = services.wal()?;
    let ticket = wal.append(frames, frame_count, max_sequence, sync)?;
    if sync.is_some() {
        wal.wait(ticket)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{Db, DbOptions, FamilyDescriptor, Get, Put, Scan, TableDescriptor};

    /// Rows written; about 160 bytes of memstore each.
    const ROWS: usize = 2500;

    fn row(index: usize) -> String {
        format!("row{:06}", (index * 7919) % ROWS)
    }

    fn options(memstore_parts: u32) -> DbOptions {
        DbOptions {
            memstore_parts,
            ..DbOptions::default()
        }
    }

    fn write_rows(db: &Db) -> crate::Table {
        let table = db
            .create_table(
                TableDescriptor::new("t")
                    .family(FamilyDescriptor::new("f"))
                    .memstore_flush_size_bytes(1024 * 1024),
            )
            .unwrap();
        for index in 0..ROWS {
            table
                .put(&Put::new(row(index)).add("f", "q", [b'v'; 100]))
                .unwrap();
        }
        table
    }

    /// In four parts of a 1 MiB flush size the active memstore is frozen at
    /// 256 KiB (`store::active_memstore_limit`); 2,500 rows of 100 bytes
    /// fill more than that and less than a flush (memstores grow by chunks
    /// that double from 4 KiB: the first is frozen at 508 KiB).
    #[test]
    fn a_full_active_memstore_is_frozen_and_the_flush_writes_every_frozen_one_into_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options(4)).unwrap();
        let table = write_rows(&db);
        let store = table.state().unwrap().regions[0].stores()[0].clone();
        let version = store.version();
        assert!(
            !version.frozen.is_empty(),
            "the active memstore passed its limit and was frozen"
        );
        for frozen in &version.frozen {
            assert!(frozen.memstore.allocated_bytes() >= 256 * 1024);
            assert!(frozen.after < frozen.up_to);
        }
        assert!(version.levels.iter().all(Vec::is_empty), "nothing flushed");
        let every_row_is_read = |table: &crate::Table| {
            for index in 0..ROWS {
                assert_eq!(table.get(&Get::new(row(index))).unwrap().cells.len(), 1);
            }
            assert_eq!(table.scan(&Scan::new()).unwrap().count(), ROWS);
        };
        every_row_is_read(&table);

        table.flush().unwrap();
        let version = store.version();
        assert!(version.frozen.is_empty());
        assert_eq!(version.levels[0].len(), 1, "one file from every memstore");
        every_row_is_read(&table);
        drop((table, store, version));
        db.close().unwrap();
        let db = Db::open(dir.path(), options(4)).unwrap();
        every_row_is_read(&db.table("t").unwrap());
    }

    #[test]
    fn in_one_part_only_a_flush_freezes_the_active_memstore() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options(1)).unwrap();
        let table = write_rows(&db);
        let version = table.state().unwrap().regions[0].stores()[0].version();
        assert!(version.frozen.is_empty());
        assert!(version.levels.iter().all(Vec::is_empty), "nothing flushed");
    }

    #[test]
    fn memstore_parts_outside_one_to_sixteen_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for parts in [0, 17] {
            let error = Db::open(dir.path(), options(parts)).err().unwrap();
            assert!(
                error.to_string().contains("memstore_parts"),
                "{parts}: {error}"
            );
        }
    }
}
