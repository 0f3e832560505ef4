//! Chi-square goodness of fit (the sampling tests).

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
