//! The names LightGBM and XGBoost give training parameters, and what each
//! means here: the same parameter under the same name, another name for
//! one of ours, a peer parameter built from ours, or refused with what to
//! use instead. Python reads this table (`_core.peer_names()`) for the
//! estimators' aliases, the "did you mean" hints and the table of
//! docs/parameters.md; the objectives' names are `PEER_OBJECTIVES`.
use serde::Serialize;

/// How a peer's parameter name is taken.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PeerUse {
    /// Our parameter of that name has the peer's meaning.
    Same,
    /// Another name for our parameter `of`, with its meaning and default;
    /// passing both is an error.
    Alias,
    /// The peer's parameter, built from ours (`of` names the one it sets).
    Mapped,
    /// Our parameter of that name means something else (the note says what).
    Differs,
    /// Not taken: the note says why and what to use.
    Refused,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct PeerName {
    pub name: &'static str,
    /// "LightGBM", "XGBoost" or "LightGBM, XGBoost".
    pub peers: &'static str,
    #[serde(rename = "use")]
    pub kind: PeerUse,
    /// Our parameter it stands for (empty for none).
    pub of: &'static str,
    /// Whether the estimators take it as a constructor argument.
    pub estimator: bool,
    pub note: &'static str,
}

const LGB: &str = "LightGBM";
const XGB: &str = "XGBoost";
const BOTH: &str = "LightGBM, XGBoost";

const fn entry(
    name: &'static str,
    peers: &'static str,
    kind: PeerUse,
    of: &'static str,
    estimator: bool,
    note: &'static str,
) -> PeerName {
    PeerName {
        name,
        peers,
        kind,
        of,
        estimator,
        note,
    }
}

use PeerUse::{Alias, Differs, Mapped, Refused, Same};

/// A LightGBM spelling of one of its parameters (`canonical`) that the
/// estimators refuse, pointing to ours of the same meaning.
macro_rules! lgb_alias {
    ($name:literal, $canonical:literal, $ours:literal) => {
        entry(
            $name,
            LGB,
            Refused,
            $ours,
            false,
            concat!("LightGBM's alias of ", $canonical, ": pass ", $ours),
        )
    };
}

