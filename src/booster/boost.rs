//! The boosting loop. A round takes the gradients of the loss at the
//! current scores, selects candidate features, grows a tree per output,
//! scales it by the step rule, adds it to the scores, then logs and
//! evaluates. RGB replaces selection, growth and step by its family draw
//! and coordinate step (`rgb.rs`); SGLB adds noise and model shrinkage
//! (`sglb.rs`).
use std::time::Instant;

use serde::Serialize;

use crate::constraints::TreeConstraints;
use crate::contention::Contention;
use crate::data::BinnedDataset;
use crate::data::matrix::{AsMatrix, Element, Matrix};
use crate::error::{Result, RgbmError};
use crate::model::Model;
use crate::objective::{Objective, Queries};
use crate::params::{BoosterKind, BoosterParams, Loss, Summation};
use crate::threads::{fit_threads, with_cached_threads};
use crate::tree::Tree;

use super::eval::{BeforeRound, EarlyStopping, EvalHistory, EvalSet, Monitor};
use super::fit::{Fit, Problem};
use super::rgb::RgbState;
use super::shard::ShardRows;
use super::theory::TreeTheory;
use super::weights;

/// Called before every round with the round index; an error (e.g. a pending
/// Ctrl-C) stops training and is returned from `train`.
pub type RoundHook<'a> = &'a mut (dyn FnMut(usize) -> Result<()> + Send);

/// `whole`: these are all the rows (a shard may hold only zero weights).
fn check_inputs<T: Element>(
    x: &Matrix<T>,
    y: &[f64],
    w: Option<&[f64]>,
    whole: bool,
) -> Result<()> {
    if x.n_rows() == 0 || x.n_cols() == 0 {
        return Err(RgbmError::EmptyInput(format!(
            "X has shape ({}, {})",
            x.n_rows(),
            x.n_cols()
        )));
    }
    if x.n_rows() > u32::MAX as usize {
        return Err(RgbmError::Shape(format!(
            "at most {} rows are supported",
            u32::MAX
        )));
    }
    if y.len() != x.n_rows() {
        return Err(RgbmError::Shape(format!(
            "X has {} rows but y has {}",
            x.n_rows(),
            y.len()
        )));
    }
    if let Some(w) = w {
        if w.len() != x.n_rows() {
            return Err(RgbmError::Shape(format!(
                "X has {} rows but sample_weight has {}",
                x.n_rows(),
                w.len()
            )));
        }
        if let Some(i) = w.iter().position(|v| !v.is_finite() || *v < 0.0) {
            return Err(RgbmError::NonFinite(format!(
                "sample_weight must be finite and >= 0, got {} at index {i}",
                w[i]
            )));
        }
        if whole && !(w.iter().sum::<f64>() > 0.0) {
            return Err(RgbmError::param("sample_weight", "the weights sum to zero"));
        }
    }
    Ok(())
}

/// What happened in one boosting round (RGBM diagnostics).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RoundLog {
    /// The root split (the weak learner a stump would be), if the tree split.
    pub root_feature: Option<usize>,
    pub root_threshold: Option<f64>,
    /// Features in the round's candidate set J (tree scope), p for `full`.
    pub features_searched: Option<usize>,
    /// Multiplier applied to the tree's raw leaf values (ν, 1/σ or ν·ρ*).
    pub step: f64,
    /// Wall time of the round, seconds.
    pub seconds: f64,
    /// Mean training loss after the round, when `record_train_loss` is set.
    pub train_loss: Option<f64>,
    /// RGB: the chosen family (internal nodes n_k, leaf radius λ_k) of the
    /// round's first tree, and of every tree (one per class) in `rgb_families`.
    pub rgb_nodes: Option<usize>,
    pub rgb_lambda: Option<f64>,
    pub rgb_families: Vec<(usize, f64)>,
    /// The round's first tree: Sun, Zhang & Zhou's weak-learnability ratios
    /// γ and γ*, and Lu & Mazumder's cosine of the tree with the residual
    /// (`theory`). None on shards and where undefined.
    pub gamma: Option<f64>,
    pub gamma_star: Option<f64>,
    pub cosine: Option<f64>,
    /// RGB: the normalised complexity Ω_k of the first tree's family.
    pub rgb_omega: Option<f64>,
    /// RGB: Σ |α|·R̂(H_k) over the round's trees, R̂ Theorem 1's Rademacher
    /// bound of the tree's family; summed over rounds it is the complexity
    /// term of Theorem 2's margin bound.
    pub rgb_complexity: Option<f64>,
}

