//! Monotone constraints by bounds on leaf values (LightGBM's "basic"
//! method). Every node carries an interval [lo, hi]; a split on a
//! constrained feature whose two (clipped) child values are out of order is
//! refused, and otherwise its children get the halves of the interval on
//! either side of the midpoint of those values. Leaves are clipped to their
//! node's interval. Two inputs that differ only in a constrained feature
//! part ways at a split on it, where every leaf on one side is bounded by the
//! midpoint and every leaf on the other side by the midpoint the other way:
//! each tree, and so the model (a sum of trees with positive steps), is
//! monotone whatever values the leaves take within their intervals.
/// A node's interval of allowed leaf values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub lo: f64,
    pub hi: f64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds::FREE
    }
}

impl Bounds {
    pub const FREE: Bounds = Bounds {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
    };

    /// Whether some ancestor split narrowed the interval.
    #[inline]
    pub fn is_free(&self) -> bool {
        *self == Bounds::FREE
    }

    #[inline]
    pub fn clip(&self, v: f64) -> f64 {
        v.clamp(self.lo, self.hi)
    }

    /// The children's intervals of a split with direction `dir` whose left
    /// and right values are `left` and `right` (already within `self`).
    pub fn split(&self, dir: i8, left: f64, right: f64) -> (Bounds, Bounds) {
        if dir == 0 {
            return (*self, *self);
        }
        let mid = self.clip(0.5 * left + 0.5 * right);
        let below = Bounds { hi: mid, ..*self };
        let above = Bounds { lo: mid, ..*self };
        if dir > 0 {
            (below, above)
        } else {
            (above, below)
        }
    }
}

/// What split search needs to judge a candidate on one feature of a node.
#[derive(Clone, Copy, Debug)]
pub struct MonotoneSplit {
    /// The feature's direction (0: only the node's bounds apply).
    pub direction: i8,
    pub bounds: Bounds,
}

/// Clips every leaf to its interval (`bounds[k]` is leaf k's).
pub fn clip_leaves(values: &mut [f64], bounds: &[Bounds]) {
    values
        .iter_mut()
        .zip(bounds)
        .for_each(|(v, b)| *v = b.clip(*v));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_bounds_meet_at_the_midpoint() {
        let (l, r) = Bounds::FREE.split(1, -1.0, 3.0);
        assert_eq!((l.hi, r.lo), (1.0, 1.0));
        assert_eq!((l.lo, r.hi), (f64::NEG_INFINITY, f64::INFINITY));
        let (l, r) = Bounds { lo: 0.0, hi: 2.0 }.split(-1, 2.0, 0.0);
        assert_eq!(
            (l, r),
            (Bounds { lo: 1.0, hi: 2.0 }, Bounds { lo: 0.0, hi: 1.0 })
        );
        assert_eq!(
            Bounds::FREE.split(0, 5.0, -5.0),
            (Bounds::FREE, Bounds::FREE)
        );
    }
}
