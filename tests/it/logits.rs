//! sample_logits against its definition: greedy is the first largest
//! logit; otherwise the token equals the top-p reference (tests/it/topp.rs)
//! run on the probabilities the device's softmax gives for the kept logits
//! (checked against f64 in tests/it/softmax.rs), mapped back through the
//! top-k order; the errors name their argument.
use ascend_scan::{
    sample_logits, sample_logits_on, sample_logits_per_row, sample_logits_workspace_bytes, softmax,
    uniform, Batch, Error, LogitsCheck, LogitsPerRow, LogitsRows, LogitsSampling, RowTopK,
    Temperature, Workspace,
};
use half::{bf16, f16};
use proptest::prelude::*;
use testkit::data::words;
use testkit::device;

use crate::softmax::{named, Logit};
use crate::topp::{reference_min_p, with_mass};

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
            // top_p = 1 keeps every entry (the reference, given 1, would
            // skip rows whose mass sums to within its guard of 1).
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
    most_rows_checked(&counts);
}

/// Rows whose p or target is within rounding of a partial sum are skipped
/// (counts of rows checked and skipped): most are not.
fn most_rows_checked(counts: &[(usize, usize)]) {
    let (checked, skipped) = counts
        .iter()
        .fold((0, 0), |(c, s), &(c1, s1)| (c + c1, s + s1));
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
    let refused = |y: &[f32], top_k| {
        let b = dev.upload(y).unwrap();
        let o = LogitsSampling { top_k, ..d };
        named(
            sample_logits(&dev, Batch::rows(&b, 3).unwrap(), o),
            "logits",
        );
    };
    for (bad, top_k) in [
        (f32::NAN, None),
        (f32::INFINITY, None),
        (f32::INFINITY, Some(5)),
        (f32::NAN, Some(5)),
    ] {
        let mut y = lm_logits::<f32>(3, n, 2);
        y[n + 9] = bad;
        refused(&y, top_k);
    }
    let mut y = lm_logits::<f32>(3, n, 2);
    y[n..2 * n].fill(f32::NEG_INFINITY);
    for top_k in [None, Some(5)] {
        refused(&y, top_k);
    }
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

/// Row r's parameters in a mixed batch: greedy rows, top-k of several
/// sizes (1, n and one whose k-th logit is tied with the next among them;
/// `off` adds rows without), top-p and min-p on
/// and off, several temperatures.
struct RowParams {
    temperature: Vec<f32>,
    top_k: Vec<u32>,
    top_p: Vec<f32>,
    min_p: Vec<f32>,
}

fn row_params(rows: usize, n: usize, off: bool, seed: u64) -> RowParams {
    // 15% of n lands among the many logits equal to 3.0: ties at the k-th.
    let ks: Vec<u32> = [1, 5, 50, 3 * n / 20, n / 3, n]
        .into_iter()
        .map(|k| k.clamp(1, n) as u32)
        .chain(off.then_some(0))
        .collect();
    let w: Vec<u64> = words(4 * rows, seed).collect();
    RowParams {
        temperature: (0..rows)
            .map(|r| [0.0, 0.5, 0.7, 1.0, 1.3][(w[r] % 5) as usize])
            .collect(),
        top_k: (0..rows)
            .map(|r| ks[(w[rows + r] % ks.len() as u64) as usize])
            .collect(),
        top_p: (0..rows)
            .map(|r| [1.0, 0.9, 0.5][(w[2 * rows + r] % 3) as usize])
            .collect(),
        min_p: (0..rows)
            .map(|r| [0.0, 0.05][(w[3 * rows + r] % 2) as usize])
            .collect(),
    }
}

/// The token of row r (`row`, its parameters in `pr`) by the definition,
/// with host (f64) probabilities of the kept logits: `None` when p or the
/// draw target is within `tol` of a partial sum. `whole` says the batch
/// draws on whole rows (equal probabilities by index) rather than on the
/// top-k order.
fn reference_token(
    row: &[f64],
    pr: &RowParams,
    r: usize,
    u: f32,
    whole: bool,
    tol: f64,
) -> Option<i32> {
    reference_draw(row, pr, r, u, whole, tol).map(|(token, ..)| token)
}

/// [`reference_token`] with the kept mass (the sum of the probabilities
/// min-p and top-p kept; 1 for one kept logit) and the kept count (those
/// of them with a positive probability).
fn reference_draw(
    row: &[f64],
    pr: &RowParams,
    r: usize,
    u: f32,
    whole: bool,
    tol: f64,
) -> Option<(i32, f64, usize)> {
    let n = row.len();
    let (t, k, top_p, min_p) = (
        pr.temperature[r],
        pr.top_k[r] as usize,
        pr.top_p[r],
        pr.min_p[r],
    );
    if t == 0.0 || k == 1 {
        // One kept logit: the first largest (no NaN in these rows).
        let best = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        return Some((row.iter().position(|&v| v == best).unwrap() as i32, 1.0, 1));
    }
    let mut kept = if k == 0 || k == n {
        (0..n).collect()
    } else {
        top_k_of(row, k)
    };
    if whole {
        kept.sort_unstable();
    }
    let s = 1.0 / f64::from(t);
    let top = kept
        .iter()
        .map(|&i| row[i] * s)
        .fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = kept.iter().map(|&i| (row[i] * s - top).exp()).collect();
    let sum: f64 = e.iter().sum();
    let probs: Vec<f32> = e.iter().map(|v| (v / sum) as f32).collect();
    let p_ref = if top_p == 1.0 { 1.001 } else { top_p };
    reference_min_p(&probs, p_ref, None, min_p, u, tol).map(|(pos, nucleus)| {
        let mass = nucleus.iter().map(|&(_, w)| f64::from(w)).sum();
        (kept[pos as usize] as i32, mass, with_mass(&nucleus))
    })
}

/// Every row's token against the definition with its own parameters;
/// returns the rows checked and skipped.
fn per_row_tokens_follow_the_definition<T: Logit>(
    rows: usize,
    n: usize,
    off: bool,
) -> (usize, usize) {
    let dev = device();
    let x = lm_logits::<T>(rows, n, 7 + n as u64);
    let buf = dev.upload(&x).unwrap();
    let pr = row_params(rows, n, off, n as u64);
    let whole = pr
        .top_k
        .iter()
        .zip(&pr.temperature)
        .any(|(&k, &t)| t != 0.0 && (k == 0 || k as usize == n));
    let mut counts = (0, 0);
    for seed in [5u64, 77] {
        let per_row = LogitsPerRow {
            temperature: Some(&pr.temperature),
            top_k: Some(&pr.top_k),
            top_p: Some(&pr.top_p),
            min_p: Some(&pr.min_p),
        };
        let o = LogitsSampling {
            seed,
            ..Default::default()
        };
        let got = sample_logits_per_row(&dev, Batch::rows(&buf, rows).unwrap(), per_row, o)
            .unwrap()
            .download()
            .unwrap();
        compare_rows(&x, n, &pr, whole, seed, &got, None, &mut counts);
    }
    counts
}

/// Compares each row's token (and kept mass and count, when given) of a batch drawn
/// with the uniforms `uniform(seed, r, 0)` with the definition, counting the
/// rows checked and skipped in `counts`.
#[allow(clippy::too_many_arguments)]
fn compare_rows<T: Logit>(
    x: &[T],
    n: usize,
    pr: &RowParams,
    whole: bool,
    seed: u64,
    got: &[i32],
    kept: Option<(&[f32], &[i32])>,
    counts: &mut (usize, usize),
) {
    let tol = if n > 10_000 { 1e-5 } else { 1e-4 };
    for (r, &token) in got.iter().enumerate() {
        let row: Vec<f64> = x[r * n..(r + 1) * n].iter().map(|v| v.f64()).collect();
        let what = format!(
            "row {r} of {}x{n}: t {}, k {}, p {}, min_p {}, seed {seed}",
            got.len(),
            pr.temperature[r],
            pr.top_k[r],
            pr.top_p[r],
            pr.min_p[r]
        );
        match reference_draw(&row, pr, r, uniform(seed, r as u64, 0), whole, tol) {
            Some((want, mass, count)) => {
                assert_eq!(token, want, "{what}");
                if let Some((kept, kept_count)) = kept {
                    assert_eq!(kept_count[r] as usize, count, "{what}: kept count");
                    let err = (f64::from(kept[r]) - mass).abs();
                    assert!(
                        err <= 1e-4 * mass.max(1e-3),
                        "{what}: kept {} vs {mass}",
                        kept[r]
                    );
                }
                counts.0 += 1;
            }
            None => counts.1 += 1,
        }
    }
}

#[test]
fn per_row_parameters_follow_the_definition() {
    let counts = [
        // Every row greedy or with a top-k below n: the draw on the top-k.
        per_row_tokens_follow_the_definition::<f16>(24, 3000, false),
        // Rows without top-k among them: the draw on whole rows.
        per_row_tokens_follow_the_definition::<bf16>(12, 7000, true),
        per_row_tokens_follow_the_definition::<f32>(40, 500, true),
        per_row_tokens_follow_the_definition::<f32>(30, 200, false),
        // Long rows: several cores per row, the kept entries in any piece.
        per_row_tokens_follow_the_definition::<f32>(3, 100_000, true),
    ];
    most_rows_checked(&counts);
}

#[test]
fn per_row_values_equal_to_the_options_change_nothing() {
    let dev = device();
    let (rows, n) = (16, 2500);
    let x = lm_logits::<bf16>(rows, n, 3);
    let buf = dev.upload(&x).unwrap();
    for o in [
        LogitsSampling {
            temperature: 0.8,
            top_k: Some(40),
            top_p: 0.9,
            min_p: 0.02,
            seed: 11,
        },
        LogitsSampling {
            temperature: 1.1,
            top_k: None,
            top_p: 0.7,
            min_p: 0.0,
            seed: 12,
        },
    ] {
        let t = vec![o.temperature; rows];
        let k = vec![o.top_k.unwrap_or(0) as u32; rows];
        let p = vec![o.top_p; rows];
        let m = vec![o.min_p; rows];
        let per_row = LogitsPerRow {
            temperature: Some(&t),
            top_k: Some(&k),
            top_p: Some(&p),
            min_p: Some(&m),
        };
        let a = sample_logits(&dev, Batch::rows(&buf, rows).unwrap(), o)
            .unwrap()
            .download()
            .unwrap();
        let b = sample_logits_per_row(&dev, Batch::rows(&buf, rows).unwrap(), per_row, o)
            .unwrap()
            .download()
            .unwrap();
        assert_eq!(a, b, "{o:?}");
    }
}

#[test]
fn rows_that_keep_one_logit_take_it_in_a_mixed_batch() {
    let dev = device();
    let (rows, n) = (8, 5000);
    let mut x = lm_logits::<f32>(rows, n, 21);
    // Row 0: every logit -inf; row 1: two equal maxima; row 2: +inf twice;
    // row 3: top_k 1 on +inf. Rows 4..8 sample (4, 5 on whole rows).
    x[..n].fill(f32::NEG_INFINITY);
    x[n + 17] = 100.0;
    x[n + 4000] = 100.0;
    x[2 * n + 30] = f32::INFINITY;
    x[2 * n + 31] = f32::INFINITY;
    x[3 * n + 2222] = f32::INFINITY;
    let buf = dev.upload(&x).unwrap();
    let t = [0.0, 0.0, 0.0, 0.9, 1.0, 0.6, 1.2, 0.8];
    let k = [0, 7, 0, 1, 0, 0, 20, 3];
    let per_row = LogitsPerRow {
        temperature: Some(&t),
        top_k: Some(&k),
        ..Default::default()
    };
    let got = sample_logits_per_row(
        &dev,
        Batch::rows(&buf, rows).unwrap(),
        per_row,
        LogitsSampling::default(),
    )
    .unwrap()
    .download()
    .unwrap();
    assert_eq!(&got[..4], &[0, 17, 30, 2222]);
    for r in 4..rows {
        let row = &x[r * n..(r + 1) * n];
        assert!(
            row[got[r] as usize].is_finite(),
            "row {r}: token {}",
            got[r]
        );
        if k[r] > 0 {
            // Within the row's top-k.
            let above = row.iter().filter(|&&v| v > row[got[r] as usize]).count();
            assert!(
                above < k[r] as usize,
                "row {r}: token {} has {above} above",
                got[r]
            );
        }
    }
    // A NaN in a greedy row is refused, also next to sampled rows.
    x[n + 5] = f32::NAN;
    let buf = dev.upload(&x).unwrap();
    named(
        sample_logits_per_row(
            &dev,
            Batch::rows(&buf, rows).unwrap(),
            per_row,
            LogitsSampling::default(),
        ),
        "logits",
    );
}

#[test]
fn per_row_errors_name_the_argument() {
    let dev = device();
    let (rows, n) = (4, 100);
    let x = lm_logits::<f16>(rows, n, 4);
    let buf = dev.upload(&x).unwrap();
    let run = |per_row: LogitsPerRow<'_>| {
        sample_logits_per_row(
            &dev,
            Batch::rows(&buf, rows).unwrap(),
            per_row,
            LogitsSampling::default(),
        )
    };
    let d = LogitsPerRow::default();
    for t in [
        &[1.0f32, 1.0, 1.0][..],
        &[1.0, -0.5, 1.0, 1.0],
        &[1.0, 1.0, f32::NAN, 1.0],
        &[f32::INFINITY; 4],
    ] {
        named(
            run(LogitsPerRow {
                temperature: Some(t),
                ..d
            }),
            "temperature",
        );
    }
    for k in [&[1u32; 5][..], &[1, 2, 101, 4]] {
        named(
            run(LogitsPerRow {
                top_k: Some(k),
                ..d
            }),
            "top_k",
        );
    }
    for p in [
        &[0.5f32; 3][..],
        &[0.5, 0.0, 0.5, 0.5],
        &[0.5, 0.5, 1.5, f32::NAN],
    ] {
        named(
            run(LogitsPerRow {
                top_p: Some(p),
                ..d
            }),
            "top_p",
        );
    }
    for m in [&[0.0f32; 2][..], &[0.0, -0.1, 0.0, 0.0], &[f32::NAN; 4]] {
        named(
            run(LogitsPerRow {
                min_p: Some(m),
                ..d
            }),
            "min_p",
        );
    }
    // In range, every row off or full: no error.
    let k = [0u32, n as u32, 1, 0];
    run(LogitsPerRow {
        top_k: Some(&k),
        ..d
    })
    .unwrap();
}

