//! softmax against an f64 reference: every shape class (one piece per row,
//! rows cut into pieces over the cores), temperatures per batch and per
//! row, PyTorch's non-finite results, the argument errors.
use ascend_scan::{
    softmax, softmax_on, softmax_workspace_bytes, Batch, Device, DeviceBuffer, Error, LogitsInput,
    Temperature, Workspace,
};
use half::{bf16, f16};
use proptest::prelude::*;
use testkit::data::words;
use testkit::device;

/// The logit types, to and from f64 for the data and the reference (also
/// of tests/it/logits.rs).
pub(crate) trait Logit: LogitsInput {
    fn of(v: f64) -> Self;
    fn f64(self) -> f64;
}
impl Logit for f16 {
    fn of(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn f64(self) -> f64 {
        self.to_f64()
    }
}
impl Logit for bf16 {
    fn of(v: f64) -> Self {
        bf16::from_f64(v)
    }
    fn f64(self) -> f64 {
        self.to_f64()
    }
}
impl Logit for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
    fn f64(self) -> f64 {
        f64::from(self)
    }
}

/// Logits spread over [-spread, spread], deterministic.
fn logits<T: Logit>(len: usize, spread: f64, seed: u64) -> Vec<T> {
    words(len, seed)
        .map(|w| T::of(((w >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * spread))
        .collect()
}

const U: f64 = 1.0 / (1u64 << 24) as f64;

/// Checks one row of probabilities `y` of logits `x` at temperature `t`
/// against the f64 softmax of x / t. The bound follows the kernel's f32
/// arithmetic (docs/algorithms.md, Softmax): the argument x s - M is off by
/// at most 3 (|x s| + |M|) u, so each exponential by that relative amount
/// plus one rounding; the sum adds its terms' error, about 70 roundings per
/// chunk of 4096 (ReduceSum), one per chunk and per piece, and a rescale per
/// chunk at most (2 |M| + 3) u each; the product by 1 / S two more.
fn check_row(x: &[f64], t: f64, y: &[f32], what: &str) {
    let z: Vec<f64> = x.iter().map(|v| v / t).collect();
    if z.iter().any(|v| v.is_nan() || *v == f64::INFINITY)
        || z.iter().all(|v| *v == f64::NEG_INFINITY)
    {
        assert!(
            y.iter().all(|v| v.is_nan()),
            "{what}: a NaN row expected, got {:?}",
            &y[..y.len().min(8)]
        );
        return;
    }
    let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = z.iter().map(|v| (v - m).exp()).collect();
    let sum: f64 = e.iter().sum();
    let big = z
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |a, v| a.max(v.abs()));
    let chunks = (x.len() as f64 / 4096.0).ceil();
    let rel = U * ((6.0 + 2.0 * chunks) * (big + m.abs()) + 200.0 + 4.0 * chunks);
    for (i, (&got, want)) in y.iter().zip(e.iter().map(|v| v / sum)).enumerate() {
        let err = (f64::from(got) - want).abs();
        assert!(
            err <= rel * want + 2f64.powi(-126),
            "{what}: y[{i}] = {got}, want {want} (x = {}, relative error {:e}, bound {rel:e})",
            x[i],
            err / want
        );
    }
}

fn check_all<T: Logit>(x: &[T], rows: usize, temps: &[f64], y: &[f32], what: &str) {
    let n = x.len() / rows;
    assert_eq!(y.len(), x.len(), "{what}");
    for r in 0..rows {
        let row: Vec<f64> = x[r * n..(r + 1) * n].iter().map(|v| v.f64()).collect();
        check_row(
            &row,
            temps[r % temps.len()],
            &y[r * n..(r + 1) * n],
            &format!("{what} row {r}"),
        );
    }
}

/// The softmax of `rows` rows of `x` (uploaded as `buf`) at temperature
/// `t`, checked row by row against the reference (the kernel divides by
/// multiplying with the f32 reciprocal of t).
fn softmax_checked<T: Logit>(
    dev: &Device,
    x: &[T],
    buf: &DeviceBuffer<T>,
    rows: usize,
    t: f32,
) -> Vec<f32> {
    let y = softmax(dev, Batch::rows(buf, rows).unwrap(), Temperature::All(t))
        .unwrap()
        .download()
        .unwrap();
    let n = x.len() / rows;
    check_all(
        x,
        rows,
        &[f64::from(1.0 / t).recip()],
        &y,
        &format!("{rows}x{n} T={t}"),
    );
    y
}

fn shapes_follow_the_reference<T: Logit>() {
    let dev = device();
    let shapes = [
        (1, 1),
        (1, 7),
        (3, 100),
        (1, 4095),
        (1, 4096),
        (1, 4097),
        (5, 5000),
        (40, 1000),
        (96, 3000),
        (2, 40 * 4096 + 3),
        (1, 129280),
    ];
    for (s, &(rows, n)) in shapes.iter().enumerate() {
        for (k, t) in [1.0f32, 0.7, 2.5].into_iter().enumerate() {
            let x = logits::<T>(rows * n, 12.0, (s * 7 + k) as u64 + 1);
            let buf = dev.upload(&x).unwrap();
            softmax_checked(&dev, &x, &buf, rows, t);
        }
    }
}
testkit::per_dtype!(shapes_follow_the_reference: f16, bf16, f32);

/// -inf logits give 0; NaN, +inf or an all -inf row give a NaN row, also
/// when the -inf fill the first chunks or pieces and the NaN hides in one
/// of them.
fn non_finite_logits_as_pytorch<T: Logit>() {
    let dev = device();
    let inf = f64::INFINITY;
    for (rows, n) in [(6, 300), (6, 10000), (6, 200_003)] {
        let mut x = logits::<T>(rows * n, 8.0, n as u64);
        let row = |r: usize| r * n..(r + 1) * n;
        // Row 0: every third logit masked.
        for i in row(0).step_by(3) {
            x[i] = T::of(-inf);
        }
        // Row 1: nothing but -inf.
        for i in row(1) {
            x[i] = T::of(-inf);
        }
        // Row 2: -inf over the first 60%, one NaN among them.
        for i in row(2).take(n * 3 / 5) {
            x[i] = T::of(-inf);
        }
        x[2 * n + n / 3] = T::of(f64::NAN);
        // Row 3: one +inf at the end.
        x[4 * n - 1] = T::of(inf);
        // Row 4: -inf over the first 60%, finite after.
        for i in row(4).take(n * 3 / 5) {
            x[i] = T::of(-inf);
        }
        // Row 5: a NaN in the last entry.
        x[6 * n - 1] = T::of(f64::NAN);
        let buf = dev.upload(&x).unwrap();
        for t in [1.0f32, 0.5] {
            let y = softmax_checked(&dev, &x, &buf, rows, t);
            for i in row(0).step_by(3).chain(row(4).take(n * 3 / 5)) {
                assert_eq!(y[i], 0.0, "{rows}x{n}: masked logit {i}");
            }
            for r in [1, 2, 3, 5] {
                assert!(
                    y[row(r)].iter().all(|v| v.is_nan()),
                    "{rows}x{n}: row {r} not NaN"
                );
            }
        }
    }
}
testkit::per_dtype!(non_finite_logits_as_pytorch: f16, bf16, f32);

#[test]
fn temperatures_per_row() {
    let dev = device();
    for (rows, n) in [(7, 3000), (2, 150_000), (50, 64)] {
        let x = logits::<f32>(rows * n, 20.0, rows as u64);
        let temps: Vec<f32> = (0..rows).map(|r| 0.25 + r as f32 * 0.37).collect();
        let buf = dev.upload(&x).unwrap();
        let y = softmax(
            &dev,
            Batch::rows(&buf, rows).unwrap(),
            Temperature::PerRow(&temps),
        )
        .unwrap()
        .download()
        .unwrap();
        // The kernel divides by multiplying with the f32 reciprocal.
        let t64: Vec<f64> = temps.iter().map(|t| f64::from(1.0 / t).recip()).collect();
        check_all(&x, rows, &t64, &y, &format!("{rows}x{n} per row"));
        // On the device, a bad temperature makes its row NaN, only its row.
        let mut bad = temps.clone();
        bad[1] = 0.0;
        bad[rows - 1] = f32::NAN;
        let bad_dev = dev.upload(&bad).unwrap();
        let y = softmax(
            &dev,
            Batch::rows(&buf, rows).unwrap(),
            Temperature::OnDevice(&bad_dev),
        )
        .unwrap()
        .download()
        .unwrap();
        for r in 0..rows {
            let got = &y[r * n..(r + 1) * n];
            if r == 1 || r == rows - 1 {
                assert!(got.iter().all(|v| v.is_nan()), "row {r} of bad temperature");
            } else {
                let row: Vec<f64> = x[r * n..(r + 1) * n]
                    .iter()
                    .map(|&v| f64::from(v))
                    .collect();
                check_row(&row, t64[r], got, &format!("{rows}x{n} device row {r}"));
            }
        }
    }
}

#[test]
fn stream_form_reuses_its_workspace_and_matches() {
    let dev = device();
    let stream = dev.create_stream().unwrap();
    let (rows, n) = (3, 70_000);
    let bytes = softmax_workspace_bytes::<bf16>(&dev, rows, n).unwrap();
    let mut ws = Workspace::new(&dev, bytes).unwrap();
    let mut out = dev.alloc::<f32>(rows * n).unwrap();
    for seed in 1..3 {
        let x = logits::<bf16>(rows * n, 30.0, seed);
        let buf = dev.upload(&x).unwrap();
        softmax_on(
            &stream,
            Batch::rows(&buf, rows).unwrap(),
            Temperature::All(0.8),
            &mut out,
            &mut ws,
        )
        .unwrap();
        stream.synchronize().unwrap();
        let want = softmax(
            &dev,
            Batch::rows(&buf, rows).unwrap(),
            Temperature::All(0.8),
        )
        .unwrap();
        assert_eq!(
            out.download()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            want.download()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            "seed {seed}"
        );
    }
}

/// Asserts that `e` is an invalid-argument error naming `name` (also of
/// tests/it/logits.rs).
pub(crate) fn named<T: std::fmt::Debug>(e: Result<T, Error>, name: &str) {
    match e {
        Err(Error::InvalidArgument { name: got, .. }) if got == name => {}
        other => panic!("expected an error naming `{name}`, got {other:?}"),
    }
}

#[test]
fn errors_name_the_argument() {
    let dev = device();
    let x = dev.upload(&logits::<f16>(40, 3.0, 9)).unwrap();
    let b = || Batch::rows(&x, 4).unwrap();
    for t in [0.0, -1.0, f32::NAN, f32::INFINITY, -0.0] {
        named(softmax(&dev, b(), Temperature::All(t)), "temperature");
    }
    named(
        softmax(&dev, b(), Temperature::PerRow(&[1.0; 3])),
        "temperature",
    );
    named(
        softmax(&dev, b(), Temperature::PerRow(&[1.0, 2.0, f32::NAN, 1.0])),
        "temperature",
    );
    let short = dev.upload(&[1.0f32; 5]).unwrap();
    named(
        softmax(&dev, b(), Temperature::OnDevice(&short)),
        "temperature",
    );
    let stream = dev.create_stream().unwrap();
    let mut ws =
        Workspace::new(&dev, softmax_workspace_bytes::<f16>(&dev, 4, 10).unwrap()).unwrap();
    let mut out = dev.alloc::<f32>(40).unwrap();
    named(
        softmax_on(
            &stream,
            b(),
            Temperature::PerRow(&[1.0; 4]),
            &mut out,
            &mut ws,
        ),
        "temperature",
    );
    let mut wrong = dev.alloc::<f32>(39).unwrap();
    named(
        softmax_on(&stream, b(), Temperature::All(1.0), &mut wrong, &mut ws),
        "probs",
    );
    let other = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
    named(softmax(&other, b(), Temperature::All(1.0)), "logits");
    // Rows without entries: an empty result, no launch.
    let empty = dev.upload::<f32>(&[]).unwrap();
    let y = softmax(&dev, Batch::rows(&empty, 3).unwrap(), Temperature::All(1.0)).unwrap();
    assert!(y.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Random shapes, temperatures and masked entries.
    #[test]
    fn random_rows_follow_the_reference(
        rows in 1usize..9,
        n in 1usize..20000,
        t in 0.05f32..10.0,
        spread in 0.5f64..60.0,
        masked in 0usize..4,
        seed in any::<u64>(),
    ) {
        let dev = device();
        let mut x = logits::<f32>(rows * n, spread, seed);
        for (i, w) in words(rows * n, seed ^ 1).enumerate() {
            if (w % 8) < masked as u64 {
                x[i] = f32::NEG_INFINITY;
            }
        }
        let buf = dev.upload(&x).unwrap();
        softmax_checked(&dev, &x, &buf, rows, t);
    }
}
