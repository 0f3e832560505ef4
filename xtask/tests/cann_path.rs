//! The CANN path without an NPU: a fake toolkit made by the test (see
//! xtask/tests/fixtures/) goes through `cargo xtask build-kernels` (the xtask
//! library function the command runs), and the kernel library it builds is
//! loaded at run time with the fake libascendcl.so and libruntime.so (the
//! project simulator's runtime built as shared libraries, see
//! xtask/tests/fake_cann) by `Device::npu_with_kernels`.
//!
//! What is real here: the toolkit discovery, the generated CMake project
//! (interpreted by xtask/tests/fixtures/fake_cmake.py, since CI has no cmake), the
//! calls of `ascendc_library` & co. (recorded by the fake ascendc.cmake), the
//! manifest, the link shape of the kernel library (runtime symbols undefined,
//! bound at load time, only the PUBLIC dependencies as DT_NEEDED, as the
//! public legacy CMake module links it), the dynamic loading with the
//! runtime in the global scope, symbol resolution, SoC and hash checks,
//! per-thread device binding and error mapping of src/ffi.rs. What is fake:
//! the device compiler (bisheng = g++ against the simulator headers) and the
//! runtime (the simulator, not an NPU). xtask/tests/cann_sim.rs does the same for
//! a `--run-mode sim` library and the CA-model runtime.
mod fake_cann;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ascend_scan::{reduce_sum, scan, sort, BackendKind, Device, Error, ScanOptions, SortOptions};
use fake_cann::{inspect, root, scratch, Fake};
use half::f16;
use xtask::cann::{BuildOptions, Manifest, Outcome, RunMode};

/// The fake toolkit and its npu-mode build, once per process.
fn fake() -> &'static Fake {
    static FAKE: OnceLock<Fake> = OnceLock::new();
    FAKE.get_or_init(|| fake_cann::build("fake", RunMode::Npu))
}

