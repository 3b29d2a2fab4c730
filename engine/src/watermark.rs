//! A monotonic counter that threads wait on until it reaches their target.
//!
//! Two waits sit on every synchronous write: for the WAL group's sync and
//! for the read point to cover the write. With a condition variable both
//! woke their waiters one after another: a notify moved every waiter onto
//! the mutex, and each woken thread had to take the mutex and let it go
//! before the next one could run, a chain of wake-ups (measured ~8 us a
//! link on a 2-vCPU VM) that left the group's last writer waking long
//! after its sync, and one writer in two slept on the read point at least
//! once. Here a waiter parks on the counter's address with its target as
//! the park token; raising the counter wakes exactly the waiters whose
//! target it reaches, all at once, and none of them needs a lock to leave.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use parking_lot_core::{DEFAULT_UNPARK_TOKEN, FilterOp, ParkToken};

/// A counter that only grows, with threads waiting for it to reach a value.
///
/// Invariant: a thread parked here for target `t` is woken by the
/// [`Watermark::advance_to`] that makes the value reach `t`, or by
/// [`Watermark::halt`]. Waiters announce themselves in `waiters` before they
/// check the value one last time, and raisers store the value before they
/// read `waiters` (both sequentially consistent), so a raise never misses a
/// waiter that saw the old value.
pub(crate) struct Watermark {
    value: AtomicU64,
    /// Threads parked, or about to park, on this watermark.
    waiters: AtomicUsize,
    /// Once set, every waiter returns whether or not its target was reached.
    halted: AtomicBool,
}

impl Watermark {
    /// A watermark at `value`.
    pub(crate) fn new(value: u64) -> Self {
        Watermark {
            value: AtomicU64::new(value),
            waiters: AtomicUsize::new(0),
            halted: AtomicBool::new(false),
        }
    }

    /// The current value.
    pub(crate) fn get(&self) -> u64 {
        self.value.load(Ordering::Acquire)
    }

    /// Waits until the value is at least `target`; returns `false` if the
    /// watermark was halted before it got there.
    pub(crate) fn wait_for(&self, target: u64) -> bool {
        loop {
            if self.get() >= target {
                return true;
            }
            if self.halted.load(Ordering::Acquire) {
                return self.get() >= target;
            }
            self.waiters.fetch_add(1, Ordering::SeqCst);
            let validate = || {
                self.value.load(Ordering::SeqCst) < target && !self.halted.load(Ordering::SeqCst)
            };
            // SAFETY: the key is this watermark's address, which cannot move
            // while `self` is borrowed; the closures neither panic nor call
            // into parking_lot.
            unsafe {
                parking_lot_core::park(
                    self.key(),
                    validate,
                    || {},
                    |_, _| {},
                    ParkToken(token_of(target)),
                    None,
                );
            }
            self.waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Raises the value to `value` (a lower value changes nothing) and wakes
    /// every waiter whose target is now reached.
    pub(crate) fn advance_to(&self, value: u64) {
        self.value.fetch_max(value, Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) == 0 {
            return;
        }
        let reached = self.value.load(Ordering::SeqCst);
        let filter = |ParkToken(token)| {
            if target_of(token) <= reached {
                FilterOp::Unpark
            } else {
                FilterOp::Skip
            }
        };
        // SAFETY: as in `wait_for`; the filter and callback neither panic
        // nor call into parking_lot.
        unsafe {
            parking_lot_core::unpark_filter(self.key(), filter, |_| DEFAULT_UNPARK_TOKEN);
        }
    }

    /// Wakes every waiter for good: later waits return at once.
    pub(crate) fn halt(&self) {
        self.halted.store(true, Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) > 0 {
            // SAFETY: as in `wait_for`.
            unsafe {
                parking_lot_core::unpark_all(self.key(), DEFAULT_UNPARK_TOKEN);
            }
        }
    }

    fn key(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }
}

/// The park token of a target. A target beyond `usize` (32-bit targets)
/// becomes `usize::MAX`, which [`target_of`] reads as "wake on any raise":
/// such a waiter may wake early, and then simply checks and parks again.
fn token_of(target: u64) -> usize {
    usize::try_from(target).unwrap_or(usize::MAX)
}

/// The target a park token stands for, rounded down (see [`token_of`]).
fn target_of(token: usize) -> u64 {
    if token == usize::MAX { 0 } else { token as u64 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_reached_target_returns_at_once() {
        let mark = Watermark::new(5);
        assert!(mark.wait_for(5));
        assert!(mark.wait_for(0));
        mark.advance_to(3);
        assert_eq!(mark.get(), 5, "the value never goes down");
    }

    #[test]
    fn advancing_wakes_exactly_the_waiters_whose_target_is_reached() {
        let mark = Arc::new(Watermark::new(0));
        let waiters: Vec<_> = [1u64, 2, 3, 10]
            .into_iter()
            .map(|target| {
                let mark = mark.clone();
                std::thread::spawn(move || (target, mark.wait_for(target)))
            })
            .collect();
        while mark.waiters.load(Ordering::SeqCst) < 4 {
            std::thread::sleep(Duration::from_millis(1));
        }
        mark.advance_to(3);
        // The waiters for 1, 2 and 3 leave; the one for 10 stays parked.
        while mark.waiters.load(Ordering::SeqCst) > 1 {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(mark.waiters.load(Ordering::SeqCst), 1);
        mark.advance_to(10);
        let mut results: Vec<_> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
        results.sort();
        assert_eq!(results, vec![(1, true), (2, true), (3, true), (10, true)]);
    }

    #[test]
    fn halting_releases_waiters_without_reaching_their_target() {
        let mark = Arc::new(Watermark::new(0));
        let waiter = {
            let mark = mark.clone();
            std::thread::spawn(move || mark.wait_for(7))
        };
        while mark.waiters.load(Ordering::SeqCst) < 1 {
            std::thread::sleep(Duration::from_millis(1));
        }
        mark.halt();
        assert!(!waiter.join().unwrap());
        assert!(!mark.wait_for(7), "a halted watermark does not block");
        mark.advance_to(7);
        assert!(mark.wait_for(7));
    }

    #[test]
    fn many_raisers_and_waiters_never_lose_a_wake_up() {
        // Raisers advance in small steps while waiters chase them; a lost
        // wake-up leaves a waiter parked, which the timeout reports.
        let mark = Arc::new(Watermark::new(0));
        let (done, finished) = std::sync::mpsc::channel();
        for w in 0..4 {
            let mark = mark.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                for target in (w..2_000).step_by(4) {
                    assert!(mark.wait_for(target));
                }
                done.send(()).unwrap();
            });
        }
        let raisers: Vec<_> = (0..2)
            .map(|r| {
                let mark = mark.clone();
                std::thread::spawn(move || {
                    for value in (r..2_000).step_by(2) {
                        mark.advance_to(value);
                        if value % 64 == 0 {
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        for raiser in raisers {
            raiser.join().unwrap();
        }
        mark.advance_to(2_000);
        for _ in 0..4 {
            finished
                .recv_timeout(Duration::from_secs(60))
                .expect("a waiter never woke: a lost wake-up");
        }
    }
}
