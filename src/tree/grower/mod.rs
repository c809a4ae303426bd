//! Grows one tree on the current gradients: depth-wise (every splittable leaf,
//! level by level, to `max_depth`) or best-first (the leaf with the largest
//! gain, until `max_leaves`). Rows live in one index buffer; each open leaf
//! owns a contiguous range of it.
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rayon::prelude::*;

use super::partition::{SplitRoute, partition, partition_by_bins};
use super::tree::{Tree, category_bitset};
use crate::data::BinnedDataset;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::alloc::{filled_vec, reserve_one, with_capacity};
use crate::cancel::Cancel;
use crate::constraints::interaction::with_feature;
use crate::constraints::monotone::clip_leaves;
use crate::constraints::{Bounds, NO_CONSTRAINTS, TreeConstraints};
use crate::error::{Result, RgbmError};
use crate::histogram::{
    BinStats, BuildScratch, Gradients, Histogram, HistogramPool, build, subset_builds_alike,
    subtract_features_into, subtract_into,
};
use crate::reduce::{self, Local, Reduce};
use crate::rng::RowDraws;
use crate::selection::{Candidates, Selector};
use crate::split::{Curvature, NodeMonotone, RowCounts, SplitCandidate, SplitRule, best_split};
use column_sample::TreeColumns;
use constant::ConstantFeatures;

/// Which splits a tree may use (RGBM's candidate set J).
pub enum NodeSelection<'s> {
    /// One set for every node of the tree (`selection_scope="tree"`).
    Tree(&'s Candidates),
    /// A fresh draw for every node (`selection_scope="node"`), in split order.
    Node(&'s Selector, &'s mut ChaCha8Rng),
}

#[derive(Clone, Copy, Debug)]
pub struct GrowerConfig {
    pub max_depth: Option<usize>,
    /// `Some` switches to best-first growth.
    pub max_leaves: Option<usize>,
    pub rule: SplitRule,
    /// Keep per-bin row counts in every histogram. Otherwise unweighted
    /// Newton fits drop them where hessians bound the counts well enough
    /// (`RowCounts::Bounded`): the trees are the same, the histogram kernel
    /// does one read-modify-write per row and feature instead of two.
    pub exact_counts: bool,
    /// Trees on fewer rows keep exact counts ([`MIN_BOUNDED_ROWS`] in fits).
    pub min_bounded_rows: usize,
}

/// Counts are bounded from hessians only when every hessian is within this
/// factor of the largest (for logistic loss: probabilities within about
/// [0.001, 0.999]); wider ranges leave too many candidates undecided.
const MAX_HESSIAN_SPREAD: f64 = 1e3;

/// Fits grow trees on fewer rows with exact counts: counting costs little
/// there, and with few rows per bin the hessian bounds often cannot decide
/// a row minimum, so features would be recounted from the rows at every
/// node (digits, 1,347 rows: a third of the fit).
pub const MIN_BOUNDED_ROWS: usize = 50_000;

/// Memory for the histograms kept by open leaves (for the subtraction
/// trick). Leaves beyond it keep none, and their children are built
/// directly: memory stays bounded however many leaves a tree has.
const KEPT_HISTOGRAMS_BYTES: usize = 256 << 20;

/// How many open leaves may keep a histogram: `KEPT_HISTOGRAMS_BYTES`
/// worth, and on data kept as sparse rows no more than the rows' own size
/// (its histograms can be far larger than its entries: a million bins for
/// a few million entries, and a child is built from its entries as fast as
/// derived from its parent's bins). At least two.
fn max_kept(data: &BinnedDataset) -> usize {
    let budget = match (&data.codes, &data.sparse_rows) {
        (None, Some(rows)) => KEPT_HISTOGRAMS_BYTES.min(rows.bytes()),
        _ => KEPT_HISTOGRAMS_BYTES,
    };
    (budget / Histogram::bytes(data.total_bins()).max(1)).max(2)
}

