//! The FFI boundary: every call into the ACL runtime and the kernels' launch
//! functions goes through here.
#![allow(unsafe_code)]

use std::ffi::{c_void, CStr};

use ascend_sys as sys;

use crate::error::{Error, Result};

/// Turns an ACL status into a `Result`, with the runtime's error text.
pub(crate) fn check(call: &'static str, code: sys::aclError) -> Result<()> {
    if code == 0 {
        return Ok(());
    }
    Err(Error::Runtime {
        call,
        code,
        message: recent_error(),
    })
}

pub(crate) fn recent_error() -> String {
    // SAFETY: aclGetRecentErrMsg returns NULL or a NUL-terminated string
    // owned by the runtime, valid until the next ACL call on this thread.
    unsafe {
        let p = sys::aclGetRecentErrMsg();
        if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

pub(crate) fn init() -> Result<()> {
    // SAFETY: aclInit accepts a NULL config path.
    let rc = unsafe { sys::aclInit(std::ptr::null()) };
    if rc == sys::ACL_ERROR_REPEAT_INITIALIZE {
        return Ok(());
    }
    check("aclInit", rc)
}

pub(crate) fn configure_simulated(id: i32, soc: &sys::ascsim_soc) -> Result<()> {
    // SAFETY: `soc` is a valid, initialised struct; the runtime copies it.
    check("ascsim_configure_device", unsafe {
        sys::ascsim_configure_device(id, soc)
    })
}

pub(crate) fn set_device(id: i32) -> Result<()> {
    // SAFETY: plain value argument.
    check("aclrtSetDevice", unsafe { sys::aclrtSetDevice(id) })
}

pub(crate) fn create_stream() -> Result<*mut c_void> {
    let mut s: *mut c_void = std::ptr::null_mut();
    // SAFETY: `s` is a valid out pointer.
    check("aclrtCreateStream", unsafe {
        sys::aclrtCreateStream(&mut s)
    })?;
    Ok(s)
}

pub(crate) fn destroy_stream(s: *mut c_void) {
    // SAFETY: `s` came from aclrtCreateStream and is destroyed once.
    unsafe { sys::aclrtDestroyStream(s) };
}

pub(crate) fn synchronize(s: *mut c_void) -> Result<()> {
    // SAFETY: `s` is a live stream.
    check("aclrtSynchronizeStream", unsafe {
        sys::aclrtSynchronizeStream(s)
    })
}

pub(crate) fn take_reports(s: *mut c_void) -> Vec<ascendc_sim::LaunchReport> {
    // SAFETY: `s` is the device's live stream.
    unsafe { ascendc_sim::LaunchReport::take(s) }
}

pub(crate) fn malloc(bytes: usize) -> Result<*mut c_void> {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: `p` is a valid out pointer.
    check("aclrtMalloc", unsafe {
        sys::aclrtMalloc(&mut p, bytes, sys::ACL_MEM_MALLOC_HUGE_FIRST)
    })?;
    Ok(p)
}

pub(crate) fn free(p: *mut c_void) {
    // SAFETY: `p` came from aclrtMalloc and is freed once (by its owner's Drop).
    unsafe { sys::aclrtFree(p) };
}

pub(crate) fn upload(dst: *mut c_void, capacity: usize, src: &[u8]) -> Result<()> {
    // SAFETY: `dst` is a device allocation of at least `capacity` bytes and
    // `src` a live host slice; the runtime checks count <= capacity.
    check("aclrtMemcpy", unsafe {
        sys::aclrtMemcpy(
            dst,
            capacity,
            src.as_ptr().cast(),
            src.len(),
            sys::ACL_MEMCPY_HOST_TO_DEVICE,
        )
    })
}

pub(crate) fn download(dst: &mut [u8], src: *const c_void) -> Result<()> {
    // SAFETY: `dst` is a live host slice of `dst.len()` bytes; `src` a device
    // allocation at least that long (checked by the runtime).
    check("aclrtMemcpy", unsafe {
        sys::aclrtMemcpy(
            dst.as_mut_ptr().cast(),
            dst.len(),
            src,
            dst.len(),
            sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    })
}

pub(crate) fn memset(p: *mut c_void, bytes: usize) -> Result<()> {
    // SAFETY: `p` is a device allocation of at least `bytes` bytes.
    check("aclrtMemset", unsafe {
        sys::aclrtMemset(p, bytes, 0, bytes)
    })
}

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

/// Launch entry of a kernel with GM pointers `P` and tiling `T`.
type Entry<P, T> = (&'static str, P, std::marker::PhantomData<T>);

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
        &[$((
            match stringify!($sym).split_at("aclrtlaunch_".len()) { (_, name) => name },
            sys::$sym as _,
            std::marker::PhantomData,
        )),*]
    };
}

const COPY: &[Entry<Launch2<sys::CopyTiling>, sys::CopyTiling>] = entries!(aclrtlaunch_copy_u8);
const SCANU: &[Entry<Launch4<sys::ScanUTiling>, sys::ScanUTiling>] = entries!(
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
const SCANUL1: &[Entry<Launch4<sys::ScanUL1Tiling>, sys::ScanUL1Tiling>] = entries!(
    aclrtlaunch_scanul1_f16_s16,
    aclrtlaunch_scanul1_bf16_s16,
    aclrtlaunch_scanul1_f16_s32,
    aclrtlaunch_scanul1_bf16_s32,
    aclrtlaunch_scanul1_f16_s64,
    aclrtlaunch_scanul1_bf16_s64,
);
const MCSCAN: &[Entry<Launch4<sys::McScanTiling>, sys::McScanTiling>] = entries!(
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
const RTSCAN: &[Entry<Launch4<sys::RtScanTiling>, sys::RtScanTiling>] = entries!(
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
const VECCUMSUM: &[Entry<Launch3<sys::VecCumSumTiling>, sys::VecCumSumTiling>] = entries!(
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

const REDUCE: &[Entry<Launch3<sys::ReduceTiling>, sys::ReduceTiling>] = entries!(
    aclrtlaunch_reduce_sum_f16,
    aclrtlaunch_reduce_sum_bf16,
    aclrtlaunch_reduce_sum_i8,
    aclrtlaunch_reduce_max_f16,
    aclrtlaunch_reduce_min_f16,
    aclrtlaunch_reduce_max_i8,
    aclrtlaunch_reduce_min_i8,
);
const OPSCAN: &[Entry<Launch4<sys::OpScanTiling>, sys::OpScanTiling>] = entries!(
    aclrtlaunch_opscan_sum_f16,
    aclrtlaunch_opscan_sum_bf16,
    aclrtlaunch_opscan_sum_i8,
    aclrtlaunch_opscan_sum_f32,
    aclrtlaunch_opscan_max_f16,
    aclrtlaunch_opscan_min_f16,
    aclrtlaunch_opscan_max_i8,
    aclrtlaunch_opscan_min_i8,
);

const SPLIT: &[Entry<Launch5<sys::SplitTiling>, sys::SplitTiling>] = entries!(
    aclrtlaunch_compress_b16,
    aclrtlaunch_compress_b32,
    aclrtlaunch_split_b16,
    aclrtlaunch_split_b32,
);

const RADIX: &[Entry<Launch5<sys::RadixTiling>, sys::RadixTiling>] = entries!(
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

const SAMPLE: &[Entry<Launch4<sys::SampleTiling>, sys::SampleTiling>] = entries!(
    aclrtlaunch_sample_f16,
    aclrtlaunch_sample_bf16,
    aclrtlaunch_sample_f32,
);

const TOPP: &[Entry<Launch4<sys::TopPTiling>, sys::TopPTiling>] = entries!(
    aclrtlaunch_topp_mask_f16,
    aclrtlaunch_topp_mask_bf16,
    aclrtlaunch_topp_pick_i32,
);

const SPMV: &[Entry<Launch5<sys::SpmvTiling>, sys::SpmvTiling>] = entries!(
    aclrtlaunch_spmv_products_f16,
    aclrtlaunch_spmv_products_f32,
    aclrtlaunch_spmv_rows_f32,
);

fn find<P: Copy, T>(table: &[Entry<P, T>], name: &str) -> Result<P> {
    table
        .iter()
        .find(|e| e.0 == name)
        .map(|e| e.1)
        .ok_or_else(|| Error::Unsupported(format!("kernel {name} is not built into this library")))
}

/// True when the library has a launch entry for `name`.
pub(crate) fn has_entry(name: &str) -> bool {
    let names = [
        COPY.iter().map(|e| e.0).collect::<Vec<_>>(),
        SCANU.iter().map(|e| e.0).collect(),
        SCANUL1.iter().map(|e| e.0).collect(),
        MCSCAN.iter().map(|e| e.0).collect(),
        RTSCAN.iter().map(|e| e.0).collect(),
        VECCUMSUM.iter().map(|e| e.0).collect(),
        REDUCE.iter().map(|e| e.0).collect(),
        OPSCAN.iter().map(|e| e.0).collect(),
        SPLIT.iter().map(|e| e.0).collect(),
        RADIX.iter().map(|e| e.0).collect(),
        SAMPLE.iter().map(|e| e.0).collect(),
        TOPP.iter().map(|e| e.0).collect(),
        SPMV.iter().map(|e| e.0).collect(),
    ];
    names.iter().flatten().any(|n| *n == name)
}

/// The GM pointers and tiling of a launch; the kernel is looked up by the plan's name.
pub(crate) trait Launchable: Sized {
    /// Launch entries of the kernels taking this tiling.
    fn launch(
        stream: *mut c_void,
        plan: &mut algos::LaunchPlan<Self>,
        gm: &[*mut c_void],
    ) -> Result<()>;
}

macro_rules! launchable4 {
    ($($tiling:ident => $table:ident),*) => {$(
        impl Launchable for algos::$tiling {
            fn launch(stream: *mut c_void, plan: &mut algos::LaunchPlan<Self>, gm: &[*mut c_void]) -> Result<()> {
                let f = find($table, &plan.kernel)?;
                let [x, y, total, ws] = gm else { return Err(arity(&plan.kernel)) };
                // SAFETY: the pointers are live device allocations sized for
                // the plan; the tiling pointer is valid for the call (the
                // launch stub copies the struct).
                unsafe { f(plan.block_dim, stream, *x, *y, *total, *ws, as_sys(&mut plan.tiling)) };
                Ok(())
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
            fn launch(stream: *mut c_void, plan: &mut algos::LaunchPlan<Self>, gm: &[*mut c_void]) -> Result<()> {
                let f = find($table, &plan.kernel)?;
                let [a, b, c] = gm else { return Err(arity(&plan.kernel)) };
                // SAFETY: as for the four-pointer kernels.
                unsafe { f(plan.block_dim, stream, *a, *b, *c, as_sys(&mut plan.tiling)) };
                Ok(())
            }
        }
    )*};
}
launchable3!(VecCumSumTiling => VECCUMSUM, ReduceTiling => REDUCE);

macro_rules! launchable5 {
    ($($tiling:ident => $table:ident),*) => {$(
        impl Launchable for algos::$tiling {
            fn launch(stream: *mut c_void, plan: &mut algos::LaunchPlan<Self>, gm: &[*mut c_void]) -> Result<()> {
                let f = find($table, &plan.kernel)?;
                let [a, b, c, d, e] = gm else { return Err(arity(&plan.kernel)) };
                // SAFETY: as for the four-pointer kernels.
                unsafe { f(plan.block_dim, stream, *a, *b, *c, *d, *e, as_sys(&mut plan.tiling)) };
                Ok(())
            }
        }
    )*};
}
launchable5!(SplitTiling => SPLIT, RadixTiling => RADIX, SpmvTiling => SPMV);

impl Launchable for algos::CopyTiling {
    fn launch(
        stream: *mut c_void,
        plan: &mut algos::LaunchPlan<Self>,
        gm: &[*mut c_void],
    ) -> Result<()> {
        let f = find(COPY, &plan.kernel)?;
        let [src, dst] = gm else {
            return Err(arity(&plan.kernel));
        };
        // SAFETY: as for the four-pointer kernels.
        unsafe { f(plan.block_dim, stream, *src, *dst, as_sys(&mut plan.tiling)) };
        Ok(())
    }
}

fn arity(kernel: &str) -> Error {
    Error::Unsupported(format!("wrong number of GM pointers for kernel {kernel}"))
}

/// Launches the plan's kernel with the GM pointers in the kernel's order.
pub(crate) fn launch<T: Launchable>(
    stream: *mut c_void,
    plan: &mut algos::LaunchPlan<T>,
    gm: &[*mut c_void],
) -> Result<()> {
    T::launch(stream, plan, gm)
}

pub(crate) fn soc_struct(p: &ascendc_sim::SocProfile) -> sys::ascsim_soc {
    let mut name = [0 as std::os::raw::c_char; 32];
    for (d, s) in name.iter_mut().zip(p.name.bytes()) {
        *d = s as std::os::raw::c_char;
    }
    sys::ascsim_soc {
        name,
        cube_cores: p.cube_cores,
        vector_cores: p.vector_cores,
        ub_bytes: p.ub_bytes,
        l1_bytes: p.l1_bytes,
        l0a_bytes: p.l0a_bytes,
        l0b_bytes: p.l0b_bytes,
        l0c_bytes: p.l0c_bytes,
        hbm_bytes: p.hbm_bytes,
        l2_bytes: p.l2_bytes,
    }
}
