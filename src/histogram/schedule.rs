//! How a node's histogram is split into tasks: feature groups for the
//! feature-major kernel, row chunks (and feature shares) with partial
//! histograms summed in chunk order for the row-wise kernels. Task counts
//! depend on sizes, and every bin sums its rows in order, so the result is
//! the same whatever the thread count.
use std::ops::Range;

use rayon::prelude::*;

use super::even_runs::even_sizes;
use super::feature_major::GroupTask;
use super::{BinStats, GhSums, Gradients, HistSliceMut, Histogram};
use crate::data::dataset::BinCode;
use crate::error::Result;

/// Below this many (row, feature) pairs a node's histogram is built on one thread.
const PARALLEL_MIN_WORK: usize = 32 * 1024;

/// The feature-major kernel over `features`: their bins cut into groups of
/// whole features, one task per group.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_typed<C: BinCode>(
    codes: &[C],
    n_rows: usize,
    offsets: &[usize],
    defaults: &[Option<usize>],
    features: &[usize],
    rows: Option<&[u32]>,
    grads: &Gradients,
    hist: HistSliceMut,
) {
    // Split the histogram into per-feature slices for the active features.
    let mut slices: Vec<(usize, HistSliceMut)> = Vec::with_capacity(features.len());
    let mut rest = hist;
    let mut consumed = 0;
    for &j in features {
        let (_, tail) = rest.split_at(offsets[j] - consumed);
        let (mine, tail) = tail.split_at(offsets[j + 1] - offsets[j]);
        consumed = offsets[j + 1];
        rest = tail;
        slices.push((j, mine));
    }
    let m = rows.map_or(n_rows, |r| r.len());
    let work = m * features.len();
    // A task is a group of features; more groups than threads so that
    // work stealing can balance them. Small nodes are one group.
    let parallel = work >= PARALLEL_MIN_WORK;
    let n_groups = if parallel {
        2 * rayon::current_num_threads()
    } else {
        1
    };
    // Without counts or weights a bin is summed as (g, h) alone.
    let pairs = !grads.counted() && grads.weights.is_none();
    let run = |group: Vec<(usize, HistSliceMut)>| {
        let task = GroupTask {
            codes,
            n_rows,
            defaults,
            rows,
            grads,
            m,
        };
        if pairs {
            task.run::<GhSums>(group)
        } else {
            task.run::<BinStats>(group)
        }
    };
    let sizes = even_sizes(slices.len(), n_groups);
    let mut slices = slices.into_iter();
    let groups: Vec<Vec<_>> = sizes
        .into_iter()
        .map(|len| slices.by_ref().take(len).collect())
        .collect();
    if groups.len() > 1 {
        groups.into_par_iter().for_each(run);
    } else {
        groups.into_iter().for_each(run);
    }
}

/// Rows per chunk below which a subset histogram is not split further: a
/// chunk costs a zeroed partial histogram and its reduction, so small
/// histograms (few bins, e.g. one-hot data) afford smaller chunks. At most
/// MAX_CHUNKS chunks. Depends only on sizes, never on the thread count.
pub(super) fn rows_per_chunk(total_bins: usize) -> usize {
    (2 * total_bins).clamp(1024, 8192)
}
const MAX_CHUNKS: usize = 16;

/// Memory for the partial histograms of one build: wide histograms (sparse
/// data with a million bins) are summed in fewer chunks.
const PARTIALS_BYTES: usize = 64 << 20;

/// Chunks of a build over `m` rows into `total_bins` bins (sizes only).
pub(super) fn n_chunks(m: usize, total_bins: usize) -> usize {
    let affordable = (PARTIALS_BYTES / Histogram::bytes(total_bins).max(1)).max(1);
    (m / rows_per_chunk(total_bins)).clamp(1, MAX_CHUNKS.min(affordable))
}

/// Bins per task when partial histograms are summed.
const REDUCE_BLOCK: usize = 2048;

/// A kernel call: rows `lo..hi`, the features (all when None), the bins.
type ChunkTask<'a> = (usize, usize, Option<Range<usize>>, HistSliceMut<'a>);

/// Rows `lo..hi` into `out` as one task, or as `groups` tasks over equal
/// shares of the features (`offsets` = bin offsets) and their bins.
fn push_tasks<'a>(
    out: HistSliceMut<'a>,
    lo: usize,
    hi: usize,
    groups: usize,
    offsets: Option<&[usize]>,
    tasks: &mut Vec<ChunkTask<'a>>,
) {
    let Some(offsets) = offsets.filter(|_| groups > 1) else {
        tasks.push((lo, hi, None, out));
        return;
    };
    let p = offsets.len() - 1;
    let mut rest = out;
    let mut f_lo = 0;
    for g in 0..groups {
        let f_hi = p * (g + 1) / groups;
        let (mine, tail) = rest.split_at(offsets[f_hi] - offsets[f_lo]);
        tasks.push((lo, hi, Some(f_lo..f_hi), mine));
        rest = tail;
        f_lo = f_hi;
    }
}

