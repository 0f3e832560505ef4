//! CPU references and the agreement of results with them.
//!
//! One comparison serves every float check of the tests and of the fuzz
//! families: [`agree`] (within a bound of a finite reference, the same
//! non-finite value otherwise); [`same`] is its exact form.

use ascend_scan::{scan, Algorithm, Batch, ScanInput, ScanOptions};

/// `got` within `bound` of a finite `want`; NaN for a NaN `want`, the same
/// infinity for an infinite one (docs/algorithms.md, "Non-finite inputs").
/// A NaN `got` never agrees with a number, whatever the bound.
pub fn agree(got: f64, want: f64, bound: f64) -> bool {
    if want.is_nan() {
        got.is_nan()
    } else if want.is_infinite() {
        got == want
    } else {
        (got - want).abs() <= bound
    }
}

/// `got` equal to `want`, NaN matching NaN: [`agree`] with a bound of 0.
pub fn same(got: f64, want: f64) -> bool {
    agree(got, want, 0.0)
}

/// Max as `torch.cummax` / `torch.max`: NaN wins.
pub fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// Min as `torch.cummin` / `torch.min`: NaN wins.
pub fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// The positions of `torch.cummax` (`max`) / `torch.cummin` over one row,
/// by PyTorch's CPU rule: the running value moves to x[i] when x[i] is a
/// NaN, or when neither is one and x[i] >= it (max) / <= it (min); the
/// position is where it last moved (equal values: the later one).
pub fn cum_positions(row: impl IntoIterator<Item = f64>, max: bool) -> Vec<i32> {
    let (mut run, mut at) = (f64::NAN, 0);
    row.into_iter()
        .enumerate()
        .map(|(i, x)| {
            let better = if max { x >= run } else { x <= run };
            if i == 0 || x.is_nan() || (!run.is_nan() && better) {
                (run, at) = (x, i as i32);
            }
            at
        })
        .collect()
}

/// |v| for finite v, else 0 (the error bounds sum the finite magnitudes).
pub fn abs_finite(v: f64) -> f64 {
    if v.is_finite() {
        v.abs()
    } else {
        0.0
    }
}

/// The sum scans of `rows` equal rows of `xs` on the default simulated
/// device, with every row's total: (values, totals).
pub fn scan_rows<T: ScanInput>(
    xs: &[T],
    rows: usize,
    algorithm: Algorithm,
    exclusive: bool,
) -> (Vec<T::Acc>, Vec<T::Acc>) {
    let dev = crate::device();
    let x = dev.upload(xs).unwrap();
    let options = ScanOptions {
        exclusive,
        algorithm,
        want_total: true,
        ..Default::default()
    };
    let out = scan(&dev, Batch::rows(&x, rows).unwrap(), options).unwrap();
    (out.values.download().unwrap(), out.totals.unwrap())
}

/// Checks one row's scan `y` and total against the sequential f64 reference
/// of `xs` (the inputs as f64, exactly): NaN where it is NaN, the same
/// infinity where it is infinite, within (d + i/d + 2) * 2^-24 * the
/// magnitude so far elsewhere.
pub fn check_scan_row(xs: &[f64], y: &[f32], total: f32, exclusive: bool, d: f64, what: &str) {
    assert_eq!(xs.len(), y.len(), "{what}: length");
    let (mut acc, mut abs) = (0f64, 0f64);
    for (i, &v) in xs.iter().enumerate() {
        let (before, abs_before) = (acc, abs);
        acc += v;
        abs += abs_finite(v);
        let (want, mag) = if exclusive {
            (before, abs_before)
        } else {
            (acc, abs)
        };
        let bound = (d + i as f64 / d + 2.0) * 2f64.powi(-24) * mag;
        let got = f64::from(y[i]);
        assert!(
            agree(got, want, bound),
            "{what} exclusive={exclusive} n={} i={i}: got {got}, want {want} (bound {bound})",
            xs.len()
        );
    }
    let bound = (d + xs.len() as f64 / d + 2.0) * 2f64.powi(-24) * abs;
    let got = f64::from(total);
    assert!(
        agree(got, acc, bound),
        "{what} exclusive={exclusive} n={}: total {got}, want {acc}",
        xs.len()
    );
}

/// The index of the first extreme of `values` (the maximum when `max`, else
/// the minimum; a NaN beats every number, -0 equals +0), None for no value:
/// the index `torch.argmax` / `torch.argmin` gives.
pub fn first_extreme(values: impl IntoIterator<Item = f64>, max: bool) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, v) in values.into_iter().enumerate() {
        let better = match best {
            None => true,
            Some((_, w)) if w.is_nan() => false,
            Some(_) if v.is_nan() => true,
            Some((_, w)) => (max && v > w) || (!max && v < w),
        };
        if better {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}
