//! Pure formulas for node scores, split gain and leaf values
//! (Sun, Zhang & Zhou 2014, eqs. 11-16; ALGORITHMS.md section 2).
use crate::constraints::{Bounds, MonotoneSplit};
use crate::histogram::BinStats;
use crate::params::{BoosterParams, Mode};

/// Denominators at or below this make a node unusable (no split, zero leaf).
const TINY: f64 = 1e-300;

/// What a node's score and leaf value divide its gradient sum G by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curvature {
    /// H = Σh: Newton boosting (`Mode::Newton`).
    Hessian,
    /// W = Σw, the row count or weight: gradient boosting (`Mode::Gradient`).
    Weight,
    /// 1: score G², leaf −G. RGB's candidate under the Lipschitz step, the
    /// family member with the largest first-order decrease (see `booster::rgb`).
    Unit,
}

impl From<Mode> for Curvature {
    fn from(m: Mode) -> Curvature {
        match m {
            Mode::Newton => Curvature::Hessian,
            Mode::Gradient => Curvature::Weight,
        }
    }
}

/// Everything split search needs to judge a candidate.
#[derive(Clone, Copy, Debug)]
pub struct SplitRule {
    pub gain: Curvature,
    pub leaf: Curvature,
    pub lambda: f64,
    pub min_samples_leaf: f64,
    pub min_child_weight: f64,
    pub min_split_gain: f64,
    pub cat: CatRule,
    pub reg: LeafReg,
}

/// The leaf regularisers of LightGBM (`lambda_l1`, `max_delta_step`,
/// `path_smooth`), all off at zero. With any on, a node's score is the loss
/// reduction its (regularised) value achieves, as in LightGBM's
/// `GetLeafGainGivenOutput`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeafReg {
    /// L1 penalty α: gradient sums are soft-thresholded, T(G) = sign(G)·max(|G| − α, 0).
    pub alpha: f64,
    /// Values (before shrinkage) are clipped to ±this; 0 = no clip.
    pub max_delta_step: f64,
    /// s: a value is pulled towards its parent's, (w·n + parent·s)/(n + s).
    pub path_smooth: f64,
    /// The value of the node whose children are judged (`path_smooth` only).
    pub parent_output: f64,
}

impl LeafReg {
    /// No regularisation: the plain formulas, bit for bit.
    pub const NONE: LeafReg = LeafReg {
        alpha: 0.0,
        max_delta_step: 0.0,
        path_smooth: 0.0,
        parent_output: 0.0,
    };

    /// Whether a node's value is more than −T(G)/D (and its score more
    /// than T(G)²/D).
    #[inline(always)]
    pub fn moves_values(&self) -> bool {
        self.max_delta_step > 0.0 || self.path_smooth > 0.0
    }

    /// The soft-thresholded gradient sum T(G); exactly G when α = 0.
    #[inline(always)]
    pub fn threshold(&self, g: f64) -> f64 {
        if self.alpha > 0.0 {
            g.signum() * (g.abs() - self.alpha).max(0.0)
        } else {
            g
        }
    }
}

impl Default for LeafReg {
    fn default() -> Self {
        LeafReg::NONE
    }
}

/// How categorical features are split (LightGBM's parameters of the same names).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CatRule {
    pub max_cat_to_onehot: usize,
    pub max_cat_threshold: usize,
    /// Smoothing of the sort key G/(H + cat_smooth), in hessian units.
    pub cat_smooth: f64,
    /// Categories with fewer rows stay out of the sorted scan (`cat_smooth`
    /// as a row count, which weights do not rescale).
    pub sorted_min_rows: f64,
    /// Rows each side of a sorted-scan split needs, and the rows the
    /// categories added since the last candidate must hold.
    pub min_data_per_group: f64,
    /// Added to λ in the children's scores of a sorted-scan split.
    pub cat_l2: f64,
}

impl Default for CatRule {
    /// The rule of the default parameters.
    fn default() -> Self {
        CatRule::from_params(&BoosterParams::default())
    }
}

impl CatRule {
    pub fn from_params(p: &BoosterParams) -> CatRule {
        CatRule {
            max_cat_to_onehot: p.max_cat_to_onehot(),
            max_cat_threshold: p.max_cat_threshold(),
            cat_smooth: p.cat_smooth(),
            sorted_min_rows: p.cat_smooth(),
            min_data_per_group: p.min_data_per_group() as f64,
            cat_l2: p.cat_l2(),
        }
    }
}

