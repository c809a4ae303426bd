use super::point_loss::{Link, PointLoss};

/// AdaBoost's exponential loss e^{−ỹf}. Not smooth (no σ): the constant
/// step rule refuses it. Probabilities are sigmoid(2f) (half log-odds).
#[derive(Clone, Copy, Debug)]
pub struct Exponential;

impl PointLoss for Exponential {
    #[inline(always)]
    fn value(&self, y: f64, f: f64) -> f64 {
        let s = if y > 0.5 { 1.0 } else { -1.0 };
        (-s * f).exp()
    }
    #[inline(always)]
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64) {
        let s = if y > 0.5 { 1.0 } else { -1.0 };
        let e = (-s * f).exp();
        (-s * e, e)
    }
    fn smoothness(&self) -> Option<f64> {
        None
    }
    fn start(&self, y: &[f64], w: Option<&[f64]>) -> crate::error::Result<f64> {
        let (pos, tot) = y.iter().enumerate().fold((0.0, 0.0), |(p, t), (i, &v)| {
            let wi = w.map_or(1.0, |w| w[i]);
            (p + wi * v, t + wi)
        });
        let p = (pos / tot).clamp(1e-12, 1.0 - 1e-12);
        Ok(0.5 * (p / (1.0 - p)).ln())
    }
    /// σ(2f), as f / 0.5 (exact).
    fn link(&self) -> Link {
        Link::Sigmoid { scale: 0.5 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn derivatives() {
        for (y, f) in [(0.0, 1.0), (1.0, -2.0), (1.0, 0.5)] {
            crate::objective::tests::check_derivatives(&Exponential, y, f, true);
        }
    }
}
