//! reduce_sum against exact references.
use ascend_scan::{reduce_sum, Device, Error};
use half::f16;
use testkit::device;

#[test]
fn sums_match_the_reference() {
    let dev = device();
    for n in [
        0usize,
        1,
        31,
        4095,
        4096,
        4097,
        40 * 4096,
        40 * 4096 + 1,
        1 << 20,
        (1 << 20) + 12345,
    ] {
        let xi: Vec<i8> = (0..n).map(|i| ((i * 2654435761usize) >> 7) as i8).collect();
        let want: i64 = xi.iter().map(|&v| i64::from(v)).sum();
        assert_eq!(
            i64::from(reduce_sum(&dev, &dev.upload(&xi).unwrap()).unwrap()),
            want,
            "i8 n={n}"
        );

        let xf: Vec<f16> = (0..n)
            .map(|i| f16::from_f32((i % 997) as f32 / 8.0 - 60.0))
            .collect();
        let want: f64 = xf.iter().map(|v| v.to_f64()).sum();
        let abs: f64 = xf.iter().map(|v| v.to_f64().abs()).sum();
        let got = f64::from(reduce_sum(&dev, &dev.upload(&xf).unwrap()).unwrap());
        let bound = (n as f64 / 4096.0 + 4096.0 + 40.0) * 2f64.powi(-24) * abs;
        // The same values in bf16 (exact for these eighths).
        let xb: Vec<half::bf16> = xf
            .iter()
            .map(|v| half::bf16::from_f32(v.to_f32()))
            .collect();
        let want_b: f64 = xb.iter().map(|v| v.to_f64()).sum();
        let got_b = f64::from(reduce_sum(&dev, &dev.upload(&xb).unwrap()).unwrap());
        assert!(
            (got_b - want_b).abs() <= bound,
            "bf16 n={n}: {got_b} vs {want_b}"
        );
        assert!(
            (got - want).abs() <= bound,
            "f16 n={n}: {got} vs {want} (bound {bound})"
        );
    }
}

#[test]
fn overflowing_i8_sum_is_refused() {
    let dev = device();
    let x = dev
        .alloc_zeroed::<i8>(ascend_scan::MAX_I8_SCAN_LEN + 1)
        .unwrap();
    assert!(matches!(
        reduce_sum(&dev, &x).unwrap_err(),
        Error::InvalidArgument { name: "x", .. }
    ));
}

/// The longest accepted int8 input at its most negative sums to exactly
/// i32::MIN (the limit is tight, not conservative).
#[test]
fn longest_i8_sum_reaches_i32_min_exactly() {
    let dev = device();
    let x = dev
        .upload(&vec![i8::MIN; ascend_scan::MAX_I8_SCAN_LEN])
        .unwrap();
    assert_eq!(reduce_sum(&dev, &x).unwrap(), i32::MIN);
}

#[test]
fn max_and_min_are_exact() {
    use ascend_scan::{reduce, reduce_max, reduce_min, ScanOp};
    let dev = device();
    for n in [1usize, 31, 4095, 4097, 40 * 4096 + 1, (1 << 20) + 12345] {
        let xi: Vec<i8> = (0..n)
            .map(|i| ((i * 2654435761usize) >> 9) as i8 / 2)
            .collect();
        let x = dev.upload(&xi).unwrap();
        let max = i32::from(*xi.iter().max().unwrap());
        let min = i32::from(*xi.iter().min().unwrap());
        assert_eq!(reduce_max(&dev, &x).unwrap(), max, "i8 max n={n}");
        assert_eq!(reduce_min(&dev, &x).unwrap(), min, "i8 min n={n}");
        assert_eq!(reduce(&dev, &x, ScanOp::Max).unwrap(), max);

        // Distinct f16 values with the extreme placed last, in the middle, first.
        for at in [n - 1, n / 2, 0] {
            let mut xf: Vec<f16> = (0..n)
                .map(|i| f16::from_bits(((i * 40503) % 0x7000) as u16 | ((i as u16 & 1) << 15)))
                .collect();
            xf[at] = f16::from_f32(60000.0);
            let x = dev.upload(&xf).unwrap();
            assert_eq!(
                reduce_max(&dev, &x).unwrap(),
                60000.0,
                "f16 max n={n} at={at}"
            );
            xf[at] = f16::NEG_INFINITY;
            let x = dev.upload(&xf).unwrap();
            let want = xf.iter().map(|v| v.to_f32()).fold(f32::INFINITY, f32::min);
            assert_eq!(reduce_min(&dev, &x).unwrap(), want, "f16 min n={n} at={at}");
            assert_eq!(want, f32::NEG_INFINITY);
        }
    }
}

#[test]
fn max_and_min_of_nothing_are_the_identities() {
    use ascend_scan::{reduce_max, reduce_min};
    let dev = device();
    let xf = dev.alloc_zeroed::<f16>(0).unwrap();
    assert_eq!(reduce_max(&dev, &xf).unwrap(), f32::NEG_INFINITY);
    assert_eq!(reduce_min(&dev, &xf).unwrap(), f32::INFINITY);
    let xi = dev.alloc_zeroed::<i8>(0).unwrap();
    assert_eq!(reduce_max(&dev, &xi).unwrap(), i32::MIN);
    assert_eq!(reduce_min(&dev, &xi).unwrap(), i32::MAX);
}

/// NaN anywhere gives NaN (torch.max / torch.min), also next to
/// infinities; then buffers of another device are refused.
#[test]
fn max_and_min_propagate_nan_and_refuse_foreign_buffers() {
    use ascend_scan::{reduce_max, reduce_min};
    let dev = device();
    for (n, at) in [
        (1usize, 0usize),
        (4097, 4096),
        (100_000, 77_777),
        (300_000, 0),
    ] {
        let mut xf = vec![f16::from_f32(1.0); n];
        xf[at] = if at % 2 == 0 { f16::NAN } else { -f16::NAN };
        xf[n - 1 - at / 2] = f16::INFINITY;
        xf[at / 3] = f16::NEG_INFINITY;
        xf[at] = if at % 2 == 0 { f16::NAN } else { -f16::NAN };
        let x = dev.upload(&xf).unwrap();
        for result in [reduce_max(&dev, &x), reduce_min(&dev, &x)] {
            assert!(
                result.as_ref().is_ok_and(|v| v.is_nan()),
                "n={n}: {result:?}"
            );
        }
    }
    let other = Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap();
    let x = other.upload(&[1i8; 10]).unwrap();
    assert!(matches!(
        reduce_max(&dev, &x),
        Err(Error::InvalidArgument { name: "x", .. })
    ));
}
