//! Prediction over many rows: blocks of rows in parallel, trees in order
//! inside a block (a tree's nodes stay in cache while its rows stream by).
//!
//! Large inputs go through a copy of the forest made for blocks of rows.
//! Trees of at most 64 leaves become leaf masks (`MaskTree`): every node is
//! tested for all rows of a block, one vectorizable loop per node, and the
//! row's leaf is the lowest leaf bit its tests leave set. Larger trees become
//! one flat array of nodes in which leaves point to themselves
//! (`FlatTree`): a step is the same branch-free update for every node, so
//! several rows walk a tree side by side and the only branch per step is "are
//! all of them at a leaf yet". Either way the comparisons decide as those of
//! `Tree::leaf_index`, and tree outputs are added to a row in tree order, so
//! every path gives bit-identical scores.
use rayon::prelude::*;

use super::tree::{Tree, category_code, in_category_set};
use crate::cancel::Cancel;
use crate::data::matrix::{AsMatrix, Element, Matrix};
use crate::error::Result;

const BLOCK: usize = 256;
/// Inputs up to this many rows are predicted on the calling thread without
/// touching rayon, so callers may skip the thread pool (a hop to a pool
/// thread and back costs more than predicting a few rows).
pub const SEQUENTIAL_MAX_ROWS: usize = BLOCK;
/// Rows that walk a tree together.
const LANES: usize = 8;
/// Below this many rows the flat copy costs more than it saves.
const MIN_ROWS_FOR_FLAT: usize = 512;

/// `out[i] += Σ_t tree_t(x_i)` for every row, over the given trees.
pub fn add_tree_outputs<T: Element>(trees: &[Tree], x: &impl AsMatrix<T>, out: &mut [f64]) {
    add_outputs(trees, 1, 0, &x.as_matrix(), out, &Cancel::never());
}

/// Multi-output form: `out` is row-major (n_rows × n_outputs), and `trees[j]`
/// is tree `first + j` of the model, which belongs to output (first + j) mod
/// n_outputs (a round stores one tree per output, in output order). Stops
/// with `Interrupted` (and `out` partly summed) once `cancel` is set; it is
/// polled once per block of rows.
pub fn add_tree_outputs_multi<T: Element>(
    trees: &[Tree],
    n_outputs: usize,
    first: usize,
    x: &impl AsMatrix<T>,
    out: &mut [f64],
    cancel: &Cancel,
) -> Result<()> {
    add_outputs(trees, n_outputs, first, &x.as_matrix(), out, cancel);
    cancel.check()
}

fn add_outputs<T: Element>(
    trees: &[Tree],
    n_outputs: usize,
    first: usize,
    x: &Matrix<T>,
    out: &mut [f64],
    cancel: &Cancel,
) {
    if x.n_rows() < MIN_ROWS_FOR_FLAT || wide_sparse(x) {
        add_row_by_row(trees, n_outputs, first, x, out, cancel);
        return;
    }
    let forest = Forest::new(trees);
    let p = x.n_cols();
    out.par_chunks_mut(BLOCK * n_outputs)
        .enumerate()
        .for_each_init(
            || (Vec::new(), Blocks::default(), Vec::new(), Vec::new()),
            |(buf, blocks, acc32, acc64), (b, chunk)| {
                if cancel.is_set() {
                    return;
                }
                let rows = chunk.len() / n_outputs;
                let block = x.row_block(b * BLOCK, rows, buf);
                forest.prepare(block, p, blocks);
                for (j, tree) in forest.walks.iter().enumerate() {
                    let class = (first + j) % n_outputs;
                    let add = |r: usize, v: f64| chunk[r * n_outputs + class] += v;
                    match tree {
                        Walk::Flat(t) => t.add_block(block, p, add),
                        Walk::Masks32(t) => t.add_block(blocks.view(rows), acc32, add),
                        Walk::Masks64(t) => t.add_block(blocks.view(rows), acc64, add),
                    }
                }
            },
        );
}

/// The trees as their block walks.
struct Forest<'a, T> {
    walks: Vec<Walk<'a, T>>,
    any_masks: bool,
    /// The features that mask trees split by category set, in order: a
    /// block's codes of feature `cat_features[s]` are slot s of `Blocks::codes`.
    cat_features: Vec<usize>,
}

impl<'a, T: Element> Forest<'a, T> {
    fn new(trees: &'a [Tree]) -> Self {
        let mut cat_features: Vec<usize> = trees
            .iter()
            .filter(|t| t.n_leaves() <= u64::BITS as usize)
            .flat_map(|t| {
                (0..t.n_internal())
                    .filter(|&k| t.category_set(k).is_some())
                    .map(|k| t.feature[k] as usize)
            })
            .collect();
        cat_features.sort_unstable();
        cat_features.dedup();
        let mut table_budget = TABLE_BUDGET_BYTES;
        let walks: Vec<Walk<'a, T>> = trees
            .iter()
            .map(|t| {
                if let Some(m) = MaskTree::new(t, &cat_features, &mut table_budget) {
                    Walk::Masks32(m)
                } else if let Some(m) = MaskTree::new(t, &cat_features, &mut table_budget) {
                    Walk::Masks64(m)
                } else {
                    Walk::Flat(FlatTree::new(t))
                }
            })
            .collect();
        Forest {
            any_masks: walks.iter().any(|t| !matches!(t, Walk::Flat(_))),
            walks,
            cat_features,
        }
    }

    /// What the mask walks read of the row-major `block`: its values by
    /// feature and the category codes of `cat_features`, found once for all
    /// trees.
    fn prepare(&self, block: &[T], p: usize, blocks: &mut Blocks<T>) {
        blocks.cols.clear();
        blocks.codes.clear();
        if !self.any_masks {
            return;
        }
        for j in 0..p {
            blocks.cols.extend(block.chunks_exact(p).map(|row| row[j]));
        }
        let rows = block.len() / p;
        for &j in &self.cat_features {
            let col = &blocks.cols[j * rows..(j + 1) * rows];
            blocks
                .codes
                .extend(col.iter().map(|v| category_code(v.to_f64())));
        }
    }
}

