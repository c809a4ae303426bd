//! The tree best-first growth would have stopped at after fewer splits.
//!
//! Best-first growth splits the open leaf with the largest gain, and which
//! leaf that is never depends on the leaf limit: a tree grown to n splits is
//! the first n splits of any tree grown further on the same gradients (nodes
//! are numbered in split order). So one tree grown to the largest size gives
//! every smaller one: replay its first splits, and take each open leaf's
//! sums from its rows. `partition` is stable, so a node's rows were in
//! ascending order when it was an open leaf; summing them in that order
//! gives the smaller tree's leaf values bit for bit.
use rayon::prelude::*;

use super::{GrownTree, sum_rows};
use crate::alloc::with_capacity;
use crate::constraints::monotone::clip_leaves;
use crate::error::{Result, RgbmError};
use crate::histogram::Gradients;
use crate::split::SplitRule;
use crate::tree::Tree;

impl GrownTree {
    /// The number of splits (internal nodes).
    pub fn splits(&self) -> usize {
        self.tree.feature.len()
    }

    /// The tree best-first growth with `max_leaves = splits + 1` gives, with
    /// its row buffer (as `grow` leaves it), from this tree grown by the same
    /// grower on the same `grads`, with `rows` its row buffer and `rule` its
    /// split rule. `splits` at or above this tree's own gives this tree.
    pub fn prefix(
        &self,
        splits: usize,
        rows: &[u32],
        grads: &Gradients,
        rule: &SplitRule,
    ) -> Result<(GrownTree, Vec<u32>)> {
        let tree = &self.tree;
        let m = self.splits();
        let splits = splits.min(m);
        // A child reference as the tree stores it: c >= 0 internal, !c a leaf.
        let range = node_ranges(self);
        let range_of = |c: i32| {
            if c < 0 {
                self.leaf_ranges[!c as usize]
            } else {
                range[c as usize]
            }
        };
        // The open leaves after each split, numbered as `grow` numbers them:
        // the split leaf's slot goes to the left child, the right one is new.
        let mut open: Vec<i32> = with_capacity(splits + 1, "the open leaves")?;
        open.push(if m == 0 { !0 } else { 0 });
        for s in 0..splits {
            let slot = open
                .iter()
                .position(|&c| c == s as i32)
                .ok_or_else(|| RgbmError::param("tree", "nodes are not in split order"))?;
            open[slot] = tree.left[s];
            open.push(tree.right[s]);
        }
        let mut out = Tree {
            feature: tree.feature[..splits].to_vec(),
            threshold: tree.threshold[..splits].to_vec(),
            default_left: tree.default_left[..splits].to_vec(),
            left: tree.left[..splits].to_vec(),
            right: tree.right[..splits].to_vec(),
            gain: tree.gain[..splits].to_vec(),
            count: tree.count[..splits].to_vec(),
            categories: tree.categories.iter().take(splits).cloned().collect(),
            ..Tree::default()
        };
        if !out.has_categories() {
            out.categories.clear();
        }
        for child in out.left.iter_mut().chain(out.right.iter_mut()) {
            if *child < 0 || *child as usize >= splits {
                let k = open
                    .iter()
                    .position(|c| c == child)
                    .ok_or_else(|| RgbmError::param("tree", "a child is neither split nor open"))?;
                *child = !(k as i32);
            }
        }
        // Rows: each open leaf's range back in ascending order (only ranges
        // that were split further are out of it).
        let mut buffer = with_capacity(rows.len(), "the row buffer")?;
        buffer.extend_from_slice(rows);
        let mut resplit: Vec<(usize, usize)> = open
            .iter()
            .filter(|&&c| c >= 0)
            .map(|&c| range_of(c))
            .collect();
        resplit.sort_unstable();
        let mut slices = Vec::with_capacity(resplit.len());
        let mut rest = &mut buffer[..];
        let mut at = 0;
        for (s, e) in resplit {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(s - at);
            let (mine, tail) = tail.split_at_mut(e - s);
            slices.push(mine);
            (rest, at) = (tail, e);
        }
        slices.par_iter_mut().for_each(|s| s.sort_unstable());
        let leaf_ranges: Vec<(usize, usize)> = open.iter().map(|&c| range_of(c)).collect();
        let sums: Vec<_> = leaf_ranges
            .par_iter()
            .map(|&(s, e)| sum_rows(&buffer[s..e], grads))
            .collect();
        out.leaf_value = sums.iter().map(|s| rule.leaf_value(s)).collect();
        out.leaf_count = leaf_ranges.iter().map(|&(s, e)| (e - s) as f64).collect();
        let leaf_bounds = if self.node_bounds.is_empty() {
            Vec::new()
        } else {
            let bounds: Vec<_> = open
                .iter()
                .map(|&c| {
                    if c < 0 {
                        self.leaf_bounds[!c as usize]
                    } else {
                        self.node_bounds[c as usize]
                    }
                })
                .collect();
            clip_leaves(&mut out.leaf_value, &bounds);
            bounds
        };
        let node_bounds = self.node_bounds.iter().take(splits).copied().collect();
        let prefix = GrownTree {
            tree: out,
            leaf_ranges,
            leaf_bounds,
            node_bounds,
        };
        Ok((prefix, buffer))
    }
}

