//! Devices, streams and typed device buffers.
use std::ffi::c_void;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ascendc_sim::{LaunchReport, Soc, SocProfile};

use crate::error::{Error, Result};
use crate::runtime::{self, BackendKind};

/// Element types a device buffer can hold.
pub trait Element: Copy + Default + Send + Sync + 'static + sealed::Sealed {
    /// The kernels' name for this type.
    const DTYPE: algos::DType;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: algos::DType = algos::DType::$d;
        }
    )*};
}
element!(half::f16 => F16, half::bf16 => Bf16, f32 => F32, i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32);

pub(crate) fn as_bytes<T: Element>(v: &[T]) -> &[u8] {
    // Safe view: every Element is a plain number without padding or invalid
    // bit patterns, so its bytes may be read.
    let len = std::mem::size_of_val(v);
    let ptr = v.as_ptr().cast::<u8>();
    // SAFETY: `ptr` points to `len` initialised bytes borrowed from `v`.
    #[allow(unsafe_code)]
    unsafe {
        std::slice::from_raw_parts(ptr, len)
    }
}

fn as_bytes_mut<T: Element>(v: &mut [T]) -> &mut [u8] {
    let len = std::mem::size_of_val(v);
    let ptr = v.as_mut_ptr().cast::<u8>();
    // SAFETY: `ptr` points to `len` bytes exclusively borrowed from `v`; any
    // byte pattern is a valid Element value.
    #[allow(unsafe_code)]
    unsafe {
        std::slice::from_raw_parts_mut(ptr, len)
    }
}

struct RawStream(*mut c_void);
// SAFETY: an ACL stream handle may be used from any thread that has set the
// device; every use is serialised by the device's mutex.
#[allow(unsafe_code)]
unsafe impl Send for RawStream {}

struct DeviceInner {
    id: i32,
    backend: &'static runtime::Backend,
    /// Why this device runs on its backend.
    why: String,
    soc: Soc,
    profile: SocProfile,
    stream: Mutex<RawStream>,
    reports: Mutex<Vec<LaunchReport>>,
    /// Read-only tables the kernels' workspaces start with (the cube scans'
    /// triangular matrices), uploaded once and copied on the device into a
    /// workspace for every call: (bytes, device address).
    constants: Mutex<Vec<(Vec<u8>, usize)>>,
}

impl DeviceInner {
    fn stream_ref(&self, raw: *mut c_void) -> runtime::StreamRef {
        runtime::StreamRef {
            raw,
            backend: self.backend,
        }
    }
}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        if self.backend.bind(self.id).is_ok() {
            let constants = self.constants.get_mut().unwrap_or_else(|e| e.into_inner());
            for (_, p) in constants.drain(..) {
                self.backend.free(p as *mut c_void);
            }
            let s = self
                .stream
                .get_mut()
                .map(|s| s.0)
                .unwrap_or(std::ptr::null_mut());
            if !s.is_null() {
                self.stream_ref(s).destroy();
            }
            // Every buffer holds a clone of its device, so none is live now
            // unless it was leaked (`mem::forget`): the simulator reports
            // those here when its leak report is on.
            self.backend.reset_simulated(self.id);
        }
    }
}

/// A device with one stream: an NPU driven by a CANN runtime and a kernel
/// library loaded at run time, or a simulated Ascend SoC.
/// Cheap to clone; operations on one device run in order.
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("id", &self.inner.id)
            .field("soc", &self.inner.soc)
            .field("backend", &self.inner.backend.kind())
            .finish()
    }
}

static NEXT_DEVICE_ID: AtomicI32 = AtomicI32::new(0);

impl Device {
    /// A simulated device of the given SoC, running kernels on the project's
    /// AscendC CPU simulator.
    pub fn simulated(soc: Soc) -> Result<Device> {
        Device::simulated_because(soc, "simulator: Device::simulated".into())
    }

