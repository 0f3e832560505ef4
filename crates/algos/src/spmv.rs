//! CSR SpMV (docs/algorithms.md, section "SpMV (CSR, y = A x)"), `y = A x` as a scan: the products
//! `z[i] = val[i] * x[col[i]]` ([`SpmvStage::Products`]), the inclusive fp32
//! scan `zs` of z (the library's scan, VECTORSCAN for f32), and the row sums
//! `y[r] = w[r] - w[r-1]` with `w[r] = zs[row_ptr[r+1] - 1]`
//! ([`SpmvStage::Rows`]). Both kernels run on every vector core and read
//! their source (x, zs) from GM through the windowed gather of the blocks
//! header (`WindowGather`: UB windows over the index range of a chunk, UB
//! Gather with byte offsets, Select of the in-window entries), so x and zs
//! may be far longer than the Unified Buffer.
//!
//! Both kernels check their indices on the device: the products kernel the
//! columns (in [0, n)), the rows kernel that row_ptr does not decrease; a
//! core that finds a bad entry writes 1 + its index into its 32-byte slot of
//! the `check` buffer, which the host reads after the launch.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Tiling of the SpMV kernels.
#[derive(Debug, Clone, Copy, PartialEq, Tiling)]
#[repr(C)]
pub struct SpmvTiling {
    /// Products: nonzeros; rows: rows (m).
    pub count: u64,
    /// Length of the gathered source: products: x (n); rows: zs (nnz).
    pub src_len: u64,
    /// Nonzeros (products) or rows per vector core (every launched core
    /// has some).
    pub per_core: u64,
    /// Check slots the launch writes (the device's vector cores): each core
    /// its own, the last launched core also those of the cores that do not
    /// run, so the caller zeroes none.
    pub slots: u64,
    /// Rows: y = alpha * (the row's sum) + beta * y (1 and 0 for y = A x;
    /// beta = 0 does not read y). Products: unused.
    pub alpha: f32,
    /// See `alpha`.
    pub beta: f32,
}

/// Which SpMV kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpmvStage {
    /// `z[i] = val[i] * x[col[i]]` in fp32, values and x of one type (f16,
    /// bf16 or f32).
    Products(DType),
    /// `y[r] = zs[row_ptr[r+1] - 1] - zs[row_ptr[r] - 1]` (fp32), then
    /// `alpha * y[r] + beta * (y's old value)` when the tiling asks.
    Rows,
}

/// An SpMV kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spmv {
    stage: SpmvStage,
}

/// Entries (nonzeros, or row_ptr entries) a vector core handles per step.
pub const SPMV_CHUNK: u64 = 4096;
/// Bytes of the UB window through which x (or zs) is gathered.
pub const SPMV_WINDOW_BYTES: u64 = 64 * 1024;
/// Bytes of one core's slot in the check buffer (i32: 1 + the index of the
/// first bad entry the core found, 0 for none; padding).
pub const SPMV_SLOT_BYTES: u64 = 32;

impl Spmv {
    /// Value types of the products kernel.
    pub const DTYPES: [DType; 3] = [DType::F16, DType::Bf16, DType::F32];

    /// The kernel of `stage`.
    pub fn new(stage: SpmvStage) -> Result<Spmv, AlgoError> {
        if let SpmvStage::Products(dtype) = stage {
            if !Self::DTYPES.contains(&dtype) {
                return Err(AlgoError::UnsupportedDtype {
                    algorithm: "Spmv",
                    dtype,
                    reason: "values must be f16, bf16 or f32".into(),
                });
            }
        }
        Ok(Spmv { stage })
    }

