//! A tour of every operation on the simulated Ascend910B4: each result is
//! checked against a CPU reference, and the simulator's trace of each launch
//! is replayed by the cost model for a MODELED time, HBM traffic and % of a
//! modeled COPY that moves the operation's minimal traffic.
use ascend_scan::{
    copy, model_launch, reduce, reduce_sum, scan, Algorithm, Batch, CostParams, Device, Error,
    LaunchReport, ScanOp, ScanOptions, Soc,
};
use half::f16;

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

fn tour_scan_f16(
    dev: &Device,
    n: usize,
    algorithm: Algorithm,
    exclusive: bool,
) -> Result<Row, Error> {
    let xs: Vec<f16> = pseudo_random(n, 2)
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
    let out = scan(dev, &x, options)?;
    let y = out.values.download()?;
    let s = f64::from(algorithm.tile_edge().unwrap_or(128));
    let (mut acc, mut abs, mut ok) = (0f64, 0f64, true);
    for (i, v) in xs.iter().enumerate() {
        let before = acc;
        acc += v.to_f64();
        abs += v.to_f64().abs();
        let want = if exclusive { before } else { acc };
        // f32 accumulation bound (see tests/scan.rs).
        let bound = (s + i as f64 / s + 2.0) * 2f64.powi(-24) * abs;
        ok &= (f64::from(y[i]) - want).abs() <= bound;
    }
    ok &= out
        .total()
        .is_some_and(|t| (f64::from(t) - acc).abs() <= 1e-3 * abs.max(1.0));
    let kind = if exclusive { "exclusive" } else { "inclusive" };
    Ok(row(
        dev,
        format!("scan f16->f32 {kind} {}", algorithm),
        n,
        ok,
        6.0,
    ))
}

fn tour_scan_i8(
    dev: &Device,
    n: usize,
    algorithm: Algorithm,
    exclusive: bool,
) -> Result<Row, Error> {
    let xs: Vec<i8> = pseudo_random(n, 3).map(|v| v as i8).collect();
    let x = dev.upload(&xs)?;
    dev.take_reports();
    let out = scan(
        dev,
        &x,
        ScanOptions {
            exclusive,
            algorithm,
            want_total: true,
            ..Default::default()
        },
    )?;
    let y = out.values.download()?;
    let mut acc = 0i64;
    let mut ok = true;
    for (i, v) in xs.iter().enumerate() {
        let before = acc;
        acc += i64::from(*v);
        ok &= i64::from(y[i]) == if exclusive { before } else { acc };
    }
    ok &= out.total() == Some(acc as i32);
    let kind = if exclusive { "exclusive" } else { "inclusive" };
    Ok(row(
        dev,
        format!("scan i8->i32 {kind} {}", algorithm),
        n,
        ok,
        5.0,
    ))
}

fn tour_reduce_max_min(dev: &Device, n: usize) -> Result<Vec<Row>, Error> {
    let xf: Vec<f16> = pseudo_random(n, 6)
        .map(|v| f16::from_bits(v as u16 & 0x7bff))
        .collect();
    let xi: Vec<i8> = pseudo_random(n, 7).map(|v| v as i8).collect();
    let (f, i) = (dev.upload(&xf)?, dev.upload(&xi)?);
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

/// Modeled seconds of a COPY moving `bytes` of HBM traffic (read + write).
fn modeled_copy(dev: &Device, params: &CostParams, bytes: usize) -> Result<f64, Error> {
    let x = dev.alloc_zeroed::<u8>((bytes / 2).max(32))?;
    dev.take_reports();
    copy(&x)?;
    let reports = dev.take_reports();
    Ok(reports
        .iter()
        .filter_map(|r| model_launch(r, params, 0).ok())
        .map(|m| m.time_s)
        .sum())
}

fn main() -> Result<(), Error> {
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
    let algorithms = [16, 32, 64, 128]
        .map(|s| Algorithm::ScanU { s })
        .into_iter()
        .chain([16, 32, 64, 128].map(|s| Algorithm::McScan { s }))
        .chain([16, 32, 64, 128].map(|s| Algorithm::ReduceThenScan { s }))
        .chain([16, 32, 64].map(|s| Algorithm::VecCumSum { s }));
    for algorithm in algorithms {
        for exclusive in [false, true] {
            rows.push(tour_scan_f16(&dev, n + 7, algorithm, exclusive)?);
            rows.push(tour_scan_i8(&dev, n + 7, algorithm, exclusive)?);
        }
    }

    let params = CostParams::from_profile(p);
    println!(
        "{:<42} {:>9} {:>4} {:>6} {:>10} {:>9} {:>9} {:>13}",
        "operation", "n", "ok", "cores", "GM B/elem", "HBM B/el", "model us", "% model COPY"
    );
    for r in &rows {
        let models: Vec<_> = r
            .reports
            .iter()
            .filter_map(|l| model_launch(l, &params, r.n as u64).ok())
            .collect();
        let time: f64 = models.iter().map(|m| m.time_s).sum();
        let hbm: u64 = models.iter().map(|m| m.hbm_bytes()).sum();
        let gm: u64 = r
            .reports
            .iter()
            .map(|l| l.gm_read_bytes + l.gm_write_bytes)
            .sum();
        let cores = r.reports.iter().map(|l| l.cores).max().unwrap_or(0);
        let copy_time = modeled_copy(&dev, &params, (r.floor * r.n as f64) as usize)?;
        println!(
            "{:<42} {:>9} {:>4} {:>6} {:>10.2} {:>9.2} {:>9.1} {:>12.1}%",
            r.op,
            r.n,
            if r.ok { "yes" } else { "NO" },
            cores,
            gm as f64 / r.n as f64,
            hbm as f64 / r.n as f64,
            time * 1e6,
            if time > 0.0 {
                100.0 * copy_time / time
            } else {
                0.0
            }
        );
    }
    let failed = rows.iter().filter(|r| !r.ok).count();
    println!(
        "\nTimes, HBM bytes and % of COPY are MODELED (cost model of the Ascend910B4 profile, \
         docs/cost-model.md);\n% of COPY compares with a modeled COPY that moves the operation's \
         minimal HBM traffic.\n{} operations, {} checked against the CPU reference, {} failed",
        rows.len(),
        rows.len() - failed,
        failed
    );
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
