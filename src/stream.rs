//! Streams, events and workspaces: the stream-ordered host API.
//!
//! A [`Stream`] is a queue of device work: the `*_on` forms of the
//! operations only enqueue (no allocation when the caller passes its outputs
//! and a [`Workspace`], no host synchronisation) and return; the host waits
//! when it asks ([`Stream::synchronize`], [`Event::synchronize`]). Work on
//! one stream runs in order; work on two streams is ordered only by events
//! ([`Stream::record`], [`Stream::wait`]). The blocking functions
//! (`scan`, `multinomial`, ...) are this plus an allocation and a
//! synchronisation.
//!
//! Lifetimes: a stream keeps every buffer its queued work uses alive until
//! it is synchronised (dropping a [`DeviceBuffer`](crate::DeviceBuffer)
//! early is safe; its memory is freed after the work). The host must still
//! not read a buffer that queued work writes before synchronising: on an
//! NPU it would see stale data; the simulator reports it
//! ([`Error::HostRace`]), as it reports a buffer used on two streams without
//! an event between the two uses.
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use crate::device::{Device, DeviceBuffer, Element, Memory};
use crate::error::{Error, Result};
use crate::runtime::StreamRef;

struct Queue {
    raw: *mut c_void,
    /// Allocations and events used by work queued since the last
    /// synchronisation.
    keep: Vec<Kept>,
}

/// What queued work uses, kept until the stream is synchronised.
enum Kept {
    Memory(Arc<Memory>),
    /// An event a queued record or wait refers to (ACL wants an event not
    /// destroyed while a call still uses it); held for its drop, not read.
    #[allow(dead_code)]
    Event(Arc<EventHandle>),
}

// SAFETY: an ACL stream handle may be used from any thread that has set the
// device; every use goes through the mutex.
#[allow(unsafe_code)]
unsafe impl Send for Queue {}

struct StreamInner {
    device: Device,
    queue: Mutex<Queue>,
    /// Destroyed on drop (false for the device's own stream, which the
    /// blocking functions borrow).
    owned: bool,
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        // Queued work must finish before its buffers are released; a failure
        // has no one left to report to (the device's reports keep it).
        let _ = self.sync();
        let queue = self.queue.get_mut().unwrap_or_else(|e| e.into_inner());
        if self.owned && self.device.bind().is_ok() {
            self.device.stream_ref(queue.raw).destroy();
        }
    }
}

impl StreamInner {
    fn sync(&self) -> Result<()> {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        self.device.bind()?;
        let stream = self.device.stream_ref(queue.raw);
        let synced = stream.synchronize();
        let reports = self.device.collect_reports(stream);
        // The work is done (or failed): its buffers may go.
        queue.keep.clear();
        drop(queue);
        reports?;
        synced
    }
}

/// A stream of device work on one [`Device`] (an ACL stream on an NPU).
/// Cheap to clone (clones are the same stream); `Send` and `Sync`.
#[derive(Clone)]
pub struct Stream {
    inner: Arc<StreamInner>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("device", &self.inner.device)
            .finish()
    }
}

impl Device {
    /// A new stream on this device.
    pub fn create_stream(&self) -> Result<Stream> {
        self.bind()?;
        let raw = self.backend_ref().create_stream()?.raw;
        Ok(Stream {
            inner: Arc::new(StreamInner {
                device: self.clone(),
                queue: Mutex::new(Queue {
                    raw,
                    keep: Vec::new(),
                }),
                owned: true,
            }),
        })
    }

    /// Runs `f` on the device's own stream, then synchronises it: the
    /// blocking functions are their stream-ordered forms inside this. The
    /// stream is held for the whole call, so blocking calls from several
    /// threads do not interleave.
    pub(crate) fn blocking<R>(&self, f: impl FnOnce(&Stream) -> Result<R>) -> Result<R> {
        self.with_own_stream(|raw| {
            let stream = Stream {
                inner: Arc::new(StreamInner {
                    device: self.clone(),
                    queue: Mutex::new(Queue {
                        raw,
                        keep: Vec::new(),
                    }),
                    owned: false,
                }),
            };
            let out = f(&stream);
            stream.synchronize()?;
            out
        })
    }
}

/// What a stream's queued work uses, kept alive until it has run.
pub(crate) trait Uses {
    /// The allocation behind it, if any.
    fn memory(&self) -> Option<&Arc<Memory>>;
}

impl<T: Element> Uses for DeviceBuffer<T> {
    fn memory(&self) -> Option<&Arc<Memory>> {
        Some(DeviceBuffer::memory(self))
    }
}