/// A block as the mask walks read it (buffers reused from block to block).
struct Blocks<T> {
    /// The rows by feature (feature j at j·rows).
    cols: Vec<T>,
    /// Category codes by slot of `Forest::cat_features` (slot s at s·rows).
    codes: Vec<u32>,
}

impl<T> Default for Blocks<T> {
    fn default() -> Self {
        Blocks {
            cols: Vec::new(),
            codes: Vec::new(),
        }
    }
}

impl<T> Blocks<T> {
    fn view(&self, rows: usize) -> BlockView<'_, T> {
        BlockView {
            cols: &self.cols,
            codes: &self.codes,
            rows,
        }
    }
}

/// What a mask walk reads of a block (see `Blocks`).
#[derive(Clone, Copy)]
struct BlockView<'b, T> {
    cols: &'b [T],
    codes: &'b [u32],
    rows: usize,
}

/// Trees whose leaves are gathered tree by tree before being written out
/// row by row (a 256-row block of 64 trees is 64 KiB).
const LEAF_TREES: usize = 64;

/// The leaf each row reaches in each tree: `out` is row-major (n_rows ×
/// trees.len()), entry (i, t) the index of tree t's leaf (into its
/// `leaf_value`) for row i. Blocks of rows in parallel (up to
/// `SEQUENTIAL_MAX_ROWS` rows on the calling thread); each block is written
/// out dense once and walked node by node with `Tree::leaf_index`, the
/// decisions every prediction path makes. Stops with `Interrupted` once
/// `cancel` is set (polled per block).
pub fn leaf_indices<T: Element>(
    trees: &[Tree],
    x: &impl AsMatrix<T>,
    out: &mut [u32],
    cancel: &Cancel,
) -> Result<()> {
    let x = &x.as_matrix();
    let (n_trees, p) = (trees.len(), x.n_cols());
    if n_trees == 0 {
        return cancel.check();
    }
    let wide = wide_sparse(x);
    if x.n_rows() >= MIN_ROWS_FOR_FLAT && !wide {
        // The walks of prediction, each tree's leaves gathered for a group of
        // trees and then written to the rows' runs of `out`.
        let forest = Forest::new(trees);
        out.par_chunks_mut(BLOCK * n_trees)
            .enumerate()
            .for_each_init(
                || {
                    (
                        Vec::new(),
                        Blocks::default(),
                        Vec::new(),
                        Vec::new(),
                        Vec::new(),
                    )
                },
                |(buf, blocks, acc32, acc64, gathered), (b, chunk)| {
                    if cancel.is_set() {
                        return;
                    }
                    let rows = chunk.len() / n_trees;
                    let block = x.row_block(b * BLOCK, rows, buf);
                    forest.prepare(block, p, blocks);
                    for (g, group) in forest.walks.chunks(LEAF_TREES).enumerate() {
                        gathered.clear();
                        gathered.resize(group.len() * rows, 0u32);
                        for (tree, col) in group.iter().zip(gathered.chunks_exact_mut(rows)) {
                            let set = |r: usize, l: u32| col[r] = l;
                            match tree {
                                Walk::Flat(t) => t.leaf_block(block, p, set),
                                Walk::Masks32(t) => t.leaf_block(blocks.view(rows), acc32, set),
                                Walk::Masks64(t) => t.leaf_block(blocks.view(rows), acc64, set),
                            }
                        }
                        let first = g * LEAF_TREES;
                        for (r, row) in chunk.chunks_exact_mut(n_trees).enumerate() {
                            let run = &mut row[first..first + group.len()];
                            for (t, o) in run.iter_mut().enumerate() {
                                *o = gathered[t * rows + r];
                            }
                        }
                    }
                },
            );
        return cancel.check();
    }
    let block = |buf: &mut Vec<T>, (b, chunk): (usize, &mut [u32])| {
        if cancel.is_set() {
            return;
        }
        let rows = chunk.len() / n_trees;
        if wide {
            for (t, tree) in trees.iter().enumerate() {
                for r in 0..rows {
                    let row = b * BLOCK + r;
                    chunk[r * n_trees + t] = tree.leaf_index(|j| x.get(row, j)) as u32;
                }
            }
            return;
        }
        let block = x.row_block(b * BLOCK, rows, buf);
        for (t, tree) in trees.iter().enumerate() {
            for (r, row) in block.chunks_exact(p).enumerate() {
                // Leaf indices are < 2^31: child references are i32.
                chunk[r * n_trees + t] = tree.leaf_index(|j| row[j].to_f64()) as u32;
            }
        }
    };
    if x.n_rows() <= SEQUENTIAL_MAX_ROWS {
        let mut buf = Vec::new();
        out.chunks_mut(BLOCK * n_trees)
            .enumerate()
            .for_each(|c| block(&mut buf, c));
    } else {
        out.par_chunks_mut(BLOCK * n_trees)
            .enumerate()
            .for_each_init(Vec::new, block);
    }
    cancel.check()
}

enum Walk<'a, T> {
    Flat(FlatTree<'a, T>),
    Masks32(MaskTree<T, u32>),
    Masks64(MaskTree<T, u64>),
}

/// A set of leaves as bits: u32 for trees of up to 32 leaves (twice the
/// rows per vector), u64 up to 64 (depth-wise trees of depth 6).
trait LeafMask:
    Copy
    + Send
    + Sync
    + std::ops::BitAnd<Output = Self>
    + std::ops::BitOr<Output = Self>
    + std::ops::Not<Output = Self>
{
    const BITS: usize;
    const ALL: Self;
    const NONE: Self;
    /// `n` bits from bit `first` (n + first ≤ BITS, n < BITS).
    fn run(first: u32, n: u32) -> Self;
    fn lowest(self) -> usize;
    /// All bits if `b`, else none.
    fn all_if(b: bool) -> Self;
    /// `clear_by_table` with AVX2 gathers.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    unsafe fn clear_by_table_avx2(table: &[Self], codes: &[u32], acc: &mut [Self]);
}

