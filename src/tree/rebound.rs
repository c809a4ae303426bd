//! Monotone leaves for trees whose leaf values were set after growth.
use crate::constraints::monotone::{Bounds, clip_leaves};
use crate::tree::Tree;

/// Makes a tree with arbitrary leaf values monotone: the same top-down
/// bounds, with each child's value taken as the row-weighted mean of its
/// subtree's leaves (`rows[k]` rows in leaf k). For leaves that are set
/// after growth in other units than the gradient statistics (the residual
/// quantiles of absolute-error and quantile losses), where the bounds the
/// grower derived do not apply.
pub fn rebound(tree: &mut Tree, directions: &[i8], rows: &[f64]) {
    let n_nodes = tree.feature.len();
    if n_nodes == 0 {
        return;
    }
    // (Σ rows·value, Σ rows) of each node's subtree: children come after
    // their parent, so a reverse pass sees them first.
    let mut sums = vec![(0.0f64, 0.0f64); n_nodes];
    let leaf_sum = |k: usize| (rows[k] * tree.leaf_value[k], rows[k]);
    for i in (0..n_nodes).rev() {
        let part = |c: i32, sums: &[(f64, f64)]| {
            if c < 0 {
                leaf_sum(!c as usize)
            } else {
                sums[c as usize]
            }
        };
        let (l, r) = (part(tree.left[i], &sums), part(tree.right[i], &sums));
        sums[i] = (l.0 + r.0, l.1 + r.1);
    }
    let mean = |c: i32, sums: &[(f64, f64)]| {
        let (s, n) = if c < 0 {
            leaf_sum(!c as usize)
        } else {
            sums[c as usize]
        };
        if n > 0.0 { s / n } else { 0.0 }
    };
    let mut node_bounds = vec![Bounds::FREE; n_nodes];
    let mut leaf_bounds = vec![Bounds::FREE; tree.leaf_value.len()];
    for i in 0..n_nodes {
        let b = node_bounds[i];
        let (l, r) = (tree.left[i], tree.right[i]);
        let dir = directions
            .get(tree.feature[i] as usize)
            .copied()
            .unwrap_or(0);
        let (lb, rb) = b.split(dir, b.clip(mean(l, &sums)), b.clip(mean(r, &sums)));
        for (c, cb) in [(l, lb), (r, rb)] {
            if c < 0 {
                leaf_bounds[!c as usize] = cb;
            } else {
                node_bounds[c as usize] = cb;
            }
        }
    }
    clip_leaves(&mut tree.leaf_value, &leaf_bounds);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// x0 <= 0.5 ? (x0 <= 0.2 ? leaf0 : leaf1) : leaf2, increasing in x0.
    fn tree(values: [f64; 3]) -> Tree {
        Tree {
            feature: vec![0, 0],
            threshold: vec![0.5, 0.2],
            default_left: vec![true, true],
            left: vec![1, !0],
            right: vec![!2, !1],
            gain: vec![1.0, 1.0],
            count: vec![30.0, 20.0],
            leaf_value: values.to_vec(),
            leaf_count: Vec::new(),
            categories: Vec::new(),
        }
    }

    #[test]
    fn rebound_orders_leaves_and_keeps_ordered_ones() {
        let mut ordered = tree([-1.0, 0.0, 2.0]);
        rebound(&mut ordered, &[1], &[10.0, 10.0, 10.0]);
        assert_eq!(ordered.leaf_value, vec![-1.0, 0.0, 2.0]);
        for values in [[3.0, 1.0, 0.0], [0.0, 5.0, 1.0], [2.0, -2.0, 7.0]] {
            let mut t = tree(values);
            rebound(&mut t, &[1], &[5.0, 10.0, 20.0]);
            let v = &t.leaf_value;
            assert!(v[0] <= v[1] && v[1] <= v[2], "{values:?} -> {v:?}");
            let mut dec = tree(values);
            rebound(&mut dec, &[-1], &[5.0, 10.0, 20.0]);
            let v = &dec.leaf_value;
            assert!(v[0] >= v[1] && v[1] >= v[2], "{values:?} -> {v:?}");
        }
        let mut free = tree([3.0, 1.0, 0.0]);
        rebound(&mut free, &[0], &[1.0, 1.0, 1.0]);
        assert_eq!(free.leaf_value, vec![3.0, 1.0, 0.0]);
    }
}
