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
        let mut v = vec![1u8; 2];
        assert!(reserve(&mut v, usize::MAX / 2, "the grown buffer").is_err());
        assert!(grow_to(&mut v, usize::MAX / 2, 0, "the grown buffer").is_err());
        grow_to(&mut v, 4, 7, "the grown buffer").unwrap();
        assert_eq!(v, [1, 1, 7, 7]);
        grow_to(&mut v, 1, 0, "the grown buffer").unwrap();
        assert_eq!(v, [1]);
    }
}
