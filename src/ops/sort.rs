//! RADIXSORT: stable sort of keys with their permutation, 1-D or per row of
//! a batch (like `torch.sort(stable=True)`).
use super::scan::Batch;
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::runtime;

pub use algos::radix::MAX_SORT_LEN;

/// Key types of [`sort`]: u8, i8, u16, i16, f16, bf16.
pub trait SortKey: Element {}
impl SortKey for u8 {}
impl SortKey for i8 {}
impl SortKey for u16 {}
impl SortKey for i16 {}
impl SortKey for half::f16 {}
impl SortKey for half::bf16 {}

/// How [`sort`] sorts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortAlgorithm {
    /// The fastest (multi-bit digits: fewer passes over the same traffic
    /// per pass).
    #[default]
    Auto,
    /// The published split sort: one pass (one stable split) per key bit,
    /// 16 passes for 16-bit keys.
    OneBit,
    /// 4-bit digits: one stable 16-way counting sort per pass, 4 passes for
    /// 16-bit keys, 2 for 8-bit keys.
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
/// indices: 10). The input is not modified; the result and one scratch copy
/// of keys and indices are allocated on the device.
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
    sort_rows(
        device,
        keys.data(),
        None,
        rows,
        n,
        options.descending,
        options.algorithm,
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
    if n as u64 > MAX_SORT_LEN {
        return Err(Error::InvalidArgument {
            name: "keys",
            reason: format!("{n} keys per row: at most {MAX_SORT_LEN} (indices are i32)"),
        });
    }
    Ok((keys.row_count(), n))
}

/// The passes of a sort of `rows` rows of `n` keys; with `indices`, the
/// sort carries them (the first pass reads them instead of making 0..n).
fn sort_rows<K: SortKey>(
    device: &Device,
    keys: &DeviceBuffer<K>,
    indices: Option<&DeviceBuffer<i32>>,
    rows: usize,
    n: usize,
    descending: bool,
    algorithm: SortAlgorithm,
) -> Result<Sorted<K>> {
    let total = keys.len();
    let out = [
        device.alloc_uninit::<K>(total)?,
        device.alloc_uninit::<K>(total)?,
    ];
    let idx = [
        device.alloc_uninit::<i32>(total)?,
        device.alloc_uninit::<i32>(total)?,
    ];
    if total == 0 {
        let [values, _] = out;
        let [indices, _] = idx;
        return Ok(Sorted { values, indices });
    }
    let algo = algos::RadixSort::new(K::DTYPE)?;
    let bits = algorithm.digit_bits();
    let passes = algo.passes(bits);
    let mut workspace: Option<DeviceBuffer<u8>> = None;
    for pass in 0..passes {
        let mut plan = algo.plan(
            device.profile(),
            rows as u64,
            n as u64,
            bits,
            pass,
            descending,
            indices.is_none(),
        )?;
        let ws_bytes = plan.workspace_bytes as usize;
        if workspace.as_ref().is_none_or(|w| w.len() < ws_bytes) {
            workspace = Some(device.alloc_uninit::<u8>(ws_bytes)?);
        }
        let ws = workspace
            .as_ref()
            .map_or(std::ptr::null_mut(), DeviceBuffer::ptr);
        // Pass p reads buffer (p + 1) % 2 (the inputs for p = 0) and writes p % 2.
        let dst = pass as usize % 2;
        let (keys_in, idx_in) = if pass == 0 {
            (
                keys.ptr(),
                indices.map_or(std::ptr::null_mut(), DeviceBuffer::ptr),
            )
        } else {
            (out[1 - dst].ptr(), idx[1 - dst].ptr())
        };
        let args = runtime::RadixArgs {
            keys_in,
            idx_in,
            keys_out: out[dst].ptr(),
            idx_out: idx[dst].ptr(),
            workspace: ws,
        };
        device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    }
    let last = (passes - 1) as usize % 2;
    let [a, b] = out;
    let [ia, ib] = idx;
    let (values, indices) = if last == 0 { (a, ia) } else { (b, ib) };
    Ok(Sorted { values, indices })
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
/// Radix select on the vector cores (docs/algorithms.md, section "Top-k"), one launch:
/// a counting round per 4-bit digit, most significant first, narrows each
/// row to the k-th key (2 rounds for 8-bit keys, 4 for 16-bit keys; a round
/// reads the keys once, the ones of a row that fits the L2 from L2), then
/// one selection (count, SyncAll, compaction) writes the k keys and indices.
/// `sorted` adds a radix sort of the `rows x k` result.
///
/// Errors ([`Error::InvalidArgument`]): `k` is 0 or more than the row
/// length, rows longer than [`MAX_SORT_LEN`], `keys` on another device.
pub fn topk<'a, K: SortKey>(
    device: &Device,
    keys: impl Into<Batch<'a, K>>,
    k: usize,
    options: TopkOptions,
) -> Result<Sorted<K>> {
    let keys = keys.into();
    let (rows, n) = checked(device, &keys)?;
    if k == 0 || k > n {
        return Err(Error::InvalidArgument {
            name: "k",
            reason: format!("k = {k}: must be in 1..={n} (the row length)"),
        });
    }
    let algo = algos::RadixSort::select(K::DTYPE)?;
    let mut plan = algo.plan_select(
        device.profile(),
        rows as u64,
        n as u64,
        k as u64,
        options.largest,
    )?;
    let values = device.alloc_uninit::<K>(rows * k)?;
    let indices = device.alloc_uninit::<i32>(rows * k)?;
    let workspace = device.alloc_uninit::<u8>(plan.workspace_bytes as usize)?;
    let args = runtime::RadixArgs {
        keys_in: keys.data().ptr(),
        idx_in: std::ptr::null_mut(),
        keys_out: values.ptr(),
        idx_out: indices.ptr(),
        workspace: workspace.ptr(),
    };
    device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    if !options.sorted || k == 1 {
        return Ok(Sorted { values, indices });
    }
    sort_rows(
        device,
        &values,
        Some(&indices),
        rows,
        k,
        options.largest,
        SortAlgorithm::Auto,
    )
}
