//! sample_logits against its definition: greedy is the first largest
//! logit; otherwise the token equals the top-p reference (tests/it/topp.rs)
//! run on the probabilities the device's softmax gives for the kept logits
//! (checked against f64 in tests/it/softmax.rs), mapped back through the
//! top-k order; the errors name their argument.
use ascend_scan::{sample_logits, softmax, uniform, Batch, LogitsSampling, Temperature};
use half::{bf16, f16};
use testkit::data::words;
use testkit::device;

use crate::softmax::{named, Logit};
use crate::topp::reference_min_p;

/// Logits like a language model's: a few large, a long tail, repeated
/// values (ties), some masked (-inf).
fn lm_logits<T: Logit>(rows: usize, n: usize, seed: u64) -> Vec<T> {
    words(rows * n, seed)
        .map(|w| {
            let v = match w % 100 {
                0 => f64::NEG_INFINITY,
                1..=3 => 8.0 + (w >> 40) as f64 / (1u64 << 24) as f64 * 4.0,
                4..=9 => 3.0,
                _ => (w >> 11) as f64 / (1u64 << 53) as f64 * 10.0 - 6.0,
            };
            T::of(v)
        })
        .collect()
}

/// The kept logits of a row in the top-k order (descending, ties by
/// index), with their indices.
fn top_k_of(row: &[f64], k: usize) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..row.len()).collect();
    perm.sort_by(|&a, &b| row[b].partial_cmp(&row[a]).unwrap());
    perm.truncate(k);
    perm
}

/// Checks every row whose p and draw target are clear of the fp32 sums'
/// rounding; returns the rows checked and skipped.
fn tokens_follow_the_definition<T: Logit>(rows: usize, n: usize) -> (usize, usize) {
    let dev = device();
    let x = lm_logits::<T>(rows, n, n as u64);
    let buf = dev.upload(&x).unwrap();
    let (mut checked, mut skipped) = (0, 0);
    for (t, top_k, top_p, min_p) in [
        (1.0f32, None, 0.9f32, 0.0f32),
        (0.7, None, 1.0, 0.05),
        (1.3, Some(50.min(n)), 0.8, 0.0),
        (0.6, Some(n.div_ceil(3)), 0.95, 0.1),
        (1.0, Some(n), 1.0, 0.0),
    ] {
        for seed in [3u64, 91] {
            let o = LogitsSampling {
                temperature: t,
                top_k,
                top_p,
                min_p,
                seed,
            };
            let got = sample_logits(&dev, Batch::rows(&buf, rows).unwrap(), o)
                .unwrap()
                .download()
                .unwrap();
            // The kept logits (all, or the top-k in their order) and their
            // probabilities as the device's softmax gives them.
            let kept: Vec<Vec<usize>> = (0..rows)
                .map(|r| {
                    let row: Vec<f64> = x[r * n..(r + 1) * n].iter().map(|v| v.f64()).collect();
                    match top_k {
                        Some(k) => top_k_of(&row, k),
                        None => (0..n).collect(),
                    }
                })
                .collect();
            let m = kept[0].len();
            let kept_logits: Vec<T> = (0..rows)
                .flat_map(|r| kept[r].iter().map(move |&i| (r, i)))
                .map(|(r, i)| x[r * n + i])
                .collect();
            let kb = dev.upload(&kept_logits).unwrap();
            let probs = softmax(&dev, Batch::rows(&kb, rows).unwrap(), Temperature::All(t))
                .unwrap()
                .download()
                .unwrap();
            // p = 1 keeps the entries whose fp32 preceding mass is at most 1:
            // all but a tail of rounding size (the masses sum to 1), whose
            // effect on the draw target is far inside the reference's 1e-4
            // guard; the reference keeps them all.
            let p_ref = if top_p == 1.0 { 1.001 } else { top_p };
            // Long rows' partial sums step finely: checked to within the
            // fp32 sums' rounding of their 10^5 terms.
            let tol = if m > 10_000 { 1e-5 } else { 1e-4 };
            for r in 0..rows {
                let u = uniform(seed, r as u64, 0);
                match reference_min_p(&probs[r * m..(r + 1) * m], p_ref, None, min_p, u, tol) {
                    Some((pos, _)) => {
                        assert_eq!(
                            got[r], kept[r][pos as usize] as i32,
                            "row {r} of {rows}x{n}, {o:?}"
                        );
                        checked += 1;
                    }
                    None => skipped += 1,
                }
            }
        }
    }
    assert!(checked > 0, "{rows}x{n}: no row checked");
    (checked, skipped)
}

