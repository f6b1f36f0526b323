//! [`Clock`]: a stream's completion state, shared with every use record that names the
//! stream, so that it outlives the stream's handles and its `Drop`.
//!
//! A stream's handles can all be gone while its queued work still runs: its `Drop` is
//! draining it, perhaps on another thread. Use records ([`Uses`](crate::uses::Uses)) hold
//! the clock, not the stream, and ask it:
//! * how far the stream's work is known to have *finished* (`completed`: memory it used
//!   may be released) and how far its failures are known (`checked`: a synchronisation
//!   that covered the work returned, and any failure in it was noted here);
//! * while the stream is being dropped, through which event other streams can still wait
//!   for its work (the *final fence*, recorded by its `Drop` before the drain);
//! * once it is dropped, whether its drain succeeded (`Released`) or failed (`Lost`: its
//!   work may still run, so everything it used is leaked).
//!
//! Failures are kept as ticket windows: the work a failed synchronisation covered that
//! was not known complete before it. Later work that is ordered after work in such a
//! window gets an error naming it instead of values that were never computed.

use crate::device::DeviceKey;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::stream::StreamInner;
use crate::sync::{AtomicBool, AtomicU64, Condvar, Mutex, MutexGuard, Ordering, PoisonError};
use std::sync::Weak;

/// The most failure windows a clock keeps; older ones are forgotten (their errors were
/// returned to the stream's callers long before).
const FAILURES: usize = 8;

/// Where a stream is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// A handle may still enqueue work.
    Live,
    /// Its `Drop` runs: no new work, the queued work may still run.
    Dropping,
    /// Dropped after a drain that succeeded: all its work has finished.
    Released,
    /// Dropped after a drain that failed: its work may still be running.
    Lost,
}

struct State {
    phase: Phase,
    /// While dropping: the event recorded after the stream's last work, and its ticket.
    final_fence: Option<(Event, u64)>,
    /// `(first, last, error)`: tickets a failed synchronisation covered.
    failures: Vec<(u64, u64, Error)>,
}

/// The completion state of one stream (see the module docs). `Send + Sync`: atomics and a
/// mutex.
pub(crate) struct Clock {
    /// The stream's uid, never reused: identity of use records.
    pub(crate) uid: u64,
    /// The stream's device: a stream of another device cannot wait for its events.
    pub(crate) device: DeviceKey,
    /// Work up to this ticket has finished.
    completed: AtomicU64,
    /// Work up to this ticket has finished and its failures, if any, are noted.
    checked: AtomicU64,
    /// Whether `failures` is non-empty (read without the lock on hot paths).
    has_failed: AtomicBool,
    pub(crate) stream: Weak<StreamInner>,
    state: Mutex<State>,
    changed: Condvar,
}

