use super::*;
use crate::data::matrix::DenseMatrix;
use codes::{ROW_BLOCK, WIDE_BYTES};

#[test]
fn codes_match_per_value_binning_for_both_layouts() {
    let n = 50;
    let p = 3;
    let mut c = vec![0.0f64; n * p];
    for i in 0..n {
        for j in 0..p {
            c[i * p + j] = if (i + j) % 7 == 0 {
                f64::NAN
            } else {
                ((i * 31 + j * 17) % 23) as f64
            };
        }
    }
    let mut f = vec![0.0f64; n * p];
    for i in 0..n {
        for j in 0..p {
            f[j * n + i] = c[i * p + j];
        }
    }
    let xc = DenseMatrix::row_major(&c, n, p).unwrap();
    let xf = DenseMatrix::col_major(&f, n, p).unwrap();
    let a = BinnedDataset::from_matrix(&xc, 8, 1).unwrap();
    let b = BinnedDataset::from_matrix(&xf, 8, 1).unwrap();
    assert_eq!(a.mapper, b.mapper);
    for i in 0..n {
        for j in 0..p {
            assert_eq!(a.code(i, j), b.code(i, j));
            assert_eq!(Some(a.code(i, j)), a.row_code(i, j));
            assert_eq!(a.code(i, j), a.mapper.features[j].bin(xc.get(i, j)));
        }
    }
    assert!(matches!(a.codes, Some(BinCodes::U8(_))));
}

#[test]
fn a_set_cancel_flag_stops_binning_in_either_layout() {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let (n, p) = (3 * ROW_BLOCK, 5);
    let v: Vec<f64> = (0..n * p).map(|k| (k % 1013) as f64).collect();
    for x in [
        DenseMatrix::row_major(&v, n, p).unwrap(),
        DenseMatrix::col_major(&v, n, p).unwrap(),
    ] {
        let r = BinnedDataset::from_weighted_matrix(
            &x,
            255,
            0,
            None,
            &[],
            0,
            &Cancel::on(flag.clone()),
        );
        assert!(matches!(r, Err(RgbmError::Interrupted)));
        // A mapper fitted without the flag: filling the codes stops too.
        let mapper = BinMapper::fit(&x, 255, 0, None, &Cancel::never()).unwrap();
        let r = BinnedDataset::bin(&x.into(), mapper, 0, &Cancel::on(flag.clone()));
        assert!(matches!(r, Err(RgbmError::Interrupted)));
    }
}

#[test]
fn infinity_and_empty_input_are_rejected() {
    let v = [1.0, f64::INFINITY];
    let x = DenseMatrix::row_major(&v, 2, 1).unwrap();
    assert!(matches!(
        BinnedDataset::from_matrix(&x, 255, 0),
        Err(RgbmError::NonFinite(_))
    ));
    let v = [1.0, 2.0, 3.0, f64::NEG_INFINITY, 5.0, 6.0];
    for x in [
        DenseMatrix::col_major(&v, 3, 2).unwrap(),
        DenseMatrix::row_major(&v, 3, 2).unwrap(),
    ] {
        let e = BinnedDataset::from_matrix(&x, 255, 0).unwrap_err();
        assert!(e.to_string().contains("infinity"), "{e}");
    }
    // The first infinity in row order is named, whichever block and layout.
    let (n, p) = (3 * ROW_BLOCK, 4);
    let mut v: Vec<f64> = (0..n * p).map(|k| (k % 7) as f64).collect();
    v[(2 * ROW_BLOCK + 5) * p + 3] = f64::INFINITY;
    v[(2 * ROW_BLOCK + 9) * p + 1] = f64::NEG_INFINITY;
    v[(ROW_BLOCK + 1) * p + 2] = f64::NEG_INFINITY;
    let x = DenseMatrix::row_major(&v, n, p).unwrap();
    let e = BinnedDataset::from_matrix(&x, 255, 0).unwrap_err();
    let expected = format!("row {}, column 2", ROW_BLOCK + 1);
    assert!(e.to_string().contains(&expected), "{e}");
    let t: Vec<f64> = (0..n * p).map(|k| v[(k % n) * p + k / n]).collect();
    let x = DenseMatrix::col_major(&t, n, p).unwrap();
    let e = BinnedDataset::from_matrix(&x, 255, 0).unwrap_err();
    assert!(e.to_string().contains(&expected), "{e}");
    let e: [f64; 0] = [];
    let x = DenseMatrix::row_major(&e, 0, 3).unwrap();
    assert!(matches!(
        BinnedDataset::from_matrix(&x, 255, 0),
        Err(RgbmError::EmptyInput(_))
    ));
    // An existing mapper on no rows: an error, not a panic.
    let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let mapper = BinnedDataset::from_matrix(&DenseMatrix::row_major(&v, 2, 3).unwrap(), 255, 0)
        .unwrap()
        .mapper;
    for x in [
        DenseMatrix::row_major(&e, 0, 3).unwrap(),
        DenseMatrix::col_major(&e, 0, 3).unwrap(),
    ] {
        assert!(matches!(
            BinnedDataset::with_mapper(&x, mapper.clone()),
            Err(RgbmError::EmptyInput(_))
        ));
    }
}

