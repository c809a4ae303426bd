//! Thread pools from `n_jobs`. Results never depend on the thread count
//! (work is cut into fixed chunks), so the count only affects speed.
use std::sync::{Arc, Mutex};

use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::error::{Result, RgbmError};

/// Threads for a request: `None` = every core; requests above four times
/// the core count are capped (oversubscription only costs time, and a
/// thousands-thread pool takes seconds to start).
pub fn thread_count(n_jobs: Option<usize>) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    n_jobs.unwrap_or(cores).clamp(1, 4 * cores.max(1))
}

fn build(n_threads: usize) -> Result<ThreadPool> {
    ThreadPoolBuilder::new()
        .num_threads(n_threads)
        .build()
        .map_err(|e| RgbmError::param("n_jobs", format!("cannot start the thread pool: {e}")))
}

/// Runs `f` in a fresh pool of `thread_count(n_jobs)` threads (training: one pool per fit).
pub fn with_threads<R: Send>(n_jobs: Option<usize>, f: impl FnOnce() -> R + Send) -> Result<R> {
    Ok(build(thread_count(n_jobs))?.install(f))
}

/// Pools kept for prediction, keyed by thread count and owned by one process.
static PREDICT_POOLS: Mutex<Option<(u32, Vec<(usize, Arc<ThreadPool>)>)>> = Mutex::new(None);

/// Runs `f` in a cached pool of `thread_count(n_jobs)` threads, so repeated
/// predictions do not pay for thread start-up. Pools are per process: after
/// `fork` the child has none of the parent's threads, so a pool created
/// before the fork would deadlock; the child builds its own (the parent's
/// pool objects are leaked in the child, never touched).
pub fn with_cached_threads<R: Send>(
    n_jobs: Option<usize>,
    f: impl FnOnce() -> R + Send,
) -> Result<R> {
    let n_threads = thread_count(n_jobs);
    let pid = std::process::id();
    let pool = {
        let mut guard = PREDICT_POOLS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if guard.as_ref().is_some_and(|(owner, _)| *owner != pid) {
            if let Some((_, stale)) = guard.take() {
                std::mem::forget(stale);
            }
        }
        let (_, pools) = guard.get_or_insert_with(|| (pid, Vec::new()));
        match pools.iter().find(|(n, _)| *n == n_threads) {
            Some((_, p)) => p.clone(),
            None => {
                let p = Arc::new(build(n_threads)?);
                pools.push((n_threads, p.clone()));
                p
            }
        }
    };
    Ok(pool.install(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_capped_and_pools_reused() {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        assert_eq!(thread_count(Some(1_000_000)), 4 * cores);
        assert_eq!(thread_count(Some(1)), 1);
        assert_eq!(thread_count(None), cores);
        assert_eq!(
            with_cached_threads(Some(2), rayon::current_num_threads).unwrap(),
            thread_count(Some(2))
        );
        assert_eq!(
            with_cached_threads(Some(1), rayon::current_num_threads).unwrap(),
            1
        );
    }
}
