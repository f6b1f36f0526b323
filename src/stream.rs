//! [`Stream`] and [`Event`], and the stream-ordered lifetime tracking shared by every
//! device resource.
//!
//! # Lifetime design
//! Each stream counts the work submitted to it: every enqueue (copy, operator launch,
//! event record) gets a *ticket* `submitted + 1`, assigned under the stream's lock, and
//! [`Stream::synchronize`] advances the stream's *completed* counter to the ticket that
//! was last submitted before it waited. A resource that queued work uses (a tensor's
//! device buffer, an event) records the `(stream, ticket)` of its last use on each stream
//! in a small fixed-size array ([`Uses`], no heap). When the resource is dropped, every
//! stream whose completed counter is behind the recorded ticket is synchronised first; only
//! then is the memory freed. A stream that is already gone was drained when it was
//! dropped. If a synchronisation fails, the resource is leaked rather than freed under
//! running work.
//!
//! The per-stream workspace cache is grow-only; a replaced workspace may still be used by
//! queued work, so it is freed only after a synchronisation that covers that work (or
//! when the stream is dropped). Pinned staging buffers of uploads are kept the same way.

use crate::device::{Device, DeviceInner, next_uid};
use crate::error::{Error, Result};
use crate::sys;
use ascend_sys::{FnTable, aclrtEvent, aclrtStream};
use std::ffi::c_void;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

/// Memory freed once the stream has finished the work with ticket `ticket`.
struct Deferred {
    ticket: u64,
    ptr: *mut c_void,
    host: bool,
}

pub(crate) struct StreamState {
    workspace: *mut c_void,
    workspace_size: u64,
    deferred: Vec<Deferred>,
}

pub(crate) struct StreamInner {
    pub(crate) device: Arc<DeviceInner>,
    pub(crate) raw: aclrtStream,
    uid: u64,
    submitted: AtomicU64,
    completed: AtomicU64,
    state: Mutex<StreamState>,
}

// SAFETY: `raw` is a CANN stream handle, usable from any thread whose current context is
// the stream's device context (the crate binds it before every call). Enqueues are
// serialised by `state`'s mutex, which also owns the raw workspace/staging pointers.
unsafe impl Send for StreamInner {}
// SAFETY: as above; every `&self` method either reads atomics or takes the mutex.
unsafe impl Sync for StreamInner {}

impl StreamInner {
    #[inline]
    pub(crate) fn table(&self) -> &'static FnTable {
        self.device.table()
    }

    fn lock(&self) -> MutexGuard<'_, StreamState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[inline]
    fn is_done(&self, ticket: u64) -> bool {
        self.completed.load(Ordering::Acquire) >= ticket
    }

    /// Enqueues work: binds the context, takes the stream's lock and calls `f` with the
    /// state, the raw stream and the ticket the work will get. Returns that ticket.
    #[inline]
    pub(crate) fn submit(
        &self,
        f: impl FnOnce(&mut StreamState, aclrtStream, u64) -> Result<()>,
    ) -> Result<u64> {
        self.device.bind()?;
        let mut state = self.lock();
        let ticket = self.submitted.load(Ordering::Relaxed) + 1;
        let result = f(&mut state, self.raw, ticket);
        // Conservatively counted even when `f` failed part-way.
        self.submitted.store(ticket, Ordering::Release);
        drop(state);
        result.map(|()| ticket)
    }

    pub(crate) fn synchronize(&self) -> Result<()> {
        let target = self.submitted.load(Ordering::Acquire);
        self.device.bind()?;
        let t = self.table();
        // SAFETY: `raw` is a live stream of the current context.
        let code = unsafe { (t.aclrtSynchronizeStream)(self.raw) };
        sys::acl(t, "aclrtSynchronizeStream", code)?;
        self.completed.fetch_max(target, Ordering::AcqRel);
        let mut state = self.lock();
        state.deferred.retain(|d| {
            if d.ticket <= target {
                free(t, d.ptr, d.host);
                false
            } else {
                true
            }
        });
        Ok(())
    }
}

fn free(t: &FnTable, ptr: *mut c_void, host: bool) {
    // SAFETY: `ptr` came from aclrtMalloc / aclrtMallocHost of this stream's device (whose
    // context is current) and no queued work uses it any more; it is freed once.
    unsafe {
        if host {
            let _ = (t.aclrtFreeHost)(ptr);
        } else {
            let _ = (t.aclrtFree)(ptr);
        }
    }
}

