//! A trained model: base score plus trees with raw thresholds, and its
//! versioned JSON form. Loading validates everything prediction relies on.
use serde::{Deserialize, Serialize};

use crate::data::matrix::{DenseMatrix, Element};
use crate::error::{Result, RgbmError};
use crate::objective::Objective;
use crate::params::BoosterParams;
use crate::tree::predict::add_tree_outputs;
use crate::tree::Tree;

pub const FORMAT_VERSION: u32 = 1;
/// Caps that keep a hostile file from asking for absurd allocations.
const MAX_TREES: usize = 10_000_000;
const MAX_FEATURES: usize = 100_000_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub format_version: u32,
    pub params: BoosterParams,
    pub n_features: usize,
    pub base_score: f64,
    /// Leaf values already include the learning rate.
    pub trees: Vec<Tree>,
}

impl Model {
    pub fn objective(&self) -> Objective {
        Objective::from_params(&self.params)
    }

    pub fn n_trees(&self) -> usize {
        self.trees.len()
    }

    fn check_features<T: Element>(&self, x: &DenseMatrix<T>) -> Result<()> {
        if x.n_cols() != self.n_features {
            return Err(RgbmError::Shape(format!(
                "X has {} features, but the model was trained with {}",
                x.n_cols(),
                self.n_features
            )));
        }
        x.check_no_infinity()
    }

    /// Raw scores using the first `n_trees` trees (all when None).
    pub fn predict_raw<T: Element>(&self, x: &DenseMatrix<T>, n_trees: Option<usize>) -> Result<Vec<f64>> {
        self.check_features(x)?;
        let k = n_trees.unwrap_or(self.trees.len()).min(self.trees.len());
        let mut out = vec![self.base_score; x.n_rows()];
        add_tree_outputs(&self.trees[..k], x, &mut out);
        Ok(out)
    }

    /// Contributions of trees start..end only (no base score), for staged prediction.
    pub fn predict_trees<T: Element>(&self, x: &DenseMatrix<T>, start: usize, end: usize) -> Result<Vec<f64>> {
        self.check_features(x)?;
        if start > end || end > self.trees.len() {
            return Err(RgbmError::param("tree range", format!("{start}..{end} is not within 0..{}", self.trees.len())));
        }
        let mut out = vec![0.0; x.n_rows()];
        add_tree_outputs(&self.trees[start..end], x, &mut out);
        Ok(out)
    }

    /// Virtual ensemble of an SGLB chain (as CatBoost's
    /// `virtual_ensembles_predict`): member k is the model truncated after
    /// T − (K−1−k)·⌊T/(2K)⌋ trees, rescaled to undo the shrinkage the cut-off
    /// trees applied, so it equals the model as it was at that round. Returns
    /// K vectors of raw scores; the last member is the full model.
    pub fn virtual_ensemble<T: Element>(&self, x: &DenseMatrix<T>, n_members: usize) -> Result<Vec<Vec<f64>>> {
        self.check_features(x)?;
        let t = self.trees.len();
        if n_members < 2 {
            return Err(RgbmError::param("n_members", format!("must be >= 2, got {n_members}")));
        }
        let period = t / (2 * n_members);
        if period == 0 {
            return Err(RgbmError::param(
                "n_members",
                format!("{n_members} members need at least {} trees (2 per member), the model has {t}", 2 * n_members),
            ));
        }
        let q = 1.0 - self.params.shrink_rate() * self.params.learning_rate;
        let ends: Vec<usize> = (0..n_members).map(|k| t - (n_members - 1 - k) * period).collect();
        // Sums grow member by member: add the trees between consecutive truncations.
        let mut acc = vec![0.0; x.n_rows()];
        let mut start = 0;
        let mut members = Vec::with_capacity(n_members);
        for &end in &ends {
            add_tree_outputs(&self.trees[start..end], x, &mut acc);
            start = end;
            let undo = q.powi(-((t - end) as i32));
            members.push(acc.iter().map(|a| self.base_score + undo * a).collect());
        }
        Ok(members)
    }

    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| RgbmError::ModelFormat(e.to_string()))
    }

    /// Parses and validates a model; never trusts the file.
    pub fn from_json(text: &str) -> Result<Model> {
        let model: Model = serde_json::from_str(text).map_err(|e| RgbmError::ModelFormat(e.to_string()))?;
        model.validate()?;
        Ok(model)
    }

    pub fn validate(&self) -> Result<()> {
        if self.format_version != FORMAT_VERSION {
            return Err(RgbmError::ModelFormat(format!(
                "format version {} is not supported (this build reads {FORMAT_VERSION})",
                self.format_version
            )));
        }
        self.params.validate()?;
        if self.n_features == 0 || self.n_features > MAX_FEATURES {
            return Err(RgbmError::ModelFormat(format!("n_features = {} is out of range", self.n_features)));
        }
        if !self.base_score.is_finite() {
            return Err(RgbmError::ModelFormat("base_score is not finite".into()));
        }
        if self.trees.len() > MAX_TREES {
            return Err(RgbmError::ModelFormat(format!("{} trees exceed the cap of {MAX_TREES}", self.trees.len())));
        }
        for (i, t) in self.trees.iter().enumerate() {
            t.validate(self.n_features).map_err(|e| RgbmError::ModelFormat(format!("tree {i}: {e}")))?;
        }
        Ok(())
    }
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
    /// (all zeros when no tree splits).
    pub fn feature_importances(&self, kind: ImportanceKind) -> Vec<f64> {
        let mut imp = vec![0.0; self.n_features];
        for t in &self.trees {
            for (i, &f) in t.feature.iter().enumerate() {
                imp[f as usize] += match kind {
                    ImportanceKind::Gain => t.gain[i],
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
