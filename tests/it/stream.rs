//! The stream-ordered API: the `*_on` forms against CPU references, a
//! steady-state loop that allocates nothing, events between streams,
//! buffers kept alive by queued work, borrowed device pointers, and the
//! simulator's host-side race rule (a race is an error, its fix is not).

use ascend_scan::{
    check_row_totals, multinomial_on, multinomial_reference, multinomial_workspace_bytes, scan_on,
    scan_workspace_bytes, segmented_scan_on, segmented_scan_workspace_bytes, sort_on,
    sort_workspace_bytes, top_p_sample_on, top_p_sample_workspace_bytes, topk_on,
    topk_workspace_bytes, uniforms, Batch, Device, DeviceBuffer, Error, ScanOp, ScanOptions,
    SegScanAlgorithm, SegScanOptions, SegmentCheck, Segments, Soc, SortOptions, Task, TopPCheck,
    TopPOptions, TopPRows, TopkOptions, Workspace,
};
use half::f16;
use proptest::prelude::*;
use testkit::check::check_scan_row;
use testkit::data::f16_data;

/// A device of its own: the race tests leave streams in odd states.
fn fresh() -> Device {
    Device::simulated(Soc::default()).unwrap()
}

fn workspace(dev: &Device, bytes: usize) -> Workspace {
    Workspace::new(dev, bytes).unwrap()
}

/// Stable ascending order of finite f16 keys with indices (the CPU reference).
fn sorted_reference(keys: &[f16], rows: usize, descending: bool) -> (Vec<f16>, Vec<i32>) {
    let n = keys.len() / rows;
    let (mut v, mut ix) = (Vec::new(), Vec::new());
    for r in 0..rows {
        let row = &keys[r * n..(r + 1) * n];
        let mut perm: Vec<usize> = (0..n).collect();
        perm.sort_by(|&a, &b| {
            let o = row[a].to_f32().partial_cmp(&row[b].to_f32()).unwrap();
            if descending {
                o.reverse()
            } else {
                o
            }
        });
        v.extend(perm.iter().map(|&i| row[i]));
        ix.extend(perm.iter().map(|&i| i as i32));
    }
    (v, ix)
}

fn finite_keys(n: usize, seed: u64) -> Vec<f16> {
    f16_data(n, seed)
        .into_iter()
        .map(|v| if v.is_finite() { v } else { f16::from_f32(1.5) })
        .collect()
}

#[test]
fn scan_on_matches_the_reference_with_totals_and_max() {
    let dev = testkit::device();
    let stream = dev.create_stream().unwrap();
    for (rows, n) in [(1, 1), (1, 5000), (3, 4097), (7, 0), (16, 1000)] {
        let xs = f16_data(rows * n, 7 + n as u64);
        let x = dev.upload(&xs).unwrap();
        for op in [ScanOp::Sum, ScanOp::Max] {
            let options = ScanOptions {
                want_total: true,
                op,
                ..Default::default()
            };
            let mut ws = workspace(
                &dev,
                scan_workspace_bytes::<f16>(&dev, rows, n, options).unwrap(),
            );
            let mut values = dev.alloc_zeroed::<f32>(rows * n).unwrap();
            let mut totals = dev.alloc_zeroed::<f32>(rows).unwrap();
            scan_on(
                &stream,
                Batch::rows(&x, rows).unwrap(),
                options,
                &mut values,
                Some(&mut totals),
                &mut ws,
            )
            .unwrap();
            stream.synchronize().unwrap();
            let (y, t) = (values.download().unwrap(), totals.download().unwrap());
            for r in 0..rows {
                let row: Vec<f64> = xs[r * n..(r + 1) * n].iter().map(|v| v.to_f64()).collect();
                let got = &y[r * n..(r + 1) * n];
                match op {
                    ScanOp::Sum => check_scan_row(&row, got, t[r], false, 128.0, "scan_on"),
                    _ => {
                        let mut m = f64::NEG_INFINITY;
                        for (i, v) in row.iter().enumerate() {
                            m = if v.is_nan() || m.is_nan() {
                                f64::NAN
                            } else {
                                m.max(*v)
                            };
                            assert!(
                                testkit::check::same(f64::from(got[i]), m),
                                "max rows={rows} n={n} r={r} i={i}"
                            );
                        }
                        assert!(testkit::check::same(f64::from(t[r]), m), "max total");
                    }
                }
            }
        }
    }
}

#[test]
fn sort_on_and_topk_on_match_the_reference() {
    let dev = testkit::device();
    let stream = dev.create_stream().unwrap();
    for (rows, n) in [(1, 1), (1, 3000), (4, 777), (96, 100)] {
        let keys = finite_keys(rows * n, n as u64);
        let x = dev.upload(&keys).unwrap();
        for descending in [false, true] {
            let options = SortOptions {
                descending,
                ..Default::default()
            };
            let mut ws = workspace(
                &dev,
                sort_workspace_bytes::<f16>(&dev, rows, n, options).unwrap(),
            );
            let mut v = dev.alloc::<f16>(rows * n).unwrap();
            let mut ix = dev.alloc::<i32>(rows * n).unwrap();
            sort_on(
                &stream,
                Batch::rows(&x, rows).unwrap(),
                options,
                &mut v,
                &mut ix,
                &mut ws,
            )
            .unwrap();
            stream.synchronize().unwrap();
            let (wv, wi) = sorted_reference(&keys, rows, descending);
            let got: Vec<f32> = v.download().unwrap().iter().map(|k| k.to_f32()).collect();
            let want: Vec<f32> = wv.iter().map(|k| k.to_f32()).collect();
            assert_eq!(got, want, "sort values rows={rows} n={n} desc={descending}");
            assert_eq!(ix.download().unwrap(), wi, "sort indices rows={rows} n={n}");
        }
        let k = n.min(50);
        let options = TopkOptions::default();
        let mut ws = workspace(
            &dev,
            topk_workspace_bytes::<f16>(&dev, rows, n, k, options).unwrap(),
        );
        let mut v = dev.alloc::<f16>(rows * k).unwrap();
        let mut ix = dev.alloc::<i32>(rows * k).unwrap();
        topk_on(
            &stream,
            Batch::rows(&x, rows).unwrap(),
            k,
            options,
            &mut v,
            &mut ix,
            &mut ws,
        )
        .unwrap();
        stream.synchronize().unwrap();
        let (wv, wi) = sorted_reference(&keys, rows, true);
        let (got_v, got_i) = (v.download().unwrap(), ix.download().unwrap());
        for r in 0..rows {
            for j in 0..k {
                assert_eq!(
                    got_v[r * k + j].to_f32(),
                    wv[r * n + j].to_f32(),
                    "topk r={r} j={j}"
                );
                assert_eq!(got_i[r * k + j], wi[r * n + j], "topk index r={r} j={j}");
            }
        }
    }
}

/// A workspace reused by `topk_on` holds the previous launch's candidates:
/// a row cut into 40 pieces, first a constant row (every key a candidate,
/// 4096 per piece), then keys below it (a few candidates per piece, handed
/// off in 64-lane slots). The slots must not take the stale candidates
/// past a piece's own (the pieces pad them with NaN).
#[test]
fn topk_on_ignores_stale_candidates_in_a_reused_workspace() {
    let dev = testkit::device();
    let stream = dev.create_stream().unwrap();
    let (n, k) = (39 * 4096 + 10, 50);
    let options = TopkOptions::default();
    let mut ws = workspace(
        &dev,
        topk_workspace_bytes::<f16>(&dev, 1, n, k, options).unwrap(),
    );
    let mut v = dev.alloc::<f16>(k).unwrap();
    let mut ix = dev.alloc::<i32>(k).unwrap();
    let constant = dev.upload(&vec![f16::from_f32(5.0); n]).unwrap();
    let keys: Vec<f16> = (0..n)
        .map(|i| f16::from_f32(((i * 7919) % 1000) as f32 / 1000.0))
        .collect();
    let x = dev.upload(&keys).unwrap();
    for row in [&constant, &x] {
        topk_on(&stream, row, k, options, &mut v, &mut ix, &mut ws).unwrap();
    }
    stream.synchronize().unwrap();
    let (wv, wi) = sorted_reference(&keys, 1, true);
    let got: Vec<f32> = v.download().unwrap().iter().map(|k| k.to_f32()).collect();
    let want: Vec<f32> = wv[..k].iter().map(|k| k.to_f32()).collect();
    assert_eq!(got, want, "topk values after a reused workspace");
    assert_eq!(ix.download().unwrap(), wi[..k].to_vec(), "topk indices");
}

