//! The kinds of values a parameter takes and the entry each parameter has
//! in `PARAMS` (declared with the parameters in `params/mod.rs`; checked
//! and written out by `table.rs`), and how a field's floats are read.
use serde::Serialize;

use crate::options::{self, SelectionSize};

/// Largest tree count, early-stopping patience and the like: far beyond use,
/// small enough that per-round buffers stay allocatable.
pub const MAX_ROUNDS: u64 = 10_000_000;
/// Largest category code of a categorical feature (bitsets of categories
/// stay at most 8 KiB per split).
pub const MAX_CATEGORY: u64 = 65_535;
/// Integers above 2^53 do not survive a trip through a float (JSON, Python).
pub const MAX_EXACT_INT: u64 = 1 << 53;

/// The values a parameter takes.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Values {
    /// An integer in [min, max].
    Int {
        min: u64,
        max: u64,
    },
    /// A finite number between `min` and `max` (None = unbounded), each end
    /// open or closed.
    Float {
        min: f64,
        min_closed: bool,
        max: Option<f64>,
        max_closed: bool,
    },
    /// One of a few names.
    Choice {
        options: &'static [&'static str],
    },
    Bool,
    /// A count t >= 1, or a fraction in (0, 1].
    CountOrFraction,
    /// A non-empty list of integers in [min, max].
    IntList {
        min: u64,
        max: u64,
    },
    /// A non-empty list of finite numbers > 0.
    PositiveList,
    /// A non-empty list of finite numbers >= 0.
    NonNegativeList,
    /// A partition of the features: a list of lists of feature indices.
    FeatureGroups,
    /// A non-empty list of −1, 0 and 1 (one per feature).
    Directions,
    /// A non-empty list of non-empty lists of feature indices.
    FeatureSets,
    /// A list of metric names (checked against the loss); empty evaluates
    /// no built-in metric, only a training monitor's own (Python callables).
    Metrics,
}

/// Where a parameter has an effect.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every fit.
    Any,
    /// Fits of these losses only (others ignore it).
    Losses(&'static [options::Loss]),
    /// Fits of this booster only (others refuse it).
    Booster(options::BoosterKind),
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct ParamSpec {
    pub name: &'static str,
    #[serde(flatten)]
    pub values: Values,
    /// None is allowed (and means what `doc` says).
    pub optional: bool,
    pub doc: &'static str,
    pub scope: Scope,
}

impl ParamSpec {
    /// The spec with its effect limited to `scope`.
    pub(super) const fn only(self, scope: Scope) -> ParamSpec {
        ParamSpec { scope, ..self }
    }
}

pub(super) const fn int(min: u64, max: u64) -> Values {
    Values::Int { min, max }
}
pub(super) const POSITIVE: Values = Values::Float {
    min: 0.0,
    min_closed: false,
    max: None,
    max_closed: false,
};
/// A fraction in (0, 1].
pub(super) const FRACTION: Values = Values::Float {
    min: 0.0,
    min_closed: false,
    max: Some(1.0),
    max_closed: true,
};
pub(super) const NON_NEGATIVE: Values = Values::Float {
    min: 0.0,
    min_closed: true,
    max: None,
    max_closed: false,
};
pub(super) const fn spec(name: &'static str, values: Values, doc: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        values,
        optional: false,
        doc,
        scope: Scope::Any,
    }
}
pub(super) const fn maybe(name: &'static str, values: Values, doc: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        values,
        optional: true,
        doc,
        scope: Scope::Any,
    }
}

/// A parameter's value as far as floats go: whether it holds a non-finite
/// one (JSON has no NaN, so `Some(NaN)` would read as None in the table's
/// check), and, for tests, setting it to a float. The declaring macro
/// calls it for every field, so no float can be missed.
pub(super) trait FloatField {
    fn non_finite(&self) -> bool {
        false
    }
    /// Sets the field to `v` (a list to `[v]`) if it holds floats.
    #[cfg(test)]
    fn set_float(&mut self, _v: f64) -> bool {
        false
    }
}

impl FloatField for f64 {
    fn non_finite(&self) -> bool {
        !self.is_finite()
    }
    #[cfg(test)]
    fn set_float(&mut self, v: f64) -> bool {
        *self = v;
        true
    }
}

impl FloatField for Option<f64> {
    fn non_finite(&self) -> bool {
        self.is_some_and(|x| !x.is_finite())
    }
    #[cfg(test)]
    fn set_float(&mut self, v: f64) -> bool {
        *self = Some(v);
        true
    }
}

impl FloatField for Option<Vec<f64>> {
    fn non_finite(&self) -> bool {
        self.as_ref()
            .is_some_and(|xs| xs.iter().any(|x| !x.is_finite()))
    }
    #[cfg(test)]
    fn set_float(&mut self, v: f64) -> bool {
        *self = Some(vec![v]);
        true
    }
}

impl FloatField for Option<SelectionSize> {
    fn non_finite(&self) -> bool {
        matches!(self, Some(SelectionSize::Fraction(f)) if !f.is_finite())
    }
    #[cfg(test)]
    fn set_float(&mut self, v: f64) -> bool {
        *self = Some(SelectionSize::Fraction(v));
        true
    }
}

/// Fields that hold no float.
macro_rules! no_floats {
    ($($ty:ty),+ $(,)?) => { $(impl FloatField for $ty {})+ };
}
no_floats!(
    bool,
    u64,
    usize,
    Option<bool>,
    Option<u64>,
    Option<usize>,
    Option<Vec<usize>>,
    Option<Vec<Vec<usize>>>,
    Option<Vec<i8>>,
    Option<Vec<options::Metric>>,
    options::BoosterKind,
    options::Init,
    options::Loss,
    options::Mode,
    options::Selection,
    options::SelectionScope,
    options::Step,
    Option<options::RgbCandidate>,
    Option<options::RgbPenalty>,
    Option<options::RgbStep>,
    Option<options::SubsampleFor>,
    Option<options::Summation>,
);
