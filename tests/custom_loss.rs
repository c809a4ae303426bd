//! A custom loss and custom metrics through the training `Monitor`: the
//! monitor's gradients of a built-in loss give the built-in model, and its
//! metrics are recorded and watched by early stopping like built-in ones.
mod common;

use rgbm_rs::booster::{EvalSet, Monitor, TrainingData, train};
use rgbm_rs::objective::Objective;
use rgbm_rs::params::{BoosterParams, Init, Loss};
use rgbm_rs::{DenseMatrix, RgbmError};

/// Supplies the gradients of `loss` (unweighted) and the mean absolute
/// error of the raw scores as a metric.
struct Supplier<'a> {
    loss: Objective,
    y: &'a [f64],
    eval_y: &'a [f64],
    calls: usize,
}

impl Monitor for Supplier<'_> {
    fn custom_gradients(
        &mut self,
        scores: &[f64],
        out: &mut [[f64; 2]],
    ) -> rgbm_rs::error::Result<()> {
        self.calls += 1;
        self.loss.gradients(self.y, scores, None, out);
        Ok(())
    }

    fn custom_metrics(
        &mut self,
        _set: usize,
        scores: &[f64],
    ) -> rgbm_rs::error::Result<Vec<(String, f64, bool)>> {
        let mae = self
            .eval_y
            .iter()
            .zip(scores)
            .map(|(y, f)| (y - f).abs())
            .sum::<f64>()
            / self.eval_y.len() as f64;
        Ok(vec![("my_mae".to_string(), mae, false)])
    }
}

#[test]
fn monitor_gradients_reproduce_the_builtin_loss_and_metrics_are_recorded() {
    let (n, p) = (1500, 4);
    let x = common::features(n, p, 3);
    let y = common::regression(&x, p, 4);
    let w: Vec<f64> = (0..n).map(|i| 0.5 + (i % 7) as f64 / 4.0).collect();
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    let base = BoosterParams {
        n_estimators: 25,
        init: Init::Zero,
        subsample: 0.8,
        random_state: 5,
        eval_metric: Some(vec![rgbm_rs::options::Metric::Mae]),
        ..Default::default()
    };
    let sets = [EvalSet {
        name: "train".into(),
        x: m.into(),
        y: &y,
        w: None,
        init_score: None,
        queries: None,
    }];
    let builtin = BoosterParams {
        loss: Loss::Squared,
        ..base.clone()
    };
    let custom = BoosterParams {
        loss: Loss::Custom,
        ..base
    };
    let mut supplier = Supplier {
        loss: Objective::from_params(&builtin),
        y: &y,
        eval_y: &y,
        calls: 0,
    };
    let a = TrainingData::new(&m, &y)
        .and_then(|d| d.with_weights(Some(&w)))
        .and_then(|d| train(&builtin, &d, &sets, &mut supplier))
        .unwrap();
    assert_eq!(supplier.calls, 0, "a built-in loss never asks the monitor");
    let b = TrainingData::new(&m, &y)
        .and_then(|d| d.with_weights(Some(&w)))
        .and_then(|d| train(&custom, &d, &sets, &mut supplier))
        .unwrap();
    assert_eq!(supplier.calls, 25);
    assert_eq!(a.model.trees, b.model.trees, "same trees, bit for bit");
    // Per set: the built-in mae, then the monitor's, which computes the same.
    let names: Vec<&str> = b.evals.iter().map(|h| h.metric.as_str()).collect();
    assert_eq!(names, ["mae", "my_mae"]);
    for (builtin_mae, my_mae) in b.evals[0].values.iter().zip(&b.evals[1].values) {
        assert!((builtin_mae - my_mae).abs() <= 1e-12 * builtin_mae.abs());
    }
}

#[test]
fn a_custom_loss_without_a_gradient_supplier_is_refused() {
    let (n, p) = (200, 3);
    let x = common::features(n, p, 1);
    let y = common::regression(&x, p, 2);
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    let params = BoosterParams {
        loss: Loss::Custom,
        n_estimators: 3,
        ..Default::default()
    };
    let Err(e) = TrainingData::new(&m, &y)
        .and_then(|d| train(&params, &d, &[], &mut rgbm_rs::booster::Unmonitored))
    else {
        panic!("a custom loss trained without gradients");
    };
    assert!(matches!(e, RgbmError::InvalidParameter { .. }), "{e}");
    assert!(e.to_string().contains("supplies the gradients"), "{e}");
}
