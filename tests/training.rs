//! End-to-end properties of training: determinism, persistence, monotone
//! training loss, weights, and the documented error cases.
mod common;

use proptest::prelude::*;
use rgbm_rs::booster::{BeforeRound, TrainingData, train};
use rgbm_rs::model::{FORMAT_VERSION, ImportanceKind};
use rgbm_rs::objective::Objective;
use rgbm_rs::params::{BoosterParams, Init, Loss, Mode};
use rgbm_rs::{DenseMatrix, Model, RgbmError};

fn fit(params: &BoosterParams, x: &[f64], p: usize, y: &[f64], w: Option<&[f64]>) -> Model {
    let m = DenseMatrix::row_major(x, y.len(), p).unwrap();
    common::trained(params, &m, y, w).map(|t| t.model).unwrap()
}

fn params(loss: Loss) -> BoosterParams {
    BoosterParams {
        n_estimators: 20,
        loss,
        min_samples_leaf: 5,
        random_state: 11,
        ..Default::default()
    }
}

#[test]
fn same_seed_gives_the_same_model_for_one_and_two_threads() {
    let (n, p) = (3000, 4);
    let x = common::features(n, p, 1);
    let y = common::binary(&x, p, 2);
    for (max_depth, max_leaves, subsample) in [(Some(4), None, 1.0), (None, Some(15), 0.7)] {
        let base = BoosterParams {
            max_depth,
            max_leaves,
            subsample,
            ..params(Loss::Logistic)
        };
        let one = fit(
            &BoosterParams {
                n_jobs: Some(1),
                ..base.clone()
            },
            &x,
            p,
            &y,
            None,
        );
        let two = fit(
            &BoosterParams {
                n_jobs: Some(2),
                ..base.clone()
            },
            &x,
            p,
            &y,
            None,
        );
        assert_eq!(one.trees, two.trees);
        assert_eq!(
            one.base_score
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            two.base_score
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        );
        let other_seed = fit(
            &BoosterParams {
                random_state: 12,
                ..base.clone()
            },
            &x,
            p,
            &y,
            None,
        );
        if subsample < 1.0 {
            assert_ne!(
                one.trees, other_seed.trees,
                "the seed must matter when rows are sampled"
            );
        }
    }
}

#[test]
fn json_round_trip_preserves_model_and_predictions() {
    let (n, p) = (1500, 3);
    let x = common::features(n, p, 3);
    let y = common::regression(&x, p, 4);
    let model = fit(&params(Loss::Huber), &x, p, &y, None);
    let text = model.to_json().unwrap();
    let back = Model::from_json(&text).unwrap();
    assert_eq!(model, back);
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    let a = model.predict_raw(&m, None).unwrap();
    let b = back.predict_raw(&m, None).unwrap();
    assert!(a.iter().zip(&b).all(|(u, v)| u.to_bits() == v.to_bits()));
    // Models without category sets are written as format 2; a file
    // claiming a version this build does not read is refused.
    let current = "\"format_version\":2".to_string();
    assert!(text.contains(&current));
    let bumped = text.replacen(
        &current,
        &format!("\"format_version\":{}", FORMAT_VERSION + 1),
        1,
    );
    assert!(matches!(
        Model::from_json(&bumped),
        Err(RgbmError::ModelFormat(_))
    ));
    // Format 1 stored one base score as a plain number and had no n_outputs.
    let base = format!(
        "\"base_score\":[{}]",
        serde_json::to_string(&model.base_score[0]).unwrap()
    );
    assert!(text.contains(&base));
    let v1 = text
        .replacen(&current, "\"format_version\":1", 1)
        .replacen(&base, &base.replace(['[', ']'], ""), 1)
        .replacen("\"n_outputs\":1,", "", 1);
    let old = Model::from_json(&v1).unwrap();
    assert_eq!(old.base_score, model.base_score);
    assert_eq!(old.n_outputs, 1);
    assert_eq!(old.predict_raw(&m, None).unwrap(), a);
    assert!(Model::from_json("{").is_err());
}

#[test]
fn staged_tree_sums_equal_full_prediction() {
    let (n, p) = (800, 3);
    let x = common::features(n, p, 5);
    let y = common::binary(&x, p, 6);
    let model = fit(&params(Loss::Logistic), &x, p, &y, None);
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    let full = model.predict_raw(&m, None).unwrap();
    let mut acc = vec![model.base_score[0]; n];
    for t in 0..model.n_trees() {
        for (a, v) in acc
            .iter_mut()
            .zip(model.predict_trees(&m, t, t + 1).unwrap())
        {
            *a += v;
        }
    }
    assert!(acc.iter().zip(&full).all(|(a, b)| (a - b).abs() < 1e-9));
}