#[test]
fn multinomial_on_and_top_p_on_match_the_references() {
    let dev = testkit::device();
    let stream = dev.create_stream().unwrap();
    let (rows, n, draws) = (5, 3000, 7);
    let w: Vec<f32> = (0..rows * n).map(|i| ((i * 37) % 101) as f32).collect();
    let weights = dev.upload(&w).unwrap();
    let u_host = uniforms(11, rows, draws);
    let u = dev.upload(&u_host).unwrap();
    let mut ws = workspace(
        &dev,
        multinomial_workspace_bytes::<f32>(&dev, rows, n, draws).unwrap(),
    );
    let mut idx = dev.alloc::<i32>(rows * draws).unwrap();
    let mut totals = dev.alloc::<f32>(rows).unwrap();
    multinomial_on(
        &stream,
        Batch::rows(&weights, rows).unwrap(),
        &u,
        &mut idx,
        Some(&mut totals),
        &mut ws,
    )
    .unwrap();
    stream.synchronize().unwrap();
    assert_eq!(
        idx.download().unwrap(),
        multinomial_reference(&w, rows, &u_host)
    );
    check_row_totals(&totals.download().unwrap()).unwrap();

    // A zero row is reported by its total, not by the enqueue.
    let mut bad = w.clone();
    bad[2 * n..3 * n].iter_mut().for_each(|v| *v = 0.0);
    let bad = dev.upload(&bad).unwrap();
    multinomial_on(
        &stream,
        Batch::rows(&bad, rows).unwrap(),
        &u,
        &mut idx,
        Some(&mut totals),
        &mut ws,
    )
    .unwrap();
    stream.synchronize().unwrap();
    let e = check_row_totals(&totals.download().unwrap()).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument { name: "weights", reason } if reason.starts_with("row 2:")),
        "{e}"
    );

    // Top-p on the stream against the Llama 3 reference.
    let (rows, n, p) = (6, 2000, 0.8);
    let host: Vec<f32> = (0..rows)
        .flat_map(|r| super::topp::peaked(n, 50 + r as u64))
        .collect();
    let probs: Vec<f16> = host.iter().map(|&v| f16::from_f32(v)).collect();
    let back: Vec<f32> = probs.iter().map(|v| v.to_f32()).collect();
    let x = dev.upload(&probs).unwrap();
    let u_host = uniforms(3, rows, 1);
    let u = dev.upload(&u_host).unwrap();
    for top_k in [None, Some(40)] {
        let options = TopPOptions {
            p,
            top_k,
            min_p: 0.0,
            seed: 0,
        };
        let mut ws = workspace(
            &dev,
            top_p_sample_workspace_bytes::<f16>(&dev, rows, n, options).unwrap(),
        );
        let mut tokens = dev.alloc::<i32>(rows).unwrap();
        let mut check = TopPCheck::new(&dev, rows).unwrap();
        top_p_sample_on(
            &stream,
            Batch::rows(&x, rows).unwrap(),
            options,
            TopPRows::with_uniforms(&u),
            &mut tokens,
            &mut check,
            &mut ws,
        )
        .unwrap();
        stream.synchronize().unwrap();
        check.download().unwrap();
        let got = tokens.download().unwrap();
        for r in 0..rows {
            if let Some((want, _)) =
                super::topp::reference(&back[r * n..(r + 1) * n], p, top_k, u_host[r])
            {
                assert_eq!(got[r], want, "top-p row {r} top_k {top_k:?}");
            }
        }
    }
}

/// A decode-loop-like sequence: after one warm-up, 100 rounds of every
/// stream-ordered operation with reused outputs and workspace allocate no
/// device memory (the simulator counts every aclrtMalloc).
#[test]
fn a_steady_state_loop_allocates_nothing() {
    let dev = fresh();
    let stream = dev.create_stream().unwrap();
    let (rows, n, k) = (4, 4096, 20);
    let probs: Vec<f16> = (0..rows)
        .flat_map(|r| super::topp::peaked(n, r as u64))
        .map(f16::from_f32)
        .collect();
    let x = dev.upload(&probs).unwrap();
    let scan_opts = ScanOptions {
        want_total: true,
        ..Default::default()
    };
    let topp = TopPOptions {
        p: 0.9,
        top_k: Some(64),
        min_p: 0.0,
        seed: 0,
    };
    let starts: Vec<i8> = (0..rows * n).map(|i| i8::from(i % 300 == 0)).collect();
    let starts = dev.upload(&starts).unwrap();
    let bytes = [
        scan_workspace_bytes::<f16>(&dev, rows, n, scan_opts).unwrap(),
        scan_workspace_bytes::<f16>(
            &dev,
            rows,
            n,
            ScanOptions {
                op: ScanOp::Max,
                want_total: true,
                ..Default::default()
            },
        )
        .unwrap(),
        sort_workspace_bytes::<f16>(&dev, rows, n, SortOptions::default()).unwrap(),
        topk_workspace_bytes::<f16>(&dev, rows, n, k, TopkOptions::default()).unwrap(),
        multinomial_workspace_bytes::<f16>(&dev, rows, n, 1).unwrap(),
        top_p_sample_workspace_bytes::<f16>(&dev, rows, n, topp).unwrap(),
        segmented_scan_workspace_bytes::<f16>(
            &dev,
            rows * n,
            Segments::Flags(&starts),
            SegScanOptions::default(),
        )
        .unwrap(),
        ascend_scan::segmented_sum_workspace_bytes::<f16>(
            &dev,
            rows * n,
            Segments::Flags(&starts),
            Default::default(),
        )
        .unwrap(),
    ];
    let mut ws = workspace(&dev, *bytes.iter().max().unwrap());
    let mut scanned = dev.alloc::<f32>(rows * n).unwrap();
    let mut totals = dev.alloc::<f32>(rows).unwrap();
    let mut sorted = dev.alloc::<f16>(rows * n).unwrap();
    let mut order = dev.alloc::<i32>(rows * n).unwrap();
    let mut top = dev.alloc::<f16>(rows * k).unwrap();
    let mut top_ix = dev.alloc::<i32>(rows * k).unwrap();
    let mut u = dev.alloc::<f32>(rows).unwrap();
    let mut drawn = dev.alloc::<i32>(rows).unwrap();
    let mut kept = dev.alloc::<f32>(rows).unwrap();
    let mut tokens = dev.alloc::<i32>(rows).unwrap();
    let mut check = TopPCheck::new(&dev, rows).unwrap();
    let mut seg_check = SegmentCheck::new(&dev).unwrap();
    let mut seg_count = ascend_scan::SplitCount::new(&dev, rows * n).unwrap();
    let mut step = |i: u64| {
        u.write_from_host(0, &uniforms(i, rows, 1)).unwrap();
        let b = Batch::rows(&x, rows).unwrap();
        scan_on(
            &stream,
            b,
            scan_opts,
            &mut scanned,
            Some(&mut totals),
            &mut ws,
        )
        .unwrap();
        scan_on(
            &stream,
            b,
            ScanOptions {
                op: ScanOp::Max,
                want_total: true,
                ..Default::default()
            },
            &mut scanned,
            Some(&mut totals),
            &mut ws,
        )
        .unwrap();
        sort_on(
            &stream,
            b,
            SortOptions::default(),
            &mut sorted,
            &mut order,
            &mut ws,
        )
        .unwrap();
        topk_on(
            &stream,
            b,
            k,
            TopkOptions::default(),
            &mut top,
            &mut top_ix,
            &mut ws,
        )
        .unwrap();
        multinomial_on(&stream, b, &u, &mut drawn, Some(&mut kept), &mut ws).unwrap();
        top_p_sample_on(
            &stream,
            b,
            topp,
            TopPRows::with_uniforms(&u),
            &mut tokens,
            &mut check,
            &mut ws,
        )
        .unwrap();
        let opts = SegScanOptions::default();
        segmented_scan_on(
            &stream,
            &x,
            Segments::Flags(&starts),
            opts,
            &mut scanned,
            &mut seg_check,
            &mut ws,
        )
        .unwrap();
        ascend_scan::segmented_sum_on(
            &stream,
            &x,
            Segments::Flags(&starts),
            Default::default(),
            &mut scanned,
            &mut seg_count,
            &mut seg_check,
            &mut ws,
        )
        .unwrap();
        stream.synchronize().unwrap();
        check.download().unwrap();
        seg_check.download().unwrap();
        assert_eq!(seg_count.download().unwrap(), (rows * n).div_ceil(300));
        check_row_totals(&kept.download().unwrap()).unwrap();
        tokens.download().unwrap()
    };
    // The workspace queries uploaded the constant tables: from here on not
    // one allocation, the first round included.
    let before = dev.allocation_count();
    assert!(before > 0, "the simulator counts allocations");
    let first = step(0);
    for i in 0..100 {
        let t = step(i);
        if i == 0 {
            assert_eq!(t, first, "same uniforms, same tokens");
        }
    }
    assert_eq!(dev.allocation_count(), before, "allocations in 101 rounds");
    // Reports were collected for every launch and the device is clean.
    assert!(!dev.take_reports().is_empty());
}

