//! Max and min scans (OPSCAN) through the safe API against an exact CPU
//! reference: f16 -> f32 and i8 -> i32 convert exactly and max/min never
//! round, so every result must be equal.
use ascend_scan::{scan, Algorithm, Batch, Device, Error, ScanInput, ScanOp, ScanOptions};
use half::f16;
use proptest::prelude::*;

fn device() -> Device {
    Device::default_device().expect("simulated device")
}

/// Inputs with their exact accumulator value and the identities.
trait Input: ScanInput {
    fn wide(self) -> Self::Acc;
    fn identity(op: ScanOp) -> Self::Acc;
}

impl Input for f16 {
    fn wide(self) -> f32 {
        self.to_f32()
    }
    fn identity(op: ScanOp) -> f32 {
        if op == ScanOp::Max {
            f32::NEG_INFINITY
        } else {
            f32::INFINITY
        }
    }
}

impl Input for i8 {
    fn wide(self) -> i32 {
        i32::from(self)
    }
    fn identity(op: ScanOp) -> i32 {
        if op == ScanOp::Max {
            i32::MIN
        } else {
            i32::MAX
        }
    }
}

/// Sequential reference: values (row-major) and one total per row.
fn reference<T: Input>(
    xs: &[T],
    rows: usize,
    op: ScanOp,
    exclusive: bool,
) -> (Vec<T::Acc>, Vec<T::Acc>)
where
    T::Acc: PartialOrd,
{
    let len = xs.len().checked_div(rows).unwrap_or(0);
    let mut values = Vec::with_capacity(xs.len());
    let mut totals = Vec::with_capacity(rows);
    for r in 0..rows {
        let mut acc = T::identity(op);
        for &x in &xs[r * len..(r + 1) * len] {
            let before = acc;
            let v = x.wide();
            let take = if op == ScanOp::Max { v > acc } else { v < acc };
            if take {
                acc = v;
            }
            values.push(if exclusive { before } else { acc });
        }
        totals.push(acc);
    }
    (values, totals)
}

/// Runs the scan of `rows` rows of `xs` and compares values and totals.
fn check<T: Input>(xs: &[T], rows: usize, op: ScanOp, exclusive: bool)
where
    T::Acc: PartialOrd + std::fmt::Debug,
{
    let dev = device();
    let x = dev.upload(xs).unwrap();
    let batch = Batch::rows(&x, rows).unwrap();
    let out = scan(
        &dev,
        batch,
        ScanOptions {
            exclusive,
            want_total: true,
            op,
            ..Default::default()
        },
    )
    .unwrap();
    let y = out.values.download().unwrap();
    let (want, want_totals) = reference(xs, rows, op, exclusive);
    assert_eq!(y.len(), want.len());
    let len = xs.len() / rows;
    if let Some(i) = (0..y.len()).find(|&i| y[i] != want[i]) {
        panic!(
            "{op:?} exclusive={exclusive} rows={rows} len={len}: first mismatch at row {} col {}: got {:?}, want {:?}",
            i / len,
            i % len,
            y[i],
            want[i]
        );
    }
    assert_eq!(
        out.totals.as_deref(),
        Some(&want_totals[..]),
        "{op:?} totals rows={rows} len={len}"
    );
}

fn all_cases<T: Input>(xs: &[T], rows: usize)
where
    T::Acc: PartialOrd + std::fmt::Debug,
{
    for op in [ScanOp::Max, ScanOp::Min] {
        for exclusive in [false, true] {
            check(xs, rows, op, exclusive);
        }
    }
}

fn pseudo_random(n: usize, seed: u64) -> Vec<u64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        })
        .collect()
}

fn random_f16(n: usize, seed: u64) -> Vec<f16> {
    pseudo_random(n, seed)
        .into_iter()
        .map(|v| f16::from_bits((v as u16) & 0x7bff | ((v >> 20) as u16 & 0x8000)))
        .collect()
}

fn random_i8(n: usize, seed: u64) -> Vec<i8> {
    pseudo_random(n, seed)
        .into_iter()
        .map(|v| v as i8)
        .collect()
}

#[test]
fn one_dimensional_edge_lengths() {
    for n in [0usize, 1, 31, 32, 33, 63, 64, 65, 4095, 4096, 4097] {
        all_cases(&random_f16(n, n as u64), 1);
        all_cases(&random_i8(n, n as u64 + 7), 1);
    }
}