impl Uses for Workspace {
    fn memory(&self) -> Option<&Arc<Memory>> {
        Some(self.buf.memory())
    }
}

impl Stream {
    /// The device the stream belongs to.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// Waits for the work queued so far. Returns the first failure of that
    /// work: a launch the simulator stopped ([`Error::SimulatorRule`]), a
    /// host-side race ([`Error::HostRace`]) or an ACL error. Releases the
    /// buffers that work kept alive. The launches' reports go to
    /// [`Device::take_reports`].
    pub fn synchronize(&self) -> Result<()> {
        self.inner.sync()
    }

    /// Records an event after the work queued so far.
    pub fn record(&self) -> Result<Event> {
        let event = Event::new(&self.inner.device)?;
        self.with_event(&event, |s| s.record(event.inner.raw))?;
        Ok(event)
    }

    /// Makes the work queued on this stream from now on wait for `event`
    /// (work of another stream, typically). Does not block the host.
    pub fn wait(&self, event: &Event) -> Result<()> {
        if !event.inner.device.same(&self.inner.device) {
            return Err(Error::InvalidArgument {
                name: "event",
                reason: "the event belongs to another device".into(),
            });
        }
        self.with_event(event, |s| s.wait(event.inner.raw))
    }

    /// Runs `f` (a record or a wait of `event`) on the stream, which keeps
    /// the event until it is synchronised.
    fn with_event(&self, event: &Event, f: impl FnOnce(StreamRef) -> Result<()>) -> Result<()> {
        let mut queue = self.inner.queue.lock().unwrap_or_else(|e| e.into_inner());
        self.inner.device.bind()?;
        queue.keep.push(Kept::Event(Arc::clone(&event.inner)));
        f(self.inner.device.stream_ref(queue.raw))
    }

    /// Runs `f` with the stream (queueing work), after noting that the
    /// work uses `uses`, which the stream then keeps until it is
    /// synchronised.
    pub(crate) fn with_queue<R>(
        &self,
        uses: &[&dyn Uses],
        f: impl FnOnce(StreamRef) -> Result<R>,
    ) -> Result<R> {
        let mut queue = self.inner.queue.lock().unwrap_or_else(|e| e.into_inner());
        self.inner.device.bind()?;
        for u in uses {
            if let Some(m) = u.memory() {
                let kept = |k: &Kept| matches!(k, Kept::Memory(k) if Arc::ptr_eq(k, m));
                if !queue.keep.iter().any(kept) {
                    queue.keep.push(Kept::Memory(Arc::clone(m)));
                }
            }
        }
        f(self.inner.device.stream_ref(queue.raw))
    }

    /// Checks that `buf` lives on this stream's device.
    pub(crate) fn check_device<T: Element>(
        &self,
        buf: &DeviceBuffer<T>,
        name: &'static str,
    ) -> Result<()> {
        if self.inner.device.same(buf.device()) {
            Ok(())
        } else {
            Err(Error::InvalidArgument {
                name,
                reason: "the buffer lives on another device than the stream".into(),
            })
        }
    }
}

/// A point in a stream's work ([`Stream::record`]): other streams can wait
/// for it ([`Stream::wait`]) and the host can ([`Event::synchronize`]).
/// Dropping it is safe while streams still wait for it: they keep it until
/// they are synchronised.
pub struct Event {
    inner: Arc<EventHandle>,
}

/// An ACL event, destroyed when the last user lets it go.
struct EventHandle {
    raw: *mut c_void,
    device: Device,
}

// SAFETY: an ACL event handle may be used from any thread that has set the
// device; ACL's event calls are thread safe.
#[allow(unsafe_code)]
unsafe impl Send for EventHandle {}
// SAFETY: as above; `&EventHandle` only passes the handle to ACL.
#[allow(unsafe_code)]
unsafe impl Sync for EventHandle {}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("device", &self.inner.device)
            .finish()
    }
}

impl Event {
    fn new(device: &Device) -> Result<Event> {
        device.bind()?;
        Ok(Event {
            inner: Arc::new(EventHandle {
                raw: device.backend_ref().create_event()?,
                device: device.clone(),
            }),
        })
    }

    /// Blocks the host until the work before the event has run. (Failures of
    /// that work are reported by its stream's [`Stream::synchronize`].)
    pub fn synchronize(&self) -> Result<()> {
        let h = &self.inner;
        h.device.bind()?;
        h.device.backend_ref().synchronize_event(h.raw)
    }
}

