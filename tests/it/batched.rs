//! Batched sum scans (many equal-length rows) against an f64 / exact-integer
//! reference, row by row.
use ascend_scan::{scan, Algorithm, Batch, Error, ScanOptions, MAX_BATCH_ROWS};
use half::f16;
use proptest::prelude::*;
use testkit::device;

use testkit::{
    check::{check_scan_row, scan_rows},
    data::{f16_data, i8_data},
};

/// Depth factor of an algorithm's f32 addition tree (see tests/scan.rs):
/// the bound is (d + i/d + 2) * 2^-24 * sum|x| within a row.
fn depth(algorithm: Algorithm) -> f64 {
    f64::from(algorithm.error_depth().unwrap_or(128))
}

fn check_f16(xs: &[f16], rows: usize, algorithm: Algorithm, exclusive: bool) {
    let (y, totals) = scan_rows(xs, rows, algorithm, exclusive);
    assert_eq!((y.len(), totals.len()), (xs.len(), rows));
    let n = xs.len() / rows;
    let d = depth(match algorithm {
        Algorithm::Auto => Algorithm::auto_for::<f16>(rows, n),
        a => a,
    });
    let wide: Vec<f64> = xs.iter().map(|v| v.to_f64()).collect();
    let what = format!("{algorithm} exclusive={exclusive}");
    check_rows(&wide, &y, &totals, rows, exclusive, d, &what);
}

fn check_i8(xs: &[i8], rows: usize, algorithm: Algorithm, exclusive: bool) {
    let (y, totals) = scan_rows(xs, rows, algorithm, exclusive);
    let n = xs.len() / rows;
    for r in 0..rows {
        let mut acc = 0i64;
        for i in 0..n {
            let before = acc;
            acc += i64::from(xs[r * n + i]);
            let want = if exclusive { before } else { acc };
            assert_eq!(
                i64::from(y[r * n + i]),
                want,
                "{algorithm} rows={rows} n={n} exclusive={exclusive} row {r} i={i}"
            );
        }
        assert_eq!(i64::from(totals[r]), acc, "{algorithm} row {r} total");
    }
}

/// Row counts around the pairing of rows (two per AI core) and the 20 AI
/// cores of the 910B4, and row lengths 1, odd, s*s - 1, s*s + 1.
#[test]
fn batched_scanu_shapes() {
    for s in [16u32, 32, 64, 128] {
        let l = (s * s) as usize;
        for rows in [1usize, 2, 3, 39, 41] {
            for n in [1usize, 17, l - 1, l + 1] {
                if rows * n > 1 << 21 {
                    continue;
                }
                for exclusive in [false, true] {
                    let seed = (rows * 31 + n) as u64;
                    check_f16(
                        &f16_data(rows * n, seed),
                        rows,
                        Algorithm::ScanU { s },
                        exclusive,
                    );
                    check_i8(
                        &i8_data(rows * n, seed),
                        rows,
                        Algorithm::ScanU { s },
                        exclusive,
                    );
                }
            }
        }
    }
}

#[test]
fn batches_of_300_rows() {
    for n in [1usize, 33, 129] {
        for exclusive in [false, true] {
            let algorithm = Algorithm::ScanU { s: 128 };
            check_f16(&f16_data(300 * n, n as u64), 300, algorithm, exclusive);
            check_i8(&i8_data(300 * n, n as u64), 300, algorithm, exclusive);
            check_f16(
                &f16_data(300 * n, n as u64 + 1),
                300,
                Algorithm::Auto,
                exclusive,
            );
        }
    }
}

/// BATCHED SCANUL1: whole rows per AI core, rows summing past 2048.
#[test]
fn batched_scanul1_shapes() {
    for s in [16u32, 32, 64] {
        let l = (s * s) as usize;
        for rows in [1usize, 2, 19, 21, 300] {
            for n in [1usize, 17, l - 1, l + 1] {
                if rows * n > 1 << 20 {
                    continue;
                }
                for exclusive in [false, true] {
                    let xs = f16_data(rows * n, (rows * 7 + n) as u64);
                    check_f16(&xs, rows, Algorithm::ScanUL1 { s }, exclusive);
                }
            }
        }
    }
}

/// The multi-core and vector algorithms scan a batch row by row.
#[test]
fn batched_other_algorithms() {
    let cases = [
        Algorithm::McScan { s: 64 },
        Algorithm::ReduceThenScan { s: 32 },
        Algorithm::VecCumSum { s: 16 },
    ];
    for algorithm in cases {
        for (rows, n) in [(3usize, 1usize), (5, 1025), (2, 4097)] {
            for exclusive in [false, true] {
                check_f16(
                    &f16_data(rows * n, n as u64 + 3),
                    rows,
                    algorithm,
                    exclusive,
                );
                if !matches!(algorithm, Algorithm::ScanUL1 { .. }) {
                    check_i8(&i8_data(rows * n, n as u64 + 3), rows, algorithm, exclusive);
                }
            }
        }
    }
}

#[test]
fn empty_rows_give_identity_totals() {
    let dev = device();
    let x = dev.upload::<f16>(&[]).unwrap();
    let options = ScanOptions {
        want_total: true,
        ..Default::default()
    };
    // Zero elements split into 4 rows of length 0.
    let out = scan(&dev, Batch::rows(&x, 4).unwrap(), options).unwrap();
    assert_eq!(out.totals, Some(vec![0.0; 4]));
    assert!(out.values.is_empty());
}

#[test]
fn bad_batches_name_the_argument() {
    let dev = device();
    let x = dev.upload(&[f16::ONE; 10]).unwrap();
    for rows in [0, 3, MAX_BATCH_ROWS + 1] {
        let err = Batch::rows(&x, rows).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { name: "rows", .. }),
            "{err}"
        );
    }
}

