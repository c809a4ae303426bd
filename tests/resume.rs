//! A fit stopped after k rounds and resumed from those rounds' records
//! (`train_resumed`) ends with the uninterrupted fit's model, evaluation
//! histories and best round, locally and on shards split another way.
mod common;

use rgbm_rs::booster::shard::ShardRows;
use rgbm_rs::booster::{
    EvalResult, EvalSet, Monitor, Resume, RoundLog, RoundRecord, Trained, TrainingData,
    Unmonitored, train_resumed,
};
use rgbm_rs::data::matrix::Matrix;
use rgbm_rs::params::{
    BoosterKind, BoosterParams, Loss, Selection, SelectionScope, SelectionSize, Step, SubsampleFor,
    Summation,
};
use rgbm_rs::relay::{ShardFit, drive};
use rgbm_rs::tree::Tree;
use rgbm_rs::{DenseMatrix, Result};

/// Records every trained round; stops after round `stop_after`.
struct Recorder {
    records: Vec<RoundRecord>,
    stop_after: usize,
}

impl Monitor for Recorder {
    fn round_trained(&mut self, round: usize, trees: &[Tree], log: &RoundLog) -> Result<()> {
        self.records.push(RoundRecord {
            round,
            trees: trees.to_vec(),
            log: log.clone(),
        });
        Ok(())
    }
    fn after_round(&mut self, round: usize, _results: &[EvalResult]) -> Result<bool> {
        Ok(round == self.stop_after)
    }
}

struct Data {
    x: Vec<f64>,
    p: usize,
    y: Vec<f64>,
    w: Option<Vec<f64>>,
    /// An evaluation set: its rows and labels.
    ex: Vec<f64>,
    ey: Vec<f64>,
}

fn labels(x: &[f64], p: usize, loss: Loss, seed: u64) -> Vec<f64> {
    let r = common::regression(x, p, seed);
    match loss {
        Loss::Softmax => r
            .iter()
            .map(|v| (v + 1.5).clamp(0.0, 2.0).floor())
            .collect(),
        Loss::Logistic => common::binary(x, p, seed + 1),
        _ => r,
    }
}

fn data(n: usize, p: usize, loss: Loss, weighted: bool) -> Data {
    let mut x = common::features(n, p, 41);
    for i in (0..n).step_by(13) {
        x[i * p + 2] = f64::NAN;
    }
    let y = labels(&x, p, loss, 42);
    let w = weighted.then(|| {
        (0..n)
            .map(|i| 0.25 + ((i * 37) % 11) as f64 / 5.0)
            .collect()
    });
    let ex = common::features(300, p, 51);
    let ey = labels(&ex, p, loss, 52);
    Data { x, p, y, w, ex, ey }
}

/// The fit of `params` on `rows` of `d` (with their global indices among
/// `d`'s rows when `shard` holds a reduce), resumed from `resumed`.
fn fit(
    params: &BoosterParams,
    d: &Data,
    resumed: Resume<'_>,
    monitor: &mut dyn Monitor,
    shard: Option<(&dyn rgbm_rs::reduce::Reduce, &[u64])>,
) -> Result<Trained> {
    let (x, y, w): (Vec<f64>, Vec<f64>, Option<Vec<f64>>) = match shard {
        None => (d.x.clone(), d.y.clone(), d.w.clone()),
        Some((_, ids)) => (
            ids.iter()
                .flat_map(|&i| d.x[i as usize * d.p..(i as usize + 1) * d.p].to_vec())
                .collect(),
            ids.iter().map(|&i| d.y[i as usize]).collect(),
            d.w.as_ref()
                .map(|w| ids.iter().map(|&i| w[i as usize]).collect()),
        ),
    };
    let m = DenseMatrix::row_major(&x, y.len(), d.p)?;
    let sets = [EvalSet {
        name: "valid".into(),
        x: Matrix::Dense(DenseMatrix::row_major(&d.ex, d.ey.len(), d.p)?),
        y: &d.ey,
        w: None,
        init_score: None,
        queries: None,
    }];
    let data = TrainingData::new(&m, &y)?.with_weights(w.as_deref())?;
    let data = match shard {
        None => data,
        Some((reduce, ids)) => data.on_shard(ShardRows {
            reduce,
            ids: Some(ids),
            n_total: d.y.len(),
        })?,
    };
    train_resumed(params, &data, &sets, resumed, monitor)
}

