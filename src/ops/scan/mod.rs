//! Scan (prefix sum): the cube scans (SCANU, SCANUL1, MCSCAN, RTSCAN), the
//! vector-only baseline (VECCUMSUM) and the vector-unit scans (`vector`), and
//! the policy of `Algorithm::Auto` (`policy`, with its generated table).
//!
//! Layers, no cycles: `algorithm` and `input` are the types; `vector` and
//! `policy` use them; `policy_table` is the data `policy` reads; this module
//! dispatches.
mod algorithm;
mod input;
pub(super) mod policy;
mod policy_table;
pub(super) mod vector;

pub use algorithm::Algorithm;
pub use input::{
    Accumulator, Batch, ScanInput, ScanOp, ScanOptions, ScanOutput, MAX_BATCH_ROWS,
    MAX_I8_SCAN_LEN, MAX_SCAN_LEN,
};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::runtime::{self, Gm};

/// The SoC profile the policy table of `Algorithm::Auto` was modeled on.
pub fn auto_policy_soc() -> &'static str {
    policy_table::SOC
}

impl Algorithm {
    /// The algorithm `Auto` runs for `rows` arrays of `n` elements of `T`
    /// (sum scans; max and min always run as `VectorScan`).
    pub fn auto_for<T: ScanInput>(rows: usize, n: usize) -> Algorithm {
        if T::DTYPE == algos::DType::F32 {
            return Algorithm::VectorScan;
        }
        policy::choose(policy_table::CELLS, T::DTYPE, rows, n)
    }
}

/// Launches a cube scan once per (x, y, total) triple, one after the other
/// on the device's stream: allocates the workspace and writes its constant
/// prefix once (every launch rewrites the scratch it reads), passes (x, y,
/// total, workspace).
fn launch_with_workspace<A: runtime::Launch>(
    device: &Device,
    mut plan: algos::LaunchPlan<A::Tiling>,
    constants: &[u8],
    ios: impl IntoIterator<Item = RowIo>,
    args: impl Fn(RowIo, Gm) -> A,
) -> Result<()> {
    let workspace = device.alloc_zeroed::<u8>(plan.workspace_bytes as usize)?;
    device.write(&workspace, constants)?;
    for io in ios {
        let args = args(io, workspace.ptr());
        device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    }
    Ok(())
}

/// The (x, y, total) device addresses of one launch of a cube scan.
#[derive(Clone, Copy)]
struct RowIo {
    x: Gm,
    y: Gm,
    total: Gm,
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
/// another device) or `options.algorithm` (a tile edge
/// the algorithm does not have, a cube algorithm for max/min);
/// [`Error::Unsupported`] for a dtype the algorithm lacks (f32 on the cube,
/// i8 on `ScanUL1`, bf16 and f32 max/min), whatever the length.
///
/// Max and min ([`ScanOp::Max`], [`ScanOp::Min`]) run on all vector cores
/// (OPSCAN: Gather transposes and row-wise vector Max/Min; only
/// `Algorithm::Auto` is accepted) and are exact: every result is an input
/// element converted exactly (f16 -> f32, i8 -> i32) or the identity. The
/// exclusive scan starts each row with the identity; an empty row's total is
/// the identity. NaN propagates as in `torch.cummax`/`torch.cummin`: every
/// result from a row's first NaN on (exclusive: after it) is NaN, and so is
/// the row's total; infinities are ordinary values. When -0.0 and
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
        return vector::scan_op(device, x, options);
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
    let row_io = |r: usize| RowIo {
        x: x.data.ptr_at(r * n),
        y: values.ptr_at(r * n),
        total: totals.ptr_at(r * slot),
    };
    // The batched kernels take every row in one launch; the others one row each.
    let (batch, each_row) = ([row_io(0)], (0..rows).map(row_io));
    match chosen {
        Chosen::ScanU(a) => {
            let plan = a.plan(profile, rows as u32, n64, exclusive)?;
            let consts = a.workspace_constants();
            launch_with_workspace(device, plan, &consts, batch, |io, workspace| {
                runtime::ScanUArgs {
                    x: io.x,
                    y: io.y,
                    total: io.total,
                    workspace,
                }
            })?;
        }
        Chosen::ScanUL1(a) => {
            let plan = a.plan(profile, rows as u32, n64, exclusive)?;
            let consts = a.workspace_constants();
            launch_with_workspace(device, plan, &consts, batch, |io, workspace| {
                runtime::ScanUL1Args {
                    x: io.x,
                    y: io.y,
                    total: io.total,
                    workspace,
                }
            })?;
        }
        Chosen::McScan(a) => {
            let plan = a.plan(profile, n64, exclusive)?;
            let consts = a.workspace_constants();
            launch_with_workspace(device, plan, &consts, each_row, |io, workspace| {
                runtime::McScanArgs {
                    x: io.x,
                    y: io.y,
                    total: io.total,
                    workspace,
                }
            })?;
        }
        Chosen::ReduceThenScan(a) => {
            let plan = a.plan(profile, n64, exclusive)?;
            let consts = a.workspace_constants();
            launch_with_workspace(device, plan, &consts, each_row, |io, workspace| {
                runtime::RtScanArgs {
                    x: io.x,
                    y: io.y,
                    total: io.total,
                    workspace,
                }
            })?;
        }
        Chosen::VecCumSum(a) => {
            let mut plan = a.plan(profile, n64, exclusive)?;
            for io in each_row {
                let args = runtime::VecCumSumArgs {
                    x: io.x,
                    y: io.y,
                    total: io.total,
                };
                device.run(|stream| runtime::launch(stream, &mut plan, args))?;
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

#[cfg(test)]
mod policy_tests {
    use super::policy::{choose, PolicyDType};
    use super::policy_table::CELLS;

    #[test]
    fn table_covers_both_dtypes_and_batches() {
        for dtype in [PolicyDType::F16, PolicyDType::I8] {
            assert!(CELLS.iter().any(|c| c.dtype == dtype && c.rows == 1));
            assert!(CELLS.iter().any(|c| c.dtype == dtype && c.rows > 1));
        }
    }

    /// Auto never picks an algorithm the table shows more than 10% slower
    /// than the fastest for a measured shape.
    #[test]
    fn auto_is_within_ten_percent_of_the_fastest_on_every_measured_shape() {
        for cell in CELLS {
            let dtype = match cell.dtype {
                PolicyDType::F16 => algos::DType::F16,
                PolicyDType::I8 => algos::DType::I8,
            };
            let picked = choose(CELLS, dtype, cell.rows as usize, 1usize << cell.log2_n);
            let best = cell.times.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
            let Some(&(_, t)) = cell.times.iter().find(|(a, _)| *a == picked) else {
                panic!(
                    "{picked} is not a candidate of {:?} {} x 2^{}",
                    cell.dtype, cell.rows, cell.log2_n
                );
            };
            assert!(
                t <= 1.1 * best,
                "{:?} {} x 2^{}: Auto picks {picked} at {t:e} s, fastest {best:e} s",
                cell.dtype,
                cell.rows,
                cell.log2_n
            );
        }
    }

    #[test]
    fn candidates_are_sorted_fastest_first() {
        for cell in CELLS {
            assert!(cell.times.windows(2).all(|w| w[0].1 <= w[1].1));
        }
    }
}
