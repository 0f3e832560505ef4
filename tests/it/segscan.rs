//! Segmented scan and segmented sum against f64 / exact CPU references, over
//! densities 0..100%, segment shapes at tile, block and core boundaries, and
//! every algorithm.

use ascend_scan::{
    segmented_scan, segmented_sum, Algorithm, Device, Error, RevSpec, SegScanAlgorithm,
    SegScanOptions, SegSumAlgorithm, SegSumOptions, SegmentedInput, SegmentedSumInput, Segments,
};
use half::{bf16, f16};
use testkit::device;
use testkit::{
    check::agree,
    data::{bf16_data, f16_data, f32_data, i8_data, words},
};

const U: f64 = 1.0 / (1u64 << 24) as f64;
/// Elements per SEGSCAN chunk (the vector side's unit; the documented bound
/// is relative to it).
const TILE: usize = 4096;
/// Elements per cube tile of the simple REVSPEC (s = 128).
const SIMPLE_TILE: usize = 128 * 128;

/// Every segmented-sum algorithm (Auto runs OnePass with flags).
const SEGSUMS: [SegSumAlgorithm; 3] = [
    SegSumAlgorithm::OnePass,
    SegSumAlgorithm::SegScan,
    SegSumAlgorithm::Scd,
];

const SEGSCANS: [SegScanAlgorithm; 3] = [
    SegScanAlgorithm::SegScan {
        revspec: RevSpec::Vector,
    },
    SegScanAlgorithm::SegScan {
        revspec: RevSpec::Simple,
    },
    SegScanAlgorithm::Sscr,
];

/// Flags with the given density (ones per element), position 0 random too.
fn flags(n: usize, density: f64, seed: u64) -> Vec<i8> {
    let cut = (density * u64::MAX as f64) as u64;
    words(n, seed).map(|w| i8::from(w < cut)).collect()
}

/// Segment starts: position 0 and every flagged position.
fn starts(f: &[i8]) -> Vec<usize> {
    (0..f.len()).filter(|&i| i == 0 || f[i] == 1).collect()
}

pub(crate) trait Value: SegmentedSumInput + Copy {
    fn f64(self) -> f64;
    fn acc_f64(a: Self::Acc) -> f64;
    const EXACT: bool;
    /// The segmented-sum algorithms that take this type.
    const SUMS: &'static [SegSumAlgorithm] = &SEGSUMS;
}
macro_rules! float_value {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn f64(self) -> f64 {
                self.to_f64()
            }
            fn acc_f64(a: f32) -> f64 {
                f64::from(a)
            }
            const EXACT: bool = false;
        }
    )*};
}
float_value!(f16, bf16);
impl Value for f32 {
    fn f64(self) -> f64 {
        f64::from(self)
    }
    fn acc_f64(a: f32) -> f64 {
        f64::from(a)
    }
    const EXACT: bool = false;
    // SEGSCAN does not take f32 values.
    const SUMS: &'static [SegSumAlgorithm] = &[SegSumAlgorithm::OnePass, SegSumAlgorithm::Scd];
}
impl Value for i8 {
    fn f64(self) -> f64 {
        f64::from(self)
    }
    fn acc_f64(a: i32) -> f64 {
        f64::from(a)
    }
    const EXACT: bool = true;
}

/// Checks a segmented scan against the f64 reference with the documented
/// bound of the algorithm (exact for i8).
fn check_scan<T: Value>(
    x: &[T],
    f: &[i8],
    got: &[T::Acc],
    exclusive: bool,
    algo: SegScanAlgorithm,
) {
    assert_eq!(got.len(), x.len());
    let n = x.len();
    let non_finite = x.iter().any(|v| !v.f64().is_finite());
    // SSCR's bound: two global prefixes of the Auto scan.
    let d = Algorithm::auto_for::<f16>(1, n).error_depth().unwrap() as f64;
    let (mut seg, mut seg_abs, mut seg_len, mut all_abs, mut tile_abs) =
        (0.0, 0.0, 0usize, 0.0, 0.0);
    // |x| over the segment's first chunk before its start, once the segment
    // has left that chunk (the carry's rounding, documented).
    let (mut before_start, mut carried) = (0.0, 0.0);
    for i in 0..n {
        if i % TILE == 0 {
            // Entering a new chunk: the segment (if it goes on) carries
            // the rounding of its first chunk before its start.
            carried = before_start;
            tile_abs = 0.0;
        }
        if i > 0 && f[i] == 1 {
            (seg, seg_abs, seg_len) = (0.0, 0.0, 0);
            (before_start, carried) = (tile_abs, 0.0);
        }
        let v = x[i].f64();
        let want = if exclusive { seg } else { seg + v };
        seg += v;
        seg_len += 1;
        if v.is_finite() {
            seg_abs += v.abs();
            all_abs += v.abs();
            tile_abs += v.abs();
        }
        let g = T::acc_f64(got[i]);
        if T::EXACT {
            assert_eq!(g, want, "{algo:?} exclusive={exclusive} at {i} of {n}");
            continue;
        }
        let bound = match algo {
            SegScanAlgorithm::Sscr if !non_finite => {
                2.0 * (d + i as f64 / d + 2.0) * U * all_abs + U * seg_abs
            }
            // SSCR runs SEGSCAN when x holds an inf or NaN.
            _ => (128.0 + seg_len as f64 / 64.0 + 2.0) * U * (seg_abs + tile_abs + carried),
        };
        assert!(
            agree(g, want, bound),
            "{algo:?} exclusive={exclusive} at {i} of {n}: got {g}, want {want}, bound {bound}"
        );
        if exclusive && i > 0 && f[i] == 1 {
            assert_eq!(
                g, 0.0,
                "an exclusive segment starts at exactly 0 ({algo:?}, {i})"
            );
        }
    }
}

fn run_scan<T: Value + SegmentedInput>(dev: &Device, x: &[T], f: &[i8], algo: SegScanAlgorithm) {
    let xd = dev.upload(x).unwrap();
    let fd = dev.upload(f).unwrap();
    for exclusive in [false, true] {
        let y = segmented_scan(
            dev,
            &xd,
            Segments::Flags(&fd),
            SegScanOptions {
                exclusive,
                algorithm: algo,
            },
        )
        .unwrap()
        .download()
        .unwrap();
        check_scan(x, f, &y, exclusive, algo);
    }
}

