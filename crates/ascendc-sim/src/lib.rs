//! The AscendC CPU simulator of ascend-scan.
//!
//! The C++ side (device headers in `include/`, runtime in `cpp/`) is compiled
//! by this crate's build script; kernels compiled against the headers run on
//! it. This Rust side holds the SoC profiles and reads launch reports and
//! traces through the simulator's C interface (`ascsim_*`).
pub mod cost;
mod params;
mod report;
mod soc;

pub use cost::{model_launch, model_launches, CostParams, ModelProfile, ModelReport};
pub use report::{CoreTrace, LaunchReport, Pipe};
pub use soc::{Soc, SocProfile};

/// Directory of the simulator's C++ headers (`kernel_operator.h`, `acl/acl.h`).
pub fn include_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}
