//! TOPP sampling against the Llama 3 reference on the CPU: exact tokens for
//! given seeds (p kept away from every partial sum, so the fp32 truncation is
//! unambiguous), chi-square goodness of fit of many seeded draws against the
//! exact truncated distribution, and the errors.

use ascend_scan::{
    top_p_sample, top_p_sample_on, top_p_sample_per_row, top_p_sample_workspace_bytes, uniform,
    Batch, Device, DeviceBuffer, Error, TopPCheck, TopPOptions, TopPPerRow, TopPProb, TopPRows,
    Workspace,
};
use half::{bf16, f16};
use proptest::prelude::*;
use testkit::device;
use testkit::stats::{chi_square, chi_square_critical, ALPHA};

/// Probabilities of a row: `n` f16 values summing to about 1, skewed like a
/// language model's softmax (a few large, a long tail, some ties and zeros).
fn probs(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let raw: Vec<f64> = (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            match s % 16 {
                0 => 0.0,  // zeros
                1 => 0.25, // ties
                _ => (-(((s >> 20) % 4000) as f64) / 400.0).exp() * (1.0 + (i % 3) as f64),
            }
        })
        .collect();
    let total: f64 = raw.iter().sum();
    raw.iter().map(|v| (v / total) as f32).collect()
}

/// Probabilities with a clear nucleus: up to 24 large entries (90% of the
/// mass, spread so that their partial sums step well past any p below 0.9)
/// and a long tail of small ones (some equal, some zero) whose total does
/// not grow past 1000 entries.
pub(crate) fn peaked(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let big = n.min(24);
    let raw: Vec<f64> = (0..n)
        .map(|_| {
            let w = next();
            if (w % n as u64) < big as u64 {
                1.0 + (w >> 40) as f64 / (1u64 << 24) as f64
            } else if w % 7 == 0 {
                0.0
            } else {
                1e-3 * ((w >> 32) % 4) as f64 * 1000.0 / n.max(1000) as f64
            }
        })
        .collect();
    let total: f64 = raw.iter().sum();
    raw.iter().map(|v| (v / total) as f32).collect()
}

/// The reference: stable descending sort (ties in index order), f64
/// cumulative sums, the mask `cum - prob > p`, then the inverse transform
/// in that order: the first kept entry whose cumulative mass exceeds
/// `u * kept`. Returns the token and the kept (index, weight) pairs in
/// sorted order; `None` when p or `u * kept` is within 1e-4 of a partial sum
/// (the kernel's fp32 sums could go either way).
pub(crate) fn reference(
    row: &[f32],
    p: f32,
    top_k: Option<usize>,
    u: f32,
) -> Option<(i32, Vec<(usize, f32)>)> {
    reference_within(row, p, top_k, u, 1e-4)
}

/// [`reference`], skipping only targets within `tol` of a partial sum.
fn reference_within(
    row: &[f32],
    p: f32,
    top_k: Option<usize>,
    u: f32,
    tol: f64,
) -> Option<(i32, Vec<(usize, f32)>)> {
    reference_min_p(row, p, top_k, 0.0, u, tol)
}

/// [`reference_within`] with min-p: entries below `min_p * largest` (an
/// f32 product) are dropped after the sort.
pub(crate) fn reference_min_p(
    row: &[f32],
    p: f32,
    top_k: Option<usize>,
    min_p: f32,
    u: f32,
    tol: f64,
) -> Option<(i32, Vec<(usize, f32)>)> {
    let mut perm: Vec<usize> = (0..row.len()).collect();
    perm.sort_by(|&a, &b| row[b].partial_cmp(&row[a]).unwrap());
    if let Some(k) = top_k {
        perm.truncate(k);
    }
    let floor = min_p * row[perm[0]];
    perm.retain(|&i| row[i] >= floor);
    let near = |a: f64, b: f64| (a - b).abs() < tol;
    let mut cum = 0.0f64;
    let mut kept = Vec::new();
    for &i in &perm {
        if near(cum, f64::from(p)) {
            return None;
        }
        if cum <= f64::from(p) {
            kept.push((i, row[i]));
        }
        cum += f64::from(row[i]);
    }
    let mass: f64 = kept.iter().map(|&(_, w)| f64::from(w)).sum();
    let target = f64::from(u) * mass;
    let mut cum = 0.0f64;
    for &(i, w) in &kept {
        if near(cum, target) {
            return None;
        }
        cum += f64::from(w);
        if cum > target {
            return Some((i as i32, kept));
        }
    }
    None
}

/// The kept count the draw reports: the reference's kept entries with a
/// positive probability.
pub(crate) fn with_mass(kept: &[(usize, f32)]) -> usize {
    kept.iter().filter(|&&(_, w)| w > 0.0).count()
}

fn to_prob<T: Prob>(row: &[f32]) -> Vec<T> {
    row.iter().map(|&v| T::from_f32(v)).collect()
}

trait Prob: ascend_scan::TopPProb {
    fn from_f32(v: f32) -> Self;
    fn back(self) -> f32;
}
impl Prob for f32 {
    fn from_f32(v: f32) -> Self {
        v
    }
    fn back(self) -> f32 {
        self
    }
}
impl Prob for f16 {
    fn from_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
    fn back(self) -> f32 {
        self.to_f32()
    }
}
impl Prob for bf16 {
    fn from_f32(v: f32) -> Self {
        bf16::from_f32(v)
    }
    fn back(self) -> f32 {
        self.to_f32()
    }
}

/// The tokens of the `rows` rows of `buf`.
fn sample_rows<T: TopPProb>(
    dev: &Device,
    buf: &DeviceBuffer<T>,
    rows: usize,
    o: TopPOptions,
) -> Vec<i32> {
    top_p_sample(dev, Batch::rows(buf, rows).unwrap(), o)
        .unwrap()
        .download()
        .unwrap()
}

