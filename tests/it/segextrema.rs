//! Segmented max and min with their indices against an exact CPU reference:
//! every density from one segment to one per element, empty segments,
//! segments across tile and core boundaries, ties, signed zeros, NaN and
//! infinities, f16/bf16/f32, blocking and stream forms, and the errors.

use ascend_scan::{
    segmented_extrema_on, segmented_extrema_workspace_bytes, segmented_max, segmented_min, Device,
    DeviceBuffer, Error, ExtremaValue, Extreme, SegmentCheck, SegmentExtrema, Segments, Workspace,
};
use half::{bf16, f16};
use testkit::check::first_extreme;
use testkit::data::words;
use testkit::device;

/// Elements of a SEGEXTREMA tile.
const TILE: usize = 1024;

pub(crate) trait Value: ExtremaValue + Copy + PartialEq + std::fmt::Debug {
    fn from_f32(v: f32) -> Self;
    fn f64(self) -> f64;
    fn bits(self) -> u32;
}
macro_rules! half_value {
    ($($t:ident),*) => {$(
        impl Value for $t {
            fn from_f32(v: f32) -> Self {
                $t::from_f32(v)
            }
            fn f64(self) -> f64 {
                self.to_f64()
            }
            fn bits(self) -> u32 {
                u32::from(self.to_bits())
            }
        }
    )*};
}
half_value!(f16, bf16);
impl Value for f32 {
    fn from_f32(v: f32) -> Self {
        v
    }
    fn f64(self) -> f64 {
        f64::from(self)
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
}

/// Values with ties (few distinct magnitudes), both zeros, and, when
/// `special`, infinities and NaNs (of both signs and several payloads).
pub(crate) fn values<T: Value>(n: usize, seed: u64, special: bool) -> Vec<T> {
    words(n, seed)
        .map(|w| {
            let pick = w % 1000;
            let v = match pick {
                0..=4 if special => f32::NAN,
                // NaNs of either sign and other payloads: every NaN ranks
                // the same, so the first one still wins.
                5..=9 if special => f32::from_bits(
                    0x7fc0_0000 | (((w >> 8) & 1) << 31) as u32 | ((w >> 12) as u32 & 0x3f_0000),
                ),
                10..=14 if special => f32::INFINITY,
                15..=19 if special => f32::NEG_INFINITY,
                20..=39 => 0.0,
                40..=59 => -0.0,
                _ => ((w >> 20) % 61) as f32 * 0.25 - 7.5 + ((w >> 40) % 3) as f32 * 1e-3,
            };
            T::from_f32(v)
        })
        .collect()
}

/// Offsets with about `density` segments per element, some empty
/// segments (runs of equal entries) when `empties`.
fn offsets(n: usize, density: f64, empties: bool, seed: u64) -> Vec<i32> {
    let cut = (density * u64::MAX as f64) as u64;
    let mut o = vec![0i32];
    for (i, w) in words(n, seed ^ 0x5eed).enumerate() {
        if i > 0 && w < cut {
            o.push(i as i32);
        }
        if empties && w % 997 == 0 {
            o.push(i as i32);
        }
    }
    if empties {
        o.push(n as i32);
        o.insert(0, 0);
    }
    o.push(n as i32);
    o
}

/// The reference: per segment the first index of the extreme (NaN wins,
/// -0 equals +0), or None for an empty segment.
fn reference<T: Value>(x: &[T], offsets: &[i32], max: bool) -> Vec<Option<usize>> {
    offsets
        .windows(2)
        .map(|w| {
            let seg = &x[w[0] as usize..w[1] as usize];
            first_extreme(seg.iter().map(|v| v.f64()), max).map(|i| w[0] as usize + i)
        })
        .collect()
}

pub(crate) fn compare<T: Value>(
    x: &[T],
    offsets: &[i32],
    max: bool,
    got: &SegmentExtrema<T>,
    what: &str,
) {
    let want = reference(x, offsets, max);
    let values = got.values.download().unwrap();
    let indices = got.indices.download().unwrap();
    assert_eq!(values.len(), want.len(), "{what}: count");
    for (s, w) in want.iter().enumerate() {
        match *w {
            Some(i) => {
                assert_eq!(
                    indices[s],
                    i as i32,
                    "{what}: segment {s} of {} index",
                    want.len()
                );
                let (g, e) = (values[s], x[i]);
                let same = g.bits() == e.bits() || (g.f64().is_nan() && e.f64().is_nan());
                assert!(same, "{what}: segment {s} value {g:?}, want {e:?}");
            }
            None => {
                assert_eq!(indices[s], -1, "{what}: empty segment {s} index");
                let inf = if max {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                };
                assert_eq!(values[s].f64(), inf, "{what}: empty segment {s} value");
            }
        }
    }
}

fn run<T: Value>(dev: &Device, n: usize, density: f64, empties: bool, special: bool, seed: u64) {
    let x = values::<T>(n, seed, special);
    let o = offsets(n, density, empties, seed);
    let dx = dev.upload(&x).unwrap();
    let doff = dev.upload(&o).unwrap();
    for max in [true, false] {
        let what = format!(
            "{} n={n} density={density} empties={empties} special={special} max={max}",
            std::any::type_name::<T>()
        );
        let got = if max {
            segmented_max(dev, &dx, Segments::Offsets(&doff))
        } else {
            segmented_min(dev, &dx, Segments::Offsets(&doff))
        }
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        compare(&x, &o, max, &got, &what);
    }
}

#[test]
fn every_density_and_length_matches_the_reference() {
    let dev = device();
    let mut seed = 1;
    for n in [
        1,
        7,
        TILE - 1,
        TILE,
        TILE + 1,
        3 * TILE + 17,
        40 * TILE + 5,
        200_003,
    ] {
        for density in [0.0, 1e-4, 0.003, 0.05, 0.5, 1.0] {
            seed += 1;
            run::<f16>(&dev, n, density, seed % 2 == 0, seed % 3 == 0, seed);
        }
    }
}

#[test]
fn every_type_with_non_finite_values_and_empty_segments() {
    let dev = device();
    for (i, (n, density)) in [
        (5000, 0.01),
        (70_001, 0.2),
        (123_457, 0.0005),
        (90_000, 1.0),
    ]
    .into_iter()
    .enumerate()
    {
        let seed = 100 + i as u64;
        run::<f16>(&dev, n, density, true, true, seed);
        run::<bf16>(&dev, n, density, true, true, seed);
        run::<f32>(&dev, n, density, true, true, seed);
    }
}

#[test]
fn segments_across_cores_and_tiles() {
    let dev = device();
    let n = 1 << 20;
    let x = values::<f32>(n, 7, true);
    let per_core = n.div_ceil(40).div_ceil(TILE) * TILE;
    let shapes: Vec<Vec<i32>> = vec![
        // One segment over everything.
        vec![0, n as i32],
        // Empty segments first and last, one in between over every core.
        vec![0, 0, 0, n as i32, n as i32, n as i32],
        // Ends on every core boundary, and one past and one before it.
        (0..=40)
            .flat_map(|c| {
                let b = (c * per_core).min(n) as i32;
                [b - 1, b, b + 1]
            })
            .map(|v| v.clamp(0, n as i32))
            .chain([n as i32])
            .collect::<Vec<_>>(),
        // Segments of two tiles and a half, crossing tiles and cores.
        (0..)
            .map(|i| (i * (5 * TILE / 2)).min(n) as i32)
            .take_while(|&v| v < n as i32)
            .chain([n as i32])
            .collect(),
    ];
    for (k, mut o) in shapes.into_iter().enumerate() {
        o.dedup_by(|a, b| a < b); // keep non-decreasing, equal entries allowed
        o[0] = 0;
        let doff = dev.upload(&o).unwrap();
        let dx = dev.upload(&x).unwrap();
        for max in [true, false] {
            let got = if max {
                segmented_max(&dev, &dx, Segments::Offsets(&doff))
            } else {
                segmented_min(&dev, &dx, Segments::Offsets(&doff))
            }
            .unwrap();
            compare(&x, &o, max, &got, &format!("shape {k} max={max}"));
        }
    }
    // All values equal: every index is the segment's first.
    let same = vec![f16::from_f32(1.5); 100_000];
    let o = offsets(same.len(), 0.001, true, 3);
    let got = segmented_max(
        &dev,
        &dev.upload(&same).unwrap(),
        Segments::Offsets(&dev.upload(&o).unwrap()),
    )
    .unwrap();
    compare(&same, &o, true, &got, "all equal");
}

/// Long segments, so that most tiles hold at most one segment end: those
/// take the lane-wise accumulator, split at the end (no table), and a core
/// reads the offsets once per 64 segments. Ends at every lane of a tile,
/// on a tile's last lane and on its end, an empty segment now and then
/// (the table again), equal values across every end (the first index
/// wins, also over the masked lanes), the three types.
#[test]
fn one_segment_end_per_tile() {
    let dev = device();
    // About 90 tiles per core: more than 64 segments each.
    let n = 40 * 90 * TILE + 333;
    let mut o = vec![0i32];
    for (i, w) in words(n / 700, 21).enumerate() {
        let last = *o.last().unwrap() as usize;
        let step = match i % 9 {
            0 => TILE - last % TILE,              // to a tile's end
            1 => TILE,                            // a whole tile
            2 => (TILE - 1 - last % TILE) + TILE, // to a tile's last lane
            3 => 0,                               // an empty segment
            _ => TILE / 2 + (w % (2 * TILE as u64)) as usize,
        };
        if last + step >= n {
            break;
        }
        o.push((last + step) as i32);
    }
    o.push(n as i32);
    // Ties everywhere: few distinct values (all equal in one run).
    let few = |seed: u64| -> Vec<f32> {
        words(n, seed)
            .map(|w| ((w >> 30) % 3) as f32 - 1.0)
            .collect()
    };
    // Each non-empty segment j starts with a maximum that grows with j and
    // ends with a minimum that grows more negative with j (modulo 8): a
    // lane of the next or the previous segment taken in would win.
    let mut marked = few(24);
    for (j, w) in o.windows(2).enumerate() {
        if w[0] < w[1] {
            marked[w[0] as usize] = 4.0 * (1 << (j % 8)) as f32;
            marked[w[1] as usize - 1] = -4.0 * (1 << (7 - j % 8)) as f32;
        }
    }
    let runs: [(&str, Vec<f32>); 4] = [
        ("few", few(22)),
        ("marked", marked),
        ("special", values::<f32>(n, 23, true)),
        ("equal", vec![0.5; n]),
    ];
    let doff = dev.upload(&o).unwrap();
    for (name, x) in runs {
        let x16: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
        let xb: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
        both(&dev, &x, &o, &doff, &format!("f32 {name}"));
        both(&dev, &x16, &o, &doff, &format!("f16 {name}"));
        both(&dev, &xb, &o, &doff, &format!("bf16 {name}"));
    }
}

/// Max and min of `x` over the segments `o` (on the device as `doff`).
fn both<T: Value>(dev: &Device, x: &[T], o: &[i32], doff: &DeviceBuffer<i32>, what: &str) {
    let dx = dev.upload(x).unwrap();
    let got = segmented_max(dev, &dx, Segments::Offsets(doff)).unwrap();
    compare(x, o, true, &got, &format!("{what} max"));
    let got = segmented_min(dev, &dx, Segments::Offsets(doff)).unwrap();
    compare(x, o, false, &got, &format!("{what} min"));
}

#[test]
fn flags_give_the_same_segments() {
    let dev = device();
    let n = 30_000;
    let x = values::<bf16>(n, 11, true);
    let flags: Vec<i8> = words(n, 12).map(|w| i8::from(w % 50 == 0)).collect();
    let mut o: Vec<i32> = (1..n)
        .filter(|&i| flags[i] == 1)
        .map(|i| i as i32)
        .collect();
    o.insert(0, 0);
    o.push(n as i32);
    let dx = dev.upload(&x).unwrap();
    let got = segmented_min(&dev, &dx, Segments::Flags(&dev.upload(&flags).unwrap())).unwrap();
    compare(&x, &o, false, &got, "flags");
    // No element: no segment.
    let none = dev.upload::<bf16>(&[]).unwrap();
    let got = segmented_max(
        &dev,
        &none,
        Segments::Flags(&dev.upload::<i8>(&[]).unwrap()),
    )
    .unwrap();
    assert_eq!(got.values.len(), 0);
    // No element, three empty segments.
    let got = segmented_max(
        &dev,
        &none,
        Segments::Offsets(&dev.upload(&[0, 0, 0, 0]).unwrap()),
    )
    .unwrap();
    compare::<bf16>(&[], &[0, 0, 0, 0], true, &got, "no element");
}

#[test]
fn stream_form_reuses_its_workspace_and_matches() {
    // A device of its own: the allocation count is per device.
    let dev = Device::simulated(device().soc()).unwrap();
    let stream = dev.create_stream().unwrap();
    let (n, segments) = (50_000, 700);
    let bytes = segmented_extrema_workspace_bytes::<f16>(&dev, n, segments).unwrap();
    let mut workspace = Workspace::new(&dev, bytes).unwrap();
    let mut check = SegmentCheck::new(&dev).unwrap();
    let mut out = SegmentExtrema {
        values: dev.alloc::<f16>(segments).unwrap(),
        indices: dev.alloc::<i32>(segments).unwrap(),
    };
    for seed in [1, 2] {
        let x = values::<f16>(n, seed, true);
        let mut o: Vec<i32> = words(segments - 1, seed)
            .map(|w| (w % n as u64) as i32)
            .collect();
        o.push(0);
        o.push(n as i32);
        o.sort_unstable();
        let (dx, doff) = (dev.upload(&x).unwrap(), dev.upload(&o).unwrap());
        for (extreme, max) in [(Extreme::Max, true), (Extreme::Min, false)] {
            let before = dev.allocation_count();
            segmented_extrema_on(
                &stream,
                &dx,
                &doff,
                extreme,
                &mut out,
                &mut check,
                &mut workspace,
            )
            .unwrap();
            stream.synchronize().unwrap();
            assert_eq!(dev.allocation_count(), before, "no allocation per call");
            check.download().unwrap();
            compare(&x, &o, max, &out, &format!("stream seed {seed} max={max}"));
        }
    }
}

fn invalid(r: Result<SegmentExtrema<f32>, Error>) -> (&'static str, String) {
    match r {
        Err(Error::InvalidArgument { name, reason }) => (name, reason),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn errors_name_the_argument() {
    let dev = device();
    let other = Device::simulated(dev.soc()).unwrap();
    let x = dev.upload(&values::<f32>(3000, 5, false)).unwrap();
    let off = |o: &[i32]| dev.upload(o).unwrap();
    for (o, says) in [
        (vec![1, 3000], "offsets[0] = 1"),
        (vec![0, 2000, 1000, 3000], "offsets[2] = 1000 is less than"),
        (vec![0, 10, 2999], "2999"),
        (vec![0, 3001], "3001"),
    ] {
        let (name, reason) = invalid(segmented_max(&dev, &x, Segments::Offsets(&off(&o))));
        assert_eq!(name, "segments", "{o:?}: {reason}");
        assert!(reason.contains(says), "{o:?}: {reason}");
    }
    let (name, _) = invalid(segmented_max(&dev, &x, Segments::Offsets(&off(&[]))));
    assert_eq!(name, "segments");
    let flags: DeviceBuffer<i8> = dev.upload(&vec![2i8; 3000]).unwrap();
    let (name, reason) = invalid(segmented_min(&dev, &x, Segments::Flags(&flags)));
    assert_eq!(
        (name, reason.contains("0 or 1")),
        ("segments", true),
        "{reason}"
    );
    let short: DeviceBuffer<i8> = dev.upload(&[0i8; 10]).unwrap();
    assert_eq!(
        invalid(segmented_min(&dev, &x, Segments::Flags(&short))).0,
        "segments"
    );
    let far = other.upload(&[0, 3000]).unwrap();
    assert_eq!(
        invalid(segmented_max(&dev, &x, Segments::Offsets(&far))).0,
        "segments"
    );
    let far_x = other.upload(&[1.0f32]).unwrap();
    assert_eq!(
        invalid(segmented_max(
            &dev,
            &far_x,
            Segments::Offsets(&off(&[0, 1]))
        ))
        .0,
        "x"
    );

    let stream = dev.create_stream().unwrap();
    let mut check = SegmentCheck::new(&dev).unwrap();
    let mut workspace = Workspace::new(&dev, 0).unwrap();
    let o = off(&[0, 1000, 3000]);
    let mut call = |out: &mut SegmentExtrema<f32>| {
        segmented_extrema_on(
            &stream,
            &x,
            &o,
            Extreme::Max,
            out,
            &mut check,
            &mut workspace,
        )
    };
    let mut wrong = SegmentExtrema {
        values: dev.alloc::<f32>(3).unwrap(),
        indices: dev.alloc::<i32>(2).unwrap(),
    };
    let r = call(&mut wrong);
    assert!(
        matches!(
            r,
            Err(Error::InvalidArgument {
                name: "out.values",
                ..
            })
        ),
        "{r:?}"
    );
    let mut out = SegmentExtrema {
        values: dev.alloc::<f32>(2).unwrap(),
        indices: dev.alloc::<i32>(2).unwrap(),
    };
    let r = call(&mut out);
    assert!(
        matches!(
            r,
            Err(Error::InvalidArgument {
                name: "workspace",
                ..
            })
        ),
        "{r:?}"
    );
}
