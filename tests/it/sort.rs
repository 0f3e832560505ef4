//! RADIXSORT through the safe API against a stable CPU sort (torch's order:
//! NaN last / first in descending order, -0.0 equal to +0.0). Keys are
//! compared bit for bit, indices exactly.

use ascend_scan::{
    argsort, sort, topk, Batch, Device, SortAlgorithm, SortKey, SortOptions, TopkKey, TopkOptions,
};
use half::{bf16, f16};
use proptest::prelude::*;
use std::cmp::Ordering;
use testkit::data::words;
use testkit::device;

/// Key types with their bit patterns and torch's comparison.
trait Key: SortKey + std::fmt::Debug {
    /// The key of the low bits of `bits`.
    fn from_bits(bits: u32) -> Self;
    fn to_bits(self) -> u32;
    fn order(a: Self, b: Self) -> Ordering;
}

fn float_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        // -0.0 == +0.0 here.
        (false, false) => a.partial_cmp(&b).unwrap(),
    }
}

macro_rules! key {
    ($($t:ty: $from:expr, $to:expr, $ord:expr);* $(;)?) => {$(
        impl Key for $t {
            fn from_bits(bits: u32) -> Self {
                ($from)(bits)
            }
            fn to_bits(self) -> u32 {
                ($to)(self)
            }
            fn order(a: Self, b: Self) -> Ordering {
                ($ord)(a, b)
            }
        }
    )*};
}
key! {
    u8: |b: u32| b as u8, |v: u8| u32::from(v), |a: u8, b: u8| a.cmp(&b);
    i8: |b: u32| b as u8 as i8, |v: i8| u32::from(v as u8), |a: i8, b: i8| a.cmp(&b);
    u16: |b: u32| b as u16, |v: u16| u32::from(v), |a: u16, b: u16| a.cmp(&b);
    i16: |b: u32| b as i16, |v: i16| u32::from(v as u16), |a: i16, b: i16| a.cmp(&b);
    u32: |b: u32| b, |v: u32| v, |a: u32, b: u32| a.cmp(&b);
    i32: |b: u32| b as i32, |v: i32| v as u32, |a: i32, b: i32| a.cmp(&b);
    f16: |b: u32| f16::from_bits(b as u16), |v: f16| u32::from(v.to_bits()),
        |a: f16, b: f16| float_order(a.to_f64(), b.to_f64());
    bf16: |b: u32| bf16::from_bits(b as u16), |v: bf16| u32::from(v.to_bits()),
        |a: bf16, b: bf16| float_order(a.to_f64(), b.to_f64());
    f32: f32::from_bits, f32::to_bits, |a: f32, b: f32| float_order(f64::from(a), f64::from(b));
}

/// The bit patterns of a device buffer's keys.
fn bits<K: Key>(buf: &ascend_scan::DeviceBuffer<K>) -> Vec<u32> {
    buf.download()
        .unwrap()
        .into_iter()
        .map(K::to_bits)
        .collect()
}

/// Stable CPU sort of each row: (keys, indices).
fn reference<K: Key>(keys: &[K], rows: usize, descending: bool) -> (Vec<K>, Vec<i32>) {
    let n = keys.len() / rows.max(1);
    let mut out = Vec::with_capacity(keys.len());
    let mut idx = Vec::with_capacity(keys.len());
    for r in 0..rows {
        let row = &keys[r * n..(r + 1) * n];
        let mut perm: Vec<usize> = (0..n).collect();
        perm.sort_by(|&a, &b| {
            let o = K::order(row[a], row[b]);
            if descending {
                o.reverse()
            } else {
                o
            }
        });
        out.extend(perm.iter().map(|&i| row[i]));
        idx.extend(perm.iter().map(|&i| i as i32));
    }
    (out, idx)
}

fn check<K: Key>(keys: &[K], rows: usize, options: SortOptions) {
    let dev = device();
    let buf = dev.upload(keys).unwrap();
    let got = sort(&dev, Batch::rows(&buf, rows).unwrap(), options).unwrap();
    let (want_keys, want_idx) = reference(keys, rows, options.descending);
    let got_keys = bits(&got.values);
    let want_bits: Vec<u32> = want_keys.into_iter().map(K::to_bits).collect();
    let got_idx = got.indices.download().unwrap();
    let first_bad =
        (0..keys.len()).find(|&i| got_keys[i] != want_bits[i] || got_idx[i] != want_idx[i]);
    if let Some(i) = first_bad {
        panic!(
            "{} rows x {} {:?} keys, {options:?}: first difference at {i}: got key {:#06x} index {}, want {:#06x} index {}",
            rows,
            keys.len() / rows,
            std::any::type_name::<K>(),
            got_keys[i],
            got_idx[i],
            want_bits[i],
            want_idx[i]
        );
    }
}

fn random<K: Key>(n: usize, seed: u64) -> Vec<K> {
    words(n, seed)
        .map(|w| K::from_bits((w >> 20) as u32))
        .collect()
}

const ALGORITHMS: [SortAlgorithm; 2] = [SortAlgorithm::OneBit, SortAlgorithm::MultiBit];

fn options() -> impl Iterator<Item = SortOptions> {
    ALGORITHMS.into_iter().flat_map(|algorithm| {
        [false, true].map(|descending| SortOptions {
            descending,
            algorithm,
        })
    })
}

