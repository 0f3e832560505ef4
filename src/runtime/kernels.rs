//! The kernels' launch functions: one table of `aclrtlaunch_<kernel>`
//! entries per tiling type, for both backends.
use std::ffi::c_void;

use ascend_sys as sys;

use super::backend::{Entry, StreamRef};
use crate::error::{Error, Result};

/// Reinterprets an algos tiling struct as its bindgen twin. Both are
/// `#[repr(C)]` with the same fields; the derive's C++ static_asserts and
/// bindgen's layout assertions pin the layout, and the size is checked here.
fn as_sys<A, S>(tiling: &mut A) -> *mut S {
    const {
        assert!(
            std::mem::size_of::<A>() == std::mem::size_of::<S>(),
            "tiling layouts diverged"
        )
    };
    (tiling as *mut A).cast()
}

/// Kernels taking (x, flags, y, indices, workspace, tiling).
type Launch5<T> = unsafe extern "C" fn(
    u32,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut T,
) -> u32;
/// Kernels taking (x, y, total, workspace, tiling).
type Launch4<T> = unsafe extern "C" fn(
    u32,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut T,
) -> u32;
/// Kernels taking (x, y, total, tiling).
type Launch3<T> =
    unsafe extern "C" fn(u32, *mut c_void, *mut c_void, *mut c_void, *mut c_void, *mut T) -> u32;
/// Kernels taking (src, dst, tiling).
type Launch2<T> = unsafe extern "C" fn(u32, *mut c_void, *mut c_void, *mut c_void, *mut T) -> u32;

/// A table of launch entries named after their `aclrtlaunch_<kernel>` symbols.
macro_rules! entries {
    ($($sym:ident),* $(,)?) => {
        &[$(Entry {
            symbol: stringify!($sym),
            name: match stringify!($sym).split_at("aclrtlaunch_".len()) { (_, name) => name },
            f: sys::$sym as _,
        }),*]
    };
}

const COPY: &[Entry<Launch2<sys::CopyTiling>>] = entries!(aclrtlaunch_copy_u8);
const SCANU: &[Entry<Launch4<sys::ScanUTiling>>] = entries!(
    aclrtlaunch_scanu_f16_s16,
    aclrtlaunch_scanu_bf16_s16,
    aclrtlaunch_scanu_f16_s32,
    aclrtlaunch_scanu_bf16_s32,
    aclrtlaunch_scanu_f16_s64,
    aclrtlaunch_scanu_bf16_s64,
    aclrtlaunch_scanu_f16_s128,
    aclrtlaunch_scanu_bf16_s128,
    aclrtlaunch_scanu_i8_s16,
    aclrtlaunch_scanu_i8_s32,
    aclrtlaunch_scanu_i8_s64,
    aclrtlaunch_scanu_i8_s128,
);
const SCANUL1: &[Entry<Launch4<sys::ScanUL1Tiling>>] = entries!(
    aclrtlaunch_scanul1_f16_s16,
    aclrtlaunch_scanul1_bf16_s16,
    aclrtlaunch_scanul1_f16_s32,
    aclrtlaunch_scanul1_bf16_s32,
    aclrtlaunch_scanul1_f16_s64,
    aclrtlaunch_scanul1_bf16_s64,
);
const MCSCAN: &[Entry<Launch4<sys::McScanTiling>>] = entries!(
    aclrtlaunch_mcscan_f16_s16,
    aclrtlaunch_mcscan_bf16_s16,
    aclrtlaunch_mcscan_f16_s32,
    aclrtlaunch_mcscan_bf16_s32,
    aclrtlaunch_mcscan_f16_s64,
    aclrtlaunch_mcscan_bf16_s64,
    aclrtlaunch_mcscan_f16_s128,
    aclrtlaunch_mcscan_bf16_s128,
    aclrtlaunch_mcscan_i8_s16,
    aclrtlaunch_mcscan_i8_s32,
    aclrtlaunch_mcscan_i8_s64,
    aclrtlaunch_mcscan_i8_s128,
);
const RTSCAN: &[Entry<Launch4<sys::RtScanTiling>>] = entries!(
    aclrtlaunch_rtscan_f16_s16,
    aclrtlaunch_rtscan_bf16_s16,
    aclrtlaunch_rtscan_f16_s32,
    aclrtlaunch_rtscan_bf16_s32,
    aclrtlaunch_rtscan_f16_s64,
    aclrtlaunch_rtscan_bf16_s64,
    aclrtlaunch_rtscan_f16_s128,
    aclrtlaunch_rtscan_bf16_s128,
    aclrtlaunch_rtscan_i8_s16,
    aclrtlaunch_rtscan_i8_s32,
    aclrtlaunch_rtscan_i8_s64,
    aclrtlaunch_rtscan_i8_s128,
);
const VECCUMSUM: &[Entry<Launch3<sys::VecCumSumTiling>>] = entries!(
    aclrtlaunch_veccumsum_f16_s16,
    aclrtlaunch_veccumsum_bf16_s16,
    aclrtlaunch_veccumsum_f16_s32,
    aclrtlaunch_veccumsum_bf16_s32,
    aclrtlaunch_veccumsum_f16_s64,
    aclrtlaunch_veccumsum_bf16_s64,
    aclrtlaunch_veccumsum_i8_s16,
    aclrtlaunch_veccumsum_i8_s32,
    aclrtlaunch_veccumsum_i8_s64,
);

