//! Runs of equal keys: their start flags (RUNHEADS), the keys of the runs
//! (`unique_consecutive`) and reductions by key, i.e. over each run of equal
//! keys (docs/algorithms.md, section "Runs of equal keys (RUNHEADS)").
use super::segextrema::{segmented_max, segmented_min, ExtremaValue, SegmentExtrema};
use super::segscan::{
    max_segmented_len, other_device, segmented_sum, SegSumOptions, SegmentSums, SegmentedSumInput,
    Segments,
};
use super::sort::{sort, SortKey, SortOptions};
use super::split::{compress_with, CompressOptions, SplitValue, MAX_SPLIT_LEN};
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_len, Stream};

/// Key types of the run operations: f16, bf16, f32, i16, u16, i32, u32.
/// Floats are equal by value (`==`): -0.0 equals +0.0, and a NaN equals
/// nothing, so every NaN is a run of its own (the array API standard's rule
/// for unique values). Integers are equal when their bits are.
pub trait RunKey: SplitValue + SortKey {}
impl RunKey for half::f16 {}
impl RunKey for half::bf16 {}
impl RunKey for f32 {}
impl RunKey for i16 {}
impl RunKey for u16 {}
impl RunKey for i32 {}
impl RunKey for u32 {}

/// The start flags of the runs of equal keys: `flags[i] = 1` where a run
/// starts (`i = 0`, or `keys[i] != keys[i - 1]` under [`RunKey`]'s
/// equality), else 0, as one int8 flag per key. They are the
/// [`Segments::Flags`] of the runs.
///
/// One launch of the RUNHEADS kernel on the vector cores: one read of the
/// keys and one write of the flags. An empty `keys` gives an empty buffer
/// without a launch.
///
/// Errors ([`Error::InvalidArgument`]): `keys` on another device, or longer
/// than [`MAX_SPLIT_LEN`].
pub fn run_heads<K: RunKey>(device: &Device, keys: &DeviceBuffer<K>) -> Result<DeviceBuffer<i8>> {
    check_keys(device, keys)?;
    let mut flags = device.alloc_uninit::<i8>(keys.len())?;
    if !keys.is_empty() {
        device.blocking(|s| run_heads_on(s, keys, &mut flags))?;
    }
    Ok(flags)
}

/// The stream-ordered [`run_heads`]: enqueues RUNHEADS on `stream`, writing
/// `flags` (caller-owned, exactly as long as `keys`), and returns at once.
/// No allocation, no host synchronisation, no workspace. An empty `keys`
/// enqueues nothing.
///
/// Errors ([`Error::InvalidArgument`]): a buffer on another device than the
/// stream, `flags` of another length than `keys`, `keys` longer than
/// [`MAX_SPLIT_LEN`].
pub fn run_heads_on<K: RunKey>(
    stream: &Stream,
    keys: &DeviceBuffer<K>,
    flags: &mut DeviceBuffer<i8>,
) -> Result<()> {
    stream.check_device(keys, "keys")?;
    stream.check_device(flags, "flags")?;
    check_len(flags.len(), keys.len(), "flags")?;
    check_keys_len(keys.len())?;
    if keys.is_empty() {
        return Ok(());
    }
    let mut plan =
        algos::RunHeads::new(K::DTYPE)?.plan(stream.device().profile(), keys.len() as u64)?;
    let args = runtime::RunHeadsArgs {
        keys: keys.ptr(),
        flags: flags.ptr(),
    };
    stream.with_queue(&[keys, &*flags], |s| runtime::launch(s, &mut plan, args))
}

/// The runs of equal keys of an array (PyTorch's `unique_consecutive`, with
/// where each run starts).
///
/// The buffers `keys` and `starts` are allocated at the input's length
/// (the number of runs is only known on the device) and hold `count` valid
/// elements at the front.
#[derive(Debug)]
pub struct Runs<K: Element> {
    /// The key of each run (its first key: with float keys, the sign of a
    /// run of zeros is its first zero's), `count` valid.
    pub keys: DeviceBuffer<K>,
    /// Where each run starts (i32), `count` valid: the first `count` entries
    /// of the runs' CSR-style offsets.
    pub starts: DeviceBuffer<i32>,
    /// The start flags ([`run_heads`]), one per input key.
    pub flags: DeviceBuffer<i8>,
    /// Number of runs (0 for no key).
    pub count: usize,
}

