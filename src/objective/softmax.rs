//! Multiclass softmax cross-entropy −log p_y, p = softmax(f_1..f_K).
//!
//! Scores and gradients of all K classes live in one buffer, class-major:
//! the value of class k for row i is at `k·n + i`, so each class's slice is a
//! plain single-output buffer for the tree grower.
use rayon::prelude::*;

use super::point_loss::CHUNK;

#[derive(Clone, Copy, Debug)]
pub struct Softmax {
    pub n_classes: usize,
}

/// Writes softmax(f_i) into `p` for row `i` of a class-major buffer with `n` rows.
#[inline(always)]
fn row_probabilities(f: &[f64], n: usize, i: usize, p: &mut [f64]) {
    let m = (0..p.len())
        .map(|k| f[k * n + i])
        .fold(f64::NEG_INFINITY, f64::max);
    let mut total = 0.0;
    for (k, pk) in p.iter_mut().enumerate() {
        *pk = (f[k * n + i] - m).exp();
        total += *pk;
    }
    p.iter_mut().for_each(|pk| *pk /= total);
}

impl Softmax {
    /// softmax(scores) into `p`: the class probabilities of one row's K scores.
    pub fn probabilities(scores: &[f64], p: &mut [f64]) {
        row_probabilities(scores, 1, 0, p);
    }

    /// σ: the largest eigenvalue of diag(p) − ppᵀ is at most ½.
    pub const SMOOTHNESS: f64 = 0.5;

    pub fn n_outputs(&self) -> usize {
        self.n_classes
    }

    pub fn smoothness(&self) -> Option<f64> {
        Some(Self::SMOOTHNESS)
    }

    /// −log p_y for row `i` of a class-major buffer, as logsumexp(f_i) − f_{i,y}.
    #[inline(always)]
    pub fn row_value(&self, y: f64, f: &[f64], n: usize, i: usize) -> f64 {
        self.value_of(y, |k| f[k * n + i])
    }

    /// −log p_y for one row whose class-k score is `score(k)`.
    #[inline(always)]
    pub fn value_of(&self, y: f64, score: impl Fn(usize) -> f64) -> f64 {
        let m = (0..self.n_classes)
            .map(&score)
            .fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = (0..self.n_classes).map(|k| (score(k) - m).exp()).sum();
        m + s.ln() - score(y as usize)
    }

    /// Per-class weighted (g, h): g_k = p_k − 1{y = k}, h_k = K/(K−1)·p_k(1 − p_k).
    ///
    /// The K/(K−1) factor is Friedman's (2001) multiclass Newton step: the K
    /// class trees move together, and the plain diagonal step overshoots.
    pub fn gradients(&self, y: &[f64], f: &[f64], w: Option<&[f64]>, out: &mut [[f64; 2]]) {
        let n = y.len();
        let k_out = self.n_classes;
        let factor = k_out as f64 / (k_out as f64 - 1.0);
        // Regroup the K class slices by row chunk, so each task owns its rows in every class.
        let n_chunks = n.div_ceil(CHUNK);
        let mut per_chunk: Vec<Vec<&mut [[f64; 2]]>> =
            (0..n_chunks).map(|_| Vec::with_capacity(k_out)).collect();
        for class in out.chunks_mut(n) {
            for (c, part) in class.chunks_mut(CHUNK).enumerate() {
                per_chunk[c].push(part);
            }
        }
        per_chunk
            .into_par_iter()
            .enumerate()
            .for_each(|(c, mut parts)| {
                let mut p = vec![0.0; k_out];
                let base = c * CHUNK;
                for j in 0..parts[0].len() {
                    let i = base + j;
                    row_probabilities(f, n, i, &mut p);
                    let wi = w.map_or(1.0, |w| w[i]);
                    let label = y[i] as usize;
                    for (k, part) in parts.iter_mut().enumerate() {
                        let g = p[k] - if k == label { 1.0 } else { 0.0 };
                        part[j] = [wi * g, wi * factor * p[k] * (1.0 - p[k])];
                    }
                }
            });
    }

