//! Category-set splits end to end: a grouping of categories that ordinal
//! codes cannot express in one split is learned in one, predictions agree
//! with the model file, and broken files are refused.
mod common;
use rgbm_rs::params::BoosterParams;
use rgbm_rs::{DenseMatrix, Model, RgbmError};

/// 20 categories in shuffled order, y = 1 for a fixed non-ordinal half of them.
fn grouped(n: usize) -> (Vec<f64>, Vec<f64>, Vec<bool>) {
    let mut s = 7u64;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s >> 33
    };
    // Every other code after a shuffle: alternating in code order is not it.
    let in_group: Vec<bool> = (0..20)
        .map(|c| (c * 7 + 3) % 20 < 10 && c % 3 != 1 || c == 4)
        .collect();
    let mut x = Vec::with_capacity(2 * n);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let c = next() % 20;
        x.push(c as f64);
        x.push((next() % 1000) as f64 / 1000.0);
        y.push(if in_group[c as usize] { 1.0 } else { 0.0 });
    }
    (x, y, in_group)
}

fn fit(params: &BoosterParams, x: &[f64], y: &[f64]) -> Result<Model, RgbmError> {
    let m = DenseMatrix::row_major(x, y.len(), 2).unwrap();
    common::trained(params, &m, y, None).map(|t| t.model)
}

/// 8 rounds on `grouped(2000)` with feature 0 categorical: its rows and model.
fn grouped_categorical_model() -> (Vec<f64>, Vec<f64>, Model) {
    let (x, y, _) = grouped(2000);
    let params = BoosterParams {
        n_estimators: 8,
        categorical_features: Some(vec![0]),
        ..Default::default()
    };
    let model = fit(&params, &x, &y).unwrap();
    (x, y, model)
}

fn stump(categorical: Option<Vec<usize>>) -> BoosterParams {
    BoosterParams {
        n_estimators: 1,
        learning_rate: 1.0,
        max_depth: Some(1),
        min_samples_leaf: 1,
        categorical_features: categorical,
        ..Default::default()
    }
}

fn mse(model: &Model, x: &[f64], y: &[f64]) -> f64 {
    let m = DenseMatrix::row_major(x, y.len(), 2).unwrap();
    let p = model.predict_raw(&m, None).unwrap();
    p.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() / y.len() as f64
}

#[test]
fn a_non_ordinal_grouping_is_learned_in_one_split() {
    let (x, y, in_group) = grouped(4000);
    let cat = fit(&stump(Some(vec![0])), &x, &y).unwrap();
    assert_eq!(cat.trees[0].n_internal(), 1);
    // The split's set is one of the two groups exactly.
    let set = cat.trees[0].category_set(0).unwrap();
    let away: Vec<bool> = (0..20).map(|c| set[0] >> c & 1 == 1).collect();
    let flipped: Vec<bool> = in_group.iter().map(|g| !g).collect();
    assert!(away == in_group || away == flipped);
    assert!(mse(&cat, &x, &y) < 1e-20);
    // Ordinal codes need many splits: one leaves most of the variance.
    let ordinal = fit(&stump(None), &x, &y).unwrap();
    assert!(mse(&ordinal, &x, &y) > 0.1);
    let deeper = BoosterParams {
        max_depth: Some(3),
        ..stump(None)
    };
    assert!(mse(&fit(&deeper, &x, &y).unwrap(), &x, &y) > 1e-3);
}

#[test]
fn unseen_categories_and_missing_values_follow_the_default_side() {
    let (mut x, y, _) = grouped(3000);
    // Some missing codes in training.
    for r in (0..y.len()).step_by(17) {
        x[2 * r] = f64::NAN;
    }
    let params = BoosterParams {
        n_estimators: 5,
        max_depth: Some(2),
        categorical_features: Some(vec![0]),
        ..Default::default()
    };
    let model = fit(&params, &x, &y).unwrap();
    let probe = |c: f64| {
        let row = [c, 0.5];
        model
            .predict_raw(&DenseMatrix::row_major(&row, 1, 2).unwrap(), None)
            .unwrap()[0]
    };
    let nan = probe(f64::NAN);
    for unseen in [25.0, 3.5, -1.0, 1e9] {
        assert_eq!(probe(unseen).to_bits(), nan.to_bits(), "{unseen}");
    }
}

