//! RADIXSORT: stable sort of keys with their permutation, 1-D or per row of
//! a batch (like `torch.sort(stable=True)`).
use super::scan::Batch;
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_len, Layout, Part, Stream, Uses, Workspace};

pub use algos::radix::MAX_SORT_LEN;

/// Key types of [`sort`]: u8, i8, u16, i16, u32, i32, f16, bf16, f32.
pub trait SortKey: Element {}
/// Key types of [`topk`]: the [`SortKey`]s but the 32-bit integers (u8, i8,
/// u16, i16, f16, bf16, f32).
pub trait TopkKey: SortKey {}
macro_rules! keys {
    ($tr:ident: $($t:ty),*) => {$(impl $tr for $t {})*};
}
keys!(SortKey: u8, i8, u16, i16, u32, i32, half::f16, half::bf16, f32);
keys!(TopkKey: u8, i8, u16, i16, half::f16, half::bf16, f32);
/// Value types [`sort_pairs`] carries with the keys: the 2- and 4-byte ones
/// (i16, u16, f16, bf16, i32, u32, f32), moved as bit patterns (a NaN keeps
/// its payload).
pub trait SortValue: Element {}
keys!(SortValue: i16, u16, half::f16, half::bf16, i32, u32, f32);

/// How [`sort`] sorts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortAlgorithm {
    /// The fastest (multi-bit digits: fewer passes over the same traffic
    /// per pass).
    #[default]
    Auto,
    /// The published split sort: one pass (one stable split) per key bit,
    /// 16 passes for 16-bit keys, 32 for 32-bit keys.
    OneBit,
    /// 4-bit digits: one stable 16-way counting sort per pass, 2 passes for
    /// 8-bit keys, 4 for 16-bit keys, 8 for 32-bit keys; rows of at most a
    /// tile (4096 keys, 2048 of 32 bits) are sorted in one launch on chip.
    MultiBit,
}

impl SortAlgorithm {
    /// Bits per digit.
    fn digit_bits(self) -> u32 {
        match self {
            SortAlgorithm::OneBit => 1,
            SortAlgorithm::Auto | SortAlgorithm::MultiBit => 4,
        }
    }
}

/// Options of [`sort`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SortOptions {
    /// Largest first (NaN first). Equal keys keep their input order either way.
    pub descending: bool,
    /// The algorithm.
    pub algorithm: SortAlgorithm,
}

/// The result of [`sort`].
#[derive(Debug)]
pub struct Sorted<K: Element> {
    /// The keys of every row in order (the input's bit patterns).
    pub values: DeviceBuffer<K>,
    /// For every output key its index in its input row (i32, a permutation
    /// of `0..n` per row).
    pub indices: DeviceBuffer<i32>,
}

/// Stable sort of every row of `keys` (a buffer, or [`Batch::rows`] for
/// rows sorted independently), returning the sorted keys and, for each,
/// its index in the input row, like `torch.sort(stable=True)`.
///
/// Order: integers by value; floats `-inf < ... < -0.0 = +0.0 < ... < +inf
/// < NaN`. NaN sorts last in ascending order and first in descending order,
/// whatever its sign bit and payload, and all NaNs count as equal (input
/// order among them). -0.0 and +0.0 compare equal: they keep their input
/// order, and each comes back with its own sign (keys move as bit
/// patterns). Descending order keeps equal keys in input order too.
///
/// LSD radix sort, one launch per digit (see [`SortAlgorithm`]); each pass
/// reads the keys twice (count, then sort) and the indices once, and writes
/// both: about 14 bytes per 16-bit key and pass (the first pass makes the
/// indices: 10). Rows of at most one tile (4096 keys, 2048 of 32 bits; 4-bit
/// digits) take one launch instead, every pass on chip: one read of the
/// keys, one write of keys and indices; rows of at most 512 16-bit keys are
/// sorted in that launch by a bitonic sorting network instead of radix
/// passes (docs/algorithms.md, RadixSort). The input is not modified; the
/// result and the workspace (one scratch copy of keys and indices, or the
/// on-chip sort's scratch tiles) are allocated on the device.
///
/// Errors ([`Error::InvalidArgument`]): rows longer than [`MAX_SORT_LEN`]
/// (indices are i32), `keys` on another device. An empty input gives empty
/// outputs without a launch.
pub fn sort<'a, K: SortKey>(
    device: &Device,
    keys: impl Into<Batch<'a, K>>,
    options: SortOptions,
) -> Result<Sorted<K>> {
    let keys = keys.into();
    let (rows, n) = checked(device, &keys)?;
    let bytes = sort_workspace_bytes::<K>(device, rows, n, options)?;
    blocking(device, rows * n, bytes, |stream, values, indices, ws| {
        sort_on(stream, keys, options, values, indices, ws)
    })
}