#[test]
fn segmented_scan_f16_over_densities_and_lengths() {
    let dev = device();
    let lengths = [
        1usize,
        2,
        63,
        4095,
        4096,
        4097,
        3 * TILE + 5,
        SIMPLE_TILE - 1,
        SIMPLE_TILE + 1,
        3 * SIMPLE_TILE + 5,
        200_003,
    ];
    for (k, &n) in lengths.iter().enumerate() {
        let x = f16_data(n, k as u64);
        for (j, density) in [0.0, 0.001, 0.01, 0.1, 0.5, 1.0].into_iter().enumerate() {
            let f = flags(n, density, (k * 10 + j) as u64);
            for algo in SEGSCANS {
                run_scan(&dev, &x, &f, algo);
            }
        }
    }
}

#[test]
fn segmented_scan_i8_is_exact_and_bf16_within_bound() {
    let dev = device();
    for (k, &n) in [5usize, 4096, 9000, 150_001].iter().enumerate() {
        for density in [0.0, 0.002, 0.3, 1.0] {
            let f = flags(n, density, 40 + k as u64);
            for algo in SEGSCANS {
                run_scan(&dev, &i8_data(n, k as u64), &f, algo);
                run_scan(&dev, &bf16_data(n, k as u64), &f, algo);
            }
        }
    }
}

/// Segments placed at the edges that matter: chunk (4096) and tile edges,
/// the edge between the two vector cores of an AI core, core edges, the last
/// element, one segment spanning everything, and length-1 segments. Once
/// with 4096-element tiles (vector REVSPEC, SSCR), once with the simple
/// REVSPEC's 16384.
#[test]
fn segment_edges_at_tile_block_and_core_boundaries() {
    edges_for_tile(TILE, &SEGSCANS);
    edges_for_tile(
        SIMPLE_TILE,
        &[SegScanAlgorithm::SegScan {
            revspec: RevSpec::Simple,
        }],
    );
}

fn edges_for_tile(tile: usize, algos: &[SegScanAlgorithm]) {
    let dev = device();
    let n = 40 * tile + 77; // 41 tiles over 20 AI cores: 3 tiles on the first
    let x = f16_data(n, 9);
    let mut cases: Vec<Vec<usize>> = vec![
        vec![],
        vec![n - 1],
        vec![1],
        (0..n).step_by(tile).collect(),
        (1..n)
            .step_by(tile)
            .map(|i| i - 1)
            .filter(|&i| i > 0)
            .collect(),
        (0..n)
            .step_by(3 * tile)
            .chain((1..n).step_by(2 * tile))
            .collect(),
        (0..n)
            .filter(|i| i % tile >= tile - 3 || i % tile < 3)
            .collect(),
    ];
    cases.push((0..64).map(|k| k * 64 + 1).collect());
    for positions in cases {
        let mut f = vec![0i8; n];
        for p in positions {
            f[p] = 1;
        }
        for &algo in algos {
            run_scan(&dev, &x, &f, algo);
        }
    }
}

/// SEGSUM's edges: starts at, just before and just after its tiles' and
/// cores' boundaries, segments over whole cores, one segment, every element
/// its own segment, position 0 flagged or not; f16, bf16 and f32.
#[test]
fn one_pass_sums_at_tile_and_core_boundaries() {
    let dev = device();
    // 21 cores of two tiles each (the plan rounds 40 shares up to whole tiles),
    // the last one short; then one tile short of 40 cores of 3 tiles.
    for n in [40 * TILE + 77, 120 * TILE - 1] {
        let per_core = n.div_ceil(40).div_ceil(TILE) * TILE;
        let x = f16_data(n, n as u64);
        let xb = bf16_data(n, n as u64 + 1);
        let xf = f32_data(n, n as u64 + 2);
        let mut cases: Vec<Vec<usize>> = vec![
            vec![],
            vec![0],
            vec![n - 1],
            vec![1, n - 1],
            (0..n).collect(),
            (0..n).step_by(TILE).collect(),
            (TILE..n).step_by(TILE).map(|i| i - 1).collect(),
            (per_core..n).step_by(per_core).collect(),
            (per_core..n).step_by(2 * per_core).map(|i| i + 1).collect(),
            (0..n)
                .filter(|i| i % TILE >= TILE - 2 || i % TILE < 2)
                .collect(),
            (0..n).filter(|i| i % per_core == per_core - 1).collect(),
        ];
        cases.push((0..n).filter(|i| i % 3 == 0).collect());
        for positions in cases {
            let mut f = vec![0i8; n];
            for p in positions {
                f[p] = 1;
            }
            check_sums(&dev, &x, &f, SegSumAlgorithm::OnePass);
            check_sums(&dev, &xb, &f, SegSumAlgorithm::OnePass);
            check_sums(&dev, &xf, &f, SegSumAlgorithm::OnePass);
        }
    }
}

