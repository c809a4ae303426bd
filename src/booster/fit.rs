//! The state a fit carries between rounds, and the phases of a round as
//! its methods: gradients, row subsample, selection and growth of a tree per
//! output, step, score update, log and evaluation.
use std::time::Instant;

use rand::RngExt;

use crate::alloc::{filled_vec, reserve, reserve_one, with_capacity};
use crate::cancel::Cancel;
use crate::constraints::TreeConstraints;
use crate::constraints::monotone::clip_leaves;
use crate::data::BinnedDataset;
use crate::data::matrix::Element;
use crate::error::{Result, RgbmError};
use crate::histogram::Gradients;
use crate::model::{Model, check_log_std_leaves, format_version_for};
use crate::objective::{Objective, Queries};
use crate::params::{BoosterKind, BoosterParams, Init, Loss, Mode, Step, SubsampleFor, Summation};
use crate::rng::{Purpose, RowDraws, stream};
use crate::split::SplitRule;
use crate::tree::grower::{GrownTree, MIN_BOUNDED_ROWS, sum_rows};
use crate::tree::rebound::rebound;
use crate::tree::{GrowerConfig, Tree};

use super::eval::{EvalResult, EvalSet, Evaluator, Monitor};
use super::learner::WeakLearner;
use super::quantize::Quantizer;
use super::resume::RoundRecord;
use super::rgb::RgbState;
use super::scores::{add_tree_to_rows, rows_by_leaf};
use super::shard::ShardRows;
use super::theory::{self, TreeTheory};
use super::trained::{RoundLog, Trained};
use super::training_data::Features;
use super::{grid, sglb, step};

/// What a fit is given: the options, the loss and the training data.
#[derive(Clone, Copy)]
pub(super) struct Problem<'a, T: Element> {
    pub params: &'a BoosterParams,
    pub objective: &'a Objective,
    pub x: &'a Features<'a, T>,
    pub y: &'a [f64],
    pub w: Option<&'a [f64]>,
    /// Per-row starting scores (class-major); the base score is then 0.
    pub init_score: Option<&'a [f64]>,
    /// Where these rows are among all of the data's.
    pub rows: ShardRows<'a>,
    /// `loss = lambdarank`: the query groups of the rows.
    pub queries: Option<&'a Queries>,
}

impl<T: Element> Problem<'_, T> {
    /// The gradients for a tree from per-row (g, h) of one output.
    fn gradients<'g>(&'g self, gh: &'g [[f64; 2]]) -> Gradients<'g> {
        Gradients {
            gh,
            weights: self.w,
            unit_hessian: self.objective.unit_hessian(),
            uncounted: false,
        }
    }
}

/// The state a fit carries from round to round.
pub(super) struct Fit<'a, T: Element> {
    p: Problem<'a, T>,
    /// Training rows and outputs.
    n: usize,
    k_out: usize,
    base_score: Vec<f64>,
    /// Class-major: the scores and gradients of output k are rows k·n .. (k+1)·n.
    scores: Vec<f64>,
    gh: Vec<[f64; 2]>,
    /// `summation="exact"`: the gradients' grid.
    grid: Option<grid::GradientGrid>,
    /// The round's rows (all, or a subsample), reordered by every tree grown.
    rows: Vec<u32>,
    all_rows: bool,
    /// Several targets: the round's rows in their drawn order.
    round_rows: Vec<u32>,
    /// `subsample_for = split`: every row, grouped by the current tree's leaves.
    leaf_rows: Vec<u32>,
    learner: WeakLearner<'a>,
    rule: SplitRule,
    constraints: &'a TreeConstraints,
    /// Line search only: the round's trees' raw output u on every row.
    dir: Vec<f64>,
    langevin: Option<sglb::Langevin>,
    /// `use_quantized_grad`: each tree's quantized gradients.
    quantizer: Option<Quantizer>,
    /// Model shrinkage: F ← b + q·(F − b) + tree each round.
    q: f64,
    /// The round's learning rate: `params.learning_rate` until a callback
    /// sets another (`set_learning_rate`).
    learning_rate: f64,
    /// |base score| + Σ max |leaf| so far (see `check_finite_round`).
    bound: f64,
    evaluator: Evaluator<'a, 'a, T>,
    trees: Vec<Tree>,
    log: Vec<RoundLog>,
}

