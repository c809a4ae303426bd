//! What a feature's bins are: value bins cut at thresholds (or one per
//! category) and the missing bin; the code of a value and a value for
//! each code. Binning finds them (`binning/`); the dataset and its
//! `FeatureTable` keep them.
use serde::{Deserialize, Serialize};

use crate::params::MAX_CATEGORY;

/// A feature's bins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeatureBins {
    /// Upper bounds of value bins 0..k-1 (the last value bin is unbounded).
    /// A categorical feature's only give the number of value bins.
    pub thresholds: Vec<f64>,
    /// A categorical feature's category code of each value bin, increasing.
    /// Codes without a bin (rare beyond `max_bins`, or unseen) share the
    /// missing bin: like missing values they follow a split's default side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<u32>>,
}

/// The category code `v` holds, if it is one (an integer in [0, MAX_CATEGORY]).
#[inline]
pub fn category_code(v: f64) -> Option<u32> {
    (v >= 0.0 && v <= MAX_CATEGORY as f64 && v == v.trunc()).then_some(v as u32)
}

impl FeatureBins {
    /// One value bin for every value (and the missing bin).
    pub fn single() -> FeatureBins {
        FeatureBins {
            thresholds: Vec::new(),
            categories: None,
        }
    }

    /// Number of value bins (excluding the missing bin).
    #[inline]
    pub fn n_value_bins(&self) -> usize {
        self.thresholds.len() + 1
    }
    /// The code given to NaN.
    #[inline]
    pub fn missing_bin(&self) -> usize {
        self.thresholds.len() + 1
    }
    /// Value bins plus the missing bin.
    #[inline]
    pub fn n_bins(&self) -> usize {
        self.thresholds.len() + 2
    }
    #[inline]
    pub fn bin(&self, x: f64) -> usize {
        if let Some(cats) = &self.categories {
            return category_code(x)
                .and_then(|c| cats.binary_search(&c).ok())
                .unwrap_or(self.missing_bin());
        }
        if x.is_nan() {
            self.missing_bin()
        } else {
            self.thresholds.partition_point(|&t| t < x)
        }
    }

    /// A value standing for every value of bin `code`: it takes the same
    /// side as they do at every split on these bins (thresholds are bin
    /// upper bounds, a categorical split tests the bin's category, the
    /// missing bin goes the missing side), so routing rows by it needs no
    /// raw values. The unbounded last value bin stands as +∞ (data holds no
    /// infinities).
    #[inline]
    pub fn bin_value(&self, code: usize) -> f64 {
        if code >= self.missing_bin() {
            return f64::NAN;
        }
        match &self.categories {
            Some(cats) => cats.get(code).map_or(f64::NAN, |&c| c as f64),
            None => self.thresholds.get(code).copied().unwrap_or(f64::INFINITY),
        }
    }

    pub fn is_categorical(&self) -> bool {
        self.categories.is_some()
    }
}