#[test]
fn many_bins_use_u16_codes() {
    let v: Vec<f64> = (0..2000).map(|i| i as f64).collect();
    let x = DenseMatrix::row_major(&v, 2000, 1).unwrap();
    let d = BinnedDataset::from_matrix(&x, 1000, 0).unwrap();
    assert!(matches!(d.codes, Some(BinCodes::U16(_))));
    assert_eq!(d.code(1999, 0), 999);
}

/// Tables of tens of thousands of thresholds (read feature by feature in
/// each row block): every code is its value's bin, in both layouts.
#[test]
fn wide_threshold_tables_give_each_value_its_bin() {
    let (n, p) = (3 * ROW_BLOCK + 17, 3);
    let value = |i: usize, j: usize| ((i * 7919 + j * 104_729) % 40_009) as f64 - 20_000.5;
    let c: Vec<f64> = (0..n * p).map(|k| value(k / p, k % p)).collect();
    let f: Vec<f64> = (0..n * p).map(|k| value(k % n, k / n)).collect();
    let a =
        BinnedDataset::from_matrix(&DenseMatrix::row_major(&c, n, p).unwrap(), 65535, 0).unwrap();
    let b =
        BinnedDataset::from_matrix(&DenseMatrix::col_major(&f, n, p).unwrap(), 65535, 0).unwrap();
    let table: usize = a
        .mapper
        .features
        .iter()
        .map(|f| f.thresholds.len() * 8)
        .sum();
    assert!(table > WIDE_BYTES, "{table}");
    for i in 0..n {
        for j in 0..p {
            assert_eq!(a.code(i, j), a.mapper.features[j].bin(value(i, j)));
            assert_eq!(a.code(i, j), b.code(i, j));
        }
    }
}

/// `value(i, j)` binned (255 bins) from a row-major and from a
/// column-major matrix.
fn binned_in_both_layouts(
    n: usize,
    p: usize,
    value: impl Fn(usize, usize) -> f64,
) -> [BinnedDataset; 2] {
    let c: Vec<f64> = (0..n * p).map(|k| value(k / p, k % p)).collect();
    let f: Vec<f64> = (0..n * p).map(|k| value(k % n, k / n)).collect();
    [
        DenseMatrix::row_major(&c, n, p).unwrap(),
        DenseMatrix::col_major(&f, n, p).unwrap(),
    ]
    .map(|x| BinnedDataset::from_matrix(&x, 255, 3).unwrap())
}

/// Several row blocks, both input layouts: codes, default bins and the
/// sparse rows equal a value-by-value recomputation.
#[test]
fn codes_default_bins_and_sparse_rows_match_brute_force() {
    let (n, p) = (2 * ROW_BLOCK + 777, 6);
    let value = |i: usize, j: usize| -> f64 {
        let h = (i * 2654435761 + j * 40503) % 1000;
        match j {
            0 => (h < 100) as u8 as f64, // one-hot-like, default 0
            1 => (h % 3) as f64,         // no default bin
            2 => {
                if h < 20 {
                    f64::NAN
                } else {
                    5.0
                }
            } // default 5, some missing
            _ => {
                if h < 850 {
                    0.0
                } else {
                    h as f64
                }
            } // default 0, many values
        }
    };
    for d in binned_in_both_layouts(n, p, value) {
        for i in 0..n {
            for j in 0..p {
                let code = d.mapper.features[j].bin(value(i, j));
                assert_eq!(d.code(i, j), code, "row {i}, feature {j}");
            }
        }
        for j in 0..p {
            let mut counts = vec![0usize; d.mapper.features[j].n_bins()];
            (0..n).for_each(|i| counts[d.code(i, j)] += 1);
            let top = (0..counts.len()).max_by_key(|&b| (counts[b], std::cmp::Reverse(b)));
            let expected = top.filter(|&b| counts[b] as f64 >= DEFAULT_BIN_SHARE * n as f64);
            assert_eq!(d.default_bins[j], expected, "feature {j}");
        }
        assert_eq!(d.default_bins.iter().filter(|b| b.is_some()).count(), 5);
        let sparse = d.sparse_rows.as_ref().expect("sparse rows");
        // Sparse data keeps no row-major copy.
        assert_eq!(d.row_code(0, 0), None);
        for i in 0..n {
            let expected: Vec<u32> = (0..p)
                .filter(|&j| d.default_bins[j] != Some(d.code(i, j)))
                .map(|j| (d.bin_offsets[j] + d.code(i, j)) as u32)
                .collect();
            assert_eq!(
                &sparse.bins[sparse.row_ptr[i]..sparse.row_ptr[i + 1]],
                &expected[..],
                "row {i}"
            );
        }
    }
}

/// Dense data over several row blocks, both input layouts: the
/// row-major copy (transposed from the feature-major codes) holds every
/// value's code.
#[test]
fn dense_data_keeps_a_row_major_copy_of_every_code() {
    let (n, p) = (2 * ROW_BLOCK + 777, 5);
    let value = |i: usize, j: usize| -> f64 {
        if (i + j).is_multiple_of(11) {
            f64::NAN
        } else {
            ((i * 31 + j * 17) % 23) as f64
        }
    };
    for d in binned_in_both_layouts(n, p, value) {
        assert!(d.sparse_rows.is_none());
        for i in 0..n {
            for j in 0..p {
                let code = d.mapper.features[j].bin(value(i, j));
                assert_eq!(
                    (d.code(i, j), d.row_code(i, j)),
                    (code, Some(code)),
                    "row {i}, feature {j}"
                );
            }
        }
    }
}
