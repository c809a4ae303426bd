//! A tree as flat arrays. Internal node i sends x[feature[i]] <= threshold[i]
//! left (NaN follows default_left[i]). A child reference c >= 0 is an internal
//! node, c < 0 is leaf !c. Children always have larger indices than their
//! parent, so a valid tree has no cycles.
use serde::{Deserialize, Serialize};

use crate::alloc::reserve_one;
use crate::data::matrix::{DenseMatrix, Element};
use crate::error::{Result, RgbmError};

/// Largest magnitude a loaded model may hold in a leaf value or base score:
/// sums over up to 10^7 trees stay finite, so predictions can never overflow.
pub const MAX_ABS_VALUE: f64 = 1e200;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    pub feature: Vec<u32>,
    pub threshold: Vec<f64>,
    pub default_left: Vec<bool>,
    pub left: Vec<i32>,
    pub right: Vec<i32>,
    /// Split gain, for importances.
    pub gain: Vec<f64>,
    /// Rows (training, unweighted) that reached each internal node.
    pub count: Vec<f64>,
    pub leaf_value: Vec<f64>,
}

impl Tree {
    /// Room for one more internal node, or `OutOfMemory`.
    pub fn reserve_node(&mut self) -> Result<()> {
        let what = "the tree";
        reserve_one(&mut self.feature, what)?;
        reserve_one(&mut self.threshold, what)?;
        reserve_one(&mut self.default_left, what)?;
        reserve_one(&mut self.left, what)?;
        reserve_one(&mut self.right, what)?;
        reserve_one(&mut self.gain, what)?;
        reserve_one(&mut self.count, what)
    }

    pub fn n_leaves(&self) -> usize {
        self.leaf_value.len()
    }
    pub fn n_internal(&self) -> usize {
        self.feature.len()
    }

    /// Index of the leaf a row lands in; `x(j)` reads feature j.
    #[inline(always)]
    pub fn leaf_index(&self, x: impl Fn(usize) -> f64) -> usize {
        if self.feature.is_empty() {
            return 0;
        }
        let mut node = 0usize;
        loop {
            let v = x(self.feature[node] as usize);
            let go_left = if v.is_nan() {
                self.default_left[node]
            } else {
                v <= self.threshold[node]
            };
            let next = if go_left {
                self.left[node]
            } else {
                self.right[node]
            };
            if next < 0 {
                return !next as usize;
            }
            node = next as usize;
        }
    }

    #[inline(always)]
    pub fn predict_row<T: Element>(&self, x: &DenseMatrix<T>, row: usize) -> f64 {
        self.leaf_value[self.leaf_index(|j| x.get(row, j))]
    }

    /// Checks everything prediction relies on, so an untrusted tree cannot
    /// index out of bounds or loop.
    pub fn validate(&self, n_features: usize) -> Result<()> {
        let m = self.feature.len();
        let bad = |msg: String| Err(RgbmError::ModelFormat(msg));
        for (name, len) in [
            ("threshold", self.threshold.len()),
            ("default_left", self.default_left.len()),
            ("left", self.left.len()),
            ("right", self.right.len()),
            ("gain", self.gain.len()),
            ("count", self.count.len()),
        ] {
            if len != m {
                return bad(format!(
                    "tree array `{name}` has length {len}, expected {m}"
                ));
            }
        }
        if self.leaf_value.len() != m + 1 {
            return bad(format!(
                "a tree with {m} splits needs {} leaves, has {}",
                m + 1,
                self.leaf_value.len()
            ));
        }
        if let Some(v) = self.leaf_value.iter().find(|v| !(v.abs() <= MAX_ABS_VALUE)) {
            return bad(format!(
                "leaf value {v} is not a finite number within ±{MAX_ABS_VALUE:e}"
            ));
        }
        // Importances sum gains and counts: both are finite and >= 0 in a
        // trained tree (a split is kept only for a positive gain).
        for (name, values) in [("gain", &self.gain), ("count", &self.count)] {
            if let Some((i, v)) = values
                .iter()
                .enumerate()
                .find(|(_, v)| !(**v >= 0.0 && v.is_finite()))
            {
                return bad(format!(
                    "node {i} has {name} {v:?}; it must be finite and >= 0"
                ));
            }
        }
        let mut leaf_seen = vec![false; m + 1];
        let mut node_seen = vec![false; m];
        if m > 0 {
            node_seen[0] = true;
        }
        for i in 0..m {
            if self.feature[i] as usize >= n_features {
                return bad(format!(
                    "node {i} splits on feature {} of {n_features}",
                    self.feature[i]
                ));
            }
            if !self.threshold[i].is_finite() {
                return bad(format!("node {i} has a non-finite threshold"));
            }
            for c in [self.left[i], self.right[i]] {
                if c >= 0 {
                    let c = c as usize;
                    if c <= i || c >= m || node_seen[c] {
                        return bad(format!("node {i} has an invalid child {c}"));
                    }
                    node_seen[c] = true;
                } else {
                    let l = !c as usize;
                    if l > m || leaf_seen[l] {
                        return bad(format!("node {i} has an invalid leaf {l}"));
                    }
                    leaf_seen[l] = true;
                }
            }
        }
        if m > 0 && (!node_seen.iter().all(|&s| s) || !leaf_seen.iter().all(|&s| s)) {
            return bad("tree has unreachable nodes or leaves".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stump() -> Tree {
        Tree {
            feature: vec![1],
            threshold: vec![0.5],
            default_left: vec![false],
            left: vec![!0],
            right: vec![!1],
            gain: vec![1.0],
            count: vec![10.0],
            leaf_value: vec![-1.0, 2.0],
        }
    }

    #[test]
    fn routes_rows_and_missing_values() {
        let t = stump();
        let x = [9.0, 0.2, 9.0, 0.7, 9.0, f64::NAN];
        let m = DenseMatrix::row_major(&x, 3, 2).unwrap();
        assert_eq!(t.predict_row(&m, 0), -1.0);
        assert_eq!(t.predict_row(&m, 1), 2.0);
        assert_eq!(t.predict_row(&m, 2), 2.0);
        t.validate(2).unwrap();
    }

    #[test]
    fn validation_rejects_broken_trees() {
        let mut t = stump();
        t.feature[0] = 5;
        assert!(t.validate(2).is_err());
        let mut t = stump();
        t.left[0] = 0; // self loop
        assert!(t.validate(2).is_err());
        let mut t = stump();
        t.right[0] = !0; // leaf used twice
        assert!(t.validate(2).is_err());
        let mut t = stump();
        t.leaf_value.pop();
        assert!(t.validate(2).is_err());
        let mut t = stump();
        t.threshold[0] = f64::NAN;
        assert!(t.validate(2).is_err());
        for bad in [-1.0, -f64::MIN_POSITIVE, f64::INFINITY, f64::NAN] {
            let mut t = stump();
            t.gain[0] = bad;
            assert!(t.validate(2).is_err(), "gain {bad}");
            let mut t = stump();
            t.count[0] = bad;
            assert!(t.validate(2).is_err(), "count {bad}");
        }
        let mut t = stump();
        t.gain[0] = 0.0;
        t.validate(2).unwrap();
    }
}
