//! Continuing a fit from rounds it already trained. A fit's state after
//! round k is a function of its inputs and of rounds 0..k's trees: the
//! scores are the starting scores plus each tree in order, the evaluation
//! histories (and so early stopping) follow from the same sums on the
//! evaluation sets, and every later round's random draws are keyed by
//! (seed, purpose, round) and by global row index (`crate::rng`), not by a
//! generator carried from round to round. [`train_resumed`] therefore
//! rebuilds the state from [`RoundRecord`]s (adding each tree to each row's
//! score as the round did: one addition of the same leaf value, so the
//! floats are the same bits) and trains on from round k: the model is the
//! uninterrupted fit's. A sharded fit whose worker was lost resumes so.
//!
//! [`train_resumed`]: super::train_resumed
use serde::{Deserialize, Serialize};

use crate::error::{Result, RgbmError};
use crate::params::{BoosterKind, BoosterParams, Step};
use crate::tree::Tree;

use super::trained::RoundLog;

/// Where a resumed fit starts: the rounds it trained already.
#[derive(Clone, Copy, Debug, Default)]
pub struct Resume<'a> {
    /// Rounds 0..k, as [`super::Monitor::round_trained`] reported them.
    pub rounds: &'a [RoundRecord],
    /// The monitor stopped the fit after the last of them: the resumed fit
    /// ends there too.
    pub stopped: bool,
}

/// One trained round as a fit that continues it needs it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundRecord {
    /// The round's index (0-based).
    pub round: usize,
    /// One tree per output, as the round added them to the scores: scaled
    /// by the step, without model shrinkage folded in.
    pub trees: Vec<Tree>,
    /// The round's log entry (its time is the time it took then).
    pub log: RoundLog,
}

impl RoundRecord {
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self)
            .map_err(|e| RgbmError::ModelFormat(format!("cannot write a round's record: {e}")))
    }

    pub fn from_json(text: &str) -> Result<RoundRecord> {
        serde_json::from_str(text)
            .map_err(|e| RgbmError::ModelFormat(format!("a round's record: {e}")))
    }
}

/// Checks that `records` are rounds 0, 1, … of a fit under `params` with
/// `n_outputs` trees per round on `n_features` features.
pub(super) fn check(
    records: &[RoundRecord],
    params: &BoosterParams,
    n_features: usize,
    n_outputs: usize,
) -> Result<()> {
    if records.is_empty() {
        return Ok(());
    }
    // RGB's coordinate steps and the line search move the scores by more
    // than one addition of a leaf value per row: no replay is the same bits.
    if params.booster == BoosterKind::Rgb {
        return Err(RgbmError::param(
            "booster",
            "a fit with booster='rgb' cannot be resumed from its rounds",
        ));
    }
    if params.step == Step::LineSearch {
        return Err(RgbmError::param(
            "step",
            "a fit with step='line_search' cannot be resumed from its rounds",
        ));
    }
    if records.len() > params.n_estimators {
        return Err(RgbmError::param(
            "n_estimators",
            format!(
                "{} rounds to resume from, but the fit has {}",
                records.len(),
                params.n_estimators
            ),
        ));
    }
    for (i, r) in records.iter().enumerate() {
        if r.round != i {
            return Err(RgbmError::ModelFormat(format!(
                "the rounds to resume from are not 0, 1, …: record {i} is round {}",
                r.round
            )));
        }
        if r.trees.len() != n_outputs {
            return Err(RgbmError::ModelFormat(format!(
                "round {i} has {} trees, the fit has {n_outputs} outputs",
                r.trees.len()
            )));
        }
        for t in &r.trees {
            t.validate(n_features)?;
        }
    }
    Ok(())
}