/// Adversarial key sets of length `n` for a type whose interesting bit
/// patterns are `specials`.
fn adversarial<K: Key>(n: usize, specials: &[u32]) -> Vec<Vec<K>> {
    let sorted = {
        let mut v: Vec<K> = random(n, 7);
        v.sort_by(|a, b| K::order(*a, *b));
        v
    };
    let reversed: Vec<K> = sorted.iter().rev().copied().collect();
    let mut sets = vec![
        vec![K::from_bits(0x1234); n], // all equal
        sorted,                        // already sorted
        reversed,                      // reversed
        words(n, 9).map(|w| K::from_bits((w % 3) as u32)).collect(), // many duplicates
    ];
    if !specials.is_empty() {
        // Special values everywhere, in random order.
        sets.push(
            words(n, 11)
                .map(|w| K::from_bits(specials[(w % specials.len() as u64) as usize]))
                .collect(),
        );
        // Specials mixed with random keys.
        sets.push(
            words(n, 13)
                .map(|w| {
                    if w % 4 == 0 {
                        K::from_bits(specials[((w >> 8) % specials.len() as u64) as usize])
                    } else {
                        K::from_bits((w >> 24) as u32)
                    }
                })
                .collect(),
        );
    }
    sets
}

/// f16: NaN with both sign bits and payloads, +-inf, +-0.0, subnormals,
/// extremes.
const F16_SPECIALS: &[u32] = &[
    0x7e00, 0xfe00, 0x7c01, 0xfc01, 0x7fff, 0xffff, 0x7c00, 0xfc00, 0x0000, 0x8000, 0x0001, 0x8001,
    0x03ff, 0x83ff, 0x7bff, 0xfbff, 0x3c00, 0xbc00,
];
const BF16_SPECIALS: &[u32] = &[
    0x7fc0, 0xffc0, 0x7f81, 0xff81, 0x7fff, 0xffff, 0x7f80, 0xff80, 0x0000, 0x8000, 0x0001, 0x8001,
    0x007f, 0x807f, 0x7f7f, 0xff7f, 0x3f80, 0xbf80,
];
/// f32: NaN with both sign bits and payloads (one only in the lowest bit),
/// +-inf, +-0.0, subnormals, extremes.
const F32_SPECIALS: &[u32] = &[
    0x7fc0_0000,
    0xffc0_0000,
    0x7f80_0001,
    0xff80_0001,
    0x7fff_ffff,
    0xffff_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x8000_0001,
    0x007f_ffff,
    0x807f_ffff,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x3f80_0000,
    0xbf80_0000,
];
const I32_SPECIALS: &[u32] = &[0x8000_0000, 0x7fff_ffff, 0xffff_ffff, 0, 1, 0x8000_0001];
const I16_SPECIALS: &[u32] = &[0x8000, 0x7fff, 0xffff, 0x0000, 0x0001, 0x8001];
const I8_SPECIALS: &[u32] = &[0x80, 0x7f, 0xff, 0x00, 0x01, 0x81];

/// Keys per tile of the sort kernel for keys of type K.
fn tile<K: Key>() -> usize {
    if std::mem::size_of::<K>() == 4 {
        2048
    } else {
        4096
    }
}

/// Every key set of a type at lengths that hit every edge: 1, tile +- 1,
/// several tiles, more tiles than vector cores.
fn keys_in_torch_order<K: Key>(specials: &[u32]) {
    let t = tile::<K>();
    for n in [1, 2, 127, t - 1, t, t + 1, 3 * t + 5] {
        for keys in adversarial::<K>(n, specials) {
            for o in options() {
                check(&keys, 1, o);
            }
        }
    }
}

testkit::per_dtype!(
    /// Every key set of each key type sorted in torch's order, at every
    /// edge length.
    keys_in_torch_order:
    f16(F16_SPECIALS),
    bf16(BF16_SPECIALS),
    f32(F32_SPECIALS),
    u16(&[0, 0xffff, 0x8000, 0x7fff]),
    i16(I16_SPECIALS),
    u32(&[0, 0xffff_ffff, 0x8000_0000, 0x7fff_ffff]),
    i32(I32_SPECIALS),
    u8(&[0, 0xff, 0x80, 0x7f]),
    i8(I8_SPECIALS),
);

/// Rows of up to 512 16-bit keys go through the sorting network: every
/// padding of a row to a power of two (n = 2^b - 1, 2^b, 2^b + 1), rows per
/// tile from 8 to 4096 (330 rows of 256: 16 to a tile), partial last tiles,
/// tiles of dummy rows, and the adversarial sets (ties, NaN payloads, both
/// zeros) in both orders; the longer rows (513 on) take the radix rows.
fn network_rows<K: Key>(specials: &[u32]) {
    for (rows, n) in [
        (1, 1),
        (3, 1),
        (2049, 1),
        (5, 2),
        (1, 3),
        (7, 7),
        (3, 8),
        (9, 9),
        (1, 31),
        (70, 33),
        (2, 63),
        (33, 64),
        (5, 65),
        (17, 255),
        (9, 256),
        (330, 256),
        (3, 257),
        (1, 511),
        (3, 512),
        (2, 513),
        (5, 1000),
        (2, 1023),
        (3, 1024),
        (2, 1025),
    ] {
        for keys in adversarial::<K>(rows * n, specials) {
            for descending in [false, true] {
                let o = SortOptions {
                    descending,
                    ..Default::default()
                };
                check(&keys, rows, o);
            }
        }
    }
}