macro_rules! leaf_mask {
    ($($t:ty => $avx2:ident),*) => {$(
        impl LeafMask for $t {
            const BITS: usize = <$t>::BITS as usize;
            const ALL: Self = <$t>::MAX;
            const NONE: Self = 0;
            fn run(first: u32, n: u32) -> Self {
                ((1 << n) - 1) << first
            }
            #[inline(always)]
            fn lowest(self) -> usize {
                self.trailing_zeros() as usize
            }
            #[inline(always)]
            fn all_if(b: bool) -> Self {
                <$t>::from(b).wrapping_neg()
            }
            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn clear_by_table_avx2(table: &[Self], codes: &[u32], acc: &mut [Self]) {
                // SAFETY: the caller guarantees AVX2.
                unsafe { $avx2(table, codes, acc) }
            }
        }
    )*};
}
leaf_mask!(u32 => clear_by_table_avx2_u32, u64 => clear_by_table_avx2_u64);

/// A tree of at most `M::BITS` leaves as leaf masks (the QuickScorer idea, Lucchese
/// et al. 2015): leaves are numbered left to right; a row that goes right at
/// a node can reach none of the leaves of its left subtree, so clearing
/// those bits at every node where the row goes right leaves the row's leaf
/// as the lowest bit still set. Every node is tested for every row, with no
/// dependence between the tests, so a block's rows go through a node as
/// one vectorizable loop. The decisions are those of the flat walk (same
/// thresholds, same NaN routing), so the leaf is the same.
struct MaskTree<T, M> {
    nodes: Vec<MaskNode<T, M>>,
    cat_nodes: Vec<CatNode<M>>,
    cat_tables: Vec<CatTable<M>>,
    /// Leaf value by left-to-right position.
    values: Vec<f64>,
    /// Leaf index (into the tree's `leaf_value`) by left-to-right position.
    leaves: Vec<u32>,
}

impl<T: Element, M: LeafMask> MaskTree<T, M> {
    /// `cat_features`: the features of `Forest::cat_features`, which hold
    /// all of this tree's category-set nodes. Code tables (`CatTable`) take
    /// their bytes from `table_budget`.
    fn new(tree: &Tree, cat_features: &[usize], table_budget: &mut usize) -> Option<Self> {
        let m = tree.n_internal();
        if m == 0 || tree.n_leaves() > M::BITS {
            return None;
        }
        // Leaves in left-to-right order, and for each node the bits of its
        // left subtree's leaves (depth < 64 here, so recursion is fine).
        let mut order = Vec::with_capacity(tree.n_leaves());
        let mut left_bits = vec![M::ALL; m];
        fn visit<M: LeafMask>(
            tree: &Tree,
            child: i32,
            order: &mut Vec<usize>,
            left_bits: &mut [M],
        ) -> (u32, u32) {
            if child < 0 {
                let pos = order.len() as u32;
                order.push(!child as usize);
                return (pos, 1);
            }
            let k = child as usize;
            let (first, n_left) = visit(tree, tree.left[k], order, left_bits);
            let (_, n_right) = visit(tree, tree.right[k], order, left_bits);
            left_bits[k] = M::run(first, n_left);
            (first, n_left + n_right)
        }
        visit(tree, 0, &mut order, &mut left_bits);
        let categorical = |k: &usize| tree.category_set(*k).is_some();
        // The category nodes by feature slot, in slot order.
        let mut by_slot = Vec::new();
        for k in (0..m).filter(categorical) {
            let slot = cat_features
                .binary_search(&(tree.feature[k] as usize))
                .ok()?;
            by_slot.push((slot, k));
        }
        by_slot.sort_unstable();
        let (mut cat_nodes, mut cat_tables) = (Vec::new(), Vec::new());
        for group in by_slot.chunk_by(|a, b| a.0 == b.0) {
            let slot = group[0].0;
            let set = |k: usize| tree.category_set(k).unwrap_or_default();
            let codes = group.iter().map(|&(_, k)| set(k).len() * 32).max();
            let entries = codes.unwrap_or(0) + 1;
            let bytes = entries * std::mem::size_of::<M>();
            // A lone set of codes below 32 is a shift, cheaper than a lookup.
            let lone_word = matches!(group, [(_, k)] if set(*k).len() <= 1);
            if !lone_word && entries <= TABLE_MAX_ENTRIES && bytes <= *table_budget {
                *table_budget -= bytes;
                let mut table = vec![M::NONE; entries];
                for &(_, k) in group {
                    let (words, default_left) = (set(k), tree.default_left[k]);
                    for (c, clear) in table.iter_mut().enumerate() {
                        let inside = words.get(c / 32).is_some_and(|w| w >> (c % 32) & 1 == 1);
                        if inside == default_left {
                            *clear = *clear | left_bits[k];
                        }
                    }
                }
                cat_tables.push(CatTable { slot, table });
                continue;
            }
            for &(_, k) in group {
                cat_nodes.push(CatNode::new(
                    slot,
                    set(k),
                    tree.default_left[k],
                    left_bits[k],
                ));
            }
        }
        Some(MaskTree {
            cat_nodes,
            cat_tables,
            nodes: (0..m)
                .filter(|k| !categorical(k))
                .map(|k| {
                    (
                        tree.feature[k] as usize,
                        T::at_most(tree.threshold[k]),
                        tree.default_left[k],
                        left_bits[k],
                    )
                })
                .collect(),
            values: order.iter().map(|&i| tree.leaf_value[i]).collect(),
            leaves: order.iter().map(|&i| i as u32).collect(),
        })
    }

    #[inline]
    fn add_block(&self, block: BlockView<T>, acc: &mut Vec<M>, mut add: impl FnMut(usize, f64)) {
        self.walk_block(block, acc);
        for (r, &a) in acc.iter().enumerate() {
            add(r, self.values[a.lowest()]);
        }
    }

    /// Calls `leaf(r, index)` with the leaf of every row r of the block.
    #[inline]
    fn leaf_block(&self, block: BlockView<T>, acc: &mut Vec<M>, mut leaf: impl FnMut(usize, u32)) {
        self.walk_block(block, acc);
        for (r, &a) in acc.iter().enumerate() {
            leaf(r, self.leaves[a.lowest()]);
        }
    }

    /// Leaves `acc[r]` with the lowest set bit at row r's leaf position.
    #[inline]
    fn walk_block(&self, block: BlockView<T>, acc: &mut Vec<M>) {
        acc.clear();
        acc.resize(block.rows, M::ALL);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { clear_unreachable_avx2(self, block, acc) };
        } else {
            clear_unreachable::<T, M, false>(self, block, acc);
        }
        #[cfg(not(target_arch = "x86_64"))]
        clear_unreachable::<T, M, false>(self, block, acc);
    }
}

