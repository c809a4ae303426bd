//! Thread pools from `n_jobs`. Results never depend on the thread count
//! (work is cut into fixed chunks), so the count only affects speed.
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::error::{Result, RgbmError};

/// The cores this process may run on: its affinity mask and cgroup CPU
/// quota, not the machine's core count (a container limited to two cores
/// of a 64-core host gets two threads, not 64 that take turns).
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |c| c.get())
}

/// A limit on the default thread count set through threadpoolctl (0: none).
static DEFAULT_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Sets (n ≥ 1) or lifts (0) the limit `n_jobs=None` obeys.
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub fn set_default_limit(n: usize) {
    DEFAULT_LIMIT.store(n, Ordering::Relaxed);
}

/// The threads `n_jobs=None` runs on: a threadpoolctl limit, else
/// `OMP_NUM_THREADS` (joblib's workers set it to their share of the cores,
/// as OpenMP libraries such as scikit-learn's HGB and XGBoost obey it),
/// else every available core; never more than the available cores.
pub fn default_threads() -> usize {
    // Read once, as an OpenMP runtime reads it when it starts: a process
    // that later edits its environment (Dask's nanny does, for the workers
    // it spawns) keeps the count it started with.
    static OMP_NUM_THREADS: OnceLock<Option<String>> = OnceLock::new();
    let env = OMP_NUM_THREADS.get_or_init(|| std::env::var("OMP_NUM_THREADS").ok());
    default_threads_from(
        DEFAULT_LIMIT.load(Ordering::Relaxed),
        env.as_deref(),
        available_cores(),
    )
}

fn default_threads_from(limit: usize, omp: Option<&str>, cores: usize) -> usize {
    // OpenMP's syntax allows a list (one count per nesting level): the first counts.
    let from_env = || {
        omp?.split(',')
            .next()?
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
    };
    let wanted = if limit > 0 { Some(limit) } else { from_env() };
    wanted.map_or(cores, |n| n.min(cores)).max(1)
}

/// Threads for a request: `None` = `default_threads()`; requests above
/// four times the available cores are capped (oversubscription only costs
/// time, and a thousands-thread pool takes seconds to start).
pub fn thread_count(n_jobs: Option<usize>) -> usize {
    let cores = available_cores();
    n_jobs
        .unwrap_or_else(default_threads)
        .clamp(1, 4 * cores.max(1))
}

/// Fits on fewer input values than this, left to choose their threads
/// (`n_jobs` None), run on one: their parallel regions (a node's histogram,
/// a partition over a few hundred rows) are too small to pay for handing
/// work to another thread. An explicit count is obeyed.
pub const SERIAL_FIT_VALUES: usize = 10_000;

/// The `n_jobs` a fit on `values` stored input values runs with.
pub fn fit_threads(n_jobs: Option<usize>, values: usize) -> Option<usize> {
    match n_jobs {
        None if values < SERIAL_FIT_VALUES => Some(1),
        n_jobs => n_jobs,
    }
}

fn build(n_threads: usize) -> Result<ThreadPool> {
    ThreadPoolBuilder::new()
        .num_threads(n_threads)
        .build()
        .map_err(|e| RgbmError::Threads(format!("a pool of {n_threads} (n_jobs): {e}")))
}

/// Idle pools with their thread counts.
type IdlePools = Vec<(usize, ThreadPool)>;

/// Idle pools kept for later fits and predictions, and the process that owns them.
static IDLE: Mutex<Option<(u32, IdlePools)>> = Mutex::new(None);

/// Idle pools kept per thread count; more are dropped when returned. Two
/// cover a fit running beside predictions without building pools in a loop.
const MAX_IDLE_PER_SIZE: usize = 2;

/// A pool lent to one job; returned to the idle list when dropped.
struct Lent {
    n_threads: usize,
    pool: Option<ThreadPool>,
}

impl Drop for Lent {
    fn drop(&mut self) {
        let Some(pool) = self.pool.take() else { return };
        let mut guard = IDLE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match guard.as_mut() {
            Some((owner, idle)) if *owner == std::process::id() => {
                if idle.iter().filter(|(n, _)| *n == self.n_threads).count() < MAX_IDLE_PER_SIZE {
                    idle.push((self.n_threads, pool));
                }
            }
            // Lent before a fork: this process has none of its threads.
            _ => std::mem::forget(pool),
        }
    }
}

