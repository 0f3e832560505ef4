//! The backends: the ACL calls as a table of C function pointers, filled
//! from the linked simulator or from a loaded CANN runtime, and the streams
//! launches run on.
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::path::{Path, PathBuf};

use ascend_sys as sys;
use libloading::Library;
use manifest::Manifest;

use super::status::{c_string, load_error, status};
use crate::error::{Error, Result};

/// Declares the ACL calls ascend-scan makes, once: the struct of function
/// pointers, its filling from the simulator's static symbols (which also
/// type-checks each signature against the bindgen declaration) and its
/// filling from a loaded library.
macro_rules! acl_table {
    ($($field:ident = $sym:ident ( $($arg:ty),* ) -> $ret:ty;)*) => {
        /// The ACL calls, as C function pointers.
        #[derive(Clone, Copy)]
        pub(super) struct Acl {
            $($field: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }

        impl Acl {
            /// The simulator's implementations, linked into this crate.
            const SIMULATOR: Acl = Acl { $($field: sys::$sym,)* };

            /// The same calls from a loaded ACL library.
            pub(super) fn load(lib: &'static Library, path: &Path) -> Result<Acl> {
                Ok(Acl {
                    $($field: {
                        let name = concat!(stringify!($sym), "\0");
                        // SAFETY: the symbol is an ACL C function whose
                        // prototype (CANN's acl/acl.h, mirrored by the
                        // simulator's include/acl/acl.h) is the pointer type
                        // asked for; the library is never unloaded ('static).
                        let f = unsafe {
                            lib.get::<unsafe extern "C" fn($($arg),*) -> $ret>(name.as_bytes())
                        };
                        *f.map_err(|e| load_error(path, format!("{}: {e}", stringify!($sym))))?
                    },)*
                })
            }
        }
    };
}

acl_table! {
    init = aclInit(*const c_char) -> sys::aclError;
    set_device = aclrtSetDevice(i32) -> sys::aclError;
    reset_device = aclrtResetDevice(i32) -> sys::aclError;
    create_stream = aclrtCreateStream(*mut sys::aclrtStream) -> sys::aclError;
    destroy_stream = aclrtDestroyStream(sys::aclrtStream) -> sys::aclError;
    synchronize_stream = aclrtSynchronizeStream(sys::aclrtStream) -> sys::aclError;
    malloc = aclrtMalloc(*mut *mut c_void, usize, sys::aclrtMemMallocPolicy) -> sys::aclError;
    free = aclrtFree(*mut c_void) -> sys::aclError;
    memcpy = aclrtMemcpy(*mut c_void, usize, *const c_void, usize, sys::aclrtMemcpyKind) -> sys::aclError;
    memset = aclrtMemset(*mut c_void, usize, i32, usize) -> sys::aclError;
    memset_async = aclrtMemsetAsync(*mut c_void, usize, i32, usize, sys::aclrtStream) -> sys::aclError;
    memcpy_async = aclrtMemcpyAsync(*mut c_void, usize, *const c_void, usize, sys::aclrtMemcpyKind, sys::aclrtStream) -> sys::aclError;
    memcpy_2d_async = aclrtMemcpy2dAsync(*mut c_void, usize, *const c_void, usize, usize, usize, sys::aclrtMemcpyKind, sys::aclrtStream) -> sys::aclError;
    create_event = aclrtCreateEvent(*mut sys::aclrtEvent) -> sys::aclError;
    destroy_event = aclrtDestroyEvent(sys::aclrtEvent) -> sys::aclError;
    record_event = aclrtRecordEvent(sys::aclrtEvent, sys::aclrtStream) -> sys::aclError;
    stream_wait_event = aclrtStreamWaitEvent(sys::aclrtStream, sys::aclrtEvent) -> sys::aclError;
    synchronize_event = aclrtSynchronizeEvent(sys::aclrtEvent) -> sys::aclError;
    soc_name = aclrtGetSocName() -> *const c_char;
    recent_error = aclGetRecentErrMsg() -> *const c_char;
}

/// `aclGetDeviceCapability` (CANN 8.x and later; optional when loading).
pub(super) type Capability =
    unsafe extern "C" fn(u32, sys::aclDeviceInfo, *mut i64) -> sys::aclError;

/// Launch entry of a kernel: its `aclrtlaunch_<kernel>` symbol, the
/// kernel's name and the simulator's static entry (of type `P`).
#[derive(Clone, Copy)]
pub(super) struct Entry<P> {
    pub(super) symbol: &'static str,
    pub(super) name: &'static str,
    pub(super) f: P,
}

/// Which runtime a backend talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// The project's AscendC CPU simulator, linked into this crate.
    Simulator,
    /// A CANN runtime and kernel library loaded at run time.
    Npu,
}

