//! Gradient boosting with shrinkage: each round fits a tree to the current
//! (weighted) gradients and adds learning_rate × tree to the scores.
use std::time::Instant;

use rand::RngExt;
use rayon::prelude::*;
use serde::Serialize;

use crate::alloc::{filled_vec, with_capacity};
use crate::data::BinnedDataset;
use crate::data::matrix::{AsMatrix, Element, Matrix};
use crate::error::{Result, RgbmError};
use crate::histogram::Gradients;
use crate::model::{FORMAT_VERSION, Model, check_log_std_leaves};
use crate::objective::Objective;
use crate::options::Metric;
use crate::params::{BoosterKind, BoosterParams, Init, Loss, SelectionScope, Step};
use crate::rng::{Purpose, stream};
use crate::selection::{Candidates, Selector};
use crate::split::SplitRule;
use crate::threads::{WarmWorkers, with_cached_threads};
use crate::tree::{GrowerConfig, NodeSelection, TreeGrower};

use super::eval::{BeforeRound, EarlyStopping, EvalHistory, EvalSet, Evaluator, Monitor};
use super::rgb::{Families, coordinate_step, project_l2};
use super::sglb;
use super::step::step_scale;
use super::weights;
use crate::cancel::Cancel;
use crate::histogram::BinStats;
use crate::tree::Tree;
use crate::tree::grower::sum_rows;
use crate::tree::predict::add_tree_outputs;
use std::sync::Mutex;

/// Called before every round with the round index; an error (e.g. a pending
/// Ctrl-C) stops training and is returned from `train`.
pub type RoundHook<'a> = &'a mut (dyn FnMut(usize) -> Result<()> + Send);

fn check_inputs<T: Element>(x: &Matrix<T>, y: &[f64], w: Option<&[f64]>) -> Result<()> {
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
        if !(w.iter().sum::<f64>() > 0.0) {
            return Err(RgbmError::param("sample_weight", "the weights sum to zero"));
        }
    }
    Ok(())
}

/// The catch-all against a diverging fit (a learning rate far too large, an
/// overflowing loss): every leaf of the round's trees must be finite, and so
/// must `bound`, |base score| + Σ max |leaf| over the trees so far, which
/// bounds every prediction of the model. `trees[k]` is the tree of output
/// `first_output + k`. An error names the round.
fn check_finite_round(
    trees: &[Tree],
    first_output: usize,
    bound: &mut f64,
    round: usize,
    params: &BoosterParams,
) -> Result<()> {
    for (k, tree) in trees.iter().enumerate() {
        // A log-σ leaf a loaded model would refuse means the fit diverged.
        if params.loss == Loss::Gaussian
            && first_output + k == 1
            && let Err(e) = check_log_std_leaves(tree)
        {
            return Err(RgbmError::NonFinite(format!(
                "the fit diverged in round {round}: the log standard deviation tree has {e}; \
                 use a smaller learning_rate (now {:?})",
                params.learning_rate
            )));
        }
        *bound += tree.leaf_value.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if tree.leaf_value.iter().any(|v| !v.is_finite()) {
            *bound = f64::INFINITY;
        }
    }
    if bound.is_finite() {
        return Ok(());
    }
    Err(RgbmError::NonFinite(format!(
        "the fit diverged in round {round}: a tree's leaf values are not finite or the scores overflow; \
         use a smaller learning_rate (now {:?}){}",
        params.learning_rate,
        if params.langevin {
            " or a larger temperature"
        } else {
            ""
        }
    )))
}

/// A raw pointer that may be shared between threads writing disjoint rows.
struct DisjointRows(*mut f64);
// SAFETY: only used by `add_leaf_values`, whose threads write disjoint indices.
unsafe impl Sync for DisjointRows {}