/// Runs a stream-ordered sort or top-k (`f`) into new outputs of `len`
/// keys and indices, with a new workspace of `bytes`, and waits for it.
fn blocking<K: SortKey>(
    device: &Device,
    len: usize,
    bytes: usize,
    f: impl FnOnce(&Stream, &mut DeviceBuffer<K>, &mut DeviceBuffer<i32>, &mut Workspace) -> Result<()>,
) -> Result<Sorted<K>> {
    let mut values = device.alloc_uninit::<K>(len)?;
    let mut indices = device.alloc_uninit::<i32>(len)?;
    let mut workspace = Workspace::new(device, bytes)?;
    device.blocking(|stream| f(stream, &mut values, &mut indices, &mut workspace))?;
    Ok(Sorted { values, indices })
}

/// Bytes of [`Workspace`] that [`sort_on`] needs for `rows` rows of `n`
/// keys of type `K`.
pub fn sort_workspace_bytes<K: SortKey>(
    device: &Device,
    rows: usize,
    n: usize,
    options: SortOptions,
) -> Result<usize> {
    plan_bytes::<K>(device, rows, n, options, Carry::Indices)
}

/// The workspace bytes of a sort plan.
fn plan_bytes<K: SortKey>(
    device: &Device,
    rows: usize,
    n: usize,
    options: SortOptions,
    carry: Carry,
) -> Result<usize> {
    check_len_limit(n)?;
    Ok(SortPlan::new::<K>(device, rows, n, options, carry)?
        .layout
        .bytes())
}

/// The stream-ordered [`sort`]: enqueues the sort of every row of `keys`
/// on `stream` and returns at once, writing the sorted keys into `values`
/// and their indices into `indices` (caller-owned, each as long as `keys`).
/// No allocation, no host synchronisation. Errors as for [`sort`], plus
/// `values`, `indices` or `workspace` of the wrong size or device.
pub fn sort_on<'a, K: SortKey>(
    stream: &Stream,
    keys: impl Into<Batch<'a, K>>,
    options: SortOptions,
    values: &mut DeviceBuffer<K>,
    indices: &mut DeviceBuffer<i32>,
    workspace: &mut Workspace,
) -> Result<()> {
    let keys = keys.into();
    let (rows, n) = checked_on(stream, &keys, values, indices)?;
    check_len(values.len(), rows * n, "values")?;
    check_len(indices.len(), rows * n, "indices")?;
    let plan = SortPlan::new::<K>(stream.device(), rows, n, options, Carry::Indices)?;
    workspace.check(stream, &plan.layout)?;
    plan.enqueue(stream, keys.data(), None, Some(values), indices, workspace)
}

/// Stable sort of every row of `keys` (a buffer, or [`Batch::rows`]),
/// returning only each output position's index in its input row: the
/// `indices` of [`sort`] (like `torch.argsort(stable=True)`), without the
/// sorted keys (the last pass does not write them: 2-4 bytes less per key).
/// Order and errors as for [`sort`].
pub fn argsort<'a, K: SortKey>(
    device: &Device,
    keys: impl Into<Batch<'a, K>>,
    options: SortOptions,
) -> Result<DeviceBuffer<i32>> {
    let keys = keys.into();
    let (rows, n) = checked(device, &keys)?;
    let bytes = argsort_workspace_bytes::<K>(device, rows, n, options)?;
    let mut indices = device.alloc_uninit::<i32>(rows * n)?;
    let mut workspace = Workspace::new(device, bytes)?;
    device.blocking(|stream| argsort_on(stream, keys, options, &mut indices, &mut workspace))?;
    Ok(indices)
}

/// Bytes of [`Workspace`] that [`argsort_on`] needs for `rows` rows of `n`
/// keys of type `K`.
pub fn argsort_workspace_bytes<K: SortKey>(
    device: &Device,
    rows: usize,
    n: usize,
    options: SortOptions,
) -> Result<usize> {
    plan_bytes::<K>(device, rows, n, options, Carry::IndicesOnly)
}