/// One runtime: its ACL calls and kernel entries.
pub(crate) struct Backend {
    pub(super) kind: BackendKind,
    pub(super) acl: Acl,
    pub(super) capability: Option<Capability>,
    /// Kernel entry addresses by `aclrtlaunch_<kernel>` symbol; `None` for
    /// the simulator, whose entries are the static symbols of the tables.
    pub(super) kernels: Option<HashMap<&'static str, usize>>,
    /// The manifest of a loaded kernel library.
    pub(super) manifest: Option<Manifest>,
    /// The runtime libraries opened into the process's global scope, in
    /// order (empty for the simulator).
    pub(super) runtime: Vec<PathBuf>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("kind", &self.kind)
            .field("manifest", &self.manifest)
            .finish()
    }
}

/// A stream of a backend (what launches need).
#[derive(Clone, Copy)]
pub(crate) struct StreamRef {
    pub(crate) raw: *mut c_void,
    pub(crate) backend: &'static Backend,
}

impl Backend {
    /// The statically linked simulator.
    pub(crate) fn simulator() -> &'static Backend {
        static SIM: Backend = Backend {
            kind: BackendKind::Simulator,
            acl: Acl::SIMULATOR,
            capability: Some(sys::aclGetDeviceCapability),
            kernels: None,
            manifest: None,
            runtime: Vec::new(),
        };
        &SIM
    }

    pub(crate) fn kind(&self) -> BackendKind {
        self.kind
    }

    pub(crate) fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_ref()
    }

    /// The runtime libraries this backend opened into the global scope.
    pub(crate) fn runtime_libraries(&self) -> &[PathBuf] {
        &self.runtime
    }

    /// Turns an ACL status into a `Result`, with the runtime's error text.
    pub(crate) fn check(&self, call: &'static str, code: sys::aclError) -> Result<()> {
        status(call, code, || self.recent_error())
    }

    fn recent_error(&self) -> String {
        // SAFETY: aclGetRecentErrMsg returns NULL or a NUL-terminated string
        // owned by the runtime, valid until the next ACL call on this thread.
        unsafe { c_string((self.acl.recent_error)()) }.unwrap_or_default()
    }

    pub(super) fn init(&self) -> Result<()> {
        // SAFETY: aclInit accepts a NULL config path.
        let rc = unsafe { (self.acl.init)(std::ptr::null()) };
        if rc == sys::ACL_ERROR_REPEAT_INITIALIZE {
            return Ok(());
        }
        self.check("aclInit", rc)
    }

    /// Makes device `id` current on the calling thread. ACL's current
    /// device is per host thread, so every entry point that calls ACL binds
    /// first (a thread that never used the device gets `aclrtSetDevice`);
    /// the call is skipped when the thread's current device of this runtime
    /// already is `id`. Runtimes are told apart by their `aclrtSetDevice`,
    /// so backends sharing one libascendcl share the thread's binding.
    pub(crate) fn bind(&self, id: i32) -> Result<()> {
        thread_local! {
            static CURRENT: std::cell::RefCell<Vec<(usize, i32)>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        let key = self.acl.set_device as usize;
        if CURRENT.with_borrow(|c| c.contains(&(key, id))) {
            return Ok(());
        }
        // SAFETY: plain value argument.
        self.check("aclrtSetDevice", unsafe { (self.acl.set_device)(id) })?;
        CURRENT.with_borrow_mut(|c| {
            c.retain(|(k, _)| *k != key);
            c.push((key, id));
        });
        Ok(())
    }

    /// (AI cores, vector cores) of device `id` from `aclGetDeviceCapability`,
    /// or `None` when the runtime lacks the call.
    pub(crate) fn core_counts(&self, id: i32) -> Result<Option<(i64, i64)>> {
        let Some(get) = self.capability else {
            return Ok(None);
        };
        let mut counts = [0i64; 2];
        for (info, out) in [
            sys::ACL_DEVICE_INFO_AI_CORE_NUM,
            sys::ACL_DEVICE_INFO_VECTOR_CORE_NUM,
        ]
        .into_iter()
        .zip(&mut counts)
        {
            // SAFETY: `out` is a valid out pointer; the id is a plain value.
            self.check("aclGetDeviceCapability", unsafe {
                get(id as u32, info, out)
            })?;
        }
        Ok(Some((counts[0], counts[1])))
    }

    /// `aclrtGetSocName()` of the thread's current device.
    pub(crate) fn soc_name(&self) -> Result<String> {
        // SAFETY: aclrtGetSocName returns NULL or a NUL-terminated string
        // owned by the runtime.
        unsafe { c_string((self.acl.soc_name)()) }.ok_or_else(|| Error::Runtime {
            call: "aclrtGetSocName",
            code: sys::ACL_ERROR_FAILURE,
            message: self.recent_error(),
        })
    }

    pub(crate) fn create_stream(&'static self) -> Result<StreamRef> {
        let mut s: *mut c_void = std::ptr::null_mut();
        // SAFETY: `s` is a valid out pointer.
        self.check("aclrtCreateStream", unsafe {
            (self.acl.create_stream)(&mut s)
        })?;
        Ok(StreamRef {
            raw: s,
            backend: self,
        })
    }

    /// Releases device `id` on this thread, on the simulator only (which
    /// then reports allocations still live on it when its leak report is
    /// on); an NPU device stays set for the process (other devices on the
    /// same id may still use it).
    pub(crate) fn reset_simulated(&self, id: i32) {
        if self.kind == BackendKind::Simulator {
            // SAFETY: plain value argument.
            unsafe { (self.acl.reset_device)(id) };
        }
    }

    /// Successful `aclrtMalloc` calls the simulator counted for device `id`;
    /// None on an NPU.
    pub(crate) fn malloc_count(&self, id: i32) -> Option<u64> {
        // SAFETY: plain value argument; unknown ids give 0.
        (self.kind == BackendKind::Simulator).then(|| unsafe { sys::ascsim_malloc_count(id) })
    }

    pub(crate) fn create_event(&self) -> Result<*mut c_void> {
        let mut e: *mut c_void = std::ptr::null_mut();
        // SAFETY: `e` is a valid out pointer.
        self.check("aclrtCreateEvent", unsafe {
            (self.acl.create_event)(&mut e)
        })?;
        Ok(e)
    }

    pub(crate) fn destroy_event(&self, e: *mut c_void) {
        // SAFETY: the event came from aclrtCreateEvent and is destroyed once.
        unsafe { (self.acl.destroy_event)(e) };
    }

    pub(crate) fn synchronize_event(&self, e: *mut c_void) -> Result<()> {
        // SAFETY: the event is live.
        self.check("aclrtSynchronizeEvent", unsafe {
            (self.acl.synchronize_event)(e)
        })
    }

    /// Bytes the simulator holds allocated for device `id` (its live
    /// allocations, each padded as aclrtMalloc pads it); None on an NPU.
    pub(crate) fn allocated_bytes(&self, id: i32) -> Option<u64> {
        // SAFETY: plain value argument; unknown ids give 0.
        (self.kind == BackendKind::Simulator).then(|| unsafe { sys::ascsim_allocated_bytes(id) })
    }

    pub(crate) fn free(&self, p: *mut c_void) {
        // SAFETY: `p` came from aclrtMalloc and is freed once (by its owner's Drop).
        unsafe { (self.acl.free)(p) };
    }

    pub(crate) fn malloc(&self, bytes: usize) -> Result<*mut c_void> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: `p` is a valid out pointer.
        self.check("aclrtMalloc", unsafe {
            (self.acl.malloc)(&mut p, bytes, sys::ACL_MEM_MALLOC_HUGE_FIRST)
        })?;
        Ok(p)
    }

    pub(crate) fn upload(&self, dst: *mut c_void, capacity: usize, src: &[u8]) -> Result<()> {
        // SAFETY: `dst` is a device allocation of at least `capacity` bytes and
        // `src` a live host slice; the runtime checks count <= capacity.
        self.check("aclrtMemcpy", unsafe {
            (self.acl.memcpy)(
                dst,
                capacity,
                src.as_ptr().cast(),
                src.len(),
                sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        })
    }

    pub(crate) fn download(&self, dst: &mut [u8], src: *const c_void) -> Result<()> {
        // SAFETY: `dst` is a live host slice of `dst.len()` bytes; `src` a device
        // allocation at least that long (checked by the runtime).
        self.check("aclrtMemcpy", unsafe {
            (self.acl.memcpy)(
                dst.as_mut_ptr().cast(),
                dst.len(),
                src,
                dst.len(),
                sys::ACL_MEMCPY_DEVICE_TO_HOST,
            )
        })
    }

    pub(crate) fn memset(&self, p: *mut c_void, bytes: usize) -> Result<()> {
        // SAFETY: `p` is a device allocation of at least `bytes` bytes.
        self.check("aclrtMemset", unsafe {
            (self.acl.memset)(p, bytes, 0, bytes)
        })
    }

    /// The entry of kernel `name` in `table`, from this backend.
    pub(super) fn kernel<P: Copy>(&self, table: &[Entry<P>], name: &str) -> Result<Entry<P>> {
        let e = table.iter().find(|e| e.name == name).ok_or_else(|| {
            Error::Unsupported(format!("kernel {name} is not built into this library"))
        })?;
        let Some(loaded) = &self.kernels else {
            return Ok(*e);
        };
        let addr = *loaded
            .get(e.symbol)
            .ok_or_else(|| Error::Unsupported(format!("kernel library has no {}", e.symbol)))?;
        const {
            assert!(std::mem::size_of::<P>() == std::mem::size_of::<usize>());
        }
        Ok(Entry {
            // SAFETY: `addr` is the address of `e.symbol` in the loaded
            // kernel library, which is never unloaded. That function has the
            // C signature of kernels/aclrtlaunch_ascend_scan.h, which is `P`:
            // the static entry of the same symbol coerces to `P` (checked by
            // the compiler in the table), and the manifest's source hashes
            // equal the kernels/ this crate was built from.
            f: unsafe { std::mem::transmute_copy::<usize, P>(&addr) },
            ..*e
        })
    }

    /// Maps the return value of an `aclrtlaunch_<kernel>` to a `Result`.
    pub(super) fn launched(&self, symbol: &'static str, rc: u32) -> Result<()> {
        status(symbol, rc as i32, || self.recent_error())
    }
}