/// A category-set node of a `MaskTree`.
struct CatNode<M> {
    /// The feature's slot in the block's codes (`Blocks::codes`).
    slot: usize,
    default_left: bool,
    /// The bits of the left subtree's leaves.
    left: M,
    /// The set's words and then a zero word, which codes beyond the set
    /// (and `NO_CODE`) read.
    words: Vec<u32>,
    /// The same words by 8 (256 codes), the chunks with a code in the set only,
    /// with their positions: table lookups in a register (`set_hits_avx2`).
    chunks: Vec<(u32, [u32; 8])>,
}

impl<M> CatNode<M> {
    fn new(slot: usize, set: &[u32], default_left: bool, left: M) -> Self {
        CatNode {
            slot,
            default_left,
            left,
            words: set.iter().copied().chain([0]).collect(),
            chunks: set
                .chunks(8)
                .enumerate()
                .filter(|(_, c)| c.iter().any(|&w| w != 0))
                .map(|(i, c)| {
                    let mut chunk = [0u32; 8];
                    chunk[..c.len()].copy_from_slice(c);
                    (i as u32, chunk)
                })
                .collect(),
        }
    }
}

/// All category-set nodes of a `MaskTree` on one feature as one table:
/// whether a row goes right at such a node depends on its code alone, and
/// clearing bits commutes, so the bits those nodes clear for a code are one
/// precomputed mask, and the nodes cost one lookup per row instead of a set
/// test each.
struct CatTable<M> {
    /// The feature's slot in the block's codes (`Blocks::codes`).
    slot: usize,
    /// The bits to clear by code, then one entry for every code beyond the
    /// sets (and `NO_CODE`): the bits of the nodes whose default is right.
    table: Vec<M>,
}

/// The most entries of a code table (sets of up to 4,096 codes); the nodes
/// of larger sets are tested one by one.
const TABLE_MAX_ENTRIES: usize = 4096 + 1;
/// The bytes of code tables of one forest. Past this the tables would not
/// stay in cache as the blocks stream by, and sets are tested node by node.
const TABLE_BUDGET_BYTES: usize = 16 << 20;