/// The stream-ordered [`argsort`]: enqueues it on `stream` and returns at
/// once, writing the indices into `indices` (caller-owned, as long as
/// `keys`). Errors as for [`sort_on`].
pub fn argsort_on<'a, K: SortKey>(
    stream: &Stream,
    keys: impl Into<Batch<'a, K>>,
    options: SortOptions,
    indices: &mut DeviceBuffer<i32>,
    workspace: &mut Workspace,
) -> Result<()> {
    let keys = keys.into();
    let (rows, n) = checked(stream.device(), &keys)?;
    stream.check_device(indices, "indices")?;
    check_len(indices.len(), rows * n, "indices")?;
    let plan = SortPlan::new::<K>(stream.device(), rows, n, options, Carry::IndicesOnly)?;
    workspace.check(stream, &plan.layout)?;
    plan.enqueue(stream, keys.data(), None, None, indices, workspace)
}

/// The result of [`sort_pairs`].
#[derive(Debug)]
pub struct SortedPairs<K: Element, V: Element> {
    /// The keys of every row in order (the input's bit patterns).
    pub keys: DeviceBuffer<K>,
    /// The values, each moved with its key (bit patterns).
    pub values: DeviceBuffer<V>,
}

/// Stable sort of every row of `keys` carrying `values` along (CUB's
/// `SortPairs`): `values` has the shape of `keys` (a buffer, or a
/// [`Batch::rows`] of the same rows), and each value ends where its key
/// ends. Key order as for [`sort`]; values are 2- or 4-byte
/// ([`SortValue`]) and move as bit patterns. Costs as [`sort`] (the values
/// take the place of the indices). Errors as for [`sort`], plus `values` of another shape or
/// device (naming `values`).
pub fn sort_pairs<'a, 'b, K: SortKey, V: SortValue>(
    device: &Device,
    keys: impl Into<Batch<'a, K>>,
    values: impl Into<Batch<'b, V>>,
    options: SortOptions,
) -> Result<SortedPairs<K, V>> {
    let (keys, values) = (keys.into(), values.into());
    let (rows, n) = checked(device, &keys)?;
    let bytes = sort_pairs_workspace_bytes::<K, V>(device, rows, n, options)?;
    let mut keys_out = device.alloc_uninit::<K>(rows * n)?;
    let mut values_out = device.alloc_uninit::<V>(rows * n)?;
    let mut workspace = Workspace::new(device, bytes)?;
    device.blocking(|stream| {
        sort_pairs_on(
            stream,
            keys,
            values,
            options,
            &mut keys_out,
            &mut values_out,
            &mut workspace,
        )
    })?;
    Ok(SortedPairs {
        keys: keys_out,
        values: values_out,
    })
}

/// Bytes of [`Workspace`] that [`sort_pairs_on`] needs for `rows` rows of
/// `n` keys of type `K` with values of type `V`.
pub fn sort_pairs_workspace_bytes<K: SortKey, V: SortValue>(
    device: &Device,
    rows: usize,
    n: usize,
    options: SortOptions,
) -> Result<usize> {
    plan_bytes::<K>(device, rows, n, options, Carry::Values(V::DTYPE.size()))
}

/// The stream-ordered [`sort_pairs`]: enqueues it on `stream` and returns
/// at once, writing the sorted keys into `keys_out` and the values into
/// `values_out` (caller-owned, each as long as `keys`). Errors as for
/// [`sort_pairs`], plus outputs or workspace of the wrong size or device.
pub fn sort_pairs_on<'a, 'b, K: SortKey, V: SortValue>(
    stream: &Stream,
    keys: impl Into<Batch<'a, K>>,
    values: impl Into<Batch<'b, V>>,
    options: SortOptions,
    keys_out: &mut DeviceBuffer<K>,
    values_out: &mut DeviceBuffer<V>,
    workspace: &mut Workspace,
) -> Result<()> {
    let (keys, values) = (keys.into(), values.into());
    let (rows, n) = checked(stream.device(), &keys)?;
    stream.check_device(values.data(), "values")?;
    if (values.row_count(), values.row_len()) != (rows, n) {
        return Err(Error::InvalidArgument {
            name: "values",
            reason: format!(
                "{} rows of {} values for {rows} rows of {n} keys",
                values.row_count(),
                values.row_len()
            ),
        });
    }
    stream.check_device(keys_out, "keys_out")?;
    stream.check_device(values_out, "values_out")?;
    check_len(keys_out.len(), rows * n, "keys_out")?;
    check_len(values_out.len(), rows * n, "values_out")?;
    let plan = SortPlan::new::<K>(
        stream.device(),
        rows,
        n,
        options,
        Carry::Values(V::DTYPE.size()),
    )?;
    workspace.check(stream, &plan.layout)?;
    plan.enqueue(
        stream,
        keys.data(),
        Some(values.data()),
        Some(keys_out),
        values_out,
        workspace,
    )
}

