//! Every parameter checked against its entry of `PARAMS`, and that table
//! as the JSON schema Python reads: the estimators' parameter constraints,
//! the docs' parameter table and the parameters each fit sends come from
//! it.
use serde_json::Value;

use super::spec::{MAX_EXACT_INT, ParamSpec, Values};
use super::{BoosterParams, PARAMS, field_values, non_finite_field, none_means};
use crate::error::{Result, RgbmError};

/// The table as JSON, each entry with its default from
/// `BoosterParams::default()` and, where None stands for a value, that
/// value as `none_means` (also appended to the doc as "; None = ...").
pub fn schema_json() -> Result<String> {
    let defaults = field_values(&BoosterParams::default());
    let resolved = none_means();
    let entries: Vec<Value> = PARAMS
        .iter()
        .map(|p| {
            let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut v {
                map.insert(
                    "default".into(),
                    defaults.get(p.name).cloned().unwrap_or(Value::Null),
                );
                if let Some((_, value)) = resolved.iter().find(|(name, _)| *name == p.name) {
                    map.insert(
                        "doc".into(),
                        format!("{}; None = {}", p.doc, shown(value)).into(),
                    );
                    map.insert("none_means".into(), value.clone());
                }
            }
            v
        })
        .collect();
    serde_json::to_string(&entries).map_err(|e| RgbmError::ModelFormat(e.to_string()))
}

/// A value as the Python user writes it.
fn shown(v: &Value) -> String {
    match v {
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::String(s) => s.clone(),
        // 10 rather than 10.0, as the docs write numbers.
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), |x| x.to_string()),
        other => other.to_string(),
    }
}

/// "must be in [1, 64] or None" and the like, for a spec's values.
fn expected(spec: &ParamSpec) -> String {
    let base = match spec.values {
        Values::Int { min, max } if max == u64::MAX || max >= MAX_EXACT_INT => {
            format!("an integer >= {min}")
        }
        Values::Int { min, max } => format!("an integer in [{min}, {max}]"),
        Values::Float {
            min,
            min_closed,
            max: None,
            ..
        } => format!(
            "a finite number {} {min}",
            if min_closed { ">=" } else { ">" }
        ),
        Values::Float {
            min,
            min_closed,
            max: Some(max),
            max_closed,
        } => format!(
            "a number in {}{min}, {max}{}",
            if min_closed { "[" } else { "(" },
            if max_closed { "]" } else { ")" }
        ),
        Values::Choice { options } => format!("one of {options:?}"),
        Values::Bool => "true or false".into(),
        Values::CountOrFraction => "a count >= 1 or a fraction in (0, 1]".into(),
        Values::IntList { min, max } => {
            format!("a non-empty list of integers in [{min}, {max}]")
        }
        Values::PositiveList => "a non-empty list of finite numbers > 0".into(),
        Values::NonNegativeList => "a non-empty list of finite numbers >= 0".into(),
        Values::FeatureGroups => "a list of lists of feature indices".into(),
        Values::Directions => "a non-empty list of -1, 0 and 1".into(),
        Values::FeatureSets => "a non-empty list of non-empty lists of feature indices".into(),
        Values::Metrics => "a list of metric names".into(),
    };
    if spec.optional {
        format!("must be {base} or None")
    } else {
        format!("must be {base}")
    }
}

fn int_ok(v: &Value, min: u64, max: u64) -> bool {
    v.as_u64().is_some_and(|i| (min..=max).contains(&i))
}

fn float_ok(x: f64, min: f64, min_closed: bool, max: Option<f64>, max_closed: bool) -> bool {
    let above = if min_closed { x >= min } else { x > min };
    let below = match max {
        None => true,
        Some(m) if max_closed => x <= m,
        Some(m) => x < m,
    };
    x.is_finite() && above && below
}