/// sample_logits_on with every per-row input on the device: temperatures
/// (0: greedy, whatever the row's top_k), top_k (0: off, also for the
/// rows whose k is n; `RowTopK::some_off` when there are such rows), top_p,
/// min_p and the caller's uniforms (not the options' seed), against the
/// definition, with the kept mass and count; one workspace and one check serve two
/// batches. Returns the rows checked and skipped.
fn stream_tokens_follow_the_definition<T: Logit>(
    rows: usize,
    n: usize,
    off: bool,
) -> (usize, usize) {
    let dev = device();
    let stream = dev.create_stream().unwrap();
    let x = lm_logits::<T>(rows, n, 19 + n as u64);
    let buf = dev.upload(&x).unwrap();
    let pr = row_params(rows, n, off, 3 + n as u64);
    let k: Vec<i32> = pr
        .top_k
        .iter()
        .map(|&k| if k as usize == n { 0 } else { k as i32 })
        .collect();
    let some_off = k.contains(&0);
    let max = k.iter().copied().max().unwrap().max(1) as usize;
    let (t_dev, k_dev, p_dev, m_dev) = (
        dev.upload(&pr.temperature).unwrap(),
        dev.upload(&k).unwrap(),
        dev.upload(&pr.top_p).unwrap(),
        dev.upload(&pr.min_p).unwrap(),
    );
    let mut tokens = dev.alloc::<i32>(rows).unwrap();
    let mut check = LogitsCheck::with_kept_count(&dev, rows).unwrap();
    let mut counts = (0, 0);
    let mut workspace = None;
    for seed in [8u64, 1234] {
        let u: Vec<f32> = (0..rows).map(|r| uniform(seed, r as u64, 0)).collect();
        let u_dev = dev.upload(&u).unwrap();
        let rows_in = LogitsRows {
            temperature: Some(&t_dev),
            top_k: Some(RowTopK {
                k: &k_dev,
                max,
                some_off,
            }),
            top_p: Some(&p_dev),
            min_p: Some(&m_dev),
            uniforms: Some(&u_dev),
        };
        // The options' seed is not the uniforms': they must not be used.
        let o = LogitsSampling {
            seed: seed + 1,
            ..Default::default()
        };
        let ws = workspace.get_or_insert_with(|| {
            let bytes = sample_logits_workspace_bytes::<T>(&dev, rows, n, &rows_in, o).unwrap();
            Workspace::new(&dev, bytes).unwrap()
        });
        let logits = Batch::rows(&buf, rows).unwrap();
        sample_logits_on(&stream, logits, rows_in, o, &mut tokens, &mut check, ws).unwrap();
        stream.synchronize().unwrap();
        check.download().unwrap();
        let got = tokens.download().unwrap();
        let kept = check.kept_mass().download().unwrap();
        let kept_count = check.kept_count().unwrap().download().unwrap();
        let kept = Some((&kept[..], &kept_count[..]));
        compare_rows(&x, n, &pr, some_off, seed, &got, kept, &mut counts);
    }
    counts
}

