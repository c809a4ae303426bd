//! Losses of a positive mean μ = e^f (log link), as the anchors define them:
//! Poisson counts, Gamma and Tweedie amounts. The raw score is log μ; users
//! see μ. None is smooth (e^f has no bounded curvature).
use super::point_loss::{Link, PointLoss};

/// log of the weighted mean of y: the best constant of every log-link loss
/// (Σ w (μ − y) μ^k = 0 at μ = mean y).
fn log_mean(y: &[f64], w: Option<&[f64]>) -> f64 {
    let (s, t) = y.iter().enumerate().fold((0.0, 0.0), |(s, t), (i, &v)| {
        let wi = w.map_or(1.0, |w| w[i]);
        (s + wi * v, t + wi)
    });
    (s / t).ln()
}

/// Poisson negative log-likelihood e^f − y·f (without log y!).
///
/// The hessian is e^(f + 0.7) rather than e^f, as in LightGBM and XGBoost
/// (`max_delta_step`): where a leaf's predicted mean is far below its
/// counts, e^f is tiny and a full Newton step would overshoot by orders of
/// magnitude.
#[derive(Clone, Copy, Debug)]
pub struct Poisson;

/// e^0.7: the hessian inflation of the Poisson loss.
const POISSON_HESSIAN_FACTOR: f64 = 2.013_752_707_470_477;

impl PointLoss for Poisson {
    #[inline(always)]
    fn value(&self, y: f64, f: f64) -> f64 {
        f.exp() - y * f
    }
    #[inline(always)]
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64) {
        let mu = f.exp();
        (mu - y, mu * POISSON_HESSIAN_FACTOR)
    }
    fn smoothness(&self) -> Option<f64> {
        None
    }
    fn start(&self, y: &[f64], w: Option<&[f64]>) -> crate::error::Result<f64> {
        Ok(log_mean(y, w))
    }
    fn link(&self) -> Link {
        Link::Exp
    }
}

/// Gamma negative log-likelihood (unit shape) y·e^(−f) + f.
#[derive(Clone, Copy, Debug)]
pub struct Gamma;

impl PointLoss for Gamma {
    #[inline(always)]
    fn value(&self, y: f64, f: f64) -> f64 {
        y * (-f).exp() + f
    }
    #[inline(always)]
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64) {
        let e = y * (-f).exp();
        (1.0 - e, e)
    }
    fn smoothness(&self) -> Option<f64> {
        None
    }
    fn start(&self, y: &[f64], w: Option<&[f64]>) -> crate::error::Result<f64> {
        Ok(log_mean(y, w))
    }
    fn link(&self) -> Link {
        Link::Exp
    }
}

/// Tweedie negative log-likelihood with variance power ρ in (1, 2):
/// −y·e^((1−ρ)f)/(1−ρ) + e^((2−ρ)f)/(2−ρ), a compound Poisson–Gamma for
/// amounts with exact zeros.
#[derive(Clone, Copy, Debug)]
pub struct Tweedie {
    pub power: f64,
}

impl PointLoss for Tweedie {
    #[inline(always)]
    fn value(&self, y: f64, f: f64) -> f64 {
        let (a, b) = (1.0 - self.power, 2.0 - self.power);
        -y * (a * f).exp() / a + (b * f).exp() / b
    }
    #[inline(always)]
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64) {
        let (a, b) = (1.0 - self.power, 2.0 - self.power);
        let (ea, eb) = ((a * f).exp(), (b * f).exp());
        (-y * ea + eb, -a * y * ea + b * eb)
    }
    fn smoothness(&self) -> Option<f64> {
        None
    }
    fn start(&self, y: &[f64], w: Option<&[f64]>) -> crate::error::Result<f64> {
        Ok(log_mean(y, w))
    }
    fn link(&self) -> Link {
        Link::Exp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objective::tests::check_derivatives;

    #[test]
    fn derivatives_match_finite_differences() {
        for (y, f) in [(0.0f64, 0.3), (3.0, 1.2), (1.0, -2.0), (7.5, 2.0)] {
            check_derivatives(&Gamma, y.max(0.1), f, true);
            for power in [1.1, 1.5, 1.9] {
                check_derivatives(&Tweedie { power }, y, f, true);
            }
            // The Poisson hessian is the documented e^0.7 multiple of e^f.
            check_derivatives(&Poisson, y, f, false);
            let (_, h) = Poisson.grad_hess(y, f);
            assert!((h - f.exp() * 0.7f64.exp()).abs() <= 1e-12 * h);
        }
    }

    /// The best constant is log(mean y) for every log-link loss: the
    /// gradient sum vanishes there.
    #[test]
    fn log_mean_zeroes_the_gradient_sum() {
        let y = [0.2, 1.0, 4.0, 2.0, 0.5];
        let w = [1.0, 2.0, 0.5, 1.0, 3.0];
        let losses: [&dyn PointLoss; 3] = [&Poisson, &Gamma, &Tweedie { power: 1.3 }];
        for o in losses {
            let c = o.start(&y, Some(&w)).unwrap();
            let g: f64 = (0..5).map(|i| w[i] * o.grad_hess(y[i], c).0).sum();
            // Gamma's gradient sum is Σw(1 − y/μ): zero at μ = mean y too.
            assert!(g.abs() < 1e-9, "{g}");
        }
    }
}
