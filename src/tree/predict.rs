//! Prediction over many rows: blocks of rows in parallel, trees in order
//! inside a block (a tree's nodes stay in cache while its rows stream by).
use rayon::prelude::*;

use super::tree::Tree;
use crate::data::matrix::{DenseMatrix, Element};

const BLOCK: usize = 256;

/// out[i] += Σ_t tree_t(x_i) for every row, over the given trees.
pub fn add_tree_outputs<T: Element>(trees: &[Tree], x: &DenseMatrix<T>, out: &mut [f64]) {
    out.par_chunks_mut(BLOCK).enumerate().for_each(|(b, chunk)| {
        let base = b * BLOCK;
        for tree in trees {
            for (k, o) in chunk.iter_mut().enumerate() {
                *o += tree.predict_row(x, base + k);
            }
        }
    });
}
