//! COMPRESS (masked select) and SPLIT (SPLITIND, stable partition with
//! indices) on the vector cores.
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::runtime;

pub use algos::split::MAX_SPLIT_LEN;

/// Value types of [`compress`] and [`split`]: every 16- and 32-bit element
/// type (f16, bf16, i16, u16, i32, f32). Values are moved as bit patterns,
/// so NaN payloads, -0.0 and subnormals come back unchanged.
pub trait SplitValue: Element {}
impl SplitValue for half::f16 {}
impl SplitValue for half::bf16 {}
impl SplitValue for i16 {}
impl SplitValue for u16 {}
impl SplitValue for i32 {}
impl SplitValue for f32 {}

/// Options of [`compress_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompressOptions {
    /// Also return the original index (i32) of every kept element.
    pub want_indices: bool,
}

/// Options of [`split_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitOptions {
    /// Also return the original index (i32) of every output element
    /// (SPLITIND; the default). Without them (SPLIT) the kernel writes 4
    /// bytes less per element.
    pub want_indices: bool,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions { want_indices: true }
    }
}

/// The result of [`compress`]: the kept values in input order.
///
/// The buffers are allocated at the input's length `n` (the count is only
/// known on the device) and hold `count` valid elements at the front; the
/// rest is unspecified. [`Compressed::download_values`] downloads only the
/// valid part.
#[derive(Debug)]
pub struct Compressed<T: Element> {
    /// Kept values in input order, `count` valid elements at the front.
    pub values: DeviceBuffer<T>,
    /// Original index of every kept value (when asked for), `count` valid.
    pub indices: Option<DeviceBuffer<i32>>,
    /// Number of kept values (flags equal to 1).
    pub count: usize,
}

impl<T: Element> Compressed<T> {
    /// The `count` kept values.
    pub fn download_values(&self) -> Result<Vec<T>> {
        self.values.download_prefix(self.count)
    }
    /// The `count` original indices, when they were asked for.
    pub fn download_indices(&self) -> Result<Option<Vec<i32>>> {
        self.indices
            .as_ref()
            .map(|i| i.download_prefix(self.count))
            .transpose()
    }
}

/// The result of [`split`]: a stable partition.
#[derive(Debug)]
pub struct Split<T: Element> {
    /// The `ones` elements whose flag is 1, in input order, then the
    /// elements whose flag is 0, in input order (length n).
    pub values: DeviceBuffer<T>,
    /// The original index of every element of `values` (length n, a
    /// permutation of `0..n`); `None` only from [`split_with`] without
    /// `want_indices`.
    pub indices: Option<DeviceBuffer<i32>>,
    /// Number of flags equal to 1 (where the flag-0 group starts).
    pub ones: usize,
}

/// COMPRESS (PyTorch `masked_select`): the values whose flag is 1, in input
/// order, and their count. See [`compress_with`].
pub fn compress<T: SplitValue>(
    device: &Device,
    values: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
) -> Result<Compressed<T>> {
    compress_with(device, values, flags, CompressOptions::default())
}

/// COMPRESS with options: the values whose flag is 1, in input order, their
/// count and, with `want_indices`, their original indices (i32).
///
/// One launch on every vector core, with the scan of the flags fused in
/// (docs/algorithms.md, section "Split and Compress (SPLIT, SPLITIND,
/// COMPRESS)"); the count comes back with the kernel's per-core slots (one
/// small download, no extra launch). Exact: values are moved as bit
/// patterns.
///
/// Errors ([`Error::InvalidArgument`]): `flags` holds a value other than 0
/// or 1 (checked on the device, reported after the launch), its length
/// differs from `values`, or a buffer lives on another device; inputs
/// longer than [`MAX_SPLIT_LEN`] (indices are i32). `n = 0` needs no launch.
pub fn compress_with<T: SplitValue>(
    device: &Device,
    values: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
    options: CompressOptions,
) -> Result<Compressed<T>> {
    let out = run(
        device,
        values,
        flags,
        algos::SplitKind::Compress,
        options.want_indices,
    )?;
    Ok(Compressed {
        values: out.values,
        indices: out.indices,
        count: out.ones,
    })
}

