//! The open-loop schedule: when each operation is meant to start.
//!
//! Every operation has an intended start time fixed by the schedule, not by
//! when the previous operation finished, so a stalled engine shows up as
//! late operations with long corrected latency instead of as fewer
//! operations (the coordinated-omission error of closed-loop tools). Times
//! are nanoseconds since the run's start.

use rand::RngExt;
use rand::rngs::SmallRng;

/// How intended start times are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Evenly: one operation every `1 / rate`.
    Uniform,
    /// A Poisson process: exponential gaps with mean `1 / rate`.
    Poisson,
}

/// One worker's intended start times within one rate step.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// The next intended start, ns since the run's start (fractional so
    /// that rates which do not divide a second do not drift).
    next_ns: f64,
    /// Mean gap between this worker's operations, ns.
    gap_ns: f64,
    arrival: Arrival,
}

impl Schedule {
    /// The schedule of worker `worker` of `workers` sharing `rate`
    /// operations per second from `start_ns` on: each worker runs at
    /// `rate / workers`, and uniform workers are staggered by a fraction of
    /// a gap so that together they are evenly spaced.
    pub fn new(rate: f64, workers: usize, worker: usize, start_ns: u64, arrival: Arrival) -> Self {
        let workers = workers.max(1);
        let gap_ns = 1e9 * workers as f64 / rate;
        let stagger = match arrival {
            Arrival::Uniform => gap_ns * worker as f64 / workers as f64,
            Arrival::Poisson => 0.0,
        };
        Schedule {
            next_ns: start_ns as f64 + stagger,
            gap_ns,
            arrival,
        }
    }

    /// The next operation's intended start (ns since the run's start).
    pub fn next(&mut self, rng: &mut SmallRng) -> u64 {
        let at = self.next_ns;
        self.next_ns += match self.arrival {
            Arrival::Uniform => self.gap_ns,
            // Inverse transform of a uniform draw in (0, 1].
            Arrival::Poisson => -self.gap_ns * (1.0 - rng.random::<f64>()).ln(),
        };
        at as u64
    }

    /// Mean gap between this worker's operations, ns.
    pub fn gap_ns(&self) -> f64 {
        self.gap_ns
    }
}

/// What a worker does with an operation, given the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatch {
    /// Too early: wait this many ns, then ask again.
    Wait(u64),
    /// Run it now; it starts this many ns after its intended start.
    Run {
        /// Schedule lag, ns.
        lag_ns: u64,
    },
    /// It is more than the allowed lag behind: count it as dropped and move
    /// on, so that a stall leaves a bounded debt instead of a burst that
    /// replays every missed operation.
    Drop,
}

/// Decides what to do with the operation intended at `intended_ns` when
/// the clock reads `now_ns`, allowing `max_lag_ns` of lag.
pub fn dispatch(intended_ns: u64, now_ns: u64, max_lag_ns: u64) -> Dispatch {
    if now_ns < intended_ns {
        Dispatch::Wait(intended_ns - now_ns)
    } else if now_ns - intended_ns > max_lag_ns {
        Dispatch::Drop
    } else {
        Dispatch::Run {
            lag_ns: now_ns - intended_ns,
        }
    }
}

/// Latencies of one operation, ns: corrected (from the intended start, what
/// a client arriving on schedule waits) and service (from the actual start,
/// what the engine took).
pub fn latencies(intended_ns: u64, started_ns: u64, finished_ns: u64) -> (u64, u64) {
    (
        finished_ns.saturating_sub(intended_ns),
        finished_ns.saturating_sub(started_ns),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn uniform_workers_interleave_evenly_at_the_shared_rate() {
        // 4 workers at 1000 ops/s in total: each runs every 4 ms, staggered
        // by 1 ms, so together they start one operation per millisecond.
        let mut rng = SmallRng::seed_from_u64(1);
        let mut starts: Vec<u64> = (0..4)
            .flat_map(|w| {
                let mut s = Schedule::new(1000.0, 4, w, 0, Arrival::Uniform);
                (0..250).map(|_| s.next(&mut rng)).collect::<Vec<_>>()
            })
            .collect();
        starts.sort_unstable();
        assert_eq!(starts.len(), 1000);
        for (i, t) in starts.iter().enumerate() {
            assert_eq!(*t, i as u64 * 1_000_000);
        }
    }

    #[test]
    fn rates_that_do_not_divide_a_second_do_not_drift() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut s = Schedule::new(3.0, 1, 0, 5_000, Arrival::Uniform);
        let t: Vec<u64> = (0..301).map(|_| s.next(&mut rng)).collect();
        // 300 gaps of 1/3 s are 100 s exactly (within float rounding).
        assert!((t[300] as i64 - (100_000_000_000 + 5_000)).abs() < 10);
    }

    #[test]
    fn poisson_arrivals_keep_the_mean_rate() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut s = Schedule::new(10_000.0, 2, 1, 0, Arrival::Poisson);
        let n = 100_000;
        let last = (0..n).map(|_| s.next(&mut rng)).last().unwrap_or(0);
        // Each worker runs at 5000/s: n operations span n / 5000 s.
        let expected = n as f64 / 5000.0 * 1e9;
        assert!((last as f64 / expected - 1.0).abs() < 0.02, "{last}");
    }

    #[test]
    fn dispatch_waits_runs_and_drops_by_lag() {
        assert_eq!(dispatch(1_000, 400, 50), Dispatch::Wait(600));
        assert_eq!(dispatch(1_000, 1_000, 50), Dispatch::Run { lag_ns: 0 });
        assert_eq!(dispatch(1_000, 1_050, 50), Dispatch::Run { lag_ns: 50 });
        assert_eq!(dispatch(1_000, 1_051, 50), Dispatch::Drop);
    }

    #[test]
    fn a_stall_shows_in_corrected_latency_not_in_service_time() {
        // Analytic case: one worker at 1000 ops/s, every operation takes
        // 10 us, except that the engine pauses for 100 ms at t = 50 ms.
        // Operations meant for the pause start when it ends; their
        // corrected latency is the time left in the pause plus service.
        let mut rng = SmallRng::seed_from_u64(1);
        let mut s = Schedule::new(1000.0, 1, 0, 0, Arrival::Uniform);
        let (pause_from, pause_to) = (50_000_000u64, 150_000_000u64);
        let mut clock = 0u64;
        let mut worst_corrected = 0;
        let mut worst_service = 0;
        let mut dropped = 0;
        for _ in 0..300 {
            let intended = s.next(&mut rng);
            clock = clock.max(intended);
            match dispatch(intended, clock, 80_000_000) {
                Dispatch::Drop => {
                    dropped += 1;
                    continue;
                }
                Dispatch::Wait(_) => unreachable!("the clock was moved to the intended time"),
                Dispatch::Run { .. } => {}
            }
            let started = clock;
            let finished = if (pause_from..pause_to).contains(&started) {
                pause_to + 10_000
            } else {
                started + 10_000
            };
            clock = finished;
            let (corrected, service) = latencies(intended, started, finished);
            worst_corrected = worst_corrected.max(corrected);
            if !(pause_from..pause_to).contains(&started) {
                worst_service = worst_service.max(service);
            }
        }
        // The operation at 50 ms waited the whole pause.
        assert_eq!(worst_corrected, 100_000_000 + 10_000);
        assert_eq!(worst_service, 10_000);
        // Operations more than 80 ms late when the pause ended (those meant
        // for 51..=70 ms) were dropped rather than replayed.
        assert_eq!(dropped, 20);
    }
}
