//! Pure optimisations must not change a single bit of a trained model.
//!
//! Each configuration below is trained on seeded synthetic data and its model
//! JSON is fingerprinted (FNV-1a, 64 bit); `tests/golden/models.txt` holds
//! the fingerprints of the reference build. A change that is meant to alter
//! models (a new algorithm, a bug fix) re-blesses them on purpose:
//! `RGBM_BLESS_GOLDEN=1 cargo test --test golden_models`, and says why in the
//! commit. On a mismatch the new JSON is written to target/golden-mismatch/
//! so it can be diffed against a blessed build's.
mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use rgbm_rs::params::{
    BoosterKind, BoosterParams, Loss, Mode, Selection, SelectionScope, SelectionSize, Step,
};
use rgbm_rs::{DenseMatrix, train};

const N: usize = 3000;
const P: usize = 12;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn configs() -> Vec<(&'static str, BoosterParams)> {
    let base = BoosterParams {
        n_estimators: 15,
        random_state: 11,
        n_jobs: Some(2),
        ..Default::default()
    };
    let logistic = BoosterParams {
        loss: Loss::Logistic,
        ..base.clone()
    };
    let best_first = BoosterParams {
        max_depth: None,
        max_leaves: Some(15),
        ..logistic.clone()
    };
    vec![
        (
            "squared_depthwise",
            BoosterParams {
                loss: Loss::Squared,
                ..base.clone()
            },
        ),
        (
            "huber_gradient_subsample",
            BoosterParams {
                loss: Loss::Huber,
                gain: Mode::Gradient,
                leaf: Mode::Gradient,
                subsample: 0.7,
                ..base.clone()
            },
        ),
        (
            "gaussian",
            BoosterParams {
                loss: Loss::Gaussian,
                ..base.clone()
            },
        ),
        ("logistic_depthwise", logistic.clone()),
        ("logistic_best_first", best_first.clone()),
        (
            "logistic_line_search",
            BoosterParams {
                step: Step::LineSearch,
                ..best_first.clone()
            },
        ),
        (
            "rgbm_groups_node_scope",
            BoosterParams {
                selection: Selection::Groups,
                selection_size: Some(SelectionSize::Count(3)),
                selection_scope: SelectionScope::Node,
                ..best_first.clone()
            },
        ),
        (
            "rgbm_random_constant_step",
            BoosterParams {
                selection: Selection::Random,
                selection_size: Some(SelectionSize::Count(4)),
                step: Step::Constant,
                leaf: Mode::Gradient,
                ..logistic.clone()
            },
        ),
        (
            "sglb_sla01",
            BoosterParams {
                loss: Loss::Sla01,
                gain: Mode::Gradient,
                leaf: Mode::Gradient,
                langevin: true,
                ..best_first.clone()
            },
        ),
        (
            "rgb",
            BoosterParams {
                booster: BoosterKind::Rgb,
                rgb_candidates: 3,
                ..logistic.clone()
            },
        ),
        (
            "softmax_3_classes",
            BoosterParams {
                loss: Loss::Softmax,
                n_classes: Some(3),
                ..best_first
            },
        ),
    ]
}

/// Model JSON of every configuration, by name.
fn trained_models() -> BTreeMap<String, String> {
    let x = common::features(N, P, 5);
    let m = DenseMatrix::row_major(&x, N, P).unwrap();
    let regression = common::regression(&x, P, 6);
    let binary = common::binary(&x, P, 7);
    let classes: Vec<f64> = regression
        .iter()
        .map(|&v| {
            if v < -0.5 {
                0.0
            } else if v < 0.7 {
                1.0
            } else {
                2.0
            }
        })
        .collect();
    configs()
        .into_iter()
        .map(|(name, params)| {
            let y = match params.loss {
                Loss::Squared | Loss::Huber | Loss::Gaussian => &regression,
                Loss::Softmax => &classes,
                _ => &binary,
            };
            let json = train(&params, &m, y, None, &mut |_| Ok(()))
                .unwrap()
                .to_json()
                .unwrap();
            (name.to_string(), json)
        })
        .collect()
}

#[test]
fn models_are_bit_identical_to_the_blessed_build() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/models.txt");
    let models = trained_models();
    let now: BTreeMap<&String, String> = models
        .iter()
        .map(|(name, json)| (name, format!("{:016x}", fnv1a(json.as_bytes()))))
        .collect();
    let text: String = now.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
    if std::env::var_os("RGBM_BLESS_GOLDEN").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let blessed: BTreeMap<String, String> = std::fs::read_to_string(&path)
        .expect("tests/golden/models.txt is missing: bless it with RGBM_BLESS_GOLDEN=1")
        .lines()
        .filter_map(|l| {
            l.split_once(' ')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect();
    let changed: Vec<&String> = now
        .iter()
        .filter(|(name, hash)| blessed.get(**name) != Some(*hash))
        .map(|(name, _)| *name)
        .collect();
    let mismatch_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/golden-mismatch");
    for name in &changed {
        std::fs::create_dir_all(&mismatch_dir).unwrap();
        std::fs::write(mismatch_dir.join(format!("{name}.json")), &models[*name]).unwrap();
    }
    assert!(
        changed.is_empty() && blessed.len() == now.len(),
        "models changed for {changed:?} (JSON in target/golden-mismatch/); if intended, re-bless with RGBM_BLESS_GOLDEN=1"
    );
}
