//! The stream-ordered forms of COPY, COMPRESS/SPLIT and the reductions
//! (`copy_on`, `compress_on`, `split_on`, `reduce_on`): the same results as
//! the blocking forms and the CPU references, no allocation in a steady
//! loop, wrong-size arguments named, and the host-side race rule on their
//! outputs.
use ascend_scan::{
    compress_on, compress_with, compress_workspace_bytes, copy, copy_on, reduce, reduce_on,
    reduce_workspace_bytes, split_on, split_with, split_workspace_bytes, CompressOptions, Device,
    DeviceBuffer, Error, ReduceResult, ScanInput, ScanOp, Soc, SplitCount, SplitOptions, Task,
    Workspace,
};
use half::{bf16, f16};
use testkit::check::{nan_max, nan_min, same};
use testkit::data::{bf16_data, f16_data, i8_data, words};
use testkit::device;

/// 0, 1, a few hundred, past one core's share and past all cores' first
/// tiles (`per_core` elements per core).
fn sizes(dev: &Device, per_core: usize) -> Vec<usize> {
    let cores = dev.profile().vector_cores as usize;
    vec![0, 1, 300, per_core + 1, cores * per_core + 3]
}

fn bits16(n: usize, seed: u64) -> Vec<u16> {
    words(n, seed).map(|w| (w >> 24) as u16).collect()
}

fn flags01(n: usize, seed: u64) -> Vec<i8> {
    words(n, seed)
        .map(|w| i8::from((w >> 33) % 3 == 0))
        .collect()
}

fn is_invalid(e: &Error, want: &str) -> bool {
    matches!(e, Error::InvalidArgument { name, .. } if *name == want)
}

#[test]
fn copy_on_matches_copy_and_the_input() {
    let dev = device();
    let stream = dev.create_stream().unwrap();
    for n in sizes(&dev, 4096) {
        let xs = bits16(n, n as u64);
        let x = dev.upload(&xs).unwrap();
        let mut dst = dev.alloc_zeroed::<u16>(n).unwrap();
        copy_on(&stream, &x, &mut dst).unwrap();
        stream.synchronize().unwrap();
        assert_eq!(dst.download().unwrap(), xs, "n={n}");
        assert_eq!(copy(&x).unwrap().download().unwrap(), xs, "n={n} blocking");
    }
}

/// CPU reference: kept values and their indices, then the dropped ones.
fn partition(xs: &[u16], fs: &[i8]) -> (Vec<u16>, Vec<i32>, Vec<u16>, Vec<i32>) {
    let (mut v1, mut i1, mut v0, mut i0) = (vec![], vec![], vec![], vec![]);
    for (i, (&x, &f)) in xs.iter().zip(fs).enumerate() {
        if f == 1 {
            v1.push(x);
            i1.push(i as i32);
        } else {
            v0.push(x);
            i0.push(i as i32);
        }
    }
    (v1, i1, v0, i0)
}

