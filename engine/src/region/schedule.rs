//! A region's scheduling state, owned by one type: which jobs are queued or
//! running for it, and the locks that keep its jobs apart.
//!
//! * Flush: at most one queued (`flush_queued`, cleared when the flush
//!   starts), and flushes of one region run one at a time (`flush_lock`).
//! * Compaction slot: one compaction of the region at a time. A queued
//!   background compaction takes the slot when it is queued and gives it back
//!   when it has run; a compaction or split the caller runs now takes over a
//!   queued one's slot (the queued job is dropped: what the caller runs
//!   covers it) or waits for a running one (woken when it gives the slot
//!   back), and holds the slot while it runs. A flush may run alongside:
//!   flushes only add L0 files, compactions only replace the files they
//!   picked. A compaction asked for while the slot is taken is remembered,
//!   and whoever gives the slot back queues one for it.
//! * Split: at most one queued (`split_queued`).
//! * Retired: a split replaced the region by its daughters; it takes no more
//!   jobs.

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{Condvar, Mutex, MutexGuard};

use std::time::Duration;

use crate::error::{Error, Result};

/// Longest a caller waiting for the compaction slot sleeps before it looks
/// again whether the database closed (closing wakes no slot waiter itself).
const SLOT_RECHECK: Duration = Duration::from_millis(10);

/// See the module documentation.
#[derive(Default)]
pub(crate) struct RegionSchedule {
    flush_queued: AtomicBool,
    flush_lock: Mutex<()>,
    /// Whether the compaction slot is taken, and whether a compaction was
    /// asked for meanwhile (one lock, so no request falls between a
    /// holder's last look and its giving the slot back).
    compaction_slot: Mutex<SlotState>,
    /// Signalled whenever the compaction slot is given back.
    compaction_freed: Condvar,
    split_queued: AtomicBool,
    retired: AtomicBool,
}

/// The compaction slot's state.
#[derive(Default)]
struct SlotState {
    /// True while the slot is taken (a compaction is queued or running, or
    /// a caller runs a compaction, split or merge now).
    taken: bool,
    /// True when a compaction was asked for while the slot was taken: the
    /// request could not queue one, so whoever frees the slot looks again
    /// (a flush that adds L0 files while a compaction runs would otherwise
    /// leave them uncompacted once that compaction, which looked before
    /// they came, gives the slot back).
    wanted: bool,
}

/// The compaction slot, held by a caller running a compaction or split now;
/// given back when dropped.
pub(crate) struct CompactionSlot<'a> {
    schedule: &'a RegionSchedule,
}

impl Drop for CompactionSlot<'_> {
    fn drop(&mut self) {
        self.schedule.give_back_compaction_slot();
    }
}

impl RegionSchedule {
    /// Marks a flush queued; false when one was queued already.
    pub(crate) fn queue_flush(&self) -> bool {
        !self.flush_queued.swap(true, Ordering::AcqRel)
    }

    /// Forgets a queued flush (it has frozen the memstores, so writes may
    /// queue the next one; or the queue was dropped).
    pub(crate) fn flush_dequeued(&self) {
        self.flush_queued.store(false, Ordering::Release);
    }