/// Tokens of `rows` rows against the reference, for several p, top_k, seeds.
/// The rows sum to about `scale` (p = 1 with scale 0.9 keeps every entry).
fn exact<T: Prob>(rows: usize, n: usize, scale: f32) {
    let dev = device();
    let data: Vec<T> = (0..rows)
        .flat_map(|r| {
            let row: Vec<f32> = peaked(n, r as u64 + 1).iter().map(|v| v * scale).collect();
            to_prob::<T>(&row)
        })
        .collect();
    let rounded: Vec<f32> = data.iter().map(|v| v.back()).collect();
    let buf = dev.upload(&data).unwrap();
    let (mut checked, mut skipped) = (0, 0);
    for (p, top_k) in [
        (0.3f32, None),
        (0.5, None),
        (0.7, None),
        (1.0, None),
        (0.6, Some(n.div_ceil(4))),
    ] {
        for seed in [1u64, 77] {
            let o = TopPOptions {
                p,
                top_k,
                min_p: 0.0,
                seed,
            };
            let got = sample_rows(&dev, &buf, rows, o);
            for r in 0..rows {
                let row = &rounded[r * n..(r + 1) * n];
                if let Some((want, _)) = reference(row, p, top_k, uniform(seed, r as u64, 0)) {
                    assert_eq!(got[r], want, "row {r} of {rows} x {n}, {o:?}");
                    checked += 1;
                } else {
                    skipped += 1;
                }
            }
        }
    }
    // Rows whose p is within rounding of a partial sum are skipped: most are not.
    assert!(
        checked > 3 * skipped,
        "{checked} rows checked, {skipped} skipped"
    );
}

#[test]
fn tokens_equal_the_reference() {
    exact::<f16>(3, 1000, 0.85);
    exact::<bf16>(2, 5000, 0.85);
    exact::<f16>(1, 1, 0.5);
    exact::<f16>(40, 97, 0.85);
    // One long row: every vector core takes a piece of it.
    exact::<f16>(1, 129_280, 0.85);
    exact::<bf16>(3, 40_000, 0.85);
    // f32: 2^30 codes below 1.0, every value exact (no rounding to 16 bits).
    exact::<f32>(3, 1000, 0.85);
    exact::<f32>(40, 97, 0.85);
    exact::<f32>(1, 129_280, 0.85);
    exact::<f32>(3, 40_000, 0.85);
}

/// Tokens of the rows of `probs` (f16 values given as f32) drawn with the
/// given uniforms; and the kept masses and counts.
fn draw_with(
    probs: &[f32],
    rows: usize,
    p: f32,
    top_k: Option<usize>,
    u: &[f32],
) -> (Vec<i32>, Vec<f32>, Vec<i32>) {
    draw_as::<f16>(probs, rows, p, top_k, u)
}

/// [`draw_with`] for probabilities of type `T` (the values given as f32).
fn draw_as<T: Prob>(
    probs: &[f32],
    rows: usize,
    p: f32,
    top_k: Option<usize>,
    u: &[f32],
) -> (Vec<i32>, Vec<f32>, Vec<i32>) {
    draw_min_p::<T>(probs, rows, p, top_k, 0.0, u)
}

/// [`draw_as`] with min-p.
fn draw_min_p<T: Prob>(
    probs: &[f32],
    rows: usize,
    p: f32,
    top_k: Option<usize>,
    min_p: f32,
    u: &[f32],
) -> (Vec<i32>, Vec<f32>, Vec<i32>) {
    let dev = device();
    let buf = dev.upload(&to_prob::<T>(probs)).unwrap();
    let uniforms = dev.upload(u).unwrap();
    let o = TopPOptions {
        p,
        top_k,
        min_p,
        seed: 0,
    };
    let (tokens, check) =
        sample_on(&dev, &buf, rows, o, TopPRows::with_uniforms(&uniforms)).unwrap();
    check.download().unwrap();
    (
        tokens.download().unwrap(),
        check.kept_mass().download().unwrap(),
        check.kept_count().unwrap().download().unwrap(),
    )
}

/// `top_p_sample_on` over `rows` rows of `buf` with `rows_in`, on a stream
/// of its own, synchronised: the tokens and the check (not downloaded).
fn sample_on<T: TopPProb>(
    dev: &Device,
    buf: &DeviceBuffer<T>,
    rows: usize,
    o: TopPOptions,
    rows_in: TopPRows<'_>,
) -> ascend_scan::Result<(DeviceBuffer<i32>, TopPCheck)> {
    let n = buf.len() / rows;
    let stream = dev.create_stream()?;
    let mut tokens = dev.alloc::<i32>(rows)?;
    let mut check = TopPCheck::with_kept_count(dev, rows)?;
    let mut ws = Workspace::new(dev, top_p_sample_workspace_bytes::<T>(dev, rows, n, o)?)?;
    let batch = Batch::rows(buf, rows)?;
    top_p_sample_on(&stream, batch, o, rows_in, &mut tokens, &mut check, &mut ws)?;
    stream.synchronize()?;
    Ok((tokens, check))
}

/// Evenly spread uniforms, kept `gap` away from multiples of `1 / steps`.
fn spread(count: usize, steps: f64, gap: f64) -> Vec<f32> {
    (0..count)
        .map(|i| (i as f64 + 0.5) / count as f64)
        .filter(|u| {
            let f = (u * steps).fract();
            f > gap && f < 1.0 - gap
        })
        .map(|u| u as f32)
        .collect()
}

/// Each row with its own p, in one launch: the token of row r is the
/// reference's with p[r] (whole rows per core, rows shared by cores, top_k;
/// p from 0.05 to 1, repeating out of step with the row shapes).
#[test]
fn per_row_p_follows_the_reference() {
    per_row_p::<f16>(48, 997, None);
    per_row_p::<f16>(48, 997, Some(300));
    per_row_p::<bf16>(3, 40_000, None);
    per_row_p::<f32>(48, 997, None);
    per_row_p::<f32>(48, 997, Some(300));
    per_row_p::<f32>(2, 129_280, None);
}