#[test]
fn compress_on_and_split_on_match_the_blocking_forms_and_the_reference() {
    let dev = device();
    let stream = dev.create_stream().unwrap();
    for n in sizes(&dev, 4096) {
        let xs = bits16(n, 3 + n as u64);
        let fs = flags01(n, 5 + n as u64);
        let (v1, i1, v0, i0) = partition(&xs, &fs);
        let x = dev.upload(&xs).unwrap();
        let f = dev.upload(&fs).unwrap();
        let mut count = SplitCount::new(&dev, n).unwrap();
        for want_indices in [false, true] {
            // COMPRESS.
            let bytes =
                compress_workspace_bytes::<u16>(&dev, n, CompressOptions { want_indices }).unwrap();
            let mut ws = Workspace::new(&dev, bytes).unwrap();
            let mut out = dev.alloc_zeroed::<u16>(n).unwrap();
            let mut idx = dev.alloc_zeroed::<i32>(n).unwrap();
            compress_on(
                &stream,
                &x,
                &f,
                &mut out,
                want_indices.then_some(&mut idx),
                &mut count,
                &mut ws,
            )
            .unwrap();
            stream.synchronize().unwrap();
            let ones = count.download().unwrap();
            assert_eq!(ones, v1.len(), "compress n={n}");
            assert_eq!(out.download_prefix(ones).unwrap(), v1, "compress n={n}");
            let blocking = compress_with(&dev, &x, &f, CompressOptions { want_indices }).unwrap();
            assert_eq!(blocking.count, ones);
            assert_eq!(blocking.download_values().unwrap(), v1);
            if want_indices {
                assert_eq!(idx.download_prefix(ones).unwrap(), i1, "compress n={n}");
                assert_eq!(blocking.download_indices().unwrap().unwrap(), i1);
            }

            // SPLIT / SPLITIND.
            let bytes =
                split_workspace_bytes::<u16>(&dev, n, SplitOptions { want_indices }).unwrap();
            let mut ws = Workspace::new(&dev, bytes).unwrap();
            split_on(
                &stream,
                &x,
                &f,
                &mut out,
                want_indices.then_some(&mut idx),
                &mut count,
                &mut ws,
            )
            .unwrap();
            stream.synchronize().unwrap();
            let ones = count.download().unwrap();
            assert_eq!(ones, v1.len(), "split n={n}");
            let want: Vec<u16> = v1.iter().chain(&v0).copied().collect();
            assert_eq!(out.download().unwrap(), want, "split n={n}");
            let blocking = split_with(&dev, &x, &f, SplitOptions { want_indices }).unwrap();
            assert_eq!(blocking.ones, ones);
            assert_eq!(blocking.values.download().unwrap(), want);
            if want_indices {
                let want: Vec<i32> = i1.iter().chain(&i0).copied().collect();
                assert_eq!(idx.download().unwrap(), want, "split n={n}");
                assert_eq!(blocking.indices.unwrap().download().unwrap(), want);
            } else {
                assert!(blocking.indices.is_none());
            }
        }
    }
}

/// A flag other than 0/1 is the count's error, as the blocking form's.
#[test]
fn bad_flags_are_the_counts_error() {
    let dev = device();
    let stream = dev.create_stream().unwrap();
    let n = 50_000;
    let xs = bits16(n, 1);
    let mut fs = flags01(n, 2);
    fs[n - 7] = 2;
    let x = dev.upload(&xs).unwrap();
    let f = dev.upload(&fs).unwrap();
    let bytes = compress_workspace_bytes::<u16>(&dev, n, CompressOptions::default()).unwrap();
    let mut ws = Workspace::new(&dev, bytes).unwrap();
    let mut out = dev.alloc_zeroed::<u16>(n).unwrap();
    let mut count = SplitCount::new(&dev, n).unwrap();
    compress_on(&stream, &x, &f, &mut out, None, &mut count, &mut ws).unwrap();
    stream.synchronize().unwrap();
    assert!(is_invalid(&count.download().unwrap_err(), "flags"));
    assert!(is_invalid(
        &compress_with(&dev, &x, &f, CompressOptions::default()).unwrap_err(),
        "flags"
    ));
    fs[n - 7] = -1;
    let f = dev.upload(&fs).unwrap();
    let bytes = split_workspace_bytes::<u16>(&dev, n, SplitOptions::default()).unwrap();
    let mut ws = Workspace::new(&dev, bytes).unwrap();
    split_on(&stream, &x, &f, &mut out, None, &mut count, &mut ws).unwrap();
    stream.synchronize().unwrap();
    assert!(is_invalid(&count.download().unwrap_err(), "flags"));
}

/// `reduce_on` into a fresh result and the blocking `reduce` of `xs`.
fn both<T: ScanInput>(dev: &Device, xs: &[T], op: ScanOp) -> (T::Acc, T::Acc) {
    let stream = dev.create_stream().unwrap();
    let x = dev.upload(xs).unwrap();
    let bytes = reduce_workspace_bytes::<T>(dev, xs.len(), op).unwrap();
    let mut ws = Workspace::new(dev, bytes).unwrap();
    let mut result = ReduceResult::<T>::new(dev).unwrap();
    reduce_on(&stream, &x, op, &mut result, &mut ws).unwrap();
    stream.synchronize().unwrap();
    (result.download().unwrap(), reduce(dev, &x, op).unwrap())
}

