//! Max and min scans (OPSCAN) through the safe API against an exact CPU
//! reference: f16, bf16 -> f32 and i8 -> i32 convert exactly (f32 and i32
//! stay) and max/min never round, so every result must be equal. NaN follows `torch.cummax` /
//! `torch.cummin`: every result from a row's first NaN on is NaN. Every
//! inclusive case also runs `cummax` / `cummin` and checks the positions
//! against PyTorch's CPU rule.
use ascend_scan::{
    cum_extreme_on, cum_extreme_workspace_bytes, cummax, cummin, scan, Algorithm, Batch, Device,
    Error, Extreme, ScanInput, ScanOp, ScanOptions, Workspace,
};
use half::{bf16, f16};
use proptest::prelude::*;
use testkit::check::cum_positions;
use testkit::device;

/// Accumulator values: the identities and the NaN test.
trait Wide: Copy + PartialOrd + std::fmt::Debug + Into<f64> {
    fn identity(op: ScanOp) -> Self;
    fn nan(self) -> bool;
}

impl Wide for f32 {
    fn identity(op: ScanOp) -> f32 {
        if op == ScanOp::Max {
            f32::NEG_INFINITY
        } else {
            f32::INFINITY
        }
    }
    fn nan(self) -> bool {
        self.is_nan()
    }
}

impl Wide for i32 {
    fn identity(op: ScanOp) -> i32 {
        if op == ScanOp::Max {
            i32::MIN
        } else {
            i32::MAX
        }
    }
    fn nan(self) -> bool {
        false
    }
}

/// Inputs with their exact accumulator value.
trait Input: ScanInput<Acc: Wide> {
    fn wide(self) -> Self::Acc;
}

impl Input for f16 {
    fn wide(self) -> f32 {
        self.to_f32()
    }
}

impl Input for bf16 {
    fn wide(self) -> f32 {
        self.to_f32()
    }
}

impl Input for f32 {
    fn wide(self) -> f32 {
        self
    }
}

impl Input for i8 {
    fn wide(self) -> i32 {
        i32::from(self)
    }
}

impl Input for i32 {
    fn wide(self) -> i32 {
        self
    }
}

/// Sequential reference (`torch.cummax`/`cummin`): values (row-major) and
/// one total per row; a NaN sticks from its position on, infinities are
/// ordinary values.
fn reference<T: Input>(
    xs: &[T],
    rows: usize,
    op: ScanOp,
    exclusive: bool,
) -> (Vec<T::Acc>, Vec<T::Acc>) {
    let len = xs.len().checked_div(rows).unwrap_or(0);
    let mut values = Vec::with_capacity(xs.len());
    let mut totals = Vec::with_capacity(rows);
    for r in 0..rows {
        let mut acc = <T::Acc as Wide>::identity(op);
        for &x in &xs[r * len..(r + 1) * len] {
            let before = acc;
            let v = x.wide();
            let take = Wide::nan(v) || if op == ScanOp::Max { v > acc } else { v < acc };
            if take {
                acc = v;
            }
            values.push(if exclusive { before } else { acc });
        }
        totals.push(acc);
    }
    (values, totals)
}

/// PyTorch's positions of cummax/cummin (`testkit::check::cum_positions`),
/// row by row.
fn reference_positions<T: Input>(xs: &[T], rows: usize, op: ScanOp) -> Vec<i32> {
    let len = xs.len().checked_div(rows).unwrap_or(0);
    xs.chunks(len.max(1))
        .take(rows)
        .flat_map(|row| cum_positions(row.iter().map(|x| x.wide().into()), op == ScanOp::Max))
        .collect()
}

/// Runs cummax or cummin of `rows` rows of `xs` (through the stream API,
/// which `cummax` wraps) and compares values and positions.
fn check_positions<T: Input>(xs: &[T], rows: usize, op: ScanOp) {
    let dev = device();
    let x = dev.upload(xs).unwrap();
    let batch = Batch::rows(&x, rows).unwrap();
    let out = if op == ScanOp::Max {
        cummax(&dev, batch)
    } else {
        cummin(&dev, batch)
    }
    .unwrap();
    let (values, indices) = (
        out.values.download().unwrap(),
        out.indices.download().unwrap(),
    );
    let want_values = reference(xs, rows, op, false).0;
    let want = reference_positions(xs, rows, op);
    let len = xs.len() / rows;
    let same = |a: T::Acc, b: T::Acc| a == b || (Wide::nan(a) && Wide::nan(b));
    if let Some(i) =
        (0..xs.len()).find(|&i| indices[i] != want[i] || !same(values[i], want_values[i]))
    {
        panic!(
            "cum{op:?} rows={rows} len={len}: first mismatch at row {} col {}: got ({:?}, {}), want ({:?}, {})",
            i / len,
            i % len,
            values[i],
            indices[i],
            want_values[i],
            want[i]
        );
    }
}