#[test]
fn integer_weights_equal_duplicated_rows() {
    // Few distinct values, so binning is identical with and without duplicates.
    let (n, p) = (400, 2);
    let x: Vec<f64> = common::features(n, p, 7)
        .iter()
        .map(|v| (v * 4.0).round())
        .collect();
    let y = common::regression(&x, p, 8);
    let w: Vec<f64> = (0..n).map(|i| (i % 3) as f64).collect();
    let mut xd = Vec::new();
    let mut yd = Vec::new();
    for i in 0..n {
        for _ in 0..(i % 3) {
            xd.extend_from_slice(&x[i * p..(i + 1) * p]);
            yd.push(y[i]);
        }
    }
    let prm = BoosterParams {
        min_samples_leaf: 1,
        n_estimators: 5,
        ..params(Loss::Squared)
    };
    let weighted = fit(&prm, &x, p, &y, Some(&w));
    let duplicated = fit(&prm, &xd, p, &yd, None);
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    let a = weighted.predict_raw(&m, None).unwrap();
    let b = duplicated.predict_raw(&m, None).unwrap();
    assert!(
        a.iter().zip(&b).all(|(u, v)| (u - v).abs() < 1e-9),
        "weighted and duplicated fits differ"
    );
}

#[test]
fn bad_inputs_are_errors_not_panics() {
    let x = common::features(50, 2, 9);
    let y = common::binary(&x, 2, 10);
    let m = DenseMatrix::row_major(&x, 50, 2).unwrap();
    let p = params(Loss::Logistic);
    let run = |y: &[f64], w: Option<&[f64]>| common::trained(&p, &m, y, w).map(|t| t.model);
    assert!(matches!(run(&y[..49], None), Err(RgbmError::Shape(_))));
    let mut bad = y.clone();
    bad[3] = f64::NAN;
    assert!(matches!(run(&bad, None), Err(RgbmError::NonFinite(_))));
    bad[3] = 2.0;
    assert!(matches!(run(&bad, None), Err(RgbmError::InvalidLabel(_))));
    assert!(matches!(
        run(&y, Some(&vec![-1.0; 50])),
        Err(RgbmError::NonFinite(_))
    ));
    assert!(matches!(
        run(&y, Some(&vec![0.0; 50])),
        Err(RgbmError::InvalidParameter { .. })
    ));
    let interrupted = TrainingData::new(&m, &y)
        .and_then(|d| {
            train(
                &p,
                &d,
                &[],
                &mut BeforeRound(&mut |r| {
                    if r == 3 {
                        Err(RgbmError::Interrupted)
                    } else {
                        Ok(())
                    }
                }),
            )
        })
        .map(|t| t.model);
    assert_eq!(interrupted.unwrap_err(), RgbmError::Interrupted);
    let model = fit(&p, &x, 2, &y, None);
    let three = DenseMatrix::row_major(&x[..48], 16, 3).unwrap();
    assert!(matches!(
        model.predict_raw(&three, None),
        Err(RgbmError::Shape(_))
    ));
}

