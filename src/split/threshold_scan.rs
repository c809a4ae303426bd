//! The threshold scan of one numeric feature with exact row counts and no
//! monotone constraint, the common case: the rule's modes resolved once per
//! feature and each threshold judged branch-free. Each gain is computed with
//! the operations, in the order, of `SplitRule::gain_but_rows`, so the
//! winner and its bits are the ones the general scan finds.
use super::candidate::{SplitCandidate, better_than, clearly_better};
use super::gain::{Curvature, SplitRule};
use crate::histogram::{BinStats, HistSlice};

/// What the gain formula needs, with the rule's modes resolved up front.
#[derive(Clone, Copy)]
struct GainTerms {
    lambda: f64,
    min_rows: f64,
    min_child_weight: f64,
    min_split_gain: f64,
    floors_hessian: bool,
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
            floors_hessian: rule.floors_hessian(),
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
        & (!t.floors_hessian | (h >= t.min_child_weight))
        & (d_gain > TINY)
        & (d_leaf > TINY);
    let score = if REG {
        t.rule.score(&BinStats { g, h, w, n })
    } else {
        // Divided whatever `d_gain` (a select, not a branch, so that a
        // block's divisions vectorise); the quotient is dropped when unused.
        let quotient = g * g / d_gain;
        if d_gain > TINY { quotient } else { 0.0 }
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
        (false, false, false) => match (rule.gain, rule.leaf) {
            (Curvature::Hessian, Curvature::Hessian) => scan_blocked::<false, BOTH_H>(args),
            (Curvature::Weight, Curvature::Weight) => scan_blocked::<false, BOTH_W>(args),
            _ => scan_blocked::<false, MIXED>(args),
        },
        (true, true, false) => scan_exact_body::<true, true, false>(args),
        (false, true, false) => scan_blocked::<true, MIXED>(args),
        (true, _, true) => scan_exact_body::<true, true, true>(args),
        (false, _, true) => scan_exact_body::<false, true, true>(args),
    }
}

/// A feature's missing-value bin: its sums, and whether the node has any.
#[derive(Clone, Copy)]
struct Missing {
    stats: BinStats,
    seen: bool,
}

impl Missing {
    #[inline(always)]
    fn of(hist: &HistSlice, n_value_bins: usize) -> Missing {
        let stats = hist.stats(n_value_bins);
        Missing {
            stats,
            seen: stats.w > 0.0,
        }
    }

    /// The sides the missing rows are tried on: left only if there are some.
    #[inline(always)]
    fn directions(&self) -> &'static [bool] {
        if self.seen { &[false, true] } else { &[false] }
    }

    /// The split at value bin `bin` with `left` the value bins' left sums
    /// (the missing rows included if `missing_left`). With no missing rows
    /// seen, future missing values go to the heavier side.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn candidate(
        &self,
        feature: usize,
        bin: usize,
        threshold: f64,
        total: &BinStats,
        mut left: BinStats,
        missing_left: bool,
        gain: f64,
        min: f64,
    ) -> SplitCandidate {
        let mut right = total.sub(&left);
        let mut default_left = missing_left;
        if !self.seen && left.w >= right.w && right.n - self.stats.n >= min {
            default_left = true;
            left.add(&self.stats);
            right = total.sub(&left);
        }
        SplitCandidate {
            feature,
            bin,
            categories: None,
            threshold,
            default_left,
            default_by_rows: false,
            gain,
            left,
            right,
        }
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
    let missing = Missing::of(&hist, n_value_bins);
    let t = GainTerms::new(rule);
    let min = rule.min_samples_leaf;
    let mut best: Option<SplitCandidate> = None;
    let mut splittable = false;
    for &missing_left in missing.directions() {
        let mut left = if missing_left {
            missing.stats
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
            best = Some(missing.candidate(
                feature,
                b,
                thresholds[b],
                total,
                left,
                missing_left,
                gain,
                min,
            ));
        }
    }
    (best, splittable)
}

/// Thresholds per block of `scan_blocked_body`.
const BLOCK: usize = 64;

/// Which denominators a blocked scan's gains take (`scan_blocked`'s
/// `DENOM`): the gain's and the leaf's curvature both `Hessian`, both
/// `Weight`, or resolved per threshold by `side` (any other pair).
const MIXED: u8 = 0;
const BOTH_H: u8 = 1;
const BOTH_W: u8 = 2;

