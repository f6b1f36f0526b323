//! Which record of an event a synchronisation waited for.
//!
//! `aclrtSynchronizeEvent` waits for the event's *latest* record at the moment the runtime
//! looks at it. Another thread may record the same event on another stream at any time, so
//! the record the crate credits as complete must be proved to be the one the runtime waited
//! for, or nothing may be credited. The ledger runs each C record call under its lock and
//! counts records; a synchronisation snapshots the latest record before the wait and
//! credits it afterwards only when no record happened in between. Waiting itself never
//! holds the lock, so a thread blocked in a synchronisation cannot stall a thread that
//! records (which may be the one that lets the awaited work finish).

use crate::sync::{Mutex, MutexGuard, PoisonError};

/// The latest record of one event: which stream (any handle type `S`), at which ticket.
pub(crate) struct RecordLedger<S> {
    latest: Mutex<Latest<S>>,
}

struct Latest<S> {
    record: Option<(S, u64)>,
    /// Records attempted so far (failed ones included: after a failed C call the crate
    /// cannot tell which record the runtime holds).
    generation: u64,
}

/// The latest record as seen before a wait.
pub(crate) struct Snapshot<S> {
    record: Option<(S, u64)>,
    generation: u64,
}

impl<S: Clone> RecordLedger<S> {
    pub(crate) fn new() -> Self {
        RecordLedger {
            latest: Mutex::new(Latest {
                record: None,
                generation: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Latest<S>> {
        self.latest.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `record` (the C record call, returning the ticket it got on `stream`) under the
    /// ledger's lock, so that the runtime's order of records is the ledger's order.
    pub(crate) fn record<E>(
        &self,
        stream: S,
        record: impl FnOnce() -> Result<u64, E>,
    ) -> Result<u64, E> {
        let mut latest = self.lock();
        let result = record();
        latest.generation += 1;
        latest.record = result.as_ref().ok().map(|ticket| (stream, *ticket));
        result
    }

    /// The latest record, taken just before the runtime is asked to wait for it.
    pub(crate) fn snapshot(&self) -> Snapshot<S> {
        let latest = self.lock();
        Snapshot {
            record: latest.record.clone(),
            generation: latest.generation,
        }
    }

    /// After a successful wait that began after `snapshot`: the record the runtime waited
    /// for, when that is provably the snapshot's (no record happened since).
    pub(crate) fn waited_for(&self, snapshot: Snapshot<S>) -> Option<(S, u64)> {
        let latest = self.lock();
        if latest.generation == snapshot.generation {
            snapshot.record
        } else {
            None
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::RecordLedger;
    use loom::sync::{Arc, Mutex};
    use loom::thread;

    /// The runtime's own view of the event: the latest record it executed.
    struct Runtime {
        latest: Mutex<Option<(usize, u64)>>,
    }

    /// One thread records the event on stream 0 then on stream 1, while another
    /// synchronises it: whatever the interleaving, a credited record is exactly the one
    /// the (modelled) runtime waited for.
    #[test]
    fn credited_record_is_the_awaited_one() {
        loom::model(|| {
            let ledger = Arc::new(RecordLedger::<usize>::new());
            let runtime = Arc::new(Runtime {
                latest: Mutex::new(None),
            });
            let recorder = {
                let (ledger, runtime) = (Arc::clone(&ledger), Arc::clone(&runtime));
                thread::spawn(move || {
                    for (stream, ticket) in [(0usize, 7u64), (1, 3)] {
                        ledger
                            .record(stream, || {
                                *runtime.latest.lock().unwrap() = Some((stream, ticket));
                                Ok::<u64, ()>(ticket)
                            })
                            .unwrap();
                    }
                })
            };
            let snapshot = ledger.snapshot();
            let awaited = *runtime.latest.lock().unwrap();
            if let Some(credited) = ledger.waited_for(snapshot) {
                assert_eq!(Some(credited), awaited);
            }
            recorder.join().unwrap();
        });
    }

    /// A failed record leaves nothing to credit, even for a snapshot taken before it.
    #[test]
    fn failed_record_credits_nothing() {
        loom::model(|| {
            let ledger = Arc::new(RecordLedger::<usize>::new());
            ledger.record(0, || Ok::<u64, ()>(1)).unwrap();
            let failing = {
                let ledger = Arc::clone(&ledger);
                thread::spawn(move || {
                    let _ = ledger.record(1, || Err::<u64, ()>(()));
                })
            };
            let snapshot = ledger.snapshot();
            let credited = ledger.waited_for(snapshot);
            failing.join().unwrap();
            assert!(credited.is_none() || credited == Some((0, 1)));
            assert!(ledger.waited_for(ledger.snapshot()).is_none());
        });
    }
}
