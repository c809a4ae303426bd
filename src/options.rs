//! The names a user chooses among: losses, gain and leaf modes, step rules,
//! selection rules, boosters and metrics, with the facts that relate them
//! (which metric applies to which loss). Everything else builds on these.
use serde::{Deserialize, Serialize};

use crate::error::{Result, RgbmError};

/// An enum of the names a user writes: each variant with its name, once.
/// Serde reads and writes that name, `name()` returns it, and `NAMES` /
/// `ALL` list every variant in order (the parameter schema's choices).
macro_rules! named_choices {
    ($(#[$meta:meta])* pub enum $enum:ident {
        $($(#[$vmeta:meta])* $variant:ident = $name:literal,)+
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $enum {
            $($(#[$vmeta])* #[serde(rename = $name)] $variant,)+
        }

        impl $enum {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$enum] = &[$($enum::$variant),+];
            /// Every variant's name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The name users write (and model files hold).
            pub fn name(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)+
                }
            }
        }
    };
}

named_choices! {
    pub enum Loss {
        Squared = "squared",
        Huber = "huber",
        Logistic = "logistic",
        Exponential = "exponential",
        /// SGLB's smoothed 0-1 loss.
        Sla01 = "sla01",
        /// Multiclass cross-entropy over `n_classes` scores per row.
        Softmax = "softmax",
        /// Gaussian negative log-likelihood: a mean and a log σ per row.
        Gaussian = "gaussian",
        /// |y − f|; leaves are re-estimated as weighted medians.
        AbsoluteError = "absolute_error",
        /// The pinball loss of the `alpha`-quantile; leaves are re-estimated as
        /// weighted α-quantiles.
        Quantile = "quantile",
        /// Poisson counts, log link.
        Poisson = "poisson",
        /// Gamma amounts (y > 0), log link.
        Gamma = "gamma",
        /// Tweedie amounts with exact zeros, log link.
        Tweedie = "tweedie",
        /// A loss known only through the per-row gradients and hessians a
        /// training `Monitor` supplies each round (in Python, a callable). It
        /// has no value, no σ and no link: the fit starts from 0, predictions
        /// are raw scores. Regression without `n_classes`, else K classes.
        Custom = "custom",
        /// Learning to rank with LambdaRank gradients of NDCG over query groups;
        /// labels are integer relevance grades, predictions raw scores.
        LambdaRank = "lambdarank",
    }
}

impl Loss {
    /// The task the loss serves: "regression", "binary", "multiclass",
    /// "ranking", or "custom" (decided by `n_classes`).
    pub fn task(self) -> &'static str {
        match self {
            Loss::Softmax => "multiclass",
            Loss::LambdaRank => "ranking",
            Loss::Custom => "custom",
            _ if self.is_binary() => "binary",
            _ => "regression",
        }
    }

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

    /// The losses a multi-output fit (`n_targets`) applies per target:
    /// those of one score per row whose gradient at a row needs only that
    /// row's label and score.
    pub const TARGETS: [Loss; 8] = [
        Loss::Squared,
        Loss::Huber,
        Loss::AbsoluteError,
        Loss::Quantile,
        Loss::Poisson,
        Loss::Gamma,
        Loss::Tweedie,
        Loss::Logistic,
    ];

    /// Losses whose leaves are re-estimated from their rows' residuals after
    /// the tree is grown (the gradient carries no step length).
    pub fn renews_leaves(self) -> bool {
        matches!(self, Loss::AbsoluteError | Loss::Quantile)
    }
}

named_choices! {
    /// How split gain (and leaf values) are computed: from the second-order
    /// expansion (`Newton`) or from the least-squares fit of the negative
    /// gradient (`Gradient`). Sun, Zhang & Zhou (2014), Table 1.
    pub enum Mode {
        Newton = "newton",
        Gradient = "gradient",
    }
}

named_choices! {
    pub enum Init {
        /// The constant that minimises the training loss (mean, log-odds, ...).
        Optimal = "optimal",
        /// f⁰ = 0, as in the papers.
        Zero = "zero",
    }
}

named_choices! {
    /// How each round's tree is scaled before it is added (RGBM Algorithm 2, step 4).
    pub enum Step {
        /// learning_rate × tree.
        Shrinkage = "shrinkage",
        /// (1/σ) × tree with gradient leaves: monotone for a σ-smooth loss (Theorems 4.1-4.2).
        Constant = "constant",
        /// learning_rate × ρ* × tree, ρ* = argmin_ρ Σ ℓ(y, f + ρ·tree).
        LineSearch = "line_search",
    }
}

named_choices! {
    /// The boosting algorithm.
    pub enum BoosterKind {
        /// Gradient boosting (with the RGBM / SGLB options).
        Gbm = "gbm",
        /// Regularized gradient boosting over tree families with SRM (Cortes, Mohri & Storcheus 2019).
        Rgb = "rgb",
    }
}

named_choices! {
    /// Which parts of a round see only the `subsample` rows.
    pub enum SubsampleFor {
        /// The whole tree: split search and leaf values (Friedman's stochastic
        /// gradient boosting, LightGBM's bagging).
        Tree = "tree",
        /// The split search only; leaf values (and SGLB's leaf noise) come from
        /// every row (CatBoost's Bernoulli bootstrap).
        Split = "split",
    }
}

named_choices! {
    /// How training sums gradients, hessians, weights and losses.
    pub enum Summation {
        /// Plain `f64` additions in a fixed order: reproducible for the same
        /// rows in the same order, at any thread count.
        Float = "float",
        /// Order-free sums: each round's gradients and hessians are rounded to
        /// a power-of-two grid fine enough for every sum of them to be exact in
        /// `f64`, weights likewise once, and loss sums are exact
        /// (`exact_sum::ExactSum`). The model then does not depend on the order
        /// of the rows or on how they are split among threads or machines.
        Exact = "exact",
    }
}

named_choices! {
    /// RGB's coordinate step along a candidate h (Cortes, Mohri & Storcheus
    /// 2019, Algorithm 1 lines 7–8: α = −∇_k L / C_k).
    pub enum RgbStep {
        /// The paper's experiments: C_k = λ_k · σ (Lemma 4's bound with σ =
        /// max C_Φ), so the family's radius sets the step length.
        Lipschitz = "lipschitz",
        /// C_k = σ · mean(h²) (Lemma 3's constant computed on the candidate):
        /// the exact minimiser of the σ-smooth upper bound, which undoes the
        /// projection's scale, so λ_k only bounds the leaves' shape.
        Exact = "exact",
    }
}

named_choices! {
    /// Which member of its family RGB proposes (Algorithm 1, line 4).
    pub enum RgbCandidate {
        /// Line 4's argmin over the family under the step rule, grown greedily:
        /// under `Lipschitz` the structure maximising Σ_l G_l² with leaves
        /// −λ·G/‖G‖ on the λ sphere; under `Exact` the structure maximising
        /// Σ_l G_l²/n_l with leaves ∝ −G_l/n_l (the gradient tree).
        Argmin = "argmin",
        /// A tree grown with `gain` and `leaf` (Newton by default) and scaled
        /// down onto the λ ball when outside it. Not line 4's argmin; RGB files
        /// without a candidate rule were made this way.
        Projected = "projected",
    }
}

named_choices! {
    /// How RGB's candidates pay for their family's complexity Ω_k.
    pub enum RgbPenalty {
        /// Algorithm 1 line 6: loss after the step + β·Ω_k.
        PerCandidate = "per_candidate",
        /// Eq. 7's objective: loss after the step + β·|α|·Ω_k.
        Weighted = "weighted",
    }
}

named_choices! {
    /// RGBM's weak-learner selection rule (Lu & Mazumder, section 1.2.1).
    pub enum Selection {
        /// Type 0: every candidate split (plain gradient boosting).
        Full = "full",
        /// Type 1: t candidate splits (feature, threshold), uniformly without replacement.
        Random = "random",
        /// Type 2: one group of features, uniformly.
        Group = "group",
        /// Type 3: t groups, uniformly without replacement.
        Groups = "groups",
    }
}

named_choices! {
    /// When the candidate set is drawn.
    pub enum SelectionScope {
        /// Once per boosting round (as in the paper).
        Tree = "tree",
        /// Afresh for every node's split search.
        Node = "node",
    }
}

/// t as a count, or as a fraction of the candidates (splits or groups).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SelectionSize {
    Count(usize),
    Fraction(f64),
}

