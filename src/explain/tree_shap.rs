//! Exact SHAP values of one tree: the polynomial-time path algorithm of
//! Lundberg et al. 2020 ("From local explanations to global understanding
//! with explainable AI for trees", Algorithm 2).
//!
//! The value of a feature set S is the tree's expected output when the
//! features in S take the row's values and the others are unknown: at a
//! split on an unknown feature the expectation follows both children,
//! weighted by their share of the training rows that reached the node
//! (the covers). Walking from the root to each leaf, the algorithm keeps for
//! the distinct features on the path the fraction of covers the path keeps
//! when the feature is unknown (`zero`) and whether the row's own value
//! follows the path (`one`), plus the Shapley weights of the subsets of each
//! size. Extending the path by a feature and unwinding one off it are
//! O(path length), so a tree costs O(leaves · depth²) per row instead of a
//! sum over the 2^p subsets.
use crate::alloc::filled_vec;
use crate::error::{Result, RgbmError};
use crate::tree::Tree;

/// The feature of the path's first element, which stands for no feature:
/// with its `zero` = `one` = 1 it turns the subset weights into Shapley
/// weights (|S|!(M − |S| − 1)!/M! over the M path features).
const NO_FEATURE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, Default)]
struct PathElement {
    feature: u32,
    /// Share of the covers the path keeps when the feature is unknown.
    zero: f64,
    /// 1 when the row's value follows the path at every split on the
    /// feature so far, else 0.
    one: f64,
    /// Not this element's own: weight of the subsets of size equal to this
    /// element's position (the path's weights, indexed by subset size).
    weight: f64,
}

/// A child still to visit: its reference (>= 0 node, < 0 leaf), its depth,
/// and the element the split that leads to it adds to the path.
#[derive(Clone, Copy)]
struct Visit {
    child: i32,
    level: usize,
    zero: f64,
    one: f64,
    feature: u32,
}

/// One thread's working memory, reused across rows and trees.
#[derive(Default)]
pub struct Scratch {
    /// The path at each depth, in regions of `width` elements.
    path: Vec<PathElement>,
    /// Length of the path at each depth.
    len: Vec<usize>,
    visits: Vec<Visit>,
    /// 1/k for k = 0..=width (index 0 unused).
    inv: Vec<f64>,
}

impl Scratch {
    /// Working memory for trees up to the given depth and path width,
    /// or `OutOfMemory`.
    pub fn new(need: ScratchSize) -> Result<Scratch> {
        let levels = need.depth + 1;
        let cells = levels
            .checked_mul(need.width)
            .ok_or_else(|| RgbmError::OutOfMemory("the TreeSHAP paths".into()))?;
        Ok(Scratch {
            path: filled_vec(cells, PathElement::default(), "the TreeSHAP paths")?,
            len: filled_vec(levels, 0, "the TreeSHAP paths")?,
            visits: Vec::with_capacity(2 * levels),
            inv: (0..=need.width).map(|k| 1.0 / k as f64).collect(),
        })
    }
}

/// The memory TreeSHAP needs for a set of trees.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ScratchSize {
    /// Most splits on a path from the root to a leaf.
    depth: usize,
    /// Longest path: 1 + the most distinct features a path can hold.
    width: usize,
}

impl ScratchSize {
    pub fn max(self, other: ScratchSize) -> ScratchSize {
        ScratchSize {
            depth: self.depth.max(other.depth),
            width: self.width.max(other.width),
        }
    }
}

/// A tree with what TreeSHAP reads besides it, prepared once.
pub struct ShapTree<'a> {
    tree: &'a Tree,
    /// Expected output over the training rows: Σ leaf value × leaf cover / root cover.
    expected: f64,
    size: ScratchSize,
}

