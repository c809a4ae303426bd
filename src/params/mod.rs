//! Training parameters: names and defaults follow DESIGN.md's public API.
//! `spec` describes each parameter once (values, bounds, doc); `validate`
//! checks the bounds and then the rules that relate parameters.
mod spec;
mod validate;

use serde::{Deserialize, Serialize};

use crate::error::{Result, RgbmError};
pub use crate::options::{
    BoosterKind, Init, Loss, Metric, Mode, RgbCandidate, RgbPenalty, RgbStep, Selection,
    SelectionScope, SelectionSize, Step, SubsampleFor, Summation,
};
pub use spec::{MAX_CATEGORY, MAX_EXACT_INT, MAX_ROUNDS, PARAMS, ParamSpec, Values, schema_json};

/// SGLB's per-row gradient noise scale c = sqrt(2 / (ε·β)) for learning
/// rate ε and temperature β (here because validation bounds it too).
pub fn noise_scale(learning_rate: f64, temperature: f64) -> f64 {
    (2.0 / (learning_rate * temperature)).sqrt()
}

/// Upper limit on `n_classes` (one tree per class per round).
pub const MAX_CLASSES: usize = 10_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BoosterParams {
    pub n_estimators: usize,
    pub learning_rate: f64,
    /// Depth limit; `None` means unlimited (only allowed with `max_leaves`).
    pub max_depth: Option<usize>,
    /// Leaf limit; when set, trees grow best-first.
    pub max_leaves: Option<usize>,
    pub max_bins: usize,
    pub min_samples_leaf: usize,
    /// Minimum hessian sum of a leaf. Like `reg_lambda` and `min_split_gain`
    /// it is measured with sample weights normalised to mean 1 (unweighted:
    /// the raw hessians), so scaling every weight does not change a model.
    pub min_child_weight: f64,
    pub reg_lambda: f64,
    pub min_split_gain: f64,
    /// Features whose values are category codes (integers in
    /// [0, `MAX_CATEGORY`], NaN = missing): their splits send a set of
    /// categories one way. Unset fields are not written, so models without
    /// categories keep their files byte for byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub categorical_features: Option<Vec<usize>>,
    /// Nodes with at most this many categories try each one against the
    /// rest; None = 4.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cat_to_onehot: Option<usize>,
    /// Most categories on the side a sorted-scan split picks; None = 32.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cat_threshold: Option<usize>,
    /// Added to a category's hessian sum when categories are sorted by
    /// G/(H + cat_smooth), damping rare ones; None = 10.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cat_smooth: Option<f64>,
    /// Categories with fewer rows in a node stay on the default side of a
    /// sorted-scan split; None = 100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_data_per_group: Option<usize>,
    /// −1, 0 or +1 per feature: every output's raw score is non-increasing,
    /// free, or non-decreasing in that feature (numeric features only; the
    /// length must equal the number of features). Unset fields are not
    /// written, so unconstrained models keep their files byte for byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monotone_constraints: Option<Vec<i8>>,
    /// Sets of features that may interact: every root-to-leaf path uses
    /// features of one set only (XGBoost's rule; a feature in no set may
    /// only split a path on its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interaction_constraints: Option<Vec<Vec<usize>>>,
    pub loss: Loss,
    /// Classes K of `loss = softmax` (labels 0..K−1); unset for other losses.
    pub n_classes: Option<usize>,
    pub logistic_reg: f64,
    pub clamp: Option<f64>,
    pub huber_delta: f64,
    /// ς of the smoothed 0-1 loss.
    pub sla_scale: f64,
    /// The quantile α of `loss = quantile` (required there, unset otherwise).
    /// Unset fields are not written, so models of other losses keep their
    /// files byte for byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Tweedie variance power ρ in (1, 2); None = 1.5 with `loss = tweedie`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tweedie_variance_power: Option<f64>,
    /// `loss = lambdarank`: pairs whose better-ranked row is below this
    /// position are skipped; None = 30.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambdarank_truncation_level: Option<usize>,
    pub gain: Mode,
    pub leaf: Mode,
    /// Each row is in a round's sample with this probability; an empty draw
    /// takes one row at random.
    pub subsample: f64,
    /// Whether the subsample chooses the splits only or the leaf values too
    /// (None = both, `tree`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subsample_for: Option<SubsampleFor>,
    pub step: Step,
    pub selection: Selection,
    pub selection_size: Option<SelectionSize>,
    /// A partition of the features into groups; `None` = one group per feature.
    pub groups: Option<Vec<Vec<usize>>>,
    pub selection_scope: SelectionScope,
    /// Record the training loss after every round (costs one pass over the rows).
    pub record_train_loss: bool,
    pub booster: BoosterKind,
    /// RGB: families drawn per round (S).
    pub rgb_candidates: usize,
    /// RGB: weight β of the complexity penalty Ω_k in the candidate objective.
    pub rgb_beta: f64,
    /// RGB: internal-node limits n_k of the family grid (None = the paper's 2..256).
    pub rgb_nodes: Option<Vec<usize>>,
    /// RGB: leaf-vector L2 radii λ_k of the family grid (None = the paper's 0.001..4).
    pub rgb_lambdas: Option<Vec<f64>>,
    /// RGB: the coordinate step (None = `lipschitz`). A trained RGB model
    /// records the rule it used; RGB files without it predate the choice
    /// and used `exact` (`Model::from_json` says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rgb_step: Option<RgbStep>,
    /// RGB: which member of each drawn family is its candidate (None =
    /// `argmin`, the paper's). Trained RGB models record it; RGB files
    /// without it predate the choice and used `projected`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rgb_candidate: Option<RgbCandidate>,
    /// RGB: how Ω_k enters the candidate choice (None = `per_candidate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rgb_penalty: Option<RgbPenalty>,
    /// How sums over rows are formed (None = `float`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summation: Option<Summation>,
    /// SGLB: Gaussian noise in split choice and leaf values (Ustimenko & Prokhorenkova 2021).
    pub langevin: bool,
    /// SGLB: noise in the gradients that choose the splits too (false: leaf
    /// noise only, which is what CatBoost's implementation ends up doing).
    /// None = true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub langevin_split_noise: Option<bool>,
    /// SGLB's inverse diffusion temperature β (CatBoost's normalisation).
    pub temperature: f64,
    /// Model shrink rate γ: F ← b + (1 − γ·ν)(F − b) + tree. None = 1e-3 with langevin, else 0.
    pub shrink_rate: Option<f64>,
    pub init: Init,
    pub random_state: u64,
    /// Threads for fit and predict; `None` uses every core.
    pub n_jobs: Option<usize>,
    /// Metrics recorded on every evaluation set; `None` = the loss's default.
    pub eval_metric: Option<Vec<Metric>>,
    /// The positions NDCG is measured at (`eval_metric` ndcg); None = all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_at: Option<usize>,
    /// Stop when the first metric on the last evaluation set has not improved
    /// for this many rounds, and keep the model of the best round.
    pub early_stopping_rounds: Option<usize>,
}

