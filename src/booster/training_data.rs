//! The data a fit learns from, checked once when it is put together: the
//! matrix, its labels, and optionally sample weights, starting scores, query
//! groups and where the rows sit among a sharded fit's. What can only be
//! checked against the options (the number of outputs, the loss) is checked
//! by [`super::train`].
use crate::data::BinnedDataset;
use crate::data::matrix::{AsMatrix, Element, Matrix};
use crate::error::{Result, RgbmError};
use crate::objective::Queries;

use super::shard::ShardRows;

/// The rows' features: raw values, binned by the fit, or a dataset binned
/// already, which the fit uses as it is.
#[derive(Clone, Copy)]
pub enum Features<'a, T: Element> {
    Raw(Matrix<'a, T>),
    Binned(&'a BinnedDataset),
}

impl<T: Element> Features<'_, T> {
    pub fn n_rows(&self) -> usize {
        match self {
            Features::Raw(x) => x.n_rows(),
            Features::Binned(d) => d.n_rows(),
        }
    }
    pub fn n_cols(&self) -> usize {
        match self {
            Features::Raw(x) => x.n_cols(),
            Features::Binned(d) => d.n_features(),
        }
    }
    /// The value of (row, feature) that decides where a tree sends the row:
    /// the raw value, or one standing for the row's bin (see
    /// `FeatureBins::bin_value`), which every split on those bins treats alike.
    #[inline]
    pub fn get(&self, row: usize, col: usize) -> f64 {
        match self {
            Features::Raw(x) => x.get(row, col),
            Features::Binned(d) => d.value(row, col),
        }
    }
    /// The stored values, which set the fit's thread count.
    pub fn stored_values(&self) -> usize {
        match self {
            Features::Raw(x) => x.stored_values(),
            Features::Binned(d) => d.n_rows().saturating_mul(d.n_features()),
        }
    }
}

/// The training data of a fit: a borrowed matrix (NaN = missing) or binned
/// dataset and labels, with the optional parts added by the `with_*`
/// methods, each checking its part against the rows.
#[derive(Clone, Copy)]
pub struct TrainingData<'a, T: Element> {
    x: Features<'a, T>,
    y: &'a [f64],
    weights: Option<&'a [f64]>,
    init_score: Option<&'a [f64]>,
    queries: Option<&'a Queries>,
    /// Labels per row (`y` holds this many blocks of `n_rows`).
    n_targets: usize,
    /// `Some` on a shard of a sharded fit (even a single one).
    shard: Option<ShardRows<'a>>,
}

impl<'a, T: Element> TrainingData<'a, T> {
    /// `x` and one label per row.
    pub fn new(x: &'a impl AsMatrix<T>, y: &'a [f64]) -> Result<Self> {
        Self::with_targets(x, y, 1)
    }

    /// `x` and `n_targets` labels per row, target-major (`n_targets` blocks
    /// of one label per row, like the scores of a multi-output fit).
    pub fn with_targets(x: &'a impl AsMatrix<T>, y: &'a [f64], n_targets: usize) -> Result<Self> {
        Self::from_features(Features::Raw(x.as_matrix()), y, n_targets)
    }

    /// A dataset binned already (`BinnedDataset::from_weighted_matrix`,
    /// [`super::bin_for_training`], or a `subset` of one) and one label per
    /// row: the fit skips binning. The options that shape bins (`max_bins`,
    /// `categorical_features`, `min_samples_leaf`) must be those the dataset
    /// was binned with; `train` checks them. `T` is the element type of the
    /// evaluation sets.
    pub fn binned(x: &'a BinnedDataset, y: &'a [f64]) -> Result<Self> {
        Self::binned_with_targets(x, y, 1)
    }

    /// `binned` with `n_targets` labels per row, as `with_targets`.
    pub fn binned_with_targets(
        x: &'a BinnedDataset,
        y: &'a [f64],
        n_targets: usize,
    ) -> Result<Self> {
        Self::from_features(Features::Binned(x), y, n_targets)
    }

    fn from_features(x: Features<'a, T>, y: &'a [f64], n_targets: usize) -> Result<Self> {
        if x.n_rows() == 0 || x.n_cols() == 0 {
            return Err(RgbmError::EmptyInput(format!(
                "X has shape ({}, {})",
                x.n_rows(),
                x.n_cols()
            )));
        }
        if x.n_rows() > u32::MAX as usize {
            return Err(RgbmError::Shape(format!(
                "at most {} rows are supported",
                u32::MAX
            )));
        }
        if Some(y.len()) != x.n_rows().checked_mul(n_targets) || n_targets == 0 {
            return Err(RgbmError::Shape(if n_targets == 1 {
                format!("X has {} rows but y has {}", x.n_rows(), y.len())
            } else {
                format!(
                    "X has {} rows but y has {} values, not {n_targets} targets per row",
                    x.n_rows(),
                    y.len()
                )
            }));
        }
        Ok(TrainingData {
            x,
            y,
            n_targets,
            weights: None,
            init_score: None,
            queries: None,
            shard: None,
        })
    }

    /// Per-row sample weights, finite and ≥ 0 (`None`: every row weighs 1).
    pub fn with_weights(mut self, weights: Option<&'a [f64]>) -> Result<Self> {
        if let Some(w) = weights {
            if w.len() != self.n_rows() {
                return Err(RgbmError::Shape(format!(
                    "X has {} rows but sample_weight has {}",
                    self.n_rows(),
                    w.len()
                )));
            }
            if let Some(i) = w.iter().position(|v| !v.is_finite() || *v < 0.0) {
                return Err(RgbmError::NonFinite(format!(
                    "sample_weight must be finite and >= 0, got {} at index {i}",
                    w[i]
                )));
            }
            check_unweighted_queries(weights, self.queries)?;
        }
        self.weights = weights;
        Ok(self)
    }

