//! A tour of every operation on the simulated Ascend910B4: each result is
//! checked against a CPU reference, and the simulator's trace of each launch
//! is replayed by the cost model for a MODELED time, HBM traffic and % of a
//! modeled COPY that moves the operation's minimal traffic.
use ascend_scan::matrices::{sparse_attention, AttentionPattern};
use ascend_scan::{
    argsort, compress_with, copy, cummax, cummin, max_by_key, model_launches, multinomial,
    multinomial_reference, reduce, reduce_sum, run_heads, sample_logits, sample_logits_on,
    sample_logits_per_row, sample_logits_workspace_bytes, scan, segmented_max, segmented_min,
    segmented_scan, segmented_sum, softmax, sort, sort_pairs, split_with, spmv, spmv_axpby,
    sum_by_key, top_p_sample, top_p_sample_on, top_p_sample_workspace_bytes, topk, uniform,
    uniforms, unique_consecutive, Algorithm, Batch, CompressOptions, CostError, CostParams, Csr,
    Device, Error, LaunchReport, LogitsCheck, LogitsPerRow, LogitsRows, LogitsSampling, RevSpec,
    RowTopK, SampleOptions, ScanInput, ScanOp, ScanOptions, SegScanAlgorithm, SegScanOptions,
    SegSumAlgorithm, SegSumOptions, Segments, Soc, SortAlgorithm, SortOptions, SplitOptions,
    Temperature, TopPCheck, TopPOptions, TopPProb, TopPRows, TopkKey, TopkOptions, Workspace,
};
use half::f16;
use std::cmp::Ordering;

/// One checked operation and what its launches recorded.
struct Row {
    op: String,
    n: usize,
    ok: bool,
    /// Minimal HBM bytes per element (read inputs once, write outputs once).
    floor: f64,
    reports: Vec<LaunchReport>,
}

fn pseudo_random(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n).map(move |_| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    })
}

fn row(dev: &Device, op: String, n: usize, ok: bool, floor: f64) -> Row {
    Row {
        op,
        n,
        ok,
        floor,
        reports: dev.take_reports(),
    }
}

fn tour_copy(dev: &Device, n: usize) -> Result<Row, Error> {
    let xs: Vec<u8> = pseudo_random(n, 1).map(|v| v as u8).collect();
    let x = dev.upload(&xs)?;
    dev.take_reports();
    let ok = copy(&x)?.download()? == xs;
    Ok(row(dev, "copy u8".into(), n, ok, 2.0))
}

fn tour_reduce(dev: &Device, n: usize) -> Result<Vec<Row>, Error> {
    let xf: Vec<f16> = pseudo_random(n, 4)
        .map(|v| f16::from_f32((v % 2001) as f32 / 100.0 - 10.0))
        .collect();
    let (want, abs) = xf.iter().fold((0f64, 0f64), |(s, a), v| {
        (s + v.to_f64(), a + v.to_f64().abs())
    });
    let x = dev.upload(&xf)?;
    dev.take_reports();
    let got = f64::from(reduce_sum(dev, &x)?);
    let ok = (got - want).abs() <= (n as f64 / 4096.0 + 4096.0 + 40.0) * 2f64.powi(-24) * abs;
    let f16_row = row(dev, "reduce sum f16->f32".into(), n, ok, 2.0);
    let xi: Vec<i8> = pseudo_random(n, 5).map(|v| v as i8).collect();
    let want: i64 = xi.iter().map(|&v| i64::from(v)).sum();
    let x = dev.upload(&xi)?;
    dev.take_reports();
    let ok = i64::from(reduce_sum(dev, &x)?) == want;
    Ok(vec![
        f16_row,
        row(dev, "reduce sum i8->i32".into(), n, ok, 1.0),
    ])
}

/// The name of a scan in the table: kind, algorithm (what `Auto` ran), batch shape.
fn scan_label<T: ScanInput>(
    types: &str,
    rows: usize,
    n: usize,
    exclusive: bool,
    algorithm: Algorithm,
) -> String {
    let kind = if exclusive { "excl" } else { "incl" };
    let algorithm = match algorithm {
        Algorithm::Auto => format!("Auto={}", Algorithm::auto_for::<T>(rows, n)),
        a => a.to_string(),
    };
    if rows > 1 {
        format!("scan {types} {kind} {algorithm} x{rows} rows")
    } else {
        format!("scan {types} {kind} {algorithm}")
    }
}

/// f16 -> f32 scan of `rows` rows of `n` elements, each row checked against
/// the f64 reference with the f32 accumulation bound of tests/it/scan.rs.
fn tour_scan_f16(
    dev: &Device,
    rows: usize,
    n: usize,
    algorithm: Algorithm,
    exclusive: bool,
) -> Result<Row, Error> {
    let xs: Vec<f16> = pseudo_random(rows * n, 2)
        .map(|v| f16::from_f32((v % 2001) as f32 / 100.0 - 10.0))
        .collect();
    let x = dev.upload(&xs)?;
    dev.take_reports();
    let options = ScanOptions {
        exclusive,
        algorithm,
        want_total: true,
        ..Default::default()
    };
    let out = scan(dev, Batch::rows(&x, rows)?, options)?;
    let y = out.values.download()?;
    let totals = out.totals.unwrap_or_default();
    let ran = match algorithm {
        Algorithm::Auto => Algorithm::auto_for::<f16>(rows, n),
        a => a,
    };
    let d = f64::from(ran.error_depth().unwrap_or(128));
    let mut ok = totals.len() == rows;
    for r in 0..rows {
        let (mut acc, mut abs) = (0f64, 0f64);
        for i in 0..n {
            let v = xs[r * n + i].to_f64();
            let before = acc;
            acc += v;
            abs += v.abs();
            let want = if exclusive { before } else { acc };
            let bound = (d + i as f64 / d + 2.0) * 2f64.powi(-24) * abs;
            ok &= (f64::from(y[r * n + i]) - want).abs() <= bound;
        }
        let bound = (d + n as f64 / d + 2.0) * 2f64.powi(-24) * abs;
        ok &= totals
            .get(r)
            .is_some_and(|&t| (f64::from(t) - acc).abs() <= bound);
    }
    let label = scan_label::<f16>("f16->f32", rows, n, exclusive, algorithm);
    Ok(row(dev, label, rows * n, ok, 6.0))
}

/// i8 -> i32 scan of `rows` rows of `n` elements, exact.
fn tour_scan_i8(
    dev: &Device,
    rows: usize,
    n: usize,
    algorithm: Algorithm,
    exclusive: bool,
) -> Result<Row, Error> {
    let xs: Vec<i8> = pseudo_random(rows * n, 3).map(|v| v as i8).collect();
    let x = dev.upload(&xs)?;
    dev.take_reports();
    let options = ScanOptions {
        exclusive,
        algorithm,
        want_total: true,
        ..Default::default()
    };
    let out = scan(dev, Batch::rows(&x, rows)?, options)?;
    let y = out.values.download()?;
    let totals = out.totals.unwrap_or_default();
    let mut ok = totals.len() == rows;
    for r in 0..rows {
        let mut acc = 0i64;
        for i in 0..n {
            let before = acc;
            acc += i64::from(xs[r * n + i]);
            ok &= i64::from(y[r * n + i]) == if exclusive { before } else { acc };
        }
        ok &= totals.get(r).is_some_and(|&t| i64::from(t) == acc);
    }
    let label = scan_label::<i8>("i8->i32", rows, n, exclusive, algorithm);
    Ok(row(dev, label, rows * n, ok, 5.0))
}

