//! SCANU through the safe API against an f64 / exact-integer reference.
use ascend_scan::{model_launches, scan, Algorithm, CostParams, Device, Error, ScanOptions, Task};
use half::f16;
use proptest::prelude::*;
use testkit::device;

use testkit::data::{f16_data, i8_data};

/// Checks an f16 scan against the f64 reference with the stated bound.
///
/// Error bound: the kernel adds in f32 along a path of at most
/// (s - 1) in-row additions (cube, f32 accumulation) plus one carry addition
/// per earlier row (vector, f32) plus one, so by the standard bound for
/// recursive summation |y_i - sum_i| <= (s + i/s + 2) * 2^-24 * sum_{j<=i} |x_j|.
fn check_f16(xs: &[f16], s: u32, exclusive: bool) {
    check_f16_with(xs, Algorithm::ScanU { s }, s, exclusive);
}

fn check_f16_with(xs: &[f16], algorithm: Algorithm, s: u32, exclusive: bool) {
    check_float_with(xs, algorithm, s, exclusive);
}

/// f16 or bf16 input against the f64 reference with the f32 bound of depth `s`.
fn check_float_with<T>(xs: &[T], algorithm: Algorithm, s: u32, exclusive: bool)
where
    T: ascend_scan::ScanInput<Acc = f32> + Into<f64>,
{
    let dev = device();
    let x = dev.upload(xs).unwrap();
    let out = scan(
        &dev,
        &x,
        ScanOptions {
            exclusive,
            algorithm,
            want_total: true,
            ..Default::default()
        },
    )
    .unwrap();
    let y = out.values.download().unwrap();
    assert_eq!(y.len(), xs.len());
    let (mut acc, mut abs) = (0f64, 0f64);
    for (i, v) in xs.iter().enumerate() {
        let (before, abs_before) = (acc, abs);
        let v: f64 = (*v).into();
        acc += v;
        abs += v.abs();
        let (want, mag) = if exclusive {
            (before, abs_before)
        } else {
            (acc, abs)
        };
        let bound = (f64::from(s) + i as f64 / f64::from(s) + 2.0) * 2f64.powi(-24) * mag;
        let got = f64::from(y[i]);
        assert!(
            (got - want).abs() <= bound,
            "n={} s={s} exclusive={exclusive} i={i}: got {got}, want {want} (bound {bound})",
            xs.len()
        );
    }
    let total = f64::from(out.total().unwrap());
    let bound = (f64::from(s) + xs.len() as f64 / f64::from(s) + 2.0) * 2f64.powi(-24) * abs;
    assert!((total - acc).abs() <= bound, "total {total} vs {acc}");
}

fn check_i8(xs: &[i8], s: u32, exclusive: bool) {
    check_i8_with(xs, Algorithm::ScanU { s }, exclusive);
}

fn check_i8_with(xs: &[i8], algorithm: Algorithm, exclusive: bool) {
    let dev = device();
    let x = dev.upload(xs).unwrap();
    let out = scan(
        &dev,
        &x,
        ScanOptions {
            exclusive,
            algorithm,
            want_total: true,
            ..Default::default()
        },
    )
    .unwrap();
    let y = out.values.download().unwrap();
    let mut acc = 0i64;
    for (i, v) in xs.iter().enumerate() {
        let before = acc;
        acc += i64::from(*v);
        let want = if exclusive { before } else { acc };
        assert_eq!(
            i64::from(y[i]),
            want,
            "n={} {algorithm:?} exclusive={exclusive} i={i}",
            xs.len()
        );
    }
    assert_eq!(i64::from(out.total().unwrap()), acc);
}

