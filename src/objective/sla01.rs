use super::point_loss::{Link, PointLoss, sigmoid};

/// Smoothed 0-1 loss 1 − sigmoid(ỹf/ς) (SGLB, eq. 12; the paper's printed
/// sign inside the sigmoid is a typo). Not convex: its hessian can be
/// negative, so it is used with gradient gain and leaves only.
#[derive(Clone, Copy, Debug)]
pub struct Sla01 {
    /// ς: the smaller, the closer to the 0-1 loss.
    pub scale: f64,
}

/// max_z |d²/dz² sigmoid(z)| = 1/(6√3): the smoothness of the loss in z = f/ς.
const SIGMOID_CURVATURE: f64 = 0.096_225_044_864_937_63;

impl PointLoss for Sla01 {
    #[inline(always)]
    fn value(&self, y: f64, f: f64) -> f64 {
        let s = if y > 0.5 { 1.0 } else { -1.0 };
        sigmoid(-s * f / self.scale)
    }
    #[inline(always)]
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64) {
        let s = if y > 0.5 { 1.0 } else { -1.0 };
        let p = sigmoid(s * f / self.scale);
        let q = sigmoid(-s * f / self.scale);
        let pq = p * q;
        (
            -s * pq / self.scale,
            -pq * (q - p) / (self.scale * self.scale),
        )
    }
    fn smoothness(&self) -> Option<f64> {
        Some(SIGMOID_CURVATURE / (self.scale * self.scale))
    }
    /// The 0-1 loss has no finite best constant (it keeps falling towards the
    /// majority class), so boosting starts from 0, as in the paper.
    fn start(&self, _y: &[f64], _w: Option<&[f64]>) -> crate::error::Result<f64> {
        Ok(0.0)
    }
    fn link(&self) -> Link {
        Link::Sigmoid { scale: self.scale }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn derivatives_and_smoothness() {
        let l = Sla01 { scale: 0.3 };
        for (y, f) in [(0.0, 0.2), (1.0, -0.4), (1.0, 0.05), (0.0, -1.0)] {
            crate::objective::tests::check_derivatives(&l, y, f, true);
        }
        // The largest |h| over a fine grid matches σ.
        let sigma = l.smoothness().unwrap();
        let max_h = (-3000..3000)
            .map(|k| l.grad_hess(1.0, k as f64 * 1e-3).1.abs())
            .fold(0.0, f64::max);
        assert!((max_h - sigma).abs() < 1e-4 * sigma, "{max_h} vs {sigma}");
        assert!((l.value(1.0, 0.0) - 0.5).abs() < 1e-15);
    }
}
