//! Stream-ordered lifetimes: which queued work still uses a device resource.
//!
//! A resource that queued work uses (a tensor's device buffer, pinned host memory, an
//! event, a plan's executor, a communicator) records the `(stream, ticket)` of its last
//! use, and of its last write, on each stream ([`Uses`]). A record holds the stream's
//! [`Clock`], not the stream: the clock outlives the stream's handles and its `Drop`.
//!
//! # Invariants
//! 1. **Busy until drained.** Work counts as finished only when a synchronisation that
//!    covered it returned (or an event the runtime waited for proves it). A stream whose
//!    handles are gone is still busy until its `Drop` has drained it: its clock advances
//!    only after that drain.
//! 2. **Released only when finished.** A resource is freed only when every recorded use
//!    has finished ([`Uses::wait_idle`]). When that cannot be ensured (a synchronisation
//!    failed, or the stream was dropped after a failed drain), the resource is leaked and
//!    counted ([`Device::leaks`](crate::Device::leaks)); the failure is parked on its
//!    stream (returned by that stream's next call).
//! 3. **Ordered, on the device.** Before work on stream S reads a resource, S waits for the
//!    unfinished writes of other streams; before it writes, for every unfinished use
//!    ([`Uses::order`]). The wait is an event waited for on S: enqueueing never waits on
//!    the host for another stream's work of the same device. A stream of another device
//!    (recorded by a peer copy) is waited for on the host: no stream can wait for another
//!    device's events. A stream being dropped is waited for through
//!    the final fence its `Drop` records before draining.
//! 4. **Failure travels with ordering.** A stream that waited for another stream's work
//!    remembers it; its next synchronisation (or download) returns
//!    [`Error::DependencyFailed`](crate::Error::DependencyFailed) when that work failed,
//!    and so does an enqueue ordered after work already known to have failed. Values
//!    that were never computed are never returned as `Ok`.
//! 5. **Host access waits.** A host access ([`Uses::wait_for`]) returns only after the
//!    conflicting work has finished, or with an error; it never skips work whose stream
//!    is gone or whose synchronisation failed.
//! 6. **Any number of streams.** Records for up to [`INLINE`] streams live inline; more
//!    go to a grow-only overflow list; a record is reused only when its work has finished
//!    and did not fail. A steady state allocates nothing, and recording never waits.
//!
//! `scripts/loom.sh` model-checks invariants 1, 2 and 4 on [`Clock`] and these records.

use crate::clock::Clock;
use crate::error::Result;
use crate::stream::StreamInner;
use crate::sync::{Mutex, MutexGuard, PoisonError};
use std::sync::Arc;

/// Streams recorded without a heap allocation.
pub(crate) const INLINE: usize = 4;

/// The ticket of a use that lasts while a raw access is open: no work reaches it, so
/// every later access is ordered after all the work queued on the stream, and the
/// resource is never idle (a leaked access leaks the resource rather than free it under
/// work it cannot see).
const OPEN: u64 = u64::MAX;

struct Slot {
    /// `None` for an empty slot.
    clock: Option<Arc<Clock>>,
    /// The last use on the stream.
    ticket: u64,
    /// The last write on the stream (0: none).
    written: u64,
    /// The uid of the stream that last waited for this slot's work, and up to which
    /// ticket (uids are never reused).
    fenced: (u64, u64),
    /// Raw accesses open on the stream ([`Uses::open`]): while one is, any work queued on
    /// the stream may use the resource, so its use never finishes.
    open: u32,
    /// How many of them may write.
    open_writes: u32,
}

impl Slot {
    const EMPTY: Slot = Slot {
        clock: None,
        ticket: 0,
        written: 0,
        fenced: (0, 0),
        open: 0,
        open_writes: 0,
    };

    /// The ticket of the last use ([`OPEN`] while a raw access is open).
    fn last(&self) -> u64 {
        if self.open > 0 { OPEN } else { self.ticket }
    }

    /// The ticket of the last write ([`OPEN`] while a raw write access is open).
    fn last_write(&self) -> u64 {
        if self.open_writes > 0 {
            OPEN
        } else {
            self.written
        }
    }

    /// Whether the slot may be given to another stream: its work has finished and did
    /// not fail (a failed write must still be reported to its readers).
    fn is_free(&self) -> bool {
        match &self.clock {
            None => true,
            Some(c) => {
                c.is_done(self.last())
                    && (self.written == 0 || c.failure_in(self.written, self.written).is_none())
            }
        }
    }

