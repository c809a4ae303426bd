use super::point_loss::PointLoss;
use crate::error::Result;

/// The weighted α-quantile of `values`: the smallest value whose cumulative
/// weight (in value order) reaches α of the total. It minimises
/// Σ w·pinball_α(v − c) over c, so it is both the quantile loss's best
/// constant and its leaf value. None when there is no positive weight.
pub fn weighted_quantile(
    values: &[f64],
    w: impl Fn(usize) -> f64,
    alpha: f64,
) -> Result<Option<f64>> {
    let mut idx = crate::alloc::with_capacity(values.len(), "the order of a quantile's values")?;
    idx.extend(0..values.len());
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let total: f64 = (0..values.len()).map(&w).sum();
    if !(total > 0.0) {
        return Ok(None);
    }
    let mut acc = 0.0;
    for &i in &idx {
        acc += w(i);
        if acc >= alpha * total {
            return Ok(Some(values[i]));
        }
    }
    Ok(idx.last().map(|&i| values[i]))
}

/// The pinball loss of the α-quantile: α(y − f) above the prediction,
/// (1 − α)(f − y) below. Its hessian is 0, so the trees are grown on the
/// gradient with a unit hessian and every leaf is then set to the weighted
/// α-quantile of its rows' residuals (`renews_leaves`). Not smooth.
#[derive(Clone, Copy, Debug)]
pub struct Quantile {
    pub alpha: f64,
}

impl PointLoss for Quantile {
    #[inline(always)]
    fn value(&self, y: f64, f: f64) -> f64 {
        let r = y - f;
        if r >= 0.0 {
            self.alpha * r
        } else {
            (self.alpha - 1.0) * r
        }
    }
    #[inline(always)]
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64) {
        let g = if y > f { -self.alpha } else { 1.0 - self.alpha };
        (g, 1.0)
    }
    fn smoothness(&self) -> Option<f64> {
        None
    }
    fn start(&self, y: &[f64], w: Option<&[f64]>) -> crate::error::Result<f64> {
        Ok(weighted_quantile(y, |i| w.map_or(1.0, |w| w[i]), self.alpha)?.unwrap_or(0.0))
    }
}

/// |y − f|: the quantile loss at α = ½, scaled by 2 (the same trees and
/// leaves, a loss value users recognise).
#[derive(Clone, Copy, Debug)]
pub struct AbsoluteError;

impl PointLoss for AbsoluteError {
    #[inline(always)]
    fn value(&self, y: f64, f: f64) -> f64 {
        (y - f).abs()
    }
    #[inline(always)]
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64) {
        let g = if y > f { -1.0 } else { 1.0 };
        (g, 1.0)
    }
    fn smoothness(&self) -> Option<f64> {
        None
    }
    fn start(&self, y: &[f64], w: Option<&[f64]>) -> crate::error::Result<f64> {
        Ok(weighted_quantile(y, |i| w.map_or(1.0, |w| w[i]), 0.5)?.unwrap_or(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The weighted quantile against a brute-force minimum of the pinball
    /// loss over the data points (a minimiser is always among them).
    #[test]
    fn weighted_quantile_minimises_the_pinball_loss() {
        let y = [3.0, -1.0, 2.5, 7.0, 0.0, 2.5, 10.0, -4.0];
        let w = [1.0, 2.0, 0.5, 1.0, 0.0, 3.0, 0.25, 1.0];
        for alpha in [0.05, 0.25, 0.5, 0.7, 0.9, 0.99] {
            let q = Quantile { alpha };
            let loss = |c: f64| (0..8).map(|i| w[i] * q.value(y[i], c)).sum::<f64>();
            let c = weighted_quantile(&y, |i| w[i], alpha).unwrap().unwrap();
            let best = y.iter().map(|&v| loss(v)).fold(f64::INFINITY, f64::min);
            assert!(loss(c) <= best + 1e-12, "alpha {alpha}: {c}");
        }
        assert_eq!(weighted_quantile(&y, |_| 0.0, 0.5).unwrap(), None);
    }

    #[test]
    fn gradients_are_the_derivative_away_from_the_kink() {
        for alpha in [0.1, 0.5, 0.9] {
            for (y, f) in [(0.0, 1.0), (2.0, -1.0), (-3.0, -2.5)] {
                crate::objective::tests::check_derivatives(&Quantile { alpha }, y, f, false);
            }
        }
        for (y, f) in [(0.0, 1.0), (2.0, -1.0)] {
            crate::objective::tests::check_derivatives(&AbsoluteError, y, f, false);
        }
    }
}