/// Lengths that hit every edge for tile edge s.
fn edge_lengths(s: usize) -> Vec<usize> {
    let l = s * s;
    let mut v = vec![
        0,
        1,
        31,
        32,
        33,
        s - 1,
        s,
        s + 1,
        l - 1,
        l,
        l + 1,
        2 * l + s + 3,
    ];
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn edge_lengths_all_s_both_dtypes_both_kinds() {
    for s in [16u32, 32, 64, 128] {
        for n in edge_lengths(s as usize) {
            for exclusive in [false, true] {
                check_f16(&f16_data(n, n as u64 + u64::from(s)), s, exclusive);
                check_i8(&i8_data(n, n as u64 * 3 + 1), s, exclusive);
            }
        }
    }
}

#[test]
fn multicore_edge_lengths() {
    for s in [16u32, 32, 64, 128] {
        let l = (s * s) as usize;
        // Block and core boundaries: 20 AI cores on the 910B4.
        let mut lengths = edge_lengths(s as usize);
        lengths.extend([20 * l, 20 * l + 1, 41 * l - 1, 63 * l + s as usize + 1]);
        if s <= 64 {
            // Ten tiles per AI core: the reduce-then-scan ring wraps around.
            lengths.push(200 * l + 5);
        }
        for n in lengths {
            for exclusive in [false, true] {
                for algorithm in [Algorithm::McScan { s }, Algorithm::ReduceThenScan { s }] {
                    check_f16_with(&f16_data(n, n as u64 + 11), algorithm, s, exclusive);
                    check_i8_with(&i8_data(n, n as u64 * 5 + 9), algorithm, exclusive);
                }
            }
        }
    }
}

/// SCANUL1's error bound: an element's addition tree has depth at most
/// (s - 1) in its row + (s - 1) for its row sum + (s - 1) along the tile's
/// row sums + 2 + one per earlier tile, inside (2s + i/(2s) + 2).
#[test]
fn scanul1_edge_lengths() {
    for s in [16u32, 32, 64] {
        for n in edge_lengths(s as usize) {
            for exclusive in [false, true] {
                check_f16_with(
                    &f16_data(n, n as u64 + 21),
                    Algorithm::ScanUL1 { s },
                    2 * s,
                    exclusive,
                );
            }
        }
    }
}

/// Rows summing far past 2048 (f16's exact-integer limit): an f16 round trip
/// of the row sums would be off by up to 2^-11 relative, far outside the
/// f32 bound checked here.
#[test]
fn scanul1_rows_summing_past_2048_stay_accurate() {
    for s in [16u32, 64] {
        let n = 3 * (s * s) as usize + 7;
        let big: Vec<f16> = (0..n)
            .map(|i| f16::from_f32(1000.0 + (i % 97) as f32 * 0.125))
            .collect();
        let mixed: Vec<f16> = (0..n)
            .map(|i| f16::from_f32(if i % 3 == 0 { -1777.5 } else { 2011.25 }))
            .collect();
        for xs in [big, mixed] {
            for exclusive in [false, true] {
                check_f16_with(&xs, Algorithm::ScanUL1 { s }, 2 * s, exclusive);
            }
        }
    }
}

#[test]
fn scanul1_refuses_int8_and_s128() {
    let dev = device();
    let x = dev.upload(&[1i8; 100]).unwrap();
    let options = ScanOptions {
        algorithm: Algorithm::ScanUL1 { s: 64 },
        ..Default::default()
    };
    let err = scan(&dev, &x, options).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    let y = dev.upload(&[f16::ONE; 100]).unwrap();
    let options = ScanOptions {
        algorithm: Algorithm::ScanUL1 { s: 128 },
        ..Default::default()
    };
    let err = scan(&dev, &y, options).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidArgument {
                name: "options.algorithm",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn veccumsum_edge_lengths() {
    for s in [16u32, 32, 64] {
        for n in edge_lengths(s as usize) {
            for exclusive in [false, true] {
                check_f16_with(
                    &f16_data(n, n as u64 + 5),
                    Algorithm::VecCumSum { s },
                    s,
                    exclusive,
                );
                check_i8_with(
                    &i8_data(n, n as u64 * 7 + 3),
                    Algorithm::VecCumSum { s },
                    exclusive,
                );
            }
        }
    }
}

#[test]
fn adversarial_values() {
    let n = 3 * 128 * 128 + 77;
    let cases: Vec<(&str, Vec<f16>)> = vec![
        ("all equal large", vec![f16::from_f32(1000.0); n]),
        ("all zero", vec![f16::ZERO; n]),
        (
            "max magnitude alternating",
            (0..n)
                .map(|i| if i % 2 == 0 { f16::MAX } else { f16::MIN })
                .collect(),
        ),
        ("subnormals", vec![f16::from_bits(0x0001); n]),
        ("negative zero", vec![f16::NEG_ZERO; n]),
        (
            "ramp",
            (0..n).map(|i| f16::from_f32((i % 2048) as f32)).collect(),
        ),
    ];
    for (name, xs) in cases {
        for s in [16, 128] {
            eprintln!("{name} s={s}");
            check_f16(&xs, s, false);
        }
    }
    check_i8(&vec![127i8; n], 64, false);
    check_i8(&vec![-128i8; n], 64, true);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn random_lengths_f16(n in 0usize..(1 << 20), seed: u64, s_idx in 0usize..4, exclusive: bool) {
        let s = [16u32, 32, 64, 128][s_idx];
        // Small s is slow on the simulator for huge n; the edges above cover it.
        let n = if s < 64 { n >> 4 } else { n };
        check_f16(&f16_data(n, seed), s, exclusive);
    }

    #[test]
    fn random_lengths_i8(n in 0usize..(1 << 20), seed: u64, s_idx in 0usize..4, exclusive: bool) {
        let s = [16u32, 32, 64, 128][s_idx];
        let n = if s < 64 { n >> 4 } else { n };
        check_i8(&i8_data(n, seed), s, exclusive);
    }
}

#[test]
fn auto_matches_reference() {
    let xs = f16_data(50_000, 9);
    let dev = device();
    let x = dev.upload(&xs).unwrap();
    let y = scan(&dev, &x, ScanOptions::default()).unwrap();
    assert!(y.totals.is_none());
    assert_eq!(y.values.len(), xs.len());
    check_f16(&xs, 128, false);
    // Auto over the policy table's lengths (its choice changes with n).
    for log2 in [8, 11, 13, 15, 17, 19] {
        let n = (1usize << log2) + 3;
        let depth = Algorithm::auto_for::<f16>(1, n).error_depth().unwrap();
        check_f16_with(&f16_data(n, 3), Algorithm::Auto, depth, true);
        check_i8_with(&i8_data(n, 4), Algorithm::Auto, false);
    }
}

#[test]
fn empty_input_gives_empty_output_and_zero_total() {
    let dev = device();
    let x = dev.upload::<i8>(&[]).unwrap();
    let out = scan(
        &dev,
        &x,
        ScanOptions {
            want_total: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(out.values.is_empty());
    assert_eq!(out.total(), Some(0));
}

#[test]
fn invalid_tile_edge_names_the_argument() {
    let dev = device();
    let x = dev.upload(&[f16::ONE; 10]).unwrap();
    let bad = [0, 8, 48, 256].into_iter().flat_map(|s| {
        [
            Algorithm::ScanU { s },
            Algorithm::McScan { s },
            Algorithm::ReduceThenScan { s },
        ]
    });
    // VecCumSum has no s = 128 (its transpose table would not fit UB).
    for algorithm in bad.chain([Algorithm::VecCumSum { s: 128 }]) {
        let options = ScanOptions {
            algorithm,
            ..Default::default()
        };
        let err = scan(&dev, &x, options).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidArgument {
                    name: "options.algorithm",
                    ..
                }
            ),
            "{err}"
        );
    }
}

#[test]
fn i8_scan_that_could_overflow_is_refused() {
    let dev = device();
    let n = ascend_scan::MAX_I8_SCAN_LEN + 1;
    let x = dev.alloc_zeroed::<i8>(n).unwrap();
    let err = scan(&dev, &x, ScanOptions::default()).unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument { name: "x", .. }),
        "{err}"
    );
}

#[test]
fn buffer_of_another_device_is_refused() {
    let a = device();
    let b = Device::simulated(ascend_scan::Soc::Ascend910B2).unwrap();
    let x = b.upload(&[f16::ONE; 4]).unwrap();
    let err = scan(&a, &x, ScanOptions::default()).unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument { name: "x", .. }),
        "{err}"
    );
}