impl RoundLog {
    /// The log of a round whose first tree is `first`, scaled by `step`,
    /// with diagnostics `theory`.
    pub(super) fn first_tree(first: &Tree, step: f64, theory: TreeTheory) -> RoundLog {
        RoundLog {
            root_feature: first.feature.first().map(|&f| f as usize),
            root_threshold: first.threshold.first().copied(),
            step,
            gamma: theory.gamma,
            gamma_star: theory.gamma_star,
            cosine: theory.cosine,
            ..RoundLog::default()
        }
    }
}

impl Trained {
    /// RGB: the complexity term Σ_t |α_t|·R̂(H_{I_t}) of Theorem 2 over the
    /// model's trees (the rounds up to `best_iteration` when it is set);
    /// None for other boosters.
    pub fn rgb_complexity(&self) -> Option<f64> {
        let kept = self.best_iteration.map_or(self.log.len(), |b| b + 1);
        self.log[..kept.min(self.log.len())]
            .iter()
            .map(|r| r.rgb_complexity)
            .sum()
    }
}

/// A trained model, its per-round log and the evaluation histories.
pub struct Trained {
    pub model: Model,
    pub log: Vec<RoundLog>,
    /// One history per (evaluation set, metric), over every round trained.
    pub evals: Vec<EvalHistory>,
    /// With early stopping: the round whose model was kept (0-based).
    pub best_iteration: Option<usize>,
}

/// Trains a model on `x` (NaN = missing), labels `y` and optional weights.
pub fn train<T: Element>(
    params: &BoosterParams,
    x: &impl AsMatrix<T>,
    y: &[f64],
    w: Option<&[f64]>,
    on_round: RoundHook,
) -> Result<Model> {
    train_logged(params, x, y, w, on_round).map(|t| t.model)
}

/// Like [`train`], also returning the per-round log.
pub fn train_logged<T: Element>(
    params: &BoosterParams,
    x: &impl AsMatrix<T>,
    y: &[f64],
    w: Option<&[f64]>,
    on_round: RoundHook,
) -> Result<Trained> {
    train_with(params, x, y, w, &[], &mut BeforeRound(on_round))
}

/// The full training entry: evaluation sets (metrics after every round,
/// early stopping on the first metric of the last set) and a monitor.
pub fn train_with<T: Element>(
    params: &BoosterParams,
    x: &impl AsMatrix<T>,
    y: &[f64],
    w: Option<&[f64]>,
    eval_sets: &[EvalSet<T>],
    monitor: &mut dyn Monitor,
) -> Result<Trained> {
    train_from(params, x, y, w, None, eval_sets, monitor)
}

/// [`train_with`] from per-row starting scores `init_score` (n × K,
/// class-major): the fit starts at them instead of a fitted constant, and
/// the model's base score is 0, so its predictions exclude them (add them
/// back, as with LightGBM's `init_score`).
pub fn train_from<T: Element>(
    params: &BoosterParams,
    x: &impl AsMatrix<T>,
    y: &[f64],
    w: Option<&[f64]>,
    init_score: Option<&[f64]>,
    eval_sets: &[EvalSet<T>],
    monitor: &mut dyn Monitor,
) -> Result<Trained> {
    let x = &x.as_matrix();
    train_local(params, x, y, w, init_score, None, eval_sets, monitor)
}

/// A fit on every row, on this machine.
#[allow(clippy::too_many_arguments)]
fn train_local<T: Element>(
    params: &BoosterParams,
    x: &Matrix<T>,
    y: &[f64],
    w: Option<&[f64]>,
    init_score: Option<&[f64]>,
    queries: Option<&Queries>,
    eval_sets: &[EvalSet<T>],
    monitor: &mut dyn Monitor,
) -> Result<Trained> {
    let rows = ShardRows::local(x.n_rows());
    let threads = params.n_jobs;
    train_rows(
        params, x, y, w, init_score, queries, rows, threads, eval_sets, monitor,
    )
}