impl<K: Element> Runs<K> {
    /// The `count` keys of the runs.
    pub fn download_keys(&self) -> Result<Vec<K>> {
        self.keys.download_prefix(self.count)
    }
    /// The runs' CSR-style offsets: the `count` starts, then the length of
    /// the input (`count + 1` entries; just `[0]` for no key).
    pub fn download_offsets(&self) -> Result<Vec<i32>> {
        let mut offsets = self.starts.download_prefix(self.count)?;
        offsets.push(self.flags.len() as i32);
        Ok(offsets)
    }
    /// The number of keys of every run (PyTorch's `return_counts`).
    pub fn download_lengths(&self) -> Result<Vec<usize>> {
        let offsets = self.download_offsets()?;
        Ok(offsets.windows(2).map(|w| (w[1] - w[0]) as usize).collect())
    }
}

/// The runs of equal keys of `keys`: the key of every run, where it starts
/// and how many there are (PyTorch's `unique_consecutive`; equality as in
/// [`RunKey`]).
///
/// Two launches: RUNHEADS ([`run_heads`]), then COMPRESS of the keys at the
/// starts with their indices ([`compress_with`]). Exact: keys are moved as
/// bit patterns. Traffic: read the keys twice and the flags once, write the
/// flags, the runs' keys and their starts.
///
/// Stream-ordered, the same is [`run_heads_on`] then [`crate::compress_on`]
/// with indices.
///
/// Errors ([`Error::InvalidArgument`]): `keys` on another device, or longer
/// than [`MAX_SPLIT_LEN`].
pub fn unique_consecutive<K: RunKey>(device: &Device, keys: &DeviceBuffer<K>) -> Result<Runs<K>> {
    let flags = run_heads(device, keys)?;
    let kept = compress_with(device, keys, &flags, CompressOptions { want_indices: true })?;
    let starts = kept.indices.expect("COMPRESS was asked for the indices");
    Ok(Runs {
        keys: kept.values,
        starts,
        flags,
        count: kept.count,
    })
}

/// The distinct keys of an array in ascending order ([`unique`]).
#[derive(Debug)]
pub struct Unique<K: Element> {
    /// The runs of the sorted keys: `runs.keys` the distinct keys in
    /// ascending order, [`Runs::download_lengths`] how often each occurs;
    /// `runs.starts` and `runs.flags` are positions in the sorted order.
    pub runs: Runs<K>,
    /// The stable sorting order: sorted key `i` is `keys[order[i]]` (so the
    /// keys of run `j` are `keys[order[starts[j]..starts[j + 1]]]`).
    pub order: DeviceBuffer<i32>,
}

/// The distinct keys of `keys` in ascending order, with how often each
/// occurs and the sorting order (PyTorch's `torch.unique(sorted=True,
/// return_counts=True)`, the sort's permutation in place of
/// `return_inverse`).
///
/// The order is [`sort`]'s (-0.0 and +0.0 sort together, the first zero
/// in input order names the run; NaNs sort last) and the equality is
/// [`RunKey`]'s: every NaN is a distinct key of its own.
///
/// Launches: the stable [`sort`], then [`unique_consecutive`] of the sorted
/// keys. For a reduction by key over unsorted keys, sort the keys with
/// their values ([`crate::sort_pairs`]) and reduce the sorted pairs
/// ([`sum_by_key`], [`max_by_key`], [`min_by_key`]).
///
/// Errors ([`Error::InvalidArgument`]): `keys` on another device, or longer
/// than [`MAX_SPLIT_LEN`].
pub fn unique<K: RunKey>(device: &Device, keys: &DeviceBuffer<K>) -> Result<Unique<K>> {
    check_keys(device, keys)?;
    let sorted = sort(device, keys, SortOptions::default())?;
    let runs = unique_consecutive(device, &sorted.values)?;
    Ok(Unique {
        runs,
        order: sorted.indices,
    })
}

/// A reduction by key: the runs of equal keys and one result per run.
#[derive(Debug)]
pub struct ByKey<K: Element, R> {
    /// The runs of equal keys.
    pub runs: Runs<K>,
    /// The reduction of the values of every run, in run order.
    pub reduced: R,
}

