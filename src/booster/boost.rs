//! The boosting loop. A round takes the gradients of the loss at the
//! current scores, selects candidate features, grows a tree per output,
//! scales it by the step rule, adds it to the scores, then logs and
//! evaluates. RGB replaces selection, growth and step by its family draw
//! and coordinate step (`rgb.rs`); SGLB adds noise and model shrinkage
//! (`sglb.rs`).
use std::time::Instant;

use crate::cancel::Cancel;
use crate::constraints::TreeConstraints;
use crate::contention::Contention;
use crate::data::BinnedDataset;
use crate::data::matrix::{Element, Matrix};
use crate::error::{Result, RgbmError};
use crate::objective::{Objective, Queries};
use crate::params::{BoosterKind, BoosterParams, Loss, Summation};
use crate::threads::{fit_threads, with_cached_threads};

use super::eval::{EarlyStopping, EvalSet, Monitor};
use super::fit::{Fit, Problem};
use super::resume::Resume;
use super::rgb::RgbState;
use super::trained::Trained;
use super::training_data::{Features, TrainingData, check_init_len};
use super::weights;

/// Trains a model on `data`, evaluating `eval_sets` after every round
/// (metrics, and early stopping on the first metric of the last set) and
/// reporting to `monitor`, which may stop training.
pub fn train<T: Element>(
    params: &BoosterParams,
    data: &TrainingData<'_, T>,
    eval_sets: &[EvalSet<T>],
    monitor: &mut dyn Monitor,
) -> Result<Trained> {
    train_resumed(params, data, eval_sets, Resume::default(), monitor)
}

/// [`train`] continuing from `resumed`, rounds 0..k of the same fit (as
/// [`Monitor::round_trained`] reported them): those rounds are replayed
/// from their trees, not grown, and not reported to `monitor` again;
/// training goes on from round k (unless the monitor had stopped it). The model is the one `train` gives (see
/// [`super::resume`]).
pub fn train_resumed<T: Element>(
    params: &BoosterParams,
    data: &TrainingData<'_, T>,
    eval_sets: &[EvalSet<T>],
    resumed: Resume<'_>,
    monitor: &mut dyn Monitor,
) -> Result<Trained> {
    let rows = data.rows();
    if data.is_shard() {
        // Before the parameters' own validation, whose advice for these
        // (float sums) does not apply on shards.
        super::shard::check_params(params)?;
    }
    params.validate()?;
    let (x, y) = (data.x(), data.y());
    check_queries(params, data.queries())?;
    if let Features::Binned(d) = x {
        if data.is_shard() {
            return Err(RgbmError::param(
                "data",
                "a sharded fit bins its shards with edges from every shard: give it raw rows",
            ));
        }
        check_binned(params, d)?;
    }
    let normalised = weights::normalise(
        data.weights(),
        params.summation() == Summation::Exact,
        &rows,
    )?;
    let (w, weight_unit) = (normalised.weights.as_deref(), normalised.unit);
    let objective = Objective::from_params(params);
    if data.n_targets() != objective.n_targets() {
        return Err(RgbmError::param(
            "n_targets",
            format!(
                "the data has {} targets per row but the parameters {}",
                data.n_targets(),
                objective.n_targets()
            ),
        ));
    }
    objective.check_labels(y)?;
    objective.check_training_labels(y, w, rows.reduce)?;
    if params.early_stopping_rounds.is_some() && eval_sets.is_empty() {
        return Err(RgbmError::param(
            "early_stopping_rounds",
            "early stopping needs at least one evaluation set (eval_set or validation_fraction)",
        ));
    }
    if let Some(init) = data.init_score() {
        check_init_len(init, data.n_rows(), objective.n_outputs(), "init_score")?;
    }
    super::resume::check(resumed.rounds, params, x.n_cols(), objective.n_outputs())?;
    let problem = Problem {
        params,
        objective: &objective,
        x,
        y,
        w,
        init_score: data.init_score(),
        rows,
        queries: data.queries(),
    };
    // Results do not depend on the thread count, so this is speed only.
    let threads = fit_threads(params.n_jobs, x.stored_values());
    with_cached_threads(threads, || {
        train_in_pool(problem, weight_unit, eval_sets, resumed, monitor)
    })?
}

/// The rows binned as a local fit bins them: quantiles weighted by the
/// normalised weights `w`.
fn bin_local<T: Element>(
    x: &Matrix<T>,
    w: Option<&[f64]>,
    params: &BoosterParams,
    cancel: &Cancel,
) -> Result<BinnedDataset> {
    BinnedDataset::from_weighted_matrix(
        x,
        crate::data::BinLimits {
            max_bins: params.max_bins,
            min_data_in_bin: params.min_data_in_bin(),
        },
        params.random_state,
        w,
        params.categorical(),
        params.min_samples_leaf,
        cancel,
    )
}

/// The dataset `train` would bin from `data` under `params`, to be trained
/// on many times (whole, or `subset`s of it) through
/// [`TrainingData::binned`]: the same model as training on `data`.
pub fn bin_for_training<T: Element>(
    params: &BoosterParams,
    data: &TrainingData<'_, T>,
    cancel: &Cancel,
) -> Result<BinnedDataset> {
    params.validate()?;
    let Features::Raw(x) = data.x() else {
        return Err(RgbmError::param("data", "is binned already"));
    };
    if data.is_shard() {
        return Err(RgbmError::param(
            "data",
            "a shard is binned by its sharded fit, with edges from every shard",
        ));
    }
    let normalised = weights::normalise(
        data.weights(),
        params.summation() == Summation::Exact,
        &data.rows(),
    )?;
    let threads = fit_threads(params.n_jobs, x.stored_values());
    with_cached_threads(threads, || {
        bin_local(x, normalised.weights.as_deref(), params, cancel)
    })?
}

