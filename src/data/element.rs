//! The floating-point element types a matrix may hold (f32, f64): their
//! zero, their exact conversions to and from f64, and the largest value
//! of the type at most a threshold.
/// A floating-point element type we accept from callers.
pub trait Element: Copy + PartialOrd + Send + Sync + 'static {
    /// Zero, the value of a sparse matrix's entries that are not stored.
    const ZERO: Self;
    fn to_f64(self) -> f64;
    /// The value of this type nearest `x` (exact for a value of this type).
    fn from_f64(x: f64) -> Self;
    /// The largest value of this type that is ≤ `t` (−∞ if none), so that
    /// `v <= Self::at_most(t)` exactly when `v.to_f64() <= t`, for every
    /// non-NaN `v` of this type.
    fn at_most(t: f64) -> Self;
}
impl Element for f32 {
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x as Self
    }
    fn at_most(t: f64) -> Self {
        let near = t as f32;
        if (near as f64) > t {
            near.next_down()
        } else {
            near
        }
    }
}
impl Element for f64 {
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x
    }
    fn at_most(t: f64) -> Self {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `v <= f32::at_most(t)` decides exactly as `v as f64 <= t`.
        #[test]
        fn f32_at_most_decides_as_f64(
            t in prop_oneof![
                proptest::num::f64::ANY,
                proptest::num::f32::ANY.prop_map(f64::from),
                (proptest::num::f32::ANY, -2i64..=2).prop_map(|(v, k)| {
                    f64::from_bits(f64::from(v).to_bits().wrapping_add_signed(k))
                }),
            ],
            v in proptest::num::f32::ANY,
        ) {
            prop_assume!(!t.is_nan() && !v.is_nan());
            prop_assert_eq!(v <= f32::at_most(t), f64::from(v) <= t, "t {:e} v {:e}", t, v);
        }
    }
}
