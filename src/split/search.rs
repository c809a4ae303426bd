//! Best threshold per feature from a node's histogram, with a learned
//! direction for missing values, and the best over a set of features.
use rayon::prelude::*;

pub use super::candidate::SplitCandidate;
use super::candidate::clearly_better;
use super::gain::{Curvature, SplitRule};
use super::threshold_scan::scan_exact;
use crate::constraints::{Bounds, MonotoneSplit};
use crate::data::BinnedDataset;
use crate::data::dataset::{BinCode, Column};
use crate::histogram::{BinStats, HistSlice, Histogram};
use crate::selection::Candidates;

/// What a histogram tells about the rows in its bins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RowCounts {
    /// Bins count their rows (or are weighted, or Σh is the count).
    Exact,
    /// Unweighted bins without row counts, whose every row has a hessian in
    /// `[h_min, h_max]` with `h_min > 0`: a bin sum Σh then bounds its rows,
    /// Σh/h_max ≤ n ≤ Σh/h_min. `slack` bounds the rounding error of any
    /// sum of hessians the search reads (sums, differences of sums), and is
    /// below `h_min / 4`. Wherever the bound leaves a decision open (a
    /// candidate near `min_samples_leaf` that could win), the search counts
    /// that feature's rows exactly.
    Bounded { h_min: f64, h_max: f64, slack: f64 },
}

/// A node's monotone constraints: every feature's direction and the node's
/// bounds on leaf values.
#[derive(Clone, Copy, Debug)]
pub struct NodeMonotone<'c> {
    pub directions: &'c [i8],
    pub bounds: Bounds,
}

impl NodeMonotone<'_> {
    /// What constrains a split on feature `j`; `None` when nothing does (a
    /// free feature in a node with free bounds searches as unconstrained).
    fn for_feature(&self, j: usize) -> Option<MonotoneSplit> {
        let direction = self.directions[j];
        (direction != 0 || !self.bounds.is_free()).then_some(MonotoneSplit {
            direction,
            bounds: self.bounds,
        })
    }
}

/// `rule.gain_but_rows`, or its monotone form when a constraint applies.
#[inline(always)]
fn split_gain(
    rule: &SplitRule,
    parent_score: f64,
    left: &BinStats,
    right: &BinStats,
    mono: Option<MonotoneSplit>,
) -> Option<f64> {
    match mono {
        None => rule.gain_but_rows(parent_score, left, right),
        Some(m) => rule.monotone_gain_but_rows(parent_score, left, right, m),
    }
}

/// What a bounded count says about `n ≥ min` for a side with hessian sum `h`.
#[derive(Clone, Copy, PartialEq)]
enum Enough {
    Yes,
    No,
    Unknown,
}

/// `slack` covers the rounding of `h` (sums, and differences of sums).
#[inline(always)]
fn enough_rows(h: f64, slack: f64, min: f64, h_min: f64, h_max: f64) -> Enough {
    if (h - slack) / h_max >= min {
        Enough::Yes
    } else if (h + slack) / h_min < min {
        Enough::No
    } else {
        Enough::Unknown
    }
}

/// A feature's scan with bounded counts could not decide without counts.
pub struct NeedsCounts;

