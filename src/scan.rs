//! Scan (prefix sum).
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::ffi;

/// Input types of the cube scans and their accumulator types.
pub trait ScanInput: Element {
    /// Accumulator and output type: f32 for f16 input, i32 for i8 input.
    type Acc: Element;
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

/// Which scan algorithm to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Let the library choose: the fastest algorithm of the nearest shape in
    /// the policy table that `cargo xtask bench --policy` models and commits
    /// (src/policy_table.rs); [`Algorithm::auto_for`] tells which.
    #[default]
    Auto,
    /// SCANU with tile edge s (16, 32, 64 or 128): one cube core computes
    /// s-wide row scans, one vector core propagates the carry.
    ScanU {
        /// Tile edge.
        s: u32,
    },
    /// MCSCAN with tile edge s (16, 32, 64 or 128), the published multi-core
    /// scan: every AI core scans its block's tiles on the cube while its
    /// vector cores sum the block; after SyncAll the vector cores add the
    /// carries. About 16 bytes of HBM traffic per f16 element.
    McScan {
        /// Tile edge.
        s: u32,
    },
    /// Reduce-then-scan with tile edge s (16, 32, 64 or 128): the vector
    /// cores sum each block, SyncAll, then the cube scans tiles into a small
    /// per-core ring in GM (L2-resident) from which the vector cores add the
    /// carries and write the result once. About 8 bytes of HBM traffic per
    /// f16 element.
    ReduceThenScan {
        /// Tile edge.
        s: u32,
    },
    /// VECCUMSUM with tile edge s (16, 32 or 64): the vector-only baseline on
    /// one vector core (transpose by Gather, row-wise adds, carry).
    VecCumSum {
        /// Tile edge.
        s: u32,
    },
    /// The vector-unit scan (OPSCAN) on every vector core: the only sum for
    /// f32 input (the cube scans take f16, bf16 and i8), and the algorithm
    /// of max and min scans.
    VectorScan,
    /// SCANUL1 with tile edge s: the cube computes each whole s*s-tile scan
    /// (`A @ U + L- @ (A @ 1)`, the `L-` step with f32 operands so row sums
    /// past 2048 stay accurate); the vector core adds one carry per tile.
    ScanUL1 {
        /// Tile edge.
        s: u32,
    },
}

impl Algorithm {
    /// The algorithm `Auto` runs for `rows` arrays of `n` elements of `T`
    /// (sum scans; max and min always run as `VectorScan`).
    pub fn auto_for<T: ScanInput>(rows: usize, n: usize) -> Algorithm {
        if T::DTYPE == algos::DType::F32 {
            return Algorithm::VectorScan;
        }
        crate::policy::choose(T::DTYPE, rows, n)
    }

    /// The constant d of the algorithm's f32 error bound for float inputs:
    /// element i of a row (inclusive) is within (d + i/d + 2) * 2^-24 *
    /// sum_{j<=i} |x_j| of the exact prefix sum (d bounds the depth of the
    /// addition tree inside a tile, i/d the carries between tiles). `None`
    /// for `Auto` (resolve it with [`Algorithm::auto_for`] first).
    ///
    /// Exclusive scans: element i is the exact sum of `x[..i]` within the
    /// same expression with the magnitude `sum_{j<i} |x_j|` (no algorithm
    /// subtracts `x[i]` from an inclusive value).
    pub fn error_depth(self) -> Option<u32> {
        match self {
            Algorithm::Auto => None,
            Algorithm::ScanUL1 { s } => Some(2 * s),
            Algorithm::VectorScan => Some(256),
            a => a.tile_edge(),
        }
    }

    /// The tile edge s, `None` for `Auto`.
    pub fn tile_edge(self) -> Option<u32> {
        match self {
            Algorithm::Auto | Algorithm::VectorScan => None,
            Algorithm::ScanU { s }
            | Algorithm::McScan { s }
            | Algorithm::ReduceThenScan { s }
            | Algorithm::VecCumSum { s }
            | Algorithm::ScanUL1 { s } => Some(s),
        }
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            Algorithm::Auto => return f.write_str("Auto"),
            Algorithm::VectorScan => return f.write_str("VECTORSCAN"),
            Algorithm::ScanU { .. } => "SCANU",
            Algorithm::McScan { .. } => "MCSCAN",
            Algorithm::ReduceThenScan { .. } => "RTSCAN",
            Algorithm::VecCumSum { .. } => "VECCUMSUM",
            Algorithm::ScanUL1 { .. } => "SCANUL1",
        };
        match self.tile_edge() {
            Some(s) => write!(f, "{name} s={s}"),
            None => f.write_str(name),
        }
    }
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
    data: &'a DeviceBuffer<T>,
    rows: usize,
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