#[test]
fn reduce_on_matches_reduce_and_the_reference() {
    let dev = device();
    for n in sizes(&dev, 4096) {
        let xi = i8_data(n, 7 + n as u64);
        let xf = f16_data(n, 9 + n as u64);
        let xb = bf16_data(n, 9 + n as u64);
        let sum_i: i64 = xi.iter().map(|&v| i64::from(v)).sum();
        let max_i = xi.iter().map(|&v| i32::from(v)).fold(i32::MIN, i32::max);
        let min_i = xi.iter().map(|&v| i32::from(v)).fold(i32::MAX, i32::min);
        for (op, want) in [
            (ScanOp::Sum, sum_i),
            (ScanOp::Max, i64::from(max_i)),
            (ScanOp::Min, i64::from(min_i)),
        ] {
            let (got, blocking) = both::<i8>(&dev, &xi, op);
            assert_eq!(got, blocking, "i8 {op:?} n={n}");
            assert_eq!(i64::from(got), want, "i8 {op:?} n={n}");
        }
        // f16 and bf16 sums: the blocking result bit for bit, the
        // reference within the documented bound.
        let abs: f64 = xf
            .iter()
            .map(|v| v.to_f64().abs())
            .sum::<f64>()
            .max(xb.iter().map(|v| v.to_f64().abs()).sum());
        let bound = (n as f64 / 4096.0 + 4096.0 + 40.0) * 2f64.powi(-24) * abs;
        let want: f64 = xf.iter().map(|v| v.to_f64()).sum();
        let (got, blocking) = both::<f16>(&dev, &xf, ScanOp::Sum);
        assert_eq!(got.to_bits(), blocking.to_bits(), "f16 sum n={n}");
        assert!((f64::from(got) - want).abs() <= bound, "f16 sum n={n}");
        let want: f64 = xb.iter().map(|v| v.to_f64()).sum();
        let (got, blocking) = both::<bf16>(&dev, &xb, ScanOp::Sum);
        assert_eq!(got.to_bits(), blocking.to_bits(), "bf16 sum n={n}");
        assert!((f64::from(got) - want).abs() <= bound, "bf16 sum n={n}");
        // f16 max and min: exact, NaN rule included.
        let mut with_nan = xf.clone();
        if n > 0 {
            with_nan[n / 2] = f16::NAN;
        }
        for xs in [&xf, &with_nan] {
            for op in [ScanOp::Max, ScanOp::Min] {
                let want = xs.iter().map(|v| v.to_f64()).fold(
                    if op == ScanOp::Max {
                        f64::NEG_INFINITY
                    } else {
                        f64::INFINITY
                    },
                    if op == ScanOp::Max { nan_max } else { nan_min },
                );
                let (got, blocking) = both::<f16>(&dev, xs, op);
                assert!(
                    same(f64::from(got), want),
                    "f16 {op:?} n={n}: {got} vs {want}"
                );
                assert!(same(f64::from(blocking), want), "f16 {op:?} n={n} blocking");
            }
        }
    }
}

/// One `ReduceResult` reused: a long f16 max whose NaN only the last core
/// sees reports NaN, and the one-core call after it reports its own
/// maximum (it reads back only the slot its launch wrote). Each call is one
/// kernel and no other stream task (the kernel writes the NaN slots
/// straight into the result).
#[test]
fn reduce_on_reuses_its_result_and_runs_one_task() {
    let dev = Device::simulated(Soc::default()).unwrap();
    let stream = dev.create_stream().unwrap();
    let cores = dev.profile().vector_cores as usize;
    let n = cores * 4096 + 3;
    let mut long = f16_data(n, 31);
    long[n - 1] = f16::NAN;
    let short = [f16::from_f32(-2.5), f16::from_f32(7.25), f16::from_f32(1.0)];
    let bytes = reduce_workspace_bytes::<f16>(&dev, n, ScanOp::Max).unwrap();
    let mut ws = Workspace::new(&dev, bytes).unwrap();
    let mut result = ReduceResult::<f16>::new(&dev).unwrap();
    for (xs, want) in [
        (&long[..], f32::NAN),
        (&short[..], 7.25),
        (&long[..], f32::NAN),
    ] {
        let x = dev.upload(xs).unwrap();
        dev.take_reports();
        reduce_on(&stream, &x, ScanOp::Max, &mut result, &mut ws).unwrap();
        stream.synchronize().unwrap();
        let tasks: Vec<_> = dev.take_reports().iter().map(|r| r.task).collect();
        assert_eq!(tasks, [Task::Kernel], "n={}", xs.len());
        let got = result.download().unwrap();
        assert!(
            same(f64::from(got), f64::from(want)),
            "n={}: {got}",
            xs.len()
        );
    }
}

