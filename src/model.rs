//! A trained model: base score plus trees with raw thresholds, and its
//! versioned JSON form. Loading validates everything prediction relies on.
use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::alloc::{filled_vec, with_capacity, zeroed_vec};
use crate::cancel::Cancel;
use crate::data::matrix::{AsMatrix, Element, Matrix};
use crate::error::{Result, RgbmError};
use crate::explain::contributions;
use crate::objective::{Gaussian, Objective};
use crate::params::{BoosterKind, BoosterParams, Loss, RgbCandidate, RgbStep};
use crate::tree::Tree;
use crate::tree::predict::{add_tree_outputs_multi, leaf_indices};
use crate::tree::tree::MAX_ABS_VALUE;

/// Version 2 added multi-output models (`n_outputs`, one base score per
/// output); version 1 files (a single number as base score) still load.
/// Version 3 added category-set splits; only models that have them are
/// written as version 3, so a reader that would ignore the sets refuses them.
pub const FORMAT_VERSION: u32 = 3;

/// The version a model with these trees is written as.
pub fn format_version_for(trees: &[Tree]) -> u32 {
    if trees.iter().any(Tree::has_categories) {
        3
    } else {
        2
    }
}
/// Caps that keep a hostile file from asking for absurd allocations.
const MAX_TREES: usize = 10_000_000;
const MAX_FEATURES: usize = 100_000_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub format_version: u32,
    pub params: BoosterParams,
    pub n_features: usize,
    /// Scores per row: K classes for softmax, else 1.
    #[serde(default = "one")]
    pub n_outputs: usize,
    /// Starting score of each output.
    #[serde(deserialize_with = "number_or_list")]
    pub base_score: Vec<f64>,
    /// Leaf values already include the learning rate. Round r stores one
    /// tree per output: trees r·K .. r·K + K − 1, tree r·K + k for output k.
    #[serde(deserialize_with = "crate::json::fallible_vec")]
    pub trees: Vec<Tree>,
}

fn one() -> usize {
    1
}