/// Clears, for every row, the leaves it cannot reach (see `MaskTree`).
/// `GATHER`: the CPU has AVX2, whose gathers look the rows' codes up in
/// sets of several words.
#[inline(always)]
fn clear_unreachable<T: Element, M: LeafMask, const GATHER: bool>(
    tree: &MaskTree<T, M>,
    block: BlockView<T>,
    acc: &mut [M],
) {
    let (cols, rows) = (block.cols, block.rows);
    for &(j, t, default_left, left) in &tree.nodes {
        let col = &cols[j * rows..(j + 1) * rows];
        if default_left {
            // NaN: `v > t` is false, so it stays left.
            for (a, &v) in acc.iter_mut().zip(col) {
                *a = *a & if v > t { !left } else { M::ALL };
            }
        } else {
            for (a, &v) in acc.iter_mut().zip(col) {
                *a = *a & if v <= t { M::ALL } else { !left };
            }
        }
    }
    // Clearing bits commutes, so category nodes may come last.
    for t in &tree.cat_tables {
        let codes = &block.codes[t.slot * rows..(t.slot + 1) * rows];
        #[cfg(target_arch = "x86_64")]
        if GATHER {
            // SAFETY: GATHER is set only when the CPU has AVX2.
            unsafe { M::clear_by_table_avx2(&t.table, codes, acc) };
        } else {
            clear_by_table(&t.table, codes, acc);
        }
        #[cfg(not(target_arch = "x86_64"))]
        clear_by_table(&t.table, codes, acc);
    }
    // A row whose code is in the set leaves the default side; every other
    // row takes it.
    let mut hits = [0u32; BLOCK];
    for node in &tree.cat_nodes {
        let codes = &block.codes[node.slot * rows..(node.slot + 1) * rows];
        let (default_left, left) = (node.default_left, node.left);
        if let [w, 0] = node.words[..] {
            // Codes below 32: a variable shift (0 from 32 on), which
            // vectorizes, unlike a table lookup.
            // The bits cleared are computed, not selected: a select becomes
            // a masked store, which is slow on some CPUs.
            for (a, &c) in acc.iter_mut().zip(codes) {
                let inside = w.checked_shr(c).unwrap_or(0) & 1 == 1;
                *a = *a & !(left & M::all_if(inside == default_left));
            }
        } else {
            // The set's bits first, then the masks: in one loop the lookup
            // becomes a branch on the bit, which mispredicts.
            let hits = &mut hits[..rows];
            #[cfg(target_arch = "x86_64")]
            if GATHER {
                // SAFETY: GATHER is set only when the CPU has AVX2.
                unsafe { set_hits_avx2(node, codes, hits) };
            } else {
                set_hits(&node.words, codes, hits);
            }
            #[cfg(not(target_arch = "x86_64"))]
            set_hits(&node.words, codes, hits);
            for (a, &h) in acc.iter_mut().zip(hits.iter()) {
                *a = *a & !(left & M::all_if((h == 1) == default_left));
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn clear_unreachable_avx2<T: Element, M: LeafMask>(
    tree: &MaskTree<T, M>,
    block: BlockView<T>,
    acc: &mut [M],
) {
    clear_unreachable::<T, M, true>(tree, block, acc)
}

/// `acc[r] &= !table[codes[r]]`, codes past the table reading its last
/// entry (a `CatTable`'s).
#[inline(always)]
fn clear_by_table<M: LeafMask>(table: &[M], codes: &[u32], acc: &mut [M]) {
    let pad = table.len() - 1;
    for (a, &c) in acc.iter_mut().zip(codes) {
        *a = *a & !table[(c as usize).min(pad)];
    }
}

/// `clear_by_table` for 32-bit masks, 8 rows a gather.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn clear_by_table_avx2_u32(table: &[u32], codes: &[u32], acc: &mut [u32]) {
    use std::arch::x86_64::*;
    let n = codes.len().min(acc.len());
    // At most TABLE_MAX_ENTRIES entries: the last index fits an i32.
    let pad = _mm256_set1_epi32((table.len() - 1) as i32);
    let mut r = 0;
    while r + 8 <= n {
        // SAFETY: rows r..r + 8 are within both slices, and every gathered
        // index is at most `pad`, the table's last.
        unsafe {
            let c = _mm256_loadu_si256(codes.as_ptr().add(r).cast());
            let at = _mm256_min_epu32(c, pad);
            let clear = _mm256_i32gather_epi32::<4>(table.as_ptr().cast(), at);
            let a = _mm256_loadu_si256(acc.as_ptr().add(r).cast());
            _mm256_storeu_si256(
                acc.as_mut_ptr().add(r).cast(),
                _mm256_andnot_si256(clear, a),
            );
        }
        r += 8;
    }
    clear_by_table(table, &codes[r..n], &mut acc[r..n]);
}

/// `clear_by_table` for 64-bit masks, 4 rows a gather.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn clear_by_table_avx2_u64(table: &[u64], codes: &[u32], acc: &mut [u64]) {
    use std::arch::x86_64::*;
    let n = codes.len().min(acc.len());
    // At most TABLE_MAX_ENTRIES entries: the last index fits an i32.
    let pad = _mm_set1_epi32((table.len() - 1) as i32);
    let mut r = 0;
    while r + 4 <= n {
        // SAFETY: rows r..r + 4 are within both slices, and every gathered
        // index is at most `pad`, the table's last.
        unsafe {
            let c = _mm_loadu_si128(codes.as_ptr().add(r).cast());
            let at = _mm_min_epu32(c, pad);
            let clear = _mm256_i32gather_epi64::<8>(table.as_ptr().cast(), at);
            let a = _mm256_loadu_si256(acc.as_ptr().add(r).cast());
            _mm256_storeu_si256(
                acc.as_mut_ptr().add(r).cast(),
                _mm256_andnot_si256(clear, a),
            );
        }
        r += 4;
    }
    clear_by_table(table, &codes[r..n], &mut acc[r..n]);
}

/// `hits[r]` := 1 if `codes[r]` is in the set `words` (a `CatNode`'s,
/// ending in a zero word), else 0.
#[inline(always)]
fn set_hits(words: &[u32], codes: &[u32], hits: &mut [u32]) {
    let pad = words.len() - 1;
    for (h, &c) in hits.iter_mut().zip(codes) {
        *h = words[((c / 32) as usize).min(pad)] >> (c % 32) & 1;
    }
}

/// Sets with at most this many chunks of 8 words holding a code are looked
/// up chunk by chunk in registers; larger ones by gathers, which cost more
/// than this many lookups.
const REGISTER_CHUNKS: usize = 8;

/// `set_hits` of `node.words`, 8 rows at a time: a lookup in each chunk of
/// 8 words that holds a code (a register permute, the rows whose word is
/// elsewhere masked off), or for sets of more chunks a gather.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn set_hits_avx2<M>(node: &CatNode<M>, codes: &[u32], hits: &mut [u32]) {
    use std::arch::x86_64::*;
    let words = &node.words;
    let n = codes.len().min(hits.len());
    // At most MAX_CATEGORY_WORDS + 1 words: the last index fits an i32.
    let pad = _mm256_set1_epi32((words.len() - 1) as i32);
    let (low5, one) = (_mm256_set1_epi32(31), _mm256_set1_epi32(1));
    let in_registers = node.chunks.len() <= REGISTER_CHUNKS;
    let mut r = 0;
    while r + 8 <= n {
        // SAFETY: rows r..r + 8 are within both slices, a chunk is 8 words,
        // and every gathered word index is at most `pad`, the last word's.
        unsafe {
            let c = _mm256_loadu_si256(codes.as_ptr().add(r).cast());
            let at = _mm256_srli_epi32::<5>(c);
            let w = if in_registers {
                let chunk_of = _mm256_srli_epi32::<3>(at);
                let mut w = _mm256_setzero_si256();
                for (i, chunk) in &node.chunks {
                    let table = _mm256_loadu_si256(chunk.as_ptr().cast());
                    // The permute reads the index's low 3 bits.
                    let word = _mm256_permutevar8x32_epi32(table, at);
                    let here = _mm256_cmpeq_epi32(chunk_of, _mm256_set1_epi32(*i as i32));
                    w = _mm256_or_si256(w, _mm256_and_si256(word, here));
                }
                w
            } else {
                let at = _mm256_min_epu32(at, pad);
                _mm256_i32gather_epi32::<4>(words.as_ptr().cast(), at)
            };
            let bit = _mm256_and_si256(_mm256_srlv_epi32(w, _mm256_and_si256(c, low5)), one);
            _mm256_storeu_si256(hits.as_mut_ptr().add(r).cast(), bit);
        }
        r += 8;
    }
    set_hits(words, &codes[r..n], &mut hits[r..n]);
}

/// (feature, threshold, default_left, bits of the left subtree's leaves).
type MaskNode<T, M> = (usize, T, bool, M);

/// Whether `x` is sparse and so wide that writing blocks of rows out dense
/// costs more than looking each split's value up in the stored entries.
pub(crate) fn wide_sparse<T: Element>(x: &Matrix<T>) -> bool {
    match x {
        Matrix::Dense(_) => false,
        Matrix::Sparse(s) => {
            s.n_cols() > WIDE_SPARSE_COLS
                && (s.nnz() as f64) < (s.n_rows() as f64) * (s.n_cols() as f64) / 16.0
        }
    }
}

/// Above this many columns sparse rows are not written out dense.
const WIDE_SPARSE_COLS: usize = 2048;

fn add_row_by_row<T: Element>(
    trees: &[Tree],
    n_outputs: usize,
    first: usize,
    x: &Matrix<T>,
    out: &mut [f64],
    cancel: &Cancel,
) {
    let block = |(b, chunk): (usize, &mut [f64])| {
        if cancel.is_set() {
            return;
        }
        let base = b * BLOCK;
        for (j, tree) in trees.iter().enumerate() {
            let class = (first + j) % n_outputs;
            for (r, o) in chunk.iter_mut().skip(class).step_by(n_outputs).enumerate() {
                *o += tree.leaf_value[tree.leaf_index(|j| x.get(base + r, j))];
            }
        }
    };
    if x.n_rows() <= SEQUENTIAL_MAX_ROWS {
        out.chunks_mut(BLOCK * n_outputs)
            .enumerate()
            .for_each(block);
    } else {
        out.par_chunks_mut(BLOCK * n_outputs)
            .enumerate()
            .for_each(block);
    }
}

/// A node of a flat tree, its threshold in the input's own type (see
/// `Element::at_most`), so a step compares without converting the input.
#[derive(Clone, Copy)]
struct FlatNode<T> {
    threshold: T,
    feature: u32,
    /// NaN goes left.
    default_left: bool,
    /// [left, right]; a leaf's are its own index.
    children: [u32; 2],
}

/// Nodes 0..m are the splits, m..2m+1 the leaves (leaf i at m + i).
struct FlatTree<'a, T> {
    nodes: Vec<FlatNode<T>>,
    n_splits: u32,
    leaf_value: &'a [f64],
    /// Per node (leaves included), its category set's (start, length) in
    /// `set_words`, length 0 for a threshold node; empty when no node is
    /// categorical.
    sets: Vec<(u32, u32)>,
    set_words: Vec<u32>,
}

