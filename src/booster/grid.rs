//! Values on a grid where sums are exact (`summation="exact"`).
//!
//! If every value is an integer multiple of a power of two s and the
//! magnitudes of all n of them add up to at most 2^53·s, every partial sum
//! of them (any subset, any order) is an integer multiple of s below 2^53·s,
//! which an `f64` holds exactly: additions make no rounding error. Histogram
//! bins, node sums and leaf sums are then the same however the rows are
//! ordered or split among threads or machines, and a child's sums taken
//! from its parent's minus its sibling's are exact too. The grid is chosen
//! from n and the largest magnitude (an order-free maximum), so
//! s = 2^⌈log2(n·max)⌉ / 2^52 — about 2^-52 of the largest possible sum.
use rayon::prelude::*;

use crate::alloc::filled_vec;
use crate::error::Result;
use crate::objective::{CHUNK, Objective};
use crate::reduce::{self, Reduce};

use super::shard::ShardRows;

/// The grid step for `n` values of magnitude at most `largest`: a power of
/// two s with n·largest ≤ 2^52·s (1 when `largest` is 0 or not finite).
pub fn grid_step(largest: f64, n: usize) -> f64 {
    let bound = largest * n.max(1) as f64;
    if !(bound > 0.0 && bound.is_finite()) {
        return 1.0;
    }
    // 2^e ≥ bound, then s = 2^(e − 52), kept inside the normal range.
    let e = bound.log2().ceil() as i32;
    let e = if 2f64.powi(e) < bound { e + 1 } else { e };
    2f64.powi((e - 52).clamp(-1022, 1023))
}

/// `x` rounded to the nearest multiple of `step` (a power of two: its
/// reciprocal is one too, so `x · (1/step)` is `x / step` to the bit, and
/// the multiplication back is exact). A loop computes the reciprocal once
/// and multiplies, which is cheaper than dividing every value.
#[inline(always)]
pub fn to_grid(x: f64, step: f64) -> f64 {
    round_ties_even(x * (1.0 / step)) * step
}

/// 2^52: every `f64` of at least this magnitude is an integer.
const INTEGRAL: f64 = 4_503_599_627_370_496.0;

/// `q.round_ties_even()`, to the bit, without a libm call per value
/// (baseline x86-64 has no rounding instruction), so loops vectorize.
/// Below 2^52, adding 2^52 leaves no fraction bits, so the addition itself
/// rounds to the nearest integer, ties to even (2^52 is even), and
/// subtracting 2^52 is exact; the sign goes back on so that −0.3 gives −0.
/// Larger magnitudes, infinities and NaN are returned as they are, as
/// `round_ties_even` does.
#[inline(always)]
fn round_ties_even(q: f64) -> f64 {
    let a = q.abs();
    if a < INTEGRAL {
        ((a + INTEGRAL) - INTEGRAL).copysign(q)
    } else {
        q
    }
}

/// Rounds the gradients and the hessians of `gh` (each its own grid) so
/// that sums of up to `n` of them are exact. `n` is the number of rows a
/// sum can cover, which may exceed `gh.len()` when `gh` is a part of them
/// (a shard's: the grid then comes from every shard's largest values).
pub fn round_gradients(gh: &mut [[f64; 2]], n: usize, reduce: &dyn Reduce) -> Result<()> {
    let mut largest = gh
        .par_chunks_mut(CHUNK)
        .map(|c| largest_then_round(c, None))
        .reduce(Default::default, larger);
    reduce::max(reduce, &mut largest)?;
    let steps = steps_for(largest, n);
    gh.par_chunks_mut(CHUNK).for_each(|c| {
        largest_then_round(c, Some(steps));
    });
    Ok(())
}

/// A fit's gradient grid, round after round. The steps follow the largest
/// |g| and |h|, known only once every gradient is, so rounding after the
/// gradient pass would take two more passes over the rows (a maximum, then
/// the rounding). Instead the gradient pass takes the maxima and rounds on
/// the previous round's steps, chunk by chunk while the chunk is in cache;
/// the steps change only when a maximum crosses a power of two, and then
/// the pass is run again on the new steps. Either way every value is
/// rounded once, on the steps of its own round's maxima: the bits
/// `round_gradients` gives.
#[derive(Debug, Default)]
pub struct GradientGrid {
    steps: Option<[f64; 2]>,
}

