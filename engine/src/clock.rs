//! Where "now" comes from: the server clock for default timestamps and TTL.
//!
//! Tests and simulations swap in a [`ManualClock`] so that TTL expiry and
//! default timestamps are deterministic.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current time in milliseconds since the Unix epoch.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since 1970-01-01T00:00:00Z; never negative.
    fn now_ms(&self) -> i64;
}

/// The operating system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that only moves when told to.
#[derive(Debug, Default)]
pub struct ManualClock {
    now_ms: AtomicI64,
}

impl ManualClock {
    /// A clock reading `now_ms` (clamped at 0).
    pub fn new(now_ms: i64) -> Self {
        ManualClock {
            now_ms: AtomicI64::new(now_ms.max(0)),
        }
    }

    /// Sets the reading (clamped at 0).
    pub fn set(&self, now_ms: i64) {
        self.now_ms.store(now_ms.max(0), Ordering::SeqCst);
    }

    /// Moves the reading forward by `delta_ms`.
    pub fn advance(&self, delta_ms: i64) {
        self.now_ms.fetch_add(delta_ms.max(0), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(1000);
        assert_eq!(c.now_ms(), 1000);
        c.advance(5);
        assert_eq!(c.now_ms(), 1005);
        c.set(-3);
        assert_eq!(c.now_ms(), 0);
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_ms() > 1_577_836_800_000);
    }
}