impl<'a, T: Element> Fit<'a, T> {
    /// The state before the first round, and the grower configuration.
    pub(super) fn new(
        p: Problem<'a, T>,
        data: &'a BinnedDataset,
        weight_unit: f64,
        eval_sets: &'a [EvalSet<'a, T>],
        constraints: &'a TreeConstraints,
        cancel: &Cancel,
    ) -> Result<(Self, GrowerConfig)> {
        let (params, objective) = (p.params, p.objective);
        let n = p.x.n_rows();
        let k_out = objective.n_outputs();
        let exact = params.summation() == Summation::Exact;
        let base_score = match (params.init, p.init_score) {
            // Softmax (class masses) and the quantile losses (weighted
            // quantiles) start from sums that are exact on the weights' grid.
            (Init::Optimal, None)
                if exact && objective.n_outputs() == 1 && !objective.renews_leaves() =>
            {
                vec![grid::exact_constant(objective, p.y, p.w, &p.rows)?]
            }
            // A shard: class masses summed over the shards (exact on the
            // weights' grid); other losses are refused (`shard::check_params`).
            (Init::Optimal, None) if !p.rows.is_local() => match objective {
                Objective::Softmax(s) => {
                    let mut mass = s.class_masses(p.y, p.w);
                    p.rows.sum(&mut mass)?;
                    s.constants_from_masses(&mass)
                }
                _ => return Err(RgbmError::param("loss", "is not supported on shards")),
            },
            (Init::Optimal, None) => objective.initial_scores(p.y, p.w)?,
            (Init::Zero, _) | (_, Some(_)) => vec![0.0; k_out],
        };
        if let Some(b) = base_score.iter().find(|b| !b.is_finite()) {
            return Err(RgbmError::NonFinite(format!(
                "the initial score is {b}: the targets are too large for the loss; rescale y"
            )));
        }
        let bound = base_score.iter().fold(0.0f64, |m, b| m.max(b.abs()));
        let evaluator = Evaluator::new(eval_sets, params, objective, p.x.n_cols(), &base_score)?;
        let len = k_out
            .checked_mul(n)
            .ok_or_else(|| RgbmError::Shape("n_rows * n_outputs overflows".into()))?;
        let mut scores: Vec<f64> = filled_vec(len, 0.0, "the training scores")?;
        scores
            .chunks_mut(n)
            .zip(&base_score)
            .for_each(|(block, &b)| block.fill(b));
        if let Some(init) = p.init_score {
            scores.copy_from_slice(init);
        }
        let gh = filled_vec(len, [0.0f64; 2], "the gradients")?;
        let rows: Vec<u32> = with_capacity(n, "the row index")?;
        let cfg = GrowerConfig {
            max_depth: params.max_depth,
            max_leaves: params.max_leaves,
            rule: SplitRule::from_params(params).in_weight_unit(weight_unit),
            // Category sets need every bin's rows: counting them in the
            // histograms beats recounting each categorical feature per node.
            exact_counts: !params.categorical().is_empty(),
            min_bounded_rows: MIN_BOUNDED_ROWS,
        };
        let learner = WeakLearner::new(params, data, cfg, constraints, cancel, p.rows.reduce)?;
        let dir = if params.step == Step::LineSearch {
            filled_vec(len, 0.0, "the line-search direction")?
        } else {
            Vec::new()
        };
        let langevin = sglb::Langevin::new(params, n, weight_unit)?;
        let quantizer = Quantizer::new(params, n, objective.unit_hessian())?;
        let fit = Fit {
            p,
            n,
            k_out,
            base_score,
            scores,
            gh,
            grid: exact.then(grid::GradientGrid::default),
            rows,
            all_rows: true,
            round_rows: Vec::new(),
            leaf_rows: Vec::new(),
            learner,
            rule: cfg.rule,
            constraints,
            dir,
            langevin,
            quantizer,
            q: params.shrink_factor(),
            learning_rate: params.learning_rate,
            bound,
            evaluator,
            // Grown round by round (fallibly): n_estimators is only an upper
            // bound when early stopping ends the fit.
            trees: Vec::new(),
            log: Vec::new(),
        };
        Ok((fit, cfg))
    }

    /// The per-row gradients and hessians of the loss at the current
    /// scores; a custom loss's from the monitor, checked and weighted here.
    pub(super) fn compute_gradients(&mut self, monitor: &mut dyn Monitor) -> Result<()> {
        let p = self.p;
        if let Some(grid) = &mut self.grid
            && grid.point_gradients(p.objective, p.y, &self.scores, p.w, &mut self.gh, &p.rows)?
        {
            return Ok(());
        }
        self.point_gradients(monitor)?;
        if self.grid.is_some() {
            grid::round_gradients(&mut self.gh, p.rows.n_total, p.rows.reduce)?;
        }
        Ok(())
    }

    /// The loss's gradients and hessians at the current scores, weighted.
    fn point_gradients(&mut self, monitor: &mut dyn Monitor) -> Result<()> {
        let p = self.p;
        if let (Objective::LambdaRank(rank), Some(queries)) = (p.objective, p.queries) {
            // Unweighted: ranking refuses sample weights (`train_rows`).
            let cancel = monitor.cancel();
            return rank.gradients_cancellable(p.y, &self.scores, queries, &mut self.gh, &cancel);
        }
        let Objective::Custom(custom) = p.objective else {
            p.objective.gradients(p.y, &self.scores, p.w, &mut self.gh);
            return Ok(());
        };
        monitor.custom_gradients(&self.scores, &mut self.gh)?;
        let newton = p.params.gain == Mode::Newton || p.params.leaf == Mode::Newton;
        custom
            .check_gradients(&self.gh, newton)
            .map_err(|e| RgbmError::param("loss", e))?;
        if let Some(w) = p.w {
            for block in self.gh.chunks_mut(self.n) {
                block.iter_mut().zip(w).for_each(|([g, h], &wi)| {
                    *g *= wi;
                    *h *= wi;
                });
            }
        }
        Ok(())
    }

    /// The round's rows: all of them, or a Bernoulli(`subsample`) draw
    /// (each row's by its index in the whole data).
    pub(super) fn subsample_rows(&mut self, round: usize) -> Result<()> {
        let (params, n, ids) = (self.p.params, self.n, self.p.rows);
        self.rows.clear();
        let freq = params.subsample_freq();
        if params.subsample < 1.0 && freq > 0 {
            // Rounds between two draws reuse the draw of the round it was made in.
            let round = round - round % freq as usize;
            let draws = RowDraws::new(params.random_state, Purpose::RowSubsample, round as u64);
            self.rows.extend(
                (0..n as u32).filter(|&i| draws.keep(ids.id(i as usize), params.subsample)),
            );
            let mut kept = [self.rows.len() as f64];
            ids.sum(&mut kept)?;
            if kept[0] == 0.0 {
                // A tree needs a row: an empty draw takes one row at random
                // (as scikit-learn's max(1, subsample·n)), never all of them.
                let mut rng = stream(params.random_state, Purpose::RowSubsample, round as u64);
                let pick = rng.random_range(0..ids.n_total as u32) as u64;
                self.rows
                    .extend((0..n as u32).filter(|&i| ids.id(i as usize) == pick));
            }
        } else {
            self.rows.extend(0..n as u32);
        }
        self.all_rows = self.rows.len() == n;
        Ok(())
    }

    /// The learning rate of the rounds from now on (LightGBM's
    /// `reset_parameter` schedules). Refused where no rate scales the trees
    /// (the constant 1/σ step, RGB), and with model shrinkage, whose factor
    /// is folded into the trees once as one rate's.
    pub(super) fn set_learning_rate(&mut self, learning_rate: f64) -> Result<()> {
        let params = self.p.params;
        // The schema's bounds, as for the rate the fit started with.
        BoosterParams {
            learning_rate,
            ..params.clone()
        }
        .validate()?;
        let refusal: Option<String> = if params.booster == BoosterKind::Rgb {
            Some("booster='rgb' has no learning rate to change: its steps are the family's".into())
        } else if params.step == Step::Constant {
            Some("step='constant' steps by 1/σ, not by a learning rate".into())
        } else if params.shrink_factor() != 1.0 {
            Some("model shrinkage (shrink_rate > 0) folds one rate's factor into the trees".into())
        } else {
            None
        };
        if let Some(why) = refusal {
            return Err(RgbmError::param(
                "learning_rate",
                format!("a new learning rate during the fit: {why}"),
            ));
        }
        self.learning_rate = learning_rate;
        if let Some(langevin) = &mut self.langevin {
            langevin.set_learning_rate(params, learning_rate);
        }
        Ok(())
    }

    /// One round of RGBM (and SGLB): a tree per output on the round's
    /// gradients, scaled by the step rule and added to the scores.
    pub(super) fn boost_round(&mut self, round: usize) -> Result<RoundLog> {
        let (p, k_out) = (self.p, self.k_out);
        // Shrinkage and constant steps are known before the trees are grown.
        let lr = self.learning_rate;
        let fixed = step::fixed_step(p.params, lr, p.objective, p.y, &self.scores, p.w)?;
        self.shrink_model();
        let mut round_trees = with_capacity(k_out, "the round's trees")?;
        let mut features_searched = None;
        let mut theory = TreeTheory::default();
        // Growing a tree reorders the round's rows by leaf; each target's
        // tree starts from the round's order, so its sums are added in the
        // order of its single-target fit (same bits).
        let targets = p.objective.n_targets() > 1;
        if targets {
            self.round_rows.clear();
            reserve(&mut self.round_rows, self.rows.len(), "the round's rows")?;
            self.round_rows.extend_from_slice(&self.rows);
        }
        for class in 0..k_out {
            if targets && class > 0 {
                self.rows.clear();
                self.rows.extend_from_slice(&self.round_rows);
            }
            // Per-tree random streams: (round, class) → one index; equals the round for single-output losses.
            // A multi-target fit's targets share the round's draws, so each
            // target's trees are those of its single-target fit.
            let stream_id = if p.objective.n_targets() > 1 {
                round as u64
            } else {
                (round * k_out + class) as u64
            };
            let (grown, searched, every_row) = self.grow_tree(class, stream_id)?;
            if class == 0 {
                features_searched = searched;
                theory = self.theory_of(&grown, every_row);
            }
            let tree = self.add_tree(class, grown, every_row, fixed);
            round_trees.push(tree);
        }
        // The line search steps along all K trees at once.
        let scale = match fixed {
            Some(s) => s,
            None => {
                let (y, w, dir) = (p.y, p.w, &self.dir);
                let trees = &mut round_trees;
                step::line_search(
                    p.params,
                    lr,
                    p.objective,
                    y,
                    &mut self.scores,
                    w,
                    dir,
                    trees,
                )?
            }
        };
        self.check_finite(&round_trees, 0, round)?;
        for (class, tree) in round_trees.iter().enumerate() {
            self.evaluator.add_tree(tree, class);
        }
        let entry = RoundLog {
            features_searched,
            ..RoundLog::first_tree(&round_trees[0], scale, theory)
        };
        reserve(&mut self.trees, round_trees.len(), "the model's trees")?;
        self.trees.extend(round_trees);
        Ok(entry)
    }

    /// The papers' diagnostics of output 0's tree on the clean gradients
    /// (`theory`); none on shards, whose leaf sums are partial.
    fn theory_of(&self, grown: &GrownTree, every_row: bool) -> TreeTheory {
        if !self.p.rows.is_local() {
            return TreeTheory::default();
        }
        let grads = self.p.gradients(&self.gh[..self.n]);
        let rows = if every_row {
            &self.leaf_rows
        } else {
            &self.rows
        };
        theory::tree_theory(&grads, rows, &grown.leaf_ranges, &grown.tree.leaf_value)
    }

    /// SGLB's model shrinkage F ← b + q·(F − b), on the training and the
    /// evaluation scores.
    fn shrink_model(&mut self) {
        if self.q != 1.0 {
            sglb::shrink_scores(&mut self.scores, &self.base_score, self.q, self.n);
            self.evaluator.shrink(self.q, &self.base_score);
        }
    }

    /// Output `class`'s tree, grown on the round's rows. SGLB chooses the
    /// structure on noisy gradients and draws noisy leaf values from the
    /// clean ones; losses without a step length re-estimate the leaves.
    /// Also says whether the leaf ranges index `leaf_rows` (every row)
    /// rather than the round's rows.
    fn grow_tree(
        &mut self,
        class: usize,
        stream_id: u64,
    ) -> Result<(GrownTree, Option<usize>, bool)> {
        let (p, n) = (self.p, self.n);
        let seed = p.params.random_state;
        let gh = &self.gh[class * n..(class + 1) * n];
        let structure = match (&mut self.langevin, &mut self.quantizer) {
            (Some(langevin), _) if p.params.langevin_split_noise() => {
                langevin.structure_gradients(gh, seed, stream_id, &p.rows)?
            }
            (_, Some(quantizer)) => quantizer.quantize(gh, seed, stream_id, &p.rows)?,
            _ => gh,
        };
        let grads = p.gradients(structure);
        let (mut grown, searched) =
            self.learner
                .grow(p.params, &grads, &mut self.rows, self.all_rows, stream_id)?;
        // Leaves from every row when the subsample chose the splits only.
        // (On shards whenever rows are sampled: a shard may have drawn all
        // of its rows, and every shard must take the same path.)
        let sampled = if p.rows.is_local() {
            !self.all_rows
        } else {
            p.params.subsample < 1.0 && p.params.subsample_freq() > 0
        };
        let every_row = p.params.subsample_for() == SubsampleFor::Split && sampled;
        if every_row {
            rows_by_leaf(
                &grown.tree,
                p.x,
                &mut grown.leaf_ranges,
                &mut self.leaf_rows,
            )?;
        }
        let rows = if every_row {
            &self.leaf_rows
        } else {
            &self.rows
        };
        // The leaves from the exact gradients: of every row, or of the tree's
        // rows when the structure came from quantized ones (LightGBM's
        // `quant_train_renew_leaf`).
        if every_row || (self.quantizer.is_some() && p.params.quant_train_renew_leaf) {
            let clean = p.gradients(gh);
            let mut sums: Vec<_> = grown
                .leaf_ranges
                .iter()
                .map(|&(s, e)| sum_rows(&rows[s..e], &clean))
                .collect();
            crate::reduce::sum_stats(p.rows.reduce, &mut sums)?;
            grown.tree.leaf_value = sums.iter().map(|s| self.rule.leaf_value(s)).collect();
        }
        if let Some(langevin) = &self.langevin {
            let (clean, ranges) = (p.gradients(gh), &grown.leaf_ranges);
            grown.tree.leaf_value = langevin.leaf_values(
                &clean,
                rows,
                ranges,
                &self.rule,
                seed,
                stream_id,
                p.rows.reduce,
            )?;
        }
        // Absolute error and quantile: leaves from the residuals' quantiles.
        let (objective, y) = p.objective.output(p.y, class);
        objective.renew_leaves(
            y,
            &self.scores[class * n..(class + 1) * n],
            p.w,
            rows,
            &grown.leaf_ranges,
            &mut grown.tree.leaf_value,
        )?;
        self.keep_monotone(&mut grown);
        Ok((grown, searched, every_row))
    }

    /// Monotone constraints on leaf values set after growth: SGLB's noisy
    /// values are clipped to the grower's intervals; residual quantiles (in
    /// other units than the gradient sums the intervals came from) get
    /// intervals of their own.
    fn keep_monotone(&self, grown: &mut GrownTree) {
        if !self.constraints.has_monotone() {
            return;
        }
        if self.p.objective.renews_leaves() {
            let rows: Vec<f64> = grown
                .leaf_ranges
                .iter()
                .map(|&(a, b)| (b - a) as f64)
                .collect();
            rebound(&mut grown.tree, &self.constraints.monotone, &rows);
        } else {
            clip_leaves(&mut grown.tree.leaf_value, &grown.leaf_bounds);
        }
    }

    /// Step and score update for output `class`'s tree: a fixed step scales
    /// it and adds it to the scores; for the line search, its raw output
    /// becomes the output's block of the direction u.
    fn add_tree(
        &mut self,
        class: usize,
        grown: GrownTree,
        every_row: bool,
        fixed: Option<f64>,
    ) -> Tree {
        let mut tree = grown.tree;
        let block = class * self.n..(class + 1) * self.n;
        let out = match fixed {
            Some(scale) => {
                step::scale_leaves(&mut tree, scale);
                &mut self.scores[block]
            }
            None => {
                let dir = &mut self.dir[block];
                dir.iter_mut().for_each(|d| *d = 0.0);
                dir
            }
        };
        let (rows, all_rows) = if every_row {
            (&self.leaf_rows, true)
        } else {
            (&self.rows, self.all_rows)
        };
        let ranges = &grown.leaf_ranges;
        add_tree_to_rows(
            out,
            &tree,
            &tree.leaf_value,
            rows,
            ranges,
            all_rows,
            self.p.x,
        );
        tree
    }

    /// One RGB round: a coordinate step per output. RGB is coordinate
    /// descent, so each step sees the gradients after the previous one (for
    /// a single output this is the round's gradient). The exact step
    /// minimises the σ-smooth upper bound along the candidate, so it never
    /// raises the loss; the Lipschitz step 1/(λ_k·σ) is a descent step only
    /// while its curvature bound holds, which is sure for λ_k ≤ 1.
    pub(super) fn rgb_round(
        &mut self,
        rgb: &RgbState,
        round: usize,
        monitor: &mut dyn Monitor,
    ) -> Result<RoundLog> {
        let (p, n, k_out) = (self.p, self.n, self.k_out);
        let mut families = with_capacity(k_out, "the round's families")?;
        let mut entry = None;
        let mut complexity = 0.0;
        for class in 0..k_out {
            if class > 0 {
                self.compute_gradients(monitor)?;
            }
            let block = class * n..(class + 1) * n;
            let grads = p.gradients(&self.gh[block.clone()]);
            let stream_id = (round * k_out + class) as u64;
            let (scores, rows) = (&self.scores, &self.rows);
            let chosen = rgb.choose(
                p.params,
                p.objective,
                p.y,
                p.w,
                scores,
                class,
                &grads,
                rows,
                self.all_rows,
                p.x,
                stream_id,
            )?;
            self.check_finite(std::slice::from_ref(&chosen.tree), class, round)?;
            chosen.add_to(&mut self.scores[block]);
            self.evaluator.add_tree(&chosen.tree, class);
            families.push(rgb.family(&chosen));
            complexity += chosen.alpha.abs() * rgb.rademacher(&chosen);
            entry.get_or_insert_with(|| RoundLog {
                rgb_omega: Some(rgb.omega(&chosen)),
                ..RoundLog::first_tree(&chosen.tree, chosen.alpha, chosen.theory)
            });
            reserve_one(&mut self.trees, "the model's trees")?;
            self.trees.push(chosen.tree);
        }
        Ok(RoundLog {
            features_searched: Some(self.learner.n_features),
            rgb_nodes: families.first().map(|f| f.0),
            rgb_lambda: families.first().map(|f| f.1),
            rgb_families: families,
            rgb_complexity: Some(complexity),
            ..entry.unwrap_or_default()
        })
    }

    /// Round `round` again from its record instead of growing it: the
    /// model shrinkage, each tree added to every row's score (routed by
    /// its raw values, one addition per row as `add_tree` makes) and to the
    /// evaluation sets' scores, the log entry; then the evaluation results.
    pub(super) fn replay_round(
        &mut self,
        round: usize,
        record: &RoundRecord,
        monitor: &mut dyn Monitor,
    ) -> Result<Vec<EvalResult>> {
        self.shrink_model();
        self.check_finite(&record.trees, 0, round)?;
        for (class, tree) in record.trees.iter().enumerate() {
            let block = class * self.n..(class + 1) * self.n;
            let out = &mut self.scores[block];
            add_tree_to_rows(out, tree, &tree.leaf_value, &[], &[], false, self.p.x);
            self.evaluator.add_tree(tree, class);
        }
        reserve(&mut self.trees, record.trees.len(), "the model's trees")?;
        self.trees.extend_from_slice(&record.trees);
        reserve_one(&mut self.log, "the training log")?;
        self.log.push(record.log.clone());
        if self.evaluator.is_empty() {
            Ok(Vec::new())
        } else {
            self.evaluator.record(self.p.objective, monitor)
        }
    }

    /// The last round's trees (one per output) and log entry.
    pub(super) fn last_round(&self) -> (&[Tree], Option<&RoundLog>) {
        let first = self.trees.len().saturating_sub(self.k_out);
        (&self.trees[first..], self.log.last())
    }

    /// [`check_finite_round`] on trees of outputs `first_output`.. of `round`.
    fn check_finite(&mut self, trees: &[Tree], first_output: usize, round: usize) -> Result<()> {
        check_finite_round(trees, first_output, &mut self.bound, round, self.p.params)
    }

    /// Logs the finished round and evaluates the evaluation sets.
    pub(super) fn log_and_evaluate(
        &mut self,
        entry: RoundLog,
        started: Instant,
        monitor: &mut dyn Monitor,
    ) -> Result<Vec<EvalResult>> {
        let p = self.p;
        let train_loss = p
            .params
            .record_train_loss
            .then(|| p.objective.mean_loss(p.y, &self.scores, p.w));
        reserve_one(&mut self.log, "the training log")?;
        self.log.push(RoundLog {
            seconds: started.elapsed().as_secs_f64(),
            train_loss,
            ..entry
        });
        if self.evaluator.is_empty() {
            Ok(Vec::new())
        } else {
            self.evaluator.record(p.objective, monitor)
        }
    }

    /// The result early stopping watches (see [`Evaluator::watched`]).
    pub(super) fn watched<'r>(&self, results: &'r [EvalResult]) -> Option<&'r EvalResult> {
        self.evaluator.watched(results)
    }

    /// The model: with early stopping, the trees up to the best round; with
    /// model shrinkage, folded into the trees.
    pub(super) fn into_trained(mut self, best_iteration: Option<usize>) -> Trained {
        if let Some(best) = best_iteration {
            self.trees.truncate((best + 1) * self.k_out);
        }
        if self.q != 1.0 {
            sglb::fold_shrinkage(&mut self.trees, self.k_out, self.q);
        }
        let mut params = self.p.params.clone();
        if params.booster == BoosterKind::Rgb {
            // A model says which rule made it (files without one predate the choice).
            params.rgb_step = Some(params.rgb_step());
            params.rgb_candidate = Some(params.rgb_candidate());
            params.rgb_penalty = Some(params.rgb_penalty());
        }
        let model = Model {
            format_version: format_version_for(&self.trees),
            params,
            n_features: self.p.x.n_cols(),
            n_outputs: self.k_out,
            base_score: self.base_score,
            trees: self.trees,
        };
        Trained {
            model,
            log: self.log,
            evals: self.evaluator.histories,
            best_iteration,
        }
    }
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
    let advice = if params.booster == BoosterKind::Rgb {
        // RGB's Lipschitz step moves λ_k·G/(m·σ): radii above 1 can overshoot.
        "use smaller rgb_lambdas (at most 1) or rgb_step='exact'".to_string()
    } else {
        format!(
            "use a smaller learning_rate (now {:?}){}",
            params.learning_rate,
            if params.langevin {
                " or a larger temperature"
            } else {
                ""
            }
        )
    };
    Err(RgbmError::NonFinite(format!(
        "the fit diverged in round {round}: a tree's leaf values are not finite or the scores overflow; {advice}"
    )))
}