/// The rows and row length of `keys`, checked: on `device`, rows of at most
/// [`MAX_SORT_LEN`] keys.
fn checked<K: SortKey>(device: &Device, keys: &Batch<'_, K>) -> Result<(usize, usize)> {
    if !device.same(keys.data().device()) {
        return Err(Error::InvalidArgument {
            name: "keys",
            reason: "the buffer lives on another device".into(),
        });
    }
    let n = keys.row_len();
    check_len_limit(n)?;
    Ok((keys.row_count(), n))
}

/// [`checked`] on `stream`'s device, with the outputs on it too.
fn checked_on<K: SortKey>(
    stream: &Stream,
    keys: &Batch<'_, K>,
    values: &DeviceBuffer<K>,
    indices: &DeviceBuffer<i32>,
) -> Result<(usize, usize)> {
    let shape = checked(stream.device(), keys)?;
    stream.check_device(values, "values")?;
    stream.check_device(indices, "indices")?;
    Ok(shape)
}

fn check_len_limit(n: usize) -> Result<()> {
    if n as u64 > MAX_SORT_LEN {
        return Err(Error::InvalidArgument {
            name: "keys",
            reason: format!("{n} keys per row: at most {MAX_SORT_LEN} (indices are i32)"),
        });
    }
    Ok(())
}

/// What a sort carries along with its keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Carry {
    /// The indices it makes (0..n per row): [`sort`].
    Indices,
    /// The indices it makes, and no keys out: [`argsort`].
    IndicesOnly,
    /// Values of this many bytes (2 or 4; or indices) given with the keys:
    /// [`sort_pairs`], and the sort of a top-k result.
    Values(usize),
}

impl Carry {
    fn value_bytes(self) -> usize {
        match self {
            Carry::Values(bytes) => bytes,
            Carry::Indices | Carry::IndicesOnly => 4,
        }
    }
}

/// The passes of a sort of `rows` rows of `n` keys and the workspace they
/// use: the kernels' scratch (the largest pass's) and one copy of keys and
/// indices that the passes alternate with the outputs (an argsort, which
/// has no keys out, alternates the keys between two copies).
struct SortPlan {
    passes: Vec<algos::LaunchPlan<algos::RadixTiling>>,
    layout: Layout,
    scratch: Part,
    keys: Part,
    indices: Part,
    keys_end: Option<Part>,
}

impl SortPlan {
    fn new<K: SortKey>(
        device: &Device,
        rows: usize,
        n: usize,
        options: SortOptions,
        carry: Carry,
    ) -> Result<SortPlan> {
        let total = rows * n;
        let mut passes = Vec::new();
        if total > 0 {
            let algo = algos::RadixSort::with_values(K::DTYPE, carry.value_bytes() as u32)?;
            let bits = options.algorithm.digit_bits();
            let pass_options = algos::RadixSortOptions {
                descending: options.descending,
                make_indices: !matches!(carry, Carry::Values(_)),
                indices_only: carry == Carry::IndicesOnly,
            };
            if bits == 4 && algo.fits_network(n as u64, pass_options) {
                // Short rows of 16-bit keys: a sorting network on chip.
                passes.push(algo.plan_network(
                    device.profile(),
                    rows as u64,
                    n as u64,
                    pass_options,
                )?);
            } else if bits == 4 && algo.fits_rows(n as u64, pass_options) {
                // Rows that fit a tile: the whole sort in one launch.
                passes.push(algo.plan_rows(
                    device.profile(),
                    rows as u64,
                    n as u64,
                    pass_options,
                )?);
            } else {
                for pass in 0..algo.passes(bits) {
                    passes.push(algo.plan(
                        device.profile(),
                        rows as u64,
                        n as u64,
                        bits,
                        pass,
                        pass_options,
                    )?);
                }
            }
        }
        // The passes alternate between the scratch copy and the outputs and
        // end in the outputs, so the first writes the scratch: an even count
        // also lets a sort read its input from its outputs (topk's sort,
        // which carries values: never one launch).
        let one = passes.len() == 1;
        assert!(
            passes.len() % 2 == 0 || (one && !matches!(carry, Carry::Values(_))),
            "radix sorts make an even number of passes, or one launch"
        );
        let copies = if one { 0 } else { total };
        let mut layout = Layout::default();
        let scratch =
            layout.add(passes.iter().map(|p| p.workspace_bytes).max().unwrap_or(0) as usize);
        let keys = layout.add_of::<K>(copies);
        let indices = layout.add(copies * carry.value_bytes());
        let keys_end = (carry == Carry::IndicesOnly).then(|| layout.add_of::<K>(copies));
        Ok(SortPlan {
            passes,
            layout,
            scratch,
            keys,
            indices,
            keys_end,
        })
    }