fn tour_reduce_max_min(dev: &Device, n: usize) -> Result<Vec<Row>, Error> {
    let xf: Vec<f16> = pseudo_random(n, 6)
        .map(|v| f16::from_bits(v as u16 & 0x7bff))
        .collect();
    let xi: Vec<i8> = pseudo_random(n, 7).map(|v| v as i8).collect();
    let x32: Vec<f32> = pseudo_random(n, 11)
        .map(|v| f32::from_bits(v as u32 & 0x7f7f_ffff | (v >> 32) as u32 & 0x8000_0000))
        .collect();
    let (f, i, g) = (dev.upload(&xf)?, dev.upload(&xi)?, dev.upload(&x32)?);
    let mut rows = Vec::new();
    for op in [ScanOp::Max, ScanOp::Min] {
        let max = op == ScanOp::Max;
        let pick = |a: f32, b: f32| if (b > a) == max { b } else { a };
        let want = xf.iter().map(|v| v.to_f32()).reduce(pick);
        dev.take_reports();
        let ok = Some(reduce(dev, &f, op)?) == want;
        rows.push(row(dev, format!("reduce {op:?} f16->f32"), n, ok, 2.0));
        let want = if max {
            xi.iter().max()
        } else {
            xi.iter().min()
        };
        dev.take_reports();
        let ok = Some(reduce(dev, &i, op)?) == want.map(|&v| i32::from(v));
        rows.push(row(dev, format!("reduce {op:?} i8->i32"), n, ok, 1.0));
        let want = x32.iter().copied().reduce(pick);
        dev.take_reports();
        let ok = Some(reduce(dev, &g, op)?) == want;
        rows.push(row(dev, format!("reduce {op:?} f32->f32"), n, ok, 4.0));
    }
    Ok(rows)
}

/// Max/min scan of `rows` rows (OPSCAN), checked exactly; f16 when `half`, else i8.
fn tour_opscan(
    dev: &Device,
    n: usize,
    rows: usize,
    op: ScanOp,
    half: bool,
    exclusive: bool,
) -> Result<Row, Error> {
    let values: Vec<u64> = pseudo_random(n, 8).collect();
    let wide: Vec<f64> = if half {
        values
            .iter()
            .map(|&v| f16::from_bits(v as u16 & 0xfbff).to_f64())
            .collect()
    } else {
        values.iter().map(|&v| f64::from(v as i8)).collect()
    };
    let options = ScanOptions {
        exclusive,
        want_total: true,
        op,
        ..Default::default()
    };
    let (y, totals): (Vec<f64>, Vec<f64>) = if half {
        let xs: Vec<f16> = values
            .iter()
            .map(|&v| f16::from_bits(v as u16 & 0xfbff))
            .collect();
        let x = dev.upload(&xs)?;
        dev.take_reports();
        let out = scan(dev, Batch::rows(&x, rows)?, options)?;
        let t = out.totals.unwrap_or_default();
        (
            out.values.download()?.into_iter().map(f64::from).collect(),
            t.into_iter().map(f64::from).collect(),
        )
    } else {
        let xs: Vec<i8> = values.iter().map(|&v| v as i8).collect();
        let x = dev.upload(&xs)?;
        dev.take_reports();
        let out = scan(dev, Batch::rows(&x, rows)?, options)?;
        let t = out.totals.unwrap_or_default();
        (
            out.values.download()?.into_iter().map(f64::from).collect(),
            t.into_iter().map(f64::from).collect(),
        )
    };
    let max = op == ScanOp::Max;
    let identity = match (half, max) {
        (true, true) => f64::NEG_INFINITY,
        (true, false) => f64::INFINITY,
        (false, true) => f64::from(i32::MIN),
        (false, false) => f64::from(i32::MAX),
    };
    let len = n / rows;
    let mut ok = totals.len() == rows && y.len() == n;
    for r in 0..rows {
        let mut acc = identity;
        for (i, &v) in wide.iter().enumerate().skip(r * len).take(len) {
            let before = acc;
            if (v > acc) == max && v != acc {
                acc = v;
            }
            ok &= y.get(i) == Some(&if exclusive { before } else { acc });
        }
        ok &= totals.get(r) == Some(&acc);
    }
    let kind = if exclusive { "exclusive" } else { "inclusive" };
    let ty = if half { "f16->f32" } else { "i8->i32" };
    let shape = if rows > 1 {
        format!(" {rows} rows")
    } else {
        String::new()
    };
    Ok(row(
        dev,
        format!("scan {op:?} {ty} {kind}{shape}"),
        n,
        ok,
        if half { 6.0 } else { 5.0 },
    ))
}

/// cummax / cummin of `rows` rows of f16 with many ties and a NaN in the
/// middle of the first row, checked against PyTorch's CPU rule: the running
/// value moves to x[i] when x[i] is a NaN, or neither is one and x[i] >=
/// (max) / <= (min) it; the index is where it last moved.
fn tour_cummax(dev: &Device, n: usize, rows: usize, op: ScanOp) -> Result<Row, Error> {
    let mut xs: Vec<f16> = pseudo_random(n, 10)
        .map(|v| f16::from_f32((v % 61) as f32 - 30.0))
        .collect();
    let len = n / rows;
    xs[len / 2] = f16::NAN;
    let x = dev.upload(&xs)?;
    dev.take_reports();
    let max = op == ScanOp::Max;
    let out = if max {
        cummax(dev, Batch::rows(&x, rows)?)?
    } else {
        cummin(dev, Batch::rows(&x, rows)?)?
    };
    let (values, indices) = (out.values.download()?, out.indices.download()?);
    let mut ok = values.len() == n && indices.len() == n;
    for r in 0..rows {
        let (mut run, mut at) = (xs[r * len].to_f32(), 0);
        for i in 0..len {
            let v = xs[r * len + i].to_f32();
            if v.is_nan() || (!run.is_nan() && if max { v >= run } else { v <= run }) {
                (run, at) = (v, i as i32);
            }
            let got = values.get(r * len + i).copied().unwrap_or(0.0);
            ok &= (got == run || got.is_nan() && run.is_nan())
                && indices.get(r * len + i) == Some(&at);
        }
    }
    let name = if max { "cummax" } else { "cummin" };
    Ok(row(
        dev,
        format!("{name} f16->f32 + i32 indices {rows} rows"),
        n,
        ok,
        10.0,
    ))
}

