//! TOPKDRAW: sampling's last steps over each row's sorted top-k logits in
//! one launch (docs/algorithms.md, section "Sampling from logits"): the
//! softmax of the kept logits with the row's temperature, min-p, top-p and
//! the draw, and the token through the top-k indices. It replaces SOFTMAX,
//! TOPPDRAW and the pick after a TOPK whose width is at most
//! [`TOPKDRAW_MAX_WIDTH`].
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Widest top-k a row may hold: its logits, indices and probabilities stay
/// in UB.
pub const TOPKDRAW_MAX_WIDTH: u64 = 4096;

/// Tiling of the TOPKDRAW kernel.
#[derive(Debug, Clone, Copy, PartialEq, Tiling)]
#[repr(C)]
pub struct TopKDrawTiling {
    /// Rows.
    pub rows: u64,
    /// Top-k entries per row (sorted logits and their indices).
    pub width: u64,
    /// Rows per vector core.
    pub per_core: u64,
    /// With `seeded`: the seed of the draws' uniforms.
    pub seed: u64,
    /// 1 / temperature of every row (without `row_t`).
    pub scale: f32,
    /// The nucleus mass of every row (without `row_p`); 1 keeps all.
    pub p: f32,
    /// The min-p factor of every row (without `row_min_p`); 0: off.
    pub min_p: f32,
    /// Entries every row keeps, 1..=width; 0: row r keeps `keep_k[r]` (a
    /// GM array; a count outside 1..=width makes the row bad).
    pub keep_count: u32,
    /// 1: row r's temperature is `temperatures[r]` (0: greedy, one entry;
    /// not a positive finite number: the row is bad).
    pub row_t: u32,
    /// 1: row r's nucleus mass is `top_p[r]` (outside (0, 1]: counted into
    /// the check slot's second word and taken as 1).
    pub row_p: u32,
    /// 1: row r's min-p is `min_p[r]` (outside [0, 1]: counted into the
    /// third word and taken as 0).
    pub row_min_p: u32,
    /// 1: row r draws with `uniform(seed, r, 0)`, computed in the kernel;
    /// 0: with `uniforms[r]`.
    pub seeded: u32,
    /// 32-byte check slots (one per vector core of the device; TOPPDRAW's
    /// format: bad probabilities, bad p, bad min_p).
    pub check_slots: u32,
    /// 1: row r's number of kept entries with mass (y > 0) goes to
    /// `kept_count[r]`; 0: not counted (`kept_count` unused).
    pub count_kept: u32,
}

/// The TOPKDRAW kernel for logits of one type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopKDraw {
    dtype: DType,
}

impl TopKDraw {
    /// Logit types (those of TOPK).
    pub const DTYPES: [DType; 3] = [DType::F16, DType::Bf16, DType::F32];

    /// The kernel for logits of `dtype`.
    pub fn new(dtype: DType) -> Result<TopKDraw, AlgoError> {
        if !Self::DTYPES.contains(&dtype) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "TopKDraw",
                dtype,
                reason: "logits must be f16, bf16 or f32".into(),
            });
        }
        Ok(TopKDraw { dtype })
    }

    /// Plans `rows` rows of `width` top-k entries: whole rows, split evenly
    /// over the vector cores. The parameters (scale, p, min-p, keep, seed,
    /// per-row flags) are the caller's to set in the tiling.
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u64,
        width: u64,
    ) -> Result<LaunchPlan<TopKDrawTiling>, AlgoError> {
        if rows == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "rows",
                reason: "an empty batch needs no launch".into(),
            });
        }
        if width == 0 || width > TOPKDRAW_MAX_WIDTH {
            return Err(AlgoError::InvalidArgument {
                name: "width",
                reason: format!("{width}: must be in 1..={TOPKDRAW_MAX_WIDTH}"),
            });
        }
        let cores = u64::from(soc.vector_cores.max(1));
        let per_core = rows.div_ceil(cores);
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: rows.div_ceil(per_core) as u32,
            workspace_bytes: 0,
            tiling: TopKDrawTiling {
                rows,
                width,
                per_core,
                seed: 0,
                scale: 1.0,
                p: 1.0,
                min_p: 0.0,
                keep_count: width as u32,
                row_t: 0,
                row_p: 0,
                row_min_p: 0,
                seeded: 1,
                check_slots: soc.vector_cores.max(1),
                count_kept: 0,
            },
        })
    }
}

impl Kernel for TopKDraw {
    fn name(&self) -> String {
        format!("topk_draw_{}", self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &[
            "values",
            "indices",
            "temperatures",
            "keep_k",
            "top_p",
            "min_p",
            "uniforms",
            "tokens",
            "kept",
            "kept_count",
            "check",
        ]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<TopKDrawTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "topk_draw_kernel.h",
            &format!(
                "Sampling over sorted top-k logits (docs/algorithms.md, Sampling from logits): \
                 softmax, min-p, top-p and the draw in one launch, {} logits.",
                self.dtype
            ),
            &format!("TopKDraw<{}>", self.dtype.cpp()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_cover_the_batch() {
        let soc = soc::Soc::Ascend910B4.profile();
        let k = TopKDraw::new(DType::F32).unwrap();
        for rows in [1, 7, 40, 41, 96, 4096] {
            let p = k.plan(&soc, rows, 50).unwrap();
            let t = p.tiling;
            assert!(u64::from(p.block_dim) * t.per_core >= rows);
            assert!(u64::from(p.block_dim - 1) * t.per_core < rows);
            assert!(p.block_dim <= soc.vector_cores);
            assert_eq!(t.check_slots, soc.vector_cores);
        }
        assert!(k.plan(&soc, 0, 5).is_err());
        assert!(k.plan(&soc, 3, 0).is_err());
        assert!(k.plan(&soc, 3, TOPKDRAW_MAX_WIDTH + 1).is_err());
        assert!(k.plan(&soc, 3, TOPKDRAW_MAX_WIDTH).is_ok());
        assert!(TopKDraw::new(DType::I8).is_err());
    }
}
