//! [`Event`]: a marker in a stream, for ordering work between streams.

use crate::clock::Clock;
use crate::device::DeviceInner;
use crate::error::Result;
use crate::ledger::RecordLedger;
use crate::stream::{Stream, StreamInner};
use crate::sys;
use crate::uses::{Access, Uses};
use ascend_sys::aclrtEvent;
use std::fmt;
use std::sync::{Arc, Weak};

pub(crate) struct EventInner {
    device: Arc<DeviceInner>,
    raw: aclrtEvent,
    uses: Uses,
    records: RecordLedger<Weak<StreamInner>>,
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
            self.device.note_leak("event", 0, 0, 1);
            return;
        }
        let t = self.device.table();
        // SAFETY: the event is live, unused by queued work and destroyed once.
        if let Err(e) = unsafe { sys::destroy_event(t, self.raw) } {
            self.device.note_release_error(&e);
        }
    }
}

/// A marker in a stream (`aclrtEvent`), for ordering work between streams:
/// [`Stream::record`] it on one stream, [`Stream::wait`] for it on another.
///
/// Dropping an event first waits for the streams that record or wait on it. `Event` is a
/// `Clone` handle and `Send + Sync` (the same reasoning as [`Stream`]). An event may be
/// recorded on one thread while another synchronises it: the synchronising thread then
/// vouches only for the record the runtime actually waited for.
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
        let raw = sys::create_event(device.table())?;
        Ok(Event {
            inner: Arc::new(EventInner {
                device: Arc::clone(device),
                raw,
                uses: Uses::new(),
                records: RecordLedger::new(),
            }),
        })
    }

    /// Blocks until the work before the event's latest record has finished. When no other
    /// thread recorded the event meanwhile, the recording stream is known to have finished
    /// that work too (so releasing tensors it used needs no further wait).
    ///
    /// # Errors
    /// [`Error::Acl`](crate::Error::Acl) from `aclrtSynchronizeEvent`.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.device.bind()?;
        let t = self.inner.device.table();
        let snapshot = self.inner.records.snapshot();
        // SAFETY: the event is live and belongs to the current context.
        unsafe { sys::synchronize_event(t, self.inner.raw) }?;
        if let Some((stream, ticket)) = self.inner.records.waited_for(snapshot)
            && let Some(stream) = stream.upgrade()
        {
            stream.mark_completed(ticket);
        }
        Ok(())
    }

    /// Records the event on `raw`, the stream of `clock` being dropped, as its work with
    /// `ticket` (no `Stream` handle exists any more; the device's context is current).
    pub(crate) fn record_final(
        &self,
        clock: &Arc<Clock>,
        raw: ascend_sys::aclrtStream,
        ticket: u64,
    ) -> Result<()> {
        let ev = &self.inner;
        let t = ev.device.table();
        ev.records.record(Weak::new(), || {
            // SAFETY: both handles are live (the stream's `Drop` destroys it only after
            // draining) and belong to the current context.
            unsafe { sys::record_event(t, ev.raw, raw) }.map(|()| ticket)
        })?;
        ev.uses.record_on(clock, ticket, Access::Read);
        Ok(())
    }

    fn check_device(&self, stream: &Stream) -> Result<()> {
        self.inner.device.expect_same(&stream.inner.device, "event")
    }
}

impl Stream {
    /// Records `event` on this stream: it completes when the work submitted so far does.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) when the event belongs to another device, [`Error::Acl`](crate::Error::Acl)
    /// from `aclrtRecordEvent`.
    pub fn record(&self, event: &Event) -> Result<()> {
        event.check_device(self)?;
        self.record_ticket(event).map(drop)
    }

    /// [`Stream::record`] for an event of this stream's device; returns the record's ticket.
    pub(crate) fn record_ticket(&self, event: &Event) -> Result<u64> {
        let t = self.inner.table();
        let ev = &event.inner;
        let ticket = ev.records.record(Arc::downgrade(&self.inner), || {
            self.inner.submit(|_, raw, _| {
                // SAFETY: both handles are live and belong to the current context.
                unsafe { sys::record_event(t, ev.raw, raw) }
            })
        })?;
        ev.uses.record(&self.inner, ticket, Access::Read);
        Ok(ticket)
    }

    /// Makes work submitted to this stream from now on wait until `event` completes
    /// (`aclrtStreamWaitEvent`): the way to order work between two streams.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) when the event belongs to another device, [`Error::Acl`](crate::Error::Acl)
    /// from `aclrtStreamWaitEvent`.
    pub fn wait(&self, event: &Event) -> Result<()> {
        event.check_device(self)?;
        self.wait_unchecked(event)
    }

    /// [`Stream::wait`] for an event of this stream's device.
    pub(crate) fn wait_unchecked(&self, event: &Event) -> Result<()> {
        let t = self.inner.table();
        let ticket = self.inner.submit(|_, raw, _| {
            // SAFETY: both handles are live and belong to the current context.
            unsafe { sys::stream_wait_event(t, raw, event.inner.raw) }
        })?;
        event.inner.uses.record(&self.inner, ticket, Access::Read);
        Ok(())
    }
}
