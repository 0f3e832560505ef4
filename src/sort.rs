//! RADIXSORT: stable sort of keys with their permutation, 1-D or per row of
//! a batch (like `torch.sort(stable=True)`).
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::ffi;
use crate::scan::Batch;

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
    if !device.same(keys.data().device()) {
        return Err(Error::InvalidArgument {
            name: "keys",
            reason: "the buffer lives on another device".into(),
        });
    }
    let (rows, n) = (keys.row_count(), keys.row_len());
    if n as u64 > MAX_SORT_LEN {
        return Err(Error::InvalidArgument {
            name: "keys",
            reason: format!("{n} keys per row: at most {MAX_SORT_LEN} (indices are i32)"),
        });
    }
    let total = keys.data().len();
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
    let bits = options.algorithm.digit_bits();
    let passes = algo.passes(bits);
    let mut workspace: Option<DeviceBuffer<u8>> = None;
    for pass in 0..passes {
        let mut plan = algo.plan(
            device.profile(),
            rows as u64,
            n as u64,
            bits,
            pass,
            options.descending,
        )?;
        let ws_bytes = plan.workspace_bytes as usize;
        if workspace.as_ref().is_none_or(|w| w.len() < ws_bytes) {
            workspace = Some(device.alloc_uninit::<u8>(ws_bytes)?);
        }
        let ws = workspace
            .as_ref()
            .map_or(std::ptr::null_mut(), DeviceBuffer::ptr);
        // Pass p reads buffer (p + 1) % 2 (the input for p = 0) and writes p % 2.
        let dst = (pass % 2) as usize;
        let (keys_in, idx_in) = if pass == 0 {
            (keys.data().ptr(), std::ptr::null_mut())
        } else {
            (out[1 - dst].ptr(), idx[1 - dst].ptr())
        };
        let gm = [keys_in, idx_in, out[dst].ptr(), idx[dst].ptr(), ws];
        device.run(|stream| ffi::launch(stream, &mut plan, &gm))?;
    }
    let last = ((passes - 1) % 2) as usize;
    let [a, b] = out;
    let [ia, ib] = idx;
    let (values, indices) = if last == 0 { (a, ia) } else { (b, ib) };
    Ok(Sorted { values, indices })
}
