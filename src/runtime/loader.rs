//! Loading a CANN runtime and a kernel library built by
//! `cargo xtask build-kernels`: the manifest and its checks against the
//! kernel sources this crate was built from, the runtime libraries opened
//! into the process's global scope, and the kernel entries resolved.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use libloading::Library;
use manifest::{Manifest, MANIFEST_FILE, MANIFEST_FORMAT};

use super::backend::{Acl, Backend, BackendKind, Capability};
use super::kernels::KERNELS;
use super::status::load_error;
use crate::error::{Error, Result};

include!(concat!(env!("OUT_DIR"), "/kernel_sources.rs"));

/// The manifest file named by `path` (the file, or a build directory holding it).
fn manifest_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(MANIFEST_FILE)
    } else {
        path.to_path_buf()
    }
}

/// Reads a manifest and checks it against the kernels/ sources compiled
/// into this crate.
fn read_manifest(file: &Path) -> Result<Manifest> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| load_error(file, format!("reading the manifest: {e}")))?;
    let m: Manifest = serde_json::from_str(&text)
        .map_err(|e| load_error(file, format!("parsing the manifest: {e}")))?;
    if m.format != MANIFEST_FORMAT {
        return Err(load_error(
            file,
            format!(
                "manifest format {} (this library reads {MANIFEST_FORMAT}): rebuild with cargo xtask build-kernels",
                m.format
            ),
        ));
    }
    check_sources(&m)?;
    check_kernels(&m, file)?;
    Ok(m)
}

/// The manifest lists the kernels of this crate's table (both come from
/// `algos::catalogue()`), each once.
fn check_kernels(m: &Manifest, file: &Path) -> Result<()> {
    let mut listed: Vec<&str> = m.kernels.iter().map(String::as_str).collect();
    let mut ours: Vec<&str> = KERNELS.iter().map(|&(name, _)| name).collect();
    listed.sort_unstable();
    ours.sort_unstable();
    if listed != ours {
        return Err(load_error(
            file,
            format!(
                "the manifest lists {} kernels, this crate has {}: rebuild with cargo xtask build-kernels",
                listed.len(),
                ours.len()
            ),
        ));
    }
    Ok(())
}

fn check_sources(m: &Manifest) -> Result<()> {
    let built: HashMap<&str, &str> = m
        .sources
        .iter()
        .map(|s| (s.path.as_str(), s.sha256.as_str()))
        .collect();
    for (path, sha) in KERNEL_SOURCES {
        match built.get(path) {
            Some(b) if b == sha => {}
            Some(b) => {
                return Err(Error::StaleKernels {
                    source_file: path.to_string(),
                    reason: format!("the library was built from sha256 {b}, this crate from {sha}"),
                })
            }
            None => {
                return Err(Error::StaleKernels {
                    source_file: path.to_string(),
                    reason: "not in the library's manifest".into(),
                })
            }
        }
    }
    if let Some(extra) = m
        .sources
        .iter()
        .find(|s| !KERNEL_SOURCES.iter().any(|(p, _)| *p == s.path))
    {
        return Err(Error::StaleKernels {
            source_file: extra.path.clone(),
            reason: "in the library's manifest but not in this crate".into(),
        });
    }
    Ok(())
}

/// The libraries `ascendc_library` (CANN's legacy CMake module, asc-devkit
/// `cmake/asc/legacy_modules/function.cmake`) gives a SHARED kernel library
/// as INTERFACE or PUBLIC link dependencies, after the ACL library and the
/// runtime, in its link order. The module links the library itself only
/// against its PUBLIC ones (ascend_dump, c_sec) and with `-Wl,-z,now`
/// (`host_intf.cmake`): the ACL and runtime symbols its launch stubs call
/// are left to whoever loads it. A CANN sample executable links this whole
/// list; a loader that opens the kernel library at run time must put the
/// same libraries into the process's global symbol scope first.
const KERNEL_LIBRARY_DEPENDENCIES: &[&str] = &[
    "tiling_api",
    "register",
    "platform",
    "error_manager",
    "profapi",
    "ge_common_base",
    "unified_dlog",
    "mmpa",
    "ascend_dump",
    "c_sec",
];

/// One library to open into the global scope: alternatives (the first
/// file found wins) and whether the runtime is unusable without it.
struct Wanted {
    names: &'static [&'static str],
    dirs: Vec<PathBuf>,
    required: bool,
}

