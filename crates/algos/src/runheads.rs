//! RUNHEADS: the start flags of the runs of equal keys (docs/algorithms.md,
//! section "Runs of equal keys (RUNHEADS)").
//!
//! Each vector core owns a range of keys and streams it in tiles of
//! [`RUNHEADS_TILE_BYTES`]. A tile is loaded with the 32-byte block before
//! it, so that the key before the tile's first one is in UB; a Gather makes
//! the tile shifted by one key, a vector Compare (EQ) sets a bit where a key
//! equals its predecessor, and a Select and a Cast turn the bits into int8
//! flags: 1 where a run starts. Position 0 always starts a run. One read of
//! the keys, one write of the flags, no cross-core step.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Bytes of keys per UB tile (16 KiB: large enough for full DMA bandwidth,
/// small enough for the tile, its shifted copy and their widened f32 forms
/// in UB, double buffered).
pub const RUNHEADS_TILE_BYTES: u64 = 16 * 1024;
/// Keys per core are a multiple of this (whole vector compare repeats).
pub const RUNHEADS_ALIGN: u64 = 128;

/// Tiling of the RUNHEADS kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct RunHeadsTiling {
    /// Keys.
    pub n: u64,
    /// Keys per vector core (a multiple of [`RUNHEADS_ALIGN`]; the last core
    /// takes the rest).
    pub per_core: u64,
}

/// The run-start flags of f16, bf16, f32, 16-bit or 32-bit integer keys.
/// Floats compare by value (`==`: -0.0 equals +0.0, a NaN equals nothing, so
/// every NaN starts a run of its own); integers by their bits (the i16 and
/// i32 kernels also serve u16 and u32 keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunHeads {
    dtype: DType,
}

impl RunHeads {
    /// Key types with a kernel of their own.
    pub const DTYPES: [DType; 5] = [DType::F16, DType::Bf16, DType::F32, DType::I16, DType::I32];

    /// The kernel for `dtype` keys (u16 and u32 take the i16 and i32 ones).
    pub fn new(dtype: DType) -> Result<RunHeads, AlgoError> {
        let dtype = match dtype {
            DType::U16 => DType::I16,
            DType::U32 => DType::I32,
            d => d,
        };
        if !Self::DTYPES.contains(&dtype) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "RunHeads",
                dtype,
                reason: "keys are f16, bf16, f32 or 16/32-bit integers".into(),
            });
        }
        Ok(RunHeads { dtype })
    }

    /// Keys per tile.
    pub fn tile(&self) -> u64 {
        RUNHEADS_TILE_BYTES / self.dtype.size() as u64
    }

    /// Plans `n >= 1` keys: an even share per vector core.
    pub fn plan(&self, soc: &SocProfile, n: u64) -> Result<LaunchPlan<RunHeadsTiling>, AlgoError> {
        if n == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: "no key needs no launch".into(),
            });
        }
        let cores = u64::from(soc.vector_cores.max(1));
        let per_core = n.div_ceil(cores).div_ceil(RUNHEADS_ALIGN) * RUNHEADS_ALIGN;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: n.div_ceil(per_core) as u32,
            workspace_bytes: 0,
            tiling: RunHeadsTiling { n, per_core },
        })
    }

    /// The type the keys are compared in: their own, or f32 for bf16 and
    /// 16-bit integers (exact; A2 compares only half, float and int32).
    fn compared(&self) -> &'static str {
        match self.dtype {
            DType::Bf16 | DType::I16 => "float",
            d => d.cpp(),
        }
    }
}

impl Kernel for RunHeads {
    fn name(&self) -> String {
        format!("runheads_{}", self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["keys", "flags"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<RunHeadsTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "runheads_kernel.h",
            &format!(
                "Run-start flags (docs/algorithms.md, Runs of equal keys): {} keys compared as {}, \
                 tiles of {} keys.",
                self.dtype,
                self.compared(),
                self.tile()
            ),
            &format!(
                "RunHeads<{}, {}, {}>",
                self.dtype.cpp(),
                self.compared(),
                self.tile()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_cover_the_keys() {
        let soc = soc::Soc::Ascend910B4.profile();
        let k = RunHeads::new(DType::I32).unwrap();
        for n in [1, 127, 128, 129, 40 * 128 + 1, 4096 * 40 + 7, 1 << 24] {
            let p = k.plan(&soc, n).unwrap();
            let t = p.tiling;
            assert_eq!(t.per_core % RUNHEADS_ALIGN, 0);
            let cores = u64::from(p.block_dim);
            assert!(cores * t.per_core >= n && (cores - 1) * t.per_core < n);
            assert!(p.block_dim <= soc.vector_cores);
        }
        assert!(k.plan(&soc, 0).is_err());
        assert_eq!(RunHeads::new(DType::U16).unwrap().name(), "runheads_i16");
        assert_eq!(RunHeads::new(DType::U32).unwrap().name(), "runheads_i32");
        assert!(RunHeads::new(DType::I8).is_err());
        assert_eq!(RunHeads::new(DType::F16).unwrap().tile(), 8192);
    }
}
