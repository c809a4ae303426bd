//! The threshold scan of one numeric feature with exact row counts and no
//! monotone constraint, the common case: the rule's modes resolved once per
//! feature and each threshold judged branch-free. Each gain is computed with
//! the operations, in the order, of `SplitRule::gain_but_rows`, so the
//! winner and its bits are the ones the general scan finds.
use super::gain::{Curvature, SplitRule};
use super::search::{SplitCandidate, clearly_better};
use crate::histogram::{BinStats, HistSlice};

/// What the gain formula needs, with the rule's modes resolved up front.
#[derive(Clone, Copy)]
struct GainTerms {
    lambda: f64,
    min_rows: f64,
    min_child_weight: f64,
    min_split_gain: f64,
    uses_hessian: bool,
    gain_newton: bool,
    leaf_newton: bool,
    gain_unit: bool,
    leaf_unit: bool,
    /// For the leaf regularisers' scores (`SplitRule::score`).
    rule: SplitRule,
}

impl GainTerms {
    fn new(rule: &SplitRule) -> GainTerms {
        GainTerms {
            lambda: rule.lambda,
            min_rows: rule.min_samples_leaf,
            min_child_weight: rule.min_child_weight,
            min_split_gain: rule.min_split_gain,
            uses_hessian: rule.uses_hessian(),
            gain_newton: rule.gain == Curvature::Hessian,
            leaf_newton: rule.leaf == Curvature::Hessian,
            gain_unit: rule.gain == Curvature::Unit,
            leaf_unit: rule.leaf == Curvature::Unit,
            rule: *rule,
        }
    }
}

/// `SplitRule::score` and `child_ok_but_rows` (and the row minimum) of one
/// side, written branch-free; with the leaf regularisers (`REG`) the score
/// is `SplitRule::score` itself.
#[inline(always)]
fn side<const UNIT: bool, const REG: bool>(
    t: &GainTerms,
    g: f64,
    h: f64,
    w: f64,
    n: f64,
) -> (f64, bool) {
    const TINY: f64 = 1e-300;
    // `UNIT` (some formula divides by 1) is resolved at compile time, so the
    // Newton and gradient scans keep their single select.
    let pick = |newton: bool, unit: bool| {
        if UNIT && unit {
            1.0
        } else if newton {
            h
        } else {
            w
        }
    };
    let d_gain = pick(t.gain_newton, t.gain_unit) + t.lambda;
    let d_leaf = pick(t.leaf_newton, t.leaf_unit) + t.lambda;
    let ok = (n >= t.min_rows)
        & (!t.uses_hessian | (h >= t.min_child_weight))
        & (d_gain > TINY)
        & (d_leaf > TINY);
    let score = if REG {
        t.rule.score(&BinStats { g, h, w, n })
    } else if d_gain > TINY {
        g * g / d_gain
    } else {
        0.0
    };
    (score, ok)
}

/// Best threshold of one numeric feature with exact counts and no monotone
/// constraint: `scan_feature`'s result (missing values right, then left;
/// ties keep the first found), and whether any threshold leaves both sides
/// their row minimum. When none does, none does on any subset of the rows
/// either (each side only loses rows): the feature cannot split any node
/// below this one.
#[allow(clippy::too_many_arguments)]
pub(super) fn scan_exact(
    hist: HistSlice,
    thresholds: &[f64],
    total: &BinStats,
    parent_score: f64,
    feature: usize,
    rule: &SplitRule,
    allowed: Option<&[bool]>,
) -> (Option<SplitCandidate>, bool) {
    // A node with far fewer rows than the feature has bins leaves most bins
    // empty: skipping them saves their gains, and the branch is then
    // predictable. On fuller bins it would only cost a branch per bin.
    let args = (
        hist,
        thresholds,
        total,
        parent_score,
        feature,
        rule,
        allowed,
    );
    let unit = rule.gain == Curvature::Unit || rule.leaf == Curvature::Unit;
    let reg = rule.reg.alpha > 0.0 || rule.reg.moves_values();
    match (total.n * 8.0 < thresholds.len() as f64, unit, reg) {
        (true, false, false) => scan_exact_body::<true, false, false>(args),
        (false, false, false) => scan_exact_body::<false, false, false>(args),
        (true, true, false) => scan_exact_body::<true, true, false>(args),
        (false, true, false) => scan_exact_body::<false, true, false>(args),
        (true, _, true) => scan_exact_body::<true, true, true>(args),
        (false, _, true) => scan_exact_body::<false, true, true>(args),
    }
}