#[test]
fn multi_core_lengths() {
    // 40 vector cores on the 910B4: ranges of ceil(n / 40) rounded to 64.
    for n in [40 * 64 - 1, 40 * 4096 + 1, 64 * 4096 + 4095, (1 << 20) + 3] {
        all_cases(&random_f16(n, n as u64), 1);
        all_cases(&random_i8(n, n as u64 + 1), 1);
    }
}

#[test]
fn batches_of_edge_row_lengths() {
    for (rows, len) in [
        (1, 1),
        (2, 1),
        (300, 1),
        (65535, 1),
        (65535, 3),
        (7, 2),
        (9, 3),
        (300, 31),
        (17, 33),
        (65, 64),
        (3, 65),
        (41, 100),
        (300, 127),
        (9, 129),
        (30, 256),
        // Long rows: 256 lanes x ceil(len / 256) positions (odd and even widths).
        (30, 257),
        (5, 600),
        (4, 1300),
        (3, 1700),
        (2, 2600),
        (5, 4095),
        (300, 4095),
        (3, 4097),
        (300, 4097),
        (2, 200_003),
    ] {
        let n = rows * len;
        all_cases(&random_f16(n, (rows * 31 + len) as u64), rows);
        all_cases(&random_i8(n, (rows * 37 + len) as u64), rows);
    }
}

#[test]
fn adversarial_values() {
    let n = 3 * 4096 + 77;
    let f = |v: f32| f16::from_f32(v);
    let patterns_f16: Vec<Vec<f16>> = vec![
        vec![f(1.5); n],
        (0..n).map(|i| f16::from_bits(i as u16 % 0x7c00)).collect(), // increasing
        (0..n)
            .map(|i| f16::from_bits((n - i) as u16 % 0x7c00))
            .collect(), // decreasing
        (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    f(i as f32)
                } else {
                    f(-(i as f32))
                }
            })
            .collect(),
        (0..n)
            .map(|i| match i % 5 {
                0 => f16::INFINITY,
                1 => f16::NEG_INFINITY,
                2 => f(-0.0),
                3 => f16::MIN_POSITIVE_SUBNORMAL,
                _ => f16::MAX,
            })
            .collect(),
        vec![f16::NEG_INFINITY; n],
        vec![f16::INFINITY; n],
    ];
    for xs in &patterns_f16 {
        all_cases(xs, 1);
        all_cases(&xs[..3 * 4097], 3);
        all_cases(&xs[..50 * 7], 50);
    }
    let patterns_i8: Vec<Vec<i8>> = vec![
        vec![5; n],
        vec![i8::MIN; n],
        vec![i8::MAX; n],
        (0..n).map(|i| (i % 256) as u8 as i8).collect(),
        (0..n).map(|i| (255 - i % 256) as u8 as i8).collect(),
        (0..n)
            .map(|i| if i % 2 == 0 { i8::MIN } else { i8::MAX })
            .collect(),
    ];
    for xs in &patterns_i8 {
        all_cases(xs, 1);
        all_cases(&xs[..3 * 4097], 3);
        all_cases(&xs[..50 * 7], 50);
    }
}