/// f32 -> f32 sum scan (the vector path: VECTORSCAN), checked per row
/// against f64 with the bound of tests/it/batched.rs.
fn tour_scan_f32(dev: &Device, rows: usize, n: usize, exclusive: bool) -> Result<Row, Error> {
    let xs: Vec<f32> = pseudo_random(rows * n, 9)
        .map(|v| (v % 2_000_001) as f32 / 1000.0 - 1000.0)
        .collect();
    let x = dev.upload(&xs)?;
    dev.take_reports();
    let options = ScanOptions {
        exclusive,
        want_total: true,
        ..Default::default()
    };
    let out = scan(dev, Batch::rows(&x, rows)?, options)?;
    let y = out.values.download()?;
    let totals = out.totals.unwrap_or_default();
    let d = f64::from(Algorithm::VectorScan.error_depth().unwrap_or(256));
    let mut ok = totals.len() == rows;
    for r in 0..rows {
        let (mut acc, mut abs) = (0f64, 0f64);
        for i in 0..n {
            let v = f64::from(xs[r * n + i]);
            let (before, abs_before) = (acc, abs);
            acc += v;
            abs += v.abs();
            let (want, mag) = if exclusive {
                (before, abs_before)
            } else {
                (acc, abs)
            };
            ok &= (f64::from(y[r * n + i]) - want).abs()
                <= (d + i as f64 / d + 2.0) * 2f64.powi(-24) * mag;
        }
        ok &= totals.get(r).is_some_and(|&t| {
            (f64::from(t) - acc).abs() <= (d + n as f64 / d + 2.0) * 2f64.powi(-24) * abs
        });
    }
    let label = scan_label::<f32>("f32->f32", rows, n, exclusive, Algorithm::Auto);
    Ok(row(dev, label, rows * n, ok, 8.0))
}

/// COMPRESS and SPLIT of f16 values by random 0/1 flags (half of them 1),
/// checked bit for bit against the sequential partition. Floors: compress
/// reads values and flags (3 B) and writes the kept fraction f (2f B, 4f
/// more with indices); split writes every value (5 B, 4 more with indices).
fn tour_split(dev: &Device, n: usize) -> Result<Vec<Row>, Error> {
    let xs: Vec<f16> = pseudo_random(n, 21)
        .map(|v| f16::from_bits(v as u16))
        .collect();
    let fs: Vec<i8> = pseudo_random(n, 22).map(|v| (v >> 7 & 1) as i8).collect();
    let (mut v1, mut i1, mut v0, mut i0) = (vec![], vec![], vec![], vec![]);
    for (i, (x, &f)) in xs.iter().zip(&fs).enumerate() {
        if f == 1 {
            v1.push(x.to_bits());
            i1.push(i as i32);
        } else {
            v0.push(x.to_bits());
            i0.push(i as i32);
        }
    }
    let kept = v1.len() as f64 / n as f64;
    let bits = |v: Vec<f16>| v.into_iter().map(f16::to_bits).collect::<Vec<_>>();
    let x = dev.upload(&xs)?;
    let f = dev.upload(&fs)?;
    let mut rows = Vec::new();
    for want_indices in [false, true] {
        dev.take_reports();
        let c = compress_with(dev, &x, &f, CompressOptions { want_indices })?;
        let ok = c.count == v1.len()
            && bits(c.download_values()?) == v1
            && c.download_indices()?.is_none_or(|i| i == i1);
        let label = format!(
            "compress f16{} (f={kept:.2})",
            if want_indices { " +indices" } else { "" }
        );
        let per_kept = if want_indices { 6.0 } else { 2.0 };
        rows.push(row(dev, label, n, ok, 3.0 + per_kept * kept));
    }
    let want_v: Vec<u16> = v1.iter().chain(&v0).copied().collect();
    let want_i: Vec<i32> = i1.iter().chain(&i0).copied().collect();
    for want_indices in [false, true] {
        dev.take_reports();
        let s = split_with(dev, &x, &f, SplitOptions { want_indices })?;
        let indices_ok = match &s.indices {
            Some(i) => i.download()? == want_i,
            None => !want_indices,
        };
        let ok = s.ones == v1.len() && bits(s.values.download()?) == want_v && indices_ok;
        let label = if want_indices {
            "split f16 +indices (SPLITIND)"
        } else {
            "split f16"
        };
        rows.push(row(
            dev,
            label.into(),
            n,
            ok,
            if want_indices { 9.0 } else { 5.0 },
        ));
    }
    Ok(rows)
}

/// Segmented scans (every algorithm, inclusive and exclusive) and segmented
/// sums (both algorithms, and the default from the same segments given as
/// offsets) of f16 values with random flags at `ppm` starts per million,
/// against an f64 reference. The tolerance is SSCR's (the loosest
/// of the documented bounds: two global f32 prefixes of the d = 256 scan);
/// tests/it/segscan.rs checks each algorithm against its own bound. Floors:
/// scan 7 B (x, flags, f32 result), sum 3 B.
fn tour_segmented(dev: &Device, n: usize, ppm: u64) -> Result<Vec<Row>, Error> {
    let xs: Vec<f16> = pseudo_random(n, 31)
        .map(|v| f16::from_f32((v % 2001) as f32 / 100.0 - 10.0))
        .collect();
    let fs: Vec<i8> = pseudo_random(n, 32)
        .map(|v| i8::from(v % 1_000_000 < ppm))
        .collect();
    let u = 1.0 / f64::from(1u32 << 24);
    // Reference: inclusive scan per segment, the prefix magnitude, sums.
    let (mut incl, mut tol, mut sums) = (Vec::with_capacity(n), Vec::with_capacity(n), vec![]);
    let (mut seg, mut abs) = (0f64, 0f64);
    for (i, (x, &f)) in xs.iter().zip(&fs).enumerate() {
        if i > 0 && f == 1 {
            sums.push(seg);
            seg = 0.0;
        }
        seg += x.to_f64();
        abs += x.to_f64().abs();
        incl.push(seg);
        tol.push(2.0 * (256.0 + i as f64 / 256.0 + 2.0) * u * abs);
    }
    sums.push(seg);
    let x = dev.upload(&xs)?;
    let f = dev.upload(&fs)?;
    let density = format!("{}%", ppm as f64 / 10_000.0);
    let mut rows = Vec::new();
    for (name, algorithm) in [
        (
            "SEGSCAN vector",
            SegScanAlgorithm::SegScan {
                revspec: RevSpec::Vector,
            },
        ),
        (
            "SEGSCAN simple",
            SegScanAlgorithm::SegScan {
                revspec: RevSpec::Simple,
            },
        ),
        ("SSCR", SegScanAlgorithm::Sscr),
    ] {
        for exclusive in [false, true] {
            dev.take_reports();
            let options = SegScanOptions {
                exclusive,
                algorithm,
            };
            let y = segmented_scan(dev, &x, Segments::Flags(&f), options)?.download()?;
            let ok = y.iter().enumerate().all(|(i, &g)| {
                let want = if exclusive {
                    incl[i] - xs[i].to_f64()
                } else {
                    incl[i]
                };
                (f64::from(g) - want).abs() <= tol[i]
            });
            let kind = if exclusive { "excl" } else { "incl" };
            rows.push(row(
                dev,
                format!("segscan {name} f16 {kind} (f={density})"),
                n,
                ok,
                7.0,
            ));
        }
    }
    // The first sums.len() sums within the tolerance of the last prefix.
    let sums_ok = |got: &[f32]| {
        got.iter()
            .zip(&sums)
            .all(|(&g, &w)| (f64::from(g) - w).abs() <= tol[n - 1])
    };
    for (name, algorithm) in [
        ("one pass", SegSumAlgorithm::OnePass),
        ("bounded", SegSumAlgorithm::SegScan),
        ("SCD", SegSumAlgorithm::Scd),
    ] {
        dev.take_reports();
        let got =
            segmented_sum(dev, &x, Segments::Flags(&f), SegSumOptions { algorithm })?.download()?;
        let ok = got.len() == sums.len() && sums_ok(&got);
        rows.push(row(
            dev,
            format!("segsum {name} f16 (f={density})"),
            n,
            ok,
            3.0,
        ));
    }
    // f32 values (the same ones, widened): SEGSUM, the one f32 sum.
    let wide: Vec<f32> = xs.iter().map(|v| v.to_f32()).collect();
    let x32 = dev.upload(&wide)?;
    dev.take_reports();
    let got =
        segmented_sum(dev, &x32, Segments::Flags(&f), SegSumOptions::default())?.download()?;
    let ok = got.len() == sums.len() && sums_ok(&got);
    rows.push(row(
        dev,
        format!("segsum one pass f32 (f={density})"),
        n,
        ok,
        5.0,
    ));
    // The same segments as CSR offsets (checked and made into flags on the
    // device), with an empty segment at the end: its sum is 0.
    let offsets: Vec<i32> = (0..n)
        .filter(|&i| i == 0 || fs[i] == 1)
        .chain([n, n])
        .map(|i| i as i32)
        .collect();
    let o = dev.upload(&offsets)?;
    dev.take_reports();
    let got =
        segmented_sum(dev, &x, Segments::Offsets(&o), SegSumOptions::default())?.download()?;
    let ok = got.len() == sums.len() + 1 && got[sums.len()] == 0.0 && sums_ok(&got);
    rows.push(row(
        dev,
        format!("segsum offsets f16 (f={density})"),
        n,
        ok,
        3.0,
    ));
    // Max and min with their first index over the same offsets (SEGEXTREMA),
    // exact: the empty last segment gives -inf / +inf and index -1.
    for max in [true, false] {
        dev.take_reports();
        let got = if max {
            segmented_max(dev, &x, Segments::Offsets(&o))?
        } else {
            segmented_min(dev, &x, Segments::Offsets(&o))?
        };
        let (values, indices) = (got.values.download()?, got.indices.download()?);
        let ok = offsets.windows(2).enumerate().all(|(s, w)| {
            let seg = &xs[w[0] as usize..w[1] as usize];
            let mut best: Option<usize> = None;
            for (i, v) in seg.iter().enumerate() {
                let better = |b: f16| if max { *v > b } else { *v < b };
                if best.is_none_or(|b| better(seg[b])) {
                    best = Some(i);
                }
            }
            match best {
                Some(i) => indices[s] == w[0] + i as i32 && values[s] == seg[i],
                None => indices[s] == -1 && values[s].is_infinite(),
            }
        });
        let name = if max { "segmax" } else { "segmin" };
        rows.push(row(
            dev,
            format!("{name} offsets f16 with index (f={density})"),
            n,
            ok,
            3.0,
        ));
    }
    Ok(rows)
}

