//! `cummax` and `cummin`: the running max or min of each row with the
//! position it came from, as `torch.cummax` / `torch.cummin` define them.
//! Two launches on the vector cores: the value scan (OPSCAN), then its
//! positions (OPSCAN's indices mode, `algos::OpScanIndices`).
use super::input::{check_row_len, Batch, Extreme, ScanInput, ScanOptions};
use super::vector;
use crate::device::{Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_len, Layout, Part, Stream, Workspace};

/// What [`cummax`] and [`cummin`] return.
#[derive(Debug)]
pub struct CumExtremes<A: crate::Element> {
    /// The running max (or min) of each row, row-major.
    pub values: DeviceBuffer<A>,
    /// For each element, the position in its row (from 0) of the input
    /// element that `values` holds there.
    pub indices: DeviceBuffer<i32>,
}

/// The running maximum of every row of `x` and where it came from, as
/// `torch.cummax(x, dim=-1)`: `values[i] = max(x[0..=i])` of the row, and
/// `indices[i]` the position of that maximum: the last `j <= i` with
/// `x[j] >= ` every earlier element (equal values: the later position).
/// NaN beats every number: from a row's first NaN on the values are NaN and
/// the index is that of the latest NaN so far. This is the definition of
/// PyTorch's CPU kernel (`x[j] >= running || isnan(x[j])` updates).
///
/// Inputs f16, bf16 and f32 (f32 values), i8 and i32 (i32 values); indices
/// are i32 (PyTorch's are i64; a row holds at most
/// [`MAX_SCAN_LEN`](crate::MAX_SCAN_LEN) elements). The values are exact.
/// When -0.0 and +0.0 tie, the index is the later one and the value may be
/// either zero (they compare equal).
///
/// Errors: [`Error::InvalidArgument`] naming `x` (rows longer than
/// [`MAX_SCAN_LEN`](crate::MAX_SCAN_LEN), a buffer of another device).
pub fn cummax<'a, T: ScanInput>(
    device: &Device,
    x: impl Into<Batch<'a, T>>,
) -> Result<CumExtremes<T::Acc>> {
    blocking(device, x.into(), Extreme::Max)
}

/// The running minimum of every row of `x` and where it came from, as
/// `torch.cummin(x, dim=-1)`: as [`cummax`] with `<=` (equal values: the
/// later position; NaN still wins and propagates).
pub fn cummin<'a, T: ScanInput>(
    device: &Device,
    x: impl Into<Batch<'a, T>>,
) -> Result<CumExtremes<T::Acc>> {
    blocking(device, x.into(), Extreme::Min)
}

/// [`cummax`] and [`cummin`]: [`cum_extreme_on`] on the device's own stream.
fn blocking<T: ScanInput>(
    device: &Device,
    x: Batch<'_, T>,
    extreme: Extreme,
) -> Result<CumExtremes<T::Acc>> {
    if !device.same(x.data.device()) {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: "the buffer lives on another device".into(),
        });
    }
    let (rows, n) = (x.row_count(), x.row_len());
    let plan = CumPlan::new::<T>(device, rows, n, extreme)?;
    let mut values = device.alloc_uninit::<T::Acc>(rows * n)?;
    let mut indices = device.alloc_uninit::<i32>(rows * n)?;
    let mut workspace = Workspace::new(device, plan.layout.bytes())?;
    device.blocking(|stream| {
        cum_extreme_on(
            stream,
            x,
            extreme,
            &mut values,
            &mut indices,
            &mut workspace,
        )
    })?;
    Ok(CumExtremes { values, indices })
}

/// Bytes of [`Workspace`] that [`cum_extreme_on`] needs for `rows` rows of
/// `n` elements of `T` (32 bytes per vector core it runs on, and one
/// element).
pub fn cum_extreme_workspace_bytes<T: ScanInput>(
    device: &Device,
    rows: usize,
    n: usize,
    extreme: Extreme,
) -> Result<usize> {
    Ok(CumPlan::new::<T>(device, rows, n, extreme)?.layout.bytes())
}

/// The stream-ordered [`cummax`] ([`Extreme::Max`]) and [`cummin`]
/// ([`Extreme::Min`]): enqueues both launches on `stream` and returns at
/// once, writing into `values` and `indices` (caller-owned, `x.len()` each).
/// No allocation, no host synchronisation. Errors as for [`cummax`], plus
/// `values`, `indices` or `workspace` of the wrong size or device.
pub fn cum_extreme_on<'a, T: ScanInput>(
    stream: &Stream,
    x: impl Into<Batch<'a, T>>,
    extreme: Extreme,
    values: &mut DeviceBuffer<T::Acc>,
    indices: &mut DeviceBuffer<i32>,
    workspace: &mut Workspace,
) -> Result<()> {
    let x = x.into();
    let (rows, n) = (x.row_count(), x.row_len());
    stream.check_device(x.data, "x")?;
    stream.check_device(values, "values")?;
    stream.check_device(indices, "indices")?;
    let mut plan = CumPlan::new::<T>(stream.device(), rows, n, extreme)?;
    check_len(values.len(), rows * n, "values")?;
    check_len(indices.len(), rows * n, "indices")?;
    workspace.check(stream, &plan.layout)?;
    let (scratch, unused_totals) = (workspace.at(plan.scratch), workspace.at(plan.totals));
    stream.with_queue(&[x.data, &*values, &*indices, &*workspace], |s| {
        let Some((scan, positions)) = plan.launches.as_mut() else {
            return Ok(());
        };
        runtime::launch(
            s,
            scan,
            runtime::OpScanArgs {
                x: x.data.ptr(),
                y: values.ptr(),
                totals: unused_totals,
                workspace: scratch,
            },
        )?;
        runtime::launch(
            s,
            positions,
            runtime::OpScanIndicesArgs {
                x: x.data.ptr(),
                values: values.ptr(),
                indices: indices.ptr(),
                workspace: scratch,
            },
        )
    })
}

/// The two launches (none for rows of length 0) and the workspace: the
/// kernels' slots (the second launch reuses the first's) and the value
/// scan's one-element totals buffer (it writes no totals here).
struct CumPlan {
    launches: Option<(
        algos::LaunchPlan<algos::OpScanTiling>,
        algos::LaunchPlan<algos::OpScanTiling>,
    )>,
    layout: Layout,
    scratch: Part,
    totals: Part,
}

impl CumPlan {
    fn new<T: ScanInput>(
        device: &Device,
        rows: usize,
        n: usize,
        extreme: Extreme,
    ) -> Result<CumPlan> {
        check_row_len(n)?;
        let options = ScanOptions {
            op: extreme.op(),
            ..ScanOptions::default()
        };
        let indices = algos::OpScanIndices::new(T::DTYPE)?;
        let launches = match vector::plan::<T>(device, rows, n, options)? {
            None => None,
            Some(scan) => Some((scan, indices.plan(device.profile(), rows as u64, n as u64)?)),
        };
        let scratch_bytes = launches.as_ref().map_or(0, |(a, b)| {
            a.workspace_bytes.max(b.workspace_bytes) as usize
        });
        let mut layout = Layout::default();
        let scratch = layout.add(scratch_bytes);
        let totals = layout.add(std::mem::size_of::<T::Acc>());
        Ok(CumPlan {
            launches,
            layout,
            scratch,
            totals,
        })
    }
}