    fn simulated_because(soc: Soc, why: String) -> Result<Device> {
        runtime::init_simulator()?;
        let id = NEXT_DEVICE_ID.fetch_add(1, Ordering::Relaxed);
        if id >= 64 {
            return Err(Error::Unsupported(
                "at most 64 simulated devices per process".into(),
            ));
        }
        let profile = soc.profile();
        runtime::configure_simulated(id, &runtime::soc_struct(&profile))?;
        Device::open(runtime::Backend::simulator(), id, soc, why)
    }

    fn open(backend: &'static runtime::Backend, id: i32, soc: Soc, why: String) -> Result<Device> {
        backend.bind(id)?;
        let stream = backend.create_stream()?;
        Ok(Device {
            inner: Arc::new(DeviceInner {
                id,
                backend,
                why,
                soc,
                profile: soc.profile(),
                stream: Mutex::new(RawStream(stream.raw)),
                reports: Mutex::new(Vec::new()),
                constants: Mutex::new(Vec::new()),
            }),
        })
    }

    /// Where the NPU kernel library is looked for: `$ASCEND_SCAN_KERNELS`
    /// (a manifest.json or the build directory holding it), else
    /// `target/cann/manifest.json` of this crate's workspace, which
    /// `cargo xtask build-kernels` writes.
    pub fn default_kernels() -> PathBuf {
        std::env::var_os("ASCEND_SCAN_KERNELS")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("target/cann/manifest.json")
            })
    }

    /// NPU `id`, with the kernel library of [`Device::default_kernels`].
    pub fn npu(id: i32) -> Result<Device> {
        Device::npu_with_kernels(Device::default_kernels(), id)
    }

    /// NPU `id`, with the kernel library described by `kernels` (the
    /// manifest.json written by `cargo xtask build-kernels`, or its
    /// directory). Loads the CANN runtime (libascendcl.so) and the kernel
    /// library at run time and refuses, with an Error, a manifest whose
    /// kernel sources differ from the kernels/ compiled into this crate
    /// ([`Error::StaleKernels`]), a device whose `aclrtGetSocName()` is not
    /// the manifest's SoC ([`Error::SocMismatch`]), libraries that do not
    /// load or lack an entry ([`Error::KernelLibrary`]), and a device that
    /// reports fewer AI or vector cores than its SoC profile
    /// ([`Error::Unsupported`]).
    pub fn npu_with_kernels(kernels: impl AsRef<Path>, id: i32) -> Result<Device> {
        let kernels = kernels.as_ref();
        let (backend, name) = runtime::load_npu(kernels, id)?;
        let manifest = backend
            .manifest()
            .ok_or_else(|| Error::Unsupported("NPU backend without a manifest".into()))?;
        let soc = Soc::from_name(&name).ok_or_else(|| {
            Error::Unsupported(format!(
                "SoC {name} has no profile in this library (supported: {})",
                Soc::ALL.map(|s| s.to_string()).join(", ")
            ))
        })?;
        let profile = soc.profile();
        if let Some((aic, aiv)) = backend.core_counts(id)? {
            if aic < i64::from(profile.cube_cores) || aiv < i64::from(profile.vector_cores) {
                return Err(Error::Unsupported(format!(
                    "device {id} ({name}) reports {aic} AI cores and {aiv} vector cores, fewer than \
                     the {} and {} of the {name} profile the kernels are tiled for (kernels that \
                     synchronise all cores would deadlock)",
                    profile.cube_cores, profile.vector_cores
                )));
            }
        }
        let runtime: Vec<String> = backend
            .runtime_libraries()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let why = format!(
            "npu: device {id} ({name}) with the kernel library {} (CANN {}, run mode {}; runtime \
             libraries opened globally: {})",
            manifest.library.display(),
            manifest
                .cann_version
                .as_deref()
                .unwrap_or("version unknown"),
            manifest.run_mode,
            runtime.join(", ")
        );
        Device::open(backend, id, soc, why)
    }

    /// NPU 0 with the kernel library at `kernels` (default:
    /// [`Device::default_kernels`]) when it loads and passes its checks,
    /// else the simulated default SoC; [`Device::backend_reason`] says why.
    pub fn choose(kernels: Option<&Path>) -> Result<Device> {
        let path = kernels.map_or_else(Device::default_kernels, Path::to_path_buf);
        match Device::npu_with_kernels(&path, 0) {
            Ok(d) => Ok(d),
            Err(e) => Device::simulated_because(
                Soc::default(),
                format!("simulator: no NPU backend ({e})"),
            ),
        }
    }

    /// The process-wide default device: [`Device::choose`] with the default
    /// kernel library, i.e. the NPU when the CANN runtime and the kernel
    /// library load and pass their checks, else the simulated Ascend910B4.
    /// Every call returns the same device.
    pub fn default_device() -> Result<Device> {
        static DEFAULT: std::sync::OnceLock<std::result::Result<Device, Error>> =
            std::sync::OnceLock::new();
        DEFAULT.get_or_init(|| Device::choose(None)).clone()
    }

    /// The runtime this device's kernels run on.
    pub fn backend(&self) -> BackendKind {
        self.inner.backend.kind()
    }

    /// Why this device runs on its backend (for an NPU: device, SoC and
    /// kernel library; for a simulator chosen by default: why the NPU
    /// backend did not load).
    pub fn backend_reason(&self) -> &str {
        &self.inner.why
    }

    /// The SoC of this device.
    pub fn soc(&self) -> Soc {
        self.inner.soc
    }

    /// The SoC's numbers.
    pub fn profile(&self) -> &SocProfile {
        &self.inner.profile
    }

    /// A buffer of `len` elements whose contents are unspecified (for the
    /// outputs of the stream-ordered operations, which write all of them).
    pub fn alloc<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        self.alloc_uninit(len)
    }

    /// A buffer of `len` zeroed elements.
    pub fn alloc_zeroed<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let buf = self.alloc_uninit::<T>(len)?;
        if len > 0 {
            self.bind()?;
            self.inner.backend.memset(buf.ptr(), buf.bytes())?;
        }
        Ok(buf)
    }

    /// A buffer holding a copy of `data`.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        let buf = self.alloc_uninit::<T>(data.len())?;
        if !data.is_empty() {
            self.write(&buf, data)?;
        }
        Ok(buf)
    }

    /// Copies `data` to the start of `buf` (`data.len() <= buf.len()`).
    pub(crate) fn write<T: Element>(&self, buf: &DeviceBuffer<T>, data: &[T]) -> Result<()> {
        self.bind()?;
        self.inner
            .backend
            .upload(buf.ptr(), buf.bytes(), as_bytes(data))
    }

    /// Bytes of device memory this device's live allocations hold, as the
    /// simulator counts them (each [`DeviceBuffer`] of `b > 0` bytes holds
    /// `b` rounded up to 32, plus 32, as `aclrtMalloc` pads it; empty buffers
    /// hold nothing). Every buffer frees its memory on drop, so this returns
    /// to its earlier value once the buffers made in between are dropped:
    /// the leak check of the tests and the fuzz targets. Not counted: the
    /// small constant tables (the cube scans' matrices) a device uploads
    /// once and keeps until it is dropped. Always 0 on an NPU (ACL has no
    /// such query).
    pub fn allocated_bytes(&self) -> u64 {
        let kept: u64 = self
            .inner
            .constants
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(b, _)| (b.len().max(1) as u64).div_ceil(32) * 32 + 32)
            .sum();
        self.inner
            .backend
            .allocated_bytes(self.inner.id)
            .map_or(0, |b| b.saturating_sub(kept))
    }

    /// Device allocations made on this device so far (`aclrtMalloc` calls,
    /// as the simulator counts them): unchanged across a loop that
    /// allocates nothing. Always 0 on an NPU.
    pub fn allocation_count(&self) -> u64 {
        self.inner.backend.malloc_count(self.inner.id).unwrap_or(0)
    }

    /// Reports of the launches since the last call (kernel, GM traffic, traces).
    pub fn take_reports(&self) -> Vec<LaunchReport> {
        std::mem::take(&mut *self.inner.reports.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub(crate) fn alloc_uninit<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes =
            len.checked_mul(std::mem::size_of::<T>())
                .ok_or_else(|| Error::InvalidArgument {
                    name: "len",
                    reason: format!("{len} elements overflow usize"),
                })?;
        let ptr = if bytes == 0 {
            std::ptr::null_mut()
        } else {
            self.bind()?;
            self.inner.backend.malloc(bytes)?
        };
        Ok(DeviceBuffer {
            mem: Arc::new(Memory {
                ptr,
                device: self.clone(),
                owned: true,
            }),
            offset: 0,
            len,
            _t: PhantomData,
        })
    }

    /// Makes this device current on the calling thread (ACL binds devices per thread).
    pub(crate) fn bind(&self) -> Result<()> {
        self.inner.backend.bind(self.inner.id)
    }

    /// Runs `f` with exclusive use of the stream, then synchronises and
    /// collects the launch reports; a failed launch becomes an Error.
    pub(crate) fn run<R>(&self, f: impl FnOnce(runtime::StreamRef) -> Result<R>) -> Result<R> {
        let guard: MutexGuard<'_, RawStream> =
            self.inner.stream.lock().unwrap_or_else(|e| e.into_inner());
        self.bind()?;
        let stream = self.inner.stream_ref(guard.0);
        let out = f(stream);
        let sync = stream.synchronize();
        let reports = self.collect_reports(stream);
        drop(guard);
        reports?;
        sync?;
        out
    }

    /// The device address of a read-only copy of `bytes` (uploaded on first
    /// use, then kept with the device), to copy into workspaces on a stream
    /// without a host write.
    pub(crate) fn constant(&self, bytes: &[u8]) -> Result<*const c_void> {
        let mut constants = self
            .inner
            .constants
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((_, p)) = constants.iter().find(|(b, _)| b == bytes) {
            return Ok(*p as *const c_void);
        }
        self.bind()?;
        let p = self.inner.backend.malloc(bytes.len().max(1))?;
        if let Err(e) = self.inner.backend.upload(p, bytes.len(), bytes) {
            self.inner.backend.free(p);
            return Err(e);
        }
        constants.push((bytes.to_vec(), p as usize));
        Ok(p)
    }

    /// Runs `f` with exclusive use of the device's own stream (its raw handle).
    pub(crate) fn with_own_stream<R>(&self, f: impl FnOnce(*mut c_void) -> Result<R>) -> Result<R> {
        let guard: MutexGuard<'_, RawStream> =
            self.inner.stream.lock().unwrap_or_else(|e| e.into_inner());
        f(guard.0)
    }

    /// Moves the simulator's reports of `stream`'s launches to this device's
    /// ([`Device::take_reports`]); the first failed launch becomes an Error.
    pub(crate) fn collect_reports(&self, stream: runtime::StreamRef) -> Result<()> {
        let reports = stream.take_reports();
        let failed = reports.iter().find(|r| r.status != 0).map(|r| {
            if r.error.starts_with(runtime::HOST_RACE) {
                Error::HostRace {
                    call: "aclrtSynchronizeStream",
                    diagnostic: r.error.clone(),
                }
            } else {
                Error::SimulatorRule {
                    kernel: r.kernel.clone(),
                    diagnostic: r.error.clone(),
                }
            }
        });
        self.inner
            .reports
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(reports);
        failed.map_or(Ok(()), Err)
    }

    pub(crate) fn stream_ref(&self, raw: *mut c_void) -> runtime::StreamRef {
        self.inner.stream_ref(raw)
    }

    pub(crate) fn backend_ref(&self) -> &'static runtime::Backend {
        self.inner.backend
    }

    pub(crate) fn same(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Default for Device {
    /// Same as [`Device::default_device`]. Creating the default device
    /// cannot fail unless 64 simulated devices already exist (a failing NPU
    /// backend falls back to the simulator).
    fn default() -> Self {
        Device::default_device().expect("creating the default simulated device")
    }
}

/// A device allocation (or a borrowed range of another owner's), shared by
/// its [`DeviceBuffer`] and by the streams whose queued work uses it, so
/// that it is freed only when both are done with it.
pub(crate) struct Memory {
    ptr: *mut c_void,
    device: Device,
    /// Freed on drop (false for borrowed memory).
    owned: bool,
}

// SAFETY: the allocation is only passed to ACL calls, which are thread safe.
#[allow(unsafe_code)]
unsafe impl Send for Memory {}
// SAFETY: shared references only read the pointer value.
#[allow(unsafe_code)]
unsafe impl Sync for Memory {}

impl Drop for Memory {
    fn drop(&mut self) {
        if self.owned && !self.ptr.is_null() && self.device.bind().is_ok() {
            self.device.inner.backend.free(self.ptr);
        }
    }
}

/// A typed buffer in device memory. Freed on drop, or, when queued work on
/// a [`Stream`](crate::Stream) still uses it, once that stream is
/// synchronised.
pub struct DeviceBuffer<T: Element> {
    mem: Arc<Memory>,
    /// Bytes from the allocation's start (views into a workspace).
    offset: usize,
    len: usize,
    _t: PhantomData<T>,
}

/// A [`DeviceBuffer`] over device memory another library owns (say an ACL
/// allocation of a framework), made by [`DeviceBuffer::from_raw_parts`]: it
/// never frees the memory, and the borrow `'a` stands for the owner's
/// promise to keep it alive. Dereferences to the buffer, so every operation
/// takes it.
pub struct BorrowedBuffer<'a, T: Element> {
    buf: DeviceBuffer<T>,
    _owner: PhantomData<&'a mut [T]>,
}

