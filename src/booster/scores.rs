//! Adding a tree's leaf values to per-row scores.
use rayon::prelude::*;

use crate::alloc::filled_vec;
use crate::data::matrix::Element;
use crate::error::Result;
use crate::tree::Tree;

use super::training_data::Features;

/// A raw pointer that may be shared between threads writing disjoint rows.
struct DisjointRows(*mut f64);
// SAFETY: only used by `add_leaf_values`, whose threads write disjoint indices.
unsafe impl Sync for DisjointRows {}

/// scores[r] += value of r's leaf, in parallel over leaves. `rows` holds each
/// row index at most once (it is built as 0..n or a filtered 0..n in `train`
/// and only permuted by partitioning), so the writes of different leaves never
/// alias.
pub(super) fn add_leaf_values(
    scores: &mut [f64],
    rows: &[u32],
    ranges: &[(usize, usize)],
    values: &[f64],
) {
    debug_assert!(rows.iter().all(|&r| (r as usize) < scores.len()));
    let out = DisjointRows(scores.as_mut_ptr());
    let out = &out;
    let n = scores.len();
    ranges.par_iter().zip(values).for_each(|(&(s, e), &v)| {
        for &r in &rows[s..e] {
            let r = r as usize;
            assert!(r < n);
            // SAFETY: r < n (checked), and no other leaf holds row r.
            unsafe { *out.0.add(r) += v };
        }
    });
}

/// Adds `values` of each leaf to the rows of `out` that fell in it: through
/// the leaf ranges when every row was in the tree, else by routing every row.
pub(super) fn add_tree_to_rows<T: Element>(
    out: &mut [f64],
    tree: &Tree,
    values: &[f64],
    rows: &[u32],
    ranges: &[(usize, usize)],
    all_rows: bool,
    x: &Features<T>,
) {
    if all_rows {
        add_leaf_values(out, rows, ranges, values);
    } else {
        // Out-of-bag rows are not in any leaf range.
        out.par_iter_mut()
            .enumerate()
            .for_each(|(i, s)| *s += values[tree.leaf_index(|j| x.get(i, j))]);
    }
}

/// Every row of `x` into `rows`, grouped by the leaf of `tree` it falls in
/// (each leaf's rows in increasing order); `ranges` becomes each leaf's span.
pub(super) fn rows_by_leaf<T: Element>(
    tree: &Tree,
    x: &Features<T>,
    ranges: &mut Vec<(usize, usize)>,
    rows: &mut Vec<u32>,
) -> Result<()> {
    let mut leaves: Vec<u32> = filled_vec(x.n_rows(), 0, "the rows' leaves")?;
    leaves
        .par_iter_mut()
        .enumerate()
        .for_each(|(i, l)| *l = tree.leaf_index(|j| x.get(i, j)) as u32);
    let mut next = vec![0usize; tree.leaf_value.len() + 1];
    for &l in &leaves {
        next[l as usize + 1] += 1;
    }
    for k in 1..next.len() {
        next[k] += next[k - 1];
    }
    ranges.clear();
    ranges.extend(next.windows(2).map(|w| (w[0], w[1])));
    if rows.len() != leaves.len() {
        // Kept from tree to tree: allocated once per fit.
        *rows = filled_vec(leaves.len(), 0, "the rows by leaf")?;
    }
    for (i, &l) in leaves.iter().enumerate() {
        rows[next[l as usize]] = i as u32;
        next[l as usize] += 1;
    }
    Ok(())
}

/// `out[i]` += the tree's value on row i of `x`: the block predictor on raw
/// values, row by row on a binned dataset.
pub(super) fn add_tree_to_all<T: Element>(tree: &Tree, x: &Features<T>, out: &mut [f64]) {
    match x {
        Features::Raw(m) => {
            crate::tree::predict::add_tree_outputs(std::slice::from_ref(tree), m, out)
        }
        Features::Binned(_) => out
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, s)| *s += tree.leaf_value[tree.leaf_index(|j| x.get(i, j))]),
    }
}
