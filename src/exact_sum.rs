//! Exact sums of `f64` values, whatever their order or grouping.
//!
//! A floating-point sum rounds after every addition, so it depends on the
//! order of the terms and on how they were split into partial sums (by
//! threads, by machines). [`ExactSum`] keeps the sum as a fixed-point
//! integer wide enough for every finite `f64` (2^-1074 to 2^1024, plus
//! headroom for 2^62 terms), so adding terms and merging partial sums are
//! integer additions: the result depends only on the multiset of terms.
//! Rounding happens once, in [`ExactSum::value`]. (The `xsum` crate sums
//! exactly too, but its accumulators cannot be merged or shipped.)

/// Bits per limb; limbs are stored in `i64` so that carries can wait.
const LIMB_BITS: u32 = 32;
const LIMB_MASK: u64 = (1 << LIMB_BITS) - 1;
/// Limb i holds bits 32·i .. 32·i + 31 of the sum in units of 2^-1074; the
/// top finite bit is 2097, two more limbs take the carries of 2^62 terms.
const LIMBS: usize = 68;
/// Additions between carry propagations: each adds less than 2^32 in
/// magnitude to a limb, so 2^30 of them cannot overflow an `i64`.
const ADDS_BEFORE_CARRY: u32 = 1 << 30;

/// An exact running sum of `f64` values (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct ExactSum {
    limbs: [i64; LIMBS],
    pending: u32,
    /// Sum of the infinities seen (NaN once both signs or a NaN were added).
    special: Option<f64>,
}

impl Default for ExactSum {
    fn default() -> Self {
        ExactSum {
            limbs: [0; LIMBS],
            pending: 0,
            special: None,
        }
    }
}

impl ExactSum {
    pub fn new() -> ExactSum {
        ExactSum::default()
    }

    /// Adds `x` exactly.
    #[inline]
    pub fn add(&mut self, x: f64) {
        if !x.is_finite() {
            self.special = Some(self.special.map_or(x, |s| s + x));
            return;
        }
        let bits = x.to_bits();
        let field = ((bits >> 52) & 0x7ff) as u32;
        let fraction = bits & ((1 << 52) - 1);
        // x = m · 2^(p − 1074) with m < 2^53.
        let (m, p) = if field == 0 {
            (fraction, 0)
        } else {
            (fraction | (1 << 52), field - 1)
        };
        if m == 0 {
            return;
        }
        let v = (m as u128) << (p % LIMB_BITS);
        let i = (p / LIMB_BITS) as usize;
        let parts = [
            (v as u64 & LIMB_MASK) as i64,
            ((v >> LIMB_BITS) as u64 & LIMB_MASK) as i64,
            (v >> (2 * LIMB_BITS)) as i64,
        ];
        let negative = bits >> 63 == 1;
        for (limb, part) in self.limbs[i..i + 3].iter_mut().zip(parts) {
            *limb += if negative { -part } else { part };
        }
        self.pending += 1;
        if self.pending == ADDS_BEFORE_CARRY {
            self.carry();
        }
    }

    /// Adds every value of `xs`.
    pub fn extend(&mut self, xs: impl IntoIterator<Item = f64>) {
        xs.into_iter().for_each(|x| self.add(x));
    }

    /// Adds another partial sum.
    pub fn merge(&mut self, other: &ExactSum) {
        self.carry();
        let mut other = other.clone();
        other.carry();
        for (a, b) in self.limbs.iter_mut().zip(other.limbs) {
            *a += b;
        }
        self.pending = 1;
        self.carry();
        if let Some(s) = other.special {
            self.special = Some(self.special.map_or(s, |t| t + s));
        }
    }

    /// Propagates carries: every limb but the top one ends in [0, 2^32),
    /// the form in which equal sums have equal limbs.
    fn carry(&mut self) {
        if self.pending == 0 {
            return;
        }
        for i in 0..LIMBS - 1 {
            let c = self.limbs[i] >> LIMB_BITS;
            self.limbs[i] -= c << LIMB_BITS;
            self.limbs[i + 1] += c;
        }
        self.pending = 0;
    }

    /// The sum rounded to the nearest `f64` (ties to even; ±∞ past the
    /// largest finite value; NaN if a NaN, or both infinities, was added).
    /// In the subnormal range the rounding may be off by one unit.
    pub fn value(&self) -> f64 {
        if let Some(s) = self.special {
            return s;
        }
        let mut canonical = self.clone();
        canonical.pending = 1;
        canonical.carry();
        let negative = canonical.limbs[LIMBS - 1] < 0;
        if negative {
            // The magnitude, brought to the same canonical form.
            canonical.limbs.iter_mut().for_each(|l| *l = -*l);
            canonical.pending = 1;
            canonical.carry();
        }
        let limbs = canonical.limbs;
        let Some(top) = limbs.iter().rposition(|&l| l != 0) else {
            return 0.0;
        };
        // The top three limbs (≥ 65 significant bits) and a sticky bit for
        // everything below them round correctly in one conversion.
        let low = top.saturating_sub(2);
        let mut mantissa: u128 = 0;
        for &limb in limbs[low..=top].iter().rev() {
            mantissa = (mantissa << LIMB_BITS) | limb as u128;
        }
        let sticky = limbs[..low].iter().any(|&l| l != 0) as u128;
        let rounded = ((mantissa << 1) | sticky) as f64;
        let exponent = (LIMB_BITS as i32) * low as i32 - 1074 - 1;
        let magnitude = scale_pow2(rounded, exponent);
        if negative { -magnitude } else { magnitude }
    }

