//! Learning to rank: LambdaRank gradients of NDCG (Burges 2010, "From
//! RankNet to LambdaRank to LambdaMART"), and the NDCG metric, over query
//! groups (consecutive rows sharing a query).
//!
//! Relevance labels are integers 0..=`MAX_LABEL` with gain 2^l − 1; the
//! discount of 0-based position r is 1 / log2(r + 2).
use rayon::prelude::*;

use crate::alloc::with_capacity;
use crate::cancel::Cancel;
use crate::error::{Result, RgbmError};

/// Largest relevance label: its gain 2^31 − 1 stays exact.
pub const MAX_LABEL: f64 = 31.0;

/// The logistic scale σ of the pairwise probability 1 / (1 + e^{−σ(s_i − s_j)}).
const SIGMA: f64 = 1.0;

/// Query groups as boundaries: query q holds rows `bounds[q]..bounds[q + 1]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queries {
    bounds: Vec<usize>,
}

impl Queries {
    /// From the sizes of consecutive queries, which must be ≥ 1 and sum to `n_rows`.
    pub fn from_sizes(sizes: &[u64], n_rows: usize) -> Result<Queries> {
        let mut bounds = Vec::new();
        bounds
            .try_reserve_exact(sizes.len() + 1)
            .map_err(|_| RgbmError::OutOfMemory("the query boundaries".into()))?;
        bounds.push(0usize);
        let mut total = 0usize;
        for (q, &s) in sizes.iter().enumerate() {
            if s == 0 {
                return Err(RgbmError::param(
                    "group",
                    format!("query {q} has no rows: every group size must be at least 1"),
                ));
            }
            total = usize::try_from(s)
                .ok()
                .and_then(|s| total.checked_add(s))
                .filter(|&t| t <= n_rows)
                .ok_or_else(|| {
                    RgbmError::Shape(format!(
                        "the group sizes add up to more than the {n_rows} rows (at query {q})"
                    ))
                })?;
            bounds.push(total);
        }
        if total != n_rows {
            return Err(RgbmError::Shape(format!(
                "the group sizes add up to {total}, but there are {n_rows} rows"
            )));
        }
        Ok(Queries { bounds })
    }

    pub fn n_queries(&self) -> usize {
        self.bounds.len() - 1
    }

    pub fn n_rows(&self) -> usize {
        self.bounds[self.bounds.len() - 1]
    }

    /// The row range of each query.
    pub fn ranges(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.bounds.windows(2).map(|w| w[0]..w[1])
    }
}

/// Relevance labels must be integers in 0..=`MAX_LABEL`.
pub fn check_labels(y: &[f64]) -> Result<()> {
    match y
        .iter()
        .position(|&v| !((0.0..=MAX_LABEL).contains(&v) && v.fract() == 0.0))
    {
        None => Ok(()),
        Some(i) => Err(RgbmError::InvalidLabel(format!(
            "ranking needs integer relevance labels in 0..={MAX_LABEL}, got {} at index {i}",
            y[i]
        ))),
    }
}

fn gain(label: f64) -> f64 {
    (label as i32 as f64).exp2() - 1.0
}

fn discount(position: usize) -> f64 {
    1.0 / ((position + 2) as f64).log2()
}

/// `order` becomes a query's rows by descending score (ties by row order).
fn order_by_score(f: &[f64], order: &mut Vec<usize>) {
    order.clear();
    order.extend(0..f.len());
    order.sort_by(|&a, &b| f[b].total_cmp(&f[a]).then(a.cmp(&b)));
}

/// The ideal DCG of the top `at` positions (all when None); `gains` is a buffer.
fn max_dcg(y: &[f64], at: Option<usize>, gains: &mut Vec<f64>) -> f64 {
    gains.clear();
    gains.extend(y.iter().map(|&l| gain(l)));
    gains.sort_by(|a, b| b.total_cmp(a));
    let k = at.map_or(gains.len(), |k| k.min(gains.len()));
    gains[..k]
        .iter()
        .enumerate()
        .map(|(r, g)| g * discount(r))
        .sum()
}