/// scores[r] += value of r's leaf, in parallel over leaves. `rows` holds each
/// row index at most once (it is built as 0..n or a filtered 0..n in `train`
/// and only permuted by partitioning), so the writes of different leaves never
/// alias.
fn add_leaf_values(scores: &mut [f64], rows: &[u32], ranges: &[(usize, usize)], values: &[f64]) {
    debug_assert!(rows.iter().all(|&r| (r as usize) < scores.len()));
    let out = DisjointRows(scores.as_mut_ptr());
    let out = &out;
    let n = scores.len();
    ranges.par_iter().zip(values).for_each(|(&(s, e), &v)| {
        for &r in &rows[s..e] {
            let r = r as usize;
            assert!(r < n);
            // SAFETY: r < n (checked), and no other leaf holds row r.
            unsafe { *out.0.add(r) += v };
        }
    });
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
    params.validate()?;
    let x = &x.as_matrix();
    check_inputs(x, y, w)?;
    let normalised = weights::normalise(w)?;
    let (w, weight_unit) = (normalised.weights.as_deref(), normalised.unit);
    let objective = Objective::from_params(params);
    objective.check_labels(y)?;
    objective.check_training_labels(y, w)?;
    if params.early_stopping_rounds.is_some() && eval_sets.is_empty() {
        return Err(RgbmError::param(
            "early_stopping_rounds",
            "early stopping needs at least one evaluation set (eval_set or validation_fraction)",
        ));
    }
    with_cached_threads(params.n_jobs, || {
        train_in_pool(params, &objective, x, y, w, weight_unit, eval_sets, monitor)
    })?
}

/// Adds `values` of each leaf to the rows of `out` that fell in it: through
/// the leaf ranges when every row was in the tree, else by routing every row.
fn add_tree_to_rows<T: Element>(
    out: &mut [f64],
    tree: &Tree,
    values: &[f64],
    rows: &[u32],
    ranges: &[(usize, usize)],
    all_rows: bool,
    x: &Matrix<T>,
) {
    if all_rows {
        add_leaf_values(out, rows, ranges, values);
    } else {
        // Out-of-bag rows are not in any leaf range.
        out.par_iter_mut()
            .enumerate()
            .for_each(|(i, s)| *s += values[tree.leaf_index(|j| x.get(i, j))]);
    }
}

