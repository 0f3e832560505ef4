//! COMPRESS and SPLIT (SPLITIND) through the safe API against a sequential
//! CPU reference. Values are compared bit for bit (random bit patterns, so
//! NaN payloads, -0.0 and subnormals are included), indices and counts
//! exactly.

use ascend_scan::{
    compress, compress_with, split, split_with, CompressOptions, Device, Error, Soc, SplitOptions,
    SplitValue,
};
use half::{bf16, f16};
use proptest::prelude::*;
use testkit::data::words;
use testkit::device;

/// Value types with their bit patterns.
trait Val: SplitValue + std::fmt::Debug {
    fn from_bits(bits: u32) -> Self;
    fn to_bits(self) -> u32;
}

macro_rules! val {
    ($($t:ty: $from:expr, $to:expr);* $(;)?) => {$(
        impl Val for $t {
            fn from_bits(bits: u32) -> Self {
                ($from)(bits)
            }
            fn to_bits(self) -> u32 {
                ($to)(self)
            }
        }
    )*};
}
val! {
    f16: |b: u32| f16::from_bits(b as u16), |v: f16| u32::from(v.to_bits());
    bf16: |b: u32| bf16::from_bits(b as u16), |v: bf16| u32::from(v.to_bits());
    i16: |b: u32| b as u16 as i16, |v: i16| u32::from(v as u16);
    u16: |b: u32| b as u16, |v: u16| u32::from(v);
    i32: |b: u32| b as i32, |v: i32| v as u32;
    f32: f32::from_bits, f32::to_bits;
}

fn values<T: Val>(n: usize, seed: u64) -> Vec<T> {
    words(n, seed)
        .map(|w| T::from_bits((w >> 16) as u32))
        .collect()
}

/// Flag patterns.
#[derive(Debug, Clone, Copy)]
enum Pattern {
    Zeros,
    Ones,
    Alternating,
    FirstAndLast,
    /// Ones with probability `per_mille` / 1000.
    Random {
        per_mille: u32,
        seed: u64,
    },
}

fn flags(n: usize, p: Pattern) -> Vec<i8> {
    match p {
        Pattern::Zeros => vec![0; n],
        Pattern::Ones => vec![1; n],
        Pattern::Alternating => (0..n).map(|i| (i % 2) as i8).collect(),
        Pattern::FirstAndLast => (0..n).map(|i| i8::from(i == 0 || i + 1 == n)).collect(),
        Pattern::Random { per_mille, seed } => words(n, seed)
            .map(|w| i8::from(((w >> 20) % 1000) < u64::from(per_mille)))
            .collect(),
    }
}

/// Sequential reference: (kept values' bits, kept indices) then (dropped ...).
fn reference<T: Val>(xs: &[T], fs: &[i8]) -> (Vec<u32>, Vec<i32>, Vec<u32>, Vec<i32>) {
    let (mut v1, mut i1, mut v0, mut i0) = (vec![], vec![], vec![], vec![]);
    for (i, (&x, &f)) in xs.iter().zip(fs).enumerate() {
        if f == 1 {
            v1.push(x.to_bits());
            i1.push(i as i32);
        } else {
            v0.push(x.to_bits());
            i0.push(i as i32);
        }
    }
    (v1, i1, v0, i0)
}

fn first_mismatch<A: PartialEq + std::fmt::Debug>(what: &str, got: &[A], want: &[A]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: first mismatch at {i} of {}: got {:?}, want {:?}",
            got.len(),
            got[i],
            want[i]
        );
    }
}

/// Runs compress (with and without indices) and split on one input and
/// compares everything with the reference.
fn check<T: Val>(xs: &[T], fs: &[i8]) {
    let dev = device();
    let (v1, i1, v0, i0) = reference(xs, fs);
    let tag = format!("{} n={}", std::any::type_name::<T>(), xs.len());
    let x = dev.upload(xs).unwrap();
    let f = dev.upload(fs).unwrap();

    let c = compress_with(&dev, &x, &f, CompressOptions { want_indices: true }).unwrap();
    assert_eq!(c.count, v1.len(), "{tag}: compress count");
    let got: Vec<u32> = c
        .download_values()
        .unwrap()
        .into_iter()
        .map(T::to_bits)
        .collect();
    first_mismatch(&format!("{tag}: compress values"), &got, &v1);
    let idx = c
        .download_indices()
        .unwrap()
        .expect("indices were asked for");
    first_mismatch(&format!("{tag}: compress indices"), &idx, &i1);

    let c = compress(&dev, &x, &f).unwrap();
    assert_eq!(c.count, v1.len(), "{tag}: compress count (no indices)");
    assert!(c.indices.is_none());
    let got: Vec<u32> = c
        .download_values()
        .unwrap()
        .into_iter()
        .map(T::to_bits)
        .collect();
    first_mismatch(&format!("{tag}: compress values (no indices)"), &got, &v1);

    let s = split(&dev, &x, &f).unwrap();
    assert_eq!(s.ones, v1.len(), "{tag}: split ones");
    let got: Vec<u32> = s
        .values
        .download()
        .unwrap()
        .into_iter()
        .map(T::to_bits)
        .collect();
    let want: Vec<u32> = v1.iter().chain(&v0).copied().collect();
    first_mismatch(&format!("{tag}: split values"), &got, &want);
    let want: Vec<i32> = i1.iter().chain(&i0).copied().collect();
    let idx = s
        .indices
        .expect("split returns indices")
        .download()
        .unwrap();
    first_mismatch(&format!("{tag}: split indices"), &idx, &want);

    let s = split_with(
        &dev,
        &x,
        &f,
        SplitOptions {
            want_indices: false,
        },
    )
    .unwrap();
    assert_eq!(s.ones, v1.len(), "{tag}: split ones (no indices)");
    assert!(s.indices.is_none());
    let got: Vec<u32> = s
        .values
        .download()
        .unwrap()
        .into_iter()
        .map(T::to_bits)
        .collect();
    let want: Vec<u32> = v1.iter().chain(&v0).copied().collect();
    first_mismatch(&format!("{tag}: split values (no indices)"), &got, &want);
}

