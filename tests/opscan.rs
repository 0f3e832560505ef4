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
