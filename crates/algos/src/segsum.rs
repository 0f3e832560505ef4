//! SEGSUM: the segmented sum in one pass on the vector cores
//! (docs/algorithms.md, section "Segmented sum in one pass (SEGSUM)").
//!
//! Phase 1: every vector core counts the start flags of its range of whole
//! tiles (and records its flag range, as SPLIT does) into a 32-byte slot,
//! and writes each tile's start mask (a bit per element) to the workspace.
//! SyncAll. Phase 2: per tile, a tile-local exclusive scan in f32 (a
//! transposing Gather, row-wise Adds, a Hillis-Steele scan of the lane
//! totals), the scan picked at the starts (GatherMask of offsets by the
//! start mask, Gather), and the sums as differences of neighbouring starts,
//! written at the running count; a scalar carry links the tiles. Each core publishes the
//! part of its first and last segment it holds; after a second SyncAll the
//! cores complete the segments that cross them. One read of x and of the
//! flags, a write and a read of the start masks (an eighth of the flags'
//! bytes, the read mostly from L2), one write of the sums.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Lanes of a tile (each a run of [`SEGSUM_WIDTH`] consecutive elements).
pub const SEGSUM_LANES: u64 = 256;
/// Consecutive elements per lane.
pub const SEGSUM_WIDTH: u64 = 16;
/// Elements per tile.
pub const SEGSUM_TILE: u64 = SEGSUM_LANES * SEGSUM_WIDTH;
/// Bytes of the workspace's slots: two 32-byte slots per core, for up to 64
/// cores. The start masks follow them ([`SegSum::plan`]).
pub const SEGSUM_WORKSPACE_BYTES: u64 = 2 * 64 * 32;
/// i32s per core slot of phase 1 (count, smallest flag, largest flag, then
/// zeros), the first [`SEGSUM_WORKSPACE_BYTES`] / 2 bytes of the workspace.
pub const SEGSUM_SLOT_INTS: usize = 8;

/// Tiling of the SEGSUM kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct SegSumTiling {
    /// Elements (values and flags).
    pub n: u64,
    /// Elements per vector core, whole tiles (the last core takes the rest).
    pub per_core: u64,
}

/// The segmented sum of f16, bf16 or f32 values (f32 sums) by int8 start
/// flags, in one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegSum {
    dtype: DType,
}

impl SegSum {
    /// Value types.
    pub const DTYPES: [DType; 3] = [DType::F16, DType::Bf16, DType::F32];

    /// The kernel for `dtype` values.
    pub fn new(dtype: DType) -> Result<SegSum, AlgoError> {
        if !Self::DTYPES.contains(&dtype) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "SegSum",
                dtype,
                reason: "values are f16, bf16 or f32 (summed in f32)".into(),
            });
        }
        Ok(SegSum { dtype })
    }

    /// Plans `n >= 1` elements: an even share of whole tiles per vector core.
    pub fn plan(&self, soc: &SocProfile, n: u64) -> Result<LaunchPlan<SegSumTiling>, AlgoError> {
        if n == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: "no element needs no launch".into(),
            });
        }
        let cores = u64::from(soc.vector_cores.clamp(1, 64));
        let per_core = n.div_ceil(cores).div_ceil(SEGSUM_TILE) * SEGSUM_TILE;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: n.div_ceil(per_core) as u32,
            // The slots, then the start masks: a bit per element, in whole
            // 128-element groups.
            workspace_bytes: SEGSUM_WORKSPACE_BYTES + n.div_ceil(128) * 16,
            tiling: SegSumTiling { n, per_core },
        })
    }
}

impl Kernel for SegSum {
    fn name(&self) -> String {
        format!("segsum_{}", self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        // SyncAll between the phases.
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["x", "flags", "sums", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SegSumTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "segsum_kernel.h",
            &format!(
                "Segmented sum in one pass (docs/algorithms.md, SEGSUM): {} values, f32 sums, tiles \
                 of {SEGSUM_LANES} lanes x {SEGSUM_WIDTH}.",
                self.dtype
            ),
            &format!(
                "SegSum<{}, {SEGSUM_LANES}, {SEGSUM_WIDTH}>",
                self.dtype.cpp()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_cover_the_elements_in_whole_tiles() {
        let soc = soc::Soc::Ascend910B4.profile();
        let k = SegSum::new(DType::F16).unwrap();
        for n in [1, 4095, 4096, 4097, 40 * 4096 + 1, 1 << 24] {
            let p = k.plan(&soc, n).unwrap();
            let t = p.tiling;
            assert_eq!(t.per_core % SEGSUM_TILE, 0);
            let cores = u64::from(p.block_dim);
            assert!(cores * t.per_core >= n && (cores - 1) * t.per_core < n);
            assert!(p.block_dim <= soc.vector_cores);
        }
        assert!(k.plan(&soc, 0).is_err());
        assert!(SegSum::new(DType::I8).is_err());
    }
}