struct OpenLeaf {
    start: usize,
    end: usize,
    depth: usize,
    total: BinStats,
    hist: Option<Histogram>,
    best: Option<SplitCandidate>,
    /// The sums of the missing bin of `best`'s feature (read when the
    /// histogram may be gone).
    best_missing: BinStats,
    /// (internal node, is the left child) that points at this leaf.
    parent: Option<(usize, bool)>,
    /// Creation order: breaks ties deterministically.
    order: usize,
    /// Node scope only: this leaf's own candidate set.
    cands: Option<Candidates>,
    /// Monotone constraints: the interval the leaf's value must stay in.
    bounds: Bounds,
    /// Interaction constraints: the features split on along the path to
    /// this leaf, sorted (empty without interaction constraints).
    used: Vec<u32>,
    /// Features found constant on this leaf's rows (or an ancestor's).
    constant: ConstantFeatures,
    /// `path_smooth`: the value of this leaf's parent (the root's own
    /// unsmoothed value at the root), which its value is pulled towards.
    smooth_to: f64,
    /// This leaf's value as its parent's search judged it: what its
    /// children are pulled towards.
    output: f64,
}

/// A grown tree (leaf values unscaled) and the row range of each leaf in the
/// row buffer passed to `grow`.
pub struct GrownTree {
    pub tree: Tree,
    pub leaf_ranges: Vec<(usize, usize)>,
    /// With monotone constraints, each leaf's interval (its value is within
    /// it; values set later must be clipped to it); empty otherwise.
    pub leaf_bounds: Vec<Bounds>,
    /// With monotone constraints, each internal node's interval while it
    /// was an open leaf (what a prefix's leaf there is clipped to).
    pub node_bounds: Vec<Bounds>,
}

/// Reusable buffers for growing many trees on one dataset.
pub struct TreeGrower<'a> {
    data: &'a BinnedDataset,
    cfg: GrowerConfig,
    pool: HistogramPool,
    scratch: Vec<u32>,
    build_scratch: BuildScratch,
    /// What the current tree's histograms say about row counts.
    counts: RowCounts,
    /// Set from another thread (Ctrl-C) to stop growing the current tree at
    /// the next node, so a long round does not delay an interrupt.
    cancel: Cancel,
    /// Open leaves holding a histogram, and how many may.
    kept: usize,
    max_kept: usize,
    constraints: &'a TreeConstraints,
    /// Combines this shard's sums with the other shards' ([`Local`]: none).
    reduce: &'a dyn Reduce,
    /// `extra_trees`: the current tree's draws of one threshold per node
    /// and feature.
    extra: Option<RowDraws>,
    /// `colsample_bylevel` / `colsample_bynode`: the current tree's draws.
    columns: Option<TreeColumns>,
}

/// (Σg, Σh, Σw, n) over `rows`: fixed chunks summed in order, so the result
/// does not depend on the thread count.
pub fn sum_rows(rows: &[u32], grads: &Gradients) -> BinStats {
    const CHUNK: usize = 32 * 1024;
    let part = |rows: &[u32]| {
        let mut s = BinStats::default();
        for &r in rows {
            let [g, h] = grads.gh[r as usize];
            s.g += g;
            s.h += h;
            s.w += grads.weights.map_or(1.0, |w| w[r as usize]);
            s.n += 1.0;
        }
        s
    };
    if rows.len() <= CHUNK {
        return part(rows);
    }
    let parts: Vec<BinStats> = rows.par_chunks(CHUNK).map(part).collect();
    parts.iter().fold(BinStats::default(), |mut acc, p| {
        acc.add(p);
        acc
    })
}

impl<'a> TreeGrower<'a> {
    /// Fails with `OutOfMemory` if its O(n) scratch buffers cannot be allocated.
    pub fn new(data: &'a BinnedDataset, cfg: GrowerConfig) -> Result<Self> {
        Self::constrained(data, cfg, &NO_CONSTRAINTS)
    }