    /// Per-row starting scores, n × K class-major finite values: the fit
    /// starts at them instead of a fitted constant, and the model's base
    /// score is 0, so its predictions exclude them (add them back, as with
    /// LightGBM's `init_score`). K is checked against the loss by `train`.
    pub fn with_init_score(mut self, init_score: Option<&'a [f64]>) -> Result<Self> {
        if let Some(init) = init_score {
            let n = self.n_rows();
            if init.is_empty() || init.len() % n != 0 {
                return Err(RgbmError::Shape(format!(
                    "init_score has {} values, not a whole number of scores for each of the {n} rows",
                    init.len()
                )));
            }
            check_finite(init, "init_score")?;
        }
        self.init_score = init_score;
        Ok(self)
    }

    /// Learning to rank (`loss = lambdarank`, and only it): the rows' query
    /// groups, consecutive rows; no sample weights (the pairs of a query
    /// carry the weight; per-row weights have no agreed meaning there).
    pub fn with_queries(mut self, queries: Option<&'a Queries>) -> Result<Self> {
        if let Some(q) = queries
            && q.n_rows() != self.n_rows()
        {
            return Err(RgbmError::Shape(format!(
                "the group sizes add up to {} rows, but there are {}",
                q.n_rows(),
                self.n_rows()
            )));
        }
        check_unweighted_queries(self.weights, queries)?;
        self.queries = queries;
        Ok(self)
    }

    /// One shard of a sharded fit: `rows` says where these rows are among
    /// all of the data's and how the shards combine their sums (see
    /// [`crate::reduce`]). Every shard ends with the model a fit on all rows
    /// would give; `train` refuses the options that have no sharded form.
    pub fn on_shard(mut self, rows: ShardRows<'a>) -> Result<Self> {
        rows.check(self.n_rows())?;
        self.shard = Some(rows);
        Ok(self)
    }

    pub fn x(&self) -> &Features<'a, T> {
        &self.x
    }
    pub fn y(&self) -> &'a [f64] {
        self.y
    }
    pub fn weights(&self) -> Option<&'a [f64]> {
        self.weights
    }
    pub fn init_score(&self) -> Option<&'a [f64]> {
        self.init_score
    }
    pub fn queries(&self) -> Option<&'a Queries> {
        self.queries
    }
    /// Where the rows are among all of the data's.
    pub fn rows(&self) -> ShardRows<'a> {
        self.shard
            .unwrap_or_else(|| ShardRows::local(self.n_rows()))
    }
    /// Whether this is a shard of a sharded fit.
    pub fn is_shard(&self) -> bool {
        self.shard.is_some()
    }
    pub fn n_rows(&self) -> usize {
        self.x.n_rows()
    }
    pub fn n_targets(&self) -> usize {
        self.n_targets
    }
}

/// Query groups come without sample weights.
fn check_unweighted_queries(weights: Option<&[f64]>, queries: Option<&Queries>) -> Result<()> {
    if weights.is_some() && queries.is_some() {
        return Err(RgbmError::param(
            "sample_weight",
            "ranking takes no sample weights",
        ));
    }
    Ok(())
}

/// Starting scores of `n` rows and `k` outputs: n × K finite values.
pub(super) fn check_init_score(init: &[f64], n: usize, k: usize, what: &str) -> Result<()> {
    check_init_len(init, n, k, what)?;
    check_finite(init, what)
}

/// n × K values; for training data, whose values were checked when added.
pub(super) fn check_init_len(init: &[f64], n: usize, k: usize, what: &str) -> Result<()> {
    if Some(init.len()) != n.checked_mul(k) {
        return Err(RgbmError::Shape(format!(
            "{what} has {} values, but {n} rows × {k} outputs need {}",
            init.len(),
            n.saturating_mul(k)
        )));
    }
    Ok(())
}

fn check_finite(values: &[f64], what: &str) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(RgbmError::NonFinite(format!(
            "{what} contains {} at index {i}",
            values[i]
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DenseMatrix;

    #[test]
    fn each_part_is_checked_against_the_rows() {
        let values = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        let x = DenseMatrix::row_major(&values, 3, 2).unwrap();
        let y = [0.0, 1.0, 0.0];
        assert!(matches!(
            TrainingData::new(&x, &y[..2]),
            Err(RgbmError::Shape(_))
        ));
        let data = TrainingData::new(&x, &y).unwrap();
        assert_eq!(data.n_rows(), 3);
        assert!(!data.is_shard() && data.rows().is_local());
        for bad in [&[1.0, 1.0][..], &[1.0, -1.0, 1.0], &[1.0, f64::NAN, 1.0]] {
            assert!(data.with_weights(Some(bad)).is_err(), "{bad:?}");
        }
        // Two outputs per row pass here; the loss decides at `train`.
        assert!(data.with_init_score(Some(&[0.0; 6])).is_ok());
        for bad in [&[0.0; 4][..], &[], &[0.0, f64::INFINITY, 0.0]] {
            assert!(data.with_init_score(Some(bad)).is_err(), "{bad:?}");
        }
        let q = Queries::from_sizes(&[1, 2], 3).unwrap();
        let short = Queries::from_sizes(&[1, 1], 2).unwrap();
        assert!(data.with_queries(Some(&short)).is_err());
        let ones = [1.0; 3];
        let weighted = data.with_weights(Some(&ones)).unwrap();
        assert!(weighted.with_queries(Some(&q)).is_err());
        let ranked = data.with_queries(Some(&q)).unwrap();
        assert!(ranked.with_weights(Some(&ones)).is_err());
        assert!(ranked.with_weights(None).is_ok());
    }
}