/// SEGSUM's sparse tiles (at most 16 starts: each start's prefix from
/// 64-element block sums) next to dense ones: per tile 0, 1, 2, 15, 16, 17
/// or 40 starts, at block edges (0, 63, 64, 65, the tile's last element) or
/// at random, some tiles holding an inf, a NaN or a large value that
/// cancels; f16, bf16 and f32.
#[test]
fn one_pass_sparse_and_dense_tiles() {
    let dev = device();
    let counts = [0usize, 1, 2, 15, 16, 17, 40];
    let edges = [0usize, 63, 64, 65, 127, 128, 4031, 4032, TILE - 1];
    let tiles = 3 * counts.len();
    let n = tiles * TILE - 100;
    let mut f = vec![0i8; n];
    let mut r = words(4 * n, 99);
    for t in 0..tiles {
        let want = counts[t % counts.len()];
        let mut placed = 0;
        // The first 7 tiles take the block edges first, the others random positions.
        let mut k = 0;
        while placed < want {
            let p = if t < counts.len() && k < edges.len() {
                edges[k]
            } else {
                (r.next().unwrap() % TILE as u64) as usize
            };
            k += 1;
            let i = t * TILE + p;
            if i < n && f[i] == 0 {
                f[i] = 1;
                placed += 1;
            }
            if k > 4 * TILE {
                break;
            }
        }
    }
    let x = f16_data(n, 5);
    let xb = bf16_data(n, 6);
    let mut xf = f32_data(n, 7);
    check_sums(&dev, &x, &f, SegSumAlgorithm::OnePass);
    check_sums(&dev, &xb, &f, SegSumAlgorithm::OnePass);
    check_sums(&dev, &xf, &f, SegSumAlgorithm::OnePass);
    // A large value and its negation in one sparse tile's segment (their
    // sum cancels exactly; the bound scales with the tile's magnitudes).
    xf[TILE + 70] = 1.0e30;
    xf[TILE + 3000] = -1.0e30;
    check_sums(&dev, &xf, &f, SegSumAlgorithm::OnePass);
    // An inf, a NaN and a -inf in tiles with 1, 16 and 17 starts.
    for (tile, v) in [
        (8usize, f32::INFINITY),
        (11, f32::NAN),
        (12, f32::NEG_INFINITY),
    ] {
        xf[tile * TILE + 500] = v;
    }
    check_sums(&dev, &xf, &f, SegSumAlgorithm::OnePass);
    let mut x = x;
    x[8 * TILE + 17] = f16::INFINITY;
    x[12 * TILE + 4000] = f16::NAN;
    check_sums(&dev, &x, &f, SegSumAlgorithm::OnePass);
}

fn ref_sums<T: Value>(x: &[T], f: &[i8]) -> Vec<(f64, f64, usize)> {
    let s = starts(f);
    s.iter()
        .enumerate()
        .map(|(k, &a)| {
            let b = s.get(k + 1).copied().unwrap_or(x.len());
            let seg = &x[a..b];
            (
                seg.iter().map(|v| v.f64()).sum(),
                seg.iter()
                    .map(|v| v.f64().abs())
                    .filter(|a| a.is_finite())
                    .sum(),
                b,
            )
        })
        .collect()
}

fn check_sums<T: Value>(dev: &Device, x: &[T], f: &[i8], algo: SegSumAlgorithm) {
    check_sum_values(x, f, &sums_of(dev, x, f, algo), algo);
}

/// The segmented sums of `x` by start flags `f` with `algo`.
fn sums_of<T: Value>(dev: &Device, x: &[T], f: &[i8], algo: SegSumAlgorithm) -> Vec<T::Acc> {
    let xd = dev.upload(x).unwrap();
    let fd = dev.upload(f).unwrap();
    segmented_sum(
        dev,
        &xd,
        Segments::Flags(&fd),
        SegSumOptions { algorithm: algo },
    )
    .unwrap()
    .download()
    .unwrap()
}

/// Checks the sums of the segments that `f` starts against the f64
/// reference with the documented bound of `algo` (exact for i8).
pub(crate) fn check_sum_values<T: Value>(x: &[T], f: &[i8], got: &[T::Acc], algo: SegSumAlgorithm) {
    let want = ref_sums(x, f);
    assert_eq!(got.len(), want.len(), "{algo:?}: one sum per segment");
    let n = x.len();
    let d = Algorithm::auto_for::<f16>(1, n).error_depth().unwrap() as f64;
    let mut prefix_abs = 0.0;
    let mut start = 0;
    // One tile's sum of |x| is at most TILE * max |x|.
    let tile_abs = TILE as f64
        * x.iter()
            .map(|v| v.f64().abs())
            .filter(|a| a.is_finite())
            .fold(0.0, f64::max);
    let non_finite = x.iter().any(|v| !v.f64().is_finite());
    for (k, (&g, &(w, abs, end))) in got.iter().zip(&want).enumerate() {
        let g = T::acc_f64(g);
        prefix_abs += abs;
        let len = end - start;
        start = end;
        if T::EXACT {
            assert_eq!(g, w, "{algo:?} segment {k}");
            continue;
        }
        let bound = match algo {
            SegSumAlgorithm::Scd if !non_finite => {
                2.0 * (d + end as f64 / d + 2.0) * U * prefix_abs + U * abs
            }
            // SEGSUM (Auto runs it with flags): the documented bound, tiles
            // of 4096; a tile holding an inf or NaN is summed in order.
            SegSumAlgorithm::OnePass | SegSumAlgorithm::Auto if !non_finite => {
                (56.0 + len as f64 / TILE as f64) * U * (abs + 2.0 * tile_abs)
            }
            // The chunk up to the end, and the first chunk before the start
            // (SCD runs SEGSCAN when x holds an inf or NaN).
            _ => (128.0 + len as f64 / 64.0 + 2.0) * U * (abs + 2.0 * tile_abs),
        };
        assert!(
            agree(g, w, bound),
            "{algo:?} segment {k} of {}: got {g}, want {w}, bound {bound}",
            want.len()
        );
    }
}

#[test]
fn segmented_sum_over_densities_both_algorithms() {
    let dev = device();
    for (k, &n) in [1usize, 2, 4097, 3 * TILE + 5, 100_000].iter().enumerate() {
        for density in [0.0, 0.001, 0.05, 0.5, 1.0] {
            let f = flags(n, density, 70 + k as u64);
            for algo in SEGSUMS {
                check_sums(&dev, &f16_data(n, k as u64), &f, algo);
                check_sums(&dev, &i8_data(n, k as u64), &f, algo);
            }
            for &algo in f32::SUMS {
                check_sums(&dev, &f32_data(n, k as u64), &f, algo);
            }
        }
    }
}

