//! Sequence numbers and the read point.
//!
//! Every mutation takes the next sequence number in [`Mvcc::begin`]; all its
//! cells carry it. Readers see exactly the cells whose sequence is at most
//! the *read point*, which only moves past a sequence once every mutation
//! up to it has finished inserting ([`Mvcc::complete`]). So a reader never
//! sees half a mutation, and never sees a mutation while an older one is
//! still missing.
//!
//! Invariants: sequences are handed out consecutively; `pending` holds one
//! flag per sequence in `read_point + 1 ..= next_sequence - 1`, in order;
//! its length is bounded by the number of mutations in flight.

use std::collections::VecDeque;

use parking_lot::Mutex;

use crate::watermark::Watermark;

struct Pending {
    /// Sequence of `done[0]`.
    first: u64,
    /// Whether each sequence from `first` on has completed.
    done: VecDeque<bool>,
    next_sequence: u64,
}

/// Hands out sequence numbers and tracks the read point.
pub(crate) struct Mvcc {
    pending: Mutex<Pending>,
    /// The read point; raised after `pending` is released, so waking the
    /// writers it covers does not hold up the next `begin` or `complete`.
    read_point: Watermark,
}

impl Mvcc {
    /// An MVCC whose last used sequence is `last_sequence` (all visible).
    pub(crate) fn new(last_sequence: u64) -> Self {
        Mvcc {
            pending: Mutex::new(Pending {
                first: last_sequence + 1,
                done: VecDeque::new(),
                next_sequence: last_sequence + 1,
            }),
            read_point: Watermark::new(last_sequence),
        }
    }

    /// Every cell with a sequence at most this is visible to new readers.
    pub(crate) fn read_point(&self) -> u64 {
        self.read_point.get()
    }

    /// The highest sequence handed out so far.
    pub(crate) fn last_sequence(&self) -> u64 {
        self.pending.lock().next_sequence - 1
    }

    /// Reserves `count` consecutive sequences; returns the first.
    pub(crate) fn begin(&self, count: u64) -> u64 {
        let mut p = self.pending.lock();
        let first = p.next_sequence;
        p.next_sequence += count;
        p.done.extend(std::iter::repeat_n(false, count as usize));
        first
    }

    /// Runs `f` with the highest sequence handed out so far, while no new
    /// sequence can be handed out: every mutation with a sequence <= the
    /// argument began before `f`, every later one begins after it. Flush uses
    /// this to freeze memstores at an exact sequence.
    pub(crate) fn at_sequence_boundary<R>(&self, f: impl FnOnce(u64) -> R) -> R {
        let p = self.pending.lock();
        let result = f(p.next_sequence - 1);
        drop(p);
        result
    }

    /// Marks `first..first+count` finished (applied or abandoned) and moves
    /// the read point over every finished prefix.
    pub(crate) fn complete(&self, first: u64, count: u64) {
        let mut p = self.pending.lock();
        for sequence in first..first + count {
            if let Some(flag) = sequence
                .checked_sub(p.first)
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| p.done.get_mut(i))
            {
                *flag = true;
            }
        }
        let mut moved = false;
        while p.done.front() == Some(&true) {
            p.done.pop_front();
            p.first += 1;
            moved = true;
        }
        let finished_through = p.first - 1;
        drop(p);
        if moved {
            // Two completions may raise out of order; the watermark keeps the
            // higher value, and both values were finished prefixes.
            self.read_point.advance_to(finished_through);
        }
    }

    /// Waits until `sequence` is visible.
    pub(crate) fn wait_visible(&self, sequence: u64) {
        // The read point is never halted: every begun sequence completes.
        self.read_point.wait_for(sequence);
    }
}

/// Row locks for read-modify-write and for every mutation: a fixed array of
/// mutexes selected by a hash of (table, row). Several rows may share a
/// stripe, which only costs a little concurrency. Locking several rows takes
/// their stripes in ascending order, so lock sets never deadlock.
pub(crate) struct RowLocks {
    stripes: Box<[Mutex<()>]>,
}

/// Number of row lock stripes.
const ROW_LOCK_STRIPES: usize = 4096;

/// Held row locks; released on drop.
pub(crate) struct RowLockGuard<'a> {
    _guards: Vec<parking_lot::MutexGuard<'a, ()>>,
}

impl RowLocks {
    pub(crate) fn new() -> Self {
        RowLocks {
            stripes: (0..ROW_LOCK_STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }

    fn stripe(table_id: u64, row: &[u8]) -> usize {
        let hash = xxhash_rust::xxh3::xxh3_64_with_seed(row, table_id);
        (hash % ROW_LOCK_STRIPES as u64) as usize
    }

    /// Locks every row of `rows` (of table `table_id`).
    pub(crate) fn lock<'a, 'r>(
        &'a self,
        table_id: u64,
        rows: impl IntoIterator<Item = &'r [u8]>,
    ) -> RowLockGuard<'a> {
        let mut stripes: Vec<usize> = rows
            .into_iter()
            .map(|row| Self::stripe(table_id, row))
            .collect();
        stripes.sort_unstable();
        stripes.dedup();
        RowLockGuard {
            _guards: stripes
                .into_iter()
                .filter_map(|s| self.stripes.get(s).map(Mutex::lock))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn read_point_waits_for_the_oldest_pending_sequence() {
        let m = Mvcc::new(10);
        assert_eq!(m.read_point(), 10);
        let a = m.begin(1);
        let b = m.begin(2);
        assert_eq!((a, b), (11, 12));
        m.complete(b, 2);
        assert_eq!(m.read_point(), 10, "11 is still in flight");
        m.complete(a, 1);
        assert_eq!(m.read_point(), 13);
        assert_eq!(m.last_sequence(), 13);
    }

    #[test]
    fn waiters_wake_when_their_sequence_becomes_visible() {
        let m = Arc::new(Mvcc::new(0));
        let first = m.begin(1);
        let second = m.begin(1);
        let waiter = {
            let m = m.clone();
            std::thread::spawn(move || m.wait_visible(second))
        };
        m.complete(second, 1);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!waiter.is_finished());
        m.complete(first, 1);
        waiter.join().unwrap();
        assert_eq!(m.read_point(), 2);
    }

    #[test]
    fn row_locks_exclude_and_multi_row_sets_do_not_deadlock() {
        let locks = Arc::new(RowLocks::new());
        let counter = Arc::new(Mutex::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let locks = locks.clone();
                let counter = counter.clone();
                std::thread::spawn(move || {
                    for i in 0..500u64 {
                        let rows: Vec<Vec<u8>> = (0..3)
                            .map(|k| ((i + k + t) % 7).to_be_bytes().to_vec())
                            .collect();
                        let _g = locks.lock(1, rows.iter().map(Vec::as_slice));
                        *counter.lock() += 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*counter.lock(), 2000);
    }
}
