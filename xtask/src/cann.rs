//! `cargo xtask build-kernels`: builds kernels/*.cpp into a shared kernel
//! library with a CANN toolkit (CMake + the toolkit's `ascendc_library`) and
//! writes the manifest the ascend-scan runtime checks before loading it.
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _};
use askama::Template;

pub use manifest::{Manifest, Source, LIBRARY_TARGET, MANIFEST_FILE, MANIFEST_FORMAT};

/// The Atlas A2 SOC_VERSIONs CANN's `ascendc.cmake` accepts (its
/// `ascend910b_list`, compared lower-cased: asc-devkit
/// `cmake/asc/legacy_modules/host_config.cmake`, the same at tags v8.5.0 to
/// v9.1), spelled as `aclrtGetSocName()` and tikicpulib spell them. The
/// list also holds the Atlas A3 names (Ascend910_93xx), which are not A2.
/// The runtime has SoC profiles for Ascend910B1..B4 only: a library built
/// for Ascend910B2C or Ascend910B4-1 builds, but `Device::npu` refuses the
/// device until a profile with its core counts exists.
pub const SOCS: [&str; 6] = [
    "Ascend910B1",
    "Ascend910B2",
    "Ascend910B2C",
    "Ascend910B3",
    "Ascend910B4",
    "Ascend910B4-1",
];

/// The canonical spelling of an A2 SoC name (any case), as in [`SOCS`].
pub fn canonical_soc(name: &str) -> Option<&'static str> {
    SOCS.iter().copied().find(|s| s.eq_ignore_ascii_case(name))
}

/// RUN_MODE of `ascendc_library`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunMode {
    /// Device binaries for a real NPU.
    Npu,
    /// CANN's CPU twin-debug build.
    Cpu,
    /// Device binaries run by CANN's CA-model simulator.
    Sim,
}

impl RunMode {
    /// The RUN_MODE spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunMode::Npu => "npu",
            RunMode::Cpu => "cpu",
            RunMode::Sim => "sim",
        }
    }
}

impl std::str::FromStr for RunMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "npu" => Ok(RunMode::Npu),
            "cpu" => Ok(RunMode::Cpu),
            "sim" => Ok(RunMode::Sim),
            _ => Err(format!("unknown run mode {s}: expected npu, cpu or sim")),
        }
    }
}

/// What to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Workspace root (holds kernels/ and target/).
    pub root: PathBuf,
    /// SOC_VERSION.
    pub soc: String,
    /// RUN_MODE.
    pub run_mode: RunMode,
    /// Toolkit root; when given it must be a toolkit (no fallback).
    pub cann: Option<PathBuf>,
    /// The cmake executable (default: $CMAKE, else `cmake` on PATH).
    pub cmake: Option<PathBuf>,
    /// Output directory (default: target/cann/<soc>-<run mode>, and then the
    /// manifest is also copied to target/cann/manifest.json, where the
    /// runtime looks by default).
    pub out: Option<PathBuf>,
}

/// What build-kernels did.
#[derive(Debug)]
pub enum Outcome {
    /// A kernel library was built with the toolkit.
    Cann {
        /// Where the manifest was written.
        manifest_path: PathBuf,
        /// The manifest.
        manifest: Box<Manifest>,
    },
    /// No toolkit: the caller builds for the project simulator.
    NoToolkit {
        /// Where it looked.
        searched: Vec<PathBuf>,
    },
}

/// Toolkit roots to try, in order: the environment (ASCEND_TOOLKIT_HOME,
/// ASCEND_HOME_PATH, ASCEND_CANN_PACKAGE_PATH), then the usual install roots
/// (non-root and root installs of CANN 7/8, the CANN 8.5/9 `cann` link).
pub fn toolkit_candidates(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "ASCEND_TOOLKIT_HOME",
        "ASCEND_HOME_PATH",
        "ASCEND_CANN_PACKAGE_PATH",
    ]
    .into_iter()
    .filter_map(|v| env(v).filter(|s| !s.is_empty()).map(PathBuf::from))
    .collect();
    if let Some(home) = env("HOME") {
        out.push(PathBuf::from(home).join("Ascend/ascend-toolkit/latest"));
    }
    out.push("/usr/local/Ascend/ascend-toolkit/latest".into());
    out.push("/usr/local/Ascend/cann".into());
    out
}

