//! Learning to rank (`loss = lambdarank`): training raises NDCG, evaluation
//! sets record it per query group, the model is reproducible and
//! thread-count independent, and what ranking cannot do is refused.
mod common;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rgbm_rs::booster::{EvalSet, TrainingData, Unmonitored, train};
use rgbm_rs::objective::{Queries, ndcg};
use rgbm_rs::options::{BoosterKind, Step, Summation};
use rgbm_rs::params::{BoosterParams, Loss};
use rgbm_rs::{DenseMatrix, Model};

/// Queries of 5..=24 rows; relevance 0..=4 grows with a hidden score of
/// the features, plus noise.
fn ranking_data(n_queries: usize, p: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<u64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let sizes: Vec<u64> = (0..n_queries).map(|_| rng.random_range(5..25)).collect();
    let n: usize = sizes.iter().sum::<u64>() as usize;
    let x = common::features(n, p, seed + 1);
    let y = x
        .chunks(p)
        .map(|r| {
            let v = |j: usize| if r[j].is_nan() { 0.0 } else { r[j] };
            let s = v(0) + 0.8 * v(1) * v(2) - 0.5 * v(3).abs() + rng.random_range(-0.5..0.5);
            (s + 2.0).clamp(0.0, 4.0).floor()
        })
        .collect();
    (x, y, sizes)
}

fn ranker(rounds: usize) -> BoosterParams {
    BoosterParams {
        loss: Loss::LambdaRank,
        n_estimators: rounds,
        max_depth: None,
        max_leaves: Some(15),
        min_samples_leaf: 5,
        learning_rate: 0.1,
        ..Default::default()
    }
}

#[test]
fn training_raises_ndcg_and_evaluation_sets_record_it() {
    let p = 5;
    let (x, y, sizes) = ranking_data(150, p, 1);
    let (ex, ey, esizes) = ranking_data(60, p, 2);
    let m = DenseMatrix::row_major(&x, y.len(), p).unwrap();
    let em = DenseMatrix::row_major(&ex, ey.len(), p).unwrap();
    let q = Queries::from_sizes(&sizes, y.len()).unwrap();
    let eq = Queries::from_sizes(&esizes, ey.len()).unwrap();
    let params = BoosterParams {
        eval_at: Some(5),
        ..ranker(60)
    };
    let sets = [EvalSet {
        name: "valid".into(),
        x: rgbm_rs::data::matrix::Matrix::Dense(em),
        y: &ey,
        w: None,
        init_score: None,
        queries: Some(eq.clone()),
    }];
    let trained = TrainingData::new(&m, &y)
        .and_then(|d| d.with_queries(Some(&q)))
        .and_then(|d| train(&params, &d, &sets, &mut Unmonitored))
        .unwrap();
    let model = trained.model;
    // The recorded history is NDCG@5 of the model after each round.
    let hist = &trained.evals[0];
    assert_eq!(
        (hist.set.as_str(), hist.metric.as_str()),
        ("valid", "ndcg@5")
    );
    let last = model.predict_raw(&em, None).unwrap();
    assert!((hist.values[59] - ndcg(&ey, &last, &eq, Some(5))).abs() < 1e-12);
    let early = model.predict_raw(&em, Some(1)).unwrap();
    assert!((hist.values[0] - ndcg(&ey, &early, &eq, Some(5))).abs() < 1e-12);
    // Training and held-out NDCG rise well above a random order's.
    let train_scores = model.predict_raw(&m, None).unwrap();
    let random: Vec<f64> = (0..ey.len()).map(|i| ((i * 7919) % 101) as f64).collect();
    let (held_out, chance) = (
        ndcg(&ey, &last, &eq, Some(5)),
        ndcg(&ey, &random, &eq, Some(5)),
    );
    assert!(ndcg(&y, &train_scores, &q, Some(5)) > 0.9);
    assert!(held_out > chance + 0.15, "{held_out} vs {chance}");
    // The file keeps the loss and predicts the same.
    let back = Model::from_json(&model.to_json().unwrap()).unwrap();
    assert_eq!(back.predict_raw(&em, None).unwrap(), last);
}

