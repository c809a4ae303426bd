//! Constraints on what a tree may learn: monotone directions per feature
//! (`monotone`) and sets of features allowed to interact (`interaction`),
//! checked against the data's width once per fit.
pub mod interaction;
pub mod monotone;

use crate::error::{Result, RgbmError};
use crate::params::BoosterParams;

pub use interaction::Interactions;
pub use monotone::{Bounds, MonotoneSplit};

/// The constraints of one fit, resolved against its number of features.
#[derive(Clone, Debug, Default)]
pub struct TreeConstraints {
    /// −1, 0 or +1 per feature; empty when no feature is constrained, so an
    /// all-zero vector grows exactly the unconstrained trees.
    pub monotone: Vec<i8>,
    /// `None` when every feature may interact with every other.
    pub interactions: Option<Interactions>,
}

/// No constraint at all.
pub static NO_CONSTRAINTS: TreeConstraints = TreeConstraints {
    monotone: Vec::new(),
    interactions: None,
};

impl TreeConstraints {
    /// The constraints of `params` for data with `n_features` columns: a
    /// monotone vector must have one entry per feature and the interaction
    /// sets must name existing features.
    pub fn new(params: &BoosterParams, n_features: usize) -> Result<TreeConstraints> {
        if let Some(m) = &params.monotone_constraints
            && m.len() != n_features
        {
            return Err(RgbmError::param(
                "monotone_constraints",
                format!(
                    "has {} entries but X has {n_features} features (one entry per feature)",
                    m.len()
                ),
            ));
        }
        let interactions = params
            .interaction_constraints
            .as_deref()
            .map(|sets| Interactions::new(sets, n_features))
            .transpose()?;
        Ok(TreeConstraints {
            monotone: if params.has_monotone() {
                params.monotone().to_vec()
            } else {
                Vec::new()
            },
            interactions,
        })
    }

    /// Whether some feature has a monotone direction.
    pub fn has_monotone(&self) -> bool {
        !self.monotone.is_empty()
    }

    /// The direction of feature `j` (0 when unconstrained).
    #[inline]
    pub fn direction(&self, j: usize) -> i8 {
        self.monotone.get(j).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_indices_are_checked_against_the_data() {
        let p = BoosterParams {
            monotone_constraints: Some(vec![1, 0]),
            ..Default::default()
        };
        let e = TreeConstraints::new(&p, 3).unwrap_err().to_string();
        assert!(e.contains("has 2 entries but X has 3 features"), "{e}");
        assert!(TreeConstraints::new(&p, 2).unwrap().has_monotone());
        let zeros = BoosterParams {
            monotone_constraints: Some(vec![0, 0]),
            ..Default::default()
        };
        assert!(!TreeConstraints::new(&zeros, 2).unwrap().has_monotone());
        let sets = BoosterParams {
            interaction_constraints: Some(vec![vec![0, 4]]),
            ..Default::default()
        };
        let e = TreeConstraints::new(&sets, 3).unwrap_err().to_string();
        assert!(
            e.contains("set 0 names feature 4, but X has 3 features"),
            "{e}"
        );
    }
}
