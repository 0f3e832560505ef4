//! A kernel library built with `--run-mode sim` on the fake toolkit of
//! xtask/tests/fake_cann, loaded against the toolkit's CA-model runtime
//! (tools/simulator/<SoC>/lib/libruntime_camodel.so) the way CANN's samples
//! run one: the CA model comes first in the process's global symbol scope,
//! so the ACL library's runtime calls reach it and not lib64/libruntime.so.
//! A test binary of its own: a process holds one CANN runtime
//! (xtask/tests/cann_path.rs holds the npu-mode one).
mod fake_cann;

use std::path::PathBuf;
use std::sync::OnceLock;

use ascend_scan::{scan, BackendKind, Device, Error, ScanOptions};
use fake_cann::{scratch, Fake};
use half::f16;
use xtask::cann::{Manifest, RunMode};

fn fake() -> &'static Fake {
    static FAKE: OnceLock<Fake> = OnceLock::new();
    FAKE.get_or_init(|| fake_cann::build("fake-sim", RunMode::Sim))
}

fn sim_device() -> Device {
    let d = Device::npu_with_kernels(&fake().outcome_manifest, 0).expect("the CA model loads");
    assert_eq!(d.backend(), BackendKind::Npu);
    d
}

#[test]
fn a_sim_library_runs_on_the_ca_model() {
    let f = fake();
    assert_eq!(f.manifest.run_mode, "sim");
    let lists = std::fs::read_to_string(f.out.join("CMakeLists.txt")).unwrap();
    assert!(lists.contains("set(RUN_MODE \"sim\""), "{lists}");

    let dev = sim_device();
    let reason = dev.backend_reason();
    assert!(reason.contains("run mode sim"), "{reason}");
    // The CA model was opened first, from the toolkit's simulator directory.
    let camodel = f
        .toolkit
        .join("tools/simulator/Ascend910B4/lib/libruntime_camodel.so");
    let at = |s: &str| {
        reason
            .find(s)
            .unwrap_or_else(|| panic!("{s} not in {reason}"))
    };
    assert!(
        at(&camodel.display().to_string()) < at("libascendcl.so"),
        "{reason}"
    );
    assert!(reason.contains("libnpu_drv.so"), "{reason}");

    let xs: Vec<f16> = (0..3000)
        .map(|i| f16::from_f32((i % 7) as f32 - 3.0))
        .collect();
    let out = scan(&dev, &dev.upload(&xs).unwrap(), ScanOptions::default()).unwrap();
    let y: Vec<f32> = out.values.download().unwrap();
    let mut acc = 0f32;
    for (i, (x, got)) in xs.iter().zip(&y).enumerate() {
        acc += x.to_f32();
        assert_eq!(*got, acc, "y[{i}]");
    }
}

#[test]
fn acl_calls_reach_the_ca_model_not_the_hardware_runtime() {
    // lib64/libruntime.so (the "hardware" runtime) has a device 1 (an
    // Ascend910B2, refused as a SoC mismatch in xtask/tests/cann_path.rs); the CA
    // model models device 0 only. aclrtSetDevice(1) failing shows that the
    // ACL library's calls went to the CA model.
    sim_device();
    match Device::npu_with_kernels(&fake().outcome_manifest, 1).unwrap_err() {
        Error::Runtime { call, code, .. } => {
            assert_eq!((call, code), ("aclrtSetDevice", 107001));
        }
        e => panic!("expected aclrtSetDevice to fail on the CA model, got {e}"),
    }
}

/// A copy of the fake's manifest, changed by `edit`, in its own directory.
fn edited_manifest(name: &str, edit: impl FnOnce(&mut Manifest)) -> PathBuf {
    fake_cann::edited_manifest(&fake().manifest, name, edit)
}

#[test]
fn a_toolkit_without_the_ca_model_is_refused() {
    // The same build, but its toolkit has no tools/simulator/.
    let bare = scratch("fake-sim-bare-toolkit");
    std::fs::create_dir_all(bare.join("lib64")).unwrap();
    let path = edited_manifest("sim-no-camodel", |m| m.toolkit = bare.clone());
    match Device::npu_with_kernels(&path, 0).unwrap_err() {
        Error::KernelLibrary { reason, .. } => {
            assert!(reason.contains("libruntime_camodel.so"), "{reason}");
            assert!(
                reason.contains("tools/simulator/Ascend910B4/lib"),
                "{reason}"
            );
        }
        e => panic!("expected KernelLibrary, got {e}"),
    }
}

#[test]
fn one_cann_runtime_per_process() {
    // Once the CA model is in the global scope, an npu-mode library of the
    // same toolkit cannot get the hardware runtime any more.
    sim_device();
    let path = edited_manifest("sim-then-npu", |m| m.run_mode = "npu".into());
    match Device::npu_with_kernels(&path, 0).unwrap_err() {
        Error::KernelLibrary { reason, .. } => {
            assert!(reason.contains("needs a process of its own"), "{reason}")
        }
        e => panic!("expected KernelLibrary, got {e}"),
    }
}