#[allow(clippy::too_many_arguments)]
fn train_in_pool<T: Element>(
    params: &BoosterParams,
    objective: &Objective,
    x: &Matrix<T>,
    y: &[f64],
    w: Option<&[f64]>,
    weight_unit: f64,
    eval_sets: &[EvalSet<T>],
    monitor: &mut dyn Monitor,
) -> Result<Trained> {
    let n = x.n_rows();
    let k_out = objective.n_outputs();
    let cancel = monitor.cancel();
    let data =
        BinnedDataset::from_weighted_matrix(x, params.max_bins, params.random_state, w, &cancel)?;
    let base_score = match params.init {
        Init::Optimal => objective.initial_scores(y, w),
        Init::Zero => vec![0.0; k_out],
    };
    if let Some(b) = base_score.iter().find(|b| !b.is_finite()) {
        return Err(RgbmError::NonFinite(format!(
            "the initial score is {b}: the targets are too large for the loss; rescale y"
        )));
    }
    let mut bound = base_score.iter().fold(0.0f64, |m, b| m.max(b.abs()));
    let mut evaluator = Evaluator::new(eval_sets, params, objective, x.n_cols(), &base_score)?;
    let mut early = params.early_stopping_rounds.map(|r| {
        let metric = params
            .eval_metric
            .as_ref()
            .map_or(Metric::default_for(params.loss), |m| m[0]);
        EarlyStopping::new(r, metric.higher_is_better())
    });
    // Class-major: the scores and gradients of output k are rows k·n .. (k+1)·n.
    let len = k_out
        .checked_mul(n)
        .ok_or_else(|| RgbmError::Shape("n_rows * n_outputs overflows".into()))?;
    let mut scores: Vec<f64> = filled_vec(len, 0.0, "the training scores")?;
    scores
        .chunks_mut(n)
        .zip(&base_score)
        .for_each(|(block, &b)| block.fill(b));
    let mut gh = filled_vec(len, [0.0f64; 2], "the gradients")?;
    let mut rows: Vec<u32> = with_capacity(n, "the row index")?;
    let cfg = GrowerConfig {
        max_depth: params.max_depth,
        max_leaves: params.max_leaves,
        rule: SplitRule::from_params(params).in_weight_unit(weight_unit),
        exact_counts: false,
    };
    let mut grower = TreeGrower::new(&data, cfg)?;
    grower.set_cancel(cancel.clone());
    let mut trees = Vec::with_capacity(params.n_estimators * k_out);
    let mut log = Vec::with_capacity(params.n_estimators);
    let selector = Selector::new(params, &data)?;
    let all_features = Candidates::all(data.n_features());
    let mut dir = if params.step == Step::LineSearch {
        filled_vec(len, 0.0, "the line-search direction")?
    } else {
        Vec::new()
    };
    // SGLB noise for weights of mean `weight_unit`: gradients (and so their
    // noise) scale with the weights, leaf sums' noise with their square root.
    let langevin_c = params.langevin.then(|| {
        let c = sglb::noise_scale(params.learning_rate, params.temperature);
        (c * weight_unit, c * weight_unit.sqrt())
    });
    let mut gh_noisy = if params.langevin {
        filled_vec(n, [0.0f64; 2], "the Langevin gradients")?
    } else {
        Vec::new()
    };
    let rule = cfg.rule;
    // Model shrinkage: F ← b + q·(F − b) + tree each round.
    let q = params.shrink_factor();
    let rgb = if params.booster == BoosterKind::Rgb {
        Some(RgbState::new(params, &data, cfg, cancel.clone())?)
    } else {
        None
    };

    for round in 0..params.n_estimators {
        monitor.before_round(round)?;
        // Until the round ends (not during the hook, which may run Python).
        let _warm = WarmWorkers::start();
        let started = Instant::now();
        objective.gradients(y, &scores, w, &mut gh);
        rows.clear();
        let subsampled = params.subsample < 1.0;
        if subsampled {
            let mut rng = stream(params.random_state, Purpose::RowSubsample, round as u64);
            rows.extend((0..n as u32).filter(|_| rng.random_bool(params.subsample)));
            if rows.is_empty() {
                // A tree needs a row: an empty draw takes one row at random
                // (as scikit-learn's max(1, subsample·n)), never all of them.
                rows.push(rng.random_range(0..n as u32));
            }
        } else {
            rows.extend(0..n as u32);
        }
        let all_rows = rows.len() == n;
        let round_log = if let Some(rgb) = &rgb {
            // One RGB coordinate step per output. RGB is coordinate descent, so
            // each step sees the gradients after the previous one (for a single
            // output this is the round's gradient); every step then minimises the
            // σ-smooth upper bound of the loss and the loss never increases.
            let mut families = Vec::with_capacity(k_out);
            let mut first: Option<(Option<usize>, Option<f64>, f64)> = None;
            for class in 0..k_out {
                if class > 0 {
                    objective.gradients(y, &scores, w, &mut gh);
                }
                let grads = Gradients {
                    gh: &gh[class * n..(class + 1) * n],
                    weights: w,
                    unit_hessian: objective.unit_hessian(),
                    uncounted: false,
                };
                let stream_id = (round * k_out + class) as u64;
                let chosen = rgb.round(
                    params, objective, y, w, &scores, class, &grads, &rows, all_rows, x, stream_id,
                )?;
                check_finite_round(
                    std::slice::from_ref(&chosen.tree),
                    class,
                    &mut bound,
                    round,
                    params,
                )?;
                scores[class * n..(class + 1) * n]
                    .par_iter_mut()
                    .zip(&chosen.h)
                    .for_each(|(s, h)| *s += chosen.alpha * h);
                evaluator.add_tree(&chosen.tree, class);
                families.push((
                    rgb.families.nodes[chosen.family],
                    rgb.families.lambdas[chosen.family],
                ));
                first.get_or_insert((
                    chosen.tree.feature.first().map(|&f| f as usize),
                    chosen.tree.threshold.first().copied(),
                    chosen.alpha,
                ));
                trees.push(chosen.tree);
            }
            let (root_feature, root_threshold, step) = first.unwrap_or((None, None, 0.0));
            RoundLog {
                root_feature,
                root_threshold,
                features_searched: Some(data.n_features()),
                step,
                rgb_nodes: families.first().map(|f| f.0),
                rgb_lambda: families.first().map(|f| f.1),
                rgb_families: families,
                ..RoundLog::default()
            }
        } else {
            // Shrinkage and constant steps are known before the trees are grown.
            let fixed_scale = (params.step != Step::LineSearch)
                .then(|| step_scale(params, objective, y, &scores, w, &[]))
                .transpose()?;
            if q != 1.0 {
                scores
                    .par_iter_mut()
                    .enumerate()
                    .for_each(|(j, s)| *s = base_score[j / n] + q * (*s - base_score[j / n]));
                evaluator.shrink(q, &base_score);
            }
            let mut round_trees = Vec::with_capacity(k_out);
            let mut features_searched = None;
            for class in 0..k_out {
                // Per-tree random streams: (round, class) → one index; equals the round for single-output losses.
                let stream_id = (round * k_out + class) as u64;
                let gh_class = &gh[class * n..(class + 1) * n];
                if let Some((c, _)) = langevin_c {
                    sglb::add_gradient_noise(
                        gh_class,
                        &mut gh_noisy,
                        c,
                        params.random_state,
                        stream_id,
                    );
                }
                // SGLB chooses the structure on noisy gradients; leaf sums use the clean ones.
                let grads = Gradients {
                    gh: if params.langevin { &gh_noisy } else { gh_class },
                    weights: w,
                    unit_hessian: objective.unit_hessian(),
                    uncounted: false,
                };
                let mut select_rng = stream(params.random_state, Purpose::Selection, stream_id);
                let (grown, searched) = if selector.is_full() {
                    (
                        grower.grow(
                            &grads,
                            &mut rows,
                            all_rows,
                            NodeSelection::Tree(&all_features),
                        )?,
                        Some(data.n_features()),
                    )
                } else if params.selection_scope == SelectionScope::Tree {
                    let cands = selector.draw(&mut select_rng);
                    let searched = cands.features.len();
                    (
                        grower.grow(&grads, &mut rows, all_rows, NodeSelection::Tree(&cands))?,
                        Some(searched),
                    )
                } else {
                    (
                        grower.grow(
                            &grads,
                            &mut rows,
                            all_rows,
                            NodeSelection::Node(&selector, &mut select_rng),
                        )?,
                        None,
                    )
                };
                if class == 0 {
                    features_searched = searched;
                }
                let mut tree = grown.tree;
                if let Some((_, c)) = langevin_c {
                    let clean = Gradients {
                        gh: gh_class,
                        weights: w,
                        unit_hessian: objective.unit_hessian(),
                        uncounted: false,
                    };
                    let sums: Vec<BinStats> = grown
                        .leaf_ranges
                        .par_iter()
                        .map(|&(s, e)| sum_rows(&rows[s..e], &clean))
                        .collect();
                    tree.leaf_value =
                        sglb::noisy_leaf_values(&sums, &rule, c, params.random_state, stream_id);
                }
                if let Some(scale) = fixed_scale {
                    tree.leaf_value.iter_mut().for_each(|v| *v *= scale);
                    add_tree_to_rows(
                        &mut scores[class * n..(class + 1) * n],
                        &tree,
                        &tree.leaf_value,
                        &rows,
                        &grown.leaf_ranges,
                        all_rows,
                        x,
                    );
                } else {
                    // u on every training row, for the 1-D search along all K trees at once.
                    let block = &mut dir[class * n..(class + 1) * n];
                    block.iter_mut().for_each(|d| *d = 0.0);
                    add_tree_to_rows(
                        block,
                        &tree,
                        &tree.leaf_value,
                        &rows,
                        &grown.leaf_ranges,
                        all_rows,
                        x,
                    );
                }
                round_trees.push(tree);
            }
            let scale = match fixed_scale {
                Some(s) => s,
                None => {
                    let s = step_scale(params, objective, y, &scores, w, &dir)?;
                    scores
                        .par_iter_mut()
                        .zip(&dir)
                        .for_each(|(f, d)| *f += s * d);
                    round_trees
                        .iter_mut()
                        .for_each(|t| t.leaf_value.iter_mut().for_each(|v| *v *= s));
                    s
                }
            };
            check_finite_round(&round_trees, 0, &mut bound, round, params)?;
            for (class, tree) in round_trees.iter().enumerate() {
                evaluator.add_tree(tree, class);
            }
            let first = &round_trees[0];
            let entry = RoundLog {
                root_feature: first.feature.first().map(|&f| f as usize),
                root_threshold: first.threshold.first().copied(),
                features_searched,
                step: scale,
                ..RoundLog::default()
            };
            trees.extend(round_trees);
            entry
        };
        // A cancelled grower returns a partial tree: never let it into a model.
        cancel.check()?;
        let train_loss = params
            .record_train_loss
            .then(|| objective.mean_loss(y, &scores, w));
        log.push(RoundLog {
            seconds: started.elapsed().as_secs_f64(),
            train_loss,
            ..round_log
        });
        let results = if evaluator.is_empty() {
            Vec::new()
        } else {
            evaluator.record(objective)
        };
        // Early stopping watches the first metric of the last set.
        let early_stop = match (&mut early, results.len()) {
            (Some(es), len) if len > 0 => {
                let n_metrics = params.eval_metric.as_ref().map_or(1, |m| m.len());
                es.update(round, results[len - n_metrics].value)
            }
            _ => false,
        };
        let user_stop = monitor.after_round(round, &results)?;
        if early_stop || user_stop {
            break;
        }
    }
    let best_iteration = early.as_ref().and_then(|es| es.best_round());
    if let Some(best) = best_iteration {
        trees.truncate((best + 1) * k_out);
    }
    if q != 1.0 {
        // Fold the shrinkage in once: the trees of round r end up scaled by q^(R-1-r).
        let mut factor = 1.0;
        for round_trees in trees.rchunks_mut(k_out) {
            round_trees
                .iter_mut()
                .for_each(|t| t.leaf_value.iter_mut().for_each(|v| *v *= factor));
            factor *= q;
        }
    }
    let model = Model {
        format_version: FORMAT_VERSION,
        params: params.clone(),
        n_features: x.n_cols(),
        n_outputs: k_out,
        base_score,
        trees,
    };
    Ok(Trained {
        model,
        log,
        evals: evaluator.histories,
        best_iteration,
    })
}

