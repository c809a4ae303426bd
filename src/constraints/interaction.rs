//! Interaction constraints (XGBoost's rule): at the root every feature may
//! split; below it, a node may split on the features already used on its
//! path and on every member of each set that contains all of them. So a
//! path's features always lie in one set, except that a feature in no set
//! may split a path on its own (its subtree then splits on it only).
use crate::error::{Result, RgbmError};

#[derive(Clone, Debug)]
pub struct Interactions {
    /// The sets, each as a membership mask over the features.
    sets: Vec<Vec<bool>>,
}

impl Interactions {
    pub fn new(sets: &[Vec<usize>], n_features: usize) -> Result<Interactions> {
        let mut masks = Vec::with_capacity(sets.len());
        for (k, set) in sets.iter().enumerate() {
            let mut mask = vec![false; n_features];
            for &j in set {
                if j >= n_features {
                    return Err(RgbmError::param(
                        "interaction_constraints",
                        format!("set {k} names feature {j}, but X has {n_features} features"),
                    ));
                }
                mask[j] = true;
            }
            masks.push(mask);
        }
        Ok(Interactions { sets: masks })
    }

    /// Which features a node may split on, given the features `used` on its
    /// path; `None` when all may (the root).
    pub fn allowed(&self, used: &[u32]) -> Option<Vec<bool>> {
        let (&first, _) = used.split_first()?;
        let n = self.sets.first().map_or(0, Vec::len);
        let mut allowed = vec![false; n];
        for &j in used {
            allowed[j as usize] = true;
        }
        for set in &self.sets {
            if set[first as usize] && used.iter().all(|&j| set[j as usize]) {
                allowed.iter_mut().zip(set).for_each(|(a, &s)| *a |= s);
            }
        }
        Some(allowed)
    }
}

/// `used` with feature `j` added (kept sorted and distinct).
pub fn with_feature(used: &[u32], j: u32) -> Vec<u32> {
    let mut out = used.to_vec();
    if let Err(at) = out.binary_search(&j) {
        out.insert(at, j);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(mask: Option<Vec<bool>>) -> Option<Vec<usize>> {
        mask.map(|m| (0..m.len()).filter(|&j| m[j]).collect())
    }

    #[test]
    fn a_path_stays_within_the_sets_that_hold_all_its_features() {
        let c = Interactions::new(&[vec![0, 1, 2], vec![2, 3]], 6).unwrap();
        assert_eq!(names(c.allowed(&[])), None);
        assert_eq!(names(c.allowed(&[0])), Some(vec![0, 1, 2]));
        // 2 is in both sets: either may continue.
        assert_eq!(names(c.allowed(&[2])), Some(vec![0, 1, 2, 3]));
        assert_eq!(names(c.allowed(&[0, 2])), Some(vec![0, 1, 2]));
        assert_eq!(names(c.allowed(&[2, 3])), Some(vec![2, 3]));
        // A feature in no set interacts with nothing.
        assert_eq!(names(c.allowed(&[5])), Some(vec![5]));
        assert_eq!(with_feature(&[1, 4], 3), vec![1, 3, 4]);
        assert_eq!(with_feature(&[1, 4], 4), vec![1, 4]);
    }
}
