//! Devices, streams and typed device buffers.
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ascendc_sim::{LaunchReport, Soc, SocProfile};

use crate::error::{Error, Result};
use crate::ffi;

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
element!(half::f16 => F16, half::bf16 => Bf16, f32 => F32, i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32);

fn as_bytes<T: Element>(v: &[T]) -> &[u8] {
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

struct Stream(*mut c_void);
// SAFETY: an ACL stream handle may be used from any thread that has set the
// device; every use is serialised by the device's mutex.
#[allow(unsafe_code)]
unsafe impl Send for Stream {}

struct DeviceInner {
    id: i32,
    soc: Soc,
    profile: SocProfile,
    stream: Mutex<Stream>,
    reports: Mutex<Vec<LaunchReport>>,
}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        if ffi::set_device(self.id).is_ok() {
            let s = self
                .stream
                .get_mut()
                .map(|s| s.0)
                .unwrap_or(std::ptr::null_mut());
            if !s.is_null() {
                ffi::destroy_stream(s);
            }
            // Every buffer holds a clone of its device, so none is live now
            // unless it was leaked (`mem::forget`): the simulator reports
            // those here when its leak report is on.
            ffi::reset_device(self.id);
        }
    }
}

/// A device: a simulated Ascend SoC (or, later, an NPU) with one stream.
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
            .finish()
    }
}

static NEXT_DEVICE_ID: AtomicI32 = AtomicI32::new(0);

impl Device {
    /// A simulated device of the given SoC, running kernels on the project's
    /// AscendC CPU simulator.
    pub fn simulated(soc: Soc) -> Result<Device> {
        ffi::init()?;
        let id = NEXT_DEVICE_ID.fetch_add(1, Ordering::Relaxed);
        if id >= 64 {
            return Err(Error::Unsupported(
                "at most 64 simulated devices per process".into(),
            ));
        }
        let profile = soc.profile();
        ffi::configure_simulated(id, &ffi::soc_struct(&profile))?;
        ffi::set_device(id)?;
        let stream = ffi::create_stream()?;
        Ok(Device {
            inner: Arc::new(DeviceInner {
                id,
                soc,
                profile,
                stream: Mutex::new(Stream(stream)),
                reports: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The process-wide default device: the simulated Ascend910B4 (the NPU
    /// path comes with the CANN loader). Every call returns the same device.
    pub fn default_device() -> Result<Device> {
        static DEFAULT: std::sync::OnceLock<std::result::Result<Device, Error>> =
            std::sync::OnceLock::new();
        DEFAULT
            .get_or_init(|| Device::simulated(Soc::default()))
            .clone()
    }

    /// The SoC of this device.
    pub fn soc(&self) -> Soc {
        self.inner.soc
    }

    /// The SoC's numbers.
    pub fn profile(&self) -> &SocProfile {
        &self.inner.profile
    }

    /// A buffer of `len` zeroed elements.
    pub fn alloc_zeroed<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let buf = self.alloc_uninit::<T>(len)?;
        if len > 0 {
            self.bind()?;
            ffi::memset(buf.ptr, buf.bytes())?;
        }
        Ok(buf)
    }

    /// A buffer holding a copy of `data`.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        let buf = self.alloc_uninit::<T>(data.len())?;
        if !data.is_empty() {
            self.bind()?;
            ffi::upload(buf.ptr, buf.bytes(), as_bytes(data))?;
        }
        Ok(buf)
    }

    /// Bytes of device memory this device's live allocations hold, as the
    /// simulator counts them (each [`DeviceBuffer`] of `b > 0` bytes holds
    /// `b` rounded up to 32, plus 32, as `aclrtMalloc` pads it; empty buffers
    /// hold nothing). Every buffer frees its memory on drop, so this returns
    /// to its earlier value once the buffers made in between are dropped:
    /// the leak check of the tests and the fuzz targets.
    pub fn allocated_bytes(&self) -> u64 {
        ffi::allocated_bytes(self.inner.id)
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
            ffi::malloc(bytes)?
        };
        Ok(DeviceBuffer {
            ptr,
            len,
            device: self.clone(),
            _t: PhantomData,
        })
    }

    /// Makes this device current on the calling thread (ACL binds devices per thread).
    pub(crate) fn bind(&self) -> Result<()> {
        ffi::set_device(self.inner.id)
    }

    /// Runs `f` with exclusive use of the stream, then synchronises and
    /// collects the launch reports; a failed launch becomes an Error.
    pub(crate) fn run<R>(&self, f: impl FnOnce(*mut c_void) -> Result<R>) -> Result<R> {
        let guard: MutexGuard<'_, Stream> =
            self.inner.stream.lock().unwrap_or_else(|e| e.into_inner());
        self.bind()?;
        let out = f(guard.0);
        let sync = ffi::synchronize(guard.0);
        let reports = ffi::take_reports(guard.0);
        drop(guard);
        let failed = reports
            .iter()
            .find(|r| r.status != 0)
            .map(|r| Error::SimulatorRule {
                kernel: r.kernel.clone(),
                diagnostic: r.error.clone(),
            });
        self.inner
            .reports
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(reports);
        if let Some(e) = failed {
            return Err(e);
        }
        sync?;
        out
    }

    pub(crate) fn same(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Default for Device {
    /// Same as [`Device::default_device`]. Creating the simulated default
    /// device cannot fail unless 64 simulated devices already exist.
    fn default() -> Self {
        Device::default_device().expect("creating the default simulated device")
    }
}

/// A typed buffer in device memory. Freed on drop.
pub struct DeviceBuffer<T: Element> {
    ptr: *mut c_void,
    len: usize,
    device: Device,
    _t: PhantomData<T>,
}

// SAFETY: the buffer owns its device allocation; the pointer is only passed
// to ACL calls, which are thread safe.
#[allow(unsafe_code)]
unsafe impl<T: Element> Send for DeviceBuffer<T> {}
// SAFETY: shared references only read the allocation through ACL.
#[allow(unsafe_code)]
unsafe impl<T: Element> Sync for DeviceBuffer<T> {}

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
        &self.device
    }
    /// Copies the buffer to the host.
    pub fn download(&self) -> Result<Vec<T>> {
        let mut out = vec![T::default(); self.len];
        if self.len > 0 {
            self.device.bind()?;
            ffi::download(as_bytes_mut(&mut out), self.ptr)?;
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
            self.device.bind()?;
            ffi::download(as_bytes_mut(&mut out), self.ptr)?;
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
            self.device.bind()?;
            ffi::download(as_bytes_mut(&mut out), self.ptr_at(start))?;
        }
        Ok(out)
    }
    pub(crate) fn ptr(&self) -> *mut c_void {
        self.ptr
    }
    /// Device address of element `index` (for launches on part of a buffer).
    pub(crate) fn ptr_at(&self, index: usize) -> *mut c_void {
        debug_assert!(index <= self.len);
        self.ptr
            .cast::<u8>()
            .wrapping_add(index * std::mem::size_of::<T>())
            .cast()
    }
}

impl<T: Element> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if !self.ptr.is_null() && self.device.bind().is_ok() {
            ffi::free(self.ptr);
        }
    }
}