/// Trains on one shard of the data: every shard runs this with its own rows
/// (`rows.ids` their indices in the whole data) and `rows.reduce` combining
/// their sums, and each ends with the model a fit on all rows would give
/// (see [`crate::reduce`]). Needs `summation="exact"`; refuses what has no
/// sharded form yet (see `shard::check_params`). `threads` (if given)
/// replaces `params.n_jobs` on this shard: the model does not depend on it.
/// Every shard is given the same evaluation sets, whole: each computes the
/// same metrics, so early stopping stops every shard in the same round.
#[allow(clippy::too_many_arguments)]
pub fn train_shard<T: Element>(
    params: &BoosterParams,
    x: &impl AsMatrix<T>,
    y: &[f64],
    w: Option<&[f64]>,
    init_score: Option<&[f64]>,
    rows: ShardRows,
    threads: Option<usize>,
    eval_sets: &[EvalSet<T>],
    monitor: &mut dyn Monitor,
) -> Result<Trained> {
    super::shard::check_params(params)?;
    params.validate()?;
    let x = &x.as_matrix();
    rows.check(x.n_rows())?;
    let n_jobs = threads.or(params.n_jobs);
    train_rows(
        params, x, y, w, init_score, None, rows, n_jobs, eval_sets, monitor,
    )
}

#[allow(clippy::too_many_arguments)]
fn train_rows<T: Element>(
    params: &BoosterParams,
    x: &Matrix<T>,
    y: &[f64],
    w: Option<&[f64]>,
    init_score: Option<&[f64]>,
    queries: Option<&Queries>,
    rows: ShardRows,
    n_jobs: Option<usize>,
    eval_sets: &[EvalSet<T>],
    monitor: &mut dyn Monitor,
) -> Result<Trained> {
    params.validate()?;
    check_inputs(x, y, w, rows.is_local())?;
    check_queries(params, queries, y.len(), w)?;
    let normalised = weights::normalise(w, params.summation() == Summation::Exact, &rows)?;
    let (w, weight_unit) = (normalised.weights.as_deref(), normalised.unit);
    let objective = Objective::from_params(params);
    objective.check_labels(y)?;
    objective.check_training_labels(y, w, rows.reduce)?;
    if params.early_stopping_rounds.is_some() && eval_sets.is_empty() {
        return Err(RgbmError::param(
            "early_stopping_rounds",
            "early stopping needs at least one evaluation set (eval_set or validation_fraction)",
        ));
    }
    if let Some(init) = init_score {
        check_init_score(init, y.len(), objective.n_outputs(), "init_score")?;
    }
    let problem = Problem {
        params,
        objective: &objective,
        x,
        y,
        w,
        init_score,
        rows,
        queries,
    };
    // Results do not depend on the thread count, so this is speed only.
    let threads = fit_threads(n_jobs, x.stored_values());
    with_cached_threads(threads, || {
        train_in_pool(problem, weight_unit, eval_sets, monitor)
    })?
}

/// Learning to rank: [`train_from`] with the rows' query groups (`loss =
/// lambdarank`; consecutive rows of a query, `queries` sizing them) and no
/// sample weights. Evaluation sets carry their own groups.
pub fn train_ranking<T: Element>(
    params: &BoosterParams,
    x: &impl AsMatrix<T>,
    y: &[f64],
    queries: &Queries,
    init_score: Option<&[f64]>,
    eval_sets: &[EvalSet<T>],
    monitor: &mut dyn Monitor,
) -> Result<Trained> {
    let x = &x.as_matrix();
    train_local(
        params,
        x,
        y,
        None,
        init_score,
        Some(queries),
        eval_sets,
        monitor,
    )
}