#[test]
fn stream_form_with_device_inputs_follows_the_definition() {
    let counts = [
        // Every row greedy or with a top-k below n: softmax and draw on the top-k.
        stream_tokens_follow_the_definition::<f16>(24, 3000, false),
        stream_tokens_follow_the_definition::<f32>(30, 200, false),
        // Rows off among them: the whole rows.
        stream_tokens_follow_the_definition::<bf16>(12, 7000, true),
        stream_tokens_follow_the_definition::<f32>(3, 100_000, true),
    ];
    most_rows_checked(&counts);
}

/// One [`sample_logits_on`] of the `rows` rows of `logits` with a
/// workspace, tokens and check of its own, synchronised and checked: the
/// tokens, the kept masses and the kept counts.
fn sample_on_stream<T: ascend_scan::LogitsInput>(
    stream: &ascend_scan::Stream,
    logits: &ascend_scan::DeviceBuffer<T>,
    rows: usize,
    rows_in: LogitsRows<'_>,
    o: LogitsSampling,
) -> (Vec<i32>, Vec<f32>, Vec<i32>) {
    let dev = stream.device();
    let n = logits.len() / rows;
    let bytes = sample_logits_workspace_bytes::<T>(dev, rows, n, &rows_in, o).unwrap();
    let mut ws = Workspace::new(dev, bytes).unwrap();
    let mut tokens = dev.alloc::<i32>(rows).unwrap();
    let mut check = LogitsCheck::with_kept_count(dev, rows).unwrap();
    let batch = Batch::rows(logits, rows).unwrap();
    sample_logits_on(stream, batch, rows_in, o, &mut tokens, &mut check, &mut ws).unwrap();
    stream.synchronize().unwrap();
    check.download().unwrap();
    (
        tokens.download().unwrap(),
        check.kept_mass().download().unwrap(),
        check.kept_count().unwrap().download().unwrap(),
    )
}