/// Runs the scan of `rows` rows of `xs` and compares values and totals
/// (and, inclusive, the positions of cummax / cummin).
fn check<T: Input>(xs: &[T], rows: usize, op: ScanOp, exclusive: bool) {
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
    let same = |a: T::Acc, b: T::Acc| a == b || (Wide::nan(a) && Wide::nan(b));
    if let Some(i) = (0..y.len()).find(|&i| !same(y[i], want[i])) {
        panic!(
            "{op:?} exclusive={exclusive} rows={rows} len={len}: first mismatch at row {} col {}: got {:?}, want {:?}",
            i / len,
            i % len,
            y[i],
            want[i]
        );
    }
    let totals = out.totals.expect("totals asked for");
    assert_eq!(totals.len(), want_totals.len());
    if let Some(r) = (0..rows).find(|&r| !same(totals[r], want_totals[r])) {
        panic!(
            "{op:?} exclusive={exclusive} rows={rows} len={len}: total of row {r}: got {:?}, want {:?}",
            totals[r], want_totals[r]
        );
    }
    if !exclusive {
        check_positions(xs, rows, op);
    }
}

fn all_cases<T: Input>(xs: &[T], rows: usize) {
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

fn random_bf16(n: usize, seed: u64) -> Vec<bf16> {
    pseudo_random(n, seed)
        .into_iter()
        .map(|v| bf16::from_bits(((v as u16) % 0x7f80) | ((v >> 20) as u16 & 0x8000)))
        .collect()
}

/// Random finite f32 with many ties (a narrow band), some extremes and
/// subnormals.
fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    pseudo_random(n, seed)
        .into_iter()
        .map(|v| match v % 13 {
            0 => f32::MAX,
            1 => -f32::MAX,
            2 => f32::from_bits((v >> 8) as u32 & 0x007f_ffff),
            3 => f32::from_bits(((v >> 16) as u32 % 0x7f80_0000) | (v as u32 & 0x8000_0000)),
            _ => ((v >> 40) % 500) as f32 / 4.0 - 60.0,
        })
        .collect()
}

/// Random i32 in a narrow band (ties) with the extremes mixed in.
fn random_i32(n: usize, seed: u64) -> Vec<i32> {
    pseudo_random(n, seed)
        .into_iter()
        .map(|v| match v % 11 {
            0 => i32::MIN,
            1 => i32::MAX,
            2 => (v >> 8) as i32,
            _ => (v >> 40) as i32 % 1000,
        })
        .collect()
}

#[test]
fn one_dimensional_edge_lengths() {
    for n in [0usize, 1, 31, 32, 33, 63, 64, 65, 4095, 4096, 4097] {
        all_cases(&random_f16(n, n as u64), 1);
        all_cases(&random_i8(n, n as u64 + 7), 1);
        all_cases(&random_i32(n, n as u64 + 9), 1);
        all_cases(&random_bf16(n, n as u64 + 11), 1);
        all_cases(&random_f32(n, n as u64 + 13), 1);
    }
}