/// The runtime libraries of a manifest, in the order a CANN sample's link
/// line loads them (function.cmake: `runtime_camodel` and `npu_drv` for run
/// mode sim, then `ascendcl` (CANN 9 builds may name it `acl_rt`), then
/// `runtime` for run mode npu, then [`KERNEL_LIBRARY_DEPENDENCIES`]), so
/// that in run mode sim the CA model's symbols come first in the global
/// scope and the ACL library's runtime calls bind to it, as the samples
/// arrange with their link order or with LD_PRELOAD.
fn runtime_plan(m: &Manifest) -> Vec<Wanted> {
    let lib_dirs = vec![m.toolkit.join("lib64"), m.toolkit.join("runtime/lib64")];
    let mut plan = Vec::new();
    if m.run_mode == "sim" {
        // CANN 7/8: tools/simulator/<SOC_VERSION>/lib (the module's link
        // directory); CANN 9's new-style flow: tools/simulator/dav_2201/lib.
        let sim_dirs = vec![
            m.toolkit.join("tools/simulator").join(&m.soc).join("lib"),
            m.toolkit.join("tools/simulator/dav_2201/lib"),
        ];
        plan.push(Wanted {
            names: &["runtime_camodel"],
            dirs: sim_dirs.clone(),
            required: true,
        });
        plan.push(Wanted {
            names: &["npu_drv", "npu_drv_camodel"],
            dirs: sim_dirs,
            required: false,
        });
    }
    plan.push(Wanted {
        names: &["ascendcl", "acl_rt"],
        dirs: lib_dirs.clone(),
        required: true,
    });
    if m.run_mode == "npu" {
        plan.push(Wanted {
            names: &["runtime"],
            dirs: lib_dirs.clone(),
            required: false,
        });
    }
    for name in KERNEL_LIBRARY_DEPENDENCIES {
        plan.push(Wanted {
            names: std::slice::from_ref(name),
            dirs: lib_dirs.clone(),
            required: false,
        });
    }
    plan
}

/// Opens `path` with RTLD_NOW | RTLD_GLOBAL: its symbols (and those of its
/// dependencies) become visible to every library loaded after it.
fn open_global(path: &Path) -> std::result::Result<Library, libloading::Error> {
    use libloading::os::unix::{Library as Unix, RTLD_GLOBAL, RTLD_NOW};
    // SAFETY: loading runs the library's initialisers, which need nothing
    // from the caller (ACL itself is initialised explicitly by aclInit).
    unsafe { Unix::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }.map(Library::from)
}

/// The CANN runtime of this process: the libraries opened into its global
/// scope (which cannot be taken back) and the ACL backend on them.
struct Runtime {
    toolkit: PathBuf,
    run_mode: String,
    backend: &'static Backend,
}

/// The ACL runtime for a manifest: opens the libraries of [`runtime_plan`]
/// from the manifest's toolkit into the global scope (libascendcl.so from
/// the loader's search path set by set_env.sh when the toolkit has none),
/// once per process, and initialises ACL. A process can hold one CANN
/// runtime only: a manifest of another toolkit or run mode is refused.
fn acl_library(m: &Manifest, file: &Path) -> Result<&'static Backend> {
    static RUNTIME: OnceLock<Mutex<Option<Runtime>>> = OnceLock::new();
    if m.run_mode == "cpu" {
        return Err(Error::Unsupported(
            "kernel libraries built with --run-mode cpu need CANN's ACL stub, which lacks \
             aclrtGetSocName and aclGetRecentErrMsg; the loader supports npu and sim"
                .into(),
        ));
    }
    // Which files: a required library missing from the toolkit is an error
    // before anything is opened.
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    for wanted in runtime_plan(m) {
        let found = wanted.dirs.iter().find_map(|d| {
            wanted
                .names
                .iter()
                .map(|n| d.join(format!("lib{n}.so")))
                .find(|p| p.is_file())
        });
        let is_acl = wanted.names[0] == "ascendcl";
        match found {
            Some(p) => files.push((p, is_acl)),
            // No libascendcl.so in the toolkit: the loader's search path.
            None if is_acl => files.push((PathBuf::from("libascendcl.so"), true)),
            None if wanted.required => {
                let dirs: Vec<String> = wanted
                    .dirs
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect();
                return Err(load_error(
                    file,
                    format!(
                        "run mode {} needs lib{}.so, not found in {}",
                        m.run_mode,
                        wanted.names[0],
                        dirs.join(" or ")
                    ),
                ));
            }
            None => {}
        }
    }
    let mut runtime = RUNTIME
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(r) = runtime.as_ref() {
        if r.toolkit == m.toolkit && r.run_mode == m.run_mode {
            return Ok(r.backend);
        }
        return Err(load_error(
            file,
            format!(
                "this process already opened the CANN runtime of {} for run mode {} into its \
                 global symbol scope; a library of {} for run mode {} needs a process of its own",
                r.toolkit.display(),
                r.run_mode,
                m.toolkit.display(),
                m.run_mode
            ),
        ));
    }
    let mut acl: Option<(&'static Library, PathBuf)> = None;
    for (path, is_acl) in &files {
        let lib = open_global(path).map_err(|e| {
            load_error(
                file,
                format!(
                    "loading {} (toolkit {}): {e}; source the toolkit's set_env.sh",
                    path.display(),
                    m.toolkit.display()
                ),
            )
        })?;
        let lib: &'static Library = Box::leak(Box::new(lib));
        if *is_acl {
            acl = Some((lib, path.clone()));
        }
    }
    let Some((lib, path)) = acl else {
        unreachable!("the plan always holds the ACL library")
    };
    // SAFETY: aclGetDeviceCapability has the prototype of `Capability`
    // (acl/acl.h of CANN 8 and later); the library is never unloaded.
    let capability = unsafe { lib.get::<Capability>(b"aclGetDeviceCapability\0") }
        .ok()
        .map(|f| *f);
    let backend: &'static Backend = Box::leak(Box::new(Backend {
        kind: BackendKind::Npu,
        acl: Acl::load(lib, &path)?,
        capability,
        kernels: None,
        manifest: None,
        runtime: files.into_iter().map(|(p, _)| p).collect(),
    }));
    backend.init()?;
    *runtime = Some(Runtime {
        toolkit: m.toolkit.clone(),
        run_mode: m.run_mode.clone(),
        backend,
    });
    Ok(backend)
}