impl SplitRule {
    pub fn from_params(p: &BoosterParams) -> SplitRule {
        SplitRule {
            gain: p.gain.into(),
            leaf: p.leaf.into(),
            lambda: p.reg_lambda,
            min_samples_leaf: p.min_samples_leaf as f64,
            // First-order trees (gradient gain and leaves) never read the
            // hessian; for non-convex losses such as the smoothed 0-1 loss it
            // is negative on misclassified rows, so no floor applies to them.
            min_child_weight: if p.gain == Mode::Gradient && p.leaf == Mode::Gradient {
                0.0
            } else {
                p.min_child_weight
            },
            min_split_gain: p.min_split_gain,
            cat: CatRule::from_params(p),
            reg: LeafReg {
                alpha: p.reg_alpha,
                max_delta_step: p.max_delta_step,
                path_smooth: p.path_smooth,
                parent_output: 0.0,
            },
        }
    }

    /// The rule for the children of a node whose value is `output`
    /// (what `path_smooth` pulls them towards).
    #[inline]
    pub fn below(self, output: f64) -> SplitRule {
        SplitRule {
            reg: LeafReg {
                parent_output: output,
                ..self.reg
            },
            ..self
        }
    }

    /// The rule of a tree's root: LightGBM smooths the root towards its own
    /// unsmoothed value, so the root's value is −T(G)/D, clipped.
    pub fn at_root(self, total: &BinStats) -> SplitRule {
        let raw = self.raw_value(self.leaf, total);
        self.below(raw)
    }

    /// The rule for sample weights whose mean is `unit` (see
    /// `booster::weights`): the parameters measured in weight units
    /// (λ, α, the hessian minimum and the gain minimum) scale with the
    /// weights, so the rule means the same as for weights of mean 1
    /// (`max_delta_step` is in leaf-value units, `path_smooth` in rows).
    /// `unit` = 1 is a no-op.
    pub fn in_weight_unit(self, unit: f64) -> SplitRule {
        SplitRule {
            lambda: self.lambda * unit,
            reg: LeafReg {
                alpha: self.reg.alpha * unit,
                ..self.reg
            },
            min_child_weight: self.min_child_weight * unit,
            min_split_gain: self.min_split_gain * unit,
            cat: CatRule {
                cat_smooth: self.cat.cat_smooth * unit,
                cat_l2: self.cat.cat_l2 * unit,
                ..self.cat
            },
            ..self
        }
    }

    /// The curvature a rule divides by: Σh (Newton), Σw (gradient) or 1, plus λ.
    #[inline(always)]
    pub fn denominator(c: Curvature, s: &BinStats, lambda: f64) -> f64 {
        match c {
            Curvature::Hessian => s.h + lambda,
            Curvature::Weight => s.w + lambda,
            Curvature::Unit => 1.0 + lambda,
        }
    }

    /// Whether a formula of the rule divides by the hessian sum.
    #[inline(always)]
    pub fn uses_hessian(&self) -> bool {
        self.gain == Curvature::Hessian || self.leaf == Curvature::Hessian
    }

    /// Whether children need a hessian sum of at least `min_child_weight`:
    /// always when a formula divides by the hessian, and for hessian-free
    /// formulas when the floor is positive (RGB's best-member candidate
    /// keeps the fit's floor, the guard XGBoost's trees have).
    #[inline(always)]
    pub fn floors_hessian(&self) -> bool {
        self.uses_hessian() || self.min_child_weight > 0.0
    }

    /// The key categories are sorted by: G/(H + smooth) (Newton) or
    /// G/(W + smooth) (gradient), so that with smooth = 0 sorted prefixes
    /// contain the best partition (Fisher 1958).
    #[inline]
    pub fn category_key(&self, s: &BinStats) -> f64 {
        let d = Self::denominator(self.gain, s, self.cat.cat_smooth);
        if d > TINY { s.g / d } else { 0.0 }
    }

    /// Node score G²/(H+λ) (Newton), G²/(W+λ) (gradient) or G²/(1+λ);
    /// T(G)²/D with an L1 penalty, and with a clipped or smoothed value w
    /// the reduction −(2·T(G)·w + D·w²) that w achieves.
    #[inline(always)]
    pub fn score(&self, s: &BinStats) -> f64 {
        let d = Self::denominator(self.gain, s, self.lambda);
        if !(d > TINY) {
            return 0.0;
        }
        if self.reg.moves_values() {
            return Self::score_of(self.reg.threshold(s.g), d, self.value_in(self.gain, s));
        }
        let g = self.reg.threshold(s.g);
        g * g / d
    }

    /// −(2·T·w + D·w²): the loss reduction of value `w` for thresholded
    /// sum `t` and denominator `d`.
    #[inline(always)]
    fn score_of(t: f64, d: f64, w: f64) -> f64 {
        -(2.0 * t * w + d * w * w)
    }

