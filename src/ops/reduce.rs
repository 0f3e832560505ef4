//! Reductions.
use super::scan::vector::max_min;
use super::scan::{Accumulator, ScanInput, ScanOp, MAX_I8_SCAN_LEN};
use crate::device::{Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::runtime;

/// Sum of all elements of `x`, on every vector core of its device.
///
/// Numerics: as [`scan`](crate::scan): f16 sums in f32 (each core adds
/// 4096-wide f32 vectors, then its lanes, then the cores' partials; error <=
/// (n/4096 + 4096 + cores) * 2^-24 * sum|x|), i8 sums exactly in i32 (inputs
/// longer than [`MAX_I8_SCAN_LEN`] are refused). An empty input sums to 0.
/// bf16 sums like f16; f32 input is [`Error::Unsupported`] (no f32 reduce
/// kernel; `scan` with [`Algorithm::VectorScan`](crate::Algorithm) and
/// `want_total` sums f32).
pub fn reduce_sum<T: ScanInput>(device: &Device, x: &DeviceBuffer<T>) -> Result<T::Acc> {
    if !device.same(x.device()) {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: "the buffer lives on another device".into(),
        });
    }
    if T::DTYPE == algos::DType::I8 && x.len() > MAX_I8_SCAN_LEN {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: format!(
                "{} int8 elements could overflow the int32 sum (at most {MAX_I8_SCAN_LEN})",
                x.len()
            ),
        });
    }
    // Checked before the empty case: support does not depend on the length.
    let algo = algos::ReduceSum::new(T::DTYPE)?;
    if x.is_empty() {
        return Ok(T::Acc::default());
    }
    let mut plan = algo.plan(device.profile(), x.len() as u64)?;
    let workspace = device.alloc_zeroed::<u8>(plan.workspace_bytes as usize)?;
    let total = device.alloc_zeroed::<T::Acc>(1)?;
    let args = runtime::ReduceArgs {
        x: x.ptr(),
        total: total.ptr(),
        workspace: workspace.ptr(),
    };
    device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    Ok(total.download()?[0])
}

/// Maximum of all elements of `x` ([`reduce`] with [`ScanOp::Max`]).
pub fn reduce_max<T: ScanInput>(device: &Device, x: &DeviceBuffer<T>) -> Result<T::Acc> {
    reduce(device, x, ScanOp::Max)
}

/// Minimum of all elements of `x` ([`reduce`] with [`ScanOp::Min`]).
pub fn reduce_min<T: ScanInput>(device: &Device, x: &DeviceBuffer<T>) -> Result<T::Acc> {
    reduce(device, x, ScanOp::Min)
}

/// `op` over all elements of `x`, on every vector core of its device: sum
/// ([`reduce_sum`]), max or min. Max and min take f16 and i8 input (bf16 and
/// f32: [`Error::Unsupported`], whatever the length).
///
/// Max and min are exact (f16 -> f32 and i8 -> i32 convert exactly). The
/// reduction of an empty input is the operator's identity: 0 for sum, -inf
/// (f16 input) / `i32::MIN` (i8 input) for max, +inf / `i32::MAX` for min.
/// An f16 input holding a NaN gives NaN, as `torch.max`/`torch.min` do:
/// every core reports whether it read one (the NaN behaviour of the vector
/// Max/Min instructions is not documented for Atlas A2, so the device's
/// total is not used then). Which zero the max of -0.0 and +0.0 is, is not
/// specified.
pub fn reduce<T: ScanInput>(device: &Device, x: &DeviceBuffer<T>, op: ScanOp) -> Result<T::Acc> {
    let Some(vector_op) = max_min(op) else {
        return reduce_sum(device, x);
    };
    if !device.same(x.device()) {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: "the buffer lives on another device".into(),
        });
    }
    // The vector max/min take f16 and i8 (as the max/min scans); checked
    // before the empty case, so support does not depend on the length.
    algos::OpScan::new(T::DTYPE, vector_op)?;
    let algo = algos::ReduceMaxMin::new(T::DTYPE, vector_op)?;
    if x.is_empty() {
        return Ok(T::Acc::identity(op));
    }
    let mut plan = algo.plan(device.profile(), x.len() as u64)?;
    let cores = plan.block_dim as usize;
    let workspace = device.alloc_zeroed::<u8>(plan.workspace_bytes as usize)?;
    let total = device.alloc_zeroed::<T::Acc>(1)?;
    let args = runtime::ReduceArgs {
        x: x.ptr(),
        total: total.ptr(),
        workspace: workspace.ptr(),
    };
    device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    if T::DTYPE == algos::DType::F16 && saw_nan(&workspace, cores * 32, cores)? {
        if let Some(nan) = T::Acc::not_a_number() {
            return Ok(nan);
        }
    }
    Ok(total.download()?[0])
}

/// Whether a kernel saw a NaN in f16 input: each core left, at byte
/// `offset` of the workspace, a 32-byte slot of 16 i16 lanes holding the
/// largest `bits & 0x7fff` it read; anything above 0x7c00 (inf) is a NaN.
fn saw_nan(workspace: &DeviceBuffer<u8>, offset: usize, cores: usize) -> Result<bool> {
    let bytes = workspace.download()?;
    let slots = bytes
        .get(offset..offset + cores * 32)
        .ok_or_else(|| Error::Unsupported("workspace too small for the NaN slots".into()))?;
    Ok(slots
        .chunks_exact(2)
        .any(|b| i16::from_le_bytes([b[0], b[1]]) > 0x7c00))
}