fn resume(rounds: &[RoundRecord]) -> Resume<'_> {
    Resume {
        rounds,
        stopped: false,
    }
}

/// Rounds 0..=`stop_after` of the fit, as a monitor records them.
fn first_rounds(params: &BoosterParams, d: &Data, stop_after: usize) -> Vec<RoundRecord> {
    let mut recorder = Recorder {
        records: Vec::new(),
        stop_after,
    };
    fit(params, d, Resume::default(), &mut recorder, None).unwrap();
    recorder.records
}

/// What must not change: the model file, the evaluation histories, the
/// best round, and every round's log but its time.
fn summary(t: &Trained) -> (String, String, Option<usize>, Vec<RoundLog>) {
    let log = t
        .log
        .iter()
        .map(|r| RoundLog {
            seconds: 0.0,
            ..r.clone()
        })
        .collect();
    let evals = serde_json::to_string(&t.evals).unwrap();
    (t.model.to_json().unwrap(), evals, t.best_iteration, log)
}

fn setups() -> Vec<(&'static str, BoosterParams, bool)> {
    let base = BoosterParams {
        n_estimators: 10,
        max_depth: Some(3),
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
                max_leaves: Some(9),
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
                subsample_for: Some(SubsampleFor::Split),
                random_state: 5,
                ..base.clone()
            },
            true,
        ),
        (
            "SGLB with model shrinkage",
            BoosterParams {
                langevin: true,
                temperature: 100.0,
                shrink_rate: Some(0.01),
                random_state: 9,
                ..base.clone()
            },
            true,
        ),
        (
            "early stopping",
            BoosterParams {
                n_estimators: 60,
                learning_rate: 0.8,
                max_depth: Some(6),
                early_stopping_rounds: Some(3),
                ..base.clone()
            },
            false,
        ),
    ]
}

#[test]
fn a_resumed_fit_is_the_uninterrupted_fit() {
    for (name, params, weighted) in setups() {
        let d = data(1500, 5, params.loss, weighted);
        let full = fit(&params, &d, Resume::default(), &mut Unmonitored, None).unwrap();
        let expected = summary(&full);
        let rounds = full.log.len();
        if params.early_stopping_rounds.is_some() {
            assert!(rounds < params.n_estimators, "{name}: did not stop early");
        }
        for k in [1, 4, rounds] {
            let records = first_rounds(&params, &d, k - 1);
            assert_eq!(records.len(), k, "{name}");
            let resumed = fit(&params, &d, resume(&records), &mut Unmonitored, None).unwrap();
            assert!(
                summary(&resumed) == expected,
                "{name}: resumed after {k} rounds differs"
            );
        }
    }
}

/// Shards of `d` (row indices dealt round robin by `blocks` of rows),
/// resumed from `resumed`: every shard's result.
fn sharded(params: &BoosterParams, d: &Data, k: usize, resumed: &[RoundRecord]) -> Vec<Trained> {
    let n = d.y.len() as u64;
    let fits: Vec<ShardFit> = (0..k as u64)
        .map(|s| {
            let ids: Vec<u64> = (0..n).filter(|i| (i / 97) % k as u64 == s).collect();
            let (params, resumed) = (params.clone(), resumed.to_vec());
            let d = Data {
                x: d.x.clone(),
                y: d.y.clone(),
                w: d.w.clone(),
                ex: d.ex.clone(),
                ey: d.ey.clone(),
                ..*d
            };
            ShardFit::start(Box::new(move |reduce, monitor| {
                fit(&params, &d, resume(&resumed), monitor, Some((reduce, &ids)))
            }))
            .unwrap()
        })
        .collect();
    drive(&fits, |_| false)
        .into_iter()
        .map(|r| r.unwrap())
        .collect()
}

