//! Fuzz target: the dataset builder (binning) and a short training run.
//!
//! The bytes are read as a small problem: a header (rows, columns, max_bins,
//! flags), then the matrix values, labels and optional weights, each value
//! drawn from a menu that favours NaN, ±inf, ±0, extremes, subnormals and
//! ties, or taken raw from the input. Caps: at most 64 rows x 8 columns.
//! `BinnedDataset::from_weighted_matrix` (on both memory orders, plus
//! `with_mapper`) and then a 2-round `train` with the squared loss must
//! return `Ok` or `Err`, never panic; and C and F order must bin alike.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rgbm_rs::booster::{train, TrainingData, Unmonitored};
use rgbm_rs::cancel::Cancel;
use rgbm_rs::data::BinnedDataset;
use rgbm_rs::params::Loss;
use rgbm_rs::{BoosterParams, DenseMatrix};

const MAX_ROWS: usize = 64;
const MAX_COLS: usize = 8;

/// max_bins choices: invalid ones (0, 1, 65536), tiny, the u8 limit and
/// just past it (u16 codes), the largest valid value.
const MAX_BINS: [usize; 16] = [0, 1, 2, 3, 4, 5, 8, 16, 63, 254, 255, 256, 257, 1000, 65535, 65536];

/// A cursor over the input that yields 0 once it runs dry.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        out.iter_mut().for_each(|b| *b = self.u8());
        out
    }
    /// One value: a special pattern or raw bits (as f32 when `single`).
    fn value(&mut self, single: bool) -> f64 {
        match self.u8() % 20 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => 0.0,
            4 => -0.0,
            5 => f64::MAX,
            6 => f64::MIN,
            7 => f64::MIN_POSITIVE,
            8 => f64::from_bits(1), // smallest subnormal
            9 => f32::MAX as f64,
            10 => -(f32::MIN_POSITIVE as f64),
            11 | 12 | 13 => (self.u8() as i8) as f64, // small integers: many ties
            14 => (self.u8() as f64) * 1e-3,
            _ => {
                if single {
                    f32::from_le_bytes(self.array()) as f64
                } else {
                    f64::from_le_bytes(self.array())
                }
            }
        }
    }
}

fn run<T: rgbm_rs::data::Element>(
    x: &DenseMatrix<T>,
    other_layout: &DenseMatrix<T>,
    max_bins: usize,
    seed: u64,
    weights: Option<&[f64]>,
    y: &[f64],
    flags: u8,
) {
    let built = BinnedDataset::from_weighted_matrix(x, max_bins, seed, weights, &[], 0, &Cancel::never());
    // The same values in the other memory order must bin identically (a
    // correctness check on top of "no panic"; both paths are public).
    let other = BinnedDataset::from_weighted_matrix(other_layout, max_bins, seed, weights, &[], 0, &Cancel::never());
    match (&built, &other) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.mapper(), b.mapper(), "C and F order fitted different bins");
            for i in 0..a.n_rows() {
                for j in 0..a.n_features() {
                    assert_eq!(a.code(i, j), b.code(i, j), "C and F order disagree at ({i}, {j})");
                    if let Some(code) = a.row_code(i, j) {
                        assert_eq!(a.code(i, j), code, "the two code layouts disagree at ({i}, {j})");
                    }
                }
            }
            // Re-binning with the fitted mapper (the validation-set path) gives the same codes.
            if let Ok(c) = BinnedDataset::with_mapper(other_layout, a.mapper().clone()) {
                for i in 0..a.n_rows() {
                    for j in 0..a.n_features() {
                        assert_eq!(a.code(i, j), c.code(i, j), "with_mapper disagrees at ({i}, {j})");
                    }
                }
            }
        }
        (a, b) => assert_eq!(a.is_ok(), b.is_ok(), "C and F order: one failed, the other did not"),
    }
    let _ = BinnedDataset::from_matrix(x, max_bins, seed);

    let mut params = BoosterParams {
        n_estimators: 2,
        loss: Loss::Squared,
        max_bins,
        min_samples_leaf: if flags & 0x20 != 0 { 1 } else { 3 },
        random_state: seed,
        n_jobs: Some(1),
        ..BoosterParams::default()
    };
    if flags & 0x40 != 0 {
        params.max_depth = None;
        params.max_leaves = Some(4);
    } else {
        params.max_depth = Some(3);
    }
    if flags & 0x80 != 0 {
        params.subsample = 0.5;
    }
    // TrainingData checks the weights itself; a length mismatch must be an error there too.
    let _ = TrainingData::new(x, y)
        .and_then(|d| d.with_weights(weights))
        .and_then(|d| train(&params, &d, &[], &mut Unmonitored));
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes { data, at: 0 };
    let n_rows = 1 + b.u8() as usize % MAX_ROWS;
    let n_cols = 1 + b.u8() as usize % MAX_COLS;
    let max_bins = MAX_BINS[b.u8() as usize % MAX_BINS.len()];
    let flags = b.u8();
    let seed = b.u8() as u64;
    let single = flags & 0x01 != 0;
    let col_major = flags & 0x02 != 0;
    let weighted = flags & 0x04 != 0;
    // Weights of the wrong length: the public builder must reject them.
    let weight_len = if flags & 0x08 != 0 { (b.u8() as usize) % (MAX_ROWS + 1) } else { n_rows };

    // Row-major values; `transposed` holds the same matrix column-major.
    let values: Vec<f64> = (0..n_rows * n_cols).map(|_| b.value(single)).collect();
    let transposed: Vec<f64> = (0..n_rows * n_cols).map(|k| values[(k % n_rows) * n_cols + k / n_rows]).collect();
    let y: Vec<f64> = (0..n_rows).map(|_| b.value(false)).collect();
    let weights: Option<Vec<f64>> = weighted.then(|| (0..weight_len).map(|_| b.value(false)).collect());

    if single {
        let c32: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        let f32s: Vec<f32> = transposed.iter().map(|&v| v as f32).collect();
        let xc = DenseMatrix::row_major(&c32, n_rows, n_cols).expect("sized to fit");
        let xf = DenseMatrix::col_major(&f32s, n_rows, n_cols).expect("sized to fit");
        let (x, other) = if col_major { (xf, xc) } else { (xc, xf) };
        run(&x, &other, max_bins, seed, weights.as_deref(), &y, flags);
    } else {
        let xc = DenseMatrix::row_major(&values, n_rows, n_cols).expect("sized to fit");
        let xf = DenseMatrix::col_major(&transposed, n_rows, n_cols).expect("sized to fit");
        let (x, other) = if col_major { (xf, xc) } else { (xc, xf) };
        run(&x, &other, max_bins, seed, weights.as_deref(), &y, flags);
    }
});
