//! Infinities and NaN in scans (docs/algorithms.md, "Non-finite inputs"):
//! every sum-scan algorithm and float dtype against a sequential f64
//! reference, element by element. A non-finite input affects exactly the
//! outputs from its position on: NaN where the reference is NaN, the same
//! infinity where it is infinite, and the usual f32 error bound elsewhere.
use ascend_scan::{Algorithm, ScanInput};
use half::{bf16, f16};
use proptest::prelude::*;

use testkit::{
    check::{check_scan_row, scan_rows},
    data::{f16_data, words},
};

/// The non-finite values put into the inputs: +inf, -inf, NaN, and +inf
/// followed (a few elements later) by -inf, whose sum is NaN.
#[derive(Debug, Clone, Copy)]
enum Special {
    PosInf,
    NegInf,
    Nan,
    InfThenNegInf,
}

const SPECIALS: [Special; 4] = [
    Special::PosInf,
    Special::NegInf,
    Special::Nan,
    Special::InfThenNegInf,
];

/// Puts `special` at position `at` of `xs` (the -inf of InfThenNegInf 3
/// elements later, or at the last element).
fn plant(xs: &mut [f64], at: usize, special: Special) {
    let n = xs.len();
    match special {
        Special::PosInf => xs[at] = f64::INFINITY,
        Special::NegInf => xs[at] = f64::NEG_INFINITY,
        Special::Nan => xs[at] = f64::NAN,
        Special::InfThenNegInf => {
            xs[at] = f64::INFINITY;
            let later = (at + 3).min(n - 1);
            if later != at {
                xs[later] = f64::NEG_INFINITY;
            }
        }
    }
}

