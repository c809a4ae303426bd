//! Evaluation sets, per-round metrics, early stopping and the training monitor.
//!
//! Scores of each evaluation set are kept up to date incrementally: every
//! new tree is routed once through the set's rows, so a round costs one tree
//! traversal per row and metric evaluation, never a full re-prediction.
use crate::alloc::reserve_one;
use crate::cancel::Cancel;

use serde::Serialize;

use crate::data::matrix::{Element, Matrix};
use crate::error::{Result, RgbmError};
use crate::objective::{Objective, Queries};
use crate::options::{Loss, Metric};
use crate::params::BoosterParams;
use crate::tree::Tree;
use crate::tree::predict::add_tree_outputs;

use super::trained::{EvalHistory, RoundLog};

/// Data to evaluate after every round (labels coded like the training labels).
pub struct EvalSet<'a, T: Element> {
    pub name: String,
    /// Dense or sparse (CSR reads fastest: rows are written out block by block).
    pub x: Matrix<'a, T>,
    pub y: &'a [f64],
    pub w: Option<&'a [f64]>,
    /// Per-row starting scores added to the base score (n × K,
    /// class-major), like the training `init_score`.
    pub init_score: Option<&'a [f64]>,
    /// The set's query groups (`loss = lambdarank` needs them, others refuse them).
    pub queries: Option<Queries>,
}

/// One metric on one evaluation set, after one round.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvalResult {
    pub set: String,
    pub metric: String,
    pub value: f64,
    pub higher_is_better: bool,
}

/// Observes training: `before_round` may stop it with an error (Ctrl-C),
/// `after_round` sees the round's evaluation results and returns true to stop.
pub trait Monitor: Send {
    fn before_round(&mut self, _round: usize) -> Result<()> {
        Ok(())
    }
    /// A flag set asynchronously when training should stop (Ctrl-C); the
    /// tree growers poll it between nodes so long rounds stop early too.
    fn cancel(&self) -> Cancel {
        Cancel::never()
    }
    fn after_round(&mut self, _round: usize, _results: &[EvalResult]) -> Result<bool> {
        Ok(false)
    }
    /// A new learning rate from round `round` on (a schedule), or None to
    /// keep the current one. Called after `before_round`, for rounds that
    /// are trained (not replayed).
    fn learning_rate(&mut self, _round: usize) -> Result<Option<f64>> {
        Ok(None)
    }
    /// Round `round` was trained (not replayed by a resumed fit): its trees
    /// (one per output, as added to the scores) and log entry, which a
    /// resumed fit takes back (see [`crate::booster::resume`]). Called
    /// before `after_round`.
    fn round_trained(&mut self, _round: usize, _trees: &[Tree], _log: &RoundLog) -> Result<()> {
        Ok(())
    }
    /// `loss = custom`: the unweighted per-row (gradient, hessian) at the
    /// raw `scores` (class-major blocks of the training rows, like `out`);
    /// the core applies the sample weights.
    fn custom_gradients(&mut self, _scores: &[f64], _out: &mut [[f64; 2]]) -> Result<()> {
        Err(RgbmError::param(
            "loss",
            "loss='custom' needs a training monitor that supplies the gradients",
        ))
    }
    /// The monitor's own metrics (name, value, higher is better) of
    /// evaluation set `set` at its raw `scores` (class-major), recorded
    /// after the built-in ones; the same names every round.
    fn custom_metrics(&mut self, _set: usize, _scores: &[f64]) -> Result<Vec<(String, f64, bool)>> {
        Ok(Vec::new())
    }
}

/// A monitor that never stops training.
pub struct Unmonitored;
impl Monitor for Unmonitored {}

/// Adapts a before-round closure (interrupt checks) to a [`Monitor`].
pub struct BeforeRound<'a>(pub &'a mut (dyn FnMut(usize) -> Result<()> + Send));
impl Monitor for BeforeRound<'_> {
    fn before_round(&mut self, round: usize) -> Result<()> {
        (self.0)(round)
    }
}

/// Running scores and metric histories of the evaluation sets.
pub(crate) struct Evaluator<'s, 'a, T: Element> {
    sets: &'s [EvalSet<'a, T>],
    metrics: Vec<Metric>,
    /// Per set: class-major raw scores (n_outputs blocks of the set's rows).
    scores: Vec<Vec<f64>>,
    /// Per set: its weights rescaled by a power of two to mean [1, 2), when
    /// that changed them (weighted metrics are ratios, so only overflow of
    /// Σ w·loss is avoided; the values are otherwise bit-identical).
    weights: Vec<Option<Vec<f64>>>,
    /// Positions of the ranking metric.
    at: Option<usize>,
    pub histories: Vec<EvalHistory>,
}