/// Each internal node's row range: the union of its children's (children
/// have larger indices than their parent).
fn node_ranges(grown: &GrownTree) -> Vec<(usize, usize)> {
    let tree = &grown.tree;
    let mut range = vec![(0, 0); tree.feature.len()];
    for p in (0..tree.feature.len()).rev() {
        let of = |c: i32| {
            if c < 0 {
                grown.leaf_ranges[!c as usize]
            } else {
                range[c as usize]
            }
        };
        let (l, r) = (of(tree.left[p]), of(tree.right[p]));
        range[p] = (l.0.min(r.0), l.1.max(r.1));
    }
    range
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::super::{GrowerConfig, NodeSelection, TreeGrower};
    use crate::cancel::Cancel;
    use crate::constraints::TreeConstraints;
    use crate::data::BinnedDataset;
    use crate::data::matrix::DenseMatrix;
    use crate::histogram::Gradients;
    use crate::params::BoosterParams;
    use crate::selection::Candidates;
    use crate::split::{Curvature, SplitRule};

    struct Case {
        n: usize,
        weighted: bool,
        subsample: bool,
        monotone: bool,
        curvature: Curvature,
        min_samples_leaf: f64,
    }

    /// Every prefix of a tree grown to 40 splits equals the tree grown
    /// directly with that leaf limit: nodes, leaf values (bit for bit), leaf
    /// ranges, row buffer and leaf bounds.
    fn check(case: &Case, seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (n, p) = (case.n, 5);
        let mut x = vec![0.0; n * p];
        for i in 0..n {
            x[i * p] = rng.random::<f64>();
            x[i * p + 1] = (rng.random::<f64>() * 40.0).floor();
            x[i * p + 2] = if rng.random::<f64>() < 0.1 {
                f64::NAN
            } else {
                rng.random::<f64>()
            };
            x[i * p + 3] = (rng.random::<f64>() * 6.0).floor(); // categorical
            x[i * p + 4] = rng.random::<f64>();
        }
        let gh: Vec<[f64; 2]> = (0..n)
            .map(|i| {
                let signal = x[i * p] + (x[i * p + 3] == 2.0) as u8 as f64 - x[i * p + 4];
                let h = 0.05 + 0.2 * rng.random::<f64>();
                [signal - 0.8 + 0.3 * rng.random::<f64>(), h]
            })
            .collect();
        let weights: Vec<f64> = (0..n).map(|_| 0.5 + rng.random::<f64>()).collect();
        let m = DenseMatrix::row_major(&x, n, p).unwrap();
        let data =
            BinnedDataset::from_weighted_matrix(&m, 63, seed, None, &[3], 0, &Cancel::never())
                .unwrap();
        let params = BoosterParams {
            monotone_constraints: case.monotone.then(|| vec![1, -1, 0, 0, 0]),
            ..Default::default()
        };
        let constraints = TreeConstraints::new(&params, p).unwrap();
        let rule = SplitRule {
            gain: case.curvature,
            leaf: case.curvature,
            lambda: 0.5,
            min_samples_leaf: case.min_samples_leaf,
            min_child_weight: 0.0,
            min_split_gain: 0.0,
            cat: crate::split::gain::CatRule::default(),
            reg: crate::split::gain::LeafReg::NONE,
        };
        let grads = Gradients::new(&gh, case.weighted.then_some(&weights[..]));
        let rows: Vec<u32> = (0..n as u32)
            .filter(|_| !case.subsample || rng.random::<f64>() < 0.6)
            .collect();
        let all = rows.len() == n;
        let cands = Candidates::all(p);
        let grow = |leaves: usize| {
            let cfg = GrowerConfig {
                max_depth: None,
                max_leaves: Some(leaves),
                rule,
                exact_counts: false,
                min_bounded_rows: 0,
            };
            let mut grower = TreeGrower::constrained(&data, cfg, &constraints).unwrap();
            let mut buffer = rows.clone();
            let grown = grower
                .grow(&grads, &mut buffer, all, NodeSelection::Tree(&cands))
                .unwrap();
            (grown, buffer)
        };
        let (big, big_rows) = grow(41);
        // Unit curvature stops where no split separates opposite-signed sums.
        let least = if case.curvature == Curvature::Unit {
            5
        } else {
            20
        };
        assert!(big.splits() >= least, "{} splits", big.splits());
        for splits in [0, 1, 2, 3, 7, 16, 39, 40, 100] {
            // At or past its own size, a prefix is the tree itself.
            let (want, want_rows) = grow(splits.min(40) + 1);
            let (got, got_rows) = big.prefix(splits, &big_rows, &grads, &rule).unwrap();
            let (w, g) = (&want.tree, &got.tree);
            assert_eq!(g, w, "seed {seed}, {splits} splits");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&g.leaf_value), bits(&w.leaf_value));
            assert_eq!(got.leaf_ranges, want.leaf_ranges);
            assert_eq!(got_rows, want_rows);
            assert_eq!(got.leaf_bounds, want.leaf_bounds);
            assert_eq!(got.node_bounds, want.node_bounds);
        }
    }

    #[test]
    fn prefixes_equal_trees_grown_with_fewer_leaves() {
        let base = Case {
            n: 2000,
            weighted: false,
            subsample: false,
            monotone: false,
            curvature: Curvature::Hessian,
            min_samples_leaf: 1.0,
        };
        let cases = [
            Case { ..base },
            Case {
                weighted: true,
                subsample: true,
                ..base
            },
            Case {
                monotone: true,
                min_samples_leaf: 10.0,
                ..base
            },
            Case {
                curvature: Curvature::Weight,
                subsample: true,
                ..base
            },
            // RGB's Lipschitz candidate: score G², leaves −G.
            Case {
                curvature: Curvature::Unit,
                weighted: true,
                monotone: true,
                ..base
            },
            // Leaves of more than one summation chunk.
            Case {
                n: 80_000,
                min_samples_leaf: 1000.0,
                ..base
            },
        ];
        for (k, case) in cases.iter().enumerate() {
            for seed in 0..3 {
                check(case, 10 * k as u64 + seed);
            }
        }
    }
}