/// Work on two streams that share a buffer needs an event between them; the
/// simulator reports the missing one, and accepts the same work with it.
#[test]
fn two_streams_need_an_event_between_them() {
    let dev = fresh();
    let (a, b) = (dev.create_stream().unwrap(), dev.create_stream().unwrap());
    let keys = dev.upload(&finite_keys(5000, 1)).unwrap();
    let opts = SortOptions::default();
    let bytes = sort_workspace_bytes::<f16>(&dev, 1, 5000, opts).unwrap();
    let (mut wa, mut wb) = (workspace(&dev, bytes), workspace(&dev, bytes));
    let mut sorted = dev.alloc::<f16>(5000).unwrap();
    let mut ix = dev.alloc::<i32>(5000).unwrap();
    let mut again = dev.alloc::<f16>(5000).unwrap();
    let mut ix2 = dev.alloc::<i32>(5000).unwrap();

    // Stream b sorts what stream a wrote, with no event: a race.
    sort_on(&a, &keys, opts, &mut sorted, &mut ix, &mut wa).unwrap();
    sort_on(&b, &sorted, opts, &mut again, &mut ix2, &mut wb).unwrap();
    a.synchronize().unwrap();
    let e = b.synchronize().unwrap_err();
    assert!(
        matches!(&e, Error::HostRace { diagnostic, .. } if diagnostic.contains("aclrtStreamWaitEvent")),
        "{e}"
    );

    // The same with an event: b waits for a's sort.
    sort_on(&a, &keys, opts, &mut sorted, &mut ix, &mut wa).unwrap();
    let done = a.record().unwrap();
    b.wait(&done).unwrap();
    sort_on(&b, &sorted, opts, &mut again, &mut ix2, &mut wb).unwrap();
    b.synchronize().unwrap();
    a.synchronize().unwrap();
    assert_eq!(
        again
            .download()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>(),
        sorted
            .download()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    );

    // An event the host waits for orders the host after the work too.
    sort_on(&a, &keys, opts, &mut sorted, &mut ix, &mut wa).unwrap();
    a.record().unwrap().synchronize().unwrap();
    sorted.download().unwrap();
    a.synchronize().unwrap();
}

/// The host reading an output before the stream is synchronised is a race
/// (on an NPU it would read stale data); so is writing an input that queued
/// work reads.
#[test]
fn the_host_must_synchronise_before_touching_queued_buffers() {
    let dev = fresh();
    let s = dev.create_stream().unwrap();
    let keys = finite_keys(3000, 2);
    let mut x = dev.upload(&keys).unwrap();
    let opts = SortOptions::default();
    let mut ws = workspace(
        &dev,
        sort_workspace_bytes::<f16>(&dev, 1, 3000, opts).unwrap(),
    );
    let mut v = dev.alloc::<f16>(3000).unwrap();
    let mut ix = dev.alloc::<i32>(3000).unwrap();

    sort_on(&s, &x, opts, &mut v, &mut ix, &mut ws).unwrap();
    let e = v.download().unwrap_err();
    assert!(
        matches!(&e, Error::HostRace { call: "aclrtMemcpy", diagnostic } if diagnostic.contains("aclrtSynchronizeStream")),
        "{e}"
    );
    s.synchronize().unwrap();
    v.download().unwrap();

    sort_on(&s, &x, opts, &mut v, &mut ix, &mut ws).unwrap();
    let e = x.write_from_host(0, &keys[..10]).unwrap_err();
    assert!(matches!(e, Error::HostRace { .. }), "{e}");
    s.synchronize().unwrap();
    x.write_from_host(0, &keys[..10]).unwrap();
}

/// Dropping a buffer that queued work still uses is safe: the stream keeps
/// it until it is synchronised, then it is freed.
#[test]
fn queued_work_keeps_its_buffers_alive() {
    let dev = fresh();
    let s = dev.create_stream().unwrap();
    let base = dev.allocated_bytes();
    let keys = finite_keys(4000, 3);
    {
        let x = dev.upload(&keys).unwrap();
        let opts = SortOptions::default();
        let mut ws = workspace(
            &dev,
            sort_workspace_bytes::<f16>(&dev, 1, 4000, opts).unwrap(),
        );
        let mut v = dev.alloc::<f16>(4000).unwrap();
        let mut ix = dev.alloc::<i32>(4000).unwrap();
        sort_on(&s, &x, opts, &mut v, &mut ix, &mut ws).unwrap();
        drop((x, ws, v, ix));
        assert!(dev.allocated_bytes() > base, "the stream holds the buffers");
    }
    s.synchronize().unwrap();
    assert_eq!(
        dev.allocated_bytes(),
        base,
        "freed after the synchronisation"
    );
}

/// A pointer another library owns, wrapped without a copy; ours handed out
/// as a raw pointer.
#[test]
fn borrowed_device_pointers_work_in_place() {
    let dev = fresh();
    let keys = finite_keys(2500, 4);
    let owner = dev.upload(&keys).unwrap();
    let allocations = dev.allocation_count();
    // SAFETY: `owner` is a live allocation of `dev` holding 2500 f16 and
    // outlives the borrow; nothing else touches it meanwhile.
    #[allow(unsafe_code)]
    let borrowed =
        unsafe { DeviceBuffer::<f16>::from_raw_parts(&dev, owner.as_raw_ptr(), 2500) }.unwrap();
    assert_eq!(
        dev.allocation_count(),
        allocations,
        "no allocation, no copy"
    );
    let sorted = ascend_scan::sort(&dev, &*borrowed, SortOptions::default()).unwrap();
    let (want, _) = sorted_reference(&keys, 1, false);
    assert_eq!(
        sorted
            .values
            .download()
            .unwrap()
            .iter()
            .map(|v| v.to_f32())
            .collect::<Vec<_>>(),
        want.iter().map(|v| v.to_f32()).collect::<Vec<_>>()
    );
    drop(borrowed);
    // The owner's memory is still there: the borrow did not free it.
    assert_eq!(owner.download().unwrap().len(), 2500);
    // SAFETY: a null pointer is refused before anything reads it.
    #[allow(unsafe_code)]
    let e =
        unsafe { DeviceBuffer::<f16>::from_raw_parts(&dev, std::ptr::null_mut(), 3) }.unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { name: "ptr", .. }),
        "{e}"
    );
}

