//! The vector steps of the composed segmented operations (docs/algorithms.md,
//! section "Segmented operations"): REVERT of SSCR and DIFF of SCD. Both split the
//! elements evenly over the vector cores.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;
use crate::scanu::{scan_accumulator, ScanU};

/// Tiling of the REVERT kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct SegRevertTiling {
    /// Elements.
    pub n: u64,
    /// Elements per vector core (a multiple of 8).
    pub per_core: u64,
    /// 1 for the exclusive segmented scan, 0 for inclusive.
    pub exclusive: u32,
    /// Unused (keeps the size a multiple of 8).
    pub reserved: u32,
}

/// Tiling of the DIFF kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct SegDiffTiling {
    /// Elements.
    pub n: u64,
    /// Elements per vector core (a multiple of 8).
    pub per_core: u64,
}

/// `n >= 1` elements in ranges of whole 32-byte blocks over the vector
/// cores: (per_core, block_dim).
fn range_split(soc: &SocProfile, n: u64) -> Result<(u64, u32), AlgoError> {
    if n == 0 {
        return Err(AlgoError::InvalidArgument {
            name: "n",
            reason: "an empty input needs no launch".into(),
        });
    }
    let per_core = n.div_ceil(u64::from(soc.vector_cores.max(1))).div_ceil(8) * 8;
    Ok((per_core, n.div_ceil(per_core) as u32))
}

/// SSCR's REVERT for values of one type: `y[i] = xe[i] - (fs[i] > 0 ?
/// v[fs[i] - 1] : 0)` (+ `x[i]` for the inclusive scan), with xe the
/// exclusive scan of x, fs the inclusive scan of the flags and v the
/// compaction of xe at the segment starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegRevert {
    dtype: DType,
}

/// SCD's DIFF of accumulators (f32 or i32): `y[0] = z[0]`, `y[i] = z[i] -
/// z[i-1]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegDiff {
    dtype: DType,
}

impl SegRevert {
    /// Value types (those of the scans).
    pub const DTYPES: [DType; 3] = ScanU::DTYPES;

    /// The REVERT kernel of `dtype` values.
    pub fn new(dtype: DType) -> Result<SegRevert, AlgoError> {
        crate::scanu::validate_scan_dtype("SegRevert", dtype)?;
        Ok(SegRevert { dtype })
    }

    /// Plans `n >= 1` elements.
    pub fn plan(
        &self,
        soc: &SocProfile,
        n: u64,
        exclusive: bool,
    ) -> Result<LaunchPlan<SegRevertTiling>, AlgoError> {
        let (per_core, block_dim) = range_split(soc, n)?;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim,
            workspace_bytes: 0,
            tiling: SegRevertTiling {
                n,
                per_core,
                exclusive: u32::from(exclusive),
                reserved: 0,
            },
        })
    }
}

impl SegDiff {
    /// Accumulator types.
    pub const DTYPES: [DType; 2] = [DType::F32, DType::I32];

    /// The DIFF kernel of `dtype` accumulators.
    pub fn new(dtype: DType) -> Result<SegDiff, AlgoError> {
        if !Self::DTYPES.contains(&dtype) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "SegDiff",
                dtype,
                reason: "DIFF takes the scans' accumulators, f32 or i32".into(),
            });
        }
        Ok(SegDiff { dtype })
    }

    /// Plans `n >= 1` elements.
    pub fn plan(&self, soc: &SocProfile, n: u64) -> Result<LaunchPlan<SegDiffTiling>, AlgoError> {
        let (per_core, block_dim) = range_split(soc, n)?;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim,
            workspace_bytes: 0,
            tiling: SegDiffTiling { n, per_core },
        })
    }
}

impl Kernel for SegRevert {
    fn name(&self) -> String {
        format!("segrevert_{}", self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["xe", "x", "fs", "v", "y"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SegRevertTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        let acc = scan_accumulator(self.dtype);
        render_entry(
            self,
            "segops_kernel.h",
            &format!(
                "SSCR's revert (docs/algorithms.md, Segmented sum (SSCR, SCD)): {} values, {acc} scans.",
                self.dtype
            ),
            &format!("SegRevert<{}, {}>", self.dtype.cpp(), acc.cpp()),
        )
    }
}

impl Kernel for SegDiff {
    fn name(&self) -> String {
        format!("segdiff_{}", self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["z", "y", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SegDiffTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "segops_kernel.h",
            &format!(
                "SCD's difference (docs/algorithms.md, Segmented sum (SSCR, SCD)): {}.",
                self.dtype
            ),
            &format!("SegDiff<{}>", self.dtype.cpp()),
        )
    }
}
