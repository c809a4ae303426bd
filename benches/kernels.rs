//! Criterion benchmarks of the hot kernels on seeded synthetic data:
//! binning, histogram build (root / row subset / a few features), the
//! subtraction trick, split search, partition, one boosting round (full and
//! RGBM groups t = p/10) and prediction. `cargo bench` runs them; timings
//! are for comparing revisions on one machine (ratios against other libraries
//! live in benches/python and BENCHMARKS.md).
use criterion::{BatchSize, Criterion, black_box, criterion_group, criterion_main};

use rgbm_rs::booster::{TrainingData, Unmonitored, train};
use rgbm_rs::data::{BinnedDataset, DenseMatrix};
use rgbm_rs::histogram::{BinStats, BuildScratch, Gradients, Histogram, build, subtract_into};
use rgbm_rs::params::{BoosterParams, Loss, Selection, SelectionSize};
use rgbm_rs::selection::Candidates;
use rgbm_rs::split::{RowCounts, SplitRule, best_split};
use rgbm_rs::tree::partition::{SplitRoute, partition};

const N: usize = 200_000;
const P: usize = 28;

/// xorshift64*: a fixed, dependency-free stream so every run sees the same data.
fn stream(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed.max(1);
    move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn data(n: usize, p: usize) -> (Vec<f32>, Vec<f64>) {
    let mut next = stream(7);
    let x: Vec<f32> = (0..n * p).map(|_| (next() * 4.0 - 2.0) as f32).collect();
    let y = (0..n)
        .map(|i| {
            if x[i * p] + 0.5 * x[i * p + 1] + (next() as f32 - 0.5) > 0.0 {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    (x, y)
}

fn kernels(c: &mut Criterion) {
    let (x, y) = data(N, P);
    let m = DenseMatrix::row_major(&x, N, P).unwrap();
    c.bench_function("binning 200k x 28", |b| {
        b.iter(|| BinnedDataset::from_matrix(black_box(&m), 255, 0).unwrap())
    });

    let ds = BinnedDataset::from_matrix(&m, 255, 0).unwrap();
    let mut next = stream(11);
    let gh: Vec<[f64; 2]> = (0..N).map(|_| [next() - 0.5, 0.25]).collect();
    let grads = Gradients::new(&gh, None);
    let all: Vec<usize> = (0..P).collect();
    let total = gh.iter().fold(BinStats::default(), |mut t, g| {
        t.add(&BinStats {
            g: g[0],
            h: g[1],
            w: 1.0,
            n: 1.0,
        });
        t
    });
    let mut hist = Histogram::new(ds.total_bins()).unwrap();
    let mut scratch = BuildScratch::new(N).unwrap();
    c.bench_function("histogram root, all features", |b| {
        b.iter(|| build(&ds, &all, None, &grads, &mut hist, &mut scratch, &total))
    });

    let subset: Vec<u32> = (0..N as u32).filter(|r| r % 3 != 0).collect();
    // Gradients are indexed by row; kernels that read them in node order
    // gather them first (part of the measured cost).
    let sub_grads = Gradients::new(&gh, None);
    c.bench_function("histogram subset (2/3 of rows), all features", |b| {
        b.iter(|| {
            build(
                &ds,
                &all,
                Some(&subset),
                &sub_grads,
                &mut hist,
                &mut scratch,
                &total,
            )
        })
    });
    // Squared error without weights: every hessian is 1, so Σh is the row
    // count and the kernel keeps no separate counts.
    let unit_gh: Vec<[f64; 2]> = gh.iter().map(|&[g, _]| [g, 1.0]).collect();
    let unit_grads = Gradients {
        unit_hessian: true,
        uncounted: false,
        ..Gradients::new(&unit_gh, None)
    };
    c.bench_function(
        "histogram subset (2/3 of rows), all features, unit hessian",
        |b| {
            b.iter(|| {
                build(
                    &ds,
                    &all,
                    Some(&subset),
                    &unit_grads,
                    &mut hist,
                    &mut scratch,
                    &total,
                )
            })
        },
    );
    let few: Vec<usize> = (0..P).step_by(10).collect();
    c.bench_function("histogram subset, 3 features (RGBM t = p/10)", |b| {
        b.iter(|| {
            build(
                &ds,
                &few,
                Some(&subset),
                &sub_grads,
                &mut hist,
                &mut scratch,
                &total,
            )
        })
    });

    let mut parent = Histogram::new(ds.total_bins()).unwrap();
    build(&ds, &all, None, &grads, &mut parent, &mut scratch, &total).unwrap();
    let mut child = Histogram::new(ds.total_bins()).unwrap();
    build(
        &ds,
        &all,
        Some(&subset),
        &sub_grads,
        &mut child,
        &mut scratch,
        &total,
    )
    .unwrap();
    c.bench_function("histogram subtraction", |b| {
        b.iter_batched(
            || parent.clone(),
            |mut p| subtract_into(&mut p, &child),
            BatchSize::LargeInput,
        )
    });

    let rule = SplitRule::from_params(&BoosterParams::default());
    let cands = Candidates::all(P);
    let every_row: Vec<u32> = (0..N as u32).collect();
    c.bench_function("split search, all features", |b| {
        b.iter(|| {
            best_split(
                &ds,
                black_box(&parent),
                &total,
                &cands,
                &rule,
                RowCounts::Exact,
                &every_row,
                None,
                &mut Vec::new(),
            )
        })
    });

    let route = SplitRoute {
        feature: 0,
        bin: 128,
        missing_bin: ds.mapper().features[0].missing_bin(),
        default_left: true,
    };
    let mut scratch = vec![0u32; N];
    c.bench_function("partition 200k rows", |b| {
        b.iter_batched(
            || (0..N as u32).collect::<Vec<u32>>(),
            |mut rows| partition(&ds, route, &mut rows, &mut scratch),
            BatchSize::LargeInput,
        )
    });

    let round = BoosterParams {
        n_estimators: 1,
        loss: Loss::Logistic,
        max_depth: None,
        max_leaves: Some(31),
        n_jobs: Some(2),
        ..Default::default()
    };
    let mut group = c.benchmark_group("one round (binning included)");
    group.sample_size(10);
    group.bench_function("full", |b| {
        b.iter(|| {
            TrainingData::new(&m, &y)
                .and_then(|d| train(&round, &d, &[], &mut Unmonitored))
                .map(|t| t.model)
                .unwrap()
        })
    });
    let groups = BoosterParams {
        selection: Selection::Groups,
        selection_size: Some(SelectionSize::Count(3)),
        ..round.clone()
    };
    group.bench_function("RGBM groups t = 3 of 28", |b| {
        b.iter(|| {
            TrainingData::new(&m, &y)
                .and_then(|d| train(&groups, &d, &[], &mut Unmonitored))
                .map(|t| t.model)
                .unwrap()
        })
    });
    group.finish();

    let model = TrainingData::new(&m, &y)
        .and_then(|d| {
            train(
                &BoosterParams {
                    n_estimators: 100,
                    ..round
                },
                &d,
                &[],
                &mut Unmonitored,
            )
        })
        .map(|t| t.model)
        .unwrap();
    let mut group = c.benchmark_group("predict");
    group.sample_size(10);
    group.bench_function("200k rows, 100 trees", |b| {
        b.iter(|| model.predict_raw(black_box(&m), None).unwrap())
    });
    let one = DenseMatrix::row_major(&x[..P], 1, P).unwrap();
    group.bench_function("1 row, 100 trees", |b| {
        b.iter(|| model.predict_raw(black_box(&one), None).unwrap())
    });
    group.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
