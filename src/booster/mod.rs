//! The boosting loop.
pub mod boost;
pub mod eval;
mod fit;
pub(crate) mod grid;
mod learner;
mod quantize;
pub mod resume;
pub mod rgb;
mod scores;
pub(crate) mod sglb;
pub mod shard;
pub(crate) mod step;
pub(crate) mod theory;
mod trained;
mod training_data;
mod weights;

pub use boost::{bin_for_training, train, train_resumed};
pub use eval::{BeforeRound, EvalResult, EvalSet, Monitor, Unmonitored};
pub use resume::{Resume, RoundRecord};
pub use trained::{EvalHistory, RoundLog, Trained};
pub use training_data::{Features, TrainingData};
