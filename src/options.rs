//! The names a user chooses among: losses, gain and leaf modes, step rules,
//! selection rules, boosters and metrics, with the facts that relate them
//! (which metric applies to which loss). Everything else builds on these.
use serde::{Deserialize, Serialize};

use crate::error::{Result, RgbmError};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    Squared,
    Huber,
    Logistic,
    Exponential,
    /// SGLB's smoothed 0-1 loss.
    Sla01,
    /// Multiclass cross-entropy over `n_classes` scores per row.
    Softmax,
    /// Gaussian negative log-likelihood: a mean and a log σ per row.
    Gaussian,
    /// |y − f|; leaves are re-estimated as weighted medians.
    AbsoluteError,
    /// The pinball loss of the `alpha`-quantile; leaves are re-estimated as
    /// weighted α-quantiles.
    Quantile,
    /// Poisson counts, log link.
    Poisson,
    /// Gamma amounts (y > 0), log link.
    Gamma,
    /// Tweedie amounts with exact zeros, log link.
    Tweedie,
    /// A loss known only through the per-row gradients and hessians a
    /// training `Monitor` supplies each round (in Python, a callable). It
    /// has no value, no σ and no link: the fit starts from 0, predictions
    /// are raw scores. Regression without `n_classes`, else K classes.
    Custom,
    /// Learning to rank with LambdaRank gradients of NDCG over query groups;
    /// labels are integer relevance grades, predictions raw scores.
    #[serde(rename = "lambdarank")]
    LambdaRank,
}

impl Loss {
    /// Losses whose labels must be 0/1.
    pub fn is_binary(self) -> bool {
        matches!(self, Loss::Logistic | Loss::Exponential | Loss::Sla01)
    }

    /// Losses of real-valued targets (the regressor's; a custom loss's
    /// task depends on `n_classes`).
    pub fn is_regression(self) -> bool {
        !self.is_binary() && !matches!(self, Loss::Softmax | Loss::Custom | Loss::LambdaRank)
    }

    /// Whether the loss is σ-smooth in the score for a known σ (given its
    /// parameters), which the constant step and RGB's coordinate step need.
    pub fn is_smooth(self) -> bool {
        matches!(
            self,
            Loss::Squared | Loss::Huber | Loss::Logistic | Loss::Sla01 | Loss::Softmax
        )
    }

    /// Losses whose leaves are re-estimated from their rows' residuals after
    /// the tree is grown (the gradient carries no step length).
    pub fn renews_leaves(self) -> bool {
        matches!(self, Loss::AbsoluteError | Loss::Quantile)
    }
}

/// How split gain (and leaf values) are computed: from the second-order
/// expansion (`Newton`) or from the least-squares fit of the negative
/// gradient (`Gradient`). Sun, Zhang & Zhou (2014), Table 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Newton,
    Gradient,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Init {
    /// The constant that minimises the training loss (mean, log-odds, ...).
    Optimal,
    /// f⁰ = 0, as in the papers.
    Zero,
}

/// How each round's tree is scaled before it is added (RGBM Algorithm 2, step 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// learning_rate × tree.
    Shrinkage,
    /// (1/σ) × tree with gradient leaves: monotone for a σ-smooth loss (Theorems 4.1-4.2).
    Constant,
    /// learning_rate × ρ* × tree, ρ* = argmin_ρ Σ ℓ(y, f + ρ·tree).
    LineSearch,
}

/// The boosting algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoosterKind {
    /// Gradient boosting (with the RGBM / SGLB options).
    Gbm,
    /// Regularized gradient boosting over tree families with SRM (Cortes, Mohri & Storcheus 2019).
    Rgb,
}

/// Which parts of a round see only the `subsample` rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubsampleFor {
    /// The whole tree: split search and leaf values (Friedman's stochastic
    /// gradient boosting, LightGBM's bagging).
    #[default]
    Tree,
    /// The split search only; leaf values (and SGLB's leaf noise) come from
    /// every row (CatBoost's Bernoulli bootstrap).
    Split,
}

