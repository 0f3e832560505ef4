//! Several host threads on one Device, and several Devices at once, give
//! bit-exact the results of serial runs. The device's stream mutex
//! serialises launches on one device; allocations, uploads and downloads
//! go through the simulator's runtime lock, with the current device bound
//! per thread.

use ascend_scan::{
    multinomial, reduce_sum, scan, sort, split, topk, Algorithm, Batch, Device, SampleOptions,
    ScanOptions, Soc, SortOptions, TopkOptions,
};
use half::f16;
use testkit::data::{f16_data, i8_data, words};
use testkit::device;

/// Results of a mix of operations on inputs made from `seed`, as bits.
fn workload(dev: &Device, seed: u64) -> Vec<u64> {
    let n = 700 + (seed as usize % 5) * 97;
    let xs = f16_data(n, seed);
    let x = dev.upload(&xs).unwrap();
    let mut out = Vec::new();
    for algorithm in [
        Algorithm::ScanU { s: 32 },
        Algorithm::McScan { s: 16 },
        Algorithm::VectorScan,
    ] {
        let options = ScanOptions {
            algorithm,
            want_total: true,
            ..Default::default()
        };
        let y = scan(dev, &x, options).unwrap();
        out.extend(
            y.values
                .download()
                .unwrap()
                .iter()
                .map(|v| u64::from(v.to_bits())),
        );
        out.push(u64::from(y.total().unwrap().to_bits()));
    }
    let rows = scan(
        dev,
        Batch::rows(&x, gcd_rows(n)).unwrap(),
        ScanOptions::default(),
    )
    .unwrap();
    out.extend(
        rows.values
            .download()
            .unwrap()
            .iter()
            .map(|v| u64::from(v.to_bits())),
    );
    let b = dev.upload(&i8_data(n, seed)).unwrap();
    out.push(reduce_sum(dev, &b).unwrap() as u64);
    let flags: Vec<i8> = words(n, seed).map(|w| (w & 1) as i8).collect();
    let f = dev.upload(&flags).unwrap();
    let s = split(dev, &x, &f).unwrap();
    out.extend(
        s.values
            .download()
            .unwrap()
            .iter()
            .map(|v| u64::from(v.to_bits())),
    );
    out.extend(
        s.indices
            .unwrap()
            .download()
            .unwrap()
            .iter()
            .map(|&i| i as u64),
    );
    let sorted = sort(dev, &x, SortOptions::default()).unwrap();
    out.extend(sorted.indices.download().unwrap().iter().map(|&i| i as u64));
    let top = topk(dev, &x, 10, TopkOptions::default()).unwrap();
    out.extend(top.indices.download().unwrap().iter().map(|&i| i as u64));
    let w: Vec<f16> = xs.iter().map(|v| f16::from_f32(v.to_f32().abs())).collect();
    let wb = dev.upload(&w).unwrap();
    let draws = multinomial(dev, &wb, 32, SampleOptions { seed }).unwrap();
    out.extend(draws.download().unwrap().iter().map(|&i| i as u64));
    out
}

/// A row count that divides `n` (2 when even, else 1).
fn gcd_rows(n: usize) -> usize {
    if n.is_multiple_of(2) {
        2
    } else {
        1
    }
}

const THREADS: u64 = 4;
const ROUNDS: usize = 2;

#[test]
fn threads_sharing_one_device_match_serial_runs() {
    // A device of its own: its allocation count is checked, and the default
    // device is shared with the other tests of this binary.
    let dev = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
    let serial: Vec<Vec<u64>> = (0..THREADS).map(|t| workload(&dev, t)).collect();
    let before = dev.allocated_bytes();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let dev = dev.clone();
                scope.spawn(move || (0..ROUNDS).map(|_| workload(&dev, t)).collect::<Vec<_>>())
            })
            .collect();
        for (t, h) in handles.into_iter().enumerate() {
            for got in h.join().unwrap() {
                assert!(got == serial[t], "thread {t} differs from its serial run");
            }
        }
    });
    assert_eq!(
        dev.allocated_bytes(),
        before,
        "buffers of the threads freed"
    );
}

#[test]
fn several_devices_at_once_match_serial_runs() {
    let devices: Vec<Device> = [Soc::Ascend910B4, Soc::Ascend910B1, Soc::Ascend910B4]
        .into_iter()
        .map(|soc| Device::simulated(soc).unwrap())
        .collect();
    let serial: Vec<Vec<u64>> = devices
        .iter()
        .enumerate()
        .map(|(i, d)| workload(d, 10 + i as u64))
        .collect();
    std::thread::scope(|scope| {
        // Two threads per device: streams of different devices run at the
        // same time, and each device's stream is shared by two threads.
        let handles: Vec<_> = devices
            .iter()
            .enumerate()
            .flat_map(|(i, d)| {
                (0..2).map(move |_| {
                    let d = d.clone();
                    scope.spawn(move || (i, workload(&d, 10 + i as u64)))
                })
            })
            .collect();
        for h in handles {
            let (i, got) = h.join().unwrap();
            assert!(got == serial[i], "device {i} differs from its serial run");
        }
    });
    for d in &devices {
        assert_eq!(d.allocated_bytes(), 0, "{d:?}: every buffer freed");
    }
}

#[test]
fn one_buffer_read_by_many_threads() {
    let dev = device();
    let x = dev.upload(&f16_data(5000, 99)).unwrap();
    let options = ScanOptions {
        algorithm: Algorithm::ReduceThenScan { s: 64 },
        want_total: true,
        ..Default::default()
    };
    let want = scan(&dev, &x, options).unwrap().values.download().unwrap();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| scan(&dev, &x, options).unwrap().values.download().unwrap()))
            .collect();
        for h in handles {
            let got = h.join().unwrap();
            assert!(
                got.iter()
                    .map(|v| v.to_bits())
                    .eq(want.iter().map(|v| v.to_bits())),
                "a concurrent scan of a shared buffer differs"
            );
        }
    });
}

#[test]
fn devices_created_and_dropped_on_many_threads() {
    // Creation races on the device ids and the runtime's tables; every
    // device gets its own id and works, and a dropped device frees its
    // stream. (Ids are not reused: 64 per process, so few here.)
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..3)
            .map(|t| {
                scope.spawn(move || {
                    let d = Device::simulated(Soc::Ascend910B2).unwrap();
                    workload(&d, 20 + t)
                })
            })
            .collect();
        for (t, h) in handles.into_iter().enumerate() {
            let got = h.join().unwrap();
            let d = Device::simulated(Soc::Ascend910B2).unwrap();
            assert!(got == workload(&d, 20 + t as u64), "thread {t}");
        }
    });
}
