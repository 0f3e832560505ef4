//! Weighted sampling (multinomial) against the CPU definition (bit for bit),
//! an independent f64 inverse transform (within a stated bound), and
//! chi-square goodness-of-fit tests with a fixed false-failure rate.

use ascend_scan::{
    multinomial, multinomial_reference, multinomial_with_uniforms, uniforms, Batch, Device, Error,
    SampleOptions, SampleWeight, Soc,
};
use half::{bf16, f16};
use testkit::device;
use testkit::stats::{chi_square, chi_square_critical, ALPHA};

/// Deterministic pseudo-random u64s (xorshift).
fn bits(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n).map(move |_| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    })
}

/// Weights in [0, 8) with about a quarter exactly zero.
fn weights(n: usize, seed: u64) -> Vec<f32> {
    bits(n, seed)
        .map(|b| {
            if b % 4 == 0 {
                0.0
            } else {
                ((b >> 8) % 8192) as f32 / 1024.0
            }
        })
        .collect()
}

fn convert<T: SampleWeight>(w: &[f32], from: fn(f32) -> T) -> Vec<T> {
    w.iter().map(|&v| from(v)).collect()
}

/// Draws `draws` per row of `w` (rows x n, as T) on the device with `seed`,
/// checks them bit for bit against the CPU definition and against the f64
/// inverse transform, and returns them.
fn draw_checked<T: SampleWeight>(
    dev: &Device,
    w: &[T],
    rows: usize,
    draws: usize,
    seed: u64,
) -> Vec<i32> {
    let buf = dev.upload(w).unwrap();
    let batch = Batch::rows(&buf, rows).unwrap();
    let got = multinomial(dev, batch, draws, SampleOptions { seed })
        .unwrap()
        .download()
        .unwrap();
    let us = uniforms(seed, rows, draws);
    let n = w.len() / rows;
    assert_eq!(
        got,
        multinomial_reference(w, rows, &us),
        "rows={rows} n={n} seed={seed}"
    );
    for r in 0..rows {
        let row: Vec<f64> = w[r * n..(r + 1) * n]
            .iter()
            .map(|v| f64::from(v.to_f32()))
            .collect();
        let total: f64 = row.iter().sum();
        // Roundings on a descent path: the node sums (height h: h roundings),
        // the prefix chain (depth), the total and v: 3 * depth + 3 units of
        // 2^-24 of the total bound the distance between the f32 boundary and
        // the exact one.
        let depth = f64::from(n.next_power_of_two().trailing_zeros());
        let delta = (3.0 * depth + 3.0) * 2f64.powi(-24) * total;
        let mut prefix = vec![0.0f64; n + 1];
        for i in 0..n {
            prefix[i + 1] = prefix[i] + row[i];
        }
        for j in 0..draws {
            let i = got[r * draws + j] as usize;
            assert!(
                i < n && row[i] > 0.0,
                "row {r} draw {j}: index {i} has weight 0"
            );
            let target = f64::from(us[r * draws + j]) * total;
            assert!(
                prefix[i] - delta <= target && target < prefix[i + 1] + delta,
                "row {r} draw {j}: index {i} spans [{}, {}) but u*T = {target}",
                prefix[i],
                prefix[i + 1]
            );
        }
    }
    got
}

#[test]
fn draws_match_the_definition_bit_for_bit() {
    let dev = device();
    for (rows, n, draws) in [
        (1usize, 1usize, 5usize),
        (1, 7, 300),
        (3, 4095, 40),
        (2, 4096, 40),
        (2, 4097, 40),
        (1, 3 * 4096 + 5, 200),
        // Level 2 on top (tile sums), blocks of block sums below it.
        (1, (1 << 18) + 4097, 300),
        // Groups of 64 draws end at row ends and cross the 1024-uniform
        // batches of a core (1500 draws per core).
        (2, 70_000, 30_000),
        (40, 1000, 3),
        (300, 33, 7),
        (5000, 3, 1),
    ] {
        let w = weights(rows * n, (rows * 31 + n) as u64);
        // A row of zeros (or nothing but zeros and one weight) is invalid or
        // trivial: make sure each row has a positive weight.
        let mut w = w;
        for r in 0..rows {
            w[r * n + (r * 7919) % n] = 1.5;
        }
        draw_checked(&dev, &w, rows, draws, 11);
        draw_checked(&dev, &convert(&w, f16::from_f32), rows, draws, 12);
        draw_checked(&dev, &convert(&w, bf16::from_f32), rows, draws, 13);
    }
}