/// After a warm-up, 100 calls of each `*_on` with the same outputs,
/// workspaces and handles make no device allocation.
#[test]
fn steady_state_loops_allocate_nothing() {
    let dev = Device::simulated(Soc::default()).unwrap();
    let stream = dev.create_stream().unwrap();
    let n = 9000;
    let xs = bits16(n, 21);
    let fs = flags01(n, 22);
    let xf = f16_data(n, 23);
    let x = dev.upload(&xs).unwrap();
    let f = dev.upload(&fs).unwrap();
    let xh = dev.upload(&xf).unwrap();
    let mut dst = dev.alloc_zeroed::<u16>(n).unwrap();
    let mut out = dev.alloc_zeroed::<u16>(n).unwrap();
    let mut idx = dev.alloc_zeroed::<i32>(n).unwrap();
    let mut count = SplitCount::new(&dev, n).unwrap();
    let ws_bytes = [
        compress_workspace_bytes::<u16>(&dev, n, CompressOptions { want_indices: true }).unwrap(),
        split_workspace_bytes::<u16>(&dev, n, SplitOptions { want_indices: true }).unwrap(),
        reduce_workspace_bytes::<f16>(&dev, n, ScanOp::Sum).unwrap(),
        reduce_workspace_bytes::<f16>(&dev, n, ScanOp::Max).unwrap(),
    ];
    let mut ws = Workspace::new(&dev, ws_bytes.into_iter().max().unwrap()).unwrap();
    let mut sum = ReduceResult::<f16>::new(&dev).unwrap();
    let mut max = ReduceResult::<f16>::new(&dev).unwrap();

    let mut round = |stream: &ascend_scan::Stream| {
        copy_on(stream, &x, &mut dst).unwrap();
        compress_on(
            stream,
            &x,
            &f,
            &mut out,
            Some(&mut idx),
            &mut count,
            &mut ws,
        )
        .unwrap();
        split_on(
            stream,
            &x,
            &f,
            &mut out,
            Some(&mut idx),
            &mut count,
            &mut ws,
        )
        .unwrap();
        reduce_on(stream, &xh, ScanOp::Sum, &mut sum, &mut ws).unwrap();
        reduce_on(stream, &xh, ScanOp::Max, &mut max, &mut ws).unwrap();
        stream.synchronize().unwrap();
    };
    round(&stream);
    let before = dev.allocation_count();
    assert!(before > 0, "the simulator counts allocations");
    for _ in 0..100 {
        round(&stream);
    }
    assert_eq!(dev.allocation_count(), before, "no allocation in the loop");
    let (v1, _, v0, _) = partition(&xs, &fs);
    assert_eq!(dst.download().unwrap(), xs);
    assert_eq!(count.download().unwrap(), v1.len());
    let want: Vec<u16> = v1.iter().chain(&v0).copied().collect();
    assert_eq!(out.download().unwrap(), want);
    let want_max = xf
        .iter()
        .map(|v| v.to_f32())
        .fold(f32::NEG_INFINITY, f32::max);
    assert_eq!(max.download().unwrap(), want_max);
    assert_eq!(
        sum.download().unwrap().to_bits(),
        reduce(&dev, &xh, ScanOp::Sum).unwrap().to_bits()
    );
}

