//! Scans on the vector unit (OPSCAN): max and min, and sums (`VectorScan`).
use super::algorithm::Algorithm;
use super::input::{Accumulator, Batch, ScanInput, ScanOp, ScanOptions, ScanOutput};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::runtime;

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

/// Scan of `x` on the vector cores: max/min, or a sum run as
/// `Algorithm::VectorScan`.
///
/// Every row is an independent scan; rows of at most 256 elements are
/// scanned a tile's worth of rows at a time, longer rows in tiles of 256
/// segments; long inputs are split over all vector cores (see
/// `algos::OpScan::plan`). Max and min are exact and propagate NaN as
/// `torch.cummax` does (the kernel stores NaN from a row's first NaN on);
/// sums accumulate in f32 (error bound: [`Algorithm::error_depth`]) or
/// exactly in i32.
pub(crate) fn scan_op<T: ScanInput>(
    device: &Device,
    x: Batch<'_, T>,
    options: ScanOptions,
) -> Result<ScanOutput<T::Acc>> {
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
    // The dtype is checked before the empty case: whether an input type is
    // supported does not depend on its length.
    let algo = algos::OpScan::new(T::DTYPE, op)?;
    let (rows, len) = (x.row_count(), x.row_len());
    let values = device.alloc_uninit::<T::Acc>(rows * len)?;
    if len == 0 {
        let totals = if options.want_total {
            Some(vec![T::Acc::identity(options.op); rows])
        } else {
            None
        };
        return Ok(ScanOutput { values, totals });
    }
    let mut plan = algo.plan(
        device.profile(),
        rows as u64,
        len as u64,
        options.exclusive,
        options.want_total,
    )?;
    let stride = plan.tiling.total_stride as usize;
    let workspace = device.alloc_zeroed::<u8>(plan.workspace_bytes as usize)?;
    let totals =
        device.alloc_zeroed::<T::Acc>(if options.want_total { rows * stride } else { 1 })?;
    let args = runtime::OpScanArgs {
        x: x.data().ptr(),
        y: values.ptr(),
        totals: totals.ptr(),
        workspace: workspace.ptr(),
    };
    device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    let totals = if options.want_total {
        Some(totals.download()?.into_iter().step_by(stride).collect())
    } else {
        None
    };
    Ok(ScanOutput { values, totals })
}
