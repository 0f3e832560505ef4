//! The fake CANN toolkit of xtask/tests/cann_path.rs (run mode npu) and
//! xtask/tests/cann_sim.rs (run mode sim), made by the test from
//! xtask/tests/fixtures/.
//!
//! Layout, as in a CANN 8.x toolkit:
//! - `version.cfg`, `include/acl/acl.h`;
//! - `lib64/libascendcl.so`: the ACL API (fake_ascendcl.cpp), forwarding
//!   every call to the runtime layer; DT_NEEDED libruntime.so, libc_sec.so
//!   and libascend_dump.so, found through its RUNPATH `$ORIGIN` (a real
//!   toolkit relies on set_env.sh's LD_LIBRARY_PATH instead);
//! - `lib64/libruntime.so`: the runtime layer, the project simulator's
//!   runtime with three simulated NPUs (fake_acl_devices.cpp);
//! - `lib64/libc_sec.so`, `lib64/libascend_dump.so`: empty stand-ins;
//! - `tools/simulator/Ascend910B4/lib/libruntime_camodel.so` (the CA model:
//!   the simulator runtime with one device) and `libnpu_drv.so` (empty);
//! - `compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake`: the stub module,
//!   and `compiler/ccec_compiler/bin/bisheng`, which records its calls;
//! - a cmake (the fake interpreter) outside the toolkit.
//!
//! The kernel library it builds is linked like `ascendc_library`'s SHARED
//! target (see fixtures/build_sim_kernels.sh): the simulator symbols
//! the kernels call are undefined in it and bound at load time (-z now), so
//! it loads only after the runtime was opened with RTLD_GLOBAL.
//!
//! Every test process works in a directory of its own (see [`scratch`]):
//! cargo-nextest runs each test in a process of its own, in parallel, and
//! every one of them builds the fake toolkit.
#![allow(dead_code)] // two test binaries include this module, each uses a part

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use xtask::cann::{BuildOptions, Manifest, Outcome, RunMode};

/// The workspace root (holds kernels/ and crates/).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lies in the workspace root")
        .to_path_buf()
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The tests' directory in the target dir: the object cache shared by all
/// test processes, and one directory per process.
fn cann_test_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("cann-test")
}

/// This process's directory, `cann-test/pid-<id>`. The first call removes
/// the directories of processes that are gone (a directory of a running
/// process is never removed: parallel test processes keep theirs).
fn process_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = cann_test_dir();
        if let Ok(entries) = std::fs::read_dir(&base) {
            for e in entries.flatten() {
                let name = e.file_name();
                let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("pid-")) else {
                    continue;
                };
                if !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        base.join(format!("pid-{}", std::process::id()))
    })
}

