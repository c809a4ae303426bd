//! Gradient / hessian / weight / count histograms of a node, per feature.
//!
//! The hot loop of training. Each feature's histogram is built by one task
//! in row order, so sums (f64) do not depend on the thread count.
//!
//! This file holds the types: [`BinStats`], [`Histogram`] and its borrowed
//! bins, [`Gradients`], and the per-bin records the kernels sum into
//! (`BinSums`). The rest:
//! - `node.rs`: [`build`], one node's histogram: the kernel for the data's
//!   layout, gradients gathered in node order, skipped default bins;
//! - `schedule.rs`: how a build is cut into tasks (feature groups, row
//!   chunks and the sum of their partial histograms), `even_runs.rs` the
//!   near-equal runs it cuts features into;
//! - the kernels: `feature_major.rs` (the root, and feature subsets),
//!   `row_major.rs` (row subsets over every feature) and `sparse_rows.rs`
//!   (every feature of mostly-default data); the first and last have AVX2
//!   copies, chosen at run time;
//! - `subtract.rs`: a sibling's histogram as parent − child;
//! - `pool.rs`: buffers reused from node to node;
//! - `prefetch.rs`: the prefetch hint of the subset kernels.
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::alloc::{filled_vec, grow_to};
use crate::error::Result;

mod even_runs;
mod feature_major;
mod node;
mod pool;
mod prefetch;
mod row_major;
mod schedule;
mod sparse_rows;
mod subtract;

pub use node::{build, subset_builds_alike};
pub use pool::{BuildScratch, HistogramPool};
pub use prefetch::{PREFETCH_AHEAD, prefetch};
pub use subtract::{subtract_features_into, subtract_into};

/// Sums over the rows that fall in one bin (or one node).
///
/// Aligned to its 32-byte size so that no record of a `Vec<BinStats>`
/// straddles two cache lines (a split load and store per row otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[repr(C, align(32))]
pub struct BinStats {
    /// Σ w·g
    pub g: f64,
    /// Σ w·h
    pub h: f64,
    /// Σ w
    pub w: f64,
    /// number of rows
    pub n: f64,
}

impl BinStats {
    #[inline(always)]
    pub fn add(&mut self, o: &BinStats) {
        self.g += o.g;
        self.h += o.h;
        self.w += o.w;
        self.n += o.n;
    }
    #[inline(always)]
    pub fn sub(&self, o: &BinStats) -> BinStats {
        BinStats {
            g: self.g - o.g,
            h: self.h - o.h,
            w: self.w - o.w,
            n: self.n - o.n,
        }
    }
}

impl BinStats {
    /// One row's contribution. Σw counts 1 per row when unweighted, so a
    /// bin update is one 4-wide add (a single AVX instruction).
    #[inline(always)]
    fn row<const WEIGHTED: bool>([g, h]: [f64; 2], w: &[f64], k: usize) -> BinStats {
        BinStats {
            g,
            h,
            w: if WEIGHTED { w[k] } else { 1.0 },
            n: 1.0,
        }
    }
}

/// A node's histogram, one entry per bin of every feature: (Σw·g, Σw·h),
/// the row count, and Σw when rows are weighted (otherwise Σw is the count).
/// Keeping (g, h) in 16-byte bins with the counts beside them halves the
/// memory a bin update touches compared with one 32-byte record per bin.
/// When every row's hessian is exactly 1 (unweighted squared error), Σh is
/// the row count, exactly, so `count` is left empty and not maintained.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    pub gh: Vec<[f64; 2]>,
    /// Rows per bin; empty when every hessian is 1 (then Σh is the count).
    pub count: Vec<u32>,
    /// Σw per bin; empty when the rows are unweighted.
    pub weight: Vec<f64>,
}

impl Histogram {
    /// An unweighted all-zero histogram of `len` bins, or `OutOfMemory`.
    pub fn new(len: usize) -> Result<Self> {
        Ok(Histogram {
            gh: filled_vec(len, [0.0; 2], "a histogram")?,
            count: filled_vec(len, 0, "a histogram's counts")?,
            weight: Vec::new(),
        })
    }

