//! The weak learner of a round: a tree grown on the features that RGBM's
//! random selection offers.
use crate::cancel::Cancel;
use crate::constraints::TreeConstraints;
use crate::data::BinnedDataset;
use crate::error::Result;
use crate::histogram::Gradients;
use crate::params::{BoosterParams, SelectionScope};
use crate::reduce::Reduce;
use crate::rng::{Purpose, RowDraws, stream};
use crate::selection::{Candidates, Selector};
use crate::tree::grower::GrownTree;
use crate::tree::grower::column_sample::ColumnSampler;
use crate::tree::{GrowerConfig, NodeSelection, TreeGrower};

/// The weak learner of RGBM: a tree grown on the candidate features J that
/// the random selection draws (or on all of them).
pub(super) struct WeakLearner<'a> {
    grower: TreeGrower<'a>,
    selector: Selector,
    columns: Option<ColumnSampler>,
    all_features: Candidates,
    pub n_features: usize,
}

impl<'a> WeakLearner<'a> {
    pub fn new(
        params: &BoosterParams,
        data: &'a BinnedDataset,
        cfg: GrowerConfig,
        constraints: &'a TreeConstraints,
        cancel: &Cancel,
        reduce: &'a dyn Reduce,
    ) -> Result<Self> {
        let mut grower = TreeGrower::constrained(data, cfg, constraints)?;
        grower.set_cancel(cancel.clone());
        grower.set_reduce(reduce);
        Ok(WeakLearner {
            grower,
            selector: Selector::new(params, data)?,
            columns: ColumnSampler::new(params),
            all_features: Candidates::all(data.n_features()),
            n_features: data.n_features(),
        })
    }

    /// Selects the candidate features (all of them, one draw for the tree,
    /// or a draw per node) and grows the tree on them. Also returns how
    /// many features the tree searched, when one set serves the whole tree.
    pub fn grow(
        &mut self,
        params: &BoosterParams,
        grads: &Gradients,
        rows: &mut [u32],
        all_rows: bool,
        stream_id: u64,
    ) -> Result<(GrownTree, Option<usize>)> {
        let mut select_rng = stream(params.random_state, Purpose::Selection, stream_id);
        let grower = &mut self.grower;
        grower.set_columns(self.columns.as_ref().map(|c| c.for_tree(stream_id)));
        grower.set_extra_trees(
            params
                .extra_trees
                .then(|| RowDraws::new(params.random_state, Purpose::ExtraTrees, stream_id)),
        );
        if self.selector.is_full() {
            let selection = NodeSelection::Tree(&self.all_features);
            Ok((
                grower.grow(grads, rows, all_rows, selection)?,
                Some(self.n_features),
            ))
        } else if params.selection_scope == SelectionScope::Tree {
            let cands = self.selector.draw(&mut select_rng);
            let searched = cands.features.len();
            let selection = NodeSelection::Tree(&cands);
            Ok((
                grower.grow(grads, rows, all_rows, selection)?,
                Some(searched),
            ))
        } else {
            let selection = NodeSelection::Node(&self.selector, &mut select_rng);
            Ok((grower.grow(grads, rows, all_rows, selection)?, None))
        }
    }
}