/// SCD's cancellation, stated in the docs, made visible: a long run of large
/// values, then short segments of small ones. The bounded variant keeps the
/// small sums accurate; SCD's error follows the large prefix (within its
/// own, larger bound, checked by check_sums).
#[test]
fn bounded_variant_beats_scd_after_a_large_prefix() {
    let dev = device();
    // The large values end at a tile edge (the bounded variant's error
    // involves one tile's magnitude: see segmented_sum's docs).
    let (big, n) = (49 * TILE, 49 * TILE + 100_000);
    let mut x: Vec<f16> = (0..n)
        .map(|i| f16::from_f32(if i < big { 1000.0 } else { 0.0 }))
        .collect();
    let mut f = vec![0i8; n];
    for i in (big..n).step_by(10) {
        f[i] = 1;
        for j in 0..10 {
            x[i + j] = f16::from_f32(0.001 * (1 + j) as f32);
        }
    }
    let xd = dev.upload(&x).unwrap();
    let fd = dev.upload(&f).unwrap();
    let want = ref_sums(&x, &f);
    let err = |algo| {
        let got = segmented_sum(
            &dev,
            &xd,
            Segments::Flags(&fd),
            SegSumOptions { algorithm: algo },
        )
        .unwrap()
        .download()
        .unwrap();
        got.iter()
            .zip(&want)
            .skip(1)
            .map(|(g, w)| (f64::from(*g) - w.0).abs())
            .fold(0.0, f64::max)
    };
    let (bounded, scd) = (err(SegSumAlgorithm::SegScan), err(SegSumAlgorithm::Scd));
    // The small sums (about 0.055) keep about 5 digits with the bounded
    // variant (tile-local prefixes of at most 41); SCD subtracts prefixes
    // near 2e8, whose f32 spacing is 16.
    assert!(bounded < 1e-5, "bounded variant error {bounded}");
    assert!(
        scd > 1e4 * bounded,
        "SCD error {scd} shows the cancellation"
    );
    check_sums(&dev, &x, &f, SegSumAlgorithm::Scd);
    check_sums(&dev, &x, &f, SegSumAlgorithm::SegScan);
}

#[test]
fn offsets_give_the_same_segments_and_empty_ones_sum_to_zero() {
    let dev = device();
    let n = 10_000;
    let x = f16_data(n, 3);
    let offsets: Vec<i32> = vec![0, 0, 0, 5, 5, 4096, 4097, 9999, 10_000, 10_000];
    let od = dev.upload(&offsets).unwrap();
    let xd = dev.upload(&x).unwrap();
    let mut f = vec![0i8; n];
    for &o in &offsets[..offsets.len() - 1] {
        if (o as usize) < n {
            f[o as usize] = 1;
        }
    }
    let y = segmented_scan(&dev, &xd, Segments::Offsets(&od), SegScanOptions::default()).unwrap();
    check_scan(
        &x,
        &f,
        &y.download().unwrap(),
        false,
        SegScanAlgorithm::Auto,
    );
    let sums = segmented_sum(&dev, &xd, Segments::Offsets(&od), SegSumOptions::default()).unwrap();
    assert_eq!(sums.count, offsets.len() - 1);
    let got = sums.download().unwrap();
    for (k, w) in offsets.windows(2).enumerate() {
        let want: f64 = x[w[0] as usize..w[1] as usize]
            .iter()
            .map(|v| v.to_f64())
            .sum();
        assert!(
            (f64::from(got[k]) - want).abs() <= 1e-3 * (1.0 + want.abs()),
            "segment {k}"
        );
        if w[0] == w[1] {
            assert_eq!(got[k], 0.0, "empty segment {k}");
        }
    }
    // Zero elements: offsets [0, 0] name one empty segment.
    let empty = dev.upload::<f16>(&[]).unwrap();
    let zz = dev.upload(&[0i32, 0]).unwrap();
    let s = segmented_sum(
        &dev,
        &empty,
        Segments::Offsets(&zz),
        SegSumOptions::default(),
    )
    .unwrap();
    assert_eq!(s.download().unwrap(), [0.0]);
    let y = segmented_scan(
        &dev,
        &empty,
        Segments::Offsets(&zz),
        SegScanOptions::default(),
    )
    .unwrap();
    assert!(y.is_empty());
}

/// `e` is the invalid-argument error naming `segments`, with `needle` in it.
fn names_segments(e: Error, needle: &str) {
    let s = e.to_string();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                name: "segments",
                ..
            }
        ) && s.contains(needle),
        "{s} (want {needle})"
    );
}

/// Offsets of `n` elements with `segments` >= 1 segments: sorted random
/// cuts (repeated cuts make empty segments, cuts at 0 and n too).
fn random_offsets(n: usize, segments: usize, seed: u64) -> Vec<i32> {
    let mut cuts: Vec<i32> = words(segments - 1, seed)
        .map(|w| (w % (n as u64 + 1)) as i32)
        .collect();
    cuts.sort_unstable();
    let mut o = vec![0];
    o.extend(cuts);
    o.push(n as i32);
    o
}

/// The start flags of `offsets` (1 where a non-empty segment starts).
fn flags_of(offsets: &[i32], n: usize) -> Vec<i8> {
    let mut f = vec![0i8; n];
    for &o in offsets {
        if let Some(v) = f.get_mut(o as usize) {
            *v = 1;
        }
    }
    f
}

/// Every algorithm on segments given as offsets: the scans against the
/// reference of the same segments as flags, the sums one per segment (the
/// non-empty ones within their algorithm's bound, the empty ones exactly 0).
fn check_offsets<T: Value + SegmentedInput>(dev: &Device, x: &[T], offsets: &[i32]) {
    let n = x.len();
    let f = flags_of(offsets, n);
    let xd = dev.upload(x).unwrap();
    let od = dev.upload(offsets).unwrap();
    for algorithm in std::iter::once(SegScanAlgorithm::Auto).chain(SEGSCANS) {
        for exclusive in [false, true] {
            let options = SegScanOptions {
                exclusive,
                algorithm,
            };
            let y = segmented_scan(dev, &xd, Segments::Offsets(&od), options)
                .unwrap()
                .download()
                .unwrap();
            assert_eq!(y.len(), n);
            if n > 0 {
                check_scan(x, &f, &y, exclusive, algorithm);
            }
        }
    }
    check_offset_sums(dev, x, offsets);
}

