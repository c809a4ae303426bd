//! Losses behind one `PointLoss` trait: per-row value, gradient, hessian,
//! the smoothness constant σ and a closed-form starting constant.
mod custom;
mod exponential;
mod gaussian;
mod huber;
mod lambdarank;
mod log_link;
mod logistic;
mod point_loss;
mod quantile;
mod sla01;
mod softmax;
mod squared;

use rayon::prelude::*;

pub use custom::Custom;
pub use exponential::Exponential;
pub use gaussian::Gaussian;
pub use huber::Huber;
pub use lambdarank::{LambdaRank, MAX_LABEL, Queries, ndcg};
pub use log_link::{Gamma, Poisson, Tweedie};
pub use logistic::Logistic;
pub(crate) use point_loss::CHUNK;
pub use point_loss::{Link, PointLoss};
pub use quantile::{AbsoluteError, Quantile, weighted_quantile};
pub use sla01::Sla01;
pub use softmax::Softmax;
pub use squared::Squared;

use crate::error::{Result, RgbmError};
use crate::params::{BoosterParams, Loss};
use crate::reduce::Reduce;

/// The configured loss; dispatches once per bulk call, not per row.
#[derive(Clone, Debug)]
pub enum Objective {
    Squared(Squared),
    Huber(Huber),
    Logistic(Logistic),
    Exponential(Exponential),
    Sla01(Sla01),
    /// Multiclass: K scores per row (see `softmax` for the buffer layout).
    Softmax(Softmax),
    /// Regression with a predicted variance: mean and log σ per row.
    Gaussian(Gaussian),
    AbsoluteError(AbsoluteError),
    Quantile(Quantile),
    Poisson(Poisson),
    Gamma(Gamma),
    Tweedie(Tweedie),
    /// Gradients from the training monitor (see `custom`).
    Custom(Custom),
    /// Learning to rank: gradients of NDCG over query groups (see `lambdarank`).
    LambdaRank(LambdaRank),
    /// Several targets, one point loss each (see `Targets`).
    Targets(Targets),
}

/// A multi-output fit: target k has its own labels (block k of `y`, laid
/// out class-major like the scores), its own point loss `each[k]` and its
/// own score block; every other row-wise quantity (weights) is shared.
/// Each target's gradients, starting score, leaf renewal and metric are
/// exactly its single-target loss's on its block, so a target's trees are
/// the ones a single-target fit would grow.
#[derive(Clone, Debug)]
pub struct Targets {
    pub each: Vec<Objective>,
}

impl Targets {
    /// Target k's labels of `y` (K blocks of equal length).
    pub fn block<'y>(&self, y: &'y [f64], k: usize) -> &'y [f64] {
        let n = y.len() / self.each.len().max(1);
        &y[k * n..(k + 1) * n]
    }
}

/// A target's label error, saying which target.
fn in_target(e: RgbmError, k: usize) -> RgbmError {
    match e {
        RgbmError::NonFinite(m) => RgbmError::NonFinite(format!("target {k}: {m}")),
        RgbmError::InvalidLabel(m) => RgbmError::InvalidLabel(format!("target {k}: {m}")),
        other => other,
    }
}

/// Runs `$body` with `$o` bound to the point loss; `$multi` handles the
/// multi-output losses (softmax, gaussian), which share method names, and
/// `$custom` the custom loss, which the core cannot evaluate. LambdaRank
/// takes the custom branch as a custom regression loss: it has no value per
/// row, and its gradients need the query groups, which the fit supplies
/// (`Fit::point_gradients`). `Targets` takes it too, but every method that
/// dispatches answers for it first, per target.
macro_rules! dispatch {
    ($self:expr, $o:ident => $body:expr, $s:ident => $multi:expr, $c:pat => $custom:expr) => {
        match $self {
            Objective::Squared($o) => $body,
            Objective::Huber($o) => $body,
            Objective::Logistic($o) => $body,
            Objective::Exponential($o) => $body,
            Objective::Sla01($o) => $body,
            Objective::AbsoluteError($o) => $body,
            Objective::Quantile($o) => $body,
            Objective::Poisson($o) => $body,
            Objective::Gamma($o) => $body,
            Objective::Tweedie($o) => $body,
            Objective::Softmax($s) => $multi,
            Objective::Gaussian($s) => $multi,
            Objective::Custom($c) => $custom,
            Objective::LambdaRank(_) | Objective::Targets(_) => {
                let $c = &Custom { n_classes: None };
                $custom
            }
        }
    };
}