impl Default for BoosterParams {
    fn default() -> Self {
        BoosterParams {
            n_estimators: 100,
            learning_rate: 0.1,
            max_depth: Some(6),
            max_leaves: None,
            max_bins: 255,
            min_samples_leaf: 20,
            min_child_weight: 1e-3,
            reg_lambda: 0.0,
            min_split_gain: 0.0,
            categorical_features: None,
            max_cat_to_onehot: None,
            max_cat_threshold: None,
            cat_smooth: None,
            min_data_per_group: None,
            monotone_constraints: None,
            interaction_constraints: None,
            loss: Loss::Squared,
            n_classes: None,
            logistic_reg: 0.0,
            clamp: None,
            huber_delta: 1.0,
            sla_scale: 0.1,
            alpha: None,
            tweedie_variance_power: None,
            lambdarank_truncation_level: None,
            gain: Mode::Newton,
            leaf: Mode::Newton,
            subsample: 1.0,
            subsample_for: None,
            step: Step::Shrinkage,
            selection: Selection::Full,
            selection_size: None,
            groups: None,
            selection_scope: SelectionScope::Tree,
            record_train_loss: false,
            booster: BoosterKind::Gbm,
            rgb_candidates: 4,
            rgb_beta: 0.1,
            rgb_nodes: None,
            rgb_lambdas: None,
            rgb_step: None,
            rgb_candidate: None,
            rgb_penalty: None,
            summation: None,
            langevin: false,
            langevin_split_noise: None,
            temperature: 1e4,
            shrink_rate: None,
            init: Init::Optimal,
            random_state: 0,
            n_jobs: None,
            eval_metric: None,
            eval_at: None,
            early_stopping_rounds: None,
        }
    }
}

