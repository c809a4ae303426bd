//! Quantized gradients (LightGBM's `use_quantized_grad`; Shi et al.,
//! "Quantized Training of Gradient Boosting Decision Trees", NeurIPS 2022).
//!
//! Before each tree, every row's gradient becomes an integer level on the
//! scale s_g = max|g| / (B/2) and its hessian one on s_h = max|h| / B, with
//! B = `num_grad_quant_bins`: a level is trunc(x/s ± u) (the sign of x),
//! with u ~ U[0, 1) per row under stochastic rounding (unbiased) and
//! u = 1/2 (round half away from zero) without. Hessians that are the same
//! on every row keep their value (LightGBM's constant-hessian case: one
//! level of size max|h|), and losses whose hessian is the row weight
//! (`Objective::unit_hessian`) keep the weights. The tree is grown on the
//! levels times their scales; its leaves come from those sums or, with
//! `quant_train_renew_leaf`, from the rows' exact gradients.
//!
//! The levels are held as f64 multiples of the scale, so every histogram
//! kernel, split rule and regulariser works unchanged, in the gradients'
//! own units (LightGBM multiplies its integer sums by the scales before any
//! gain; a product rounded before the sum differs from one after it by one
//! rounding of each row's value). The draws are keyed by (random_state,
//! tree, row), so a model does not depend on the thread count or on how
//! rows are split among shards, whose maxima are combined first.
use rand::RngExt;
use rayon::prelude::*;

use crate::alloc::filled_vec;
use crate::error::Result;
use crate::params::BoosterParams;
use crate::rng::{Purpose, RowDraws};

use super::shard::ShardRows;

const CHUNK: usize = 16 * 1024;

/// A fit's quantizer: its settings and the buffer of one tree's levels.
pub(crate) struct Quantizer {
    bins: f64,
    stochastic: bool,
    /// Keep the hessians as they are (they are the row weights).
    keep_hessians: bool,
    exact: bool,
    levels: Vec<[f64; 2]>,
}

/// The signed level of `x` on the scale of inverse `inv`: trunc(x·inv ± u).
#[inline(always)]
fn level(x: f64, inv: f64, u: f64) -> f64 {
    let v = x * inv;
    if v >= 0.0 {
        (v + u).trunc()
    } else {
        (v - u).trunc()
    }
}

impl Quantizer {
    /// The quantizer of a fit of `n` rows, if `use_quantized_grad` is on.
    pub fn new(params: &BoosterParams, n: usize, unit_hessian: bool) -> Result<Option<Quantizer>> {
        if !params.use_quantized_grad {
            return Ok(None);
        }
        Ok(Some(Quantizer {
            bins: params.num_grad_quant_bins as f64,
            stochastic: params.stochastic_rounding,
            keep_hessians: unit_hessian,
            exact: params.summation() == crate::params::Summation::Exact,
            levels: filled_vec(n, [0.0f64; 2], "the quantized gradients")?,
        }))
    }

