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

/// bf16, f32 and i32 max and min: exact, extremes anywhere, NaN (also an
/// f32 NaN whose payload is only its lowest bit) gives NaN.
#[test]
fn max_and_min_of_every_type() {
    use ascend_scan::{reduce_max, reduce_min};
    let dev = device();
    for n in [1usize, 63, 4097, 40 * 4096 + 1, 300_001] {
        let at = n * 2 / 3;
        let mut xi: Vec<i32> = (0..n)
            .map(|i| ((i as i64 * 2654435761) % 2_000_003 - 1_000_001) as i32)
            .collect();
        xi[at] = i32::MIN;
        xi[n - 1 - at / 2] = i32::MAX;
        let x = dev.upload(&xi).unwrap();
        assert_eq!(
            reduce_max(&dev, &x).unwrap(),
            *xi.iter().max().unwrap(),
            "i32 n={n}"
        );
        assert_eq!(
            reduce_min(&dev, &x).unwrap(),
            *xi.iter().min().unwrap(),
            "i32 n={n}"
        );

        let mut xf: Vec<f32> = xi.iter().map(|&v| v as f32 * 1e-3).collect();
        xf[at] = f32::MAX;
        xf[n / 3] = -f32::MIN_POSITIVE / 4.0;
        let x = dev.upload(&xf).unwrap();
        let want_max = xf.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let want_min = xf.iter().copied().fold(f32::INFINITY, f32::min);
        assert_eq!(reduce_max(&dev, &x).unwrap(), want_max, "f32 n={n}");
        assert_eq!(reduce_min(&dev, &x).unwrap(), want_min, "f32 n={n}");
        xf[n - 1 - at / 2] = f32::from_bits(0x7f80_0001);
        let x = dev.upload(&xf).unwrap();
        assert!(reduce_max(&dev, &x).unwrap().is_nan(), "f32 NaN n={n}");
        assert!(reduce_min(&dev, &x).unwrap().is_nan(), "f32 NaN n={n}");

        let mut xb: Vec<half::bf16> = xf[..n]
            .iter()
            .map(|&v| half::bf16::from_f32(if v.is_nan() { 1.0 } else { v }))
            .collect();
        let x = dev.upload(&xb).unwrap();
        let want_max = xb
            .iter()
            .map(|v| v.to_f32())
            .fold(f32::NEG_INFINITY, f32::max);
        let want_min = xb.iter().map(|v| v.to_f32()).fold(f32::INFINITY, f32::min);
        assert_eq!(reduce_max(&dev, &x).unwrap(), want_max, "bf16 n={n}");
        assert_eq!(reduce_min(&dev, &x).unwrap(), want_min, "bf16 n={n}");
        xb[at] = half::bf16::from_bits(0xff81);
        let x = dev.upload(&xb).unwrap();
        assert!(reduce_max(&dev, &x).unwrap().is_nan(), "bf16 NaN n={n}");
        assert!(reduce_min(&dev, &x).unwrap().is_nan(), "bf16 NaN n={n}");
    }
    // i32 sums are refused (they could overflow i32).
    let x = dev.upload(&[1i32, 2]).unwrap();
    assert!(matches!(
        ascend_scan::reduce_sum(&dev, &x),
        Err(Error::Unsupported(_))
    ));
}