impl StreamState {
    /// A device workspace of at least `size` bytes from the grow-only cache (null for 0).
    /// `ticket` is the ticket of the work about to use it.
    #[inline]
    pub(crate) fn workspace(&mut self, t: &FnTable, size: u64, ticket: u64) -> Result<*mut c_void> {
        if size == 0 {
            return Ok(std::ptr::null_mut());
        }
        if size <= self.workspace_size {
            return Ok(self.workspace);
        }
        self.grow_workspace(t, size, ticket)
    }

    #[cold]
    fn grow_workspace(&mut self, t: &FnTable, size: u64, ticket: u64) -> Result<*mut c_void> {
        let new_size = size
            .max(self.workspace_size.saturating_mul(2))
            .next_multiple_of(512);
        let bytes = usize::try_from(new_size)
            .map_err(|_| Error::InvalidArgument(format!("workspace of {size} bytes")))?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid; the stream's context is current (submit).
        let code = unsafe { (t.aclrtMalloc)(&mut p, bytes, ascend_sys::ACL_MEM_MALLOC_HUGE_FIRST) };
        sys::acl(t, "aclrtMalloc", code)?;
        if !self.workspace.is_null() {
            // Work up to the previous ticket may still use the old workspace.
            self.deferred.push(Deferred {
                ticket: ticket.saturating_sub(1),
                ptr: self.workspace,
                host: false,
            });
        }
        self.workspace = p;
        self.workspace_size = new_size;
        Ok(p)
    }

    /// Keeps a pinned host buffer until the work with `ticket` is done.
    pub(crate) fn defer_host_free(&mut self, ptr: *mut c_void, ticket: u64) {
        self.deferred.push(Deferred {
            ticket,
            ptr,
            host: true,
        });
    }
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        let t = self.table();
        let drained = self.synchronize().is_ok();
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        if drained {
            for d in state.deferred.drain(..) {
                free(t, d.ptr, d.host);
            }
            if !state.workspace.is_null() {
                free(t, state.workspace, false);
            }
        }
        // (If draining failed, the memory is leaked rather than freed under running work.)
        if self.device.bind().is_ok() {
            // SAFETY: the stream is live, belongs to the current context and is destroyed
            // once; all other handles to it are gone (this is the last `Arc`).
            let _ = unsafe { (t.aclrtDestroyStream)(self.raw) };
        }
    }
}

/// The most streams a resource tracks at once before it synchronises the oldest one.
const USE_SLOTS: usize = 4;

struct Slot {
    stream: Weak<StreamInner>,
    /// `stream`'s address (null for an empty slot), for a cheap identity test. The `Weak`
    /// keeps the allocation alive, so no other stream can have this address meanwhile.
    raw: *const StreamInner,
    ticket: u64,
}

// SAFETY: `raw` is only compared, never dereferenced.
unsafe impl Send for Slot {}

/// The last use of a resource on each of up to [`USE_SLOTS`] streams (no heap).
pub(crate) struct Uses {
    slots: Mutex<[Slot; USE_SLOTS]>,
    /// Set when the crate could not make sure queued work is finished: leak on drop.
    leak: AtomicBool,
}

impl Uses {
    pub(crate) const fn new() -> Uses {
        Uses {
            slots: Mutex::new(
                [const {
                    Slot {
                        stream: Weak::new(),
                        raw: std::ptr::null(),
                        ticket: 0,
                    }
                }; USE_SLOTS],
            ),
            leak: AtomicBool::new(false),
        }
    }

    /// Notes that the work with `ticket` on `stream` uses the resource. Never allocates.
    /// The common case (the stream already has a slot) is inlined into the callers.
    #[inline]
    pub(crate) fn record(&self, stream: &Arc<StreamInner>, ticket: u64) {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let me = Arc::as_ptr(stream);
        if let Some(slot) = slots.iter_mut().find(|s| std::ptr::eq(s.raw, me)) {
            slot.ticket = slot.ticket.max(ticket);
            return;
        }
        self.record_new(&mut slots, stream, ticket);
    }