/// Runs of equal i32 keys (a new key at about one key in `mean`): their
/// start flags (RUNHEADS), the runs (`unique_consecutive`), and the sums of
/// i8 values and the maxima of f16 values by key, checked exactly against
/// a CPU walk over the keys.
fn tour_runs(dev: &Device, n: usize, mean: u64) -> Result<Vec<Row>, Error> {
    let keys: Vec<i32> = pseudo_random(n, 31)
        .scan(0i32, |k, v| {
            *k += i32::from(v % mean == 0);
            Some(*k)
        })
        .collect();
    let starts: Vec<usize> = (0..n)
        .filter(|&i| i == 0 || keys[i] != keys[i - 1])
        .collect();
    let bounds = |j: usize| (starts[j], starts.get(j + 1).copied().unwrap_or(n));
    let k = dev.upload(&keys)?;
    let mut rows = Vec::new();
    dev.take_reports();
    let flags = run_heads(dev, &k)?.download()?;
    let ok = flags
        .iter()
        .enumerate()
        .all(|(i, &f)| (f == 1) == starts.binary_search(&i).is_ok());
    rows.push(row(
        dev,
        format!("run_heads i32 (runs ~1/{mean})"),
        n,
        ok,
        5.0,
    ));
    let runs = unique_consecutive(dev, &k)?;
    let ok = runs.count == starts.len()
        && runs.download_keys()? == starts.iter().map(|&s| keys[s]).collect::<Vec<_>>();
    rows.push(row(
        dev,
        format!("unique_consecutive i32 (runs ~1/{mean})"),
        n,
        ok,
        4.0,
    ));
    let xs: Vec<i8> = pseudo_random(n, 32).map(|v| (v % 255) as i8).collect();
    let x = dev.upload(&xs)?;
    dev.take_reports();
    let sums = sum_by_key(dev, &k, &x, SegSumOptions::default())?
        .reduced
        .download()?;
    let ok = sums.len() == starts.len()
        && sums.iter().enumerate().all(|(j, &s)| {
            let (a, b) = bounds(j);
            s == xs[a..b].iter().map(|&v| i32::from(v)).sum::<i32>()
        });
    rows.push(row(
        dev,
        format!("sum_by_key i32 keys, i8->i32 (runs ~1/{mean})"),
        n,
        ok,
        5.0,
    ));
    let hs: Vec<f16> = pseudo_random(n, 33)
        .map(|v| f16::from_f32((v % 2001) as f32 - 1000.0))
        .collect();
    let h = dev.upload(&hs)?;
    dev.take_reports();
    let max = max_by_key(dev, &k, &h)?.reduced;
    let (values, indices) = (max.values.download()?, max.indices.download()?);
    let ok = values.len() == starts.len()
        && (0..starts.len()).all(|j| {
            let (a, b) = bounds(j);
            let first = (a..b).fold(a, |best, i| if hs[i] > hs[best] { i } else { best });
            indices[j] == first as i32 && values[j] == hs[first]
        });
    rows.push(row(
        dev,
        format!("max_by_key i32 keys, f16 with index (runs ~1/{mean})"),
        n,
        ok,
        6.0,
    ));
    Ok(rows)
}

/// MULTINOMIAL: `draws` seeded draws from each of `rows` rows of `n` f16
/// weights (a quarter of them zero), checked index for index against the
/// CPU definition (`multinomial_reference`, same fp32 pair-sum tree, same
/// uniforms). Floor: one read of the weights (2 B/element).
fn tour_multinomial(dev: &Device, rows: usize, n: usize, draws: usize) -> Result<Row, Error> {
    let w: Vec<f16> = pseudo_random(rows * n, 23)
        .map(|v| {
            f16::from_f32(if v % 4 == 0 {
                0.0
            } else {
                (v >> 8) as f32 / (1u64 << 56) as f32
            })
        })
        .collect();
    let x = dev.upload(&w)?;
    dev.take_reports();
    let seed = 2026;
    let got = multinomial(dev, Batch::rows(&x, rows)?, draws, SampleOptions { seed })?;
    let ok = got.download()? == multinomial_reference(&w, rows, &uniforms(seed, rows, draws));
    let label = format!("multinomial f16 {rows}x{n} ({draws} draw/row)");
    Ok(row(dev, label, rows * n, ok, 2.0))
}

