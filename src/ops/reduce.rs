//! Reductions.
use super::scan::vector::max_min;
use super::scan::{Accumulator, ScanInput, ScanOp, MAX_I8_SCAN_LEN};
use crate::device::{Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{Layout, Part, Stream, Uses, Workspace};

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
    blocking(device, x, ScanOp::Sum)
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
/// ([`reduce_sum`]), max or min. Max and min take f16, bf16, f32, i8 and i32
/// input (i32 sums: [`Error::Unsupported`], whatever the length).
///
/// Max and min are exact (f16, bf16 -> f32 and i8 -> i32 convert exactly).
/// The reduction of an empty input is the operator's identity: 0 for sum,
/// -inf (float input) / `i32::MIN` (integer input) for max, +inf /
/// `i32::MAX` for min. A float input holding a NaN gives NaN, as
/// `torch.max`/`torch.min` do:
/// every core reports whether it read one (the NaN behaviour of the vector
/// Max/Min instructions is not documented for Atlas A2, so the device's
/// total is not used then). Which zero the max of -0.0 and +0.0 is, is not
/// specified.
pub fn reduce<T: ScanInput>(device: &Device, x: &DeviceBuffer<T>, op: ScanOp) -> Result<T::Acc> {
    blocking(device, x, op)
}

/// [`reduce`] (and [`reduce_sum`]): [`reduce_on`] on the device's own
/// stream, with a workspace and a result made for the call.
fn blocking<T: ScanInput>(device: &Device, x: &DeviceBuffer<T>, op: ScanOp) -> Result<T::Acc> {
    if !device.same(x.device()) {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: "the buffer lives on another device".into(),
        });
    }
    let Some(plan) = ReducePlan::new::<T>(device, x.len(), op)? else {
        return Ok(T::Acc::identity(op));
    };
    let mut workspace = Workspace::new(device, plan.layout.bytes())?;
    let mut result = ReduceResult::<T>::new(device)?;
    device.blocking(|stream| reduce_on(stream, x, op, &mut result, &mut workspace))?;
    result.download()
}

/// The plan of a reduction and the workspace it carves: the kernel's (one
/// 32-byte partial slot per core).
struct ReducePlan {
    plan: algos::LaunchPlan<algos::ReduceTiling>,
    layout: Layout,
    kernel: Part,
    /// Bytes of the NaN slots the kernel writes into the result (max and
    /// min of float input only; one 32-byte slot per launched core).
    nan_bytes: Option<usize>,
}

impl ReducePlan {
    /// The plan of `op` over `n` elements of `T`, checked; `None` for an
    /// empty input (whose reduction is the identity). Errors as for
    /// [`reduce`], in its order (support does not depend on the length).
    fn new<T: ScanInput>(device: &Device, n: usize, op: ScanOp) -> Result<Option<ReducePlan>> {
        let plan = match max_min(op) {
            None => {
                if T::DTYPE == algos::DType::I8 && n > MAX_I8_SCAN_LEN {
                    return Err(Error::InvalidArgument {
                        name: "x",
                        reason: format!(
                            "{n} int8 elements could overflow the int32 sum (at most \
                             {MAX_I8_SCAN_LEN})"
                        ),
                    });
                }
                let algo = algos::ReduceSum::new(T::DTYPE)?;
                if n == 0 {
                    return Ok(None);
                }
                algo.plan(device.profile(), n as u64)?
            }
            Some(vector_op) => {
                let algo = algos::ReduceMaxMin::new(T::DTYPE, vector_op)?;
                if n == 0 {
                    return Ok(None);
                }
                algo.plan(device.profile(), n as u64)?
            }
        };
        let nan_bytes =
            (max_min(op).is_some() && has_nan::<T>()).then_some(plan.block_dim as usize * 32);
        let mut layout = Layout::default();
        let kernel = layout.add(plan.workspace_bytes as usize);
        Ok(Some(ReducePlan {
            plan,
            layout,
            kernel,
            nan_bytes,
        }))
    }
}

/// The result of a [`reduce_on`], left on the device: the total and, for
/// max and min of float input, the kernel's per-core NaN slots, both
/// written by the kernel into small buffers of this handle;
/// [`ReduceResult::download`] reads them after the stream is synchronised.
/// Make one per stream with [`ReduceResult::new`] and reuse it: a loop then
/// allocates nothing.
pub struct ReduceResult<T: ScanInput> {
    total: DeviceBuffer<T::Acc>,
    /// 32 bytes per vector core (float input only; empty otherwise).
    nan: DeviceBuffer<u8>,
    last: Last<T::Acc>,
}

/// What the last [`reduce_on`] into a result left.
#[derive(Debug, Clone, Copy)]
enum Last<A> {
    /// No call yet.
    None,
    /// An empty input: the identity, known on the host.
    Value(A),
    /// A launch: the total on the device, and the bytes of NaN slots (0
    /// when there are none).
    Device { nan_bytes: usize },
}

impl<T: ScanInput> std::fmt::Debug for ReduceResult<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReduceResult")
            .field("device", self.total.device())
            .field("nan_slot_bytes", &self.nan.len())
            .finish()
    }
}

impl<T: ScanInput> ReduceResult<T> {
    /// A result for reductions of `T` input on `device`: one element of
    /// `T::Acc` and, for float input, one 32-byte NaN slot per vector core
    /// (two allocations for float input, one otherwise). Errors: the device's
    /// allocation errors.
    pub fn new(device: &Device) -> Result<ReduceResult<T>> {
        let nan_bytes = if has_nan::<T>() {
            device.profile().vector_cores as usize * 32
        } else {
            0
        };
        Ok(ReduceResult {
            total: device.alloc_uninit::<T::Acc>(1)?,
            nan: device.alloc_uninit::<u8>(nan_bytes)?,
            last: Last::None,
        })
    }