#[test]
fn scan_records_its_gm_traffic() {
    let dev = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
    let n = 128 * 128 * 2;
    let x = dev.upload(&vec![f16::ONE; n]).unwrap();
    dev.take_reports();
    let options = ScanOptions {
        algorithm: Algorithm::ScanU { s: 128 },
        ..Default::default()
    };
    scan(&dev, &x, options).unwrap();
    let reports = dev.take_reports();
    // One kernel and no other stream task: the constant matrices were
    // uploaded once, by the first call, and are a kernel argument.
    let kernels: Vec<_> = reports.iter().filter(|r| r.task == Task::Kernel).collect();
    assert_eq!(kernels.len(), 1);
    let tasks: Vec<_> = reports.iter().map(|r| r.task).collect();
    assert_eq!(tasks, [Task::Kernel]);
    let r = kernels[0];
    assert_eq!(r.kernel, "scanu_f16_s128");
    assert_eq!(r.status, 0);
    // Reads x once and each tile of C once; writes C and y once.
    assert!(
        r.gm_read_bytes >= (n * 2 + n * 4) as u64,
        "{}",
        r.gm_read_bytes
    );
    assert!(
        r.gm_write_bytes >= (n * 4 * 2) as u64,
        "{}",
        r.gm_write_bytes
    );
    assert!(r.traces.iter().any(|t| t.is_cube) && r.traces.iter().any(|t| !t.is_cube));
}

