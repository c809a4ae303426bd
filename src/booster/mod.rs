//! The boosting loop.
pub mod boost;
pub mod rgb;
pub mod sglb;
pub mod step;

pub use boost::{train, train_logged, RoundHook, RoundLog, Trained};
