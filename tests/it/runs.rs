//! Runs of equal keys (RUNHEADS, `unique_consecutive`, `unique`, reductions by key)
//! against CPU references: every key type, lengths around the tile and
//! core boundaries, keys with NaN payloads, both zeros and infinities.

use ascend_scan::{
    max_by_key, min_by_key, run_heads, run_heads_on, sort_pairs, sum_by_key, unique,
    unique_consecutive, Device, Error, RunKey, SegSumAlgorithm, SegSumOptions, SortOptions,
};
use half::{bf16, f16};
use testkit::data::{i8_data, words};
use testkit::device;

/// A key type with the reference equality of [`RunKey`].
trait Key: RunKey + Copy + std::fmt::Debug {
    /// A key from a small alphabet (`pick` below 1000), or a special one.
    fn make(pick: u64, special: bool) -> Self;
    /// Equal as runs count it: floats by value, integers by bits.
    fn same(a: Self, b: Self) -> bool;
    fn bits(self) -> u64;
    /// The value (integers exactly), for the sort order.
    fn f64(self) -> f64;
}
macro_rules! float_key {
    ($($t:ident: $nan:expr),*) => {$(
        impl Key for $t {
            fn make(pick: u64, special: bool) -> Self {
                match pick {
                    0..=19 if special => $t::from_bits($nan | (pick as u16 & 7)),
                    20..=29 if special => $t::INFINITY,
                    30..=39 if special => $t::NEG_INFINITY,
                    40..=99 => $t::from_f32(0.0),
                    100..=159 => $t::from_f32(-0.0),
                    _ => $t::from_f32((pick % 7) as f32 - 3.0),
                }
            }
            fn same(a: Self, b: Self) -> bool {
                a.to_f64() == b.to_f64()
            }
            fn bits(self) -> u64 {
                u64::from(self.to_bits())
            }
            fn f64(self) -> f64 {
                self.to_f64()
            }
        }
    )*};
}
float_key!(f16: 0x7e00, bf16: 0x7fc0);
impl Key for f32 {
    fn make(pick: u64, special: bool) -> Self {
        match pick {
            0..=19 if special => f32::from_bits(0x7fc0_0000 | pick as u32),
            20..=29 if special => f32::INFINITY,
            30..=39 if special => f32::NEG_INFINITY,
            40..=99 => 0.0,
            100..=159 => -0.0,
            _ => (pick % 7) as f32 * 1e30 - 3e30,
        }
    }
    fn same(a: Self, b: Self) -> bool {
        a == b
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn f64(self) -> f64 {
        f64::from(self)
    }
}
macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            fn make(pick: u64, _special: bool) -> Self {
                // Extremes of the type and neighbours that differ in one bit.
                match pick % 6 {
                    0 => <$t>::MIN,
                    1 => <$t>::MAX,
                    2 => <$t>::MIN ^ 1,
                    k => (k as $t).wrapping_mul(0x1111 as $t),
                }
            }
            fn same(a: Self, b: Self) -> bool {
                a == b
            }
            fn bits(self) -> u64 {
                self as u64
            }
            fn f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
int_key!(i16, u16, i32, u32);

/// Keys in runs: a run's length is 1..=2 * mean_run - 1, its key drawn from
/// the alphabet (neighbouring runs may draw the same key and merge).
fn keys<K: Key>(n: usize, mean_run: u64, seed: u64, special: bool) -> Vec<K> {
    let mut out = Vec::with_capacity(n);
    let mut w = words(2 * n + 2, seed);
    while out.len() < n {
        let len = 1 + w.next().unwrap() % (2 * mean_run - 1);
        let key = K::make(w.next().unwrap() % 1000, special);
        for _ in 0..len.min((n - out.len()) as u64) {
            out.push(key);
        }
    }
    out
}

fn ref_flags<K: Key>(k: &[K]) -> Vec<i8> {
    (0..k.len())
        .map(|i| i8::from(i == 0 || !K::same(k[i], k[i - 1])))
        .collect()
}

/// Checks the flags and the runs of `k` exactly; returns the reference flags.
fn check_runs<K: Key>(dev: &Device, k: &[K], what: &str) -> Vec<i8> {
    let want = ref_flags(k);
    let kd = dev.upload(k).unwrap();
    assert_eq!(
        run_heads(dev, &kd).unwrap().download().unwrap(),
        want,
        "{what}: flags"
    );
    let runs = unique_consecutive(dev, &kd).unwrap();
    let starts: Vec<i32> = (0..k.len())
        .filter(|&i| want[i] == 1)
        .map(|i| i as i32)
        .collect();
    assert_eq!(runs.count, starts.len(), "{what}: count");
    assert_eq!(
        runs.flags.download().unwrap(),
        want,
        "{what}: the runs' flags"
    );
    let mut offsets = starts.clone();
    offsets.push(k.len() as i32);
    assert_eq!(runs.download_offsets().unwrap(), offsets, "{what}: offsets");
    let lengths: Vec<usize> = offsets.windows(2).map(|w| (w[1] - w[0]) as usize).collect();
    assert_eq!(runs.download_lengths().unwrap(), lengths, "{what}: lengths");
    let got = runs.download_keys().unwrap();
    for (j, &s) in starts.iter().enumerate() {
        assert_eq!(
            got[j].bits(),
            k[s as usize].bits(),
            "{what}: key of run {j} (bits of its first key)"
        );
    }
    want
}

/// Lengths around a tile of 16-bit keys (8192) and of 32-bit keys (4096),
/// the compare repeat (128) and the cores' shares (40 cores).
const LENGTHS: [usize; 12] = [
    1,
    2,
    127,
    129,
    4095,
    4097,
    8191,
    8193,
    40 * 128 + 1,
    40 * 4096 + 77,
    40 * 8192 * 2 + 3,
    333_333,
];

fn every_length<K: Key>(name: &str) {
    let dev = device();
    for (i, &n) in LENGTHS.iter().enumerate() {
        for (mean, special) in [(1, false), (3, true), (400, true)] {
            let k = keys::<K>(n, mean, 11 + i as u64 + mean, special);
            check_runs(&dev, &k, &format!("{name} n={n} mean run {mean}"));
        }
    }
}

#[test]
fn f16_keys_every_length() {
    every_length::<f16>("f16");
}
#[test]
fn bf16_keys_every_length() {
    every_length::<bf16>("bf16");
}
#[test]
fn f32_keys_every_length() {
    every_length::<f32>("f32");
}
#[test]
fn i16_and_u16_keys_every_length() {
    every_length::<i16>("i16");
    every_length::<u16>("u16");
}
#[test]
fn i32_and_u32_keys_every_length() {
    every_length::<i32>("i32");
    every_length::<u32>("u32");
}

#[test]
fn constant_distinct_and_special_rows() {
    let dev = device();
    let n = 40 * 4096 + 5;
    // One run; every key its own run; alternating; every NaN its own run;
    // -0 and +0 one run.
    check_runs(&dev, &vec![7i32; n], "constant");
    check_runs(&dev, &(0..n as i32).collect::<Vec<_>>(), "distinct");
    check_runs(
        &dev,
        &(0..n).map(|i| (i % 2) as u16).collect::<Vec<_>>(),
        "alternating",
    );
    check_runs(&dev, &vec![f32::NAN; n], "NaN");
    let zeros: Vec<f16> = (0..n)
        .map(|i| f16::from_f32(if i % 3 == 0 { -0.0 } else { 0.0 }))
        .collect();
    assert_eq!(
        check_runs(&dev, &zeros, "zeros")
            .iter()
            .filter(|&&f| f == 1)
            .count(),
        1
    );
    // Bits that differ only past f16/bf16 precision in f32 are different keys.
    let close: Vec<f32> = (0..n)
        .map(|i| 1.0 + (i / 5) as f32 * f32::EPSILON)
        .collect();
    check_runs(&dev, &close, "f32 neighbours");
    let ints: Vec<i16> = (0..n)
        .map(|i| if (i / 7) % 2 == 0 { -1 } else { i16::MAX })
        .collect();
    check_runs(&dev, &ints, "i16 extremes");
}

/// The CPU reference of `unique`: the keys in sort order (floats: -inf <
/// ... < -0 = +0 < ... < +inf < NaN, stable), then the runs of
/// [`Key::same`].
fn check_unique<K: Key>(dev: &Device, k: &[K], what: &str) {
    let rank = |v: K| {
        let f = v.f64();
        if f.is_nan() {
            (1u8, 0.0)
        } else {
            (0, f)
        }
    };
    let mut order: Vec<usize> = (0..k.len()).collect();
    order.sort_by(|&a, &b| rank(k[a]).partial_cmp(&rank(k[b])).unwrap()); // stable
    let sorted: Vec<K> = order.iter().map(|&i| k[i]).collect();
    let f = ref_flags(&sorted);
    let got = unique(dev, &dev.upload(k).unwrap()).unwrap();
    let got_order = got.order.download().unwrap();
    assert_eq!(
        got_order,
        order.iter().map(|&i| i as i32).collect::<Vec<_>>(),
        "{what}: order"
    );
    let starts: Vec<usize> = (0..k.len()).filter(|&i| f[i] == 1).collect();
    assert_eq!(got.runs.count, starts.len(), "{what}: distinct keys");
    let keys = got.runs.download_keys().unwrap();
    for (j, &s) in starts.iter().enumerate() {
        assert_eq!(keys[j].bits(), sorted[s].bits(), "{what}: key {j}");
    }
    let lengths: Vec<usize> = starts
        .iter()
        .enumerate()
        .map(|(j, &s)| starts.get(j + 1).copied().unwrap_or(k.len()) - s)
        .collect();
    assert_eq!(
        got.runs.download_lengths().unwrap(),
        lengths,
        "{what}: counts"
    );
}

#[test]
fn unique_sorts_and_counts() {
    let dev = device();
    for (i, &n) in [1usize, 2049, 70_001].iter().enumerate() {
        let seed = 60 + i as u64;
        check_unique(&dev, &keys::<f32>(n, 2, seed, true), &format!("f32 n={n}"));
        check_unique(&dev, &keys::<f16>(n, 2, seed, true), &format!("f16 n={n}"));
        check_unique(&dev, &keys::<i32>(n, 2, seed, false), &format!("i32 n={n}"));
        check_unique(&dev, &keys::<u16>(n, 2, seed, false), &format!("u16 n={n}"));
    }
}

/// Group-by over unsorted keys, as the docs of `unique` describe it:
/// sort_pairs, then sum_by_key of the sorted pairs.
#[test]
fn sums_over_unsorted_keys_by_sorting_the_pairs() {
    let dev = device();
    let n = 50_003;
    let k: Vec<i32> = words(n, 4).map(|w| (w % 97) as i32 - 48).collect();
    let x: Vec<f16> = words(n, 5)
        .map(|w| f16::from_f32((w % 17) as f32 - 8.0))
        .collect();
    let sorted = sort_pairs(
        &dev,
        &dev.upload(&k).unwrap(),
        &dev.upload(&x).unwrap(),
        SortOptions::default(),
    )
    .unwrap();
    let by = sum_by_key(&dev, &sorted.keys, &sorted.values, SegSumOptions::default()).unwrap();
    let keys = by.runs.download_keys().unwrap();
    let sums = by.reduced.download().unwrap();
    assert_eq!(keys, (-48..=48).collect::<Vec<i32>>());
    for (key, sum) in keys.iter().zip(&sums) {
        // Small integers: every partial sum is exact in f32.
        let want: f32 = k
            .iter()
            .zip(&x)
            .filter(|(a, _)| *a == key)
            .map(|(_, v)| v.to_f32())
            .sum();
        assert_eq!(*sum, want, "key {key}");
    }
}

#[test]
fn empty_keys_have_no_run() {
    let dev = device();
    let kd = dev.upload::<i32>(&[]).unwrap();
    assert!(run_heads(&dev, &kd).unwrap().is_empty());
    let runs = unique_consecutive(&dev, &kd).unwrap();
    assert_eq!(runs.count, 0);
    assert_eq!(runs.download_offsets().unwrap(), vec![0]);
    let vd = dev.upload::<i8>(&[]).unwrap();
    let by = sum_by_key(&dev, &kd, &vd, SegSumOptions::default()).unwrap();
    assert_eq!(by.reduced.count, 0);
    let hd = dev.upload::<f16>(&[]).unwrap();
    let by = max_by_key(&dev, &kd, &hd).unwrap();
    assert_eq!((by.runs.count, by.reduced.values.len()), (0, 0));
}

#[test]
fn sums_by_key_match_the_reference() {
    let dev = device();
    for (i, &n) in [1usize, 4097, 40 * 4096 + 77, 333_333].iter().enumerate() {
        let k = keys::<i32>(n, 50, 90 + i as u64, false);
        let f = ref_flags(&k);
        let kd = dev.upload(&k).unwrap();
        let x8 = i8_data(n, 7 + i as u64);
        let by = sum_by_key(
            &dev,
            &kd,
            &dev.upload(&x8).unwrap(),
            SegSumOptions::default(),
        )
        .unwrap();
        assert_eq!(by.runs.count, f.iter().filter(|&&v| v == 1).count());
        let got = by.reduced.download().unwrap();
        crate::segscan::check_sum_values(&x8, &f, &got, SegSumAlgorithm::SegScan);
        let xh = testkit::data::f16_data(n, 70 + i as u64);
        for algorithm in [SegSumAlgorithm::SegScan, SegSumAlgorithm::Scd] {
            let by = sum_by_key(
                &dev,
                &kd,
                &dev.upload(&xh).unwrap(),
                SegSumOptions { algorithm },
            )
            .unwrap();
            crate::segscan::check_sum_values(&xh, &f, &by.reduced.download().unwrap(), algorithm);
        }
        let xf = testkit::data::f32_data(n, 80 + i as u64);
        let by = sum_by_key(
            &dev,
            &kd,
            &dev.upload(&xf).unwrap(),
            SegSumOptions::default(),
        )
        .unwrap();
        let got = by.reduced.download().unwrap();
        crate::segscan::check_sum_values(&xf, &f, &got, SegSumAlgorithm::Auto);
    }
}

#[test]
fn extrema_by_key_match_the_reference() {
    let dev = device();
    for (i, &n) in [1usize, 1025, 40 * 4096 + 77].iter().enumerate() {
        let k = keys::<u16>(n, 30, 40 + i as u64, false);
        let f = ref_flags(&k);
        let mut offsets: Vec<i32> = (0..n).filter(|&j| f[j] == 1).map(|j| j as i32).collect();
        offsets.push(n as i32);
        let kd = dev.upload(&k).unwrap();
        let x: Vec<f32> = crate::segextrema::values(n, 3 + i as u64, true);
        let xd = dev.upload(&x).unwrap();
        let max = max_by_key(&dev, &kd, &xd).unwrap();
        crate::segextrema::compare(&x, &offsets, true, &max.reduced, &format!("max n={n}"));
        let min = min_by_key(&dev, &kd, &xd).unwrap();
        crate::segextrema::compare(&x, &offsets, false, &min.reduced, &format!("min n={n}"));
        assert_eq!(min.runs.count, offsets.len() - 1);
    }
}

#[test]
fn stream_form_writes_the_callers_flags() {
    let dev = device();
    let k = keys::<bf16>(50_000, 4, 5, true);
    let kd = dev.upload(&k).unwrap();
    let mut flags = dev.upload(&vec![9i8; k.len()]).unwrap();
    let stream = dev.create_stream().unwrap();
    run_heads_on(&stream, &kd, &mut flags).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(flags.download().unwrap(), ref_flags(&k));
}

fn invalid<T>(r: Result<T, Error>) -> (&'static str, String) {
    match r {
        Err(Error::InvalidArgument { name, reason }) => (name, reason),
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn errors_name_the_argument() {
    let dev = device();
    let other = Device::simulated(dev.soc()).unwrap();
    let kd = dev.upload(&[1i32, 1, 2]).unwrap();
    let short = dev.upload(&[1i8, 2]).unwrap();
    let (name, reason) = invalid(sum_by_key(&dev, &kd, &short, SegSumOptions::default()));
    assert_eq!(name, "values");
    assert!(reason.contains("2 values for 3 keys"), "{reason}");
    let far = other.upload(&[1i32, 1, 2]).unwrap();
    assert_eq!(invalid(unique_consecutive(&dev, &far)).0, "keys");
    let xd = other.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    assert_eq!(invalid(max_by_key(&dev, &kd, &xd)).0, "values");
    let stream = dev.create_stream().unwrap();
    let mut flags = dev.upload(&[0i8; 2]).unwrap();
    assert_eq!(invalid(run_heads_on(&stream, &kd, &mut flags)).0, "flags");
}

fn any_key(ty: usize, n: usize, mean: u64, seed: u64) {
    let dev = device();
    let what = format!("type {ty} n={n} mean run {mean} seed {seed}");
    let _flags = match ty {
        0 => check_runs(&dev, &keys::<f16>(n, mean, seed, true), &what),
        1 => check_runs(&dev, &keys::<bf16>(n, mean, seed, true), &what),
        2 => check_runs(&dev, &keys::<f32>(n, mean, seed, true), &what),
        3 => check_runs(&dev, &keys::<i16>(n, mean, seed, false), &what),
        4 => check_runs(&dev, &keys::<u16>(n, mean, seed, false), &what),
        5 => check_runs(&dev, &keys::<i32>(n, mean, seed, false), &what),
        _ => check_runs(&dev, &keys::<u32>(n, mean, seed, false), &what),
    };
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

    /// Random lengths up to 2^19, run lengths from 1 to thousands, every
    /// key type.
    #[test]
    fn random_keys(ty in 0usize..7, log in 0u32..=19, frac in 0.0f64..1.0, mean in 1u64..2000, seed in 0u64..u64::MAX) {
        let n = ((1u64 << log) as f64 * (0.5 + frac / 2.0)).max(1.0) as usize;
        any_key(ty, n, mean, seed);
    }
}