#[test]
fn tokens_follow_the_definition_for_every_type() {
    let counts = [
        tokens_follow_the_definition::<f16>(5, 1000),
        tokens_follow_the_definition::<bf16>(3, 7000),
        tokens_follow_the_definition::<f32>(48, 300),
        tokens_follow_the_definition::<f32>(1, 129_280),
    ];
    let (checked, skipped) = counts
        .iter()
        .fold((0, 0), |(c, s), &(c1, s1)| (c + c1, s + s1));
    // Rows whose p or target is within rounding of a partial sum are
    // skipped: most are not.
    assert!(
        checked > 3 * skipped,
        "{checked} rows checked, {skipped} skipped"
    );
}

#[test]
fn temperature_zero_is_the_first_largest_logit() {
    let dev = device();
    let (rows, n) = (40, 2000);
    let mut x = lm_logits::<f32>(rows, n, 5);
    // Row 0: every logit -inf; row 1: two equal maxima; row 2: +inf twice.
    for v in &mut x[..n] {
        *v = f32::NEG_INFINITY;
    }
    x[n + 17] = 100.0;
    x[n + 1500] = 100.0;
    x[2 * n + 30] = f32::INFINITY;
    x[2 * n + 31] = f32::INFINITY;
    let buf = dev.upload(&x).unwrap();
    let o = LogitsSampling {
        temperature: 0.0,
        top_k: Some(7),
        top_p: 0.5,
        ..Default::default()
    };
    let got = sample_logits(&dev, Batch::rows(&buf, rows).unwrap(), o)
        .unwrap()
        .download()
        .unwrap();
    for r in 0..rows {
        let row = &x[r * n..(r + 1) * n];
        let best = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let want = row.iter().position(|&v| v == best).unwrap();
        assert_eq!(got[r], want as i32, "row {r}");
    }
    assert_eq!((got[0], got[1], got[2]), (0, 17, 30));
}

#[test]
fn errors_name_the_argument() {
    let dev = device();
    let n = 64;
    let x = lm_logits::<bf16>(3, n, 1);
    let buf = dev.upload(&x).unwrap();
    let run = |o: LogitsSampling| sample_logits(&dev, Batch::rows(&buf, 3).unwrap(), o);
    let d = LogitsSampling::default();
    for t in [-1.0, f32::NAN, f32::INFINITY] {
        named(
            run(LogitsSampling {
                temperature: t,
                ..d
            }),
            "temperature",
        );
    }
    for k in [0, n + 1] {
        named(
            run(LogitsSampling {
                top_k: Some(k),
                ..d
            }),
            "top_k",
        );
    }
    for p in [0.0, 1.5, f32::NAN] {
        named(run(LogitsSampling { top_p: p, ..d }), "top_p");
    }
    for m in [-0.1, 2.0, f32::NAN] {
        named(run(LogitsSampling { min_p: m, ..d }), "min_p");
    }
    // Rows with nothing to sample: a NaN, a +inf, nothing but -inf (also
    // among the kept top-k only); greedy refuses the NaN.
    for (bad, top_k) in [
        (f32::NAN, None),
        (f32::INFINITY, None),
        (f32::INFINITY, Some(5)),
    ] {
        let mut y = lm_logits::<f32>(3, n, 2);
        y[n + 9] = bad;
        let b = dev.upload(&y).unwrap();
        named(
            sample_logits(
                &dev,
                Batch::rows(&b, 3).unwrap(),
                LogitsSampling { top_k, ..d },
            ),
            "logits",
        );
    }
    let mut y = lm_logits::<f32>(3, n, 2);
    y[n..2 * n].fill(f32::NEG_INFINITY);
    let b = dev.upload(&y).unwrap();
    named(
        sample_logits(&dev, Batch::rows(&b, 3).unwrap(), d),
        "logits",
    );
    y[n + 3] = f32::NAN;
    let b = dev.upload(&y).unwrap();
    let greedy = LogitsSampling {
        temperature: 0.0,
        ..d
    };
    named(
        sample_logits(&dev, Batch::rows(&b, 3).unwrap(), greedy),
        "logits",
    );
    let empty = dev.upload::<f32>(&[]).unwrap();
    named(
        sample_logits(&dev, Batch::rows(&empty, 2).unwrap(), d),
        "logits",
    );
}