    /// A grower whose trees obey `constraints` (monotone directions and
    /// bounds, interaction sets).
    pub fn constrained(
        data: &'a BinnedDataset,
        cfg: GrowerConfig,
        constraints: &'a TreeConstraints,
    ) -> Result<Self> {
        Ok(TreeGrower {
            data,
            cfg,
            pool: HistogramPool::new(data.total_bins()),
            scratch: filled_vec(data.n_rows, 0, "the partition scratch buffer")?,
            build_scratch: BuildScratch::new(data.n_rows)?,
            counts: RowCounts::Exact,
            cancel: Cancel::never(),
            kept: 0,
            max_kept: max_kept(data),
            constraints,
            reduce: &Local,
            extra: None,
            columns: None,
        })
    }

    /// Grows trees on this shard's rows, combining sums through `reduce`.
    /// Counts are then always exact: bounded counts would need the
    /// partition's counts of every shard.
    pub fn set_reduce(&mut self, reduce: &'a dyn Reduce) {
        self.reduce = reduce;
        if !reduce.is_local() {
            self.cfg.exact_counts = true;
        }
    }

    /// A flag that, once set, makes `grow` stop splitting (the tree it
    /// returns is then incomplete; the caller is expected to abandon the fit).
    pub fn set_cancel(&mut self, cancel: Cancel) {
        self.cancel = cancel;
    }

    /// `extra_trees`: the next trees search one threshold per node and
    /// numeric feature, drawn from `draws` (None: every threshold).
    pub fn set_extra_trees(&mut self, draws: Option<RowDraws>) {
        self.extra = draws;
    }

    /// `colsample_bylevel` / `colsample_bynode`: the next trees' nodes
    /// search the features `columns` draws from the tree's candidates
    /// (None: all of them).
    pub fn set_columns(&mut self, columns: Option<TreeColumns>) {
        self.columns = columns;
    }

    /// Changes the leaf limit (and so best-first growth) for the next trees.
    pub fn set_max_leaves(&mut self, max_leaves: Option<usize>) {
        self.cfg.max_leaves = max_leaves;
    }

    fn can_split(&self, depth: usize, total: &BinStats) -> bool {
        self.cfg.max_depth.is_none_or(|d| depth < d)
            && total.n >= 2.0 * self.cfg.rule.min_samples_leaf
    }

    /// This shard's histogram of `features` over the rows in `rows`; `all`
    /// = these are all rows in row order.
    fn histogram(
        &mut self,
        rows: &[u32],
        all: bool,
        grads: &Gradients,
        features: &[usize],
        total: &BinStats,
    ) -> Result<Histogram> {
        // Skipped default bins are filled in from the rows' total: on a
        // shard, its own rows' (`total` is every shard's).
        let local;
        let total = if self.reduce.is_local() {
            total
        } else {
            local = sum_rows(rows, grads);
            &local
        };
        let mut hist = self.pool.take()?;
        build(
            self.data,
            features,
            (!all).then_some(rows),
            &Gradients {
                uncounted: self.counts != RowCounts::Exact,
                ..*grads
            },
            &mut hist,
            &mut self.build_scratch,
            total,
        )?;
        Ok(hist)
    }

    /// Best split of `leaf` (rows `rows`) from its histogram `hist`; the
    /// candidates found constant join the leaf's constant features.
    fn find_best(
        &self,
        leaf: &mut OpenLeaf,
        hist: &Histogram,
        cands: &Candidates,
        rows: &[u32],
    ) -> Result<()> {
        let mono = self.constraints.has_monotone().then(|| NodeMonotone {
            directions: &self.constraints.monotone,
            bounds: leaf.bounds,
        });
        let mut constant = Vec::new();
        let sampled;
        let cands = match &self.columns {
            Some(columns) => {
                let keep = columns.node_features(leaf.depth, leaf.order);
                sampled = cands.filtered(|j| keep.binary_search(&j).is_ok());
                &sampled
            }
            None => cands,
        };
        let drawn;
        let cands = match &self.extra {
            Some(draws) => {
                drawn = one_threshold_each(self.data, cands, draws, leaf.order);
                &drawn
            }
            None => cands,
        };
        leaf.best = best_split(
            self.data,
            hist,
            &leaf.total,
            cands,
            &self.cfg.rule.below(leaf.output),
            self.counts,
            rows,
            mono,
            &mut constant,
        );
        if let Some(b) = &leaf.best {
            let fb = &self.data.mapper.features[b.feature];
            leaf.best_missing = hist.stats(self.data.bin_offsets[b.feature] + fb.missing_bin());
        }
        leaf.constant.extend(&constant, self.data.n_features())
    }