fn kernel_sources() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("kernels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn build_kernels_drives_cmake_and_ascendc_library() {
    let f = fake();
    let names = kernel_sources();
    assert!(names.len() > 10);

    // The generated project.
    let lists = std::fs::read_to_string(f.out.join("CMakeLists.txt")).unwrap();
    for want in [
        "set(SOC_VERSION \"Ascend910B4\"",
        "set(RUN_MODE \"npu\"",
        "set(ASCEND_KERNEL_LAUNCH_ONLY ON)",
        "ascendc_library(ascend_scan_kernels SHARED",
        "ascendc_compile_definitions(ascend_scan_kernels PRIVATE ASCENDC_DUMP=0)",
        "/compiler/tikcpp/ascendc_kernel_cmake\"",
        "/tools/tikcpp/ascendc_kernel_cmake\"",
        "-linux/tikcpp/ascendc_kernel_cmake\"",
        "message(FATAL_ERROR \"ascendc.cmake not found",
    ] {
        assert!(
            lists.contains(want),
            "CMakeLists.txt lacks {want}:\n{lists}"
        );
    }
    for n in &names {
        assert!(
            lists.contains(&format!("kernels/{n}.cpp\"")),
            "CMakeLists.txt lacks {n}"
        );
    }
    // The kernels' workspace pointer is the user workspace: the project does
    // not ask the framework to manage a system workspace (see src/ffi.rs).
    assert!(!lists.contains("HAVE_WORKSPACE"));

    // cmake: configure then build, in the output directory.
    let cmake_log = std::fs::read_to_string(f.log.join("cmake.log")).unwrap();
    let calls: Vec<Vec<String>> = cmake_log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let out = f.out.to_string_lossy().into_owned();
    let build = f.out.join("build").to_string_lossy().into_owned();
    assert_eq!(
        calls[0],
        ["-S", &out, "-B", &build, "-DCMAKE_BUILD_TYPE=Release"],
        "configure call"
    );
    assert_eq!(
        calls[1][..2],
        ["--build".to_owned(), build.clone()],
        "build call"
    );
    assert_eq!(calls.len(), 2);

    // What the toolkit's module was asked to do.
    let recorded = std::fs::read_to_string(f.out.join("build/fake_cann_calls.txt")).unwrap();
    let module_dir = f.toolkit.join("compiler/tikcpp/ascendc_kernel_cmake");
    assert!(recorded.contains(&format!(
        "include ascendc.cmake from {}",
        module_dir.display()
    )));
    let lib_call = recorded
        .lines()
        .find(|l| l.starts_with("ascendc_library "))
        .expect("ascendc_library was called");
    for want in [
        "target=ascend_scan_kernels",
        "kind=SHARED",
        "SOC_VERSION=Ascend910B4",
        "RUN_MODE=npu",
        "ASCEND_KERNEL_LAUNCH_ONLY=ON",
        &format!("ASCEND_CANN_PACKAGE_PATH={}", f.toolkit.display()),
    ] {
        assert!(lib_call.contains(want), "{want} not in {lib_call}");
    }
    let sources = lib_call.split("sources=").nth(1).unwrap();
    assert_eq!(sources.split(';').count(), names.len(), "{sources}");
    assert!(recorded
        .contains("ascendc_compile_definitions target=ascend_scan_kernels PRIVATE ASCENDC_DUMP=0"));
    assert!(recorded.contains("ascendc_include_directories target=ascend_scan_kernels PRIVATE"));

    // The device compiler ran once per kernel (+ the simulator's entries).
    let bisheng = std::fs::read_to_string(f.log.join("bisheng.log")).unwrap();
    for n in &names {
        assert!(
            bisheng.contains(&format!("kernels/{n}.cpp -o")),
            "bisheng never compiled {n}"
        );
    }
    assert!(bisheng.lines().all(|l| l.contains("-Werror")));

    // The manifest.
    let m = &f.manifest;
    assert_eq!(f.outcome_manifest, f.out.join("manifest.json"));
    let on_disk: Manifest =
        serde_json::from_str(&std::fs::read_to_string(&f.outcome_manifest).unwrap()).unwrap();
    assert_eq!(&on_disk, m);
    assert_eq!(m.soc, "Ascend910B4");
    assert_eq!(m.run_mode, "npu");
    assert_eq!(m.cann_version.as_deref(), Some("8.0.RC1.fake"));
    assert_eq!(m.toolkit, f.toolkit);
    assert_eq!(m.library, f.out.join("libascend_scan_kernels.so"));
    assert!(m.library.is_file());
    let mut kernels = m.kernels.clone();
    kernels.sort();
    assert_eq!(kernels, names);
    for s in &m.sources {
        let bytes = std::fs::read(root().join(&s.path)).unwrap();
        use sha2::Digest;
        let hex: String = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(s.sha256, hex, "{}", s.path);
    }
    assert!(m
        .sources
        .iter()
        .any(|s| s.path == "kernels/ascend_scan_tiling.h"));
    assert!(f.cmake.is_file());
}

/// The kernel library is linked as `ascendc_library` links its SHARED
/// target (asc-devkit cmake/asc/legacy_modules/function.cmake and
/// host_intf.cmake): the runtime is an INTERFACE dependency, so the library
/// does not name it, its calls into the runtime are undefined symbols, and
/// `-z now` binds them all when the library is loaded.
#[test]
fn the_kernel_library_leaves_the_runtime_to_the_loader() {
    let lib = &fake().manifest.library;
    let dynamic = inspect("readelf", &["-dW"], lib);
    let needed: Vec<&str> = dynamic
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect();
    assert!(needed.contains(&"libascend_dump.so"), "{needed:?}");
    assert!(needed.contains(&"libc_sec.so"), "{needed:?}");
    for n in &needed {
        assert!(
            !n.contains("ascendcl") && !n.contains("runtime") && !n.contains("acl_rt"),
            "the kernel library names the runtime {n}: {needed:?}"
        );
    }
    assert!(
        dynamic.contains("BIND_NOW") || dynamic.contains("NOW"),
        "{dynamic}"
    );
    assert!(
        !dynamic.contains("RPATH") && !dynamic.contains("RUNPATH"),
        "{dynamic}"
    );
    let undefined = inspect("nm", &["-D", "--undefined-only"], lib);
    assert!(
        undefined.contains("ascsim"),
        "the kernels' runtime calls should be undefined in the library:\n{undefined}"
    );
}

