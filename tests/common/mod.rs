//! Test data shared by the integration tests.
#![allow(dead_code)] // each test binary uses its own subset

use ascend_scan::{scan, Algorithm, Batch, Device, ScanInput, ScanOptions};
use half::f16;

/// The sum scans of `rows` equal rows of `xs` on the default simulated
/// device, with every row's total: (values, totals).
pub fn scan_rows<T: ScanInput>(
    xs: &[T],
    rows: usize,
    algorithm: Algorithm,
    exclusive: bool,
) -> (Vec<T::Acc>, Vec<T::Acc>) {
    let dev = Device::default_device().expect("simulated device");
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
/// `got` within `bound` of a finite `want`; NaN for a NaN `want`, the same
/// infinity for an infinite one (docs/algorithms.md, "Non-finite inputs").
pub fn agree(got: f64, want: f64, bound: f64) -> bool {
    if want.is_nan() {
        got.is_nan()
    } else if want.is_infinite() {
        got == want
    } else {
        (got - want).abs() <= bound
    }
}

pub fn check_scan_row(xs: &[f64], y: &[f32], total: f32, exclusive: bool, d: f64, what: &str) {
    assert_eq!(xs.len(), y.len(), "{what}: length");
    let (mut acc, mut abs) = (0f64, 0f64);
    for (i, &v) in xs.iter().enumerate() {
        let (before, abs_before) = (acc, abs);
        acc += v;
        if v.is_finite() {
            abs += v.abs();
        }
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

/// Deterministic f16 values in [-64, 64) with fractional parts (s-rows of
/// them sum past 2048, f16's exact-integer limit).
pub fn f16_data(n: usize, seed: u64) -> Vec<f16> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (state >> 33) as u32;
            // Values in [-64, 64) with a fractional part: row sums exceed 2048.
            f16::from_f32((r % 8192) as f32 / 64.0 - 64.0)
        })
        .collect()
}

/// Deterministic pseudo-random words (xorshift64*).
pub fn words(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n).map(move |_| {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        s.wrapping_mul(0x2545_f491_4f6c_dd1d)
    })
}

/// Deterministic i8 values over the whole range (xorshift).
pub fn i8_data(n: usize, seed: u64) -> Vec<i8> {
    let mut state = seed | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as i8
        })
        .collect()
}

/// Deterministic bf16 values in [-64, 64) with fractional parts (bf16 keeps
/// 8 significant bits, so these round to fewer fractional digits than f16).
pub fn bf16_data(n: usize, seed: u64) -> Vec<half::bf16> {
    f16_data(n, seed)
        .into_iter()
        .map(|v| half::bf16::from_f32(v.to_f32()))
        .collect()
}

// ---- Chi-square goodness of fit (sampling tests) ----

/// ln Gamma(x), x > 0 (Lanczos, g = 7, 9 terms: ~1e-15 relative).
pub fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let t = x + 7.5;
    let s = C[0] + (1..9).map(|i| C[i] / (x + i as f64)).sum::<f64>();
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

/// The upper regularized incomplete gamma Q(a, x) (series for x < a + 1,
/// Lentz's continued fraction otherwise; Numerical Recipes 6.2).
pub fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let front = (-x + a * x.ln() - ln_gamma(a)).exp();
    if x < a + 1.0 {
        let (mut term, mut sum, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..10_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        1.0 - sum * front
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            d = if d.abs() < tiny { tiny } else { d };
            c = b + an / c;
            c = if c.abs() < tiny { tiny } else { c };
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        front * h
    }
}

/// The chi-square critical value with `df` degrees of freedom for an upper
/// tail of `alpha`: P(X >= x) = Q(df/2, x/2) = alpha, by bisection.
pub fn chi_square_critical(df: usize, alpha: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 10.0 * df as f64 + 200.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if gamma_q(df as f64 / 2.0, mid / 2.0) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// Per test: the probability that a correct sampler fails it. The draws are
/// deterministic for the fixed seeds, so a run is reproducible; the rate
/// says how unlikely the seeds' pass is to be luck.
pub const ALPHA: f64 = 1e-6;

/// Pearson's statistic of `counts` against `probs` (categories of zero
/// probability must have zero counts; expected counts below 5 are pooled
/// into one bin) and its degrees of freedom.
pub fn chi_square(counts: &[u64], probs: &[f64]) -> (f64, usize) {
    let total: u64 = counts.iter().sum();
    let (mut stat, mut bins) = (0.0, 0usize);
    let (mut pooled_obs, mut pooled_exp) = (0.0, 0.0);
    for (&c, &p) in counts.iter().zip(probs) {
        if p == 0.0 {
            assert_eq!(c, 0, "a category of weight 0 was drawn");
            continue;
        }
        let e = p * total as f64;
        if e < 5.0 {
            pooled_obs += c as f64;
            pooled_exp += e;
        } else {
            stat += (c as f64 - e).powi(2) / e;
            bins += 1;
        }
    }
    if pooled_exp > 0.0 {
        stat += (pooled_obs - pooled_exp).powi(2) / pooled_exp;
        bins += 1;
    }
    (stat, bins - 1)
}