type ScanArgs<'a> = (
    HistSlice<'a>,
    &'a [f64],
    &'a BinStats,
    f64,
    usize,
    &'a SplitRule,
    Option<&'a [bool]>,
);

#[inline(always)]
fn scan_exact_body<const SKIP_EMPTY: bool, const UNIT: bool, const REG: bool>(
    (hist, thresholds, total, parent_score, feature, rule, allowed): ScanArgs,
) -> (Option<SplitCandidate>, bool) {
    let n_value_bins = thresholds.len() + 1;
    let missing = hist.stats(n_value_bins);
    let missing_seen = missing.w > 0.0;
    let directions: &[bool] = if missing_seen {
        &[false, true]
    } else {
        &[false]
    };
    let t = GainTerms::new(rule);
    let min = rule.min_samples_leaf;
    let mut best: Option<SplitCandidate> = None;
    let mut splittable = false;
    for &missing_left in directions {
        let mut left = if missing_left {
            missing
        } else {
            BinStats::default()
        };
        for b in 0..n_value_bins - 1 {
            let bin = hist.stats(b);
            // An empty bin leaves the split of threshold b − 1 unchanged, and
            // that one was judged already (unless only b is allowed); small
            // nodes of wide data are mostly empty bins.
            if SKIP_EMPTY
                && b > 0
                && bin == BinStats::default()
                && allowed.is_none_or(|a| a[b - 1] || !a[b])
            {
                continue;
            }
            left.add(&bin);
            if left.n < min {
                continue;
            }
            if total.n - left.n < min {
                // The right side only shrinks from here.
                break;
            }
            splittable = true;
            let right = total.sub(&left);
            let (sl, okl) = side::<UNIT, REG>(&t, left.g, left.h, left.w, left.n);
            let (sr, okr) = side::<UNIT, REG>(&t, right.g, right.h, right.w, right.n);
            let children = sl + sr;
            let gain = children - parent_score;
            if !(okl & okr & (gain > t.min_split_gain) & (gain > 1e-10 * children))
                || allowed.is_some_and(|a| !a[b])
                || best
                    .as_ref()
                    .is_some_and(|c| !clearly_better(gain, c.gain, parent_score))
            {
                continue;
            }
            let (mut l, mut r) = (left, right);
            let mut default_left = missing_left;
            // With no missing rows seen, future missing values go to the
            // heavier side.
            if !missing_seen && l.w >= r.w && r.n - missing.n >= min {
                default_left = true;
                l.add(&missing);
                r = total.sub(&l);
            }
            best = Some(SplitCandidate {
                feature,
                bin: b,
                categories: None,
                threshold: thresholds[b],
                default_left,
                default_by_rows: false,
                gain,
                left: l,
                right: r,
            });
        }
    }
    (best, splittable)
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::histogram::Histogram;
    use crate::split::gain::{CatRule, LeafReg};

    /// The scan written threshold by threshold from `SplitRule::gain`.
    fn reference(
        bins: &[BinStats],
        total: &BinStats,
        rule: &SplitRule,
        allowed: Option<&[bool]>,
    ) -> Option<(usize, bool, f64, BinStats)> {
        let parent = rule.score(total);
        let missing = bins[bins.len() - 1];
        let seen = missing.w > 0.0;
        let mut best: Option<(usize, bool, f64, BinStats)> = None;
        for ml in if seen { vec![false, true] } else { vec![false] } {
            let mut left = if ml { missing } else { BinStats::default() };
            for b in 0..bins.len() - 2 {
                left.add(&bins[b]);
                let right = total.sub(&left);
                let Some(gain) = rule.gain(parent, &left, &right) else {
                    continue;
                };
                if allowed.is_some_and(|a| !a[b])
                    || best.is_some_and(|c| !clearly_better(gain, c.2, parent))
                {
                    continue;
                }
                let mut l = left;
                let mut dl = ml;
                if !seen && l.w >= right.w && right.n - missing.n >= rule.min_samples_leaf {
                    dl = true;
                    l.add(&missing);
                }
                best = Some((b, dl, gain, l));
            }
        }
        best
    }

    /// Blocked gains give the reference's winner, bit for bit: up to 300
    /// bins (several blocks), empty bins (some or nearly all: both loops),
    /// weights, missing rows, both modes, hessian minimums and restricted
    /// thresholds. The scan also tells whether any threshold meets the row
    /// minimum on both sides.
    #[test]
    fn equals_the_threshold_by_threshold_scan() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (mut sparse_nodes, mut unsplittable) = (0, 0);
        for trial in 0..3000 {
            let n_value = 2 + rng.random_range(0..300usize);
            let weighted = trial % 3 == 0;
            let empty_share = [0.4, 0.97][(trial / 8) % 2];
            let mut bins = vec![BinStats::default(); n_value + 1];
            for b in bins.iter_mut() {
                if rng.random::<f64>() < empty_share {
                    continue; // empty
                }
                let n = rng.random_range(1..6) as f64;
                let w = if weighted {
                    n * rng.random::<f64>() * 2.0
                } else {
                    n
                };
                *b = BinStats {
                    g: rng.random::<f64>() - 0.45,
                    h: 0.01 + rng.random::<f64>() * n * 0.25,
                    w,
                    n,
                };
            }
            let mut total = BinStats::default();
            bins.iter().for_each(|b| total.add(b));
            sparse_nodes += usize::from(total.n * 4.0 < (n_value - 1) as f64);
            let mode = [
                Curvature::Hessian,
                Curvature::Weight,
                Curvature::Hessian,
                Curvature::Unit,
            ][trial % 4];
            let rule = SplitRule {
                gain: mode,
                leaf: mode,
                lambda: [0.0, 1.0][trial % 2],
                min_samples_leaf: rng.random_range(1..25) as f64,
                min_child_weight: [0.0, 1.0][(trial / 2) % 2],
                min_split_gain: [0.0, 0.01][(trial / 4) % 2],
                cat: CatRule::default(),
                // The leaf regularisers take the scan's `REG` path.
                reg: match trial % 7 {
                    1 => LeafReg {
                        alpha: 0.3,
                        ..LeafReg::NONE
                    },
                    3 => LeafReg {
                        max_delta_step: 0.05,
                        ..LeafReg::NONE
                    },
                    5 => LeafReg {
                        alpha: 0.1,
                        max_delta_step: 0.2,
                        path_smooth: 4.0,
                        parent_output: 0.1,
                    },
                    _ => LeafReg::NONE,
                },
            };
            let allowed: Option<Vec<bool>> =
                (trial % 5 == 0).then(|| (0..n_value).map(|_| rng.random::<f64>() < 0.5).collect());
            let thresholds: Vec<f64> = (0..n_value - 1).map(|t| t as f64).collect();
            let hist = Histogram::from_stats(&bins);
            let (got, splittable) = scan_exact(
                hist.view(),
                &thresholds,
                &total,
                rule.score(&total),
                3,
                &rule,
                allowed.as_deref(),
            );
            let want = reference(&bins, &total, &rule, allowed.as_deref());
            // Some threshold, with missing rows on either side, leaves both
            // sides their row minimum.
            let min = rule.min_samples_leaf;
            let missing = bins[n_value];
            let sides_ok = |first: BinStats| {
                let mut left = first;
                (0..n_value - 1).any(|b| {
                    left.add(&bins[b]);
                    left.n >= min && total.n - left.n >= min
                })
            };
            let want_splittable =
                sides_ok(BinStats::default()) || (missing.w > 0.0 && sides_ok(missing));
            assert_eq!(splittable, want_splittable, "trial {trial}");
            unsplittable += usize::from(!splittable);
            match (&got, want) {
                (None, None) => {}
                (Some(c), Some((b, dl, gain, l))) => {
                    assert_eq!((c.bin, c.default_left), (b, dl), "trial {trial}");
                    assert_eq!(c.gain.to_bits(), gain.to_bits(), "trial {trial}");
                    assert_eq!(c.left, l, "trial {trial}");
                    assert_eq!(c.right, total.sub(&l), "trial {trial}");
                    assert_eq!(c.threshold, thresholds[b]);
                }
                _ => panic!("trial {trial}: {got:?} vs {want:?}"),
            }
        }
        assert!(sparse_nodes > 300, "{sparse_nodes} trials skip empty bins");
        assert!(unsplittable > 100, "{unsplittable} trials cannot split");
    }
}