fn weighted_sum(n: usize, w: Option<&[f64]>, f: impl Fn(usize) -> f64 + Sync) -> f64 {
    let parts: Vec<f64> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut s = 0.0;
            for i in c * CHUNK..((c + 1) * CHUNK).min(n) {
                s += w.map_or(1.0, |w| w[i]) * f(i);
            }
            s
        })
        .collect();
    parts.iter().sum()
}

/// (Σ w·a(i), Σ w·b(i)) of a pair per row, in one pass, in fixed chunks
/// (each sum is added in the same order as by `weighted_sum`).
pub(crate) fn weighted_sums(
    n: usize,
    w: Option<&[f64]>,
    f: impl Fn(usize) -> (f64, f64) + Sync,
) -> (f64, f64) {
    weighted_sums_with(n, w, || (), |_, i| f(i))
}

/// `weighted_sums` where each chunk's rows share a scratch made by `scratch`.
fn weighted_sums_with<S>(
    n: usize,
    w: Option<&[f64]>,
    scratch: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize) -> (f64, f64) + Sync,
) -> (f64, f64) {
    let parts: Vec<(f64, f64)> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut state = scratch();
            let (mut sa, mut sb) = (0.0, 0.0);
            for i in c * CHUNK..((c + 1) * CHUNK).min(n) {
                let wi = w.map_or(1.0, |w| w[i]);
                let (a, b) = f(&mut state, i);
                sa += wi * a;
                sb += wi * b;
            }
            (sa, sb)
        })
        .collect();
    parts
        .iter()
        .fold((0.0, 0.0), |(a, b), &(c, d)| (a + c, b + d))
}

dispatch_avx2! {
    /// (w·g, w·h) of a point loss over a block of rows. With the loss's
    /// `grad_hess` inlined and no branch left but selects, the loop
    /// vectorizes; the AVX2 copy takes four rows at a time.
    fn point_gradients / point_gradients_avx2 = point_gradients_body<L: PointLoss; >(
        o: &L, y: &[f64], f: &[f64], w: Option<&[f64]>, out: &mut [[f64; 2]])
}

#[inline(always)]
fn point_gradients_body<L: PointLoss>(
    o: &L,
    y: &[f64],
    f: &[f64],
    w: Option<&[f64]>,
    out: &mut [[f64; 2]],
) {
    let (y, f) = (&y[..out.len()], &f[..out.len()]);
    match w {
        None => {
            for ((gh, &yi), &fi) in out.iter_mut().zip(y).zip(f) {
                let (g, h) = o.grad_hess(yi, fi);
                *gh = [g, h];
            }
        }
        Some(w) => {
            let w = &w[..out.len()];
            for (((gh, &yi), &fi), &wi) in out.iter_mut().zip(y).zip(f).zip(w) {
                let (g, h) = o.grad_hess(yi, fi);
                *gh = [wi * g, wi * h];
            }
        }
    }
}

impl Objective {
    pub fn from_params(p: &BoosterParams) -> Objective {
        if let Some(k) = p.n_targets {
            let one = BoosterParams {
                n_targets: None,
                alphas: None,
                ..p.clone()
            };
            let each = match &p.alphas {
                Some(alphas) => alphas
                    .iter()
                    .map(|&alpha| Objective::Quantile(Quantile { alpha }))
                    .collect(),
                None => vec![Objective::from_params(&one); k],
            };
            return Objective::Targets(Targets { each });
        }
        match p.loss {
            Loss::Squared => Objective::Squared(Squared),
            Loss::Huber => Objective::Huber(Huber {
                delta: p.huber_delta,
            }),
            Loss::Logistic => Objective::Logistic(Logistic {
                reg: p.logistic_reg,
                clamp: p.clamp,
            }),
            Loss::Exponential => Objective::Exponential(Exponential),
            Loss::Sla01 => Objective::Sla01(Sla01 { scale: p.sla_scale }),
            Loss::Softmax => Objective::Softmax(Softmax {
                n_classes: p.n_classes.unwrap_or(2),
            }),
            Loss::Gaussian => Objective::Gaussian(Gaussian),
            Loss::AbsoluteError => Objective::AbsoluteError(AbsoluteError),
            Loss::Quantile => Objective::Quantile(Quantile {
                alpha: p.quantile_alpha(),
            }),
            Loss::Poisson => Objective::Poisson(Poisson),
            Loss::Gamma => Objective::Gamma(Gamma),
            Loss::Tweedie => Objective::Tweedie(Tweedie {
                power: p.tweedie_power(),
            }),
            Loss::Custom => Objective::Custom(Custom {
                n_classes: p.n_classes,
            }),
            Loss::LambdaRank => Objective::LambdaRank(LambdaRank {
                truncation: p.lambdarank_truncation_level(),
            }),
        }
    }