#[test]
fn wrong_outputs_and_workspaces_are_named() {
    let dev = testkit::device();
    let s = dev.create_stream().unwrap();
    let x = dev.upload(&finite_keys(1000, 5)).unwrap();
    let opts = SortOptions::default();
    let bytes = sort_workspace_bytes::<f16>(&dev, 1, 1000, opts).unwrap();
    let mut small = workspace(&dev, bytes - 1);
    let mut ws = workspace(&dev, bytes);
    let mut v = dev.alloc::<f16>(1000).unwrap();
    let mut ix = dev.alloc::<i32>(1000).unwrap();
    let mut short = dev.alloc::<i32>(999).unwrap();
    let e = sort_on(&s, &x, opts, &mut v, &mut ix, &mut small).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                name: "workspace",
                ..
            }
        ),
        "{e}"
    );
    let e = sort_on(&s, &x, opts, &mut v, &mut short, &mut ws).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                name: "indices",
                ..
            }
        ),
        "{e}"
    );
    let other = fresh();
    let mut foreign = other.alloc::<f16>(1000).unwrap();
    let e = sort_on(&s, &x, opts, &mut foreign, &mut ix, &mut ws).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { name: "values", .. }),
        "{e}"
    );
    let mut totals = dev.alloc::<f32>(1).unwrap();
    let mut y = dev.alloc::<f32>(1000).unwrap();
    let hx = dev.upload(&finite_keys(1000, 6)).unwrap();
    let e = scan_on(
        &s,
        &hx,
        ScanOptions::default(),
        &mut y,
        Some(&mut totals),
        &mut ws,
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { name: "totals", .. }),
        "{e}"
    );
    s.synchronize().unwrap();
}

/// SEGSCAN on a stream, exact for i8 values, with its flag check.
#[test]
fn segmented_scan_on_is_exact_for_i8_and_checks_its_flags() {
    let dev = testkit::device();
    let s = dev.create_stream().unwrap();
    let mut check = SegmentCheck::new(&dev).unwrap();
    // One call with its own workspace, synchronised; the check's verdict.
    let run = |x: &DeviceBuffer<i8>,
               f: &DeviceBuffer<i8>,
               options: SegScanOptions,
               y: &mut DeviceBuffer<i32>,
               check: &mut SegmentCheck| {
        let bytes =
            segmented_scan_workspace_bytes::<i8>(&dev, f.len(), Segments::Flags(f), options)
                .unwrap();
        let mut ws = workspace(&dev, bytes);
        segmented_scan_on(&s, x, Segments::Flags(f), options, y, check, &mut ws).unwrap();
        s.synchronize().unwrap();
        check.download()
    };
    for (n, every) in [(1, 1), (4096, 7), (70000, 1000), (100_000, 3)] {
        let xs = testkit::data::i8_data(n, n as u64);
        let flags: Vec<i8> = (0..n)
            .map(|i| i8::from(i == 0 || (i * 2654435761) % every == 0))
            .collect();
        let (x, f) = (dev.upload(&xs).unwrap(), dev.upload(&flags).unwrap());
        for exclusive in [false, true] {
            let options = SegScanOptions {
                exclusive,
                algorithm: SegScanAlgorithm::Auto,
            };
            let mut y = dev.alloc::<i32>(n).unwrap();
            run(&x, &f, options, &mut y, &mut check).unwrap();
            let mut acc = 0i32;
            let want: Vec<i32> = xs
                .iter()
                .zip(&flags)
                .map(|(&v, &fl)| {
                    if fl == 1 {
                        acc = 0;
                    }
                    let before = acc;
                    acc += i32::from(v);
                    if exclusive {
                        before
                    } else {
                        acc
                    }
                })
                .collect();
            assert_eq!(y.download().unwrap(), want, "n={n} exclusive={exclusive}");
        }
    }
    let bad = dev.upload(&[1i8, 0, 2, 0]).unwrap();
    let x = dev.upload(&[1i8; 4]).unwrap();
    let options = SegScanOptions::default();
    let mut y = dev.alloc::<i32>(4).unwrap();
    let e = run(&x, &bad, options, &mut y, &mut check).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                name: "segments",
                ..
            }
        ),
        "{e}"
    );
    // The kernel writes its flag ranges into the check itself: a bad flag
    // that one of the last cores of a long call found is gone for the next,
    // one-core call with the same check (a call reads only the slots its
    // own launches write).
    let n = 100_000;
    let mut long = vec![0i8; n];
    long[n - 10] = 3;
    let (xl, fl) = (
        dev.upload(&vec![1i8; n]).unwrap(),
        dev.upload(&long).unwrap(),
    );
    let mut yl = dev.alloc::<i32>(n).unwrap();
    let e = run(&xl, &fl, options, &mut yl, &mut check).unwrap_err();
    assert!(e.to_string().contains("found 3"), "{e}");
    let good = dev.upload(&[1i8, 0, 1, 0]).unwrap();
    run(&x, &good, options, &mut y, &mut check).unwrap();
    assert_eq!(y.download().unwrap(), vec![1, 2, 1, 2]);
    let sscr = SegScanOptions {
        algorithm: SegScanAlgorithm::Sscr,
        ..Default::default()
    };
    let mut ws = workspace(
        &dev,
        segmented_scan_workspace_bytes::<i8>(&dev, 4, Segments::Flags(&bad), options).unwrap(),
    );
    let e = segmented_scan_on(
        &s,
        &x,
        Segments::Flags(&bad),
        sscr,
        &mut y,
        &mut check,
        &mut ws,
    )
    .unwrap_err();
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