impl Drop for EventHandle {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            self.device.backend_ref().destroy_event(self.raw);
        }
    }
}

/// Reusable device scratch memory for the stream-ordered operations (the
/// temporary-storage pattern of CUB): ask the operation's
/// `*_workspace_bytes` function how much it needs, make one workspace of at
/// least that (or of the largest of several operations'), and pass it to
/// every call; a loop then allocates nothing. One workspace serves one
/// stream: work queued with it on another stream must wait for an event.
pub struct Workspace {
    buf: DeviceBuffer<u8>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("bytes", &self.buf.len())
            .finish()
    }
}

impl Workspace {
    /// A workspace of `bytes` bytes on `device` (one allocation).
    pub fn new(device: &Device, bytes: usize) -> Result<Workspace> {
        Ok(Workspace {
            buf: device.alloc_uninit(bytes)?,
        })
    }

    /// Its size in bytes.
    pub fn bytes(&self) -> usize {
        self.buf.len()
    }

    /// The device it lives on.
    pub fn device(&self) -> &Device {
        self.buf.device()
    }

    /// Checks that the workspace is on `stream`'s device and holds `layout`.
    pub(crate) fn check(&self, stream: &Stream, layout: &Layout) -> Result<()> {
        if !stream.device().same(self.device()) {
            return Err(Error::InvalidArgument {
                name: "workspace",
                reason: "the workspace lives on another device than the stream".into(),
            });
        }
        if self.bytes() < layout.bytes() {
            return Err(Error::InvalidArgument {
                name: "workspace",
                reason: format!(
                    "{} bytes, the operation needs {} (ask its *_workspace_bytes function)",
                    self.bytes(),
                    layout.bytes()
                ),
            });
        }
        Ok(())
    }

    /// `part` as a buffer of `T` (sharing the workspace's memory), for an
    /// operation that hands its parts to other operations.
    pub(crate) fn buffer<T: Element>(&self, part: Part) -> DeviceBuffer<T> {
        self.buf
            .view(part.offset, part.bytes / std::mem::size_of::<T>())
    }

    /// `part` as a workspace of its own (for an operation run inside another).
    pub(crate) fn sub(&self, part: Part) -> Workspace {
        Workspace {
            buf: self.buf.view(part.offset, part.bytes),
        }
    }

    /// The device address of `part` (after [`Workspace::check`]).
    pub(crate) fn at(&self, part: Part) -> *mut c_void {
        self.buf.ptr_at(part.offset)
    }
}

/// The parts an operation carves from a [`Workspace`]: the same code gives
/// the size (the `*_workspace_bytes` query) and the offsets (the call).
#[derive(Debug, Default)]
pub(crate) struct Layout {
    bytes: usize,
}

/// One part of a [`Layout`]: its byte offset and size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Part {
    pub(crate) offset: usize,
    pub(crate) bytes: usize,
}

impl Layout {
    /// Each part starts on a 512-byte boundary (as ACL aligns allocations,
    /// which the kernels' DMA assumes for their GM buffers).
    const ALIGN: usize = 512;

    /// Adds a part of `bytes` bytes.
    pub(crate) fn add(&mut self, bytes: usize) -> Part {
        let offset = self.bytes.next_multiple_of(Self::ALIGN);
        self.bytes = offset + bytes;
        Part { offset, bytes }
    }

    /// Adds a part of `len` elements of `T`.
    pub(crate) fn add_of<T>(&mut self, len: usize) -> Part {
        self.add(len * std::mem::size_of::<T>())
    }

    /// The bytes the parts need in all.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

/// `len` must be `want` (an output of a stream-ordered operation).
/// A buffer that an `aclrtMemcpyAsync` fills must start on a 64-byte
/// boundary (CANN 7.0-8.0 require it of both ends). Buffers from
/// [`Device::alloc`](crate::Device::alloc) always do; a borrowed one may not.
pub(crate) fn check_copy_target<T: Element>(
    buf: &DeviceBuffer<T>,
    name: &'static str,
) -> Result<()> {
    let at = buf.ptr() as usize;
    if at.is_multiple_of(64) {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            name,
            reason: format!(
                "starts at {at:#x}, not on a 64-byte boundary (the operation fills it with aclrtMemcpyAsync, which needs one)"
            ),
        })
    }
}

pub(crate) fn check_len(len: usize, want: usize, name: &'static str) -> Result<()> {
    if len == want {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            name,
            reason: format!("{len} elements, the operation writes {want}"),
        })
    }
}