impl GradientGrid {
    /// The weighted gradients of a point loss at scores `f`, on the grid
    /// for `rows.n_total` rows: `Objective::gradients` then
    /// `round_gradients`, to the bit. `Ok(false)`, with nothing written,
    /// for a loss that is not a point loss.
    pub fn point_gradients(
        &mut self,
        objective: &Objective,
        y: &[f64],
        f: &[f64],
        w: Option<&[f64]>,
        gh: &mut [[f64; 2]],
        rows: &ShardRows,
    ) -> Result<bool> {
        let guess = self.steps;
        let then = |c: &mut [[f64; 2]]| largest_then_round(c, guess);
        let Some(mut largest) = objective.chunk_gradients(y, f, w, gh, then, larger) else {
            return Ok(false);
        };
        reduce::max(rows.reduce, &mut largest)?;
        let steps = steps_for(largest, rows.n_total);
        match guess {
            Some(guess) if guess == steps => {}
            // Not rounded yet.
            None => gh.par_chunks_mut(CHUNK).for_each(|c| {
                largest_then_round(c, Some(steps));
            }),
            // Rounded on other steps: rounding again would round twice.
            Some(_) => {
                let then = |c: &mut [[f64; 2]]| largest_then_round(c, Some(steps));
                objective.chunk_gradients(y, f, w, gh, then, larger);
            }
        }
        self.steps = Some(steps);
        Ok(true)
    }
}

/// The grid steps of gradients and hessians from their largest magnitudes.
fn steps_for(largest: [f64; 2], n: usize) -> [f64; 2] {
    largest.map(|m| grid_step(m, n))
}

/// The larger of two pairs of maxima, channel by channel (order-free).
fn larger(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [a[0].max(b[0]), a[1].max(b[1])]
}

/// The largest |g| and |h| of `gh` as they come, and, given `steps`, each
/// value rounded onto them (in the same pass).
#[inline]
fn largest_then_round(gh: &mut [[f64; 2]], steps: Option<[f64; 2]>) -> [f64; 2] {
    let (mut g_max, mut h_max) = (0.0f64, 0.0f64);
    match steps {
        Some([sg, sh]) => gh.iter_mut().for_each(|v| {
            g_max = g_max.max(v[0].abs());
            h_max = h_max.max(v[1].abs());
            *v = [to_grid(v[0], sg), to_grid(v[1], sh)];
        }),
        None => gh.iter().for_each(|v| {
            g_max = g_max.max(v[0].abs());
            h_max = h_max.max(v[1].abs());
        }),
    }
    [g_max, h_max]
}

/// Rounds non-negative weights so that sums of any `n` of them are exact
/// (`w` may be a shard's part of them).
pub fn round_weights(w: &mut [f64], n: usize, reduce: &dyn Reduce) -> Result<()> {
    let mut largest = [w
        .par_chunks(CHUNK)
        .map(|c| c.iter().fold(0.0f64, |a, &v| a.max(v)))
        .reduce(|| 0.0, f64::max)];
    reduce::max(reduce, &mut largest)?;
    let step = grid_step(largest[0], n);
    w.par_chunks_mut(CHUNK)
        .for_each(|c| c.iter_mut().for_each(|v| *v = to_grid(*v, step)));
    Ok(())
}

