//! `BoosterParams::validate`: each parameter within its bounds (`spec`),
//! then the rules that relate parameters, one function per family.
use super::BoosterParams;
use crate::error::{Result, RgbmError};
use crate::options::{
    BoosterKind, Loss, Mode, RgbCandidate, Selection, SelectionScope, Step, SubsampleFor, Summation,
};

fn check(ok: bool, name: &str, reason: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(RgbmError::param(name, reason()))
    }
}

impl BoosterParams {
    pub fn validate(&self) -> Result<()> {
        super::table::check_bounds(self)?;
        self.check_tree()?;
        self.check_constraints()?;
        self.check_loss()?;
        self.check_selection()?;
        self.check_step()?;
        self.check_sglb()?;
        self.check_rgb()?;
        self.check_summation()?;
        self.check_leaf_reg()?;
        self.check_quantized()?;
        self.check_evaluation()
    }

    /// `use_quantized_grad` where a method grows its trees otherwise.
    fn check_quantized(&self) -> Result<()> {
        if !self.use_quantized_grad {
            return Ok(());
        }
        check(
            self.booster != BoosterKind::Rgb,
            "use_quantized_grad",
            || {
                "booster='rgb' grows its candidates on the exact gradients; use_quantized_grad applies to booster='gbm'".to_string()
            },
        )?;
        check(!self.langevin, "use_quantized_grad", || {
            "langevin=True adds its own noise to the gradients; use_quantized_grad is not available with it".to_string()
        })
    }

    /// `reg_alpha`, `max_delta_step` and `path_smooth` where a method has
    /// no place for them.
    fn check_leaf_reg(&self) -> Result<()> {
        let set: Vec<&str> = [
            ("reg_alpha", self.reg_alpha),
            ("max_delta_step", self.max_delta_step),
            ("path_smooth", self.path_smooth),
        ]
        .into_iter()
        .filter(|(_, v)| *v != 0.0)
        .map(|(name, _)| name)
        .collect();
        let Some(&first) = set.first() else {
            return Ok(());
        };
        if self.langevin {
            return Err(RgbmError::param(
                first,
                format!(
                    "langevin=True: SGLB's leaf noise c^2 / (H + reg_lambda) is the Langevin step of the L2-penalised loss; \
                     {first} would change the leaf values without changing the noise to match, so the chain would not sample \
                     what SGLB samples"
                ),
            ));
        }
        if self.loss.renews_leaves() {
            return Err(RgbmError::param(
                first,
                format!(
                    "loss={:?} replaces every leaf value by a quantile of its rows' residuals, which {first} does not enter",
                    self.loss.name()
                ),
            ));
        }
        if self.booster == BoosterKind::Rgb && self.rgb_candidate() == RgbCandidate::Argmin {
            return Err(RgbmError::param(
                first,
                format!(
                    "booster='rgb' with rgb_candidate='argmin': the candidate's leaves -lambda_k G / (m sigma) are fixed by the \
                     family radius, with no place for {first}; it applies with rgb_candidate='projected'"
                ),
            ));
        }
        if self.path_smooth == 0.0 {
            return Ok(());
        }
        let refuse = |why: &str| Err(RgbmError::param("path_smooth", why.to_string()));
        if self.booster == BoosterKind::Rgb {
            return refuse(
                "booster='rgb' grows each candidate once and reads its smaller members off it, whose leaves have other parents",
            );
        }
        if self.subsample_for() == SubsampleFor::Split {
            return refuse(
                "subsample_for='split' sets the leaves from every row after the tree is grown from the sample; \
                 smoothing towards the sampled parents' values would mix the two",
            );
        }
        if self.step == Step::Constant {
            return refuse(
                "step='constant': the 1/sigma step decreases the loss for leaves that shrink the mean negative gradient \
                 towards 0, which a pull towards the parent's value does not",
            );
        }
        Ok(())
    }