/// SpMV on a stream against the f64 reference within the documented bound,
/// with its checks; the matrix's row_ptr ends are read once.
#[test]
fn spmv_on_matches_the_reference_and_checks() {
    use ascend_scan::matrices::{power_law, HostCsr};
    use ascend_scan::{spmv_on, spmv_workspace_bytes, Csr, SpmvCheck};
    let dev = testkit::device();
    let s = dev.create_stream().unwrap();
    let mut check = SpmvCheck::new(&dev).unwrap();
    let empty = HostCsr {
        shape: (5, 7),
        row_ptr: vec![0; 6],
        col_indices: vec![],
        values: vec![],
    };
    for host in [power_law(3000, 2500, 1.6, 9), empty] {
        let (m, n) = host.shape;
        let a = Csr::<f32>::upload(&dev, &host).unwrap();
        let xs: Vec<f32> = (0..n).map(|i| ((i * 7) % 13) as f32 / 13.0 - 0.4).collect();
        let x = dev.upload(&xs).unwrap();
        let mut ws = workspace(&dev, spmv_workspace_bytes(&dev, &a).unwrap());
        let mut y = dev.alloc::<f32>(m).unwrap();
        for _ in 0..2 {
            spmv_on(&s, &a, &x, &mut y, &mut check, &mut ws).unwrap();
            s.synchronize().unwrap();
            check.download(&a).unwrap();
            let x64: Vec<f64> = xs.iter().map(|&v| f64::from(v)).collect();
            let (want, bounds) = (host.reference_spmv(&x64), host.spmv_error_bounds(&x64));
            for (r, got) in y.download().unwrap().iter().enumerate() {
                assert!((f64::from(*got) - want[r]).abs() <= bounds[r], "row {r}");
            }
        }
    }
    // y = alpha A x + beta y on the stream, twice over the same y (the
    // second reads what the first wrote).
    let host = power_law(3000, 2500, 1.6, 9);
    let a = Csr::<f32>::upload(&dev, &host).unwrap();
    let xs: Vec<f32> = (0..2500)
        .map(|i| ((i * 5) % 11) as f32 / 11.0 - 0.5)
        .collect();
    let x = dev.upload(&xs).unwrap();
    let x64: Vec<f64> = xs.iter().map(|&v| f64::from(v)).collect();
    let (sums, bounds) = (host.reference_spmv(&x64), host.spmv_error_bounds(&x64));
    let old: Vec<f32> = (0..3000).map(|i| (i % 17) as f32 - 8.0).collect();
    let mut y = dev.upload(&old).unwrap();
    let mut ws = workspace(&dev, spmv_workspace_bytes(&dev, &a).unwrap());
    for _ in 0..2 {
        ascend_scan::spmv_axpby_on(&s, 2.0, &a, &x, -0.5, &mut y, &mut check, &mut ws).unwrap();
    }
    s.synchronize().unwrap();
    check.download(&a).unwrap();
    for (r, got) in y.download().unwrap().iter().enumerate() {
        // y1 = 2 s - 0.5 old, y2 = 2 s - 0.5 y1 = s - ... = 1.0 s + 0.25 old.
        let want = sums[r] + 0.25 * f64::from(old[r]);
        let slack = 4.0 * bounds[r] + 2f64.powi(-20) * (sums[r].abs() + f64::from(old[r]).abs());
        assert!(
            (f64::from(*got) - want).abs() <= slack,
            "row {r}: {got} vs {want}"
        );
    }
    // A column out of range is found on the device and named on download.
    let bad = HostCsr {
        shape: (2, 3),
        row_ptr: vec![0, 1, 2],
        col_indices: vec![0, 5],
        values: vec![1.0, 1.0],
    };
    let a = Csr::<f32>::upload(&dev, &bad).unwrap();
    let x = dev.upload(&[1.0f32; 3]).unwrap();
    let mut ws = workspace(&dev, spmv_workspace_bytes(&dev, &a).unwrap());
    let mut y = dev.alloc::<f32>(2).unwrap();
    spmv_on(&s, &a, &x, &mut y, &mut check, &mut ws).unwrap();
    s.synchronize().unwrap();
    let e = check.download(&a).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument { name: "col_indices", reason } if reason.contains("col_indices[1] = 5")),
        "{e}"
    );
    // The kernels write their slots into the check itself: the next call
    // with the same check reports nothing, though it launches fewer cores
    // than a call whose bad column one of the last cores found.
    let wide = 200_000;
    let mut cols: Vec<i32> = (0..wide).map(|i| (i % 3) as i32).collect();
    cols[wide - 5] = 3;
    let many = HostCsr {
        shape: (2, 3),
        row_ptr: vec![0, 100_000, wide as i32],
        col_indices: cols,
        values: vec![1.0; wide],
    };
    let a = Csr::<f32>::upload(&dev, &many).unwrap();
    let mut ws = workspace(&dev, spmv_workspace_bytes(&dev, &a).unwrap());
    spmv_on(&s, &a, &x, &mut y, &mut check, &mut ws).unwrap();
    s.synchronize().unwrap();
    let e = check.download(&a).unwrap_err();
    let want = format!("col_indices[{}] = 3", wide - 5);
    assert!(
        matches!(&e, Error::InvalidArgument { name: "col_indices", reason } if reason.contains(&want)),
        "{e}"
    );
    let good = HostCsr {
        col_indices: vec![0, 2],
        ..bad
    };
    let a = Csr::<f32>::upload(&dev, &good).unwrap();
    spmv_on(&s, &a, &x, &mut y, &mut check, &mut ws).unwrap();
    s.synchronize().unwrap();
    check.download(&a).unwrap();
    assert_eq!(y.download().unwrap(), vec![1.0, 1.0]);
}

/// One step of a random two-stream program (see
/// `the_race_rule_agrees_with_a_happens_before_model`).
#[derive(Debug, Clone)]
enum Step {
    /// A copy kernel on stream `s` from buffer `src` to buffer `dst`.
    Copy { s: usize, src: usize, dst: usize },
    /// Stream `s` records an event (kept as the stream's latest).
    Record { s: usize },
    /// Stream `s` waits for the latest event of stream `of`.
    Wait { s: usize, of: usize },
    /// The host synchronises stream `s`.
    Sync { s: usize },
    /// The host waits for the latest event of stream `s`.
    SyncEvent { s: usize },
    /// The host reads (download) or writes (write_from_host) buffer `b`.
    Host { b: usize, write: bool },
}

const AGENTS: usize = 3; // 0 the host, 1 and 2 the streams
const BUFFERS: usize = 3;

/// The happens-before model the simulator's rule is meant to implement:
/// vector clocks over the host and the streams, per buffer each agent's
/// latest read and write.
#[derive(Default)]
struct Model {
    clock: [[u64; AGENTS]; AGENTS],
    events: [Option<[u64; AGENTS]>; AGENTS],
    /// [buffer][agent] = (read time, write time)
    last: [[(u64, u64); AGENTS]; BUFFERS],
    /// A launch of the stream raced since its last synchronisation.
    pending: [bool; AGENTS],
}

impl Model {
    fn join(into: &mut [u64; AGENTS], from: &[u64; AGENTS]) {
        for (a, b) in into.iter_mut().zip(from) {
            *a = (*a).max(*b);
        }
    }

    /// Stamps an access of `agent` (whose clock already counts it); true
    /// when it races with another agent's access.
    fn access(&mut self, agent: usize, b: usize, write: bool) -> bool {
        let clock = self.clock[agent];
        let race = (0..AGENTS).filter(|&o| o != agent).any(|o| {
            let (r, w) = self.last[b][o];
            w > clock[o] || (write && r > clock[o])
        });
        let now = clock[agent];
        let slot = &mut self.last[b][agent];
        if write {
            slot.1 = now;
        } else {
            slot.0 = now;
        }
        race
    }

