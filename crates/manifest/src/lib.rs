//! The manifest of a CANN kernel library and the hashes of the kernel sources.
//!
//! One crate for the writer, the embedder and the reader, so that they cannot
//! disagree on the format or on which files are hashed:
//! - `cargo xtask build-kernels` writes `manifest.json` next to the library
//!   it built (xtask/src/cann.rs), listing the kernels of
//!   `algos::catalogue()`;
//! - ascend-scan's build.rs embeds the hashes of the kernels/ sources the
//!   crate is built from;
//! - ascend-scan reads the manifest before it loads the library
//!   (src/runtime/loader.rs).
//!
//! It needs only `std`, `serde` and `sha2`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Version of the manifest format; bumped on incompatible changes.
pub const MANIFEST_FORMAT: u32 = 1;

/// File name of the manifest inside a build directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Name of the kernel library target (`lib<name>.so`).
pub const LIBRARY_TARGET: &str = "ascend_scan_kernels";

/// One source file of the kernel library and its SHA-256.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// Path relative to the workspace root, `/`-separated (`kernels/x.cpp`).
    pub path: String,
    /// Lowercase hex SHA-256 of the file's bytes.
    pub sha256: String,
}

/// What `cargo xtask build-kernels` built.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`] of the writer.
    pub format: u32,
    /// SOC_VERSION the kernels were compiled for (e.g. `Ascend910B4`).
    pub soc: String,
    /// RUN_MODE: `npu`, `cpu` or `sim`.
    pub run_mode: String,
    /// The toolkit's version (from `version.cfg`), if it could be read.
    pub cann_version: Option<String>,
    /// The toolkit root used for the build.
    pub toolkit: PathBuf,
    /// The built kernel library (absolute).
    pub library: PathBuf,
    /// Kernel names; each has an `aclrtlaunch_<name>` entry in the library.
    pub kernels: Vec<String>,
    /// Every file of kernels/ the library was compiled from, sorted by path.
    pub sources: Vec<Source>,
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every file directly in `<root>/kernels` (the kernel sources and the
/// headers they share; not the simulator-only `kernels/sim/`), sorted by
/// path, with its SHA-256.
pub fn kernel_sources(root: &Path) -> std::io::Result<Vec<Source>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root.join("kernels"))? {
        let path = entry?.path();
        if !path.is_file() {
            continue;
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| std::io::Error::other(format!("{}: not UTF-8", path.display())))?;
        out.push(Source {
            path: format!("kernels/{name}"),
            sha256: sha256_hex(&std::fs::read(&path)?),
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}
