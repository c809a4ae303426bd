//! What binning decides per feature from its most frequent bin: the
//! default bin the kernels skip, whether the feature can split at all,
//! and whether the data is sparse enough to keep sparse rows.
use rayon::prelude::*;

use super::codes::{BinCode, BinCodes};
use crate::alloc::with_capacity;
use crate::data::binning::BinMapper;
use crate::error::Result;

/// Share of rows a bin needs to be a feature's skipped default bin.
pub const DEFAULT_BIN_SHARE: f64 = 0.7;
/// Sparse rows are kept when they hold at most this share of all entries.
const SPARSE_MAX_SHARE: f64 = 0.5;

/// The most frequent code of every feature (the lowest on ties) and its rows.
pub(super) fn find_modes(
    codes: &BinCodes,
    n: usize,
    mapper: &BinMapper,
) -> Result<Vec<(usize, u64)>> {
    match codes {
        BinCodes::U8(c) => modes_of(c, n, mapper),
        BinCodes::U16(c) => modes_of(c, n, mapper),
    }
}

fn modes_of<C: BinCode>(codes: &[C], n: usize, mapper: &BinMapper) -> Result<Vec<(usize, u64)>> {
    let mut modes = with_capacity(mapper.n_features(), "the feature modes")?;
    codes
        .par_chunks(n.max(1))
        .enumerate()
        .map(|(j, col)| {
            let fb = &mapper.features[j];
            // Four interleaved counters per bin: a run of equal codes would
            // otherwise wait on its own previous increment.
            let mut lanes = vec![[0u64; 4]; fb.n_bins()];
            let mut quads = col.chunks_exact(4);
            for q in &mut quads {
                lanes[q[0].idx()][0] += 1;
                lanes[q[1].idx()][1] += 1;
                lanes[q[2].idx()][2] += 1;
                lanes[q[3].idx()][3] += 1;
            }
            for c in quads.remainder() {
                lanes[c.idx()][0] += 1;
            }
            mode(lanes.iter().map(|l| l.iter().sum::<u64>()))
        })
        .collect_into_vec(&mut modes);
    Ok(modes)
}

/// The most frequent bin of per-bin `counts` (the lowest on ties) and its count.
pub(super) fn mode(counts: impl Iterator<Item = u64>) -> (usize, u64) {
    counts
        .enumerate()
        .max_by_key(|&(b, c)| (c, std::cmp::Reverse(b)))
        .unwrap_or((0, 0))
}

/// What binning decides per feature from its most frequent bin: the
/// default bin (skipped by the kernels) and whether the feature can split
/// any node at all. A split puts the mode's rows on one side, so the other
/// side has at most n − top rows: below `min_rows` (the fit's row minimum
/// per leaf; 0 keeps every feature) no split is possible, on any subset of
/// the rows either.
pub(super) struct FeatureUse {
    pub default_bins: Vec<Option<usize>>,
    pub used: Vec<bool>,
}

impl FeatureUse {
    pub(super) fn from_modes(
        modes: &[(usize, u64)],
        n: usize,
        min_rows: usize,
    ) -> Result<FeatureUse> {
        let mut default_bins = with_capacity(modes.len(), "the features' default bins")?;
        default_bins.extend(
            modes
                .iter()
                .map(|&(bin, top)| (top as f64 >= DEFAULT_BIN_SHARE * n as f64).then_some(bin)),
        );
        let mut used = with_capacity(modes.len(), "the features in use")?;
        used.extend(
            modes
                .iter()
                .map(|&(_, top)| min_rows == 0 || n as u64 - top >= min_rows as u64),
        );
        Ok(FeatureUse { default_bins, used })
    }

    /// The histogram offsets of sparse rows (used features only) when the
    /// data is sparse enough to keep them instead of codes: the rows would
    /// hold every row of a used feature without a default bin and the
    /// non-default rows of the others, at most `SPARSE_MAX_SHARE` of all
    /// codes, and every global bin fits a u32.
    pub(super) fn sparse_offsets(
        &self,
        modes: &[(usize, u64)],
        n: usize,
        mapper: &BinMapper,
    ) -> Result<Option<Vec<usize>>> {
        let p = modes.len();
        if self.default_bins.iter().all(Option::is_none) {
            return Ok(None);
        }
        let total: u64 = modes
            .iter()
            .zip(&self.default_bins)
            .zip(&self.used)
            .filter(|(_, used)| **used)
            .map(|((&(_, top), d), _)| n as u64 - if d.is_some() { top } else { 0 })
            .sum();
        let offsets = self.offsets(mapper, true)?;
        let fits = *offsets.last().unwrap_or(&0) <= u32::MAX as usize;
        Ok((fits && total as f64 <= SPARSE_MAX_SHARE * n as f64 * p as f64).then_some(offsets))
    }

    /// Histogram offsets: every feature's bins, or with `filtered` only the
    /// used features'.
    pub(super) fn offsets(&self, mapper: &BinMapper, filtered: bool) -> Result<Vec<usize>> {
        let mut offsets = with_capacity(mapper.n_features() + 1, "the histogram offsets")?;
        let mut total = 0;
        for (fb, &used) in mapper.features.iter().zip(&self.used) {
            offsets.push(total);
            if used || !filtered {
                total += fb.n_bins();
            }
        }
        offsets.push(total);
        Ok(offsets)
    }
}