    /// Work enqueued on stream `s`: after the host's past, one tick.
    fn enqueue(&mut self, s: usize) {
        let host = self.clock[0];
        Self::join(&mut self.clock[s], &host);
        self.clock[s][s] += 1;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..Default::default() })]

    /// Random programs of copies on two streams, events, synchronisations
    /// and host accesses: the simulator reports a host-side race exactly
    /// where the happens-before model finds one, and nowhere else.
    #[test]
    fn the_race_rule_agrees_with_a_happens_before_model(
        steps in proptest::collection::vec(
            prop_oneof![
                (1usize..3, 0usize..BUFFERS, 0usize..BUFFERS)
                    .prop_filter("distinct buffers", |(_, a, b)| a != b)
                    .prop_map(|(s, src, dst)| Step::Copy { s, src, dst }),
                (1usize..3).prop_map(|s| Step::Record { s }),
                (1usize..3).prop_map(|s| Step::Wait { s, of: 3 - s }),
                (1usize..3).prop_map(|s| Step::Sync { s }),
                (1usize..3).prop_map(|s| Step::SyncEvent { s }),
                (0usize..BUFFERS, any::<bool>()).prop_map(|(b, write)| Step::Host { b, write }),
            ],
            1..14,
        )
    ) {
        // One device for every case (a process holds at most 64 simulated
        // devices); each case has its own streams and buffers.
        static DEVICE: std::sync::OnceLock<Device> = std::sync::OnceLock::new();
        let dev = DEVICE.get_or_init(fresh);
        let streams = [dev.create_stream().unwrap(), dev.create_stream().unwrap()];
        let mut model = Model::default();
        let mut bufs: Vec<DeviceBuffer<f32>> = (0..BUFFERS)
            .map(|b| {
                model.clock[0][0] += 1;
                model.access(0, b, true);
                dev.upload(&[b as f32; 1000]).unwrap()
            })
            .collect();
        let mut events: [Option<ascend_scan::Event>; AGENTS] = Default::default();
        for (i, step) in steps.iter().enumerate() {
            match *step {
                Step::Copy { s, src, dst } => {
                    model.enqueue(s);
                    let read = model.access(s, src, false);
                    let wrote = model.access(s, dst, true);
                    model.pending[s] |= read || wrote;
                    let (lo, hi) = bufs.split_at_mut(src.max(dst));
                    let (from, to) = if src < dst { (&lo[src], &mut hi[0]) } else { (&hi[0], &mut lo[dst]) };
                    ascend_scan::copy_on(&streams[s - 1], from, to).unwrap();
                }
                Step::Record { s } => {
                    let host = model.clock[0];
                    Model::join(&mut model.clock[s], &host);
                    model.events[s] = Some(model.clock[s]);
                    events[s] = Some(streams[s - 1].record().unwrap());
                }
                Step::Wait { s, of } => {
                    if let (Some(e), Some(vc)) = (&events[of], model.events[of]) {
                        let host = model.clock[0];
                        Model::join(&mut model.clock[s], &host);
                        Model::join(&mut model.clock[s], &vc);
                        streams[s - 1].wait(e).unwrap();
                    }
                }
                Step::Sync { s } => {
                    let got = streams[s - 1].synchronize();
                    let done = model.clock[s];
                    Model::join(&mut model.clock[0], &done);
                    let want = std::mem::take(&mut model.pending[s]);
                    prop_assert_eq!(
                        matches!(got, Err(Error::HostRace { .. })),
                        want,
                        "step {} {:?}: {:?}",
                        i,
                        step,
                        got
                    );
                    if !want {
                        prop_assert!(got.is_ok(), "step {} {:?}: {:?}", i, step, got);
                    }
                }
                Step::SyncEvent { s } => {
                    if let (Some(e), Some(vc)) = (&events[s], model.events[s]) {
                        Model::join(&mut model.clock[0], &vc);
                        e.synchronize().unwrap();
                    }
                }
                Step::Host { b, write } => {
                    model.clock[0][0] += 1;
                    let want = model.access(0, b, write);
                    let got = if write {
                        bufs[b].write_from_host(0, &[7.0; 10])
                    } else {
                        bufs[b].download().map(|_| ())
                    };
                    prop_assert_eq!(
                        matches!(got, Err(Error::HostRace { .. })),
                        want,
                        "step {} {:?}: {:?}",
                        i,
                        step,
                        got
                    );
                    if !want {
                        prop_assert!(got.is_ok(), "step {} {:?}: {:?}", i, step, got);
                    }
                }
            }
        }
        for s in 1..AGENTS {
            let got = streams[s - 1].synchronize();
            prop_assert_eq!(got.is_err(), model.pending[s], "final sync of stream {}: {:?}", s, got);
        }
    }
}

/// Segment sums on a stream: exact for i8 values (against the sequential
/// definition) and bit for bit those of the blocking form for f16 and f32;
/// the count stays on the device until downloaded.
#[test]
fn segmented_sum_on_matches_the_definition() {
    use ascend_scan::{
        segmented_sum_on, segmented_sum_workspace_bytes, SegSumOptions, Segments, SplitCount,
    };
    let dev = testkit::device();
    let s = dev.create_stream().unwrap();
    let mut check = SegmentCheck::new(&dev).unwrap();
    let options = SegSumOptions::default();
    for (n, every) in [(0, 1), (1, 1), (5000, 1), (70000, 977), (100_000, 7)] {
        let flags: Vec<i8> = (0..n)
            .map(|i| i8::from(i == 0 || (i * 2654435761) % every == 0))
            .collect();
        let f = dev.upload(&flags).unwrap();
        let mut count = SplitCount::new(&dev, n).unwrap();
        let mut ws = workspace(
            &dev,
            segmented_sum_workspace_bytes::<i8>(&dev, n, Segments::Flags(&f), options).unwrap(),
        );
        let xs = testkit::data::i8_data(n, n as u64 + 1);
        let x = dev.upload(&xs).unwrap();
        let mut sums = dev.alloc::<i32>(n).unwrap();
        segmented_sum_on(
            &s,
            &x,
            Segments::Flags(&f),
            options,
            &mut sums,
            &mut count,
            &mut check,
            &mut ws,
        )
        .unwrap();
        s.synchronize().unwrap();
        check.download().unwrap();
        let k = count.download().unwrap();
        let mut want: Vec<i32> = Vec::new();
        for (i, (&v, &fl)) in xs.iter().zip(&flags).enumerate() {
            if i == 0 || fl == 1 {
                want.push(0);
            }
            *want.last_mut().unwrap() += i32::from(v);
        }
        assert_eq!(k, want.len(), "segments n={n}");
        assert_eq!(sums.download_prefix(k).unwrap(), want, "sums n={n}");

        // f16 and f32: the same bits as the blocking form.
        let mut sums = dev.alloc::<f32>(n).unwrap();
        let parts = (&s, &f, &mut sums, &mut count, &mut check);
        same_sums_as_blocking(&dev, &f16_data(n, n as u64 + 2), parts);
        let parts = (&s, &f, &mut sums, &mut count, &mut check);
        same_sums_as_blocking(&dev, &testkit::data::f32_data(n, n as u64 + 3), parts);
    }
}

/// `segmented_sum_on` of `xs` by `flags` (Auto) gives the blocking form's
/// count and the same bits.
fn same_sums_as_blocking<T: ascend_scan::SegmentedSumInput<Acc = f32>>(
    dev: &Device,
    xs: &[T],
    (s, flags, sums, count, check): (
        &ascend_scan::Stream,
        &ascend_scan::DeviceBuffer<i8>,
        &mut ascend_scan::DeviceBuffer<f32>,
        &mut ascend_scan::SplitCount,
        &mut SegmentCheck,
    ),
) {
    use ascend_scan::{
        segmented_sum, segmented_sum_on, segmented_sum_workspace_bytes, SegSumOptions, Segments,
    };
    let (n, options, segments) = (xs.len(), SegSumOptions::default(), Segments::Flags(flags));
    let x = dev.upload(xs).unwrap();
    let bytes = segmented_sum_workspace_bytes::<T>(dev, n, segments, options).unwrap();
    let mut ws = workspace(dev, bytes);
    segmented_sum_on(s, &x, segments, options, sums, count, check, &mut ws).unwrap();
    s.synchronize().unwrap();
    let k = count.download().unwrap();
    let blocking = segmented_sum(dev, &x, segments, options).unwrap();
    let what = std::any::type_name::<T>();
    assert_eq!(k, blocking.count, "{what} segments n={n}");
    let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
    assert_eq!(
        bits(sums.download_prefix(k).unwrap()),
        bits(blocking.download().unwrap()),
        "{what} sums n={n}"
    );
}

