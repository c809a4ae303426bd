//! XGBoost's `colsample_bylevel` and `colsample_bynode`: the features a
//! node searches, drawn from the tree's candidate features, once per depth
//! level and then once per node of that level. Each draw is keyed by
//! (random_state, tree, depth) or (random_state, tree, node), never by the
//! order nodes are searched in, so a model does not depend on the thread
//! count or on how the rows are sharded. Histograms still cover the
//! tree's candidates: a node's larger child is derived by subtraction.
use std::sync::Arc;

use rand::Rng;

use crate::params::BoosterParams;
use crate::rng::{Purpose, RowDraws};
use crate::selection::weighted_sample;

/// A fit's column sampling: the two fractions and the feature weights.
#[derive(Clone, Debug)]
pub struct ColumnSampler {
    level: f64,
    node: f64,
    seed: u64,
    weights: Option<Arc<[f64]>>,
}

impl ColumnSampler {
    /// None when neither fraction samples.
    pub fn new(params: &BoosterParams) -> Option<ColumnSampler> {
        params.samples_columns().then(|| ColumnSampler {
            level: params.colsample_bylevel(),
            node: params.colsample_bynode(),
            seed: params.random_state,
            weights: params.feature_weights.as_deref().map(Arc::from),
        })
    }

    /// The draws of the tree of stream `stream_id`.
    pub fn for_tree(&self, stream_id: u64) -> TreeColumns {
        TreeColumns {
            level: self.level,
            node: self.node,
            level_draws: RowDraws::new(self.seed, Purpose::ColumnLevel, stream_id),
            node_draws: RowDraws::new(self.seed, Purpose::ColumnNode, stream_id),
            weights: self.weights.clone(),
            tree_features: Vec::new(),
        }
    }
}

/// One tree's column draws.
#[derive(Clone, Debug)]
pub struct TreeColumns {
    level: f64,
    node: f64,
    level_draws: RowDraws,
    node_draws: RowDraws,
    weights: Option<Arc<[f64]>>,
    /// The tree's candidate features, ascending (set as the tree starts).
    tree_features: Vec<usize>,
}

impl TreeColumns {
    pub(super) fn start_tree(&mut self, features: &[usize]) {
        self.tree_features.clear();
        self.tree_features.extend_from_slice(features);
    }

    /// The features the node created `order`-th in the tree, at `depth`,
    /// may search, ascending.
    pub(super) fn node_features(&self, depth: usize, order: usize) -> Vec<usize> {
        let weights = self.weights.as_deref();
        let mut rng = self.level_draws.row(depth as u64);
        let level = draw(&self.tree_features, self.level, &mut rng, weights);
        let mut rng = self.node_draws.row(order as u64);
        draw(&level, self.node, &mut rng, weights)
    }
}

/// ceil(`fraction` × |from|) of the features `from` (ascending), at least
/// one, drawn without replacement (in proportion to `weights` if given).
fn draw<R: Rng>(from: &[usize], fraction: f64, rng: &mut R, weights: Option<&[f64]>) -> Vec<usize> {
    if fraction >= 1.0 || from.is_empty() {
        return from.to_vec();
    }
    let size = ((fraction * from.len() as f64).ceil() as usize).clamp(1, from.len());
    match weights {
        Some(w) => {
            let of: Vec<f64> = from.iter().map(|&j| w[j]).collect();
            // Ascending indices into `from` keep the result ascending.
            weighted_sample(rng, &of, size)
                .into_iter()
                .map(|k| from[k])
                .collect()
        }
        None => {
            let mut picked: Vec<usize> = rand::seq::index::sample(rng, from.len(), size)
                .into_iter()
                .map(|k| from[k])
                .collect();
            picked.sort_unstable();
            picked
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(level: f64, node: f64, weights: Option<Vec<f64>>) -> TreeColumns {
        let params = BoosterParams {
            colsample_bylevel: Some(level),
            colsample_bynode: Some(node),
            feature_weights: weights,
            random_state: 7,
            ..Default::default()
        };
        let mut t = ColumnSampler::new(&params).expect("samples").for_tree(3);
        t.start_tree(&[0, 2, 3, 5, 8, 9, 11, 12, 13, 20]);
        t
    }

    /// Every node of a level searches a subset of one level set of
    /// ceil(0.5 × 10) = 5 tree features; each node keeps ceil(0.6 × 5) = 3.
    #[test]
    fn nodes_nest_in_their_level_and_the_level_in_the_tree() {
        let t = columns(0.5, 0.6, None);
        for depth in 0..6 {
            let level = draw(
                &t.tree_features,
                0.5,
                &mut t.level_draws.row(depth as u64),
                None,
            );
            assert_eq!(level.len(), 5);
            assert!(level.iter().all(|j| t.tree_features.contains(j)));
            for order in 0..40 {
                let node = t.node_features(depth, order);
                assert_eq!(node.len(), 3, "depth {depth} node {order}");
                assert!(node.windows(2).all(|w| w[0] < w[1]));
                assert!(node.iter().all(|j| level.contains(j)));
                assert_eq!(
                    node,
                    t.node_features(depth, order),
                    "a draw is a function of its key"
                );
            }
        }
    }

    /// Each of n features is in a uniform draw of k with probability k/n:
    /// a node's inclusion frequency over many nodes, against k/n per level
    /// times k'/k per node.
    #[test]
    fn uniform_draws_include_each_feature_equally() {
        let t = columns(0.5, 0.4, None);
        let mut seen = [0usize; 21];
        let (depths, orders) = (200, 50);
        for depth in 0..depths {
            // Nodes are numbered through the tree, so each has its own order.
            for order in depth * orders..(depth + 1) * orders {
                for j in t.node_features(depth, order) {
                    seen[j] += 1;
                }
            }
        }
        let draws = (depths * orders) as f64;
        // 5 of 10 per level, 2 of those 5 per node: 2/10 each.
        for &j in &t.tree_features {
            let rate = seen[j] as f64 / draws;
            let se = (0.2f64 * 0.8 / draws).sqrt();
            // Nodes of one level share its draw: allow for that clustering.
            assert!((rate - 0.2).abs() < 12.0 * se, "feature {j}: {rate}");
        }
        assert_eq!(seen.iter().sum::<usize>(), depths * orders * 2);
    }

    /// A feature of weight 0 is never drawn; a heavy one nearly always is.
    #[test]
    fn weights_steer_both_draws() {
        let mut w = vec![1.0; 21];
        w[3] = 0.0;
        w[12] = 1e6;
        let t = columns(0.3, 0.5, Some(w));
        for depth in 0..50 {
            for order in 0..20 {
                let node = t.node_features(depth, order);
                assert!(!node.contains(&3));
                assert!(node.contains(&12), "depth {depth} node {order}: {node:?}");
            }
        }
    }

    #[test]
    fn a_fraction_keeps_at_least_one_feature() {
        let t = columns(1e-6, 1e-6, None);
        assert_eq!(t.node_features(0, 0).len(), 1);
        assert!(ColumnSampler::new(&BoosterParams::default()).is_none());
    }
}