/// NDCG of one query at `at`; a query with no relevant row scores 1 (any
/// order is ideal), as in LightGBM. Rows of equal score share the mean of
/// their gains (the DCG averaged over the orders of the tie, as
/// scikit-learn's `ndcg_score`), so the value does not depend on row order.
fn query_ndcg(y: &[f64], f: &[f64], at: Option<usize>) -> f64 {
    let ideal = max_dcg(y, at, &mut Vec::new());
    if !(ideal > 0.0) {
        return 1.0;
    }
    let mut order = Vec::new();
    order_by_score(f, &mut order);
    let k = at.map_or(order.len(), |k| k.min(order.len()));
    let mut dcg = 0.0;
    let mut start = 0;
    while start < k {
        let mut end = start + 1;
        while end < order.len() && f[order[end]] == f[order[start]] {
            end += 1;
        }
        let mean_gain =
            order[start..end].iter().map(|&i| gain(y[i])).sum::<f64>() / (end - start) as f64;
        dcg += mean_gain * (start..end.min(k)).map(discount).sum::<f64>();
        start = end;
    }
    dcg / ideal
}

/// Mean NDCG@`at` over the queries (each query weighs the same).
pub fn ndcg(y: &[f64], f: &[f64], queries: &Queries, at: Option<usize>) -> f64 {
    let per_query: Vec<f64> = queries
        .ranges()
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|r| query_ndcg(&y[r.clone()], &f[r], at))
        .collect();
    per_query.iter().sum::<f64>() / per_query.len().max(1) as f64
}

/// LambdaRank with LightGBM's normalisations: |ΔNDCG| of a pair divided by
/// 0.01 + |s_i − s_j|, and each query's lambdas scaled by log2(1 + S) / S,
/// S their absolute sum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LambdaRank {
    pub truncation: usize,
}

impl LambdaRank {
    /// Per-row (g, h) at scores `f`, query by query (in parallel; each
    /// query's sums run in a fixed order).
    pub fn gradients(&self, y: &[f64], f: &[f64], queries: &Queries, out: &mut [[f64; 2]]) {
        // Never cancelled, so never an error.
        let _ = self.gradients_cancellable(y, f, queries, out, &Cancel::never());
    }

    /// `gradients` that stops with `Interrupted` once `cancel` is set
    /// (polled per query, and in a query's pair loop per row); `out` is then
    /// partly written.
    pub fn gradients_cancellable(
        &self,
        y: &[f64],
        f: &[f64],
        queries: &Queries,
        out: &mut [[f64; 2]],
        cancel: &Cancel,
    ) -> Result<()> {
        let mut parts = with_capacity(queries.n_queries(), "the query gradients")?;
        let mut rest = out;
        for r in queries.ranges() {
            let (head, tail) = rest.split_at_mut(r.len());
            parts.push((r, head));
            rest = tail;
        }
        parts
            .into_par_iter()
            .try_for_each_init(Scratch::default, |scratch, (r, gh)| {
                cancel.check()?;
                self.query_gradients(&y[r.clone()], &f[r], gh, scratch, cancel)
            })
    }

    fn query_gradients(
        &self,
        y: &[f64],
        f: &[f64],
        gh: &mut [[f64; 2]],
        s: &mut Scratch,
        cancel: &Cancel,
    ) -> Result<()> {
        gh.fill([0.0, 0.0]);
        let n = y.len();
        let ideal = max_dcg(y, Some(self.truncation), &mut s.gain);
        if n < 2 || !(ideal > 0.0) {
            return Ok(());
        }
        order_by_score(f, &mut s.order);
        // Everything by position in the current order, so the pair loop
        // reads contiguous memory: grade, score, gain over the ideal DCG,
        // discount, and the lambda and hessian sums.
        let order = &s.order;
        s.label.clear();
        s.label.extend(order.iter().map(|&i| y[i]));
        s.score.clear();
        s.score.extend(order.iter().map(|&i| f[i]));
        s.gain.clear();
        s.gain.extend(s.label.iter().map(|&l| gain(l) / ideal));
        s.discount.clear();
        s.discount.extend((0..n).map(discount));
        s.lambda.clear();
        s.lambda.resize(n, 0.0);
        s.hess.clear();
        s.hess.resize(n, 0.0);
        let (label, score, gains, disc) = (&s.label, &s.score, &s.gain, &s.discount);
        // LightGBM leaves the score gap out while every score is equal.
        let by_gap = score[0] != score[n - 1];
        let mut abs_sum = 0.0;
        for a in 0..(n - 1).min(self.truncation) {
            // A row's pairs are n − a − 1 at most: up to seconds per query
            // between polls without this one.
            if a % POLL_ROWS == 0 {
                cancel.check()?;
            }
            let (la, fa, ga, da) = (label[a], score[a], gains[a], disc[a]);
            for b in a + 1..n {
                if label[b] == la {
                    continue;
                }
                // +1 when the row at a is the more relevant one.
                let sign = if la > label[b] { 1.0 } else { -1.0 };
                let delta_score = sign * (fa - score[b]);
                let delta_ndcg = sign * (ga - gains[b]) * (da - disc[b]);
                let gap = if by_gap {
                    0.01 + delta_score.abs()
                } else {
                    1.0
                };
                // One division: inv = p / gap with p = 1 / (1 + e^{σ·Δs}).
                let inv = 1.0 / (gap * (1.0 + (SIGMA * delta_score).exp()));
                let p = gap * inv;
                let lambda = -SIGMA * delta_ndcg * inv;
                let hess = SIGMA * SIGMA * delta_ndcg * inv * (1.0 - p);
                s.lambda[a] += sign * lambda;
                s.lambda[b] -= sign * lambda;
                s.hess[a] += hess;
                s.hess[b] += hess;
                abs_sum -= 2.0 * lambda;
            }
        }
        let scale = if abs_sum > 0.0 {
            (1.0 + abs_sum).log2() / abs_sum
        } else {
            1.0
        };
        for (pos, &row) in order.iter().enumerate() {
            gh[row] = [s.lambda[pos] * scale, s.hess[pos] * scale];
        }
        Ok(())
    }
}

