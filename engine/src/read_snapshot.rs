//! Read snapshots: a read point held across several reads (RocksDB's
//! `GetSnapshot`/`ReleaseSnapshot`), and the registry of the read points
//! live snapshots hold, which compaction consults so that it keeps every
//! version a live snapshot can still read.
//!
//! Named `ReadSnapshot` because a "snapshot" in HBase's vocabulary is a
//! table snapshot (a named, durable copy of a table's files); a read
//! snapshot lives in memory only and ends at the latest with the database.
//!
//! Lifetime: the [`ReadSnapshot`] handle owns the hold. Gets and scans carry
//! a [`SnapshotRef`] (a weak reference) and take a strong one for as long as
//! they read, so that dropping the handle while a read runs cannot let a
//! compaction drop what that read still needs: the read point is given back
//! to the registry when the handle and every read using it have let go.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::error::{Error, Result};

/// The read points live read snapshots hold, with a count per point.
#[derive(Default)]
pub(crate) struct LiveSnapshots {
    held: Mutex<BTreeMap<u64, usize>>,
}

impl LiveSnapshots {
    /// Takes a snapshot at the read point `read_point` returns, read while
    /// the registry is locked: a compaction that lists the live snapshots
    /// either sees this one or listed them before the read point was taken
    /// (and then its input holds nothing newer than that read point).
    pub(crate) fn take(self: &Arc<Self>, read_point: impl FnOnce() -> u64) -> ReadSnapshot {
        let mut held = self.held.lock();
        let sequence = read_point();
        *held.entry(sequence).or_insert(0) += 1;
        drop(held);
        ReadSnapshot {
            hold: Arc::new(Hold {
                sequence,
                live: self.clone(),
                released: AtomicBool::new(false),
            }),
        }
    }

    /// The read points live snapshots hold, ascending, without repeats.
    pub(crate) fn sequences(&self) -> Vec<u64> {
        self.held.lock().keys().copied().collect()
    }

    fn give_back(&self, sequence: u64) {
        let mut held = self.held.lock();
        if let Some(count) = held.get_mut(&sequence) {
            *count -= 1;
            if *count == 0 {
                held.remove(&sequence);
            }
        }
    }
}

/// One held read point; given back when the last strong reference goes.
struct Hold {
    sequence: u64,
    live: Arc<LiveSnapshots>,
    /// Set when the handle was dropped: reads starting later refuse it.
    released: AtomicBool,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.live.give_back(self.sequence);
    }
}

/// A read point held across reads: gets, `get_many` and scans given it
/// ([`crate::Get::snapshot`], [`crate::Scan::snapshot`]) read exactly the
/// data that was visible when it was taken ([`crate::Db::read_snapshot`]),
/// however many writes, flushes, compactions and splits happen meanwhile.
/// Compaction keeps every version a live snapshot can read. Dropping the
/// handle (or [`ReadSnapshot::release`]) releases it; a get or scan that
/// still names it then fails with [`Error::SnapshotReleased`]. TTL expiry
/// is judged at the time of the read, not of the snapshot, as in HBase.
#[derive(Debug)]
pub struct ReadSnapshot {
    hold: Arc<Hold>,
}

impl std::fmt::Debug for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadSnapshot")
            .field("sequence", &self.sequence)
            .finish()
    }
}

impl ReadSnapshot {
    /// The sequence number the snapshot reads at: every mutation with a
    /// sequence at most this is visible to it, no later one is.
    pub fn sequence(&self) -> u64 {
        self.hold.sequence
    }

    /// Releases the snapshot (what dropping it does): compaction may drop
    /// what only it could read, once reads running with it have finished.
    pub fn release(self) {}

    /// A reference for a get or a scan to carry.
    pub(crate) fn reference(&self) -> SnapshotRef {
        SnapshotRef {
            sequence: self.hold.sequence,
            hold: Arc::downgrade(&self.hold),
        }
    }
}

impl Drop for ReadSnapshot {
    fn drop(&mut self) {
        self.hold.released.store(true, Ordering::Release);
    }
}

/// What a get or a scan carries of a [`ReadSnapshot`].
#[derive(Clone)]
pub(crate) struct SnapshotRef {
    sequence: u64,
    hold: Weak<Hold>,
}

impl std::fmt::Debug for SnapshotRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotRef")
            .field("sequence", &self.sequence)
            .finish()
    }
}

impl PartialEq for SnapshotRef {
    fn eq(&self, other: &Self) -> bool {
        self.sequence == other.sequence && Weak::ptr_eq(&self.hold, &other.hold)
    }
}

impl Eq for SnapshotRef {}

/// A snapshot's read point, held for the length of one read.
pub(crate) struct HeldReadPoint {
    sequence: u64,
    _hold: Arc<Hold>,
}

impl HeldReadPoint {
    /// The read point.
    pub(crate) fn sequence(&self) -> u64 {
        self.sequence
    }
}

impl std::fmt::Debug for HeldReadPoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HeldReadPoint({})", self.sequence)
    }
}

impl SnapshotRef {
    /// Holds the snapshot's read point for one read of the database whose
    /// registry is `live`: refused when the snapshot was released or is
    /// another database's.
    pub(crate) fn hold(&self, live: &Arc<LiveSnapshots>) -> Result<HeldReadPoint> {
        let hold = self
            .hold
            .upgrade()
            .filter(|hold| !hold.released.load(Ordering::Acquire))
            .ok_or(Error::SnapshotReleased {
                sequence: self.sequence,
            })?;
        if !Arc::ptr_eq(&hold.live, live) {
            return Err(Error::SnapshotOfAnotherDatabase);
        }
        Ok(HeldReadPoint {
            sequence: hold.sequence,
            _hold: hold,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_holds_each_point_until_every_holder_lets_go() {
        let live = Arc::new(LiveSnapshots::default());
        let a = live.take(|| 5);
        let b = live.take(|| 5);
        let c = live.take(|| 9);
        assert_eq!(live.sequences(), [5, 9]);
        let reference = a.reference();
        let during_read = reference.hold(&live).unwrap();
        drop(a);
        assert!(matches!(
            reference.hold(&live),
            Err(Error::SnapshotReleased { sequence: 5 })
        ));
        drop(b);
        assert_eq!(
            live.sequences(),
            [5, 9],
            "a running read keeps the point held"
        );
        drop(during_read);
        assert_eq!(live.sequences(), [9]);
        let other = Arc::new(LiveSnapshots::default());
        assert!(matches!(
            c.reference().hold(&other),
            Err(Error::SnapshotOfAnotherDatabase)
        ));
        c.release();
        assert!(live.sequences().is_empty());
    }
}
