//! Losses behind one `PointLoss` trait: per-row value, gradient, hessian,
//! the smoothness constant σ and a closed-form starting constant.
mod exponential;
mod huber;
mod logistic;
mod sla01;
mod squared;

use rayon::prelude::*;

pub use exponential::Exponential;
pub use huber::Huber;
pub use logistic::Logistic;
pub use sla01::Sla01;
pub use squared::Squared;

use crate::error::{Result, RgbmError};
use crate::params::{BoosterParams, Loss};

/// A loss ℓ(y, f) on one row. Labels of binary losses are 0/1.
pub trait PointLoss: Send + Sync {
    fn value(&self, y: f64, f: f64) -> f64;
    /// (∂ℓ/∂f, ∂²ℓ/∂f²) — the hessian may be a documented surrogate (huber).
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64);
    /// σ such that ℓ is σ-smooth in f, if it is.
    fn smoothness(&self) -> Option<f64>;
    /// A good starting constant for the optimal-constant search.
    fn start(&self, y: &[f64], w: Option<&[f64]>) -> f64;
    /// Maps a raw score to the prediction users see (identity or probability).
    fn transform(&self, f: f64) -> f64 {
        f
    }
}

/// The configured loss; dispatches once per bulk call, not per row.
#[derive(Clone, Debug)]
pub enum Objective {
    Squared(Squared),
    Huber(Huber),
    Logistic(Logistic),
    Exponential(Exponential),
    Sla01(Sla01),
}

macro_rules! dispatch {
    ($self:expr, $o:ident => $body:expr) => {
        match $self {
            Objective::Squared($o) => $body,
            Objective::Huber($o) => $body,
            Objective::Logistic($o) => $body,
            Objective::Exponential($o) => $body,
            Objective::Sla01($o) => $body,
        }
    };
}

/// Rows per task for parallel element-wise passes (fixed, so sums reduce in a fixed order).
const CHUNK: usize = 16 * 1024;

fn weighted_sum(n: usize, w: Option<&[f64]>, f: impl Fn(usize) -> f64 + Sync) -> f64 {
    let parts: Vec<f64> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut s = 0.0;
            for i in c * CHUNK..((c + 1) * CHUNK).min(n) {
                s += w.map_or(1.0, |w| w[i]) * f(i);
            }
            s
        })
        .collect();
    parts.iter().sum()
}

impl Objective {
    pub fn from_params(p: &BoosterParams) -> Objective {
        match p.loss {
            Loss::Squared => Objective::Squared(Squared),
            Loss::Huber => Objective::Huber(Huber { delta: p.huber_delta }),
            Loss::Logistic => Objective::Logistic(Logistic { reg: p.logistic_reg, clamp: p.clamp }),
            Loss::Exponential => Objective::Exponential(Exponential),
            Loss::Sla01 => Objective::Sla01(Sla01 { scale: p.sla_scale }),
        }
    }

    pub fn is_binary(&self) -> bool {
        matches!(self, Objective::Logistic(_) | Objective::Exponential(_) | Objective::Sla01(_))
    }

    pub fn smoothness(&self) -> Option<f64> {
        dispatch!(self, o => o.smoothness())
    }

    pub fn transform(&self, f: f64) -> f64 {
        dispatch!(self, o => o.transform(f))
    }