/// The sums of [`check_offsets`], by Auto, SCD and (for floats) OnePass.
fn check_offset_sums<T: Value>(dev: &Device, x: &[T], offsets: &[i32]) {
    let n = x.len();
    let f = flags_of(offsets, n);
    let xd = dev.upload(x).unwrap();
    let od = dev.upload(offsets).unwrap();
    let mut algorithms = vec![SegSumAlgorithm::Auto, SegSumAlgorithm::Scd];
    if !T::EXACT {
        // SEGSUM and SegSpread (Auto's choice for floats too).
        algorithms.push(SegSumAlgorithm::OnePass);
    }
    for algorithm in algorithms {
        let sums = segmented_sum(
            dev,
            &xd,
            Segments::Offsets(&od),
            SegSumOptions { algorithm },
        )
        .unwrap();
        assert_eq!(
            sums.count,
            offsets.len() - 1,
            "{algorithm:?}: one sum per segment"
        );
        let got = sums.download().unwrap();
        let mut nonempty = Vec::new();
        for (k, w) in offsets.windows(2).enumerate() {
            if w[0] == w[1] {
                assert_eq!(T::acc_f64(got[k]), 0.0, "{algorithm:?}: empty segment {k}");
            } else {
                nonempty.push(got[k]);
            }
        }
        if n > 0 {
            check_sum_values(x, &f, &nonempty, algorithm);
        }
    }
}

/// Offsets checked and turned into flags on the device, around the flag
/// tiles (2048 elements) and the check chunks (1984 segments) of SegFlags,
/// split over many cores, from one segment to one per element (the scalar
/// and the vector marking, stretches longer than a UB chunk of entries),
/// with runs of empty segments and one long segment among short ones
/// (SegEnds's windows and scalar reads).
#[test]
fn offsets_at_tile_and_core_boundaries() {
    let dev = device();
    let cases = [
        (1usize, 1usize),
        (2, 3),
        (2047, 5),
        (2048, 2049),
        (2049, 300),
        (8191, 5),
        (8192, 8193),
        (8193, 2),
        (3 * 8192 + 5, 40),
        (100_000, 1),
        (100_000, 3000),
        (40_000, 40_000),
        (5000, 20_000),
    ];
    for (k, &(n, segments)) in cases.iter().enumerate() {
        let offsets = random_offsets(n, segments, 90 + k as u64);
        check_offsets(&dev, &f16_data(n, k as u64), &offsets);
        check_offsets(&dev, &i8_data(n, k as u64), &offsets);
        check_offset_sums(&dev, &f32_data(n, k as u64), &offsets);
    }
    let n = 50_000i32;
    let every: Vec<i32> = (0..=n).collect();
    check_offsets(&dev, &i8_data(n as usize, 5), &every);
    let mut lumpy: Vec<i32> = (0..2500).collect();
    lumpy.extend((45_000..=n).step_by(3));
    lumpy.push(n);
    check_offsets(&dev, &bf16_data(n as usize, 6), &lumpy);
    // No element: empty segments only.
    check_offsets::<f16>(&dev, &[], &[0, 0, 0]);
    check_offset_sums::<f32>(&dev, &[], &[0, 0]);
    check_offsets::<i8>(&dev, &[], &[0]);
}

/// Dense stretches of offsets (1024 positions or more in a 4096-position
/// flag tile) are marked in two levels: 16-position groups first, then each
/// position within its group's range of entries. Groups whose range is at
/// most 63 entries (empty segments piled on one position) take that path,
/// wider ones the one-level search; stretches that start and end mid-tile,
/// tiles split between two chunks of 2048 entries, a partial last tile.
#[test]
fn dense_offsets_with_piles_of_empty_segments() {
    let dev = device();
    let n = 5 * 4096 + 1000;
    let mut offsets: Vec<i32> = vec![0];
    // Tile 0: every position from 300 to 3800, 47 extra entries (empty
    // segments) at 1000 and 48 at 2001 (ranges of 63 and 64 entries).
    offsets.extend(300..3800);
    offsets.extend(std::iter::repeat_n(1000, 47));
    offsets.extend(std::iter::repeat_n(2001, 48));
    // Tile 1: every other position, 10 empty segments at each multiple of 512.
    for p in (4096..8192).step_by(2) {
        offsets.push(p);
        if p % 512 == 0 {
            offsets.extend(std::iter::repeat_n(p, 10));
        }
    }
    // Tile 2: every third position from its middle on; tile 3: every
    // position; tile 4: a pile of 300 at one position among every 5th.
    offsets.extend((10_240..12_288).step_by(3));
    offsets.extend(12_288..16_384);
    for p in (16_384..20_480).step_by(5) {
        offsets.push(p);
        if p == 18_000 {
            offsets.extend(std::iter::repeat_n(p, 300));
        }
    }
    // The partial last tile: every position but the first 10.
    offsets.extend(20_490..n as i32);
    offsets.push(n as i32);
    offsets.sort_unstable();
    check_offsets(&dev, &f16_data(n, 11), &offsets);
    check_offsets(&dev, &i8_data(n, 12), &offsets);
    check_offset_sums(&dev, &f32_data(n, 13), &offsets);
}

/// Bad offsets are found on the device and named by their first bad entry
/// (the first entry, then the last, then the first below its predecessor
/// over every core's range), by every algorithm.
#[test]
fn bad_offsets_name_their_first_bad_entry() {
    let dev = device();
    let n = 100_000;
    let x = dev.upload(&f16_data(n, 1)).unwrap();
    let good = random_offsets(n, 30_000, 7);
    let last = good.len() - 1;
    let mut cases: Vec<(Vec<i32>, String)> = Vec::new();
    let with = |edits: &[(usize, i32)]| {
        let mut o = good.clone();
        for &(k, v) in edits {
            o[k] = v;
        }
        o
    };
    cases.push((with(&[(0, 1)]), "offsets[0] = 1, expected 0".into()));
    cases.push((
        with(&[(0, -5), (9, 0)]),
        "offsets[0] = -5, expected 0".into(),
    ));
    for end in [n as i32 - 1, n as i32 + 1, i32::MAX] {
        cases.push((
            with(&[(last, end)]),
            format!("offsets[{last}] = {end}, expected the length of x, {n}"),
        ));
    }
    for k in [1, 1984, 1985, 3968, 15_000, last - 1] {
        let v = good[k - 1] - 1;
        cases.push((
            with(&[(k, v)]),
            format!(
                "offsets[{k}] = {v} is less than offsets[{}] = {}",
                k - 1,
                good[k - 1]
            ),
        ));
    }
    let (a, b) = (2000, 25_000);
    cases.push((
        with(&[(b, -1), (a, -1)]),
        format!(
            "offsets[{a}] = -1 is less than offsets[{}] = {}",
            a - 1,
            good[a - 1]
        ),
    ));
    for (offsets, needle) in &cases {
        let od = dev.upload(offsets).unwrap();
        let refused = |e: Error| names_segments(e, needle);
        for algorithm in [SegScanAlgorithm::Auto, SegScanAlgorithm::Sscr] {
            let options = SegScanOptions {
                exclusive: false,
                algorithm,
            };
            refused(segmented_scan(&dev, &x, Segments::Offsets(&od), options).unwrap_err());
        }
        for algorithm in [SegSumAlgorithm::Auto, SegSumAlgorithm::Scd] {
            let options = SegSumOptions { algorithm };
            refused(segmented_sum(&dev, &x, Segments::Offsets(&od), options).unwrap_err());
        }
    }
    // Host-side: no entry at all.
    let none = dev.upload::<i32>(&[]).unwrap();
    let e = segmented_scan(
        &dev,
        &x,
        Segments::Offsets(&none),
        SegScanOptions::default(),
    );
    assert!(e.unwrap_err().to_string().contains("at least one entry"));
}