/// Best split of one feature, scanning thresholds left to right, with missing
/// values sent right, then left. Ties keep the first candidate found.
///
/// Exact counts always decide. With bounded counts the winner is the one
/// exact counts would give, or the scan asks for exact counts
/// (`NeedsCounts`) when undecided candidates could change it (see the end of
/// the function). The winner's row counts are then unknown (NaN), and so is
/// its missing-value direction when the node has no missing rows
/// (`default_by_rows`): the caller fills them in from the partition.
#[allow(clippy::too_many_arguments)]
fn scan_feature<const MONOTONE: bool>(
    hist: HistSlice,
    thresholds: &[f64],
    total: &BinStats,
    parent_score: f64,
    feature: usize,
    rule: &SplitRule,
    allowed: Option<&[bool]>,
    counts: RowCounts,
    mono: Option<MonotoneSplit>,
) -> Result<Option<SplitCandidate>, NeedsCounts> {
    if !MONOTONE && counts == RowCounts::Exact {
        return Ok(scan_exact(
            hist,
            thresholds,
            total,
            parent_score,
            feature,
            rule,
            allowed,
        )
        .0);
    }
    let n_value_bins = thresholds.len() + 1;
    let missing = hist.stats(n_value_bins);
    let min = rule.min_samples_leaf;
    // Missing rows count as seen only when they carry weight, so zero-weight
    // rows change nothing (a fit with weights equals one on repeated rows).
    let missing_seen = match counts {
        RowCounts::Exact => missing.w > 0.0,
        // One row gives at least h_min, no row at most the rounding slack.
        RowCounts::Bounded { h_min, .. } => missing.h > 0.5 * h_min,
    };
    let directions: &[bool] = if missing_seen {
        &[false, true]
    } else {
        &[false]
    };
    let mut best: Option<SplitCandidate> = None;
    // Bounded counts: the largest gain of a candidate whose row minimum is
    // undecided, of a decided candidate so far, and of the decided ones
    // before the current best.
    let (mut undecided_max, mut decided_max, mut before_best_max) =
        (f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY);
    for &missing_left in directions {
        let mut left = if missing_left {
            missing
        } else {
            BinStats::default()
        };
        for b in 0..n_value_bins - 1 {
            left.add(&hist.stats(b));
            let right = total.sub(&left);
            let (left_ok, right_ok) = match counts {
                RowCounts::Exact => (
                    if left.n < min {
                        Enough::No
                    } else {
                        Enough::Yes
                    },
                    if right.n < min {
                        Enough::No
                    } else {
                        Enough::Yes
                    },
                ),
                RowCounts::Bounded {
                    h_min,
                    h_max,
                    slack,
                } => (
                    enough_rows(left.h, slack, min, h_min, h_max),
                    enough_rows(right.h, slack, min, h_min, h_max),
                ),
            };
            if left_ok == Enough::No {
                continue;
            }
            if right_ok == Enough::No {
                // Right only shrinks from here.
                break;
            }
            if allowed.is_some_and(|a| !a[b]) {
                continue;
            }
            // Unconstrained scans compile without the constrained branch.
            let gain = match mono {
                Some(m) if MONOTONE => rule.monotone_gain_but_rows(parent_score, &left, &right, m),
                _ => rule.gain_but_rows(parent_score, &left, &right),
            };
            if let Some(gain) = gain {
                if left_ok == Enough::Unknown || right_ok == Enough::Unknown {
                    undecided_max = undecided_max.max(gain);
                    continue;
                }
                if best
                    .as_ref()
                    .is_none_or(|c| clearly_better(gain, c.gain, parent_score))
                {
                    before_best_max = decided_max;
                    let (mut default_left, mut left, mut right) = (missing_left, left, right);
                    let mut default_by_rows = false;
                    if !missing_seen {
                        match counts {
                            // With no missing rows seen, send future missing
                            // values to the heavier side.
                            RowCounts::Exact => {
                                if left.w >= right.w && right.n - missing.n >= min {
                                    // Zero-weight missing rows follow the default to the heavier left side.
                                    default_left = true;
                                    left.add(&missing);
                                    right = total.sub(&left);
                                }
                            }
                            // Unweighted and no missing rows: the heavier side
                            // has more rows, known after the partition.
                            RowCounts::Bounded { .. } => default_by_rows = true,
                        }
                    }
                    if let RowCounts::Bounded { .. } = counts {
                        for side in [&mut left, &mut right] {
                            side.n = f64::NAN;
                            side.w = f64::NAN;
                        }
                    }
                    best = Some(SplitCandidate {
                        feature,
                        bin: b,
                        categories: None,
                        threshold: thresholds[b],
                        default_left,
                        default_by_rows,
                        gain,
                        left,
                        right,
                    });
                }
                decided_max = decided_max.max(gain);
            }
        }
    }
    if undecided_max == f64::NEG_INFINITY {
        return Ok(best);
    }
    // Undecided candidates change nothing when the best clearly beats each of
    // them and every decided candidate before it: whichever of them are
    // valid, the exact scan reaches the best with a running best it clearly
    // beats, and nothing after it clearly beats it.
    match &best {
        Some(c)
            if clearly_better(c.gain, undecided_max, parent_score)
                && (before_best_max == f64::NEG_INFINITY
                    || clearly_better(c.gain, before_best_max, parent_score)) =>
        {
            Ok(best)
        }
        _ => Err(NeedsCounts),
    }
}