    /// Plans the products over `count` nonzeros gathering from `src_len`
    /// elements of x, or the rows stage over `count` rows gathering from
    /// `src_len` scanned products: equal ranges of whole chunks over the
    /// vector cores, one [`SPMV_SLOT_BYTES`] check slot per vector core of
    /// the device (the workspace, every slot written by the launch).
    pub fn plan(
        &self,
        soc: &SocProfile,
        count: u64,
        src_len: u64,
    ) -> Result<LaunchPlan<SpmvTiling>, AlgoError> {
        if count == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "count",
                reason: "an empty input needs no launch".into(),
            });
        }
        if count > i32::MAX as u64 || src_len > i32::MAX as u64 {
            return Err(AlgoError::InvalidArgument {
                name: "count",
                reason: format!("{count} entries from {src_len}: indices are i32"),
            });
        }
        let cores = u64::from(soc.vector_cores.max(1));
        let grain = match self.stage {
            SpmvStage::Products(_) => SPMV_CHUNK,
            SpmvStage::Rows => SPMV_CHUNK - 64,
        };
        let per_core = count.div_ceil(cores).div_ceil(grain) * grain;
        let block_dim = count.div_ceil(per_core);
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: cores * SPMV_SLOT_BYTES,
            tiling: SpmvTiling {
                count,
                src_len,
                per_core,
                slots: cores,
                alpha: 1.0,
                beta: 0.0,
            },
        })
    }

    fn val_dtype(&self) -> DType {
        match self.stage {
            SpmvStage::Products(d) => d,
            SpmvStage::Rows => DType::F32,
        }
    }
}

impl Kernel for Spmv {
    fn name(&self) -> String {
        match self.stage {
            SpmvStage::Products(d) => format!("spmv_products_{}", d.tag()),
            SpmvStage::Rows => "spmv_rows_f32".into(),
        }
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["values", "indices", "src", "out", "check"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SpmvTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        let dtype = self.val_dtype();
        let chunk = SPMV_CHUNK;
        let window = SPMV_WINDOW_BYTES / dtype.size() as u64;
        match self.stage {
            SpmvStage::Products(_) => render_entry(
                self,
                "spmv_kernel.h",
                &format!(
                    "SpMV (docs/algorithms.md, SpMV): the products, {dtype} values, chunks of {chunk}, \
                     windows of {window}."
                ),
                &format!("SpmvProducts<{}, {chunk}, {window}>", dtype.cpp()),
            ),
            SpmvStage::Rows => render_entry(
                self,
                "spmv_kernel.h",
                &format!(
                    "SpMV (docs/algorithms.md, SpMV): the rows' sums, chunks of {chunk}, windows of {window}."
                ),
                &format!("SpmvRows<{chunk}, {window}>"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_whole_chunks_and_cover_count() {
        let soc = soc::Soc::Ascend910B4.profile();
        for stage in [SpmvStage::Products(DType::F32), SpmvStage::Rows] {
            let k = Spmv::new(stage).unwrap();
            for count in [1, 63, 4032, 4033, 4096, 4097, 40 * 4096 + 3, 1 << 22] {
                let p = k.plan(&soc, count, 7).unwrap();
                let t = p.tiling;
                let grain = if stage == SpmvStage::Rows { 4032 } else { 4096 };
                assert_eq!(t.per_core % grain, 0);
                assert!(u64::from(p.block_dim) * t.per_core >= count);
                assert!(u64::from(p.block_dim - 1) * t.per_core < count);
                assert!(p.block_dim <= soc.vector_cores);
                assert_eq!(
                    p.workspace_bytes,
                    u64::from(soc.vector_cores) * SPMV_SLOT_BYTES
                );
                assert_eq!(p.tiling.slots, u64::from(soc.vector_cores));
            }
            assert!(k.plan(&soc, 0, 1).is_err());
            assert!(k.plan(&soc, 1 << 31, 1).is_err());
        }
        assert!(Spmv::new(SpmvStage::Products(DType::I8)).is_err());
        assert_eq!(
            Spmv::new(SpmvStage::Products(DType::F16)).unwrap().name(),
            "spmv_products_f16"
        );
    }
}