    /// Bytes of a histogram of `len` bins with every array present.
    pub fn bytes(len: usize) -> usize {
        len.saturating_mul(std::mem::size_of::<[f64; 2]>() + 4 + 8)
    }

    /// A histogram holding `stats` (Σw kept separately).
    pub fn from_stats(stats: &[BinStats]) -> Self {
        Histogram {
            gh: stats.iter().map(|s| [s.g, s.h]).collect(),
            count: stats.iter().map(|s| s.n as u32).collect(),
            weight: stats.iter().map(|s| s.w).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.gh.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gh.is_empty()
    }

    /// Keeps Σw per bin only when the rows are weighted, and counts only
    /// when the hessians are not all 1.
    fn set_layout(&mut self, weighted: bool, counted: bool) -> Result<()> {
        let len = self.gh.len();
        if weighted {
            grow_to(&mut self.weight, len, 0.0, "a histogram's weights")?;
        } else {
            self.weight.clear();
        }
        if counted {
            grow_to(&mut self.count, len, 0, "a histogram's counts")?;
        } else {
            self.count.clear();
        }
        Ok(())
    }

    /// All bins.
    pub fn view(&self) -> HistSlice<'_> {
        HistSlice {
            gh: &self.gh,
            count: &self.count,
            weight: &self.weight,
        }
    }

    /// The bins in `range` (one feature's, typically).
    pub fn slice(&self, range: Range<usize>) -> HistSlice<'_> {
        self.view().slice(range)
    }

    fn view_mut(&mut self) -> HistSliceMut<'_> {
        HistSliceMut {
            gh: &mut self.gh,
            count: &mut self.count,
            weight: &mut self.weight,
        }
    }

    /// The sums of bin `i`.
    pub fn stats(&self, i: usize) -> BinStats {
        self.view().stats(i)
    }
}

/// Borrowed bins of a histogram (all of them, or one feature's).
#[derive(Clone, Copy, Debug)]
pub struct HistSlice<'a> {
    pub gh: &'a [[f64; 2]],
    /// Empty when every hessian is 1.
    pub count: &'a [u32],
    /// Empty when unweighted.
    pub weight: &'a [f64],
}

impl<'a> HistSlice<'a> {
    pub fn len(&self) -> usize {
        self.gh.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gh.is_empty()
    }

    pub fn slice(&self, range: Range<usize>) -> HistSlice<'a> {
        HistSlice {
            gh: &self.gh[range.clone()],
            count: if self.count.is_empty() {
                &[]
            } else {
                &self.count[range.clone()]
            },
            weight: if self.weight.is_empty() {
                &[]
            } else {
                &self.weight[range]
            },
        }
    }

    /// The sums of bin `i`; unweighted, Σw is the row count.
    #[inline(always)]
    pub fn stats(&self, i: usize) -> BinStats {
        let [g, h] = self.gh[i];
        let n = if self.count.is_empty() {
            h
        } else {
            self.count[i] as f64
        };
        BinStats {
            g,
            h,
            w: if self.weight.is_empty() {
                n
            } else {
                self.weight[i]
            },
            n,
        }
    }
}

/// Mutable bins of a histogram; `count` is empty when every hessian is 1,
/// `weight` when unweighted.
struct HistSliceMut<'a> {
    gh: &'a mut [[f64; 2]],
    count: &'a mut [u32],
    weight: &'a mut [f64],
}

impl<'a> HistSliceMut<'a> {
    fn clear(&mut self) {
        self.gh.fill([0.0; 2]);
        self.count.fill(0);
        self.weight.fill(0.0);
    }

    fn split_at(self, mid: usize) -> (HistSliceMut<'a>, HistSliceMut<'a>) {
        let (g0, g1) = self.gh.split_at_mut(mid);
        let (c0, c1) = if self.count.is_empty() {
            (Default::default(), Default::default())
        } else {
            self.count.split_at_mut(mid)
        };
        let (w0, w1) = if self.weight.is_empty() {
            (Default::default(), Default::default())
        } else {
            self.weight.split_at_mut(mid)
        };
        (
            HistSliceMut {
                gh: g0,
                count: c0,
                weight: w0,
            },
            HistSliceMut {
                gh: g1,
                count: c1,
                weight: w1,
            },
        )
    }

