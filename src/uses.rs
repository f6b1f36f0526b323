//! Stream-ordered lifetimes: which queued work still uses a device resource.
//!
//! A resource that queued work uses (a tensor's device buffer, an event, a plan's
//! executor) records the `(stream, ticket)` of its last use on each stream in a small
//! fixed-size array ([`Uses`], no heap). When the resource is released, every stream whose
//! completed counter is behind the recorded ticket is synchronised first. A failed
//! synchronisation is parked on its stream (returned by that stream's next call), and the
//! resource is then leaked rather than freed under work that may still run.
//!
//! The same records order work between streams ([`Uses::order`]): before an operation on
//! stream S reads a resource, S waits (through an event) for writes queued on other
//! streams that are not known to be complete; before it writes, S waits for every other
//! stream's queued use. Work that stays on one stream never creates an event.

use crate::error::Result;
use crate::stream::StreamInner;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// The most streams a resource tracks at once before it synchronises the oldest one.
const USE_SLOTS: usize = 4;

struct Slot {
    stream: Weak<StreamInner>,
    /// `stream`'s address (null for an empty slot), for a cheap identity test. The `Weak`
    /// keeps the allocation alive, so no other stream can have this address meanwhile.
    raw: *const StreamInner,
    /// The last use on `stream`.
    ticket: u64,
    /// The last write on `stream` (0: none).
    written: u64,
    /// The stream that last waited for this slot's work, and up to which ticket.
    fenced: (*const StreamInner, u64),
}

impl Slot {
    const EMPTY: Slot = Slot {
        stream: Weak::new(),
        raw: std::ptr::null(),
        ticket: 0,
        written: 0,
        fenced: (std::ptr::null(), 0),
    };
}

/// How an operation uses a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reads it (an operator input, a download).
    Read,
    /// Writes it (an operator output, an upload).
    Write,
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
            slots: Mutex::new([Slot::EMPTY; USE_SLOTS]),
            leak: AtomicBool::new(false),
        }
    }

    /// Makes `stream` wait for the work on other streams that an `access` must follow:
    /// their unfinished writes before a read, every unfinished use before a write. A
    /// stream that already waited for that work is not made to wait again.
    ///
    /// # Errors
    /// From recording the other stream's fence event or waiting on it.
    #[inline]
    pub(crate) fn order(&self, stream: &Arc<StreamInner>, access: Access) -> Result<()> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let me = Arc::as_ptr(stream);
        for slot in slots.iter_mut() {
            if slot.raw.is_null() || std::ptr::eq(slot.raw, me) {
                continue;
            }
            let needed = match access {
                Access::Read => slot.written,
                Access::Write => slot.ticket,
            };
            if needed == 0 || (std::ptr::eq(slot.fenced.0, me) && slot.fenced.1 >= needed) {
                continue;
            }
            Self::fence(slot, stream, needed)?;
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn fence(slot: &mut Slot, stream: &Arc<StreamInner>, needed: u64) -> Result<()> {
        // A stream that is gone was drained when it was dropped.
        if let Some(other) = slot.stream.upgrade()
            && !other.is_done(needed)
        {
            let through = other.fence_for(stream)?;
            slot.fenced = (Arc::as_ptr(stream), through);
        }
        Ok(())
    }

    /// Notes that the work with `ticket` on `stream` uses the resource (and writes it, for
    /// [`Access::Write`]). Never allocates. The common case (the stream already has a
    /// slot) is inlined into the callers.
    #[inline]
    pub(crate) fn record(&self, stream: &Arc<StreamInner>, ticket: u64, access: Access) {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let me = Arc::as_ptr(stream);
        let slot = match slots.iter_mut().position(|s| std::ptr::eq(s.raw, me)) {
            Some(i) => &mut slots[i],
            None => self.record_new(&mut slots, stream),
        };
        slot.ticket = slot.ticket.max(ticket);
        if access == Access::Write {
            slot.written = slot.written.max(ticket);
        }
    }

    /// A slot for a stream without one yet: a free slot (empty, or whose stream is gone or
    /// past its ticket), or the first one after waiting for its stream.
    #[cold]
    #[inline(never)]
    fn record_new<'s>(
        &self,
        slots: &'s mut [Slot; USE_SLOTS],
        stream: &Arc<StreamInner>,
    ) -> &'s mut Slot {
        let index = slots
            .iter()
            .position(|s| match s.stream.upgrade() {
                None => true,
                Some(st) => st.is_done(s.ticket),
            })
            .unwrap_or_else(|| {
                // All slots busy with other streams: wait for the first one, then reuse it.
                if let Some(st) = slots[0].stream.upgrade()
                    && !st.settle()
                {
                    self.leak.store(true, Ordering::Relaxed);
                }
                0
            });
        let slot = &mut slots[index];
        *slot = Slot {
            stream: Arc::downgrade(stream),
            raw: Arc::as_ptr(stream),
            ..Slot::EMPTY
        };
        slot
    }

    /// Waits, for a host `access` to the resource now, for the queued work it conflicts
    /// with: unfinished writes before a read, every unfinished use before a write.
    ///
    /// # Errors
    /// From synchronising a stream (returned to the caller, not parked).
    pub(crate) fn wait_for(&self, access: Access) -> Result<()> {
        let mut pending: [Option<(Arc<StreamInner>, u64)>; USE_SLOTS] = Default::default();
        {
            let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            for (slot, out) in slots.iter().zip(pending.iter_mut()) {
                let needed = match access {
                    Access::Read => slot.written,
                    Access::Write => slot.ticket,
                };
                if needed == 0 {
                    continue;
                }
                if let Some(st) = slot.stream.upgrade()
                    && !st.is_done(needed)
                {
                    *out = Some((st, needed));
                }
            }
        }
        // Outside the lock: a stream's synchronisation can take long.
        for (stream, _) in pending.iter().flatten() {
            stream.synchronize()?;
        }
        Ok(())
    }

    /// Whether no queued work may still use the resource, as far as the crate knows (the
    /// streams' completed counters), without waiting.
    pub(crate) fn is_idle(&self) -> bool {
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        slots.iter().all(|slot| match slot.stream.upgrade() {
            None => true,
            Some(st) => st.is_done(slot.ticket),
        })
    }

    /// Waits until no queued work uses the resource. `false` when that cannot be ensured
    /// (the resource must then be leaked; the failure is parked on its stream).
    pub(crate) fn wait_idle(&mut self) -> bool {
        if *self.leak.get_mut() {
            return false;
        }
        let slots = self.slots.get_mut().unwrap_or_else(PoisonError::into_inner);
        for slot in slots.iter() {
            if let Some(st) = slot.stream.upgrade()
                && !st.is_done(slot.ticket)
                && !st.settle()
            {
                return false;
            }
        }
        true
    }
}