#[test]
fn huge_and_tiny_weights_and_explicit_uniforms() {
    let dev = device();
    // Prefix sums that stall in f32 (1 + 1e8 == 1e8): the tiny weights
    // still have their own intervals in the tree's chain.
    let mut w = vec![1.0f32; 5000];
    w[0] = 1e8;
    w[4321] = 0.0;
    draw_checked(&dev, &w, 1, 2000, 5);
    // Uniforms at the edges and outside [0, 1): always a positive weight.
    let w = [0.0f32, 2.0, 0.0, 0.0, 5.0, 0.0, 1.0, 0.0];
    // Boundaries (T = 8): [0, 2) -> 1, [2, 7) -> 4, [7, 8) -> 6.
    let us = [
        0.0f32,
        0.2499999,
        0.25,
        0.87499994,
        0.875,
        0.99999994,
        1.0,
        7.0,
        -1.0,
        f32::NAN,
    ];
    let got = multinomial_with_uniforms(&dev, &dev.upload(&w).unwrap(), &dev.upload(&us).unwrap())
        .unwrap()
        .download()
        .unwrap();
    assert_eq!(got, multinomial_reference(&w, 1, &us));
    assert_eq!(got, [1, 1, 4, 4, 6, 6, 6, 6, 1, 6]);
}

#[test]
fn a_single_positive_weight_is_always_drawn() {
    let dev = device();
    for (n, at) in [
        (1usize, 0usize),
        (2, 1),
        (10_000, 0),
        (10_000, 9_999),
        (10_000, 4_096),
        (70_000, 65_536),
    ] {
        let mut w = vec![f16::ZERO; n];
        // The smallest f16 subnormal: a positive weight all the same.
        w[at] = f16::from_bits(1);
        let got = draw_checked(&dev, &w, 1, 500, n as u64);
        assert!(got.iter().all(|&i| i as usize == at), "n={n} at={at}");
    }
}

#[test]
fn past_2_pow_24_categories() {
    let dev = device();
    // 2^24 + 4097 categories: two levels of tile sums above the weights.
    let n = (1usize << 24) + 4097;
    let mut w = vec![f16::ZERO; n];
    // Weight at every 1000th category, heavier at the end (indices past 2^24
    // must come back exact).
    for (i, v) in w.iter_mut().enumerate().step_by(1000) {
        *v = f16::from_f32(if i >= 1 << 24 {
            4000.0
        } else {
            1.0 + (i % 7) as f32
        });
    }
    w[n - 1] = f16::from_f32(60000.0);
    let got = draw_checked(&dev, &w, 1, 64, 99);
    assert!(got.iter().any(|&i| i as usize >= 1 << 24));
}

#[test]
fn two_million_draws_from_a_row_past_2_pow_24() {
    // Many draws per row (torch.multinomial(w, 2_000_000, replacement=True)
    // over 2^24 + 7 categories): each draw reads one 64-entry block per
    // level, so the launch stays short on the simulator.
    let dev = Device::default_device().unwrap();
    let n = (1usize << 24) + 7;
    let mut w = convert(&weights(n, 2024), f16::from_f32);
    w[n - 1] = f16::from_f32(30000.0);
    let got = draw_checked(&dev, &w, 1, 2_000_000, 7);
    assert!(got.iter().any(|&i| i as usize == n - 1));
}

// ---- Chi-square goodness of fit -------------------------------------------