    fn needed(&self, access: Access) -> u64 {
        match access {
            Access::Read => self.last_write(),
            Access::Write => self.last(),
        }
    }
}

/// How an operation uses a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reads it (an operator input, a download).
    Read,
    /// Writes it (an operator output, an upload).
    Write,
}

struct Slots {
    inline: [Slot; INLINE],
    more: Vec<Slot>,
}

impl Slots {
    fn iter(&self) -> impl Iterator<Item = &Slot> {
        self.inline.iter().chain(self.more.iter())
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut Slot> {
        self.inline.iter_mut().chain(self.more.iter_mut())
    }

    /// The index of the slot of the stream with `uid`, as [`slot_at`] takes it.
    #[inline(always)]
    fn find(&self, uid: u64) -> Option<usize> {
        let of = |s: &Slot| s.clock.as_ref().is_some_and(|c| c.uid == uid);
        (self.inline.iter().position(of)).or_else(|| Some(INLINE + self.more.iter().position(of)?))
    }
}

/// The queued work that may still use a resource ([`Uses::pending`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pending {
    /// None: every recorded use has finished.
    Idle,
    /// Only work of the stream with this uid.
    On(u64),
    /// Work of several streams.
    Several,
    /// Work of a stream whose handles are gone and whose work failed: it may never be
    /// proved finished.
    Doubtful,
}

/// The last use of a resource on each stream that used it (see the module docs).
pub(crate) struct Uses {
    slots: Mutex<Slots>,
}