fn mean_loss_curve(params: &BoosterParams, x: &[f64], p: usize, y: &[f64]) -> Vec<f64> {
    let n = y.len();
    let model = fit(params, x, p, y, None);
    let m = DenseMatrix::row_major(x, n, p).unwrap();
    let obj = Objective::from_params(params);
    (0..=model.n_trees())
        .map(|k| obj.mean_loss(y, &model.predict_raw(&m, Some(k)).unwrap(), None))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Newton boosting with a small learning rate never increases the training
    /// loss of a convex loss with a bounded hessian (squared, logistic).
    #[test]
    fn small_newton_steps_decrease_training_loss(seed in 0u64..1000, logistic in any::<bool>(), depth in 1usize..4) {
        let (n, p) = (300, 3);
        let x = common::features(n, p, seed);
        let (loss, y) = if logistic { (Loss::Logistic, common::binary(&x, p, seed + 1)) } else { (Loss::Squared, common::regression(&x, p, seed + 1)) };
        let prm = BoosterParams { n_estimators: 8, learning_rate: 0.1, max_depth: Some(depth), min_samples_leaf: 3, loss, gain: Mode::Newton, leaf: Mode::Newton, init: Init::Zero, ..Default::default() };
        let curve = mean_loss_curve(&prm, &x, p, &y);
        for w in curve.windows(2) {
            prop_assert!(w[1] <= w[0] + 1e-12, "loss went up: {:?}", curve);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// save -> load gives the same model and bit-identical predictions, for
    /// every loss (incl. multi-output ones), growth policy, SGLB and RGB.
    #[test]
    fn json_round_trip_predicts_identically(seed in 0u64..1000, kind in 0usize..6, leaves in any::<bool>(), f32_input in any::<bool>()) {
        let (n, p) = (200, 3);
        let x = common::features(n, p, seed);
        let (loss, n_classes, y) = match kind {
            0 => (Loss::Squared, None, common::regression(&x, p, seed + 1)),
            1 => (Loss::Huber, None, common::regression(&x, p, seed + 1)),
            2 | 3 => (Loss::Logistic, None, common::binary(&x, p, seed + 1)),
            4 => (Loss::Gaussian, None, common::regression(&x, p, seed + 1)),
            _ => (Loss::Softmax, Some(3), common::regression(&x, p, seed + 1).iter().map(|v| (v.abs() * 3.0).floor().min(2.0)).collect()),
        };
        let mut prm = BoosterParams {
            n_estimators: 6, loss, n_classes, min_samples_leaf: 3, random_state: seed,
            max_depth: if leaves { None } else { Some(3) }, max_leaves: if leaves { Some(7) } else { None },
            ..Default::default()
        };
        if kind == 3 { prm.langevin = true; prm.temperature = 100.0; }
        if kind == 2 && !leaves { prm.booster = rgbm_rs::params::BoosterKind::Rgb; prm.max_depth = None; }
        let model = fit(&prm, &x, p, &y, None);
        let back = Model::from_json(&model.to_json().unwrap()).unwrap();
        prop_assert_eq!(&model, &back);
        let (a, b) = if f32_input {
            let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let m = DenseMatrix::row_major(&xf, n, p).unwrap();
            (model.predict_raw(&m, None).unwrap(), back.predict_raw(&m, None).unwrap())
        } else {
            let m = DenseMatrix::row_major(&x, n, p).unwrap();
            (model.predict_raw(&m, None).unwrap(), back.predict_raw(&m, None).unwrap())
        };
        prop_assert!(a.iter().zip(&b).all(|(u, v)| u.to_bits() == v.to_bits()));
    }
}

#[test]
fn gaussian_log_std_is_bounded_on_load_and_in_fits() {
    let (n, p) = (400, 3);
    let x = common::features(n, p, 5);
    let y = common::regression(&x, p, 6);
    let model = fit(&params(Loss::Gaussian), &x, p, &y, None);
    let limit = rgbm_rs::objective::Gaussian::MAX_ABS_LOG_STD;
    // Tree 2r + 1 is round r's log-σ tree; the mean trees are not bounded by it.
    let mut bad = model.clone();
    bad.trees[3].leaf_value[0] = limit * 1.01;
    let err = Model::from_json(&bad.to_json().unwrap()).unwrap_err();
    assert!(err.to_string().contains("tree 3: leaf 0"), "{err}");
    let mut bad = model.clone();
    bad.base_score[1] = -limit * 1.01;
    assert!(Model::from_json(&bad.to_json().unwrap()).is_err());
    let mut fine = model.clone();
    fine.trees[2].leaf_value[0] = limit * 1.01;
    Model::from_json(&fine.to_json().unwrap()).unwrap();
    // A diverging fit stops at the round whose log-σ tree leaves the bound.
    let wild = BoosterParams {
        learning_rate: 1000.0,
        ..params(Loss::Gaussian)
    };
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    let err = common::trained(&wild, &m, &y, None)
        .map(|t| t.model)
        .unwrap_err();
    assert!(err.to_string().contains("diverged"), "{err}");
}

#[test]
fn gain_importances_cannot_overflow() {
    let (n, p) = (600, 3);
    let x = common::features(n, p, 7);
    let y = common::regression(&x, p, 8);
    let mut model = fit(&params(Loss::Squared), &x, p, &y, None);
    for t in &mut model.trees {
        t.gain.iter_mut().for_each(|g| *g = f64::MAX);
    }
    let back = Model::from_json(&model.to_json().unwrap()).unwrap();
    let gain = back.feature_importances(ImportanceKind::Gain);
    let split = back.feature_importances(ImportanceKind::Split);
    assert!(gain.iter().all(|v| v.is_finite()));
    for (g, s) in gain.iter().zip(&split) {
        assert!((g - s).abs() < 1e-12, "{gain:?} vs {split:?}");
    }
}
