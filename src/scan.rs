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
impl ScanInput for i8 {
    type Acc = i32;
}

/// Which scan algorithm to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Let the library choose. Interim policy from the modeled bench
    /// (`cargo xtask bench --quick`, 910B4 profile): SCANU s=128 below
    /// [`AUTO_MULTICORE_FROM`] elements (one AI core, lowest latency), MCSCAN
    /// s=128 from there on (fastest modeled scan at 2^16..2^24).
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
}

/// How to scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScanOptions {
    /// Exclusive scan (`y[0] = 0`, `y[i] = x[0] + ... + x[i-1]`) instead of inclusive.
    pub exclusive: bool,
    /// Algorithm.
    pub algorithm: Algorithm,
    /// Also return the total (sum of all elements).
    pub want_total: bool,
}

/// Result of a scan.
#[derive(Debug)]
pub struct ScanOutput<A: Element> {
    /// The scan, one element per input element.
    pub values: DeviceBuffer<A>,
    /// The total, when requested (0 for an empty input).
    pub total: Option<A>,
}

/// Input length from which `Algorithm::Auto` runs a multi-core scan.
pub const AUTO_MULTICORE_FROM: usize = 1 << 14;

/// Largest i8 input length whose sum provably fits i32 (|sum| <= 128 n).
pub const MAX_I8_SCAN_LEN: usize = (i32::MAX as usize) / 128;

/// Launches a cube scan: allocates its workspace, writes the constant prefix,
/// passes (x, y, total, workspace).
fn launch_with_workspace<T: ffi::Launchable>(
    device: &Device,
    mut plan: algos::LaunchPlan<T>,
    constants: &[u8],
    io: [*mut std::ffi::c_void; 3],
) -> Result<()> {
    let workspace = device.alloc_zeroed::<u8>(plan.workspace_bytes as usize)?;
    device.bind()?;
    ffi::upload(workspace.ptr(), workspace.bytes(), constants)?;
    let gm = [io[0], io[1], io[2], workspace.ptr()];
    device.run(|stream| ffi::launch(stream, &mut plan, &gm))
}

enum Chosen {
    ScanU(algos::ScanU),
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

/// Scans `x` on its device.
///
/// Only f16 and i8 inputs scan; other element types do not compile:
///
/// ```compile_fail
/// # use ascend_scan::{scan, Device, ScanOptions};
/// let dev = Device::default_device().unwrap();
/// let x = dev.upload(&[1.0f32; 8]).unwrap();
/// let _ = scan(&dev, &x, ScanOptions::default()); // f32 is not a ScanInput
/// ```
///
/// Non-finite f16 inputs: the cube multiplies every element of an s-row by
/// the zeros of U as well, so an inf or NaN makes its whole s-row (and what
/// follows) NaN, where a sequential scan would keep the earlier entries.
///
/// Numerics: f16 inputs accumulate in f32 (the cube multiplies exactly and
/// adds in f32 within s-wide rows; the vector unit adds the running f32
/// carry), so the error is that of an f32 sequential sum: |err| <= n * eps32 *
/// sum|x| (eps32 = 2^-24) up to a small constant. i8 inputs accumulate exactly
/// in i32; inputs longer than [`MAX_I8_SCAN_LEN`] are refused because their
/// sum could overflow i32.
pub fn scan<T: ScanInput>(
    device: &Device,
    x: &DeviceBuffer<T>,
    options: ScanOptions,
) -> Result<ScanOutput<T::Acc>> {
    if !device.same(x.device()) {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: "the buffer lives on another device".into(),
        });
    }
    let n = x.len();
    if T::DTYPE == algos::DType::I8 && n > MAX_I8_SCAN_LEN {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: format!(
                "{n} int8 elements could overflow the int32 scan (at most {MAX_I8_SCAN_LEN})"
            ),
        });
    }
    let chosen = match options.algorithm {
        Algorithm::Auto if n < AUTO_MULTICORE_FROM => {
            Chosen::ScanU(algos::ScanU::new(T::DTYPE, 128)?)
        }
        Algorithm::Auto => Chosen::McScan(algos::McScan::new(T::DTYPE, 128)?),
        Algorithm::ScanU { s } => {
            Chosen::ScanU(algos::ScanU::new(T::DTYPE, s).map_err(algorithm_error)?)
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
    let values = device.alloc_uninit::<T::Acc>(n)?;
    if n == 0 {
        let total = options.want_total.then(T::Acc::default);
        return Ok(ScanOutput { values, total });
    }
    let total = device.alloc_zeroed::<T::Acc>(1)?;
    let (n64, exclusive) = (n as u64, options.exclusive);
    let io = [x.ptr(), values.ptr(), total.ptr()];
    let profile = device.profile();
    match chosen {
        Chosen::ScanU(a) => {
            let plan = a.plan(profile, n64, exclusive)?;
            launch_with_workspace(device, plan, &a.workspace_constants(), io)?;
        }
        Chosen::McScan(a) => {
            let plan = a.plan(profile, n64, exclusive)?;
            launch_with_workspace(device, plan, &a.workspace_constants(), io)?;
        }
        Chosen::ReduceThenScan(a) => {
            let plan = a.plan(profile, n64, exclusive)?;
            launch_with_workspace(device, plan, &a.workspace_constants(), io)?;
        }
        Chosen::VecCumSum(a) => {
            let mut plan = a.plan(profile, n64, exclusive)?;
            device.run(|stream| ffi::launch(stream, &mut plan, &io))?;
        }
    }
    let total = if options.want_total {
        Some(total.download()?[0])
    } else {
        None
    };
    Ok(ScanOutput { values, total })
}
