//! The boosting loop.
pub mod boost;

pub use boost::{train, RoundHook};
