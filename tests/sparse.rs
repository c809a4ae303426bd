//! A fit on a sparse matrix is the fit on the same matrix dense: the same
//! model JSON, the same predictions, bit for bit, whatever the layout the
//! rows are predicted from.
mod common;
use rgbm_rs::booster::{EvalSet, TrainingData, Unmonitored, train};
use rgbm_rs::data::matrix::Element;
use rgbm_rs::data::sparse::{SparseLayout, SparseMatrix};
use rgbm_rs::params::{BoosterKind, BoosterParams, Loss, Selection, SelectionSize};
use rgbm_rs::{DenseMatrix, Model};

/// Row-major data with about `density` nonzeros per entry: negative
/// values, NaN, -0.0 and a few dense continuous columns.
fn data(n: usize, p: usize, density: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut x = vec![0.0; n * p];
    let mut y = vec![0.0; n];
    for i in 0..n {
        for j in 0..p {
            let u = next();
            let dense_col = j % 7 == 6;
            if !dense_col && u >= density {
                continue;
            }
            let r = next();
            x[i * p + j] = if r < 0.03 {
                f64::NAN
            } else if r < 0.06 {
                -0.0
            } else if j % 3 == 0 {
                1.0
            } else {
                (r - 0.4) * 8.0
            };
        }
        let v = |j: usize| {
            let v = x[i * p + j % p];
            if v.is_nan() { 0.5 } else { v }
        };
        y[i] = v(0) + 2.0 * v(1) - v(2) * v(6) + next() * 0.3;
    }
    (x, y)
}

/// Compressed arrays of a row-major matrix; every fifth zero stored explicitly.
fn compress<T: Element>(
    x: &[T],
    n: usize,
    p: usize,
    layout: SparseLayout,
) -> (Vec<i64>, Vec<i32>, Vec<T>) {
    let (major, minor) = match layout {
        SparseLayout::Csr => (n, p),
        SparseLayout::Csc => (p, n),
    };
    let (mut indptr, mut indices, mut values) = (vec![0i64], Vec::new(), Vec::new());
    for k in 0..major {
        for i in 0..minor {
            let (r, c) = match layout {
                SparseLayout::Csr => (k, i),
                SparseLayout::Csc => (i, k),
            };
            let v = x[r * p + c];
            if v.to_f64() != 0.0 || (r + c) % 5 == 0 {
                indices.push(i as i32);
                values.push(v);
            }
        }
        indptr.push(indices.len() as i64);
    }
    (indptr, indices, values)
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|v| v.to_bits()).collect()
}

/// Trains on `x` dense and as CSC (with a CSR evaluation set in the sparse
/// fit, a dense one in the dense fit) and compares models, evaluation
/// histories and predictions from dense, CSR and CSC input.
fn check<T: Element>(
    params: &BoosterParams,
    x: &[T],
    n: usize,
    p: usize,
    y: &[f64],
    w: Option<&[f64]>,
) {
    let dense = DenseMatrix::row_major(x, n, p).unwrap();
    let csc = compress(x, n, p, SparseLayout::Csc);
    let csr = compress(x, n, p, SparseLayout::Csr);
    let sparse_csc = SparseMatrix::new(SparseLayout::Csc, n, p, &csc.0, &csc.1, &csc.2).unwrap();
    let sparse_csr = SparseMatrix::new(SparseLayout::Csr, n, p, &csr.0, &csr.1, &csr.2).unwrap();
    let half = n / 2;
    let eval_y = &y[..half];
    let dense_eval = DenseMatrix::row_major(&x[..half * p], half, p).unwrap();
    let part = compress(&x[..half * p], half, p, SparseLayout::Csr);
    let sparse_eval =
        SparseMatrix::new(SparseLayout::Csr, half, p, &part.0, &part.1, &part.2).unwrap();
    let set = |x| {
        vec![EvalSet {
            name: "valid".into(),
            x,
            y: eval_y,
            w: None,
            init_score: None,
            queries: None,
        }]
    };
    let a = TrainingData::new(&dense, y)
        .and_then(|d| d.with_weights(w))
        .and_then(|d| train(params, &d, &set(dense_eval.into()), &mut Unmonitored))
        .unwrap();
    for x in [sparse_csc, sparse_csr] {
        let b = TrainingData::new(&x, y)
            .and_then(|d| d.with_weights(w))
            .and_then(|d| train(params, &d, &set(sparse_eval.into()), &mut Unmonitored))
            .unwrap();
        let json = |m: &Model| m.to_json().unwrap();
        assert_eq!(
            json(&a.model),
            json(&b.model),
            "{:?} {params:?}",
            x.layout()
        );
        assert_eq!(a.evals.len(), b.evals.len());
        for (ha, hb) in a.evals.iter().zip(&b.evals) {
            assert_eq!(bits(&ha.values), bits(&hb.values));
        }
    }
    let expected = a.model.predict_raw(&dense, None).unwrap();
    assert_eq!(
        bits(&expected),
        bits(&a.model.predict_raw(&sparse_csr, None).unwrap())
    );
    assert_eq!(
        bits(&expected),
        bits(&a.model.predict_raw(&sparse_csc, None).unwrap())
    );
    // A few rows take the row-by-row path.
    let few = compress(&x[..7 * p], 7, p, SparseLayout::Csr);
    let few = SparseMatrix::new(SparseLayout::Csr, 7, p, &few.0, &few.1, &few.2).unwrap();
    assert_eq!(
        bits(&expected[..7 * a.model.n_outputs]),
        bits(&a.model.predict_raw(&few, None).unwrap())
    );
}

