// {{ header }}
//! The kernels' launch functions and symbol table, generated from
//! `algos::catalogue()`: the one list of kernels.
//!
//! Data flows one way: crates/algos describes every kernel (name, kernel
//! type, GM parameters, tiling type) -> `cargo xtask render` renders from it
//! the kernel sources and their C launch declarations (kernels/), the
//! simulator's launch entries (kernels/sim/) and this file -> the runtime
//! (runtime::backend, runtime::loader) -> the operations (crate::ops).
//! Nothing here is written by hand; `tests/it/generated.rs` checks that it
//! equals a fresh render.
//!
//! A family is the kernels sharing one tiling type and one list of GM
//! parameters, hence one C signature: each has a struct of its GM pointers
//! by name (`<Family>Args`) whose [`Launch`] impl is its typed launch
//! function, and a table of its kernels' `aclrtlaunch_<kernel>` entries. The
//! tiling is passed as the `algos` type itself: `#[derive(Tiling)]` asserts
//! its field offsets and size in Rust and, with the same numbers, in the C++
//! definition the kernels compile against (kernels/ascend_scan_tiling.h).
//!
//! Both backends use these tables: the simulator's entries are the static
//! symbols declared below (kernels/sim/, linked into this crate); a CANN
//! kernel library's are resolved by the same symbol names when it is loaded
//! (runtime::loader, after its manifest is checked), in
//! `Backend::kernel`.
#![allow(clippy::too_many_arguments)]

use std::ffi::c_void;

use super::backend::{Entry, StreamRef};
use crate::error::Result;

/// A GM (device) address passed to a kernel.
pub(crate) type Gm = *mut c_void;

/// Every kernel of the catalogue: (name, launch symbol), in catalogue order.
pub(crate) const KERNELS: &[(&str, &str)] = &[{% for k in kernels %}
    ("{{ k }}", "aclrtlaunch_{{ k }}"),{% endfor %}
];

/// The GM pointers of a kernel family, by name: launching them with a plan
/// of the family's tiling type calls the plan's kernel.
pub(crate) trait Launch {
    /// The family's tiling type.
    type Tiling;
    /// Launches `plan.kernel` (a kernel of this family) on `stream`.
    fn launch(self, stream: StreamRef, plan: &mut algos::LaunchPlan<Self::Tiling>) -> Result<()>;
}

/// Launches the plan's kernel with the GM pointers `args` (whose type names
/// the kernel family).
pub(crate) fn launch<A: Launch>(
    stream: StreamRef,
    plan: &mut algos::LaunchPlan<A::Tiling>,
    args: A,
) -> Result<()> {
    args.launch(stream, plan)
}

extern "C" {
{%- for f in families %}{% for k in f.kernels %}
    fn aclrtlaunch_{{ k }}(block_dim: u32, stream: *mut c_void, {% for p in f.params %}{{ p }}: Gm, {% endfor %}tiling: *mut algos::{{ f.tiling }}) -> u32;{% endfor %}{% endfor %}
}
{% for f in families %}
/// `aclrtlaunch_<kernel>` of the {{ f.name }} kernels.
type {{ f.name }}Fn = unsafe extern "C" fn(u32, *mut c_void, {% for p in f.params %}Gm, {% endfor %}*mut algos::{{ f.tiling }}) -> u32;

/// The {{ f.name }} kernels: the simulator's entries.
const {{ f.upper }}: &[Entry<{{ f.name }}Fn>] = &[{% for k in f.kernels %}
    Entry { name: "{{ k }}", symbol: "aclrtlaunch_{{ k }}", f: aclrtlaunch_{{ k }} },{% endfor %}
];

/// The GM pointers of the {{ f.name }} kernels ({{ f.tiling }}), by name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct {{ f.name }}Args {
{%- for p in f.params %}
    pub(crate) {{ p }}: Gm,{% endfor %}
}

impl Launch for {{ f.name }}Args {
    type Tiling = algos::{{ f.tiling }};
    fn launch(self, stream: StreamRef, plan: &mut algos::LaunchPlan<Self::Tiling>) -> Result<()> {
        let e = stream.backend.kernel({{ f.upper }}, &plan.kernel)?;
        // SAFETY: `e.f` has the kernel's C signature (the simulator's static
        // entry, or the same symbol of a loaded kernel library built from the
        // same kernels/ sources); the pointers are live device allocations
        // sized for the plan; the tiling pointer is valid for the call (the
        // launch stub copies the struct) and has the C layout of
        // {{ f.tiling }} (pinned by its derive on both sides).
        let rc = unsafe { (e.f)(plan.block_dim, stream.raw, {% for p in f.params %}self.{{ p }}, {% endfor %}&mut plan.tiling) };
        stream.backend.launched(e.symbol, rc)
    }
}
{% endfor %}