#[test]
fn models_round_trip_and_bad_category_sets_are_refused() {
    let (x, y, model) = grouped_categorical_model();
    assert_eq!(model.format_version, 3);
    let text = model.to_json().unwrap();
    let back = Model::from_json(&text).unwrap();
    assert_eq!(back, model);
    let m = DenseMatrix::row_major(&x, y.len(), 2).unwrap();
    let (a, b) = (
        model.predict_raw(&m, None).unwrap(),
        back.predict_raw(&m, None).unwrap(),
    );
    assert!(a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()));
    // Models without categorical features keep format 2 and their bytes.
    let plain = fit(&BoosterParams::default(), &x, &y).unwrap();
    assert_eq!(plain.format_version, 2);
    assert!(!plain.to_json().unwrap().contains("categor"));

    let node = (0..model.trees[0].n_internal())
        .find(|&k| model.trees[0].category_set(k).is_some())
        .unwrap();
    let broken = |edit: &dyn Fn(&mut Model)| {
        let mut m = model.clone();
        edit(&mut m);
        Model::from_json(&m.to_json().unwrap())
    };
    let refused: [&dyn Fn(&mut Model); 6] = [
        &|m| m.format_version = 2,
        &|m| m.trees[0].categories[node].push(0),
        &|m| m.trees[0].categories[node] = vec![1; 5000],
        &|m| {
            m.trees[0].categories.pop();
        },
        &|m| m.trees[0].feature[node] = 1,
        &|m| m.params.categorical_features = Some(vec![2]),
    ];
    for (i, edit) in refused.iter().enumerate() {
        assert!(
            matches!(
                broken(edit),
                Err(RgbmError::ModelFormat(_)) | Err(RgbmError::InvalidParameter { .. })
            ),
            "edit {i} was accepted"
        );
    }
}

#[test]
fn bad_categorical_inputs_name_the_parameter() {
    let (mut x, y, _) = grouped(200);
    for (bad, p) in [
        (x[0], Some(vec![2])),
        (0.5, Some(vec![0])),
        (-1.0, Some(vec![0])),
        (70000.0, Some(vec![0])),
        (x[0], Some(vec![0, 0])),
    ] {
        x[0] = bad;
        let e = fit(&stump(p), &x, &y).unwrap_err();
        assert!(e.to_string().contains("categorical_features"), "{e}");
    }
}

/// Unit weights take the weighted code paths (weighted histograms and
/// binning), and must give the trees of an unweighted fit.
#[test]
fn unit_weights_give_the_same_categorical_trees() {
    let (x, y, _) = grouped(3000);
    let params = BoosterParams {
        n_estimators: 10,
        loss: rgbm_rs::params::Loss::Logistic,
        categorical_features: Some(vec![0]),
        min_data_per_group: Some(20),
        ..Default::default()
    };
    let m = DenseMatrix::row_major(&x, y.len(), 2).unwrap();
    let ones = vec![1.0; y.len()];
    let a = common::trained(&params, &m, &y, None)
        .map(|t| t.model)
        .unwrap();
    let b = common::trained(&params, &m, &y, Some(&ones))
        .map(|t| t.model)
        .unwrap();
    assert!(a.trees.iter().any(|t| t.has_categories()));
    assert_eq!(a.trees, b.trees);
}

#[test]
fn a_files_names_and_category_lists_are_checked_against_the_model() {
    let (_, _, model) = grouped_categorical_model();
    // The largest code the sets hold, by hand from the bitsets.
    let top = model
        .trees
        .iter()
        .flat_map(|t| t.categories.iter())
        .flat_map(|words| {
            words.iter().enumerate().flat_map(|(w, word)| {
                (0..32)
                    .filter(move |b| word >> b & 1 == 1)
                    .map(move |b| 32 * w + b)
            })
        })
        .max()
        .unwrap();
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let check = |n: Option<&[String]>, c: Option<&[Option<usize>]>| {
        model.check_feature_fields(n, c).map_err(|e| e.to_string())
    };
    assert!(check(Some(&names(&["c", "x"])), Some(&[Some(top + 1), None])).is_ok());
    assert!(check(None, Some(&[Some(top + 5), None])).is_ok());
    assert!(check(None, Some(&[None, None])).is_ok());
    let short = check(None, Some(&[Some(top), None])).unwrap_err();
    assert!(
        short.contains(&format!("categories[0] has {top} categories"))
            && short.contains(&format!("category code {top}")),
        "{short}"
    );
    let numeric = check(None, Some(&[Some(top + 1), Some(2)])).unwrap_err();
    assert!(numeric.contains("categories[1]"), "{numeric}");
    let twice = check(Some(&names(&["c", "c"])), None).unwrap_err();
    assert!(
        twice.contains("feature_names_in repeats the name \"c\""),
        "{twice}"
    );
    let few = check(Some(&names(&["c"])), None).unwrap_err();
    assert!(few.contains("1 feature names for 2 features"), "{few}");
}