/// Flat rows (logits within 0.5 of each other) put the top-p, min-p and
/// draw crossings deep in the kept entries, past the groups of 64 whose
/// masses the fused draw (TOPKDRAW) sums by vector: top-k widths around a
/// group, up to the widest the fused draw takes (4096), then one wider batch
/// (4097: SOFTMAX and TOPPDRAW) on the same rows. Tokens and kept masses
/// against the f64 definition, the uniforms made on the device from the
/// seed.
#[test]
fn flat_rows_cross_deep_in_wide_top_k() {
    let dev = device();
    let stream = dev.create_stream().unwrap();
    let (rows, n) = (24, 5000);
    let x: Vec<f32> = words(rows * n, 41)
        .map(|w| -((w >> 40) as f32) / (1u64 << 25) as f32)
        .collect();
    let buf = dev.upload(&x).unwrap();
    let mut counts = (0, 0);
    for widths in [&[63u32, 64, 65, 128, 1000, 4096][..], &[4097, 300]] {
        let pr = RowParams {
            temperature: (0..rows).map(|r| [0.8, 1.0, 1.7][r % 3]).collect(),
            top_k: (0..rows).map(|r| widths[r % widths.len()]).collect(),
            top_p: (0..rows).map(|r| [0.3, 0.97][(r / 6) % 2]).collect(),
            min_p: (0..rows).map(|r| [0.0, 0.8][(r / 12) % 2]).collect(),
        };
        let k: Vec<i32> = pr.top_k.iter().map(|&k| k as i32).collect();
        let (t_dev, k_dev, p_dev, m_dev) = (
            dev.upload(&pr.temperature).unwrap(),
            dev.upload(&k).unwrap(),
            dev.upload(&pr.top_p).unwrap(),
            dev.upload(&pr.min_p).unwrap(),
        );
        let rows_in = LogitsRows {
            temperature: Some(&t_dev),
            top_k: Some(RowTopK {
                k: &k_dev,
                max: *widths.iter().max().unwrap() as usize,
                some_off: false,
            }),
            top_p: Some(&p_dev),
            min_p: Some(&m_dev),
            uniforms: None,
        };
        let seed = 2027;
        let o = LogitsSampling {
            seed,
            ..Default::default()
        };
        let (got, kept, kept_count) = sample_on_stream(&stream, &buf, rows, rows_in, o);
        for r in 0..rows {
            let row: Vec<f64> = x[r * n..(r + 1) * n].iter().map(|&v| v.into()).collect();
            // fp32 sums of at most 4097 terms of mass <= 1: well within 2e-5.
            let Some((want, mass, count)) =
                reference_draw(&row, &pr, r, uniform(seed, r as u64, 0), false, 2e-5)
            else {
                counts.1 += 1;
                continue;
            };
            let what = format!("row {r}: k {}, widths {widths:?}", pr.top_k[r]);
            assert_eq!(got[r], want, "{what}");
            let err = (f64::from(kept[r]) - mass).abs();
            assert!(err <= 2e-5, "{what}: kept {} vs {mass}", kept[r]);
            assert_eq!(kept_count[r] as usize, count, "{what}: kept count");
            counts.0 += 1;
        }
    }
    most_rows_checked(&[counts]);
}

