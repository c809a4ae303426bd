//! Items cut into runs of nearly equal length: feature groups of a build
//! and the passes of the feature-major kernel over a group.

/// `len` items cut into at most `parts` non-empty runs whose lengths differ
/// by at most one, the longer runs spread evenly: the halves rayon splits a
/// task list into then carry equal work (10 features in 4 groups are
/// 2, 3, 2, 3, not 3, 3, 3, 1).
pub(super) fn even_sizes(len: usize, parts: usize) -> Vec<usize> {
    let parts = parts.clamp(1, len.max(1));
    let (base, extra) = (len / parts, len % parts);
    // Run i is longer when the line from (0, 0) to (parts, extra) crosses
    // an integer within it.
    (0..parts)
        .map(|i| base + (i + 1) * extra / parts - i * extra / parts)
        .filter(|&s| s > 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_sizes_cover_the_items_in_balanced_alternating_runs() {
        assert_eq!(even_sizes(10, 4), [2, 3, 2, 3]);
        assert_eq!(even_sizes(0, 4), Vec::<usize>::new());
        for len in 0..60 {
            for parts in 1..10 {
                let sizes = even_sizes(len, parts);
                assert_eq!(sizes.iter().sum::<usize>(), len, "{len} {parts}");
                assert_eq!(sizes.len(), parts.min(len), "{len} {parts}");
                let (lo, hi) = (sizes.iter().min(), sizes.iter().max());
                assert!(hi.zip(lo).is_none_or(|(h, l)| h - l <= 1), "{sizes:?}");
                // Halves (as rayon splits them) differ by at most one item
                // when the run count is even.
                if sizes.len().is_multiple_of(2) {
                    let (a, b) = sizes.split_at(sizes.len() / 2);
                    let (a, b) = (a.iter().sum::<usize>(), b.iter().sum::<usize>());
                    assert!(a.abs_diff(b) <= 1, "{sizes:?}");
                }
            }
        }
    }
}