fn per_row_p<T: Prob>(rows: usize, n: usize, top_k: Option<usize>) {
    const PS: [f32; 7] = [0.05, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0];
    let dev = device();
    let data: Vec<T> = (0..rows)
        .flat_map(|r| {
            // Rows of mass 0.95: p of 0.99 and 1 keep every entry, clear of rounding.
            let row: Vec<f32> = peaked(n, r as u64 + 5).iter().map(|v| v * 0.95).collect();
            to_prob::<T>(&row)
        })
        .collect();
    let rounded: Vec<f32> = data.iter().map(|v| v.back()).collect();
    let buf = dev.upload(&data).unwrap();
    let p: Vec<f32> = (0..rows).map(|r| PS[(r * 3 + rows) % PS.len()]).collect();
    let o = TopPOptions {
        // Not used with per-row p.
        p: f32::NAN,
        top_k,
        min_p: 0.0,
        seed: 9,
    };
    let per_row = TopPPerRow {
        p: Some(&p),
        min_p: None,
    };
    let got = top_p_sample_per_row(&dev, Batch::rows(&buf, rows).unwrap(), per_row, o)
        .unwrap()
        .download()
        .unwrap();
    let mut checked = 0;
    for r in 0..rows {
        let row = &rounded[r * n..(r + 1) * n];
        if let Some((want, _)) = reference(row, p[r], top_k, uniform(9, r as u64, 0)) {
            assert_eq!(got[r], want, "row {r} of {rows} x {n}, p = {}", p[r]);
            checked += 1;
        }
    }
    assert!(checked * 4 > rows * 3, "{checked} of {rows} rows checked");
}

/// min-p drops the entries below min_p times the row's largest before the
/// nucleus: tokens equal the reference's for min_p from 0.001 to 1 (1 keeps
/// the largest value's ties alone), with p below and above the survivors'
/// mass, with top_k, in whole rows and in rows shared by cores.
#[test]
fn min_p_follows_the_reference() {
    min_p_rows::<f16>(48, 997, None);
    min_p_rows::<f16>(48, 997, Some(100));
    min_p_rows::<f16>(1, 129_280, None);
    min_p_rows::<bf16>(3, 40_000, None);
    min_p_rows::<f32>(48, 997, None);
    min_p_rows::<f32>(48, 997, Some(100));
    min_p_rows::<f32>(2, 70_000, None);
}

/// Rows for min-p on the device: peaked rows (the floor among a few large
/// entries) and smooth ones (the floor inside a dense run of small values),
/// alternately; and the tally of the rows checked against the reference.
struct MixedRows<T: Prob> {
    buf: DeviceBuffer<T>,
    /// The rows as the device holds them.
    rounded: Vec<f32>,
    rows: usize,
    n: usize,
    checked: usize,
    skipped: usize,
}

impl<T: Prob> MixedRows<T> {
    fn new(dev: &Device, rows: usize, n: usize, seed: u64) -> MixedRows<T> {
        let data: Vec<T> = (0..rows)
            .flat_map(|r| {
                let seed = r as u64 + seed;
                let row = if r % 2 == 0 {
                    peaked(n, seed)
                } else {
                    probs(n, seed)
                };
                to_prob::<T>(&row)
            })
            .collect();
        MixedRows {
            buf: dev.upload(&data).unwrap(),
            rounded: data.iter().map(|v| v.back()).collect(),
            rows,
            n,
            checked: 0,
            skipped: 0,
        }
    }

    /// Checks the tokens `got` drawn with `seed` (and the kept counts, if
    /// given) against the reference with row r's (p, min_p) = `params(r)`:
    /// rows whose crossings are within the tolerance of an fp32 rounding are
    /// skipped.
    fn check(
        &mut self,
        got: &[i32],
        counts: Option<&[i32]>,
        top_k: Option<usize>,
        seed: u64,
        params: impl Fn(usize) -> (f32, f32),
        what: &str,
    ) {
        let (rows, n) = (self.rows, self.n);
        // Long smooth rows hold entries of about 1e-5 everywhere: a 1e-4
        // margin around p would skip every row, and their fp32 sums are
        // within 2e-6 (as in whole_long_rows_follow_the_reference).
        let tol = if n >= 20_000 { 2e-6 } else { 1e-4 };
        assert_eq!(got.len(), rows);
        for (r, (row, &token)) in self.rounded.chunks(n).zip(got).enumerate() {
            let (p, min_p) = params(r);
            match reference_min_p(row, p, top_k, min_p, uniform(seed, r as u64, 0), tol) {
                Some((want, kept)) => {
                    assert_eq!(
                        token, want,
                        "row {r} of {rows} x {n}, p {p}, min_p {min_p}, {what}"
                    );
                    if let Some(counts) = counts {
                        assert_eq!(
                            counts[r] as usize,
                            with_mass(&kept),
                            "kept count, row {r} of {rows} x {n}, p {p}, min_p {min_p}, {what}"
                        );
                    }
                    self.checked += 1;
                }
                None => self.skipped += 1,
            }
        }
    }

    /// Most rows were checked (the tolerance skipped few).
    fn assert_mostly_checked(&self) {
        let (checked, skipped) = (self.checked, self.skipped);
        assert!(
            checked > 3 * skipped,
            "{checked} rows checked, {skipped} skipped"
        );
    }
}

fn min_p_rows<T: Prob>(rows: usize, n: usize, top_k: Option<usize>) {
    let dev = device();
    let mut mixed = MixedRows::<T>::new(&dev, rows, n, 11);
    for (min_p, p) in [
        (0.001f32, 0.9f32),
        (0.05, 0.5),
        (0.05, 1.0),
        (0.3, 0.95),
        (1.0, 0.9),
    ] {
        let o = TopPOptions {
            p,
            top_k,
            min_p,
            seed: 3,
        };
        let got = sample_rows(&dev, &mixed.buf, rows, o);
        mixed.check(&got, None, top_k, 3, |_| (p, min_p), &format!("{o:?}"));
    }
    mixed.assert_mostly_checked();
}

