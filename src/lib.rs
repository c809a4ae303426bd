//! rgbm_rs: gradient boosting with the theory-backed methods (RGBM, Newton vs
//! gradient boosting, RGB, SGLB) on a binned, parallel histogram core.
//!
//! Data flows one way: a borrowed matrix → [`data::BinnedDataset`] →
//! [`booster::train`] → [`model::Model`] (trees with raw thresholds) → predictions.

// `!(x > 0.0)` is how this crate says "not positive, or NaN": the negated
// comparisons are deliberate.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
pub mod alloc;
pub mod booster;
pub mod data;
pub mod error;
pub mod histogram;
pub mod metric;
pub mod model;
pub mod objective;
pub mod params;
pub mod rng;
pub mod selection;
pub mod split;
pub mod threads;
pub mod tree;

#[cfg(feature = "python")]
mod python;

pub use booster::train;
pub use data::DenseMatrix;
pub use error::{Result, RgbmError};
pub use model::Model;
pub use params::BoosterParams;
