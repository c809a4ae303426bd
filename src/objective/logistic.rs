use super::point_loss::{Link, PointLoss};

/// log(1 + e^z), without overflow.
#[inline(always)]
fn softplus(z: f64) -> f64 {
    z.max(0.0) + (-z.abs()).exp().ln_1p()
}

/// Logistic loss log(1 + e^{−ỹf}) + (d/2)f² with optional probability
/// clamping ρ (Sun, Zhang & Zhou eq. 17); σ = ¼ + d.
#[derive(Clone, Copy, Debug)]
pub struct Logistic {
    /// d: the ridge term that makes the loss strongly convex (RGBM's regularized logistic).
    pub reg: f64,
    pub clamp: Option<f64>,
}

impl PointLoss for Logistic {
    #[inline(always)]
    fn value(&self, y: f64, f: f64) -> f64 {
        let signed = if y > 0.5 { f } else { -f };
        softplus(-signed) + 0.5 * self.reg * f * f
    }
    #[inline(always)]
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64) {
        // p = sigmoid(f) and q = 1 − p, both from one exp and without
        // cancellation, so gradients stay exact far into the tails.
        let e = (-f.abs()).exp();
        let (small, large) = (e / (1.0 + e), 1.0 / (1.0 + e));
        let (mut p, mut q) = if f >= 0.0 {
            (large, small)
        } else {
            (small, large)
        };
        if let Some(rho) = self.clamp {
            // Bound every Newton step: a badly misclassified row counts as p = ρ / 1−ρ.
            if y < 0.5 && p > 1.0 - rho {
                (p, q) = (1.0 - rho, rho);
            } else if y > 0.5 && p < rho {
                (p, q) = (rho, 1.0 - rho);
            }
        }
        let g = if y > 0.5 { -q } else { p };
        (g + self.reg * f, p * q + self.reg)
    }
    fn smoothness(&self) -> Option<f64> {
        Some(0.25 + self.reg)
    }
    fn start(&self, y: &[f64], w: Option<&[f64]>) -> crate::error::Result<f64> {
        let (pos, tot) = y.iter().enumerate().fold((0.0, 0.0), |(p, t), (i, &v)| {
            let wi = w.map_or(1.0, |w| w[i]);
            (p + wi * v, t + wi)
        });
        let p = (pos / tot).clamp(1e-12, 1.0 - 1e-12);
        Ok((p / (1.0 - p)).ln())
    }
    fn link(&self) -> Link {
        Link::Sigmoid { scale: 1.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn derivatives() {
        let l = Logistic {
            reg: 0.01,
            clamp: None,
        };
        for (y, f) in [(0.0, 1.0), (1.0, -2.0), (1.0, 3.5), (0.0, -0.3)] {
            crate::objective::tests::check_derivatives(&l, y, f, true);
        }
        assert!(l.value(1.0, 800.0).is_finite() && l.value(0.0, 800.0).is_finite());
    }

    #[test]
    fn clamping_bounds_the_gradient_of_misclassified_rows() {
        let l = Logistic {
            reg: 0.0,
            clamp: Some(0.05),
        };
        let (g, h) = l.grad_hess(1.0, -20.0);
        assert!((g - (0.05 - 1.0)).abs() < 1e-15);
        assert!((h - 0.05 * 0.95).abs() < 1e-15);
        let (g, _) = l.grad_hess(0.0, 20.0);
        assert!((g - 0.95).abs() < 1e-15);
        // Well-classified rows are untouched.
        let u = Logistic {
            reg: 0.0,
            clamp: None,
        };
        assert_eq!(l.grad_hess(1.0, 2.0), u.grad_hess(1.0, 2.0));
    }

    #[test]
    fn tails_are_exact() {
        // 1 − sigmoid(40) ≈ 4.25e-18 would round to 0 if computed as p − 1.
        let u = Logistic {
            reg: 0.0,
            clamp: None,
        };
        let (g, h) = u.grad_hess(1.0, 40.0);
        let want = (-40f64).exp() / (1.0 + (-40f64).exp());
        assert!(
            (g + want).abs() < 1e-30 && (h - want).abs() < 1e-30,
            "{g} {h}"
        );
        let (g, _) = u.grad_hess(0.0, -40.0);
        assert!((g - want).abs() < 1e-30);
    }
}