/// Best category-set split of a categorical feature (exact counts). The
/// categories with rows in the node, and the missing bin when it has weight,
/// are the items. With at most `max_cat_to_onehot` items each one is tried
/// against the rest; otherwise LightGBM's sorted scan: the items with at
/// least `cat_smooth` rows are sorted by `SplitRule::category_key`, and
/// prefixes and suffixes of up to min(`max_cat_threshold`, half the sorted
/// items) are tried against the rest, each side holding `min_data_per_group`
/// rows or more, and every group of items added since the previous candidate
/// as well; their children are scored with λ + `cat_l2` (unless the gain's
/// curvature is the unit one) (with `cat_smooth`
/// = 0, no limits and no `cat_l2` the best partition is among them, Fisher
/// 1958). The side holding the missing bin, or else the rest, is the default
/// side, which unseen categories follow too.
fn scan_categorical(
    hist: HistSlice,
    n_value_bins: usize,
    total: &BinStats,
    parent_score: f64,
    feature: usize,
    rule: &SplitRule,
    mono: Option<MonotoneSplit>,
) -> Option<SplitCandidate> {
    let missing_bin = n_value_bins;
    let mut items: Vec<(usize, BinStats)> = (0..n_value_bins)
        .map(|b| (b, hist.stats(b)))
        .filter(|(_, s)| s.n > 0.0)
        .collect();
    let missing = hist.stats(missing_bin);
    if missing.w > 0.0 {
        items.push((missing_bin, missing));
    }
    if items.len() < 2 {
        return None;
    }
    let cat = rule.cat;
    // (gain, which items of `order` form the set: a prefix or a suffix).
    let mut best: Option<(f64, usize, bool)> = None;
    let order: Vec<(usize, BinStats)> = if items.len() <= cat.max_cat_to_onehot {
        items.clone()
    } else {
        let mut order: Vec<(usize, BinStats)> = items
            .iter()
            .filter(|(_, s)| s.n >= cat.sorted_min_rows)
            .copied()
            .collect();
        // Stable: equal keys stay in bin order.
        order.sort_by(|a, b| rule.category_key(&a.1).total_cmp(&rule.category_key(&b.1)));
        order
    };
    let mut consider = |set: &BinStats, k: usize, suffix: bool| {
        let rest = total.sub(set);
        let rows_ok = set.n >= rule.min_samples_leaf && rest.n >= rule.min_samples_leaf;
        if let Some(gain) = rows_ok
            .then(|| split_gain(rule, parent_score, set, &rest, mono))
            .flatten()
            && best.is_none_or(|(b, _, _)| clearly_better(gain, b, parent_score))
        {
            best = Some((gain, k, suffix));
        }
    };
    if items.len() <= cat.max_cat_to_onehot {
        // One item against the rest: `k` is the item's index.
        for (k, (_, s)) in order.iter().enumerate() {
            consider(s, k, false);
        }
    } else {
        let max_k = cat.max_cat_threshold.min(order.len().div_ceil(2));
        // cat_l2 is in hessian (or weight) units; the unit-curvature score
        // G²/(1 + λ) of RGB's Lipschitz candidate has no such sum to add to.
        let sorted_rule = SplitRule {
            lambda: rule.lambda
                + if rule.gain == Curvature::Unit {
                    0.0
                } else {
                    cat.cat_l2
                },
            ..*rule
        };
        for suffix in [false, true] {
            let (mut set, mut group) = (BinStats::default(), 0.0);
            for k in 1..=max_k {
                let item = &order[if suffix { order.len() - k } else { k - 1 }].1;
                set.add(item);
                group += item.n;
                if set.n < rule.min_samples_leaf || !rule.child_ok_but_rows(&set) {
                    continue;
                }
                let rest = total.sub(&set);
                // Sides only shrink from here on.
                if rest.n < rule.min_samples_leaf || rest.n < cat.min_data_per_group {
                    break;
                }
                if !rule.child_ok_but_rows(&rest) || group < cat.min_data_per_group {
                    continue;
                }
                group = 0.0;
                if let Some(gain) = split_gain(&sorted_rule, parent_score, &set, &rest, mono)
                    && best.is_none_or(|(b, _, _)| clearly_better(gain, b, parent_score))
                {
                    best = Some((gain, k, suffix));
                }
            }
        }
    }
    let (gain, k, suffix) = best?;
    let chosen: &[(usize, BinStats)] = if items.len() <= cat.max_cat_to_onehot {
        &order[k..k + 1]
    } else if suffix {
        &order[order.len() - k..]
    } else {
        &order[..k]
    };
    let mut in_set = vec![false; n_value_bins + 1];
    let mut set = BinStats::default();
    for (b, s) in chosen {
        in_set[*b] = true;
        set.add(s);
    }
    // The bins away from the default side.
    let away: Vec<u32> = if in_set[missing_bin] {
        items
            .iter()
            .filter(|(b, _)| *b != missing_bin && !in_set[*b])
            .map(|(b, _)| *b as u32)
            .collect()
    } else {
        (0..n_value_bins)
            .filter(|&b| in_set[b])
            .map(|b| b as u32)
            .collect()
    };
    let left = if in_set[missing_bin] {
        total.sub(&set)
    } else {
        set
    };
    Some(SplitCandidate {
        feature,
        bin: 0,
        categories: Some(away),
        threshold: 0.0,
        default_left: false,
        default_by_rows: false,
        gain,
        left,
        right: total.sub(&left),
    })
}