    /// −T(G)/D under curvature `c`, clipped to ±max_delta_step.
    #[inline(always)]
    fn raw_value(&self, c: Curvature, s: &BinStats) -> f64 {
        let d = Self::denominator(c, s, self.lambda);
        if !(d > TINY) {
            return 0.0;
        }
        let w = -self.reg.threshold(s.g) / d;
        let m = self.reg.max_delta_step;
        if m > 0.0 && w.abs() > m {
            m.copysign(w)
        } else {
            w
        }
    }

    /// The value of a node under curvature `c`: `raw_value` pulled
    /// towards the parent's, with weight n/(n + path_smooth) on its own
    /// (LightGBM's form: n counts rows, not weights).
    #[inline(always)]
    fn value_in(&self, c: Curvature, s: &BinStats) -> f64 {
        let w = self.raw_value(c, s);
        let smooth = self.reg.path_smooth;
        if smooth > 0.0 {
            let k = s.n / smooth;
            w * k / (k + 1.0) + self.reg.parent_output / (k + 1.0)
        } else {
            w
        }
    }

    /// Whether a child may exist, row count aside (`min_samples_leaf` is
    /// judged by the caller); the hessian minimum as `floors_hessian` says.
    #[inline(always)]
    pub(crate) fn child_ok_but_rows(&self, s: &BinStats) -> bool {
        (!self.floors_hessian() || s.h >= self.min_child_weight)
            && Self::denominator(self.gain, s, self.lambda) > TINY
            && Self::denominator(self.leaf, s, self.lambda) > TINY
    }

    /// Gain of splitting `parent` into `left` and `right`, or None if the split
    /// breaks a constraint or gains nothing beyond rounding noise.
    #[inline(always)]
    pub fn gain(&self, parent_score: f64, left: &BinStats, right: &BinStats) -> Option<f64> {
        if left.n < self.min_samples_leaf || right.n < self.min_samples_leaf {
            return None;
        }
        self.gain_but_rows(parent_score, left, right)
    }

    /// `gain` without the row-count minimum (the caller has judged it).
    #[inline(always)]
    pub fn gain_but_rows(
        &self,
        parent_score: f64,
        left: &BinStats,
        right: &BinStats,
    ) -> Option<f64> {
        if !self.child_ok_but_rows(left) || !self.child_ok_but_rows(right) {
            return None;
        }
        self.accept(parent_score, self.score(left) + self.score(right))
    }

    /// The gain of children scoring `children` in all, if it counts.
    #[inline(always)]
    fn accept(&self, parent_score: f64, children: f64) -> Option<f64> {
        let gain = children - parent_score;
        // Cancellation leaves ~1e-16 relative noise; do not split on it.
        if gain > self.min_split_gain && gain > 1e-10 * children {
            Some(gain)
        } else {
            None
        }
    }

    /// The score of a node whose value is held in `bounds`: G²/D when its
    /// best value −G/D lies inside, else −(2G·w + D·w²) at the clipped w
    /// (the loss reduction the clipped value achieves).
    #[inline]
    pub fn bounded_score(&self, s: &BinStats, bounds: Bounds) -> f64 {
        let d = Self::denominator(self.gain, s, self.lambda);
        if !(d > TINY) {
            return 0.0;
        }
        let w = self.value_in(self.gain, s);
        if w >= bounds.lo && w <= bounds.hi {
            self.score(s)
        } else {
            Self::score_of(self.reg.threshold(s.g), d, bounds.clip(w))
        }
    }

    /// `gain_but_rows` under a monotone constraint: refused when the
    /// children's clipped leaf values are out of the feature's order, and
    /// measured with the children's values clipped to the node's bounds.
    #[inline]
    pub fn monotone_gain_but_rows(
        &self,
        parent_score: f64,
        left: &BinStats,
        right: &BinStats,
        m: MonotoneSplit,
    ) -> Option<f64> {
        if !self.child_ok_but_rows(left) || !self.child_ok_but_rows(right) {
            return None;
        }
        let (wl, wr) = (
            m.bounds.clip(self.leaf_value(left)),
            m.bounds.clip(self.leaf_value(right)),
        );
        if (m.direction > 0 && wl > wr) || (m.direction < 0 && wl < wr) {
            return None;
        }
        let children = self.bounded_score(left, m.bounds) + self.bounded_score(right, m.bounds);
        self.accept(parent_score, children)
    }

