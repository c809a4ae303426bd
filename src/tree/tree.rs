//! A tree as flat arrays. Internal node i sends `x[feature[i]] <= threshold[i]`
//! left (NaN follows `default_left[i]`). A child reference c >= 0 is an internal
//! node, c < 0 is leaf !c. Children always have larger indices than their
//! parent, so a valid tree has no cycles.
//!
//! A categorical node i instead holds a set of category codes
//! (`categories[i]`, a bitset of 32-bit words): a value that is one of them
//! goes away from the default side, every other value (other categories,
//! unseen ones, NaN, non-integers) follows `default_left[i]`.
use serde::{Deserialize, Serialize};

use crate::alloc::{filled_vec, grow_to, reserve_one};
use crate::data::matrix::{DenseMatrix, Element};
use crate::error::{Result, RgbmError};
use crate::json::{fallible_vec, fallible_vec_vec};
use crate::params::MAX_CATEGORY;

/// Largest magnitude a loaded model may hold in a leaf value or base score:
/// sums over up to 10^7 trees stay finite, so predictions can never overflow.
pub const MAX_ABS_VALUE: f64 = 1e200;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    #[serde(deserialize_with = "fallible_vec")]
    pub feature: Vec<u32>,
    #[serde(deserialize_with = "fallible_vec")]
    pub threshold: Vec<f64>,
    #[serde(deserialize_with = "fallible_vec")]
    pub default_left: Vec<bool>,
    #[serde(deserialize_with = "fallible_vec")]
    pub left: Vec<i32>,
    #[serde(deserialize_with = "fallible_vec")]
    pub right: Vec<i32>,
    /// Split gain, for importances.
    #[serde(deserialize_with = "fallible_vec")]
    pub gain: Vec<f64>,
    /// Rows (training, unweighted) that reached each internal node.
    #[serde(deserialize_with = "fallible_vec")]
    pub count: Vec<f64>,
    #[serde(deserialize_with = "fallible_vec")]
    pub leaf_value: Vec<f64>,
    /// Training rows (in-bag, unweighted) that reached each leaf: with
    /// `count` the covers SHAP values weigh by. Empty in models written
    /// before leaf covers were recorded (and then not written).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "fallible_vec"
    )]
    pub leaf_count: Vec<f64>,
    /// Empty when no node is categorical (and then not written, so such
    /// trees keep their files); otherwise one bitset per node, empty for
    /// threshold nodes. Bit c of word c / 32 set: category c leaves the
    /// default side.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "fallible_vec_vec"
    )]
    pub categories: Vec<Vec<u32>>,
}

/// Most 32-bit words in a category set (codes up to `MAX_CATEGORY`).
pub const MAX_CATEGORY_WORDS: usize = (MAX_CATEGORY as usize) / 32 + 1;

/// What `category_code` gives for a value that is no category code.
pub const NO_CODE: u32 = u32::MAX;

/// The category code `v` is (a whole number below the codes any set can
/// hold), or `NO_CODE`: `in_category_set(words, v)` is whether bit
/// `category_code(v)` of `words` is set, so a block's codes can be found
/// once and tested against many sets.
#[inline(always)]
pub fn category_code(v: f64) -> u32 {
    // NaN fails the comparisons. A cast and back, rather than `trunc`,
    // which is a library call on the baseline x86-64 target.
    if v >= 0.0 && v < (MAX_CATEGORY_WORDS * 32) as f64 && (v as i32) as f64 == v {
        v as i32 as u32
    } else {
        NO_CODE
    }
}

/// Whether `v` is a category code in the bitset `words`.
#[inline(always)]
pub fn in_category_set(words: &[u32], v: f64) -> bool {
    debug_assert!(words.len() <= MAX_CATEGORY_WORDS);
    // Codes beyond the words (and `NO_CODE`) are not in the set.
    let c = category_code(v);
    words
        .get((c / 32) as usize)
        .is_some_and(|w| w >> (c % 32) & 1 == 1)
}