/// Every peer name the estimators meet in ported scripts.
pub const PEER_NAMES: &[PeerName] = &[
    entry("n_estimators", BOTH, Same, "n_estimators", true, ""),
    entry("learning_rate", BOTH, Same, "learning_rate", true, ""),
    entry(
        "max_depth",
        BOTH,
        Same,
        "max_depth",
        true,
        "-1 or 0 is LightGBM's 'no limit' (None): trees grow best-first to max_leaves (31, LightGBM's num_leaves, when unset); the default is XGBoost's 6",
    ),
    entry(
        "num_leaves",
        LGB,
        Alias,
        "max_leaves",
        true,
        "with max_depth left at its default the depth is unlimited, as with LightGBM's max_depth=-1",
    ),
    entry(
        "min_child_samples",
        LGB,
        Alias,
        "min_samples_leaf",
        true,
        "",
    ),
    entry(
        "min_child_weight",
        BOTH,
        Same,
        "min_child_weight",
        true,
        "the default is XGBoost's 1 (LightGBM's is 1e-3)",
    ),
    entry("min_split_gain", LGB, Same, "min_split_gain", true, ""),
    entry("gamma", XGB, Alias, "min_split_gain", true, ""),
    entry(
        "subsample",
        BOTH,
        Same,
        "subsample",
        true,
        "drawn every round as in XGBoost; LightGBM draws only with subsample_freq > 0 (here subsample_freq=None means every round)",
    ),
    entry(
        "subsample_freq",
        LGB,
        Same,
        "subsample_freq",
        true,
        "None (the default) draws every round, XGBoost's behaviour; LightGBM's default 0 turns the subsample off",
    ),
    entry(
        "colsample_bytree",
        BOTH,
        Mapped,
        "selection_size",
        true,
        "selection='groups' (a group per feature) with selection_size=fraction: ceil(fraction × features) drawn each round, weighted by fit(feature_weights=)",
    ),
    entry(
        "feature_fraction",
        LGB,
        Mapped,
        "selection_size",
        true,
        "as colsample_bytree",
    ),
    entry(
        "colsample_bylevel",
        XGB,
        Same,
        "colsample_bylevel",
        true,
        "each depth level of a tree searches ceil(fraction × n) of the n features the tree draws, weighted by fit(feature_weights=)",
    ),
    entry(
        "colsample_bynode",
        XGB,
        Same,
        "colsample_bynode",
        true,
        "each node searches ceil(fraction × n) of the n features its level draws; the three draws nest as in XGBoost",
    ),
    entry(
        "feature_fraction_bynode",
        LGB,
        Alias,
        "colsample_bynode",
        true,
        "",
    ),
    entry("reg_lambda", BOTH, Same, "reg_lambda", true, ""),
    entry("reg_alpha", BOTH, Same, "reg_alpha", true, ""),
    entry(
        "scale_pos_weight",
        BOTH,
        Mapped,
        "class_weight",
        true,
        "classifier, binary y: the positive class's rows weigh this much (class_weight={classes_[1]: value})",
    ),
    entry("max_bin", BOTH, Alias, "max_bins", true, ""),
    entry(
        "objective",
        BOTH,
        Alias,
        "loss",
        true,
        "the peers' objective names map to the losses (docs/parameters.md lists them); a function is a custom loss",
    ),
    entry(
        "verbose",
        LGB,
        Differs,
        "verbose",
        true,
        "k > 0 logs the evaluation results every k rounds; a negative value is silent and also hides warnings, as LightGBM's -1",
    ),
    entry(
        "verbosity",
        XGB,
        Mapped,
        "",
        true,
        "XGBoost's message level: 0 hides the warnings a fit gives, 1 to 3 show them; rounds are logged by verbose",
    ),
    entry(
        "importance_type",
        BOTH,
        Same,
        "importance_type",
        true,
        "'gain' is the total gain, LightGBM's (XGBoost's 'gain' is the mean per split); also 'split', XGBoost's 'weight' (= 'split') and 'total_gain' (= 'gain'); 'cover' and 'total_cover' are refused: trees keep row counts, not hessian sums",
    ),
    entry("random_state", BOTH, Same, "random_state", true, ""),
    entry("n_jobs", BOTH, Same, "n_jobs", true, ""),
    entry("class_weight", LGB, Same, "class_weight", true, ""),
    entry(
        "early_stopping_rounds",
        XGB,
        Same,
        "early_stopping_rounds",
        true,
        "",
    ),
    entry("eval_metric", XGB, Same, "eval_metric", true, ""),
    entry(
        "max_cat_to_onehot",
        BOTH,
        Same,
        "max_cat_to_onehot",
        true,
        "",
    ),
    entry(
        "max_cat_threshold",
        LGB,
        Same,
        "max_cat_threshold",
        true,
        "",
    ),
    entry("cat_smooth", LGB, Same, "cat_smooth", true, ""),
    entry("cat_l2", LGB, Same, "cat_l2", true, ""),
    entry(
        "min_data_per_group",
        LGB,
        Same,
        "min_data_per_group",
        true,
        "",
    ),
    entry("min_data_in_bin", LGB, Same, "min_data_in_bin", true, ""),
    entry(
        "monotone_constraints",
        BOTH,
        Same,
        "monotone_constraints",
        true,
        "",
    ),
    entry(
        "interaction_constraints",
        BOTH,
        Same,
        "interaction_constraints",
        true,
        "",
    ),
    // The peers' core (params-dict) names: refused by the estimators,
    // pointing to the parameter of the same meaning.
    entry(
        "min_data_in_leaf",
        LGB,
        Refused,
        "min_samples_leaf",
        false,
        "LightGBM's core name: pass min_samples_leaf (or min_child_samples)",
    ),
    entry(
        "min_sum_hessian_in_leaf",
        LGB,
        Refused,
        "min_child_weight",
        false,
        "LightGBM's core name: pass min_child_weight",
    ),
    entry(
        "bagging_fraction",
        LGB,
        Refused,
        "subsample",
        false,
        "LightGBM's core name: pass subsample (with subsample_freq)",
    ),
    entry(
        "bagging_freq",
        LGB,
        Refused,
        "subsample_freq",
        false,
        "LightGBM's core name: pass subsample_freq",
    ),
    entry(
        "lambda_l2",
        LGB,
        Refused,
        "reg_lambda",
        false,
        "LightGBM's core name: pass reg_lambda",
    ),
    entry(
        "lambda_l1",
        LGB,
        Refused,
        "reg_alpha",
        false,
        "LightGBM's core name: pass reg_alpha",
    ),
    entry(
        "min_gain_to_split",
        LGB,
        Refused,
        "min_split_gain",
        false,
        "LightGBM's core name: pass min_split_gain (or gamma)",
    ),
    entry(
        "num_iterations",
        LGB,
        Refused,
        "n_estimators",
        false,
        "LightGBM's core name: pass n_estimators",
    ),
    entry(
        "num_boost_round",
        BOTH,
        Refused,
        "n_estimators",
        false,
        "train()'s argument in both peers: pass n_estimators",
    ),
    entry(
        "eta",
        XGB,
        Refused,
        "learning_rate",
        false,
        "XGBoost's core name: pass learning_rate",
    ),
    entry(
        "seed",
        BOTH,
        Refused,
        "random_state",
        false,
        "the peers' core name: pass random_state",
    ),
    entry(
        "nthread",
        XGB,
        Refused,
        "n_jobs",
        false,
        "XGBoost's core name: pass n_jobs",
    ),
    entry(
        "num_threads",
        LGB,
        Refused,
        "n_jobs",
        false,
        "LightGBM's core name: pass n_jobs",
    ),
    // Other spellings the peers take for the same core parameters.
    lgb_alias!("min_data", "min_data_in_leaf", "min_samples_leaf"),
    lgb_alias!(
        "min_sum_hessian",
        "min_sum_hessian_in_leaf",
        "min_child_weight"
    ),
    entry(
        "sub_feature",
        LGB,
        Refused,
        "colsample_bytree",
        false,
        "LightGBM's alias of feature_fraction: pass colsample_bytree (or feature_fraction)",
    ),
    lgb_alias!("shrinkage_rate", "learning_rate", "learning_rate"),
    lgb_alias!("num_iteration", "num_iterations", "n_estimators"),
    lgb_alias!("num_trees", "num_iterations", "n_estimators"),
    lgb_alias!("num_round", "num_iterations", "n_estimators"),
    lgb_alias!("nrounds", "num_iterations", "n_estimators"),
    lgb_alias!("random_seed", "seed", "random_state"),
    lgb_alias!("min_data_per_leaf", "min_data_in_leaf", "min_samples_leaf"),
    lgb_alias!("bagging", "bagging_fraction", "subsample"),
    lgb_alias!("sub_row", "bagging_fraction", "subsample"),
    lgb_alias!("max_iter", "num_iterations", "n_estimators"),
    lgb_alias!("n_iter", "num_iterations", "n_estimators"),
    lgb_alias!("num_rounds", "num_iterations", "n_estimators"),
    lgb_alias!("num_tree", "num_iterations", "n_estimators"),
    lgb_alias!(
        "sub_feature_bynode",
        "feature_fraction_bynode",
        "colsample_bynode"
    ),
    lgb_alias!("min_hessian", "min_sum_hessian_in_leaf", "min_child_weight"),
    lgb_alias!(
        "min_sum_hessian_per_leaf",
        "min_sum_hessian_in_leaf",
        "min_child_weight"
    ),
    lgb_alias!("l2_regularization", "lambda_l2", "reg_lambda"),
    lgb_alias!("l1_regularization", "lambda_l1", "reg_alpha"),
    lgb_alias!(
        "early_stopping",
        "early_stopping_round",
        "early_stopping_rounds"
    ),
    lgb_alias!(
        "n_iter_no_change",
        "early_stopping_round",
        "early_stopping_rounds"
    ),
    lgb_alias!("nthreads", "num_threads", "n_jobs"),
    lgb_alias!("num_thread", "num_threads", "n_jobs"),
    lgb_alias!("num_leaf", "num_leaves", "max_leaves"),
    lgb_alias!("max_leaf", "num_leaves", "max_leaves"),
    lgb_alias!("max_leaf_nodes", "num_leaves", "max_leaves"),
    lgb_alias!("application", "objective", "loss"),
    lgb_alias!("app", "objective", "loss"),
    lgb_alias!("objective_type", "objective", "loss"),
    lgb_alias!("max_leaf_output", "max_delta_step", "max_delta_step"),
    lgb_alias!("max_tree_output", "max_delta_step", "max_delta_step"),
    lgb_alias!("extra_tree", "extra_trees", "extra_trees"),
    entry(
        "lambda",
        XGB,
        Refused,
        "reg_lambda",
        false,
        "XGBoost's core name: pass reg_lambda",
    ),
    entry(
        "min_split_loss",
        XGB,
        Refused,
        "min_split_gain",
        false,
        "XGBoost's core name of gamma: pass min_split_gain (or gamma)",
    ),
    entry(
        "early_stopping_round",
        LGB,
        Refused,
        "early_stopping_rounds",
        false,
        "LightGBM's core name: pass early_stopping_rounds",
    ),
    entry(
        "metric",
        LGB,
        Refused,
        "eval_metric",
        false,
        "LightGBM's core name: pass eval_metric (the peers' metric names are taken)",
    ),
    entry(
        "num_class",
        BOTH,
        Refused,
        "",
        false,
        "the classes are read from y: pass no count",
    ),
    entry(
        "is_unbalance",
        LGB,
        Refused,
        "class_weight",
        false,
        "LightGBM's reweighting of unbalanced binary classes: pass class_weight='balanced'",
    ),
    entry(
        "max_leaves",
        XGB,
        Same,
        "max_leaves",
        true,
        "as XGBoost's lossguide max_leaves: trees grow best-first",
    ),
    entry(
        "tree_method",
        XGB,
        Mapped,
        "",
        true,
        "only 'hist' (XGBoost's default), how the trees are always grown here; 'exact' and 'approx' are refused",
    ),
    entry(
        "booster",
        XGB,
        Differs,
        "booster",
        true,
        "'gbm' (gradient boosting; XGBoost's default 'gbtree' is taken as 'gbm') or 'rgb' (RGB's tree families); XGBoost's 'gblinear' and 'dart' are not built",
    ),
    entry(
        "boosting_type",
        LGB,
        Refused,
        "booster",
        false,
        "'gbdt' is the default booster='gbm'; DART, GOSS and random forests are not built",
    ),
    entry(
        "extra_trees",
        LGB,
        Same,
        "extra_trees",
        true,
        "one random threshold per node and numeric feature, drawn from random_state (LightGBM's extra_seed is not taken); categorical features are searched as usual",
    ),
    entry(
        "extra_seed",
        LGB,
        Refused,
        "random_state",
        false,
        "extra_trees draws its thresholds from random_state: pass random_state",
    ),
    entry(
        "use_quantized_grad",
        LGB,
        Same,
        "use_quantized_grad",
        true,
        "levels held as multiples of the scales (every regulariser applies as without); not with booster='rgb' or langevin=True",
    ),
    entry(
        "num_grad_quant_bins",
        LGB,
        Same,
        "num_grad_quant_bins",
        true,
        "",
    ),
    entry(
        "quant_train_renew_leaf",
        LGB,
        Same,
        "quant_train_renew_leaf",
        true,
        "",
    ),
    entry(
        "stochastic_rounding",
        LGB,
        Same,
        "stochastic_rounding",
        true,
        "each row's draw comes from (random_state, tree, row)",
    ),
    entry("path_smooth", LGB, Same, "path_smooth", true, ""),
    entry(
        "max_delta_step",
        BOTH,
        Same,
        "max_delta_step",
        true,
        "LightGBM's rule: the leaf value is clipped before shrinkage, and the gain is that of the clipped value",
    ),
];