/// Checks that device `id` of `acl` is the SoC the library was built for.
fn check_soc(acl: &'static Backend, id: i32, m: &Manifest) -> Result<String> {
    acl.bind(id)?;
    let device = acl.soc_name()?;
    if !device.eq_ignore_ascii_case(&m.soc) {
        return Err(Error::SocMismatch {
            built: m.soc.clone(),
            device,
        });
    }
    Ok(device)
}

/// The NPU backend of the kernel library described by the manifest at
/// `path` (a manifest file or a build directory), for device `id`: loads
/// the ACL library (libascendcl.so of the manifest's toolkit, else from the
/// loader's search path), checks the manifest against the kernel sources
/// compiled into this crate and the device's SoC against the manifest,
/// then loads the kernel library and resolves every kernel entry.
pub(crate) fn load_npu(path: &Path, id: i32) -> Result<(&'static Backend, String)> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, &'static Backend>>> = OnceLock::new();
    let file = manifest_file(path);
    let file = file.canonicalize().map_err(|e| {
        load_error(
            &file,
            format!("no kernel library manifest: {e}; run cargo xtask build-kernels"),
        )
    })?;
    let m = read_manifest(&file)?;
    let mut loaded = LOADED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(b) = loaded
        .get(&file)
        .filter(|b| b.manifest.as_ref() == Some(&m))
    {
        let soc = check_soc(b, id, &m)?;
        return Ok((b, soc));
    }
    let acl = acl_library(&m, &file)?;
    // Before the kernel library is loaded: its constructor registers the
    // device binaries for the current device's SoC family.
    let soc = check_soc(acl, id, &m)?;
    let lib_path = if m.library.is_absolute() {
        m.library.clone()
    } else {
        file.parent().unwrap_or(Path::new(".")).join(&m.library)
    };
    // RTLD_NOW: the library was linked with -z now anyway (its runtime
    // symbols resolve against the global scope filled above, or it fails
    // here); RTLD_LOCAL: nothing needs its own symbols globally.
    let lib = {
        use libloading::os::unix::{Library as Unix, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: loading runs the kernel library's initialisers, which
        // register its device binaries with the ACL runtime loaded above.
        unsafe { Unix::open(Some(&lib_path), RTLD_NOW | RTLD_LOCAL) }.map(Library::from)
    }
    .map_err(|e| load_error(&file, format!("loading {}: {e}", lib_path.display())))?;
    let lib: &'static Library = Box::leak(Box::new(lib));
    let mut kernels = HashMap::new();
    for &(_, symbol) in KERNELS {
        let name = format!("{symbol}\0");
        // SAFETY: only the address is taken here; it is called through
        // `Backend::kernel` with its declared signature.
        let f = unsafe { lib.get::<unsafe extern "C" fn()>(name.as_bytes()) }
            .map_err(|e| load_error(&file, format!("{} in {}: {e}", symbol, lib_path.display())))?;
        kernels.insert(symbol, *f as usize);
    }
    let backend: &'static Backend = Box::leak(Box::new(Backend {
        kind: BackendKind::Npu,
        acl: acl.acl,
        capability: acl.capability,
        kernels: Some(kernels),
        manifest: Some(m),
        runtime: acl.runtime.clone(),
    }));
    loaded.insert(file, backend);
    Ok((backend, soc))
}