/// RGB's per-fit state: the family grid and one grower per candidate.
struct RgbState<'a> {
    families: Families,
    growers: Vec<Mutex<TreeGrower<'a>>>,
    n_features: usize,
}

/// The candidate RGB keeps in a round.
struct RgbChoice {
    family: usize,
    /// The projected tree, already multiplied by α.
    tree: Tree,
    alpha: f64,
    /// The projected tree's output on every training row (before α).
    h: Vec<f64>,
}

impl<'a> RgbState<'a> {
    fn new(
        params: &BoosterParams,
        data: &'a BinnedDataset,
        cfg: GrowerConfig,
        cancel: Cancel,
    ) -> Result<RgbState<'a>> {
        let families = Families::new(params, data.n_features(), data.n_rows);
        let growers = (0..params.rgb_candidates)
            .map(|_| {
                let mut grower = TreeGrower::new(data, cfg)?;
                grower.set_cancel(cancel.clone());
                Ok(Mutex::new(grower))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(RgbState {
            families,
            growers,
            n_features: data.n_features(),
        })
    }

    /// Draws S families, builds their candidates in parallel, keeps the best
    /// (lowest loss + β·Ω; ties go to the earlier draw).
    #[allow(clippy::too_many_arguments)]
    fn round<T: Element>(
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
        x: &Matrix<T>,
        stream_id: u64,
    ) -> Result<RgbChoice> {
        let sigma = objective
            .smoothness()
            .ok_or_else(|| RgbmError::param("loss", "RGB needs a smooth loss"))?;
        let mut rng = stream(params.random_state, Purpose::Rgb, stream_id);
        let drawn: Vec<usize> = (0..self.growers.len())
            .map(|_| self.families.draw(&mut rng))
            .collect();
        let all_features = Candidates::all(self.n_features);
        // `scores` holds every output's block; candidates move block `class` only.
        let n = y.len();
        let block = class * n..(class + 1) * n;
        let candidates: Vec<Result<(f64, RgbChoice)>> = drawn
            .par_iter()
            .zip(&self.growers)
            .map(|(&k, grower)| {
                let mut grower = grower
                    .lock()
                    .map_err(|_| RgbmError::param("booster", "RGB candidate state poisoned"))?;
                grower.set_max_leaves(Some(self.families.nodes[k] + 1));
                let mut my_rows = rows.to_vec();
                let grown = grower.grow(
                    grads,
                    &mut my_rows,
                    all_rows,
                    NodeSelection::Tree(&all_features),
                )?;
                let mut tree = grown.tree;
                project_l2(&mut tree.leaf_value, self.families.lambdas[k]);
                let mut h = vec![0.0; n];
                if all_rows {
                    add_leaf_values(&mut h, &my_rows, &grown.leaf_ranges, &tree.leaf_value);
                } else {
                    add_tree_outputs(std::slice::from_ref(&tree), x, &mut h);
                }
                let alpha = coordinate_step(grads.gh, &h, w, sigma)?;
                let mut moved = scores.to_vec();
                moved[block.clone()]
                    .par_iter_mut()
                    .zip(&h)
                    .for_each(|(s, hi)| *s += alpha * hi);
                let score =
                    objective.mean_loss(y, &moved, w) + params.rgb_beta * self.families.omega[k];
                tree.leaf_value.iter_mut().for_each(|v| *v *= alpha);
                Ok((
                    score,
                    RgbChoice {
                        family: k,
                        tree,
                        alpha,
                        h,
                    },
                ))
            })
            .collect();
        let mut best: Option<(f64, RgbChoice)> = None;
        for c in candidates {
            let (score, choice) = c?;
            if best.as_ref().is_none_or(|(b, _)| score < *b) {
                best = Some((score, choice));
            }
        }
        best.map(|b| b.1)
            .ok_or_else(|| RgbmError::param("rgb_candidates", "must be >= 1"))
    }
}
