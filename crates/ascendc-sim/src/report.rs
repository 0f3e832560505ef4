//! Launch reports and per-core traces recorded by the simulator runtime.
#![allow(unsafe_code)] // the simulator boundary: reads the runtime's C records

use std::ffi::{c_void, CStr};

use ascend_sys as sys;

/// Pipes of a core, as recorded in traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pipe {
    /// Scalar unit.
    S,
    /// Vector unit.
    V,
    /// Cube unit.
    M,
    /// L1 -> L0 loads.
    Mte1,
    /// GM -> UB / L1.
    Mte2,
    /// UB -> GM.
    Mte3,
    /// L0C -> GM.
    Fix,
    /// Not a pipe (cross-core events).
    None,
}

impl Pipe {
    /// The pipe of a trace event's `pipe` field.
    pub fn from_raw(p: u8) -> Pipe {
        match u32::from(p) {
            sys::ASCSIM_PIPE_S => Pipe::S,
            sys::ASCSIM_PIPE_V => Pipe::V,
            sys::ASCSIM_PIPE_M => Pipe::M,
            sys::ASCSIM_PIPE_MTE1 => Pipe::Mte1,
            sys::ASCSIM_PIPE_MTE2 => Pipe::Mte2,
            sys::ASCSIM_PIPE_MTE3 => Pipe::Mte3,
            sys::ASCSIM_PIPE_FIX => Pipe::Fix,
            _ => Pipe::None,
        }
    }
}

/// One core's trace.
#[derive(Debug, Clone)]
pub struct CoreTrace {
    /// True for a cube (AIC) core.
    pub is_cube: bool,
    /// `GetBlockIdx()` of the core.
    pub block_idx: u32,
    /// Events in program order.
    pub events: Vec<sys::ascsim_event>,
}

/// What a stream ran: a kernel, or one of its own copy and memset tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// A kernel launch (cores and traces).
    Kernel,
    /// `aclrtMemcpyAsync` or `aclrtMemcpy2dAsync`, device to device.
    Copy,
    /// `aclrtMemsetAsync`.
    Memset,
}

/// What the simulator recorded about one kernel launch, or about a copy or
/// memset task of the stream (no cores, no traces, only its GM bytes).
#[derive(Debug, Clone)]
pub struct LaunchReport {
    /// Kernel name (the ACL call's name for a copy or memset task).
    pub kernel: String,
    /// A kernel, or a copy or memset task.
    pub task: Task,
    /// Launch blockDim.
    pub block_dim: u32,
    /// Simulated cores (AIC + AIV threads).
    pub cores: u32,
    /// 0, or the ACL error code of a failed launch.
    pub status: i32,
    /// The diagnostic of a failed launch (kernel, core, call, rule).
    pub error: String,
    /// Bytes read from GM by all cores (DMA and data-cache fills).
    pub gm_read_bytes: u64,
    /// Bytes written to GM by all cores.
    pub gm_write_bytes: u64,
    /// Per-core traces (AICs first, then AIVs).
    pub traces: Vec<CoreTrace>,
    /// Whether the hazard checker watched this launch (off only with
    /// `ASCSIM_HAZARDS=0`, for benchmarking): a launch that was not checked
    /// proves nothing about a real NPU. Always true for a copy or memset
    /// task: no core runs it, and the race rule checks it regardless.
    pub hazards_checked: bool,
}

impl LaunchReport {
    /// Reads every launch recorded on `stream` (oldest first) and clears them.
    ///
    /// # Safety
    /// `stream` must be null (the default stream) or a live stream created by
    /// the simulator's `aclrtCreateStream`.
    pub unsafe fn take(stream: *mut c_void) -> Vec<LaunchReport> {
        // SAFETY: the caller guarantees the stream; the ascsim_* functions copy
        // into our buffers; event pointers stay valid until
        // ascsim_clear_launches, called last.
        unsafe {
            let count = sys::ascsim_launch_count(stream);
            let mut out = Vec::with_capacity(count as usize);
            for i in 0..count {
                let mut info: sys::ascsim_launch_info = std::mem::zeroed();
                if sys::ascsim_launch_info_get(stream, i, &mut info) != 0 {
                    continue;
                }
                let len = sys::ascsim_launch_error(stream, i, std::ptr::null_mut(), 0);
                let mut buf = vec![0u8; len + 1];
                sys::ascsim_launch_error(stream, i, buf.as_mut_ptr().cast(), buf.len());
                buf.truncate(len);
                let mut traces = Vec::with_capacity(info.cores as usize);
                for c in 0..info.cores {
                    let mut ptr: *const sys::ascsim_event = std::ptr::null();
                    let (mut n, mut kind, mut block) = (0usize, 0u32, 0u32);
                    if sys::ascsim_core_trace(stream, i, c, &mut ptr, &mut n, &mut kind, &mut block)
                        != 0
                    {
                        continue;
                    }
                    let events = if n == 0 {
                        Vec::new()
                    } else {
                        std::slice::from_raw_parts(ptr, n).to_vec()
                    };
                    traces.push(CoreTrace {
                        is_cube: kind == 0,
                        block_idx: block,
                        events,
                    });
                }
                out.push(LaunchReport {
                    kernel: CStr::from_ptr(info.kernel.as_ptr())
                        .to_string_lossy()
                        .into_owned(),
                    task: match info.task {
                        sys::ASCSIM_TASK_COPY => Task::Copy,
                        sys::ASCSIM_TASK_MEMSET => Task::Memset,
                        _ => Task::Kernel,
                    },
                    block_dim: info.block_dim,
                    cores: info.cores,
                    status: info.status,
                    error: String::from_utf8_lossy(&buf).into_owned(),
                    gm_read_bytes: info.gm_read_bytes,
                    gm_write_bytes: info.gm_write_bytes,
                    traces,
                    hazards_checked: info.hazards_checked != 0,
                });
            }
            sys::ascsim_clear_launches(stream);
            out
        }
    }

    /// Name of a trace event's op.
    pub fn op_name(op: u16) -> String {
        // SAFETY: ascsim_op_name returns a NUL-terminated string owned by the
        // runtime that lives as long as the process.
        unsafe {
            CStr::from_ptr(sys::ascsim_op_name(op))
                .to_string_lossy()
                .into_owned()
        }
    }
}