    /// `gh` quantized for tree `tree` (its random stream).
    pub fn quantize(
        &mut self,
        gh: &[[f64; 2]],
        seed: u64,
        tree: u64,
        rows: &ShardRows,
    ) -> Result<&[[f64; 2]]> {
        // [max |g|, max |h|, −min h] over every shard's rows.
        let mut extremes = gh
            .par_chunks(CHUNK)
            .map(|c| {
                c.iter()
                    .fold([0.0f64, 0.0, f64::NEG_INFINITY], |m, &[g, h]| {
                        [m[0].max(g.abs()), m[1].max(h.abs()), m[2].max(-h)]
                    })
            })
            .reduce(
                || [0.0, 0.0, f64::NEG_INFINITY],
                |a, b| [a[0].max(b[0]), a[1].max(b[1]), a[2].max(b[2])],
            );
        crate::reduce::max(rows.reduce, &mut extremes)?;
        let [max_g, max_h, neg_min_h] = extremes;
        let keep_h = self.keep_hessians || max_h == -neg_min_h;
        let scale_g = max_g / (self.bins / 2.0).floor();
        let scale_h = max_h / self.bins;
        // A zero maximum leaves every value at zero (and no 0/0).
        let inv = |s: f64| if s > 0.0 { 1.0 / s } else { 0.0 };
        let (inv_g, inv_h) = (inv(scale_g), inv(scale_h));
        let draws = RowDraws::new(seed, Purpose::Quantize, tree);
        let stochastic = self.stochastic;
        self.levels
            .par_chunks_mut(CHUNK)
            .zip(gh.par_chunks(CHUNK))
            .enumerate()
            .for_each(|(k, (out, src))| {
                for (i, (o, &[g, h])) in out.iter_mut().zip(src).enumerate() {
                    let (ug, uh) = if stochastic {
                        let mut r = draws.row(rows.id(k * CHUNK + i));
                        (r.random::<f64>(), r.random::<f64>())
                    } else {
                        (0.5, 0.5)
                    };
                    let qh = if keep_h {
                        h
                    } else {
                        level(h, inv_h, uh) * scale_h
                    };
                    *o = [level(g, inv_g, ug) * scale_g, qh];
                }
            });
        if self.exact {
            super::grid::round_gradients(&mut self.levels, rows.n_total, rows.reduce)?;
        }
        Ok(&self.levels[..gh.len()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn quantizer(bins: usize, stochastic: bool, n: usize) -> Quantizer {
        let params = BoosterParams {
            use_quantized_grad: true,
            num_grad_quant_bins: bins,
            stochastic_rounding: stochastic,
            ..Default::default()
        };
        Quantizer::new(&params, n, false).unwrap().unwrap()
    }

    fn random_gh(n: usize, seed: u64) -> Vec<[f64; 2]> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| [rng.random_range(-3.0..2.0), rng.random_range(0.0..0.25)])
            .collect()
    }

    /// Without stochastic rounding a level is x/s rounded half away from
    /// zero, on LightGBM's scales; levels stay within ±B/2 and [0, B].
    #[test]
    fn deterministic_levels_are_rounded_on_the_scales() {
        let gh = random_gh(5000, 1);
        let max_g = gh.iter().map(|v| v[0].abs()).fold(0.0, f64::max);
        let max_h = gh.iter().map(|v| v[1]).fold(0.0, f64::max);
        for bins in [2, 4, 16, 255] {
            let mut q = quantizer(bins, false, gh.len());
            let out = q.quantize(&gh, 7, 0, &ShardRows::local(gh.len())).unwrap();
            let (sg, sh) = (max_g / (bins / 2) as f64, max_h / bins as f64);
            for (&[g, h], &[qg, qh]) in gh.iter().zip(out) {
                let lg = (g / sg).abs().round().copysign(g);
                let lh = (h / sh).round();
                assert!((qg / sg - lg).abs() < 1e-9, "{g} -> {qg}");
                assert!((qh / sh - lh).abs() < 1e-9, "{h} -> {qh}");
                assert!(lg.abs() <= (bins / 2) as f64 && (0.0..=bins as f64).contains(&lh));
            }
        }
    }

    /// Stochastic rounding is unbiased: over many rows with the same value,
    /// the mean level is the value (within 5 standard errors), and each
    /// level is one of the two neighbours.
    #[test]
    fn stochastic_levels_are_unbiased_neighbours() {
        let n = 40_000;
        let mut gh = vec![[0.37, 0.1]; n];
        gh[0] = [-2.0, 0.25];
        let mut q = quantizer(4, true, n);
        let out = q.quantize(&gh, 3, 5, &ShardRows::local(n)).unwrap();
        let (sg, sh) = (1.0, 0.25 / 4.0);
        let (mut sum_g, mut sum_h) = (0.0, 0.0);
        for &[qg, qh] in &out[1..] {
            assert!(qg == 0.0 || qg == sg, "{qg}");
            assert!(
                (qh / sh - 1.0).abs() < 1e-12 || (qh / sh - 2.0).abs() < 1e-12,
                "{qh}"
            );
            sum_g += qg;
            sum_h += qh;
        }
        let m = (n - 1) as f64;
        // Bernoulli(0.37) levels: sd sqrt(0.37·0.63/m); hessian 0.1/sh = 1.6.
        assert!((sum_g / m - 0.37).abs() < 5.0 * (0.37f64 * 0.63 / m).sqrt());
        let mean_h = sum_h / m / sh;
        assert!(
            (mean_h - 1.6).abs() < 5.0 * (0.6f64 * 0.4 / m).sqrt(),
            "{mean_h}"
        );
    }

    /// A row's levels depend on (seed, tree, row) only: a shard holding
    /// the rows with the largest |g| and |h| (so the same scales) draws
    /// what one pass over all rows does; another tree draws otherwise.
    #[test]
    fn draws_are_keyed_by_row() {
        let mut gh = random_gh(3000, 2);
        gh[2500] = [-5.0, 0.3];
        let mut q = quantizer(8, true, gh.len());
        let whole = q
            .quantize(&gh, 11, 4, &ShardRows::local(gh.len()))
            .unwrap()
            .to_vec();
        let ids: Vec<u64> = (1000..3000).collect();
        let part = ShardRows {
            ids: Some(&ids),
            ..ShardRows::local(gh.len())
        };
        let mut q2 = quantizer(8, true, 2000);
        let tail = q2.quantize(&gh[1000..], 11, 4, &part).unwrap();
        assert_eq!(tail, &whole[1000..]);
        let other = q.quantize(&gh, 11, 5, &ShardRows::local(gh.len())).unwrap();
        assert_ne!(other, &whole[..]);
    }

    /// Hessians equal on every row keep their value, and all-zero
    /// gradients stay zero.
    #[test]
    fn constant_hessians_and_zero_gradients_are_kept() {
        let gh = vec![[0.0, 0.3]; 100];
        let mut q = quantizer(4, true, gh.len());
        let out = q.quantize(&gh, 1, 0, &ShardRows::local(gh.len())).unwrap();
        assert!(out.iter().all(|&v| v == [0.0, 0.3]));
    }
}
