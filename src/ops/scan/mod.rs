//! Scan (prefix sum): the cube scans (SCANU, SCANUL1, MCSCAN, RTSCAN), the
//! vector-only baseline (VECCUMSUM) and the vector-unit scans (`vector`), and
//! the policy of `Algorithm::Auto` (`policy`, with its generated table).
//!
//! Layers, no cycles: `algorithm` and `input` are the types; `vector` and
//! `policy` use them; `policy_table` is the data `policy` reads; this module
//! dispatches.
mod algorithm;
mod cummax;
mod input;
pub(super) mod policy;
mod policy_table;
pub(super) mod vector;

pub use algorithm::Algorithm;
pub use cummax::{cum_extreme_on, cum_extreme_workspace_bytes, cummax, cummin, CumExtremes};
use input::check_row_len;
pub use input::{
    Accumulator, Batch, Extreme, ScanInput, ScanOp, ScanOptions, ScanOutput, MAX_BATCH_ROWS,
    MAX_I8_SCAN_LEN, MAX_SCAN_LEN,
};
pub(crate) use vector::vector_op;

use crate::device::{as_bytes, Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::runtime::{self, Gm};
use crate::stream::{check_copy_target, check_len, Layout, Part, Stream, Uses, Workspace};

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
/// i8 on `ScanUL1`, i32 sums), whatever the length.
///
/// Max and min ([`ScanOp::Max`], [`ScanOp::Min`]) run on all vector cores
/// (OPSCAN: Gather transposes and row-wise vector Max/Min; only
/// `Algorithm::Auto` is accepted) and are exact: every result is an input
/// element converted exactly (f16, bf16, f32 -> f32; i8, i32 -> i32) or the
/// identity; [`cummax`] and [`cummin`] also give the positions. The
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
    let (rows, n) = (x.row_count(), x.row_len());
    // Checked before allocating: the errors name the arguments as documented.
    if !device.same(x.data.device()) {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: "the buffer lives on another device".into(),
        });
    }
    ScanPlan::new::<T>(device, rows, n, options)?;
    let mut values = device.alloc_uninit::<T::Acc>(rows * n)?;
    let mut totals = if options.want_total {
        Some(device.alloc_uninit::<T::Acc>(rows)?)
    } else {
        None
    };
    let mut workspace =
        Workspace::new(device, scan_workspace_bytes::<T>(device, rows, n, options)?)?;
    device.blocking(|stream| {
        scan_on(
            stream,
            x,
            options,
            &mut values,
            totals.as_mut(),
            &mut workspace,
        )
    })?;
    let totals = totals.map(|t| t.download()).transpose()?;
    Ok(ScanOutput { values, totals })
}

/// Bytes of [`Workspace`] that [`scan_on`] needs for `rows` rows of `n`
/// elements of `T` (with `options.want_total`: with totals). Also uploads
/// the constant matrices of the cube scan it plans, once per device, so
/// that the calls that follow allocate nothing.
pub fn scan_workspace_bytes<T: ScanInput>(
    device: &Device,
    rows: usize,
    n: usize,
    options: ScanOptions,
) -> Result<usize> {
    let plan = ScanPlan::new::<T>(device, rows, n, options)?;
    if let Kernels::Cube(cube) = &plan.kernel {
        if !cube.constants.is_empty() {
            device.constant(&cube.constants)?;
        }
    }
    Ok(plan.layout.bytes())
}