fn value_ok(values: Values, v: &Value) -> bool {
    match values {
        Values::Int { min, max } => int_ok(v, min, max),
        Values::Float {
            min,
            min_closed,
            max,
            max_closed,
        } => v
            .as_f64()
            .is_some_and(|x| float_ok(x, min, min_closed, max, max_closed)),
        Values::Choice { options } => v.as_str().is_some_and(|s| options.contains(&s)),
        Values::Bool => v.is_boolean(),
        Values::CountOrFraction => match v {
            Value::Number(n) if n.is_u64() => int_ok(v, 1, u64::MAX),
            Value::Number(n) => n
                .as_f64()
                .is_some_and(|f| float_ok(f, 0.0, false, Some(1.0), true)),
            _ => false,
        },
        Values::IntList { min, max } => v
            .as_array()
            .is_some_and(|a| !a.is_empty() && a.iter().all(|x| int_ok(x, min, max))),
        Values::PositiveList => v.as_array().is_some_and(|a| {
            !a.is_empty()
                && a.iter()
                    .all(|x| x.as_f64().is_some_and(|f| f.is_finite() && f > 0.0))
        }),
        Values::NonNegativeList => v.as_array().is_some_and(|a| {
            !a.is_empty()
                && a.iter()
                    .all(|x| x.as_f64().is_some_and(|f| f.is_finite() && f >= 0.0))
        }),
        Values::FeatureGroups => v.as_array().is_some_and(|groups| {
            groups
                .iter()
                .all(|g| g.as_array().is_some_and(|m| m.iter().all(Value::is_u64)))
        }),
        Values::Directions => v.as_array().is_some_and(|a| {
            !a.is_empty()
                && a.iter()
                    .all(|x| x.as_i64().is_some_and(|d| (-1..=1).contains(&d)))
        }),
        Values::FeatureSets => v.as_array().is_some_and(|sets| {
            !sets.is_empty()
                && sets.iter().all(|s| {
                    s.as_array().is_some_and(|m| {
                        !m.is_empty() && m.iter().all(|x| int_ok(x, 0, MAX_EXACT_INT))
                    })
                })
        }),
        Values::Metrics => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
    }
}

