//! Gaussian negative log-likelihood with a predicted variance: two scores per
//! row, the mean μ (block 0) and the log standard deviation s = log σ (block 1),
//! class-major like `softmax`.
//!
//! ℓ(y; μ, s) = ½ log 2π + s + ½ (y − μ)² e^{−2s}.
//!
//! The hessians are the expected (Fisher) information, e^{−2s} for μ and 2 for
//! s: the observed s-hessian 2(y − μ)²e^{−2s} vanishes on rows the mean fits
//! exactly and would make Newton leaves explode (Fisher scoring, as NGBoost
//! and CatBoost's RMSEWithUncertainty do).
use rayon::prelude::*;

use super::point_loss::CHUNK;

const HALF_LOG_TWO_PI: f64 = 0.918_938_533_204_672_8;

#[derive(Clone, Copy, Debug)]
pub struct Gaussian;

impl Gaussian {
    pub const OUTPUTS: usize = 2;
    /// Largest |log σ| a base score or a single log-σ leaf may hold, and the
    /// largest log σ a prediction may reach: σ² = e^{2s} stays finite. A
    /// model beyond it has diverged or been tampered with.
    pub const MAX_ABS_LOG_STD: f64 = 350.0;

    /// σ = e^s for a predicted log σ, or None when it exceeds `MAX_ABS_LOG_STD`
    /// (e^s would be past 1e152, and its square past f64::MAX).
    pub fn standard_deviation(s: f64) -> Option<f64> {
        (s <= Self::MAX_ABS_LOG_STD).then(|| s.exp())
    }

    pub fn n_outputs(&self) -> usize {
        Self::OUTPUTS
    }

    /// No global smoothness constant: the curvature e^{−2s} is unbounded.
    pub fn smoothness(&self) -> Option<f64> {
        None
    }

    /// ℓ for one row whose output-k score is `score(k)`.
    #[inline(always)]
    pub fn value_of(&self, y: f64, score: impl Fn(usize) -> f64) -> f64 {
        let (mu, s) = (score(0), score(1));
        let r = y - mu;
        HALF_LOG_TWO_PI + s + 0.5 * r * r * (-2.0 * s).exp()
    }

    #[inline(always)]
    pub fn row_value(&self, y: f64, f: &[f64], n: usize, i: usize) -> f64 {
        self.value_of(y, |k| f[k * n + i])
    }

    /// Weighted (g, h) of both outputs into the two blocks of `out`.
    pub fn gradients(&self, y: &[f64], f: &[f64], w: Option<&[f64]>, out: &mut [[f64; 2]]) {
        let n = y.len();
        let (mean_out, scale_out) = out.split_at_mut(n);
        mean_out
            .par_chunks_mut(CHUNK)
            .zip(scale_out.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(c, (mean_part, scale_part))| {
                for j in 0..mean_part.len() {
                    let i = c * CHUNK + j;
                    let wi = w.map_or(1.0, |w| w[i]);
                    let r = y[i] - f[i];
                    let precision = (-2.0 * f[n + i]).exp();
                    mean_part[j] = [-wi * r * precision, wi * precision];
                    scale_part[j] = [wi * (1.0 - r * r * precision), wi * 2.0];
                }
            });
    }

    /// The maximum-likelihood constants: weighted mean and log of the weighted
    /// standard deviation (floored, so constant targets start finite).
    pub fn optimal_constants(&self, y: &[f64], w: Option<&[f64]>) -> Vec<f64> {
        let weight = |i: usize| w.map_or(1.0, |w| w[i]);
        let total: f64 = (0..y.len()).map(weight).sum();
        let mean = (0..y.len()).map(|i| weight(i) * y[i]).sum::<f64>() / total;
        let var = (0..y.len())
            .map(|i| weight(i) * (y[i] - mean).powi(2))
            .sum::<f64>()
            / total;
        let floor = 1e-6 * mean.abs().max(1.0);
        vec![mean, var.sqrt().max(floor).ln()]
    }