/// Below this many histogram bins the search runs on one thread (waking
/// workers costs more than scanning a few thousand bins). criterion, 28 × 255
/// bins: 50 µs on one thread, 39-45 µs on two.
const PARALLEL_MIN_BINS: usize = 4 * 1024;

/// Best split of a node among the candidates; ties go to the earlier feature.
/// `rows` are the node's rows: with bounded counts, a feature the bounds
/// cannot decide has its rows counted from them.
///
/// Candidates no threshold of which leaves both sides their row minimum
/// are added to `constant` (in feature order): they cannot split this node
/// or any node below it, so the grower leaves them out there. (Numeric
/// features with exact counts and no monotone constraint are checked: the
/// common scan; the others are always searched.)
#[allow(clippy::too_many_arguments)]
pub fn best_split(
    data: &BinnedDataset,
    hist: &Histogram,
    total: &BinStats,
    cands: &Candidates,
    rule: &SplitRule,
    counts: RowCounts,
    rows: &[u32],
    mono: Option<NodeMonotone>,
    constant: &mut Vec<usize>,
) -> Option<SplitCandidate> {
    let parent_score = match mono {
        Some(m) if !m.bounds.is_free() => rule.bounded_score(total, m.bounds),
        _ => rule.score(total),
    };
    let features = &cands.features;
    let node = NodeSearch {
        data,
        total,
        parent_score,
        cands,
        rule,
        counts,
        rows,
        mono,
    };
    let one = |(k, &j): (usize, &usize)| {
        let h = hist.slice(data.bin_offsets[j]..data.bin_offsets[j + 1]);
        node.feature(k, j, h)
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
    let mut best = None;
    let mut take = |j: usize, (found, splittable): (Option<SplitCandidate>, bool)| {
        if !splittable {
            constant.push(j);
        }
        if let Some(c) = found {
            best = pick(best.take(), c);
        }
    };
    if bins >= PARALLEL_MIN_BINS {
        // Features binning left out (no bins: sparse data can have a
        // million) are constant; only the others are searched in parallel.
        let searched: Vec<(usize, &usize)> = features
            .iter()
            .enumerate()
            .filter(|&(_, &j)| data.bin_offsets[j + 1] > data.bin_offsets[j])
            .collect();
        let per_feature: Vec<_> = searched.par_iter().map(|&kj| one(kj)).collect();
        let mut found = searched.iter().zip(per_feature).peekable();
        for &j in features {
            match found.next_if(|((_, f), _)| **f == j) {
                Some((_, r)) => take(j, r),
                None => take(j, (None, false)),
            }
        }
    } else {
        for (k, j) in features.iter().enumerate() {
            take(*j, one((k, j)));
        }
    }
    best
}

/// What every feature's search in one node shares.
struct NodeSearch<'a> {
    data: &'a BinnedDataset,
    total: &'a BinStats,
    parent_score: f64,
    cands: &'a Candidates,
    rule: &'a SplitRule,
    counts: RowCounts,
    rows: &'a [u32],
    mono: Option<NodeMonotone<'a>>,
}