/// Query groups go with `loss = lambdarank` and only with it, cover the
/// rows, and come without sample weights (the pairs of a query carry the
/// weight; per-row weights have no agreed meaning there).
fn check_queries(
    params: &BoosterParams,
    queries: Option<&Queries>,
    n_rows: usize,
    w: Option<&[f64]>,
) -> Result<()> {
    match (queries, params.loss == Loss::LambdaRank) {
        (None, true) => Err(RgbmError::param(
            "loss",
            "loss='lambdarank' needs the rows' query groups (train_ranking)",
        )),
        (Some(_), false) => Err(RgbmError::param(
            "group",
            format!(
                "query groups are for loss='lambdarank', not {:?}",
                format!("{:?}", params.loss).to_lowercase()
            ),
        )),
        (Some(q), true) if q.n_rows() != n_rows => Err(RgbmError::Shape(format!(
            "the group sizes add up to {} rows, but there are {n_rows}",
            q.n_rows()
        ))),
        (Some(_), true) if w.is_some() => Err(RgbmError::param(
            "sample_weight",
            "ranking takes no sample weights",
        )),
        _ => Ok(()),
    }
}

/// Starting scores: n × K finite numbers.
pub(super) fn check_init_score(init: &[f64], n: usize, k: usize, what: &str) -> Result<()> {
    if Some(init.len()) != n.checked_mul(k) {
        return Err(RgbmError::Shape(format!(
            "{what} has {} values, but {n} rows × {k} outputs need {}",
            init.len(),
            n.saturating_mul(k)
        )));
    }
    if let Some(i) = init.iter().position(|v| !v.is_finite()) {
        return Err(RgbmError::NonFinite(format!(
            "{what} contains {} at index {i}",
            init[i]
        )));
    }
    Ok(())
}

fn train_in_pool<T: Element>(
    problem: Problem<'_, T>,
    weight_unit: f64,
    eval_sets: &[EvalSet<T>],
    monitor: &mut dyn Monitor,
) -> Result<Trained> {
    let (params, x, w) = (problem.params, problem.x, problem.w);
    let cancel = monitor.cancel();
    let constraints = TreeConstraints::new(params, x.n_cols())?;
    let data = if problem.rows.is_local() {
        BinnedDataset::from_weighted_matrix(
            x,
            params.max_bins,
            params.random_state,
            w,
            params.categorical(),
            params.min_samples_leaf,
            &cancel,
        )?
    } else {
        super::shard::bin(x, w, params, &problem.rows, &cancel)?
    };
    let (mut fit, cfg) = Fit::new(
        problem,
        &data,
        weight_unit,
        eval_sets,
        &constraints,
        &cancel,
    )?;
    // Made at the first results: the watched metric may be the monitor's.
    let mut early: Option<EarlyStopping> = None;
    let rgb = if params.booster == BoosterKind::Rgb {
        Some(RgbState::new(
            params,
            &data,
            cfg,
            &constraints,
            cancel.clone(),
        )?)
    } else {
        None
    };

    let mut contention = Contention::for_current_pool();
    for round in 0..params.n_estimators {
        monitor.before_round(round)?;
        // Until the round ends (not during the hook, which may run Python).
        let workers = contention.start_round();
        let started = Instant::now();
        fit.compute_gradients(monitor)?;
        fit.subsample_rows(round)?;
        let entry = match &rgb {
            Some(rgb) => fit.rgb_round(rgb, round, monitor)?,
            None => fit.boost_round(round)?,
        };
        // A cancelled grower returns a partial tree: never let it into a model.
        cancel.check()?;
        let results = fit.log_and_evaluate(entry, started, monitor)?;
        drop(workers);
        contention.end_round();
        let early_stop = match params.early_stopping_rounds {
            Some(patience) => {
                let watched = fit.watched(&results).ok_or_else(|| {
                    RgbmError::param(
                        "early_stopping_rounds",
                        "early stopping needs a metric, and a custom loss has no default one: name one in eval_metric",
                    )
                })?;
                early
                    .get_or_insert_with(|| EarlyStopping::new(patience, watched.higher_is_better))
                    .update(round, watched.value)
            }
            None => false,
        };
        let user_stop = monitor.after_round(round, &results)?;
        if early_stop || user_stop {
            break;
        }
    }
    let best_iteration = early.as_ref().and_then(|es| es.best_round());
    Ok(fit.into_trained(best_iteration))
}