/// torch's order of f16 keys: NaN last (all equal), -0.0 equal to +0.0.
fn float_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).expect("not NaN"),
    }
}

/// The stable CPU sort of each row of `keys` (descending: reversed order,
/// ties still in input order): the permutation of every row.
fn stable_perm<K: Copy + Into<f64>>(keys: &[K], rows: usize, descending: bool) -> Vec<i32> {
    let n = keys.len() / rows;
    (0..rows)
        .flat_map(|r| {
            let row = &keys[r * n..(r + 1) * n];
            let mut perm: Vec<usize> = (0..n).collect();
            perm.sort_by(|&a, &b| {
                let o = float_order(row[a].into(), row[b].into());
                if descending {
                    o.reverse()
                } else {
                    o
                }
            });
            perm.into_iter().map(|i| i as i32)
        })
        .collect()
}

/// RADIXSORT of random f16 bit patterns (NaN, inf, -0.0 included) with
/// indices, one-bit and 4-bit digits, ascending and descending, 1-D and a
/// batch: keys bit for bit and indices exactly against the stable CPU
/// sort. Floor: read the keys, write keys and indices (8 B/key).
fn tour_sort(dev: &Device, rows: usize, n: usize) -> Result<Vec<Row>, Error> {
    let keys: Vec<f16> = pseudo_random(rows * n, 31)
        .map(|v| f16::from_bits((v >> 16) as u16))
        .collect();
    let x = dev.upload(&keys)?;
    let mut out = Vec::new();
    for algorithm in [SortAlgorithm::MultiBit, SortAlgorithm::OneBit] {
        for descending in [false, true] {
            let want = stable_perm(&keys, rows, descending);
            dev.take_reports();
            let o = SortOptions {
                descending,
                algorithm,
            };
            let s = sort(dev, Batch::rows(&x, rows)?, o)?;
            let idx = s.indices.download()?;
            let vals = s.values.download()?;
            let n_row = keys.len() / rows;
            let ok = idx == want
                && vals.iter().enumerate().all(|(i, v)| {
                    v.to_bits() == keys[(i / n_row) * n_row + want[i] as usize].to_bits()
                });
            let bits = if algorithm == SortAlgorithm::OneBit {
                1
            } else {
                4
            };
            let order = if descending { "desc" } else { "asc" };
            let shape = if rows == 1 {
                String::new()
            } else {
                format!(" {rows}x{n}")
            };
            let label = format!("sort f16 {bits}-bit {order}{shape} (+indices)");
            out.push(row(dev, label, rows * n, ok, 8.0));
        }
    }
    Ok(out)
}

/// 32-bit keys: argsort of f32 keys (random bit patterns: NaN, inf, -0.0
/// and subnormals included) and sort_pairs carrying u32 values, against
/// the stable CPU sort (torch's order: NaN last, -0.0 = +0.0). Floors: read
/// the keys, write the indices (8 B/key); read keys and values, write both
/// (16 B/key).
fn tour_wide_sort(dev: &Device, n: usize) -> Result<Vec<Row>, Error> {
    let keys: Vec<f32> = pseudo_random(n, 43)
        .map(|v| f32::from_bits((v >> 16) as u32))
        .collect();
    let perm: Vec<usize> = stable_perm(&keys, 1, false)
        .into_iter()
        .map(|i| i as usize)
        .collect();
    let x = dev.upload(&keys)?;
    dev.take_reports();
    let idx = argsort(dev, &x, SortOptions::default())?.download()?;
    let ok = idx.iter().zip(&perm).all(|(&i, &p)| i as usize == p);
    let mut out = vec![row(dev, "argsort f32 (indices only)".into(), n, ok, 8.0)];
    let values: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b1)).collect();
    let v = dev.upload(&values)?;
    dev.take_reports();
    let pairs = sort_pairs(dev, &x, &v, SortOptions::default())?;
    let (ks, vs) = (pairs.keys.download()?, pairs.values.download()?);
    let ok = perm
        .iter()
        .enumerate()
        .all(|(j, &p)| ks[j].to_bits() == keys[p].to_bits() && vs[j] == values[p]);
    out.push(row(
        dev,
        "sort_pairs f32 keys + u32 values".into(),
        n,
        ok,
        16.0,
    ));
    Ok(out)
}

/// TOPK (largest, sorted) of rows of logit-like keys (f16 or f32):
/// exactly the first k of the stable descending CPU sort. Floor: one read
/// of the keys.
fn tour_topk<K: TopkKey + Copy + Into<f64>>(
    dev: &Device,
    rows: usize,
    n: usize,
    k: usize,
    key: fn(f32) -> K,
) -> Result<Row, Error> {
    let keys: Vec<K> = pseudo_random(rows * n, 37)
        .map(|v| key((v % 30000) as f32 / 1000.0 - 15.0))
        .collect();
    let x = dev.upload(&keys)?;
    dev.take_reports();
    let got = topk(dev, Batch::rows(&x, rows)?, k, TopkOptions::default())?;
    let perm = stable_perm(&keys, rows, true);
    let want: Vec<i32> = (0..rows)
        .flat_map(|r| perm[r * n..r * n + k].iter().copied())
        .collect();
    let ok = got.indices.download()? == want;
    Ok(row(
        dev,
        format!("topk {} {rows}x{n} (k={k}, sorted)", K::DTYPE),
        rows * n,
        ok,
        std::mem::size_of::<K>() as f64,
    ))
}

/// Rows of probabilities with a clear nucleus at p = 0.9 (partial sums
/// step over p): 16 large entries (90% of the mass) among a tail of small
/// equal ones.
fn topp_probs(rows: usize, n: usize) -> Vec<f32> {
    let mut probs = Vec::with_capacity(rows * n);
    for r in 0..rows {
        let big: Vec<usize> = pseudo_random(16, r as u64 + 41)
            .map(|v| v as usize % n)
            .collect();
        let mut row: Vec<f32> = vec![0.1 / n as f32; n];
        for (j, &i) in big.iter().enumerate() {
            row[i] = 0.9 * (j as f32 + 1.0) / 136.0;
        }
        probs.extend(row);
    }
    probs
}

/// The Llama 3 reference on the CPU: stable descending sort, f64
/// cumulative mass, the inverse-transform draw in that order with
/// `uniform(seed, r, 0)`.
fn topp_reference(probs: &[f32], rows: usize, p: f32, seed: u64) -> (Vec<i32>, Vec<i32>) {
    let n = probs.len() / rows;
    (0..rows)
        .map(|r| {
            let row = &probs[r * n..(r + 1) * n];
            let mut perm: Vec<usize> = (0..n).collect();
            perm.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
            let (mut mass, mut kept) = (0.0f64, Vec::new());
            for i in perm {
                let w = row[i];
                if mass <= f64::from(p) {
                    kept.push((i, w));
                }
                mass += f64::from(w);
            }
            let total: f64 = kept.iter().map(|k| f64::from(k.1)).sum();
            let target = f64::from(uniform(seed, r as u64, 0)) * total;
            let mut cum = 0.0f64;
            let last = kept[kept.len() - 1].0;
            let token = kept
                .iter()
                .find(|k| {
                    cum += f64::from(k.1);
                    cum > target
                })
                .map_or(last, |k| k.0);
            // The kept count: the kept entries with mass.
            let count = kept.iter().filter(|k| k.1 > 0.0).count();
            (token as i32, count as i32)
        })
        .unzip()
}