/// Draws `rows x draws` from `rows` copies of `w` and tests the pooled
/// counts of each `group` consecutive categories against their share of
/// sum(w) (zero-weight categories are checked never to be drawn).
fn goodness_of_fit<T: SampleWeight>(
    dev: &Device,
    name: &str,
    w: &[T],
    (rows, draws): (usize, usize),
    group: usize,
    seed: u64,
) {
    let n = w.len();
    let all: Vec<T> = (0..rows).flat_map(|_| w.iter().copied()).collect();
    let buf = dev.upload(&all).unwrap();
    let got = multinomial(
        dev,
        Batch::rows(&buf, rows).unwrap(),
        draws,
        SampleOptions { seed },
    )
    .unwrap()
    .download()
    .unwrap();
    let wf: Vec<f64> = w.iter().map(|v| f64::from(v.to_f32())).collect();
    let total: f64 = wf.iter().sum();
    let mut counts = vec![0u64; n.div_ceil(group)];
    for &i in &got {
        assert!(
            wf[i as usize] > 0.0,
            "{name}: category {i} of weight 0 drawn"
        );
        counts[i as usize / group] += 1;
    }
    let probs: Vec<f64> = wf
        .chunks(group)
        .map(|c| c.iter().sum::<f64>() / total)
        .collect();
    let (stat, df) = chi_square(&counts, &probs);
    let critical = chi_square_critical(df.max(1), ALPHA);
    assert!(
        stat < critical,
        "{name}: chi-square {stat:.1} >= {critical:.1} (df {df}, alpha {ALPHA})"
    );
}

#[test]
fn chi_square_helpers_match_known_quantiles() {
    // Tables: chi2(0.999, 1) = 10.828, chi2(0.999, 10) = 29.588,
    // chi2(0.95, 100) = 124.342; upper 1e-6 for df 1: 23.928.
    for (df, alpha, want) in [
        (1, 1e-3, 10.828),
        (10, 1e-3, 29.588),
        (100, 0.05, 124.342),
        (1, 1e-6, 23.928),
    ] {
        let got = chi_square_critical(df, alpha);
        assert!(
            (got - want).abs() < 2e-3,
            "df {df} alpha {alpha}: {got} vs {want}"
        );
    }
}

#[test]
fn draws_follow_the_weights() {
    let dev = device();
    // 20 rows x 5000 draws = 100,000 draws per distribution.
    let shape = (20, 5000);
    let uniform: Vec<f32> = vec![1.0; 50];
    goodness_of_fit(&dev, "uniform", &uniform, shape, 1, 1);
    let skewed: Vec<f32> = (0..200).map(|i| 1.0 / ((i + 1) as f32).powf(1.5)).collect();
    goodness_of_fit(&dev, "skewed", &skewed, shape, 1, 2);
    let mut dominant = vec![1.0f32; 100];
    dominant[37] = 1e4;
    goodness_of_fit(&dev, "dominant", &dominant, shape, 1, 3);
    let sparse: Vec<f32> = (0..1000)
        .map(|i| {
            if i % 10 == 3 {
                1.0 + (i % 7) as f32
            } else {
                0.0
            }
        })
        .collect();
    goodness_of_fit(&dev, "many zeros", &sparse, shape, 1, 4);
    // f16 subnormal weights (2^-24 .. 2^-14): sums far below f16's range.
    let subnormal: Vec<f16> = (0..64)
        .map(|i| f16::from_bits(1 + (i * 16) as u16))
        .collect();
    goodness_of_fit(&dev, "f16 subnormals", &subnormal, shape, 1, 5);
    // Several tiles (a draw descends the tile sums, then a tile): weights
    // rising in steps, 20,000 draws, counts per 256 categories.
    let tiles: Vec<bf16> = (0..3 * 4096 + 100)
        .map(|i| bf16::from_f32(1.0 + (i / 512) as f32))
        .collect();
    goodness_of_fit(&dev, "three tiles bf16", &tiles, (4, 5000), 256, 6);
}

// ---- Invalid input ---------------------------------------------------------

fn invalid_weights(e: Error) -> String {
    match e {
        Error::InvalidArgument {
            name: "weights",
            reason,
        } => reason,
        other => panic!("expected an invalid `weights`, got {other:?}"),
    }
}

/// The reason `multinomial` refuses `rows` rows of `w`.
fn refused<T: SampleWeight>(dev: &Device, w: &[T], rows: usize) -> String {
    let buf = dev.upload(w).unwrap();
    let batch = Batch::rows(&buf, rows).unwrap();
    invalid_weights(multinomial(dev, batch, 2, SampleOptions::default()).unwrap_err())
}

fn bad_weight(row: usize, at: usize, value: f32) -> String {
    format!("row {row}: weight {at} is {value} (weights must be finite and >= 0)")
}

