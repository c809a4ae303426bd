//! Seeded random streams. Every random draw in training comes from a stream
//! derived from (random_state, purpose, round), never from a shared generator
//! that threads race for, so a model does not depend on the thread count.
//! Per-row draws are counter-based ([`RowDraws`]): a row's draw depends on
//! its index only, so any subset of the rows draws what a full pass would.
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_xoshiro::SplitMix64;

/// What a stream is used for; each purpose gets an independent key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Purpose {
    BinSample = 1,
    RowSubsample = 2,
    Selection = 3,
    LangevinGradient = 4,
    LangevinLeaf = 5,
    Rgb = 6,
    ExtraTrees = 7,
    ColumnLevel = 8,
    ColumnNode = 9,
    Quantize = 10,
}

/// SplitMix64 finaliser: decorrelates nearby seeds before keying ChaCha.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generator for `purpose` in boosting round `round` (or 0 outside rounds).
pub fn stream(seed: u64, purpose: Purpose, round: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(mix(seed ^ mix(purpose as u64)));
    rng.set_stream(round);
    rng
}

/// The stride between rows' SplitMix64 states: odd, with 39 bit transitions
/// (SplittableRandom's quality criterion asks for 24).
pub const ROW_GAMMA: u64 = 0xD1B5_4A32_D192_ED03;

/// Counter-based draws for `purpose` in round `round`: row `i` gets its own
/// generator, seeded from (seed, purpose, round, i) alone. A thread's chunk
/// or another machine's partition of the rows therefore draws exactly the
/// values a pass over all rows would, in any order.
#[derive(Clone, Copy, Debug)]
pub struct RowDraws {
    key: u64,
}

impl RowDraws {
    pub fn new(seed: u64, purpose: Purpose, round: u64) -> RowDraws {
        RowDraws {
            key: mix(mix(seed ^ mix(purpose as u64)) ^ mix(round)),
        }
    }

    /// Row `row`'s generator: SplitMix64 started at key + row·[`ROW_GAMMA`],
    /// so row r's j-th draw hashes key + r·ROW_GAMMA + j·φ. Two rows fewer
    /// than 2^46 apart never hash the same input within their first 65,536
    /// draws (a test checks it), and a draw costs one hash.
    #[inline]
    pub fn row(&self, row: u64) -> SplitMix64 {
        SplitMix64::seed_from_u64(self.key.wrapping_add(row.wrapping_mul(ROW_GAMMA)))
    }

    /// Whether row `row` is kept by a Bernoulli(`p`) draw.
    #[inline]
    pub fn keep(&self, row: u64, p: f64) -> bool {
        use rand::RngExt;
        self.row(row).random_bool(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(7, Purpose::RowSubsample, 3), |r, _| Some(r.random()))
            .collect();
        let b: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(7, Purpose::RowSubsample, 3), |r, _| Some(r.random()))
            .collect();
        let c: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(7, Purpose::RowSubsample, 4), |r, _| Some(r.random()))
            .collect();
        let d: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(7, Purpose::BinSample, 3), |r, _| Some(r.random()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    /// Rows' SplitMix64 sequences are disjoint: r·ROW_GAMMA + j·φ equals
    /// r'·ROW_GAMMA + j'·φ only if r − r' ≡ (j' − j)·φ·ROW_GAMMA⁻¹, which is
    /// at least 2^46 away from 0 for every |j' − j| < 65,536.
    #[test]
    fn row_sequences_do_not_overlap() {
        const PHI: u64 = 0x9E37_79B9_7F4A_7C15;
        // Inverse of an odd number modulo 2^64 by Newton's iteration.
        let mut inv: u64 = ROW_GAMMA;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(ROW_GAMMA.wrapping_mul(inv)));
        }
        assert_eq!(ROW_GAMMA.wrapping_mul(inv), 1);
        let c = PHI.wrapping_mul(inv);
        let nearest = (1..1u64 << 16)
            .map(|d| (d.wrapping_mul(c) as i64).unsigned_abs())
            .min()
            .unwrap();
        assert!(nearest >= 1 << 46, "{nearest:#x}");
        assert!(ROW_GAMMA & 1 == 1 && (ROW_GAMMA ^ (ROW_GAMMA >> 1)).count_ones() >= 24);
    }

    /// A row's draw is the same whatever else is drawn; different rounds,
    /// purposes and seeds give different draws; the keep rate is p.
    #[test]
    fn row_draws_are_per_row_and_have_the_asked_rate() {
        let d = RowDraws::new(3, Purpose::RowSubsample, 5);
        let first: u64 = d.row(1234).random();
        let _skipped: Vec<u64> = (0..1000).map(|i| d.row(i).random()).collect();
        assert_eq!(first, d.row(1234).random::<u64>());
        for other in [
            RowDraws::new(3, Purpose::RowSubsample, 6),
            RowDraws::new(3, Purpose::LangevinGradient, 5),
            RowDraws::new(4, Purpose::RowSubsample, 5),
        ] {
            assert_ne!(first, other.row(1234).random::<u64>());
        }
        let n = 200_000u64;
        let kept = (0..n).filter(|&i| d.keep(i, 0.3)).count() as f64;
        // Binomial(n, 0.3) has standard deviation ~205 rows.
        assert!((kept - 0.3 * n as f64).abs() < 1000.0, "{kept}");
        // Neighbouring rows are uncorrelated: lag-1 correlation of uniforms.
        let u: Vec<f64> = (0..n).map(|i| d.row(i).random::<f64>() - 0.5).collect();
        let lag: f64 = u.windows(2).map(|w| w[0] * w[1]).sum::<f64>() / (n as f64 / 12.0);
        assert!(lag.abs() < 0.02, "{lag}");
    }
}