impl StreamRef {
    pub(crate) fn destroy(self) {
        // SAFETY: the stream came from aclrtCreateStream and is destroyed once.
        unsafe { (self.backend.acl.destroy_stream)(self.raw) };
    }

    pub(crate) fn synchronize(self) -> Result<()> {
        // SAFETY: the stream is live.
        self.backend.check("aclrtSynchronizeStream", unsafe {
            (self.backend.acl.synchronize_stream)(self.raw)
        })
    }

    /// Queues a zeroing of `bytes` bytes at device address `p`.
    pub(crate) fn zero(self, p: *mut c_void, bytes: usize) -> Result<()> {
        self.fill(p, bytes, 0)
    }

    /// Queues setting `bytes` bytes at device address `p` to `value`.
    pub(crate) fn fill(self, p: *mut c_void, bytes: usize, value: u8) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: `p` is a device allocation of at least `bytes` bytes that
        // the caller keeps alive until the stream has run this.
        self.backend.check("aclrtMemsetAsync", unsafe {
            (self.backend.acl.memset_async)(p, bytes, i32::from(value), bytes, self.raw)
        })
    }

    /// Queues a device-to-device copy of `bytes` bytes.
    pub(crate) fn copy_device(
        self,
        dst: *mut c_void,
        src: *const c_void,
        bytes: usize,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: both are device allocations of at least `bytes` bytes that
        // the caller keeps alive until the stream has run this.
        self.backend.check("aclrtMemcpyAsync", unsafe {
            (self.backend.acl.memcpy_async)(
                dst,
                bytes,
                src,
                bytes,
                sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
                self.raw,
            )
        })
    }

    /// Queues a device-to-device copy of `rows` pieces of `width` bytes,
    /// `src_pitch` bytes apart in the source and `dst_pitch` in the
    /// destination (gathering strided slots into a dense array).
    pub(crate) fn copy_device_2d(
        self,
        dst: *mut c_void,
        dst_pitch: usize,
        src: *const c_void,
        src_pitch: usize,
        width: usize,
        rows: usize,
    ) -> Result<()> {
        if rows == 0 || width == 0 {
            return Ok(());
        }
        // SAFETY: both ranges lie in device allocations that the caller
        // keeps alive until the stream has run this.
        self.backend.check("aclrtMemcpy2dAsync", unsafe {
            (self.backend.acl.memcpy_2d_async)(
                dst,
                dst_pitch,
                src,
                src_pitch,
                width,
                rows,
                sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
                self.raw,
            )
        })
    }

    /// Records event `e` after the work queued so far.
    pub(crate) fn record(self, e: *mut c_void) -> Result<()> {
        // SAFETY: the event and the stream are live.
        self.backend.check("aclrtRecordEvent", unsafe {
            (self.backend.acl.record_event)(e, self.raw)
        })
    }

    /// Makes the work queued after this wait for event `e`.
    pub(crate) fn wait(self, e: *mut c_void) -> Result<()> {
        // SAFETY: the event and the stream are live.
        self.backend.check("aclrtStreamWaitEvent", unsafe {
            (self.backend.acl.stream_wait_event)(self.raw, e)
        })
    }

    /// The simulator's reports of the launches on this stream (none on an NPU).
    pub(crate) fn take_reports(self) -> Vec<ascendc_sim::LaunchReport> {
        if self.backend.kind != BackendKind::Simulator {
            return Vec::new();
        }
        // SAFETY: the stream is a live stream of the linked simulator.
        unsafe { ascendc_sim::LaunchReport::take(self.raw) }
    }
}

pub(crate) fn init_simulator() -> Result<()> {
    Backend::simulator().init()
}

pub(crate) fn configure_simulated(id: i32, soc: &sys::ascsim_soc) -> Result<()> {
    // SAFETY: `soc` is a valid, initialised struct; the runtime copies it.
    Backend::simulator().check("ascsim_configure_device", unsafe {
        sys::ascsim_configure_device(id, soc)
    })
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
