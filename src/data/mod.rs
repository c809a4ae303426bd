//! Input matrices and the binned training dataset.
pub mod binning;
pub mod dataset;
pub mod element;
pub mod feature_bins;
pub mod feature_table;
pub mod matrix;
pub mod sparse;

pub use binning::{BinLimits, BinMapper};
pub use dataset::{BinCodes, BinnedDataset};
pub use element::Element;
pub use feature_bins::FeatureBins;
pub use feature_table::FeatureTable;
pub use matrix::{AsMatrix, DenseMatrix, Matrix};
pub use sparse::SparseMatrix;