    /// Leaf value −G/(H+λ) (Newton), −G/(W+λ) (gradient) or −G/(1+λ),
    /// before shrinkage; with the leaf regularisers −T(G)/D, clipped to
    /// ±max_delta_step, then smoothed towards `reg.parent_output`.
    #[inline]
    pub fn leaf_value(&self, s: &BinStats) -> f64 {
        // With every regulariser off this is −G/D, bit for bit.
        self.value_in(self.leaf, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(gain: Mode, leaf: Mode) -> SplitRule {
        SplitRule {
            gain: gain.into(),
            leaf: leaf.into(),
            lambda: 1.0,
            min_samples_leaf: 1.0,
            min_child_weight: 0.0,
            min_split_gain: 0.0,
            cat: CatRule::default(),
            reg: crate::split::gain::LeafReg::NONE,
        }
    }

    #[test]
    fn closed_forms() {
        let s = BinStats {
            g: -3.0,
            h: 2.0,
            w: 5.0,
            n: 5.0,
        };
        assert_eq!(rule(Mode::Newton, Mode::Newton).score(&s), 9.0 / 3.0);
        assert_eq!(rule(Mode::Gradient, Mode::Newton).score(&s), 9.0 / 6.0);
        assert_eq!(rule(Mode::Newton, Mode::Newton).leaf_value(&s), 1.0);
        assert_eq!(rule(Mode::Newton, Mode::Gradient).leaf_value(&s), 0.5);
    }

    #[test]
    fn negative_hessians_do_not_block_first_order_splits() {
        let mut r = rule(Mode::Gradient, Mode::Gradient);
        r.min_child_weight = 0.0;
        let l = BinStats {
            g: -3.0,
            h: -1.0,
            w: 2.0,
            n: 2.0,
        };
        let rr = BinStats {
            g: 3.0,
            h: 0.5,
            w: 2.0,
            n: 2.0,
        };
        let parent = BinStats {
            g: 0.0,
            h: -0.5,
            w: 4.0,
            n: 4.0,
        };
        assert!(r.gain(r.score(&parent), &l, &rr).is_some());
        let newton = rule(Mode::Newton, Mode::Newton);
        assert!(newton.gain(newton.score(&parent), &l, &rr).is_none());
    }

    /// Closed forms of the constrained gain: out-of-order children are
    /// refused, clipped children score what their clipped value achieves.
    #[test]
    fn monotone_gain_refuses_disorder_and_clips() {
        let r = rule(Mode::Newton, Mode::Newton);
        let st = |g: f64, h: f64| BinStats { g, h, w: h, n: h };
        // Left value −(−3)/(2+1) = 1, right −3/3 = −1: decreasing.
        let (l, rr) = (st(-3.0, 2.0), st(3.0, 2.0));
        let parent = r.score(&st(0.0, 4.0));
        let free = |direction| MonotoneSplit {
            direction,
            bounds: Bounds::FREE,
        };
        assert!(r.monotone_gain_but_rows(parent, &l, &rr, free(1)).is_none());
        let dec = r.monotone_gain_but_rows(parent, &l, &rr, free(-1)).unwrap();
        assert_eq!(Some(dec), r.gain_but_rows(parent, &l, &rr));
        // Bounds [0, 0.5]: left clipped to 0.5 scores −(2·(−3)·0.5 + 3·0.25),
        // right clipped to 0 scores 0.
        let m = MonotoneSplit {
            direction: -1,
            bounds: Bounds { lo: 0.0, hi: 0.5 },
        };
        let got = r.monotone_gain_but_rows(parent, &l, &rr, m).unwrap();
        assert!((got - (3.0 - 0.75)).abs() < 1e-15, "{got}");
        assert_eq!(r.bounded_score(&l, Bounds::FREE), r.score(&l));
    }

    /// LightGBM's formulas written out on numbers: T(G) = sign(G)·max(|G| −
    /// α, 0), w = −T/(H + λ) clipped to ±max_delta_step, then
    /// (w·n + parent·s)/(n + s); scores T²/D, else −(2·T·w + D·w²).
    #[test]
    fn leaf_regularisers_closed_forms() {
        let base = rule(Mode::Newton, Mode::Newton); // λ = 1
        let s = BinStats {
            g: -7.0,
            h: 3.0,
            w: 3.0,
            n: 4.0,
        };
        let with = |reg: LeafReg| SplitRule { reg, ..base };
        // L1: T(−7) = −5, D = 4.
        let l1 = with(LeafReg {
            alpha: 2.0,
            ..LeafReg::NONE
        });
        assert_eq!(l1.leaf_value(&s), 1.25);
        assert_eq!(l1.score(&s), 25.0 / 4.0);
        // |G| <= α: value and score 0, either sign.
        for g in [-2.0, 1.5, 0.0] {
            let z = BinStats { g, ..s };
            assert_eq!(l1.leaf_value(&z), 0.0);
            assert_eq!(l1.score(&z), 0.0);
        }
        // Gradient leaves divide T by W + λ.
        let grad = SplitRule {
            leaf: Curvature::Weight,
            ..l1
        };
        assert_eq!(grad.leaf_value(&BinStats { w: 9.0, ..s }), 0.5);
        // Clip: −(−7)/4 = 1.75 → 0.5; score −(2·(−7)·0.5 + 4·0.25) = 6.
        let clip = with(LeafReg {
            max_delta_step: 0.5,
            ..LeafReg::NONE
        });
        assert_eq!(clip.leaf_value(&s), 0.5);
        assert_eq!(clip.score(&s), 6.0);
        // Unclipped values keep the plain score G²/D in value.
        assert!(
            (with(LeafReg {
                max_delta_step: 2.0,
                ..LeafReg::NONE
            })
            .score(&s)
                - 49.0 / 4.0)
                .abs()
                < 1e-14
        );
        // Smoothing, n = 4, s = 4, parent −1: (1.75·4 − 4)/8 = 0.375;
        // score −(2·(−7)·0.375 + 4·0.375²) = 4.6875.
        let smooth = with(LeafReg {
            path_smooth: 4.0,
            parent_output: -1.0,
            ..LeafReg::NONE
        });
        assert_eq!(smooth.leaf_value(&s), 0.375);
        assert_eq!(smooth.score(&s), 4.6875);
        // All three: T = −5, w = 1.25 → clip 1 → (1·4 + 0.5·4)/8 = 0.75;
        // score −(2·(−5)·0.75 + 4·0.5625) = 5.25.
        let all = with(LeafReg {
            alpha: 2.0,
            max_delta_step: 1.0,
            path_smooth: 4.0,
            parent_output: 0.5,
        });
        assert_eq!(all.leaf_value(&s), 0.75);
        assert_eq!(all.score(&s), 5.25);
        // Monotone bounds clip the regularised value: 0.75 → 0.5,
        // score −(2·(−5)·0.5 + 4·0.25) = 4.
        assert_eq!(all.bounded_score(&s, Bounds { lo: -1.0, hi: 0.5 }), 4.0);
        assert_eq!(all.bounded_score(&s, Bounds::FREE), all.score(&s));
        // α scales with the weight unit, the clip and the smoothing do not.
        let u = all.in_weight_unit(2.0);
        assert_eq!(
            (u.reg.alpha, u.reg.max_delta_step, u.reg.path_smooth),
            (4.0, 1.0, 4.0)
        );
    }

    /// The score is the loss reduction −2·min over the value of
    /// G·w + ½·D·w² + α·|w| (what the L1 value minimises), for any G.
    #[test]
    fn l1_score_is_the_penalised_loss_reduction() {
        let r = SplitRule {
            reg: LeafReg {
                alpha: 1.5,
                ..LeafReg::NONE
            },
            ..rule(Mode::Newton, Mode::Newton)
        };
        for g in [-9.0, -1.6, -0.3, 0.0, 1.0, 2.5, 40.0] {
            let s = BinStats {
                g,
                h: 2.0,
                w: 2.0,
                n: 2.0,
            };
            let objective = |w: f64| g * w + 0.5 * 3.0 * w * w + 1.5 * w.abs();
            let w = r.leaf_value(&s);
            // No value on a fine grid does better.
            let best = (-40_000..=40_000)
                .map(|k| objective(k as f64 * 1e-4))
                .fold(f64::INFINITY, f64::min);
            assert!(objective(w) <= best + 1e-12, "{g}");
            assert!((r.score(&s) + 2.0 * objective(w)).abs() < 1e-12, "{g}");
        }
    }

    #[test]
    fn constraints_block_splits() {
        let mut r = rule(Mode::Newton, Mode::Newton);
        let l = BinStats {
            g: -3.0,
            h: 2.0,
            w: 2.0,
            n: 2.0,
        };
        let rr = BinStats {
            g: 3.0,
            h: 2.0,
            w: 2.0,
            n: 2.0,
        };
        let parent = BinStats {
            g: 0.0,
            h: 4.0,
            w: 4.0,
            n: 4.0,
        };
        assert!(r.gain(r.score(&parent), &l, &rr).is_some());
        r.min_samples_leaf = 3.0;
        assert!(r.gain(r.score(&parent), &l, &rr).is_none());
        r.min_samples_leaf = 1.0;
        r.min_split_gain = 100.0;
        assert!(r.gain(r.score(&parent), &l, &rr).is_none());
    }
}