/// The options that shape bins must be those `d` was binned with: other
/// ones would make a model other than the one training on raw rows gives.
fn check_binned(params: &BoosterParams, d: &BinnedDataset) -> Result<()> {
    let mapper = d.mapper();
    if mapper.max_bins != params.max_bins {
        return Err(RgbmError::param(
            "max_bins",
            format!(
                "the dataset was binned with max_bins={}, the fit asks for {}",
                mapper.max_bins, params.max_bins
            ),
        ));
    }
    if mapper.min_data_in_bin != params.min_data_in_bin() {
        return Err(RgbmError::param(
            "min_data_in_bin",
            format!(
                "the dataset was binned with min_data_in_bin={}, the fit asks for {}",
                mapper.min_data_in_bin,
                params.min_data_in_bin()
            ),
        ));
    }
    if d.min_rows() != params.min_samples_leaf {
        return Err(RgbmError::param(
            "min_samples_leaf",
            format!(
                "the dataset was binned with min_samples_leaf={}, the fit asks for {}",
                d.min_rows(),
                params.min_samples_leaf
            ),
        ));
    }
    let binned: Vec<usize> = (0..mapper.n_features())
        .filter(|&j| mapper.features[j].is_categorical())
        .collect();
    let mut asked = params.categorical().to_vec();
    asked.sort_unstable();
    asked.dedup();
    if binned != asked {
        return Err(RgbmError::param(
            "categorical_features",
            format!(
                "the dataset was binned with categorical features {binned:?}, the fit asks for {asked:?}"
            ),
        ));
    }
    Ok(())
}

/// Query groups go with `loss = lambdarank` and only with it.
fn check_queries(params: &BoosterParams, queries: Option<&Queries>) -> Result<()> {
    match (queries, params.loss == Loss::LambdaRank) {
        (None, true) => Err(RgbmError::param(
            "loss",
            "loss='lambdarank' needs the rows' query groups (TrainingData::with_queries)",
        )),
        (Some(_), false) => Err(RgbmError::param(
            "group",
            format!(
                "query groups are for loss='lambdarank', not {:?}",
                params.loss.name()
            ),
        )),
        _ => Ok(()),
    }
}

fn train_in_pool<T: Element>(
    problem: Problem<'_, T>,
    weight_unit: f64,
    eval_sets: &[EvalSet<T>],
    resumed: Resume<'_>,
    monitor: &mut dyn Monitor,
) -> Result<Trained> {
    let (params, x, w) = (problem.params, problem.x, problem.w);
    let cancel = monitor.cancel();
    let constraints = TreeConstraints::new(params, x.n_cols())?;
    let binned;
    let data = match x {
        Features::Binned(d) => d,
        Features::Raw(x) if problem.rows.is_local() => {
            binned = bin_local(x, w, params, &cancel)?;
            &binned
        }
        Features::Raw(x) => {
            binned = super::shard::bin(x, w, params, &problem.rows, &cancel)?;
            &binned
        }
    };
    let (mut fit, cfg) = Fit::new(problem, data, weight_unit, eval_sets, &constraints, &cancel)?;
    // Made at the first results: the watched metric may be the monitor's.
    let mut early: Option<EarlyStopping> = None;
    let rgb = if params.booster == BoosterKind::Rgb {
        Some(RgbState::new(
            params,
            data,
            cfg,
            &constraints,
            cancel.clone(),
        )?)
    } else {
        None
    };

    let mut contention = Contention::for_current_pool();
    for round in 0..params.n_estimators {
        let replayed = resumed.rounds.get(round);
        let results = match replayed {
            Some(record) => {
                cancel.check()?;
                fit.replay_round(round, record, monitor)?
            }
            None => {
                monitor.before_round(round)?;
                if let Some(lr) = monitor.learning_rate(round)? {
                    fit.set_learning_rate(lr)?;
                }
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
                results
            }
        };
        let early_stop = match params.early_stopping_rounds {
            Some(patience) => {
                let watched = fit.watched(&results).ok_or_else(|| {
                    RgbmError::param(
                        "early_stopping_rounds",
                        "early stopping needs a metric, and a custom loss has no default one: name one in eval_metric",
                    )
                })?;
                early
                    .get_or_insert_with(|| {
                        EarlyStopping::new(
                            patience,
                            watched.higher_is_better,
                            params.early_stopping_min_delta(),
                        )
                    })
                    .update(round, watched.value)
            }
            None => false,
        };
        // Replayed rounds were reported when they were trained.
        let user_stop = match replayed {
            Some(_) => resumed.stopped && round + 1 == resumed.rounds.len(),
            None => {
                let (trees, log) = fit.last_round();
                if let Some(log) = log {
                    monitor.round_trained(round, trees, log)?;
                }
                monitor.after_round(round, &results)?
            }
        };
        if early_stop || user_stop {
            break;
        }
    }
    let best_iteration = early.as_ref().and_then(|es| es.best_round());
    Ok(fit.into_trained(best_iteration))
}