#[test]
fn wrong_sizes_are_refused_by_name() {
    let dev = Device::simulated(Soc::default()).unwrap();
    let other = Device::simulated(Soc::default()).unwrap();
    let stream = dev.create_stream().unwrap();
    let n = 9000;
    let x = dev.upload(&bits16(n, 31)).unwrap();
    let f = dev.upload(&flags01(n, 32)).unwrap();

    // copy_on
    let mut short = dev.alloc_zeroed::<u16>(n - 1).unwrap();
    assert!(is_invalid(
        &copy_on(&stream, &x, &mut short).unwrap_err(),
        "dst"
    ));
    let mut foreign = other.alloc_zeroed::<u16>(n).unwrap();
    assert!(is_invalid(
        &copy_on(&stream, &x, &mut foreign).unwrap_err(),
        "dst"
    ));
    let xo = other.upload(&bits16(n, 31)).unwrap();
    let mut dst = dev.alloc_zeroed::<u16>(n).unwrap();
    assert!(is_invalid(
        &copy_on(&stream, &xo, &mut dst).unwrap_err(),
        "src"
    ));

    // compress_on / split_on
    let bytes = split_workspace_bytes::<u16>(&dev, n, SplitOptions::default()).unwrap();
    let cbytes = compress_workspace_bytes::<u16>(&dev, n, CompressOptions::default()).unwrap();
    assert!(bytes > 0 && cbytes > 0);
    let mut ws = Workspace::new(&dev, bytes.max(cbytes)).unwrap();
    let mut small_ws = Workspace::new(&dev, bytes.min(cbytes) - 1).unwrap();
    let mut out = dev.alloc_zeroed::<u16>(n).unwrap();
    let mut idx = dev.alloc_zeroed::<i32>(n).unwrap();
    let mut short_idx = dev.alloc_zeroed::<i32>(n + 1).unwrap();
    let mut count = SplitCount::new(&dev, n).unwrap();
    let mut small_count = SplitCount::new(&dev, 1).unwrap();
    let mut foreign_count = SplitCount::new(&other, n).unwrap();
    let short_flags = dev.upload(&flags01(n - 1, 32)).unwrap();
    for compress in [true, false] {
        let on = if compress {
            compress_on::<u16>
        } else {
            split_on::<u16>
        };
        let e = on(&stream, &x, &f, &mut short, None, &mut count, &mut ws).unwrap_err();
        assert!(is_invalid(&e, "out"), "{e}");
        let e = on(
            &stream,
            &x,
            &f,
            &mut out,
            Some(&mut short_idx),
            &mut count,
            &mut ws,
        )
        .unwrap_err();
        assert!(is_invalid(&e, "indices"), "{e}");
        let e = on(&stream, &x, &f, &mut out, None, &mut small_count, &mut ws).unwrap_err();
        assert!(is_invalid(&e, "count"), "{e}");
        let e = on(&stream, &x, &f, &mut out, None, &mut foreign_count, &mut ws).unwrap_err();
        assert!(is_invalid(&e, "count"), "{e}");
        let e = on(&stream, &x, &f, &mut out, None, &mut count, &mut small_ws).unwrap_err();
        assert!(is_invalid(&e, "workspace"), "{e}");
        let e = on(
            &stream,
            &x,
            &short_flags,
            &mut out,
            None,
            &mut count,
            &mut ws,
        )
        .unwrap_err();
        assert!(is_invalid(&e, "flags"), "{e}");
        let e = on(&stream, &xo, &f, &mut out, None, &mut count, &mut ws).unwrap_err();
        assert!(is_invalid(&e, "values"), "{e}");
        // The right sizes work after all that.
        on(
            &stream,
            &x,
            &f,
            &mut out,
            Some(&mut idx),
            &mut count,
            &mut ws,
        )
        .unwrap();
        stream.synchronize().unwrap();
    }

    // reduce_on
    let xh = dev.upload(&f16_data(n, 33)).unwrap();
    let bytes = reduce_workspace_bytes::<f16>(&dev, n, ScanOp::Max).unwrap();
    let mut small_ws = Workspace::new(&dev, bytes - 1).unwrap();
    let mut result = ReduceResult::<f16>::new(&dev).unwrap();
    let e = reduce_on(&stream, &xh, ScanOp::Max, &mut result, &mut small_ws).unwrap_err();
    assert!(is_invalid(&e, "workspace"), "{e}");
    let mut foreign_result = ReduceResult::<f16>::new(&other).unwrap();
    let e = reduce_on(&stream, &xh, ScanOp::Max, &mut foreign_result, &mut ws).unwrap_err();
    assert!(is_invalid(&e, "result"), "{e}");
    let xho = other.upload(&f16_data(n, 33)).unwrap();
    let e = reduce_on(&stream, &xho, ScanOp::Max, &mut result, &mut ws).unwrap_err();
    assert!(is_invalid(&e, "x"), "{e}");
    // Nothing enqueued into the result yet.
    assert!(is_invalid(&result.download().unwrap_err(), "result"));
    // f32 has no reduce kernel, whatever the length.
    let x32: DeviceBuffer<f32> = dev.alloc_zeroed(4).unwrap();
    let mut r32 = ReduceResult::<f32>::new(&dev).unwrap();
    assert!(matches!(
        reduce_on(&stream, &x32, ScanOp::Sum, &mut r32, &mut ws).unwrap_err(),
        Error::Unsupported(_)
    ));
    let mut ws = Workspace::new(&dev, bytes).unwrap();
    reduce_on(&stream, &xh, ScanOp::Max, &mut result, &mut ws).unwrap();
    stream.synchronize().unwrap();
    result.download().unwrap();
}

