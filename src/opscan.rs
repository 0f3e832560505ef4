//! Operator scans (max, min) on the vector unit.
use crate::device::Device;
use crate::error::{Error, Result};
use crate::scan::{Batch, ScanInput, ScanOptions, ScanOutput};

/// Max/min scan of `x` (options.op is not `Sum`).
pub(crate) fn scan_op<T: ScanInput>(
    _device: &Device,
    _x: Batch<'_, T>,
    options: ScanOptions,
) -> Result<ScanOutput<T::Acc>> {
    Err(Error::Unsupported(format!(
        "{:?} scans are not built yet",
        options.op
    )))
}
