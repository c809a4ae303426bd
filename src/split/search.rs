//! Best threshold per feature from a node's histogram, with a learned
//! direction for missing values, and the best over a set of features.
use rayon::prelude::*;

use super::gain::SplitRule;
use crate::data::BinnedDataset;
use crate::histogram::{BinStats, HistSlice, Histogram};
use crate::selection::Candidates;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitCandidate {
    pub feature: usize,
    /// Rows with bin <= `bin` (and missing rows if `default_left`) go left.
    pub bin: usize,
    pub threshold: f64,
    pub default_left: bool,
    pub gain: f64,
    pub left: BinStats,
    pub right: BinStats,
}

/// Best split of one feature, scanning thresholds left to right, with missing
/// values sent right, then left. Ties keep the first candidate found.
pub fn best_split_for_feature(
    hist: HistSlice,
    thresholds: &[f64],
    total: &BinStats,
    parent_score: f64,
    feature: usize,
    rule: &SplitRule,
    allowed: Option<&[bool]>,
) -> Option<SplitCandidate> {
    let n_value_bins = thresholds.len() + 1;
    let missing = hist.stats(n_value_bins);
    // Missing rows count as seen only when they carry weight, so zero-weight
    // rows change nothing (a fit with weights equals one on repeated rows).
    let missing_seen = missing.w > 0.0;
    let directions: &[bool] = if missing_seen {
        &[false, true]
    } else {
        &[false]
    };
    let mut best: Option<SplitCandidate> = None;
    for &missing_left in directions {
        let mut left = if missing_left {
            missing
        } else {
            BinStats::default()
        };
        for b in 0..n_value_bins - 1 {
            left.add(&hist.stats(b));
            if left.n < rule.min_samples_leaf {
                continue;
            }
            let right = total.sub(&left);
            if right.n < rule.min_samples_leaf {
                break;
            }
            if allowed.is_some_and(|a| !a[b]) {
                continue;
            }
            if let Some(gain) = rule.gain(parent_score, &left, &right) {
                if best.is_none_or(|c| clearly_better(gain, c.gain, parent_score)) {
                    // With no missing rows seen, send future missing values to the heavier side.
                    let (mut default_left, mut left, mut right) = (missing_left, left, right);
                    if !missing_seen
                        && left.w >= right.w
                        && right.n - missing.n >= rule.min_samples_leaf
                    {
                        // Zero-weight missing rows follow the default to the heavier left side.
                        default_left = true;
                        left.add(&missing);
                        right = total.sub(&left);
                    }
                    best = Some(SplitCandidate {
                        feature,
                        bin: b,
                        threshold: thresholds[b],
                        default_left,
                        gain,
                        left,
                        right,
                    });
                }
            }
        }
    }
    best
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
fn clearly_better(gain: f64, best: f64, parent_score: f64) -> bool {
    gain > best + TIE_MARGIN * (best.abs() + parent_score.abs())
}

/// Below this many histogram bins the search runs on one thread (waking
/// workers costs more than scanning a few thousand bins). criterion, 28 × 255
/// bins: 50 µs on one thread, 39-45 µs on two.
const PARALLEL_MIN_BINS: usize = 4 * 1024;

/// Best split of a node among the candidates; ties go to the earlier feature.
pub fn best_split(
    data: &BinnedDataset,
    hist: &Histogram,
    total: &BinStats,
    cands: &Candidates,
    rule: &SplitRule,
) -> Option<SplitCandidate> {
    let parent_score = rule.score(total);
    let features = &cands.features;
    let one = |(k, &j): (usize, &usize)| {
        let h = hist.slice(data.bin_offsets[j]..data.bin_offsets[j + 1]);
        let allowed = cands.allowed.as_ref().map(|a| &a[k][..]);
        best_split_for_feature(
            h,
            &data.mapper.features[j].thresholds,
            total,
            parent_score,
            j,
            rule,
            allowed,
        )
    };
    let bins: usize = features
        .iter()
        .map(|&j| data.bin_offsets[j + 1] - data.bin_offsets[j])
        .sum();
    // Candidates are compared in feature order either way.
    let pick = |best: Option<SplitCandidate>, c: SplitCandidate| match best {
        Some(b) if !clearly_better(c.gain, b.gain, parent_score) => Some(b),
        _ => Some(c),
    };
    if bins >= PARALLEL_MIN_BINS {
        let per_feature: Vec<Option<SplitCandidate>> =
            features.par_iter().enumerate().map(one).collect();
        per_feature.into_iter().flatten().fold(None, pick)
    } else {
        features.iter().enumerate().filter_map(one).fold(None, pick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Mode;

    fn rule() -> SplitRule {
        SplitRule {
            gain: Mode::Newton,
            leaf: Mode::Newton,
            lambda: 0.5,
            min_samples_leaf: 2.0,
            min_child_weight: 0.0,
            min_split_gain: 0.0,
        }
    }

    /// Brute force: every (threshold, missing direction), recomputing sums from rows.
    #[test]
    fn matches_brute_force_with_missing_values() {
        let mut s = 99u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        for trial in 0..200 {
            let n_bins_value = 2 + trial % 6;
            let n = 5 + trial % 30;
            let rows: Vec<(usize, f64, f64)> = (0..n)
                .map(|_| {
                    let b = if next() < 0.2 {
                        n_bins_value
                    } else {
                        (next() * n_bins_value as f64) as usize
                    };
                    (b, next() - 0.5, 0.1 + next())
                })
                .collect();
            let mut hist = vec![BinStats::default(); n_bins_value + 1];
            let mut total = BinStats::default();
            for &(b, g, h) in &rows {
                let st = BinStats {
                    g,
                    h,
                    w: 1.0,
                    n: 1.0,
                };
                hist[b].add(&st);
                total.add(&st);
            }
            let thresholds: Vec<f64> = (0..n_bins_value - 1).map(|t| t as f64 + 0.5).collect();
            let r = rule();
            let got = best_split_for_feature(
                Histogram::from_stats(&hist).view(),
                &thresholds,
                &total,
                r.score(&total),
                0,
                &r,
                None,
            );
            let mut want: Option<(f64, usize, bool)> = None;
            for b in 0..n_bins_value - 1 {
                for ml in [false, true] {
                    let mut l = BinStats::default();
                    let mut rr = BinStats::default();
                    for &(rb, g, h) in &rows {
                        let st = BinStats {
                            g,
                            h,
                            w: 1.0,
                            n: 1.0,
                        };
                        let go_left = if rb == n_bins_value { ml } else { rb <= b };
                        if go_left { l.add(&st) } else { rr.add(&st) }
                    }
                    if let Some(gain) = r.gain(r.score(&total), &l, &rr) {
                        if want.is_none_or(|w| gain > w.0 + 1e-12) {
                            want = Some((gain, b, ml));
                        }
                    }
                }
            }
            match (got, want) {
                (None, None) => {}
                (Some(c), Some((gain, _, _))) => assert!(
                    (c.gain - gain).abs() < 1e-9,
                    "trial {trial}: {} vs {gain}",
                    c.gain
                ),
                other => panic!("trial {trial}: {other:?}"),
            }
        }
    }
}
