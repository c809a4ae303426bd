//! rgbm_rs: gradient boosting with the theory-backed methods (RGBM, Newton vs
//! gradient boosting, RGB, SGLB) on a binned, parallel histogram core.
//!
//! Data flows one way: a borrowed matrix → [`data::BinnedDataset`] →
//! [`booster::train`] (given a [`booster::TrainingData`]) → [`model::Model`] (trees with raw thresholds) → predictions.
//!
//! The public API: [`booster`] (`train`, `TrainingData`, `EvalSet`,
//! `Monitor`, `Trained`), [`params`] and [`options`] (what to train),
//! [`data`] (the matrix views), [`model`] (prediction, SHAP values, model
//! files) with [`tree`] (its trees), [`objective`] (losses, query groups),
//! [`error`], [`cancel`] (stopping a fit from another thread), and for
//! training on shards [`reduce`], [`relay`] and [`exact_sum`]. The kernels
//! `histogram`, `selection`, `split` and `json` are public for the
//! benchmarks, fuzzers and integration tests only (hidden from the docs, no
//! stability promised); everything else is internal.

// `!(x > 0.0)` is how this crate says "not positive, or NaN": the negated
// comparisons are deliberate.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

/// A hot loop compiled twice: for the baseline target and with AVX2; the
/// AVX2 copy runs when the CPU has it. Rust never fuses a multiply and an
/// add, so both copies do the same IEEE operations in the same order and
/// give the same bits (histogram kernels, the gradient pass).
macro_rules! dispatch_avx2 {
    ($(#[$doc:meta])* $vis:vis fn $name:ident / $avx2:ident = $body:ident <$($gen:ident : $bound:path),* ; $(const $c:ident : $cty:ty),*> ($($arg:ident : $ty:ty),*) $(-> $ret:ty)?) => {
        $(#[$doc])*
        #[inline(never)]
        $vis fn $name<$($gen: $bound,)* $(const $c: $cty),*>($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { $avx2::<$($gen,)* $($c),*>($($arg),*) };
            }
            $body::<$($gen,)* $($c),*>($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn $avx2<$($gen: $bound,)* $(const $c: $cty),*>($($arg: $ty),*) $(-> $ret)? {
            $body::<$($gen,)* $($c),*>($($arg),*)
        }
    };
}

pub(crate) mod alloc;
pub mod booster;
pub mod cancel;
pub(crate) mod constraints;
pub(crate) mod contention;
pub mod data;
pub mod error;
pub mod exact_sum;
pub(crate) mod explain;
#[doc(hidden)]
pub mod histogram;
#[doc(hidden)]
pub mod json;
pub(crate) mod metric;
pub mod model;
pub mod objective;
pub mod options;
pub mod params;
pub mod reduce;
pub mod relay;
pub(crate) mod rng;
#[doc(hidden)]
pub mod selection;
#[doc(hidden)]
pub mod split;
pub(crate) mod threads;
pub mod tree;

#[cfg(feature = "python")]
mod python;

pub use booster::{Trained, TrainingData, Unmonitored, train};
pub use data::{DenseMatrix, SparseMatrix};
pub use error::{Result, RgbmError};
pub use model::Model;
pub use params::BoosterParams;