/// TOPP sampling (p = 0.9) of probabilities of type `P` (`convert` rounds
/// to it, `back` reads it): the token of every row against the Llama 3
/// reference on the CPU. Floor: one read of the probabilities.
fn tour_topp<P: TopPProb>(
    dev: &Device,
    rows: usize,
    n: usize,
    convert: fn(f32) -> P,
    back: fn(P) -> f32,
) -> Result<Row, Error> {
    let probs: Vec<P> = topp_probs(rows, n).into_iter().map(convert).collect();
    let rounded: Vec<f32> = probs.iter().map(|&v| back(v)).collect();
    let x = dev.upload(&probs)?;
    dev.take_reports();
    let (p, seed) = (0.9f32, 7u64);
    let o = TopPOptions {
        p,
        top_k: None,
        min_p: 0.0,
        seed,
    };
    let got = top_p_sample(dev, Batch::rows(&x, rows)?, o)?.download()?;
    let ok = got == topp_reference(&rounded, rows, p, seed).0;
    Ok(row(
        dev,
        format!("top-p {} {rows}x{n} (p={p})", P::DTYPE),
        rows * n,
        ok,
        std::mem::size_of::<P>() as f64,
    ))
}

/// SOFTMAX of f32 logits at temperature 0.7 against the f64 softmax, each
/// probability within the bound of docs/algorithms.md ("Softmax"). Floor:
/// one read of the logits, one write of the probabilities.
fn tour_softmax(dev: &Device, rows: usize, n: usize) -> Result<Row, Error> {
    let logits: Vec<f32> = pseudo_random(rows * n, 51)
        .map(|v| (v % 8192) as f32 / 256.0 - 16.0)
        .collect();
    let x = dev.upload(&logits)?;
    dev.take_reports();
    let t = 0.7f32;
    let got = softmax(dev, Batch::rows(&x, rows)?, Temperature::All(t))?.download()?;
    let scale = f64::from(1.0 / t); // the kernel multiplies by the f32 reciprocal
    let u = 2f64.powi(-24);
    let chunks = (n as f64 / 4096.0).ceil();
    let ok = (0..rows).all(|r| {
        let z: Vec<f64> = logits[r * n..(r + 1) * n]
            .iter()
            .map(|&v| f64::from(v) * scale)
            .collect();
        let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let big = z.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let sum: f64 = z.iter().map(|v| (v - m).exp()).sum();
        let rel = u * ((6.0 + 2.0 * chunks) * (big + m.abs()) + 200.0 + 4.0 * chunks);
        z.iter().zip(&got[r * n..(r + 1) * n]).all(|(v, &y)| {
            let want = (v - m).exp() / sum;
            (f64::from(y) - want).abs() <= rel * want + 2f64.powi(-126)
        })
    });
    Ok(row(
        dev,
        format!("softmax f32 {rows}x{n} (T={t}, f32 out)"),
        rows * n,
        ok,
        8.0,
    ))
}

/// How a sampling row of the tour gives its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// The options, the same for every row.
    Options,
    /// Host slices per row.
    PerRow,
    /// Device buffers per row, through the stream form.
    OnDevice,
}

/// Sampling from f32 logits (temperature 0.7, top_k 50, top_p 0.9) against
/// the definition on the CPU: the k largest logits (stable), their f64
/// softmax at the temperature, the Llama 3 top-p draw over it. The logits
/// are those of rows with a clear nucleus (`topp_probs`, its tail spread,
/// ln(p) times the temperature). `per_row`: parameters per row
/// (`sample_logits_per_row`), row r greedy (temperature 0: the first
/// largest logit) when r % 4 = 0, else top_k 20, 50 or 100. `Form::OnDevice`:
/// those parameters on the device, through the stream form
/// (`sample_logits_on`, the uniforms made on the device; the launches of the
/// call alone). Floor: one read of the logits.
fn tour_sample_logits(dev: &Device, rows: usize, n: usize, form: Form) -> Result<Row, Error> {
    let per_row = form != Form::Options;
    let (t, k, p, seed) = (0.7f32, 50usize, 0.9f32, 11u64);
    // The tail entries of `topp_probs` are all equal: spread them by up to
    // 10% (distinct logits, as a model's are; all-equal tails are TOPK's
    // slowest case).
    let jitter = pseudo_random(rows * n, 53).map(|v| 1.0 + (v % 1000) as f32 / 10_000.0);
    let logits: Vec<f32> = topp_probs(rows, n)
        .iter()
        .zip(jitter)
        .map(|(&q, j)| (q * j).ln() * t)
        .collect();
    let x = dev.upload(&logits)?;
    // Row r keeps ks[r] logits (1: greedy).
    let ks: Vec<usize> = (0..rows)
        .map(|r| match (per_row, r % 4) {
            (false, _) => k,
            (true, 0) => 1,
            (true, _) => [20, 50, 100][r % 3],
        })
        .collect();
    let temps: Vec<f32> = ks.iter().map(|&k| if k == 1 { 0.0 } else { t }).collect();
    let top_ks: Vec<u32> = ks.iter().map(|&k| k as u32).collect();
    dev.take_reports();
    let o = LogitsSampling {
        temperature: t,
        top_k: Some(k),
        top_p: p,
        min_p: 0.0,
        seed,
    };
    let got = match form {
        Form::Options => sample_logits(dev, Batch::rows(&x, rows)?, o)?.download()?,
        Form::PerRow => {
            let each = LogitsPerRow {
                temperature: Some(&temps),
                top_k: Some(&top_ks),
                ..Default::default()
            };
            sample_logits_per_row(dev, Batch::rows(&x, rows)?, each, o)?.download()?
        }
        Form::OnDevice => {
            let k: Vec<i32> = ks.iter().map(|&k| k as i32).collect();
            let (t_dev, k_dev) = (dev.upload(&temps)?, dev.upload(&k)?);
            let each = LogitsRows {
                temperature: Some(&t_dev),
                top_k: Some(RowTopK {
                    k: &k_dev,
                    max: ks.iter().copied().max().unwrap_or(1),
                    some_off: false,
                }),
                ..Default::default()
            };
            let stream = dev.create_stream()?;
            let bytes = sample_logits_workspace_bytes::<f32>(dev, rows, n, &each, o)?;
            let mut workspace = Workspace::new(dev, bytes)?;
            let mut check = LogitsCheck::new(dev, rows)?;
            let mut tokens = dev.alloc::<i32>(rows)?;
            dev.take_reports();
            let batch = Batch::rows(&x, rows)?;
            sample_logits_on(
                &stream,
                batch,
                each,
                o,
                &mut tokens,
                &mut check,
                &mut workspace,
            )?;
            stream.synchronize()?;
            check.download()?;
            tokens.download()?
        }
    };
    let perm = stable_perm(&logits, rows, true);
    // The kept probabilities, rows padded with zeros to the widest k.
    let widest = ks.iter().copied().max().unwrap_or(k);
    let mut kept_probs = vec![0.0f32; rows * widest];
    for r in 0..rows {
        let z: Vec<f64> = perm[r * n..r * n + ks[r]]
            .iter()
            .map(|&i| f64::from(logits[r * n + i as usize]) / f64::from(t))
            .collect();
        let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = z.iter().map(|v| (v - m).exp()).sum();
        for (j, v) in z.iter().enumerate() {
            kept_probs[r * widest + j] = ((v - m).exp() / sum) as f32;
        }
    }
    let (positions, _) = topp_reference(&kept_probs, rows, p, seed);
    let want: Vec<i32> = (0..rows)
        .map(|r| perm[r * n + positions[r] as usize])
        .collect();
    let what = if per_row {
        "per row: 1/4 greedy, top_k 20/50/100".to_string()
    } else {
        format!("top_k={k}")
    };
    let name = match form {
        Form::Options => "sample_logits",
        Form::PerRow => "sample_logits_per_row",
        Form::OnDevice => "sample_logits_on",
    };
    Ok(row(
        dev,
        format!("{name} f32 {rows}x{n} (T={t}, {what}, top_p={p})"),
        rows * n,
        got == want,
        4.0,
    ))
}

