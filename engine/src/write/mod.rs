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

use std::sync::Arc;
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
    FRAME_HEADER_BYTES, MAX_RECORD_BYTES, begin_frame, encode_mutation, finish_frame,
    mutation_payload_bytes,
};

/// One cell of a prepared mutation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PreparedCell {
    pub(crate) qualifier: Vec<u8>,
    pub(crate) timestamp: i64,
    pub(crate) kind: CellKind,
    pub(crate) value: Vec<u8>,
}

/// The cells of one family of a prepared mutation.
pub(crate) struct PreparedFamily {
    pub(crate) store: Arc<Store>,
    pub(crate) cells: Vec<PreparedCell>,
}

/// A validated mutation of one row, ready to commit.
pub(crate) struct PreparedRow {
    pub(crate) region: Arc<Region>,
    pub(crate) row: Vec<u8>,
    pub(crate) families: Vec<PreparedFamily>,
    pub(crate) durability: Durability,
}

impl PreparedRow {
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
        let len = self.encoded_len();
        if len > MAX_RECORD_BYTES {
            return Err(Error::MutationTooLarge {
                len,
                max: MAX_RECORD_BYTES,
            });
        }
        Ok(())
    }
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
pub(crate) fn commit(services: &Services, rows: &[PreparedRow]) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    services.check_writable()?;
    let timing = Latencies::start(Sampled::Write);
    let count = rows.len() as u64;
    let first = services.mvcc.begin(count);
    if let Err(e) = log(services, rows, first) {
        services.mvcc.complete(first, count);
        return Err(services.fail_change(e));
    }
    let mut grown_total = 0u64;
    let mut cells: Vec<NewCell<'_>> = Vec::new();
    for (sequence, row) in (first..).zip(rows) {
        let mut grown = 0u64;
        for family in &row.families {
            cells.clear();
            cells.extend(family.cells.iter().map(|c| NewCell {
                row: &row.row,
                qualifier: &c.qualifier,
                timestamp: c.timestamp,
                kind: c.kind,
                sequence,
                value: &c.value,
            }));
            grown += family.store.insert(sequence, &cells);
        }
        row.region.add_memstore_bytes(grown as i64);
        let activity = &row.region.activity;
        activity.rows_written.fetch_add(1, Ordering::Relaxed);
        activity.bytes_written.fetch_add(grown, Ordering::Relaxed);
        grown_total += grown;
    }
    services
        .memstore_bytes
        .fetch_add(grown_total, Ordering::Relaxed);
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
    let mut frames = Vec::with_capacity(wal_bytes);
    let mut frame_count = 0u64;
    let mut sync = None;
    let mut max_sequence = 0;
    for (sequence, row) in (first..).zip(rows) {
        if row.durability == Durability::SkipWal {
            continue;
        }
        let frame = begin_frame(&mut frames);
        encode_mutation(
            &mut frames,
            row.region.id(),
            sequence,
            &row.row,
            row.families.iter().map(|f| {
                (
                    f.store.family_id(),
                    f.cells.iter().map(|c| {
                        (
                            c.kind,
                            c.timestamp,
                            c.qualifier.as_slice(),
                            c.value.as_slice(),
                        )
                    }),
                )
            }),
        );
        finish_frame(&mut frames, frame);
        frame_count += 1;
        max_sequence = sequence;
        sync = stronger(sync, sync_kind(row.durability));
    }
    if frame_count == 0 {
        return Ok(());
    }
    let wal = services.wal()?;
    let ticket = wal.append(&frames, frame_count, max_sequence, sync)?;
    if sync.is_some() {
        wal.wait(ticket)?;
    }
    Ok(())
}