fn npu() -> Device {
    let d = Device::npu_with_kernels(&fake().outcome_manifest, 0).expect("the fake NPU loads");
    assert_eq!(d.backend(), BackendKind::Npu);
    d
}

/// f16 values whose prefix sums are exact in f32 (small integers).
fn ints_f16(n: usize) -> Vec<f16> {
    (0..n)
        .map(|i| f16::from_f32(((i * 37) % 17) as f32 - 8.0))
        .collect()
}

fn scan_on(dev: &Device, xs: &[f16]) -> (Vec<f32>, Option<f32>) {
    let out = scan(
        dev,
        &dev.upload(xs).unwrap(),
        ScanOptions {
            want_total: true,
            ..Default::default()
        },
    )
    .unwrap();
    (out.values.download().unwrap(), out.total())
}

#[test]
fn kernels_run_through_the_loaded_libraries() {
    let dev = npu();
    assert_eq!(dev.soc(), ascend_scan::Soc::Ascend910B4);
    let reason = dev.backend_reason();
    assert!(
        reason.starts_with("npu: device 0 (Ascend910B4)"),
        "{reason}"
    );
    assert!(reason.contains("libascend_scan_kernels.so"), "{reason}");
    assert!(reason.contains("8.0.RC1.fake"), "{reason}");
    // The ACL library and the runtime were opened into the global scope
    // (the CA model only for run mode sim).
    let lib64 = fake().toolkit.join("lib64");
    for lib in ["libascendcl.so", "libruntime.so", "libc_sec.so"] {
        let path = lib64.join(lib).display().to_string();
        assert!(reason.contains(&path), "{path} not in {reason}");
    }
    assert!(!reason.contains("camodel"), "{reason}");

    // Scan of a few thousand f16 values against the exact reference.
    let xs = ints_f16(5000);
    let (y, total) = scan_on(&dev, &xs);
    let mut acc = 0f64;
    for (i, (x, got)) in xs.iter().zip(&y).enumerate() {
        acc += x.to_f64();
        assert_eq!(f64::from(*got), acc, "y[{i}]");
    }
    assert_eq!(total.map(f64::from), Some(acc));
    // No simulator reports: the loaded runtime is not this crate's simulator.
    assert!(dev.take_reports().is_empty());

    // Reduce (a mix kernel with SyncAll) of i8 values.
    let xi: Vec<i8> = (0..7777)
        .map(|i| ((i * 2654435761usize) >> 7) as i8)
        .collect();
    let want: i64 = xi.iter().map(|&v| i64::from(v)).sum();
    let got = reduce_sum(&dev, &dev.upload(&xi).unwrap()).unwrap();
    assert_eq!(i64::from(got), want);

    // Radix sort (several launches) of u16 keys, stable.
    let keys: Vec<u16> = (0..3000u32).map(|i| ((i * 7919) % 1013) as u16).collect();
    let sorted = sort(&dev, &dev.upload(&keys).unwrap(), SortOptions::default()).unwrap();
    let mut want: Vec<(u16, i32)> = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, i as i32))
        .collect();
    want.sort_by_key(|&(k, _)| k);
    let got: Vec<(u16, i32)> = sorted
        .values
        .download()
        .unwrap()
        .into_iter()
        .zip(sorted.indices.download().unwrap())
        .collect();
    assert_eq!(got, want);
}

#[test]
fn every_host_thread_binds_the_device() {
    // ACL's current device is per thread: a thread that never touched the
    // device must still be able to use it (the fake runtime, like ACL,
    // refuses allocations on a thread without a current device).
    let dev = npu();
    let xs = ints_f16(3000);
    let want = scan_on(
        &Device::simulated(ascend_scan::Soc::Ascend910B4).unwrap(),
        &xs,
    );
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (dev, xs) = (dev.clone(), xs.clone());
            std::thread::spawn(move || scan_on(&dev, &xs))
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), want);
    }
}