/// How training sums gradients, hessians, weights and losses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Summation {
    /// Plain `f64` additions in a fixed order: reproducible for the same
    /// rows in the same order, at any thread count.
    #[default]
    Float,
    /// Order-free sums: each round's gradients and hessians are rounded to
    /// a power-of-two grid fine enough for every sum of them to be exact in
    /// `f64`, weights likewise once, and loss sums are exact
    /// (`exact_sum::ExactSum`). The model then does not depend on the order
    /// of the rows or on how they are split among threads or machines.
    Exact,
}

/// RGB's coordinate step along a candidate h (Cortes, Mohri & Storcheus
/// 2019, Algorithm 1 lines 7–8: α = −∇_k L / C_k).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RgbStep {
    /// The paper's experiments: C_k = λ_k · σ (Lemma 4's bound with σ =
    /// max C_Φ), so the family's radius sets the step length.
    Lipschitz,
    /// C_k = σ · mean(h²) (Lemma 3's constant computed on the candidate):
    /// the exact minimiser of the σ-smooth upper bound, which undoes the
    /// projection's scale, so λ_k only bounds the leaves' shape.
    Exact,
}

/// Which member of its family RGB proposes (Algorithm 1, line 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RgbCandidate {
    /// Line 4's argmin over the family under the step rule, grown greedily:
    /// under `Lipschitz` the structure maximising Σ_l G_l² with leaves
    /// −λ·G/‖G‖ on the λ sphere; under `Exact` the structure maximising
    /// Σ_l G_l²/n_l with leaves ∝ −G_l/n_l (the gradient tree).
    Argmin,
    /// A tree grown with `gain` and `leaf` (Newton by default) and scaled
    /// down onto the λ ball when outside it. Not line 4's argmin; RGB files
    /// without a candidate rule were made this way.
    Projected,
}

/// How RGB's candidates pay for their family's complexity Ω_k.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RgbPenalty {
    /// Algorithm 1 line 6: loss after the step + β·Ω_k.
    PerCandidate,
    /// Eq. 7's objective: loss after the step + β·|α|·Ω_k.
    Weighted,
}

/// RGBM's weak-learner selection rule (Lu & Mazumder, section 1.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    /// Type 0: every candidate split (plain gradient boosting).
    Full,
    /// Type 1: t candidate splits (feature, threshold), uniformly without replacement.
    Random,
    /// Type 2: one group of features, uniformly.
    Group,
    /// Type 3: t groups, uniformly without replacement.
    Groups,
}

/// When the candidate set is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectionScope {
    /// Once per boosting round (as in the paper).
    Tree,
    /// Afresh for every node's split search.
    Node,
}