/// Runs `f` in a pool of `thread_count(n_jobs)` threads lent to this call
/// alone, so repeated fits and predictions do not pay for thread start-up.
/// A fresh pool also ran the first work slower: binning a9a (32k × 123)
/// took 15.5–16.5 ms in a new two-thread pool, even after a warm-up task,
/// and 10.3–12 ms in a reused one, with the same CPU time and page faults
/// (so: idle waits).
///
/// A pool serves one call at a time. Shared pools made independent work
/// wait (a prediction queued behind another thread's one-thread fit) and
/// deadlocked when a job re-entered its own pool (a fit started from a
/// callback of a one-thread fit waits for the only worker, which waits for
/// the callback). Concurrent or nested calls get pools of their own.
///
/// Pools are per process: after `fork` the child has none of the parent's
/// threads, so a pool created before the fork would deadlock; the child
/// builds its own (the parent's pool objects are leaked in the child, never
/// touched).
pub fn with_cached_threads<R: Send>(
    n_jobs: Option<usize>,
    f: impl FnOnce() -> R + Send,
) -> Result<R> {
    let n_threads = thread_count(n_jobs);
    let pid = std::process::id();
    let idle = {
        let mut guard = IDLE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if guard.as_ref().is_some_and(|(owner, _)| *owner != pid)
            && let Some((_, stale)) = guard.take()
        {
            std::mem::forget(stale);
        }
        let (_, idle) = guard.get_or_insert_with(|| (pid, Vec::new()));
        idle.iter()
            .rposition(|(n, _)| *n == n_threads)
            .map(|i| idle.swap_remove(i).1)
    };
    // Built outside the lock: starting threads takes a while.
    let pool = match idle {
        Some(p) => p,
        None => build(n_threads)?,
    };
    let lent = Lent {
        n_threads,
        pool: Some(pool),
    };
    let pool = lent
        .pool
        .as_ref()
        .expect("a lent pool is present until dropped");
    Ok(pool.install(f))
}

/// How long a warm worker spins without finding work before it gives up
/// (bounds the CPU burnt in long serial stretches; a wake-up then costs
/// a few percent of the time spun).
const MAX_IDLE_SPIN: Duration = Duration::from_millis(1);

/// Keeps the pool's other workers awake while it lives.
///
/// A rayon worker that finds no work for a few microseconds goes to sleep,
/// and waking it costs tens of microseconds (measured here: a 10 µs
/// two-task region after a 20 µs serial gap took 35 µs). A boosting round
/// alternates short parallel regions with short serial steps (split
/// search, bookkeeping), so without this most regions paid that wake-up.
/// Each other worker instead runs a job that keeps taking pending work
/// (`rayon::yield_now`) and spins in between, the way OpenMP runtimes
/// keep their teams hot, until the guard is dropped. Scheduling only:
/// results do not change.
pub struct WarmWorkers {
    stop: Arc<AtomicBool>,
}

impl WarmWorkers {
    /// Starts keeping the current pool's other workers warm (nothing to do
    /// outside a pool or in a one-thread pool).
    pub fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        if let Some(owner) = rayon::current_thread_index() {
            for _ in 1..rayon::current_num_threads() {
                let stop = stop.clone();
                rayon::spawn(move || {
                    // The caller's own thread may pick this job up while it
                    // waits inside a parallel region; spinning there would
                    // stall the caller until the guard, further up its own
                    // stack, is dropped.
                    if rayon::current_thread_index() == Some(owner) {
                        return;
                    }
                    let mut last_work = Instant::now();
                    while !stop.load(Ordering::Acquire) {
                        if rayon::yield_now() == Some(rayon::Yield::Executed) {
                            last_work = Instant::now();
                        } else if last_work.elapsed() > MAX_IDLE_SPIN {
                            // A long serial stretch: let rayon put the thread to sleep.
                            return;
                        } else {
                            for _ in 0..64 {
                                std::hint::spin_loop();
                            }
                        }
                    }
                });
            }
        }
        WarmWorkers { stop }
    }
}