/// The peers' objective names and the loss each is here; an empty loss is
/// refused with the note.
pub const PEER_OBJECTIVES: &[(&str, &str, &str)] = &[
    ("regression", "squared", ""),
    ("regression_l2", "squared", ""),
    ("l2", "squared", ""),
    ("mse", "squared", ""),
    ("mean_squared_error", "squared", ""),
    ("reg:squarederror", "squared", ""),
    ("regression_l1", "absolute_error", ""),
    ("l1", "absolute_error", ""),
    ("mae", "absolute_error", ""),
    ("reg:absoluteerror", "absolute_error", ""),
    ("huber", "huber", "LightGBM's alpha is huber_delta here"),
    ("quantile", "quantile", ""),
    (
        "reg:quantileerror",
        "quantile",
        "XGBoost's quantile_alpha is alpha here",
    ),
    ("poisson", "poisson", ""),
    ("count:poisson", "poisson", ""),
    ("gamma", "gamma", ""),
    ("reg:gamma", "gamma", ""),
    ("tweedie", "tweedie", ""),
    ("reg:tweedie", "tweedie", ""),
    ("binary", "logistic", ""),
    ("binary:logistic", "logistic", ""),
    (
        "multiclass",
        "logistic",
        "the softmax loss with more than two classes",
    ),
    (
        "softmax",
        "logistic",
        "the softmax loss with more than two classes",
    ),
    (
        "multi:softprob",
        "logistic",
        "the softmax loss with more than two classes",
    ),
    (
        "multi:softmax",
        "logistic",
        "the softmax loss with more than two classes",
    ),
    ("lambdarank", "lambdarank", ""),
    ("rank:ndcg", "lambdarank", ""),
    (
        "reg:pseudohubererror",
        "",
        "the pseudo-Huber loss is not built; loss='huber' is the Huber loss",
    ),
    (
        "rank:pairwise",
        "",
        "pairwise ranking is not built; lambdarank optimises NDCG",
    ),
    (
        "cross_entropy",
        "",
        "cross-entropy on probability labels is not built",
    ),
    ("binary:hinge", "", "the hinge loss is not built"),
];