/// TOPP sampling as a decode loop runs it: the stream-ordered form, outputs
/// and workspace made once, the seeded uniforms made on the device, three
/// steps on one stream; every step's tokens and kept counts against the
/// reference, and no device allocation in any step. The row's
/// launches are the last step's.
fn tour_topp_stream(dev: &Device, rows: usize, n: usize) -> Result<Row, Error> {
    let probs: Vec<f16> = topp_probs(rows, n).into_iter().map(f16::from_f32).collect();
    let rounded: Vec<f32> = probs.iter().map(|v| v.to_f32()).collect();
    let x = dev.upload(&probs)?;
    let (p, seed) = (0.9f32, 7u64);
    let o = TopPOptions {
        p,
        top_k: None,
        min_p: 0.0,
        seed,
    };
    let (want, want_counts) = topp_reference(&rounded, rows, p, seed);
    let stream = dev.create_stream()?;
    let mut tokens = dev.alloc::<i32>(rows)?;
    // With the number of entries each row kept.
    let mut check = TopPCheck::with_kept_count(dev, rows)?;
    let mut ws = Workspace::new(dev, top_p_sample_workspace_bytes::<f16>(dev, rows, n, o)?)?;
    let mut ok = true;
    let mut allocations = 0;
    for _ in 0..3 {
        let before = dev.allocation_count();
        dev.take_reports();
        top_p_sample_on(
            &stream,
            Batch::rows(&x, rows)?,
            o,
            TopPRows::default(), // uniform(seed, r, 0) on the device, p, min_p of options
            &mut tokens,
            &mut check,
            &mut ws,
        )?;
        stream.synchronize()?;
        check.download()?;
        ok &= tokens.download()? == want;
        ok &= check.kept_count().map(|c| c.download()).transpose()? == Some(want_counts.clone());
        allocations += dev.allocation_count() - before;
    }
    Ok(row(
        dev,
        format!("top-p f16 {rows}x{n} on a stream ({allocations} allocs/step)"),
        rows * n,
        ok && allocations == 0,
        2.0,
    ))
}

/// CSR SpMV (y = A x, f32 values) of a blocked sparse-attention matrix
/// against the f64 reference, within the documented bound (2d + 2 e_r/d +
/// 7) * 2^-24 * S_r; with `axpby`, y = 2 A x - 0.5 y (spmv_axpby) within
/// |alpha| times that plus 2^-23 (|alpha s| + |beta y|). Elements are
/// nonzeros; floor: value and column once (8 B) plus one 4-byte x read per
/// nonzero (and y read and written once with axpby).
fn tour_spmv(dev: &Device, rows: usize, block: usize, axpby: bool) -> Result<Row, Error> {
    let a = sparse_attention(AttentionPattern {
        rows,
        block,
        random_blocks: 4,
        seed: 3,
    });
    let x: Vec<f32> = pseudo_random(rows, 41)
        .map(|v| (v % 2048) as f32 / 1024.0 - 1.0)
        .collect();
    let csr = Csr::<f32>::upload(dev, &a)?;
    let xd = dev.upload(&x)?;
    let (alpha, beta) = if axpby { (2.0, -0.5) } else { (1.0, 0.0) };
    let old: Vec<f32> = pseudo_random(rows, 43)
        .map(|v| (v % 4096) as f32 / 512.0 - 4.0)
        .collect();
    let mut y = dev.upload(&old)?;
    dev.take_reports();
    if axpby {
        spmv_axpby(dev, alpha, &csr, &xd, beta, &mut y)?;
    } else {
        y = spmv(dev, &csr, &xd)?;
    }
    let y = y.download()?;
    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let (sums, bounds) = (a.reference_spmv(&x64), a.spmv_error_bounds(&x64));
    let (al, be) = (f64::from(alpha), f64::from(beta));
    let ok = (0..rows).all(|r| {
        let old = if axpby { f64::from(old[r]) } else { 0.0 };
        let want = al * sums[r] + be * old;
        let scaled = al.abs() * (sums[r].abs() + bounds[r]) + (be * old).abs();
        let bound = al.abs() * bounds[r] + 2f64.powi(-23) * scaled * (1.0 + 2f64.powi(-20));
        (f64::from(y[r]) - want).abs() <= bound
    });
    let (name, floor) = if axpby {
        ("spmv_axpby f32", 12.0 + 8.0 * rows as f64 / a.nnz() as f64)
    } else {
        ("spmv f32", 12.0)
    };
    Ok(row(
        dev,
        format!("{name} sparse-attention {rows} rows (b={block}, r=4)"),
        a.nnz(),
        ok,
        floor,
    ))
}

/// Modeled time of a COPY of `bytes` under each parameter set.
fn modeled_copy(
    dev: &Device,
    params: &[CostParams; 2],
    bytes: usize,
) -> Result<[f64; 2], Box<dyn std::error::Error>> {
    let x = dev.alloc_zeroed::<u8>((bytes / 2).max(32))?;
    dev.take_reports();
    copy(&x)?;
    let modeled = modeled(&dev.take_reports(), params, 0)
        .map_err(|e| format!("modeling the reference COPY of {bytes} bytes: {e}"))?;
    Ok(modeled.map(|(time_s, _)| time_s))
}