named_choices! {
    pub enum Metric {
        /// Mean squared error.
        L2 = "l2",
        Rmse = "rmse",
        /// Mean absolute error.
        Mae = "mae",
        /// Mean Huber loss (the training loss's δ).
        Huber = "huber",
        /// Binary cross-entropy of the loss's probability link.
        Logloss = "logloss",
        /// Binary error rate (raw score > 0 predicts class 1).
        Error = "error",
        /// Area under the ROC curve (ties count one half).
        Auc = "auc",
        /// Mean exponential loss.
        Exponential = "exponential",
        /// Mean smoothed 0-1 loss.
        Sla01 = "sla01",
        /// Multiclass cross-entropy.
        MultiLogloss = "multi_logloss",
        /// Multiclass error rate (argmax of the scores).
        MultiError = "multi_error",
        /// Mean Gaussian negative log-likelihood (loss = gaussian).
        GaussianNll = "gaussian_nll",
        /// Mean absolute error of loss = absolute_error (same value as mae).
        AbsoluteError = "absolute_error",
        /// Mean pinball loss of loss = quantile's alpha.
        Quantile = "quantile",
        /// Mean Poisson negative log-likelihood e^f − y·f.
        Poisson = "poisson",
        /// Mean Gamma negative log-likelihood y·e^(−f) + f.
        Gamma = "gamma",
        /// Mean Tweedie negative log-likelihood of the loss's variance power.
        Tweedie = "tweedie",
        /// Mean NDCG over the query groups, at `eval_at` positions (all when unset).
        Ndcg = "ndcg",
    }
}

impl Metric {
    /// The metrics that apply to `loss` with `n_classes` (those
    /// `check_loss` accepts), its default first.
    pub fn for_loss(loss: Loss, n_classes: Option<usize>) -> Vec<Metric> {
        let default = Self::default_for(loss);
        default
            .into_iter()
            .chain(
                Self::ALL
                    .iter()
                    .copied()
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
                    loss.name()
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_loss_has_the_task_its_labels_say() {
        for &loss in Loss::ALL {
            let task = loss.task();
            assert_eq!(task == "regression", loss.is_regression(), "{loss:?}");
            assert_eq!(task == "binary", loss.is_binary(), "{loss:?}");
        }
        assert_eq!(Loss::Softmax.task(), "multiclass");
        assert_eq!(Loss::LambdaRank.task(), "ranking");
    }

    #[test]
    fn names_round_trip_through_serde() {
        for &loss in Loss::ALL {
            let text = serde_json::to_string(&loss).unwrap();
            assert_eq!(text, format!("\"{}\"", loss.name()));
            assert_eq!(serde_json::from_str::<Loss>(&text).unwrap(), loss);
        }
        assert_eq!(Loss::NAMES.len(), Loss::ALL.len());
    }
}
