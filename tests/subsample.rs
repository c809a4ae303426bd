//! What the row subsample decides: the whole tree (`subsample_for = tree`)
//! or the splits only, with leaf values from every row (`split`); and SGLB
//! with leaf noise only.
mod common;

use rgbm_rs::params::{BoosterParams, Loss, SubsampleFor};
use rgbm_rs::{DenseMatrix, Model};

fn fit(params: &BoosterParams, x: &[f64], p: usize, y: &[f64]) -> Model {
    let m = DenseMatrix::row_major(x, y.len(), p).unwrap();
    common::trained(params, &m, y, None)
        .map(|t| t.model)
        .unwrap()
}

#[test]
fn split_subsampling_takes_leaf_values_from_every_row() {
    let (n, p) = (2000, 4);
    let x = common::features(n, p, 21);
    let y = common::regression(&x, p, 22);
    let params = BoosterParams {
        n_estimators: 1,
        subsample: 0.3,
        subsample_for: Some(SubsampleFor::Split),
        reg_lambda: 2.0,
        learning_rate: 0.5,
        random_state: 3,
        ..Default::default()
    };
    let model = fit(&params, &x, p, &y);
    let tree = &model.trees[0];
    // Oracle: squared loss from the mean, g = f - y, h = 1 on every row.
    let base = model.base_score[0];
    let mut sums = vec![(0.0, 0.0); tree.leaf_value.len()];
    for i in 0..n {
        let leaf = tree.leaf_index(|j| x[i * p + j]);
        sums[leaf].0 += base - y[i];
        sums[leaf].1 += 1.0;
    }
    for (v, (g, h)) in tree.leaf_value.iter().zip(&sums) {
        let expected = -0.5 * g / (h + 2.0);
        assert!(
            (v - expected).abs() <= 1e-12 * expected.abs().max(1.0),
            "{v} vs {expected}"
        );
    }
    // The splits were chosen on the 30 % sample: `tree` semantics shares them
    // but sums its leaves over the sample only.
    let sampled = fit(
        &BoosterParams {
            subsample_for: Some(SubsampleFor::Tree),
            ..params
        },
        &x,
        p,
        &y,
    );
    assert_eq!(sampled.trees[0].feature, tree.feature);
    assert_eq!(sampled.trees[0].threshold, tree.threshold);
    assert_ne!(sampled.trees[0].leaf_value, tree.leaf_value);
}

#[test]
fn without_subsampling_both_semantics_agree() {
    let (n, p) = (800, 3);
    let x = common::features(n, p, 23);
    let y = common::binary(&x, p, 24);
    let base = BoosterParams {
        loss: Loss::Logistic,
        n_estimators: 10,
        ..Default::default()
    };
    let split = BoosterParams {
        subsample_for: Some(SubsampleFor::Split),
        ..base.clone()
    };
    assert_eq!(fit(&base, &x, p, &y).trees, fit(&split, &x, p, &y).trees);
}

#[test]
fn sglb_without_split_noise_chooses_the_clean_splits() {
    let (n, p) = (1500, 5);
    let x = common::features(n, p, 25);
    let y = common::binary(&x, p, 26);
    let plain = BoosterParams {
        loss: Loss::Logistic,
        n_estimators: 1,
        random_state: 4,
        ..Default::default()
    };
    let leaf_only = BoosterParams {
        langevin: true,
        langevin_split_noise: Some(false),
        temperature: 1e3,
        ..plain.clone()
    };
    let full = BoosterParams {
        langevin_split_noise: Some(true),
        ..leaf_only.clone()
    };
    let (a, b, c) = (
        fit(&plain, &x, p, &y),
        fit(&leaf_only, &x, p, &y),
        fit(&full, &x, p, &y),
    );
    // Same structure as plain boosting, noisy leaves.
    assert_eq!(a.trees[0].feature, b.trees[0].feature);
    assert_eq!(a.trees[0].threshold, b.trees[0].threshold);
    assert_ne!(a.trees[0].leaf_value, b.trees[0].leaf_value);
    // The same leaf noise stream: with split noise the leaves differ only
    // where the structure does.
    if c.trees[0].feature == b.trees[0].feature && c.trees[0].threshold == b.trees[0].threshold {
        assert_eq!(c.trees[0].leaf_value, b.trees[0].leaf_value);
    }
}

#[test]
fn the_options_are_refused_where_they_mean_nothing() {
    let e = BoosterParams {
        langevin_split_noise: Some(false),
        ..Default::default()
    }
    .validate()
    .unwrap_err();
    assert!(e.to_string().contains("langevin=True"), "{e}");
    let e = BoosterParams {
        booster: rgbm_rs::params::BoosterKind::Rgb,
        max_depth: None,
        subsample_for: Some(SubsampleFor::Split),
        ..Default::default()
    }
    .validate()
    .unwrap_err();
    assert!(e.to_string().contains("subsample_for"), "{e}");
}