    /// The bins `range` (of counts and weights too, where kept).
    fn bins(&mut self, range: Range<usize>) -> HistSliceMut<'_> {
        HistSliceMut {
            gh: &mut self.gh[range.clone()],
            count: if self.count.is_empty() {
                &mut []
            } else {
                &mut self.count[range.clone()]
            },
            weight: if self.weight.is_empty() {
                &mut []
            } else {
                &mut self.weight[range]
            },
        }
    }

    /// Stores `sums` (one record per bin, all bins) from a feature-major or
    /// sparse-row kernel.
    fn store<A: BinSums>(&mut self, sums: &[A]) {
        for (i, s) in sums.iter().enumerate() {
            s.store(self, i);
        }
    }

    /// Stores `s` in bin `i`.
    fn set(&mut self, i: usize, s: &BinStats) {
        self.gh[i] = [s.g, s.h];
        if !self.count.is_empty() {
            self.count[i] = s.n as u32;
        }
        if !self.weight.is_empty() {
            self.weight[i] = s.w;
        }
    }

    fn as_slice(&self) -> HistSlice<'_> {
        HistSlice {
            gh: self.gh,
            count: self.count,
            weight: self.weight,
        }
    }
}

/// A per-bin record the feature-major kernel sums rows into: one add per
/// row, the same IEEE additions in the same order whatever the record.
trait BinSums: Copy + Default + Send {
    /// One row's contribution.
    fn row<const WEIGHTED: bool>(gh: [f64; 2], w: &[f64], k: usize) -> Self;
    fn add(&mut self, o: &Self);
    /// Stores the sums of bin `i` in `hist`.
    fn store(&self, hist: &mut HistSliceMut, i: usize);
}

impl BinSums for BinStats {
    #[inline(always)]
    fn row<const WEIGHTED: bool>(gh: [f64; 2], w: &[f64], k: usize) -> Self {
        BinStats::row::<WEIGHTED>(gh, w, k)
    }
    #[inline(always)]
    fn add(&mut self, o: &Self) {
        BinStats::add(self, o)
    }
    fn store(&self, hist: &mut HistSliceMut, i: usize) {
        hist.set(i, self)
    }
}

/// (Σg, Σh) of a bin when the histogram keeps neither counts nor weights
/// (unit hessians, or counts bounded from hessians): half the bytes of a
/// `BinStats`, so four features' bins take 16 KiB of L1 instead of 32.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(16))]
struct GhSums([f64; 2]);

impl BinSums for GhSums {
    #[inline(always)]
    fn row<const WEIGHTED: bool>(gh: [f64; 2], _w: &[f64], _k: usize) -> Self {
        debug_assert!(!WEIGHTED, "weighted histograms keep Σw");
        GhSums(gh)
    }
    #[inline(always)]
    fn add(&mut self, o: &Self) {
        self.0[0] += o.0[0];
        self.0[1] += o.0[1];
    }
    fn store(&self, hist: &mut HistSliceMut, i: usize) {
        debug_assert!(hist.count.is_empty() && hist.weight.is_empty());
        hist.gh[i] = self.0;
    }
}

/// Per-row (weighted) gradient and hessian, plus optional row weights.
pub struct Gradients<'a> {
    pub gh: &'a [[f64; 2]],
    /// `None` when every weight is 1: then Σw = n and the kernel skips it.
    pub weights: Option<&'a [f64]>,
    /// Every hessian in `gh` is exactly 1 (unweighted squared error): then
    /// Σh counts the rows and histograms keep no separate counts.
    pub unit_hessian: bool,
    /// Keep no row counts even though Σh is not the count: the split search
    /// bounds counts from hessians instead (`RowCounts::Bounded`).
    pub uncounted: bool,
}

impl<'a> Gradients<'a> {
    /// Gradients with hessians of any value.
    pub fn new(gh: &'a [[f64; 2]], weights: Option<&'a [f64]>) -> Self {
        Gradients {
            gh,
            weights,
            unit_hessian: false,
            uncounted: false,
        }
    }

    /// Whether histograms keep row counts (they do unless Σh is the count
    /// or the search bounds counts instead).
    fn counted(&self) -> bool {
        !(self.uncounted || self.unit_hessian && self.weights.is_none())
    }
}
