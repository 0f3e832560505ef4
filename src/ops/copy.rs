//! Device-to-device copy with the COPY kernel (the bandwidth baseline).
use crate::device::{DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::runtime;

/// Copies `src` into a new buffer with the COPY kernel (GM -> UB -> GM on
/// every vector core).
///
/// Numerics: none; the bytes are moved unchanged (NaN payloads, -0.0 and
/// subnormals included). An empty `src` gives an empty buffer without a
/// launch. Errors: only the device's (allocation past the HBM,
/// [`Error::Runtime`] from `aclrtMalloc`).
pub fn copy<T: Element>(src: &DeviceBuffer<T>) -> Result<DeviceBuffer<T>> {
    let device = src.device();
    let dst = device.alloc_uninit::<T>(src.len())?;
    if src.is_empty() {
        return Ok(dst);
    }
    let mut plan = algos::Copy
        .plan(device.profile(), src.bytes() as u64)
        .map_err(|e| match e {
            algos::AlgoError::InvalidArgument { reason, .. } => Error::InvalidArgument {
                name: "src",
                reason,
            },
            other => other.into(),
        })?;
    let args = runtime::CopyArgs {
        src: src.ptr(),
        dst: dst.ptr(),
    };
    device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    Ok(dst)
}
