//! The grower against brute force, closed forms and its own exact-count path.
use super::*;
use crate::data::matrix::DenseMatrix;
use crate::params::Mode;

fn rule() -> SplitRule {
    SplitRule {
        gain: Mode::Newton.into(),
        leaf: Mode::Newton.into(),
        lambda: 0.0,
        min_samples_leaf: 1.0,
        min_child_weight: 0.0,
        min_split_gain: 0.0,
        cat: crate::split::gain::CatRule::default(),
        reg: crate::split::gain::LeafReg::NONE,
    }
}

/// A stump on 1-D data equals the brute-force best split over raw thresholds.
#[test]
fn stump_equals_brute_force() {
    let xs: Vec<f64> = (0..40).map(|i| ((i * 37) % 40) as f64 * 0.25).collect();
    let ys: Vec<f64> = xs
        .iter()
        .map(|&x| if x > 6.3 { 2.0 } else { (x * 1.7).sin() })
        .collect();
    let m = DenseMatrix::row_major(&xs, 40, 1).unwrap();
    let data = BinnedDataset::from_matrix(&m, 255, 0).unwrap();
    let gh: Vec<[f64; 2]> = ys.iter().map(|&y| [-y, 1.0]).collect();
    let cfg = GrowerConfig {
        max_depth: Some(1),
        max_leaves: None,
        rule: rule(),
        exact_counts: false,
        min_bounded_rows: 0,
    };
    let (grown, _, _) = grow_all(&data, cfg, &gh, &Candidates::all(data.n_features()));
    let t = &grown.tree;
    assert_eq!(t.n_internal(), 1);
    // Brute force: squared error of a two-mean fit at every midpoint.
    let mut sorted = xs.clone();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup();
    let sse = |thr: f64| {
        type Points = Vec<(f64, f64)>;
        let (l, r): (Points, Points) = (0..40)
            .map(|i| (xs[i], ys[i]))
            .partition(|(x, _)| *x <= thr);
        let part = |v: &Vec<(f64, f64)>| {
            let mean = v.iter().map(|p| p.1).sum::<f64>() / v.len() as f64;
            v.iter().map(|p| (p.1 - mean).powi(2)).sum::<f64>()
        };
        part(&l) + part(&r)
    };
    let best = sorted
        .windows(2)
        .map(|w| (w[0] + w[1]) / 2.0)
        .min_by(|a, b| sse(*a).total_cmp(&sse(*b)))
        .unwrap();
    assert_eq!(t.threshold[0], best);
    // Leaf values are the child means (Newton with h = 1).
    let left_mean = {
        let v: Vec<f64> = (0..40).filter(|&i| xs[i] <= best).map(|i| ys[i]).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!((t.leaf_value[!t.left[0] as usize] - left_mean).abs() < 1e-12);
}

/// Value k (row-major) of `scrambled_columns`.
fn scrambled_value(k: usize, modulus: usize) -> f64 {
    ((k * 7919) % modulus) as f64
}

/// n rows of p features with values (k · 7919) mod `modulus`, binned
/// into at most `max_bins` bins.
fn scrambled_columns(n: usize, p: usize, modulus: usize, max_bins: usize) -> BinnedDataset {
    let x: Vec<f64> = (0..n * p).map(|k| scrambled_value(k, modulus)).collect();
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    BinnedDataset::from_matrix(&m, max_bins, 0).unwrap()
}

/// Leaf values come from sums over the leaf's own rows, not from histogram
/// subtraction (parent − sibling), whose ~1e-16 residue turns −G/H into
/// garbage when a leaf's true sums are ~0.
#[test]
fn leaf_values_are_computed_from_the_leaf_rows() {
    let n = 3000;
    let data = scrambled_columns(n, 2, 211, 255);
    // Mixed magnitudes: exact zeros, tiny values and large awkward values.
    let gh: Vec<[f64; 2]> = (0..n)
        .map(|i| match i % 3 {
            0 => [0.0, 0.0],
            1 => [1e-13 * (i as f64).sin(), 1e-13],
            _ => [1e3 * (i as f64).cos(), 0.3 + (i as f64).sin().abs()],
        })
        .collect();
    let cfg = GrowerConfig {
        max_depth: None,
        max_leaves: Some(20),
        rule: SplitRule {
            min_child_weight: 0.0,
            ..rule()
        },
        exact_counts: false,
        min_bounded_rows: 0,
    };
    let (grown, rows, _) = grow_all(&data, cfg, &gh, &Candidates::all(data.n_features()));
    assert!(grown.tree.n_leaves() > 5);
    for (leaf, &(s, e)) in grown.leaf_ranges.iter().enumerate() {
        let want = rule().leaf_value(&sum_rows(&rows[s..e], &Gradients::new(&gh, None)));
        assert_eq!(
            grown.tree.leaf_value[leaf].to_bits(),
            want.to_bits(),
            "leaf {leaf}"
        );
    }
}

/// Grows one tree on every row and feature: the tree, the rows in leaf
/// order, and the counts the grower used.
fn grow_all(
    data: &BinnedDataset,
    cfg: GrowerConfig,
    gh: &[[f64; 2]],
    cands: &Candidates,
) -> (GrownTree, Vec<u32>, RowCounts) {
    let mut g = TreeGrower::new(data, cfg).unwrap();
    let mut rows: Vec<u32> = (0..data.n_rows as u32).collect();
    let grown = g.grow(
        &Gradients::new(gh, None),
        &mut rows,
        true,
        NodeSelection::Tree(cands),
    );
    (grown.unwrap(), rows, g.counts)
}

fn subset(features: Vec<usize>, allowed: Option<Vec<Vec<bool>>>) -> Candidates {
    Candidates { features, allowed }
}

/// Node scope: two features drawn afresh for every node (seeded).
fn grow_node_scope(
    data: &BinnedDataset,
    cfg: GrowerConfig,
    gh: &[[f64; 2]],
) -> (GrownTree, Vec<u32>, RowCounts) {
    use rand::SeedableRng;
    let params = crate::params::BoosterParams {
        selection: crate::params::Selection::Groups,
        selection_size: Some(crate::params::SelectionSize::Count(2)),
        ..Default::default()
    };
    let selector = Selector::new(&params, data).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut g = TreeGrower::new(data, cfg).unwrap();
    let mut rows: Vec<u32> = (0..data.n_rows as u32).collect();
    let grads = Gradients::new(gh, None);
    let grown = g.grow(
        &grads,
        &mut rows,
        true,
        NodeSelection::Node(&selector, &mut rng),
    );
    (grown.unwrap(), rows, g.counts)
}

/// Bounded counts (no per-bin counts, exact recounts where bounds leave
/// a decision open) grow the same trees, bit for bit, as exact counts:
/// missing values, near-tie gains and row minimums that bind often.
#[test]
fn bounded_counts_grow_the_same_trees_as_exact_counts() {
    let (n, p) = (3000, 5);
    let mut state = 7u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x: Vec<f64> = (0..n * p)
        .map(|k| match k % p {
            0 => (next() * 1000.0).floor(),
            1 if next() < 0.1 => f64::NAN,
            1 => next(),
            2 => (next() * 3.0).floor(),
            3 if next() < 0.02 => f64::NAN,
            _ => next() * next(),
        })
        .collect();
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    let mut fits = 0;
    // Threshold features only, then features 0 and 2 as categories (which
    // count their rows exactly whatever the histograms hold).
    for categorical in [&[][..], &[0, 2]] {
        let data =
            BinnedDataset::from_weighted_matrix(&m, 255, 0, None, categorical, 0, &Cancel::never())
                .unwrap();
        for round in 0..4 {
            // Logistic gradients at scores spread like a fit's (hessians 0.045-0.25).
            let gh: Vec<[f64; 2]> = (0..n)
                .map(|i| {
                    let score = 6.0 * next() - 3.0 + 0.5 * round as f64 * x[i * p + 4];
                    let prob = 1.0 / (1.0 + (-score).exp());
                    let y = if next() < prob + 0.2 * x[i * p + 4] {
                        1.0
                    } else {
                        0.0
                    };
                    [prob - y, prob * (1.0 - prob)]
                })
                .collect();
            for min_samples_leaf in [1.0, 7.0, 60.0] {
                for ((max_depth, max_leaves), sel) in [(None, Some(31)), (Some(6), None)]
                    .into_iter()
                    .flat_map(|shape| (0..4).map(move |sel| (shape, sel)))
                {
                    let grow = |exact_counts| {
                        let cfg = GrowerConfig {
                            max_depth,
                            max_leaves,
                            rule: SplitRule {
                                min_samples_leaf,
                                lambda: 0.5,
                                ..rule()
                            },
                            exact_counts,
                            min_bounded_rows: 0,
                        };
                        // Every feature; a subset (the feature-major kernel);
                        // a subset with some thresholds (Type 1); a fresh
                        // draw of 2 features per node (node scope).
                        let (grown, rows, counts) = match sel {
                            0 => grow_all(&data, cfg, &gh, &Candidates::all(p)),
                            1 => grow_all(&data, cfg, &gh, &subset(vec![0, 2, 4], None)),
                            2 => {
                                let every_other = (0..4)
                                    .map(|j| {
                                        (0..data.mapper.features[j].n_value_bins() - 1)
                                            .map(|b| b % 2 == j % 2)
                                            .collect()
                                    })
                                    .collect();
                                grow_all(
                                    &data,
                                    cfg,
                                    &gh,
                                    &subset(vec![0, 1, 2, 3], Some(every_other)),
                                )
                            }
                            _ => grow_node_scope(&data, cfg, &gh),
                        };
                        assert!(matches!(counts, RowCounts::Bounded { .. }) != exact_counts);
                        (format!("{:?}", grown.tree), grown.leaf_ranges, rows)
                    };
                    let exact = grow(true);
                    assert!(exact.1.len() > 4);
                    assert_eq!(
                        grow(false),
                        exact,
                        "round {round}, min_samples_leaf {min_samples_leaf}"
                    );
                    fits += 1;
                }
            }
        }
    }
    assert_eq!(fits, 192);
}

/// A NaN hessian anywhere (first row, last row, a later chunk) keeps
/// exact counts; the same hessians without it allow bounded ones.
#[test]
fn a_nan_hessian_keeps_exact_counts() {
    let n = 70_000;
    let data = scrambled_columns(n, 2, 1013, 64);
    let cfg = GrowerConfig {
        max_depth: Some(3),
        max_leaves: None,
        rule: rule(),
        exact_counts: false,
        min_bounded_rows: 0,
    };
    let grower = TreeGrower::new(&data, cfg).unwrap();
    let rows: Vec<u32> = (0..n as u32).collect();
    let mut gh: Vec<[f64; 2]> = (0..n).map(|i| [0.1, 0.1 + (i % 7) as f64 * 0.01]).collect();
    let counts = |gh: &[[f64; 2]]| {
        grower.row_counts(
            &rows,
            &Gradients {
                gh,
                weights: None,
                unit_hessian: false,
                uncounted: false,
            },
        )
    };
    assert!(matches!(counts(&gh), RowCounts::Bounded { .. }));
    for at in [0, n - 1, 40_000] {
        let kept = gh[at][1];
        gh[at][1] = f64::NAN;
        assert_eq!(counts(&gh), RowCounts::Exact, "NaN at row {at}");
        gh[at][1] = kept;
    }
}

#[test]
fn respects_leaf_and_depth_limits_and_ranges_cover_rows() {
    let n = 2000;
    let data = scrambled_columns(n, 3, 1013, 64);
    let gh: Vec<[f64; 2]> = (0..n)
        .map(|i| [((i * 31) % 17) as f64 - 8.0, 1.0])
        .collect();
    for (max_depth, max_leaves) in [(Some(3), None), (None, Some(7)), (Some(2), Some(10))] {
        let cfg = GrowerConfig {
            max_depth,
            max_leaves,
            rule: rule(),
            exact_counts: false,
            min_bounded_rows: 0,
        };
        let (grown, rows, _) = grow_all(&data, cfg, &gh, &Candidates::all(data.n_features()));
        grown.tree.validate(3).unwrap();
        let limit = max_leaves
            .unwrap_or(usize::MAX)
            .min(max_depth.map_or(usize::MAX, |d| 1 << d));
        assert!(grown.tree.n_leaves() <= limit);
        // Each leaf range holds exactly the rows the tree routes there.
        for (leaf, &(s, e)) in grown.leaf_ranges.iter().enumerate() {
            for &r in &rows[s..e] {
                assert_eq!(
                    grown
                        .tree
                        .leaf_index(|j| scrambled_value(r as usize * 3 + j, 1013)),
                    leaf
                );
            }
        }
        let mut all = rows.clone();
        all.sort();
        assert_eq!(all, (0..n as u32).collect::<Vec<_>>());
    }
}

thread_local! {
    /// Children built on their non-constant features only (this thread's).
    pub(super) static NARROWED_BUILDS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Best-first growth written from rows: each open leaf's best split found
/// by summing its rows at every threshold of every feature, with no
/// histograms and nothing left out. The splits (feature, bin) in order.
fn brute_force_best_first(
    data: &BinnedDataset,
    gh: &[[f64; 2]],
    rule: &SplitRule,
    max_leaves: usize,
) -> Vec<(usize, usize)> {
    let sum = |rows: &mut dyn Iterator<Item = usize>| {
        let mut s = BinStats::default();
        for r in rows {
            s.add(&BinStats {
                g: gh[r][0],
                h: gh[r][1],
                w: 1.0,
                n: 1.0,
            });
        }
        s
    };
    let best_of = |rows: &[usize]| {
        let total = sum(&mut rows.iter().copied());
        let parent = rule.score(&total);
        let mut best: Option<(f64, usize, usize)> = None;
        for j in 0..data.n_features() {
            for b in 0..data.mapper.features[j].n_value_bins() - 1 {
                let left = sum(&mut rows.iter().copied().filter(|&r| data.code(r, j) <= b));
                let gain = rule.gain(parent, &left, &total.sub(&left));
                // Ties (as the search judges them) go to the earlier split.
                let better = |g: f64, bg: f64| g > bg + 1e-9 * (bg.abs() + parent.abs());
                if let Some(g) = gain.filter(|&g| best.is_none_or(|(bg, _, _)| better(g, bg))) {
                    best = Some((g, j, b));
                }
            }
        }
        best
    };
    // (rows, best split, creation order)
    let mut open = vec![((0..data.n_rows).collect::<Vec<_>>(), None, 0)];
    open[0].1 = best_of(&open[0].0);
    let mut splits = Vec::new();
    let mut created = 1;
    while open.len() < max_leaves {
        let pick = (0..open.len())
            .filter(|&i| open[i].1.is_some())
            .max_by(|&a, &b| {
                let (ga, gb) = (open[a].1.unwrap().0, open[b].1.unwrap().0);
                ga.total_cmp(&gb).then(open[b].2.cmp(&open[a].2))
            });
        let Some(i) = pick else { break };
        let (rows, best, _) = open.swap_remove(i);
        let (_, j, b) = best.unwrap();
        splits.push((j, b));
        let (l, r): (Vec<usize>, Vec<usize>) = rows.iter().partition(|&&r| data.code(r, j) <= b);
        for (child, order) in [(l, created), (r, created + 1)] {
            let best = best_of(&child);
            open.push((child, best, order));
        }
        created += 2;
    }
    splits
}

/// Deep trees on sparse, wide data: most features are constant on a deep
/// node's few rows and are left out of the search, the bins built and the
/// subtraction below it. The splits are those of growth from the rows.
#[test]
fn trees_on_wide_sparse_data_equal_growth_from_rows() {
    use rand::{RngExt, SeedableRng};
    let (n, p) = (400, 80);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut next = || rng.random::<f64>();
    let x: Vec<f64> = (0..n * p)
        .map(|_| {
            if next() < 0.96 {
                0.0
            } else {
                (next() * 40.0).floor() + 1.0
            }
        })
        .collect();
    let data =
        BinnedDataset::from_matrix(&DenseMatrix::row_major(&x, n, p).unwrap(), 255, 0).unwrap();
    assert!(data.sparse_rows.is_some());
    let gh: Vec<[f64; 2]> = (0..n).map(|_| [next() - 0.5, 0.2 + next()]).collect();
    for min_samples_leaf in [1.0, 3.0] {
        let rule = SplitRule {
            min_samples_leaf,
            ..rule()
        };
        let cfg = GrowerConfig {
            max_depth: None,
            max_leaves: Some(100),
            rule,
            exact_counts: true,
            min_bounded_rows: 0,
        };
        NARROWED_BUILDS.with(|c| c.set(0));
        let (grown, _, _) = grow_all(&data, cfg, &gh, &Candidates::all(p));
        assert!(NARROWED_BUILDS.with(|c| c.get()) > 10);
        let want = brute_force_best_first(&data, &gh, &rule, 100);
        let t = &grown.tree;
        let got: Vec<(usize, f64)> = (0..t.n_internal())
            .map(|i| (t.feature[i] as usize, t.threshold[i]))
            .collect();
        let want: Vec<(usize, f64)> = want
            .iter()
            .map(|&(j, b)| (j, data.mapper.features[j].thresholds[b]))
            .collect();
        assert!(want.len() > 40, "{} splits", want.len());
        assert_eq!(got, want, "min_samples_leaf {min_samples_leaf}");
    }
}

/// extra_trees: the root's split is the best, by brute force over the
/// rows, of one threshold per feature, the one `random_threshold` draws;
/// across seeds the draws vary and differ from the full search.
#[test]
fn extra_trees_split_is_the_best_of_the_drawn_thresholds() {
    let (n, p) = (80, 4);
    let data = scrambled_columns(n, p, 17, 255);
    let x = |i: usize, j: usize| scrambled_value(i * p + j, 17);
    let gh: Vec<[f64; 2]> = (0..n)
        .map(|i| [-(x(i, 0) * 0.3 + (x(i, 2) * 0.7).sin()), 1.0])
        .collect();
    let cfg = GrowerConfig {
        max_depth: Some(1),
        max_leaves: None,
        rule: SplitRule {
            min_samples_leaf: 3.0,
            ..rule()
        },
        exact_counts: true,
        min_bounded_rows: 0,
    };
    let full = grow_all(&data, cfg, &gh, &Candidates::all(p)).0.tree;
    let score = |rows: &[usize]| {
        let g: f64 = rows.iter().map(|&i| gh[i][0]).sum();
        g * g / rows.len() as f64
    };
    let (mut differ, mut thresholds) = (0, std::collections::BTreeSet::new());
    for seed in 0..60 {
        let draws = RowDraws::new(seed, crate::rng::Purpose::ExtraTrees, 0);
        let mut g = TreeGrower::new(&data, cfg).unwrap();
        g.set_extra_trees(Some(draws));
        let mut rows: Vec<u32> = (0..n as u32).collect();
        let tree = g
            .grow(
                &Gradients::new(&gh, None),
                &mut rows,
                true,
                NodeSelection::Tree(&Candidates::all(p)),
            )
            .unwrap()
            .tree;
        // Brute force over the drawn thresholds, ties to the earlier feature.
        let mut best: Option<(f64, usize, f64)> = None;
        for j in 0..p {
            let fb = &data.mapper.features[j];
            let t = random_threshold(&draws, 0, j, fb.thresholds.len());
            let thr = fb.thresholds[t];
            let (l, r): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| x(i, j) <= thr);
            if l.len() < 3 || r.len() < 3 {
                continue;
            }
            let gain = score(&l) + score(&r) - score(&(0..n).collect::<Vec<_>>());
            if best.is_none_or(|(b, _, _)| gain > b + 1e-9) {
                best = Some((gain, j, thr));
            }
        }
        match best {
            None => assert_eq!(tree.n_internal(), 0, "seed {seed}"),
            Some((gain, j, thr)) => {
                assert_eq!(tree.feature[0] as usize, j, "seed {seed}");
                assert_eq!(tree.threshold[0], thr, "seed {seed}");
                assert!((tree.gain[0] - gain).abs() < 1e-9 * gain.abs().max(1.0));
                thresholds.insert((j, thr.to_bits()));
                differ += usize::from(
                    (tree.feature[0], tree.threshold[0]) != (full.feature[0], full.threshold[0]),
                );
            }
        }
    }
    assert!(thresholds.len() > 10, "{thresholds:?}");
    assert!(differ > 30, "{differ} of 60 differ from the full search");
}
