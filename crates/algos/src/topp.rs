//! TOPP (nucleus) sampling's pick (docs/algorithms.md, section "Top-p by
//! radix select"): with top_k, the draw ([`crate::TopPDraw`]) runs over the
//! top-k values of every row and the pick maps the drawn position back to
//! the token through the top-k indices.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Tiling of the pick.
#[derive(Debug, Clone, Copy, PartialEq, Tiling)]
#[repr(C)]
pub struct TopPTiling {
    /// Rows.
    pub total: u64,
    /// Entries per row (k).
    pub row_len: u64,
    /// Rows per vector core.
    pub per_core: u64,
}

/// The pick kernel: `tokens[r] = indices[r * k + pos[r]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopP;

impl TopP {
    /// Plans the pick of `rows` tokens from rows of `k` indices (rows split
    /// evenly over the vector cores, in whole 32-byte blocks of tokens).
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u64,
        k: u64,
    ) -> Result<LaunchPlan<TopPTiling>, AlgoError> {
        if rows == 0 || k == 0 {
            return Err(AlgoError::InvalidArgument {
                name: if rows == 0 { "rows" } else { "k" },
                reason: "an empty input needs no launch".into(),
            });
        }
        let cores = u64::from(soc.vector_cores.max(1));
        let per_core = rows.div_ceil(cores).div_ceil(8) * 8;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: rows.div_ceil(per_core) as u32,
            workspace_bytes: 0,
            tiling: TopPTiling {
                total: rows,
                row_len: k,
                per_core,
            },
        })
    }
}

impl Kernel for TopP {
    fn name(&self) -> String {
        "topp_pick_i32".into()
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["indices", "pos", "tokens"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<TopPTiling>()
    }
    fn family(&self) -> String {
        "TopPPick".into()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "topp_kernel.h",
            "Top-p (docs/algorithms.md, Top-p by radix select): the pick of the tokens.",
            "TopPPick",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_the_rows() {
        let soc = soc::Soc::Ascend910B4.profile();
        for rows in [1, 7, 96, 4096] {
            let p = TopP.plan(&soc, rows, 50).unwrap();
            let t = p.tiling;
            assert_eq!(t.per_core % 8, 0);
            assert!(u64::from(p.block_dim) * t.per_core >= rows);
            assert!(u64::from(p.block_dim - 1) * t.per_core < rows);
            assert_eq!((t.total, t.row_len), (rows, 50));
        }
        assert!(TopP.plan(&soc, 0, 5).is_err());
    }
}
