//! Every documented limit, at and past its edge: lengths past the index
//! ranges, batch rows, allocations past the SoC's HBM, zero lengths, k = 0,
//! empty batches. Each gives a result or an `Error` naming the argument (or
//! the failing ACL call), never a panic, an abort or a hang. Nothing here
//! holds more than 2 GiB of host memory, and that only for the i32 index
//! limit of sort and topk (u8 keys, one byte per key).
use ascend_scan::{
    compress, copy, multinomial, multinomial_with_uniforms, reduce, reduce_sum, scan, sort, split,
    sum_by_key, top_p_sample, topk, Batch, Device, Error, SampleOptions, ScanOp, ScanOptions,
    SegSumOptions, SortOptions, TopPOptions, TopkOptions, MAX_BATCH_ROWS, MAX_I8_SCAN_LEN,
    MAX_SAMPLE_DRAWS, MAX_SORT_LEN,
};
use half::f16;

/// A device of each test's own: the tests count its allocations, and the
/// default device is shared by every test of this binary (they run in
/// parallel).
fn device() -> Device {
    Device::simulated(ascend_scan::Soc::Ascend910B4).expect("simulated device")
}

/// The argument an `InvalidArgument` names; panics on any other outcome.
fn refused<T: std::fmt::Debug>(r: Result<T, Error>) -> &'static str {
    match r {
        Err(Error::InvalidArgument { name, .. }) => name,
        other => panic!("expected Error::InvalidArgument, got {other:?}"),
    }
}

#[test]
fn allocations_past_the_hbm_fail_cleanly_without_touching_memory() {
    let dev = device();
    let hbm = dev.profile().hbm_bytes as usize;
    let before = dev.allocated_bytes();
    // One byte more than the whole HBM, the whole HBM (the padding of 32 +
    // rounding makes it too big), and sizes whose padding would wrap.
    for bytes in [hbm + 1, hbm, usize::MAX, usize::MAX - 31, usize::MAX - 64] {
        match dev.alloc_zeroed::<u8>(bytes) {
            Err(Error::Runtime { call, message, .. }) => {
                assert_eq!(call, "aclrtMalloc", "{bytes} bytes");
                assert!(
                    message.contains("exceed the free HBM"),
                    "{bytes}: {message}"
                );
            }
            other => panic!("{bytes} bytes: expected an aclrtMalloc error, got {other:?}"),
        }
    }
    // Element counts whose byte size overflows usize name `len`.
    assert_eq!(refused(dev.alloc_zeroed::<f32>(usize::MAX / 2)), "len");
    assert_eq!(refused(dev.alloc_zeroed::<i32>(usize::MAX)), "len");
    assert_eq!(
        dev.allocated_bytes(),
        before,
        "failed allocations hold nothing"
    );
    // Half the HBM twice fits only once (accounting, not host memory: these
    // sizes are refused before any host allocation, the first is not).
    let half = dev.alloc_zeroed::<u8>(1 << 20).unwrap();
    let rest = hbm - dev.allocated_bytes() as usize;
    match dev.alloc_zeroed::<u8>(rest) {
        Err(Error::Runtime { call, .. }) => assert_eq!(call, "aclrtMalloc"),
        other => panic!("the free HBM minus padding: got {other:?}"),
    }
    drop(half);
    assert_eq!(dev.allocated_bytes(), before);
}

#[test]
fn buffers_free_on_drop() {
    let dev = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
    assert_eq!(dev.allocated_bytes(), 0);
    // aclrtMalloc pads: rounded up to 32 bytes, plus 32.
    let padded = |bytes: u64| bytes.div_ceil(32) * 32 + 32;
    let a = dev.upload(&[1.0f32; 100]).unwrap();
    assert_eq!(dev.allocated_bytes(), padded(400));
    let b = dev.alloc_zeroed::<i8>(1).unwrap();
    assert_eq!(dev.allocated_bytes(), padded(400) + padded(1));
    let empty = dev.alloc_zeroed::<f16>(0).unwrap();
    assert_eq!(
        dev.allocated_bytes(),
        padded(400) + padded(1),
        "empty buffers hold nothing"
    );
    drop(a);
    assert_eq!(dev.allocated_bytes(), padded(1));
    drop((b, empty));
    assert_eq!(dev.allocated_bytes(), 0);
    // Operations free their workspaces and scratch; results live until dropped.
    let x = dev.upload(&vec![f16::from_f32(1.0); 3000]).unwrap();
    let base = dev.allocated_bytes();
    let out = scan(&dev, &x, ScanOptions::default()).unwrap();
    assert_eq!(
        dev.allocated_bytes(),
        base + padded(4 * 3000),
        "only the f32 result is live"
    );
    drop(out);
    let sorted = sort(&dev, &x, SortOptions::default()).unwrap();
    drop(sorted);
    let f = dev.upload(&vec![1i8; 3000]).unwrap();
    drop(split(&dev, &x, &f).unwrap());
    drop(f);
    assert_eq!(dev.allocated_bytes(), base);
    drop(x);
    assert_eq!(dev.allocated_bytes(), 0);
}