    fn check_tree(&self) -> Result<()> {
        let mut cats = self.categorical().to_vec();
        cats.sort_unstable();
        check(
            cats.windows(2).all(|w| w[0] != w[1]),
            "categorical_features",
            || "lists a feature more than once".to_string(),
        )?;
        check(
            self.max_depth.is_some()
                || self.max_leaves.is_some()
                || self.booster == BoosterKind::Rgb,
            "max_depth",
            || "max_depth=None needs max_leaves to bound the tree".to_string(),
        )?;
        if let (Some(depth), Some(leaves)) = (self.max_depth, self.max_leaves) {
            // Depths of 64 and beyond bound nothing a leaf count can reach.
            let most = 1usize.checked_shl(depth as u32).unwrap_or(usize::MAX);
            check(leaves <= most, "max_leaves", || {
                format!(
                    "max_leaves={leaves} cannot be reached with max_depth={depth} (at most {most} leaves)"
                )
            })?;
        }
        Ok(())
    }

    /// Monotone and interaction constraints, as far as they can be judged
    /// without the data (their lengths and indices are checked at fit).
    fn check_constraints(&self) -> Result<()> {
        if let Some(&j) = self
            .categorical()
            .iter()
            .find(|&&j| self.monotone().get(j).is_some_and(|&d| d != 0))
        {
            return Err(RgbmError::param(
                "monotone_constraints",
                format!(
                    "feature {j} is categorical: monotone constraints apply to numeric features only"
                ),
            ));
        }
        for (k, set) in self.interaction_constraints.iter().flatten().enumerate() {
            let mut sorted = set.clone();
            sorted.sort_unstable();
            check(
                sorted.windows(2).all(|w| w[0] != w[1]),
                "interaction_constraints",
                || format!("set {k} lists a feature more than once"),
            )?;
        }
        Ok(())
    }

    fn check_loss(&self) -> Result<()> {
        check(
            self.logistic_reg == 0.0 || self.loss == Loss::Logistic,
            "logistic_reg",
            || {
                format!(
                    "logistic_reg applies to the binary logistic loss only, not {:?}",
                    self.loss.name()
                )
            },
        )?;
        if self.clamp.is_some() {
            check(self.loss == Loss::Logistic, "clamp", || {
                format!(
                    "probability clamping applies to the logistic loss only, not {:?}",
                    self.loss
                )
            })?;
        }
        check(
            self.alpha.is_none() || self.loss == Loss::Quantile,
            "alpha",
            || {
                format!(
                    "alpha is used by loss='quantile' only, not {:?}",
                    self.loss.name()
                )
            },
        )?;
        check(
            self.tweedie_variance_power.is_none() || self.loss == Loss::Tweedie,
            "tweedie_variance_power",
            || {
                format!(
                    "tweedie_variance_power is used by loss='tweedie' only, not {:?}",
                    self.loss.name()
                )
            },
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
            self.lambdarank_truncation_level.is_none() || self.loss == Loss::LambdaRank,
            "lambdarank_truncation_level",
            || {
                format!(
                    "lambdarank_truncation_level is used by loss='lambdarank' only, not {:?}",
                    self.loss.name()
                )
            },
        )?;
        check(
            self.eval_at.is_none() || self.loss == Loss::LambdaRank,
            "eval_at",
            || {
                format!(
                    "eval_at sets the positions of the ranking metric ndcg, which loss={:?} does not record",
                    self.loss.name()
                )
            },
        )?;
        if matches!(self.loss, Loss::Custom | Loss::LambdaRank) {
            // Rules that need the loss's value: refused, not approximated.
            let which = if self.loss == Loss::Custom {
                "a custom loss"
            } else {
                "loss='lambdarank'"
            };
            check(self.step != Step::LineSearch, "step", || {
                format!(
                    "step='line_search' minimises the loss's value, which {which} does not give; use step='shrinkage'"
                )
            })?;
            check(!self.record_train_loss, "record_train_loss", || {
                format!(
                    "{which} has no value to record; evaluate a metric on the training data instead"
                )
            })?;
        }
        self.check_targets()?;
        match (self.loss, self.n_classes) {
            (Loss::Softmax, None) => Err(RgbmError::param(
                "n_classes",
                "loss='softmax' needs n_classes",
            )),
            (Loss::Softmax | Loss::Custom, Some(_)) | (_, None) => Ok(()),
            (_, Some(_)) => Err(RgbmError::param(
                "n_classes",
                "n_classes is used by loss='softmax' (or a custom loss) only",
            )),
        }
    }

