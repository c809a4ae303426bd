//! RGBM's random-then-greedy weak-learner selection (Lu & Mazumder 2020,
//! section 1.2.1): draw a candidate set J, then search the best split in J only.
//!
//! The weak-learner space is every candidate split (feature j, threshold b);
//! K = Σ_j (value bins of j − 1). Groups partition the features (default:
//! one group per feature).
use rand_chacha::ChaCha8Rng;

use crate::data::BinnedDataset;
use crate::error::{Result, RgbmError};
use crate::params::{BoosterParams, Selection, SelectionSize};

/// Lu & Mazumder's formula (18): the minimal cosine angle Θ of Type 1
/// selection (t of p weak learners drawn uniformly without replacement)
/// for p orthogonal weak learners, min_i (1/√i)·Σ_{j≤i} γ(j), where
/// γ(j) = C(p−j, t−1)/C(p, t) is the chance that the j-th best learner is
/// the best one drawn (their eq. 10). t = p (Type 0) gives 1/√p, t = 1
/// gives 1/p.
pub fn type1_theta(p: usize, t: usize) -> Result<f64> {
    if t == 0 || t > p {
        return Err(RgbmError::param(
            "t",
            format!("must be in 1..=p (p = {p}), got {t}"),
        ));
    }
    // γ(1) = t/p; γ(j+1) = γ(j)·(p−j−t+1)/(p−j), zero once j > p − t.
    let (pf, tf) = (p as f64, t as f64);
    let (mut gamma, mut cumulative, mut theta) = (tf / pf, 0.0f64, f64::INFINITY);
    for j in 1..=p {
        cumulative += gamma;
        theta = theta.min(cumulative / (j as f64).sqrt());
        let jf = j as f64;
        gamma *= ((pf - jf - tf + 1.0) / (pf - jf)).max(0.0);
        if gamma == 0.0 {
            // The rest only adds nothing while √i grows: the minimum is at i = p.
            theta = theta.min(cumulative / pf.sqrt());
            break;
        }
    }
    Ok(theta)
}

/// A drawn candidate set.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidates {
    /// Features whose splits may be chosen, ascending.
    pub features: Vec<usize>,
    /// Type 1 only: for each entry of `features`, which thresholds (bins) are candidates.
    pub allowed: Option<Vec<Vec<bool>>>,
}

impl Candidates {
    pub fn all(n_features: usize) -> Candidates {
        Candidates {
            features: (0..n_features).collect(),
            allowed: None,
        }
    }

    /// The candidates on the features `keep` marks (with their thresholds).
    pub fn restricted_to(&self, keep: &[bool]) -> Candidates {
        self.filtered(|j| keep[j])
    }

    /// The candidates on the features `keep(j)` accepts (with their thresholds).
    pub fn filtered(&self, keep: impl Fn(usize) -> bool) -> Candidates {
        let picked = || (0..self.features.len()).filter(|&k| keep(self.features[k]));
        Candidates {
            features: picked().map(|k| self.features[k]).collect(),
            allowed: self
                .allowed
                .as_ref()
                .map(|a| picked().map(|k| a[k].clone()).collect()),
        }
    }
}

/// Draws candidate sets for one dataset.
#[derive(Clone, Debug)]
pub struct Selector {
    kind: Selection,
    /// t, resolved to a count.
    size: usize,
    /// The feature groups; None: each feature is its own group (not stored:
    /// a million-column dataset would hold a million one-element vectors).
    groups: Option<Vec<Vec<usize>>>,
    n_features: usize,
    /// Random selection only (else empty): prefix sums of the number of
    /// candidate thresholds per feature (length p + 1).
    split_offsets: Vec<usize>,
    /// `feature_weights` (group draws of single features only).
    weights: Option<Vec<f64>>,
}

fn resolve(size: SelectionSize, of: usize, what: &str) -> Result<usize> {
    match size {
        SelectionSize::Count(c) if c >= 1 && c <= of => Ok(c),
        SelectionSize::Count(c) => Err(RgbmError::param(
            "selection_size",
            format!("{c} is more than the {of} {what}"),
        )),
        SelectionSize::Fraction(f) => Ok(((f * of as f64).ceil() as usize).clamp(1, of)),
    }
}

