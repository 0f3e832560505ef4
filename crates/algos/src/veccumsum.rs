//! VECCUMSUM: the vector-only scan baseline (docs/algorithms.md,
//! section "VecCumSum (VECCUMSUM)").
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;
use crate::scanu::{row_tiles, scan_accumulator, validate_scan_dtype};

/// Tiling of the VECCUMSUM kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct VecCumSumTiling {
    /// Elements to scan.
    pub n: u64,
    /// Number of s*s tiles (the last may be partial).
    pub tiles: u32,
    /// 1 for an exclusive scan, 0 for inclusive.
    pub exclusive: u32,
}

/// A VECCUMSUM kernel instance: input type and tile edge s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VecCumSum {
    dtype: DType,
    s: u32,
}

impl VecCumSum {
    /// Supported tile edges: the transpose table and tiles of s = 128 would
    /// not fit UB next to double-buffered data.
    pub const TILE_EDGES: [u32; 3] = [16, 32, 64];

    /// A VECCUMSUM instance; `s` must be 16, 32 or 64.
    pub fn new(dtype: DType, s: u32) -> Result<VecCumSum, AlgoError> {
        if !Self::TILE_EDGES.contains(&s) {
            return Err(AlgoError::InvalidArgument {
                name: "s",
                reason: format!("tile edge {s} is not one of 16, 32, 64 (VecCumSum)"),
            });
        }
        validate_scan_dtype("VecCumSum", dtype)?;
        Ok(VecCumSum { dtype, s })
    }

    /// Plan a scan of `n >= 1` elements.
    pub fn plan(
        &self,
        _soc: &SocProfile,
        n: u64,
        exclusive: bool,
    ) -> Result<LaunchPlan<VecCumSumTiling>, AlgoError> {
        let tiles = row_tiles(1, n, u64::from(self.s * self.s))?;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: 1,
            workspace_bytes: 0,
            tiling: VecCumSumTiling {
                n,
                tiles,
                exclusive: u32::from(exclusive),
            },
        })
    }
}

impl Kernel for VecCumSum {
    fn name(&self) -> String {
        format!("veccumsum_{}_s{}", self.dtype.tag(), self.s)
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["x", "y", "total"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<VecCumSumTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        let acc = scan_accumulator(self.dtype);
        render_entry(
            self,
            "veccumsum_kernel.h",
            &format!(
                "VecCumSum (docs/algorithms.md, VectorScan): {} -> {acc}, tile edge s = {}.",
                self.dtype, self.s
            ),
            &format!("VecCumSum<{}, {}, {}>", self.dtype.cpp(), acc.cpp(), self.s),
        )
    }
}
