//! Modeled cost of the cube scans on finite inputs and with one infinity per
//! tile (docs/algorithms.md, "Non-finite inputs"): the rescans of the
//! s-rows (tiles for SCANUL1) that hold a non-finite value.
//!
//! `cargo run --release --example nonfinite_cost [LOG2_N]` (default 20).
use ascend_scan::{scan, Algorithm, Batch, Device, ScanOptions, Soc};
use ascendc_sim::{model_launch, CostParams};
use half::f16;

fn modeled_us(
    dev: &Device,
    params: &CostParams,
    xs: &[f16],
    rows: usize,
    algorithm: Algorithm,
) -> f64 {
    let x = dev.upload(xs).expect("upload");
    dev.take_reports();
    let options = ScanOptions {
        algorithm,
        ..Default::default()
    };
    scan(dev, Batch::rows(&x, rows).expect("rows"), options).expect("scan");
    dev.take_reports()
        .iter()
        .map(|r| {
            model_launch(r, params, xs.len() as u64)
                .expect("model")
                .time_s
                * 1e6
        })
        .sum()
}

fn main() {
    let log2: u32 = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("LOG2_N"))
        .unwrap_or(20);
    let n = 1usize << log2;
    let dev = Device::simulated(Soc::Ascend910B4).expect("device");
    let params = CostParams::from_profile(dev.profile());
    let finite: Vec<f16> = (0..n)
        .map(|i| f16::from_f32(((i * 37) % 256) as f32 / 64.0 - 2.0))
        .collect();
    println!("n = 2^{log2} f16 -> f32, modeled on Ascend910B4 (us)");
    println!(
        "{:<28} {:>12} {:>16}",
        "algorithm", "finite", "one inf / tile"
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
        let mut spiked = finite.clone();
        // One +inf in every tile (of every row), at a varying column.
        for (k, tile) in spiked.chunks_mut(l).enumerate() {
            let at = (k * 7919 + 13) % tile.len();
            tile[at] = f16::INFINITY;
        }
        let a = modeled_us(&dev, &params, &finite, rows, algorithm);
        let b = modeled_us(&dev, &params, &spiked, rows, algorithm);
        println!(
            "{:<28} {a:>12.1} {b:>16.1}",
            format!("{algorithm} rows={rows}")
        );
    }
}
