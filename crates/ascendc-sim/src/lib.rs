//! The AscendC CPU simulator of ascend-scan.
//!
//! The C++ side (device headers in `include/`, runtime in `cpp/`) is compiled
//! by this crate's build script; kernels compiled against the headers run on
//! it. This Rust side reads launch reports and traces through the
//! simulator's C interface (`ascsim_*`) and models launch times on the SoC
//! profiles of the `soc` crate (re-exported here).
pub mod cost;
mod params;
mod report;
/// The SoC profiles (crate `soc`), as `crate::soc` for the cost model.
use ::soc;

pub use cost::{
    model_launch, model_launches, profile_launch, CoreProfile, CostParams, ModelProfile,
    ModelReport,
};
pub use report::{CoreTrace, LaunchReport, Pipe, Task};
pub use soc::{Soc, SocProfile};

/// Directory of the simulator's C++ headers (`kernel_operator.h`, `acl/acl.h`).
pub fn include_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}