    /// The features a child of `m` rows builds bins for, when it searches
    /// `searched` (its candidates `all` less its constant features, or None
    /// when none is constant): `searched` where that leaves the searched
    /// bins as `all`'s build would, and they are few enough that the
    /// feature-major kernel on them beats the kernels over every feature.
    fn build_features<'c>(
        &self,
        all: &'c Candidates,
        searched: Option<&'c Candidates>,
        m: usize,
    ) -> &'c [usize] {
        match searched {
            Some(s)
                if 4 * self.bins_of(&s.features) <= self.bins_of(&all.features)
                    && subset_builds_alike(self.data, m) =>
            {
                #[cfg(test)]
                tests::NARROWED_BUILDS.with(|n| n.set(n.get() + 1));
                &s.features
            }
            _ => &all.features,
        }
    }

    /// The histogram bins of `features`.
    fn bins_of(&self, features: &[usize]) -> usize {
        let o = &self.data.bin_offsets;
        features.iter().map(|&j| o[j + 1] - o[j]).sum()
    }

    /// The candidates a node whose path split on `used` may search: `cands`
    /// less the features its interaction constraints exclude.
    fn node_candidates<'c>(&self, cands: &'c Candidates, used: &[u32]) -> Cow<'c, Candidates> {
        match self
            .constraints
            .interactions
            .as_ref()
            .and_then(|c| c.allowed(used))
        {
            None => Cow::Borrowed(cands),
            Some(allowed) => Cow::Owned(cands.restricted_to(&allowed)),
        }
    }

    /// Lets `leaf` keep `hist` if it will be split and the budget allows;
    /// returns it to the pool otherwise.
    fn keep(&mut self, leaf: &mut OpenLeaf, hist: Histogram) {
        if leaf.best.is_some() && self.kept < self.max_kept {
            leaf.hist = Some(hist);
            self.kept += 1;
        } else {
            self.pool.give(hist);
        }
    }

    /// The histogram `leaf` kept, if any (its slot in the budget is freed).
    fn take_kept(&mut self, leaf: &mut OpenLeaf) -> Option<Histogram> {
        let hist = leaf.hist.take();
        if hist.is_some() {
            self.kept -= 1;
        }
        hist
    }

    /// Bounded counts when the fit allows them, they save work, and the
    /// hessians of `rows` lie within `MAX_HESSIAN_SPREAD` of each other;
    /// exact counts otherwise.
    fn row_counts(&self, rows: &[u32], grads: &Gradients) -> RowCounts {
        let rule = &self.cfg.rule;
        let newton = rule.gain == Curvature::Hessian && rule.leaf == Curvature::Hessian;
        // The dense kernels save work without counts: the row-major one
        // (every feature a candidate) a separate count update, the
        // feature-major one (the root, feature subsets) half of each
        // 32-byte record. The sparse-row kernel adds counts at no extra cost.
        let dense = self.data.sparse_rows.is_none();
        // `path_smooth` weighs values by their rows' count.
        if self.cfg.exact_counts
            || rule.reg.path_smooth > 0.0
            || rows.len() < self.cfg.min_bounded_rows
            || !dense
            || !newton
            || grads.weights.is_some()
            || grads.unit_hessian
        {
            return RowCounts::Exact;
        }
        // min / max that keep a NaN (f64::min and max would drop it).
        let lower = |a: f64, b: f64| if b < a || b.is_nan() { b } else { a };
        let upper = |a: f64, b: f64| if b > a || b.is_nan() { b } else { a };
        let range = |rows: &[u32]| {
            rows.iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &r| {
                    let h = grads.gh[r as usize][1];
                    (lower(lo, h), upper(hi, h))
                })
        };
        let (h_min, h_max) = rows.par_chunks(32 * 1024).map(range).reduce(
            || (f64::INFINITY, f64::NEG_INFINITY),
            |a, b| (lower(a.0, b.0), upper(a.1, b.1)),
        );
        // A sum of at most n hessians, each at most h_max, is off by at most
        // n·(ε/2)·n·h_max (sequential summation), a difference of such sums
        // by twice that. 8× margin on top.
        let n = rows.len() as f64;
        let slack = 4.0 * f64::EPSILON * n * n * h_max;
        // NaN hessians fail every comparison and keep exact counts.
        if h_min > 0.0
            && h_max.is_finite()
            && h_max <= MAX_HESSIAN_SPREAD * h_min
            && slack < 0.25 * h_min
        {
            RowCounts::Bounded {
                h_min,
                h_max,
                slack,
            }
        } else {
            RowCounts::Exact
        }
    }

    /// The candidate set of a new node: the tree's, or a fresh draw.
    fn node_cands(selection: &mut NodeSelection) -> Option<Candidates> {
        match selection {
            NodeSelection::Tree(_) => None,
            NodeSelection::Node(selector, rng) => Some(selector.draw(rng)),
        }
    }

    /// Grows a tree on the rows in `rows` (`all_rows` = they are 0..n, in
    /// increasing order unless a previous tree reordered them),
    /// with `grads` indexed by row, searching only the splits `selection`
    /// allows. Reorders `rows` so each leaf's rows are contiguous. Fails
    /// with `OutOfMemory` (a histogram could not be allocated) or when the
    /// shards' sums cannot be combined.
    ///
    /// Leaves are split in batches: best-first one at a time, depth-wise a
    /// whole level. A batch partitions its leaves, builds the children's
    /// histograms, combines them over the shards in one exchange, then
    /// searches them; on one machine this is the order the splits would
    /// have been made one by one.
    pub fn grow(
        &mut self,
        grads: &Gradients,
        rows: &mut [u32],
        all_rows: bool,
        mut selection: NodeSelection,
    ) -> Result<GrownTree> {
        if let Some(columns) = &mut self.columns {
            match &selection {
                NodeSelection::Tree(c) => columns.start_tree(&c.features),
                NodeSelection::Node(..) => {
                    return Err(RgbmError::param(
                        "colsample_bynode",
                        "column sampling needs one candidate set per tree (selection_scope='tree')",
                    ));
                }
            }
        }
        let mut total = sum_rows(rows, grads);
        reduce::sum_stats(self.reduce, std::slice::from_mut(&mut total))?;
        self.counts = self.row_counts(rows, grads);
        let root_output = self.cfg.rule.at_root(&total).reg.parent_output;
        let mut root = OpenLeaf {
            start: 0,
            end: rows.len(),
            depth: 0,
            total,
            hist: None,
            best: None,
            best_missing: BinStats::default(),
            parent: None,
            order: 0,
            cands: Self::node_cands(&mut selection),
            bounds: Bounds::FREE,
            used: Vec::new(),
            constant: ConstantFeatures::default(),
            smooth_to: root_output,
            output: root_output,
        };
        if self.can_split(0, &total) {
            let cands = root.cands.take();
            let c = cands.as_ref().unwrap_or_else(|| tree_cands(&selection));
            let mut hist = self.histogram(rows, all_rows, grads, &c.features, &total)?;
            let offsets = &self.data.bin_offsets;
            reduce::sum_histograms(self.reduce, &mut [(&mut hist, &c.features)], offsets)?;
            self.find_best(&mut root, &hist, c, rows)?;
            root.cands = cands;
            self.keep(&mut root, hist);
        }
        let mut leaves = vec![root];
        // Open leaves that have a split, by priority (see `priority`).
        let mut queue = BinaryHeap::new();
        if leaves[0].best.is_some() {
            queue.push(self.priority(&leaves[0], 0));
        }
        let mut created = 1;
        let mut tree = Tree::default();
        let mut node_bounds = Vec::new();
        let mut batch = Vec::new();
        let grown = loop {
            if self.cfg.max_leaves.is_some_and(|m| leaves.len() >= m) || self.cancel.is_set() {
                break Ok(());
            }
            // Best-first: the best leaf; depth-wise: every leaf of the
            // shallowest level (popped in creation order).
            batch.clear();
            while let Some(&(_, _, i)) = queue.peek() {
                let same_level = |&first: &usize| leaves[first].depth == leaves[i].depth;
                if batch
                    .first()
                    .is_some_and(|f| self.cfg.max_leaves.is_some() || !same_level(f))
                {
                    break;
                }
                queue.pop();
                batch.push(i);
            }
            if batch.is_empty() {
                break Ok(());
            }
            // The split that reaches the leaf limit makes two final leaves:
            // their histograms would never be read.
            let last = self.cfg.max_leaves.is_some_and(|m| leaves.len() + 1 >= m);
            if let Err(e) = reserve(&mut leaves, &mut queue, batch.len()) {
                break Err(e);
            }
            let pairs = self.split_batch(
                &batch,
                &mut leaves,
                &mut tree,
                &mut node_bounds,
                rows,
                grads,
                &mut created,
                &mut selection,
                last,
            );
            let pairs = match pairs {
                Ok(pairs) => pairs,
                Err(e) => break Err(e),
            };
            for (&i, (left, right)) in batch.iter().zip(pairs) {
                let j = leaves.len();
                for (k, child) in [(i, &left), (j, &right)] {
                    if child.best.is_some() {
                        queue.push(self.priority(child, k));
                    }
                }
                leaves[i] = left;
                leaves.push(right);
            }
        };
        for leaf in &mut leaves {
            if let Some(h) = self.take_kept(leaf) {
                self.pool.give(h);
            }
        }
        grown?;
        // Leaf values from sums over the leaf's own rows: histogram sums of a
        // larger child come from subtraction and carry ~1e-16 relative residue,
        // which turns −G/H into garbage once a leaf's true G and H are ~0.
        let rows_ref: &[u32] = rows;
        let mut exact: Vec<BinStats> = with_capacity(leaves.len(), "the leaf sums")?;
        exact.par_extend(
            leaves
                .par_iter()
                .map(|l| sum_rows(&rows_ref[l.start..l.end], grads)),
        );
        reduce::sum_stats(self.reduce, &mut exact)?;
        let mut leaf_ranges = with_capacity(leaves.len(), "the leaf ranges")?;
        let mut leaf_bounds = Vec::new();
        tree.leaf_value = with_capacity(leaves.len(), "the leaf values")?;
        tree.leaf_count = with_capacity(leaves.len(), "the leaf values")?;
        for (k, leaf) in leaves.iter().enumerate() {
            if let Some((p, is_left)) = leaf.parent {
                let slot = if is_left {
                    &mut tree.left[p]
                } else {
                    &mut tree.right[p]
                };
                *slot = !(k as i32);
            }
            let rule = self.cfg.rule.below(leaf.smooth_to);
            tree.leaf_value.push(rule.leaf_value(&exact[k]));
            tree.leaf_count.push(exact[k].n);
            leaf_ranges.push((leaf.start, leaf.end));
        }
        if self.constraints.has_monotone() {
            leaf_bounds = with_capacity(leaves.len(), "the leaf bounds")?;
            leaf_bounds.extend(leaves.iter().map(|l| l.bounds));
            clip_leaves(&mut tree.leaf_value, &leaf_bounds);
        }
        Ok(GrownTree {
            tree,
            leaf_ranges,
            leaf_bounds,
            node_bounds,
        })
    }

    /// Queue entry of the open leaf `leaves[index]`; the largest is split
    /// next. Best-first: the largest gain, the earliest leaf on ties.
    /// Depth-wise: the shallowest leaf, then the earliest.
    fn priority(&self, leaf: &OpenLeaf, index: usize) -> (u64, Reverse<usize>, usize) {
        let key = match (self.cfg.max_leaves, &leaf.best) {
            (Some(_), Some(best)) => ordered_bits(best.gain),
            _ => u64::MAX - leaf.depth as u64,
        };
        (key, Reverse(leaf.order), index)
    }

    /// With bounded counts, the split's row counts (and, when the node has no
    /// missing rows, its missing-value direction) come from the partition:
    /// they are set as the exact search would have set them.
    fn fill_in_counts(&self, cand: &mut SplitCandidate, leaf: &OpenLeaf, n_left: usize) {
        let n_left = n_left as f64;
        let n_right = leaf.total.n - n_left;
        if cand.default_by_rows {
            cand.default_by_rows = false;
            // The exact search: with no missing rows seen, missing values go
            // to the heavier side (unweighted: the one with more rows), and
            // the missing bin's sums (rounding residue only) go with them.
            if n_left >= n_right {
                cand.default_left = true;
                cand.left.add(&leaf.best_missing);
                cand.right = leaf.total.sub(&cand.left);
            }
        }
        (cand.left.n, cand.left.w) = (n_left, n_left);
        (cand.right.n, cand.right.w) = (n_right, n_right);
    }
}