const REDUCE: &[Entry<Launch3<sys::ReduceTiling>>] = entries!(
    aclrtlaunch_reduce_sum_f16,
    aclrtlaunch_reduce_sum_bf16,
    aclrtlaunch_reduce_sum_i8,
    aclrtlaunch_reduce_max_f16,
    aclrtlaunch_reduce_min_f16,
    aclrtlaunch_reduce_max_i8,
    aclrtlaunch_reduce_min_i8,
);
const OPSCAN: &[Entry<Launch4<sys::OpScanTiling>>] = entries!(
    aclrtlaunch_opscan_sum_f16,
    aclrtlaunch_opscan_sum_bf16,
    aclrtlaunch_opscan_sum_i8,
    aclrtlaunch_opscan_sum_f32,
    aclrtlaunch_opscan_max_f16,
    aclrtlaunch_opscan_min_f16,
    aclrtlaunch_opscan_max_i8,
    aclrtlaunch_opscan_min_i8,
);

const SPLIT: &[Entry<Launch5<sys::SplitTiling>>] = entries!(
    aclrtlaunch_compress_b16,
    aclrtlaunch_compress_b32,
    aclrtlaunch_split_b16,
    aclrtlaunch_split_b32,
);

const RADIX: &[Entry<Launch5<sys::RadixTiling>>] = entries!(
    aclrtlaunch_radix_pass_u8,
    aclrtlaunch_radix_pass_i8,
    aclrtlaunch_radix_pass_u16,
    aclrtlaunch_radix_pass_i16,
    aclrtlaunch_radix_pass_f16,
    aclrtlaunch_radix_pass_bf16,
    aclrtlaunch_radix_topk_u8,
    aclrtlaunch_radix_topk_i8,
    aclrtlaunch_radix_topk_u16,
    aclrtlaunch_radix_topk_i16,
    aclrtlaunch_radix_topk_f16,
    aclrtlaunch_radix_topk_bf16,
);

const SEGSCAN: &[Entry<Launch5<sys::SegScanTiling>>] = entries!(
    aclrtlaunch_segscan_f16_s128_simple,
    aclrtlaunch_segscan_f16_s64_vec,
    aclrtlaunch_segscan_bf16_s128_simple,
    aclrtlaunch_segscan_bf16_s64_vec,
    aclrtlaunch_segscan_i8_s128_simple,
    aclrtlaunch_segscan_i8_s64_vec,
);
const SEGREVERT: &[Entry<Launch5<sys::SegRevertTiling>>] = entries!(
    aclrtlaunch_segrevert_f16,
    aclrtlaunch_segrevert_bf16,
    aclrtlaunch_segrevert_i8,
);
const SEGDIFF: &[Entry<Launch3<sys::SegDiffTiling>>] =
    entries!(aclrtlaunch_segdiff_f32, aclrtlaunch_segdiff_i32);

const SAMPLE: &[Entry<Launch4<sys::SampleTiling>>] = entries!(
    aclrtlaunch_sample_f16,
    aclrtlaunch_sample_bf16,
    aclrtlaunch_sample_f32,
);

const TOPP: &[Entry<Launch4<sys::TopPTiling>>] = entries!(
    aclrtlaunch_topp_mask_f16,
    aclrtlaunch_topp_mask_bf16,
    aclrtlaunch_topp_pick_i32,
);

const SPMV: &[Entry<Launch5<sys::SpmvTiling>>] = entries!(
    aclrtlaunch_spmv_products_f16,
    aclrtlaunch_spmv_products_f32,
    aclrtlaunch_spmv_rows_f32,
);

/// (symbol, kernel name) of every launch entry of every table.
fn all_entries() -> Vec<(&'static str, &'static str)> {
    fn of<P>(t: &[Entry<P>]) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        t.iter().map(|e| (e.symbol, e.name))
    }
    of(COPY)
        .chain(of(SCANU))
        .chain(of(SCANUL1))
        .chain(of(MCSCAN))
        .chain(of(RTSCAN))
        .chain(of(VECCUMSUM))
        .chain(of(REDUCE))
        .chain(of(OPSCAN))
        .chain(of(SPLIT))
        .chain(of(RADIX))
        .chain(of(SAMPLE))
        .chain(of(TOPP))
        .chain(of(SEGSCAN))
        .chain(of(SEGREVERT))
        .chain(of(SEGDIFF))
        .chain(of(SPMV))
        .collect()
}

