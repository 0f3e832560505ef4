//! Modeled cost of the non-finite corrections (docs/algorithms.md,
//! "Non-finite inputs") on finite inputs and with one infinity per tile: the
//! rescans of the cube scans' s-rows (tiles for SCANUL1), SEGSCAN's chunks
//! and, for SpMV, the rows after the first non-finite product.
//!
//! `cargo run --release --example nonfinite_cost [LOG2_N]` (default 20).
use ascend_scan::matrices::power_law;
use ascend_scan::{
    model_launches, scan, segmented_scan, segmented_sum, spmv, Algorithm, Batch, CostParams, Csr,
    Device, RevSpec, ScanOptions, SegScanAlgorithm, SegScanOptions, SegSumOptions, Segments, Soc,
};
use half::f16;

/// Modeled microseconds (nominal, conservative) of the launches `run` makes.
fn modeled_us(dev: &Device, params: &[CostParams; 2], n: usize, run: impl FnOnce()) -> [f64; 2] {
    dev.take_reports();
    run();
    let reports = dev.take_reports();
    params.each_ref().map(|p| {
        model_launches(&reports, p, n as u64)
            .expect("model")
            .map_or(0.0, |m| m.time_s * 1e6)
    })
}

fn print_row(what: &str, finite: [f64; 2], spiked: [f64; 2]) {
    println!(
        "{what:<46} {:>10.1} {:>10.1} {:>12.1} {:>12.1}",
        finite[0], finite[1], spiked[0], spiked[1]
    );
}

/// `xs` with one +inf in every `tile` elements, at a varying position.
fn one_inf_per(xs: &[f16], tile: usize) -> Vec<f16> {
    let mut spiked = xs.to_vec();
    for (k, t) in spiked.chunks_mut(tile).enumerate() {
        let at = (k * 7919 + 13) % t.len();
        t[at] = f16::INFINITY;
    }
    spiked
}

fn main() {
    let log2: u32 = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("LOG2_N"))
        .unwrap_or(20);
    let n = 1usize << log2;
    let dev = Device::simulated(Soc::Ascend910B4).expect("device");
    let params = [
        CostParams::nominal(dev.profile()),
        CostParams::conservative(dev.profile()),
    ];
    let finite: Vec<f16> = (0..n)
        .map(|i| f16::from_f32(((i * 37) % 256) as f32 / 64.0 - 2.0))
        .collect();
    println!("n = 2^{log2} f16 -> f32, modeled on Ascend910B4 (us; nominal, conservative)");
    println!(
        "{:<46} {:>21} {:>25}",
        "operation", "finite", "one inf per tile"
    );
    for (algorithm, rows) in [
        (Algorithm::ScanU { s: 128 }, 1),
        (Algorithm::ScanU { s: 64 }, 1),
        (Algorithm::ScanU { s: 128 }, 64),
        (Algorithm::ScanUL1 { s: 64 }, 1),
        (Algorithm::ScanUL1 { s: 64 }, 64),
        (Algorithm::McScan { s: 128 }, 1),
        (Algorithm::ReduceThenScan { s: 128 }, 1),
        (Algorithm::VecCumSum { s: 64 }, 1),
    ] {
        let l = (algorithm.tile_edge().expect("a tile edge") as usize).pow(2);
        let [a, b] = [finite.clone(), one_inf_per(&finite, l)].map(|xs| {
            let x = dev.upload(&xs).expect("upload");
            let options = ScanOptions {
                algorithm,
                ..Default::default()
            };
            modeled_us(&dev, &params, n, || {
                scan(&dev, Batch::rows(&x, rows).expect("rows"), options).expect("scan");
            })
        });
        print_row(&format!("{algorithm} rows={rows}"), a, b);
    }
    // Segments of 100 elements; a "tile" is SEGSCAN's 4096-element chunk.
    let flags: Vec<i8> = (0..n).map(|i| i8::from(i % 100 == 0)).collect();
    let flags = dev.upload(&flags).expect("upload");
    for algorithm in [
        SegScanAlgorithm::SegScan {
            revspec: RevSpec::Vector,
        },
        SegScanAlgorithm::SegScan {
            revspec: RevSpec::Simple,
        },
    ] {
        let [a, b] = [finite.clone(), one_inf_per(&finite, 4096)].map(|xs| {
            let x = dev.upload(&xs).expect("upload");
            let options = SegScanOptions {
                exclusive: false,
                algorithm,
            };
            modeled_us(&dev, &params, n, || {
                segmented_scan(&dev, &x, Segments::Flags(&flags), options).expect("segscan");
            })
        });
        print_row(&format!("segmented_scan {algorithm:?} 1%"), a, b);
    }
    let [a, b] = [finite.clone(), one_inf_per(&finite, 4096)].map(|xs| {
        let x = dev.upload(&xs).expect("upload");
        modeled_us(&dev, &params, n, || {
            segmented_sum(&dev, &x, Segments::Flags(&flags), SegSumOptions::default())
                .expect("segsum");
        })
    });
    print_row("segmented_sum Auto 1%", a, b);
    // SpMV of a power-law matrix with about n nonzeros; x gets one inf per
    // 4096 columns, then only x[0] (every later row is summed again).
    let cols = n / 16;
    let a = power_law(cols, cols, 1.5, 7);
    let csr = Csr::<f16>::upload(&dev, &a).expect("upload");
    let x: Vec<f16> = finite[..cols].to_vec();
    let mut first = x.clone();
    first[0] = f16::INFINITY;
    let [f, s, o] = [x.clone(), one_inf_per(&x, 4096), first].map(|xs| {
        let x = dev.upload(&xs).expect("upload");
        modeled_us(&dev, &params, a.nnz(), || {
            spmv(&dev, &csr, &x).expect("spmv");
        })
    });
    let what = format!("spmv power-law {cols} rows, {} nnz", a.nnz());
    print_row(&what, f, s);
    print_row("  (one inf, x[0])", f, o);
}