/// A fresh directory `name` of this process (removed first if present).
pub fn scratch(name: &str) -> PathBuf {
    let dir = process_dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn copy_executable(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
    sh(Command::new("chmod").arg("+x").arg(to));
}

/// An executable script at `path` running `command` with FAKE_CANN_LOG=`log`
/// and the `env` settings.
fn wrapper(path: &Path, log: &Path, env: &str, command: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!(
            "#!/bin/sh\nFAKE_CANN_LOG='{}' {env} exec {command} \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    sh(Command::new("chmod").arg("+x").arg(path));
}

/// The simulator runtime as a runtime layer named `soname` in `dir`
/// (`defines`: extra -D options). -Bsymbolic keeps its own calls inside it,
/// so that two copies in one process (libruntime.so and the CA model) do not
/// reach into each other.
fn runtime_layer(dir: &Path, soname: &str, defines: &[&str]) {
    let sim = root().join("crates/ascendc-sim");
    std::fs::create_dir_all(dir).unwrap();
    sh(Command::new("g++")
        .args(["-std=c++17", "-O2", "-fPIC", "-shared", "-pthread"])
        .args(["-Wall", "-Wextra", "-Werror"])
        .args(defines)
        .arg("-include")
        .arg(fixtures().join("fake_rt_names.h"))
        .arg("-I")
        .arg(sim.join("include"))
        .args(simulator_sources(&sim))
        .arg(fixtures().join("fake_acl_devices.cpp"))
        .arg("-Wl,-Bsymbolic")
        .arg(format!("-Wl,-soname,{soname}"))
        .arg("-o")
        .arg(dir.join(soname)));
}

/// The simulator runtime's C++ sources (every `cpp/*.cpp`).
fn simulator_sources(sim: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(sim.join("cpp"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
        .collect();
    files.sort();
    files
}

/// An empty shared library `lib<name>.so` in `dir`.
fn stub_library(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let soname = format!("lib{name}.so");
    sh(Command::new("gcc")
        .args(["-shared", "-fPIC", "-Wall", "-Werror"])
        .arg(format!("-DFAKE_STUB_NAME=fake_stub_{name}"))
        .arg(fixtures().join("fake_stub_lib.c"))
        .arg(format!("-Wl,-soname,{soname}"))
        .arg("-o")
        .arg(dir.join(soname)));
}

/// Makes the fake toolkit under `dir`: (toolkit, cmake, log directory).
/// Compiled kernel objects go to the shared cache `cann-test/objects` as
/// well (written by rename, so parallel processes can share it); with
/// `reuse_objects` the build takes them from there when their sources and
/// headers are unchanged (the sim-mode build after the npu-mode one: the
/// device compile does not depend on the run mode).
pub fn make_toolkit(dir: &Path, reuse_objects: bool) -> (PathBuf, PathBuf, PathBuf) {
    let toolkit = dir.join("Ascend/ascend-toolkit/latest");
    let log = dir.join("log");
    std::fs::create_dir_all(&log).unwrap();
    std::fs::create_dir_all(toolkit.join("include/acl")).unwrap();
    std::fs::write(
        toolkit.join("version.cfg"),
        "# fake toolkit of xtask/tests/fake_cann\nversion=8.0.RC1.fake\n",
    )
    .unwrap();
    let sim = root().join("crates/ascendc-sim");
    std::fs::copy(
        sim.join("include/acl/acl.h"),
        toolkit.join("include/acl/acl.h"),
    )
    .unwrap();
    let module_dir = toolkit.join("compiler/tikcpp/ascendc_kernel_cmake");
    std::fs::create_dir_all(&module_dir).unwrap();
    let module = std::fs::read_to_string(fixtures().join("ascendc.cmake"))
        .unwrap()
        .replace(
            "@ASCENDC_SIM_INCLUDE@",
            &sim.join("include").to_string_lossy(),
        );
    std::fs::write(module_dir.join("ascendc.cmake"), module).unwrap();
    copy_executable(
        &fixtures().join("build_sim_kernels.sh"),
        &module_dir.join("build_sim_kernels.sh"),
    );
    // The recording stubs find the log directory through FAKE_CANN_LOG, set
    // by their wrappers (not in this process's environment, which parallel
    // tests share).
    wrapper(
        &toolkit.join("compiler/ccec_compiler/bin/bisheng"),
        &log,
        "",
        &format!("bash {}", fixtures().join("bisheng").display()),
    );
    let lib64 = toolkit.join("lib64");
    runtime_layer(&lib64, "libruntime.so", &[]);
    stub_library(&lib64, "c_sec");
    stub_library(&lib64, "ascend_dump");
    sh(Command::new("g++")
        .args(["-std=c++17", "-O2", "-fPIC", "-shared"])
        .args(["-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(sim.join("include"))
        .arg("-I")
        .arg(fixtures())
        .arg(fixtures().join("fake_ascendcl.cpp"))
        .arg("-L")
        .arg(&lib64)
        .args([
            "-Wl,--no-as-needed",
            "-lruntime",
            "-lc_sec",
            "-lascend_dump",
        ])
        .arg("-Wl,-rpath,$ORIGIN")
        .arg("-Wl,-soname,libascendcl.so")
        .arg("-o")
        .arg(lib64.join("libascendcl.so")));
    let camodel = toolkit.join("tools/simulator/Ascend910B4/lib");
    runtime_layer(&camodel, "libruntime_camodel.so", &["-DFAKE_CA_MODEL"]);
    stub_library(&camodel, "npu_drv");
    let cmake = dir.join("bin/cmake");
    let cache = cann_test_dir().join("objects");
    wrapper(
        &cmake,
        &log,
        &format!(
            "FAKE_CANN_OBJ_CACHE='{}' FAKE_CANN_OBJ_REUSE={}",
            cache.display(),
            u8::from(reuse_objects)
        ),
        &format!("python3 {}", fixtures().join("fake_cmake.py").display()),
    );
    (toolkit, cmake, log)
}

/// The fake toolkit and what `cargo xtask build-kernels` built with it.
#[derive(Debug)]
pub struct Fake {
    pub toolkit: PathBuf,
    pub cmake: PathBuf,
    pub log: PathBuf,
    pub out: PathBuf,
    pub outcome_manifest: PathBuf,
    pub manifest: Manifest,
}

/// Builds the fake toolkit in this process's directory `name` and runs
/// build-kernels with it for the Ascend910B4 in `mode` (an npu-mode build
/// compiles every kernel; other modes reuse its objects when current).
pub fn build(name: &str, mode: RunMode) -> Fake {
    let dir = scratch(name);
    let (toolkit, cmake, log) = make_toolkit(&dir, mode != RunMode::Npu);
    let out = dir.join("out");
    // The toolkit is found through the environment, as after set_env.sh.
    let env = |v: &str| -> Option<OsString> {
        (v == "ASCEND_HOME_PATH").then(|| toolkit.clone().into_os_string())
    };
    let outcome = xtask::cann::build_kernels(
        &BuildOptions {
            root: root(),
            soc: "Ascend910B4".into(),
            run_mode: mode,
            cann: None,
            cmake: Some(cmake.clone()),
            out: Some(out.clone()),
        },
        &env,
    )
    .expect("build-kernels with the fake toolkit");
    let Outcome::Cann {
        manifest_path,
        manifest,
    } = outcome
    else {
        panic!("the fake toolkit was not found: {outcome:?}");
    };
    Fake {
        toolkit: toolkit.canonicalize().unwrap(),
        cmake,
        log,
        out: out.canonicalize().unwrap(),
        outcome_manifest: manifest_path,
        manifest: *manifest,
    }
}

/// What `tool args lib` prints (binutils' readelf and nm, which g++ needs).
pub fn inspect(tool: &str, args: &[&str], lib: &Path) -> String {
    let out = Command::new(tool)
        .args(args)
        .arg(lib)
        .output()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(out.status.success(), "{tool} {args:?} {}", lib.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A copy of `base`, changed by `edit`, in this process's directory
/// `name`; returns the manifest's path.
pub fn edited_manifest(base: &Manifest, name: &str, edit: impl FnOnce(&mut Manifest)) -> PathBuf {
    let mut m = base.clone();
    edit(&mut m);
    let path = scratch(name).join("manifest.json");
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    path
}
