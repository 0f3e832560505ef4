//! The input headers of `crates/ascend-sys/src/bindings.rs` and their SHA-256.
//!
//! Used by both `cargo xtask bindings` (the generator, xtask/src/bindings.rs)
//! and the staleness test (xtask/tests/bindings_current.rs), so the two
//! cannot disagree on which files are hashed or how. It needs only `std` and
//! `sha2`; no libclang.

use std::path::Path;

use sha2::{Digest, Sha256};

/// One input header, relative to the workspace root.
#[derive(Clone, Copy, Debug)]
pub struct Input {
    /// Path relative to the workspace root, `/`-separated.
    pub path: &'static str,
    /// Required inputs must exist; optional ones are used only if present.
    pub required: bool,
}

/// The inputs, in wrapper-include and hashing order.
pub const INPUTS: &[Input] = &[
    Input {
        path: "crates/ascendc-sim/include/acl/acl.h",
        required: true,
    },
    Input {
        path: "crates/ascendc-sim/include/ascsim/sim.h",
        required: true,
    },
];

/// The inputs present under `root`, with their bytes, in [`INPUTS`] order.
/// A missing required input is an error; a missing optional one is skipped.
pub fn present_inputs(root: &Path) -> std::io::Result<Vec<(Input, Vec<u8>)>> {
    let mut present = Vec::new();
    for input in INPUTS {
        let file = root.join(input.path);
        match std::fs::read(&file) {
            Ok(bytes) => present.push((*input, bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !input.required => {}
            Err(e) => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("reading {}: {e}", file.display()),
                ))
            }
        }
    }
    Ok(present)
}

/// Lowercase hex SHA-256 over the present inputs in [`INPUTS`] order. Each
/// input contributes its relative path, a NUL byte, its length as a
/// little-endian u64, then its bytes (unmodified), so that which files are
/// present is part of the hash.
pub fn inputs_sha256(root: &Path) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    for (input, bytes) in present_inputs(root)? {
        hasher.update(input.path.as_bytes());
        hasher.update([0u8]);
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}