    /// A stream without a slot yet: take a free slot (empty, or whose stream is gone or
    /// past its ticket), or wait for the first one and reuse it.
    #[cold]
    #[inline(never)]
    fn record_new(&self, slots: &mut [Slot; USE_SLOTS], stream: &Arc<StreamInner>, ticket: u64) {
        let new = || Slot {
            stream: Arc::downgrade(stream),
            raw: Arc::as_ptr(stream),
            ticket,
        };
        let free_slot = slots.iter_mut().find(|s| match s.stream.upgrade() {
            None => true,
            Some(st) => st.is_done(s.ticket),
        });
        if let Some(slot) = free_slot {
            *slot = new();
            return;
        }
        // All slots busy with other streams: wait for the first one, then reuse it.
        let [first, ..] = slots;
        if let Some(st) = first.stream.upgrade()
            && st.synchronize().is_err()
        {
            self.leak.store(true, Ordering::Relaxed);
        }
        *first = new();
    }

    /// Waits until no queued work uses the resource. `false` when that cannot be ensured
    /// (the resource must then be leaked).
    pub(crate) fn wait_idle(&mut self) -> bool {
        if *self.leak.get_mut() {
            return false;
        }
        let slots = self.slots.get_mut().unwrap_or_else(PoisonError::into_inner);
        for slot in slots.iter() {
            if let Some(st) = slot.stream.upgrade()
                && !st.is_done(slot.ticket)
                && st.synchronize().is_err()
            {
                return false;
            }
        }
        true
    }
}

/// An ordered queue of device work (`aclrtStream`). Operators, copies and event records
/// run asynchronously in submission order.
///
/// Dropping a `Stream` waits for its queued work (`aclrtSynchronizeStream`), frees its
/// workspace cache and destroys it. Tensors used by work on a stream stay valid until that
/// work is done, whichever is dropped first (see the crate docs, "Lifetimes").
///
/// `Stream` is a `Clone` handle and `Send + Sync`: enqueues from several threads are
/// serialised by an internal lock, and the crate binds the device context on the calling
/// thread.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// let device = ascendcl::Runtime::auto()?.device(0)?;
/// let stream = device.stream()?;
/// stream.synchronize()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Stream {
    pub(crate) inner: Arc<StreamInner>,
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("device", &self.inner.device.id)
            .field("uid", &self.inner.uid)
            .field("submitted", &self.inner.submitted.load(Ordering::Relaxed))
            .field("completed", &self.inner.completed.load(Ordering::Relaxed))
            .finish()
    }
}

impl Stream {
    pub(crate) fn new(device: &Arc<DeviceInner>) -> Result<Stream> {
        device.bind()?;
        let t = device.table();
        let mut raw: aclrtStream = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid; the device's context is current.
        let code = unsafe { (t.aclrtCreateStream)(&mut raw) };
        sys::acl(t, "aclrtCreateStream", code)?;
        Ok(Stream {
            inner: Arc::new(StreamInner {
                device: Arc::clone(device),
                raw,
                uid: next_uid(),
                submitted: AtomicU64::new(0),
                completed: AtomicU64::new(0),
                state: Mutex::new(StreamState {
                    workspace: std::ptr::null_mut(),
                    workspace_size: 0,
                    deferred: Vec::new(),
                }),
            }),
        })
    }

    /// Blocks until all work submitted so far has finished, then releases the memory that
    /// was waiting for it (replaced workspaces, upload staging buffers).
    ///
    /// # Errors
    /// [`Error::Acl`] from `aclrtSynchronizeStream` (e.g. a failed kernel).
    pub fn synchronize(&self) -> Result<()> {
        self.inner.synchronize()
    }

    /// The device of this stream.
    pub fn device(&self) -> Device {
        Device {
            inner: Arc::clone(&self.inner.device),
        }
    }

    /// The raw `aclrtStream` handle, for calls the safe API lacks. It stays valid while
    /// this `Stream` (or a clone) lives; the caller must bind the device's context and
    /// must not destroy it.
    pub fn as_raw(&self) -> aclrtStream {
        self.inner.raw
    }

    /// Records `event` on this stream: it completes when the work submitted so far does.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`] when the event belongs to another device, [`Error::Acl`]
    /// from `aclrtRecordEvent`.
    pub fn record(&self, event: &Event) -> Result<()> {
        event.check_device(self)?;
        let t = self.inner.table();
        let ticket = self.inner.submit(|_, raw, _| {
            // SAFETY: both handles are live and belong to the current context.
            let code = unsafe { (t.aclrtRecordEvent)(event.inner.raw, raw) };
            sys::acl(t, "aclrtRecordEvent", code)
        })?;
        event.inner.uses.record(&self.inner, ticket);
        let mut last = event
            .inner
            .last_record
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *last = (Arc::downgrade(&self.inner), ticket);
        Ok(())
    }