    /// Several targets: one point loss per target, each target's trees
    /// grown on its own gradients; what needs one value across targets
    /// (the line search, RGB's coordinate choice) or sums per shard is
    /// refused.
    fn check_targets(&self) -> Result<()> {
        if let Some(alphas) = &self.alphas {
            check(
                self.loss == Loss::Quantile && self.n_targets == Some(alphas.len()),
                "alphas",
                || "alphas needs loss='quantile' and n_targets = their count".to_string(),
            )?;
            check(self.alpha.is_none(), "alpha", || {
                "give alpha or alphas, not both".to_string()
            })?;
            check(
                alphas.iter().all(|&a| a > 0.0 && a < 1.0)
                    && alphas.windows(2).all(|w| w[0] < w[1]),
                "alphas",
                || format!("alphas must be strictly increasing in (0, 1), got {alphas:?}"),
            )?;
        }
        if self.n_targets.is_none() {
            return Ok(());
        }
        check(Loss::TARGETS.contains(&self.loss), "n_targets", || {
            format!(
                "n_targets applies to losses {} only, not {:?}",
                Loss::TARGETS.map(|l| format!("{:?}", l.name())).join(", "),
                self.loss.name()
            )
        })?;
        check(self.step != Step::LineSearch, "step", || {
            "step='line_search' takes one step for all outputs; with several targets (n_targets) use step='shrinkage'".to_string()
        })?;
        check(self.booster != BoosterKind::Rgb, "booster", || {
            "booster='rgb' is not available with several targets (n_targets)".to_string()
        })?;
        check(self.summation() != Summation::Exact, "summation", || {
            "summation='exact' is not available with several targets (n_targets)".to_string()
        })
    }

    /// Whether `colsample_bylevel` or `colsample_bynode` samples features
    /// below the tree's candidates.
    pub fn samples_columns(&self) -> bool {
        self.colsample_bylevel() < 1.0 || self.colsample_bynode() < 1.0
    }

    /// RGBM's weak-learner selection (Types 0-3) and its options.
    fn check_selection(&self) -> Result<()> {
        let selection = self.selection.name();
        match (self.selection, self.selection_size) {
            (Selection::Random | Selection::Groups, None) => {
                return Err(RgbmError::param(
                    "selection_size",
                    format!("selection={selection:?} needs selection_size (t)"),
                ));
            }
            (Selection::Full | Selection::Group, Some(_)) => {
                return Err(RgbmError::param(
                    "selection_size",
                    format!(
                        "selection_size has no effect with selection={selection:?}; use 'random' or 'groups'"
                    ),
                ));
            }
            _ => {}
        }
        check(
            self.groups.is_none() || matches!(self.selection, Selection::Group | Selection::Groups),
            "groups",
            || "groups are used by selection='group' or 'groups' only".to_string(),
        )?;
        if let Some(w) = &self.feature_weights {
            check(
                self.selection == Selection::Group
                    || self.selection == Selection::Groups
                    || self.samples_columns(),
                "feature_weights",
                || {
                    format!(
                        "weights the features' draw (colsample_bytree, colsample_bylevel or colsample_bynode < 1, \
                         or selection='group' or 'groups'), and selection='{selection}' draws no features; \
                         XGBoost ignores them then"
                    )
                },
            )?;
            check(self.groups.is_none(), "feature_weights", || {
                "weights features, not groups: pass feature_weights or groups, not both".to_string()
            })?;
            check(w.iter().any(|&x| x > 0.0), "feature_weights", || {
                "every weight is 0: at least one feature must have a weight > 0".to_string()
            })?;
        }
        check(
            !(self.samples_columns() && self.selection_scope == SelectionScope::Node),
            "selection_scope",
            || {
                "colsample_bylevel and colsample_bynode sample the tree's candidates; selection_scope='node' \
                 draws each node's own: use one of them"
                    .to_string()
            },
        )?;
        check(
            !(self.selection == Selection::Full && self.selection_scope == SelectionScope::Node),
            "selection_scope",
            || "selection='full' searches every split; 'node' scope has no effect".to_string(),
        )
    }

