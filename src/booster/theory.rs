//! The quantities the papers explain their results with, per tree, from the
//! leaf sums of the rows the tree was fitted to.
//!
//! - Sun, Zhang & Zhou (2014), eqs. 27 and 36: the weak-learnability ratios
//!   γ = Σ_l G_l²/n_l ÷ Σ_i g_i² (how well the tree's indicator basis
//!   captures the gradient) and γ* = Σ_l G_l²/H_l ÷ Σ_i g_i²/h_i (the same
//!   in the hessian metric; it governs Newton boosting's linear rate).
//!   Their Table 2 reports the minimum of each ratio over the iterations.
//! - Lu & Mazumder (2020), section 4.1: the cosine |⟨r, b⟩|/‖r‖ of the
//!   round's learner b = u/‖u‖ (u the tree's output) with the residual
//!   r = −g; its minimum over the rounds is the realised minimal cosine
//!   angle Θ that sets RGBM's linear rate.
//!
//! With sample weights the rows carry ĝ = w·g and ĥ = w·h; the sums are
//! then taken in the weighted inner product (g_i² becomes ĝ_i²/w_i), which
//! is the unweighted formula when every weight is 1.
use rayon::prelude::*;

use crate::histogram::Gradients;

/// One tree's diagnostics; None where undefined (a zero gradient, a
/// hessian ≤ 0 for γ*, a zero tree for the cosine).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TreeTheory {
    pub gamma: Option<f64>,
    pub gamma_star: Option<f64>,
    pub cosine: Option<f64>,
}

/// Per-leaf sums: G, H, W, Σ ĝ²/w, Σ ĝ²/ĥ, and whether some ĥ ≤ 0.
#[derive(Clone, Copy, Default)]
struct LeafSums {
    g: f64,
    h: f64,
    w: f64,
    g2_w: f64,
    g2_h: f64,
    curved: bool,
}

fn leaf_sums(rows: &[u32], grads: &Gradients) -> LeafSums {
    let mut s = LeafSums {
        curved: true,
        ..LeafSums::default()
    };
    for &r in rows {
        let [g, h] = grads.gh[r as usize];
        let w = grads.weights.map_or(1.0, |w| w[r as usize]);
        s.g += g;
        s.h += h;
        s.w += w;
        if w > 0.0 {
            s.g2_w += g * g / w;
        }
        if h > 0.0 {
            s.g2_h += g * g / h;
        } else if w > 0.0 {
            s.curved = false;
        }
    }
    s
}

/// The diagnostics of a tree whose leaf l holds `rows[ranges[l].0..ranges[l].1]`
/// and outputs `u[l]` (any positive scale: the ratios do not depend on it).
/// Leaves are summed in parallel and combined in leaf order, so the values
/// do not depend on the thread count.
pub fn tree_theory(
    grads: &Gradients,
    rows: &[u32],
    ranges: &[(usize, usize)],
    u: &[f64],
) -> TreeTheory {
    // Small trees on few rows are summed on this thread: a parallel pass
    // would cost more than the sums.
    const PARALLEL_ROWS: usize = 1 << 14;
    let sums = |&(s, e): &(usize, usize)| leaf_sums(&rows[s..e], grads);
    let leaves: Vec<LeafSums> = if rows.len() < PARALLEL_ROWS {
        ranges.iter().map(sums).collect()
    } else {
        ranges.par_iter().map(sums).collect()
    };
    let (mut fit_w, mut fit_h, mut total_w, mut total_h) = (0.0, 0.0, 0.0, 0.0);
    let (mut inner, mut norm_u) = (0.0, 0.0);
    let mut curved = true;
    for (s, &ul) in leaves.iter().zip(u) {
        if s.w > 0.0 {
            fit_w += s.g * s.g / s.w;
        }
        if s.h > 0.0 {
            fit_h += s.g * s.g / s.h;
        }
        total_w += s.g2_w;
        total_h += s.g2_h;
        curved &= s.curved;
        inner += ul * s.g;
        norm_u += ul * ul * s.w;
    }
    let ratio = |num: f64, den: f64| (den > 0.0).then(|| num / den);
    TreeTheory {
        gamma: ratio(fit_w, total_w),
        gamma_star: if curved { ratio(fit_h, total_h) } else { None },
        cosine: ratio(inner.abs(), (norm_u * total_w).sqrt()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed values on four rows in two leaves.
    #[test]
    fn closed_forms_on_four_rows() {
        // Leaf 0: rows 0, 1; leaf 1: rows 2, 3 (stored out of order).
        let gh = [[1.0, 0.5], [3.0, 1.0], [-2.0, 0.25], [0.0, 2.0]];
        let rows = [1, 0, 3, 2];
        let grads = Gradients::new(&gh, None);
        let t = tree_theory(&grads, &rows, &[(0, 2), (2, 4)], &[-2.0, 1.0]);
        // γ = (4²/2 + 2²/2) / (1 + 9 + 4 + 0) = 10/14.
        assert!((t.gamma.unwrap() - 10.0 / 14.0).abs() < 1e-15);
        // γ* = (16/1.5 + 4/2.25) / (1/0.5 + 9/1 + 4/0.25 + 0/2) = (32/3 + 16/9) / 27.
        let star = (32.0 / 3.0 + 16.0 / 9.0) / 27.0;
        assert!((t.gamma_star.unwrap() - star).abs() < 1e-15);
        // cos = |(-2)(4) + (1)(-2)| / sqrt(((-2)²·2 + 1²·2) · 14) = 10 / sqrt(140).
        assert!((t.cosine.unwrap() - 10.0 / 140f64.sqrt()).abs() < 1e-15);
        // These are gradient leaves, u = −G/n = (−4/2, 2/2): then cos² = γ.
        assert!((t.cosine.unwrap().powi(2) - t.gamma.unwrap()).abs() < 1e-15);
    }

    /// Weights of 2 on every row with ĝ = 2g, ĥ = 2h give the unweighted values.
    #[test]
    fn uniform_weights_change_nothing_and_bad_hessians_drop_gamma_star() {
        let gh = [[0.3, 0.2], [-0.7, 0.1], [0.4, 0.3]];
        let doubled: Vec<[f64; 2]> = gh.iter().map(|[g, h]| [2.0 * g, 2.0 * h]).collect();
        let w = [2.0; 3];
        let rows = [0, 1, 2];
        let ranges = [(0, 1), (1, 3)];
        let plain = tree_theory(&Gradients::new(&gh, None), &rows, &ranges, &[0.5, -0.1]);
        let weighted = tree_theory(
            &Gradients::new(&doubled, Some(&w)),
            &rows,
            &ranges,
            &[0.5, -0.1],
        );
        for (a, b) in [
            (plain.gamma, weighted.gamma),
            (plain.gamma_star, weighted.gamma_star),
            (plain.cosine, weighted.cosine),
        ] {
            assert!((a.unwrap() - b.unwrap()).abs() < 1e-14);
        }
        let negative = [[0.3, 0.2], [-0.7, -0.1], [0.4, 0.3]];
        let t = tree_theory(
            &Gradients::new(&negative, None),
            &rows,
            &ranges,
            &[0.5, -0.1],
        );
        assert_eq!(t.gamma_star, None);
        assert!(t.gamma.is_some());
        let zero = tree_theory(&Gradients::new(&gh, None), &rows, &ranges, &[0.0, 0.0]);
        assert_eq!(zero.cosine, None);
    }
}