    /// Enqueues the passes: keys (and `carried` values) in, `values`
    /// (else the workspace's second key copy) and `indices` out (which may
    /// be the inputs: the first pass writes the scratch copy).
    fn enqueue<K: SortKey, P: Element>(
        mut self,
        stream: &Stream,
        keys: &DeviceBuffer<K>,
        carried: Option<&DeviceBuffer<P>>,
        values: Option<&DeviceBuffer<K>>,
        indices: &DeviceBuffer<P>,
        workspace: &Workspace,
    ) -> Result<()> {
        let mut uses: Vec<&dyn Uses> = vec![keys, indices, workspace];
        uses.extend(values.map(|v| v as &dyn Uses));
        uses.extend(carried.map(|c| c as &dyn Uses));
        let count = self.passes.len();
        let keys_end = match (values, self.keys_end) {
            (Some(v), _) => v.ptr(),
            (None, Some(part)) => workspace.at(part),
            (None, None) => unreachable!("an argsort plan has a second key copy"),
        };
        let ends = [
            (workspace.at(self.keys), workspace.at(self.indices)),
            (keys_end, indices.ptr()),
        ];
        let scratch = workspace.at(self.scratch);
        stream.with_queue(&uses, |s| {
            for (pass, plan) in self.passes.iter_mut().enumerate() {
                // Pass p writes the outputs when count - 1 - p is even, else
                // the scratch copy; it reads what pass p - 1 wrote.
                let (keys_out, idx_out) = ends[(count - pass) % 2];
                let (keys_in, idx_in) = if pass == 0 {
                    (
                        keys.ptr(),
                        carried.map_or(std::ptr::null_mut(), DeviceBuffer::ptr),
                    )
                } else {
                    ends[(count - pass + 1) % 2]
                };
                let args = runtime::RadixArgs {
                    keys_in,
                    idx_in,
                    keys_out,
                    idx_out,
                    workspace: scratch,
                };
                runtime::launch(s, plan, args)?;
            }
            Ok(())
        })
    }
}

/// Options of [`topk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopkOptions {
    /// The k largest keys (the default), else the k smallest.
    pub largest: bool,
    /// Return them in order (largest first when `largest`, ties in input
    /// order); else in the order described at [`topk`].
    pub sorted: bool,
}

impl Default for TopkOptions {
    fn default() -> Self {
        TopkOptions {
            largest: true,
            sorted: true,
        }
    }
}

/// The `k` largest (or smallest) keys of every row of `keys` and their
/// indices in the row, like `torch.topk`; the result has `rows x k`
/// elements (row-major, [`Sorted`]).
///
/// Order of keys as in [`sort`] (NaN is the largest key, -0.0 equals +0.0).
/// Ties at the k-th key are broken by index: the earliest ones are taken.
/// With `sorted`, each row comes largest first (smallest first without
/// `largest`), equal keys in input order: exactly the first k of the stable
/// [`sort`] of the row. Without `sorted`, each row holds the selected keys
/// that are strictly beyond the k-th key in input order, then the selected
/// ties in input order.
///
/// One launch of the TOPK kernel on the vector cores (docs/algorithms.md,
/// section "Top-k"): one read of each row takes the maximum of every chunk
/// of 64 or 128 keys; the k-th largest chunk maximum bounds the k-th key
/// from below, so only the chunks reaching it are read again, and a radix
/// select among their keys finds the k. With `sorted` the kernel orders
/// k <= 128 keys itself; larger k add a radix sort of the `rows x k` result.
/// The workspace ([`topk_workspace_bytes`]) has room for every key as a
/// candidate, 10 bytes per key (12 for f32), which constant rows (every key
/// ties) use.
///
/// Errors ([`Error::InvalidArgument`]): `k` is 0 or more than the row
/// length, rows longer than [`MAX_SORT_LEN`], `keys` on another device.
pub fn topk<'a, K: TopkKey>(
    device: &Device,
    keys: impl Into<Batch<'a, K>>,
    k: usize,
    options: TopkOptions,
) -> Result<Sorted<K>> {
    let keys = keys.into();
    let (rows, n) = checked(device, &keys)?;
    check_k(k, n)?;
    let bytes = topk_workspace_bytes::<K>(device, rows, n, k, options)?;
    blocking(device, rows * k, bytes, |stream, values, indices, ws| {
        topk_on(stream, keys, k, options, values, indices, ws)
    })
}

