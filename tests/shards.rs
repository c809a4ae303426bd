//! Training on shards: every shard ends with the model of one fit on all
//! rows (`summation="exact"`), however the rows are split among shards.
mod common;

use rgbm_rs::booster::shard::ShardRows;
use rgbm_rs::booster::{TrainingData, Unmonitored, train};
use rgbm_rs::params::{
    BoosterKind, BoosterParams, Loss, Selection, SelectionScope, SelectionSize, Step, Summation,
};
use rgbm_rs::relay::{ShardFit, drive};
use rgbm_rs::{DenseMatrix, Model};

struct Data {
    x: Vec<f64>,
    p: usize,
    y: Vec<f64>,
    w: Option<Vec<f64>>,
}

fn local(params: &BoosterParams, d: &Data) -> Model {
    let m = DenseMatrix::row_major(&d.x, d.y.len(), d.p).unwrap();
    let w = d.w.as_deref();
    common::trained(params, &m, &d.y, w).unwrap().model
}

/// Partitions `bounds` (row ranges, in order) dealt to `k` shards round
/// robin; each shard trains on its partitions' rows.
fn sharded(params: &BoosterParams, d: &Data, bounds: &[usize], k: usize) -> Vec<Model> {
    let n = d.y.len();
    let mut shards: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (part, win) in bounds.windows(2).enumerate() {
        shards[part % k].extend(win[0]..win[1]);
    }
    let fits: Vec<ShardFit> = shards
        .into_iter()
        .filter(|rows| !rows.is_empty())
        .map(|rows| {
            let p = d.p;
            let x: Vec<f64> = rows
                .iter()
                .flat_map(|&i| d.x[i * p..(i + 1) * p].to_vec())
                .collect();
            let y: Vec<f64> = rows.iter().map(|&i| d.y[i]).collect();
            let w: Option<Vec<f64>> = d.w.as_ref().map(|w| rows.iter().map(|&i| w[i]).collect());
            let ids: Vec<u64> = rows.iter().map(|&i| i as u64).collect();
            let params = params.clone();
            ShardFit::start(Box::new(move |reduce, monitor| {
                let m = DenseMatrix::row_major(&x, y.len(), p)?;
                let rows = ShardRows {
                    reduce,
                    ids: Some(&ids),
                    n_total: n,
                };
                let data = TrainingData::new(&m, &y)?
                    .with_weights(w.as_deref())?
                    .on_shard(rows)?;
                train(&params, &data, &[], monitor)
            }))
            .unwrap()
        })
        .collect();
    drive(&fits, |_| false)
        .into_iter()
        .map(|r| r.unwrap().model)
        .collect()
}

/// The text around the first difference of two model files.
fn first_difference(a: &str, b: &str) -> String {
    let i = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let window = |s: &str| s[i.saturating_sub(80)..(i + 80).min(s.len())].to_string();
    format!("\n  got:      {}\n  expected: {}", window(a), window(b))
}

fn data(n: usize, p: usize, loss: Loss, weighted: bool) -> Data {
    let mut x = common::features(n, p, 41);
    for i in (0..n).step_by(17) {
        x[i * p + 1] = f64::NAN;
    }
    let r = common::regression(&x, p, 42);
    let y = match loss {
        Loss::Softmax => r
            .iter()
            .map(|v| (v + 1.5).clamp(0.0, 2.0).floor())
            .collect(),
        Loss::Logistic => common::binary(&x, p, 43),
        _ => r,
    };
    let w = weighted.then(|| {
        (0..n)
            .map(|i| 0.25 + ((i * 37) % 11) as f64 / 5.0)
            .collect()
    });
    Data { x, p, y, w }
}