#[test]
fn ranking_models_do_not_depend_on_threads_or_summation_mode() {
    let p = 4;
    let (x, y, sizes) = ranking_data(80, p, 3);
    let m = DenseMatrix::row_major(&x, y.len(), p).unwrap();
    let q = Queries::from_sizes(&sizes, y.len()).unwrap();
    // The trees and scores, without the parameters (which record n_jobs).
    let fit = |params: BoosterParams| {
        let model = TrainingData::new(&m, &y)
            .and_then(|d| d.with_queries(Some(&q)))
            .and_then(|d| train(&params, &d, &[], &mut Unmonitored))
            .unwrap()
            .model;
        let doc: serde_json::Value = serde_json::from_str(&model.to_json().unwrap()).unwrap();
        (
            doc["trees"].to_string(),
            model.predict_raw(&m, None).unwrap(),
        )
    };
    let one = fit(BoosterParams {
        n_jobs: Some(1),
        subsample: 0.7,
        random_state: 9,
        ..ranker(20)
    });
    let two = fit(BoosterParams {
        n_jobs: Some(2),
        subsample: 0.7,
        random_state: 9,
        ..ranker(20)
    });
    assert_eq!(one, two);
    let exact = BoosterParams {
        summation: Some(Summation::Exact),
        ..ranker(20)
    };
    let a = fit(BoosterParams {
        n_jobs: Some(1),
        ..exact.clone()
    });
    let b = fit(BoosterParams {
        n_jobs: Some(2),
        ..exact
    });
    assert_eq!(a, b);
}

#[test]
fn what_ranking_cannot_do_is_refused() {
    let p = 4;
    let (x, y, sizes) = ranking_data(10, p, 4);
    let m = DenseMatrix::row_major(&x, y.len(), p).unwrap();
    let q = Queries::from_sizes(&sizes, y.len()).unwrap();
    let err = |params: BoosterParams| {
        TrainingData::new(&m, &y)
            .and_then(|d| d.with_queries(Some(&q)))
            .and_then(|d| train(&params, &d, &[], &mut Unmonitored))
            .err()
            .expect("refused")
            .to_string()
    };
    for (params, what) in [
        (
            BoosterParams {
                step: Step::LineSearch,
                ..ranker(2)
            },
            "line_search",
        ),
        (
            BoosterParams {
                record_train_loss: true,
                ..ranker(2)
            },
            "record_train_loss",
        ),
        (
            BoosterParams {
                booster: BoosterKind::Rgb,
                ..ranker(2)
            },
            "booster",
        ),
        (
            BoosterParams {
                step: Step::Constant,
                leaf: rgbm_rs::params::Mode::Gradient,
                ..ranker(2)
            },
            "step",
        ),
        (
            BoosterParams {
                loss: Loss::Squared,
                ..ranker(2)
            },
            "query groups are for loss='lambdarank'",
        ),
        (
            BoosterParams {
                lambdarank_truncation_level: Some(5),
                loss: Loss::Squared,
                ..ranker(2)
            },
            "lambdarank_truncation_level",
        ),
    ] {
        let e = err(params);
        assert!(e.contains(what), "{what}: {e}");
    }
    // Without groups, with weights, with labels that are not grades.
    let e = common::trained(&ranker(2), &m, &y, None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("query groups"), "{e}");
    let mut bad = y.clone();
    bad[3] = 1.5;
    let e = TrainingData::new(&m, &bad)
        .and_then(|d| d.with_queries(Some(&q)))
        .and_then(|d| train(&ranker(2), &d, &[], &mut Unmonitored))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("integer relevance labels"), "{e}");
    let short = Queries::from_sizes(&[3], 3).unwrap();
    let e = TrainingData::new(&m, &y)
        .and_then(|d| d.with_queries(Some(&short)))
        .and_then(|d| train(&ranker(2), &d, &[], &mut Unmonitored))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("group sizes add up to 3"), "{e}");
}
