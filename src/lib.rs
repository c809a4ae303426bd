//! rgbm_rs: gradient boosting with the theory-backed methods (RGBM, Newton vs
//! gradient boosting, RGB, SGLB) on a binned, parallel histogram core.
//!
//! Data flows one way: a borrowed matrix → [`data::BinnedDataset`] →
//! [`booster::train`] (given a [`booster::TrainingData`]) → [`model::Model`] (trees with raw thresholds) → predictions.

// `!(x > 0.0)` is how this crate says "not positive, or NaN": the negated
// comparisons are deliberate.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

/// A hot loop compiled twice: for the baseline target and with AVX2; the
/// AVX2 copy runs when the CPU has it. Rust never fuses a multiply and an
/// add, so both copies do the same IEEE operations in the same order and
/// give the same bits (histogram kernels, the gradient pass).
macro_rules! dispatch_avx2 {
    ($(#[$doc:meta])* $vis:vis fn $name:ident / $avx2:ident = $body:ident <$($gen:ident : $bound:path),* ; $(const $c:ident : $cty:ty),*> ($($arg:ident : $ty:ty),*)) => {
        $(#[$doc])*
        #[inline(never)]
        $vis fn $name<$($gen: $bound,)* $(const $c: $cty),*>($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { $avx2::<$($gen,)* $($c),*>($($arg),*) };
            }
            $body::<$($gen,)* $($c),*>($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn $avx2<$($gen: $bound,)* $(const $c: $cty),*>($($arg: $ty),*) {
            $body::<$($gen,)* $($c),*>($($arg),*)
        }
    };
}

pub mod alloc;
pub mod booster;
pub mod cancel;
pub mod constraints;
pub mod contention;
pub mod data;
pub mod error;
pub mod exact_sum;
pub mod explain;
pub mod histogram;
pub mod json;
pub mod metric;
pub mod model;
pub mod objective;
pub mod options;
pub mod params;
pub mod reduce;
pub mod relay;
pub mod rng;
pub mod selection;
pub mod split;
pub mod threads;
pub mod tree;

#[cfg(feature = "python")]
mod python;

pub use booster::{Trained, TrainingData, Unmonitored, train};
pub use data::{DenseMatrix, SparseMatrix};
pub use error::{Result, RgbmError};
pub use model::Model;
pub use params::BoosterParams;