impl<T: Element> std::ops::Deref for BorrowedBuffer<'_, T> {
    type Target = DeviceBuffer<T>;
    fn deref(&self) -> &DeviceBuffer<T> {
        &self.buf
    }
}

impl<T: Element> std::ops::DerefMut for BorrowedBuffer<'_, T> {
    fn deref_mut(&mut self) -> &mut DeviceBuffer<T> {
        &mut self.buf
    }
}

impl<T: Element> std::fmt::Debug for BorrowedBuffer<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BorrowedBuffer").field(&self.buf).finish()
    }
}

impl<T: Element> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("dtype", &T::DTYPE)
            .field("len", &self.len)
            .finish()
    }
}

impl<T: Element> DeviceBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
    /// The device the buffer lives on.
    pub fn device(&self) -> &Device {
        &self.mem.device
    }

    /// Wraps `len` elements of device memory at `ptr`, which another owner
    /// allocated on `device` and keeps (zero-copy: no allocation, no copy).
    /// The result never frees the memory.
    ///
    /// # Safety
    ///
    /// For the lifetime `'a` and until every stream that ran work on the
    /// buffer has been synchronised after that work: `ptr` points to at
    /// least `len * size_of::<T>()` bytes of device memory of `device`'s
    /// runtime (on an NPU an ACL allocation of that device, on the simulator
    /// an allocation of this process's simulator), aligned to
    /// `align_of::<T>()` (the kernels assume 32 bytes for full speed and
    /// ACL's allocations give 64), that nothing frees or reuses; and no
    /// other party writes it while our queued work reads it, or touches it
    /// while our queued work writes it, except in stream order (events).
    /// A null `ptr` is allowed only with `len = 0`.
    #[allow(unsafe_code)]
    pub unsafe fn from_raw_parts<'a>(
        device: &Device,
        ptr: *mut c_void,
        len: usize,
    ) -> Result<BorrowedBuffer<'a, T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>());
        if bytes.is_none() || (ptr.is_null() && len > 0) {
            return Err(Error::InvalidArgument {
                name: "ptr",
                reason: format!("{len} elements at {ptr:p}: null or too long"),
            });
        }
        if !(ptr as usize).is_multiple_of(std::mem::align_of::<T>()) {
            return Err(Error::InvalidArgument {
                name: "ptr",
                reason: format!("{ptr:p} is not aligned to {}", std::mem::align_of::<T>()),
            });
        }
        Ok(BorrowedBuffer {
            buf: DeviceBuffer {
                mem: Arc::new(Memory {
                    ptr,
                    device: device.clone(),
                    owned: false,
                }),
                offset: 0,
                len,
                _t: PhantomData,
            },
            _owner: PhantomData,
        })
    }

    /// The device address of the first element (null for an empty buffer),
    /// to hand to another library's kernels. It stays valid while this
    /// buffer (and any stream work using it) lives; the other library must
    /// order its accesses with ours (synchronise, or events on its stream)
    /// and must not free it.
    pub fn as_raw_ptr(&self) -> *mut c_void {
        self.ptr()
    }

    /// The shared allocation (what a stream keeps alive for its queued work).
    pub(crate) fn memory(&self) -> &Arc<Memory> {
        &self.mem
    }
    /// Copies the buffer to the host.
    pub fn download(&self) -> Result<Vec<T>> {
        let mut out = vec![T::default(); self.len];
        if self.len > 0 {
            self.mem.device.bind()?;
            self.mem
                .device
                .inner
                .backend
                .download(as_bytes_mut(&mut out), self.ptr())?;
        }
        Ok(out)
    }
    /// Copies the first `len` elements to the host (`len <= self.len()`).
    pub fn download_prefix(&self, len: usize) -> Result<Vec<T>> {
        if len > self.len {
            return Err(Error::InvalidArgument {
                name: "len",
                reason: format!("{len} elements requested from a buffer of {}", self.len),
            });
        }
        let mut out = vec![T::default(); len];
        if len > 0 {
            self.mem.device.bind()?;
            self.mem
                .device
                .inner
                .backend
                .download(as_bytes_mut(&mut out), self.ptr())?;
        }
        Ok(out)
    }
    /// Copies elements `start..start + len` to the host (within the buffer).
    pub(crate) fn download_range(&self, start: usize, len: usize) -> Result<Vec<T>> {
        if start.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(Error::InvalidArgument {
                name: "len",
                reason: format!(
                    "elements {start}..+{len} requested from a buffer of {}",
                    self.len
                ),
            });
        }
        let mut out = vec![T::default(); len];
        if len > 0 {
            self.mem.device.bind()?;
            self.mem
                .device
                .inner
                .backend
                .download(as_bytes_mut(&mut out), self.ptr_at(start))?;
        }
        Ok(out)
    }
    /// Copies `data` from the host into elements `start..start +
    /// data.len()` of the buffer, with no allocation (a synchronous copy: on
    /// a stream, only after the work that uses the buffer was synchronised).
    pub fn write_from_host(&mut self, start: usize, data: &[T]) -> Result<()> {
        self.upload_at(start, data)
    }

    /// Copies `data` from the host to elements `start..start + data.len()`.
    pub(crate) fn upload_at(&self, start: usize, data: &[T]) -> Result<()> {
        if start
            .checked_add(data.len())
            .is_none_or(|end| end > self.len)
        {
            return Err(Error::InvalidArgument {
                name: "data",
                reason: format!(
                    "elements {start}..+{} written to a buffer of {}",
                    data.len(),
                    self.len
                ),
            });
        }
        if !data.is_empty() {
            self.mem.device.bind()?;
            let capacity = (self.len - start) * std::mem::size_of::<T>();
            self.mem
                .device
                .inner
                .backend
                .upload(self.ptr_at(start), capacity, as_bytes(data))?;
        }
        Ok(())
    }
    pub(crate) fn ptr(&self) -> *mut c_void {
        self.mem.ptr.cast::<u8>().wrapping_add(self.offset).cast()
    }

    /// A buffer of `len` elements of `U` at byte `offset` of this one's
    /// memory (sharing it: a part of a workspace handed to an operation).
    pub(crate) fn view<U: Element>(&self, offset: usize, len: usize) -> DeviceBuffer<U> {
        debug_assert!(offset + len * std::mem::size_of::<U>() <= self.bytes());
        debug_assert!((self.offset + offset).is_multiple_of(std::mem::align_of::<U>()));
        DeviceBuffer {
            mem: Arc::clone(&self.mem),
            offset: self.offset + offset,
            len,
            _t: PhantomData,
        }
    }
    /// Device address of element `index` (for launches on part of a buffer).
    pub(crate) fn ptr_at(&self, index: usize) -> *mut c_void {
        debug_assert!(index <= self.len);
        self.ptr()
            .cast::<u8>()
            .wrapping_add(index * std::mem::size_of::<T>())
            .cast()
    }
}