    /// (dℓ/dρ, d²ℓ/dρ²) of ℓ(y; base + ρ·dir) for row `i`. With r the residual
    /// and e = e^{−2s} at the point: dℓ/dρ = d₁ − r d₀ e − d₁ r² e and
    /// d²ℓ/dρ² = d₀² e + 4 d₀ d₁ r e + 2 d₁² r² e (not always positive: the
    /// likelihood is not jointly convex; the line search guards for that).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn row_directional(
        &self,
        y: f64,
        base: &[f64],
        dir: &[f64],
        rho: f64,
        n: usize,
        i: usize,
        _scratch: &mut [f64],
    ) -> (f64, f64) {
        let (d0, d1) = (dir[i], dir[n + i]);
        let r = y - (base[i] + rho * d0);
        let e = (-2.0 * (base[n + i] + rho * d1)).exp();
        (
            d1 - r * d0 * e - d1 * r * r * e,
            d0 * d0 * e + 4.0 * d0 * d1 * r * e + 2.0 * d1 * d1 * r * r * e,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradients_match_finite_differences_and_fisher_hessians() {
        let g = Gaussian;
        let y = [1.5, -0.3, 4.0];
        let f = [1.0, 0.2, 2.0, 0.1, -0.5, 0.7]; // μ block, then s block
        let n = 3;
        let mut out = vec![[0.0; 2]; 6];
        g.gradients(&y, &f, None, &mut out);
        let e = 1e-6;
        for i in 0..n {
            for k in 0..2 {
                let mut up = f.to_vec();
                let mut down = f.to_vec();
                up[k * n + i] += e;
                down[k * n + i] -= e;
                let fd =
                    (g.row_value(y[i], &up, n, i) - g.row_value(y[i], &down, n, i)) / (2.0 * e);
                assert!(
                    (out[k * n + i][0] - fd).abs() < 1e-6 * (1.0 + fd.abs()),
                    "row {i} output {k}"
                );
            }
            // Fisher information: E[∂²ℓ/∂μ²] = e^{-2s}, E[∂²ℓ/∂s²] = 2.
            assert!((out[i][1] - (-2.0 * f[n + i]).exp()).abs() < 1e-12);
            assert_eq!(out[n + i][1], 2.0);
        }
    }

    #[test]
    fn constants_are_the_maximum_likelihood_fit() {
        let y = [1.0, 2.0, 3.0, 6.0];
        let c = Gaussian.optimal_constants(&y, None);
        assert!((c[0] - 3.0).abs() < 1e-12);
        assert!((c[1] - 3.5f64.sqrt().ln()).abs() < 1e-12);
        // The NLL at the constants is below its value at nearby points.
        let nll = |mu: f64, s: f64| {
            y.iter()
                .map(|&v| Gaussian.value_of(v, |k| if k == 0 { mu } else { s }))
                .sum::<f64>()
        };
        let best = nll(c[0], c[1]);
        for (dm, ds) in [(0.01, 0.0), (-0.01, 0.0), (0.0, 0.01), (0.0, -0.01)] {
            assert!(nll(c[0] + dm, c[1] + ds) > best);
        }
    }

    #[test]
    fn directional_derivatives_match_finite_differences() {
        let g = Gaussian;
        let (y, base, dir) = (0.7, [0.2, -0.4], [0.5, 0.3]);
        let at = |rho: f64| g.value_of(y, |k| base[k] + rho * dir[k]);
        let e = 1e-5;
        for rho in [-1.0, 0.0, 0.8] {
            let (d1, d2) = g.row_directional(y, &base, &dir, rho, 1, 0, &mut []);
            let fd1 = (at(rho + e) - at(rho - e)) / (2.0 * e);
            let fd2 = (at(rho + e) - 2.0 * at(rho) + at(rho - e)) / (e * e);
            assert!(
                (d1 - fd1).abs() < 1e-6 && (d2 - fd2).abs() < 1e-3,
                "rho {rho}: {d1} {fd1} {d2} {fd2}"
            );
        }
    }
}