/// Checks that `groups` partition 0..p.
fn check_partition(groups: &[Vec<usize>], p: usize) -> Result<()> {
    let mut seen = vec![false; p];
    for (g, group) in groups.iter().enumerate() {
        if group.is_empty() {
            return Err(RgbmError::param("groups", format!("group {g} is empty")));
        }
        for &j in group {
            if j >= p {
                return Err(RgbmError::param(
                    "groups",
                    format!("group {g} names feature {j}, but X has {p} features"),
                ));
            }
            if seen[j] {
                return Err(RgbmError::param(
                    "groups",
                    format!("feature {j} is in more than one group"),
                ));
            }
            seen[j] = true;
        }
    }
    if let Some(j) = seen.iter().position(|s| !s) {
        return Err(RgbmError::param(
            "groups",
            format!("feature {j} is in no group; groups must partition the features"),
        ));
    }
    Ok(())
}

impl Selector {
    pub fn new(params: &BoosterParams, data: &BinnedDataset) -> Result<Selector> {
        let p = data.n_features();
        let groups = match &params.groups {
            Some(g) => {
                check_partition(g, p)?;
                Some(
                    g.iter()
                        .map(|grp| {
                            let mut grp = grp.clone();
                            grp.sort_unstable();
                            grp
                        })
                        .collect::<Vec<_>>(),
                )
            }
            None => None,
        };
        let n_groups = groups.as_ref().map_or(p, Vec::len);
        let mut split_offsets = Vec::new();
        let mut k = 0;
        if params.selection == Selection::Random {
            split_offsets.reserve(p + 1);
            for fb in &data.mapper.features {
                split_offsets.push(k);
                k += fb.n_value_bins() - 1;
            }
            split_offsets.push(k);
        }
        let size = match (params.selection, params.selection_size) {
            (Selection::Random, Some(s)) => resolve(s, k.max(1), "candidate splits")?,
            (Selection::Groups, Some(s)) => resolve(s, n_groups, "groups")?,
            _ => 1,
        };
        let weights = match &params.feature_weights {
            Some(w) if w.len() != p => {
                return Err(RgbmError::param(
                    "feature_weights",
                    format!("has {} weights, but X has {p} features", w.len()),
                ));
            }
            w => w.clone(),
        };
        Ok(Selector {
            kind: params.selection,
            size,
            groups,
            n_features: p,
            split_offsets,
            weights,
        })
    }

    /// Whether every split is a candidate (no draw needed).
    pub fn is_full(&self) -> bool {
        self.kind == Selection::Full
    }

    /// t as a count.
    pub fn size(&self) -> usize {
        self.size
    }

    pub fn n_groups(&self) -> usize {
        self.groups.as_ref().map_or(self.n_features, Vec::len)
    }

    /// Draws J.
    pub fn draw(&self, rng: &mut ChaCha8Rng) -> Candidates {
        let p = self.n_features;
        match self.kind {
            Selection::Full => Candidates::all(p),
            // Type 2 is Type 3 with t = 1, drawn the same way.
            Selection::Group | Selection::Groups if self.weights.is_some() => {
                let weights = self.weights.as_deref().unwrap_or(&[]);
                Candidates {
                    features: weighted_sample(rng, weights, self.size),
                    allowed: None,
                }
            }
            Selection::Group | Selection::Groups => {
                let drawn = rand::seq::index::sample(rng, self.n_groups(), self.size);
                let mut features: Vec<usize> = match &self.groups {
                    Some(groups) => drawn
                        .into_iter()
                        .flat_map(|g| groups[g].iter().copied())
                        .collect(),
                    None => drawn.into_vec(),
                };
                features.sort_unstable();
                Candidates {
                    features,
                    allowed: None,
                }
            }
            Selection::Random => {
                let k = self.split_offsets[p];
                if k == 0 {
                    return Candidates {
                        features: Vec::new(),
                        allowed: None,
                    };
                }
                let mut picks: Vec<usize> = rand::seq::index::sample(rng, k, self.size).into_vec();
                picks.sort_unstable();
                let mut features = Vec::new();
                let mut allowed: Vec<Vec<bool>> = Vec::new();
                for idx in picks {
                    // The feature whose candidate range holds idx.
                    let j = self.split_offsets.partition_point(|&o| o <= idx) - 1;
                    if features.last() != Some(&j) {
                        features.push(j);
                        allowed.push(vec![
                            false;
                            self.split_offsets[j + 1] - self.split_offsets[j]
                        ]);
                    }
                    if let Some(mask) = allowed.last_mut() {
                        mask[idx - self.split_offsets[j]] = true;
                    }
                }
                Candidates {
                    features,
                    allowed: Some(allowed),
                }
            }
        }
    }
}

