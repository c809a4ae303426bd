//! Split gain formulas and the best-threshold search over histograms.
mod candidate;
pub mod gain;
pub mod search;
mod threshold_scan;

pub use candidate::SplitCandidate;
pub use gain::{Curvature, SplitRule};
pub use search::{NodeMonotone, RowCounts, best_split};