impl NodeSearch<'_> {
    /// Best split of candidate `k` (feature `j`, bins `h`), and false when
    /// the feature can split no node below (see `scan_exact`).
    fn feature(&self, k: usize, j: usize, h: HistSlice) -> (Option<SplitCandidate>, bool) {
        let (data, total, parent_score, rule, counts) = (
            self.data,
            self.total,
            self.parent_score,
            self.rule,
            self.counts,
        );
        if h.is_empty() {
            // A feature binning left out: it can split no node.
            return (None, false);
        }
        let fb = &data.mapper.features[j];
        let mono = self.mono.and_then(|m| m.for_feature(j));
        if fb.is_categorical() {
            // Category sets need each bin's row count (`min_data_per_group`,
            // and the sides' sizes are not bounded by a running sum).
            let exact;
            let h = match counts {
                RowCounts::Exact => h,
                RowCounts::Bounded { .. } => {
                    exact = feature_row_counts(data, j, self.rows);
                    HistSlice { count: &exact, ..h }
                }
            };
            let best = scan_categorical(h, fb.n_value_bins(), total, parent_score, j, rule, mono);
            return (best, true);
        }
        let allowed = self.cands.allowed.as_ref().map(|a| &a[k][..]);
        let thresholds = &fb.thresholds;
        if mono.is_none() && counts == RowCounts::Exact {
            return scan_exact(h, thresholds, total, parent_score, j, rule, allowed);
        }
        let scan = |h: HistSlice<'_>, counts: RowCounts| match mono {
            None => scan_feature::<false>(
                h,
                thresholds,
                total,
                parent_score,
                j,
                rule,
                allowed,
                counts,
                None,
            ),
            Some(_) => scan_feature::<true>(
                h,
                thresholds,
                total,
                parent_score,
                j,
                rule,
                allowed,
                counts,
                mono,
            ),
        };
        let best = scan(h, counts).unwrap_or_else(|NeedsCounts| {
            let exact = feature_row_counts(data, j, self.rows);
            scan(HistSlice { count: &exact, ..h }, RowCounts::Exact)
                .unwrap_or_else(|NeedsCounts| unreachable!("exact counts decide"))
        });
        (best, true)
    }
}

/// Rows per bin of feature `j` among `rows`.
fn feature_row_counts(data: &BinnedDataset, j: usize, rows: &[u32]) -> Vec<u32> {
    let mut counts = vec![0u32; data.bin_offsets[j + 1] - data.bin_offsets[j]];
    match data.column(j) {
        Column::U8(c) => count_codes(rows, &mut counts, |r| c[r].idx()),
        Column::U16(c) => count_codes(rows, &mut counts, |r| c[r].idx()),
        Column::Sparse(c) => c.for_each_code(rows, |_, code| counts[code] += 1),
    }
    counts
}

