//! Software prefetch for the kernels that read rows in a node's (random)
//! order; the row partition uses it too.

/// Hints the CPU to start loading `ptr`'s cache line (no effect elsewhere).
#[inline(always)]
pub fn prefetch<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(ptr as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// How many rows ahead the subset kernels prefetch a row's codes.
pub const PREFETCH_AHEAD: usize = 16;