/// `scan_exact_body` without empty-bin skipping or leaf regularisers,
/// block by block (see `scan_blocked_body`), with AVX2 where the CPU has it.
#[inline(never)]
fn scan_blocked<const UNIT: bool, const DENOM: u8>(
    args: ScanArgs,
) -> (Option<SplitCandidate>, bool) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { scan_blocked_avx2::<UNIT, DENOM>(args) };
    }
    scan_blocked_body::<UNIT, DENOM>(args)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_blocked_avx2<const UNIT: bool, const DENOM: u8>(
    args: ScanArgs,
) -> (Option<SplitCandidate>, bool) {
    scan_blocked_body::<UNIT, DENOM>(args)
}

/// The left sides of a block of thresholds, one array per sum.
struct LeftSums {
    g: [f64; BLOCK],
    h: [f64; BLOCK],
    w: [f64; BLOCK],
    n: [f64; BLOCK],
}

/// `scan_exact_body::<false, UNIT, false>`, the same winner and bits, in
/// blocks of thresholds: the running sums of a block first, then its gains
/// apart from them, so that the divisions run side by side (in SIMD lanes)
/// instead of each waiting on the branch before it; a block none of whose
/// gains beats the best so far costs no branch per threshold.
///
/// The thresholds judged are those where both sides have their row minimum:
/// a run, since the left side only gains rows from bin to bin and the right
/// only loses them. Before it the running sum is only added up; at its end
/// the scan stops, as `scan_exact_body` does.
#[inline(always)]
fn scan_blocked_body<const UNIT: bool, const DENOM: u8>(
    (hist, thresholds, total, parent_score, feature, rule, allowed): ScanArgs,
) -> (Option<SplitCandidate>, bool) {
    let n_value_bins = thresholds.len() + 1;
    let last = n_value_bins - 1;
    let missing = Missing::of(&hist, n_value_bins);
    let t = GainTerms::new(rule);
    let min = rule.min_samples_leaf;
    let mut best: Option<SplitCandidate> = None;
    // A gain must exceed this to replace `best` (`clearly_better`); every
    // gain that passes the checks exceeds −∞.
    let mut bar = f64::NEG_INFINITY;
    let mut splittable = false;
    let mut sums = LeftSums {
        g: [0.0; BLOCK],
        h: [0.0; BLOCK],
        w: [0.0; BLOCK],
        n: [0.0; BLOCK],
    };
    let mut gains = [0.0; BLOCK];
    // The running sums live in registers (a `BinStats` would be kept in
    // memory, and every add would wait on a store and a reload).
    let (total_n, min) = (total.n, min);
    for &missing_left in missing.directions() {
        let start = if missing_left {
            missing.stats
        } else {
            BinStats::default()
        };
        let (mut g, mut h, mut w, mut n) = (start.g, start.h, start.w, start.n);
        let mut b = 0;
        // Thresholds whose left side lacks the row minimum: not judged.
        while b < last {
            let bin = hist.stats(b);
            if n + bin.n >= min {
                break;
            }
            (g, h, w, n) = (g + bin.g, h + bin.h, w + bin.w, n + bin.n);
            b += 1;
        }
        let mut left = (g, h, w, n);
        let mut ended = false;
        while b < last && !ended {
            let len;
            (len, ended) = fill_block(hist, b..last, total_n, min, &mut left, &mut sums);
            if len == 0 {
                break;
            }
            splittable = true;
            let any = if DENOM == MIXED {
                block_gains::<UNIT>(&t, total, parent_score, &sums, len, bar, &mut gains)
            } else {
                block_gains_same::<DENOM>(&t, total, parent_score, &sums, len, bar, &mut gains)
            };
            if any {
                for (i, &gain) in gains[..len].iter().enumerate() {
                    let bin = b + i;
                    if !(gain > bar) || allowed.is_some_and(|a| !a[bin]) {
                        continue;
                    }
                    let left = BinStats {
                        g: sums.g[i],
                        h: sums.h[i],
                        w: sums.w[i],
                        n: sums.n[i],
                    };
                    bar = better_than(gain, parent_score);
                    let threshold = thresholds[bin];
                    best = Some(missing.candidate(
                        feature,
                        bin,
                        threshold,
                        total,
                        left,
                        missing_left,
                        gain,
                        min,
                    ));
                }
            }
            b += len;
        }
    }
    (best, splittable)
}