#[test]
fn multi_core_lengths() {
    // 40 vector cores on the 910B4: ranges of ceil(n / 40) rounded to 64.
    for n in [40 * 64 - 1, 40 * 4096 + 1, 64 * 4096 + 4095, (1 << 20) + 3] {
        all_cases(&random_f16(n, n as u64), 1);
        all_cases(&random_i8(n, n as u64 + 1), 1);
        all_cases(&random_i32(n, n as u64 + 2), 1);
        all_cases(&random_f32(n, n as u64 + 3), 1);
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
        all_cases(&random_i32(n, (rows * 41 + len) as u64), rows);
        all_cases(&random_bf16(n, (rows * 43 + len) as u64), rows);
        all_cases(&random_f32(n, (rows * 47 + len) as u64), rows);
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

/// `xs` with a NaN (alternating sign and payload) at each of `at`.
fn with_nans(mut xs: Vec<f16>, at: &[usize]) -> Vec<f16> {
    for (k, &i) in at.iter().enumerate() {
        xs[i] =
            f16::from_bits((0x7c01 + (k as u16 % 3) * 0x100) | if k % 2 == 1 { 0x8000 } else { 0 });
    }
    xs
}

/// `xs` with a NaN at each of `at`: quiet, signalling (only the lowest
/// mantissa bit: a 16-bit look at the high half would miss it), negative.
fn with_nans_f32(mut xs: Vec<f32>, at: &[usize]) -> Vec<f32> {
    for (k, &i) in at.iter().enumerate() {
        xs[i] = f32::from_bits([0x7fc0_0000, 0x7f80_0001, 0xffc0_0123][k % 3]);
    }
    xs
}

/// `xs` with a bf16 NaN at each of `at`.
fn with_nans_bf16(mut xs: Vec<bf16>, at: &[usize]) -> Vec<bf16> {
    for (k, &i) in at.iter().enumerate() {
        xs[i] = bf16::from_bits([0x7fc0, 0x7f81, 0xffff][k % 3]);
    }
    xs
}

/// The NaN cases of one shape in f16, bf16 and f32.
fn check_nans(n: usize, rows: usize, at: &[usize], seed: u64) {
    let xs = with_nans(random_f16(n, seed), at);
    let xb = with_nans_bf16(random_bf16(n, seed + 1), at);
    let xf = with_nans_f32(random_f32(n, seed + 2), at);
    for op in [ScanOp::Max, ScanOp::Min] {
        for exclusive in [false, true] {
            check(&xs, rows, op, exclusive);
            check(&xb, rows, op, exclusive);
            check(&xf, rows, op, exclusive);
        }
    }
}

#[test]
fn nan_propagates_in_one_row() {
    // 300_000 elements: 40 cores of 7680 (tiles of 4096 from each core's
    // start), held in UB across SyncAll, carries across cores; 2^20 + 3: 40
    // cores of 26368, phase 1 and the tiles read again.
    let core = 7680;
    let wide = 26_368;
    for (n, at) in [
        ((1 << 20) + 3, vec![wide - 1, 7 * wide + 4096, 39 * wide]),
        ((1 << 20) + 3, vec![(1 << 20) + 2]),
        (1, vec![0]),
        (100, vec![0]),
        (100, vec![99]),
        (100, vec![40, 41, 70]),
        (5000, vec![4095]),
        (5000, vec![4096]),
        (5000, vec![4999]),
        (300_000, vec![0]),
        (300_000, vec![299_999]),
        (300_000, vec![4095]),
        (300_000, vec![core - 1]),
        (300_000, vec![core]),
        (300_000, vec![5 * core - 1, 9 * core + 3]),
        (
            300_000,
            vec![20 * core + 4096, 20 * core + 100, 36 * core + 7],
        ),
    ] {
        check_nans(n, 1, &at, n as u64 + at[0] as u64);
    }
}

#[test]
fn nan_propagates_in_batches() {
    for (rows, len, at) in [
        // Short rows (a tile's lanes are rows): first, last, several rows.
        (50, 7, vec![0, 6, 7 * 3 + 2, 7 * 3 + 5, 7 * 49 + 6]),
        (300, 31, vec![31 * 131, 31 * 132 - 1, 31 * 299 + 30]),
        (20, 256, vec![255, 256 * 7 + 128, 256 * 19]),
        // Long rows, 8 rows a core: tile boundaries inside a row.
        (320, 300, vec![299, 300 * 3 + 256, 300 * 4 + 255, 300 * 200]),
        // Long rows split over cores (cores start inside rows).
        (3, 100_001, vec![99_000, 100_500, 150_000, 300_002]),
        (3, 100_001, vec![100_000, 100_001]),
    ] {
        check_nans(rows * len, rows, &at, len as u64);
    }
}

#[test]
fn nan_and_infinities() {
    let n = 3 * 4096 + 77;
    let xs: Vec<f16> = (0..n)
        .map(|i| match i % 7 {
            0 => f16::INFINITY,
            1 => f16::NEG_INFINITY,
            _ => f16::from_f32((i % 101) as f32 - 50.0),
        })
        .collect();
    for at in [vec![0], vec![1], vec![5000], vec![4096, 4097, n - 1]] {
        let xs = with_nans(xs.clone(), &at);
        all_cases(&xs, 1);
        all_cases(&xs[..3 * 4097], 3);
        all_cases(&xs[..50 * 7], 50);
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

fn f32_value() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => any::<u32>().prop_map(f32::from_bits),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(-0.0f32),
        1 => Just(0.0f32),
        1 => Just(f32::from_bits(0x7f80_0001)),
        2 => (-4i8..4i8).prop_map(f32::from),
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

/// Random finite f16 with +inf and -inf at one position in `every` each.
fn random_with_infinities(n: usize, seed: u64, every: usize) -> Vec<f16> {
    random_f16(n, seed)
        .into_iter()
        .enumerate()
        .map(|(i, v)| match (seed as usize + i) % every {
            0 => f16::INFINITY,
            1 => f16::NEG_INFINITY,
            _ => v,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn f16_scans_match(len in length(), seed in any::<u64>(), max in any::<bool>(), exclusive in any::<bool>()) {
        let xs = random_with_infinities(len, seed, 97);
        let op = if max { ScanOp::Max } else { ScanOp::Min };
        check(&xs, 1, op, exclusive);
    }

    #[test]
    fn nan_at_random_positions(
        rows in 1usize..4,
        len in prop_oneof![1usize..300, 3900usize..4300, 8000usize..40_000],
        nans in proptest::collection::vec(any::<prop::sample::Index>(), 1..4),
        seed in any::<u64>(),
        max in any::<bool>(),
        exclusive in any::<bool>(),
    ) {
        let n = rows * len;
        let at: Vec<usize> = nans.iter().map(|i| i.index(n)).collect();
        let xs = with_nans(random_with_infinities(n, seed, 61), &at);
        let op = if max { ScanOp::Max } else { ScanOp::Min };
        check(&xs, rows, op, exclusive);
    }

    #[test]
    fn i8_scans_match(xs in proptest::collection::vec(any::<i8>(), 0..5000), max in any::<bool>(), exclusive in any::<bool>()) {
        let op = if max { ScanOp::Max } else { ScanOp::Min };
        check(&xs, 1, op, exclusive);
    }

    #[test]
    fn special_f32_values_match(xs in proptest::collection::vec(f32_value(), 1..3000), rows in 1usize..4, max in any::<bool>()) {
        let n = xs.len() / rows * rows;
        prop_assume!(n > 0);
        let op = if max { ScanOp::Max } else { ScanOp::Min };
        check(&xs[..n], rows, op, false);
        check(&xs[..n], rows, op, true);
    }

    #[test]
    fn i32_scans_match(xs in proptest::collection::vec(any::<i32>(), 1..5000), rows in 1usize..4, max in any::<bool>()) {
        let n = xs.len() / rows * rows;
        prop_assume!(n > 0);
        let op = if max { ScanOp::Max } else { ScanOp::Min };
        check(&xs[..n], rows, op, false);
        check(&xs[..n], rows, op, true);
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

#[test]
fn cummax_on_a_stream_reuses_its_buffers() {
    let dev = device();
    let stream = dev.create_stream().unwrap();
    let (rows, len) = (3, 70_001);
    let bytes = cum_extreme_workspace_bytes::<i32>(&dev, rows, len, Extreme::Min).unwrap();
    let mut ws = Workspace::new(&dev, bytes).unwrap();
    let mut values = dev.alloc_zeroed::<i32>(rows * len).unwrap();
    let mut indices = dev.alloc_zeroed::<i32>(rows * len).unwrap();
    for seed in [1, 2] {
        let xs = random_i32(rows * len, seed);
        let x = dev.upload(&xs).unwrap();
        for extreme in [Extreme::Min, Extreme::Max] {
            let op = extreme.op();
            let batch = Batch::rows(&x, rows).unwrap();
            cum_extreme_on(&stream, batch, extreme, &mut values, &mut indices, &mut ws).unwrap();
            stream.synchronize().unwrap();
            assert_eq!(
                values.download().unwrap(),
                reference(&xs, rows, op, false).0
            );
            assert_eq!(
                indices.download().unwrap(),
                reference_positions(&xs, rows, op)
            );
        }
    }
}

#[test]
fn cummax_bad_inputs_are_errors() {
    let dev = device();
    let stream = dev.create_stream().unwrap();
    let x = dev.upload(&[3i32, 1, 2]).unwrap();
    let bytes = cum_extreme_workspace_bytes::<i32>(&dev, 1, 3, Extreme::Max).unwrap();
    let mut ws = Workspace::new(&dev, bytes).unwrap();
    let mut values = dev.alloc_zeroed::<i32>(3).unwrap();
    let mut short = dev.alloc_zeroed::<i32>(2).unwrap();
    let mut indices = dev.alloc_zeroed::<i32>(3).unwrap();
    let err = |e: Error| match e {
        Error::InvalidArgument { name, .. } => name,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        err(
            cum_extreme_on(&stream, &x, Extreme::Max, &mut values, &mut short, &mut ws)
                .unwrap_err()
        ),
        "indices"
    );
    assert_eq!(
        err(
            cum_extreme_on(&stream, &x, Extreme::Max, &mut short, &mut indices, &mut ws)
                .unwrap_err()
        ),
        "values"
    );
    let other = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
    let far = other.upload(&[1i8, 2]).unwrap();
    assert_eq!(err(cummax(&dev, &far).unwrap_err()), "x");
    // No i32 sums (they could overflow).
    assert!(matches!(
        scan(&dev, &x, ScanOptions::default()).unwrap_err(),
        Error::Unsupported(_)
    ));
    // Empty rows: nothing to launch.
    let empty = dev.alloc_zeroed::<f16>(0).unwrap();
    let out = cummax(&dev, Batch::rows(&empty, 4).unwrap()).unwrap();
    assert!(out.values.is_empty() && out.indices.is_empty());
}
