//! Device-to-device copy with the COPY kernel (the bandwidth baseline).
use crate::device::{DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_len, Stream};

/// Copies `src` into a new buffer with the COPY kernel (GM -> UB -> GM on
/// every vector core).
///
/// Numerics: none; the bytes are moved unchanged (NaN payloads, -0.0 and
/// subnormals included). An empty `src` gives an empty buffer without a
/// launch. Errors: only the device's (allocation past the HBM,
/// [`Error::Runtime`] from `aclrtMalloc`).
pub fn copy<T: Element>(src: &DeviceBuffer<T>) -> Result<DeviceBuffer<T>> {
    let device = src.device();
    let mut dst = device.alloc_uninit::<T>(src.len())?;
    if src.is_empty() {
        return Ok(dst);
    }
    device.blocking(|stream| copy_on(stream, src, &mut dst))?;
    Ok(dst)
}

/// The stream-ordered [`copy`]: enqueues the COPY kernel on `stream`, from
/// `src` into `dst` (caller-owned, exactly as long as `src`), and returns
/// at once. No allocation, no host synchronisation, and no workspace (the
/// kernel needs none). An empty `src` enqueues nothing.
///
/// Errors ([`Error::InvalidArgument`]): `src` or `dst` on another device
/// than the stream, `dst` of another length than `src`. Failures of the
/// launch itself come with [`Stream::synchronize`].
pub fn copy_on<T: Element>(
    stream: &Stream,
    src: &DeviceBuffer<T>,
    dst: &mut DeviceBuffer<T>,
) -> Result<()> {
    stream.check_device(src, "src")?;
    stream.check_device(dst, "dst")?;
    check_len(dst.len(), src.len(), "dst")?;
    if src.is_empty() {
        return Ok(());
    }
    let mut plan = algos::Copy
        .plan(stream.device().profile(), src.bytes() as u64)
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
    stream.with_queue(&[src, &*dst], |s| runtime::launch(s, &mut plan, args))
}
