//! The fuzz harness: bytes -> shapes, options and data -> one public
//! operation on the default simulated device -> the result checked against
//! an independent CPU reference.
//!
//! Shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`, each calling
//! one family) and by `tests/it/fuzz_smoke.rs`, which runs every family on a
//! few hundred deterministic inputs and on the committed corpus. The only
//! accepted outcomes are `Ok` with a result equal to the reference (within
//! the documented bound for float sums) or the documented `Error` (the
//! argument it names, or `Unsupported` for a documented dtype gap); anything
//! else panics. Every call must also give back all the device memory it
//! allocated once its results are dropped.

use std::cmp::Ordering;

use arbitrary::Unstructured;
use ascend_scan::matrices::HostCsr;
use ascend_scan::{
    argsort, compress_with, copy, cummax, cummin, multinomial, multinomial_reference,
    multinomial_with_uniforms, reduce, sample_logits, scan, segmented_max, segmented_min,
    segmented_scan, segmented_sum, sort, sort_pairs, split_with, spmv, spmv_axpby, top_p_sample,
    topk, uniforms, Algorithm, Batch, CompressOptions, Csr, Device, DeviceBuffer, Element, Error,
    ExtremaValue, LogitsInput, LogitsSampling, RevSpec, SampleOptions, SampleWeight, ScanInput,
    ScanOp, ScanOptions, SegScanAlgorithm, SegScanOptions, SegSumAlgorithm, SegSumOptions,
    SegmentedInput, SegmentedSumInput, Segments, Soc, SortAlgorithm, SortKey, SortOptions,
    SplitOptions, SplitValue, SpmvValue, TopPOptions, TopPProb, TopkKey, TopkOptions,
};
use half::{bf16, f16};

use crate::check::{abs_finite, agree, cum_positions, first_extreme, nan_max, nan_min, same};

/// A family: one fuzz input in, one checked case run.
pub type Family = fn(&[u8]);

/// The families, by the name of their fuzz target.
pub const FAMILIES: [(&str, Family); 6] = [
    ("scan_family", scan_family),
    ("split_family", split_family),
    ("sort_family", sort_family),
    ("sampling", sampling),
    ("segmented", segmented),
    ("spmv", spmv_family),
];

/// Longest input (elements in all) a case builds: one case stays in the
/// milliseconds on the simulator.
pub const MAX_ELEMS: usize = 4096;
/// Most rows of a batch.
pub const MAX_ROWS: usize = 48;

thread_local! {
    /// One simulated device per thread: the leak check compares the device's
    /// allocated bytes before and after a case, so no other thread may
    /// allocate on it meanwhile (the smoke tests run in parallel threads).
    static DEVICE: Device = Device::simulated(Soc::default()).expect("a simulated device");
}

fn device() -> Device {
    DEVICE.with(Device::clone)
}

// ------------------------------------------------------------ input decoding

/// Decodes the fuzz input: options come from its bytes; when they run out,
/// from a generator seeded by the input, so short inputs still make large
/// cases and every input is one deterministic case.
#[derive(Debug)]
pub struct Gen<'a> {
    u: Unstructured<'a>,
    state: u64,
}