pub(super) fn all_symbols() -> impl Iterator<Item = &'static str> {
    all_entries().into_iter().map(|(symbol, _)| symbol)
}

/// True when the library has a launch entry for `name`.
pub(crate) fn has_entry(name: &str) -> bool {
    all_entries().iter().any(|(_, n)| *n == name)
}

/// The GM pointers and tiling of a launch; the kernel is looked up by the plan's name.
pub(crate) trait Launchable: Sized {
    /// Launch entries of the kernels taking this tiling.
    fn launch(
        stream: StreamRef,
        plan: &mut algos::LaunchPlan<Self>,
        gm: &[*mut c_void],
    ) -> Result<()>;
}

macro_rules! launchable4 {
    ($($tiling:ident => $table:ident),*) => {$(
        impl Launchable for algos::$tiling {
            fn launch(stream: StreamRef, plan: &mut algos::LaunchPlan<Self>, gm: &[*mut c_void]) -> Result<()> {
                let e = stream.backend.kernel($table, &plan.kernel)?;
                let [x, y, total, ws] = gm else { return Err(arity(&plan.kernel)) };
                // SAFETY: the pointers are live device allocations sized for
                // the plan; the tiling pointer is valid for the call (the
                // launch stub copies the struct).
                let rc = unsafe { (e.f)(plan.block_dim, stream.raw, *x, *y, *total, *ws, as_sys(&mut plan.tiling)) };
                stream.backend.launched(e.symbol, rc)
            }
        }
    )*};
}
launchable4!(
    ScanUTiling => SCANU,
    ScanUL1Tiling => SCANUL1,
    McScanTiling => MCSCAN,
    RtScanTiling => RTSCAN,
    OpScanTiling => OPSCAN,
    SampleTiling => SAMPLE,
    TopPTiling => TOPP
);

macro_rules! launchable3 {
    ($($tiling:ident => $table:ident),*) => {$(
        impl Launchable for algos::$tiling {
            fn launch(stream: StreamRef, plan: &mut algos::LaunchPlan<Self>, gm: &[*mut c_void]) -> Result<()> {
                let e = stream.backend.kernel($table, &plan.kernel)?;
                let [a, b, c] = gm else { return Err(arity(&plan.kernel)) };
                // SAFETY: as for the four-pointer kernels.
                let rc = unsafe { (e.f)(plan.block_dim, stream.raw, *a, *b, *c, as_sys(&mut plan.tiling)) };
                stream.backend.launched(e.symbol, rc)
            }
        }
    )*};
}
launchable3!(VecCumSumTiling => VECCUMSUM, ReduceTiling => REDUCE, SegDiffTiling => SEGDIFF);

macro_rules! launchable5 {
    ($($tiling:ident => $table:ident),*) => {$(
        impl Launchable for algos::$tiling {
            fn launch(stream: StreamRef, plan: &mut algos::LaunchPlan<Self>, gm: &[*mut c_void]) -> Result<()> {
                let k = stream.backend.kernel($table, &plan.kernel)?;
                let [a, b, c, d, e] = gm else { return Err(arity(&plan.kernel)) };
                // SAFETY: as for the four-pointer kernels.
                let rc = unsafe { (k.f)(plan.block_dim, stream.raw, *a, *b, *c, *d, *e, as_sys(&mut plan.tiling)) };
                stream.backend.launched(k.symbol, rc)
            }
        }
    )*};
}
launchable5!(
    SplitTiling => SPLIT,
    RadixTiling => RADIX,
    SegScanTiling => SEGSCAN,
    SegRevertTiling => SEGREVERT,
    SpmvTiling => SPMV
);

impl Launchable for algos::CopyTiling {
    fn launch(
        stream: StreamRef,
        plan: &mut algos::LaunchPlan<Self>,
        gm: &[*mut c_void],
    ) -> Result<()> {
        let e = stream.backend.kernel(COPY, &plan.kernel)?;
        let [src, dst] = gm else {
            return Err(arity(&plan.kernel));
        };
        // SAFETY: as for the four-pointer kernels.
        let rc = unsafe {
            (e.f)(
                plan.block_dim,
                stream.raw,
                *src,
                *dst,
                as_sys(&mut plan.tiling),
            )
        };
        stream.backend.launched(e.symbol, rc)
    }
}

fn arity(kernel: &str) -> Error {
    Error::Unsupported(format!("wrong number of GM pointers for kernel {kernel}"))
}

/// Launches the plan's kernel with the GM pointers in the kernel's order.
pub(crate) fn launch<T: Launchable>(
    stream: StreamRef,
    plan: &mut algos::LaunchPlan<T>,
    gm: &[*mut c_void],
) -> Result<()> {
    T::launch(stream, plan, gm)
}
