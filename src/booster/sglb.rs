//! Stochastic Gradient Langevin Boosting (Ustimenko & Prokhorenkova 2021,
//! Algorithm 2) in CatBoost's normalisation: per-row noise of scale
//! c = sqrt(2 / (ε·β)) on the gradients that choose the tree structure, and
//! independent noise on the leaf values.
//!
//! The paper writes the gradient-noise variance as 2N/(εβ') for the loss
//! averaged over N rows (gradients of size 1/N); with per-row (summed)
//! gradients, as here and in CatBoost, scaling by N gives the same process
//! with per-row variance c² = 2/(εβ), i.e. β here is the paper's β'/N.
use rand::RngExt;
use rand_distr::StandardNormal;
use rayon::prelude::*;

use super::shard::ShardRows;
use crate::reduce::Reduce;

use crate::alloc::filled_vec;
use crate::error::Result;
use crate::histogram::{BinStats, Gradients};
use crate::params::{BoosterParams, noise_scale};
use crate::rng::{Purpose, RowDraws, stream};
use crate::split::{Curvature, SplitRule};
use crate::tree::Tree;
use crate::tree::grower::sum_rows;

/// Rows per parallel task of the noise pass.
const CHUNK: usize = 16 * 1024;

/// `noisy[i] = [g_i + c·ζ_i, h_i]` with ζ_i ~ N(0, 1) i.i.d., row i's own
/// draw of round `round` (so it does not depend on how rows are split up).
pub fn add_gradient_noise(
    gh: &[[f64; 2]],
    noisy: &mut [[f64; 2]],
    c: f64,
    seed: u64,
    round: u64,
    rows: &ShardRows,
) {
    let draws = RowDraws::new(seed, Purpose::LangevinGradient, round);
    noisy
        .par_chunks_mut(CHUNK)
        .zip(gh.par_chunks(CHUNK))
        .enumerate()
        .for_each(|(k, (out, src))| {
            let first = k * CHUNK;
            for (i, (o, &[g, h])) in out.iter_mut().zip(src).enumerate() {
                let z: f64 = draws.row(rows.id(first + i)).sample(StandardNormal);
                *o = [g + c * z, h];
            }
        });
}

/// Leaf values with SGLB's leaf noise: −(G + c·sqrt(D)·z)/D with D = W + λ
/// (gradient leaves) or H + λ (Newton leaves), z ~ N(0, 1) per leaf.
pub fn noisy_leaf_values(
    sums: &[BinStats],
    rule: &SplitRule,
    c: f64,
    seed: u64,
    round: u64,
) -> Vec<f64> {
    let mut rng = stream(seed, Purpose::LangevinLeaf, round);
    sums.iter()
        .map(|s| {
            let z: f64 = rng.sample(StandardNormal);
            let d = SplitRule::denominator(rule.leaf, s, rule.lambda);
            let mut noisy = *s;
            if rule.leaf == Curvature::Hessian && d < rule.min_child_weight {
                // Only a root that could not split has H + λ below the
                // hessian minimum; its noise (std c/sqrt(D), unbounded as
                // H → 0) is that of a leaf at the minimum.
                noisy.g += c * (d.max(0.0) / rule.min_child_weight.sqrt()) * z;
            } else {
                noisy.g += c * d.max(0.0).sqrt() * z;
            }
            rule.leaf_value(&noisy)
        })
        .collect()
}

/// SGLB's per-fit state: the two noise scales and a buffer for the noisy
/// gradients. The scales are for weights of mean `weight_unit`: gradients
/// (and so their noise) scale with the weights, leaf sums' noise with their
/// square root.
pub(crate) struct Langevin {
    gradient_c: f64,
    leaf_c: f64,
    noisy: Vec<[f64; 2]>,
    /// `summation="exact"`: the noisy gradients go on the grid too.
    exact: bool,
    weight_unit: f64,
}

impl Langevin {
    /// `None` unless `params.langevin`; `n` is the number of training rows.
    pub fn new(params: &BoosterParams, n: usize, weight_unit: f64) -> Result<Option<Langevin>> {
        if !params.langevin {
            return Ok(None);
        }
        let mut langevin = Langevin {
            gradient_c: 0.0,
            leaf_c: 0.0,
            noisy: filled_vec(n, [0.0f64; 2], "the Langevin gradients")?,
            exact: params.summation() == crate::params::Summation::Exact,
            weight_unit,
        };
        langevin.set_learning_rate(params, params.learning_rate);
        Ok(Some(langevin))
    }

    /// The noise of a step of `learning_rate`: variance 2/(εβ) per row.
    pub fn set_learning_rate(&mut self, params: &BoosterParams, learning_rate: f64) {
        let c = noise_scale(learning_rate, params.temperature);
        self.gradient_c = c * self.weight_unit;
        self.leaf_c = c * self.weight_unit.sqrt();
    }

    /// The gradients that choose a tree's structure: `gh` plus noise from
    /// the tree's stream.
    pub fn structure_gradients(
        &mut self,
        gh: &[[f64; 2]],
        seed: u64,
        tree: u64,
        rows: &ShardRows,
    ) -> Result<&[[f64; 2]]> {
        add_gradient_noise(gh, &mut self.noisy, self.gradient_c, seed, tree, rows);
        if self.exact {
            super::grid::round_gradients(&mut self.noisy, rows.n_total, rows.reduce)?;
        }
        Ok(&self.noisy)
    }

