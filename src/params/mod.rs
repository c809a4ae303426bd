//! Training parameters: names and defaults follow DESIGN.md's public API.
//! `spec` has the kinds of values each parameter's entry describes
//! (values, bounds, doc); `table` checks every parameter against its entry
//! and writes the table as JSON; `validate` runs that check and then the
//! rules that relate parameters.
mod peers;
mod spec;
mod table;
mod validate;

use serde::{Deserialize, Serialize};

use crate::error::{Result, RgbmError};
pub use crate::options::{
    BoosterKind, Init, Loss, Metric, Mode, RgbCandidate, RgbPenalty, RgbStep, Selection,
    SelectionScope, SelectionSize, Step, SubsampleFor, Summation,
};
pub use peers::{PEER_NAMES, PEER_OBJECTIVES, PeerName, PeerUse, peer_names_json};
use spec::{FRACTION, NON_NEGATIVE, POSITIVE, Scope, int};
pub use spec::{MAX_CATEGORY, MAX_EXACT_INT, MAX_ROUNDS, ParamSpec, Values};
pub use table::schema_json;

/// SGLB's per-row gradient noise scale c = sqrt(2 / (ε·β)) for learning
/// rate ε and temperature β (here because validation bounds it too).
pub fn noise_scale(learning_rate: f64, temperature: f64) -> f64 {
    (2.0 / (learning_rate * temperature)).sqrt()
}

/// serde: regularisers at 0 are not written.
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// serde: options off by default are not written when off.
fn is_false(x: &bool) -> bool {
    !*x
}

/// serde: options on by default are not written when on.
fn is_true(x: &bool) -> bool {
    *x
}

/// LightGBM's default `num_grad_quant_bins`.
const QUANT_BINS: usize = 4;

/// serde: the default quantization bins are not written.
fn is_quant_bins(x: &usize) -> bool {
    *x == QUANT_BINS
}

/// Upper limit on `n_classes` (one tree per class per round).
pub const MAX_CLASSES: usize = 10_000;