fn base() -> BoosterParams {
    BoosterParams {
        n_estimators: 12,
        random_state: 5,
        n_jobs: Some(2),
        ..Default::default()
    }
}

#[test]
fn sparse_fits_equal_dense_fits() {
    for (n, p, density) in [(600, 9, 0.1), (1500, 20, 0.02), (900, 5, 0.6)] {
        let (x, y) = data(n, p, density, n as u64);
        let w: Vec<f64> = (0..n).map(|i| ((i * 7) % 5) as f64 * 0.5).collect();
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let params = base();
        check(&params, &x, n, p, &y, None);
        check(&params, &x32, n, p, &y, Some(&w));
        let subsample = BoosterParams {
            subsample: 0.6,
            max_depth: None,
            max_leaves: Some(9),
            ..base()
        };
        check(&subsample, &x, n, p, &y, Some(&w));
        let labels: Vec<f64> = y.iter().map(|&v| f64::from(v > 0.5)).collect();
        let logistic = BoosterParams {
            loss: Loss::Logistic,
            selection: Selection::Random,
            selection_size: Some(SelectionSize::Count(3)),
            max_bins: 7,
            ..base()
        };
        check(&logistic, &x32, n, p, &labels, None);
        let rgb = BoosterParams {
            loss: Loss::Logistic,
            booster: BoosterKind::Rgb,
            rgb_candidates: 2,
            subsample: 0.8,
            ..base()
        };
        check(&rgb, &x, n, p, &labels, None);
        let classes: Vec<f64> = y
            .iter()
            .map(|&v| (v.clamp(-1.0, 1.9) + 1.0).floor())
            .collect();
        let softmax = BoosterParams {
            loss: Loss::Softmax,
            n_classes: Some(3),
            ..base()
        };
        check(&softmax, &x, n, p, &classes, Some(&w));
    }
}

#[test]
fn sparse_inputs_are_checked_like_dense_ones() {
    let (x, y) = data(50, 4, 0.3, 1);
    let mut x = x;
    x[13 * 4 + 2] = f64::INFINITY;
    let csc = compress(&x, 50, 4, SparseLayout::Csc);
    let m = SparseMatrix::new(SparseLayout::Csc, 50, 4, &csc.0, &csc.1, &csc.2).unwrap();
    let e = common::trained(&base(), &m, &y, None).err().unwrap();
    assert!(e.to_string().contains("row 13, column 2"), "{e}");
    x[13 * 4 + 2] = 0.0;
    let csc = compress(&x, 50, 4, SparseLayout::Csc);
    let m = SparseMatrix::new(SparseLayout::Csc, 50, 4, &csc.0, &csc.1, &csc.2).unwrap();
    let model = common::trained(&base(), &m, &y, None).unwrap().model;
    // Wrong width at prediction.
    let wide = SparseMatrix::new(SparseLayout::Csr, 1, 5, &[0, 1], &[4], &[1.0]).unwrap();
    assert!(model.predict_raw(&wide, None).is_err());
}