/// t as a count, or as a fraction of the candidates (splits or groups).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SelectionSize {
    Count(usize),
    Fraction(f64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Mean squared error.
    L2,
    Rmse,
    /// Mean absolute error.
    Mae,
    /// Mean Huber loss (the training loss's δ).
    Huber,
    /// Binary cross-entropy of the loss's probability link.
    Logloss,
    /// Binary error rate (raw score > 0 predicts class 1).
    Error,
    /// Area under the ROC curve (ties count one half).
    Auc,
    /// Mean exponential loss.
    Exponential,
    /// Mean smoothed 0-1 loss.
    Sla01,
    /// Multiclass cross-entropy.
    MultiLogloss,
    /// Multiclass error rate (argmax of the scores).
    MultiError,
    /// Mean Gaussian negative log-likelihood (loss = gaussian).
    GaussianNll,
    /// Mean absolute error of loss = absolute_error (same value as mae).
    AbsoluteError,
    /// Mean pinball loss of loss = quantile's alpha.
    Quantile,
    /// Mean Poisson negative log-likelihood e^f − y·f.
    Poisson,
    /// Mean Gamma negative log-likelihood y·e^(−f) + f.
    Gamma,
    /// Mean Tweedie negative log-likelihood of the loss's variance power.
    Tweedie,
    /// Mean NDCG over the query groups, at `eval_at` positions (all when unset).
    Ndcg,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::L2 => "l2",
            Metric::Rmse => "rmse",
            Metric::Mae => "mae",
            Metric::Huber => "huber",
            Metric::Logloss => "logloss",
            Metric::Error => "error",
            Metric::Auc => "auc",
            Metric::Exponential => "exponential",
            Metric::Sla01 => "sla01",
            Metric::MultiLogloss => "multi_logloss",
            Metric::MultiError => "multi_error",
            Metric::GaussianNll => "gaussian_nll",
            Metric::AbsoluteError => "absolute_error",
            Metric::Quantile => "quantile",
            Metric::Poisson => "poisson",
            Metric::Gamma => "gamma",
            Metric::Tweedie => "tweedie",
            Metric::Ndcg => "ndcg",
        }
    }

    pub const ALL: [Metric; 18] = [
        Metric::L2,
        Metric::Rmse,
        Metric::Mae,
        Metric::Huber,
        Metric::Logloss,
        Metric::Error,
        Metric::Auc,
        Metric::Exponential,
        Metric::Sla01,
        Metric::MultiLogloss,
        Metric::MultiError,
        Metric::GaussianNll,
        Metric::AbsoluteError,
        Metric::Quantile,
        Metric::Poisson,
        Metric::Gamma,
        Metric::Tweedie,
        Metric::Ndcg,
    ];

    /// The metrics that apply to `loss` with `n_classes` (those
    /// `check_loss` accepts), its default first.
    pub fn for_loss(loss: Loss, n_classes: Option<usize>) -> Vec<Metric> {
        let default = Self::default_for(loss);
        default
            .into_iter()
            .chain(
                Self::ALL
                    .into_iter()
                    .filter(|&m| Some(m) != default && m.check_loss(loss, n_classes).is_ok()),
            )
            .collect()
    }

    /// The metric recorded when the user names none (a custom loss has none).
    pub fn default_for(loss: Loss) -> Option<Metric> {
        Some(match loss {
            Loss::Squared => Metric::L2,
            Loss::Huber => Metric::Huber,
            Loss::Logistic => Metric::Logloss,
            Loss::Exponential => Metric::Exponential,
            Loss::Sla01 => Metric::Sla01,
            Loss::Softmax => Metric::MultiLogloss,
            Loss::Gaussian => Metric::GaussianNll,
            Loss::AbsoluteError => Metric::AbsoluteError,
            Loss::Quantile => Metric::Quantile,
            Loss::Poisson => Metric::Poisson,
            Loss::Gamma => Metric::Gamma,
            Loss::Tweedie => Metric::Tweedie,
            Loss::LambdaRank => Metric::Ndcg,
            Loss::Custom => return None,
        })
    }

    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Auc | Metric::Ndcg)
    }

    /// Refuses metrics that do not apply to the training loss's predictions.
    /// A custom loss has no link, so only metrics of raw scores apply: of
    /// the score itself (regression), of its sign or ranks (two classes),
    /// of the largest score (more classes).
    pub fn check_loss(self, loss: Loss, n_classes: Option<usize>) -> Result<()> {
        let ok = match self {
            _ if loss == Loss::Custom => match n_classes {
                None => matches!(self, Metric::L2 | Metric::Rmse | Metric::Mae),
                Some(2) => matches!(self, Metric::Error | Metric::Auc),
                Some(_) => self == Metric::MultiError,
            },
            // Of the predicted mean: with loss = gaussian the first score
            // block, with a log link e^f.
            Metric::L2 | Metric::Rmse | Metric::Mae => loss.is_regression(),
            Metric::Huber => loss == Loss::Huber,
            Metric::Logloss | Metric::Error | Metric::Auc => loss.is_binary(),
            Metric::Exponential => loss == Loss::Exponential,
            Metric::Sla01 => loss == Loss::Sla01,
            Metric::MultiLogloss | Metric::MultiError => loss == Loss::Softmax,
            Metric::GaussianNll => loss == Loss::Gaussian,
            Metric::AbsoluteError => loss == Loss::AbsoluteError,
            Metric::Quantile => loss == Loss::Quantile,
            Metric::Poisson => loss == Loss::Poisson,
            Metric::Gamma => loss == Loss::Gamma,
            Metric::Tweedie => loss == Loss::Tweedie,
            Metric::Ndcg => loss == Loss::LambdaRank,
        };
        if ok {
            Ok(())
        } else {
            Err(RgbmError::param(
                "eval_metric",
                format!(
                    "metric {:?} does not apply to loss {:?}",
                    self.name(),
                    format!("{loss:?}").to_lowercase()
                ),
            ))
        }
    }
}