    /// Starting scores: log of the weighted class frequencies (floored, so
    /// a class without weight starts finite).
    pub fn optimal_constants(&self, y: &[f64], w: Option<&[f64]>) -> Vec<f64> {
        self.constants_from_masses(&self.class_masses(y, w))
    }

    /// Σw of each class's rows.
    pub fn class_masses(&self, y: &[f64], w: Option<&[f64]>) -> Vec<f64> {
        let mut mass = vec![0.0; self.n_classes];
        for (i, &v) in y.iter().enumerate() {
            mass[v as usize] += w.map_or(1.0, |w| w[i]);
        }
        mass
    }

    /// The optimal constant scores: the log class frequencies.
    pub fn constants_from_masses(&self, mass: &[f64]) -> Vec<f64> {
        let total: f64 = mass.iter().sum();
        mass.iter().map(|m| (m / total).max(1e-6).ln()).collect()
    }

    /// (Σ w dℓ/dρ, Σ w d²ℓ/dρ²) of ℓ(y, base + ρ·dir) at ρ = `rho`, per row:
    /// dℓ/dρ = Σ_k p_k d_k − d_y and d²ℓ/dρ² = Σ_k p_k d_k² − (Σ_k p_k d_k)².
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
        p: &mut [f64],
    ) -> (f64, f64) {
        let k_out = self.n_classes;
        let m = (0..k_out)
            .map(|k| base[k * n + i] + rho * dir[k * n + i])
            .fold(f64::NEG_INFINITY, f64::max);
        let mut total = 0.0;
        for (k, pk) in p.iter_mut().enumerate() {
            *pk = (base[k * n + i] + rho * dir[k * n + i] - m).exp();
            total += *pk;
        }
        let (mut pd, mut pdd) = (0.0, 0.0);
        for (k, pk) in p.iter_mut().enumerate() {
            *pk /= total;
            let d = dir[k * n + i];
            pd += *pk * d;
            pdd += *pk * d * d;
        }
        (pd - dir[y as usize * n + i], pdd - pd * pd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gradients and hessians agree with finite differences of the row loss.
    #[test]
    fn gradients_match_finite_differences() {
        let k_out = 4;
        let n = 3;
        let s = Softmax { n_classes: k_out };
        let y = [0.0, 2.0, 3.0];
        let f: Vec<f64> = (0..k_out * n)
            .map(|j| ((j * 7) % 5) as f64 * 0.7 - 1.2)
            .collect();
        let mut gh = vec![[0.0; 2]; k_out * n];
        s.gradients(&y, &f, None, &mut gh);
        let e = 1e-5;
        for i in 0..n {
            for k in 0..k_out {
                let mut up = f.clone();
                let mut down = f.clone();
                up[k * n + i] += e;
                down[k * n + i] -= e;
                let fd_g =
                    (s.row_value(y[i], &up, n, i) - s.row_value(y[i], &down, n, i)) / (2.0 * e);
                assert!(
                    (gh[k * n + i][0] - fd_g).abs() < 1e-6,
                    "g row {i} class {k}"
                );
                let mut gu = vec![[0.0; 2]; k_out * n];
                let mut gd = gu.clone();
                s.gradients(&y, &up, None, &mut gu);
                s.gradients(&y, &down, None, &mut gd);
                let fd_h = (gu[k * n + i][0] - gd[k * n + i][0]) / (2.0 * e);
                let factor = k_out as f64 / (k_out as f64 - 1.0);
                assert!(
                    (gh[k * n + i][1] - factor * fd_h).abs() < 1e-5,
                    "h row {i} class {k}"
                );
            }
        }
    }

    #[test]
    fn constants_are_log_frequencies() {
        let s = Softmax { n_classes: 3 };
        let c = s.optimal_constants(&[0.0, 1.0, 1.0, 2.0], Some(&[1.0, 1.0, 1.0, 1.0]));
        assert!((c[1] - 0.5f64.ln()).abs() < 1e-12 && (c[0] - 0.25f64.ln()).abs() < 1e-12);
    }
}
