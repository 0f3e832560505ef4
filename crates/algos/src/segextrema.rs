//! SEGEXTREMA: the maximum or minimum of every segment and its index, in one
//! read of the values (docs/algorithms.md, section "Segmented max and min
//! (SEGEXTREMA)").
//!
//! Each vector core owns a range of elements in tiles of [`SEGEXTREMA_TILE`].
//! Per tile it turns the values into order keys (int32, NaN above or below
//! every number, -0 equal to +0), builds a sparse table of the tile (level k
//! holds the best key of the 2^k elements from each lane, and its first
//! index) up to the level its longest segment piece needs, and answers every
//! piece of a segment that lies in the tile with two overlapping lookups.
//! Segments that cross tiles carry their partial result on the scalar unit;
//! those that cross cores publish it to a GM record, and after the hardware
//! SyncAll core 0 folds the records in core order and writes those segments.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::opscan::VectorOp;
use crate::render::render_entry;

/// Elements of a tile (the sparse table's width).
pub const SEGEXTREMA_TILE: u64 = 1024;
/// Segment pieces answered per vector step.
pub const SEGEXTREMA_PIECES: u64 = 512;
/// int32 words of a core's GM record (two 32-byte blocks).
pub const SEGEXTREMA_RECORD_WORDS: u64 = 16;

/// Tiling of the SEGEXTREMA kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct SegExtremaTiling {
    /// Elements (values).
    pub n: u64,
    /// Segments (entries of the offsets minus one).
    pub segments: u64,
    /// Elements per vector core (a multiple of [`SEGEXTREMA_TILE`]).
    pub per_core: u64,
}

/// The maximum or the minimum of every segment of f16, bf16 or f32 values,
/// with its index (the first one among equal extremes; NaN counts as the
/// extreme, the first NaN wins), given as CSR-style offsets that have passed
/// [`crate::SegFlags`]'s check (bad ones give unspecified results, never an
/// access outside the buffers). An empty segment gives the identity (-inf
/// for max, +inf for min) and index -1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegExtrema {
    dtype: DType,
    op: VectorOp,
}

impl SegExtrema {
    /// Value types.
    pub const DTYPES: [DType; 3] = [DType::F16, DType::Bf16, DType::F32];

    /// The kernel of `op` (max or min) over `dtype` values.
    pub fn new(dtype: DType, op: VectorOp) -> Result<SegExtrema, AlgoError> {
        if !Self::DTYPES.contains(&dtype) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "SegExtrema",
                dtype,
                reason: "values are f16, bf16 or f32".into(),
            });
        }
        if op == VectorOp::Sum {
            return Err(AlgoError::InvalidArgument {
                name: "op",
                reason: "SEGEXTREMA takes max or min (segmented sums: SEGSCAN)".into(),
            });
        }
        Ok(SegExtrema { dtype, op })
    }

    /// Plans `n` elements in `segments >= 1` segments: whole tiles per
    /// vector core, one GM record per core (the workspace). With no element
    /// one core writes the empty segments.
    pub fn plan(
        &self,
        soc: &SocProfile,
        n: u64,
        segments: u64,
    ) -> Result<LaunchPlan<SegExtremaTiling>, AlgoError> {
        if segments == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "segments",
                reason: "no segment needs no launch".into(),
            });
        }
        for (name, count) in [("n", n), ("segments", segments)] {
            if count >= i32::MAX as u64 {
                return Err(AlgoError::InvalidArgument {
                    name,
                    reason: format!("{count}: offsets and indices are i32"),
                });
            }
        }
        let cores = u64::from(soc.vector_cores.max(1));
        let per_core = n.div_ceil(cores).div_ceil(SEGEXTREMA_TILE).max(1) * SEGEXTREMA_TILE;
        let block_dim = n.div_ceil(per_core).max(1);
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: block_dim * SEGEXTREMA_RECORD_WORDS * 4,
            tiling: SegExtremaTiling {
                n,
                segments,
                per_core,
            },
        })
    }
}

impl Kernel for SegExtrema {
    fn name(&self) -> String {
        format!("segextrema_{}_{}", self.op.tag(), self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["x", "offsets", "values", "indices", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SegExtremaTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        let (tile, pieces) = (SEGEXTREMA_TILE, SEGEXTREMA_PIECES);
        render_entry(
            self,
            "segextrema_kernel.h",
            &format!(
                "Segmented {} with its index (docs/algorithms.md, Segmented max and min): {} \
                 values, tiles of {tile}, {pieces} pieces per step.",
                self.op.tag(),
                self.dtype
            ),
            &format!(
                "SegExtrema<{}, {}, {tile}, {pieces}>",
                self.dtype.cpp(),
                u32::from(self.op == VectorOp::Max)
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_the_elements() {
        let soc = soc::Soc::Ascend910B4.profile();
        let k = SegExtrema::new(DType::F16, VectorOp::Max).unwrap();
        for n in [1, 1023, 1024, 1025, 40 * 1024 + 1, 1 << 24] {
            let p = k.plan(&soc, n, 3).unwrap();
            let t = p.tiling;
            assert_eq!(t.per_core % SEGEXTREMA_TILE, 0);
            let cores = u64::from(p.block_dim);
            assert!(cores * t.per_core >= n && (cores - 1) * t.per_core < n);
            assert!(p.block_dim <= soc.vector_cores);
            assert_eq!(p.workspace_bytes, cores * SEGEXTREMA_RECORD_WORDS * 4);
        }
        assert_eq!(k.plan(&soc, 0, 4).unwrap().block_dim, 1);
        assert!(k.plan(&soc, 5, 0).is_err());
        assert!(SegExtrema::new(DType::I8, VectorOp::Max).is_err());
        assert!(SegExtrema::new(DType::F32, VectorOp::Sum).is_err());
    }
}