impl<'a> ShapTree<'a> {
    /// Fails when a tree with splits has no leaf covers (models written
    /// before they were recorded).
    pub fn new(tree: &'a Tree, index: usize) -> Result<Self> {
        let m = tree.n_internal();
        if m == 0 {
            return Ok(ShapTree {
                tree,
                expected: tree.leaf_value[0],
                size: ScratchSize::default(),
            });
        }
        if tree.leaf_count.len() != tree.n_leaves() {
            return Err(RgbmError::ModelFormat(format!(
                "tree {index} has no leaf covers (training rows per leaf), which SHAP values \
                 need; the model was written by an older version of rgbm_rs: fit it again"
            )));
        }
        let root = tree.count[0];
        let expected = if root > 0.0 {
            tree.leaf_value
                .iter()
                .zip(&tree.leaf_count)
                .map(|(v, c)| v * (c / root))
                .sum()
        } else {
            0.0
        };
        // Children have larger indices than their parents, so one pass in
        // index order sees every parent before its children.
        let mut depth = vec![0usize; m];
        let mut deepest = 1;
        for i in 0..m {
            for c in [tree.left[i], tree.right[i]] {
                if c >= 0 {
                    depth[c as usize] = depth[i] + 1;
                } else {
                    deepest = deepest.max(depth[i] + 1);
                }
            }
        }
        let mut features: Vec<u32> = tree.feature.clone();
        features.sort_unstable();
        features.dedup();
        Ok(ShapTree {
            tree,
            expected,
            size: ScratchSize {
                depth: deepest,
                width: deepest.min(features.len()) + 1,
            },
        })
    }

    pub fn expected_value(&self) -> f64 {
        self.expected
    }

    pub fn scratch_size(&self) -> ScratchSize {
        self.size
    }

    /// Training rows that reached a child (>= 0 node, < 0 leaf).
    #[inline]
    fn cover(&self, child: i32) -> f64 {
        if child >= 0 {
            self.tree.count[child as usize]
        } else {
            self.tree.leaf_count[!child as usize]
        }
    }

    /// Adds this tree's SHAP values of the row `x(j)` to `phi` (one entry
    /// per feature). `scratch` must come from a size at least this tree's.
    pub fn add_contributions(&self, x: impl Fn(usize) -> f64, phi: &mut [f64], s: &mut Scratch) {
        let tree = self.tree;
        if tree.n_internal() == 0 {
            return;
        }
        let width = self.size.width;
        s.visits.clear();
        s.visits.push(Visit {
            child: 0,
            level: 0,
            zero: 1.0,
            one: 1.0,
            feature: NO_FEATURE,
        });
        while let Some(v) = s.visits.pop() {
            // This node's path: the parent's (the level above, already
            // unwound of this split's feature) extended by the split.
            let here = v.level * width;
            let len = if v.level == 0 {
                0
            } else {
                let above = here - width;
                let n = s.len[v.level - 1];
                s.path.copy_within(above..above + n, here);
                n
            };
            let path = &mut s.path[here..here + width];
            extend(path, len, v.zero, v.one, v.feature, &s.inv);
            let len = len + 1;
            if v.child < 0 {
                let value = tree.leaf_value[!v.child as usize];
                for i in 1..len {
                    let e = path[i];
                    let w = unwound_sum(&path[..len], i, &s.inv);
                    phi[e.feature as usize] += w * (e.one - e.zero) * value;
                }
                continue;
            }
            let j = v.child as usize;
            let feature = tree.feature[j];
            let go_left = tree.goes_left(j, x(feature as usize));
            let (hot, cold) = if go_left {
                (tree.left[j], tree.right[j])
            } else {
                (tree.right[j], tree.left[j])
            };
            // A feature split on again: its earlier element leaves the path
            // and its fractions carry over into this split's.
            let (mut zero, mut one) = (1.0, 1.0);
            let mut len = len;
            if let Some(k) = (1..len).find(|&k| path[k].feature == feature) {
                (zero, one) = (path[k].zero, path[k].one);
                unwind(&mut path[..len], k, &s.inv);
                len -= 1;
            }
            s.len[v.level] = len;
            let cover = tree.count[j];
            // A node no training row reached passes no share to its children.
            let share = |child| {
                if cover > 0.0 {
                    self.cover(child) / cover
                } else {
                    0.0
                }
            };
            let level = v.level + 1;
            // A child with nothing left to pass adds nothing: skip it (its
            // element would also make unwinding divide by zero).
            let cold_zero = zero * share(cold);
            if cold_zero != 0.0 {
                s.visits.push(Visit {
                    child: cold,
                    level,
                    zero: cold_zero,
                    one: 0.0,
                    feature,
                });
            }
            let hot_zero = zero * share(hot);
            if hot_zero != 0.0 || one != 0.0 {
                s.visits.push(Visit {
                    child: hot,
                    level,
                    zero: hot_zero,
                    one,
                    feature,
                });
            }
        }
    }
}