/// Sum of the values of every run of equal keys (CUB's `ReduceByKey` with
/// a sum, or PyTorch's `unique_consecutive` then `segment_reduce(.., "sum")`
/// over the counts): `reduced.sums[j]` is the sum of `values` over run `j`
/// of `keys`.
///
/// Numerics and the algorithms: those of [`segmented_sum`] with the runs
/// as [`Segments::Flags`] (f16/bf16/f32 values summed in f32, i8 in i32,
/// exact). Launches: [`unique_consecutive`], then the segmented sum.
///
/// Stream-ordered, the same is [`run_heads_on`], then
/// [`crate::compress_on`] of the keys with indices and
/// [`crate::segmented_sum_on`] with the flags.
///
/// Errors ([`Error::InvalidArgument`] naming the argument): a buffer on
/// another device, `values` not as long as `keys`, `values` longer than the
/// segmented sum takes ([`crate::MAX_I8_SCAN_LEN`] i8 values).
pub fn sum_by_key<K: RunKey, T: SegmentedSumInput>(
    device: &Device,
    keys: &DeviceBuffer<K>,
    values: &DeviceBuffer<T>,
    options: SegSumOptions,
) -> Result<ByKey<K, SegmentSums<T::Acc>>> {
    check_values(device, keys, values)?;
    let max = max_segmented_len::<T>();
    if values.len() > max {
        return Err(Error::InvalidArgument {
            name: "values",
            reason: format!(
                "{} values: the segmented sum takes at most {max}",
                values.len()
            ),
        });
    }
    let runs = unique_consecutive(device, keys)?;
    let reduced =
        segmented_sum(device, values, Segments::Flags(&runs.flags), options).map_err(as_values)?;
    Ok(ByKey { runs, reduced })
}

/// The maximum of the values of every run of equal keys, with its index in
/// `values` (the first one; NaN wins: [`segmented_max`]'s rules).
///
/// Launches: [`unique_consecutive`], then the runs' offsets are made on the
/// host from their starts (a download of 4 bytes per run and an upload),
/// then SEGEXTREMA.
///
/// Errors ([`Error::InvalidArgument`] naming the argument): a buffer on
/// another device, `values` not as long as `keys`, `keys` longer than
/// [`MAX_SPLIT_LEN`].
pub fn max_by_key<K: RunKey, T: ExtremaValue>(
    device: &Device,
    keys: &DeviceBuffer<K>,
    values: &DeviceBuffer<T>,
) -> Result<ByKey<K, SegmentExtrema<T>>> {
    extrema_by_key(device, keys, values, segmented_max)
}

/// The minimum of the values of every run of equal keys, with its index:
/// as [`max_by_key`] with [`segmented_min`]'s rules.
pub fn min_by_key<K: RunKey, T: ExtremaValue>(
    device: &Device,
    keys: &DeviceBuffer<K>,
    values: &DeviceBuffer<T>,
) -> Result<ByKey<K, SegmentExtrema<T>>> {
    extrema_by_key(device, keys, values, segmented_min)
}

type Extrema<T> = fn(&Device, &DeviceBuffer<T>, Segments<'_>) -> Result<SegmentExtrema<T>>;

fn extrema_by_key<K: RunKey, T: ExtremaValue>(
    device: &Device,
    keys: &DeviceBuffer<K>,
    values: &DeviceBuffer<T>,
    extreme: Extrema<T>,
) -> Result<ByKey<K, SegmentExtrema<T>>> {
    check_values(device, keys, values)?;
    let runs = unique_consecutive(device, keys)?;
    let offsets = device.upload(&runs.download_offsets()?)?;
    let reduced = extreme(device, values, Segments::Offsets(&offsets)).map_err(as_values)?;
    Ok(ByKey { runs, reduced })
}

/// An error of the segmented operation a reduction by key runs, named as
/// the reduction's arguments: its `x` is our `values` (its segments come
/// from the keys and are valid by construction).
fn as_values(e: Error) -> Error {
    match e {
        Error::InvalidArgument { name: "x", reason } => Error::InvalidArgument {
            name: "values",
            reason,
        },
        e => e,
    }
}

fn check_keys<K: Element>(device: &Device, keys: &DeviceBuffer<K>) -> Result<()> {
    if !device.same(keys.device()) {
        return Err(other_device("keys"));
    }
    check_keys_len(keys.len())
}

fn check_keys_len(n: usize) -> Result<()> {
    if n as u64 > MAX_SPLIT_LEN {
        return Err(Error::InvalidArgument {
            name: "keys",
            reason: format!("{n} keys: at most {MAX_SPLIT_LEN} (run starts are i32)"),
        });
    }
    Ok(())
}

fn check_values<K: Element, T: Element>(
    device: &Device,
    keys: &DeviceBuffer<K>,
    values: &DeviceBuffer<T>,
) -> Result<()> {
    check_keys(device, keys)?;
    if !device.same(values.device()) {
        return Err(other_device("values"));
    }
    if values.len() != keys.len() {
        return Err(Error::InvalidArgument {
            name: "values",
            reason: format!("{} values for {} keys", values.len(), keys.len()),
        });
    }
    Ok(())
}
