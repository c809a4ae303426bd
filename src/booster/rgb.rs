//! RGB: regularized gradient boosting over families of trees with structural
//! risk minimisation (Cortes, Mohri & Storcheus 2019, Algorithm 1).
//!
//! Family k = H(n_k, λ_k): trees with at most n_k internal nodes and leaf
//! vector ‖w‖₂ ≤ λ_k. Each round draws S families with p_k ∝ λ_k, takes the
//! family's best member on the current gradients (line 4), takes the
//! coordinate step α = −∇_k L / C_k and keeps the candidate with the lowest
//! training loss + β·Ω_k (or + β·|α|·Ω_k, Eq. 7). The paper's experiments
//! bound C_k by λ_k·σ (`RgbStep::Lipschitz`), so λ sets the step;
//! `RgbStep::Exact` uses the candidate's own σ·mean(h²).
//!
//! The best member (`RgbCandidate::Argmin`). For h = Σ_l w_l·1_l with leaf
//! gradient sums G_l and row weights n_l, ∇_k L = t = (1/m)·Σ_l w_l·G_l and
//! the step's first-order decrease is t²/(2C_k).
//! - Lipschitz, C_k = λ_k·σ: by Cauchy–Schwarz, t over ‖w‖ ≤ λ_k is largest
//!   at w = −λ_k·G/‖G‖ (on the sphere, leaves ∝ the gradient sums), where
//!   t = λ_k·‖G‖/m; the best structure maximises Σ_l G_l² (split score G²,
//!   `Curvature::Unit`). The update is F_l += −λ_k·G_l/(m·σ).
//! - Exact, C_k = σ·(1/m)·Σ_l w_l²·n_l: the decrease (Σ w_l G_l)²/(2mσ·Σ w_l² n_l)
//!   is scale-free and largest at w ∝ −G_l/n_l, with value Σ_l G_l²/n_l
//!   (the gradient tree, `Curvature::Weight`); the leaves are put on the
//!   sphere, which the step's α undoes.
//!
//! Neither structure depends on λ, so all candidates of a round are
//! prefixes of one best-first tree grown to the largest drawn size. Growth
//! is greedy, split by split, as for every tree learner: a prefix is the
//! greedy tree of its size, not a global optimum over structures.
use std::sync::Mutex;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::alloc::{filled_vec, with_capacity};
use crate::cancel::Cancel;
use crate::constraints::TreeConstraints;
use crate::data::BinnedDataset;
use crate::data::matrix::Element;
use crate::error::{Result, RgbmError};
use crate::histogram::Gradients;
use crate::objective::Objective;
use crate::params::{BoosterParams, RgbCandidate, RgbPenalty, RgbStep};
use crate::rng::{Purpose, RowDraws, stream};
use crate::selection::Candidates;
use crate::split::{Curvature, SplitRule};
use crate::tree::{GrowerConfig, NodeSelection, Tree, TreeGrower};

use super::scores::{add_leaf_values, add_tree_to_all};
use super::theory::{TreeTheory, tree_theory};
use super::training_data::Features;

/// The paper's grid.
pub const DEFAULT_NODES: [usize; 7] = [2, 4, 8, 16, 32, 64, 256];
pub const DEFAULT_LAMBDAS: [f64; 7] = [0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 4.0];

/// The family grid with its complexities.
#[derive(Clone, Debug)]
pub struct Families {
    pub nodes: Vec<usize>,
    pub lambdas: Vec<f64>,
    /// Ω_k normalised to [0, 1] over the grid (Theorem 1's Rademacher bound).
    pub omega: Vec<f64>,
    /// R̂(H_k) ≤ λ_k·sqrt((4n_k+2)·log₂(d+2)·ln(m+1)/m), Theorem 1's bound itself.
    pub rademacher: Vec<f64>,
    cumulative: Vec<f64>,
}