testkit::per_dtype!(
    /// The sorting network's rows for every 16-bit key type.
    network_rows:
    f16(F16_SPECIALS),
    bf16(BF16_SPECIALS),
    u16(&[0, 0xffff, 0x8000, 0x7fff, 0x7ffe, 0x8001]),
    i16(I16_SPECIALS),
);

#[test]
fn rows_spread_over_cores_and_shared_between_cores() {
    // One row over every vector core (each core a few tiles), rows shared
    // by neighbouring cores, many short rows per core, one-row batches.
    for (rows, n) in [
        (1, 48 * 4096 + 77),
        (3, 20 * 4096 + 1),
        (7, 9000),
        (300, 33),
        (1, 5),
    ] {
        for o in options() {
            let keys: Vec<f16> = random(rows * n, rows as u64 * 31 + n as u64);
            check(&keys, rows, o);
        }
        let keys: Vec<i8> = random(rows * n, 5);
        check(&keys, rows, SortOptions::default());
        // 32-bit keys: tiles of half the keys, so twice the tiles per core.
        let keys: Vec<f32> = random(rows * n, 6);
        check(&keys, rows, SortOptions::default());
        let keys: Vec<i32> = random(rows * n, 8);
        let descending = SortOptions {
            descending: true,
            ..Default::default()
        };
        check(&keys, rows, descending);
    }
}

#[test]
fn negative_and_positive_zero_keep_input_order_and_sign() {
    let dev = device();
    let keys: Vec<f16> = [0x8000u16, 0x0000, 0x8000, 0x3c00, 0x0000, 0xbc00]
        .map(f16::from_bits)
        .to_vec();
    let buf = dev.upload(&keys).unwrap();
    for descending in [false, true] {
        let s = sort(
            &dev,
            &buf,
            SortOptions {
                descending,
                ..Default::default()
            },
        )
        .unwrap();
        let bits: Vec<u16> = s
            .values
            .download()
            .unwrap()
            .into_iter()
            .map(f16::to_bits)
            .collect();
        let idx = s.indices.download().unwrap();
        if descending {
            assert_eq!(bits, [0x3c00, 0x8000, 0x0000, 0x8000, 0x0000, 0xbc00]);
            assert_eq!(idx, [3, 0, 1, 2, 4, 5]);
        } else {
            assert_eq!(bits, [0xbc00, 0x8000, 0x0000, 0x8000, 0x0000, 0x3c00]);
            assert_eq!(idx, [5, 0, 1, 2, 4, 3]);
        }
    }
}

#[test]
fn empty_input_and_errors() {
    let dev = device();
    let empty = dev.upload::<u16>(&[]).unwrap();
    let s = sort(&dev, &empty, SortOptions::default()).unwrap();
    assert_eq!((s.values.len(), s.indices.len()), (0, 0));
    let other = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
    let buf = other.upload(&[1u16, 2]).unwrap();
    match sort(&dev, &buf, SortOptions::default()) {
        Err(ascend_scan::Error::InvalidArgument { name, .. }) => assert_eq!(name, "keys"),
        r => panic!("expected an error naming keys, got {r:?}"),
    }
}

/// TOPK against the stable CPU sort: sorted = its first k per row; unsorted
/// = the selected keys strictly beyond the k-th in input order, then the
/// selected ties in input order.
fn check_topk<K: Key + TopkKey>(keys: &[K], rows: usize, k: usize, options: TopkOptions) {
    let dev = device();
    let n = keys.len() / rows;
    let buf = dev.upload(keys).unwrap();
    let got = topk(&dev, Batch::rows(&buf, rows).unwrap(), k, options).unwrap();
    let (sorted, perm) = reference(keys, rows, options.largest);
    let mut want_keys = Vec::new();
    let mut want_idx = Vec::new();
    for r in 0..rows {
        let keys_r = &sorted[r * n..r * n + k];
        let idx_r = &perm[r * n..r * n + k];
        if options.sorted {
            want_keys.extend(keys_r.iter().map(|v| v.to_bits()));
            want_idx.extend_from_slice(idx_r);
        } else {
            let kth = keys_r[k - 1];
            let mut beyond: Vec<(i32, u32)> = Vec::new();
            let mut ties: Vec<(i32, u32)> = Vec::new();
            for (&i, &v) in idx_r.iter().zip(keys_r) {
                if K::order(v, kth) == Ordering::Equal {
                    ties.push((i, v.to_bits()));
                } else {
                    beyond.push((i, v.to_bits()));
                }
            }
            beyond.sort();
            ties.sort();
            for (i, b) in beyond.into_iter().chain(ties) {
                want_idx.push(i);
                want_keys.push(b);
            }
        }
    }
    let got_keys = bits(&got.values);
    let got_idx = got.indices.download().unwrap();
    assert_eq!(got_keys.len(), rows * k);
    let first_bad =
        (0..rows * k).find(|&i| got_keys[i] != want_keys[i] || got_idx[i] != want_idx[i]);
    if let Some(i) = first_bad {
        panic!(
            "topk k={k} of {rows} rows x {n} {:?}, {options:?}: first difference at {i}: got key {:#06x} index {}, want {:#06x} index {}",
            std::any::type_name::<K>(),
            got_keys[i],
            got_idx[i],
            want_keys[i],
            want_idx[i]
        );
    }
}

fn topk_options() -> impl Iterator<Item = TopkOptions> {
    [(true, true), (true, false), (false, true), (false, false)]
        .into_iter()
        .map(|(largest, sorted)| TopkOptions { largest, sorted })
}