/// Each row with its own min_p (and p), in one launch: the token of row r
/// is the reference's with min_p[r] and p[r], from a host slice and from
/// device buffers, with a shared p too (whole rows per core, rows shared
/// by cores, top_k).
#[test]
fn per_row_min_p_follows_the_reference() {
    per_row_min_p::<f16>(48, 997, None);
    per_row_min_p::<f16>(48, 997, Some(100));
    per_row_min_p::<bf16>(3, 40_000, None);
    per_row_min_p::<f32>(2, 70_000, None);
    per_row_min_p::<f32>(40, 997, None);
}

fn per_row_min_p<T: Prob>(rows: usize, n: usize, top_k: Option<usize>) {
    const MIN_PS: [f32; 5] = [0.0, 0.001, 0.05, 0.3, 1.0];
    const PS: [f32; 4] = [0.5, 0.9, 0.95, 1.0];
    let dev = device();
    let mut mixed = MixedRows::<T>::new(&dev, rows, n, 17);
    let min_p: Vec<f32> = (0..rows)
        .map(|r| MIN_PS[(r + rows) % MIN_PS.len()])
        .collect();
    let p: Vec<f32> = (0..rows).map(|r| PS[(r * 3) % PS.len()]).collect();
    let (min_p_dev, p_dev) = (dev.upload(&min_p).unwrap(), dev.upload(&p).unwrap());
    for (shared_p, on_device) in [(false, false), (true, false), (false, true), (true, true)] {
        let o = TopPOptions {
            // Not used: the rows' own min_p (and p unless shared).
            p: if shared_p { 0.9 } else { f32::NAN },
            top_k,
            min_p: f32::NAN,
            seed: 4,
        };
        let row_p = |r: usize| if shared_p { 0.9 } else { p[r] };
        let (got, counts) = if on_device {
            let rows_in = TopPRows {
                uniforms: None,
                p: (!shared_p).then_some(&p_dev),
                min_p: Some(&min_p_dev),
            };
            let (tokens, check) = sample_on(&dev, &mixed.buf, rows, o, rows_in).unwrap();
            check.download().unwrap();
            let counts = check.kept_count().unwrap().download().unwrap();
            (tokens.download().unwrap(), Some(counts))
        } else {
            let per_row = TopPPerRow {
                p: (!shared_p).then_some(&p[..]),
                min_p: Some(&min_p),
            };
            let tokens =
                top_p_sample_per_row(&dev, Batch::rows(&mixed.buf, rows).unwrap(), per_row, o)
                    .unwrap();
            (tokens.download().unwrap(), None)
        };
        let what = format!("shared p {shared_p}, on the device {on_device}");
        let counts = counts.as_deref();
        mixed.check(&got, counts, top_k, 4, |r| (row_p(r), min_p[r]), &what);
    }
    mixed.assert_mostly_checked();
}

/// Per-row p outside (0, 1] and min_p outside [0, 1]: refused on the host
/// for a host slice (the first such row named), counted on the device for a
/// device buffer (once per row, also when cores share the row), and named
/// either way.
#[test]
fn bad_per_row_p_is_refused() {
    bad_per_row("p");
    bad_per_row("min_p");
}

fn bad_per_row(name: &'static str) {
    let dev = device();
    let rows = 3;
    let buf = dev
        .upload(&to_prob::<f16>(&probs(70_000, 2)).repeat(rows))
        .unwrap();
    let batch = || Batch::rows(&buf, rows).unwrap();
    let o = TopPOptions::default();
    let is_p = name == "p";
    // The slices in the field `name` names.
    let host = |v: &[f32]| -> ascend_scan::Result<DeviceBuffer<i32>> {
        let per_row = if is_p {
            TopPPerRow {
                p: Some(v),
                min_p: None,
            }
        } else {
            TopPPerRow {
                p: None,
                min_p: Some(v),
            }
        };
        top_p_sample_per_row(&dev, batch(), per_row, o)
    };
    let expect = |r: ascend_scan::Result<DeviceBuffer<i32>>, has: &str| match r {
        Err(Error::InvalidArgument { name: got, reason }) => {
            assert_eq!(got, name);
            assert!(reason.contains(has), "{reason}");
        }
        r => panic!("expected an error naming {name}, got {r:?}"),
    };
    let valid = |v: f32| {
        if is_p {
            v > 0.0 && v <= 1.0
        } else {
            (0.0..=1.0).contains(&v)
        }
    };
    // 0 is a valid min_p (off), not a valid p; -0.5 neither.
    let first_bad = if is_p { 0.0 } else { -0.5 };
    expect(host(&[0.5, 0.5]), "");
    expect(
        host(&[0.5, first_bad, 2.0]),
        &format!("{name}[1] = {first_bad}"),
    );
    expect(host(&[0.5, 0.9, f32::NAN]), &format!("{name}[2] = NaN"));
    // Device buffers: checked by the kernel (rows of 70000 are cut into
    // pieces, the 48 rows of 997 are whole rows per core).
    fn in_field(is_p: bool, b: &DeviceBuffer<f32>) -> TopPRows<'_> {
        if is_p {
            TopPRows {
                p: Some(b),
                ..Default::default()
            }
        } else {
            TopPRows {
                min_p: Some(b),
                ..Default::default()
            }
        }
    }
    let mut whole = vec![0.5f32; 48];
    whole[0] = first_bad;
    whole[47] = f32::INFINITY;
    for (rows, n, values) in [
        (3, 70_000, vec![f32::NAN, 0.5, -1.0]),
        (1, 70_000, vec![1.5]),
        (3, 70_000, vec![0.5, 0.5, 0.5]),
        (48, 997, whole),
    ] {
        let buf = dev
            .upload(&to_prob::<f16>(&probs(n, 2)).repeat(rows))
            .unwrap();
        let values_dev = dev.upload(&values).unwrap();
        let (_, check) = sample_on(&dev, &buf, rows, o, in_field(is_p, &values_dev)).unwrap();
        let bad = values.iter().filter(|v| !valid(**v)).count();
        match check.download() {
            Ok(()) => assert_eq!(bad, 0, "{values:?}"),
            Err(Error::InvalidArgument { name: got, reason }) => {
                assert_eq!(got, name);
                assert!(reason.starts_with(&format!("{bad} rows")), "{reason}");
            }
            Err(e) => panic!("{values:?}: {e}"),
        }
    }
    // A device buffer of the wrong length is refused at once.
    let short = dev.upload(&[0.5f32]).unwrap();
    match sample_on(&dev, &buf, rows, o, in_field(is_p, &short)) {
        Err(Error::InvalidArgument { name: got, .. }) => assert_eq!(got, name),
        r => panic!("expected an error naming {name}, got {:?}", r.map(|_| ())),
    }
}