impl Families {
    /// The grid nodes × lambdas for `d` features and `m` rows.
    pub fn new(params: &BoosterParams, d: usize, m: usize) -> Families {
        let node_grid = params
            .rgb_nodes
            .clone()
            .unwrap_or_else(|| DEFAULT_NODES.to_vec());
        let lambda_grid = params
            .rgb_lambdas
            .clone()
            .unwrap_or_else(|| DEFAULT_LAMBDAS.to_vec());
        let (mut nodes, mut lambdas, mut omega) = (Vec::new(), Vec::new(), Vec::new());
        let (m, d) = (m as f64, d as f64);
        for &n in &node_grid {
            for &l in &lambda_grid {
                nodes.push(n);
                lambdas.push(l);
                omega.push(l * ((4 * n + 2) as f64 * (d + 2.0).log2() * (m + 1.0).ln() / m).sqrt());
            }
        }
        let rademacher = omega.clone();
        let top = omega.iter().cloned().fold(0.0, f64::max);
        if top > 0.0 {
            omega.iter_mut().for_each(|o| *o /= top);
        }
        let mut acc = 0.0;
        let cumulative = lambdas
            .iter()
            .map(|l| {
                acc += l;
                acc
            })
            .collect();
        Families {
            nodes,
            lambdas,
            omega,
            rademacher,
            cumulative,
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Draws a family with probability λ_k / Σλ.
    pub fn draw(&self, rng: &mut ChaCha8Rng) -> usize {
        let total = *self.cumulative.last().unwrap_or(&0.0);
        let u: f64 = rng.random::<f64>() * total;
        self.cumulative
            .partition_point(|&c| c <= u)
            .min(self.len() - 1)
    }
}

/// ‖w‖₂ without overflow: a diverging fit's huge gradient sums must not
/// read as an infinite norm (which would scale the leaves to zero and stall
/// the fit at garbage scores instead of letting the divergence check see it).
fn l2_norm(w: &[f64]) -> f64 {
    let top = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if top == 0.0 || !top.is_finite() {
        return top;
    }
    top * w.iter().map(|v| (v / top) * (v / top)).sum::<f64>().sqrt()
}

/// Scales `w` onto the sphere of radius `radius` (a zero vector stays zero).
pub fn scale_to_sphere(w: &mut [f64], radius: f64) {
    let norm = l2_norm(w);
    if norm > 0.0 {
        let s = radius / norm;
        w.iter_mut().for_each(|v| *v *= s);
    }
}

/// The split rule of RGB's candidates: for `Argmin`, the family's best
/// member under the step rule (see the module doc): no L2 term, score and
/// leaves by the gradient sums (Lipschitz) or per-row means (Exact);
/// for `Projected`, the fit's own rule.
pub fn candidate_rule(params: &BoosterParams, rule: SplitRule) -> SplitRule {
    match params.rgb_candidate() {
        RgbCandidate::Projected => rule,
        RgbCandidate::Argmin => {
            let c = match params.rgb_step() {
                RgbStep::Lipschitz => Curvature::Unit,
                RgbStep::Exact => Curvature::Weight,
            };
            SplitRule {
                gain: c,
                leaf: c,
                lambda: 0.0,
                ..rule
            }
        }
    }
}

/// Scales `w` onto the L2 ball of radius `radius` if it lies outside.
pub fn project_l2(w: &mut [f64], radius: f64) {
    let norm = l2_norm(w);
    if norm > radius {
        let s = radius / norm;
        w.iter_mut().for_each(|v| *v *= s);
    }
}

/// The coordinate step α along h from per-row (weighted) gradients `gh`
/// and weights `w`: α = −∇_k L / C_k with ∇_k L = Σ g_i h_i / Σ w_i and
/// C_k = λσ (`Lipschitz`, the paper's bound) or σ·Σ w_i h_i² / Σ w_i
/// (`Exact`, the curvature bound of the candidate itself).
pub fn coordinate_step(
    rule: RgbStep,
    gh: &[[f64; 2]],
    h: &[f64],
    w: Option<&[f64]>,
    lambda: f64,
    sigma: f64,
) -> Result<f64> {
    const CHUNK: usize = 16 * 1024;
    let parts: Vec<[f64; 3]> = h
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, hc)| {
            let mut sums = [0.0; 3];
            for (k, &hi) in hc.iter().enumerate() {
                let i = c * CHUNK + k;
                let wi = w.map_or(1.0, |w| w[i]);
                sums[0] += gh[i][0] * hi;
                sums[1] += wi * hi * hi;
                sums[2] += wi;
            }
            sums
        })
        .collect();
    let [num, h2, wsum] = parts
        .iter()
        .fold([0.0; 3], |a, p| [a[0] + p[0], a[1] + p[1], a[2] + p[2]]);
    if !(sigma > 0.0) {
        return Err(RgbmError::param(
            "loss",
            "RGB needs a smoothness constant sigma > 0",
        ));
    }
    // (The exact step's 1/Σw factors cancel; dividing once keeps its rounding.)
    let (gradient, curvature) = match rule {
        RgbStep::Lipschitz => (num / wsum, lambda * sigma),
        RgbStep::Exact => (num, sigma * h2),
    };
    Ok(if curvature > 0.0 && wsum > 0.0 {
        -gradient / curvature
    } else {
        0.0
    })
}