impl Clock {
    pub(crate) fn new(uid: u64, stream: Weak<StreamInner>, device: DeviceKey) -> Clock {
        Clock {
            uid,
            device,
            completed: AtomicU64::new(0),
            checked: AtomicU64::new(0),
            has_failed: AtomicBool::new(false),
            stream,
            state: Mutex::new(State {
                phase: Phase::Live,
                final_fence: None,
                failures: Vec::new(),
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the work with `ticket` has finished.
    #[inline]
    pub(crate) fn is_done(&self, ticket: u64) -> bool {
        self.completed.load(Ordering::Acquire) >= ticket
    }

    /// Whether the work with `ticket` has finished and its failure would be noted.
    #[inline]
    pub(crate) fn is_checked(&self, ticket: u64) -> bool {
        self.checked.load(Ordering::Acquire) >= ticket
    }

    /// The work up to `ticket` finished (its errors unknown: an event the runtime waited
    /// for).
    pub(crate) fn mark_completed(&self, ticket: u64) {
        self.completed.fetch_max(ticket, Ordering::AcqRel);
    }

    /// A synchronisation covering the work up to `ticket` succeeded.
    pub(crate) fn mark_checked(&self, ticket: u64) {
        self.completed.fetch_max(ticket, Ordering::AcqRel);
        self.checked.fetch_max(ticket, Ordering::AcqRel);
    }

    /// A synchronisation covering the work up to `through` failed with `error`. The work
    /// is not counted as finished (it may still run), but from now on it counts as
    /// failed: ordering after it is an error.
    pub(crate) fn note_failure(&self, through: u64, error: &Error) {
        let first = self.checked.load(Ordering::Acquire) + 1;
        if first > through {
            return;
        }
        let mut state = self.lock();
        if state.failures.len() == FAILURES {
            state.failures.remove(0);
        }
        state.failures.push((first, through, error.clone()));
        self.has_failed.store(true, Ordering::Release);
        // The failure is known for this work now; later checks need not wait for it.
        self.checked.fetch_max(through, Ordering::AcqRel);
    }

    /// An error naming the failed work among the tickets `first..=last`, if any.
    #[inline]
    pub(crate) fn failure_in(&self, first: u64, last: u64) -> Option<Error> {
        if !self.has_failed.load(Ordering::Acquire) {
            return None;
        }
        self.failure_slow(first, last)
    }

    #[cold]
    fn failure_slow(&self, first: u64, last: u64) -> Option<Error> {
        let state = self.lock();
        state
            .failures
            .iter()
            .rev()
            .find(|(lo, hi, _)| *lo <= last && first <= *hi)
            .map(|(_, hi, e)| self.failed(last.min(*hi), e.clone()))
    }

    fn failed(&self, ticket: u64, source: Error) -> Error {
        Error::DependencyFailed {
            stream: self.uid,
            ticket,
            source: Box::new(source),
        }
    }

    /// Called first by the stream's `Drop`: the stream takes no new work; `final_fence`
    /// (an event recorded after its last work, and that ticket) lets other streams wait
    /// for its queued work on the device meanwhile.
    pub(crate) fn begin_drop(&self, final_fence: Option<(Event, u64)>) {
        let mut state = self.lock();
        state.phase = Phase::Dropping;
        state.final_fence = final_fence;
        drop(state);
        self.changed.notify_all();
    }

    /// Called last by the stream's `Drop`, after its drain through `through`: `drained`
    /// says whether the drain succeeded. Returns the final fence, for the caller to drop
    /// outside the lock (its release may wait for the streams that waited on it, which
    /// may be the ones blocked here).
    pub(crate) fn finish_drop(&self, through: u64, drained: Result<()>) -> Option<Event> {
        let mut state = self.lock();
        match drained {
            Ok(()) => {
                self.mark_checked(through);
                state.phase = Phase::Released;
            }
            Err(e) => {
                drop(state);
                self.note_failure(through, &e);
                state = self.lock();
                state.phase = Phase::Lost;
            }
        }
        let fence = state.final_fence.take().map(|(event, _)| event);
        drop(state);
        self.changed.notify_all();
        fence
    }

    /// For a stream whose handles are gone (its `Drop` runs or has run): makes the stream
    /// of `waiter` wait for the work up to `needed`, through the final fence. Returns the
    /// ticket waited for, or `None` when the work has finished. Waits on the host only
    /// while the dropping thread records the fence, or when it has none.
    ///
    /// # Errors
    /// [`Error::DependencyFailed`] when the drop's drain failed; the wait's error.
    pub(crate) fn fence_gone(
        &self,
        needed: u64,
        wait: impl FnOnce(&Event) -> Result<()>,
    ) -> Result<Option<u64>> {
        let mut state = self.lock();
        loop {
            if self.is_done(needed) {
                return Ok(None);
            }
            match state.phase {
                Phase::Dropping => {
                    if let Some((event, through)) = &state.final_fence
                        && *through >= needed
                    {
                        let (event, through) = (event.clone(), *through);
                        drop(state);
                        wait(&event)?;
                        return Ok(Some(through));
                    }
                }
                Phase::Lost => return Err(self.lost(&state, needed)),
                // Drained: `completed` covers everything, so `is_done` held above.
                Phase::Released => return Ok(None),
                Phase::Live => {}
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// For a stream whose handles are gone: waits on the host until its `Drop` has drained
    /// it. `Ok` when the work up to `needed` has finished.
    ///
    /// # Errors
    /// [`Error::DependencyFailed`] when the drain failed (the work may still run).
    pub(crate) fn wait_gone(&self, needed: u64) -> Result<()> {
        let mut state = self.lock();
        loop {
            if self.is_done(needed) {
                return Ok(());
            }
            match state.phase {
                Phase::Lost => return Err(self.lost(&state, needed)),
                Phase::Released => return Ok(()),
                Phase::Live | Phase::Dropping => {}
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn lost(&self, state: &State, needed: u64) -> Error {
        let source = state.failures.last().map_or_else(
            || Error::InvalidArgument("the stream's final drain failed".into()),
            |(_, _, e)| e.clone(),
        );
        self.failed(needed, source)
    }
}

#[cfg(all(test, loom))]
pub(crate) mod loom_tests {
    use super::Clock;
    use crate::error::Error;
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicBool, Ordering};
    use loom::thread;
    use std::ops::Deref;
    use std::sync::Weak;

    fn failure() -> Error {
        Error::InvalidArgument("drain failed".into())
    }

    /// Drops `clock`'s stream on another thread: begins the drop, sets `drained` (if any)
    /// once the stream has drained, and finishes the drop at `ticket` with `drain`.
    pub(crate) fn drop_elsewhere(
        clock: impl Deref<Target = Clock> + Send + 'static,
        ticket: u64,
        drain: Result<(), Error>,
        drained: Option<&Arc<AtomicBool>>,
    ) -> thread::JoinHandle<()> {
        let drained = drained.map(Arc::clone);
        thread::spawn(move || {
            clock.begin_drop(None);
            if let Some(flag) = drained {
                flag.store(true, Ordering::Release);
            }
            let _ = clock.finish_drop(ticket, drain);
        })
    }

    /// Invariant 1: a stream whose `Drop` runs counts as busy until its drain has
    /// finished. A thread that sees the work as done, or returns from waiting for it, runs
    /// after the drain.
    #[test]
    fn dropping_stream_is_busy_until_drained() {
        loom::model(|| {
            let clock = Arc::new(Clock::new(1, Weak::new(), Default::default()));
            let drained = Arc::new(AtomicBool::new(false));
            let dropper = drop_elsewhere(Arc::clone(&clock), 3, Ok(()), Some(&drained));
            if clock.is_done(3) {
                assert!(drained.load(Ordering::Acquire));
            }
            clock.wait_gone(3).unwrap();
            assert!(drained.load(Ordering::Acquire));
            dropper.join().unwrap();
        });
    }

    /// Invariant 2: after a failed drain, the work never counts as finished (its memory
    /// is leaked) and waiting for it is an error naming it.
    #[test]
    fn failed_drain_never_counts_as_done() {
        loom::model(|| {
            let clock = Arc::new(Clock::new(1, Weak::new(), Default::default()));
            let dropper = drop_elsewhere(Arc::clone(&clock), 3, Err(failure()), None);
            assert!(!clock.is_done(3));
            let waited = clock.wait_gone(3);
            dropper.join().unwrap();
            assert!(matches!(
                waited,
                Err(Error::DependencyFailed {
                    stream: 1,
                    ticket: 3,
                    ..
                })
            ));
            assert!(!clock.is_done(1));
            assert!(clock.failure_in(2, 2).is_some());
        });
    }

    /// Invariant 3: a failure noted concurrently with a check is either seen by the
    /// check, or the check ran before the failed work was covered (it then still reports
    /// the work as unchecked, so its caller synchronises again).
    #[test]
    fn failure_is_seen_or_work_is_unchecked() {
        loom::model(|| {
            let clock = Arc::new(Clock::new(1, Weak::new(), Default::default()));
            let syncer = {
                let clock = Arc::clone(&clock);
                thread::spawn(move || clock.note_failure(2, &failure()))
            };
            let checked = clock.is_checked(2);
            let failed = clock.failure_in(1, 2).is_some();
            assert!(!checked || failed);
            syncer.join().unwrap();
            assert!(clock.failure_in(1, 2).is_some());
        });
    }
}