const PATTERNS: [Pattern; 7] = [
    Pattern::Zeros,
    Pattern::Ones,
    Pattern::Alternating,
    Pattern::FirstAndLast,
    Pattern::Random {
        per_mille: 500,
        seed: 1,
    },
    Pattern::Random {
        per_mille: 20,
        seed: 2,
    },
    Pattern::Random {
        per_mille: 990,
        seed: 3,
    },
];

fn edge_lengths<T: Val>() {
    for (k, n) in [0usize, 1, 31, 32, 33, 127, 129, 4095, 4096, 4097]
        .into_iter()
        .enumerate()
    {
        for p in PATTERNS {
            check::<T>(&values(n, k as u64 + 7), &flags(n, p));
        }
    }
}

testkit::per_dtype!(edge_lengths: f16, bf16, i16, u16, i32, f32);

/// Ranges of all 20 vector cores (910B4), with a partial last tile; core
/// boundaries fall inside 32-byte blocks of the outputs.
#[test]
fn multi_core() {
    let n = 40 * 4096 + 3;
    for p in [
        Pattern::Alternating,
        Pattern::Random {
            per_mille: 300,
            seed: 11,
        },
        Pattern::FirstAndLast,
    ] {
        check::<f16>(&values(n, 5), &flags(n, p));
        check::<f32>(&values(n, 6), &flags(n, p));
    }
    check::<i16>(&values(n, 8), &flags(n, Pattern::Ones));
    check::<i32>(&values(n, 9), &flags(n, Pattern::Zeros));
}

/// COMPRESS runs in waves whose traffic fits in the L2 (910B4: 96 MiB L2;
/// f16 with indices moves at most 9 bytes per element): three waves, the
/// last partial.
#[test]
fn compress_in_waves() {
    let dev = device();
    let n = (1 << 24) + (1 << 23) + 4097;
    let xs = values::<f16>(n, 12);
    let fs = flags(
        n,
        Pattern::Random {
            per_mille: 700,
            seed: 13,
        },
    );
    let (v1, i1, _, _) = reference(&xs, &fs);
    let x = dev.upload(&xs).unwrap();
    let f = dev.upload(&fs).unwrap();
    let c = compress_with(&dev, &x, &f, CompressOptions { want_indices: true }).unwrap();
    assert_eq!(c.count, v1.len());
    let got: Vec<u32> = c
        .download_values()
        .unwrap()
        .into_iter()
        .map(Val::to_bits)
        .collect();
    first_mismatch("waves: values", &got, &v1);
    let idx = c.download_indices().unwrap().unwrap();
    first_mismatch("waves: indices", &idx, &i1);
    // A bad flag in the last wave.
    let mut fs = fs;
    fs[n - 2] = 3;
    let f = dev.upload(&fs).unwrap();
    assert!(matches!(
        compress(&dev, &x, &f),
        Err(Error::InvalidArgument { name: "flags", .. })
    ));
}

/// SPLIT past the L2 (910B4, f16 with indices: more than about 10M
/// elements) caches the flags as bits in phase 1 and reads those in phase 2.
#[test]
fn split_with_bit_cache() {
    let dev = device();
    let n = 61 * 40 * 4096 + 4097;
    let xs = values::<f16>(n, 14);
    let fs = flags(
        n,
        Pattern::Random {
            per_mille: 400,
            seed: 15,
        },
    );
    let (v1, i1, v0, i0) = reference(&xs, &fs);
    let x = dev.upload(&xs).unwrap();
    let f = dev.upload(&fs).unwrap();
    let s = split(&dev, &x, &f).unwrap();
    assert_eq!(s.ones, v1.len());
    let got: Vec<u32> = s
        .values
        .download()
        .unwrap()
        .into_iter()
        .map(Val::to_bits)
        .collect();
    let want: Vec<u32> = v1.iter().chain(&v0).copied().collect();
    first_mismatch("bit cache: values", &got, &want);
    let want: Vec<i32> = i1.iter().chain(&i0).copied().collect();
    first_mismatch(
        "bit cache: indices",
        &s.indices.unwrap().download().unwrap(),
        &want,
    );
}

