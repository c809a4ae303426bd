//! Regression trees: the flat node arrays, growth, row partitioning, prediction.
pub mod grower;
pub mod partition;
pub mod predict;
pub mod rebound;
#[allow(clippy::module_inception)]
pub mod tree;

pub use grower::{GrowerConfig, NodeSelection, TreeGrower};
pub use tree::Tree;
