//! Training from a dataset binned once: the same model as training on the
//! raw rows, whole or on a subset of rows, without binning again.
mod common;

use rgbm_rs::booster::{Unmonitored, bin_for_training};
use rgbm_rs::cancel::Cancel;
use rgbm_rs::data::BinnedDataset;
use rgbm_rs::params::{BoosterKind, BoosterParams, Loss, SubsampleFor};
use rgbm_rs::{DenseMatrix, Model, RgbmError, TrainingData, train};

fn raw(params: &BoosterParams, x: &[f64], p: usize, y: &[f64], w: Option<&[f64]>) -> Model {
    let m = DenseMatrix::row_major(x, y.len(), p).unwrap();
    let data = TrainingData::new(&m, y).unwrap().with_weights(w).unwrap();
    train(params, &data, &[], &mut Unmonitored).unwrap().model
}

fn binned(params: &BoosterParams, d: &BinnedDataset, y: &[f64], w: Option<&[f64]>) -> Model {
    let data = TrainingData::<f64>::binned(d, y)
        .unwrap()
        .with_weights(w)
        .unwrap();
    train(params, &data, &[], &mut Unmonitored).unwrap().model
}

fn bin(params: &BoosterParams, x: &[f64], p: usize, y: &[f64], w: Option<&[f64]>) -> BinnedDataset {
    let m = DenseMatrix::row_major(x, y.len(), p).unwrap();
    let data = TrainingData::new(&m, y).unwrap().with_weights(w).unwrap();
    bin_for_training(params, &data, &Cancel::never()).unwrap()
}

fn json(m: &Model) -> String {
    m.to_json().unwrap()
}

#[test]
fn a_binned_dataset_trains_the_model_of_its_raw_rows() {
    let (n, p) = (1500, 5);
    let mut x = common::features(n, p, 5);
    // Missing values and a categorical column route by their bins too.
    for i in (0..n).step_by(7) {
        x[i * p + 1] = f64::NAN;
    }
    for i in 0..n {
        x[i * p + 4] = (i % 6) as f64;
    }
    let y = common::regression(&x, p, 6);
    let w: Vec<f64> = (0..n).map(|i| 0.5 + (i % 3) as f64).collect();
    let base = BoosterParams {
        n_estimators: 8,
        max_bins: 31,
        categorical_features: Some(vec![4]),
        random_state: 4,
        ..Default::default()
    };
    let sampled = BoosterParams {
        subsample: 0.5,
        subsample_for: Some(SubsampleFor::Split),
        ..base.clone()
    };
    let rgb = BoosterParams {
        booster: BoosterKind::Rgb,
        subsample: 0.7,
        ..base.clone()
    };
    for params in [base, sampled, rgb] {
        for weights in [None, Some(&w[..])] {
            let d = bin(&params, &x, p, &y, weights);
            assert_eq!(
                json(&binned(&params, &d, &y, weights)),
                json(&raw(&params, &x, p, &y, weights)),
                "{params:?}"
            );
        }
    }
}

#[test]
fn a_subset_keeps_the_bins_and_equals_binning_its_rows_with_them() {
    let (n, p) = (1200, 4);
    let x = common::features(n, p, 7);
    let y = common::binary(&x, p, 8);
    let params = BoosterParams {
        loss: Loss::Logistic,
        n_estimators: 6,
        min_samples_leaf: 5,
        random_state: 1,
        ..Default::default()
    };
    let full = bin(&params, &x, p, &y, None);
    let rows: Vec<usize> = (0..n).filter(|i| i % 3 != 1).collect();
    let sub = full.subset(&rows, &Cancel::never()).unwrap();
    assert_eq!(sub.n_rows(), rows.len());
    assert_eq!(sub.mapper(), full.mapper());
    let xs: Vec<f64> = rows
        .iter()
        .flat_map(|&i| x[i * p..(i + 1) * p].to_vec())
        .collect();
    let ys: Vec<f64> = rows.iter().map(|&i| y[i]).collect();
    for (i, &r) in rows.iter().enumerate() {
        for j in 0..p {
            assert_eq!(sub.code(i, j), full.code(r, j));
        }
    }
    let m = DenseMatrix::row_major(&xs, rows.len(), p).unwrap();
    // The reference: the subset's raw rows binned with the full data's bins.
    let reference = BinnedDataset::with_bins_of(&m, &full, &Cancel::never()).unwrap();
    assert_eq!(
        json(&binned(&params, &sub, &ys, None)),
        json(&binned(&params, &reference, &ys, None))
    );
}

#[test]
fn a_binned_dataset_refuses_other_binning_options_and_bad_rows() {
    let (n, p) = (300, 3);
    let x = common::features(n, p, 9);
    let y = common::regression(&x, p, 10);
    let params = BoosterParams {
        n_estimators: 2,
        ..Default::default()
    };
    let d = bin(&params, &x, p, &y, None);
    let run = |q: &BoosterParams| {
        let data = TrainingData::<f64>::binned(&d, &y).unwrap();
        train(q, &data, &[], &mut Unmonitored).map(|_| ())
    };
    assert!(run(&params).is_ok());
    for (q, name) in [
        (
            BoosterParams {
                max_bins: 63,
                ..params.clone()
            },
            "max_bins",
        ),
        (
            BoosterParams {
                min_samples_leaf: 3,
                ..params.clone()
            },
            "min_samples_leaf",
        ),
        (
            BoosterParams {
                categorical_features: Some(vec![0]),
                ..params.clone()
            },
            "categorical_features",
        ),
    ] {
        let e = run(&q).unwrap_err();
        assert!(e.to_string().contains(name), "{e}");
    }
    assert!(matches!(
        TrainingData::<f64>::binned(&d, &y[1..]),
        Err(RgbmError::Shape(_))
    ));
    assert!(matches!(
        d.subset(&[0, n], &Cancel::never()),
        Err(RgbmError::Shape(_))
    ));
    assert!(matches!(
        d.subset(&[], &Cancel::never()),
        Err(RgbmError::EmptyInput(_))
    ));
}