impl Drop for WarmWorkers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn counts_are_capped_and_pools_reused() {
        let cores = available_cores();
        assert_eq!(thread_count(Some(1_000_000)), 4 * cores);
        assert_eq!(thread_count(Some(1)), 1);
        assert_eq!(thread_count(None), default_threads());
        assert_eq!(
            with_cached_threads(Some(2), rayon::current_num_threads).unwrap(),
            thread_count(Some(2))
        );
        // Three is not used by the other tests (they run in parallel).
        let workers = || {
            let mut ids = rayon::broadcast(|_| format!("{:?}", std::thread::current().id()));
            ids.sort();
            ids
        };
        let first = with_cached_threads(Some(3), workers).unwrap();
        assert_eq!(first.len(), thread_count(Some(3)));
        assert_eq!(with_cached_threads(Some(3), workers).unwrap(), first);
    }

    #[test]
    fn the_default_obeys_a_limit_then_omp_num_threads_up_to_the_cores() {
        assert_eq!(default_threads_from(0, None, 8), 8);
        assert_eq!(default_threads_from(0, Some("3"), 8), 3);
        assert_eq!(default_threads_from(0, Some(" 2,4"), 8), 2);
        assert_eq!(default_threads_from(0, Some("16"), 8), 8);
        for junk in ["", "0", "-1", "two", "1.5"] {
            assert_eq!(default_threads_from(0, Some(junk), 8), 8, "{junk:?}");
        }
        assert_eq!(default_threads_from(1, Some("3"), 8), 1);
        assert_eq!(default_threads_from(12, None, 8), 8);
        assert_eq!(default_threads_from(0, None, 0), 1);
    }

    /// Runs `f` on its own thread; false if it has not finished in 20 s (a deadlock).
    fn finishes(f: impl FnOnce() + Send + 'static) -> bool {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            f();
            let _ = tx.send(());
        });
        rx.recv_timeout(Duration::from_secs(20)).is_ok()
    }

    #[test]
    fn a_job_started_from_inside_a_one_thread_job_does_not_wait_for_it() {
        // A Python callback of a fit runs on the fit's pool thread and may
        // start another fit, whose work is sent from a new thread.
        assert!(finishes(|| {
            let inner = with_cached_threads(Some(1), || {
                std::thread::spawn(|| with_cached_threads(Some(1), || 7).unwrap())
                    .join()
                    .unwrap()
            });
            assert_eq!(inner.unwrap(), 7);
        }));
    }

    #[test]
    fn independent_jobs_do_not_wait_for_each_other() {
        // The first job holds its pool until the second job has finished.
        assert!(finishes(|| {
            let (done_tx, done_rx) = std::sync::mpsc::channel();
            let (started_tx, started_rx) = std::sync::mpsc::channel();
            let holder = std::thread::spawn(move || {
                with_cached_threads(Some(1), move || {
                    started_tx.send(()).unwrap();
                    done_rx.recv_timeout(Duration::from_secs(30)).is_ok()
                })
                .unwrap()
            });
            started_rx.recv().unwrap();
            with_cached_threads(Some(1), || ()).unwrap();
            done_tx.send(()).unwrap();
            assert!(holder.join().unwrap());
        }));
    }

    #[test]
    fn warm_workers_help_and_stop_when_dropped() {
        for threads in [1, 2, 3] {
            let pool = ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (stop, sum) = pool.install(|| {
                let warm = WarmWorkers::start();
                let stop = warm.stop.clone();
                let mut sum = 0u64;
                for round in 0..50u64 {
                    // Parallel regions separated by serial gaps, as in a round.
                    sum += (0..10_000u64)
                        .into_par_iter()
                        .map(|i| i * round)
                        .sum::<u64>();
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
                drop(warm);
                (stop, sum)
            });
            assert_eq!(sum, (0..50u64).sum::<u64>() * (0..10_000u64).sum::<u64>());
            // Every spinner job ends (and drops its handle) once the guard is gone.
            let t0 = std::time::Instant::now();
            while Arc::strong_count(&stop) > 1 {
                assert!(t0.elapsed().as_secs() < 10, "a warm worker never stopped");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
}