#[test]
fn batch_rows_at_and_past_the_limit() {
    let dev = device();
    let empty = dev.upload::<f16>(&[]).unwrap();
    assert_eq!(refused(Batch::rows(&empty, 0)), "rows");
    assert_eq!(refused(Batch::rows(&empty, MAX_BATCH_ROWS + 1)), "rows");
    assert_eq!(refused(Batch::rows(&empty, usize::MAX)), "rows");
    let x = dev.upload(&[f16::from_f32(1.0); 10]).unwrap();
    assert_eq!(refused(Batch::rows(&x, 3)), "rows");
    // 65535 empty rows: a total (0) per row, no launch.
    let b = Batch::rows(&empty, MAX_BATCH_ROWS).unwrap();
    let out = scan(
        &dev,
        b,
        ScanOptions {
            want_total: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(out.totals, Some(vec![0.0; MAX_BATCH_ROWS]));
    // (65535 non-empty rows are not run here: minutes on the simulator.)
}

#[test]
fn zero_lengths_give_empty_results_or_name_the_argument() {
    let dev = device();
    let x = dev.upload::<f16>(&[]).unwrap();
    // Each operator's identity is the total of no elements (f16 -> f32).
    for (op, identity) in [
        (ScanOp::Sum, 0.0),
        (ScanOp::Max, f32::NEG_INFINITY),
        (ScanOp::Min, f32::INFINITY),
    ] {
        let options = ScanOptions {
            want_total: true,
            op,
            ..Default::default()
        };
        let out = scan(&dev, &x, options).unwrap();
        assert!(out.values.is_empty());
        assert_eq!(out.total(), Some(identity), "{op:?}");
    }
    assert_eq!(reduce_sum(&dev, &x).unwrap(), 0.0);
    assert_eq!(reduce(&dev, &x, ScanOp::Min).unwrap(), f32::INFINITY);
    assert!(copy(&x).unwrap().is_empty());
    let f = dev.upload::<i8>(&[]).unwrap();
    let c = compress(&dev, &x, &f).unwrap();
    assert_eq!((c.count, c.download_values().unwrap()), (0, vec![]));
    let s = split(&dev, &x, &f).unwrap();
    assert_eq!((s.ones, s.values.len()), (0, 0));
    let sorted = sort(&dev, Batch::rows(&x, 7).unwrap(), SortOptions::default()).unwrap();
    assert!(sorted.values.is_empty() && sorted.indices.is_empty());
    assert_eq!(refused(topk(&dev, &x, 0, TopkOptions::default())), "k");
    assert_eq!(refused(topk(&dev, &x, 1, TopkOptions::default())), "k");
    assert_eq!(
        refused(multinomial(&dev, &x, 1, SampleOptions::default())),
        "weights"
    );
    assert_eq!(
        refused(multinomial(&dev, &x, 0, SampleOptions::default())),
        "weights"
    );
    assert_eq!(
        refused(top_p_sample(&dev, &x, TopPOptions::default())),
        "probs"
    );
    // k = 0 on a non-empty row, and no draws.
    let y = dev.upload(&[f16::from_f32(0.5); 4]).unwrap();
    assert_eq!(refused(topk(&dev, &y, 0, TopkOptions::default())), "k");
    assert_eq!(refused(topk(&dev, &y, 5, TopkOptions::default())), "k");
    assert!(multinomial(&dev, &y, 0, SampleOptions::default())
        .unwrap()
        .is_empty());
    let no_u = dev.upload::<f32>(&[]).unwrap();
    assert!(multinomial_with_uniforms(&dev, &y, &no_u)
        .unwrap()
        .is_empty());
    let top = |k| TopPOptions {
        top_k: Some(k),
        ..Default::default()
    };
    assert_eq!(refused(top_p_sample(&dev, &y, top(0))), "top_k");
    assert_eq!(refused(top_p_sample(&dev, &y, top(5))), "top_k");
}

#[test]
fn i8_sums_past_the_int32_bound_are_refused() {
    let dev = device();
    let x = dev.alloc_zeroed::<i8>(MAX_I8_SCAN_LEN + 1).unwrap();
    assert_eq!(refused(scan(&dev, &x, ScanOptions::default())), "x");
    assert_eq!(refused(reduce_sum(&dev, &x)), "x");
    // By key: refused before any launch (the keys are never looked at).
    let keys = dev.alloc_zeroed::<i16>(MAX_I8_SCAN_LEN + 1).unwrap();
    let launches = dev.take_reports().len();
    let r = sum_by_key(&dev, &keys, &x, SegSumOptions::default());
    assert_eq!(refused(r), "values");
    let after: Vec<String> = dev.take_reports().into_iter().map(|r| r.kernel).collect();
    assert!(after.is_empty(), "{launches} before, then {after:?}");
}

#[test]
fn sort_and_topk_past_the_i32_index_range() {
    // i32::MAX + 1 one-byte keys (2 GiB, zeroed): refused before any launch
    // or scratch allocation.
    let dev = device();
    let n = MAX_SORT_LEN as usize + 1;
    let keys = dev.alloc_zeroed::<u8>(n).unwrap();
    let held = dev.allocated_bytes();
    assert_eq!(refused(sort(&dev, &keys, SortOptions::default())), "keys");
    assert_eq!(
        refused(topk(&dev, &keys, 1, TopkOptions::default())),
        "keys"
    );
    assert_eq!(
        dev.allocated_bytes(),
        held,
        "nothing allocated for a refused call"
    );
}

#[test]
fn draw_counts_past_the_i32_range_are_refused_before_allocating() {
    let dev = device();
    let w = dev.upload(&[f16::from_f32(1.0); 4]).unwrap();
    let before = dev.allocated_bytes();
    let past = MAX_SAMPLE_DRAWS as usize + 1;
    assert_eq!(
        refused(multinomial(&dev, &w, past, SampleOptions::default())),
        "num_samples"
    );
    assert_eq!(
        refused(multinomial(&dev, &w, usize::MAX, SampleOptions::default())),
        "num_samples"
    );
    let two = Batch::rows(&w, 2).unwrap();
    assert_eq!(
        refused(multinomial(
            &dev,
            two,
            past / 2 + 1,
            SampleOptions::default()
        )),
        "num_samples"
    );
    assert_eq!(dev.allocated_bytes(), before);
    let u = dev.upload(&[0.5f32; 3]).unwrap();
    assert_eq!(
        refused(multinomial_with_uniforms(&dev, two, &u)),
        "uniforms"
    );
}

#[test]
fn top_p_arguments_at_their_edges() {
    let dev = device();
    let y = dev
        .upload(&[f16::from_f32(0.5), f16::from_f32(0.25)])
        .unwrap();
    for p in [0.0, -0.0, -1.0, 1.0 + f32::EPSILON, f32::NAN, f32::INFINITY] {
        let o = TopPOptions {
            p,
            ..Default::default()
        };
        assert_eq!(refused(top_p_sample(&dev, &y, o)), "p", "p = {p}");
    }
    for p in [f32::MIN_POSITIVE, 1.0] {
        let o = TopPOptions {
            p,
            ..Default::default()
        };
        let t = top_p_sample(&dev, &y, o).unwrap().download().unwrap();
        assert!(t == [0] || (p == 1.0 && t == [1]), "p = {p}: {t:?}");
    }
}

#[test]
fn buffers_of_another_device_are_refused() {
    let dev = device();
    let other = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
    let x = other.upload(&[f16::from_f32(1.0); 8]).unwrap();
    let f = dev.upload(&[1i8; 8]).unwrap();
    assert_eq!(refused(scan(&dev, &x, ScanOptions::default())), "x");
    assert_eq!(refused(reduce_sum(&dev, &x)), "x");
    assert_eq!(refused(split(&dev, &x, &f)), "values");
    assert_eq!(refused(sort(&dev, &x, SortOptions::default())), "keys");
    assert_eq!(
        refused(multinomial(&dev, &x, 1, SampleOptions::default())),
        "weights"
    );
}

#[test]
fn leaked_buffers_are_reported_at_exit() {
    // The child (this test, by its name in the `it` binary): leaks one
    // buffer (and with it its device) and exits.
    if std::env::var_os("LIMITS_LEAK_CHILD").is_some() {
        let dev = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
        std::mem::forget(dev.upload(&[1u8; 100]).unwrap());
        return;
    }
    let run = |report: &str| {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["limits::leaked_buffers_are_reported_at_exit", "--exact"])
            .env("LIMITS_LEAK_CHILD", "1")
            .env("ASCSIM_LEAK_REPORT", report)
            .output()
            .unwrap();
        assert!(out.status.success(), "the child test failed");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // 100 bytes hold 160: rounded up to 128, plus 32.
    let report = run("1");
    assert!(
        report.contains(
            "ascsim: 1 live device allocation (160 bytes) at process exit: requested sizes 100"
        ),
        "stderr: {report}"
    );
    assert!(!run("0").contains("live device allocation"));
}