/// The running sums `left` = (Σg, Σh, Σw, n) over the bins of `bins`, one
/// at a time, into `sums`, until a block is full, the bins end, or the right
/// side (`total_n` − n) drops below `min` (then the bin that did is not
/// stored, and the second result is true). Returns how many were stored;
/// `left` ends as the sums after the last stored bin. Apart from the scan
/// so that the sums stay in registers.
#[inline(never)]
fn fill_block(
    hist: HistSlice,
    bins: std::ops::Range<usize>,
    total_n: f64,
    min: f64,
    left: &mut (f64, f64, f64, f64),
    sums: &mut LeftSums,
) -> (usize, bool) {
    let (mut g, mut h, mut w, mut n) = *left;
    let end = bins.end.min(bins.start + BLOCK);
    let mut len = 0;
    let mut ended = false;
    for b in bins.start..end {
        let bin = hist.stats(b);
        let next = (g + bin.g, h + bin.h, w + bin.w, n + bin.n);
        if total_n - next.3 < min {
            // The right side only shrinks from here.
            ended = true;
            break;
        }
        (g, h, w, n) = next;
        (sums.g[len], sums.h[len], sums.w[len], sums.n[len]) = next;
        len += 1;
    }
    *left = (g, h, w, n);
    (len, ended)
}

/// The gains of a block's first `len` thresholds into `gains`: −∞ where
/// `scan_exact_body` would reject the threshold before comparing it with
/// the best so far. The same operations per threshold, without branches.
/// Returns whether any gain exceeds `bar`.
// One index into five arrays in step.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn block_gains<const UNIT: bool>(
    t: &GainTerms,
    total: &BinStats,
    parent_score: f64,
    left: &LeftSums,
    len: usize,
    bar: f64,
    gains: &mut [f64; BLOCK],
) -> bool {
    // Whole SIMD vectors: the lanes past `len` are computed and dropped.
    let lanes = len.next_multiple_of(4).min(BLOCK);
    for i in 0..lanes {
        let (g, h, w, n) = (left.g[i], left.h[i], left.w[i], left.n[i]);
        let (sl, okl) = side::<UNIT, false>(t, g, h, w, n);
        let (rg, rh, rw, rn) = (total.g - g, total.h - h, total.w - w, total.n - n);
        let (sr, okr) = side::<UNIT, false>(t, rg, rh, rw, rn);
        let children = sl + sr;
        let gain = children - parent_score;
        let pass = okl & okr & (gain > t.min_split_gain) & (gain > 1e-10 * children);
        gains[i] = if pass { gain } else { f64::NEG_INFINITY };
    }
    gains[..len]
        .iter()
        .fold(false, |any, &gain| any | (gain > bar))
}