/// Float inputs of the scans: converted from f64 (exactly for the values
/// planted here) and back.
trait Float: ScanInput<Acc = f32> + Copy {
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
}
impl Float for f16 {
    fn from_f64(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
}
impl Float for bf16 {
    fn from_f64(v: f64) -> Self {
        bf16::from_f64(v)
    }
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
}
impl Float for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

/// Scans `rows` rows of `wide` (converted to T) with `algorithm` and checks
/// every row.
fn check_scan<T: Float>(wide: &[f64], rows: usize, algorithm: Algorithm, exclusive: bool) {
    let xs: Vec<T> = wide.iter().map(|&v| T::from_f64(v)).collect();
    let wide: Vec<f64> = xs.iter().map(|v| v.to_f64()).collect();
    let (y, totals) = scan_rows(&xs, rows, algorithm, exclusive);
    let n = wide.len() / rows;
    let resolved = match algorithm {
        Algorithm::Auto => Algorithm::auto_for::<T>(rows, n),
        a => a,
    };
    let d = f64::from(resolved.error_depth().unwrap());
    for (r, &total) in totals.iter().enumerate() {
        let what = format!("{algorithm} ({resolved}) row {r} of {rows}");
        let range = r * n..(r + 1) * n;
        check_scan_row(&wide[range.clone()], &y[range], total, exclusive, d, &what);
    }
}

/// Finite data in [-64, 64) as f64.
fn finite(n: usize, seed: u64) -> Vec<f64> {
    f16_data(n, seed).into_iter().map(|v| v.to_f64()).collect()
}

/// Positions that meet the edges of tile edge s in an array of n: first,
/// last, s-row starts and ends, tile boundaries, the middle of the array
/// (the two vector cores of an AI core split blocks there) and the last
/// tile's rows.
fn adversarial_positions(n: usize, s: usize) -> Vec<usize> {
    let l = s * s;
    let mut v = vec![
        0,
        n - 1,
        1,
        s - 1,
        s,
        2 * s - 1,
        l - 1,
        l,
        l + s - 1,
        n / 2,
        n - s,
        n - l,
    ];
    v.extend([2 * l - 1, 2 * l, 3 * l, 3 * l + 1]);
    v.retain(|&p| p < n);
    v.sort_unstable();
    v.dedup();
    v
}

fn float_algorithms() -> Vec<Algorithm> {
    let mut v = vec![Algorithm::Auto, Algorithm::VectorScan];
    for s in [16, 32, 64, 128] {
        v.extend([
            Algorithm::ScanU { s },
            Algorithm::McScan { s },
            Algorithm::ReduceThenScan { s },
        ]);
        if s < 128 {
            v.extend([Algorithm::ScanUL1 { s }, Algorithm::VecCumSum { s }]);
        }
    }
    v
}

/// One non-finite value per launch at each adversarial position of a single
/// array spanning several tiles (and, for the multi-core scans, several
/// cores): the outputs before it must stay finite and accurate.
#[test]
fn every_algorithm_at_adversarial_positions() {
    for algorithm in float_algorithms() {
        let s = algorithm.tile_edge().unwrap_or(64) as usize;
        let n = 3 * s * s + 5 * s + 7;
        for (k, at) in adversarial_positions(n, s).into_iter().enumerate() {
            let special = SPECIALS[k % SPECIALS.len()];
            let mut wide = finite(n, (k * 7 + s) as u64);
            plant(&mut wide, at, special);
            let exclusive = k % 3 == 2;
            check_scan::<f16>(&wide, 1, algorithm, exclusive);
            if k % 2 == 0 {
                check_scan::<bf16>(&wide, 1, algorithm, exclusive);
            }
        }
    }
}

/// The multi-core scans over many cores: the inputs span 45 tiles (several
/// per block on every core), with non-finite values at block-sized strides.
#[test]
fn multicore_scans_across_core_boundaries() {
    for algorithm in [
        Algorithm::McScan { s: 16 },
        Algorithm::ReduceThenScan { s: 16 },
        Algorithm::McScan { s: 32 },
        Algorithm::ReduceThenScan { s: 32 },
    ] {
        let s = algorithm.tile_edge().unwrap() as usize;
        let l = s * s;
        let n = 45 * l + 3;
        for (k, at) in [
            l - 1,
            2 * l,
            4 * l - 1,
            4 * l,
            22 * l + l / 2,
            40 * l,
            n - 1,
        ]
        .into_iter()
        .enumerate()
        {
            let mut wide = finite(n, k as u64 + 100);
            plant(&mut wide, at, SPECIALS[k % SPECIALS.len()]);
            check_scan::<f16>(&wide, 1, algorithm, k % 2 == 1);
        }
    }
}

/// Batched SCANU and SCANUL1: every row its own non-finite value at its own
/// adversarial position (rows without one included), so that neighbouring
/// rows, which share tiles of the cube and ring slots, must stay untouched.
#[test]
fn batched_rows_keep_their_own_non_finite_values() {
    for algorithm in [
        Algorithm::ScanU { s: 16 },
        Algorithm::ScanU { s: 64 },
        Algorithm::ScanU { s: 128 },
        Algorithm::ScanUL1 { s: 16 },
        Algorithm::ScanUL1 { s: 64 },
        Algorithm::Auto,
    ] {
        let s = algorithm.tile_edge().unwrap_or(32) as usize;
        for n in [s + 3, 2 * s * s + 1] {
            let positions = adversarial_positions(n, s);
            let rows = 2 * positions.len() + 3;
            let mut wide = finite(rows * n, (n + s) as u64);
            for r in 0..rows {
                if r % 2 == 1 {
                    continue; // every other row stays finite
                }
                let at = positions[(r / 2) % positions.len()];
                plant(&mut wide[r * n..(r + 1) * n], at, SPECIALS[r % 4]);
            }
            for exclusive in [false, true] {
                check_scan::<f16>(&wide, rows, algorithm, exclusive);
            }
            check_scan::<bf16>(&wide, rows, algorithm, false);
        }
    }
}

/// f32 input (VECTORSCAN, the only f32 sum scan).
#[test]
fn f32_vector_scan() {
    let n = 5 * 4096 + 9;
    for (k, at) in adversarial_positions(n, 64).into_iter().enumerate() {
        let mut wide = finite(n, k as u64);
        plant(&mut wide, at, SPECIALS[k % 4]);
        check_scan::<f32>(&wide, 1, Algorithm::VectorScan, k % 2 == 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random lengths, algorithms, dtypes and 1-3 non-finite values at random
    /// (or adversarial) positions.
    #[test]
    fn random_non_finite_positions(
        n in 1usize..40_000,
        seed: u64,
        algo_idx in 0usize..64,
        dtype in 0usize..2,
        count in 1usize..4,
        exclusive: bool,
    ) {
        let algorithms = float_algorithms();
        let algorithm = algorithms[algo_idx % algorithms.len()];
        let s = algorithm.tile_edge().unwrap_or(64) as usize;
        let mut wide = finite(n, seed);
        let adversarial = adversarial_positions(n, s);
        for (j, w) in words(2 * count, seed ^ 0x5eed).collect::<Vec<_>>().chunks(2).enumerate() {
            let at = if w[0] % 2 == 0 {
                adversarial[(w[0] / 2) as usize % adversarial.len()]
            } else {
                (w[0] / 2) as usize % n
            };
            plant(&mut wide, at, SPECIALS[(w[1] as usize + j) % 4]);
        }
        if dtype == 0 {
            check_scan::<f16>(&wide, 1, algorithm, exclusive);
        } else {
            check_scan::<bf16>(&wide, 1, algorithm, exclusive);
        }
    }
}
