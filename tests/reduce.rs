//! reduce_sum against exact references.
use ascend_scan::{reduce_sum, Device, Error};
use half::f16;

#[test]
fn sums_match_the_reference() {
    let dev = Device::default_device().unwrap();
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
        assert!(
            (got - want).abs() <= bound,
            "f16 n={n}: {got} vs {want} (bound {bound})"
        );
    }
}

#[test]
fn overflowing_i8_sum_is_refused() {
    let dev = Device::default_device().unwrap();
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
    let dev = Device::default_device().unwrap();
    let x = dev
        .upload(&vec![i8::MIN; ascend_scan::MAX_I8_SCAN_LEN])
        .unwrap();
    assert_eq!(reduce_sum(&dev, &x).unwrap(), i32::MIN);
}