#[test]
fn bad_segments_are_refused_naming_the_argument() {
    let dev = device();
    let x = dev.upload(&f16_data(5000, 1)).unwrap();
    let named = names_segments;
    let short = dev.upload(&[0i8; 4999]).unwrap();
    named(
        segmented_scan(&dev, &x, Segments::Flags(&short), SegScanOptions::default()).unwrap_err(),
        "4999 flags",
    );
    // Both ends of the int8 range too (the kernels read flags as bytes).
    let cases = [2i8, -1]
        .into_iter()
        .flat_map(|bad| [0usize, 4999, 2048].map(|at| (bad, at)))
        .chain([(127, 2048), (-128, 4999)]);
    for (bad, at) in cases {
        let mut f = vec![0i8; 5000];
        f[at] = bad;
        let fd = dev.upload(&f).unwrap();
        for algorithm in SEGSCANS {
            let e = segmented_scan(
                &dev,
                &x,
                Segments::Flags(&fd),
                SegScanOptions {
                    exclusive: false,
                    algorithm,
                },
            );
            named(e.unwrap_err(), &format!("found {bad}"));
        }
        for algorithm in SEGSUMS {
            let e = segmented_sum(&dev, &x, Segments::Flags(&fd), SegSumOptions { algorithm });
            named(e.unwrap_err(), &format!("found {bad}"));
        }
    }
    let od = dev.upload(&[0i32, 7, 3, 5000]).unwrap();
    named(
        segmented_scan(&dev, &x, Segments::Offsets(&od), SegScanOptions::default()).unwrap_err(),
        "offsets[2] = 3",
    );
    let other = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
    let f = other.upload(&[0i8; 5000]).unwrap();
    named(
        segmented_scan(&dev, &x, Segments::Flags(&f), SegScanOptions::default()).unwrap_err(),
        "another device",
    );
}

/// The non-finite values the tests plant: +inf, -inf and NaN.
const SPECIALS: [f32; 3] = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN];

/// Where a non-finite value meets an edge: the first and last elements,
/// segment starts and the elements just before them, and the boundaries of
/// SEGSCAN's chunks and of the simple REVSPEC's tiles.
fn edge_positions(f: &[i8]) -> Vec<usize> {
    let n = f.len();
    let mut v = vec![0, 1, n - 1];
    for s in starts(f).into_iter().skip(1) {
        v.extend([s - 1, s]);
    }
    for b in (TILE..n).step_by(TILE) {
        v.extend([b - 1, b]);
    }
    v.extend((SIMPLE_TILE..n).step_by(SIMPLE_TILE));
    v.sort_unstable();
    v.dedup();
    v
}

/// `x` with SPECIALS at every `stride`-th of `positions` from `first`.
fn planted<T: Value>(
    mut x: Vec<T>,
    positions: &[usize],
    first: usize,
    stride: usize,
    from: impl Fn(f32) -> T,
) -> Vec<T> {
    for (k, &p) in positions.iter().skip(first).step_by(stride).enumerate() {
        x[p] = from(SPECIALS[k % SPECIALS.len()]);
    }
    x
}

/// Runs every segmented scan and segmented sum algorithm on `x`, with the
/// segments as flags and as offsets.
fn check_all<T: Value + SegmentedInput>(dev: &Device, x: &[T], f: &[i8]) {
    for &algo in &SEGSCANS {
        run_scan(dev, x, f, algo);
    }
    check_all_sums(dev, x, f);
    check_offsets(dev, x, &offsets_of(f));
}

/// The sums of [`check_all`] (every algorithm that takes `T`).
fn check_all_sums<T: Value>(dev: &Device, x: &[T], f: &[i8]) {
    for &algo in T::SUMS {
        check_sums(dev, x, f, algo);
    }
    check_offset_sums(dev, x, &offsets_of(f));
}

/// The offsets of the segments that `f` starts.
fn offsets_of(f: &[i8]) -> Vec<i32> {
    starts(f)
        .into_iter()
        .chain([f.len()])
        .map(|i| i as i32)
        .collect()
}

/// An infinity or NaN affects its own segment from its position on and
/// nothing else (docs/algorithms.md, "Non-finite inputs"), in every
/// algorithm: the checks above want NaN or the same infinity where the
/// sequential f64 reference has one, and the usual bound elsewhere.
#[test]
fn non_finite_values_stay_in_their_segment() {
    let dev = device();
    // Three one-element segments [1 | 2 | 1] (adjacent starts once tripped
    // the hazard checker in the simple REVSPEC), then [1 | inf | 1]; [inf | 1].
    check_all(&dev, &[1.0, 2.0, 1.0].map(f16::from_f32), &[1, 1, 1]);
    let x: Vec<f16> = [1.0, f32::INFINITY, 1.0].map(f16::from_f32).to_vec();
    check_all(&dev, &x, &[1, 1, 1]);
    check_all(&dev, &x[1..], &[1, 1]);
    // 100 segments of 100 with one inf.
    let f: Vec<i8> = (0..10_000).map(|i| i8::from(i % 100 == 0)).collect();
    check_all(
        &dev,
        &planted(f16_data(10_000, 4), &[250], 0, 1, f16::from_f32),
        &f,
    );
    for (n, density, seed) in [
        (5 * TILE + 77, 0.002, 1),
        (2 * SIMPLE_TILE + 9, 0.03, 2),
        (3 * TILE, 0.4, 3),
    ] {
        let f = flags(n, density, seed);
        let positions = edge_positions(&f);
        // A third of the edge positions per launch: segments between them stay finite.
        for first in 0..3 {
            check_all(
                &dev,
                &planted(f16_data(n, seed), &positions, first, 3, f16::from_f32),
                &f,
            );
        }
        let x = planted(bf16_data(n, seed), &positions, 1, 5, bf16::from_f32);
        check_all(&dev, &x, &f);
        check_all_sums(
            &dev,
            &planted(f32_data(n, seed), &positions, 2, 4, |v| v),
            &f,
        );
    }
    let x = [1.0, f32::NAN, 1.0, f32::NEG_INFINITY];
    check_all_sums(&dev, &x, &[1, 0, 1, 0]);
}

