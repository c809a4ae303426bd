//! `summation="exact"`: the model does not depend on the order of the
//! training rows (the property a fit split across machines relies on), and
//! it stays as accurate as the plain `f64` fit.
mod common;

use rgbm_rs::params::{BoosterParams, Loss, Mode, Selection, SelectionSize, Step, Summation};
use rgbm_rs::{DenseMatrix, Model};

fn fit(params: &BoosterParams, x: &[f64], p: usize, y: &[f64], w: Option<&[f64]>) -> Model {
    let m = DenseMatrix::row_major(x, y.len(), p).unwrap();
    common::trained(params, &m, y, w).map(|t| t.model).unwrap()
}

/// Rows in a scrambled order (a fixed permutation with no structure).
fn permuted(x: &[f64], p: usize, y: &[f64], w: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = y.len();
    let order: Vec<usize> = (0..n).map(|i| (i * 7919 + 13) % n).collect();
    assert_eq!(
        order
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        n
    );
    let xp = order
        .iter()
        .flat_map(|&i| x[i * p..(i + 1) * p].iter().copied())
        .collect();
    let yp = order.iter().map(|&i| y[i]).collect();
    let wp = order.iter().map(|&i| w[i]).collect();
    (xp, yp, wp)
}

fn setups() -> Vec<(&'static str, BoosterParams)> {
    let base = BoosterParams {
        n_estimators: 30,
        max_depth: None,
        max_leaves: Some(15),
        summation: Some(Summation::Exact),
        ..Default::default()
    };
    vec![
        ("squared, best-first", base.clone()),
        (
            "logistic, depth-wise, lambda",
            BoosterParams {
                loss: Loss::Logistic,
                max_depth: Some(4),
                max_leaves: None,
                reg_lambda: 1.0,
                ..base.clone()
            },
        ),
        (
            "softmax, 3 classes",
            BoosterParams {
                loss: Loss::Softmax,
                n_classes: Some(3),
                ..base.clone()
            },
        ),
        (
            "RGBM groups, constant step",
            BoosterParams {
                loss: Loss::Logistic,
                selection: Selection::Groups,
                selection_size: Some(SelectionSize::Count(3)),
                step: Step::Constant,
                leaf: Mode::Gradient,
                random_state: 5,
                ..base.clone()
            },
        ),
        (
            "poisson",
            BoosterParams {
                loss: Loss::Poisson,
                ..base.clone()
            },
        ),
    ]
}

fn labels(name: &str, x: &[f64], p: usize) -> Vec<f64> {
    let r = common::regression(x, p, 32);
    if name.starts_with("softmax") {
        r.iter()
            .map(|v| (v + 1.5).clamp(0.0, 2.0).floor())
            .collect()
    } else if name.starts_with("poisson") {
        r.iter().map(|v| (v + 2.0).max(0.0).floor()).collect()
    } else if name.starts_with("squared") {
        r
    } else {
        common::binary(x, p, 33)
    }
}

#[test]
fn exact_models_do_not_depend_on_the_row_order() {
    let (n, p) = (3000, 6);
    let x = common::features(n, p, 31);
    let w: Vec<f64> = (0..n).map(|i| 0.5 + ((i * 37) % 11) as f64 / 7.0).collect();
    for (name, params) in setups() {
        let y = labels(name, &x, p);
        let (xp, yp, wp) = permuted(&x, p, &y, &w);
        for weights in [false, true] {
            let (w1, w2) = if weights {
                (Some(&w[..]), Some(&wp[..]))
            } else {
                (None, None)
            };
            let a = fit(&params, &x, p, &y, w1).to_json().unwrap();
            let b = fit(&params, &xp, p, &yp, w2).to_json().unwrap();
            assert!(a == b, "{name}, weights {weights}: models differ");
        }
    }
}

/// The float path does depend on the order here (so the test above checks
/// something), and the exact path's training loss matches it closely.
#[test]
fn float_models_differ_and_exact_ones_are_as_good() {
    let (n, p) = (3000, 6);
    let x = common::features(n, p, 31);
    let y = common::binary(&x, p, 33);
    let w: Vec<f64> = vec![1.0; n];
    let (xp, yp, _) = permuted(&x, p, &y, &w);
    let exact = setups().remove(1).1;
    let float = BoosterParams {
        summation: None,
        ..exact.clone()
    };
    let fa = fit(&float, &x, p, &y, None);
    let fb = fit(&float, &xp, p, &yp, None);
    assert_ne!(fa.to_json().unwrap(), fb.to_json().unwrap());
    let ea = fit(&exact, &x, p, &y, None);
    let logloss = |m: &Model| {
        let m_x = DenseMatrix::row_major(&x, n, p).unwrap();
        let f = m.predict_raw(&m_x, None).unwrap();
        f.iter()
            .zip(&y)
            .map(|(&f, &y)| (1.0 + (-f).exp()).ln() + (1.0 - y) * f)
            .sum::<f64>()
            / n as f64
    };
    let (le, lf) = (logloss(&ea), logloss(&fa));
    assert!((le - lf).abs() < 1e-6 * lf, "exact {le} vs float {lf}");
}

#[test]
fn exact_summation_refuses_loss_sum_rules() {
    for params in [
        BoosterParams {
            step: Step::LineSearch,
            ..Default::default()
        },
        BoosterParams {
            loss: Loss::Gaussian,
            ..Default::default()
        },
    ] {
        let exact = BoosterParams {
            summation: Some(Summation::Exact),
            ..params.clone()
        };
        assert!(params.validate().is_ok());
        let err = exact.validate().unwrap_err().to_string();
        assert!(err.contains("summation='exact'"), "{err}");
    }
}
