//! Step rules (RGBM Algorithm 2, step 4): how much of a round's tree u is
//! added to the scores.
use crate::error::{Result, RgbmError};
use crate::objective::Objective;
use crate::params::{BoosterParams, Step};

/// The multiplier applied to the tree's raw leaf values.
///
/// `dir` is u evaluated on every training row; it is only read by `line_search`.
pub fn step_scale(
    params: &BoosterParams,
    objective: &Objective,
    y: &[f64],
    scores: &[f64],
    w: Option<&[f64]>,
    dir: &[f64],
) -> Result<f64> {
    match params.step {
        Step::Shrinkage => Ok(params.learning_rate),
        Step::Constant => {
            let sigma = objective
                .smoothness()
                .ok_or_else(|| RgbmError::param("step", "the loss has no smoothness constant"))?;
            Ok(1.0 / sigma)
        }
        Step::LineSearch => {
            let rho = objective.line_minimum(y, scores, dir, w, 0.0);
            Ok(params.learning_rate * if rho.is_finite() { rho } else { 0.0 })
        }
    }
}