/// The rows where a selection is hardest: every entry equal (the nucleus is
/// a run of ties, kept in index order), all mass on one token, ties at the
/// threshold among larger and smaller entries, subnormal tails.
/// Short rows whose length is not a multiple of a 32-byte block: each row's
/// candidate sets share their first and last blocks with the neighbouring
/// rows', which the same core reads in earlier rounds (found by the
/// sample_logits bench: [96, 50] f32 rows of near-equal probabilities, the
/// softmax of a top-50; the simulator stopped on the unordered write).
#[test]
fn short_rows_sharing_blocks_follow_the_reference() {
    let dev = device();
    for (rows, n) in [(96usize, 50usize), (40, 13), (81, 7)] {
        // A few distinct levels (ties) near 1/n, as a top-k softmax gives.
        let data: Vec<f32> = (0..rows)
            .flat_map(|r| {
                let raw: Vec<f64> = (0..n)
                    .map(|i| 1.0 + ((i * 7 + r * 3) % 11) as f64 / 64.0)
                    .collect();
                let total: f64 = raw.iter().sum();
                raw.into_iter().map(move |v| (v / total) as f32)
            })
            .collect();
        let buf = dev.upload(&data).unwrap();
        let (mut checked, mut skipped) = (0, 0);
        for p in [0.9f32, 0.5, 0.13] {
            let o = TopPOptions {
                p,
                seed: 5,
                ..Default::default()
            };
            let got = sample_rows(&dev, &buf, rows, o);
            for r in 0..rows {
                let row = &data[r * n..(r + 1) * n];
                match reference(row, p, None, uniform(5, r as u64, 0)) {
                    Some((want, _)) => {
                        assert_eq!(got[r], want, "row {r} of {rows} x {n}, p {p}");
                        checked += 1;
                    }
                    None => skipped += 1,
                }
            }
        }
        assert!(
            checked > 3 * skipped,
            "{rows}x{n}: {checked} checked, {skipped} skipped"
        );
    }
}

#[test]
fn hard_rows_follow_the_definition() {
    hard_rows::<f16>();
    hard_rows::<f32>();
}

fn hard_rows<T: Prob>() {
    // A uniform row of 4096 entries of 2^-12 (exact in f16): p = 0.3 keeps
    // the first floor(0.3 * 4096) + 1 = 1229 entries, and u draws entry
    // floor(u * 1229).
    let n = 4096;
    for (p, keep) in [(0.3f32, 1229usize), (1.0, 4096)] {
        let u = spread(97, keep as f64, 1e-3);
        let rows = u.len();
        let row = vec![1.0f32 / 4096.0; n];
        let all: Vec<f32> = (0..rows).flat_map(|_| row.iter().copied()).collect();
        let (tokens, kept, counts) = draw_as::<T>(&all, rows, p, None, &u);
        assert_eq!(counts, vec![keep as i32; rows], "p {p}");
        for r in 0..rows {
            assert_eq!(
                tokens[r] as usize,
                (f64::from(u[r]) * keep as f64) as usize,
                "{} p {p} u {}",
                std::any::type_name::<T>(),
                u[r]
            );
            assert_eq!(kept[r], keep as f32 / 4096.0);
        }
    }
    // All mass on one token.
    let mut one = vec![0.0f32; 50_000];
    one[31_337] = 1.0;
    let u = [0.0f32, 0.5, 0.999_999];
    let all: Vec<f32> = (0..3).flat_map(|_| one.iter().copied()).collect();
    let (tokens, _, counts) = draw_as::<T>(&all, 3, 0.9, None, &u);
    assert_eq!(tokens, vec![31_337; 3]);
    // The nucleus is the one token: the zeros after it have 1.0 before them.
    assert_eq!(counts, vec![1; 3]);
    // Ties at the threshold: 0.25 at indices 9, 3 (twice more below), a run
    // of 0.125 ties across the threshold, and a subnormal tail.
    let mut row = vec![6.0e-8f32; 3000];
    row[9] = 0.25;
    row[3] = 0.25;
    for i in [2999, 5, 700, 1500, 12] {
        row[i] = 0.0625;
    }
    // Mass before the ties: 0.5; p = 0.6 keeps ties while before <= 0.6:
    // 5, 12 (before 0.5, 0.5625); 700 has 0.625 before it.
    let u = spread(40, 1.0, 0.0);
    let rows = u.len();
    let all: Vec<f32> = (0..rows).flat_map(|_| row.iter().copied()).collect();
    let (tokens, kept, counts) = draw_as::<T>(&all, rows, 0.6, None, &u);
    // 3 and 9, then the ties 5 and 12.
    assert_eq!(counts, vec![4; rows]);
    for r in 0..rows {
        let want = match u[r] * 0.625 {
            t if t < 0.25 => 3,
            t if t < 0.5 => 9,
            t if t < 0.5625 => 5,
            _ => 12,
        };
        assert_eq!(tokens[r], want, "u {}", u[r]);
        assert_eq!(kept[r], 0.625);
    }
    // top_k = n and top_k = 1.
    let (tokens, _, counts) = draw_as::<T>(&row, 1, 0.6, Some(1), &[0.9]);
    assert_eq!((tokens, counts), (vec![3], vec![1]));
    let (tokens, _, counts) = draw_as::<T>(&row, 1, 0.6, Some(3000), &[0.7]);
    assert_eq!((tokens, counts), (vec![9], vec![4]));
    // A row kept whole (p = 1) counts its entries with mass only, also
    // after a top-k that keeps zeros.
    let mut zeros = row.clone();
    for i in (0..3000).step_by(7) {
        if zeros[i] < 0.01 {
            zeros[i] = 0.0;
        }
    }
    let with_mass = zeros.iter().filter(|&&v| v > 0.0).count() as i32;
    for top_k in [None, Some(3000), Some(2990)] {
        let (_, _, counts) = draw_as::<T>(&zeros, 1, 1.0, top_k, &[0.3]);
        assert_eq!(
            counts,
            vec![with_mass.min(top_k.unwrap_or(3000) as i32)],
            "top_k {top_k:?}"
        );
    }
}

