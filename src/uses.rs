//! Stream-ordered lifetimes: which queued work still uses a device resource.
//!
//! A resource that queued work uses (a tensor's device buffer, an event, a plan's
//! executor) records the `(stream, ticket)` of its last use on each stream in a small
//! fixed-size array ([`Uses`], no heap). When the resource is released, every stream whose
//! completed counter is behind the recorded ticket is synchronised first. A failed
//! synchronisation is parked on its stream (returned by that stream's next call), and the
//! resource is then leaked rather than freed under work that may still run.

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
            && !st.settle()
        {
            self.leak.store(true, Ordering::Relaxed);
        }
        *first = new();
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
