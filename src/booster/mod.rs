//! The boosting loop.
pub mod boost;
pub mod eval;
mod fit;
pub mod grid;
mod learner;
pub mod rgb;
mod scores;
pub mod sglb;
pub mod shard;
pub mod step;
pub mod theory;
mod weights;

pub use boost::{
    RoundHook, RoundLog, Trained, train, train_from, train_logged, train_ranking, train_shard,
    train_with,
};
pub use eval::{EvalHistory, EvalResult, EvalSet, Monitor, Unmonitored};