impl<'a, T: Element> FlatTree<'a, T> {
    fn new(tree: &'a Tree) -> Self {
        let m = tree.n_internal();
        let index = |child: i32| {
            if child < 0 {
                (m + !child as usize) as u32
            } else {
                child as u32
            }
        };
        let mut nodes: Vec<FlatNode<T>> = (0..m)
            .map(|k| FlatNode {
                threshold: T::at_most(tree.threshold[k]),
                feature: tree.feature[k],
                default_left: tree.default_left[k],
                children: [index(tree.left[k]), index(tree.right[k])],
            })
            .collect();
        // Leaves read feature 0, which every model with a split has.
        nodes.extend((0..tree.n_leaves()).map(|i| {
            let me = (m + i) as u32;
            FlatNode {
                threshold: T::at_most(0.0),
                feature: 0,
                default_left: true,
                children: [me, me],
            }
        }));
        let (mut sets, mut set_words) = (Vec::new(), Vec::new());
        if tree.has_categories() {
            sets = vec![(0, 0); nodes.len()];
            for (k, span) in sets.iter_mut().enumerate().take(m) {
                if let Some(set) = tree.category_set(k) {
                    // Sets hold at most MAX_CATEGORY_WORDS words each.
                    *span = (set_words.len() as u32, set.len() as u32);
                    set_words.extend_from_slice(set);
                }
            }
        }
        FlatTree {
            nodes,
            n_splits: m as u32,
            leaf_value: &tree.leaf_value,
            sets,
            set_words,
        }
    }

    /// Calls `add(r, value)` for every row r of `block` (row-major, p values a row).
    #[inline]
    fn add_block(&self, block: &[T], p: usize, mut add: impl FnMut(usize, f64)) {
        let values = self.leaf_value;
        self.leaf_block(block, p, |r, l| add(r, values[l as usize]));
    }

    /// Calls `leaf(r, index)` with the leaf of every row r of `block`.
    #[inline]
    fn leaf_block(&self, block: &[T], p: usize, leaf: impl FnMut(usize, u32)) {
        // Threshold-only trees keep a step without the category test.
        if self.sets.is_empty() {
            self.leaf_block_with::<false>(block, p, leaf)
        } else {
            self.leaf_block_with::<true>(block, p, leaf)
        }
    }

    #[inline(always)]
    fn leaf_block_with<const CAT: bool>(
        &self,
        block: &[T],
        p: usize,
        mut leaf: impl FnMut(usize, u32),
    ) {
        let rows = block.len() / p;
        if self.n_splits == 0 {
            (0..rows).for_each(|r| leaf(r, 0));
            return;
        }
        let m = self.n_splits;
        let mut groups = block.chunks_exact(LANES * p);
        for (g, group) in groups.by_ref().enumerate() {
            let mut at = [0u32; LANES];
            while at.iter().fold(false, |busy, &a| busy | (a < m)) {
                for (lane, a) in at.iter_mut().enumerate() {
                    *a = self.step::<CAT>(*a, group, lane * p);
                }
            }
            for (lane, &a) in at.iter().enumerate() {
                leaf(g * LANES + lane, a - m);
            }
        }
        let done = rows - groups.remainder().len() / p;
        for (k, row) in groups.remainder().chunks_exact(p).enumerate() {
            let mut a = 0u32;
            while a < m {
                a = self.step::<CAT>(a, row, 0);
            }
            leaf(done + k, a - m);
        }
    }

