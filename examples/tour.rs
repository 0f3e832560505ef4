//! A tour of every operation on the simulated Ascend910B4: each result is
//! checked against a CPU reference, and the simulator's launch report gives
//! the GM traffic of each kernel.
use ascend_scan::{copy, reduce_sum, scan, Algorithm, Device, Error, ScanOptions, Soc};
use half::f16;

struct Row {
    op: String,
    n: usize,
    ok: bool,
    gm_bytes: u64,
    cores: u32,
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

fn traffic(dev: &Device) -> (u64, u32) {
    dev.take_reports().iter().fold((0, 0), |(b, c), r| {
        (b + r.gm_read_bytes + r.gm_write_bytes, c.max(r.cores))
    })
}

fn tour_reduce(dev: &Device, n: usize) -> Result<Vec<Row>, Error> {
    let xf: Vec<f16> = pseudo_random(n, 4)
        .map(|v| f16::from_f32((v % 2001) as f32 / 100.0 - 10.0))
        .collect();
    let (want, abs) = xf.iter().fold((0f64, 0f64), |(s, a), v| {
        (s + v.to_f64(), a + v.to_f64().abs())
    });
    dev.take_reports();
    let got = f64::from(reduce_sum(dev, &dev.upload(&xf)?)?);
    let ok = (got - want).abs() <= (n as f64 / 4096.0 + 4096.0 + 40.0) * 2f64.powi(-24) * abs;
    let (gm_bytes, cores) = traffic(dev);
    let f16_row = Row {
        op: "reduce sum f16->f32".into(),
        n,
        ok,
        gm_bytes,
        cores,
    };
    let xi: Vec<i8> = pseudo_random(n, 5).map(|v| v as i8).collect();
    let want: i64 = xi.iter().map(|&v| i64::from(v)).sum();
    dev.take_reports();
    let ok = i64::from(reduce_sum(dev, &dev.upload(&xi)?)?) == want;
    let (gm_bytes, cores) = traffic(dev);
    Ok(vec![
        f16_row,
        Row {
            op: "reduce sum i8->i32".into(),
            n,
            ok,
            gm_bytes,
            cores,
        },
    ])
}

fn tile_edge(a: Algorithm) -> u32 {
    match a {
        Algorithm::ScanU { s }
        | Algorithm::McScan { s }
        | Algorithm::ReduceThenScan { s }
        | Algorithm::VecCumSum { s } => s,
        Algorithm::Auto => 128,
    }
}

fn name(a: Algorithm) -> String {
    match a {
        Algorithm::ScanU { s } => format!("ScanU s={s}"),
        Algorithm::McScan { s } => format!("McScan s={s}"),
        Algorithm::ReduceThenScan { s } => format!("ReduceThenScan s={s}"),
        Algorithm::VecCumSum { s } => format!("VecCumSum s={s}"),
        Algorithm::Auto => "Auto".into(),
    }
}

fn tour_copy(dev: &Device, n: usize) -> Result<Row, Error> {
    let xs: Vec<u8> = pseudo_random(n, 1).map(|v| v as u8).collect();
    let x = dev.upload(&xs)?;
    dev.take_reports();
    let y = copy(&x)?;
    let ok = y.download()? == xs;
    let (gm_bytes, cores) = traffic(dev);
    Ok(Row {
        op: "copy u8".into(),
        n,
        ok,
        gm_bytes,
        cores,
    })
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
    let out = scan(
        dev,
        &x,
        ScanOptions {
            exclusive,
            algorithm,
            want_total: true,
        },
    )?;
    let y = out.values.download()?;
    let (mut acc, mut abs, mut ok) = (0f64, 0f64, true);
    for (i, v) in xs.iter().enumerate() {
        let before = acc;
        acc += v.to_f64();
        abs += v.to_f64().abs();
        let want = if exclusive { before } else { acc };
        // f32 accumulation bound (see tests/scan.rs).
        let s = f64::from(tile_edge(algorithm));
        let bound = (s + i as f64 / s + 2.0) * 2f64.powi(-24) * abs;
        ok &= (f64::from(y[i]) - want).abs() <= bound;
    }
    ok &= out
        .total
        .is_some_and(|t| (f64::from(t) - acc).abs() <= 1e-3 * abs.max(1.0));
    let (gm_bytes, cores) = traffic(dev);
    let kind = if exclusive { "exclusive" } else { "inclusive" };
    Ok(Row {
        op: format!("scan f16->f32 {kind} {}", name(algorithm)),
        n,
        ok,
        gm_bytes,
        cores,
    })
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
    ok &= out.total == Some(acc as i32);
    let (gm_bytes, cores) = traffic(dev);
    let kind = if exclusive { "exclusive" } else { "inclusive" };
    Ok(Row {
        op: format!("scan i8->i32 {kind} {}", name(algorithm)),
        n,
        ok,
        gm_bytes,
        cores,
    })
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
    println!(
        "{:<42} {:>9} {:>5} {:>6} {:>14} {:>8}",
        "operation", "n", "ok", "cores", "GM bytes", "B/elem"
    );
    for r in &rows {
        println!(
            "{:<42} {:>9} {:>5} {:>6} {:>14} {:>8.2}",
            r.op,
            r.n,
            if r.ok { "yes" } else { "NO" },
            r.cores,
            r.gm_bytes,
            r.gm_bytes as f64 / r.n as f64
        );
    }
    let failed = rows.iter().filter(|r| !r.ok).count();
    println!(
        "\n{} operations, {} checked against the CPU reference, {} failed",
        rows.len(),
        rows.len() - failed,
        failed
    );
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
