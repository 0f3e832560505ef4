//! What a scan takes and returns: input and accumulator types, the
//! operator, the options, batches and the output.
use super::algorithm::Algorithm;
use crate::device::{DeviceBuffer, Element};
use crate::error::{Error, Result};

/// Input types of the scans and their accumulator types (i32 only for max
/// and min: its sums could overflow).
pub trait ScanInput: Element {
    /// Accumulator and output type: f32 for f16, bf16 and f32 input, i32 for
    /// i8 and i32 input.
    type Acc: Accumulator;
}

/// Accumulator and output types of the scans and reductions (f32, i32):
/// each operator has its identity in them.
pub trait Accumulator: Element {
    /// The identity of `op`: 0 for [`ScanOp::Sum`], -inf / `i32::MIN` for
    /// [`ScanOp::Max`], +inf / `i32::MAX` for [`ScanOp::Min`]: the exclusive
    /// scan's first element and the total of an empty input.
    fn identity(op: ScanOp) -> Self;
    /// False for an infinity or a NaN (integers are always finite).
    fn is_finite(self) -> bool;
    /// NaN, for float accumulators (integers have none).
    fn not_a_number() -> Option<Self>;
}
impl Accumulator for f32 {
    fn identity(op: ScanOp) -> f32 {
        match op {
            ScanOp::Sum => 0.0,
            ScanOp::Max => f32::NEG_INFINITY,
            ScanOp::Min => f32::INFINITY,
        }
    }
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    fn not_a_number() -> Option<f32> {
        Some(f32::NAN)
    }
}
impl Accumulator for i32 {
    fn identity(op: ScanOp) -> i32 {
        match op {
            ScanOp::Sum => 0,
            ScanOp::Max => i32::MIN,
            ScanOp::Min => i32::MAX,
        }
    }
    fn is_finite(self) -> bool {
        true
    }
    fn not_a_number() -> Option<i32> {
        None
    }
}
impl ScanInput for half::f16 {
    type Acc = f32;
}
impl ScanInput for half::bf16 {
    type Acc = f32;
}
impl ScanInput for f32 {
    type Acc = f32;
}
impl ScanInput for i8 {
    type Acc = i32;
}
impl ScanInput for i32 {
    type Acc = i32;
}

/// The scan's binary operator. Each has an identity: the exclusive scan's
/// first element and the total of an empty input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScanOp {
    /// `+`, identity 0. Runs on the cube (every [`Algorithm`] but
    /// `VectorScan`) or on the vector unit (`VectorScan`, the f32 path).
    #[default]
    Sum,
    /// `max`, identity -inf (f32 output) or `i32::MIN` (i32 output). Runs on
    /// the vector unit (the cube can only add).
    Max,
    /// `min`, identity +inf (f32 output) or `i32::MAX` (i32 output). Runs on
    /// the vector unit.
    Min,
}

/// Which extreme an operation finds: the running one of [`crate::cum_extreme_on`]
/// (cummax / cummin), or the one of each segment of
/// [`crate::segmented_extrema_on`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Extreme {
    /// The largest value (a NaN counts as above every number).
    Max,
    /// The smallest value (a NaN counts as below every number).
    Min,
}

impl Extreme {
    /// The scan operator of this extreme.
    pub fn op(self) -> ScanOp {
        match self {
            Extreme::Max => ScanOp::Max,
            Extreme::Min => ScanOp::Min,
        }
    }
}

/// How to scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScanOptions {
    /// Exclusive scan (`y[0] = 0`, `y[i] = x[0] + ... + x[i-1]`) instead of inclusive.
    pub exclusive: bool,
    /// Algorithm.
    pub algorithm: Algorithm,
    /// Also return the total (the operator over all elements; one per row
    /// of a batch).
    pub want_total: bool,
    /// The operator.
    pub op: ScanOp,
}

/// The input of a scan: one array (`&DeviceBuffer`), or a batch of `rows`
/// equal-length arrays stored one after the other (row-major 2-D).
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a, T: Element> {
    pub(super) data: &'a DeviceBuffer<T>,
    pub(super) rows: usize,
}

impl<'a, T: Element> Batch<'a, T> {
    /// `data` viewed as `rows` arrays of `data.len() / rows` elements each.
    pub fn rows(data: &'a DeviceBuffer<T>, rows: usize) -> Result<Batch<'a, T>> {
        if rows == 0 || rows > MAX_BATCH_ROWS {
            return Err(Error::InvalidArgument {
                name: "rows",
                reason: format!("{rows} rows: a batch has 1..={MAX_BATCH_ROWS} rows"),
            });
        }
        if !data.len().is_multiple_of(rows) {
            return Err(Error::InvalidArgument {
                name: "rows",
                reason: format!(
                    "{} elements do not split into {rows} rows of equal length",
                    data.len()
                ),
            });
        }
        Ok(Batch { data, rows })
    }

    /// The whole buffer.
    pub fn data(&self) -> &'a DeviceBuffer<T> {
        self.data
    }

    /// Number of arrays.
    pub fn row_count(&self) -> usize {
        self.rows
    }

    /// Length of each array.
    pub fn row_len(&self) -> usize {
        self.data.len() / self.rows
    }
}

impl<'a, T: Element> From<&'a DeviceBuffer<T>> for Batch<'a, T> {
    fn from(data: &'a DeviceBuffer<T>) -> Batch<'a, T> {
        Batch { data, rows: 1 }
    }
}

/// Result of a scan.
#[derive(Debug)]
pub struct ScanOutput<A: Element> {
    /// The scan, one element per input element (row-major for a batch).
    pub values: DeviceBuffer<A>,
    /// The totals, one per row, when requested (the identity for an empty row).
    pub totals: Option<Vec<A>>,
}

impl<A: Element> ScanOutput<A> {
    /// The total of a one-row scan, when requested (`None` for a batch of
    /// several rows: see [`ScanOutput::totals`]).
    pub fn total(&self) -> Option<A> {
        match self.totals.as_deref() {
            Some([t]) => Some(*t),
            _ => None,
        }
    }
}

/// Longest i8 row whose every prefix sum provably fits i32, decided from the
/// length alone: -128 * 2^24 = i32::MIN and 127 * 2^24 < i32::MAX.
pub const MAX_I8_SCAN_LEN: usize = 1 << 24;

/// Longest array (or batch row) a scan takes: kernels index with 32-bit
/// element offsets inside a row.
pub const MAX_SCAN_LEN: usize = i32::MAX as usize;

/// Rows longer than [`MAX_SCAN_LEN`] are an error naming `x`.
pub(crate) fn check_row_len(n: usize) -> Result<()> {
    if n > MAX_SCAN_LEN {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: format!("{n} elements per row: a scan takes at most {MAX_SCAN_LEN}"),
        });
    }
    Ok(())
}

/// Most rows of a batched scan.
pub const MAX_BATCH_ROWS: usize = 65535;