impl BoosterParams {
    /// `subsample_for`, None meaning `tree`.
    pub fn subsample_for(&self) -> SubsampleFor {
        self.subsample_for.unwrap_or_default()
    }

    /// `rgb_step`, None meaning `lipschitz`.
    pub fn rgb_step(&self) -> RgbStep {
        self.rgb_step.unwrap_or(RgbStep::Lipschitz)
    }

    /// `rgb_candidate`, None meaning `argmin`.
    pub fn rgb_candidate(&self) -> RgbCandidate {
        self.rgb_candidate.unwrap_or(RgbCandidate::Argmin)
    }

    /// `summation`, None meaning `float`.
    pub fn summation(&self) -> Summation {
        self.summation.unwrap_or_default()
    }

    /// `langevin_split_noise`, None meaning true.
    pub fn langevin_split_noise(&self) -> bool {
        self.langevin_split_noise.unwrap_or(true)
    }

    /// Parse from JSON, rejecting unknown keys, then validate.
    pub fn from_json(text: &str) -> Result<Self> {
        let p = Self::parse_json(text)?;
        p.validate()?;
        Ok(p)
    }

    /// [`Self::from_json`] without the validation (for callers with checks
    /// of their own to run first); call [`Self::validate`] before use.
    pub fn parse_json(text: &str) -> Result<Self> {
        let mut de = serde_json::Deserializer::from_str(text);
        let p: BoosterParams = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let field = e.path().to_string();
            RgbmError::param(
                if field == "." { "params" } else { &field },
                e.inner().to_string(),
            )
        })?;
        de.end()
            .map_err(|e| RgbmError::param("params", e.to_string()))?;
        Ok(p)
    }

    /// ρ with its default resolved.
    pub fn tweedie_power(&self) -> f64 {
        self.tweedie_variance_power.unwrap_or(1.5)
    }

    /// γ with its default resolved.
    pub fn shrink_rate(&self) -> f64 {
        self.shrink_rate
            .unwrap_or(if self.langevin { 1e-3 } else { 0.0 })
    }

    /// q = 1 − γ·ν: the factor by which each round scales the earlier trees
    /// (F ← b + q·(F − b) + tree).
    pub fn shrink_factor(&self) -> f64 {
        1.0 - self.shrink_rate() * self.learning_rate
    }

    /// The categorical features (none when unset).
    pub fn categorical(&self) -> &[usize] {
        self.categorical_features.as_deref().unwrap_or(&[])
    }

    /// The monotone directions (none when unset).
    pub fn monotone(&self) -> &[i8] {
        self.monotone_constraints.as_deref().unwrap_or(&[])
    }

    /// Whether some feature has a monotone constraint.
    pub fn has_monotone(&self) -> bool {
        self.monotone().iter().any(|&d| d != 0)
    }

    /// Whether trees grow best-first (leaf-limited) rather than depth-wise.
    pub fn best_first(&self) -> bool {
        self.max_leaves.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_round_trip() {
        let p = BoosterParams::default();
        p.validate().unwrap();
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(BoosterParams::from_json(&text).unwrap(), p);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_rejected() {
        assert!(BoosterParams::from_json(r#"{"n_estimator": 3}"#).is_err());
        let e = BoosterParams::from_json(r#"{"learning_rate": -1.0}"#).unwrap_err();
        assert!(e.to_string().contains("learning_rate"));
        assert!(BoosterParams::from_json(r#"{"loss": "hinge"}"#).is_err());
        assert!(BoosterParams::from_json(r#"{"max_depth": null}"#).is_err());
        assert!(BoosterParams::from_json(r#"{"max_depth": null, "max_leaves": 8}"#).is_ok());
        assert!(BoosterParams::from_json(r#"{"clamp": 0.05}"#).is_err());
        assert!(BoosterParams::from_json(r#"{"clamp": 0.05, "loss": "logistic"}"#).is_ok());
    }
}
