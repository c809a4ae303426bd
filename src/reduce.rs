//! Sums over a fit's rows when the rows are split among shards (machines).
//!
//! Training on shards runs the same fit on every shard, each on its own
//! rows; wherever the fit sums over rows (a histogram, a node's or a leaf's
//! totals, the gradients' largest magnitude, a weight or metric sum) the
//! shard sums its part and a [`Reduce`] combines the parts of all shards.
//! Every shard gets the same combined values back, so every shard makes the
//! same decisions and ends with the same model. Under `summation="exact"`
//! those sums are exact: grid values add exactly as `f64`, other sums go
//! through [`ExactSum`]. The combined values, and so the model, are then
//! those of one fit on all the rows, however they are split.
//!
//! A fit on all rows uses [`Local`]: every operation leaves its values as
//! they are.
use crate::error::{Result, RgbmError};
use crate::exact_sum::ExactSum;
use crate::histogram::{BinStats, Histogram};

/// How the shards' parts of one exchange are combined, element by element
/// ([`ExactSum`] limbs and gathered records have methods of their own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Sum of values on a grid where every sum is exact (any order).
    Sum,
    /// Largest value.
    Max,
}

impl Op {
    /// The name a driver sees ("sum", "max").
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Max => "max",
        }
    }
}

/// Combines one part per shard into the whole (see the module docs).
pub trait Reduce: Send + Sync {
    /// True when this fit holds every row: the parts are already the whole.
    fn is_local(&self) -> bool;
    /// Replaces `values` (this shard's part) by the element-wise combination
    /// of every shard's part under `op`.
    fn combine(&self, op: Op, values: &mut [f64]) -> Result<()>;
    /// Replaces `limbs` (this shard's [`ExactSum`] limbs) by every shard's sum.
    fn combine_limbs(&self, limbs: &mut [i64]) -> Result<()>;
    /// Every shard's `records` (each `width` values, the first a row index
    /// in the whole data), concatenated and ordered by that index.
    fn gather(&self, records: &[f64], width: usize) -> Result<Vec<f64>>;
}

/// The reduction of a fit that holds every row: nothing to combine.
pub struct Local;

impl Reduce for Local {
    fn is_local(&self) -> bool {
        true
    }
    fn combine(&self, _op: Op, _values: &mut [f64]) -> Result<()> {
        Ok(())
    }
    fn combine_limbs(&self, _limbs: &mut [i64]) -> Result<()> {
        Ok(())
    }
    fn gather(&self, records: &[f64], _width: usize) -> Result<Vec<f64>> {
        Ok(records.to_vec())
    }
}

/// Combines the parts `parts` of every shard under `op` (what a driver
/// that relays the shards' exchanges computes).
pub fn combine_parts(op: Op, parts: &[Vec<f64>]) -> Result<Vec<f64>> {
    let len = parts.first().map_or(0, Vec::len);
    if parts.iter().any(|p| p.len() != len) {
        return Err(out_of_step());
    }
    let mut out = vec![
        if op == Op::Max {
            f64::NEG_INFINITY
        } else {
            0.0
        };
        len
    ];
    for part in parts {
        for (o, &v) in out.iter_mut().zip(part) {
            *o = if op == Op::Max { o.max(v) } else { *o + v };
        }
    }
    Ok(out)
}

/// Every shard's records, concatenated in the order of their first value.
pub fn gather_parts(parts: &[Vec<f64>], width: usize) -> Result<Vec<f64>> {
    if width == 0 || parts.iter().any(|p| p.len() % width != 0) {
        return Err(out_of_step());
    }
    let mut records: Vec<&[f64]> = parts.iter().flat_map(|p| p.chunks_exact(width)).collect();
    records.sort_by(|a, b| a[0].total_cmp(&b[0]));
    Ok(records.concat())
}

/// The error when shards send exchanges that do not match.
pub fn out_of_step() -> RgbmError {
    RgbmError::Shape(
        "the shards' exchanges do not match (different lengths or kinds): they are out of step"
            .into(),
    )
}

/// Every shard's sums of `stats` (exact on the grid).
pub fn sum_stats(reduce: &dyn Reduce, stats: &mut [BinStats]) -> Result<()> {
    if reduce.is_local() {
        return Ok(());
    }
    let mut flat: Vec<f64> = stats.iter().flat_map(|s| [s.g, s.h, s.w, s.n]).collect();
    reduce.combine(Op::Sum, &mut flat)?;
    for (s, v) in stats.iter_mut().zip(flat.chunks_exact(4)) {
        *s = BinStats {
            g: v[0],
            h: v[1],
            w: v[2],
            n: v[3],
        };
    }
    Ok(())
}

/// Every shard's exact sums, one per entry of `sums`.
pub fn sum_exact(reduce: &dyn Reduce, sums: &mut [ExactSum]) -> Result<()> {
    if reduce.is_local() {
        return Ok(());
    }
    let mut flat: Vec<i64> = sums.iter().flat_map(|s| s.to_limbs()).collect();
    reduce.combine_limbs(&mut flat)?;
    let width = flat.len() / sums.len().max(1);
    for (s, limbs) in sums.iter_mut().zip(flat.chunks_exact(width.max(1))) {
        *s = ExactSum::from_limbs(limbs)
            .ok_or_else(|| RgbmError::Shape("a combined exact sum has the wrong width".into()))?;
    }
    Ok(())
}

/// The largest of every shard's `values`, element-wise.
pub fn max(reduce: &dyn Reduce, values: &mut [f64]) -> Result<()> {
    reduce.combine(Op::Max, values)
}

/// Every shard's sums of the bins of each histogram's features (the
/// candidate features' bins only: the others are not read), in one
/// exchange; `offsets` are the dataset's first bin per feature.
pub fn sum_histograms(
    reduce: &dyn Reduce,
    hists: &mut [(&mut Histogram, &[usize])],
    offsets: &[usize],
) -> Result<()> {
    if reduce.is_local() || hists.is_empty() {
        return Ok(());
    }
    let ranges = |features: &[usize]| -> Vec<std::ops::Range<usize>> {
        features
            .iter()
            .map(|&j| offsets[j]..offsets[j + 1])
            .collect()
    };
    let mut flat = Vec::new();
    for (h, features) in hists.iter() {
        for r in ranges(features) {
            flat.extend(h.gh[r.clone()].iter().flatten());
            flat.extend(
                h.count
                    .get(r.clone())
                    .unwrap_or(&[])
                    .iter()
                    .map(|&c| c as f64),
            );
            flat.extend(h.weight.get(r).unwrap_or(&[]));
        }
    }
    reduce.combine(Op::Sum, &mut flat)?;
    let mut it = flat.into_iter();
    let mut next = || it.next().unwrap_or(f64::NAN);
    for (h, features) in hists.iter_mut() {
        for r in ranges(features) {
            for gh in &mut h.gh[r.clone()] {
                *gh = [next(), next()];
            }
            if let Some(c) = h.count.get_mut(r.clone()) {
                // At most u32::MAX rows in all (checked when training starts).
                c.iter_mut().for_each(|c| *c = next() as u32);
            }
            if let Some(w) = h.weight.get_mut(r) {
                w.iter_mut().for_each(|w| *w = next());
            }
        }
    }
    Ok(())
}