/// The kept count is the support of the draw: rows with few finite logits
/// (the rest -inf, masked) count those only, whether the top-k keeps some
/// -inf (the fused draw) or the draw runs on whole rows (TOPPDRAW); min-p
/// and top-p cut it further, a greedy row keeps one.
#[test]
fn kept_counts_are_the_support_of_the_draw() {
    let dev = device();
    let stream = dev.create_stream().unwrap();
    let (rows, n) = (6, 500);
    // Row r: 20 + r finite logits spread over the row, 1.0 apart.
    let finite = |r: usize| 20 + r;
    let x: Vec<f32> = (0..rows)
        .flat_map(|r| {
            (0..n).map(move |i| {
                if i % 7 == 3 && i / 7 < finite(r) {
                    -((i / 7) as f32)
                } else {
                    f32::NEG_INFINITY
                }
            })
        })
        .collect();
    let buf = dev.upload(&x).unwrap();
    for (top_k, top_p, min_p, temperature) in [
        (Some(50), 1.0, 0.0, 1.0),
        (None, 1.0, 0.0, 1.0),
        (Some(10), 1.0, 0.0, 1.0),
        (Some(50), 1.0, 0.01, 1.0),
        (None, 0.9, 0.0, 1.0),
        (Some(50), 1.0, 0.0, 0.0),
    ] {
        let o = LogitsSampling {
            temperature,
            top_k,
            top_p,
            min_p,
            seed: 5,
        };
        let (_, _, got) = sample_on_stream(&stream, &buf, rows, LogitsRows::default(), o);
        for (r, &count) in got.iter().enumerate() {
            // Probabilities e^-j / S, j = 0..finite: min-p keeps e^-j >= min_p,
            // top-p the j whose mass before them is at most p.
            let f = finite(r).min(top_k.unwrap_or(n));
            let s: f64 = (0..f).map(|j| (-(j as f64)).exp()).sum();
            let mut want = (0..f)
                .filter(|&j| (-(j as f64)).exp() >= f64::from(min_p))
                .count();
            let mut before = 0.0;
            let nucleus = (0..f)
                .take_while(|&j| {
                    let keep = before <= f64::from(top_p);
                    before += (-(j as f64)).exp() / s;
                    keep
                })
                .count();
            want = want.min(nucleus);
            if temperature == 0.0 {
                want = 1;
            }
            assert_eq!(count as usize, want, "row {r}, {o:?}");
        }
    }
}