/// Room for the children of `batch` leaves just taken from the queue.
fn reserve<T, Q: Ord>(leaves: &mut Vec<T>, queue: &mut BinaryHeap<Q>, batch: usize) -> Result<()> {
    let oom = |what: &str, len: usize| {
        RgbmError::OutOfMemory(format!("cannot grow {what} past {len} leaves"))
    };
    leaves
        .try_reserve(batch)
        .map_err(|_| oom("the open leaves", leaves.len()))?;
    queue
        .try_reserve(2 * batch)
        .map_err(|_| oom("the leaf queue", queue.len()))
}

/// `x`'s bits, mapped so that unsigned order is numeric order (−0 = +0).
fn ordered_bits(x: f64) -> u64 {
    let bits = (x + 0.0).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// `cands` with one threshold of each numeric feature left, drawn
/// uniformly from `draws` by (node, feature) alone, so the draw depends
/// neither on the thread count nor on which other features are searched.
/// A threshold the candidates' own masks (selection='random') leave out
/// leaves that feature none.
pub(crate) fn one_threshold_each(
    data: &BinnedDataset,
    cands: &Candidates,
    draws: &RowDraws,
    node: usize,
) -> Candidates {
    let allowed = cands
        .features
        .iter()
        .enumerate()
        .map(|(k, &j)| {
            let n_thresholds = data.mapper.features[j].n_value_bins().saturating_sub(1);
            let mut mask = vec![false; n_thresholds];
            if n_thresholds > 0 {
                let t = random_threshold(draws, node, j, n_thresholds);
                mask[t] = cands.allowed.as_ref().is_none_or(|a| a[k][t]);
            }
            mask
        })
        .collect();
    Candidates {
        features: cands.features.clone(),
        allowed: Some(allowed),
    }
}

/// The threshold (of `n_thresholds`) that node `node` tries on feature `j`.
pub(crate) fn random_threshold(
    draws: &RowDraws,
    node: usize,
    j: usize,
    n_thresholds: usize,
) -> usize {
    draws
        .row(((node as u64) << 32) ^ j as u64)
        .random_range(0..n_thresholds)
}

/// The tree-wide candidate set (tree scope).
fn tree_cands<'a>(selection: &'a NodeSelection) -> &'a Candidates {
    match selection {
        NodeSelection::Tree(c) => c,
        NodeSelection::Node(..) => unreachable!("node scope gives every leaf its own candidates"),
    }
}

mod children;
pub mod column_sample;
mod constant;
mod prefix;
#[cfg(test)]
mod tests;
