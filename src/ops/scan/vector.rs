//! Scans on the vector unit (OPSCAN): max and min, and sums (`VectorScan`).
use super::algorithm::Algorithm;
use super::input::{ScanInput, ScanOp, ScanOptions};
use crate::device::Device;
use crate::error::{Error, Result};

/// The vector operator of a [`ScanOp`].
pub(crate) fn vector_op(op: ScanOp) -> algos::VectorOp {
    match op {
        ScanOp::Sum => algos::VectorOp::Sum,
        ScanOp::Max => algos::VectorOp::Max,
        ScanOp::Min => algos::VectorOp::Min,
    }
}

/// The vector operator of a non-sum [`ScanOp`].
pub(crate) fn max_min(op: ScanOp) -> Option<algos::VectorOp> {
    match op {
        ScanOp::Sum => None,
        other => Some(vector_op(other)),
    }
}

/// The plan of a scan on the vector cores: max/min, or a sum run as
/// `Algorithm::VectorScan`; None for rows of length 0 (after checking the
/// algorithm and the dtype: support does not depend on the length).
///
/// Every row is an independent scan; rows of at most 256 elements are
/// scanned a tile's worth of rows at a time, longer rows in tiles of 256
/// segments; long inputs are split over all vector cores (see
/// `algos::OpScan::plan`). Max and min are exact and propagate NaN as
/// `torch.cummax` does (the kernel stores NaN from a row's first NaN on);
/// sums accumulate in f32 (error bound: [`Algorithm::error_depth`]) or
/// exactly in i32.
pub(crate) fn plan<T: ScanInput>(
    device: &Device,
    rows: usize,
    len: usize,
    options: ScanOptions,
) -> Result<Option<algos::LaunchPlan<algos::OpScanTiling>>> {
    let op = vector_op(options.op);
    if !matches!(options.algorithm, Algorithm::Auto | Algorithm::VectorScan) {
        return Err(Error::InvalidArgument {
            name: "options.algorithm",
            reason: format!(
                "{:?} scans run on the vector unit: {} is a cube sum scan, use Algorithm::Auto or \
                 Algorithm::VectorScan",
                options.op, options.algorithm
            ),
        });
    }
    let algo = algos::OpScan::new(T::DTYPE, op)?;
    if len == 0 {
        return Ok(None);
    }
    Ok(Some(algo.plan(
        device.profile(),
        rows as u64,
        len as u64,
        options.exclusive,
        options.want_total,
    )?))
}
