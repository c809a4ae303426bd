//! Fewer workers while the machine is contended.
//!
//! A round is a chain of short parallel regions, each waiting for its
//! slowest chunk. When other processes want the cores too, a worker that the
//! kernel has set aside holds up every region, and the fit slows far more
//! than its share of the CPU says (2.7× next to one spinning process on two
//! cores, where one thread alone slowed 1.7×). So each fit watches how long
//! its workers sat runnable but not running (the run delay in
//! `/proc/<pid>/task/<tid>/schedstat`) and, while that is a sizeable part of
//! their time, parks the workers it cannot expect to run: they block on a
//! condition variable instead of competing, and the rest do the work.
//! Results never depend on the number of workers, so this is scheduling
//! only. Where the statistics are missing (not Linux) every worker runs.
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::threads::WarmWorkers;

/// Decisions are made on windows of at least this much wall time (a round
/// can be far shorter; reading the statistics costs a few microseconds).
const WINDOW: Duration = Duration::from_millis(50);

/// After this many windows with parked workers, one window runs with all
/// of them again to see whether the other load has gone.
const PROBE_EVERY: u32 = 20;

/// Slack when turning "the workers ran a fraction 1 − r of the window"
/// into a worker count: 2 workers waiting a third of the time (one other
/// busy process on two cores) keep one; waiting a fifth or less keeps both.
const SLACK: f64 = 0.4;

/// Contended windows in a row before the full set is reduced: single
/// windows with a quarter of the time waited occur on a quiet machine.
const STRIKES: u32 = 2;

/// A fit's view of its pool's workers across rounds.
pub struct Contention {
    /// Each worker's schedstat file; empty when unknown or with one worker.
    stats: Vec<PathBuf>,
    /// Workers to use in the coming rounds (the owner is always one).
    workers: Workers,
    window_start: Instant,
    delay_at_start: u64,
}

/// The decision state, apart from the measuring.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Workers {
    all: usize,
    /// Workers to use in the coming rounds (the owner is always one).
    active: usize,
    /// Windows run with the reduced set since it was chosen.
    windows_reduced: u32,
    /// Contended windows in a row with the full set.
    strikes: u32,
    /// The last window was a probe of the full set after a reduced stretch.
    probing: bool,
}