fn is_race<T>(r: Result<T, Error>) -> bool {
    matches!(r, Err(Error::HostRace { .. }))
}

/// Reading an output of queued work before synchronising is a host-side
/// race; after synchronising the results are right.
#[test]
fn downloads_before_synchronising_are_races() {
    let dev = Device::simulated(Soc::default()).unwrap();
    let stream = dev.create_stream().unwrap();
    let n = 9000;
    let xs = bits16(n, 41);
    let fs = flags01(n, 42);
    let x = dev.upload(&xs).unwrap();
    let f = dev.upload(&fs).unwrap();

    let mut dst = dev.alloc_zeroed::<u16>(n).unwrap();
    copy_on(&stream, &x, &mut dst).unwrap();
    assert!(is_race(dst.download()));
    stream.synchronize().unwrap();
    assert_eq!(dst.download().unwrap(), xs);

    let (v1, i1, _, _) = partition(&xs, &fs);
    let bytes =
        compress_workspace_bytes::<u16>(&dev, n, CompressOptions { want_indices: true }).unwrap();
    let mut ws = Workspace::new(&dev, bytes).unwrap();
    let mut out = dev.alloc_zeroed::<u16>(n).unwrap();
    let mut idx = dev.alloc_zeroed::<i32>(n).unwrap();
    let mut count = SplitCount::new(&dev, n).unwrap();
    compress_on(
        &stream,
        &x,
        &f,
        &mut out,
        Some(&mut idx),
        &mut count,
        &mut ws,
    )
    .unwrap();
    assert!(is_race(count.download()));
    assert!(is_race(out.download()));
    assert!(is_race(idx.download()));
    stream.synchronize().unwrap();
    assert_eq!(count.download().unwrap(), v1.len());
    assert_eq!(out.download_prefix(v1.len()).unwrap(), v1);
    assert_eq!(idx.download_prefix(v1.len()).unwrap(), i1);

    let bytes = split_workspace_bytes::<u16>(&dev, n, SplitOptions::default()).unwrap();
    let mut ws = Workspace::new(&dev, bytes).unwrap();
    split_on(
        &stream,
        &x,
        &f,
        &mut out,
        Some(&mut idx),
        &mut count,
        &mut ws,
    )
    .unwrap();
    assert!(is_race(count.download()));
    assert!(is_race(out.download()));
    stream.synchronize().unwrap();
    assert_eq!(count.download().unwrap(), v1.len());

    let xf = f16_data(n, 43);
    let xh = dev.upload(&xf).unwrap();
    for op in [ScanOp::Sum, ScanOp::Max] {
        let bytes = reduce_workspace_bytes::<f16>(&dev, n, op).unwrap();
        let mut ws = Workspace::new(&dev, bytes).unwrap();
        let mut result = ReduceResult::<f16>::new(&dev).unwrap();
        reduce_on(&stream, &xh, op, &mut result, &mut ws).unwrap();
        assert!(is_race(result.download()), "{op:?}");
        stream.synchronize().unwrap();
        assert_eq!(
            result.download().unwrap().to_bits(),
            reduce(&dev, &xh, op).unwrap().to_bits(),
            "{op:?}"
        );
    }
}