#[test]
fn invalid_weights_name_the_first_bad_row() {
    let dev = device();
    let (rows, n) = (6usize, 5000usize);
    for (bad, row, at) in [
        (-1.0f32, 2usize, 4999usize),
        (f32::NAN, 4, 17),
        (f32::INFINITY, 1, 4096),
        (f32::NEG_INFINITY, 5, 0),
        (-1e-30, 0, 100),
    ] {
        let mut w = vec![1.0f32; rows * n];
        w[row * n + at] = bad;
        // A later row is bad too: the first is named.
        w[(rows - 1) * n + 3] = -2.0;
        assert_eq!(refused(&dev, &w, rows), bad_weight(row, at, bad));
    }
    // Short rows (one tile: the draw phase sums the weights itself).
    for (rows, n, row, at) in [
        (1usize, 3usize, 0usize, 1usize),
        (3, 4096, 1, 4095),
        (50, 40, 37, 0),
    ] {
        let mut w = vec![0.5f32; rows * n];
        w[row * n + at] = -0.25;
        assert_eq!(refused(&dev, &w, rows), bad_weight(row, at, -0.25));
    }
    // A short row of zeros (rows of one tile are summed by the draw phase).
    assert_eq!(
        refused(&dev, &[1.0f32, 2.0, 0.0, 0.0, 0.0, 0.0], 3),
        "row 1: all weights are zero"
    );
    // All zeros in row 3 (of f16 weights).
    let mut w = vec![f16::ONE; rows * n];
    for v in &mut w[3 * n..4 * n] {
        *v = f16::ZERO;
    }
    assert_eq!(refused(&dev, &w, rows), "row 3: all weights are zero");
    // -0.0 is a zero weight, not a negative one.
    let w = [-0.0f32, 1.0, -0.0];
    let got = multinomial(&dev, &dev.upload(&w).unwrap(), 50, SampleOptions::default()).unwrap();
    assert!(got.download().unwrap().iter().all(|&i| i == 1));
    // Finite weights whose f32 sum overflows.
    let reason = refused(&dev, &[3e38f32; 4], 1);
    assert!(
        reason.starts_with("row 0: the weights sum past the f32 range"),
        "{reason}"
    );
}

#[test]
fn shapes_lengths_and_devices_are_checked() {
    let dev = device();
    let w = dev.upload(&[1.0f32; 12]).unwrap();
    // No categories.
    let empty = dev.upload::<f32>(&[]).unwrap();
    assert!(
        invalid_weights(multinomial(&dev, &empty, 3, SampleOptions::default()).unwrap_err())
            .contains("n = 0")
    );
    // No draws: an empty result.
    assert!(multinomial(&dev, &w, 0, SampleOptions::default())
        .unwrap()
        .is_empty());
    // Uniforms that do not split into the rows.
    let u = dev.upload(&[0.5f32; 7]).unwrap();
    assert!(matches!(
        multinomial_with_uniforms(&dev, Batch::rows(&w, 3).unwrap(), &u),
        Err(Error::InvalidArgument {
            name: "uniforms",
            ..
        })
    ));
    // Too many draws in all.
    assert!(matches!(
        multinomial(
            &dev,
            Batch::rows(&w, 3).unwrap(),
            usize::MAX / 2,
            SampleOptions::default()
        ),
        Err(Error::InvalidArgument {
            name: "num_samples",
            ..
        })
    ));
    // Buffers of another device.
    let other = Device::simulated(Soc::Ascend910B4).unwrap();
    let w_other = other.upload(&[1.0f32; 12]).unwrap();
    let u_other = other.upload(&[0.5f32; 12]).unwrap();
    assert!(matches!(
        multinomial(&dev, &w_other, 1, SampleOptions::default()),
        Err(Error::InvalidArgument {
            name: "weights",
            ..
        })
    ));
    assert!(matches!(
        multinomial_with_uniforms(&dev, &w, &u_other),
        Err(Error::InvalidArgument {
            name: "uniforms",
            ..
        })
    ));
    // One draw per uniform, row-major, the same on any device.
    let u = dev.upload(&[0.1f32, 0.9, 0.5, 0.0, 0.99, 0.3]).unwrap();
    let got = multinomial_with_uniforms(&dev, Batch::rows(&w, 2).unwrap(), &u).unwrap();
    assert_eq!(got.download().unwrap(), [0, 5, 3, 0, 5, 1]);
}