#[test]
fn empty_rows_give_the_identity() {
    let dev = device();
    let x = dev.alloc_zeroed::<i8>(0).unwrap();
    for (op, want) in [(ScanOp::Max, i32::MIN), (ScanOp::Min, i32::MAX)] {
        let out = scan(
            &dev,
            Batch::rows(&x, 3).unwrap(),
            ScanOptions {
                op,
                want_total: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(out.values.is_empty());
        assert_eq!(out.totals, Some(vec![want; 3]));
    }
    let x = dev.alloc_zeroed::<f16>(0).unwrap();
    let out = scan(
        &dev,
        &x,
        ScanOptions {
            op: ScanOp::Min,
            want_total: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(out.total(), Some(f32::INFINITY));
}

#[test]
fn totals_are_optional() {
    let dev = device();
    let xs = random_i8(5000, 3);
    let x = dev.upload(&xs).unwrap();
    let out = scan(
        &dev,
        &x,
        ScanOptions {
            op: ScanOp::Max,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(out.totals, None);
    assert_eq!(
        out.values.download().unwrap(),
        reference(&xs, 1, ScanOp::Max, false).0
    );
}

#[test]
fn nan_is_refused() {
    let dev = device();
    for (n, at) in [(1, 0), (100, 99), (5000, 4097), ((1 << 16) + 5, 60_000)] {
        let mut xs = random_f16(n, 9);
        xs[at] = if at % 2 == 0 { f16::NAN } else { -f16::NAN };
        let x = dev.upload(&xs).unwrap();
        for op in [ScanOp::Max, ScanOp::Min] {
            for rows in [1, n.min(2)] {
                if n % rows != 0 {
                    continue;
                }
                let err = scan(
                    &dev,
                    Batch::rows(&x, rows).unwrap(),
                    ScanOptions {
                        op,
                        ..Default::default()
                    },
                )
                .unwrap_err();
                assert!(
                    matches!(err, Error::InvalidArgument { name: "x", .. }),
                    "n={n}: {err}"
                );
            }
        }
    }
}

#[test]
fn bad_inputs_are_errors() {
    let dev = device();
    let other = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
    let x = other.upload(&[1i8, 2, 3]).unwrap();
    let options = ScanOptions {
        op: ScanOp::Max,
        ..Default::default()
    };
    assert!(matches!(
        scan(&dev, &x, options).unwrap_err(),
        Error::InvalidArgument { name: "x", .. }
    ));
    let x = dev.upload(&[1i8, 2, 3]).unwrap();
    assert!(matches!(
        scan(
            &dev,
            &x,
            ScanOptions {
                algorithm: Algorithm::ScanU { s: 128 },
                ..options
            }
        )
        .unwrap_err(),
        Error::InvalidArgument {
            name: "options.algorithm",
            ..
        }
    ));
    assert!(matches!(
        Batch::rows(&x, 2).unwrap_err(),
        Error::InvalidArgument { name: "rows", .. }
    ));
}

fn f16_value() -> impl Strategy<Value = f16> {
    prop_oneof![
        8 => any::<u16>().prop_map(|b| f16::from_bits(b & 0x7bff | (b & 0x8000))),
        1 => Just(f16::INFINITY),
        1 => Just(f16::NEG_INFINITY),
        1 => Just(f16::from_f32(-0.0)),
        1 => (-4i8..4i8).prop_map(|v| f16::from_f32(f32::from(v))),
    ]
}

fn length() -> impl Strategy<Value = usize> {
    prop_oneof![
        4 => 1usize..300,
        2 => 3900usize..4300,
        1 => 8000usize..70_000,
        1 => 70_000usize..(1 << 20),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn f16_scans_match(len in length(), seed in any::<u64>(), max in any::<bool>(), exclusive in any::<bool>()) {
        let xs: Vec<f16> = random_f16(len, seed)
            .into_iter()
            .enumerate()
            .map(|(i, v)| match (seed as usize + i) % 97 {
                0 => f16::INFINITY,
                1 => f16::NEG_INFINITY,
                _ => v,
            })
            .collect();
        let op = if max { ScanOp::Max } else { ScanOp::Min };
        check(&xs, 1, op, exclusive);
    }

    #[test]
    fn i8_scans_match(xs in proptest::collection::vec(any::<i8>(), 0..5000), max in any::<bool>(), exclusive in any::<bool>()) {
        let op = if max { ScanOp::Max } else { ScanOp::Min };
        check(&xs, 1, op, exclusive);
    }

    #[test]
    fn batches_match(rows in 1usize..300, len in prop_oneof![1usize..70, 60usize..5000], seed in any::<u64>(), max in any::<bool>(), exclusive in any::<bool>()) {
        let len = if rows * len > 300_000 { 300_000 / rows } else { len };
        let op = if max { ScanOp::Max } else { ScanOp::Min };
        check(&random_f16(rows * len, seed), rows, op, exclusive);
        check(&random_i8(rows * len, seed ^ 1), rows, op, exclusive);
    }

    #[test]
    fn special_f16_values_match(xs in proptest::collection::vec(f16_value(), 1..3000), rows in 1usize..4, max in any::<bool>()) {
        let n = xs.len() / rows * rows;
        prop_assume!(n > 0);
        let op = if max { ScanOp::Max } else { ScanOp::Min };
        check(&xs[..n], rows, op, false);
        check(&xs[..n], rows, op, true);
    }
}