/// f32 values near the top of the range: a tile whose f32 sums overflow is
/// summed in order, so a segment whose sequential sum overflows is +inf
/// (IEEE's result in order, as PyTorch's sequential sum gives), while the
/// other segments keep their bound. (The bound of a segment counts the
/// magnitude of the tiles it starts and ends in: the tiles of the large
/// values hold zeros elsewhere.)
#[test]
fn f32_sums_that_overflow_are_summed_in_order() {
    // Dense tiles (about 40 starts each) and sparse ones (about 2).
    for density in [0.01, 0.0005] {
        sums_that_overflow(density);
    }
}

fn sums_that_overflow(density: f64) {
    let dev = device();
    let n = 3 * TILE + 11;
    let mut x = f32_data(n, 12);
    x[TILE..3 * TILE].fill(0.0);
    let mut f = flags(n, density, 13);
    let big = 3.0e38f32;
    // Segment [at, at + 3): big + big overflows, - big leaves +inf in order.
    let at = TILE + 100;
    x[at..at + 3].copy_from_slice(&[big, big, -big]);
    f[at] = 1;
    f[at + 3] = 1;
    // Segment [at2, at2 + 3): big - big + big = big in order.
    let at2 = 2 * TILE + 50;
    x[at2..at2 + 3].copy_from_slice(&[big, -big, big]);
    f[at2] = 1;
    f[at2 + 3] = 1;
    f[at2 + 1..at2 + 3].fill(0);
    f[at + 1..at + 3].fill(0);
    let xd = dev.upload(&x).unwrap();
    let fd = dev.upload(&f).unwrap();
    let got = segmented_sum(&dev, &xd, Segments::Flags(&fd), SegSumOptions::default())
        .unwrap()
        .download()
        .unwrap();
    let s = starts(&f);
    assert_eq!(got.len(), s.len());
    let k = s.iter().position(|&p| p == at).unwrap();
    assert_eq!(got[k], f32::INFINITY, "segment at {at}");
    let k2 = s.iter().position(|&p| p == at2).unwrap();
    assert_eq!(got[k2], big, "segment at {at2}");
    // The other segments: against the reference with the big ones zeroed.
    let mut small = x.clone();
    small[at..at + 3].fill(0.0);
    small[at2..at2 + 3].fill(0.0);
    let mut others = got.clone();
    others[k] = 0.0;
    others[k2] = 0.0;
    check_sum_values(&small, &f, &others, SegSumAlgorithm::OnePass);
}

/// SEGSUM adds 16-bit tiles without a start lane-wise and sums them when
/// the next tile with starts (or the core's end) comes; a non-finite sum
/// sends them to an in-order rescan. 40 cores of 6 tiles: starts in tiles 0
/// and 5 of even cores (tiles 1-4 deferred, folded by tile 5) and 0 and 3
/// of odd ones (tiles 4-5 deferred to the core's end, the carry going on to
/// the next core). Planted in deferred tiles: +inf and -inf (NaN), a NaN, a
/// lone +inf, a +inf in a core's last tile; (bf16, and f32, which sums each
/// tile) +-3e38 in two lanes of two tiles (a lane-wise overflow, finite in
/// order; folded by a tile and at a core's end) and 3e38 in one lane of
/// three tiles (overflow in order and lane-wise alike); the rest finite
/// (the usual bound).
#[test]
fn one_pass_defers_tiles_without_starts() {
    let dev = device();
    let per_core = 6 * TILE;
    let n = 40 * per_core;
    let mut f = vec![0i8; n];
    for c in 0..40 {
        let second = if c % 2 == 0 { 5 } else { 3 };
        f[c * per_core + 10] = 1;
        f[c * per_core + second * TILE + 20] = 1;
    }
    let at = |core: usize, tile: usize, i: usize| core * per_core + tile * TILE + i;
    let specials = [
        (at(2, 1, 7), f32::INFINITY),
        (at(2, 3, 900), f32::NEG_INFINITY),
        (at(4, 2, 4000), f32::NAN),
        (at(6, 4, 64), f32::INFINITY),
        (at(9, 5, 4095), f32::INFINITY),
    ];
    let mut cancel = Vec::new();
    for (core, tiles) in [(14, 1..3), (15, 4..6)] {
        for tile in tiles {
            cancel.extend([(at(core, tile, 33), 3.0e38), (at(core, tile, 34), -3.0e38)]);
        }
    }
    let overflow: Vec<(usize, f32)> = (1..4).map(|tile| (at(12, tile, 33), 3.0e38)).collect();
    fn plant<T: Value>(mut x: Vec<T>, plants: &[(usize, f32)], from: impl Fn(f32) -> T) -> Vec<T> {
        for &(p, v) in plants {
            x[p] = from(v);
        }
        x
    }
    check_sums(
        &dev,
        &plant(f16_data(n, 21), &specials, f16::from_f32),
        &f,
        SegSumAlgorithm::OnePass,
    );
    check_sums(
        &dev,
        &plant(bf16_data(n, 22), &specials, bf16::from_f32),
        &f,
        SegSumAlgorithm::OnePass,
    );
    check_sums(
        &dev,
        &plant(f32_data(n, 23), &specials, |v| v),
        &f,
        SegSumAlgorithm::OnePass,
    );
    check_sums(&dev, &f16_data(n, 24), &f, SegSumAlgorithm::OnePass);
    check_sums(
        &dev,
        &plant(bf16_data(n, 26), &cancel, bf16::from_f32),
        &f,
        SegSumAlgorithm::OnePass,
    );
    check_sums(
        &dev,
        &plant(f32_data(n, 27), &cancel, |v| v),
        &f,
        SegSumAlgorithm::OnePass,
    );
    let k = starts(&f).iter().position(|&p| p == at(12, 0, 10)).unwrap();
    let x = plant(f32_data(n, 25), &overflow, |v| v);
    assert_eq!(
        sums_of(&dev, &x, &f, SegSumAlgorithm::OnePass)[k],
        f32::INFINITY
    );
    let x = plant(bf16_data(n, 25), &overflow, bf16::from_f32);
    assert_eq!(
        sums_of(&dev, &x, &f, SegSumAlgorithm::OnePass)[k],
        f32::INFINITY
    );
}