#[test]
fn a_fit_stopped_by_its_monitor_resumes_to_its_end() {
    let (name, params, weighted) = setups().swap_remove(2);
    let d = data(1500, 5, params.loss, weighted);
    let mut recorder = Recorder {
        records: Vec::new(),
        stop_after: 3,
    };
    let stopped = fit(&params, &d, Resume::default(), &mut recorder, None).unwrap();
    let resume = Resume {
        rounds: &recorder.records,
        stopped: true,
    };
    let resumed = fit(&params, &d, resume, &mut Unmonitored, None).unwrap();
    assert!(summary(&resumed) == summary(&stopped), "{name}");
    assert_eq!(resumed.log.len(), 4);
}

#[test]
fn shards_resume_from_rounds_trained_on_other_shards() {
    // As after a lost worker: rounds from a fit of 3 shards, resumed by 2
    // shards holding the rows another way.
    for (name, params, weighted) in setups() {
        if params.early_stopping_rounds.is_some() {
            continue; // the local test covers it; keep this one short
        }
        let d = data(1500, 5, params.loss, weighted);
        let expected =
            summary(&fit(&params, &d, Resume::default(), &mut Unmonitored, None).unwrap());
        let n = d.y.len() as u64;
        let stop_after = 3;
        let mut records = Vec::new();
        let fits: Vec<ShardFit> = (0..3u64)
            .map(|s| {
                let ids: Vec<u64> = (0..n).filter(|i| i % 3 == s).collect();
                let params = params.clone();
                let d = Data {
                    x: d.x.clone(),
                    y: d.y.clone(),
                    w: d.w.clone(),
                    ex: d.ex.clone(),
                    ey: d.ey.clone(),
                    ..d
                };
                ShardFit::start(Box::new(move |reduce, monitor| {
                    fit(
                        &params,
                        &d,
                        Resume::default(),
                        monitor,
                        Some((reduce, &ids)),
                    )
                }))
                .unwrap()
            })
            .collect();
        drive(&fits, |r| {
            records.push(r.clone());
            r.round == stop_after
        });
        assert_eq!(records.len(), stop_after + 1, "{name}");
        for t in sharded(&params, &d, 2, &records) {
            // The logs differ from the local fit's (no diagnostics on shards).
            let got = summary(&t);
            assert!(
                got.0 == expected.0,
                "{name}: a resumed shard's model differs"
            );
            assert!(
                got.1 == expected.1 && got.2 == expected.2,
                "{name}: evaluations differ"
            );
        }
    }
}

#[test]
fn records_round_trip_and_bad_ones_are_refused() {
    let params = BoosterParams {
        n_estimators: 4,
        max_depth: Some(3),
        summation: Some(Summation::Exact),
        ..Default::default()
    };
    let d = data(400, 5, Loss::Squared, false);
    let records = first_rounds(&params, &d, 1);
    let text: Vec<String> = records.iter().map(|r| r.to_json().unwrap()).collect();
    let back: Vec<RoundRecord> = text
        .iter()
        .map(|t| RoundRecord::from_json(t).unwrap())
        .collect();
    assert_eq!(back, records);
    assert!(RoundRecord::from_json("{\"round\": 0}").is_err());
    let fails = |params: &BoosterParams, records: &[RoundRecord]| {
        fit(params, &d, resume(records), &mut Unmonitored, None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    // Out of order, too many, for the wrong number of outputs or features.
    assert!(fails(&params, &records[1..]).contains("not 0, 1"));
    let short = BoosterParams {
        n_estimators: 1,
        ..params.clone()
    };
    assert!(fails(&short, &records).contains("n_estimators"));
    let mut two = records.clone();
    let extra = two[0].trees[0].clone();
    two[0].trees.push(extra);
    assert!(fails(&params, &two).contains("2 trees"));
    let mut far = records.clone();
    if let Some(f) = far[0].trees[0].feature.first_mut() {
        *f = 99;
    }
    assert!(!fails(&params, &far).is_empty());
    // Rounds that are more than one addition per row cannot be replayed.
    for refused in [
        BoosterParams {
            booster: BoosterKind::Rgb,
            summation: Some(Summation::Float),
            ..params.clone()
        },
        BoosterParams {
            step: Step::LineSearch,
            summation: Some(Summation::Float),
            ..params.clone()
        },
    ] {
        let e = fails(&refused, &records);
        assert!(e.contains("cannot be resumed"), "{e}");
    }
}