    /// Makes work submitted to this stream from now on wait until `event` completes
    /// (`aclrtStreamWaitEvent`): the way to order work between two streams.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`] when the event belongs to another device, [`Error::Acl`]
    /// from `aclrtStreamWaitEvent`.
    pub fn wait(&self, event: &Event) -> Result<()> {
        event.check_device(self)?;
        let t = self.inner.table();
        let ticket = self.inner.submit(|_, raw, _| {
            // SAFETY: both handles are live and belong to the current context.
            let code = unsafe { (t.aclrtStreamWaitEvent)(raw, event.inner.raw) };
            sys::acl(t, "aclrtStreamWaitEvent", code)
        })?;
        event.inner.uses.record(&self.inner, ticket);
        Ok(())
    }
}

struct EventInner {
    device: Arc<DeviceInner>,
    raw: aclrtEvent,
    uses: Uses,
    last_record: Mutex<(Weak<StreamInner>, u64)>,
}

// SAFETY: `raw` is a CANN event handle usable from any thread with the device's context
// current (bound by the crate before every call); mutable bookkeeping is behind mutexes.
unsafe impl Send for EventInner {}
// SAFETY: as above.
unsafe impl Sync for EventInner {}

impl Drop for EventInner {
    fn drop(&mut self) {
        // Streams that record or wait on the event must be past it before it is destroyed.
        if !self.uses.wait_idle() || self.device.bind().is_err() {
            return; // leaked rather than destroyed under queued work
        }
        let t = self.device.table();
        // SAFETY: the event is live, unused by queued work and destroyed once.
        let _ = unsafe { (t.aclrtDestroyEvent)(self.raw) };
    }
}

/// A marker in a stream (`aclrtEvent`), for ordering work between streams:
/// [`Stream::record`] it on one stream, [`Stream::wait`] for it on another.
///
/// Dropping an event first waits for the streams that record or wait on it. `Event` is a
/// `Clone` handle and `Send + Sync` (the same reasoning as [`Stream`]).
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// let device = ascendcl::Runtime::auto()?.device(0)?;
/// let (producer, consumer) = (device.stream()?, device.stream()?);
/// let ready = device.event()?;
/// producer.record(&ready)?;
/// consumer.wait(&ready)?; // work on `consumer` now runs after `producer`'s so far
/// ready.synchronize()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Event {
    inner: Arc<EventInner>,
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("device", &self.inner.device.id)
            .finish_non_exhaustive()
    }
}

impl Event {
    pub(crate) fn new(device: &Arc<DeviceInner>) -> Result<Event> {
        device.bind()?;
        let t = device.table();
        let mut raw: aclrtEvent = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid; the device's context is current.
        let code = unsafe { (t.aclrtCreateEvent)(&mut raw) };
        sys::acl(t, "aclrtCreateEvent", code)?;
        Ok(Event {
            inner: Arc::new(EventInner {
                device: Arc::clone(device),
                raw,
                uses: Uses::new(),
                last_record: Mutex::new((Weak::new(), 0)),
            }),
        })
    }

    /// Blocks until the work before the event's last record has finished.
    ///
    /// # Errors
    /// [`Error::Acl`] from `aclrtSynchronizeEvent`.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.device.bind()?;
        let t = self.inner.device.table();
        // SAFETY: the event is live and belongs to the current context.
        let code = unsafe { (t.aclrtSynchronizeEvent)(self.inner.raw) };
        sys::acl(t, "aclrtSynchronizeEvent", code)?;
        let last = self
            .inner
            .last_record
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(stream) = last.0.upgrade() {
            stream.completed.fetch_max(last.1, Ordering::AcqRel);
        }
        Ok(())
    }

    fn check_device(&self, stream: &Stream) -> Result<()> {
        if self.inner.device.same_as(&stream.inner.device) {
            Ok(())
        } else {
            Err(Error::DeviceMismatch {
                argument: "event",
                expected: stream.inner.device.id,
                found: self.inner.device.id,
            })
        }
    }
}
