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

type CopyLaunch =
    unsafe extern "C" fn(u32, *mut c_void, *mut c_void, *mut c_void, *mut sys::CopyTiling) -> u32;
type ScanULaunch = unsafe extern "C" fn(
    u32,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut sys::ScanUTiling,
) -> u32;

type VecCumSumLaunch = unsafe extern "C" fn(
    u32,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut sys::VecCumSumTiling,
) -> u32;

fn veccumsum_entry(name: &str) -> Option<VecCumSumLaunch> {
    Some(match name {
        "veccumsum_f16_s16" => sys::aclrtlaunch_veccumsum_f16_s16,
        "veccumsum_f16_s32" => sys::aclrtlaunch_veccumsum_f16_s32,
        "veccumsum_f16_s64" => sys::aclrtlaunch_veccumsum_f16_s64,
        "veccumsum_i8_s16" => sys::aclrtlaunch_veccumsum_i8_s16,
        "veccumsum_i8_s32" => sys::aclrtlaunch_veccumsum_i8_s32,
        "veccumsum_i8_s64" => sys::aclrtlaunch_veccumsum_i8_s64,
        _ => return None,
    })
}

type McScanLaunch = unsafe extern "C" fn(
    u32,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut sys::McScanTiling,
) -> u32;

fn mcscan_entry(name: &str) -> Option<McScanLaunch> {
    Some(match name {
        "mcscan_f16_s16" => sys::aclrtlaunch_mcscan_f16_s16,
        "mcscan_f16_s32" => sys::aclrtlaunch_mcscan_f16_s32,
        "mcscan_f16_s64" => sys::aclrtlaunch_mcscan_f16_s64,
        "mcscan_f16_s128" => sys::aclrtlaunch_mcscan_f16_s128,
        "mcscan_i8_s16" => sys::aclrtlaunch_mcscan_i8_s16,
        "mcscan_i8_s32" => sys::aclrtlaunch_mcscan_i8_s32,
        "mcscan_i8_s64" => sys::aclrtlaunch_mcscan_i8_s64,
        "mcscan_i8_s128" => sys::aclrtlaunch_mcscan_i8_s128,
        _ => return None,
    })
}

type RtScanLaunch = unsafe extern "C" fn(
    u32,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut sys::RtScanTiling,
) -> u32;

fn rtscan_entry(name: &str) -> Option<RtScanLaunch> {
    Some(match name {
        "rtscan_f16_s16" => sys::aclrtlaunch_rtscan_f16_s16,
        "rtscan_f16_s32" => sys::aclrtlaunch_rtscan_f16_s32,
        "rtscan_f16_s64" => sys::aclrtlaunch_rtscan_f16_s64,
        "rtscan_f16_s128" => sys::aclrtlaunch_rtscan_f16_s128,
        "rtscan_i8_s16" => sys::aclrtlaunch_rtscan_i8_s16,
        "rtscan_i8_s32" => sys::aclrtlaunch_rtscan_i8_s32,
        "rtscan_i8_s64" => sys::aclrtlaunch_rtscan_i8_s64,
        "rtscan_i8_s128" => sys::aclrtlaunch_rtscan_i8_s128,
        _ => return None,
    })
}

fn copy_entry(name: &str) -> Option<CopyLaunch> {
    match name {
        "copy_u8" => Some(sys::aclrtlaunch_copy_u8),
        _ => None,
    }
}

fn scanu_entry(name: &str) -> Option<ScanULaunch> {
    Some(match name {
        "scanu_f16_s16" => sys::aclrtlaunch_scanu_f16_s16,
        "scanu_f16_s32" => sys::aclrtlaunch_scanu_f16_s32,
        "scanu_f16_s64" => sys::aclrtlaunch_scanu_f16_s64,
        "scanu_f16_s128" => sys::aclrtlaunch_scanu_f16_s128,
        "scanu_i8_s16" => sys::aclrtlaunch_scanu_i8_s16,
        "scanu_i8_s32" => sys::aclrtlaunch_scanu_i8_s32,
        "scanu_i8_s64" => sys::aclrtlaunch_scanu_i8_s64,
        "scanu_i8_s128" => sys::aclrtlaunch_scanu_i8_s128,
        _ => return None,
    })
}

/// True when the library has a launch entry for every catalogue kernel.
pub(crate) fn has_entry(name: &str) -> bool {
    copy_entry(name).is_some()
        || scanu_entry(name).is_some()
        || veccumsum_entry(name).is_some()
        || mcscan_entry(name).is_some()
        || rtscan_entry(name).is_some()
}

fn missing(name: &str) -> Error {
    Error::Unsupported(format!("kernel {name} is not built into this library"))
}

pub(crate) fn launch_copy(
    stream: *mut c_void,
    plan: &mut algos::LaunchPlan<algos::CopyTiling>,
    src: *mut c_void,
    dst: *mut c_void,
) -> Result<()> {
    let f = copy_entry(&plan.kernel).ok_or_else(|| missing(&plan.kernel))?;
    // SAFETY: the pointers are live device allocations sized for the plan;
    // the tiling pointer is valid for the call (the stub copies it).
    unsafe { f(plan.block_dim, stream, src, dst, as_sys(&mut plan.tiling)) };
    Ok(())
}

pub(crate) fn launch_scanu(
    stream: *mut c_void,
    plan: &mut algos::LaunchPlan<algos::ScanUTiling>,
    gm: [*mut c_void; 4],
) -> Result<()> {
    let f = scanu_entry(&plan.kernel).ok_or_else(|| missing(&plan.kernel))?;
    // SAFETY: as in launch_copy; gm = x, y, total, workspace.
    unsafe {
        f(
            plan.block_dim,
            stream,
            gm[0],
            gm[1],
            gm[2],
            gm[3],
            as_sys(&mut plan.tiling),
        )
    };
    Ok(())
}

pub(crate) fn launch_veccumsum(
    stream: *mut c_void,
    plan: &mut algos::LaunchPlan<algos::VecCumSumTiling>,
    gm: [*mut c_void; 3],
) -> Result<()> {
    let f = veccumsum_entry(&plan.kernel).ok_or_else(|| missing(&plan.kernel))?;
    // SAFETY: as in launch_copy; gm = x, y, total.
    unsafe {
        f(
            plan.block_dim,
            stream,
            gm[0],
            gm[1],
            gm[2],
            as_sys(&mut plan.tiling),
        )
    };
    Ok(())
}

pub(crate) fn launch_mcscan(
    stream: *mut c_void,
    plan: &mut algos::LaunchPlan<algos::McScanTiling>,
    gm: [*mut c_void; 4],
) -> Result<()> {
    let f = mcscan_entry(&plan.kernel).ok_or_else(|| missing(&plan.kernel))?;
    // SAFETY: as in launch_copy; gm = x, y, total, workspace.
    unsafe {
        f(
            plan.block_dim,
            stream,
            gm[0],
            gm[1],
            gm[2],
            gm[3],
            as_sys(&mut plan.tiling),
        )
    };
    Ok(())
}

pub(crate) fn launch_rtscan(
    stream: *mut c_void,
    plan: &mut algos::LaunchPlan<algos::RtScanTiling>,
    gm: [*mut c_void; 4],
) -> Result<()> {
    let f = rtscan_entry(&plan.kernel).ok_or_else(|| missing(&plan.kernel))?;
    // SAFETY: as in launch_copy; gm = x, y, total, workspace.
    unsafe {
        f(
            plan.block_dim,
            stream,
            gm[0],
            gm[1],
            gm[2],
            gm[3],
            as_sys(&mut plan.tiling),
        )
    };
    Ok(())
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