    // `!(v <= t)` on purpose: it is true for NaN, unlike `v > t`.
    #[inline(always)]
    fn step<const CAT: bool>(&self, at: u32, rows: &[T], row_start: usize) -> u32 {
        let node = &self.nodes[at as usize];
        let v = rows[row_start + node.feature as usize];
        if CAT {
            let (start, len) = self.sets[at as usize];
            if len > 0 {
                let set = &self.set_words[start as usize..(start + len) as usize];
                let right = node.default_left == in_category_set(set, v.to_f64());
                return node.children[usize::from(right)];
            }
        }
        // NaN fails both comparisons: `v > t` sends it left, `!(v <= t)`
        // right. `&`/`|` rather than `&&`/`||`: no branch to mispredict.
        let right = (node.default_left & (v > node.threshold))
            | (!node.default_left & !(v <= node.threshold));
        node.children[usize::from(right)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::matrix::DenseMatrix;
    use crate::data::sparse::{SparseLayout, SparseMatrix};
    use crate::tree::tree::category_bitset;

    /// A chain-shaped and a balanced tree over 3 features, with NaN defaults both ways.
    fn trees() -> Vec<Tree> {
        let chain = Tree {
            feature: vec![0, 1, 2],
            threshold: vec![0.0, 0.5, -0.5],
            default_left: vec![true, false, true],
            left: vec![-1, -2, -3],
            right: vec![1, 2, -4],
            gain: vec![1.0; 3],
            count: vec![1.0; 3],
            leaf_value: vec![1.0, 2.0, 3.0, 4.0],
            leaf_count: Vec::new(),
            categories: Vec::new(),
        };
        let balanced = Tree {
            feature: vec![2, 0, 1],
            threshold: vec![0.25, -1.0, 1.0],
            default_left: vec![false, true, false],
            left: vec![1, -1, -3],
            right: vec![2, -2, -4],
            gain: vec![1.0; 3],
            count: vec![1.0; 3],
            leaf_value: vec![-0.5, 0.25, 8.0, -16.0],
            leaf_count: Vec::new(),
            categories: Vec::new(),
        };
        let stump = Tree {
            leaf_value: vec![0.125],
            ..Tree::default()
        };
        vec![chain, balanced, stump]
    }

    #[test]
    fn flat_walk_equals_node_by_node_walk() {
        let n = 3 * MIN_ROWS_FOR_FLAT + 5; // several blocks and a ragged lane tail
        let mut state = 12345u64;
        // Thresholds that f32 cannot hold (0.1, -1/3, beyond its range, in
        // its subnormals) next to inputs on and around them.
        let near = [
            0.1f32,
            0.099_999_994,
            -1.0 / 3.0,
            1e-40,
            -1e-40,
            f32::MAX,
            -f32::MAX,
        ];
        let x: Vec<f64> = (0..n * 3)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (state >> 11) as f64 / (1u64 << 53) as f64;
                // Exact threshold hits and NaNs are the interesting cases.
                match (state >> 3) % 10 {
                    0 => f64::NAN,
                    1 => 0.5,
                    2 => 0.0,
                    3 | 4 => near[(state >> 7) as usize % near.len()] as f64,
                    _ => u * 4.0 - 2.0,
                }
            })
            .collect();
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let mut edges = trees();
        edges[0].threshold = vec![0.1, -1.0 / 3.0, 1e-40];
        edges[1].threshold = vec![1e39, -1e39, -0.1];
        for trees in [trees(), edges] {
            check_flat_walk(&trees, &DenseMatrix::row_major(&x, n, 3).unwrap());
            check_flat_walk(&trees, &DenseMatrix::row_major(&x32, n, 3).unwrap());
        }
    }

    #[test]
    fn a_set_cancel_flag_stops_prediction() {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let n = 4 * MIN_ROWS_FOR_FLAT;
        let x: Vec<f64> = (0..n * 3).map(|k| (k % 11) as f64 / 5.0 - 1.0).collect();
        let m = DenseMatrix::row_major(&x, n, 3).unwrap();
        let mut out = vec![0.0; n];
        let r = add_tree_outputs_multi(&trees(), 1, 0, &m, &mut out, &Cancel::on(flag));
        assert_eq!(r, Err(crate::error::RgbmError::Interrupted));
        // No block ran.
        assert!(out.iter().all(|&v| v == 0.0));
    }

    #[test]
    fn leaf_indices_pick_the_leaves_predictions_add() {
        let ts = trees();
        for n in [5, 3 * BLOCK + 7] {
            let x: Vec<f64> = (0..n * 3)
                .map(|k| match k % 13 {
                    0 => f64::NAN,
                    r => r as f64 / 4.0 - 1.5,
                })
                .collect();
            let m = DenseMatrix::row_major(&x, n, 3).unwrap();
            let mut leaves = vec![u32::MAX; n * ts.len()];
            leaf_indices(&ts, &m, &mut leaves, &Cancel::never()).unwrap();
            let mut want = vec![0.0; n];
            add_tree_outputs(&ts, &m, &mut want);
            for i in 0..n {
                let row = &leaves[i * ts.len()..(i + 1) * ts.len()];
                let sum = ts
                    .iter()
                    .zip(row)
                    .fold(0.0, |acc, (t, &l)| acc + t.leaf_value[l as usize]);
                assert_eq!(sum.to_bits(), want[i].to_bits(), "row {i}");
            }
        }
    }

    fn check_flat_walk<T: Element>(trees: &[Tree], m: &DenseMatrix<T>) {
        let n = m.n_rows();
        for n_outputs in [1, 3] {
            let mut flat = vec![0.0; n * n_outputs];
            add_tree_outputs_multi(trees, n_outputs, 1, m, &mut flat, &Cancel::never()).unwrap();
            let mut slow = vec![0.0; n * n_outputs];
            add_row_by_row(
                trees,
                n_outputs,
                1,
                &m.as_matrix(),
                &mut slow,
                &Cancel::never(),
            );
            assert!(
                flat.iter()
                    .zip(&slow)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            );
            assert!(slow.iter().any(|&v| v != 0.0));
            // The same rows from CSR and CSC arrays (zeros not stored).
            for layout in [SparseLayout::Csr, SparseLayout::Csc] {
                let (major, minor) = match layout {
                    SparseLayout::Csr => (n, m.n_cols()),
                    SparseLayout::Csc => (m.n_cols(), n),
                };
                let (mut indptr, mut indices, mut data) = (vec![0i64], Vec::new(), Vec::new());
                for k in 0..major {
                    for i in 0..minor {
                        let (r, c) = match layout {
                            SparseLayout::Csr => (k, i),
                            SparseLayout::Csc => (i, k),
                        };
                        let mut row = Vec::new();
                        let v = m.row_block(r, 1, &mut row)[c];
                        if v.to_f64() != 0.0 {
                            indices.push(i as i32);
                            data.push(v);
                        }
                    }
                    indptr.push(indices.len() as i64);
                }
                let s = SparseMatrix::new(layout, n, m.n_cols(), &indptr, &indices, &data).unwrap();
                let mut sparse = vec![0.0; n * n_outputs];
                add_tree_outputs_multi(trees, n_outputs, 1, &s, &mut sparse, &Cancel::never())
                    .unwrap();
                assert!(
                    sparse
                        .iter()
                        .zip(&slow)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{layout:?}"
                );
            }
        }
    }