/// Rows longer than the kernel's tile with a whole row per core: a flat
/// softmax (most probabilities subnormal f16, a nucleus of thousands), the
/// peaked rows, and rows whose mass is far from 1 (the candidates that round
/// 0 guessed are then dropped, or the whole row is kept).
#[test]
fn whole_long_rows_follow_the_reference() {
    whole_long_rows::<f16>();
    // f32: the flat rows' values are all distinct normal numbers, so the
    // search runs through 2^30 codes on values no 16-bit type separates.
    whole_long_rows::<f32>();
}

fn whole_long_rows<T: Prob>() {
    let dev = device();
    let rows = dev.profile().vector_cores as usize;
    // Not a multiple of 8: the rows' candidates start inside 32-byte blocks.
    let n = 20_003;
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let data: Vec<f32> = (0..rows)
        .flat_map(|r| {
            let row: Vec<f32> = match r % 4 {
                0 | 1 => {
                    let logits: Vec<f64> = (0..n)
                        .map(|_| {
                            s ^= s << 13;
                            s ^= s >> 7;
                            s ^= s << 17;
                            -((s % 4096) as f64) / 256.0
                        })
                        .collect();
                    let total: f64 = logits.iter().map(|l| l.exp()).sum();
                    logits.iter().map(|l| (l.exp() / total) as f32).collect()
                }
                2 => peaked(n, r as u64),
                _ => peaked(n, r as u64).iter().map(|v| v * 0.35).collect(),
            };
            row
        })
        .collect();
    let rounded: Vec<f32> = to_prob::<T>(&data).iter().map(|v| v.back()).collect();
    let buf = dev.upload(&to_prob::<T>(&rounded)).unwrap();
    let (mut checked, mut skipped) = (0, 0);
    for p in [0.3f32, 0.9, 0.999] {
        for seed in [4u64, 5] {
            let o = TopPOptions {
                p,
                top_k: None,
                min_p: 0.0,
                seed,
            };
            let got = sample_rows(&dev, &buf, rows, o);
            for r in 0..rows {
                let row = &rounded[r * n..(r + 1) * n];
                // The flat rows' partial sums step by about 1e-5: they are
                // checked to within the fp32 sums' rounding (20000 terms in
                // 4096-term trees, then a few dozen adds: under 2e-6).
                let u = uniform(seed, r as u64, 0);
                if let Some((want, _)) = reference_within(row, p, None, u, 2e-6) {
                    assert_eq!(got[r], want, "row {r}, {o:?}");
                    checked += 1;
                } else {
                    // Still a kept entry: positive, and at most p before it.
                    let t = got[r] as usize;
                    let before: f64 = row
                        .iter()
                        .enumerate()
                        .filter(|&(i, &v)| v > row[t] || (v == row[t] && i < t))
                        .map(|(_, &v)| f64::from(v))
                        .sum();
                    assert!(
                        row[t] > 0.0 && before <= f64::from(p) + 2e-6,
                        "row {r}, {o:?}"
                    );
                    skipped += 1;
                }
            }
        }
    }
    assert!(
        checked > 2 * skipped,
        "{checked} rows checked, {skipped} skipped"
    );
}

/// Batches beyond one launch's rows (the kernel keeps 256 rows per core on
/// chip) take several launches, each drawing its own rows.
#[test]
fn large_batches_take_several_launches() {
    let dev = device();
    let rows = algos::TopPDraw::max_rows(dev.profile()) as usize + 77;
    let n = 8;
    let u: Vec<f32> = (0..rows).map(|r| uniform(3, r as u64, 0)).collect();
    let all: Vec<f32> = (0..rows)
        .flat_map(|r| (0..n).map(move |i| if i == r % n { 0.5 } else { 0.5 / 7.0 }))
        .collect();
    let rounded: Vec<f32> = to_prob::<f16>(&all).iter().map(|v| v.to_f32()).collect();
    let (tokens, _, counts) = draw_with(&all, rows, 0.7, None, &u);
    let mut checked = 0;
    for r in 0..rows {
        if let Some((want, kept)) = reference(&rounded[r * n..(r + 1) * n], 0.7, None, u[r]) {
            assert_eq!(tokens[r], want, "row {r}");
            assert_eq!(counts[r] as usize, with_mass(&kept), "kept count, row {r}");
            checked += 1;
        }
    }
    assert!(checked > rows / 2, "{checked} of {rows} rows checked");
    // Seeded: the kernel makes row r's uniform(3, r, 0) itself, every launch
    // from its own first row of the batch: the same tokens.
    let buf = dev.upload(&to_prob::<f16>(&all)).unwrap();
    let seeded = TopPOptions {
        p: 0.7,
        seed: 3,
        ..Default::default()
    };
    let got = top_p_sample(&dev, Batch::rows(&buf, rows).unwrap(), seeded).unwrap();
    assert_eq!(got.download().unwrap(), tokens);
    // Bad probabilities in the first and the last launch are both counted.
    let mut bad = to_prob::<f16>(&all);
    bad[3] = f16::NAN;
    bad[(rows - 1) * n + 5] = f16::from_f32(-0.5);
    let buf = dev.upload(&bad).unwrap();
    match top_p_sample(
        &dev,
        Batch::rows(&buf, rows).unwrap(),
        TopPOptions::default(),
    ) {
        Err(Error::InvalidArgument { name, reason }) => {
            assert_eq!(name, "probs");
            assert!(reason.starts_with("2 probabilities"), "{reason}");
        }
        r => panic!("expected an error naming probs, got {r:?}"),
    }
}

