//! Fallible allocation of the large per-fit buffers: a request the allocator
//! cannot meet becomes `RgbmError::OutOfMemory` (Python's MemoryError) instead
//! of aborting the process.
use crate::error::{Result, RgbmError};

/// A vector of `len` copies of `value`, or an error naming `what` if the
/// memory is not available (or the size overflows).
pub fn filled_vec<T: Clone>(len: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        RgbmError::OutOfMemory(format!(
            "cannot allocate {what}: {len} elements ({:.1} MiB)",
            bytes as f64 / (1u64 << 20) as f64
        ))
    })?;
    v.resize(len, value);
    Ok(v)
}

/// Numbers whose all-zero bytes are the value 0.
pub trait Zeroable: Copy {}
impl Zeroable for u32 {}
impl Zeroable for i32 {}
impl Zeroable for u64 {}
impl Zeroable for f64 {}

/// A vector of `len` zeros, or an error naming `what`. Unlike `filled_vec`
/// it does not write the zeros: a large request gets fresh pages from the
/// OS, zero already and mapped only when first written, so the call costs
/// no time proportional to `len` (a caller that fills the vector block by
/// block can stop between blocks without having touched the rest).
pub fn zeroed_vec<T: Zeroable>(len: usize, what: &str) -> Result<Vec<T>> {
    let oom = || {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        RgbmError::OutOfMemory(format!(
            "cannot allocate {what}: {len} elements ({:.1} MiB)",
            bytes as f64 / (1u64 << 20) as f64
        ))
    };
    if len == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| oom())?;
    // SAFETY: the layout has a non-zero size (len > 0, and every Zeroable
    // type has a non-zero size).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return Err(oom());
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `len`
    // values of T (what a Vec of capacity `len` uses), and its bytes are all
    // zero, which is a valid T (`Zeroable`).
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// An empty vector with room for `len` elements, or an error naming `what`.
pub fn with_capacity<T>(len: usize, what: &str) -> Result<Vec<T>> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| RgbmError::OutOfMemory(format!("cannot allocate {what}: {len} elements")))?;
    Ok(v)
}

/// Room for one more element in `v` (growing it as `push` would), or an
/// error naming `what`: for buffers that grow with a user's parameter.
pub fn reserve_one<T>(v: &mut Vec<T>, what: &str) -> Result<()> {
    v.try_reserve(1).map_err(|_| {
        RgbmError::OutOfMemory(format!("cannot grow {what} past {} elements", v.len()))
    })
}

/// Room for `more` elements in `v` (growing it as `extend` would), or an
/// error naming `what`.
pub fn reserve<T>(v: &mut Vec<T>, more: usize, what: &str) -> Result<()> {
    v.try_reserve(more).map_err(|_| {
        RgbmError::OutOfMemory(format!("cannot grow {what} past {} elements", v.len()))
    })
}

/// Resizes `v` to `len` elements (new ones are `value`), or an error naming
/// `what` if the memory is not available.
pub fn grow_to<T: Clone>(v: &mut Vec<T>, len: usize, value: T, what: &str) -> Result<()> {
    if let Some(more) = len.checked_sub(v.len()) {
        v.try_reserve_exact(more).map_err(|_| {
            RgbmError::OutOfMemory(format!("cannot allocate {what}: {len} elements"))
        })?;
    }
    v.resize(len, value);
    Ok(())
}

/// The memory the OS can still give this process without swapping out
/// others' (Linux's MemAvailable plus free swap), or None where it is not
/// known.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = info.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib.saturating_mul(1024))
    };
    Some(field("MemAvailable:")?.saturating_add(field("SwapFree:").unwrap_or(0)))
}

/// OutOfMemory, up front, when `bytes` (memory a step is sure to touch)
/// exceed what the OS has left: with overcommit, large requests succeed
/// and the process is killed only once it writes them, which no error
/// can report. `what` says what needs the memory.
pub fn ensure_available(bytes: u64, what: impl FnOnce() -> String) -> Result<()> {
    match available_memory() {
        Some(free) if bytes > free => Err(RgbmError::OutOfMemory(format!(
            "{} need at least {:.1} GiB, more than the {:.1} GiB of memory available",
            what(),
            bytes as f64 / (1u64 << 30) as f64,
            free as f64 / (1u64 << 30) as f64
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_requests_are_errors_not_aborts() {
        let err = filled_vec(usize::MAX / 4, 0u64, "the test buffer").unwrap_err();
        assert!(
            matches!(err, RgbmError::OutOfMemory(ref m) if m.contains("the test buffer")),
            "{err}"
        );
        assert!(with_capacity::<[f64; 2]>(usize::MAX / 8, "gradients").is_err());
        assert_eq!(filled_vec(3, 1.5f64, "small").unwrap(), vec![1.5; 3]);
        let err = zeroed_vec::<u32>(usize::MAX / 2, "the zeros").unwrap_err();
        assert!(
            matches!(err, RgbmError::OutOfMemory(ref m) if m.contains("the zeros")),
            "{err}"
        );
        assert!(zeroed_vec::<f64>(usize::MAX / 16, "the zeros").is_err());
        assert_eq!(zeroed_vec::<u32>(5, "small").unwrap(), vec![0; 5]);
        assert_eq!(zeroed_vec::<f64>(0, "none").unwrap(), Vec::<f64>::new());
        // A large one is zero everywhere, and a Vec like any other.
        let mut big = zeroed_vec::<u64>(1 << 22, "big").unwrap();
        assert!(big.iter().all(|&v| v == 0));
        big.push(1);
        assert_eq!(big.len(), (1 << 22) + 1);
        let mut v = vec![1u8; 2];
        assert!(reserve(&mut v, usize::MAX / 2, "the grown buffer").is_err());
        assert!(grow_to(&mut v, usize::MAX / 2, 0, "the grown buffer").is_err());
        grow_to(&mut v, 4, 7, "the grown buffer").unwrap();
        assert_eq!(v, [1, 1, 7, 7]);
        grow_to(&mut v, 1, 0, "the grown buffer").unwrap();
        assert_eq!(v, [1]);
    }

    #[test]
    fn more_than_the_machine_has_is_refused_up_front() {
        let Some(free) = available_memory() else {
            return; // not Linux: nothing to compare with
        };
        assert!(free > 0);
        assert!(ensure_available(free / 2, || "half".into()).is_ok());
        let err = ensure_available(u64::MAX, || "the test's tables".into()).unwrap_err();
        assert!(
            matches!(err, RgbmError::OutOfMemory(ref m) if m.starts_with("the test's tables need at least")),
            "{err}"
        );
    }
}
