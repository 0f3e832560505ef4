//! A short run of every fuzz target (`fuzz/`) on stable Rust: a few hundred
//! deterministic pseudo-random inputs per family, then every committed
//! corpus and regression input (`fuzz/corpus/<target>/`,
//! `fuzz/regressions/<target>/`). The families are `testkit::fuzz`'s,
//! the ones the fuzz targets run.

use std::path::Path;

use testkit::fuzz;

/// Inputs per family: enough for every dtype, op and error branch, small
/// enough for a few seconds each on the simulator.
const CASES: usize = 300;

fn committed_inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut out = Vec::new();
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        for e in entries {
            let path = e.expect("directory entry").path();
            if path.is_file() {
                let bytes = std::fs::read(&path).expect("readable input");
                out.push((path.display().to_string(), bytes));
            }
        }
    }
    out.sort();
    out
}

fn run(target: &str, seed: u64) {
    let (_, family) = fuzz::FAMILIES
        .iter()
        .find(|(name, _)| *name == target)
        .expect("a family of that name");
    let cases = std::env::var("FUZZ_SMOKE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    fuzz::smoke(*family, cases, seed);
    for (path, bytes) in committed_inputs(target) {
        if let Err(e) = std::panic::catch_unwind(|| family(&bytes)) {
            panic!("{path} failed: {}", fuzz::panic_text(&*e));
        }
    }
}

#[test]
fn scan_family() {
    run("scan_family", 1);
}

#[test]
fn split_family() {
    run("split_family", 2);
}

#[test]
fn sort_family() {
    run("sort_family", 3);
}

#[test]
fn sampling() {
    run("sampling", 4);
}

#[test]
fn segmented() {
    run("segmented", 5);
}

#[test]
fn spmv() {
    run("spmv", 6);
}

/// Regression of a fuzz finding (scan_family, input
/// `fuzz/regressions/scan_family/rtscan-batched-exclusive`, minimised): the
/// exclusive f16 scan of [2^-10, 1, 60000] must end with 2^-10 + 1 (exact
/// in f32). MCSCAN and RTSCAN used to form the exclusive scan as the
/// inclusive one minus x[i] in f32, which rounds 60000 + 1 + 2^-10 and gave
/// back 1.0; they now store the inclusive values one element later
/// (`ExclusiveStore` in templates/blocks/ascend_scan_blocks.h).
#[test]
fn exclusive_mcscan_and_rtscan_cancel() {
    use ascend_scan::{scan, Algorithm, Device, ScanOptions};
    use half::f16;
    let dev = Device::default_device().expect("simulated device");
    let x = dev
        .upload(&[2f32.powi(-10), 1.0, 60000.0].map(f16::from_f32))
        .expect("upload");
    for algorithm in [
        Algorithm::McScan { s: 16 },
        Algorithm::ReduceThenScan { s: 16 },
    ] {
        let options = ScanOptions {
            exclusive: true,
            algorithm,
            ..Default::default()
        };
        let y = scan(&dev, &x, options)
            .expect("scan")
            .values
            .download()
            .expect("download");
        let tiny = 2f32.powi(-10);
        assert_eq!(y, [0.0, tiny, 1.0 + tiny], "{algorithm}");
    }
}

/// Regression of a fuzz finding (spmv, input
/// `fuzz/regressions/spmv/no-rows-row-ptr-unchecked`, one byte): a matrix
/// without rows (m = 0) whose single row_ptr entry is not 0 (nor nnz).
/// `spmv`'s docs list `row_ptr[0] != 0` and `row_ptr[m] != nnz` among the
/// host checks made before any launch; src/spmv.rs used to return the empty
/// y for m = 0 before making them, so `row_ptr = [5]` (or `[0]` with
/// nonzeros) gave `Ok`.
#[test]
fn spmv_without_rows_checks_row_ptr() {
    use ascend_scan::{spmv, Csr, Device, Error};
    let dev = Device::default_device().expect("simulated device");
    let x = dev.upload(&[1.0f32; 3]).expect("upload");
    for (values, cols, row_ptr) in [
        (&[][..], &[][..], &[5][..]),
        (&[1.0f32, 2.0][..], &[0, 1][..], &[0][..]),
    ] {
        let a = Csr::new(
            dev.upload(values).expect("upload"),
            dev.upload(cols).expect("upload"),
            dev.upload(row_ptr).expect("upload"),
            (0, 3),
        )
        .expect("lengths are consistent");
        let r = spmv(&dev, &a, &x);
        assert!(
            matches!(
                r,
                Err(Error::InvalidArgument {
                    name: "row_ptr",
                    ..
                })
            ),
            "row_ptr {row_ptr:?} with {} nonzeros: {r:?}",
            values.len()
        );
    }
}