/// Modeled seconds and HBM bytes of `reports` (launches one after the other
/// on a stream) under each parameter set; zero when there is no launch.
fn modeled(
    reports: &[LaunchReport],
    params: &[CostParams; 2],
    n: u64,
) -> Result<[(f64, u64); 2], CostError> {
    let [nominal, conservative] = params.each_ref().map(|p| {
        let m = model_launches(reports, p, n)?;
        Ok::<_, CostError>(m.map_or((0.0, 0), |m| (m.time_s, m.hbm_bytes())))
    });
    Ok([nominal?, conservative?])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dev = Device::simulated(Soc::Ascend910B4)?;
    let p = dev.profile();
    println!(
        "ascend-scan tour on the simulated {} ({} AIC / {} AIV, UB {} KiB, L2 {} MiB)\n",
        p.name,
        p.cube_cores,
        p.vector_cores,
        p.ub_bytes / 1024,
        p.l2_bytes >> 20
    );
    let n = 1 << 20;
    let mut rows = vec![tour_copy(&dev, n * 2 + 13)?];
    rows.extend(tour_reduce(&dev, n + 7)?);
    rows.extend(tour_reduce_max_min(&dev, n + 7)?);
    rows.extend(tour_split(&dev, n + 7)?);
    rows.push(tour_multinomial(&dev, 1, n + 7, 1)?);
    rows.push(tour_multinomial(&dev, 96, 128_256, 1)?);
    rows.push(tour_multinomial(&dev, 4, 100_000, 64)?);
    rows.extend(tour_sort(&dev, 1, n + 7)?);
    rows.extend(tour_sort(&dev, 96, 1000)?);
    rows.extend(tour_sort(&dev, 2048, 256)?);
    rows.extend(tour_wide_sort(&dev, n / 4 + 7)?);
    rows.push(tour_topk(&dev, 96, 128_256, 50, f16::from_f32)?);
    rows.push(tour_topk(&dev, 96, 128_256, 50, |v| v)?);
    rows.push(tour_topp(&dev, 8, 128_256, f16::from_f32, f16::to_f32)?);
    rows.push(tour_topp(&dev, 8, 128_256, |v| v, |v| v)?);
    rows.push(tour_topp_stream(&dev, 8, 128_256)?);
    rows.push(tour_softmax(&dev, 96, 129_280)?);
    rows.push(tour_sample_logits(&dev, 96, 129_280, Form::Options)?);
    rows.push(tour_sample_logits(&dev, 96, 129_280, Form::PerRow)?);
    rows.push(tour_sample_logits(&dev, 96, 129_280, Form::OnDevice)?);
    rows.extend(tour_segmented(&dev, n + 7, 1_000)?);
    rows.extend(tour_segmented(&dev, n + 7, 100_000)?);
    rows.extend(tour_runs(&dev, n + 7, 100)?);
    rows.push(tour_spmv(&dev, 4096, 16, false)?);
    rows.push(tour_spmv(&dev, 4096, 16, true)?);
    for op in [ScanOp::Max, ScanOp::Min] {
        for half in [true, false] {
            for exclusive in [false, true] {
                rows.push(tour_opscan(&dev, n + 7, 1, op, half, exclusive)?);
            }
        }
    }
    for half in [true, false] {
        rows.push(tour_opscan(
            &dev,
            1024 * 1024,
            1024,
            ScanOp::Max,
            half,
            false,
        )?);
        rows.push(tour_opscan(
            &dev,
            16384 * 64,
            16384,
            ScanOp::Max,
            half,
            false,
        )?);
    }
    rows.push(tour_cummax(&dev, n + 7, 1, ScanOp::Max)?);
    rows.push(tour_cummax(&dev, 256 * 4099, 256, ScanOp::Min)?);
    let algorithms = [Algorithm::Auto]
        .into_iter()
        .chain([16, 32, 64, 128].map(|s| Algorithm::ScanU { s }))
        .chain([16, 32, 64].map(|s| Algorithm::ScanUL1 { s }))
        .chain([16, 32, 64, 128].map(|s| Algorithm::McScan { s }))
        .chain([16, 32, 64, 128].map(|s| Algorithm::ReduceThenScan { s }))
        .chain([16, 32, 64].map(|s| Algorithm::VecCumSum { s }));
    for algorithm in algorithms {
        for exclusive in [false, true] {
            rows.push(tour_scan_f16(&dev, 1, n + 7, algorithm, exclusive)?);
            // SCANUL1 is f16 only (int8 cube operands cannot carry row sums).
            if !matches!(algorithm, Algorithm::ScanUL1 { .. }) {
                rows.push(tour_scan_i8(&dev, 1, n + 7, algorithm, exclusive)?);
            }
        }
    }
    // The f32 path (vector cores) and the vector sum of f16 on request.
    for exclusive in [false, true] {
        rows.push(tour_scan_f32(&dev, 1, n + 7, exclusive)?);
        rows.push(tour_scan_f16(
            &dev,
            1,
            n + 7,
            Algorithm::VectorScan,
            exclusive,
        )?);
    }
    rows.push(tour_scan_f32(&dev, 300, 1001, false)?);
    // Batched scans: many short rows, a few long ones.
    for (batch, len, algorithm) in [
        (300, 1001, Algorithm::Auto),
        (300, 1001, Algorithm::ScanU { s: 64 }),
        (40, 16385, Algorithm::ScanU { s: 128 }),
        (40, 16385, Algorithm::ScanUL1 { s: 64 }),
    ] {
        rows.push(tour_scan_f16(&dev, batch, len, algorithm, false)?);
        if !matches!(algorithm, Algorithm::ScanUL1 { .. }) {
            rows.push(tour_scan_i8(&dev, batch, len, algorithm, true)?);
        }
    }

    // Both profiles replay the same traces; the conservative one (every
    // assumption at its pessimistic end, docs/cost-model.md) is the headline.
    let params = [CostParams::nominal(p), CostParams::conservative(p)];
    println!(
        "{:<48} {:>9} {:>4} {:>6} {:>10} {:>9} {:>10} {:>10} {:>9}",
        "operation",
        "n",
        "ok",
        "cores",
        "GM B/elem",
        "HBM B/el",
        "nominal us",
        "conserv us",
        "% COPY"
    );
    for r in &rows {
        // HBM bytes of the conservative profile (the headline).
        let [(nominal, _), (conservative, hbm)] = modeled(&r.reports, &params, r.n as u64)
            .map_err(|e| format!("modeling {}: {e}", r.op))?;
        let gm: u64 = r
            .reports
            .iter()
            .map(|l| l.gm_read_bytes + l.gm_write_bytes)
            .sum();
        let cores = r.reports.iter().map(|l| l.cores).max().unwrap_or(0);
        let [_, copy_time] = modeled_copy(&dev, &params, (r.floor * r.n as f64) as usize)?;
        println!(
            "{:<48} {:>9} {:>4} {:>6} {:>10.2} {:>9.2} {:>10.1} {:>10.1} {:>8.1}%",
            r.op,
            r.n,
            if r.ok { "yes" } else { "NO" },
            cores,
            gm as f64 / r.n as f64,
            hbm as f64 / r.n as f64,
            nominal * 1e6,
            conservative * 1e6,
            if conservative > 0.0 {
                100.0 * copy_time / conservative
            } else {
                0.0
            }
        );
    }
    let failed = rows.iter().filter(|r| !r.ok).count();
    println!(
        "\nTimes, HBM bytes and % of COPY are MODELED (cost model of the Ascend910B4 profile, \
         docs/cost-model.md): nominal and conservative profiles (every assumption at its \
         pessimistic end);\nHBM bytes and % of COPY are conservative; % of COPY compares with a \
         modeled COPY that moves the operation's minimal HBM traffic.\n\
         {} operations, {} checked against the CPU reference, {} failed",
        rows.len(),
        rows.len() - failed,
        failed
    );
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