#[test]
fn topk_of_every_key_type_and_adversarial_keys() {
    for n in [1usize, 5, 4097, 3 * 4096 + 5] {
        for k in [1, n.div_ceil(3), n] {
            for o in topk_options() {
                for keys in adversarial::<f16>(n, F16_SPECIALS) {
                    check_topk(&keys, 1, k, o);
                }
                check_topk::<bf16>(&adversarial(n, BF16_SPECIALS)[5], 1, k, o);
                check_topk::<u16>(&random(n, 3), 1, k, o);
                check_topk::<i16>(&adversarial(n, I16_SPECIALS)[5], 1, k, o);
                check_topk::<u8>(&random(n, 4), 1, k, o);
                check_topk::<i8>(&adversarial(n, I8_SPECIALS)[3], 1, k, o);
                for keys in adversarial::<f32>(n, F32_SPECIALS) {
                    check_topk(&keys, 1, k, o);
                }
            }
        }
    }
}

/// The in-kernel ordering of up to 127 keys beyond the k-th (k <= 128,
/// sorted): one and two blocks of 64 ranked keys, one and two 64-lane
/// halves, ties among the keys beyond (few distinct keys, both zeros),
/// every ordering-path key type, largest and smallest.
#[test]
fn topk_orders_up_to_128_keys_in_the_kernel() {
    let n = 3 * 4096 + 77;
    for k in [2, 9, 63, 64, 65, 66, 100, 127, 128] {
        for largest in [true, false] {
            let o = TopkOptions {
                largest,
                sorted: true,
            };
            let seed = k as u64;
            // Finite keys (random bits would put NaNs, all tied, on top).
            let finite = |seed| words(2 * n, seed).map(|w| ((w >> 11) as f32 - 4.0e15) * 1e-13);
            let halves: Vec<f16> = finite(seed).map(f16::from_f32).collect();
            check_topk(&halves, 2, k, o);
            check_topk(&finite(seed + 1).collect::<Vec<f32>>(), 2, k, o);
            check_topk::<u16>(&random(n, seed + 2), 1, k, o);
            // Ties beyond the k-th: 200 distinct keys, each about 60 times.
            let ties: Vec<i16> = words(n, seed + 3).map(|w| (w % 200) as i16 - 100).collect();
            check_topk(&ties, 1, k, o);
            let zeros: Vec<f32> = words(n, seed + 4)
                .map(|w| match w % 3 {
                    0 => 0.0,
                    1 => -0.0,
                    _ => (w % 1000) as f32 - 500.0,
                })
                .collect();
            check_topk(&zeros, 1, k, o);
            let bf: Vec<bf16> = finite(seed + 5).take(n).map(bf16::from_f32).collect();
            check_topk(&bf, 1, k, o);
            check_topk::<i8>(&random(n, seed + 6), 1, k, o);
        }
    }
}

/// Rows of NaN only (both signs, several payloads), NaN with +inf, and
/// -inf only:
/// the k smallest of an all-NaN row are its first k keys (every NaN ties,
/// above +inf). An f16 chunk of NaNs once bounded the k smallest at
/// -FLT_MAX (as if it held +inf), above its keys, and topk returned no
/// index.
#[test]
fn topk_of_rows_of_nan() {
    fn rows_of<K: Key + TopkKey>(pattern: &[u32], rows: usize, n: usize) -> Vec<K> {
        (0..rows * n)
            .map(|i| K::from_bits(pattern[(i * 7 + i / n) % pattern.len()]))
            .collect()
    }
    for (rows, n) in [(1, 5), (36, 92), (2, 300), (1, 9000)] {
        for k in [1, 2, n] {
            for o in topk_options() {
                check_topk(&rows_of::<f16>(&[0xfc00], rows, n), rows, k, o);
                check_topk(
                    &rows_of::<f16>(&[0x7e00, 0xfe00, 0x7c01, 0xffff], rows, n),
                    rows,
                    k,
                    o,
                );
                check_topk(
                    &rows_of::<f16>(&[0x7e00, 0x7c00, 0xfe00], rows, n),
                    rows,
                    k,
                    o,
                );
                check_topk(
                    &rows_of::<bf16>(&[0x7fc0, 0xffc0, 0x7f81], rows, n),
                    rows,
                    k,
                    o,
                );
                let f32_nan = [0x7fc0_0000, 0xffc0_0001, 0x7f80_0001];
                check_topk(&rows_of::<f32>(&f32_nan, rows, n), rows, k, o);
            }
        }
    }
}

#[test]
fn topk_batches_rows_shared_between_cores() {
    for (rows, n, k) in [
        (3, 20 * 4096 + 1, 50),
        (7, 9000, 4000),
        (300, 33, 2),
        (1, 48 * 4096 + 77, 1000),
        // 40 whole rows, then one row in 3 pieces: 37 cores join the SyncAll rounds idle.
        (41, 9000, 50),
    ] {
        for o in topk_options() {
            let keys: Vec<f16> = random(rows * n, rows as u64 + k as u64);
            check_topk(&keys, rows, k, o);
            // Few distinct keys: the k-th key has ties in every row and core.
            let keys: Vec<i16> = words(rows * n, 3).map(|w| (w % 5) as i16).collect();
            check_topk(&keys, rows, k, o);
        }
    }
}

