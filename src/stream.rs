//! [`Stream`]: an ordered queue of device work, and the stream side of the crate's
//! stream-ordered lifetimes.
//!
//! # Lifetime design
//! Each stream counts the work submitted to it: every enqueue (copy, operator launch,
//! event record) gets a *ticket* `submitted + 1`, assigned under the stream's lock, and
//! [`Stream::synchronize`] advances the stream's *completed* counter to the ticket that
//! was last submitted before it waited. Resources record their last use per stream
//! ([`Uses`](crate::uses::Uses)) and wait for those tickets before they are released.
//!
//! The per-stream workspace is a block of the device's caching allocator (`alloc/`),
//! grow-only; a replaced one returns to the cache at once with the stream's use record, so
//! nothing else takes it before the queued work that may use it has run. The stream's
//! pinned staging buffer (one, grow-only) is written by the host only once the ticket of
//! its last queued copy is done.
//!
//! # Errors nobody asked for
//! A synchronisation made on a release path (a `Drop`) has no caller to return its error
//! to. It is *parked* on the stream instead, and the stream's next
//! [`synchronize`](Stream::synchronize) or enqueue returns it, once (as cudarc does with
//! its `record_err`/`check_err`). Memory that could not be proved idle is leaked and
//! counted ([`Device::leaks`](crate::Device::leaks)).

use crate::clock::Clock;
use crate::device::{Device, DeviceInner, next_uid};
use crate::error::{Error, Result};
use crate::event::Event;
use crate::pinned::Pinned;
use crate::sys;
use ascend_sys::{FnTable, aclrtStream};
use std::ffi::c_void;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Work of another stream that this stream waited for: tickets `first..=last` of `clock`.
struct Dependency {
    clock: Arc<Clock>,
    first: u64,
    last: u64,
}

pub(crate) struct StreamState {
    /// The workspace of phase 2 (a block of the device's cache; `None` until needed).
    workspace: Option<crate::alloc::Block>,
    /// Pinned host buffer that stages host-array transfers (grow-only, made on first need).
    staging: Option<Pinned>,
    /// The last ticket whose copy reads or writes `staging`.
    staging_ticket: u64,
}

pub(crate) struct StreamInner {
    pub(crate) device: Arc<DeviceInner>,
    pub(crate) raw: aclrtStream,
    uid: u64,
    submitted: AtomicU64,
    /// How far the stream's work has finished; shared with the use records that name the
    /// stream, which it outlives.
    pub(crate) clock: Arc<Clock>,
    state: Mutex<StreamState>,
    /// Other streams' work this stream was made to wait for since its last check (see
    /// [`check_dependencies`](Self::check_dependencies)). Grow-only capacity.
    deps: Mutex<Vec<Dependency>>,
    /// A failure of a synchronisation that no caller has seen yet (see the module docs).
    parked: Mutex<Option<Error>>,
    /// Whether `parked` holds an error: the enqueue path tests this flag, not the lock.
    has_parked: AtomicBool,
    /// The event other streams wait on to follow this one (made on first need).
    fence: Mutex<Option<Event>>,
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
    pub(crate) fn is_done(&self, ticket: u64) -> bool {
        self.clock.is_done(ticket)
    }

    /// Notes that the work up to `ticket` has finished (an event the runtime waited for).
    pub(crate) fn mark_completed(&self, ticket: u64) {
        self.clock.mark_completed(ticket);
    }

    /// Makes work submitted from now on wait for `event` (the final fence of a stream
    /// being dropped).
    pub(crate) fn wait_event(self: &Arc<Self>, event: &Event) -> Result<()> {
        Stream::from_inner(self).wait_unchecked(event)
    }

    /// Notes that this stream waits for the work up to `ticket` of `clock`'s stream: the
    /// next [`check_dependencies`](Self::check_dependencies) makes sure it succeeded.
    pub(crate) fn depend_on(&self, clock: &Arc<Clock>, ticket: u64) {
        let mut deps = self.deps.lock().unwrap_or_else(PoisonError::into_inner);
        match deps.iter_mut().find(|d| d.clock.uid == clock.uid) {
            Some(d) => {
                d.first = d.first.min(ticket);
                d.last = d.last.max(ticket);
            }
            None => deps.push(Dependency {
                clock: Arc::clone(clock),
                first: ticket,
                last: ticket,
            }),
        }
    }

