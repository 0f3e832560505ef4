//! REDUCE (sum, max, min) on the vector cores (docs/algorithms.md,
//! section "Reduce (REDUCE)").
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::opscan::{OpScan, VectorOp};
use crate::render::render_entry;
use crate::scanu::{scan_accumulator, validate_scan_dtype};

/// Tiling of the REDUCE kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct ReduceTiling {
    /// Elements to sum.
    pub n: u64,
    /// Elements per vector core (the last core takes the rest).
    pub per_core: u64,
}

/// A REDUCE (sum) kernel instance for one input type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceSum {
    dtype: DType,
}

/// Elements per vector chunk: 4096 accumulators (16 KiB) per buffer.
const CHUNK: u64 = 4096;

impl ReduceSum {
    /// Input types: f16 (sum in f32) and i8 (sum in i32).
    pub const DTYPES: [DType; 3] = [DType::F16, DType::Bf16, DType::I8];

    /// A REDUCE instance for `dtype`.
    pub fn new(dtype: DType) -> Result<ReduceSum, AlgoError> {
        validate_scan_dtype("ReduceSum", dtype)?;
        Ok(ReduceSum { dtype })
    }

    /// Bytes of GM workspace (one 32-byte slot per vector core).
    pub fn plan(&self, soc: &SocProfile, n: u64) -> Result<LaunchPlan<ReduceTiling>, AlgoError> {
        if n == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: "an empty sum needs no launch".into(),
            });
        }
        let per_core = n.div_ceil(u64::from(soc.vector_cores)).div_ceil(CHUNK) * CHUNK;
        let block_dim = n.div_ceil(per_core);
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: block_dim * 32,
            tiling: ReduceTiling { n, per_core },
        })
    }
}

/// The kernel source of a reduction by `op` of `dtype` inputs.
fn render_reduce<K: Kernel>(k: &K, dtype: DType, op: VectorOp) -> Result<String, askama::Error> {
    let acc = scan_accumulator(dtype);
    render_entry(
        k,
        "reduce_kernel.h",
        &format!(
            "Reduce (docs/algorithms.md, Reduce): {} of {dtype} into {acc}, chunks of {CHUNK}.",
            op.tag()
        ),
        &format!(
            "Reduce<ascend_scan::{}, {}, {}, {CHUNK}>",
            op.cpp_struct(),
            dtype.cpp(),
            acc.cpp()
        ),
    )
}

impl Kernel for ReduceSum {
    fn name(&self) -> String {
        format!("reduce_sum_{}", self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["x", "total", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<ReduceTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_reduce(self, self.dtype, VectorOp::Sum)
    }
}

/// A REDUCE max or min kernel instance (exact): input type and operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceMaxMin {
    dtype: DType,
    op: VectorOp,
}

impl ReduceMaxMin {
    /// Input types: those of the max/min scans ([`OpScan::DTYPES`]: f16,
    /// bf16 and f32 with f32 results, i8 and i32 with i32 results).
    pub const DTYPES: [DType; 5] = OpScan::DTYPES;

    /// A REDUCE max/min instance for `dtype`.
    pub fn new(dtype: DType, op: VectorOp) -> Result<ReduceMaxMin, AlgoError> {
        OpScan::new(dtype, op)?;
        Ok(ReduceMaxMin { dtype, op })
    }

    /// Same split and workspace as the sum (one 32-byte partial slot per
    /// vector core). Float inputs also write one 32-byte NaN slot per
    /// launched core into the `nan` argument (16 i16 lanes: for f16 and
    /// bf16 the largest `bits & 0x7fff` the core saw, NaN above the bits of
    /// +inf; for f32 its NaN marks OR-ed, NaN if any is set); integer
    /// inputs leave it untouched.
    pub fn plan(&self, soc: &SocProfile, n: u64) -> Result<LaunchPlan<ReduceTiling>, AlgoError> {
        let mut plan = ReduceSum { dtype: self.dtype }.plan(soc, n)?;
        plan.kernel = self.name();
        Ok(plan)
    }
}

impl Kernel for ReduceMaxMin {
    fn name(&self) -> String {
        format!("reduce_{}_{}", self.op.tag(), self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["x", "total", "nan", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<ReduceTiling>()
    }
    fn family(&self) -> String {
        "ReduceMaxMin".into()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_reduce(self, self.dtype, self.op)
    }
}