    /// `summation="exact"` covers what is summed over rows as gradients,
    /// hessians and weights; the rules that minimise or compare loss sums
    /// are refused with it.
    fn check_summation(&self) -> Result<()> {
        if self.summation() != Summation::Exact {
            return Ok(());
        }
        let conflict = if self.step == Step::LineSearch {
            Some(("step", "step='line_search' minimises loss sums"))
        } else if self.booster == BoosterKind::Rgb {
            Some((
                "booster",
                "booster='rgb' picks its candidate by the training loss",
            ))
        } else if self.loss == Loss::Gaussian {
            Some((
                "loss",
                "loss='gaussian' starts from a mean and a standard deviation",
            ))
        } else {
            None
        };
        match conflict {
            Some((name, why)) => Err(RgbmError::param(
                name,
                format!(
                    "{why}, which summation='exact' does not make independent of the row order; use summation='float' with it"
                ),
            )),
            None => Ok(()),
        }
    }

    /// The step rule and model shrinkage.
    fn check_step(&self) -> Result<()> {
        if self.step == Step::LineSearch {
            // ν damps the exact line minimum ρ*; ν > 1 steps past it by
            // construction (and diverges).
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
            check(self.loss.is_smooth(), "step", || {
                format!(
                    "step='constant' needs a smooth loss; the {} loss has no smoothness constant sigma",
                    self.loss.name()
                )
            })?;
        }
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
        check(
            gamma == 0.0 || self.step == Step::Shrinkage,
            "shrink_rate",
            || {
                "model shrinkage F <- (1 - shrink_rate*learning_rate)F is defined for step='shrinkage' only".to_string()
            },
        )
    }

    /// SGLB: Langevin noise in split choice and leaf values.
    fn check_sglb(&self) -> Result<()> {
        if !self.langevin {
            return check(self.langevin_split_noise(), "langevin_split_noise", || {
                "langevin_split_noise=False applies to langevin=True only".to_string()
            });
        }
        let c = super::noise_scale(self.learning_rate, self.temperature);
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
        check(!self.loss.renews_leaves(), "langevin", || {
            format!(
                "langevin=True draws noisy leaf values, which loss={:?} would replace by quantiles of the residuals",
                self.loss.name()
            )
        })
    }

