//! The bins of every feature, stored compactly when most features have one
//! bin (a wide sparse matrix: a million columns, a few thousand usable).
use std::ops::{Index, Range};

use super::feature_bins::FeatureBins;
use crate::alloc::{filled_vec, with_capacity};
use crate::error::Result;

/// One value bin (no thresholds): what every feature not stored has.
static SINGLE: FeatureBins = FeatureBins {
    thresholds: Vec::new(),
    categories: None,
};

/// Marks a feature without a slot in the compact form.
const NO_SLOT: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct FeatureTable {
    /// The stored features' bins.
    bins: Vec<FeatureBins>,
    /// Compact form: each feature's position in `bins`, or `NO_SLOT` for one
    /// bin (4 bytes a feature instead of a 48-byte `FeatureBins`). None:
    /// `bins` holds every feature.
    slot: Option<Vec<u32>>,
}

impl FeatureTable {
    /// Every feature's bins, as given.
    pub fn new(bins: Vec<FeatureBins>) -> FeatureTable {
        FeatureTable { bins, slot: None }
    }

    /// `n` features: `bins[k]` for feature `stored[k]` (ascending), one bin
    /// for every other. Compact when fewer than half the features are stored.
    pub fn with_single_bins(
        n: usize,
        stored: &[usize],
        bins: Vec<FeatureBins>,
    ) -> Result<FeatureTable> {
        debug_assert_eq!(stored.len(), bins.len());
        if stored.len() * 2 >= n || n > NO_SLOT as usize {
            let mut all = with_capacity(n, "the bin mapper")?;
            all.extend((0..n).map(|_| FeatureBins::single()));
            for (&j, b) in stored.iter().zip(bins) {
                all[j] = b;
            }
            return Ok(FeatureTable::new(all));
        }
        let mut slot = filled_vec(n, NO_SLOT, "the bin mapper")?;
        for (k, &j) in stored.iter().enumerate() {
            slot[j] = k as u32;
        }
        Ok(FeatureTable {
            bins,
            slot: Some(slot),
        })
    }

    pub fn len(&self) -> usize {
        self.slot.as_ref().map_or(self.bins.len(), Vec::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every feature's bins, in feature order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            table: self,
            next: 0..self.len(),
        }
    }

    /// Replaces feature `j`'s bins.
    pub fn set(&mut self, j: usize, bins: FeatureBins) {
        match &mut self.slot {
            None => self.bins[j] = bins,
            Some(slot) if slot[j] != NO_SLOT => self.bins[slot[j] as usize] = bins,
            Some(slot) => {
                slot[j] = self.bins.len() as u32;
                self.bins.push(bins);
            }
        }
    }
}

/// Every feature's bins, in feature order.
#[derive(Clone)]
pub struct Iter<'a> {
    table: &'a FeatureTable,
    next: Range<usize>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a FeatureBins;

    #[inline]
    fn next(&mut self) -> Option<&'a FeatureBins> {
        self.next.next().map(|j| &self.table[j])
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.next.size_hint()
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a FeatureTable {
    type Item = &'a FeatureBins;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl Index<usize> for FeatureTable {
    type Output = FeatureBins;

    #[inline]
    fn index(&self, j: usize) -> &FeatureBins {
        match &self.slot {
            None => &self.bins[j],
            Some(slot) => match slot[j] {
                NO_SLOT => &SINGLE,
                k => &self.bins[k as usize],
            },
        }
    }
}

/// Equal when every feature's bins are, whichever form holds them.
impl PartialEq for FeatureTable {
    fn eq(&self, other: &FeatureTable) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bins(t: &[f64]) -> FeatureBins {
        FeatureBins {
            thresholds: t.to_vec(),
            categories: None,
        }
    }

    #[test]
    fn compact_and_full_forms_hold_the_same_features() {
        let stored = [1, 4];
        let given = vec![bins(&[0.5]), bins(&[1.0, 2.0])];
        let compact = FeatureTable::with_single_bins(9, &stored, given.clone()).unwrap();
        let full = FeatureTable::with_single_bins(3, &[1, 2], given.clone()).unwrap();
        assert!(compact.slot.is_some() && full.slot.is_none());
        let want: Vec<FeatureBins> = (0..9)
            .map(|j| match j {
                1 => given[0].clone(),
                4 => given[1].clone(),
                _ => FeatureBins::single(),
            })
            .collect();
        assert_eq!(compact.iter().cloned().collect::<Vec<_>>(), want);
        assert_eq!(compact, FeatureTable::new(want.clone()));
        // Setting a feature without a slot, and one with.
        let mut a = compact.clone();
        let mut b = FeatureTable::new(want);
        for (j, t) in [(7, 3.0), (4, 5.0)] {
            a.set(j, bins(&[t]));
            b.set(j, bins(&[t]));
        }
        assert_eq!(a, b);
        assert_eq!(a[7], bins(&[3.0]));
        assert_ne!(a, compact);
        assert_eq!(full.len(), 3);
        assert_eq!(full[0], FeatureBins::single());
    }
}