/// `block_gains` when the gain and the leaf share one curvature, the
/// hessian (`BOTH_H`) or the weight (`BOTH_W`): each side's denominator is that sum
/// plus λ. The same operations give the same gains; what differs is the
/// checks, each a select on the gain (as wide as the gain, so they stay in
/// the SIMD lanes): the row minimum holds on both sides of every threshold
/// in a block (`fill_block`); a side whose denominator is at most `TINY`
/// fails, so its quotient is never kept; and the hessian minimum applies
/// as `SplitRule::floors_hessian` says.
// One index into five arrays in step.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn block_gains_same<const DENOM: u8>(
    t: &GainTerms,
    total: &BinStats,
    parent_score: f64,
    left: &LeftSums,
    len: usize,
    bar: f64,
    gains: &mut [f64; BLOCK],
) -> bool {
    const TINY: f64 = 1e-300;
    const OUT: f64 = f64::NEG_INFINITY;
    let newton = DENOM == BOTH_H;
    let (lambda, min_h, min_gain) = (t.lambda, t.min_child_weight, t.min_split_gain);
    let lanes = len.next_multiple_of(4).min(BLOCK);
    for i in 0..lanes {
        let (g, h, w) = (left.g[i], left.h[i], left.w[i]);
        let (rg, rh, rw) = (total.g - g, total.h - h, total.w - w);
        let dl = if newton { h } else { w } + lambda;
        let dr = if newton { rh } else { rw } + lambda;
        let children = g * g / dl + rg * rg / dr;
        let gain = children - parent_score;
        let mut v = if gain > min_gain { gain } else { OUT };
        v = if gain > 1e-10 * children { v } else { OUT };
        v = if dl > TINY { v } else { OUT };
        v = if dr > TINY { v } else { OUT };
        if newton || t.floors_hessian {
            v = if h >= min_h { v } else { OUT };
            v = if rh >= min_h { v } else { OUT };
        }
        gains[i] = v;
    }
    gains[..len]
        .iter()
        .fold(false, |any, &gain| any | (gain > bar))
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

    /// The blocked scan against `scan_exact_body` on the same bins: the
    /// same winner, gain bits, sides and `splittable`. Integer gradients
    /// make many gains equal (ties keep the first threshold); unit
    /// hessians come without row counts, as the histogram stores them;
    /// hessian minimums bind at either end, also with some negative
    /// hessians (a custom loss's).
    #[test]
    fn blocked_scan_equals_the_plain_scan() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut ties = 0;
        for trial in 0..4000 {
            let n_value = 2 + rng.random_range(0..260usize);
            let unit_hessian = trial % 2 == 0;
            let weighted = !unit_hessian && trial % 3 == 0;
            let integer = trial % 4 < 2;
            let missing_share = [0.0, 0.5][(trial / 4) % 2];
            let mut gh = vec![[0.0; 2]; n_value + 1];
            let mut count = vec![0u32; n_value + 1];
            let mut weight = vec![0.0; n_value + 1];
            for b in 0..=n_value {
                if b == n_value && rng.random::<f64>() >= missing_share {
                    continue; // no missing rows
                }
                if b < n_value && rng.random::<f64>() < 0.1 {
                    continue; // empty
                }
                let n = rng.random_range(1..40u32);
                let g = if integer {
                    rng.random_range(-3..4) as f64
                } else {
                    (rng.random::<f64>() - 0.45) * n as f64
                };
                let h = if unit_hessian {
                    n as f64
                } else if trial % 10 == 3 && rng.random::<f64>() < 0.1 {
                    // A custom loss's negative hessian: Σh no longer grows
                    // from bin to bin.
                    -rng.random::<f64>() * n as f64
                } else {
                    0.01 + rng.random::<f64>() * n as f64 * 0.25
                };
                gh[b] = [g, h];
                count[b] = n;
                weight[b] = if weighted {
                    n as f64 * rng.random::<f64>() * 2.0
                } else {
                    n as f64
                };
            }
            let hist = HistSlice {
                gh: &gh,
                count: if unit_hessian { &[] } else { &count },
                weight: if weighted { &weight } else { &[] },
            };
            let mut total = BinStats::default();
            (0..=n_value).for_each(|b| total.add(&hist.stats(b)));
            let mode = [Curvature::Hessian, Curvature::Weight, Curvature::Unit][trial % 3];
            let rule = SplitRule {
                gain: mode,
                leaf: mode,
                lambda: [0.0, 1.0, 1e-3][trial % 3],
                min_samples_leaf: [1.0, 20.0, rng.random_range(2..200) as f64][(trial / 3) % 3],
                min_child_weight: [0.0, 1e-3, 5.0][(trial / 5) % 3],
                min_split_gain: [0.0, 0.01][(trial / 7) % 2],
                cat: CatRule::default(),
                reg: LeafReg::NONE,
            };
            let allowed: Option<Vec<bool>> =
                (trial % 6 == 0).then(|| (0..n_value).map(|_| rng.random::<f64>() < 0.7).collect());
            let thresholds: Vec<f64> = (0..n_value - 1).map(|t| t as f64 * 0.5).collect();
            let args = (
                hist,
                &thresholds[..],
                &total,
                rule.score(&total),
                7,
                &rule,
                allowed.as_deref(),
            );
            let (got, want) = match mode {
                Curvature::Unit => (
                    scan_blocked::<true, MIXED>(args),
                    scan_exact_body::<false, true, false>(args),
                ),
                _ => {
                    // The per-threshold kernel as well as the specialised one.
                    let mixed = scan_blocked::<false, MIXED>(args);
                    let same = match mode {
                        Curvature::Hessian => scan_blocked::<false, BOTH_H>(args),
                        _ => scan_blocked::<false, BOTH_W>(args),
                    };
                    assert_eq!(mixed, same, "trial {trial}");
                    (same, scan_exact_body::<false, false, false>(args))
                }
            };
            assert_eq!(got.1, want.1, "trial {trial}: splittable");
            match (&got.0, &want.0) {
                (None, None) => {}
                (Some(c), Some(w)) => {
                    assert_eq!(c.gain.to_bits(), w.gain.to_bits(), "trial {trial}");
                    assert_eq!(c, w, "trial {trial}");
                    // Another threshold with the same gain bits came later.
                    let mut left = BinStats::default();
                    if c.default_left && hist.stats(n_value).w > 0.0 {
                        left = hist.stats(n_value);
                    }
                    ties += usize::from((0..n_value - 1).any(|b| {
                        left.add(&hist.stats(b));
                        b > c.bin
                            && rule
                                .gain(args.3, &left, &total.sub(&left))
                                .is_some_and(|g| g.to_bits() == c.gain.to_bits())
                    }));
                }
                _ => panic!("trial {trial}: {got:?} vs {want:?}"),
            }
        }
        assert!(ties > 50, "{ties} trials with a tie after the winner");
    }
}