fn check_k(k: usize, n: usize) -> Result<()> {
    if k == 0 || k > n {
        return Err(Error::InvalidArgument {
            name: "k",
            reason: format!("k = {k}: must be in 1..={n} (the row length)"),
        });
    }
    Ok(())
}

/// The selection launch, the sort of its result (with `sorted` and k past
/// what the kernel orders itself) and their workspace.
struct TopkPlan {
    select: algos::LaunchPlan<algos::TopKTiling>,
    sort: Option<SortPlan>,
    layout: Layout,
    scratch: Part,
}

impl TopkPlan {
    fn new<K: TopkKey>(
        device: &Device,
        rows: usize,
        n: usize,
        k: usize,
        options: TopkOptions,
    ) -> Result<TopkPlan> {
        check_k(k, n)?;
        // The kernel orders small k itself; larger k take a sort of its result.
        let in_kernel = options.sorted && k as u64 <= algos::TopK::MAX_SORTED_K;
        let select = algos::TopK::new(K::DTYPE)?.plan(
            device.profile(),
            rows as u64,
            n as u64,
            k as u64,
            options.largest,
            in_kernel,
        )?;
        let sort_options = SortOptions {
            descending: options.largest,
            algorithm: SortAlgorithm::Auto,
        };
        let sort = (options.sorted && !in_kernel)
            .then(|| SortPlan::new::<K>(device, rows, k, sort_options, Carry::Values(4)))
            .transpose()?;
        // The sort runs after the selection: both use the workspace from byte 0.
        let mut layout = Layout::default();
        let scratch = layout.add(select.workspace_bytes as usize);
        if let Some(s) = &sort {
            if s.layout.bytes() > layout.bytes() {
                layout = Layout::default();
                layout.add(s.layout.bytes());
            }
        }
        Ok(TopkPlan {
            select,
            sort,
            layout,
            scratch,
        })
    }
}

/// Bytes of [`Workspace`] that [`topk_on`] needs for `rows` rows of `n`
/// keys of type `K`.
pub fn topk_workspace_bytes<K: TopkKey>(
    device: &Device,
    rows: usize,
    n: usize,
    k: usize,
    options: TopkOptions,
) -> Result<usize> {
    check_len_limit(n)?;
    Ok(TopkPlan::new::<K>(device, rows, n, k, options)?
        .layout
        .bytes())
}

/// The stream-ordered [`topk`]: enqueues the selection (and with `sorted`
/// the sort of its result) on `stream` and returns at once, writing the
/// `rows x k` keys into `values` and their indices into `indices`
/// (caller-owned, each `rows * k` long). No allocation, no host
/// synchronisation. Errors as for [`topk`], plus `values`, `indices` or
/// `workspace` of the wrong size or device.
pub fn topk_on<'a, K: TopkKey>(
    stream: &Stream,
    keys: impl Into<Batch<'a, K>>,
    k: usize,
    options: TopkOptions,
    values: &mut DeviceBuffer<K>,
    indices: &mut DeviceBuffer<i32>,
    workspace: &mut Workspace,
) -> Result<()> {
    let keys = keys.into();
    let (rows, n) = checked_on(stream, &keys, values, indices)?;
    let mut plan = TopkPlan::new::<K>(stream.device(), rows, n, k, options)?;
    check_len(values.len(), rows * k, "values")?;
    check_len(indices.len(), rows * k, "indices")?;
    workspace.check(stream, &plan.layout)?;
    let args = runtime::TopKArgs {
        keys: keys.data().ptr(),
        values: values.ptr(),
        indices: indices.ptr(),
        workspace: workspace.at(plan.scratch),
    };
    stream.with_queue(&[keys.data(), &*values, &*indices, &*workspace], |s| {
        runtime::launch(s, &mut plan.select, args)
    })?;
    match plan.sort {
        // The sort reads the selection from the outputs and ends there.
        Some(sort) => sort.enqueue(
            stream,
            values,
            Some(indices),
            Some(values),
            indices,
            workspace,
        ),
        None => Ok(()),
    }
}