/// Rows cut into pieces hand their candidates to the row's first piece in
/// 64-lane slots (one DMA per array) when no piece has more than 64: a last
/// piece of 10 keys (loaded apart) holding the row's largest keys, random
/// keys (NaN and infinities among them), one piece with a cluster of 100
/// large keys (more than a slot: every piece loaded on its own), f16 and
/// f32, largest and smallest, sorted or not.
#[test]
fn topk_pieces_hand_off_candidates_in_slots() {
    let n = 39 * 4096 + 10; // 40 pieces of 4096, the last of 10 keys
    for o in topk_options() {
        let mut keys: Vec<f16> = random(n, 7);
        for (i, key) in keys[n - 10..].iter_mut().enumerate() {
            *key = f16::from_f32(if o.largest { 60000.0 } else { -60000.0 } + i as f32);
        }
        check_topk(&keys, 1, 50, o);
        let mut cluster = keys.clone();
        for (i, key) in cluster[5 * 4096 + 7..5 * 4096 + 107].iter_mut().enumerate() {
            *key = f16::from_f32(if o.largest { 30000.0 } else { -30000.0 } + i as f32);
        }
        check_topk(&cluster, 1, 50, o);
        let wide: Vec<f32> = random(n, 8);
        check_topk(&wide, 1, 50, o);
    }
}

/// A whole row keeps its candidates in UB while they fit a tile, each
/// batch's at the next 16-lane boundary with NaN between them: rows whose
/// chunks of 128 keys hold 19..26 ties of the top key (batch counts of
/// every residue mod 16) and ten keys beyond it. About 2100 candidates of
/// 12000 keys stay in UB (f16, k = 50); 30000 keys give about 5300 (the
/// candidates move to the workspace midway, gaps and all); rows of fewer
/// chunks than k make every key a candidate. f16 and f32, largest and
/// smallest, sorted or not, one whole row per vector core.
#[test]
fn topk_keeps_whole_row_candidates_in_ub() {
    let rows = 40;
    for n in [5000usize, 12_000, 30_000] {
        for o in topk_options() {
            let sign = if o.largest { 1.0f32 } else { -1.0 };
            let mut keys: Vec<f32> = words(rows * n, n as u64)
                .map(|w| ((w >> 40) as f32 / (1u64 << 24) as f32) - 0.5)
                .collect();
            for (r, row) in keys.chunks_mut(n).enumerate() {
                for (c, chunk) in row.chunks_mut(128).enumerate() {
                    let step = chunk.len().div_ceil((20 + (c + r) % 9).min(chunk.len()));
                    for key in chunk.iter_mut().step_by(step) {
                        *key = sign;
                    }
                }
                for j in 0..10 {
                    row[(j * 997 + r * 31) % n] = sign * (2.0 + j as f32);
                }
            }
            for k in [50, 100] {
                check_topk(&keys, rows, k, o);
                let halves: Vec<f16> = keys.iter().map(|&v| f16::from_f32(v)).collect();
                check_topk(&halves, rows, k, o);
            }
        }
    }
}

/// f32 keys: +inf and NaN share one order value in the kernel (fp32 has
/// nothing above +inf), and the write puts NaN above +inf by their bits.
/// Rows where the k-th key falls inside that group, at either edge of it or
/// below it, the group's NaN (both signs, payloads) and +inf interleaved by
/// index, among finite keys with both zeros, FLT_MAX and -inf; the k
/// smallest (the group is then the lowest); a group of more candidates than
/// a tile (streamed from the workspace); whole rows and rows shared by cores.
#[test]
fn topk_of_f32_keys_orders_nan_above_infinity() {
    const FINITE: [u32; 6] = [
        0x0000_0000,
        0x8000_0000,
        0x7f7f_ffff,
        0xff80_0000,
        0x3f80_0000,
        0x0000_0001,
    ];
    const NANS: [u32; 3] = [0x7fc0_0000, 0xffc0_0001, 0x7f80_0001];
    for (rows, n, nan_every, inf_every) in [(48, 300, 37, 23), (41, 9000, 5, 3), (3, 20_011, 3, 2)]
    {
        let keys: Vec<f32> = words(rows * n, n as u64)
            .enumerate()
            .map(|(j, w)| {
                let i = j % n;
                f32::from_bits(if i % nan_every == 1 {
                    NANS[i % NANS.len()]
                } else if i % inf_every == 1 {
                    0x7f80_0000
                } else if w % 4 == 0 {
                    FINITE[(w >> 8) as usize % FINITE.len()]
                } else {
                    (w >> 20) as u32 & 0x7f7f_ffff | (w as u32 & 0x8000_0000)
                })
            })
            .collect();
        let row = &keys[..n];
        let nans = row.iter().filter(|v| v.is_nan()).count();
        let group = nans + row.iter().filter(|&&v| v == f32::INFINITY).count();
        let mut ks: Vec<usize> = [1, nans - 1, nans, nans + 1, group, group + 1, 100]
            .into_iter()
            .flat_map(|k| [k, n - k])
            .filter(|&k| (1..=n).contains(&k))
            .collect();
        ks.sort_unstable();
        ks.dedup();
        for k in ks {
            for o in topk_options() {
                check_topk(&keys, rows, k, o);
            }
        }
    }
}