    /// After this stream's work has finished (a synchronisation or a download): whether
    /// the other streams' work it waited for succeeded. Their failures are known only to
    /// their own synchronisations, so a stream not yet checked that far is synchronised
    /// here (its failure is also parked on it, for its own callers).
    ///
    /// # Errors
    /// [`Error::DependencyFailed`] naming the first failed work (reported once).
    pub(crate) fn check_dependencies(&self) -> Result<()> {
        let mut deps = {
            let mut guard = self.deps.lock().unwrap_or_else(PoisonError::into_inner);
            if guard.is_empty() {
                return Ok(());
            }
            // Out of the lock: the checks below may run a stream's drop, which may
            // synchronise this stream.
            std::mem::take(&mut *guard)
        };
        let mut result = Ok(());
        for d in &deps {
            if !d.clock.is_checked(d.last) {
                match d.clock.stream.upgrade() {
                    Some(other) => {
                        if let Err(e) = other.synchronize() {
                            other.park(e);
                        }
                    }
                    None => {
                        let _ = d.clock.wait_gone(d.last);
                    }
                }
            }
            if let Some(e) = d.clock.failure_in(d.first, d.last) {
                result = Err(e);
                break;
            }
        }
        deps.clear();
        let mut guard = self.deps.lock().unwrap_or_else(PoisonError::into_inner);
        if guard.is_empty() {
            // Keeps the capacity: a steady state allocates nothing.
            *guard = deps;
        }
        result
    }

    /// Makes `waiter` wait for the work submitted to this stream so far (this stream's
    /// fence event, recorded here and waited for there). Returns the ticket it waits for.
    #[cold]
    pub(crate) fn fence_for(self: &Arc<Self>, waiter: &Arc<StreamInner>) -> Result<u64> {
        let mut fence = self.fence.lock().unwrap_or_else(PoisonError::into_inner);
        let event = match fence.as_mut() {
            Some(event) => event,
            None => fence.insert(Event::new(&self.device)?),
        };
        let ticket = Stream::from_inner(self).record_ticket(event)?;
        Stream::from_inner(waiter).wait_unchecked(event)?;
        Ok(ticket)
    }

    /// Returns the parked error, once.
    #[inline]
    pub(crate) fn take_parked(&self) -> Result<()> {
        if !self.has_parked.load(Ordering::Acquire) {
            return Ok(());
        }
        self.take_parked_slow()
    }