/// Most rows of a batched scan.
pub const MAX_BATCH_ROWS: usize = 65535;

/// Launches a cube scan once per (x, y, total) triple, one after the other
/// on the device's stream: allocates the workspace and writes its constant
/// prefix once (every launch rewrites the scratch it reads), passes (x, y,
/// total, workspace).
fn launch_with_workspace<T: ffi::Launchable>(
    device: &Device,
    mut plan: algos::LaunchPlan<T>,
    constants: &[u8],
    ios: impl IntoIterator<Item = [*mut std::ffi::c_void; 3]>,
) -> Result<()> {
    let workspace = device.alloc_zeroed::<u8>(plan.workspace_bytes as usize)?;
    device.write(&workspace, constants)?;
    for io in ios {
        let gm = [io[0], io[1], io[2], workspace.ptr()];
        device.run(|stream| ffi::launch(stream, &mut plan, &gm))?;
    }
    Ok(())
}

enum Chosen {
    ScanU(algos::ScanU),
    ScanUL1(algos::ScanUL1),
    McScan(algos::McScan),
    ReduceThenScan(algos::ReduceThenScan),
    VecCumSum(algos::VecCumSum),
}

/// Errors in the algorithm's parameters are errors in `options.algorithm`.
fn algorithm_error(e: algos::AlgoError) -> Error {
    match e {
        algos::AlgoError::InvalidArgument { reason, .. } => Error::InvalidArgument {
            name: "options.algorithm",
            reason,
        },
        other => other.into(),
    }
}

/// Scans `x` (one array, or a [`Batch`] of equal-length rows) on its device.
///
/// f16, bf16 and i8 inputs scan on the cube or the vector cores, f32 on the
/// vector cores ([`Algorithm::VectorScan`]); other element types do not
/// compile:
///
/// ```compile_fail
/// # use ascend_scan::{scan, Device, ScanOptions};
/// let dev = Device::default_device().unwrap();
/// let x = dev.upload(&[1u16; 8]).unwrap();
/// let _ = scan(&dev, &x, ScanOptions::default()); // u16 is not a ScanInput
/// ```
///
/// Non-finite inputs (f16, bf16, f32 sums): an inf or NaN affects exactly the
/// outputs from its position on, with IEEE results, as in `torch.cumsum`
/// (docs/algorithms.md, "Non-finite inputs"); every algorithm.
///
/// Numerics: f16 inputs accumulate in f32 (the cube multiplies exactly and
/// adds in f32 within s-wide rows; the vector unit adds the running f32
/// carry), so the error is that of an f32 sequential sum: |err| <= n * eps32 *
/// sum|x| (eps32 = 2^-24) up to a small constant. i8 inputs accumulate exactly
/// in i32; rows longer than [`MAX_I8_SCAN_LEN`] are refused because their
/// sum could overflow i32.
///
/// Errors: [`Error::InvalidArgument`] naming `x` (rows past
/// [`MAX_SCAN_LEN`], i8 sum rows past [`MAX_I8_SCAN_LEN`], a buffer of
/// another device, NaN in max/min input) or `options.algorithm` (a tile edge
/// the algorithm does not have, a cube algorithm for max/min);
/// [`Error::Unsupported`] for a dtype the algorithm lacks (f32 on the cube,
/// i8 on `ScanUL1`, bf16 and f32 max/min), whatever the length.
///
/// Max and min ([`ScanOp::Max`], [`ScanOp::Min`]) run on all vector cores
/// (OPSCAN: Gather transposes and row-wise vector Max/Min; only
/// `Algorithm::Auto` is accepted) and are exact: every result is an input
/// element converted exactly (f16 -> f32, i8 -> i32) or the identity. The
/// exclusive scan starts each row with the identity; an empty row's total is
/// the identity. f16 inputs holding a NaN are refused with
/// [`Error::InvalidArgument`] naming `x` (checked on the device during the
/// scan): the NaN behaviour of the vector Max/Min instructions is not
/// documented for Atlas A2, so no result is promised for it. When -0.0 and
/// +0.0 tie, which of them a result holds is not specified (they compare
/// equal).
pub fn scan<'a, T: ScanInput>(
    device: &Device,
    x: impl Into<Batch<'a, T>>,
    options: ScanOptions,
) -> Result<ScanOutput<T::Acc>> {
    let x = x.into();
    if !device.same(x.data.device()) {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: "the buffer lives on another device".into(),
        });
    }
    let n = x.row_len();
    if n > MAX_SCAN_LEN {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: format!("{n} elements per row: a scan takes at most {MAX_SCAN_LEN}"),
        });
    }
    if options.op == ScanOp::Sum && T::DTYPE == algos::DType::I8 && n > MAX_I8_SCAN_LEN {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: format!(
                "{n} int8 elements per row could overflow the int32 scan (at most {MAX_I8_SCAN_LEN})"
            ),
        });
    }
    let algorithm = match (options.algorithm, options.op) {
        (Algorithm::Auto, ScanOp::Sum) => Algorithm::auto_for::<T>(x.rows, n),
        (Algorithm::Auto, _) => Algorithm::VectorScan,
        (a, _) => a,
    };
    let options = ScanOptions {
        algorithm,
        ..options
    };
    if algorithm == Algorithm::VectorScan || options.op != ScanOp::Sum {
        return crate::opscan::scan_op(device, x, options);
    }
    scan_sum(device, x, options)
}