#[test]
fn a_device_of_another_soc_is_refused() {
    // Device 1 of the fake runtime is an Ascend910B2; the library is for the B4.
    let err = Device::npu_with_kernels(&fake().outcome_manifest, 1).unwrap_err();
    assert_eq!(
        err,
        Error::SocMismatch {
            built: "Ascend910B4".into(),
            device: "Ascend910B2".into()
        }
    );
    assert!(err.to_string().contains("--soc Ascend910B2"), "{err}");
}

#[test]
fn a_device_with_fewer_cores_than_its_profile_is_refused() {
    // Device 2 of the fake runtime is an Ascend910B4 reporting 18 AI cores.
    match Device::npu_with_kernels(&fake().outcome_manifest, 2).unwrap_err() {
        Error::Unsupported(msg) => {
            assert!(msg.contains("18 AI cores and 36 vector cores"), "{msg}")
        }
        e => panic!("expected Unsupported, got {e}"),
    }
}

/// A copy of the fake's manifest, changed by `edit`, in its own directory.
fn edited_manifest(name: &str, edit: impl FnOnce(&mut Manifest)) -> PathBuf {
    fake_cann::edited_manifest(&fake().manifest, name, edit)
}

#[test]
fn a_stale_manifest_is_refused() {
    let path = edited_manifest("stale", |m| {
        let s = m
            .sources
            .iter_mut()
            .find(|s| s.path == "kernels/ascend_scan_tiling.h")
            .unwrap();
        s.sha256 = "0".repeat(64);
    });
    match Device::npu_with_kernels(&path, 0).unwrap_err() {
        Error::StaleKernels {
            source_file,
            reason,
        } => {
            assert_eq!(source_file, "kernels/ascend_scan_tiling.h");
            assert!(reason.contains(&"0".repeat(64)), "{reason}");
        }
        e => panic!("expected StaleKernels, got {e}"),
    }
    let path = edited_manifest("missing-source", |m| {
        m.sources.retain(|s| s.path != "kernels/copy_u8.cpp");
    });
    assert!(matches!(
        Device::npu_with_kernels(&path, 0).unwrap_err(),
        Error::StaleKernels { source_file, .. } if source_file == "kernels/copy_u8.cpp"
    ));
}

#[test]
fn a_missing_library_falls_back_to_the_simulator() {
    let path = edited_manifest("no-library", |m| {
        m.library = m.library.with_file_name("libmissing_kernels.so");
    });
    let err = Device::npu_with_kernels(&path, 0).unwrap_err();
    assert!(
        matches!(&err, Error::KernelLibrary { reason, .. } if reason.contains("libmissing_kernels.so")),
        "{err}"
    );
    let dev = Device::choose(Some(&path)).unwrap();
    assert_eq!(dev.backend(), BackendKind::Simulator);
    assert!(
        dev.backend_reason()
            .starts_with("simulator: no NPU backend")
            && dev.backend_reason().contains("libmissing_kernels.so"),
        "{}",
        dev.backend_reason()
    );
    // And without any manifest.
    let nowhere = scratch("nowhere").join("manifest.json");
    let dev = Device::choose(Some(&nowhere)).unwrap();
    assert_eq!(dev.backend(), BackendKind::Simulator);
    assert!(
        dev.backend_reason().contains("no kernel library manifest"),
        "{}",
        dev.backend_reason()
    );
    // The simulator chosen this way works.
    let (y, _) = scan_on(&dev, &ints_f16(100));
    assert_eq!(y.len(), 100);
}

/// Asserts that `err` is the failure of ACL call `call` with `code` and a
/// message (from aclGetRecentErrMsg) containing `text`.
fn assert_runtime(err: Error, want_call: &str, want_code: i32, text: &str) {
    match err {
        Error::Runtime {
            call,
            code,
            message,
        } => {
            assert_eq!((call, code), (want_call, want_code), "{message}");
            assert!(message.contains(text), "{message}");
        }
        e => panic!("expected a Runtime error of {want_call}, got {e}"),
    }
}

