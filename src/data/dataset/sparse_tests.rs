use super::*;
use crate::data::binning::{BIN_SAMPLE_ROWS, BinLimits, FeatureBins};
use crate::data::matrix::DenseMatrix;
use crate::data::sparse::SparseLayout;
use crate::data::sparse::SparseMatrix;
use crate::rng::{Purpose, stream};
use rand::RngExt;

/// The CSC arrays of a column-major matrix: nonzeros, NaN, and every
/// third zero stored explicitly (explicit and implicit zeros must bin alike).
pub(crate) fn csc_of<T: Element>(f: &[T], n: usize, p: usize) -> (Vec<i64>, Vec<i32>, Vec<T>) {
    let (mut indptr, mut indices, mut data) = (vec![0i64], Vec::new(), Vec::new());
    for j in 0..p {
        for i in 0..n {
            let v = f[j * n + i];
            if v.to_f64() != 0.0 || (i + j) % 3 == 0 {
                indices.push(i as i32);
                data.push(v);
            }
        }
        indptr.push(indices.len() as i64);
    }
    (indptr, indices, data)
}

fn assert_same(a: &BinnedDataset, b: &BinnedDataset, what: &str) {
    assert_eq!(a.mapper, b.mapper, "{what}");
    assert_eq!(a.default_bins, b.default_bins, "{what}");
    assert_eq!(a.bin_offsets, b.bin_offsets, "{what}");
    assert_eq!(a.codes.is_some(), b.codes.is_some(), "{what}");
    let codes = |d: &BinnedDataset| -> Vec<usize> {
        let (n, p) = (d.n_rows, d.n_features());
        (0..n * p).map(|k| d.code(k / p, k % p)).collect()
    };
    assert_eq!(codes(a), codes(b), "{what}");
    assert_eq!(
        a.sparse_rows.as_ref().map(|s| (&s.row_ptr, &s.bins)),
        b.sparse_rows.as_ref().map(|s| (&s.row_ptr, &s.bins)),
        "{what}"
    );
    let rows = |d: &BinnedDataset| match &d.row_codes {
        BinCodes::U8(c) => c.iter().map(|&c| c as u16).collect::<Vec<_>>(),
        BinCodes::U16(c) => c.clone(),
    };
    assert_eq!(rows(a), rows(b), "{what}");
}

/// Random column-major data of the given density: negative values,
/// NaN, -0.0, a column of many distinct values (the sort path).
fn random_columns(n: usize, p: usize, density: f64, seed: u64) -> Vec<f64> {
    let mut rng = stream(seed, Purpose::BinSample, 1);
    let mut f = vec![0.0f64; n * p];
    for j in 0..p {
        for i in 0..n {
            if rng.random::<f64>() >= density {
                continue;
            }
            f[j * n + i] = match (j % 4, rng.random_range(0..20)) {
                (_, 0) => f64::NAN,
                (_, 1) => -0.0,
                (0, _) => 1.0,
                (1, k) => k as f64 - 8.0,
                _ => rng.random::<f64>() * 10.0 - 3.0,
            };
        }
    }
    f
}

fn check<T: Element>(f: &[T], n: usize, p: usize, limits: BinLimits, w: Option<&[f64]>) {
    for min_rows in [0, 1, 7] {
        check_min_rows(f, n, p, limits, w, min_rows);
    }
}

