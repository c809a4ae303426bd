//! A feature-major index of the sparse rows, and a feature's codes read
//! through it. Histograms want a row's entries together (the sparse rows);
//! a partition or a row count wants one feature's codes for a leaf's rows.
//! Found in the sparse rows, that is a binary search inside each row's
//! entries, a cache miss per row; through the index it is a forward pass
//! over the feature's own entries, because a leaf's rows increase (runs of
//! them do after a multiclass round's first tree, which starts from the
//! previous tree's leaf order).
use super::sparse_rows::SparseRows;
use crate::error::Result;

/// For feature j, `rows[col_ptr[j]..col_ptr[j + 1]]` are the rows with an
/// entry in the sparse rows, increasing, and `codes[..]` the entries'
/// codes within the feature.
#[derive(Clone, Debug)]
pub(crate) struct ColumnIndex {
    col_ptr: Vec<usize>,
    rows: Vec<u32>,
    codes: Vec<u16>,
}

impl ColumnIndex {
    /// The transpose of `sparse`, whose entries are global bins at
    /// `bin_offsets`. Codes fit a u16: a feature has at most 65,536 bins.
    pub(crate) fn of(sparse: &SparseRows, bin_offsets: &[usize]) -> Result<ColumnIndex> {
        let p = bin_offsets.len().saturating_sub(1);
        let total_bins = bin_offsets.last().copied().unwrap_or(0);
        let mut feature_of = crate::alloc::filled_vec(total_bins, 0u32, "the bin-to-feature map")?;
        for j in 0..p {
            feature_of[bin_offsets[j]..bin_offsets[j + 1]].fill(j as u32);
        }
        let mut col_ptr = crate::alloc::filled_vec(p + 1, 0usize, "the sparse column starts")?;
        for &b in &sparse.bins {
            col_ptr[feature_of[b as usize] as usize + 1] += 1;
        }
        for j in 0..p {
            col_ptr[j + 1] += col_ptr[j];
        }
        let nnz = sparse.bins.len();
        let mut rows = crate::alloc::filled_vec(nnz, 0u32, "the sparse column rows")?;
        let mut codes = crate::alloc::filled_vec(nnz, 0u16, "the sparse column codes")?;
        let mut next = crate::alloc::with_capacity(p, "the sparse column cursors")?;
        next.extend_from_slice(&col_ptr[..p]);
        for (r, w) in sparse.row_ptr.windows(2).enumerate() {
            for &b in &sparse.bins[w[0]..w[1]] {
                let j = feature_of[b as usize] as usize;
                rows[next[j]] = r as u32;
                codes[next[j]] = (b as usize - bin_offsets[j]) as u16;
                next[j] += 1;
            }
        }
        Ok(ColumnIndex {
            col_ptr,
            rows,
            codes,
        })
    }
}

/// A feature's codes read from the sparse rows: a row's entry in the
/// feature's range of global bins, or the default bin when it has none.
#[derive(Clone, Copy)]
pub(crate) struct SparseColumn<'a> {
    pub(super) rows: &'a SparseRows,
    pub(super) index: &'a ColumnIndex,
    pub(super) feature: usize,
    pub(super) lo: u32,
    pub(super) hi: u32,
    pub(super) default: usize,
}

