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
/// busy process on two cores) keep one; waiting a tenth keeps both.
const SLACK: f64 = 0.25;

/// A fit's view of its pool's workers across rounds.
pub struct Contention {
    /// Each worker's schedstat file; empty when unknown or with one worker.
    stats: Vec<PathBuf>,
    /// Workers to use in the coming rounds (the owner is always one).
    active: usize,
    window_start: Instant,
    delay_at_start: u64,
    windows_reduced: u32,
}

/// The other workers' state during one round; dropping it releases them.
pub enum RoundWorkers {
    Warm(WarmWorkers),
    Parked(Parked),
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
        let mut c = Contention {
            active: rayon::current_num_threads(),
            stats,
            window_start: Instant::now(),
            delay_at_start: 0,
            windows_reduced: 0,
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
        match self.stats.len().saturating_sub(self.active) {
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
            self.active = self.stats.len();
            self.stats.clear();
            return;
        };
        let waited = delay.saturating_sub(self.delay_at_start) as f64
            / (elapsed.as_nanos() as f64 * self.active as f64);
        self.active = next_active(self.active, self.stats.len(), waited, self.windows_reduced);
        self.windows_reduced = if self.active < self.stats.len() {
            self.windows_reduced + 1
        } else {
            0
        };
        self.window_start = Instant::now();
        self.delay_at_start = delay;
    }
}

/// Workers for the next window, given `active` of `all` ran in the last
/// one and waited a fraction `waited` of it on average.
fn next_active(active: usize, all: usize, waited: f64, windows_reduced: u32) -> usize {
    if active < all && windows_reduced + 1 >= PROBE_EVERY {
        return all;
    }
    let running = active as f64 * (1.0 - waited.clamp(0.0, 1.0));
    let fit = ((running + SLACK).floor() as usize).clamp(1, all);
    // Only the full set can show that more workers would run: a reduced set
    // keeps its size (or shrinks) until the next probe.
    fit.min(active)
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

    #[test]
    fn worker_counts_follow_the_waiting() {
        // Two workers waiting a third of the time (one other busy process
        // on two cores): one. Quiet: both.
        assert_eq!(next_active(2, 2, 1.0 / 3.0, 0), 1);
        assert_eq!(next_active(2, 2, 0.02, 0), 2);
        // Eight waiting a ninth of the time (one other process on eight
        // cores): seven.
        assert_eq!(next_active(8, 8, 1.0 / 9.0, 0), 7);
        // A reduced set does not grow on its own, and is reset at a probe.
        assert_eq!(next_active(1, 2, 0.0, 3), 1);
        assert_eq!(next_active(1, 2, 0.0, PROBE_EVERY - 1), 2);
        assert_eq!(next_active(3, 8, 0.5, 0), 1);
        assert_eq!(next_active(1, 1, 0.9, 0), 1);
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
