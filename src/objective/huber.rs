use super::point_loss::PointLoss;
use super::quantile::weighted_quantile;

/// Huber loss with threshold δ; σ = 1.
///
/// Outside the quadratic zone the true hessian is 0, which would make Newton
/// leaves explode. We use δ/|r| there instead: the curvature of the tightest
/// quadratic majoriser at f (the IRLS weight), which keeps Newton steps bounded
/// by the residual.
#[derive(Clone, Copy, Debug)]
pub struct Huber {
    pub delta: f64,
}

impl PointLoss for Huber {
    #[inline(always)]
    fn value(&self, y: f64, f: f64) -> f64 {
        let r = (y - f).abs();
        if r <= self.delta {
            0.5 * r * r
        } else {
            self.delta * r - 0.5 * self.delta * self.delta
        }
    }
    #[inline(always)]
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64) {
        let r = f - y;
        if r.abs() <= self.delta {
            (r, 1.0)
        } else {
            (self.delta * r.signum(), self.delta / r.abs())
        }
    }
    fn smoothness(&self) -> Option<f64> {
        Some(1.0)
    }
    /// The weighted median, from which Newton/IRLS refines to the Huber minimiser.
    fn start(&self, y: &[f64], w: Option<&[f64]>) -> crate::error::Result<f64> {
        Ok(weighted_quantile(y, |i| w.map_or(1.0, |w| w[i]), 0.5)?.unwrap_or(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn derivatives() {
        let h = Huber { delta: 1.5 };
        for (y, f) in [(0.0, 1.0), (2.5, 2.0), (-3.0, -3.5)] {
            crate::objective::tests::check_derivatives(&h, y, f, true);
        }
        // Outside the zone the gradient is exact; the hessian is the IRLS surrogate.
        for (y, f) in [(0.0, 4.0), (2.5, -1.0)] {
            crate::objective::tests::check_derivatives(&h, y, f, false);
            let (_, hh) = h.grad_hess(y, f);
            assert!((hh - 1.5 / (y - f).abs()).abs() < 1e-15);
        }
    }
}
