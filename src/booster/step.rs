//! Step rules (RGBM Algorithm 2, step 4): how much of a round's tree u is
//! added to the scores.
use rayon::prelude::*;

use crate::error::{Result, RgbmError};
use crate::objective::Objective;
use crate::params::{BoosterParams, Step};
use crate::tree::Tree;

/// The multiplier applied to the tree's raw leaf values.
///
/// `learning_rate` is the round's (`params.learning_rate` unless a callback
/// changed it); `dir` is u evaluated on every training row; it is only read
/// by `line_search`.
pub fn step_scale(
    params: &BoosterParams,
    learning_rate: f64,
    objective: &Objective,
    y: &[f64],
    scores: &[f64],
    w: Option<&[f64]>,
    dir: &[f64],
) -> Result<f64> {
    match params.step {
        Step::Shrinkage => Ok(learning_rate),
        Step::Constant => {
            let sigma = objective
                .smoothness()
                .ok_or_else(|| RgbmError::param("step", "the loss has no smoothness constant"))?;
            Ok(1.0 / sigma)
        }
        Step::LineSearch => {
            let rho = objective.line_minimum(y, scores, dir, w, 0.0);
            Ok(learning_rate * if rho.is_finite() { rho } else { 0.0 })
        }
    }
}

/// The step of a rule known before the round's trees are grown (shrinkage,
/// the constant 1/σ); `None` for the line search, which needs the trees.
pub(crate) fn fixed_step(
    params: &BoosterParams,
    learning_rate: f64,
    objective: &Objective,
    y: &[f64],
    scores: &[f64],
    w: Option<&[f64]>,
) -> Result<Option<f64>> {
    (params.step != Step::LineSearch)
        .then(|| step_scale(params, learning_rate, objective, y, scores, w, &[]))
        .transpose()
}

/// The line search along all K trees of a round at once: finds the step s
/// along `dir` (the trees' raw output u on every training row), moves the
/// scores to F + s·u and scales the trees' leaves by s.
#[allow(clippy::too_many_arguments)]
pub(crate) fn line_search(
    params: &BoosterParams,
    learning_rate: f64,
    objective: &Objective,
    y: &[f64],
    scores: &mut [f64],
    w: Option<&[f64]>,
    dir: &[f64],
    trees: &mut [Tree],
) -> Result<f64> {
    let mut s = step_scale(params, learning_rate, objective, y, scores, w, dir)?;
    if params.has_monotone() {
        // A negative step would reverse monotone trees. The loss is convex
        // along the direction, so its minimum over s ≥ 0 is max(s*, 0).
        s = s.max(0.0);
    }
    scores
        .par_iter_mut()
        .zip(dir)
        .for_each(|(f, d)| *f += s * d);
    trees.iter_mut().for_each(|t| scale_leaves(t, s));
    Ok(s)
}

/// Multiplies a tree's raw leaf values by the step.
pub(crate) fn scale_leaves(tree: &mut Tree, step: f64) {
    tree.leaf_value.iter_mut().for_each(|v| *v *= step);
}