    /// The device it lives on.
    pub fn device(&self) -> &Device {
        self.total.device()
    }

    /// The reduction of the last [`reduce_on`] into this result, as
    /// [`reduce`] returns it: the identity for an empty input, NaN for the
    /// max or min of a float input holding a NaN, else the device's total. Call
    /// it after synchronising the stream: before, the simulator reports
    /// [`Error::HostRace`] (on an NPU it would read stale data).
    ///
    /// Errors: [`Error::InvalidArgument`] naming `result` when no reduction
    /// was enqueued into it yet; the device's download errors.
    pub fn download(&self) -> Result<T::Acc> {
        match self.last {
            Last::None => Err(Error::InvalidArgument {
                name: "result",
                reason: "no reduction was enqueued into this result".into(),
            }),
            Last::Value(v) => Ok(v),
            Last::Device { nan_bytes } => {
                if nan_bytes > 0 && saw_nan(T::DTYPE, &self.nan.download_prefix(nan_bytes)?) {
                    if let Some(nan) = T::Acc::not_a_number() {
                        return Ok(nan);
                    }
                }
                Ok(self.total.download()?[0])
            }
        }
    }
}

/// Bytes of [`Workspace`] that [`reduce_on`] needs for `op` over `n`
/// elements of `T` (0 for `n = 0`). Errors as for [`reduce`] (unsupported
/// types, too long i8 sums).
pub fn reduce_workspace_bytes<T: ScanInput>(
    device: &Device,
    n: usize,
    op: ScanOp,
) -> Result<usize> {
    Ok(ReducePlan::new::<T>(device, n, op)?.map_or(0, |p| p.layout.bytes()))
}

/// The stream-ordered [`reduce`]: enqueues `op` over all elements of `x` on
/// `stream` and returns at once, the total going to `result` (and, for
/// max and min of float input, the kernel's NaN slots);
/// [`ReduceResult::download`] gives what [`reduce`] returns, after
/// the stream is synchronised. `workspace` must hold
/// [`reduce_workspace_bytes`]. No allocation, no host synchronisation; an
/// empty `x` enqueues nothing (the result then holds the identity).
///
/// Numerics as for [`reduce`] and [`reduce_sum`]. Errors: as for
/// [`reduce`] ([`Error::Unsupported`] types, `x` too long for an i8 sum),
/// plus ([`Error::InvalidArgument`]) `x`, `result` or `workspace` on another
/// device than the stream, `workspace` too small.
pub fn reduce_on<T: ScanInput>(
    stream: &Stream,
    x: &DeviceBuffer<T>,
    op: ScanOp,
    result: &mut ReduceResult<T>,
    workspace: &mut Workspace,
) -> Result<()> {
    stream.check_device(x, "x")?;
    if !stream.device().same(result.device()) {
        return Err(Error::InvalidArgument {
            name: "result",
            reason: "the result lives on another device than the stream".into(),
        });
    }
    let Some(ReducePlan {
        mut plan,
        layout,
        kernel,
        nan_bytes,
    }) = ReducePlan::new::<T>(stream.device(), x.len(), op)?
    else {
        result.last = Last::Value(T::Acc::identity(op));
        return Ok(());
    };
    if let Some(bytes) = nan_bytes {
        if result.nan.len() < bytes {
            return Err(Error::InvalidArgument {
                name: "result",
                reason: format!(
                    "{} bytes of NaN slots, the launch writes {bytes}",
                    result.nan.len()
                ),
            });
        }
    }
    workspace.check(stream, &layout)?;
    let (x_ptr, total, scratch) = (x.ptr(), result.total.ptr(), workspace.at(kernel));
    let uses: [&dyn Uses; 4] = [x, &result.total, &result.nan, &*workspace];
    stream.with_queue(&uses, |s| match max_min(op) {
        None => {
            let args = runtime::ReduceArgs {
                x: x_ptr,
                total,
                workspace: scratch,
            };
            runtime::launch(s, &mut plan, args)
        }
        Some(_) => {
            let args = runtime::ReduceMaxMinArgs {
                x: x_ptr,
                total,
                nan: result.nan.ptr(),
                workspace: scratch,
            };
            runtime::launch(s, &mut plan, args)
        }
    })?;
    result.last = Last::Device {
        nan_bytes: nan_bytes.unwrap_or(0),
    };
    Ok(())
}

/// Whether `T` has NaN (the float inputs: the kernel publishes NaN slots).
fn has_nan<T: ScanInput>() -> bool {
    T::Acc::not_a_number().is_some()
}

/// Whether the cores' NaN slots (16 i16 lanes each) of a max/min of
/// `dtype` input report a NaN: f16 and bf16 lanes hold the largest `bits &
/// 0x7fff` seen (a NaN lies above the bits of +inf), f32 lanes OR-ed NaN
/// marks.
fn saw_nan(dtype: algos::DType, slots: &[u8]) -> bool {
    let mut lanes = slots
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]));
    match dtype {
        algos::DType::F16 => lanes.any(|v| v > 0x7c00),
        algos::DType::Bf16 => lanes.any(|v| v > 0x7f80),
        _ => lanes.any(|v| v != 0),
    }
}
