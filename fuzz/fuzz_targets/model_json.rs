//! Fuzz target: the model parser and everything a loaded model can be asked.
//!
//! Arbitrary bytes (lossily decoded as UTF-8) go to `Model::from_json`. When
//! a model loads, it is used the way a user would use it: raw predictions on
//! a small fixed matrix (in f64 and f32, full and staged), the virtual
//! ensemble, truncation, importances and a JSON round trip. Every call may
//! return `Err`, but none may panic, hang or allocate absurdly: `from_json`
//! promises that loading validates everything prediction relies on.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rgbm_rs::cancel::Cancel;
use rgbm_rs::model::ImportanceKind;
use rgbm_rs::{DenseMatrix, Model};

/// Rows of the fixed prediction matrix.
const ROWS: usize = 5;
/// Models with more features than this are parsed and validated only.
const MAX_PREDICT_FEATURES: usize = 64;

/// A fixed row-major ROWS x n_features matrix that hits both sides of
/// typical thresholds, zero, large magnitudes and NaN (missing).
fn matrix_values(n_features: usize) -> Vec<f64> {
    const PATTERN: [f64; 11] = [0.0, -1.5, 2.25, f64::NAN, 1e300, -1e300, 0.5, -0.0, 3.0, f64::MIN_POSITIVE, -7.0];
    (0..ROWS * n_features).map(|i| PATTERN[(i * 7 + i / n_features) % PATTERN.len()]).collect()
}

fn exercise(model: &Model) {
    // Things that need no matrix.
    let _ = model.n_rounds();
    let _ = model.objective();
    let _ = model.feature_importances(ImportanceKind::Gain);
    let _ = model.feature_importances(ImportanceKind::Split);
    if let Ok(text) = model.to_json() {
        let _ = Model::from_json(&text);
    }

    let p = model.n_features;
    if p > MAX_PREDICT_FEATURES {
        return;
    }
    let values = matrix_values(p);
    let x = DenseMatrix::row_major(&values, ROWS, p).expect("fixed matrix has the right size");
    let values32: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    let x32 = DenseMatrix::row_major(&values32, ROWS, p).expect("fixed matrix has the right size");
    let col_values: Vec<f64> = (0..ROWS * p).map(|k| values[(k % ROWS) * p + k / ROWS]).collect();
    let xf = DenseMatrix::col_major(&col_values, ROWS, p).expect("fixed matrix has the right size");

    let _ = model.predict_raw(&x, None);
    let _ = model.predict_raw(&x32, None);
    let _ = model.predict_raw(&xf, Some(1));
    let _ = model.predict_raw(&x, Some(usize::MAX));
    let n_trees = model.n_trees();
    let _ = model.predict_trees(&x, 0, n_trees);
    let _ = model.predict_trees(&x, n_trees / 2, n_trees);
    let _ = model.predict_trees(&x, n_trees, n_trees + 1); // out of range: must be Err

    // The virtual ensemble needs 2 rounds per member; asking with too few
    // rounds (or too few members) must be an error, not a panic.
    let _ = model.virtual_ensemble(&x, 2, &Cancel::never());
    let _ = model.virtual_ensemble(&x32, 3, &Cancel::never());
    let _ = model.virtual_ensemble(&x, 1, &Cancel::never());
    let _ = model.virtual_ensemble(&x, usize::MAX / 2 + 1, &Cancel::never()); // 2·n overflows usize
    let _ = model.virtual_ensemble(&x, usize::MAX, &Cancel::never());

    for n in [0, 1, model.n_rounds(), model.n_rounds() + 1, usize::MAX] {
        if let Ok(t) = model.truncated(n) {
            let _ = t.predict_raw(&x, None);
            let _ = t.to_json();
        }
    }

    // A matrix of the wrong width must be rejected.
    let wide: Vec<f64> = vec![0.0; ROWS * (p + 1)];
    let xw = DenseMatrix::row_major(&wide, ROWS, p + 1).expect("sized to fit");
    let _ = model.predict_raw(&xw, None);
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(model) = Model::from_json(&text) {
        exercise(&model);
    }
});