/// Appends an element to the path of `len` elements and updates the
/// subset weights: a subset of size i of the longer path either leaves the
/// new feature out (weight × zero × (len − i)/(len + 1)) or holds it (the
/// size i − 1 weight × one × i/(len + 1)). `inv[k]` is 1/k: the weights
/// are updated O(depth²) times per leaf, where divisions were most of the
/// time.
fn extend(path: &mut [PathElement], len: usize, zero: f64, one: f64, feature: u32, inv: &[f64]) {
    path[len] = PathElement {
        feature,
        zero,
        one,
        weight: if len == 0 { 1.0 } else { 0.0 },
    };
    let inv_n = inv[len + 1];
    for i in (0..len).rev() {
        path[i + 1].weight += one * path[i].weight * ((i + 1) as f64 * inv_n);
        path[i].weight = zero * path[i].weight * ((len - i) as f64 * inv_n);
    }
}

/// Removes element `k` from the path: inverts `extend` for its fractions,
/// from the largest subset size down, and closes the gap. `one` is 0 or 1
/// (a product of 0s and 1s), so it never divides.
fn unwind(path: &mut [PathElement], k: usize, inv: &[f64]) {
    let last = path.len() - 1;
    let PathElement { zero, one, .. } = path[k];
    let n = (last + 1) as f64;
    let inv_n = inv[last + 1];
    if one != 0.0 {
        let mut next = path[last].weight;
        for j in (0..last).rev() {
            let w = path[j].weight;
            path[j].weight = next * n * inv[j + 1];
            next = w - path[j].weight * zero * ((last - j) as f64 * inv_n);
        }
    } else {
        let scale = n / zero;
        for j in (0..last).rev() {
            path[j].weight *= scale * inv[last - j];
        }
    }
    for j in k..last {
        let e = path[j + 1];
        path[j] = PathElement {
            weight: path[j].weight,
            ..e
        };
    }
}