    /// The prediction users see of a single-output regression loss's raw
    /// score (e^f for a log link, else f); None for the other losses.
    pub fn response(&self, f: f64) -> Option<f64> {
        if let Objective::Targets(t) = self {
            return t.each.first()?.response(f);
        }
        if self.is_binary() {
            return None;
        }
        dispatch!(self, o => Some(o.transform(f)), _s => None, c => c.n_classes.is_none().then_some(f))
    }

    /// The predicted mean of raw score `f` (the first score block of a
    /// multi-output loss), on which l2, rmse and mae are measured.
    pub fn mean_of(&self, f: f64) -> f64 {
        if let Objective::Targets(t) = self {
            return t.each.first().map_or(f, |o| o.mean_of(f));
        }
        dispatch!(self, o => o.transform(f), _s => f, _ => f)
    }

    /// The link from raw scores to predictions; None for a custom loss of
    /// several outputs (a classifier: its link is the user's).
    pub fn link(&self) -> Option<Link> {
        match self {
            Objective::Softmax(_) => Some(Link::Softmax),
            // The predicted mean is the first score as it is.
            Objective::Gaussian(_) => Some(Link::Identity),
            // One loss for every target: the link of each output.
            Objective::Targets(t) => t.each.first()?.link(),
            _ => {
                dispatch!(self, o => Some(o.link()), _s => None, c => c.n_classes.is_none().then_some(Link::Identity))
            }
        }
    }

    /// Whether leaves are re-estimated from residuals after growth.
    pub fn renews_leaves(&self) -> bool {
        match self {
            Objective::Targets(t) => t.each.iter().any(Objective::renews_leaves),
            _ => matches!(self, Objective::AbsoluteError(_) | Objective::Quantile(_)),
        }
    }

    /// The loss of output `k` and its labels in `y`: the target's own for
    /// a multi-output fit, else the loss itself and all of `y` (whose
    /// outputs share the labels).
    pub fn output<'s, 'y>(&'s self, y: &'y [f64], k: usize) -> (&'s Objective, &'y [f64]) {
        match self {
            Objective::Targets(t) if k < t.each.len() => (&t.each[k], t.block(y, k)),
            _ => (self, y),
        }
    }

    /// Rows per label block: the labels' length over the targets.
    pub fn label_rows(&self, y: &[f64]) -> usize {
        y.len() / self.n_targets()
    }

    /// Labels per row: the targets, else 1.
    pub fn n_targets(&self) -> usize {
        match self {
            Objective::Targets(t) => t.each.len().max(1),
            _ => 1,
        }
    }

    /// Sets each leaf (rows `rows[s..e]` for its range) to the constant c
    /// minimising Σ w·ℓ(y, f + c) over its rows, for the losses whose
    /// gradient carries no step length (absolute error, quantile): the
    /// weighted α-quantile of the residuals y − f. A leaf of no weight, and
    /// every leaf of other losses, keeps its value.
    pub fn renew_leaves(
        &self,
        y: &[f64],
        f: &[f64],
        w: Option<&[f64]>,
        rows: &[u32],
        ranges: &[(usize, usize)],
        values: &mut [f64],
    ) -> Result<()> {
        let alpha = match self {
            Objective::AbsoluteError(_) => 0.5,
            Objective::Quantile(q) => q.alpha,
            _ => return Ok(()),
        };
        values
            .par_iter_mut()
            .zip(ranges)
            .try_for_each(|(v, &(s, e))| {
                let leaf = &rows[s..e];
                let mut residuals = crate::alloc::with_capacity(leaf.len(), "a leaf's residuals")?;
                residuals.extend(leaf.iter().map(|&i| y[i as usize] - f[i as usize]));
                let weight = |j: usize| w.map_or(1.0, |w| w[leaf[j] as usize]);
                if let Some(c) = weighted_quantile(&residuals, weight, alpha)? {
                    *v = c;
                }
                Ok(())
            })
    }

    pub fn is_binary(&self) -> bool {
        matches!(
            self,
            Objective::Logistic(_) | Objective::Exponential(_) | Objective::Sla01(_)
        )
    }

    /// Scores per row: K for softmax, 2 for gaussian, else 1.
    pub fn n_outputs(&self) -> usize {
        if let Objective::Targets(t) = self {
            return t.each.len();
        }
        dispatch!(self, _o => 1, s => s.n_outputs(), c => c.n_outputs())
    }

    pub fn smoothness(&self) -> Option<f64> {
        if let Objective::Targets(t) = self {
            // The bound that holds for every target's loss.
            return t
                .each
                .iter()
                .try_fold(0.0f64, |m, o| Some(m.max(o.smoothness()?)));
        }
        dispatch!(self, o => o.smoothness(), s => s.smoothness(), _ => None)
    }