/// The starting score of a single-output loss under `summation="exact"`:
/// Newton's method from 0 on the loss's gradients rounded to the grid, so
/// that every sum, and so the result, is independent of the row order. A
/// step is halved until it shrinks the gradient sum (the loss is convex in
/// the constant).
pub fn exact_constant(
    objective: &Objective,
    y: &[f64],
    w: Option<&[f64]>,
    rows: &ShardRows,
) -> Result<f64> {
    let n = y.len();
    let mut scores = filled_vec(n, 0.0, "the starting scores")?;
    let mut gh = filled_vec(n, [0.0f64; 2], "the starting gradients")?;
    let mut sums_at = |c: f64| -> Result<(f64, f64)> {
        scores.fill(c);
        objective.gradients(y, &scores, w, &mut gh);
        round_gradients(&mut gh, rows.n_total, rows.reduce)?;
        // Exact sums: the order does not matter.
        let (g, h) = gh.iter().fold((0.0, 0.0), |(g, h), v| (g + v[0], h + v[1]));
        let mut sums = [g, h];
        rows.sum(&mut sums)?;
        Ok((sums[0], sums[1]))
    };
    let mut c = 0.0;
    let (mut g, mut h) = sums_at(c)?;
    for _ in 0..100 {
        if !(h > 0.0) || g == 0.0 || !g.is_finite() {
            break;
        }
        let mut step = -g / h;
        let mut accepted = false;
        for _ in 0..60 {
            let (g_new, h_new) = sums_at(c + step)?;
            if g_new.abs() < g.abs() {
                (c, g, h, accepted) = (c + step, g_new, h_new, true);
                break;
            }
            step *= 0.5;
        }
        if !accepted || step.abs() <= 1e-12 * (1.0 + c.abs()) {
            break;
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact_sum::ExactSum;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn steps_are_powers_of_two_with_room_for_the_sum() {
        for (largest, n) in [
            (1.0, 1),
            (0.25, 1000),
            (3.7, 123_457),
            (1e-300, 10),
            (1e300, 5),
        ] {
            let s = grid_step(largest, n);
            assert_eq!(s.to_bits() & ((1u64 << 52) - 1), 0, "{s} is a power of two");
            let bound = largest * n as f64;
            assert!(bound <= s * 2f64.powi(52) || s == 2f64.powi(-1022));
            // Not needlessly coarse: half the step would not fit.
            assert!(bound > s * 2f64.powi(51) || s == 2f64.powi(-1022));
        }
        assert_eq!(grid_step(0.0, 10), 1.0);
        assert_eq!(grid_step(f64::NAN, 10), 1.0);
    }

    /// The libm-free rounding gives `round_ties_even`'s bits: ties,
    /// values next to them, signed zeros, the ends of the range, specials.
    #[test]
    fn rounding_matches_round_ties_even() {
        let mut cases = vec![
            0.0,
            -0.0,
            0.3,
            0.5,
            1.5,
            2.5,
            -2.5,
            -0.5,
            -0.3,
            4503599627370495.5,
            4503599627370496.0,
            4503599627370497.0,
            9007199254740993.0,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for k in 0..60 {
            let t = 2f64.powi(k) + 0.5;
            cases.extend([t, t.next_up(), t.next_down()]);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        cases.extend((0..200_000).map(|_| {
            let e = rng.random_range(-20..60);
            (rng.random::<f64>() - 0.5) * 2f64.powi(e)
        }));
        for q in cases.iter().flat_map(|&q| [q, -q]) {
            assert_eq!(
                round_ties_even(q).to_bits(),
                q.round_ties_even().to_bits(),
                "{q:e}"
            );
        }
        for (x, step) in [
            (0.7, 0.5),
            (-3e-300, 2f64.powi(-1022)),
            (1e300, 2f64.powi(1023)),
        ] {
            assert_eq!(to_grid(x, step), (x / step).round_ties_even() * step);
        }
    }

    /// Rounded gradients sum to the exact sum (ExactSum) in any order and
    /// any grouping with plain f64 additions.
    #[test]
    fn sums_of_rounded_values_are_exact() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 50_000;
        let mut gh: Vec<[f64; 2]> = (0..n)
            .map(|_| {
                let g = (rng.random::<f64>() - 0.5) * 10f64.powi(rng.random_range(-8..3));
                [g, rng.random::<f64>() * 0.25]
            })
            .collect();
        round_gradients(&mut gh, n, &reduce::Local).unwrap();
        for channel in 0..2 {
            let xs: Vec<f64> = gh.iter().map(|v| v[channel]).collect();
            let mut exact = ExactSum::new();
            exact.extend(xs.iter().copied());
            let forward: f64 = xs.iter().sum();
            let backward: f64 = xs.iter().rev().sum();
            let strided: f64 = (0..7)
                .map(|k| xs.iter().skip(k).step_by(7).sum::<f64>())
                .sum();
            assert_eq!(forward, exact.value());
            assert_eq!(backward, exact.value());
            assert_eq!(strided, exact.value());
            // A subset's sum, subtracted from the whole, is exact as well.
            let part: f64 = xs[..n / 3].iter().sum();
            let rest: f64 = xs[n / 3..].iter().sum();
            assert_eq!(forward - part, rest);
        }
        let mut w: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 3.0).collect();
        let len = w.len();
        round_weights(&mut w, len, &reduce::Local).unwrap();
        let a: f64 = w.iter().sum();
        let b: f64 = w.iter().rev().sum();
        assert_eq!(a, b);
    }

    /// The fused pass gives `gradients` + `round_gradients` to the bit in
    /// every round: the first (no steps yet), rounds on the previous steps,
    /// and rounds whose maxima crossed a power of two (steps changed both
    /// ways), for a loss with and without weights, across chunks.
    #[test]
    fn fused_rounding_matches_two_passes() {
        use crate::objective::{Logistic, Squared};
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let n = 3 * CHUNK + 123;
        let y: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 10.0 - 5.0).collect();
        let y01: Vec<f64> = y.iter().map(|&v| (v > 0.0) as u8 as f64).collect();
        let w: Vec<f64> = (0..n).map(|_| rng.random::<f64>() + 0.25).collect();
        let base: Vec<f64> = (0..n).map(|_| rng.random::<f64>() - 0.5).collect();
        let logistic = Objective::Logistic(Logistic {
            reg: 0.0,
            clamp: None,
        });
        for (objective, y) in [(Objective::Squared(Squared), &y), (logistic, &y01)] {
            for w in [None, Some(&w[..])] {
                let mut grid = GradientGrid::default();
                let mut hits = 0;
                // Scores that move the largest gradient by a few binades.
                for scale in [1.0, 1.0, 0.9, 3.0, 40.0, 0.01, 0.01, 1.0] {
                    let f: Vec<f64> = base.iter().map(|b| b * scale).collect();
                    let mut want = vec![[0.0; 2]; n];
                    objective.gradients(y, &f, w, &mut want);
                    round_gradients(&mut want, n, &reduce::Local).unwrap();
                    let before = grid.steps;
                    let mut got = vec![[0.0; 2]; n];
                    let rows = ShardRows::local(n);
                    assert!(
                        grid.point_gradients(&objective, y, &f, w, &mut got, &rows)
                            .unwrap()
                    );
                    hits += usize::from(before == grid.steps);
                    let bits = |v: &[[f64; 2]]| -> Vec<[u64; 2]> {
                        v.iter().map(|p| p.map(f64::to_bits)).collect()
                    };
                    assert!(bits(&got) == bits(&want), "scale {scale}");
                }
                assert!((2..7).contains(&hits), "{hits}");
            }
        }
        let mut gh = vec![[0.0; 2]; 4];
        let softmax = Objective::from_params(&crate::params::BoosterParams {
            loss: crate::params::Loss::Softmax,
            n_classes: Some(2),
            ..Default::default()
        });
        let rows = ShardRows::local(2);
        let mut grid = GradientGrid::default();
        let done = grid.point_gradients(&softmax, &[0.0, 1.0], &[0.0; 4], None, &mut gh, &rows);
        assert!(!done.unwrap());
    }

    /// The exact starting score is the loss's optimal constant (up to the
    /// grid) and does not depend on the order of the rows.
    #[test]
    fn exact_constants_match_the_optimum_and_ignore_order() {
        use crate::objective::{Logistic, Squared};
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let n = 3000;
        let y01: Vec<f64> = (0..n)
            .map(|_| (rng.random::<f64>() < 0.8) as u8 as f64)
            .collect();
        let yr: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 100.0 - 20.0).collect();
        let w: Vec<f64> = (0..n).map(|_| rng.random::<f64>() + 0.5).collect();
        let cases = [
            (
                Objective::Logistic(Logistic {
                    reg: 0.0,
                    clamp: None,
                }),
                &y01,
            ),
            (Objective::Squared(Squared), &yr),
        ];
        for (objective, y) in cases {
            let c = exact_constant(&objective, y, Some(&w), &ShardRows::local(n)).unwrap();
            let float = objective.initial_scores(y, Some(&w)).unwrap()[0];
            assert!(
                (c - float).abs() < 1e-9 * (1.0 + float.abs()),
                "{c} vs {float}"
            );
            let mut order: Vec<usize> = (0..n).collect();
            order.reverse();
            order.swap(0, n / 2);
            let y2: Vec<f64> = order.iter().map(|&i| y[i]).collect();
            let w2: Vec<f64> = order.iter().map(|&i| w[i]).collect();
            assert_eq!(
                exact_constant(&objective, &y2, Some(&w2), &ShardRows::local(n)).unwrap(),
                c
            );
        }
    }
}