/// The stream-ordered [`scan`]: enqueues the scan of every row of `x` on
/// `stream` and returns at once, writing the scan into `values`
/// (caller-owned, as long as `x`) and, when `totals` is given (then
/// `options.want_total` must be set), each row's total into it (`rows`
/// long). No allocation (the constant matrices of a cube scan are uploaded
/// once per device, by [`scan_workspace_bytes`] or else by the first call),
/// no host synchronisation.
/// Numerics and errors as for [`scan`], plus `values`, `totals` or
/// `workspace` of the wrong size or device.
pub fn scan_on<'a, T: ScanInput>(
    stream: &Stream,
    x: impl Into<Batch<'a, T>>,
    options: ScanOptions,
    values: &mut DeviceBuffer<T::Acc>,
    totals: Option<&mut DeviceBuffer<T::Acc>>,
    workspace: &mut Workspace,
) -> Result<()> {
    let x = x.into();
    let (rows, n) = (x.row_count(), x.row_len());
    stream.check_device(x.data, "x")?;
    stream.check_device(values, "values")?;
    if totals.is_some() != options.want_total {
        return Err(Error::InvalidArgument {
            name: "totals",
            reason: "give a totals buffer exactly when options.want_total is set".into(),
        });
    }
    let mut plan = ScanPlan::new::<T>(stream.device(), rows, n, options)?;
    check_len(values.len(), rows * n, "values")?;
    if let Some(t) = &totals {
        stream.check_device(t, "totals")?;
        check_len(t.len(), rows, "totals")?;
        check_copy_target(t, "totals")?;
    }
    workspace.check(stream, &plan.layout)?;
    let constants = match &plan.kernel {
        Kernels::Cube(cube) if !cube.constants.is_empty() => {
            stream.device().constant(&cube.constants)?.cast_mut()
        }
        _ => std::ptr::null_mut(),
    };
    let identity = match (&plan.kernel, &totals) {
        (Kernels::Empty, Some(_)) => Some(
            stream
                .device()
                .constant(as_bytes(&vec![T::Acc::identity(options.op); rows]))?,
        ),
        _ => None,
    };
    let mut uses: Vec<&dyn Uses> = vec![x.data, &*values, &*workspace];
    if let Some(t) = &totals {
        uses.push(*t);
    }
    let acc = std::mem::size_of::<T::Acc>();
    let slots = workspace.at(plan.slots);
    let scratch = workspace.at(plan.scratch);
    stream.with_queue(&uses, |s| {
        // Every task costs a few microseconds of its own, so only what a
        // kernel reads before writing is set: SCANUL1's row sums. The rest
        // of the scratch and the slots are written before they are read
        // (the simulator poisons fresh device memory, so the tests would see
        // a kernel that relied on them being zero).
        if let Kernels::Cube(cube) = &plan.kernel {
            if cube.zeroed > 0 {
                s.zero(scratch, cube.zeroed)?;
            }
        }
        let row_io = |r: usize| RowIo {
            x: x.data.ptr_at(r * n),
            y: values.ptr_at(r * n),
            total: slots.wrapping_byte_add(r * plan.slot_bytes),
        };
        match &mut plan.kernel {
            Kernels::Empty => {}
            Kernels::Vector(p) => {
                let args = runtime::OpScanArgs {
                    x: x.data.ptr(),
                    y: values.ptr(),
                    totals: slots,
                    workspace: scratch,
                };
                runtime::launch(s, p, args)?;
            }
            Kernels::Cube(cube) => {
                if cube.launch.batched() {
                    cube.launch.run(s, row_io(0), constants, scratch)?;
                } else {
                    for r in 0..rows {
                        cube.launch.run(s, row_io(r), constants, scratch)?;
                    }
                }
            }
        }
        match (&totals, identity) {
            (Some(t), Some(id)) => s.copy_device(t.ptr(), id, rows * acc),
            (Some(t), None) => s.copy_device_2d(t.ptr(), acc, slots, plan.slot_bytes, acc, rows),
            (None, _) => Ok(()),
        }
    })
}

/// The (x, y, total) device addresses of one launch of a cube scan.
#[derive(Clone, Copy)]
struct RowIo {
    x: Gm,
    y: Gm,
    total: Gm,
}