impl<'s, 'a, T: Element> Evaluator<'s, 'a, T> {
    pub fn new(
        sets: &'s [EvalSet<'a, T>],
        params: &BoosterParams,
        objective: &Objective,
        n_features: usize,
        base: &[f64],
    ) -> Result<Self> {
        let metrics = params
            .eval_metric
            .clone()
            .unwrap_or_else(|| Metric::default_for(params.loss).into_iter().collect());
        for set in sets {
            let what =
                |msg: String| RgbmError::Shape(format!("evaluation set {:?}: {msg}", set.name));
            if set.x.n_cols() != n_features {
                return Err(what(format!(
                    "X has {} features, the training data {n_features}",
                    set.x.n_cols()
                )));
            }
            if set.x.n_rows() == 0 {
                return Err(RgbmError::EmptyInput(format!(
                    "evaluation set {:?} has no rows",
                    set.name
                )));
            }
            if Some(set.y.len()) != set.x.n_rows().checked_mul(objective.n_targets()) {
                return Err(what(format!(
                    "X has {} rows but y has {} values ({} per row)",
                    set.x.n_rows(),
                    set.y.len(),
                    objective.n_targets()
                )));
            }
            if let Some(w) = set.w {
                if w.len() != set.x.n_rows() {
                    return Err(what(format!(
                        "X has {} rows but sample_weight has {}",
                        set.x.n_rows(),
                        w.len()
                    )));
                }
                if w.iter().any(|v| !v.is_finite() || *v < 0.0) || !(w.iter().sum::<f64>() > 0.0) {
                    return Err(RgbmError::param(
                        "sample_weight",
                        format!(
                            "evaluation set {:?}: weights must be finite, >= 0 and not all 0",
                            set.name
                        ),
                    ));
                }
            }
            set.x.check_no_infinity().map_err(|e| match e {
                RgbmError::NonFinite(msg) => {
                    RgbmError::NonFinite(format!("evaluation set {:?}: {msg}", set.name))
                }
                other => other,
            })?;
            if let Some(init) = set.init_score {
                let what = format!("evaluation set {:?}: init_score", set.name);
                super::training_data::check_init_score(
                    init,
                    set.x.n_rows(),
                    objective.n_outputs(),
                    &what,
                )?;
            }
            match (&set.queries, params.loss == Loss::LambdaRank) {
                (Some(q), true) if q.n_rows() != set.y.len() => {
                    return Err(what(format!(
                        "the group sizes add up to {} rows, but the set has {}",
                        q.n_rows(),
                        set.y.len()
                    )));
                }
                (None, true) => {
                    return Err(RgbmError::param(
                        "eval_group",
                        format!(
                            "evaluation set {:?} needs query groups for ranking",
                            set.name
                        ),
                    ));
                }
                (Some(_), false) => {
                    return Err(RgbmError::param(
                        "eval_group",
                        format!(
                            "evaluation set {:?} has query groups, which only loss='lambdarank' uses",
                            set.name
                        ),
                    ));
                }
                _ => {}
            }
            objective.check_labels(set.y).map_err(|e| {
                RgbmError::InvalidLabel(format!("evaluation set {:?}: {e}", set.name))
            })?;
            if metrics.contains(&Metric::Auc) {
                check_both_classes(set)?;
            }
        }
        let weights = sets
            .iter()
            .map(|s| {
                Ok(
                    match super::weights::normalise(
                        s.w,
                        false,
                        &super::shard::ShardRows::local(s.y.len()),
                    )?
                    .weights
                    {
                        Some(std::borrow::Cow::Owned(v)) => Some(v),
                        _ => None,
                    },
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let scores = sets
            .iter()
            .map(|s| {
                let mut v: Vec<f64> = base
                    .iter()
                    .flat_map(|&b| std::iter::repeat_n(b, s.x.n_rows()))
                    .collect();
                if let Some(init) = s.init_score {
                    v.iter_mut().zip(init).for_each(|(f, i)| *f += i);
                }
                v
            })
            .collect();
        Ok(Evaluator {
            sets,
            metrics,
            scores,
            weights,
            at: params.eval_at,
            histories: Vec::new(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// Model shrinkage at the start of a round: F ← b + q·(F − b).
    pub fn shrink(&mut self, q: f64, base: &[f64]) {
        for (set, scores) in self.sets.iter().zip(&mut self.scores) {
            crate::booster::sglb::shrink_scores(scores, base, q, set.x.n_rows());
        }
    }

    /// Adds a finished tree of output `class` to every set's scores.
    pub fn add_tree(&mut self, tree: &Tree, class: usize) {
        for (set, scores) in self.sets.iter().zip(&mut self.scores) {
            let n = set.x.n_rows();
            add_tree_outputs(
                std::slice::from_ref(tree),
                &set.x,
                &mut scores[class * n..(class + 1) * n],
            );
        }
    }

    /// Evaluates every metric on every set, appends them to the histories
    /// and returns them: set-major, per set the built-in metrics in the
    /// configured order, then the monitor's own.
    pub fn record(
        &mut self,
        objective: &Objective,
        monitor: &mut dyn Monitor,
    ) -> Result<Vec<EvalResult>> {
        let mut out = Vec::with_capacity(self.histories.len());
        let mut per_set = Vec::with_capacity(self.sets.len());
        let sets = self.sets.iter().zip(&self.scores).zip(&self.weights);
        for (i, ((set, scores), rescaled)) in sets.enumerate() {
            let before = out.len();
            let w = rescaled.as_deref().or(set.w);
            for &m in &self.metrics {
                let value = m.evaluate(objective, set.y, scores, w, set.queries.as_ref(), self.at);
                out.push(EvalResult {
                    set: set.name.clone(),
                    metric: match (m, self.at) {
                        (Metric::Ndcg, Some(k)) => format!("ndcg@{k}"),
                        _ => m.name().to_string(),
                    },
                    value,
                    higher_is_better: m.higher_is_better(),
                });
            }
            for (metric, value, higher_is_better) in monitor.custom_metrics(i, scores)? {
                out.push(EvalResult {
                    set: set.name.clone(),
                    metric,
                    value,
                    higher_is_better,
                });
            }
            per_set.push(out.len() - before);
        }
        if per_set.windows(2).any(|p| p[0] != p[1]) {
            return Err(RgbmError::param(
                "eval_metric",
                "a metric function returned a different number of metrics on different evaluation sets",
            ));
        }
        if self.histories.is_empty() {
            self.histories = out
                .iter()
                .map(|r| EvalHistory {
                    set: r.set.clone(),
                    metric: r.metric.clone(),
                    values: Vec::new(),
                })
                .collect();
        }
        let same = |h: &EvalHistory, r: &EvalResult| h.set == r.set && h.metric == r.metric;
        if out.len() != self.histories.len()
            || !self.histories.iter().zip(&out).all(|(h, r)| same(h, r))
        {
            let names = |it: &mut dyn Iterator<Item = (&str, &str)>| {
                it.map(|(s, m)| format!("{s}:{m}")).collect::<Vec<_>>()
            };
            return Err(RgbmError::param(
                "eval_metric",
                format!(
                    "the metrics changed between rounds: {:?} after {:?}; a metric function must return the same name every round",
                    names(&mut out.iter().map(|r| (r.set.as_str(), r.metric.as_str()))),
                    names(
                        &mut self
                            .histories
                            .iter()
                            .map(|h| (h.set.as_str(), h.metric.as_str()))
                    ),
                ),
            ));
        }
        for (h, r) in self.histories.iter_mut().zip(&out) {
            reserve_one(&mut h.values, "the evaluation history")?;
            h.values.push(r.value);
        }
        Ok(out)
    }

    /// Of the results of one round, the first metric of the last set (which
    /// early stopping watches); None when no metric is recorded.
    pub fn watched<'r>(&self, results: &'r [EvalResult]) -> Option<&'r EvalResult> {
        let per_set = results.len() / self.sets.len().max(1);
        results
            .len()
            .checked_sub(per_set)
            .and_then(|i| results.get(i))
    }
}

/// AUC ranks positives against negatives, so it is undefined on a set
/// without (weighted) rows of both classes; recording NaN would make early
/// stopping end training on a metric that cannot improve. Refused up front,
/// as scikit-learn's `roc_auc_score` refuses a single class.
fn check_both_classes<T: Element>(set: &EvalSet<T>) -> Result<()> {
    // Each target's labels (one block per target) need both classes.
    let n = set.x.n_rows().max(1);
    let (mut pos, mut neg) = (0.0, 0.0);
    for block in set.y.chunks(n) {
        (pos, neg) = (0.0, 0.0);
        for (i, &y) in block.iter().enumerate() {
            let w = set.w.map_or(1.0, |w| w[i]);
            if y > 0.5 { pos += w } else { neg += w }
        }
        if !(pos > 0.0 && neg > 0.0) {
            break;
        }
    }
    if pos > 0.0 && neg > 0.0 {
        return Ok(());
    }
    let only = if pos > 0.0 { 1 } else { 0 };
    Err(RgbmError::param(
        "eval_metric",
        format!(
            "evaluation set {:?} has rows (of positive weight) of class {only} only, and AUC is undefined with one class; use another metric (e.g. logloss) or an evaluation set with both classes",
            set.name
        ),
    ))
}

/// Stops when a metric has not improved for `patience` rounds; remembers the best round.
#[derive(Clone, Debug)]
pub(crate) struct EarlyStopping {
    patience: usize,
    higher_is_better: bool,
    /// The smallest change that counts as an improvement.
    min_delta: f64,
    best: Option<(usize, f64)>,
}

impl EarlyStopping {
    pub fn new(patience: usize, higher_is_better: bool, min_delta: f64) -> Self {
        EarlyStopping {
            patience,
            higher_is_better,
            min_delta,
            best: None,
        }
    }

    /// Records round `round`'s value; true when training should stop. A NaN
    /// value never counts as an improvement; otherwise one must beat the
    /// best by more than `min_delta` (LightGBM's rule).
    pub fn update(&mut self, round: usize, value: f64) -> bool {
        let better = match self.best {
            None => !value.is_nan(),
            Some((_, b)) => {
                if self.higher_is_better {
                    value > b + self.min_delta
                } else {
                    value < b - self.min_delta
                }
            }
        };
        if better {
            self.best = Some((round, value));
        }
        let since = round - self.best.map_or(0, |(r, _)| r);
        // Without any finite value yet, count from round 0.
        since >= self.patience || (self.best.is_none() && round + 1 >= self.patience)
    }

    pub fn best_round(&self) -> Option<usize> {
        self.best.map(|(r, _)| r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_needs_both_classes_with_weight() {
        let x = vec![0.0f64; 4];
        let set = |y: &'static [f64], w: Option<&'static [f64]>| EvalSet {
            name: "v".into(),
            x: crate::data::DenseMatrix::row_major(&x, 4, 1)
                .unwrap()
                .into(),
            y,
            w,
            init_score: None,
            queries: None,
        };
        assert!(check_both_classes(&set(&[0.0, 1.0, 1.0, 0.0], None)).is_ok());
        let e = check_both_classes(&set(&[1.0; 4], None)).unwrap_err();
        assert!(e.to_string().contains("class 1 only"), "{e}");
        // Class 1 present but with zero weight: still one class.
        let e = check_both_classes(&set(&[0.0, 1.0, 0.0, 0.0], Some(&[1.0, 0.0, 2.0, 1.0])))
            .unwrap_err();
        assert!(e.to_string().contains("class 0 only"), "{e}");
    }

    #[test]
    fn early_stopping_finds_the_minimum_and_waits_patience_rounds() {
        let curve = [5.0, 4.0, 3.0, 3.5, 2.9, 3.0, 3.1, 3.2, 1.0];
        let mut es = EarlyStopping::new(3, false, 0.0);
        let stop = (0..curve.len()).find(|&r| es.update(r, curve[r]));
        assert_eq!(stop, Some(7));
        assert_eq!(es.best_round(), Some(4));
        let mut up = EarlyStopping::new(2, true, 0.0);
        assert!(!up.update(0, 0.5) && !up.update(1, 0.6) && !up.update(2, 0.6));
        assert!(up.update(3, 0.55));
        assert_eq!(up.best_round(), Some(1));
    }

    #[test]
    fn min_delta_is_the_smallest_change_that_counts() {
        // Drops of 0.3 then 0.05: with min_delta 0.1 only the first counts,
        // so the best stays at round 1 and patience 2 stops at round 3.
        let curve = [1.0, 0.7, 0.65, 0.6, 0.55];
        let stop_and_best = |delta: f64| {
            let mut es = EarlyStopping::new(2, false, delta);
            let stop = (0..curve.len()).find(|&r| es.update(r, curve[r]));
            (stop, es.best_round())
        };
        assert_eq!(stop_and_best(0.0), (None, Some(4)));
        assert_eq!(stop_and_best(0.1), (Some(3), Some(1)));
        // A change of exactly min_delta does not count (LightGBM: strictly more).
        let mut up = EarlyStopping::new(1, true, 0.25);
        assert!(!up.update(0, 0.5));
        assert!(up.update(1, 0.75));
        assert_eq!(up.best_round(), Some(0));
    }
}