/// RGB's per-fit state: the family grid and the grower of the candidates.
pub(crate) struct RgbState<'a> {
    families: Families,
    /// One grower serves every candidate: a round grows one tree, to the
    /// largest drawn size, and reads the smaller candidates off its prefixes.
    grower: Mutex<TreeGrower<'a>>,
    rule: SplitRule,
    candidate: RgbCandidate,
    candidates: usize,
    n_features: usize,
    /// Monotone constraints: a negative coordinate step would reverse the
    /// trees' order, so the step is taken on α ≥ 0 only.
    monotone: bool,
}

/// The candidate RGB keeps for one output in a round.
pub(crate) struct RgbChoice {
    family: usize,
    /// The candidate tree (leaves on or in the λ ball), already multiplied by α.
    pub tree: Tree,
    pub alpha: f64,
    /// The candidate's output on every training row (before α).
    h: Vec<f64>,
    /// The candidate's diagnostics (`theory`).
    pub theory: TreeTheory,
}

impl RgbChoice {
    /// The coordinate step F ← F + α·h on the output's block of scores.
    pub fn add_to(&self, scores: &mut [f64]) {
        scores
            .par_iter_mut()
            .zip(&self.h)
            .for_each(|(s, h)| *s += self.alpha * h);
    }
}

impl<'a> RgbState<'a> {
    pub fn new(
        params: &BoosterParams,
        data: &'a BinnedDataset,
        cfg: GrowerConfig,
        constraints: &'a TreeConstraints,
        cancel: Cancel,
    ) -> Result<RgbState<'a>> {
        let families = Families::new(params, data.n_features(), data.n_rows);
        let cfg = GrowerConfig {
            rule: candidate_rule(params, cfg.rule),
            ..cfg
        };
        let mut grower = TreeGrower::constrained(data, cfg, constraints)?;
        grower.set_cancel(cancel);
        Ok(RgbState {
            families,
            grower: Mutex::new(grower),
            rule: cfg.rule,
            candidate: params.rgb_candidate(),
            candidates: params.rgb_candidates,
            n_features: data.n_features(),
            monotone: constraints.has_monotone(),
        })
    }

    /// The chosen family (internal nodes n_k, leaf radius λ_k).
    pub fn family(&self, choice: &RgbChoice) -> (usize, f64) {
        (
            self.families.nodes[choice.family],
            self.families.lambdas[choice.family],
        )
    }

    /// Ω_k (normalised) of the chosen family.
    pub fn omega(&self, choice: &RgbChoice) -> f64 {
        self.families.omega[choice.family]
    }

    /// Theorem 1's Rademacher bound R̂(H_k) of the chosen family.
    pub fn rademacher(&self, choice: &RgbChoice) -> f64 {
        self.families.rademacher[choice.family]
    }

    /// One coordinate step on output `class`: draws S families, builds their
    /// candidates in parallel, keeps the best (lowest loss + β·Ω; ties go to
    /// the earlier draw).
    #[allow(clippy::too_many_arguments)]
    pub fn choose<T: Element>(
        &self,
        params: &BoosterParams,
        objective: &Objective,
        y: &[f64],
        w: Option<&[f64]>,
        scores: &[f64],
        class: usize,
        grads: &Gradients,
        rows: &[u32],
        all_rows: bool,
        x: &Features<T>,
        stream_id: u64,
    ) -> Result<RgbChoice> {
        let sigma = objective
            .smoothness()
            .ok_or_else(|| RgbmError::param("loss", "RGB needs a smooth loss"))?;
        let step_rule = params.rgb_step();
        let penalty_rule = params.rgb_penalty();
        let drawn = self.draw_families(params.random_state, stream_id);
        let all_features = Candidates::all(self.n_features);
        // `scores` holds every output's block; candidates move block `class` only.
        let n = y.len();
        let block = class * n..(class + 1) * n;
        let largest = drawn.iter().map(|&k| self.families.nodes[k]).max();
        let mut grower = self
            .grower
            .lock()
            .map_err(|_| RgbmError::param("booster", "RGB candidate state poisoned"))?;
        grower.set_max_leaves(largest.map(|n| n + 1));
        grower.set_extra_trees(
            params
                .extra_trees
                .then(|| RowDraws::new(params.random_state, Purpose::ExtraTrees, stream_id)),
        );
        let mut grown_rows = with_capacity(rows.len(), "the row buffer")?;
        grown_rows.extend_from_slice(rows);
        let grown = grower.grow(
            grads,
            &mut grown_rows,
            all_rows,
            NodeSelection::Tree(&all_features),
        )?;
        drop(grower);
        // A family drawn twice gives the same candidate, and ties go to the
        // earlier draw: each family is evaluated once, at its first draw.
        let mut unique = drawn.clone();
        let mut seen = vec![false; self.families.len()];
        unique.retain(|&k| !std::mem::replace(&mut seen[k], true));
        // Each candidate holds n outputs: keep only the best of those built
        // so far, not all of them (the grid has 49 families by default).
        let best = unique
            .par_iter()
            .map(|&k| {
                let splits = self.families.nodes[k];
                let prefix;
                let (sub, sub_rows) = if splits >= grown.splits() {
                    (&grown, &grown_rows[..])
                } else {
                    prefix = grown.prefix(splits, &grown_rows, grads, &self.rule)?;
                    (&prefix.0, &prefix.1[..])
                };
                let mut tree = sub.tree.clone();
                // A positive scaling: it keeps a monotone tree's order.
                let radius = self.families.lambdas[k];
                match self.candidate {
                    RgbCandidate::Argmin => scale_to_sphere(&mut tree.leaf_value, radius),
                    RgbCandidate::Projected => project_l2(&mut tree.leaf_value, radius),
                }
                let mut h = filled_vec(n, 0.0, "the candidate's outputs")?;
                if all_rows {
                    add_leaf_values(&mut h, sub_rows, &sub.leaf_ranges, &tree.leaf_value);
                } else {
                    add_tree_to_all(&tree, x, &mut h);
                }
                let theory = tree_theory(grads, sub_rows, &sub.leaf_ranges, &tree.leaf_value);
                let lambda = self.families.lambdas[k];
                let mut alpha = coordinate_step(step_rule, grads.gh, &h, w, lambda, sigma)?;
                if self.monotone {
                    // The bound is a convex quadratic in α: its minimum over
                    // α ≥ 0 is max(α*, 0).
                    alpha = alpha.max(0.0);
                }
                let mut moved = with_capacity(scores.len(), "the candidate's scores")?;
                moved.extend_from_slice(scores);
                moved[block.clone()]
                    .par_iter_mut()
                    .zip(&h)
                    .for_each(|(s, hi)| *s += alpha * hi);
                let penalty = match penalty_rule {
                    RgbPenalty::PerCandidate => self.families.omega[k],
                    RgbPenalty::Weighted => alpha.abs() * self.families.omega[k],
                };
                let score = objective.mean_loss(y, &moved, w) + params.rgb_beta * penalty;
                tree.leaf_value.iter_mut().for_each(|v| *v *= alpha);
                let choice = RgbChoice {
                    family: k,
                    tree,
                    alpha,
                    h,
                    theory,
                };
                Ok(Best::of(score, choice))
            })
            .reduce_with(|a, b| Ok(a?.then(b?)));
        best.transpose()?
            .and_then(Best::into_choice)
            .ok_or_else(|| RgbmError::param("rgb_candidates", "must be >= 1"))
    }

    /// The S families of this step's candidates, drawn with p_k ∝ λ_k.
    fn draw_families(&self, seed: u64, stream_id: u64) -> Vec<usize> {
        let mut rng = stream(seed, Purpose::Rgb, stream_id);
        (0..self.candidates)
            .map(|_| self.families.draw(&mut rng))
            .collect()
    }
}