/// Σ of the subset weights the path would have with element `k` unwound,
/// without changing it.
fn unwound_sum(path: &[PathElement], k: usize, inv: &[f64]) -> f64 {
    let last = path.len() - 1;
    let PathElement { zero, one, .. } = path[k];
    let n = (last + 1) as f64;
    let inv_n = inv[last + 1];
    let mut total = 0.0;
    if one != 0.0 {
        let mut next = path[last].weight;
        for j in (0..last).rev() {
            let w = next * n * inv[j + 1];
            total += w;
            next = path[j].weight - w * zero * ((last - j) as f64 * inv_n);
        }
    } else {
        for j in (0..last).rev() {
            total += path[j].weight * inv[last - j];
        }
        total *= n / zero;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// x0 <= 0 ? (x1 <= 0 ? a : b) : (x0 <= 1 ? c : d), covers 10/(4/(1,3), 6/(2,4)).
    fn tree() -> Tree {
        Tree {
            feature: vec![0, 1, 0],
            threshold: vec![0.0, 0.0, 1.0],
            default_left: vec![true, false, true],
            left: vec![1, !0, !2],
            right: vec![2, !1, !3],
            gain: vec![1.0; 3],
            count: vec![10.0, 4.0, 6.0],
            leaf_value: vec![1.0, 2.0, 4.0, 8.0],
            leaf_count: vec![1.0, 3.0, 2.0, 4.0],
            categories: Vec::new(),
        }
    }

    /// The tree's expected output given the features in `known` (bit j: feature j known).
    fn conditional(t: &Tree, x: &[f64], known: u32, child: i32) -> f64 {
        if child < 0 {
            return t.leaf_value[!child as usize];
        }
        let j = child as usize;
        let f = t.feature[j] as usize;
        if known >> f & 1 == 1 {
            let next = if t.goes_left(j, x[f]) {
                t.left[j]
            } else {
                t.right[j]
            };
            return conditional(t, x, known, next);
        }
        let cover = |c: i32| {
            if c >= 0 {
                t.count[c as usize]
            } else {
                t.leaf_count[!c as usize]
            }
        };
        (cover(t.left[j]) * conditional(t, x, known, t.left[j])
            + cover(t.right[j]) * conditional(t, x, known, t.right[j]))
            / t.count[j]
    }

    #[test]
    fn equals_shapley_values_by_enumeration_and_adds_up() {
        let t = tree();
        let st = ShapTree::new(&t, 0).unwrap();
        assert_eq!(st.expected_value(), (1.0 + 6.0 + 8.0 + 32.0) / 10.0);
        let mut s = Scratch::new(st.scratch_size()).unwrap();
        for x in [
            [-1.0, -1.0],
            [-1.0, 1.0],
            [0.5, 3.0],
            [2.0, f64::NAN],
            [f64::NAN, 0.0],
        ] {
            let mut phi = [0.0; 2];
            st.add_contributions(|j| x[j], &mut phi, &mut s);
            // Two players: φ0 = ½(v{0} − v{}) + ½(v{0,1} − v{1}).
            let v = |k| conditional(&t, &x, k, 0);
            let want0 = 0.5 * (v(1) - v(0)) + 0.5 * (v(3) - v(2));
            let want1 = 0.5 * (v(2) - v(0)) + 0.5 * (v(3) - v(1));
            assert!((phi[0] - want0).abs() < 1e-12, "{x:?}: {phi:?} vs {want0}");
            assert!((phi[1] - want1).abs() < 1e-12, "{x:?}: {phi:?} vs {want1}");
            let f = t.leaf_value[t.leaf_index(|j| x[j])];
            assert!((phi[0] + phi[1] + st.expected_value() - f).abs() < 1e-12);
        }
    }

    #[test]
    fn unwind_inverts_extend() {
        let inv: Vec<f64> = (0..5).map(|k| 1.0 / k as f64).collect();
        for one in [0.0, 1.0] {
            let mut path = [PathElement::default(); 4];
            extend(&mut path, 0, 1.0, 1.0, NO_FEATURE, &inv);
            extend(&mut path, 1, 0.3, 1.0, 0, &inv);
            let before: Vec<f64> = path[..2].iter().map(|e| e.weight).collect();
            extend(&mut path, 2, 0.6, one, 1, &inv);
            let sum = unwound_sum(&path[..3], 2, &inv);
            unwind(&mut path[..3], 2, &inv);
            for (e, w) in path[..2].iter().zip(&before) {
                assert!((e.weight - w).abs() < 1e-15);
            }
            assert!((sum - before.iter().sum::<f64>()).abs() < 1e-15);
        }
    }

    #[test]
    fn trees_without_leaf_covers_are_refused() {
        let mut t = tree();
        t.leaf_count.clear();
        let e = ShapTree::new(&t, 7).err().unwrap().to_string();
        assert!(e.contains("tree 7 has no leaf covers"), "{e}");
        let stump = Tree {
            leaf_value: vec![3.0],
            ..Tree::default()
        };
        assert_eq!(ShapTree::new(&stump, 0).unwrap().expected_value(), 3.0);
    }
}
