//! Reductions.
use crate::device::{Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::ffi;
use crate::scan::{ScanInput, MAX_I8_SCAN_LEN};

/// Sum of all elements of `x`, on every vector core of its device.
///
/// Numerics: as [`scan`](crate::scan): f16 sums in f32 (each core adds
/// 4096-wide f32 vectors, then its lanes, then the cores' partials; error <=
/// (n/4096 + 4096 + cores) * 2^-24 * sum|x|), i8 sums exactly in i32 (inputs
/// longer than [`MAX_I8_SCAN_LEN`] are refused). An empty input sums to 0.
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
    if x.is_empty() {
        return Ok(T::Acc::default());
    }
    let algo = algos::ReduceSum::new(T::DTYPE)?;
    let mut plan = algo.plan(device.profile(), x.len() as u64)?;
    let workspace = device.alloc_zeroed::<u8>(plan.workspace_bytes as usize)?;
    let total = device.alloc_zeroed::<T::Acc>(1)?;
    device
        .run(|stream| ffi::launch(stream, &mut plan, &[x.ptr(), total.ptr(), workspace.ptr()]))?;
    Ok(total.download()?[0])
}
