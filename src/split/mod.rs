//! Split gain formulas and the best-threshold search over histograms.
pub mod gain;
pub mod search;
mod threshold_scan;

pub use gain::{Curvature, SplitRule};
pub use search::{NodeMonotone, RowCounts, SplitCandidate, best_split};