fn check_min_rows<T: Element>(
    f: &[T],
    n: usize,
    p: usize,
    limits: BinLimits,
    w: Option<&[f64]>,
    min_rows: usize,
) {
    let dense = DenseMatrix::col_major(f, n, p).unwrap();
    let (indptr, indices, data) = csc_of(f, n, p);
    let csc = SparseMatrix::new(SparseLayout::Csc, n, p, &indptr, &indices, &data).unwrap();
    // The transpose's CSC arrays are this matrix's CSR arrays.
    let t: Vec<T> = (0..n * p).map(|k| f[(k % p) * n + k / p]).collect();
    let (indptr, indices, data) = csc_of(&t, p, n);
    let csr = SparseMatrix::new(SparseLayout::Csr, n, p, &indptr, &indices, &data).unwrap();
    let never = Cancel::never();
    let bin = |x: &dyn AsMatrix<T>| {
        BinnedDataset::from_weighted_matrix(&x.as_matrix(), limits, 9, w, &[], min_rows, &never)
            .unwrap()
    };
    let a = bin(&dense);
    // Columns with fewer than min_rows values not 0 get one bin; the
    // others the cuts every column gets at min_rows 0.
    let all = BinMapper::fit(&dense, limits, 9, w, &never).unwrap();
    for j in 0..p {
        let nonzero = (0..n).filter(|&i| dense.get(i, j) != 0.0).count();
        let want = if min_rows > 1 && nonzero < min_rows {
            FeatureBins::single()
        } else {
            all.features[j].clone()
        };
        assert_eq!(
            a.mapper.features[j], want,
            "feature {j}, min_rows {min_rows}"
        );
    }
    if a.sparse_rows.is_some() {
        // A feature keeps bins iff min_rows rows lie outside its mode.
        for j in 0..p {
            let fb = &a.mapper.features[j];
            let mut counts = vec![0usize; fb.n_bins()];
            (0..n).for_each(|i| counts[fb.bin(dense.get(i, j))] += 1);
            let top = counts.iter().max().copied().unwrap_or(0);
            let used = min_rows == 0 || n - top >= min_rows;
            let bins = a.bin_offsets[j + 1] - a.bin_offsets[j];
            assert_eq!(bins, if used { fb.n_bins() } else { 0 }, "feature {j}");
        }
    }
    for sparse in [csc, csr] {
        let b = bin(&sparse);
        let what = format!(
            "{:?} {n} x {p}, {limits:?}, weighted {}, min_rows {min_rows}",
            sparse.layout(),
            w.is_some()
        );
        assert_same(&a, &b, &what);
        // Binning with an existing mapper (evaluation data) agrees too.
        let a = BinnedDataset::with_mapper(&dense, a.mapper.clone()).unwrap();
        let b = BinnedDataset::with_mapper(&sparse, a.mapper.clone()).unwrap();
        assert_same(&a, &b, &what);
    }
}

#[test]
fn sparse_binning_equals_dense_binning() {
    // 90 features: CSR columns to sort are copied out as CSC.
    for (n, p, density) in [
        (1, 1, 1.0),
        (7, 3, 0.0),
        (500, 9, 0.05),
        (3000, 8, 0.4),
        (700, 90, 0.3),
        // A handful of entries per column: below min_rows 7 or not.
        (400, 12, 0.015),
    ] {
        let f = random_columns(n, p, density, n as u64);
        let w: Vec<f64> = (0..n).map(|i| (i % 4) as f64 * 0.75).collect();
        let f32s: Vec<f32> = f.iter().map(|&v| v as f32).collect();
        for (max_bins, min_data_in_bin) in [(255, 1), (6, 1), (255, 3), (6, 3), (255, 40)] {
            let limits = BinLimits {
                max_bins,
                min_data_in_bin,
            };
            check(&f, n, p, limits, None);
            check(&f32s, n, p, limits, None);
            if w.iter().sum::<f64>() > 0.0 {
                check(&f, n, p, limits, Some(&w));
            }
        }
    }
}

/// Past `BIN_SAMPLE_ROWS` rows both read the same seeded sample.
#[test]
fn sparse_binning_equals_dense_binning_on_a_row_sample() {
    let n = BIN_SAMPLE_ROWS + 999;
    let f = random_columns(n, 4, 0.2, 3);
    let w: Vec<f64> = (0..n).map(|i| (i % 3) as f64).collect();
    check(&f, n, 4, 255.into(), None);
    let limits = BinLimits {
        max_bins: 31,
        min_data_in_bin: 3,
    };
    check(&f, n, 4, limits, Some(&w));
}

#[test]
fn sparse_infinity_is_refused_when_binning() {
    let f = [0.0, 1.0, f64::NEG_INFINITY, 0.0, f64::INFINITY, 0.0];
    let (indptr, indices, data) = csc_of(&f, 3, 2);
    let x = SparseMatrix::new(SparseLayout::Csc, 3, 2, &indptr, &indices, &data).unwrap();
    let e = BinnedDataset::from_matrix(&x, 255, 0).unwrap_err();
    assert!(e.to_string().contains("row 1, column 1"), "{e}");
    // Read as CSR the same arrays are the transpose: -inf first, at (0, 2).
    let csr = SparseMatrix::new(SparseLayout::Csr, 2, 3, &indptr, &indices, &data).unwrap();
    let e = BinnedDataset::from_matrix(&csr, 255, 0).unwrap_err();
    assert!(e.to_string().contains("row 0, column 2"), "{e}");
}