    /// The canonical limbs, for shipping a partial sum elsewhere.
    pub fn to_limbs(&self) -> Vec<i64> {
        let mut c = self.clone();
        c.pending = 1;
        c.carry();
        c.limbs.to_vec()
    }

    /// A partial sum from [`ExactSum::to_limbs`]; `None` if the length is wrong.
    pub fn from_limbs(limbs: &[i64]) -> Option<ExactSum> {
        let limbs: [i64; LIMBS] = limbs.try_into().ok()?;
        let mut s = ExactSum {
            limbs,
            pending: 1,
            special: None,
        };
        s.carry();
        Some(s)
    }
}

/// x · 2^k for any k a sum can need, in steps that are exact until the
/// result over- or underflows.
fn scale_pow2(mut x: f64, mut k: i32) -> f64 {
    while k != 0 {
        let step = k.clamp(-1000, 1000);
        x *= f64::from_bits(((step + 1023) as u64) << 52);
        k -= step;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn exact(xs: &[f64]) -> f64 {
        let mut s = ExactSum::new();
        s.extend(xs.iter().copied());
        s.value()
    }

    /// Terms on a common grid (m · 2^e, |e| ≤ 30) sum exactly in i128,
    /// whose conversion to f64 is correctly rounded: the oracle.
    #[test]
    fn matches_an_integer_oracle() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..2000 {
            let n = rng.random_range(1..50);
            let terms: Vec<(i64, i32)> = (0..n)
                .map(|_| {
                    let m = rng.random_range(-(1i64 << 53) + 1..1i64 << 53);
                    (m, rng.random_range(-30..=30))
                })
                .collect();
            let oracle: i128 = terms.iter().map(|&(m, e)| (m as i128) << (e + 30)).sum();
            let want = scale_pow2(oracle as f64, -30);
            let xs: Vec<f64> = terms
                .iter()
                .map(|&(m, e)| scale_pow2(m as f64, e))
                .collect();
            assert_eq!(exact(&xs), want, "{terms:?}");
        }
    }

    #[test]
    fn cancellation_and_extremes() {
        assert_eq!(exact(&[1e300, 1.0, -1e300]), 1.0);
        assert_eq!(exact(&[f64::MAX, f64::MAX, -f64::MAX]), f64::MAX);
        assert_eq!(exact(&[f64::MAX, f64::MAX]), f64::INFINITY);
        assert_eq!(exact(&[5e-324, 5e-324, -5e-324]), 5e-324);
        // The doubles nearest 0.1, 0.2 and 0.3 sum to 2^-55 exactly (the
        // plain sum gives 2^-54).
        assert_eq!(exact(&[0.1, 0.2, -0.3]), 2f64.powi(-55));
        assert_eq!(exact(&[-2.5, 1.0]), -1.5);
        assert_eq!(exact(&[]), 0.0);
        assert!(exact(&[f64::INFINITY, f64::NEG_INFINITY]).is_nan());
        assert_eq!(exact(&[f64::INFINITY, 1.0]), f64::INFINITY);
    }

    /// Any order and any split into merged parts give the same bits.
    #[test]
    fn order_and_grouping_do_not_matter() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let xs: Vec<f64> = (0..5000)
            .map(|_| {
                let e = rng.random_range(-60..60);
                (rng.random::<f64>() - 0.5) * 2f64.powi(e)
            })
            .collect();
        let whole = exact(&xs);
        let plain: f64 = xs.iter().sum();
        let mut reversed = xs.clone();
        reversed.reverse();
        assert_eq!(exact(&reversed), whole);
        for parts in [2, 3, 7, 64] {
            let mut total = ExactSum::new();
            for chunk in xs.chunks(xs.len().div_ceil(parts)) {
                let mut s = ExactSum::new();
                s.extend(chunk.iter().copied());
                let shipped = ExactSum::from_limbs(&s.to_limbs()).unwrap();
                total.merge(&shipped);
            }
            assert_eq!(total.value(), whole);
        }
        // The plain sum is close but (here) not the same bits.
        assert!((plain - whole).abs() <= 1e-12 * xs.iter().map(|x| x.abs()).sum::<f64>());
    }

    #[test]
    fn many_terms_carry_correctly() {
        let mut s = ExactSum::new();
        for _ in 0..3_000_000 {
            s.add(f64::MAX / 4.0);
            s.add(-(f64::MAX / 4.0));
            s.add(0.75);
        }
        assert_eq!(s.value(), 2_250_000.0);
    }
}