/// The chunk bound of TOPK (docs/algorithms.md, "Top-k"): a NaN (either
/// sign) or an infinity inside a chunk of ordinary keys must make the chunk
/// count; rows of more chunk maxima than one tile holds (read back from the
/// workspace), whole rows per core and rows shared by cores; the k smallest.
#[test]
fn topk_chunk_bounds_see_every_key() {
    let mut keys: Vec<f16> = random::<f16>(3 * 20_011, 5)
        .into_iter()
        .map(|k| f16::from_f32(k.to_f32().abs().min(1.0) * 0.5))
        .collect();
    // Row 0: a NaN mid-chunk; row 1: a negative NaN and +inf; row 2: -inf.
    keys[777] = f16::from_bits(0x7E01);
    keys[20_011 + 5000] = f16::from_bits(0xFE00);
    keys[20_011 + 12_345] = f16::INFINITY;
    keys[2 * 20_011 + 9999] = f16::NEG_INFINITY;
    for o in topk_options() {
        for k in [1, 3, 130] {
            check_topk(&keys, 3, k, o);
        }
    }
    // 600000 keys per row: more than 4096 chunk maxima, so they go through
    // the workspace (one row shared by cores; then 48 rows, whole per core,
    // for the 16-bit integers whose chunks are 64 keys).
    let long: Vec<f16> = random(600_000, 9);
    check_topk(&long, 1, 50, TopkOptions::default());
    let ints: Vec<i16> = random(48 * 270_000, 11);
    check_topk(
        &ints,
        48,
        20,
        TopkOptions {
            largest: false,
            sorted: true,
        },
    );
}

/// The selection narrows between the codes of a row's smallest and largest
/// chunk maxima (docs/algorithms.md, "Top-k"): rows of one value, of two
/// adjacent values and of a narrow band, k at the edges, the largest and the
/// smallest, whole rows per core and one row shared by cores.
#[test]
fn topk_narrows_within_the_row_range() {
    let one = f16::from_f32(1.5);
    for (rows, n) in [(48, 5000), (1, 100_003)] {
        let constant = vec![one; rows * n];
        let two: Vec<f16> = words(rows * n, 7)
            .map(|w| f16::from_bits(one.to_bits() + u16::from(w % 3 == 0)))
            .collect();
        let band: Vec<f16> = words(rows * n, 8)
            .map(|w| f16::from_bits(one.to_bits() + (w % 40) as u16))
            .collect();
        for keys in [constant, two, band] {
            for k in [1, 50, n] {
                for o in topk_options() {
                    check_topk(&keys, rows, k, o);
                }
            }
        }
    }
}

/// A whole row reads again only the first k - A of its chunks whose maximum
/// equals the bound T, A the chunks above it (docs/algorithms.md, "Top-k"):
/// rows where every chunk holds a tie of T at a varying place, some chunks
/// also a key above it and a second tie before it, k around the count
/// above T (the k-th key above T, at T with few and with many ties), both
/// directions, f16 (chunks of 128) and i16 (chunks of 64); then rows whose
/// bound is +inf or held by NaN chunks, where the rule stays off.
#[test]
fn topk_reads_only_the_first_chunks_at_the_bound() {
    // 40 rows: whole rows per core on the 40 vector cores (a row shared by
    // cores reads every chunk at the bound).
    let (rows, n) = (40, 128 * 300);
    // Even rows need every one of the k - A chunks (an above chunk holds no
    // tie, a chunk at T one); odd rows fewer (ties in above chunks, and twice).
    let mut ties = vec![0i16; rows * n];
    let above = (0..n / 128).filter(|c| c % 7 == 3).count();
    for r in 0..rows {
        let mut w = words(n / 128, 40 + r as u64);
        for c in 0..n / 128 {
            let lane = (w.next().unwrap() % 128) as usize;
            let at = r * n + c * 128;
            let up = c % 7 == 3;
            if !up || r % 2 == 1 {
                ties[at + lane] = 100;
            }
            if r % 2 == 1 && c % 5 == 1 && lane > 0 {
                ties[at + lane / 2] = 100;
            }
            if up {
                ties[at + (lane + 1) % 128] = 200 + c as i16;
            }
        }
    }
    let as_f16: Vec<f16> = ties
        .iter()
        .map(|&v| f16::from_f32(f32::from(v) / 64.0))
        .collect();
    let smallest = |v: &[i16]| -> Vec<i16> { v.iter().map(|&x| -x).collect() };
    let as_f16_neg: Vec<f16> = as_f16.iter().map(|&v| -v).collect();
    for k in [above - 1, above, above + 1, above + 7, 150, 300, 400] {
        for o in topk_options() {
            let flip = !o.largest;
            check_topk(if flip { &as_f16_neg } else { &as_f16 }, rows, k, o);
            let ints = if flip { smallest(&ties) } else { ties.clone() };
            check_topk(&ints, rows, k, o);
        }
    }
    // The bound at +inf (f16 chunks of +inf, some with NaN, share FLT_MAX):
    // every chunk at the bound is read.
    let mut top: Vec<f16> = as_f16.clone();
    for (i, v) in top.iter_mut().enumerate() {
        if i % 128 == 5 {
            *v = f16::INFINITY;
        }
        if i % 1280 == 77 {
            *v = f16::from_bits(0x7E00);
        }
    }
    for k in [1, 31, 100, 400] {
        for o in topk_options() {
            let keys: Vec<f16> = if o.largest {
                top.clone()
            } else {
                top.iter().map(|&v| -v).collect()
            };
            check_topk(&keys, rows, k, o);
        }
    }
}