/// True when `dir` looks like a toolkit root (`version.cfg` or the ACL header).
pub fn is_toolkit(dir: &Path) -> bool {
    dir.join("version.cfg").is_file() || dir.join("include/acl/acl.h").is_file()
}

/// The toolkit's version from `<root>/version.cfg`: the value of a
/// `version=` line, else the newer half of a `*_running_version=[a:b]` line,
/// else the first line that is not a comment.
pub fn toolkit_version(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("version.cfg")).ok()?;
    let lines = || {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
    };
    fn value(l: &str) -> Option<(&str, &str)> {
        l.split_once('=').map(|(k, v)| (k.trim(), v.trim()))
    }
    if let Some((_, v)) = lines().filter_map(value).find(|(k, _)| *k == "version") {
        return Some(v.to_owned());
    }
    if let Some((_, v)) = lines()
        .filter_map(value)
        .find(|(k, _)| k.ends_with("running_version"))
    {
        let v = v.trim_start_matches('[').trim_end_matches(']');
        return Some(v.rsplit(':').next().unwrap_or(v).to_owned());
    }
    lines().next().map(str::to_owned)
}

#[derive(Template)]
#[template(path = "cann/CMakeLists.txt", escape = "none")]
struct CMakeLists<'a> {
    target: &'a str,
    soc: &'a str,
    run_mode: &'a str,
    toolkit: String,
    arch: &'a str,
    kernels_dir: String,
    sources: Vec<String>,
}

