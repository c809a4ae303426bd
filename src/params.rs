//! Training parameters: names and defaults follow DESIGN.md's public API.
use serde::{Deserialize, Serialize};

use crate::error::{Result, RgbmError};
use crate::metric::Metric;

/// Upper limit on `n_classes` (one tree per class per round).
pub const MAX_CLASSES: usize = 10_000;

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
}

impl Loss {
    /// Losses whose labels must be 0/1.
    pub fn is_binary(self) -> bool {
        matches!(self, Loss::Logistic | Loss::Exponential | Loss::Sla01)
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
    pub loss: Loss,
    /// Classes K of `loss = softmax` (labels 0..K−1); unset for other losses.
    pub n_classes: Option<usize>,
    pub logistic_reg: f64,
    pub clamp: Option<f64>,
    pub huber_delta: f64,
    /// ς of the smoothed 0-1 loss.
    pub sla_scale: f64,
    pub gain: Mode,
    pub leaf: Mode,
    /// Each row is in a round's sample with this probability; an empty draw
    /// takes one row at random.
    pub subsample: f64,
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
    /// SGLB: Gaussian noise in split choice and leaf values (Ustimenko & Prokhorenkova 2021).
    pub langevin: bool,
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
            loss: Loss::Squared,
            n_classes: None,
            logistic_reg: 0.0,
            clamp: None,
            huber_delta: 1.0,
            sla_scale: 0.1,
            gain: Mode::Newton,
            leaf: Mode::Newton,
            subsample: 1.0,
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
            langevin: false,
            temperature: 1e4,
            shrink_rate: None,
            init: Init::Optimal,
            random_state: 0,
            n_jobs: None,
            eval_metric: None,
            early_stopping_rounds: None,
        }
    }
}

fn check(ok: bool, name: &str, reason: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(RgbmError::param(name, reason()))
    }
}