/// The peers' evaluation metric names that are another name for one of
/// ours: (theirs, ours).
pub const PEER_METRICS: &[(&str, &str)] = &[
    ("binary_logloss", "logloss"),
    ("binary_error", "error"),
    ("mlogloss", "multi_logloss"),
    ("merror", "multi_error"),
    ("l2_root", "rmse"),
    ("root_mean_squared_error", "rmse"),
    ("mse", "l2"),
    ("mean_squared_error", "l2"),
    ("regression", "l2"),
    ("l1", "mae"),
    ("mean_absolute_error", "mae"),
];

/// The tables as JSON: {"names": [...], "objectives": [{name, loss,
/// note}], "metrics": {theirs: ours}}.
pub fn peer_names_json() -> String {
    let objectives: Vec<serde_json::Value> = PEER_OBJECTIVES
        .iter()
        .map(|(name, loss, note)| serde_json::json!({"name": name, "loss": loss, "note": note}))
        .collect();
    let metrics: serde_json::Map<String, serde_json::Value> = PEER_METRICS
        .iter()
        .map(|(theirs, ours)| (theirs.to_string(), serde_json::Value::from(*ours)))
        .collect();
    serde_json::json!({"names": PEER_NAMES, "objectives": objectives, "metrics": metrics})
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Loss, PARAMS};

    #[test]
    fn peer_metrics_name_a_metric() {
        for (theirs, ours) in PEER_METRICS {
            assert!(
                crate::options::Metric::NAMES.contains(ours),
                "{theirs} -> {ours}"
            );
        }
    }

    #[test]
    fn every_name_is_listed_once() {
        let mut names: Vec<&str> = PEER_NAMES.iter().map(|p| p.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    #[test]
    fn aliases_name_a_core_parameter_and_objectives_a_loss() {
        for p in PEER_NAMES.iter().filter(|p| p.kind == PeerUse::Alias) {
            assert!(
                PARAMS.iter().any(|s| s.name == p.of) || p.of == "loss",
                "{} aliases {}",
                p.name,
                p.of
            );
        }
        for (name, loss, note) in PEER_OBJECTIVES {
            if loss.is_empty() {
                assert!(!note.is_empty(), "{name} is refused without a reason");
            } else {
                assert!(
                    Loss::ALL.iter().any(|l| l.name() == *loss),
                    "{name} -> {loss}"
                );
            }
        }
    }
}