/// Segments as offsets on a stream: checked and turned into flags on the
/// device (no host round trip), scans and sums exact for i8 with empty
/// segments summing to 0, nothing allocated after the first round; bad
/// offsets are reported by the check, and a later call reports its own.
#[test]
fn segmented_ops_on_take_offsets() {
    use ascend_scan::{segmented_sum_on, segmented_sum_workspace_bytes, SegSumOptions, SplitCount};
    let dev = fresh(); // its allocation count is this test's alone
    let s = dev.create_stream().unwrap();
    let mut check = SegmentCheck::new(&dev).unwrap();
    let n = 30_000;
    let xs = testkit::data::i8_data(n, 11);
    let x = dev.upload(&xs).unwrap();
    let offsets = [0, 0, 7, 7, 7, 8191, 8192, 20_000, 29_999, 30_000, 30_000];
    let o = dev.upload(&offsets).unwrap();
    let segs = Segments::Offsets(&o);
    let m = offsets.len() - 1;
    let scan_opts = SegScanOptions {
        exclusive: true,
        ..Default::default()
    };
    let sum_opts = SegSumOptions::default();
    let bytes = segmented_scan_workspace_bytes::<i8>(&dev, n, segs, scan_opts)
        .unwrap()
        .max(segmented_sum_workspace_bytes::<i8>(&dev, n, segs, sum_opts).unwrap())
        .max(segmented_sum_workspace_bytes::<f32>(&dev, n, segs, sum_opts).unwrap());
    let mut ws = workspace(&dev, bytes);
    // The same values as f32 (SEGSUM, then SegSpread): exact sums.
    let x32 = dev
        .upload(&xs.iter().map(|&v| f32::from(v)).collect::<Vec<_>>())
        .unwrap();
    let mut sums32 = dev.alloc::<f32>(m).unwrap();
    let mut y = dev.alloc::<i32>(n).unwrap();
    let mut sums = dev.alloc::<i32>(m).unwrap();
    let mut count = SplitCount::new(&dev, n).unwrap();
    let mut want_scan = vec![0i32; n];
    let mut want_sums = vec![0i32; m];
    for (k, w) in offsets.windows(2).enumerate() {
        let mut acc = 0;
        for i in w[0] as usize..w[1] as usize {
            want_scan[i] = acc;
            acc += i32::from(xs[i]);
        }
        want_sums[k] = acc;
    }
    let mut allocations = None;
    for round in 0..4 {
        segmented_scan_on(&s, &x, segs, scan_opts, &mut y, &mut check, &mut ws).unwrap();
        segmented_sum_on(
            &s, &x, segs, sum_opts, &mut sums, &mut count, &mut check, &mut ws,
        )
        .unwrap();
        s.synchronize().unwrap();
        check.download().unwrap();
        assert_eq!(count.download().unwrap(), m, "round {round}");
        assert_eq!(y.download().unwrap(), want_scan, "round {round}");
        assert_eq!(sums.download().unwrap(), want_sums, "round {round}");
        segmented_sum_on(
            &s,
            &x32,
            segs,
            sum_opts,
            &mut sums32,
            &mut count,
            &mut check,
            &mut ws,
        )
        .unwrap();
        s.synchronize().unwrap();
        check.download().unwrap();
        assert_eq!(count.download().unwrap(), m, "f32, round {round}");
        let want32: Vec<f32> = want_sums.iter().map(|&v| v as f32).collect();
        assert_eq!(sums32.download().unwrap(), want32, "f32, round {round}");
        let now = dev.allocation_count();
        assert_eq!(
            *allocations.get_or_insert(now),
            now,
            "round {round} allocated"
        );
    }
    // Bad offsets: reported by the check after the sync, as the blocking
    // form does; by the scan and by the f32 sums (SegFlags, SEGSUM, SegSpread).
    let bad = dev.upload(&[0, 5, 3, n as i32]).unwrap();
    let bad_segs = Segments::Offsets(&bad);
    let mut three = dev.alloc::<f32>(3).unwrap();
    for sum in [false, true] {
        if sum {
            let sums = &mut three;
            segmented_sum_on(
                &s, &x32, bad_segs, sum_opts, sums, &mut count, &mut check, &mut ws,
            )
        } else {
            segmented_scan_on(&s, &x, bad_segs, scan_opts, &mut y, &mut check, &mut ws)
        }
        .unwrap();
        s.synchronize().unwrap();
        let e = check.download().unwrap_err().to_string();
        assert!(
            e.contains("offsets[2] = 3 is less than offsets[1] = 5"),
            "{e}"
        );
    }
    // The next call starts the check afresh, with no zeroing task: SegFlags
    // and SEGSCAN are its only tasks.
    dev.take_reports();
    segmented_scan_on(&s, &x, segs, scan_opts, &mut y, &mut check, &mut ws).unwrap();
    s.synchronize().unwrap();
    let tasks: Vec<_> = dev.take_reports().iter().map(|r| r.task).collect();
    assert_eq!(tasks, [Task::Kernel, Task::Kernel]);
    check.download().unwrap();
    // A decrease only a late core of a long SegFlags launch sees, then a
    // call with flags (no SegFlags launch) and one with offsets that one
    // core checks: neither reads the stale slots.
    let cores = dev.profile().vector_cores as i32;
    let mut long: Vec<i32> = (0..=cores * 600).collect();
    let k = long.len() - 5;
    long[k] = long[k - 1] - 1;
    *long.last_mut().unwrap() = n as i32;
    let long = dev.upload(&long).unwrap();
    let long_segs = Segments::Offsets(&long);
    let long_bytes = segmented_scan_workspace_bytes::<i8>(&dev, n, long_segs, scan_opts).unwrap();
    let mut ws = workspace(&dev, long_bytes.max(bytes));
    let starts: Vec<i8> = (0..n).map(|i| i8::from(i % 100 == 0)).collect();
    let starts = dev.upload(&starts).unwrap();
    // Each round: the bad long offsets, then a call that must pass.
    for good in [Segments::Flags(&starts), segs] {
        segmented_scan_on(&s, &x, long_segs, scan_opts, &mut y, &mut check, &mut ws).unwrap();
        s.synchronize().unwrap();
        let e = check.download().unwrap_err().to_string();
        assert!(e.contains(&format!("offsets[{k}]")), "{e}");
        segmented_scan_on(&s, &x, good, scan_opts, &mut y, &mut check, &mut ws).unwrap();
        s.synchronize().unwrap();
        check.download().unwrap();
    }
    // One sum per segment: a sums buffer of another length is named.
    let mut short = dev.alloc::<i32>(m - 1).unwrap();
    let e = segmented_sum_on(
        &s, &x, segs, sum_opts, &mut short, &mut count, &mut check, &mut ws,
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { name: "sums", .. }),
        "{e}"
    );
}

/// Seeded uniforms made on the device are the host's `uniforms` bit for bit
/// (tiles and cores crossed), and top-p on a stream draws with them when no
/// uniforms are given: the blocking form's tokens, with no allocation and no
/// upload per step.
#[test]
fn seeded_uniforms_on_the_device_match_the_host() {
    use ascend_scan::{top_p_sample, uniforms_on};
    let dev = fresh(); // its allocation count is this test's alone
    let s = dev.create_stream().unwrap();
    for (rows, draws, seed) in [
        (1, 1, 0u64),
        (96, 1, 7),
        (7, 3000, u64::MAX),
        (3, 50_000, 12345),
    ] {
        let mut u = dev.alloc::<f32>(rows * draws).unwrap();
        uniforms_on(&s, seed, rows, &mut u).unwrap();
        s.synchronize().unwrap();
        let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
        assert_eq!(
            bits(u.download().unwrap()),
            bits(uniforms(seed, rows, draws)),
            "{rows} x {draws}, seed {seed}"
        );
    }
    let mut odd = dev.alloc::<f32>(10).unwrap();
    let e = uniforms_on(&s, 1, 3, &mut odd).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { name: "rows", .. }),
        "{e}"
    );

    let (rows, n) = (5, 3000);
    let probs: Vec<f16> = (0..rows)
        .flat_map(|r| super::topp::peaked(n, 90 + r as u64))
        .map(f16::from_f32)
        .collect();
    let x = dev.upload(&probs).unwrap();
    let options = TopPOptions {
        p: 0.9,
        top_k: Some(100),
        min_p: 0.0,
        seed: 0,
    };
    let mut ws = workspace(
        &dev,
        top_p_sample_workspace_bytes::<f16>(&dev, rows, n, options).unwrap(),
    );
    let mut tokens = dev.alloc::<i32>(rows).unwrap();
    let mut check = TopPCheck::new(&dev, rows).unwrap();
    for step in 0..4u64 {
        let seeded = TopPOptions {
            seed: step,
            ..options
        };
        let before = dev.allocation_count();
        let b = Batch::rows(&x, rows).unwrap();
        top_p_sample_on(
            &s,
            b,
            seeded,
            TopPRows::default(),
            &mut tokens,
            &mut check,
            &mut ws,
        )
        .unwrap();
        s.synchronize().unwrap();
        check.download().unwrap();
        assert_eq!(dev.allocation_count(), before, "step {step} allocated");
        let want = top_p_sample(&dev, b, seeded).unwrap().download().unwrap();
        assert_eq!(tokens.download().unwrap(), want, "step {step}");
    }
}