/// Checks every parameter against its spec; an error names the first that
/// is out of bounds, what it must be, and what it is.
pub fn check_bounds(params: &BoosterParams) -> Result<()> {
    if let Some(name) = non_finite_field(params) {
        let spec = PARAMS.iter().find(|s| s.name == name);
        let must = spec.map_or_else(String::new, expected);
        return Err(RgbmError::param(
            name,
            format!("{must}, got a non-finite number"),
        ));
    }
    let values = field_values(params);
    for spec in PARAMS {
        let v = values.get(spec.name).unwrap_or(&Value::Null);
        let ok = if v.is_null() {
            spec.optional
        } else {
            value_ok(spec.values, v)
        };
        if !ok {
            // serde_json writes non-finite floats as null: show the value itself.
            let shown = if v.is_null() {
                "a non-finite number".to_string()
            } else {
                v.to_string()
            };
            return Err(RgbmError::param(
                spec.name,
                format!("{}, got {shown}", expected(spec)),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::SelectionSize;

    /// Every parameter holding floats refuses NaN and ±∞ by name: the
    /// declaring macro checks every field, not a list.
    #[test]
    fn every_float_parameter_refuses_non_finite_values() {
        let mut refused = Vec::new();
        for spec in PARAMS {
            for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                let mut p = BoosterParams::default();
                if !super::super::set_float_field(&mut p, spec.name, bad) {
                    continue;
                }
                let err = p.validate().expect_err(spec.name).to_string();
                assert!(
                    err.contains(spec.name) && err.contains("non-finite"),
                    "{}: {err}",
                    spec.name
                );
                refused.push(spec.name);
            }
        }
        let floats = PARAMS
            .iter()
            .filter(|s| matches!(s.values, Values::Float { .. }))
            .count();
        assert!(refused.len() >= 3 * floats, "{refused:?}");
        for name in ["cat_l2", "colsample_bynode", "rgb_lambdas", "alphas"] {
            assert!(refused.contains(&name), "{name}");
        }
    }

    #[test]
    fn the_table_lists_every_field_once_in_order() {
        // Fields that are not written when unset are set here.
        let every = BoosterParams {
            alpha: Some(0.5),
            tweedie_variance_power: Some(1.5),
            lambdarank_truncation_level: Some(30),
            eval_at: Some(10),
            categorical_features: Some(vec![0]),
            max_cat_to_onehot: Some(4),
            max_cat_threshold: Some(32),
            cat_smooth: Some(10.0),
            min_data_per_group: Some(100),
            min_data_in_bin: Some(3),
            cat_l2: Some(10.0),
            subsample_for: Some(crate::options::SubsampleFor::Split),
            subsample_freq: Some(2),
            langevin_split_noise: Some(false),
            summation: Some(crate::options::Summation::Exact),
            rgb_step: Some(crate::options::RgbStep::Exact),
            rgb_candidate: Some(crate::options::RgbCandidate::Projected),
            rgb_penalty: Some(crate::options::RgbPenalty::Weighted),
            monotone_constraints: Some(vec![1]),
            interaction_constraints: Some(vec![vec![0]]),
            early_stopping_min_delta: Some(0.1),
            n_targets: Some(2),
            alphas: Some(vec![0.1, 0.9]),
            reg_alpha: 1.0,
            max_delta_step: 1.0,
            path_smooth: 1.0,
            extra_trees: true,
            use_quantized_grad: true,
            num_grad_quant_bins: 8,
            quant_train_renew_leaf: true,
            stochastic_rounding: false,
            feature_weights: Some(vec![1.0]),
            colsample_bylevel: Some(0.5),
            colsample_bynode: Some(0.5),
            ..Default::default()
        };
        let defaults = serde_json::to_value(every).unwrap();
        let fields: Vec<&String> = defaults.as_object().unwrap().keys().collect();
        let names: Vec<&str> = PARAMS.iter().map(|p| p.name).collect();
        assert_eq!(fields.len(), names.len());
        let mut sorted_names = names.clone();
        sorted_names.sort_unstable();
        let mut sorted_fields: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
        sorted_fields.sort_unstable();
        assert_eq!(sorted_names, sorted_fields);
    }

    #[test]
    fn defaults_are_within_bounds() {
        check_bounds(&BoosterParams::default()).unwrap();
        let schema: Value = serde_json::from_str(&schema_json().unwrap()).unwrap();
        assert_eq!(schema.as_array().unwrap().len(), PARAMS.len());
        assert_eq!(schema[1]["name"], "learning_rate");
        assert_eq!(schema[1]["default"], 0.1);
        assert_eq!(schema[1]["type"], "float");
    }

    #[test]
    fn out_of_bounds_values_are_named() {
        let cases: Vec<(BoosterParams, &str)> = vec![
            (
                BoosterParams {
                    max_depth: Some(65),
                    ..Default::default()
                },
                "`max_depth`: must be an integer in [1, 64] or None, got 65",
            ),
            (
                BoosterParams {
                    learning_rate: f64::NAN,
                    ..Default::default()
                },
                "`learning_rate`: must be a finite number > 0, got a non-finite number",
            ),
            (
                BoosterParams {
                    subsample: 1.5,
                    ..Default::default()
                },
                "`subsample`: must be a number in (0, 1], got 1.5",
            ),
            (
                BoosterParams {
                    n_estimators: 0,
                    ..Default::default()
                },
                "`n_estimators`: must be an integer in [1, 10000000], got 0",
            ),
            (
                BoosterParams {
                    rgb_lambdas: Some(vec![]),
                    ..Default::default()
                },
                "`rgb_lambdas`: must be a non-empty list of finite numbers > 0 or None, got []",
            ),
            (
                BoosterParams {
                    clamp: Some(f64::NAN),
                    loss: crate::options::Loss::Logistic,
                    ..Default::default()
                },
                "`clamp`: must be a number in (0, 0.5) or None, got a non-finite number",
            ),
            (
                BoosterParams {
                    selection: crate::options::Selection::Random,
                    selection_size: Some(SelectionSize::Fraction(f64::INFINITY)),
                    ..Default::default()
                },
                "`selection_size`: must be a count >= 1 or a fraction in (0, 1] or None, got a non-finite number",
            ),
        ];
        for (p, want) in cases {
            let e = check_bounds(&p).unwrap_err().to_string();
            assert!(e.contains(want), "{e} lacks {want}");
        }
    }
}
