//! Extreme but accepted inputs and parameters: the fit either gives the
//! model the documentation promises or a clear error, never a silent
//! non-finite or degenerate model.
mod common;

use rgbm_rs::params::{BoosterParams, Loss};
use rgbm_rs::{DenseMatrix, Model, RgbmError, train};

fn fit(
    params: &BoosterParams,
    x: &[f64],
    p: usize,
    y: &[f64],
    w: Option<&[f64]>,
) -> Result<Model, RgbmError> {
    let m = DenseMatrix::row_major(x, y.len(), p).unwrap();
    train(params, &m, y, w, &mut |_| Ok(()))
}

fn params(loss: Loss) -> BoosterParams {
    BoosterParams {
        n_estimators: 10,
        loss,
        min_samples_leaf: 1,
        random_state: 3,
        n_jobs: Some(2),
        ..Default::default()
    }
}

/// A draw that picks no row trains on one random row, not on all of them:
/// each tree is then a single leaf holding ν times that row's residual.
#[test]
fn an_empty_subsample_draw_uses_one_row() {
    let (n, p) = (200, 3);
    let x = common::features(n, p, 1);
    let y = common::regression(&x, p, 2);
    let tiny = BoosterParams {
        subsample: 1e-6,
        ..params(Loss::Squared)
    };
    let model = fit(&tiny, &x, p, &y, None).unwrap();
    let mean = y.iter().sum::<f64>() / n as f64;
    assert!((model.base_score[0] - mean).abs() < 1e-12);
    assert!(model.trees.iter().all(|t| t.n_leaves() == 1));
    let first = model.trees[0].leaf_value[0];
    assert!(
        y.iter().any(|&v| (first - 0.1 * (v - mean)).abs() < 1e-12),
        "the first leaf {first} is not 0.1 x the residual of any row"
    );
    let full = fit(&params(Loss::Squared), &x, p, &y, None).unwrap();
    assert!(full.trees.iter().all(|t| t.n_leaves() > 1));
}