    #[cold]
    fn take_parked_slow(&self) -> Result<()> {
        let mut parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        self.has_parked.store(false, Ordering::Release);
        match parked.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Synchronises on a release path: `false` when that failed, in which case the error
    /// is parked for the stream's next caller and reported through `tracing`.
    pub(crate) fn settle(&self) -> bool {
        match self.synchronize() {
            Ok(()) => true,
            Err(e) => {
                self.park(e);
                false
            }
        }
    }

    #[cold]
    pub(crate) fn park(&self, e: Error) {
        tracing::warn!(
            device = self.device.id,
            stream = self.uid,
            error = %e,
            "a stream synchronisation made while releasing a resource failed; the error is \
             kept for the stream's next call"
        );
        let mut parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        // The first failure is the cause; later ones are usually its consequences.
        if parked.is_none() {
            *parked = Some(e);
        }
        self.has_parked.store(true, Ordering::Release);
    }

    /// Enqueues work: binds the context, takes the stream's lock and calls `f` with the
    /// state, the raw stream and the ticket the work will get. Returns that ticket.
    #[inline]
    pub(crate) fn submit(
        &self,
        f: impl FnOnce(&mut StreamState, aclrtStream, u64) -> Result<()>,
    ) -> Result<u64> {
        self.take_parked()?;
        self.device.bind()?;
        let mut state = self.lock();
        let ticket = self.submitted.load(Ordering::Relaxed) + 1;
        let result = f(&mut state, self.raw, ticket);
        // Conservatively counted even when `f` failed part-way.
        self.submitted.store(ticket, Ordering::Release);
        drop(state);
        result.map(|()| ticket)
    }

    /// Makes the workspace at least `size` bytes (grow-only: the steady state takes no
    /// lock beyond the check). A new one is an idle block of the device's cache, taken
    /// outside the stream's lock (emptying the cache on out-of-memory may synchronise this
    /// stream); the replaced one returns to the cache with a use record through the work
    /// queued so far, which is the only work that may use it.
    #[inline]
    pub(crate) fn reserve_workspace(&self, size: u64) -> Result<()> {
        if size == 0
            || self
                .lock()
                .workspace
                .as_ref()
                .is_some_and(|b| b.bytes as u64 >= size)
        {
            return Ok(());
        }
        self.grow_workspace(size)
    }

    #[cold]
    fn grow_workspace(&self, size: u64) -> Result<()> {
        let device = &self.device;
        let old = self.lock().workspace.as_ref().map_or(0, |b| b.bytes);
        let want = usize::try_from(size)
            .ok()
            .ok_or_else(|| Error::InvalidArgument(format!("workspace of {size} bytes")))?;
        let bytes = crate::alloc::size_class(want.max(old.saturating_mul(2)));
        device.bind()?;
        let new = device.cache.take(device, bytes, true, None)?;
        let replaced = {
            let mut state = self.lock();
            match &state.workspace {
                // Another thread grew it meanwhile.
                Some(b) if b.bytes >= want => Some(new),
                _ => {
                    let old = state.workspace.replace(new);
                    if let Some(b) = &old {
                        let through = self.submitted.load(Ordering::Acquire);
                        b.uses
                            .record_on(&self.clock, through, crate::uses::Access::Write);
                    }
                    old
                }
            }
        };
        if let Some(b) = replaced {
            device.cache.give_back(device, b);
        }
        Ok(())
    }

    /// The stream's pinned staging buffer, at least `bytes` long (`bytes > 0`), for the
    /// work with `ticket` (called inside [`submit`](Self::submit)). The host may write it
    /// at once: when queued work may still read it, the stream is drained first. Grow-only;
    /// the steady state allocates nothing.
    pub(crate) fn staging(
        &self,
        state: &mut StreamState,
        bytes: usize,
        ticket: u64,
    ) -> Result<*mut c_void> {
        if !self.is_done(state.staging_ticket) {
            self.drain_locked(ticket)?;
        }
        let have = state.staging.as_ref().map_or(0, Pinned::bytes);
        if bytes > have {
            let new_bytes = bytes
                .max(have.saturating_mul(2))
                .checked_next_multiple_of(4096)
                .ok_or_else(|| Error::InvalidArgument(format!("staging of {bytes} bytes")))?;
            // The old buffer is idle (its last copy was waited for above): replacing it
            // frees it.
            state.staging = Some(Pinned::alloc(&self.device, new_bytes)?);
        }
        state.staging_ticket = ticket;
        Ok(state
            .staging
            .as_ref()
            .map_or(std::ptr::null_mut(), Pinned::ptr))
    }

    /// Waits, with the state lock held by the caller, for all work before `ticket` (the
    /// ticket being submitted) — or including it, when it is already enqueued.
    pub(crate) fn drain_locked(&self, through: u64) -> Result<()> {
        let t = self.table();
        // SAFETY: `raw` is a live stream of the current context (bound by `submit`).
        if let Err(e) = unsafe { sys::synchronize_stream(t, self.raw) } {
            self.clock.note_failure(through, &e);
            return Err(e);
        }
        self.clock.mark_checked(through.saturating_sub(1));
        Ok(())
    }

    /// Notes, with the state lock held, that the work with `ticket` (already enqueued in
    /// the running `submit`) has finished because the stream was drained after it.
    pub(crate) fn drained_through(&self, ticket: u64) {
        self.clock.mark_checked(ticket);
    }

    /// [`synchronize`](Self::synchronize), then [`check_dependencies`](Self::check_dependencies).
    pub(crate) fn synchronize_checked(&self) -> Result<()> {
        self.synchronize()?;
        self.check_dependencies()
    }

    /// Waits for the work submitted so far. A failure is noted on the clock (the work then counts as failed, not finished).
    pub(crate) fn synchronize(&self) -> Result<()> {
        let target = self.submitted.load(Ordering::Acquire);
        self.device.bind()?;
        let t = self.table();
        // SAFETY: `raw` is a live stream of the current context.
        if let Err(e) = unsafe { sys::synchronize_stream(t, self.raw) } {
            self.clock.note_failure(target, &e);
            return Err(e);
        }
        self.clock.mark_checked(target);
        Ok(())
    }
}

impl StreamState {
    /// The workspace for work about to be queued, of at least `size` bytes (null for 0),
    /// grown beforehand by [`StreamInner::reserve_workspace`].
    #[inline]
    pub(crate) fn workspace(&self, size: u64) -> Result<*mut c_void> {
        if size == 0 {
            return Ok(std::ptr::null_mut());
        }
        match &self.workspace {
            Some(b) if b.bytes as u64 >= size => Ok(b.ptr),
            _ => Err(Error::InvalidArgument(format!(
                "no workspace of {size} bytes was reserved"
            ))),
        }
    }
}

impl StreamInner {
    /// In `Drop`, when work is still queued: the stream's fence event (or a new one)
    /// recorded after it, with the record's ticket. `None` when nothing is queued or the
    /// event cannot be made; other streams then wait on the host for the drain.
    fn final_fence(&mut self) -> Option<(Event, u64)> {
        let submitted = *self.submitted.get_mut();
        if self.clock.is_done(submitted) || self.device.bind().is_err() {
            return None;
        }
        let fence = self
            .fence
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let event = match fence {
            Some(event) => event,
            None => Event::new(&self.device).ok()?,
        };
        let ticket = submitted + 1;
        if event.record_final(&self.clock, self.raw, ticket).is_err() {
            // Dropped with the stream, after its drain: releasing an event waits for the
            // streams that recorded it, this one included.
            *self.fence.get_mut().unwrap_or_else(PoisonError::into_inner) = Some(event);
            return None;
        }
        *self.submitted.get_mut() = ticket;
        Some((event, ticket))
    }
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        let t = self.table();
        // Other streams may still have to wait for this one's queued work: they do so on
        // the device, through a final fence recorded now (see `Clock`), and count it as
        // busy until the drain below has finished.
        let final_fence = self.final_fence();
        self.clock.begin_drop(final_fence);
        let through = self.submitted.load(Ordering::Acquire);
        let drained = self.synchronize();
        let fence = self.clock.finish_drop(through, drained.clone());
        drop(fence);
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        let leftover = self
            .parked
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = leftover.take() {
            self.device.note_release_error(&e);
        }
        match drained {
            Ok(()) => {
                if let Some(b) = state.workspace.take() {
                    // Idle: the drain covered every use.
                    b.uses
                        .record_on(&self.clock, through, crate::uses::Access::Write);
                    self.device.cache.give_back(&self.device, b);
                }
                // Idle: the drain above covered its last copy.
                state.staging = None;
            }
            Err(e) => {
                // Leaked rather than freed under work that may still run.
                self.device.note_release_error(&e);
                if let Some(staging) = state.staging.as_mut() {
                    self.device
                        .note_leak("stream memory", 1, staging.bytes() as u64, 0);
                    staging.forget();
                }
                if let Some(b) = state.workspace.take() {
                    self.device.cache.leak(&self.device, b);
                }
            }
        }
        if self.device.bind().is_ok() {
            // SAFETY: the stream is live, belongs to the current context and is destroyed
            // once; all other handles to it are gone (this is the last `Arc`).
            if let Err(e) = unsafe { sys::destroy_stream(t, self.raw) } {
                self.device.note_release_error(&e);
            }
        }
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
            .field(
                "finished",
                &self
                    .inner
                    .clock
                    .is_done(self.inner.submitted.load(Ordering::Relaxed)),
            )
            .finish()
    }
}