    /// Probability of class 1 for a binary loss's raw score (its link).
    pub fn probability(&self, f: f64) -> Option<f64> {
        match self {
            Objective::Logistic(o) => Some(o.transform(f)),
            Objective::Exponential(o) => Some(o.transform(f)),
            Objective::Sla01(o) => Some(o.transform(f)),
            _ => None,
        }
    }

    /// The class probabilities of raw scores: a binary loss maps n scores to
    /// n rows of (1 − p, p); softmax maps n rows of K scores (row-major) to
    /// their K probabilities; several binary targets (multilabel) map each
    /// score to its p. None for regression losses, or when `raw` is
    /// not whole rows of K.
    pub fn class_probabilities(&self, raw: &[f64]) -> Result<Option<Vec<f64>>> {
        const WHAT: &str = "the class probabilities";
        match self {
            // Labels of a multilabel fit: each score's own P(1), in place.
            Objective::Targets(t) => {
                let Some(label) = t.each.first().filter(|o| o.is_binary()) else {
                    return Ok(None);
                };
                let mut out = crate::alloc::with_capacity(raw.len(), WHAT)?;
                for &f in raw {
                    match label.probability(f) {
                        Some(p) => out.push(p),
                        None => return Ok(None),
                    }
                }
                Ok(Some(out))
            }
            Objective::Softmax(s) => {
                let k = s.n_classes;
                if k == 0 || !raw.len().is_multiple_of(k) {
                    return Ok(None);
                }
                let mut out = crate::alloc::zeroed_vec(raw.len(), WHAT)?;
                raw.chunks_exact(k)
                    .zip(out.chunks_exact_mut(k))
                    .for_each(|(row, p)| Softmax::probabilities(row, p));
                Ok(Some(out))
            }
            _ => {
                if self.probability(0.0).is_none() {
                    return Ok(None); // not a binary loss, even for no rows
                }
                let len = raw.len().checked_mul(2).ok_or_else(|| {
                    RgbmError::OutOfMemory(format!(
                        "cannot allocate {WHAT}: 2 x {} elements",
                        raw.len()
                    ))
                })?;
                let mut out = crate::alloc::with_capacity(len, WHAT)?;
                for &f in raw {
                    match self.probability(f) {
                        Some(p) => out.extend([1.0 - p, p]),
                        None => return Ok(None),
                    }
                }
                Ok(Some(out))
            }
        }
    }