/// The stream's copy tasks are reported next to the kernels (the cost model
/// charges them), and a totals buffer that an `aclrtMemcpyAsync`
/// would fill off a 64-byte boundary is refused by name.
#[test]
fn copy_tasks_are_reported_and_need_64_byte_boundaries() {
    let dev = fresh();
    let s = dev.create_stream().unwrap();
    let rows = 3;
    let n = 1000;
    let data = f16_data(rows * n, 7);
    let x = dev.upload(&data).unwrap();
    let opts = ScanOptions {
        want_total: true,
        ..ScanOptions::default()
    };
    let bytes = scan_workspace_bytes::<f16>(&dev, rows, n, opts).unwrap();
    let mut ws = workspace(&dev, bytes);
    let mut values = dev.alloc::<f32>(rows * n).unwrap();
    let totals = dev.alloc::<f32>(rows + 16).unwrap();
    dev.take_reports();
    let batch = Batch::rows(&x, rows).unwrap();
    let mut head = totals.as_raw_ptr();
    // SAFETY: `totals` is a live allocation of `dev` of rows + 16 f32 and
    // outlives the borrow; nothing else touches it meanwhile.
    #[allow(unsafe_code)]
    let mut aligned = unsafe { DeviceBuffer::<f32>::from_raw_parts(&dev, head, rows) }.unwrap();
    scan_on(&s, batch, opts, &mut values, Some(&mut aligned), &mut ws).unwrap();
    s.synchronize().unwrap();
    let reports = dev.take_reports();
    let tasks: Vec<_> = reports
        .iter()
        .map(|r| (r.kernel.as_str(), r.task))
        .collect();
    assert!(
        tasks.iter().any(|t| t.1 == Task::Copy) && tasks.iter().any(|t| t.1 == Task::Kernel),
        "{tasks:?}"
    );
    let copied = reports.iter().find(|r| r.task == Task::Copy).unwrap();
    assert!(copied.gm_read_bytes > 0 && copied.gm_read_bytes == copied.gm_write_bytes);
    let mut want = Vec::new();
    for r in 0..rows {
        want.push(
            data[r * n..(r + 1) * n]
                .iter()
                .map(|v| f64::from(v.to_f32()))
                .sum::<f64>(),
        );
    }
    for (got, want) in aligned.download().unwrap().iter().zip(&want) {
        assert!(
            (f64::from(*got) - want).abs() <= 1e-3 * want.abs().max(1.0),
            "{got} vs {want}"
        );
    }
    drop(aligned);
    // Four bytes in: aligned for f32, not for the copy.
    head = head.wrapping_byte_add(4);
    // SAFETY: as above; the borrow lies inside the allocation.
    #[allow(unsafe_code)]
    let mut odd = unsafe { DeviceBuffer::<f32>::from_raw_parts(&dev, head, rows) }.unwrap();
    let e = scan_on(&s, batch, opts, &mut values, Some(&mut odd), &mut ws).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { name: "totals", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("64-byte"), "{e}");
    drop(odd);
    drop(totals);
}

/// One call of a [`SegmentCheck`] sequence: a segmented scan or sum (i8
/// values) over n elements, by flags or by offsets, good or with one bad
/// entry at a random place.
#[derive(Debug, Clone)]
struct SegCall {
    n: usize,
    sum: bool,
    by_offsets: bool,
    /// Every `every`-th element starts a segment.
    every: usize,
    /// Where the bad entry goes, as a fraction of the segments: None for good.
    bad_at: Option<f64>,
    /// Whether the check is downloaded after this call.
    download: bool,
}

fn seg_call() -> impl Strategy<Value = SegCall> {
    (
        1usize..60_000,
        any::<bool>(),
        any::<bool>(),
        // Dense segmentations too: SegFlags checks more than 1984 segments
        // on several cores.
        prop_oneof![1usize..30, 30usize..3000],
        proptest::option::of(0.0f64..1.0),
        any::<bool>(),
    )
        .prop_map(|(n, sum, by_offsets, every, bad_at, download)| SegCall {
            n,
            // Sums by flags report a bad flag through their count instead.
            sum: sum && by_offsets,
            by_offsets,
            every,
            bad_at,
            download,
        })
}

impl SegCall {
    /// Runs the call with `check` on `s`; whether its segments were bad.
    fn run(&self, dev: &Device, s: &ascend_scan::Stream, check: &mut SegmentCheck) -> bool {
        use ascend_scan::{
            segmented_sum_on, segmented_sum_workspace_bytes, SegSumOptions, SplitCount,
        };
        let n = self.n;
        let x = dev.upload(&testkit::data::i8_data(n, n as u64)).unwrap();
        let mut flags: Vec<i8> = (0..n).map(|i| i8::from(i % self.every == 0)).collect();
        let mut offsets: Vec<i32> = (0..n).step_by(self.every).map(|i| i as i32).collect();
        offsets.push(n as i32);
        let mut bad = false;
        if let Some(at) = self.bad_at {
            if self.by_offsets && offsets.len() >= 3 {
                // A decrease at an inner entry (the ends stay right).
                let k = 1 + (at * (offsets.len() - 2) as f64) as usize;
                offsets[k] = offsets[k - 1] - 1;
                bad = true;
            } else if !self.by_offsets {
                flags[(at * n as f64) as usize] = 2;
                bad = true;
            }
        }
        let (f, o) = (dev.upload(&flags).unwrap(), dev.upload(&offsets).unwrap());
        let segments = if self.by_offsets {
            Segments::Offsets(&o)
        } else {
            Segments::Flags(&f)
        };
        if self.sum {
            let options = SegSumOptions::default();
            let bytes = segmented_sum_workspace_bytes::<i8>(dev, n, segments, options).unwrap();
            let mut ws = workspace(dev, bytes);
            let mut sums = dev.alloc::<i32>(offsets.len() - 1).unwrap();
            let mut count = SplitCount::new(dev, n).unwrap();
            segmented_sum_on(
                s, &x, segments, options, &mut sums, &mut count, check, &mut ws,
            )
            .unwrap();
        } else {
            let options = SegScanOptions::default();
            let bytes = segmented_scan_workspace_bytes::<i8>(dev, n, segments, options).unwrap();
            let mut ws = workspace(dev, bytes);
            let mut y = dev.alloc::<i32>(n).unwrap();
            segmented_scan_on(s, &x, segments, options, &mut y, check, &mut ws).unwrap();
        }
        bad
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..Default::default() })]

    /// A reused [`SegmentCheck`] reports exactly the last call's segments,
    /// whatever the calls before it launched (more cores, SegFlags or not,
    /// bad entries) and whether or not they were downloaded.
    #[test]
    fn a_reused_segment_check_reports_the_last_call(calls in proptest::collection::vec(seg_call(), 1..5)) {
        let dev = testkit::device();
        let s = dev.create_stream().unwrap();
        let mut check = SegmentCheck::new(&dev).unwrap();
        let last = calls.len() - 1;
        for (i, call) in calls.iter().enumerate() {
            let bad = call.run(&dev, &s, &mut check);
            if call.download || i == last {
                s.synchronize().unwrap();
                let got = check.download();
                prop_assert_eq!(got.is_err(), bad, "call {} of {:?}: {:?}", i, calls, got);
                if let Err(e) = got {
                    prop_assert!(matches!(e, Error::InvalidArgument { name: "segments", .. }), "{}", e);
                }
            }
        }
    }
}