/// f32 values: SEGSCAN is refused naming `options.algorithm`; offsets
/// with an empty segment give its 0.
#[test]
fn f32_sums_refuse_segscan() {
    let dev = device();
    let x = dev.upload(&f32_data(5000, 1)).unwrap();
    let fd = dev.upload(&flags(5000, 0.01, 2)).unwrap();
    let od = dev.upload(&[0i32, 7, 7, 5000]).unwrap();
    let segscan = SegSumOptions {
        algorithm: SegSumAlgorithm::SegScan,
    };
    for segments in [Segments::Flags(&fd), Segments::Offsets(&od)] {
        let e = segmented_sum(&dev, &x, segments, segscan).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    name: "options.algorithm",
                    ..
                }
            ),
            "{e}"
        );
    }
    let sums = segmented_sum(&dev, &x, Segments::Offsets(&od), SegSumOptions::default()).unwrap();
    assert_eq!(sums.count, 3);
    assert_eq!(sums.download().unwrap()[1], 0.0, "the empty segment");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 8, ..Default::default() })]

    /// Random lengths, densities and 1-4 non-finite values at random positions.
    #[test]
    fn random_non_finite_positions(
        n in 1usize..20_000,
        density in 0.0f64..0.2,
        seed: u64,
        count in 1usize..5,
    ) {
        let f = flags(n, density, seed);
        let positions: Vec<usize> = words(count, seed ^ 0x5eed).map(|w| (w % n as u64) as usize).collect();
        let x = planted(f16_data(n, seed), &positions, 0, 1, f16::from_f32);
        check_all(&device(), &x, &f);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 16, ..Default::default() })]

    /// SEGSUM over random lengths (up to a few cores' worth of tiles),
    /// densities from one segment to every element, f16, bf16 and f32 values
    /// of mixed signs and magnitudes.
    #[test]
    fn one_pass_sums_random_segments(
        n in 1usize..300_000,
        density in proptest::prop_oneof![0.0f64..0.001, 0.0f64..1.0],
        seed: u64,
        kind in 0u8..3,
    ) {
        let f = flags(n, density, seed);
        if kind == 2 {
            check_sums(&device(), &f32_data(n, seed), &f, SegSumAlgorithm::OnePass);
        } else if kind == 1 {
            let x: Vec<bf16> = bf16_data(n, seed)
                .into_iter()
                .zip(words(n, seed ^ 7))
                .map(|(v, w)| v * bf16::from_f32((w % 64) as f32 - 31.5))
                .collect();
            check_sums(&device(), &x, &f, SegSumAlgorithm::OnePass);
        } else {
            check_sums(&device(), &f16_data(n, seed), &f, SegSumAlgorithm::OnePass);
        }
    }
}

/// What the host says of `offsets` for `n` elements: None when they are
/// valid, else the message of the first bad entry (the first entry, then the
/// last, then the first below its predecessor), as the device check reports it.
fn offsets_error(offsets: &[i32], n: usize) -> Option<String> {
    let (first, last) = (offsets[0], offsets[offsets.len() - 1]);
    if first != 0 {
        return Some(format!("offsets[0] = {first}, expected 0"));
    }
    if usize::try_from(last).ok() != Some(n) {
        let k = offsets.len() - 1;
        return Some(format!(
            "offsets[{k}] = {last}, expected the length of x, {n}"
        ));
    }
    let k = (1..offsets.len()).find(|&k| offsets[k] < offsets[k - 1])?;
    Some(format!(
        "offsets[{k}] = {} is less than offsets[{}] = {}",
        offsets[k],
        k - 1,
        offsets[k - 1]
    ))
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

    /// Offsets from valid to garbage (a valid set with a few entries
    /// overwritten by arbitrary i32 values, the extremes included): every
    /// call either checks out against the reference or names the first bad
    /// entry exactly as the host reference does; never a simulator rule
    /// (an access outside a buffer), a panic or a hang.
    #[test]
    fn arbitrary_offsets_are_checked_exactly(
        n in 0usize..12_000,
        segments in 1usize..3_000,
        seed: u64,
        edits in proptest::collection::vec((0usize..4_000, proptest::prelude::any::<i32>()), 0..4),
    ) {
        let mut offsets = random_offsets(n, segments, seed);
        for (at, v) in edits {
            let k = at % offsets.len();
            offsets[k] = match v % 4 {
                0 => v,
                1 => i32::MAX - (v & 7),
                2 => i32::MIN + (v & 7),
                _ => offsets[k].wrapping_add(v % 5),
            };
        }
        let dev = device();
        let x = i8_data(n, seed);
        match offsets_error(&offsets, n) {
            None => check_offsets(&dev, &x, &offsets),
            Some(needle) => {
                let xd = dev.upload(&x).unwrap();
                let od = dev.upload(&offsets).unwrap();
                let segs = Segments::Offsets(&od);
                names_segments(
                    segmented_scan(&dev, &xd, segs, SegScanOptions::default()).unwrap_err(),
                    &needle,
                );
                names_segments(
                    segmented_sum(&dev, &xd, segs, SegSumOptions::default()).unwrap_err(),
                    &needle,
                );
            }
        }
    }
}