/// A cube scan's launch plan (one algorithm).
enum CubeLaunch {
    ScanU(algos::LaunchPlan<algos::ScanUTiling>),
    ScanUL1(algos::LaunchPlan<algos::ScanUL1Tiling>),
    McScan(algos::LaunchPlan<algos::McScanTiling>),
    ReduceThenScan(algos::LaunchPlan<algos::RtScanTiling>),
    VecCumSum(algos::LaunchPlan<algos::VecCumSumTiling>),
}

impl CubeLaunch {
    /// BATCHED SCANU and SCANUL1 take every row in one launch; the others
    /// one row each.
    fn batched(&self) -> bool {
        matches!(self, CubeLaunch::ScanU(_) | CubeLaunch::ScanUL1(_))
    }

    fn run(
        &mut self,
        s: runtime::StreamRef,
        io: RowIo,
        constants: Gm,
        workspace: Gm,
    ) -> Result<()> {
        let RowIo { x, y, total } = io;
        match self {
            CubeLaunch::ScanU(p) => runtime::launch(
                s,
                p,
                runtime::ScanUArgs {
                    x,
                    y,
                    total,
                    constants,
                    workspace,
                },
            ),
            CubeLaunch::ScanUL1(p) => runtime::launch(
                s,
                p,
                runtime::ScanUL1Args {
                    x,
                    y,
                    total,
                    constants,
                    workspace,
                },
            ),
            CubeLaunch::McScan(p) => runtime::launch(
                s,
                p,
                runtime::McScanArgs {
                    x,
                    y,
                    total,
                    constants,
                    workspace,
                },
            ),
            CubeLaunch::ReduceThenScan(p) => runtime::launch(
                s,
                p,
                runtime::RtScanArgs {
                    x,
                    y,
                    total,
                    constants,
                    workspace,
                },
            ),
            CubeLaunch::VecCumSum(p) => {
                runtime::launch(s, p, runtime::VecCumSumArgs { x, y, total })
            }
        }
    }
}

/// What a scan launches.
enum Kernels {
    /// Rows of length 0: nothing (the totals are the identity).
    Empty,
    /// OPSCAN on the vector cores (max, min, and `VectorScan` sums).
    Vector(algos::LaunchPlan<algos::OpScanTiling>),
    /// A cube scan (or VECCUMSUM).
    Cube(CubePlan),
}

/// A scan's launches and its workspace: the kernels' scratch and one total
/// slot per row (rows finish on different cores, so each has its own 32
/// bytes, or OPSCAN's stride).
struct ScanPlan {
    kernel: Kernels,
    layout: Layout,
    scratch: Part,
    slots: Part,
    slot_bytes: usize,
}

impl ScanPlan {
    /// Checks the shape and the options and plans the scan (resolving
    /// `Algorithm::Auto`).
    fn new<T: ScanInput>(
        device: &Device,
        rows: usize,
        n: usize,
        options: ScanOptions,
    ) -> Result<ScanPlan> {
        check_row_len(n)?;
        if options.op == ScanOp::Sum && T::DTYPE == algos::DType::I32 {
            return Err(Error::Unsupported(
                "i32 scans take ScanOp::Max and ScanOp::Min: an i32 sum could overflow its i32 \
                 result"
                    .into(),
            ));
        }
        if options.op == ScanOp::Sum && T::DTYPE == algos::DType::I8 && n > MAX_I8_SCAN_LEN {
            return Err(Error::InvalidArgument {
                name: "x",
                reason: format!(
                    "{n} int8 elements per row could overflow the int32 scan (at most \
                     {MAX_I8_SCAN_LEN})"
                ),
            });
        }
        let algorithm = match (options.algorithm, options.op) {
            (Algorithm::Auto, ScanOp::Sum) => Algorithm::auto_for::<T>(rows, n),
            (Algorithm::Auto, _) => Algorithm::VectorScan,
            (a, _) => a,
        };
        let options = ScanOptions {
            algorithm,
            ..options
        };
        let acc = std::mem::size_of::<T::Acc>();
        let (kernel, scratch, slot_bytes) =
            if algorithm == Algorithm::VectorScan || options.op != ScanOp::Sum {
                let plan = vector::plan::<T>(device, rows, n, options)?;
                match plan {
                    None => (Kernels::Empty, 0, acc),
                    Some(p) => {
                        let (bytes, stride) =
                            (p.workspace_bytes as usize, p.tiling.total_stride as usize);
                        (Kernels::Vector(p), bytes, stride * acc)
                    }
                }
            } else {
                match cube_plan::<T>(device, rows, n, options)? {
                    None => (Kernels::Empty, 0, acc),
                    Some(cube) => {
                        let bytes = cube.workspace_bytes;
                        (Kernels::Cube(cube), bytes, 32)
                    }
                }
            };
        let mut layout = Layout::default();
        let scratch = layout.add(scratch);
        // The cube scans write every row's total; OPSCAN only when asked
        // (else it still takes a one-element totals buffer).
        let slots = layout.add(match kernel {
            Kernels::Empty => 0,
            Kernels::Vector(_) if !options.want_total => acc,
            _ => rows * slot_bytes,
        });
        Ok(ScanPlan {
            kernel,
            layout,
            scratch,
            slots,
            slot_bytes,
        })
    }
}