    /// Labels must be finite, and 0/1 for binary losses.
    pub fn check_labels(&self, y: &[f64]) -> Result<()> {
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(RgbmError::NonFinite(format!("y contains {} at index {i}", y[i])));
        }
        if self.is_binary() {
            if let Some(i) = y.iter().position(|&v| v != 0.0 && v != 1.0) {
                return Err(RgbmError::InvalidLabel(format!("binary losses need labels 0/1, got {} at index {i}", y[i])));
            }
        }
        Ok(())
    }

    /// Per-row weighted (g, h) into `out`, parallel over fixed chunks.
    pub fn gradients(&self, y: &[f64], f: &[f64], w: Option<&[f64]>, out: &mut [[f64; 2]]) {
        dispatch!(self, o => {
            out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
                let base = c * CHUNK;
                for (k, gh) in chunk.iter_mut().enumerate() {
                    let i = base + k;
                    let (g, h) = o.grad_hess(y[i], f[i]);
                    let wi = w.map_or(1.0, |w| w[i]);
                    *gh = [wi * g, wi * h];
                }
            })
        })
    }

    /// Σ w ℓ(y, f) / Σ w.
    pub fn mean_loss(&self, y: &[f64], f: &[f64], w: Option<&[f64]>) -> f64 {
        let total = dispatch!(self, o => weighted_sum(y.len(), w, |i| o.value(y[i], f[i])));
        let wsum = w.map_or(y.len() as f64, |w| w.iter().sum());
        total / wsum
    }

    /// argmin_c Σ w ℓ(y, c): safeguarded Newton from the loss's closed-form start.
    pub fn optimal_constant(&self, y: &[f64], w: Option<&[f64]>) -> f64 {
        let start = dispatch!(self, o => o.start(y, w));
        let zeros = vec![0.0; y.len()];
        let ones = vec![1.0; y.len()];
        self.line_minimum(y, &zeros, &ones, w, start)
    }

    /// argmin_ρ Σ w ℓ(y, base + ρ·dir), by Newton steps with step halving
    /// (never accepts a step that increases the loss), starting at ρ = start.
    pub fn line_minimum(&self, y: &[f64], base: &[f64], dir: &[f64], w: Option<&[f64]>, start: f64) -> f64 {
        dispatch!(self, o => {
            let loss_at = |rho: f64| weighted_sum(y.len(), w, |i| o.value(y[i], base[i] + rho * dir[i]));
            let mut rho = start;
            let mut current = loss_at(rho);
            for _ in 0..100 {
                let g = weighted_sum(y.len(), w, |i| o.grad_hess(y[i], base[i] + rho * dir[i]).0 * dir[i]);
                let h = weighted_sum(y.len(), w, |i| o.grad_hess(y[i], base[i] + rho * dir[i]).1 * dir[i] * dir[i]);
                if !(h > 0.0) || g == 0.0 {
                    break;
                }
                let mut step = -g / h;
                let mut accepted = false;
                for _ in 0..60 {
                    let trial = loss_at(rho + step);
                    if trial <= current {
                        rho += step;
                        current = trial;
                        accepted = true;
                        break;
                    }
                    step *= 0.5;
                }
                if !accepted || step.abs() <= 1e-12 * (1.0 + rho.abs()) {
                    break;
                }
            }
            rho
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// g and h agree with central finite differences of the value.
    pub fn check_derivatives(o: &dyn PointLoss, y: f64, f: f64, check_hessian: bool) {
        let e = 1e-5;
        let (g, h) = o.grad_hess(y, f);
        let fd_g = (o.value(y, f + e) - o.value(y, f - e)) / (2.0 * e);
        assert!((g - fd_g).abs() < 1e-5 * (1.0 + g.abs()), "gradient at y={y} f={f}: {g} vs {fd_g}");
        if check_hessian {
            let fd_h = (o.grad_hess(y, f + e).0 - o.grad_hess(y, f - e).0) / (2.0 * e);
            assert!((h - fd_h).abs() < 1e-4 * (1.0 + h.abs()), "hessian at y={y} f={f}: {h} vs {fd_h}");
        }
    }

    #[test]
    fn optimal_constants_match_closed_forms() {
        let y = [0.0, 1.0, 1.0, 1.0];
        let w = [1.0, 1.0, 2.0, 0.0];
        let sq = Objective::Squared(Squared);
        assert!((sq.optimal_constant(&y, Some(&w)) - 0.75).abs() < 1e-12);
        let lg = Objective::Logistic(Logistic { reg: 0.0, clamp: None });
        assert!((lg.optimal_constant(&y, None) - 3f64.ln()).abs() < 1e-9);
        let ex = Objective::Exponential(Exponential);
        assert!((ex.optimal_constant(&y, None) - 0.5 * 3f64.ln()).abs() < 1e-9);
        // Huber: brute-force grid minimum.
        let hb = Objective::Huber(Huber { delta: 1.0 });
        let yy = [0.0, 0.5, 1.0, 10.0, -3.0, 2.0];
        let c = hb.optimal_constant(&yy, None);
        let loss = |c: f64| yy.iter().map(|&v| hb_value(v, c)).sum::<f64>();
        let grid = (0..20001).map(|k| -5.0 + k as f64 * 5e-4).fold(f64::INFINITY, |a, c| a.min(loss(c)));
        assert!(loss(c) <= grid + 1e-9, "{c}");
    }

    fn hb_value(y: f64, f: f64) -> f64 {
        Huber { delta: 1.0 }.value(y, f)
    }

    #[test]
    fn line_minimum_is_exact_for_squared_loss() {
        let y = [1.0, -2.0, 3.0, 0.5];
        let base = [0.0, 1.0, 0.0, -1.0];
        let dir = [1.0, -1.0, 2.0, 0.5];
        let rho = Objective::Squared(Squared).line_minimum(&y, &base, &dir, None, 0.0);
        let num: f64 = (0..4).map(|i| (y[i] - base[i]) * dir[i]).sum();
        let den: f64 = dir.iter().map(|d| d * d).sum();
        assert!((rho - num / den).abs() < 1e-12);
    }
}