fn any_check(ty: usize, xs_seed: u64, n: usize, p: Pattern) {
    match ty {
        0 => check::<f16>(&values(n, xs_seed), &flags(n, p)),
        1 => check::<bf16>(&values(n, xs_seed), &flags(n, p)),
        2 => check::<i16>(&values(n, xs_seed), &flags(n, p)),
        3 => check::<u16>(&values(n, xs_seed), &flags(n, p)),
        4 => check::<i32>(&values(n, xs_seed), &flags(n, p)),
        _ => check::<f32>(&values(n, xs_seed), &flags(n, p)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Random lengths up to 2^20, random densities, every value type.
    #[test]
    fn random_inputs(
        ty in 0usize..6,
        log in 0u32..=20,
        frac in 0.0f64..1.0,
        per_mille in 0u32..=1000,
        seed in any::<u64>(),
    ) {
        let n = ((1u64 << log) as f64 * (0.5 + frac / 2.0)) as usize;
        any_check(ty, seed, n, Pattern::Random { per_mille, seed: seed ^ 0x5555 });
    }
}

#[test]
fn bad_flags_are_refused() {
    let dev = device();
    let n = 3 * 4096 + 5;
    for (at, bad) in [(0usize, 2i8), (n - 1, -1), (4096 * 2 + 77, 127), (17, -128)] {
        let mut fs = flags(n, Pattern::Alternating);
        fs[at] = bad;
        let x = dev.upload(&values::<f16>(n, 3)).unwrap();
        let f = dev.upload(&fs).unwrap();
        for r in [
            compress(&dev, &x, &f).map(|_| ()),
            split(&dev, &x, &f).map(|_| ()),
        ] {
            match r {
                Err(Error::InvalidArgument {
                    name: "flags",
                    reason,
                }) => {
                    assert!(reason.contains(&bad.to_string()), "{reason}")
                }
                other => panic!("flag {bad} at {at}: {other:?}"),
            }
        }
    }
    // A bad flag on another core than the first (multi-core input).
    let n = 40 * 4096;
    let mut fs = flags(n, Pattern::Zeros);
    fs[n - 4096 + 3] = 5;
    let x = dev.upload(&values::<i32>(n, 4)).unwrap();
    let f = dev.upload(&fs).unwrap();
    assert!(matches!(
        split(&dev, &x, &f),
        Err(Error::InvalidArgument { name: "flags", .. })
    ));
}

#[test]
fn length_mismatch_and_other_device_are_refused() {
    let dev = device();
    let x = dev.upload(&values::<u16>(100, 1)).unwrap();
    let f = dev.upload(&flags(99, Pattern::Ones)).unwrap();
    assert!(matches!(
        compress(&dev, &x, &f),
        Err(Error::InvalidArgument { name: "flags", .. })
    ));
    assert!(matches!(
        split(&dev, &x, &f),
        Err(Error::InvalidArgument { name: "flags", .. })
    ));
    let other = Device::simulated(Soc::Ascend910B4).unwrap();
    let f = dev.upload(&flags(100, Pattern::Ones)).unwrap();
    let x_other = other.upload(&values::<u16>(100, 1)).unwrap();
    let f_other = other.upload(&flags(100, Pattern::Ones)).unwrap();
    assert!(matches!(
        compress(&dev, &x_other, &f),
        Err(Error::InvalidArgument { name: "values", .. })
    ));
    assert!(matches!(
        split(&dev, &x, &f_other),
        Err(Error::InvalidArgument { name: "flags", .. })
    ));
}

#[test]
fn empty_input_needs_no_launch() {
    // Its own device: the reports of the other tests do not mix in.
    let dev = Device::simulated(Soc::Ascend910B4).unwrap();
    let x = dev.upload::<f32>(&[]).unwrap();
    let f = dev.upload::<i8>(&[]).unwrap();
    dev.take_reports();
    let c = compress_with(&dev, &x, &f, CompressOptions { want_indices: true }).unwrap();
    assert_eq!(c.count, 0);
    assert_eq!(c.download_indices().unwrap(), Some(vec![]));
    let s = split(&dev, &x, &f).unwrap();
    assert_eq!((s.ones, s.values.len()), (0, 0));
    assert_eq!(s.indices.map(|i| i.len()), Some(0));
    assert!(dev.take_reports().is_empty());
}
