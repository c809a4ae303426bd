//! A round of splits: each chosen leaf's split recorded and its rows
//! partitioned (`divide`), the children's histograms built or derived by
//! subtraction (`build_children`), combined across shards in one exchange,
//! and searched for their own best splits (`search_children`).
use super::*;

impl TreeGrower<'_> {
    /// Splits the leaves `batch` (indices into `leaves`, in split order):
    /// their children with histograms built, combined and searched.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn split_batch(
        &mut self,
        batch: &[usize],
        leaves: &mut [OpenLeaf],
        tree: &mut Tree,
        node_bounds: &mut Vec<Bounds>,
        rows: &mut [u32],
        grads: &Gradients,
        created: &mut usize,
        selection: &mut NodeSelection,
        last: bool,
    ) -> Result<Vec<(OpenLeaf, OpenLeaf)>> {
        let mut pairs = Vec::with_capacity(batch.len());
        for &i in batch {
            let pair = self.divide(&mut leaves[i], tree, node_bounds, rows, created)?;
            pairs.push(pair);
        }
        let rows: &[u32] = rows;
        for pair in &mut pairs {
            self.build_children(pair, rows, grads, selection, last)?;
        }
        // One exchange for the batch: the built histograms, over each one's
        // candidates (the smaller child's cover the larger one's too).
        let mut built: Vec<(&mut Histogram, &[usize])> = Vec::new();
        for p in &mut pairs {
            let cands = p.cands.as_ref();
            for (k, h) in p.hists.iter_mut().enumerate() {
                if let Some(h) = h {
                    let own = [&p.left, &p.right][k].cands.as_ref();
                    let c = own.or(cands).unwrap_or_else(|| tree_cands(selection));
                    built.push((h, &c.features));
                }
            }
        }
        reduce::sum_histograms(self.reduce, &mut built, &self.data.bin_offsets)?;
        drop(built);
        let mut out = Vec::with_capacity(pairs.len());
        for pair in pairs {
            out.push(self.search_children(pair, rows, &*selection)?);
        }
        Ok(out)
    }

    /// Records `leaf`'s split in `tree` and partitions its rows: the two
    /// children, not yet searched.
    fn divide(
        &mut self,
        leaf: &mut OpenLeaf,
        tree: &mut Tree,
        node_bounds: &mut Vec<Bounds>,
        rows: &mut [u32],
        created: &mut usize,
    ) -> Result<Pair> {
        tree.reserve_node()?;
        let mut cand = leaf.best.take().expect("picked leaves have a split");
        let node = tree.feature.len();
        tree.feature.push(cand.feature as u32);
        tree.threshold.push(cand.threshold);
        tree.default_left.push(cand.default_left);
        tree.left.push(0);
        tree.right.push(0);
        tree.gain.push(cand.gain);
        tree.count.push(leaf.total.n);
        if self.constraints.has_monotone() {
            reserve_one(node_bounds, "the tree")?;
            node_bounds.push(leaf.bounds);
        }
        if let Some((p, is_left)) = leaf.parent {
            let slot = if is_left {
                &mut tree.left[p]
            } else {
                &mut tree.right[p]
            };
            *slot = node as i32;
        }
        let fb = &self.data.mapper.features[cand.feature];
        let n_left = match &cand.categories {
            None => {
                tree.push_categories(None)?;
                let route = SplitRoute {
                    feature: cand.feature,
                    bin: cand.bin,
                    missing_bin: fb.missing_bin(),
                    default_left: cand.default_left,
                };
                partition(
                    self.data,
                    route,
                    &mut rows[leaf.start..leaf.end],
                    &mut self.scratch,
                )
            }
            Some(away) => {
                let codes = fb.categories.as_deref().unwrap_or(&[]);
                let set = category_bitset(away.iter().map(|&b| codes[b as usize]));
                tree.push_categories(Some(set))?;
                let mut left = vec![cand.default_left; fb.n_bins()];
                for &b in away {
                    left[b as usize] = !cand.default_left;
                }
                partition_by_bins(
                    self.data,
                    cand.feature,
                    &left,
                    &mut rows[leaf.start..leaf.end],
                    &mut self.scratch,
                )
            }
        };
        if self.counts == RowCounts::Exact {
            // A shard's partition counts its own rows only.
            debug_assert!(!self.reduce.is_local() || n_left as f64 == cand.left.n);
        } else {
            self.fill_in_counts(&mut cand, leaf, n_left);
            tree.default_left[node] = cand.default_left;
        }
        let mid = leaf.start + n_left;
        let depth = leaf.depth + 1;
        // Monotone constraints: the children's intervals meet at the
        // midpoint of their values (as the search judged them: clipped).
        let rule = self.cfg.rule.below(leaf.output);
        let b = leaf.bounds;
        let (left_output, right_output) = (
            b.clip(rule.leaf_value(&cand.left)),
            b.clip(rule.leaf_value(&cand.right)),
        );
        let (left_bounds, right_bounds) = if self.constraints.has_monotone() {
            b.split(
                self.constraints.direction(cand.feature),
                left_output,
                right_output,
            )
        } else {
            (Bounds::FREE, Bounds::FREE)
        };
        let used = if self.constraints.interactions.is_some() {
            with_feature(&leaf.used, cand.feature as u32)
        } else {
            Vec::new()
        };
        let smooth_to = leaf.output;
        let child = |start, end, total, is_left, order, bounds, output| -> Result<OpenLeaf> {
            Ok(OpenLeaf {
                start,
                end,
                depth,
                total,
                hist: None,
                best: None,
                best_missing: BinStats::default(),
                parent: Some((node, is_left)),
                order,
                cands: None,
                bounds,
                used: used.clone(),
                constant: leaf.constant.try_clone()?,
                smooth_to,
                output,
            })
        };
        let left = child(
            leaf.start,
            mid,
            cand.left,
            true,
            *created,
            left_bounds,
            left_output,
        )?;
        let right = child(
            mid,
            leaf.end,
            cand.right,
            false,
            *created + 1,
            right_bounds,
            right_output,
        )?;
        *created += 2;
        Ok(Pair {
            parent: self.take_kept(leaf),
            left,
            right,
            cands: None,
            hists: [None, None],
            searches: [false, false],
            derive: None,
        })
    }

    /// Builds the histograms `pair`'s children will be searched on (this
    /// shard's part of them). Node scope: each child searches a fresh draw,
    /// on a histogram of its own. Tree scope: only the smaller child's is
    /// built when the parent kept its histogram; the larger one's is then
    /// parent − smaller, derived once the sums are combined.
    fn build_children(
        &mut self,
        pair: &mut Pair,
        rows: &[u32],
        grads: &Gradients,
        selection: &mut NodeSelection,
        last: bool,
    ) -> Result<()> {
        let depth = pair.left.depth;
        let used = pair.left.used.clone();
        if let NodeSelection::Node(..) = selection {
            // The parent's histogram covers other features: no subtraction.
            if let Some(h) = pair.parent.take() {
                self.pool.give(h);
            }
            for k in 0..2 {
                let c = if k == 0 {
                    &mut pair.left
                } else {
                    &mut pair.right
                };
                if !self.can_split(depth, &c.total) {
                    continue;
                }
                // Drawn even for final leaves, so later draws stay the same.
                let drawn = Self::node_cands(selection).expect("node scope draws");
                // Interaction constraints and the parent's constant
                // features narrow the draw; a node left with no candidate
                // stays a leaf.
                let cands = self.node_candidates(&drawn, &used).into_owned();
                let searched = c.constant.drop_from(&cands);
                if last || searched.as_ref().unwrap_or(&cands).features.is_empty() {
                    continue;
                }
                let c_rows = &rows[c.start..c.end];
                let built = self.build_features(&cands, searched.as_ref(), c_rows.len());
                let hist = self.histogram(c_rows, false, grads, built, &c.total)?;
                pair.hists[k] = Some(hist);
                pair.searches[k] = true;
                c.cands = Some(searched.unwrap_or(cands));
            }
            return Ok(());
        }
        // Both children share the path's features, and so their candidates:
        // the tree's set, less what interaction constraints exclude (a subset
        // of the parent's, so its histogram still covers them).
        // The parent's constant features are constant on both children.
        let tree_set = tree_cands(selection);
        let cands = self.node_candidates(tree_set, &used);
        let searched = pair.left.constant.drop_from(&cands);
        let features = searched.as_ref().unwrap_or(&cands).features.clone();
        let small = if pair.left.total.n <= pair.right.total.n {
            0
        } else {
            1
        };
        let large = 1 - small;
        let totals = [pair.left.total, pair.right.total];
        let ranges = [
            (pair.left.start, pair.left.end),
            (pair.right.start, pair.right.end),
        ];
        let searchable = !last && !features.is_empty();
        let small_splits = searchable && self.can_split(depth, &totals[small]);
        let large_splits = searchable && self.can_split(depth, &totals[large]);
        pair.searches = if small == 0 {
            [small_splits, large_splits]
        } else {
            [large_splits, small_splits]
        };
        let node_hist = |this: &mut Self, k: usize| {
            let (s, e) = ranges[k];
            let built = this.build_features(&cands, searched.as_ref(), e - s);
            this.histogram(&rows[s..e], false, grads, built, &totals[k])
        };
        match pair.parent.take() {
            Some(parent) if large_splits => {
                pair.hists[small] = Some(node_hist(self, small)?);
                pair.derive = Some((large, parent));
            }
            parent => {
                if let Some(h) = parent {
                    self.pool.give(h);
                }
                if small_splits {
                    pair.hists[small] = Some(node_hist(self, small)?);
                }
                if large_splits {
                    pair.hists[large] = Some(node_hist(self, large)?);
                }
            }
        }
        pair.cands = match (searched, cands) {
            (Some(s), _) => Some(s),
            (None, Cow::Owned(c)) => Some(c),
            (None, Cow::Borrowed(_)) => None,
        };
        Ok(())
    }

    /// Searches `pair`'s children on their (combined) histograms and lets
    /// them keep the histograms for their own children.
    fn search_children(
        &mut self,
        mut pair: Pair,
        rows: &[u32],
        selection: &NodeSelection,
    ) -> Result<(OpenLeaf, OpenLeaf)> {
        if let NodeSelection::Node(..) = selection {
            for k in 0..2 {
                let c = if k == 0 {
                    &mut pair.left
                } else {
                    &mut pair.right
                };
                if let Some(h) = pair.hists[k].take() {
                    let cands = c.cands.take().expect("a searched child has candidates");
                    self.find_best(c, &h, &cands, &rows[c.start..c.end])?;
                    c.cands = Some(cands);
                    self.keep(c, h);
                }
            }
            return Ok((pair.left, pair.right));
        }
        let cands = pair.cands.take();
        let cands = cands.as_ref().unwrap_or_else(|| tree_cands(selection));
        if let Some((large, mut parent)) = pair.derive.take() {
            let small = pair.hists[1 - large]
                .as_ref()
                .expect("the smaller child was built");
            // Feature by feature pays only when it skips most bins (the
            // others are never read).
            if 2 * self.bins_of(&cands.features) <= self.data.total_bins() {
                subtract_features_into(&mut parent, small, self.data, &cands.features);
            } else {
                subtract_into(&mut parent, small);
            }
            pair.hists[large] = Some(parent);
        }
        let small = if pair.left.total.n <= pair.right.total.n {
            0
        } else {
            1
        };
        let large = 1 - small;
        let searches = pair.searches;
        let [left_hist, right_hist] = pair.hists;
        // The two searches are independent: run them side by side (each
        // result is what it would be alone).
        let this = &*self;
        let search = |splits: bool, leaf: &mut OpenLeaf, hist: &Option<Histogram>| match hist {
            Some(h) if splits => this.find_best(leaf, h, cands, &rows[leaf.start..leaf.end]),
            _ => Ok(()),
        };
        let (left, right) = (&mut pair.left, &mut pair.right);
        let (l, r) = rayon::join(
            || search(searches[0], left, &left_hist),
            || search(searches[1], right, &right_hist),
        );
        l.and(r)?;
        let mut hists = [left_hist, right_hist];
        for k in [large, small] {
            if let Some(h) = hists[k].take() {
                let c = if k == 0 {
                    &mut pair.left
                } else {
                    &mut pair.right
                };
                self.keep(c, h);
            }
        }
        Ok((pair.left, pair.right))
    }
}

/// A split leaf's two children between the partition and their searches.
struct Pair {
    left: OpenLeaf,
    right: OpenLeaf,
    /// The split leaf's kept histogram (for the subtraction).
    parent: Option<Histogram>,
    /// Tree scope under interaction constraints: the children's candidates
    /// (otherwise the tree's, or in node scope each child's own).
    cands: Option<Candidates>,
    /// The left and right child's histograms, once built.
    hists: [Option<Histogram>; 2],
    /// Which children are searched.
    searches: [bool; 2],
    /// (the larger child, the parent's histogram) when the larger child's
    /// histogram is the parent's minus the smaller one's.
    derive: Option<(usize, Histogram)>,
}
