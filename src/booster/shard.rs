//! Where a fit's rows are: all of them here, or one shard of many (see
//! [`crate::reduce`]). A shard knows each of its rows' index in the whole
//! data, so that per-row random draws (subsampling, SGLB's gradient noise)
//! are the ones a fit on all rows makes, and the number of rows in all.
use crate::alloc::with_capacity;
use crate::cancel::Cancel;
use crate::data::BinnedDataset;
use crate::data::binning::BinMapper;
use crate::data::matrix::{DenseMatrix, Element, Matrix};
use crate::error::{Result, RgbmError};
use crate::exact_sum::ExactSum;
use crate::options::{BoosterKind, Loss, Step};
use crate::params::{BoosterParams, Summation};
use crate::reduce::{self, Local, Op, Reduce};

/// A fit's rows among all rows.
#[derive(Clone, Copy)]
pub struct ShardRows<'a> {
    pub reduce: &'a dyn Reduce,
    /// Each row's index in the whole data; `None`: row i is row i.
    pub ids: Option<&'a [u64]>,
    /// Rows in all shards.
    pub n_total: usize,
}

impl<'a> ShardRows<'a> {
    /// Every row of the data, here.
    pub fn local(n: usize) -> ShardRows<'static> {
        ShardRows {
            reduce: &Local,
            ids: None,
            n_total: n,
        }
    }

    pub fn is_local(&self) -> bool {
        self.reduce.is_local()
    }

    /// The index in the whole data of local row `i`.
    #[inline]
    pub fn id(&self, i: usize) -> u64 {
        self.ids.map_or(i as u64, |ids| ids[i])
    }

    /// Σ over every shard of `values` (exact on their grid).
    pub fn sum(&self, values: &mut [f64]) -> Result<()> {
        self.reduce.combine(Op::Sum, values)
    }

    /// The largest of every shard's `values`, element-wise.
    pub fn max(&self, values: &mut [f64]) -> Result<()> {
        reduce::max(self.reduce, values)
    }

    /// The exact sum over every shard of each of `sums`.
    pub fn sum_exact(&self, sums: &mut [ExactSum]) -> Result<()> {
        reduce::sum_exact(self.reduce, sums)
    }

    /// Checks that `ids` (if any) has one entry per local row, each below
    /// the total.
    pub fn check(&self, n_local: usize) -> Result<()> {
        if let Some(ids) = self.ids {
            if ids.len() != n_local {
                return Err(RgbmError::Shape(format!(
                    "the shard has {n_local} rows but {} row indices",
                    ids.len()
                )));
            }
            if let Some(&bad) = ids.iter().find(|&&i| i >= self.n_total as u64) {
                return Err(RgbmError::Shape(format!(
                    "row index {bad} is not below the {} rows in all",
                    self.n_total
                )));
            }
        }
        if self.n_total < n_local || self.n_total > u32::MAX as usize {
            return Err(RgbmError::Shape(format!(
                "{} rows in all is not between this shard's {n_local} and {}",
                self.n_total,
                u32::MAX
            )));
        }
        Ok(())
    }
}

/// Refuses the options that have no sharded form: sums that are not exact,
/// and leaves or losses that need every row in one place.
pub fn check_params(params: &BoosterParams) -> Result<()> {
    // Checked before the parameters' own validation, whose advice for these
    // (float sums) does not apply on shards.
    if params.booster == BoosterKind::Rgb {
        return Err(RgbmError::param(
            "booster",
            "booster='rgb' cannot train on shards: it picks each round's tree family by the training loss, \
             a sum that is not exact (it would depend on how the rows are split), after growing every \
             candidate family's tree",
        ));
    }
    if params.step == Step::LineSearch {
        return Err(RgbmError::param(
            "step",
            "step='line_search' cannot train on shards: it minimises sums of the loss, which are not exact \
             (they would depend on how the rows are split); use step='newton' or 'constant'",
        ));
    }
    if params.n_targets.is_some() {
        return Err(RgbmError::param(
            "n_targets",
            "several targets cannot train on shards (a shard holds one label per row)",
        ));
    }
    if params.loss == Loss::LambdaRank {
        return Err(RgbmError::param(
            "loss",
            "loss='lambdarank' cannot train on shards: a query's rows would have to be on one shard",
        ));
    }
    if params.loss == Loss::Gaussian {
        return Err(RgbmError::param(
            "loss",
            "loss='gaussian' cannot train on shards: it starts from the mean and standard deviation of \
             all rows, sums that are not exact (they would depend on how the rows are split)",
        ));
    }
    if params.summation() != Summation::Exact {
        return Err(RgbmError::param(
            "summation",
            "training on shards needs summation='exact': only exact sums do not depend on how the rows are split",
        ));
    }
    if params.loss.renews_leaves() {
        return Err(RgbmError::param(
            "loss",
            format!(
                "{:?} re-estimates leaves as weighted quantiles of their rows, which needs every row in one place: it cannot train on shards",
                params.loss
            ),
        ));
    }
    if params.loss == Loss::Custom {
        return Err(RgbmError::param(
            "loss",
            "a custom loss cannot train on shards",
        ));
    }
    if params.record_train_loss {
        return Err(RgbmError::param(
            "record_train_loss",
            "is not available when training on shards",
        ));
    }
    Ok(())
}

/// The shard's rows binned with the bin edges of all rows: the rows that
/// place the cut points (`BinMapper::sample_rows` of all of them) are
/// gathered from every shard, and each shard fits the same mapper on them.
pub fn bin<T: Element>(
    x: &Matrix<T>,
    w: Option<&[f64]>,
    params: &BoosterParams,
    rows: &ShardRows,
    cancel: &Cancel,
) -> Result<BinnedDataset> {
    let p = x.n_cols();
    let sample = BinMapper::sample_rows(rows.n_total, params.random_state)?;
    let in_sample = |id: u64| {
        sample
            .as_ref()
            .is_none_or(|s| s.binary_search(&(id as usize)).is_ok())
    };
    // A record: the row's index, its values, its weight (if weighted).
    let width = 1 + p + usize::from(w.is_some());
    let mut records = Vec::new();
    for i in (0..x.n_rows()).filter(|&i| in_sample(rows.id(i))) {
        records.push(rows.id(i) as f64);
        records.extend((0..p).map(|j| x.get(i, j)));
        if let Some(w) = w {
            records.push(w[i]);
        }
    }
    cancel.check()?;
    let all = rows.reduce.gather(&records, width)?;
    let n = all.len() / width;
    let mut values: Vec<T> = with_capacity(n * p, "the binning sample")?;
    let mut weights: Vec<f64> = Vec::new();
    for r in all.chunks_exact(width) {
        values.extend(r[1..=p].iter().map(|&v| T::from_f64(v)));
        if w.is_some() {
            weights.push(r[p + 1]);
        }
    }
    let sample_x = DenseMatrix::row_major(&values, n, p)?;
    let weights = w.is_some().then_some(weights.as_slice());
    let mapper = BinMapper::fit_with_categories(
        &sample_x,
        crate::data::BinLimits {
            max_bins: params.max_bins,
            min_data_in_bin: params.min_data_in_bin(),
        },
        params.random_state,
        weights,
        params.categorical(),
        0,
        cancel,
    )?;
    BinnedDataset::bin(x, mapper, 0, cancel)
}
