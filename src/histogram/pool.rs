//! Buffers reused from node to node, so that growing a tree does not
//! allocate per node.
use super::Histogram;
use crate::alloc::with_capacity;
use crate::error::Result;

/// Buffers reused across [`build`](super::build) calls: partial histograms of row
/// chunks, and a node's gradients (and weights) gathered in node order for
/// the kernels that read them sequentially.
pub struct BuildScratch {
    pub(super) partials: Vec<Histogram>,
    pub(super) gh: Vec<[f64; 2]>,
    pub(super) w: Vec<f64>,
}

impl BuildScratch {
    /// For nodes of up to `n_rows` rows. The gradient buffer is reserved,
    /// not filled: pages are touched only as gathers reach them (tree-scope
    /// fits gather at most the smaller child, ≤ n/2 rows, and only for
    /// feature subsets: the kernels over every feature read by row). Fails with
    /// `OutOfMemory` if it cannot be reserved.
    pub fn new(n_rows: usize) -> Result<Self> {
        Ok(BuildScratch {
            partials: Vec::new(),
            gh: with_capacity(n_rows, "the gathered gradients")?,
            w: Vec::new(),
        })
    }
}

/// Reusable histogram buffers, so growing a tree does not allocate per node.
pub struct HistogramPool {
    len: usize,
    free: Vec<Histogram>,
}

impl HistogramPool {
    pub fn new(len: usize) -> Self {
        HistogramPool {
            len,
            free: Vec::new(),
        }
    }
    pub fn take(&mut self) -> Result<Histogram> {
        match self.free.pop() {
            Some(h) => Ok(h),
            None => Histogram::new(self.len),
        }
    }
    pub fn give(&mut self, h: Histogram) {
        self.free.push(h);
    }
}