/// The stream form with the options alone (no per-row input) gives the
/// blocking form's tokens, for every shape of the pipeline: greedy, top-k
/// of 1, a top-k with device temperatures, no top-k.
#[test]
fn stream_form_with_the_options_matches_the_blocking_form() {
    let dev = device();
    let stream = dev.create_stream().unwrap();
    let (rows, n) = (20, 1500);
    let x = lm_logits::<f32>(rows, n, 21);
    let buf = dev.upload(&x).unwrap();
    let temps: Vec<f32> = (0..rows).map(|r| [0.0, 0.6, 1.2][r % 3]).collect();
    let t_dev = dev.upload(&temps).unwrap();
    let base = LogitsSampling {
        temperature: 0.9,
        top_k: None,
        top_p: 0.85,
        min_p: 0.01,
        seed: 5,
    };
    let cases = [
        (
            LogitsSampling {
                temperature: 0.0,
                ..base
            },
            false,
        ),
        (
            LogitsSampling {
                top_k: Some(1),
                ..base
            },
            false,
        ),
        (
            LogitsSampling {
                top_k: Some(30),
                ..base
            },
            false,
        ),
        (
            LogitsSampling {
                top_k: Some(30),
                ..base
            },
            true,
        ),
        (
            LogitsSampling {
                top_k: Some(n),
                ..base
            },
            false,
        ),
        (base, false),
    ];
    for (o, device_temps) in cases {
        let rows_in = LogitsRows {
            temperature: device_temps.then_some(&t_dev),
            ..Default::default()
        };
        let (got, ..) = sample_on_stream(&stream, &buf, rows, rows_in, o);
        let want = if device_temps {
            let per_row = LogitsPerRow {
                temperature: Some(&temps),
                ..Default::default()
            };
            sample_logits_per_row(&dev, Batch::rows(&buf, rows).unwrap(), per_row, o)
        } else {
            sample_logits(&dev, Batch::rows(&buf, rows).unwrap(), o)
        };
        assert_eq!(
            got,
            want.unwrap().download().unwrap(),
            "{o:?}, device temperatures {device_temps}"
        );
    }
}