/// The best of a run of candidates in draw order, as a scan that keeps the
/// first and replaces it by any later one of lower score would find it: the
/// first if its score is NaN (nothing compares lower), else the lowest
/// non-NaN score, ties to the earlier draw. Runs combine in order
/// (`then`), so a parallel reduction finds what the scan finds.
struct Best<C> {
    /// The run's first candidate, kept only if its score is NaN.
    nan_first: Option<C>,
    /// The lowest non-NaN score of the run, earliest on ties.
    lowest: Option<(f64, C)>,
}

impl<C> Best<C> {
    fn of(score: f64, c: C) -> Self {
        if score.is_nan() {
            Best {
                nan_first: Some(c),
                lowest: None,
            }
        } else {
            Best {
                nan_first: None,
                lowest: Some((score, c)),
            }
        }
    }

    /// This run followed by `later`.
    fn then(self, later: Best<C>) -> Self {
        let lowest = match (self.lowest, later.lowest) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        };
        Best {
            nan_first: self.nan_first,
            lowest,
        }
    }

    /// `None` only for an empty run, which `of` never makes.
    fn into_choice(self) -> Option<C> {
        self.nan_first.or(self.lowest.map(|(_, c)| c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any split of the draws into runs combined in order gives the scan's choice.
    #[test]
    fn the_best_of_runs_is_the_best_of_the_scan() {
        let scan = |scores: &[f64]| {
            let mut best: Option<(f64, usize)> = None;
            for (i, &s) in scores.iter().enumerate() {
                if best.is_none_or(|(b, _)| s < b) {
                    best = Some((s, i));
                }
            }
            best.map(|b| b.1)
        };
        let nan = f64::NAN;
        for scores in [
            vec![1.0, nan, 0.0],
            vec![nan, 1.0, 0.0],
            vec![2.0, 1.0, 1.0, nan, 1.0],
            vec![nan, nan],
            vec![3.0, 3.0, 3.0],
            vec![0.5],
        ] {
            let want = scan(&scores);
            // Every split point of a left fold and of a right fold.
            let bests: Vec<Best<usize>> = scores
                .iter()
                .enumerate()
                .map(|(i, &s)| Best::of(s, i))
                .collect();
            let left = bests
                .into_iter()
                .reduce(Best::then)
                .and_then(Best::into_choice);
            assert_eq!(left, want, "{scores:?}");
            let right = scores
                .iter()
                .enumerate()
                .rev()
                .map(|(i, &s)| Best::of(s, i))
                .reduce(|later, earlier| earlier.then(later))
                .and_then(Best::into_choice);
            assert_eq!(right, want, "{scores:?}");
        }
    }

    #[test]
    fn projection_never_exceeds_the_radius_and_keeps_inner_points() {
        let mut w = vec![3.0, -4.0];
        project_l2(&mut w, 1.0);
        assert!((w[0] - 0.6).abs() < 1e-15 && (w[1] + 0.8).abs() < 1e-15);
        let mut inside = vec![0.1, 0.2];
        project_l2(&mut inside, 1.0);
        assert_eq!(inside, vec![0.1, 0.2]);
        let mut s = 1u64;
        for _ in 0..1000 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
            let mut v: Vec<f64> = (0..5)
                .map(|k| ((s >> (k * 8)) & 0xff) as f64 - 128.0)
                .collect();
            project_l2(&mut v, 2.5);
            assert!(v.iter().map(|x| x * x).sum::<f64>().sqrt() <= 2.5 * (1.0 + 1e-12));
        }
    }

    /// Huge leaf sums (a diverging fit) still land on the sphere instead of
    /// reading as an infinite norm and collapsing to zero.
    #[test]
    fn the_sphere_survives_huge_and_zero_vectors() {
        let mut w = vec![3e200, -4e200];
        scale_to_sphere(&mut w, 2.0);
        assert!(
            (w[0] - 1.2).abs() < 1e-12 && (w[1] + 1.6).abs() < 1e-12,
            "{w:?}"
        );
        let mut tiny = vec![3e-200, 4e-200];
        scale_to_sphere(&mut tiny, 1.0);
        assert!((tiny[0] - 0.6).abs() < 1e-12 && (tiny[1] - 0.8).abs() < 1e-12);
        let mut zero = vec![0.0, 0.0];
        scale_to_sphere(&mut zero, 1.0);
        assert_eq!(zero, vec![0.0, 0.0]);
    }

    /// Chi-square: family draws follow λ_k / Σλ.
    #[test]
    fn families_are_drawn_in_proportion_to_lambda() {
        let params = BoosterParams {
            rgb_nodes: Some(vec![2, 8]),
            rgb_lambdas: Some(vec![0.5, 1.0, 2.5]),
            ..Default::default()
        };
        let fam = Families::new(&params, 10, 1000);
        assert_eq!(fam.len(), 6);
        let mut rng = stream(3, Purpose::Rgb, 0);
        let draws = 30_000;
        let mut counts = vec![0usize; fam.len()];
        for _ in 0..draws {
            counts[fam.draw(&mut rng)] += 1;
        }
        let total: f64 = fam.lambdas.iter().sum();
        let chi2: f64 = counts
            .iter()
            .zip(&fam.lambdas)
            .map(|(&c, &l)| {
                let e = draws as f64 * l / total;
                (c as f64 - e).powi(2) / e
            })
            .sum();
        // 5 degrees of freedom: P(chi2 > 20.5) = 0.001.
        assert!(chi2 < 20.5, "chi2 {chi2}, counts {counts:?}");
        assert!((fam.omega.iter().cloned().fold(0.0, f64::max) - 1.0).abs() < 1e-15);
        // Ω grows with n and λ.
        assert!(fam.omega[0] < fam.omega[3] && fam.omega[0] < fam.omega[1]);
    }
}