#[test]
fn acl_failures_become_runtime_errors_with_the_message() {
    // aclrtSetDevice of a device the runtime does not have.
    let err = Device::npu_with_kernels(&fake().outcome_manifest, 7).unwrap_err();
    assert_runtime(err, "aclrtSetDevice", 107001, "device 7");
    // aclrtMalloc beyond the device's memory.
    let err = npu().alloc_zeroed::<u8>(1 << 40).unwrap_err();
    assert_runtime(err, "aclrtMalloc", 207001, "exceed");
}

#[test]
fn toolkit_discovery_order_and_fallback() {
    let env = |v: &str| -> Option<OsString> {
        match v {
            "ASCEND_TOOLKIT_HOME" => Some("/opt/a".into()),
            "ASCEND_HOME_PATH" => Some("/opt/b".into()),
            "HOME" => Some("/home/u".into()),
            _ => None,
        }
    };
    let c = xtask::cann::toolkit_candidates(&env);
    let want: Vec<PathBuf> = [
        "/opt/a",
        "/opt/b",
        "/home/u/Ascend/ascend-toolkit/latest",
        "/usr/local/Ascend/ascend-toolkit/latest",
        "/usr/local/Ascend/cann",
    ]
    .map(PathBuf::from)
    .to_vec();
    assert_eq!(c, want);

    let dir = scratch("versions");
    for (cfg, want) in [
        ("version=8.0.RC3\n", "8.0.RC3"),
        (
            "# c\nruntime_running_version=[7.0.0.5.242:8.0.RC1]\n",
            "8.0.RC1",
        ),
        ("8.5.0\n", "8.5.0"),
    ] {
        std::fs::write(dir.join("version.cfg"), cfg).unwrap();
        assert_eq!(xtask::cann::toolkit_version(&dir).as_deref(), Some(want));
    }

    // --cann that is not a toolkit is an error, not a silent fallback.
    let opts = BuildOptions {
        root: root(),
        soc: "Ascend910B4".into(),
        run_mode: RunMode::Npu,
        cann: Some(scratch("not-a-toolkit")),
        cmake: None,
        out: Some(scratch("unused")),
    };
    let err = xtask::cann::build_kernels(&opts, &|_| None).unwrap_err();
    assert!(err.to_string().contains("not a CANN toolkit"), "{err}");

    // No toolkit anywhere: the caller builds for the simulator.
    if ![
        "/usr/local/Ascend/ascend-toolkit/latest",
        "/usr/local/Ascend/cann",
    ]
    .iter()
    .any(|p| xtask::cann::is_toolkit(Path::new(p)))
    {
        let opts = BuildOptions {
            cann: None,
            ..opts.clone()
        };
        match xtask::cann::build_kernels(&opts, &|_| None).unwrap() {
            Outcome::NoToolkit { searched } => assert_eq!(searched.len(), 2),
            o => panic!("expected NoToolkit, got {o:?}"),
        }
    }

    // Every Atlas A2 name of CANN's ascendc.cmake (compared without case,
    // as the module does) is accepted and spelled canonically.
    for (given, want) in [
        ("Ascend910B1", "Ascend910B1"),
        ("ascend910b2", "Ascend910B2"),
        ("Ascend910B2C", "Ascend910B2C"),
        ("ASCEND910B3", "Ascend910B3"),
        ("Ascend910B4", "Ascend910B4"),
        ("ascend910b4-1", "Ascend910B4-1"),
    ] {
        assert_eq!(xtask::cann::canonical_soc(given), Some(want), "{given}");
    }
    // Not A2: the old 910 (c100) name and an Atlas A3 name.
    for other in ["Ascend910B", "Ascend910_9391", "Ascend310P3"] {
        assert_eq!(xtask::cann::canonical_soc(other), None, "{other}");
    }

    // An unknown SoC is refused before anything is built.
    let opts = BuildOptions {
        soc: "Ascend910B".into(),
        cann: None,
        ..opts
    };
    assert!(xtask::cann::build_kernels(&opts, &|_| None)
        .unwrap_err()
        .to_string()
        .contains("unknown --soc Ascend910B"));
}