impl Stream {
    fn from_inner(inner: &Arc<StreamInner>) -> Stream {
        Stream {
            inner: Arc::clone(inner),
        }
    }

    pub(crate) fn new(device: &Arc<DeviceInner>) -> Result<Stream> {
        device.bind()?;
        let raw = sys::create_stream(device.table())?;
        let uid = next_uid();
        Ok(Stream {
            inner: Arc::new_cyclic(|me| StreamInner {
                device: Arc::clone(device),
                raw,
                uid,
                submitted: AtomicU64::new(0),
                clock: Arc::new(Clock::new(uid, me.clone(), device.key())),
                deps: Mutex::new(Vec::new()),
                state: Mutex::new(StreamState {
                    workspace: None,
                    staging: None,
                    staging_ticket: 0,
                }),
                parked: Mutex::new(None),
                has_parked: AtomicBool::new(false),
                fence: Mutex::new(None),
            }),
        })
    }

    /// Blocks until all work submitted so far has finished, then releases the resources
    /// that were waiting for it (dropped plans' executors and descriptors).
    ///
    /// # Errors
    /// [`Error::Acl`] from `aclrtSynchronizeStream` (e.g. a failed kernel), or the parked
    /// failure of an earlier synchronisation made while releasing a resource (see the
    /// module docs), returned once. [`Error::DependencyFailed`] when work of another
    /// stream that the crate ordered this stream's work after failed (returned once).
    pub fn synchronize(&self) -> Result<()> {
        self.inner.take_parked()?;
        let result = self.inner.synchronize_checked();
        // Dropped plans whose launches this (or earlier) work covered can go now.
        let device = &self.inner.device;
        device.cache.collect_parked(device);
        result
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
}