/// Draws from `rows` copies of one row, then a chi-square test of the token
/// counts against the exact truncated, renormalised distribution.
fn goodness_of_fit<T: Prob>(p: f32, top_k: Option<usize>, seed: u64) {
    let dev = device();
    let n = 200;
    let rows = 3000;
    let row: Vec<T> = to_prob(&probs(n, 99));
    let rounded: Vec<f32> = row.iter().map(|v| v.back()).collect();
    let Some((_, kept)) = reference(&rounded, p, top_k, 0.5) else {
        panic!("p = {p} is within rounding of a partial sum: pick another");
    };
    let all: Vec<T> = (0..rows).flat_map(|_| row.iter().copied()).collect();
    let buf = dev.upload(&all).unwrap();
    let got = top_p_sample(
        &dev,
        Batch::rows(&buf, rows).unwrap(),
        TopPOptions {
            p,
            top_k,
            min_p: 0.0,
            seed,
        },
    )
    .unwrap()
    .download()
    .unwrap();
    let mass: f64 = kept.iter().map(|&(_, w)| f64::from(w)).sum();
    let mut want = vec![0.0f64; n];
    for &(i, w) in &kept {
        want[i] = f64::from(w) / mass;
    }
    let mut counts = vec![0u64; n];
    for &t in &got {
        counts[t as usize] += 1;
    }
    // chi_square also checks that no token outside the nucleus was drawn.
    let (stat, df) = chi_square(&counts, &want);
    let critical = chi_square_critical(df.max(1), ALPHA);
    assert!(
        stat < critical,
        "p {p} top_k {top_k:?}: chi-square {stat:.1} >= {critical:.1} (df {df}, alpha {ALPHA})"
    );
}

#[test]
fn draws_follow_the_truncated_distribution() {
    goodness_of_fit::<f16>(0.9, None, 5);
    goodness_of_fit::<f16>(0.6, None, 6);
    goodness_of_fit::<f16>(0.97, None, 7);
    goodness_of_fit::<f16>(0.95, Some(20), 8);
    goodness_of_fit::<f32>(0.9, None, 9);
    goodness_of_fit::<f32>(0.95, Some(20), 10);
}

#[test]
fn errors_name_the_argument() {
    let dev = device();
    let ok = dev.upload(&to_prob::<f16>(&probs(10, 1))).unwrap();
    for p in [0.0f32, -0.5, 1.5, f32::NAN] {
        let o = TopPOptions {
            p,
            ..Default::default()
        };
        match top_p_sample(&dev, &ok, o) {
            Err(Error::InvalidArgument { name, .. }) => assert_eq!(name, "p"),
            r => panic!("p = {p}: expected an error naming p, got {r:?}"),
        }
    }
    for min_p in [-0.1f32, 1.5, f32::NAN] {
        let o = TopPOptions {
            min_p,
            ..Default::default()
        };
        match top_p_sample(&dev, &ok, o) {
            Err(Error::InvalidArgument { name, .. }) => assert_eq!(name, "min_p"),
            r => panic!("min_p = {min_p}: expected an error naming min_p, got {r:?}"),
        }
    }
    for k in [0, 11] {
        let o = TopPOptions {
            top_k: Some(k),
            ..Default::default()
        };
        match top_p_sample(&dev, &ok, o) {
            Err(Error::InvalidArgument { name, .. }) => assert_eq!(name, "top_k"),
            r => panic!("top_k = {k}: expected an error naming top_k, got {r:?}"),
        }
    }
    // f32 probabilities: top_k past the row is refused as for f16.
    let ok32 = dev.upload(&probs(10, 1)).unwrap();
    let o = TopPOptions {
        top_k: Some(11),
        ..Default::default()
    };
    match top_p_sample(&dev, &ok32, o) {
        Err(Error::InvalidArgument { name, .. }) => assert_eq!(name, "top_k"),
        r => panic!("f32 with top_k = 11: expected an error naming top_k, got {r:?}"),
    }
    // Long rows are split across the cores (the pieces' path).
    let mut long = vec![1.0f32 / 70_000.0; 70_000];
    long[69_999] = f32::INFINITY;
    let mut long_nan = long.clone();
    long_nan[69_999] = f32::NAN;
    let bad_rows: [&[f32]; 8] = [
        &[0.5, -0.25, 0.75],
        &[0.5, 1.5, 0.0],
        &[0.5, f32::NAN, 0.1],
        &[0.0, 0.0, 0.0],
        &[0.5, f32::INFINITY, 0.0],
        &[f32::NEG_INFINITY, 0.5, 0.5],
        &long,
        &long_nan,
    ];
    for row in bad_rows {
        let buf = dev.upload(&to_prob::<f16>(row)).unwrap();
        match top_p_sample(&dev, &buf, TopPOptions::default()) {
            Err(Error::InvalidArgument { name, .. }) => {
                assert_eq!(name, "probs", "{:?}", &row[..3])
            }
            r => panic!("{:?}: expected an error naming probs, got {r:?}", &row[..3]),
        }
    }
}