impl SparseColumn<'_> {
    /// The code of one row (a binary search in the row's entries).
    #[inline]
    pub(crate) fn code(&self, row: usize) -> usize {
        let entries = &self.rows.bins[self.rows.row_ptr[row]..self.rows.row_ptr[row + 1]];
        let at = entries.partition_point(|&b| b < self.lo);
        match entries.get(at) {
            Some(&b) if b < self.hi => (b - self.lo) as usize,
            _ => self.default,
        }
    }

    /// Calls `f(row, code)` for each of `rows` in order. A feature with an
    /// entry in every row reads its code by index. Otherwise, when the rows
    /// increase and lie close together (a large leaf's rows, in the order
    /// the partition keeps), the codes of their whole span are laid out
    /// first, from the feature's entries there, and read by index; else a
    /// forward walk over the feature's entries between them, restarted
    /// where the rows go back; and for a few rows of a long span, each
    /// row's own entries.
    #[inline]
    pub(crate) fn for_each_code(&self, rows: &[u32], mut f: impl FnMut(u32, usize)) {
        let span = self.index.col_ptr[self.feature]..self.index.col_ptr[self.feature + 1];
        let (entries, codes) = (&self.index.rows[span.clone()], &self.index.codes[span]);
        if entries.len() == self.rows.row_ptr.len() - 1 {
            rows.iter()
                .for_each(|&row| f(row, codes[row as usize] as usize));
            return;
        }
        let (Some(&first), Some(&last)) = (rows.first(), rows.last()) else {
            return;
        };
        let start = entries.partition_point(|&r| r < first);
        let end = start + entries[start..].partition_point(|&r| r <= last);
        let close = (last.saturating_sub(first)) as usize <= LAYOUT_MAX_SPAN * rows.len();
        let matches = (end - start) * LAYOUT_MIN_MATCHES >= rows.len();
        if close && matches && rows.is_sorted() {
            let done = SPAN_CODES.with_borrow_mut(|laid| {
                let width = (last - first) as usize + 1;
                laid.clear();
                if laid.try_reserve(width).is_err() {
                    return false;
                }
                laid.resize(width, self.default as u16);
                for (&r, &c) in entries[start..end].iter().zip(&codes[start..end]) {
                    laid[(r - first) as usize] = c;
                }
                for &row in rows {
                    f(row, laid[(row - first) as usize] as usize);
                }
                true
            });
            if done {
                return;
            }
        }
        if first > last || end - start > WALK_MAX_SKIP * rows.len() {
            rows.iter().for_each(|&row| f(row, self.code(row as usize)));
            return;
        }
        let mut at = start;
        let mut previous = first;
        for &row in rows {
            if row < previous {
                at = 0;
            }
            previous = row;
            at = seek(entries, at, row);
            let code = match entries.get(at) {
                Some(&r) if r == row => codes[at] as usize,
                _ => self.default,
            };
            f(row, code);
        }
    }
}

/// Span of rows, per row asked for, up to which laying out the span's
/// codes beats finding each row's.
const LAYOUT_MAX_SPAN: usize = 8;

/// A walk predicts whether a row has an entry well when few do: laying out
/// pays from one entry per this many rows.
const LAYOUT_MIN_MATCHES: usize = 8;

/// Entries per row up to which walking a feature's entries beats searching
/// each row's own.
const WALK_MAX_SKIP: usize = 4;

std::thread_local! {
    /// A thread's buffer for a span's codes (kept between calls).
    static SPAN_CODES: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The first index ≥ `from` whose entry is ≥ `row` (`entries` increasing):
/// doubling steps, then a binary search in the last step.
#[inline(always)]
fn seek(entries: &[u32], from: usize, row: u32) -> usize {
    match entries.get(from) {
        Some(&r) if r < row => {}
        _ => return from,
    }
    // entries[lo] < row from here on.
    let (mut lo, mut step) = (from, 1);
    while lo + step < entries.len() && entries[lo + step] < row {
        lo += step;
        step *= 2;
    }
    let end = (lo + step).min(entries.len());
    lo + 1 + entries[lo + 1..end].partition_point(|&r| r < row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seek_finds_the_first_entry_not_below() {
        let entries: Vec<u32> = (0..200).map(|k| 3 * k + 1).collect();
        for from in [0, 1, 5, 64, 199, 200] {
            for row in 0..610 {
                let expected = from.max(entries.partition_point(|&r| r < row));
                assert_eq!(
                    seek(&entries, from, row),
                    expected,
                    "from {from}, row {row}"
                );
            }
        }
    }
}