impl BoosterParams {
    /// Parse from JSON, rejecting unknown keys, then validate.
    pub fn from_json(text: &str) -> Result<Self> {
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
        p.validate()?;
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

    /// Whether trees grow best-first (leaf-limited) rather than depth-wise.
    pub fn best_first(&self) -> bool {
        self.max_leaves.is_some()
    }

    pub fn validate(&self) -> Result<()> {
        check(self.n_estimators >= 1, "n_estimators", || {
            format!("must be >= 1, got {}", self.n_estimators)
        })?;
        check(
            self.learning_rate.is_finite() && self.learning_rate > 0.0,
            "learning_rate",
            || format!("must be a finite number > 0, got {}", self.learning_rate),
        )?;
        if let Some(d) = self.max_depth {
            check((1..=64).contains(&d), "max_depth", || {
                format!("must be in [1, 64] or None, got {d}")
            })?;
        }
        if let Some(l) = self.max_leaves {
            check((2..=1 << 20).contains(&l), "max_leaves", || {
                format!("must be in [2, 1048576] or None, got {l}")
            })?;
        }
        check(
            self.max_depth.is_some()
                || self.max_leaves.is_some()
                || self.booster == BoosterKind::Rgb,
            "max_depth",
            || "max_depth=None needs max_leaves to bound the tree".to_string(),
        )?;
        check((2..=65535).contains(&self.max_bins), "max_bins", || {
            format!("must be in [2, 65535], got {}", self.max_bins)
        })?;
        check(self.min_samples_leaf >= 1, "min_samples_leaf", || {
            format!("must be >= 1, got {}", self.min_samples_leaf)
        })?;
        let nonneg = |v: f64, name: &str| {
            check(v.is_finite() && v >= 0.0, name, || {
                format!("must be a finite number >= 0, got {v}")
            })
        };
        nonneg(self.min_child_weight, "min_child_weight")?;
        nonneg(self.reg_lambda, "reg_lambda")?;
        nonneg(self.min_split_gain, "min_split_gain")?;
        nonneg(self.logistic_reg, "logistic_reg")?;
        check(
            self.huber_delta.is_finite() && self.huber_delta > 0.0,
            "huber_delta",
            || format!("must be a finite number > 0, got {}", self.huber_delta),
        )?;
        if let Some(rho) = self.clamp {
            check(rho > 0.0 && rho < 0.5, "clamp", || {
                format!("must be in (0, 0.5) or None, got {rho}")
            })?;
            check(self.loss == Loss::Logistic, "clamp", || {
                format!(
                    "probability clamping applies to the logistic loss only, not {:?}",
                    self.loss
                )
            })?;
        }
        check(
            self.subsample > 0.0 && self.subsample <= 1.0,
            "subsample",
            || format!("must be in (0, 1], got {}", self.subsample),
        )?;
        if self.step == Step::LineSearch {
            // ν damps the exact line minimum ρ*; ν > 1 steps past it by
            // construction (ν = 50 diverged to scores of 1e160 within 100 rounds).
            check(self.learning_rate <= 1.0, "learning_rate", || {
                format!(
                    "step='line_search' scales the exact line minimum by learning_rate, which must be <= 1, got {:?}",
                    self.learning_rate
                )
            })?;
        }
        if self.step == Step::Constant {
            check(self.leaf == Mode::Gradient, "step", || {
                "step='constant' (the 1/sigma step of RGBM) is proven for gradient leaves only: set leaf='gradient'".to_string()
            })?;
            check(
                !matches!(self.loss, Loss::Exponential | Loss::Gaussian),
                "step",
                || {
                    format!(
                        "step='constant' needs a smooth loss; the {} loss has no smoothness constant sigma",
                        format!("{:?}", self.loss).to_lowercase()
                    )
                },
            )?;
        }
        match (self.selection, self.selection_size) {
            (Selection::Random | Selection::Groups, None) => {
                return Err(RgbmError::param(
                    "selection_size",
                    format!(
                        "selection={:?} needs selection_size (t)",
                        format!("{:?}", self.selection).to_lowercase()
                    ),
                ));
            }
            (Selection::Full | Selection::Group, Some(_)) => {
                return Err(RgbmError::param(
                    "selection_size",
                    format!(
                        "selection_size has no effect with selection={:?}; use 'random' or 'groups'",
                        format!("{:?}", self.selection).to_lowercase()
                    ),
                ));
            }
            (_, Some(SelectionSize::Count(0))) => {
                return Err(RgbmError::param("selection_size", "must be >= 1"));
            }
            (_, Some(SelectionSize::Fraction(f))) if !(f > 0.0 && f <= 1.0) => {
                return Err(RgbmError::param(
                    "selection_size",
                    format!("a fraction must be in (0, 1], got {f}"),
                ));
            }
            _ => {}
        }
        if self.groups.is_some() && !matches!(self.selection, Selection::Group | Selection::Groups)
        {
            return Err(RgbmError::param(
                "groups",
                "groups are used by selection='group' or 'groups' only",
            ));
        }
        if self.selection == Selection::Full && self.selection_scope == SelectionScope::Node {
            return Err(RgbmError::param(
                "selection_scope",
                "selection='full' searches every split; 'node' scope has no effect",
            ));
        }
        check(
            self.sla_scale.is_finite() && self.sla_scale > 0.0,
            "sla_scale",
            || format!("must be a finite number > 0, got {}", self.sla_scale),
        )?;
        if self.loss == Loss::Sla01 {
            check(
                self.gain == Mode::Gradient && self.leaf == Mode::Gradient,
                "loss",
                || {
                    "loss='sla01' has a hessian that can be negative: use gain='gradient' and leaf='gradient'".to_string()
                },
            )?;
        }
        check(
            self.temperature.is_finite() && self.temperature > 0.0,
            "temperature",
            || format!("must be a finite number > 0, got {}", self.temperature),
        )?;
        let gamma = self.shrink_rate();
        check(
            gamma.is_finite() && gamma >= 0.0 && gamma * self.learning_rate < 1.0,
            "shrink_rate",
            || {
                format!(
                    "shrink_rate * learning_rate must be in [0, 1), got {gamma} * {}",
                    self.learning_rate
                )
            },
        )?;
        if self.langevin {
            let c = crate::booster::sglb::noise_scale(self.learning_rate, self.temperature);
            check(c.is_finite(), "temperature", || {
                format!(
                    "langevin=True: the noise scale sqrt(2 / (learning_rate * temperature)) overflows for learning_rate={:?} and temperature={:?}; use a larger temperature",
                    self.learning_rate, self.temperature
                )
            })?;
            check(
                self.leaf == Mode::Gradient || self.min_child_weight > 0.0 || self.reg_lambda > 0.0,
                "min_child_weight",
                || {
                    "langevin=True with leaf='newton' needs min_child_weight > 0 or reg_lambda > 0: the leaf noise has variance c^2 / (H + reg_lambda), unbounded as a leaf's hessian sum H goes to 0".to_string()
                },
            )?;
            check(self.step == Step::Shrinkage, "step", || {
                "langevin=True takes learning_rate as the Langevin step: use step='shrinkage'"
                    .to_string()
            })?;
        }
        if gamma > 0.0 {
            check(self.step == Step::Shrinkage, "shrink_rate", || {
                "model shrinkage F <- (1 - shrink_rate*learning_rate)F is defined for step='shrinkage' only".to_string()
            })?;
        }
        check(self.rgb_candidates >= 1, "rgb_candidates", || {
            format!("must be >= 1, got {}", self.rgb_candidates)
        })?;
        check(
            self.rgb_beta.is_finite() && self.rgb_beta >= 0.0,
            "rgb_beta",
            || format!("must be a finite number >= 0, got {}", self.rgb_beta),
        )?;
        if let Some(nodes) = &self.rgb_nodes {
            check(
                !nodes.is_empty() && nodes.iter().all(|&k| (1..=1 << 20).contains(&k)),
                "rgb_nodes",
                || {
                    format!(
                        "must be a non-empty list of internal-node counts in [1, 1048576], got {nodes:?}"
                    )
                },
            )?;
        }
        if let Some(lambdas) = &self.rgb_lambdas {
            check(
                !lambdas.is_empty() && lambdas.iter().all(|&l| l.is_finite() && l > 0.0),
                "rgb_lambdas",
                || format!("must be a non-empty list of finite numbers > 0, got {lambdas:?}"),
            )?;
        }
        if self.booster == BoosterKind::Rgb {
            let refuse = |name: &str, why: &str| {
                Err(RgbmError::param(name, format!("booster='rgb': {why}")))
            };
            if matches!(self.loss, Loss::Exponential | Loss::Sla01 | Loss::Gaussian) {
                return refuse(
                    "loss",
                    "the coordinate step needs a convex loss with a smoothness constant sigma (not exponential, sla01 or gaussian)",
                );
            }
            if self.langevin {
                return refuse("langevin", "Langevin noise is not defined for RGB");
            }
            if self.max_leaves.is_some() {
                return refuse(
                    "max_leaves",
                    "tree sizes come from the families (rgb_nodes); leave max_leaves=None",
                );
            }
            if self.selection != Selection::Full {
                return refuse(
                    "selection",
                    "RGB draws tree families, not RGBM candidate sets; use selection='full'",
                );
            }
            if self.step != Step::Shrinkage || self.shrink_rate() > 0.0 {
                return refuse(
                    "step",
                    "RGB takes the coordinate step alpha = -<g,h>/(sigma |h|^2); use step='shrinkage' and no shrink_rate",
                );
            }
        } else if self.rgb_nodes.is_some() || self.rgb_lambdas.is_some() {
            return Err(RgbmError::param(
                "rgb_nodes",
                "rgb_nodes / rgb_lambdas are used by booster='rgb' only",
            ));
        }
        if let Some(n) = self.n_jobs {
            check(n >= 1, "n_jobs", || {
                format!("must be >= 1 or None, got {n}")
            })?;
        }
        match (self.loss, self.n_classes) {
            (Loss::Softmax, None) => {
                return Err(RgbmError::param(
                    "n_classes",
                    "loss='softmax' needs n_classes",
                ));
            }
            (Loss::Softmax, Some(k)) => check((2..=MAX_CLASSES).contains(&k), "n_classes", || {
                format!("must be in [2, {MAX_CLASSES}], got {k}")
            })?,
            (_, Some(_)) => {
                return Err(RgbmError::param(
                    "n_classes",
                    "n_classes is used by loss='softmax' only",
                ));
            }
            _ => {}
        }

        if let Some(metrics) = &self.eval_metric {
            check(!metrics.is_empty(), "eval_metric", || {
                "must name at least one metric".to_string()
            })?;
            for m in metrics {
                m.check_loss(self.loss)?;
            }
        }
        if let Some(r) = self.early_stopping_rounds {
            check(r >= 1, "early_stopping_rounds", || {
                format!("must be >= 1 or None, got {r}")
            })?;
        }
        Ok(())
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
    fn langevin_noise_must_be_finite_and_bounded() {
        let sglb =
            |json: &str| BoosterParams::from_json(&format!(r#"{{"langevin": true, {json}}}"#));
        let e = sglb(r#""temperature": 5e-324"#).unwrap_err();
        assert!(e.to_string().contains("temperature"), "{e}");
        assert!(sglb(r#""temperature": 1e-3"#).is_ok());
        let e = sglb(r#""min_child_weight": 0.0"#).unwrap_err();
        assert!(e.to_string().contains("min_child_weight"), "{e}");
        assert!(sglb(r#""min_child_weight": 0.0, "reg_lambda": 1.0"#).is_ok());
        assert!(BoosterParams::from_json(r#"{"min_child_weight": 0.0}"#).is_ok());
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