/// bf16 batches through BATCHED SCANU and BATCHED SCANUL1.
#[test]
fn batched_bf16() {
    let dev = device();
    for (algorithm, depth) in [
        (Algorithm::ScanU { s: 64 }, 64.0),
        (Algorithm::ScanUL1 { s: 32 }, 64.0),
    ] {
        for (rows, n) in [(3usize, 1usize), (41, 1025), (2, 4097)] {
            let xs = testkit::data::bf16_data(rows * n, n as u64);
            let x = dev.upload(&xs).unwrap();
            let options = ScanOptions {
                algorithm,
                want_total: true,
                ..Default::default()
            };
            let out = scan(&dev, Batch::rows(&x, rows).unwrap(), options).unwrap();
            let wide: Vec<f64> = xs.iter().map(|v| v.to_f64()).collect();
            let (y, totals) = (out.values.download().unwrap(), out.totals.unwrap());
            check_rows(&wide, &y, &totals, rows, false, depth, "bf16");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_batches(rows in 1usize..=300, n in 1usize..3000, seed: u64, s_idx in 0usize..4, exclusive: bool) {
        prop_assume!(rows * n <= 1 << 20);
        let s = [16u32, 32, 64, 128][s_idx];
        check_f16(&f16_data(rows * n, seed), rows, Algorithm::ScanU { s }, exclusive);
        check_i8(&i8_data(rows * n, seed), rows, Algorithm::ScanU { s }, exclusive);
    }
}

/// Sum scans on the vector cores (VECTORSCAN): the f32 path (also `Auto`
/// for f32) and every other input type on request, 1-D and batched. The
/// f32 bound: each element's addition tree has depth at most 256 within its
/// lane/row + 8 lane-scan steps + one per earlier tile of 4096, inside
/// (256 + i/256 + 2).
#[test]
fn vector_scan_sums() {
    let dev = device();
    let d = 256.0;
    let shapes = [
        (1usize, 1usize),
        (1, 33),
        (1, 4097),
        (1, 40 * 4096 + 5),
        (1, (1 << 20) + 3),
        (7, 255),
        (300, 17),
        (3, 10_000),
    ];
    for (rows, n) in shapes {
        for exclusive in [false, true] {
            let xf: Vec<f32> = f16_data(rows * n, n as u64 + 1)
                .iter()
                .enumerate()
                .map(|(i, v)| v.to_f32() * (1.0 + (i % 7) as f32 / 3.0))
                .collect();
            let wide: Vec<f64> = xf.iter().map(|&v| f64::from(v)).collect();
            for algorithm in [Algorithm::VectorScan, Algorithm::Auto] {
                let (y, totals) = scan_rows(&xf, rows, algorithm, exclusive);
                check_rows(&wide, &y, &totals, rows, exclusive, d, "f32");
            }
            let xh = f16_data(rows * n, n as u64 + 2);
            let x = dev.upload(&xh).unwrap();
            let options = ScanOptions {
                exclusive,
                algorithm: Algorithm::VectorScan,
                want_total: true,
                ..Default::default()
            };
            let out = scan(&dev, Batch::rows(&x, rows).unwrap(), options).unwrap();
            let wide: Vec<f64> = xh.iter().map(|v| v.to_f64()).collect();
            check_rows(
                &wide,
                &out.values.download().unwrap(),
                &out.totals.unwrap(),
                rows,
                exclusive,
                d,
                "f16",
            );
            let xb = testkit::data::bf16_data(rows * n, n as u64 + 3);
            let x = dev.upload(&xb).unwrap();
            let out = scan(&dev, Batch::rows(&x, rows).unwrap(), options).unwrap();
            let wide: Vec<f64> = xb.iter().map(|v| v.to_f64()).collect();
            check_rows(
                &wide,
                &out.values.download().unwrap(),
                &out.totals.unwrap(),
                rows,
                exclusive,
                d,
                "bf16",
            );
            let xi = i8_data(rows * n, n as u64 + 4);
            let x = dev.upload(&xi).unwrap();
            let out = scan(&dev, Batch::rows(&x, rows).unwrap(), options).unwrap();
            let y = out.values.download().unwrap();
            let totals = out.totals.unwrap();
            for r in 0..rows {
                let mut acc = 0i64;
                for i in 0..n {
                    let before = acc;
                    acc += i64::from(xi[r * n + i]);
                    let want = if exclusive { before } else { acc };
                    assert_eq!(
                        i64::from(y[r * n + i]),
                        want,
                        "i8 rows={rows} n={n} row {r} i={i}"
                    );
                }
                assert_eq!(i64::from(totals[r]), acc);
            }
        }
    }
}

/// f32 input has no cube path: a cube algorithm is refused by name.
#[test]
fn f32_cube_scan_is_refused() {
    let dev = device();
    let x = dev.upload(&[1.0f32; 64]).unwrap();
    let options = ScanOptions {
        algorithm: Algorithm::ScanU { s: 64 },
        ..Default::default()
    };
    let err = scan(&dev, &x, options).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
}

fn check_rows(
    xs: &[f64],
    y: &[f32],
    totals: &[f32],
    rows: usize,
    exclusive: bool,
    d: f64,
    what: &str,
) {
    let n = xs.len() / rows;
    assert_eq!((y.len(), totals.len()), (xs.len(), rows));
    for (r, &total) in totals.iter().enumerate() {
        let range = r * n..(r + 1) * n;
        let what = format!("{what} rows={rows} row {r}");
        check_scan_row(&xs[range.clone()], &y[range], total, exclusive, d, &what);
    }
}
