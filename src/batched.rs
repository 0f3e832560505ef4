//! Batched sum scans (many equal-length rows).
use crate::device::Device;
use crate::error::{Error, Result};
use crate::scan::{Batch, ScanInput, ScanOptions, ScanOutput};

/// Sum scan of every row of `x` (more than one row).
pub(crate) fn scan_batch<T: ScanInput>(
    _device: &Device,
    _x: Batch<'_, T>,
    _options: ScanOptions,
) -> Result<ScanOutput<T::Acc>> {
    Err(Error::Unsupported("batched scans are not built yet".into()))
}