impl Uses {
    pub(crate) fn new() -> Uses {
        Uses {
            slots: Mutex::new(Slots {
                inline: [Slot::EMPTY; INLINE],
                more: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes `stream` wait for the work on other streams that an `access` must follow:
    /// their unfinished writes before a read, every unfinished use before a write. A
    /// stream that already waited for that work is not made to wait again.
    ///
    /// # Errors
    /// [`Error::DependencyFailed`](crate::Error::DependencyFailed) when that work is known
    /// to have failed; from recording the other stream's fence event or waiting on it.
    #[inline]
    pub(crate) fn order(&self, stream: &Arc<StreamInner>, access: Access) -> Result<()> {
        let mut guard = self.lock();
        let slots = &mut *guard;
        let me = stream.clock.uid;
        for slot in &mut slots.inline {
            Self::order_slot(slot, stream, me, access)?;
        }
        for slot in &mut slots.more {
            Self::order_slot(slot, stream, me, access)?;
        }
        Ok(())
    }

    /// [`Uses::order`] for one stream's record `slot`.
    #[inline(always)]
    fn order_slot(
        slot: &mut Slot,
        stream: &Arc<StreamInner>,
        me: u64,
        access: Access,
    ) -> Result<()> {
        let Some(clock) = &slot.clock else {
            return Ok(());
        };
        let needed = slot.needed(access);
        if needed == 0 || clock.uid == me {
            return Ok(());
        }
        // A write only needs the order; a read also the values.
        let reads = access == Access::Read;
        if reads && let Some(e) = clock.failure_in(needed, needed) {
            return Err(e);
        }
        if slot.fenced.0 == me && slot.fenced.1 >= needed {
            return Ok(());
        }
        if clock.is_done(needed) {
            if reads && !clock.is_checked(needed) {
                // Finished (an event proved it), failure unknown: check at the next
                // synchronisation.
                stream.depend_on(clock, needed);
            }
            return Ok(());
        }
        let clock = Arc::clone(clock);
        if let Some(through) = Self::fence(&clock, stream, needed, reads)? {
            slot.fenced = (me, through);
        }
        Ok(())
    }

    /// Makes `stream` wait on the device for `clock`'s work up to `needed`; the ticket
    /// waited for (`None`: it has finished).
    #[cold]
    #[inline(never)]
    fn fence(
        clock: &Arc<Clock>,
        stream: &Arc<StreamInner>,
        needed: u64,
        reads: bool,
    ) -> Result<Option<u64>> {
        if clock.device != stream.device.key() {
            return Self::wait_on_host(clock, stream, needed);
        }
        let through = match clock.stream.upgrade() {
            Some(other) => Some(other.fence_for(stream)?),
            None => clock.fence_gone(needed, |event| stream.wait_event(event))?,
        };
        if reads && through.is_some() {
            stream.depend_on(clock, needed);
        }
        Ok(through)
    }

    /// Waits on the host for `clock`'s work up to `needed`, for a stream of another
    /// device: no stream can wait for another device's events (a record of another
    /// device's stream is left by a peer copy). `None`: the work has finished, and a
    /// failure in it is noted on the clock (and returned). `stream`'s device is current
    /// again afterwards, as the caller had it.
    #[cold]
    #[inline(never)]
    fn wait_on_host(
        clock: &Arc<Clock>,
        stream: &Arc<StreamInner>,
        needed: u64,
    ) -> Result<Option<u64>> {
        let waited = match clock.stream.upgrade() {
            Some(other) => other.synchronize(),
            None => clock.wait_gone(needed),
        };
        stream.device.bind()?;
        waited.map(|()| None)
    }

    /// Notes that the work with `ticket` on `stream` uses the resource (and writes it, for
    /// [`Access::Write`]). Never waits; allocates only when more streams than ever before
    /// use the resource at once.
    #[inline]
    pub(crate) fn record(&self, stream: &StreamInner, ticket: u64, access: Access) {
        self.record_on(&stream.clock, ticket, access);
    }

    /// [`record`](Self::record) by the stream's clock.
    pub(crate) fn record_on(&self, clock: &Arc<Clock>, ticket: u64, access: Access) {
        Self::record_locked(&mut self.lock(), clock, ticket, access);
    }

    /// [`record_on`](Self::record_on) under the lock.
    fn record_locked(slots: &mut Slots, clock: &Arc<Clock>, ticket: u64, access: Access) {
        let i = (slots.find(clock.uid)).unwrap_or_else(|| Self::record_new(slots, clock));
        let slot = slot_at(slots, i);
        slot.ticket = slot.ticket.max(ticket);
        if access == Access::Write {
            slot.written = slot.written.max(ticket);
            // This write was ordered after every other stream's use: readers need to
            // follow it alone, and the values it replaces no longer matter (a failure in
            // them included).
            let uid = clock.uid;
            let others = |s: &&mut Slot| s.clock.as_ref().is_some_and(|c| c.uid != uid);
            for other in slots.inline.iter_mut().filter(others) {
                other.written = 0;
            }
            for other in slots.more.iter_mut().filter(others) {
                other.written = 0;
            }
        }
    }

    /// A slot for a stream without one yet (its index): a free one, or a new one at the
    /// end.
    #[cold]
    #[inline(never)]
    fn record_new(slots: &mut Slots, clock: &Arc<Clock>) -> usize {
        let free = slots.iter().position(Slot::is_free);
        let i = free.unwrap_or_else(|| {
            slots.more.push(Slot::EMPTY);
            INLINE + slots.more.len() - 1
        });
        *slot_at(slots, i) = Slot {
            clock: Some(Arc::clone(clock)),
            ..Slot::EMPTY
        };
        i
    }

    /// Notes that a raw `access` on `stream` opens: until [`close`](Self::close), any
    /// work queued on the stream may use the resource. Recorded when the access begins,
    /// so that an access that is never closed (leaked) keeps the resource in use.
    pub(crate) fn open(&self, stream: &StreamInner, access: Access) {
        let mut guard = self.lock();
        let slots = &mut *guard;
        let clock = &stream.clock;
        let i = (slots.find(clock.uid)).unwrap_or_else(|| Self::record_new(slots, clock));
        let slot = slot_at(slots, i);
        slot.open = slot.open.saturating_add(1);
        if access == Access::Write {
            slot.open_writes = slot.open_writes.saturating_add(1);
        }
    }

    /// Closes a raw `access` opened with [`open`](Self::open): its uses end with the
    /// work with `ticket` (queued after all the access's work).
    pub(crate) fn close(&self, stream: &StreamInner, ticket: u64, access: Access) {
        let mut guard = self.lock();
        let slots = &mut *guard;
        if let Some(i) = slots.find(stream.clock.uid) {
            let slot = slot_at(slots, i);
            slot.open = slot.open.saturating_sub(1);
            if access == Access::Write {
                slot.open_writes = slot.open_writes.saturating_sub(1);
            }
        }
        Self::record_locked(slots, &stream.clock, ticket, access);
    }

    /// A copy of these records, for a piece split off a cached block: the piece's range
    /// was used by the same work. Allocates only when more than [`INLINE`] streams are
    /// recorded.
    pub(crate) fn duplicate(&self) -> Uses {
        let copy = Uses::new();
        copy.absorb(self);
        copy
    }

    /// Adds `other`'s records to these, for two cached blocks merged into one: the merged
    /// block waits for the work of both. Each stream keeps its latest use and write;
    /// whether a stream already waited for the work is forgotten when the two differ
    /// (a later access then waits again, which is merely redundant).
    pub(crate) fn absorb(&self, other: &Uses) {
        let theirs = other.lock();
        let mut guard = self.lock();
        let mine = &mut *guard;
        for slot in theirs.iter() {
            let Some(clock) = &slot.clock else { continue };
            let found = mine
                .iter()
                .position(|s| s.clock.as_ref().is_some_and(|c| c.uid == clock.uid));
            let i = found.unwrap_or_else(|| Self::record_new(mine, clock));
            let into = slot_at(mine, i);
            if into.fenced != slot.fenced {
                into.fenced = (0, 0);
            }
            if found.is_none() {
                into.fenced = slot.fenced;
            }
            into.ticket = into.ticket.max(slot.ticket);
            into.written = into.written.max(slot.written);
            into.open = into.open.saturating_add(slot.open);
            into.open_writes = into.open_writes.saturating_add(slot.open_writes);
        }
    }

    /// Notes that the memory goes to a new owner (a new tensor on a cached block), whose
    /// values are unspecified until its first write: the old owner's writes, failed ones
    /// included, no longer matter to readers (their failure was the old owner's and its
    /// stream's). The uses stay: the new owner's first write still waits for them.
    pub(crate) fn new_owner(&self) {
        for slot in self.lock().iter_mut() {
            slot.written = 0;
        }
    }

    /// Notes that the host wrote the whole resource while no queued work used it (an
    /// upload made at once): earlier writes, failed ones included, no longer matter.
    pub(crate) fn overwritten(&self) {
        for slot in self.lock().iter_mut() {
            slot.written = 0;
        }
    }

    /// The first slot whose work a host `access` must wait for, with what it needs.
    fn first_pending(&self, access: Access) -> Result<Option<(Arc<Clock>, u64)>> {
        let slots = self.lock();
        for slot in slots.iter() {
            let Some(clock) = &slot.clock else { continue };
            let needed = slot.needed(access);
            if needed == 0 {
                continue;
            }
            if needed == OPEN {
                // Only a leaked raw access stays open while the host may access the
                // resource: the work queued with it can never be waited for.
                return Err(crate::error::Error::InvalidArgument(
                    "a raw access to the tensor was leaked: the work queued with it cannot \
                     be waited for"
                        .into(),
                ));
            }
            if access == Access::Read
                && let Some(e) = clock.failure_in(needed, needed)
            {
                return Err(e);
            }
            let checked = access == Access::Write || clock.is_checked(needed);
            if !clock.is_done(needed) || !checked {
                return Ok(Some((Arc::clone(clock), needed)));
            }
        }
        Ok(None)
    }

    /// Waits, for a host `access` to the resource now, for the queued work it conflicts
    /// with: unfinished writes before a read (which must also have succeeded), every
    /// unfinished use before a write. Never allocates.
    ///
    /// # Errors
    /// From synchronising a stream (returned to the caller, not parked);
    /// [`Error::DependencyFailed`](crate::Error::DependencyFailed) for a read of failed
    /// work, or when a stream was dropped after a failed drain.
    pub(crate) fn wait_for(&self, access: Access) -> Result<()> {
        // One stream at a time, outside the lock: a synchronisation can take long. Each
        // round finishes (or fails) one stream's work, so this ends.
        while let Some((clock, needed)) = self.first_pending(access)? {
            match clock.stream.upgrade() {
                // A read must also not see values computed from failed work.
                Some(stream) if access == Access::Read => stream.synchronize_checked()?,
                Some(stream) => stream.synchronize()?,
                None => clock.wait_gone(needed)?,
            }
            if !clock.is_done(needed) {
                // A synchronisation whose target was below `needed` cannot happen (the
                // ticket was submitted before it); stay safe regardless.
                return Err(crate::error::Error::InvalidArgument(
                    "queued work could not be waited for".into(),
                ));
            }
        }
        Ok(())
    }

    /// Whether no queued work may still use the resource, as far as the crate knows (the
    /// streams' clocks), without waiting.
    pub(crate) fn is_idle(&self) -> bool {
        self.lock().iter().all(|slot| {
            slot.clock
                .as_ref()
                .is_none_or(|clock| clock.is_done(slot.last()))
        })
    }

    /// Which queued work may still use the resource, as far as the streams' clocks know,
    /// without waiting: what the caching allocator needs to choose and merge blocks.
    pub(crate) fn pending(&self) -> Pending {
        let mut found = Pending::Idle;
        for slot in self.lock().iter() {
            let Some(clock) = &slot.clock else { continue };
            if clock.is_done(slot.last()) {
                continue;
            }
            // A stream whose handles are gone with failed work still unfinished: its drain
            // failed (or may yet), so the work may never be proved finished.
            if clock.stream.strong_count() == 0
                && clock.failure_in(slot.ticket, slot.ticket).is_some()
            {
                return Pending::Doubtful;
            }
            found = match found {
                Pending::Idle => Pending::On(clock.uid),
                Pending::On(uid) if uid == clock.uid => found,
                _ => Pending::Several,
            };
        }
        found
    }

    /// Waits until no queued work uses the resource. `false` when that cannot be ensured:
    /// the resource must then be leaked (a failure of a live stream is parked on it).
    pub(crate) fn wait_idle(&self) -> bool {
        loop {
            let pending = {
                let slots = self.lock();
                slots.iter().find_map(|slot| {
                    let clock = slot.clock.as_ref()?;
                    (!clock.is_done(slot.last())).then(|| (Arc::clone(clock), slot.last()))
                })
            };
            let Some((clock, ticket)) = pending else {
                return true;
            };
            let finished = match clock.stream.upgrade() {
                Some(stream) => stream.settle(),
                None => clock.wait_gone(ticket).is_ok(),
            };
            if !finished || !clock.is_done(ticket) {
                return false;
            }
        }
    }
}

fn slot_at(slots: &mut Slots, i: usize) -> &mut Slot {
    if i < INLINE {
        &mut slots.inline[i]
    } else {
        &mut slots.more[i - INLINE]
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::{Access, Uses};
    use crate::clock::Clock;
    use crate::clock::loom_tests::drop_elsewhere;
    use crate::error::Error;
    use loom::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Weak};

    /// Invariants 1 and 2 through the records: a tensor used by a stream that is dropped
    /// on another thread is idle only after the drop's drain, and its release (waiting
    /// for idleness) happens after the drain or not at all.
    #[test]
    fn release_waits_for_a_stream_dropped_elsewhere() {
        loom::model(|| {
            let clock = Arc::new(Clock::new(1, Weak::new(), Default::default()));
            let uses = Arc::new(Uses::new());
            uses.record_on(&clock, 2, Access::Write);
            let drained = loom::sync::Arc::new(AtomicBool::new(false));
            let dropper = drop_elsewhere(Arc::clone(&clock), 2, Ok(()), Some(&drained));
            if uses.is_idle() {
                assert!(drained.load(Ordering::Acquire));
            }
            assert!(uses.wait_idle());
            assert!(drained.load(Ordering::Acquire));
            dropper.join().unwrap();
        });
    }

    /// Invariants 2 and 4: after a failed drain the resource is never idle, its release
    /// leaks it, and a host read is an error, in every interleaving; with two streams'
    /// records (one finished), only the failed one matters.
    #[test]
    fn failed_drain_leaks_and_fails_readers() {
        loom::model(|| {
            let (a, b) = (
                Arc::new(Clock::new(1, Weak::new(), Default::default())),
                Arc::new(Clock::new(2, Weak::new(), Default::default())),
            );
            let uses = Arc::new(Uses::new());
            uses.record_on(&b, 1, Access::Read);
            b.mark_checked(1);
            uses.record_on(&a, 4, Access::Write);
            let timeout = Err(Error::InvalidArgument("timeout".into()));
            let dropper = drop_elsewhere(Arc::clone(&a), 4, timeout, None);
            assert!(!uses.is_idle());
            let read = uses.wait_for(Access::Read);
            dropper.join().unwrap();
            assert!(matches!(
                read,
                Err(Error::DependencyFailed { stream: 1, .. })
            ));
            assert!(!uses.wait_idle());
        });
    }
}