/// What the host cannot see is reported by the check, naming the input;
/// what it can see is refused at once.
#[test]
fn stream_form_errors_name_the_argument() {
    let dev = device();
    let stream = dev.create_stream().unwrap();
    let (rows, n) = (4, 300);
    let x = lm_logits::<f16>(rows, n, 9);
    let buf = dev.upload(&x).unwrap();
    let o = LogitsSampling {
        top_k: Some(20),
        ..Default::default()
    };
    let run = |rows_in: LogitsRows<'_>, o: LogitsSampling, out: usize| -> Result<(), Error> {
        let bytes = sample_logits_workspace_bytes::<f16>(&dev, rows, n, &rows_in, o)?;
        let mut ws = Workspace::new(&dev, bytes)?;
        let mut tokens = dev.alloc::<i32>(out)?;
        let mut check = LogitsCheck::new(&dev, rows)?;
        let logits = Batch::rows(&buf, rows)?;
        sample_logits_on(
            &stream,
            logits,
            rows_in,
            o,
            &mut tokens,
            &mut check,
            &mut ws,
        )?;
        stream.synchronize()?;
        check.download()
    };
    let f = |v: &[f32]| dev.upload(v).unwrap();
    let i = |v: &[i32]| dev.upload(v).unwrap();
    let top_k = |k, max, some_off| RowTopK { k, max, some_off };
    let (k_past, k_zero, k_neg) = (i(&[3, 21, 5, 1]), i(&[3, 0, 5, 1]), i(&[3, -2, 5, 1]));
    let k_short = i(&[1; 3]);
    let t0 = f(&[1.0, 0.0, 1.0, 1.0]);
    let (t_neg, t_nan, t_inf) = (
        f(&[1.0, -1.0, 1.0, 1.0]),
        f(&[1.0, f32::NAN, 1.0, 1.0]),
        f(&[f32::INFINITY; 4]),
    );
    let (p_bad, m_bad, short) = (
        f(&[0.5, 0.0, 0.5, 0.5]),
        f(&[0.0, 0.0, 1.5, 0.0]),
        f(&[1.0; 3]),
    );
    let d = LogitsRows::default();
    let with_k = |k| LogitsRows {
        top_k: Some(k),
        ..d
    };
    let with_t = |t| LogitsRows {
        temperature: Some(t),
        ..d
    };
    let no_top_k = LogitsSampling { top_k: None, ..o };
    // (inputs, options, tokens, the argument named; None: no error)
    let cases: Vec<(LogitsRows<'_>, LogitsSampling, usize, Option<&str>)> = vec![
        // On the device: a row whose temperature or top_k is out of range
        // comes out NaN, which the check reports.
        (with_k(top_k(&k_past, 20, true)), o, rows, Some("logits")),
        (with_k(top_k(&k_zero, 20, false)), o, rows, Some("logits")),
        (with_k(top_k(&k_neg, 20, true)), o, rows, Some("logits")),
        // The same through the fused draw (every row on its top-k alone).
        (with_k(top_k(&k_past, 20, false)), o, rows, Some("logits")),
        (with_k(top_k(&k_neg, 20, false)), o, rows, Some("logits")),
        (with_k(top_k(&k_zero, 20, true)), o, rows, None),
        (with_t(&t_neg), o, rows, Some("logits")),
        (with_t(&t_nan), o, rows, Some("logits")),
        (with_t(&t_inf), o, rows, Some("logits")),
        // A temperature of 0 is greedy with a top-k, an error without.
        (with_t(&t0), o, rows, None),
        (with_t(&t0), no_top_k, rows, Some("logits")),
        (
            LogitsRows {
                top_p: Some(&p_bad),
                ..d
            },
            o,
            rows,
            Some("top_p"),
        ),
        (
            LogitsRows {
                min_p: Some(&m_bad),
                ..d
            },
            o,
            rows,
            Some("min_p"),
        ),
        // On the host: lengths, bounds and the options' values.
        (with_t(&short), o, rows, Some("temperature")),
        (
            LogitsRows {
                top_p: Some(&short),
                ..d
            },
            o,
            rows,
            Some("top_p"),
        ),
        (
            LogitsRows {
                uniforms: Some(&short),
                ..d
            },
            o,
            rows,
            Some("uniforms"),
        ),
        (with_k(top_k(&k_short, 5, false)), o, rows, Some("top_k")),
        (with_k(top_k(&k_zero, 0, true)), o, rows, Some("top_k")),
        (with_k(top_k(&k_zero, n + 1, true)), o, rows, Some("top_k")),
        (d, o, rows + 1, Some("tokens")),
        (
            d,
            LogitsSampling {
                temperature: -1.0,
                ..o
            },
            rows,
            Some("temperature"),
        ),
        (
            d,
            LogitsSampling {
                top_k: Some(0),
                ..o
            },
            rows,
            Some("top_k"),
        ),
        (d, LogitsSampling { top_p: 0.0, ..o }, rows, Some("top_p")),
        (d, LogitsSampling { min_p: 2.0, ..o }, rows, Some("min_p")),
    ];
    for (rows_in, o, out, name) in cases {
        match name {
            Some(name) => named(run(rows_in, o, out), name),
            None => run(rows_in, o, out).unwrap(),
        }
    }
    // A workspace too small for the call.
    let mut ws = Workspace::new(&dev, 64).unwrap();
    let mut tokens = dev.alloc::<i32>(rows).unwrap();
    let mut check = LogitsCheck::new(&dev, rows).unwrap();
    let logits = Batch::rows(&buf, rows).unwrap();
    named(
        sample_logits_on(&stream, logits, d, o, &mut tokens, &mut check, &mut ws),
        "workspace",
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Random shapes and random parameters per row: every row's token as
    /// the definition says.
    #[test]
    fn random_per_row_parameters_follow_the_definition(
        rows in 1usize..9,
        n in 1usize..20000,
        seed in any::<u64>(),
    ) {
        let dev = device();
        let mut x = lm_logits::<f32>(rows, n, seed);
        // Every row has something to sample.
        for r in 0..rows {
            x[r * n] = 1.0;
        }
        let w: Vec<u64> = words(4 * rows, seed ^ 0x5eed).collect();
        let unit = |v: u64| (v >> 11) as f32 / (1u64 << 53) as f32;
        let pr = RowParams {
            temperature: (0..rows)
                .map(|r| if w[r].is_multiple_of(5) { 0.0 } else { 0.2 + 2.0 * unit(w[r]) })
                .collect(),
            top_k: (0..rows).map(|r| (w[rows + r] % (n as u64 + 1)) as u32).collect(),
            top_p: (0..rows)
                .map(|r| if w[2 * rows + r].is_multiple_of(3) { 1.0 } else { 0.05 + 0.95 * unit(w[2 * rows + r]) })
                .collect(),
            min_p: (0..rows)
                .map(|r| if w[3 * rows + r].is_multiple_of(2) { 0.0 } else { 0.3 * unit(w[3 * rows + r]) })
                .collect(),
        };
        let whole = (0..rows)
            .any(|r| pr.temperature[r] != 0.0 && (pr.top_k[r] == 0 || pr.top_k[r] as usize == n));
        let buf = dev.upload(&x).unwrap();
        let per_row = LogitsPerRow {
            temperature: Some(&pr.temperature),
            top_k: Some(&pr.top_k),
            top_p: Some(&pr.top_p),
            min_p: Some(&pr.min_p),
        };
        let o = LogitsSampling { seed, ..Default::default() };
        let got = sample_logits_per_row(&dev, Batch::rows(&buf, rows).unwrap(), per_row, o)
            .unwrap()
            .download()
            .unwrap();
        for r in 0..rows {
            let row: Vec<f64> = x[r * n..(r + 1) * n].iter().map(|&v| f64::from(v)).collect();
            let u = uniform(seed, r as u64, 0);
            if let Some(want) = reference_token(&row, &pr, r, u, whole, 1e-4) {
                prop_assert_eq!(got[r], want, "row {} of {}x{}", r, rows, n);
            }
        }
    }
}