    /// Random tree shapes from 1 to 70 leaves, half with category sets (32-bit masks up to 32, 64-bit
    /// up to 64, the flat walk beyond) give the node-by-node walk's scores,
    /// bit for bit.
    #[test]
    fn every_tree_shape_equals_node_by_node_walk() {
        let mut state = 99u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 11
        };
        let p = 4;
        let levels = [-1.0, -0.25, 0.0, 0.1, 0.5, 2.0];
        let mut trees = Vec::new();
        for n_leaves in 1..=70usize {
            let mut tree = Tree {
                leaf_value: vec![0.0],
                ..Tree::default()
            };
            // Split a random leaf until the tree has n_leaves leaves; the
            // leaf's parent slot (node, left?) is rewired to the new node.
            let mut slots: Vec<Option<(usize, bool)>> = vec![None];
            while tree.leaf_value.len() < n_leaves {
                let leaf = next() as usize % slots.len();
                let node = tree.feature.len();
                let new_leaf = tree.leaf_value.len();
                tree.feature.push((next() % p as u64) as u32);
                tree.threshold.push(levels[next() as usize % levels.len()]);
                tree.default_left.push(next() % 2 == 0);
                tree.left.push(!(leaf as i32));
                tree.right.push(!(new_leaf as i32));
                tree.gain.push(1.0);
                tree.count.push(1.0);
                tree.leaf_value.push(0.0);
                if let Some((parent, is_left)) = slots[leaf] {
                    let slot = if is_left {
                        &mut tree.left
                    } else {
                        &mut tree.right
                    };
                    slot[parent] = node as i32;
                }
                slots[leaf] = Some((node, true));
                slots.push(Some((node, false)));
            }
            for (k, v) in tree.leaf_value.iter_mut().enumerate() {
                *v = (k as f64 + 1.0) * 0.37 + n_leaves as f64 * 1e-3;
            }
            // Every other tree has category-set nodes: codes below 32 (one
            // word), 40 (two), 600 (3 chunks of 8 words), 3000 (12 chunks),
            // or 5000, too many for a code table, in 20 chunks or in every
            // third chunk only (7 chunks, looked up in registers).
            if n_leaves % 2 == 0 && tree.n_internal() > 0 {
                tree.categories = (0..tree.n_internal())
                    .map(|_| {
                        if next() % 3 == 0 {
                            return Vec::new();
                        }
                        let kind = next() as usize % 6;
                        let span = [32, 40, 600, 3000, 5000, 5000][kind];
                        let sparse = kind == 5;
                        let one = next() as u32 % span;
                        let one = if sparse { one / 768 * 768 } else { one };
                        let codes: Vec<u32> = (0..span)
                            .filter(|&c| !sparse || c / 256 % 3 == 0)
                            .filter(|&c| c == one || next() % 2 == 0)
                            .collect();
                        category_bitset(codes.into_iter())
                    })
                    .collect();
            }
            tree.validate(p).unwrap();
            trees.push(tree);
        }
        assert!(
            [32, 33, 64, 65]
                .iter()
                .all(|&l| trees.iter().any(|t| t.n_leaves() == l))
        );
        // Every way of testing category sets is taken, for both mask widths.
        let forest = Forest::<f64>::new(&trees);
        fn paths<M>(t: &MaskTree<f64, M>) -> [bool; 4] {
            let node = |f: &dyn Fn(&CatNode<M>) -> bool| t.cat_nodes.iter().any(f);
            [
                !t.cat_tables.is_empty(),
                node(&|n| n.words.len() == 2),
                node(&|n| n.words.len() > 2 && n.chunks.len() <= REGISTER_CHUNKS),
                node(&|n| n.chunks.len() > REGISTER_CHUNKS),
            ]
        }
        for wide in [false, true] {
            let mut seen = [false; 4];
            for w in &forest.walks {
                let p = match w {
                    Walk::Masks32(t) if !wide => paths(t),
                    Walk::Masks64(t) if wide => paths(t),
                    _ => continue,
                };
                seen.iter_mut().zip(p).for_each(|(s, p)| *s |= p);
            }
            assert_eq!(seen, [true; 4], "64-bit masks: {wide}");
        }
        let n = 2 * MIN_ROWS_FOR_FLAT + 3;
        let x: Vec<f64> = (0..n * p)
            .map(|_| match next() % 10 {
                0 => f64::NAN,
                8 | 9 => (next() % 45) as f64 - [0.0, 0.5, 2.0][next() as usize % 3],
                7 => {
                    [(next() % 5100) as f64, -0.0, 1e10, 65536.0, 4294967296.0][next() as usize % 5]
                }
                k => levels[k as usize % levels.len()] + (next() % 3) as f64 * 0.01 - 0.01,
            })
            .collect();
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        check_flat_walk(&trees, &DenseMatrix::row_major(&x, n, p).unwrap());
        check_flat_walk(&trees, &DenseMatrix::row_major(&x32, n, p).unwrap());
        check_leaf_indices(&trees, &DenseMatrix::row_major(&x, n, p).unwrap());
        check_leaf_indices(&trees, &DenseMatrix::row_major(&x32, n, p).unwrap());
    }

    /// `leaf_indices` (block walks, trees in groups) gives `Tree::leaf_index`
    /// of every row and tree.
    fn check_leaf_indices<T: Element>(trees: &[Tree], m: &DenseMatrix<T>) {
        let n = m.n_rows();
        assert!(n >= MIN_ROWS_FOR_FLAT && trees.len() > LEAF_TREES);
        let mut out = vec![u32::MAX; n * trees.len()];
        leaf_indices(trees, m, &mut out, &Cancel::never()).unwrap();
        for i in 0..n {
            for (t, tree) in trees.iter().enumerate() {
                let want = tree.leaf_index(|j| m.get(i, j));
                assert_eq!(out[i * trees.len() + t] as usize, want, "row {i}, tree {t}");
            }
        }
    }

    #[test]
    fn a_set_cancel_flag_stops_leaf_indices() {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let n = 4 * MIN_ROWS_FOR_FLAT;
        let x: Vec<f64> = (0..n * 3).map(|k| (k % 11) as f64 / 5.0 - 1.0).collect();
        let m = DenseMatrix::row_major(&x, n, 3).unwrap();
        let mut out = vec![7u32; n * 3];
        let r = leaf_indices(&trees(), &m, &mut out, &Cancel::on(flag));
        assert_eq!(r, Err(crate::error::RgbmError::Interrupted));
        // No block ran.
        assert!(out.iter().all(|&v| v == 7));
    }
}