fn cmake_path(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// The kernels of the library: those of `algos::catalogue()`, each rendered
/// into `kernels/<name>.cpp` with an `aclrtlaunch_<name>` entry.
fn kernel_names() -> Vec<String> {
    algos::catalogue().iter().map(|k| k.name()).collect()
}

/// The CMake project of the kernel library, from templates/cann/CMakeLists.txt.
pub fn cmake_lists(
    root: &Path,
    soc: &str,
    mode: RunMode,
    toolkit: &Path,
) -> anyhow::Result<String> {
    let names = kernel_names();
    Ok(CMakeLists {
        target: LIBRARY_TARGET,
        soc,
        run_mode: mode.as_str(),
        toolkit: cmake_path(toolkit),
        arch: std::env::consts::ARCH,
        kernels_dir: cmake_path(&root.join("kernels")),
        sources: names
            .iter()
            .map(|n| cmake_path(&root.join("kernels").join(format!("{n}.cpp"))))
            .collect(),
    }
    .render()?)
}

fn run(step: &str, cmd: &mut Command) -> anyhow::Result<()> {
    println!("{step}: {cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("{step}: could not start {:?}", cmd.get_program()))?;
    if !status.success() {
        bail!("{step} failed ({status})");
    }
    Ok(())
}

/// Builds the kernel library with the toolkit found by `opts.cann` or
/// `env` (see [`toolkit_candidates`]); returns [`Outcome::NoToolkit`] when
/// there is none.
pub fn build_kernels(
    opts: &BuildOptions,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> anyhow::Result<Outcome> {
    let Some(soc) = canonical_soc(&opts.soc) else {
        bail!(
            "unknown --soc {}: expected one of the Atlas A2 names {}",
            opts.soc,
            SOCS.join(", ")
        );
    };
    let toolkit = match &opts.cann {
        Some(dir) if is_toolkit(dir) => dir.clone(),
        Some(dir) => bail!(
            "--cann {}: not a CANN toolkit (neither version.cfg nor include/acl/acl.h)",
            dir.display()
        ),
        None => {
            let searched = toolkit_candidates(env);
            match searched.iter().find(|d| is_toolkit(d)) {
                Some(dir) => dir.clone(),
                None => return Ok(Outcome::NoToolkit { searched }),
            }
        }
    };
    let toolkit = toolkit.canonicalize().unwrap_or(toolkit);
    let version = toolkit_version(&toolkit);
    println!(
        "[1/4] CANN toolkit {} (version {})",
        toolkit.display(),
        version.as_deref().unwrap_or("unknown: no version.cfg")
    );
    let cmake = opts
        .cmake
        .clone()
        .or_else(|| env("CMAKE").map(PathBuf::from))
        .unwrap_or_else(|| "cmake".into());
    let mode = opts.run_mode;
    let out = match &opts.out {
        Some(o) => o.clone(),
        None => opts
            .root
            .join("target/cann")
            .join(format!("{}-{}", soc, mode.as_str())),
    };
    let build = out.join("build");
    std::fs::create_dir_all(&build).with_context(|| format!("creating {}", build.display()))?;
    let out = out.canonicalize()?;
    let build = out.join("build");

    let sources = manifest::kernel_sources(&opts.root)?;
    let kernels = kernel_names();
    let lists = cmake_lists(&opts.root, soc, mode, &toolkit)?;
    std::fs::write(out.join("CMakeLists.txt"), lists)?;
    println!(
        "[2/4] CMake project {} (SOC_VERSION={}, RUN_MODE={})",
        out.join("CMakeLists.txt").display(),
        soc,
        mode.as_str()
    );
    run(
        "cmake configure",
        Command::new(&cmake)
            .arg("-S")
            .arg(&out)
            .arg("-B")
            .arg(&build)
            .arg("-DCMAKE_BUILD_TYPE=Release")
            .env("ASCEND_HOME_PATH", &toolkit),
    )
    .with_context(|| {
        format!(
            "configuring with {} (needs cmake >= 3.16 and python3; --cmake or $CMAKE pick another cmake)",
            cmake.display()
        )
    })?;
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("[3/4] building {} kernels", kernels.len());
    run(
        "cmake build",
        Command::new(&cmake)
            .arg("--build")
            .arg(&build)
            .arg("--parallel")
            .arg(jobs.to_string()),
    )?;

    let lib_name = format!("lib{LIBRARY_TARGET}.so");
    let built = find_file(&build, &lib_name)
        .with_context(|| format!("the build produced no {lib_name} under {}", build.display()))?;
    let library = out.join(&lib_name);
    std::fs::copy(&built, &library)
        .with_context(|| format!("copying {} to {}", built.display(), library.display()))?;
    let headers = build.join("include").join(LIBRARY_TARGET);
    if headers.is_dir() {
        let dest = out.join("include");
        std::fs::create_dir_all(&dest)?;
        for e in std::fs::read_dir(&headers)? {
            let p = e?.path();
            if p.is_file() {
                std::fs::copy(&p, dest.join(p.file_name().unwrap()))?;
            }
        }
    }

    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        soc: soc.to_owned(),
        run_mode: mode.as_str().to_owned(),
        cann_version: version,
        toolkit,
        library,
        kernels,
        sources,
    };
    let json = serde_json::to_string_pretty(&manifest)? + "\n";
    let manifest_path = out.join(MANIFEST_FILE);
    std::fs::write(&manifest_path, &json)?;
    if opts.out.is_none() {
        std::fs::write(opts.root.join("target/cann").join(MANIFEST_FILE), &json)?;
    }
    println!(
        "[4/4] {} kernels in {}; manifest {}",
        manifest.kernels.len(),
        manifest.library.display(),
        manifest_path.display()
    );
    Ok(Outcome::Cann {
        manifest_path,
        manifest: Box::new(manifest),
    })
}

/// The first file named `name` under `dir` (`dir/lib` first, where
/// `ascendc_library` puts it), depth first.
fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let direct = dir.join("lib").join(name);
    if direct.is_file() {
        return Some(direct);
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_file() && p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
        if p.is_dir() && !p.is_symlink() {
            if let Some(found) = find_file(&p, name) {
                return Some(found);
            }
        }
    }
    None
}
