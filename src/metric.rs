//! Evaluation metrics recorded on evaluation sets after every round.
//!
//! Scores come in the training loop's layout: `n_outputs` class-major blocks
//! of raw scores. Weighted metrics divide by Σw; sums reduce in fixed chunks,
//! so the values do not depend on the thread count.
use rayon::prelude::*;

use crate::objective::{Objective, Queries, ndcg, weighted_sums};
use crate::options::Metric;

fn weighted_mean(n: usize, w: Option<&[f64]>, f: impl Fn(usize) -> f64 + Sync) -> f64 {
    // w·1 is w exactly: the weight sum is the plain Σ w.
    let (s, ws) = weighted_sums(n, w, |i| (f(i), 1.0));
    s / ws
}

/// Weighted AUC: P(score of a positive > score of a negative) + ½ P(tie).
fn auc(y: &[f64], f: &[f64], w: Option<&[f64]>) -> f64 {
    let mut order: Vec<usize> = (0..y.len()).collect();
    order.par_sort_unstable_by(|&a, &b| f[a].total_cmp(&f[b]).then(a.cmp(&b)));
    let (mut neg_below, mut pos_total, mut neg_total, mut pairs) = (0.0, 0.0, 0.0, 0.0);
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        let (mut pos, mut neg) = (0.0, 0.0);
        while end < order.len() && f[order[end]] == f[order[start]] {
            let i = order[end];
            let wi = w.map_or(1.0, |w| w[i]);
            if y[i] > 0.5 {
                pos += wi
            } else {
                neg += wi
            }
            end += 1;
        }
        pairs += pos * (neg_below + 0.5 * neg);
        neg_below += neg;
        pos_total += pos;
        neg_total += neg;
        start = end;
    }
    pairs / (pos_total * neg_total)
}

impl Metric {
    /// The metric of raw scores `f` (class-major, `objective.n_outputs()` blocks) against labels `y`.
    /// `queries` and `at` are the ranking metric's (NaN without queries).
    pub fn evaluate(
        self,
        objective: &Objective,
        y: &[f64],
        f: &[f64],
        w: Option<&[f64]>,
        queries: Option<&Queries>,
        at: Option<usize>,
    ) -> f64 {
        if let Objective::Targets(t) = objective {
            // Each target's metric of its own loss, averaged over targets.
            let n = objective.label_rows(y);
            return objective.mean_over_targets(|k| {
                self.evaluate(
                    &t.each[k],
                    t.block(y, k),
                    &f[k * n..(k + 1) * n],
                    w,
                    queries,
                    at,
                )
            });
        }
        let n = y.len();
        match self {
            Metric::L2 => weighted_mean(n, w, |i| (y[i] - objective.mean_of(f[i])).powi(2)),
            Metric::Rmse => {
                weighted_mean(n, w, |i| (y[i] - objective.mean_of(f[i])).powi(2)).sqrt()
            }
            Metric::Mae => weighted_mean(n, w, |i| (y[i] - objective.mean_of(f[i])).abs()),
            Metric::Huber
            | Metric::Exponential
            | Metric::Sla01
            | Metric::MultiLogloss
            | Metric::GaussianNll
            | Metric::AbsoluteError
            | Metric::Quantile
            | Metric::Poisson
            | Metric::Gamma
            | Metric::Tweedie => objective.mean_loss(y, f, w),
            Metric::Logloss => weighted_mean(n, w, |i| {
                let p = objective
                    .probability(f[i])
                    .unwrap_or(f64::NAN)
                    .clamp(1e-15, 1.0 - 1e-15);
                if y[i] > 0.5 { -p.ln() } else { -(1.0 - p).ln() }
            }),
            Metric::Error => weighted_mean(n, w, |i| {
                if (f[i] > 0.0) != (y[i] > 0.5) {
                    1.0
                } else {
                    0.0
                }
            }),
            Metric::Auc => auc(y, f, w),
            Metric::Ndcg => queries.map_or(f64::NAN, |q| ndcg(y, f, q, at)),
            Metric::MultiError => {
                let k_out = objective.n_outputs();
                weighted_mean(n, w, |i| {
                    // First maximum, like numpy's argmax.
                    let best =
                        (1..k_out).fold(0, |b, k| if f[k * n + i] > f[b * n + i] { k } else { b });
                    if best as f64 != y[i] { 1.0 } else { 0.0 }
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objective::{Logistic, Softmax};
    use crate::options::Loss;

    /// AUC equals the brute-force pair count, with ties and weights.
    #[test]
    fn auc_matches_pair_counting() {
        let y = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0];
        let f = [0.3, 0.3, 0.9, -1.0, 0.1, 0.5, 0.1];
        let w = [1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 0.25];
        let (mut num, mut den) = (0.0, 0.0);
        for i in 0..7 {
            for j in 0..7 {
                if y[i] > 0.5 && y[j] < 0.5 {
                    let s = if f[i] > f[j] {
                        1.0
                    } else if f[i] == f[j] {
                        0.5
                    } else {
                        0.0
                    };
                    num += w[i] * w[j] * s;
                    den += w[i] * w[j];
                }
            }
        }
        assert!((auc(&y, &f, Some(&w)) - num / den).abs() < 1e-12);
    }

    #[test]
    fn classification_metrics_match_hand_computation() {
        let lg = Objective::Logistic(Logistic {
            reg: 0.0,
            clamp: None,
        });
        let y = [1.0, 0.0, 1.0];
        let f = [2.0, 0.5, -1.0];
        let sig = |z: f64| 1.0 / (1.0 + (-z).exp());
        let ll = -(sig(2.0).ln() + (1.0 - sig(0.5)).ln() + sig(-1.0).ln()) / 3.0;
        assert!((Metric::Logloss.evaluate(&lg, &y, &f, None, None, None) - ll).abs() < 1e-12);
        assert!((Metric::Error.evaluate(&lg, &y, &f, None, None, None) - 2.0 / 3.0).abs() < 1e-12);
        let sm = Objective::Softmax(Softmax { n_classes: 3 });
        // Two rows, class-major scores: row 0 argmax 2, row 1 argmax 0.
        let f = [0.0, 1.0, 0.5, 0.0, 2.0, 0.5];
        assert_eq!(
            Metric::MultiError.evaluate(&sm, &[2.0, 1.0], &f, None, None, None),
            0.5
        );
        assert!(Metric::L2.check_loss(Loss::Logistic, None).is_err());
        assert!(Metric::Auc.check_loss(Loss::Sla01, None).is_ok());
    }
}