fn run_tasks(
    tasks: Vec<ChunkTask>,
    run: &(impl Fn(usize, usize, Option<Range<usize>>, HistSliceMut) -> Result<()> + Sync),
) -> Result<()> {
    if tasks.len() == 1 {
        tasks
            .into_iter()
            .try_for_each(|(lo, hi, features, out)| run(lo, hi, features, out))
    } else {
        tasks
            .into_par_iter()
            .try_for_each(|(lo, hi, features, out)| run(lo, hi, features, out))
    }
}

/// All features of a row subset via the row-major codes: fixed chunks of
/// rows (their number depends only on the row count) build partial
/// histograms in parallel, then partials are summed in chunk order, so the
/// result does not depend on the thread count.
///
/// `run(lo, hi, features, out)` builds rows `lo..hi` into `out`, for the
/// features in `features` (all when None). When there are fewer chunks than
/// twice the threads and `offsets` (the bin offsets) say the kernel can,
/// chunks are also split by features: each bin still sums its chunk's rows
/// in order, so the result is the same, bit for bit, whatever the thread count.
pub(super) fn build_rows_chunked(
    m: usize,
    hist: &mut Histogram,
    partials: &mut Vec<Histogram>,
    offsets: Option<&[usize]>,
    run: impl Fn(usize, usize, Option<Range<usize>>, HistSliceMut) -> Result<()> + Sync,
) -> Result<()> {
    let len = hist.len();
    let n_chunks = n_chunks(m, len);
    // Too few chunks to keep every thread busy: each chunk is also split by
    // features (grouping never changes a bin's sum, so neither do threads).
    let threads = rayon::current_num_threads();
    let groups = match offsets {
        Some(o)
            if threads > 1 && n_chunks < 2 * threads && m * (o.len() - 1) >= PARALLEL_MIN_WORK =>
        {
            (2 * threads).div_ceil(n_chunks).min(o.len() - 1)
        }
        _ => 1,
    };
    if n_chunks == 1 {
        let mut tasks = Vec::with_capacity(groups);
        push_tasks(hist.view_mut(), 0, m, groups, offsets, &mut tasks);
        return run_tasks(tasks, &run);
    }
    // Chunk 0 is built into `hist` itself, the others into partials that
    // are then added in chunk order: one partial fewer to hold.
    let chunk = m.div_ceil(n_chunks);
    while partials.len() < n_chunks - 1 {
        partials.push(Histogram::new(len)?);
    }
    let (weighted, counted) = (!hist.weight.is_empty(), !hist.count.is_empty());
    let parts = &mut partials[..n_chunks - 1];
    let mut tasks = Vec::with_capacity(n_chunks * groups);
    push_tasks(
        hist.view_mut(),
        0,
        chunk.min(m),
        groups,
        offsets,
        &mut tasks,
    );
    for (c, part) in parts.iter_mut().enumerate() {
        part.set_layout(weighted, counted)?;
        let rows = (c + 1) * chunk..((c + 2) * chunk).min(m);
        push_tasks(
            part.view_mut(),
            rows.start,
            rows.end,
            groups,
            offsets,
            &mut tasks,
        );
    }
    run_tasks(tasks, &run)?;
    let parts = &*parts;
    let Histogram { gh, count, weight } = hist;
    gh.par_chunks_mut(REDUCE_BLOCK)
        .enumerate()
        .for_each(|(blk, out)| {
            let base = blk * REDUCE_BLOCK;
            for (i, s) in out.iter_mut().enumerate() {
                for part in parts {
                    let x = part.gh[base + i];
                    *s = [s[0] + x[0], s[1] + x[1]];
                }
            }
        });
    count
        .par_chunks_mut(REDUCE_BLOCK)
        .enumerate()
        .for_each(|(blk, out)| {
            let base = blk * REDUCE_BLOCK;
            for (i, c) in out.iter_mut().enumerate() {
                *c += parts.iter().map(|p| p.count[base + i]).sum::<u32>();
            }
        });
    weight
        .par_chunks_mut(REDUCE_BLOCK)
        .enumerate()
        .for_each(|(blk, out)| {
            let base = blk * REDUCE_BLOCK;
            for (i, s) in out.iter_mut().enumerate() {
                for part in parts {
                    *s += part.weight[base + i];
                }
            }
        });
    Ok(())
}
