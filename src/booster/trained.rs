//! What a fit returns: the model, the per-round log (with each paper's
//! diagnostics) and the evaluation histories.
use serde::{Deserialize, Serialize};

use crate::model::Model;
use crate::tree::Tree;

use super::theory::TreeTheory;

/// What happened in one boosting round (RGBM diagnostics).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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

/// The values of one metric on one set, round by round.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvalHistory {
    pub set: String,
    pub metric: String,
    pub values: Vec<f64>,
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