/// The bitset of the given category codes.
pub fn category_bitset(codes: impl Iterator<Item = u32> + Clone) -> Vec<u32> {
    let words = codes.clone().max().map_or(0, |c| c as usize / 32 + 1);
    let mut set = vec![0u32; words];
    for c in codes {
        set[c as usize / 32] |= 1 << (c % 32);
    }
    set
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
        if !self.categories.is_empty() {
            reserve_one(&mut self.categories, what)?;
        }
        reserve_one(&mut self.count, what)
    }

    /// The category set of node i, if it is categorical.
    #[inline(always)]
    pub fn category_set(&self, i: usize) -> Option<&[u32]> {
        self.categories
            .get(i)
            .filter(|c| !c.is_empty())
            .map(Vec::as_slice)
    }

    /// Whether any node splits on a category set.
    pub fn has_categories(&self) -> bool {
        self.categories.iter().any(|c| !c.is_empty())
    }

    /// Gives the node just pushed its category set (None: a threshold
    /// node), keeping `categories` empty or one entry per node.
    pub fn push_categories(&mut self, set: Option<Vec<u32>>) -> Result<()> {
        let m = self.feature.len();
        match set {
            Some(words) => {
                grow_to(&mut self.categories, m, Vec::new(), "the tree")?;
                self.categories[m - 1] = words;
            }
            None if !self.categories.is_empty() => {
                grow_to(&mut self.categories, m, Vec::new(), "the tree")?
            }
            None => {}
        }
        Ok(())
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
            let next = if self.goes_left(node, x(self.feature[node] as usize)) {
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

    /// Whether value `v` of node i's feature sends a row left.
    #[inline(always)]
    pub fn goes_left(&self, i: usize, v: f64) -> bool {
        if let Some(set) = self.category_set(i) {
            self.default_left[i] != in_category_set(set, v)
        } else if v.is_nan() {
            self.default_left[i]
        } else {
            v <= self.threshold[i]
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
        if !self.categories.is_empty() && self.categories.len() != m {
            return bad(format!(
                "tree array `categories` has length {}, expected {m} or 0",
                self.categories.len()
            ));
        }
        for (i, set) in self.categories.iter().enumerate() {
            if set.len() > MAX_CATEGORY_WORDS {
                return bad(format!(
                    "node {i} has a category set of {} words, more than {MAX_CATEGORY_WORDS}",
                    set.len()
                ));
            }
            if set.last() == Some(&0) {
                return bad(format!("node {i} has a category set ending in a zero word"));
            }
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
        let mut leaf_seen = filled_vec(m + 1, false, "the tree check")?;
        let mut node_seen = filled_vec(m, false, "the tree check")?;
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
        self.validate_leaf_counts()
    }
}

impl Tree {
    /// Leaf covers, when present: one per leaf, finite and >= 0, a root
    /// some row reached, and every node's count the sum of its children's
    /// covers (exact: the counts are whole numbers below 2^53). Called once
    /// the tree's structure is known to be sound.
    fn validate_leaf_counts(&self) -> Result<()> {
        let m = self.n_internal();
        let bad = |msg: String| Err(RgbmError::ModelFormat(msg));
        if self.leaf_count.is_empty() {
            return Ok(());
        }
        if self.leaf_count.len() != m + 1 {
            return bad(format!(
                "tree array `leaf_count` has length {}, expected {} (one per leaf) or 0",
                self.leaf_count.len(),
                m + 1
            ));
        }
        if let Some((l, v)) = self
            .leaf_count
            .iter()
            .enumerate()
            .find(|(_, v)| !(**v >= 0.0 && v.is_finite()))
        {
            return bad(format!(
                "leaf {l} has leaf_count {v:?}; it must be finite and >= 0"
            ));
        }
        if m > 0 && !(self.count[0] > 0.0) {
            return bad("the root has count 0: no training row reached the tree".into());
        }
        let cover = |c: i32| {
            if c >= 0 {
                self.count[c as usize]
            } else {
                self.leaf_count[!c as usize]
            }
        };
        for i in 0..m {
            let (l, r) = (cover(self.left[i]), cover(self.right[i]));
            if l + r != self.count[i] {
                return bad(format!(
                    "node {i} has count {} but its children cover {l} + {r}",
                    self.count[i]
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value is in a set exactly when it is a whole number equal to one of
    /// the set's codes, for odd values (fractions, signs, NaN, huge numbers,
    /// codes just past the words) and sets of 1 to `MAX_CATEGORY_WORDS` words.
    #[test]
    fn in_category_set_holds_exactly_the_codes() {
        let top = MAX_CATEGORY as u32;
        for codes in [
            vec![0],
            vec![31],
            vec![3, 32, 40],
            vec![0, 255, 256, 1000],
            vec![7, top - 1, top],
        ] {
            let words = category_bitset(codes.iter().copied());
            let limit = (words.len() * 32) as f64;
            let mut values = vec![-1.0, -0.0, 0.0, 0.5, 1e-300, f64::NAN, 1e10, 4294967296.0];
            values.extend([limit - 1.0, limit, limit + 1.0, 65536.0, -(top as f64)]);
            for &c in &codes {
                let c = c as f64;
                values.extend([c, c - 0.5, c + 1e-9, c - 1.0, c + 1.0, -c]);
            }
            for v in values {
                let want = v.fract() == 0.0 && codes.iter().any(|&c| c as f64 == v);
                assert_eq!(in_category_set(&words, v), want, "{v} in {codes:?}");
                assert_eq!(in_category_set(&words, v as f32 as f64), {
                    let v = v as f32 as f64;
                    v.fract() == 0.0 && codes.iter().any(|&c| c as f64 == v)
                });
            }
        }
    }

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
            leaf_count: vec![4.0, 6.0],
            categories: Vec::new(),
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

    #[test]
    fn validation_checks_leaf_covers() {
        let mut t = stump();
        t.leaf_count.clear();
        t.validate(2).unwrap();
        for (covers, count, fragment) in [
            (vec![4.0], 10.0, "length 1"),
            (vec![4.0, 6.0, 1.0], 10.0, "length 3"),
            (vec![-1.0, 11.0], 10.0, "leaf 0 has leaf_count -1"),
            (vec![4.0, f64::NAN], 10.0, "leaf 1 has leaf_count NaN"),
            (vec![4.0, f64::INFINITY], 10.0, "leaf 1 has leaf_count inf"),
            (
                vec![4.0, 5.0],
                10.0,
                "node 0 has count 10 but its children cover 4 + 5",
            ),
            (vec![0.0, 0.0], 0.0, "root has count 0"),
        ] {
            let mut t = stump();
            t.leaf_count = covers;
            t.count[0] = count;
            let e = t.validate(2).unwrap_err().to_string();
            assert!(e.contains(fragment), "{e}");
        }
    }

    #[test]
    fn category_sets_route_members_away_from_the_default_side() {
        for default_left in [false, true] {
            let mut t = stump();
            t.default_left[0] = default_left;
            t.categories = vec![category_bitset([2u32, 33].into_iter())];
            t.validate(2).unwrap();
            let away = if default_left { 2.0 } else { -1.0 };
            let home = if default_left { -1.0 } else { 2.0 };
            for (v, want) in [
                (2.0, away),
                (33.0, away),
                (3.0, home),
                (2.5, home),
                (-2.0, home),
                (f64::NAN, home),
                (1e12, home),
            ] {
                let x = [0.0, v];
                let m = DenseMatrix::row_major(&x, 1, 2).unwrap();
                assert_eq!(t.predict_row(&m, 0), want, "{v}");
            }
        }
    }

    #[test]
    fn validation_rejects_broken_category_sets() {
        let mut t = stump();
        t.categories = vec![vec![1], vec![1]];
        assert!(t.validate(2).is_err());
        t.categories = vec![vec![1, 0]];
        assert!(t.validate(2).is_err());
        t.categories = vec![vec![1; MAX_CATEGORY_WORDS + 1]];
        assert!(t.validate(2).is_err());
        t.categories = vec![vec![]];
        t.validate(2).unwrap();
    }
}
