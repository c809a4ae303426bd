//! Prediction over many rows: blocks of rows in parallel, trees in order
//! inside a block (a tree's nodes stay in cache while its rows stream by).
use rayon::prelude::*;

use super::tree::Tree;
use crate::data::matrix::{DenseMatrix, Element};

const BLOCK: usize = 256;

/// out[i] += Σ_t tree_t(x_i) for every row, over the given trees.
pub fn add_tree_outputs<T: Element>(trees: &[Tree], x: &DenseMatrix<T>, out: &mut [f64]) {
    add_tree_outputs_multi(trees, 1, 0, x, out);
}

/// Multi-output form: `out` is row-major (n_rows × n_outputs), and `trees[j]`
/// is tree `first + j` of the model, which belongs to output (first + j) mod
/// n_outputs (a round stores one tree per output, in output order).
pub fn add_tree_outputs_multi<T: Element>(trees: &[Tree], n_outputs: usize, first: usize, x: &DenseMatrix<T>, out: &mut [f64]) {
    out.par_chunks_mut(BLOCK * n_outputs).enumerate().for_each(|(b, chunk)| {
        let base = b * BLOCK;
        for (j, tree) in trees.iter().enumerate() {
            let class = (first + j) % n_outputs;
            for (r, o) in chunk.iter_mut().skip(class).step_by(n_outputs).enumerate() {
                *o += tree.predict_row(x, base + r);
            }
        }
    });
}
