//! Several targets in one fit (`n_targets`, `alphas`): each output's trees
//! are bit for bit those of its single-target fit.
mod common;

use rgbm_rs::params::{BoosterParams, Loss, Step};
use rgbm_rs::{DenseMatrix, Model, TrainingData, Unmonitored, train};

const N: usize = 800;
const P: usize = 4;

fn fit_targets(params: &BoosterParams, x: &[f64], y: &[f64], k: usize, w: Option<&[f64]>) -> Model {
    let m = DenseMatrix::row_major(x, N, P).unwrap();
    let data = TrainingData::with_targets(&m, y, k)
        .unwrap()
        .with_weights(w)
        .unwrap();
    train(params, &data, &[], &mut Unmonitored).unwrap().model
}

fn fit_one(params: &BoosterParams, x: &[f64], y: &[f64], w: Option<&[f64]>) -> Model {
    let m = DenseMatrix::row_major(x, N, P).unwrap();
    common::trained(params, &m, y, w).unwrap().model
}

/// Output k's base score and trees (round by round) against a fit of one target.
fn assert_output_is(multi: &Model, k: usize, single: &Model) {
    assert_eq!(
        multi.base_score[k].to_bits(),
        single.base_score[0].to_bits()
    );
    let mine: Vec<_> = multi
        .trees
        .iter()
        .skip(k)
        .step_by(multi.n_outputs)
        .collect();
    assert_eq!(mine.len(), single.trees.len());
    for (a, b) in mine.iter().zip(&single.trees) {
        assert_eq!(**a, *b);
    }
}

#[test]
fn each_target_is_its_single_target_fit() {
    let x = common::features(N, P, 1);
    let targets: Vec<Vec<f64>> = (0..3).map(|s| common::regression(&x, P, 10 + s)).collect();
    let y: Vec<f64> = targets.concat();
    let w: Vec<f64> = (0..N).map(|i| 0.5 + (i % 7) as f64 / 4.0).collect();
    for loss in [Loss::Squared, Loss::Huber, Loss::AbsoluteError] {
        let one = BoosterParams {
            n_estimators: 12,
            loss,
            subsample: 0.7,
            random_state: 3,
            ..Default::default()
        };
        let params = BoosterParams {
            n_targets: Some(3),
            ..one.clone()
        };
        let multi = fit_targets(&params, &x, &y, 3, Some(&w));
        assert_eq!(multi.n_outputs, 3);
        for (k, t) in targets.iter().enumerate() {
            assert_output_is(&multi, k, &fit_one(&one, &x, t, Some(&w)));
        }
        let back = Model::from_json(&multi.to_json().unwrap()).unwrap();
        assert_eq!(back.to_json().unwrap(), multi.to_json().unwrap());
    }
}

#[test]
fn each_alpha_is_its_single_quantile_fit() {
    let x = common::features(N, P, 2);
    let y = common::regression(&x, P, 5);
    let alphas = [0.2, 0.5, 0.8];
    let params = BoosterParams {
        n_estimators: 10,
        loss: Loss::Quantile,
        n_targets: Some(3),
        alphas: Some(alphas.to_vec()),
        random_state: 1,
        ..Default::default()
    };
    let multi = fit_targets(&params, &x, &y.repeat(3), 3, None);
    for (k, &alpha) in alphas.iter().enumerate() {
        let one = BoosterParams {
            n_targets: None,
            alphas: None,
            alpha: Some(alpha),
            ..params.clone()
        };
        assert_output_is(&multi, k, &fit_one(&one, &x, &y, None));
    }
}

#[test]
fn what_several_targets_cannot_do_is_refused() {
    let x = common::features(N, P, 3);
    let y = common::regression(&x, P, 4).repeat(2);
    let m = DenseMatrix::row_major(&x, N, P).unwrap();
    let base = BoosterParams {
        n_targets: Some(2),
        ..Default::default()
    };
    let refused = |params: BoosterParams, k: usize, want: &str| {
        let err = TrainingData::with_targets(&m, &y, k)
            .and_then(|data| train(&params, &data, &[], &mut Unmonitored))
            .err()
            .unwrap_or_else(|| panic!("{want}: accepted"));
        assert!(err.to_string().contains(want), "{err}");
    };
    refused(
        BoosterParams {
            loss: Loss::Gaussian,
            ..base.clone()
        },
        2,
        "n_targets applies to losses",
    );
    refused(
        BoosterParams {
            step: Step::LineSearch,
            ..base.clone()
        },
        2,
        "line_search",
    );
    refused(base.clone(), 3, "not 3 targets per row");
    refused(
        BoosterParams {
            n_targets: Some(3),
            ..base.clone()
        },
        1,
        "X has 800 rows but y has 1600",
    );
    refused(
        BoosterParams {
            loss: Loss::Quantile,
            alphas: Some(vec![0.5, 0.2]),
            ..base.clone()
        },
        2,
        "strictly increasing",
    );
    refused(
        BoosterParams {
            loss: Loss::Quantile,
            alphas: Some(vec![0.2, 0.5, 0.7]),
            ..base
        },
        2,
        "n_targets = their count",
    );
}