/// A planned cube scan (or VECCUMSUM).
struct CubePlan {
    launch: CubeLaunch,
    /// The kernel's constant matrices, uploaded once per device (empty for
    /// VECCUMSUM).
    constants: Vec<u8>,
    /// Bytes at the start of the workspace to zero before the launch.
    zeroed: usize,
    workspace_bytes: usize,
}

/// The cube scan of `rows x n` (n >= 1); None for n = 0 (after checking the
/// algorithm, so that support does not depend on the length).
fn cube_plan<T: ScanInput>(
    device: &Device,
    rows: usize,
    n: usize,
    options: ScanOptions,
) -> Result<Option<CubePlan>> {
    let chosen = match options.algorithm {
        Algorithm::Auto | Algorithm::VectorScan => {
            unreachable!("ScanPlan resolves Auto and plans VectorScan on the vector cores")
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
    if n == 0 {
        return Ok(None);
    }
    let (n64, exclusive) = (n as u64, options.exclusive);
    let profile = device.profile();
    let cube = |launch: CubeLaunch, workspace_bytes: u64, constants: Vec<u8>, zeroed: u64| {
        Some(CubePlan {
            launch,
            constants,
            zeroed: zeroed as usize,
            workspace_bytes: workspace_bytes as usize,
        })
    };
    Ok(match chosen {
        Chosen::ScanU(a) => {
            let p = a.plan(profile, rows as u32, n64, exclusive)?;
            let bytes = p.workspace_bytes;
            cube(CubeLaunch::ScanU(p), bytes, a.constants(), 0)
        }
        Chosen::ScanUL1(a) => {
            let p = a.plan(profile, rows as u32, n64, exclusive)?;
            let bytes = p.workspace_bytes;
            let zeroed = a.zeroed_workspace_bytes();
            cube(CubeLaunch::ScanUL1(p), bytes, a.constants(), zeroed)
        }
        Chosen::McScan(a) => {
            let p = a.plan(profile, n64, exclusive)?;
            let bytes = p.workspace_bytes;
            cube(CubeLaunch::McScan(p), bytes, a.constants(), 0)
        }
        Chosen::ReduceThenScan(a) => {
            let p = a.plan(profile, n64, exclusive)?;
            let bytes = p.workspace_bytes;
            cube(CubeLaunch::ReduceThenScan(p), bytes, a.constants(), 0)
        }
        Chosen::VecCumSum(a) => {
            let p = a.plan(profile, n64, exclusive)?;
            let bytes = p.workspace_bytes;
            cube(CubeLaunch::VecCumSum(p), bytes, Vec::new(), 0)
        }
    })
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
