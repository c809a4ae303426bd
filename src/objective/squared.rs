use super::point_loss::PointLoss;

/// ½(y − f)²; σ = 1.
#[derive(Clone, Copy, Debug)]
pub struct Squared;

impl PointLoss for Squared {
    #[inline(always)]
    fn value(&self, y: f64, f: f64) -> f64 {
        0.5 * (y - f) * (y - f)
    }
    #[inline(always)]
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64) {
        (f - y, 1.0)
    }
    fn smoothness(&self) -> Option<f64> {
        Some(1.0)
    }
    fn start(&self, y: &[f64], w: Option<&[f64]>) -> crate::error::Result<f64> {
        let (s, ws) = y.iter().enumerate().fold((0.0, 0.0), |(s, ws), (i, &v)| {
            let wi = w.map_or(1.0, |w| w[i]);
            (s + wi * v, ws + wi)
        });
        Ok(if ws > 0.0 { s / ws } else { 0.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn derivatives() {
        for (y, f) in [(0.0, 1.0), (2.5, -1.0), (-3.0, -3.5)] {
            crate::objective::tests::check_derivatives(&Squared, y, f, true);
        }
    }
}