    /// RGB: boosting over tree families, and the options that conflict with it.
    fn check_rgb(&self) -> Result<()> {
        if self.booster != BoosterKind::Rgb {
            return check(
                self.rgb_nodes.is_none()
                    && self.rgb_lambdas.is_none()
                    && self.rgb_step.is_none()
                    && self.rgb_candidate.is_none()
                    && self.rgb_penalty.is_none(),
                "rgb_nodes",
                || {
                    "rgb_nodes / rgb_lambdas / rgb_step / rgb_candidate / rgb_penalty are used by booster='rgb' only"
                        .to_string()
                },
            );
        }
        let refuse =
            |name: &str, why: &str| Err(RgbmError::param(name, format!("booster='rgb': {why}")));
        if !self.loss.is_smooth() || self.loss == Loss::Sla01 {
            return refuse(
                "loss",
                &format!(
                    "the coordinate step needs a convex loss with a smoothness constant sigma, which {:?} is not",
                    self.loss.name()
                ),
            );
        }
        if self.langevin {
            return refuse("langevin", "Langevin noise is not defined for RGB");
        }
        if self.subsample_for() != SubsampleFor::Tree {
            return refuse(
                "subsample_for",
                "the coordinate step uses every row already; use subsample_for='tree'",
            );
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
        if self.samples_columns() {
            return refuse(
                "colsample_bynode",
                "RGB draws tree families, not feature samples; leave colsample_bylevel and colsample_bynode at 1",
            );
        }
        if self.step != Step::Shrinkage || self.shrink_rate() > 0.0 {
            return refuse(
                "step",
                "RGB takes its own coordinate step alpha = -<g,h>/C_k (rgb_step); use step='shrinkage' and no shrink_rate",
            );
        }
        if self.rgb_candidate() == RgbCandidate::Argmin {
            // The family's best member has its own gain and leaves (`booster::rgb`).
            if self.gain != Mode::Newton || self.leaf != Mode::Newton {
                return refuse(
                    "gain",
                    "rgb_candidate='argmin' grows each family's best member, whose gain and leaves follow from rgb_step; \
                     gain and leaf choose the tree of rgb_candidate='projected'",
                );
            }
            if self.reg_lambda != 0.0 {
                return refuse(
                    "reg_lambda",
                    "rgb_candidate='argmin' has no L2 term: the family radius lambda_k bounds the leaves; \
                     reg_lambda applies with rgb_candidate='projected'",
                );
            }
        }
        Ok(())
    }

    fn check_evaluation(&self) -> Result<()> {
        for m in self.eval_metric.iter().flatten() {
            m.check_loss(self.loss, self.n_classes)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_leaves_must_be_reachable_within_max_depth() {
        let tree = |depth: usize, leaves: usize| {
            BoosterParams::from_json(&format!(
                r#"{{"max_depth": {depth}, "max_leaves": {leaves}}}"#
            ))
        };
        for depth in [1, 3, 10] {
            assert!(tree(depth, 1 << depth).is_ok());
            let e = tree(depth, (1 << depth) + 1).unwrap_err().to_string();
            assert!(e.contains("cannot be reached"), "{e}");
        }
        assert!(tree(64, 1 << 20).is_ok());
    }

    #[test]
    fn logistic_reg_belongs_to_the_logistic_loss() {
        for loss in Loss::ALL {
            let mut p = BoosterParams {
                loss: *loss,
                logistic_reg: 0.5,
                ..Default::default()
            };
            // Each loss's own required settings, so that only logistic_reg decides.
            match loss {
                Loss::Softmax => p.n_classes = Some(3),
                Loss::Quantile => p.alpha = Some(0.5),
                Loss::Sla01 => (p.gain, p.leaf) = (Mode::Gradient, Mode::Gradient),
                _ => {}
            }
            let e = p.validate().err().map(|e| e.to_string());
            let refused = e.as_ref().is_some_and(|e| e.contains("logistic_reg"));
            assert_eq!(refused, *loss != Loss::Logistic, "{loss:?}: {e:?}");
        }
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
        let e = sglb(r#""learning_rate": 2000.0"#).unwrap_err();
        assert!(e.to_string().contains("shrink_rate"), "{e}");
    }

    #[test]
    fn related_parameters_must_agree() {
        let bad = [
            (r#"{"max_depth": null}"#, "max_leaves"),
            (r#"{"clamp": 0.05}"#, "logistic"),
            (r#"{"n_classes": 3}"#, "softmax"),
            (r#"{"loss": "softmax"}"#, "n_classes"),
            (r#"{"selection": "random"}"#, "selection_size"),
            (r#"{"selection_size": 3}"#, "no effect"),
            (r#"{"groups": [[0]]}"#, "groups"),
            (r#"{"selection_scope": "node"}"#, "'node' scope"),
            (r#"{"step": "line_search", "learning_rate": 1.5}"#, "<= 1"),
            (r#"{"step": "constant"}"#, "gradient leaves"),
            (
                r#"{"shrink_rate": 0.1, "step": "line_search"}"#,
                "shrinkage",
            ),
            (r#"{"booster": "rgb", "langevin": true}"#, "RGB"),
            (r#"{"rgb_nodes": [2]}"#, "booster='rgb'"),
            (r#"{"eval_metric": ["auc"]}"#, "does not apply"),
            (r#"{"alpha": 0.5}"#, "quantile' only"),
            (r#"{"tweedie_variance_power": 1.2}"#, "tweedie' only"),
            (
                r#"{"loss": "poisson", "step": "constant", "leaf": "gradient"}"#,
                "smooth",
            ),
            (r#"{"loss": "gamma", "booster": "rgb"}"#, "coordinate step"),
            (
                r#"{"loss": "absolute_error", "langevin": true}"#,
                "quantiles",
            ),
            (r#"{"monotone_constraints": [1, 2]}"#, "-1, 0 and 1"),
            (r#"{"monotone_constraints": []}"#, "non-empty"),
            (
                r#"{"monotone_constraints": [0, -1], "categorical_features": [1]}"#,
                "numeric features only",
            ),
            (
                r#"{"interaction_constraints": [[0], []]}"#,
                "non-empty lists",
            ),
            (
                r#"{"interaction_constraints": [[0, 1, 0]]}"#,
                "more than once",
            ),
            (r#"{"reg_alpha": 1.0, "langevin": true}"#, "`reg_alpha`"),
            (
                r#"{"max_delta_step": 1.0, "loss": "absolute_error"}"#,
                "`max_delta_step`",
            ),
            (
                r#"{"path_smooth": 1.0, "booster": "rgb", "rgb_candidate": "projected"}"#,
                "`path_smooth`: booster='rgb'",
            ),
            (
                r#"{"reg_alpha": 1.0, "booster": "rgb"}"#,
                "rgb_candidate='argmin'",
            ),
            (
                r#"{"path_smooth": 1.0, "subsample": 0.5, "subsample_for": "split"}"#,
                "subsample_for='split'",
            ),
            (
                r#"{"path_smooth": 1.0, "step": "constant", "leaf": "gradient"}"#,
                "step='constant'",
            ),
            (r#"{"reg_alpha": -1.0}"#, ">= 0"),
        ];
        for (json, want) in bad {
            let e = BoosterParams::from_json(json).unwrap_err().to_string();
            assert!(e.contains(want), "{json}: {e} lacks {want}");
        }
        let good = [
            r#"{"max_depth": null, "max_leaves": 8}"#,
            r#"{"clamp": 0.05, "loss": "logistic"}"#,
            r#"{"loss": "softmax", "n_classes": 3}"#,
            r#"{"selection": "random", "selection_size": 0.5, "selection_scope": "node"}"#,
            r#"{"step": "constant", "leaf": "gradient"}"#,
            r#"{"booster": "rgb", "max_depth": null, "rgb_nodes": [2, 4]}"#,
            r#"{"loss": "quantile", "alpha": 0.1}"#,
            r#"{"monotone_constraints": [1, 0, -1], "categorical_features": [1]}"#,
            r#"{"interaction_constraints": [[0, 1], [1, 2]]}"#,
            r#"{"loss": "tweedie", "tweedie_variance_power": 1.2, "langevin": true}"#,
            r#"{"reg_alpha": 1.0, "max_delta_step": 0.5, "booster": "rgb", "rgb_candidate": "projected"}"#,
            r#"{"reg_alpha": 1.0, "max_delta_step": 0.5, "step": "constant", "leaf": "gradient"}"#,
            r#"{"reg_alpha": 1.0, "max_delta_step": 0.5, "path_smooth": 2.0, "monotone_constraints": [1]}"#,
        ];
        for json in good {
            if let Err(e) = BoosterParams::from_json(json) {
                panic!("{json}: {e}");
            }
        }
    }
}