    /// Labels must be finite, and 0/1 for binary losses, ≥ 0 for Poisson
    /// and Tweedie, > 0 for Gamma, integer relevance 0..=31 for ranking.
    pub fn check_labels(&self, y: &[f64]) -> Result<()> {
        if let Objective::Targets(t) = self {
            return (0..t.each.len()).try_for_each(|k| {
                t.each[k]
                    .check_labels(t.block(y, k))
                    .map_err(|e| in_target(e, k))
            });
        }
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(RgbmError::NonFinite(format!(
                "y contains {} at index {i}",
                y[i]
            )));
        }
        if self.is_regression()
            && let Some(i) = y.iter().position(|v| v.abs() > Self::MAX_ABS_TARGET)
        {
            // A log link absorbs the scale: y / c shifts the raw scores by −ln c.
            let (within, rescale) = if self.link() == Some(Link::Exp) {
                (
                    "up to ",
                    "rescale y (dividing it by c only shifts the log-link raw scores by -ln c)",
                )
            } else {
                ("within ±", "rescale y")
            };
            return Err(RgbmError::InvalidLabel(format!(
                "y has {:e} at index {i}; loss='{}' takes targets {within}{:e}, so that squares of \
                 values of their size (split gains, the l2 metric) stay finite: {rescale}",
                y[i],
                self.regression_name(),
                Self::MAX_ABS_TARGET
            )));
        }
        if self.is_binary()
            && let Some(i) = y.iter().position(|&v| v != 0.0 && v != 1.0)
        {
            return Err(RgbmError::InvalidLabel(format!(
                "binary losses need labels 0/1, got {} at index {i}",
                y[i]
            )));
        }
        let domain = match self {
            Objective::Poisson(_) => Some(("poisson", "counts >= 0", false)),
            Objective::Tweedie(_) => Some(("tweedie", "targets >= 0", false)),
            Objective::Gamma(_) => Some(("gamma", "targets > 0", true)),
            _ => None,
        };
        if let Some((name, what, strict)) = domain
            && let Some(i) = y
                .iter()
                .position(|&v| if strict { !(v > 0.0) } else { !(v >= 0.0) })
        {
            return Err(RgbmError::InvalidLabel(format!(
                "loss='{name}' needs {what}, got {} at index {i}",
                y[i]
            )));
        }
        if let Objective::LambdaRank(_) = self {
            lambdarank::check_labels(y)?;
        }
        let classes = match self {
            Objective::Softmax(s) => Some(s.n_classes),
            Objective::Custom(c) => c.n_classes,
            _ => None,
        };
        if let Some(k) = classes {
            let k_out = k as f64;
            if let Some(i) = y
                .iter()
                .position(|&v| !(v >= 0.0 && v < k_out && v.fract() == 0.0))
            {
                return Err(RgbmError::InvalidLabel(format!(
                    "{} needs class indices 0..{} (n_classes = {k}), got {} at index {i}",
                    if matches!(self, Objective::Softmax(_)) {
                        "softmax"
                    } else {
                        "the custom classification loss"
                    },
                    k - 1,
                    y[i]
                )));
            }
        }
        Ok(())
    }

    /// The mean over targets of a per-target value (a metric or a loss),
    /// so one number stands for the fit (early stopping watches it).
    pub fn mean_over_targets(&self, value: impl Fn(usize) -> f64) -> f64 {
        let k = self.n_targets();
        (0..k).map(value).sum::<f64>() / k as f64
    }

    /// The loss name of a regression objective, for messages.
    fn regression_name(&self) -> &'static str {
        match self {
            Objective::Squared(_) => "squared",
            Objective::Huber(_) => "huber",
            Objective::Gaussian(_) => "gaussian",
            Objective::AbsoluteError(_) => "absolute_error",
            Objective::Quantile(_) => "quantile",
            Objective::Poisson(_) => "poisson",
            Objective::Gamma(_) => "gamma",
            Objective::Tweedie(_) => "tweedie",
            _ => "custom",
        }
    }

    /// Largest |y| a regression loss accepts: squares of values of the
    /// targets' size (split gains, the l2 metric) stay finite.
    pub const MAX_ABS_TARGET: f64 = 1e150;

    /// The regressor's losses: real-valued targets.
    fn is_regression(&self) -> bool {
        match self {
            Objective::Targets(t) => t.each.iter().all(Objective::is_regression),
            Objective::Custom(c) => c.n_classes.is_none(),
            Objective::LambdaRank(_) => false,
            _ => !self.is_binary() && !matches!(self, Objective::Softmax(_)),
        }
    }

    /// Regression targets that vary, but by less than this, are refused:
    /// split gains are squared gradient sums, and (1e-150)² is the smallest
    /// square that stays a normal f64 (tinier spreads gave models without
    /// a single split).
    pub const MIN_TARGET_SPREAD: f64 = 1e-150;

    /// Checks what the loss can fit: see [`Self::MIN_TARGET_SPREAD`] and
    /// [`Self::check_training_classes`].
    pub fn check_training_labels(
        &self,
        y: &[f64],
        w: Option<&[f64]>,
        reduce: &dyn Reduce,
    ) -> Result<()> {
        if let Objective::Targets(t) = self {
            return (0..t.each.len()).try_for_each(|k| {
                t.each[k]
                    .check_training_labels(t.block(y, k), w, reduce)
                    .map_err(|e| in_target(e, k))
            });
        }
        if self.is_regression() {
            let (lo, hi) = y
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                });
            let mut range = [-lo, hi];
            crate::reduce::max(reduce, &mut range)?;
            let (lo, hi) = (-range[0], range[1]);
            let spread = hi - lo;
            if spread > 0.0 && spread < Self::MIN_TARGET_SPREAD {
                return Err(RgbmError::InvalidLabel(format!(
                    "y varies by only {spread:e} (from {lo:e} to {hi:e}); differences below {:e} underflow when squared and no split could be found: rescale y",
                    Self::MIN_TARGET_SPREAD
                )));
            }
        }
        if matches!(self, Objective::Poisson(_) | Objective::Tweedie(_)) {
            // Positive unless every term is 0: the sign needs no exact sum.
            let mut total = [y
                .iter()
                .enumerate()
                .map(|(i, &v)| v * w.map_or(1.0, |w| w[i]))
                .sum::<f64>()];
            reduce.combine(crate::reduce::Op::Max, &mut total)?;
            if !(total[0] > 0.0) {
                return Err(RgbmError::InvalidLabel(
                    "every target (of positive weight) is 0: a log-link loss has no finite best score; at least one target must be positive".to_string(),
                ));
            }
        }
        self.check_training_classes(y, w, reduce)
    }

    /// A binary loss needs rows of both classes with positive weight: with
    /// one class (e.g. every row of the other weighted 0) its best constant
    /// score is infinite, the fit drifts towards it (base scores of 100 and
    /// more), and SGLB's leaf noise, of variance c²/H, explodes as H → 0.
    pub fn check_training_classes(
        &self,
        y: &[f64],
        w: Option<&[f64]>,
        reduce: &dyn Reduce,
    ) -> Result<()> {
        if !self.is_binary() {
            return Ok(());
        }
        let mut weight = [0.0f64; 2];
        for (i, &v) in y.iter().enumerate() {
            weight[usize::from(v > 0.5)] += w.map_or(1.0, |w| w[i]);
        }
        // Only whether each class has weight matters: the largest will do.
        crate::reduce::max(reduce, &mut weight)?;
        match weight.iter().position(|&s| !(s > 0.0)) {
            None => Ok(()),
            Some(class) => Err(RgbmError::InvalidLabel(format!(
                "a binary loss needs both classes, but class {class} has no rows{}",
                if w.is_some() && y.iter().any(|&v| usize::from(v > 0.5) == class) {
                    " of positive sample_weight (all its rows weigh 0)"
                } else {
                    ""
                }
            ))),
        }
    }

    /// Whether every row's hessian is exactly 1 (squared error), so that
    /// unweighted histograms can count rows with Σh.
    pub fn unit_hessian(&self) -> bool {
        match self {
            Objective::Targets(t) => t.each.iter().all(Objective::unit_hessian),
            _ => matches!(self, Objective::Squared(_)),
        }
    }

    /// Per-row weighted (g, h) into `out`, parallel over fixed chunks.
    /// `f` and `out` hold `n_outputs()` class-major blocks of `y.len()` rows.
    pub fn gradients(&self, y: &[f64], f: &[f64], w: Option<&[f64]>, out: &mut [[f64; 2]]) {
        if let Objective::Targets(t) = self {
            let n = self.label_rows(y);
            for (k, (o, block)) in t.each.iter().zip(out.chunks_mut(n.max(1))).enumerate() {
                o.gradients(t.block(y, k), &f[k * n..(k + 1) * n], w, block);
            }
            return;
        }
        dispatch!(self, o => {
            out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
                let rows = c * CHUNK..c * CHUNK + chunk.len();
                point_gradients(o, &y[rows.clone()], &f[rows.clone()], w.map(|w| &w[rows]), chunk);
            })
        }, s => s.gradients(y, f, w, out),
        // The monitor supplies these (`Fit::compute_gradients`); NaN keeps
        // any other use from passing for a model (the fit's finiteness
        // check refuses it).
        _ => out.iter_mut().for_each(|gh| *gh = [f64::NAN; 2]))
    }

    /// `gradients` of a loss whose rows are independent (a point loss),
    /// with `then` run on each fixed chunk right after the chunk's
    /// gradients, while they are in cache; the chunks' results are folded
    /// with `merge` from `R::default()`, in an order that varies with the
    /// threads. `None`, with nothing written, for the other losses.
    pub fn chunk_gradients<R: Default + Send>(
        &self,
        y: &[f64],
        f: &[f64],
        w: Option<&[f64]>,
        out: &mut [[f64; 2]],
        then: impl Fn(&mut [[f64; 2]]) -> R + Sync,
        merge: impl Fn(R, R) -> R + Sync + Send,
    ) -> Option<R> {
        dispatch!(self, o => Some(out.par_chunks_mut(CHUNK).enumerate().map(|(c, chunk)| {
            let rows = c * CHUNK..c * CHUNK + chunk.len();
            point_gradients(o, &y[rows.clone()], &f[rows.clone()], w.map(|w| &w[rows]), chunk);
            then(chunk)
        }).reduce(R::default, merge)), _s => None, _ => None)
    }

    /// Σ w ℓ(y, f) / Σ w.
    pub fn mean_loss(&self, y: &[f64], f: &[f64], w: Option<&[f64]>) -> f64 {
        if let Objective::Targets(t) = self {
            let n = self.label_rows(y);
            return self.mean_over_targets(|k| {
                t.each[k].mean_loss(t.block(y, k), &f[k * n..(k + 1) * n], w)
            });
        }
        let n = y.len();
        let total = dispatch!(self, o => weighted_sum(n, w, |i| o.value(y[i], f[i])), s => weighted_sum(n, w, |i| s.row_value(y[i], f, n, i)),
            // No value (validation refuses recording it).
            _ => f64::NAN);
        let wsum = w.map_or(n as f64, |w| w.iter().sum());
        total / wsum
    }

    /// The starting score of each output for `init="optimal"`.
    pub fn initial_scores(&self, y: &[f64], w: Option<&[f64]>) -> Result<Vec<f64>> {
        if let Objective::Targets(t) = self {
            let mut scores = Vec::new();
            for k in 0..t.each.len() {
                scores.extend(t.each[k].initial_scores(t.block(y, k), w)?);
            }
            return Ok(scores);
        }
        Ok(
            dispatch!(self, _o => vec![self.optimal_constant(y, w)?], s => s.optimal_constants(y, w), c => vec![0.0; c.n_outputs()]),
        )
    }

    /// argmin_c Σ w ℓ(y, c) of a single-output loss: safeguarded Newton from
    /// the loss's closed-form start.
    fn optimal_constant(&self, y: &[f64], w: Option<&[f64]>) -> Result<f64> {
        let start = dispatch!(self, o => o.start(y, w)?, _s => 0.0, _ => 0.0);
        if self.renews_leaves() {
            // The weighted quantile is the exact minimiser; Newton steps on
            // a piecewise-linear loss would only add rounding.
            return Ok(start);
        }
        let zeros = crate::alloc::zeroed_vec(y.len(), "the starting scores")?;
        let ones = crate::alloc::filled_vec(y.len(), 1.0, "the starting score's direction")?;
        Ok(self.line_minimum(y, &zeros, &ones, w, start))
    }

    /// argmin_ρ Σ w ℓ(y, base + ρ·dir), by Newton steps with step halving
    /// (never accepts a step that increases the loss), starting at ρ = start.
    /// `base` and `dir` hold `n_outputs()` class-major blocks.
    pub fn line_minimum(
        &self,
        y: &[f64],
        base: &[f64],
        dir: &[f64],
        w: Option<&[f64]>,
        start: f64,
    ) -> f64 {
        let n = y.len();
        let directional = |rho: f64| -> (f64, f64) {
            dispatch!(self, o => {
                weighted_sums(n, w, |i| {
                    let (g, h) = o.grad_hess(y[i], base[i] + rho * dir[i]);
                    (g * dir[i], h * dir[i] * dir[i])
                })
            }, s => {
                // One probability buffer per chunk.
                weighted_sums_with(n, w, || vec![0.0; s.n_outputs()], |p, i| {
                    s.row_directional(y[i], base, dir, rho, n, i, p)
                })
            }, _ => (f64::NAN, f64::NAN))
        };
        let loss_at = |rho: f64| -> f64 {
            dispatch!(self, o => weighted_sum(n, w, |i| o.value(y[i], base[i] + rho * dir[i])),
                s => weighted_sum(n, w, |i| s.value_of(y[i], |k| base[k * n + i] + rho * dir[k * n + i])),
                _ => f64::NAN)
        };
        if let Objective::Custom(_) | Objective::LambdaRank(_) | Objective::Targets(_) = self {
            // No value to minimise, or one step for several targets' losses
            // (validation refuses the line search for both).
            return f64::NAN;
        }
        {
            let mut rho = start;
            let mut current = loss_at(rho);
            for _ in 0..100 {
                let (g, h) = directional(rho);
                if !(h > 0.0) || g == 0.0 {
                    break;
                }
                let mut step = -g / h;
                let mut accepted = false;
                for _ in 0..60 {
                    let trial = loss_at(rho + step);
                    if trial <= current {
                        rho += step;
                        current = trial;
                        accepted = true;
                        break;
                    }
                    step *= 0.5;
                }
                if !accepted || step.abs() <= 1e-12 * (1.0 + rho.abs()) {
                    break;
                }
            }
            rho
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Each loss's link, as data, is its closed form bit for bit.
    #[test]
    fn links_are_the_closed_forms() {
        fn p(loss: Loss, f: impl Fn(&mut BoosterParams)) -> Objective {
            let mut p = BoosterParams {
                loss,
                ..Default::default()
            };
            f(&mut p);
            Objective::from_params(&p)
        }
        use point_loss::sigmoid;
        type ClosedForm = fn(f64) -> f64;
        let cases: Vec<(Objective, ClosedForm)> = vec![
            (p(Loss::Squared, |_| {}), |f| f),
            (p(Loss::Poisson, |_| {}), f64::exp),
            (p(Loss::Gamma, |_| {}), f64::exp),
            (p(Loss::Tweedie, |_| {}), f64::exp),
            (p(Loss::Logistic, |_| {}), sigmoid),
            (p(Loss::Exponential, |_| {}), |f| sigmoid(2.0 * f)),
            (p(Loss::Sla01, |p| p.sla_scale = 0.3), |f| sigmoid(f / 0.3)),
        ];
        for (o, want) in &cases {
            let link = o.link().unwrap();
            for f in [-40.0, -3.7, -0.1, 0.0, 0.25, 1.0, 7.5, 35.0] {
                assert_eq!(link.apply(f).to_bits(), want(f).to_bits(), "{o:?} at {f}");
                if let Some(p) = o.probability(f) {
                    assert_eq!(p.to_bits(), want(f).to_bits());
                }
            }
        }
        assert_eq!(
            p(Loss::Softmax, |p| p.n_classes = Some(3)).link(),
            Some(Link::Softmax)
        );
        assert_eq!(p(Loss::Gaussian, |_| {}).link(), Some(Link::Identity));
        assert_eq!(p(Loss::LambdaRank, |_| {}).link(), Some(Link::Identity));
        assert_eq!(p(Loss::Custom, |_| {}).link(), Some(Link::Identity));
        assert_eq!(p(Loss::Custom, |p| p.n_classes = Some(2)).link(), None);
    }

    /// g and h agree with central finite differences of the value.
    pub fn check_derivatives(o: &dyn PointLoss, y: f64, f: f64, check_hessian: bool) {
        let e = 1e-5;
        let (g, h) = o.grad_hess(y, f);
        let fd_g = (o.value(y, f + e) - o.value(y, f - e)) / (2.0 * e);
        assert!(
            (g - fd_g).abs() < 1e-5 * (1.0 + g.abs()),
            "gradient at y={y} f={f}: {g} vs {fd_g}"
        );
        if check_hessian {
            let fd_h = (o.grad_hess(y, f + e).0 - o.grad_hess(y, f - e).0) / (2.0 * e);
            assert!(
                (h - fd_h).abs() < 1e-4 * (1.0 + h.abs()),
                "hessian at y={y} f={f}: {h} vs {fd_h}"
            );
        }
    }

    /// `unit_hessian` lets histograms count rows with Σh, so it must hold for
    /// every row and score, and only for the losses that claim it.
    #[test]
    fn unit_hessian_losses_give_hessians_of_exactly_one() {
        let y: Vec<f64> = (0..500).map(|i| ((i * 37) % 11) as f64 / 10.0).collect();
        let f: Vec<f64> = (0..500)
            .map(|i| ((i * 53) % 97) as f64 * 0.7 - 30.0)
            .collect();
        for loss in [
            Loss::Squared,
            Loss::Huber,
            Loss::Logistic,
            Loss::Exponential,
            Loss::Sla01,
        ] {
            let o = Objective::from_params(&BoosterParams {
                loss,
                ..Default::default()
            });
            let mut gh = vec![[0.0; 2]; y.len()];
            o.gradients(&y, &f, None, &mut gh);
            let all_one = gh.iter().all(|&[_, h]| h.to_bits() == 1f64.to_bits());
            assert_eq!(o.unit_hessian(), loss == Loss::Squared, "{loss:?}");
            if o.unit_hessian() {
                assert!(all_one, "{loss:?}");
            }
        }
    }

    #[test]
    fn optimal_constants_match_closed_forms() {
        let y = [0.0, 1.0, 1.0, 1.0];
        let w = [1.0, 1.0, 2.0, 0.0];
        let sq = Objective::Squared(Squared);
        assert!((sq.optimal_constant(&y, Some(&w)).unwrap() - 0.75).abs() < 1e-12);
        let lg = Objective::Logistic(Logistic {
            reg: 0.0,
            clamp: None,
        });
        assert!((lg.optimal_constant(&y, None).unwrap() - 3f64.ln()).abs() < 1e-9);
        let ex = Objective::Exponential(Exponential);
        assert!((ex.optimal_constant(&y, None).unwrap() - 0.5 * 3f64.ln()).abs() < 1e-9);
        // Huber: brute-force grid minimum.
        let hb = Objective::Huber(Huber { delta: 1.0 });
        let yy = [0.0, 0.5, 1.0, 10.0, -3.0, 2.0];
        let c = hb.optimal_constant(&yy, None).unwrap();
        let loss = |c: f64| yy.iter().map(|&v| hb_value(v, c)).sum::<f64>();
        let grid = (0..20001)
            .map(|k| -5.0 + k as f64 * 5e-4)
            .fold(f64::INFINITY, |a, c| a.min(loss(c)));
        assert!(loss(c) <= grid + 1e-9, "{c}");
    }

    fn hb_value(y: f64, f: f64) -> f64 {
        Huber { delta: 1.0 }.value(y, f)
    }

    #[test]
    fn line_minimum_is_exact_for_squared_loss() {
        let y = [1.0, -2.0, 3.0, 0.5];
        let base = [0.0, 1.0, 0.0, -1.0];
        let dir = [1.0, -1.0, 2.0, 0.5];
        let rho = Objective::Squared(Squared).line_minimum(&y, &base, &dir, None, 0.0);
        let num: f64 = (0..4).map(|i| (y[i] - base[i]) * dir[i]).sum();
        let den: f64 = dir.iter().map(|d| d * d).sum();
        assert!((rho - num / den).abs() < 1e-12);
    }
}
