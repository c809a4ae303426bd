//! Seeded synthetic data shared by the integration tests.
#![allow(dead_code)]
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Row-major features in [-2, 2) with ~5% NaN in the first column.
pub fn features(n: usize, p: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n * p)
        .map(|k| {
            if k % p == 0 && rng.random_bool(0.05) {
                f64::NAN
            } else {
                rng.random_range(-2.0..2.0)
            }
        })
        .collect()
}

fn signal(row: &[f64]) -> f64 {
    let v = |j: usize| if row[j].is_nan() { 0.5 } else { row[j] };
    v(0) * v(1 % row.len()) + (2.0 * v(2 % row.len())).sin()
}

/// A regression target with noise.
pub fn regression(x: &[f64], p: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    x.chunks(p)
        .map(|r| signal(r) + rng.random_range(-0.3..0.3))
        .collect()
}

/// 0/1 labels drawn from sigmoid(2·signal).
pub fn binary(x: &[f64], p: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    x.chunks(p)
        .map(|r| {
            let prob = 1.0 / (1.0 + (-2.0 * signal(r)).exp());
            if rng.random_bool(prob) { 1.0 } else { 0.0 }
        })
        .collect()
}

/// A fit of `params` on `x`, `y` and optional weights, with no evaluation
/// sets and no monitor.
pub fn trained<T: rgbm_rs::data::matrix::Element>(
    params: &rgbm_rs::BoosterParams,
    x: &impl rgbm_rs::data::matrix::AsMatrix<T>,
    y: &[f64],
    w: Option<&[f64]>,
) -> rgbm_rs::Result<rgbm_rs::Trained> {
    let data = rgbm_rs::TrainingData::new(x, y)?.with_weights(w)?;
    rgbm_rs::train(params, &data, &[], &mut rgbm_rs::Unmonitored)
}
