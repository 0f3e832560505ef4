//! COMPRESS (masked select) and SPLIT (SPLITIND, stable partition with
//! indices) on the vector cores.
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_len, Layout, Part, Stream, Uses, Workspace};

pub use algos::split::MAX_SPLIT_LEN;

/// Value types of [`compress`] and [`split`]: every 16- and 32-bit element
/// type (f16, bf16, i16, u16, i32, u32, f32). Values are moved as bit patterns,
/// so NaN payloads, -0.0 and subnormals come back unchanged.
pub trait SplitValue: Element {}
impl SplitValue for half::f16 {}
impl SplitValue for half::bf16 {}
impl SplitValue for i16 {}
impl SplitValue for u16 {}
impl SplitValue for i32 {}
impl SplitValue for u32 {}
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

/// Checks the inputs of a SPLIT or COMPRESS on `device`: both on it, as
/// long as each other and at most [`MAX_SPLIT_LEN`]. Returns `n`.
fn check_inputs<T: SplitValue>(
    device: &Device,
    values: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
) -> Result<usize> {
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
    check_split_len(n)?;
    Ok(n)
}

fn check_split_len(n: usize) -> Result<()> {
    if n as u64 > MAX_SPLIT_LEN {
        return Err(Error::InvalidArgument {
            name: "values",
            reason: format!("{n} elements: at most {MAX_SPLIT_LEN} (indices are i32)"),
        });
    }
    Ok(())
}