/// The draw checks every probability on the row's first read by its sum,
/// maximum and minimum, and counts the bad ones (read again) only when
/// those say so: the count in the error is exact, in rows shared by cores
/// and in whole rows, for f16, bf16 and f32; -0.0 is a valid zero.
#[test]
fn bad_probabilities_are_counted_exactly() {
    fn count_in_error<T: Prob>(row_values: &[f32], rows: usize) -> Result<(), String> {
        let dev = device();
        let buf = dev.upload(&to_prob::<T>(row_values)).unwrap();
        match top_p_sample(
            &dev,
            Batch::rows(&buf, rows).unwrap(),
            TopPOptions::default(),
        ) {
            Err(Error::InvalidArgument {
                name: "probs",
                reason,
            }) => Err(reason),
            Err(e) => panic!("expected an error naming probs, got {e:?}"),
            Ok(_) => Ok(()),
        }
    }
    let bad = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.5,
        -0.25,
        2.0,
    ];
    for (rows, n) in [(1, 70_000), (96, 5000)] {
        let mut all: Vec<f32> = vec![0.5 / n as f32; rows * n];
        for r in 0..rows {
            all[r * n] = 0.5;
            all[r * n + n - 1] = -0.0;
        }
        assert_eq!(count_in_error::<f16>(&all, rows), Ok(()), "-0.0 is valid");
        assert_eq!(count_in_error::<f32>(&all, rows), Ok(()), "-0.0 is valid");
        // One at a time: each of the three tests must see its kind alone.
        for &v in &bad {
            let mut one = all.clone();
            one[rows * n / 2 + 3] = v;
            let want = "1 probabilities outside [0, 1] (NaN included)".to_string();
            assert_eq!(
                count_in_error::<f16>(&one, rows),
                Err(want.clone()),
                "{v} in {rows} x {n}"
            );
            assert_eq!(
                count_in_error::<f32>(&one, rows),
                Err(want.clone()),
                "f32 {v} in {rows} x {n}"
            );
        }
        // f32 also holds values just outside [0, 1] that no 16-bit type has.
        for w in [1.000_000_1f32, -1e-30] {
            let mut one = all.clone();
            one[rows * n / 2 + 3] = w;
            let want = "1 probabilities outside [0, 1] (NaN included)".to_string();
            assert_eq!(
                count_in_error::<f32>(&one, rows),
                Err(want),
                "f32 {w} in {rows} x {n}"
            );
        }
        // Spread over the batch: different rows, pieces and tiles.
        for (i, &v) in bad.iter().enumerate() {
            all[(i * 7919 + 1) % (rows * n)] = v;
        }
        let want = format!("{} probabilities outside [0, 1] (NaN included)", bad.len());
        assert_eq!(
            count_in_error::<f16>(&all, rows),
            Err(want.clone()),
            "f16 {rows} x {n}"
        );
        assert_eq!(
            count_in_error::<bf16>(&all, rows),
            Err(want.clone()),
            "bf16 {rows} x {n}"
        );
        assert_eq!(
            count_in_error::<f32>(&all, rows),
            Err(want),
            "f32 {rows} x {n}"
        );
    }
}

/// Rows of `n` probabilities of one of three shapes: a clear nucleus
/// (`peaked`), a language model's tail with ties and zeros (`probs`), or a
/// handful of distinct values (runs of ties everywhere).
fn shaped(shape: u8, n: usize, seed: u64) -> Vec<f32> {
    match shape {
        0 => peaked(n, seed),
        1 => probs(n, seed),
        _ => {
            let raw: Vec<f64> = (0..n)
                .map(|i| ((i as u64 * 2654435761 + seed) % 4) as f64)
                .collect();
            let total: f64 = raw.iter().sum::<f64>().max(1.0);
            raw.iter().map(|v| (v / total) as f32).collect()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random shapes, sizes, p, top_k and min_p: every token is a kept
    /// entry with positive probability, and equals the reference's wherever
    /// p and the draw are clear of fp32 rounding.
    #[test]
    fn random_rows_follow_the_reference(
        n in 1usize..3000,
        rows in 1usize..40,
        p in 0.05f32..=1.0,
        k_part in proptest::option::of(0.0f64..1.0),
        shape in 0u8..3,
        seed in any::<u64>(),
        f32_probs in any::<bool>(),
        min_p in prop_oneof![Just(0.0f32), 0.0f32..=1.0],
    ) {
        let top_k = k_part.map(|f| ((f * n as f64) as usize).clamp(1, n));
        let data: Vec<f32> = (0..rows)
            .flat_map(|r| shaped(shape, n, seed.wrapping_add(r as u64)))
            .collect();
        let rounded: Vec<f32> = if f32_probs {
            data
        } else {
            to_prob::<f16>(&data).iter().map(|v| v.to_f32()).collect()
        };
        if rounded.chunks(n).any(|row| row.iter().all(|&v| v == 0.0)) {
            return Ok(()); // an all-zero row is refused (errors_name_the_argument)
        }
        let u: Vec<f32> = (0..rows).map(|r| uniform(seed, r as u64, 0)).collect();
        let (tokens, _, counts) = if f32_probs {
            draw_min_p::<f32>(&rounded, rows, p, top_k, min_p, &u)
        } else {
            draw_min_p::<f16>(&rounded, rows, p, top_k, min_p, &u)
        };
        for r in 0..rows {
            let row = &rounded[r * n..(r + 1) * n];
            let t = tokens[r];
            prop_assert!(t >= 0 && (t as usize) < n, "row {}: token {}", r, t);
            prop_assert!(row[t as usize] > 0.0, "row {}: token {} has no mass", r, t);
            // Within the nucleus, up to rounding: the mass before it is about <= p.
            let before: f64 = row
                .iter()
                .enumerate()
                .filter(|&(i, &v)| v > row[t as usize] || (v == row[t as usize] && i < t as usize))
                .map(|(_, &v)| f64::from(v))
                .sum();
            prop_assert!(before <= f64::from(p) + 1e-3, "row {}: token {} has {} before it", r, t, before);
            if let Some(k) = top_k {
                let above = row.iter().filter(|&&v| v > row[t as usize]).count();
                prop_assert!(above < k, "row {}: token {} is not in the top {}", r, t, k);
            }
            let largest = row.iter().copied().fold(0.0f32, f32::max);
            prop_assert!(row[t as usize] >= min_p * largest, "row {}: token {} is below min_p", r, t);
            if let Some((want, kept)) = reference_min_p(row, p, top_k, min_p, u[r], 1e-4) {
                prop_assert_eq!(t, want, "row {} of {} x {}", r, rows, n);
                prop_assert_eq!(counts[r] as usize, with_mass(&kept), "kept count, row {} of {} x {}", r, rows, n);
            }
        }
    }
}
