//! The boosting loop.
pub mod boost;
pub mod eval;
pub mod rgb;
pub mod sglb;
pub mod step;

pub use boost::{train, train_logged, train_with, RoundHook, RoundLog, Trained};
pub use eval::{EvalHistory, EvalResult, EvalSet, Monitor, Unmonitored};