impl<'a> Gen<'a> {
    /// A decoder over `data`.
    pub fn new(data: &'a [u8]) -> Gen<'a> {
        let mut state = 0xcbf2_9ce4_8422_2325u64;
        for &b in data {
            state = (state ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        Gen {
            u: Unstructured::new(data),
            state,
        }
    }

    fn rng(&mut self) -> u64 {
        // SplitMix64.
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A choice: from the input while it lasts, then from the generator.
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        if self.u.len() >= 2 {
            let v: u16 = self.u.arbitrary().unwrap_or(0);
            // Mix with the generator so that long ranges are covered too.
            return (u64::from(v) ^ (self.rng() & !0xffff)) % n;
        }
        self.rng() % n
    }

    /// Raw bits for data: from the input while it lasts, then the generator.
    pub fn bits(&mut self) -> u64 {
        if self.u.len() >= 2 {
            let v: u16 = self.u.arbitrary().unwrap_or(0);
            return u64::from(v) | (self.rng() & !0xffff);
        }
        self.rng()
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// One of `xs`.
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    /// A length in `0..=max`: often an edge (tile, block and core sizes).
    pub fn len(&mut self, max: usize) -> usize {
        const EDGES: [usize; 22] = [
            0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023,
            1024, 4096,
        ];
        if self.chance(1, 2) {
            let e = self.pick(&EDGES);
            if e <= max {
                return e;
            }
        }
        self.below(max as u64 + 1) as usize
    }

    /// `(rows, n)` with `rows * n <= MAX_ELEMS` and `1 <= rows <= MAX_ROWS`.
    pub fn shape(&mut self) -> (usize, usize) {
        let rows = if self.chance(1, 2) {
            1
        } else {
            1 + self.len(MAX_ROWS - 1)
        };
        let n = self.len(MAX_ELEMS / rows);
        (rows, n)
    }
}

/// Element types as raw bits.
pub trait Bits: Element {
    /// The value of the low bits of `b`.
    fn from_bits(b: u64) -> Self;
    /// The bit pattern.
    fn to_bits(self) -> u64;
}

macro_rules! bits {
    ($($t:ty => |$b:ident| $from:expr, |$v:ident| $to:expr);* $(;)?) => {$(
        impl Bits for $t {
            fn from_bits($b: u64) -> Self { $from }
            fn to_bits(self) -> u64 { let $v = self; $to }
        }
    )*};
}
bits!(
    u8 => |b| b as u8, |v| u64::from(v);
    i8 => |b| b as i8, |v| u64::from(v as u8);
    u16 => |b| b as u16, |v| u64::from(v);
    i16 => |b| b as i16, |v| u64::from(v as u16);
    i32 => |b| b as i32, |v| u64::from(v as u32);
    u32 => |b| b as u32, |v| u64::from(v);
    f16 => |b| f16::from_bits(b as u16), |v| u64::from(v.to_bits());
    bf16 => |b| bf16::from_bits(b as u16), |v| u64::from(v.to_bits());
    f32 => |b| f32::from_bits(b as u32), |v| u64::from(v.to_bits());
);

/// Numbers of an element type, for the references.
pub trait Num: Bits {
    /// The value in f64 (NaN for NaN).
    fn to_f64(self) -> f64;
    /// A float type (NaN and infinities exist).
    const FLOAT: bool;
}
macro_rules! num {
    ($($t:ty => $float:expr, |$v:ident| $f:expr);* $(;)?) => {$(
        impl Num for $t {
            fn to_f64(self) -> f64 { let $v = self; $f }
            const FLOAT: bool = $float;
        }
    )*};
}
num!(
    u8 => false, |v| f64::from(v);
    i8 => false, |v| f64::from(v);
    u16 => false, |v| f64::from(v);
    i16 => false, |v| f64::from(v);
    i32 => false, |v| f64::from(v);
    u32 => false, |v| f64::from(v);
    f16 => true, |v| f64::from(v.to_f32());
    bf16 => true, |v| f64::from(v.to_f32());
    f32 => true, |v| f64::from(v);
);

/// How the values of an array are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Random,
    Equal,
    Sorted,
    Reversed,
    FewDistinct,
    Specials,
    SmallInts,
}

const SHAPES: [Shape; 7] = [
    Shape::Random,
    Shape::Equal,
    Shape::Sorted,
    Shape::Reversed,
    Shape::FewDistinct,
    Shape::Specials,
    Shape::SmallInts,
];

/// Bit patterns of special values of a 16- or 32-bit float type (zeros,
/// infinities, NaNs with payloads, extremes, subnormals, ones), or of the
/// integer extremes.
fn specials<T: Num>() -> Vec<u64> {
    match std::mem::size_of::<T>() {
        1 => vec![0, 1, 0x7f, 0x80, 0xff, 0xfe],
        2 if T::FLOAT && T::from_bits(0x7c00).to_f64().is_infinite() => vec![
            0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7c01, 0x7bff, 0xfbff, 0x0001, 0x8001,
            0x03ff, 0x3c00, 0xbc00, 0x0400,
        ],
        2 if T::FLOAT => vec![
            0, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x7f81, 0x7f7f, 0xff7f, 0x0001, 0x8001,
            0x007f, 0x3f80, 0xbf80, 0x0080,
        ],
        2 => vec![0, 1, 0x7fff, 0x8000, 0xffff, 0xfffe],
        _ if T::FLOAT => vec![
            0,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0xffc0_0001,
            0x7f80_0001,
            0x7f7f_ffff,
            0xff7f_ffff,
            1,
            0x8000_0001,
            0x3f80_0000,
            0xbf80_0000,
        ],
        _ => vec![0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff],
    }
}

/// `n` values of `T`, each passed through `fix` (which makes it valid for the
/// operation, or leaves it to be refused).
fn values<T: Num>(g: &mut Gen<'_>, n: usize, fix: impl Fn(T) -> T) -> Vec<T> {
    let shape = g.pick(&SHAPES);
    let sp = specials::<T>();
    let base = g.bits();
    let few: Vec<u64> = (0..4).map(|_| g.bits()).collect();
    let mut v: Vec<T> = (0..n)
        .map(|i| {
            let b = match shape {
                Shape::Random | Shape::Sorted | Shape::Reversed => g.bits(),
                Shape::Equal => base,
                Shape::FewDistinct => few[g.below(4) as usize],
                Shape::Specials => {
                    if g.chance(1, 2) {
                        sp[g.below(sp.len() as u64) as usize]
                    } else {
                        g.bits()
                    }
                }
                Shape::SmallInts => small_int::<T>((g.below(9) as i64) - 4 + (i % 3) as i64),
            };
            fix(T::from_bits(b))
        })
        .collect();
    if matches!(shape, Shape::Sorted | Shape::Reversed) {
        v.sort_by(|a, b| key_order(*a, *b));
        if shape == Shape::Reversed {
            v.reverse();
        }
    }
    v
}

/// The bits of the integer `k` as a `T` (an integer type, or a float type
/// holding that integer).
fn small_int<T: Num>(k: i64) -> u64 {
    match (std::mem::size_of::<T>(), T::FLOAT) {
        (2, true) if T::from_bits(0x7c00).to_f64().is_infinite() => {
            u64::from(f16::from_f32(k as f32).to_bits())
        }
        (2, true) => u64::from(bf16::from_f32(k as f32).to_bits()),
        (4, true) => u64::from((k as f32).to_bits()),
        _ => k as u64,
    }
}

/// A float type's value with its exponent limited to `|x| < 2^max_exp`
/// (NaN and infinities become finite), so f32 sums of a few thousand cannot
/// overflow.
fn finite<T: Num>(x: T, max_exp: i32) -> T {
    if !T::FLOAT {
        return x;
    }
    let v = x.to_f64();
    if v.is_finite() && v.abs() < 2f64.powi(max_exp) {
        return x;
    }
    // Keep the sign and the low mantissa bits, make the exponent small.
    let b = x.to_bits();
    T::from_bits(match std::mem::size_of::<T>() {
        2 if T::from_bits(0x7c00).to_f64().is_infinite() => (b & 0x83ff) | 0x3c00,
        2 => (b & 0x807f) | 0x3f80,
        _ => (b & 0x807f_ffff) | 0x3f80_0000,
    })
}

// ---------------------------------------------------------- outcome checking

/// What a call must give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// `Ok`, equal to the reference.
    Ok,
    /// `Error::InvalidArgument` naming this argument.
    Arg(&'static str),
    /// `Error::Unsupported` (a documented dtype or option gap).
    Unsupported,
}

/// The checked result: `Some(value)` when `Ok` was wanted and given; panics
/// on any other outcome than `want`.
pub fn outcome<T>(what: &str, want: Want, got: Result<T, Error>) -> Option<T> {
    match (want, got) {
        (Want::Ok, Ok(v)) => Some(v),
        (Want::Arg(name), Err(Error::InvalidArgument { name: got, .. })) if got == name => None,
        (Want::Unsupported, Err(Error::Unsupported(_))) => None,
        (want, Ok(_)) => panic!("{what}: wanted {want:?}, got Ok"),
        (want, Err(e)) => panic!("{what}: wanted {want:?}, got the error {e}"),
    }
}

/// Runs `case` and checks that the device holds no more memory after it
/// (every buffer it made is dropped by then).
fn leak_checked(case: impl FnOnce(&Device)) {
    let dev = device();
    let before = dev.allocated_bytes();
    case(&dev);
    // The device keeps every launch report (with its per-core traces) until
    // they are taken: drop them, or a long fuzz run grows without bound.
    drop(dev.take_reports());
    let after = dev.allocated_bytes();
    assert_eq!(
        after, before,
        "device memory leaked: {before} bytes allocated before the case, {after} after"
    );
}

fn bits_of<T: Bits>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

// ------------------------------------------------------------- scan family

/// scan (every algorithm, dtype, batch, inclusive/exclusive, sum/max/min,
/// totals), reduce and copy.
pub fn scan_family(data: &[u8]) {
    let mut g = Gen::new(data);
    leak_checked(|dev| match g.below(10) {
        0..=2 => scan_case::<f16>(dev, &mut g),
        3 => scan_case::<bf16>(dev, &mut g),
        4..=5 => scan_case::<i8>(dev, &mut g),
        6 => scan_case::<f32>(dev, &mut g),
        7 => match g.below(4) {
            0 => reduce_case::<f16>(dev, &mut g),
            1 => reduce_case::<bf16>(dev, &mut g),
            2 => reduce_case::<i8>(dev, &mut g),
            _ => reduce_case::<f32>(dev, &mut g),
        },
        _ => match g.below(6) {
            0 => copy_case::<u8>(dev, &mut g),
            1 => copy_case::<i16>(dev, &mut g),
            2 => copy_case::<f16>(dev, &mut g),
            3 => copy_case::<bf16>(dev, &mut g),
            4 => copy_case::<i32>(dev, &mut g),
            _ => copy_case::<f32>(dev, &mut g),
        },
    });
}

/// The scan accumulator as f64 (f32 or i32).
pub trait Acc: Element {
    /// The value.
    fn value(self) -> f64;
}
impl Acc for f32 {
    fn value(self) -> f64 {
        f64::from(self)
    }
}
impl Acc for i32 {
    fn value(self) -> f64 {
        f64::from(self)
    }
}

fn dtype_name<T: Element>() -> String {
    format!("{:?}", T::DTYPE)
}

fn scan_case<T>(dev: &Device, g: &mut Gen<'_>)
where
    T: ScanInput + Num,
    T::Acc: Acc,
{
    let (rows, n) = g.shape();
    let op = g.pick(&[
        ScanOp::Sum,
        ScanOp::Sum,
        ScanOp::Sum,
        ScanOp::Max,
        ScanOp::Min,
    ]);
    let s = g.pick(&[16, 32, 64, 128, 16, 32, 64, 128, 0, 8, 17, 256]);
    let algorithm = g.pick(&[
        Algorithm::Auto,
        Algorithm::ScanU { s },
        Algorithm::ScanUL1 { s },
        Algorithm::McScan { s },
        Algorithm::ReduceThenScan { s },
        Algorithm::VecCumSum { s },
        Algorithm::VectorScan,
    ]);
    let options = ScanOptions {
        exclusive: g.chance(1, 2),
        algorithm,
        want_total: g.chance(2, 3),
        op,
    };
    // Sums take infinities and NaN (they affect the outputs from their
    // position on, docs/algorithms.md "Non-finite inputs") and finite values
    // small enough that no f32 sum overflows; max and min take any value
    // (NaN propagates as in torch.cummax / torch.max).
    let xs = values::<T>(g, rows * n, |x| {
        if op != ScanOp::Sum || (T::FLOAT && !x.to_f64().is_finite()) {
            x
        } else {
            finite(x, 60)
        }
    });
    let buf = dev.upload(&xs).expect("upload");
    let batch = if rows == 1 && g.chance(1, 2) {
        Batch::from(&buf)
    } else {
        Batch::rows(&buf, rows).expect("rows divide the buffer")
    };
    let dtype = T::DTYPE;
    let want = match (op, algorithm) {
        (ScanOp::Sum, Algorithm::Auto | Algorithm::VectorScan) => Want::Ok,
        (ScanOp::Sum, a) => {
            let edges: &[u32] = match a {
                Algorithm::ScanUL1 { .. } | Algorithm::VecCumSum { .. } => &[16, 32, 64],
                _ => &[16, 32, 64, 128],
            };
            let dtypes = match a {
                Algorithm::ScanUL1 { .. } => vec![f16::DTYPE, bf16::DTYPE],
                _ => vec![f16::DTYPE, bf16::DTYPE, i8::DTYPE],
            };
            if !edges.contains(&s) {
                Want::Arg("options.algorithm")
            } else if !dtypes.contains(&dtype) {
                Want::Unsupported
            } else {
                Want::Ok
            }
        }
        // Max and min take every scan input type.
        (_, Algorithm::Auto | Algorithm::VectorScan) => Want::Ok,
        (_, _) => Want::Arg("options.algorithm"),
    };
    let what = format!(
        "scan {dtype_name} rows={rows} n={n} {options:?}",
        dtype_name = dtype_name::<T>()
    );
    let Some(out) = outcome(&what, want, scan(dev, batch, options)) else {
        return;
    };
    let ys = out.values.download().expect("download");
    assert_eq!(ys.len(), rows * n, "{what}: output length");
    let resolved = match algorithm {
        Algorithm::Auto if op == ScanOp::Sum => Algorithm::auto_for::<T>(rows, n),
        Algorithm::Auto => Algorithm::VectorScan,
        a => a,
    };
    let depth = f64::from(resolved.error_depth().expect("resolved"));
    let float = T::DTYPE != i8::DTYPE;
    if options.want_total {
        assert_eq!(
            out.totals.as_ref().map(Vec::len),
            Some(rows),
            "{what}: totals"
        );
    } else {
        assert!(out.totals.is_none(), "{what}: totals not asked for");
    }
    for r in 0..rows {
        let row = &xs[r * n..(r + 1) * n];
        let got = &ys[r * n..(r + 1) * n];
        let identity = match op {
            ScanOp::Sum => 0.0,
            ScanOp::Max if float => f64::NEG_INFINITY,
            ScanOp::Max => f64::from(i32::MIN),
            ScanOp::Min if float => f64::INFINITY,
            ScanOp::Min => f64::from(i32::MAX),
        };
        let (mut acc, mut mag) = (identity, 0f64);
        for (i, x) in row.iter().enumerate() {
            let x = x.to_f64();
            let (before, mag_before) = (acc, mag);
            acc = match op {
                ScanOp::Sum => acc + x,
                ScanOp::Max => nan_max(acc, x),
                ScanOp::Min => nan_min(acc, x),
            };
            if x.is_finite() {
                mag += x.abs();
            }
            // Exclusive: the prefix before x[i], with its own magnitude.
            let (want_v, m) = if options.exclusive {
                (before, mag_before)
            } else {
                (acc, mag)
            };
            let got_v = got[i].value();
            check_close(&what, r, i, got_v, want_v, op, float, depth, i, m);
        }
        if let Some(totals) = &out.totals {
            let got_v = totals[r].value();
            check_close(&what, r, n, got_v, acc, op, float, depth, n, mag);
        }
    }
    if op != ScanOp::Sum && !options.exclusive {
        positions_case(dev, batch, &xs, op, &ys, &what);
    }
}

/// cummax / cummin of the batch the max/min scan `ys` came from: the same
/// values, and PyTorch's CPU positions (the running value moves to x[i] when
/// x[i] is a NaN, or neither is one and x[i] >= it (max) / <= it (min)).
fn positions_case<T>(
    dev: &Device,
    batch: Batch<'_, T>,
    xs: &[T],
    op: ScanOp,
    ys: &[T::Acc],
    what: &str,
) where
    T: ScanInput + Num,
    T::Acc: Acc,
{
    let what = format!("cum{op:?} of {what}");
    let out = if op == ScanOp::Max {
        cummax(dev, batch)
    } else {
        cummin(dev, batch)
    }
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    let values = out.values.download().expect("download");
    let indices = out.indices.download().expect("download");
    let n = batch.row_len();
    for r in 0..batch.row_count() {
        let want = cum_positions(
            xs[r * n..(r + 1) * n].iter().map(|x| x.to_f64()),
            op == ScanOp::Max,
        );
        for (i, &at) in want.iter().enumerate() {
            let k = r * n + i;
            assert!(
                same(values[k].value(), ys[k].value()) && indices[k] == at,
                "{what}: row {r} element {i}: got ({}, {}), want ({}, {at})",
                values[k].value(),
                indices[k],
                ys[k].value()
            );
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn check_close(
    what: &str,
    row: usize,
    i: usize,
    got: f64,
    want: f64,
    op: ScanOp,
    float: bool,
    depth: f64,
    index: usize,
    mag: f64,
) {
    if op != ScanOp::Sum || !float {
        // Exact: max/min convert exactly, i8 sums are exact in i32.
        assert!(
            same(got, want),
            "{what}: row {row} element {i}: got {got}, want {want} exactly"
        );
        return;
    }
    // Within the bound of a finite sum; a sequential sum that met an
    // infinity or NaN: the same IEEE value.
    let bound = (depth + index as f64 / depth + 2.0) * 2f64.powi(-24) * mag;
    assert!(
        agree(got, want, bound),
        "{what}: row {row} element {i}: got {got}, want {want} (bound {bound})"
    );
}

fn reduce_case<T>(dev: &Device, g: &mut Gen<'_>)
where
    T: ScanInput + Num,
    T::Acc: Acc,
{
    let n = g.len(MAX_ELEMS);
    let op = g.pick(&[ScanOp::Sum, ScanOp::Max, ScanOp::Min]);
    let xs = values::<T>(g, n, |x| if op != ScanOp::Sum { x } else { finite(x, 60) });
    let buf = dev.upload(&xs).expect("upload");
    // Max and min take every scan input type; sums all but f32.
    let supported = op != ScanOp::Sum || T::DTYPE != f32::DTYPE;
    let want = if !supported {
        Want::Unsupported
    } else {
        Want::Ok
    };
    let what = format!("reduce {} n={n} {op:?}", dtype_name::<T>());
    let Some(got) = outcome(&what, want, reduce(dev, &buf, op)) else {
        return;
    };
    let float = T::DTYPE != i8::DTYPE;
    let vals = xs.iter().map(|x| x.to_f64());
    let want_v = match op {
        ScanOp::Sum => vals.sum(),
        ScanOp::Max => vals.fold(
            if float {
                f64::NEG_INFINITY
            } else {
                f64::from(i32::MIN)
            },
            nan_max,
        ),
        ScanOp::Min => vals.fold(
            if float {
                f64::INFINITY
            } else {
                f64::from(i32::MAX)
            },
            nan_min,
        ),
    };
    let got = got.value();
    if op == ScanOp::Sum && float {
        // The documented bound: (n/4096 + 4096 + cores) * 2^-24 * sum|x|.
        let mag: f64 = xs.iter().map(|x| x.to_f64().abs()).sum();
        let cores = f64::from(dev.profile().vector_cores);
        let bound = (n as f64 / 4096.0 + 4096.0 + cores) * 2f64.powi(-24) * mag;
        assert!(
            (got - want_v).abs() <= bound,
            "{what}: got {got}, want {want_v} (bound {bound})"
        );
    } else {
        assert!(
            same(got, want_v),
            "{what}: got {got}, want {want_v} exactly"
        );
    }
}

fn copy_case<T: Num>(dev: &Device, g: &mut Gen<'_>) {
    let n = g.len(MAX_ELEMS);
    let xs = values::<T>(g, n, |x| x);
    let buf = dev.upload(&xs).expect("upload");
    let what = format!("copy {} n={n}", dtype_name::<T>());
    let out = outcome(&what, Want::Ok, copy(&buf)).expect("checked");
    assert_eq!(out.len(), n, "{what}: length");
    assert_eq!(
        bits_of(&out.download().expect("download")),
        bits_of(&xs),
        "{what}: bits"
    );
}

// ------------------------------------------------------------ split family

/// compress / compress_with / split / split_with for every value type.
pub fn split_family(data: &[u8]) {
    let mut g = Gen::new(data);
    leak_checked(|dev| match g.below(6) {
        0 => split_case::<f16>(dev, &mut g),
        1 => split_case::<bf16>(dev, &mut g),
        2 => split_case::<i16>(dev, &mut g),
        3 => split_case::<u16>(dev, &mut g),
        4 => split_case::<i32>(dev, &mut g),
        _ => split_case::<f32>(dev, &mut g),
    });
}

fn split_case<T: SplitValue + Num>(dev: &Device, g: &mut Gen<'_>) {
    let n = g.len(MAX_ELEMS);
    let xs = values::<T>(g, n, |x| x);
    let density = g.below(5);
    let mut fs: Vec<i8> = (0..n)
        .map(|_| match density {
            0 => 0,
            1 => 1,
            _ => i8::from(g.below(4) < density - 1),
        })
        .collect();
    let mut want = Want::Ok;
    if n > 0 && g.chance(1, 12) {
        let at = g.below(n as u64) as usize;
        fs[at] = g.pick(&[-1, 2, 127, -128]);
        want = Want::Arg("flags");
    }
    let flag_len = if g.chance(1, 16) {
        want = if g.chance(1, 2) || n == 0 {
            fs.push(1);
            Want::Arg("flags")
        } else {
            fs.pop();
            Want::Arg("flags")
        };
        fs.len()
    } else {
        n
    };
    let values = dev.upload(&xs).expect("upload");
    let flags = dev.upload(&fs).expect("upload");
    let want_indices = g.chance(2, 3);
    let compress = g.chance(1, 2);
    let what = format!(
        "{} {} n={n} flags={flag_len} indices={want_indices}",
        if compress { "compress" } else { "split" },
        dtype_name::<T>()
    );
    // Only read when the flags are valid (then there are n of them).
    let ones: Vec<usize> = (0..flag_len.min(n)).filter(|&i| fs[i] == 1).collect();
    let zeros: Vec<usize> = (0..flag_len.min(n)).filter(|&i| fs[i] == 0).collect();
    if compress {
        let r = compress_with(dev, &values, &flags, CompressOptions { want_indices });
        let Some(out) = outcome(&what, want, r) else {
            return;
        };
        assert_eq!(out.count, ones.len(), "{what}: count");
        let got = out.download_values().expect("download");
        let want_bits: Vec<u64> = ones.iter().map(|&i| xs[i].to_bits()).collect();
        assert_eq!(bits_of(&got), want_bits, "{what}: values");
        let idx = out.download_indices().expect("download");
        assert_eq!(idx.is_some(), want_indices, "{what}: indices asked for");
        if let Some(idx) = idx {
            let want_idx: Vec<i32> = ones.iter().map(|&i| i as i32).collect();
            assert_eq!(idx, want_idx, "{what}: indices");
        }
    } else {
        let r = split_with(dev, &values, &flags, SplitOptions { want_indices });
        let Some(out) = outcome(&what, want, r) else {
            return;
        };
        assert_eq!(out.ones, ones.len(), "{what}: ones");
        let order: Vec<usize> = ones.iter().chain(&zeros).copied().collect();
        let got = out.values.download().expect("download");
        let want_bits: Vec<u64> = order.iter().map(|&i| xs[i].to_bits()).collect();
        assert_eq!(bits_of(&got), want_bits, "{what}: values");
        assert_eq!(
            out.indices.is_some(),
            want_indices,
            "{what}: indices asked for"
        );
        if let Some(idx) = out.indices {
            let want_idx: Vec<i32> = order.iter().map(|&i| i as i32).collect();
            assert_eq!(
                idx.download().expect("download"),
                want_idx,
                "{what}: indices"
            );
        }
    }
}

// ------------------------------------------------------------- sort family

/// sort of every key type and topk of every topk key type, 1-D and
/// batched.
pub fn sort_family(data: &[u8]) {
    let mut g = Gen::new(data);
    leak_checked(|dev| match g.below(9) {
        0 => sort_or_topk::<f16>(dev, &mut g),
        1 => sort_or_topk::<bf16>(dev, &mut g),
        2 => sort_or_topk::<u16>(dev, &mut g),
        3 => sort_or_topk::<i16>(dev, &mut g),
        4 => sort_or_topk::<u8>(dev, &mut g),
        5 => sort_or_topk::<i8>(dev, &mut g),
        6 => sort_or_topk::<f32>(dev, &mut g),
        7 => sort_case::<i32>(dev, &mut g),
        _ => sort_case::<u32>(dev, &mut g),
    });
}

fn sort_or_topk<T: TopkKey + Num>(dev: &Device, g: &mut Gen<'_>) {
    if g.chance(1, 2) {
        sort_case::<T>(dev, g);
    } else {
        topk_case::<T>(dev, g);
    }
}

/// The documented key order: integers by value; floats with -0.0 = +0.0
/// and every NaN equal to every NaN, above +inf.
pub fn key_order<T: Num>(a: T, b: T) -> Ordering {
    let (a, b) = (a.to_f64(), b.to_f64());
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).expect("not NaN"),
    }
}

/// The stable sort of one row: the input indices in output order.
fn stable_order<T: Num>(row: &[T], descending: bool) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..row.len()).collect();
    if descending {
        perm.sort_by(|&a, &b| key_order(row[b], row[a]));
    } else {
        perm.sort_by(|&a, &b| key_order(row[a], row[b]));
    }
    perm
}

fn sort_case<T: SortKey + Num>(dev: &Device, g: &mut Gen<'_>) {
    let (rows, n) = g.shape();
    let xs = values::<T>(g, rows * n, |x| x);
    let buf = dev.upload(&xs).expect("upload");
    let batch = Batch::rows(&buf, rows).expect("rows divide the buffer");
    let options = SortOptions {
        descending: g.chance(1, 2),
        algorithm: g.pick(&[
            SortAlgorithm::Auto,
            SortAlgorithm::MultiBit,
            SortAlgorithm::OneBit,
        ]),
    };
    // The indices come from sort or argsort, or as values carried by
    // sort_pairs (values of the input position, scrambled).
    let mode = g.pick(&["sort", "argsort", "sort_pairs"]);
    let what = format!("{mode} {} rows={rows} n={n} {options:?}", dtype_name::<T>());
    let scramble = |i: usize| (i as u32).wrapping_mul(0x9e37_79b1);
    let (vals, idx): (Option<Vec<T>>, Vec<i32>) = match mode {
        "sort" => {
            let out = outcome(&what, Want::Ok, sort(dev, batch, options)).expect("checked");
            let vals = out.values.download().expect("download");
            (Some(vals), out.indices.download().expect("download"))
        }
        "argsort" => {
            let out = outcome(&what, Want::Ok, argsort(dev, batch, options)).expect("checked");
            (None, out.download().expect("download"))
        }
        _ => {
            let carried: Vec<u32> = (0..rows * n).map(|i| scramble(i % n.max(1))).collect();
            let cbuf = dev.upload(&carried).expect("upload");
            let cbatch = Batch::rows(&cbuf, rows).expect("rows divide the buffer");
            let out =
                outcome(&what, Want::Ok, sort_pairs(dev, batch, cbatch, options)).expect("checked");
            let moved = out.values.download().expect("download");
            // Back from the scrambled positions (the scramble is a bijection
            // of u32: odd multiplier).
            let back: std::collections::HashMap<u32, i32> =
                (0..n).map(|i| (scramble(i), i as i32)).collect();
            let idx = moved
                .iter()
                .map(|v| back.get(v).copied().unwrap_or(-1))
                .collect();
            (Some(out.keys.download().expect("download")), idx)
        }
    };
    assert_eq!(idx.len(), rows * n, "{what}: indices length");
    for r in 0..rows {
        let row = &xs[r * n..(r + 1) * n];
        let order = stable_order(row, options.descending);
        let want_idx: Vec<i32> = order.iter().map(|&i| i as i32).collect();
        assert_eq!(
            &idx[r * n..(r + 1) * n],
            &want_idx[..],
            "{what}: row {r} indices"
        );
        if let Some(vals) = &vals {
            let want_bits: Vec<u64> = order.iter().map(|&i| row[i].to_bits()).collect();
            assert_eq!(
                bits_of(&vals[r * n..(r + 1) * n]),
                want_bits,
                "{what}: row {r} keys"
            );
        }
    }
}

fn topk_case<T: TopkKey + Num>(dev: &Device, g: &mut Gen<'_>) {
    let (rows, n) = g.shape();
    let xs = values::<T>(g, rows * n, |x| x);
    let buf = dev.upload(&xs).expect("upload");
    let batch = Batch::rows(&buf, rows).expect("rows divide the buffer");
    let k = match g.below(8) {
        0 => 0,
        1 => n + 1 + g.below(3) as usize,
        2 => n,
        3 => 1,
        _ => g.below(n as u64 + 1) as usize,
    };
    let options = TopkOptions {
        largest: g.chance(2, 3),
        sorted: g.chance(1, 2),
    };
    let want = if k == 0 || k > n {
        Want::Arg("k")
    } else {
        Want::Ok
    };
    let what = format!(
        "topk {} rows={rows} n={n} k={k} {options:?}",
        dtype_name::<T>()
    );
    let Some(out) = outcome(&what, want, topk(dev, batch, k, options)) else {
        return;
    };
    let vals = out.values.download().expect("download");
    let idx = out.indices.download().expect("download");
    assert_eq!(
        (vals.len(), idx.len()),
        (rows * k, rows * k),
        "{what}: lengths"
    );
    for r in 0..rows {
        let row = &xs[r * n..(r + 1) * n];
        let order = stable_order(row, options.largest);
        let chosen: Vec<usize> = if options.sorted {
            order[..k].to_vec()
        } else {
            // Strictly beyond the k-th key in input order, then the
            // earliest ties with it in input order.
            let kth = row[order[k - 1]];
            let beyond = |x: T| {
                let o = key_order(x, kth);
                if options.largest {
                    o == Ordering::Greater
                } else {
                    o == Ordering::Less
                }
            };
            let mut c: Vec<usize> = (0..n).filter(|&i| beyond(row[i])).collect();
            let ties = k - c.len();
            c.extend(
                (0..n)
                    .filter(|&i| key_order(row[i], kth) == Ordering::Equal)
                    .take(ties),
            );
            c
        };
        let want_idx: Vec<i32> = chosen.iter().map(|&i| i as i32).collect();
        let want_bits: Vec<u64> = chosen.iter().map(|&i| row[i].to_bits()).collect();
        assert_eq!(
            &idx[r * k..(r + 1) * k],
            &want_idx[..],
            "{what}: row {r} indices"
        );
        assert_eq!(
            bits_of(&vals[r * k..(r + 1) * k]),
            want_bits,
            "{what}: row {r} keys"
        );
    }
}

// --------------------------------------------------------------- sampling

/// multinomial, multinomial_with_uniforms, top_p_sample and sample_logits.
pub fn sampling(data: &[u8]) {
    let mut g = Gen::new(data);
    leak_checked(|dev| match g.below(11) {
        0 => multinomial_case::<f16>(dev, &mut g),
        1 => multinomial_case::<bf16>(dev, &mut g),
        2 => multinomial_case::<f32>(dev, &mut g),
        3 => uniforms_case::<f16>(dev, &mut g),
        4 => uniforms_case::<f32>(dev, &mut g),
        5 | 6 => top_p_case::<f16>(dev, &mut g),
        7 => top_p_case::<bf16>(dev, &mut g),
        8 => logits_case::<f16>(dev, &mut g),
        9 => logits_case::<bf16>(dev, &mut g),
        _ => logits_case::<f32>(dev, &mut g),
    });
}

/// The root of the f32 pair-sum tree over `w` zero-padded to a power of two
/// (the total a draw scales its uniform by).
fn pair_total(w: &[f32]) -> f32 {
    let mut level = w.to_vec();
    level.resize(w.len().max(1).next_power_of_two(), 0.0);
    while level.len() > 1 {
        level = level.chunks(2).map(|p| p[0] + p[1]).collect();
    }
    level[0]
}

/// Weights: mostly non-negative, some zeros, sometimes a bad one.
fn weights<T: SampleWeight + Num>(g: &mut Gen<'_>, n: usize) -> Vec<T> {
    let bad = g.chance(1, 8);
    let all_zero = g.chance(1, 16);
    let mut w = values::<T>(g, n, |x| {
        if all_zero {
            return T::from_bits(0);
        }
        // Clear the sign bit: non-negative (NaN and inf stay for `bad`).
        let sign = match std::mem::size_of::<T>() {
            2 => 0x8000,
            _ => 0x8000_0000,
        };
        let x = T::from_bits(x.to_bits() & !sign);
        if bad {
            x
        } else {
            finite(x, 100)
        }
    });
    if bad && n > 0 {
        let at = g.below(n as u64) as usize;
        let sp = specials::<T>();
        w[at] = T::from_bits(sp[g.below(sp.len() as u64) as usize]);
    }
    w
}

/// Which rows of `w` (`rows` rows) can be sampled: finite weights >= 0 and
/// a positive finite f32 pair-sum total.
fn rows_valid<T: SampleWeight + Num>(w: &[T], rows: usize) -> bool {
    let n = w.len() / rows;
    (0..rows).all(|r| {
        let row: Vec<f32> = w[r * n..(r + 1) * n].iter().map(|x| x.to_f32()).collect();
        let t = pair_total(&row);
        row.iter().all(|x| *x >= 0.0 && x.is_finite()) && t > 0.0 && t.is_finite()
    })
}

fn multinomial_case<T: SampleWeight + Num>(dev: &Device, g: &mut Gen<'_>) {
    let (rows, n) = g.shape();
    let w = weights::<T>(g, rows * n);
    let draws = g.pick(&[0, 1, 2, 7, 16, 33, 100]);
    let seed = g.bits();
    let buf = dev.upload(&w).expect("upload");
    let batch = Batch::rows(&buf, rows).expect("rows divide the buffer");
    let want = if n == 0 {
        Want::Arg("weights")
    } else if draws == 0 || rows_valid(&w, rows) {
        Want::Ok
    } else {
        Want::Arg("weights")
    };
    let what = format!(
        "multinomial {} rows={rows} n={n} draws={draws}",
        dtype_name::<T>()
    );
    let r = multinomial(dev, batch, draws, SampleOptions { seed });
    let Some(out) = outcome(&what, want, r) else {
        return;
    };
    let got = out.download().expect("download");
    assert_eq!(got.len(), rows * draws, "{what}: length");
    if draws > 0 {
        let want_idx = multinomial_reference(&w, rows, &uniforms(seed, rows, draws));
        assert_eq!(got, want_idx, "{what}: indices");
        check_positive(&what, &w, rows, draws, &got);
    }
}

fn check_positive<T: SampleWeight>(what: &str, w: &[T], rows: usize, draws: usize, got: &[i32]) {
    let n = w.len() / rows;
    for (j, &i) in got.iter().enumerate() {
        let r = j / draws.max(1);
        assert!(
            (0..n as i32).contains(&i) && w[r * n + i as usize].to_f32() > 0.0,
            "{what}: draw {j} picked index {i}, not a positive weight"
        );
    }
}

fn uniforms_case<T: SampleWeight + Num>(dev: &Device, g: &mut Gen<'_>) {
    let (rows, n) = g.shape();
    let w = weights::<T>(g, rows * n);
    let draws = g.pick(&[0, 1, 3, 16, 50]);
    let mut u: Vec<f32> = (0..rows * draws)
        .map(|_| match g.below(10) {
            0 => g.pick(&[1.0, -0.5, 2.0, f32::NAN, f32::INFINITY, -0.0, 0.999_999_94]),
            _ => (g.bits() >> 40) as f32 / (1u64 << 24) as f32,
        })
        .collect();
    let mut want = if n == 0 {
        Want::Arg("weights")
    } else if draws == 0 || rows_valid(&w, rows) {
        Want::Ok
    } else {
        Want::Arg("weights")
    };
    if rows > 1 && g.chance(1, 10) {
        u.push(0.5);
        if n > 0 {
            want = Want::Arg("uniforms");
        }
    }
    let wbuf = dev.upload(&w).expect("upload");
    let ubuf = dev.upload(&u).expect("upload");
    let batch = Batch::rows(&wbuf, rows).expect("rows divide the buffer");
    let what = format!(
        "multinomial_with_uniforms {} rows={rows} n={n} uniforms={}",
        dtype_name::<T>(),
        u.len()
    );
    let Some(out) = outcome(&what, want, multinomial_with_uniforms(dev, batch, &ubuf)) else {
        return;
    };
    let got = out.download().expect("download");
    assert_eq!(got.len(), u.len(), "{what}: length");
    if !u.is_empty() {
        assert_eq!(got, multinomial_reference(&w, rows, &u), "{what}: indices");
        check_positive(&what, &w, rows, draws, &got);
    }
}

fn top_p_case<T: TopPProb + Num>(dev: &Device, g: &mut Gen<'_>) {
    let (rows, n) = g.shape();
    let bad = g.chance(1, 10);
    let zero_rows = g.chance(1, 12);
    // Probabilities in [0, 1]: random bits with the exponent pulled below 1.
    let probs = values::<T>(g, rows * n, |x| {
        if zero_rows {
            return T::from_bits(0);
        }
        let v = x.to_f64();
        if bad {
            return x;
        }
        if v.is_finite() && (0.0..=1.0).contains(&v) {
            x
        } else {
            let f = finite(x, 0).to_f64().abs();
            T::from_bits(small_bits::<T>(f.min(1.0)))
        }
    });
    let p = g.pick(&[0.9, 0.5, 0.1, 1.0, 0.999, 0.25, 0.0, -0.1, 1.5, f32::NAN]);
    let top_k = match g.below(4) {
        0 => Some(g.below(n as u64 + 2) as usize),
        _ => None,
    };
    let seed = g.bits();
    let buf = dev.upload(&probs).expect("upload");
    let batch = Batch::rows(&buf, rows).expect("rows divide the buffer");
    let in_range = probs.iter().all(|x| (0.0..=1.0).contains(&x.to_f64()));
    let m = top_k.unwrap_or(n);
    let kept_mass_zero = (0..rows).any(|r| {
        let row = &probs[r * n..(r + 1) * n];
        row.iter().all(|x| x.to_f64() == 0.0)
    });
    let want = if !(p > 0.0 && p <= 1.0) {
        Want::Arg("p")
    } else if n == 0 {
        Want::Arg("probs")
    } else if top_k.is_some_and(|k| k == 0 || k > n) {
        Want::Arg("top_k")
    } else if !in_range || kept_mass_zero {
        Want::Arg("probs")
    } else {
        Want::Ok
    };
    let options = TopPOptions {
        p,
        top_k,
        min_p: 0.0,
        seed,
    };
    let what = format!(
        "top_p_sample {} rows={rows} n={n} {options:?}",
        dtype_name::<T>()
    );
    let Some(out) = outcome(&what, want, top_p_sample(dev, batch, options)) else {
        return;
    };
    let tokens = out.download().expect("download");
    assert_eq!(tokens.len(), rows, "{what}: one token per row");
    let depth = f64::from(
        Algorithm::auto_for::<T>(rows, m)
            .error_depth()
            .expect("resolved"),
    );
    for r in 0..rows {
        let row = &probs[r * n..(r + 1) * n];
        let mut order = stable_order(row, true);
        order.truncate(m);
        // Keep entry j unless the mass before it exceeds p; ambiguous when
        // the mass is within the scan's fp32 error bound of p.
        let (mut pre, mut mag) = (0f64, 0f64);
        let (mut keep_sure, mut keep_max) = (0usize, 0usize);
        for (j, &i) in order.iter().enumerate() {
            let x = row[i].to_f64();
            let bound = (depth + j as f64 / depth + 2.0) * 2f64.powi(-24) * (mag + x)
                + 2f64.powi(-24) * (pre + x);
            if j == 0 || pre < f64::from(p) - bound {
                keep_sure = j + 1;
            }
            if j == 0 || pre <= f64::from(p) + bound {
                keep_max = j + 1;
            }
            pre += x;
            mag += x;
        }
        let token = tokens[r];
        let pos = order.iter().position(|&i| i as i32 == token);
        let pos = pos.unwrap_or_else(|| panic!("{what}: row {r}: token {token} is not in the row"));
        assert!(
            pos < keep_max && row[token as usize].to_f64() > 0.0,
            "{what}: row {r}: token {token} (sorted position {pos}) is outside the nucleus \
             (at most {keep_max} kept) or has probability 0"
        );
        if keep_sure == keep_max {
            let mut w: Vec<f32> = order.iter().map(|&i| row[i].to_f64() as f32).collect();
            for v in &mut w[keep_sure..] {
                *v = 0.0;
            }
            let u = ascend_scan::uniform(seed, r as u64, 0);
            let want_pos = multinomial_reference(&w, 1, &[u])[0] as usize;
            assert_eq!(
                token, order[want_pos] as i32,
                "{what}: row {r}: token (kept {keep_sure}, u = {u})"
            );
        }
    }
}

/// `sample_logits` on adversarial logits (NaN, infinities, ties, huge and
/// tiny values) with random and out-of-range parameters: the error names
/// the argument the documentation says; a greedy token is the first
/// largest logit; any other token lies in the kept set with a probability
/// above 0 and at or above the min-p floor, and, after a top-k alone (the
/// top-k order is then the draw's order), inside the top-p nucleus.
fn logits_case<T: LogitsInput + Num>(dev: &Device, g: &mut Gen<'_>) {
    let (rows, n) = g.shape();
    let wild = g.chance(1, 4);
    let x = values::<T>(g, rows * n, |x| if wild { x } else { finite(x, 4) });
    // Each parameter out of its range about one time in twelve.
    let mut param = |good: &[f32], bad: &[f32]| {
        if g.chance(1, 12) {
            g.pick(bad)
        } else {
            g.pick(good)
        }
    };
    let temperature = param(
        &[1.0, 0.7, 1.3, 0.0, 0.05],
        &[-1.0, f32::NAN, f32::INFINITY],
    );
    let top_p = param(&[0.9, 0.5, 0.3, 1.0, 0.999], &[0.0, 1.5, f32::NAN]);
    let min_p = param(&[0.0, 0.0, 0.1, 0.6, 1.0], &[-0.1, f32::NAN]);
    let top_k = match g.below(4) {
        0 => None,
        1 => Some(g.below(n as u64 + 2) as usize),
        _ => Some(1 + g.below(n.clamp(1, 80) as u64) as usize),
    };
    let o = LogitsSampling {
        temperature,
        top_k,
        top_p,
        min_p,
        seed: g.bits(),
    };
    // What each row keeps: its top-k in the top-k order (value descending,
    // NaN first, ties by index), or all of it.
    let k = top_k.filter(|&k| k < n).unwrap_or(n);
    let kept: Vec<Vec<usize>> = (0..rows)
        .map(|r| {
            let mut order = stable_order(&x[r * n..(r + 1) * n], true);
            order.truncate(k);
            order
        })
        .collect();
    let scale = 1.0f32 / temperature;
    // x * s in f32 as the kernels take it, the row's largest first.
    let scaled = |r: usize, i: usize| f64::from(x[r * n + i].to_f64() as f32 * scale);
    let one = k == 1 && k < n;
    let bad_row = |r: usize| {
        let has_nan = kept[r].iter().any(|&i| x[r * n + i].to_f64().is_nan());
        if temperature == 0.0 || one {
            return has_nan;
        }
        let top = scaled(r, kept[r][0]);
        has_nan || !top.is_finite()
    };
    let want = if top_k == Some(0) {
        Want::Arg("top_k")
    } else if n == 0 {
        Want::Arg("logits")
    } else if !(temperature >= 0.0 && temperature.is_finite()) {
        Want::Arg("temperature")
    } else if top_k.is_some_and(|k| k > n) {
        Want::Arg("top_k")
    } else if !(top_p > 0.0 && top_p <= 1.0) {
        Want::Arg("top_p")
    } else if !(0.0..=1.0).contains(&min_p) {
        Want::Arg("min_p")
    } else if (0..rows).any(bad_row) {
        Want::Arg("logits")
    } else {
        Want::Ok
    };
    let buf = dev.upload(&x).expect("upload");
    let batch = Batch::rows(&buf, rows).expect("rows divide the buffer");
    let what = format!(
        "sample_logits {} rows={rows} n={n} {o:?}",
        dtype_name::<T>()
    );
    let Some(out) = outcome(&what, want, sample_logits(dev, batch, o)) else {
        return;
    };
    let tokens = out.download().expect("download");
    assert_eq!(tokens.len(), rows, "{what}: one token per row");
    for (r, &token) in tokens.iter().enumerate() {
        let what = format!("{what}: row {r}: token {token}");
        let pos = kept[r].iter().position(|&i| i as i32 == token);
        let pos = pos.unwrap_or_else(|| panic!("{what} is not among the kept logits"));
        if temperature == 0.0 || one {
            assert_eq!(pos, 0, "{what}: not the first largest logit");
            continue;
        }
        // The probabilities relative to the largest: exp(x s - M).
        let top = scaled(r, kept[r][0]);
        let rel: Vec<f64> = kept[r]
            .iter()
            .map(|&i| (scaled(r, i) - top).exp())
            .collect();
        let total: f64 = rel.iter().sum();
        assert!(
            rel[pos] > 0.0 && rel[pos] >= f64::from(min_p) * (1.0 - 1e-5),
            "{what}: probability {} of the largest, min_p {min_p}",
            rel[pos]
        );
        if k < n && top_p < 1.0 {
            let before: f64 = rel[..pos].iter().sum::<f64>() / total;
            assert!(
                before <= f64::from(top_p) + 1e-4,
                "{what}: the mass before it, {before}, is past top_p"
            );
        }
    }
}

/// The bits of the value `v` in `[0, 1]` as a `T` (f16 or bf16), rounded.
fn small_bits<T: Num>(v: f64) -> u64 {
    if T::from_bits(0x7c00).to_f64().is_infinite() {
        u64::from(f16::from_f64(v).to_bits())
    } else {
        u64::from(bf16::from_f64(v).to_bits())
    }
}

// -------------------------------------------------------- segmented family

/// Elements of one SEGSCAN tile (s = 64): its error bound is tile-local.
const SEG_TILE: usize = 4096;
/// Longest x of a segmented case: three tiles and a few elements (the
/// carries between tiles), still some tens of milliseconds.
pub const MAX_SEG_ELEMS: usize = 3 * SEG_TILE + 5;

/// segmented_scan (every algorithm, inclusive/exclusive) and segmented_sum
/// (every algorithm) of f16, bf16 and i8 values, segmented_sum of f32
/// values, with segments as int8 flags or as offsets (empty segments
/// included), and invalid segments.
pub fn segmented(data: &[u8]) {
    let mut g = Gen::new(data);
    leak_checked(|dev| match g.below(6) {
        0 | 1 => segmented_case::<f16>(dev, &mut g, Some(scan_of::<f16>), Some(extrema::<f16>)),
        2 => segmented_case::<bf16>(dev, &mut g, Some(scan_of::<bf16>), Some(extrema::<bf16>)),
        3 => segmented_case::<f32>(dev, &mut g, None, Some(extrema::<f32>)),
        _ => segmented_case::<i8>(dev, &mut g, Some(scan_of::<i8>), None),
    });
}

/// The segmented scan of a type that has one (f32 has only the sums).
type SegScanFn<T> = fn(
    &Device,
    &DeviceBuffer<T>,
    Segments<'_>,
    SegScanOptions,
) -> Result<DeviceBuffer<<T as ScanInput>::Acc>, Error>;

fn scan_of<T: SegmentedInput>(
    dev: &Device,
    x: &DeviceBuffer<T>,
    seg: Segments<'_>,
    options: SegScanOptions,
) -> Result<DeviceBuffer<T::Acc>, Error> {
    segmented_scan(dev, x, seg, options)
}

/// The segmented max (or min) of a float type: values and indices.
type Extrema<T> =
    fn(&Device, &DeviceBuffer<T>, Segments<'_>, bool) -> Result<(Vec<T>, Vec<i32>), Error>;

fn extrema<T: ExtremaValue>(
    dev: &Device,
    x: &DeviceBuffer<T>,
    seg: Segments<'_>,
    max: bool,
) -> Result<(Vec<T>, Vec<i32>), Error> {
    let out = if max {
        segmented_max(dev, x, seg)
    } else {
        segmented_min(dev, x, seg)
    }?;
    Ok((out.values.download()?, out.indices.download()?))
}

/// Start flags of `n` elements at some density, from none (one segment)
/// to all (segments of one element); position 0 is 0 or 1 (it starts a
/// segment either way).
fn start_flags(g: &mut Gen<'_>, n: usize) -> Vec<i8> {
    let mut f = vec![0i8; n];
    match g.below(7) {
        0 => {}
        1 => f.fill(1),
        2 => {
            // Only the last element starts a segment.
            if let Some(last) = f.last_mut() {
                *last = 1;
            }
        }
        3 => {
            // Around the tile edges.
            for (i, v) in f.iter_mut().enumerate() {
                *v = i8::from(matches!(i % SEG_TILE, 0 | 1 | 4094 | 4095));
            }
        }
        4 => {
            let k = g.pick(&[2, 3, 63, 64, 65, 4095, 4096]);
            for v in f.iter_mut().step_by(k) {
                *v = 1;
            }
        }
        _ => {
            // Random, density 0.01% .. 99.9%.
            let per_10k = g.pick(&[1, 10, 100, 1000, 5000, 9000, 9990]);
            for v in &mut f {
                *v = i8::from(g.below(10_000) < per_10k);
            }
        }
    }
    if let Some(first) = f.first_mut() {
        *first = g.below(2) as i8;
    }
    f
}

/// A value of large magnitude (2^15..2^16 for f16, 2^30..2^31 for bf16 and
/// f32, an extreme for i8) with the sign and mantissa of `x`: a large prefix
/// before small values (the cancellation case of global-prefix methods).
fn large<T: Num>(x: T) -> T {
    let b = x.to_bits();
    T::from_bits(match (std::mem::size_of::<T>(), T::FLOAT) {
        (2, true) if T::from_bits(0x7c00).to_f64().is_infinite() => (b & 0x83ff) | (30 << 10),
        (2, true) => (b & 0x807f) | (157 << 7),
        (4, true) => (b & 0x807f_ffff) | (157 << 23),
        _ => {
            if b & 1 == 0 {
                0x7f
            } else {
                0x80
            }
        }
    })
}

fn segmented_case<T>(
    dev: &Device,
    g: &mut Gen<'_>,
    scan: Option<SegScanFn<T>>,
    extrema: Option<Extrema<T>>,
) where
    T: SegmentedSumInput + Num,
    T::Acc: Acc,
{
    let n = if g.chance(1, 4) {
        g.pick(&[4095, 4096, 4097, 8191, 8192, 8193, MAX_SEG_ELEMS])
    } else {
        g.len(SEG_TILE + 1)
    };
    // Finite values of bounded exponent (the documented bounds are
    // relative to sums of |x|, which must not overflow f32); in a quarter
    // of the cases the generator's infinities and NaNs stay (each affects
    // its own segment from its position on, docs/algorithms.md).
    let keep_special = T::FLOAT && g.chance(1, 4);
    let mut xs = values::<T>(g, n, |x| {
        if keep_special && !x.to_f64().is_finite() {
            x
        } else {
            finite(x, 40)
        }
    });
    let non_finite = xs.iter().any(|x| !x.to_f64().is_finite());
    if n > 0 && g.chance(1, 4) {
        let big = g.below(n as u64) as usize;
        for x in &mut xs[..big] {
            *x = large(*x);
        }
    }
    let flags = start_flags(g, n);
    let starts: Vec<usize> = (0..n).filter(|&i| i == 0 || flags[i] == 1).collect();
    let by_offsets = g.chance(1, 2);
    // The segments as (start, end) ranges, empty ones included.
    let segments: Vec<(usize, usize)>;
    let mut bad_flags = flags.clone();
    let mut offsets: Vec<i32> = Vec::new();
    let mut want = Want::Ok;
    if by_offsets {
        offsets = starts.iter().chain(&[n]).map(|&i| i as i32).collect();
        // Empty segments: repeated offsets, leading (0, 0) and trailing (n, n).
        for _ in 0..g.pick(&[0, 0, 1, 2, 5]) {
            let at = g.below(offsets.len() as u64) as usize;
            offsets.insert(at, offsets[at]);
        }
        segments = offsets
            .windows(2)
            .map(|w| (w[0] as usize, w[1] as usize))
            .collect();
        if g.chance(1, 8) {
            // Documented: offsets[0] = 0, non-decreasing, ending at n.
            let len = offsets.len();
            match g.below(6) {
                0 => offsets.clear(),
                1 => offsets[0] = g.pick(&[1, -1, i32::MIN]),
                2 => offsets[len - 1] = n as i32 + g.pick(&[1, -1, 4096]),
                3 => {
                    // The last entry missing (or one past n after it).
                    offsets.pop();
                    if offsets.last() == Some(&(n as i32)) {
                        offsets.push(n as i32 + 1);
                    }
                }
                _ if len >= 2 => {
                    // An entry below the one before it, negative or past n.
                    let at = 1 + g.below(len as u64 - 1) as usize;
                    offsets[at] = match g.below(3) {
                        0 => offsets[at - 1] - 1,
                        1 => -1,
                        _ => n as i32 + 1,
                    };
                    if at == len - 1 {
                        offsets.push(n as i32);
                    }
                }
                _ => offsets.push(-1),
            }
            want = Want::Arg("segments");
        }
    } else {
        segments = starts
            .iter()
            .enumerate()
            .map(|(k, &a)| (a, starts.get(k + 1).copied().unwrap_or(n)))
            .collect();
        if g.chance(1, 8) {
            // Documented: n flags, each 0 or 1.
            if n > 0 && g.chance(1, 2) {
                let any = g.below(n as u64) as usize;
                let at = g.pick(&[0, n - 1, any]);
                bad_flags[at] = g.pick(&[-1, 2, 127, -128]);
            } else if n > 0 && g.chance(1, 2) {
                bad_flags.pop();
            } else {
                bad_flags.push(0);
            }
            want = Want::Arg("segments");
        }
    }
    let x = dev.upload(&xs).expect("upload");
    let fbuf = dev.upload(&bad_flags).expect("upload");
    let obuf = dev.upload(&offsets).expect("upload");
    let seg = if by_offsets {
        Segments::Offsets(&obuf)
    } else {
        Segments::Flags(&fbuf)
    };
    let what = format!(
        "{} n={n} segments={} offsets={by_offsets}",
        dtype_name::<T>(),
        segments.len()
    );
    if let Some(run) = extrema.filter(|_| g.chance(1, 3)) {
        // Exact: the first index of the extreme (NaN wins, -0 equals +0),
        // its value bit for bit; an empty segment gives -1 and -inf/+inf.
        let max = g.chance(1, 2);
        let what = format!("segmented extrema {what} max={max}");
        let Some((values, indices)) = outcome(&what, want, run(dev, &x, seg, max)) else {
            return;
        };
        assert_eq!(indices.len(), segments.len(), "{what}: count");
        for (k, &(a, b)) in segments.iter().enumerate() {
            let got = values[k];
            match first_extreme(xs[a..b].iter().map(|x| x.to_f64()), max).map(|i| a + i) {
                Some(i) => {
                    assert_eq!(indices[k], i as i32, "{what}: segment {k} ({a}..{b}) index");
                    let same = got.to_bits() == xs[i].to_bits()
                        || (got.to_f64().is_nan() && xs[i].to_f64().is_nan());
                    assert!(same, "{what}: segment {k} ({a}..{b}) value");
                }
                None => {
                    assert_eq!(indices[k], -1, "{what}: empty segment {k} index");
                    let inf = if max {
                        f64::NEG_INFINITY
                    } else {
                        f64::INFINITY
                    };
                    assert_eq!(got.to_f64(), inf, "{what}: empty segment {k} value");
                }
            }
        }
        return;
    }
    // |x| summed over 0..i, and over i's tile up to i, both inclusive.
    let (mut all_abs, mut tile_abs) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut all, mut tile) = (0f64, 0f64);
    for (i, x) in xs.iter().enumerate() {
        if i % SEG_TILE == 0 {
            tile = 0.0;
        }
        let m = abs_finite(x.to_f64());
        all += m;
        tile += m;
        all_abs.push(all);
        tile_abs.push(tile);
    }
    let u = 2f64.powi(-24);
    // SEGSCAN's bound at element i of the segment starting at a: when a is
    // in an earlier chunk, the carry brings the rounding of a's chunk before
    // a (|x| summed over it).
    let carried = |a: usize, i: usize| {
        if a / SEG_TILE == i / SEG_TILE {
            0.0
        } else {
            tile_abs[a] - abs_finite(xs[a].to_f64())
        }
    };
    // The f32 scan SSCR and SCD run on x (their global prefixes).
    let d = Algorithm::auto_for::<T>(1, n.max(1))
        .error_depth()
        .map_or(f64::INFINITY, f64::from);
    if let Some(scan) = scan.filter(|_| g.chance(1, 2)) {
        let options = SegScanOptions {
            exclusive: g.chance(1, 2),
            algorithm: g.pick(&[
                SegScanAlgorithm::Auto,
                SegScanAlgorithm::SegScan {
                    revspec: RevSpec::Simple,
                },
                SegScanAlgorithm::SegScan {
                    revspec: RevSpec::Vector,
                },
                SegScanAlgorithm::Sscr,
            ]),
        };
        let what = format!("segmented_scan {what} {options:?}");
        let Some(out) = outcome(&what, want, scan(dev, &x, seg, options)) else {
            return;
        };
        let ys = out.download().expect("download");
        assert_eq!(ys.len(), n, "{what}: length");
        for &(a, b) in &segments {
            let (mut acc, mut mag) = (0f64, 0f64);
            for i in a..b {
                let v = xs[i].to_f64();
                let want_v = if options.exclusive { acc } else { acc + v };
                acc += v;
                mag += abs_finite(v);
                let got = ys[i].value();
                if !T::FLOAT {
                    assert!(
                        got == want_v,
                        "{what}: element {i}: got {got}, want {want_v}"
                    );
                    continue;
                }
                if options.exclusive && i == a {
                    // Documented: each segment's first result is 0.
                    assert!(got == 0.0, "{what}: segment start {i}: got {got}, want 0");
                }
                // The documented bounds: SEGSCAN (Auto is SEGSCAN) is
                // chunk-local; SSCR subtracts two global prefixes of the scan
                // (it runs SEGSCAN when x holds an inf or NaN).
                let l = (i + 1 - a) as f64;
                let bound = if options.algorithm == SegScanAlgorithm::Sscr && !non_finite {
                    2.0 * (d + i as f64 / d + 2.0) * u * all_abs[i] + u * mag
                } else {
                    (128.0 + l / 64.0 + 2.0) * u * (mag + tile_abs[i] + carried(a, i))
                };
                assert!(
                    agree(got, want_v, bound),
                    "{what}: element {i} (segment {a}..{b}): got {got}, want {want_v} \
                     (bound {bound})"
                );
            }
        }
    } else {
        // SEGSCAN does not take f32 values (refused before the segments'
        // device checks, so not drawn here; tests/it/segscan.rs checks it).
        let algorithms: &[SegSumAlgorithm] = if scan.is_some() {
            &[
                SegSumAlgorithm::Auto,
                SegSumAlgorithm::Scd,
                SegSumAlgorithm::SegScan,
                SegSumAlgorithm::OnePass,
            ]
        } else {
            &[
                SegSumAlgorithm::Auto,
                SegSumAlgorithm::Scd,
                SegSumAlgorithm::OnePass,
            ]
        };
        let options = SegSumOptions {
            algorithm: g.pick(algorithms),
        };
        let what = format!("segmented_sum {what} {options:?}");
        let Some(out) = outcome(&what, want, segmented_sum(dev, &x, seg, options)) else {
            return;
        };
        assert_eq!(out.count, segments.len(), "{what}: count");
        let sums = out.download().expect("download");
        assert_eq!(sums.len(), segments.len(), "{what}: length");
        for (k, &(a, b)) in segments.iter().enumerate() {
            let want_v: f64 = xs[a..b].iter().map(|x| x.to_f64()).sum();
            let mag: f64 = xs[a..b].iter().map(|x| abs_finite(x.to_f64())).sum();
            let got = sums[k].value();
            if !T::FLOAT || a == b {
                // Exact in i32; an empty segment sums to exactly 0.
                assert!(
                    got == want_v,
                    "{what}: segment {k} ({a}..{b}): got {got}, want {want_v} exactly"
                );
                continue;
            }
            // SEGSCAN (Auto): the segment's own magnitude plus its last
            // tile's (the inclusive SEGSCAN at b - 1); SCD: twice the
            // scan's bound of the global prefix at the segment's end.
            let bound = if options.algorithm == SegSumAlgorithm::Scd && !non_finite {
                let i = b.min(n - 1);
                2.0 * (d + b as f64 / d + 2.0) * u * all_abs[i] + u * mag
            } else {
                let l = (b - a) as f64;
                (128.0 + l / 64.0 + 2.0) * u * (mag + tile_abs[b - 1] + carried(a, b - 1))
            };
            assert!(
                agree(got, want_v, bound),
                "{what}: segment {k} ({a}..{b}): got {got}, want {want_v} (bound {bound})"
            );
        }
    }
}

// ------------------------------------------------------------- spmv family

/// Most rows of an spmv case (besides the 4095..4097 edge cases).
const MAX_SPMV_ROWS: usize = 300;
/// Most nonzeros of an spmv case: three 4096-nonzero chunks and a few.
const MAX_NNZ: usize = 3 * 4096 + 5;

/// spmv of f16 and f32 CSR matrices (empty rows, dense rows, chunk edges,
/// x beyond one UB window) and of invalid ones.
pub fn spmv_family(data: &[u8]) {
    let mut g = Gen::new(data);
    leak_checked(|dev| match g.below(3) {
        0 => spmv_case::<f16>(dev, &mut g),
        1 => spmv_case::<f32>(dev, &mut g),
        _ => spmv_case::<bf16>(dev, &mut g),
    });
}

/// The nonzeros per row of an m x n matrix, at most MAX_NNZ in all (none
/// when n = 0).
fn row_lengths(g: &mut Gen<'_>, m: usize, n: usize) -> Vec<usize> {
    let mode = g.below(9);
    let dense = g.below(m.max(1) as u64) as usize;
    let mut lens: Vec<usize> = (0..m)
        .map(|r| match mode {
            0 => 0,
            1 | 2 if g.chance(1, 3) => 0,
            1 | 2 => g.len(16),
            // One dense row among empty ones.
            3 | 4 if r == dense => n.min(MAX_NNZ),
            3 | 4 => 0,
            // Rows ending near the 4096-nonzero chunk edges.
            5 | 6 => g.pick(&[0, 1, 2, 100, 4000, 4095, 4096, 4097]),
            _ => g.len(200),
        })
        .collect();
    // Empty rows leading and trailing.
    if g.chance(1, 3) {
        let k = g.below(m as u64 / 2 + 1) as usize;
        lens[..k].fill(0);
    }
    if g.chance(1, 3) {
        let k = g.below(m as u64 / 2 + 1) as usize;
        lens[m - k..].fill(0);
    }
    let mut room = if n == 0 { 0 } else { MAX_NNZ };
    for l in &mut lens {
        *l = (*l).min(room);
        room -= *l;
    }
    lens
}

/// `finite(x, e)`, and 0 for magnitudes below 2^-e: `|x|` is 0 or in
/// `[2^-e, 2^e)`, so products of two such f32 values are normal in f32.
fn bounded<T: Num>(x: T, e: i32) -> T {
    let x = finite(x, e);
    if x.to_f64().abs() < 2f64.powi(-e) {
        T::from_bits(0)
    } else {
        x
    }
}

fn spmv_case<T: SpmvValue + Num>(dev: &Device, g: &mut Gen<'_>) {
    let m = if g.chance(1, 10) {
        g.pick(&[4095, 4096, 4097])
    } else {
        g.len(MAX_SPMV_ROWS)
    };
    // x beyond one 64 KiB UB window (16384 f32, 32768 f16) sometimes.
    let n = if g.chance(1, 6) {
        g.pick(&[16383, 16384, 16385, 32768, 32769, 40_000])
    } else {
        g.len(MAX_ELEMS)
    };
    let lens = row_lengths(g, m, n);
    let mut row_ptr = vec![0i32];
    for l in &lens {
        row_ptr.push(row_ptr[row_ptr.len() - 1] + *l as i32);
    }
    let nnz = row_ptr[m] as usize;
    // Columns: uniform, or at the ends and the UB window edges.
    let edges = [0, n.saturating_sub(1), 16383, 16384, 32767, 32768, n / 2];
    let mut cols: Vec<i32> = (0..nnz)
        .map(|_| {
            if g.chance(1, 8) {
                g.pick(&edges).min(n.saturating_sub(1)) as i32
            } else {
                g.below(n as u64) as i32
            }
        })
        .collect();
    if g.chance(1, 2) {
        for w in row_ptr.windows(2) {
            cols[w[0] as usize..w[1] as usize].sort_unstable();
        }
    }
    // Bounded exponents: sums of products stay far from f32 overflow, and
    // no product underflows (the documented bound is relative).
    // A quarter of the cases keep the generator's infinities and NaN (in the
    // matrix values and in x): they reach exactly the rows whose products
    // involve them (docs/algorithms.md, "Non-finite inputs").
    let keep_special = g.chance(1, 4);
    let fix = move |v: T| {
        if keep_special && !v.to_f64().is_finite() {
            v
        } else {
            bounded(v, 40)
        }
    };
    let vals = values::<T>(g, nnz, fix);
    let xs = values::<T>(g, n, fix);
    // Invalid inputs: one or two changes to a valid matrix.
    let mut x_len = n;
    let bad = g.chance(1, 5);
    if bad {
        for _ in 0..1 + g.below(2) {
            let rp = row_ptr.len();
            match g.below(7) {
                0 if rp > 0 && g.chance(1, 2) => row_ptr.push(row_ptr[rp - 1]),
                0 => {
                    row_ptr.pop();
                }
                1 if g.chance(1, 2) || cols.is_empty() => cols.push(0),
                1 => {
                    cols.pop();
                }
                2 => {
                    x_len = if n > 0 && g.chance(1, 2) {
                        n - 1
                    } else {
                        n + 1
                    }
                }
                3 if rp > 0 => row_ptr[0] = g.pick(&[1, -1, i32::MAX]),
                4 if rp > 0 => {
                    row_ptr[rp - 1] = row_ptr[rp - 1].wrapping_add(g.pick(&[1, -1, 4096]))
                }
                5 if rp > 2 => {
                    // An interior entry below the one before it, negative
                    // or past nnz (a later entry then decreases).
                    let at = 1 + g.below(rp as u64 - 2) as usize;
                    row_ptr[at] = match g.below(4) {
                        0 => row_ptr[at - 1].wrapping_sub(1),
                        1 => -1,
                        2 => i32::MIN,
                        _ => nnz as i32 + 1 + g.below(5000) as i32,
                    };
                }
                6 if !cols.is_empty() => {
                    let at = g.below(cols.len() as u64) as usize;
                    cols[at] = g.pick(&[n as i32, n as i32 + 7, -1, i32::MIN, i32::MAX]);
                }
                _ => x_len = n + 1,
            }
        }
    }
    // The documented order: Csr::new (row_ptr length, then col_indices
    // length), then spmv: x's length, row_ptr[0] and row_ptr[m] on the
    // host, then a decreasing row_ptr before a bad column.
    let want = if row_ptr.len() != m + 1 {
        Want::Arg("row_ptr")
    } else if cols.len() != vals.len() {
        Want::Arg("col_indices")
    } else if x_len != n {
        Want::Arg("x")
    } else if row_ptr[0] != 0
        || row_ptr[m] as i64 != nnz as i64
        || row_ptr.windows(2).any(|w| w[1] < w[0])
    {
        Want::Arg("row_ptr")
    } else if cols.iter().any(|&c| c < 0 || c as usize >= n) {
        Want::Arg("col_indices")
    } else {
        Want::Ok
    };
    // y = alpha A x + beta y (spmv_axpby) in a third of the cases (drawn
    // last: the inputs above do not move); y's old values hold NaN and
    // infinities when beta = 0 (not read then).
    let scale = g.chance(1, 3).then(|| {
        let alpha = g.pick(&[1.0f32, 0.0, -0.5, 2.5, 1e-3]);
        let beta = g.pick(&[0.0f32, 1.0, -1.0, 0.75, 1e3]);
        let old: Vec<f32> = (0..m)
            .map(|_| match g.below(8) {
                0 if beta == 0.0 => f32::NAN,
                1 if beta == 0.0 => f32::NEG_INFINITY,
                v => (v as f32 - 4.0) * 0.375,
            })
            .collect();
        (alpha, beta, old)
    });
    let what = format!(
        "spmv {} m={m} n={n} nnz={nnz} row_ptr={} cols={} x={x_len}{}",
        dtype_name::<T>(),
        row_ptr.len(),
        cols.len(),
        scale
            .as_ref()
            .map_or(String::new(), |(a, b, _)| format!(" alpha={a} beta={b}"))
    );
    let mut xv = xs.clone();
    xv.resize(x_len, T::from_bits(0));
    let x = dev.upload(&xv).expect("upload");
    let a = Csr::new(
        dev.upload(&vals).expect("upload"),
        dev.upload(&cols).expect("upload"),
        dev.upload(&row_ptr).expect("upload"),
        (m, n),
    );
    let result = a.and_then(|a| match &scale {
        None => spmv(dev, &a, &x),
        Some((alpha, beta, old)) => {
            let mut y = dev.upload(old).expect("upload");
            spmv_axpby(dev, *alpha, &a, &x, *beta, &mut y).map(|()| y)
        }
    });
    let Some(y) = outcome(&what, want, result) else {
        return;
    };
    let y = y.download().expect("download");
    assert_eq!(y.len(), m, "{what}: length");
    // The reference of the arrays as passed (two changes may undo each
    // other's lengths, not their contents: a popped column pushed back as 0).
    let host = HostCsr {
        shape: (m, n),
        row_ptr,
        col_indices: cols,
        values: vals.iter().map(|v| v.to_f64() as f32).collect(),
    };
    let x64: Vec<f64> = xs.iter().map(|v| v.to_f64()).collect();
    let want_y = host.reference_spmv(&x64);
    let bounds = host.spmv_error_bounds(&x64);
    for r in 0..m {
        let got = f64::from(y[r]);
        if host.row_ptr[r] == host.row_ptr[r + 1] && scale.is_none() {
            assert!(got == 0.0, "{what}: empty row {r}: got {got}, want 0");
        }
        // After a non-finite product the global bound is infinite: such rows
        // are summed again in order from their own products (the sequential
        // bound of the row).
        let nonzeros = host.row_ptr[r] as usize..host.row_ptr[r + 1] as usize;
        let bound = if bounds[r].is_finite() {
            bounds[r]
        } else {
            let row_abs: f64 = nonzeros
                .clone()
                .map(|j| abs_finite(f64::from(host.values[j]) * x64[host.col_indices[j] as usize]))
                .sum();
            (nonzeros.len() as f64 + 2.0) * 2f64.powi(-24) * row_abs
        };
        // spmv_axpby: alpha s + beta y_old, within |alpha| times the bound
        // plus 2u (|alpha s| + |beta y_old|) (y_old not read when beta = 0).
        let (want, bound) = match &scale {
            None => (want_y[r], bound),
            Some((alpha, beta, old)) => {
                let (al, be) = (f64::from(*alpha), f64::from(*beta));
                let old = if *beta == 0.0 { 0.0 } else { f64::from(old[r]) };
                let scaled = al.abs() * (abs_finite(want_y[r]) + bound) + (be * old).abs();
                let u = 2f64.powi(-24);
                (
                    al * want_y[r] + be * old,
                    al.abs() * bound + 2.0 * u * scaled * (1.0 + 4.0 * u),
                )
            }
        };
        assert!(
            agree(got, want, bound),
            "{what}: row {r}: got {got}, want {want} (bound {bound})"
        );
    }
}

/// Runs `family` on `cases` deterministic pseudo-random inputs of up to 64
/// bytes (seeded by `seed`): the smoke run of a fuzz target.
pub fn smoke(family: Family, cases: usize, seed: u64) {
    let mut s = seed;
    for case in 0..cases {
        let mut next = || {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let len = (next() % 65) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if let Err(e) = std::panic::catch_unwind(|| family(&bytes)) {
            panic!(
                "case {case} (input {bytes:02x?}) failed: {}",
                panic_text(&*e)
            );
        }
    }
}

/// The message of a caught panic.
pub fn panic_text(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".into())
}