/// The other workers' state during one round; dropping it releases them.
pub enum RoundWorkers {
    // Held only for their Drop, which releases the workers.
    Warm(#[allow(dead_code)] WarmWorkers),
    Parked(#[allow(dead_code)] Parked),
}

impl Contention {
    /// Called on a worker of the fit's pool.
    pub fn for_current_pool() -> Contention {
        let stats = if rayon::current_num_threads() > 1 && rayon::current_thread_index().is_some() {
            rayon::broadcast(|_| std::fs::read_link("/proc/thread-self").ok())
                .into_iter()
                .map(|link| link.map(|l| Path::new("/proc").join(l).join("schedstat")))
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let all = rayon::current_num_threads();
        let mut c = Contention {
            workers: Workers {
                all,
                active: all,
                windows_reduced: 0,
                strikes: 0,
                probing: false,
            },
            stats,
            window_start: Instant::now(),
            delay_at_start: 0,
        };
        c.delay_at_start = c.total_delay().unwrap_or(0);
        c
    }

    /// The workers' total run delay in nanoseconds (`None` if unreadable).
    fn total_delay(&self) -> Option<u64> {
        self.stats
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(p).ok()?;
                text.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .sum()
    }

    /// Sets up the other workers for a round: kept warm when all are used,
    /// the surplus parked otherwise.
    pub fn start_round(&self) -> RoundWorkers {
        match self.stats.len().saturating_sub(self.workers.active) {
            0 => RoundWorkers::Warm(WarmWorkers::start()),
            surplus => RoundWorkers::Parked(Parked::start(surplus)),
        }
    }

    /// Called after a round: at the end of a window, picks the workers for
    /// the next ones.
    pub fn end_round(&mut self) {
        if self.stats.is_empty() {
            return;
        }
        let elapsed = self.window_start.elapsed();
        if elapsed < WINDOW {
            return;
        }
        let Some(delay) = self.total_delay() else {
            // The files went away: stop watching, use every worker.
            self.workers.active = self.workers.all;
            self.stats.clear();
            return;
        };
        let waited = delay.saturating_sub(self.delay_at_start) as f64
            / (elapsed.as_nanos() as f64 * self.workers.active as f64);
        self.workers.decide(waited);
        self.window_start = Instant::now();
        self.delay_at_start = delay;
    }
}

impl Workers {
    /// Updates the set after a window in which the `active` workers waited
    /// a fraction `waited` of the time on average.
    fn decide(&mut self, waited: f64) {
        let running = self.active as f64 * (1.0 - waited.clamp(0.0, 1.0));
        let fit = ((running + SLACK).floor() as usize).clamp(1, self.all);
        if self.active < self.all {
            // Only the full set can show that more workers would run: a
            // reduced set keeps its size (or shrinks) until the next probe.
            self.windows_reduced += 1;
            if self.windows_reduced >= PROBE_EVERY {
                (self.active, self.probing) = (self.all, true);
            } else {
                self.active = fit.min(self.active);
            }
        } else if fit < self.all {
            self.strikes += 1;
            // A probe confirms what the reduced stretch measured.
            if self.strikes >= STRIKES || self.probing {
                (self.active, self.windows_reduced, self.strikes) = (fit, 0, 0);
            }
            self.probing = false;
        } else {
            (self.strikes, self.probing) = (0, false);
        }
    }
}

/// Workers held on a condition variable for one round.
pub struct Parked {
    gate: Arc<(Mutex<bool>, Condvar)>,
}

impl Parked {
    /// Parks `count` workers of the current pool other than this one.
    fn start(count: usize) -> Parked {
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let owner = rayon::current_thread_index();
        let held = gate.clone();
        rayon::spawn_broadcast(move |ctx| {
            let Some(owner) = owner else { return };
            // Rank among the workers other than the owner.
            let rank = match ctx.index() {
                i if i == owner => return,
                i if i < owner => i,
                i => i - 1,
            };
            if rank >= count {
                return;
            }
            let (released, wake) = &*held;
            let mut done = released.lock().unwrap_or_else(|p| p.into_inner());
            while !*done {
                done = wake.wait(done).unwrap_or_else(|p| p.into_inner());
            }
        });
        Parked { gate }
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        let (released, wake) = &*self.gate;
        *released.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    fn full(all: usize) -> Workers {
        Workers {
            all,
            active: all,
            windows_reduced: 0,
            strikes: 0,
            probing: false,
        }
    }

    fn after(mut w: Workers, waits: &[f64]) -> Workers {
        waits.iter().for_each(|&r| w.decide(r));
        w
    }

    #[test]
    fn worker_counts_follow_the_waiting() {
        // Two workers waiting a third of the time (one other busy process
        // on two cores), two windows in a row: one. Quiet: both.
        assert_eq!(after(full(2), &[0.33, 0.33]).active, 1);
        assert_eq!(after(full(2), &[0.02; 10]).active, 2);
        // One contended window on a quiet machine changes nothing.
        assert_eq!(after(full(2), &[0.01, 0.3, 0.01, 0.3, 0.01]).active, 2);
        // Eight waiting a ninth of the time (one other process on eight
        // cores): seven.
        assert_eq!(after(full(8), &[1.0 / 9.0; 2]).active, 7);
        assert_eq!(after(full(8), &[0.5; 2]).active, 4);
        assert_eq!(after(full(1), &[0.9; 5]).active, 1);
    }

    #[test]
    fn reduced_sets_probe_the_full_set() {
        let reduced = after(full(2), &[0.4, 0.4]);
        // A reduced set does not grow on its own...
        let stretch = after(reduced, &[0.0; PROBE_EVERY as usize - 1]);
        assert_eq!(stretch.active, 1);
        // ...until the probe window, which runs every worker.
        let probe = after(stretch, &[0.0]);
        assert_eq!((probe.active, probe.probing), (2, true));
        // Still contended: back to one at once. Quiet: all stay.
        assert_eq!(after(probe, &[0.4]).active, 1);
        assert_eq!(after(probe, &[0.01, 0.4]).active, 2);
    }

    #[test]
    fn parked_workers_take_no_work_and_are_released() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        pool.install(|| {
            let owner = rayon::current_thread_index().unwrap();
            let parked = Parked::start(2);
            // Give the parked jobs time to start, then check that a parallel
            // loop runs on the owner alone.
            std::thread::sleep(Duration::from_millis(50));
            let threads: std::collections::BTreeSet<usize> = (0..10_000)
                .into_par_iter()
                .with_max_len(1)
                .map(|_| rayon::current_thread_index().unwrap())
                .collect();
            assert_eq!(threads.into_iter().collect::<Vec<_>>(), vec![owner]);
            drop(parked);
            // Released: every worker answers a broadcast.
            assert_eq!(rayon::broadcast(|c| c.index()).len(), 3);
        });
    }

    #[test]
    fn the_statistics_are_read_on_linux() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(|| {
            let c = Contention::for_current_pool();
            if cfg!(target_os = "linux") {
                assert_eq!(c.stats.len(), 2);
                assert!(c.total_delay().is_some());
            }
            let _round = c.start_round();
        });
    }
}