/// Declares every training parameter once: its field (with its serde
/// attributes and Rust-only notes), type, default, the values it takes and
/// its one-line doc (`spec` / `maybe`: None not allowed / allowed), and
/// for an optional parameter whose None stands for a value, that value and
/// the accessor that resolves it. Generates `BoosterParams`, its `Default`,
/// the accessors, the `PARAMS` table the bounds check and the Python
/// estimators read, and the resolved values the schema exports.
macro_rules! declare_params {
    ($(
        $(#[$attr:meta])*
        $name:ident: $ty:ty = $default:expr,
        $kind:ident($values:expr, $doc:literal $(, $scope:expr)?)
        $(None = $eff:expr => $acc:ident -> $acc_ty:ty)?;
    )+) => {
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct BoosterParams {
            $(#[doc = $doc] $(#[$attr])* pub $name: $ty,)+
        }

        impl Default for BoosterParams {
            fn default() -> Self {
                BoosterParams { $($name: $default,)+ }
            }
        }

        impl BoosterParams {
            $($(
                #[doc = concat!("`", stringify!($name), "` with None resolved to `", stringify!($eff), "`.")]
                pub fn $acc(&self) -> $acc_ty {
                    self.$name.unwrap_or($eff)
                }
            )?)+
        }

        /// The table, in `BoosterParams` field order.
        pub const PARAMS: &[ParamSpec] = &[$(spec::$kind(stringify!($name), $values, $doc)$(.only($scope))?,)+];

        /// Every field as JSON, written or not (`BoosterParams` skips some
        /// at their defaults).
        fn field_values(p: &BoosterParams) -> serde_json::Map<String, serde_json::Value> {
            let mut out = serde_json::Map::new();
            $(
                out.insert(
                    stringify!($name).into(),
                    serde_json::to_value(&p.$name).unwrap_or_default(),
                );
            )+
            out
        }

        /// The first field that holds a non-finite float.
        fn non_finite_field(p: &BoosterParams) -> Option<&'static str> {
            $(
                if spec::FloatField::non_finite(&p.$name) {
                    return Some(stringify!($name));
                }
            )+
            None
        }

        /// Sets field `name` to the float `v` if it holds floats.
        #[cfg(test)]
        fn set_float_field(p: &mut BoosterParams, name: &str, v: f64) -> bool {
            $(
                if name == stringify!($name) {
                    return spec::FloatField::set_float(&mut p.$name, v);
                }
            )+
            false
        }

        /// What None stands for, per parameter that declares it.
        fn none_means() -> Vec<(&'static str, serde_json::Value)> {
            let mut out = Vec::new();
            $($(
                let resolved: $acc_ty = $eff;
                out.push((stringify!($name), serde_json::to_value(resolved).unwrap_or_default()));
            )?)+
            out
        }
    };
}

declare_params! {
    n_estimators: usize = 100,
        spec(int(1, MAX_ROUNDS), "boosting rounds (one tree per output each)");
    learning_rate: f64 = 0.1,
        spec(POSITIVE, "shrinkage ν applied to every tree");
    /// Depth limit; `None` means unlimited (only allowed with `max_leaves`).
    max_depth: Option<usize> = Some(6),
        maybe(int(1, 64), "depth limit; None needs max_leaves");
    /// Leaf limit; when set, trees grow best-first.
    max_leaves: Option<usize> = None,
        maybe(int(2, 1 << 20), "leaf limit; set, trees grow best-first");
    max_bins: usize = 255,
        spec(int(2, 65535), "histogram bins per feature (one more for missing values)");
    /// LightGBM's `min_data_in_bin`: fewest sample rows a value bin holds,
    /// so a feature of n rows gets at most about n / min_data_in_bin bins
    /// (categorical features keep one bin per category). None is
    /// LightGBM's 3. The count is of rows, as in LightGBM, so above 1 a row
    /// of integer weight k does not bin as k copies of it would. Unset
    /// fields are not written.
    #[serde(skip_serializing_if = "Option::is_none")]
    min_data_in_bin: Option<usize> = None,
        maybe(int(1, MAX_EXACT_INT), "fewest sampled rows in a value bin, as in LightGBM (categorical features keep a bin per category)")
        None = 3 => min_data_in_bin -> usize;
    min_samples_leaf: usize = 20,
        spec(int(1, MAX_EXACT_INT), "fewest training rows in a leaf");
    /// Minimum hessian sum of a leaf. Like `reg_lambda` and `min_split_gain`
    /// it is measured with sample weights normalised to mean 1 (unweighted:
    /// the raw hessians), so scaling every weight does not change a model.
    /// First-order trees (gradient gain and leaves) never read the hessian
    /// and have no floor; RGB's candidates keep it (`SplitRule::floors_hessian`).
    min_child_weight: f64 = 1.0,
        spec(NON_NEGATIVE, "smallest hessian sum of a leaf");
    reg_lambda: f64 = 0.0,
        spec(NON_NEGATIVE, "L2 penalty on leaf values");
    /// L1 penalty α on leaf values (LightGBM's `lambda_l1`, XGBoost's
    /// `alpha`): gradient sums are soft-thresholded, T(G) = sign(G)·max(|G| −
    /// α, 0), in the gain T(G)²/(H + λ) and the leaf value −T(G)/(H + λ).
    /// Measured, like λ, with weights of mean 1. Zero is not written, so
    /// models without it keep their files byte for byte.
    #[serde(skip_serializing_if = "is_zero")]
    reg_alpha: f64 = 0.0,
        spec(NON_NEGATIVE, "L1 penalty on leaf values: gradient sums soft-thresholded by it in gain and leaf values");
    /// LightGBM's `max_delta_step`: each leaf's value before shrinkage is
    /// clipped to ±this, and the gain is that of the clipped value; 0 = no
    /// limit. Not written at 0.
    #[serde(skip_serializing_if = "is_zero")]
    max_delta_step: f64 = 0.0,
        spec(NON_NEGATIVE, "leaf values before shrinkage are clipped to ±this, in the gain too (LightGBM's rule); 0 = no limit");
    /// LightGBM's `path_smooth`: a leaf's value w over n rows becomes
    /// (w·n + w_parent·s)/(n + s), in the gain too; the root is not
    /// smoothed. Not written at 0.
    #[serde(skip_serializing_if = "is_zero")]
    path_smooth: f64 = 0.0,
        spec(NON_NEGATIVE, "leaf values pulled towards the parent's: (w·n + parent·s)/(n + s) for n rows, in the gain too; 0 = none");
    min_split_gain: f64 = 0.0,
        spec(NON_NEGATIVE, "smallest gain a split must reach");
    /// LightGBM's `extra_trees`: each numeric feature's search at a node
    /// tries one threshold only, drawn uniformly among the feature's bin
    /// boundaries from (random_state, tree, node, feature); both
    /// missing-value directions are tried at it. Categorical features are
    /// searched as usual. Not written when off.
    #[serde(skip_serializing_if = "is_false")]
    extra_trees: bool = false,
        spec(Values::Bool, "each numeric feature tries one random threshold per node (LightGBM's extra_trees)");
    /// LightGBM's `use_quantized_grad` (`booster::quantize`): each tree is
    /// grown on gradients and hessians rounded to integer levels. Not
    /// written when off, nor are its three settings at their defaults.
    #[serde(skip_serializing_if = "is_false")]
    use_quantized_grad: bool = false,
        spec(Values::Bool, "grow each tree on gradients and hessians quantized to integer levels (LightGBM's use_quantized_grad)");
    #[serde(skip_serializing_if = "is_quant_bins")]
    num_grad_quant_bins: usize = QUANT_BINS,
        spec(int(2, 1 << 20), "levels of the quantized hessians (gradients get half as many on each side of 0), with use_quantized_grad");
    #[serde(skip_serializing_if = "is_false")]
    quant_train_renew_leaf: bool = false,
        spec(Values::Bool, "with use_quantized_grad, leaf values from the rows' exact gradients rather than the quantized sums");
    #[serde(skip_serializing_if = "is_true")]
    stochastic_rounding: bool = true,
        spec(Values::Bool, "with use_quantized_grad, round each row up or down at random (unbiased) rather than to the nearest level");
    /// Features whose values are category codes (integers in
    /// [0, `MAX_CATEGORY`], NaN = missing): their splits send a set of
    /// categories one way. Unset fields are not written, so models without
    /// categories keep their files byte for byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    categorical_features: Option<Vec<usize>> = None,
        maybe(Values::IntList { min: 0, max: MAX_EXACT_INT }, "indices of features holding category codes (integers in [0, 65535], NaN = missing)");
    /// Nodes with at most this many categories try each one against the
    /// rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_cat_to_onehot: Option<usize> = None,
        maybe(int(1, MAX_CATEGORY + 1), "nodes with at most this many categories split one category off")
        None = 4 => max_cat_to_onehot -> usize;
    /// Most categories on the side a sorted-scan split picks.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_cat_threshold: Option<usize> = None,
        maybe(int(1, MAX_CATEGORY + 1), "most categories a sorted-scan split sends away from the default side")
        None = 32 => max_cat_threshold -> usize;
    /// Added to a category's hessian sum when categories are sorted by
    /// G/(H + cat_smooth), damping rare ones; categories with fewer rows in
    /// a node stay out of the sorted scan (on the default side), as in
    /// LightGBM.
    #[serde(skip_serializing_if = "Option::is_none")]
    cat_smooth: Option<f64> = None,
        maybe(NON_NEGATIVE, "added to each category's hessian sum when sorting categories; categories with fewer rows stay out of the sorted scan")
        None = 10.0 => cat_smooth -> f64;
    /// LightGBM's meaning: each side of a sorted-scan split has at least this
    /// many rows, and so do the categories added between two candidates.
    #[serde(skip_serializing_if = "Option::is_none")]
    min_data_per_group: Option<usize> = None,
        maybe(int(1, MAX_EXACT_INT), "fewest rows on each side of a sorted-scan category split and in each group of categories between its candidates")
        None = 100 => min_data_per_group -> usize;
    /// Extra L2 penalty in the gain of a sorted-scan category split
    /// (LightGBM's `cat_l2`, in hessian units: unused by `gain="unit"`);
    /// leaf values keep `reg_lambda`.
    #[serde(skip_serializing_if = "Option::is_none")]
    cat_l2: Option<f64> = None,
        maybe(NON_NEGATIVE, "added to reg_lambda in the gain of a sorted-scan category split")
        None = 10.0 => cat_l2 -> f64;
    /// −1, 0 or +1 per feature: every output's raw score is non-increasing,
    /// free, or non-decreasing in that feature (numeric features only; the
    /// length must equal the number of features). Unset fields are not
    /// written, so unconstrained models keep their files byte for byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    monotone_constraints: Option<Vec<i8>> = None,
        maybe(Values::Directions, "per feature: -1 / 0 / 1 = scores non-increasing / free / non-decreasing in it");
    /// Sets of features that may interact: every root-to-leaf path uses
    /// features of one set only (XGBoost's rule; a feature in no set may
    /// only split a path on its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    interaction_constraints: Option<Vec<Vec<usize>>> = None,
        maybe(Values::FeatureSets, "sets of features that may share a root-to-leaf path");
    loss: Loss = Loss::Squared,
        spec(Values::Choice { options: Loss::NAMES }, "the training loss (custom: per-row gradients from a function)");
    /// Classes K of `loss = softmax` (labels 0..K−1); unset for other losses.
    n_classes: Option<usize> = None,
        maybe(int(2, MAX_CLASSES as u64), "classes of loss='softmax' (or of a custom classification loss)");
    /// Targets of a multi-output fit (labels: one block of rows per
    /// target); unset for one. Unset fields are not written, so models of
    /// one target keep their files byte for byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    n_targets: Option<usize> = None,
        maybe(int(2, MAX_CLASSES as u64), "targets of a multi-output fit: one tree per target per round (squared, huber, absolute_error, quantile, poisson, gamma, tweedie, logistic)")
        None = 1 => n_targets -> usize;
    logistic_reg: f64 = 0.0,
        spec(NON_NEGATIVE, "L2 penalty on the scores (logistic loss)", Scope::Losses(&[Loss::Logistic]));
    clamp: Option<f64> = None,
        maybe(Values::Float { min: 0.0, min_closed: false, max: Some(0.5), max_closed: false }, "clamp probabilities to [clamp, 1 - clamp] (logistic loss)", Scope::Losses(&[Loss::Logistic]));
    huber_delta: f64 = 1.0,
        spec(POSITIVE, "where the Huber loss turns linear", Scope::Losses(&[Loss::Huber]));
    /// ς of the smoothed 0-1 loss.
    sla_scale: f64 = 0.1,
        spec(POSITIVE, "ς of the smoothed 0-1 loss 1 - sigmoid(y f / ς)", Scope::Losses(&[Loss::Sla01]));
    /// The quantile α of `loss = quantile` (unset for other losses; None =
    /// 0.9, LightGBM's and scikit-learn's GradientBoostingRegressor's
    /// default). Unset fields are not written, so models of other losses
    /// keep their files byte for byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    alpha: Option<f64> = None,
        maybe(Values::Float { min: 0.0, min_closed: false, max: Some(1.0), max_closed: false }, "the quantile α of loss='quantile'", Scope::Losses(&[Loss::Quantile]))
        None = 0.9 => quantile_alpha -> f64;
    /// The quantiles of a fit of several (`loss = quantile`, `n_targets`
    /// of them, the labels repeated per target): target k predicts the
    /// `alphas[k]`-quantile. Unset for one quantile (`alpha`).
    #[serde(skip_serializing_if = "Option::is_none")]
    alphas: Option<Vec<f64>> = None,
        maybe(Values::PositiveList, "the quantiles of loss='quantile' with n_targets, strictly increasing in (0, 1)");
    /// Tweedie variance power ρ in (1, 2), with `loss = tweedie`.
    #[serde(skip_serializing_if = "Option::is_none")]
    tweedie_variance_power: Option<f64> = None,
        maybe(Values::Float { min: 1.0, min_closed: false, max: Some(2.0), max_closed: false }, "variance power ρ of loss='tweedie'", Scope::Losses(&[Loss::Tweedie]))
        None = 1.5 => tweedie_power -> f64;
    /// `loss = lambdarank`: pairs whose better-ranked row is below this
    /// position are skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    lambdarank_truncation_level: Option<usize> = None,
        maybe(int(1, MAX_EXACT_INT), "loss='lambdarank': pairs whose better-ranked row is below this position are skipped", Scope::Losses(&[Loss::LambdaRank]))
        None = 30 => lambdarank_truncation_level -> usize;
    gain: Mode = Mode::Newton,
        spec(Values::Choice { options: Mode::NAMES }, "split gain: second order (newton) or least squares on the gradient");
    leaf: Mode = Mode::Newton,
        spec(Values::Choice { options: Mode::NAMES }, "leaf values: -G/(H + λ) (newton) or the mean negative gradient");
    /// Each row is in a round's sample with this probability; an empty draw
    /// takes one row at random.
    subsample: f64 = 1.0,
        spec(FRACTION, "probability that a row is in a round's sample");
    /// Whether the subsample chooses the splits only or the leaf values too
    /// (`tree`: both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subsample_for: Option<SubsampleFor> = None,
        maybe(Values::Choice { options: SubsampleFor::NAMES }, "the subsample chooses the splits and leaf values, or the splits only (leaves from every row)")
        None = SubsampleFor::Tree => subsample_for -> SubsampleFor;
    /// LightGBM's `bagging_freq`: a new subsample every this many rounds
    /// (the rounds between reuse the last one); 0 turns the subsample off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subsample_freq: Option<u64> = None,
        maybe(int(0, MAX_ROUNDS), "a new row subsample every this many rounds (LightGBM's subsample_freq); 0 = no subsample")
        None = 1 => subsample_freq -> u64;
    step: Step = Step::Shrinkage,
        spec(Values::Choice { options: Step::NAMES }, "tree scaling: learning_rate, RGBM's 1/σ, or learning_rate × line minimum");
    selection: Selection = Selection::Full,
        spec(Values::Choice { options: Selection::NAMES }, "RGBM weak-learner selection: Type 0 (all splits) to Type 3 (t groups)");
    selection_size: Option<SelectionSize> = None,
        maybe(Values::CountOrFraction, "t: candidates per round (random, groups)");
    /// A partition of the features into groups; `None` = one group per feature.
    groups: Option<Vec<Vec<usize>>> = None,
        maybe(Values::FeatureGroups, "feature groups for selection='group'/'groups'; None = one per feature");
    /// XGBoost's `feature_weights`: with a feature draw (selection='group'
    /// or 'groups' without `groups`), feature j is drawn with probability
    /// proportional to its weight, without replacement; features of weight
    /// 0 are never drawn. Unset fields are not written.
    #[serde(skip_serializing_if = "Option::is_none")]
    feature_weights: Option<Vec<f64>> = None,
        maybe(Values::NonNegativeList, "weights of the features in a feature draw (selection='group'/'groups'): drawn without replacement in proportion to them; 0 = never");
    selection_scope: SelectionScope = SelectionScope::Tree,
        spec(Values::Choice { options: SelectionScope::NAMES }, "draw the candidates once per tree or per node");
    /// XGBoost's `colsample_bylevel`: the nodes at each depth of a tree
    /// search ceil(fraction × n) of the n features the tree may split on
    /// (its candidates), drawn from (random_state, tree, depth) and weighted
    /// by `feature_weights`. None is XGBoost's default, 1. Unset fields are
    /// not written.
    #[serde(skip_serializing_if = "Option::is_none")]
    colsample_bylevel: Option<f64> = None,
        maybe(FRACTION, "each depth level searches this fraction of the tree's candidate features (XGBoost's colsample_bylevel)")
        None = 1.0 => colsample_bylevel -> f64;
    /// XGBoost's `colsample_bynode`: each node searches ceil(fraction × n)
    /// of the n features its level may use, drawn from (random_state, tree,
    /// node). Histograms cover the tree's candidates, so children are still
    /// derived by subtraction. None is 1. Unset fields are not written.
    #[serde(skip_serializing_if = "Option::is_none")]
    colsample_bynode: Option<f64> = None,
        maybe(FRACTION, "each node searches this fraction of its level's features (XGBoost's colsample_bynode, LightGBM's feature_fraction_bynode)")
        None = 1.0 => colsample_bynode -> f64;
    /// Record the training loss after every round (costs one pass over the rows).
    record_train_loss: bool = false,
        spec(Values::Bool, "record the training loss every round");
    booster: BoosterKind = BoosterKind::Gbm,
        spec(Values::Choice { options: BoosterKind::NAMES }, "gradient boosting, or RGB's boosting over tree families");
    /// RGB: families drawn per round (S).
    rgb_candidates: usize = 4,
        spec(int(1, 1024), "RGB: families drawn per round", Scope::Booster(BoosterKind::Rgb));
    /// RGB: weight β of the complexity penalty Ω_k in the candidate objective.
    rgb_beta: f64 = 0.1,
        spec(NON_NEGATIVE, "RGB: weight of the complexity penalty", Scope::Booster(BoosterKind::Rgb));
    /// RGB: internal-node limits n_k of the family grid (None = the paper's 2..256).
    rgb_nodes: Option<Vec<usize>> = None,
        maybe(Values::IntList { min: 1, max: 1 << 20 }, "RGB: internal-node limits of the families; None = 2..256", Scope::Booster(BoosterKind::Rgb));
    /// RGB: leaf-vector L2 radii λ_k of the family grid (None = the paper's 0.001..4).
    rgb_lambdas: Option<Vec<f64>> = None,
        maybe(Values::PositiveList, "RGB: leaf L2 radii of the families; None = 0.001..4", Scope::Booster(BoosterKind::Rgb));
    /// RGB: the coordinate step. A trained RGB model
    /// records the rule it used; RGB files without it predate the choice
    /// and used `exact` (`Model::from_json` says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rgb_step: Option<RgbStep> = None,
        maybe(Values::Choice { options: RgbStep::NAMES }, "RGB: step 1/C_k with C_k = λ_k·σ (the paper's) or σ·mean(h²)", Scope::Booster(BoosterKind::Rgb))
        None = RgbStep::Lipschitz => rgb_step -> RgbStep;
    /// RGB: which member of each drawn family is its candidate (None =
    /// `argmin`, the paper's). Trained RGB models record it; RGB files
    /// without it predate the choice and used `projected`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rgb_candidate: Option<RgbCandidate> = None,
        maybe(Values::Choice { options: RgbCandidate::NAMES }, "RGB: each family's best member under the step (the paper's) or a gain/leaf tree scaled into the λ ball", Scope::Booster(BoosterKind::Rgb))
        None = RgbCandidate::Argmin => rgb_candidate -> RgbCandidate;
    /// RGB: how Ω_k enters the candidate choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rgb_penalty: Option<RgbPenalty> = None,
        maybe(Values::Choice { options: RgbPenalty::NAMES }, "RGB: candidate score loss + β·Ω_k (Algorithm 1) or + β·|α|·Ω_k (Eq. 7)", Scope::Booster(BoosterKind::Rgb))
        None = RgbPenalty::PerCandidate => rgb_penalty -> RgbPenalty;
    /// How sums over rows are formed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    summation: Option<Summation> = None,
        maybe(Values::Choice { options: Summation::NAMES }, "sums over rows: float, or exact (gradients rounded to a grid on which sums are exact; the model does not depend on row order or partitioning)")
        None = Summation::Float => summation -> Summation;
    /// SGLB: Gaussian noise in split choice and leaf values (Ustimenko & Prokhorenkova 2021).
    langevin: bool = false,
        spec(Values::Bool, "SGLB: Gaussian noise in split choice and leaf values");
    /// SGLB: noise in the gradients that choose the splits too (false: leaf
    /// noise only, which is what CatBoost's implementation ends up doing).
    /// None = true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    langevin_split_noise: Option<bool> = None,
        maybe(Values::Bool, "SGLB: noise in the gradients that choose the splits too (False: leaf noise only)")
        None = true => langevin_split_noise -> bool;
    /// SGLB's inverse diffusion temperature β (CatBoost's normalisation).
    temperature: f64 = 1e4,
        spec(POSITIVE, "SGLB: inverse diffusion temperature β");
    /// Model shrink rate γ: F ← b + (1 − γ·ν)(F − b) + tree. None = 1e-3 with langevin, else 0.
    shrink_rate: Option<f64> = None,
        maybe(NON_NEGATIVE, "model shrinkage γ per round; None = 1e-3 with langevin, else 0");
    init: Init = Init::Optimal,
        spec(Values::Choice { options: Init::NAMES }, "starting score: the best constant, or 0");
    random_state: u64 = 0,
        spec(int(0, u64::MAX), "seed of every random draw");
    /// Threads for fit and predict; `None` uses every core.
    n_jobs: Option<usize> = None,
        maybe(int(1, 1 << 16), "threads; None = every core");
    /// Metrics recorded on every evaluation set; `None` = the loss's default.
    eval_metric: Option<Vec<Metric>> = None,
        maybe(Values::Metrics, "metrics on evaluation sets; None = the loss's default");
    /// The positions NDCG is measured at (`eval_metric` ndcg); None = all.
    #[serde(skip_serializing_if = "Option::is_none")]
    eval_at: Option<usize> = None,
        maybe(int(1, MAX_EXACT_INT), "the positions NDCG is measured at (metric ndcg); None = every position", Scope::Losses(&[Loss::LambdaRank]));
    /// Stop when the first metric on the last evaluation set has not improved
    /// for this many rounds, and keep the model of the best round.
    early_stopping_rounds: Option<usize> = None,
        maybe(int(1, MAX_ROUNDS), "stop after this many rounds without improvement on the last evaluation set");
    #[serde(skip_serializing_if = "Option::is_none")]
    early_stopping_min_delta: Option<f64> = None,
        maybe(NON_NEGATIVE, "early stopping: the smallest change of the watched metric that counts as an improvement")
        None = 0.0 => early_stopping_min_delta -> f64;
}

impl BoosterParams {
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

    /// The leaf regularisers are written only when set: files from before
    /// them load (at 0) and default models' files do not change.
    #[test]
    fn leaf_regularisers_at_zero_are_not_written() {
        let text = serde_json::to_string(&BoosterParams::default()).unwrap();
        for name in ["reg_alpha", "max_delta_step", "path_smooth"] {
            assert!(!text.contains(name), "{name}");
        }
        let set = BoosterParams {
            reg_alpha: 0.5,
            max_delta_step: 2.0,
            path_smooth: 3.0,
            ..Default::default()
        };
        let text = serde_json::to_string(&set).unwrap();
        assert!(text.contains(r#""reg_alpha":0.5"#), "{text}");
        assert_eq!(BoosterParams::from_json(&text).unwrap(), set);
        let old = BoosterParams::from_json(r#"{"reg_lambda": 1.0}"#).unwrap();
        assert_eq!(
            (old.reg_alpha, old.max_delta_step, old.path_smooth),
            (0.0, 0.0, 0.0)
        );
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