    /// Serializes flushes of the region: held for the whole flush.
    pub(crate) fn lock_flushes(&self) -> MutexGuard<'_, ()> {
        self.flush_lock.lock()
    }

    /// Takes the compaction slot for a background compaction about to be
    /// queued; false when it is taken (one is queued or running), and the
    /// request is then remembered for whoever frees the slot (see
    /// [`RegionSchedule::take_compaction_wanted`]).
    pub(crate) fn reserve_compaction_slot(&self) -> bool {
        let mut slot = self.compaction_slot.lock();
        if slot.taken {
            slot.wanted = true;
            return false;
        }
        slot.taken = true;
        slot.wanted = false;
        true
    }

    /// Gives the compaction slot back (a queued compaction ran, or was
    /// dropped) and wakes whoever waits for it. A request made meanwhile
    /// stays for [`RegionSchedule::take_compaction_wanted`].
    pub(crate) fn give_back_compaction_slot(&self) {
        self.compaction_slot.lock().taken = false;
        self.compaction_freed.notify_all();
    }

    /// True when a compaction was asked for while the slot was taken and
    /// nobody has acted on it since; clears the request. Whoever gave the
    /// slot back calls this and queues a compaction when it says so.
    pub(crate) fn take_compaction_wanted(&self) -> bool {
        std::mem::take(&mut self.compaction_slot.lock().wanted)
    }

    /// Waits for the compaction slot and takes it. A background compaction
    /// that holds the slot while it is only queued is taken over instead
    /// (`cancel_queued` removes it from the queue and says whether it did):
    /// waiting for it could wait forever, since the caller may be the very
    /// worker that would run it (a queued split on a one-thread pool). Only
    /// a compaction that is running is waited for. Fails with
    /// [`Error::Closed`] once `closed` says the database closed (checked at
    /// least every [`SLOT_RECHECK`]).
    pub(crate) fn wait_for_compaction_slot(
        &self,
        closed: impl Fn() -> bool,
        cancel_queued: impl Fn() -> bool,
    ) -> Result<CompactionSlot<'_>> {
        let mut slot = self.compaction_slot.lock();
        loop {
            if closed() {
                return Err(Error::Closed);
            }
            if !slot.taken {
                slot.taken = true;
                return Ok(CompactionSlot { schedule: self });
            }
            if cancel_queued() {
                // The queued job's reservation is ours now.
                return Ok(CompactionSlot { schedule: self });
            }
            let _ = self.compaction_freed.wait_for(&mut slot, SLOT_RECHECK);
        }
    }

    /// Marks a split queued; false when one was queued already.
    pub(crate) fn queue_split(&self) -> bool {
        !self.split_queued.swap(true, Ordering::AcqRel)
    }

    /// Forgets a queued split (it ran, or the queue was dropped).
    pub(crate) fn split_dequeued(&self) {
        self.split_queued.store(false, Ordering::Release);
    }

    /// Marks the region replaced by its daughters.
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }

    /// True once a split replaced the region.
    pub(crate) fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_waiter_gets_the_compaction_slot_when_the_queued_job_gives_it_back() {
        let schedule = Arc::new(RegionSchedule::default());
        assert!(schedule.reserve_compaction_slot());
        assert!(!schedule.reserve_compaction_slot(), "one at a time");
        let waiter = {
            let schedule = schedule.clone();
            std::thread::spawn(move || {
                let _slot = schedule
                    .wait_for_compaction_slot(|| false, || false)
                    .unwrap();
                assert!(!schedule.reserve_compaction_slot(), "held by the waiter");
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        assert!(!waiter.is_finished(), "waits while the slot is taken");
        schedule.give_back_compaction_slot();
        waiter.join().unwrap();
        assert!(schedule.reserve_compaction_slot(), "given back on drop");
    }

    /// A waiter waits for the compaction slot a running job holds, and the
    /// database closes; with `give_back` the job then gives the slot back
    /// (a wake-up), without it nothing wakes the waiter and its recheck must
    /// notice the close. Either way it returns [`Error::Closed`].
    fn close_while_waiting(give_back: bool) {
        let schedule = RegionSchedule::default();
        assert!(schedule.reserve_compaction_slot(), "held by a running job");
        let closed = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                schedule
                    .wait_for_compaction_slot(|| closed.load(Ordering::Acquire), || false)
                    .map(|_| ())
            });
            std::thread::sleep(Duration::from_millis(20));
            closed.store(true, Ordering::Release);
            if give_back {
                schedule.give_back_compaction_slot();
            }
            assert!(matches!(waiter.join().unwrap(), Err(Error::Closed)));
        });
    }

    /// A compaction asked for while the slot is taken (a flush finishing
    /// while a compaction runs) is remembered for whoever gives the slot
    /// back, once; a compaction queued afterwards covers it.
    #[test]
    fn a_compaction_asked_for_while_the_slot_is_taken_is_not_lost() {
        let schedule = RegionSchedule::default();
        assert!(!schedule.take_compaction_wanted(), "nothing asked yet");
        assert!(schedule.reserve_compaction_slot(), "a compaction runs");
        assert!(
            !schedule.reserve_compaction_slot(),
            "a flush asks meanwhile"
        );
        schedule.give_back_compaction_slot();
        assert!(schedule.take_compaction_wanted(), "the request survives");
        assert!(!schedule.take_compaction_wanted(), "and is taken once");

        // A slot held by a caller (a compaction run now) keeps the request
        // for that caller too.
        let slot = schedule
            .wait_for_compaction_slot(|| false, || false)
            .unwrap();
        assert!(!schedule.reserve_compaction_slot());
        drop(slot);
        assert!(schedule.take_compaction_wanted());

        // A compaction queued after the request looks after it: nothing is
        // left for the next holder.
        assert!(schedule.reserve_compaction_slot());
        assert!(!schedule.reserve_compaction_slot());
        schedule.give_back_compaction_slot();
        assert!(schedule.reserve_compaction_slot(), "queued anew");
        schedule.give_back_compaction_slot();
        assert!(!schedule.take_compaction_wanted(), "covered by that one");
    }

    #[test]
    fn a_closed_database_stops_the_wait() {
        close_while_waiting(true);
    }

    #[test]
    fn a_queued_compaction_is_taken_over_not_waited_for() {
        let schedule = RegionSchedule::default();
        assert!(schedule.reserve_compaction_slot(), "queued");
        let queued = AtomicBool::new(true);
        let slot = schedule
            .wait_for_compaction_slot(|| false, || queued.swap(false, Ordering::AcqRel))
            .unwrap();
        assert!(
            !queued.load(Ordering::Acquire),
            "the queued job was removed"
        );
        assert!(!schedule.reserve_compaction_slot(), "held by the caller");
        drop(slot);
        assert!(schedule.reserve_compaction_slot(), "given back once");
    }

    #[test]
    fn closing_stops_a_wait_without_a_wake_up() {
        close_while_waiting(false);
    }

    #[test]
    fn flushes_and_splits_queue_once() {
        let schedule = RegionSchedule::default();
        assert!(schedule.queue_flush());
        assert!(!schedule.queue_flush());
        schedule.flush_dequeued();
        assert!(schedule.queue_flush());
        assert!(schedule.queue_split());
        assert!(!schedule.queue_split());
        schedule.split_dequeued();
        assert!(schedule.queue_split());
        assert!(!schedule.is_retired());
        schedule.retire();
        assert!(schedule.is_retired());
    }
}
