//! The two C functions threadpoolctl's controller for rgbm_rs calls through
//! ctypes on this library (`rgbm_rs/_threadpool.py`), so that
//! `threadpool_limits(n)` bounds the threads of calls with `n_jobs=None`
//! as it bounds OpenMP and BLAS pools.

/// The threads a call with `n_jobs=None` runs on.
#[unsafe(no_mangle)]
pub extern "C" fn rgbm_rs_get_num_threads() -> i32 {
    i32::try_from(crate::threads::default_threads()).unwrap_or(i32::MAX)
}

/// Limits the threads of calls with `n_jobs=None` to `n` (n ≤ 0 lifts the limit).
#[unsafe(no_mangle)]
pub extern "C" fn rgbm_rs_set_num_threads(n: i32) {
    crate::threads::set_default_limit(usize::try_from(n).unwrap_or(0));
}
