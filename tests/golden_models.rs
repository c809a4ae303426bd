//! Pure optimisations must not change a single bit of a trained model.
//!
//! Each configuration below is trained on seeded synthetic data and its model
//! JSON is fingerprinted (FNV-1a, 64 bit); `tests/golden/models.txt` holds
//! the fingerprints of the reference build. A change that is meant to alter
//! models (a new algorithm, a bug fix) re-blesses them on purpose:
//! `RGBM_BLESS_GOLDEN=1 cargo test --test golden_models`, and says why in the
//! commit. On a mismatch the new JSON is written to target/golden-mismatch/
//! so it can be diffed against a blessed build's. Leaf covers (`leaf_count`,
//! added later) are checked and left out of the fingerprint.
mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use rgbm_rs::DenseMatrix;
use rgbm_rs::params::{
    BoosterKind, BoosterParams, Loss, Mode, RgbStep, Selection, SelectionScope, SelectionSize, Step,
};

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
                rgb_step: Some(RgbStep::Exact),
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

/// The data a configuration trains on beyond the default 3000 × 12 matrix:
/// each exercises a different histogram path.
#[derive(Clone, Copy, PartialEq)]
enum Data {
    Default,
    /// Sample weights (Σw kept per bin).
    Weighted,
    /// Mostly zeros, so default bins are skipped and sparse rows are used.
    Sparse,
    /// Enough rows that subset histograms are built in several chunks and reduced.
    Tall,
}

/// Extra configurations on other data (few rounds: they cost more per round).
fn data_configs() -> Vec<(&'static str, BoosterParams, Data)> {
    let base = BoosterParams {
        loss: Loss::Logistic,
        n_estimators: 6,
        random_state: 13,
        n_jobs: Some(2),
        max_depth: None,
        max_leaves: Some(15),
        ..Default::default()
    };
    vec![
        ("weighted_logistic", base.clone(), Data::Weighted),
        (
            "weighted_gradient_squared",
            BoosterParams {
                loss: Loss::Squared,
                gain: Mode::Gradient,
                leaf: Mode::Gradient,
                ..base.clone()
            },
            Data::Weighted,
        ),
        ("sparse_logistic", base.clone(), Data::Sparse),
        ("tall_logistic", base.clone(), Data::Tall),
        (
            "tall_squared",
            BoosterParams {
                loss: Loss::Squared,
                ..base.clone()
            },
            Data::Tall,
        ),
        (
            "tall_weighted_squared",
            BoosterParams {
                loss: Loss::Squared,
                ..base
            },
            Data::Tall,
        ),
    ]
}

/// Model JSON of every configuration, by name.
fn trained_models() -> BTreeMap<String, String> {
    let all = configs()
        .into_iter()
        .map(|(name, params)| (name, params, Data::Default))
        .chain(data_configs());
    all.map(|(name, params, data)| {
        let n = if data == Data::Tall { 40 * N } else { N };
        let mut x = common::features(n, P, 5);
        if data == Data::Sparse {
            // Keep every 7th value of columns 1.. (column 0 keeps its NaNs).
            for (k, v) in x.iter_mut().enumerate() {
                if k % P != 0 && k % 7 != 0 {
                    *v = 0.0;
                }
            }
        }
        let m = DenseMatrix::row_major(&x, n, P).unwrap();
        let regression = common::regression(&x, P, 6);
        let y = match params.loss {
            Loss::Squared | Loss::Huber | Loss::Gaussian => regression,
            Loss::Softmax => regression
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
                .collect(),
            _ => common::binary(&x, P, 7),
        };
        // Weights in [0.25, 2.25) from the row index, with a few zeros.
        let w: Vec<f64> = (0..n)
            .map(|i| {
                if i % 97 == 0 {
                    0.0
                } else {
                    0.25 + (i * 37 % 101) as f64 / 50.0
                }
            })
            .collect();
        let weighted = data == Data::Weighted || name.starts_with("tall_weighted");
        let w = weighted.then_some(&w[..]);
        let mut model = common::trained(&params, &m, &y, w)
            .map(|t| t.model)
            .unwrap();
        // Leaf covers were added after the fingerprints were blessed: they
        // are checked here and left out of the fingerprint, which so still
        // covers every other byte of the model.
        for t in &mut model.trees {
            assert_eq!(t.leaf_count.len(), t.n_leaves(), "{name}");
            let total: f64 = t.leaf_count.iter().sum();
            assert!(t.n_internal() == 0 || total == t.count[0], "{name}");
            t.leaf_count.clear();
        }
        let json = model.to_json().unwrap();
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