/// Format 1 stored the base score as one number.
fn number_or_list<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<f64>, D::Error> {
    struct NumberOrList;
    impl<'de> Visitor<'de> for NumberOrList {
        type Value = Vec<f64>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a number or a list of numbers")
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<Vec<f64>, E> {
            Ok(vec![v])
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<Vec<f64>, E> {
            Ok(vec![v as f64])
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Vec<f64>, E> {
            Ok(vec![v as f64])
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<Vec<f64>, A::Error> {
            crate::json::fallible_vec(serde::de::value::SeqAccessDeserializer::new(seq))
        }
    }
    d.deserialize_any(NumberOrList)
}

/// "field: problem" for a failed deserialisation ("problem" alone at the top level).
pub(crate) fn describe(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    if path == "." {
        e.inner().to_string()
    } else {
        format!("{path}: {}", e.inner())
    }
}

impl Model {
    pub fn objective(&self) -> Objective {
        Objective::from_params(&self.params)
    }

    pub fn n_trees(&self) -> usize {
        self.trees.len()
    }

    /// Boosting rounds (trees per output).
    pub fn n_rounds(&self) -> usize {
        self.trees.len() / self.n_outputs
    }

    /// Size of a row-major n_rows × n_outputs score buffer.
    fn score_len(&self, n_rows: usize) -> Result<usize> {
        n_rows
            .checked_mul(self.n_outputs)
            .ok_or_else(|| RgbmError::Shape("n_rows * n_outputs overflows".into()))
    }

    /// `n_rows` copies of the base scores, row-major (n_rows × n_outputs).
    fn base_rows(&self, n_rows: usize) -> Result<Vec<f64>> {
        let mut out = with_capacity(self.score_len(n_rows)?, "the predictions")?;
        for _ in 0..n_rows {
            out.extend_from_slice(&self.base_score);
        }
        Ok(out)
    }

    fn check_features<T: Element>(&self, x: &Matrix<T>) -> Result<()> {
        if x.n_cols() != self.n_features {
            return Err(RgbmError::Shape(format!(
                "X has {} features, but the model was trained with {}",
                x.n_cols(),
                self.n_features
            )));
        }
        x.check_no_infinity()
    }

    /// Raw scores using the first `n_rounds` rounds (all when None),
    /// row-major (n_rows × n_outputs).
    pub fn predict_raw<T: Element>(
        &self,
        x: &impl AsMatrix<T>,
        n_rounds: Option<usize>,
    ) -> Result<Vec<f64>> {
        self.predict_raw_cancellable(x, n_rounds, &Cancel::never())
    }

    /// `predict_raw` that stops with `Interrupted` once `cancel` is set.
    pub fn predict_raw_cancellable<T: Element>(
        &self,
        x: &impl AsMatrix<T>,
        n_rounds: Option<usize>,
        cancel: &Cancel,
    ) -> Result<Vec<f64>> {
        let x = &x.as_matrix();
        self.check_features(x)?;
        let k = n_rounds.unwrap_or(self.n_rounds()).min(self.n_rounds()) * self.n_outputs;
        let mut out = self.base_rows(x.n_rows())?;
        add_tree_outputs_multi(&self.trees[..k], self.n_outputs, 0, x, &mut out, cancel)?;
        Ok(out)
    }

    /// Contributions of trees start..end only (no base score), row-major
    /// (n_rows × n_outputs), for staged prediction and introspection.
    pub fn predict_trees<T: Element>(
        &self,
        x: &impl AsMatrix<T>,
        start: usize,
        end: usize,
    ) -> Result<Vec<f64>> {
        self.predict_trees_cancellable(x, start, end, &Cancel::never())
    }

    /// `predict_trees` that stops with `Interrupted` once `cancel` is set.
    pub fn predict_trees_cancellable<T: Element>(
        &self,
        x: &impl AsMatrix<T>,
        start: usize,
        end: usize,
        cancel: &Cancel,
    ) -> Result<Vec<f64>> {
        let x = &x.as_matrix();
        self.check_features(x)?;
        if start > end || end > self.trees.len() {
            return Err(RgbmError::param(
                "tree range",
                format!("{start}..{end} is not within 0..{}", self.trees.len()),
            ));
        }
        let mut out = filled_vec(self.score_len(x.n_rows())?, 0.0, "the predictions")?;
        add_tree_outputs_multi(
            &self.trees[start..end],
            self.n_outputs,
            start,
            x,
            &mut out,
            cancel,
        )?;
        Ok(out)
    }

    /// The leaf index each row reaches in every tree, row-major (n_rows ×
    /// n_trees; tree r·K + k is round r's tree of output k).
    pub fn predict_leaves_cancellable<T: Element>(
        &self,
        x: &impl AsMatrix<T>,
        cancel: &Cancel,
    ) -> Result<Vec<u32>> {
        let x = &x.as_matrix();
        self.check_features(x)?;
        let len = x
            .n_rows()
            .checked_mul(self.trees.len())
            .ok_or_else(|| RgbmError::Shape("n_rows * n_trees overflows".into()))?;
        // Not written here: the blocks fill it, each after a cancel poll.
        let mut out = zeroed_vec(len, "the leaf indices")?;
        leaf_indices(&self.trees, x, &mut out, cancel)?;
        Ok(out)
    }

    /// SHAP values of the raw scores (see `explain::contributions`): row-major
    /// n_rows × n_outputs·(n_features + 1), each output's feature
    /// contributions followed by its expected raw score.
    pub fn predict_contributions_cancellable<T: Element>(
        &self,
        x: &impl AsMatrix<T>,
        cancel: &Cancel,
    ) -> Result<Vec<f64>> {
        let x = &x.as_matrix();
        self.check_features(x)?;
        contributions(&self.trees, &self.base_score, x, cancel)
    }

    /// Virtual ensemble of an SGLB chain (as CatBoost's
    /// `virtual_ensembles_predict`): member k is the model truncated after
    /// T − (K−1−k)·⌊T/(2K)⌋ trees, rescaled to undo the shrinkage the cut-off
    /// trees applied, so it equals the model as it was at that round. Returns
    /// the K members' raw scores one after another (each row-major n_rows ×
    /// n_outputs); the last member is the full model. Truncation happens at
    /// round boundaries.
    pub fn virtual_ensemble<T: Element>(
        &self,
        x: &impl AsMatrix<T>,
        n_members: usize,
        cancel: &Cancel,
    ) -> Result<Vec<f64>> {
        let x = &x.as_matrix();
        self.check_features(x)?;
        let t = self.n_rounds();
        let k_out = self.n_outputs;
        if n_members < 2 {
            return Err(RgbmError::param(
                "n_members",
                format!("must be >= 2, got {n_members}"),
            ));
        }
        if n_members > t / 2 {
            return Err(RgbmError::param(
                "n_members",
                format!(
                    "{n_members} members need 2 rounds each, the model has {t} rounds (at most {} members)",
                    t / 2
                ),
            ));
        }
        let period = t / (2 * n_members);
        let ends: Vec<usize> = (0..n_members)
            .map(|k| t - (n_members - 1 - k) * period)
            .collect();
        let len = self.score_len(x.n_rows())?;
        let total = len
            .checked_mul(n_members)
            .ok_or_else(|| RgbmError::Shape("n_members * n_rows * n_outputs overflows".into()))?;
        let mut members = with_capacity(total, "the virtual ensemble")?;
        // Sums grow member by member: add the trees between consecutive truncations.
        let mut acc = filled_vec(len, 0.0, "the virtual ensemble sums")?;
        let mut start = 0;
        for &end in &ends {
            add_tree_outputs_multi(
                &self.trees[start * k_out..end * k_out],
                k_out,
                start * k_out,
                x,
                &mut acc,
                cancel,
            )?;
            start = end;
            let undo = self.shrinkage_undo(t - end).map_err(|e| match e {
                RgbmError::InvalidParameter { reason, .. } => {
                    RgbmError::param("n_members", format!("{reason}; use fewer members"))
                }
                other => other,
            })?;
            members.extend(
                acc.iter()
                    .enumerate()
                    .map(|(j, a)| self.base_score[j % k_out] + undo * a),
            );
        }
        Ok(members)
    }

    /// The factor q^-dropped that undoes the shrinkage `dropped` later rounds
    /// applied to the stored trees (1 without shrinkage). An error when it
    /// exceeds `MAX_ABS_VALUE`: those trees were scaled towards the bottom
    /// of the float range, and the model as it was then is lost.
    pub fn shrinkage_undo(&self, dropped: usize) -> Result<f64> {
        let q = self.params.shrink_factor();
        if q == 1.0 || dropped == 0 {
            return Ok(1.0);
        }
        let undo = i32::try_from(dropped).map_or(f64::INFINITY, |d| q.powi(-d));
        if undo.is_finite() && undo <= MAX_ABS_VALUE {
            return Ok(undo);
        }
        Err(RgbmError::param(
            "n_rounds",
            format!(
                "undoing the shrinkage of {dropped} rounds overflows (q = {q}): the trees \
                 before them were scaled below 1/{MAX_ABS_VALUE:e}, so the model as it was then \
                 cannot be reproduced"
            ),
        ))
    }

    /// This model followed by `more`, a model trained from this one's raw
    /// scores (`TrainingData::with_init_score`): the earlier trees and base score, then the new
    /// trees; the parameters are the continuation's with the total rounds.
    pub fn continued(&self, more: &Model) -> Result<Model> {
        let refuse = |why: String| Err(RgbmError::param("init_model", why));
        if more.n_features != self.n_features || more.n_outputs != self.n_outputs {
            return refuse(format!(
                "the model has {} features and {} outputs, the continuation {} and {}",
                self.n_features, self.n_outputs, more.n_features, more.n_outputs
            ));
        }
        if more.params.loss != self.params.loss {
            return refuse(format!(
                "the model was trained with loss {:?}, the continuation with {:?}",
                self.params.loss, more.params.loss
            ));
        }
        if self.params.shrink_factor() != 1.0 || more.params.shrink_factor() != 1.0 {
            // Each round scales all earlier trees and staged predictions
            // undo that per round, which one factor per model cannot express
            // for a model grown in two fits.
            return refuse(
                "continued training with model shrinkage (shrink_rate > 0, or langevin=True) is not supported".to_string(),
            );
        }
        if more.base_score.iter().any(|&b| b != 0.0) {
            return refuse(
                "the continuation must start from the model's scores (base score 0)".to_string(),
            );
        }
        let mut trees = self.trees.clone();
        trees.extend(more.trees.iter().cloned());
        let params = BoosterParams {
            n_estimators: self.params.n_estimators + more.params.n_estimators,
            ..more.params.clone()
        };
        let model = Model {
            trees,
            params,
            base_score: self.base_score.clone(),
            ..self.clone()
        };
        model.validate()?;
        Ok(model)
    }

    /// The model as it was after its first `n_rounds` rounds: later trees
    /// are dropped and the shrinkage they applied to the kept trees (SGLB's
    /// q = 1 − γν per round) is undone. Used to keep the best round when a
    /// user callback stops training.
    pub fn truncated(&self, n_rounds: usize) -> Result<Model> {
        let total = self.n_rounds();
        if n_rounds == 0 || n_rounds > total {
            return Err(RgbmError::param(
                "n_rounds",
                format!("must be in [1, {total}], got {n_rounds}"),
            ));
        }
        let undo = self.shrinkage_undo(total - n_rounds)?;
        let mut trees = self.trees[..n_rounds * self.n_outputs].to_vec();
        if undo != 1.0 {
            trees
                .iter_mut()
                .for_each(|t| t.leaf_value.iter_mut().for_each(|v| *v *= undo));
        }
        let params = BoosterParams {
            n_estimators: n_rounds,
            ..self.params.clone()
        };
        let cut = Model {
            trees,
            params,
            ..self.clone()
        };
        // Undoing strong shrinkage over many rounds can overflow: refuse
        // rather than return a model with infinite leaves.
        cut.validate().map_err(|e| {
            RgbmError::param(
                "n_rounds",
                format!("the model truncated to {n_rounds} rounds is not usable: {e}"),
            )
        })?;
        Ok(cut)
    }

    /// The model's JSON text; `OutOfMemory` if it does not fit.
    pub fn to_json(&self) -> Result<String> {
        self.to_json_cancellable(&Cancel::never())
    }

    /// `to_json` that stops with `Interrupted` once `cancel` is set.
    pub fn to_json_cancellable(&self, cancel: &Cancel) -> Result<String> {
        crate::json::to_string(self, cancel)
    }

    /// Parses and validates a model; never trusts the file.
    pub fn from_json(text: &str) -> Result<Model> {
        Model::from_json_cancellable(text, &Cancel::never())
    }

    /// `from_json` that stops with `Interrupted` once `cancel` is set
    /// (polled per list element read, and per tree checked).
    pub fn from_json_cancellable(text: &str, cancel: &Cancel) -> Result<Model> {
        // The error names the field it happened in (e.g. `trees[3].feature[0]`).
        let mut de = serde_json::Deserializer::from_str(text);
        let mut model: Model = crate::json::reading(
            cancel,
            || serde_path_to_error::deserialize(&mut de),
            describe,
        )?;
        de.end()
            .map_err(|e| RgbmError::ModelFormat(e.to_string()))?;
        if model.params.booster == BoosterKind::Rgb {
            // RGB files without a step rule predate the choice: the exact step made them;
            // files without a candidate rule grew projected Newton trees.
            model.params.rgb_step.get_or_insert(RgbStep::Exact);
            model
                .params
                .rgb_candidate
                .get_or_insert(RgbCandidate::Projected);
        }
        model.validate_cancellable(cancel)?;
        Ok(model)
    }

    pub fn validate(&self) -> Result<()> {
        self.validate_cancellable(&Cancel::never())
    }

    /// `validate` that stops with `Interrupted` once `cancel` is set.
    pub fn validate_cancellable(&self, cancel: &Cancel) -> Result<()> {
        if !(1..=FORMAT_VERSION).contains(&self.format_version) {
            return Err(RgbmError::ModelFormat(format!(
                "format version {} is not supported (this build reads {FORMAT_VERSION})",
                self.format_version
            )));
        }
        self.params.validate()?;
        if self.n_features == 0 || self.n_features > MAX_FEATURES {
            return Err(RgbmError::ModelFormat(format!(
                "n_features = {} is out of range",
                self.n_features
            )));
        }
        let expected = self.objective().n_outputs();
        if self.n_outputs != expected {
            return Err(RgbmError::ModelFormat(format!(
                "n_outputs = {} but the loss has {expected} outputs",
                self.n_outputs
            )));
        }
        if self.base_score.len() != self.n_outputs
            || !self.base_score.iter().all(|v| v.abs() <= MAX_ABS_VALUE)
        {
            return Err(RgbmError::ModelFormat(format!(
                "base_score needs {} finite numbers within ±{MAX_ABS_VALUE:e}",
                self.n_outputs
            )));
        }
        if !self.trees.len().is_multiple_of(self.n_outputs) {
            return Err(RgbmError::ModelFormat(format!(
                "{} trees are not whole rounds of {} outputs",
                self.trees.len(),
                self.n_outputs
            )));
        }
        if self.trees.len() > MAX_TREES {
            return Err(RgbmError::ModelFormat(format!(
                "{} trees exceed the cap of {MAX_TREES}",
                self.trees.len()
            )));
        }
        for (i, t) in self.trees.iter().enumerate() {
            cancel.check()?;
            t.validate(self.n_features).map_err(|e| match e {
                RgbmError::ModelFormat(msg) => RgbmError::ModelFormat(format!("tree {i}: {msg}")),
                other => other,
            })?;
        }
        // The constraints a fit would have refused for this width.
        crate::constraints::TreeConstraints::new(&self.params, self.n_features)
            .map_err(|e| RgbmError::ModelFormat(e.to_string()))?;
        let categorical = self.params.categorical();
        if let Some(&j) = categorical.iter().find(|&&j| j >= self.n_features) {
            return Err(RgbmError::ModelFormat(format!(
                "categorical feature {j} is beyond the model's {} features",
                self.n_features
            )));
        }
        for (i, t) in self.trees.iter().enumerate() {
            let Some(node) = (0..t.n_internal()).find(|&k| t.category_set(k).is_some()) else {
                continue;
            };
            if self.format_version < 3 {
                return Err(RgbmError::ModelFormat(format!(
                    "tree {i} has category sets, which format version {} does not have",
                    self.format_version
                )));
            }
            if let Some(k) = (node..t.n_internal()).find(|&k| {
                t.category_set(k).is_some() && !categorical.contains(&(t.feature[k] as usize))
            }) {
                return Err(RgbmError::ModelFormat(format!(
                    "tree {i}: node {k} splits feature {} by categories, but it is not \
                     among categorical_features",
                    t.feature[k]
                )));
            }
        }
        if self.params.loss == Loss::Gaussian {
            check_log_std(self.base_score[1], "base_score[1]").map_err(RgbmError::ModelFormat)?;
            for (i, t) in self.trees.iter().enumerate().skip(1).step_by(2) {
                check_log_std_leaves(t)
                    .map_err(|e| RgbmError::ModelFormat(format!("tree {i}: {e}")))?;
            }
        }
        Ok(())
    }
}

impl Model {
    /// Checks a model file's fields that describe the model's features
    /// against the model itself: `names` (its `feature_names_in`) must give
    /// each feature one name of its own, and `category_counts` (the length
    /// of each feature's `categories` list, None for no list) lists
    /// categories only for features the model splits as categorical, with a
    /// category for every code its trees split on (code c is the c-th).
    pub fn check_feature_fields(
        &self,
        names: Option<&[String]>,
        category_counts: Option<&[Option<usize>]>,
    ) -> Result<()> {
        let bad = |msg: String| Err(RgbmError::ModelFormat(msg));
        if let Some(names) = names {
            if names.len() != self.n_features {
                return bad(format!(
                    "{} feature names for {} features",
                    names.len(),
                    self.n_features
                ));
            }
            let mut seen = std::collections::HashMap::new();
            seen.try_reserve(names.len())
                .map_err(|_| RgbmError::OutOfMemory("cannot allocate the feature names".into()))?;
            for (j, name) in names.iter().enumerate() {
                if let Some(first) = seen.insert(name.as_str(), j) {
                    return bad(format!(
                        "feature_names_in repeats the name {name:?} (features {first} and {j})"
                    ));
                }
            }
        }
        let Some(counts) = category_counts else {
            return Ok(());
        };
        if counts.len() != self.n_features {
            return bad(format!(
                "categories must be a list of {} lists or nulls",
                self.n_features
            ));
        }
        let categorical = self.params.categorical();
        if let Some(j) =
            (0..counts.len()).find(|&j| counts[j].is_some() && !categorical.contains(&j))
        {
            return bad(format!(
                "categories[{j}] lists categories for feature {j}, which the model does not split as \
                 categorical (its categorical_features are {categorical:?})"
            ));
        }
        for (i, t) in self.trees.iter().enumerate() {
            for k in 0..t.n_internal() {
                let (Some(set), Some(&Some(n))) =
                    (t.category_set(k), counts.get(t.feature[k] as usize))
                else {
                    continue;
                };
                // The set's last word is not zero (Tree::validate): its top bit is the largest code.
                let Some(&last) = set.last() else { continue };
                let top = (set.len() - 1) * 32 + (31 - last.leading_zeros() as usize);
                if top >= n {
                    return bad(format!(
                        "categories[{f}] has {n} categories, but tree {i} (node {k}) splits feature \
                         {f} on category code {top}: a list of at least {} is needed",
                        top + 1,
                        f = t.feature[k]
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A log σ within ±`Gaussian::MAX_ABS_LOG_STD`, or a message naming `what`.
fn check_log_std(s: f64, what: &str) -> std::result::Result<(), String> {
    if s.abs() <= Gaussian::MAX_ABS_LOG_STD {
        return Ok(());
    }
    Err(format!(
        "{what} = {s:?} is a log standard deviation beyond ±{}",
        Gaussian::MAX_ABS_LOG_STD
    ))
}

/// Every leaf of a gaussian model's log-σ tree within ±`Gaussian::MAX_ABS_LOG_STD`.
pub(crate) fn check_log_std_leaves(tree: &Tree) -> std::result::Result<(), String> {
    tree.leaf_value
        .iter()
        .enumerate()
        .try_for_each(|(l, &v)| check_log_std(v, &format!("leaf {l}")))
}

/// What a feature importance counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportanceKind {
    /// Total split gain.
    Gain,
    /// Number of splits.
    Split,
}

impl Model {
    /// Per-feature importance summed over all trees, normalised to sum to 1
    /// (all zeros when no tree splits or every gain is 0).
    pub fn feature_importances(&self, kind: ImportanceKind) -> Vec<f64> {
        // Gains are summed relative to the largest, so totals of gains near
        // f64::MAX cannot overflow.
        let largest = self
            .trees
            .iter()
            .flat_map(|t| t.gain.iter().copied())
            .fold(0.0f64, f64::max);
        let mut imp = vec![0.0; self.n_features];
        for t in &self.trees {
            for (i, &f) in t.feature.iter().enumerate() {
                imp[f as usize] += match kind {
                    ImportanceKind::Gain if largest > 0.0 => t.gain[i] / largest,
                    ImportanceKind::Gain => 0.0,
                    ImportanceKind::Split => 1.0,
                };
            }
        }
        let total: f64 = imp.iter().sum();
        if total > 0.0 {
            imp.iter_mut().for_each(|v| *v /= total);
        }
        imp
    }
}
