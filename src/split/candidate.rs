//! A split found by the search, and when one candidate's gain beats
//! another's (by more than rounding).
use crate::histogram::BinStats;

/// A node's best split: the feature, where its rows go, the gain and both
/// children's sums.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitCandidate {
    pub feature: usize,
    /// Rows with bin <= `bin` (and missing rows if `default_left`) go left.
    pub bin: usize,
    /// A categorical split: these value bins (increasing) go away from the
    /// default side; every other bin, the missing bin included, follows
    /// `default_left`. `bin` and `threshold` are then unused.
    pub categories: Option<Vec<u32>>,
    pub threshold: f64,
    pub default_left: bool,
    /// `default_left` is still to be decided: left iff the left child has at
    /// least as many rows (set once the partition has counted them).
    pub default_by_rows: bool,
    pub gain: f64,
    pub left: BinStats,
    pub right: BinStats,
}

/// Relative margin by which a later candidate must beat the current best.
/// Gains that are equal in exact arithmetic (two features splitting a node's
/// rows the same way) differ by rounding that depends on how the sums were
/// formed (weights vs repeated rows, summation order); without the margin
/// such ties would go to whichever side the rounding favoured. A gain is a
/// difference of child and parent scores, so its rounding error scales with
/// those scores, not with the gain itself.
const TIE_MARGIN: f64 = 1e-9;

#[inline]
pub(super) fn clearly_better(gain: f64, best: f64, parent_score: f64) -> bool {
    gain > better_than(best, parent_score)
}

/// What a gain must exceed to be `clearly_better` than `best`.
#[inline(always)]
pub(super) fn better_than(best: f64, parent_score: f64) -> f64 {
    best + TIE_MARGIN * (best.abs() + parent_score.abs())
}