/// Better-ranked rows between two cancellation polls in a query's pair loop
/// (each has up to the query's size in pairs).
const POLL_ROWS: usize = 16;

/// Per-thread buffers of the gradient pass.
#[derive(Default)]
struct Scratch {
    order: Vec<usize>,
    label: Vec<f64>,
    score: Vec<f64>,
    gain: Vec<f64>,
    discount: Vec<f64>,
    lambda: Vec<f64>,
    hess: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_cancel_flag_stops_the_gradients() {
        let n = 3000;
        let y: Vec<f64> = (0..n).map(|i| (i % 5) as f64).collect();
        let f: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f64 / 1000.0)
            .collect();
        let one_query = Queries::from_sizes(&[n as u64], n).unwrap();
        let rank = LambdaRank { truncation: n };
        let mut gh = vec![[0.0; 2]; n];
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let stopped = rank.gradients_cancellable(&y, &f, &one_query, &mut gh, &Cancel::on(flag));
        assert_eq!(stopped, Err(RgbmError::Interrupted));
        let mut want = vec![[0.0; 2]; n];
        rank.gradients(&y, &f, &one_query, &mut want);
        rank.gradients_cancellable(&y, &f, &one_query, &mut gh, &Cancel::never())
            .unwrap();
        assert_eq!(gh, want);
        assert!(want.iter().any(|g| g[0] != 0.0));
    }

    /// NDCG by its definition: the DCG of each order of the tied scores,
    /// averaged (every order of a tie equally likely).
    fn ndcg_by_definition(y: &[f64], f: &[f64], at: usize) -> f64 {
        let n = y.len();
        let dcg_of = |idx: &[usize]| -> f64 {
            (0..at.min(n))
                .map(|r| (2f64.powf(y[idx[r]]) - 1.0) / (r as f64 + 2.0).log2())
                .sum()
        };
        // Every permutation whose scores descend: brute force on tiny queries.
        let mut perms: Vec<Vec<usize>> = vec![vec![]];
        for _ in 0..n {
            let mut longer = Vec::new();
            for p in &perms {
                for i in (0..n).filter(|i| !p.contains(i)) {
                    longer.push([p.clone(), vec![i]].concat());
                }
            }
            perms = longer;
        }
        let sorted: Vec<Vec<usize>> = perms
            .into_iter()
            .filter(|p| p.windows(2).all(|w| f[w[0]] >= f[w[1]]))
            .collect();
        let dcg = sorted.iter().map(|p| dcg_of(p)).sum::<f64>() / sorted.len() as f64;
        let mut ys = y.to_vec();
        ys.sort_by(|a, b| b.partial_cmp(a).unwrap());
        let ideal: f64 = (0..at.min(n))
            .map(|r| (2f64.powf(ys[r]) - 1.0) / (r as f64 + 2.0).log2())
            .sum();
        if ideal == 0.0 { 1.0 } else { dcg / ideal }
    }

    #[test]
    fn ndcg_matches_its_definition() {
        let y = [3.0, 0.0, 1.0, 2.0, 0.0, 1.0, 0.0, 0.0, 4.0];
        let f = [0.5, 0.5, -0.2, 0.5, 0.0, 0.3, 1.0, 0.2, 0.2];
        let q = Queries::from_sizes(&[4, 2, 3], 9).unwrap();
        for at in [1, 2, 3, 10] {
            let want = [(0, 4), (4, 6), (6, 9)]
                .iter()
                .map(|&(s, e)| ndcg_by_definition(&y[s..e], &f[s..e], at))
                .sum::<f64>()
                / 3.0;
            let got = ndcg(&y, &f, &q, Some(at));
            assert!((got - want).abs() < 1e-12, "at {at}: {got} vs {want}");
        }
        // Query 2 has one relevant row; a query of zeros counts 1.
        let q0 = Queries::from_sizes(&[2], 2).unwrap();
        assert_eq!(ndcg(&[0.0, 0.0], &[1.0, 2.0], &q0, None), 1.0);
    }

    /// The gradients follow the pair formula written out for a 3-row query.
    #[test]
    fn gradients_of_a_small_query_follow_the_pair_formula() {
        let y = [2.0, 0.0, 1.0];
        let f = [0.2, 0.7, -0.4];
        let q = Queries::from_sizes(&[3], 3).unwrap();
        let mut gh = vec![[0.0; 2]; 3];
        LambdaRank { truncation: 30 }.gradients(&y, &f, &q, &mut gh);
        // Order by score: row 1 (pos 0), row 0 (pos 1), row 2 (pos 2).
        let pos = [1usize, 0, 2];
        let d = |p: usize| 1.0 / ((p + 2) as f64).log2();
        let ideal = 3.0 * d(0) + 1.0 * d(1);
        let mut want = [[0.0f64; 2]; 3];
        let mut abs_sum = 0.0;
        for (hi, lo) in [(0usize, 1usize), (0, 2), (2, 1)] {
            let ds = f[hi] - f[lo];
            let gain = |l: f64| 2f64.powf(l) - 1.0;
            let dn = (gain(y[hi]) - gain(y[lo])) * (d(pos[hi]) - d(pos[lo])).abs()
                / ideal
                / (0.01 + ds.abs());
            let p = 1.0 / (1.0 + ds.exp());
            want[hi][0] -= dn * p;
            want[lo][0] += dn * p;
            want[hi][1] += dn * p * (1.0 - p);
            want[lo][1] += dn * p * (1.0 - p);
            abs_sum += 2.0 * dn * p;
        }
        let scale = (1.0 + abs_sum).log2() / abs_sum;
        for i in 0..3 {
            for k in 0..2 {
                let w = want[i][k] * scale;
                assert!(
                    (gh[i][k] - w).abs() < 1e-12,
                    "row {i} {k}: {} vs {w}",
                    gh[i][k]
                );
            }
        }
        // The more relevant rows are pushed up, the irrelevant one down;
        // the gradients of a query sum to zero.
        assert!(gh[0][0] < 0.0 && gh[1][0] > 0.0);
        assert!(gh.iter().map(|v| v[0]).sum::<f64>().abs() < 1e-12);
    }

    #[test]
    fn pairs_below_the_truncation_level_are_skipped() {
        // Scores put the two relevant rows last; with truncation 1 only
        // pairs with the top row count.
        let y = [0.0, 0.0, 1.0, 2.0];
        let f = [3.0, 2.0, 1.0, 0.0];
        let q = Queries::from_sizes(&[4], 4).unwrap();
        let mut gh = vec![[0.0; 2]; 4];
        LambdaRank { truncation: 1 }.gradients(&y, &f, &q, &mut gh);
        assert_eq!(gh[1], [0.0, 0.0]);
        assert!(gh[0][0] > 0.0 && gh[2][0] < 0.0 && gh[3][0] < 0.0);
    }

    #[test]
    fn queries_and_labels_are_checked() {
        assert!(Queries::from_sizes(&[2, 0, 1], 3).is_err());
        assert!(Queries::from_sizes(&[2, 2], 3).is_err());
        assert!(Queries::from_sizes(&[1, 1], 3).is_err());
        assert!(Queries::from_sizes(&[u64::MAX, 1], 3).is_err());
        assert_eq!(Queries::from_sizes(&[1, 2], 3).unwrap().n_queries(), 2);
        check_labels(&[0.0, 31.0, 4.0]).unwrap();
        for bad in [-1.0, 0.5, 32.0, f64::NAN] {
            assert!(check_labels(&[bad]).is_err(), "{bad}");
        }
    }
}
