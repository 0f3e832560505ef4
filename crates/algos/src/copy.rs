//! COPY: GM -> UB -> GM on every vector core, the bandwidth baseline.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Tiling of the COPY kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct CopyTiling {
    /// Bytes to copy.
    pub bytes: u64,
    /// Bytes per core (a multiple of 32; the last core takes the rest).
    pub per_core: u64,
    /// Bytes per UB tile (double buffered).
    pub tile: u32,
    /// Unused (keeps the size a multiple of 8).
    pub reserved: u32,
}

/// The COPY kernel (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copy;

/// UB tile of the COPY kernel: two buffers of 64 KiB leave UB room to spare
/// and make each DMA large enough for full bandwidth (>= 16 KB per copy).
const COPY_TILE: u32 = 64 * 1024;

impl Copy {
    /// Plan a copy of `bytes` bytes on `soc`.
    pub fn plan(&self, soc: &SocProfile, bytes: u64) -> Result<LaunchPlan<CopyTiling>, AlgoError> {
        if bytes == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "bytes",
                reason: "nothing to copy".into(),
            });
        }
        let cores = u64::from(soc.vector_cores);
        let per_core = bytes.div_ceil(cores).div_ceil(32) * 32;
        let block_dim = bytes.div_ceil(per_core) as u32;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim,
            workspace_bytes: 0,
            tiling: CopyTiling {
                bytes,
                per_core,
                tile: COPY_TILE,
                reserved: 0,
            },
        })
    }
}

impl Kernel for Copy {
    fn name(&self) -> String {
        "copy_u8".into()
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["src", "dst"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<CopyTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "copy_kernel.h",
            "Copy (docs/algorithms.md, Copy): bytes, GM -> UB -> GM.",
            "CopyBytes",
        )
    }
}
