//! Features known to be constant on an open leaf's rows.
//!
//! A feature whose rows all fall in one bin of a node cannot split it, and
//! stays so on every subset of those rows: once a search finds it (the
//! split search reports such candidates), no node below searches it, and
//! none builds or subtracts its bins where that leaves the other bins as
//! they were (`histogram::subset_builds_alike`). Deep nodes of wide data,
//! a few rows each, are then left with a few live features instead of
//! every feature's bins. The trees are the same, bit for bit.
use crate::alloc::filled_vec;
use crate::error::Result;
use crate::selection::Candidates;

/// A set of features, one bit each; empty until a feature is added.
#[derive(Clone, Debug, Default)]
pub(super) struct ConstantFeatures {
    words: Vec<u64>,
}

impl ConstantFeatures {
    pub(super) fn contains(&self, j: usize) -> bool {
        self.words
            .get(j / 64)
            .is_some_and(|w| w >> (j % 64) & 1 == 1)
    }

    /// Adds `features` (each below `n_features`).
    pub(super) fn extend(&mut self, features: &[usize], n_features: usize) -> Result<()> {
        if features.is_empty() {
            return Ok(());
        }
        if self.words.is_empty() {
            self.words = filled_vec(n_features.div_ceil(64), 0, "the constant features")?;
        }
        for &j in features {
            self.words[j / 64] |= 1 << (j % 64);
        }
        Ok(())
    }

    /// A copy for a child leaf (its rows are a subset of this leaf's).
    pub(super) fn try_clone(&self) -> Result<Self> {
        let mut words = filled_vec(self.words.len(), 0, "the constant features")?;
        words.copy_from_slice(&self.words);
        Ok(ConstantFeatures { words })
    }

    /// `cands` without these features, or None when it has none of them.
    pub(super) fn drop_from(&self, cands: &Candidates) -> Option<Candidates> {
        if self.words.is_empty() || !cands.features.iter().any(|&j| self.contains(j)) {
            return None;
        }
        Some(cands.filtered(|j| !self.contains(j)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_exactly_the_added_features_with_their_thresholds() {
        let mut set = ConstantFeatures::default();
        let cands = Candidates {
            features: vec![0, 3, 64, 65, 130],
            allowed: Some(vec![
                vec![true],
                vec![false],
                vec![true, true],
                vec![],
                vec![false],
            ]),
        };
        assert!(set.drop_from(&cands).is_none());
        set.extend(&[], 131).unwrap();
        assert!(set.drop_from(&cands).is_none());
        set.extend(&[3, 65, 100], 131).unwrap();
        let child = set.try_clone().unwrap();
        set.extend(&[130], 131).unwrap();
        assert!((0..131).all(|j| set.contains(j) == [3, 65, 100, 130].contains(&j)));
        assert!(!child.contains(130) && child.contains(100));
        let kept = set.drop_from(&cands).unwrap();
        assert_eq!(kept.features, vec![0, 64]);
        assert_eq!(kept.allowed, Some(vec![vec![true], vec![true, true]]));
        // A set that holds none of the candidates drops nothing.
        let other = Candidates {
            features: vec![1, 2],
            allowed: None,
        };
        assert!(set.drop_from(&other).is_none());
    }
}