fn run<T: SplitValue>(
    device: &Device,
    values: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
    kind: algos::SplitKind,
    want_indices: bool,
) -> Result<Split<T>> {
    let n = check_inputs(device, values, flags)?;
    let mut out = device.alloc_uninit::<T>(n)?;
    let mut indices = if want_indices {
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
    let mut workspace = Workspace::new(
        device,
        SplitPlan::new::<T>(device, n, kind, want_indices)?
            .layout
            .bytes(),
    )?;
    let mut count = SplitCount::new(device, n)?;
    device.blocking(|stream| {
        enqueue(
            stream,
            values,
            flags,
            kind,
            &mut out,
            indices.as_mut(),
            &mut count,
            &mut workspace,
        )
    })?;
    let ones = count.download()?;
    Ok(Split {
        values: out,
        indices,
        ones,
    })
}

/// The plan of one SPLIT or COMPRESS launch over `n >= 1` elements and the
/// workspace it carves: the kernel's (per-core slots, then the flag-bit
/// cache), zeroed before each launch.
struct SplitPlan {
    plan: algos::LaunchPlan<algos::SplitTiling>,
    layout: Layout,
    kernel: Part,
    /// Per-core slots (of [`SLOT_INTS`] i32s) at the start of the kernel's
    /// workspace.
    slots: usize,
}

/// i32s of one per-core slot of the kernel's workspace.
const SLOT_INTS: usize = algos::split::SPLIT_SLOT_BYTES as usize / 4;
/// i32s of a slot that hold something: count, a negative flag (else 0) and
/// the largest flag (what a [`SplitCount`] gathers of each slot).
const SLOT_USED: usize = 3;

impl SplitPlan {
    fn new<T: SplitValue>(
        device: &Device,
        n: usize,
        kind: algos::SplitKind,
        want_indices: bool,
    ) -> Result<SplitPlan> {
        let plan =
            algos::SplitInd::new(kind, T::DTYPE)?.plan(device.profile(), n as u64, want_indices)?;
        // One slot per core and wave (the rest, up to `bits_offset`, is
        // padding).
        let slots =
            (plan.tiling.n.div_ceil(plan.tiling.wave_len) * u64::from(plan.block_dim)) as usize;
        let mut layout = Layout::default();
        let kernel = layout.add(plan.workspace_bytes as usize);
        Ok(SplitPlan {
            plan,
            layout,
            kernel,
            slots,
        })
    }
}

/// The number of ones of a [`compress_on`] or [`split_on`], left on the
/// device: a small buffer into which the call gathers the kernel's per-core
/// slots (count of ones and the flag range), and which
/// [`SplitCount::download`] sums on the host after the stream is
/// synchronised. Make one per stream with [`SplitCount::new`] and reuse it:
/// a loop then allocates nothing.
#[derive(Debug)]
pub struct SplitCount {
    /// [`SLOT_USED`] i32s per slot.
    slots: DeviceBuffer<i32>,
    /// Slots the last call wrote (0: no call yet, or an empty input).
    used: usize,
    /// A count the host knew when it enqueued the last call (a segmented
    /// sum over offsets: one sum per segment); no slot is read then.
    known: Option<usize>,
}

impl SplitCount {
    /// A count for SPLIT or COMPRESS of up to `n` elements of any
    /// [`SplitValue`] type, with or without indices, on `device` (one
    /// allocation of a few hundred bytes; none for `n = 0`). Errors
    /// ([`Error::InvalidArgument`]): `n` past [`MAX_SPLIT_LEN`] (named
    /// `values`), or the device's allocation errors.
    pub fn new(device: &Device, n: usize) -> Result<SplitCount> {
        check_split_len(n)?;
        let mut slots = 0;
        if n > 0 {
            for kind in algos::SplitKind::ALL {
                for want_indices in [false, true] {
                    // The slots depend on the value width only.
                    slots = slots
                        .max(SplitPlan::new::<half::f16>(device, n, kind, want_indices)?.slots)
                        .max(SplitPlan::new::<f32>(device, n, kind, want_indices)?.slots);
                }
            }
        }
        Ok(SplitCount {
            slots: device.alloc_uninit::<i32>(slots * SLOT_USED)?,
            used: 0,
            known: None,
        })
    }

    /// The device it lives on.
    pub fn device(&self) -> &Device {
        self.slots.device()
    }

    /// The number of ones (flags equal to 1) of the last [`compress_on`] or
    /// [`split_on`] enqueued with this count (0 before any, and for an empty
    /// input): downloads the slots and sums them. Call it after
    /// synchronising the stream: before, the simulator reports
    /// [`Error::HostRace`] (on an NPU the slots would be stale).
    ///
    /// Errors: [`Error::InvalidArgument`] naming `flags` when the flags held
    /// a value other than 0 or 1 (as [`compress_with`] and [`split_with`]
    /// report it); the device's download errors.
    pub fn download(&self) -> Result<usize> {
        self.download_as("flags")
    }

    /// Records a count the host knows as the result of the next download
    /// (an operation that enqueued no COMPRESS or SPLIT with this count).
    pub(crate) fn set_known(&mut self, count: usize) {
        self.known = Some(count);
    }

    /// Enqueues (inside the queue of the launch that wrote them) the copy of
    /// `slots` per-core slots, `stride` i32s apart at `src` on the device,
    /// each starting with the count of ones, the smallest and the largest
    /// flag; with [`SplitCount::set_used`] the next download sums them.
    pub(crate) fn copy_slots(
        &self,
        stream: runtime::StreamRef,
        src: *mut std::ffi::c_void,
        stride: usize,
        slots: usize,
    ) -> Result<()> {
        // The used head of every slot, gathered densely.
        stream.copy_device_2d(
            self.slots.ptr(),
            SLOT_USED * 4,
            src,
            stride * 4,
            SLOT_USED * 4,
            slots,
        )
    }

    /// Records that the last launch copied `slots` slots in.
    pub(crate) fn set_used(&mut self, slots: usize) {
        self.known = None;
        self.used = slots;
    }

    /// Refuses (naming `count`) a count with room for fewer than `slots`
    /// slots, those of a launch over `n` elements.
    pub(crate) fn check_holds(&self, slots: usize, n: usize) -> Result<()> {
        if self.slots.len() < slots * SLOT_USED {
            return Err(Error::InvalidArgument {
                name: "count",
                reason: format!("made for fewer elements than {n} (SplitCount::new with n >= {n})"),
            });
        }
        Ok(())
    }

    /// Its device memory, for a stream's list of what a launch uses.
    pub(crate) fn uses(&self) -> &dyn Uses {
        &self.slots
    }

    /// [`SplitCount::download`], a flags error naming `flags_name`.
    pub(crate) fn download_as(&self, flags_name: &'static str) -> Result<usize> {
        if let Some(known) = self.known {
            return Ok(known);
        }
        let slots = self.slots.download_prefix(self.used * SLOT_USED)?;
        sum_slots(&slots, SLOT_USED, flags_name)
    }
}

/// Bytes of [`Workspace`] that [`compress_on`] needs for `n` values of type
/// `T` (0 for `n = 0`). Errors: `n` past [`MAX_SPLIT_LEN`] (named `values`).
pub fn compress_workspace_bytes<T: SplitValue>(
    device: &Device,
    n: usize,
    options: CompressOptions,
) -> Result<usize> {
    workspace_bytes::<T>(device, n, algos::SplitKind::Compress, options.want_indices)
}

/// Bytes of [`Workspace`] that [`split_on`] needs for `n` values of type `T`
/// (0 for `n = 0`). Errors: `n` past [`MAX_SPLIT_LEN`] (named `values`).
pub fn split_workspace_bytes<T: SplitValue>(
    device: &Device,
    n: usize,
    options: SplitOptions,
) -> Result<usize> {
    workspace_bytes::<T>(device, n, algos::SplitKind::Split, options.want_indices)
}

fn workspace_bytes<T: SplitValue>(
    device: &Device,
    n: usize,
    kind: algos::SplitKind,
    want_indices: bool,
) -> Result<usize> {
    check_split_len(n)?;
    if n == 0 {
        return Ok(0);
    }
    Ok(SplitPlan::new::<T>(device, n, kind, want_indices)?
        .layout
        .bytes())
}

/// The stream-ordered [`compress_with`]: enqueues COMPRESS of `values` by
/// `flags` on `stream` and returns at once. The kept values go to the front
/// of `out` (caller-owned, as long as `values`; the rest is left
/// unspecified), their original indices to the front of `indices` when
/// given (as long as `values`), and the kernel's per-core slots are copied
/// (device to device, on the stream) into `count`, whose
/// [`SplitCount::download`] gives the number kept after the stream is
/// synchronised. `workspace` must hold [`compress_workspace_bytes`] (with
/// `want_indices` as `indices` is given). No allocation, no host
/// synchronisation; `n = 0` enqueues nothing (the count then reads 0).
///
/// The flags are checked on the device: a flag other than 0 or 1 comes back
/// as the error of [`SplitCount::download`], not of this call. Errors
/// ([`Error::InvalidArgument`]): `values` longer than [`MAX_SPLIT_LEN`],
/// `flags` of another length than `values`; `out`, `indices`, `count` (made
/// for fewer elements, see [`SplitCount::new`]) or `workspace` of the wrong
/// size; any of them on another device than the stream.
#[allow(clippy::too_many_arguments)]
pub fn compress_on<T: SplitValue>(
    stream: &Stream,
    values: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
    out: &mut DeviceBuffer<T>,
    indices: Option<&mut DeviceBuffer<i32>>,
    count: &mut SplitCount,
    workspace: &mut Workspace,
) -> Result<()> {
    enqueue(
        stream,
        values,
        flags,
        algos::SplitKind::Compress,
        out,
        indices,
        count,
        workspace,
    )
}

/// The stream-ordered [`split_with`]: enqueues SPLIT (SPLITIND when
/// `indices` is given) of `values` by `flags` on `stream` and returns at
/// once. The stable partition goes to `out` (caller-owned, as long as
/// `values`), the original indices to `indices` when given (as long as
/// `values`), and the kernel's per-core slots are copied (device to device,
/// on the stream) into `count`, whose [`SplitCount::download`] gives the
/// number of ones (where the flag-0 group starts) after the stream is
/// synchronised. `workspace` must hold [`split_workspace_bytes`] (with
/// `want_indices` as `indices` is given). No allocation, no host
/// synchronisation; `n = 0` enqueues nothing. Errors as for
/// [`compress_on`].
#[allow(clippy::too_many_arguments)]
pub fn split_on<T: SplitValue>(
    stream: &Stream,
    values: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
    out: &mut DeviceBuffer<T>,
    indices: Option<&mut DeviceBuffer<i32>>,
    count: &mut SplitCount,
    workspace: &mut Workspace,
) -> Result<()> {
    enqueue(
        stream,
        values,
        flags,
        algos::SplitKind::Split,
        out,
        indices,
        count,
        workspace,
    )
}

#[allow(clippy::too_many_arguments)]
fn enqueue<T: SplitValue>(
    stream: &Stream,
    values: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
    kind: algos::SplitKind,
    out: &mut DeviceBuffer<T>,
    indices: Option<&mut DeviceBuffer<i32>>,
    count: &mut SplitCount,
    workspace: &mut Workspace,
) -> Result<()> {
    stream.check_device(values, "values")?;
    stream.check_device(flags, "flags")?;
    let n = check_inputs(stream.device(), values, flags)?;
    stream.check_device(out, "out")?;
    check_len(out.len(), n, "out")?;
    if let Some(i) = &indices {
        stream.check_device(i, "indices")?;
        check_len(i.len(), n, "indices")?;
    }
    if !stream.device().same(count.device()) {
        return Err(Error::InvalidArgument {
            name: "count",
            reason: "the count lives on another device than the stream".into(),
        });
    }
    count.known = None;
    if n == 0 {
        count.used = 0;
        return Ok(());
    }
    let SplitPlan {
        mut plan,
        layout,
        kernel,
        slots,
    } = SplitPlan::new::<T>(stream.device(), n, kind, indices.is_some())?;
    count.check_holds(slots, n)?;
    workspace.check(stream, &layout)?;
    let args = runtime::SplitArgs {
        x: values.ptr(),
        flags: flags.ptr(),
        y: out.ptr(),
        indices: indices.as_ref().map_or(std::ptr::null_mut(), |i| i.ptr()),
        workspace: workspace.at(kernel),
    };
    let mut uses: Vec<&dyn Uses> = vec![values, flags, &*out, &count.slots, &*workspace];
    if let Some(i) = &indices {
        uses.push(&**i);
    }
    stream.with_queue(&uses, |s| {
        runtime::launch(s, &mut plan, args)?;
        count.copy_slots(s, workspace.at(kernel), SLOT_INTS, slots)
    })?;
    count.set_used(slots);
    Ok(())
}

/// The number of ones from the kernel's per-core slots, `stride` i32s apart;
/// refuses flags other than 0/1, naming the caller's argument `flags_name`.
fn sum_slots(slots: &[i32], stride: usize, flags_name: &'static str) -> Result<usize> {
    // Per wave and core a slot: count of non-zero flags, a negative flag
    // (else 0), the largest flag (all zero when the core had nothing in the
    // wave).
    let mut ones = 0usize;
    let (mut lo, mut hi) = (0i32, 0i32);
    for slot in slots.chunks_exact(stride) {
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