#[test]
fn topk_errors_name_k() {
    let dev = device();
    let buf = dev.upload(&[1u16, 2, 3, 4]).unwrap();
    // Two rows of two keys: k = 3 is past the row length; k = 0 is empty.
    for (rows, k) in [(2, 3), (2, 0), (1, 5), (1, 0)] {
        match topk(
            &dev,
            Batch::rows(&buf, rows).unwrap(),
            k,
            TopkOptions::default(),
        ) {
            Err(ascend_scan::Error::InvalidArgument { name, .. }) => assert_eq!(name, "k"),
            r => panic!("{rows} rows, k = {k}: expected an error naming k, got {r:?}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random shapes (rows crossing tiles and cores), orders, algorithms and
    /// f16 keys drawn from the specials and random bit patterns: sort and
    /// topk (sorted and not) against the CPU references.
    #[test]
    fn sort_and_topk_of_random_shapes(
        rows in 1usize..4,
        n in 1usize..12_000,
        k_frac in 0.0f64..1.0,
        descending: bool,
        one_bit: bool,
        seed: u64,
    ) {
        let keys: Vec<f16> = words(rows * n, seed)
            .map(|w| {
                if w % 5 == 0 {
                    f16::from_bits(F16_SPECIALS[(w >> 8) as usize % F16_SPECIALS.len()] as u16)
                } else {
                    f16::from_bits((w >> 20) as u16)
                }
            })
            .collect();
        let algorithm = if one_bit { SortAlgorithm::OneBit } else { SortAlgorithm::MultiBit };
        check(&keys, rows, SortOptions { descending, algorithm });
        let k = 1 + ((n - 1) as f64 * k_frac) as usize;
        check_topk(&keys, rows, k, TopkOptions { largest: !descending, sorted: one_bit });
    }

    /// Random shapes and orders of 32-bit keys (f32 from the specials and
    /// random bit patterns, i32, u32), 4-bit digits: sort against the CPU
    /// reference.
    #[test]
    fn sort_of_32_bit_keys_of_random_shapes(
        rows in 1usize..4,
        n in 1usize..7_000,
        descending: bool,
        kind in 0u8..3,
        seed: u64,
    ) {
        let bits: Vec<u32> = words(rows * n, seed)
            .map(|w| {
                if w % 5 == 0 {
                    F32_SPECIALS[(w >> 8) as usize % F32_SPECIALS.len()]
                } else {
                    (w >> 16) as u32
                }
            })
            .collect();
        let options = SortOptions { descending, algorithm: SortAlgorithm::MultiBit };
        match kind {
            0 => {
                let keys: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
                check(&keys, rows, options);
                let k = 1 + (seed % n as u64) as usize;
                let sorted = k <= 128 || seed % 2 == 0;
                check_topk(&keys, rows, k, TopkOptions { largest: !descending, sorted });
            }
            1 => check(&bits.iter().map(|&b| b as i32).collect::<Vec<_>>(), rows, options),
            _ => check(&bits, rows, options),
        }
    }
}

/// argsort: exactly the indices of the stable sort, for every key width
/// and both orders, over tiles, cores and rows; its workspace serves
/// argsort_on.
#[test]
fn argsort_gives_the_sort_indices() {
    fn case<K: Key>(keys: &[K], rows: usize, options: SortOptions) {
        let dev = device();
        let buf = dev.upload(keys).unwrap();
        let got = argsort(&dev, Batch::rows(&buf, rows).unwrap(), options)
            .unwrap()
            .download()
            .unwrap();
        let (_, want) = reference(keys, rows, options.descending);
        assert_eq!(
            got,
            want,
            "{rows} rows of {:?}, {options:?}",
            std::any::type_name::<K>()
        );
    }
    for (rows, n) in [(1, 1), (1, 3 * 4096 + 5), (3, 9000), (40, 33)] {
        for o in options() {
            case::<f16>(&adversarial(rows * n, F16_SPECIALS)[5], rows, o);
        }
        let multi = SortOptions::default();
        case::<f32>(&adversarial(rows * n, F32_SPECIALS)[5], rows, multi);
        case::<u8>(&random(rows * n, 3), rows, multi);
        case::<i32>(
            &random(rows * n, 4),
            rows,
            SortOptions {
                descending: true,
                ..multi
            },
        );
    }
    // The stream form with a workspace of the reported size.
    let dev = device();
    let keys: Vec<bf16> = adversarial(5000, BF16_SPECIALS)[4].clone();
    let buf = dev.upload(&keys).unwrap();
    let o = SortOptions::default();
    let mut ws = ascend_scan::Workspace::new(
        &dev,
        ascend_scan::argsort_workspace_bytes::<bf16>(&dev, 1, 5000, o).unwrap(),
    )
    .unwrap();
    let mut out = dev.alloc::<i32>(5000).unwrap();
    let stream = dev.create_stream().unwrap();
    ascend_scan::argsort_on(&stream, &buf, o, &mut out, &mut ws).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(out.download().unwrap(), reference(&keys, 1, false).1);

    // Its last pass leaves the keys out: exactly their bytes fewer GM
    // writes than the sort (its own device: no other test's reports).
    let dev = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
    let keys: Vec<f32> = random(10_000, 5);
    let buf = dev.upload(&keys).unwrap();
    let written = |f: &dyn Fn()| {
        dev.take_reports();
        f();
        dev.take_reports()
            .iter()
            .map(|r| r.gm_write_bytes)
            .sum::<u64>()
    };
    let sorted = written(&|| drop(sort(&dev, &buf, o).unwrap()));
    let argsorted = written(&|| drop(argsort(&dev, &buf, o).unwrap()));
    assert_eq!(sorted - argsorted, 4 * 10_000);
}

/// sort_pairs: the keys of the stable sort, and each value where its key
/// went (4- and 2-byte values of scrambled bit patterns, NaN payloads
/// included, so a value out of place shows); a values batch of another shape is refused naming
/// `values`.
#[test]
fn sort_pairs_moves_each_value_with_its_key() {
    fn case<K: Key, V: Key + ascend_scan::SortValue>(
        keys: &[K],
        values: &[V],
        rows: usize,
        options: SortOptions,
    ) {
        let dev = device();
        let kb = dev.upload(keys).unwrap();
        let vb = dev.upload(values).unwrap();
        let got = ascend_scan::sort_pairs(
            &dev,
            Batch::rows(&kb, rows).unwrap(),
            Batch::rows(&vb, rows).unwrap(),
            options,
        )
        .unwrap();
        let (want_keys, perm) = reference(keys, rows, options.descending);
        let n = keys.len() / rows;
        let want_values: Vec<V> = perm
            .iter()
            .enumerate()
            .map(|(i, &p)| values[(i / n) * n + p as usize])
            .collect();
        let want_bits: Vec<u32> = want_keys.into_iter().map(K::to_bits).collect();
        assert_eq!(bits(&got.keys), want_bits, "keys, {rows} rows, {options:?}");
        let want_values: Vec<u32> = want_values.into_iter().map(V::to_bits).collect();
        assert_eq!(
            bits(&got.values),
            want_values,
            "values, {rows} rows, {options:?}"
        );
    }
    for (rows, n) in [(1, 7), (1, 2 * 4096 + 9), (5, 3000)] {
        let len = rows * n;
        let ids: Vec<u32> = (0..len as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let floats: Vec<f32> = ids
            .iter()
            .map(|&b| f32::from_bits(b | 0x7f80_0001))
            .collect();
        for o in options() {
            case::<f16, u32>(&adversarial(len, F16_SPECIALS)[5], &ids, rows, o);
        }
        let multi = SortOptions::default();
        case::<f32, f32>(&adversarial(len, F32_SPECIALS)[4], &floats, rows, multi);
        case::<i16, i32>(
            &adversarial(len, I16_SPECIALS)[3],
            &ids.iter().map(|&b| b as i32).collect::<Vec<_>>(),
            rows,
            SortOptions {
                descending: true,
                ..multi
            },
        );
        // 2-byte values (their own kernels): NaN payloads of bf16 and f16,
        // and integers, with keys of every width.
        let halves: Vec<u16> = ids.iter().map(|&b| (b >> 16) as u16).collect();
        let nans: Vec<bf16> = halves
            .iter()
            .map(|&b| bf16::from_bits(b | 0x7f81))
            .collect();
        case::<f32, bf16>(&adversarial(len, F32_SPECIALS)[5], &nans, rows, multi);
        let small: Vec<f16> = halves.iter().map(|&b| f16::from_bits(b)).collect();
        for o in options() {
            case::<u8, f16>(&random(len, 6), &small, rows, o);
        }
        case::<i32, u16>(&random(len, 7), &halves, rows, multi);
    }
    let dev = device();
    let keys = dev.upload(&[3u16, 1, 2, 0]).unwrap();
    let values = dev.upload(&[0i32; 6]).unwrap();
    match ascend_scan::sort_pairs(&dev, &keys, &values, SortOptions::default()) {
        Err(ascend_scan::Error::InvalidArgument { name, .. }) => assert_eq!(name, "values"),
        r => panic!("expected an error naming values, got {r:?}"),
    }
}

/// Rows of at most a tile are sorted in one launch on chip (whole rows to
/// a tile, up to 16; a last pass by the row parts them again): row counts
/// that leave a partial last tile, one key per row, a row of exactly a
/// tile, rows of 17 to a tile's worth, every key width, both orders, the
/// LLM shapes [96, 1000] and [4096, 256], and argsort.
#[test]
fn short_rows_sorted_on_chip() {
    let desc = SortOptions {
        descending: true,
        ..Default::default()
    };
    for (rows, n) in [
        (37, 256),
        (100, 1),
        (2, 4096),
        (3, 2049),
        (5, 17),
        (96, 1000),
    ] {
        for o in [SortOptions::default(), desc] {
            check::<f16>(&adversarial(rows * n, F16_SPECIALS)[5], rows, o);
        }
        check::<u8>(&random(rows * n, 5), rows, desc);
        check::<i16>(
            &adversarial(rows * n, I16_SPECIALS)[3],
            rows,
            SortOptions::default(),
        );
    }
    for (rows, n) in [(33, 128), (3, 2048), (40, 7)] {
        check::<f32>(&adversarial(rows * n, F32_SPECIALS)[5], rows, desc);
        check::<u32>(&random(rows * n, 8), rows, SortOptions::default());
    }
    let keys: Vec<bf16> = adversarial(4096 * 256, BF16_SPECIALS)[5].clone();
    check(&keys, 4096, SortOptions::default());
    let dev = device();
    let buf = dev.upload(&keys).unwrap();
    let got = argsort(&dev, Batch::rows(&buf, 4096).unwrap(), desc)
        .unwrap()
        .download()
        .unwrap();
    assert_eq!(got, reference(&keys, 4096, true).1);
}