/// The sum scan of every row. SCANU and SCANUL1 scan all rows in one launch
/// (BATCHED SCANU, BATCHED SCANUL1); the other algorithms run one launch per row.
fn scan_sum<T: ScanInput>(
    device: &Device,
    x: Batch<'_, T>,
    options: ScanOptions,
) -> Result<ScanOutput<T::Acc>> {
    let (rows, n) = (x.rows, x.row_len());
    let chosen = match options.algorithm {
        Algorithm::Auto | Algorithm::VectorScan => {
            unreachable!("scan() resolves Auto and runs VectorScan in scan_op")
        }
        Algorithm::ScanU { s } => {
            Chosen::ScanU(algos::ScanU::new(T::DTYPE, s).map_err(algorithm_error)?)
        }
        Algorithm::ScanUL1 { s } => {
            Chosen::ScanUL1(algos::ScanUL1::new(T::DTYPE, s).map_err(algorithm_error)?)
        }
        Algorithm::McScan { s } => {
            Chosen::McScan(algos::McScan::new(T::DTYPE, s).map_err(algorithm_error)?)
        }
        Algorithm::ReduceThenScan { s } => Chosen::ReduceThenScan(
            algos::ReduceThenScan::new(T::DTYPE, s).map_err(algorithm_error)?,
        ),
        Algorithm::VecCumSum { s } => {
            Chosen::VecCumSum(algos::VecCumSum::new(T::DTYPE, s).map_err(algorithm_error)?)
        }
    };
    let values = device.alloc_uninit::<T::Acc>(rows * n)?;
    if n == 0 {
        let totals = options.want_total.then(|| vec![T::Acc::default(); rows]);
        return Ok(ScanOutput { values, totals });
    }
    // Each row's total in its own 32-byte slot: rows finish on different cores.
    let slot = 32 / std::mem::size_of::<T::Acc>();
    let totals = device.alloc_zeroed::<T::Acc>(rows * slot)?;
    let (n64, exclusive) = (n as u64, options.exclusive);
    let profile = device.profile();
    let row_io = |r: usize| {
        [
            x.data.ptr_at(r * n),
            values.ptr_at(r * n),
            totals.ptr_at(r * slot),
        ]
    };
    // The batched kernels take every row in one launch; the others one row each.
    let (batch, each_row) = ([row_io(0)], (0..rows).map(row_io));
    match chosen {
        Chosen::ScanU(a) => {
            let plan = a.plan(profile, rows as u32, n64, exclusive)?;
            launch_with_workspace(device, plan, &a.workspace_constants(), batch)?;
        }
        Chosen::ScanUL1(a) => {
            let plan = a.plan(profile, rows as u32, n64, exclusive)?;
            launch_with_workspace(device, plan, &a.workspace_constants(), batch)?;
        }
        Chosen::McScan(a) => {
            let plan = a.plan(profile, n64, exclusive)?;
            launch_with_workspace(device, plan, &a.workspace_constants(), each_row)?;
        }
        Chosen::ReduceThenScan(a) => {
            let plan = a.plan(profile, n64, exclusive)?;
            launch_with_workspace(device, plan, &a.workspace_constants(), each_row)?;
        }
        Chosen::VecCumSum(a) => {
            let mut plan = a.plan(profile, n64, exclusive)?;
            for io in each_row {
                device.run(|stream| ffi::launch(stream, &mut plan, &io))?;
            }
        }
    }
    let totals = if options.want_total {
        Some(totals.download()?.into_iter().step_by(slot).collect())
    } else {
        None
    };
    Ok(ScanOutput { values, totals })
}
