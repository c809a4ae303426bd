//! Sample weights are normalised to mean 1 before training, so multiplying
//! every weight by a constant does not change the model.
//!
//! Gradient and hessian sums are weighted, so with raw weights of 1e160 a
//! node score G²/H overflowed (no split was ever taken) and weights of 1e300
//! gave NaN leaves. Dividing by the mean would round every weight and so
//! change existing weighted models; instead the weights are multiplied by the
//! power of two that brings their mean into [1, 2) (exact: only the
//! exponent changes, and a no-op when the mean is already there, as it is
//! for unweighted fits), and the remaining mean m ∈ [1, 2) is handed to the
//! parameters measured in weight units: `reg_lambda`, `min_child_weight` and
//! `min_split_gain` are multiplied by m (and SGLB's noise accordingly), which
//! is exactly what training on w / mean(w) would do.
use std::borrow::Cow;

use super::grid;
use crate::alloc::with_capacity;
use crate::error::{Result, RgbmError};
use crate::exact_sum::ExactSum;

use super::shard::ShardRows;

/// ⌊log2 x⌋ of a finite x > 0 (subnormals included), from its bits.
fn exponent(x: f64) -> i32 {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        let mantissa = bits & ((1u64 << 52) - 1);
        63 - mantissa.leading_zeros() as i32 - 1074
    } else {
        biased - 1023
    }
}

/// 2^k for k in [-1022, 1023].
fn pow2(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// x · 2^k, in two exact steps so that |k| may reach 2044.
fn scale_pow2(x: f64, k: i32) -> f64 {
    let half = k / 2;
    x * pow2(half) * pow2(k - half)
}

/// Weights whose mean lies in [1, 2), and that mean.
pub(crate) struct Normalised<'a> {
    /// The rescaled weights (borrowed when the factor is 1).
    pub weights: Option<Cow<'a, [f64]>>,
    /// Their mean m: training on these weights with the weight-unit
    /// parameters multiplied by m equals training on w / mean(w).
    pub unit: f64,
}

/// Rescales finite, non-negative weights (not all zero) by a power of two so
/// that their mean lies in [1, 2). Unweighted: no weights and unit 1.
/// `exact` (`summation="exact"`): the mean is summed exactly and the weights
/// are rounded to a grid on which their sums are exact (`grid`). On a shard
/// (`w` its rows' weights) the largest weight, the sums and the grid are
/// every shard's; training on shards is always exact.
pub(crate) fn normalise<'w>(
    w: Option<&'w [f64]>,
    exact: bool,
    rows: &ShardRows,
) -> Result<Normalised<'w>> {
    let Some(w) = w else {
        return Ok(Normalised {
            weights: None,
            unit: 1.0,
        });
    };
    let mut largest = [w.iter().copied().fold(0.0f64, f64::max)];
    rows.max(&mut largest)?;
    let largest = largest[0];
    if !(largest > 0.0 && largest.is_finite()) {
        return Err(RgbmError::param(
            "sample_weight",
            "the weights must be finite and not all zero",
        ));
    }
    let n = rows.n_total as f64;
    // With the largest weight in [1, 2) the sum cannot overflow (n < 2^32).
    let k_max = -exponent(largest);
    let mean = if exact {
        let mut sum = [ExactSum::new()];
        sum[0].extend(w.iter().map(|&v| scale_pow2(v, k_max)));
        rows.sum_exact(&mut sum)?;
        sum[0].value() / n
    } else {
        w.iter().map(|&v| scale_pow2(v, k_max)).sum::<f64>() / n
    };
    let k = k_max - exponent(mean);
    let weights: Cow<[f64]> = if exact {
        let mut v = with_capacity(w.len(), "the normalised sample weights")?;
        v.extend(w.iter().map(|&x| scale_pow2(x, k)));
        grid::round_weights(&mut v, rows.n_total, rows.reduce)?;
        Cow::Owned(v)
    } else if k == 0 {
        Cow::Borrowed(w)
    } else {
        let mut v = with_capacity(w.len(), "the normalised sample weights")?;
        v.extend(w.iter().map(|&x| scale_pow2(x, k)));
        Cow::Owned(v)
    };
    // Exact: the rounded weights sum exactly in any order.
    let mut total = [weights.iter().sum::<f64>()];
    rows.sum(&mut total)?;
    let unit = total[0] / n;
    Ok(Normalised {
        weights: Some(weights),
        unit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_and_powers_are_exact() {
        for x in [
            1.0,
            1.5,
            2.0,
            3.0,
            0.75,
            1e-300,
            1e300,
            f64::MAX,
            5e-324,
            1e-310,
        ] {
            let m = scale_pow2(x, -exponent(x));
            assert!((1.0..2.0).contains(&m), "{x}: {m}");
        }
        assert_eq!(scale_pow2(5e-324, 1074), 1.0);
        assert_eq!(scale_pow2(1.0, -1074), 5e-324);
        assert_eq!(scale_pow2(3.0, 1000), 3.0 * 2f64.powi(1000));
    }

    #[test]
    fn mean_lands_in_one_two_and_scaling_is_exact() {
        let w: Vec<f64> = (0..1000).map(|i| (i % 13) as f64 * 0.37).collect();
        let base = normalise(Some(&w), false, &ShardRows::local(1000)).unwrap();
        assert!((1.0..2.0).contains(&base.unit), "{}", base.unit);
        for c in [1e-300, 1e-100, 1e-10, 3.0, 1e10, 1e160, 1e300] {
            let scaled: Vec<f64> = w.iter().map(|v| v * c).collect();
            let n = normalise(Some(&scaled), false, &ShardRows::local(1000)).unwrap();
            assert!((1.0..2.0).contains(&n.unit), "{c}: {}", n.unit);
            // The same weights up to rounding of c·w.
            let (a, b) = (base.weights.as_ref().unwrap(), n.weights.as_ref().unwrap());
            for (x, y) in a.iter().zip(b.iter()) {
                assert!(
                    (x / base.unit - y / n.unit).abs() <= 1e-12 * (x / base.unit),
                    "{c}"
                );
            }
        }
        // A power of two changes nothing but the exponent: identical weights.
        let doubled: Vec<f64> = w.iter().map(|v| v * 2f64.powi(-700)).collect();
        let n = normalise(Some(&doubled), false, &ShardRows::local(1000)).unwrap();
        assert_eq!(n.weights.as_deref(), base.weights.as_deref());
        assert_eq!(n.unit, base.unit);
    }

    #[test]
    fn weights_with_a_mean_in_one_two_are_borrowed_unchanged() {
        let w = [0.5, 1.0, 2.5, 0.0];
        let n = normalise(Some(&w), false, &ShardRows::local(4)).unwrap();
        assert!(matches!(n.weights, Some(Cow::Borrowed(_))));
        assert_eq!(n.unit, 1.0);
        let unweighted = normalise(None, false, &ShardRows::local(1000)).unwrap();
        assert!(unweighted.weights.is_none() && unweighted.unit == 1.0);
    }
}
