//! TOPP (nucleus) sampling kernels (docs/algorithms.md,
//! section "Top-p (nucleus) sampling"): the host
//! composes sort (descending, with indices), the fp32 inclusive scan of the
//! sorted rows, [`TopPKind::Mask`] (the Llama 3 truncation), the weighted
//! draw, and [`TopPKind::Pick`] (the token at the drawn position).
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Tiling of the TOPP kernels.
#[derive(Debug, Clone, Copy, PartialEq, Tiling)]
#[repr(C)]
pub struct TopPTiling {
    /// Mask: elements (rows x m); pick: rows.
    pub total: u64,
    /// Entries per row (m).
    pub row_len: u64,
    /// Elements (mask) or rows (pick) per vector core.
    pub per_core: u64,
    /// The nucleus mass p.
    pub p: f32,
    /// Unused (keeps the size a multiple of 8).
    pub reserved: u32,
}

/// Which TOPP kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopPKind {
    /// The truncation of sorted probabilities of one type (f16 or bf16).
    Mask(DType),
    /// The token of every row at its drawn position.
    Pick,
}

/// A TOPP kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopP {
    kind: TopPKind,
}

/// Bytes of a mask kernel core's workspace slot (i32 count of entries
/// outside [0, 1], padding).
pub const TOPP_SLOT_BYTES: u64 = 32;

impl TopP {
    /// Probability types (the 16-bit sort keys that are floats).
    pub const DTYPES: [DType; 2] = [DType::F16, DType::Bf16];

    /// The kernel of `kind`.
    pub fn new(kind: TopPKind) -> Result<TopP, AlgoError> {
        if let TopPKind::Mask(dtype) = kind {
            if !Self::DTYPES.contains(&dtype) {
                return Err(AlgoError::UnsupportedDtype {
                    algorithm: "TopP",
                    dtype,
                    reason: "probabilities must be f16 or bf16 (the radix sort's float keys)"
                        .into(),
                });
            }
        }
        Ok(TopP { kind })
    }

    /// Plans the mask over `rows x m` sorted probabilities (elements split
    /// evenly over the vector cores; one 32-byte slot per core), or the pick
    /// of `rows` tokens from rows of `m` indices.
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u64,
        m: u64,
        p: f32,
    ) -> Result<LaunchPlan<TopPTiling>, AlgoError> {
        if rows == 0 || m == 0 {
            return Err(AlgoError::InvalidArgument {
                name: if rows == 0 { "rows" } else { "m" },
                reason: "an empty input needs no launch".into(),
            });
        }
        let cores = u64::from(soc.vector_cores.max(1));
        let total = match self.kind {
            TopPKind::Mask(_) => rows * m,
            TopPKind::Pick => rows,
        };
        // Mask: whole 256-byte blocks of f32 per core.
        let grain = match self.kind {
            TopPKind::Mask(_) => 64,
            TopPKind::Pick => 8,
        };
        let per_core = total.div_ceil(cores).div_ceil(grain) * grain;
        let block_dim = total.div_ceil(per_core);
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: block_dim * TOPP_SLOT_BYTES,
            tiling: TopPTiling {
                total,
                row_len: m,
                per_core,
                p,
                reserved: 0,
            },
        })
    }
}

impl Kernel for TopP {
    fn name(&self) -> String {
        match self.kind {
            TopPKind::Mask(d) => format!("topp_mask_{}", d.tag()),
            TopPKind::Pick => "topp_pick_i32".into(),
        }
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        match self.kind {
            TopPKind::Mask(_) => &["probs", "scan", "weights", "workspace"],
            TopPKind::Pick => &["indices", "pos", "tokens", "workspace"],
        }
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<TopPTiling>()
    }
    fn family(&self) -> String {
        match self.kind {
            TopPKind::Mask(_) => "TopPMask".into(),
            TopPKind::Pick => "TopPPick".into(),
        }
    }
    fn render(&self) -> Result<String, askama::Error> {
        match self.kind {
            TopPKind::Mask(d) => render_entry(
                self,
                "topp_kernel.h",
                &format!("Top-p (docs/algorithms.md, Top-p): the truncation, {d} probabilities."),
                &format!("TopPMask<{}>", d.cpp()),
            ),
            TopPKind::Pick => render_entry(
                self,
                "topp_kernel.h",
                "Top-p (docs/algorithms.md, Top-p): the pick of the tokens.",
                "TopPPick",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_the_elements_or_rows() {
        let soc = soc::Soc::Ascend910B4.profile();
        let mask = TopP::new(TopPKind::Mask(DType::Bf16)).unwrap();
        assert_eq!(mask.name(), "topp_mask_bf16");
        for (rows, m) in [(1, 1), (96, 129280), (3, 65)] {
            let p = mask.plan(&soc, rows, m, 0.9).unwrap();
            let t = p.tiling;
            assert_eq!(t.per_core % 64, 0);
            assert!(u64::from(p.block_dim) * t.per_core >= rows * m);
            assert!(u64::from(p.block_dim - 1) * t.per_core < rows * m);
            assert_eq!(p.workspace_bytes, u64::from(p.block_dim) * 32);
        }
        let pick = TopP::new(TopPKind::Pick).unwrap();
        let t = pick.plan(&soc, 96, 129280, 0.9).unwrap().tiling;
        assert_eq!((t.total, t.row_len), (96, 129280));
        assert!(TopP::new(TopPKind::Mask(DType::F32)).is_err());
        assert!(mask.plan(&soc, 0, 5, 0.5).is_err());
    }
}