/// `size` indices drawn without replacement, each draw with probability
/// proportional to the weights of those left (Efraimidis & Spirakis 2006:
/// the largest keys u^(1/w), compared as ln(u)/w), ascending; indices of
/// weight 0 are never drawn, so fewer come back when fewer have weight.
pub fn weighted_sample<R: rand::Rng + ?Sized>(
    rng: &mut R,
    weights: &[f64],
    size: usize,
) -> Vec<usize> {
    use rand::RngExt;
    let mut keys: Vec<(f64, usize)> = weights
        .iter()
        .enumerate()
        .map(|(j, &w)| {
            // u in (0, 1]: ln(u) is finite.
            let u = 1.0 - rng.random::<f64>();
            (u.ln() / w, j)
        })
        .filter(|&(_, j)| weights[j] > 0.0)
        .collect();
    // Largest key first; ties (probability 0) to the lower index.
    keys.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut picked: Vec<usize> = keys.iter().take(size).map(|&(_, j)| j).collect();
    picked.sort_unstable();
    picked
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Formula (18) against binomials computed directly, and its two ends.
    #[test]
    fn type1_theta_matches_the_binomial_formula() {
        let choose = |n: usize, k: usize| -> f64 {
            (0..k).map(|i| (n - i) as f64 / (i + 1) as f64).product()
        };
        for p in 1..=30 {
            for t in 1..=p {
                let mut best = f64::INFINITY;
                let mut sum = 0.0;
                for i in 1..=p {
                    if p - i >= t - 1 {
                        sum += choose(p - i, t - 1) / choose(p, t);
                    }
                    best = best.min(sum / (i as f64).sqrt());
                }
                let got = type1_theta(p, t).unwrap();
                assert!(
                    (got - best).abs() < 1e-12 * best,
                    "p {p} t {t}: {got} vs {best}"
                );
            }
            assert!((type1_theta(p, p).unwrap() - 1.0 / (p as f64).sqrt()).abs() < 1e-15);
            assert!((type1_theta(p, 1).unwrap() - 1.0 / p as f64).abs() < 1e-15);
        }
        assert!(type1_theta(5, 0).is_err() && type1_theta(5, 6).is_err());
        // Large p stays finite and between the two ends.
        let big = type1_theta(1_000_000, 100).unwrap();
        assert!(big > 1e-6 && big < 1e-3, "{big}");
    }
    use crate::data::DenseMatrix;
    use crate::params::SelectionScope;
    use crate::rng::{Purpose, stream};

    fn data(p: usize) -> BinnedDataset {
        let n = 200;
        let x: Vec<f64> = (0..n * p).map(|k| ((k * 7919) % 97) as f64).collect();
        BinnedDataset::from_matrix(&DenseMatrix::row_major(&x, n, p).unwrap(), 8, 0).unwrap()
    }

    fn params(
        selection: Selection,
        size: Option<SelectionSize>,
        groups: Option<Vec<Vec<usize>>>,
    ) -> BoosterParams {
        BoosterParams {
            selection,
            selection_size: size,
            groups,
            selection_scope: SelectionScope::Tree,
            ..Default::default()
        }
    }

    /// Chi-square goodness of fit of group draws against the uniform distribution.
    #[test]
    fn group_draws_are_uniform() {
        let d = data(10);
        let groups = vec![vec![0, 1], vec![2], vec![3, 4, 5], vec![6], vec![7, 8, 9]];
        let sel = Selector::new(&params(Selection::Group, None, Some(groups.clone())), &d).unwrap();
        let mut rng = stream(42, Purpose::Selection, 0);
        let draws = 20_000;
        let mut counts = vec![0usize; groups.len()];
        for _ in 0..draws {
            let c = sel.draw(&mut rng);
            let g = groups.iter().position(|g| *g == c.features).unwrap();
            counts[g] += 1;
        }
        let expected = draws as f64 / groups.len() as f64;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        // 4 degrees of freedom: P(chi2 > 18.47) = 0.001.
        assert!(chi2 < 18.47, "chi2 = {chi2}, counts {counts:?}");
    }

    #[test]
    fn groups_draw_t_distinct_groups_and_random_draws_t_splits() {
        let d = data(6);
        let sel = Selector::new(
            &params(Selection::Groups, Some(SelectionSize::Count(3)), None),
            &d,
        )
        .unwrap();
        let mut rng = stream(1, Purpose::Selection, 0);
        for _ in 0..50 {
            let c = sel.draw(&mut rng);
            assert_eq!(c.features.len(), 3);
            assert!(c.features.windows(2).all(|w| w[0] < w[1]));
        }
        let sel = Selector::new(
            &params(Selection::Random, Some(SelectionSize::Count(5)), None),
            &d,
        )
        .unwrap();
        for _ in 0..50 {
            let c = sel.draw(&mut rng);
            let allowed = c.allowed.unwrap();
            let total: usize = allowed
                .iter()
                .map(|m| m.iter().filter(|&&a| a).count())
                .sum();
            assert_eq!(total, 5);
            for (k, &j) in c.features.iter().enumerate() {
                assert_eq!(allowed[k].len(), d.mapper.features[j].n_value_bins() - 1);
            }
        }
        // Fractions round up and never give 0.
        let sel = Selector::new(
            &params(Selection::Groups, Some(SelectionSize::Fraction(0.01)), None),
            &d,
        )
        .unwrap();
        assert_eq!(sel.size(), 1);
    }

    #[test]
    fn bad_groups_and_sizes_are_rejected() {
        let d = data(4);
        for groups in [
            vec![vec![0, 1], vec![2]],
            vec![vec![0, 1], vec![1, 2, 3]],
            vec![vec![0, 1, 2, 3, 4]],
            vec![vec![0, 1, 2, 3], vec![]],
        ] {
            let e = Selector::new(
                &params(
                    Selection::Groups,
                    Some(SelectionSize::Count(1)),
                    Some(groups),
                ),
                &d,
            )
            .unwrap_err();
            assert!(e.to_string().contains("groups"), "{e}");
        }
        let e = Selector::new(
            &params(Selection::Groups, Some(SelectionSize::Count(5)), None),
            &d,
        )
        .unwrap_err();
        assert!(e.to_string().contains("selection_size"), "{e}");
    }

    /// Inclusion frequencies of weighted draws against the closed form:
    /// the chance of each ordered sequence of successive draws, each in
    /// proportion to the weights left, summed over the sequences.
    #[test]
    fn weighted_draws_match_successive_proportional_draws() {
        let weights = [4.0, 0.0, 1.0, 2.0, 0.5];
        for size in 1..=4 {
            let mut want = [0.0f64; 5];
            fn walk(w: &[f64], left: usize, taken: &mut Vec<usize>, p: f64, want: &mut [f64]) {
                if left == 0 {
                    for &j in taken.iter() {
                        want[j] += p;
                    }
                    return;
                }
                let rest: f64 = (0..w.len())
                    .filter(|j| !taken.contains(j))
                    .map(|j| w[j])
                    .sum();
                for j in 0..w.len() {
                    if !taken.contains(&j) && w[j] > 0.0 {
                        taken.push(j);
                        walk(w, left - 1, taken, p * w[j] / rest, want);
                        taken.pop();
                    }
                }
            }
            walk(&weights, size, &mut Vec::new(), 1.0, &mut want);
            let mut rng = stream(9, Purpose::Selection, size as u64);
            let draws = 40_000;
            let mut got = [0usize; 5];
            for _ in 0..draws {
                let s = weighted_sample(&mut rng, &weights, size);
                assert_eq!(s.len(), size);
                assert!(s.windows(2).all(|w| w[0] < w[1]));
                for j in s {
                    got[j] += 1;
                }
            }
            for j in 0..5 {
                let f = got[j] as f64 / draws as f64;
                // 4.5 standard errors of a frequency.
                let se = (want[j] * (1.0 - want[j]) / draws as f64).sqrt();
                assert!(
                    (f - want[j]).abs() <= 4.5 * se + 1e-12,
                    "size {size} feature {j}: {f} vs {}",
                    want[j]
                );
            }
            assert_eq!(got[1], 0);
        }
        // More asked than have weight: only those.
        let mut rng = stream(1, Purpose::Selection, 0);
        assert_eq!(
            weighted_sample(&mut rng, &[0.0, 3.0, 0.0, 1.0], 3),
            vec![1, 3]
        );
    }
}
