//! A sibling's histogram as parent − child, instead of another pass over
//! its rows.
use std::ops::Range;

use super::Histogram;
use crate::data::dataset::BinnedDataset;

/// Turns `parent` into the histogram of the sibling of `child` (parent − child).
///
/// Bins of features outside the node's candidate set hold stale values from
/// earlier nodes and are never read, so their counts may "go negative":
/// counts subtract with wrapping (exact wherever parent ≥ child, i.e. in
/// every bin that was built).
pub fn subtract_into(parent: &mut Histogram, child: &Histogram) {
    subtract_bins(parent, child, 0..parent.len());
}

/// `subtract_into` on the bins of `features` only (the others are stale
/// and never read): a randomized round's t of p features cost t/p here too.
pub fn subtract_features_into(
    parent: &mut Histogram,
    child: &Histogram,
    data: &BinnedDataset,
    features: &[usize],
) {
    if features.len() == data.n_features() {
        return subtract_into(parent, child);
    }
    for &j in features {
        subtract_bins(parent, child, data.bin_offsets[j]..data.bin_offsets[j + 1]);
    }
}

fn subtract_bins(parent: &mut Histogram, child: &Histogram, bins: Range<usize>) {
    let pairs = parent.gh[bins.clone()]
        .iter_mut()
        .zip(&child.gh[bins.clone()]);
    for (p, c) in pairs {
        *p = [p[0] - c[0], p[1] - c[1]];
    }
    if !parent.count.is_empty() && !child.count.is_empty() {
        let pairs = parent.count[bins.clone()]
            .iter_mut()
            .zip(&child.count[bins.clone()]);
        for (p, c) in pairs {
            *p = p.wrapping_sub(*c);
        }
    }
    if !parent.weight.is_empty() && !child.weight.is_empty() {
        let pairs = parent.weight[bins.clone()]
            .iter_mut()
            .zip(&child.weight[bins]);
        for (p, c) in pairs {
            *p -= c;
        }
    }
}