/// The cost model sees device addresses, not where the host heap put a
/// buffer: the same allocations on two fresh devices give the same GM
/// addresses in the traces, so the L2 model (and a modeled time) is the same
/// from run to run. A multi-core scan, whose cube and vector cores also meet
/// in group rounds, is modeled the same on both.
#[test]
fn traces_and_modeled_times_do_not_depend_on_host_addresses() {
    let n = 1 << 18;
    let options = ScanOptions {
        algorithm: Algorithm::McScan { s: 64 },
        ..Default::default()
    };
    let run = || {
        let dev = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
        let x = dev.upload(&vec![f16::ONE; n]).unwrap();
        scan(&dev, &x, options).unwrap();
        let reports = dev.take_reports();
        let addrs: Vec<Vec<u64>> = reports
            .iter()
            .flat_map(|r| &r.traces)
            .map(|t| t.events.iter().map(|e| e.gm_addr).collect())
            .collect();
        let params = CostParams::from_profile(dev.profile());
        let time = model_launches(&reports, &params, n as u64)
            .unwrap()
            .unwrap()
            .time_s;
        (dev, addrs, time)
    };
    // Both devices (and their buffers) live at once: their host addresses differ.
    let (_a, addrs_a, time_a) = run();
    let (_b, addrs_b, time_b) = run();
    assert!(addrs_a.iter().flatten().any(|&a| a != 0));
    assert!(addrs_a == addrs_b, "the traces' GM addresses differ");
    assert_eq!(time_a, time_b);
}

#[test]
fn allocation_past_hbm_is_a_runtime_error() {
    let dev = device();
    let err = dev.alloc_zeroed::<u8>(33 << 30).unwrap_err();
    assert!(
        matches!(err, ascend_scan::Error::Runtime { code: 207001, .. }),
        "{err}"
    );
}

/// VectorScan of one row around its core splits: one core up to two tiles
/// (8192 elements); then at least a tile per core, the tiles held in UB
/// across SyncAll while no core gets more than four (sums of 1- and 2-byte
/// inputs: up to 160 tiles on 40 vector cores); then the reduce phase and
/// the tiles read again.
#[test]
fn vector_scan_around_held_tiles() {
    let a = Algorithm::VectorScan;
    let depth = a.error_depth().unwrap();
    for n in [
        8191,
        8192,
        8193,
        12_289,
        40 * 4096 - 1,
        40 * 4096 + 1,
        80 * 4096 + 1,
        160 * 4096,
        160 * 4096 + 1,
    ] {
        for exclusive in [false, true] {
            check_float_with(&testkit::data::f16_data(n, n as u64), a, depth, exclusive);
            check_float_with(
                &testkit::data::bf16_data(n, n as u64 + 1),
                a,
                depth,
                exclusive,
            );
            check_i8_with(&testkit::data::i8_data(n, n as u64 + 2), a, exclusive);
        }
    }
}

/// bf16 -> f32 through every cube algorithm (and the vector baseline): the
/// same f32 accumulation bound as f16.
#[test]
fn bf16_edge_lengths_every_algorithm() {
    for algorithm in [
        Algorithm::ScanU { s: 128 },
        Algorithm::ScanUL1 { s: 64 },
        Algorithm::McScan { s: 64 },
        Algorithm::ReduceThenScan { s: 128 },
        Algorithm::VecCumSum { s: 32 },
        Algorithm::VectorScan,
    ] {
        let s = algorithm.tile_edge().unwrap_or(128) as usize;
        let mut lengths = edge_lengths(s);
        lengths.push(41 * s * s + 3);
        for n in lengths {
            for exclusive in [false, true] {
                let xs = testkit::data::bf16_data(n, n as u64 + 17);
                check_float_with(&xs, algorithm, algorithm.error_depth().unwrap(), exclusive);
            }
        }
    }
}
