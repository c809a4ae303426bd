//! A loss known only through the gradients and hessians a training
//! `Monitor` supplies each round (`Monitor::gradients`; in Python, a
//! callable). The core never evaluates it: it has no value, no σ and no
//! closed-form constant, so the fit starts from 0 and the rules that need a
//! value (line search, recorded training loss) or σ refuse it.

/// Regression when `n_classes` is None; else labels 0..K−1 with one score
/// per row for two classes and K for more (as the built-in losses).
#[derive(Clone, Copy, Debug)]
pub struct Custom {
    pub n_classes: Option<usize>,
}

impl Custom {
    pub fn n_outputs(&self) -> usize {
        match self.n_classes {
            Some(k) if k > 2 => k,
            _ => 1,
        }
    }

    /// Checks the gradients and hessians a monitor returned for one fit
    /// round: finite, and for Newton gain or leaves no negative hessian
    /// (a negative hessian sum would flip the leaf's sign). Indices are
    /// (row, output) of the class-major buffer.
    pub fn check_gradients(&self, gh: &[[f64; 2]], newton: bool) -> Result<(), String> {
        let n = gh.len() / self.n_outputs().max(1);
        let at = |j: usize| {
            if self.n_outputs() == 1 {
                format!("row {j}")
            } else {
                format!("row {}, class {}", j % n, j / n)
            }
        };
        if let Some(j) = gh
            .iter()
            .position(|[g, h]| !g.is_finite() || !h.is_finite())
        {
            let [g, h] = gh[j];
            return Err(format!(
                "the custom loss returned a non-finite value at {} (grad {g}, hess {h})",
                at(j)
            ));
        }
        if newton && let Some(j) = gh.iter().position(|&[_, h]| h < 0.0) {
            return Err(format!(
                "the custom loss returned a negative hessian ({}) at {}; Newton steps need hess >= 0: \
                 use gain='gradient' and leaf='gradient' for a loss whose hessian can be negative",
                gh[j][1],
                at(j)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_follow_the_classes() {
        assert_eq!(Custom { n_classes: None }.n_outputs(), 1);
        assert_eq!(Custom { n_classes: Some(2) }.n_outputs(), 1);
        assert_eq!(Custom { n_classes: Some(5) }.n_outputs(), 5);
    }

    #[test]
    fn bad_gradients_are_named_by_row_and_class() {
        let c = Custom { n_classes: Some(3) };
        let mut gh = vec![[0.5, 1.0]; 6];
        assert!(c.check_gradients(&gh, true).is_ok());
        gh[4] = [f64::NAN, 1.0];
        let e = c.check_gradients(&gh, true).unwrap_err();
        assert!(e.contains("row 0, class 2"), "{e}");
        gh[4] = [0.5, -1.0];
        let e = c.check_gradients(&gh, true).unwrap_err();
        assert!(e.contains("negative hessian"), "{e}");
        assert!(c.check_gradients(&gh, false).is_ok());
    }
}