fn count_codes(rows: &[u32], counts: &mut [u32], code: impl Fn(usize) -> usize) {
    for &r in rows {
        counts[code(r as usize)] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Mode;
    use crate::split::gain::CatRule;

    fn rule() -> SplitRule {
        SplitRule {
            gain: Mode::Newton.into(),
            leaf: Mode::Newton.into(),
            lambda: 0.5,
            min_samples_leaf: 2.0,
            min_child_weight: 0.0,
            min_split_gain: 0.0,
            cat: CatRule::default(),
            reg: crate::split::gain::LeafReg::NONE,
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
            let got = scan_feature::<false>(
                Histogram::from_stats(&hist).view(),
                &thresholds,
                &total,
                r.score(&total),
                0,
                &r,
                None,
                RowCounts::Exact,
                None,
            )
            .unwrap_or_else(|NeedsCounts| unreachable!("exact counts decide"));
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
                    if let Some(gain) = r.gain(r.score(&total), &l, &rr)
                        && want.is_none_or(|w| gain > w.0 + 1e-12)
                    {
                        want = Some((gain, b, ml));
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

    fn random_node(
        next: &mut impl FnMut() -> f64,
        k: usize,
        n: usize,
    ) -> (Vec<(usize, BinStats)>, Vec<BinStats>, BinStats) {
        let rows: Vec<(usize, BinStats)> = (0..n)
            .map(|_| {
                let b = if next() < 0.15 {
                    k
                } else {
                    (next() * k as f64) as usize
                };
                let st = BinStats {
                    g: next() - 0.5,
                    h: 0.1 + next(),
                    w: 1.0,
                    n: 1.0,
                };
                (b, st)
            })
            .collect();
        let mut hist = vec![BinStats::default(); k + 1];
        let mut total = BinStats::default();
        for (b, st) in &rows {
            hist[*b].add(st);
            total.add(st);
        }
        (rows, hist, total)
    }

    /// The categorical scan against every partition of the node's items (its
    /// categories with rows and the missing bin): with `cat_smooth` = 0,
    /// λ = 0 and no limits, the sorted scan finds the best partition; with
    /// one-vs-rest, the best single item. The winner's sums are those of
    /// the rows it routes.
    #[test]
    fn categorical_scan_matches_brute_force_over_partitions() {
        let mut s = 5u64;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut splits = 0;
        for trial in 0..400 {
            let k = 2 + trial % 7;
            let n = 3 + trial % 40;
            let onehot = trial % 4 == 3;
            let (rows, hist, total) = random_node(&mut next, k, n);
            let mut r = rule();
            r.lambda = 0.0;
            r.min_samples_leaf = 1.0;
            r.min_child_weight = 0.0;
            r.cat = CatRule {
                max_cat_to_onehot: if onehot { 64 } else { 1 },
                max_cat_threshold: 64,
                cat_smooth: 0.0,
                sorted_min_rows: 0.0,
                min_data_per_group: 1.0,
                cat_l2: 0.0,
            };
            let parent = r.score(&total);
            let got = scan_categorical(
                Histogram::from_stats(&hist).view(),
                k,
                &total,
                parent,
                0,
                &r,
                None,
            );
            let items: Vec<usize> = (0..=k).filter(|&b| hist[b].n > 0.0).collect();
            let mut want: Option<f64> = None;
            for mask in 1u32..(1 << items.len()) - 1 {
                if onehot && mask.count_ones() != 1 && mask.count_ones() as usize != items.len() - 1
                {
                    continue;
                }
                let mut l = BinStats::default();
                for (i, &b) in items.iter().enumerate() {
                    if mask >> i & 1 == 1 {
                        l.add(&hist[b]);
                    }
                }
                if let Some(g) = r.gain(parent, &l, &total.sub(&l)) {
                    want = Some(want.map_or(g, |w: f64| w.max(g)));
                }
            }
            match (&got, want) {
                (None, None) => {}
                (Some(c), Some(w)) => {
                    splits += 1;
                    assert!(
                        (c.gain - w).abs() <= 1e-9 * w.abs().max(1.0),
                        "trial {trial}: {} vs {w}",
                        c.gain
                    );
                    let away = c.categories.as_ref().unwrap();
                    let mut left = BinStats::default();
                    for (b, st) in &rows {
                        let goes_away = *b < k && away.contains(&(*b as u32));
                        if goes_away != c.default_left {
                            left.add(st);
                        }
                    }
                    assert_eq!(left.n, c.left.n, "trial {trial}");
                    assert!((left.g - c.left.g).abs() < 1e-12, "trial {trial}");
                }
                other => panic!("trial {trial}: {other:?}"),
            }
        }
        assert!(splits > 300);
    }

    /// The sorted scan's limits: the set it picks holds at most
    /// `max_cat_threshold` items and half of those sorted, none with fewer
    /// than `cat_smooth` rows, and each side has `min_data_per_group` rows.
    #[test]
    fn categorical_limits_are_respected() {
        let mut s = 9u64;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut splits = 0;
        for trial in 0..300 {
            let k = 6 + trial % 10;
            let (_, hist, total) = random_node(&mut next, k, 60 + trial % 50);
            let mut r = rule();
            r.min_samples_leaf = 1.0;
            r.cat = CatRule {
                max_cat_to_onehot: 1,
                max_cat_threshold: 2 + trial % 4,
                cat_smooth: 1.0,
                sorted_min_rows: 4.0,
                min_data_per_group: 15.0,
                cat_l2: 1.0,
            };
            let parent = r.score(&total);
            let Some(c) = scan_categorical(
                Histogram::from_stats(&hist).view(),
                k,
                &total,
                parent,
                0,
                &r,
                None,
            ) else {
                continue;
            };
            splits += 1;
            let away = c.categories.unwrap();
            // The picked set is the bins away, or, when it held the missing
            // bin (which stays on the default side), that bin and the
            // sorted items not away.
            let sorted: Vec<usize> = (0..=k).filter(|&b| hist[b].n >= 4.0).collect();
            let cap = r.cat.max_cat_threshold.min(sorted.len().div_ceil(2));
            let fits = |set: &[usize]| set.len() <= cap && set.iter().all(|b| sorted.contains(b));
            let as_away: Vec<usize> = away.iter().map(|&b| b as usize).collect();
            let with_missing: Vec<usize> = std::iter::once(k)
                .chain(
                    sorted
                        .iter()
                        .copied()
                        .filter(|&b| b < k && !away.contains(&(b as u32))),
                )
                .collect();
            assert!(
                fits(&as_away) || fits(&with_missing),
                "trial {trial}: {away:?} of {sorted:?}"
            );
            assert!(c.left.n >= 15.0 && c.right.n >= 15.0, "trial {trial}");
        }
        assert!(splits > 100, "{splits}");
    }
}