    /// The grown tree's noisy leaf values, from the sums of the clean
    /// gradients over each leaf's rows (`leaf_ranges` index `rows`).
    #[allow(clippy::too_many_arguments)]
    pub fn leaf_values(
        &self,
        clean: &Gradients,
        rows: &[u32],
        leaf_ranges: &[(usize, usize)],
        rule: &SplitRule,
        seed: u64,
        tree: u64,
        reduce: &dyn Reduce,
    ) -> Result<Vec<f64>> {
        let mut sums: Vec<BinStats> = leaf_ranges
            .par_iter()
            .map(|&(s, e)| sum_rows(&rows[s..e], clean))
            .collect();
        crate::reduce::sum_stats(reduce, &mut sums)?;
        Ok(noisy_leaf_values(&sums, rule, self.leaf_c, seed, tree))
    }
}

/// Model shrinkage F ← b + q·(F − b), q = 1 − γ·ν, on class-major scores
/// of `n` rows per output; `base_score` holds b per output.
pub(crate) fn shrink_scores(scores: &mut [f64], base_score: &[f64], q: f64, n: usize) {
    for (output, &b) in scores.chunks_mut(n.max(1)).zip(base_score) {
        output
            .par_chunks_mut(CHUNK)
            .for_each(|part| part.iter_mut().for_each(|s| *s = b + q * (*s - b)));
    }
}

/// Folds the model shrinkage into the trees once, after the last round:
/// the trees of round r (`k_out` per round) end up scaled by q^(R-1-r).
pub(crate) fn fold_shrinkage(trees: &mut [Tree], k_out: usize, q: f64) {
    let mut factor = 1.0;
    for round_trees in trees.rchunks_mut(k_out) {
        round_trees
            .iter_mut()
            .for_each(|t| t.leaf_value.iter_mut().for_each(|v| *v *= factor));
        factor *= q;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The structure noise has variance c² = 2/(εβ) for several (ε, β).
    #[test]
    fn gradient_noise_has_the_specified_variance() {
        let n = 200_000;
        let gh = vec![[0.5, 1.0]; n];
        let mut noisy = vec![[0.0; 2]; n];
        for (lr, beta) in [(0.1, 1e3), (0.03, 1e4), (0.5, 10.0)] {
            let c = noise_scale(lr, beta);
            add_gradient_noise(&gh, &mut noisy, c, 7, 3, &ShardRows::local(gh.len()));
            let mean = noisy.iter().map(|v| v[0] - 0.5).sum::<f64>() / n as f64;
            let var = noisy
                .iter()
                .map(|v| (v[0] - 0.5 - mean).powi(2))
                .sum::<f64>()
                / (n - 1) as f64;
            // Standard error of a variance estimate: c²·sqrt(2/n) ≈ 0.3% of c².
            assert!(
                (var / (c * c) - 1.0).abs() < 0.015,
                "lr {lr} beta {beta}: {var} vs {}",
                c * c
            );
            assert!(mean.abs() < 5.0 * c / (n as f64).sqrt());
            assert!(noisy.iter().all(|v| v[1] == 1.0));
        }
    }

    #[test]
    fn noise_is_reproducible_and_round_specific() {
        let gh = vec![[0.0, 1.0]; 40_000];
        let mut a = vec![[0.0; 2]; 40_000];
        let mut b = a.clone();
        let mut c = a.clone();
        add_gradient_noise(&gh, &mut a, 1.0, 1, 0, &ShardRows::local(gh.len()));
        add_gradient_noise(&gh, &mut b, 1.0, 1, 0, &ShardRows::local(gh.len()));
        add_gradient_noise(&gh, &mut c, 1.0, 1, 1, &ShardRows::local(gh.len()));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    /// A leaf whose hessian sum is below min_child_weight (a root that
    /// could not split) gets the noise of a leaf at the minimum, not c/sqrt(H).
    #[test]
    fn leaf_noise_is_bounded_by_the_hessian_minimum() {
        let rule = SplitRule {
            gain: Curvature::Hessian,
            leaf: Curvature::Hessian,
            lambda: 0.0,
            min_samples_leaf: 1.0,
            min_child_weight: 1e-3,
            min_split_gain: 0.0,
            cat: crate::split::gain::CatRule::default(),
            reg: crate::split::gain::LeafReg::NONE,
        };
        let c = 0.05;
        for h in [1e-3, 1e-20, 1e-60] {
            let s = BinStats {
                g: -h,
                h,
                w: 200.0,
                n: 200.0,
            };
            for r in 0..200 {
                let v = noisy_leaf_values(&[s], &rule, c, 5, r)[0];
                // −G/H = 1; the noise has std at most c/sqrt(1e-3) ≈ 1.6.
                assert!((v - 1.0).abs() < 8.0 * c / 1e-3f64.sqrt(), "H = {h}: {v}");
            }
        }
    }

    /// Leaf noise: over many draws the leaf value has mean −G/D and variance c²/D.
    #[test]
    fn leaf_noise_has_the_specified_variance() {
        let rule = SplitRule {
            gain: Curvature::Weight,
            leaf: Curvature::Weight,
            lambda: 1.0,
            min_samples_leaf: 1.0,
            min_child_weight: 0.0,
            min_split_gain: 0.0,
            cat: crate::split::gain::CatRule::default(),
            reg: crate::split::gain::LeafReg::NONE,
        };
        let s = BinStats {
            g: -6.0,
            h: 2.0,
            w: 3.0,
            n: 3.0,
        };
        let c = 0.5;
        let draws: Vec<f64> = (0..20_000)
            .flat_map(|r| noisy_leaf_values(&[s], &rule, c, 9, r))
            .collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (draws.len() - 1) as f64;
        assert!((mean - 1.5).abs() < 0.01, "{mean}");
        assert!((var / (c * c / 4.0) - 1.0).abs() < 0.05, "{var}");
    }
}
