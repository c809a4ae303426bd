//! Explanations of predictions: per-feature contributions to the raw score
//! (SHAP values), exact TreeSHAP per tree (`tree_shap`) summed over the
//! trees, in LightGBM's `pred_contrib` layout.
pub mod tree_shap;

use rayon::prelude::*;

use crate::alloc::filled_vec;
use crate::cancel::Cancel;
use crate::data::matrix::{AsMatrix, Element};
use crate::error::{Result, RgbmError};
use crate::tree::Tree;
use crate::tree::predict::SEQUENTIAL_MAX_ROWS;
use tree_shap::{Scratch, ScratchSize, ShapTree};

/// Rows per task: a row costs O(leaves · depth²) per tree, so blocks are
/// small enough to spread over the threads.
const BLOCK: usize = 64;

/// SHAP values of every row: row-major n_rows × n_outputs·(p + 1), where
/// output k's block holds the p feature contributions and then the expected
/// raw score (the base score plus each tree's expected output over its
/// training rows), so a block sums to the raw score of output k. `trees[t]`
/// belongs to output t mod n_outputs; `base` has one score per output.
/// Rows run in parallel blocks (up to `SEQUENTIAL_MAX_ROWS` rows on the
/// calling thread), each row summing its trees in order, so the result
/// does not depend on the thread count. Stops with `Interrupted` once
/// `cancel` is set (polled per row).
pub fn contributions<T: Element>(
    trees: &[Tree],
    base: &[f64],
    x: &impl AsMatrix<T>,
    cancel: &Cancel,
) -> Result<Vec<f64>> {
    let x = &x.as_matrix();
    let (n, p, k) = (x.n_rows(), x.n_cols(), base.len());
    let shap: Vec<ShapTree> = trees
        .iter()
        .enumerate()
        .map(|(i, t)| ShapTree::new(t, i))
        .collect::<Result<_>>()?;
    let need = shap
        .iter()
        .fold(ScratchSize::default(), |a, t| a.max(t.scratch_size()));
    // Fails here, not in a worker, if the paths cannot be allocated.
    drop(Scratch::new(need)?);
    let mut expected = base.to_vec();
    for (i, t) in shap.iter().enumerate() {
        expected[i % k] += t.expected_value();
    }
    let width = k
        .checked_mul(p + 1)
        .ok_or_else(|| RgbmError::Shape("n_outputs * (n_features + 1) overflows".into()))?;
    let len = n.checked_mul(width).ok_or_else(|| {
        RgbmError::Shape("n_rows * n_outputs * (n_features + 1) overflows".into())
    })?;
    let mut out = filled_vec(len, 0.0, "the contributions")?;
    let block = |(buf, scratch): &mut (Vec<T>, Result<Scratch>),
                 (b, chunk): (usize, &mut [f64])|
     -> Result<()> {
        let scratch = scratch.as_mut().map_err(|e| e.clone())?;
        let rows = x.row_block(b * BLOCK, chunk.len() / width, buf);
        for (row, out) in rows.chunks_exact(p).zip(chunk.chunks_exact_mut(width)) {
            // Per row: a row of thousands of deep trees takes milliseconds.
            if cancel.is_set() {
                return Err(RgbmError::Interrupted);
            }
            for (i, t) in shap.iter().enumerate() {
                let class = (i % k) * (p + 1);
                t.add_contributions(|j| row[j].to_f64(), &mut out[class..class + p], scratch);
            }
            for (c, e) in expected.iter().enumerate() {
                out[c * (p + 1) + p] = *e;
            }
        }
        Ok(())
    };
    let init = || (Vec::new(), Scratch::new(need));
    if n <= SEQUENTIAL_MAX_ROWS {
        let mut state = init();
        out.chunks_mut(BLOCK * width)
            .enumerate()
            .try_for_each(|c| block(&mut state, c))?;
    } else {
        out.par_chunks_mut(BLOCK * width)
            .enumerate()
            .try_for_each_init(init, block)?;
    }
    cancel.check()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::matrix::DenseMatrix;

    fn stump(feature: u32, value: f64) -> Tree {
        Tree {
            feature: vec![feature],
            threshold: vec![0.0],
            default_left: vec![true],
            left: vec![!0],
            right: vec![!1],
            gain: vec![1.0],
            count: vec![4.0],
            leaf_value: vec![-value, value],
            leaf_count: vec![1.0, 3.0],
            categories: Vec::new(),
        }
    }

    #[test]
    fn outputs_get_their_own_blocks_and_a_set_flag_stops() {
        // Two outputs: tree 0 (feature 0) is output 0's, tree 1 (feature 1) output 1's.
        let trees = [stump(0, 1.0), stump(1, 2.0)];
        let x = [-1.0, 1.0, f64::NAN, -1.0];
        let m = DenseMatrix::row_major(&x, 2, 2).unwrap();
        let out = contributions(&trees, &[0.5, -0.5], &m, &Cancel::never()).unwrap();
        // Output 0: E = 0.5 + (−1·1 + 1·3)/4 = 1; row 0 lands left (−1): φ0 = −1.5.
        // Output 1: E = −0.5 + (−2 + 6)/4 = 0.5; row 0 lands right (2): φ1 = 1.
        assert_eq!(&out[..6], &[-1.5, 0.0, 1.0, 0.0, 1.0, 0.5]);
        // Row 1: NaN goes left in tree 0, −1 left in tree 1.
        assert_eq!(&out[6..], &[-1.5, 0.0, 1.0, 0.0, -3.0, 0.5]);
        let n = 2 * SEQUENTIAL_MAX_ROWS;
        let x = vec![0.5; n * 2];
        let m = DenseMatrix::row_major(&x, n, 2).unwrap();
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let r = contributions(&trees, &[0.0, 0.0], &m, &Cancel::on(flag));
        assert_eq!(r, Err(RgbmError::Interrupted));
    }
}
