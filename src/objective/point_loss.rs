//! What every loss shares: the `PointLoss` trait a loss on one row
//! implements, the inverse `Link` from raw score to prediction, and the
//! fixed row chunk of the bulk passes.
use crate::error::Result;

/// Rows per task for parallel element-wise passes (fixed, so sums reduce in a fixed order).
pub(crate) const CHUNK: usize = 16 * 1024;

/// A loss ℓ(y, f) on one row. Labels of binary losses are 0/1.
pub trait PointLoss: Send + Sync {
    fn value(&self, y: f64, f: f64) -> f64;
    /// (∂ℓ/∂f, ∂²ℓ/∂f²) — the hessian may be a documented surrogate (huber).
    fn grad_hess(&self, y: f64, f: f64) -> (f64, f64);
    /// σ such that ℓ is σ-smooth in f, if it is.
    fn smoothness(&self) -> Option<f64>;
    /// A good starting constant for the optimal-constant search.
    /// An error only when a buffer it needs cannot be allocated.
    fn start(&self, y: &[f64], w: Option<&[f64]>) -> Result<f64>;
    /// How a raw score becomes the prediction users see.
    fn link(&self) -> Link {
        Link::Identity
    }
    /// Maps a raw score to the prediction users see (identity or probability).
    #[inline]
    fn transform(&self, f: f64) -> f64 {
        self.link().apply(f)
    }
}

/// The inverse link: how a raw score f becomes the prediction users see.
/// Exported as data (`Objective::link`), so a model exporter reads the
/// link rather than restating it per loss.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Link {
    Identity,
    /// e^f (the log link).
    Exp,
    /// The probability of class 1, 1 / (1 + e^(−f / scale)).
    Sigmoid {
        scale: f64,
    },
    /// The K class probabilities e^(f_k) / Σ_j e^(f_j) of a row's K scores.
    Softmax,
}

impl Link {
    /// The name a model exporter reads.
    pub fn name(self) -> &'static str {
        match self {
            Link::Identity => "identity",
            Link::Exp => "exp",
            Link::Sigmoid { .. } => "sigmoid",
            Link::Softmax => "softmax",
        }
    }

    /// A single-output link at f (a softmax's own score: f).
    #[inline]
    pub fn apply(self, f: f64) -> f64 {
        match self {
            Link::Identity | Link::Softmax => f,
            Link::Exp => f.exp(),
            Link::Sigmoid { scale } => sigmoid(f / scale),
        }
    }
}

/// 1 / (1 + e^(−f)), from one exp that cannot overflow.
#[inline(always)]
pub(super) fn sigmoid(f: f64) -> f64 {
    if f >= 0.0 {
        1.0 / (1.0 + (-f).exp())
    } else {
        let e = f.exp();
        e / (1.0 + e)
    }
}