fn setups() -> Vec<(&'static str, BoosterParams, bool)> {
    let base = BoosterParams {
        n_estimators: 12,
        max_depth: Some(4),
        summation: Some(Summation::Exact),
        ..Default::default()
    };
    vec![
        ("squared, depth-wise", base.clone(), false),
        (
            "logistic, best-first, weights",
            BoosterParams {
                loss: Loss::Logistic,
                max_depth: None,
                max_leaves: Some(12),
                ..base.clone()
            },
            true,
        ),
        (
            "softmax, subsample",
            BoosterParams {
                loss: Loss::Softmax,
                n_classes: Some(3),
                subsample: 0.6,
                random_state: 3,
                ..base.clone()
            },
            false,
        ),
        (
            "RGBM groups per node, subsample for splits",
            BoosterParams {
                loss: Loss::Logistic,
                selection: Selection::Groups,
                selection_size: Some(SelectionSize::Count(3)),
                selection_scope: SelectionScope::Node,
                subsample: 0.5,
                subsample_for: Some(rgbm_rs::params::SubsampleFor::Split),
                random_state: 5,
                ..base.clone()
            },
            true,
        ),
        (
            "SGLB",
            BoosterParams {
                langevin: true,
                temperature: 100.0,
                shrink_rate: Some(0.01),
                random_state: 9,
                ..base.clone()
            },
            true,
        ),
    ]
}

#[test]
fn every_shard_ends_with_the_local_model() {
    let n = 2000;
    for (name, params, weighted) in setups() {
        let d = data(n, 5, params.loss, weighted);
        let expected = local(&params, &d).to_json().unwrap();
        // Uneven partitions, an empty one among them, over 1 to 3 shards.
        for (bounds, k) in [
            (vec![0, n], 1),
            (vec![0, 700, 700, 1333, n], 2),
            (vec![0, 5, 900, 1200, 1201, n], 3),
        ] {
            for (s, model) in sharded(&params, &d, &bounds, k).iter().enumerate() {
                let got = model.to_json().unwrap();
                assert!(
                    got == expected,
                    "{name}: shard {s} of {k} {bounds:?} differs: {}",
                    first_difference(&got, &expected)
                );
            }
        }
    }
}

/// Above 200k rows the bin edges come from a sample of the rows, which the
/// shards gather from each other.
#[test]
fn sampled_bin_edges_match_the_local_ones() {
    let n = 210_000;
    let params = BoosterParams {
        n_estimators: 2,
        max_depth: Some(3),
        summation: Some(Summation::Exact),
        ..Default::default()
    };
    let d = data(n, 3, Loss::Squared, true);
    let expected = local(&params, &d).to_json().unwrap();
    for model in sharded(&params, &d, &[0, 50_000, 120_001, n], 2) {
        let got = model.to_json().unwrap();
        assert!(got == expected, "{}", first_difference(&got, &expected));
    }
}

#[test]
fn shards_refuse_what_needs_every_row() {
    let d = data(200, 3, Loss::Squared, false);
    let m = DenseMatrix::row_major(&d.x, 200, 3).unwrap();
    let exact = Some(Summation::Exact);
    for (params, name) in [
        (BoosterParams::default(), "summation"),
        (
            BoosterParams {
                loss: Loss::Quantile,
                summation: exact,
                ..Default::default()
            },
            "loss",
        ),
        (
            BoosterParams {
                record_train_loss: true,
                summation: exact,
                ..Default::default()
            },
            "record_train_loss",
        ),
        (
            BoosterParams {
                booster: BoosterKind::Rgb,
                summation: exact,
                ..Default::default()
            },
            "booster='rgb' cannot train on shards",
        ),
        (
            BoosterParams {
                step: Step::LineSearch,
                summation: exact,
                ..Default::default()
            },
            "step='line_search' cannot train on shards",
        ),
        (
            BoosterParams {
                loss: Loss::Gaussian,
                summation: exact,
                ..Default::default()
            },
            "loss='gaussian' cannot train on shards",
        ),
        (
            BoosterParams {
                loss: Loss::LambdaRank,
                summation: exact,
                ..Default::default()
            },
            "loss='lambdarank' cannot train on shards",
        ),
    ] {
        let rows = ShardRows::local(200);
        let err = TrainingData::new(&m, &d.y)
            .and_then(|data| data.on_shard(rows))
            .and_then(|data| train(&params, &data, &[], &mut Unmonitored))
            .err()
            .expect("refused")
            .to_string();
        assert!(err.contains(name), "{err}");
    }
}
