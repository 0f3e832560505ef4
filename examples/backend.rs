//! Which backend the default device uses, and why; then one scan on it,
//! checked against the CPU.
//!
//! ```sh
//! cargo run --release --example backend                                   # target/cann/manifest.json, else the simulator
//! ASCEND_SCAN_KERNELS=target/cann/Ascend910B4-npu cargo run --release --example backend
//! ```
use ascend_scan::{scan, Device, ScanOptions};
use half::f16;

fn main() -> Result<(), ascend_scan::Error> {
    let dev = Device::default_device()?;
    println!(
        "{:?} {}: {}",
        dev.backend(),
        dev.soc(),
        dev.backend_reason()
    );
    let xs: Vec<f16> = (0..4096).map(|i| f16::from_f32((i % 7) as f32)).collect();
    let out = scan(&dev, &dev.upload(&xs)?, ScanOptions::default())?;
    let y = out.values.download()?;
    let mut acc = 0f32;
    for (i, (x, got)) in xs.iter().zip(&y).enumerate() {
        acc += x.to_f32();
        assert_eq!(*got, acc, "y[{i}]");
    }
    println!("scan of {} f16 values matches the CPU", xs.len());
    Ok(())
}