/// Columns with fewer than `min_samples_leaf` rows outside their most
/// common value can split no node; binning leaves them out of sparse data.
/// The fit equals the fit on the matrix without those columns (the same
/// splits: predictions agree to rounding, the histograms being summed in
/// other chunks).
#[test]
fn columns_no_split_can_use_change_nothing() {
    let (n, p) = (3000, 60);
    let (mut x, y) = data(n, p, 0.003, 11);
    // Columns 0, 1, 2 and every fifth carry the signal, densely enough to be
    // split; the others keep a handful of entries.
    for i in 0..n {
        for j in [0, 1, 2] {
            x[i * p + j] = ((i * (j + 3)) % 17) as f64 - 8.0;
        }
        for j in (5..p).step_by(5) {
            if (i + j) % 40 == 0 {
                x[i * p + j] = (i % 7) as f64;
            }
        }
    }
    let params = BoosterParams {
        min_samples_leaf: 20,
        ..base()
    };
    let nonzero = |j: usize| (0..n).filter(|&i| x[i * p + j] != 0.0).count();
    let kept: Vec<usize> = (0..p).filter(|&j| nonzero(j) >= 20).collect();
    assert!(kept.len() > 10 && kept.len() < p / 2, "{kept:?}");
    let narrow: Vec<f64> = (0..n)
        .flat_map(|i| kept.iter().map(move |&j| (i, j)))
        .map(|(i, j)| x[i * p + j])
        .collect();
    let q = kept.len();
    let wide = compress(&x, n, p, SparseLayout::Csr);
    let wide = SparseMatrix::new(SparseLayout::Csr, n, p, &wide.0, &wide.1, &wide.2).unwrap();
    let cut = compress(&narrow, n, q, SparseLayout::Csr);
    let cut = SparseMatrix::new(SparseLayout::Csr, n, q, &cut.0, &cut.1, &cut.2).unwrap();
    let a = common::trained(&params, &wide, &y, None).unwrap();
    let b = common::trained(&params, &cut, &y, None).unwrap();
    let pa = a.model.predict_raw(&wide, None).unwrap();
    let pb = b.model.predict_raw(&cut, None).unwrap();
    for (u, v) in pa.iter().zip(&pb) {
        assert!((u - v).abs() <= 1e-9 * (1.0 + v.abs()), "{u} vs {v}");
    }
    // Every split is on a kept column, and the kept columns are used.
    let mut split_on = std::collections::BTreeSet::new();
    for t in &a.model.trees {
        split_on.extend(t.feature.iter().map(|&f| f as usize));
    }
    assert!(split_on.len() > 3, "{split_on:?}");
    assert!(split_on.iter().all(|j| kept.contains(j)), "{split_on:?}");
}

/// Wide sparse rows are predicted by looking each split's value up in the
/// stored entries instead of writing blocks of rows out dense: the same
/// scores and leaves as the dense matrix gives, bit for bit.
#[test]
fn wide_sparse_predictions_equal_dense_ones() {
    let (n, p) = (900, 2500);
    let (mut x, y) = data(n, p, 0.002, 3);
    for i in 0..n {
        // No dense columns; a few columns the trees can split on.
        for j in (6..p).step_by(7) {
            x[i * p + j] = 0.0;
        }
        for j in 0..4 {
            x[i * p + 10 * j] = ((i * (j + 5)) % 13) as f64;
        }
    }
    let dense = DenseMatrix::row_major(&x, n, p).unwrap();
    let params = BoosterParams {
        n_estimators: 8,
        loss: Loss::Softmax,
        n_classes: Some(3),
        ..base()
    };
    let classes: Vec<f64> = y
        .iter()
        .map(|&v| (v.clamp(-1.0, 1.9) + 1.0).floor())
        .collect();
    let fit = common::trained(&params, &dense, &classes, None).unwrap();
    let never = rgbm_rs::cancel::Cancel::never();
    let scores = fit.model.predict_raw(&dense, None).unwrap();
    let leaves = fit
        .model
        .predict_leaves_cancellable(&dense, &never)
        .unwrap();
    for layout in [SparseLayout::Csr, SparseLayout::Csc] {
        let a = compress(&x, n, p, layout);
        let sx = SparseMatrix::new(layout, n, p, &a.0, &a.1, &a.2).unwrap();
        assert_eq!(
            bits(&scores),
            bits(&fit.model.predict_raw(&sx, None).unwrap())
        );
        assert_eq!(
            leaves,
            fit.model.predict_leaves_cancellable(&sx, &never).unwrap()
        );
    }
}