/// SPLITIND: stable partition of `values` by `flags` (flag-1 elements first,
/// then flag-0 elements, each group in input order), the original index (i32)
/// of every output element, and the number of ones.
///
/// One launch on every vector core, the scan of the flags fused in: flag-1
/// element i goes to `scan(f)[i]`, flag-0 element i to `ones + i - scan(f)[i]`
/// (exclusive scan). Exact. Errors as for [`compress_with`].
pub fn split<T: SplitValue>(
    device: &Device,
    values: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
) -> Result<Split<T>> {
    split_with(device, values, flags, SplitOptions::default())
}

/// SPLIT with options: as [`split`], the indices only with `want_indices`.
pub fn split_with<T: SplitValue>(
    device: &Device,
    values: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
    options: SplitOptions,
) -> Result<Split<T>> {
    run(
        device,
        values,
        flags,
        algos::SplitKind::Split,
        options.want_indices,
    )
}

fn run<T: SplitValue>(
    device: &Device,
    values: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
    kind: algos::SplitKind,
    want_indices: bool,
) -> Result<Split<T>> {
    if !device.same(values.device()) {
        return Err(Error::InvalidArgument {
            name: "values",
            reason: "the buffer lives on another device".into(),
        });
    }
    if !device.same(flags.device()) {
        return Err(Error::InvalidArgument {
            name: "flags",
            reason: "the buffer lives on another device".into(),
        });
    }
    let n = values.len();
    if flags.len() != n {
        return Err(Error::InvalidArgument {
            name: "flags",
            reason: format!("{} flags for {n} values", flags.len()),
        });
    }
    if n as u64 > MAX_SPLIT_LEN {
        return Err(Error::InvalidArgument {
            name: "values",
            reason: format!("{n} elements: at most {MAX_SPLIT_LEN} (indices are i32)"),
        });
    }
    let out = device.alloc_uninit::<T>(n)?;
    let indices = if want_indices {
        Some(device.alloc_uninit::<i32>(n)?)
    } else {
        None
    };
    if n == 0 {
        return Ok(Split {
            values: out,
            indices,
            ones: 0,
        });
    }
    let ones = launch::<T>(
        device,
        [values.ptr(), flags.ptr()],
        n,
        [
            out.ptr(),
            indices
                .as_ref()
                .map_or(std::ptr::null_mut(), DeviceBuffer::ptr),
        ],
        kind,
        "flags",
    )?;
    Ok(Split {
        values: out,
        indices,
        ones,
    })
}

/// One SPLIT or COMPRESS launch over `n >= 1` elements at raw device
/// pointers `[values, flags]` into `[out, indices]` (indices may be null):
/// also for views into buffers (the segmented operations compress shifted
/// ranges). Returns the number of ones; refuses flags other than 0/1,
/// naming the caller's argument `flags_name`.
pub(crate) fn launch<T: SplitValue>(
    device: &Device,
    [values, flags]: [*mut std::ffi::c_void; 2],
    n: usize,
    [out, indices]: [*mut std::ffi::c_void; 2],
    kind: algos::SplitKind,
    flags_name: &'static str,
) -> Result<usize> {
    let want_indices = !indices.is_null();
    let algo = algos::SplitInd::new(kind, T::DTYPE)?;
    let mut plan = algo.plan(device.profile(), n as u64, want_indices)?;
    let slot_ints = (plan.workspace_bytes.min(plan.tiling.bits_offset) / 4) as usize;
    let workspace = device.alloc_zeroed::<i32>(plan.workspace_bytes.div_ceil(4) as usize)?;
    let args = runtime::SplitArgs {
        x: values,
        flags,
        y: out,
        indices,
        workspace: workspace.ptr(),
    };
    device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    // Per wave and core a slot: count of non-zero flags, smallest flag,
    // largest flag (all zero when the core had nothing in the wave).
    let slots = workspace.download_prefix(slot_ints)?;
    let mut ones = 0usize;
    let (mut lo, mut hi) = (0i32, 0i32);
    for slot in slots.chunks_exact(8) {
        ones += usize::try_from(slot[0]).unwrap_or(0);
        lo = lo.min(slot[1]);
        hi = hi.max(slot[2]);
    }
    if lo < 0 || hi > 1 {
        let bad = if lo < 0 { lo } else { hi };
        return Err(Error::InvalidArgument {
            name: flags_name,
            reason: format!("flags must be 0 or 1, found {bad}"),
        });
    }
    Ok(ones)
}
